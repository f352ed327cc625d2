"""CloudWatch Logs Insights: query definitions, StartQuery/GetQueryResults/StopQuery/
DescribeQueries over the events of a time range, GetLogRecord from @ptr, GetLogGroupFields."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def logs(client):
    return client("logs")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def seed(logs, group="/app", stream="web", start=None):
    """Five events a second apart, newest last; returns their timestamps in ms."""
    start = int(time.time() * 1000) - 60_000 if start is None else start
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName=stream)
    messages = [
        json.dumps({"level": "info", "latency": 12, "path": "/a"}),
        json.dumps({"level": "error", "latency": 250, "path": "/b"}),
        "plain line with Exception inside",
        json.dumps({"level": "error", "latency": 90, "path": "/a"}),
        json.dumps({"level": "info", "latency": 30, "path": "/b"}),
    ]
    events = [{"timestamp": start + i * 1000, "message": m} for i, m in enumerate(messages)]
    logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)
    return [e["timestamp"] for e in events]


def run(logs, query, group="/app", start=None, end=None, **extra):
    now = int(time.time())
    query_id = logs.start_query(
        logGroupName=group, queryString=query,
        startTime=now - 3600 if start is None else start, endTime=now if end is None else end, **extra,
    )["queryId"]
    return query_id, logs.get_query_results(queryId=query_id)


def rows_of(results):
    return [{f["field"]: f["value"] for f in row} for row in results["results"]]


def test_a_filter_query_returns_rows_with_pointers_and_statistics(logs):
    seed(logs)
    _, results = run(logs, 'fields @timestamp, level, latency | filter level = "error" | sort latency desc')
    assert results["status"] == "Complete"
    rows = rows_of(results)
    assert [r["latency"] for r in rows] == ["250", "90"]
    assert list(rows[0]) == ["@timestamp", "level", "latency", "@ptr"]
    assert len(rows[0]["@timestamp"]) == len("2024-01-01 00:00:00.000")
    stats = results["statistics"]
    assert stats["recordsMatched"] == 2.0
    assert stats["recordsScanned"] == 5.0
    assert stats["bytesScanned"] > 0

    record = logs.get_log_record(logRecordPointer=rows[0]["@ptr"])["logRecord"]
    assert json.loads(record["@message"])["latency"] == 250
    assert record["@logStream"] == "web"
    assert record["@log"] == "000000000000:/app"
    assert record["@timestamp"].isdigit()
    assert record["level"] == "error"


def test_queries_without_fields_show_timestamp_and_message_newest_first(logs):
    stamps = seed(logs)
    _, results = run(logs, "filter @message like /Exception/ or latency < 20")
    rows = rows_of(results)
    assert [r["@message"] for r in rows] == [
        "plain line with Exception inside", json.dumps({"level": "info", "latency": 12, "path": "/a"}),
    ]
    assert all(list(r) == ["@timestamp", "@message", "@ptr"] for r in rows)
    _, limited = run(logs, "fields @message | limit 2")
    assert len(limited["results"]) == 2
    _, by_param = run(logs, "fields @message", limit=3)
    assert len(by_param["results"]) == 3
    first_second = stamps[0] // 1000
    _, narrow = run(logs, "fields @message", start=first_second, end=first_second)
    assert len(narrow["results"]) == 1


def test_stats_count_by_field_and_parse(logs):
    seed(logs)
    _, results = run(logs, "filter ispresent(level) | stats count(*) as n, avg(latency) as avg_latency by level | sort n desc, level asc")
    assert rows_of(results) == [
        {"level": "error", "n": "2", "avg_latency": "170"},
        {"level": "info", "n": "2", "avg_latency": "21"},
    ]
    _, counted = run(logs, "stats count(*)")
    assert rows_of(counted) == [{"count(*)": "5"}]
    _, parsed = run(logs, 'parse @message "plain line with * inside" as word | filter ispresent(word) | fields word')
    assert [r["word"] for r in rows_of(parsed)] == ["Exception"]


def test_a_query_can_span_several_log_groups(logs):
    seed(logs, group="/one")
    seed(logs, group="/two")
    now = int(time.time())
    query_id = logs.start_query(logGroupNames=["/one", "/two"], queryString="stats count(*) as n by @log",
                                startTime=now - 3600, endTime=now)["queryId"]
    rows = rows_of(logs.get_query_results(queryId=query_id))
    assert sorted((r["@log"], r["n"]) for r in rows) == [("000000000000:/one", "5"), ("000000000000:/two", "5")]


def test_describe_queries_and_stop_query(logs):
    seed(logs)
    first, _ = run(logs, "fields @message")
    second, _ = run(logs, "stats count(*)")
    queries = logs.describe_queries()["queries"]
    assert [q["queryId"] for q in queries] == [second, first]
    assert queries[0]["status"] == "Complete"
    assert queries[0]["queryString"] == "stats count(*)"
    assert queries[0]["logGroupName"] == "/app"
    assert logs.describe_queries(logGroupName="/other")["queries"] == []
    assert logs.describe_queries(status="Running")["queries"] == []
    page = logs.describe_queries(maxResults=1)
    assert [q["queryId"] for q in page["queries"]] == [second]
    rest = logs.describe_queries(maxResults=1, nextToken=page["nextToken"])
    assert [q["queryId"] for q in rest["queries"]] == [first]
    assert logs.stop_query(queryId=first)["success"] is False
    with pytest.raises(ClientError) as e:
        logs.stop_query(queryId="00000000-0000-4000-0000-000000000000")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_query_errors_are_reported_as_aws_does(logs):
    seed(logs)
    now = int(time.time())
    with pytest.raises(ClientError) as e:
        logs.start_query(logGroupName="/app", queryString="fields @message | frobnicate", startTime=now - 60, endTime=now)
    assert e.value.response["Error"]["Code"] == "MalformedQueryException"
    location = e.value.response["queryCompileError"]["location"]
    assert (location["startCharOffset"], location["endCharOffset"]) == (18, 28)
    with pytest.raises(ClientError) as e:
        logs.start_query(logGroupName="/missing", queryString="fields @message", startTime=now - 60, endTime=now)
    assert error_of(e) == ("ResourceNotFoundException", "Log group '/missing' does not exist for account ID '000000000000'")
    with pytest.raises(ClientError) as e:
        logs.start_query(queryString="fields @message", startTime=now - 60, endTime=now)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.start_query(logGroupName="/app", logGroupNames=["/app"], queryString="fields @message",
                         startTime=now - 60, endTime=now)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.start_query(logGroupName="/app", queryString="fields @message", startTime=now, endTime=now - 60)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.get_query_results(queryId="nope")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.get_log_record(logRecordPointer="garbage")
    assert error_of(e)[0] == "InvalidParameterException"


def test_query_results_expire_after_seven_days(logs, server):
    seed(logs)
    query_id, _ = run(logs, "fields @message")
    server.advance_clock(8 * 24 * 3600)
    with pytest.raises(ClientError) as e:
        logs.get_query_results(queryId=query_id)
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_query_definitions_are_saved_updated_listed_and_deleted(logs):
    first = logs.put_query_definition(name="errors/recent", queryString='filter level = "error"',
                                      logGroupNames=["/app"])["queryDefinitionId"]
    second = logs.put_query_definition(name="all", queryString="fields @message")["queryDefinitionId"]
    listed = logs.describe_query_definitions()["queryDefinitions"]
    assert [d["name"] for d in listed] == ["all", "errors/recent"]
    errors = listed[1]
    assert errors["queryDefinitionId"] == first
    assert errors["logGroupNames"] == ["/app"]
    assert errors["queryString"] == 'filter level = "error"'
    assert errors["lastModified"] > 0

    same = logs.put_query_definition(queryDefinitionId=first, name="errors/recent",
                                     queryString='filter level = "error" | limit 5')["queryDefinitionId"]
    assert same == first
    (updated,) = logs.describe_query_definitions(queryDefinitionNamePrefix="errors")["queryDefinitions"]
    assert updated["queryString"].endswith("limit 5")
    page = logs.describe_query_definitions(maxResults=1)
    assert [d["queryDefinitionId"] for d in page["queryDefinitions"]] == [second]
    rest = logs.describe_query_definitions(maxResults=1, nextToken=page["nextToken"])
    assert [d["queryDefinitionId"] for d in rest["queryDefinitions"]] == [first]

    assert logs.delete_query_definition(queryDefinitionId=second)["success"] is True
    with pytest.raises(ClientError) as e:
        logs.delete_query_definition(queryDefinitionId=second)
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.put_query_definition(queryDefinitionId="missing", name="x", queryString="fields @message")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_get_log_group_fields_reports_each_fields_share(logs):
    stamps = seed(logs)
    fields = logs.get_log_group_fields(logGroupName="/app", time=stamps[2] // 1000)["logGroupFields"]
    percent = {f["name"]: f["percent"] for f in fields}
    assert percent["@message"] == 100
    assert percent["@timestamp"] == 100
    assert percent["@logStream"] == 100
    assert percent["level"] == 80
    assert "@ptr" not in percent
    with pytest.raises(ClientError) as e:
        logs.get_log_group_fields(logGroupName="/missing")
    assert error_of(e)[0] == "ResourceNotFoundException"
