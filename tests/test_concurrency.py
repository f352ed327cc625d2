"""64 clients in parallel: no errors, no lost writes."""

from __future__ import annotations

import concurrent.futures

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
