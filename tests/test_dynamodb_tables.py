"""DynamoDB table lifecycle through boto3: UpdateTable (billing, throughput, global secondary
indexes, streams, encryption, deletion protection, table class) and the waiters around it."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

INVALID = "One or more parameter values were invalid: "


def ddb(client):
    return client("dynamodb")


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def provisioned(read=5, write=5):
    return {"ReadCapacityUnits": read, "WriteCapacityUnits": write}


def make_table(db, name="tbl", billing="PAY_PER_REQUEST", **extra):
    params = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": billing,
    }
    if billing == "PROVISIONED":
        params["ProvisionedThroughput"] = provisioned()
    params.update(extra)
    return db.create_table(**params)["TableDescription"]


def gsi_create(name="by-g", attribute="g", throughput=None, projection="ALL"):
    create = {
        "IndexName": name,
        "KeySchema": [{"AttributeName": attribute, "KeyType": "HASH"}],
        "Projection": {"ProjectionType": projection},
    }
    if throughput:
        create["ProvisionedThroughput"] = throughput
    return {"Create": create}


def update_error(db, **params):
    params.setdefault("TableName", "tbl")
    with pytest.raises(ClientError) as excinfo:
        db.update_table(**params)
    return error_of(excinfo)


def describe(db, name="tbl"):
    return db.describe_table(TableName=name)["Table"]


# Billing mode and throughput


def test_throughput_change_answers_updating_with_the_old_units_then_describes_the_new(client):
    db = ddb(client)
    make_table(db, billing="PROVISIONED")
    resp = db.update_table(TableName="tbl", ProvisionedThroughput=provisioned(10, 3))["TableDescription"]
    assert resp["TableStatus"] == "UPDATING"
    assert (resp["ProvisionedThroughput"]["ReadCapacityUnits"], resp["ProvisionedThroughput"]["WriteCapacityUnits"]) == (5, 5)
    table = describe(db)
    assert table["TableStatus"] == "ACTIVE"
    throughput = table["ProvisionedThroughput"]
    assert (throughput["ReadCapacityUnits"], throughput["WriteCapacityUnits"]) == (10, 3)
    assert "LastIncreaseDateTime" in throughput and "LastDecreaseDateTime" in throughput
    assert throughput["NumberOfDecreasesToday"] == 1
    db.update_table(TableName="tbl", ProvisionedThroughput=provisioned(10, 1))
    assert describe(db)["ProvisionedThroughput"]["NumberOfDecreasesToday"] == 2


def test_unchanged_throughput_is_refused_in_dynamodbs_words(client):
    db = ddb(client)
    make_table(db, billing="PROVISIONED")
    assert update_error(db, ProvisionedThroughput=provisioned()) == (
        "ValidationException",
        "The provisioned throughput for the table will not change. The requested value equals the current value. "
        "Current ReadCapacityUnits provisioned for the table: 5. Requested ReadCapacityUnits: 5. Current "
        "WriteCapacityUnits provisioned for the table: 5. Requested WriteCapacityUnits: 5. Refer to the Amazon "
        "DynamoDB Developer Guide for current limits and how to request higher limits.")


def test_on_demand_tables_take_no_throughput(client):
    db = ddb(client)
    make_table(db)
    assert update_error(db, ProvisionedThroughput=provisioned()) == (
        "ValidationException",
        INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST")


def test_switching_to_provisioned_needs_throughput_for_the_table_and_each_index(client):
    db = ddb(client)
    make_table(db, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "g", "AttributeType": "S"}],
               GlobalSecondaryIndexes=[gsi_create()["Create"]])
    assert update_error(db, BillingMode="PROVISIONED") == (
        "ValidationException", INVALID + "ProvisionedThroughput must be specified when BillingMode is PROVISIONED")
    assert update_error(db, BillingMode="PROVISIONED", ProvisionedThroughput=provisioned()) == (
        "ValidationException", INVALID + "ProvisionedThroughput must be specified for index: by-g")
    db.update_table(TableName="tbl", BillingMode="PROVISIONED", ProvisionedThroughput=provisioned(),
                    GlobalSecondaryIndexUpdates=[{"Update": {"IndexName": "by-g",
                                                             "ProvisionedThroughput": provisioned(2, 3)}}])
    table = describe(db)
    assert table["BillingModeSummary"]["BillingMode"] == "PROVISIONED"
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 5
    index_throughput = table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]
    assert (index_throughput["ReadCapacityUnits"], index_throughput["WriteCapacityUnits"]) == (2, 3)


def test_switching_to_on_demand_zeroes_throughput_and_dates_the_switch(client):
    db = ddb(client)
    make_table(db, billing="PROVISIONED")
    resp = db.update_table(TableName="tbl", BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert resp["TableStatus"] == "UPDATING"
    table = describe(db)
    summary = table["BillingModeSummary"]
    assert summary["BillingMode"] == "PAY_PER_REQUEST"
    assert summary["LastUpdateToPayPerRequestDateTime"] >= table["CreationDateTime"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert table["ProvisionedThroughput"]["WriteCapacityUnits"] == 0


def test_an_update_names_at_least_one_change(client):
    db = ddb(client)
    make_table(db)
    code, message = update_error(db, AttributeDefinitions=[{"AttributeName": "x", "AttributeType": "S"}])
    assert code == "ValidationException"
    assert message.startswith("At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, "
                              "GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates")
    assert message.endswith("WarmThroughput or TableClass is required")


def test_updating_a_missing_table_is_resource_not_found(client):
    db = ddb(client)
    assert update_error(db, TableName="nope", BillingMode="PAY_PER_REQUEST") == (
        "ResourceNotFoundException", "Requested resource not found: Table: nope not found")


def test_a_no_op_billing_mode_is_accepted_as_an_update(client):
    db = ddb(client)
    make_table(db)
    resp = db.update_table(TableName="tbl", BillingMode="PAY_PER_REQUEST")["TableDescription"]
    assert resp["TableStatus"] == "UPDATING"
    assert describe(db)["TableStatus"] == "ACTIVE"


# Global secondary indexes


def put_items(db, items):
    for item in items:
        db.put_item(TableName="tbl", Item=item)


def test_a_new_index_is_backfilled_from_existing_items(client):
    db = ddb(client)
    make_table(db)
    put_items(db, [{"pk": {"S": "a"}, "g": {"S": "x"}, "v": {"N": "1"}},
                   {"pk": {"S": "b"}, "g": {"S": "x"}},
                   {"pk": {"S": "c"}, "g": {"N": "7"}},
                   {"pk": {"S": "d"}}])
    resp = db.update_table(TableName="tbl",
                           AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                           GlobalSecondaryIndexUpdates=[gsi_create()])["TableDescription"]
    assert resp["TableStatus"] == "UPDATING"
    index = resp["GlobalSecondaryIndexes"][0]
    assert (index["IndexName"], index["IndexStatus"], index["Backfilling"]) == ("by-g", "CREATING", False)
    assert index["IndexArn"] == f"{resp['TableArn']}/index/by-g"
    table = describe(db)
    assert table["TableStatus"] == "ACTIVE"
    assert table["GlobalSecondaryIndexes"][0]["IndexStatus"] == "ACTIVE"
    assert {"AttributeName": "g", "AttributeType": "S"} in table["AttributeDefinitions"]
    found = db.query(TableName="tbl", IndexName="by-g", KeyConditionExpression="g = :g",
                     ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    assert sorted(i["pk"]["S"] for i in found) == ["a", "b"]
    db.put_item(TableName="tbl", Item={"pk": {"S": "e"}, "g": {"S": "x"}})
    assert db.query(TableName="tbl", IndexName="by-g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Count"] == 3


def test_a_deleted_index_disappears_with_its_attribute_definitions(client):
    db = ddb(client)
    make_table(db, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "g", "AttributeType": "S"}],
               GlobalSecondaryIndexes=[gsi_create()["Create"]])
    put_items(db, [{"pk": {"S": "a"}, "g": {"S": "x"}}])
    resp = db.update_table(TableName="tbl",
                           GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-g"}}])["TableDescription"]
    assert resp["GlobalSecondaryIndexes"][0]["IndexStatus"] == "DELETING"
    table = describe(db)
    assert "GlobalSecondaryIndexes" not in table
    assert table["AttributeDefinitions"] == [{"AttributeName": "pk", "AttributeType": "S"}]
    with pytest.raises(ClientError) as excinfo:
        db.query(TableName="tbl", IndexName="by-g", KeyConditionExpression="g = :g",
                 ExpressionAttributeValues={":g": {"S": "x"}})
    assert error_of(excinfo) == ("ValidationException", "The table does not have the specified index: by-g")
    db.update_table(TableName="tbl", AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                    GlobalSecondaryIndexUpdates=[gsi_create()])
    assert db.query(TableName="tbl", IndexName="by-g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Count"] == 1


def test_an_index_update_reprovisions_it_and_answers_with_the_old_units(client):
    db = ddb(client)
    make_table(db, billing="PROVISIONED",
               AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                     {"AttributeName": "g", "AttributeType": "S"}],
               GlobalSecondaryIndexes=[gsi_create(throughput=provisioned(1, 1))["Create"]])
    resp = db.update_table(TableName="tbl", GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by-g", "ProvisionedThroughput": provisioned(4, 2)}}])["TableDescription"]
    assert resp["TableStatus"] == "ACTIVE"
    index = resp["GlobalSecondaryIndexes"][0]
    assert index["IndexStatus"] == "UPDATING"
    assert index["ProvisionedThroughput"]["ReadCapacityUnits"] == 1
    assert describe(db)["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["ReadCapacityUnits"] == 4
    code, message = update_error(db, GlobalSecondaryIndexUpdates=[
        {"Update": {"IndexName": "by-g", "ProvisionedThroughput": provisioned(4, 2)}}])
    assert code == "ValidationException"
    assert message.startswith("The provisioned throughput for the index by-g will not change.")


def test_index_creation_needs_definitions_for_its_keys(client):
    db = ddb(client)
    make_table(db)
    assert update_error(db, GlobalSecondaryIndexUpdates=[gsi_create()]) == (
        "ValidationException", INVALID + "AttributeDefinitions is not specified for index: by-g")
    assert update_error(db, AttributeDefinitions=[{"AttributeName": "h", "AttributeType": "S"}],
                        GlobalSecondaryIndexUpdates=[gsi_create()]) == (
        "ValidationException",
        INVALID + "Some index key attributes are not defined in AttributeDefinitions. Keys: [g], "
                  "AttributeDefinitions: [pk, h]")


def test_index_creation_follows_the_billing_mode(client):
    db = ddb(client)
    make_table(db, name="prov", billing="PROVISIONED")
    definitions = [{"AttributeName": "g", "AttributeType": "S"}]
    assert update_error(db, TableName="prov", AttributeDefinitions=definitions,
                        GlobalSecondaryIndexUpdates=[gsi_create()]) == (
        "ValidationException", INVALID + "ProvisionedThroughput must be specified for index: by-g")
    make_table(db)
    assert update_error(db, AttributeDefinitions=definitions,
                        GlobalSecondaryIndexUpdates=[gsi_create(throughput=provisioned())]) == (
        "ValidationException",
        INVALID + "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: by-g when "
                  "BillingMode is PAY_PER_REQUEST")


def test_an_existing_index_name_cannot_be_created_again(client):
    db = ddb(client)
    make_table(db, AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                                         {"AttributeName": "g", "AttributeType": "S"}],
               GlobalSecondaryIndexes=[gsi_create()["Create"]])
    assert update_error(db, AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"}],
                        GlobalSecondaryIndexUpdates=[gsi_create()]) == (
        "ValidationException", "Attempting to create an index which already exists")


def test_only_one_index_is_created_or_deleted_per_update(client):
    db = ddb(client)
    make_table(db)
    assert update_error(db, AttributeDefinitions=[{"AttributeName": "g", "AttributeType": "S"},
                                                  {"AttributeName": "h", "AttributeType": "S"}],
                        GlobalSecondaryIndexUpdates=[gsi_create(), gsi_create("by-h", "h")]) == (
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table")
    assert "GlobalSecondaryIndexes" not in describe(db)


@pytest.mark.parametrize("updates,message", [
    ([], "List of GlobalSecondaryIndexUpdates is empty"),
    ([{"Delete": {"IndexName": "by-g"}, "Update": {"IndexName": "by-g", "ProvisionedThroughput": provisioned()}}],
     "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object"),
    ([{"Update": {"IndexName": "by-g", "ProvisionedThroughput": provisioned()}},
      {"Update": {"IndexName": "by-g", "ProvisionedThroughput": provisioned(2, 2)}}],
     "Only one global secondary index update per index is allowed simultaneously. Index: by-g"),
])
def test_index_update_lists_are_checked_whole(client, updates, message):
    db = ddb(client)
    make_table(db, billing="PROVISIONED")
    assert update_error(db, GlobalSecondaryIndexUpdates=updates) == ("ValidationException", INVALID + message)


def test_unknown_and_local_indexes_cannot_be_updated_or_deleted(client):
    db = ddb(client)
    db.create_table(
        TableName="tbl", BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"},
                              {"AttributeName": "sk", "AttributeType": "S"},
                              {"AttributeName": "l", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}],
        LocalSecondaryIndexes=[{"IndexName": "by-l", "Projection": {"ProjectionType": "ALL"},
                                "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                              {"AttributeName": "l", "KeyType": "RANGE"}]}])
    assert update_error(db, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "ghost"}}]) == (
        "ResourceNotFoundException", "Requested resource not found: Index ghost for table tbl")
    assert update_error(db, GlobalSecondaryIndexUpdates=[{"Delete": {"IndexName": "by-l"}}]) == (
        "ValidationException", "Cannot delete an index that is not a GlobalSecondaryIndex: by-l")
    assert update_error(db, GlobalSecondaryIndexUpdates=[{"Update": {
        "IndexName": "by-l", "OnDemandThroughput": {"MaxReadRequestUnits": 10}}}]) == (
        "ValidationException", "Cannot update an index that is not a GlobalSecondaryIndex: by-l")


# Members that must travel alone


@pytest.mark.parametrize("params,message", [
    ({"DeletionProtectionEnabled": True, "BillingMode": "PAY_PER_REQUEST"},
     "DeletionProtection modification must be the only operation in the request"),
    ({"TableClass": "STANDARD_INFREQUENT_ACCESS", "DeletionProtectionEnabled": True},
     "TableClass modification must be the only operation in the request"),
    ({"SSESpecification": {"Enabled": True}, "TableClass": "STANDARD"},
     "Server-Side Encryption modification must be the only operation in the request"),
    ({"StreamSpecification": {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
      "AttributeDefinitions": [{"AttributeName": "g", "AttributeType": "S"}],
      "GlobalSecondaryIndexUpdates": [gsi_create()]},
     "You cannot create or delete index while changing stream status"),
])
def test_some_changes_cannot_share_a_request(client, params, message):
    db = ddb(client)
    make_table(db)
    assert update_error(db, **params) == ("ValidationException", INVALID + message)


def test_stream_and_iops_changes_cannot_share_a_request(client):
    db = ddb(client)
    make_table(db, billing="PROVISIONED")
    assert update_error(db, ProvisionedThroughput=provisioned(9, 9),
                        StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}) == (
        "ValidationException", INVALID + "You cannot modify stream status while updating table IOPS")


# Streams


def test_each_enable_opens_a_new_stream_and_disable_keeps_the_latest_arn(client):
    db = ddb(client)
    make_table(db)
    first = db.update_table(TableName="tbl", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]
    assert first["StreamSpecification"] == {"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"}
    assert first["LatestStreamArn"] == f"{first['TableArn']}/stream/{first['LatestStreamLabel']}"
    assert describe(db)["LatestStreamArn"] == first["LatestStreamArn"]
    db.update_table(TableName="tbl", StreamSpecification={"StreamEnabled": False})
    disabled = describe(db)
    assert "StreamSpecification" not in disabled
    assert disabled["LatestStreamArn"] == first["LatestStreamArn"]
    second = db.update_table(TableName="tbl", StreamSpecification={
        "StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})["TableDescription"]
    assert second["LatestStreamArn"] != first["LatestStreamArn"]
    assert describe(db)["StreamSpecification"]["StreamViewType"] == "KEYS_ONLY"


def test_stream_toggles_are_checked_against_the_table(client):
    db = ddb(client)
    make_table(db)
    assert update_error(db, StreamSpecification={"StreamEnabled": False}) == (
        "ValidationException", "Table has no stream to disable: TableName: tbl")
    assert update_error(db, StreamSpecification={"StreamEnabled": True}) == (
        "ValidationException", INVALID + "If stream is being enabled then UpdateViewType is required")
    db.update_table(TableName="tbl", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    for view_type in ("KEYS_ONLY", "OLD_IMAGE"):
        assert update_error(db, StreamSpecification={"StreamEnabled": True, "StreamViewType": view_type}) == (
            "ValidationException", "Table already has an enabled stream: TableName: tbl")
    assert update_error(db, StreamSpecification={"StreamEnabled": False, "StreamViewType": "KEYS_ONLY"}) == (
        "ValidationException", INVALID + "If stream is being disabled, then UpdateViewType must not be specified")


def test_create_table_with_an_enabled_stream_needs_a_view_type(client):
    db = ddb(client)
    with pytest.raises(ClientError) as excinfo:
        make_table(db, StreamSpecification={"StreamEnabled": True})
    assert error_of(excinfo) == (
        "ValidationException",
        INVALID + "Table is being created with a stream enabled, UpdateViewType is required")


# Deletion protection, table class, encryption


def test_deletion_protection_is_synchronous_and_blocks_delete_table(client):
    db = ddb(client)
    make_table(db)
    resp = db.update_table(TableName="tbl", DeletionProtectionEnabled=True)["TableDescription"]
    assert resp["TableStatus"] == "ACTIVE" and resp["DeletionProtectionEnabled"] is True
    with pytest.raises(ClientError) as excinfo:
        db.delete_table(TableName="tbl")
    assert error_of(excinfo) == (
        "ValidationException",
        "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.")
    db.update_table(TableName="tbl", DeletionProtectionEnabled=False)
    db.delete_table(TableName="tbl")
    db.get_waiter("table_not_exists").wait(TableName="tbl", WaiterConfig={"Delay": 1, "MaxAttempts": 3})


def test_table_class_changes_show_after_the_update(client):
    db = ddb(client)
    make_table(db)
    resp = db.update_table(TableName="tbl", TableClass="STANDARD_INFREQUENT_ACCESS")["TableDescription"]
    assert resp["TableStatus"] == "UPDATING"
    assert "TableClassSummary" not in resp
    summary = describe(db)["TableClassSummary"]
    assert summary["TableClass"] == "STANDARD_INFREQUENT_ACCESS"
    assert "LastUpdateDateTime" in summary


def test_encryption_can_move_to_a_customer_key_and_back(client):
    db = ddb(client)
    make_table(db)
    assert update_error(db, SSESpecification={"Enabled": False}) == (
        "ValidationException", INVALID + "Table is already encrypted by default")
    key = "arn:aws:kms:us-east-1:000000000000:key/11111111-2222-3333-4444-555555555555"
    assert update_error(db, SSESpecification={"Enabled": True, "KMSMasterKeyId": key}) == (
        "ValidationException", INVALID + "SSEType KMS is required if KMSMasterKeyId is specified")
    db.update_table(TableName="tbl", SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": key})
    assert describe(db)["SSEDescription"] == {"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key}
    assert update_error(db, SSESpecification={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": key}) == (
        "ValidationException",
        INVALID + "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want "
                  "to change Master Key")
    db.update_table(TableName="tbl", SSESpecification={"Enabled": False})
    assert "SSEDescription" not in describe(db)


def test_waiters_finish_after_an_update_and_a_delete(client):
    db = ddb(client)
    make_table(db)
    db.update_table(TableName="tbl", StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"})
    db.get_waiter("table_exists").wait(TableName="tbl", WaiterConfig={"Delay": 1, "MaxAttempts": 3})
    db.delete_table(TableName="tbl")
    db.get_waiter("table_not_exists").wait(TableName="tbl", WaiterConfig={"Delay": 1, "MaxAttempts": 3})


def test_the_cli_adds_an_index(aws):
    aws("dynamodb", "create-table", "--table-name", "cli", "--billing-mode", "PAY_PER_REQUEST",
        "--attribute-definitions", "AttributeName=pk,AttributeType=S",
        "--key-schema", "AttributeName=pk,KeyType=HASH")
    out = aws("dynamodb", "update-table", "--table-name", "cli",
              "--attribute-definitions", "AttributeName=g,AttributeType=N",
              "--global-secondary-index-updates",
              '[{"Create": {"IndexName": "by-g", "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],'
              ' "Projection": {"ProjectionType": "KEYS_ONLY"}}}]')
    assert '"IndexStatus": "CREATING"' in out.stdout
    aws("dynamodb", "wait", "table-exists", "--table-name", "cli")


# Continuous backups


def recovery_of(resp):
    description = resp["ContinuousBackupsDescription"]
    assert description["ContinuousBackupsStatus"] == "ENABLED"
    return description["PointInTimeRecoveryDescription"]


def test_point_in_time_recovery_is_stored_and_described(server, client):
    db = ddb(client)
    make_table(db)
    assert recovery_of(db.describe_continuous_backups(TableName="tbl")) == {"PointInTimeRecoveryStatus": "DISABLED"}
    enabled = recovery_of(db.update_continuous_backups(
        TableName="tbl", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}))
    assert enabled["PointInTimeRecoveryStatus"] == "ENABLED" and enabled["RecoveryPeriodInDays"] == 35
    assert enabled["EarliestRestorableDateTime"] == enabled["LatestRestorableDateTime"]
    server.advance_clock(3600)
    later = recovery_of(db.describe_continuous_backups(TableName="tbl"))
    assert later["EarliestRestorableDateTime"] == enabled["EarliestRestorableDateTime"]
    assert (later["LatestRestorableDateTime"] - enabled["LatestRestorableDateTime"]).total_seconds() > 3000
    shorter = recovery_of(db.update_continuous_backups(
        TableName="tbl",
        PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True, "RecoveryPeriodInDays": 7}))
    assert shorter["RecoveryPeriodInDays"] == 7
    assert shorter["EarliestRestorableDateTime"] == enabled["EarliestRestorableDateTime"]
    disabled = db.update_continuous_backups(
        TableName="tbl", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False})
    assert recovery_of(disabled) == {"PointInTimeRecoveryStatus": "DISABLED"}
    again = recovery_of(db.update_continuous_backups(
        TableName="tbl", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True}))
    assert again["RecoveryPeriodInDays"] == 35


def test_continuous_backup_errors(client):
    db = ddb(client)
    make_table(db)
    with pytest.raises(ClientError) as excinfo:
        db.update_continuous_backups(TableName="tbl", PointInTimeRecoverySpecification={
            "PointInTimeRecoveryEnabled": False, "RecoveryPeriodInDays": 7})
    assert error_of(excinfo) == (
        "ValidationException",
        "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.")
    for call in (lambda: db.describe_continuous_backups(TableName="nope"),
                 lambda: db.update_continuous_backups(
                     TableName="nope", PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})):
        with pytest.raises(ClientError) as excinfo:
            call()
        assert error_of(excinfo) == ("TableNotFoundException", "Table not found: nope")


def test_a_recreated_table_starts_without_time_to_live_or_recovery(client):
    db = ddb(client)
    make_table(db)
    db.update_time_to_live(TableName="tbl", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    db.update_continuous_backups(TableName="tbl",
                                 PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    db.delete_table(TableName="tbl")
    make_table(db)
    assert db.describe_time_to_live(TableName="tbl")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    assert recovery_of(db.describe_continuous_backups(TableName="tbl")) == {"PointInTimeRecoveryStatus": "DISABLED"}
