"""The server's own robustness, black-box: the browser guard (Host names and cross-origin
pages), connection hygiene (header, body and idle timeouts, slowloris, a low open-file
limit), HTTP/2 with prior knowledge, the panic boundary, and a prompt stop on SIGTERM with
long polls open. Timeouts are set to 1 s (`--header-timeout` and friends) to keep it fast;
hostile input goes over raw sockets and http.client."""

from __future__ import annotations

import json
import os
import shutil
import signal
import socket
import subprocess
import threading
import time
import urllib.parse

import pytest

from roto_server import IDENTITY_BODY, RotoServer

FORM = {"Content-Type": "application/x-www-form-urlencoded"}
EVIL = "http://evil.example"
FAST = ("--header-timeout", "1", "--body-timeout", "1", "--idle-timeout", "1")
SIGNED_S3 = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, "
             "SignedHeaders=host, Signature=00")
SIGNED_SQS = SIGNED_S3.replace("/s3/", "/sqs/")
REQUEST_TIMEOUT = (b"Your socket connection to the server was not read from or written to within the "
                   b"timeout period. Idle connections will be closed.")


def identity(server, headers=None):
    """A form-encoded STS GetCallerIdentity; returns (status, headers, body)."""
    return server.request("POST", "/", IDENTITY_BODY.encode(), {**FORM, **(headers or {})})


def connect(server) -> socket.socket:
    sock = socket.create_connection((server.host, server.port), timeout=10)
    return sock


def closed_within(sock: socket.socket, seconds: float) -> float | None:
    """Reads until the server closes the connection; the time that took, or None if it was
    still open after `seconds`."""
    started = time.monotonic()
    sock.settimeout(seconds)
    try:
        while sock.recv(65536):
            pass
    except (socket.timeout, TimeoutError):
        return None
    except ConnectionResetError:
        pass
    return time.monotonic() - started


def response_of(sock: socket.socket) -> bytes:
    """Everything the server sends until it closes the connection or stops for 5 s."""
    sock.settimeout(5)
    out = b""
    try:
        while chunk := sock.recv(65536):
            out += chunk
    except (socket.timeout, TimeoutError, ConnectionResetError):
        pass
    return out


@pytest.fixture
def fast():
    """A server whose header, body and idle timeouts are 1 s."""
    with RotoServer("--ephemeral", *FAST) as server:
        yield server


# --- the browser guard: Host names ------------------------------------------------------

def test_a_host_name_the_server_does_not_answer_to_is_refused_naming_the_flag(server):
    rebinding = {"Host": f"rebind.evil.example:{server.port}"}
    status, _, body = server.request("GET", "/_roto/traces", headers=rebinding)
    assert status == 403 and "--allow-host rebind.evil.example" in json.loads(body)["error"]
    status, _, body = server.request("POST", "/", json.dumps({"SecretId": "s"}).encode(), {
        **rebinding, "Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "secretsmanager.GetSecretValue"})
    assert status == 403 and b"ROTO_ALLOW_HOST" in body
    assert identity(server, rebinding)[0] == 403


@pytest.mark.parametrize("host", [
    "127.0.0.1", "127.0.0.1:4566", "[::1]:4566", "10.0.0.7", "localhost", "localhost:4566",
    "bucket.s3.localhost:4566", "sqs.eu-west-1.localhost", "sqs.us-east-1.amazonaws.com",
    "bucket.s3.amazonaws.com", "s3.localhost.localstack.cloud:4566", "host.docker.internal:4566",
])
def test_names_and_addresses_the_server_answers_to_are_accepted(server, host):
    status, _, body = server.request("GET", "/_roto/health", headers={"Host": host})
    assert status == 200, body


def test_allow_host_admits_names_and_their_wildcards():
    with RotoServer("--ephemeral", "--allow-host", "dev.test", "--allow-host", "*.corp.test",
                    "--domain", "roto.test") as server:
        for host, expected in [("dev.test:4566", 200), ("api.corp.test", 200), ("sqs.roto.test", 200),
                               ("corp.test", 403), ("x.dev.test", 403), ("evil.example", 403)]:
            assert server.request("GET", "/_roto/health", headers={"Host": host})[0] == expected, host


def test_allow_host_star_from_the_environment_admits_every_name():
    with RotoServer("--ephemeral", env={"ROTO_ALLOW_HOST": "*"}) as server:
        assert server.request("GET", "/_roto/health", headers={"Host": "evil.example"})[0] == 200


def test_listening_off_loopback_answers_any_host_name():
    with RotoServer("--ephemeral", "--host", "0.0.0.0") as server:
        assert server.request("GET", "/_roto/health", headers={"Host": "roto.lan:4566"})[0] == 200


# --- the browser guard: cross-origin pages ------------------------------------------------

def test_cross_origin_pages_cannot_reset_move_the_clock_or_read_the_trace(server, client):
    client("sqs").create_queue(QueueName="survivor")
    page = {"Origin": EVIL, "Content-Type": "text/plain"}
    for path in ("/_roto/reset", "/_roto/clock?advance=86400"):
        status, _, body = server.request("POST", path, b"x", page)
        assert status == 403 and b"--allow-origin" in body, path
    assert server.request("GET", "/_roto/traces", headers={"Sec-Fetch-Site": "cross-site"})[0] == 403
    assert server.request("GET", "/_roto/traces", headers={"Origin": "null"})[0] == 403
    assert client("sqs").list_queues()["QueueUrls"]
    assert json.loads(server.request("GET", "/_roto/clock")[2])["advanced_millis"] == 0
    status, _, _ = server.request("POST", "/_roto/reset", b"", {"Origin": "http://localhost:3000"})
    assert status == 200 and "QueueUrls" not in client("sqs").list_queues()


def test_unsigned_cross_origin_form_calls_are_refused(server, client):
    calls = [b"Action=CreateQueue&QueueName=planted&Version=2012-11-05",
             b"Action=CreateUser&UserName=planted&Version=2010-05-08"]
    for body in calls:
        for ctype in ("application/x-www-form-urlencoded", "text/plain"):
            status, _, data = server.request("POST", "/", body, {"Origin": EVIL, "Content-Type": ctype})
            assert status == 403 and b"<Code>AccessDenied</Code>" in data, data
    status, _, _ = server.request("GET", "/?" + calls[0].decode(), headers={"Sec-Fetch-Site": "cross-site"})
    assert status == 403
    assert "QueueUrls" not in client("sqs").list_queues()
    assert client("iam").list_users()["Users"] == []
    status, _, data = server.request("POST", "/", calls[0], {**FORM, "Origin": EVIL, "Authorization": SIGNED_SQS})
    assert status == 200, data
    status, _, _ = server.request("POST", "/", calls[1], {**FORM, "Origin": "http://127.0.0.1:5173"})
    assert status == 200
    assert len(client("sqs").list_queues()["QueueUrls"]) == 1
    assert [u["UserName"] for u in client("iam").list_users()["Users"]] == ["planted"]


def test_unsigned_cross_origin_json_calls_are_refused_in_json(server):
    status, _, body = server.request("POST", "/", b"{}", {
        "Origin": EVIL, "Content-Type": "application/x-amz-json-1.0", "X-Amz-Target": "AmazonSQS.ListQueues"})
    assert status == 403 and json.loads(body)["__type"].endswith("AccessDeniedException")


def test_allow_origin_lets_a_page_in_and_keeps_others_out():
    with RotoServer("--ephemeral", "--allow-origin", "http://app.test:8080") as server:
        page = {"Origin": "http://app.test:8080", **FORM}
        assert server.request("POST", "/", b"Action=CreateQueue&QueueName=q&Version=2012-11-05", page)[0] == 200
        assert server.request("GET", "/_roto/traces", headers=page)[0] == 200
        other = {"Origin": "http://app.test:9090", **FORM}
        assert server.request("POST", "/_roto/reset", b"", other)[0] == 403
    with RotoServer("--ephemeral", env={"ROTO_ALLOW_ORIGIN": "*"}) as server:
        assert server.request("POST", "/_roto/reset", b"", {"Origin": EVIL})[0] == 200


def test_a_browser_app_on_an_allowed_origin_can_call_services_with_an_sdk():
    with RotoServer("--ephemeral", "--allow-origin", "http://shop.test:3000") as server:
        for origin in ("http://shop.test:3000", "http://localhost:5173"):
            status, headers, _ = server.request("OPTIONS", "/", headers={
                "Origin": origin, "Access-Control-Request-Method": "POST",
                "Access-Control-Request-Headers": "authorization,content-type,x-amz-date,x-amz-target"})
            assert status == 200 and headers["access-control-allow-origin"] == origin
            assert headers["access-control-allow-headers"] == "authorization,content-type,x-amz-date,x-amz-target"
            status, headers, body = server.request("POST", "/", b"{}", {
                "Origin": origin, "Content-Type": "application/x-amz-json-1.0",
                "X-Amz-Target": "DynamoDB_20120810.ListTables",
                "Authorization": SIGNED_S3.replace("/s3/", "/dynamodb/")})
            assert status == 200 and json.loads(body) == {"TableNames": []}
            assert headers["access-control-allow-origin"] == origin
            assert "x-amzn-requestid" in headers["access-control-expose-headers"]
        status, headers, _ = server.request("OPTIONS", "/", headers={
            "Origin": EVIL, "Access-Control-Request-Method": "POST"})
        assert "access-control-allow-origin" not in headers


def test_s3_browser_features_follow_the_bucket_cors(server, client):
    s3 = client("s3")
    s3.create_bucket(Bucket="pages")
    s3.put_bucket_cors(Bucket="pages", CORSConfiguration={"CORSRules": [
        {"AllowedOrigins": [EVIL], "AllowedMethods": ["GET", "PUT", "POST"], "AllowedHeaders": ["*"]}]})
    s3.put_object(Bucket="pages", Key="k", Body=b"public page")
    status, headers, body = server.request("GET", "/pages/k", headers={"Origin": EVIL})
    assert (status, body) == (200, b"public page") and headers["access-control-allow-origin"] == EVIL
    status, headers, _ = server.request("OPTIONS", "/pages/k", headers={
        "Origin": EVIL, "Access-Control-Request-Method": "PUT"})
    assert status == 200 and headers["access-control-allow-origin"] == EVIL
    status, _, _ = server.request("PUT", "/pages/put", b"from a page", {"Origin": EVIL})
    assert status == 200
    post = s3.generate_presigned_post("pages", "form")
    boundary = "----guardform"
    form = b"".join(f'--{boundary}\r\nContent-Disposition: form-data; name="{k}"\r\n\r\n{v}\r\n'.encode()
                    for k, v in post["fields"].items())
    form += (f'--{boundary}\r\nContent-Disposition: form-data; name="file"; filename="f"\r\n\r\n'
             f"uploaded\r\n--{boundary}--\r\n").encode()
    status, _, _ = server.request("POST", "/pages", form, {
        "Origin": EVIL, "Content-Type": f"multipart/form-data; boundary={boundary}"})
    assert status == 204
    status, _, body = server.request("POST", "/pages/big?uploads", b"", {"Origin": EVIL, "Content-Type": "text/plain"})
    assert status == 403 and b"AccessDenied" in body
    assert sorted(o["Key"] for o in s3.list_objects_v2(Bucket="pages")["Contents"]) == ["form", "k", "put"]
    assert "Uploads" not in s3.list_multipart_uploads(Bucket="pages")


def test_function_urls_are_left_to_their_own_cors(server):
    status, _, body = server.request("POST", "/", b"{}", {
        "Host": f"nosuchurl0123456789.lambda-url.us-east-1.localhost:{server.port}", "Origin": EVIL,
        "Content-Type": "text/plain"})
    assert status != 403 or b"--allow-origin" not in body


# --- connection hygiene -----------------------------------------------------------------

def test_an_idle_connection_is_closed_after_the_idle_timeout(fast):
    fresh = connect(fast)
    used = connect(fast)
    used.sendall(b"GET /_roto/health HTTP/1.1\r\nHost: localhost\r\n\r\n")
    assert b"200 OK" in used.recv(65536)
    started = time.monotonic()
    for sock in (fresh, used):
        assert closed_within(sock, 5) is not None
        assert 0.5 < time.monotonic() - started < 3


def test_a_request_head_that_trickles_is_cut_at_the_header_timeout():
    with RotoServer("--ephemeral", "--header-timeout", "1", "--idle-timeout", "30") as server:
        sock = connect(server)
        started = time.monotonic()
        sock.sendall(b"GET /_roto/health HTTP/1.1\r\n")
        try:
            while time.monotonic() - started < 5:
                sock.sendall(b"X-Slow: 1\r\n")
                time.sleep(0.2)
        except (BrokenPipeError, ConnectionResetError):
            pass
        assert closed_within(sock, 5) is not None
        assert time.monotonic() - started < 3


def test_a_body_that_stops_arriving_answers_s3_request_timeout_and_closes(fast):
    fast.client("s3").create_bucket(Bucket="slow")
    sock = connect(fast)
    sock.sendall(f"PUT /slow/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                 "Content-Length: 100\r\n\r\n0123456789".encode())
    started = time.monotonic()
    answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 400") and b"<Code>RequestTimeout</Code>" in answer
    assert REQUEST_TIMEOUT in answer and b"connection: close" in answer.lower()
    assert 0.5 < time.monotonic() - started < 4
    sock = connect(fast)
    sock.sendall(b"POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: application/x-www-form-urlencoded\r\n"
                 b"Content-Length: 100\r\n\r\nAction=ListQueues")
    answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 400") and b"RequestTimeout" in answer
    assert b"connection: close" in answer.lower()


def test_a_slow_upload_that_keeps_sending_is_never_cut(fast):
    s3 = fast.client("s3")
    s3.create_bucket(Bucket="trickle")
    sock = connect(fast)
    sock.sendall(f"PUT /trickle/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                 "Content-Length: 8\r\n\r\n".encode())
    for byte in b"trickled":
        time.sleep(0.4)
        sock.sendall(bytes([byte]))
    assert response_of(sock).startswith(b"HTTP/1.1 200")
    assert s3.get_object(Bucket="trickle", Key="k")["Body"].read() == b"trickled"


def test_an_answer_given_before_the_body_arrives_is_whole_and_the_connection_goes_on(server):
    """An error found in the head is answered at once; the body still arriving is read and
    dropped, so the answer is never lost to a reset and the connection serves the next
    request."""
    sock = connect(server)
    sock.sendall(f"PUT /no-such-bucket/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                 "Content-Length: 65536\r\n\r\n".encode())
    time.sleep(0.3)
    sock.sendall(b"x" * 65536)
    sock.sendall(f"GET /no-such-bucket/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                 "Connection: close\r\n\r\n".encode())
    first, _, second = response_of(sock).partition(b"</Error>")
    assert first.startswith(b"HTTP/1.1 404") and b"<Code>NoSuchBucket</Code>" in first
    assert b"connection: close" not in first.lower()
    assert b"HTTP/1.1 404" in second and b"<Code>NoSuchBucket</Code>" in second


def test_a_client_awaiting_100_continue_gets_the_early_answer_and_a_closed_connection(server):
    sock = connect(server)
    sock.sendall(f"PUT /no-such-bucket/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                 "Expect: 100-continue\r\nContent-Length: 4\r\n\r\n".encode())
    answer = response_of(sock)
    assert answer.startswith(b"HTTP/1.1 404") and b"<Code>NoSuchBucket</Code>" in answer
    assert b"100 Continue" not in answer
    assert closed_within(sock, 1) is not None


def test_slowloris_connections_are_dropped_while_others_are_served():
    with RotoServer("--ephemeral", "--header-timeout", "1", "--idle-timeout", "30") as server:
        lorises = [connect(server) for _ in range(200)]
        for sock in lorises:
            sock.sendall(b"GET / HTTP/1.1\r\nHost: localhost\r\n")
        started = time.monotonic()
        while time.monotonic() - started < 2.5:
            assert identity(server)[0] == 200
            for sock in lorises:
                try:
                    sock.sendall(b"X-a: b\r\n")
                except OSError:
                    pass
            time.sleep(0.25)
        still_open = [s for s in lorises if closed_within(s, 0.5) is None]
        assert not still_open, f"{len(still_open)} slowloris connections still open"


def _limited(limit: str, tmp_path, monkeypatch) -> RotoServer:
    """A started server run under `prlimit --nofile=LIMIT` through a shell wrapper."""
    if shutil.which("prlimit") is None:
        pytest.skip("prlimit is not installed")
    from roto_pytest.server import binary
    wrapper = tmp_path / "roto-limited"
    wrapper.write_text(f'#!/bin/sh\nexec prlimit --nofile={limit} "{binary()}" "$@"\n')
    wrapper.chmod(0o755)
    monkeypatch.setenv("ROTO_BINARY", str(wrapper))
    return RotoServer("--ephemeral").start()


def cpu_ticks(pid: int) -> int:
    with open(f"/proc/{pid}/stat") as f:
        fields = f.read().rsplit(")", 1)[1].split()
    return int(fields[11]) + int(fields[12])


def test_the_open_file_limit_is_raised_to_the_hard_limit(tmp_path, monkeypatch):
    server = _limited("256:4096", tmp_path, monkeypatch)
    try:
        with open(f"/proc/{server.process.pid}/limits") as f:
            line = next(l for l in f if l.startswith("Max open files"))
        assert line.split()[3:5] == ["4096", "4096"], line
    finally:
        server.stop()


def test_with_256_descriptors_and_400_idle_clients_a_new_client_is_answered(tmp_path, monkeypatch):
    server = _limited("256", tmp_path, monkeypatch)
    idle = []
    try:
        for _ in range(400):
            idle.append(connect(server))
        started = time.monotonic()
        status, _, _ = identity(server)
        took = time.monotonic() - started
        assert status == 200 and took < 1.0, took
        before = cpu_ticks(server.process.pid)
        time.sleep(1.0)
        assert cpu_ticks(server.process.pid) - before < 30, "the server spins while out of descriptors"
        assert identity(server)[0] == 200
    finally:
        for sock in idle:
            sock.close()
        assert server.stop() == 0


def test_http2_with_prior_knowledge_is_served_on_the_same_port(server):
    if shutil.which("curl") is None:
        pytest.skip("curl is not installed")
    out = subprocess.run(
        ["curl", "-s", "-i", "--http2-prior-knowledge", "-H", "Content-Type: application/x-www-form-urlencoded",
         "--data", IDENTITY_BODY, server.endpoint + "/"],
        capture_output=True, text=True, timeout=30)
    assert out.stdout.startswith("HTTP/2 200"), out.stdout + out.stderr
    assert "<Arn>arn:aws:sts::000000000000:user/" in out.stdout or "GetCallerIdentityResult" in out.stdout
    assert identity(server)[0] == 200


# --- the panic boundary -------------------------------------------------------------------

def test_an_input_that_once_panicked_costs_at_most_its_own_request(server, client):
    """SNS AddPermission over a topic whose Policy was `[]` panicked in its handler (the
    release build then aborted the process). SNS now refuses such a Policy; whichever way
    the input is answered, a panic may only ever cost its request a 500 InternalError in
    the query protocol, traced, and the server goes on. The boundary itself is unit-tested
    with a handler that panics (roto-server's http.rs)."""
    arn = client("sns").create_topic(Name="fragile")["TopicArn"]
    calls = [
        {"Action": "SetTopicAttributes", "TopicArn": arn, "AttributeName": "Policy", "AttributeValue": "[]"},
        {"Action": "AddPermission", "TopicArn": arn, "Label": "l",
         "AWSAccountId.member.1": "111122223333", "ActionName.member.1": "Publish"},
    ]
    for call in calls:
        form = urllib.parse.urlencode({**call, "Version": "2010-03-31"}).encode()
        status, _, body = server.request("POST", "/", form, FORM)
        assert status in (200, 400, 500), body
        if status == 500:
            assert b"<Code>InternalError</Code>" in body and b"<RequestId>" in body
            entry = server.wait_for_trace(service="sns", operation=call["Action"], error_code="InternalError")
            assert entry["status"] == 500
    assert identity(server)[0] == 200
    assert client("sns").list_topics()["Topics"] == [{"TopicArn": arn}]


# --- stopping -------------------------------------------------------------------------------

def test_sigterm_answers_long_polls_at_once_and_exits_promptly(capsys):
    server = RotoServer("--ephemeral").start()
    try:
        url = server.client("sqs").create_queue(QueueName="polled")["QueueUrl"]
        clients = [server.client("sqs") for _ in range(5)]
        answers: list = []

        def poll(sqs):
            answers.append(sqs.receive_message(QueueUrl=url, WaitTimeSeconds=20))

        def wait_trace():
            answers.append(server.traces(wait=30, operation="NeverHappens"))

        threads = [threading.Thread(target=poll, args=(c,)) for c in clients]
        threads.append(threading.Thread(target=wait_trace))
        for t in threads:
            t.start()
        time.sleep(1.0)
        sent = time.monotonic()
        server.process.send_signal(signal.SIGTERM)
        server.process.wait(timeout=15)
        took = time.monotonic() - sent
        for t in threads:
            t.join(timeout=5)
        assert server.process.returncode == 0
        assert len(answers) == 6 and all(not a.get("Messages") for a in answers if isinstance(a, dict))
        assert took < 1.5, took
        with capsys.disabled():
            print(f"\nSIGTERM to exit with 5 long polls and a trace wait open: {took * 1000:.0f} ms")
    finally:
        server.stop()


def test_sigterm_lets_an_upload_in_flight_finish_then_exits():
    server = RotoServer("--ephemeral").start()
    try:
        server.client("s3").create_bucket(Bucket="inflight")
        sock = connect(server)
        sock.sendall(f"PUT /inflight/k HTTP/1.1\r\nHost: localhost\r\nAuthorization: {SIGNED_S3}\r\n"
                     "Content-Length: 4\r\n\r\nab".encode())
        time.sleep(0.3)
        server.process.send_signal(signal.SIGTERM)
        time.sleep(0.5)
        sock.sendall(b"cd")
        last = time.monotonic()
        assert response_of(sock).startswith(b"HTTP/1.1 200")
        server.process.wait(timeout=15)
        assert server.process.returncode == 0 and time.monotonic() - last < 1.5
    finally:
        server.stop()
