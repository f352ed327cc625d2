"""--verify-signatures: SigV4 (headers and presigned URLs) and S3's SigV2 checked against the
keys IAM and STS issued (every account's root signs with `test`), refused in the words of
each protocol's front end: S3's SignatureDoesNotMatch with the string to sign and canonical
request, InvalidAccessKeyId and RequestTimeTooSkewed; the JSON and query services'
InvalidSignatureException / SignatureDoesNotMatch, UnrecognizedClientException /
InvalidClientTokenId and MissingAuthenticationToken."""

from __future__ import annotations

import datetime
import re
import json
import urllib.parse

import boto3
import botocore.auth
import pytest

from access_helpers import client
from roto_server import RotoServer
from s3_helpers import fails, fetch

MISMATCH_S3 = ("The request signature we calculated does not match the signature you provided. "
               "Check your key and signing method.")
MISMATCH = ("The request signature we calculated does not match the signature you provided. "
            "Check your AWS Secret Access Key and signing method. Consult the service documentation "
            "for details.")
INVALID_TOKEN = "The security token included in the request is invalid."


@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral", "--verify-signatures") as s:
        yield s


@pytest.fixture(autouse=True)
def clean(server):
    yield
    server.reset()


def test_correct_signatures_pass_in_every_protocol(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="signed")
    key = "dir with space/a+b=c?&d~é.txt"
    s3.put_object(Bucket="signed", Key=key, Body=b"body", Tagging="a=b c")
    assert s3.get_object(Bucket="signed", Key=key)["Body"].read() == b"body"
    assert s3.list_objects_v2(Bucket="signed", Prefix="dir with space/")["KeyCount"] == 1
    virtual = client(server, "s3", s3={"addressing_style": "virtual"})
    assert virtual.head_object(Bucket="signed", Key=key)["ContentLength"] == 4
    assert client(server, "dynamodb").list_tables()["TableNames"] == []
    assert client(server, "sqs").create_queue(QueueName="q")["QueueUrl"].endswith("/q")
    assert client(server, "sns").create_topic(Name="t")["TopicArn"].endswith(":t")
    assert client(server, "lambda").list_functions()["Functions"] == []
    assert client(server, "sts").get_caller_identity()["Account"] == "000000000000"


def test_s3_wrong_secret_is_signature_does_not_match_with_what_was_signed(server):
    s3 = client(server, "s3", secret="wrong")
    error = fails(lambda: s3.list_buckets(), "SignatureDoesNotMatch", 403, MISMATCH_S3)
    assert error["AWSAccessKeyId"] == "test"
    assert error["StringToSign"].startswith("AWS4-HMAC-SHA256\n")
    assert error["CanonicalRequest"].startswith("GET\n/\n")
    assert error["StringToSignBytes"].startswith("41 57 53 34")
    assert len(error["SignatureProvided"]) == 64


@pytest.mark.parametrize("service,call,code,status", [
    ("dynamodb", lambda c: c.list_tables(), "InvalidSignatureException", 400),
    ("sqs", lambda c: c.list_queues(), "InvalidSignatureException", 400),
    ("lambda", lambda c: c.list_functions(), "InvalidSignatureException", 403),
    ("sts", lambda c: c.get_caller_identity(), "SignatureDoesNotMatch", 403),
    ("sns", lambda c: c.list_topics(), "SignatureDoesNotMatch", 403),
])
def test_wrong_secret_is_refused_with_the_canonical_string_expected(server, service, call, code, status):
    error = fails(lambda: call(client(server, service, secret="wrong")), code, status)
    assert error["Message"].startswith(MISMATCH + "\n\nThe Canonical String for this request should have been\n'")
    assert "\n\nThe String-to-Sign should have been\n'AWS4-HMAC-SHA256\n" in error["Message"]


@pytest.mark.parametrize("service,call,code,status", [
    ("dynamodb", lambda c: c.list_tables(), "UnrecognizedClientException", 400),
    ("lambda", lambda c: c.list_functions(), "UnrecognizedClientException", 403),
    ("sts", lambda c: c.get_caller_identity(), "InvalidClientTokenId", 403),
])
def test_a_key_nobody_issued_is_refused(server, service, call, code, status):
    fails(lambda: call(client(server, service, key="AKIAIOSFODNN7EXAMPLE")), code, status, INVALID_TOKEN)


def test_s3_unknown_key_is_invalid_access_key_id(server):
    s3 = client(server, "s3", key="AKIAIOSFODNN7EXAMPLE")
    error = fails(lambda: s3.list_buckets(), "InvalidAccessKeyId", 403,
                  "The AWS Access Key Id you provided does not exist in our records.")
    assert error["AWSAccessKeyId"] == "AKIAIOSFODNN7EXAMPLE"


def test_iam_user_keys_sign_with_their_own_secret_while_active(server):
    iam = client(server, "iam")
    iam.create_user(UserName="alice")
    key = iam.create_access_key(UserName="alice")["AccessKey"]
    sts = client(server, "sts", key["AccessKeyId"], key["SecretAccessKey"])
    assert sts.get_caller_identity()["Arn"] == "arn:aws:iam::000000000000:user/alice"
    fails(lambda: client(server, "sts", key["AccessKeyId"], "test").get_caller_identity(),
          "SignatureDoesNotMatch", 403)
    iam.update_access_key(UserName="alice", AccessKeyId=key["AccessKeyId"], Status="Inactive")
    fails(lambda: sts.get_caller_identity(), "InvalidClientTokenId", 403, INVALID_TOKEN)
    iam.update_access_key(UserName="alice", AccessKeyId=key["AccessKeyId"], Status="Active")
    assert sts.get_caller_identity()["UserId"]
    iam.delete_access_key(UserName="alice", AccessKeyId=key["AccessKeyId"])
    fails(lambda: sts.get_caller_identity(), "InvalidClientTokenId", 403, INVALID_TOKEN)


def test_sts_session_credentials_sign_with_the_session_secret(server):
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    client(server, "iam").create_role(RoleName="app", AssumeRolePolicyDocument=json.dumps(trust))
    creds = client(server, "sts").assume_role(
        RoleArn="arn:aws:iam::000000000000:role/app", RoleSessionName="run")["Credentials"]
    session = client(server, "dynamodb", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    assert session.list_tables()["TableNames"] == []
    wrong = client(server, "dynamodb", creds["AccessKeyId"], "test", creds["SessionToken"])
    fails(lambda: wrong.list_tables(), "InvalidSignatureException", 400)


def test_a_twelve_digit_key_is_that_accounts_root_with_secret_test(server):
    assert client(server, "sts", "111122223333").get_caller_identity()["Account"] == "111122223333"
    fails(lambda: client(server, "sts", "111122223333", "other").get_caller_identity(),
          "SignatureDoesNotMatch", 403)


def test_sigv2_headers_are_verified_for_s3(server):
    client(server, "s3").create_bucket(Bucket="sig-v2")
    v2 = client(server, "s3", signature_version="s3")
    v2.put_object(Bucket="sig-v2", Key="k y", Body=b"x", Tagging="a=b")
    assert v2.get_object_tagging(Bucket="sig-v2", Key="k y")["TagSet"] == [{"Key": "a", "Value": "b"}]
    bad = client(server, "s3", secret="wrong", signature_version="s3")
    error = fails(lambda: bad.get_object_tagging(Bucket="sig-v2", Key="k y"), "SignatureDoesNotMatch", 403,
                  MISMATCH_S3)
    assert error["StringToSign"].endswith("\n/sig-v2/k%20y?tagging")
    assert "CanonicalRequest" not in error


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_presigned_urls_are_verified(server, version):
    client(server, "s3").create_bucket(Bucket="pre")
    client(server, "s3").put_object(Bucket="pre", Key="k", Body=b"secret")
    good = client(server, "s3", signature_version=version)
    url = good.generate_presigned_url("get_object", Params={"Bucket": "pre", "Key": "k"})
    assert fetch(url)[0] == 200 and fetch(url)[2] == b"secret"
    put = good.generate_presigned_url("put_object", Params={"Bucket": "pre", "Key": "up",
                                                           "ContentType": "text/plain"})
    assert fetch(put, "PUT", b"uploaded", {"Content-Type": "text/plain"})[0] == 200
    code, _, body = fetch(put, "PUT", b"uploaded", {"Content-Type": "text/html"})
    assert code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body
    bad = client(server, "s3", secret="wrong", signature_version=version)
    url = bad.generate_presigned_url("get_object", Params={"Bucket": "pre", "Key": "k"})
    code, _, body = fetch(url)
    assert code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body
    tampered = url.replace("/pre/k?", "/pre/up?")
    code, _, body = fetch(tampered)
    assert code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body


def test_a_sigv2_presigned_urls_expiry_is_signed(server):
    client(server, "s3").create_bucket(Bucket="pre2")
    client(server, "s3").put_object(Bucket="pre2", Key="k", Body=b"v2")
    url = client(server, "s3", signature_version="s3").generate_presigned_url(
        "get_object", Params={"Bucket": "pre2", "Key": "k"}, ExpiresIn=300)
    assert fetch(url)[2] == b"v2"
    later = int(re.search(r"Expires=(\d+)", url).group(1)) + 3600
    code, _, body = fetch(re.sub(r"Expires=\d+", f"Expires={later}", url))
    assert code == 403 and b"<Code>SignatureDoesNotMatch</Code>" in body
    assert f"<StringToSign>GET\n\n\n{later}\n/pre2/k</StringToSign>".encode() in body


def skewed(monkeypatch, minutes):
    when = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=minutes)
    monkeypatch.setattr(botocore.auth, "get_current_datetime", lambda: when)
    return when.strftime("%Y%m%dT%H%M%SZ")


def test_s3_request_more_than_15_minutes_off_is_too_skewed(server, monkeypatch):
    sent = skewed(monkeypatch, -20)
    error = fails(lambda: client(server, "s3").list_buckets(), "RequestTimeTooSkewed", 403,
                  "The difference between the request time and the current time is too large.")
    assert error["RequestTime"] == sent
    assert error["MaxAllowedSkewMilliseconds"] == "900000"
    skewed(monkeypatch, 10)
    assert client(server, "s3").list_buckets()["Buckets"] == []


def test_an_old_signature_has_expired_and_a_future_one_is_not_yet_current(server, monkeypatch):
    sent = skewed(monkeypatch, -20)
    error = fails(lambda: client(server, "dynamodb").list_tables(), "InvalidSignatureException", 400)
    assert error["Message"].startswith(f"Signature expired: {sent} is now earlier than ")
    assert error["Message"].endswith(" - 15 min.)")
    sent = skewed(monkeypatch, 20)
    error = fails(lambda: client(server, "sts").get_caller_identity(), "SignatureDoesNotMatch", 403)
    assert error["Message"].startswith(f"Signature not yet current: {sent} is still later than ")
    assert error["Message"].endswith(" + 15 min.)")


def test_unsigned_calls_need_a_signature_but_where_aws_takes_them_and_the_readiness_probe(server):
    code, _, body = server.request("POST", "/", b"{}", {
        "X-Amz-Target": "DynamoDB_20120810.ListTables", "Content-Type": "application/x-amz-json-1.0"})
    assert code == 400
    answer = json.loads(body)
    assert answer["__type"].endswith("#MissingAuthenticationTokenException")
    assert answer["message"] == "Request is missing Authentication Token"
    form = urllib.parse.urlencode({"Action": "ListTopics", "Version": "2010-03-31"}).encode()
    code, _, body = server.request("POST", "/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 403 and b"<Code>MissingAuthenticationToken</Code>" in body
    form = urllib.parse.urlencode({"Action": "GetCallerIdentity", "Version": "2011-06-15"}).encode()
    code, _, _ = server.request("POST", "/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert code == 200, "the readiness probe stays open"
    form = urllib.parse.urlencode({"Action": "AssumeRoleWithWebIdentity", "Version": "2011-06-15",
                                   "RoleArn": "arn:aws:iam::000000000000:role/none",
                                   "RoleSessionName": "web", "WebIdentityToken": "x" * 8}).encode()
    code, _, body = server.request("POST", "/", form, {"Content-Type": "application/x-www-form-urlencoded"})
    assert b"MissingAuthenticationToken" not in body
    client(server, "s3").create_bucket(Bucket="anon")
    code, _, _ = server.request("PUT", "/anon/unsigned", b"anonymous body")
    assert code == 200


def test_a_malformed_s3_authorization_header_is_refused(server):
    auth = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, Signature=00"
    code, _, body = server.request("GET", "/", headers={"Authorization": auth})
    assert code == 400 and b"<Code>AuthorizationHeaderMalformed</Code>" in body


def test_without_the_flag_any_secret_is_accepted():
    with RotoServer("--ephemeral") as plain:
        s3 = boto3.client("s3", endpoint_url=plain.endpoint, region_name="us-east-1",
                          aws_access_key_id="test", aws_secret_access_key="anything")
        assert s3.list_buckets()["Buckets"] == []


# aws-chunked uploads: botocore sends none of the signed framings, so these are built by hand
# as the Java, Go, Rust and JavaScript SDKs send them, the seed signed by botocore's signer.

def signing_key(secret, scope):
    import hashlib
    import hmac
    key = ("AWS4" + secret).encode()
    for part in scope.split("/"):
        key = hmac.new(key, part.encode(), hashlib.sha256).digest()
    return key


def chunked_put(server, bucket, key, chunks, *, content_sha, trailer=None, secret="test",
                tamper=None):
    """PUTs `chunks` as an aws-chunked body of framing `content_sha`, each chunk signed in the
    chain from the seed (for the signed framings); `trailer` is a (name, value) trailing header,
    signed when the framing is. `tamper(parts)` may change the signature list or the data
    after signing. Returns (status, body)."""
    import hashlib
    import hmac
    import http.client
    import re
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    signed = content_sha.startswith("STREAMING-AWS4-HMAC")

    def encode(sigs, trailer_sig):
        body = b""
        for i, data in enumerate(list(chunks) + [b""]):
            ext = f";chunk-signature={sigs[i]}" if signed else ""
            body += f"{len(data):x}{ext}\r\n".encode() + data + (b"\r\n" if data else b"")
        if trailer:
            body += f"{trailer[0]}:{trailer[1]}\r\n".encode()
            if signed:
                body += f"x-amz-trailer-signature:{trailer_sig}\r\n".encode()
        return body + b"\r\n"

    zeros = ["0" * 64] * (len(chunks) + 1)
    headers = {"X-Amz-Content-SHA256": content_sha, "Content-Encoding": "aws-chunked",
               "X-Amz-Decoded-Content-Length": str(sum(map(len, chunks))),
               "Content-Length": str(len(encode(zeros, "0" * 64)))}
    if trailer:
        headers["X-Amz-Trailer"] = trailer[0]
    req = AWSRequest(method="PUT", url=f"{server.endpoint}/{bucket}/{key}", headers=headers)
    SigV4Auth(Credentials("test", secret), "s3", "us-east-1").add_auth(req)
    previous = re.search(r"Signature=([0-9a-f]{64})", req.headers["Authorization"]).group(1)
    date = req.headers["X-Amz-Date"]
    scope = f"{date[:8]}/us-east-1/s3/aws4_request"
    skey = signing_key(secret, scope)
    empty = hashlib.sha256(b"").hexdigest()
    sigs = []
    for data in list(chunks) + [b""]:
        to_sign = (f"AWS4-HMAC-SHA256-PAYLOAD\n{date}\n{scope}\n{previous}\n{empty}\n"
                   f"{hashlib.sha256(data).hexdigest()}")
        previous = hmac.new(skey, to_sign.encode(), hashlib.sha256).hexdigest()
        sigs.append(previous)
    trailer_sig = None
    if trailer:
        canonical = f"{trailer[0]}:{trailer[1]}\n".encode()
        to_sign = (f"AWS4-HMAC-SHA256-TRAILER\n{date}\n{scope}\n{previous}\n"
                   f"{hashlib.sha256(canonical).hexdigest()}")
        trailer_sig = hmac.new(skey, to_sign.encode(), hashlib.sha256).hexdigest()
    parts = {"sigs": sigs, "trailer_sig": trailer_sig, "chunks": list(chunks)}
    if tamper:
        tamper(parts)
    chunks = parts["chunks"]
    body = encode(parts["sigs"], parts["trailer_sig"])
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request("PUT", f"/{bucket}/{key}", body=body, headers=dict(req.headers))
    resp = conn.getresponse()
    return resp.status, resp.read()


CHUNKS = [b"a" * 65536, b"b" * 1024]
SIGNED = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD"
SIGNED_TRAILER = "STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"


def crc32_b64(data):
    import base64
    import zlib
    return base64.b64encode(zlib.crc32(data).to_bytes(4, "big")).decode()


def xml_field(body, name):
    import html
    import re
    match = re.search(rf"<{name}>(.*?)</{name}>".encode(), body, re.S)
    return html.unescape(match.group(1).decode()) if match else None


def test_signed_chunks_chained_from_the_seed_are_accepted(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="chunks")
    assert chunked_put(server, "chunks", "k", CHUNKS, content_sha=SIGNED)[0] == 200
    assert s3.get_object(Bucket="chunks", Key="k")["Body"].read() == b"".join(CHUNKS)


@pytest.mark.parametrize("where", ["data", "first", "final"])
def test_a_chunk_whose_signature_does_not_hold_is_refused_and_nothing_stored(server, where):
    client(server, "s3").create_bucket(Bucket="chunks")

    def tamper(parts):
        if where == "data":
            parts["chunks"][1] = b"c" + parts["chunks"][1][1:]
        else:
            index = 0 if where == "first" else -1
            parts["sigs"][index] = "f" * 64

    status, body = chunked_put(server, "chunks", "k", CHUNKS, content_sha=SIGNED, tamper=tamper)
    assert status == 403 and xml_field(body, "Code") == "SignatureDoesNotMatch"
    assert xml_field(body, "Message") == MISMATCH_S3
    assert xml_field(body, "StringToSign").startswith("AWS4-HMAC-SHA256-PAYLOAD\n")
    assert xml_field(body, "AWSAccessKeyId") == "test"
    fails(lambda: client(server, "s3").head_object(Bucket="chunks", Key="k"), "404", 404)


def test_signed_trailers_are_verified_and_their_checksum_checked(server):
    s3 = client(server, "s3")
    s3.create_bucket(Bucket="chunks")
    payload = b"".join(CHUNKS)
    good = ("x-amz-checksum-crc32", crc32_b64(payload))
    assert chunked_put(server, "chunks", "k", CHUNKS, content_sha=SIGNED_TRAILER, trailer=good)[0] == 200
    head = s3.head_object(Bucket="chunks", Key="k", ChecksumMode="ENABLED")
    assert head["ChecksumCRC32"] == good[1]

    def bad_signature(parts):
        parts["trailer_sig"] = "0" * 64

    status, body = chunked_put(server, "chunks", "t", CHUNKS, content_sha=SIGNED_TRAILER, trailer=good,
                               tamper=bad_signature)
    assert status == 403 and xml_field(body, "Code") == "SignatureDoesNotMatch"
    assert xml_field(body, "StringToSign").startswith("AWS4-HMAC-SHA256-TRAILER\n")
    wrong = ("x-amz-checksum-crc32", crc32_b64(b"other"))
    status, body = chunked_put(server, "chunks", "t", CHUNKS, content_sha=SIGNED_TRAILER, trailer=wrong)
    assert status == 400 and xml_field(body, "Code") == "BadDigest"
    fails(lambda: s3.head_object(Bucket="chunks", Key="t"), "404", 404)


def test_unsigned_trailers_pass_with_their_seed_and_a_wrong_checksum_is_bad_digest(server):
    client(server, "s3").create_bucket(Bucket="chunks")
    payload = b"".join(CHUNKS)
    unsigned = "STREAMING-UNSIGNED-PAYLOAD-TRAILER"
    good = ("x-amz-checksum-crc32", crc32_b64(payload))
    assert chunked_put(server, "chunks", "k", CHUNKS, content_sha=unsigned, trailer=good)[0] == 200
    wrong = ("x-amz-checksum-crc32", crc32_b64(b"other"))
    status, body = chunked_put(server, "chunks", "k", CHUNKS, content_sha=unsigned, trailer=wrong)
    assert status == 400 and xml_field(body, "Code") == "BadDigest"
    status, body = chunked_put(server, "chunks", "k", CHUNKS, content_sha=unsigned, trailer=good,
                               secret="wrong")
    assert status == 403 and xml_field(body, "Code") == "SignatureDoesNotMatch"


def signed_request(server, method, path, body, declared, extra=None):
    """A SigV4-signed S3 request whose x-amz-content-sha256 is `declared` whatever the body."""
    import http.client
    from botocore.auth import SigV4Auth
    from botocore.awsrequest import AWSRequest
    from botocore.credentials import Credentials

    headers = {"X-Amz-Content-SHA256": declared, "Content-Length": str(len(body)), **(extra or {})}
    req = AWSRequest(method=method, url=f"{server.endpoint}{path}", headers=headers)
    SigV4Auth(Credentials("test", "test"), "s3", "us-east-1").add_auth(req)
    conn = http.client.HTTPConnection("127.0.0.1", server.port, timeout=10)
    conn.request(method, path, body=body, headers=dict(req.headers))
    resp = conn.getresponse()
    return resp.status, resp.read()


@pytest.mark.parametrize("path", ["/sha/k", "/sha?tagging"])
def test_a_body_that_does_not_hash_to_its_declared_sha256_is_refused(server, path):
    import hashlib
    client(server, "s3").create_bucket(Bucket="sha")
    body = (b'<Tagging xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><TagSet><Tag><Key>a</Key>'
            b'<Value>b</Value></Tag></TagSet></Tagging>')
    declared = hashlib.sha256(body + b" ").hexdigest()
    status, answer = signed_request(server, "PUT", path, body, declared)
    assert status == 400 and xml_field(answer, "Code") == "XAmzContentSHA256Mismatch"
    assert xml_field(answer, "Message") == (
        "The provided 'x-amz-content-sha256' header does not match what was computed.")
    assert xml_field(answer, "ClientComputedContentSHA256") == declared
    assert xml_field(answer, "S3ComputedContentSHA256") == hashlib.sha256(body).hexdigest()
    assert signed_request(server, "PUT", path, body, hashlib.sha256(body).hexdigest())[0] in (200, 204)


@pytest.fixture
def fresh():
    """A server of its own: expiring a session moves its clock past what boto3 signs with."""
    with RotoServer("--ephemeral", "--verify-signatures") as s:
        yield s


def expire_a_session(server, call, service):
    """Credentials of a role session that worked, then expired (the clock moved past them)."""
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    client(server, "iam").create_role(RoleName="brief", AssumeRolePolicyDocument=json.dumps(trust))
    creds = client(server, "sts").assume_role(RoleArn="arn:aws:iam::000000000000:role/brief",
                                              RoleSessionName="brief", DurationSeconds=900)["Credentials"]
    session = client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    call(session)
    server.advance_clock(901)
    return creds, session


EXPIRED = "The security token included in the request is expired"


@pytest.mark.parametrize("service,call,code,status,message", [
    ("s3", lambda c: c.list_buckets(), "ExpiredToken", 400, "The provided token has expired."),
    ("dynamodb", lambda c: c.list_tables(), "ExpiredTokenException", 400, EXPIRED),
    ("lambda", lambda c: c.list_functions(), "ExpiredTokenException", 403, EXPIRED),
    ("sts", lambda c: c.get_caller_identity(), "ExpiredToken", 403, EXPIRED),
    ("sqs", lambda c: c.list_queues(), "ExpiredTokenException", 400, EXPIRED),
])
def test_an_expired_sessions_credentials_are_refused_as_each_front_end_does(fresh, service, call, code,
                                                                            status, message):
    creds, session = expire_a_session(fresh, call, service)
    error = fails(lambda: call(session), code, status, message)
    if service == "s3":
        assert error["Token-0"] == creds["SessionToken"]


def test_an_expired_session_is_refused_under_enforce_iam_too():
    with RotoServer("--ephemeral", "--enforce-iam") as s:
        _, session = expire_a_session(s, lambda c: c.get_caller_identity(), "sts")
        fails(lambda: session.get_caller_identity(), "ExpiredToken", 403, EXPIRED)
        dynamodb = boto3.client("dynamodb", endpoint_url=s.endpoint, region_name="us-east-1",
                                aws_access_key_id=session._request_signer._credentials.access_key,
                                aws_secret_access_key="anything", aws_session_token="x")
        fails(lambda: dynamodb.list_tables(), "ExpiredTokenException", 400, EXPIRED)


@pytest.mark.parametrize("version", ["s3v4", "s3"])
def test_post_form_uploads_are_signed_with_the_credentials_they_name(server, version):
    from test_s3_presign import multipart_body

    client(server, "s3").create_bucket(Bucket="forms")
    post = client(server, "s3", signature_version=version).generate_presigned_post("forms", "up")
    body, ctype = multipart_body(post["fields"], "f.txt", b"signed form")
    assert fetch(post["url"], "POST", body, {"Content-Type": ctype})[0] == 204
    assert client(server, "s3").get_object(Bucket="forms", Key="up")["Body"].read() == b"signed form"
    bad = client(server, "s3", secret="wrong", signature_version=version).generate_presigned_post("forms", "x")
    body, ctype = multipart_body(bad["fields"], "f.txt", b"forged")
    code, _, answer = fetch(bad["url"], "POST", body, {"Content-Type": ctype})
    assert code == 403 and xml_field(answer, "Code") == "SignatureDoesNotMatch"
    assert xml_field(answer, "StringToSign") == bad["fields"]["policy"]
    fails(lambda: client(server, "s3").head_object(Bucket="forms", Key="x"), "404", 404)
    unknown = client(server, "s3", key="AKIAIOSFODNN7EXAMPLE", signature_version=version)
    post = unknown.generate_presigned_post("forms", "y")
    body, ctype = multipart_body(post["fields"], "f.txt", b"x")
    code, _, answer = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 403 and xml_field(answer, "Code") == "InvalidAccessKeyId"
    anonymous, ctype = multipart_body({"key": "anon"}, "f.txt", b"public")
    assert fetch(f"{server.endpoint}/forms", "POST", anonymous, {"Content-Type": ctype})[0] == 204


def session_credentials(server):
    """Credentials of a session of a role anyone may assume."""
    trust = {"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": "*"}, "Action": "sts:AssumeRole"}]}
    client(server, "iam").create_role(RoleName="app", AssumeRolePolicyDocument=json.dumps(trust))
    return client(server, "sts").assume_role(
        RoleArn="arn:aws:iam::000000000000:role/app", RoleSessionName="run")["Credentials"]


@pytest.mark.parametrize("service, call, code, status", [
    ("sts", lambda c: c.get_caller_identity(), "InvalidClientTokenId", 403),
    ("dynamodb", lambda c: c.list_tables(), "UnrecognizedClientException", 400),
    ("lambda", lambda c: c.list_functions(), "UnrecognizedClientException", 403),
    ("s3", lambda c: c.list_buckets(), "InvalidAccessKeyId", 403),
])
def test_a_sessions_key_without_its_token_is_unknown(server, service, call, code, status):
    creds = session_credentials(server)
    bare = client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"])
    error = fails(lambda: call(bare), code, status)
    if service == "s3":
        assert error["AWSAccessKeyId"] == creds["AccessKeyId"]
    else:
        assert error["Message"] == INVALID_TOKEN


@pytest.mark.parametrize("service, call, code, status", [
    ("sts", lambda c: c.get_caller_identity(), "InvalidClientTokenId", 403),
    ("dynamodb", lambda c: c.list_tables(), "UnrecognizedClientException", 400),
    ("sns", lambda c: c.list_topics(), "InvalidClientTokenId", 403),
])
def test_a_sessions_key_with_another_token_is_refused(server, service, call, code, status):
    creds = session_credentials(server)
    other = client(server, service, creds["AccessKeyId"], creds["SecretAccessKey"], "FQoGZXIvYXdzEotherToken")
    fails(lambda: call(other), code, status, INVALID_TOKEN)


def test_s3_names_the_token_it_refuses_and_presigned_urls_carry_theirs(server):
    client(server, "s3").create_bucket(Bucket="tokens")
    client(server, "s3").put_object(Bucket="tokens", Key="k", Body=b"x")
    creds = session_credentials(server)
    other = client(server, "s3", creds["AccessKeyId"], creds["SecretAccessKey"], "FQoGZXIvYXdzEotherToken")
    error = fails(lambda: other.get_object(Bucket="tokens", Key="k"), "InvalidToken", 400,
                  "The provided token is malformed or otherwise invalid.")
    assert error["Token-0"] == "FQoGZXIvYXdzEotherToken"
    session = client(server, "s3", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    url = session.generate_presigned_url("get_object", Params={"Bucket": "tokens", "Key": "k"})
    assert "x-amz-security-token=" in url.lower()
    assert fetch(url)[0] == 200
    stripped = urllib.parse.urlsplit(url)
    query = [(k, v) for k, v in urllib.parse.parse_qsl(stripped.query) if k.lower() != "x-amz-security-token"]
    code, _, body = fetch(stripped._replace(query=urllib.parse.urlencode(query)).geturl())
    assert code == 403 and xml_field(body, "Code") == "InvalidAccessKeyId"


def test_a_post_forms_session_key_needs_its_token(server):
    from test_s3_presign import multipart_body

    client(server, "s3").create_bucket(Bucket="session-forms")
    creds = session_credentials(server)
    session = client(server, "s3", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"])
    post = session.generate_presigned_post("session-forms", "up")
    assert post["fields"]["x-amz-security-token"] == creds["SessionToken"]
    body, ctype = multipart_body(post["fields"], "f.txt", b"x")
    assert fetch(post["url"], "POST", body, {"Content-Type": ctype})[0] == 204
    other = client(server, "s3", creds["AccessKeyId"], creds["SecretAccessKey"], "FQoGZXIvYXdzEotherToken")
    body, ctype = multipart_body(other.generate_presigned_post("session-forms", "up")["fields"], "f.txt", b"x")
    code, _, answer = fetch(post["url"], "POST", body, {"Content-Type": ctype})
    assert code == 400 and xml_field(answer, "Code") == "InvalidToken"
    assert xml_field(answer, "Token-0") == "FQoGZXIvYXdzEotherToken"


@pytest.mark.parametrize("service, call", [
    ("sns", lambda c: c.create_topic(Name="v2")["TopicArn"]),
    ("sts", lambda c: c.get_caller_identity()["Account"]),
    ("iam", lambda c: c.list_users()["Users"]),
])
def test_query_protocol_sigv2_forms_are_verified(server, service, call):
    assert call(client(server, service, signature_version="v2")) is not None
    bad = client(server, service, secret="wrong", signature_version="v2")
    fails(lambda: call(bad), "SignatureDoesNotMatch", 403, MISMATCH)
    unknown = client(server, service, key="AKIAIOSFODNN7EXAMPLE", signature_version="v2")
    fails(lambda: call(unknown), "InvalidClientTokenId", 403, INVALID_TOKEN)


def test_query_protocol_sigv2_keys_choose_the_account_and_sessions_need_their_token(server):
    other = client(server, "sts", key="111122223333", signature_version="v2")
    assert other.get_caller_identity()["Account"] == "111122223333"
    creds = session_credentials(server)
    session = client(server, "sns", creds["AccessKeyId"], creds["SecretAccessKey"], creds["SessionToken"],
                     signature_version="v2")
    assert session.list_topics()["Topics"] == []
    bare = client(server, "sns", creds["AccessKeyId"], creds["SecretAccessKey"], signature_version="v2")
    fails(lambda: bare.list_topics(), "InvalidClientTokenId", 403, INVALID_TOKEN)


def test_a_query_protocol_sigv2_form_too_old_has_expired(server, monkeypatch):
    import time

    real = time.gmtime
    monkeypatch.setattr(time, "gmtime", lambda *a: real(time.time() - 20 * 60) if not a else real(*a))
    error = fails(lambda: client(server, "sns", signature_version="v2").list_topics(), "SignatureDoesNotMatch", 403)
    assert error["Message"].startswith("Signature expired: ")
    assert error["Message"].endswith(" - 15 min.)")
