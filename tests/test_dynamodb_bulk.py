"""DynamoDB bulk operations with boto3: StartBulkPutItems from DynamoDB JSON objects in S3
(plain and gzip) into an existing table, DescribeBulkOperation, ListBulkOperations, client
tokens, and the refusals."""

from __future__ import annotations

import gzip
import json

import pytest
from botocore.exceptions import ClientError

OUTPUT = {"S3Bucket": "reports", "OutputType": ["ERROR"]}


def error_of(excinfo):
    err = excinfo.value.response
    return err["Error"]["Code"], err["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def ddb(client):
    ddb = client("dynamodb")
    ddb.create_table(TableName="people", BillingMode="PAY_PER_REQUEST",
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
                     KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}])
    s3 = client("s3")
    s3.create_bucket(Bucket="source")
    lines = "\n".join(json.dumps({"Item": {"id": {"S": str(n)}, "n": {"N": str(n)}}}) for n in range(3))
    s3.put_object(Bucket="source", Key="in/part-1.json", Body=lines.encode())
    s3.put_object(Bucket="source", Key="gz/part-1.json.gz",
                  Body=gzip.compress(b'{"Item": {"id": {"S": "z"}}}\n{"Item": {"n": {"N": "1"}}}'))
    return ddb


def test_a_bulk_put_writes_the_source_items_into_the_table(ddb):
    out = ddb.start_bulk_put_items(
        TableName="people", OutputS3Configuration=OUTPUT,
        InputS3Configuration={"S3Bucket": "source", "S3KeyPrefix": "in/", "InputFormat": "DYNAMODB_JSON"},
    )["BulkOperationDescription"]
    assert out["BulkOperationStatus"] == "IN_PROGRESS"
    arn = out["BulkOperationArn"]
    assert arn.startswith("arn:aws:dynamodb:us-east-1:000000000000:table/people/bulk-operation/")
    got = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
    assert got["BulkOperationStatus"] == "COMPLETED"
    assert got["ProcessedItemCount"] == 3 and got["FailedItemCount"] == 0
    assert got["OutputS3Configuration"] == OUTPUT
    assert ddb.get_item(TableName="people", Key={"id": {"S": "2"}})["Item"]["n"] == {"N": "2"}
    [summary] = ddb.list_bulk_operations()["BulkOperationsSummaryList"]
    assert summary["BulkOperationArn"] == arn and summary["BulkOperationStatus"] == "COMPLETED"


def test_items_that_cannot_be_stored_are_counted_and_gzip_is_read(ddb):
    arn = ddb.start_bulk_put_items(
        TableName="people", OutputS3Configuration=OUTPUT,
        InputS3Configuration={"S3Bucket": "source", "S3KeyPrefix": "gz/", "InputFormat": "DYNAMODB_JSON",
                              "InputCompressionType": "GZIP"},
    )["BulkOperationDescription"]["BulkOperationArn"]
    got = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
    assert got["BulkOperationStatus"] == "COMPLETED_WITH_ERRORS"
    assert (got["ProcessedItemCount"], got["FailedItemCount"]) == (2, 1)
    assert "Item" in ddb.get_item(TableName="people", Key={"id": {"S": "z"}})


def test_client_tokens_unreadable_sources_and_refusals(ddb):
    source = {"S3Bucket": "source", "S3KeyPrefix": "in/", "InputFormat": "DYNAMODB_JSON"}
    first = ddb.start_bulk_put_items(TableName="people", OutputS3Configuration=OUTPUT,
                                     InputS3Configuration=source, ClientToken="t1")
    again = ddb.start_bulk_put_items(TableName="people", OutputS3Configuration=OUTPUT,
                                     InputS3Configuration=source, ClientToken="t1")
    assert again["BulkOperationDescription"]["BulkOperationArn"] == first["BulkOperationDescription"]["BulkOperationArn"]
    with pytest.raises(ClientError) as e:
        ddb.start_bulk_put_items(TableName="people", OutputS3Configuration=OUTPUT,
                                 InputS3Configuration={**source, "S3KeyPrefix": "gz/"}, ClientToken="t1")
    assert error_of(e) == ("IdempotentParameterMismatchException", 400)
    missing = ddb.start_bulk_put_items(TableName="people", OutputS3Configuration=OUTPUT,
                                       InputS3Configuration={**source, "S3Bucket": "nope"})
    arn = missing["BulkOperationDescription"]["BulkOperationArn"]
    got = ddb.describe_bulk_operation(BulkOperationArn=arn)["BulkOperationDescription"]
    assert got["BulkOperationStatus"] == "FAILED" and got["FailureCode"] == "S3NoSuchBucket"
    with pytest.raises(ClientError) as e:
        ddb.start_bulk_put_items(TableName="missing", OutputS3Configuration=OUTPUT, InputS3Configuration=source)
    assert error_of(e) == ("ResourceNotFoundException", 400)
    with pytest.raises(ClientError) as e:
        ddb.cancel_bulk_operation(BulkOperationArn=arn)
    assert error_of(e) == ("ValidationException", 400)
    with pytest.raises(ClientError) as e:
        ddb.describe_bulk_operation(BulkOperationArn=arn + "x")
    assert error_of(e) == ("ResourceNotFoundException", 400)
