"""DynamoDB's Kinesis streaming destinations through boto3: Enable, Disable, Describe and
UpdateKinesisStreamingDestination with AWS's states and refusals, and item changes put on
the stream in AWS's record format, in order, from every kind of write."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

STATE = "Table is not in a valid state to enable Kinesis Streaming Destination: "
MUST_BE_DISABLED = STATE + (
    "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation.")
MUST_BE_ACTIVE = STATE + "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation."


def fails(call, **params):
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def make_table(db, name="orders"):
    db.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "N"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        BillingMode="PAY_PER_REQUEST",
    )


def make_stream(kinesis, name="changes"):
    kinesis.create_stream(StreamName=name, ShardCount=1)
    return kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def read_all(kinesis, arn, want, timeout=5.0):
    """Every record on the (one-shard) stream, waiting until there are `want` of them."""
    shard = kinesis.list_shards(StreamARN=arn)["Shards"][0]["ShardId"]
    deadline = time.monotonic() + timeout
    while True:
        it = kinesis.get_shard_iterator(StreamARN=arn, ShardId=shard,
                                        ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
        records = kinesis.get_records(ShardIterator=it, Limit=1000)["Records"]
        if len(records) >= want or time.monotonic() > deadline:
            return records
        time.sleep(0.05)


@pytest.fixture
def db(client):
    return client("dynamodb")


@pytest.fixture
def kinesis(client):
    return client("kinesis")


def test_enable_describe_disable_and_reenable(db, kinesis):
    make_table(db)
    arn = make_stream(kinesis)
    assert db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"] == []
    enabled = db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    assert {k: v for k, v in enabled.items() if k != "ResponseMetadata"} == {
        "TableName": "orders", "StreamArn": arn, "DestinationStatus": "ENABLING",
        "EnableKinesisStreamingConfiguration": {}}
    described = db.describe_kinesis_streaming_destination(TableName="orders")
    assert described["TableName"] == "orders"
    assert described["KinesisDataStreamDestinations"] == [{"StreamArn": arn, "DestinationStatus": "ACTIVE"}]
    assert "KinesisDataStreamDestinations" not in db.describe_table(TableName="orders")["Table"]

    disabled = db.disable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    assert disabled["DestinationStatus"] == "DISABLING"
    assert db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"] == [
        {"StreamArn": arn, "DestinationStatus": "DISABLED"}]
    # Re-enabling flips the entry rather than adding one.
    again = db.enable_kinesis_streaming_destination(
        TableName="orders", StreamArn=arn,
        EnableKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"})
    assert again["EnableKinesisStreamingConfiguration"] == {"ApproximateCreationDateTimePrecision": "MICROSECOND"}
    assert db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"] == [
        {"StreamArn": arn, "DestinationStatus": "ACTIVE", "ApproximateCreationDateTimePrecision": "MICROSECOND"}]


def test_update_changes_the_precision(db, kinesis):
    make_table(db)
    arn = make_stream(kinesis)
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    config = {"ApproximateCreationDateTimePrecision": "MICROSECOND"}
    updated = db.update_kinesis_streaming_destination(
        TableName="orders", StreamArn=arn, UpdateKinesisStreamingConfiguration=config)
    assert updated["DestinationStatus"] == "UPDATING"
    assert updated["UpdateKinesisStreamingConfiguration"] == config
    [entry] = db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"]
    assert entry == {"StreamArn": arn, "DestinationStatus": "ACTIVE", **config}
    db.put_item(TableName="orders", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    [record] = read_all(kinesis, arn, 1)
    created = json.loads(record["Data"])["dynamodb"]["ApproximateCreationDateTime"]
    assert abs(created / 1_000_000 - time.time()) < 60


def test_a_stream_kinesis_does_not_know_fails_to_enable(db, kinesis):
    make_table(db)
    missing = "arn:aws:kinesis:us-east-1:000000000000:stream/missing"
    assert db.enable_kinesis_streaming_destination(
        TableName="orders", StreamArn=missing)["DestinationStatus"] == "ENABLING"
    failed = {"StreamArn": missing, "DestinationStatus": "ENABLE_FAILED",
              "DestinationStatusDescription": "User does not have a permission to use kinesis stream"}
    assert db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"] == [failed]
    # A failed entry lingers and blocks nothing; the update and disable refuse it.
    assert fails(db.update_kinesis_streaming_destination, TableName="orders", StreamArn=missing,
                 UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MILLISECOND"}) == (
        "ValidationException", STATE + "Kinesis streaming is not in ACTIVE state. "
        "Updates are only allowed in ACTIVE state. TableName: orders")
    assert fails(db.disable_kinesis_streaming_destination, TableName="orders", StreamArn=missing) == (
        "ValidationException", MUST_BE_ACTIVE)
    arn = make_stream(kinesis)
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    entries = db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"]
    assert entries == [{"StreamArn": arn, "DestinationStatus": "ACTIVE"}, failed]


def test_refusals(db, kinesis):
    make_table(db)
    arn = make_stream(kinesis)
    other = make_stream(kinesis, "other")
    for call in (db.enable_kinesis_streaming_destination, db.disable_kinesis_streaming_destination,
                 db.update_kinesis_streaming_destination, db.describe_kinesis_streaming_destination):
        params = {} if call == db.describe_kinesis_streaming_destination else {"StreamArn": arn}
        assert fails(call, TableName="nope", **params) == (
            "ResourceNotFoundException", "Requested resource not found: Table: nope not found")
    not_a_stream = "arn:aws:sqs:us-east-1:000000000000:queue-name-long-enough"
    assert fails(db.enable_kinesis_streaming_destination, TableName="orders", StreamArn=not_a_stream) == (
        "ValidationException", f"Invalid StreamArn: {not_a_stream}")
    assert fails(db.disable_kinesis_streaming_destination, TableName="orders", StreamArn=arn) == (
        "ValidationException", MUST_BE_ACTIVE)
    assert fails(db.update_kinesis_streaming_destination, TableName="orders", StreamArn=arn,
                 UpdateKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MILLISECOND"}) == (
        "ValidationException", STATE + f"No streaming destination with streamArn: {arn} "
        "found for table with tableName: orders")
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    # One live destination per table: the same stream again, or another, is refused.
    for stream in (arn, other):
        assert fails(db.enable_kinesis_streaming_destination, TableName="orders", StreamArn=stream) == (
            "ValidationException", MUST_BE_DISABLED)
    assert fails(db.disable_kinesis_streaming_destination, TableName="orders", StreamArn=arn,
                 EnableKinesisStreamingConfiguration={"ApproximateCreationDateTimePrecision": "MICROSECOND"}) == (
        "ValidationException", "Stream cannot be disabled using EnableKinesisStreamingConfiguration parameters")
    # Deleting the table forgets its destinations.
    db.delete_table(TableName="orders")
    make_table(db)
    assert db.describe_kinesis_streaming_destination(TableName="orders")["KinesisDataStreamDestinations"] == []


def test_item_changes_reach_the_stream_in_aws_record_format(db, kinesis, server):
    make_table(db)
    arn = make_stream(kinesis)
    db.put_item(TableName="orders", Item={"pk": {"S": "before"}, "sk": {"N": "0"}})
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    key = {"pk": {"S": "a"}, "sk": {"N": "1"}}
    db.put_item(TableName="orders", Item={**key, "v": {"S": "one"}, "b": {"B": b"\x00\x01"}})
    db.update_item(TableName="orders", Key=key, UpdateExpression="SET v = :v",
                   ExpressionAttributeValues={":v": {"S": "two"}})
    db.update_item(TableName="orders", Key=key, UpdateExpression="SET v = :v",
                   ExpressionAttributeValues={":v": {"S": "two"}})  # changes nothing: no record
    db.delete_item(TableName="orders", Key=key)
    db.batch_write_item(RequestItems={"orders": [
        {"PutRequest": {"Item": {"pk": {"S": "b"}, "sk": {"N": "2"}}}}]})
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": "orders", "Item": {"pk": {"S": "c"}, "sk": {"N": "3"}}}}])
    db.execute_statement(Statement="INSERT INTO orders VALUE {'pk': 'd', 'sk': 4}")
    with pytest.raises(ClientError):
        db.put_item(TableName="orders", Item={"pk": {"S": "b"}, "sk": {"N": "2"}},
                    ConditionExpression="attribute_not_exists(pk)")  # fails: no record

    records = read_all(kinesis, arn, 6)
    changes = [json.loads(r["Data"]) for r in records]
    assert [(c["eventName"], c["dynamodb"]["Keys"]["pk"]["S"]) for c in changes] == [
        ("INSERT", "a"), ("MODIFY", "a"), ("REMOVE", "a"), ("INSERT", "b"), ("INSERT", "c"), ("INSERT", "d")]
    first, modify, remove = changes[:3]
    assert set(first) == {"awsRegion", "eventID", "eventName", "userIdentity", "recordFormat",
                          "tableName", "dynamodb", "eventSource"}
    assert first["awsRegion"] == "us-east-1"
    assert first["eventSource"] == "aws:dynamodb"
    assert first["recordFormat"] == "application/json"
    assert first["tableName"] == "orders"
    assert first["userIdentity"] is None
    assert len(first["eventID"]) == 36
    assert first["dynamodb"]["Keys"] == key
    assert first["dynamodb"]["NewImage"] == {**key, "v": {"S": "one"}, "b": {"B": "AAE="}}
    assert "OldImage" not in first["dynamodb"]
    assert first["dynamodb"]["SizeBytes"] > 0
    assert abs(first["dynamodb"]["ApproximateCreationDateTime"] / 1000 - time.time()) < 60
    assert modify["dynamodb"]["OldImage"]["v"] == {"S": "one"}
    assert modify["dynamodb"]["NewImage"]["v"] == {"S": "two"}
    assert remove["dynamodb"]["OldImage"]["v"] == {"S": "two"}
    assert "NewImage" not in remove["dynamodb"]
    # One item's records share a partition key; the key is the item's, not the table's.
    assert records[0]["PartitionKey"] == records[1]["PartitionKey"] == records[2]["PartitionKey"]
    assert records[0]["PartitionKey"] != records[3]["PartitionKey"]
    assert len(records[0]["PartitionKey"]) == 32

    delivered = server.wait_for_delivery(service="dynamodb", operation="dynamodb:KinesisStreamingDestination",
                                         target=arn, outcome="delivered")
    assert delivered["source"].endswith(":table/orders")

    # Disabled: changes stay off the stream.
    db.disable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    db.put_item(TableName="orders", Item={"pk": {"S": "e"}, "sk": {"N": "5"}})
    time.sleep(0.3)
    assert len(read_all(kinesis, arn, 7, timeout=0.3)) == 6


def test_time_to_live_deletions_name_the_service(db, kinesis, server):
    make_table(db)
    arn = make_stream(kinesis)
    db.update_time_to_live(TableName="orders",
                           TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    db.put_item(TableName="orders", Item={"pk": {"S": "old"}, "sk": {"N": "1"},
                                          "expires": {"N": str(int(time.time()) - 10)}})
    insert, remove = [json.loads(r["Data"]) for r in read_all(kinesis, arn, 2)]
    assert insert["userIdentity"] is None
    assert remove["eventName"] == "REMOVE"
    assert remove["userIdentity"] == {"type": "Service", "principalId": "dynamodb.amazonaws.com"}


def test_a_deleted_stream_fails_the_delivery_for_good(db, kinesis, server):
    make_table(db)
    arn = make_stream(kinesis)
    db.enable_kinesis_streaming_destination(TableName="orders", StreamArn=arn)
    kinesis.delete_stream(StreamName="changes")
    db.put_item(TableName="orders", Item={"pk": {"S": "a"}, "sk": {"N": "1"}})
    failed = server.wait_for_delivery(service="dynamodb", target=arn, outcome="failed")
    assert "ResourceNotFoundException" in failed["detail"]
    # As in AWS, the destination stays ACTIVE.
    assert db.describe_kinesis_streaming_destination(
        TableName="orders")["KinesisDataStreamDestinations"][0]["DestinationStatus"] == "ACTIVE"
