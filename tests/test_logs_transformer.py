"""CloudWatch Logs' TestTransformer, black-box with boto3: a transformer's processors run
over sample messages, each answered with its transformed version; configurations that do
not start with a parser, or name a processor Roto does not run, are refused. A group's
transformer applies at ingestion: reads see the transformed events."""

from __future__ import annotations

import json
import time

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
    [{"parseJSON": {}}, {"parseVPC": {}}],
    [{"grok": {"match": "%{NOTAPATTERN:w}"}}],
    [{"grok": {"match": "%{WORD:a}"}}, {"grok": {"match": "%{WORD:b}"}}],
    [{"grok": {"match": " ".join(["%{WORD}"] * 21)}}],
    [{"parseVPC": {"source": "body"}}],
    [{"parseToOCSF": {"eventSource": "VPCFlow", "ocsfVersion": "V1.1"}}],
    [{"parseJSON": {}}, {"dateTimeConverter": {"source": "t", "target": "u", "matchPatterns": ["qq"]}}],
    [{"parseJSON": {}}, {"dateTimeConverter": {"source": "t", "target": "u", "matchPatterns": ["yyyy"],
                                                "sourceTimezone": "Mars/Olympus"}}],
    [{"csv": {}}] * 6,
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


def test_grok_and_date_time_converter(logs):
    config = [
        {"grok": {"match": "%{IPV4:client.ip} - \\[%{HTTPDATE:when}\\] \"%{WORD:verb} %{URIPATHPARAM:path}\" "
                           "%{NUMBER:status} %{LOGLEVEL:level}"}},
        {"typeConverter": {"entries": [{"key": "status", "type": "integer"}]}},
        {"dateTimeConverter": {"source": "when", "target": "at", "matchPatterns": ["dd/MMM/yyyy:HH:mm:ss Z"],
                               "targetTimezone": "Asia/Tokyo", "targetFormat": "yyyy-MM-dd HH:mm:ss XXX"}},
    ]
    got = logs.test_transformer(transformerConfig=config, logEventMessages=[
        '10.1.2.3 - [10/Oct/2000:13:55:36 -0700] "GET /a/b?x=1" 404 WARN',
        "something else entirely",
    ])["transformedLogs"]
    assert json.loads(got[0]["transformedEventMessage"]) == {
        "client": {"ip": "10.1.2.3"}, "when": "10/Oct/2000:13:55:36 -0700", "verb": "GET",
        "path": "/a/b?x=1", "status": 404, "level": "WARN", "at": "2000-10-11 05:55:36 +09:00"}
    assert "transformedEventMessage" not in got[1]


def test_vended_log_parsers(logs):
    cases = {
        "parseVPC": ("2 123456789010 eni-abc123de 192.0.2.0 192.0.2.24 20641 22 6 20 4249 1418530010 "
                     "1418530070 ACCEPT OK",
                     {"version": 2, "account_id": "123456789010", "interface_id": "eni-abc123de",
                      "srcaddr": "192.0.2.0", "dstaddr": "192.0.2.24", "srcport": 20641, "dstport": 22,
                      "protocol": 6, "packets": 20, "bytes": 4249, "start": 1418530010, "end": 1418530070,
                      "action": "ACCEPT", "log_status": "OK"}),
        "parseRoute53": ("1.0 2017-12-13T08:15:50.235Z Z123412341234 example.com AAAA NOERROR TCP IAD12 "
                         "192.0.2.0 198.51.100.0/24",
                         {"version": "1.0", "queryTimestamp": "2017-12-13T08:15:50.235Z",
                          "hostZoneId": "Z123412341234", "queryName": "example.com", "queryType": "AAAA",
                          "responseCode": "NOERROR", "protocol": "TCP", "edgeLocation": "IAD12",
                          "resolverIp": "192.0.2.0", "ednsClientSubnet": "198.51.100.0/24"}),
        "parsePostgres": ("2019-03-10 03:54:59 UTC:10.0.0.123(52834):postgres@logs:[20175]:ERROR: "
                          "column \"wrong_column_name\" does not exist",
                          {"logTime": "2019-03-10 03:54:59 UTC", "srcIp": "10.0.0.123(52834)",
                           "userName": "postgres", "dbName": "logs", "processId": "20175", "logLevel": "ERROR"}),
        "parseWAF": (json.dumps({"action": "BLOCK", "httpRequest": {
                         "clientIp": "1.2.3.4", "headers": [{"name": "Host", "value": "x.com"}]}}),
                     {"action": "BLOCK", "httpRequest": {"clientIp": "1.2.3.4", "headers": {"Host": "x.com"}}}),
    }
    for parser, (message, want) in cases.items():
        got = logs.test_transformer(transformerConfig=[{parser: {}}], logEventMessages=[message, "x"])
        first, second = got["transformedLogs"]
        assert json.loads(first["transformedEventMessage"]) == want, parser
        assert "transformedEventMessage" not in second, parser
    fields = ["2019-12-04", "21:02:31", "LAX1", "392", "192.0.2.100", "GET", "d111111abcdef8.cloudfront.net",
              "/index.html", "200", "-", "Mozilla/5.0", "-", "-", "Hit", "SOX4xwn4XV6Q4rgb7XiVGOHms",
              "d111111abcdef8.cloudfront.net", "https", "23", "0.001", "-", "TLSv1.2",
              "ECDHE-RSA-AES128-GCM-SHA256", "Hit", "HTTP/2.0", "-", "-", "11040", "0.001", "Hit",
              "text/html", "78", "-", "-"]
    got = logs.test_transformer(transformerConfig=[{"parseCloudfront": {}}],
                                logEventMessages=["\t".join(fields)])["transformedLogs"][0]
    cf = json.loads(got["transformedEventMessage"])
    assert cf["x-edge-location"] == "LAX1" and cf["sc-status"] == 200 and cf["c-port"] == 11040
    assert cf["cs-uri-stem"] == "/index.html" and cf["sc-content-type"] == "text/html"


def test_a_groups_transformer_applies_at_ingestion(logs):
    logs.create_log_group(logGroupName="/shaped")
    logs.create_log_stream(logGroupName="/shaped", logStreamName="s")
    logs.put_transformer(logGroupIdentifier="/shaped", transformerConfig=[
        {"grok": {"match": "%{LOGLEVEL:level} %{GREEDYDATA:text}"}},
        {"copyValue": {"entries": [{"source": "@logGroupName", "target": "group"},
                                   {"source": "@logGroupStream", "target": "stream"}]}},
        {"lowerCaseString": {"withKeys": ["level"]}},
    ])
    now = int(time.time() * 1000)
    logs.put_log_events(logGroupName="/shaped", logStreamName="s", logEvents=[
        {"timestamp": now, "message": "ERROR disk full"},
        {"timestamp": now + 1, "message": "no level here"},
    ])
    events = logs.get_log_events(logGroupName="/shaped", logStreamName="s", startFromHead=True)["events"]
    assert json.loads(events[0]["message"]) == {"level": "error", "text": "disk full", "group": "/shaped",
                                                "stream": "s"}
    assert events[1]["message"] == "no level here"
    found = logs.filter_log_events(logGroupName="/shaped", filterPattern='{ $.level = "error" }')["events"]
    assert [json.loads(e["message"])["text"] for e in found] == ["disk full"]
    query = logs.start_query(logGroupName="/shaped", startTime=now // 1000 - 60, endTime=now // 1000 + 60,
                             queryString="filter level = 'error' | fields text")["queryId"]
    rows = logs.get_query_results(queryId=query)["results"]
    assert [[f["value"] for f in row if f["field"] == "text"] for row in rows] == [["disk full"]]
    logs.delete_transformer(logGroupIdentifier="/shaped")
    logs.put_log_events(logGroupName="/shaped", logStreamName="s", logEvents=[
        {"timestamp": now + 2, "message": "WARN later"}])
    events = logs.get_log_events(logGroupName="/shaped", logStreamName="s", startFromHead=True)["events"]
    assert events[-1]["message"] == "WARN later"
