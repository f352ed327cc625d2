"""DynamoDB global tables (version 2019.11.21) through boto3: UpdateTable's ReplicaUpdates with
AWS's checks and messages, the replica table in the other region, replication of item writes
in every direction (last writer wins), DeleteTable of a member, and replica auto scaling."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

HOME, OTHER, THIRD = "us-east-1", "eu-west-1", "ap-southeast-2"
INVALID = "One or more parameter values were invalid: "
NOT_PART = ("Update global table operation failed because one or more replicas were not part of the "
            "global table. Please retry the request without these replicas: [{}].")
EXISTED = ("Failed to create a the new replica of table with name: '{}' because one or more replicas "
           "already existed as tables.")
SOURCE = ("Replica cannot be deleted because it has acted as a source region for new replica(s) being "
          "added to the table in the last 24 hours.")


def fails(call, *args, **params):
    with pytest.raises(ClientError) as excinfo:
        call(*args, **params)
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


@pytest.fixture
def db(client):
    return client("dynamodb", region_name=HOME)


@pytest.fixture
def other(client):
    return client("dynamodb", region_name=OTHER)


@pytest.fixture
def third(client):
    return client("dynamodb", region_name=THIRD)


def make_table(db, name="orders", **extra):
    params = dict(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "g", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        GlobalSecondaryIndexes=[{"IndexName": "by_g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                                 "Projection": {"ProjectionType": "ALL"}}],
        BillingMode="PAY_PER_REQUEST",
    )
    params.update(extra)
    return db.create_table(**params)["TableDescription"]


def add_replica(db, region, name="orders", **overrides):
    return db.update_table(TableName=name, ReplicaUpdates=[{"Create": {"RegionName": region, **overrides}}])


def wait_replicated(server, region, count=1, after=0, name="orders"):
    """Waits for `count` changes applied in `region` by replication after the trace entry
    `after` (the trace's deliveries); returns the sequence number of the last one."""
    target = f"arn:aws:dynamodb:{region}:000000000000:table/{name}"
    for _ in range(count):
        after = server.wait_for_delivery(operation="dynamodb:Replication", target=target,
                                         outcome="delivered", after=after)["seq"]
    return after


def test_create_replica_makes_the_table_in_the_other_region(db, other):
    make_table(db)
    db.put_item(TableName="orders", Item={"pk": {"S": "before"}, "g": {"S": "x"}})
    response = add_replica(db, OTHER)["TableDescription"]
    # While AWS works, the table is UPDATING with the version and a stream already set.
    assert response["TableStatus"] == "UPDATING"
    assert response["GlobalTableVersion"] == "2019.11.21"
    assert response["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_AND_OLD_IMAGES"}
    assert "Replicas" not in response

    home = db.describe_table(TableName="orders")["Table"]
    assert home["TableStatus"] == "ACTIVE"
    assert home["GlobalTableVersion"] == "2019.11.21"
    assert home["Replicas"] == [{
        "RegionName": OTHER, "ReplicaStatus": "ACTIVE",
        "ReplicaArn": f"arn:aws:dynamodb:{OTHER}:000000000000:table/orders",
        "GlobalSecondaryIndexes": [{"IndexName": "by_g"}]}]

    replica = other.describe_table(TableName="orders")["Table"]
    assert replica["TableStatus"] == "ACTIVE"
    assert replica["TableArn"] == f"arn:aws:dynamodb:{OTHER}:000000000000:table/orders"
    assert replica["TableId"] != home["TableId"]
    assert replica["KeySchema"] == home["KeySchema"]
    assert replica["AttributeDefinitions"] == home["AttributeDefinitions"]
    assert replica["GlobalSecondaryIndexes"][0]["IndexName"] == "by_g"
    assert replica["GlobalSecondaryIndexes"][0]["IndexArn"].startswith(f"arn:aws:dynamodb:{OTHER}:")
    assert replica["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert replica["StreamSpecification"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
    assert f":{OTHER}:" in replica["LatestStreamArn"]
    assert replica["GlobalTableVersion"] == "2019.11.21"
    assert [r["RegionName"] for r in replica["Replicas"]] == [HOME]
    # The items already in the table are copied, with their index rows and counters.
    assert other.get_item(TableName="orders", Key={"pk": {"S": "before"}})["Item"]["g"] == {"S": "x"}
    assert replica["ItemCount"] == 1
    assert other.query(TableName="orders", IndexName="by_g", KeyConditionExpression="g = :g",
                       ExpressionAttributeValues={":g": {"S": "x"}})["Count"] == 1
    assert other.list_tables()["TableNames"] == ["orders"]


def test_writes_replicate_in_every_direction(db, other, server):
    make_table(db)
    add_replica(db, OTHER)
    db.put_item(TableName="orders", Item={"pk": {"S": "a"}, "v": {"N": "1"}})
    seen = wait_replicated(server, OTHER)
    assert other.get_item(TableName="orders", Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "1"}

    other.update_item(TableName="orders", Key={"pk": {"S": "a"}}, UpdateExpression="SET v = :v",
                      ExpressionAttributeValues={":v": {"N": "2"}})
    back = wait_replicated(server, HOME)
    assert db.get_item(TableName="orders", Key={"pk": {"S": "a"}})["Item"]["v"] == {"N": "2"}

    db.delete_item(TableName="orders", Key={"pk": {"S": "a"}})
    seen = wait_replicated(server, OTHER, after=seen)
    assert "Item" not in other.get_item(TableName="orders", Key={"pk": {"S": "a"}})
    # Batches and transactions replicate as well.
    db.batch_write_item(RequestItems={"orders": [{"PutRequest": {"Item": {"pk": {"S": f"b{i}"}}}}
                                                 for i in range(3)]})
    other.transact_write_items(TransactItems=[{"Put": {"TableName": "orders", "Item": {"pk": {"S": "t"}}}}])
    wait_replicated(server, OTHER, count=3, after=seen)
    wait_replicated(server, HOME, after=back)
    assert other.scan(TableName="orders")["Count"] == 4
    assert db.scan(TableName="orders")["Count"] == 4


def test_the_last_writer_wins_when_regions_race(db, other, server, client):
    make_table(db)
    add_replica(db, OTHER)
    db.put_item(TableName="orders", Item={"pk": {"S": "k"}, "v": {"S": "home"}})
    server.advance_clock(1)
    other.put_item(TableName="orders", Item={"pk": {"S": "k"}, "v": {"S": "other"}})
    wait_replicated(server, OTHER)
    wait_replicated(server, HOME)
    home = db.get_item(TableName="orders", Key={"pk": {"S": "k"}}, ConsistentRead=True)["Item"]
    there = other.get_item(TableName="orders", Key={"pk": {"S": "k"}}, ConsistentRead=True)["Item"]
    # Both regions settle on the same item: the later write (the other region's).
    assert home == there == {"pk": {"S": "k"}, "v": {"S": "other"}}


def test_replicated_writes_appear_on_the_replicas_stream(db, other, server, client):
    make_table(db)
    add_replica(db, OTHER)
    db.put_item(TableName="orders", Item={"pk": {"S": "s"}})
    wait_replicated(server, OTHER)
    streams = client("dynamodbstreams", region_name=OTHER)
    arn = other.describe_table(TableName="orders")["Table"]["LatestStreamArn"]
    shard = streams.describe_stream(StreamArn=arn)["StreamDescription"]["Shards"][0]["ShardId"]
    it = streams.get_shard_iterator(StreamArn=arn, ShardId=shard, ShardIteratorType="TRIM_HORIZON")
    records = streams.get_records(ShardIterator=it["ShardIterator"])["Records"]
    assert [r["eventName"] for r in records] == ["INSERT"]
    assert records[0]["dynamodb"]["NewImage"] == {"pk": {"S": "s"}}


def test_three_regions_list_each_other(db, other, third, server):
    make_table(db)
    add_replica(db, OTHER)
    add_replica(other, THIRD)
    assert [r["RegionName"] for r in db.describe_table(TableName="orders")["Table"]["Replicas"]] == [OTHER, THIRD]
    assert [r["RegionName"] for r in other.describe_table(TableName="orders")["Table"]["Replicas"]] == [HOME, THIRD]
    assert [r["RegionName"] for r in third.describe_table(TableName="orders")["Table"]["Replicas"]] == [OTHER, HOME]
    third.put_item(TableName="orders", Item={"pk": {"S": "far"}})
    wait_replicated(server, HOME)
    wait_replicated(server, OTHER)
    assert "Item" in db.get_item(TableName="orders", Key={"pk": {"S": "far"}})
    assert "Item" in other.get_item(TableName="orders", Key={"pk": {"S": "far"}})


def test_an_existing_stream_keeps_its_view_type_and_cannot_be_disabled(db, other):
    make_table(db, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    stream = db.describe_table(TableName="orders")["Table"]["LatestStreamArn"]
    add_replica(db, OTHER)
    home = db.describe_table(TableName="orders")["Table"]
    assert home["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    assert home["LatestStreamArn"] == stream
    assert other.describe_table(TableName="orders")["Table"]["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"
    for client_ in (db, other):
        assert fails(client_.update_table, TableName="orders",
                     StreamSpecification={"StreamEnabled": False}) == (
            "ValidationException", INVALID + "Disabling Stream is not allowed for a Global Table replica.")
    assert fails(db.update_table, TableName="orders",
                 StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}) == (
        "ValidationException", "Table already has an enabled stream: TableName: orders")


def test_replica_update_checks_in_aws_words(db, other):
    make_table(db)
    create = {"Create": {"RegionName": OTHER}}
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[create], DeletionProtectionEnabled=True) == (
        "ValidationException", INVALID + "Replica modification must be the only operation in the request")
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Create": {"RegionName": HOME}}]) == (
        "ValidationException", "Cannot add or delete the local region through ReplicaUpdates. "
                               "Use CreateTable, DeleteTable, or UpdateTable as required.")
    code, message = fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Create": {"RegionName": "us-fake-1"}}])
    assert code == "ValidationException"
    assert message.startswith("Region us-fake-1 is not supported. The latest version of global tables are only "
                              "supported in the following regions: [")
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[create, {"Create": {"RegionName": THIRD}}]) == (
        "ValidationException", "Update table operation with more than one create or delete replica actions not allowed")
    assert fails(db.update_table, TableName="orders",
                 ReplicaUpdates=[create, {"Delete": {"RegionName": THIRD}}]) == (
        "ValidationException", "Update table operation with more than one type of replica actions not allowed.")
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{}]) == (
        "ValidationException", "There are no actions specified in the Replica Update Action of the request.")
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Update": {"RegionName": OTHER}}]) == (
        "ValidationException", "There are no actions specified in the Replica Update Action of the request.")
    for action in ("Update", "Delete"):
        spec = {"RegionName": OTHER, **({"TableClassOverride": "STANDARD"} if action == "Update" else {})}
        assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{action: spec}]) == (
            "ValidationException", NOT_PART.format(OTHER))
    assert fails(db.update_table, TableName="missing", ReplicaUpdates=[create]) == (
        "ResourceNotFoundException", "Requested resource not found: Table: missing not found")
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Create": {"RegionName": OTHER,
                                                                                  "KMSMasterKeyId": "k"}}]) == (
        "ValidationException", INVALID + "KMSMasterKeyId must be specified for each replica.")
    # Two identical creates are one.
    add_replica_twice = db.update_table(TableName="orders", ReplicaUpdates=[create, create])
    assert add_replica_twice["TableDescription"]["TableStatus"] == "UPDATING"
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[create]) == (
        "ValidationException", EXISTED.format("orders"))
    assert fails(db.update_table, TableName="orders",
                 ReplicaUpdates=[{"Update": {"RegionName": OTHER, "KMSMasterKeyId": "k"}}]) == (
        "ValidationException", INVALID + "KMSMasterKeyId must be specified for each replica.")
    assert fails(db.update_table, TableName="orders",
                 ReplicaUpdates=[{"Update": {"RegionName": OTHER,
                                             "ProvisionedThroughputOverride": {"ReadCapacityUnits": 5}}}]) == (
        "ValidationException",
        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")


def test_no_replica_onto_an_existing_table_or_a_provisioned_one(db, other):
    make_table(db)
    make_table(other)
    assert fails(add_replica, db, OTHER) == ("ValidationException", EXISTED.format("orders"))
    db.create_table(TableName="fixed", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                    ProvisionedThroughput={"ReadCapacityUnits": 5, "WriteCapacityUnits": 5})
    assert fails(add_replica, db, OTHER, name="fixed") == (
        "ValidationException", "Table write capacity should either be Pay-Per-Request or AutoScaled.")


def test_overrides_are_stored_and_shown(db, other):
    make_table(db, OnDemandThroughput={"MaxReadRequestUnits": 100})
    add_replica(db, OTHER, TableClassOverride="STANDARD_INFREQUENT_ACCESS",
                OnDemandThroughputOverride={"MaxReadRequestUnits": 50},
                GlobalSecondaryIndexes=[{"IndexName": "by_g", "OnDemandThroughputOverride": {"MaxReadRequestUnits": 7}},
                                        {"IndexName": "unknown"}])
    entry = db.describe_table(TableName="orders")["Table"]["Replicas"][0]
    assert entry["ReplicaTableClassSummary"] == {"TableClass": "STANDARD_INFREQUENT_ACCESS"}
    assert entry["OnDemandThroughputOverride"] == {"MaxReadRequestUnits": 50}
    assert entry["GlobalSecondaryIndexes"] == [{"IndexName": "by_g",
                                                "OnDemandThroughputOverride": {"MaxReadRequestUnits": 7}}]
    replica = other.describe_table(TableName="orders")["Table"]
    assert replica["TableClassSummary"]["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert replica["OnDemandThroughput"]["MaxReadRequestUnits"] == 50

    updated = db.update_table(TableName="orders", ReplicaUpdates=[
        {"Update": {"RegionName": OTHER, "TableClassOverride": "STANDARD",
                    "OnDemandThroughputOverride": {"MaxReadRequestUnits": 100}}}])
    # The response does not echo the new overrides yet, as in AWS.
    assert updated["TableDescription"]["Replicas"][0]["OnDemandThroughputOverride"] == {"MaxReadRequestUnits": 50}
    entry = db.describe_table(TableName="orders")["Table"]["Replicas"][0]
    assert entry["ReplicaTableClassSummary"] == {"TableClass": "STANDARD"}
    assert "OnDemandThroughputOverride" not in entry  # the base value clears it
    assert other.describe_table(TableName="orders")["Table"]["TableClassSummary"]["TableClass"] == "STANDARD"


def test_encrypted_table_gives_each_replica_a_key_of_its_region(db, other):
    make_table(db, SSESpecification={"Enabled": True, "SSEType": "KMS",
                                     "KMSMasterKeyId": f"arn:aws:kms:{HOME}:000000000000:key/home"})
    add_replica(db, OTHER, KMSMasterKeyId="1234abcd-12ab-34cd-56ef-1234567890ab")
    arn = f"arn:aws:kms:{OTHER}:000000000000:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    assert db.describe_table(TableName="orders")["Table"]["Replicas"][0]["KMSMasterKeyId"] == arn
    replica = other.describe_table(TableName="orders")["Table"]
    assert replica["SSEDescription"]["KMSMasterKeyArn"] == arn
    assert replica["Replicas"][0]["KMSMasterKeyId"] == f"arn:aws:kms:{HOME}:000000000000:key/home"


def test_delete_replica_removes_its_table_and_ends_replication(db, other, server):
    make_table(db)
    add_replica(db, OTHER)
    response = db.update_table(TableName="orders", ReplicaUpdates=[{"Delete": {"RegionName": OTHER}}])
    assert response["TableDescription"]["TableStatus"] == "UPDATING"
    assert response["TableDescription"]["Replicas"][0]["ReplicaStatus"] == "ACTIVE"
    assert fails(other.describe_table, TableName="orders")[0] == "ResourceNotFoundException"
    home = db.describe_table(TableName="orders")["Table"]
    assert "Replicas" not in home and "GlobalTableVersion" not in home
    assert home["StreamSpecification"]["StreamEnabled"] is True  # the stream stays
    db.update_table(TableName="orders", StreamSpecification={"StreamEnabled": False})
    # Added again, it starts afresh.
    db.put_item(TableName="orders", Item={"pk": {"S": "again"}})
    add_replica(db, OTHER)
    assert "Item" in other.get_item(TableName="orders", Key={"pk": {"S": "again"}})


def test_delete_table_follows_aws_rules_for_members(db, other, third, server):
    make_table(db)
    add_replica(db, OTHER)
    # Within 24 hours a member that sourced a replica cannot leave before it.
    assert fails(db.delete_table, TableName="orders") == ("ValidationException", SOURCE)
    # The replica it sourced can go first, then the source is free.
    db.update_table(TableName="orders", ReplicaUpdates=[{"Delete": {"RegionName": OTHER}}])
    add_replica(db, OTHER)
    add_replica(other, THIRD)
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Delete": {"RegionName": OTHER}}]) == (
        "ValidationException", SOURCE)
    # Deletion protection of a replica guards it from both sides.
    third.update_table(TableName="orders", DeletionProtectionEnabled=True)
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[{"Delete": {"RegionName": THIRD}}]) == (
        "ValidationException", f"Cannot delete table orders in region {THIRD} because it has deletion protection "
                               "enabled. Disable deletion protection first.")
    third.update_table(TableName="orders", DeletionProtectionEnabled=False)
    # A replica that sourced nothing leaves with a plain DeleteTable in its region.
    assert third.delete_table(TableName="orders")["TableDescription"]["TableStatus"] == "DELETING"
    assert [r["RegionName"] for r in db.describe_table(TableName="orders")["Table"]["Replicas"]] == [OTHER]
    other.delete_table(TableName="orders")
    assert "Replicas" not in db.describe_table(TableName="orders")["Table"]
    db.delete_table(TableName="orders")


def test_source_hold_ends_after_a_day(db, other, server):
    make_table(db)
    add_replica(db, OTHER)
    server.advance_clock(24 * 3600 + 1)
    db.delete_table(TableName="orders")
    replica = other.describe_table(TableName="orders")["Table"]
    assert "Replicas" not in replica and "GlobalTableVersion" not in replica


def test_replica_auto_scaling_describes_every_member(db, other):
    make_table(db)
    code, message = fails(db.describe_table_replica_auto_scaling, TableName="orders")
    assert (code, message) == ("ResourceNotFoundException", "Global table with name: 'orders' does not exist.")
    assert fails(db.describe_table_replica_auto_scaling, TableName="missing")[1] == (
        "Global table with name: 'missing' does not exist.")
    add_replica(db, OTHER)
    disabled = {"AutoScalingDisabled": True, "ScalingPolicies": []}
    described = db.describe_table_replica_auto_scaling(TableName="orders")["TableAutoScalingDescription"]
    assert described["TableName"] == "orders"
    assert described["TableStatus"] == "ACTIVE"
    assert [r["RegionName"] for r in described["Replicas"]] == [OTHER, HOME]
    for replica in described["Replicas"]:
        assert replica["ReplicaStatus"] == "ACTIVE"
        assert replica["ReplicaProvisionedReadCapacityAutoScalingSettings"] == disabled
        assert replica["ReplicaProvisionedWriteCapacityAutoScalingSettings"] == disabled
        assert replica["GlobalSecondaryIndexes"] == [{
            "IndexName": "by_g", "IndexStatus": "ACTIVE",
            "ProvisionedReadCapacityAutoScalingSettings": disabled,
            "ProvisionedWriteCapacityAutoScalingSettings": disabled}]
    assert other.describe_table_replica_auto_scaling(
        TableName="orders")["TableAutoScalingDescription"]["Replicas"] == described["Replicas"]

    updated = db.update_table_replica_auto_scaling(
        TableName="orders", ProvisionedWriteCapacityAutoScalingUpdate={"AutoScalingDisabled": True})
    assert updated["TableAutoScalingDescription"] == described
    prefix = "Failed to update global table with name \u2018orders\u2018. Replicas 'EU-WEST-1', 'US-EAST-1' " \
             "BillingMode is PayPerRequest. You must convert table's BillingMode to PROVISIONED to set parameters: "
    scaling = {"MinimumUnits": 1, "MaximumUnits": 10,
               "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}
    assert fails(db.update_table_replica_auto_scaling, TableName="orders",
                 ProvisionedWriteCapacityAutoScalingUpdate=scaling) == (
        "ValidationException", prefix + "'GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate'.")
    assert fails(db.update_table_replica_auto_scaling, TableName="orders", ReplicaUpdates=[
        {"RegionName": HOME, "ReplicaProvisionedReadCapacityAutoScalingUpdate": scaling}]) == (
        "ValidationException", prefix + "'ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate'.")
    failed = "Failed to update settings for global table with name: \u2018orders\u2019"
    assert fails(db.update_table_replica_auto_scaling, TableName="orders") == (
        "ValidationException", failed + " because at least one update parameter must be specified.")
    assert fails(db.update_table_replica_auto_scaling, TableName="orders",
                 ReplicaUpdates=[{"RegionName": HOME}]) == (
        "ValidationException",
        failed + f" because at least one update parameter must be specified for region: \u2018{HOME}\u2019.")
    twice = {"RegionName": HOME, "ReplicaProvisionedReadCapacityAutoScalingUpdate": {"AutoScalingDisabled": True}}
    assert fails(db.update_table_replica_auto_scaling, TableName="orders", ReplicaUpdates=[twice, twice]) == (
        "ValidationException", failed + f" because the regions: \u2018[{HOME}]\u2019 were specified more than once.")


def test_index_and_time_to_live_changes_reach_every_member(db, other, server):
    make_table(db)
    add_replica(db, OTHER)
    db.update_table(TableName="orders", AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "S"}],
                    GlobalSecondaryIndexUpdates=[{"Create": {
                        "IndexName": "by_h", "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                        "Projection": {"ProjectionType": "KEYS_ONLY"}}}])
    replica = other.describe_table(TableName="orders")["Table"]
    assert sorted(i["IndexName"] for i in replica["GlobalSecondaryIndexes"]) == ["by_g", "by_h"]
    assert {"AttributeName": "h", "AttributeType": "S"} in replica["AttributeDefinitions"]
    assert db.describe_table(TableName="orders")["Table"]["Replicas"][0]["GlobalSecondaryIndexes"] == [
        {"IndexName": "by_g"}, {"IndexName": "by_h"}]
    db.put_item(TableName="orders", Item={"pk": {"S": "a"}, "h": {"S": "x"}})
    wait_replicated(server, OTHER)
    assert other.query(TableName="orders", IndexName="by_h", KeyConditionExpression="h = :h",
                       ExpressionAttributeValues={":h": {"S": "x"}})["Count"] == 1
    # Asked of the replica, a deletion reaches the table it came from.
    other.update_table(TableName="orders", GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by_g"}}])
    assert [i["IndexName"] for i in db.describe_table(TableName="orders")["Table"]["GlobalSecondaryIndexes"]] == [
        "by_h"]
    assert other.describe_table(TableName="orders")["Table"]["Replicas"][0]["GlobalSecondaryIndexes"] == [
        {"IndexName": "by_h"}]
    # Table class too (AWS applies a base table class change to every replica).
    db.update_table(TableName="orders", TableClass="STANDARD_INFREQUENT_ACCESS")
    assert other.describe_table(TableName="orders")["Table"]["TableClassSummary"]["TableClass"] == (
        "STANDARD_INFREQUENT_ACCESS")

    other.update_time_to_live(TableName="orders",
                              TimeToLiveSpecification={"Enabled": True, "AttributeName": "expires"})
    assert db.describe_time_to_live(TableName="orders")["TimeToLiveDescription"] == {
        "TimeToLiveStatus": "ENABLED", "AttributeName": "expires"}


def test_billing_and_throughput_changes_reach_every_member(db, other):
    db.create_table(TableName="orders", AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                    KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}], BillingMode="PAY_PER_REQUEST")
    add_replica(db, OTHER)
    other.update_table(TableName="orders", BillingMode="PROVISIONED",
                       ProvisionedThroughput={"ReadCapacityUnits": 4, "WriteCapacityUnits": 6})
    home = db.describe_table(TableName="orders")["Table"]
    assert home["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert (home["ProvisionedThroughput"]["ReadCapacityUnits"], home["ProvisionedThroughput"]["WriteCapacityUnits"]) \
        == (4, 6)
    db.update_table(TableName="orders", ProvisionedThroughput={"ReadCapacityUnits": 8, "WriteCapacityUnits": 6})
    assert other.describe_table(TableName="orders")["Table"]["ProvisionedThroughput"]["ReadCapacityUnits"] == 8
    scaling = {"MinimumUnits": 1, "MaximumUnits": 10,
               "ScalingPolicyUpdate": {"TargetTrackingScalingPolicyConfiguration": {"TargetValue": 70}}}
    assert fails(db.update_table_replica_auto_scaling, TableName="orders",
                 ProvisionedWriteCapacityAutoScalingUpdate=scaling)[0] == "NotImplemented"
    db.update_table(TableName="orders", BillingMode="PAY_PER_REQUEST")
    assert other.describe_table(TableName="orders")["Table"]["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"


def test_replica_auto_scaling_of_a_region_outside_the_group(db, other):
    make_table(db)
    add_replica(db, OTHER)
    code, _ = fails(db.update_table_replica_auto_scaling, TableName="orders", ReplicaUpdates=[
        {"RegionName": THIRD, "ReplicaProvisionedReadCapacityAutoScalingUpdate": {"AutoScalingDisabled": True}}])
    assert code == "ResourceNotFoundException"


def test_a_disassociated_replica_stays_a_regional_table(db, other, server):
    make_table(db)
    db.put_item(TableName="orders", Item={"pk": {"S": "kept"}})
    add_replica(db, OTHER)
    disassociate = {"Disassociate": {"RegionName": OTHER, "DisassociationMode": "WAIT_FOR_REPLICATION"}}
    assert fails(db.update_table, TableName="orders", ReplicaUpdates=[disassociate])[0] == "ValidationException"
    response = other.update_table(TableName="orders", ReplicaUpdates=[disassociate])
    assert response["TableDescription"]["TableStatus"] == "UPDATING"
    replica = other.describe_table(TableName="orders")["Table"]
    assert "Replicas" not in replica and "GlobalTableVersion" not in replica
    assert replica["ItemCount"] == 1
    assert "Replicas" not in db.describe_table(TableName="orders")["Table"]
    # Writes no longer travel.
    other.put_item(TableName="orders", Item={"pk": {"S": "alone"}})
    assert "Item" not in db.get_item(TableName="orders", Key={"pk": {"S": "alone"}})
    assert fails(other.update_table, TableName="orders", ReplicaUpdates=[disassociate]) == (
        "ValidationException", NOT_PART.format(OTHER))
