"""Kinesis account settings (the minimum throughput billing commitment), and the stream
settings that follow the current model: the largest record a stream takes, an on-demand
stream's warm throughput and its record distribution strategy."""

from __future__ import annotations

import datetime

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError


@pytest.fixture
def kinesis(client):
    return client("kinesis")


@pytest.fixture
def unchecked(client):
    """A client that sends what the model refuses, for the server's own checks."""
    return client("kinesis", config=Config(parameter_validation=False))


def error(excinfo):
    return excinfo.value.response["Error"]


def arn_of(kinesis, name):
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def test_commitment_lasts_at_least_a_day_and_a_pending_end_can_be_cancelled(kinesis, unchecked, server):
    assert kinesis.describe_account_settings()["MinimumThroughputBillingCommitment"] == {"Status": "DISABLED"}
    enabled = kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "ENABLED"})
    commitment = enabled["MinimumThroughputBillingCommitment"]
    assert commitment["Status"] == "ENABLED" and "EndedAt" not in commitment
    assert commitment["EarliestAllowedEndAt"] - commitment["StartedAt"] == datetime.timedelta(hours=24)
    pending = kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "DISABLED"})
    pending = pending["MinimumThroughputBillingCommitment"]
    assert pending["Status"] == "ENABLED_UNTIL_EARLIEST_ALLOWED_END"
    assert pending["EndedAt"] == pending["EarliestAllowedEndAt"]
    again = kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "ENABLED"})
    again = again["MinimumThroughputBillingCommitment"]
    assert again["Status"] == "ENABLED" and again["StartedAt"] == commitment["StartedAt"]
    kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "DISABLED"})
    server.advance_clock(24 * 3600 + 1)
    ended = kinesis.describe_account_settings()["MinimumThroughputBillingCommitment"]
    assert ended["Status"] == "DISABLED" and ended["EndedAt"] == pending["EndedAt"]
    restarted = kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "ENABLED"})
    assert restarted["MinimumThroughputBillingCommitment"]["StartedAt"] > commitment["StartedAt"]
    with pytest.raises(ClientError) as e:
        unchecked.update_account_settings(MinimumThroughputBillingCommitment={"Status": "MAYBE"})
    assert error(e)["Code"] == "ValidationException"


def test_warm_throughput_needs_on_demand_and_the_commitment(kinesis):
    kinesis.create_stream(StreamName="od", StreamModeDetails={"StreamMode": "ON_DEMAND"})
    kinesis.create_stream(StreamName="prov", ShardCount=1)
    od = arn_of(kinesis, "od")
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_warm_throughput(StreamARN=od, WarmThroughputMiBps=100)
    assert error(e) == {"Code": "InvalidArgumentException",
                        "Message": "Warm throughput requires MinimumThroughputBillingCommitment to be enabled for the account."}
    kinesis.update_account_settings(MinimumThroughputBillingCommitment={"Status": "ENABLED"})
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_warm_throughput(StreamName="prov", WarmThroughputMiBps=100)
    assert error(e) == {"Code": "InvalidArgumentException",
                        "Message": "Warm throughput is only supported for streams in ON_DEMAND mode."}
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_warm_throughput(StreamARN=od, WarmThroughputMiBps=10_241)
    assert error(e)["Code"] == "LimitExceededException"
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_warm_throughput(StreamName="missing", WarmThroughputMiBps=1)
    assert error(e)["Code"] == "ResourceNotFoundException"
    answer = kinesis.update_stream_warm_throughput(StreamARN=od, WarmThroughputMiBps=200)
    assert answer["StreamName"] == "od" and answer["StreamARN"] == od
    assert answer["WarmThroughput"] == {"TargetMiBps": 200, "CurrentMiBps": 0}
    summary = kinesis.describe_stream_summary(StreamARN=od)["StreamDescriptionSummary"]
    assert summary["WarmThroughput"] == {"TargetMiBps": 200, "CurrentMiBps": 200}
    assert "WarmThroughput" not in kinesis.describe_stream_summary(StreamName="prov")["StreamDescriptionSummary"]
    kinesis.create_stream(StreamName="warm", StreamModeDetails={"StreamMode": "ON_DEMAND"}, WarmThroughputMiBps=50)
    warm = kinesis.describe_stream_summary(StreamName="warm")["StreamDescriptionSummary"]
    assert warm["WarmThroughput"] == {"TargetMiBps": 50, "CurrentMiBps": 50}
    with pytest.raises(ClientError) as e:
        kinesis.create_stream(StreamName="cold", ShardCount=1, WarmThroughputMiBps=50)
    assert error(e)["Code"] == "InvalidArgumentException"


def test_max_record_size_lets_larger_records_in(kinesis, unchecked):
    kinesis.create_stream(StreamName="big", ShardCount=1)
    arn = arn_of(kinesis, "big")
    assert kinesis.describe_stream_summary(StreamARN=arn)["StreamDescriptionSummary"]["MaxRecordSizeInKiB"] == 1024
    two_mib = b"x" * (2 * 1024 * 1024)
    with pytest.raises(ClientError) as e:
        kinesis.put_record(StreamARN=arn, Data=two_mib, PartitionKey="k")
    assert error(e)["Message"].endswith("Member must have length less than or equal to 1048576")
    kinesis.update_max_record_size(StreamARN=arn, MaxRecordSizeInKiB=4096)
    assert kinesis.describe_stream_summary(StreamARN=arn)["StreamDescriptionSummary"]["MaxRecordSizeInKiB"] == 4096
    put = kinesis.put_record(StreamARN=arn, Data=two_mib, PartitionKey="k")
    iterator = kinesis.get_shard_iterator(StreamARN=arn, ShardId=put["ShardId"],
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    assert kinesis.get_records(ShardIterator=iterator)["Records"][0]["Data"] == two_mib
    with pytest.raises(ClientError) as e:
        kinesis.put_record(StreamARN=arn, Data=b"x" * (4 * 1024 * 1024 + 1), PartitionKey="k")
    assert error(e)["Message"].endswith("Member must have length less than or equal to 4194304")
    for bad in (1023, 10_241):
        with pytest.raises(ClientError) as e:
            unchecked.update_max_record_size(StreamARN=arn, MaxRecordSizeInKiB=bad)
        assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kinesis.update_max_record_size(MaxRecordSizeInKiB=2048)
    assert error(e) == {"Code": "InvalidArgumentException", "Message": "Either StreamName or StreamARN should be provided."}
    kinesis.create_stream(StreamName="sized", ShardCount=1, MaxRecordSizeInKiB=10_240)
    assert kinesis.describe_stream_summary(StreamName="sized")["StreamDescriptionSummary"]["MaxRecordSizeInKiB"] == 10_240


def test_record_distribution_strategy_is_kept(kinesis, unchecked):
    kinesis.create_stream(StreamName="d", ShardCount=1)
    arn = arn_of(kinesis, "d")
    assert "RecordDistributionStrategy" not in kinesis.describe_stream_summary(StreamARN=arn)["StreamDescriptionSummary"]
    kinesis.update_stream_record_distribution_strategy(StreamARN=arn, RecordDistributionStrategy="USER_PARTITION_KEY")
    summary = kinesis.describe_stream_summary(StreamARN=arn)["StreamDescriptionSummary"]
    assert summary["RecordDistributionStrategy"] == "USER_PARTITION_KEY"
    with pytest.raises(ClientError) as e:
        unchecked.update_stream_record_distribution_strategy(StreamARN=arn, RecordDistributionStrategy="RANDOM")
    assert error(e)["Code"] == "ValidationException"
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_record_distribution_strategy(StreamARN=arn + "x", RecordDistributionStrategy="AUTO")
    assert error(e)["Code"] == "ResourceNotFoundException"
