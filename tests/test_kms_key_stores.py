"""KMS custom key stores and key usage tracking through boto3: stores keep their settings and
connection state, keys in them work while the store is connected, and GetKeyLastUsage
reports the last cryptographic operation."""

from __future__ import annotations

from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

CLUSTER = "cluster-234567abcdefg"
CREDENTIAL = {"AccessKeyId": "ABCDEFGHIJKLMNOPQRST", "RawSecretAccessKey": "a" * 43}


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def kms(client):
    return client("kms")


def cloud_hsm_store(kms, name="hsm", cluster=CLUSTER):
    return kms.create_custom_key_store(CustomKeyStoreName=name, CloudHsmClusterId=cluster,
                                       TrustAnchorCertificate="-----BEGIN CERTIFICATE-----",
                                       KeyStorePassword="kmsuser-password")["CustomKeyStoreId"]


def external_store(kms, name="xks", endpoint="https://proxy.example.com", path="/kms/xks/v1"):
    return kms.create_custom_key_store(CustomKeyStoreName=name, CustomKeyStoreType="EXTERNAL_KEY_STORE",
                                       XksProxyUriEndpoint=endpoint, XksProxyUriPath=path,
                                       XksProxyAuthenticationCredential=CREDENTIAL,
                                       XksProxyConnectivity="PUBLIC_ENDPOINT")["CustomKeyStoreId"]


def describe(kms, store_id):
    return kms.describe_custom_key_stores(CustomKeyStoreId=store_id)["CustomKeyStores"][0]


def test_cloud_hsm_store_is_stored_disconnected_and_connects(kms):
    store_id = cloud_hsm_store(kms)
    assert store_id.startswith("cks-") and len(store_id) == 21
    entry = describe(kms, store_id)
    assert entry["CustomKeyStoreName"] == "hsm" and entry["CustomKeyStoreType"] == "AWS_CLOUDHSM"
    assert entry["CloudHsmClusterId"] == CLUSTER and entry["TrustAnchorCertificate"].startswith("-----BEGIN")
    assert entry["ConnectionState"] == "DISCONNECTED" and "KeyStorePassword" not in entry
    assert kms.describe_custom_key_stores(CustomKeyStoreName="hsm")["CustomKeyStores"][0]["CustomKeyStoreId"] == store_id
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    assert describe(kms, store_id)["ConnectionState"] == "CONNECTED"
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    kms.disconnect_custom_key_store(CustomKeyStoreId=store_id)
    assert describe(kms, store_id)["ConnectionState"] == "DISCONNECTED"
    with pytest.raises(ClientError) as e:
        kms.disconnect_custom_key_store(CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreInvalidStateException"


def test_external_key_store_keeps_its_proxy_configuration(kms):
    store_id = external_store(kms)
    entry = describe(kms, store_id)
    assert entry["CustomKeyStoreType"] == "EXTERNAL_KEY_STORE"
    assert entry["XksProxyConfiguration"] == {
        "Connectivity": "PUBLIC_ENDPOINT",
        "AccessKeyId": CREDENTIAL["AccessKeyId"],
        "UriEndpoint": "https://proxy.example.com",
        "UriPath": "/kms/xks/v1",
    }
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    kms.update_custom_key_store(CustomKeyStoreId=store_id, XksProxyUriPath="/prefix/kms/xks/v2",
                                NewCustomKeyStoreName="renamed")
    entry = describe(kms, store_id)
    assert entry["XksProxyConfiguration"]["UriPath"] == "/prefix/kms/xks/v2" and entry["CustomKeyStoreName"] == "renamed"
    with pytest.raises(ClientError) as e:
        kms.update_custom_key_store(CustomKeyStoreId=store_id, XksProxyUriEndpoint="https://other.example.com")
    assert error(e)[0] == "CustomKeyStoreInvalidStateException"
    kms.disconnect_custom_key_store(CustomKeyStoreId=store_id)
    kms.update_custom_key_store(CustomKeyStoreId=store_id, XksProxyUriEndpoint="https://other.example.com")
    assert describe(kms, store_id)["XksProxyConfiguration"]["UriEndpoint"] == "https://other.example.com"


def test_store_creation_errors(kms):
    cloud_hsm_store(kms)
    external_store(kms)
    with pytest.raises(ClientError) as e:
        cloud_hsm_store(kms, cluster="cluster-bbbbbbbbbbbbb")
    assert error(e) == ("CustomKeyStoreNameInUseException", "Custom key store name hsm is already in use.")
    with pytest.raises(ClientError) as e:
        cloud_hsm_store(kms, name="hsm2")
    assert error(e)[0] == "CloudHsmClusterInUseException"
    with pytest.raises(ClientError) as e:
        external_store(kms, name="xks2")
    assert error(e)[0] == "XksProxyUriInUseException"
    external_store(kms, name="xks3", path="/other/kms/xks/v1")
    with pytest.raises(ClientError) as e:
        kms.create_custom_key_store(CustomKeyStoreName="partial", CloudHsmClusterId="cluster-cccccccccccc")
    assert error(e) == ("ValidationException", "TrustAnchorCertificate is required for a custom key store of type AWS_CLOUDHSM.")
    with pytest.raises(ClientError) as e:
        kms.create_custom_key_store(CustomKeyStoreName="vpc", CustomKeyStoreType="EXTERNAL_KEY_STORE",
                                    XksProxyUriEndpoint="https://vpc.example.com", XksProxyUriPath="/kms/xks/v1",
                                    XksProxyAuthenticationCredential=CREDENTIAL, XksProxyConnectivity="VPC_ENDPOINT_SERVICE")
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kms.create_custom_key_store(CustomKeyStoreName="mixed", CustomKeyStoreType="EXTERNAL_KEY_STORE",
                                    CloudHsmClusterId="cluster-dddddddddddd")
    assert error(e)[0] == "ValidationException"
    assert [s["CustomKeyStoreName"] for s in kms.describe_custom_key_stores()["CustomKeyStores"]] == ["hsm", "xks", "xks3"]


def test_unknown_stores_are_not_found(kms):
    for call in (
        lambda: kms.describe_custom_key_stores(CustomKeyStoreId="cks-00000000000000000"),
        lambda: kms.describe_custom_key_stores(CustomKeyStoreName="nope"),
        lambda: kms.connect_custom_key_store(CustomKeyStoreId="cks-00000000000000000"),
        lambda: kms.delete_custom_key_store(CustomKeyStoreId="cks-00000000000000000"),
        lambda: kms.create_key(Origin="AWS_CLOUDHSM", CustomKeyStoreId="cks-00000000000000000"),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)[0] == "CustomKeyStoreNotFoundException"
    assert kms.describe_custom_key_stores()["CustomKeyStores"] == []


def test_keys_in_a_store_need_it_connected(kms):
    store_id = cloud_hsm_store(kms)
    with pytest.raises(ClientError) as e:
        kms.create_key(Origin="AWS_CLOUDHSM", CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreInvalidStateException"
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    key = kms.create_key(Origin="AWS_CLOUDHSM", CustomKeyStoreId=store_id)["KeyMetadata"]
    assert key["Origin"] == "AWS_CLOUDHSM" and key["CustomKeyStoreId"] == store_id
    assert key["CloudHsmClusterId"] == CLUSTER and key["KeyState"] == "Enabled"
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"in the hsm")["CiphertextBlob"]

    kms.disconnect_custom_key_store(CustomKeyStoreId=store_id)
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "Unavailable"
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=blob)
    assert error(e) == ("KMSInvalidStateException", f"{key['Arn']} is unavailable.")
    with pytest.raises(ClientError) as e:
        kms.generate_random(NumberOfBytes=8, CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreInvalidStateException"
    with pytest.raises(ClientError) as e:
        kms.delete_custom_key_store(CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreHasCMKsException"

    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"in the hsm"
    assert len(kms.generate_random(NumberOfBytes=8, CustomKeyStoreId=store_id)["Plaintext"]) == 8
    with pytest.raises(ClientError) as e:
        kms.enable_key_rotation(KeyId=key["KeyId"])
    assert error(e)[0] == "UnsupportedOperationException"
    with pytest.raises(ClientError) as e:
        kms.delete_custom_key_store(CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreInvalidStateException"


def test_store_with_deleted_keys_can_be_deleted(kms, server):
    store_id = cloud_hsm_store(kms)
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    key = kms.create_key(Origin="AWS_CLOUDHSM", CustomKeyStoreId=store_id)["KeyMetadata"]["KeyId"]
    kms.schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    kms.disconnect_custom_key_store(CustomKeyStoreId=store_id)
    with pytest.raises(ClientError) as e:
        kms.delete_custom_key_store(CustomKeyStoreId=store_id)
    assert error(e)[0] == "CustomKeyStoreHasCMKsException"
    server.advance_clock(8 * 86400)
    kms.delete_custom_key_store(CustomKeyStoreId=store_id)
    assert kms.describe_custom_key_stores()["CustomKeyStores"] == []


def test_keys_in_an_external_store_name_their_external_key(kms):
    store_id = external_store(kms)
    kms.connect_custom_key_store(CustomKeyStoreId=store_id)
    key = kms.create_key(Origin="EXTERNAL_KEY_STORE", CustomKeyStoreId=store_id, XksKeyId="external-key-1")["KeyMetadata"]
    assert key["XksKeyConfiguration"] == {"Id": "external-key-1"} and "CloudHsmClusterId" not in key
    assert kms.decrypt(CiphertextBlob=kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")["CiphertextBlob"])["Plaintext"] == b"x"
    for options, code in (
        ({"Origin": "EXTERNAL_KEY_STORE", "CustomKeyStoreId": store_id, "XksKeyId": "external-key-1"}, "XksKeyAlreadyInUseException"),
        ({"Origin": "EXTERNAL_KEY_STORE", "CustomKeyStoreId": store_id}, "ValidationException"),
        ({"Origin": "AWS_CLOUDHSM", "CustomKeyStoreId": store_id}, "UnsupportedOperationException"),
        ({"Origin": "EXTERNAL_KEY_STORE"}, "ValidationException"),
        ({"CustomKeyStoreId": store_id}, "ValidationException"),
        ({"Origin": "EXTERNAL_KEY_STORE", "CustomKeyStoreId": store_id, "XksKeyId": "k2", "MultiRegion": True},
         "UnsupportedOperationException"),
        ({"Origin": "EXTERNAL_KEY_STORE", "CustomKeyStoreId": store_id, "XksKeyId": "k3",
          "KeySpec": "RSA_2048", "KeyUsage": "SIGN_VERIFY"}, "UnsupportedOperationException"),
    ):
        with pytest.raises(ClientError) as e:
            kms.create_key(**options)
        assert error(e)[0] == code, options
    with pytest.raises(ClientError) as e:
        kms.generate_random(NumberOfBytes=8, CustomKeyStoreId=store_id)
    assert error(e)[0] == "UnsupportedOperationException"


def test_get_key_last_usage_reports_the_last_cryptographic_operation(kms):
    key = kms.create_key()["KeyMetadata"]
    other = kms.create_key()["KeyMetadata"]
    fresh = kms.get_key_last_usage(KeyId=key["KeyId"])
    assert fresh["KeyId"] == key["KeyId"] and fresh["KeyLastUsage"] == {}
    assert fresh["TrackingStartDate"] == fresh["KeyCreationDate"] == key["CreationDate"]

    blob = kms.encrypt(KeyId=key["Arn"], Plaintext=b"x")["CiphertextBlob"]
    response = kms.decrypt(CiphertextBlob=blob)
    usage = kms.get_key_last_usage(KeyId=key["Arn"])["KeyLastUsage"]
    assert usage["Operation"] == "Decrypt"
    assert usage["KmsRequestId"] == response["ResponseMetadata"]["RequestId"]
    assert abs(usage["Timestamp"] - datetime.now(timezone.utc)) < timedelta(minutes=1)

    kms.re_encrypt(CiphertextBlob=blob, DestinationKeyId=other["KeyId"])
    assert kms.get_key_last_usage(KeyId=key["KeyId"])["KeyLastUsage"]["Operation"] == "ReEncrypt"
    assert kms.get_key_last_usage(KeyId=other["KeyId"])["KeyLastUsage"]["Operation"] == "ReEncrypt"

    kms.describe_key(KeyId=key["KeyId"])
    kms.disable_key(KeyId=key["KeyId"])
    with pytest.raises(ClientError):
        kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")
    assert kms.get_key_last_usage(KeyId=key["KeyId"])["KeyLastUsage"]["Operation"] == "ReEncrypt"

    signer = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    kms.sign(KeyId=signer, Message=b"m", SigningAlgorithm="ECDSA_SHA_256")
    assert kms.get_key_last_usage(KeyId=signer)["KeyLastUsage"]["Operation"] == "Sign"
    kms.create_alias(AliasName="alias/signer", TargetKeyId=signer)
    with pytest.raises(ClientError) as e:
        kms.get_key_last_usage(KeyId="alias/signer")
    assert error(e) == ("NotFoundException", "Invalid keyId 'alias/signer'")
