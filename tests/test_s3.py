"""S3 black-box tests: buckets, objects, listing, checksums and aws-chunked bodies.

boto3 and the AWS CLI drive a real server; aws-chunked bodies (which boto3 never sends over
plain HTTP) are raw HTTP fixtures built here byte by byte.
"""

from __future__ import annotations

import base64
import hashlib
import json
import socket
import urllib.parse
import zlib

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

AUTH = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=" + "0" * 64)
SIG = "0" * 64


def crc32_b64(data: bytes) -> str:
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def md5_b64(data: bytes) -> str:
    return base64.b64encode(hashlib.md5(data).digest()).decode()


def error(exc: pytest.ExceptionInfo) -> dict:
    return exc.value.response["Error"]


def status(exc: pytest.ExceptionInfo) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="test-bucket")
    return "test-bucket"


# --- buckets ---------------------------------------------------------------------------

def test_create_bucket_then_list_and_head_show_it(s3):
    s3.create_bucket(Bucket="alpha-bucket")
    s3.create_bucket(Bucket="beta-bucket")
    listed = s3.list_buckets()
    assert [b["Name"] for b in listed["Buckets"]] == ["alpha-bucket", "beta-bucket"]
    assert len(listed["Owner"]["ID"]) == 64
    assert listed["Buckets"][0]["CreationDate"].year >= 2024
    head = s3.head_bucket(Bucket="alpha-bucket")
    assert head["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "us-east-1"


@pytest.mark.parametrize("name", ["ab", "Upper-Case", "a..b", "-leading", "192.168.5.4", "x" * 64])
def test_create_bucket_with_invalid_name_is_invalid_bucket_name(s3, name):
    with pytest.raises(ClientError) as e:
        s3.create_bucket(Bucket=name)
    assert error(e)["Code"] == "InvalidBucketName"
    assert error(e)["Message"] == "The specified bucket is not valid."
    assert status(e) == 400


def test_recreating_own_bucket_in_us_east_1_succeeds(s3, bucket):
    s3.create_bucket(Bucket=bucket)
    assert len(s3.list_buckets()["Buckets"]) == 1


def test_recreating_own_bucket_elsewhere_is_already_owned_by_you(client):
    eu = client("s3", region_name="eu-west-1")
    cfg = {"LocationConstraint": "eu-west-1"}
    eu.create_bucket(Bucket="eu-bucket", CreateBucketConfiguration=cfg)
    with pytest.raises(ClientError) as e:
        eu.create_bucket(Bucket="eu-bucket", CreateBucketConfiguration=cfg)
    assert error(e)["Code"] == "BucketAlreadyOwnedByYou"
    assert error(e)["BucketName"] == "eu-bucket"
    assert status(e) == 409
    assert eu.head_bucket(Bucket="eu-bucket")["ResponseMetadata"]["HTTPHeaders"]["x-amz-bucket-region"] == "eu-west-1"


def test_bucket_names_are_global_across_accounts(client):
    mine = client("s3", aws_access_key_id="111111111111")
    theirs = client("s3", aws_access_key_id="222222222222")
    mine.create_bucket(Bucket="shared-name")
    with pytest.raises(ClientError) as e:
        theirs.create_bucket(Bucket="shared-name")
    assert error(e)["Code"] == "BucketAlreadyExists"
    assert status(e) == 409
    assert theirs.list_buckets()["Buckets"] == []
    assert [b["Name"] for b in mine.list_buckets()["Buckets"]] == ["shared-name"]


def test_location_constraint_rules(client):
    use1 = client("s3")
    with pytest.raises(ClientError) as e:
        use1.create_bucket(Bucket="bad-lc", CreateBucketConfiguration={"LocationConstraint": "us-east-1"})
    assert error(e)["Code"] == "InvalidLocationConstraint"
    eu = client("s3", region_name="eu-west-1")
    with pytest.raises(ClientError) as e:
        eu.create_bucket(Bucket="no-lc")
    assert error(e)["Code"] == "IllegalLocationConstraintException"
    with pytest.raises(ClientError) as e:
        eu.create_bucket(Bucket="other-lc", CreateBucketConfiguration={"LocationConstraint": "us-west-2"})
    assert error(e)["Code"] == "IllegalLocationConstraintException"
    assert "us-west-2" in error(e)["Message"]


def test_head_missing_bucket_is_404_with_empty_body(s3, server):
    with pytest.raises(ClientError) as e:
        s3.head_bucket(Bucket="missing-bucket")
    assert status(e) == 404
    code, _, body = server.request("HEAD", "/missing-bucket", headers={"Authorization": AUTH})
    assert code == 404 and body == b""


def test_delete_bucket_errors_and_success(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert error(e)["Code"] == "BucketNotEmpty"
    assert status(e) == 409
    s3.delete_object(Bucket=bucket, Key="k")
    assert s3.delete_bucket(Bucket=bucket)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError) as e:
        s3.delete_bucket(Bucket=bucket)
    assert error(e)["Code"] == "NoSuchBucket"
    assert error(e)["Message"] == "The specified bucket does not exist"
    assert error(e)["BucketName"] == bucket
    assert status(e) == 404


def test_wrong_method_on_object_is_method_not_allowed(server, bucket):
    code, _, body = server.request("PATCH", f"/{bucket}/k", headers={"Authorization": AUTH})
    assert code == 405
    assert b"<Code>MethodNotAllowed</Code>" in body


def test_malformed_create_bucket_configuration_is_malformed_xml(server):
    code, _, body = server.request("PUT", "/xml-bucket", body=b"<CreateBucketConfiguration>",
                                   headers={"Authorization": AUTH})
    assert code == 400
    assert b"<Code>MalformedXML</Code>" in body


# --- objects ---------------------------------------------------------------------------

def test_put_object_then_get_returns_same_body_etag_and_headers(s3, bucket):
    body = b"hello world"
    put = s3.put_object(Bucket=bucket, Key="dir/file.txt", Body=body, ContentType="text/plain",
                        Metadata={"Color": "Blue"}, CacheControl="max-age=60", ContentDisposition="inline",
                        ContentLanguage="en", ContentEncoding="identity", Expires="Wed, 02 Dec 2026 17:00:00 GMT")
    etag = '"%s"' % hashlib.md5(body).hexdigest()
    assert put["ETag"] == etag
    got = s3.get_object(Bucket=bucket, Key="dir/file.txt")
    assert got["Body"].read() == body
    assert got["ETag"] == etag
    assert got["ContentType"] == "text/plain"
    assert got["ContentLength"] == len(body)
    assert got["Metadata"] == {"color": "Blue"}
    assert got["CacheControl"] == "max-age=60"
    assert got["ContentDisposition"] == "inline"
    assert got["ContentLanguage"] == "en"
    assert got["ContentEncoding"] == "identity"
    assert got["AcceptRanges"] == "bytes"
    assert got["LastModified"].year >= 2024
    assert got["ResponseMetadata"]["HTTPHeaders"]["expires"] == "Wed, 02 Dec 2026 17:00:00 GMT"


def test_default_content_type_is_binary_octet_stream(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    assert s3.head_object(Bucket=bucket, Key="k")["ContentType"] == "binary/octet-stream"


def test_head_object_returns_headers_without_body(s3, server, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"12345")
    head = s3.head_object(Bucket=bucket, Key="k")
    assert head["ContentLength"] == 5
    code, headers, body = server.request("HEAD", f"/{bucket}/k", headers={"Authorization": AUTH})
    assert code == 200 and body == b"" and headers["content-length"] == "5"


@pytest.mark.parametrize("key", ["a/b/c", "with space", "plus+sign", "percent%2Fslash", "ünïcödé/€", "trailing/", "a&b<c>", "?q=1#h"])
def test_keys_round_trip_exactly(s3, bucket, key):
    s3.put_object(Bucket=bucket, Key=key, Body=key.encode())
    assert s3.get_object(Bucket=bucket, Key=key)["Body"].read() == key.encode()
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]] == [key]


def test_replacing_an_object_serves_the_new_body(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"old")
    s3.put_object(Bucket=bucket, Key="k", Body=b"new body")
    assert s3.get_object(Bucket=bucket, Key="k")["Body"].read() == b"new body"
    assert s3.list_objects_v2(Bucket=bucket)["KeyCount"] == 1


def test_missing_key_is_no_such_key_and_missing_bucket_no_such_bucket(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket=bucket, Key="nope/x")
    assert error(e) == {"Code": "NoSuchKey", "Message": "The specified key does not exist.", "Key": "nope/x"}
    assert status(e) == 404
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket=bucket, Key="nope")
    assert status(e) == 404
    for call in (lambda: s3.get_object(Bucket="no-bucket", Key="k"),
                 lambda: s3.put_object(Bucket="no-bucket", Key="k", Body=b"x"),
                 lambda: s3.delete_object(Bucket="no-bucket", Key="k"),
                 lambda: s3.list_objects_v2(Bucket="no-bucket")):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)["Code"] == "NoSuchBucket"
        assert error(e)["BucketName"] == "no-bucket"


def test_delete_object_is_204_and_idempotent(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    for _ in range(2):
        assert s3.delete_object(Bucket=bucket, Key="k")["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError):
        s3.get_object(Bucket=bucket, Key="k")


def test_large_object_streams_intact(s3, bucket):
    body = bytes(range(256)) * 40000  # ~10 MiB
    s3.put_object(Bucket=bucket, Key="big", Body=body)
    got = s3.get_object(Bucket=bucket, Key="big")
    assert got["ContentLength"] == len(body)
    assert got["Body"].read() == body


def test_key_longer_than_1024_bytes_is_rejected(s3, bucket):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="k" * 1025, Body=b"x")
    assert error(e)["Code"] == "KeyTooLongError"


# --- digests and checksums ------------------------------------------------------------

def test_content_md5_is_validated(s3, bucket):
    s3.put_object(Bucket=bucket, Key="ok", Body=b"data", ContentMD5=md5_b64(b"data"))
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="bad", Body=b"data", ContentMD5=md5_b64(b"other"))
    assert error(e)["Code"] == "BadDigest"
    assert error(e)["Message"] == "The Content-MD5 you specified did not match what we received."
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket=bucket, Key="bad", Body=b"data", ContentMD5="not-base64!")
    assert error(e)["Code"] == "InvalidDigest"
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="bad")


def test_boto3_crc32_checksum_is_stored_and_returned_with_checksum_mode(s3, bucket):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"hello", ChecksumAlgorithm="CRC32")
    assert put["ChecksumCRC32"] == crc32_b64(b"hello")
    head = s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == crc32_b64(b"hello")
    got = s3.get_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == crc32_b64(b"hello")
    assert "ChecksumCRC32" not in s3.head_object(Bucket=bucket, Key="k")


@pytest.mark.parametrize("algorithm", ["SHA1", "SHA256"])  # CRC32C/CRC64NVME need awscrt in boto3
def test_each_checksum_algorithm_round_trips(s3, bucket, algorithm):
    put = s3.put_object(Bucket=bucket, Key="k", Body=b"payload", ChecksumAlgorithm=algorithm)
    value = put[f"Checksum{algorithm}"]
    assert s3.head_object(Bucket=bucket, Key="k", ChecksumMode="ENABLED")[f"Checksum{algorithm}"] == value


def test_wrong_checksum_header_is_bad_digest(server, bucket):
    headers = {"Authorization": AUTH, "x-amz-checksum-crc32": crc32_b64(b"other")}
    code, _, body = server.request("PUT", f"/{bucket}/k", body=b"hello", headers=headers)
    assert code == 400
    assert b"<Code>BadDigest</Code>" in body
    assert b"The CRC32 you specified did not match the calculated checksum." in body
    headers["x-amz-checksum-crc32"] = "!!"
    code, _, body = server.request("PUT", f"/{bucket}/k", body=b"hello", headers=headers)
    assert code == 400 and b"<Code>InvalidRequest</Code>" in body
    code, _, _ = server.request("GET", f"/{bucket}/k", headers={"Authorization": AUTH})
    assert code == 404


# --- aws-chunked fixtures --------------------------------------------------------------

def chunked(chunks: list[bytes], signed: bool, trailer: str | None = None, trailer_sig: bool = False) -> bytes:
    out = b""
    for c in chunks + [b""]:
        ext = f";chunk-signature={SIG}" if signed else ""
        out += f"{len(c):x}{ext}\r\n".encode() + c
        if c:
            out += b"\r\n"
    if trailer:
        out += trailer.encode() + b"\r\n"
        if trailer_sig:
            out += f"x-amz-trailer-signature:{SIG}\r\n".encode()
    out += b"\r\n"
    return out


def put_raw(server, bucket, key, body, content_sha256, decoded_len, **extra):
    headers = {"Authorization": AUTH, "x-amz-content-sha256": content_sha256,
               "Content-Encoding": "aws-chunked", "x-amz-decoded-content-length": str(decoded_len)}
    headers.update(extra)
    return server.request("PUT", f"/{bucket}/{key}", body=body, headers=headers)


PAYLOAD = b"a" * 9000 + b"tail"


def test_signed_chunked_body_is_stored_decoded(s3, server, bucket):
    body = chunked([PAYLOAD[:9000], PAYLOAD[9000:]], signed=True)
    code, headers, _ = put_raw(server, bucket, "signed", body, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", len(PAYLOAD))
    assert code == 200
    assert headers["etag"] == '"%s"' % hashlib.md5(PAYLOAD).hexdigest()
    got = s3.get_object(Bucket=bucket, Key="signed")
    assert got["Body"].read() == PAYLOAD
    assert "ContentEncoding" not in got


def test_unsigned_chunked_body_with_trailer_checksum_is_stored_and_checked(s3, server, bucket):
    trailer = f"x-amz-checksum-crc32:{crc32_b64(PAYLOAD)}"
    body = chunked([PAYLOAD], signed=False, trailer=trailer)
    code, headers, _ = put_raw(server, bucket, "trailer", body, "STREAMING-UNSIGNED-PAYLOAD-TRAILER",
                               len(PAYLOAD), **{"x-amz-trailer": "x-amz-checksum-crc32"})
    assert code == 200
    assert headers["x-amz-checksum-crc32"] == crc32_b64(PAYLOAD)
    assert s3.get_object(Bucket=bucket, Key="trailer")["Body"].read() == PAYLOAD
    assert s3.head_object(Bucket=bucket, Key="trailer", ChecksumMode="ENABLED")["ChecksumCRC32"] == crc32_b64(PAYLOAD)


def test_signed_chunked_body_with_trailer_is_stored(s3, server, bucket):
    trailer = f"x-amz-checksum-crc32:{crc32_b64(PAYLOAD)}"
    body = chunked([PAYLOAD[:9000], PAYLOAD[9000:]], signed=True, trailer=trailer, trailer_sig=True)
    code, headers, _ = put_raw(server, bucket, "signed-trailer", body, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER",
                               len(PAYLOAD), **{"x-amz-trailer": "x-amz-checksum-crc32"})
    assert code == 200
    assert headers["etag"] == '"%s"' % hashlib.md5(PAYLOAD).hexdigest()
    assert s3.get_object(Bucket=bucket, Key="signed-trailer")["Body"].read() == PAYLOAD


def test_chunked_trailer_with_wrong_checksum_is_bad_digest(server, bucket):
    body = chunked([PAYLOAD], signed=False, trailer=f"x-amz-checksum-crc32:{crc32_b64(b'x')}")
    code, _, resp = put_raw(server, bucket, "bad", body, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", len(PAYLOAD),
                            **{"x-amz-trailer": "x-amz-checksum-crc32"})
    assert code == 400 and b"<Code>BadDigest</Code>" in resp
    assert server.request("GET", f"/{bucket}/bad", headers={"Authorization": AUTH})[0] == 404


def test_chunked_body_missing_its_declared_trailer_is_malformed_trailer(server, bucket):
    body = chunked([PAYLOAD], signed=False)
    code, _, resp = put_raw(server, bucket, "bad", body, "STREAMING-UNSIGNED-PAYLOAD-TRAILER", len(PAYLOAD),
                            **{"x-amz-trailer": "x-amz-checksum-crc32"})
    assert code == 400 and b"<Code>MalformedTrailerError</Code>" in resp


def test_chunked_body_of_wrong_decoded_length_is_incomplete_body(server, bucket):
    body = chunked([PAYLOAD], signed=True)
    code, _, resp = put_raw(server, bucket, "bad", body, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", len(PAYLOAD) + 1)
    assert code == 400 and b"<Code>IncompleteBody</Code>" in resp


def test_chunked_body_with_broken_framing_is_rejected(server, bucket):
    code, _, resp = put_raw(server, bucket, "bad", b"zz\r\nhello\r\n0\r\n\r\n", "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", 5)
    assert code == 400 and b"<Code>IncompleteBody</Code>" in resp
    body = chunked([PAYLOAD], signed=True)[:-20]
    code, _, resp = put_raw(server, bucket, "bad", body, "STREAMING-AWS4-HMAC-SHA256-PAYLOAD", len(PAYLOAD))
    assert code == 400
    assert server.request("GET", f"/{bucket}/bad", headers={"Authorization": AUTH})[0] == 404


# --- listing ---------------------------------------------------------------------------

def put_keys(s3, bucket, keys):
    for k in keys:
        s3.put_object(Bucket=bucket, Key=k, Body=b"x")


def test_list_objects_v2_prefix_delimiter_and_common_prefixes(s3, bucket):
    put_keys(s3, bucket, ["a.txt", "dir/one", "dir/two", "dir/sub/three", "other/x", "z"])
    page = s3.list_objects_v2(Bucket=bucket, Delimiter="/")
    assert [o["Key"] for o in page["Contents"]] == ["a.txt", "z"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["dir/", "other/"]
    assert page["KeyCount"] == 4
    page = s3.list_objects_v2(Bucket=bucket, Prefix="dir/", Delimiter="/")
    assert [o["Key"] for o in page["Contents"]] == ["dir/one", "dir/two"]
    assert [p["Prefix"] for p in page["CommonPrefixes"]] == ["dir/sub/"]
    assert page["Prefix"] == "dir/"
    page = s3.list_objects_v2(Bucket=bucket, Prefix="dir/")
    assert [o["Key"] for o in page["Contents"]] == ["dir/one", "dir/sub/three", "dir/two"]
    obj = page["Contents"][0]
    assert obj["Size"] == 1 and obj["StorageClass"] == "STANDARD" and obj["ETag"].startswith('"')
    assert "Owner" not in obj
    assert "Owner" in s3.list_objects_v2(Bucket=bucket, FetchOwner=True)["Contents"][0]


def test_list_objects_v2_paginates_with_opaque_tokens(s3, bucket):
    keys = [f"k{i:03d}" for i in range(25)]
    put_keys(s3, bucket, keys)
    seen, token = [], None
    while True:
        kwargs = {"Bucket": bucket, "MaxKeys": 10}
        if token:
            kwargs["ContinuationToken"] = token
        page = s3.list_objects_v2(**kwargs)
        seen += [o["Key"] for o in page["Contents"]]
        if not page["IsTruncated"]:
            assert "NextContinuationToken" not in page
            break
        token = page["NextContinuationToken"]
        assert page["KeyCount"] == 10
    assert seen == keys
    paginator = s3.get_paginator("list_objects_v2")
    assert sum(p["KeyCount"] for p in paginator.paginate(Bucket=bucket, PaginationConfig={"PageSize": 7})) == 25


def test_common_prefixes_paginate_without_repeats(s3, bucket):
    put_keys(s3, bucket, [f"p{i}/{j}" for i in range(5) for j in range(3)] + ["top"])
    paginator = s3.get_paginator("list_objects_v2")
    prefixes, contents = [], []
    for page in paginator.paginate(Bucket=bucket, Delimiter="/", PaginationConfig={"PageSize": 2}):
        prefixes += [p["Prefix"] for p in page.get("CommonPrefixes", [])]
        contents += [o["Key"] for o in page.get("Contents", [])]
    assert prefixes == [f"p{i}/" for i in range(5)]
    assert contents == ["top"]


def test_list_objects_v2_start_after_max_keys_zero_and_bad_token(s3, bucket):
    put_keys(s3, bucket, ["a", "b", "c"])
    assert [o["Key"] for o in s3.list_objects_v2(Bucket=bucket, StartAfter="a")["Contents"]] == ["b", "c"]
    zero = s3.list_objects_v2(Bucket=bucket, MaxKeys=0)
    assert zero["KeyCount"] == 0 and "Contents" not in zero and zero["MaxKeys"] == 0
    with pytest.raises(ClientError) as e:
        s3.list_objects_v2(Bucket=bucket, ContinuationToken="garbage")
    assert error(e)["Code"] == "InvalidArgument"


def test_list_objects_v2_orders_keys_by_utf8_bytes(s3, bucket):
    keys = ["é", "z", "Z", "a", "\u4e2d", "a/b", "a-b"]
    put_keys(s3, bucket, keys)
    listed = [o["Key"] for o in s3.list_objects_v2(Bucket=bucket)["Contents"]]
    assert listed == sorted(keys, key=lambda k: k.encode())


def test_list_objects_v2_url_encoding(server, s3, bucket):
    put_keys(s3, bucket, ["a b+c/é"])
    assert s3.list_objects_v2(Bucket=bucket)["Contents"][0]["Key"] == "a b+c/é"
    page = s3.list_objects_v2(Bucket=bucket, EncodingType="url")
    assert urllib.parse.unquote_plus(page["Contents"][0]["Key"]) == "a b+c/é"
    code, _, body = server.request("GET", f"/{bucket}?list-type=2&encoding-type=url", headers={"Authorization": AUTH})
    assert code == 200
    assert b"<Key>a%20b%2Bc/%C3%A9</Key>" in body
    assert b'<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">' in body
    code, _, body = server.request("GET", f"/{bucket}?list-type=2&encoding-type=bogus", headers={"Authorization": AUTH})
    assert code == 400 and b"InvalidArgument" in body


# --- addressing ------------------------------------------------------------------------

@pytest.fixture
def localhost_resolves(monkeypatch):
    """Makes *.localhost resolve to 127.0.0.1 in this process (it does not on every host)."""
    real = socket.getaddrinfo

    def resolve(host, *args, **kwargs):
        if isinstance(host, str) and host.endswith(".localhost"):
            host = "127.0.0.1"
        return real(host, *args, **kwargs)

    monkeypatch.setattr(socket, "getaddrinfo", resolve)


def test_virtual_host_style_with_boto3(server, localhost_resolves):
    endpoint = f"http://s3.localhost:{server.port}"
    vs3 = boto3.client("s3", endpoint_url=endpoint, region_name="us-east-1", aws_access_key_id="test",
                       aws_secret_access_key="test", config=Config(s3={"addressing_style": "virtual"}))
    vs3.create_bucket(Bucket="vhost-bucket")
    vs3.put_object(Bucket="vhost-bucket", Key="dir/key.txt", Body=b"virtual")
    assert vs3.get_object(Bucket="vhost-bucket", Key="dir/key.txt")["Body"].read() == b"virtual"
    assert [o["Key"] for o in vs3.list_objects_v2(Bucket="vhost-bucket")["Contents"]] == ["dir/key.txt"]


def test_virtual_host_style_with_raw_host_header(server, s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"by host")
    code, _, body = server.request("GET", "/k", headers={"Host": f"{bucket}.s3.localhost:{server.port}", "Authorization": AUTH})
    assert code == 200 and body == b"by host"


# --- AWS CLI ---------------------------------------------------------------------------

def test_aws_cli_cp_ls_and_s3api(aws, tmp_path):
    src = tmp_path / "file.txt"
    src.write_bytes(b"from the cli\n")
    aws("s3api", "create-bucket", "--bucket", "cli-bucket")
    aws("s3", "cp", str(src), "s3://cli-bucket/path/file.txt")
    listing = aws("s3", "ls", "s3://cli-bucket/path/").stdout
    assert "file.txt" in listing
    dst = tmp_path / "back.txt"
    aws("s3", "cp", "s3://cli-bucket/path/file.txt", str(dst))
    assert dst.read_bytes() == b"from the cli\n"
    head = json.loads(aws("s3api", "head-object", "--bucket", "cli-bucket", "--key", "path/file.txt").stdout)
    assert head["ContentLength"] == 13
    listed = json.loads(aws("s3api", "list-objects-v2", "--bucket", "cli-bucket").stdout)
    assert [o["Key"] for o in listed["Contents"]] == ["path/file.txt"]
    missing = aws("s3api", "get-object", "--bucket", "cli-bucket", "--key", "nope", str(tmp_path / "x"), check=False)
    assert missing.returncode != 0 and "NoSuchKey" in missing.stderr
    assert "cli-bucket" in aws("s3", "ls").stdout


def test_aws_cli_sync_rm_and_multipart_cp(aws, tmp_path):
    src = tmp_path / "tree"
    (src / "sub").mkdir(parents=True)
    (src / "a.txt").write_bytes(b"a")
    (src / "sub" / "b.txt").write_bytes(b"b")
    big = tmp_path / "big.bin"
    big.write_bytes(bytes(range(256)) * (40 * 1024))  # 10 MiB: the CLI uploads it in parts
    aws("s3", "mb", "s3://sync-bucket")
    aws("s3", "sync", str(src), "s3://sync-bucket/tree")
    aws("s3", "cp", str(big), "s3://sync-bucket/big.bin")
    listing = aws("s3", "ls", "--recursive", "s3://sync-bucket").stdout
    assert "tree/a.txt" in listing and "tree/sub/b.txt" in listing and "big.bin" in listing
    head = json.loads(aws("s3api", "head-object", "--bucket", "sync-bucket", "--key", "big.bin").stdout)
    assert head["ETag"].endswith('-2"') and head["ContentLength"] == 10 * 1024 * 1024
    back = tmp_path / "back"
    aws("s3", "sync", "s3://sync-bucket/tree", str(back))
    assert (back / "sub" / "b.txt").read_bytes() == b"b"
    aws("s3", "cp", "s3://sync-bucket/big.bin", str(tmp_path / "big2.bin"))
    assert (tmp_path / "big2.bin").read_bytes() == big.read_bytes()
    aws("s3", "rm", "--recursive", "s3://sync-bucket/tree")
    aws("s3", "rb", "--force", "s3://sync-bucket")
    assert "sync-bucket" not in aws("s3", "ls").stdout
