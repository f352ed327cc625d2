"""DynamoDB batches and transactions: limits, shapes, cancellation reasons, idempotency."""

from __future__ import annotations

import boto3
import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def db(client):
    db = client("dynamodb")
    for name in ("one", "two"):
        db.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    return db


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def k(pk):
    return {"pk": {"S": pk}}


def test_batch_write_puts_and_deletes_across_tables(db):
    db.put_item(TableName="two", Item={"pk": {"S": "old"}})
    out = db.batch_write_item(RequestItems={
        "one": [{"PutRequest": {"Item": {"pk": {"S": f"k{i}"}, "v": {"N": str(i)}}}} for i in range(20)],
        "two": [{"DeleteRequest": {"Key": k("old")}}, {"PutRequest": {"Item": {"pk": {"S": "new"}}}}],
    })
    assert out["UnprocessedItems"] == {}
    assert db.describe_table(TableName="one")["Table"]["ItemCount"] == 20
    assert [i["pk"]["S"] for i in db.scan(TableName="two")["Items"]] == ["new"]


def test_batch_write_limits_and_duplicates(db):
    with pytest.raises(ClientError) as e:
        db.batch_write_item(RequestItems={"one": [{"PutRequest": {"Item": k(f"k{i}")}} for i in range(26)]})
    assert error_of(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        db.batch_write_item(RequestItems={"one": [{"PutRequest": {"Item": k(f"k{i}")}} for i in range(13)],
                                          "two": [{"PutRequest": {"Item": k(f"k{i}")}} for i in range(13)]})
    assert error_of(e) == ("ValidationException", "Too many items requested for the BatchWriteItem call")
    with pytest.raises(ClientError) as e:
        db.batch_write_item(RequestItems={"one": [{"PutRequest": {"Item": k("a")}},
                                                  {"DeleteRequest": {"Key": k("a")}}]})
    assert error_of(e) == ("ValidationException", "Provided list of item keys contains duplicates")
    with pytest.raises(ClientError) as e:
        db.batch_write_item(RequestItems={"missing": [{"PutRequest": {"Item": k("a")}}]})
    assert error_of(e)[0] == "ResourceNotFoundException"
    assert db.scan(TableName="one")["Count"] == 0


def test_batch_get_returns_found_items_and_empty_unprocessed_keys(db):
    db.put_item(TableName="one", Item={"pk": {"S": "a"}, "x": {"S": "1"}, "y": {"S": "2"}})
    out = db.batch_get_item(RequestItems={
        "one": {"Keys": [k("a"), k("absent")], "ProjectionExpression": "#x", "ExpressionAttributeNames": {"#x": "x"}},
        "two": {"Keys": [k("a")]},
    })
    assert out["Responses"] == {"one": [{"x": {"S": "1"}}], "two": []}
    assert out["UnprocessedKeys"] == {}
    with pytest.raises(ClientError) as e:
        db.batch_get_item(RequestItems={"one": {"Keys": [k("a"), k("a")]}})
    assert error_of(e) == ("ValidationException", "Provided list of item keys contains duplicates")
    with pytest.raises(ClientError) as e:
        db.batch_get_item(RequestItems={"one": {"Keys": [k(f"k{i}") for i in range(60)]},
                                        "two": {"Keys": [k(f"k{i}") for i in range(41)]}})
    assert error_of(e) == ("ValidationException", "Too many items requested for the BatchGetItem call")


def test_resource_batch_writer_round_trips(server):
    resource = boto3.resource("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
    table = resource.create_table(TableName="bwr", BillingMode="PAY_PER_REQUEST",
                                  AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                  KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}])
    with table.batch_writer() as writer:
        for i in range(60):
            writer.put_item(Item={"pk": f"k{i}", "n": i})
    assert table.scan(Select="COUNT")["Count"] == 60


def test_transaction_writes_all_or_nothing_with_reasons_in_order(db):
    db.put_item(TableName="one", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    items = [
        {"Put": {"TableName": "two", "Item": {"pk": {"S": "x"}}}},
        {"ConditionCheck": {"TableName": "one", "Key": k("a"), "ConditionExpression": "n = :two",
                            "ExpressionAttributeValues": {":two": {"N": "2"}},
                            "ReturnValuesOnConditionCheckFailure": "ALL_OLD"}},
        {"Update": {"TableName": "one", "Key": k("b"), "UpdateExpression": "SET n = :one",
                    "ExpressionAttributeValues": {":one": {"N": "1"}}}},
    ]
    with pytest.raises(ClientError) as e:
        db.transact_write_items(TransactItems=items)
    code, message = error_of(e)
    assert code == "TransactionCanceledException"
    assert message == ("Transaction cancelled, please refer cancellation reasons for specific reasons "
                       "[None, ConditionalCheckFailed, None]")
    reasons = e.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"} and reasons[2] == {"Code": "None"}
    assert reasons[1]["Code"] == "ConditionalCheckFailed"
    assert reasons[1]["Item"] == {"pk": {"S": "a"}, "n": {"N": "1"}}
    assert db.scan(TableName="two")["Count"] == 0
    items[1]["ConditionCheck"]["ExpressionAttributeValues"] = {":two": {"N": "1"}}
    db.transact_write_items(TransactItems=items)
    assert db.scan(TableName="two")["Count"] == 1
    assert db.get_item(TableName="one", Key=k("b"))["Item"]["n"] == {"N": "1"}


def test_transaction_refuses_two_operations_on_one_item(db):
    with pytest.raises(ClientError) as e:
        db.transact_write_items(TransactItems=[{"Put": {"TableName": "one", "Item": k("a")}},
                                               {"Delete": {"TableName": "one", "Key": k("a")}}])
    assert error_of(e) == ("ValidationException",
                           "Transaction request cannot include multiple operations on one item")


def test_client_request_token_makes_the_transaction_idempotent(db):
    items = [{"Update": {"TableName": "one", "Key": k("c"), "UpdateExpression": "ADD n :one",
                         "ExpressionAttributeValues": {":one": {"N": "1"}}}}]
    db.transact_write_items(TransactItems=items, ClientRequestToken="tok")
    db.transact_write_items(TransactItems=items, ClientRequestToken="tok")
    assert db.get_item(TableName="one", Key=k("c"))["Item"]["n"] == {"N": "1"}
    items[0]["Update"]["ExpressionAttributeValues"] = {":one": {"N": "5"}}
    with pytest.raises(ClientError) as e:
        db.transact_write_items(TransactItems=items, ClientRequestToken="tok")
    assert error_of(e)[0] == "IdempotentParameterMismatchException"


def test_transact_get_returns_items_in_request_order(db):
    db.put_item(TableName="one", Item={"pk": {"S": "a"}, "v": {"S": "1"}})
    db.put_item(TableName="two", Item={"pk": {"S": "b"}, "v": {"S": "2"}})
    out = db.transact_get_items(TransactItems=[
        {"Get": {"TableName": "two", "Key": k("b")}},
        {"Get": {"TableName": "one", "Key": k("missing")}},
        {"Get": {"TableName": "one", "Key": k("a"), "ProjectionExpression": "v"}},
    ])
    assert out["Responses"] == [{"Item": {"pk": {"S": "b"}, "v": {"S": "2"}}}, {}, {"Item": {"v": {"S": "1"}}}]
