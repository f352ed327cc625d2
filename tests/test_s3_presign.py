"""Presigned URLs (SigV4 and SigV2 query auth) fetched with a plain HTTP client, POST uploads
from HTML forms, and CORS (OPTIONS preflight answered from the bucket's rules)."""

from __future__ import annotations

import base64
import json
import re
import time
import xml.etree.ElementTree as ET

import pytest
from botocore.config import Config

from s3_helpers import AUTH, fetch


@pytest.fixture
def s3(client):
    return client("s3", config=Config(signature_version="s3v4", retries={"max_attempts": 1}))


@pytest.fixture
def bucket(s3):
    s3.create_bucket(Bucket="pre-bucket")
    return "pre-bucket"


def test_presigned_get_and_put_work_with_a_plain_http_client(s3, bucket):
    put_url = s3.generate_presigned_url("put_object", Params={"Bucket": bucket, "Key": "up.txt"}, ExpiresIn=300)
    code, _, _ = fetch(put_url, "PUT", b"uploaded by url")
    assert code == 200
    get_url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "up.txt"}, ExpiresIn=300)
    assert "X-Amz-Signature=" in get_url
    code, headers, body = fetch(get_url)
    assert code == 200 and body == b"uploaded by url"
    assert headers["etag"] == s3.head_object(Bucket=bucket, Key="up.txt")["ETag"]


def test_expired_presigned_url_is_access_denied(s3, bucket):
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    url = s3.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "k"}, ExpiresIn=1)
    time.sleep(2.1)
    code, _, body = fetch(url)
    assert code == 403
    assert b"<Code>AccessDenied</Code>" in body and b"Request has expired" in body


def test_presigned_url_valid_for_more_than_a_week_is_rejected(server, bucket):
    query = ("X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Credential=test%2F20260101%2Fus-east-1%2Fs3%2Faws4_request"
             "&X-Amz-Date=20260101T000000Z&X-Amz-Expires=604801&X-Amz-SignedHeaders=host&X-Amz-Signature=00")
    code, _, body = server.request("GET", f"/{bucket}/k?{query}")
    assert code == 400 and b"AuthorizationQueryParametersError" in body


def test_sigv2_presigned_url(client, bucket, s3):
    s3.put_object(Bucket=bucket, Key="v2", Body=b"old client")
    v2 = client("s3", config=Config(signature_version="s3"))
    url = v2.generate_presigned_url("get_object", Params={"Bucket": bucket, "Key": "v2"}, ExpiresIn=300)
    assert "AWSAccessKeyId=" in url and "Signature=" in url
    code, _, body = fetch(url)
    assert code == 200 and body == b"old client"
    expired = re.sub(r"Expires=\d+", "Expires=1000", url)
    code, _, body = fetch(expired)
    assert code == 403 and b"<Code>AccessDenied</Code>" in body
    assert b"<Message>Request has expired</Message>" in body
    assert b"<Expires>1970-01-01T00:16:40Z</Expires>" in body and b"<ServerTime>" in body


def multipart_body(fields: dict, filename: str, content: bytes) -> tuple[bytes, str]:
    boundary = "----rotoformboundary"
    out = b""
    for k, v in fields.items():
        out += f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
    out += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="{filename}"\r\n'
            f"Content-Type: application/octet-stream\r\n\r\n").encode() + content + b"\r\n"
    out += f"--{boundary}--\r\n".encode()
    return out, f"multipart/form-data; boundary={boundary}"


def test_post_form_upload_with_presigned_post(s3, bucket):
    post = s3.generate_presigned_post(bucket, "uploads/${filename}", Fields={"Content-Type": "text/plain"},
                                      Conditions=[{"Content-Type": "text/plain"}, ["starts-with", "$key", "uploads/"]])
    body, ctype = multipart_body(post["fields"], "hello.txt", b"form data")
    code, headers, _ = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 204
    assert headers["etag"].strip('"')
    got = s3.get_object(Bucket=bucket, Key="uploads/hello.txt")
    assert got["Body"].read() == b"form data" and got["ContentType"] == "text/plain"


def test_post_form_success_status_201_returns_post_response(s3, bucket):
    post = s3.generate_presigned_post(bucket, "k201", Fields={"success_action_status": "201"},
                                      Conditions=[{"success_action_status": "201"}])
    body, ctype = multipart_body(post["fields"], "f", b"x")
    code, _, resp = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 201
    assert b"<PostResponse>" in resp and b"<Key>k201</Key>" in resp


def test_post_form_policy_is_enforced(s3, bucket):
    post = s3.generate_presigned_post(bucket, "limited", Conditions=[["content-length-range", 1, 4]])
    body, ctype = multipart_body(post["fields"], "f", b"too long")
    code, _, resp = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 400 and b"<Code>EntityTooLarge</Code>" in resp
    post = s3.generate_presigned_post(bucket, "other/key", Conditions=[["starts-with", "$key", "uploads/"]])
    body, ctype = multipart_body(post["fields"], "f", b"x")
    code, _, resp = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 403 and b"Policy Condition failed" in resp
    fields = dict(post["fields"])
    del fields["key"]
    body, ctype = multipart_body(fields, "f", b"x")
    code, _, resp = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 400 and b"Bucket POST must contain a field named" in resp


def test_cors_preflight_is_answered_from_the_rules(s3, server, bucket):
    preflight = {"Origin": "https://app.example.com", "Access-Control-Request-Method": "PUT",
                 "Access-Control-Request-Headers": "content-type, x-amz-date"}
    code, _, body = server.request("OPTIONS", f"/{bucket}/k", headers=preflight)
    assert code == 403 and b"CORS is not enabled for this bucket" in body
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["https://*.example.com"], "AllowedMethods": ["GET", "PUT"],
         "AllowedHeaders": ["*"], "ExposeHeaders": ["ETag"], "MaxAgeSeconds": 600}]})
    code, headers, _ = server.request("OPTIONS", f"/{bucket}/k", headers=preflight)
    assert code == 200
    assert headers["access-control-allow-origin"] == "https://app.example.com"
    assert headers["access-control-allow-methods"] == "GET, PUT"
    assert headers["access-control-allow-headers"] == "content-type, x-amz-date"
    assert headers["access-control-max-age"] == "600"
    assert headers["access-control-expose-headers"] == "ETag"
    code, _, body = server.request("OPTIONS", f"/{bucket}/k", headers={**preflight, "Origin": "https://evil.org"})
    assert code == 403 and b"This CORS request is not allowed" in body
    code, _, body = server.request("OPTIONS", f"/{bucket}/k", headers={"Origin": "https://app.example.com"})
    assert code == 400


def test_actual_requests_with_an_allowed_origin_get_cors_headers(s3, server, bucket):
    s3.put_bucket_cors(Bucket=bucket, CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": ["*"], "AllowedMethods": ["GET"]}]})
    s3.put_object(Bucket=bucket, Key="k", Body=b"x")
    code, headers, _ = server.request("GET", f"/{bucket}/k", headers={"Authorization": AUTH, "Origin": "https://a.com"})
    assert code == 200 and headers["access-control-allow-origin"] == "*"
    code, headers, _ = server.request("GET", f"/{bucket}/k", headers={"Authorization": AUTH})
    assert "access-control-allow-origin" not in headers


def post_form(server, bucket, fields, policy=None, content=b"x"):
    """POSTs a form to `bucket` with `policy` (a dict, base64-encoded into the form)."""
    fields = dict(fields)
    if policy is not None:
        fields["policy"] = base64.b64encode(json.dumps(policy).encode()).decode()
    body, ctype = multipart_body(fields, "f.txt", content)
    return server.request("POST", f"/{bucket}", body, {"Content-Type": ctype})


def later():
    return time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(time.time() + 600))


def test_post_policy_names_every_form_field_in_any_case(server, s3, bucket):
    policy = {"expiration": later(), "conditions": [
        {"bUcKeT": bucket}, ["starts-with", "$KeY", "up/"], {"x-amz-meta-color": "red"}]}
    fields = {"KEY": "up/a", "X-Amz-Meta-Color": "red", "x-ignore-me": "any", "Signature": "s",
              "AWSAccessKeyId": "test"}
    code, _, body = post_form(server, bucket, fields, policy)
    assert code == 204, body
    assert s3.head_object(Bucket=bucket, Key="up/a")["Metadata"] == {"color": "red"}


def test_post_policy_refuses_form_fields_no_condition_names(server, bucket):
    policy = {"expiration": later(), "conditions": [{"bucket": bucket}, {"key": "k"}]}
    code, _, body = post_form(server, bucket, {"key": "k", "x-amz-meta-extra": "1", "acl": "private"}, policy)
    assert code == 403 and b"<Code>AccessDenied</Code>" in body
    assert b"<Message>Invalid according to Policy: Extra input fields: acl, x-amz-meta-extra</Message>" in body


@pytest.mark.parametrize("policy,message", [
    ({"conditions": []}, "Invalid Policy: Policy missing expiration."),
    ({"EXPIRATION": "2030-01-01T00:00:00Z", "conditions": []}, "Invalid Policy: Policy missing expiration."),
    ({"expiration": "2030-01-01 00:00:00", "conditions": []},
     "Invalid Policy: Invalid 'expiration' value: '2030-01-01 00:00:00'"),
    ({"expiration": "2030-01-01T00:00:00Z"}, "Invalid Policy: Policy missing conditions."),
    ({"expiration": "2030-01-01T00:00:00Z", "conditions": [{}]},
     "Invalid Policy: Invalid Simple-Condition: Simple-Conditions must have exactly one property specified."),
    ({"expiration": "2030-01-01T00:00:00Z", "conditions": [["content-length-range", 0]]},
     "Invalid Policy: Invalid content-length-range: it takes two non-negative integers."),
    ({"expiration": "2030-01-01T00:00:00Z", "conditions": [["content-length-range", -1, 0]]},
     "Invalid Policy: Invalid content-length-range: it takes two non-negative integers."),
])
def test_malformed_post_policies_are_invalid_policy_documents(server, bucket, policy, message):
    code, _, body = post_form(server, bucket, {"key": "k"}, policy)
    assert code == 400 and b"<Code>InvalidPolicyDocument</Code>" in body, body
    assert ET.fromstring(body).findtext("Message") == message


def test_post_policy_condition_operators_are_case_sensitive(server, bucket):
    policy = {"expiration": later(), "conditions": [{"bucket": bucket}, ["StArts-WiTh", "$key", "k"]]}
    code, _, body = post_form(server, bucket, {"key": "k"}, policy)
    assert code == 400 and b"<Code>InvalidPolicyDocument</Code>" in body


def test_post_without_a_policy_is_not_checked_for_conditions(server, s3, bucket):
    code, _, _ = post_form(server, bucket, {"key": "plain", "x-amz-meta-a": "b"})
    assert code == 204
    assert s3.head_object(Bucket=bucket, Key="plain")["Metadata"] == {"a": "b"}
