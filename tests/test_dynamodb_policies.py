"""DynamoDB resource-based policies through boto3: PutResourcePolicy, GetResourcePolicy and
DeleteResourcePolicy on tables and streams, and CreateTable's ResourcePolicy."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

NOT_FOUND = "Resource-based policy not found for the provided ResourceArn: "


def ddb(client):
    return client("dynamodb")


def fails(call, **params):
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def policy(action="dynamodb:*", principal=None, **statement):
    body = {
        "Effect": "Allow",
        "Principal": principal or {"AWS": "123456789012"},
        "Action": [action],
        "Resource": "*",
    }
    body.update(statement)
    return json.dumps({"Version": "2012-10-17", "Statement": [body]})


def make_table(db, name="tbl", **extra):
    return db.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        **extra,
    )["TableDescription"]


def test_a_policy_is_stored_verbatim_with_a_revision(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    document = policy()
    revision = db.put_resource_policy(ResourceArn=arn, Policy=document)["RevisionId"]
    assert revision.isdigit()
    got = db.get_resource_policy(ResourceArn=arn)
    assert got["Policy"] == document
    assert got["RevisionId"] == revision


def test_the_same_document_keeps_its_revision_and_a_new_one_gets_a_later_one(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    first = db.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"]
    assert db.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"] == first
    second = db.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:PutItem"))["RevisionId"]
    assert second != first
    assert len(second) == len(first) and second > first
    assert "dynamodb:PutItem" in json.loads(db.get_resource_policy(ResourceArn=arn)["Policy"])["Statement"][0]["Action"]


def test_expected_revisions_make_puts_conditional(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    first = db.put_resource_policy(ResourceArn=arn, Policy=policy(), ExpectedRevisionId="NO_POLICY")["RevisionId"]
    assert fails(db.put_resource_policy, ResourceArn=arn, Policy=policy("dynamodb:Query"),
                 ExpectedRevisionId="NO_POLICY") == (
        "PolicyNotFoundException",
        NOT_FOUND + f"Requested policy update expecting none to be present for table tbl, but a policy exists with revision id {first}.")
    second = db.put_resource_policy(ResourceArn=arn, Policy=policy("dynamodb:GetItem"),
                                    ExpectedRevisionId=first)["RevisionId"]
    assert fails(db.put_resource_policy, ResourceArn=arn, Policy=policy("dynamodb:Scan"),
                 ExpectedRevisionId=first) == (
        "PolicyNotFoundException",
        NOT_FOUND + f"Requested update for policy with revision id {first}, but the policy associated to target table tbl has revision id {second}.")
    assert db.get_resource_policy(ResourceArn=arn)["RevisionId"] == second


def test_deletes_answer_the_revision_and_can_be_conditional(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    assert fails(db.delete_resource_policy, ResourceArn=arn) == ("PolicyNotFoundException", NOT_FOUND + arn)
    revision = db.put_resource_policy(ResourceArn=arn, Policy=policy())["RevisionId"]
    assert fails(db.delete_resource_policy, ResourceArn=arn, ExpectedRevisionId="unknown") == (
        "PolicyNotFoundException",
        NOT_FOUND + f"Requested update for policy with revision id unknown, but the policy associated to target table tbl has revision id {revision}.")
    assert db.delete_resource_policy(ResourceArn=arn, ExpectedRevisionId=revision)["RevisionId"] == revision
    assert fails(db.get_resource_policy, ResourceArn=arn) == ("PolicyNotFoundException", NOT_FOUND + arn)
    # An expected revision with no policy in place is refused too.
    assert fails(db.put_resource_policy, ResourceArn=arn, Policy=policy(), ExpectedRevisionId=revision) == (
        "PolicyNotFoundException", NOT_FOUND + arn)


def test_unknown_resources_are_not_found(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    for call, params in ((db.put_resource_policy, {"Policy": policy()}),
                         (db.get_resource_policy, {}),
                         (db.delete_resource_policy, {})):
        assert fails(call, ResourceArn=arn + "_", **params) == (
            "ResourceNotFoundException", "Requested resource not found: Table: tbl_ not found")
    other_region = arn.replace("us-east-1", "eu-west-1")
    assert fails(db.get_resource_policy, ResourceArn=other_region)[0] == "ResourceNotFoundException"
    assert fails(db.get_resource_policy, ResourceArn="tbl") == (
        "ValidationException", "Invalid ResourceArn provided as input tbl")
    stream = arn + "/stream/2026-01-01T00:00:00.000"
    assert fails(db.get_resource_policy, ResourceArn=stream) == (
        "ResourceNotFoundException", f"Requested resource not found: Stream: {stream} not found")


def test_streams_carry_their_own_policy(client):
    db = ddb(client)
    table = make_table(db, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    stream = table["LatestStreamArn"]
    document = policy("dynamodb:GetRecords")
    revision = db.put_resource_policy(ResourceArn=stream, Policy=document)["RevisionId"]
    got = db.get_resource_policy(ResourceArn=stream)
    assert (got["Policy"], got["RevisionId"]) == (document, revision)
    assert fails(db.get_resource_policy, ResourceArn=table["TableArn"])[0] == "PolicyNotFoundException"


def test_create_table_attaches_its_resource_policy_and_delete_table_drops_it(client):
    db = ddb(client)
    document = policy("dynamodb:GetItem")
    arn = make_table(db, ResourcePolicy=document)["TableArn"]
    assert db.get_resource_policy(ResourceArn=arn)["Policy"] == document
    db.delete_table(TableName="tbl")
    make_table(db)
    assert fails(db.get_resource_policy, ResourceArn=arn)[0] == "PolicyNotFoundException"
    code, message = fails(db.create_table, TableName="other",
                          AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                          KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                          BillingMode="PAY_PER_REQUEST", ResourcePolicy="{not json")
    assert code == "ValidationException" and "Invalid policy document" in message
    assert db.list_tables()["TableNames"] == ["tbl"]


@pytest.mark.parametrize("document,message", [
    ("[1, 2]", "Invalid policy document: This policy contains invalid Json"),
    (policy(principal={"AWS": "not-an-account"}), "Invalid principal in policy document."),
    (policy("s3:GetObject"), 'Invalid policy document: The following action names are invalid: "s3:GetObject"'),
    (json.dumps({"Statement": [{"Effect": "Allow", "Action": "dynamodb:*", "Resource": "*"}]}),
     "Invalid policy document: Policy statement must contain a Principal or NotPrincipal"),
    (json.dumps({"Version": "2020-01-01", "Statement": []}), "Invalid policy document: The policy document has an invalid Version"),
])
def test_documents_are_checked(client, document, message):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    assert fails(db.put_resource_policy, ResourceArn=arn, Policy=document) == (
        "ValidationException", "One or more parameter values were invalid: " + message)
    assert fails(db.get_resource_policy, ResourceArn=arn)[0] == "PolicyNotFoundException"


def test_oversized_documents_are_over_the_limit(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    assert fails(db.put_resource_policy, ResourceArn=arn, Policy=policy(Sid="x" * 21000))[0] == (
        "LimitExceededException")


def test_confirming_self_lockout_is_accepted(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    deny = policy(Effect="Deny")
    revision = db.put_resource_policy(ResourceArn=arn, Policy=deny, ConfirmRemoveSelfResourceAccess=True)["RevisionId"]
    assert db.get_resource_policy(ResourceArn=arn)["RevisionId"] == revision
