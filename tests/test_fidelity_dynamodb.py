"""DynamoDB validations third parties check: operand types of comparisons, updates that
must not create items, the expression grammar's corners, number edge cases, index
descriptions and the request size limit."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def db(client):
    db = client("dynamodb")
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "sk": {"S": "1"}, "n": {"N": "5"},
                                     "l": {"L": [{"N": "1"}]}, "s": {"SS": ["x", "y"]}})
    return db


KEY = {"pk": {"S": "a"}, "sk": {"S": "1"}}


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.mark.parametrize("condition, operator", [
    ("n < :v", "<"), (":v >= n", ">="), ("n BETWEEN :v AND :v", "BETWEEN"),
])
def test_a_list_constant_in_an_ordering_comparison_is_a_validation_error(db, condition, operator):
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=KEY, ConditionExpression=condition,
                    ExpressionAttributeValues={":v": {"L": [{"N": "1"}]}})
    assert error_of(e) == (
        "ValidationException",
        f"Invalid ConditionExpression: Incorrect operand type for operator or function; "
        f"operator or function: {operator}, operand type: L", 400)


def test_a_map_constant_in_an_ordering_comparison_is_a_validation_error(db):
    with pytest.raises(ClientError) as e:
        db.scan(TableName="tbl", FilterExpression="n > :v", ExpressionAttributeValues={":v": {"M": {}}})
    assert error_of(e)[1] == ("Invalid FilterExpression: Incorrect operand type for operator or function; "
                              "operator or function: >, operand type: M")


def test_an_ordering_comparison_of_a_list_attribute_is_a_failed_condition(db):
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=KEY, ConditionExpression="l < :v", ExpressionAttributeValues={":v": {"N": "1"}})
    assert error_of(e)[0] == "ConditionalCheckFailedException"


def test_an_update_of_only_delete_actions_does_not_create_a_missing_item(db):
    missing = {"pk": {"S": "nope"}, "sk": {"S": "1"}}
    out = db.update_item(TableName="tbl", Key=missing, UpdateExpression="DELETE s :v",
                         ExpressionAttributeValues={":v": {"SS": ["x"]}}, ReturnValues="ALL_NEW")
    assert "Attributes" not in out
    assert "Item" not in db.get_item(TableName="tbl", Key=missing)


def test_an_update_of_only_remove_actions_does_not_create_a_missing_item(db):
    missing = {"pk": {"S": "nope"}, "sk": {"S": "1"}}
    db.update_item(TableName="tbl", Key=missing, UpdateExpression="REMOVE n")
    assert "Item" not in db.get_item(TableName="tbl", Key=missing)


def test_a_delete_action_on_an_existing_item_still_applies(db):
    out = db.update_item(TableName="tbl", Key=KEY, UpdateExpression="DELETE s :v",
                         ExpressionAttributeValues={":v": {"SS": ["x"]}}, ReturnValues="ALL_NEW")
    assert out["Attributes"]["s"] == {"SS": ["y"]}


def test_a_function_name_may_be_followed_by_a_space(db):
    out = db.scan(TableName="tbl", FilterExpression="attribute_type (n, :t)", ExpressionAttributeValues={":t": {"S": "N"}})
    assert out["Count"] == 1
    out = db.scan(TableName="tbl", FilterExpression="size (l) = :one", ExpressionAttributeValues={":one": {"N": "1"}})
    assert out["Count"] == 1


def test_a_key_condition_may_name_the_value_first(db):
    out = db.query(TableName="tbl", KeyConditionExpression=":p = pk AND :s = sk",
                   ExpressionAttributeValues={":p": {"S": "a"}, ":s": {"S": "1"}})
    assert out["Count"] == 1
    out = db.query(TableName="tbl", KeyConditionExpression="pk = :p AND :s <= sk",
                   ExpressionAttributeValues={":p": {"S": "a"}, ":s": {"S": "0"}})
    assert out["Count"] == 1


@pytest.mark.parametrize("number, stored", [("0e1000", "0"), ("-0", "0"), ("0.000", "0"), ("1E+2", "100"),
                                            ("00012.500", "12.5")])
def test_numbers_are_normalised_as_dynamodb_stores_them(db, number, stored):
    db.put_item(TableName="tbl", Item={**KEY, "x": {"N": number}})
    assert db.get_item(TableName="tbl", Key=KEY)["Item"]["x"] == {"N": stored}


@pytest.mark.parametrize("number", ["1e126", "1e-131", "1" * 39, "abc", "1e", ""])
def test_numbers_dynamodb_refuses_are_validation_errors(db, number):
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={**KEY, "x": {"N": number}})
    assert error_of(e)[0] == "ValidationException"


def test_backfilling_appears_only_while_an_index_is_backfilled(db):
    desc = db.describe_table(TableName="tbl")["Table"]
    assert "GlobalSecondaryIndexes" not in desc
    db.update_table(TableName="tbl", AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                    GlobalSecondaryIndexUpdates=[{"Create": {
                        "IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "ALL"}}}])
    db.get_waiter("table_exists").wait(TableName="tbl")
    for _ in range(100):
        [index] = db.describe_table(TableName="tbl")["Table"]["GlobalSecondaryIndexes"]
        if index["IndexStatus"] == "ACTIVE":
            break
        assert index["Backfilling"] is True or index["IndexStatus"] == "CREATING"
    assert index["IndexStatus"] == "ACTIVE"
    assert "Backfilling" not in index


def test_an_index_created_with_the_table_has_no_backfilling(client):
    db = client("dynamodb")
    desc = db.create_table(
        TableName="gsi",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert "Backfilling" not in desc["GlobalSecondaryIndexes"][0]
    assert "Backfilling" not in db.describe_table(TableName="gsi")["Table"]["GlobalSecondaryIndexes"][0]


def test_a_request_over_16_mb_is_refused_with_413(server, db):
    body = json.dumps({"TableName": "tbl", "Item": {**KEY, "big": {"S": "x" * (16 * 1024 * 1024 + 1)}}}).encode()
    code, _, answer = server.request("POST", "/", body, {
        "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.PutItem",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/dynamodb/aws4_request, "
                         "SignedHeaders=host, Signature=00"})
    assert code == 413, answer[:300]
    assert json.loads(answer)["__type"].endswith("RequestEntityTooLarge")
    assert "big" not in db.get_item(TableName="tbl", Key=KEY)["Item"]


def test_a_transaction_update_of_only_deletions_does_not_create_a_missing_item(db):
    missing = {"pk": {"S": "nope"}, "sk": {"S": "1"}}
    db.transact_write_items(TransactItems=[{"Update": {
        "TableName": "tbl", "Key": missing, "UpdateExpression": "REMOVE n DELETE s :v",
        "ExpressionAttributeValues": {":v": {"SS": ["x"]}}}}])
    assert "Item" not in db.get_item(TableName="tbl", Key=missing)
