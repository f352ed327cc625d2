"""Kinesis' per-shard throughput limits, enforced with --kinesis-shard-limits only: 1,000
records and 1 MiB a second in (PutRecord refused, PutRecords' records failing one by one),
5 GetRecords a second and 2 MiB a second out, with AWS's
ProvisionedThroughputExceededException; the server clock starts each new second."""

from __future__ import annotations

import json
import os
import sys

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402

RATE = "Rate exceeded for shard shardId-000000000000 in stream {} under account 000000000000."


@pytest.fixture(scope="module")
def limited():
    with RotoServer("--ephemeral", "--kinesis-shard-limits") as s:
        yield s


def stream(server, name):
    # No retries: botocore retries ProvisionedThroughputExceededException by itself.
    kinesis = server.client("kinesis", config=Config(retries={"total_max_attempts": 1}))
    kinesis.create_stream(StreamName=name, ShardCount=1)
    return kinesis


def server_now(server):
    """The server clock, in epoch milliseconds."""
    _, _, body = server.request("GET", "/_roto/clock")
    return json.loads(body)["now_millis"]


def in_one_second(server, scenario):
    """Runs `scenario` from the start of a fresh second of the server clock, again if the
    server clock (which follows the wall clock) crossed into the next second meanwhile, as a
    slow or loaded machine may make it. A machine too slow for every attempt proves nothing
    either way: the test is skipped, never passed."""
    for _ in range(10):
        server.advance_clock((1000 - server_now(server) % 1000 + 5) / 1000)
        started = server_now(server)
        outcome = scenario()
        if server_now(server) // 1000 == started // 1000:
            return outcome
    pytest.skip("inconclusive: the machine was too slow to run the scenario within one second")


def within(server, millis, scenario):
    """Runs `scenario` until one run takes less than `millis` of the server clock, each
    run two seconds after the last (so that what a run read is paid for)."""
    for _ in range(10):
        server.advance_clock(2)
        started = server_now(server)
        outcome = scenario()
        if server_now(server) - started < millis:
            return outcome
    pytest.skip(f"inconclusive: the machine was too slow to run the scenario within {millis} ms")


def outcome(call, **params):
    """"ok", or the error's code and message."""
    try:
        call(**params)
        return "ok"
    except ClientError as e:
        return e.response["Error"]["Code"], e.response["Error"]["Message"]


def test_puts_beyond_a_thousand_records_a_second_fail_record_by_record(limited):
    kinesis = stream(limited, "count")
    def overflow():
        answers = [kinesis.put_records(StreamName="count", Records=[
            {"Data": b"x", "PartitionKey": "k"} for _ in range(500)]) for _ in range(3)]
        return answers, outcome(kinesis.put_record, StreamName="count", Data=b"x", PartitionKey="k")

    answers, single = in_one_second(limited, overflow)
    assert [a["FailedRecordCount"] for a in answers] == [0, 0, 500]
    refused = [r for a in answers for r in a["Records"] if "ErrorCode" in r]
    assert refused[0] == {"ErrorCode": "ProvisionedThroughputExceededException",
                          "ErrorMessage": RATE.format("count")}
    assert all("SequenceNumber" not in r for r in refused)
    assert single == ("ProvisionedThroughputExceededException", RATE.format("count"))
    limited.advance_clock(1)
    assert kinesis.put_record(StreamName="count", Data=b"x", PartitionKey="k")["SequenceNumber"]


def test_a_shard_takes_a_mebibyte_a_second(limited):
    kinesis = stream(limited, "bytes")
    big = b"x" * (600 * 1024)

    def twice():
        kinesis.put_record(StreamName="bytes", Data=big, PartitionKey="k")
        return outcome(kinesis.put_record, StreamName="bytes", Data=big, PartitionKey="k")

    assert in_one_second(limited, twice) == (
        "ProvisionedThroughputExceededException", RATE.format("bytes"))
    limited.advance_clock(1)
    kinesis.put_record(StreamName="bytes", Data=big, PartitionKey="k")


def test_reads_are_five_a_second_and_large_reads_hold_the_next_back(limited):
    kinesis = stream(limited, "reads")
    for _ in range(4):
        limited.advance_clock(1)
        kinesis.put_record(StreamName="reads", Data=b"y" * (900 * 1024), PartitionKey="k")
    iterator = kinesis.get_shard_iterator(StreamName="reads", ShardId="shardId-000000000000",
                                          ShardIteratorType="LATEST")["ShardIterator"]

    def seven_reads():
        codes = []
        for _ in range(7):
            try:
                kinesis.get_records(ShardIterator=iterator)
                codes.append("ok")
            except ClientError as e:
                assert e.response["Error"]["Message"] == RATE.format("reads")
                codes.append(e.response["Error"]["Code"])
        return codes

    assert in_one_second(limited, seven_reads) == ["ok"] * 5 + ["ProvisionedThroughputExceededException"] * 2

    def large_read_then_next():
        start = kinesis.get_shard_iterator(StreamName="reads", ShardId="shardId-000000000000",
                                           ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        assert len(kinesis.get_records(ShardIterator=start)["Records"]) == 4
        return start, outcome(kinesis.get_records, ShardIterator=start)

    # 3.6 MiB takes 1.8 s of the server clock to pay for: the next read within it is refused.
    start, refused = within(limited, 1800, large_read_then_next)
    assert refused == ("ProvisionedThroughputExceededException", RATE.format("reads"))
    limited.advance_clock(2)
    assert len(kinesis.get_records(ShardIterator=start)["Records"]) == 4


def test_without_the_flag_nothing_is_limited(server):
    kinesis = stream(server, "free")
    for _ in range(3):
        assert kinesis.put_records(StreamName="free", Records=[
            {"Data": b"x", "PartitionKey": "k"} for _ in range(500)])["FailedRecordCount"] == 0
    iterator = kinesis.get_shard_iterator(StreamName="free", ShardId="shardId-000000000000",
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    for _ in range(8):
        kinesis.get_records(ShardIterator=iterator, Limit=10)
