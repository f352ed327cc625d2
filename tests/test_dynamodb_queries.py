"""DynamoDB Query and Scan: key order, conditions, pagination, filters, indexes, segments."""

from __future__ import annotations

import json

import boto3
import pytest
from boto3.dynamodb.conditions import Attr, Key
from botocore.exceptions import ClientError


@pytest.fixture
def db(client):
    db = client("dynamodb")
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"},
                                                                    {"AttributeName": "sk", "KeyType": "RANGE"}],
                                 "Projection": {"ProjectionType": "KEYS_ONLY"}}],
        LocalSecondaryIndexes=[{"IndexName": "byl", "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                                                   {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    return db


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def fill(db, pk="p", numbers=("-10", "2", "10", "1.5", "-0.5", "100")):
    for n in numbers:
        db.put_item(TableName="tbl", Item={"pk": {"S": pk}, "sk": {"N": n}, "v": {"S": f"v{n}"}})


def sks(out):
    return [i["sk"]["N"] for i in out["Items"]]


def q(db, expression, values, **kw):
    return db.query(TableName="tbl", KeyConditionExpression=expression, ExpressionAttributeValues=values, **kw)


def test_query_returns_numeric_sort_key_order_both_ways(db):
    fill(db)
    fill(db, pk="other", numbers=("5",))
    out = q(db, "pk = :p", {":p": {"S": "p"}})
    assert sks(out) == ["-10", "-0.5", "1.5", "2", "10", "100"]
    assert out["Count"] == out["ScannedCount"] == 6 and "LastEvaluatedKey" not in out
    out = q(db, "pk = :p", {":p": {"S": "p"}}, ScanIndexForward=False)
    assert sks(out) == ["100", "10", "2", "1.5", "-0.5", "-10"]


@pytest.mark.parametrize("condition,values,expected", [
    ("sk = :a", {":a": "2"}, ["2"]),
    ("sk < :a", {":a": "2"}, ["-10", "-0.5", "1.5"]),
    ("sk <= :a", {":a": "2"}, ["-10", "-0.5", "1.5", "2"]),
    ("sk > :a", {":a": "2"}, ["10", "100"]),
    ("sk >= :a", {":a": "2"}, ["2", "10", "100"]),
    ("sk BETWEEN :a AND :b", {":a": "-1", ":b": "10"}, ["-0.5", "1.5", "2", "10"]),
])
def test_sort_key_conditions_bound_the_range(db, condition, values, expected):
    fill(db)
    vals = {":p": {"S": "p"}, **{k: {"N": v} for k, v in values.items()}}
    assert sks(q(db, f"pk = :p AND {condition}", vals)) == expected
    assert sks(q(db, f"{condition} AND pk = :p", vals)) == expected


def test_begins_with_on_string_sort_keys_including_high_bytes(client):
    db = client("dynamodb")
    db.create_table(TableName="str", BillingMode="PAY_PER_REQUEST",
                    AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                          {"AttributeName": "sk", "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}])
    for sk in ["a", "ab", "abc", "abd", "b", "ab\u00ff", "ac"]:
        db.put_item(TableName="str", Item={"pk": {"S": "p"}, "sk": {"S": sk}})
    out = db.query(TableName="str", KeyConditionExpression="pk = :p AND begins_with(sk, :ab)",
                   ExpressionAttributeValues={":p": {"S": "p"}, ":ab": {"S": "ab"}})
    assert [i["sk"]["S"] for i in out["Items"]] == ["ab", "abc", "abd", "ab\u00ff"]


def test_limit_and_exclusive_start_key_page_through_in_order(db):
    fill(db)
    seen, start, pages = [], None, 0
    while True:
        kw = {"Limit": 4}
        if start:
            kw["ExclusiveStartKey"] = start
        out = q(db, "pk = :p", {":p": {"S": "p"}}, ScanIndexForward=False, **kw)
        seen += sks(out)
        pages += 1
        start = out.get("LastEvaluatedKey")
        if not start:
            break
    assert seen == ["100", "10", "2", "1.5", "-0.5", "-10"] and pages == 2
    out = q(db, "pk = :p", {":p": {"S": "p"}}, Limit=2)
    assert out["LastEvaluatedKey"] == {"pk": {"S": "p"}, "sk": {"N": "-0.5"}}


def test_filter_counts_after_reading_and_select_count(db):
    fill(db)
    out = q(db, "pk = :p", {":p": {"S": "p"}, ":v": {"S": "v2"}}, FilterExpression="v = :v")
    assert out["Count"] == 1 and out["ScannedCount"] == 6 and sks(out) == ["2"]
    out = q(db, "pk = :p", {":p": {"S": "p"}}, Select="COUNT")
    assert out["Count"] == 6 and "Items" not in out
    out = q(db, "pk = :p", {":p": {"S": "p"}}, ProjectionExpression="sk", Limit=1)
    assert out["Items"] == [{"sk": {"N": "-10"}}]


@pytest.mark.parametrize("expression,values,message", [
    ("sk = :n", {":n": {"N": "1"}}, "Query condition missed key schema element: pk"),
    ("pk = :p OR sk = :n", {":p": {"S": "p"}, ":n": {"N": "1"}}, "Query key condition not supported"),
    ("pk = :n", {":n": {"N": "1"}},
     "One or more parameter values were invalid: Condition parameter type does not match schema type"),
    ("pk = :p AND v = :p", {":p": {"S": "p"}}, "Query condition missed key schema element: v"),
    ("pk <> :p", {":p": {"S": "p"}}, "Query key condition not supported"),
])
def test_bad_key_conditions_are_refused(db, expression, values, message):
    with pytest.raises(ClientError) as e:
        q(db, expression, values)
    assert error_of(e) == ("ValidationException", message)


def test_query_filter_on_a_key_attribute_is_refused(db):
    with pytest.raises(ClientError) as e:
        q(db, "pk = :p", {":p": {"S": "p"}, ":n": {"N": "1"}}, FilterExpression="sk > :n")
    assert error_of(e) == ("ValidationException",
                           "Filter Expression can only contain non-primary key attributes: Primary key attribute: sk")


def test_global_index_is_maintained_on_every_write(db):
    for i, g in enumerate(["x", "y", "x", None]):
        item = {"pk": {"S": f"p{i}"}, "sk": {"N": str(i)}, "extra": {"S": "e"}}
        if g:
            item["g"] = {"S": g}
        db.put_item(TableName="tbl", Item=item)
    out = db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "x"}})
    assert out["Items"] == [{"pk": {"S": "p0"}, "sk": {"N": "0"}, "g": {"S": "x"}},
                            {"pk": {"S": "p2"}, "sk": {"N": "2"}, "g": {"S": "x"}}]
    db.update_item(TableName="tbl", Key={"pk": {"S": "p0"}, "sk": {"N": "0"}}, UpdateExpression="SET g = :y",
                   ExpressionAttributeValues={":y": {"S": "y"}})
    db.delete_item(TableName="tbl", Key={"pk": {"S": "p2"}, "sk": {"N": "2"}})
    out = db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "x"}})
    assert out["Items"] == []
    out = db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "y"}}, Limit=1)
    assert [i["pk"]["S"] for i in out["Items"]] == ["p0"]
    assert out["LastEvaluatedKey"] == {"pk": {"S": "p0"}, "sk": {"N": "0"}, "g": {"S": "y"}}
    out = db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g",
                   ExpressionAttributeValues={":g": {"S": "y"}}, ExclusiveStartKey=out["LastEvaluatedKey"])
    assert [i["pk"]["S"] for i in out["Items"]] == ["p1"]
    assert db.scan(TableName="tbl", IndexName="byg")["Count"] == 2
    with pytest.raises(ClientError) as e:
        db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g", ConsistentRead=True,
                 ExpressionAttributeValues={":g": {"S": "y"}})
    assert error_of(e) == ("ValidationException", "Consistent reads are not supported on global secondary indexes")
    with pytest.raises(ClientError) as e:
        db.scan(TableName="tbl", IndexName="nope")
    assert error_of(e) == ("ValidationException", "The table does not have the specified index: nope")


def test_local_index_orders_by_its_sort_key_with_all_attributes(db):
    for sk, l in [("1", "c"), ("2", "a"), ("3", "b")]:
        db.put_item(TableName="tbl", Item={"pk": {"S": "p"}, "sk": {"N": sk}, "l": {"S": l}, "x": {"S": "y"}})
    out = db.query(TableName="tbl", IndexName="byl", KeyConditionExpression="pk = :p AND l > :a",
                   ExpressionAttributeValues={":p": {"S": "p"}, ":a": {"S": "a"}})
    assert [(i["l"]["S"], i["x"]["S"]) for i in out["Items"]] == [("b", "y"), ("c", "y")]


def test_parallel_scan_segments_partition_the_table(db):
    for i in range(40):
        db.put_item(TableName="tbl", Item={"pk": {"S": f"k{i}"}, "sk": {"N": "1"}})
    seen = []
    for segment in range(3):
        out = db.scan(TableName="tbl", Segment=segment, TotalSegments=3)
        seen += [i["pk"]["S"] for i in out["Items"]]
    assert sorted(seen) == sorted(f"k{i}" for i in range(40))
    with pytest.raises(ClientError) as e:
        db.scan(TableName="tbl", Segment=3, TotalSegments=3)
    assert error_of(e) == ("ValidationException", "The Segment parameter is zero-based and must be less than "
                           "parameter TotalSegments: Segment: 3 is not less than TotalSegments: 3")


def test_scan_pages_at_one_megabyte(db):
    big = "x" * 100_000
    for i in range(15):
        db.put_item(TableName="tbl", Item={"pk": {"S": f"k{i:02}"}, "sk": {"N": "1"}, "b": {"S": big}})
    out = db.scan(TableName="tbl")
    assert 0 < out["Count"] < 15 and "LastEvaluatedKey" in out
    rest = db.scan(TableName="tbl", ExclusiveStartKey=out["LastEvaluatedKey"])
    assert out["Count"] + rest["Count"] == 15 and "LastEvaluatedKey" not in rest


def test_scan_filter_and_paginator(db):
    for i in range(10):
        db.put_item(TableName="tbl", Item={"pk": {"S": f"k{i}"}, "sk": {"N": str(i)}, "even": {"BOOL": i % 2 == 0}})
    pages = db.get_paginator("scan").paginate(TableName="tbl", FilterExpression="even = :t",
                                              ExpressionAttributeValues={":t": {"BOOL": True}},
                                              PaginationConfig={"PageSize": 3})
    items = [i for page in pages for i in page["Items"]]
    assert sorted(int(i["sk"]["N"]) for i in items) == [0, 2, 4, 6, 8]


def test_resource_api_query_with_key_and_attr_conditions(server):
    resource = boto3.resource("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
    table = resource.create_table(
        TableName="res", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "user", "AttributeType": "S"},
                              {"AttributeName": "ts", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "user", "KeyType": "HASH"}, {"AttributeName": "ts", "KeyType": "RANGE"}])
    for ts in range(1, 8):
        table.put_item(Item={"user": "u", "ts": ts, "kind": "a" if ts % 2 else "b"})
    out = table.query(KeyConditionExpression=Key("user").eq("u") & Key("ts").between(2, 6),
                      FilterExpression=Attr("kind").eq("a"), ScanIndexForward=False)
    assert [int(i["ts"]) for i in out["Items"]] == [5, 3]
    assert table.scan(FilterExpression=Attr("ts").gte(7))["Items"][0]["ts"] == 7


def test_cli_query(aws, db):
    fill(db)
    out = aws("dynamodb", "query", "--table-name", "tbl", "--key-condition-expression", "pk = :p AND sk > :z",
              "--expression-attribute-values", '{":p": {"S": "p"}, ":z": {"N": "0"}}')
    assert [i["sk"]["N"] for i in json.loads(out.stdout)["Items"]] == ["1.5", "2", "10", "100"]
