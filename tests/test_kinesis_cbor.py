"""Kinesis over CBOR (`application/x-amz-cbor-1.1`, what the Java SDK and the Kinesis Client
Library send), black-box: requests built with the cbor2 library, signed with SigV4 and sent
raw; answers and errors read back as CBOR."""

from __future__ import annotations

import http.client
import time
import urllib.parse

import cbor2
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.credentials import Credentials

CBOR = "application/x-amz-cbor-1.1"
# Tag 1 as the tag and its number: the AWS SDKs write epoch milliseconds under it, which
# cbor2 would otherwise read as seconds.
AS_TAG = {1: lambda value, _immutable: cbor2.CBORTag(1, value)}


@pytest.fixture
def call(server):
    url = urllib.parse.urlparse(server.endpoint)

    def send(operation, body, content_type=CBOR):
        data = body if isinstance(body, bytes) else cbor2.dumps(body)
        request = AWSRequest(
            method="POST",
            url=server.endpoint + "/",
            data=data,
            headers={"Content-Type": content_type, "X-Amz-Target": f"Kinesis_20131202.{operation}"},
        )
        SigV4Auth(Credentials("test", "test"), "kinesis", "us-east-1").add_auth(request)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        conn.request("POST", "/", body=data, headers=dict(request.headers.items()))
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        return response.status, response.getheader("Content-Type"), cbor2.loads(raw, semantic_decoders=AS_TAG) if raw else None

    return send


def test_records_round_trip_in_cbor(call, client):
    status, content_type, body = call("CreateStream", {"StreamName": "cb", "ShardCount": 1})
    assert (status, content_type, body) == (200, CBOR, {})
    before = int(time.time() * 1000)
    status, _, put = call("PutRecord", {"StreamName": "cb", "Data": b"\x00\xffbinary", "PartitionKey": "k"})
    assert status == 200 and put["ShardId"] == "shardId-000000000000" and len(put["SequenceNumber"]) == 56
    _, _, it = call(
        "GetShardIterator", {"StreamName": "cb", "ShardId": "shardId-000000000000", "ShardIteratorType": "TRIM_HORIZON"}
    )
    status, _, got = call("GetRecords", {"ShardIterator": it["ShardIterator"], "Limit": 10})
    assert status == 200
    record = got["Records"][0]
    assert record["Data"] == b"\x00\xffbinary" and isinstance(record["Data"], bytes)
    assert record["PartitionKey"] == "k" and got["MillisBehindLatest"] == 0
    stamp = record["ApproximateArrivalTimestamp"]
    assert isinstance(stamp, cbor2.CBORTag) and stamp.tag == 1
    assert isinstance(stamp.value, int) and before - 5000 <= stamp.value <= before + 60_000
    kinesis = client("kinesis")
    assert kinesis.get_records(ShardIterator=it["ShardIterator"])["Records"][0]["Data"] == b"\x00\xffbinary"


def test_timestamps_in_requests_are_tag_one_milliseconds(call):
    call("CreateStream", {"StreamName": "ts", "ShardCount": 1})
    call("PutRecord", {"StreamName": "ts", "Data": b"x", "PartitionKey": "k"})
    future = cbor2.CBORTag(1, int(time.time() * 1000) + 3_600_000)
    _, _, it = call(
        "GetShardIterator",
        {"StreamName": "ts", "ShardId": "shardId-000000000000", "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": future},
    )
    _, _, got = call("GetRecords", {"ShardIterator": it["ShardIterator"]})
    assert got["Records"] == []
    past = cbor2.CBORTag(1, int(time.time() * 1000) - 3_600_000)
    _, _, it = call(
        "GetShardIterator",
        {"StreamName": "ts", "ShardId": "shardId-000000000000", "ShardIteratorType": "AT_TIMESTAMP", "Timestamp": past},
    )
    _, _, got = call("GetRecords", {"ShardIterator": it["ShardIterator"]})
    assert [r["Data"] for r in got["Records"]] == [b"x"]


def test_indefinite_lengths_as_jackson_writes_them(call):
    call("CreateStream", {"StreamName": "jk", "ShardCount": 1})
    # {_ "StreamName": "jk", "Records": [_ {_ "Data": h'6869', "PartitionKey": (_ "p" "k")}]}
    body = (
        b"\xbf"
        + cbor2.dumps("StreamName") + cbor2.dumps("jk")
        + cbor2.dumps("Records") + b"\x9f\xbf"
        + cbor2.dumps("Data") + cbor2.dumps(b"hi")
        + cbor2.dumps("PartitionKey") + b"\x7f" + cbor2.dumps("p") + cbor2.dumps("k") + b"\xff"
        + b"\xff\xff\xff"
    )
    status, _, out = call("PutRecords", body)
    assert status == 200 and out["FailedRecordCount"] == 0 and len(out["Records"]) == 1


def test_errors_are_cbor(call):
    status, content_type, body = call("DescribeStream", {"StreamName": "missing"})
    assert (status, content_type) == (400, CBOR)
    assert body["__type"] == "ResourceNotFoundException"
    assert body["message"] == "Stream missing under account 000000000000 not found."
    status, _, body = call("PutRecord", {"StreamName": "x", "Data": "text, not bytes", "PartitionKey": "k"})
    assert status == 400 and body["__type"] == "SerializationException"
    status, _, body = call("ListStreams", b"\x9f" * 100 + b"\xff" * 100)
    assert status == 400 and body["__type"] == "SerializationException"
    assert "nested too deeply" in body["message"]
    status, _, body = call("ListStreams", b"\xa1\x61")
    assert status == 400 and body["__type"] == "SerializationException"
    status, _, body = call("CreateStream", {"ShardCount": 1})
    assert status == 400 and body["__type"] == "ValidationException"
