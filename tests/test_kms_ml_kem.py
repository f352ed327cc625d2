"""KMS ML-KEM keys through boto3: Encapsulate and Decapsulate agree with each other and with
the `cryptography` package's ML-KEM (FIPS 203) on the key's public half."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric import mlkem

SPECS = [("ML_KEM_512", 768), ("ML_KEM_768", 1088), ("ML_KEM_1024", 1568)]


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def kms(client):
    return client("kms")


def ml_kem_key(kms, spec):
    return kms.create_key(KeySpec=spec, KeyUsage="ENCAPSULATE_DECAPSULATE")["KeyMetadata"]


@pytest.mark.parametrize("spec,ciphertext_len", SPECS)
def test_encapsulated_secret_decapsulates_to_the_same_secret(kms, spec, ciphertext_len):
    key = ml_kem_key(kms, spec)
    assert key["KeySpec"] == spec and key["EncapsulationAlgorithms"] == ["ML_KEM"]
    out = kms.encapsulate(KeyId=key["KeyId"], EncapsulationAlgorithm="ML_KEM")
    assert out["KeyId"] == key["Arn"] and out["EncapsulationAlgorithm"] == "ML_KEM"
    assert len(out["SharedSecret"]) == 32 and len(out["SharedSecretCiphertextBlob"]) == ciphertext_len
    back = kms.decapsulate(KeyId=key["KeyId"], SharedSecretCiphertextBlob=out["SharedSecretCiphertextBlob"],
                           EncapsulationAlgorithm="ML_KEM")
    assert back["SharedSecret"] == out["SharedSecret"] and back["KeyId"] == key["Arn"]
    again = kms.encapsulate(KeyId=key["KeyId"], EncapsulationAlgorithm="ML_KEM")
    assert again["SharedSecret"] != out["SharedSecret"]


@pytest.mark.parametrize("spec", ["ML_KEM_768", "ML_KEM_1024"])
def test_secrets_encapsulated_by_cryptography_under_the_public_key_decapsulate(kms, spec):
    key = ml_kem_key(kms, spec)
    public_key = kms.get_public_key(KeyId=key["KeyId"])
    assert public_key["KeyUsage"] == "ENCAPSULATE_DECAPSULATE" and public_key["EncapsulationAlgorithms"] == ["ML_KEM"]
    public = serialization.load_der_public_key(public_key["PublicKey"])
    expected = mlkem.MLKEM768PublicKey if spec == "ML_KEM_768" else mlkem.MLKEM1024PublicKey
    assert isinstance(public, expected)
    secret, ciphertext = public.encapsulate()
    out = kms.decapsulate(KeyId=key["KeyId"], SharedSecretCiphertextBlob=ciphertext, EncapsulationAlgorithm="ML_KEM")
    assert out["SharedSecret"] == secret


def test_tampered_ciphertext_yields_another_secret_and_a_wrong_length_is_invalid(kms):
    key = ml_kem_key(kms, "ML_KEM_768")["KeyId"]
    out = kms.encapsulate(KeyId=key, EncapsulationAlgorithm="ML_KEM")
    tampered = bytearray(out["SharedSecretCiphertextBlob"])
    tampered[10] ^= 1
    rejected = kms.decapsulate(KeyId=key, SharedSecretCiphertextBlob=bytes(tampered), EncapsulationAlgorithm="ML_KEM")
    assert len(rejected["SharedSecret"]) == 32 and rejected["SharedSecret"] != out["SharedSecret"]
    with pytest.raises(ClientError) as e:
        kms.decapsulate(KeyId=key, SharedSecretCiphertextBlob=out["SharedSecretCiphertextBlob"][:-1],
                        EncapsulationAlgorithm="ML_KEM")
    assert error(e)[0] == "InvalidCiphertextException"


def test_ml_kem_keys_do_nothing_else_and_other_keys_do_not_encapsulate(kms):
    key = ml_kem_key(kms, "ML_KEM_512")
    with pytest.raises(ClientError) as e:
        kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x")
    assert error(e)[0] == "InvalidKeyUsageException"
    with pytest.raises(ClientError) as e:
        kms.create_key(KeySpec="ML_KEM_768", KeyUsage="SIGN_VERIFY")
    assert error(e)[0] == "ValidationException"
    symmetric = kms.create_key()["KeyMetadata"]
    with pytest.raises(ClientError) as e:
        kms.encapsulate(KeyId=symmetric["KeyId"], EncapsulationAlgorithm="ML_KEM")
    assert error(e) == ("InvalidKeyUsageException",
                        f"{symmetric['Arn']} key usage is ENCRYPT_DECRYPT which is not valid for Encapsulate.")
    kms.disable_key(KeyId=key["KeyId"])
    with pytest.raises(ClientError) as e:
        kms.encapsulate(KeyId=key["KeyId"], EncapsulationAlgorithm="ML_KEM")
    assert error(e)[0] == "DisabledException"
    kms.enable_key(KeyId=key["KeyId"])
    kms.encapsulate(KeyId=key["KeyId"], EncapsulationAlgorithm="ML_KEM")
    assert kms.get_key_last_usage(KeyId=key["KeyId"])["KeyLastUsage"]["Operation"] == "Encapsulate"
