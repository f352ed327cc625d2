"""Helpers the S3 test files share: raw-request auth, error accessors, expected failures."""

from __future__ import annotations

import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

AUTH = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=" + "0" * 64)


def error(exc: pytest.ExceptionInfo) -> dict:
    return exc.value.response["Error"]


def status(exc: pytest.ExceptionInfo) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def headers_of(response: dict) -> dict:
    return response["ResponseMetadata"]["HTTPHeaders"]


def fails(call, code: str, http_status: int | None = None, message: str | None = None) -> dict:
    """Runs `call`, which must raise a ClientError with `code` (and the status and message,
    when given); returns the error."""
    from botocore.exceptions import ClientError

    with pytest.raises(ClientError) as e:
        call()
    assert error(e)["Code"] == code, error(e)
    if http_status is not None:
        assert status(e) == http_status
    if message is not None:
        assert error(e)["Message"] == message
    return error(e)


def fetch(url: str, method: str = "GET", data: bytes | None = None, headers: dict | None = None):
    """One plain HTTP request to a (presigned) URL; returns (status, lower-cased headers, body)."""
    req = urllib.request.Request(url, data=data, method=method, headers=headers or {})
    try:
        with urllib.request.urlopen(req, timeout=10) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, resp.read()
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, e.read()
