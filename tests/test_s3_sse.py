"""S3 server-side encryption as S3 applies and reports it: SSE-S3, SSE-KMS with keys from
KMS (bucket default applied, key ARN and Bucket Key echoed, missing or disabled keys refused
with KMS's error), SSE-C (key algorithm and MD5 echoed, the same key required to read or
copy, bad or conflicting parameters refused), multipart uploads and copies between modes."""

from __future__ import annotations

import base64
import hashlib
import http.client
import urllib.parse
import urllib.request

import pytest
from botocore.exceptions import ClientError

KEY = "pO3upElrwuEXSoFwCfnZPdSsmt/xWeFa0N9KgDijwVs="
KEY_MD5 = "DWygnHRtgiJ77HCm+1rvHw=="
OTHER = "6b+WOZ1T3cqZMxgThRcXAQBrS5mXKdDUphvpxptl9/4="
OTHER_MD5 = "arxBvwY2V4SiOne6yppVPQ=="
SSE_C = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": KEY, "SSECustomerKeyMD5": KEY_MD5}
SSE_C_OTHER = {"SSECustomerAlgorithm": "AES256", "SSECustomerKey": OTHER, "SSECustomerKeyMD5": OTHER_MD5}
COPY_SSE_C = {f"CopySource{k}": v for k, v in SSE_C.items()}


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="bkt")
    return s3


@pytest.fixture
def kms(client):
    return client("kms")


def error_of(excinfo):
    r = excinfo.value.response
    return r["Error"].get("Code"), r["ResponseMetadata"]["HTTPStatusCode"]


def test_key_md5_constants_are_the_md5_of_the_keys():
    assert base64.b64encode(hashlib.md5(base64.b64decode(KEY)).digest()).decode() == KEY_MD5
    assert base64.b64encode(hashlib.md5(base64.b64decode(OTHER)).digest()).decode() == OTHER_MD5


# --- SSE-S3 ---------------------------------------------------------------------------------

def test_sse_s3_is_the_default_and_echoed(s3):
    assert s3.put_object(Bucket="bkt", Key="k", Body=b"x")["ServerSideEncryption"] == "AES256"
    assert s3.head_object(Bucket="bkt", Key="k")["ServerSideEncryption"] == "AES256"
    assert s3.put_object(Bucket="bkt", Key="k2", Body=b"x", ServerSideEncryption="AES256")["ServerSideEncryption"] == "AES256"


def test_unknown_algorithm_is_invalid_argument(s3, server):
    url = urllib.parse.urlparse(server.endpoint)
    conn = http.client.HTTPConnection(url.hostname, url.port)
    conn.request("PUT", "/bkt/k", body=b"x", headers={
        "x-amz-server-side-encryption": "AES128",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=0",
    })
    resp = conn.getresponse()
    body = resp.read().decode()
    assert resp.status == 400 and "<Code>InvalidArgument</Code>" in body
    assert "The encryption method specified is not supported" in body


# --- SSE-KMS --------------------------------------------------------------------------------

def test_sse_kms_with_a_key_echoes_its_arn_and_bucket_key(s3, kms):
    key = kms.create_key()["KeyMetadata"]
    put = s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms",
                        SSEKMSKeyId=key["KeyId"], BucketKeyEnabled=True)
    assert put["ServerSideEncryption"] == "aws:kms"
    assert put["SSEKMSKeyId"] == key["Arn"]
    assert put["BucketKeyEnabled"] is True
    got = s3.get_object(Bucket="bkt", Key="k")
    assert (got["ServerSideEncryption"], got["SSEKMSKeyId"], got["BucketKeyEnabled"]) == ("aws:kms", key["Arn"], True)
    assert got["Body"].read() == b"x"
    head = s3.head_object(Bucket="bkt", Key="k")
    assert head["SSEKMSKeyId"] == key["Arn"]


def test_sse_kms_without_a_key_uses_the_aws_s3_key(s3, kms):
    put = s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms")
    managed = kms.describe_key(KeyId="alias/aws/s3")["KeyMetadata"]
    assert put["SSEKMSKeyId"] == managed["Arn"] and managed["KeyManager"] == "AWS"


def test_dsse_kms_is_echoed(s3, kms):
    key = kms.create_key()["KeyMetadata"]
    put = s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms:dsse", SSEKMSKeyId=key["Arn"])
    assert put["ServerSideEncryption"] == "aws:kms:dsse" and put["SSEKMSKeyId"] == key["Arn"]


def test_missing_kms_key_is_refused_with_kms_not_found(s3):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms",
                      SSEKMSKeyId="11111111-2222-3333-4444-555555555555")
    assert error_of(e) == ("KMS.NotFoundException", 400)
    with pytest.raises(ClientError):
        s3.head_object(Bucket="bkt", Key="k")


def test_disabled_kms_key_is_refused(s3, kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    kms.disable_key(KeyId=key)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms", SSEKMSKeyId=key)
    assert error_of(e) == ("KMS.DisabledException", 400)


def test_kms_key_id_without_aws_kms_is_invalid_argument(s3, kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="AES256", SSEKMSKeyId=key)
    assert error_of(e) == ("InvalidArgument", 400)


def test_bucket_default_kms_encryption_is_applied(s3, kms):
    key = kms.create_key()["KeyMetadata"]
    s3.put_bucket_encryption(Bucket="bkt", ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": key["KeyId"]},
        "BucketKeyEnabled": True,
    }]})
    put = s3.put_object(Bucket="bkt", Key="k", Body=b"x")
    assert (put["ServerSideEncryption"], put["SSEKMSKeyId"], put["BucketKeyEnabled"]) == ("aws:kms", key["Arn"], True)
    assert s3.head_object(Bucket="bkt", Key="k")["SSEKMSKeyId"] == key["Arn"]
    # A request's own encryption wins over the default.
    assert s3.put_object(Bucket="bkt", Key="k2", Body=b"x", ServerSideEncryption="AES256")["ServerSideEncryption"] == "AES256"


def test_bucket_default_with_a_deleted_key_refuses_writes(s3, kms):
    key = kms.create_key()["KeyMetadata"]["KeyId"]
    s3.put_bucket_encryption(Bucket="bkt", ServerSideEncryptionConfiguration={"Rules": [{
        "ApplyServerSideEncryptionByDefault": {"SSEAlgorithm": "aws:kms", "KMSMasterKeyID": key}}]})
    kms.schedule_key_deletion(KeyId=key, PendingWindowInDays=7)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x")
    assert error_of(e) == ("KMS.KMSInvalidStateException", 400)


# --- SSE-C ----------------------------------------------------------------------------------

def test_sse_c_echoes_algorithm_and_key_md5_and_needs_the_key_to_read(s3):
    put = s3.put_object(Bucket="bkt", Key="k", Body=b"secret", **SSE_C)
    assert put["SSECustomerAlgorithm"] == "AES256" and put["SSECustomerKeyMD5"] == KEY_MD5
    assert "ServerSideEncryption" not in put
    got = s3.get_object(Bucket="bkt", Key="k", **SSE_C)
    assert got["Body"].read() == b"secret"
    assert got["SSECustomerAlgorithm"] == "AES256" and got["SSECustomerKeyMD5"] == KEY_MD5
    assert "ServerSideEncryption" not in got
    head = s3.head_object(Bucket="bkt", Key="k", **SSE_C)
    assert head["SSECustomerKeyMD5"] == KEY_MD5


def test_sse_c_object_without_its_key_is_400(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"secret", **SSE_C)
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="bkt", Key="k")
    assert error_of(e) == ("InvalidRequest", 400)
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket="bkt", Key="k")
    assert error_of(e)[1] == 400


def test_sse_c_object_with_another_key_is_403(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"secret", **SSE_C)
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="bkt", Key="k", **SSE_C_OTHER)
    assert error_of(e) == ("AccessDenied", 403)
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket="bkt", Key="k", **SSE_C_OTHER)
    assert error_of(e)[1] == 403


def test_sse_c_parameters_for_an_object_without_sse_c_are_refused(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"plain")
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="bkt", Key="k", **SSE_C)
    assert error_of(e) == ("InvalidRequest", 400)
    with pytest.raises(ClientError) as e:
        s3.head_object(Bucket="bkt", Key="k", **SSE_C)
    assert error_of(e)[1] == 400


def test_bad_key_md5_is_invalid_argument(s3):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", SSECustomerAlgorithm="AES256",
                      SSECustomerKey=KEY, SSECustomerKeyMD5="AAAAAAAAAAAAAAAAAAAAAA==")
    assert error_of(e) == ("InvalidArgument", 400)
    assert "did not match" in e.value.response["Error"]["Message"]


def test_key_md5_without_key_and_key_without_algorithm_are_invalid_argument(s3):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", SSECustomerKeyMD5=KEY_MD5)
    assert error_of(e) == ("InvalidArgument", 400)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", SSECustomerKey=KEY, SSECustomerKeyMD5=KEY_MD5)
    assert error_of(e) == ("InvalidArgument", 400)


def test_short_key_and_other_algorithm_are_refused(s3):
    short = base64.b64encode(b"0" * 16).decode()
    short_md5 = base64.b64encode(hashlib.md5(b"0" * 16).digest()).decode()
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", SSECustomerAlgorithm="AES256",
                      SSECustomerKey=short, SSECustomerKeyMD5=short_md5)
    assert error_of(e) == ("InvalidArgument", 400)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", SSECustomerAlgorithm="AES128",
                      SSECustomerKey=KEY, SSECustomerKeyMD5=KEY_MD5)
    assert error_of(e) == ("InvalidEncryptionAlgorithmError", 400)


def test_sse_c_with_sse_s3_or_kms_conflicts(s3):
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="AES256", **SSE_C)
    assert error_of(e) == ("InvalidArgument", 400)
    with pytest.raises(ClientError) as e:
        s3.put_object(Bucket="bkt", Key="k", Body=b"x", ServerSideEncryption="aws:kms", **SSE_C)
    assert error_of(e) == ("InvalidArgument", 400)


# --- copies ---------------------------------------------------------------------------------

def test_copy_of_sse_c_source_needs_its_key(s3):
    s3.put_object(Bucket="bkt", Key="src", Body=b"secret", **SSE_C)
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket="bkt", Key="dst", CopySource="bkt/src")
    assert error_of(e) == ("InvalidRequest", 400)
    wrong = {f"CopySource{k}": v for k, v in SSE_C_OTHER.items()}
    with pytest.raises(ClientError) as e:
        s3.copy_object(Bucket="bkt", Key="dst", CopySource="bkt/src", **wrong)
    assert error_of(e) == ("AccessDenied", 403)


def test_copy_from_sse_c_to_plain_to_kms_to_sse_c_relabels(s3, kms):
    s3.put_object(Bucket="bkt", Key="src", Body=b"secret", **SSE_C)
    plain = s3.copy_object(Bucket="bkt", Key="plain", CopySource="bkt/src", **COPY_SSE_C)
    assert plain["ServerSideEncryption"] == "AES256" and "SSECustomerAlgorithm" not in plain
    assert s3.get_object(Bucket="bkt", Key="plain")["Body"].read() == b"secret"
    key = kms.create_key()["KeyMetadata"]
    viakms = s3.copy_object(Bucket="bkt", Key="kms", CopySource="bkt/plain", ServerSideEncryption="aws:kms", SSEKMSKeyId=key["Arn"])
    assert viakms["ServerSideEncryption"] == "aws:kms" and viakms["SSEKMSKeyId"] == key["Arn"]
    assert s3.head_object(Bucket="bkt", Key="kms")["SSEKMSKeyId"] == key["Arn"]
    back = s3.copy_object(Bucket="bkt", Key="c2", CopySource="bkt/kms", **SSE_C_OTHER)
    assert back["SSECustomerKeyMD5"] == OTHER_MD5 and "SSEKMSKeyId" not in back
    assert s3.get_object(Bucket="bkt", Key="c2", **SSE_C_OTHER)["Body"].read() == b"secret"
    with pytest.raises(ClientError):
        s3.get_object(Bucket="bkt", Key="c2", **SSE_C)


def test_copy_in_place_rotates_the_customer_key(s3):
    s3.put_object(Bucket="bkt", Key="k", Body=b"secret", **SSE_C)
    s3.copy_object(Bucket="bkt", Key="k", CopySource="bkt/k", **COPY_SSE_C, **SSE_C_OTHER)
    assert s3.get_object(Bucket="bkt", Key="k", **SSE_C_OTHER)["Body"].read() == b"secret"


# --- multipart ------------------------------------------------------------------------------

PART = b"p" * (5 * 1024 * 1024)


def test_sse_c_multipart_requires_the_key_on_each_part(s3):
    up = s3.create_multipart_upload(Bucket="bkt", Key="m", **SSE_C)
    assert up["SSECustomerAlgorithm"] == "AES256" and up["SSECustomerKeyMD5"] == KEY_MD5
    uid = up["UploadId"]
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket="bkt", Key="m", UploadId=uid, PartNumber=1, Body=PART)
    assert error_of(e) == ("InvalidRequest", 400)
    with pytest.raises(ClientError) as e:
        s3.upload_part(Bucket="bkt", Key="m", UploadId=uid, PartNumber=1, Body=PART, **SSE_C_OTHER)
    assert error_of(e) == ("InvalidRequest", 400)
    p1 = s3.upload_part(Bucket="bkt", Key="m", UploadId=uid, PartNumber=1, Body=PART, **SSE_C)
    assert p1["SSECustomerKeyMD5"] == KEY_MD5
    p2 = s3.upload_part(Bucket="bkt", Key="m", UploadId=uid, PartNumber=2, Body=b"end", **SSE_C)
    s3.complete_multipart_upload(Bucket="bkt", Key="m", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": p1["ETag"]}, {"PartNumber": 2, "ETag": p2["ETag"]}]})
    head = s3.head_object(Bucket="bkt", Key="m", **SSE_C)
    assert head["SSECustomerAlgorithm"] == "AES256" and head["ContentLength"] == len(PART) + 3
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="bkt", Key="m", **SSE_C_OTHER)
    assert error_of(e) == ("AccessDenied", 403)
    got = s3.get_object(Bucket="bkt", Key="m", Range="bytes=0-3", **SSE_C)
    assert got["Body"].read() == b"pppp"


def test_kms_multipart_echoes_the_key_on_every_step(s3, kms):
    key = kms.create_key()["KeyMetadata"]
    up = s3.create_multipart_upload(Bucket="bkt", Key="m", ServerSideEncryption="aws:kms", SSEKMSKeyId=key["KeyId"])
    assert up["SSEKMSKeyId"] == key["Arn"]
    part = s3.upload_part(Bucket="bkt", Key="m", UploadId=up["UploadId"], PartNumber=1, Body=b"x")
    assert part["ServerSideEncryption"] == "aws:kms" and part["SSEKMSKeyId"] == key["Arn"]
    done = s3.complete_multipart_upload(Bucket="bkt", Key="m", UploadId=up["UploadId"], MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": part["ETag"]}]})
    assert done["ServerSideEncryption"] == "aws:kms" and done["SSEKMSKeyId"] == key["Arn"]


def test_upload_part_copy_between_modes(s3):
    s3.put_object(Bucket="bkt", Key="src", Body=PART, **SSE_C)
    up = s3.create_multipart_upload(Bucket="bkt", Key="dst", **SSE_C_OTHER)
    uid = up["UploadId"]
    with pytest.raises(ClientError) as e:
        s3.upload_part_copy(Bucket="bkt", Key="dst", UploadId=uid, PartNumber=1, CopySource="bkt/src", **SSE_C_OTHER)
    assert error_of(e) == ("InvalidRequest", 400)
    part = s3.upload_part_copy(Bucket="bkt", Key="dst", UploadId=uid, PartNumber=1, CopySource="bkt/src",
                               **COPY_SSE_C, **SSE_C_OTHER)
    assert part["SSECustomerKeyMD5"] == OTHER_MD5
    s3.complete_multipart_upload(Bucket="bkt", Key="dst", UploadId=uid, MultipartUpload={"Parts": [
        {"PartNumber": 1, "ETag": part["CopyPartResult"]["ETag"]}]})
    assert s3.get_object(Bucket="bkt", Key="dst", **SSE_C_OTHER)["Body"].read() == PART


# --- POST form uploads ----------------------------------------------------------------------

def test_post_form_upload_with_sse_c_fields_needs_the_key_to_read(s3):
    fields = {
        "x-amz-server-side-encryption-customer-algorithm": "AES256",
        "x-amz-server-side-encryption-customer-key": KEY,
        "x-amz-server-side-encryption-customer-key-MD5": KEY_MD5,
    }
    post = s3.generate_presigned_post("bkt", "posted", Fields=fields, Conditions=[{k: v} for k, v in fields.items()])
    boundary = "----rotoformboundary"
    body = b""
    for k, v in post["fields"].items():
        body += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    body += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n'
             "Content-Type: application/octet-stream\r\n\r\n").encode() + b"posted secret\r\n"
    body += f"--{boundary}--\r\n".encode()
    request = urllib.request.Request(post["url"], data=body, method="POST",
                                     headers={"Content-Type": f"multipart/form-data; boundary={boundary}"})
    with urllib.request.urlopen(request) as resp:
        assert resp.status == 204
    with pytest.raises(ClientError) as e:
        s3.get_object(Bucket="bkt", Key="posted")
    assert error_of(e) == ("InvalidRequest", 400)
    got = s3.get_object(Bucket="bkt", Key="posted", **SSE_C)
    assert got["Body"].read() == b"posted secret" and got["SSECustomerKeyMD5"] == KEY_MD5
