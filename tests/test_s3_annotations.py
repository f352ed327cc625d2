"""S3 object annotations black-box tests: named payloads put on an object version, read back
with their ETag and checksum, listed by prefix with continuation tokens, deleted, with S3's
errors for missing annotations, bad names and payloads, and failed ETag conditions."""

from __future__ import annotations

import base64
import zlib

import boto3
import pytest

from roto_server import RotoServer
from s3_helpers import fails


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="notes")
    s3.put_object(Bucket="notes", Key="doc.pdf", Body=b"%PDF")
    return s3


def test_put_get_list_and_delete_an_annotation(s3):
    put = s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai",
                                   AnnotationPayload=b'{"label": "invoice"}')
    assert put["Key"] == "doc.pdf" and put["AnnotationName"] == "labels/ai"
    assert put["ETag"].startswith('"')
    got = s3.get_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai")
    assert got["AnnotationPayload"].read() == b'{"label": "invoice"}'
    assert got["ETag"] == put["ETag"] and got["ContentLength"] == 20
    s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai",
                             AnnotationPayload=b"replaced")
    got = s3.get_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai")
    assert got["AnnotationPayload"].read() == b"replaced"
    listed = s3.list_object_annotations(Bucket="notes", Key="doc.pdf")
    assert [(a["AnnotationName"], a["Size"]) for a in listed["Annotations"]] == [("labels/ai", 8)]
    s3.delete_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai")
    fails(lambda: s3.get_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai"),
          "NoSuchAnnotation", 404)
    fails(lambda: s3.delete_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="labels/ai"),
          "NoSuchAnnotation", 404)
    assert s3.get_object(Bucket="notes", Key="doc.pdf")["Body"].read() == b"%PDF"


def test_checksums_are_checked_kept_and_returned_when_asked(s3):
    payload = b"checked payload"
    crc = base64.b64encode(zlib.crc32(payload).to_bytes(4, "big")).decode()
    s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="c", AnnotationPayload=payload,
                             ChecksumCRC32=crc)
    got = s3.get_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="c", ChecksumMode="ENABLED")
    assert got["ChecksumCRC32"] == crc
    listed = s3.list_object_annotations(Bucket="notes", Key="doc.pdf")["Annotations"]
    assert listed[0]["ChecksumAlgorithm"] == ["CRC32"]
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="d",
                                           AnnotationPayload=payload, ChecksumCRC32="AAAAAA=="), "BadDigest", 400)


def test_listing_filters_by_prefix_and_pages(s3):
    for name in ["a/1", "a/2", "a/3", "b/1"]:
        s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName=name, AnnotationPayload=b"x")
    first = s3.list_object_annotations(Bucket="notes", Key="doc.pdf", AnnotationPrefix="a/", MaxAnnotationResults=2)
    assert [a["AnnotationName"] for a in first["Annotations"]] == ["a/1", "a/2"]
    assert first["AnnotationCount"] == 2 and first["NextContinuationToken"]
    rest = s3.list_object_annotations(Bucket="notes", Key="doc.pdf", AnnotationPrefix="a/",
                                      ContinuationToken=first["NextContinuationToken"])
    assert [a["AnnotationName"] for a in rest["Annotations"]] == ["a/3"]
    assert "NextContinuationToken" not in rest


def test_annotations_belong_to_an_object_version(s3):
    s3.put_bucket_versioning(Bucket="notes", VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket="notes", Key="v", Body=b"1")["VersionId"]
    s3.put_object_annotation(Bucket="notes", Key="v", AnnotationName="n", AnnotationPayload=b"on v1")
    s3.put_object(Bucket="notes", Key="v", Body=b"2")
    assert s3.list_object_annotations(Bucket="notes", Key="v")["Annotations"] == []
    got = s3.get_object_annotation(Bucket="notes", Key="v", AnnotationName="n", VersionId=v1)
    assert got["AnnotationPayload"].read() == b"on v1" and got["ObjectVersionId"] == v1


def test_annotation_errors(s3):
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="absent", AnnotationName="n", AnnotationPayload=b"x"),
          "NoSuchKey", 404)
    fails(lambda: s3.put_object_annotation(Bucket="no-such-notes", Key="k", AnnotationName="n", AnnotationPayload=b"x"),
          "NoSuchBucket", 404)
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="n" * 513,
                                           AnnotationPayload=b"x"), "AnnotationNameTooLong", 400)
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="n",
                                           AnnotationPayload=b"x" * (1024 * 1024 + 1)), "InvalidRequest", 400)
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="n",
                                           AnnotationPayload=b"\xff\xfe"), "UnsupportedMediaType", 415)
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="n", AnnotationPayload=b"x",
                                           ObjectIfMatch='"0123"'), "PreconditionFailed", 412)
    etag = s3.head_object(Bucket="notes", Key="doc.pdf")["ETag"]
    s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="n", AnnotationPayload=b"x",
                             ObjectIfMatch=etag)
    key = "k" * 32
    s3.put_object(Bucket="notes", Key="ssec", Body=b"x", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    fails(lambda: s3.put_object_annotation(Bucket="notes", Key="ssec", AnnotationName="n", AnnotationPayload=b"x"),
          "InvalidRequest", 400)


def test_copy_object_copies_annotations_unless_excluded(s3):
    s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="a", AnnotationPayload=b"one")
    s3.put_object_annotation(Bucket="notes", Key="doc.pdf", AnnotationName="b", AnnotationPayload=b"two")
    s3.copy_object(Bucket="notes", Key="copy.pdf", CopySource={"Bucket": "notes", "Key": "doc.pdf"})
    listed = s3.list_object_annotations(Bucket="notes", Key="copy.pdf")["Annotations"]
    assert [(a["AnnotationName"], a["Size"]) for a in listed] == [("a", 3), ("b", 3)]
    got = s3.get_object_annotation(Bucket="notes", Key="copy.pdf", AnnotationName="b")
    assert got["AnnotationPayload"].read() == b"two"
    s3.copy_object(Bucket="notes", Key="bare.pdf", CopySource={"Bucket": "notes", "Key": "doc.pdf"},
                   AnnotationDirective="EXCLUDE")
    assert s3.list_object_annotations(Bucket="notes", Key="bare.pdf")["Annotations"] == []
    # A copy onto itself (new metadata) keeps them on the new version.
    s3.copy_object(Bucket="notes", Key="doc.pdf", CopySource={"Bucket": "notes", "Key": "doc.pdf"},
                   MetadataDirective="REPLACE", Metadata={"k": "v"})
    listed = s3.list_object_annotations(Bucket="notes", Key="doc.pdf")["Annotations"]
    assert [a["AnnotationName"] for a in listed] == ["a", "b"]


def test_annotations_go_with_their_version(s3):
    s3.put_bucket_versioning(Bucket="notes", VersioningConfiguration={"Status": "Enabled"})
    v1 = s3.put_object(Bucket="notes", Key="v", Body=b"1")["VersionId"]
    s3.put_object_annotation(Bucket="notes", Key="v", AnnotationName="n", AnnotationPayload=b"on v1")
    s3.delete_object(Bucket="notes", Key="v", VersionId=v1)
    fails(lambda: s3.list_object_annotations(Bucket="notes", Key="v", VersionId=v1), "NoSuchVersion", 404)


def test_a_deleted_objects_annotations_do_not_come_back_after_a_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as server:
        s3 = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        s3.create_bucket(Bucket="notes")
        s3.put_object(Bucket="notes", Key="k", Body=b"1")
        s3.put_object_annotation(Bucket="notes", Key="k", AnnotationName="n", AnnotationPayload=b"old")
        s3.delete_object(Bucket="notes", Key="k")
    with RotoServer("--data-dir", data) as server:
        s3 = boto3.client("s3", endpoint_url=server.endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="test")
        # The new object takes the sequence number the deleted one had.
        s3.put_object(Bucket="notes", Key="k", Body=b"2")
        assert s3.list_object_annotations(Bucket="notes", Key="k")["Annotations"] == []
