"""The container image (scripts/image.sh) against a real engine, and `--print-ready`.

The image is built from the binary under test ($ROTO_BINARY: the debug build in CI) with
`docker import`, no registry. `scripts/test.sh` starts a private engine
(scripts/docker-engine.sh) without iptables, which may have no bridge network at all, so
containers here join the host network and take a free port through ROTO_PORT; the image's
own settings (0.0.0.0:4566) are read from its configuration. Where no engine answers the container tests skip, saying
why (scripts/docker-engine.sh makes that a failure under CI=true)."""

from __future__ import annotations

import io
import json
import os
import socket
import subprocess
import sys
import time
import urllib.request
import zipfile

import boto3
import pytest

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer, binary  # noqa: E402
from test_lambda import wait_for  # noqa: E402
from test_lambda_docker import (PROVIDED_IMAGE, PYTHON_IMAGE, containers, engine_answers, engine_socket,  # noqa: E402
                                has_image, start_looping_function)

ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
TAG = f"roto-image-test:{os.getpid()}"


def test_print_ready_follows_the_start_line_and_the_ready_hooks(tmp_path):
    marker = tmp_path / "hook-ran"
    hook = tmp_path / "hook.sh"
    hook.write_text(f"#!/bin/sh\nsleep 0.3\ntouch {marker}\n")
    hook.chmod(0o755)
    server = RotoServer("--ephemeral", "--print-ready", "--ready-hook", str(hook)).start()
    try:
        assert server.process.stdout.readline().strip() == "Ready."
        assert marker.exists(), "Ready. came after the hook ended"
    finally:
        server.process.terminate()
        server.process.wait(timeout=15)


def test_without_print_ready_nothing_follows_the_start_line():
    server = RotoServer("--ephemeral").start()
    server.process.terminate()
    out, _ = server.process.communicate(timeout=15)
    assert out == ""


def docker(*args: str, check: bool = True, timeout: float = 120) -> subprocess.CompletedProcess:
    proc = subprocess.run(["docker", *args], capture_output=True, text=True, timeout=timeout)
    if check and proc.returncode != 0:
        raise AssertionError(f"docker {' '.join(args)} failed: {proc.stderr}")
    return proc


@pytest.fixture(scope="module")
def image():
    reason = os.environ.get("ROTO_DOCKER_UNAVAILABLE")
    if reason or not engine_answers():
        pytest.skip(f"no Docker engine: {reason or 'none answers'} (scripts/docker-engine.sh starts one)")
    script = os.path.join(ROOT, "scripts", "image.sh")
    out = subprocess.run([script, "--binary", str(binary()), "--tag", TAG], capture_output=True, text=True,
                         timeout=300)
    assert out.returncode == 0, out.stderr
    assert out.stdout.strip() == TAG
    yield TAG
    docker("rmi", "-f", TAG, check=False)


def free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


class Container:
    """One container of the image on the host network, on a free port."""

    def __init__(self, image: str, *run_args: str, args: tuple[str, ...] = ()):
        self.port = free_port()
        self.name = f"roto-image-test-{os.getpid()}-{self.port}"
        docker("run", "-d", "--name", self.name, "--network", "host", "-e", f"ROTO_PORT={self.port}",
               *run_args, image, *args)

    @property
    def endpoint(self) -> str:
        return f"http://127.0.0.1:{self.port}"

    def logs(self) -> str:
        out = docker("logs", self.name, check=False)
        return out.stdout + out.stderr

    def wait_ready(self, timeout: float = 30) -> str:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            logs = self.logs()
            if "\nReady.\n" in logs:
                return logs
            time.sleep(0.1)
        raise AssertionError(f"no Ready. line within {timeout} s: {self.logs()}")

    def remove(self):
        docker("rm", "-f", self.name, check=False)

    def client(self, service: str):
        return boto3.client(service, endpoint_url=self.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test")


@pytest.fixture
def container(image):
    made = []

    def start(*run_args: str, args: tuple[str, ...] = ()) -> Container:
        c = Container(image, *run_args, args=args)
        made.append(c)
        return c

    yield start
    for c in made:
        c.remove()


def test_the_image_runs_the_binary_on_all_interfaces_at_4566_in_memory(image):
    config = json.loads(docker("image", "inspect", image).stdout)[0]["Config"]
    assert config["Entrypoint"] == ["/usr/local/bin/roto-server"]
    env = dict(item.split("=", 1) for item in config["Env"])
    assert env["ROTO_HOST"] == "0.0.0.0"
    assert env["ROTO_PORT"] == "4566"
    assert env["ROTO_EPHEMERAL"] == "true"
    assert env["ROTO_PRINT_READY"] == "true"
    assert "4566/tcp" in config["ExposedPorts"]


def test_the_container_prints_ready_when_it_answers_and_stops_cleanly(container):
    c = container()
    logs = c.wait_ready()
    start_line = logs.splitlines()[0]
    assert start_line.startswith("roto-server ") and f"listening on http://0.0.0.0:{c.port} " in start_line
    assert "store=ephemeral" in start_line
    health = json.loads(urlopen(f"{c.endpoint}/_localstack/health"))
    assert health["services"]["s3"] == "running"
    c.client("s3").create_bucket(Bucket="in-a-container")
    assert [b["Name"] for b in c.client("s3").list_buckets()["Buckets"]] == ["in-a-container"]
    docker("stop", c.name)
    assert docker("inspect", "-f", "{{.State.ExitCode}}", c.name).stdout.strip() == "0"


def test_a_mounted_setup_script_seeds_it_and_flags_pass_through(container, tmp_path):
    setup = tmp_path / "seed.lua"
    setup.write_text('aws.sqs.CreateQueue{QueueName = "seeded"}\n')
    c = container("-v", f"{setup}:/etc/roto/seed.lua:ro", args=("--setup", "/etc/roto/seed.lua", "--region",
                                                                    "eu-central-1"))
    c.wait_ready()
    sqs = boto3.client("sqs", endpoint_url=c.endpoint, region_name="eu-central-1",
                       aws_access_key_id="test", aws_secret_access_key="test")
    assert [u.rsplit("/", 1)[1] for u in sqs.list_queues()["QueueUrls"]] == ["seeded"]


def test_a_shell_ready_hook_in_the_image_is_reported_as_lacking_its_interpreter(container, tmp_path):
    hooks = tmp_path / "ready.d"
    hooks.mkdir()
    hook = hooks / "01-seed.sh"
    hook.write_text("#!/bin/sh\nawslocal s3 mb s3://seeded\n")
    hook.chmod(0o755)
    c = container("-v", f"{hooks}:/etc/roto/ready.d:ro", args=("--ready-hook", "/etc/roto/ready.d"))
    logs = c.wait_ready()
    assert "ready hook 01-seed.sh could not run: its interpreter /bin/sh is not installed here" in logs
    assert json.loads(urlopen(f"{c.endpoint}/_localstack/init/ready")) == {
        "completed": True, "scripts": [{"name": "01-seed.sh", "stage": "READY", "state": "ERROR"}]}


def test_the_docker_executor_runs_functions_through_a_mounted_engine_socket(container, tmp_path):
    if not has_image(PYTHON_IMAGE):
        pytest.skip(f"the engine has no {PYTHON_IMAGE} (scripts/docker-engine.sh imports one)")
    c = docker_executor_container(container, tmp_path)
    lam = c.client("lambda")
    package = io.BytesIO()
    with zipfile.ZipFile(package, "w") as z:
        z.writestr("app.py", "import os\ndef handler(event, context):\n"
                             "    return {'echo': event, 'endpoint': os.environ.get('AWS_ENDPOINT_URL')}\n")
    lam.create_function(FunctionName="in-docker", Runtime="python3.12", Handler="app.handler",
                        Role="arn:aws:iam::000000000000:role/r", Code={"ZipFile": package.getvalue()})
    lam.get_waiter("function_active_v2").wait(FunctionName="in-docker", WaiterConfig={"Delay": 1})
    answer = lam.invoke(FunctionName="in-docker", Payload=json.dumps({"n": 7}))
    assert "FunctionError" not in answer
    assert json.loads(answer["Payload"].read()) == {
        "echo": {"n": 7}, "endpoint": f"http://host.docker.internal:{c.port}"}
    ours = ("ps", "-a", "--filter", "label=roto.lambda", "--filter", "name=roto-lambda-in-docker-",
            "--format", "{{.Image}}")
    assert docker(*ours).stdout.split() == [PYTHON_IMAGE]
    docker("stop", c.name)
    assert docker(*ours).stdout.strip() == "", "stopping the server removed its function container"


def docker_executor_container(container, shared) -> Container:
    """A container of the image running functions through the engine's socket, mounted."""
    # Function code is unpacked under TMPDIR and bind-mounted by the engine, which resolves
    # paths on the host: the directory is shared at the same path.
    c = container("-v", f"{engine_socket()}:/var/run/docker.sock", "-v", f"{shared}:{shared}",
                  "-e", f"TMPDIR={shared}", "-e", "ROTO_LAMBDA_EXECUTOR=docker")
    c.wait_ready()
    return c


def test_servers_in_containers_and_on_the_host_keep_each_others_function_containers(container, tmp_path):
    """Every server in a container of its own is pid 1 of its own PID namespace: starting
    one never removes another live server's function containers, and what a killed one
    left is removed by a server on the host, which sees every namespace."""
    if not has_image(PROVIDED_IMAGE):
        pytest.skip(f"the engine has no {PROVIDED_IMAGE} (scripts/docker-engine.sh imports one)")

    def of(name):
        return containers(f"roto.lambda=000000000000/us-east-1/{name}:$LATEST")

    with RotoServer("--ephemeral", "--lambda-executor", "docker") as host:
        on_host = start_looping_function(host)
        first = docker_executor_container(container, tmp_path)
        in_first = start_looping_function(first)
        owner = of(in_first)[0]["Labels"]["roto.lambda.owner"].split("/")
        assert owner[2] == "1", "the server is pid 1 of its container"
        second = docker_executor_container(container, tmp_path)
        in_second = start_looping_function(second)
        assert of(in_second)[0]["Labels"]["roto.lambda.owner"].split("/")[1] != owner[1]
        assert [len(of(f)) for f in (on_host, in_first, in_second)] == [1, 1, 1]

        docker("kill", first.name)
        time.sleep(1)
        assert len(of(in_first)) == 1  # the runtime outlives its server...
        with RotoServer("--ephemeral", "--lambda-executor", "docker"):
            assert wait_for(lambda: of(in_first) == [])  # ...until a server on the host starts
            assert [len(of(f)) for f in (on_host, in_second)] == [1, 1]
        docker("stop", second.name)
        assert of(in_second) == []
    assert of(on_host) == []


def urlopen(url: str) -> bytes:
    with urllib.request.urlopen(url, timeout=10) as resp:
        return resp.read()
