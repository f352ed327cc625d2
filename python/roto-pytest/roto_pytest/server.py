"""Start the real roto-server binary on a free port, wait until it is ready, stop it.

`RotoServer` launches the binary with the given flags and `--port 0`, reads the port from
its start line, waits for STS GetCallerIdentity to answer (setup scripts run before the
port opens, so ready means seeded), and stops it with SIGTERM (SIGKILL only if it hangs).
It also carries the helpers tests use: a boto3 client factory, trace queries, waiting for a
delivery, and reset.
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import re
import shutil
import signal
import subprocess
import time
import urllib.parse
import urllib.request

START_LINE = re.compile(
    r"^roto-server (?P<version>\S+) listening on http://(?P<host>[^:]+):(?P<port>\d+) "
    r"store=(?P<store>\w+) services=(?P<services>\S+)$"
)
IDENTITY_BODY = "Action=GetCallerIdentity&Version=2011-06-15"
BINARY_NAME = "roto-server"
CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}


def binary() -> pathlib.Path:
    """The binary to run: $ROTO_BINARY, else target/release/roto-server in the working
    directory or one of its parents, else roto-server on PATH."""
    configured = os.environ.get("ROTO_BINARY")
    if configured:
        path = pathlib.Path(configured)
        if not path.is_file():
            raise RuntimeError(f"ROTO_BINARY={path} does not exist")
        return path
    cwd = pathlib.Path.cwd()
    for directory in (cwd, *cwd.parents):
        candidate = directory / "target" / "release" / BINARY_NAME
        if candidate.is_file():
            return candidate
    on_path = shutil.which(BINARY_NAME)
    if on_path:
        return pathlib.Path(on_path)
    raise RuntimeError(
        "no roto-server binary: set ROTO_BINARY, build it with "
        "`cargo build -p roto-server --release` (target/release/roto-server is looked for "
        f"from {cwd} upwards), or put roto-server on PATH"
    )


class RotoServer:
    """One running roto-server process."""

    def __init__(self, *args: str, env: dict[str, str] | None = None, cwd: str | None = None):
        self.args = list(args)
        self.env = env
        self.cwd = cwd
        self.process: subprocess.Popen[str] | None = None
        self.start_line = ""
        self.port = 0
        self.host = "127.0.0.1"

    @property
    def endpoint(self) -> str:
        """The endpoint URL SDKs and the CLI use."""
        return f"http://{self.host}:{self.port}"

    def start(self, timeout: float = 20.0) -> "RotoServer":
        """Launches the binary and returns once it answers GetCallerIdentity.

        A server that exits before its start line (bad flags, a failing setup script)
        raises RuntimeError carrying its exit code and stderr."""
        env = dict(os.environ)
        env.update(self.env or {})
        self.process = subprocess.Popen(
            [str(binary()), "--port", "0", *self.args],
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            env=env,
            cwd=self.cwd,
        )
        assert self.process.stdout is not None
        self.start_line = self.process.stdout.readline().strip()
        match = START_LINE.match(self.start_line)
        if not match:
            self.process.kill()
            _, err = self.process.communicate(timeout=5)
            raise RuntimeError(
                f"roto-server exited with {self.process.returncode} before it listened; "
                f"start line {self.start_line!r}; stderr: {err}"
            )
        self.host, self.port = match["host"], int(match["port"])
        self.wait_ready(timeout)
        return self

    def wait_ready(self, timeout: float) -> None:
        """Polls STS GetCallerIdentity until it answers 200."""
        deadline = time.monotonic() + timeout
        while True:
            try:
                status, _, _ = self.request("POST", "/", IDENTITY_BODY.encode(),
                                            {"Content-Type": "application/x-www-form-urlencoded"})
                if status == 200:
                    return
            except OSError:
                pass
            if time.monotonic() > deadline:
                raise RuntimeError("roto-server did not become ready")
            time.sleep(0.01)

    def request(self, method: str, path: str, body: bytes = b"", headers: dict[str, str] | None = None):
        """One raw HTTP request; returns (status, headers as a lower-cased dict, body)."""
        conn = http.client.HTTPConnection(self.host, self.port, timeout=30)
        try:
            conn.request(method, path, body=body, headers=headers or {})
            resp = conn.getresponse()
            data = resp.read()
            return resp.status, {k.lower(): v for k, v in resp.getheaders()}, data
        finally:
            conn.close()

    def client(self, service: str, **kwargs):
        """A boto3 client for this server: client("s3"), client("sqs", region_name=...).

        Fake credentials, region us-east-1 and no retries unless overridden."""
        import boto3
        from botocore.config import Config

        options = dict(CREDENTIALS)
        options.update(kwargs)
        config = options.pop("config", Config(retries={"max_attempts": 1}))
        return boto3.client(service, endpoint_url=self.endpoint, config=config, **options)

    def traces(self, **filters) -> list[dict]:
        """Trace entries matching the filters (`wait=SECONDS` blocks until one matches)."""
        query = urllib.parse.urlencode(filters)
        with urllib.request.urlopen(f"{self.endpoint}/_roto/traces?{query}", timeout=70) as resp:
            return json.load(resp)["traces"]

    def wait_for_trace(self, timeout: float = 5.0, **filters) -> dict:
        """The first trace entry matching the filters, waiting up to `timeout` seconds for
        one; AssertionError (listing what the trace holds) if none arrives."""
        entries = self.traces(wait=timeout, **filters)
        if not entries:
            recent = self.traces(limit=20)
            raise AssertionError(f"no trace entry matched {filters} within {timeout} s; recent: {recent}")
        return entries[0]

    def wait_for_delivery(self, timeout: float = 5.0, **filters) -> dict:
        """The first asynchronous delivery matching the filters (`service=` the emitting
        service, `operation=` the event kind, `target=`, `outcome=` one of `delivered`,
        `retrying`, `failed`), waiting up to `timeout` seconds."""
        return self.wait_for_trace(timeout, kind="delivery", **filters)

    def wait_for_execution(self, execution_arn: str, timeout: float = 10.0) -> dict:
        """Step Functions' DescribeExecution of an execution once it leaves RUNNING (its
        status, output, error and cause), polling up to `timeout` seconds; AssertionError
        with the last description if it still runs. Waits and retries follow the server's
        clock: `advance_clock` ends them at once."""
        region = execution_arn.split(":")[3]
        sfn = self.client("stepfunctions", region_name=region)
        deadline = time.monotonic() + timeout
        while True:
            described = sfn.describe_execution(executionArn=execution_arn)
            if described["status"] != "RUNNING":
                return described
            if time.monotonic() > deadline:
                raise AssertionError(f"{execution_arn} still RUNNING after {timeout} s: {described}")
            time.sleep(0.02)

    def advance_clock(self, seconds: float) -> dict:
        """Moves the server's clock forward (POST /_roto/clock?advance=SECONDS), so TTL
        expiry, scheduled rules, retention and retry back-off happen without waiting;
        returns the clock as the server reports it."""
        status, _, body = self.request("POST", f"/_roto/clock?advance={seconds}")
        if status != 200:
            raise RuntimeError(f"clock answered {status}: {body!r}")
        return json.loads(body)

    def reset(self) -> None:
        """Empties every service's state and the trace (POST /_roto/reset)."""
        status, _, body = self.request("POST", "/_roto/reset")
        if status != 200:
            raise RuntimeError(f"reset answered {status}: {body!r}")

    def stop(self, sig: int = signal.SIGTERM, timeout: float = 15.0) -> int:
        """Stops the server and returns its exit code."""
        if self.process is None or self.process.poll() is not None:
            return self.process.returncode if self.process else 0
        self.process.send_signal(sig)
        try:
            self.process.wait(timeout=timeout)
        except subprocess.TimeoutExpired:
            self.process.kill()
            self.process.wait()
        for stream in (self.process.stdout, self.process.stderr):
            if stream:
                stream.close()
        return self.process.returncode

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        self.stop(signal.SIGKILL)

    def __enter__(self) -> "RotoServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
