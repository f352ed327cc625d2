"""KMS through boto3 and the AWS CLI, with signatures and ciphertexts checked by the
independent `cryptography` package."""

from __future__ import annotations

import base64
import hashlib
import hmac
import json

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def kms(client):
    return client("kms")


def test_create_key_describes_a_symmetric_customer_key(kms):
    meta = kms.create_key(Description="app key", Tags=[{"TagKey": "team", "TagValue": "core"}])["KeyMetadata"]
    assert meta["KeySpec"] == "SYMMETRIC_DEFAULT"
    assert meta["KeyUsage"] == "ENCRYPT_DECRYPT"
    assert meta["KeyState"] == "Enabled" and meta["Enabled"] is True
    assert meta["KeyManager"] == "CUSTOMER" and meta["Origin"] == "AWS_KMS"
    assert meta["EncryptionAlgorithms"] == ["SYMMETRIC_DEFAULT"]
    assert meta["Arn"] == f"arn:aws:kms:us-east-1:000000000000:key/{meta['KeyId']}"
    described = kms.describe_key(KeyId=meta["Arn"])["KeyMetadata"]
    assert described["KeyId"] == meta["KeyId"] and described["Description"] == "app key"
    assert kms.list_resource_tags(KeyId=meta["KeyId"])["Tags"] == [{"TagKey": "team", "TagValue": "core"}]
    keys = kms.list_keys()["Keys"]
    assert {"KeyId": meta["KeyId"], "KeyArn": meta["Arn"]} in keys


def test_unknown_and_malformed_key_ids_are_not_found(kms):
    missing = "11111111-2222-4333-8444-555555555555"
    with pytest.raises(ClientError) as e:
        kms.describe_key(KeyId=missing)
    assert error(e) == ("NotFoundException", f"Key 'arn:aws:kms:us-east-1:000000000000:key/{missing}' does not exist")
    with pytest.raises(ClientError) as e:
        kms.describe_key(KeyId="alias/none")
    assert error(e) == ("NotFoundException", "Alias arn:aws:kms:us-east-1:000000000000:alias/none is not found.")
    with pytest.raises(ClientError) as e:
        kms.describe_key(KeyId="not-a-key")
    assert error(e)[0] == "NotFoundException"


def test_encrypt_decrypt_round_trips_without_key_id_and_enforces_context(kms):
    key = kms.create_key()["KeyMetadata"]
    ctx = {"purpose": "test", "tenant": "a"}
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"secret", EncryptionContext=ctx)["CiphertextBlob"]
    out = kms.decrypt(CiphertextBlob=blob, EncryptionContext={"tenant": "a", "purpose": "test"})
    assert out["Plaintext"] == b"secret"
    assert out["KeyId"] == key["Arn"] and out["EncryptionAlgorithm"] == "SYMMETRIC_DEFAULT"
    for wrong in [{}, {"purpose": "test"}, {"purpose": "test", "tenant": "b"}]:
        with pytest.raises(ClientError) as e:
            kms.decrypt(CiphertextBlob=blob, EncryptionContext=wrong)
        assert error(e)[0] == "InvalidCiphertextException"
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=b"garbage-that-is-not-a-blob")
    assert error(e)[0] == "InvalidCiphertextException"


def test_decrypt_with_another_key_id_is_incorrect_key(kms):
    a = kms.create_key()["KeyMetadata"]["KeyId"]
    b = kms.create_key()["KeyMetadata"]["KeyId"]
    blob = kms.encrypt(KeyId=a, Plaintext=b"x")["CiphertextBlob"]
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=blob, KeyId=b)
    assert error(e)[0] == "IncorrectKeyException"
    assert kms.decrypt(CiphertextBlob=blob, KeyId=a)["Plaintext"] == b"x"


def test_aliases_resolve_update_list_and_delete(kms):
    a = kms.create_key()["KeyMetadata"]
    b = kms.create_key()["KeyMetadata"]
    kms.create_alias(AliasName="alias/app", TargetKeyId=a["KeyId"])
    with pytest.raises(ClientError) as e:
        kms.create_alias(AliasName="alias/app", TargetKeyId=b["KeyId"])
    assert error(e) == (
        "AlreadyExistsException",
        "An alias with the name arn:aws:kms:us-east-1:000000000000:alias/app already exists",
    )
    blob = kms.encrypt(KeyId="alias/app", Plaintext=b"v")["CiphertextBlob"]
    assert kms.decrypt(CiphertextBlob=blob)["KeyId"] == a["Arn"]
    kms.update_alias(AliasName="alias/app", TargetKeyId=b["KeyId"])
    alias_arn = "arn:aws:kms:us-east-1:000000000000:alias/app"
    assert kms.describe_key(KeyId=alias_arn)["KeyMetadata"]["KeyId"] == b["KeyId"]
    listed = kms.list_aliases(KeyId=b["KeyId"])["Aliases"]
    assert [(x["AliasName"], x["AliasArn"], x["TargetKeyId"]) for x in listed] == [("alias/app", alias_arn, b["KeyId"])]
    with pytest.raises(ClientError) as e:
        kms.create_alias(AliasName="app2", TargetKeyId=a["KeyId"])
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kms.create_alias(AliasName="alias/aws/mine", TargetKeyId=a["KeyId"])
    assert error(e)[0] == "NotAuthorizedException"
    kms.delete_alias(AliasName="alias/app")
    with pytest.raises(ClientError) as e:
        kms.delete_alias(AliasName="alias/app")
    assert error(e)[0] == "NotFoundException"


def test_aws_managed_alias_creates_its_key_on_first_use(kms):
    meta = kms.describe_key(KeyId="alias/aws/secretsmanager")["KeyMetadata"]
    assert meta["KeyManager"] == "AWS"
    assert kms.describe_key(KeyId="alias/aws/secretsmanager")["KeyMetadata"]["KeyId"] == meta["KeyId"]
    names = [a["AliasName"] for a in kms.list_aliases()["Aliases"]]
    assert "alias/aws/secretsmanager" in names


def test_disabled_key_refuses_crypto_and_enabling_restores_it(kms):
    key = kms.create_key()["KeyMetadata"]
    kms.disable_key(KeyId=key["KeyId"])
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "Disabled"
    with pytest.raises(ClientError) as e:
        kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")
    assert error(e) == ("DisabledException", f"{key['Arn']} is disabled.")
    kms.enable_key(KeyId=key["KeyId"])
    assert kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")["KeyId"] == key["Arn"]


def test_scheduled_deletion_blocks_use_until_cancelled_then_key_is_disabled(kms):
    key = kms.create_key()["KeyMetadata"]
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")["CiphertextBlob"]
    out = kms.schedule_key_deletion(KeyId=key["KeyId"], PendingWindowInDays=7)
    assert out["KeyState"] == "PendingDeletion" and out["PendingWindowInDays"] == 7
    assert out["KeyId"] == key["Arn"]
    meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert meta["KeyState"] == "PendingDeletion" and "DeletionDate" in meta
    for call in (
        lambda: kms.decrypt(CiphertextBlob=blob),
        lambda: kms.enable_key(KeyId=key["KeyId"]),
        lambda: kms.schedule_key_deletion(KeyId=key["KeyId"]),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("KMSInvalidStateException", f"{key['Arn']} is pending deletion.")
    kms.cancel_key_deletion(KeyId=key["KeyId"])
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "Disabled"
    with pytest.raises(ClientError) as e:
        kms.cancel_key_deletion(KeyId=key["KeyId"])
    assert error(e)[0] == "KMSInvalidStateException"
    with pytest.raises(ClientError) as e:
        kms.schedule_key_deletion(KeyId=key["KeyId"], PendingWindowInDays=3)
    assert error(e)[0] == "ValidationException"


def test_generate_data_key_plaintext_decrypts_from_its_blob(kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    out = kms.generate_data_key(KeyId=key, KeySpec="AES_256", EncryptionContext={"k": "v"})
    assert len(out["Plaintext"]) == 32
    assert kms.decrypt(CiphertextBlob=out["CiphertextBlob"], EncryptionContext={"k": "v"})["Plaintext"] == out["Plaintext"]
    assert len(kms.generate_data_key(KeyId=key, NumberOfBytes=16)["Plaintext"]) == 16
    without = kms.generate_data_key_without_plaintext(KeyId=key, KeySpec="AES_128")
    assert "Plaintext" not in without
    assert len(kms.decrypt(CiphertextBlob=without["CiphertextBlob"])["Plaintext"]) == 16
    with pytest.raises(ClientError) as e:
        kms.generate_data_key(KeyId=key)
    assert error(e)[0] == "ValidationException"


def test_generate_data_key_pair_returns_matching_der_keys(kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    out = kms.generate_data_key_pair(KeyId=key, KeyPairSpec="ECC_NIST_P256")
    private = serialization.load_der_private_key(out["PrivateKeyPlaintext"], password=None)
    public = serialization.load_der_public_key(out["PublicKey"])
    signature = private.sign(b"m", ec.ECDSA(hashes.SHA256()))
    public.verify(signature, b"m", ec.ECDSA(hashes.SHA256()))
    assert kms.decrypt(CiphertextBlob=out["PrivateKeyCiphertextBlob"])["Plaintext"] == out["PrivateKeyPlaintext"]
    without = kms.generate_data_key_pair_without_plaintext(KeyId=key, KeyPairSpec="RSA_2048")
    assert "PrivateKeyPlaintext" not in without
    assert serialization.load_der_public_key(without["PublicKey"]).key_size == 2048


def test_generate_random_returns_the_requested_length(kms):
    assert len(kms.generate_random(NumberOfBytes=64)["Plaintext"]) == 64
    with pytest.raises(ClientError) as e:
        kms.generate_random(NumberOfBytes=2000)
    assert error(e) == (
        "ValidationException",
        "1 validation error detected: Value '2000' at 'numberOfBytes' failed to satisfy constraint: Member must have value less than or equal to 1024",
    )


def test_re_encrypt_moves_ciphertext_to_another_key_and_context(kms):
    a = kms.create_key()["KeyMetadata"]
    b = kms.create_key()["KeyMetadata"]
    blob = kms.encrypt(KeyId=a["KeyId"], Plaintext=b"data", EncryptionContext={"x": "1"})["CiphertextBlob"]
    out = kms.re_encrypt(
        CiphertextBlob=blob,
        SourceEncryptionContext={"x": "1"},
        DestinationKeyId=b["KeyId"],
        DestinationEncryptionContext={"y": "2"},
    )
    assert out["SourceKeyId"] == a["Arn"] and out["KeyId"] == b["Arn"]
    back = kms.decrypt(CiphertextBlob=out["CiphertextBlob"], EncryptionContext={"y": "2"})
    assert back["Plaintext"] == b"data" and back["KeyId"] == b["Arn"]


ECC_CASES = [
    ("ECC_NIST_P256", "ECDSA_SHA_256", hashes.SHA256()),
    ("ECC_NIST_P384", "ECDSA_SHA_384", hashes.SHA384()),
]


@pytest.mark.parametrize("spec,algorithm,hash_", ECC_CASES)
def test_ecdsa_signatures_verify_with_cryptography_for_raw_and_digest(kms, spec, algorithm, hash_):
    key = kms.create_key(KeySpec=spec, KeyUsage="SIGN_VERIFY")["KeyMetadata"]
    assert key["SigningAlgorithms"] == [algorithm]
    public = serialization.load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])
    raw = kms.sign(KeyId=key["KeyId"], Message=b"hello", MessageType="RAW", SigningAlgorithm=algorithm)
    public.verify(raw["Signature"], b"hello", ec.ECDSA(hash_))
    digest = hashlib.new(hash_.name, b"hello").digest()
    signed = kms.sign(KeyId=key["KeyId"], Message=digest, MessageType="DIGEST", SigningAlgorithm=algorithm)
    public.verify(signed["Signature"], b"hello", ec.ECDSA(hash_))
    ok = kms.verify(KeyId=key["KeyId"], Message=b"hello", Signature=raw["Signature"], SigningAlgorithm=algorithm)
    assert ok["SignatureValid"] is True
    with pytest.raises(ClientError) as e:
        kms.verify(KeyId=key["KeyId"], Message=b"hellO", Signature=raw["Signature"], SigningAlgorithm=algorithm)
    assert error(e)[0] == "KMSInvalidSignatureException"
    with pytest.raises(ClientError) as e:
        kms.sign(KeyId=key["KeyId"], Message=b"short", MessageType="DIGEST", SigningAlgorithm=algorithm)
    assert error(e) == ("ValidationException", f"Digest is invalid length for algorithm {algorithm}.")


def test_rsa_signatures_verify_with_cryptography_for_every_algorithm(kms):
    key = kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]
    public = serialization.load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size == 2048
    hashes_by_suffix = {"256": hashes.SHA256(), "384": hashes.SHA384(), "512": hashes.SHA512()}
    assert len(key["SigningAlgorithms"]) == 6
    for algorithm in key["SigningAlgorithms"]:
        hash_ = hashes_by_suffix[algorithm[-3:]]
        if "PSS" in algorithm:
            pad = padding.PSS(mgf=padding.MGF1(hash_), salt_length=hash_.digest_size)
        else:
            pad = padding.PKCS1v15()
        for message_type in ("RAW", "DIGEST"):
            message = b"payload" if message_type == "RAW" else hashlib.new(hash_.name, b"payload").digest()
            sig = kms.sign(KeyId=key["KeyId"], Message=message, MessageType=message_type, SigningAlgorithm=algorithm)
            public.verify(sig["Signature"], b"payload", pad, hash_)
            assert kms.verify(
                KeyId=key["KeyId"], Message=message, MessageType=message_type,
                Signature=sig["Signature"], SigningAlgorithm=algorithm,
            )["SignatureValid"]


def test_rsa_oaep_encryption_interoperates_with_cryptography(kms):
    key = kms.create_key(KeySpec="RSA_3072", KeyUsage="ENCRYPT_DECRYPT")["KeyMetadata"]
    assert key["EncryptionAlgorithms"] == ["RSAES_OAEP_SHA_1", "RSAES_OAEP_SHA_256"]
    public = serialization.load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])
    for algorithm, hash_ in (("RSAES_OAEP_SHA_1", hashes.SHA1()), ("RSAES_OAEP_SHA_256", hashes.SHA256())):
        pad = padding.OAEP(mgf=padding.MGF1(hash_), algorithm=hash_, label=None)
        theirs = public.encrypt(b"from outside", pad)
        out = kms.decrypt(KeyId=key["KeyId"], CiphertextBlob=theirs, EncryptionAlgorithm=algorithm)
        assert out["Plaintext"] == b"from outside"
        ours = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"round", EncryptionAlgorithm=algorithm)["CiphertextBlob"]
        assert kms.decrypt(KeyId=key["KeyId"], CiphertextBlob=ours, EncryptionAlgorithm=algorithm)["Plaintext"] == b"round"
    with pytest.raises(ClientError) as e:
        kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")
    assert error(e) == ("InvalidKeyUsageException", "Algorithm SYMMETRIC_DEFAULT is incompatible with key spec RSA_3072.")


def test_rsa_4096_key_has_a_4096_bit_public_key(kms):
    key = kms.create_key(KeySpec="RSA_4096", KeyUsage="SIGN_VERIFY")["KeyMetadata"]
    public = serialization.load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])
    assert public.key_size == 4096


def test_key_usage_and_algorithm_mismatches_are_invalid_key_usage(kms):
    sym = kms.create_key()["KeyMetadata"]
    with pytest.raises(ClientError) as e:
        kms.sign(KeyId=sym["KeyId"], Message=b"m", SigningAlgorithm="ECDSA_SHA_256")
    assert error(e) == ("InvalidKeyUsageException", f"{sym['Arn']} key usage is ENCRYPT_DECRYPT which is not valid for Sign.")
    ecc = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]
    with pytest.raises(ClientError) as e:
        kms.sign(KeyId=ecc["KeyId"], Message=b"m", SigningAlgorithm="ECDSA_SHA_384")
    assert error(e) == ("InvalidKeyUsageException", "Algorithm ECDSA_SHA_384 is incompatible with key spec ECC_NIST_P256.")
    with pytest.raises(ClientError) as e:
        kms.encrypt(KeyId=ecc["KeyId"], Plaintext=b"m")
    assert error(e)[0] == "InvalidKeyUsageException"
    with pytest.raises(ClientError) as e:
        kms.get_public_key(KeyId=sym["KeyId"])
    assert error(e)[0] == "UnsupportedOperationException"
    with pytest.raises(ClientError) as e:
        kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="ENCRYPT_DECRYPT")
    assert error(e)[0] == "ValidationException"


@pytest.mark.parametrize("spec,algorithm,digest", [
    ("HMAC_224", "HMAC_SHA_224", "sha224"),
    ("HMAC_256", "HMAC_SHA_256", "sha256"),
    ("HMAC_384", "HMAC_SHA_384", "sha384"),
    ("HMAC_512", "HMAC_SHA_512", "sha512"),
])
def test_hmac_keys_generate_and_verify_macs(kms, spec, algorithm, digest):
    key = kms.create_key(KeySpec=spec, KeyUsage="GENERATE_VERIFY_MAC")["KeyMetadata"]
    assert key["MacAlgorithms"] == [algorithm]
    mac = kms.generate_mac(KeyId=key["KeyId"], Message=b"msg", MacAlgorithm=algorithm)["Mac"]
    assert len(mac) == hashlib.new(digest).digest_size
    assert kms.verify_mac(KeyId=key["KeyId"], Message=b"msg", Mac=mac, MacAlgorithm=algorithm)["MacValid"]
    with pytest.raises(ClientError) as e:
        kms.verify_mac(KeyId=key["KeyId"], Message=b"other", Mac=mac, MacAlgorithm=algorithm)
    assert error(e)[0] == "KMSInvalidMacException"
    assert mac != hmac.new(b"", b"msg", digest).digest()


def test_policies_grants_and_rotation_are_stored(kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    policy = json.loads(kms.get_key_policy(KeyId=key, PolicyName="default")["Policy"])
    assert policy["Statement"][0]["Principal"]["AWS"] == "arn:aws:iam::000000000000:root"
    new_policy = json.dumps({"Version": "2012-10-17", "Statement": []})
    kms.put_key_policy(KeyId=key, PolicyName="default", Policy=new_policy)
    assert kms.get_key_policy(KeyId=key)["Policy"] == new_policy
    with pytest.raises(ClientError) as e:
        kms.put_key_policy(KeyId=key, PolicyName="default", Policy="{not json")
    assert error(e)[0] == "MalformedPolicyDocumentException"
    assert kms.list_key_policies(KeyId=key)["PolicyNames"] == ["default"]

    grant = kms.create_grant(KeyId=key, GranteePrincipal="arn:aws:iam::000000000000:role/app",
                             Operations=["Encrypt", "Decrypt"], Name="app")
    grants = kms.list_grants(KeyId=key)["Grants"]
    assert [(g["GrantId"], g["Operations"], g["Name"]) for g in grants] == [(grant["GrantId"], ["Encrypt", "Decrypt"], "app")]
    kms.retire_grant(GrantToken=grant["GrantToken"])
    assert kms.list_grants(KeyId=key)["Grants"] == []
    with pytest.raises(ClientError) as e:
        kms.revoke_grant(KeyId=key, GrantId=grant["GrantId"])
    assert error(e)[0] == "NotFoundException"

    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is False
    kms.enable_key_rotation(KeyId=key, RotationPeriodInDays=180)
    status = kms.get_key_rotation_status(KeyId=key)
    assert status["KeyRotationEnabled"] is True and status["RotationPeriodInDays"] == 180
    kms.disable_key_rotation(KeyId=key)
    assert kms.get_key_rotation_status(KeyId=key)["KeyRotationEnabled"] is False


def test_list_keys_paginates_with_markers(kms):
    ids = [kms.create_key()["KeyMetadata"]["KeyId"] for _ in range(3)]
    first = kms.list_keys(Limit=2)
    assert first["Truncated"] is True and len(first["Keys"]) == 2
    second = kms.list_keys(Limit=2, Marker=first["NextMarker"])
    assert second["Truncated"] is False
    assert [k["KeyId"] for k in first["Keys"] + second["Keys"]] == ids
    with pytest.raises(ClientError) as e:
        kms.list_keys(Marker="bogus")
    assert error(e)[0] == "InvalidMarkerException"


def test_keys_are_isolated_per_region(client):
    east = client("kms", region_name="us-east-1")
    west = client("kms", region_name="us-west-2")
    key = east.create_key()["KeyMetadata"]["KeyId"]
    with pytest.raises(ClientError) as e:
        west.describe_key(KeyId=key)
    assert error(e)[0] == "NotFoundException"
    assert west.list_keys()["Keys"] == []


def test_cli_encrypts_and_decrypts(aws, tmp_path):
    key = json.loads(aws("kms", "create-key").stdout)["KeyMetadata"]["KeyId"]
    out = json.loads(aws("kms", "encrypt", "--key-id", key, "--plaintext", "cli").stdout)
    blob = tmp_path / "blob"
    blob.write_bytes(base64.b64decode(out["CiphertextBlob"]))
    back = json.loads(aws("kms", "decrypt", "--ciphertext-blob", f"fileb://{blob}").stdout)
    assert base64.b64decode(back["Plaintext"]) == b"cli"
    failed = aws("kms", "describe-key", "--key-id", "alias/missing", check=False)
    assert failed.returncode != 0 and "NotFoundException" in failed.stderr


def test_tampered_ciphertext_is_invalid(kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    blob = bytearray(kms.encrypt(KeyId=key, Plaintext=b"intact")["CiphertextBlob"])
    blob[-1] ^= 1
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=bytes(blob))
    assert error(e)[0] == "InvalidCiphertextException"


def test_key_material_and_protected_values_survive_a_restart(tmp_path):
    import boto3
    from botocore.config import Config
    from roto_server import RotoServer

    def make(server, service):
        return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1}))

    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        kms = make(s, "kms")
        key = kms.create_key(KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
        signature = kms.sign(KeyId=key, Message=b"m", SigningAlgorithm="ECDSA_SHA_256")["Signature"]
        make(s, "secretsmanager").create_secret(Name="kept", SecretString="still here")
        make(s, "ssm").put_parameter(Name="/kept", Value="secure", Type="SecureString")
    with RotoServer("--data-dir", data) as s:
        assert make(s, "kms").verify(KeyId=key, Message=b"m", Signature=signature,
                                     SigningAlgorithm="ECDSA_SHA_256")["SignatureValid"]
        assert make(s, "secretsmanager").get_secret_value(SecretId="kept")["SecretString"] == "still here"
        assert make(s, "ssm").get_parameter(Name="/kept", WithDecryption=True)["Parameter"]["Value"] == "secure"


def test_on_demand_rotation_keeps_old_ciphertexts_readable(kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    before = kms.encrypt(KeyId=key, Plaintext=b"old")["CiphertextBlob"]
    assert kms.rotate_key_on_demand(KeyId=key)["KeyId"] == key
    after = kms.encrypt(KeyId=key, Plaintext=b"new")["CiphertextBlob"]
    assert kms.decrypt(CiphertextBlob=before)["Plaintext"] == b"old"
    assert kms.decrypt(CiphertextBlob=after)["Plaintext"] == b"new"
    rotations = kms.list_key_rotations(KeyId=key)["Rotations"]
    assert [(r["KeyId"], r["RotationType"]) for r in rotations] == [(key, "ON_DEMAND")]
    rsa_key = kms.create_key(KeySpec="RSA_2048", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    with pytest.raises(ClientError) as e:
        kms.rotate_key_on_demand(KeyId=rsa_key)
    assert error(e)[0] == "UnsupportedOperationException"


@pytest.mark.parametrize("spec,curve", [("ECC_NIST_P256", ec.SECP256R1()), ("ECC_NIST_P384", ec.SECP384R1())])
def test_derive_shared_secret_agrees_with_cryptography_ecdh(kms, spec, curve):
    key = kms.create_key(KeySpec=spec, KeyUsage="KEY_AGREEMENT")["KeyMetadata"]
    assert key["KeyAgreementAlgorithms"] == ["ECDH"]
    theirs = ec.generate_private_key(curve)
    their_public = theirs.public_key().public_bytes(
        serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    out = kms.derive_shared_secret(KeyId=key["KeyId"], KeyAgreementAlgorithm="ECDH", PublicKey=their_public)
    kms_public = serialization.load_der_public_key(kms.get_public_key(KeyId=key["KeyId"])["PublicKey"])
    assert out["SharedSecret"] == theirs.exchange(ec.ECDH(), kms_public)
    assert out["KeyId"] == key["Arn"] and out["KeyOrigin"] == "AWS_KMS"
    with pytest.raises(ClientError) as e:
        kms.derive_shared_secret(KeyId=key["KeyId"], KeyAgreementAlgorithm="ECDH", PublicKey=b"not a key")
    assert error(e)[0] == "ValidationException"
    signer = kms.create_key(KeySpec=spec, KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    with pytest.raises(ClientError) as e:
        kms.derive_shared_secret(KeyId=signer, KeyAgreementAlgorithm="ECDH", PublicKey=their_public)
    assert error(e)[0] == "InvalidKeyUsageException"
