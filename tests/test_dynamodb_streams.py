"""DynamoDB Streams through boto3: records from every write path in each view type, the
dynamodbstreams API (ListStreams, DescribeStream, GetShardIterator, GetRecords) with its
errors, iterator expiry and 24-hour retention on the server clock, and Time to Live."""

from __future__ import annotations

import re
import time

import pytest
from botocore.exceptions import ClientError

DAY = 24 * 60 * 60


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def make_table(db, name="tbl", view_type="NEW_AND_OLD_IMAGES", range_key=False):
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}]
    schema = [{"AttributeName": "pk", "KeyType": "HASH"}]
    if range_key:
        definitions.append({"AttributeName": "sk", "AttributeType": "N"})
        schema.append({"AttributeName": "sk", "KeyType": "RANGE"})
    params = {"TableName": name, "AttributeDefinitions": definitions, "KeySchema": schema,
              "BillingMode": "PAY_PER_REQUEST"}
    if view_type:
        params["StreamSpecification"] = {"StreamEnabled": True, "StreamViewType": view_type}
    return db.create_table(**params)["TableDescription"]


def shard_of(streams, arn):
    return streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]


def iterator(streams, arn, kind="TRIM_HORIZON", **extra):
    shard = shard_of(streams, arn)
    return streams.get_shard_iterator(StreamArn=arn, ShardId=shard["ShardId"], ShardIteratorType=kind,
                                      **extra)["ShardIterator"]


def read_all(streams, arn, kind="TRIM_HORIZON", **extra):
    return streams.get_records(ShardIterator=iterator(streams, arn, kind, **extra))["Records"]


def events(records):
    return [(r["eventName"], r["dynamodb"]["Keys"]["pk"]["S"]) for r in records]


@pytest.fixture
def db(client):
    return client("dynamodb")


@pytest.fixture
def streams(client):
    return client("dynamodbstreams")


# Which writes make records


def test_every_write_path_records_its_changes_and_no_op_writes_record_nothing(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    item = {"pk": {"S": "a"}, "v": {"N": "1"}}
    db.put_item(TableName="tbl", Item=item)
    db.put_item(TableName="tbl", Item=item)
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "2"}})
    db.update_item(TableName="tbl", Key={"pk": {"S": "a"}}, UpdateExpression="SET w = :w",
                   ExpressionAttributeValues={":w": {"S": "x"}})
    with pytest.raises(ClientError):
        db.put_item(TableName="tbl", Item={"pk": {"S": "a"}}, ConditionExpression="attribute_not_exists(pk)")
    db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}})
    db.delete_item(TableName="tbl", Key={"pk": {"S": "a"}})
    db.update_item(TableName="tbl", Key={"pk": {"S": "b"}}, UpdateExpression="SET v = :v",
                   ExpressionAttributeValues={":v": {"N": "3"}})
    db.batch_write_item(RequestItems={"tbl": [{"PutRequest": {"Item": {"pk": {"S": "c"}}}},
                                              {"DeleteRequest": {"Key": {"pk": {"S": "b"}}}}]})
    db.transact_write_items(TransactItems=[
        {"Put": {"TableName": "tbl", "Item": {"pk": {"S": "d"}}}},
        {"Update": {"TableName": "tbl", "Key": {"pk": {"S": "c"}}, "UpdateExpression": "SET n = :n",
                    "ExpressionAttributeValues": {":n": {"N": "1"}}}},
    ])
    with pytest.raises(ClientError):
        db.transact_write_items(TransactItems=[
            {"Put": {"TableName": "tbl", "Item": {"pk": {"S": "e"}}}},
            {"ConditionCheck": {"TableName": "tbl", "Key": {"pk": {"S": "zz"}},
                                "ConditionExpression": "attribute_exists(pk)"}},
        ])
    records = read_all(streams, arn)
    assert events(records) == [
        ("INSERT", "a"), ("MODIFY", "a"), ("MODIFY", "a"), ("REMOVE", "a"),
        ("INSERT", "b"), ("INSERT", "c"), ("REMOVE", "b"), ("INSERT", "d"), ("MODIFY", "c"),
    ]
    change = records[2]["dynamodb"]
    assert change["OldImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}}
    assert change["NewImage"] == {"pk": {"S": "a"}, "v": {"N": "2"}, "w": {"S": "x"}}
    assert "NewImage" not in records[3]["dynamodb"] and "OldImage" not in records[0]["dynamodb"]
    numbers = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert numbers == sorted(numbers) and len(set(numbers)) == len(numbers)


def test_partiql_writes_are_recorded_too(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    db.execute_statement(Statement="INSERT INTO tbl VALUE {'pk': 'p', 'v': 1}")
    db.execute_statement(Statement="UPDATE tbl SET v = 2 WHERE pk = 'p'")
    db.execute_statement(Statement="DELETE FROM tbl WHERE pk = 'p'")
    assert events(read_all(streams, arn)) == [("INSERT", "p"), ("MODIFY", "p"), ("REMOVE", "p")]


def test_records_carry_what_aws_records_carry(db, streams):
    arn = make_table(db, view_type="KEYS_ONLY", range_key=True)["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "DynamoDB"}, "sk": {"N": "3"}, "body": {"S": "long text"}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "DynamoDB"}, "sk": {"N": "4"}})
    first, second = read_all(streams, arn)
    assert first["eventSource"] == "aws:dynamodb" and first["eventVersion"] == "1.1"
    assert first["awsRegion"] == "us-east-1"
    assert re.fullmatch(r"[0-9a-f]{32}", first["eventID"]) and first["eventID"] != second["eventID"]
    assert "userIdentity" not in first
    change = first["dynamodb"]
    assert change["Keys"] == {"pk": {"S": "DynamoDB"}, "sk": {"N": "3"}}
    assert "NewImage" not in change and "OldImage" not in change
    assert change["StreamViewType"] == "KEYS_ONLY"
    assert change["SizeBytes"] == len("pk") + len("DynamoDB") + len("sk") + 2
    assert re.fullmatch(r"\d{21}", change["SequenceNumber"])
    assert change["ApproximateCreationDateTime"].microsecond == 0


@pytest.mark.parametrize("view_type,has_new,has_old", [
    ("KEYS_ONLY", False, False), ("NEW_IMAGE", True, False), ("OLD_IMAGE", False, True),
    ("NEW_AND_OLD_IMAGES", True, True),
])
def test_the_view_type_chooses_the_images(db, streams, view_type, has_new, has_old):
    arn = make_table(db, view_type=view_type)["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}, "v": {"N": "2"}})
    modify = read_all(streams, arn)[1]["dynamodb"]
    assert ("NewImage" in modify) == has_new and ("OldImage" in modify) == has_old
    if has_new:
        assert modify["NewImage"]["v"] == {"N": "2"}
    if has_old:
        assert modify["OldImage"]["v"] == {"N": "1"}


def test_tables_without_a_stream_record_nothing_until_one_is_enabled(db, streams):
    make_table(db, view_type=None)
    db.put_item(TableName="tbl", Item={"pk": {"S": "before"}})
    assert streams.list_streams(TableName="tbl")["Streams"] == []
    arn = db.update_table(TableName="tbl", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "after"}})
    assert events(read_all(streams, arn)) == [("INSERT", "after")]


# ListStreams and DescribeStream


def test_list_streams_names_each_stream_and_pages(db, streams):
    arns = [make_table(db, name=f"tbl{i}")["LatestStreamArn"] for i in range(3)]
    make_table(db, name="plain", view_type=None)
    listed = streams.list_streams()["Streams"]
    assert [s["StreamArn"] for s in listed] == arns
    assert listed[0] == {"StreamArn": arns[0], "TableName": "tbl0", "StreamLabel": arns[0].rsplit("/", 1)[1]}
    page = streams.list_streams(Limit=2)
    assert len(page["Streams"]) == 2 and page["LastEvaluatedStreamArn"] == arns[1]
    rest = streams.list_streams(Limit=2, ExclusiveStartStreamArn=page["LastEvaluatedStreamArn"])
    assert [s["StreamArn"] for s in rest["Streams"]] == [arns[2]] and "LastEvaluatedStreamArn" not in rest
    assert [s["TableName"] for s in streams.list_streams(TableName="tbl1")["Streams"]] == ["tbl1"]


def test_list_streams_errors(db, streams):
    with pytest.raises(ClientError) as excinfo:
        streams.list_streams(TableName="nope")
    assert error_of(excinfo) == ("ResourceNotFoundException", "Requested resource not found: Table: nope not found")
    with pytest.raises(ClientError) as excinfo:
        streams.list_streams(Limit=101)
    assert error_of(excinfo) == (
        "ValidationException",
        "1 validation error detected: Value '101' at 'limit' failed to satisfy constraint: "
        "Member must have value less than or equal to 100")
    with pytest.raises(ClientError) as excinfo:
        streams.list_streams(ExclusiveStartStreamArn="kossaapaaasdafsdaasdasdasdasasdasfadfadfasdasdas")
    assert error_of(excinfo) == ("ValidationException", "Invalid StreamArn")


def test_describe_stream_shows_one_shard(db, streams):
    table = make_table(db, view_type="NEW_IMAGE", range_key=True)
    arn = table["LatestStreamArn"]
    desc = streams.describe_stream(StreamArn=arn)["StreamDescription"]
    assert desc["StreamArn"] == arn and desc["StreamLabel"] == table["LatestStreamLabel"]
    assert desc["StreamStatus"] == "ENABLED" and desc["StreamViewType"] == "NEW_IMAGE"
    assert desc["TableName"] == "tbl" and desc["KeySchema"] == table["KeySchema"]
    assert "CreationRequestDateTime" in desc and "LastEvaluatedShardId" not in desc
    [shard] = desc["Shards"]
    assert re.fullmatch(r"shardId-\d{20}-[0-9a-f]{8}", shard["ShardId"])
    assert re.fullmatch(r"\d{21}", shard["SequenceNumberRange"]["StartingSequenceNumber"])
    assert "EndingSequenceNumber" not in shard["SequenceNumberRange"]
    after = streams.describe_stream(StreamArn=arn, ExclusiveStartShardId=shard["ShardId"])
    assert after["StreamDescription"]["Shards"] == []


def test_describe_stream_errors(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    missing = arn.replace(":table/tbl/", ":table/other/")
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=missing)
    assert error_of(excinfo) == ("ResourceNotFoundException",
                                 f"Requested resource not found: Stream: {missing} not found")
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn="sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf")
    assert error_of(excinfo) == ("ValidationException", "Invalid StreamArn")


# Shard iterators and GetRecords


def test_iterator_types_start_where_they_say(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    for key in "ab":
        db.put_item(TableName="tbl", Item={"pk": {"S": key}})
    latest = iterator(streams, arn, "LATEST")
    db.put_item(TableName="tbl", Item={"pk": {"S": "c"}})
    assert events(streams.get_records(ShardIterator=latest)["Records"]) == [("INSERT", "c")]
    records = read_all(streams, arn)
    assert events(records) == [("INSERT", "a"), ("INSERT", "b"), ("INSERT", "c")]
    second = records[1]["dynamodb"]["SequenceNumber"]
    assert events(read_all(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=second)) == [
        ("INSERT", "b"), ("INSERT", "c")]
    assert events(read_all(streams, arn, "AFTER_SEQUENCE_NUMBER", SequenceNumber=second)) == [("INSERT", "c")]
    start = shard_of(streams, arn)["SequenceNumberRange"]["StartingSequenceNumber"]
    assert len(read_all(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=start)) == 3


def test_get_records_pages_with_next_shard_iterator(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    for i in range(5):
        db.put_item(TableName="tbl", Item={"pk": {"S": f"k{i}"}})
    page = streams.get_records(ShardIterator=iterator(streams, arn), Limit=2)
    seen = events(page["Records"])
    while page["Records"]:
        page = streams.get_records(ShardIterator=page["NextShardIterator"], Limit=2)
        seen += events(page["Records"])
    assert seen == [("INSERT", f"k{i}") for i in range(5)]
    assert page["Records"] == [] and "NextShardIterator" in page
    db.put_item(TableName="tbl", Item={"pk": {"S": "late"}})
    assert events(streams.get_records(ShardIterator=page["NextShardIterator"])["Records"]) == [("INSERT", "late")]


def test_get_shard_iterator_errors(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    shard_id = shard_of(streams, arn)["ShardId"]
    seq = read_all(streams, arn)[0]["dynamodb"]["SequenceNumber"]

    def refused(**params):
        params.setdefault("StreamArn", arn)
        params.setdefault("ShardId", shard_id)
        with pytest.raises(ClientError) as excinfo:
            streams.get_shard_iterator(**params)
        return error_of(excinfo)

    assert refused(ShardIteratorType="AT_SEQUENCE_NUMBER")[0] == "ValidationException"
    assert refused(ShardIteratorType="LATEST", SequenceNumber=seq)[0] == "ValidationException"
    assert refused(ShardIteratorType="AFTER_SEQUENCE_NUMBER",
                   SequenceNumber="sdfsafglldfngjdafnasdflgnaldklkafdsgklnasdlv")[0] == "ValidationException"
    assert refused(ShardIteratorType="LATEST", ShardId="shardId-00000000000000000000-00000000") == (
        "ResourceNotFoundException",
        f"Requested resource not found: Shard: shardId-00000000000000000000-00000000 in Stream: {arn} not found")
    assert refused(ShardIteratorType="LATEST",
                   StreamArn="sdfadsfsdfsdgdfsgsfdabadfbabdadsfsdfsdfsdfsdfsdfsdfdfdssdffbdfdf") == (
        "ValidationException", "Invalid StreamArn")


def test_get_records_errors(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    it = iterator(streams, arn)
    with pytest.raises(ClientError) as excinfo:
        streams.get_records(ShardIterator=it, Limit=1001)
    assert error_of(excinfo) == (
        "ValidationException",
        "1 validation error detected: Value '1001' at 'limit' failed to satisfy constraint: "
        "Member must have value less than or equal to 1000")
    with pytest.raises(ClientError) as excinfo:
        streams.get_records(ShardIterator="sdfsdfsgagaddafgagasgasgasdfasdfasdfasdfasdgasdasdgasdg")
    assert error_of(excinfo) == ("ValidationException", "Invalid ShardIterator")
    assert streams.get_records(ShardIterator=it, Limit=1000)["Records"] == []


def test_iterators_expire_after_fifteen_minutes_of_the_clock(server, db, streams):
    arn = make_table(db)["LatestStreamArn"]
    it = iterator(streams, arn)
    server.advance_clock(14 * 60)
    nxt = streams.get_records(ShardIterator=it)["NextShardIterator"]
    server.advance_clock(2 * 60)
    with pytest.raises(ClientError) as excinfo:
        streams.get_records(ShardIterator=it)
    assert error_of(excinfo) == ("ExpiredIteratorException", "The provided iterator exceeds the maximum age allowed.")
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    assert events(streams.get_records(ShardIterator=nxt)["Records"]) == [("INSERT", "a")]


def test_records_are_kept_for_24_hours(server, db, streams):
    arn = make_table(db)["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "old"}})
    seq = read_all(streams, arn)[0]["dynamodb"]["SequenceNumber"]
    server.advance_clock(DAY + 1)
    db.put_item(TableName="tbl", Item={"pk": {"S": "new"}})
    assert events(read_all(streams, arn)) == [("INSERT", "new")]
    with pytest.raises(ClientError) as excinfo:
        iterator(streams, arn, "AT_SEQUENCE_NUMBER", SequenceNumber=seq)
    assert error_of(excinfo) == ("TrimmedDataAccessException", "The data you are trying to access has been trimmed.")
    start = shard_of(streams, arn)["SequenceNumberRange"]["StartingSequenceNumber"]
    assert int(start) > int(seq)


# Disabled streams


def test_a_disabled_stream_stays_readable_for_24_hours(server, db, streams):
    first = make_table(db, view_type="KEYS_ONLY")["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    db.update_table(TableName="tbl", StreamSpecification={"StreamEnabled": False})
    db.put_item(TableName="tbl", Item={"pk": {"S": "unseen"}})
    desc = streams.describe_stream(StreamArn=first)["StreamDescription"]
    assert desc["StreamStatus"] == "DISABLED"
    shard_range = desc["Shards"][0]["SequenceNumberRange"]
    assert int(shard_range["EndingSequenceNumber"]) >= int(shard_range["StartingSequenceNumber"])
    page = streams.get_records(ShardIterator=iterator(streams, first))
    assert events(page["Records"]) == [("INSERT", "a")]
    assert "NextShardIterator" not in page
    second = db.update_table(TableName="tbl", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]["LatestStreamArn"]
    assert sorted(s["StreamArn"] for s in streams.list_streams(TableName="tbl")["Streams"]) == sorted([first, second])
    assert streams.describe_stream(StreamArn=second)["StreamDescription"]["StreamStatus"] == "ENABLED"
    server.advance_clock(DAY + 1)
    assert [s["StreamArn"] for s in streams.list_streams(TableName="tbl")["Streams"]] == [second]
    with pytest.raises(ClientError) as excinfo:
        streams.describe_stream(StreamArn=first)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_deleting_the_table_disables_its_stream(db, streams):
    arn = make_table(db)["LatestStreamArn"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "a"}})
    db.delete_table(TableName="tbl")
    assert [s["StreamArn"] for s in streams.list_streams(TableName="tbl")["Streams"]] == [arn]
    assert streams.describe_stream(StreamArn=arn)["StreamDescription"]["StreamStatus"] == "DISABLED"
    assert events(read_all(streams, arn)) == [("INSERT", "a")]
    recreated = make_table(db)["LatestStreamArn"]
    assert recreated != arn


def test_streams_are_per_region(client, db):
    arn = make_table(db)["LatestStreamArn"]
    other = client("dynamodbstreams", region_name="eu-west-1")
    assert other.list_streams()["Streams"] == []
    with pytest.raises(ClientError) as excinfo:
        other.describe_stream(StreamArn=arn)
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


# Time to Live


def wait_until(predicate, attempts=100):
    """Polls a condition the server reaches on its own within about a second."""
    for _ in range(attempts):
        if predicate():
            return True
        time.sleep(0.05)
    return False


def ttl_table(db, view_type="NEW_AND_OLD_IMAGES", name="tbl"):
    arn = make_table(db, name=name, view_type=view_type).get("LatestStreamArn")
    db.update_time_to_live(TableName=name, TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    return arn


def get(db, key, table="tbl"):
    return db.get_item(TableName=table, Key={"pk": {"S": key}}).get("Item")


def test_time_to_live_is_described_as_set(db):
    make_table(db)
    assert db.describe_time_to_live(TableName="tbl")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    resp = db.update_time_to_live(TableName="tbl",
                                  TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert resp["TimeToLiveSpecification"] == {"Enabled": True, "AttributeName": "expires"}
    assert db.describe_time_to_live(TableName="tbl")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}


def test_time_to_live_changes_are_refused_in_dynamodbs_words(server, db):
    make_table(db)

    def refused(enabled, attribute="expires", table="tbl"):
        with pytest.raises(ClientError) as excinfo:
            db.update_time_to_live(TableName=table, TimeToLiveSpecification={
                "Enabled": enabled, "AttributeName": attribute})
        return error_of(excinfo)

    assert refused(False) == ("ValidationException", "TimeToLive is already disabled")
    assert refused(True, table="nope") == ("ResourceNotFoundException",
                                           "Requested resource not found: Table: nope not found")
    db.update_time_to_live(TableName="tbl", TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert refused(True) == ("ValidationException", "TimeToLive is already enabled")
    assert refused(True, "other") == (
        "ValidationException", "TimeToLive is active on a different AttributeName: current AttributeName is expires")
    assert refused(False) == ("ValidationException",
                              "Time to live has been modified multiple times within a fixed interval")
    server.advance_clock(60 * 60)
    db.update_time_to_live(TableName="tbl", TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    assert db.describe_time_to_live(TableName="tbl")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    with pytest.raises(ClientError) as excinfo:
        db.describe_time_to_live(TableName="nope")
    assert error_of(excinfo)[0] == "ResourceNotFoundException"


def test_expired_items_are_deleted_once_the_clock_passes_them(server, db, streams):
    arn = ttl_table(db)
    soon = int(time.time()) + 600
    db.put_item(TableName="tbl", Item={"pk": {"S": "soon"}, "expires": {"N": str(soon)}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "later"}, "expires": {"N": str(soon + 3600)}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "text"}, "expires": {"S": str(soon)}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "none"}})
    assert get(db, "soon") is not None
    server.advance_clock(1200)
    assert wait_until(lambda: get(db, "soon") is None)
    assert get(db, "later") is not None and get(db, "text") is not None and get(db, "none") is not None
    assert db.describe_table(TableName="tbl")["Table"]["ItemCount"] == 3
    removal = read_all(streams, arn)[-1]
    assert removal["eventName"] == "REMOVE"
    assert removal["userIdentity"] == {"PrincipalId": "dynamodb.amazonaws.com", "Type": "Service"}
    assert removal["dynamodb"]["OldImage"]["pk"] == {"S": "soon"}
    assert all("userIdentity" not in r for r in read_all(streams, arn)[:-1])


def test_rewriting_the_attribute_moves_or_cancels_the_expiry(server, db):
    ttl_table(db, view_type=None)
    soon = int(time.time()) + 600
    for key in ("moved", "removed", "kept"):
        db.put_item(TableName="tbl", Item={"pk": {"S": key}, "expires": {"N": str(soon)}})
    db.update_item(TableName="tbl", Key={"pk": {"S": "moved"}}, UpdateExpression="SET expires = :e",
                   ExpressionAttributeValues={":e": {"N": str(soon + 7200)}})
    db.update_item(TableName="tbl", Key={"pk": {"S": "removed"}}, UpdateExpression="REMOVE expires")
    server.advance_clock(1200)
    assert wait_until(lambda: get(db, "kept") is None)
    assert get(db, "moved") is not None and get(db, "removed") is not None
    server.advance_clock(7200)
    assert wait_until(lambda: get(db, "moved") is None)


def test_enabling_time_to_live_covers_items_already_stored(server, db):
    make_table(db, view_type=None)
    past = int(time.time()) - 60
    db.put_item(TableName="tbl", Item={"pk": {"S": "stale"}, "expires": {"N": str(past)}})
    assert get(db, "stale") is not None
    db.update_time_to_live(TableName="tbl", TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert wait_until(lambda: get(db, "stale") is None)


def test_expiries_more_than_five_years_old_are_ignored_and_disabling_stops_deletion(server, db):
    ttl_table(db, view_type=None)
    ttl_table(db, view_type=None, name="marker")
    now = int(time.time())
    db.put_item(TableName="tbl", Item={"pk": {"S": "ancient"}, "expires": {"N": str(now - 6 * 365 * DAY)}})
    db.put_item(TableName="tbl", Item={"pk": {"S": "soon"}, "expires": {"N": str(now + 600)}})
    server.advance_clock(3600)
    assert wait_until(lambda: get(db, "soon") is None)
    db.update_time_to_live(TableName="tbl", TimeToLiveSpecification={"Enabled": False, "AttributeName": "expires"})
    db.put_item(TableName="tbl", Item={"pk": {"S": "after"}, "expires": {"N": str(now + 4000)}})
    db.put_item(TableName="marker", Item={"pk": {"S": "m"}, "expires": {"N": str(now + 4000)}})
    server.advance_clock(3600)
    # The marker's deletion shows a sweep has run past both expiries.
    assert wait_until(lambda: get(db, "m", table="marker") is None)
    assert get(db, "ancient") is not None and get(db, "after") is not None
