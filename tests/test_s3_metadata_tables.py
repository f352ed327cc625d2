"""S3 Metadata black-box tests (beyond test_s3_metadata.py's buckets without it): the V2 configuration (journal, inventory and annotation tables)
and the V1 metadata table configuration, created, updated, read back exactly, deleted, with
S3's not-found and validation errors."""

from __future__ import annotations

import pytest

from s3_helpers import fails

JOURNAL = {"RecordExpiration": {"Expiration": "ENABLED", "Days": 30}}


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="meta-bucket")
    return s3


def result(s3):
    return s3.get_bucket_metadata_configuration(Bucket="meta-bucket")[
        "GetBucketMetadataConfigurationResult"]["MetadataConfigurationResult"]


def test_updates_of_a_bucket_without_metadata_answer_not_found(s3):
    fails(lambda: s3.update_bucket_metadata_journal_table_configuration(
        Bucket="meta-bucket", JournalTableConfiguration=JOURNAL), "MetadataConfigurationNotFound", 404)
    fails(lambda: s3.update_bucket_metadata_inventory_table_configuration(
        Bucket="meta-bucket", InventoryTableConfiguration={"ConfigurationState": "ENABLED"}),
        "MetadataConfigurationNotFound", 404)
    fails(lambda: s3.create_bucket_metadata_configuration(
        Bucket="no-such-meta", MetadataConfiguration={"JournalTableConfiguration": JOURNAL}), "NoSuchBucket", 404)


def test_create_then_get_returns_the_configuration_and_its_tables(s3):
    s3.create_bucket_metadata_configuration(Bucket="meta-bucket", MetadataConfiguration={
        "JournalTableConfiguration": JOURNAL,
        "InventoryTableConfiguration": {"ConfigurationState": "ENABLED",
                                        "EncryptionConfiguration": {"SseAlgorithm": "AES256"}},
    })
    got = result(s3)
    destination = got["DestinationResult"]
    assert destination["TableBucketType"] == "aws"
    assert destination["TableBucketArn"] == "arn:aws:s3tables:us-east-1:000000000000:bucket/aws-s3"
    assert destination["TableNamespace"] == "b_meta_bucket"
    journal = got["JournalTableConfigurationResult"]
    assert journal["RecordExpiration"] == JOURNAL["RecordExpiration"]
    assert (journal["TableStatus"], journal["TableName"]) == ("ACTIVE", "journal")
    assert journal["TableArn"].endswith("/table/b_meta_bucket/journal")
    inventory = got["InventoryTableConfigurationResult"]
    assert (inventory["ConfigurationState"], inventory["TableName"]) == ("ENABLED", "inventory")
    fails(lambda: s3.create_bucket_metadata_configuration(
        Bucket="meta-bucket", MetadataConfiguration={"JournalTableConfiguration": JOURNAL}), "InvalidRequest", 400)


def test_updates_change_each_table_and_delete_removes_the_configuration(s3):
    s3.create_bucket_metadata_configuration(Bucket="meta-bucket", MetadataConfiguration={
        "JournalTableConfiguration": {"RecordExpiration": {"Expiration": "DISABLED"}}})
    assert result(s3)["InventoryTableConfigurationResult"] == {"ConfigurationState": "DISABLED"}
    s3.update_bucket_metadata_journal_table_configuration(Bucket="meta-bucket", JournalTableConfiguration=JOURNAL)
    s3.update_bucket_metadata_inventory_table_configuration(
        Bucket="meta-bucket", InventoryTableConfiguration={"ConfigurationState": "ENABLED"})
    role = "arn:aws:iam::000000000000:role/annotations"
    s3.update_bucket_metadata_annotation_table_configuration(
        Bucket="meta-bucket", AnnotationTableConfiguration={"ConfigurationState": "ENABLED", "Role": role})
    got = result(s3)
    assert got["JournalTableConfigurationResult"]["RecordExpiration"] == JOURNAL["RecordExpiration"]
    assert got["InventoryTableConfigurationResult"]["ConfigurationState"] == "ENABLED"
    annotation = got["AnnotationTableConfigurationResult"]
    assert (annotation["ConfigurationState"], annotation["Role"], annotation["TableName"]) == ("ENABLED", role, "annotation")
    s3.delete_bucket_metadata_configuration(Bucket="meta-bucket")
    fails(lambda: s3.get_bucket_metadata_configuration(Bucket="meta-bucket"), "MetadataConfigurationNotFound", 404)


@pytest.mark.parametrize("journal,inventory", [
    ({"RecordExpiration": {"Expiration": "ENABLED"}}, None),
    ({"RecordExpiration": {"Expiration": "ENABLED", "Days": 3}}, None),
    ({"RecordExpiration": {"Expiration": "DISABLED", "Days": 30}}, None),
    (JOURNAL, {"ConfigurationState": "ENABLED", "EncryptionConfiguration": {"SseAlgorithm": "aws:kms"}}),
    (JOURNAL, {"ConfigurationState": "ENABLED",
               "EncryptionConfiguration": {"SseAlgorithm": "AES256", "KmsKeyArn": "arn:aws:kms:us-east-1:000000000000:key/k"}}),
])
def test_invalid_configurations_are_refused(s3, journal, inventory):
    config = {"JournalTableConfiguration": journal}
    if inventory:
        config["InventoryTableConfiguration"] = inventory
    fails(lambda: s3.create_bucket_metadata_configuration(Bucket="meta-bucket", MetadataConfiguration=config),
          "InvalidRequest", 400)
    fails(lambda: s3.get_bucket_metadata_configuration(Bucket="meta-bucket"), "MetadataConfigurationNotFound", 404)


def test_v1_metadata_table_configuration_is_stored_and_returned(s3):
    table_bucket = "arn:aws:s3tables:us-east-1:000000000000:bucket/tables"
    s3.create_bucket_metadata_table_configuration(Bucket="meta-bucket", MetadataTableConfiguration={
        "S3TablesDestination": {"TableBucketArn": table_bucket, "TableName": "meta_table"}})
    got = s3.get_bucket_metadata_table_configuration(Bucket="meta-bucket")["GetBucketMetadataTableConfigurationResult"]
    assert got["Status"] == "ACTIVE"
    assert got["MetadataTableConfigurationResult"]["S3TablesDestinationResult"] == {
        "TableBucketArn": table_bucket, "TableName": "meta_table",
        "TableArn": table_bucket + "/table/aws_s3_metadata/meta_table", "TableNamespace": "aws_s3_metadata"}
    fails(lambda: s3.create_bucket_metadata_table_configuration(Bucket="meta-bucket", MetadataTableConfiguration={
        "S3TablesDestination": {"TableBucketArn": table_bucket, "TableName": "other"}}), "InvalidRequest", 400)
    s3.delete_bucket_metadata_table_configuration(Bucket="meta-bucket")
    fails(lambda: s3.get_bucket_metadata_table_configuration(Bucket="meta-bucket"),
          "MetadataConfigurationNotFound", 404)
    fails(lambda: s3.create_bucket_metadata_table_configuration(Bucket="meta-bucket", MetadataTableConfiguration={
        "S3TablesDestination": {"TableBucketArn": "not-an-arn", "TableName": "t"}}), "InvalidRequest", 400)
    fails(lambda: s3.create_bucket_metadata_table_configuration(Bucket="meta-bucket", MetadataTableConfiguration={
        "S3TablesDestination": {"TableBucketArn": table_bucket, "TableName": "Bad-Name"}}), "InvalidRequest", 400)
