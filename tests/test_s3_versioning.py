"""S3 versioning: Enabled and Suspended buckets, version ids, delete markers, null versions,
GetObject by version, ListObjectVersions."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError

from s3_helpers import error, headers_of, status


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="ver-bucket")
    return "ver-bucket"


def enable(s3, bucket, state="Enabled"):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": state})


def test_versioning_status_starts_unset_and_follows_puts(s3, bucket):
    assert "Status" not in s3.get_bucket_versioning(Bucket=bucket)
    enable(s3, bucket)
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    enable(s3, bucket, "Suspended")
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Suspended"
    with pytest.raises(ClientError) as e:
        s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Off"})
    assert error(e)["Code"] == "MalformedXML"


def test_unversioned_bucket_shows_no_version_ids(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert "VersionId" not in put
    assert "VersionId" not in s3.head_object(Bucket=bucket, Key="k")
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [(v["Key"], v["VersionId"], v["IsLatest"]) for v in versions] == [("k", "null", True)]


def test_enabled_bucket_keeps_every_version(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert v1 != v2 and v1 != "null"
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"two"
    old = s3.get_object(Bucket=bucket, Key="k", VersionId=v1)
    assert old["Body"].read() == b"one" and old["VersionId"] == v1
    assert s3.head_object(Bucket=bucket, Key="k")["VersionId"] == v2
    versions = s3.list_object_versions(Bucket=bucket)["Versions"]
    assert [(v["VersionId"], v["IsLatest"]) for v in versions] == [(v2, True), (v1, False)]
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 1


def test_delete_adds_a_delete_marker_that_hides_the_key(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True
    marker = deleted["VersionId"]
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k")
    assert error(e)["Code"] == "NoSuchKey" and status(e) == 404
    assert headers_of(e.value.response)["x-amz-delete-marker"] == "true"
    assert headers_of(e.value.response)["x-amz-version-id"] == marker
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId=marker)
    assert error(e)["Code"] == "MethodNotAllowed" and status(e) == 405
    assert s3.get_object(Bucket=bucket, Key="k", VersionId=v1)["Body"].read() == b"one"
    listed = s3.list_object_versions(Bucket=bucket)
    assert [(m["VersionId"], m["IsLatest"]) for m in listed["DeleteMarkers"]] == [(marker, True)]
    assert [(v["VersionId"], v["IsLatest"]) for v in listed["Versions"]] == [(v1, False)]
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0
    # Removing the marker brings the object back.
    removed = s3.delete_object(Bucket=bucket, Key="k", VersionId=marker)
    assert removed["DeleteMarker"] is True and removed["VersionId"] == marker
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"one"


def test_deleting_the_current_version_promotes_the_previous(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"one")["VersionId"]
    v2 = s3.put_object(Bucket=bucket, Key="k", Body=b"two")["VersionId"]
    assert s3.delete_object(Bucket=bucket, Key="k", VersionId=v2)["VersionId"] == v2
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"one"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=v1)
    assert "Versions" not in s3.list_object_versions(Bucket=bucket)
    s3.delete_bucket(Bucket=bucket)


def test_missing_version_is_no_such_version(s3, bucket):
    enable(s3, bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId="A" * 32)
    assert error(e)["Code"] == "NoSuchVersion" and status(e) == 404
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="k", VersionId="not-a-version")
    assert error(e)["Code"] == "InvalidArgument" and status(e) == 400


def test_null_version_survives_enabling_and_is_replaced_while_suspended(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"before")
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="k", Body=b"versioned")["VersionId"]
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"before"
    enable(s3, bucket, "Suspended")
    assert s3.put_object(Bucket=bucket, Key="k", Body=b"suspended")["VersionId"] == "null"
    assert s3.get_object(Bucket=bucket, Key="k", VersionId="null")["Body"].read() == b"suspended"
    ids = [v["VersionId"] for v in s3.list_object_versions(Bucket=bucket)["Versions"]]
    assert ids == ["null", v1]
    deleted = s3.delete_object(Bucket=bucket, Key="k")
    assert deleted["DeleteMarker"] is True and deleted["VersionId"] == "null"
    listed = s3.list_object_versions(Bucket=bucket)
    assert [v["VersionId"] for v in listed["Versions"]] == [v1]
    assert [m["VersionId"] for m in listed["DeleteMarkers"]] == ["null"]


def test_bucket_with_only_old_versions_is_not_empty(s3, bucket):
    enable(s3, bucket)
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    s3.delete_object(Bucket=bucket, Key="k")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert error(e)["Code"] == "BucketNotEmpty"


def test_list_object_versions_paginates_with_markers(s3, bucket):
    enable(s3, bucket)
    expected = []
    for key in ["a", "b", "c"]:
        ids = [s3.put_object(Bucket=bucket, Key=key, Body=b"%d" % i)["VersionId"] for i in range(3)]
        expected += [(key, v) for v in reversed(ids)]
    seen = []
    paginator = s3.get_paginator("list_object_versions")
    for page in paginator.paginate(Bucket=bucket, PaginationConfig={"PageSize": 4}):
        seen += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
    assert seen == expected
    page = s3.list_object_versions(Bucket=bucket, MaxKeys=2)
    assert page["IsTruncated"] and page["NextKeyMarker"] == "a"
    assert page["NextVersionIdMarker"] == expected[1][1]
    prefixed = s3.list_object_versions(Bucket=bucket, Prefix="b")
    assert {v["Key"] for v in prefixed["Versions"]} == {"b"}


def test_delete_objects_with_versions_and_markers(s3, bucket):
    enable(s3, bucket)
    v1 = s3.put_object(Bucket=bucket, Key="a", Body=b"x")["VersionId"]
    s3.put_object(Bucket=bucket, Key="b", Body=b"x")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a", "VersionId": v1}, {"Key": "b"}]})
    by_key = {d["Key"]: d for d in out["Deleted"]}
    assert by_key["a"]["VersionId"] == v1 and "DeleteMarker" not in by_key["a"]
    assert by_key["b"]["DeleteMarker"] is True and by_key["b"]["DeleteMarkerVersionId"]


def test_object_lock_bucket_is_versioned(s3):
    s3.create_bucket(Bucket="locked-bucket", ObjectLockEnabledForBucket=True)
    assert s3.get_bucket_versioning(Bucket="locked-bucket")["Status"] == "Enabled"
    config = s3.get_object_lock_configuration(Bucket="locked-bucket")["ObjectLockConfiguration"]
    assert config["ObjectLockEnabled"] == "Enabled"
    with pytest.raises(ClientError) as e:
        s3.put_bucket_versioning(Bucket="locked-bucket", VersioningConfiguration={"Status": "Suspended"})
    assert error(e)["Code"] == "InvalidBucketState"
