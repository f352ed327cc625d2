"""--verify-signatures: SigV4 (headers and presigned URLs) and S3's SigV2 checked against the
keys IAM and STS issued (every account's root signs with `test`), refused in the words of
each protocol's front end: S3's SignatureDoesNotMatch with the string to sign and canonical
request, InvalidAccessKeyId and RequestTimeTooSkewed; the JSON and query services'
InvalidSignatureException / SignatureDoesNotMatch, UnrecognizedClientException /
InvalidClientTokenId and MissingAuthenticationToken."""

from __future__ import annotations

import datetime
import json
import urllib.parse

import boto3
import botocore.auth
import pytest
from botocore.config import Config

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


def client(server, service, key="test", secret="test", token=None, **kwargs):
    return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id=key, aws_secret_access_key=secret, aws_session_token=token,
                        config=Config(retries={"max_attempts": 1}, **kwargs))


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
