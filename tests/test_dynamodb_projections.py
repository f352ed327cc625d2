"""DynamoDB's secondary-index projections: what KEYS_ONLY, INCLUDE and ALL indexes hold, what a
local index fetches from its table and a global one cannot, how Select agrees with a request's
projection and target, and CreateTable's and UpdateTable's projection checks, with DynamoDB's
messages."""

from __future__ import annotations

import uuid

import pytest
from botocore.exceptions import ClientError

INVALID = "One or more parameter values were invalid: "


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


@pytest.fixture
def db(client):
    return client("dynamodb")


def new_table(db, projection, lsi_projection=None, extra_gsis=()):
    name = "proj-" + uuid.uuid4().hex[:8]
    args = dict(
        TableName=name, BillingMode="PAY_PER_REQUEST",
        KeySchema=[{"AttributeName": "p", "KeyType": "HASH"}, {"AttributeName": "c", "KeyType": "RANGE"}],
        AttributeDefinitions=[{"AttributeName": n, "AttributeType": "S"} for n in ("p", "c", "x", "l")],
        GlobalSecondaryIndexes=[{"IndexName": "gsi", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                                 "Projection": projection}, *extra_gsis],
        LocalSecondaryIndexes=[{"IndexName": "lsi", "KeySchema": [{"AttributeName": "p", "KeyType": "HASH"},
                                                                  {"AttributeName": "l", "KeyType": "RANGE"}],
                                "Projection": lsi_projection or {"ProjectionType": "KEYS_ONLY"}}],
    )
    db.create_table(**args)
    return name


ITEM = {"p": {"S": "P"}, "c": {"S": "C"}, "x": {"S": "X"}, "l": {"S": "L"}, "a": {"S": "A"}, "b": {"S": "B"}}


@pytest.fixture
def filled(db):
    def make(projection, lsi_projection=None):
        name = new_table(db, projection, lsi_projection)
        db.put_item(TableName=name, Item=ITEM)
        return name
    return make


def gsi_query(db, table, values=None, **kw):
    return db.query(TableName=table, IndexName="gsi", KeyConditionExpression="x = :x",
                    ExpressionAttributeValues={":x": {"S": "X"}, **(values or {})}, **kw)


def lsi_query(db, table, values=None, **kw):
    return db.query(TableName=table, IndexName="lsi", KeyConditionExpression="p = :p",
                    ExpressionAttributeValues={":p": {"S": "P"}, **(values or {})}, **kw)


def names(out):
    return [sorted(i) for i in out["Items"]]


def test_keys_only_and_include_indexes_hold_the_table_and_index_keys_and_what_they_include(db, filled):
    keys_only = filled({"ProjectionType": "KEYS_ONLY"})
    assert names(gsi_query(db, keys_only)) == [["c", "p", "x"]]
    assert names(db.scan(TableName=keys_only, IndexName="gsi")) == [["c", "p", "x"]]
    include = filled({"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "x"]})
    assert names(gsi_query(db, include)) == [["a", "c", "p", "x"]]
    assert names(gsi_query(db, include, Select="ALL_PROJECTED_ATTRIBUTES")) == [["a", "c", "p", "x"]]
    every = filled({"ProjectionType": "ALL"})
    assert names(gsi_query(db, every, Select="ALL_ATTRIBUTES")) == [sorted(ITEM)]


@pytest.mark.parametrize("read", ["query", "scan"])
@pytest.mark.parametrize("projection", [{"ProjectionType": "KEYS_ONLY"},
                                        {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a"]}])
def test_all_attributes_from_a_global_index_that_projects_less_is_refused(db, filled, read, projection):
    table = filled(projection)
    call = gsi_query if read == "query" else (lambda d, t, **kw: d.scan(TableName=t, IndexName="gsi", **kw))
    with pytest.raises(ClientError) as e:
        call(db, table, Select="ALL_ATTRIBUTES")
    assert error_of(e) == ("ValidationException", INVALID + "Select type ALL_ATTRIBUTES is not supported for "
                           "global secondary index gsi because its projection type is not ALL")


def test_a_global_index_never_fetches_from_the_table(db, filled):
    table = filled({"ProjectionType": "KEYS_ONLY"})
    assert names(gsi_query(db, table, ProjectionExpression="a, p")) == [["p"]]
    assert gsi_query(db, table, FilterExpression="a = :a", values={":a": {"S": "A"}})["Count"] == 0


def test_a_local_index_fetches_what_it_does_not_project_from_the_table(db, filled):
    table = filled({"ProjectionType": "ALL"})
    assert names(lsi_query(db, table)) == [["c", "l", "p"]]
    assert names(lsi_query(db, table, Select="ALL_ATTRIBUTES")) == [sorted(ITEM)]
    assert names(lsi_query(db, table, ProjectionExpression="b")) == [["b"]]
    assert names(db.scan(TableName=table, IndexName="lsi", ProjectionExpression="a, l")) == [["a", "l"]]
    out = lsi_query(db, table, FilterExpression="a = :a", values={":a": {"S": "A"}})
    assert names(out) == [["c", "l", "p"]]


@pytest.mark.parametrize("read, prefix", [("query", "1 validation error detected: "), ("scan", "")])
def test_select_must_agree_with_the_projection_and_the_target(db, filled, read, prefix):
    table = filled({"ProjectionType": "ALL"})

    def call(**kw):
        if read == "query":
            return db.query(TableName=table, KeyConditionExpression="p = :p",
                            ExpressionAttributeValues={":p": {"S": "P"}}, **kw)
        return db.scan(TableName=table, **kw)

    cases = [
        (dict(Select="SPECIFIC_ATTRIBUTES"),
         "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"),
        (dict(Select="ALL_PROJECTED_ATTRIBUTES"),
         "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"),
        (dict(Select="COUNT", ProjectionExpression="p"),
         "Cannot specify the ProjectionExpression when choosing to get only the Count"),
        (dict(Select="ALL_ATTRIBUTES", ProjectionExpression="p"),
         "Cannot specify the ProjectionExpression when choosing to get ALL_ATTRIBUTES"),
        (dict(Select="ALL_PROJECTED_ATTRIBUTES", IndexName="gsi", ProjectionExpression="p"),
         "Cannot specify the ProjectionExpression when choosing to get ALL_PROJECTED_ATTRIBUTES"),
    ]
    for kw, message in cases:
        if read == "query" and "IndexName" in kw:
            continue
        with pytest.raises(ClientError) as e:
            call(**kw)
        assert error_of(e) == ("ValidationException", prefix + message), kw
    assert call(Select="SPECIFIC_ATTRIBUTES", ProjectionExpression="a")["Items"] == [{"a": {"S": "A"}}]


def create_error(db, projection):
    with pytest.raises(ClientError) as e:
        new_table(db, projection)
    return error_of(e)


def test_create_table_checks_each_projection(db):
    assert create_error(db, {"ProjectionType": "INCLUDE"}) == (
        "ValidationException", INVALID + "ProjectionType is INCLUDE, but NonKeyAttributes is not specified")
    assert create_error(db, {"ProjectionType": "KEYS_ONLY", "NonKeyAttributes": ["a"]}) == (
        "ValidationException", INVALID + "ProjectionType is KEYS_ONLY, but NonKeyAttributes is specified")
    code, message = create_error(db, {"ProjectionType": "INCLUDE", "NonKeyAttributes": ["a", "b", "a"]})
    assert code == "ValidationException" and message.startswith(INVALID + "Duplicate") and message.endswith(": a")
    assert create_error(db, {}) == ("ValidationException", INVALID + "Unknown ProjectionType: null")


def test_indexes_together_project_at_most_100_non_key_attributes(db):
    def include(i, count):
        return {"IndexName": f"more{i}", "KeySchema": [{"AttributeName": "x", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "INCLUDE", "NonKeyAttributes": [f"n{k}" for k in range(count)]}}

    twenty = {"ProjectionType": "INCLUDE", "NonKeyAttributes": [f"n{k}" for k in range(20)]}
    table = new_table(db, twenty, extra_gsis=[include(i, 20) for i in range(4)])
    with pytest.raises(ClientError) as e:
        new_table(db, twenty, extra_gsis=[include(i, 20) for i in range(4)] + [include(9, 1)])
    assert error_of(e) == ("ValidationException",
                           INVALID + "Number of projected attributes in all indexes exceeds limit of 100, provided: 101")
    with pytest.raises(ClientError) as e:
        db.update_table(TableName=table, AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "S"}],
                        GlobalSecondaryIndexUpdates=[{"Create": include(7, 1)}])
    assert error_of(e) == ("ValidationException",
                           INVALID + "Number of projected attributes in all indexes exceeds limit of 100, provided: 101")
