"""S3 multipart uploads: create, upload parts (and copies), complete with AWS's checks, abort,
list parts and uploads, and boto3's transfer manager end to end."""

from __future__ import annotations

import hashlib
import io

import pytest
from boto3.s3.transfer import TransferConfig
from botocore.exceptions import ClientError

from s3_helpers import error, status

MIB = 1024 * 1024
PART = bytes(range(256)) * (5 * MIB // 256)  # exactly 5 MiB


@pytest.fixture
def s3(client):
    return client("s3")


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="mp-bucket")
    return "mp-bucket"


def start(s3, bucket, key="obj", **kwargs):
    return s3.create_multipart_upload(Bucket=bucket, Key=key, **kwargs)["UploadId"]


def multipart_etag(parts: list[bytes]) -> str:
    md5s = b"".join(hashlib.md5(p).digest() for p in parts)
    return '"%s-%d"' % (hashlib.md5(md5s).hexdigest(), len(parts))


def test_complete_concatenates_parts_with_md5_of_md5s_etag(s3, bucket):
    upload_id = start(s3, bucket, ContentType="text/plain", Metadata={"m": "1"})
    tail = b"the end"
    e1 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=PART)["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=2, Body=tail)["ETag"]
    assert e1 == '"%s"' % hashlib.md5(PART).hexdigest()
    done = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert done["ETag"] == multipart_etag([PART, tail])
    assert done["Bucket"] == bucket and done["Key"] == "obj"
    assert done["Location"].endswith(f"/{bucket}/obj")
    got = s3.get_object(Bucket=bucket, Key="obj")
    assert got["ContentLength"] == len(PART) + len(tail)
    assert got["ContentType"] == "text/plain" and got["Metadata"] == {"m": "1"}
    assert got["Body"].read() == PART + tail
    head = s3.head_object(Bucket=bucket, Key="obj", PartNumber=2)
    assert head["PartsCount"] == 2 and head["ContentLength"] == len(tail)
    assert s3.get_object(Bucket=bucket, Key="obj", PartNumber=2)["Body"].read() == tail
    with pytest.raises(ClientError) as e:
        s3.list_parts(Bucket=bucket, Key="obj", UploadId=upload_id)
    assert error(e)["Code"] == "NoSuchUpload" and status(e) == 404
    attrs = s3.get_object_attributes(Bucket=bucket, Key="obj", ObjectAttributes=["ObjectParts", "ETag"])
    assert attrs["ObjectParts"]["TotalPartsCount"] == 2
    assert attrs["ETag"] == done["ETag"].strip('"')


def test_parts_smaller_than_5_mib_but_the_last_are_entity_too_small(s3, bucket):
    upload_id = start(s3, bucket)
    e1 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=b"small")["ETag"]
    e2 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=2, Body=b"last")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 1, "ETag": e1}, {"PartNumber": 2, "ETag": e2}]})
    assert error(e)["Code"] == "EntityTooSmall"
    assert error(e)["Message"] == "Your proposed upload is smaller than the minimum allowed size"
    assert error(e)["MinSizeAllowed"] == str(5 * MIB)
    assert status(e) == 400
    # A single small part is fine: it is the last.
    done = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, MultipartUpload={
        "Parts": [{"PartNumber": 1, "ETag": e1}]})
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"small"
    assert done["ETag"].endswith('-1"')


def test_wrong_etag_or_missing_part_is_invalid_part(s3, bucket):
    upload_id = start(s3, bucket)
    s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=b"x")
    for parts in ([{"PartNumber": 1, "ETag": '"00000000000000000000000000000000"'}],
                  [{"PartNumber": 2, "ETag": '"%s"' % hashlib.md5(b"x").hexdigest()}]):
        with pytest.raises(ClientError) as e:
            s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                         MultipartUpload={"Parts": parts})
        assert error(e)["Code"] == "InvalidPart" and status(e) == 400


def test_parts_out_of_order_are_invalid_part_order(s3, bucket):
    upload_id = start(s3, bucket)
    etags = [s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=n, Body=PART)["ETag"]
             for n in (1, 2)]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, MultipartUpload={
            "Parts": [{"PartNumber": 2, "ETag": etags[1]}, {"PartNumber": 1, "ETag": etags[0]}]})
    assert error(e)["Code"] == "InvalidPartOrder" and status(e) == 400


def test_part_numbers_outside_1_to_10000_are_invalid_argument(s3, bucket):
    upload_id = start(s3, bucket)
    for n in (0, 10001):
        with pytest.raises(ClientError) as e:
            s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=n, Body=b"x")
        assert error(e)["Code"] == "InvalidArgument"


def test_unknown_upload_is_no_such_upload(s3, bucket):
    for call in (lambda: s3.upload_part(Bucket=bucket, Key="obj", UploadId="nope", PartNumber=1, Body=b"x"),
                 lambda: s3.abort_multipart_upload(Bucket=bucket, Key="obj", UploadId="nope"),
                 lambda: s3.list_parts(Bucket=bucket, Key="obj", UploadId="nope"),
                 lambda: s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId="nope",
                                                      MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": "x"}]})):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e)["Code"] == "NoSuchUpload" and status(e) == 404


def test_abort_removes_the_upload_and_its_parts(s3, bucket):
    upload_id = start(s3, bucket)
    s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=b"x")
    assert s3.abort_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id)["ResponseMetadata"]["HTTPStatusCode"] == 204
    assert "Uploads" not in s3.list_multipart_uploads(Bucket=bucket)
    with pytest.raises(ClientError):
        s3.head_object(Bucket=bucket, Key="obj")


def test_list_parts_paginates_and_replaced_parts_count_once(s3, bucket):
    upload_id = start(s3, bucket)
    for n in range(1, 6):
        s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=n, Body=b"p%d" % n)
    s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=3, Body=b"replaced")
    page = s3.list_parts(Bucket=bucket, Key="obj", UploadId=upload_id, MaxParts=2)
    assert [p["PartNumber"] for p in page["Parts"]] == [1, 2]
    assert page["IsTruncated"] is True and page["NextPartNumberMarker"] == 2
    page = s3.list_parts(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumberMarker=2)
    assert [(p["PartNumber"], p["Size"]) for p in page["Parts"]] == [(3, 8), (4, 2), (5, 2)]
    assert page["IsTruncated"] is False
    assert len(page["Owner"]["ID"]) == 64 and page["StorageClass"] == "STANDARD"


def test_list_multipart_uploads_by_prefix_and_delimiter(s3, bucket):
    ids = {k: start(s3, bucket, k) for k in ["a/1", "a/2", "b", "c/x"]}
    listed = s3.list_multipart_uploads(Bucket=bucket)
    assert [u["Key"] for u in listed["Uploads"]] == ["a/1", "a/2", "b", "c/x"]
    assert listed["Uploads"][0]["UploadId"] == ids["a/1"]
    listed = s3.list_multipart_uploads(Bucket=bucket, Delimiter="/")
    assert [u["Key"] for u in listed["Uploads"]] == ["b"]
    assert [p["Prefix"] for p in listed["CommonPrefixes"]] == ["a/", "c/"]
    listed = s3.list_multipart_uploads(Bucket=bucket, Prefix="a/", MaxUploads=1)
    assert [u["Key"] for u in listed["Uploads"]] == ["a/1"]
    assert listed["IsTruncated"] is True and listed["NextKeyMarker"] == "a/1"


def test_upload_part_copy_takes_a_range_of_another_object(s3, bucket):
    s3.put_object(Bucket=bucket, Key="src", Body=b"0123456789")
    upload_id = start(s3, bucket)
    out = s3.upload_part_copy(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1,
                              CopySource={"Bucket": bucket, "Key": "src"}, CopySourceRange="bytes=2-5")
    etag = out["CopyPartResult"]["ETag"]
    assert etag == '"%s"' % hashlib.md5(b"2345").hexdigest()
    s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id,
                                 MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"2345"
    upload_id = start(s3, bucket)
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1,
                            CopySource=f"{bucket}/src", CopySourceRange="bytes=5-50")
    assert error(e)["Code"] == "InvalidRequest"


def test_composite_crc32_checksum(s3, bucket):
    upload_id = start(s3, bucket, ChecksumAlgorithm="CRC32")
    p1 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=PART, ChecksumAlgorithm="CRC32")
    p2 = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=2, Body=b"end", ChecksumAlgorithm="CRC32")
    done = s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["ETag"], "ChecksumCRC32": p1["ChecksumCRC32"]},
        {"PartNumber": 2, "ETag": p2["ETag"], "ChecksumCRC32": p2["ChecksumCRC32"]}]})
    assert done["ChecksumCRC32"].endswith("-2")
    assert done["ChecksumType"] == "COMPOSITE"
    head = s3.head_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == done["ChecksumCRC32"]
    # boto3 validates what it gets: a composite checksum is not checked against the body.
    assert s3.get_object(Bucket=bucket, Key="obj", ChecksumMode="ENABLED")["Body"].read() == PART + b"end"


def test_transfer_manager_upload_and_ranged_download(s3, bucket):
    body = (bytes(range(256)) * (MIB // 256)) * 12 + b"tail"  # 12 MiB and a bit: 3 parts
    config = TransferConfig(multipart_threshold=5 * MIB, multipart_chunksize=5 * MIB, max_concurrency=3)
    s3.upload_fileobj(io.BytesIO(body), bucket, "big.bin", Config=config)
    head = s3.head_object(Bucket=bucket, Key="big.bin")
    assert head["ContentLength"] == len(body)
    assert head["ETag"].endswith('-3"')
    out = io.BytesIO()
    s3.download_fileobj(bucket, "big.bin", out, Config=config)
    assert out.getvalue() == body


def test_if_none_match_on_complete_refuses_to_overwrite(s3, bucket):
    s3.put_object(Bucket=bucket, Key="obj", Body=b"exists")
    upload_id = start(s3, bucket)
    etag = s3.upload_part(Bucket=bucket, Key="obj", UploadId=upload_id, PartNumber=1, Body=b"x")["ETag"]
    with pytest.raises(ClientError) as e:
        s3.complete_multipart_upload(Bucket=bucket, Key="obj", UploadId=upload_id, IfNoneMatch="*",
                                     MultipartUpload={"Parts": [{"PartNumber": 1, "ETag": etag}]})
    assert status(e) == 412
    assert s3.get_object(Bucket=bucket, Key="obj")["Body"].read() == b"exists"
