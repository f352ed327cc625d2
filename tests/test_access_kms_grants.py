"""--enforce-iam and KMS grants: a grant naming a user, a role (for its sessions) or a
session lets it use the key for the grant's operations without any policy, while the
request's encryption context meets the grant's constraints (EncryptionContextSubset,
EncryptionContextEquals); a grant to the account delegates to its IAM policies; revoking or
retiring the grant ends it; the retiring principal may retire it without a policy."""

from __future__ import annotations

import json

import pytest

import access_helpers
from access_helpers import ACCOUNT, client, enforcing_server
from s3_helpers import fails

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def user(server, name, *statements):
    """An IAM user with an inline policy of `statements`; returns (arn, kms client)."""
    arn, as_user = access_helpers.user(server, name, *statements)
    return arn, as_user("kms")


def denied_message(arn, action, key_arn):
    return (f"User: {arn} is not authorized to perform: {action} on resource: {key_arn} "
            f"because no identity-based policy allows the {action} action")


def test_a_grant_lets_its_grantee_use_the_key_for_its_operations_only(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    alice, alice_kms = user(server, "alice")
    fails(lambda: alice_kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x"), "AccessDeniedException", 400,
          denied_message(alice, "kms:Encrypt", key["Arn"]))
    kms.create_grant(KeyId=key["KeyId"], GranteePrincipal=alice, Operations=["Encrypt", "Decrypt"])
    blob = alice_kms.encrypt(KeyId=key["KeyId"], Plaintext=b"secret")["CiphertextBlob"]
    assert alice_kms.decrypt(CiphertextBlob=blob, KeyId=key["KeyId"])["Plaintext"] == b"secret"
    fails(lambda: alice_kms.generate_data_key(KeyId=key["KeyId"], KeySpec="AES_256"),
          "AccessDeniedException", 400, denied_message(alice, "kms:GenerateDataKey", key["Arn"]))
    fails(lambda: alice_kms.describe_key(KeyId=key["KeyId"]), "AccessDeniedException", 400)
    _, bob_kms = user(server, "bob")
    fails(lambda: bob_kms.encrypt(KeyId=key["KeyId"], Plaintext=b"x"), "AccessDeniedException", 400)


def test_an_alias_reaches_the_grant_of_its_key(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    kms.create_alias(AliasName="alias/app", TargetKeyId=key["KeyId"])
    alice, alice_kms = user(server, "alice")
    kms.create_grant(KeyId=key["Arn"], GranteePrincipal=alice, Operations=["GenerateDataKey"])
    assert len(alice_kms.generate_data_key(KeyId="alias/app", KeySpec="AES_256")["Plaintext"]) == 32


def test_encryption_context_subset_needs_every_pair_and_allows_more(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    alice, alice_kms = user(server, "alice")
    kms.create_grant(KeyId=key, GranteePrincipal=alice, Operations=["Encrypt"],
                     Constraints={"EncryptionContextSubset": {"app": "shop"}})
    alice_kms.encrypt(KeyId=key, Plaintext=b"x", EncryptionContext={"app": "shop"})
    alice_kms.encrypt(KeyId=key, Plaintext=b"x", EncryptionContext={"app": "shop", "env": "dev"})
    for context in ({}, {"app": "other"}, {"env": "dev"}):
        fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x", EncryptionContext=context),
              "AccessDeniedException", 400)


def test_encryption_context_equals_needs_exactly_its_pairs(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    alice, alice_kms = user(server, "alice")
    kms.create_grant(KeyId=key, GranteePrincipal=alice, Operations=["Encrypt", "Decrypt"],
                     Constraints={"EncryptionContextEquals": {"app": "shop"}})
    blob = alice_kms.encrypt(KeyId=key, Plaintext=b"x", EncryptionContext={"app": "shop"})["CiphertextBlob"]
    alice_kms.decrypt(CiphertextBlob=blob, EncryptionContext={"app": "shop"})
    fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x", EncryptionContext={"app": "shop", "env": "d"}),
          "AccessDeniedException", 400)
    fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)


def test_a_grant_to_a_role_serves_its_sessions(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    iam = client(server, "iam")
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:root"}, "Action": "sts:AssumeRole"}]}
    role = iam.create_role(RoleName="worker", Path="/apps/", AssumeRolePolicyDocument=json.dumps(trust))["Role"]
    creds = client(server, "sts").assume_role(RoleArn=role["Arn"], RoleSessionName="run")["Credentials"]
    session = client(server, "kms", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    fails(lambda: session.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)
    kms.create_grant(KeyId=key, GranteePrincipal=role["Arn"], Operations=["Encrypt"])
    session.encrypt(KeyId=key, Plaintext=b"x")


def test_a_grant_to_the_account_delegates_to_its_iam_policies(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    _, alice_kms = user(server, "alice")
    kms.create_grant(KeyId=key, GranteePrincipal=f"arn:aws:iam::{ACCOUNT}:root", Operations=["Encrypt"])
    fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)
    _, carol_kms = user(server, "carol", {"Effect": "Allow", "Action": "kms:Encrypt", "Resource": "*"})
    carol_kms.encrypt(KeyId=key, Plaintext=b"x")


def test_an_explicit_deny_wins_over_a_grant(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    alice, alice_kms = user(server, "alice", {"Effect": "Deny", "Action": "kms:Encrypt", "Resource": "*"})
    kms.create_grant(KeyId=key, GranteePrincipal=alice, Operations=["Encrypt"])
    error = fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)
    assert error["Message"].endswith("with an explicit deny in an identity-based policy")


def test_revoked_and_retired_grants_stop_working(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    alice, alice_kms = user(server, "alice")
    grant = kms.create_grant(KeyId=key, GranteePrincipal=alice, Operations=["Encrypt"])
    alice_kms.encrypt(KeyId=key, Plaintext=b"x", GrantTokens=[grant["GrantToken"]])
    kms.revoke_grant(KeyId=key, GrantId=grant["GrantId"])
    fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)
    grant = kms.create_grant(KeyId=key, GranteePrincipal=alice, Operations=["Encrypt", "RetireGrant"])
    alice_kms.encrypt(KeyId=key, Plaintext=b"x")
    alice_kms.retire_grant(GrantToken=grant["GrantToken"])
    fails(lambda: alice_kms.encrypt(KeyId=key, Plaintext=b"x"), "AccessDeniedException", 400)


def test_the_retiring_principal_may_retire_and_others_may_not(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    alice, _ = user(server, "alice")
    bob, bob_kms = user(server, "bob")
    _, eve_kms = user(server, "eve")
    grant = kms.create_grant(KeyId=key["KeyId"], GranteePrincipal=alice, RetiringPrincipal=bob,
                             Operations=["Encrypt"])
    fails(lambda: eve_kms.retire_grant(GrantToken=grant["GrantToken"]), "AccessDeniedException", 400)
    fails(lambda: eve_kms.retire_grant(KeyId=key["Arn"], GrantId=grant["GrantId"]),
          "AccessDeniedException", 400)
    bob_kms.retire_grant(KeyId=key["Arn"], GrantId=grant["GrantId"])
    assert kms.list_grants(KeyId=key["KeyId"])["Grants"] == []
