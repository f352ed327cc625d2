"""Kinesis Data Streams, black-box with boto3: streams, shards, records and iterators."""

from __future__ import annotations

import hashlib

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def error(excinfo):
    return excinfo.value.response["Error"]


def make(kinesis, name="s", shards=2):
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    return kinesis.describe_stream(StreamName=name)["StreamDescription"]


def test_create_describe_and_waiter(kinesis):
    kinesis.create_stream(StreamName="orders", ShardCount=3, Tags={"team": "a"})
    kinesis.get_waiter("stream_exists").wait(StreamName="orders", WaiterConfig={"Delay": 1})
    d = kinesis.describe_stream(StreamName="orders")["StreamDescription"]
    account = d["StreamARN"].split(":")[4]
    assert d["StreamARN"] == f"arn:aws:kinesis:us-east-1:{account}:stream/orders"
    assert d["StreamStatus"] == "ACTIVE"
    assert d["RetentionPeriodHours"] == 24
    assert d["StreamModeDetails"] == {"StreamMode": "PROVISIONED"}
    ids = [s["ShardId"] for s in d["Shards"]]
    assert ids == ["shardId-000000000000", "shardId-000000000001", "shardId-000000000002"]
    ranges = [s["HashKeyRange"] for s in d["Shards"]]
    assert ranges[0]["StartingHashKey"] == "0"
    assert ranges[0]["EndingHashKey"] == "113427455640312821154458202477256070484"
    assert ranges[1]["StartingHashKey"] == "113427455640312821154458202477256070485"
    assert ranges[2]["EndingHashKey"] == str(2**128 - 1)
    start = d["Shards"][0]["SequenceNumberRange"]["StartingSequenceNumber"]
    assert len(start) == 56 and start.isdigit()
    s = kinesis.describe_stream_summary(StreamARN=d["StreamARN"])["StreamDescriptionSummary"]
    assert s["OpenShardCount"] == 3 and s["StreamName"] == "orders"


def test_on_demand_has_four_shards(kinesis):
    kinesis.create_stream(StreamName="od", StreamModeDetails={"StreamMode": "ON_DEMAND"})
    d = kinesis.describe_stream(StreamName="od")["StreamDescription"]
    assert len(d["Shards"]) == 4
    assert d["StreamModeDetails"] == {"StreamMode": "ON_DEMAND"}
    kinesis.update_stream_mode(StreamARN=d["StreamARN"], StreamModeDetails={"StreamMode": "PROVISIONED"})
    s = kinesis.describe_stream_summary(StreamName="od")["StreamDescriptionSummary"]
    assert s["StreamModeDetails"] == {"StreamMode": "PROVISIONED"}


def test_errors_use_aws_messages(kinesis):
    make(kinesis, "dup", 1)
    with pytest.raises(ClientError) as e:
        kinesis.create_stream(StreamName="dup", ShardCount=1)
    assert error(e)["Code"] == "ResourceInUseException"
    assert error(e)["Message"].startswith("Stream dup under account ")
    with pytest.raises(ClientError) as e:
        kinesis.describe_stream(StreamName="nope")
    assert error(e)["Code"] == "ResourceNotFoundException"
    assert error(e)["Message"].startswith("Stream nope under account ") and error(e)["Message"].endswith(" not found.")
    with pytest.raises(ClientError) as e:
        kinesis.create_stream(StreamName="big", ShardCount=501)
    assert error(e)["Code"] == "LimitExceededException"
    with pytest.raises(ClientError) as e:
        kinesis.describe_stream_summary()
    assert error(e)["Code"] == "InvalidArgumentException"
    with pytest.raises(ClientError) as e:
        kinesis.create_stream(StreamName="no spaces", ShardCount=1)
    assert error(e)["Code"] == "ValidationException"
    assert error(e)["Message"].endswith("at 'streamName' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")


def test_delete_stream(kinesis):
    d = make(kinesis, "gone", 1)
    kinesis.put_record(StreamName="gone", Data=b"x", PartitionKey="k")
    kinesis.delete_stream(StreamARN=d["StreamARN"])
    kinesis.get_waiter("stream_not_exists").wait(StreamName="gone", WaiterConfig={"Delay": 1})
    assert kinesis.list_streams()["StreamNames"] == []
    make(kinesis, "gone", 1)
    it = kinesis.get_shard_iterator(StreamName="gone", ShardId="shardId-000000000000", ShardIteratorType="TRIM_HORIZON")
    assert kinesis.get_records(ShardIterator=it["ShardIterator"])["Records"] == []


def test_list_streams_pages(kinesis):
    for n in ["c", "a", "b"]:
        kinesis.create_stream(StreamName=n, ShardCount=1)
    page = kinesis.list_streams(Limit=2)
    assert page["StreamNames"] == ["a", "b"] and page["HasMoreStreams"]
    assert [s["StreamName"] for s in page["StreamSummaries"]] == ["a", "b"]
    rest = kinesis.list_streams(NextToken=page["NextToken"])
    assert rest["StreamNames"] == ["c"] and not rest["HasMoreStreams"]
    assert kinesis.list_streams(ExclusiveStartStreamName="a")["StreamNames"] == ["b", "c"]
    names = [n for p in kinesis.get_paginator("list_streams").paginate(PaginationConfig={"PageSize": 1}) for n in p["StreamNames"]]
    assert names == ["a", "b", "c"]


def test_retention(kinesis):
    make(kinesis, "r", 1)
    kinesis.increase_stream_retention_period(StreamName="r", RetentionPeriodHours=48)
    assert kinesis.describe_stream(StreamName="r")["StreamDescription"]["RetentionPeriodHours"] == 48
    with pytest.raises(ClientError) as e:
        kinesis.increase_stream_retention_period(StreamName="r", RetentionPeriodHours=30)
    assert error(e)["Message"] == (
        "Requested retention period (30 hours) for stream r can not be shorter than existing "
        "retention period (48 hours). Use DecreaseRetentionPeriod API.")
    with pytest.raises(ClientError) as e:
        kinesis.increase_stream_retention_period(StreamName="r", RetentionPeriodHours=9000)
    assert error(e)["Code"] == "InvalidArgumentException"
    assert "Maximum allowed retention period is 8760 hours" in error(e)["Message"]
    kinesis.decrease_stream_retention_period(StreamName="r", RetentionPeriodHours=24)
    with pytest.raises(ClientError) as e:
        kinesis.decrease_stream_retention_period(StreamName="r", RetentionPeriodHours=48)
    assert "can not be longer than existing retention period" in error(e)["Message"]


def test_tags(kinesis):
    d = make(kinesis, "t", 1)
    kinesis.add_tags_to_stream(StreamName="t", Tags={"b": "2", "a": "1"})
    tags = kinesis.list_tags_for_stream(StreamName="t")
    assert tags["Tags"] == [{"Key": "a", "Value": "1"}, {"Key": "b", "Value": "2"}]
    assert not tags["HasMoreTags"]
    page = kinesis.list_tags_for_stream(StreamName="t", Limit=1)
    assert page["HasMoreTags"] and len(page["Tags"]) == 1
    kinesis.tag_resource(ResourceARN=d["StreamARN"], Tags={"c": "3"})
    kinesis.remove_tags_from_stream(StreamName="t", TagKeys=["a"])
    kinesis.untag_resource(ResourceARN=d["StreamARN"], TagKeys=["b"])
    assert kinesis.list_tags_for_resource(ResourceARN=d["StreamARN"])["Tags"] == [{"Key": "c", "Value": "3"}]


def shard_for(key, shards):
    h = int.from_bytes(hashlib.md5(key.encode()).digest(), "big")
    for s in shards:
        r = s["HashKeyRange"]
        if int(r["StartingHashKey"]) <= h <= int(r["EndingHashKey"]):
            return s["ShardId"]
    raise AssertionError("no shard")


def iterator(kinesis, stream, shard, kind, **extra):
    return kinesis.get_shard_iterator(StreamName=stream, ShardId=shard, ShardIteratorType=kind, **extra)["ShardIterator"]


def test_put_routes_by_md5_and_sequence_increases(kinesis):
    d = make(kinesis, "p", 4)
    seqs = {}
    for i in range(20):
        key = f"key-{i}"
        r = kinesis.put_record(StreamName="p", Data=f"v{i}".encode(), PartitionKey=key)
        assert r["ShardId"] == shard_for(key, d["Shards"])
        assert len(r["SequenceNumber"]) == 56
        prev = seqs.get(r["ShardId"])
        assert prev is None or int(r["SequenceNumber"]) > int(prev)
        seqs[r["ShardId"]] = r["SequenceNumber"]
    r = kinesis.put_record(StreamName="p", Data=b"x", PartitionKey="k", ExplicitHashKey=str(2**128 - 1))
    assert r["ShardId"] == "shardId-000000000003"
    with pytest.raises(ClientError) as e:
        kinesis.put_record(StreamName="p", Data=b"x", PartitionKey="k", ExplicitHashKey=str(2**128))
    assert error(e)["Code"] == "InvalidArgumentException"


def test_put_records_and_read_in_order(kinesis):
    make(kinesis, "pr", 1)
    out = kinesis.put_records(StreamName="pr", Records=[{"Data": f"{i}".encode(), "PartitionKey": "k"} for i in range(30)])
    assert out["FailedRecordCount"] == 0 and len(out["Records"]) == 30
    it = iterator(kinesis, "pr", "shardId-000000000000", "TRIM_HORIZON")
    got = kinesis.get_records(ShardIterator=it, Limit=10)
    assert [r["Data"] for r in got["Records"]] == [f"{i}".encode() for i in range(10)]
    assert got["MillisBehindLatest"] >= 0
    assert got["Records"][0]["PartitionKey"] == "k"
    assert "ApproximateArrivalTimestamp" in got["Records"][0]
    rest = kinesis.get_records(ShardIterator=got["NextShardIterator"])
    assert [r["Data"] for r in rest["Records"]] == [f"{i}".encode() for i in range(10, 30)]
    assert rest["MillisBehindLatest"] == 0
    tip = kinesis.get_records(ShardIterator=rest["NextShardIterator"])
    assert tip["Records"] == [] and tip["NextShardIterator"]


def test_put_records_limits(kinesis, client):
    make(kinesis, "lim", 1)
    with pytest.raises(ClientError) as e:
        kinesis.put_records(StreamName="lim", Records=[{"Data": b"x", "PartitionKey": "k"}] * 501)
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kinesis.put_records(StreamName="lim", Records=[{"Data": b"x" * (1024 * 1024), "PartitionKey": "k"}] * 11)
    assert error(e) == {"Code": "InvalidArgumentException", "Message": "Records size exceeds 10 MB limit"}
    with pytest.raises(ClientError) as e:
        kinesis.put_record(StreamName="lim", Data=b"x" * (1024 * 1024 + 1), PartitionKey="k")
    assert error(e)["Code"] == "ValidationException"
    assert error(e)["Message"] == ("1 validation error detected: Value at 'data' failed to satisfy constraint: "
                                   "Member must have length less than or equal to 1048576")
    with pytest.raises(ClientError) as e:
        kinesis.put_records(StreamName="lim", Records=[{"Data": b"x", "PartitionKey": "k"},
                                                       {"Data": b"x" * (1024 * 1024 + 1), "PartitionKey": "k"}])
    assert error(e)["Message"] == ("1 validation error detected: Value at 'records.2.member.data' failed to satisfy "
                                   "constraint: Member must have length less than or equal to 1048576")
    unchecked = client("kinesis", config=Config(parameter_validation=False))
    for key, bound in (("", "greater than or equal to 1"), ("k" * 257, "less than or equal to 256")):
        with pytest.raises(ClientError) as e:
            unchecked.put_record(StreamName="lim", Data=b"x", PartitionKey=key)
        assert error(e) == {"Code": "ValidationException",
                            "Message": f"1 validation error detected: Value '{key}' at 'partitionKey' failed to "
                                       f"satisfy constraint: Member must have length {bound}"}
    six = kinesis.put_records(StreamName="lim", Records=[{"Data": b"x" * (1024 * 1024), "PartitionKey": "k"}] * 6)
    assert six["FailedRecordCount"] == 0


def test_iterator_types(kinesis):
    make(kinesis, "it", 1)
    shard = "shardId-000000000000"
    seqs = [kinesis.put_record(StreamName="it", Data=f"{i}".encode(), PartitionKey="k")["SequenceNumber"] for i in range(5)]
    latest = iterator(kinesis, "it", shard, "LATEST")
    assert kinesis.get_records(ShardIterator=latest)["Records"] == []
    at = iterator(kinesis, "it", shard, "AT_SEQUENCE_NUMBER", StartingSequenceNumber=seqs[2])
    assert [r["Data"] for r in kinesis.get_records(ShardIterator=at)["Records"]] == [b"2", b"3", b"4"]
    after = iterator(kinesis, "it", shard, "AFTER_SEQUENCE_NUMBER", StartingSequenceNumber=seqs[2])
    assert [r["Data"] for r in kinesis.get_records(ShardIterator=after)["Records"]] == [b"3", b"4"]
    kinesis.put_record(StreamName="it", Data=b"new", PartitionKey="k")
    assert [r["Data"] for r in kinesis.get_records(ShardIterator=latest)["Records"]] == [b"new"]
    import datetime
    future = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(hours=1)
    ts = iterator(kinesis, "it", shard, "AT_TIMESTAMP", Timestamp=future)
    assert kinesis.get_records(ShardIterator=ts)["Records"] == []
    past = iterator(kinesis, "it", shard, "AT_TIMESTAMP", Timestamp=datetime.datetime(2000, 1, 1))
    assert len(kinesis.get_records(ShardIterator=past)["Records"]) == 6
    with pytest.raises(ClientError) as e:
        iterator(kinesis, "it", shard, "AT_SEQUENCE_NUMBER", StartingSequenceNumber="1" * 56)
    assert error(e)["Code"] == "InvalidArgumentException"
    with pytest.raises(ClientError) as e:
        iterator(kinesis, "it", "shardId-000000000009", "LATEST")
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.get_records(ShardIterator="bm90IGFuIGl0ZXJhdG9y")
    assert error(e)["Code"] == "InvalidArgumentException"


def test_iterators_expire_after_five_minutes(kinesis, server):
    make(kinesis, "exp", 1)
    it = iterator(kinesis, "exp", "shardId-000000000000", "TRIM_HORIZON")
    server.advance_clock(301)
    with pytest.raises(ClientError) as e:
        kinesis.get_records(ShardIterator=it)
    assert error(e)["Code"] == "ExpiredIteratorException"
    assert "tolerated delay of 300000 milliseconds" in error(e)["Message"]


def test_records_past_retention_are_trimmed(kinesis, server):
    make(kinesis, "ret", 1)
    kinesis.put_record(StreamName="ret", Data=b"old", PartitionKey="k")
    server.advance_clock(23 * 3600)
    kinesis.put_record(StreamName="ret", Data=b"new", PartitionKey="k")
    it = iterator(kinesis, "ret", "shardId-000000000000", "TRIM_HORIZON")
    behind = kinesis.get_records(ShardIterator=it, Limit=1)
    assert behind["Records"][0]["Data"] == b"old" and behind["MillisBehindLatest"] >= 0
    server.advance_clock(2 * 3600)
    it = iterator(kinesis, "ret", "shardId-000000000000", "TRIM_HORIZON")
    assert [r["Data"] for r in kinesis.get_records(ShardIterator=it)["Records"]] == [b"new"]


def test_list_shards(kinesis):
    d = make(kinesis, "ls", 5)
    page = kinesis.list_shards(StreamName="ls", MaxResults=2)
    assert [s["ShardId"] for s in page["Shards"]] == ["shardId-000000000000", "shardId-000000000001"]
    rest = kinesis.list_shards(NextToken=page["NextToken"])
    assert len(rest["Shards"]) == 3 and "NextToken" not in rest
    after = kinesis.list_shards(StreamARN=d["StreamARN"], ExclusiveStartShardId="shardId-000000000003")
    assert [s["ShardId"] for s in after["Shards"]] == ["shardId-000000000004"]
    filtered = kinesis.list_shards(StreamName="ls", ShardFilter={"Type": "AFTER_SHARD_ID", "ShardId": "shardId-000000000002"})
    assert len(filtered["Shards"]) == 2
    assert len(kinesis.list_shards(StreamName="ls", ShardFilter={"Type": "AT_LATEST"})["Shards"]) == 5
    with pytest.raises(ClientError) as e:
        kinesis.list_shards(StreamName="ls", NextToken=page["NextToken"])
    assert error(e)["Code"] == "InvalidArgumentException"
