"""S3 bucket configuration: location, policy, CORS, lifecycle, tagging, encryption, ownership
controls, public access block, website, ACLs — stored and returned, with AWS's NoSuch* errors."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from s3_helpers import AUTH, error, status


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="cfg-bucket")
    return "cfg-bucket"


def test_get_bucket_location(s3, server, client):
    s3.create_bucket(Bucket="east-bucket")
    assert s3.get_bucket_location(Bucket="east-bucket")["LocationConstraint"] is None
    eu = client("s3", region_name="eu-west-1")
    eu.create_bucket(Bucket="eu-bucket", CreateBucketConfiguration={"LocationConstraint": "eu-west-1"})
    assert eu.get_bucket_location(Bucket="eu-bucket")["LocationConstraint"] == "eu-west-1"
    code, _, body = server.request("GET", "/eu-bucket?location", headers={"Authorization": AUTH})
    assert code == 200
    assert body.endswith(b'<LocationConstraint xmlns="http://s3.amazonaws.com/doc/2006-03-01/">eu-west-1</LocationConstraint>')
    with pytest.raises(ClientError) as e:
        s3.get_bucket_location(Bucket="missing-bucket")
    assert error(e)["Code"] == "NoSuchBucket"


@pytest.mark.parametrize("getter,code", [
    ("get_bucket_policy", "NoSuchBucketPolicy"),
    ("get_bucket_cors", "NoSuchCORSConfiguration"),
    ("get_bucket_lifecycle_configuration", "NoSuchLifecycleConfiguration"),
    ("get_bucket_tagging", "NoSuchTagSet"),
    ("get_bucket_website", "NoSuchWebsiteConfiguration"),
    ("get_bucket_replication", "ReplicationConfigurationNotFoundError"),
    ("get_object_lock_configuration", "ObjectLockConfigurationNotFoundError"),
])
def test_missing_configuration_is_its_no_such_error(s3, bucket, getter, code):
    with pytest.raises(ClientError) as e:
        getattr(s3, getter)(Bucket=bucket)
    assert error(e)["Code"] == code
    assert error(e)["BucketName"] == bucket
    assert status(e) == 404


def test_policy_round_trips_and_is_validated(s3, bucket):
    policy = json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": "*", "Action": "s3:GetObject", "Resource": f"arn:aws:s3:::{bucket}/*"}]})
    s3.delete_public_access_block(Bucket=bucket)
    s3.put_bucket_policy(Bucket=bucket, Policy=policy)
    assert json.loads(s3.get_bucket_policy(Bucket=bucket)["Policy"]) == json.loads(policy)
    assert s3.get_bucket_policy_status(Bucket=bucket)["PolicyStatus"]["IsPublic"] is True
    with pytest.raises(ClientError) as e:
        s3.put_bucket_policy(Bucket=bucket, Policy="not json")
    assert error(e)["Code"] == "MalformedPolicy"
    assert s3.delete_bucket_policy(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError):
        s3.get_bucket_policy(Bucket=bucket)


def test_cors_round_trips(s3, bucket):
    rules = [{"AllowedMethods": ["GET", "PUT"], "AllowedOrigins": ["https://example.com"],
              "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 300}]
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": rules})
    assert s3.get_bucket_cors(Bucket=bucket)["CORSRules"] == rules
    with pytest.raises(ClientError) as e:
        s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
            {"AllowedMethods": ["PATCH"], "AllowedOrigins": ["*"]}]})
    assert error(e)["Code"] == "InvalidRequest"
    s3.delete_bucket_cors(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_cors(Bucket=bucket)


def test_lifecycle_round_trips_with_dates(s3, bucket):
    import datetime
    rules = [{"ID": "expire-logs", "Filter": {"Prefix": "logs/"}, "Status": "Enabled",
              "Expiration": {"Days": 30}},
             {"ID": "dated", "Filter": {"Prefix": "tmp/"}, "Status": "Disabled",
              "Expiration": {"Date": datetime.datetime(2030, 1, 1, tzinfo=datetime.timezone.utc)}}]
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": rules})
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert got[0] == rules[0]
    assert got[1]["Expiration"]["Date"].year == 2030
    s3.delete_bucket_lifecycle(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_lifecycle_configuration(Bucket=bucket)


def test_bucket_tagging_round_trips_and_is_checked(s3, bucket):
    tags = [{"Key": "env", "Value": "dev"}]
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tags})
    assert s3.get_bucket_tagging(Bucket=bucket)["TagSet"] == tags
    with pytest.raises(ClientError) as e:
        s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": tags + tags})
    assert error(e)["Code"] == "InvalidTag"
    s3.delete_bucket_tagging(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_tagging(Bucket=bucket)


def test_encryption_defaults_to_sse_s3(s3, bucket):
    rules = s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"]["Rules"]
    assert rules[0]["ApplyServerSideEncryptionByDefault"]["SSEAlgorithm"] == "AES256"
    kms = {"Rules": [{"ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": "alias/k"},
                      "BucketKeyEnabled": True}]}
    s3.put_bucket_encryption(Bucket=bucket, ServerSideEncryptionConfiguration=kms)
    assert s3.get_bucket_encryption(Bucket=bucket)["ServerSideEncryptionConfiguration"] == kms


def test_ownership_controls_and_public_access_block_have_defaults_until_deleted(s3, bucket):
    rules = s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"]
    assert rules == [{"ObjectOwnership": "BucketOwnerEnforced"}]
    s3.put_bucket_ownership_controls(Bucket=bucket, OwnershipControls={"Rules": [{"ObjectOwnership": "ObjectWriter"}]})
    assert s3.get_bucket_ownership_controls(Bucket=bucket)["OwnershipControls"]["Rules"] == [{"ObjectOwnership": "ObjectWriter"}]
    s3.delete_bucket_ownership_controls(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_bucket_ownership_controls(Bucket=bucket)
    assert error(e)["Code"] == "OwnershipControlsNotFoundError"
    block = s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"]
    assert block == {"BlockPublicAcls": True, "IgnorePublicAcls": True, "BlockPublicPolicy": True, "RestrictPublicBuckets": True}
    s3.put_public_access_block(Bucket=bucket, PublicAccessBlockConfiguration={"BlockPublicAcls": False})
    assert s3.get_public_access_block(Bucket=bucket)["PublicAccessBlockConfiguration"] == {
        "BlockPublicAcls": False, "IgnorePublicAcls": False, "BlockPublicPolicy": False, "RestrictPublicBuckets": False}
    s3.delete_public_access_block(Bucket=bucket)
    with pytest.raises(ClientError) as e:
        s3.get_public_access_block(Bucket=bucket)
    assert error(e)["Code"] == "NoSuchPublicAccessBlockConfiguration"


def test_website_round_trips(s3, bucket):
    config = {"IndexDocument": {"Suffix": "index.html"}, "ErrorDocument": {"Key": "error.html"}}
    s3.put_bucket_website(Bucket=bucket, WebsiteConfiguration=config)
    got = s3.get_bucket_website(Bucket=bucket)
    assert got["IndexDocument"] == {"Suffix": "index.html"} and got["ErrorDocument"] == {"Key": "error.html"}
    s3.delete_bucket_website(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_website(Bucket=bucket)


def test_acl_shows_the_owner_with_full_control(s3, bucket):
    acl = s3.get_bucket_acl(Bucket=bucket)
    assert acl["Grants"][0]["Permission"] == "FULL_CONTROL"
    assert acl["Grants"][0]["Grantee"]["ID"] == acl["Owner"]["ID"]
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert s3.get_object_acl(Bucket=bucket, Key="k")["Grants"][0]["Permission"] == "FULL_CONTROL"


def test_configuration_on_a_missing_bucket_is_no_such_bucket(s3):
    with pytest.raises(ClientError) as e:
        s3.get_bucket_cors(Bucket="missing-bucket")
    assert error(e)["Code"] == "NoSuchBucket"


def test_deleting_a_bucket_drops_its_configuration(s3, bucket):
    s3.put_bucket_tagging(Bucket=bucket, Tagging={"TagSet": [{"Key": "a", "Value": "b"}]})
    s3.delete_bucket(Bucket=bucket)
    s3.create_bucket(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.get_bucket_tagging(Bucket=bucket)
