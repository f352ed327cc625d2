"""DynamoDB's legacy (pre-expression) parameters: Expected, AttributeUpdates, KeyConditions,
QueryFilter, ScanFilter, AttributesToGet, and their errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def db(client):
    db = client("dynamodb")
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return db


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def key(pk="a", sk="1"):
    return {"pk": {"S": pk}, "sk": {"N": sk}}


def item(pk="a", sk="1", **attrs):
    out = key(pk, sk)
    out.update(attrs)
    return out


def get(db, pk="a", sk="1"):
    return db.get_item(TableName="tbl", Key=key(pk, sk), ConsistentRead=True).get("Item")


def fill(db):
    for sk, colour, size in [("1", "red", "3"), ("2", "blue", "5"), ("3", "red", "8"), ("4", "green", "13")]:
        db.put_item(TableName="tbl", Item=item("p", sk, colour={"S": colour}, size={"N": size}))


# ---------------------------------------------------------------- Expected on writes


def test_put_with_expected_exists_false_writes_once_then_fails(db):
    expected = {"pk": {"Exists": False}}
    db.put_item(TableName="tbl", Item=item(v={"N": "1"}), Expected=expected)
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item(v={"N": "2"}), Expected=expected)
    assert error_of(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert get(db)["v"] == {"N": "1"}


def test_expected_value_compares_equal(db):
    db.put_item(TableName="tbl", Item=item(state={"S": "new"}))
    db.put_item(TableName="tbl", Item=item(state={"S": "done"}), Expected={"state": {"Value": {"S": "new"}}})
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item(state={"S": "again"}),
                    Expected={"state": {"Exists": True, "Value": {"S": "new"}}})
    assert error_of(e)[0] == "ConditionalCheckFailedException"
    assert get(db)["state"] == {"S": "done"}


@pytest.mark.parametrize("operator,values,holds", [
    ("EQ", [{"N": "5"}], True),
    ("NE", [{"N": "5"}], False),
    ("LT", [{"N": "10"}], True),
    ("LE", [{"N": "5"}], True),
    ("GT", [{"N": "5"}], False),
    ("GE", [{"N": "5"}], True),
    ("BETWEEN", [{"N": "1"}, {"N": "5"}], True),
    ("IN", [{"N": "1"}, {"N": "2"}], False),
    ("NOT_NULL", [], True),
    ("NULL", [], False),
])
def test_expected_comparison_operators(db, operator, values, holds):
    db.put_item(TableName="tbl", Item=item(n={"N": "5"}))
    expected = {"n": {"ComparisonOperator": operator, "AttributeValueList": values}}
    if holds:
        db.delete_item(TableName="tbl", Key=key(), Expected=expected)
        assert get(db) is None
    else:
        with pytest.raises(ClientError) as e:
            db.delete_item(TableName="tbl", Key=key(), Expected=expected)
        assert error_of(e)[0] == "ConditionalCheckFailedException"
        assert get(db) is not None


def test_expected_string_operators_and_conditional_operator(db):
    db.put_item(TableName="tbl", Item=item(name={"S": "widget"}, tags={"SS": ["x", "y"]}))
    both = {"name": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"S": "wid"}]},
            "tags": {"ComparisonOperator": "CONTAINS", "AttributeValueList": [{"S": "z"}]}}
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), AttributeUpdates={"v": {"Value": {"N": "1"}}}, Expected=both)
    assert error_of(e)[0] == "ConditionalCheckFailedException"
    db.update_item(TableName="tbl", Key=key(), AttributeUpdates={"v": {"Value": {"N": "1"}}}, Expected=both,
                   ConditionalOperator="OR")
    assert get(db)["v"] == {"N": "1"}
    db.update_item(TableName="tbl", Key=key(), AttributeUpdates={"v": {"Value": {"N": "2"}}},
                   Expected={"tags": {"ComparisonOperator": "NOT_CONTAINS", "AttributeValueList": [{"S": "z"}]}})
    assert get(db)["v"] == {"N": "2"}


def test_failed_expected_returns_the_old_item_when_asked(db):
    db.put_item(TableName="tbl", Item=item(n={"N": "1"}))
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item(), Expected={"n": {"Value": {"N": "2"}}},
                    ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert e.value.response["Item"] == item(n={"N": "1"})


@pytest.mark.parametrize("expected,message", [
    ({"a": {"ComparisonOperator": "EQ"}},
     "Value or AttributeValueList must be used with ComparisonOperator: EQ for Attribute: a"),
    ({"a": {"ComparisonOperator": "EQ", "AttributeValueList": []}},
     "Invalid number of argument(s) for the EQ ComparisonOperator"),
    ({"a": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "x"}, {"S": "y"}]}},
     "Invalid number of argument(s) for the EQ ComparisonOperator"),
    ({"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "1"}]}},
     "Invalid number of argument(s) for the BETWEEN ComparisonOperator"),
    ({"a": {"ComparisonOperator": "NULL", "AttributeValueList": [{"N": "1"}]}},
     "Invalid number of argument(s) for the NULL ComparisonOperator"),
    ({"a": {"ComparisonOperator": "GT", "AttributeValueList": [{"SS": ["x"]}]}},
     "ComparisonOperator GT is not valid for SS AttributeValue type"),
    ({"a": {"ComparisonOperator": "BEGINS_WITH", "AttributeValueList": [{"N": "1"}]}},
     "ComparisonOperator BEGINS_WITH is not valid for N AttributeValue type"),
    ({"a": {"ComparisonOperator": "IN", "AttributeValueList": [{"S": "x"}, {"N": "1"}]}},
     "AttributeValues inside AttributeValueList must be of same type"),
    ({"a": {"Exists": True}}, "Value must be provided when Exists is true for Attribute: a"),
    ({"a": {}}, "Value must be provided when Exists is null for Attribute: a"),
    ({"a": {"Exists": False, "Value": {"S": "x"}}}, "Value cannot be used when Exists is false for Attribute: a"),
    ({"a": {"Exists": True, "ComparisonOperator": "NULL"}},
     "Exists and ComparisonOperator cannot be used together for Attribute: a"),
    ({"a": {"Value": {"S": "x"}, "AttributeValueList": [{"S": "x"}], "ComparisonOperator": "EQ"}},
     "Value and AttributeValueList cannot be used together for Attribute: a"),
    ({"a": {"AttributeValueList": [{"S": "x"}]}},
     "AttributeValueList can only be used with a ComparisonOperator for Attribute: a"),
])
def test_bad_expected_is_refused_before_writing(db, expected, message):
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item(), Expected=expected)
    assert error_of(e) == ("ValidationException", "One or more parameter values were invalid: " + message)
    assert get(db) is None


def test_between_bounds_out_of_order_are_refused(db):
    with pytest.raises(ClientError) as e:
        db.put_item(TableName="tbl", Item=item(),
                    Expected={"a": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "9"}, {"N": "1"}]}})
    assert error_of(e) == ("ValidationException",
                           "The BETWEEN condition was provided a range where the lower bound is greater than the "
                           "upper bound")


@pytest.mark.parametrize("call,params,non_expression,expression", [
    ("put_item", {"Item": item(), "Expected": {"pk": {"Exists": False}},
                  "ConditionExpression": "attribute_not_exists(pk)"}, "Expected", "ConditionExpression"),
    ("delete_item", {"Key": key(), "Expected": {"pk": {"Exists": False}},
                     "ConditionExpression": "attribute_not_exists(pk)"}, "Expected", "ConditionExpression"),
    ("update_item", {"Key": key(), "AttributeUpdates": {"v": {"Value": {"N": "1"}}}, "UpdateExpression": "SET w = :w",
                     "ExpressionAttributeValues": {":w": {"N": "1"}}}, "AttributeUpdates", "UpdateExpression"),
    ("update_item", {"Key": key(), "AttributeUpdates": {"v": {"Value": {"N": "1"}}},
                     "Expected": {"v": {"Exists": False}}, "UpdateExpression": "SET w = :w",
                     "ConditionExpression": "attribute_not_exists(w)", "ExpressionAttributeValues": {":w": {"N": "1"}}},
     "AttributeUpdates, Expected", "UpdateExpression, ConditionExpression"),
    ("get_item", {"Key": key(), "AttributesToGet": ["v"], "ProjectionExpression": "v"},
     "AttributesToGet", "ProjectionExpression"),
    ("scan", {"ScanFilter": {"v": {"ComparisonOperator": "NOT_NULL"}}, "FilterExpression": "attribute_exists(v)"},
     "ScanFilter", "FilterExpression"),
    ("query", {"KeyConditions": {"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "a"}]}},
               "KeyConditionExpression": "pk = :p", "QueryFilter": {"v": {"ComparisonOperator": "NOT_NULL"}},
               "ExpressionAttributeValues": {":p": {"S": "a"}}},
     "QueryFilter, KeyConditions", "KeyConditionExpression"),
])
def test_mixing_expression_and_legacy_parameters_is_refused(db, call, params, non_expression, expression):
    with pytest.raises(ClientError) as e:
        getattr(db, call)(TableName="tbl", **params)
    assert error_of(e) == ("ValidationException",
                           "Can not use both expression and non-expression parameters in the same request: "
                           f"Non-expression parameters: {{{non_expression}}} Expression parameters: {{{expression}}}")
    assert get(db) is None


def test_key_conditions_with_a_filter_expression_is_allowed(db):
    fill(db)
    out = db.query(TableName="tbl", KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}},
                   FilterExpression="colour = :c", ExpressionAttributeValues={":c": {"S": "red"}})
    assert [i["sk"]["N"] for i in out["Items"]] == ["1", "3"]


# ---------------------------------------------------------------- AttributeUpdates


def test_attribute_updates_put_add_and_delete(db):
    db.put_item(TableName="tbl", Item=item(n={"N": "1"}, tags={"SS": ["a", "b"]}, gone={"S": "x"},
                                           lst={"L": [{"S": "x"}]}))
    out = db.update_item(TableName="tbl", Key=key(), ReturnValues="UPDATED_NEW", AttributeUpdates={
        "n": {"Action": "ADD", "Value": {"N": "2.5"}},
        "tags": {"Action": "DELETE", "Value": {"SS": ["a"]}},
        "gone": {"Action": "DELETE"},
        "name": {"Value": {"S": "widget"}},
        "lst": {"Action": "ADD", "Value": {"L": [{"S": "y"}]}},
        "fresh": {"Action": "ADD", "Value": {"NS": ["7"]}},
    })
    assert out["Attributes"] == {"n": {"N": "3.5"}, "tags": {"SS": ["b"]}, "name": {"S": "widget"},
                                 "lst": {"L": [{"S": "x"}, {"S": "y"}]}, "fresh": {"NS": ["7"]}}
    stored = get(db)
    assert "gone" not in stored and stored["n"] == {"N": "3.5"}


def test_attribute_updates_create_the_item_when_absent(db):
    db.update_item(TableName="tbl", Key=key("new"), AttributeUpdates={"count": {"Action": "ADD", "Value": {"N": "1"}}})
    assert get(db, "new") == item("new", count={"N": "1"})


@pytest.mark.parametrize("updates,message", [
    ({"v": {"Action": "PUT"}}, "One or more parameter values were invalid: "
     "Only DELETE action is allowed when no attribute value is specified"),
    ({"v": {"Action": "DELETE", "Value": {"S": "x"}}}, "One or more parameter values were invalid: "
     "DELETE action with value is not supported for the type S"),
    ({"v": {"Action": "ADD", "Value": {"BOOL": True}}}, "One or more parameter values were invalid: "
     "ADD action is not supported for the type BOOL"),
    ({"sk": {"Value": {"N": "9"}}}, "One or more parameter values were invalid: "
     "Cannot update attribute sk. This attribute is part of the key"),
])
def test_bad_attribute_updates_are_refused(db, updates, message):
    with pytest.raises(ClientError) as e:
        db.update_item(TableName="tbl", Key=key(), AttributeUpdates=updates)
    assert error_of(e) == ("ValidationException", message)
    assert get(db) is None


# ---------------------------------------------------------------- KeyConditions, QueryFilter, ScanFilter


def test_query_with_key_conditions_and_query_filter(db):
    fill(db)
    out = db.query(TableName="tbl", KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
        "sk": {"ComparisonOperator": "GE", "AttributeValueList": [{"N": "2"}]},
    }, QueryFilter={"colour": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "red"}]},
                    "size": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "10"}]}},
        ConditionalOperator="OR", ScanIndexForward=False)
    assert [i["sk"]["N"] for i in out["Items"]] == ["4", "3"]
    assert out["ScannedCount"] == 3


def test_query_key_conditions_between_and_begins_with(db):
    fill(db)
    out = db.query(TableName="tbl", KeyConditions={
        "pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
        "sk": {"ComparisonOperator": "BETWEEN", "AttributeValueList": [{"N": "2"}, {"N": "3"}]},
    }, AttributesToGet=["colour"])
    assert out["Items"] == [{"colour": {"S": "blue"}}, {"colour": {"S": "red"}}]


@pytest.mark.parametrize("conditions,message", [
    ({"pk": {"ComparisonOperator": "NE", "AttributeValueList": [{"S": "p"}]}},
     "Attempted conditional constraint is not an indexable operation"),
    ({"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]},
      "sk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]},
      "x": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}},
     "Conditions can be of length 1 or 2 only"),
    ({"sk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}},
     "Query condition missed key schema element: pk"),
    ({"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"N": "1"}]}},
     "One or more parameter values were invalid: Condition parameter type does not match schema type"),
    ({"pk": {"ComparisonOperator": "EQ", "AttributeValueList": []}},
     "One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator"),
])
def test_bad_key_conditions_are_refused(db, conditions, message):
    with pytest.raises(ClientError) as e:
        db.query(TableName="tbl", KeyConditions=conditions)
    assert error_of(e) == ("ValidationException", message)


def test_query_filter_on_a_key_attribute_is_refused(db):
    with pytest.raises(ClientError) as e:
        db.query(TableName="tbl", KeyConditions={"pk": {"ComparisonOperator": "EQ", "AttributeValueList": [{"S": "p"}]}},
                 QueryFilter={"sk": {"ComparisonOperator": "GT", "AttributeValueList": [{"N": "1"}]}})
    assert error_of(e) == ("ValidationException",
                           "QueryFilter can only contain non-primary key attributes: Primary key attribute: sk")


def test_scan_filter_with_attributes_to_get_and_count(db):
    fill(db)
    out = db.scan(TableName="tbl", ScanFilter={"colour": {"ComparisonOperator": "IN",
                                                          "AttributeValueList": [{"S": "red"}, {"S": "green"}]}},
                  AttributesToGet=["sk"])
    assert sorted(i["sk"]["N"] for i in out["Items"]) == ["1", "3", "4"]
    assert all(set(i) == {"sk"} for i in out["Items"])
    out = db.scan(TableName="tbl", ScanFilter={"size": {"ComparisonOperator": "LT", "AttributeValueList": [{"N": "6"}]}},
                  Select="COUNT")
    assert out["Count"] == 2 and "Items" not in out


def test_attributes_to_get_with_select_all_attributes_is_refused(db):
    with pytest.raises(ClientError) as e:
        db.scan(TableName="tbl", AttributesToGet=["sk"], Select="ALL_ATTRIBUTES")
    assert error_of(e) == ("ValidationException",
                           "Cannot specify the AttributesToGet when choosing to get ALL_ATTRIBUTES")


def test_batch_get_with_attributes_to_get(db):
    fill(db)
    out = db.batch_get_item(RequestItems={"tbl": {"Keys": [key("p", "1"), key("p", "2")],
                                                  "AttributesToGet": ["colour"]}})
    assert sorted(i["colour"]["S"] for i in out["Responses"]["tbl"]) == ["blue", "red"]
