"""--enforce-iam and S3 copies: CopyObject and UploadPartCopy need s3:PutObject on the
destination and s3:GetObject (s3:GetObjectVersion for a version) on the source, each decided
with its own bucket's policy; a denial names the source."""

from __future__ import annotations

import json

import pytest

from access_helpers import client, enforcing_server, user
from s3_helpers import fails

server = enforcing_server()


@pytest.fixture(autouse=True)
def clean(server):
    s3 = client(server, "s3")
    for name in ("src", "dst"):
        s3.create_bucket(Bucket=name)
    s3.put_object(Bucket="src", Key="k", Body=b"data")
    yield
    server.reset()


def allow(action, resource):
    return {"Effect": "Allow", "Action": action, "Resource": resource}


def denied(arn, action, resource):
    return (f'User: {arn} is not authorized to perform: {action} on resource: "{resource}" '
            f"because no identity-based policy allows the {action} action")


def test_a_copy_needs_read_on_its_source(server):
    arn, as_user = user(server, "alice", allow("s3:PutObject", "arn:aws:s3:::dst/*"))
    s3 = as_user("s3")
    fails(lambda: s3.copy_object(Bucket="dst", Key="c", CopySource="src/k"), "AccessDenied", 403,
          denied(arn, "s3:GetObject", "arn:aws:s3:::src/k"))
    _, as_bob = user(server, "bob", allow("s3:PutObject", "arn:aws:s3:::dst/*"),
                     allow("s3:GetObject", "arn:aws:s3:::src/*"))
    as_bob("s3").copy_object(Bucket="dst", Key="c", CopySource="src/k")
    assert client(server, "s3").get_object(Bucket="dst", Key="c")["Body"].read() == b"data"


def test_a_copy_needs_write_on_its_destination(server):
    arn, as_user = user(server, "alice", allow("s3:GetObject", "arn:aws:s3:::src/*"))
    fails(lambda: as_user("s3").copy_object(Bucket="dst", Key="c", CopySource="src/k"), "AccessDenied", 403,
          denied(arn, "s3:PutObject", "arn:aws:s3:::dst/c"))


def test_a_part_copy_needs_read_on_its_source(server):
    upload = client(server, "s3").create_multipart_upload(Bucket="dst", Key="m")["UploadId"]
    arn, as_user = user(server, "alice", allow("s3:PutObject", "arn:aws:s3:::dst/*"))
    fails(lambda: as_user("s3").upload_part_copy(Bucket="dst", Key="m", UploadId=upload, PartNumber=1,
                                                 CopySource="src/k"),
          "AccessDenied", 403, denied(arn, "s3:GetObject", "arn:aws:s3:::src/k"))


def test_a_source_bucket_policy_may_deny_or_let_another_account_read(server):
    s3 = client(server, "s3")
    s3.put_bucket_policy(Bucket="src", Policy=json.dumps({"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "s3:GetObject", "Resource": "arn:aws:s3:::src/secret"},
        {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111111111111:root"}, "Action": "s3:GetObject",
         "Resource": "arn:aws:s3:::src/*"}]}))
    s3.put_object(Bucket="src", Key="secret", Body=b"s")
    error = fails(lambda: s3.copy_object(Bucket="dst", Key="c", CopySource="src/secret"), "AccessDenied", 403)
    assert "explicit deny in a resource-based policy" in error["Message"]
    other = client(server, "s3", "111111111111")
    other.create_bucket(Bucket="theirs")
    other.copy_object(Bucket="theirs", Key="c", CopySource="src/k")
    fails(lambda: other.copy_object(Bucket="theirs", Key="d", CopySource="dst/none"), "AccessDenied", 403)
