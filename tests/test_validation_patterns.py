"""The model's `pattern` constraints, checked before a handler runs as AWS's front ends check
them: the whole value must match, the message names the member and the model's pattern,
several violations are joined and counted, and each protocol answers with its own code."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

ROLE = "arn:aws:iam::000000000000:role/lambda-role"


def refused(call, code, message):
    with pytest.raises(ClientError) as e:
        call()
    error = e.value.response["Error"]
    assert (error["Code"], error["Message"]) == (code, message)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


def pattern_error(value, member, pattern):
    return (f"1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: "
            f"Member must satisfy regular expression pattern: {pattern}")


def test_json_service_refuses_a_name_outside_its_pattern(client):
    ddb = client("dynamodb")
    ddb.create_table(TableName="items", AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST")
    refused(lambda: ddb.query(TableName="items", IndexName="by name!", KeyConditionExpression="k = :k",
                              ExpressionAttributeValues={":k": {"S": "x"}}),
            "ValidationException", pattern_error("by name!", "indexName", "[a-zA-Z0-9_.-]+"))


def test_the_whole_value_must_match(client):
    kinesis = client("kinesis")
    # `[a-zA-Z0-9_.-]+` matches a part of "good name"; AWS matches the whole.
    refused(lambda: kinesis.create_stream(StreamName="good name", ShardCount=1),
            "ValidationException", pattern_error("good name", "streamName", "[a-zA-Z0-9_.-]+"))
    kinesis.create_stream(StreamName="good_name-1.x", ShardCount=1)


def test_query_service_answers_validation_error(client):
    iam = client("iam")
    refused(lambda: iam.create_user(UserName="a b"),
            "ValidationError", pattern_error("a b", "userName", "[\\w+=,.@-]+"))
    refused(lambda: iam.create_saml_provider(Name="corp+idp", SAMLMetadataDocument="x" * 1000),
            "ValidationError", pattern_error("corp+idp", "name", "[\\w._-]+"))
    iam.create_user(UserName="deploy+ci@example.com")


def test_pattern_and_length_violations_are_joined_and_counted(client):
    name = "!" * 65
    message = ("2 validation errors detected: "
               f"Value '{name}' at 'userName' failed to satisfy constraint: "
               "Member must satisfy regular expression pattern: [\\w+=,.@-]+; "
               f"Value '{name}' at 'userName' failed to satisfy constraint: "
               "Member must have length less than or equal to 64")
    refused(lambda: client("iam").create_user(UserName=name), "ValidationError", message)


def test_list_members_are_reported_by_position(client):
    events = client("events")
    events.put_rule(Name="r", ScheduleExpression="rate(1 minute)")
    refused(lambda: events.put_targets(Rule="r", Targets=[
        {"Id": "ok", "Arn": "arn:aws:sqs:us-east-1:000000000000:q"},
        {"Id": "not ok", "Arn": "arn:aws:sqs:us-east-1:000000000000:q"}]),
        "ValidationException", pattern_error("not ok", "targets.2.member.id", "[\\.\\-_A-Za-z0-9]+"))


def test_lambda_role_must_be_a_role_arn(client):
    refused(lambda: client("lambda").create_function(
        FunctionName="f", Runtime="python3.12", Role="arn:aws:iam::000000000000:user/u",
        Handler="index.handler", Code={"ZipFile": b"PK\x05\x06" + b"\0" * 18}),
        "ValidationException",
        pattern_error("arn:aws:iam::000000000000:user/u", "role",
                      "arn:(aws[a-zA-Z-]*)?:iam::\\d{12}:role/?[a-zA-Z_0-9+=,.@\\-_/]+"))


def test_logs_reports_patterns_as_invalid_parameter(client):
    logs = client("logs")
    refused(lambda: logs.create_log_group(logGroupName="bad name"),
            "InvalidParameterException", pattern_error("bad name", "logGroupName", "[\\.\\-_/#A-Za-z0-9]+"))
    logs.create_log_group(logGroupName="/aws/lambda/good-name_1.x#")
    refused(lambda: logs.create_log_stream(logGroupName="/aws/lambda/good-name_1.x#", logStreamName="a:b"),
            "InvalidParameterException", pattern_error("a:b", "logStreamName", "[^:*]*"))


def test_sts_session_names_follow_their_pattern(client):
    client("iam").create_role(RoleName="r", AssumeRolePolicyDocument="{}")
    sts = client("sts")
    refused(lambda: sts.assume_role(RoleArn="arn:aws:iam::000000000000:role/r", RoleSessionName="a b"),
            "ValidationError", pattern_error("a b", "roleSessionName", "[\\w+=,.@-]*"))
    refused(lambda: sts.get_federation_token(Name="a/b"),
            "ValidationError", pattern_error("a/b", "name", "[\\w+=,.@-]*"))


def test_kms_alias_names_follow_their_pattern(client):
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    refused(lambda: kms.create_alias(AliasName="alias/bad name", TargetKeyId=key),
            "ValidationException", pattern_error("alias/bad name", "aliasName", "^[a-zA-Z0-9:/_-]+$"))
    kms.create_alias(AliasName="alias/good:name_1-x", TargetKeyId=key)


def test_a_pattern_the_server_cannot_compile_is_not_checked(client):
    # Tag keys follow `[\p{L}\p{Z}\p{N}_.:/=+\-@]+` (Unicode classes): not checked, so a
    # Unicode letter AWS accepts is accepted.
    client("iam").create_user(UserName="tagged", Tags=[{"Key": "équipe", "Value": "bleu"}])
    tags = client("iam").list_user_tags(UserName="tagged")["Tags"]
    assert tags == [{"Key": "équipe", "Value": "bleu"}]
