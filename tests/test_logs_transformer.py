"""CloudWatch Logs' TestTransformer, black-box with boto3: a transformer's processors run
over sample messages, each answered with its transformed version; configurations that do
not start with a parser, or name a processor Roto does not run, are refused."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def logs(client):
    return client("logs")


def test_processors_transform_each_message(logs):
    config = [
        {"parseJSON": {}},
        {"addKeys": {"entries": [{"key": "env", "value": "prod"}]}},
        {"renameKeys": {"entries": [{"key": "lvl", "renameTo": "level"}]}},
        {"upperCaseString": {"withKeys": ["level"]}},
        {"moveKeys": {"entries": [{"source": "user.id", "target": "uid"}]}},
        {"typeConverter": {"entries": [{"key": "uid", "type": "integer"}]}},
        {"deleteKeys": {"withKeys": ["user"]}},
    ]
    messages = ['{"lvl": "warn", "user": {"id": "42"}}', "plain text"]
    got = logs.test_transformer(transformerConfig=config, logEventMessages=messages)
    first, second = got["transformedLogs"]
    assert first["eventNumber"] == 1 and first["eventMessage"] == messages[0]
    assert json.loads(first["transformedEventMessage"]) == {"env": "prod", "level": "WARN", "uid": 42}
    assert second["eventNumber"] == 2 and second["eventMessage"] == "plain text"
    assert "transformedEventMessage" not in second


def test_key_value_csv_split_and_substitute(logs):
    kv = logs.test_transformer(
        transformerConfig=[
            {"parseKeyValue": {"fieldDelimiter": " ", "keyValueDelimiter": "=", "destination": "kv"}},
            {"splitString": {"entries": [{"source": "kv.tags", "delimiter": ","}]}},
            {"substituteString": {"entries": [{"source": "kv.path", "from": "/[0-9]+", "to": "/{id}"}]}},
        ],
        logEventMessages=["path=/users/17 tags=a,b"],
    )["transformedLogs"][0]
    assert json.loads(kv["transformedEventMessage"]) == {
        "kv": {"path": "/users/{id}", "tags": ["a", "b"]}}
    csv = logs.test_transformer(
        transformerConfig=[{"csv": {"columns": ["ip", "agent"]}},
                           {"trimString": {"withKeys": ["agent"]}}],
        logEventMessages=['10.0.0.1, "curl, 8.0" '],
    )["transformedLogs"][0]
    assert json.loads(csv["transformedEventMessage"]) == {"ip": "10.0.0.1", "agent": "curl, 8.0"}


@pytest.mark.parametrize("config", [
    [{"addKeys": {"entries": [{"key": "a", "value": "b"}]}}],
    [{"parseJSON": {}}, {"csv": {}}],
    [{"grok": {"match": "%{WORD:w}"}}],
])
def test_bad_configurations_are_refused(logs, config):
    with pytest.raises(ClientError) as e:
        logs.test_transformer(transformerConfig=config, logEventMessages=["{}"])
    assert e.value.response["Error"]["Code"] == "InvalidParameterException"


def test_put_transformer_checks_the_configuration_as_test_does(logs):
    logs.create_log_group(logGroupName="/app")
    with pytest.raises(ClientError) as e:
        logs.put_transformer(logGroupIdentifier="/app",
                             transformerConfig=[{"addKeys": {"entries": [{"key": "a", "value": "b"}]}}])
    assert e.value.response["Error"]["Code"] == "InvalidParameterException"
