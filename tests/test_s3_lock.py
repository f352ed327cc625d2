"""S3 Object Lock: lock configurations and default retention, per-version retention and legal
holds, and the deletions they refuse, judged against the server clock."""

from __future__ import annotations

import datetime

import pytest
from botocore.config import Config

from s3_helpers import AUTH, fails

PROTECTED = "Access Denied because object protected by object lock."
DAY = 86400


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="lock-bucket", ObjectLockEnabledForBucket=True)
    return "lock-bucket"


@pytest.fixture
def plain(s3):
    s3.create_bucket(Bucket="plain-bucket")
    return "plain-bucket"


def later(days: float = 1) -> datetime.datetime:
    return (datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=days)).replace(microsecond=0)


def put(s3, bucket, key="k", **kwargs) -> str:
    return s3.put_object(Bucket=bucket, Key=key, Body=b"data", **kwargs)["VersionId"]


def retain(s3, bucket, version, mode="GOVERNANCE", days=1, key="k", **kwargs):
    if version is not None:
        kwargs["VersionId"] = version
    s3.put_object_retention(Bucket=bucket, Key=key, Retention={"Mode": mode, "RetainUntilDate": later(days)},
                            **kwargs)


def test_lock_bucket_is_versioned_and_has_a_configuration_without_rule(s3, bucket):
    assert s3.get_bucket_versioning(Bucket=bucket)["Status"] == "Enabled"
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == {"ObjectLockEnabled": "Enabled"}
    fails(lambda: s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Suspended"}),
          "InvalidBucketState", 409)


def test_default_retention_round_trips_and_is_checked(s3, bucket):
    config = {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 2}}}
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=config)
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == config
    for bad in [
        {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1, "Years": 1}}},
        {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE"}}},
        {"ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "governance", "Days": 1}}},
        {"ObjectLockEnabled": "Disabled"},
    ]:
        fails(lambda: s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration=bad), "MalformedXML", 400)
    fails(lambda: s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Years": -1}}}),
        "InvalidArgument", 400)
    assert s3.get_object_lock_configuration(Bucket=bucket)["ObjectLockConfiguration"] == config


def test_lock_can_be_enabled_on_an_existing_bucket_only_while_versioned(s3, plain):
    config = {"ObjectLockEnabled": "Enabled"}
    fails(lambda: s3.get_object_lock_configuration(Bucket=plain), "ObjectLockConfigurationNotFoundError", 404)
    fails(lambda: s3.put_object_lock_configuration(Bucket=plain, ObjectLockConfiguration=config),
          "InvalidBucketState", 409, "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration")
    s3.put_bucket_versioning(Bucket=plain, VersioningConfiguration={"Status": "Suspended"})
    fails(lambda: s3.put_object_lock_configuration(Bucket=plain, ObjectLockConfiguration=config), "InvalidBucketState")
    s3.put_bucket_versioning(Bucket=plain, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object_lock_configuration(Bucket=plain, ObjectLockConfiguration=config)
    assert s3.get_object_lock_configuration(Bucket=plain)["ObjectLockConfiguration"] == config
    version = put(s3, plain, ObjectLockLegalHoldStatus="ON")
    assert s3.get_object_legal_hold(Bucket=plain, Key="k", VersionId=version)["LegalHold"] == {"Status": "ON"}
    fails(lambda: s3.put_bucket_versioning(Bucket=plain, VersioningConfiguration={"Status": "Suspended"}),
          "InvalidBucketState")


def test_lock_headers_are_stored_and_returned(s3, bucket):
    until = later(3)
    version = put(s3, bucket, ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=until,
                  ObjectLockLegalHoldStatus="OFF")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ObjectLockMode"] == "COMPLIANCE"
    assert head["ObjectLockRetainUntilDate"] == until
    assert head["ObjectLockLegalHoldStatus"] == "OFF"
    assert s3.get_object_retention(Bucket=bucket, Key="k", VersionId=version)["Retention"] == {
        "Mode": "COMPLIANCE", "RetainUntilDate": until}
    assert s3.get_object_legal_hold(Bucket=bucket, Key="k")["LegalHold"] == {"Status": "OFF"}


def test_lock_headers_are_checked_before_anything_is_stored(s3, bucket, plain):
    fails(lambda: put(s3, plain, ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later()),
          "InvalidRequest", 400, "Bucket is missing Object Lock Configuration")
    fails(lambda: put(s3, plain, ObjectLockLegalHoldStatus="ON"), "InvalidRequest")
    fails(lambda: put(s3, bucket, ObjectLockMode="GOVERNANCE"), "InvalidRequest", 400,
          "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied")
    fails(lambda: put(s3, bucket, ObjectLockRetainUntilDate=later()), "InvalidRequest")
    fails(lambda: put(s3, bucket, ObjectLockMode="FOREVER", ObjectLockRetainUntilDate=later()), "InvalidArgument")
    fails(lambda: put(s3, bucket, ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later(-1)),
          "InvalidArgument", 400, "The retain until date must be in the future!")
    fails(lambda: put(s3, bucket, ObjectLockLegalHoldStatus="MAYBE"), "InvalidArgument")
    for b in (bucket, plain):
        fails(lambda: s3.head_object(Bucket=b, Key="k"), "404")


def test_lock_headers_need_a_digest(server, s3, bucket):
    bare = server.client("s3", config=Config(retries={"max_attempts": 1}, request_checksum_calculation="when_required"))
    message = "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters"
    fails(lambda: put(bare, bucket, ObjectLockLegalHoldStatus="ON"), "InvalidRequest", 400, message)
    put(bare, bucket, key="unlocked")
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "GOVERNANCE", "Days": 1}}})
    fails(lambda: put(bare, bucket, key="defaulted"), "InvalidRequest", 400, message)
    put(s3, bucket, key="defaulted")
    code, _, body = server.request("PUT", f"/{bucket}/k?retention", headers={"Authorization": AUTH}, body=(
        b'<Retention xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><Mode>GOVERNANCE</Mode>'
        b'<RetainUntilDate>2099-01-01T00:00:00Z</RetainUntilDate></Retention>'))
    assert code == 400
    assert b"<Code>InvalidRequest</Code>" in body
    assert b"Missing required header for this request: Content-MD5" in body


def test_default_retention_applies_to_new_versions_only(server, s3, bucket):
    before = put(s3, bucket, key="before")
    s3.put_object_lock_configuration(Bucket=bucket, ObjectLockConfiguration={
        "ObjectLockEnabled": "Enabled", "Rule": {"DefaultRetention": {"Mode": "COMPLIANCE", "Days": 1}}})
    fails(lambda: s3.get_object_retention(Bucket=bucket, Key="before"), "NoSuchObjectLockConfiguration", 404,
          "The specified object does not have a ObjectLock configuration")
    start = datetime.datetime.now(datetime.timezone.utc)
    after = put(s3, bucket, key="after")
    retention = s3.get_object_retention(Bucket=bucket, Key="after")["Retention"]
    assert retention["Mode"] == "COMPLIANCE"
    assert start + datetime.timedelta(days=1, seconds=-5) < retention["RetainUntilDate"] < start + datetime.timedelta(days=1, seconds=60)
    explicit = put(s3, bucket, key="explicit", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later(5))
    assert s3.get_object_retention(Bucket=bucket, Key="explicit", VersionId=explicit)["Retention"]["Mode"] == "GOVERNANCE"
    s3.delete_object(Bucket=bucket, Key="before", VersionId=before)
    fails(lambda: s3.delete_object(Bucket=bucket, Key="after", VersionId=after), "AccessDenied", 403, PROTECTED)
    server.advance_clock(DAY + 60)
    s3.delete_object(Bucket=bucket, Key="after", VersionId=after)


def test_governance_retention_gives_way_to_bypass_and_compliance_never(s3, bucket):
    governed = put(s3, bucket, key="g", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later())
    compliant = put(s3, bucket, key="c", ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=later())
    fails(lambda: s3.delete_object(Bucket=bucket, Key="g", VersionId=governed), "AccessDenied", 403, PROTECTED)
    fails(lambda: s3.delete_object(Bucket=bucket, Key="c", VersionId=compliant, BypassGovernanceRetention=True),
          "AccessDenied", 403, PROTECTED)
    assert s3.delete_object(Bucket=bucket, Key="g", VersionId=governed, BypassGovernanceRetention=True)["VersionId"] == governed
    marker = s3.delete_object(Bucket=bucket, Key="c")
    assert marker["DeleteMarker"] is True
    assert s3.get_object(Bucket=bucket, Key="c", VersionId=compliant)["Body"].read() == b"data"
    s3.delete_object(Bucket=bucket, Key="c", VersionId=marker["VersionId"])
    fails(lambda: s3.delete_object(Bucket=bucket, Key="c", VersionId=compliant), "AccessDenied")


def test_overwriting_a_locked_key_makes_a_new_version(s3, bucket):
    locked = put(s3, bucket, ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=later())
    newer = s3.put_object(Bucket=bucket, Key="k", Body=b"newer")["VersionId"]
    assert newer != locked
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"newer"
    assert "ObjectLockMode" not in s3.head_object(Bucket=bucket, Key="k")
    s3.delete_object(Bucket=bucket, Key="k", VersionId=newer)
    assert s3.head_object(Bucket=bucket, Key="k")["VersionId"] == locked


def test_legal_hold_blocks_deletion_until_released(s3, bucket):
    version = put(s3, bucket)
    fails(lambda: s3.get_object_legal_hold(Bucket=bucket, Key="k"), "NoSuchObjectLockConfiguration", 404)
    s3.put_object_legal_hold(Bucket=bucket, Key="k", LegalHold={"Status": "ON"})
    assert s3.head_object(Bucket=bucket, Key="k")["ObjectLockLegalHoldStatus"] == "ON"
    fails(lambda: s3.delete_object(Bucket=bucket, Key="k", VersionId=version, BypassGovernanceRetention=True),
          "AccessDenied", 403, PROTECTED)
    fails(lambda: s3.put_object_legal_hold(Bucket=bucket, Key="k", LegalHold={"Status": "on"}), "MalformedXML")
    s3.put_object_legal_hold(Bucket=bucket, Key="k", VersionId=version, LegalHold={"Status": "OFF"})
    assert s3.get_object_legal_hold(Bucket=bucket, Key="k")["LegalHold"] == {"Status": "OFF"}
    s3.delete_object(Bucket=bucket, Key="k", VersionId=version)


def test_retention_can_grow_but_only_bypass_shortens_governance(s3, bucket):
    version = put(s3, bucket)
    retain(s3, bucket, version, days=2)
    retain(s3, bucket, version, days=3)
    fails(lambda: retain(s3, bucket, version, days=1), "AccessDenied", 403)
    retain(s3, bucket, version, days=1, BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=bucket, Key="k")["Retention"]["RetainUntilDate"] < later(1.5)
    retain(s3, bucket, version, mode="COMPLIANCE", days=2, BypassGovernanceRetention=True)
    fails(lambda: retain(s3, bucket, version, mode="COMPLIANCE", days=1, BypassGovernanceRetention=True), "AccessDenied")
    fails(lambda: retain(s3, bucket, version, mode="GOVERNANCE", days=5, BypassGovernanceRetention=True), "AccessDenied")
    retain(s3, bucket, version, mode="COMPLIANCE", days=4)
    assert s3.get_object_retention(Bucket=bucket, Key="k")["Retention"]["Mode"] == "COMPLIANCE"


def test_retention_requests_are_checked(server, s3, bucket, plain):
    version = put(s3, bucket)
    fails(lambda: retain(s3, bucket, version, days=-1), "InvalidArgument", 400,
          "The retain until date must be in the future!")
    fails(lambda: s3.put_object_retention(Bucket=bucket, Key="k", Retention={"Mode": "GOVERNANCE"}), "MalformedXML")
    fails(lambda: s3.put_object_retention(Bucket=bucket, Key="k",
                                          Retention={"Mode": "SOMETIMES", "RetainUntilDate": later()}), "MalformedXML")
    fails(lambda: retain(s3, bucket, None, key="missing"), "NoSuchKey", 404)
    fails(lambda: retain(s3, bucket, "x" * 32), "NoSuchVersion", 404)
    s3.put_object(Bucket=plain, Key="k", Body=b"x")
    for call in (lambda: s3.get_object_retention(Bucket=plain, Key="k"),
                 lambda: s3.get_object_legal_hold(Bucket=plain, Key="k"),
                 lambda: retain(s3, plain, None),
                 lambda: s3.put_object_legal_hold(Bucket=plain, Key="k", LegalHold={"Status": "ON"})):
        fails(call, "InvalidRequest", 400, "Bucket is missing Object Lock Configuration")
    fails(lambda: s3.delete_object(Bucket=plain, Key="k", BypassGovernanceRetention=True), "InvalidArgument", 400,
          "x-amz-bypass-governance-retention is only applicable to Object Lock enabled buckets.")


def test_retention_lapses_with_the_server_clock(server, s3, bucket):
    version = put(s3, bucket, ObjectLockMode="COMPLIANCE", ObjectLockRetainUntilDate=later(1))
    fails(lambda: s3.delete_object(Bucket=bucket, Key="k", VersionId=version), "AccessDenied")
    server.advance_clock(2 * DAY)
    assert s3.get_object_retention(Bucket=bucket, Key="k")["Retention"]["Mode"] == "COMPLIANCE"
    s3.delete_object(Bucket=bucket, Key="k", VersionId=version)
    fails(lambda: s3.head_object(Bucket=bucket, Key="k"), "404")


def test_delete_objects_reports_protected_versions_per_key(s3, bucket):
    locked = put(s3, bucket, key="locked", ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=later())
    free = put(s3, bucket, key="free")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [
        {"Key": "locked", "VersionId": locked}, {"Key": "free", "VersionId": free}, {"Key": "locked"}]})
    assert out["Errors"] == [{"Key": "locked", "VersionId": locked, "Code": "AccessDenied", "Message": PROTECTED}]
    assert {d["Key"] for d in out["Deleted"]} == {"free", "locked"}
    marker = next(d for d in out["Deleted"] if d["Key"] == "locked")
    assert marker["DeleteMarker"] is True
    out = s3.delete_objects(Bucket=bucket, BypassGovernanceRetention=True,
                            Delete={"Objects": [{"Key": "locked", "VersionId": locked}]})
    assert "Errors" not in out
    assert out["Deleted"] == [{"Key": "locked", "VersionId": locked}]


def test_copies_and_multipart_uploads_take_the_requested_lock(s3, bucket, plain):
    s3.put_object(Bucket=plain, Key="src", Body=b"source")
    until = later(2)
    copied = s3.copy_object(Bucket=bucket, Key="copy", CopySource={"Bucket": plain, "Key": "src"},
                            ObjectLockMode="GOVERNANCE", ObjectLockRetainUntilDate=until,
                            ObjectLockLegalHoldStatus="ON")["VersionId"]
    assert s3.get_object_retention(Bucket=bucket, Key="copy", VersionId=copied)["Retention"]["RetainUntilDate"] == until
    assert s3.get_object_legal_hold(Bucket=bucket, Key="copy")["LegalHold"] == {"Status": "ON"}
    recopied = s3.copy_object(Bucket=bucket, Key="recopy", CopySource={"Bucket": bucket, "Key": "copy"})["VersionId"]
    fails(lambda: s3.get_object_legal_hold(Bucket=bucket, Key="recopy", VersionId=recopied), "NoSuchObjectLockConfiguration")
    fails(lambda: s3.copy_object(Bucket=plain, Key="copy", CopySource={"Bucket": plain, "Key": "src"},
                                 ObjectLockLegalHoldStatus="ON"), "InvalidRequest")
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp", ObjectLockMode="COMPLIANCE",
                                        ObjectLockRetainUntilDate=until)["UploadId"]
    etag = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"part")["ETag"]
    version = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload,
                                           MultipartUpload={"Parts": [{"ETag": etag, "PartNumber": 1}]})["VersionId"]
    fails(lambda: s3.delete_object(Bucket=bucket, Key="mp", VersionId=version, BypassGovernanceRetention=True),
          "AccessDenied")
    fails(lambda: s3.create_multipart_upload(Bucket=plain, Key="mp", ObjectLockLegalHoldStatus="ON"), "InvalidRequest")


def test_governance_becomes_compliance_only_with_the_bypass(s3, bucket):
    version = put(s3, bucket)
    retain(s3, bucket, version, "GOVERNANCE", days=2)
    fails(lambda: retain(s3, bucket, version, "COMPLIANCE", days=2), "AccessDenied", 403, PROTECTED)
    retain(s3, bucket, version, "GOVERNANCE", days=3)
    retain(s3, bucket, version, "COMPLIANCE", days=3, BypassGovernanceRetention=True)
    assert s3.get_object_retention(Bucket=bucket, Key="k", VersionId=version)["Retention"]["Mode"] == "COMPLIANCE"
