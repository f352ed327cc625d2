"""Kinesis queues, black-box with boto3: a stream read record by record with receipt
handles, visibility timeouts, acknowledgements and built-in dead-letter handling."""

from __future__ import annotations

import datetime
import time

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def error(excinfo):
    return excinfo.value.response["Error"]


def on_demand(kinesis, name="s"):
    kinesis.create_stream(StreamName=name, StreamModeDetails={"StreamMode": "ON_DEMAND"})
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def make_queue(kinesis, stream_arn, name="q", start=None, **attributes):
    config = {"StreamARN": stream_arn}
    if start:
        config["StartingPosition"] = start
    kwargs = {"QueueName": name, "StreamConfigurationList": [config]}
    if attributes:
        kwargs["QueueAttributes"] = attributes
    return kinesis.create_queue(**kwargs)["QueueDescription"]


def put(kinesis, stream_arn, *payloads):
    for i, data in enumerate(payloads):
        kinesis.put_record(StreamARN=stream_arn, Data=data, PartitionKey=f"k{i}")


def receive(kinesis, arn, **kwargs):
    kwargs.setdefault("WaitTimeSeconds", 1)
    return kinesis.receive_queue_records(QueueARN=arn, **kwargs)["QueueRecords"]


def test_create_describe_list_update_delete(kinesis):
    stream = on_demand(kinesis)
    created = make_queue(kinesis, stream, "orders")
    assert created["QueueStatus"] == "CREATING"
    arn = created["QueueARN"]
    assert arn.startswith("arn:aws:kinesis:us-east-1:") and ":queue/" in arn
    assert "orders" not in arn.split(":queue/")[1]
    described = kinesis.describe_queue(QueueARN=arn)["QueueDescription"]
    assert described["QueueStatus"] == "ACTIVE"
    assert described["StreamConfigurationList"] == [
        {"StreamARN": stream, "StartingPosition": {"Type": "LATEST"}}
    ]
    assert described["QueueAttributes"] == {
        "VisibilityTimeoutSeconds": 30,
        "DeadLetterConfiguration": {"TargetType": "BUILT_IN", "MaxReceiveCount": 6},
    }
    updated = kinesis.update_queue(
        QueueARN=arn,
        QueueAttributes={"VisibilityTimeoutSeconds": 5, "DeadLetterConfiguration": {"TargetType": "NONE"}},
    )["QueueDescription"]
    assert updated["QueueStatus"] == "UPDATING"
    attributes = kinesis.describe_queue(QueueARN=arn)["QueueDescription"]["QueueAttributes"]
    assert attributes == {"VisibilityTimeoutSeconds": 5, "DeadLetterConfiguration": {"TargetType": "NONE"}}
    summaries = kinesis.list_queues()["QueueSummaries"]
    assert [(s["QueueName"], s["QueueARN"], s["QueueStatus"]) for s in summaries] == [("orders", arn, "ACTIVE")]
    assert summaries[0]["Streams"][0]["StreamARN"] == stream
    kinesis.delete_queue(QueueARN=arn)
    with pytest.raises(ClientError) as e:
        kinesis.describe_queue(QueueARN=arn)
    assert error(e)["Code"] == "ResourceNotFoundException"
    assert kinesis.list_queues()["QueueSummaries"] == []


def test_receive_acknowledge_and_redeliver_after_visibility(kinesis, server):
    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream, VisibilityTimeoutSeconds=10)["QueueARN"]
    put(kinesis, stream, b"a", b"b", b"c")
    first = receive(kinesis, arn, Limit=10)
    assert sorted(r["Data"] for r in first) == [b"a", b"b", b"c"]
    assert all(r["ReceiveCount"] == 1 and r["RecordId"].isdigit() for r in first)
    assert receive(kinesis, arn) == []  # all in flight
    acked = kinesis.acknowledge_queue_records(
        QueueARN=arn, Entries=[{"ReceiptHandle": first[0]["ReceiptHandle"]}]
    )
    assert acked["Successful"] == [{"ReceiptHandle": first[0]["ReceiptHandle"]}] and acked["Failed"] == []
    server.advance_clock(11)
    again = receive(kinesis, arn, Limit=10)
    assert sorted(r["RecordId"] for r in again) == sorted(r["RecordId"] for r in first[1:])
    assert all(r["ReceiveCount"] == 2 for r in again)
    assert {r["ReceiptHandle"] for r in again}.isdisjoint(r["ReceiptHandle"] for r in first)
    assert again[0]["FirstReceiveTimestamp"] == first[1]["FirstReceiveTimestamp"] or len(again) == 2
    # The old receipt handle no longer acknowledges the record.
    stale = kinesis.acknowledge_queue_records(QueueARN=arn, Entries=[{"ReceiptHandle": first[1]["ReceiptHandle"]}])
    assert stale["Successful"] == [] and stale["Failed"][0]["ErrorCode"] == "ResourceNotFoundException"


def test_starting_positions(kinesis):
    stream = on_demand(kinesis)
    put(kinesis, stream, b"old")
    latest = make_queue(kinesis, stream, "latest")["QueueARN"]
    horizon = make_queue(kinesis, stream, "horizon", start={"Type": "TRIM_HORIZON"})["QueueARN"]
    time.sleep(0.01)
    later = datetime.datetime.now(datetime.timezone.utc)
    time.sleep(0.01)
    at = make_queue(kinesis, stream, "at", start={"Type": "AT_TIMESTAMP", "Timestamp": later})["QueueARN"]
    put(kinesis, stream, b"new")
    assert [r["Data"] for r in receive(kinesis, latest)] == [b"new"]
    assert sorted(r["Data"] for r in receive(kinesis, horizon)) == [b"new", b"old"]
    assert [r["Data"] for r in receive(kinesis, at)] == [b"new"]


def test_visibility_change_makes_a_record_visible_or_hides_it_longer(kinesis, server):
    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream, VisibilityTimeoutSeconds=30)["QueueARN"]
    put(kinesis, stream, b"x")
    [record] = receive(kinesis, arn)
    handle = record["ReceiptHandle"]
    out = kinesis.update_queue_records_visibility(
        QueueARN=arn, Entries=[{"ReceiptHandle": handle, "VisibilityTimeoutSeconds": 0}]
    )
    assert out["Successful"] == [{"ReceiptHandle": handle}]
    [again] = receive(kinesis, arn, VisibilityTimeoutSeconds=5)
    out = kinesis.update_queue_records_visibility(
        QueueARN=arn, Entries=[{"ReceiptHandle": again["ReceiptHandle"], "VisibilityTimeoutSeconds": 100}]
    )
    assert out["Failed"] == []
    server.advance_clock(50)
    assert receive(kinesis, arn) == []
    server.advance_clock(51)
    assert [r["ReceiveCount"] for r in receive(kinesis, arn)] == [3]


def test_records_become_dead_letters_then_are_restored_or_acknowledged(kinesis, server):
    stream = on_demand(kinesis)
    arn = make_queue(
        kinesis, stream, VisibilityTimeoutSeconds=1,
        DeadLetterConfiguration={"TargetType": "BUILT_IN", "MaxReceiveCount": 2},
    )["QueueARN"]
    put(kinesis, stream, b"poison")
    for count in (1, 2):
        [record] = receive(kinesis, arn)
        assert record["ReceiveCount"] == count
        server.advance_clock(2)
    assert receive(kinesis, arn) == []
    [dead] = kinesis.receive_dead_letter_queue_records(QueueARN=arn, WaitTimeSeconds=1)["QueueRecords"]
    assert dead["Data"] == b"poison"
    restored = kinesis.restore_dead_letter_queue_records(
        QueueARN=arn, Entries=[{"ReceiptHandle": dead["ReceiptHandle"]}]
    )
    assert restored["Successful"] == [{"ReceiptHandle": dead["ReceiptHandle"]}]
    [back] = receive(kinesis, arn)
    assert back["ReceiveCount"] == 1 and back["RecordId"] == dead["RecordId"]
    server.advance_clock(2)
    receive(kinesis, arn)
    server.advance_clock(2)
    [dead] = kinesis.receive_dead_letter_queue_records(QueueARN=arn, WaitTimeSeconds=1)["QueueRecords"]
    changed = kinesis.update_dead_letter_queue_records_visibility(
        QueueARN=arn, Entries=[{"ReceiptHandle": dead["ReceiptHandle"], "VisibilityTimeoutSeconds": 60}]
    )
    assert changed["Successful"] == [{"ReceiptHandle": dead["ReceiptHandle"]}]
    gone = kinesis.acknowledge_dead_letter_queue_records(
        QueueARN=arn, Entries=[{"ReceiptHandle": dead["ReceiptHandle"]}]
    )
    assert gone["Successful"] == [{"ReceiptHandle": dead["ReceiptHandle"]}]
    server.advance_clock(61)
    assert kinesis.receive_dead_letter_queue_records(QueueARN=arn, WaitTimeSeconds=1)["QueueRecords"] == []
    assert receive(kinesis, arn) == []


def test_without_dead_letter_handling_records_come_back_forever(kinesis, server):
    stream = on_demand(kinesis)
    arn = make_queue(
        kinesis, stream, VisibilityTimeoutSeconds=1, DeadLetterConfiguration={"TargetType": "NONE"}
    )["QueueARN"]
    put(kinesis, stream, b"x")
    for count in range(1, 9):
        [record] = receive(kinesis, arn)
        assert record["ReceiveCount"] == count
        server.advance_clock(2)


def test_receive_waits_for_a_record_put_meanwhile(kinesis, client):
    import threading

    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream)["QueueARN"]
    timer = threading.Timer(0.3, lambda: put(client("kinesis"), stream, b"late"))
    timer.start()
    started = time.monotonic()
    records = receive(kinesis, arn, WaitTimeSeconds=10)
    timer.join()
    assert [r["Data"] for r in records] == [b"late"]
    assert time.monotonic() - started < 5


def test_receive_returns_at_most_limit_and_reads_every_shard(kinesis):
    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream, start={"Type": "TRIM_HORIZON"})["QueueARN"]
    put(kinesis, stream, *[f"r{i}".encode() for i in range(25)])
    seen = []
    while batch := receive(kinesis, arn, Limit=10):
        assert len(batch) <= 10
        seen += batch
        kinesis.acknowledge_queue_records(QueueARN=arn, Entries=[{"ReceiptHandle": r["ReceiptHandle"]} for r in batch])
    assert sorted(r["Data"] for r in seen) == sorted(f"r{i}".encode() for i in range(25))


def test_malformed_and_foreign_receipt_handles_fail_per_entry(kinesis):
    stream = on_demand(kinesis)
    one = make_queue(kinesis, stream, "one")["QueueARN"]
    two = make_queue(kinesis, stream, "two")["QueueARN"]
    put(kinesis, stream, b"x")
    [record] = receive(kinesis, one)
    out = kinesis.acknowledge_queue_records(
        QueueARN=two, Entries=[{"ReceiptHandle": "nonsense"}, {"ReceiptHandle": record["ReceiptHandle"]}]
    )
    assert out["Successful"] == []
    assert [f["ErrorCode"] for f in out["Failed"]] == ["InvalidArgumentException", "ResourceNotFoundException"]
    assert out["Failed"][0]["ReceiptHandle"] == "nonsense" and out["Failed"][0]["ErrorMessage"]
    # Each queue delivers the record on its own, under the same RecordId.
    [other] = receive(kinesis, two)
    assert other["RecordId"] == record["RecordId"]


def test_tags_on_a_queue(kinesis):
    stream = on_demand(kinesis)
    arn = kinesis.create_queue(
        QueueName="t", StreamConfigurationList=[{"StreamARN": stream}], Tags={"team": "a"}
    )["QueueDescription"]["QueueARN"]
    kinesis.tag_resource(ResourceARN=arn, Tags={"env": "dev"})
    tags = kinesis.list_tags_for_resource(ResourceARN=arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "dev"), ("team", "a")]
    kinesis.untag_resource(ResourceARN=arn, TagKeys=["team"])
    assert kinesis.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    with pytest.raises(ClientError) as e:
        kinesis.tag_resource(ResourceARN=arn, Tags={f"k{i}": "v" for i in range(50)})
    assert error(e)["Code"] == "InvalidArgumentException"


def test_list_pages_and_filters_by_stream(kinesis):
    one, two = on_demand(kinesis, "one"), on_demand(kinesis, "two")
    for i in range(5):
        make_queue(kinesis, one if i % 2 else two, f"q{i}")
    page = kinesis.list_queues(MaxResults=2)
    names = [s["QueueName"] for s in page["QueueSummaries"]]
    while "NextToken" in page:
        page = kinesis.list_queues(MaxResults=2, NextToken=page["NextToken"])
        names += [s["QueueName"] for s in page["QueueSummaries"]]
    assert names == ["q0", "q1", "q2", "q3", "q4"]
    filtered = kinesis.list_queues(StreamFilter=[{"StreamARN": one}])["QueueSummaries"]
    assert [s["QueueName"] for s in filtered] == ["q1", "q3"]
    with pytest.raises(ClientError) as e:
        kinesis.list_queues(NextToken="bogus")
    assert error(e)["Code"] == "InvalidArgumentException"


def test_creation_errors(kinesis):
    stream = on_demand(kinesis)
    kinesis.create_stream(StreamName="prov", ShardCount=1)
    prov = kinesis.describe_stream_summary(StreamName="prov")["StreamDescriptionSummary"]["StreamARN"]
    cases = [
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": prov}]}, "ValidationException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream}, {"StreamARN": stream}]}, "ValidationException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream.replace("stream/s", "stream/none")}]}, "ResourceNotFoundException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream, "StartingPosition": {"Type": "AT_TIMESTAMP"}}]}, "ValidationException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream, "StartingPosition": {"Type": "LATEST", "Timestamp": datetime.datetime.now()}}]}, "ValidationException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream}], "QueueAttributes": {"DeadLetterConfiguration": {"TargetType": "BUILT_IN"}}}, "ValidationException"),
        ({"QueueName": "a", "StreamConfigurationList": [{"StreamARN": stream}], "QueueAttributes": {"VisibilityTimeoutSeconds": 43201}}, "ValidationException"),
    ]
    for kwargs, code in cases:
        with pytest.raises(ClientError) as e:
            kinesis.create_queue(**kwargs)
        assert error(e)["Code"] == code, kwargs
    make_queue(kinesis, stream, "a")
    with pytest.raises(ClientError) as e:
        make_queue(kinesis, stream, "a")
    assert error(e)["Code"] == "ResourceInUseException"


def test_queues_share_the_registered_consumer_limit(kinesis):
    stream = on_demand(kinesis)
    for i in range(15):
        kinesis.register_stream_consumer(StreamARN=stream, ConsumerName=f"c{i}")
    for i in range(5):
        make_queue(kinesis, stream, f"q{i}")
    with pytest.raises(ClientError) as e:
        make_queue(kinesis, stream, "one-too-many")
    assert error(e)["Code"] == "LimitExceededException"
    with pytest.raises(ClientError) as e:
        kinesis.register_stream_consumer(StreamARN=stream, ConsumerName="c-too-many")
    assert error(e)["Code"] == "LimitExceededException"


def test_a_stream_with_queues_cannot_be_deleted_or_made_provisioned(kinesis):
    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream)["QueueARN"]
    with pytest.raises(ClientError) as e:
        kinesis.delete_stream(StreamARN=stream)
    assert error(e)["Code"] == "ResourceInUseException"
    with pytest.raises(ClientError) as e:
        kinesis.update_stream_mode(StreamARN=stream, StreamModeDetails={"StreamMode": "PROVISIONED"})
    assert error(e)["Code"] == "ResourceInUseException"
    kinesis.delete_queue(QueueARN=arn)
    kinesis.delete_stream(StreamARN=stream)


def test_unknown_queue_and_bad_inputs(kinesis, client):
    missing = "arn:aws:kinesis:us-east-1:000000000000:queue/0123"
    for call in (
        lambda: kinesis.describe_queue(QueueARN=missing),
        lambda: kinesis.delete_queue(QueueARN=missing),
        lambda: kinesis.receive_queue_records(QueueARN=missing, WaitTimeSeconds=1),
        lambda: kinesis.acknowledge_queue_records(QueueARN=missing, Entries=[{"ReceiptHandle": "h"}]),
    ):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)["Code"] == "ResourceNotFoundException"
    stream = on_demand(kinesis)
    arn = make_queue(kinesis, stream)["QueueARN"]
    kinesis = client("kinesis", config=Config(parameter_validation=False))
    for kwargs in ({"Limit": 11}, {"WaitTimeSeconds": 21}, {"VisibilityTimeoutSeconds": -1}):
        with pytest.raises(ClientError) as e:
            kinesis.receive_queue_records(QueueARN=arn, **kwargs)
        assert error(e)["Code"] == "ValidationException", kwargs
    with pytest.raises(ClientError) as e:
        kinesis.acknowledge_queue_records(QueueARN=arn, Entries=[{"ReceiptHandle": f"h{i}"} for i in range(11)])
    assert error(e)["Code"] == "ValidationException"
