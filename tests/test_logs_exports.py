"""CloudWatch Logs export tasks: events written to S3 (through Roto's S3) as gzip objects laid
out as AWS lays them out; DescribeExportTasks and CancelExportTask."""

from __future__ import annotations

import gzip
import time

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def logs(client):
    return client("logs")


@pytest.fixture
def s3(client):
    return client("s3")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def seed(logs, now):
    logs.create_log_group(logGroupName="/app")
    for stream in ["web-1", "web-2", "worker"]:
        logs.create_log_stream(logGroupName="/app", logStreamName=stream)
        logs.put_log_events(logGroupName="/app", logStreamName=stream, logEvents=[
            {"timestamp": now - 5000, "message": f"{stream} old"},
            {"timestamp": now - 1000, "message": f"{stream} new"},
        ])


def test_export_task_writes_each_stream_as_a_gzip_object(logs, s3):
    now = int(time.time() * 1000)
    seed(logs, now)
    s3.create_bucket(Bucket="archive")
    task_id = logs.create_export_task(
        taskName="nightly", logGroupName="/app", logStreamNamePrefix="web",
        fromTime=now - 2000, to=now, destination="archive", destinationPrefix="exports/app",
    )["taskId"]

    keys = {o["Key"] for o in s3.list_objects_v2(Bucket="archive")["Contents"]}
    assert keys == {
        "exports/app/aws-logs-write-test",
        f"exports/app/{task_id}/web-1/000000.gz",
        f"exports/app/{task_id}/web-2/000000.gz",
    }
    body = s3.get_object(Bucket="archive", Key=f"exports/app/{task_id}/web-1/000000.gz")["Body"].read()
    (line,) = gzip.decompress(body).decode().splitlines()
    stamp, message = line.split(" ", 1)
    assert message == "web-1 new"
    assert stamp.endswith("Z") and "T" in stamp
    test_object = s3.get_object(Bucket="archive", Key="exports/app/aws-logs-write-test")["Body"].read()
    assert test_object == b"Permission Check Successful"

    (task,) = logs.describe_export_tasks(taskId=task_id)["exportTasks"]
    assert task["taskName"] == "nightly"
    assert task["logGroupName"] == "/app"
    assert task["destination"] == "archive"
    assert task["destinationPrefix"] == "exports/app"
    assert (task["from"], task["to"]) == (now - 2000, now)
    assert task["status"]["code"] == "COMPLETED"
    assert task["executionInfo"]["completionTime"] >= task["executionInfo"]["creationTime"]
    assert [t["taskId"] for t in logs.describe_export_tasks(statusCode="COMPLETED")["exportTasks"]] == [task_id]
    assert logs.describe_export_tasks(statusCode="RUNNING")["exportTasks"] == []

    with pytest.raises(ClientError) as e:
        logs.cancel_export_task(taskId=task_id)
    assert error_of(e)[0] == "InvalidOperationException"


def test_export_uses_the_default_prefix_and_lists_newest_first(logs, s3, server):
    now = int(time.time() * 1000)
    seed(logs, now)
    s3.create_bucket(Bucket="archive")
    first = logs.create_export_task(logGroupName="/app", fromTime=now - 10_000, to=now, destination="archive")["taskId"]
    server.advance_clock(1)
    second = logs.create_export_task(logGroupName="/app", fromTime=now - 10_000, to=now, destination="archive")["taskId"]
    keys = [o["Key"] for o in s3.list_objects_v2(Bucket="archive", Prefix=f"exportedlogs/{first}/")["Contents"]]
    assert sorted(keys) == [f"exportedlogs/{first}/{s}/000000.gz" for s in ["web-1", "web-2", "worker"]]
    body = s3.get_object(Bucket="archive", Key=f"exportedlogs/{first}/worker/000000.gz")["Body"].read()
    assert [l.split(" ", 1)[1] for l in gzip.decompress(body).decode().splitlines()] == ["worker old", "worker new"]
    page = logs.describe_export_tasks(limit=1)
    assert [t["taskId"] for t in page["exportTasks"]] == [second]
    rest = logs.describe_export_tasks(limit=1, nextToken=page["nextToken"])
    assert [t["taskId"] for t in rest["exportTasks"]] == [first]
    assert "nextToken" not in rest


def test_export_task_errors_are_the_real_ones(logs, s3):
    now = int(time.time() * 1000)
    with pytest.raises(ClientError) as e:
        logs.create_export_task(logGroupName="/missing", fromTime=now - 1000, to=now, destination="archive")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    logs.create_log_group(logGroupName="/app")
    with pytest.raises(ClientError) as e:
        logs.create_export_task(logGroupName="/app", fromTime=now - 1000, to=now, destination="no-such-bucket")
    assert error_of(e) == (
        "InvalidParameterException",
        "The given bucket does not exist. Please make sure the bucket is valid.",
    )
    assert logs.describe_export_tasks()["exportTasks"] == []
    s3.create_bucket(Bucket="archive")
    with pytest.raises(ClientError) as e:
        logs.create_export_task(logGroupName="/app", fromTime=now, to=now - 1000, destination="archive")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.cancel_export_task(taskId="missing")
    assert error_of(e) == ("ResourceNotFoundException", "The specified export task does not exist.")
