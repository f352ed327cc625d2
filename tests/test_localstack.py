"""LocalStack's conventions: /_localstack/* endpoints, *.localhost.localstack.cloud host names
and ready hooks (--ready-hook), so that wait strategies and init scripts written for
LocalStack work against Roto unchanged."""

from __future__ import annotations

import http.client
import json
import os
import signal
import stat
import subprocess
import sys
import time

import pytest

from roto_server import RotoServer, binary

LOCALSTACK_SERVICES = {
    "s3", "dynamodb", "dynamodbstreams", "sqs", "sns", "lambda", "logs", "events",
    "secretsmanager", "ssm", "kms", "iam", "sts", "apigateway", "apigatewayv2", "stepfunctions", "kinesis", "firehose",
    "scheduler",
    "cloudwatch",
    "cloudformation",
    "ecr",
}
VENV_BIN = os.path.dirname(sys.executable)


def get_json(server, path, headers=None):
    status, hdrs, body = server.request("GET", path, headers=headers)
    return status, hdrs, (json.loads(body) if body else None)


def raw(server, method, path, host, body=b"", headers=None):
    """A request to the server's socket with any Host header."""
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.putrequest(method, path, skip_host=True, skip_accept_encoding=True)
        conn.putheader("Host", host)
        for name, value in (headers or {}).items():
            conn.putheader(name, value)
        conn.putheader("Content-Length", str(len(body)))
        conn.endheaders(body)
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def wait_for_init(server, timeout=60.0):
    deadline = time.monotonic() + timeout
    while True:
        status, _, init = get_json(server, "/_localstack/init/ready")
        assert status == 200
        if init["completed"]:
            return init
        assert time.monotonic() < deadline, init
        time.sleep(0.05)


# --- endpoints ------------------------------------------------------------------------------

def test_health_answers_in_localstack_shape(server):
    status, headers, health = get_json(server, "/_localstack/health")
    assert status == 200
    assert headers["content-type"] == "application/json"
    assert set(health["services"]) == LOCALSTACK_SERVICES
    assert set(health["services"].values()) <= {"available", "running"}
    assert health["edition"] == "community"
    assert health["version"].count(".") == 2
    wait_for_init(server)
    assert get_json(server, "/_localstack/health")[2]["features"]["initScripts"] == "initialized"


def test_health_answers_head_and_a_trailing_slash(server):
    status, _, body = server.request("HEAD", "/_localstack/health")
    assert (status, body) == (200, b"")
    status, _, health = get_json(server, "/_localstack/health/")
    assert status == 200 and "services" in health


def test_info_names_version_edition_session_and_uptime(server):
    status, _, info = get_json(server, "/_localstack/info")
    assert status == 200
    assert {"version", "edition", "is_license_activated", "session_id", "machine_id", "system",
            "is_docker", "server_time_utc", "uptime"} <= set(info)
    assert info["is_license_activated"] is False
    assert isinstance(info["uptime"], int)
    assert len(info["server_time_utc"]) == 19 and info["server_time_utc"][10] == "T"
    assert get_json(server, "/_localstack/info")[2]["session_id"] == info["session_id"]


def test_init_without_hooks_reports_every_stage_and_no_scripts(server):
    init = wait_for_init(server)
    assert init == {"completed": True, "scripts": []}
    status, _, init = get_json(server, "/_localstack/init")
    assert status == 200
    assert init == {"completed": {"BOOT": True, "START": True, "READY": True, "SHUTDOWN": False},
                    "scripts": []}
    assert get_json(server, "/_localstack/init/boot")[2] == {"completed": True, "scripts": []}
    status, _, body = get_json(server, "/_localstack/init/later")
    assert status == 404 and "LATER" in body["error"]


@pytest.mark.parametrize("path", ["/_aws/sqs/messages", "/_localstack/diagnose", "/_aws", "/_localstack"])
def test_other_localstack_paths_answer_404_naming_roto_s_interface(server, path):
    status, headers, body = get_json(server, path)
    assert status == 404
    assert headers["content-type"] == "application/json"
    assert "/_roto/" in body["error"]


def test_localstack_endpoints_follow_the_browser_guard(server):
    status, _, body = server.request("GET", "/_localstack/health", headers={"Origin": "http://evil.test"})
    assert status == 403
    assert json.loads(body)["error"].startswith("/_localstack/health refuses cross-origin")
    status, _, _ = server.request("GET", "/_localstack/init", headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    status, _, _ = server.request("GET", "/_localstack/health", headers={"Origin": "http://localhost:3000"})
    assert status == 200
    status, _ = raw(server, "GET", "/_localstack/health", "rebind.evil.test")
    assert status == 403


# --- host names -----------------------------------------------------------------------------

S3_HOSTS = [
    "{b}.s3.localhost.localstack.cloud",
    "{b}.s3.localhost.localstack.cloud:{port}",
    "{b}.s3.us-east-1.localhost.localstack.cloud:{port}",
    "{b}.s3-us-east-1.localhost.localstack.cloud:{port}",
    "{b}.s3.amazonaws.com",
    "{b}.s3.us-east-1.amazonaws.com",
    "{b}.s3-us-east-1.amazonaws.com:{port}",
    "{b}.s3-external-1.amazonaws.com",
    "{b}.s3.dualstack.us-east-1.amazonaws.com",
]


@pytest.fixture(params=[[], ["--domain", "roto.test"]], ids=["default-domain", "other-domain"])
def s3_server(request):
    with RotoServer("--ephemeral", *request.param) as srv:
        s3 = srv.client("s3")
        s3.create_bucket(Bucket="vhost-bucket")
        s3.put_object(Bucket="vhost-bucket", Key="dir/key.txt", Body=b"hello")
        yield srv


@pytest.mark.parametrize("form", S3_HOSTS)
def test_every_s3_virtual_host_form_reaches_its_bucket(s3_server, form):
    host = form.format(b="vhost-bucket", port=s3_server.port)
    status, body = raw(s3_server, "GET", "/dir/key.txt", host)
    assert (status, body) == (200, b"hello")
    status, body = raw(s3_server, "GET", "/?list-type=2", host)
    assert status == 200 and b"<Key>dir/key.txt</Key>" in body


@pytest.mark.parametrize("host", ["s3.localhost.localstack.cloud", "s3.us-east-1.localhost.localstack.cloud",
                                  "s3-us-east-1.amazonaws.com", "localhost.localstack.cloud:4566"])
def test_path_style_hosts_name_no_bucket(s3_server, host):
    status, body = raw(s3_server, "GET", "/vhost-bucket/dir/key.txt", host)
    assert (status, body) == (200, b"hello")


def test_a_virtual_host_puts_objects_in_its_bucket(s3_server):
    host = f"vhost-bucket.s3.localhost.localstack.cloud:{s3_server.port}"
    status, _ = raw(s3_server, "PUT", "/from-host", host, b"put by host")
    assert status == 200
    body = s3_server.client("s3").get_object(Bucket="vhost-bucket", Key="from-host")["Body"].read()
    assert body == b"put by host"


def test_service_hosts_choose_service_and_region(server, client):
    form = {"Content-Type": "application/x-www-form-urlencoded"}
    status, body = raw(server, "POST", "/", "sqs.eu-west-1.localhost.localstack.cloud",
                       b"Action=CreateQueue&QueueName=by-host&Version=2012-11-05", form)
    assert status == 200, body
    assert "by-host" in " ".join(client("sqs", region_name="eu-west-1").list_queues().get("QueueUrls", []))
    assert not client("sqs", region_name="us-east-1").list_queues().get("QueueUrls")
    target = {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.CreateTable"}
    table = json.dumps({
        "TableName": "by-host", "BillingMode": "PAY_PER_REQUEST",
        "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
        "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
    }).encode()
    status, body = raw(server, "POST", "/", "dynamodb.ap-south-1.localhost.localstack.cloud:4566", table, target)
    assert status == 200, body
    assert b":ap-south-1:" in body
    status, body = raw(server, "POST", "/", "sts.localhost.localstack.cloud",
                       b"Action=GetCallerIdentity&Version=2011-06-15", form)
    assert status == 200 and b"<Account>000000000000</Account>" in body


# --- ready hooks ----------------------------------------------------------------------------

def write_script(path, text, mode=0o755):
    path.write_text("#!/bin/sh\n" + text)
    path.chmod(mode)
    return path


def stop_and_read_stderr(srv) -> str:
    srv.process.send_signal(signal.SIGTERM)
    _, err = srv.process.communicate(timeout=30)
    return err


def hook_server(*args, tmp_path):
    env = {"PATH": VENV_BIN + os.pathsep + os.environ.get("PATH", ""),
           "HOOK_OUT": str(tmp_path), "AWS_PROFILE": "not-there", "AWS_SESSION_TOKEN": "stale"}
    return RotoServer("--ephemeral", *args, env=env).start()


def test_a_hook_directory_runs_in_order_with_the_server_s_environment(tmp_path):
    hooks = tmp_path / "ready.d"
    hooks.mkdir()
    write_script(hooks / "01-seed.sh", """
set -e
env | grep -E '^AWS_' | sort > "$HOOK_OUT/env.txt"
echo "seeding from $0"
aws s3 mb s3://from-hook
awslocal sqs create-queue --queue-name from-awslocal > /dev/null
""")
    write_script(hooks / "02-fail.sh", 'echo "about to fail" >&2\nexit 3\n')
    write_script(hooks / "03-after.sh", 'touch "$HOOK_OUT/after-ran"\n')
    write_script(hooks / "04-not-executable.sh", 'touch "$HOOK_OUT/must-not-run"\n', mode=0o644)
    write_script(hooks / ".hidden", 'touch "$HOOK_OUT/must-not-run"\n')
    srv = hook_server("--ready-hook", str(hooks), "--region", "eu-west-2", tmp_path=tmp_path)
    try:
        init = wait_for_init(srv)
        assert init["scripts"] == [
            {"stage": "READY", "name": "01-seed.sh", "state": "SUCCESSFUL"},
            {"stage": "READY", "name": "02-fail.sh", "state": "ERROR"},
            {"stage": "READY", "name": "03-after.sh", "state": "SUCCESSFUL"},
        ]
        assert get_json(srv, "/_localstack/init")[2]["completed"]["READY"] is True
        env = dict(line.split("=", 1) for line in (tmp_path / "env.txt").read_text().splitlines())
        assert env["AWS_ENDPOINT_URL"] == srv.endpoint
        assert env["AWS_ENDPOINT_URL_S3"] == srv.endpoint
        assert (env["AWS_ACCESS_KEY_ID"], env["AWS_SECRET_ACCESS_KEY"]) == ("test", "test")
        assert env["AWS_DEFAULT_REGION"] == env["AWS_REGION"] == "eu-west-2"
        assert "AWS_PROFILE" not in env and "AWS_SESSION_TOKEN" not in env
        assert (tmp_path / "after-ran").exists()
        assert not (tmp_path / "must-not-run").exists()
        buckets = [b["Name"] for b in srv.client("s3").list_buckets()["Buckets"]]
        assert buckets == ["from-hook"]
        queues = srv.client("sqs", region_name="eu-west-2").list_queues()["QueueUrls"]
        assert queues[0].endswith("/from-awslocal")
    finally:
        err = stop_and_read_stderr(srv)
    assert "[01-seed.sh] seeding from" in err
    assert "[02-fail.sh] about to fail" in err
    assert "ready hook 02-fail.sh failed: exit status: 3" in err
    assert "04-not-executable.sh is not executable" in err
    assert "1 of 3 ready hooks failed" in err


def test_a_running_hook_is_reported_running_and_the_server_answers_meanwhile(tmp_path):
    gate = tmp_path / "gate"
    hook = write_script(tmp_path / "wait.sh", f'while [ ! -e "{gate}" ]; do sleep 0.05; done\n')
    srv = hook_server("--ready-hook", str(hook), tmp_path=tmp_path)
    try:
        deadline = time.monotonic() + 20
        while True:
            init = get_json(srv, "/_localstack/init/ready")[2]
            if init["scripts"][0]["state"] == "RUNNING":
                break
            assert time.monotonic() < deadline, init
            time.sleep(0.02)
        assert init["completed"] is False
        assert get_json(srv, "/_localstack/health")[2]["features"]["initScripts"] == "initializing"
        gate.touch()
        assert wait_for_init(srv)["scripts"][0]["state"] == "SUCCESSFUL"
    finally:
        srv.stop()


def test_hooks_come_from_the_environment_and_repeat_in_order(tmp_path):
    first = write_script(tmp_path / "b-first.sh", 'echo one >> "$HOOK_OUT/order"\n')
    second = write_script(tmp_path / "a-second.sh", 'echo two >> "$HOOK_OUT/order"\n')
    env = {"ROTO_READY_HOOK": f"{first},{second}", "HOOK_OUT": str(tmp_path)}
    with RotoServer("--ephemeral", env=env) as srv:
        names = [s["name"] for s in wait_for_init(srv)["scripts"]]
    assert names == ["b-first.sh", "a-second.sh"]
    assert (tmp_path / "order").read_text() == "one\ntwo\n"


def test_a_hook_that_cannot_start_is_an_error(tmp_path):
    hook = tmp_path / "plain.sh"
    hook.write_text("#!/bin/sh\n")
    hook.chmod(stat.S_IRUSR | stat.S_IWUSR)
    srv = RotoServer("--ephemeral", "--ready-hook", str(hook)).start()
    try:
        assert wait_for_init(srv)["scripts"] == [{"stage": "READY", "name": "plain.sh", "state": "ERROR"}]
        status, _, _ = srv.request("POST", "/", b"Action=GetCallerIdentity&Version=2011-06-15",
                                   {"Content-Type": "application/x-www-form-urlencoded"})
        assert status == 200
    finally:
        err = stop_and_read_stderr(srv)
    assert "ready hook plain.sh could not run" in err


def test_a_missing_hook_path_exits_2_naming_it(tmp_path):
    missing = tmp_path / "nowhere"
    out = subprocess.run([str(binary()), "--ephemeral", "--port", "0", "--ready-hook", str(missing)],
                         capture_output=True, text=True, timeout=30)
    assert out.returncode == 2
    assert str(missing) in out.stderr
    assert out.stdout == ""


def test_hooks_of_a_server_on_every_interface_reach_it_on_loopback(tmp_path):
    hook = write_script(tmp_path / "where.sh", 'echo "$AWS_ENDPOINT_URL" > "$HOOK_OUT/endpoint"\n')
    with RotoServer("--ephemeral", "--host", "0.0.0.0", "--ready-hook", str(hook),
                    env={"HOOK_OUT": str(tmp_path)}) as srv:
        wait_for_init(srv)
        assert (tmp_path / "endpoint").read_text().strip() == f"http://127.0.0.1:{srv.port}"


def test_a_hook_still_running_does_not_hold_the_server_at_stop(tmp_path):
    hook = write_script(tmp_path / "forever.sh", "exec sleep 60\n")
    srv = RotoServer("--ephemeral", "--ready-hook", str(hook)).start()
    deadline = time.monotonic() + 20
    while get_json(srv, "/_localstack/init/ready")[2]["scripts"][0]["state"] != "RUNNING":
        assert time.monotonic() < deadline
        time.sleep(0.02)
    started = time.monotonic()
    assert srv.stop() == 0
    assert time.monotonic() - started < 10
