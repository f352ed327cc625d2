"""S3 black-box tests for the object operations beyond reads and writes: GetObjectTorrent's
metainfo files, UpdateObjectEncryption, and the directory-bucket and Object Lambda operations
(RenameObject, CreateSession, WriteGetObjectResponse) as S3 answers them where those features
are absent."""

from __future__ import annotations

import base64
import hashlib

import pytest
from botocore.config import Config

from s3_helpers import fails


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="extras")
    return s3


def bdecode(data: bytes, at: int = 0):
    """One bencoded value at `at`: (value, next offset)."""
    c = data[at:at + 1]
    if c == b"i":
        end = data.index(b"e", at)
        return int(data[at + 1:end]), end + 1
    if c in (b"l", b"d"):
        items, at = [], at + 1
        while data[at:at + 1] != b"e":
            item, at = bdecode(data, at)
            items.append(item)
        if c == b"l":
            return items, at + 1
        keys = [k.decode() for k in items[0::2]]
        assert keys == sorted(keys), "bencoded dictionaries are sorted"
        return dict(zip(keys, items[1::2])), at + 1
    colon = data.index(b":", at)
    length = int(data[at:colon])
    return data[colon + 1:colon + 1 + length], colon + 1 + length


def test_get_object_torrent_answers_a_bencoded_metainfo_with_piece_hashes(s3):
    body = bytes(range(256)) * 2048  # 512 KiB: two pieces
    s3.put_object(Bucket="extras", Key="dir/data.bin", Body=body + b"tail")
    raw = s3.get_object_torrent(Bucket="extras", Key="dir/data.bin")["Body"].read()
    torrent, end = bdecode(raw)
    assert end == len(raw)
    assert torrent["announce"] == b"http://s3-tracker.amazonaws.com:6969/announce"
    assert torrent["url-list"] == [b"http://extras.s3.amazonaws.com/dir/data.bin"]
    info = torrent["info"]
    assert info["name"] == b"data.bin" and info["length"] == len(body) + 4
    assert info["piece length"] == 262144
    whole = body + b"tail"
    pieces = b"".join(hashlib.sha1(whole[i:i + 262144]).digest() for i in range(0, len(whole), 262144))
    assert info["pieces"] == pieces
    assert (info["x-amz-bucket"], info["x-amz-key"]) == (b"extras", b"dir/data.bin")


def test_get_object_torrent_of_missing_objects_and_buckets(s3):
    fails(lambda: s3.get_object_torrent(Bucket="extras", Key="absent"), "NoSuchKey", 404)
    fails(lambda: s3.get_object_torrent(Bucket="no-such-extras", Key="k"), "NoSuchBucket", 404)
    key = "k" * 32
    s3.put_object(Bucket="extras", Key="ssec", Body=b"x", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    fails(lambda: s3.get_object_torrent(Bucket="extras", Key="ssec"), "InvalidRequest", 400)


def test_update_object_encryption_moves_an_object_to_sse_kms_in_place(s3, client):
    kms = client("kms")
    arn = kms.create_key()["KeyMetadata"]["Arn"]
    put = s3.put_object(Bucket="extras", Key="doc", Body=b"payload")
    before = s3.head_object(Bucket="extras", Key="doc")
    assert before["ServerSideEncryption"] == "AES256"
    s3.update_object_encryption(Bucket="extras", Key="doc",
                                ObjectEncryption={"SSEKMS": {"KMSKeyArn": arn, "BucketKeyEnabled": True}})
    after = s3.head_object(Bucket="extras", Key="doc")
    assert after["ServerSideEncryption"] == "aws:kms"
    assert after["SSEKMSKeyId"] == arn and after["BucketKeyEnabled"] is True
    assert after["ETag"] == put["ETag"] and after["LastModified"] == before["LastModified"]
    assert s3.get_object(Bucket="extras", Key="doc")["Body"].read() == b"payload"


def test_update_object_encryption_errors(s3):
    missing_key = "arn:aws:kms:us-east-1:000000000000:key/00000000-0000-0000-0000-000000000000"
    s3.put_object(Bucket="extras", Key="doc", Body=b"x")
    fails(lambda: s3.update_object_encryption(Bucket="extras", Key="doc",
                                              ObjectEncryption={"SSEKMS": {"KMSKeyArn": missing_key}}),
          "KMS.NotFoundException", 400)
    fails(lambda: s3.update_object_encryption(Bucket="extras", Key="absent",
                                              ObjectEncryption={"SSEKMS": {"KMSKeyArn": missing_key}}),
          "NoSuchKey", 404)
    key = "k" * 32
    s3.put_object(Bucket="extras", Key="ssec", Body=b"x", SSECustomerAlgorithm="AES256", SSECustomerKey=key)
    fails(lambda: s3.update_object_encryption(Bucket="extras", Key="ssec",
                                              ObjectEncryption={"SSEKMS": {"KMSKeyArn": missing_key}}),
          "InvalidRequest", 400)


def test_directory_bucket_operations_are_refused_on_general_purpose_buckets(s3):
    s3.put_object(Bucket="extras", Key="a", Body=b"x")
    message = "This operation is only supported for directory buckets."
    fails(lambda: s3.rename_object(Bucket="extras", Key="b", RenameSource="a"), "InvalidRequest", 400, message)
    fails(lambda: s3.create_session(Bucket="extras"), "InvalidRequest", 400, message)
    fails(lambda: s3.create_session(Bucket="no-such-extras"), "NoSuchBucket", 404)
    fails(lambda: s3.rename_object(Bucket="no-such-extras", Key="b", RenameSource="a"), "NoSuchBucket", 404)
    assert s3.get_object(Bucket="extras", Key="a")["Body"].read() == b"x"


def test_write_get_object_response_for_an_unknown_route_is_refused(client):
    s3 = client("s3", config=Config(inject_host_prefix=False))
    fails(lambda: s3.write_get_object_response(RequestRoute="io-abc", RequestToken="token", Body=b"x"),
          "InvalidRequest", 400)
