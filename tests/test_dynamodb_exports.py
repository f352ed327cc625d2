"""DynamoDB exports to and imports from S3 through boto3: ExportTableToPointInTime,
DescribeExport, ListExports, ImportTable, DescribeImport and ListImports."""

from __future__ import annotations

import base64
import gzip
import hashlib
import json
import re

import pytest
from botocore.exceptions import ClientError

EXPORT_ARN = re.compile(r"^arn:aws:dynamodb:us-east-1:\d{12}:table/src/export/(?P<id>\d{14}-[0-9a-f]{8})$")


def fails(call, **params):
    with pytest.raises(ClientError) as excinfo:
        call(**params)
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def make_table(db, name="src", recovery=True):
    arn = db.create_table(
        TableName=name,
        AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
        BillingMode="PAY_PER_REQUEST",
    )["TableDescription"]["TableArn"]
    if recovery:
        db.update_continuous_backups(TableName=name,
                                     PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    return arn


def objects(s3, bucket, prefix=""):
    listed = s3.list_objects_v2(Bucket=bucket, Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=bucket, Key=o["Key"])["Body"].read() for o in listed}


def data_lines(files):
    lines = []
    for key, body in files.items():
        if "/data/" in key:
            lines += [line for line in gzip.decompress(body).decode().split("\n") if line]
    return lines


# Exports

def test_an_export_writes_awss_layout_to_s3(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    arn = make_table(db)
    db.put_item(TableName="src", Item={"pk": {"S": "user1"}, "binaryfoo": {"B": b"bar"}})
    db.put_item(TableName="src", Item={"pk": {"S": "user2"}, "n": {"N": "1.50"}, "ss": {"SS": ["a"]}})
    started = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", S3Prefix="prefix",
                                               ExportFormat="DYNAMODB_JSON")["ExportDescription"]
    assert started["ExportStatus"] == "IN_PROGRESS"
    export_id = EXPORT_ARN.match(started["ExportArn"])["id"]

    done = db.describe_export(ExportArn=started["ExportArn"])["ExportDescription"]
    assert done["ExportStatus"] == "COMPLETED"
    assert done["ItemCount"] == 2
    assert done["BilledSizeBytes"] == db.describe_table(TableName="src")["Table"]["TableSizeBytes"]
    assert done["ExportFormat"] == "DYNAMODB_JSON"
    assert done["ExportType"] == "FULL_EXPORT"
    assert done["TableArn"] == arn
    assert done["S3Bucket"] == "exports" and done["S3Prefix"] == "prefix"
    assert done["EndTime"] >= done["StartTime"]
    base = f"prefix/AWSDynamoDB/{export_id}"
    assert done["ExportManifest"] == f"{base}/manifest-summary.json"

    files = objects(s3, "exports")
    assert files[f"{base}/_started"] == b""
    rows = [json.loads(line) for line in data_lines(files)]
    assert sorted(rows, key=lambda r: r["Item"]["pk"]["S"]) == [
        {"Item": {"pk": {"S": "user1"}, "binaryfoo": {"B": "YmFy"}}},
        {"Item": {"pk": {"S": "user2"}, "n": {"N": "1.5"}, "ss": {"SS": ["a"]}}},
    ]
    manifest_files = [json.loads(line) for line in files[f"{base}/manifest-files.json"].decode().splitlines()]
    assert len(manifest_files) == 1
    entry = manifest_files[0]
    data_key = entry["dataFileS3Key"]
    assert re.fullmatch(rf"{base}/data/[a-z2-7]{{26}}\.json\.gz", data_key)
    assert entry["itemCount"] == 2
    assert entry["md5Checksum"] == base64.b64encode(hashlib.md5(files[data_key]).digest()).decode()
    assert entry["etag"] == hashlib.md5(files[data_key]).hexdigest()
    summary = json.loads(files[f"{base}/manifest-summary.json"])
    assert summary["exportArn"] == started["ExportArn"]
    assert summary["tableArn"] == arn
    assert summary["itemCount"] == 2
    assert summary["outputFormat"] == "DYNAMODB_JSON"
    assert summary["manifestFilesS3Key"] == f"{base}/manifest-files.json"
    assert summary["s3Bucket"] == "exports" and summary["s3Prefix"] == "prefix"
    assert files[f"{base}/manifest-summary.checksum"].decode() == hashlib.md5(
        files[f"{base}/manifest-summary.json"]).hexdigest()


def test_an_empty_table_exports_one_empty_data_file_and_ion_is_offered(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    arn = make_table(db)
    empty = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports")["ExportDescription"]
    files = objects(s3, "exports")
    data = [k for k in files if "/data/" in k]
    assert len(data) == 1 and data[0].startswith("AWSDynamoDB/")
    assert gzip.decompress(files[data[0]]) == b""
    assert db.describe_export(ExportArn=empty["ExportArn"])["ExportDescription"]["ItemCount"] == 0

    db.put_item(TableName="src", Item={"pk": {"S": "a"}, "n": {"N": "7"}, "b": {"B": b"\x01"}})
    ion = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", S3Prefix="ion",
                                           ExportFormat="ION")["ExportDescription"]
    assert ion["ExportFormat"] == "ION"
    files = objects(s3, "exports", "ion/")
    data = [k for k in files if "/data/" in k]
    assert data[0].endswith(".ion.gz")
    assert gzip.decompress(files[data[0]]).decode() == '$ion_1_0 {Item:{b:{{AQ==}},n:7.,pk:"a"}}\n'


def test_an_export_reads_the_table_as_it_was_at_the_export_time(server, client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    arn = make_table(db)
    db.put_item(TableName="src", Item={"pk": {"S": "old"}})
    server.advance_clock(60)
    moment = server.advance_clock(0)["now_millis"] / 1000
    server.advance_clock(60)
    db.put_item(TableName="src", Item={"pk": {"S": "new"}})
    db.delete_item(TableName="src", Key={"pk": {"S": "old"}})
    export = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", ExportTime=moment)[
        "ExportDescription"]
    assert export["ExportTime"].timestamp() == pytest.approx(moment, abs=0.001)
    assert [json.loads(line)["Item"]["pk"]["S"] for line in data_lines(objects(s3, "exports"))] == ["old"]


def test_export_refusals_are_awss(server, client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    arn = make_table(db, recovery=False)
    missing = arn + "x"
    assert fails(db.export_table_to_point_in_time, TableArn=missing, S3Bucket="exports") == (
        "TableNotFoundException", f"Table not found: {missing}")
    assert fails(db.export_table_to_point_in_time, TableArn=arn, S3Bucket="exports") == (
        "PointInTimeRecoveryUnavailableException", "Point in time recovery is not enabled for table 'src'")
    db.update_continuous_backups(TableName="src",
                                 PointInTimeRecoverySpecification={"PointInTimeRecoveryEnabled": True})
    now = server.advance_clock(0)["now_millis"] / 1000
    for moment in (now - 3600, now + 3600):
        assert fails(db.export_table_to_point_in_time, TableArn=arn, S3Bucket="exports",
                     ExportTime=moment)[0] == "InvalidExportTimeException"
    assert fails(db.export_table_to_point_in_time, TableArn=arn, S3Bucket="exports",
                 ExportType="INCREMENTAL_EXPORT")[0] == "NotImplemented"
    assert fails(db.describe_export, ExportArn=arn + "/export/01700000000000-00000000") == (
        "ExportNotFoundException", f"Export not found: {arn}/export/01700000000000-00000000")


def test_a_missing_bucket_fails_the_export_not_the_request(client):
    db = client("dynamodb")
    arn = make_table(db)
    started = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="no-such-bucket")["ExportDescription"]
    done = db.describe_export(ExportArn=started["ExportArn"])["ExportDescription"]
    assert done["ExportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket"
    assert "The specified bucket does not exist" in done["FailureMessage"]


def test_client_tokens_make_exports_idempotent(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    arn = make_table(db)
    first = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", ClientToken="tok")["ExportDescription"]
    again = db.export_table_to_point_in_time(TableArn=arn, S3Bucket="exports", ClientToken="tok")["ExportDescription"]
    assert again["ExportArn"] == first["ExportArn"]
    assert again["ExportStatus"] == "COMPLETED"
    assert fails(db.export_table_to_point_in_time, TableArn=arn, S3Bucket="exports", S3Prefix="other",
                 ClientToken="tok")[0] == "ExportConflictException"
    assert len(db.list_exports()["ExportSummaries"]) == 1


def test_list_exports_filters_by_table_and_pages(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="exports")
    one = make_table(db, "one")
    two = make_table(db, "two")
    arns = [db.export_table_to_point_in_time(TableArn=t, S3Bucket="exports")["ExportDescription"]["ExportArn"]
            for t in (one, two, one)]
    summaries = db.list_exports()["ExportSummaries"]
    assert summaries[0] == {"ExportArn": arns[0], "ExportStatus": "COMPLETED", "ExportType": "FULL_EXPORT"}
    assert [s["ExportArn"] for s in summaries] == arns
    assert [s["ExportArn"] for s in db.list_exports(TableArn=one)["ExportSummaries"]] == [arns[0], arns[2]]
    page = db.list_exports(MaxResults=2)
    assert [s["ExportArn"] for s in page["ExportSummaries"]] == arns[:2]
    rest = db.list_exports(MaxResults=2, NextToken=page["NextToken"])
    assert [s["ExportArn"] for s in rest["ExportSummaries"]] == arns[2:]
    assert "NextToken" not in rest


# Imports

def import_table(db, bucket="source", fmt="DYNAMODB_JSON", name="imported", compression="NONE", **extra):
    params = {
        "S3BucketSource": {"S3Bucket": bucket},
        "InputFormat": fmt,
        "InputCompressionType": compression,
        "TableCreationParameters": {
            "TableName": name,
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "BillingMode": "PAY_PER_REQUEST",
        },
    }
    params.update(extra)
    started = db.import_table(**params)["ImportTableDescription"]
    assert started["ImportStatus"] == "IN_PROGRESS"
    return db.describe_import(ImportArn=started["ImportArn"])["ImportTableDescription"]


def item_line(pk, **attrs):
    item = {"pk": {"S": pk}}
    item.update({k: {"S": v} for k, v in attrs.items()})
    return json.dumps({"Item": item})


def pks(db, table="imported"):
    return sorted(i["pk"]["S"] for i in db.scan(TableName=table)["Items"])


def test_an_import_reads_every_object_under_the_prefix(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    lines = "\n".join(item_line(f"msg{i}", data="x") for i in range(5)) + "\n"
    lines += "".join(item_line(f"msg{i}") for i in range(10, 13))
    s3.put_object(Bucket="source", Key="in/data.json", Body=lines)
    s3.put_object(Bucket="source", Key="in/more", Body=gzip.compress(item_line("zipped").encode()))
    s3.put_object(Bucket="source", Key="elsewhere.json", Body=item_line("skipped"))
    plain = import_table(db, S3BucketSource={"S3Bucket": "source", "S3KeyPrefix": "in/data"})
    assert plain["ImportStatus"] == "COMPLETED"
    assert (plain["ProcessedItemCount"], plain["ImportedItemCount"], plain["ErrorCount"]) == (8, 8, 0)
    assert plain["ProcessedSizeBytes"] == len(lines)
    assert plain["TableArn"].endswith(":table/imported")
    assert plain["InputFormat"] == "DYNAMODB_JSON"
    assert plain["TableCreationParameters"]["TableName"] == "imported"
    assert plain["EndTime"] >= plain["StartTime"]
    assert pks(db) == sorted([f"msg{i}" for i in range(5)] + ["msg10", "msg11", "msg12"])
    assert db.describe_table(TableName="imported")["Table"]["ItemCount"] == 8

    zipped = import_table(db, name="zipped", compression="GZIP",
                          S3BucketSource={"S3Bucket": "source", "S3KeyPrefix": "in/more"})
    assert zipped["ImportStatus"] == "COMPLETED"
    assert pks(db, "zipped") == ["zipped"]


def test_an_export_imports_back(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="round-trip")
    arn = make_table(db)
    db.put_item(TableName="src", Item={"pk": {"S": "a"}, "n": {"N": "2"}, "bs": {"BS": [b"\x00"]},
                                       "m": {"M": {"l": {"L": [{"NULL": True}, {"BOOL": False}]}}}})
    db.put_item(TableName="src", Item={"pk": {"S": "b"}})
    db.export_table_to_point_in_time(TableArn=arn, S3Bucket="round-trip", S3Prefix="backup")
    export_id = s3.list_objects_v2(Bucket="round-trip")["Contents"][0]["Key"].split("/")[2]
    done = import_table(db, bucket="round-trip", compression="GZIP",
                        S3BucketSource={"S3Bucket": "round-trip", "S3KeyPrefix": f"backup/AWSDynamoDB/{export_id}/data/"})
    assert done["ImportStatus"] == "COMPLETED"
    assert (sorted(db.scan(TableName="imported")["Items"], key=lambda i: i["pk"]["S"])
            == sorted(db.scan(TableName="src")["Items"], key=lambda i: i["pk"]["S"]))


def test_csv_imports_type_the_defined_attributes(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    s3.put_object(Bucket="source", Key="rows.csv", Body='pk,n,note\nk1,5,"hello, world"\nk2,7,\n')
    s3.put_object(Bucket="source", Key="headless.csv", Body="k3|9|x\n")
    definitions = [{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "n", "AttributeType": "N"}]
    params = {
        "TableName": "csv",
        "AttributeDefinitions": definitions,
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "BillingMode": "PAY_PER_REQUEST",
        "GlobalSecondaryIndexes": [{"IndexName": "by-n", "KeySchema": [{"AttributeName": "n", "KeyType": "HASH"}],
                                    "Projection": {"ProjectionType": "ALL"}}],
    }
    done = import_table(db, fmt="CSV", S3BucketSource={"S3Bucket": "source", "S3KeyPrefix": "rows"},
                        TableCreationParameters=params)
    assert done["ImportStatus"] == "COMPLETED" and done["ImportedItemCount"] == 2
    k1 = db.get_item(TableName="csv", Key={"pk": {"S": "k1"}})["Item"]
    assert k1 == {"pk": {"S": "k1"}, "n": {"N": "5"}, "note": {"S": "hello, world"}}
    assert db.get_item(TableName="csv", Key={"pk": {"S": "k2"}})["Item"] == {"pk": {"S": "k2"}, "n": {"N": "7"}}
    by_n = db.query(TableName="csv", IndexName="by-n", KeyConditionExpression="n = :n",
                    ExpressionAttributeValues={":n": {"N": "7"}})["Items"]
    assert [i["pk"]["S"] for i in by_n] == ["k2"]

    headed = import_table(db, fmt="CSV", S3BucketSource={"S3Bucket": "source", "S3KeyPrefix": "headless"},
                          TableCreationParameters=dict(params, TableName="csv2"),
                          InputFormatOptions={"Csv": {"Delimiter": "|", "HeaderList": ["pk", "n", "note"]}})
    assert headed["ImportStatus"] == "COMPLETED"
    assert db.get_item(TableName="csv2", Key={"pk": {"S": "k3"}})["Item"]["note"] == {"S": "x"}


def test_bad_items_are_counted_and_fail_the_import_but_the_rest_is_imported(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    s3.put_object(Bucket="source", Key="good.json", Body=item_line("msg1"))
    s3.put_object(Bucket="source", Key="invaliddata", Body=json.dumps({"pk": {"S": "msg2"}}))
    s3.put_object(Bucket="source", Key="wrongkey", Body=json.dumps({"Item": {"other": {"S": "x"}}}))
    done = import_table(db)
    assert done["ImportStatus"] == "FAILED"
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"]) == (3, 1, 2)
    assert done["FailureCode"] == "ItemValidationError"
    assert pks(db) == ["msg1"]


def test_an_unreadable_source_fails_the_import_and_leaves_no_table(client):
    db = client("dynamodb")
    done = import_table(db, bucket="no-such-bucket")
    assert done["ImportStatus"] == "FAILED"
    assert done["FailureCode"] == "S3NoSuchBucket"
    assert "The specified bucket does not exist" in done["FailureMessage"]
    assert done["TableArn"].endswith(":table/imported")
    assert db.list_tables()["TableNames"] == []


def test_an_empty_bucket_imports_an_empty_table(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    done = import_table(db)
    assert done["ImportStatus"] == "COMPLETED"
    assert (done["ProcessedItemCount"], done["ImportedItemCount"], done["ErrorCount"], done["ProcessedSizeBytes"]) == (0, 0, 0, 0)
    assert db.describe_table(TableName="imported")["Table"]["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]


def test_import_refusals_are_the_requests(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    params = {"TableName": "imported",
              "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
              "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
              "BillingMode": "PROVISIONED"}
    assert fails(db.import_table, S3BucketSource={"S3Bucket": "source"}, InputFormat="DYNAMODB_JSON",
                 TableCreationParameters=params) == (
        "ValidationException",
        "One or more parameter values were invalid: ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED")
    make_table(db, "taken", recovery=False)
    assert fails(db.import_table, S3BucketSource={"S3Bucket": "source"}, InputFormat="DYNAMODB_JSON",
                 TableCreationParameters=dict(params, TableName="taken", BillingMode="PAY_PER_REQUEST")) == (
        "ResourceInUseException", "Table already exists: taken")
    assert fails(db.import_table, S3BucketSource={"S3Bucket": "source"}, InputFormat="ION",
                 TableCreationParameters=dict(params, BillingMode="PAY_PER_REQUEST"))[0] == "NotImplemented"
    missing = "arn:aws:dynamodb:us-east-1:000000000000:table/x/import/01700000000000-00000000"
    assert fails(db.describe_import, ImportArn=missing) == ("ImportNotFoundException", f"Import not found: {missing}")
    assert db.list_tables()["TableNames"] == ["taken"]


def test_import_client_tokens_and_listing(client):
    db, s3 = client("dynamodb"), client("s3")
    s3.create_bucket(Bucket="source")
    first = import_table(db, ClientToken="tok")
    again = db.import_table(S3BucketSource={"S3Bucket": "source"}, InputFormat="DYNAMODB_JSON",
                            InputCompressionType="NONE", ClientToken="tok",
                            TableCreationParameters=first["TableCreationParameters"])["ImportTableDescription"]
    assert again["ImportArn"] == first["ImportArn"] and again["ImportStatus"] == "COMPLETED"
    assert fails(db.import_table, S3BucketSource={"S3Bucket": "source"}, InputFormat="CSV", ClientToken="tok",
                 TableCreationParameters=first["TableCreationParameters"])[0] == "ImportConflictException"
    second = import_table(db, name="second")
    listed = db.list_imports()["ImportSummaryList"]
    assert [i["ImportArn"] for i in listed] == [first["ImportArn"], second["ImportArn"]]
    assert set(listed[0]) == {"ImportArn", "ImportStatus", "TableArn", "S3BucketSource", "InputFormat",
                              "StartTime", "EndTime"}
    assert [i["ImportArn"] for i in db.list_imports(TableArn=second["TableArn"])["ImportSummaryList"]] == [
        second["ImportArn"]]
    page = db.list_imports(PageSize=1)
    assert [i["ImportArn"] for i in page["ImportSummaryList"]] == [first["ImportArn"]]
    rest = db.list_imports(PageSize=1, NextToken=page["NextToken"])
    assert [i["ImportArn"] for i in rest["ImportSummaryList"]] == [second["ImportArn"]]
