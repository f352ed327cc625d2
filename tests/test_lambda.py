"""Lambda black-box tests: function CRUD, versions, aliases, and invocations that really run
Python, Node and `provided` handlers through the process executor, with their logs in
CloudWatch Logs."""

from __future__ import annotations

import base64
import json
import os
import re
import sys
import threading
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError, WaiterError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402
from lambda_helpers import ROLE, zip_of  # noqa: E402

CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}

PY_HANDLER = '''
import json, os, time
COUNT = {"n": 0}
def handler(event, context):
    COUNT["n"] += 1
    print("got", json.dumps(event))
    if event.get("fail"):
        raise ValueError("boom: " + event["fail"])
    if event.get("sleep"):
        time.sleep(event["sleep"])
    return {"echo": event, "count": COUNT["n"], "env": os.environ.get("GREETING"),
            "name": context.function_name, "version": context.function_version,
            "arn": context.invoked_function_arn, "remaining": context.get_remaining_time_in_millis() > 0,
            "endpoint": os.environ.get("AWS_ENDPOINT_URL"), "region": os.environ.get("AWS_REGION")}
'''

NODE_HANDLER = '''
let count = 0;
exports.handler = async (event, context) => {
  count += 1;
  console.log("node got", JSON.stringify(event));
  if (event.fail) { throw new TypeError("node boom: " + event.fail); }
  return { echo: event, count, env: process.env.GREETING, name: context.functionName };
};
'''

SHELL_BOOTSTRAP = '''#!/bin/sh
set -eu
while true; do
  HEADERS="$(mktemp)"
  EVENT=$(curl -sS -D "$HEADERS" "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/next")
  ID=$(grep -i lambda-runtime-aws-request-id "$HEADERS" | tr -d '[:space:]' | cut -d: -f2)
  echo "shell handled $ID"
  curl -sS -X POST "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/$ID/response" -d "{\\"shell\\": $EVENT}" > /dev/null
done
'''




@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral", env={"ROTO_LAMBDA_RETRY_DELAY_MS": "50"}) as s:
        yield s


def make_client(server, service):
    return boto3.client(service, endpoint_url=server.endpoint,
                        config=Config(retries={"max_attempts": 1}, read_timeout=30), **CREDENTIALS)


@pytest.fixture(scope="module")
def lam(server):
    return make_client(server, "lambda")


@pytest.fixture(scope="module")
def logs(server):
    return make_client(server, "logs")


def unique(prefix: str) -> str:
    return f"{prefix}-{uuid.uuid4().hex[:8]}"


def create(lam, name=None, runtime="python3.12", handler="app.handler", files=None, **kw):
    name = name or unique("fn")
    files = files or {"app.py": PY_HANDLER}
    lam.create_function(FunctionName=name, Runtime=runtime, Role=ROLE, Handler=handler,
                        Code={"ZipFile": zip_of(files)}, **kw)
    return name


def invoke(lam, name, event, **kw):
    resp = lam.invoke(FunctionName=name, Payload=json.dumps(event).encode(), **kw)
    return resp, json.loads(resp["Payload"].read() or b"null")


@pytest.fixture(scope="module")
def py_fn(lam):
    """One warm Python function shared by the invocation tests."""
    return create(lam, name="warm-python", Environment={"Variables": {"GREETING": "hello"}}, Timeout=2)


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


# --- function CRUD -------------------------------------------------------------------------

def test_create_function_answers_pending_then_is_active(lam):
    name = unique("crud")
    config = lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                 Code={"ZipFile": zip_of({"app.py": PY_HANDLER})}, Description="d",
                                 MemorySize=256, Timeout=10, Tags={"team": "core"})
    assert config["FunctionArn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    assert (config["State"], config["StateReasonCode"]) == ("Pending", "Creating")
    assert config["StateReason"] == "The function is being created."
    assert config["Version"] == "$LATEST" and config["MemorySize"] == 256 and config["Timeout"] == 10
    assert config["CodeSize"] > 0 and len(base64.b64decode(config["CodeSha256"])) == 32
    stored = lam.get_function_configuration(FunctionName=name)
    assert stored["State"] == "Active" and stored["LastUpdateStatus"] == "Successful"
    assert "StateReason" not in stored
    got = lam.get_function(FunctionName=name)
    assert got["Configuration"]["FunctionName"] == name
    assert got["Tags"] == {"team": "core"}
    assert got["Code"]["RepositoryType"] == "S3"
    assert lam.get_function_configuration(FunctionName=config["FunctionArn"])["Handler"] == "app.handler"


def test_function_errors_are_the_real_ones(lam):
    name = create(lam)
    with pytest.raises(ClientError) as e:
        create(lam, name=name)
    assert error_of(e) == ("ResourceConflictException", f"Function already exist: {name}", 409)
    with pytest.raises(ClientError) as e:
        lam.get_function(FunctionName="missing-fn")
    assert error_of(e) == ("ResourceNotFoundException",
                           "Function not found: arn:aws:lambda:us-east-1:000000000000:function:missing-fn", 404)
    with pytest.raises(ClientError) as e:
        lam.get_function(FunctionName=name, Qualifier="9")
    assert error_of(e)[0] == "ResourceNotFoundException"
    assert error_of(e)[1].endswith(f":function:{name}:9")
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("bad"), Runtime="python3.12", Role=ROLE, Handler="a.b",
                            Code={"ZipFile": b"not a zip"})
    assert error_of(e) == ("InvalidParameterValueException",
                           "Could not unzip uploaded file. Please check your file, then try to upload again.", 400)
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("bad"), Runtime="python3.12", Role="not-a-role", Handler="a.b",
                            Code={"ZipFile": zip_of({"a.py": ""})})
    assert error_of(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("bad"), Runtime="python0", Role=ROLE, Handler="a.b",
                            Code={"ZipFile": zip_of({"a.py": ""})})
    assert error_of(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        create(lam, Environment={"Variables": {"AWS_REGION": "x"}})
    assert error_of(e)[0] == "InvalidParameterValueException"
    assert "AWS_REGION" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        lam.delete_function(FunctionName="missing-fn")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_update_code_and_configuration_then_list_and_delete(lam):
    name = create(lam)
    before = lam.get_function_configuration(FunctionName=name)
    updated = lam.update_function_configuration(FunctionName=name, Timeout=30, MemorySize=512,
                                                Environment={"Variables": {"A": "1"}}, Description="new")
    assert (updated["Timeout"], updated["MemorySize"], updated["Description"]) == (30, 512, "new")
    assert updated["Environment"] == {"Variables": {"A": "1"}}
    assert updated["RevisionId"] != before["RevisionId"]
    with pytest.raises(ClientError) as e:
        lam.update_function_configuration(FunctionName=name, Timeout=5, RevisionId=before["RevisionId"])
    assert error_of(e)[0] == "PreconditionFailedException"
    code = lam.update_function_code(FunctionName=name, ZipFile=zip_of({"app.py": PY_HANDLER + "\n# v2\n"}))
    assert code["CodeSha256"] != before["CodeSha256"] and code["Timeout"] == 30
    names = [f["FunctionName"] for p in lam.get_paginator("list_functions").paginate(PaginationConfig={"PageSize": 1})
             for f in p["Functions"]]
    assert name in names and names == sorted(names)
    assert lam.delete_function(FunctionName=name)["ResponseMetadata"]["HTTPStatusCode"] == 204
    with pytest.raises(ClientError):
        lam.get_function(FunctionName=name)


def test_code_from_s3_is_read_through_the_dispatcher(server, lam):
    s3 = make_client(server, "s3")
    s3.create_bucket(Bucket="code-bucket")
    s3.put_object(Bucket="code-bucket", Key="fn.zip", Body=zip_of({"app.py": PY_HANDLER}))
    name = unique("s3code")
    config = lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                 Code={"S3Bucket": "code-bucket", "S3Key": "fn.zip"})
    assert config["CodeSize"] == len(zip_of({"app.py": PY_HANDLER}))
    _, out = invoke(lam, name, {"from": "s3"})
    assert out["echo"] == {"from": "s3"}
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("s3code"), Runtime="python3.12", Role=ROLE, Handler="app.handler",
                            Code={"S3Bucket": "code-bucket", "S3Key": "missing.zip"})
    assert error_of(e)[0] == "InvalidParameterValueException"
    assert "NoSuchKey" in error_of(e)[1]


# --- versions and aliases ------------------------------------------------------------------

def test_versions_and_aliases_with_qualified_arns(lam):
    name = create(lam)
    v1 = lam.publish_version(FunctionName=name, Description="first")
    assert v1["Version"] == "1" and v1["FunctionArn"].endswith(f":{name}:1")
    assert lam.publish_version(FunctionName=name)["Version"] == "1"  # nothing changed
    lam.update_function_configuration(FunctionName=name, Environment={"Variables": {"GREETING": "v2"}})
    v2 = lam.publish_version(FunctionName=name)
    assert v2["Version"] == "2"
    versions = [v["Version"] for v in lam.list_versions_by_function(FunctionName=name)["Versions"]]
    assert versions == ["$LATEST", "1", "2"]
    alias = lam.create_alias(FunctionName=name, Name="live", FunctionVersion="1", Description="prod")
    assert alias["AliasArn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}:live"
    with pytest.raises(ClientError) as e:
        lam.create_alias(FunctionName=name, Name="live", FunctionVersion="1")
    assert error_of(e)[0] == "ResourceConflictException"
    with pytest.raises(ClientError) as e:
        lam.create_alias(FunctionName=name, Name="other", FunctionVersion="7")
    assert error_of(e)[0] == "ResourceNotFoundException"
    resp, out = invoke(lam, name, {}, Qualifier="live")
    assert resp["ExecutedVersion"] == "1" and out["env"] is None and out["arn"].endswith(":live")
    resp, out = invoke(lam, f"{name}:2", {})
    assert resp["ExecutedVersion"] == "2" and out["env"] == "v2"
    routed = lam.update_alias(FunctionName=name, Name="live", RoutingConfig={"AdditionalVersionWeights": {"2": 1.0}})
    assert routed["RoutingConfig"] == {"AdditionalVersionWeights": {"2": 1.0}}
    assert invoke(lam, name, {}, Qualifier="live")[0]["ExecutedVersion"] == "2"
    assert lam.get_alias(FunctionName=name, Name="live")["FunctionVersion"] == "1"
    assert [a["Name"] for a in lam.list_aliases(FunctionName=name)["Aliases"]] == ["live"]
    with pytest.raises(ClientError) as e:
        lam.delete_function(FunctionName=name, Qualifier="1")
    assert error_of(e)[0] == "ResourceConflictException"
    lam.delete_alias(FunctionName=name, Name="live")
    with pytest.raises(ClientError) as e:
        lam.get_alias(FunctionName=name, Name="live")
    assert error_of(e)[0] == "ResourceNotFoundException"
    lam.delete_function(FunctionName=name, Qualifier="1")
    assert [v["Version"] for v in lam.list_versions_by_function(FunctionName=name)["Versions"]] == ["$LATEST", "2"]


def test_tags_and_reserved_concurrency(lam):
    name = create(lam)
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    lam.tag_resource(Resource=arn, Tags={"a": "1", "b": "2"})
    lam.untag_resource(Resource=arn, TagKeys=["a"])
    assert lam.list_tags(Resource=arn)["Tags"] == {"b": "2"}
    assert lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=0)["ReservedConcurrentExecutions"] == 0
    assert lam.get_function_concurrency(FunctionName=name)["ReservedConcurrentExecutions"] == 0
    with pytest.raises(ClientError) as e:
        invoke(lam, name, {})
    assert error_of(e)[0] == "TooManyRequestsException" and error_of(e)[2] == 429
    lam.delete_function_concurrency(FunctionName=name)
    assert "ReservedConcurrentExecutions" not in lam.get_function_concurrency(FunctionName=name)
    with pytest.raises(ClientError) as e:
        lam.list_tags(Resource="arn:aws:lambda:us-east-1:000000000000:function:nope")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_sdk_waiters_pass_on_their_first_poll(lam):
    name = create(lam)
    started = time.time()
    for waiter in ("function_exists", "function_active", "function_active_v2", "function_updated", "function_updated_v2"):
        lam.get_waiter(waiter).wait(FunctionName=name)
    updated = lam.update_function_configuration(FunctionName=name, Timeout=9)
    assert (updated["LastUpdateStatus"], updated["LastUpdateStatusReasonCode"]) == ("InProgress", "Creating")
    lam.get_waiter("function_updated").wait(FunctionName=name)
    code = lam.update_function_code(FunctionName=name, ZipFile=zip_of({"app.py": PY_HANDLER + "\n# v2\n"}))
    assert code["LastUpdateStatus"] == "InProgress"
    lam.get_waiter("function_updated_v2").wait(FunctionName=name)
    version = lam.publish_version(FunctionName=name)["Version"]
    lam.get_waiter("published_version_active").wait(FunctionName=name, Qualifier=version)
    assert time.time() - started < 4  # no waiter slept its 1-5 s delay
    with pytest.raises(WaiterError):
        lam.get_waiter("function_exists").wait(FunctionName="never-created", WaiterConfig={"Delay": 1, "MaxAttempts": 1})


def test_reserved_concurrency_throttles_with_the_reason(lam):
    name = create(lam, Timeout=10)
    before = lam.get_account_settings()["AccountLimit"]
    assert before["ConcurrentExecutions"] == 1000
    lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=1)
    after = lam.get_account_settings()
    assert after["AccountLimit"]["UnreservedConcurrentExecutions"] == before["UnreservedConcurrentExecutions"] - 1
    assert after["AccountUsage"]["FunctionCount"] >= 1
    invoke(lam, name, {})  # warm, so the slow call below is busy at once
    slow = threading.Thread(target=invoke, args=(lam, name, {"sleep": 1.5}))
    slow.start()
    time.sleep(0.5)
    with pytest.raises(ClientError) as e:
        invoke(lam, name, {})
    slow.join()
    assert error_of(e) == ("TooManyRequestsException", "Rate Exceeded.", 429)
    assert e.value.response["Reason"] == "ReservedFunctionConcurrentInvocationLimitExceeded"
    assert invoke(lam, name, {})[0]["StatusCode"] == 200  # the slot is free again
    with pytest.raises(ClientError) as e:
        lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=901)
    assert error_of(e) == ("InvalidParameterValueException",
                           "Specified ReservedConcurrentExecutions for function decreases account's "
                           "UnreservedConcurrentExecution below its minimum value of [100].", 400)
    lam.delete_function_concurrency(FunctionName=name)


def test_throttled_events_are_queued_until_they_are_too_old():
    with RotoServer("--ephemeral") as server:
        lam, sqs = make_client(server, "lambda"), make_client(server, "sqs")
        dead = sqs.create_queue(QueueName="too-old")["QueueUrl"]
        dead_arn = sqs.get_queue_attributes(QueueUrl=dead, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        name = create(lam)
        lam.put_function_concurrency(FunctionName=name, ReservedConcurrentExecutions=0)
        lam.put_function_event_invoke_config(FunctionName=name, MaximumEventAgeInSeconds=60, MaximumRetryAttempts=0,
                                             DestinationConfig={"OnFailure": {"Destination": dead_arn}})
        assert lam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"late": 1}')["StatusCode"] == 202
        first = server.wait_for_delivery(service="lambda", operation="Invoke")
        assert (first["outcome"], first["error_code"]) == ("retrying", "TooManyRequestsException")
        assert not sqs.receive_message(QueueUrl=dead).get("Messages")  # throttles do not use up retries
        server.advance_clock(61)
        record = json.loads(wait_for(lambda: sqs.receive_message(QueueUrl=dead, WaitTimeSeconds=1).get("Messages"))[0]["Body"])
        assert record["requestContext"]["condition"] == "EventAgeExceeded"
        assert record["requestContext"]["approximateInvokeCount"] == 0
        assert record["requestPayload"] == {"late": 1}
        outcomes = {(e["outcome"], e.get("detail")) for e in server.traces(service="lambda", kind="delivery")
                    if e["operation"] == "Invoke"}
        assert outcomes == {("retrying", None), ("failed", "EventAgeExceeded")}


def test_the_none_executor_stores_functions_and_refuses_to_run_them():
    with RotoServer("--ephemeral", "--lambda-executor", "none") as server:
        lam = make_client(server, "lambda")
        name = create(lam)
        assert lam.get_function(FunctionName=name)["Configuration"]["State"] == "Active"
        assert lam.invoke(FunctionName=name, InvocationType="DryRun")["StatusCode"] == 204
        with pytest.raises(ClientError) as e:
            invoke(lam, name, {})
        assert error_of(e) == ("ServiceException",
                               f"Cannot invoke {name}: Roto was started with --lambda-executor none, "
                               "which stores functions without running them", 501)
        assert lam.invoke(FunctionName=name, InvocationType="Event", Payload=b"{}")["StatusCode"] == 202
        attempt = server.wait_for_delivery(service="lambda", operation="Invoke")
        assert (attempt["outcome"], attempt["error_code"]) == ("retrying", "ServiceException")


# --- invocations ---------------------------------------------------------------------------

def test_python_handler_runs_and_stays_warm(lam, py_fn):
    resp, out = invoke(lam, py_fn, {"hello": "world"})
    assert resp["StatusCode"] == 200 and "FunctionError" not in resp
    assert resp["ExecutedVersion"] == "$LATEST"
    assert out["echo"] == {"hello": "world"} and out["env"] == "hello"
    assert out["name"] == py_fn and out["version"] == "$LATEST" and out["remaining"]
    assert out["region"] == "us-east-1" and out["endpoint"].startswith("http://127.0.0.1:")
    _, again = invoke(lam, py_fn, {})
    assert again["count"] == out["count"] + 1  # the same warm process served it


def test_python_error_is_unhandled_with_the_real_document(lam, logs, py_fn):
    resp, out = invoke(lam, py_fn, {"fail": "bad input"})
    assert resp["StatusCode"] == 200 and resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == "ValueError" and out["errorMessage"] == "boom: bad input"
    assert any("raise ValueError" in frame for frame in out["stackTrace"])
    request_id = resp["ResponseMetadata"]["RequestId"]
    assert out["requestId"] == request_id
    assert wait_for(lambda: any(m.startswith("REPORT") for m in logged_lines(logs, py_fn, request_id)))
    _, ok = invoke(lam, py_fn, {})
    assert ok["echo"] == {}  # the instance survived its handler's exception


def test_log_tail_and_cloudwatch_logs(lam, logs, py_fn):
    resp, _ = invoke(lam, py_fn, {"tail": True}, LogType="Tail")
    text = base64.b64decode(resp["LogResult"]).decode()
    lines = text.strip().split("\n")
    assert lines[0].startswith("START RequestId: ") and "Version: $LATEST" in lines[0]
    assert 'got {"tail": true}' in text
    assert lines[-2].startswith("END RequestId: ")
    assert lines[-1].startswith("REPORT RequestId: ") and "Billed Duration:" in lines[-1] and "Memory Size: 128 MB" in lines[-1]
    assert 1 <= int(re.search(r"\tMax Memory Used: (\d+) MB", lines[-1]).group(1)) <= 128
    request_id = resp["ResponseMetadata"]["RequestId"]
    assert request_id in lines[0]
    group = f"/aws/lambda/{py_fn}"
    deadline = time.time() + 5
    messages = []
    while time.time() < deadline:
        try:
            events = logs.filter_log_events(logGroupName=group, filterPattern=f'"{request_id}"')["events"]
        except ClientError:
            events = []
        messages = [e["message"] for e in events]
        if any(m.startswith("REPORT") for m in messages):
            break
        time.sleep(0.05)
    assert messages[0].startswith("START") and messages[-1].startswith("REPORT")
    stream = logs.describe_log_streams(logGroupName=group)["logStreams"][0]["logStreamName"]
    assert "/[$LATEST]" in stream


def test_timeout_is_enforced_and_reported(lam, py_fn):
    start = time.time()
    resp, out = invoke(lam, py_fn, {"sleep": 5}, LogType="Tail")
    assert time.time() - start < 4.5
    assert resp["FunctionError"] == "Unhandled"
    assert re.fullmatch(r"\S+Z [0-9a-f-]+ Task timed out after 2\.\d\d seconds", out["errorMessage"]), out
    log = base64.b64decode(resp["LogResult"]).decode()
    assert re.search(r"Task timed out after 2\.\d\d seconds", log)
    assert log.strip().split("\n")[-1].endswith("\tStatus: timeout")
    _, ok = invoke(lam, py_fn, {})  # a fresh instance replaces the killed one
    assert ok["echo"] == {}


def test_dry_run_and_bad_payload(lam, py_fn):
    resp = lam.invoke(FunctionName=py_fn, InvocationType="DryRun")
    assert resp["StatusCode"] == 204
    with pytest.raises(ClientError) as e:
        lam.invoke(FunctionName=py_fn, Payload=b"{not json")
    assert error_of(e)[0] == "InvalidRequestContentException"
    with pytest.raises(ClientError) as e:
        lam.invoke(FunctionName="no-such-function", Payload=b"{}")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_event_invocations_run_in_the_background_with_retries(server, lam, logs):
    name = create(lam)
    resp = lam.invoke(FunctionName=name, InvocationType="Event", Payload=json.dumps({"async": 1}).encode())
    assert resp["StatusCode"] == 202
    failing = lam.invoke(FunctionName=name, InvocationType="Event", Payload=json.dumps({"fail": "async"}).encode())
    assert failing["StatusCode"] == 202
    deadline = time.time() + 10
    attempts = []
    while time.time() < deadline:
        entries = server.traces(service="lambda", kind="delivery")
        attempts = [e for e in entries if e.get("target", "").endswith(f":function:{name}")]
        if sum(1 for e in attempts if e["outcome"] == "failed") == 1 and any(e["outcome"] == "delivered" for e in attempts):
            break
        time.sleep(0.1)
    outcomes = sorted(e["outcome"] for e in attempts)
    assert outcomes == ["delivered", "failed", "retrying", "retrying"]


def test_node_handler_success_and_error(lam):
    name = create(lam, runtime="nodejs20.x", handler="index.handler", files={"index.js": NODE_HANDLER},
                  Environment={"Variables": {"GREETING": "hi node"}})
    resp, out = invoke(lam, name, {"n": 1}, LogType="Tail")
    assert "FunctionError" not in resp
    assert out == {"echo": {"n": 1}, "count": 1, "env": "hi node", "name": name}
    log = base64.b64decode(resp["LogResult"]).decode()
    assert "\tINFO\tnode got {\"n\":1}" in log
    _, again = invoke(lam, name, {})
    assert again["count"] == 2
    resp, err = invoke(lam, name, {"fail": "x"})
    assert resp["FunctionError"] == "Unhandled"
    assert err["errorType"] == "TypeError" and err["errorMessage"] == "node boom: x"
    assert isinstance(err["trace"], list) and err["trace"][0].startswith("TypeError: node boom")


def test_node_console_levels_are_lambdas(lam):
    handler = ("exports.handler = async () => { console.warn('careful %d', 1); console.error('bad');"
               " console.debug('dbg'); console.trace('deep'); return 1; };\n")
    name = create(lam, runtime="nodejs20.x", handler="index.handler", files={"index.js": handler})
    resp, _ = invoke(lam, name, {}, LogType="Tail")
    request_id = resp["ResponseMetadata"]["RequestId"]
    log = base64.b64decode(resp["LogResult"]).decode()
    for level, message in [("WARN", "careful 1"), ("ERROR", "bad"), ("DEBUG", "dbg"), ("TRACE", "deep")]:
        assert re.search(r"\d{4}-\d\d-\d\dT[\d:.]+Z\t%s\t%s\t%s\n" % (request_id, level, message), log), log


def test_provided_runtime_runs_the_bootstrap(lam):
    name = unique("shell")
    lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                        Code={"ZipFile": zip_of({"bootstrap": SHELL_BOOTSTRAP}, {"bootstrap": 0o755})})
    resp, out = invoke(lam, name, {"k": "v"}, LogType="Tail")
    assert out == {"shell": {"k": "v"}}
    assert "shell handled" in base64.b64decode(resp["LogResult"]).decode()


def test_a_stopped_server_leaves_no_runtime_running():
    handler = "import os\ndef handler(event, context):\n    return os.getpid()\n"
    with RotoServer("--ephemeral") as s:
        lam = make_client(s, "lambda")
        python = create(lam, files={"app.py": handler})
        node = create(lam, runtime="nodejs20.x", handler="index.handler",
                      files={"index.js": "exports.handler = async () => process.pid;\n"})
        pids = [invoke(lam, python, {})[1], invoke(lam, node, {})[1]]
        for pid in pids:
            os.kill(pid, 0)
        assert s.stop() == 0
    for pid in pids:
        with pytest.raises(ProcessLookupError):
            os.kill(pid, 0)


def test_provided_runtime_runs_a_bootstrap_from_a_layer(lam):
    layer = lam.publish_layer_version(LayerName=unique("runtime"), CompatibleRuntimes=["provided.al2023"],
                                      Content={"ZipFile": zip_of({"bootstrap": SHELL_BOOTSTRAP}, {"bootstrap": 0o755})})
    name = unique("layer-shell")
    lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                        Code={"ZipFile": zip_of({"README": "code without a bootstrap"})},
                        Layers=[layer["LayerVersionArn"]])
    assert invoke(lam, name, {"from": "layer"})[1] == {"shell": {"from": "layer"}}


@pytest.mark.parametrize("files, modes, reason", [
    ({"README": "no bootstrap"}, {}, "Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]"),
    ({"bootstrap": SHELL_BOOTSTRAP}, {"bootstrap": 0o644}, "fork/exec /var/task/bootstrap: permission denied"),
    ({"bootstrap": "not a program"}, {"bootstrap": 0o755}, "fork/exec /var/task/bootstrap: exec format error"),
])
def test_a_bootstrap_that_cannot_run_is_an_invalid_entrypoint(lam, logs, files, modes, reason):
    name = unique("bad-entry")
    lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                        Code={"ZipFile": zip_of(files, modes)})
    resp, out = invoke(lam, name, {}, LogType="Tail")
    assert resp["StatusCode"] == 200 and resp["FunctionError"] == "Unhandled"
    request_id = resp["ResponseMetadata"]["RequestId"]
    assert out == {"errorType": "Runtime.InvalidEntrypoint", "errorMessage": f"RequestId: {request_id} Error: {reason}"}
    log = base64.b64decode(resp["LogResult"]).decode()
    assert f"RequestId: {request_id} Error: {reason}" in log
    assert "Status: error\tError Type: Runtime.InvalidEntrypoint" in log


@pytest.mark.parametrize("source, error_type, message", [
    ("exports.handler = async () => {;\n", "Runtime.UserCodeSyntaxError", "SyntaxError: "),
    ("require('no-such-package');\nexports.handler = async () => 1;\n", "Runtime.ImportModuleError",
     "Error: Cannot find module 'no-such-package'"),
    ("throw new TypeError('no configuration');\n", "TypeError", "no configuration"),
])
def test_node_init_failures_are_sorted_as_lambda_does(lam, source, error_type, message):
    fn = create(lam, runtime="nodejs20.x", handler="index.handler", files={"index.js": source})
    resp, out = invoke(lam, fn, {})
    assert resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == error_type
    assert out["errorMessage"].startswith(message), out


def test_payloads_over_the_invocation_limits_are_refused(lam, py_fn):
    big = json.dumps("x" * (6 * 1024 * 1024)).encode()
    with pytest.raises(ClientError) as e:
        lam.invoke(FunctionName=py_fn, Payload=big)
    assert error_of(e) == ("RequestTooLargeException", "Request must be smaller than 6291456 bytes for the InvokeFunction operation", 413)
    event = json.dumps("x" * (1024 * 1024)).encode()
    with pytest.raises(ClientError) as e:
        lam.invoke(FunctionName=py_fn, InvocationType="Event", Payload=event)
    assert error_of(e) == ("RequestTooLargeException",
                           f"{len(event)} byte payload is too large for the Event invocation type (limit 1048576 bytes)", 413)


def test_a_response_over_the_limit_is_a_function_error(lam):
    fn = create(lam, files={"app.py": "def handler(event, context):\n    return 'x' * event['n']\n"})
    resp, out = invoke(lam, fn, {"n": 6291556 - 1})  # with its quotes, one byte over
    assert resp["FunctionError"] == "Unhandled"
    assert out == {"errorMessage": "Response payload size exceeded maximum allowed payload size (6291556 bytes).",
                   "errorType": "Function.ResponseSizeTooLarge"}
    assert invoke(lam, fn, {"n": 6291556 - 2})[1] == "x" * (6291556 - 2)


def test_import_errors_and_missing_handlers(lam):
    broken = create(lam, files={"app.py": "import does_not_exist\n"})
    resp, out = invoke(lam, broken, {})
    assert resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == "Runtime.ImportModuleError"
    assert out["errorMessage"].startswith("Unable to import module 'app'")
    missing = create(lam, handler="app.nope")
    _, out = invoke(lam, missing, {})
    assert out["errorType"] == "Runtime.HandlerNotFound"
    syntax = create(lam, files={"app.py": "def handler(event, context)\n    return 1\n"})
    _, out = invoke(lam, syntax, {})
    assert out["errorType"] == "Runtime.UserCodeSyntaxError"
    assert out["errorMessage"].startswith("Syntax error in module 'app': ")
    assert out["stackTrace"][0].startswith('  File "') and " Line 1\n" in out["stackTrace"][0]
    failing = create(lam, files={"app.py": "raise RuntimeError('no configuration')\n"})
    resp, out = invoke(lam, failing, {})
    assert resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == "RuntimeError" and out["errorMessage"] == "no configuration"
    builtin = create(lam, handler="sys.handler")
    _, out = invoke(lam, builtin, {})
    assert out == {"errorType": "Runtime.BuiltInModuleConflict", "errorMessage": "Cannot use built-in module sys as a handler module",
                   "requestId": "", "stackTrace": []}


LOGGING_HANDLER = '''
import logging
logging.basicConfig(level=logging.DEBUG)  # Lambda's root logger has its handler already
logger = logging.getLogger()
logger.setLevel(logging.INFO)
def handler(event, context):
    logger.info("processing %s", event["id"])
    logging.getLogger("app.db").debug("below the level")
    return "ok"
'''


def test_python_logging_writes_lambdas_log_lines(lam):
    fn = create(lam, files={"app.py": LOGGING_HANDLER})
    resp, out = invoke(lam, fn, {"id": 7}, LogType="Tail")
    assert out == "ok"
    request_id = resp["ResponseMetadata"]["RequestId"]
    lines = base64.b64decode(resp["LogResult"]).decode().splitlines()
    logged = [line for line in lines if "processing 7" in line]
    assert len(logged) == 1, lines
    assert re.fullmatch(r"\[INFO\]\t\d{4}-\d\d-\d\dT\d\d:\d\d:\d\d\.\d{3}Z\t%s\tprocessing 7" % request_id, logged[0])
    assert not any("below the level" in line for line in lines)


CONTEXT_HANDLER = '''
def handler(event, context):
    cc = context.client_context
    return {"custom": cc and cc.custom, "env": cc and cc.env,
            "app": cc and cc.client and cc.client.app_title,
            "identity": [context.identity.cognito_identity_id, context.identity.cognito_identity_pool_id]}
'''


def test_client_context_reaches_the_handler_decoded(lam):
    fn = create(lam, files={"app.py": CONTEXT_HANDLER})
    document = {"custom": {"tenant": "t-1"}, "env": {"locale": "en"}, "client": {"app_title": "shop"}}
    encoded = base64.b64encode(json.dumps(document).encode()).decode()
    _, out = invoke(lam, fn, {}, ClientContext=encoded)
    assert out == {"custom": {"tenant": "t-1"}, "env": {"locale": "en"}, "app": "shop", "identity": [None, None]}
    assert invoke(lam, fn, {})[1] == {"custom": None, "env": None, "app": None, "identity": [None, None]}
    node = create(lam, runtime="nodejs20.x", handler="index.handler",
                  files={"index.js": "exports.handler = async (e, context) => context.clientContext ?? null;\n"})
    assert invoke(lam, node, {}, ClientContext=encoded)[1] == document
    assert invoke(lam, node, {})[1] is None


RESULTS_HANDLER = '''
from decimal import Decimal
def handler(event, context):
    if event.get("set"):
        return {1, 2}
    return {"price": Decimal("12.5"), "count": Decimal("3"), "name": "caf\u00e9 \u2603"}
'''


@pytest.mark.parametrize("runtime, name", [
    ("python3.12", '"caf\u00e9 \u2603"'),
    ("python3.11", '"caf\\u00e9 \\u2603"'),
])
def test_results_are_marshalled_as_lambdas_python_runtime_does(lam, runtime, name):
    fn = create(lam, runtime=runtime, files={"app.py": RESULTS_HANDLER})
    resp = lam.invoke(FunctionName=fn, Payload=b"{}")
    assert "FunctionError" not in resp
    assert resp["Payload"].read().decode() == '{"price": 12.5, "count": 3.0, "name": %s}' % name
    resp, out = invoke(lam, fn, {"set": True})
    assert resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == "Runtime.MarshalError"
    assert out["errorMessage"] == "Unable to marshal response: Object of type set is not JSON serializable"
    assert out["requestId"] == resp["ResponseMetadata"]["RequestId"]


def test_handler_reaches_roto_through_boto3(server, lam):
    site = next(p for p in sys.path if p.endswith("site-packages"))
    handler = '''
import boto3
def handler(event, context):
    s3 = boto3.client("s3")
    s3.put_object(Bucket=event["bucket"], Key="from-lambda", Body=b"hi")
    return s3.get_object(Bucket=event["bucket"], Key="from-lambda")["Body"].read().decode()
'''
    make_client(server, "s3").create_bucket(Bucket="lambda-writes")
    name = create(lam, files={"app.py": handler}, Timeout=20, Environment={"Variables": {"PYTHONPATH": site}})
    resp, out = invoke(lam, name, {"bucket": "lambda-writes"})
    assert "FunctionError" not in resp, out
    assert out == "hi"


def test_aws_cli_invoke(server, tmp_path, py_fn):
    import subprocess
    env = dict(os.environ, AWS_ACCESS_KEY_ID="test", AWS_SECRET_ACCESS_KEY="test", AWS_DEFAULT_REGION="us-east-1",
               AWS_ENDPOINT_URL=server.endpoint, AWS_PAGER="")
    cli = os.path.join(os.path.dirname(sys.executable), "aws")
    out_file = tmp_path / "out.json"
    proc = subprocess.run([cli, "lambda", "invoke", "--function-name", py_fn,
                           "--payload", '{"cli": true}', str(out_file)], capture_output=True, text=True, env=env, timeout=60)
    assert proc.returncode == 0, proc.stderr
    assert json.loads(proc.stdout)["StatusCode"] == 200
    assert json.loads(out_file.read_text())["echo"] == {"cli": True}


# --- event source mappings -----------------------------------------------------------------

SQS_HANDLER = '''
import json
def handler(event, context):
    failures = []
    for r in event["Records"]:
        body = json.loads(r["body"])
        print("record", r["messageId"], r["eventSource"], r["body"])
        if body.get("fail"):
            failures.append({"itemIdentifier": r["messageId"]})
    return {"batchItemFailures": failures}
'''


def logged_lines(logs, function, term):
    """The log lines of `function` containing `term` ([] while its log group is missing)."""
    try:
        events = logs.filter_log_events(logGroupName=f"/aws/lambda/{function}", filterPattern=f'"{term}"')["events"]
    except ClientError:
        return []
    return [e["message"] for e in events]


def wait_for(predicate, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def test_sqs_event_source_mapping_end_to_end(server, lam, logs):
    sqs = make_client(server, "sqs")
    url = sqs.create_queue(QueueName=unique("jobs"), Attributes={"VisibilityTimeout": "1"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    name = create(lam, files={"app.py": SQS_HANDLER})
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name, BatchSize=5,
                                              FunctionResponseTypes=["ReportBatchItemFailures"])
    assert mapping["State"] == "Creating" and mapping["BatchSize"] == 5
    assert mapping["FunctionArn"].endswith(f":function:{name}")
    uuid_ = mapping["UUID"]
    assert lam.get_event_source_mapping(UUID=uuid_)["State"] == "Enabled"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name)
    assert error_of(e)[0] == "ResourceConflictException"
    assert [m["UUID"] for m in lam.list_event_source_mappings(FunctionName=name)["EventSourceMappings"]] == [uuid_]
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"ok": 1}))
    sqs.send_message(QueueUrl=url, MessageBody=json.dumps({"fail": 1}))

    def remaining():
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                        "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])

    # The succeeded message is deleted; the reported failure stays and is retried.
    assert wait_for(lambda: remaining() == 1)
    group = f"/aws/lambda/{name}"
    printed = wait_for(lambda: [e["message"] for e in logs.filter_log_events(logGroupName=group, filterPattern='"record"')["events"]]
                       if logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"] else [])
    assert any("aws:sqs" in m for m in printed)
    lam.update_event_source_mapping(UUID=uuid_, Enabled=False)
    assert lam.get_event_source_mapping(UUID=uuid_)["State"] == "Disabled"
    deleted = lam.delete_event_source_mapping(UUID=uuid_)
    assert deleted["State"] == "Deleting"
    with pytest.raises(ClientError) as e:
        lam.get_event_source_mapping(UUID=uuid_)
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_sqs_mapping_filters_delete_what_they_do_not_pass(server, lam, logs):
    sqs = make_client(server, "sqs")
    url = sqs.create_queue(QueueName=unique("filtered"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    name = create(lam, files={"app.py": "def handler(event, context):\n"
                                         "    for r in event['Records']:\n"
                                         "        print('record', r['eventSource'], r['body'])\n"})
    filters = [{"Pattern": json.dumps({"body": {"ok": [{"numeric": [">", 1]}]}})},
               {"Pattern": json.dumps({"body": ["plain"]})}]
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name,
                                        FilterCriteria={"Filters": [{"Pattern": "{\"body\": {\"x\": [{\"nope\": 1}]}}"}]})
    assert error_of(e) == ("InvalidParameterValueException", "Invalid filter pattern definition.", 400)
    for body in (json.dumps({"ok": 1}), json.dumps({"ok": 5}), "plain", "other"):
        sqs.send_message(QueueUrl=url, MessageBody=body)
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name, BatchSize=10,
                                              FilterCriteria={"Filters": filters})

    def remaining():
        attrs = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["ApproximateNumberOfMessages",
                                                                        "ApproximateNumberOfMessagesNotVisible"])["Attributes"]
        return int(attrs["ApproximateNumberOfMessages"]) + int(attrs["ApproximateNumberOfMessagesNotVisible"])

    assert wait_for(lambda: remaining() == 0)
    bodies = wait_for(lambda: (b := [m for m in logged_lines(logs, name, "record") if "aws:sqs" in m])
                      and len(b) >= 2 and b)
    assert len(bodies) == 2
    assert any(m.endswith('aws:sqs {"ok": 5}') for m in bodies) and any(m.endswith("aws:sqs plain") for m in bodies)
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_event_source_mapping_errors(lam):
    name = create(lam)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn="arn:aws:sqs:us-east-1:000000000000:q", FunctionName="nope")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn="arn:aws:sqs:us-east-1:000000000000:q", FunctionName=name, BatchSize=50)
    assert error_of(e)[0] == "InvalidParameterValueException"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn="arn:aws:kinesis:us-east-1:000000000000:stream/s",
                                        FunctionName=name, StartingPosition="LATEST")
    assert error_of(e)[0] == "InvalidParameterValueException"


# --- destinations and permissions ----------------------------------------------------------

def test_async_destinations_receive_success_and_failure_records(server, lam):
    sqs = make_client(server, "sqs")
    ok_url = sqs.create_queue(QueueName=unique("ok"))["QueueUrl"]
    bad_url = sqs.create_queue(QueueName=unique("bad"))["QueueUrl"]
    arn_of = lambda url: sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    name = create(lam)
    config = lam.put_function_event_invoke_config(
        FunctionName=name, MaximumRetryAttempts=0,
        DestinationConfig={"OnSuccess": {"Destination": arn_of(ok_url)}, "OnFailure": {"Destination": arn_of(bad_url)}})
    assert config["FunctionArn"].endswith(f":function:{name}:$LATEST") and config["MaximumRetryAttempts"] == 0
    assert lam.get_function_event_invoke_config(FunctionName=name)["DestinationConfig"]["OnSuccess"]["Destination"] == arn_of(ok_url)
    lam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"hello": 1}')
    lam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"fail": "dest"}')

    def one(url):
        return wait_for(lambda: sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages"))[0]

    success = json.loads(one(ok_url)["Body"])
    assert success["requestContext"]["condition"] == "Success"
    assert success["requestPayload"] == {"hello": 1} and success["responsePayload"]["echo"] == {"hello": 1}
    failure = json.loads(one(bad_url)["Body"])
    assert failure["requestContext"]["condition"] == "RetriesExhausted"
    assert failure["requestContext"]["approximateInvokeCount"] == 1
    assert failure["responseContext"]["functionError"] == "Unhandled"
    assert failure["responsePayload"]["errorType"] == "ValueError"
    with pytest.raises(ClientError) as e:
        lam.put_function_event_invoke_config(FunctionName=name, DestinationConfig={"OnSuccess": {"Destination": "arn:aws:s3:::b"}})
    assert error_of(e)[0] == "InvalidParameterValueException"
    lam.delete_function_event_invoke_config(FunctionName=name)
    with pytest.raises(ClientError) as e:
        lam.get_function_event_invoke_config(FunctionName=name)
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_permissions_build_a_resource_policy(lam):
    name = create(lam)
    with pytest.raises(ClientError) as e:
        lam.get_policy(FunctionName=name)
    assert error_of(e)[0] == "ResourceNotFoundException"
    statement = json.loads(lam.add_permission(FunctionName=name, StatementId="s3", Action="lambda:InvokeFunction",
                                              Principal="s3.amazonaws.com", SourceArn="arn:aws:s3:::bucket")["Statement"])
    assert statement["Principal"] == {"Service": "s3.amazonaws.com"}
    assert statement["Condition"] == {"ArnLike": {"AWS:SourceArn": "arn:aws:s3:::bucket"}}
    with pytest.raises(ClientError) as e:
        lam.add_permission(FunctionName=name, StatementId="s3", Action="lambda:InvokeFunction", Principal="sns.amazonaws.com")
    assert error_of(e)[0] == "ResourceConflictException"
    policy = json.loads(lam.get_policy(FunctionName=name)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["s3"]
    lam.remove_permission(FunctionName=name, StatementId="s3")
    with pytest.raises(ClientError) as e:
        lam.remove_permission(FunctionName=name, StatementId="s3")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_sns_subscription_invokes_the_function(server, lam, logs):
    sns = make_client(server, "sns")
    topic = sns.create_topic(Name=unique("topic"))["TopicArn"]
    name = create(lam)
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    sns.subscribe(TopicArn=topic, Protocol="lambda", Endpoint=arn)
    sns.publish(TopicArn=topic, Message="hello lambda")
    group = f"/aws/lambda/{name}"

    def printed():
        if not logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]:
            return []
        return [e["message"] for e in logs.filter_log_events(logGroupName=group, filterPattern='"aws:sns"')["events"]]

    lines = wait_for(printed)
    assert lines and "hello lambda" in lines[0]


def test_layers_are_published_and_unpacked_for_the_runtime(lam):
    layer = lam.publish_layer_version(LayerName="helpers", Description="shared code", CompatibleRuntimes=["python3.12"],
                                      Content={"ZipFile": zip_of({"python/helper.py": "def greet(n):\n    return 'hi ' + n\n"})})
    assert layer["Version"] >= 1 and layer["LayerVersionArn"].endswith(f":layer:helpers:{layer['Version']}")
    assert layer["Content"]["CodeSize"] > 0
    assert lam.get_layer_version_by_arn(Arn=layer["LayerVersionArn"])["Description"] == "shared code"
    assert any(l["LayerName"] == "helpers" for l in lam.list_layers(CompatibleRuntime="python3.12")["Layers"])
    handler = "import helper\ndef handler(event, context):\n    return helper.greet(event['name'])\n"
    name = create(lam, files={"app.py": handler}, Layers=[layer["LayerVersionArn"]])
    assert lam.get_function_configuration(FunctionName=name)["Layers"][0]["Arn"] == layer["LayerVersionArn"]
    assert invoke(lam, name, {"name": "layer"})[1] == "hi layer"
    with pytest.raises(ClientError) as e:
        create(lam, Layers=["arn:aws:lambda:us-east-1:000000000000:layer:missing:1"])
    assert error_of(e)[0] == "InvalidParameterValueException"
    lam.delete_layer_version(LayerName="helpers", VersionNumber=layer["Version"])
    with pytest.raises(ClientError) as e:
        lam.get_layer_version(LayerName="helpers", VersionNumber=layer["Version"])
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_log_subscription_filter_delivers_gzipped_events_to_lambda(server, lam, logs):
    handler = '''
import base64, gzip, json
def handler(event, context):
    data = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    print("SUBSCRIBED", data["logGroup"], data["subscriptionFilters"][0], [e["message"] for e in data["logEvents"]])
    return data["messageType"]
'''
    name = create(lam, files={"app.py": handler})
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    group = unique("/app/subscribed")
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    logs.put_subscription_filter(logGroupName=group, filterName="errors", filterPattern="ERROR", destinationArn=arn)
    assert [f["filterName"] for f in logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"]] == ["errors"]
    now = int(time.time() * 1000)
    logs.put_log_events(logGroupName=group, logStreamName="s", logEvents=[
        {"timestamp": now, "message": "INFO fine"}, {"timestamp": now + 1, "message": "ERROR broken"}])
    fn_group = f"/aws/lambda/{name}"

    def printed():
        if not logs.describe_log_groups(logGroupNamePrefix=fn_group)["logGroups"]:
            return []
        return [e["message"] for e in logs.filter_log_events(logGroupName=fn_group, filterPattern="SUBSCRIBED")["events"]]

    lines = wait_for(printed)
    assert lines and f"SUBSCRIBED {group} errors ['ERROR broken']" in lines[0]
    logs.delete_subscription_filter(logGroupName=group, filterName="errors")
    with pytest.raises(ClientError) as e:
        logs.delete_subscription_filter(logGroupName=group, filterName="errors")
    assert error_of(e)[0] == "ResourceNotFoundException"


def test_subscription_filters_see_original_or_transformed_events_as_asked(server, lam, logs):
    handler = '''
import base64, gzip, json
def handler(event, context):
    data = json.loads(gzip.decompress(base64.b64decode(event["awslogs"]["data"])))
    print("SUBSCRIBED", data["subscriptionFilters"][0], json.dumps([e["message"] for e in data["logEvents"]]))
'''
    name = create(lam, files={"app.py": handler})
    arn = lam.get_function(FunctionName=name)["Configuration"]["FunctionArn"]
    group = unique("/app/shaped")
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    logs.put_transformer(logGroupIdentifier=group, transformerConfig=[
        {"grok": {"match": "%{LOGLEVEL:level} %{GREEDYDATA:text}"}}])
    logs.put_subscription_filter(logGroupName=group, filterName="original", filterPattern="ERROR",
                                 destinationArn=arn)
    logs.put_subscription_filter(logGroupName=group, filterName="shaped", filterPattern='{ $.level = "ERROR" }',
                                 destinationArn=arn, applyOnTransformedLogs=True)
    filters = logs.describe_subscription_filters(logGroupName=group)["subscriptionFilters"]
    assert [f.get("applyOnTransformedLogs") for f in filters] == [False, True]
    logs.put_log_events(logGroupName=group, logStreamName="s", logEvents=[
        {"timestamp": int(time.time() * 1000), "message": "ERROR broken"}])
    fn_group = f"/aws/lambda/{name}"

    def printed():
        if not logs.describe_log_groups(logGroupNamePrefix=fn_group)["logGroups"]:
            return []
        lines = [e["message"] for e in logs.filter_log_events(logGroupName=fn_group, filterPattern="SUBSCRIBED")["events"]]
        return lines if len(lines) == 2 else []

    lines = sorted(wait_for(printed))
    assert 'SUBSCRIBED original ["ERROR broken"]' in lines[0]
    assert 'SUBSCRIBED shaped ["{\\"level\\":\\"ERROR\\",\\"text\\":\\"broken\\"}"]' in lines[1]


# --- function URLs -------------------------------------------------------------------------

URL_HANDLER = '''
def handler(event, context):
    if event["rawPath"] == "/fail":
        raise RuntimeError("url boom")
    if event["rawPath"] == "/shaped":
        return {"statusCode": 201, "headers": {"Content-Type": "text/plain", "X-Made": "yes"},
                "cookies": ["s=1; Path=/"], "body": "made " + event["body"]}
    return {"event": event, "arn": context.invoked_function_arn}
'''


def url_request(server, url, method="GET", path="/", body=b"", headers=None):
    host = url.split("//", 1)[1].rstrip("/")
    status, got, data = server.request(method, path, body, {"Host": host, **(headers or {})})
    return status, got, data


def test_function_url_configuration_and_its_errors(server, lam):
    name = create(lam, files={"app.py": URL_HANDLER})
    created = lam.create_function_url_config(FunctionName=name, AuthType="NONE",
                                             Cors={"AllowOrigins": ["https://app.example"], "MaxAge": 60})
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert re.fullmatch(rf"http://[a-z0-9]{{32}}\.lambda-url\.us-east-1\.localhost:{server.port}/", created["FunctionUrl"])
    assert created["FunctionArn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    assert (created["AuthType"], created["InvokeMode"]) == ("NONE", "BUFFERED")
    assert created["Cors"] == {"AllowOrigins": ["https://app.example"], "MaxAge": 60}
    with pytest.raises(ClientError) as e:
        lam.create_function_url_config(FunctionName=name, AuthType="NONE")
    assert error_of(e) == ("ResourceConflictException",
                           f"Failed to create function url config for [functionArn = {created['FunctionArn']}]. "
                           "Error message:  FunctionUrlConfig exists for this Lambda function", 409)
    with pytest.raises(ClientError) as e:
        lam.create_function_url_config(FunctionName=name, Qualifier="1", AuthType="NONE")
    assert error_of(e)[0] == "ValidationException" and "'qualifier'" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        lam.create_function_url_config(FunctionName="no-such-fn", AuthType="NONE")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        lam.get_function_url_config(FunctionName=name, Qualifier="nolias")
    assert error_of(e)[0] == "ResourceNotFoundException"
    got = lam.get_function_url_config(FunctionName=name)
    assert got["FunctionUrl"] == created["FunctionUrl"] and got["LastModifiedTime"] >= got["CreationTime"]
    updated = lam.update_function_url_config(FunctionName=name, AuthType="AWS_IAM")
    assert updated["AuthType"] == "AWS_IAM" and updated["Cors"] == created["Cors"]
    lam.publish_version(FunctionName=name)
    lam.create_alias(FunctionName=name, Name="live", FunctionVersion="1")
    live = lam.create_function_url_config(FunctionName=name, Qualifier="live", AuthType="NONE")
    assert live["FunctionArn"].endswith(f":{name}:live") and live["FunctionUrl"] != created["FunctionUrl"]
    listed = lam.list_function_url_configs(FunctionName=name)["FunctionUrlConfigs"]
    assert [c["FunctionArn"] for c in listed] == [created["FunctionArn"], live["FunctionArn"]]
    lam.delete_function_url_config(FunctionName=name)
    with pytest.raises(ClientError) as e:
        lam.get_function_url_config(FunctionName=name)
    assert error_of(e) == ("ResourceNotFoundException", "The resource you requested does not exist.", 404)
    assert url_request(server, created["FunctionUrl"])[0] == 403
    lam.delete_alias(FunctionName=name, Name="live")
    assert url_request(server, live["FunctionUrl"])[0] == 403


def test_function_urls_invoke_the_function_over_http(server, lam):
    name = create(lam, files={"app.py": URL_HANDLER})
    url = lam.create_function_url_config(FunctionName=name, AuthType="NONE", Cors={
        "AllowOrigins": ["https://app.example"], "AllowMethods": ["GET", "POST"], "ExposeHeaders": ["x-made"],
        "MaxAge": 60})["FunctionUrl"]
    status, headers, body = url_request(server, url, path="/items/7?q=a&q=b",
                                        headers={"Cookie": "c1=x; c2=y", "Origin": "https://app.example"})
    assert status == 200 and headers["content-type"] == "application/json"
    assert headers["access-control-allow-origin"] == "https://app.example"
    assert headers["access-control-expose-headers"] == "x-made"
    out = json.loads(body)
    event = out["event"]
    assert out["arn"] == f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    assert (event["version"], event["rawPath"], event["rawQueryString"]) == ("2.0", "/items/7", "q=a&q=b")
    assert event["queryStringParameters"] == {"q": "a,b"} and event["cookies"] == ["c1=x", "c2=y"]
    assert event["requestContext"]["http"]["method"] == "GET"
    assert event["requestContext"]["domainName"] == url.split("//")[1].split(":")[0]
    assert "body" not in event and event["isBase64Encoded"] is False
    status, headers, body = url_request(server, url, "POST", "/shaped", b"it", {"Content-Type": "text/plain"})
    assert (status, body) == (201, b"made it")
    assert headers["content-type"] == "text/plain" and headers["x-made"] == "yes"
    assert headers["set-cookie"] == "s=1; Path=/"
    status, _, body = url_request(server, url, "POST", "/fail", b"{}", {"Content-Type": "application/json"})
    assert status == 502 and json.loads(body) == {"Message": "Internal Server Error"}
    status, headers, _ = url_request(server, url, "OPTIONS", "/items", headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    assert status == 200 and headers["access-control-allow-methods"] == "GET,POST"
    assert headers["access-control-max-age"] == "60"
    lam.update_function_url_config(FunctionName=name, AuthType="AWS_IAM")
    status, _, body = url_request(server, url)
    assert (status, json.loads(body)) == (403, {"Message": "Forbidden"})
    signed = "AWS4-HMAC-SHA256 Credential=AKIDEXAMPLE/20260101/us-east-1/lambda/aws4_request, SignedHeaders=host, Signature=00"
    status, _, body = url_request(server, url, headers={"Authorization": signed})
    assert status == 200 and json.loads(body)["event"]["requestContext"]["accountId"] == "000000000000"
    assert any(t["operation"] == "InvokeFunctionUrl" for t in server.traces(service="lambda"))
    lam.delete_function(FunctionName=name)
    assert url_request(server, url, headers={"Authorization": signed})[0] == 403
