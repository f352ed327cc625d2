"""S3 event notifications: configuration checks, the s3:TestEvent, and ObjectCreated /
ObjectRemoved events delivered to SQS through the event bus, with prefix/suffix filters."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from s3_helpers import error


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def sqs(client):
    return client("sqs")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="events-bucket")
    return "events-bucket"


def queue(sqs, name="events"):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def receive(sqs, url, count, timeout=5.0):
    bodies, deadline = [], time.time() + timeout
    while len(bodies) < count and time.time() < deadline:
        msgs = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", [])
        for m in msgs:
            bodies.append(json.loads(m["Body"]))
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
    return bodies


def configure(s3, bucket, arn, events, rules=None):
    config = {"Id": "to-queue", "QueueArn": arn, "Events": events}
    if rules:
        config["Filter"] = {"Key": {"FilterRules": rules}}
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={"QueueConfigurations": [config]})


def test_configuration_sends_a_test_event_and_reads_back(s3, sqs, bucket):
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectCreated:*"])
    [test] = receive(sqs, url, 1)
    assert test["Event"] == "s3:TestEvent" and test["Bucket"] == bucket and test["Service"] == "Amazon S3"
    got = s3.get_bucket_notification_configuration(Bucket=bucket)["QueueConfigurations"]
    assert got[0]["QueueArn"] == arn and got[0]["Events"] == ["s3:ObjectCreated:*"]


def test_object_events_reach_the_queue_with_the_real_record_shape(s3, sqs, bucket):
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectCreated:*", "s3:ObjectRemoved:*"])
    receive(sqs, url, 1)
    s3.put_object(Bucket=bucket, Key="dir/a b.txt", Body=b"hello")
    s3.delete_object(Bucket=bucket, Key="dir/a b.txt")
    events = receive(sqs, url, 2)
    created, removed = sorted((e["Records"][0] for e in events), key=lambda r: r["eventName"])
    assert created["eventName"] == "ObjectCreated:Put"
    assert created["eventSource"] == "aws:s3" and created["eventVersion"] == "2.1"
    assert created["awsRegion"] == "us-east-1"
    assert created["s3"]["bucket"]["name"] == bucket
    assert created["s3"]["bucket"]["arn"] == f"arn:aws:s3:::{bucket}"
    assert created["s3"]["configurationId"] == "to-queue"
    obj = created["s3"]["object"]
    assert obj["key"] == "dir/a%20b.txt" and obj["size"] == 5
    assert obj["eTag"] == "5d41402abc4b2a76b9719d911017c592"
    assert removed["eventName"] == "ObjectRemoved:Delete"
    assert "size" not in removed["s3"]["object"]


def test_filters_and_event_names_select_what_is_sent(s3, sqs, bucket):
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectCreated:Put"],
              [{"Name": "prefix", "Value": "img/"}, {"Name": "suffix", "Value": ".jpg"}])
    receive(sqs, url, 1)
    s3.put_object(Bucket=bucket, Key="img/skip.png", Body=b"x")
    s3.put_object(Bucket=bucket, Key="doc/skip.jpg", Body=b"x")
    s3.copy_object(Bucket=bucket, Key="img/copied.jpg", CopySource=f"{bucket}/doc/skip.jpg")
    s3.put_object(Bucket=bucket, Key="img/take.jpg", Body=b"x")
    events = receive(sqs, url, 2, timeout=3)
    assert [e["Records"][0]["s3"]["object"]["key"] for e in events] == ["img/take.jpg"]


def test_multipart_and_copy_events_name_their_api(s3, sqs, bucket):
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectCreated:*"])
    receive(sqs, url, 1)
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"y")["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    names = sorted(e["Records"][0]["eventName"] for e in receive(sqs, url, 3))
    assert names == ["ObjectCreated:CompleteMultipartUpload", "ObjectCreated:Copy", "ObjectCreated:Put"]


def test_destination_that_does_not_exist_is_rejected(s3, bucket):
    with pytest.raises(ClientError) as e:
        configure(s3, bucket, "arn:aws:sqs:us-east-1:000000000000:no-such-queue", ["s3:ObjectCreated:*"])
    assert error(e)["Code"] == "InvalidArgument"
    assert error(e)["Message"] == "Unable to validate the following destination configurations"
    assert "QueueConfigurations" not in s3.get_bucket_notification_configuration(Bucket=bucket)


def test_unknown_event_and_filter_names_are_invalid_argument(s3, sqs, bucket):
    _, arn = queue(sqs)
    with pytest.raises(ClientError) as e:
        configure(s3, bucket, arn, ["s3:ObjectExploded:*"])
    assert error(e)["Code"] == "InvalidArgument"
    with pytest.raises(ClientError) as e:
        configure(s3, bucket, arn, ["s3:ObjectCreated:*"], [{"Name": "middle", "Value": "x"}])
    assert error(e)["Code"] == "InvalidArgument"


def test_deliveries_are_recorded_in_the_trace(s3, sqs, server, bucket):
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectCreated:*"])
    s3.put_object(Bucket=bucket, Key="traced", Body=b"x")
    receive(sqs, url, 2)
    deliveries = [t for t in server.traces() if t.get("kind") == "delivery"]
    assert {d.get("operation") for d in deliveries} >= {"s3:TestEvent", "s3:ObjectCreated:Put"}
    assert all(d.get("target") == arn and d.get("outcome") == "delivered" for d in deliveries)


def test_topic_destination_publishes_through_sns(s3, sqs, client, bucket):
    sns = client("sns")
    url, queue_arn = queue(sqs, "via-topic")
    topic = sns.create_topic(Name="s3-events")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
        "TopicConfigurations": [{"TopicArn": topic, "Events": ["s3:ObjectCreated:*"]}]})
    s3.put_object(Bucket=bucket, Key="via-sns", Body=b"x")
    messages = receive(sqs, url, 2)
    assert messages[0]["Event"] == "s3:TestEvent"
    assert messages[1]["Records"][0]["s3"]["object"]["key"] == "via-sns"
    with pytest.raises(ClientError) as e:
        s3.put_bucket_notification_configuration(Bucket=bucket, NotificationConfiguration={
            "TopicConfigurations": [{"TopicArn": topic + "-missing", "Events": ["s3:ObjectCreated:*"]}]})
    assert error(e)["Code"] == "InvalidArgument"


# --- EventBridge ----------------------------------------------------------------------


def routed_to_queue(client, sqs, bucket, detail_types=("Object Created", "Object Deleted")):
    """A rule on the default bus that sends this bucket's S3 events to a new queue."""
    url, arn = queue(sqs, "from-the-bus")
    events = client("events")
    pattern = {"source": ["aws.s3"], "detail-type": list(detail_types), "detail": {"bucket": {"name": [bucket]}}}
    events.put_rule(Name="s3-objects", EventPattern=json.dumps(pattern))
    events.put_targets(Rule="s3-objects", Targets=[{"Id": "q", "Arn": arn}])
    return url


def eventbridge_on(s3, bucket):
    s3.put_bucket_notification_configuration(Bucket=bucket,
                                             NotificationConfiguration={"EventBridgeConfiguration": {}})


def test_eventbridge_gets_object_events_in_its_own_shape(s3, sqs, client, server, bucket):
    url = routed_to_queue(client, sqs, bucket)
    eventbridge_on(s3, bucket)
    assert s3.get_bucket_notification_configuration(Bucket=bucket)["EventBridgeConfiguration"] == {}
    put = s3.put_object(Bucket=bucket, Key="dir/a b.txt", Body=b"hello")
    s3.delete_object(Bucket=bucket, Key="dir/a b.txt")
    created, deleted = receive(sqs, url, 2)
    assert (created["source"], created["detail-type"], created["version"]) == ("aws.s3", "Object Created", "0")
    assert (created["account"], created["region"]) == ("000000000000", "us-east-1")
    assert created["resources"] == [f"arn:aws:s3:::{bucket}"]
    assert created["id"] and created["time"].endswith("Z")
    detail = created["detail"]
    assert detail["version"] == "0" and detail["bucket"] == {"name": bucket}
    assert detail["object"]["key"] == "dir/a b.txt"
    assert detail["object"]["size"] == 5 and detail["object"]["etag"] == put["ETag"].strip('"')
    assert "version-id" not in detail["object"]
    assert (detail["reason"], detail["requester"]) == ("PutObject", "000000000000")
    assert detail["request-id"] and detail["source-ip-address"]
    assert deleted["detail-type"] == "Object Deleted"
    assert (deleted["detail"]["reason"], deleted["detail"]["deletion-type"]) == ("DeleteObject", "Permanently Deleted")
    assert "size" not in deleted["detail"]["object"]
    assert deleted["detail"]["object"]["sequencer"] > detail["object"]["sequencer"]
    moved = server.wait_for_delivery(service="s3", operation="s3:ObjectCreated:Put", outcome="delivered")
    assert moved["target"] == "arn:aws:events:us-east-1:000000000000:event-bus/default"


def test_eventbridge_reasons_name_the_api_and_versions_are_named(s3, sqs, client, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    url = routed_to_queue(client, sqs, bucket)
    eventbridge_on(s3, bucket)
    put = s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"y")["ETag"]
    s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    marker = s3.delete_object(Bucket=bucket, Key="src")
    s3.delete_object(Bucket=bucket, Key="src", VersionId=put["VersionId"])
    events = receive(sqs, url, 5)
    details = {(e["detail-type"], e["detail"]["reason"], e["detail"].get("deletion-type")): e["detail"] for e in events}
    assert set(details) == {("Object Created", "PutObject", None), ("Object Created", "CopyObject", None),
                            ("Object Created", "CompleteMultipartUpload", None),
                            ("Object Deleted", "DeleteObject", "Delete Marker Created"),
                            ("Object Deleted", "DeleteObject", "Permanently Deleted")}
    assert details[("Object Created", "PutObject", None)]["object"]["version-id"] == put["VersionId"]
    marked = details[("Object Deleted", "DeleteObject", "Delete Marker Created")]["object"]
    assert marked["version-id"] == marker["VersionId"] and marked["key"] == "src"
    gone = details[("Object Deleted", "DeleteObject", "Permanently Deleted")]["object"]
    assert gone["version-id"] == put["VersionId"]


def test_versioned_deletes_name_their_version_in_queue_records(s3, sqs, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    url, arn = queue(sqs)
    configure(s3, bucket, arn, ["s3:ObjectRemoved:*"])
    receive(sqs, url, 1)
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    marker = s3.delete_object(Bucket=bucket, Key="k")
    s3.delete_object(Bucket=bucket, Key="k", VersionId=marker["VersionId"])
    records = [e["Records"][0] for e in receive(sqs, url, 2)]
    assert [(r["eventName"], r["s3"]["object"]["versionId"]) for r in records] == [
        ("ObjectRemoved:DeleteMarkerCreated", marker["VersionId"]),
        ("ObjectRemoved:Delete", marker["VersionId"])]
    assert put["VersionId"] != marker["VersionId"]


def test_without_eventbridge_configuration_nothing_reaches_the_bus(s3, sqs, client, server, bucket):
    url = routed_to_queue(client, sqs, bucket)
    q_url, q_arn = queue(sqs, "direct")
    configure(s3, bucket, q_arn, ["s3:ObjectCreated:*"])
    s3.put_object(Bucket=bucket, Key="quiet", Body=b"x")
    assert len(receive(sqs, q_url, 2)) == 2
    assert receive(sqs, url, 1, timeout=1) == []
    bus = "arn:aws:events:us-east-1:000000000000:event-bus/default"
    assert server.traces(kind="delivery", target=bus) == []
    eventbridge_on(s3, bucket)
    assert "QueueConfigurations" not in s3.get_bucket_notification_configuration(Bucket=bucket)
    s3.put_object(Bucket=bucket, Key="loud", Body=b"x")
    [event] = receive(sqs, url, 1)
    assert event["detail"]["object"]["key"] == "loud"
