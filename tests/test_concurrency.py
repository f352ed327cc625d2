"""Concurrency: 64 clients in parallel lose no writes, CPU-heavy calls hold no one else, and
a burst of events slows its producers without losing a delivery."""

from __future__ import annotations

import concurrent.futures
import time

import boto3
from botocore.config import Config

CLIENTS = 64
WRITES = 10


def make(server, service):
    return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(retries={"max_attempts": 1}, max_pool_connections=2))


def test_sixty_four_parallel_clients_lose_no_writes(server):
    make(server, "s3").create_bucket(Bucket="par")
    make(server, "dynamodb").create_table(
        TableName="par", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    queue = make(server, "sqs").create_queue(QueueName="par")["QueueUrl"]

    def work(n: int) -> int:
        s3, ddb, sqs = make(server, "s3"), make(server, "dynamodb"), make(server, "sqs")
        for i in range(WRITES):
            key = f"c{n}-{i}"
            s3.put_object(Bucket="par", Key=key, Body=key.encode())
            ddb.put_item(TableName="par", Item={"pk": {"S": key}})
            sqs.send_message(QueueUrl=queue, MessageBody=key)
        return n

    with concurrent.futures.ThreadPoolExecutor(CLIENTS) as pool:
        assert sorted(pool.map(work, range(CLIENTS))) == list(range(CLIENTS))

    s3, ddb, sqs = make(server, "s3"), make(server, "dynamodb"), make(server, "sqs")
    keys = []
    for page in s3.get_paginator("list_objects_v2").paginate(Bucket="par"):
        keys += [o["Key"] for o in page.get("Contents", [])]
    expected = sorted(f"c{n}-{i}" for n in range(CLIENTS) for i in range(WRITES))
    assert sorted(keys) == expected
    for key in expected[:: len(expected) // 40]:
        assert s3.get_object(Bucket="par", Key=key)["Body"].read() == key.encode()
        assert "Item" in ddb.get_item(TableName="par", Key={"pk": {"S": key}})
    attrs = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["ApproximateNumberOfMessages"])
    assert int(attrs["Attributes"]["ApproximateNumberOfMessages"]) == CLIENTS * WRITES


def test_sts_answers_while_two_rsa_4096_keys_are_generated(server):
    """Key generation runs on blocking threads: the async workers stay free for others."""
    kms, sts = make(server, "kms"), make(server, "sts")
    sts.get_caller_identity()
    with concurrent.futures.ThreadPoolExecutor(2) as pool:
        keys = [pool.submit(kms.create_key, KeySpec="RSA_4096", KeyUsage="SIGN_VERIFY") for _ in range(2)]
        time.sleep(0.2)
        started = time.monotonic()
        assert sts.get_caller_identity()["Account"] == "000000000000"
        waited = time.monotonic() - started
        for key in keys:
            assert key.result()["KeyMetadata"]["KeySpec"] == "RSA_4096"
    assert waited < 2.0, f"GetCallerIdentity waited {waited:.2f} s behind key generation"


def test_a_burst_of_sns_publishes_fans_out_to_sqs_with_nothing_lost(server):
    """2,000 publishes to a topic with two queue subscriptions: all 4,000 deliveries land."""
    sns, sqs = make(server, "sns"), make(server, "sqs")
    topic = sns.create_topic(Name="burst")["TopicArn"]
    queues = [sqs.create_queue(QueueName=f"burst-{n}")["QueueUrl"] for n in range(2)]
    for url in queues:
        arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn, Attributes={"RawMessageDelivery": "true"})
    total = 2000

    def publish(first: int) -> None:
        client = make(server, "sns")
        for n in range(first, total, 8):
            client.publish(TopicArn=topic, Message=str(n))

    with concurrent.futures.ThreadPoolExecutor(8) as pool:
        list(pool.map(publish, range(8)))
    for url in queues:
        bodies: set[str] = set()
        deadline = time.monotonic() + 120
        while len(bodies) < total and time.monotonic() < deadline:
            got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)
            messages = got.get("Messages", [])
            bodies.update(m["Body"] for m in messages)
            if messages:
                sqs.delete_message_batch(QueueUrl=url, Entries=[
                    {"Id": str(i), "ReceiptHandle": m["ReceiptHandle"]} for i, m in enumerate(messages)])
        assert bodies == {str(n) for n in range(total)}
