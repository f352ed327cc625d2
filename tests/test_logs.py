"""CloudWatch Logs black-box tests: groups, streams, events, filter patterns, retention, tags."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError


def now_ms() -> int:
    return int(time.time() * 1000)


@pytest.fixture
def logs(client):
    return client("logs")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def make_stream(logs, group="/app/web", stream="s1"):
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName=stream)
    return group, stream


def put(logs, group, stream, messages, start=None):
    start = now_ms() if start is None else start
    events = [{"timestamp": start + i, "message": m} for i, m in enumerate(messages)]
    return logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events)


def test_create_describe_delete_log_group_with_arn_and_retention(logs):
    logs.create_log_group(logGroupName="/app/one", tags={"team": "core"})
    group = logs.describe_log_groups()["logGroups"][0]
    assert group["logGroupName"] == "/app/one"
    assert group["arn"] == "arn:aws:logs:us-east-1:000000000000:log-group:/app/one:*"
    assert group["logGroupArn"] == "arn:aws:logs:us-east-1:000000000000:log-group:/app/one"
    assert "retentionInDays" not in group
    assert abs(group["creationTime"] - now_ms()) < 60_000
    logs.put_retention_policy(logGroupName="/app/one", retentionInDays=7)
    assert logs.describe_log_groups()["logGroups"][0]["retentionInDays"] == 7
    logs.delete_retention_policy(logGroupName="/app/one")
    assert "retentionInDays" not in logs.describe_log_groups()["logGroups"][0]
    logs.delete_log_group(logGroupName="/app/one")
    assert logs.describe_log_groups()["logGroups"] == []


def test_log_group_errors_are_the_real_ones(logs):
    logs.create_log_group(logGroupName="g")
    with pytest.raises(ClientError) as e:
        logs.create_log_group(logGroupName="g")
    assert error_of(e) == ("ResourceAlreadyExistsException", "The specified log group already exists")
    with pytest.raises(ClientError) as e:
        logs.delete_log_group(logGroupName="missing")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.create_log_group(logGroupName="bad name!")
    assert error_of(e)[0] == "InvalidParameterException"
    assert "regular expression pattern" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        logs.put_retention_policy(logGroupName="g", retentionInDays=2)
    assert error_of(e)[0] == "InvalidParameterException"
    assert "enum value set" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        logs.put_retention_policy(logGroupName="missing", retentionInDays=1)
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.describe_log_groups(limit=51)
    assert error_of(e)[0] == "InvalidParameterException"


def test_describe_log_groups_filters_by_prefix_and_paginates(logs):
    for name in ["/b/2", "/a/1", "/a/3", "/a/2", "/c"]:
        logs.create_log_group(logGroupName=name)
    page = logs.describe_log_groups(logGroupNamePrefix="/a/", limit=2)
    assert [g["logGroupName"] for g in page["logGroups"]] == ["/a/1", "/a/2"]
    page2 = logs.describe_log_groups(logGroupNamePrefix="/a/", limit=2, nextToken=page["nextToken"])
    assert [g["logGroupName"] for g in page2["logGroups"]] == ["/a/3"]
    assert "nextToken" not in page2
    paginator = logs.get_paginator("describe_log_groups")
    names = [g["logGroupName"] for p in paginator.paginate(PaginationConfig={"PageSize": 1}) for g in p["logGroups"]]
    assert names == ["/a/1", "/a/2", "/a/3", "/b/2", "/c"]
    assert [g["logGroupName"] for g in logs.describe_log_groups(logGroupNamePattern="B")["logGroups"]] == ["/b/2"]


def test_log_streams_create_describe_delete_and_errors(logs):
    logs.create_log_group(logGroupName="g")
    for s in ["web-2", "web-1", "worker"]:
        logs.create_log_stream(logGroupName="g", logStreamName=s)
    with pytest.raises(ClientError) as e:
        logs.create_log_stream(logGroupName="g", logStreamName="web-1")
    assert error_of(e) == ("ResourceAlreadyExistsException", "The specified log stream already exists")
    with pytest.raises(ClientError) as e:
        logs.create_log_stream(logGroupName="nope", logStreamName="x")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    streams = logs.describe_log_streams(logGroupName="g", logStreamNamePrefix="web")["logStreams"]
    assert [s["logStreamName"] for s in streams] == ["web-1", "web-2"]
    assert streams[0]["arn"] == "arn:aws:logs:us-east-1:000000000000:log-group:g:log-stream:web-1"
    page = logs.describe_log_streams(logGroupName="g", limit=2)
    assert len(page["logStreams"]) == 2
    rest = logs.describe_log_streams(logGroupName="g", limit=2, nextToken=page["nextToken"])
    assert [s["logStreamName"] for s in rest["logStreams"]] == ["worker"]
    with pytest.raises(ClientError) as e:
        logs.describe_log_streams(logGroupName="g", logStreamNamePrefix="w", orderBy="LastEventTime")
    assert error_of(e)[0] == "InvalidParameterException"
    logs.delete_log_stream(logGroupName="g", logStreamName="worker")
    with pytest.raises(ClientError) as e:
        logs.delete_log_stream(logGroupName="g", logStreamName="worker")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log stream does not exist.")


def test_put_then_get_log_events_in_order_with_stream_timestamps(logs):
    group, stream = make_stream(logs)
    start = now_ms() - 1000
    resp = put(logs, group, stream, ["one", "two", "three"], start)
    assert "nextSequenceToken" in resp and "rejectedLogEventsInfo" not in resp
    # A stale sequence token is accepted and ignored, as AWS does now.
    logs.put_log_events(
        logGroupName=group, logStreamName=stream, sequenceToken="49039859", logEvents=[{"timestamp": start + 10, "message": "four"}]
    )
    events = logs.get_log_events(logGroupName=group, logStreamName=stream, startFromHead=True)["events"]
    assert [e["message"] for e in events] == ["one", "two", "three", "four"]
    assert events[0]["timestamp"] == start and "ingestionTime" in events[0]
    info = logs.describe_log_streams(logGroupName=group)["logStreams"][0]
    assert info["firstEventTimestamp"] == start
    assert info["lastEventTimestamp"] == start + 10


def test_put_log_events_rules(logs):
    group, stream = make_stream(logs)
    t = now_ms()
    with pytest.raises(ClientError) as e:
        logs.put_log_events(logGroupName=group, logStreamName=stream,
                            logEvents=[{"timestamp": t, "message": "b"}, {"timestamp": t - 1, "message": "a"}])
    assert error_of(e) == ("InvalidParameterException",
                           "Log events in a single PutLogEvents request must be in chronological order.")
    with pytest.raises(ClientError) as e:
        logs.put_log_events(logGroupName=group, logStreamName=stream,
                            logEvents=[{"timestamp": t - 25 * 3600_000, "message": "a"}, {"timestamp": t, "message": "b"}])
    assert error_of(e)[0] == "InvalidParameterException"
    assert "24 hours" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        logs.put_log_events(logGroupName=group, logStreamName="missing", logEvents=[{"timestamp": t, "message": "a"}])
    assert error_of(e) == ("ResourceNotFoundException", "The specified log stream does not exist.")
    with pytest.raises(ClientError) as e:
        logs.put_log_events(logGroupName="missing", logStreamName=stream, logEvents=[{"timestamp": t, "message": "a"}])
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.put_log_events(logGroupName=group, logStreamName=stream,
                            logEvents=[{"timestamp": t + i, "message": "x" * 200_000} for i in range(6)])
    assert error_of(e)[0] == "InvalidParameterException"


def test_too_old_and_too_new_events_are_rejected_not_stored(logs):
    group, stream = make_stream(logs)
    t = now_ms()
    events = [
        {"timestamp": t - 15 * 86400_000, "message": "ancient"},
        {"timestamp": t - 15 * 86400_000 + 1, "message": "ancient2"},
        {"timestamp": t, "message": "fresh"},
        {"timestamp": t + 3 * 3600_000, "message": "future"},
    ]
    # The batch spans more than 24 hours, so send the old ones and the rest apart.
    old = logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events[:2])
    assert old["rejectedLogEventsInfo"] == {"tooOldLogEventEndIndex": 1}
    new = logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=events[2:])
    assert new["rejectedLogEventsInfo"] == {"tooNewLogEventStartIndex": 1}
    events = logs.get_log_events(logGroupName=group, logStreamName=stream)["events"]
    assert [e["message"] for e in events] == ["fresh"]


def test_retention_hides_expired_events_and_reports_them(logs):
    group, stream = make_stream(logs)
    logs.put_retention_policy(logGroupName=group, retentionInDays=1)
    t = now_ms()
    resp = logs.put_log_events(logGroupName=group, logStreamName=stream, logEvents=[
        {"timestamp": t - 2 * 86400_000, "message": "expired"},
        {"timestamp": t - 2 * 86400_000 + 5, "message": "expired too"},
    ])
    assert resp["rejectedLogEventsInfo"] == {"expiredLogEventEndIndex": 1}
    assert logs.filter_log_events(logGroupName=group)["events"] == []


def test_get_log_events_tokens_walk_forward_and_backward(logs):
    group, stream = make_stream(logs)
    put(logs, group, stream, [f"m{i}" for i in range(10)], now_ms() - 1000)
    tail = logs.get_log_events(logGroupName=group, logStreamName=stream, limit=3)
    assert [e["message"] for e in tail["events"]] == ["m7", "m8", "m9"]
    back = logs.get_log_events(logGroupName=group, logStreamName=stream, limit=3, nextToken=tail["nextBackwardToken"])
    assert [e["message"] for e in back["events"]] == ["m4", "m5", "m6"]
    head = logs.get_log_events(logGroupName=group, logStreamName=stream, limit=4, startFromHead=True)
    assert [e["message"] for e in head["events"]] == ["m0", "m1", "m2", "m3"]
    fwd = logs.get_log_events(logGroupName=group, logStreamName=stream, limit=4, nextToken=head["nextForwardToken"])
    assert [e["message"] for e in fwd["events"]] == ["m4", "m5", "m6", "m7"]
    end = logs.get_log_events(logGroupName=group, logStreamName=stream, nextToken=tail["nextForwardToken"])
    assert end["events"] == []
    # At the end the forward token repeats: that is how SDKs know to stop.
    assert end["nextForwardToken"] == tail["nextForwardToken"]
    assert tail["nextForwardToken"].startswith("f/") and tail["nextBackwardToken"].startswith("b/")
    ranged = logs.get_log_events(logGroupName=group, logStreamName=stream, startFromHead=True,
                                 startTime=head["events"][2]["timestamp"], endTime=head["events"][3]["timestamp"])
    assert [e["message"] for e in ranged["events"]] == ["m2"]
    with pytest.raises(ClientError) as e:
        logs.get_log_events(logGroupName=group, logStreamName=stream, nextToken="garbage")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.get_log_events(logGroupName=group, logStreamName="nope")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_filter_log_events_across_streams_with_patterns(logs):
    logs.create_log_group(logGroupName="g")
    for s in ["api-1", "api-2", "batch"]:
        logs.create_log_stream(logGroupName="g", logStreamName=s)
    t = now_ms() - 10_000
    put(logs, "g", "api-1", ["ERROR db timeout", "INFO ok", json.dumps({"level": "error", "code": 503})], t)
    put(logs, "g", "api-2", ["WARN slow", "ERROR will retry", json.dumps({"level": "info", "code": 200})], t + 100)
    put(logs, "g", "batch", ["ERROR batch failed"], t + 200)

    def messages(**kw):
        return [e["message"] for e in logs.filter_log_events(logGroupName="g", **kw)["events"]]

    assert len(messages()) == 7
    assert messages(filterPattern="ERROR") == ["ERROR db timeout", "ERROR will retry", "ERROR batch failed"]
    assert messages(filterPattern='"db timeout"') == ["ERROR db timeout"]
    assert messages(filterPattern="?WARN ?timeout") == ["ERROR db timeout", "WARN slow"]
    assert messages(filterPattern="ERROR -retry -batch") == ["ERROR db timeout"]
    assert messages(filterPattern='{ $.level = "error" }') == ['{"level": "error", "code": 503}']
    assert messages(filterPattern='{ $.level != "error" }') == ['{"level": "info", "code": 200}']
    assert messages(filterPattern="{ $.code > 300 }") == ['{"level": "error", "code": 503}']
    assert messages(filterPattern="ERROR", logStreamNames=["api-2", "batch"]) == ["ERROR will retry", "ERROR batch failed"]
    assert messages(filterPattern="ERROR", logStreamNamePrefix="api") == ["ERROR db timeout", "ERROR will retry"]
    assert messages(startTime=t + 100, endTime=t + 101) == ["WARN slow", "ERROR will retry"]
    event = logs.filter_log_events(logGroupName="g", limit=1)["events"][0]
    assert event["logStreamName"] == "api-1" and event["eventId"] and event["timestamp"] == t
    assert messages(filterPattern="[level = WARN, word]") == ["WARN slow"]
    assert messages(filterPattern="[level = ERROR, ...]") == ["ERROR db timeout", "ERROR will retry", "ERROR batch failed"]
    with pytest.raises(ClientError) as e:
        logs.filter_log_events(logGroupName="g", filterPattern='{ $.level = "x" ')
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.filter_log_events(logGroupName="missing")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_filter_log_events_paginates_with_next_token(logs):
    group, stream = make_stream(logs)
    put(logs, group, stream, [f"line {i}" for i in range(7)], now_ms() - 1000)
    seen, token = [], None
    while True:
        kw = {"nextToken": token} if token else {}
        page = logs.filter_log_events(logGroupName=group, limit=3, **kw)
        seen += [e["message"] for e in page["events"]]
        token = page.get("nextToken")
        if not token:
            break
    assert seen == [f"line {i}" for i in range(7)]
    paginated = [e["message"] for p in logs.get_paginator("filter_log_events").paginate(logGroupName=group, PaginationConfig={"PageSize": 2}) for e in p["events"]]
    assert paginated == seen


def test_tags_through_both_tag_apis(logs):
    logs.create_log_group(logGroupName="g", tags={"a": "1"})
    arn = logs.describe_log_groups()["logGroups"][0]["logGroupArn"]
    logs.tag_resource(resourceArn=arn, tags={"b": "2"})
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"a": "1", "b": "2"}
    logs.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert logs.list_tags_log_group(logGroupName="g")["tags"] == {"b": "2"}
    logs.tag_log_group(logGroupName="g", tags={"c": "3"})
    logs.untag_log_group(logGroupName="g", tags=["b"])
    assert logs.list_tags_for_resource(resourceArn=arn)["tags"] == {"c": "3"}
    # DescribeLogGroups' `arn` (with `:*`) is not a tag operation's resource.
    with pytest.raises(ClientError) as e:
        logs.list_tags_for_resource(resourceArn=arn + ":*")
    assert error_of(e) == ("ValidationException", "Invalid resourceArn")
    with pytest.raises(ClientError) as e:
        logs.list_tags_log_group(logGroupName="missing")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_state_is_per_region(client):
    east, west = client("logs"), client("logs", region_name="eu-west-1")
    east.create_log_group(logGroupName="g")
    assert west.describe_log_groups()["logGroups"] == []
    west.create_log_group(logGroupName="g")


def test_aws_cli_writes_and_filters_events(aws):
    aws("logs", "create-log-group", "--log-group-name", "cli")
    aws("logs", "create-log-stream", "--log-group-name", "cli", "--log-stream-name", "s")
    events = json.dumps([{"timestamp": now_ms(), "message": "hello from the cli"}])
    aws("logs", "put-log-events", "--log-group-name", "cli", "--log-stream-name", "s", "--log-events", events)
    out = json.loads(aws("logs", "filter-log-events", "--log-group-name", "cli", "--filter-pattern", "hello").stdout)
    assert [e["message"] for e in out["events"]] == ["hello from the cli"]
    missing = aws("logs", "describe-log-streams", "--log-group-name", "nope", check=False)
    assert missing.returncode != 0 and "ResourceNotFoundException" in missing.stderr
