"""S3 archived storage classes: GLACIER and DEEP_ARCHIVE objects refuse reads and copies until
RestoreObject makes a copy readable, which lapses with the server clock."""

from __future__ import annotations

import datetime
import email.utils
import json
import re
import time

import pytest

from s3_helpers import fails

DAY = 86400


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="archive-bucket")
    s3.put_object(Bucket="archive-bucket", Key="cold", Body=b"frozen", StorageClass="GLACIER")
    s3.put_object(Bucket="archive-bucket", Key="deep", Body=b"deeper", StorageClass="DEEP_ARCHIVE")
    s3.put_object(Bucket="archive-bucket", Key="warm", Body=b"warm")
    return "archive-bucket"


def restore(s3, bucket, key, days=1):
    return s3.restore_object(Bucket=bucket, Key=key, RestoreRequest={"Days": days})


def expiry_of(head: dict) -> datetime.datetime:
    match = re.fullmatch(r'ongoing-request="false", expiry-date="([^"]+)"', head["Restore"])
    assert match, head["Restore"]
    return email.utils.parsedate_to_datetime(match.group(1))


def test_archived_objects_show_their_class_but_refuse_reads(s3, bucket):
    for key, cls in (("cold", "GLACIER"), ("deep", "DEEP_ARCHIVE")):
        head = s3.head_object(Bucket=bucket, Key=key)
        assert head["StorageClass"] == cls
        assert "Restore" not in head
        e = fails(lambda: s3.get_object(Bucket=bucket, Key=key), "InvalidObjectState", 403,
                  "The operation is not valid for the object's storage class")
        assert e["StorageClass"] == cls
    fails(lambda: s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": bucket, "Key": "cold"}),
          "InvalidObjectState", 403, "Operation is not valid for the source object's storage class")
    assert s3.get_object(Bucket=bucket, Key="warm")["Body"].read() == b"warm"


def test_restore_makes_a_copy_readable_until_midnight_after_its_days(server, s3, bucket):
    start = datetime.datetime.now(datetime.timezone.utc)
    first = restore(s3, bucket, "cold", days=2)
    assert first["ResponseMetadata"]["HTTPStatusCode"] == 202
    head = s3.head_object(Bucket=bucket, Key="cold")
    assert head["StorageClass"] == "GLACIER"
    midnight = expiry_of(head)
    assert (midnight.hour, midnight.minute, midnight.second) == (0, 0, 0)
    assert start + datetime.timedelta(days=2) < midnight <= start + datetime.timedelta(days=3, seconds=60)
    assert s3.get_object(Bucket=bucket, Key="cold")["Body"].read() == b"frozen"
    assert "Restore" in s3.get_object(Bucket=bucket, Key="cold")
    again = restore(s3, bucket, "cold", days=5)
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert expiry_of(s3.head_object(Bucket=bucket, Key="cold")) == midnight + datetime.timedelta(days=3)
    copied = s3.copy_object(Bucket=bucket, Key="thawed", CopySource={"Bucket": bucket, "Key": "cold"})
    assert copied["CopyObjectResult"]["ETag"]
    thawed = s3.head_object(Bucket=bucket, Key="thawed")
    assert "StorageClass" not in thawed and "Restore" not in thawed
    server.advance_clock(7 * DAY)
    assert "Restore" not in s3.head_object(Bucket=bucket, Key="cold")
    fails(lambda: s3.get_object(Bucket=bucket, Key="cold"), "InvalidObjectState")
    assert restore(s3, bucket, "cold")["ResponseMetadata"]["HTTPStatusCode"] == 202


def test_restore_requests_are_checked(s3, bucket):
    e = fails(lambda: restore(s3, bucket, "warm"), "InvalidObjectState", 403,
              "Restore is not allowed for the object's current storage class")
    assert e["StorageClass"] == "STANDARD"
    fails(lambda: restore(s3, bucket, "missing"), "NoSuchKey", 404)
    fails(lambda: s3.restore_object(Bucket=bucket, Key="cold"), "MalformedXML", 400)
    fails(lambda: restore(s3, bucket, "cold", days=0), "MalformedXML", 400)
    fails(lambda: restore(s3, "no-such-bucket", "cold"), "NoSuchBucket", 404)


def test_a_restored_version_is_that_version_only(s3):
    s3.create_bucket(Bucket="archive-versions")
    s3.put_bucket_versioning(Bucket="archive-versions", VersioningConfiguration={"Status": "Enabled"})
    old = s3.put_object(Bucket="archive-versions", Key="k", Body=b"old", StorageClass="GLACIER")["VersionId"]
    s3.put_object(Bucket="archive-versions", Key="k", Body=b"new", StorageClass="GLACIER")
    s3.restore_object(Bucket="archive-versions", Key="k", VersionId=old, RestoreRequest={"Days": 1})
    assert s3.get_object(Bucket="archive-versions", Key="k", VersionId=old)["Body"].read() == b"old"
    fails(lambda: s3.get_object(Bucket="archive-versions", Key="k"), "InvalidObjectState")


def test_restores_notify_post_and_completed(client, s3, bucket):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="restores")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={"QueueConfigurations": [
        {"QueueArn": arn, "Events": ["s3:ObjectRestore:*"]}]})
    restore(s3, bucket, "deep")
    names, deadline = [], time.time() + 5
    while len(names) < 2 and time.time() < deadline:
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
            body = json.loads(m["Body"])
            names += [r["eventName"] for r in body.get("Records", [])]
    assert sorted(names) == ["ObjectRestore:Completed", "ObjectRestore:Post"]
