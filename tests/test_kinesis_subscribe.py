"""Kinesis SubscribeToShard, black-box: the event stream over HTTP/1.1 with boto3 (records
pushed as they are put, closed shards' children, the five-minute lifetime and the
five-second resubscription rule on the server clock), and over h2c with raw HTTP/2 frames
where the JavaScript SDK is not installed."""

from __future__ import annotations

import base64
import json
import os
import queue
import shutil
import subprocess
import struct
import threading
import zlib

import pytest
from botocore.exceptions import ClientError, EventStreamError

HALF = 2**127


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def error(excinfo):
    return excinfo.value.response["Error"]


def consumer(kinesis, name="s", shards=1):
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    arn = kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]
    return kinesis.register_stream_consumer(StreamARN=arn, ConsumerName="app")["Consumer"]["ConsumerARN"]


def pump(events):
    """Reads events on a thread into a queue (None when the stream ends)."""
    out: queue.Queue = queue.Queue()

    def run():
        try:
            for event in events:
                out.put(event)
        except Exception as e:  # noqa: BLE001 - handed to the test
            out.put(e)
        out.put(None)

    threading.Thread(target=run, daemon=True).start()
    return out


def next_with_records(q, timeout=10):
    while True:
        event = q.get(timeout=timeout)
        if event is None or isinstance(event, Exception):
            return event
        if event["SubscribeToShardEvent"]["Records"]:
            return event["SubscribeToShardEvent"]


def first_records(events):
    """The first event with records, read on this thread."""
    for event in events:
        if event["SubscribeToShardEvent"]["Records"]:
            return event["SubscribeToShardEvent"]
    return None


def test_subscribe_pushes_records_as_they_arrive(kinesis, server):
    arn = consumer(kinesis, "push")
    kinesis.put_record(StreamName="push", Data=b"old", PartitionKey="k")
    out = kinesis.subscribe_to_shard(
        ConsumerARN=arn, ShardId="shardId-000000000000", StartingPosition={"Type": "TRIM_HORIZON"}
    )
    assert out["ResponseMetadata"]["HTTPHeaders"]["content-type"] == "application/vnd.amazon.eventstream"
    q = pump(out["EventStream"])
    first = next_with_records(q)
    assert [r["Data"] for r in first["Records"]] == [b"old"]
    assert first["ContinuationSequenceNumber"] == first["Records"][0]["SequenceNumber"]
    assert first["MillisBehindLatest"] == 0
    kinesis.put_records(StreamName="push", Records=[{"Data": b"a", "PartitionKey": "k"}, {"Data": b"b", "PartitionKey": "k"}])
    second = next_with_records(q)
    assert [r["Data"] for r in second["Records"]] == [b"a", b"b"]
    assert second["Records"][0]["PartitionKey"] == "k"
    server.advance_clock(301)
    while (event := q.get(timeout=10)) is not None:
        assert not isinstance(event, Exception), event


def test_subscribe_from_latest_and_sequence_numbers(kinesis):
    arn = consumer(kinesis, "pos")
    seqs = [kinesis.put_record(StreamName="pos", Data=b"%d" % i, PartitionKey="k")["SequenceNumber"] for i in range(3)]
    out = kinesis.subscribe_to_shard(
        ConsumerARN=arn,
        ShardId="shardId-000000000000",
        StartingPosition={"Type": "AFTER_SEQUENCE_NUMBER", "SequenceNumber": seqs[0]},
    )
    got = first_records(out["EventStream"])
    assert [r["Data"] for r in got["Records"]] == [b"1", b"2"]
    out["EventStream"].close()
    other = kinesis.register_stream_consumer(
        StreamARN=arn.split("/consumer/")[0], ConsumerName="other"
    )["Consumer"]["ConsumerARN"]
    latest = kinesis.subscribe_to_shard(
        ConsumerARN=other, ShardId="shardId-000000000000", StartingPosition={"Type": "LATEST"}
    )
    kinesis.put_record(StreamName="pos", Data=b"new", PartitionKey="k")
    assert [r["Data"] for r in first_records(latest["EventStream"])["Records"]] == [b"new"]
    latest["EventStream"].close()


def test_subscribe_to_a_closed_shard_ends_with_its_children(kinesis):
    arn = consumer(kinesis, "closed")
    kinesis.put_record(StreamName="closed", Data=b"x", PartitionKey="k")
    kinesis.split_shard(StreamName="closed", ShardToSplit="shardId-000000000000", NewStartingHashKey=str(HALF))
    out = kinesis.subscribe_to_shard(
        ConsumerARN=arn, ShardId="shardId-000000000000", StartingPosition={"Type": "TRIM_HORIZON"}
    )
    events = [e["SubscribeToShardEvent"] for e in out["EventStream"]]
    last = events[-1]
    assert [r["Data"] for e in events for r in e["Records"]] == [b"x"]
    assert "ContinuationSequenceNumber" not in last
    assert sorted(c["ShardId"] for c in last["ChildShards"]) == ["shardId-000000000001", "shardId-000000000002"]


def test_subscribe_errors(kinesis, server):
    arn = consumer(kinesis, "err")
    with pytest.raises(ClientError) as e:
        kinesis.subscribe_to_shard(
            ConsumerARN=arn + "9", ShardId="shardId-000000000000", StartingPosition={"Type": "LATEST"}
        )
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.subscribe_to_shard(ConsumerARN=arn, ShardId="shardId-000000000007", StartingPosition={"Type": "LATEST"})
    assert error(e)["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        kinesis.subscribe_to_shard(
            ConsumerARN=arn, ShardId="shardId-000000000000", StartingPosition={"Type": "AT_SEQUENCE_NUMBER"}
        )
    assert error(e)["Code"] == "InvalidArgumentException"
    latest = {"ConsumerARN": arn, "ShardId": "shardId-000000000000", "StartingPosition": {"Type": "LATEST"}}
    kinesis.subscribe_to_shard(**latest)["EventStream"].close()
    with pytest.raises(ClientError) as e:
        kinesis.subscribe_to_shard(**latest)
    assert error(e)["Code"] == "ResourceInUseException"
    assert error(e)["Message"] == (
        f"Another active subscription exists for consumer {arn} and shard shardId-000000000000."
    )
    server.advance_clock(6)
    kinesis.subscribe_to_shard(**latest)["EventStream"].close()


def test_deleting_the_stream_ends_the_subscription_with_an_exception(kinesis):
    arn = consumer(kinesis, "gone")
    out = kinesis.subscribe_to_shard(
        ConsumerARN=arn, ShardId="shardId-000000000000", StartingPosition={"Type": "LATEST"}
    )
    q = pump(out["EventStream"])
    q.get(timeout=10)
    kinesis.delete_stream(StreamName="gone", EnforceConsumerDeletion=True)
    kinesis.create_stream(StreamName="gone", ShardCount=1)
    kinesis.put_record(StreamName="gone", Data=b"x", PartitionKey="k")
    while not isinstance(event := q.get(timeout=10), Exception):
        assert event is not None
    assert isinstance(event, EventStreamError)
    assert event.response["Error"]["Code"] == "ResourceNotFoundException"


# --- h2c: HTTP/2 with prior knowledge, as the JavaScript SDK v3 speaks it to http:// ---


def h2_frame(kind, flags, stream, payload=b""):
    return struct.pack(">I", len(payload))[1:] + bytes([kind, flags]) + struct.pack(">I", stream) + payload


def hpack_literal(name, value):
    """A literal header field without indexing, new name, no Huffman coding."""
    def s(text):
        data, n = text.encode(), len(text.encode())
        if n < 127:
            return bytes([n]) + data
        n -= 127
        rest = b""
        while n >= 128:
            rest += bytes([n % 128 + 128])
            n //= 128
        return bytes([127]) + rest + bytes([n]) + data

    return b"\x00" + s(name) + s(value)


def read_frames(sock, buf=b""):
    while True:
        while len(buf) < 9:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        length = int.from_bytes(buf[:3], "big")
        while len(buf) < 9 + length:
            chunk = sock.recv(65536)
            if not chunk:
                return
            buf += chunk
        yield buf[3], buf[4], int.from_bytes(buf[5:9], "big") & 0x7FFFFFFF, buf[9 : 9 + length]
        buf = buf[9 + length :]


def messages(data):
    """Splits event stream bytes into (headers, payload), checking both CRCs."""
    while len(data) >= 16:
        total, head = struct.unpack(">II", data[:8])
        if len(data) < total:
            return
        assert struct.unpack(">I", data[8:12])[0] == zlib.crc32(data[:8])
        assert struct.unpack(">I", data[total - 4 : total])[0] == zlib.crc32(data[: total - 4])
        headers, i = {}, 12
        while i < 12 + head:
            n = data[i]
            name = data[i + 1 : i + 1 + n].decode()
            i += 1 + n
            assert data[i] == 7
            vlen = struct.unpack(">H", data[i + 1 : i + 3])[0]
            headers[name] = data[i + 3 : i + 3 + vlen].decode()
            i += 3 + vlen
        yield headers, data[12 + head : total - 4]
        data = data[total:]


def test_subscribe_over_h2c(kinesis, server):
    import socket
    import urllib.parse

    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    arn = consumer(kinesis, "h2")
    kinesis.put_record(StreamName="h2", Data=b"over h2", PartitionKey="k")
    body = json.dumps(
        {"ConsumerARN": arn, "ShardId": "shardId-000000000000", "StartingPosition": {"Type": "TRIM_HORIZON"}}
    ).encode()
    url = urllib.parse.urlparse(server.endpoint)
    request = AWSRequest(
        method="POST",
        url=server.endpoint + "/",
        data=body,
        headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "Kinesis_20131202.SubscribeToShard"},
    )
    SigV4Auth(Credentials("test", "test"), "kinesis", "us-east-1").add_auth(request)
    block = hpack_literal(":method", "POST") + hpack_literal(":scheme", "http")
    block += hpack_literal(":path", "/") + hpack_literal(":authority", url.netloc)
    for name, value in request.headers.items():
        if name.lower() not in ("host", "content-length"):
            block += hpack_literal(name.lower(), value)
    sock = socket.create_connection((url.hostname, url.port), timeout=10)
    sock.sendall(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n" + h2_frame(4, 0, 0))
    sock.sendall(h2_frame(1, 0x4, 1, block) + h2_frame(0, 0x1, 1, body))
    status, data = None, b""
    for kind, flags, stream, payload in read_frames(sock):
        if kind == 4 and not flags & 1:
            sock.sendall(h2_frame(4, 0x1, 0))
        if stream != 1:
            continue
        if kind == 1:
            status = payload
        if kind == 0:
            data += payload
            sock.sendall(h2_frame(8, 0, 0, struct.pack(">I", len(payload))) + h2_frame(8, 0, 1, struct.pack(">I", len(payload))))
            if b"SubscribeToShardEvent" in data and len(list(messages(data))) >= 2:
                break
    sock.close()
    assert status is not None and status[0] == 0x88  # :status 200, indexed
    found = list(messages(data))
    assert found[0][0][":event-type"] == "initial-response"
    event = json.loads(found[1][1])
    assert found[1][0][":event-type"] == "SubscribeToShardEvent"
    assert event["Records"][0]["PartitionKey"] == "k"
    assert base64.b64decode(event["Records"][0]["Data"]) == b"over h2"


JS = os.path.join(os.path.dirname(os.path.abspath(__file__)), "js")


def js_sdk():
    """tests/js/node_modules, installed from npm on first use; None where it cannot be had."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None
    if not os.path.isdir(os.path.join(JS, "node_modules", "@aws-sdk", "client-kinesis")):
        subprocess.run(["npm", "install", "--no-audit", "--no-fund"], cwd=JS, capture_output=True, timeout=300)
    return JS if os.path.isdir(os.path.join(JS, "node_modules", "@aws-sdk", "client-kinesis")) else None


def test_subscribe_with_the_javascript_sdk_over_h2c(kinesis, server):
    js = js_sdk()
    if js is None:
        pytest.skip("node, npm or the npm registry is not available")
    arn = consumer(kinesis, "js")
    proc = subprocess.run(
        ["node", "kinesis-subscribe.mjs", server.endpoint, "js", arn], cwd=js, capture_output=True, text=True, timeout=60
    )
    assert proc.returncode == 0, proc.stderr
    got = json.loads(proc.stdout)
    assert got["handler"] == "NodeHttp2Handler"
    assert got["data"] == ["from js"]
    assert len(got["continuation"]) == 56
