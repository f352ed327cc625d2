"""Kinesis Data Streams, black-box with boto3: resharding, closed shards, monitoring,
encryption with KMS keys, limits, resource policies and stream consumers."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

MAX = 2**128 - 1
HALF = 2**127


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def error(excinfo):
    return excinfo.value.response["Error"]


def make(kinesis, name="s", shards=1):
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    return kinesis.describe_stream(StreamName=name)["StreamDescription"]


def shards(kinesis, name, **extra):
    return {s["ShardId"]: s for s in kinesis.list_shards(StreamName=name, **extra)["Shards"]}


def read_all(kinesis, name, shard):
    it = kinesis.get_shard_iterator(StreamName=name, ShardId=shard, ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    return kinesis.get_records(ShardIterator=it)


def test_split_shard_closes_parent_and_opens_children(kinesis):
    make(kinesis, "sp")
    kinesis.put_record(StreamName="sp", Data=b"before", PartitionKey="a")
    kinesis.split_shard(StreamName="sp", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    d = kinesis.describe_stream(StreamName="sp")["StreamDescription"]
    assert d["StreamStatus"] == "ACTIVE"
    by_id = {s["ShardId"]: s for s in d["Shards"]}
    parent = by_id["shardId-000000000000"]
    assert "EndingSequenceNumber" in parent["SequenceNumberRange"]
    low, high = by_id["shardId-000000000001"], by_id["shardId-000000000002"]
    assert low["ParentShardId"] == high["ParentShardId"] == "shardId-000000000000"
    assert low["HashKeyRange"] == {"StartingHashKey": "0", "EndingHashKey": str(HALF - 1)}
    assert high["HashKeyRange"] == {"StartingHashKey": str(HALF), "EndingHashKey": str(MAX)}
    assert "AdjacentParentShardId" not in low
    put = kinesis.put_record(StreamName="sp", Data=b"after", PartitionKey="x", ExplicitHashKey=str(HALF + 5))
    assert put["ShardId"] == "shardId-000000000002"
    summary = kinesis.describe_stream_summary(StreamName="sp")["StreamDescriptionSummary"]
    assert summary["OpenShardCount"] == 2


def test_closed_shard_reads_to_its_end_then_names_children(kinesis):
    make(kinesis, "cl")
    for i in range(3):
        kinesis.put_record(StreamName="cl", Data=b"%d" % i, PartitionKey="k")
    kinesis.split_shard(StreamName="cl", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    it = kinesis.get_shard_iterator(StreamName="cl", ShardId="shardId-000000000000", ShardIteratorType="TRIM_HORIZON")[
        "ShardIterator"
    ]
    first = kinesis.get_records(ShardIterator=it, Limit=2)
    assert [r["Data"] for r in first["Records"]] == [b"0", b"1"]
    assert first["NextShardIterator"]
    last = kinesis.get_records(ShardIterator=first["NextShardIterator"])
    assert [r["Data"] for r in last["Records"]] == [b"2"]
    assert last.get("NextShardIterator") is None
    children = {c["ShardId"]: c for c in last["ChildShards"]}
    assert set(children) == {"shardId-000000000001", "shardId-000000000002"}
    assert children["shardId-000000000001"]["ParentShards"] == ["shardId-000000000000"]
    latest = kinesis.get_shard_iterator(StreamName="cl", ShardId="shardId-000000000000", ShardIteratorType="LATEST")[
        "ShardIterator"
    ]
    assert kinesis.get_records(ShardIterator=latest).get("NextShardIterator") is None


def test_split_shard_errors(kinesis):
    make(kinesis, "se")
    with pytest.raises(ClientError) as e:
        kinesis.split_shard(StreamName="se", ShardToSplit="shardId-000000000000", NewStartingHashKey="1")
    assert error(e)["Code"] == "InvalidArgumentException"
    assert error(e)["Message"] == (
        "NewStartingHashKey 1 used in SplitShard() on shard shardId-000000000000 in stream se under account "
        f"000000000000 is not both greater than one plus the shard's StartingHashKey 0 and less than the shard's EndingHashKey {MAX}."
    )
    with pytest.raises(ClientError) as e:
        kinesis.split_shard(StreamName="se", ShardToSplit="shardId-000000000009", NewStartingHashKey=str(HALF))
    assert error(e)["Code"] == "ResourceNotFoundException"
    assert error(e)["Message"] == "Could not find shard shardId-000000000009 in stream se under account 000000000000."
    kinesis.split_shard(StreamName="se", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    with pytest.raises(ClientError) as e:
        kinesis.split_shard(StreamName="se", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    assert error(e)["Code"] == "InvalidArgumentException"
    assert "has already been merged or split, and thus is not eligible for merging or splitting." in error(e)["Message"]
    with pytest.raises(ClientError) as e:
        kinesis.split_shard(StreamName="nope", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    assert error(e)["Code"] == "ResourceNotFoundException"


def test_merge_shards(kinesis):
    make(kinesis, "mg", 3)
    with pytest.raises(ClientError) as e:
        kinesis.merge_shards(
            StreamName="mg", ShardToMerge="shardId-000000000000", AdjacentShardToMerge="shardId-000000000002"
        )
    assert error(e)["Code"] == "InvalidArgumentException"
    assert error(e)["Message"] == (
        "Shards shardId-000000000000 and shardId-000000000002 in stream mg under account 000000000000 "
        "are not an adjacent pair of shards eligible for merging"
    )
    kinesis.put_record(StreamName="mg", Data=b"x", PartitionKey="k", ExplicitHashKey="0")
    kinesis.merge_shards(StreamName="mg", ShardToMerge="shardId-000000000001", AdjacentShardToMerge="shardId-000000000000")
    merged = shards(kinesis, "mg")["shardId-000000000003"]
    assert merged["ParentShardId"] == "shardId-000000000001"
    assert merged["AdjacentParentShardId"] == "shardId-000000000000"
    assert merged["HashKeyRange"]["StartingHashKey"] == "0"
    assert merged["HashKeyRange"]["EndingHashKey"] == "226854911280625642308916404954512140969"
    old = read_all(kinesis, "mg", "shardId-000000000000")
    assert [r["Data"] for r in old["Records"]] == [b"x"] and old.get("NextShardIterator") is None
    assert [c["ParentShards"] for c in old["ChildShards"]] == [["shardId-000000000000", "shardId-000000000001"]]
    assert kinesis.put_record(StreamName="mg", Data=b"y", PartitionKey="k", ExplicitHashKey="0")["ShardId"] == (
        "shardId-000000000003"
    )
    with pytest.raises(ClientError) as e:
        kinesis.merge_shards(
            StreamName="mg", ShardToMerge="shardId-000000000000", AdjacentShardToMerge="shardId-000000000001"
        )
    assert error(e)["Code"] == "InvalidArgumentException"


def test_update_shard_count(kinesis):
    d = make(kinesis, "us", 2)
    out = kinesis.update_shard_count(StreamName="us", TargetShardCount=4, ScalingType="UNIFORM_SCALING")
    assert out["CurrentShardCount"] == 2 and out["TargetShardCount"] == 4
    assert out["StreamARN"] == d["StreamARN"] and out["StreamName"] == "us"
    summary = kinesis.describe_stream_summary(StreamName="us")["StreamDescriptionSummary"]
    assert summary["OpenShardCount"] == 4 and summary["StreamStatus"] == "ACTIVE"
    open_now = shards(kinesis, "us", ShardFilter={"Type": "AT_LATEST"})
    assert sorted(open_now) == [f"shardId-00000000000{i}" for i in range(2, 6)]
    assert [s["HashKeyRange"]["StartingHashKey"] for s in open_now.values()][1] == str(2**126 - 1 + 1)
    assert open_now["shardId-000000000002"]["ParentShardId"] == "shardId-000000000000"
    assert len(shards(kinesis, "us")) == 6
    assert len(shards(kinesis, "us", ShardFilter={"Type": "FROM_TRIM_HORIZON"})) == 6
    assert len(shards(kinesis, "us", ShardFilter={"Type": "AT_TRIM_HORIZON"})) == 2
    for target, word in [(9, "more than double"), (1, "less than half")]:
        with pytest.raises(ClientError) as e:
            kinesis.update_shard_count(StreamName="us", TargetShardCount=target, ScalingType="UNIFORM_SCALING")
        assert error(e)["Code"] == "InvalidArgumentException"
        assert word in error(e)["Message"]


def test_update_shard_count_ten_a_day(kinesis, server):
    make(kinesis, "daily", 1)
    for i in range(10):
        kinesis.update_shard_count(StreamName="daily", TargetShardCount=1 + i % 2, ScalingType="UNIFORM_SCALING")
    with pytest.raises(ClientError) as e:
        kinesis.update_shard_count(StreamName="daily", TargetShardCount=2, ScalingType="UNIFORM_SCALING")
    assert error(e)["Code"] == "LimitExceededException"
    server.advance_clock(86_401)
    kinesis.update_shard_count(StreamName="daily", TargetShardCount=2, ScalingType="UNIFORM_SCALING")


def test_shard_limit(kinesis):
    make(kinesis, "big", 400)
    with pytest.raises(ClientError) as e:
        kinesis.update_shard_count(StreamName="big", TargetShardCount=600, ScalingType="UNIFORM_SCALING")
    assert error(e)["Code"] == "LimitExceededException"
    assert "Limit: 500" in error(e)["Message"]
    limits = kinesis.describe_limits()
    assert limits["ShardLimit"] == 500 and limits["OpenShardCount"] == 400
    assert limits["OnDemandStreamCount"] == 0 and limits["OnDemandStreamCountLimit"] == 50


def test_enhanced_monitoring(kinesis):
    make(kinesis, "mon")
    out = kinesis.enable_enhanced_monitoring(StreamName="mon", ShardLevelMetrics=["IncomingBytes"])
    assert out["CurrentShardLevelMetrics"] == [] and out["DesiredShardLevelMetrics"] == ["IncomingBytes"]
    out = kinesis.enable_enhanced_monitoring(StreamName="mon", ShardLevelMetrics=["ALL"])
    assert len(out["DesiredShardLevelMetrics"]) == 7
    out = kinesis.disable_enhanced_monitoring(StreamName="mon", ShardLevelMetrics=["IncomingBytes", "OutgoingBytes"])
    assert "IncomingBytes" not in out["DesiredShardLevelMetrics"] and len(out["DesiredShardLevelMetrics"]) == 5
    d = kinesis.describe_stream(StreamName="mon")["StreamDescription"]
    assert d["EnhancedMonitoring"][0]["ShardLevelMetrics"] == out["DesiredShardLevelMetrics"]
    with pytest.raises(ClientError) as e:
        kinesis.enable_enhanced_monitoring(StreamName="nope", ShardLevelMetrics=["ALL"])
    assert error(e)["Code"] == "ResourceNotFoundException"


def test_stream_encryption_checks_the_kms_key(kinesis, client):
    make(kinesis, "enc")
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]
    kinesis.start_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId=key["KeyId"])
    d = kinesis.describe_stream(StreamName="enc")["StreamDescription"]
    assert d["EncryptionType"] == "KMS" and d["KeyId"] == key["KeyId"]
    assert kinesis.put_record(StreamName="enc", Data=b"x", PartitionKey="k")["EncryptionType"] == "KMS"
    kinesis.stop_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId=key["KeyId"])
    s = kinesis.describe_stream_summary(StreamName="enc")["StreamDescriptionSummary"]
    assert s["EncryptionType"] == "NONE" and "KeyId" not in s
    kinesis.start_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId="alias/aws/kinesis")
    with pytest.raises(ClientError) as e:
        kinesis.start_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId="alias/missing")
    assert error(e)["Code"] == "KMSNotFoundException"
    kms.disable_key(KeyId=key["KeyId"])
    with pytest.raises(ClientError) as e:
        kinesis.start_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId=key["KeyId"])
    assert error(e)["Code"] == "KMSDisabledException"
    kms.enable_key(KeyId=key["KeyId"])
    kms.schedule_key_deletion(KeyId=key["KeyId"], PendingWindowInDays=7)
    with pytest.raises(ClientError) as e:
        kinesis.start_stream_encryption(StreamName="enc", EncryptionType="KMS", KeyId=key["KeyId"])
    assert error(e)["Code"] == "KMSInvalidStateException"
    with pytest.raises(ClientError) as e:
        kinesis.start_stream_encryption(StreamName="enc", EncryptionType="NONE", KeyId=key["KeyId"])
    assert error(e)["Code"] == "InvalidArgumentException"


def test_resource_policies(kinesis):
    arn = make(kinesis, "pol")["StreamARN"]
    assert kinesis.get_resource_policy(ResourceARN=arn)["Policy"] == "{}"
    policy = json.dumps(
        {
            "Version": "2012-10-17",
            "Statement": [{"Effect": "Allow", "Principal": {"AWS": "111122223333"}, "Action": "kinesis:GetRecords", "Resource": arn}],
        }
    )
    kinesis.put_resource_policy(ResourceARN=arn, Policy=policy)
    assert json.loads(kinesis.get_resource_policy(ResourceARN=arn)["Policy"]) == json.loads(policy)
    consumer = kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="c")["Consumer"]["ConsumerARN"]
    kinesis.put_resource_policy(ResourceARN=consumer, Policy=policy)
    assert kinesis.get_resource_policy(ResourceARN=consumer)["Policy"] == policy
    kinesis.delete_resource_policy(ResourceARN=arn)
    assert kinesis.get_resource_policy(ResourceARN=arn)["Policy"] == "{}"
    with pytest.raises(ClientError) as e:
        kinesis.delete_resource_policy(ResourceARN=arn)
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.put_resource_policy(ResourceARN=arn, Policy="not json")
    assert error(e)["Code"] == "InvalidArgumentException"
    with pytest.raises(ClientError) as e:
        kinesis.get_resource_policy(ResourceARN=arn.replace("pol", "gone"))
    assert error(e)["Code"] == "ResourceNotFoundException"


def test_consumers(kinesis):
    arn = make(kinesis, "fan")["StreamARN"]
    registered = kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="app")["Consumer"]
    assert registered["ConsumerStatus"] == "CREATING"
    assert registered["ConsumerARN"].startswith(f"{arn}/consumer/app:")
    kinesis.get_waiter("stream_exists").wait(StreamName="fan")
    d = kinesis.describe_stream_consumer(ConsumerARN=registered["ConsumerARN"])["ConsumerDescription"]
    assert d["ConsumerStatus"] == "ACTIVE" and d["StreamARN"] == arn and d["ConsumerName"] == "app"
    same = kinesis.describe_stream_consumer(StreamARN=arn, ConsumerName="app")["ConsumerDescription"]
    assert same["ConsumerARN"] == registered["ConsumerARN"]
    with pytest.raises(ClientError) as e:
        kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="app")
    assert error(e)["Code"] == "ResourceInUseException"
    for i in range(19):
        kinesis.register_stream_consumer(StreamARN=arn, ConsumerName=f"c{i:02}")
    with pytest.raises(ClientError) as e:
        kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="one-too-many")
    assert error(e)["Code"] == "LimitExceededException"
    page = kinesis.list_stream_consumers(StreamARN=arn, MaxResults=15)
    assert len(page["Consumers"]) == 15 and page["Consumers"][0]["ConsumerName"] == "app"
    rest = kinesis.list_stream_consumers(StreamARN=arn, NextToken=page["NextToken"])
    assert len(rest["Consumers"]) == 5 and "NextToken" not in rest
    assert kinesis.describe_stream_summary(StreamName="fan")["StreamDescriptionSummary"]["ConsumerCount"] == 20
    kinesis.deregister_stream_consumer(ConsumerARN=registered["ConsumerARN"])
    kinesis.deregister_stream_consumer(StreamARN=arn, ConsumerName="c00")
    with pytest.raises(ClientError) as e:
        kinesis.describe_stream_consumer(ConsumerARN=registered["ConsumerARN"])
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.register_stream_consumer(StreamARN=arn.replace("fan", "gone"), ConsumerName="x")
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.delete_stream(StreamName="fan")
    assert error(e)["Code"] == "ResourceInUseException"
    kinesis.delete_stream(StreamName="fan", EnforceConsumerDeletion=True)
    kinesis.create_stream(StreamName="fan", ShardCount=1)
    assert kinesis.list_stream_consumers(StreamARN=arn)["Consumers"] == []
