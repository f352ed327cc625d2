"""Start the real roto-server binary on a free port, wait until it is ready, stop it.

Every black-box test drives a server started through this module: `RotoServer` launches
the binary with the given flags and `--port 0`, reads the port from its start line, waits
for STS GetCallerIdentity to answer, and stops it with SIGTERM (SIGKILL only if it hangs).
"""

from __future__ import annotations

import http.client
import json
import os
import pathlib
import re
import signal
import subprocess
import time
import urllib.parse
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
START_LINE = re.compile(
    r"^roto-server (?P<version>\S+) listening on http://(?P<host>[^:]+):(?P<port>\d+) "
    r"store=(?P<store>\w+) services=(?P<services>\S+)$"
)
IDENTITY_BODY = "Action=GetCallerIdentity&Version=2011-06-15"


def binary() -> pathlib.Path:
    """The binary under test: $ROTO_BINARY, else the release build."""
    path = pathlib.Path(os.environ.get("ROTO_BINARY", ROOT / "target" / "release" / "roto-server"))
    if not path.exists():
        raise RuntimeError(f"{path} does not exist: build it with cargo build -p roto-server --release")
    return path


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
        """Launches the binary and returns once it answers GetCallerIdentity."""
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
            raise RuntimeError(f"unexpected start line {self.start_line!r}; stderr: {err}")
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

    def traces(self, **filters) -> list[dict]:
        """Trace entries matching the filters (`wait=SECONDS` blocks until one matches)."""
        query = urllib.parse.urlencode(filters)
        with urllib.request.urlopen(f"{self.endpoint}/_roto/traces?{query}", timeout=70) as resp:
            return json.load(resp)["traces"]

    def kill(self) -> None:
        """SIGKILL, as a crash."""
        self.stop(signal.SIGKILL)

    def __enter__(self) -> "RotoServer":
        return self.start()

    def __exit__(self, *exc) -> None:
        self.stop()
