"""The web console's HTTP side (/_roto/ui): the embedded page and its read-only endpoints.

The page itself runs in headless Chromium in tests/console (scripts/test.sh)."""

from __future__ import annotations

import json

import pytest


def api(server, path: str, payload: dict | None = None, headers: dict | None = None):
    if payload is None:
        status, _, body = server.request("GET", f"/_roto/ui/api/{path}", headers=headers)
    else:
        status, _, body = server.request("POST", f"/_roto/ui/api/{path}", json.dumps(payload).encode(), headers)
    return status, json.loads(body)


@pytest.mark.parametrize("path,kind", [
    ("/_roto/ui", "text/html"),
    ("/_roto/ui/", "text/html"),
    ("/_roto/ui/app.js", "text/javascript"),
    ("/_roto/ui/app.css", "text/css"),
    ("/_roto/ui/favicon.svg", "image/svg+xml"),
])
def test_the_page_is_served_from_the_binary_and_loads_only_itself(server, path, kind):
    status, headers, body = server.request("GET", path)
    assert status == 200
    assert headers["content-type"] == kind
    assert headers["content-security-policy"] == "default-src 'self'; frame-ancestors 'none'"
    assert headers["x-frame-options"] == "DENY"
    assert b"https://" not in body


def test_scopes_name_the_default_and_every_service_with_its_listings(server, client):
    client("sqs", region_name="eu-west-1").create_queue(QueueName="elsewhere")
    status, answer = api(server, "scopes")
    assert status == 200
    assert (answer["account"], answer["region"]) == ("000000000000", "us-east-1")
    scopes = {(s["account"], s["region"]) for s in answer["scopes"]}
    assert {("000000000000", "us-east-1"), ("000000000000", "eu-west-1")} <= scopes
    services = {s["name"]: s["listings"] for s in answer["services"]}
    assert "ListBuckets" in services["s3"]
    assert "ListQueues" in services["sqs"]
    assert "ListObjectsV2" not in services["s3"], "listings need no input"


def test_a_read_runs_in_the_named_scope_and_is_not_traced(server, client):
    client("s3").create_bucket(Bucket="console-bucket")
    client("sqs", region_name="eu-west-1").create_queue(QueueName="far-queue")
    traced = len(json.loads(server.request("GET", "/_roto/traces")[2])["traces"])
    status, answer = api(server, "call", {"service": "s3", "operation": "ListBuckets"})
    assert status == 200
    assert [b["Name"] for b in answer["Buckets"]] == ["console-bucket"]
    status, answer = api(server, "call", {"service": "sqs", "operation": "ListQueues", "region": "eu-west-1"})
    assert status == 200
    assert [url.rsplit("/", 1)[1] for url in answer["QueueUrls"]] == ["far-queue"]
    assert len(json.loads(server.request("GET", "/_roto/traces")[2])["traces"]) == traced


@pytest.mark.parametrize("operation", ["DeleteBucket", "CreateBucket", "PutObject", "ReceiveMessage", "GetSecretValue"])
def test_anything_but_a_read_is_refused(server, client, operation):
    client("s3").create_bucket(Bucket="kept")
    status, answer = api(server, "call", {"service": "s3", "operation": operation, "input": {"Bucket": "kept"}})
    assert status == 403
    assert "only reads" in answer["error"]
    assert [b["Name"] for b in client("s3").list_buckets()["Buckets"]] == ["kept"]


def test_aws_errors_come_back_with_their_code(server):
    status, answer = api(server, "call", {"service": "s3", "operation": "ListObjectsV2", "input": {"Bucket": "absent"}})
    assert status == 400
    assert answer["error"]["code"] == "NoSuchBucket"
    status, answer = api(server, "call", {"service": "nope", "operation": "ListThings"})
    assert status == 404


def test_peeking_at_a_queue_receives_nothing(server, client):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="peeked")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="first")
    sqs.send_message(QueueUrl=url, MessageBody="second")
    in_flight = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=1, VisibilityTimeout=60)["Messages"][0]
    status, answer = api(server, "peek", {"service": "sqs", "input": {"QueueUrl": url}})
    assert status == 200
    shown = {m["Body"]: m for m in answer["Messages"]}
    assert set(shown) == {"first", "second"}
    assert shown[in_flight["Body"]]["Visible"] is False
    assert shown[in_flight["Body"]]["ApproximateReceiveCount"] == 1
    attributes = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["All"])["Attributes"]
    assert attributes["ApproximateNumberOfMessages"] == "1"
    assert attributes["ApproximateNumberOfMessagesNotVisible"] == "1"
    again = sqs.receive_message(QueueUrl=url, AttributeNames=["ApproximateReceiveCount"])["Messages"][0]
    assert again["Attributes"]["ApproximateReceiveCount"] == "1"


def test_a_service_without_a_peek_says_so(server):
    status, answer = api(server, "peek", {"service": "s3", "input": {}})
    assert status == 400
    assert answer["error"]["code"] == "InvalidAction"


@pytest.mark.parametrize("headers", [
    {"Origin": "http://evil.test"},
    {"Sec-Fetch-Site": "cross-site"},
])
def test_cross_origin_pages_are_refused(server, headers):
    for method, path in [("GET", "/_roto/ui"), ("GET", "/_roto/ui/api/scopes"), ("POST", "/_roto/ui/api/call")]:
        status, _, _ = server.request(method, path, b"{}" if method == "POST" else b"", headers)
        assert status == 403, path


def test_a_body_that_is_not_a_json_object_is_refused(server):
    status, _, body = server.request("POST", "/_roto/ui/api/call", b"[1, 2]")
    assert status == 400
    assert "JSON object" in json.loads(body)["error"]
