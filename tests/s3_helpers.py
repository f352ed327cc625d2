"""Helpers the S3 test files share: raw-request auth, error accessors."""

from __future__ import annotations

import pytest

AUTH = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=" + "0" * 64)


def error(exc: pytest.ExceptionInfo) -> dict:
    return exc.value.response["Error"]


def status(exc: pytest.ExceptionInfo) -> int:
    return exc.value.response["ResponseMetadata"]["HTTPStatusCode"]


def headers_of(response: dict) -> dict:
    return response["ResponseMetadata"]["HTTPHeaders"]
