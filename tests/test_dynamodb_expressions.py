"""DynamoDB's expression language end to end: conditions, updates, projections, their errors."""

from __future__ import annotations

import json
from decimal import Decimal

import boto3
import pytest
from boto3.dynamodb.conditions import Attr
from botocore.exceptions import ClientError


def make_table(db, name="tbl"):
    db.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )


@pytest.fixture
def db(client):
    db = client("dynamodb")
    make_table(db)
    return db


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def key(pk="a"):
    return {"pk": {"S": pk}}


def put(db, **attrs):
    item = {"pk": {"S": "a"}}
    item.update(attrs)
    db.put_item(TableName="tbl", Item=item)


def get(db, pk="a"):
    return db.get_item(TableName="tbl", Key=key(pk), ConsistentRead=True).get("Item")


# ---------------------------------------------------------------- conditions on writes


def test_put_if_not_exists_succeeds_once_then_fails_the_condition(db):
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "1"}},
                ConditionExpression="attribute_not_exists(pk)")
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "2"}},
                    ConditionExpression="attribute_not_exists(pk)")
    assert error_of(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    assert "Item" not in e.value.response
    assert get(db)["v"] == {"N": "1"}


def test_failed_condition_returns_the_old_item_when_asked(db):
    put(db, v={"N": "1"})
    with pytest.raises(ClientError) as e:
        db.delete_item(TableName="tbl", Key=key(), ConditionExpression="v = :two",
                       ExpressionAttributeValues={":two": {"N": "2"}},
                       ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.value.response["Item"] == {"pk": {"S": "a"}, "v": {"N": "1"}}
    assert get(db) is not None


def test_delete_with_a_holding_condition_deletes(db):
    put(db, status={"S": "done"})
    out = db.delete_item(TableName="tbl", Key=key(), ConditionExpression="#s = :d",
                         ExpressionAttributeNames={"#s": "status"},
                         ExpressionAttributeValues={":d": {"S": "done"}}, ReturnValues="ALL_OLD")
    assert out["Attributes"]["status"] == {"S": "done"}
    assert get(db) is None


def test_condition_on_a_missing_item_sees_no_attributes(db):
    with pytest.raises(ClientError) as e:
        db.delete_item(TableName="tbl", Key=key(), ConditionExpression="attribute_exists(pk)")
    assert error_of(e)[0] == "ConditionalCheckFailedException"
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, ConditionExpression="v <> :x",
                ExpressionAttributeValues={":x": {"N": "1"}})


@pytest.mark.parametrize("expression,holds", [
    ("n > :five AND n < :twenty", True),
    ("n BETWEEN :five AND :ten", False),
    ("n IN (:five, :twelve)", True),
    ("begins_with(s, :he) OR n = :five", True),
    ("NOT contains(tags, :x)", False),
    ("contains(s, :ll) AND size(tags) = :two", True),
    ("attribute_type(m.deep, :type) AND m.deep[1] = :five", True),
    ("(n = :five OR n = :twelve) AND attribute_not_exists(gone)", True),
    ("n = :five OR n = :ten AND s = :he", False),
])
def test_conditions_evaluate_with_precedence(db, expression, holds):
    put(db, n={"N": "12.000"}, s={"S": "hello"}, tags={"SS": ["x", "y"]},
        m={"M": {"deep": {"L": [{"N": "1"}, {"N": "5"}]}}})
    values = {":five": {"N": "5"}, ":ten": {"N": "10"}, ":twelve": {"N": "12"}, ":twenty": {"N": "20"},
              ":he": {"S": "he"}, ":x": {"S": "x"}, ":ll": {"S": "ll"}, ":two": {"N": "2"},
              ":type": {"S": "L"}}
    used = {k: v for k, v in values.items() if k in expression}
    call = lambda: db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "n": {"N": "12"}, "s": {"S": "hello"},
                                                      "tags": {"SS": ["x", "y"]},
                                                      "m": {"M": {"deep": {"L": [{"N": "1"}, {"N": "5"}]}}}},
                               ConditionExpression=expression, ExpressionAttributeValues=used)
    if holds:
        call()
    else:
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e)[0] == "ConditionalCheckFailedException"


def test_numbers_compare_exactly_beyond_double_precision(db):
    put(db, n={"N": "12345678901234567890123456789012345678"})
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, ConditionExpression="n > :v",
                ExpressionAttributeValues={":v": {"N": "12345678901234567890123456789012345677"}})


@pytest.mark.parametrize("expression,names,values,message", [
    ("v = :x", None, {}, None),
    ("v = :missing", None, {":x": {"N": "1"}},
     "Invalid ConditionExpression: An expression attribute value used in expression is not defined; attribute value: :missing"),
    ("#v = :x", None, {":x": {"N": "1"}},
     "Invalid ConditionExpression: An expression attribute name used in the document path is not defined; attribute name: #v"),
    ("v = :x", {"#u": "u"}, {":x": {"N": "1"}},
     "Value provided in ExpressionAttributeNames unused in expressions: keys: {#u}"),
    ("v = :x", None, {":x": {"N": "1"}, ":y": {"N": "2"}},
     "Value provided in ExpressionAttributeValues unused in expressions: keys: {:y}"),
    ("size = :x", None, {":x": {"N": "1"}},
     "Invalid ConditionExpression: Attribute name is a reserved keyword; reserved keyword: size"),
    ("v = :x AND", None, {":x": {"N": "1"}},
     'Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "AND"'),
    ("v == :x", None, {":x": {"N": "1"}},
     'Invalid ConditionExpression: Syntax error; token: "=", near: "== :x"'),
    ("exists(v)", None, None, "Invalid ConditionExpression: Invalid function name; function: exists"),
    ("begins_with(v, :x)", None, {":x": {"N": "1"}},
     "Invalid ConditionExpression: Incorrect operand type for operator or function; operator or function: begins_with, operand type: N"),
    ("v BETWEEN :y AND :x", None, {":x": {"N": "1"}, ":y": {"N": "2"}},
     "Invalid ConditionExpression: The BETWEEN operator requires upper bound to be greater than or equal to lower bound; "
     "lower bound operand: AttributeValue: {N:2}, upper bound operand: AttributeValue: {N:1}"),
    ("v = :x", None, {":x": {"N": "1x"}},
     "ExpressionAttributeValues contains invalid value: The parameter cannot be converted to a numeric value: 1x for key :x"),
])
def test_condition_errors_carry_dynamodb_messages(db, expression, names, values, message):
    params = {"ConditionExpression": expression}
    if names:
        params["ExpressionAttributeNames"] = names
    if values is not None:
        params["ExpressionAttributeValues"] = values
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, **params)
    code, got = error_of(e)
    assert code == "ValidationException"
    if message is None:
        assert got == "1 validation error detected: ExpressionAttributeValues must not be empty"
    else:
        assert got == message
    assert get(db) is None


# ---------------------------------------------------------------- UpdateItem


def test_update_creates_the_item_and_returns_all_new(db):
    out = db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET n = :one, s = :s",
                         ExpressionAttributeValues={":one": {"N": "01.0"}, ":s": {"S": "x"}},
                         ReturnValues="ALL_NEW")
    assert out["Attributes"] == {"pk": {"S": "a"}, "n": {"N": "1"}, "s": {"S": "x"}}
    assert get(db) == out["Attributes"]


def test_update_without_expression_creates_a_key_only_item(db):
    out = db.update_item(TableName="tbl", Key=key(), ReturnValues="ALL_NEW")
    assert out["Attributes"] == {"pk": {"S": "a"}}
    assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 1


def test_counter_increments_exactly(db):
    for _ in range(3):
        db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET c = if_not_exists(c, :zero) + :inc",
                       ExpressionAttributeValues={":zero": {"N": "0"}, ":inc": {"N": "0.1"}})
    assert get(db)["c"] == {"N": "0.3"}
    out = db.update_item(TableName="tbl", Key=key(), UpdateExpression="ADD c :big",
                         ExpressionAttributeValues={":big": {"N": "99999999999999999999999999999999999"}},
                         ReturnValues="UPDATED_NEW")
    assert out["Attributes"] == {"c": {"N": "99999999999999999999999999999999999.3"}}


def test_return_values_updated_old_and_new_show_only_touched_paths(db):
    put(db, a={"N": "1"}, b={"M": {"x": {"S": "old"}, "y": {"S": "keep"}}}, c={"S": "gone"}, d={"S": "same"})
    params = dict(TableName="tbl", Key=key(), UpdateExpression="SET a = a + :one, b.x = :new REMOVE c",
                  ExpressionAttributeValues={":one": {"N": "1"}, ":new": {"S": "new"}})
    out = db.update_item(ReturnValues="UPDATED_OLD", **params)
    assert out["Attributes"] == {"a": {"N": "1"}, "b": {"M": {"x": {"S": "old"}}}, "c": {"S": "gone"}}
    out = db.update_item(ReturnValues="UPDATED_NEW", **params)
    assert out["Attributes"] == {"a": {"N": "3"}, "b": {"M": {"x": {"S": "new"}}}}
    out = db.update_item(ReturnValues="ALL_OLD", **params)
    assert out["Attributes"]["a"] == {"N": "3"} and "c" not in out["Attributes"]
    out = db.update_item(ReturnValues="NONE", **params)
    assert "Attributes" not in out


def test_sets_add_and_delete_members_and_vanish_when_empty(db):
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="ADD tags :t",
                   ExpressionAttributeValues={":t": {"SS": ["a", "b"]}})
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="ADD tags :t",
                   ExpressionAttributeValues={":t": {"SS": ["b", "c"]}})
    assert sorted(get(db)["tags"]["SS"]) == ["a", "b", "c"]
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="DELETE tags :t",
                   ExpressionAttributeValues={":t": {"SS": ["a", "b", "c", "z"]}})
    assert "tags" not in get(db)


def test_lists_append_index_and_remove(db):
    put(db, l={"L": [{"S": "x"}, {"S": "y"}, {"S": "z"}]})
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET l = list_append(l, :more)",
                   ExpressionAttributeValues={":more": {"L": [{"S": "w"}]}})
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET l[1] = :y2, l[99] = :end",
                   ExpressionAttributeValues={":y2": {"S": "Y"}, ":end": {"S": "end"}})
    assert get(db)["l"]["L"] == [{"S": "x"}, {"S": "Y"}, {"S": "z"}, {"S": "w"}, {"S": "end"}]
    db.update_item(TableName="tbl", Key=key(), UpdateExpression="REMOVE l[0], l[2]")
    assert get(db)["l"]["L"] == [{"S": "Y"}, {"S": "w"}, {"S": "end"}]


def test_update_condition_failure_leaves_the_item(db):
    put(db, v={"N": "1"})
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET v = :two",
                       ConditionExpression="v = :two", ExpressionAttributeValues={":two": {"N": "2"}},
                       ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(e)[0] == "ConditionalCheckFailedException"
    assert e.value.response["Item"]["v"] == {"N": "1"}
    assert get(db)["v"] == {"N": "1"}


@pytest.mark.parametrize("expression,values,message", [
    ("SET pk = :v", {":v": {"S": "b"}},
     "One or more parameter values were invalid: Cannot update attribute pk. This attribute is part of the key"),
    ("SET n = n + :v", {":v": {"N": "1"}},
     "The provided expression refers to an attribute that does not exist in the item"),
    ("SET s = s + :v", {":v": {"N": "1"}}, "An operand in the update expression has an incorrect data type"),
    ("SET m.x.y = :v", {":v": {"N": "1"}},
     "The document path provided in the update expression is invalid for update"),
    ("ADD s :v", {":v": {"S": "1"}},
     "Invalid UpdateExpression: Incorrect operand type for operator or function; operator: ADD, operand type: STRING"),
    ("ADD s :v", {":v": {"N": "1"}}, "An operand in the update expression has an incorrect data type"),
    ("SET a = :v REMOVE a", {":v": {"N": "1"}},
     "Invalid UpdateExpression: Two document paths overlap with each other; must remove or rewrite one of these "
     "paths; path one: [a], path two: [a]"),
    ("REMOVE a SET b = :v REMOVE c", {":v": {"N": "1"}},
     'Invalid UpdateExpression: The "REMOVE" section can only be used once in an update expression;'),
    ("SET a = size(s)", None,
     "Invalid UpdateExpression: The function is not allowed in an update expression; function: size"),
])
def test_update_errors_carry_dynamodb_messages(db, expression, values, message):
    put(db, s={"S": "text"}, m={"M": {}})
    params = {"UpdateExpression": expression}
    if values:
        params["ExpressionAttributeValues"] = values
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), **params)
    assert error_of(e) == ("ValidationException", message)
    assert get(db) == {"pk": {"S": "a"}, "s": {"S": "text"}, "m": {"M": {}}}


def test_arithmetic_past_the_number_range_overflows(db):
    put(db, a={"N": "9.9E+125"})
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET a = a + a")
    assert error_of(e) == ("ValidationException", "Number overflow. Attempting to store a number with magnitude "
                           "larger than supported range")


def test_update_that_grows_past_400kb_is_refused(db):
    put(db, big={"S": "x" * 300_000})
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), UpdateExpression="SET more = big")
    assert error_of(e) == ("ValidationException", "Item size to update has exceeded the maximum allowed size")


# ---------------------------------------------------------------- projections


def test_projection_selects_nested_paths_and_list_elements(db):
    put(db, m={"M": {"a": {"N": "1"}, "b": {"L": [{"S": "x"}, {"S": "y"}]}}}, other={"S": "no"})
    got = db.get_item(TableName="tbl", Key=key(), ProjectionExpression="m.b[1], #p",
                      ExpressionAttributeNames={"#p": "pk"})["Item"]
    assert got == {"pk": {"S": "a"}, "m": {"M": {"b": {"L": [{"S": "y"}]}}}}


# ---------------------------------------------------------------- resource API, CLI


def test_resource_api_conditions_and_updates(server):
    resource = boto3.resource("dynamodb", endpoint_url=server.endpoint, region_name="us-east-1",
                              aws_access_key_id="test", aws_secret_access_key="test")
    make_table(resource.meta.client, "things")
    table = resource.Table("things")
    table.put_item(Item={"pk": "a", "qty": 5, "tags": {"red"}})
    table.put_item(Item={"pk": "a", "qty": 6, "tags": {"red"}}, ConditionExpression=Attr("qty").lt(10)
                   & Attr("tags").contains("red"))
    with pytest.raises(ClientError) as e:
        table.put_item(Item={"pk": "a"}, ConditionExpression=Attr("qty").gt(10) | Attr("qty").not_exists())
    assert e.value.response["Error"]["Code"] == "ConditionalCheckFailedException"
    out = table.update_item(Key={"pk": "a"}, UpdateExpression="SET qty = qty - :d ADD tags :t",
                            ExpressionAttributeValues={":d": Decimal("1.5"), ":t": {"blue"}},
                            ReturnValues="ALL_NEW")["Attributes"]
    assert out == {"pk": "a", "qty": Decimal("4.5"), "tags": {"red", "blue"}}


def test_cli_update_item_with_condition(aws, client):
    make_table(client("dynamodb"), "cli")
    out = aws("dynamodb", "update-item", "--table-name", "cli", "--key", '{"pk": {"S": "a"}}',
              "--update-expression", "SET v = :v", "--condition-expression", "attribute_not_exists(pk)",
              "--expression-attribute-values", '{":v": {"N": "7"}}', "--return-values", "ALL_NEW")
    assert json.loads(out.stdout)["Attributes"] == {"pk": {"S": "a"}, "v": {"N": "7"}}
    failed = aws("dynamodb", "update-item", "--table-name", "cli", "--key", '{"pk": {"S": "a"}}',
                 "--update-expression", "SET v = :v", "--condition-expression", "attribute_not_exists(pk)",
                 "--expression-attribute-values", '{":v": {"N": "8"}}', check=False)
    assert failed.returncode != 0 and "ConditionalCheckFailedException" in failed.stderr
