"""DynamoDB tables and single items through boto3 (client and resource), the AWS CLI and raw HTTP."""

from __future__ import annotations

import binascii
import json
import re
import zlib
from decimal import Decimal

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

TARGET = "DynamoDB_20120810"
JSON10 = "application/x-amz-json-1.0"


def ddb(client):
    return client("dynamodb")


def make_table(db, name="tbl", range_key=None, hash_type="S", range_type="S", **extra):
    definitions = [{"AttributeName": "pk", "AttributeType": hash_type}]
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        definitions.append({"AttributeName": range_key, "AttributeType": range_type})
        schema.append({"AttributeName": range_key, "KeyType": "RANGE"})
    params = {
        "TableName": name,
        "AttributeDefinitions": definitions,
        "KeySchema": schema,
        "BillingMode": "PAY_PER_REQUEST",
    }
    params.update(extra)
    return db.create_table(**params)["TableDescription"]


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def raw(server, operation, body, target=None):
    headers = {
        "Content-Type": JSON10,
        "X-Amz-Target": target or f"{TARGET}.{operation}",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20250101/us-east-1/dynamodb/aws4_request, "
        "SignedHeaders=host, Signature=0",
    }
    data = body if isinstance(body, bytes) else json.dumps(body).encode()
    return server.request("POST", "/", data, headers)


def header(headers, name):
    for k, v in dict(headers).items():
        if k.lower() == name:
            return v
    return None


# ---------------------------------------------------------------- CreateTable / DescribeTable


def test_create_table_returns_an_active_description_with_arn_id_and_throughput(client):
    db = ddb(client)
    desc = db.create_table(
        TableName="orders",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 3},
    )["TableDescription"]
    assert desc["TableName"] == "orders"
    assert desc["TableStatus"] == "ACTIVE"
    assert desc["TableArn"] == "arn:aws:dynamodb:us-east-1:000000000000:table/orders"
    assert re.fullmatch(r"[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}", desc["TableId"])
    assert desc["ProvisionedThroughput"] == {"NumberOfDecreasesToday": 0, "ReadCapacityUnits": 5,
                                             "WriteCapacityUnits": 3}
    assert desc["ItemCount"] == 0 and desc["TableSizeBytes"] == 0
    assert desc["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert desc["DeletionProtectionEnabled"] is False
    assert desc["KeySchema"][1] == {"AttributeName": "sk", "KeyType": "RANGE"}
    described = db.describe_table(TableName="orders")["Table"]
    assert described["TableId"] == desc["TableId"]
    assert described["CreationDateTime"] == desc["CreationDateTime"]


def test_on_demand_tables_show_zero_throughput_and_pay_per_request_summary(client):
    desc = make_table(ddb(client))
    assert desc["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert desc["ProvisionedThroughput"]["WriteCapacityUnits"] == 0
    assert desc["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert "LastUpdateToPayPerRequestDateTime" in desc["BillingModeSummary"]


def test_table_exists_waiter_succeeds_immediately(client):
    db = ddb(client)
    make_table(db)
    db.get_waiter("table_exists").wait(TableName="tbl", WaiterConfig={"Delay": 1, "MaxAttempts": 2})


def test_creating_an_existing_table_is_resource_in_use(client):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        make_table(db)
    assert error_of(e) == ("ResourceInUseException", "Table already exists: tbl")


def test_describe_missing_table_is_resource_not_found(client):
    with pytest.raises(ClientError) as e:
        ddb(client).describe_table(TableName="nope")
    assert error_of(e) == ("ResourceNotFoundException", "Requested resource not found: Table: nope not found")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


@pytest.mark.parametrize("params,message", [
    ({"BillingMode": "PROVISIONED"},
     "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
     "specified when BillingMode is PROVISIONED"),
    ({},
     "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be "
     "specified when BillingMode is PROVISIONED"),
    ({"BillingMode": "PAY_PER_REQUEST", "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1}},
     "One or more parameter values were invalid: Neither ReadCapacityUnits nor WriteCapacityUnits can be "
     "specified when BillingMode is PAY_PER_REQUEST"),
])
def test_billing_mode_and_throughput_must_agree(client, params, message):
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(
            TableName="tbl", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], **params)
    assert error_of(e) == ("ValidationException", message)


@pytest.mark.parametrize("definitions,schema,message", [
    ([{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "extra", "AttributeType": "S"}],
     [{"AttributeName": "pk", "KeyType": "HASH"}],
     "One or more parameter values were invalid: Number of attributes in KeySchema does not exactly match "
     "number of attributes defined in AttributeDefinitions"),
    ([{"AttributeName": "other", "AttributeType": "S"}],
     [{"AttributeName": "pk", "KeyType": "HASH"}],
     "One or more parameter values were invalid: Some index key attributes are not defined in "
     "AttributeDefinitions. Keys: [pk], AttributeDefinitions: [other]"),
    ([{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
     [{"AttributeName": "pk", "KeyType": "RANGE"}, {"AttributeName": "sk", "KeyType": "HASH"}],
     "Invalid KeySchema: The first KeySchemaElement is not a HASH key type"),
    ([{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "S"}],
     [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "HASH"}],
     "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type"),
    ([{"AttributeName": "pk", "AttributeType": "S"}],
     [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "pk", "KeyType": "RANGE"}],
     "Invalid KeySchema: Some index key attribute have no definition"),
    ([{"AttributeName": "pk", "AttributeType": "X"}],
     [{"AttributeName": "pk", "KeyType": "HASH"}],
     "1 validation error detected: Value 'X' at 'attributeDefinitions.1.member.attributeType' failed to "
     "satisfy constraint: Member must satisfy enum value set: [S, N, B]"),
])
def test_key_schema_and_attribute_definitions_are_validated(client, definitions, schema, message):
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(TableName="tbl", AttributeDefinitions=definitions, KeySchema=schema,
                                 BillingMode="PAY_PER_REQUEST")
    assert error_of(e) == ("ValidationException", message)


@pytest.mark.parametrize("name,fragment", [
    ("ab", "Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"),
    ("bad name", "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"),
    ("x" * 256, "Member must have length less than or equal to 255"),
])
def test_table_names_are_validated(client, name, fragment):
    with pytest.raises(ClientError) as e:
        make_table(ddb(client), name=name)
    code, message = error_of(e)
    assert code == "ValidationException"
    assert message.startswith("1 validation error detected: ") and fragment in message


def test_secondary_indexes_are_described_with_arns_status_and_projection(client):
    db = ddb(client)
    desc = db.create_table(
        TableName="idx",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "lsk", "gpk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{
            "IndexName": "by-lsk",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
        }],
        GlobalSecondaryIndexes=[{
            "IndexName": "by-gpk",
            "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]},
            "ProvisionedThroughput": {"ReadCapacityUnits": 2, "WriteCapacityUnits": 4},
        }],
        ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
        Tags=[{"Key": "team", "Value": "core"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"},
    )["TableDescription"]
    arn = desc["TableArn"]
    lsi = desc["LocalSecondaryIndexes"][0]
    assert lsi["IndexName"] == "by-lsk" and lsi["IndexArn"] == f"{arn}/index/by-lsk"
    assert lsi["Projection"] == {"ProjectionType": "KEYS_ONLY"}
    assert lsi["KeySchema"][1]["AttributeName"] == "lsk"
    gsi = desc["GlobalSecondaryIndexes"][0]
    assert gsi["IndexStatus"] == "ACTIVE" and gsi["IndexArn"] == f"{arn}/index/by-gpk"
    assert gsi["Projection"] == {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b"]}
    assert gsi["ProvisionedThroughput"]["ReadCapacityUnits"] == 2
    assert gsi["ProvisionedThroughput"]["WriteCapacityUnits"] == 4
    assert desc["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert desc["LatestStreamArn"] == f"{arn}/stream/{desc['LatestStreamLabel']}"
    assert db.describe_table(TableName="idx")["Table"]["GlobalSecondaryIndexes"][0]["IndexName"] == "by-gpk"


@pytest.mark.parametrize("change,message", [
    ({"KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}]},
     "One or more parameter values were invalid: Table KeySchema does not have a range key, which is required "
     "when specifying a LocalSecondaryIndex"),
    ({"LocalSecondaryIndexes": [{"IndexName": "lsi1", "KeySchema": [
        {"AttributeName": "lsk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL"}}]},
     "One or more parameter values were invalid: Index KeySchema does not have the same leading hash key as "
     "table KeySchema for index: lsi1. index hash key: lsk, table hash key: pk"),
    ({"LocalSecondaryIndexes": [{"IndexName": "lsi1", "KeySchema": [
        {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsk", "KeyType": "RANGE"}],
        "Projection": {"ProjectionType": "ALL", "NonKeyAttributes": ["x"]}}]},
     "One or more parameter values were invalid: ProjectionType is ALL, but NonKeyAttributes is specified"),
])
def test_local_secondary_indexes_are_validated(client, change, message):
    params = {
        "TableName": "tbl",
        "AttributeDefinitions": [{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "sk", "lsk")],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        "BillingMode": "PAY_PER_REQUEST",
        "LocalSecondaryIndexes": [{"IndexName": "lsi1", "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "lsk", "KeyType": "RANGE"}],
            "Projection": {"ProjectionType": "ALL"}}],
    }
    params.update(change)
    if len(params["KeySchema"]) == 1:
        params["AttributeDefinitions"] = [d for d in params["AttributeDefinitions"] if d["AttributeName"] != "sk"]
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(**params)
    assert error_of(e) == ("ValidationException", message)


def test_unused_attribute_definitions_with_indexes_are_rejected(client):
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(
            TableName="tbl",
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "gpk", "spare")],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST",
            GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                     "Projection": {"ProjectionType": "ALL"}}],
        )
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values were invalid: Some AttributeDefinitions are not used. "
                           "AttributeDefinitions: [pk, gpk, spare], keys used: [pk, gpk]")


def test_duplicate_index_names_are_rejected(client):
    gsi = {"IndexName": "gsi", "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
           "Projection": {"ProjectionType": "ALL"}}
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(
            TableName="tbl",
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "gpk")],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            BillingMode="PAY_PER_REQUEST", GlobalSecondaryIndexes=[gsi, gsi])
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values were invalid: Duplicate index name: gsi")


def test_tables_are_isolated_per_region_and_account(server, client):
    make_table(ddb(client))
    west = client("dynamodb", region_name="us-west-2")
    assert west.list_tables()["TableNames"] == []
    other = client("dynamodb", aws_access_key_id="111122223333")
    assert other.list_tables()["TableNames"] == []
    desc = make_table(west)
    assert desc["TableArn"] == "arn:aws:dynamodb:us-west-2:000000000000:table/tbl"
    assert make_table(other)["TableArn"] == "arn:aws:dynamodb:us-east-1:111122223333:table/tbl"


# ---------------------------------------------------------------- ListTables / DeleteTable


def test_list_tables_is_sorted_and_paginates(client):
    db = ddb(client)
    for name in ["delta", "alpha", "charlie", "bravo", "echo"]:
        make_table(db, name=name)
    assert db.list_tables()["TableNames"] == ["alpha", "bravo", "charlie", "delta", "echo"]
    page = db.list_tables(Limit=2)
    assert page["TableNames"] == ["alpha", "bravo"] and page["LastEvaluatedTableName"] == "bravo"
    page = db.list_tables(Limit=2, ExclusiveStartTableName="bravo")
    assert page["TableNames"] == ["charlie", "delta"]
    page = db.list_tables(Limit=2, ExclusiveStartTableName="delta")
    assert page["TableNames"] == ["echo"] and "LastEvaluatedTableName" not in page
    names = [n for p in db.get_paginator("list_tables").paginate(PaginationConfig={"PageSize": 2})
             for n in p["TableNames"]]
    assert names == ["alpha", "bravo", "charlie", "delta", "echo"]


@pytest.mark.parametrize("limit,fragment", [
    (0, "Member must have value greater than or equal to 1"),
    (101, "Member must have value less than or equal to 100"),
])
def test_list_tables_limit_is_validated(server, limit, fragment):
    # boto3 checks the minimum itself, so the request goes out raw.
    status, _, data = raw(server, "ListTables", {"Limit": limit})
    body = json.loads(data)
    assert status == 400 and body["__type"].endswith("#ValidationException")
    assert body["message"] == (f"1 validation error detected: Value '{limit}' at 'limit' failed to satisfy "
                               f"constraint: {fragment}")


def test_delete_table_returns_deleting_and_removes_table_and_items(client):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    desc = db.delete_table(TableName="tbl")["TableDescription"]
    assert desc["TableStatus"] == "DELETING" and desc["TableName"] == "tbl"
    db.get_waiter("table_not_exists").wait(TableName="tbl", WaiterConfig={"Delay": 1, "MaxAttempts": 2})
    with pytest.raises(ClientError) as e:
        db.delete_table(TableName="tbl")
    assert error_of(e) == ("ResourceNotFoundException", "Requested resource not found: Table: tbl not found")
    make_table(db)
    assert "Item" not in db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})
    assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 0


def test_deletion_protection_blocks_delete_table(client):
    db = ddb(client)
    desc = make_table(db, DeletionProtectionEnabled=True)
    assert desc["DeletionProtectionEnabled"] is True
    with pytest.raises(ClientError) as e:
        db.delete_table(TableName="tbl")
    assert error_of(e) == ("ValidationException",
                           "Resource cannot be deleted as it is currently protected against deletion. "
                           "Disable deletion protection first.")
    assert db.describe_table(TableName="tbl")["Table"]["TableStatus"] == "ACTIVE"


# ---------------------------------------------------------------- items


EVERY_TYPE = {
    "pk": {"S": "k"},
    "s": {"S": "héllo"},
    "empty": {"S": ""},
    "n": {"N": "123456789012345678901234567890.5"},
    "b": {"B": b"\x00\x01\xff"},
    "ss": {"SS": ["x", "y"]},
    "ns": {"NS": ["1", "2.5"]},
    "bs": {"BS": [b"\x01", b"\x02"]},
    "m": {"M": {"child": {"L": [{"BOOL": True}, {"NULL": True}, {"M": {"deep": {"N": "-7"}}}]}}},
    "l": {"L": []},
    "emptymap": {"M": {}},
    "t": {"BOOL": False},
    "nul": {"NULL": True},
}


def test_every_attribute_type_round_trips_exactly(client):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item=EVERY_TYPE)
    got = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}})["Item"]
    assert got == EVERY_TYPE


@pytest.mark.parametrize("given,stored", [
    ("01.50", "1.5"), ("-0", "0"), ("1E+2", "100"), ("1e-3", "0.001"), ("+5", "5"), ("100", "100"),
    ("-0.0100", "-0.01"), ("0e125", "0"), ("0e1000", "0"), ("-0e-131", "0"), ("1E-130", "0." + "0" * 129 + "1"), ("9.9E+125", "99" + "0" * 124),
])
def test_numbers_are_normalised_like_dynamodb(client, given, stored):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item={"pk": {"S": "k"}, "n": {"N": given}, "ns": {"NS": [given]}})
    item = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}})["Item"]
    assert item["n"] == {"N": stored}
    assert item["ns"] == {"NS": [stored]}


@pytest.mark.parametrize("given,message", [
    ("abc", "The parameter cannot be converted to a numeric value: abc"),
    ("", "The parameter cannot be converted to a numeric value: "),
    ("1.2.3", "The parameter cannot be converted to a numeric value: 1.2.3"),
    ("1e2147483647", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
    ("1e9223372036854775808", "The parameter cannot be converted to a numeric value: 1e9223372036854775808"),
    ("1E+126", "Number overflow. Attempting to store a number with magnitude larger than supported range"),
    ("1E-131", "Number underflow. Attempting to store a number with magnitude smaller than supported range"),
    ("1" * 39, "Attempting to store more than 38 significant digits in a Number"),
])
def test_invalid_numbers_are_rejected(client, given, message):
    # Write operations report value errors inside the validation envelope, GetItem bare.
    db = ddb(client)
    make_table(db, hash_type="N")
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"N": "1"}, "n": {"N": given}})
    assert error_of(e) == ("ValidationException", f"1 validation error detected: {message}")
    with pytest.raises(ClientError) as e:
        db.delete_item(TableName="tbl", Key={"pk": {"N": given}})
    assert error_of(e) == ("ValidationException", f"1 validation error detected: {message}")
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"N": given}})
    assert error_of(e) == ("ValidationException", message)


def test_number_keys_are_equal_when_numerically_equal(client):
    db = ddb(client)
    make_table(db, hash_type="N")
    db.put_item(TableName="tbl", Item={"pk": {"N": "1.50"}, "v": {"S": "first"}})
    db.put_item(TableName="tbl", Item={"pk": {"N": "15E-1"}, "v": {"S": "second"}})
    item = db.get_item(TableName="tbl", Key={"pk": {"N": "1.5"}})["Item"]
    assert item == {"pk": {"N": "1.5"}, "v": {"S": "second"}}
    assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 1


@pytest.mark.parametrize("value,message", [
    ({"SS": []}, "One or more parameter values were invalid: An string set  may not be empty"),
    ({"NS": []}, "One or more parameter values were invalid: An number set  may not be empty"),
    ({"BS": []}, "One or more parameter values were invalid: Binary sets should not be empty"),
    ({"SS": ["b", "a", "b"]},
     'One or more parameter values were invalid: Input collection ["a", "b", "b"] contains duplicates.'),
    ({"BS": [b"\xff", b"\x00", b"\x00"]},
     'One or more parameter values were invalid: Input collection ["AA==","/w==","AA=="]of type BS contains '
     'duplicates.'),
    ({"NS": ["2", "1", "2.0"]}, "One or more parameter values were invalid: Input collection contains duplicates."),
    ({"NS": [""]}, "The parameter cannot be converted to a numeric value: "),
    ({}, "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes"),
    ({"S": "a", "N": "1"},
     "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes"),
    ({"NULL": False}, "One or more parameter values were invalid: Null attribute value types must have the value of true"),
    ({"M": {"x": {"SS": []}}}, "One or more parameter values were invalid: An string set  may not be empty"),
])
def test_invalid_attribute_values_are_rejected(client, value, message):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "k"}, "a": value})
    assert error_of(e) == ("ValidationException", f"1 validation error detected: {message}")


@pytest.mark.parametrize("item,message", [
    ({"other": {"S": "x"}}, "One or more parameter values were invalid: Missing the key pk in the item"),
    ({"pk": {"N": "1"}}, "One or more parameter values were invalid: Type mismatch for key pk expected: S actual: N"),
    ({"pk": {"S": ""}}, "One or more parameter values are not valid. The AttributeValue for a key attribute "
                        "cannot contain an empty string value. Key: pk"),
])
def test_put_item_checks_the_key_attributes(client, item, message):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item)
    assert error_of(e) == ("ValidationException", message)


def test_put_item_checks_secondary_index_key_types(client):
    db = ddb(client)
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "gpk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    db.put_item(TableName="tbl", Item={"pk": {"S": "no-index-key"}})
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "gpk": {"N": "1"}})
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values were invalid: Type mismatch for Index Key gpk "
                           "Expected: S Actual: N IndexName: gsi")


@pytest.mark.parametrize("key", [
    {"pk": {"N": "1"}},
    {"pk": {"S": "a"}, "extra": {"S": "b"}},
    {"other": {"S": "a"}},
    {"pk": {"S": "a"}, "sk": {"S": "b"}},
])
def test_get_and_delete_with_a_key_not_matching_the_schema_fail(client, key):
    db = ddb(client)
    make_table(db)
    for call in (db.get_item, db.delete_item):
        with pytest.raises(ClientError) as e:
            call(TableName="tbl", Key=key)
        assert error_of(e) == ("ValidationException", "The provided key element does not match the schema")


def test_range_key_tables_need_both_key_parts(client):
    db = ddb(client)
    make_table(db, range_key="sk", range_type="N")
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "sk": {"N": "1"}, "v": {"S": "one"}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "sk": {"N": "2"}, "v": {"S": "two"}})
    assert db.get_item(TableName="tbl", Key={"pk": {"S": "a"}, "sk": {"N": "2"}})["Item"]["v"] == {"S": "two"}
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})
    assert error_of(e)[1] == "The provided key element does not match the schema"
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    assert error_of(e)[1] == "One or more parameter values were invalid: Missing the key sk in the item"


def test_empty_key_values_in_get_are_rejected(client):
    db = ddb(client)
    make_table(db, hash_type="B")
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"B": b""}})
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values are not valid. The AttributeValue for a key attribute "
                           "cannot contain an empty binary value. Key: pk")


def test_item_operations_on_a_missing_table_are_resource_not_found(client):
    db = ddb(client)
    calls = [
        lambda: db.put_item(TableName="nope", Item={"pk": {"S": "a"}}),
        lambda: db.get_item(TableName="nope", Key={"pk": {"S": "a"}}),
        lambda: db.delete_item(TableName="nope", Key={"pk": {"S": "a"}}),
    ]
    for call in calls:
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("ResourceNotFoundException", "Requested resource not found")


def test_get_missing_item_returns_no_item(client):
    db = ddb(client)
    make_table(db)
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "none"}})
    assert "Item" not in out


def test_put_replaces_and_return_values_all_old_gives_the_previous_item(client):
    db = ddb(client)
    make_table(db)
    assert "Attributes" not in db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "1"}},
                                           ReturnValues="ALL_OLD")
    out = db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "w": {"N": "2"}}, ReturnValues="ALL_OLD")
    assert out["Attributes"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}, "w": {"N": "2"}}
    out = db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnValues="ALL_OLD")
    assert out["Attributes"] == {"pk": {"S": "a"}, "w": {"N": "2"}}
    assert "Attributes" not in db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnValues="ALL_OLD")
    assert "Item" not in db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})


@pytest.mark.parametrize("value", ["ALL_NEW", "UPDATED_OLD", "UPDATED_NEW"])
def test_put_and_delete_reject_other_return_values(client, value):
    db = ddb(client)
    make_table(db)
    for call in (lambda: db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, ReturnValues=value),
                 lambda: db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnValues=value)):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("ValidationException",
                               "1 validation error detected: ReturnValues can only be ALL_OLD or NONE")


def test_invalid_return_values_enum_is_a_model_validation_error(client):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, ReturnValues="EVERYTHING")
    code, message = error_of(e)
    assert code == "ValidationException"
    assert message.startswith("1 validation error detected: Value 'EVERYTHING' at 'returnValues'")


def test_item_size_limit_is_400_kb(client):
    db = ddb(client)
    make_table(db)
    # pk (2) + "a" (1) + v (1) + the padding: exactly 409,600 bytes is accepted, one more refused.
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"S": "x" * (409600 - 4)}})
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"S": "x" * (409600 - 3)}})
    assert error_of(e) == ("ValidationException", "Item size has exceeded the maximum allowed size")
    # A number costs 1 + half its digits on each side of the point (rounded up): 3.14159 is 5.
    padding = 409600 - 4 - 1 - 5
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "n": {"N": "3.14159"}, "v": {"S": "x" * padding}})
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "n": {"N": "3.14159"}, "v": {"S": "x" * (padding + 1)}})
    assert error_of(e)[1] == "Item size has exceeded the maximum allowed size"


def test_item_count_and_size_track_writes(client):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"S": "12345"}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "b"}})
    table = db.describe_table(TableName="tbl")["Table"]
    assert table["ItemCount"] == 2
    assert table["TableSizeBytes"] == (2 + 1 + 1 + 5) + (2 + 1)
    db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}})
    table = db.describe_table(TableName="tbl")["Table"]
    assert table["ItemCount"] == 1 and table["TableSizeBytes"] == 3


def test_consumed_capacity_follows_item_size_and_consistency(client):
    db = ddb(client)
    make_table(db)
    out = db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"S": "x" * 3000}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 3.0}
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 0.5}
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "a"}}, ConsistentRead=True, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "missing"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 0.5
    out = db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="TOTAL")
    assert out["ConsumedCapacity"]["CapacityUnits"] == 3.0
    assert "ConsumedCapacity" not in db.get_item(TableName="tbl", Key={"pk": {"S": "a"}}, ReturnConsumedCapacity="NONE")


def test_get_item_projection_expression_selects_top_level_and_nested_paths(client):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item=EVERY_TYPE)
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="#s, n, m.child[2].deep, absent",
                      ExpressionAttributeNames={"#s": "s"})
    assert out["Item"] == {"s": EVERY_TYPE["s"], "n": EVERY_TYPE["n"],
                           "m": {"M": {"child": {"L": [{"M": {"deep": {"N": "-7"}}}]}}}}
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="nothing")
    assert out["Item"] == {}
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, AttributesToGet=["t", "nul"])
    assert out["Item"] == {"t": {"BOOL": False}, "nul": {"NULL": True}}


@pytest.mark.parametrize("params,message", [
    ({"ProjectionExpression": "#x"},
     "Invalid ProjectionExpression: An expression attribute name used in the document path is not defined; "
     "attribute name: #x"),
    ({"ProjectionExpression": "a", "ExpressionAttributeNames": {"#unused": "b"}},
     "Value provided in ExpressionAttributeNames unused in expressions: keys: {#unused}"),
    ({"ExpressionAttributeNames": {"#a": "a"}},
     "ExpressionAttributeNames can only be specified when using expressions"),
    ({"ProjectionExpression": "a, a.b"},
     "Invalid ProjectionExpression: Two document paths overlap with each other; must remove or rewrite one of "
     "these paths; path one: [a], path two: [a, b]"),
    ({"ProjectionExpression": "a", "AttributesToGet": ["a"]},
     "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: "
     "{AttributesToGet} Expression parameters: {ProjectionExpression}"),
])
def test_bad_projection_requests_are_rejected(client, params, message):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, **params)
    assert error_of(e) == ("ValidationException", message)


def test_projection_syntax_errors_name_the_token(client):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="a,,b")
    code, message = error_of(e)
    assert code == "ValidationException"
    assert message.startswith('Invalid ProjectionExpression: Syntax error; token: ","')


def test_table_arn_works_as_table_name(client):
    db = ddb(client)
    arn = make_table(db)["TableArn"]
    db.put_item(TableName=arn, Item={"pk": {"S": "a"}})
    assert db.get_item(TableName=arn, Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    assert db.describe_table(TableName=arn)["Table"]["TableName"] == "tbl"


# ---------------------------------------------------------------- resource API and CLI


def test_resource_api_round_trips_python_values_with_decimals(server):
    resource = boto3.resource("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
    table = resource.create_table(
        TableName="people",
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    table.wait_until_exists()
    assert table.table_status == "ACTIVE"
    item = {"id": "u1", "age": Decimal("42"), "score": Decimal("3.14159"), "tags": {"a", "b"},
            "nested": {"list": [Decimal("1"), "two", None, True]}, "raw": b"\x00bytes"}
    table.put_item(Item=item)
    got = table.get_item(Key={"id": "u1"})["Item"]
    assert got["age"] == Decimal("42") and got["score"] == Decimal("3.14159")
    assert got["tags"] == {"a", "b"}
    assert got["nested"] == {"list": [Decimal("1"), "two", None, True]}
    assert got["raw"].value == b"\x00bytes"
    table.delete_item(Key={"id": "u1"})
    assert "Item" not in table.get_item(Key={"id": "u1"})
    table.delete()
    table.wait_until_not_exists()


def test_cli_creates_puts_gets_lists_and_deletes(aws):
    aws("dynamodb", "create-table", "--table-name", "cli",
        "--attribute-definitions", "AttributeName=pk,AttributeType=S",
        "--key-schema", "AttributeName=pk,KeyType=HASH", "--billing-mode", "PAY_PER_REQUEST")
    aws("dynamodb", "wait", "table-exists", "--table-name", "cli")
    aws("dynamodb", "put-item", "--table-name", "cli", "--item", '{"pk": {"S": "a"}, "n": {"N": "007"}}')
    got = json.loads(aws("dynamodb", "get-item", "--table-name", "cli", "--key", '{"pk": {"S": "a"}}').stdout)
    assert got["Item"] == {"pk": {"S": "a"}, "n": {"N": "7"}}
    assert json.loads(aws("dynamodb", "list-tables").stdout)["TableNames"] == ["cli"]
    failed = aws("dynamodb", "describe-table", "--table-name", "missing", check=False)
    assert failed.returncode != 0
    assert "ResourceNotFoundException" in failed.stderr and "Table: missing not found" in failed.stderr
    aws("dynamodb", "delete-table", "--table-name", "cli")
    assert json.loads(aws("dynamodb", "list-tables").stdout)["TableNames"] == []


# ---------------------------------------------------------------- wire level


def test_every_response_carries_a_correct_crc32(server):
    cases = [
        ("CreateTable", {"TableName": "tbl", "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
                         "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}], "BillingMode": "PAY_PER_REQUEST"}),
        ("PutItem", {"TableName": "tbl", "Item": {"pk": {"S": "a"}}}),
        ("GetItem", {"TableName": "tbl", "Key": {"pk": {"S": "a"}}}),
        ("GetItem", {"TableName": "tbl", "Key": {"pk": {"N": "1"}}}),
        ("DescribeTable", {"TableName": "missing"}),
        ("ListTables", {}),
    ]
    for operation, body in cases:
        status, headers, data = raw(server, operation, body)
        crc = header(headers, "x-amz-crc32")
        assert crc is not None, operation
        assert int(crc) == zlib.crc32(data) & 0xFFFFFFFF, operation
    status, headers, data = raw(server, "GetItem", b"{not json")
    assert int(header(headers, "x-amz-crc32")) == binascii.crc32(data) & 0xFFFFFFFF


def test_malformed_json_is_a_serialization_exception(server):
    status, headers, data = raw(server, "PutItem", b'{"TableName": ')
    assert status == 400
    body = json.loads(data)
    assert body["__type"].endswith("#SerializationException")


def test_wrongly_typed_member_is_a_serialization_exception(server):
    status, _, data = raw(server, "DescribeTable", {"TableName": 5})
    assert status == 400 and json.loads(data)["__type"].endswith("#SerializationException")


def test_unknown_target_is_unknown_operation(server):
    status, _, data = raw(server, "Nope", {}, target=f"{TARGET}.Nope")
    assert status == 400
    assert json.loads(data)["__type"].endswith("#UnknownOperationException")


def test_missing_required_member_is_a_model_validation_error(server):
    status, _, data = raw(server, "GetItem", {"TableName": "tbl"})
    body = json.loads(data)
    assert status == 400 and body["__type"].endswith("#ValidationException")
    assert body["message"] == ("1 validation error detected: Value null at 'key' failed to satisfy constraint: "
                               "Member must not be null")


def test_boto3_verifies_crc32_on_every_call(client):
    # botocore raises on a wrong x-amz-crc32, so a full session of calls passing proves the header right.
    db = client("dynamodb", config=Config(retries={"max_attempts": 0}))
    make_table(db)
    for i in range(20):
        db.put_item(TableName="tbl", Item={"pk": {"S": f"k{i}"}, "v": {"S": "é" * i}})
        assert db.get_item(TableName="tbl", Key={"pk": {"S": f"k{i}"}})["Item"]["v"] == {"S": "é" * i}


# ---------------------------------------------------------------- tags and reserved words


def test_tags_from_create_table_can_be_listed_changed_and_removed(client):
    db = ddb(client)
    arn = make_table(db, Tags=[{"Key": "team", "Value": "core"}])["TableArn"]
    assert db.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "core"}]
    db.tag_resource(ResourceArn=arn, Tags=[{"Key": "team", "Value": "edge"}, {"Key": "env", "Value": "dev"}])
    assert db.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "team", "Value": "edge"},
                                                                 {"Key": "env", "Value": "dev"}]
    db.untag_resource(ResourceArn=arn, TagKeys=["team", "absent"])
    assert db.list_tags_of_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]


def test_tagging_a_missing_table_is_resource_not_found(client):
    db = ddb(client)
    arn = "arn:aws:dynamodb:us-east-1:000000000000:table/missing"
    for call in (lambda: db.list_tags_of_resource(ResourceArn=arn),
                 lambda: db.tag_resource(ResourceArn=arn, Tags=[{"Key": "k", "Value": "v"}]),
                 lambda: db.untag_resource(ResourceArn=arn, TagKeys=["k"])):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e) == ("ResourceNotFoundException", f"Requested resource not found: ResourcArn: {arn} not found")


def test_reserved_words_in_projections_need_placeholders(client):
    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item={"pk": {"S": "k"}, "name": {"S": "Ada"}, "status": {"S": "on"}})
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="name")
    assert error_of(e) == ("ValidationException",
                           "Invalid ProjectionExpression: Attribute name is a reserved keyword; reserved keyword: name")
    out = db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="#n, #s",
                      ExpressionAttributeNames={"#n": "name", "#s": "status"})
    assert out["Item"] == {"name": {"S": "Ada"}, "status": {"S": "on"}}


@pytest.mark.parametrize("params,message", [
    ({"ExpressionAttributeValues": {":v": {"S": "x"}}},
     "ExpressionAttributeValues can only be specified when using expressions"),
    ({"ExpressionAttributeNames": {"#n": "x"}},
     "ExpressionAttributeNames can only be specified when using expressions"),
    ({"ExpressionAttributeNames": {}}, "ExpressionAttributeNames must not be empty"),
])
def test_expression_maps_without_expressions_are_rejected(client, params, message):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, **params)
    assert error_of(e) == ("ValidationException", f"1 validation error detected: {message}")
    assert "Item" not in db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})


def test_provisioned_tables_need_throughput_on_every_global_index(client):
    with pytest.raises(ClientError) as e:
        ddb(client).create_table(
            TableName="tbl",
            AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "gpk")],
            KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
            ProvisionedThroughput={"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
            GlobalSecondaryIndexes=[{"IndexName": "by-gpk", "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                     "Projection": {"ProjectionType": "ALL"}}])
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values were invalid: ProvisionedThroughput is not specified for "
                           "index: by-gpk")


def test_consumed_capacity_with_indexes_counts_global_index_writes(client):
    db = ddb(client)
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": a, "AttributeType": "S"} for a in ("pk", "gpk")],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
        GlobalSecondaryIndexes=[{"IndexName": "by-gpk", "KeySchema": [{"AttributeName": "gpk", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}])
    out = db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "gpk": {"S": "g"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 2.0, "Table": {"CapacityUnits": 1.0},
                                       "GlobalSecondaryIndexes": {"by-gpk": {"CapacityUnits": 1.0}}}
    out = db.put_item(TableName="tbl", Item={"pk": {"S": "b"}}, ReturnConsumedCapacity="INDEXES")
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 1.0, "Table": {"CapacityUnits": 1.0}}


def test_key_values_over_the_size_limits_are_rejected(client):
    db = ddb(client)
    make_table(db, range_key="sk")
    db.put_item(TableName="tbl", Item={"pk": {"S": "h" * 2048}, "sk": {"S": "r" * 1024}})
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "h" * 2049}, "sk": {"S": "r"}})
    assert error_of(e) == ("ValidationException", "One or more parameter values were invalid: Size of hashkey has "
                                                  "exceeded the maximum size limit of2048 bytes")
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "h"}, "sk": {"S": "r" * 1025}})
    assert error_of(e) == ("ValidationException", "One or more parameter values were invalid: Aggregated size of "
                                                  "all range keys has exceeded the size limit of 1024 bytes")


def test_items_survive_a_restart_with_a_data_dir(tmp_path):
    from roto_server import RotoServer

    def connect(s):
        return boto3.client("dynamodb", endpoint_url=s.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test")

    with RotoServer("--data-dir", str(tmp_path)) as s:
        db = connect(s)
        make_table(db)
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "n": {"N": "1.50"}})
    with RotoServer("--data-dir", str(tmp_path)) as s:
        db = connect(s)
        assert db.get_item(TableName="tbl", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}, "n": {"N": "1.5"}}
        assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 1


def test_parallel_writers_lose_no_items(server):
    from concurrent.futures import ThreadPoolExecutor

    def connect():
        return boto3.client("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test")

    make_table(connect(), hash_type="N")

    def write(worker):
        db = connect()
        for i in range(25):
            db.put_item(TableName="tbl", Item={"pk": {"N": str(worker * 1000 + i)}})

    with ThreadPoolExecutor(16) as pool:
        list(pool.map(write, range(16)))
    db = connect()
    assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 16 * 25
    assert db.get_item(TableName="tbl", Key={"pk": {"N": "15024"}})["Item"] == {"pk": {"N": "15024"}}


@pytest.mark.parametrize("names,message", [
    ({"n": "name"}, 'ExpressionAttributeNames contains invalid key: Syntax error; key: "n"'),
    ({"#": "name"}, 'ExpressionAttributeNames contains invalid key: Syntax error; key: "#"'),
])
def test_placeholder_keys_must_be_well_formed(client, names, message):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as e:
        db.get_item(TableName="tbl", Key={"pk": {"S": "k"}}, ProjectionExpression="pk", ExpressionAttributeNames=names)
    assert error_of(e) == ("ValidationException", message)


def test_describe_limits_and_endpoints_answer_with_defaults(client):
    db = ddb(client)
    limits = db.describe_limits()
    assert limits["TableMaxReadCapacityUnits"] == 40000 and limits["AccountMaxWriteCapacityUnits"] == 80000
    endpoints = db.describe_endpoints()["Endpoints"]
    assert endpoints == [{"Address": "dynamodb.us-east-1.amazonaws.com", "CachePeriodInMinutes": 1440}]


def test_documents_nest_at_most_32_levels(client):
    def deep(levels):
        value = {"S": "leaf"}
        for _ in range(levels):
            value = {"M": {"n": value}}
        return value

    db = ddb(client)
    make_table(db)
    db.put_item(TableName="tbl", Item={"pk": {"S": "ok"}, "d": deep(31)})
    got = db.get_item(TableName="tbl", Key={"pk": {"S": "ok"}})["Item"]["d"]
    assert got == deep(31)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "deep"}, "d": deep(32)})
    code, message = error_of(e)
    assert code == "ValidationException"
    assert "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond " \
           "supported limit" in message


def test_a_disabled_stream_takes_no_view_type(client):
    with pytest.raises(ClientError) as e:
        make_table(ddb(client), StreamSpecification={"StreamEnabled": False, "StreamViewType": "NEW_IMAGE"})
    assert error_of(e) == ("ValidationException",
                           "One or more parameter values were invalid: Table is being created with a stream "
                           "disabled, UpdateViewType should not be specified")
    desc = make_table(ddb(client), StreamSpecification={"StreamEnabled": False})
    assert "StreamSpecification" not in desc and "LatestStreamArn" not in desc
