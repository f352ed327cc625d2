"""IAM users' other credentials through boto3: SSH public keys, signing certificates and
service-specific credentials."""

from __future__ import annotations

import base64
import datetime
import hashlib

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from cryptography import x509
from cryptography.hazmat.primitives import hashes, serialization
from cryptography.hazmat.primitives.asymmetric import ec, rsa
from cryptography.x509.oid import NameOID

ACCOUNT = "000000000000"


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["Error"]["Message"], err["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def iam(client):
    return client("iam")


@pytest.fixture
def user(iam):
    return iam.create_user(UserName="dev")["User"]["UserName"]


def rsa_public(bits=2048):
    return rsa.generate_private_key(public_exponent=65537, key_size=bits).public_key()


def openssh(public):
    return public.public_bytes(serialization.Encoding.OpenSSH, serialization.PublicFormat.OpenSSH).decode()


def pem(public):
    return public.public_bytes(serialization.Encoding.PEM, serialization.PublicFormat.SubjectPublicKeyInfo).decode()


def md5_fingerprint(openssh_text):
    digest = hashlib.md5(base64.b64decode(openssh_text.split()[1])).hexdigest()
    return ":".join(digest[i:i + 2] for i in range(0, 32, 2))


def certificate(common_name="signer"):
    key = ec.generate_private_key(ec.SECP256R1())
    name = x509.Name([x509.NameAttribute(NameOID.COMMON_NAME, common_name)])
    now = datetime.datetime.now(datetime.timezone.utc)
    cert = (x509.CertificateBuilder().subject_name(name).issuer_name(name).public_key(key.public_key())
            .serial_number(x509.random_serial_number()).not_valid_before(now)
            .not_valid_after(now + datetime.timedelta(days=365)).sign(key, hashes.SHA256()))
    return cert.public_bytes(serialization.Encoding.PEM).decode()


# SSH public keys

def test_ssh_key_upload_returns_the_openssh_md5_fingerprint(iam, user):
    public = rsa_public()
    body = openssh(public)
    key = iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=body + " dev@laptop")["SSHPublicKey"]
    assert key["UserName"] == user and key["Status"] == "Active"
    assert key["SSHPublicKeyId"].startswith("APKA") and len(key["SSHPublicKeyId"]) == 21
    assert key["Fingerprint"] == md5_fingerprint(body)
    got = iam.get_ssh_public_key(UserName=user, SSHPublicKeyId=key["SSHPublicKeyId"], Encoding="SSH")["SSHPublicKey"]
    assert got["SSHPublicKeyBody"] == body + " dev@laptop"
    assert got["Fingerprint"] == key["Fingerprint"] and got["UploadDate"] == key["UploadDate"]


def test_ssh_key_reads_back_as_pem_and_pem_uploads_read_back_as_openssh(iam, user):
    public = rsa_public()
    key_id = iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=pem(public))["SSHPublicKey"]["SSHPublicKeyId"]
    as_ssh = iam.get_ssh_public_key(UserName=user, SSHPublicKeyId=key_id, Encoding="SSH")["SSHPublicKey"]
    assert as_ssh["SSHPublicKeyBody"] == openssh(public)
    assert as_ssh["Fingerprint"] == md5_fingerprint(openssh(public))
    as_pem = iam.get_ssh_public_key(UserName=user, SSHPublicKeyId=key_id, Encoding="PEM")["SSHPublicKey"]
    parsed = serialization.load_pem_public_key(as_pem["SSHPublicKeyBody"].encode())
    assert parsed.public_numbers() == public.public_numbers()


def test_ssh_keys_list_update_and_delete(iam, user):
    ids = [iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))["SSHPublicKey"]["SSHPublicKeyId"]
           for _ in range(2)]
    listed = iam.list_ssh_public_keys(UserName=user)["SSHPublicKeys"]
    assert sorted(k["SSHPublicKeyId"] for k in listed) == sorted(ids)
    assert all("SSHPublicKeyBody" not in k for k in listed)
    iam.update_ssh_public_key(UserName=user, SSHPublicKeyId=ids[0], Status="Inactive")
    statuses = {k["SSHPublicKeyId"]: k["Status"] for k in iam.list_ssh_public_keys(UserName=user)["SSHPublicKeys"]}
    assert statuses == {ids[0]: "Inactive", ids[1]: "Active"}
    page = iam.list_ssh_public_keys(UserName=user, MaxItems=1)
    assert page["IsTruncated"] and len(page["SSHPublicKeys"]) == 1
    rest = iam.list_ssh_public_keys(UserName=user, Marker=page["Marker"])["SSHPublicKeys"]
    assert {page["SSHPublicKeys"][0]["SSHPublicKeyId"], rest[0]["SSHPublicKeyId"]} == set(ids)
    iam.delete_ssh_public_key(UserName=user, SSHPublicKeyId=ids[0])
    assert [k["SSHPublicKeyId"] for k in iam.list_ssh_public_keys(UserName=user)["SSHPublicKeys"]] == [ids[1]]


def test_ssh_key_errors(iam, user):
    body = openssh(rsa_public())
    iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=body)
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=body)
    assert error_of(e)[0::2] == ("DuplicateSSHPublicKey", 400)
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public(1024)))
    assert error_of(e)[0::2] == ("InvalidPublicKey", 400)
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody="ssh-rsa not-base64!")
    assert error_of(e)[0] == "InvalidPublicKey"
    ed25519 = "ssh-ed25519 AAAAC3NzaC1lZDI1NTE5AAAAIKzvfE+qS09w+okgrO0gY7jryF0lSCxdEO/O0UaUhuZe"
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=ed25519)
    assert error_of(e)[0] == "InvalidPublicKey"
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody="just some text")
    assert error_of(e)[0::2] == ("UnrecognizedPublicKeyEncoding", 400)
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName="nobody", SSHPublicKeyBody=body)
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)
    missing = "APKA" + "X" * 17
    for call in (lambda: iam.get_ssh_public_key(UserName=user, SSHPublicKeyId=missing, Encoding="SSH"),
                 lambda: iam.update_ssh_public_key(UserName=user, SSHPublicKeyId=missing, Status="Inactive"),
                 lambda: iam.delete_ssh_public_key(UserName=user, SSHPublicKeyId=missing)):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("NoSuchEntity", f"The Public Key with id {missing} cannot be found.", 404)


def test_a_user_holds_at_most_five_ssh_keys(iam, user):
    for _ in range(5):
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))
    with pytest.raises(ClientError) as e:
        iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for KeysPerUser: 5", 409)
    assert len(iam.list_ssh_public_keys(UserName=user)["SSHPublicKeys"]) == 5


def test_keys_of_one_user_are_not_found_under_another(iam, user):
    iam.create_user(UserName="other")
    key_id = iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))["SSHPublicKey"]["SSHPublicKeyId"]
    with pytest.raises(ClientError) as e:
        iam.delete_ssh_public_key(UserName="other", SSHPublicKeyId=key_id)
    assert error_of(e)[0] == "NoSuchEntity"


def test_the_callers_own_keys_are_listed_without_a_user_name(server, iam, user):
    key_id = iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))["SSHPublicKey"]["SSHPublicKeyId"]
    access = iam.create_access_key(UserName=user)["AccessKey"]
    own = boto3.client("iam", endpoint_url=server.endpoint, region_name="us-east-1",
                       aws_access_key_id=access["AccessKeyId"], aws_secret_access_key=access["SecretAccessKey"],
                       config=Config(retries={"max_attempts": 1}))
    assert [k["SSHPublicKeyId"] for k in own.list_ssh_public_keys()["SSHPublicKeys"]] == [key_id]


def test_credentials_follow_a_renamed_user_and_block_its_deletion(iam, user):
    key_id = iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))["SSHPublicKey"]["SSHPublicKeyId"]
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName=user)
    assert error_of(e) == ("DeleteConflict", "Cannot delete entity, must delete SSH public keys first.", 409)
    iam.update_user(UserName=user, NewUserName="renamed")
    got = iam.get_ssh_public_key(UserName="renamed", SSHPublicKeyId=key_id, Encoding="SSH")["SSHPublicKey"]
    assert got["UserName"] == "renamed"
    iam.delete_ssh_public_key(UserName="renamed", SSHPublicKeyId=key_id)
    iam.delete_user(UserName="renamed")


# Signing certificates

def report_row(iam, user):
    iam.generate_credential_report()
    lines = iam.get_credential_report()["Content"].decode().splitlines()
    return dict(zip(lines[0].split(","), next(r for r in lines if r.startswith(user + ",")).split(",")))


def test_signing_certificate_lifecycle(iam, user):
    body = certificate()
    cert = iam.upload_signing_certificate(UserName=user, CertificateBody=body)["Certificate"]
    assert (cert["UserName"], cert["Status"], cert["CertificateBody"]) == (user, "Active", body)
    assert len(cert["CertificateId"]) == 32
    iam.update_signing_certificate(UserName=user, CertificateId=cert["CertificateId"], Status="Inactive")
    listed = iam.list_signing_certificates(UserName=user)["Certificates"]
    assert [(c["CertificateId"], c["Status"], c["CertificateBody"]) for c in listed] == [
        (cert["CertificateId"], "Inactive", body)]
    assert report_row(iam, user)["cert_1_active"] == "false"
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName=user)
    assert error_of(e)[1] == "Cannot delete entity, must delete signing certificates first."
    iam.delete_signing_certificate(UserName=user, CertificateId=cert["CertificateId"])
    assert iam.list_signing_certificates(UserName=user)["Certificates"] == []


def test_credential_report_shows_active_signing_certificates(iam, user):
    iam.upload_signing_certificate(UserName=user, CertificateBody=certificate())
    row = report_row(iam, user)
    assert row["cert_1_active"] == "true" and row["cert_1_last_rotated"] != "N/A"
    assert row["cert_2_active"] == "false"


def test_signing_certificate_errors(iam, user):
    with pytest.raises(ClientError) as e:
        iam.upload_signing_certificate(UserName=user, CertificateBody="invalid-certificate-body")
    assert error_of(e) == ("MalformedCertificate", "Certificate invalid-certificate-body is malformed.", 400)
    garbage = "-----BEGIN CERTIFICATE-----\nAAAA\n-----END CERTIFICATE-----\n"
    with pytest.raises(ClientError) as e:
        iam.upload_signing_certificate(UserName=user, CertificateBody=garbage)
    assert error_of(e)[0] == "MalformedCertificate"
    with pytest.raises(ClientError) as e:
        iam.upload_signing_certificate(UserName="nobody", CertificateBody=certificate())
    assert error_of(e) == ("NoSuchEntity", "The user with name nobody cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.update_signing_certificate(UserName=user, CertificateId="NONEXISTENTCERTID12345678901", Status="Active")
    assert error_of(e) == ("NoSuchEntity", "The Certificate with id NONEXISTENTCERTID12345678901 cannot be found.", 404)
    first = certificate()
    iam.upload_signing_certificate(UserName=user, CertificateBody=first)
    iam.create_user(UserName="other")
    with pytest.raises(ClientError) as e:
        iam.upload_signing_certificate(UserName="other", CertificateBody=first)
    assert error_of(e)[0::2] == ("DuplicateCertificate", 409)
    iam.upload_signing_certificate(UserName=user, CertificateBody=certificate())
    with pytest.raises(ClientError) as e:
        iam.upload_signing_certificate(UserName=user, CertificateBody=certificate())
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for CertificatesPerUser: 2", 409)


# Service-specific credentials

@pytest.mark.parametrize("service", ["codecommit.amazonaws.com", "cassandra.amazonaws.com"])
def test_service_specific_credential_lifecycle(iam, user, service):
    cred = iam.create_service_specific_credential(UserName=user, ServiceName=service)["ServiceSpecificCredential"]
    assert cred["ServiceUserName"] == f"{user}-at-{ACCOUNT}"
    assert len(cred["ServicePassword"]) == 60 and cred["ServicePassword"].endswith("=")
    assert cred["ServiceSpecificCredentialId"].startswith("ACCA") and cred["Status"] == "Active"
    cred_id = cred["ServiceSpecificCredentialId"]
    listed = iam.list_service_specific_credentials(UserName=user, ServiceName=service)["ServiceSpecificCredentials"]
    assert [(c["ServiceSpecificCredentialId"], c["ServiceUserName"]) for c in listed] == [(cred_id, cred["ServiceUserName"])]
    assert "ServicePassword" not in listed[0]
    iam.update_service_specific_credential(UserName=user, ServiceSpecificCredentialId=cred_id, Status="Inactive")
    listed = iam.list_service_specific_credentials(UserName=user)["ServiceSpecificCredentials"]
    assert listed[0]["Status"] == "Inactive"
    reset = iam.reset_service_specific_credential(UserName=user, ServiceSpecificCredentialId=cred_id)
    assert reset["ServiceSpecificCredential"]["ServicePassword"] != cred["ServicePassword"]
    with pytest.raises(ClientError) as e:
        iam.delete_user(UserName=user)
    assert error_of(e)[0] == "DeleteConflict"
    iam.delete_service_specific_credential(UserName=user, ServiceSpecificCredentialId=cred_id)
    assert iam.list_service_specific_credentials(UserName=user)["ServiceSpecificCredentials"] == []


def test_service_user_names_take_the_next_free_slot_and_two_per_service(iam, user):
    names = [iam.create_service_specific_credential(UserName=user, ServiceName="codecommit.amazonaws.com")
             ["ServiceSpecificCredential"]["ServiceUserName"] for _ in range(2)]
    assert names == [f"{user}-at-{ACCOUNT}", f"{user}+1-at-{ACCOUNT}"]
    with pytest.raises(ClientError) as e:
        iam.create_service_specific_credential(UserName=user, ServiceName="codecommit.amazonaws.com")
    assert error_of(e) == ("LimitExceeded", "Cannot exceed quota for ServiceSpecificCredentialsPerUser: 2", 409)
    iam.create_service_specific_credential(UserName=user, ServiceName="cassandra.amazonaws.com")
    assert len(iam.list_service_specific_credentials(UserName=user)["ServiceSpecificCredentials"]) == 3
    only = iam.list_service_specific_credentials(UserName=user, ServiceName="cassandra.amazonaws.com")
    assert len(only["ServiceSpecificCredentials"]) == 1


def test_bedrock_api_keys_carry_an_alias_and_expire(iam, user):
    cred = iam.create_service_specific_credential(UserName=user, ServiceName="bedrock.amazonaws.com",
                                                  CredentialAgeDays=30)["ServiceSpecificCredential"]
    assert cred["ServiceCredentialAlias"] == f"{user}-at-{ACCOUNT}" and "ServicePassword" not in cred
    secret = base64.b64decode(cred["ServiceCredentialSecret"].removeprefix("ABSK")).decode()
    assert secret.startswith(cred["ServiceCredentialAlias"] + ":")
    assert cred["ExpirationDate"] - cred["CreateDate"] == datetime.timedelta(days=30)


def test_all_users_lists_everyones_credentials(iam, user):
    iam.create_user(UserName="other")
    for name in (user, "other"):
        iam.create_service_specific_credential(UserName=name, ServiceName="codecommit.amazonaws.com")
    everyone = iam.list_service_specific_credentials(AllUsers=True)["ServiceSpecificCredentials"]
    assert sorted(c["UserName"] for c in everyone) == sorted([user, "other"])


def test_service_specific_credential_errors(iam, user):
    with pytest.raises(ClientError) as e:
        iam.create_service_specific_credential(UserName=user, ServiceName="lambda.amazonaws.com")
    assert error_of(e) == ("NoSuchEntity",
                           "No such service lambda.amazonaws.com is supported for Service Specific Credentials", 404)
    with pytest.raises(ClientError) as e:
        iam.create_service_specific_credential(UserName="nobody", ServiceName="lambda.amazonaws.com")
    assert error_of(e)[1] == "The user with name nobody cannot be found."
    with pytest.raises(ClientError) as e:
        iam.list_service_specific_credentials(UserName=user, ServiceName="nonexistent.amazonaws.com")
    assert error_of(e)[0] == "NoSuchEntity"
    cred_id = iam.create_service_specific_credential(UserName=user, ServiceName="codecommit.amazonaws.com")[
        "ServiceSpecificCredential"]["ServiceSpecificCredentialId"]
    with pytest.raises(ClientError) as e:
        iam.reset_service_specific_credential(UserName="wrong-user", ServiceSpecificCredentialId=cred_id)
    assert error_of(e) == ("NoSuchEntity", "The user with name wrong-user cannot be found.", 404)
    with pytest.raises(ClientError) as e:
        iam.delete_service_specific_credential(UserName=user, ServiceSpecificCredentialId="satisfiesregexbutstillinvalid")
    assert error_of(e) == ("NoSuchEntity", "No such credential satisfiesregexbutstillinvalid exists", 404)
    with pytest.raises(ClientError) as e:
        iam.update_service_specific_credential(UserName=user, ServiceSpecificCredentialId=cred_id, Status="Invalid")
    assert error_of(e)[0] == "ValidationError"


def test_root_credentials_list_no_keys_certificates_or_service_credentials(iam, user):
    iam.upload_ssh_public_key(UserName=user, SSHPublicKeyBody=openssh(rsa_public()))
    iam.upload_signing_certificate(UserName=user, CertificateBody=certificate())
    iam.create_service_specific_credential(UserName=user, ServiceName="codecommit.amazonaws.com")
    assert iam.list_ssh_public_keys()["SSHPublicKeys"] == []
    assert iam.list_signing_certificates()["Certificates"] == []
    assert iam.list_service_specific_credentials()["ServiceSpecificCredentials"] == []
