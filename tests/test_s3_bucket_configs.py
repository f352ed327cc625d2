"""S3 bucket configurations addressed by Id (analytics, inventory, metrics, intelligent
tiering: Put/Get/Delete/List with pagination and NoSuchConfiguration), the checks AWS makes
on accelerate, request payment, logging and replication configurations, and the deprecated
lifecycle and notification operations over the same configurations."""

from __future__ import annotations

import json
import subprocess
import time

import pytest

from roto_server import RotoServer, binary
from s3_helpers import fails


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="conf-bucket")
    return "conf-bucket"


ANALYTICS = {
    "Id": "a1",
    "Filter": {"Prefix": "logs/"},
    "StorageClassAnalysis": {"DataExport": {
        "OutputSchemaVersion": "V_1",
        "Destination": {"S3BucketDestination": {"Format": "CSV", "Bucket": "arn:aws:s3:::dest", "Prefix": "a/"}}}},
}

INVENTORY = {
    "Id": "inv",
    "IsEnabled": True,
    "IncludedObjectVersions": "Current",
    "Schedule": {"Frequency": "Daily"},
    "Destination": {"S3BucketDestination": {"Bucket": "arn:aws:s3:::dest", "Format": "CSV", "Prefix": "inv/"}},
    "OptionalFields": ["Size", "ETag"],
}

TIERING = {
    "Id": "t1",
    "Status": "Enabled",
    "Tierings": [{"Days": 90, "AccessTier": "ARCHIVE_ACCESS"}, {"Days": 180, "AccessTier": "DEEP_ARCHIVE_ACCESS"}],
}


def test_analytics_configurations_round_trip_by_id(s3, bucket):
    s3.put_bucket_analytics_configuration(Bucket=bucket, Id="a1", AnalyticsConfiguration=ANALYTICS)
    second = {"Id": "a0", "StorageClassAnalysis": {}}
    s3.put_bucket_analytics_configuration(Bucket=bucket, Id="a0", AnalyticsConfiguration=second)
    assert s3.get_bucket_analytics_configuration(Bucket=bucket, Id="a1")["AnalyticsConfiguration"] == ANALYTICS
    listed = s3.list_bucket_analytics_configurations(Bucket=bucket)
    assert listed["IsTruncated"] is False
    assert [c["Id"] for c in listed["AnalyticsConfigurationList"]] == ["a0", "a1"]
    s3.delete_bucket_analytics_configuration(Bucket=bucket, Id="a1")
    for call in (lambda: s3.get_bucket_analytics_configuration(Bucket=bucket, Id="a1"),
                 lambda: s3.delete_bucket_analytics_configuration(Bucket=bucket, Id="a1")):
        fails(call, "NoSuchConfiguration", 404, "The specified configuration does not exist.")
    assert [c["Id"] for c in s3.list_bucket_analytics_configurations(Bucket=bucket)["AnalyticsConfigurationList"]] == ["a0"]
    fails(lambda: s3.put_bucket_analytics_configuration(Bucket=bucket, Id="other", AnalyticsConfiguration=second),
          "MalformedXML", 400)


def test_listing_pages_by_id_with_continuation_tokens(s3, bucket):
    ids = [f"m{i:03d}" for i in range(105)]
    for i in reversed(ids):
        s3.put_bucket_metrics_configuration(Bucket=bucket, Id=i, MetricsConfiguration={"Id": i, "Filter": {"Prefix": i}})
    first = s3.list_bucket_metrics_configurations(Bucket=bucket)
    assert first["IsTruncated"] is True
    assert [c["Id"] for c in first["MetricsConfigurationList"]] == ids[:100]
    token = first["NextContinuationToken"]
    second = s3.list_bucket_metrics_configurations(Bucket=bucket, ContinuationToken=token)
    assert second["IsTruncated"] is False
    assert second["ContinuationToken"] == token
    assert "NextContinuationToken" not in second
    assert [c["Id"] for c in second["MetricsConfigurationList"]] == ids[100:]
    fails(lambda: s3.list_bucket_metrics_configurations(Bucket=bucket, ContinuationToken="!!"), "InvalidArgument", 400)
    s3.create_bucket(Bucket="empty-conf")
    empty = s3.list_bucket_metrics_configurations(Bucket="empty-conf")
    assert empty["IsTruncated"] is False
    assert "MetricsConfigurationList" not in empty


def test_a_bucket_holds_at_most_a_thousand_of_a_kind(s3, bucket):
    for i in range(1000):
        s3.put_bucket_metrics_configuration(Bucket=bucket, Id=f"m{i}", MetricsConfiguration={"Id": f"m{i}"})
    fails(lambda: s3.put_bucket_metrics_configuration(Bucket=bucket, Id="extra", MetricsConfiguration={"Id": "extra"}),
          "TooManyConfigurations", 400)
    s3.put_bucket_metrics_configuration(Bucket=bucket, Id="m7", MetricsConfiguration={"Id": "m7", "Filter": {"Prefix": "p"}})
    s3.put_bucket_analytics_configuration(Bucket=bucket, Id="a", AnalyticsConfiguration={"Id": "a", "StorageClassAnalysis": {}})


def test_inventory_configurations_are_checked(s3, bucket):
    s3.put_bucket_inventory_configuration(Bucket=bucket, Id="inv", InventoryConfiguration=INVENTORY)
    assert s3.get_bucket_inventory_configuration(Bucket=bucket, Id="inv")["InventoryConfiguration"] == INVENTORY
    assert s3.list_bucket_inventory_configurations(Bucket=bucket)["InventoryConfigurationList"] == [INVENTORY]
    fails(lambda: s3.put_bucket_inventory_configuration(Bucket=bucket, Id="other", InventoryConfiguration=INVENTORY),
          "IdMismatch", 400, "Document ID does not match the specified configuration ID.")
    for change in ({"Schedule": {"Frequency": "Hourly"}}, {"IncludedObjectVersions": "Some"},
                   {"OptionalFields": ["Colour"]},
                   {"Destination": {"S3BucketDestination": {"Bucket": "arn:aws:s3:::dest", "Format": "XLS"}}}):
        fails(lambda: s3.put_bucket_inventory_configuration(Bucket=bucket, Id="inv",
                                                            InventoryConfiguration={**INVENTORY, **change}),
              "MalformedXML", 400)
    fails(lambda: s3.put_bucket_inventory_configuration(Bucket=bucket, Id="inv", InventoryConfiguration={
        **INVENTORY, "Destination": {"S3BucketDestination": {"Bucket": "dest", "Format": "CSV"}}}),
        "InvalidS3DestinationBucket", 400)
    s3.delete_bucket_inventory_configuration(Bucket=bucket, Id="inv")
    fails(lambda: s3.get_bucket_inventory_configuration(Bucket=bucket, Id="inv"), "NoSuchConfiguration", 404)


def test_intelligent_tiering_configurations_round_trip(s3, bucket):
    s3.put_bucket_intelligent_tiering_configuration(Bucket=bucket, Id="t1", IntelligentTieringConfiguration=TIERING)
    got = s3.get_bucket_intelligent_tiering_configuration(Bucket=bucket, Id="t1")["IntelligentTieringConfiguration"]
    assert got == TIERING
    listed = s3.list_bucket_intelligent_tiering_configurations(Bucket=bucket)
    assert listed["IntelligentTieringConfigurationList"] == [TIERING]
    for bad in ({**TIERING, "Status": "On"}, {**TIERING, "Tierings": [{"Days": 90, "AccessTier": "COLD"}]}):
        fails(lambda: s3.put_bucket_intelligent_tiering_configuration(
            Bucket=bucket, Id="t1", IntelligentTieringConfiguration=bad), "MalformedXML", 400)
    s3.delete_bucket_intelligent_tiering_configuration(Bucket=bucket, Id="t1")
    fails(lambda: s3.delete_bucket_intelligent_tiering_configuration(Bucket=bucket, Id="t1"), "NoSuchConfiguration", 404)


def test_configurations_by_id_need_their_bucket_and_go_with_it(s3, bucket):
    fails(lambda: s3.list_bucket_inventory_configurations(Bucket="no-such-bucket"), "NoSuchBucket", 404)
    fails(lambda: s3.get_bucket_metrics_configuration(Bucket="no-such-bucket", Id="m"), "NoSuchBucket", 404)
    s3.put_bucket_metrics_configuration(Bucket=bucket, Id="m", MetricsConfiguration={"Id": "m"})
    s3.delete_bucket(Bucket=bucket)
    s3.create_bucket(Bucket=bucket)
    fails(lambda: s3.get_bucket_metrics_configuration(Bucket=bucket, Id="m"), "NoSuchConfiguration")


def test_accelerate_configuration(s3, bucket):
    assert "Status" not in s3.get_bucket_accelerate_configuration(Bucket=bucket)
    s3.put_bucket_accelerate_configuration(Bucket=bucket, AccelerateConfiguration={"Status": "Enabled"})
    assert s3.get_bucket_accelerate_configuration(Bucket=bucket)["Status"] == "Enabled"
    s3.put_bucket_accelerate_configuration(Bucket=bucket, AccelerateConfiguration={"Status": "Suspended"})
    assert s3.get_bucket_accelerate_configuration(Bucket=bucket)["Status"] == "Suspended"
    fails(lambda: s3.put_bucket_accelerate_configuration(Bucket=bucket, AccelerateConfiguration={"Status": "On"}),
          "MalformedXML", 400)
    s3.create_bucket(Bucket="dotted.bucket")
    fails(lambda: s3.put_bucket_accelerate_configuration(Bucket="dotted.bucket",
                                                         AccelerateConfiguration={"Status": "Enabled"}),
          "InvalidRequest", 400,
          "S3 Transfer Acceleration is not supported for buckets with periods (.) in their names")


def test_request_payment_configuration(s3, bucket):
    assert s3.get_bucket_request_payment(Bucket=bucket)["Payer"] == "BucketOwner"
    s3.put_bucket_request_payment(Bucket=bucket, RequestPaymentConfiguration={"Payer": "Requester"})
    assert s3.get_bucket_request_payment(Bucket=bucket)["Payer"] == "Requester"
    fails(lambda: s3.put_bucket_request_payment(Bucket=bucket, RequestPaymentConfiguration={"Payer": "Nobody"}),
          "MalformedXML", 400)


def test_logging_needs_a_target_bucket_of_the_same_account_and_region(s3, client, bucket):
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=bucket)
    s3.create_bucket(Bucket="log-target")
    enabled = {"TargetBucket": "log-target", "TargetPrefix": "logs/"}
    s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={"LoggingEnabled": enabled})
    assert s3.get_bucket_logging(Bucket=bucket)["LoggingEnabled"] == enabled
    e = fails(lambda: s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={
        "LoggingEnabled": {"TargetBucket": "missing-target", "TargetPrefix": ""}}),
        "InvalidTargetBucketForLogging", 400, "The target bucket for logging does not exist")
    assert e["TargetBucket"] == "missing-target"
    client("s3", aws_access_key_id="111111111111").create_bucket(Bucket="foreign-target")
    fails(lambda: s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={
        "LoggingEnabled": {"TargetBucket": "foreign-target", "TargetPrefix": ""}}), "InvalidTargetBucketForLogging")
    s3.create_bucket(Bucket="eu-target", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    e = fails(lambda: s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={
        "LoggingEnabled": {"TargetBucket": "eu-target", "TargetPrefix": ""}}), "CrossLocationLoggingProhibitted", 403)
    assert e["TargetBucketLocation"] == "eu-west-1"
    s3.put_bucket_logging(Bucket=bucket, BucketLoggingStatus={})
    assert "LoggingEnabled" not in s3.get_bucket_logging(Bucket=bucket)


def test_replication_needs_versioning_on_both_buckets(s3, bucket):
    config = {"Role": "arn:aws:iam::000000000000:role/replication",
              "Rules": [{"Status": "Enabled", "Priority": 1, "Filter": {"Prefix": ""},
                         "DeleteMarkerReplication": {"Status": "Disabled"},
                         "Destination": {"Bucket": "arn:aws:s3:::replica"}}]}
    fails(lambda: s3.put_bucket_replication(Bucket=bucket, ReplicationConfiguration=config), "InvalidRequest", 400,
          "Versioning must be 'Enabled' on the bucket to apply a replication configuration")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    fails(lambda: s3.put_bucket_replication(Bucket=bucket, ReplicationConfiguration=config), "InvalidRequest", 400,
          "Destination bucket must have versioning enabled.")
    s3.create_bucket(Bucket="replica")
    fails(lambda: s3.put_bucket_replication(Bucket=bucket, ReplicationConfiguration=config), "InvalidRequest")
    s3.put_bucket_versioning(Bucket="replica", VersioningConfiguration={"Status": "Enabled"})
    s3.put_bucket_replication(Bucket=bucket, ReplicationConfiguration=config)
    got = s3.get_bucket_replication(Bucket=bucket)["ReplicationConfiguration"]
    assert got["Role"] == config["Role"]
    rule = got["Rules"][0]
    assert len(rule.pop("ID")) > 0
    assert rule == config["Rules"][0]
    fails(lambda: s3.put_bucket_replication(Bucket=bucket, ReplicationConfiguration={**config, "Rules": [
        {**config["Rules"][0], "Status": "On"}]}), "MalformedXML", 400)
    s3.delete_bucket_replication(Bucket=bucket)
    fails(lambda: s3.get_bucket_replication(Bucket=bucket), "ReplicationConfigurationNotFoundError", 404)


LEGACY_RULE = {"ID": "r", "Prefix": "logs/", "Status": "Enabled",
               "Transition": {"Days": 30, "StorageClass": "GLACIER"}, "Expiration": {"Days": 365}}


def queue_arn(sqs, name):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return url, sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]


def test_legacy_lifecycle_operations_share_the_lifecycle_configuration(s3, bucket):
    s3.put_bucket_lifecycle(Bucket=bucket, LifecycleConfiguration={"Rules": [LEGACY_RULE]})
    assert s3.get_bucket_lifecycle(Bucket=bucket)["Rules"] == [LEGACY_RULE]
    [rule] = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert rule["Transitions"] == [LEGACY_RULE["Transition"]]
    s3.delete_bucket_lifecycle(Bucket=bucket)
    fails(lambda: s3.get_bucket_lifecycle(Bucket=bucket), "NoSuchLifecycleConfiguration", 404)
    fails(lambda: s3.put_bucket_lifecycle(Bucket=bucket, LifecycleConfiguration={"Rules": [
        {**LEGACY_RULE, "Status": "On"}]}), "MalformedXML", 400)


def test_legacy_notification_operations_share_the_notification_configuration(client, s3, bucket):
    sqs = client("sqs")
    url, arn = queue_arn(sqs, "legacy-events")
    s3.put_bucket_notification(Bucket=bucket, NotificationConfiguration={"QueueConfiguration": {
        "Id": "n", "Events": ["s3:ObjectCreated:*"], "Queue": arn}})
    legacy = s3.get_bucket_notification(Bucket=bucket)["QueueConfiguration"]
    assert legacy["Queue"] == arn and legacy["Events"] == ["s3:ObjectCreated:*"]
    current = s3.get_bucket_notification_configuration(Bucket=bucket)["QueueConfigurations"]
    assert current == [{"Id": "n", "QueueArn": arn, "Events": ["s3:ObjectCreated:*"]}]
    s3.put_object(Bucket=bucket, Key="hello", Body=b"x")
    events, deadline = [], time.time() + 5
    while not events and time.time() < deadline:
        for m in sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1).get("Messages", []):
            events += [r["eventName"] for r in json.loads(m["Body"]).get("Records", [])]
    assert events == ["ObjectCreated:Put"]
    fails(lambda: s3.put_bucket_notification(Bucket=bucket, NotificationConfiguration={"QueueConfiguration": {
        "Events": ["s3:Nothing"], "Queue": arn}}), "InvalidArgument", 400)


def test_setup_scripts_call_the_legacy_operations_in_their_old_shapes(tmp_path):
    path = tmp_path / "setup.lua"
    path.write_text("""
        aws.s3.CreateBucket{Bucket = "legacy"}
        aws.s3.PutBucketLifecycle{Bucket = "legacy", LifecycleConfiguration = {Rules = {{
          ID = "r", Prefix = "logs/", Status = "Enabled", Transition = {Days = 30, StorageClass = "GLACIER"},
        }}}}
        local rule = aws.s3.GetBucketLifecycle{Bucket = "legacy"}.Rules[1]
        assert(rule.Transition.StorageClass == "GLACIER" and rule.Transitions == nil)
        local q = aws.sqs.CreateQueue{QueueName = "legacy-q"}
        local arn = aws.sqs.GetQueueAttributes{QueueUrl = q.QueueUrl, AttributeNames = {"QueueArn"}}.Attributes.QueueArn
        aws.s3.PutBucketNotification{Bucket = "legacy", NotificationConfiguration = {
          QueueConfiguration = {Id = "n", Event = "s3:ObjectRemoved:*", Queue = arn},
        }}
        local got = aws.s3.GetBucketNotification{Bucket = "legacy"}.QueueConfiguration
        assert(got.Queue == arn and got.Event == "s3:ObjectRemoved:*")
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as server:
        s3 = server.client("s3")
        [rule] = s3.get_bucket_lifecycle_configuration(Bucket="legacy")["Rules"]
        assert rule["Transitions"] == [{"Days": 30, "StorageClass": "GLACIER"}]
        [queue] = s3.get_bucket_notification_configuration(Bucket="legacy")["QueueConfigurations"]
        assert queue["Events"] == ["s3:ObjectRemoved:*"] and queue["QueueArn"].endswith(":legacy-q")
    missing = tmp_path / "missing.lua"
    missing.write_text('aws.s3.CreateBucket{Bucket = "bare"}\naws.s3.GetBucketLifecycle{Bucket = "bare"}\n')
    proc = subprocess.run([str(binary()), "--ephemeral", "--port", "0", "--setup", str(missing)],
                          capture_output=True, text=True, timeout=30)
    assert proc.returncode == 1
    assert "NoSuchLifecycleConfiguration" in proc.stderr
