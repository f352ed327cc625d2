"""--enforce-iam across accounts: another account's DynamoDB table reached by its ARN (the call
acts on the owner's table; the table's resource policy and the caller's identity policies must
both allow it), with AWS's AccessDenied messages for each missing side."""

from __future__ import annotations

import json

import pytest

import access_helpers
from access_helpers import ACCOUNT, client, enforcing_server
from s3_helpers import fails

server = enforcing_server()

OTHER = "111111111111"
TABLE_ARN = f"arn:aws:dynamodb:us-east-1:{ACCOUNT}:table/shared"


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def denied(arn, action, resource, because):
    return f"User: {arn} is not authorized to perform: {action} on resource: {resource} because {because}"


@pytest.fixture
def table(server):
    ddb = client(server, "dynamodb")
    ddb.create_table(TableName="shared", KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName="shared", Item={"k": {"S": "1"}, "v": {"S": "owner's"}})
    return ddb


def share(ddb, *actions, principal=f"arn:aws:iam::{OTHER}:root"):
    ddb.put_resource_policy(ResourceArn=TABLE_ARN, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": principal}, "Action": list(actions), "Resource": TABLE_ARN}]}))


def test_another_accounts_table_needs_its_resource_policy(server, table):
    other = client(server, "dynamodb", OTHER)
    fails(lambda: other.get_item(TableName=TABLE_ARN, Key={"k": {"S": "1"}}), "AccessDeniedException", 400,
          denied(f"arn:aws:iam::{OTHER}:root", "dynamodb:GetItem", TABLE_ARN,
                 "no resource-based policy allows the dynamodb:GetItem action"))
    share(table, "dynamodb:GetItem")
    item = other.get_item(TableName=TABLE_ARN, Key={"k": {"S": "1"}})["Item"]
    assert item["v"] == {"S": "owner's"}
    fails(lambda: other.put_item(TableName=TABLE_ARN, Item={"k": {"S": "2"}}), "AccessDeniedException", 400,
          denied(f"arn:aws:iam::{OTHER}:root", "dynamodb:PutItem", TABLE_ARN,
                 "no resource-based policy allows the dynamodb:PutItem action"))
    assert "Item" not in table.get_item(TableName="shared", Key={"k": {"S": "2"}})


def test_a_table_name_stays_in_the_callers_account(server, table):
    share(table, "dynamodb:GetItem")
    other = client(server, "dynamodb", OTHER)
    fails(lambda: other.get_item(TableName="shared", Key={"k": {"S": "1"}}), "ResourceNotFoundException", 400)


def test_the_other_accounts_users_need_their_identity_policy_too(server, table):
    share(table, "dynamodb:GetItem", "dynamodb:PutItem")
    arn, as_carol = access_helpers.user(server, "carol", account=OTHER)
    fails(lambda: as_carol("dynamodb").get_item(TableName=TABLE_ARN, Key={"k": {"S": "1"}}),
          "AccessDeniedException", 400,
          denied(arn, "dynamodb:GetItem", TABLE_ARN, "no identity-based policy allows the dynamodb:GetItem action"))
    arn, as_dave = access_helpers.user(server, "dave", {"Effect": "Allow", "Action": "dynamodb:*", "Resource": TABLE_ARN},
                                       account=OTHER)
    dave = as_dave("dynamodb")
    dave.put_item(TableName=TABLE_ARN, Item={"k": {"S": "3"}, "v": {"S": "from dave"}})
    assert table.get_item(TableName="shared", Key={"k": {"S": "3"}})["Item"]["v"] == {"S": "from dave"}
    fails(lambda: dave.delete_item(TableName=TABLE_ARN, Key={"k": {"S": "3"}}), "AccessDeniedException", 400,
          denied(arn, "dynamodb:DeleteItem", TABLE_ARN, "no resource-based policy allows the dynamodb:DeleteItem action"))


def test_a_resource_policy_deny_wins_over_the_owners_root(server, table):
    table.put_resource_policy(ResourceArn=TABLE_ARN, Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "dynamodb:DeleteItem", "Resource": TABLE_ARN}]}))
    fails(lambda: table.delete_item(TableName="shared", Key={"k": {"S": "1"}}), "AccessDeniedException", 400,
          f"User: arn:aws:iam::{ACCOUNT}:root is not authorized to perform: dynamodb:DeleteItem on resource: "
          f"{TABLE_ARN} with an explicit deny in a resource-based policy")
    assert table.get_item(TableName="shared", Key={"k": {"S": "1"}})["Item"]


def test_a_kms_grant_to_another_accounts_user_lets_it_use_the_key_with_its_identity_policy(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    use = {"Effect": "Allow", "Action": ["kms:Encrypt", "kms:Decrypt"], "Resource": key["Arn"]}
    erin, as_erin = access_helpers.user(server, "erin", use, account=OTHER)
    erin_kms = as_erin("kms")
    fails(lambda: erin_kms.encrypt(KeyId=key["Arn"], Plaintext=b"x"), "AccessDeniedException", 400,
          denied(erin, "kms:Encrypt", key["Arn"], "no resource-based policy allows the kms:Encrypt action"))
    kms.create_grant(KeyId=key["KeyId"], GranteePrincipal=erin, Operations=["Encrypt", "Decrypt"])
    blob = erin_kms.encrypt(KeyId=key["Arn"], Plaintext=b"shared")["CiphertextBlob"]
    assert kms.decrypt(CiphertextBlob=blob)["Plaintext"] == b"shared"
    assert erin_kms.decrypt(CiphertextBlob=blob, KeyId=key["Arn"])["Plaintext"] == b"shared"
    fails(lambda: erin_kms.generate_data_key(KeyId=key["Arn"], KeySpec="AES_256"), "AccessDeniedException", 400,
          denied(erin, "kms:GenerateDataKey", key["Arn"],
                 "no resource-based policy allows the kms:GenerateDataKey action"))
    frank, as_frank = access_helpers.user(server, "frank", account=OTHER)
    kms.create_grant(KeyId=key["KeyId"], GranteePrincipal=frank, Operations=["Encrypt"])
    fails(lambda: as_frank("kms").encrypt(KeyId=key["Arn"], Plaintext=b"x"), "AccessDeniedException", 400,
          denied(frank, "kms:Encrypt", key["Arn"], "no identity-based policy allows the kms:Encrypt action"))


def test_a_kms_alias_arn_names_the_other_accounts_key(server):
    kms = client(server, "kms")
    key = kms.create_key()["KeyMetadata"]
    kms.create_alias(AliasName="alias/shared", TargetKeyId=key["KeyId"])
    use = {"Effect": "Allow", "Action": "kms:GenerateDataKey", "Resource": "*"}
    gina, as_gina = access_helpers.user(server, "gina", use, account=OTHER)
    kms.create_grant(KeyId=key["KeyId"], GranteePrincipal=gina, Operations=["GenerateDataKey"])
    alias_arn = f"arn:aws:kms:us-east-1:{ACCOUNT}:alias/shared"
    out = as_gina("kms").generate_data_key(KeyId=alias_arn, KeySpec="AES_256")
    assert out["KeyId"] == key["Arn"] and len(out["Plaintext"]) == 32
