"""API Gateway's data plane on Roto's port: which requests reach it (execute-api host names
and the `/_aws/execute-api/{id}/` path form), and what an id no API has answers."""

from __future__ import annotations

import http.client
import json

import pytest


def raw(server, method: str, path: str, host: str | None = None, body: bytes = b"", headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        all_headers = dict(headers or {})
        if host:
            all_headers["Host"] = host
        conn.request(method, path, body=body, headers=all_headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("host", [
    "nosuchapi1.execute-api.localhost",
    "nosuchapi1.execute-api.us-east-1.amazonaws.com",
    "nosuchapi1.execute-api.localhost.localstack.cloud",
])
def test_unknown_api_ids_answer_404_not_found_on_every_host_form(server, host):
    status, headers, body = raw(server, "GET", "/prod/items", host=f"{host}:{server.port}")
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}
    assert headers["content-type"] == "application/json"
    assert headers["x-amzn-requestid"]


def test_the_path_form_reaches_the_data_plane_and_never_s3(server, client):
    status, _, body = raw(server, "PUT", "/_aws/execute-api/nosuchapi1/prod/key", body=b"data")
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}
    assert client("s3").list_buckets()["Buckets"] == []
    signed = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00"
    status, _, body = raw(server, "PUT", "/prod/key", host="nosuchapi1.execute-api.localhost",
                          body=b"data", headers={"Authorization": signed})
    assert status == 404
    assert client("s3").list_buckets()["Buckets"] == []


def test_data_plane_requests_are_traced(server):
    raw(server, "GET", "/_aws/execute-api/nosuchapi1/prod/")
    entry = server.wait_for_trace(service="apigateway", operation="ExecuteApi")
    assert entry["status"] == 404
