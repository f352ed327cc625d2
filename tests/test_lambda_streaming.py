"""Lambda's InvokeWithResponseStream through boto3's event stream reader: a function's
response as PayloadChunk events ended by InvokeComplete, its errors and its log tail."""

from __future__ import annotations

import base64
import json

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ECHO_CODE, ROLE, zip_of

FAILING = {"ZipFile": zip_of({"app.py": "def handler(event, context):\n    raise ValueError('no')\n"})}


@pytest.fixture
def lam(client):
    lam = client("lambda")
    lam.create_function(FunctionName="echo", Runtime="python3.12", Role=ROLE,
                        Handler="app.handler", Code=ECHO_CODE)
    lam.create_function(FunctionName="fails", Runtime="python3.12", Role=ROLE,
                        Handler="app.handler", Code=FAILING)
    return lam


def events_of(response):
    return list(response["EventStream"])


def test_the_response_arrives_as_chunks_then_completes(lam):
    out = lam.invoke_with_response_stream(FunctionName="echo", Payload=json.dumps({"n": 1}))
    assert out["StatusCode"] == 200
    assert out["ExecutedVersion"] == "$LATEST"
    assert out["ResponseStreamContentType"] == "application/vnd.amazon.eventstream"
    events = events_of(out)
    chunks = b"".join(e["PayloadChunk"]["Payload"] for e in events if "PayloadChunk" in e)
    assert json.loads(chunks) == {"n": 1}
    assert "InvokeComplete" in events[-1]
    assert "ErrorCode" not in events[-1]["InvokeComplete"]


def test_the_log_tail_comes_with_the_completion(lam):
    out = lam.invoke_with_response_stream(FunctionName="echo", Payload=b"{}", LogType="Tail")
    complete = events_of(out)[-1]["InvokeComplete"]
    assert "REPORT RequestId" in base64.b64decode(complete["LogResult"]).decode()


def test_a_function_error_ends_the_stream_with_its_type_and_document(lam):
    events = events_of(lam.invoke_with_response_stream(FunctionName="fails", Payload=b"{}"))
    assert [list(e) for e in events] == [["InvokeComplete"]]
    complete = events[0]["InvokeComplete"]
    assert complete["ErrorCode"] == "ValueError"
    assert json.loads(complete["ErrorDetails"])["errorMessage"] == "no"


def test_dry_run_and_refusals(lam):
    out = lam.invoke_with_response_stream(FunctionName="echo", InvocationType="DryRun")
    assert out["StatusCode"] == 204
    with pytest.raises(ClientError) as e:
        lam.invoke_with_response_stream(FunctionName="missing", Payload=b"{}")
    assert e.value.response["Error"]["Code"] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        lam.invoke_with_response_stream(FunctionName="echo", Payload=b"not json")
    assert e.value.response["Error"]["Code"] == "InvalidRequestContentException"
