"""S3 behaviour third parties check: bodies that arrive unsigned or through SigV2 presigned
URLs are stored whole, and the smaller answers (statuses, headers, listings, validation)
match what S3 documents."""

from __future__ import annotations

import hashlib

import pytest
from botocore.config import Config

from s3_helpers import fetch, headers_of

EMPTY_MD5 = "d41d8cd98f00b204e9800998ecf8427e"


@pytest.fixture
def s3(client):
    return client("s3", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="fidelity")
    return "fidelity"


def test_unsigned_put_stores_the_body_it_sent(server, s3, bucket):
    body = b"sent without an Authorization header"
    code, headers, _ = server.request("PUT", f"/{bucket}/anon.txt", body)
    assert code == 200
    assert headers["etag"] == f'"{hashlib.md5(body).hexdigest()}"' != f'"{EMPTY_MD5}"'
    assert s3.get_object(Bucket=bucket, Key="anon.txt")["Body"].read() == body


def test_unsigned_post_of_a_form_still_reaches_the_query_protocol(server):
    form = b"Action=GetCallerIdentity&Version=2011-06-15"
    code, _, answer = server.request("POST", "/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 200 and b"<GetCallerIdentityResult>" in answer


def test_sigv2_presigned_put_stores_the_body_it_sent(client, s3, bucket):
    v2 = client("s3", config=Config(signature_version="s3", retries={"max_attempts": 1}))
    url = v2.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "v2.bin"}, ExpiresIn=300)
    assert "AWSAccessKeyId=" in url and "Signature=" in url
    body = bytes(range(256)) * 64
    code, headers, _ = fetch(url, "PUT", body)
    assert code == 200
    assert headers["etag"] == f'"{hashlib.md5(body).hexdigest()}"'
    assert s3.get_object(Bucket=bucket, Key="v2.bin")["Body"].read() == body
    get_url = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "v2.bin"}, ExpiresIn=300)
    code, _, fetched = fetch(get_url)
    assert code == 200 and fetched == body


def test_sigv2_presigned_post_of_a_form_body_reaches_s3(client, s3, bucket):
    v2 = client("s3", config=Config(signature_version="s3", retries={"max_attempts": 1}))
    url = v2.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "form.txt"}, ExpiresIn=300)
    body = b"Action=ListQueues&Version=2012-11-05"
    code, _, _ = fetch(url, "PUT", body, {"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 200
    got = s3.get_object(Bucket=bucket, Key="form.txt")
    assert got["Body"].read() == body
    assert got["ContentType"] == "application/x-www-form-urlencoded"


RULE = {"ID": "expire", "Status": "Enabled", "Filter": {"Prefix": "logs/"}, "Expiration": {"Days": 7}}


def test_lifecycle_answers_the_default_transition_minimum_object_size(s3, bucket):
    put = s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [RULE]})
    assert put["TransitionDefaultMinimumObjectSize"] == "all_storage_classes_128K"
    assert headers_of(put)["x-amz-transition-default-minimum-object-size"] == "all_storage_classes_128K"
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert got["TransitionDefaultMinimumObjectSize"] == "all_storage_classes_128K"
    assert got["Rules"] == [RULE]


def test_lifecycle_keeps_the_transition_minimum_object_size_it_was_given(s3, bucket):
    put = s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [RULE]},
                                                TransitionDefaultMinimumObjectSize="varies_by_storage_class")
    assert put["TransitionDefaultMinimumObjectSize"] == "varies_by_storage_class"
    got = s3.get_bucket_lifecycle_configuration(Bucket=bucket)
    assert got["TransitionDefaultMinimumObjectSize"] == "varies_by_storage_class"
