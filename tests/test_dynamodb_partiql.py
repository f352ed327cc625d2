"""DynamoDB PartiQL: ExecuteStatement (SELECT, INSERT, UPDATE, DELETE), BatchExecuteStatement,
ExecuteTransaction, and their errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

MALFORMED = "Statement wasn't well formed, can't be processed: "


@pytest.fixture
def db(client):
    db = client("dynamodb")
    db.create_table(
        TableName="tbl",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        GlobalSecondaryIndexes=[{"IndexName": "byg", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    return db


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def run(db, statement, *parameters, **kw):
    if parameters:
        kw["Parameters"] = list(parameters)
    return db.execute_statement(Statement=statement, **kw)


def key(pk="p", sk="1"):
    return {"pk": {"S": pk}, "sk": {"N": sk}}


def get(db, pk="p", sk="1"):
    return db.get_item(TableName="tbl", Key=key(pk, sk), ConsistentRead=True).get("Item")


def fill(db):
    for sk, colour, g in [("1", "red", "x"), ("2", "blue", "y"), ("3", "red", "x"), ("4", "green", "y")]:
        db.put_item(TableName="tbl", Item={"pk": {"S": "p"}, "sk": {"N": sk}, "colour": {"S": colour},
                                           "g": {"S": g}, "info": {"M": {"rank": {"N": sk}, "tags": {"L": [
                                               {"S": "t" + sk}, {"S": "u"}]}}}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "q"}, "sk": {"N": "1"}, "colour": {"S": "red"}})


def sks(out):
    return [i["sk"]["N"] for i in out["Items"]]


# ---------------------------------------------------------------- SELECT


def test_select_by_partition_key_is_a_query_in_sort_key_order(db):
    fill(db)
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p'")
    assert sks(out) == ["1", "2", "3", "4"]
    assert out["Items"][0]["colour"] == {"S": "red"}
    out = run(db, 'SELECT * FROM "tbl" WHERE "pk" = ? AND sk > ? ORDER BY sk DESC', {"S": "p"}, {"N": "1"})
    assert sks(out) == ["4", "3", "2"]


def test_select_with_non_key_conditions_filters(db):
    fill(db)
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p' AND colour = 'red'")
    assert sks(out) == ["1", "3"]
    out = run(db, "SELECT * FROM tbl WHERE colour = 'red'")
    assert sorted((i["pk"]["S"], i["sk"]["N"]) for i in out["Items"]) == [("p", "1"), ("p", "3"), ("q", "1")]
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p' AND (sk = 1 OR sk = 4)")
    assert sks(out) == ["1", "4"]
    out = run(db, "SELECT * FROM tbl WHERE pk IN ['q'] OR colour = 'blue'")
    assert sorted(sks(out)) == ["1", "2"]
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p' AND sk BETWEEN 2 AND 3 AND NOT colour = 'blue'")
    assert sks(out) == ["3"]
    out = run(db, "SELECT * FROM tbl WHERE begins_with(colour, 'gr') AND info.rank >= 4 AND info IS NOT MISSING")
    assert sks(out) == ["4"]
    out = run(db, "SELECT * FROM tbl WHERE pk = 'q' AND info IS MISSING AND size(colour) = 3")
    assert sks(out) == ["1"]
    out = run(db, "SELECT * FROM tbl WHERE contains(info.tags, 'u') AND colour <> 'red' AND colour != 'blue'")
    assert sks(out) == ["4"]


def test_select_projects_names_and_nested_paths(db):
    fill(db)
    out = run(db, 'SELECT colour, info.tags[0], "sk" FROM tbl WHERE pk = \'p\' AND sk = 2')
    assert out["Items"] == [{"colour": {"S": "blue"}, "sk": {"N": "2"},
                             "info": {"M": {"tags": {"L": [{"S": "t2"}]}}}}]


def test_select_on_an_index(db):
    fill(db)
    out = run(db, 'SELECT sk FROM "tbl"."byg" WHERE g = \'y\'')
    assert sorted(sks(out)) == ["2", "4"]
    with pytest.raises(ClientError) as e:
        run(db, 'SELECT * FROM "tbl"."nope" WHERE g = \'y\'')
    assert error_of(e) == ("ValidationException", "The table does not have the specified index: nope")
    with pytest.raises(ClientError) as e:
        run(db, 'SELECT * FROM "tbl"."byg" WHERE g = \'y\'', ConsistentRead=True)
    assert error_of(e) == ("ValidationException", "Consistent reads are not supported on global secondary indexes")


def test_select_pages_with_limit_and_next_token(db):
    fill(db)
    seen = []
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p'", Limit=3)
    seen += sks(out)
    assert out["LastEvaluatedKey"] == key("p", "3")
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p'", Limit=3, NextToken=out["NextToken"])
    seen += sks(out)
    assert seen == ["1", "2", "3", "4"]
    assert "NextToken" not in out
    token = run(db, "SELECT * FROM tbl WHERE pk = 'p'", Limit=1)["NextToken"]
    with pytest.raises(ClientError) as e:
        run(db, "SELECT * FROM tbl WHERE pk = 'q'", NextToken=token)
    assert error_of(e) == ("ValidationException", "NextToken does not match request")
    with pytest.raises(ClientError) as e:
        run(db, "SELECT * FROM tbl WHERE pk = 'p'", NextToken="not-a-token")
    assert error_of(e) == ("ValidationException", "Invalid NextToken")


def test_select_reports_consumed_capacity(db):
    fill(db)
    out = run(db, "SELECT * FROM tbl WHERE pk = 'p'", ReturnConsumedCapacity="TOTAL", ConsistentRead=True)
    assert out["ConsumedCapacity"] == {"TableName": "tbl", "CapacityUnits": 1.0}


@pytest.mark.parametrize("statement,message", [
    ("SELECT * FROM tbl ORDER BY sk", "Must have WHERE clause in the statement when using ORDER BY clause."),
    ("SELECT * FROM tbl WHERE colour = 'red' ORDER BY sk",
     "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause."),
    ("SELECT * FROM tbl WHERE pk = 'p' ORDER BY colour",
     "Variable reference colour in ORDER BY clause must be part of the primary key"),
    ("SELECT *, colour FROM tbl", "Other attributes should not be present in the projection when '*' is used."),
    ("SELECT * FROM tbl WHERE pk = ?", "Number of parameters in request and statement don't match."),
    ("EXISTS(SELECT * FROM tbl WHERE pk = 'p' AND sk = 1)",
     "EXISTS can only be used in ExecuteTransaction write requests."),
    ("SELECT * FROM tbl WHERE", MALFORMED + "Unexpected end of statement"),
    ("SELECT * FROM tbl WHERE pk = 'p' sk", MALFORMED + "Unexpected token"),
    ("SELECT * FROM WHERE pk = 'p'", MALFORMED + "Unexpected keyword"),
    ("CREATE TABLE x", MALFORMED + "Expected data manipulation"),
    ("SELECT * FROM tbl WHERE pk = 'p", MALFORMED + "Unterminated string literal"),
    ("SELECT * FROM tbl WHERE nope(pk)", "Unrecognized function: nope"),
    ("SELECT * FROM x", "Table name should be within the length [3, 255] and only contain 'a-z', 'A-Z', '0-9', "
                        "'-', '_', '.'."),
])
def test_bad_selects_are_refused(db, statement, message):
    with pytest.raises(ClientError) as e:
        run(db, statement)
    assert error_of(e) == ("ValidationException", message)


def test_unknown_table_is_resource_not_found(db):
    for statement in ["SELECT * FROM nothere", "INSERT INTO nothere VALUE {'pk': 'a'}",
                      "DELETE FROM nothere WHERE pk = 'a'"]:
        with pytest.raises(ClientError) as e:
            run(db, statement)
        assert error_of(e) == ("ResourceNotFoundException", "Requested resource not found")


# ---------------------------------------------------------------- INSERT


def test_insert_writes_every_literal_type(db):
    out = run(db, "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 's': 'it''s', 'n': 01.50, 'b': TRUE, 'z': NULL, "
                  "'l': [1, 'x', [FALSE]], 'm': {'k': {'deep': -2}}, 'ss': <<'a', 'b'>>, 'ns': <<1, 2>>, "
                  "'bin': ?}", {"B": b"\x00\x01"})
    assert out["Items"] == []
    assert get(db) == {
        "pk": {"S": "p"}, "sk": {"N": "1"}, "s": {"S": "it's"}, "n": {"N": "1.5"}, "b": {"BOOL": True},
        "z": {"NULL": True}, "l": {"L": [{"N": "1"}, {"S": "x"}, {"L": [{"BOOL": False}]}]},
        "m": {"M": {"k": {"M": {"deep": {"N": "-2"}}}}}, "ss": {"SS": ["a", "b"]}, "ns": {"NS": ["1", "2"]},
        "bin": {"B": b"\x00\x01"},
    }


def test_insert_of_an_existing_key_is_a_duplicate(db):
    run(db, "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 'v': 1}")
    with pytest.raises(ClientError) as e:
        run(db, "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 'v': 2}")
    assert error_of(e) == ("DuplicateItemException", "Duplicate primary key exists in table")
    assert get(db)["v"] == {"N": "1"}


def test_insert_updates_indexes_like_put_item(db):
    run(db, "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 'g': 'z'}")
    assert sks(db.query(TableName="tbl", IndexName="byg", KeyConditionExpression="g = :g",
                        ExpressionAttributeValues={":g": {"S": "z"}})) == ["1"]


@pytest.mark.parametrize("statement,message", [
    ("INSERT INTO tbl VALUE {'pk': 'p'}", "One or more parameter values were invalid: Missing the key sk in the item"),
    ("INSERT INTO tbl VALUE {'pk': 'p', 'sk': 'one'}",
     "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S"),
    ("INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 'g': 5}",
     "One or more parameter values were invalid: Type mismatch for Index Key g Expected: S Actual: N IndexName: byg"),
    ("INSERT INTO tbl VALUE 'x'", "Unsupported format in item expression. Please use struct format {...} to "
                                  "express item values for insert statement."),
    ("INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 's': <<'a', 'a'>>}",
     "One or more parameter values were invalid: Input collection [\"a\", \"a\"] contains duplicates."),
    ("INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1, 's': <<>>}", "Empty bags are not supported"),
    ("INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1} RETURNING ALL OLD *", "RETURNING is not supported in INSERT"),
    ('INSERT INTO "tbl"."byg" VALUE {\'pk\': \'p\', \'sk\': 1}', "This operation is not supported on an index"),
])
def test_bad_inserts_are_refused(db, statement, message):
    with pytest.raises(ClientError) as e:
        run(db, statement)
    assert error_of(e) == ("ValidationException", message)
    assert get(db) is None


# ---------------------------------------------------------------- UPDATE


def test_update_sets_removes_and_returns(db):
    db.put_item(TableName="tbl", Item={**key(), "n": {"N": "1"}, "l": {"L": [{"N": "1"}]}, "gone": {"S": "x"},
                                       "ss": {"SS": ["a"]}, "m": {"M": {"x": {"N": "1"}}}})
    out = run(db, "UPDATE tbl SET n = n + ?, l = list_append(l, [2]) SET ss = set_add(ss, <<'b'>>) "
                  "SET m.y = 'new' REMOVE gone WHERE pk = 'p' AND sk = 1 RETURNING ALL NEW *", {"N": "4"})
    assert out["Items"] == [{**key(), "n": {"N": "5"}, "l": {"L": [{"N": "1"}, {"N": "2"}]},
                             "ss": {"SS": ["a", "b"]}, "m": {"M": {"x": {"N": "1"}, "y": {"S": "new"}}}}]
    out = run(db, "UPDATE tbl SET n = 9 SET ss = set_delete(ss, <<'a'>>) WHERE pk = 'p' AND sk = 1 "
                  "RETURNING MODIFIED OLD *")
    assert out["Items"] == [{"n": {"N": "5"}, "ss": {"SS": ["a", "b"]}}]
    assert get(db)["ss"] == {"SS": ["b"]}
    assert run(db, "UPDATE tbl SET n = 10 WHERE pk = 'p' AND sk = 1")["Items"] == []


def test_update_of_a_missing_item_fails_the_condition(db):
    with pytest.raises(ClientError) as e:
        run(db, "UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 1")
    assert error_of(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert get(db) is None


def test_update_where_beyond_the_key_is_a_condition(db):
    db.put_item(TableName="tbl", Item={**key(), "state": {"S": "new"}})
    with pytest.raises(ClientError) as e:
        run(db, "UPDATE tbl SET state = 'done' WHERE pk = 'p' AND sk = 1 AND state = 'old'",
            ReturnValuesOnConditionCheckFailure="ALL_OLD")
    assert error_of(e)[0] == "ConditionalCheckFailedException"
    assert e.value.response["Item"] == {**key(), "state": {"S": "new"}}
    run(db, "UPDATE tbl SET state = 'done' WHERE pk = 'p' AND sk = 1 AND state = 'new'")
    assert get(db)["state"] == {"S": "done"}


@pytest.mark.parametrize("statement,message", [
    ("UPDATE tbl SET v = 1 WHERE pk = 'p'", "Where clause does not contain a mandatory equality on all key attributes"),
    ("UPDATE tbl SET v = 1", "Where clause does not contain a mandatory equality on all key attributes"),
    ("UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk > 1",
     "Where clause does not contain a mandatory equality on all key attributes"),
    ("UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 1 AND sk = 2",
     "Multiple conditions on same key sk. Only single item Update/Insert/Delete are supported"),
    ("UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 'x'",
     "Key attribute's data type should match its data type in table's schema: Key sk"),
    ("UPDATE tbl SET sk = 2 WHERE pk = 'p' AND sk = 1",
     "One or more parameter values were invalid: Cannot update attribute sk. This attribute is part of the key"),
    ("UPDATE tbl SET s = set_add(t, <<'a'>>) WHERE pk = 'p' AND sk = 1",
     "The first argument to SET_ADD must equal the assignment value"),
    ("UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 1 RETURNING ALL OLD",
     "Expected '*' after ( MODIFIED | ALL ) ( NEW | OLD ) in RETURNING clause"),
    ("UPDATE tbl WHERE pk = 'p' AND sk = 1", MALFORMED + "Unexpected keyword"),
])
def test_bad_updates_are_refused(db, statement, message):
    db.put_item(TableName="tbl", Item=key())
    with pytest.raises(ClientError) as e:
        run(db, statement)
    assert error_of(e) == ("ValidationException", message)
    assert get(db) == key()


# ---------------------------------------------------------------- DELETE


def test_delete_removes_the_item_and_can_return_it(db):
    db.put_item(TableName="tbl", Item={**key(), "v": {"N": "1"}})
    out = run(db, "DELETE FROM tbl WHERE pk = 'p' AND sk = 1 RETURNING ALL OLD *")
    assert out["Items"] == [{**key(), "v": {"N": "1"}}]
    assert get(db) is None
    assert run(db, "DELETE FROM tbl WHERE pk = 'p' AND sk = 1 AND v = 1")["Items"] == []


def test_delete_condition_beyond_the_key(db):
    db.put_item(TableName="tbl", Item={**key(), "v": {"N": "1"}})
    with pytest.raises(ClientError) as e:
        run(db, "DELETE FROM tbl WHERE pk = 'p' AND sk = 1 AND v = 2")
    assert error_of(e) == ("ConditionalCheckFailedException", "The conditional request failed")
    assert get(db) is not None
    run(db, "DELETE FROM tbl WHERE pk = 'p' AND sk = 1 AND v = 1")
    assert get(db) is None


@pytest.mark.parametrize("statement,message", [
    ("DELETE FROM tbl WHERE pk = 'p'", "Where clause does not contain a mandatory equality on all key attributes"),
    ("DELETE FROM tbl WHERE pk = 'p' AND sk = 1 RETURNING ALL NEW *",
     "Invalid returning clause: RETURNING ALL NEW *. Only RETURNING ALL OLD * is allowed in DELETE statements."),
    ("DELETE FROM tbl WHERE pk = 'p' AND sk = [1]", "Key value must be of type S, N, or B. Key name: sk, Key type: L"),
])
def test_bad_deletes_are_refused(db, statement, message):
    with pytest.raises(ClientError) as e:
        run(db, statement)
    assert error_of(e) == ("ValidationException", message)


# ---------------------------------------------------------------- BatchExecuteStatement


def test_batch_writes_report_each_failure_without_failing_the_batch(db):
    db.put_item(TableName="tbl", Item=key("p", "2"))
    db.put_item(TableName="tbl", Item=key("p", "5"))
    out = db.batch_execute_statement(Statements=[
        {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1}"},
        {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 2}"},
        {"Statement": "UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 3"},
        {"Statement": "UPDATE tbl SET v = ? WHERE pk = ? AND sk = ?", "Parameters": [{"N": "7"}, {"S": "p"}, {"N": "5"}]},
        {"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 4"},
        {"Statement": "SELEKT nonsense"},
        {"Statement": "INSERT INTO nothere VALUE {'pk': 'x'}"},
    ])
    responses = out["Responses"]
    assert responses[0] == {"TableName": "tbl"}
    assert responses[1]["Error"] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert responses[2]["Error"] == {"Code": "ConditionalCheckFailed", "Message": "The conditional request failed"}
    assert responses[3] == {"TableName": "tbl"}
    assert responses[4] == {"TableName": "tbl"}
    assert responses[5]["Error"] == {"Code": "ValidationError", "Message": MALFORMED + "Expected data manipulation"}
    assert responses[6]["Error"] == {"Code": "ResourceNotFound", "Message": "Requested resource not found"}
    assert get(db, "p", "1") == key("p", "1")
    assert get(db, "p", "5")["v"] == {"N": "7"}


def test_batch_reads_get_single_items(db):
    fill(db)
    out = db.batch_execute_statement(Statements=[
        {"Statement": "SELECT colour FROM tbl WHERE pk = 'p' AND sk = 2"},
        {"Statement": "SELECT * FROM tbl WHERE pk = 'p' AND sk = 9", "ConsistentRead": True},
        {"Statement": "SELECT * FROM tbl WHERE pk = 'p' AND sk = 3 AND colour = 'blue'"},
        {"Statement": "SELECT * FROM tbl WHERE pk = 'p'"},
    ])
    responses = out["Responses"]
    assert responses[0] == {"TableName": "tbl", "Item": {"colour": {"S": "blue"}}}
    assert responses[1] == {"TableName": "tbl"}
    assert responses[2] == {"TableName": "tbl"}
    assert responses[3]["Error"] == {"Code": "ValidationError", "Message": "Where clause does not contain a "
                                     "mandatory equality on all key attributes"}


@pytest.mark.parametrize("statements,message", [
    ([{"Statement": "SELECT * FROM tbl WHERE pk = 'p' AND sk = 1"},
      {"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 2"}],
     "Read and write requests together in the same batch is not supported."),
    ([{"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 1"},
      {"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 1"}],
     "Provided list of item keys contains duplicates"),
])
def test_bad_batches_are_refused_whole(db, statements, message):
    db.put_item(TableName="tbl", Item=key())
    with pytest.raises(ClientError) as e:
        db.batch_execute_statement(Statements=statements)
    assert error_of(e) == ("ValidationException", message)
    assert get(db) == key()


def test_batch_of_more_than_25_is_refused(db):
    with pytest.raises(ClientError) as e:
        db.batch_execute_statement(Statements=[{"Statement": f"DELETE FROM tbl WHERE pk = 'p' AND sk = {i}"}
                                               for i in range(26)])
    code, message = error_of(e)
    assert code == "ValidationException" and "Member must have length less than or equal to 25" in message


# ---------------------------------------------------------------- ExecuteTransaction


def test_transaction_writes_all_or_nothing(db):
    db.put_item(TableName="tbl", Item=key("p", "2"))
    db.put_item(TableName="tbl", Item={**key("p", "3"), "v": {"N": "1"}})
    with pytest.raises(ClientError) as e:
        db.execute_transaction(TransactStatements=[
            {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1}"},
            {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 2}"},
            {"Statement": "UPDATE tbl SET v = 2 WHERE pk = 'p' AND sk = 3 AND v = 5",
             "ReturnValuesOnConditionCheckFailure": "ALL_OLD"},
        ])
    code, message = error_of(e)
    assert code == "TransactionCanceledException"
    assert message == ("Transaction cancelled, please refer cancellation reasons for specific reasons "
                       "[None, DuplicateItem, ConditionalCheckFailed]")
    reasons = e.value.response["CancellationReasons"]
    assert reasons[0] == {"Code": "None"}
    assert reasons[1] == {"Code": "DuplicateItem", "Message": "Duplicate primary key exists in table"}
    assert reasons[2]["Code"] == "ConditionalCheckFailed"
    assert reasons[2]["Item"] == {**key("p", "3"), "v": {"N": "1"}}
    assert get(db, "p", "1") is None
    out = db.execute_transaction(TransactStatements=[
        {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1}"},
        {"Statement": "UPDATE tbl SET v = 2 WHERE pk = 'p' AND sk = 3 AND v = 1"},
        {"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 2"},
    ])
    assert out["Responses"] == []
    assert get(db, "p", "1") == key("p", "1")
    assert get(db, "p", "3")["v"] == {"N": "2"}
    assert get(db, "p", "2") is None


def test_transaction_exists_is_a_condition_check(db):
    db.put_item(TableName="tbl", Item={**key("p", "2"), "v": {"N": "1"}})
    with pytest.raises(ClientError) as e:
        db.execute_transaction(TransactStatements=[
            {"Statement": "EXISTS(SELECT * FROM tbl WHERE pk = 'p' AND sk = 2 AND v = 9)"},
            {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1}"},
        ])
    assert e.value.response["CancellationReasons"][0]["Code"] == "ConditionalCheckFailed"
    assert get(db, "p", "1") is None
    db.execute_transaction(TransactStatements=[
        {"Statement": "EXISTS(SELECT * FROM tbl WHERE pk = 'p' AND sk = 2 AND v = 1)"},
        {"Statement": "INSERT INTO tbl VALUE {'pk': 'p', 'sk': 1}"},
    ])
    assert get(db, "p", "1") == key("p", "1")


def test_transaction_client_request_token_is_idempotent(db):
    statements = [{"Statement": "UPDATE tbl SET n = n + 1 WHERE pk = 'p' AND sk = 1"}]
    db.put_item(TableName="tbl", Item={**key(), "n": {"N": "0"}})
    db.execute_transaction(TransactStatements=statements, ClientRequestToken="tok-1")
    db.execute_transaction(TransactStatements=statements, ClientRequestToken="tok-1")
    assert get(db)["n"] == {"N": "1"}
    with pytest.raises(ClientError) as e:
        db.execute_transaction(TransactStatements=[{"Statement": "DELETE FROM tbl WHERE pk = 'p' AND sk = 1"}],
                               ClientRequestToken="tok-1")
    assert error_of(e)[0] == "IdempotentParameterMismatchException"


def test_transaction_reads(db):
    fill(db)
    out = db.execute_transaction(TransactStatements=[
        {"Statement": "SELECT colour FROM tbl WHERE pk = 'p' AND sk = 1"},
        {"Statement": "SELECT * FROM tbl WHERE pk = 'p' AND sk = 9"},
    ])
    assert out["Responses"] == [{"Item": {"colour": {"S": "red"}}}, {}]


@pytest.mark.parametrize("statements,message", [
    (["SELECT * FROM tbl WHERE pk = 'p' AND sk = 1", "DELETE FROM tbl WHERE pk = 'p' AND sk = 2"],
     "ExecuteTransaction API does not support both read and write operations in the same request."),
    (["SELECT * FROM tbl WHERE pk = 'p'"],
     "Select statements within ExecuteTransaction must specify the primary key in the where clause."),
    (['SELECT * FROM "tbl"."byg" WHERE g = \'x\''], "Reads on indices are not supported within transactions."),
    (["DELETE FROM tbl WHERE pk = 'p' AND sk = 1", "UPDATE tbl SET v = 1 WHERE pk = 'p' AND sk = 1"],
     "Transaction request cannot include multiple operations on one item"),
    (["EXISTS(SELECT * FROM tbl WHERE pk = 'p')"],
     "EXISTS() must contain a single item read with additional condition"),
    (["DELETE FROM tbl WHERE"], MALFORMED + "Unexpected end of statement"),
])
def test_bad_transactions_are_refused_whole(db, statements, message):
    db.put_item(TableName="tbl", Item=key())
    with pytest.raises(ClientError) as e:
        db.execute_transaction(TransactStatements=[{"Statement": s} for s in statements])
    assert error_of(e) == ("ValidationException", message)
    assert get(db) == key()
