"""KMS multi-Region keys through boto3: replicas in other regions share the primary's key id
and material, so ciphertexts and signatures made in one region are read in another."""

from __future__ import annotations

import json
import os

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding

from test_kms_import import import_material

EAST, WEST, EU = "us-east-1", "us-west-2", "eu-west-1"


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def kms(client):
    return {region: client("kms", region_name=region) for region in (EAST, WEST, EU)}


def arn(region, key_id):
    return f"arn:aws:kms:{region}:000000000000:key/{key_id}"


def configuration(client, key_id):
    return client.describe_key(KeyId=key_id)["KeyMetadata"]["MultiRegionConfiguration"]


def test_replica_shares_the_key_and_reads_the_primarys_ciphertext(kms):
    key = kms[EAST].create_key(MultiRegion=True, Description="primary")["KeyMetadata"]
    assert key["KeyId"].startswith("mrk-") and key["MultiRegion"] is True
    blob = kms[EAST].encrypt(KeyId=key["KeyId"], Plaintext=b"from the east", EncryptionContext={"a": "b"})["CiphertextBlob"]

    out = kms[EAST].replicate_key(KeyId=key["KeyId"], ReplicaRegion=WEST, Description="replica",
                                  Tags=[{"TagKey": "side", "TagValue": "west"}])
    replica = out["ReplicaKeyMetadata"]
    assert replica["Arn"] == arn(WEST, key["KeyId"]) and replica["KeyId"] == key["KeyId"]
    assert replica["KeyState"] == "Creating" and replica["Enabled"] is False
    assert replica["Description"] == "replica" and replica["KeySpec"] == "SYMMETRIC_DEFAULT"
    assert replica["MultiRegionConfiguration"] == {
        "MultiRegionKeyType": "REPLICA",
        "PrimaryKey": {"Arn": key["Arn"], "Region": EAST},
        "ReplicaKeys": [{"Arn": arn(WEST, key["KeyId"]), "Region": WEST}],
    }
    assert json.loads(out["ReplicaPolicy"])["Statement"][0]["Principal"]["AWS"] == "arn:aws:iam::000000000000:root"
    assert out["ReplicaTags"] == [{"TagKey": "side", "TagValue": "west"}]

    described = kms[WEST].describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert described["KeyState"] == "Enabled" and described["Description"] == "replica"
    assert described["CurrentKeyMaterialId"] == key["CurrentKeyMaterialId"]
    assert configuration(kms[EAST], key["KeyId"]) == {**replica["MultiRegionConfiguration"], "MultiRegionKeyType": "PRIMARY"}
    assert kms[WEST].list_resource_tags(KeyId=key["KeyId"])["Tags"] == [{"TagKey": "side", "TagValue": "west"}]
    assert kms[EAST].list_resource_tags(KeyId=key["KeyId"])["Tags"] == []

    read = kms[WEST].decrypt(CiphertextBlob=blob, EncryptionContext={"a": "b"})
    assert read["Plaintext"] == b"from the east" and read["KeyId"] == arn(WEST, key["KeyId"])
    back = kms[WEST].encrypt(KeyId=key["KeyId"], Plaintext=b"from the west")["CiphertextBlob"]
    assert kms[EAST].decrypt(CiphertextBlob=back)["Plaintext"] == b"from the west"
    with pytest.raises(ClientError) as e:
        kms[EU].decrypt(CiphertextBlob=blob, EncryptionContext={"a": "b"})
    assert error(e)[0] == "InvalidCiphertextException"


def test_replica_keys_have_their_own_state_and_aliases(kms):
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    kms[WEST].create_alias(AliasName="alias/west-only", TargetKeyId=key)
    kms[WEST].disable_key(KeyId=key)
    assert kms[EAST].describe_key(KeyId=key)["KeyMetadata"]["KeyState"] == "Enabled"
    with pytest.raises(ClientError) as e:
        kms[WEST].encrypt(KeyId="alias/west-only", Plaintext=b"x")
    assert error(e)[0] == "DisabledException"
    with pytest.raises(ClientError) as e:
        kms[EAST].describe_key(KeyId="alias/west-only")
    assert error(e)[0] == "NotFoundException"


def test_replicate_key_errors(kms):
    single = kms[EAST].create_key()["KeyMetadata"]
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=single["KeyId"], ReplicaRegion=WEST)
    assert error(e) == ("UnsupportedOperationException", f"{single['Arn']} is not a multi-Region key.")
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=key, ReplicaRegion=EAST)
    assert error(e)[0] == "ValidationException"
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    assert error(e) == ("AlreadyExistsException", f"{arn(WEST, key)} already exists")
    with pytest.raises(ClientError) as e:
        kms[WEST].replicate_key(KeyId=key, ReplicaRegion=EU)
    assert error(e)[0] == "UnsupportedOperationException"
    kms[EAST].disable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=key, ReplicaRegion=EU)
    assert error(e) == ("DisabledException", f"{arn(EAST, key)} is disabled.")
    with pytest.raises(ClientError) as e:
        kms[EU].describe_key(KeyId=key)
    assert error(e)[0] == "NotFoundException"
    kms[EAST].enable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=key, ReplicaRegion=EU, Policy="{not json")
    assert error(e)[0] == "MalformedPolicyDocumentException"
    with pytest.raises(ClientError) as e:
        kms[EU].describe_key(KeyId=key)
    assert error(e)[0] == "NotFoundException"


def test_update_primary_region_swaps_primary_and_replica(kms):
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    with pytest.raises(ClientError) as e:
        kms[EAST].update_primary_region(KeyId=key, PrimaryRegion=EU)
    assert error(e) == ("NotFoundException", f"Key '{arn(EU, key)}' does not exist")
    with pytest.raises(ClientError) as e:
        kms[WEST].update_primary_region(KeyId=key, PrimaryRegion=EAST)
    assert error(e)[0] == "UnsupportedOperationException"

    kms[EAST].update_primary_region(KeyId=key, PrimaryRegion=WEST)
    for region in (EAST, WEST):
        config = configuration(kms[region], key)
        assert config["PrimaryKey"] == {"Arn": arn(WEST, key), "Region": WEST}
        assert config["ReplicaKeys"] == [{"Arn": arn(EAST, key), "Region": EAST}]
    assert configuration(kms[WEST], key)["MultiRegionKeyType"] == "PRIMARY"
    assert configuration(kms[EAST], key)["MultiRegionKeyType"] == "REPLICA"
    with pytest.raises(ClientError) as e:
        kms[EAST].replicate_key(KeyId=key, ReplicaRegion=EU)
    assert error(e)[0] == "UnsupportedOperationException"
    kms[WEST].replicate_key(KeyId=key, ReplicaRegion=EU)
    assert [r["Region"] for r in configuration(kms[EAST], key)["ReplicaKeys"]] == [EU, EAST]


def test_rotation_happens_in_the_primary_and_reaches_every_replica(kms):
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    before = kms[EAST].encrypt(KeyId=key, Plaintext=b"old material")["CiphertextBlob"]
    kms[EAST].rotate_key_on_demand(KeyId=key)
    middle = kms[EAST].encrypt(KeyId=key, Plaintext=b"rotated once")["CiphertextBlob"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    assert kms[WEST].decrypt(CiphertextBlob=before)["Plaintext"] == b"old material"
    assert kms[WEST].decrypt(CiphertextBlob=middle)["Plaintext"] == b"rotated once"

    kms[EAST].rotate_key_on_demand(KeyId=key)
    after = kms[WEST].encrypt(KeyId=key, Plaintext=b"rotated twice")["CiphertextBlob"]
    assert kms[EAST].decrypt(CiphertextBlob=after)["Plaintext"] == b"rotated twice"
    east = kms[EAST].describe_key(KeyId=key)["KeyMetadata"]["CurrentKeyMaterialId"]
    assert kms[WEST].describe_key(KeyId=key)["KeyMetadata"]["CurrentKeyMaterialId"] == east
    assert len(kms[WEST].list_key_rotations(KeyId=key)["Rotations"]) == 2

    kms[EAST].enable_key_rotation(KeyId=key, RotationPeriodInDays=90)
    assert kms[WEST].get_key_rotation_status(KeyId=key)["RotationPeriodInDays"] == 90
    for call in (lambda: kms[WEST].rotate_key_on_demand(KeyId=key), lambda: kms[WEST].disable_key_rotation(KeyId=key)):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)[0] == "UnsupportedOperationException"


def test_asymmetric_replica_signs_and_decrypts_like_its_primary(kms):
    signer = kms[EAST].create_key(MultiRegion=True, KeySpec="ECC_NIST_P384", KeyUsage="SIGN_VERIFY")["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=signer, ReplicaRegion=WEST)
    public_der = kms[EAST].get_public_key(KeyId=signer)["PublicKey"]
    assert kms[WEST].get_public_key(KeyId=signer)["PublicKey"] == public_der
    signature = kms[WEST].sign(KeyId=signer, Message=b"m", SigningAlgorithm="ECDSA_SHA_384")["Signature"]
    serialization.load_der_public_key(public_der).verify(signature, b"m", ec.ECDSA(hashes.SHA384()))

    encrypter = kms[EAST].create_key(MultiRegion=True, KeySpec="RSA_2048", KeyUsage="ENCRYPT_DECRYPT")["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=encrypter, ReplicaRegion=WEST)
    public = serialization.load_der_public_key(kms[EAST].get_public_key(KeyId=encrypter)["PublicKey"])
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    out = kms[WEST].decrypt(KeyId=encrypter, CiphertextBlob=public.encrypt(b"rsa", oaep), EncryptionAlgorithm="RSAES_OAEP_SHA_256")
    assert out["Plaintext"] == b"rsa"


def test_imported_multi_region_key_needs_the_same_material_in_each_region(kms):
    key = kms[EAST].create_key(MultiRegion=True, Origin="EXTERNAL")["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    assert kms[WEST].describe_key(KeyId=key)["KeyMetadata"]["KeyState"] == "PendingImport"
    with pytest.raises(ClientError) as e:
        import_material(kms[WEST], key, os.urandom(32))
    assert error(e)[0] == "UnsupportedOperationException"

    material = os.urandom(32)
    import_material(kms[EAST], key, material)
    blob = kms[EAST].encrypt(KeyId=key, Plaintext=b"imported everywhere")["CiphertextBlob"]
    with pytest.raises(ClientError) as e:
        import_material(kms[WEST], key, os.urandom(32))
    assert error(e)[0] == "IncorrectKeyMaterialException"
    import_material(kms[WEST], key, material)
    assert kms[WEST].decrypt(CiphertextBlob=blob)["Plaintext"] == b"imported everywhere"

    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=EU)
    with pytest.raises(ClientError) as e:
        kms[EU].decrypt(CiphertextBlob=blob)
    assert error(e) == ("KMSInvalidStateException", f"{arn(EU, key)} is pending import.")


def test_primary_deletion_waits_for_its_replicas(kms, server):
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    out = kms[EAST].schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    assert out["KeyState"] == "PendingReplicaDeletion" and "DeletionDate" not in out
    with pytest.raises(ClientError) as e:
        kms[EAST].encrypt(KeyId=key, Plaintext=b"x")
    assert error(e) == ("KMSInvalidStateException", f"{arn(EAST, key)} is pending replica deletion.")
    assert kms[WEST].encrypt(KeyId=key, Plaintext=b"x")["KeyId"] == arn(WEST, key)

    kms[WEST].schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    server.advance_clock(8 * 86400)
    with pytest.raises(ClientError) as e:
        kms[WEST].describe_key(KeyId=key)
    assert error(e)[0] == "NotFoundException"
    meta = kms[EAST].describe_key(KeyId=key)["KeyMetadata"]
    assert meta["KeyState"] == "PendingDeletion" and "DeletionDate" in meta
    assert meta["MultiRegionConfiguration"]["ReplicaKeys"] == []
    server.advance_clock(7 * 86400)
    with pytest.raises(ClientError) as e:
        kms[EAST].describe_key(KeyId=key)
    assert error(e)[0] == "NotFoundException"


def test_cancelled_primary_deletion_leaves_it_disabled(kms):
    key = kms[EAST].create_key(MultiRegion=True)["KeyMetadata"]["KeyId"]
    kms[EAST].replicate_key(KeyId=key, ReplicaRegion=WEST)
    kms[EAST].schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    kms[EAST].cancel_key_deletion(KeyId=key)
    assert kms[EAST].describe_key(KeyId=key)["KeyMetadata"]["KeyState"] == "Disabled"
