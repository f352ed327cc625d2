"""Lambda's docker executor: functions in containers of the public Lambda base images.

The tests that run containers need a Docker engine (DOCKER_HOST's unix socket, else
/var/run/docker.sock) and skip, saying so, where none answers. What a server does without an
engine is tested everywhere."""

from __future__ import annotations

import base64
import json
import os
import socket
import sys

import pytest
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402
from test_lambda import NODE_HANDLER, PY_HANDLER, ROLE, SHELL_BOOTSTRAP, error_of, make_client, unique, zip_of  # noqa: E402


def engine_socket() -> str:
    host = os.environ.get("DOCKER_HOST", "")
    return host[len("unix://"):] if host.startswith("unix://") else "/var/run/docker.sock"


def engine_answers() -> bool:
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return False
    try:
        with socket.socket(socket.AF_UNIX) as s:
            s.settimeout(2)
            s.connect(engine_socket())
            s.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return s.recv(64).split(b" ")[1:2] == [b"200"]
    except OSError:
        return False


needs_engine = pytest.mark.skipif(not engine_answers(), reason=f"no Docker engine answers at unix://{engine_socket()}")


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
    with RotoServer("--ephemeral", "--lambda-executor", "docker") as s:
        yield s


@pytest.fixture(scope="module")
def dlam(docker_server):
    from botocore.config import Config
    import boto3
    # The first invocation of each runtime pulls its image: give it time.
    return boto3.client("lambda", endpoint_url=docker_server.endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(retries={"max_attempts": 1}, read_timeout=600))


def invoke(lam, name, event, **kw):
    resp = lam.invoke(FunctionName=name, Payload=json.dumps(event).encode(), **kw)
    return resp, json.loads(resp["Payload"].read() or b"null")


@needs_engine
def test_python_runs_in_the_base_image_with_the_lambda_environment(dlam):
    name = unique("dpy")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=2,
                         Code={"ZipFile": zip_of({"app.py": PY_HANDLER})}, Environment={"Variables": {"GREETING": "docker"}})
    resp, out = invoke(dlam, name, {"hello": "container"}, LogType="Tail")
    assert "FunctionError" not in resp, out
    assert out["echo"] == {"hello": "container"} and out["env"] == "docker" and out["name"] == name
    assert out["endpoint"].startswith("http://host.docker.internal:")
    log = base64.b64decode(resp["LogResult"]).decode()
    assert 'got {"hello": "container"}' in log and "Init Duration" in log
    _, again = invoke(dlam, name, {})
    assert again["count"] == out["count"] + 1  # the same warm container served it
    resp, err = invoke(dlam, name, {"fail": "in docker"})
    assert resp["FunctionError"] == "Unhandled" and err["errorType"] == "ValueError"
    resp, timed_out = invoke(dlam, name, {"sleep": 5})
    assert resp["FunctionError"] == "Unhandled"
    assert "Task timed out after 2." in timed_out["errorMessage"]


@needs_engine
def test_node_and_provided_runtimes_run_in_their_images(dlam):
    node = unique("dnode")
    dlam.create_function(FunctionName=node, Runtime="nodejs20.x", Role=ROLE, Handler="index.handler",
                         Code={"ZipFile": zip_of({"index.js": NODE_HANDLER})})
    _, out = invoke(dlam, node, {"n": 1})
    assert out["echo"] == {"n": 1} and out["name"] == node
    shell = unique("dshell")
    dlam.create_function(FunctionName=shell, Runtime="provided.al2023", Role=ROLE, Handler="unused",
                         Code={"ZipFile": zip_of({"bootstrap": SHELL_BOOTSTRAP}, {"bootstrap": 0o755})})
    resp, out = invoke(dlam, shell, {"k": "v"}, LogType="Tail")
    assert out == {"shell": {"k": "v"}}
    assert "shell handled" in base64.b64decode(resp["LogResult"]).decode()


@needs_engine
def test_handler_sdk_calls_reach_roto_from_the_container(docker_server, dlam):
    handler = '''
import boto3
def handler(event, context):
    s3 = boto3.client("s3")
    s3.put_object(Bucket=event["bucket"], Key="from-docker", Body=b"hi")
    return s3.get_object(Bucket=event["bucket"], Key="from-docker")["Body"].read().decode()
'''
    make_client(docker_server, "s3").create_bucket(Bucket="docker-writes")
    name = unique("dsdk")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler", Timeout=30,
                         Code={"ZipFile": zip_of({"app.py": handler})})
    resp, out = invoke(dlam, name, {"bucket": "docker-writes"})
    assert "FunctionError" not in resp, out
    assert out == "hi"


@needs_engine
def test_updating_a_function_replaces_its_container(dlam):
    name = unique("dupd")
    dlam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                         Code={"ZipFile": zip_of({"app.py": "def handler(e, c):\n    return 1\n"})})
    assert invoke(dlam, name, {})[1] == 1
    dlam.update_function_code(FunctionName=name, ZipFile=zip_of({"app.py": "def handler(e, c):\n    return 2\n"}))
    assert invoke(dlam, name, {})[1] == 2
