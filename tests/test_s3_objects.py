"""S3 object operations beyond Put/Get: ranges, conditional requests and writes, CopyObject,
DeleteObjects, ListObjects v1, object tagging, GetObjectAttributes, storage classes."""

from __future__ import annotations

import datetime
import hashlib

import pytest
from botocore.exceptions import ClientError

from s3_helpers import AUTH, error, headers_of, status

BODY = bytes(range(256)) * 4  # 1024 bytes


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="obj-bucket")
    return "obj-bucket"


@pytest.fixture
def obj(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=BODY)
    return "k"


# --- ranges ----------------------------------------------------------------------------

@pytest.mark.parametrize("header,first,last", [
    ("bytes=0-9", 0, 9), ("bytes=1000-", 1000, 1023), ("bytes=-24", 1000, 1023),
    ("bytes=1020-5000", 1020, 1023), ("bytes=-5000", 0, 1023)])
def test_range_get_returns_206_with_content_range(s3, bucket, obj, header, first, last):
    got = s3.get_object(Bucket=bucket, Key=obj, Range=header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["ContentRange"] == f"bytes {first}-{last}/1024"
    assert got["ContentLength"] == last - first + 1
    assert got["Body"].read() == BODY[first:last + 1]


def test_range_on_a_large_file_blob_seeks(s3, bucket):
    body = bytes(range(256)) * 1024  # 256 KiB: stored in a file
    s3.put_object(Bucket=bucket, Key="big", Body=body)
    got = s3.get_object(Bucket=bucket, Key="big", Range="bytes=100000-100099")
    assert got["Body"].read() == body[100000:100100]


@pytest.mark.parametrize("header", ["bytes=1024-", "bytes=5000-6000", "bytes=-0"])
def test_unsatisfiable_range_is_invalid_range_416(s3, server, bucket, obj, header):
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, Range=header)
    assert error(e)["Code"] == "InvalidRange"
    assert error(e)["Message"] == "The requested range is not satisfiable"
    assert error(e)["ActualObjectSize"] == "1024"
    assert error(e)["RangeRequested"] == header
    assert status(e) == 416
    code, headers, _ = server.request("GET", f"/{bucket}/{obj}", headers={"Authorization": AUTH, "Range": header})
    assert code == 416 and headers["content-range"] == "bytes */1024"


@pytest.mark.parametrize("header", ["bytes=0-1,5-6", "items=0-5", "bytes=9-2"])
def test_ranges_s3_does_not_take_serve_the_whole_object(s3, bucket, obj, header):
    got = s3.get_object(Bucket=bucket, Key=obj, Range=header)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 200
    assert got["Body"].read() == BODY


def test_range_get_never_returns_the_whole_object_checksum(s3, bucket):
    s3.put_object(Bucket=bucket, Key="c", Body=BODY, ChecksumAlgorithm="SHA256")
    got = s3.get_object(Bucket=bucket, Key="c", Range="bytes=0-9", ChecksumMode="ENABLED")
    assert "ChecksumSHA256" not in got
    assert got["Body"].read() == BODY[:10]
    assert "ChecksumSHA256" in s3.get_object(Bucket=bucket, Key="c", ChecksumMode="ENABLED")


def test_part_number_of_a_simple_object_is_the_whole_object(s3, bucket, obj):
    got = s3.get_object(Bucket=bucket, Key=obj, PartNumber=1)
    assert got["ResponseMetadata"]["HTTPStatusCode"] == 206
    assert got["Body"].read() == BODY
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, PartNumber=2)
    assert error(e)["Code"] == "InvalidPartNumber" and status(e) == 416


def test_range_and_part_number_together_are_invalid(s3, bucket, obj):
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, PartNumber=1, Range="bytes=0-1")
    assert error(e)["Code"] == "InvalidRequest"


# --- conditional requests --------------------------------------------------------------

def test_if_match_and_if_none_match(s3, bucket, obj):
    etag = s3.head_object(Bucket=bucket, Key=obj)["ETag"]
    assert s3.get_object(Bucket=bucket, Key=obj, IfMatch=etag)["Body"].read() == BODY
    assert s3.get_object(Bucket=bucket, Key=obj, IfMatch=etag.strip('"'))["ETag"] == etag
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfMatch='"0000"')
    assert error(e)["Code"] == "PreconditionFailed"
    assert error(e)["Condition"] == "If-Match"
    assert error(e)["Message"] == "At least one of the pre-conditions you specified did not hold"
    assert status(e) == 412
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfNoneMatch=etag)
    assert status(e) == 304
    assert error(e)["Code"] == "304"
    assert headers_of(e.value.response)["etag"] == etag
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key=obj, IfNoneMatch=etag)
    assert status(e) == 304
    assert s3.get_object(Bucket=bucket, Key=obj, IfNoneMatch='"other"')["Body"].read() == BODY


def test_304_has_no_body(s3, server, bucket, obj):
    etag = s3.head_object(Bucket=bucket, Key=obj)["ETag"]
    code, headers, body = server.request("GET", f"/{bucket}/{obj}", headers={"Authorization": AUTH, "If-None-Match": etag})
    assert code == 304 and body == b""
    assert headers["etag"] == etag and "last-modified" in headers


def test_modified_since_conditions(s3, bucket, obj):
    modified = s3.head_object(Bucket=bucket, Key=obj)["LastModified"]
    past = modified - datetime.timedelta(days=1)
    future = modified + datetime.timedelta(days=1)
    assert s3.get_object(Bucket=bucket, Key=obj, IfModifiedSince=past)["Body"].read() == BODY
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfModifiedSince=future)
    assert status(e) == 304
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfModifiedSince=modified)
    assert status(e) == 304
    assert s3.get_object(Bucket=bucket, Key=obj, IfUnmodifiedSince=future)["Body"].read() == BODY
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfUnmodifiedSince=past)
    assert status(e) == 412 and error(e)["Condition"] == "If-Unmodified-Since"


def test_condition_precedence_follows_rfc_7232(s3, bucket, obj):
    etag = s3.head_object(Bucket=bucket, Key=obj)["ETag"]
    modified = s3.head_object(Bucket=bucket, Key=obj)["LastModified"]
    past = modified - datetime.timedelta(days=1)
    # If-Match true wins over If-Unmodified-Since false.
    assert s3.get_object(Bucket=bucket, Key=obj, IfMatch=etag, IfUnmodifiedSince=past)["ETag"] == etag
    # If-None-Match false (the ETag matches) answers 304 even though If-Modified-Since is true.
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, IfNoneMatch=etag, IfModifiedSince=past)
    assert status(e) == 304


def test_put_if_none_match_star_refuses_to_overwrite(s3, bucket):
    s3.put_object(Bucket=bucket, Key="once", Body=b"first", IfNoneMatch="*")
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="once", Body=b"second", IfNoneMatch="*")
    assert error(e)["Code"] == "PreconditionFailed" and status(e) == 412
    assert error(e)["Condition"] == "If-None-Match"
    assert s3.get_object(Bucket=bucket, Key="once")["Body"].read() == b"first"


def test_put_if_match_needs_the_current_etag(s3, bucket):
    etag = s3.put_object(Bucket=bucket, Key="m", Body=b"v1")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="m", Body=b"v2", IfMatch='"nope"')
    assert status(e) == 412
    s3.put_object(Bucket=bucket, Key="m", Body=b"v2", IfMatch=etag)
    assert s3.get_object(Bucket=bucket, Key="m")["Body"].read() == b"v2"
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="absent", Body=b"x", IfMatch=etag)
    assert error(e)["Code"] == "NoSuchKey"


def test_put_if_none_match_other_than_star_is_not_implemented(server, bucket, s3):
    code, _, body = server.request("PUT", f"/{bucket}/k2", body=b"x",
                                   headers={"Authorization": AUTH, "If-None-Match": '"abc"'})
    assert code == 501 and b"<Code>NotImplemented</Code>" in body


# --- content headers and storage class -------------------------------------------------

def test_storage_class_is_stored_listed_and_headed(s3, bucket):
    s3.put_object(Bucket=bucket, Key="ia", Body=b"x", StorageClass="STANDARD_IA")
    s3.put_object(Bucket=bucket, Key="std", Body=b"x")
    assert s3.head_object(Bucket=bucket, Key="ia")["StorageClass"] == "STANDARD_IA"
    assert "StorageClass" not in s3.head_object(Bucket=bucket, Key="std")
    listed = {o["Key"]: o["StorageClass"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]}
    assert listed == {"ia": "STANDARD_IA", "std": "STANDARD"}
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="bad", Body=b"x", StorageClass="FANCY")
    assert error(e)["Code"] == "InvalidStorageClass"


def test_response_header_overrides(s3, bucket, obj):
    got = s3.get_object(Bucket=bucket, Key=obj, ResponseContentType="text/csv",
                        ResponseContentDisposition="attachment; filename=x.csv", ResponseCacheControl="no-cache")
    assert got["ContentType"] == "text/csv"
    assert got["ContentDisposition"] == "attachment; filename=x.csv"
    assert got["CacheControl"] == "no-cache"


def test_server_side_encryption_is_aes256_by_default(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="e", Body=b"x")
    assert put["ServerSideEncryption"] == "AES256"
    assert s3.head_object(Bucket=bucket, Key="e")["ServerSideEncryption"] == "AES256"


# --- CopyObject ------------------------------------------------------------------------

def test_copy_object_copies_body_and_metadata(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"copy me", ContentType="text/plain", Metadata={"a": "1"})
    s3.create_bucket(Bucket="other-bucket")
    out = s3.copy_object(Bucket="other-bucket", Key="dst", CopySource={"Bucket": bucket, "Key": "src"})
    assert out["CopyObjectResult"]["ETag"] == '"%s"' % hashlib.md5(b"copy me").hexdigest()
    assert out["CopyObjectResult"]["LastModified"].year >= 2024
    got = s3.get_object(Bucket="other-bucket", Key="dst")
    assert got["Body"].read() == b"copy me"
    assert got["ContentType"] == "text/plain"
    assert got["Metadata"] == {"a": "1"}


def test_copy_object_replace_directive_takes_new_metadata(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x", ContentType="text/plain", Metadata={"a": "1"})
    s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src", MetadataDirective="REPLACE",
                   Metadata={"b": "2"}, ContentType="application/json")
    head = s3.head_object(Bucket=bucket, Key="dst")
    assert head["Metadata"] == {"b": "2"} and head["ContentType"] == "application/json"


def test_copy_object_onto_itself_needs_a_change(s3, bucket):
    s3.put_object(Bucket=bucket, Key="self", Body=b"x", Metadata={"a": "1"})
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="self", CopySource=f"{bucket}/self")
    assert error(e)["Code"] == "InvalidRequest"
    assert "copy an object to itself" in error(e)["Message"]
    s3.copy_object(Bucket=bucket, Key="self", CopySource=f"{bucket}/self", MetadataDirective="REPLACE",
                   Metadata={"a": "2"})
    assert s3.head_object(Bucket=bucket, Key="self")["Metadata"] == {"a": "2"}


def test_copy_object_errors(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/missing")
    assert error(e)["Code"] == "NoSuchKey"
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource="no-such-bucket-x/k")
    assert error(e)["Code"] == "NoSuchBucket"
    s3.put_object(Bucket=bucket, Key="src", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src", CopySourceIfMatch='"nope"')
    assert status(e) == 412
    etag = s3.head_object(Bucket=bucket, Key="src")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src", CopySourceIfNoneMatch=etag)
    assert status(e) == 412
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket=bucket, Key="dst", CopySource=f"{bucket}/src", MetadataDirective="MERGE")
    assert error(e)["Code"] == "InvalidArgument"


def test_copy_of_a_large_object_is_intact(s3, bucket):
    body = bytes(range(256)) * 8192  # 2 MiB
    s3.put_object(Bucket=bucket, Key="big", Body=body)
    s3.copy_object(Bucket=bucket, Key="big2", CopySource=f"{bucket}/big")
    assert s3.get_object(Bucket=bucket, Key="big2")["Body"].read() == body


def test_copy_tagging_directive(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"x", Tagging="a=1")
    s3.copy_object(Bucket=bucket, Key="copied", CopySource=f"{bucket}/src")
    assert s3.get_object_tagging(Bucket=bucket, Key="copied")["TagSet"] == [{"Key": "a", "Value": "1"}]
    s3.copy_object(Bucket=bucket, Key="replaced", CopySource=f"{bucket}/src", TaggingDirective="REPLACE", Tagging="b=2")
    assert s3.get_object_tagging(Bucket=bucket, Key="replaced")["TagSet"] == [{"Key": "b", "Value": "2"}]


# --- DeleteObjects ---------------------------------------------------------------------

def test_delete_objects_reports_each_key(s3, bucket):
    for k in ["a", "b", "c"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}, {"Key": "b"}, {"Key": "never"}]})
    assert sorted(d["Key"] for d in out["Deleted"]) == ["a", "b", "never"]
    assert "Errors" not in out
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == ["c"]


def test_delete_objects_quiet_returns_only_errors(s3, bucket):
    s3.put_object(Bucket=bucket, Key="a", Body=b"x")
    out = s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": "a"}], "Quiet": True})
    assert "Deleted" not in out and "Errors" not in out
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 0


def test_delete_objects_needs_content_md5_and_at_most_1000_keys(server, s3, bucket):
    xml = b"<Delete><Object><Key>a</Key></Object></Delete>"
    code, _, body = server.request("POST", f"/{bucket}?delete", body=xml, headers={"Authorization": AUTH})
    assert code == 400 and b"Content-MD5" in body
    with pytest.raises(ClientError) as e:
        s3.delete_objects(Bucket=bucket, Delete={"Objects": [{"Key": f"k{i}"} for i in range(1001)]})
    assert error(e)["Code"] == "MalformedXML"


# --- ListObjects v1 --------------------------------------------------------------------

def test_list_objects_v1_marker_pagination(s3, bucket):
    keys = [f"k{i:02d}" for i in range(12)]
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    page = s3.list_objects(Bucket=bucket, MaxKeys=5)
    assert [o["Key"] for o in page["Contents"]] == keys[:5]
    assert page["IsTruncated"] is True and "NextMarker" not in page
    assert "Owner" in page["Contents"][0]
    page = s3.list_objects(Bucket=bucket, Marker="k04", MaxKeys=5)
    assert [o["Key"] for o in page["Contents"]] == keys[5:10]
    assert page["Marker"] == "k04"
    seen = [o["Key"] for p in s3.get_paginator("list_objects").paginate(Bucket=bucket, PaginationConfig={"PageSize": 4})
            for o in p["Contents"]]
    assert seen == keys


def test_list_objects_v1_delimiter_gives_next_marker(s3, bucket):
    for k in ["a/1", "a/2", "b/1", "c", "d/1"]:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")
    page = s3.list_objects(Bucket=bucket, Delimiter="/", MaxKeys=2)
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["a/", "b/"]
    assert page["IsTruncated"] and page["NextMarker"] == "b/"
    page = s3.list_objects(Bucket=bucket, Delimiter="/", Marker="b/")
    assert [o["Key"] for o in page["Contents"]] == ["c"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["d/"]


# --- tagging ---------------------------------------------------------------------------

def test_object_tagging_put_get_delete(s3, bucket, obj):
    assert s3.get_object_tagging(Bucket=bucket, Key=obj)["TagSet"] == []
    tags = [{"Key": "env", "Value": "dev"}, {"Key": "team", "Value": "core"}]
    s3.put_object_tagging(Bucket=bucket, Key=obj, Tagging={"TagSet": tags})
    assert s3.get_object_tagging(Bucket=bucket, Key=obj)["TagSet"] == tags
    assert s3.get_object(Bucket=bucket, Key=obj)["TagCount"] == 2
    assert s3.delete_object_tagging(Bucket=bucket, Key=obj)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert s3.get_object_tagging(Bucket=bucket, Key=obj)["TagSet"] == []
    assert "TagCount" not in s3.get_object(Bucket=bucket, Key=obj)


def test_tagging_header_on_put(s3, bucket):
    s3.put_object(Bucket=bucket, Key="t", Body=b"x", Tagging="a=1&b=two%20words")
    assert s3.get_object_tagging(Bucket=bucket, Key="t")["TagSet"] == [
        {"Key": "a", "Value": "1"}, {"Key": "b", "Value": "two words"}]


def test_invalid_tags_are_invalid_tag(s3, bucket, obj):
    too_many = [{"Key": f"k{i}", "Value": "v"} for i in range(11)]
    for tag_set in [too_many, [{"Key": "a", "Value": "1"}, {"Key": "a", "Value": "2"}],
                    [{"Key": "k" * 129, "Value": "v"}], [{"Key": "aws:x", "Value": "v"}]]:
        with pytest.raises(ClientError) as e:
            s3.put_object_tagging(Bucket=bucket, Key=obj, Tagging={"TagSet": tag_set})
        assert error(e)["Code"] == "InvalidTag" and status(e) == 400
    with pytest.raises(ClientError) as e:
        s3.get_object_tagging(Bucket=bucket, Key="missing")
    assert error(e)["Code"] == "NoSuchKey"


# --- GetObjectAttributes ---------------------------------------------------------------

def test_get_object_attributes(s3, bucket):
    s3.put_object(Bucket=bucket, Key="attr", Body=BODY, ChecksumAlgorithm="SHA256", StorageClass="STANDARD_IA")
    out = s3.get_object_attributes(Bucket=bucket, Key="attr",
                                   ObjectAttributes=["ETag", "Checksum", "ObjectSize", "StorageClass", "ObjectParts"])
    assert out["ETag"] == hashlib.md5(BODY).hexdigest()
    assert out["ObjectSize"] == 1024
    assert out["StorageClass"] == "STANDARD_IA"
    assert "ChecksumSHA256" in out["Checksum"]
    assert "ObjectParts" not in out
    assert out["LastModified"].year >= 2024
    with pytest.raises(ClientError) as e:
        s3.get_object_attributes(Bucket=bucket, Key="missing", ObjectAttributes=["ETag"])
    assert error(e)["Code"] == "NoSuchKey"


def test_put_larger_than_5_gib_is_entity_too_large(server, bucket):
    import socket
    with socket.create_connection(("127.0.0.1", server.port), timeout=10) as sock:
        sock.sendall((f"PUT /{bucket}/huge HTTP/1.1\r\nHost: 127.0.0.1\r\nAuthorization: {AUTH}\r\n"
                      f"Content-Length: {5 * 1024 ** 3 + 1}\r\n\r\n").encode())
        reply = sock.recv(65536)
    assert reply.startswith(b"HTTP/1.1 400")
    assert b"<Code>EntityTooLarge</Code>" in reply


def test_expected_bucket_owner_must_match(s3, bucket, obj):
    assert s3.head_object(Bucket=bucket, Key=obj, ExpectedBucketOwner="000000000000")["ContentLength"] == 1024
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key=obj, ExpectedBucketOwner="111111111111")
    assert status(e) == 403
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key=obj, ExpectedBucketOwner="111111111111")
    assert error(e)["Code"] == "AccessDenied"
