"""KMS imported key material through boto3: material wrapped with the `cryptography` package
under the wrapping keys GetParametersForImport hands out, and the imported keys' results
checked against the same material outside KMS."""

from __future__ import annotations

import hashlib
import hmac
import os
import struct
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import hashes, keywrap, serialization
from cryptography.hazmat.primitives.asymmetric import ec, padding, rsa
from cryptography.hazmat.primitives.ciphers.aead import AESGCM

ALGORITHMS = ["RSAES_OAEP_SHA_1", "RSAES_OAEP_SHA_256", "RSA_AES_KEY_WRAP_SHA_1", "RSA_AES_KEY_WRAP_SHA_256"]


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def kms(client):
    return client("kms")


def wrap(public_der: bytes, algorithm: str, material: bytes) -> bytes:
    """Wraps key material for import the way AWS's guide does with OpenSSL."""
    public = serialization.load_der_public_key(public_der)
    digest = hashes.SHA1() if algorithm.endswith("SHA_1") else hashes.SHA256()
    oaep = padding.OAEP(mgf=padding.MGF1(digest), algorithm=digest, label=None)
    if algorithm.startswith("RSAES_OAEP"):
        return public.encrypt(material, oaep)
    aes = os.urandom(32)
    return public.encrypt(aes, oaep) + keywrap.aes_key_wrap_with_padding(aes, material)


def import_material(kms, key_id, material, algorithm="RSAES_OAEP_SHA_256", spec="RSA_2048", **options):
    params = kms.get_parameters_for_import(KeyId=key_id, WrappingAlgorithm=algorithm, WrappingKeySpec=spec)
    options.setdefault("ExpirationModel", "KEY_MATERIAL_DOES_NOT_EXPIRE")
    return kms.import_key_material(
        KeyId=key_id,
        ImportToken=params["ImportToken"],
        EncryptedKeyMaterial=wrap(params["PublicKey"], algorithm, material),
        **options,
    )


def open_blob(material: bytes, blob: bytes) -> bytes:
    """Opens a symmetric ciphertext blob without KMS, by its documented layout: version,
    key id length, key id, material generation, then AES-256-GCM nonce and ciphertext (an
    empty encryption context is empty associated data)."""
    id_len = blob[1]
    sealed = blob[2 + id_len + 4:]
    assert struct.unpack(">I", blob[2 + id_len:2 + id_len + 4]) == (0,)
    return AESGCM(material).decrypt(sealed[:12], sealed[12:], b"")


def external_key(kms, **options):
    return kms.create_key(Origin="EXTERNAL", **options)["KeyMetadata"]


def test_external_key_waits_for_its_material(kms):
    key = external_key(kms)
    assert key["Origin"] == "EXTERNAL"
    assert key["KeyState"] == "PendingImport" and key["Enabled"] is False
    assert "CurrentKeyMaterialId" not in key and "ExpirationModel" not in key
    for call in (
        lambda: kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x"),
        lambda: kms.enable_key(KeyId=key["KeyId"]),
        lambda: kms.generate_data_key(KeyId=key["KeyId"], KeySpec="AES_256"),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("KMSInvalidStateException", f"{key['Arn']} is pending import.")


@pytest.mark.parametrize("algorithm", ALGORITHMS)
def test_imported_symmetric_material_is_the_key_that_encrypts(kms, algorithm):
    key = external_key(kms)
    material = os.urandom(32)
    out = import_material(kms, key["KeyId"], material, algorithm=algorithm)
    assert out["KeyId"] == key["Arn"] and len(out["KeyMaterialId"]) == 64
    meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert meta["KeyState"] == "Enabled" and meta["Enabled"] is True
    assert meta["ExpirationModel"] == "KEY_MATERIAL_DOES_NOT_EXPIRE" and "ValidTo" not in meta
    assert meta["CurrentKeyMaterialId"] == out["KeyMaterialId"]
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"under my material")["CiphertextBlob"]
    assert open_blob(material, blob) == b"under my material"
    assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"under my material"


@pytest.mark.parametrize("spec,bits", [("RSA_2048", 2048), ("RSA_3072", 3072), ("RSA_4096", 4096)])
def test_parameters_are_a_fresh_wrapping_key_valid_for_a_day(kms, spec, bits):
    key = external_key(kms)
    first = kms.get_parameters_for_import(KeyId=key["KeyId"], WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec=spec)
    second = kms.get_parameters_for_import(KeyId=key["Arn"], WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec=spec)
    assert first["KeyId"] == key["Arn"]
    public = serialization.load_der_public_key(first["PublicKey"])
    assert isinstance(public, rsa.RSAPublicKey) and public.key_size == bits
    assert first["PublicKey"] != second["PublicKey"] and first["ImportToken"] != second["ImportToken"]
    lifetime = first["ParametersValidTo"] - datetime.now(timezone.utc)
    assert timedelta(hours=23) < lifetime <= timedelta(hours=24)


def test_only_the_same_material_may_be_imported_again(kms):
    key = external_key(kms)
    material = os.urandom(32)
    first = import_material(kms, key["KeyId"], material)
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"kept")["CiphertextBlob"]
    with pytest.raises(ClientError) as e:
        import_material(kms, key["KeyId"], os.urandom(32))
    assert error(e)[0] == "IncorrectKeyMaterialException"

    deleted = kms.delete_imported_key_material(KeyId=key["KeyId"])
    assert deleted == {**deleted, "KeyId": key["Arn"], "KeyMaterialId": first["KeyMaterialId"]}
    meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert meta["KeyState"] == "PendingImport" and "ExpirationModel" not in meta
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=blob)
    assert error(e) == ("KMSInvalidStateException", f"{key['Arn']} is pending import.")
    with pytest.raises(ClientError) as e:
        import_material(kms, key["KeyId"], os.urandom(32))
    assert error(e)[0] == "IncorrectKeyMaterialException"
    with pytest.raises(ClientError) as e:
        import_material(kms, key["KeyId"], material, ImportType="NEW_KEY_MATERIAL")
    assert error(e)[0] == "IncorrectKeyMaterialException"

    again = import_material(kms, key["KeyId"], material, algorithm="RSA_AES_KEY_WRAP_SHA_1",
                            spec="RSA_3072", KeyMaterialId=first["KeyMaterialId"])
    assert again["KeyMaterialId"] == first["KeyMaterialId"]
    assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"kept"
    with pytest.raises(ClientError) as e:
        import_material(kms, key["KeyId"], material, KeyMaterialId="0" * 64)
    assert error(e)[0] == "IncorrectKeyMaterialException"


def test_material_expires_on_the_server_clock(kms, server):
    key = external_key(kms)
    material = os.urandom(32)
    valid_to = datetime.now(timezone.utc) + timedelta(hours=1)
    import_material(kms, key["KeyId"], material, ExpirationModel="KEY_MATERIAL_EXPIRES", ValidTo=valid_to)
    meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert meta["ExpirationModel"] == "KEY_MATERIAL_EXPIRES"
    assert abs(meta["ValidTo"] - valid_to) < timedelta(seconds=1)
    blob = kms.encrypt(KeyId=key["KeyId"], Plaintext=b"short-lived")["CiphertextBlob"]

    server.advance_clock(2 * 3600)
    meta = kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]
    assert meta["KeyState"] == "PendingImport" and "ValidTo" not in meta
    with pytest.raises(ClientError) as e:
        kms.decrypt(CiphertextBlob=blob)
    assert error(e)[0] == "KMSInvalidStateException"
    import_material(kms, key["KeyId"], material)
    assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"short-lived"


def test_import_tokens_belong_to_one_key_and_expire(kms, server):
    key = external_key(kms)
    other = external_key(kms)
    material = os.urandom(32)
    params = kms.get_parameters_for_import(KeyId=key["KeyId"], WrappingAlgorithm="RSAES_OAEP_SHA_1", WrappingKeySpec="RSA_2048")
    wrapped = wrap(params["PublicKey"], "RSAES_OAEP_SHA_1", material)
    common = {"EncryptedKeyMaterial": wrapped, "ExpirationModel": "KEY_MATERIAL_DOES_NOT_EXPIRE"}
    for token, target in ((params["ImportToken"], other["KeyId"]), (b"not a token", key["KeyId"])):
        with pytest.raises(ClientError) as e:
            kms.import_key_material(KeyId=target, ImportToken=token, **common)
        assert error(e)[0] == "InvalidImportTokenException"

    stranger = rsa.generate_private_key(public_exponent=65537, key_size=2048).public_key()
    foreign = stranger.public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    with pytest.raises(ClientError) as e:
        kms.import_key_material(KeyId=key["KeyId"], ImportToken=params["ImportToken"],
                                EncryptedKeyMaterial=wrap(foreign, "RSAES_OAEP_SHA_1", material),
                                ExpirationModel="KEY_MATERIAL_DOES_NOT_EXPIRE")
    assert error(e)[0] == "InvalidCiphertextException"
    with pytest.raises(ClientError) as e:
        kms.import_key_material(KeyId=key["KeyId"], ImportToken=params["ImportToken"],
                                EncryptedKeyMaterial=wrap(params["PublicKey"], "RSAES_OAEP_SHA_1", material[:16]),
                                ExpirationModel="KEY_MATERIAL_DOES_NOT_EXPIRE")
    assert error(e) == ("IncorrectKeyMaterialException", "The key material is not valid for key spec SYMMETRIC_DEFAULT.")

    server.advance_clock(25 * 3600)
    with pytest.raises(ClientError) as e:
        kms.import_key_material(KeyId=key["KeyId"], ImportToken=params["ImportToken"], **common)
    assert error(e)[0] == "ExpiredImportTokenException"
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "PendingImport"


def test_expiration_options_are_validated(kms):
    key = external_key(kms)
    params = kms.get_parameters_for_import(KeyId=key["KeyId"], WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec="RSA_2048")
    wrapped = wrap(params["PublicKey"], "RSAES_OAEP_SHA_256", os.urandom(32))
    base = {"KeyId": key["KeyId"], "ImportToken": params["ImportToken"], "EncryptedKeyMaterial": wrapped}
    now = datetime.now(timezone.utc)
    for options, message in (
        ({}, "A validTo date must be set if the ExpirationModel is KEY_MATERIAL_EXPIRES"),
        ({"ExpirationModel": "KEY_MATERIAL_DOES_NOT_EXPIRE", "ValidTo": now + timedelta(days=1)},
         "A validTo date must not be set if the ExpirationModel is KEY_MATERIAL_DOES_NOT_EXPIRE"),
        ({"ValidTo": now - timedelta(hours=1)}, "The validTo date must be in the future."),
        ({"ValidTo": now + timedelta(days=400)}, "The validTo date must be no more than 365 days in the future."),
    ):
        with pytest.raises(ClientError) as e:
            kms.import_key_material(**base, **options)
        assert error(e) == ("ValidationException", message)
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "PendingImport"


def test_import_operations_refuse_keys_kms_made_and_deprecated_wrapping(kms):
    key = kms.create_key()["KeyMetadata"]
    message = f"{key['Arn']} origin is AWS_KMS which is not valid for this operation."
    for call in (
        lambda: kms.get_parameters_for_import(KeyId=key["KeyId"], WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec="RSA_2048"),
        lambda: kms.import_key_material(KeyId=key["KeyId"], ImportToken=b"t", EncryptedKeyMaterial=b"m",
                                        ExpirationModel="KEY_MATERIAL_DOES_NOT_EXPIRE"),
        lambda: kms.delete_imported_key_material(KeyId=key["KeyId"]),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("UnsupportedOperationException", message)
    external = external_key(kms)
    with pytest.raises(ClientError) as e:
        kms.get_parameters_for_import(KeyId=external["KeyId"], WrappingAlgorithm="RSAES_PKCS1_V1_5", WrappingKeySpec="RSA_2048")
    assert error(e)[0] == "UnsupportedOperationException"
    with pytest.raises(ClientError) as e:
        kms.get_parameters_for_import(KeyId="alias/missing", WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec="RSA_2048")
    assert error(e)[0] == "NotFoundException"


def test_pending_deletion_blocks_import_but_not_deletion_of_material(kms):
    key = external_key(kms)
    import_material(kms, key["KeyId"], os.urandom(32))
    kms.schedule_key_deletion(KeyId=key["KeyId"], PendingWindowInDays=7)
    with pytest.raises(ClientError) as e:
        kms.get_parameters_for_import(KeyId=key["KeyId"], WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec="RSA_2048")
    assert error(e) == ("KMSInvalidStateException", f"{key['Arn']} is pending deletion.")
    kms.delete_imported_key_material(KeyId=key["KeyId"])
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "PendingDeletion"
    kms.cancel_key_deletion(KeyId=key["KeyId"])
    assert kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]["KeyState"] == "PendingImport"


def test_rotation_is_refused_for_imported_material(kms):
    key = external_key(kms)
    import_material(kms, key["KeyId"], os.urandom(32))
    message = f"{key['Arn']} origin is EXTERNAL which is not valid for this operation."
    for call in (lambda: kms.enable_key_rotation(KeyId=key["KeyId"]), lambda: kms.rotate_key_on_demand(KeyId=key["KeyId"])):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("UnsupportedOperationException", message)


def test_imported_ecc_key_signs_with_the_imported_private_key(kms):
    private = ec.generate_private_key(ec.SECP256R1())
    der = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key = external_key(kms, KeySpec="ECC_NIST_P256", KeyUsage="SIGN_VERIFY")
    import_material(kms, key["KeyId"], der, algorithm="RSA_AES_KEY_WRAP_SHA_256", spec="RSA_4096")
    public = private.public_key().public_bytes(serialization.Encoding.DER, serialization.PublicFormat.SubjectPublicKeyInfo)
    assert kms.get_public_key(KeyId=key["KeyId"])["PublicKey"] == public
    signature = kms.sign(KeyId=key["KeyId"], Message=b"signed by my key", SigningAlgorithm="ECDSA_SHA_256")["Signature"]
    private.public_key().verify(signature, b"signed by my key", ec.ECDSA(hashes.SHA256()))
    assert "CurrentKeyMaterialId" not in kms.describe_key(KeyId=key["KeyId"])["KeyMetadata"]

    with pytest.raises(ClientError) as e:
        import_material(kms, external_key(kms, KeySpec="ECC_NIST_P384", KeyUsage="SIGN_VERIFY")["KeyId"], der,
                        algorithm="RSA_AES_KEY_WRAP_SHA_256")
    assert error(e) == ("IncorrectKeyMaterialException", "The key material is not valid for key spec ECC_NIST_P384.")


def test_imported_rsa_key_decrypts_what_its_public_key_encrypted(kms):
    private = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    der = private.private_bytes(serialization.Encoding.DER, serialization.PrivateFormat.PKCS8, serialization.NoEncryption())
    key = external_key(kms, KeySpec="RSA_2048", KeyUsage="ENCRYPT_DECRYPT")
    import_material(kms, key["KeyId"], der, algorithm="RSA_AES_KEY_WRAP_SHA_1", spec="RSA_3072")
    oaep = padding.OAEP(mgf=padding.MGF1(hashes.SHA256()), algorithm=hashes.SHA256(), label=None)
    blob = private.public_key().encrypt(b"for the imported key", oaep)
    out = kms.decrypt(KeyId=key["KeyId"], CiphertextBlob=blob, EncryptionAlgorithm="RSAES_OAEP_SHA_256")
    assert out["Plaintext"] == b"for the imported key"


def test_imported_hmac_key_computes_the_standard_hmac(kms):
    material = os.urandom(40)
    key = external_key(kms, KeySpec="HMAC_256", KeyUsage="GENERATE_VERIFY_MAC")
    import_material(kms, key["KeyId"], material, algorithm="RSAES_OAEP_SHA_1")
    mac = kms.generate_mac(KeyId=key["KeyId"], Message=b"message", MacAlgorithm="HMAC_SHA_256")["Mac"]
    assert mac == hmac.new(material, b"message", hashlib.sha256).digest()
    with pytest.raises(ClientError) as e:
        import_material(kms, external_key(kms, KeySpec="HMAC_512", KeyUsage="GENERATE_VERIFY_MAC")["KeyId"], material)
    assert error(e)[0] == "IncorrectKeyMaterialException"


def test_imported_material_survives_a_restart(tmp_path):
    import boto3
    from botocore.config import Config
    from roto_server import RotoServer

    def make(server):
        return boto3.client("kms", endpoint_url=server.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1}))

    data = str(tmp_path / "data")
    material = os.urandom(32)
    with RotoServer("--data-dir", data) as s:
        kms = make(s)
        key = external_key(kms)["KeyId"]
        import_material(kms, key, material)
        blob = kms.encrypt(KeyId=key, Plaintext=b"durable")["CiphertextBlob"]
        other = external_key(kms)["KeyId"]
        params = kms.get_parameters_for_import(KeyId=other, WrappingAlgorithm="RSAES_OAEP_SHA_256", WrappingKeySpec="RSA_2048")
    with RotoServer("--data-dir", data) as s:
        kms = make(s)
        assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"durable"
        kms.import_key_material(KeyId=other, ImportToken=params["ImportToken"],
                                EncryptedKeyMaterial=wrap(params["PublicKey"], "RSAES_OAEP_SHA_256", material),
                                ExpirationModel="KEY_MATERIAL_DOES_NOT_EXPIRE")
        assert kms.describe_key(KeyId=other)["KeyMetadata"]["KeyState"] == "Enabled"
