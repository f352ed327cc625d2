"""--verify-signatures and SigV4a (AWS4-ECDSA-P256-SHA256): requests signed by botocore's CRT
SigV4a signer, in the Authorization header and in presigned query strings with
X-Amz-Region-Set, are verified against the ECDSA key AWS derives from the access key and its
secret, for S3 and for the other protocols; a wrong secret or a tampered request is refused as
for SigV4."""

from __future__ import annotations

import http.client
import json
import urllib.parse

import pytest

pytest.importorskip("awscrt")

from botocore.awsrequest import AWSRequest  # noqa: E402
from botocore.credentials import Credentials  # noqa: E402
from botocore.crt.auth import (  # noqa: E402
    CrtS3SigV4AsymAuth,
    CrtS3SigV4AsymQueryAuth,
    CrtSigV4AsymAuth,
)

from access_helpers import client  # noqa: E402
from roto_server import RotoServer  # noqa: E402


@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral", "--verify-signatures") as s:
        yield s


def send(server, method, path, body=b"", headers=None, signer=None, query=None):
    """Signs a request to `path` with `signer` (a botocore CRT signer) and sends it; returns
    (status, body)."""
    url = server.endpoint + path + (("?" + urllib.parse.urlencode(query)) if query else "")
    request = AWSRequest(method=method, url=url, data=body, headers=headers or {})
    signer.add_auth(request)
    prepared = request.prepare()
    parsed = urllib.parse.urlsplit(prepared.url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    target = parsed.path + ("?" + parsed.query if parsed.query else "")
    conn.request(method, target, body=prepared.body, headers=dict(prepared.headers))
    response = conn.getresponse()
    return response.status, response.read()


def s3_signer(secret="test", key="test", region_set="us-east-1"):
    return CrtS3SigV4AsymAuth(Credentials(key, secret), "s3", region_set)


def test_s3_header_signatures_are_verified(server):
    client(server, "s3").create_bucket(Bucket="v4a")
    status, _ = send(server, "PUT", "/v4a/k", b"signed by ecdsa", signer=s3_signer())
    assert status == 200
    status, body = send(server, "GET", "/v4a/k", signer=s3_signer(region_set="*"))
    assert (status, body) == (200, b"signed by ecdsa")
    status, body = send(server, "GET", "/v4a/k", signer=s3_signer(secret="wrong"))
    assert status == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body
    assert b"<StringToSign>AWS4-ECDSA-P256-SHA256\n" in body


def test_s3_presigned_urls_are_verified(server):
    client(server, "s3").create_bucket(Bucket="v4a-pre")
    client(server, "s3").put_object(Bucket="v4a-pre", Key="k", Body=b"presigned")
    request = AWSRequest(method="GET", url=server.endpoint + "/v4a-pre/k")
    CrtS3SigV4AsymQueryAuth(Credentials("test", "test"), "s3", "us-east-1", expires=300).add_auth(request)
    url = request.url
    assert "X-Amz-Algorithm=AWS4-ECDSA-P256-SHA256" in url and "X-Amz-Region-Set=us-east-1" in url
    parsed = urllib.parse.urlsplit(url)
    conn = http.client.HTTPConnection(parsed.hostname, parsed.port, timeout=30)
    conn.request("GET", parsed.path + "?" + parsed.query)
    response = conn.getresponse()
    assert (response.status, response.read()) == (200, b"presigned")
    conn.request("GET", parsed.path.replace("/k", "/other") + "?" + parsed.query)
    response = conn.getresponse()
    assert response.status == 403 and b"<Code>SignatureDoesNotMatch</Code>" in response.read()


def test_query_and_json_protocols_verify_sigv4a(server):
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = b"Action=GetCallerIdentity&Version=2011-06-15"
    signer = CrtSigV4AsymAuth(Credentials("test", "test"), "sts", "*")
    status, out = send(server, "POST", "/", body, form, signer)
    assert status == 200 and b"arn:aws:iam::000000000000:root" in out
    bad = CrtSigV4AsymAuth(Credentials("test", "wrong"), "sts", "*")
    status, out = send(server, "POST", "/", body, form, bad)
    assert status == 403 and b"<Code>SignatureDoesNotMatch</Code>" in out
    headers = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"}
    signer = CrtSigV4AsymAuth(Credentials("test", "test"), "dynamodb", "us-east-1")
    status, out = send(server, "POST", "/", b"{}", headers, signer)
    assert status == 200 and json.loads(out) == {"TableNames": []}
    bad = CrtSigV4AsymAuth(Credentials("test", "wrong"), "dynamodb", "us-east-1")
    status, out = send(server, "POST", "/", b"{}", headers, bad)
    assert status == 400 and json.loads(out)["__type"].endswith("InvalidSignatureException")


def test_iam_user_keys_sign_sigv4a_with_their_own_secret(server):
    iam = client(server, "iam")
    iam.create_user(UserName="ecdsa")
    key = iam.create_access_key(UserName="ecdsa")["AccessKey"]
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    body = b"Action=GetCallerIdentity&Version=2011-06-15"
    signer = CrtSigV4AsymAuth(Credentials(key["AccessKeyId"], key["SecretAccessKey"]), "sts", "*")
    status, out = send(server, "POST", "/", body, form, signer)
    assert status == 200 and b"user/ecdsa" in out
    signer = CrtSigV4AsymAuth(Credentials(key["AccessKeyId"], "test"), "sts", "*")
    assert send(server, "POST", "/", body, form, signer)[0] == 403
