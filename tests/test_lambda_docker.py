"""Lambda's docker executor: functions in containers, against a real Docker engine.

The tests that run containers need an engine (DOCKER_HOST's unix socket, else
/var/run/docker.sock) holding the Lambda base images their runtimes map to.
`scripts/test.sh` starts a private engine with test images built from this machine's own
interpreters (scripts/docker-engine.sh); elsewhere the tests skip, saying why: no engine, or
an engine without the image (a present engine without images never fails the suite). What a
server does without an engine, or without an image, is tested wherever an engine is."""

from __future__ import annotations

import base64
import http.client
import io
import json
import os
import socket
import subprocess
import sys
import tarfile
import threading
import time
import urllib.parse

import pytest
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer, binary  # noqa: E402
from lambda_helpers import ROLE, zip_of  # noqa: E402
from test_lambda import (NODE_HANDLER, PY_HANDLER, SHELL_BOOTSTRAP, error_of, make_client, unique,  # noqa: E402
                         wait_for)
from test_lambda import lam, server  # noqa: E402,F401 (fixtures: a server with the process executor)

PYTHON_IMAGE = "public.ecr.aws/lambda/python:3.12"
NODE_IMAGE = "public.ecr.aws/lambda/nodejs:20"
PROVIDED_IMAGE = "public.ecr.aws/lambda/provided:al2023"


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"


class EngineConnection(http.client.HTTPConnection):
    """HTTP to the Docker engine over its unix socket."""

    def connect(self):
        self.sock = socket.socket(socket.AF_UNIX)
        self.sock.settimeout(60)
        self.sock.connect(engine_socket())


def engine(method: str, path: str, body: bytes | None = None, headers: dict | None = None):
    """One Engine API call: (status, decoded JSON or None)."""
    conn = EngineConnection("docker")
    try:
        conn.request(method, path, body=body, headers=headers or {})
        resp = conn.getresponse()
        data = resp.read()
    finally:
        conn.close()
    try:
        return resp.status, json.loads(data) if data else None
    except ValueError:
        return resp.status, None


def engine_answers() -> bool:
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return False
    try:
        return engine("GET", "/_ping")[0] == 200
    except OSError:
        return False


def has_image(image: str) -> bool:
    return engine("GET", f"/images/{image}/json")[0] == 200


def tag_image(image: str, repo: str, tag: str) -> None:
    query = urllib.parse.urlencode({"repo": repo, "tag": tag})
    assert engine("POST", f"/images/{image}/tag?{query}")[0] == 201


def containers(label: str) -> list[dict]:
    filters = urllib.parse.quote(json.dumps({"label": [label]}))
    return engine("GET", f"/containers/json?all=true&filters={filters}")[1] or []


ENGINE = engine_answers()
NO_ENGINE = os.environ.get("ROTO_DOCKER_UNAVAILABLE") or f"no Docker engine answers at unix://{engine_socket()}"
needs_engine = pytest.mark.skipif(not ENGINE, reason=NO_ENGINE)


def needs_image(*images: str):
    missing = [i for i in images if not (ENGINE and has_image(i))]
    reason = (f"the Docker engine has no image {', '.join(missing)} (scripts/docker-engine.sh start builds "
              "test images in a private engine)")
    return pytest.mark.skipif(bool(missing) or not ENGINE, reason=reason if ENGINE else NO_ENGINE)


# --- without an engine ---------------------------------------------------------------------

def test_without_an_engine_the_server_says_so_and_invocations_fail_clearly():
    server = RotoServer("--ephemeral", "--lambda-executor", "docker",
                        env={"DOCKER_HOST": "unix:///nonexistent/docker.sock"}).start()
    try:
        lam = make_client(server, "lambda")
        name = unique("dock")
        config = lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                     Code={"ZipFile": zip_of({"app.py": PY_HANDLER})})
        assert config["FunctionName"] == name
        with pytest.raises(ClientError) as e:
            lam.invoke(FunctionName=name, Payload=b"{}")
        code, message, status = error_of(e)
        assert code == "ServiceException" and status == 501
        assert message.startswith(f"Cannot run {name}: no Docker engine answers at unix:///nonexistent/docker.sock")
        assert lam.invoke(FunctionName=name, InvocationType="Event", Payload=b"{}")["StatusCode"] == 202
        attempt = server.wait_for_delivery(service="lambda", operation="Invoke", timeout=5)
        assert attempt["error_code"] == "ServiceException"
    finally:
        server.process.terminate()
        stderr = server.process.stderr.read()
        server.process.wait(timeout=15)
    warnings = [line for line in stderr.splitlines() if "--lambda-executor docker" in line]
    assert len(warnings) == 1
    assert "no Docker engine answers at unix:///nonexistent/docker.sock" in warnings[0]
    assert "Lambda invocations fail until an engine runs" in warnings[0]


def test_a_docker_host_that_is_not_a_unix_socket_is_named():
    server = RotoServer("--ephemeral", "--lambda-executor", "docker", env={"DOCKER_HOST": "tcp://10.9.8.7:2375"}).start()
    try:
        lam = make_client(server, "lambda")
        name = unique("dock")
        lam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                            Code={"ZipFile": zip_of({"index.js": NODE_HANDLER})})
        with pytest.raises(ClientError) as e:
            lam.invoke(FunctionName=name, Payload=b"{}")
        assert "DOCKER_HOST=tcp://10.9.8.7:2375 is not a unix socket" in error_of(e)[1]
    finally:
        server.stop()


# --- with an engine ------------------------------------------------------------------------

@pytest.fixture(scope="module")
def docker_server():
    with RotoServer("--ephemeral", "--lambda-executor", "docker", env={"ROTO_LAMBDA_RETRY_DELAY_MS": "50"}) as s:
        yield s


@pytest.fixture(scope="module")
def dlam(docker_server):
    from botocore.config import Config
    import boto3
    return boto3.client("lambda", endpoint_url=docker_server.endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(retries={"max_attempts": 1}, read_timeout=120))


def invoke(lam, name, event, **kw):
    resp = lam.invoke(FunctionName=name, Payload=json.dumps(event).encode(), **kw)
    return resp, json.loads(resp["Payload"].read() or b"null")


def log_lines(resp) -> list[str]:
    return base64.b64decode(resp["LogResult"]).decode().strip().split("\n")


@needs_engine
def test_a_missing_image_fails_at_once_naming_the_image_and_the_flag():
    with RotoServer("--ephemeral", "--lambda-executor", "docker",
                    "--lambda-image", "python3.12=roto-test.invalid/absent:1") as server:
        lam = make_client(server, "lambda")
        name = unique("dmiss")
        lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                            Code={"ZipFile": zip_of({"app.py": PY_HANDLER})})
        started = time.monotonic()
        with pytest.raises(ClientError) as e:
            lam.invoke(FunctionName=name, Payload=b"{}")
        assert time.monotonic() - started < 20
        code, message, status = error_of(e)
        assert code == "ServiceException" and status == 501
        assert message.startswith(f"Cannot run {name}: the Docker engine has no image roto-test.invalid/absent:1"), message
        assert "--lambda-image python3.12=IMAGE (ROTO_LAMBDA_IMAGE)" in message
        assert "--lambda-image-registry PREFIX" in message


@needs_image(PYTHON_IMAGE)
def test_runtimes_map_to_local_images_by_flag_or_registry_prefix():
    tag_image(PYTHON_IMAGE, "roto-test.local/mapped-python", "1")
    tag_image(PYTHON_IMAGE, "roto-test.local/lambda/python", "3.12")
    handler = {"app.py": "def handler(e, c):\n    return 'mapped'\n"}
    for flags in (["--lambda-image", "python3.12=roto-test.local/mapped-python:1"],
                  ["--lambda-image-registry", "roto-test.local/lambda"]):
        with RotoServer("--ephemeral", "--lambda-executor", "docker", *flags) as server:
            lam = make_client(server, "lambda")
            name = unique("dmap")
            lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                Code={"ZipFile": zip_of(handler)})
            assert invoke(lam, name, {})[1] == "mapped"
            image = {c["Image"] for c in containers(f"roto.lambda=000000000000/us-east-1/{name}:$LATEST")}
            assert image == {"roto-test.local/mapped-python:1" if flags[0] == "--lambda-image"
                             else "roto-test.local/lambda/python:3.12"}


def test_a_malformed_lambda_image_flag_exits_2():
    with pytest.raises(RuntimeError) as e:
        RotoServer("--ephemeral", "--lambda-image", "python3.12").start()
    assert "is not RUNTIME=IMAGE" in str(e.value)


@needs_image(PYTHON_IMAGE)
def test_python_runs_in_the_base_image_with_the_lambda_environment(dlam):
    name = unique("dpy")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=2,
                         Code={"ZipFile": zip_of({"app.py": PY_HANDLER})}, Environment={"Variables": {"GREETING": "docker"}})
    resp, out = invoke(dlam, name, {"hello": "container"}, LogType="Tail")
    assert "FunctionError" not in resp, out
    assert out["echo"] == {"hello": "container"} and out["env"] == "docker" and out["name"] == name
    assert out["endpoint"].startswith("http://host.docker.internal:")
    lines = log_lines(resp)
    assert lines[0].startswith("START RequestId: ") and 'got {"hello": "container"}' in lines
    assert lines[-2].startswith("END RequestId: ")
    assert lines[-1].startswith("REPORT RequestId: ") and "Init Duration" in lines[-1]
    _, again = invoke(dlam, name, {})
    assert again["count"] == out["count"] + 1  # the same warm container served it
    resp, err = invoke(dlam, name, {"fail": "in docker"})
    assert resp["FunctionError"] == "Unhandled" and err["errorType"] == "ValueError"
    resp, timed_out = invoke(dlam, name, {"sleep": 5}, LogType="Tail")
    assert resp["FunctionError"] == "Unhandled"
    assert "Task timed out after 2." in timed_out["errorMessage"]
    assert "Status: timeout" in log_lines(resp)[-1]


@needs_image(PYTHON_IMAGE)
def test_logs_reach_cloudwatch_logs_with_start_end_report(docker_server, dlam):
    name = unique("dlog")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": PY_HANDLER})})
    resp, _ = invoke(dlam, name, {"to": "logs"})
    request_id = resp["ResponseMetadata"]["RequestId"]
    logs = make_client(docker_server, "logs")

    def messages():
        groups = logs.describe_log_groups(logGroupNamePrefix=f"/aws/lambda/{name}")["logGroups"]
        return groups and [e["message"].rstrip("\n") for e in logs.filter_log_events(logGroupName=f"/aws/lambda/{name}")["events"]]
    got = wait_for(lambda: (m := messages()) and any(x.startswith("REPORT") for x in m) and m)
    assert got[0] == f"START RequestId: {request_id} Version: $LATEST"
    assert 'got {"to": "logs"}' in got
    assert got[-2] == f"END RequestId: {request_id}"
    assert got[-1].startswith(f"REPORT RequestId: {request_id}\tDuration: ")


@needs_image(PYTHON_IMAGE)
def test_init_errors_are_reported_as_lambda_reports_them(dlam):
    broken = unique("dinit")
    dlam.create_function(FunctionName=broken, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": "import does_not_exist\n"})})
    resp, out = invoke(dlam, broken, {})
    assert resp["FunctionError"] == "Unhandled"
    assert out["errorType"] == "Runtime.ImportModuleError"
    assert out["errorMessage"].startswith("Unable to import module 'app'")
    missing = unique("dnohandler")
    dlam.create_function(FunctionName=missing, Runtime="python3.12", Role=ROLE, Handler="app.nope",
                         Code={"ZipFile": zip_of({"app.py": PY_HANDLER})})
    assert invoke(dlam, missing, {})[1]["errorType"] == "Runtime.HandlerNotFound"


@needs_image(PYTHON_IMAGE)
def test_layers_are_at_opt_and_the_memory_size_is_the_containers_limit(dlam):
    layer = dlam.publish_layer_version(LayerName=unique("dlayer"),
                                       Content={"ZipFile": zip_of({"python/shared.py": "VALUE = 'from a layer'\n"})})
    handler = """
import shared
def handler(event, context):
    for path in ("/sys/fs/cgroup/memory.max", "/sys/fs/cgroup/memory/memory.limit_in_bytes"):
        try:
            limit = int(open(path).read())
            break
        except (OSError, ValueError):
            limit = None
    return {"layer": shared.VALUE, "file": shared.__file__, "limit": limit}
"""
    name = unique("dopt")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", MemorySize=256,
                         Code={"ZipFile": zip_of({"app.py": handler})}, Layers=[layer["LayerVersionArn"]])
    _, out = invoke(dlam, name, {})
    assert out == {"layer": "from a layer", "file": "/opt/python/shared.py", "limit": 256 * 1024 * 1024}


@needs_image(PYTHON_IMAGE)
def test_the_report_line_says_the_containers_peak_memory(dlam):
    handler = "def handler(event, context):\n    block = bytearray(event['mb'] * 1024 * 1024)\n    return len(block)\n"
    name = unique("dmem")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", MemorySize=256,
                         Code={"ZipFile": zip_of({"app.py": handler})})

    def max_memory_used(mb):
        resp, _ = invoke(dlam, name, {"mb": mb}, LogType="Tail")
        report = log_lines(resp)[-1]
        assert "\tMemory Size: 256 MB\t" in report
        return int(report.split("Max Memory Used: ")[1].split(" MB")[0])

    small = max_memory_used(1)
    assert 1 <= small < 100
    large = max_memory_used(120)
    assert 120 <= large <= 256, large
    assert max_memory_used(1) >= large, "the instance's peak so far, as Lambda reports it"


@needs_image(PYTHON_IMAGE)
def test_concurrent_invocations_run_in_several_warm_containers(dlam):
    name = unique("dconc")
    handler = "import time\nN = [0]\ndef handler(e, c):\n    N[0] += 1\n    time.sleep(1)\n    return N[0]\n"
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": handler})})
    results = []
    threads = [threading.Thread(target=lambda: results.append(invoke(dlam, name, {})[1])) for _ in range(2)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert results == [1, 1]  # each ran in a container of its own
    running = containers(f"roto.lambda=000000000000/us-east-1/{name}:$LATEST")
    assert len(running) == 2
    assert sorted([invoke(dlam, name, {})[1], invoke(dlam, name, {})[1]]) in ([2, 3], [2, 2])


@needs_image(NODE_IMAGE, PROVIDED_IMAGE)
def test_node_and_provided_runtimes_run_in_their_images(dlam):
    node = unique("dnode")
    dlam.create_function(FunctionName=node, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                         Code={"ZipFile": zip_of({"index.js": NODE_HANDLER})}, Environment={"Variables": {"GREETING": "n"}})
    _, out = invoke(dlam, node, {"n": 1})
    assert out == {"echo": {"n": 1}, "count": 1, "env": "n", "name": node}
    resp, err = invoke(dlam, node, {"fail": "x"})
    assert resp["FunctionError"] == "Unhandled" and err["errorType"] == "TypeError"
    shell = unique("dshell")
    dlam.create_function(FunctionName=shell, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                         Code={"ZipFile": zip_of({"bootstrap": SHELL_BOOTSTRAP}, {"bootstrap": 0o755})})
    resp, out = invoke(dlam, shell, {"k": "v"}, LogType="Tail")
    assert out == {"shell": {"k": "v"}}
    assert "shell handled" in base64.b64decode(resp["LogResult"]).decode()
    nothing = unique("dnoboot")
    dlam.create_function(FunctionName=nothing, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                         Code={"ZipFile": zip_of({"README": "no bootstrap"})})
    resp, out = invoke(dlam, nothing, {})
    assert resp["FunctionError"] == "Unhandled" and out["errorType"] == "Runtime.InvalidEntrypoint"
    assert "Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]" in out["errorMessage"]


@needs_image(PYTHON_IMAGE)
def test_handler_sdk_calls_reach_roto_from_the_container(docker_server, dlam):
    handler = """
import boto3
def handler(event, context):
    s3 = boto3.client("s3")
    s3.put_object(Bucket=event["bucket"], Key="from-docker", Body=b"hi")
    return s3.get_object(Bucket=event["bucket"], Key="from-docker")["Body"].read().decode()
"""
    make_client(docker_server, "s3").create_bucket(Bucket="docker-writes")
    name = unique("dsdk")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
                         Code={"ZipFile": zip_of({"app.py": handler})})
    resp, out = invoke(dlam, name, {"bucket": "docker-writes"})
    assert "FunctionError" not in resp, out
    assert out == "hi"


@needs_image(NODE_IMAGE)
def test_node_handlers_use_the_sdk_for_javascript_from_the_image(docker_server, dlam):
    handler = """
const { SQSClient, CreateQueueCommand, GetQueueUrlCommand } = require("@aws-sdk/client-sqs");
exports.handler = async (event) => {
  const sqs = new SQSClient({});
  await sqs.send(new CreateQueueCommand({ QueueName: event.queue }));
  return (await sqs.send(new GetQueueUrlCommand({ QueueName: event.queue }))).QueueUrl;
};
"""
    name = unique("dnodesdk")
    dlam.create_function(FunctionName=name, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler", Timeout=30,
                         Code={"ZipFile": zip_of({"index.js": handler})})
    resp, out = invoke(dlam, name, {"queue": "from-node"})
    if resp.get("FunctionError") and out.get("errorType") == "Runtime.ImportModuleError":
        pytest.skip("the nodejs image has no AWS SDK for JavaScript (npm ci in js/roto-testing provides it)")
    assert "FunctionError" not in resp, out
    assert out.endswith("/from-node")
    sqs = make_client(docker_server, "sqs")
    assert sqs.get_queue_url(QueueName="from-node")["QueueUrl"].endswith("/from-node")


@needs_image(PYTHON_IMAGE)
def test_an_sqs_mapping_delivers_to_a_container(docker_server, dlam):
    sqs = make_client(docker_server, "sqs")
    url = sqs.create_queue(QueueName=unique("djobs"))["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    out_url = sqs.create_queue(QueueName=unique("dout"))["QueueUrl"]
    handler = f"""
import boto3
def handler(event, context):
    sqs = boto3.client("sqs")
    for record in event["Records"]:
        sqs.send_message(QueueUrl={out_url!r}, MessageBody="seen " + record["body"])
"""
    name = unique("dmap")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
                         Code={"ZipFile": zip_of({"app.py": handler})})
    dlam.create_event_source_mapping(EventSourceArn=arn, FunctionName=name, BatchSize=1)
    sqs.send_message(QueueUrl=url, MessageBody="job-1")
    got = wait_for(lambda: sqs.receive_message(QueueUrl=out_url, WaitTimeSeconds=1).get("Messages"), timeout=60)
    assert got and got[0]["Body"] == "seen job-1"


@needs_image(PYTHON_IMAGE)
def test_dynamodb_and_kinesis_stream_mappings_deliver_to_a_container(docker_server, dlam):
    sqs = make_client(docker_server, "sqs")
    ddb = make_client(docker_server, "dynamodb")
    kinesis = make_client(docker_server, "kinesis")
    out_url = sqs.create_queue(QueueName=unique("dstreams"))["QueueUrl"]
    handler = f"""
import base64, boto3
def handler(event, context):
    sqs = boto3.client("sqs")
    for record in event["Records"]:
        if record["eventSource"] == "aws:dynamodb":
            seen = "dynamodb " + record["eventName"] + " " + record["dynamodb"]["Keys"]["id"]["S"]
        else:
            seen = "kinesis " + base64.b64decode(record["kinesis"]["data"]).decode()
        sqs.send_message(QueueUrl={out_url!r}, MessageBody=seen)
"""
    name = unique("dstream")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
                         Code={"ZipFile": zip_of({"app.py": handler})})
    table = ddb.create_table(
        TableName=unique("dtable"), BillingMode="PAY_PER_REQUEST",
        AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}],
        KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
        StreamSpecification={"StreamEnabled": True, "StreamViewType": "NEW_IMAGE"})["TableDescription"]
    stream = unique("dkin")
    kinesis.create_stream(StreamName=stream, ShardCount=1)
    kinesis.get_waiter("stream_exists").wait(StreamName=stream, WaiterConfig={"Delay": 0.2})
    stream_arn = kinesis.describe_stream_summary(StreamName=stream)["StreamDescriptionSummary"]["StreamARN"]
    for source in (table["LatestStreamArn"], stream_arn):
        dlam.create_event_source_mapping(EventSourceArn=source, FunctionName=name, BatchSize=1,
                                         StartingPosition="TRIM_HORIZON")
    ddb.put_item(TableName=table["TableName"], Item={"id": {"S": "order-1"}})
    kinesis.put_record(StreamName=stream, Data=b"click-1", PartitionKey="p")
    seen: set[str] = set()

    def both_seen():
        for m in sqs.receive_message(QueueUrl=out_url, WaitTimeSeconds=1, MaxNumberOfMessages=10).get("Messages", []):
            seen.add(m["Body"])
        return seen >= {"dynamodb INSERT order-1", "kinesis click-1"}

    assert wait_for(both_seen, timeout=60), seen


@needs_image(PYTHON_IMAGE)
def test_async_invocations_retry_in_the_container_and_reach_their_destinations(docker_server, dlam):
    sqs = make_client(docker_server, "sqs")
    ok_url = sqs.create_queue(QueueName=unique("dok"))["QueueUrl"]
    bad_url = sqs.create_queue(QueueName=unique("dbad"))["QueueUrl"]

    def arn_of(url):
        return sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    handler = """
import os
ATTEMPTS = [0]
def handler(event, context):
    ATTEMPTS[0] += 1
    if "fail" in event:
        raise ValueError(f"attempt {ATTEMPTS[0]}")
    return {"echo": event, "endpoint": os.environ["AWS_ENDPOINT_URL"]}
"""
    name = unique("ddest")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": handler})})
    dlam.put_function_event_invoke_config(
        FunctionName=name, MaximumRetryAttempts=1,
        DestinationConfig={"OnSuccess": {"Destination": arn_of(ok_url)}, "OnFailure": {"Destination": arn_of(bad_url)}})
    assert dlam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"hello": 1}')["StatusCode"] == 202

    def one(url):
        return json.loads(wait_for(lambda: sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages"),
                                   timeout=60)[0]["Body"])
    success = one(ok_url)
    assert success["requestContext"]["condition"] == "Success"
    assert success["requestPayload"] == {"hello": 1}
    assert success["responsePayload"]["endpoint"].startswith("http://host.docker.internal:")
    dlam.invoke(FunctionName=name, InvocationType="Event", Payload=b'{"fail": "dest"}')
    failure = one(bad_url)
    assert failure["requestContext"]["condition"] == "RetriesExhausted"
    assert failure["requestContext"]["approximateInvokeCount"] == 2
    assert failure["responseContext"]["functionError"] == "Unhandled"
    assert failure["responsePayload"]["errorType"] == "ValueError"
    # The first invocation and the failing one's two attempts ran in the same warm container.
    assert failure["responsePayload"]["errorMessage"] == "attempt 3"
    attempts = [e["outcome"] for e in docker_server.traces(service="lambda", kind="delivery")
                if e.get("target", "").endswith(f":function:{name}")]
    assert sorted(attempts) == ["delivered", "failed", "retrying"]


@needs_image(PYTHON_IMAGE)
def test_updating_a_function_replaces_its_container(dlam):
    name = unique("dupd")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": "def handler(e, c):\n    return 1\n"})})
    assert invoke(dlam, name, {})[1] == 1
    dlam.update_function_code(FunctionName=name, ZipFile=zip_of({"app.py": "def handler(e, c):\n    return 2\n"}))
    assert invoke(dlam, name, {})[1] == 2
    label = f"roto.lambda=000000000000/us-east-1/{name}:$LATEST"
    assert wait_for(lambda: len(containers(label)) == 1)


# --- networking ----------------------------------------------------------------------------

def bridge_gateway() -> str | None:
    status, network = engine("GET", "/networks/bridge")
    configs = (network or {}).get("IPAM", {}).get("Config") or [] if status == 200 else []
    return next((c["Gateway"] for c in configs if c.get("Gateway")), None)


@needs_image(PYTHON_IMAGE)
def test_where_the_engine_is_not_local_containers_reach_roto_through_the_bridge_gateway(tmp_path, monkeypatch):
    """A server whose host name is not the engine's takes it for an engine elsewhere: its
    containers stay on the bridge network and reach the Runtime API and Roto as
    host.docker.internal, the bridge's gateway, where Roto's listeners and relay are."""
    gateway = bridge_gateway()
    if not gateway:
        pytest.skip("the Docker engine has no bridge network (scripts/docker-engine.sh makes one where it may)")
    if subprocess.run(["unshare", "--uts", "true"], capture_output=True).returncode != 0:
        pytest.skip("a server cannot run under a host name of its own here (unshare --uts needs root)")
    elsewhere = tmp_path / "roto-elsewhere"
    elsewhere.write_text("#!/bin/sh\nexec unshare --uts sh -c 'hostname roto-elsewhere && exec \"$0\" \"$@\"' "
                         f"{binary()} \"$@\"\n")
    elsewhere.chmod(0o755)
    monkeypatch.setenv("ROTO_BINARY", str(elsewhere))
    handler = """
import os, boto3
def handler(event, context):
    s3 = boto3.client("s3")
    s3.put_object(Bucket=event["bucket"], Key="k", Body=b"through the gateway")
    return {"api": os.environ["AWS_LAMBDA_RUNTIME_API"], "endpoint": os.environ["AWS_ENDPOINT_URL"],
            "body": s3.get_object(Bucket=event["bucket"], Key="k")["Body"].read().decode()}
"""
    with RotoServer("--ephemeral", "--lambda-executor", "docker") as server:
        make_client(server, "s3").create_bucket(Bucket="gateway-writes")
        lam = make_client(server, "lambda")
        name = unique("dgw")
        lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
                            Code={"ZipFile": zip_of({"app.py": handler})})
        resp, out = invoke(lam, name, {"bucket": "gateway-writes"})
        assert "FunctionError" not in resp, out
        assert out["body"] == "through the gateway"
        assert out["api"].startswith("host.docker.internal:")
        relay = int(out["endpoint"].removeprefix("http://host.docker.internal:"))
        assert relay != server.port, "SDK calls go through the relay on the gateway"
        [container] = containers(f"roto.lambda=000000000000/us-east-1/{name}:$LATEST")
        inspected = engine("GET", f"/containers/{container['Id']}/json")[1]
        assert inspected["HostConfig"]["NetworkMode"] != "host"
        assert inspected["HostConfig"]["ExtraHosts"] == ["host.docker.internal:host-gateway"]
        with socket.create_connection((gateway, relay), timeout=5):
            pass  # the relay listens on the gateway's address
        assert make_client(server, "s3").get_object(Bucket="gateway-writes", Key="k")["Body"].read() == \
            b"through the gateway"


# --- cleanup -------------------------------------------------------------------------------

LOOPING_BOOTSTRAP = """#!/bin/sh
# Keeps running when the Runtime API is gone, as some runtime clients do.
while true; do
  curl -s "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/next" -D /tmp/h -o /tmp/event || { sleep 0.2; continue; }
  ID=$(grep -i lambda-runtime-aws-request-id /tmp/h | tr -d '[:space:]' | cut -d: -f2)
  curl -s -X POST "http://${AWS_LAMBDA_RUNTIME_API}/2018-06-01/runtime/invocation/$ID/response" -d '"up"' > /dev/null
done
"""


def start_looping_function(server) -> str:
    lam = make_client(server, "lambda")
    name = unique("dloop")
    lam.create_function(FunctionName=name, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                        Code={"ZipFile": zip_of({"bootstrap": LOOPING_BOOTSTRAP}, {"bootstrap": 0o755})})
    assert invoke(lam, name, {})[1] == "up"
    return name


@needs_image(PROVIDED_IMAGE)
def test_no_container_outlives_its_server_and_a_killed_servers_are_removed_by_the_next():
    def of(name):
        return containers(f"roto.lambda=000000000000/us-east-1/{name}:$LATEST")

    stopped = RotoServer("--ephemeral", "--lambda-executor", "docker").start()
    quiet = start_looping_function(stopped)
    stopped.stop()
    assert of(quiet) == []

    killed = RotoServer("--ephemeral", "--lambda-executor", "docker").start()
    sibling = RotoServer("--ephemeral", "--lambda-executor", "docker").start()
    try:
        orphan = start_looping_function(killed)
        alive = start_looping_function(sibling)
        boot, namespace, pid, _ = of(orphan)[0]["Labels"]["roto.lambda.owner"].split("/")
        assert pid == str(killed.process.pid)
        assert boot == open("/proc/sys/kernel/random/boot_id").read().strip()
        assert namespace == os.readlink(f"/proc/{killed.process.pid}/ns/pid")[len("pid:["):-1]
        killed.kill()
        time.sleep(1)
        assert len(of(orphan)) == 1  # the runtime outlives its server...
        with RotoServer("--ephemeral", "--lambda-executor", "docker"):
            assert wait_for(lambda: of(orphan) == [])  # ...until the next server starts
            assert len(of(alive)) == 1  # never a live sibling's
    finally:
        sibling.stop()
        killed.stop()
    assert of(alive) == []


# --- container-image functions -------------------------------------------------------------

IMAGE_HANDLER = """
import os
def handler(event, context):
    return {"image": VERSION, "cwd": os.getcwd(), "handler": os.environ.get("_HANDLER"), "event": event}
def other(event, context):
    return {"other": VERSION}
"""


def build_function_image(base: str, name: str, version: str) -> None:
    """Builds `name` from `base` with app.py in /var/task and CMD ["app.handler"], as a
    Dockerfile's COPY and CMD would, through the Engine API (create, upload, commit)."""
    status, created = engine("POST", "/containers/create", json.dumps({"Image": base}).encode(),
                             {"Content-Type": "application/json"})
    assert status == 201, created
    container = created["Id"]
    try:
        archive = io.BytesIO()
        with tarfile.open(fileobj=archive, mode="w") as tar:
            source = f"VERSION = {version!r}\n{IMAGE_HANDLER}".encode()
            info = tarfile.TarInfo("app.py")
            info.size, info.mode = len(source), 0o644
            tar.addfile(info, io.BytesIO(source))
        status, _ = engine("PUT", f"/containers/{container}/archive?path=/var/task", archive.getvalue(),
                           {"Content-Type": "application/x-tar"})
        assert status == 200
        repo, tag = name.rsplit(":", 1)
        query = urllib.parse.urlencode({"container": container, "repo": repo, "tag": tag,
                                        "changes": 'CMD ["app.handler"]'})
        assert engine("POST", f"/commit?{query}")[0] == 201
    finally:
        engine("DELETE", f"/containers/{container}?force=true")


def test_container_image_functions_are_checked_as_lambda_checks_them(lam):
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("img"), PackageType="Image", Role=ROLE, Handler="app.handler",
                            Code={"ImageUri": "app:v1"})
    assert error_of(e) == ("InvalidParameterValueException",
                           "Please don't provide Handler or Runtime or Layer when the intended function PackageType is Image.", 400)
    with pytest.raises(ClientError) as e:
        lam.create_function(FunctionName=unique("img"), PackageType="Image", Role=ROLE, Code={})
    assert error_of(e)[:2] == ("InvalidParameterValueException", "Please provide a source for function code.")
    name = unique("img")
    uri = "123456789012.dkr.ecr.us-east-1.amazonaws.com/app:v1"
    config = lam.create_function(FunctionName=name, PackageType="Image", Role=ROLE, Code={"ImageUri": uri},
                                 ImageConfig={"Command": ["app.other"], "WorkingDirectory": "/srv"})
    assert config["PackageType"] == "Image" and "Runtime" not in config and "Handler" not in config
    assert config["ImageConfigResponse"] == {"ImageConfig": {"Command": ["app.other"], "WorkingDirectory": "/srv"}}
    code = lam.get_function(FunctionName=name)["Code"]
    assert code["RepositoryType"] == "ECR" and code["ImageUri"] == uri
    assert code["ResolvedImageUri"].startswith("123456789012.dkr.ecr.us-east-1.amazonaws.com/app@sha256:")
    with pytest.raises(ClientError) as e:
        lam.update_function_code(FunctionName=name, ZipFile=zip_of({"app.py": ""}))
    assert error_of(e)[1] == "Please provide ImageUri when updating a function with packageType Image."
    zipped = unique("zip")
    lam.create_function(FunctionName=zipped, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": PY_HANDLER})})
    with pytest.raises(ClientError) as e:
        lam.update_function_code(FunctionName=zipped, ImageUri=uri)
    assert error_of(e)[1] == "Please don't provide ImageUri when updating a function with packageType Zip."
    updated = lam.update_function_configuration(FunctionName=name, ImageConfig={"Command": ["app.handler"]})
    assert updated["ImageConfigResponse"] == {"ImageConfig": {"Command": ["app.handler"]}}


def test_the_process_executor_says_container_images_need_the_docker_executor(lam):
    name = unique("img")
    lam.create_function(FunctionName=name, PackageType="Image", Role=ROLE, Code={"ImageUri": "app:v1"})
    with pytest.raises(ClientError) as e:
        lam.invoke(FunctionName=name, Payload=b"{}")
    code, message, status = error_of(e)
    assert (code, status) == ("ServiceException", 501)
    assert "container-image function" in message and "--lambda-executor docker" in message


@needs_image(PYTHON_IMAGE)
def test_a_locally_built_image_runs_as_a_function_and_updates_to_a_new_image(dlam):
    build_function_image(PYTHON_IMAGE, "roto-test-image-fn:v1", "v1")
    build_function_image(PYTHON_IMAGE, "roto-test-image-fn:v2", "v2")
    name = unique("dimg")
    ecr = "000000000000.dkr.ecr.us-east-1.amazonaws.com/roto-test-image-fn"
    dlam.create_function(FunctionName=name, PackageType="Image", Role=ROLE, Code={"ImageUri": f"{ecr}:v1"})
    resp, out = invoke(dlam, name, {"k": 1}, LogType="Tail")
    assert "FunctionError" not in resp, out
    assert out == {"image": "v1", "cwd": "/var/task", "handler": "app.handler", "event": {"k": 1}}
    assert log_lines(resp)[-1].startswith("REPORT RequestId: ")
    dlam.update_function_code(FunctionName=name, ImageUri="roto-test-image-fn:v2")
    assert invoke(dlam, name, {})[1]["image"] == "v2"
    configured = unique("dimgcfg")
    dlam.create_function(FunctionName=configured, PackageType="Image", Role=ROLE,
                         Code={"ImageUri": "roto-test-image-fn:v1"},
                         ImageConfig={"EntryPoint": ["/var/runtime/bootstrap"], "Command": ["app.other"],
                                      "WorkingDirectory": "/tmp"})
    assert invoke(dlam, configured, {})[1] == {"other": "v1"}
    absent = unique("dimgabsent")
    dlam.create_function(FunctionName=absent, PackageType="Image", Role=ROLE,
                         Code={"ImageUri": f"{ecr}:absent"})
    with pytest.raises(ClientError) as e:
        dlam.invoke(FunctionName=absent, Payload=b"{}")
    message = error_of(e)[1]
    assert f"has no image {ecr}:absent or roto-test-image-fn:absent" in message
    assert f"--lambda-image {ecr}:absent=IMAGE" in message
