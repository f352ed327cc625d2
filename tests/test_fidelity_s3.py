"""S3 behaviour third parties check: bodies that arrive unsigned or through SigV2 presigned
URLs are stored whole, and the smaller answers (statuses, headers, listings, validation)
match what S3 documents."""

from __future__ import annotations

import hashlib

import pytest
from botocore.config import Config

from s3_helpers import AUTH, fails, fetch, headers_of

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


# --- smaller deviations ---------------------------------------------------------------------

def test_put_bucket_policy_answers_204(s3, bucket):
    policy = ('{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Principal":"*",'
              '"Action":"s3:GetObject","Resource":"arn:aws:s3:::fidelity/*"}]}')
    s3.delete_public_access_block(Bucket=bucket)
    out = s3.put_bucket_policy(Bucket=bucket, Policy=policy)
    assert out["ResponseMetadata"]["HTTPStatusCode"] == 204


def test_get_and_head_count_the_object_tags(s3, bucket):
    s3.put_object(Bucket=bucket, Key="tagged", Body=b"x", Tagging="a=1&b=2")
    assert s3.head_object(Bucket=bucket, Key="tagged")["ResponseMetadata"]["HTTPHeaders"]["x-amz-tagging-count"] == "2"
    assert s3.get_object(Bucket=bucket, Key="tagged")["TagCount"] == 2
    s3.put_object(Bucket=bucket, Key="plain", Body=b"x")
    assert "x-amz-tagging-count" not in s3.head_object(Bucket=bucket, Key="plain")["ResponseMetadata"]["HTTPHeaders"]
    assert "TagCount" not in s3.get_object(Bucket=bucket, Key="plain")


def test_list_objects_v1_echoes_prefix_marker_and_delimiter_as_given(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="a b/c+d", Body=b"x")
    code, _, body = server.request(
        "GET", f"/{bucket}?prefix=a%20b%2F&marker=a%20b%2Fa&delimiter=%2B",
        headers={"Authorization": AUTH})
    assert code == 200
    assert b"<Prefix>a b/</Prefix>" in body and b"<Marker>a b/a</Marker>" in body
    assert b"<Delimiter>+</Delimiter>" in body
    code, _, body = server.request(
        "GET", f"/{bucket}?prefix=a%20b%2F&delimiter=%2B&encoding-type=url", headers={"Authorization": AUTH})
    assert b"<Prefix>a%20b/</Prefix>" in body and b"<EncodingType>url</EncodingType>" in body


def test_content_encoding_is_stored_and_returned_as_sent(s3, bucket):
    s3.put_object(Bucket=bucket, Key="z", Body=b"x", ContentEncoding="gzip")
    assert s3.head_object(Bucket=bucket, Key="z")["ContentEncoding"] == "gzip"
    assert s3.get_object(Bucket=bucket, Key="z")["ContentEncoding"] == "gzip"


@pytest.mark.parametrize("max_keys", ["-1", "abc", "1.5"])
def test_invalid_max_keys_is_invalid_argument(server, bucket, max_keys):
    for query in (f"max-keys={max_keys}", f"list-type=2&max-keys={max_keys}"):
        code, _, body = server.request("GET", f"/{bucket}?{query}", headers={"Authorization": AUTH})
        assert code == 400, body
        assert b"<Code>InvalidArgument</Code>" in body


def test_repeated_complete_multipart_upload_answers_the_object_etag(s3, bucket):
    upload = s3.create_multipart_upload(Bucket=bucket, Key="mp")["UploadId"]
    part = s3.upload_part(Bucket=bucket, Key="mp", UploadId=upload, PartNumber=1, Body=b"p" * 1024)
    parts = {"Parts": [{"PartNumber": 1, "ETag": part["ETag"]}]}
    first = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload=parts)
    again = s3.complete_multipart_upload(Bucket=bucket, Key="mp", UploadId=upload, MultipartUpload=parts)
    assert again["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert again["ETag"] == first["ETag"]


def test_list_object_versions_accepts_its_version_id_marker_for_every_key(s3, bucket):
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    for key in ("a", "b"):
        for body in (b"1", b"2"):
            s3.put_object(Bucket=bucket, Key=key, Body=body)
    everything = s3.list_object_versions(Bucket=bucket)["Versions"]
    seen = []
    kwargs = {}
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=1, **kwargs)
        seen += [(v["Key"], v["VersionId"]) for v in page.get("Versions", [])]
        if not page["IsTruncated"]:
            break
        kwargs = {"KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}
    assert seen == [(v["Key"], v["VersionId"]) for v in everything]
    for version in everything:
        page = s3.list_object_versions(Bucket=bucket, KeyMarker=version["Key"], VersionIdMarker=version["VersionId"])
        assert page["ResponseMetadata"]["HTTPStatusCode"] == 200


def test_part_number_reads_return_the_part_checksum_and_its_type(s3, bucket):
    upload = s3.create_multipart_upload(Bucket=bucket, Key="ck", ChecksumAlgorithm="SHA256")["UploadId"]
    body = b"c" * (5 * 1024 * 1024)
    part = s3.upload_part(Bucket=bucket, Key="ck", UploadId=upload, PartNumber=1, Body=body,
                          ChecksumAlgorithm="SHA256")
    s3.upload_part(Bucket=bucket, Key="ck", UploadId=upload, PartNumber=2, Body=b"tail", ChecksumAlgorithm="SHA256")
    parts = s3.list_parts(Bucket=bucket, Key="ck", UploadId=upload)["Parts"]
    s3.complete_multipart_upload(Bucket=bucket, Key="ck", UploadId=upload, MultipartUpload={"Parts": [
        {"PartNumber": p["PartNumber"], "ETag": p["ETag"], "ChecksumSHA256": p["ChecksumSHA256"]} for p in parts]})
    head = s3.head_object(Bucket=bucket, Key="ck", PartNumber=1, ChecksumMode="ENABLED")
    assert head["ChecksumSHA256"] == part["ChecksumSHA256"]
    assert head["ChecksumType"] == "FULL_OBJECT" or head["ChecksumType"] == "COMPOSITE"
    got = s3.get_object(Bucket=bucket, Key="ck", PartNumber=1, ChecksumMode="ENABLED")
    assert got["ChecksumSHA256"] == part["ChecksumSHA256"] and got["ChecksumType"] == head["ChecksumType"]
    assert got["PartsCount"] == 2


def test_lifecycle_rules_without_an_id_get_one(s3, bucket):
    rule = {"Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1}}
    s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]})
    [got] = s3.get_bucket_lifecycle_configuration(Bucket=bucket)["Rules"]
    assert len(got["ID"]) > 0


@pytest.mark.parametrize("rule, code", [
    ({"ID": "none", "Status": "Enabled", "Filter": {"Prefix": ""}}, "InvalidRequest"),
    ({"ID": "both", "Status": "Enabled", "Filter": {"Prefix": ""},
      "Expiration": {"Days": 1, "Date": "2030-01-01T00:00:00Z"}}, "MalformedXML"),
    ({"ID": "zero", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 0}}, "InvalidArgument"),
])
def test_lifecycle_rules_are_validated_as_s3_validates_them(s3, bucket, rule, code):
    fails(lambda: s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule]}),
          code, 400)


def test_lifecycle_rule_ids_must_be_unique(s3, bucket):
    rule = {"ID": "same", "Status": "Enabled", "Filter": {"Prefix": ""}, "Expiration": {"Days": 1}}
    fails(lambda: s3.put_bucket_lifecycle_configuration(Bucket=bucket, LifecycleConfiguration={"Rules": [rule, rule]}),
          "InvalidArgument", 400, "Rule ID must be unique. Found same ID for more than one rule")


def test_content_encoding_sent_beside_aws_chunked_is_kept_without_it(server, s3, bucket):
    body = b"5\r\nhello\r\n0\r\n\r\n"
    code, _, answer = server.request("PUT", f"/{bucket}/chunked", body, {
        "Authorization": AUTH, "Content-Encoding": "aws-chunked,gzip",
        "x-amz-content-sha256": "STREAMING-UNSIGNED-PAYLOAD-TRAILER", "x-amz-decoded-content-length": "5"})
    assert code == 200, answer
    got = s3.get_object(Bucket=bucket, Key="chunked")
    assert got["Body"].read() == b"hello"
    assert got["ContentEncoding"] == "gzip"


def test_list_object_versions_pages_through_null_versions_and_delete_markers(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"before versioning")
    s3.put_bucket_versioning(Bucket=bucket, VersioningConfiguration={"Status": "Enabled"})
    s3.put_object(Bucket=bucket, Key="a", Body=b"v1")
    s3.delete_object(Bucket=bucket, Key="a")
    s3.put_object(Bucket=bucket, Key="b", Body=b"v1")
    everything = s3.list_object_versions(Bucket=bucket)
    expected = sorted([(v["Key"], v["VersionId"]) for v in everything["Versions"] + everything["DeleteMarkers"]])
    seen = []
    kwargs = {}
    while True:
        page = s3.list_object_versions(Bucket=bucket, MaxKeys=1, **kwargs)
        seen += [(v["Key"], v["VersionId"]) for v in page.get("Versions", []) + page.get("DeleteMarkers", [])]
        if not page["IsTruncated"]:
            break
        kwargs = {"KeyMarker": page["NextKeyMarker"], "VersionIdMarker": page["NextVersionIdMarker"]}
    assert sorted(seen) == expected and len(seen) == 4
    assert ("a", "null") in seen
