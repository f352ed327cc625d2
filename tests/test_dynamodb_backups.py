"""DynamoDB on-demand backups and restores through boto3: CreateBackup, DescribeBackup,
ListBackups, DeleteBackup, RestoreTableFromBackup and RestoreTableToPointInTime."""

from __future__ import annotations

import re
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

INVALID = "One or more parameter values were invalid: "
BACKUP_ARN = re.compile(r"^arn:aws:dynamodb:us-east-1:\d{12}:table/(?P<table>[^/]+)/backup/\d{14}-[0-9a-f]{8}$")


def ddb(client):
    return client("dynamodb")


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def fails(call, **params):
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    return error_of(excinfo)


def make_table(db, name="src", **extra):
    params = {
        "TableName": name,
        "AttributeDefinitions": [
            {"AttributeName": "pk", "AttributeType": "S"},
            {"AttributeName": "sk", "AttributeType": "S"},
            {"AttributeName": "g", "AttributeType": "S"},
            {"AttributeName": "l", "AttributeType": "N"},
        ],
        "KeySchema": [
            {"AttributeName": "pk", "KeyType": "HASH"},
            {"AttributeName": "sk", "KeyType": "RANGE"},
        ],
        "BillingMode": "PROVISIONED",
        "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4},
        "GlobalSecondaryIndexes": [{
            "IndexName": "by-g",
            "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "KEYS_ONLY"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
        }],
        "LocalSecondaryIndexes": [{
            "IndexName": "by-l",
            "KeySchema": [
                {"AttributeName": "pk", "KeyType": "HASH"},
                {"AttributeName": "l", "KeyType": "RANGE"},
            ],
            "Projection": {"ProjectionType": "ALL"},
        }],
    }
    params.update(extra)
    return db.create_table(**params)["TableDescription"]


def simple_table(db, name="plain", **extra):
    params = {
        "TableName": name,
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
    }
    params.update(extra)
    return db.create_table(**params)["TableDescription"]


def put(db, table, pk, sk="-", **attrs):
    item = {"pk": {"S": pk}, "sk": {"S": sk}}
    for name, value in attrs.items():
        item[name] = {"N": str(value)} if isinstance(value, int) else {"S": value}
    db.put_item(TableName=table, Item=item)


def keys_of(db, table):
    items = db.scan(TableName=table, ConsistentRead=True)["Items"]
    return sorted(i["pk"]["S"] + ("/" + i["sk"]["S"] if "sk" in i else "") for i in items)


def describe(db, name):
    return db.describe_table(TableName=name)["Table"]


# CreateBackup and DescribeBackup

def test_a_backup_is_available_at_once_under_an_aws_shaped_arn(client):
    db = ddb(client)
    make_table(db)
    put(db, "src", "a", g="x", l=1)
    put(db, "src", "b", g="y", l=2)
    size = describe(db, "src")["TableSizeBytes"]
    details = db.create_backup(TableName="src", BackupName="nightly")["BackupDetails"]
    match = BACKUP_ARN.match(details["BackupArn"])
    assert match and match["table"] == "src"
    assert details["BackupName"] == "nightly"
    assert details["BackupStatus"] == "AVAILABLE"
    assert details["BackupType"] == "USER"
    assert details["BackupSizeBytes"] == size > 0
    assert isinstance(details["BackupCreationDateTime"], datetime)
    # The ARN's 14 digits are the creation time in epoch milliseconds.
    millis = int(details["BackupArn"].rsplit("/", 1)[1].split("-")[0])
    assert abs(millis / 1000 - details["BackupCreationDateTime"].timestamp()) < 0.002


def test_describe_backup_tells_the_source_table_and_its_features(client):
    db = ddb(client)
    table = make_table(db, StreamSpecification={"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"},
                       SSESpecification={"Enabled": True, "SSEType": "KMS"})
    db.update_time_to_live(TableName="src", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    put(db, "src", "a", g="x", l=1)
    arn = db.create_backup(TableName=table["TableArn"], BackupName="bk-1")["BackupDetails"]["BackupArn"]
    description = db.describe_backup(BackupArn=arn)["BackupDescription"]
    assert description["BackupDetails"]["BackupArn"] == arn
    source = description["SourceTableDetails"]
    assert source["TableName"] == "src"
    assert source["TableId"] == table["TableId"]
    assert source["TableArn"] == table["TableArn"]
    assert source["KeySchema"] == table["KeySchema"]
    assert source["ItemCount"] == 1
    assert source["TableSizeBytes"] == description["BackupDetails"]["BackupSizeBytes"]
    assert source["ProvisionedThroughput"] == {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4}
    assert source["BillingMode"] == "PROVISIONED"
    assert source["TableCreationDateTime"] == table["CreationDateTime"]
    features = description["SourceTableFeatureDetails"]
    assert features["GlobalSecondaryIndexes"] == [{
        "IndexName": "by-g",
        "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
        "Projection": {"ProjectionType": "KEYS_ONLY"},
        "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
    }]
    assert [i["IndexName"] for i in features["LocalSecondaryIndexes"]] == ["by-l"]
    assert features["StreamDescription"] == {"StreamEnabled": True, "StreamViewType": "KEYS_ONLY"}
    assert features["TimeToLiveDescription"] == {"TimeToLiveStatus": "ENABLED", "AttributeName": "exp"}
    assert features["SSEDescription"]["SSEType"] == "KMS"


def test_backup_errors_are_awss(client):
    db = ddb(client)
    assert fails(db.create_backup, TableName="nope", BackupName="bk-1") == (
        "TableNotFoundException", "Table not found: nope")
    simple_table(db)
    assert fails(db.create_backup, TableName="plain", BackupName="a b") == (
        "ValidationException",
        "1 validation error detected: Value 'a b' at 'backupName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    missing = "arn:aws:dynamodb:us-east-1:000000000000:table/plain/backup/01700000000000-00000000"
    for call in (db.describe_backup, db.delete_backup):
        assert fails(call, BackupArn=missing) == ("BackupNotFoundException", f"Backup not found: {missing}")
    assert fails(db.restore_table_from_backup, BackupArn=missing, TargetTableName="target") == (
        "BackupNotFoundException", f"Backup not found: {missing}")


def test_delete_backup_answers_deleted_and_forgets_it(client):
    db = ddb(client)
    simple_table(db)
    arn = db.create_backup(TableName="plain", BackupName="bk-1")["BackupDetails"]["BackupArn"]
    deleted = db.delete_backup(BackupArn=arn)["BackupDescription"]
    assert deleted["BackupDetails"]["BackupStatus"] == "DELETED"
    assert deleted["SourceTableDetails"]["TableName"] == "plain"
    assert fails(db.describe_backup, BackupArn=arn)[0] == "BackupNotFoundException"
    assert fails(db.delete_backup, BackupArn=arn)[0] == "BackupNotFoundException"
    assert db.list_backups()["BackupSummaries"] == []


# ListBackups

def test_list_backups_filters_by_table_time_and_type_and_pages(server, client):
    db = ddb(client)
    simple_table(db, "one")
    simple_table(db, "two")
    first = db.create_backup(TableName="one", BackupName="bk-1")["BackupDetails"]
    server.advance_clock(60)
    second = db.create_backup(TableName="two", BackupName="bk-2")["BackupDetails"]
    server.advance_clock(60)
    third = db.create_backup(TableName="one", BackupName="bk-3")["BackupDetails"]

    summaries = db.list_backups()["BackupSummaries"]
    assert [s["BackupArn"] for s in summaries] == [b["BackupArn"] for b in (first, second, third)]
    summary = summaries[0]
    assert summary["TableName"] == "one"
    assert summary["TableArn"].endswith(":table/one")
    assert summary["BackupName"] == "bk-1"
    assert summary["BackupStatus"] == "AVAILABLE"
    assert summary["BackupType"] == "USER"
    assert summary["BackupSizeBytes"] == 0
    assert "TableId" in summary

    by_table = db.list_backups(TableName="one")["BackupSummaries"]
    assert [s["BackupName"] for s in by_table] == ["bk-1", "bk-3"]
    # The lower bound is inclusive, the upper exclusive.
    window = db.list_backups(TimeRangeLowerBound=second["BackupCreationDateTime"],
                             TimeRangeUpperBound=third["BackupCreationDateTime"])["BackupSummaries"]
    assert [s["BackupName"] for s in window] == ["bk-2"]
    assert db.list_backups(BackupType="SYSTEM")["BackupSummaries"] == []
    assert db.list_backups(BackupType="AWS_BACKUP")["BackupSummaries"] == []
    assert len(db.list_backups(BackupType="ALL")["BackupSummaries"]) == 3

    page = db.list_backups(Limit=2)
    assert [s["BackupName"] for s in page["BackupSummaries"]] == ["bk-1", "bk-2"]
    assert page["LastEvaluatedBackupArn"] == second["BackupArn"]
    rest = db.list_backups(Limit=2, ExclusiveStartBackupArn=page["LastEvaluatedBackupArn"])
    assert [s["BackupName"] for s in rest["BackupSummaries"]] == ["bk-3"]
    assert "LastEvaluatedBackupArn" not in rest
    code, message = fails(db.list_backups, Limit=101)
    assert code == "ValidationException" and "Member must have value less than or equal to 100" in message


def test_the_paginator_walks_every_backup(client):
    db = ddb(client)
    simple_table(db)
    arns = [db.create_backup(TableName="plain", BackupName=f"bk-{i}")["BackupDetails"]["BackupArn"] for i in range(5)]
    pages = db.get_paginator("list_backups").paginate(PaginationConfig={"PageSize": 2})
    listed = [s["BackupArn"] for page in pages for s in page["BackupSummaries"]]
    assert sorted(listed) == sorted(arns)


# RestoreTableFromBackup

def test_a_restore_holds_the_items_of_the_moment_of_the_backup(client):
    db = ddb(client)
    make_table(db)
    put(db, "src", "a", g="x", l=1)
    put(db, "src", "b", "1", g="y", l=2)
    arn = db.create_backup(TableName="src", BackupName="bk-1")["BackupDetails"]["BackupArn"]
    put(db, "src", "c", g="x", l=3)
    db.delete_item(TableName="src", Key={"pk": {"S": "a"}, "sk": {"S": "-"}})

    restored = db.restore_table_from_backup(BackupArn=arn, TargetTableName="copy")["TableDescription"]
    assert restored["TableName"] == "copy"
    assert restored["TableStatus"] == "CREATING"
    assert restored["RestoreSummary"]["SourceBackupArn"] == arn
    assert restored["RestoreSummary"]["RestoreInProgress"] is True
    db.get_waiter("table_exists").wait(TableName="copy", WaiterConfig={"Delay": 1, "MaxAttempts": 3})

    table = describe(db, "copy")
    assert table["TableStatus"] == "ACTIVE"
    assert table["ItemCount"] == 2
    assert table["TableSizeBytes"] == db.describe_backup(BackupArn=arn)["BackupDescription"]["BackupDetails"]["BackupSizeBytes"]
    summary = table["RestoreSummary"]
    assert summary["RestoreInProgress"] is False
    assert summary["SourceTableArn"].endswith(":table/src")
    assert isinstance(summary["RestoreDateTime"], datetime)
    assert table["TableArn"].endswith(":table/copy")
    assert table["TableId"] != describe(db, "src")["TableId"]
    assert keys_of(db, "copy") == ["a/-", "b/1"]
    # The indexes are rebuilt from the restored items.
    by_g = db.query(TableName="copy", IndexName="by-g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    assert [i["pk"]["S"] for i in by_g] == ["a"]
    by_l = db.query(TableName="copy", IndexName="by-l", KeyConditionExpression="pk = :p AND l > :l",
                    ExpressionAttributeValues={":p": {"S": "b"}, ":l": {"N": "0"}})["Items"]
    assert [i["sk"]["S"] for i in by_l] == ["1"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    assert table["GlobalSecondaryIndexes"][0]["ProvisionedThroughput"]["WriteCapacityUnits"] == 2
    # The source table is untouched.
    assert keys_of(db, "src") == ["b/1", "c/-"]


def test_a_restore_leaves_streams_time_to_live_protection_and_tags_behind(client):
    db = ddb(client)
    simple_table(db, StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"},
                 DeletionProtectionEnabled=True, Tags=[{"Key": "team", "Value": "a"}])
    db.update_time_to_live(TableName="plain", TimeToLiveSpecification={"Enabled": True, "AttributeName": "exp"})
    db.update_continuous_backups(TableName="plain",
                                 PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    arn = db.create_backup(TableName="plain", BackupName="bk-1")["BackupDetails"]["BackupArn"]
    db.restore_table_from_backup(BackupArn=arn, TargetTableName="copy")
    table = describe(db, "copy")
    assert "StreamSpecification" not in table and "LatestStreamArn" not in table
    assert table["DeletionProtectionEnabled"] is False
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert db.list_tags_of_resource(ResourceArn=table["TableArn"])["Tags"] == []
    assert db.describe_time_to_live(TableName="copy")["TimeToLiveDescription"] == {"TimeToLiveStatus": "DISABLED"}
    recovery = db.describe_continuous_backups(TableName="copy")["ContinuousBackupsDescription"]
    assert recovery["PointInTimeRecoveryDescription"]["PointInTimeRecoveryStatus"] == "DISABLED"


def test_restore_overrides_replace_billing_indexes_and_encryption(client):
    db = ddb(client)
    make_table(db)
    put(db, "src", "a", g="x", l=1)
    arn = db.create_backup(TableName="src", BackupName="bk-1")["BackupDetails"]["BackupArn"]

    on_demand = db.restore_table_from_backup(
        BackupArn=arn, TargetTableName="on-demand", BillingModeOverride="PAY_PER_REQUEST",
        GlobalSecondaryIndexOverride=[], LocalSecondaryIndexOverride=[],
        SSESpecificationOverride={"Enabled": True, "SSEType": "KMS", "KMSMasterKeyId": "alias/mine"},
    )["TableDescription"]
    assert on_demand["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"
    assert on_demand["ProvisionedThroughput"]["ReadCapacityUnits"] == 0
    assert "GlobalSecondaryIndexes" not in on_demand and "LocalSecondaryIndexes" not in on_demand
    # Definitions shrink to the keys still in use.
    assert sorted(d["AttributeName"] for d in on_demand["AttributeDefinitions"]) == ["pk", "sk"]
    assert on_demand["SSEDescription"]["KMSMasterKeyArn"] == "alias/mine"
    assert keys_of(db, "on-demand") == ["a/-"]

    reprovisioned = db.restore_table_from_backup(
        BackupArn=arn, TargetTableName="bigger",
        ProvisionedThroughputOverride={"ReadCapacityUnits": 7, "WriteCapacityUnits": 8},
        GlobalSecondaryIndexOverride=[{
            "IndexName": "by-l-global",
            "KeySchema": [{"AttributeName": "l", "KeyType": "HASH"}],
            "Projection": {"ProjectionType": "ALL"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 5, "WriteCapacityUnits": 5},
        }],
    )["TableDescription"]
    assert reprovisioned["ProvisionedThroughput"]["ReadCapacityUnits"] == 7
    assert [i["IndexName"] for i in reprovisioned["GlobalSecondaryIndexes"]] == ["by-l-global"]
    assert [i["IndexName"] for i in reprovisioned["LocalSecondaryIndexes"]] == ["by-l"]
    found = db.query(TableName="bigger", IndexName="by-l-global", KeyConditionExpression="l = :l",
                     ExpressionAttributeValues={":l": {"N": "1"}})["Items"]
    assert [i["pk"]["S"] for i in found] == ["a"]


def test_restore_refusals_are_awss(client):
    db = ddb(client)
    simple_table(db)
    make_table(db)
    plain = db.create_backup(TableName="plain", BackupName="bk-1")["BackupDetails"]["BackupArn"]
    assert fails(db.restore_table_from_backup, BackupArn=plain, TargetTableName="src") == (
        "TableAlreadyExistsException", "Table already exists: src")
    assert fails(db.restore_table_from_backup, BackupArn=plain, TargetTableName="copy",
                 BillingModeOverride="PROVISIONED") == (
        "ValidationException",
        INVALID + "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
    src = db.create_backup(TableName="src", BackupName="bk-2")["BackupDetails"]["BackupArn"]
    code, message = fails(db.restore_table_from_backup, BackupArn=src, TargetTableName="copy",
                          GlobalSecondaryIndexOverride=[{
                              "IndexName": "by-h",
                              "KeySchema": [{"AttributeName": "h", "KeyType": "HASH"}],
                              "Projection": {"ProjectionType": "ALL"},
                              "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 1},
                          }])
    assert code == "ValidationException"
    assert message.startswith(INVALID + "Some index key attributes are not defined in AttributeDefinitions")
    assert fails(db.restore_table_from_backup, BackupArn=src, TargetTableName="a b") == (
        "ValidationException",
        "1 validation error detected: Value 'a b' at 'targetTableName' failed to satisfy constraint: "
        "Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+")
    assert db.list_tables()["TableNames"] == ["plain", "src"]


def test_backups_outlive_their_table(client):
    db = ddb(client)
    simple_table(db)
    db.put_item(TableName="plain", Item={"pk": {"S": "kept"}})
    arn = db.create_backup(TableName="plain", BackupName="bk-1")["BackupDetails"]["BackupArn"]
    db.delete_table(TableName="plain")
    assert db.describe_backup(BackupArn=arn)["BackupDescription"]["SourceTableDetails"]["TableName"] == "plain"
    assert [s["BackupArn"] for s in db.list_backups(TableName="plain")["BackupSummaries"]] == [arn]
    db.restore_table_from_backup(BackupArn=arn, TargetTableName="plain")
    assert db.scan(TableName="plain")["Items"] == [{"pk": {"S": "kept"}}]


# RestoreTableToPointInTime

def enable_recovery(db, table):
    db.update_continuous_backups(TableName=table,
                                 PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})


def window(db, table):
    recovery = db.describe_continuous_backups(TableName=table)["ContinuousBackupsDescription"]
    description = recovery["PointInTimeRecoveryDescription"]
    return description["EarliestRestorableDateTime"], description["LatestRestorableDateTime"]


def test_a_point_in_time_restore_rebuilds_the_table_as_it_was(server, client):
    db = ddb(client)
    make_table(db)
    enable_recovery(db, "src")
    put(db, "src", "a", g="x", l=1)
    put(db, "src", "b", g="x", l=2)
    server.advance_clock(600)
    _, before = window(db, "src")
    put(db, "src", "a", g="y", l=5)
    db.delete_item(TableName="src", Key={"pk": {"S": "b"}, "sk": {"S": "-"}})
    put(db, "src", "c", g="x", l=3)
    server.advance_clock(600)

    restored = db.restore_table_to_point_in_time(SourceTableName="src", TargetTableName="past",
                                                 RestoreDateTime=before)["TableDescription"]
    assert restored["RestoreSummary"]["SourceTableArn"].endswith(":table/src")
    assert restored["RestoreSummary"]["RestoreDateTime"] == before
    assert "SourceBackupArn" not in restored["RestoreSummary"]
    assert keys_of(db, "past") == ["a/-", "b/-"]
    a = db.get_item(TableName="past", Key={"pk": {"S": "a"}, "sk": {"S": "-"}})["Item"]
    assert a["g"] == {"S": "x"} and a["l"] == {"N": "1"}
    assert describe(db, "past")["ItemCount"] == 2
    by_g = db.query(TableName="past", IndexName="by-g", KeyConditionExpression="g = :g",
                    ExpressionAttributeValues={":g": {"S": "x"}})["Items"]
    assert sorted(i["pk"]["S"] for i in by_g) == ["a", "b"]

    db.restore_table_to_point_in_time(SourceTableArn=describe(db, "src")["TableArn"],
                                      TargetTableName="latest", UseLatestRestorableTime=True)
    assert keys_of(db, "latest") == ["a/-", "c/-"]
    latest_a = db.get_item(TableName="latest", Key={"pk": {"S": "a"}, "sk": {"S": "-"}})["Item"]
    assert latest_a["l"] == {"N": "5"}


def test_the_latest_restorable_time_trails_the_clock(server, client):
    db = ddb(client)
    simple_table(db)
    enable_recovery(db, "plain")
    db.put_item(TableName="plain", Item={"pk": {"S": "early"}})
    server.advance_clock(400)
    db.put_item(TableName="plain", Item={"pk": {"S": "recent"}})
    # Five minutes behind: the early write is in, the recent one not yet.
    db.restore_table_to_point_in_time(SourceTableName="plain", TargetTableName="copy",
                                      UseLatestRestorableTime=True)
    assert [i["pk"]["S"] for i in db.scan(TableName="copy")["Items"]] == ["early"]


def test_point_in_time_refusals_are_awss(server, client):
    db = ddb(client)
    simple_table(db)
    assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="copy",
                 UseLatestRestorableTime=True) == (
        "PointInTimeRecoveryUnavailableException", "Point in time recovery is not enabled for table 'plain'")
    assert fails(db.restore_table_to_point_in_time, SourceTableName="nope", TargetTableName="copy",
                 UseLatestRestorableTime=True) == ("TableNotFoundException", "Table not found: nope")
    enable_recovery(db, "plain")
    server.advance_clock(600)
    earliest, latest = window(db, "plain")
    invalid_time = ("InvalidRestoreTimeException",
                    "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime")
    for moment in (earliest - timedelta(seconds=1), datetime.now(timezone.utc) + timedelta(hours=1)):
        assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="copy",
                     RestoreDateTime=moment) == invalid_time
    assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="plain",
                 RestoreDateTime=latest) == ("TableAlreadyExistsException", "Table already exists: plain")
    assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="copy")[0] == (
        "ValidationException")
    assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="copy",
                 RestoreDateTime=latest, UseLatestRestorableTime=True)[0] == "ValidationException"
    assert fails(db.restore_table_to_point_in_time, TargetTableName="copy",
                 UseLatestRestorableTime=True)[0] == "ValidationException"
    assert db.list_tables()["TableNames"] == ["plain"]


def test_disabling_recovery_closes_the_window(server, client):
    db = ddb(client)
    simple_table(db)
    enable_recovery(db, "plain")
    db.put_item(TableName="plain", Item={"pk": {"S": "old"}})
    server.advance_clock(600)
    _, before = window(db, "plain")
    db.update_continuous_backups(TableName="plain",
                                 PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": False})
    enable_recovery(db, "plain")
    earliest, _ = window(db, "plain")
    assert earliest > before
    assert fails(db.restore_table_to_point_in_time, SourceTableName="plain", TargetTableName="copy",
                 RestoreDateTime=before)[0] == "InvalidRestoreTimeException"
