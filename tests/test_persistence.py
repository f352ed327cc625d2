"""State survives restarts in --data-dir mode, and --durable loses no acknowledged write to kill -9."""

from __future__ import annotations

import hashlib
import threading
import time

import boto3
from botocore.config import Config

from roto_server import RotoServer


def clients(server):
    def make(service):
        return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1}))
    return make("s3"), make("dynamodb"), make("sqs")


def seed(server):
    s3, ddb, sqs = clients(server)
    s3.create_bucket(Bucket="keep")
    s3.put_object(Bucket="keep", Key="dir/a.txt", Body=b"alpha", ContentType="text/plain",
                  Metadata={"owner": "tests"})
    ddb.create_table(TableName="keep", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    ddb.put_item(TableName="keep", Item={"pk": {"S": "a"}, "n": {"N": "12.5"}, "b": {"B": b"\x00\x01"}})
    url = sqs.create_queue(QueueName="keep")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="hello")


def check(server):
    s3, ddb, sqs = clients(server)
    assert [b["Name"] for b in s3.list_buckets()["Buckets"]] == ["keep"]
    obj = s3.get_object(Bucket="keep", Key="dir/a.txt")
    assert obj["Body"].read() == b"alpha"
    assert obj["ContentType"] == "text/plain"
    assert obj["Metadata"] == {"owner": "tests"}
    assert ddb.list_tables()["TableNames"] == ["keep"]
    item = ddb.get_item(TableName="keep", Key={"pk": {"S": "a"}}, ConsistentRead=True)["Item"]
    assert item == {"pk": {"S": "a"}, "n": {"N": "12.5"}, "b": {"B": b"\x00\x01"}}
    table = ddb.describe_table(TableName="keep")["Table"]
    assert (table["ItemCount"], table["TableSizeBytes"]) == (1, 10)
    url = sqs.get_queue_url(QueueName="keep")["QueueUrl"]
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)["Messages"]
    assert [m["Body"] for m in messages] == ["hello"]


def test_persistent_server_reads_everything_back_after_a_graceful_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        seed(s)
    with RotoServer("--data-dir", data) as s:
        check(s)


def test_persistent_server_survives_kill_9(tmp_path):
    data = str(tmp_path / "data")
    s = RotoServer("--data-dir", data).start()
    seed(s)
    s.kill()
    with RotoServer("--data-dir", data) as s:
        check(s)


def test_ephemeral_state_is_gone_after_restart():
    with RotoServer("--ephemeral") as s:
        seed(s)
    with RotoServer("--ephemeral") as s:
        s3, ddb, _ = clients(s)
        assert s3.list_buckets()["Buckets"] == []
        assert ddb.list_tables()["TableNames"] == []


def test_durable_mode_loses_no_acknowledged_write_to_kill_9(tmp_path):
    data = str(tmp_path / "data")
    s = RotoServer("--data-dir", data, "--durable").start()
    s3, ddb, _ = clients(s)
    s3.create_bucket(Bucket="crash")
    ddb.create_table(TableName="crash", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    acked_items: list[str] = []
    acked_objects: dict[str, str] = {}
    lock = threading.Lock()
    stop = threading.Event()

    def writer(n: int):
        w_s3, w_ddb, _ = clients(s)
        i = 0
        while not stop.is_set():
            key = f"w{n}-{i}"
            body = (key * 50).encode()
            try:
                w_ddb.put_item(TableName="crash", Item={"pk": {"S": key}, "v": {"N": str(i)}})
                with lock:
                    acked_items.append(key)
                w_s3.put_object(Bucket="crash", Key=key, Body=body)
                with lock:
                    acked_objects[key] = hashlib.md5(body).hexdigest()
            except Exception:
                return
            i += 1

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(6)]
    for t in threads:
        t.start()
    time.sleep(1.5)
    s.kill()
    stop.set()
    for t in threads:
        t.join()
    assert len(acked_items) > 20 and len(acked_objects) > 20

    with RotoServer("--data-dir", data) as s:
        s3, ddb, _ = clients(s)
        for key in acked_items:
            item = ddb.get_item(TableName="crash", Key={"pk": {"S": key}}, ConsistentRead=True)
            assert "Item" in item, f"acknowledged item {key} lost"
        for key, md5 in acked_objects.items():
            body = s3.get_object(Bucket="crash", Key=key)["Body"].read()
            assert hashlib.md5(body).hexdigest() == md5, f"acknowledged object {key} lost or torn"
        stored = sum(page["Count"] for page in ddb.get_paginator("scan").paginate(
            TableName="crash", Select="COUNT", ConsistentRead=True))
        assert ddb.describe_table(TableName="crash")["Table"]["ItemCount"] == stored
