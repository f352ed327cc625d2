"""The binary itself: flags, start line, stop, introspection, routing and malformed input."""

from __future__ import annotations

import json
import os
import re
import signal
import socket
import subprocess
import threading
import time
import urllib.error
import urllib.request

import pytest

from roto_server import START_LINE, RotoServer, binary

IDENTITY = b"Action=GetCallerIdentity&Version=2011-06-15"
FORM = {"Content-Type": "application/x-www-form-urlencoded"}


def run_binary(*args: str, env: dict | None = None, timeout: float = 10):
    full_env = dict(os.environ)
    full_env.update(env or {})
    return subprocess.run([str(binary()), *args], capture_output=True, text=True, timeout=timeout, env=full_env)


def signed(service: str, key: str = "test", region: str = "us-east-1") -> dict:
    return {
        "Authorization": f"AWS4-HMAC-SHA256 Credential={key}/20260101/{region}/{service}/aws4_request, "
        "SignedHeaders=host;x-amz-date, Signature=00",
        "X-Amz-Date": "20260101T000000Z",
    }


def test_help_documents_every_flag():
    out = run_binary("--help")
    assert out.returncode == 0
    for flag in ["--host", "--port", "--ephemeral", "--data-dir", "--durable", "--setup", "--account-id",
                 "--region", "--lambda-executor", "--domain", "--trace-limit", "--log-level"]:
        assert flag in out.stdout, flag
    for var in ["ROTO_HOST", "ROTO_PORT", "ROTO_DATA_DIR", "ROTO_TRACE_LIMIT"]:
        assert var in out.stdout, var


def test_version_flag_prints_the_version():
    out = run_binary("--version")
    assert out.returncode == 0
    assert re.match(r"^roto-server \d+\.\d+\.\d+", out.stdout)


@pytest.mark.parametrize("args", [
    ["--ephemeral", "--data-dir", "somewhere"],
    ["--ephemeral", "--durable"],
    ["--ephemeral", "--account-id", "12345"],
    ["--ephemeral", "--port", "not-a-port"],
    ["--ephemeral", "--lambda-executor", "vm"],
])
def test_conflicting_or_invalid_flags_exit_2_with_a_message(args, tmp_path):
    out = run_binary(*args)
    assert out.returncode == 2
    assert "error" in out.stderr.lower()
    assert not (tmp_path / "somewhere").exists()


def test_start_line_names_version_address_store_and_services():
    with RotoServer("--ephemeral") as s:
        m = START_LINE.match(s.start_line)
        assert m, s.start_line
        assert m["store"] == "ephemeral"
        assert m["host"] == "127.0.0.1"
        assert set(m["services"].split(",")) >= {"s3", "dynamodb", "sqs", "sts"}


def test_default_store_is_dot_roto_in_the_working_directory(tmp_path):
    with RotoServer(cwd=str(tmp_path)) as s:
        assert "store=persistent" in s.start_line
    assert (tmp_path / ".roto" / "roto.db").exists()


def test_durable_mode_is_reported(tmp_path):
    with RotoServer("--data-dir", str(tmp_path / "d"), "--durable") as s:
        assert "store=durable" in s.start_line


def test_environment_variables_set_flags():
    env = {"ROTO_EPHEMERAL": "true", "ROTO_ACCOUNT_ID": "111122223333", "ROTO_REGION": "eu-west-1"}
    with RotoServer(env=env) as s:
        assert "store=ephemeral" in s.start_line
        status, _, body = s.request("POST", "/", IDENTITY, FORM)
        assert status == 200
        assert b"<Account>111122223333</Account>" in body


def test_port_in_use_fails_with_a_message():
    with socket.socket() as sock:
        sock.bind(("127.0.0.1", 0))
        sock.listen()
        port = sock.getsockname()[1]
        out = run_binary("--ephemeral", "--port", str(port))
        assert out.returncode != 0
        assert f"127.0.0.1:{port}" in out.stderr


def test_sigterm_and_sigint_stop_with_exit_0():
    for sig in (signal.SIGTERM, signal.SIGINT):
        s = RotoServer("--ephemeral").start()
        assert s.stop(sig) == 0


def test_stop_finishes_an_in_flight_long_request():
    s = RotoServer("--ephemeral").start()
    result = {}

    def wait_on_trace():
        with urllib.request.urlopen(f"{s.endpoint}/_roto/traces?operation=Never&wait=1", timeout=10) as r:
            result["status"] = r.status
            result["body"] = json.load(r)

    t = threading.Thread(target=wait_on_trace)
    t.start()
    time.sleep(0.2)
    assert s.stop(signal.SIGTERM) == 0
    t.join()
    assert result == {"status": 200, "body": {"traces": []}}


def test_keep_alive_serves_many_requests_on_one_connection(server):
    import http.client
    conn = http.client.HTTPConnection(server.host, server.port)
    for _ in range(20):
        conn.request("POST", "/", body=IDENTITY, headers=FORM)
        resp = conn.getresponse()
        assert resp.status == 200
        resp.read()
        assert resp.getheader("Connection", "keep-alive").lower() != "close"
    conn.close()


def test_expect_100_continue_is_answered(server):
    with socket.create_connection((server.host, server.port)) as sock:
        sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                     b"Content-Length: %d\r\nExpect: 100-continue\r\n\r\n" % len(IDENTITY))
        first = sock.recv(1024)
        assert first.startswith(b"HTTP/1.1 100 Continue")
        sock.sendall(IDENTITY)
        data = b""
        while b"</GetCallerIdentityResponse>" not in data:
            chunk = sock.recv(65536)
            assert chunk
            data += chunk
        assert b"200 OK" in data


def test_health_reports_version_store_and_services(server):
    with urllib.request.urlopen(f"{server.endpoint}/_roto/health") as r:
        health = json.load(r)
    assert health["status"] == "running"
    assert health["store"] == "ephemeral"
    assert re.match(r"\d+\.\d+\.\d+", health["version"])
    assert {"s3", "dynamodb", "sqs", "sts"} <= set(health["services"])


def test_unknown_introspection_endpoint_is_404(server):
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{server.endpoint}/_roto/nothing")
    assert e.value.code == 404


def test_trace_records_requests_with_status_error_code_and_duration(server, client):
    sts = client("sts")
    sts.get_caller_identity()
    status, _, _ = server.request("POST", "/", b"Action=Bogus&Version=2011-06-15", FORM)
    assert status == 400
    entries = server.traces(service="sts")
    ok = [e for e in entries if e["operation"] == "GetCallerIdentity"]
    assert ok and ok[-1]["status"] == 200 and ok[-1]["kind"] == "request"
    assert ok[-1]["account"] == "000000000000" and ok[-1]["region"] == "us-east-1"
    assert ok[-1]["duration_ms"] >= 0
    bad = server.traces(error_code="InvalidAction")
    assert len(bad) == 1 and bad[0]["status"] == 400


def test_trace_filters_by_sequence_and_limit(server):
    for _ in range(5):
        server.request("POST", "/", IDENTITY, FORM)
    all_entries = server.traces(operation="GetCallerIdentity")
    seqs = [e["seq"] for e in all_entries]
    assert seqs == sorted(seqs)
    after = server.traces(after=seqs[2])
    assert all(e["seq"] > seqs[2] for e in after)
    assert len(server.traces(limit=2)) == 2


def test_trace_wait_returns_when_a_match_arrives(server):
    last = max((e["seq"] for e in server.traces()), default=0)

    def later():
        time.sleep(0.3)
        server.request("POST", "/", IDENTITY, FORM)

    threading.Thread(target=later).start()
    started = time.monotonic()
    found = server.traces(operation="GetCallerIdentity", after=last, wait=10)
    assert found
    assert time.monotonic() - started < 5


def test_trace_wait_times_out_empty(server):
    started = time.monotonic()
    assert server.traces(operation="Never", wait=0.3) == []
    assert time.monotonic() - started >= 0.3


@pytest.mark.parametrize("query", ["kind=sideways", "wait=forever", "after=x", "colour=red", "wait=3600"])
def test_bad_trace_filters_are_400(server, query):
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(f"{server.endpoint}/_roto/traces?{query}")
    assert e.value.code == 400
    assert "error" in json.load(e.value)


def test_trace_is_a_bounded_ring():
    with RotoServer("--ephemeral", "--trace-limit", "3") as s:
        for _ in range(10):
            s.request("POST", "/", IDENTITY, FORM)
        entries = s.traces()
        assert len(entries) == 3
        assert entries[-1]["seq"] >= 10


def test_reset_empties_the_trace(server):
    server.request("POST", "/", IDENTITY, FORM)
    status, _, body = server.request("POST", "/_roto/reset")
    assert status == 200 and json.loads(body) == {"reset": True}
    assert server.traces() == []


def test_twelve_digit_access_key_selects_the_account(server):
    status, _, body = server.request("POST", "/", IDENTITY, {**FORM, **signed("sts", key="123456789012")})
    assert status == 200
    assert b"<Account>123456789012</Account>" in body
    entry = server.traces(operation="GetCallerIdentity")[-1]
    assert entry["account"] == "123456789012"


def test_scope_region_is_the_region(server):
    server.request("POST", "/", IDENTITY, {**FORM, **signed("sts", region="ap-southeast-2")})
    assert server.traces(operation="GetCallerIdentity")[-1]["region"] == "ap-southeast-2"


def test_presigned_style_credential_routes_by_query(server):
    path = ("/?Action=GetCallerIdentity&Version=2011-06-15&X-Amz-Algorithm=AWS4-HMAC-SHA256"
            "&X-Amz-Credential=210987654321%2F20260101%2Feu-north-1%2Fsts%2Faws4_request&X-Amz-Signature=00")
    status, _, body = server.request("GET", path)
    assert status == 200, body
    assert b"<Account>210987654321</Account>" in body
    assert server.traces(operation="GetCallerIdentity")[-1]["region"] == "eu-north-1"


def test_sigv2_key_selects_the_account(server):
    status, _, body = server.request("POST", "/", IDENTITY, {**FORM, "Authorization": "AWS 098765432109:c2ln"})
    assert status == 200
    assert b"<Account>098765432109</Account>" in body


@pytest.mark.parametrize("body,headers", [
    (b"\xff\xfe\x00garbage", {"Content-Type": "application/x-www-form-urlencoded"}),
    (b"{not json", {"Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "DynamoDB_20120810.ListTables"}),
    (b"<a><b></a>", {"Content-Type": "application/xml"}),
    (b"", {"X-Amz-Target": "Nobody.Nothing"}),
])
def test_malformed_requests_get_errors_never_500_and_the_server_lives(server, body, headers):
    status, _, _ = server.request("POST", "/", body, headers)
    assert 400 <= status < 500 or status == 501
    assert server.request("POST", "/", IDENTITY, FORM)[0] == 200


def test_garbage_on_the_socket_does_not_kill_the_server(server):
    with socket.create_connection((server.host, server.port)) as sock:
        sock.sendall(b"\x00\x01\x02 NOT HTTP AT ALL\r\n\r\n")
        try:
            sock.recv(1024)
        except OSError:
            pass
    assert server.request("POST", "/", IDENTITY, FORM)[0] == 200
