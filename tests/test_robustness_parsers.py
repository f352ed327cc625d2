"""Hostile input to Roto's parsers: every body, expression, pattern or query string whose
depth or size the caller controls is bounded, answered with AWS's error, and the server
carries on. Each test sends one input that once ended the process (a stack overflow or a
panic), asserts the exact error, then asserts that STS GetCallerIdentity still answers."""

from __future__ import annotations

import base64
import hashlib
import json

import pytest
from botocore.exceptions import ClientError

from s3_helpers import AUTH

MALFORMED_XML = (
    b"<Code>MalformedXML</Code><Message>The XML you provided was not well-formed or did "
    b"not validate against our published schema</Message>"
)


def still_answers(client) -> None:
    assert client("sts").get_caller_identity()["Account"]


def error(excinfo) -> tuple[str, str]:
    e = excinfo.value.response["Error"]
    return e["Code"], e["Message"]


# --- S3 XML bodies -----------------------------------------------------------------------

def deep_xml(root: str, depth: int = 43_000) -> bytes:
    return (f"<{root}>" + "<a>" * depth + "</a>" * depth + f"</{root}>").encode()


@pytest.mark.parametrize("query,root", [
    ("tagging", "Tagging"),
    ("delete", "Delete"),
    ("lifecycle", "LifecycleConfiguration"),
])
def test_s3_xml_nested_43000_levels_is_malformed_xml(server, client, query, root):
    client("s3").create_bucket(Bucket="deep")
    body = deep_xml(root)
    headers = {
        "Authorization": AUTH,
        "Content-MD5": base64.b64encode(hashlib.md5(body).digest()).decode(),
    }
    method = "POST" if query == "delete" else "PUT"
    code, _, reply = server.request(method, f"/deep?{query}", body=body, headers=headers)
    assert code == 400
    assert MALFORMED_XML in reply
    still_answers(client)


def test_s3_xml_within_the_nesting_bound_still_parses(server, client):
    s3 = client("s3")
    s3.create_bucket(Bucket="shallow")
    s3.put_bucket_tagging(Bucket="shallow", Tagging={"TagSet": [{"Key": "k", "Value": "v"}]})
    assert s3.get_bucket_tagging(Bucket="shallow")["TagSet"] == [{"Key": "k", "Value": "v"}]


# --- DynamoDB expressions ----------------------------------------------------------------

@pytest.fixture
def table(client):
    ddb = client("dynamodb")
    ddb.create_table(
        TableName="tab",
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        BillingMode="PAY_PER_REQUEST",
    )
    return ddb


def size_error(member: str, expression: str) -> str:
    return (f"Invalid {member}: Expression size has exceeded the maximum allowed size; "
            f"expression size: {len(expression.encode())}")


def test_condition_of_4096_open_parentheses_is_a_syntax_error(client, table):
    with pytest.raises(ClientError) as e:
        table.put_item(TableName="tab", Item={"pk": {"S": "a"}}, ConditionExpression="(" * 4096)
    assert error(e) == ("ValidationException",
                        'Invalid ConditionExpression: Syntax error; token: "<EOF>", near: "("')
    still_answers(client)


@pytest.mark.parametrize("expression", [
    "NOT " * 7031 + "pk = :v",
    " AND ".join(["pk = :v"] * 20_000),
    "pk = :v AND " + "x" * 60_000 + " = :v",
])
def test_conditions_over_4_kb_are_refused_by_size(client, table, expression):
    with pytest.raises(ClientError) as e:
        table.put_item(TableName="tab", Item={"pk": {"S": "a"}}, ConditionExpression=expression,
                       ExpressionAttributeValues={":v": {"S": "a"}})
    assert error(e) == ("ValidationException", size_error("ConditionExpression", expression))
    still_answers(client)


@pytest.mark.parametrize("expression", [
    "SET x = " + " + ".join(["x"] * 20_000),
    "SET x = " + "if_not_exists(y, " * 5000 + ":v" + ")" * 5000,
])
def test_updates_over_4_kb_are_refused_by_size(client, table, expression):
    with pytest.raises(ClientError) as e:
        table.update_item(TableName="tab", Key={"pk": {"S": "a"}}, UpdateExpression=expression,
                          ExpressionAttributeValues={":v": {"N": "1"}})
    assert error(e) == ("ValidationException", size_error("UpdateExpression", expression))
    still_answers(client)


def test_the_301st_operator_is_refused_within_4_kb(client, table):
    expression = "NOT " * 300 + "pk = :v"
    with pytest.raises(ClientError) as e:
        table.put_item(TableName="tab", Item={"pk": {"S": "a"}}, ConditionExpression=expression,
                       ExpressionAttributeValues={":v": {"S": "a"}})
    assert error(e) == ("ValidationException",
                        "Invalid ConditionExpression: The expression contains too many operators; "
                        "operator count: 301")
    update = "SET x = " + " + ".join([":v"] * 302)
    with pytest.raises(ClientError) as e:
        table.update_item(TableName="tab", Key={"pk": {"S": "a"}}, UpdateExpression=update,
                          ExpressionAttributeValues={":v": {"N": "1"}})
    assert error(e) == ("ValidationException",
                        "Invalid UpdateExpression: The expression contains too many operators; "
                        "operator count: 301")
    still_answers(client)


def test_expressions_within_the_limits_still_run(client, table):
    table.put_item(TableName="tab", Item={"pk": {"S": "a"}, "n": {"N": "1"}})
    condition = "NOT " * 298 + "pk = :v"
    table.update_item(TableName="tab", Key={"pk": {"S": "a"}},
                      UpdateExpression="SET n = n + " + " + ".join([":one"] * 100),
                      ConditionExpression=condition,
                      ExpressionAttributeValues={":v": {"S": "a"}, ":one": {"N": "1"}})
    item = table.get_item(TableName="tab", Key={"pk": {"S": "a"}})["Item"]
    assert item["n"] == {"N": "101"}


def test_conditions_nested_past_32_groups_are_refused(client, table):
    expression = "(pk = :v AND " * 33 + "pk = :v" + ")" * 33
    with pytest.raises(ClientError) as e:
        table.put_item(TableName="tab", Item={"pk": {"S": "a"}}, ConditionExpression=expression,
                       ExpressionAttributeValues={":v": {"S": "a"}})
    assert error(e) == ("ValidationException",
                        "Invalid ConditionExpression: The expression is nested too deeply; "
                        "maximum depth: 32")
    still_answers(client)


def test_document_paths_deeper_than_32_levels_are_refused(client, table):
    table.get_item(TableName="tab", Key={"pk": {"S": "a"}}, ProjectionExpression="a" + ".b" * 31)
    with pytest.raises(ClientError) as e:
        table.get_item(TableName="tab", Key={"pk": {"S": "a"}},
                       ProjectionExpression="a" + "[0]" * 1300)
    assert error(e) == ("ValidationException",
                        "Invalid ProjectionExpression: The document path has too many nesting "
                        "levels; nesting levels: 1301")
    still_answers(client)


def test_legacy_expected_with_thousands_of_conditions_evaluates(client, table):
    expected = {f"a{i}": {"Exists": False} for i in range(20_000)}
    table.put_item(TableName="tab", Item={"pk": {"S": "a"}}, Expected=expected)
    assert table.get_item(TableName="tab", Key={"pk": {"S": "a"}})["Item"] == {"pk": {"S": "a"}}
    still_answers(client)


def test_partiql_nested_past_the_bound_is_refused(client, table):
    statement = "SELECT * FROM tab WHERE " + "(" * 4000 + "pk = 'a'" + ")" * 4000
    with pytest.raises(ClientError) as e:
        table.execute_statement(Statement=statement)
    assert error(e) == ("ValidationException",
                        "Statement wasn't well formed, can't be processed: "
                        "Expressions may nest at most 100 levels")
    literal = "SELECT * FROM tab WHERE pk = " + "[" * 4000 + "1" + "]" * 4000
    with pytest.raises(ClientError) as e:
        table.execute_statement(Statement=literal)
    assert error(e)[1].startswith("Nesting Levels have exceeded supported limits")
    still_answers(client)


# --- presigned URLs ----------------------------------------------------------------------

def test_presigned_date_with_a_multibyte_character_is_malformed(server, client):
    code, _, body = server.request(
        "GET", "/b/k?X-Amz-Expires=60&X-Amz-Date=202%C3%A9010T000000Z")
    assert code == 400
    assert b"<Code>AuthorizationQueryParametersError</Code>" in body
    assert (b"<Message>X-Amz-Date must be in the ISO8601 Long Format "
            b"&quot;yyyyMMdd&apos;T&apos;HHmmss&apos;Z&apos;&quot;</Message>") in body
    still_answers(client)


# --- SNS policies ------------------------------------------------------------------------

def test_sns_policy_that_is_not_an_object_is_refused_and_permissions_still_work(client):
    sns = client("sns")
    arn = sns.create_topic(Name="t")["TopicArn"]
    with pytest.raises(ClientError) as e:
        sns.set_topic_attributes(TopicArn=arn, AttributeName="Policy", AttributeValue="[]")
    assert error(e) == ("InvalidParameter",
                        "Invalid parameter: Attributes Reason: Policy: Invalid value [[]]")
    sns.add_permission(TopicArn=arn, Label="l", AWSAccountId=["111122223333"],
                       ActionName=["Publish"])
    policy = json.loads(sns.get_topic_attributes(TopicArn=arn)["Attributes"]["Policy"])
    assert any(s.get("Sid") == "l" for s in policy["Statement"])
    sns.remove_permission(TopicArn=arn, Label="l")
    still_answers(client)


# --- CloudWatch Logs ---------------------------------------------------------------------

@pytest.fixture
def logs(client):
    logs = client("logs")
    logs.create_log_group(logGroupName="g")
    logs.create_log_stream(logGroupName="g", logStreamName="s")
    logs.put_log_events(logGroupName="g", logStreamName="s",
                        logEvents=[{"timestamp": 1_700_000_000_000, "message": '{"a": 1}'}])
    return logs


def test_filter_pattern_nested_past_32_levels_is_refused(client, logs):
    pattern = "{ " + "(" * 500 + "$.a = 1" + ")" * 500 + " }"
    with pytest.raises(ClientError) as e:
        logs.filter_log_events(logGroupName="g", filterPattern=pattern)
    assert error(e) == ("InvalidParameterException",
                        "Invalid filter pattern: parentheses nested more than 32 levels")
    still_answers(client)


def test_filter_pattern_of_many_ellipses_answers_at_once(client, logs):
    pattern = "[" + ",".join(["..."] * 120) + ", status = 200, size]"
    events = logs.filter_log_events(logGroupName="g", filterPattern=pattern)["events"]
    assert events == []
    still_answers(client)


def test_insights_query_nested_past_32_levels_is_malformed(client, logs):
    query = "filter " + "(" * 4000 + "a = 1" + ")" * 4000
    with pytest.raises(ClientError) as e:
        logs.start_query(logGroupName="g", startTime=0, endTime=2_000_000_000,
                         queryString=query)
    code, message = error(e)
    assert code == "MalformedQueryException"
    assert message == "expression nested more than 32 levels deep at position 39"
    still_answers(client)


# --- EventBridge schedules ---------------------------------------------------------------

def test_a_rate_too_large_to_count_in_milliseconds_is_not_valid(client):
    events = client("events")
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="r", ScheduleExpression="rate(9223372036854775807 days)")
    assert error(e) == ("ValidationException", "Parameter ScheduleExpression is not valid.")
    still_answers(client)
