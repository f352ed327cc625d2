#!/usr/bin/env python3
"""Roto benchmark suite: startup time, idle memory and sequential request latency.

Why this exists
---------------
Roto's design targets (docs/performance, DESIGN.md) are promises about numbers: a fresh
server is ready in milliseconds, idles in a few MiB and answers S3, DynamoDB and STS calls
in a fraction of a millisecond.  Timed unit tests are the wrong tool for that (they are
noisy and machine dependent), so the numbers are measured here, by a reproducible suite
that anybody can run from the repository root, and that records everything needed to
interpret a result later: the raw samples, the exact binary, toolchain, machine and source
revision.

The suite uses Python's standard library only (no boto3, Moto, Docker or extra packages) and
always uses disposable servers: every run launches a fresh process on a free loopback port,
with a fresh temporary store, and stops it and removes its state afterwards.  It never talks
to an existing server or touches your development data.

Method (see scripts/BENCHMARK.md for the full definitions)
-----------------------------------------------------------
* Modes: ``ephemeral`` (in memory), ``seeded`` (in memory plus ``--setup
  examples/demo/setup.lua``) and ``persistent`` (``--data-dir`` on a fresh temporary
  directory).  ``--runs`` fresh launches per mode, interleaved across modes.
* Startup: from immediately before spawning the binary to the first successful STS
  GetCallerIdentity response carrying the expected account ID, polling about every 1 ms.
* Idle RSS: after ``--settle-seconds``, five samples 100 ms apart; per-run median; the
  report gives the median of the per-run medians, and beside it (Linux) the anonymous part
  (RssAnon: heap, stacks, written data), which the server's code decides. The rest is
  mostly the binary's code pages, and on kernels that cache files in large folios (Linux
  6.18 maps a whole folio on a fault) that part follows how the binary's file entered the
  page cache, not the code: one binary measured 10.3 MiB idle, a fresh cp of it 12.1 MiB,
  and a copy evicted and read back with cat 14.2 MiB.
* Requests: over one persistent keep-alive HTTP connection, ``--warmup`` then ``--requests``
  sequential requests for each of s3_put, s3_get, dynamodb_put, dynamodb_get and
  sts_get_caller_identity, then (where the target serves them) SQS send/receive/delete,
  SNS publish, a warm Lambda invoke, Secrets Manager GetSecretValue, SSM GetParameter and
  KMS Encrypt, each response validated; per-request latency and per-run rate.
* Optional comparison targets: a minimal fixed-body HTTP server (``--floor-binary``) and
  peer emulators (``--peer NAME=COMMAND``), measured the same way in the same session.
* Optional extra runs, each on one more fresh server: ``--sqs``, ``--sns``, ``--s3-scale``,
  ``--dynamodb-scale``, ``--lambda`` (cold and warm invoke latency of a Python and a
  Node handler, and Roto's RSS with 10 warm instances), ``--stepfunctions`` (per-state
  overhead, a 1,000-item inline Map, executions started per second, RSS),
  ``--cloudformation`` (the server-side time from CreateStack to CREATE_COMPLETE of a
  50-resource template, from the stack's CreationTime and its CREATE_COMPLETE event) and
  ``--apigateway`` (the overhead of a REST and an HTTP API over a direct Invoke of the same
  warm Lambda function) and ``--kinesis`` (PutRecords throughput with 500 records of 1 KiB
  a call, GetRecords p50 at the tip and 100,000 records behind, put-to-Lambda latency
  through an event source mapping and Firehose put-to-S3 latency with a zero interval).

Run ``python3 scripts/benchmark.py --help`` for the options.
"""

import argparse
import datetime
import gc
import hashlib
import http.client
import json
import os
import platform
import re
import shlex
import shutil
import signal
import socket
import statistics
import subprocess
import sys
import tempfile
import time

SCRIPT_DIR = os.path.dirname(os.path.abspath(__file__))
REPO_ROOT = os.path.dirname(SCRIPT_DIR)
DEFAULT_BINARY = os.path.join(REPO_ROOT, "target", "release", "roto-server")
DEFAULT_SETUP = os.path.join(REPO_ROOT, "examples", "demo", "setup.lua")
DEFAULT_ACCOUNT = "000000000000"
SCHEMA_VERSION = 1

MODES = ("ephemeral", "seeded", "persistent")
CORE_OPERATIONS = ("s3_put", "s3_get", "dynamodb_put", "dynamodb_get", "sts_get_caller_identity")
# Measured where the target serves them (each is tried once before timing; a target that
# cannot serve one is reported without it).
EXTRA_OPERATIONS = ("sqs_send", "sqs_receive", "sqs_delete", "sns_publish", "lambda_invoke",
                    "secrets_get", "ssm_get", "kms_encrypt")
AWS_OPERATIONS = CORE_OPERATIONS + EXTRA_OPERATIONS
FLOOR_OPERATION = "http_get"
SHORT_NAMES = {
    "s3_put": "s3 put",
    "s3_get": "s3 get",
    "dynamodb_put": "ddb put",
    "dynamodb_get": "ddb get",
    "sts_get_caller_identity": "sts",
    "sqs_send": "sqs send",
    "sqs_receive": "sqs receive",
    "sqs_delete": "sqs delete",
    "sns_publish": "sns publish",
    "lambda_invoke": "lambda invoke",
    "secrets_get": "secret get",
    "ssm_get": "ssm get",
    "kms_encrypt": "kms encrypt",
    FLOOR_OPERATION: "GET /",
}

# Request constants.  Credentials are fake: Roto (like its peers) parses the SigV4
# credential scope to route by service and region but never verifies the signature.
REGION = "us-east-1"
AMZ_DATE = "20260101T000000Z"
ACCESS_KEY = "test"
STS_BODY = b"Action=GetCallerIdentity&Version=2011-06-15"
BUCKET = "roto-benchmark-bucket"
OBJECT_KEY = "benchmark/object-1KiB.bin"
TABLE = "roto-benchmark-table"
OBJECT_SIZE = 1024
PAYLOAD_CHARS = 1024
ACCOUNT_RE = re.compile(rb"<Account>\s*([^<\s]+)\s*</Account>")
BANNER_RE = re.compile(
    r"^roto-server (?P<version>\S+) listening on http://(?P<host>.+):(?P<port>\d+) "
    r"store=(?P<store>\S+) services=(?P<services>\S*)\s*$"
)

RSS_SAMPLES = 5
RSS_INTERVAL_S = 0.100
READY_POLL_S = 0.001
REQUEST_TIMEOUT_S = 30.0


class BenchmarkError(Exception):
    """A failure that ends the benchmark with a clear message and a non-zero exit."""


class ValidationError(BenchmarkError):
    """A server response that does not match what the workload expects."""


# --------------------------------------------------------------------------------------
# Small utilities
# --------------------------------------------------------------------------------------


def log(message):
    """Print a progress message to stderr (stdout is reserved for the result table)."""
    print(message, file=sys.stderr, flush=True)


def now_iso():
    """Return the current UTC time as an ISO 8601 string with a Z suffix."""
    return datetime.datetime.now(datetime.timezone.utc).isoformat(timespec="seconds").replace(
        "+00:00", "Z"
    )


def percentile(sorted_values, q):
    """Return the q-th percentile (0-100) of pre-sorted values.

    Uses linear interpolation between the closest ranks (the "inclusive" definition used
    by numpy's default and statistics.quantiles(method="inclusive")).
    """
    if not sorted_values:
        return None
    if len(sorted_values) == 1:
        return float(sorted_values[0])
    position = (len(sorted_values) - 1) * q / 100.0
    lower = int(position)
    upper = min(lower + 1, len(sorted_values) - 1)
    fraction = position - lower
    return sorted_values[lower] + (sorted_values[upper] - sorted_values[lower]) * fraction


def ns_to_ms(value):
    """Convert nanoseconds to milliseconds (None stays None)."""
    return None if value is None else value / 1e6


def rounded(value, digits=4):
    """Round a float for the JSON summary; None stays None."""
    return None if value is None else round(value, digits)


def ratio(numerator, denominator):
    """Return numerator / denominator, or None when either is missing or zero."""
    if numerator is None or not denominator:
        return None
    return numerator / denominator


def run_command(argv, cwd=None, timeout=20):
    """Run a short informational command; return its stripped stdout or None on failure."""
    try:
        completed = subprocess.run(
            argv, cwd=cwd, stdin=subprocess.DEVNULL, stdout=subprocess.PIPE,
            stderr=subprocess.DEVNULL, timeout=timeout, check=False,
        )
    except (OSError, subprocess.SubprocessError):
        return None
    if completed.returncode != 0:
        return None
    return completed.stdout.decode("utf-8", "replace").strip()


def file_info(path):
    """Describe an executable: absolute path, size and SHA-256 of its bytes."""
    digest = hashlib.sha256()
    with open(path, "rb") as handle:
        for chunk in iter(lambda: handle.read(1 << 20), b""):
            digest.update(chunk)
    stat = os.stat(path)
    return {
        "path": os.path.abspath(path),
        "size_bytes": stat.st_size,
        "size_mib": round(stat.st_size / (1 << 20), 2),
        "sha256": digest.hexdigest(),
        "modified": datetime.datetime.fromtimestamp(stat.st_mtime, datetime.timezone.utc)
        .isoformat(timespec="seconds").replace("+00:00", "Z"),
    }


def tail_file(path, limit=2000):
    """Return the last `limit` characters of a text file, or '' if it cannot be read."""
    try:
        with open(path, "rb") as handle:
            handle.seek(0, os.SEEK_END)
            size = handle.tell()
            handle.seek(max(0, size - limit))
            return handle.read().decode("utf-8", "replace")
    except OSError:
        return ""


def pick_free_port(host):
    """Ask the OS for a free TCP port on `host` (bind port 0, read it, close the socket)."""
    family, socktype, proto, _, address = socket.getaddrinfo(
        host, 0, type=socket.SOCK_STREAM)[0]
    with socket.socket(family, socktype, proto) as sock:
        sock.bind(address)
        return sock.getsockname()[1]


# --------------------------------------------------------------------------------------
# Environment description recorded into the JSON output
# --------------------------------------------------------------------------------------


def cpu_model():
    """Return a human-readable CPU model name, if the platform exposes one."""
    try:
        with open("/proc/cpuinfo", encoding="utf-8", errors="replace") as handle:
            fields = {}
            for line in handle:
                key, _, value = line.partition(":")
                key, value = key.strip(), value.strip()
                if key and value and key not in fields:
                    fields[key] = value
        for key in ("model name", "Model", "Hardware", "cpu model", "Processor", "cpu"):
            if key in fields:
                return fields[key]
        if "CPU implementer" in fields:
            return "ARM implementer {} part {}".format(
                fields["CPU implementer"], fields.get("CPU part", "?"))
    except OSError:
        pass
    if sys.platform == "darwin":
        return run_command(["sysctl", "-n", "machdep.cpu.brand_string"])
    return platform.processor() or None


def total_memory_bytes():
    """Return the machine's physical memory in bytes, if it can be determined."""
    try:
        with open("/proc/meminfo", encoding="utf-8") as handle:
            for line in handle:
                if line.startswith("MemTotal:"):
                    return int(line.split()[1]) * 1024
    except (OSError, ValueError, IndexError):
        pass
    if sys.platform == "darwin":
        value = run_command(["sysctl", "-n", "hw.memsize"])
        if value and value.isdigit():
            return int(value)
    try:
        return os.sysconf("SC_PAGE_SIZE") * os.sysconf("SC_PHYS_PAGES")
    except (AttributeError, ValueError, OSError):
        return None


def machine_info():
    """Describe the machine the benchmark runs on."""
    memory = total_memory_bytes()
    try:
        usable = len(os.sched_getaffinity(0))
    except (AttributeError, OSError):
        usable = None
    try:
        load = [round(x, 2) for x in os.getloadavg()]
    except (AttributeError, OSError):
        load = None
    return {
        "platform": platform.platform(),
        "system": platform.system(),
        "release": platform.release(),
        "machine": platform.machine(),
        "cpu_count": os.cpu_count(),
        "usable_cpu_count": usable,
        "cpu_model": cpu_model(),
        "memory_bytes": memory,
        "memory_gib": round(memory / (1 << 30), 2) if memory else None,
        "load_average_at_start": load,
    }


def toolchain_info():
    """Record the Rust toolchain that the repository resolves to (None if unavailable)."""
    return {
        "rustc": run_command(["rustc", "--version"], cwd=REPO_ROOT),
        "cargo": run_command(["cargo", "--version"], cwd=REPO_ROOT),
    }


def python_info():
    """Record the Python interpreter that runs the client side of the benchmark."""
    return {
        "version": platform.python_version(),
        "implementation": platform.python_implementation(),
        "executable": sys.executable,
    }


def source_info():
    """Record the git revision and working-tree state of the repository."""
    status = run_command(["git", "status", "--porcelain"], cwd=REPO_ROOT)
    lines = [] if status is None else [line for line in status.splitlines() if line.strip()]
    return {
        "repo_root": REPO_ROOT,
        "git_revision": run_command(["git", "rev-parse", "HEAD"], cwd=REPO_ROOT),
        "git_dirty": None if status is None else bool(lines),
        "git_status_porcelain": None if status is None else lines,
    }


# --------------------------------------------------------------------------------------
# Resident set size
# --------------------------------------------------------------------------------------


def _linux_rss_kib(pid, field="VmRSS"):
    """Read `field` (KiB) from /proc/PID/status; None if the process or field is gone."""
    try:
        with open("/proc/{}/status".format(pid), encoding="utf-8") as handle:
            for line in handle:
                if line.startswith(field + ":"):
                    return int(line.split()[1])
    except (OSError, ValueError, IndexError):
        return None
    return None


def _linux_process_table():
    """Return {pid: ppid} for every process visible in /proc."""
    table = {}
    for entry in os.listdir("/proc"):
        if not entry.isdigit():
            continue
        try:
            with open("/proc/{}/stat".format(entry), encoding="utf-8", errors="replace") as f:
                stat = f.read()
            table[int(entry)] = int(stat[stat.rindex(")") + 2:].split()[1])
        except (OSError, ValueError, IndexError):
            continue
    return table


def _descendants(pid, parents):
    """Return pid plus all of its descendants, given a {pid: ppid} table."""
    children = {}
    for child, parent in parents.items():
        children.setdefault(parent, []).append(child)
    found, stack = [], [pid]
    while stack:
        current = stack.pop()
        found.append(current)
        stack.extend(children.get(current, []))
    return found


def sample_rss(pid):
    """Sample the RSS of `pid` (KiB) and of `pid` plus its descendants (KiB).

    Linux reads /proc/PID/status (VmRSS); macOS uses ps(1).  Returns a dict with
    ``rss_kib`` (the server process alone: the reported number), ``anon_rss_kib`` (its
    anonymous part, Linux only), ``tree_rss_kib`` (the process and its descendants,
    summed, so shared pages count more than once) and ``tree_processes``.
    """
    if sys.platform.startswith("linux"):
        own = _linux_rss_kib(pid)
        pids = _descendants(pid, _linux_process_table())
        tree = [_linux_rss_kib(p) for p in pids]
        tree_values = [v for v in tree if v is not None]
        return {"rss_kib": own, "anon_rss_kib": _linux_rss_kib(pid, "RssAnon"),
                "tree_rss_kib": sum(tree_values) if tree_values else None,
                "tree_processes": len(tree_values)}
    if sys.platform == "darwin":
        own_text = run_command(["ps", "-o", "rss=", "-p", str(pid)], timeout=5)
        own = int(own_text) if own_text and own_text.strip().isdigit() else None
        table_text = run_command(["ps", "-A", "-o", "pid=,ppid=,rss="], timeout=5) or ""
        parents, rss = {}, {}
        for line in table_text.splitlines():
            parts = line.split()
            if len(parts) == 3 and all(p.isdigit() for p in parts):
                parents[int(parts[0])] = int(parts[1])
                rss[int(parts[0])] = int(parts[2])
        tree_values = [rss[p] for p in _descendants(pid, parents) if p in rss]
        return {"rss_kib": own, "tree_rss_kib": sum(tree_values) if tree_values else None,
                "tree_processes": len(tree_values)}
    return {"rss_kib": None, "tree_rss_kib": None, "tree_processes": None}


def rss_supported():
    """Whether RSS sampling is implemented for this platform (Linux, macOS)."""
    return sys.platform.startswith("linux") or sys.platform == "darwin"


# --------------------------------------------------------------------------------------
# Server processes
# --------------------------------------------------------------------------------------


class ServerProcess:
    """One launched server, in its own session, that is always stopped.

    stdout and stderr go to files in the run's temporary directory, so a chatty server can
    never block on a full pipe and its output can be shown when something fails.
    """

    live = set()  # every ServerProcess not yet stopped, for last-resort cleanup

    def __init__(self, label, command, cwd, env, log_dir, stop_timeout):
        """Prepare (but do not start) a server; log files are opened now, outside timing."""
        self.label = label
        self.command = command
        self.cwd = cwd
        self.env = env
        self.stop_timeout = stop_timeout
        self.stdout_path = os.path.join(log_dir, "stdout.log")
        self.stderr_path = os.path.join(log_dir, "stderr.log")
        self._stdout = open(self.stdout_path, "wb")
        self._stderr = open(self.stderr_path, "wb")
        self.proc = None
        self.stop_result = None

    def spawn(self):
        """Start the process (the caller takes the timestamp immediately before this)."""
        try:
            self.proc = subprocess.Popen(
                self.command, cwd=self.cwd, env=self.env, stdin=subprocess.DEVNULL,
                stdout=self._stdout, stderr=self._stderr, start_new_session=True,
            )
        except OSError as error:
            self._close_logs()
            raise BenchmarkError("{}: cannot start {}: {}".format(
                self.label, shlex.join(self.command), error)) from error
        ServerProcess.live.add(self)

    @property
    def pid(self):
        """The server's process id (None before spawn)."""
        return None if self.proc is None else self.proc.pid

    def exited(self):
        """Return the exit code if the process has ended, else None."""
        return None if self.proc is None else self.proc.poll()

    def output_tail(self):
        """Return the end of the server's stdout and stderr, for error messages."""
        for handle in (self._stdout, self._stderr):
            try:
                handle.flush()
            except (OSError, ValueError):
                pass
        parts = []
        for name, path in (("stdout", self.stdout_path), ("stderr", self.stderr_path)):
            text = tail_file(path).strip()
            if text:
                parts.append("--- server {} (tail) ---\n{}".format(name, text))
        return "\n".join(parts) if parts else "(the server printed nothing)"

    def first_stdout_line(self):
        """Return the first line the server printed on stdout ('' if none)."""
        try:
            with open(self.stdout_path, "rb") as handle:
                return handle.readline().decode("utf-8", "replace").rstrip("\r\n")
        except OSError:
            return ""

    def _signal_group(self, signum):
        """Send a signal to the server's own process group; False if it no longer exists."""
        try:
            os.killpg(self.proc.pid, signum)
            return True
        except (ProcessLookupError, PermissionError):
            return False

    def _close_logs(self):
        """Close the log file handles."""
        for handle in (self._stdout, self._stderr):
            try:
                handle.close()
            except OSError:
                pass

    def stop(self):
        """Stop the server: SIGTERM, then SIGKILL after the timeout; reap leftovers.

        Returns a dict describing how it ended.  Safe to call more than once, and it
        finishes the job (SIGKILL) even if interrupted by Ctrl-C while waiting.
        """
        if self.stop_result is not None:
            return self.stop_result
        if self.proc is None:
            self._close_logs()
            self.stop_result = {"returncode": None, "stop_ms": None, "killed": False,
                                "leftover_processes": False}
            return self.stop_result
        killed = False
        started = time.perf_counter_ns()
        interrupted = None
        try:
            if self.proc.poll() is None:
                self.proc.send_signal(signal.SIGTERM)
                try:
                    self.proc.wait(timeout=self.stop_timeout)
                except subprocess.TimeoutExpired:
                    killed = True
        except KeyboardInterrupt as error:  # second Ctrl-C: do not leave it running
            killed, interrupted = True, error
        if killed and self.proc.poll() is None:
            if hasattr(os, "killpg"):
                self._signal_group(signal.SIGKILL)
            else:
                self.proc.kill()
            self.proc.wait(timeout=10)
        stop_ms = (time.perf_counter_ns() - started) / 1e6
        # Anything still in the server's process group (e.g. helper processes it spawned
        # and did not stop) is ours to clean up too.
        leftovers = False
        if hasattr(os, "killpg") and self._signal_group(0):
            leftovers = True
            self._signal_group(signal.SIGKILL)
        self._close_logs()
        ServerProcess.live.discard(self)
        self.stop_result = {
            "returncode": self.proc.returncode,
            "stop_ms": round(stop_ms, 3),
            "killed": killed,
            "leftover_processes": leftovers,
        }
        if interrupted is not None:
            raise interrupted
        return self.stop_result

    @classmethod
    def stop_all(cls):
        """Stop every server that is still running (last-resort cleanup)."""
        for server in list(cls.live):
            try:
                server.stop()
            except Exception:  # noqa: BLE001 - cleanup must try every server
                pass


def raise_keyboard_interrupt(signum, _frame):
    """Signal handler: turn SIGTERM/SIGHUP into KeyboardInterrupt so cleanup runs."""
    raise KeyboardInterrupt("signal {}".format(signum))


# --------------------------------------------------------------------------------------
# HTTP client
# --------------------------------------------------------------------------------------


def aws_headers(service, extra=None):
    """Headers every AWS request carries: a fake SigV4 Authorization and X-Amz-Date."""
    headers = {
        "Authorization": (
            "AWS4-HMAC-SHA256 Credential={}/{}/{}/{}/aws4_request, "
            "SignedHeaders=host;x-amz-date, Signature=0000"
        ).format(ACCESS_KEY, AMZ_DATE[:8], REGION, service),
        "X-Amz-Date": AMZ_DATE,
    }
    headers.update(extra or {})
    return headers


STS_HEADERS = aws_headers("sts", {
    "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
})


class CountingHTTPConnection(http.client.HTTPConnection):
    """HTTPConnection that counts the TCP connections it opens and disables Nagle."""

    def __init__(self, *args, **kwargs):
        """Create the connection; `opened` counts connects (1 means keep-alive held)."""
        super().__init__(*args, **kwargs)
        self.opened = 0

    def connect(self):
        """Open the socket with TCP_NODELAY, like AWS SDK HTTP clients do."""
        super().connect()
        self.opened += 1
        try:
            self.sock.setsockopt(socket.IPPROTO_TCP, socket.TCP_NODELAY, 1)
        except OSError:
            pass


class Client:
    """Sequential requests over one persistent keep-alive HTTP/1.1 connection.

    If the server closes the connection (some peers do after every response) the next
    request reconnects; that cost is part of the measured latency and is counted.
    """

    def __init__(self, host, port, timeout=REQUEST_TIMEOUT_S):
        """Create the (lazily connected) keep-alive connection."""
        self.conn = CountingHTTPConnection(host, port, timeout=timeout)
        self.retries = 0

    def request(self, method, path, body, headers):
        """Send one request and read the whole response; return (status, response, body)."""
        reused = self.conn.sock is not None
        try:
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        except (http.client.RemoteDisconnected, ConnectionResetError, BrokenPipeError,
                ConnectionAbortedError):
            if not reused:
                raise
            # The server dropped an idle keep-alive connection: reconnect once.
            self.conn.close()
            self.retries += 1
            self.conn.request(method, path, body=body, headers=headers)
            response = self.conn.getresponse()
            data = response.read()
        return response.status, response, data

    def close(self):
        """Close the connection."""
        self.conn.close()


def describe_response(status, body, limit=400):
    """Format a status and body excerpt for an error message."""
    text = body[:limit].decode("utf-8", "replace")
    more = "..." if len(body) > limit else ""
    return "HTTP {}: {}{}".format(status, text, more)


# --------------------------------------------------------------------------------------
# Readiness probes (startup measurement)
# --------------------------------------------------------------------------------------


def probe_sts(host, port, timeout):
    """One readiness attempt: a fresh connection and an STS GetCallerIdentity POST.

    Returns (status, account or None, body).  Connection errors propagate.
    """
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("POST", "/", body=STS_BODY, headers=STS_HEADERS)
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    match = ACCOUNT_RE.search(body)
    return response.status, (match.group(1).decode() if match else None), body


def probe_get(host, port, timeout):
    """One readiness attempt for the floor server: a fresh connection and GET /."""
    conn = http.client.HTTPConnection(host, port, timeout=timeout)
    try:
        conn.request("GET", "/")
        response = conn.getresponse()
        body = response.read()
    finally:
        conn.close()
    return response.status, None, body


RETRYABLE = (OSError, http.client.HTTPException)


def wait_ready(server, target, host, port, started_ns, timeout):
    """Poll the server about every millisecond until it answers the readiness request.

    Returns (ready_ns, details).  Readiness for AWS targets is a 200 STS response with the
    expected account (any account ID for peers whose default is unknown); for the floor it
    is a 200 to GET /.  Raises BenchmarkError if the process exits or time runs out.
    """
    deadline = started_ns + int(timeout * 1e9)
    attempts, last = 0, "no response (connection refused)"
    probe = probe_get if target.readiness == "http_get" else probe_sts
    while True:
        attempts += 1
        remaining = max(0.05, (deadline - time.perf_counter_ns()) / 1e9)
        try:
            status, account, body = probe(host, port, remaining)
        except RETRYABLE as error:
            last = "{}: {}".format(type(error).__name__, error)
        else:
            if status == 200:
                if target.readiness == "http_get":
                    return time.perf_counter_ns(), {"attempts": attempts, "body": body}
                expected = target.expected_account
                if account is not None and (expected is None or account == expected):
                    return time.perf_counter_ns(), {"attempts": attempts, "account": account}
                raise ValidationError(
                    "{}: readiness GetCallerIdentity returned account {!r}, expected {}\n{}"
                    .format(target.name, account, expected or "an <Account> element",
                            describe_response(status, body)))
            last = describe_response(status, body)
        code = server.exited()
        if code is not None:
            raise BenchmarkError("{}: server exited with code {} before it was ready.\n"
                                 "command: {}\n{}".format(target.name, code,
                                                          shlex.join(server.command),
                                                          server.output_tail()))
        if time.perf_counter_ns() >= deadline:
            raise BenchmarkError("{}: not ready after {:.1f} s ({} attempts; last: {}).\n"
                                 "command: {}\n{}".format(target.name, timeout, attempts, last,
                                                          shlex.join(server.command),
                                                          server.output_tail()))
        time.sleep(READY_POLL_S)


# --------------------------------------------------------------------------------------
# Workloads
# --------------------------------------------------------------------------------------


def object_body():
    """The deterministic 1 KiB S3 object body."""
    return hashlib.shake_256(b"roto-benchmark-object").digest(OBJECT_SIZE)


def item_payload():
    """The deterministic 1024-character DynamoDB string payload."""
    return hashlib.shake_256(b"roto-benchmark-item").hexdigest(PAYLOAD_CHARS // 2)


def workload_description():
    """Describe the workloads for the JSON output."""
    body = object_body()
    item = {"pk": {"S": "bench"}, "payload": {"S": item_payload()}}
    return {
        "operations": list(AWS_OPERATIONS),
        "region": REGION,
        "s3": {"bucket": BUCKET, "key": OBJECT_KEY, "object_size_bytes": len(body),
               "object_md5": hashlib.md5(body).hexdigest(), "addressing": "path-style",
               "payload_signing": "UNSIGNED-PAYLOAD"},
        "dynamodb": {"table": TABLE, "partition_key": "pk (S)",
                     "billing_mode": "PAY_PER_REQUEST", "payload_chars": PAYLOAD_CHARS,
                     "item_json_bytes": len(json.dumps(item, separators=(",", ":"))),
                     "consistent_read": True},
        "sts": {"action": "GetCallerIdentity", "version": "2011-06-15"},
    }


class AwsWorkload:
    """The S3, DynamoDB and STS requests, each validated against the expected result."""

    def __init__(self, client, target_name, account, calls_per_operation=0):
        """Pre-build request bodies and headers (identical for every request);
        `calls_per_operation` is how many calls (warm-up included) each operation gets."""
        self.client = client
        self.calls_per_operation = calls_per_operation
        self.served_extras = []
        self.receipts = []
        self.target_name = target_name
        self.account = account.encode()
        self.body = object_body()
        self.etag = '"{}"'.format(hashlib.md5(self.body).hexdigest())
        self.object_path = "/{}/{}".format(BUCKET, OBJECT_KEY)
        self.s3_put_headers = aws_headers("s3", {
            "x-amz-content-sha256": "UNSIGNED-PAYLOAD",
            "Content-Type": "application/octet-stream",
            "Content-Length": str(len(self.body)),
        })
        self.s3_get_headers = aws_headers("s3", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
        self.item = {"pk": {"S": "bench"}, "payload": {"S": item_payload()}}
        self.put_item_body = json.dumps({"TableName": TABLE, "Item": self.item}).encode()
        self.get_item_body = json.dumps({
            "TableName": TABLE, "Key": {"pk": {"S": "bench"}}, "ConsistentRead": True,
        }).encode()

    def fail(self, operation, message, status=None, body=b""):
        """Raise a ValidationError naming the target and operation."""
        detail = "" if status is None else "\n" + describe_response(status, body)
        raise ValidationError("{}: {}: {}{}".format(self.target_name, operation, message,
                                                    detail))

    def dynamodb(self, action, payload):
        """Send one DynamoDB JSON 1.0 request; return (status, body)."""
        headers = aws_headers("dynamodb", {
            "X-Amz-Target": "DynamoDB_20120810." + action,
            "Content-Type": "application/x-amz-json-1.0",
        })
        status, _, body = self.client.request("POST", "/", payload, headers)
        return status, body

    def prepare(self):
        """Create the bucket and table and write the initial item (outside the timing)."""
        headers = aws_headers("s3", {"x-amz-content-sha256": "UNSIGNED-PAYLOAD"})
        status, _, body = self.client.request("PUT", "/" + BUCKET, b"", headers)
        if status not in (200, 201):
            self.fail("CreateBucket", "unexpected status", status, body)
        create = json.dumps({
            "TableName": TABLE,
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "BillingMode": "PAY_PER_REQUEST",
        }).encode()
        status, body = self.dynamodb("CreateTable", create)
        if status != 200:
            self.fail("CreateTable", "unexpected status", status, body)
        table_status = json.loads(body).get("TableDescription", {}).get("TableStatus")
        deadline = time.monotonic() + 60
        while table_status not in (None, "ACTIVE"):  # peers may create tables lazily
            if time.monotonic() > deadline:
                self.fail("CreateTable", "table not ACTIVE after 60 s")
            time.sleep(0.05)
            status, body = self.dynamodb("DescribeTable",
                                         json.dumps({"TableName": TABLE}).encode())
            if status != 200:
                self.fail("DescribeTable", "unexpected status", status, body)
            table_status = json.loads(body).get("Table", {}).get("TableStatus")
        self.dynamodb_put()

    def s3_put(self):
        """PutObject of the 1 KiB body; the ETag must be the quoted hex MD5 of the body."""
        status, response, body = self.client.request(
            "PUT", self.object_path, self.body, self.s3_put_headers)
        if status != 200:
            self.fail("s3_put", "unexpected status", status, body)
        etag = response.getheader("ETag")
        if etag != self.etag:
            self.fail("s3_put", "ETag {!r}, expected {!r}".format(etag, self.etag))

    def s3_get(self):
        """GetObject; the body must be exactly the bytes that were put."""
        status, _, body = self.client.request("GET", self.object_path, None,
                                              self.s3_get_headers)
        if status != 200:
            self.fail("s3_get", "unexpected status", status, body)
        if body != self.body:
            self.fail("s3_get", "body differs from what was put ({} bytes, expected {})"
                      .format(len(body), len(self.body)))

    def dynamodb_put(self):
        """PutItem replacing the same item; expects 200 and a JSON object."""
        status, body = self.dynamodb("PutItem", self.put_item_body)
        if status != 200:
            self.fail("dynamodb_put", "unexpected status", status, body)
        try:
            decoded = json.loads(body or b"{}")
        except ValueError:
            decoded = None
        if not isinstance(decoded, dict):
            self.fail("dynamodb_put", "response is not a JSON object", status, body)

    def dynamodb_get(self):
        """Strongly consistent GetItem; the complete returned Item must equal the put one."""
        status, body = self.dynamodb("GetItem", self.get_item_body)
        if status != 200:
            self.fail("dynamodb_get", "unexpected status", status, body)
        try:
            item = json.loads(body).get("Item")
        except (ValueError, AttributeError):
            self.fail("dynamodb_get", "response is not a JSON object", status, body)
        if item != self.item:
            self.fail("dynamodb_get", "returned Item differs from the item put", status, body)

    def sts_get_caller_identity(self):
        """GetCallerIdentity; the response must carry the expected account ID."""
        status, _, body = self.client.request("POST", "/", STS_BODY, STS_HEADERS)
        if status != 200:
            self.fail("sts_get_caller_identity", "unexpected status", status, body)
        match = ACCOUNT_RE.search(body)
        if not match or match.group(1) != self.account:
            self.fail("sts_get_caller_identity",
                      "expected <Account>{}</Account>".format(self.account.decode()),
                      status, body)

    def operations(self):
        """The timed operations, in the order they run."""
        names = list(CORE_OPERATIONS) + self.served_extras
        return [(name, getattr(self, name)) for name in names]

    # The extra operations. Each prepares its resource, then is called once; one that
    # fails is left out of this target's operations.

    def json_call(self, service, target, payload, version="1.1"):
        """One json-protocol call; returns the decoded answer or raises ValidationError."""
        headers = aws_headers(service, {
            "X-Amz-Target": target,
            "Content-Type": "application/x-amz-json-" + version,
        })
        status, _, body = self.client.request("POST", "/", json.dumps(payload).encode(),
                                              headers)
        if status != 200:
            self.fail(target, "unexpected status", status, body)
        return json.loads(body or b"{}")

    def prepare_extras(self):
        """Create what the extra operations use; keep those that answer."""
        for name in EXTRA_OPERATIONS:
            try:
                getattr(self, "prepare_" + name)()
                getattr(self, name)()
            except (ValidationError, OSError, http.client.HTTPException, KeyError,
                    ValueError) as error:
                log("{}: {} left out: {}".format(self.target_name, name,
                                                 str(error).splitlines()[0]))
                continue
            self.served_extras.append(name)

    def prepare_sqs_send(self):
        """A queue for SendMessage."""
        self.queue_url = sqs_call(self.client, "CreateQueue",
                                  {"QueueName": "roto-benchmark-send"})["QueueUrl"]

    def sqs_send(self):
        """SendMessage of a short body; expects a MessageId."""
        answer = sqs_call(self.client, "SendMessage",
                          {"QueueUrl": self.queue_url, "MessageBody": "benchmark"})
        if not answer.get("MessageId"):
            self.fail("sqs_send", "no MessageId")

    def prepare_sqs_receive(self):
        """A queue holding one message that every receive sees again (visibility 0)."""
        self.visible_url = sqs_call(self.client, "CreateQueue",
                                    {"QueueName": "roto-benchmark-receive"})["QueueUrl"]
        sqs_call(self.client, "SendMessage",
                 {"QueueUrl": self.visible_url, "MessageBody": "benchmark"})

    def sqs_receive(self):
        """ReceiveMessage returning the one message without hiding it."""
        answer = sqs_call(self.client, "ReceiveMessage",
                          {"QueueUrl": self.visible_url, "VisibilityTimeout": 0})
        if len(answer.get("Messages", [])) != 1:
            self.fail("sqs_receive", "expected one message")

    def prepare_sqs_delete(self):
        """A receipt handle for each DeleteMessage call, received beforehand."""
        url = sqs_call(self.client, "CreateQueue",
                       {"QueueName": "roto-benchmark-delete"})["QueueUrl"]
        self.delete_url = url
        wanted = self.calls_per_operation + 1
        for start in range(0, wanted, 10):
            entries = [{"Id": str(i), "MessageBody": "m"}
                       for i in range(min(10, wanted - start))]
            sqs_call(self.client, "SendMessageBatch", {"QueueUrl": url, "Entries": entries})
        while len(self.receipts) < wanted:
            answer = sqs_call(self.client, "ReceiveMessage", {
                "QueueUrl": url, "MaxNumberOfMessages": 10, "VisibilityTimeout": 3600})
            messages = answer.get("Messages", [])
            if not messages:
                self.fail("sqs_delete", "queued messages did not come back")
            self.receipts.extend(m["ReceiptHandle"] for m in messages)

    def sqs_delete(self):
        """DeleteMessage of a message received beforehand."""
        sqs_call(self.client, "DeleteMessage",
                 {"QueueUrl": self.delete_url, "ReceiptHandle": self.receipts.pop()})

    def prepare_sns_publish(self):
        """A topic without subscribers."""
        xml = sns_call(self.client, {"Action": "CreateTopic", "Name": "roto-benchmark"})
        self.topic_arn = re.search(rb"<TopicArn>([^<]+)</TopicArn>", xml).group(1).decode()

    def sns_publish(self):
        """Publish; expects a MessageId."""
        xml = sns_call(self.client, {"Action": "Publish", "TopicArn": self.topic_arn,
                                     "Message": "benchmark"})
        if b"<MessageId>" not in xml:
            self.fail("sns_publish", "no MessageId")

    def prepare_lambda_invoke(self):
        """A Python function returning its event, Active before timing starts."""
        import base64
        import io
        import zipfile
        archive = io.BytesIO()
        with zipfile.ZipFile(archive, "w") as z:
            z.writestr("index.py", "def handler(event, context):\n    return event\n")
        create = json.dumps({
            "FunctionName": "roto-benchmark", "Runtime": "python3.12",
            "Role": "arn:aws:iam::{}:role/benchmark".format(self.account.decode()),
            "Handler": "index.handler",
            "Code": {"ZipFile": base64.b64encode(archive.getvalue()).decode()},
        }).encode()
        headers = aws_headers("lambda", {"Content-Type": "application/json"})
        status, _, body = self.client.request("POST", "/2015-03-31/functions", create,
                                              headers)
        if status not in (200, 201):
            self.fail("CreateFunction", "unexpected status", status, body)
        deadline = time.monotonic() + 60
        while json.loads(body).get("State", "Active") != "Active":
            if time.monotonic() > deadline:
                self.fail("CreateFunction", "function not Active after 60 s")
            time.sleep(0.05)
            status, _, body = self.client.request(
                "GET", "/2015-03-31/functions/roto-benchmark/configuration", None, headers)
        self.invoke_headers = headers

    def lambda_invoke(self):
        """A synchronous Invoke; the function returns the event it was given."""
        status, _, body = self.client.request(
            "POST", "/2015-03-31/functions/roto-benchmark/invocations", b'{"n": 1}',
            self.invoke_headers)
        if status != 200 or json.loads(body) != {"n": 1}:
            self.fail("lambda_invoke", "unexpected answer", status, body)

    def prepare_secrets_get(self):
        """A secret with a string value."""
        self.json_call("secretsmanager", "secretsmanager.CreateSecret",
                       {"Name": "roto-benchmark", "SecretString": "benchmark"})

    def secrets_get(self):
        """GetSecretValue; expects the string stored."""
        answer = self.json_call("secretsmanager", "secretsmanager.GetSecretValue",
                                {"SecretId": "roto-benchmark"})
        if answer.get("SecretString") != "benchmark":
            self.fail("secrets_get", "unexpected SecretString")

    def prepare_ssm_get(self):
        """A String parameter."""
        self.json_call("ssm", "AmazonSSM.PutParameter",
                       {"Name": "/roto/benchmark", "Value": "benchmark", "Type": "String"})

    def ssm_get(self):
        """GetParameter; expects the value stored."""
        answer = self.json_call("ssm", "AmazonSSM.GetParameter", {"Name": "/roto/benchmark"})
        if answer.get("Parameter", {}).get("Value") != "benchmark":
            self.fail("ssm_get", "unexpected Parameter")

    def prepare_kms_encrypt(self):
        """A symmetric key."""
        answer = self.json_call("kms", "TrentService.CreateKey", {})
        self.key_id = answer["KeyMetadata"]["KeyId"]

    def kms_encrypt(self):
        """Encrypt of 9 bytes; expects a CiphertextBlob."""
        answer = self.json_call("kms", "TrentService.Encrypt",
                                {"KeyId": self.key_id, "Plaintext": "YmVuY2htYXJr"})
        if not answer.get("CiphertextBlob"):
            self.fail("kms_encrypt", "no CiphertextBlob")


class FloorWorkload:
    """GET / against the minimal fixed-body server; the body must not change."""

    def __init__(self, client, target_name, expected_body):
        """Remember the body seen at readiness."""
        self.client = client
        self.target_name = target_name
        self.expected_body = expected_body

    def prepare(self):
        """Nothing to create."""

    def http_get(self):
        """One GET /, validated against the readiness body."""
        status, _, body = self.client.request("GET", "/", None, {})
        if status != 200 or body != self.expected_body:
            raise ValidationError("{}: GET / returned a different response\n{}".format(
                self.target_name, describe_response(status, body)))

    def operations(self):
        """The single timed operation."""
        return [(FLOOR_OPERATION, self.http_get)]


def time_operation(operation, warmup, requests):
    """Run `warmup` then `requests` sequential calls; return the raw timings.

    Each latency spans sending the request through reading and validating the response.
    The cyclic garbage collector is paused during the loop (and run just before it) so
    that Python collection pauses do not land inside individual samples.
    """
    gc.collect()
    was_enabled = gc.isenabled()
    gc.disable()
    try:
        clock = time.perf_counter_ns
        warmup_ns = []
        for _ in range(warmup):
            start = clock()
            operation()
            warmup_ns.append(clock() - start)
        latencies = []
        loop_start = clock()
        for _ in range(requests):
            start = clock()
            operation()
            latencies.append(clock() - start)
        elapsed = clock() - loop_start
    finally:
        if was_enabled:
            gc.enable()
    return {
        "warmup_latencies_ns": warmup_ns,
        "latencies_ns": latencies,
        "elapsed_ns": elapsed,
        "requests_per_second": requests / (elapsed / 1e9) if elapsed and requests else None,
    }


# --------------------------------------------------------------------------------------
# Targets and runs
# --------------------------------------------------------------------------------------


class Target:
    """Something to launch and measure: a Roto mode, the floor server or a peer."""

    def __init__(self, name, kind, build, readiness, expected_account, env, description,
                 mode=None):
        """`build(port, host, tmpdir)` returns the argv for one launch."""
        self.name = name
        self.kind = kind
        self.mode = mode
        self.build = build
        self.readiness = readiness
        self.expected_account = expected_account
        self.env = env
        self.description = description

    def operations(self):
        """The names of the operations this target is measured on."""
        return [FLOOR_OPERATION] if self.kind == "floor" else list(AWS_OPERATIONS)


def template_string(argv):
    """Shell-quote an argv for display, leaving {port}/{tmpdir} placeholders readable."""
    return (shlex.join(argv).replace("'{port}'", "{port}")
            .replace("'{tmpdir}/data'", "{tmpdir}/data"))


def roto_target(mode, args, env):
    """Build the Target for one Roto mode."""
    def build(port, host, tmpdir):
        """The roto-server argv for one launch of this mode."""
        command = [args.binary]
        if mode == "persistent":
            command += ["--data-dir", os.path.join(tmpdir, "data")]
        else:
            command += ["--ephemeral"]
        if mode == "seeded":
            command += ["--setup", args.setup]
        command += ["--host", host, "--port", str(port)]
        if args.account_id != DEFAULT_ACCOUNT:
            command += ["--account-id", args.account_id]
        return command

    example = build("{port}", args.host, "{tmpdir}")
    return Target(mode, "roto", build, "sts", args.account_id, env, template_string(example),
                  mode=mode)


def floor_target(args):
    """Build the Target for the minimal fixed-body floor server."""
    def build(port, _host, _tmpdir):
        """The floor server's argv for one launch."""
        return [args.floor_binary, "--port", str(port)]

    return Target("floor", "floor", build, "http_get", None, dict(os.environ),
                  template_string([args.floor_binary, "--port", "{port}"]))


def peer_target(name, template, args):
    """Build the Target for a peer emulator launched from a command template."""
    tokens = shlex.split(template)

    def build(port, host, tmpdir):
        """The template with {port}, {host} and {tmpdir} filled in, token by token."""
        return [token.replace("{port}", str(port)).replace("{host}", host)
                .replace("{tmpdir}", tmpdir) for token in tokens]

    # Peers' default account IDs differ (Moto uses 123456789012), so any account is
    # accepted at readiness; the STS workload then expects that same account.
    return Target(name, "peer", build, "sts", None, dict(os.environ), template)


def measure_run(target, run_number, sequence, args, cwd):
    """Launch one fresh server for `target`, measure it, stop it and remove its state."""
    tmpdir = tempfile.mkdtemp(prefix="roto-bench-{}-".format(target.name))
    result = {"run": run_number, "launch_sequence": sequence}
    server = None
    try:
        if target.mode == "persistent":
            os.mkdir(os.path.join(tmpdir, "data"))
        try:
            port = pick_free_port(args.host)
        except OSError as error:
            raise BenchmarkError("cannot find a free port on {}: {}".format(
                args.host, error)) from error
        command = target.build(port, args.host, tmpdir)
        result.update({"port": port, "command": command})
        server = ServerProcess(target.name, command, cwd, target.env, tmpdir,
                               args.stop_timeout)

        started_ns = time.perf_counter_ns()
        server.spawn()
        ready_ns, ready = wait_ready(server, target, args.host, port, started_ns,
                                     args.startup_timeout)
        result["startup_ns"] = ready_ns - started_ns
        result["startup_ms"] = round((ready_ns - started_ns) / 1e6, 3)
        result["readiness_attempts"] = ready["attempts"]
        account = ready.get("account") or target.expected_account
        if target.readiness == "sts":
            result["account"] = account

        # Idle memory, before any workload.
        time.sleep(args.settle_seconds)
        samples = []
        base = time.monotonic()
        for index in range(RSS_SAMPLES):
            delay = base + index * RSS_INTERVAL_S - time.monotonic()
            if delay > 0:
                time.sleep(delay)
            samples.append(sample_rss(server.pid))
        if server.exited() is not None:
            raise BenchmarkError("{}: server exited during the settle period.\n{}".format(
                target.name, server.output_tail()))
        result["rss_samples_kib"] = [s["rss_kib"] for s in samples]
        result["tree_rss_samples_kib"] = [s["tree_rss_kib"] for s in samples]
        result["tree_processes"] = [s["tree_processes"] for s in samples]
        own = [v for v in result["rss_samples_kib"] if v is not None]
        anon = [s.get("anon_rss_kib") for s in samples if s.get("anon_rss_kib") is not None]
        tree = [v for v in result["tree_rss_samples_kib"] if v is not None]
        result["rss_median_kib"] = statistics.median(own) if own else None
        result["anon_rss_median_kib"] = statistics.median(anon) if anon else None
        result["tree_rss_median_kib"] = statistics.median(tree) if tree else None

        if not args.skip_requests:
            client = Client(args.host, port)
            try:
                client.conn.connect()  # so each operation's count is pure reconnects
                if target.kind == "floor":
                    workload = FloorWorkload(client, target.name, ready["body"])
                else:
                    workload = AwsWorkload(client, target.name, account,
                                           args.warmup + args.requests)
                workload.prepare()
                if target.kind != "floor":
                    workload.prepare_extras()
                operations = {}
                for name, operation in workload.operations():
                    opened, retries = client.conn.opened, client.retries
                    timing = time_operation(operation, args.warmup, args.requests)
                    timing["reconnects"] = client.conn.opened - opened
                    timing["retries"] = client.retries - retries
                    operations[name] = timing
                result["operations"] = operations
                result["connections_opened"] = client.conn.opened
            finally:
                client.close()

        if target.kind == "roto":
            result["banner"] = parse_banner(server.first_stdout_line())
    finally:
        if server is not None:
            result["shutdown"] = server.stop()
        shutil.rmtree(tmpdir, ignore_errors=True)
    return result


def parse_banner(line):
    """Parse Roto's start line ('roto-server V listening on http://H:P store=S services=L')."""
    match = BANNER_RE.match(line or "")
    if not match:
        return {"raw": line, "parsed": False}
    return {
        "raw": line,
        "parsed": True,
        "version": match.group("version"),
        "host": match.group("host"),
        "port": int(match.group("port")),
        "store": match.group("store"),
        "services": [s for s in match.group("services").split(",") if s],
    }


def run_summary_line(target, result):
    """One progress line describing a finished run."""
    parts = ["startup {:.2f} ms".format(result["startup_ms"])]
    if result.get("rss_median_kib") is not None:
        parts.append("RSS {:.1f} MiB".format(result["rss_median_kib"] / 1024))
    for name, timing in (result.get("operations") or {}).items():
        p50 = percentile(sorted(timing["latencies_ns"]), 50)
        parts.append("{} p50 {:.3f} ms".format(SHORT_NAMES[name], ns_to_ms(p50)))
    return "{}: {}".format(target.name, ", ".join(parts))


# --------------------------------------------------------------------------------------
# Summaries, ratios and the report
# --------------------------------------------------------------------------------------


def summarize(target, runs):
    """Aggregate one target's runs: startup, RSS and pooled per-operation statistics."""
    startup = [r["startup_ms"] for r in runs]
    rss = [r["rss_median_kib"] for r in runs if r.get("rss_median_kib") is not None]
    anon = [r["anon_rss_median_kib"] for r in runs if r.get("anon_rss_median_kib") is not None]
    tree = [r["tree_rss_median_kib"] for r in runs if r.get("tree_rss_median_kib") is not None]
    summary = {
        "kind": target.kind,
        "runs": len(runs),
        "startup_ms": {
            "median": rounded(statistics.median(startup), 3),
            "min": rounded(min(startup), 3),
            "max": rounded(max(startup), 3),
            "samples": startup,
        },
        "rss_kib": {
            "median_of_run_medians": statistics.median(rss) if rss else None,
            "min_run_median": min(rss) if rss else None,
            "max_run_median": max(rss) if rss else None,
            "run_medians": rss,
        },
        "rss_mib_median": rounded(statistics.median(rss) / 1024, 3) if rss else None,
        "anon_rss_kib_median_of_run_medians": statistics.median(anon) if anon else None,
        "tree_rss_kib_median_of_run_medians": statistics.median(tree) if tree else None,
        "clean_exits": sum(1 for r in runs if r.get("shutdown", {}).get("returncode") == 0),
        "operations": {},
    }
    for name in target.operations():
        timings = [r["operations"][name] for r in runs if name in (r.get("operations") or {})]
        if not timings:
            continue
        pooled = sorted(v for t in timings for v in t["latencies_ns"])
        rates = [t["requests_per_second"] for t in timings if t["requests_per_second"]]
        summary["operations"][name] = {
            "samples": len(pooled),
            "p50_ms": rounded(ns_to_ms(percentile(pooled, 50))),
            "p90_ms": rounded(ns_to_ms(percentile(pooled, 90))),
            "p99_ms": rounded(ns_to_ms(percentile(pooled, 99))),
            "mean_ms": rounded(ns_to_ms(statistics.fmean(pooled))) if pooled else None,
            "min_ms": rounded(ns_to_ms(pooled[0])) if pooled else None,
            "max_ms": rounded(ns_to_ms(pooled[-1])) if pooled else None,
            "requests_per_second_median": rounded(statistics.median(rates), 1)
            if rates else None,
            "requests_per_second_runs": [rounded(r, 1) for r in rates],
            "reconnects": sum(t["reconnects"] for t in timings),
            "retries": sum(t["retries"] for t in timings),
        }
    return summary


def compare(numerator, denominator):
    """Ratios numerator/denominator of startup median, RSS median and each shared p50."""
    p50 = {}
    den_ops = denominator["operations"]
    if FLOOR_OPERATION in den_ops:  # the floor: compare every operation with its GET /
        base = den_ops[FLOOR_OPERATION]["p50_ms"]
        for name, stats in numerator["operations"].items():
            p50[name] = rounded(ratio(stats["p50_ms"], base), 3)
    else:
        for name, stats in numerator["operations"].items():
            if name in den_ops:
                p50[name] = rounded(ratio(stats["p50_ms"], den_ops[name]["p50_ms"]), 3)
    return {
        "startup_median": rounded(ratio(numerator["startup_ms"]["median"],
                                        denominator["startup_ms"]["median"]), 3),
        "rss_median": rounded(ratio(numerator["rss_kib"]["median_of_run_medians"],
                                    denominator["rss_kib"]["median_of_run_medians"]), 3),
        "p50": p50,
    }


def compute_ratios(targets, summaries):
    """Roto/floor ratios for every Roto mode, and peer/Roto ratios for every peer."""
    ratios = {}
    roto = [t.name for t in targets if t.kind == "roto"]
    if "floor" in summaries:
        ratios["roto_over_floor"] = {
            "description": "Roto value divided by the floor server's value (p50s are "
                           "divided by the floor's GET / p50)",
            "targets": {name: compare(summaries[name], summaries["floor"]) for name in roto},
        }
    peers = [t.name for t in targets if t.kind == "peer"]
    if peers and roto:
        baseline = "ephemeral" if "ephemeral" in roto else roto[0]
        ratios["peer_over_roto"] = {
            "description": "peer value divided by Roto {}'s value (above 1: Roto is "
                           "faster or smaller)".format(baseline),
            "baseline": baseline,
            "targets": {name: compare(summaries[name], summaries[baseline])
                        for name in peers},
        }
    return ratios


def format_table(headers, rows, left_columns=1):
    """Render rows as a plain-text table; the first `left_columns` are left aligned."""
    cells = [[("" if c is None else str(c)) for c in row] for row in [headers] + rows]
    widths = [max(len(row[i]) for row in cells) for i in range(len(headers))]
    lines = []
    for index, row in enumerate(cells):
        parts = []
        for column, value in enumerate(row):
            if column < left_columns or column == len(row) - 1 and headers[-1] == "samples":
                parts.append(value.ljust(widths[column]))
            else:
                parts.append(value.rjust(widths[column]))
        lines.append("  ".join(parts).rstrip())
        if index == 0:
            lines.append("  ".join("-" * w for w in widths))
    return "\n".join(lines)


def fmt(value, pattern="{:.2f}"):
    """Format a number, or '-' when it is missing."""
    return "-" if value is None else pattern.format(value)


def print_report(results):
    """Print the human-readable result tables to stdout."""
    options = results["options"]
    binary = results["binary"]
    source = results["source"]
    machine = results["machine"]
    out = []
    if options["skip_requests"]:
        workload = "requests skipped"
    else:
        workload = "{} warmup + {} measured requests per operation".format(
            options["warmup"], options["requests"])
    out.append("Roto benchmark: {} runs per target (interleaved), {}".format(
        options["runs"], workload))
    out.append("binary   {} ({} MiB, sha256 {})".format(binary["path"], binary["size_mib"],
                                                       binary["sha256"][:16]))
    server = results.get("server") or {}
    if server.get("version"):
        out.append("server   roto-server {} (store per mode: {})".format(
            server["version"], ", ".join("{}={}".format(k, v) for k, v in
                                         server.get("store_by_mode", {}).items())))
    revision = source["git_revision"][:10] if source["git_revision"] else "no commit"
    dirty = {True: " (dirty)", False: "", None: ""}[source["git_dirty"]]
    out.append("source   {}{}   {}".format(revision, dirty,
                                          results["toolchain"]["rustc"] or "rustc unknown"))
    out.append("machine  {}, {} CPUs, {}, {} GiB RAM; Python {}".format(
        machine["platform"], machine["cpu_count"], machine["cpu_model"] or "unknown CPU",
        machine["memory_gib"], results["python"]["version"]))
    for skipped in results["skipped"]:
        out.append("skipped  {}: {}".format(skipped["target"], skipped["reason"]))

    summaries = results["summary"]
    names = list(summaries)
    out.append("")
    out.append("Startup: spawn to first successful readiness response (ms)")
    rows = []
    for name in names:
        s = summaries[name]["startup_ms"]
        rows.append([name, fmt(s["median"]), fmt(s["min"]), fmt(s["max"]),
                     " ".join("{:.1f}".format(v) for v in s["samples"])])
    out.append(format_table(["target", "median", "min", "max", "samples"], rows))

    out.append("")
    out.append("Idle RSS after {:.1f} s settle, {} samples {} ms apart (MiB)".format(
        options["settle_seconds"], RSS_SAMPLES, int(RSS_INTERVAL_S * 1000)))
    rows = []
    for name in names:
        r = summaries[name]["rss_kib"]
        tree = summaries[name]["tree_rss_kib_median_of_run_medians"]
        anon = summaries[name].get("anon_rss_kib_median_of_run_medians")
        mib = (lambda v: None if v is None else v / 1024)
        rows.append([name, fmt(mib(r["median_of_run_medians"])), fmt(mib(r["min_run_median"])),
                     fmt(mib(r["max_run_median"])), fmt(mib(anon)), fmt(mib(tree))])
    out.append(format_table(["target", "median", "min run", "max run", "anon", "with children"],
                            rows))
    if not rss_supported():
        out.append("(RSS sampling is supported on Linux and macOS only)")

    if not options["skip_requests"]:
        out.append("")
        out.append("Requests: pooled latency over all runs (ms); req/s = median of per-run "
                   "rates")
        rows = []
        for name in names:
            for op, s in summaries[name]["operations"].items():
                rows.append([name, op, s["samples"], fmt(s["p50_ms"], "{:.3f}"),
                             fmt(s["p90_ms"], "{:.3f}"), fmt(s["p99_ms"], "{:.3f}"),
                             fmt(s["mean_ms"], "{:.3f}"),
                             fmt(s["requests_per_second_median"], "{:.0f}"),
                             s["reconnects"]])
        out.append(format_table(["target", "operation", "n", "p50", "p90", "p99", "mean",
                                 "req/s", "reconnects"], rows, left_columns=2))

    for key, title in (("roto_over_floor", "Ratios, Roto / floor"),
                       ("peer_over_roto", "Ratios, peer / Roto {}")):
        block = results["ratios"].get(key)
        if not block:
            continue
        out.append("")
        out.append("{}: {}".format(title.format(block.get("baseline")), block["description"]))
        ops = [op for op in AWS_OPERATIONS
               if any(op in r["p50"] for r in block["targets"].values())]
        rows = []
        for name, r in block["targets"].items():
            rows.append([name, fmt(r["startup_median"]), fmt(r["rss_median"])]
                        + [fmt(r["p50"].get(op)) for op in ops])
        out.append(format_table(["target", "startup", "RSS"]
                                + ["p50 " + SHORT_NAMES[op] for op in ops], rows))
    print("\n".join(out), flush=True)


# --------------------------------------------------------------------------------------
# Command line
# --------------------------------------------------------------------------------------


def parse_peer(value):
    """argparse type for --peer NAME=COMMAND_TEMPLATE."""
    name, sep, template = value.partition("=")
    name = name.strip()
    if not sep or not re.fullmatch(r"[A-Za-z0-9_.-]+", name) or not template.strip():
        raise argparse.ArgumentTypeError(
            "expected NAME=COMMAND (e.g. moto='moto_server -p {port}'), got " + repr(value))
    if "{port}" not in template:
        raise argparse.ArgumentTypeError("the command for peer {!r} must contain {{port}}"
                                         .format(name))
    if name in MODES or name == "floor":
        raise argparse.ArgumentTypeError("peer name {!r} is reserved".format(name))
    return name, template


# --only's section names, and the option each turns on.
SECTIONS = {"concurrency": "concurrency", "sqs": "sqs", "sns": "sns", "s3-scale": "s3_scale",
            "dynamodb-scale": "dynamodb_scale", "lambda": "lambda_run",
            "stepfunctions": "stepfunctions", "cloudformation": "cloudformation",
            "apigateway": "apigateway", "kinesis": "kinesis", "cloudwatch": "cloudwatch"}


def build_parser():
    """The command-line interface."""
    parser = argparse.ArgumentParser(
        description="Measure Roto startup time, idle RSS and sequential S3/DynamoDB/STS "
                    "request latency on disposable servers (see scripts/BENCHMARK.md).",
        formatter_class=argparse.ArgumentDefaultsHelpFormatter,
    )
    parser.add_argument("--binary", default=DEFAULT_BINARY,
                        metavar="PATH", help="roto-server executable to measure")
    parser.add_argument("--modes", nargs="+", choices=MODES, default=list(MODES), metavar="MODE",
                        help="Roto modes to measure, in interleaving order: "
                             "ephemeral, seeded, persistent")
    parser.add_argument("--runs", type=int, default=7, metavar="N",
                        help="fresh launches per mode (and per floor/peer target)")
    parser.add_argument("--requests", type=int, default=200, metavar="N",
                        help="measured requests per operation per run")
    parser.add_argument("--warmup", type=int, default=20, metavar="N",
                        help="unmeasured warmup requests per operation per run")
    parser.add_argument("--settle-seconds", type=float, default=2.0, metavar="S",
                        help="idle time between readiness and RSS sampling")
    parser.add_argument("--output", default="benchmark-results.json", metavar="PATH",
                        help="where to write the raw JSON results")
    parser.add_argument("--setup", default=DEFAULT_SETUP, metavar="PATH",
                        help="Lua setup script for the seeded mode")
    parser.add_argument("--skip-requests", action="store_true",
                        help="measure only startup and idle RSS")
    parser.add_argument("--host", default="127.0.0.1", metavar="ADDR",
                        help="loopback address servers listen on")
    parser.add_argument("--account-id", default=DEFAULT_ACCOUNT, metavar="ID",
                        help="account Roto is started with and readiness expects")
    parser.add_argument("--floor", action="store_true",
                        help="also measure a minimal fixed-body HTTP server (needs "
                             "--floor-binary) and report Roto/floor ratios")
    parser.add_argument("--floor-binary", metavar="PATH",
                        help="prebuilt minimal HTTP server taking --port N and answering "
                             "200 with a fixed body to GET / (implies --floor)")
    parser.add_argument("--peer", action="append", type=parse_peer, default=[],
                        metavar="NAME=COMMAND",
                        help="also measure another emulator launched by COMMAND, a template "
                             "containing {port} (and optionally {host}, {tmpdir}); "
                             "repeatable")
    parser.add_argument("--startup-timeout", type=float, default=60.0, metavar="S",
                        help="seconds to wait for a server to become ready")
    parser.add_argument("--stop-timeout", type=float, default=10.0, metavar="S",
                        help="seconds between SIGTERM and SIGKILL when stopping a server")
    parser.add_argument("--sqs", action="store_true",
                        help="also measure SQS send+receive+delete throughput with 1 and 16 "
                             "concurrent clients on one ephemeral server")
    parser.add_argument("--sqs-messages", type=int, default=2000, metavar="N",
                        help="send+receive+delete cycles per --sqs measurement")
    parser.add_argument("--s3-scale", action="store_true",
                        help="also measure S3 GET and ListObjectsV2 in a bucket of "
                             "--s3-scale-objects objects against one of 1,000 (off by default)")
    parser.add_argument("--s3-scale-objects", type=int, default=1_000_000, metavar="N",
                        help="objects in the large bucket of --s3-scale (default 1000000)")
    parser.add_argument("--dynamodb-scale", action="store_true",
                        help="also time GetItem and a partition Query in a table of "
                             "--dynamodb-scale-items items against one of 1,000, filled by "
                             "BatchWriteItem (off by default)")
    parser.add_argument("--dynamodb-scale-items", type=int, default=1_000_000, metavar="N",
                        help="items in the large table of --dynamodb-scale (default 1000000)")
    parser.add_argument("--sns", action="store_true",
                        help="also measure SNS Publish -> SQS ReceiveMessage latency")
    parser.add_argument("--sns-messages", type=int, default=200, metavar="N",
                        help="messages published for the --sns measurement")
    parser.add_argument("--concurrency", action="store_true",
                        help="also measure concurrency: STS while two RSA-4096 keys are "
                             "generated, --durable vs --ephemeral PutItem with 16 clients, 64 "
                             "mixed connections, SQS receive at depth, RSS after reset (off by "
                             "default)")
    parser.add_argument("--concurrency-seconds", type=int, default=60, metavar="S",
                        help="length of the --concurrency mixed workload (the PutItem rates "
                             "run for at most 10 s each)")
    parser.add_argument("--baseline-binary", metavar="PATH",
                        help="a second roto-server build (before a change) measured by the "
                             "--concurrency section beside --binary")
    parser.add_argument("--only", nargs="+", choices=sorted(SECTIONS), metavar="SECTION",
                        help="run only these sections, without the startup/RSS/latency "
                             "benchmark: " + ", ".join(sorted(SECTIONS)))
    parser.add_argument("--stepfunctions", action="store_true",
                        help="also measure Step Functions on one more fresh server: a 100-state "
                             "Pass chain, a 1,000-item inline Map (MaxConcurrency 10), "
                             "StartExecution rate, RSS before and after")
    parser.add_argument("--sfn-runs", type=int, default=5, metavar="N",
                        help="executions of the Pass chain and of the Map (Step Functions)")
    parser.add_argument("--sfn-starts", type=int, default=500, metavar="N",
                        help="StartExecution calls timed for the rate (Step Functions)")
    parser.add_argument("--lambda", dest="lambda_run", action="store_true",
                        help="also measure Lambda cold and warm invoke latency for a Python and "
                             "a Node handler, and Roto's RSS with 10 warm instances (off by "
                             "default)")
    parser.add_argument("--lambda-cold", type=int, default=10, metavar="N",
                        help="cold invocations per runtime for --lambda (each a new function)")
    parser.add_argument("--lambda-invocations", type=int, default=200, metavar="N",
                        help="measured warm invocations per runtime for --lambda")
    parser.add_argument("--cloudformation", action="store_true",
                        help="also measure the server-side time from CreateStack to "
                             "CREATE_COMPLETE of a template of 50 independent resources "
                             "(off by default)")
    parser.add_argument("--cloudformation-stacks", type=int, default=10, metavar="N",
                        help="stacks created, one after another, for --cloudformation")
    parser.add_argument("--apigateway", action="store_true",
                        help="also measure the overhead API Gateway adds over a direct Lambda "
                             "Invoke of the same warm function, through a REST and an HTTP API "
                             "(off by default)")
    parser.add_argument("--apigateway-requests", type=int, default=500, metavar="N",
                        help="measured requests per path for --apigateway")
    parser.add_argument("--kinesis", action="store_true",
                        help="also measure Kinesis PutRecords throughput, GetRecords at the tip "
                             "and far behind it, put-to-Lambda through an event source mapping "
                             "and Firehose put-to-S3 latency (off by default)")
    parser.add_argument("--kinesis-behind", type=int, default=100_000, metavar="N",
                        help="records put for --kinesis (the throughput run), which the "
                             "far-behind GetRecords reads from the start of")
    parser.add_argument("--cloudwatch", action="store_true",
                        help="also measure CloudWatch: PutMetricData throughput, GetMetricData "
                             "p50 over a day of minutes for 10 metrics, and the lag from a "
                             "threshold-crossing datapoint to the alarm's SNS delivery")
    parser.add_argument("--cloudwatch-puts", type=int, default=50, metavar="N",
                        help="PutMetricData calls of 1,000 datapoints each for --cloudwatch")
    parser.add_argument("--cloudwatch-alarms", type=int, default=10, metavar="N",
                        help="alarm lag trials for --cloudwatch")
    return parser


def validate_args(parser, args):
    """Check option values and resolve paths; exits via parser.error on bad input."""
    if args.runs < 1:
        parser.error("--runs must be at least 1")
    if args.requests < 1 and not args.skip_requests:
        parser.error("--requests must be at least 1 (or use --skip-requests)")
    if args.warmup < 0:
        parser.error("--warmup must not be negative")
    if args.settle_seconds < 0:
        parser.error("--settle-seconds must not be negative")
    if args.startup_timeout <= 0 or args.stop_timeout <= 0:
        parser.error("--startup-timeout and --stop-timeout must be positive")
    if args.lambda_cold < 1 or args.lambda_invocations < 1:
        parser.error("--lambda-cold and --lambda-invocations must be at least 1")
    if args.cloudformation_stacks < 1:
        parser.error("--cloudformation-stacks must be at least 1")
    if args.apigateway_requests < 1:
        parser.error("--apigateway-requests must be at least 1")
    if args.kinesis_behind < KINESIS_BATCH:
        parser.error("--kinesis-behind must be at least {}".format(KINESIS_BATCH))
    if args.cloudwatch_puts < 1 or args.cloudwatch_alarms < 1:
        parser.error("--cloudwatch-puts and --cloudwatch-alarms must be at least 1")
    if not re.fullmatch(r"\d{12}", args.account_id):
        parser.error("--account-id must be 12 digits")
    names = [name for name, _ in args.peer]
    if len(names) != len(set(names)):
        parser.error("peer names must be unique")
    modes = []
    for mode in args.modes:
        if mode not in modes:
            modes.append(mode)
    args.modes = modes
    if args.concurrency_seconds < 1:
        parser.error("--concurrency-seconds must be at least 1")
    for section in args.only or []:
        setattr(args, SECTIONS[section], True)
    if args.baseline_binary:
        args.baseline_binary = os.path.abspath(args.baseline_binary)
    args.binary = os.path.abspath(args.binary)
    args.setup = os.path.abspath(args.setup)
    args.output = os.path.abspath(args.output)
    if args.floor_binary:
        args.floor = True
        args.floor_binary = os.path.abspath(args.floor_binary)
    elif args.floor:
        parser.error("--floor needs --floor-binary PATH: a prebuilt minimal HTTP server "
                     "(this stdlib-only suite cannot build one)")


def check_executable(path, what, hint):
    """Fail with a clear message unless `path` is an executable file."""
    if not os.path.isfile(path):
        raise BenchmarkError("{} not found: {}\n{}".format(what, path, hint))
    if not os.access(path, os.X_OK):
        raise BenchmarkError("{} is not executable: {}".format(what, path))


def roto_environment():
    """The environment for Roto servers: ours minus ROTO_* and RUST_LOG.

    Every Roto flag has a ROTO_* variable; removing them keeps a developer's shell
    settings (data dir, log level, executor...) from changing the measured configuration.
    """
    removed = sorted(k for k in os.environ if k.startswith("ROTO_") or k == "RUST_LOG")
    env = {k: v for k, v in os.environ.items() if k not in removed}
    return env, removed


def build_targets(args, skipped):
    """Create the Target list in interleaving order: Roto modes, floor, peers."""
    env, _ = roto_environment()
    targets = []
    for mode in args.modes:
        if mode == "seeded" and not os.path.isfile(args.setup):
            reason = "setup script {} does not exist".format(args.setup)
            log("skipping seeded mode: " + reason)
            skipped.append({"target": "seeded", "reason": reason})
            continue
        targets.append(roto_target(mode, args, env))
    if args.floor:
        targets.append(floor_target(args))
    for name, template in args.peer:
        targets.append(peer_target(name, template, args))
    return targets


def write_json(path, data):
    """Write the results atomically (temporary file, then rename)."""
    directory = os.path.dirname(path) or "."
    fd, tmp_path = tempfile.mkstemp(prefix=".benchmark-", suffix=".json", dir=directory)
    umask = os.umask(0)
    os.umask(umask)
    try:
        os.chmod(tmp_path, 0o666 & ~umask)  # mkstemp creates 0600; use normal permissions
        with os.fdopen(fd, "w", encoding="utf-8") as handle:
            json.dump(data, handle, indent=1)
            handle.write("\n")
        os.replace(tmp_path, path)
    except BaseException:
        try:
            os.unlink(tmp_path)
        except OSError:
            pass
        raise


def benchmark(args):
    """Run the whole benchmark and return the results document."""
    started_at = now_iso()
    wall_start = time.monotonic()
    check_executable(args.binary, "roto-server binary",
                     "Build it first: cargo build -p roto-server --release --locked "
                     "(or pass --binary PATH)")
    if args.floor:
        check_executable(args.floor_binary, "floor binary", "Pass --floor-binary PATH.")
    if not os.path.isdir(os.path.dirname(args.output) or "."):
        raise BenchmarkError("output directory does not exist: " + args.output)
    if not rss_supported():
        log("warning: RSS sampling is implemented for Linux and macOS only; RSS will be "
            "recorded as null")

    skipped = []
    targets = build_targets(args, skipped)
    if not targets:
        raise BenchmarkError("nothing to measure (every requested mode was skipped)")
    _, removed_env = roto_environment()

    results = {
        "schema_version": SCHEMA_VERSION,
        "suite": "roto scripts/benchmark.py",
        "started_at": started_at,
        "command_line": [sys.executable] + sys.argv,
        "options": {
            "binary": args.binary, "modes": args.modes, "runs": args.runs,
            "requests": args.requests, "warmup": args.warmup,
            "settle_seconds": args.settle_seconds, "output": args.output,
            "setup": args.setup, "skip_requests": args.skip_requests, "host": args.host,
            "account_id": args.account_id, "floor": args.floor,
            "floor_binary": args.floor_binary,
            "peers": [{"name": n, "command": c} for n, c in args.peer],
            "startup_timeout": args.startup_timeout, "stop_timeout": args.stop_timeout,
        },
        "method": {
            "interleaved": True,
            "readiness_poll_interval_ms": READY_POLL_S * 1000,
            "rss_samples_per_run": RSS_SAMPLES,
            "rss_sample_interval_ms": RSS_INTERVAL_S * 1000,
            "rss_source": "/proc/PID/status VmRSS" if sys.platform.startswith("linux")
            else "ps -o rss=" if sys.platform == "darwin" else None,
            "percentiles": "linear interpolation between closest ranks",
            "client": "http.client.HTTPConnection, one keep-alive connection per run, "
                      "TCP_NODELAY, sequential requests, GC paused during timed loops",
            "server_cwd": REPO_ROOT,
            "roto_env_removed": removed_env,
        },
        "workload": workload_description(),
        "binary": file_info(args.binary),
        "floor_binary": file_info(args.floor_binary) if args.floor else None,
        "toolchain": toolchain_info(),
        "machine": machine_info(),
        "python": python_info(),
        "source": source_info(),
        "skipped": skipped,
        "targets": {},
    }
    for target in targets:
        entry = {"kind": target.kind, "command_template": target.description}
        if target.kind == "peer":
            first = shlex.split(target.description)[0]
            entry["executable"] = shutil.which(first) or first
        entry["runs"] = []
        results["targets"][target.name] = entry

    sequence = 0
    for run_number in range(1, args.runs + 1):
        for target in targets:
            sequence += 1
            log("[run {}/{}] {} ...".format(run_number, args.runs, target.name))
            run = measure_run(target, run_number, sequence, args, REPO_ROOT)
            results["targets"][target.name]["runs"].append(run)
            log("[run {}/{}] {}".format(run_number, args.runs, run_summary_line(target, run)))
            warn_about_run(target, run)

    results["summary"] = {t.name: summarize(t, results["targets"][t.name]["runs"])
                          for t in targets}
    results["ratios"] = compute_ratios(targets, results["summary"])
    results["server"] = server_identity(targets, results)
    results["finished_at"] = now_iso()
    results["duration_seconds"] = round(time.monotonic() - wall_start, 1)
    # Put the summaries before the (large) raw per-run data in the file.
    raw = results.pop("targets")
    results["targets"] = raw
    return results


def sections_document(args):
    """The results document of an `--only` run: what was measured, and where."""
    check_executable(args.binary, "roto-server binary",
                     "Build it first: cargo build -p roto-server --release --locked "
                     "(or pass --binary PATH)")
    if args.baseline_binary:
        check_executable(args.baseline_binary, "baseline roto-server binary",
                         "Pass --baseline-binary PATH.")
    return {
        "schema_version": SCHEMA_VERSION,
        "suite": "roto scripts/benchmark.py",
        "started_at": now_iso(),
        "command_line": [sys.executable] + sys.argv,
        "options": {"binary": args.binary, "baseline_binary": args.baseline_binary,
                    "only": args.only, "host": args.host, "account_id": args.account_id,
                    "concurrency_seconds": args.concurrency_seconds},
        "binary": file_info(args.binary),
        "machine": machine_info(),
        "python": python_info(),
        "source": source_info(),
    }


def warn_about_run(target, run):
    """Log anomalies that do not invalidate a run but matter when reading it."""
    shutdown = run.get("shutdown") or {}
    if shutdown.get("killed"):
        log("warning: {} did not exit within the stop timeout and was killed".format(
            target.name))
    elif target.kind == "roto" and shutdown.get("returncode") not in (0, None):
        log("warning: {} exited with code {} after SIGTERM (expected 0)".format(
            target.name, shutdown.get("returncode")))
    if shutdown.get("leftover_processes"):
        log("warning: {} left processes behind in its process group; they were killed"
            .format(target.name))
    if target.kind == "roto":
        banner = run.get("banner") or {}
        if not banner.get("parsed"):
            log("warning: {}: unexpected start line {!r}".format(target.name,
                                                                 banner.get("raw")))
        elif banner.get("port") != run.get("port"):
            log("warning: {}: start line reports port {}, launched with {}".format(
                target.name, banner.get("port"), run.get("port")))
        extra = (run.get("connections_opened") or 1) - 1
        if extra > 0:
            log("warning: {}: keep-alive not held; {} extra connections".format(
                target.name, extra))


def server_identity(targets, results):
    """Version, services and store names reported by Roto's start lines."""
    identity = {"version": None, "services": None, "store_by_mode": {}}
    for target in targets:
        if target.kind != "roto":
            continue
        for run in results["targets"][target.name]["runs"]:
            banner = run.get("banner") or {}
            if banner.get("parsed"):
                identity["version"] = identity["version"] or banner["version"]
                identity["services"] = identity["services"] or banner["services"]
                identity["store_by_mode"][target.name] = banner["store"]
                break
    return identity


# --------------------------------------------------------------------------------------
# Messaging benchmarks (--sqs, --sns): off by default
# --------------------------------------------------------------------------------------

SQS_JSON_HEADERS = aws_headers("sqs", {"Content-Type": "application/x-amz-json-1.0"})
SNS_FORM_HEADERS = aws_headers("sns", {
    "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
})


def json_call(client, headers, target, payload, what):
    """One JSON-protocol call with `X-Amz-Target: target`; returns the decoded answer or
    raises ValidationError naming `what`."""
    headers = dict(headers, **{"X-Amz-Target": target})
    status, _, body = client.request("POST", "/", json.dumps(payload).encode(), headers)
    if status != 200:
        raise ValidationError("{}: {}".format(what, describe_response(status, body)))
    return json.loads(body or b"{}")


def sqs_call(client, action, payload):
    """One SQS JSON-protocol call; returns the decoded answer or raises ValidationError."""
    return json_call(client, SQS_JSON_HEADERS, "AmazonSQS." + action, payload, "SQS " + action)


def sns_call(client, params):
    """One SNS query-protocol call; returns the raw XML answer or raises ValidationError."""
    import urllib.parse
    body = urllib.parse.urlencode(dict(params, Version="2010-03-31")).encode()
    status, _, data = client.request("POST", "/", body, SNS_FORM_HEADERS)
    if status != 200:
        raise ValidationError("SNS {}: {}".format(params["Action"], describe_response(status, data)))
    return data


def start_messaging_server(args, tmpdir):
    """A fresh ephemeral roto-server for the messaging benchmarks; returns (server, port)."""
    return start_roto_server(args, args.binary, tmpdir, ["--ephemeral"], "messaging")


def latency_summary(samples_ns):
    """p50/p90/p95/p99/max in milliseconds of a list of nanosecond samples."""
    ordered = sorted(samples_ns)
    return {
        "count": len(ordered),
        "p50_ms": rounded(ns_to_ms(percentile(ordered, 50))),
        "p90_ms": rounded(ns_to_ms(percentile(ordered, 90))),
        "p95_ms": rounded(ns_to_ms(percentile(ordered, 95))),
        "p99_ms": rounded(ns_to_ms(percentile(ordered, 99))),
        "max_ms": rounded(ns_to_ms(ordered[-1])),
    }


def sqs_cycles(host, port, queue_url, cycles):
    """`cycles` send+receive+delete rounds on one connection; returns per-cycle ns."""
    client = Client(host, port)
    samples = []
    try:
        for i in range(cycles):
            start = time.perf_counter_ns()
            sqs_call(client, "SendMessage", {"QueueUrl": queue_url, "MessageBody": "m%d" % i})
            messages = []
            while not messages:
                messages = sqs_call(client, "ReceiveMessage", {
                    "QueueUrl": queue_url, "WaitTimeSeconds": 1}).get("Messages", [])
            sqs_call(client, "DeleteMessage", {
                "QueueUrl": queue_url, "ReceiptHandle": messages[0]["ReceiptHandle"]})
            samples.append(time.perf_counter_ns() - start)
    finally:
        client.close()
    return samples


def sqs_throughput(args, port, clients):
    """Send+receive+delete throughput with `clients` concurrent connections on one queue."""
    import threading
    setup = Client(args.host, port)
    name = "bench-%d" % clients
    url = sqs_call(setup, "CreateQueue", {"QueueName": name})["QueueUrl"]
    setup.close()
    per_client = max(1, args.sqs_messages // clients)
    results, errors = [], []

    def worker():
        try:
            results.append(sqs_cycles(args.host, port, url, per_client))
        except Exception as error:  # reported below, never swallowed
            errors.append(error)

    threads = [threading.Thread(target=worker) for _ in range(clients)]
    started = time.perf_counter_ns()
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    elapsed = time.perf_counter_ns() - started
    if errors:
        raise BenchmarkError("SQS throughput with {} clients: {}".format(clients, errors[0]))
    samples = [s for r in results for s in r]
    return dict(latency_summary(samples), clients=clients,
                cycles_per_second=rounded(len(samples) / (elapsed / 1e9), 1))


def sns_to_sqs_latency(args, port):
    """Publish -> ReceiveMessage latency through a raw SNS subscription of an SQS queue."""
    client = Client(args.host, port)
    try:
        url = sqs_call(client, "CreateQueue", {"QueueName": "bench-sns"})["QueueUrl"]
        queue_arn = sqs_call(client, "GetQueueAttributes", {
            "QueueUrl": url, "AttributeNames": ["QueueArn"]})["Attributes"]["QueueArn"]
        xml = sns_call(client, {"Action": "CreateTopic", "Name": "bench"})
        topic = re.search(rb"<TopicArn>([^<]+)</TopicArn>", xml).group(1).decode()
        sns_call(client, {"Action": "Subscribe", "TopicArn": topic, "Protocol": "sqs",
                          "Endpoint": queue_arn, "Attributes.entry.1.key": "RawMessageDelivery",
                          "Attributes.entry.1.value": "true"})
        samples = []
        for i in range(args.sns_messages):
            body = "n%d" % i
            start = time.perf_counter_ns()
            sns_call(client, {"Action": "Publish", "TopicArn": topic, "Message": body})
            messages = []
            while not messages:
                messages = sqs_call(client, "ReceiveMessage", {
                    "QueueUrl": url, "WaitTimeSeconds": 5}).get("Messages", [])
            samples.append(time.perf_counter_ns() - start)
            if messages[0]["Body"] != body:
                raise ValidationError("SNS delivered {!r}, expected {!r}".format(
                    messages[0]["Body"], body))
            sqs_call(client, "DeleteMessage", {
                "QueueUrl": url, "ReceiptHandle": messages[0]["ReceiptHandle"]})
        return latency_summary(samples)
    finally:
        client.close()


def messaging_benchmark(args):
    """Runs the requested messaging benchmarks on one fresh ephemeral server."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="roto-bench-messaging-") as tmpdir:
        server, port = start_messaging_server(args, tmpdir)
        try:
            if args.sqs:
                out["sqs_send_receive_delete"] = [sqs_throughput(args, port, n) for n in (1, 16)]
            if args.sns:
                out["sns_to_sqs_latency"] = sns_to_sqs_latency(args, port)
        finally:
            server.stop()
    return out


def print_messaging_report(messaging):
    """Prints the messaging figures."""
    for row in messaging.get("sqs_send_receive_delete", []):
        print("SQS send+receive+delete, {:>2} client(s): {:>8.1f} cycles/s, p50 {:.3f} ms, "
              "p99 {:.3f} ms".format(row["clients"], row["cycles_per_second"], row["p50_ms"],
                                    row["p99_ms"]))
    latency = messaging.get("sns_to_sqs_latency")
    if latency:
        print("SNS Publish -> SQS ReceiveMessage: p50 {:.3f} ms, p95 {:.3f} ms, max {:.3f} ms "
              "({} messages)".format(latency["p50_ms"], latency["p95_ms"], latency["max_ms"],
                                     latency["count"]))


S3_SCALE_SMALL = 1000
S3_SCALE_SAMPLES = 500
S3_SCALE_WRITERS = 8


def s3_scale_fill(args, port, bucket, count):
    """Puts `count` 16-byte objects `k0000000`... into `bucket` with several connections."""
    import threading
    headers = aws_headers("s3", {"Content-Type": "application/octet-stream"})
    errors = []

    def writer(start):
        client = Client(args.host, port)
        try:
            for i in range(start, count, S3_SCALE_WRITERS):
                status, _, body = client.request("PUT", "/{}/k{:07d}".format(bucket, i),
                                                 b"0123456789abcdef", headers)
                if status != 200:
                    raise ValidationError("PUT: " + describe_response(status, body))
        except Exception as error:  # reported below, never swallowed
            errors.append(error)
        finally:
            client.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(S3_SCALE_WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise BenchmarkError("filling {}: {}".format(bucket, errors[0]))


def s3_scale_measure(args, port, bucket, count):
    """GET of random keys and ListObjectsV2 first pages (plain, and prefix+delimiter)."""
    import random
    headers = aws_headers("s3")
    client = Client(args.host, port)
    rng = random.Random(7)
    out = {}
    try:
        paths = {
            "get": lambda: "/{}/k{:07d}".format(bucket, rng.randrange(count)),
            "list_first_page": lambda: "/{}?list-type=2".format(bucket),
            "list_start_after": lambda: "/{}?list-type=2&max-keys=100&start-after=k{:07d}".format(
                bucket, rng.randrange(count)),
        }
        for name, path in paths.items():
            samples = []
            for i in range(S3_SCALE_SAMPLES + 20):
                start = time.perf_counter_ns()
                status, _, body = client.request("GET", path(), None, headers)
                elapsed = time.perf_counter_ns() - start
                if status != 200:
                    raise ValidationError("{}: {}".format(name, describe_response(status, body)))
                if i >= 20:
                    samples.append(elapsed)
            out[name] = latency_summary(samples)
    finally:
        client.close()
    return out


def s3_scale_benchmark(args):
    """GET and listing cost in a bucket of 1,000 objects and in one of --s3-scale-objects."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="roto-bench-s3-scale-") as tmpdir:
        server, port = start_messaging_server(args, tmpdir)
        try:
            setup = Client(args.host, port)
            for count in (S3_SCALE_SMALL, args.s3_scale_objects):
                bucket = "scale-{}".format(count)
                status, _, body = setup.request("PUT", "/" + bucket, b"", aws_headers("s3"))
                if status != 200:
                    raise ValidationError("CreateBucket: " + describe_response(status, body))
                started = time.monotonic()
                s3_scale_fill(args, port, bucket, count)
                log("filled {} with {} objects in {:.1f} s".format(
                    bucket, count, time.monotonic() - started))
                results[str(count)] = s3_scale_measure(args, port, bucket, count)
            setup.close()
            results["rss_kib_after_fill"] = sample_rss(server.pid)
        finally:
            server.stop()
    small, large = results[str(S3_SCALE_SMALL)], results[str(args.s3_scale_objects)]
    results["p50_ratio_large_over_small"] = {
        name: ratio(large[name]["p50_ms"], small[name]["p50_ms"]) for name in small}
    return results


def print_s3_scale_report(scale, objects):
    """Prints the S3 scaling figures."""
    small, large = scale[str(S3_SCALE_SMALL)], scale[str(objects)]
    for name in small:
        print("S3 {:<22} p50 {:.3f} ms ({} objects) vs {:.3f} ms ({} objects): x{}".format(
            name, small[name]["p50_ms"], S3_SCALE_SMALL, large[name]["p50_ms"], objects,
            scale["p50_ratio_large_over_small"][name]))


DDB_SCALE_SMALL = 1000
DDB_SCALE_PARTITION = 10
DDB_SCALE_SAMPLES = 500
DDB_SCALE_WRITERS = 4


def ddb_call(client, action, payload):
    """One DynamoDB JSON 1.0 call; returns the decoded answer or raises ValidationError."""
    headers = aws_headers("dynamodb", {"X-Amz-Target": "DynamoDB_20120810." + action,
                                       "Content-Type": "application/x-amz-json-1.0"})
    status, _, body = client.request("POST", "/", json.dumps(payload).encode(), headers)
    if status != 200:
        raise ValidationError("DynamoDB {}: {}".format(action, describe_response(status, body)))
    return json.loads(body or b"{}")


def ddb_scale_item(i):
    """Item `i`: partition p{i // 10}, numeric sort key i, a 100-byte payload."""
    return {"pk": {"S": "p{:07d}".format(i // DDB_SCALE_PARTITION)}, "sk": {"N": str(i)},
            "data": {"S": "x" * 100}}


def ddb_scale_fill(args, port, table, count):
    """Writes `count` items into `table` with BatchWriteItem (25 a call) on several connections."""
    import threading
    errors = []
    batches = (count + 24) // 25

    def writer(first):
        client = Client(args.host, port)
        try:
            for b in range(first, batches, DDB_SCALE_WRITERS):
                items = [{"PutRequest": {"Item": ddb_scale_item(i)}}
                         for i in range(b * 25, min(count, b * 25 + 25))]
                out = ddb_call(client, "BatchWriteItem", {"RequestItems": {table: items}})
                if out.get("UnprocessedItems"):
                    raise ValidationError("BatchWriteItem left unprocessed items")
        except Exception as error:  # reported below, never swallowed
            errors.append(error)
        finally:
            client.close()

    threads = [threading.Thread(target=writer, args=(n,)) for n in range(DDB_SCALE_WRITERS)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    if errors:
        raise BenchmarkError("filling {}: {}".format(table, errors[0]))


def ddb_scale_measure(args, port, table, count):
    """GetItem of random keys, and Query of one random partition (10 items)."""
    import random
    client = Client(args.host, port)
    rng = random.Random(7)
    partitions = max(1, count // DDB_SCALE_PARTITION)

    def get_item():
        i = rng.randrange(count)
        item = ddb_scale_item(i)
        out = ddb_call(client, "GetItem", {"TableName": table,
                                           "Key": {"pk": item["pk"], "sk": item["sk"]}})
        if "Item" not in out:
            raise ValidationError("GetItem found nothing")

    def query():
        p = rng.randrange(partitions)
        out = ddb_call(client, "Query", {
            "TableName": table, "KeyConditionExpression": "pk = :p",
            "ExpressionAttributeValues": {":p": {"S": "p{:07d}".format(p)}}})
        if out["Count"] != DDB_SCALE_PARTITION:
            raise ValidationError("Query returned {} items".format(out["Count"]))

    out = {}
    try:
        for name, call in (("get_item", get_item), ("query_partition", query)):
            samples = []
            for i in range(DDB_SCALE_SAMPLES + 20):
                start = time.perf_counter_ns()
                call()
                elapsed = time.perf_counter_ns() - start
                if i >= 20:
                    samples.append(elapsed)
            out[name] = latency_summary(samples)
    finally:
        client.close()
    return out


def ddb_scale_benchmark(args):
    """GetItem and Query cost in a table of 1,000 items and in one of --dynamodb-scale-items."""
    results = {}
    with tempfile.TemporaryDirectory(prefix="roto-bench-ddb-scale-") as tmpdir:
        server, port = start_messaging_server(args, tmpdir)
        try:
            setup = Client(args.host, port)
            for count in (DDB_SCALE_SMALL, args.dynamodb_scale_items):
                table = "scale-{}".format(count)
                ddb_call(setup, "CreateTable", {
                    "TableName": table, "BillingMode": "PAY_PER_REQUEST",
                    "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"},
                                             {"AttributeName": "sk", "AttributeType": "N"}],
                    "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"},
                                  {"AttributeName": "sk", "KeyType": "RANGE"}]})
                rss_before = sample_rss(server.pid)
                started = time.monotonic()
                ddb_scale_fill(args, port, table, count)
                seconds = time.monotonic() - started
                log("filled {} with {} items in {:.1f} s".format(table, count, seconds))
                results[str(count)] = ddb_scale_measure(args, port, table, count)
                results[str(count)]["fill_seconds"] = rounded(seconds, 2)
                results[str(count)]["rss_kib_before_fill"] = rss_before
                results[str(count)]["rss_kib_after_fill"] = sample_rss(server.pid)
            setup.close()
        finally:
            server.stop()
    small, large = results[str(DDB_SCALE_SMALL)], results[str(args.dynamodb_scale_items)]
    results["p50_ratio_large_over_small"] = {
        name: ratio(large[name]["p50_ms"], small[name]["p50_ms"])
        for name in ("get_item", "query_partition")}
    return results


def print_ddb_scale_report(scale, items):
    """Prints the DynamoDB scaling figures."""
    small, large = scale[str(DDB_SCALE_SMALL)], scale[str(items)]
    for name in ("get_item", "query_partition"):
        print("DynamoDB {:<16} p50 {:.3f} ms ({} items) vs {:.3f} ms ({} items): x{:.2f}".format(
            name, small[name]["p50_ms"], DDB_SCALE_SMALL, large[name]["p50_ms"], items,
            scale["p50_ratio_large_over_small"][name]))
    rss = lambda sample: (sample or {}).get("rss_kib")
    print("DynamoDB BatchWriteItem fill of {} items: {} s, RSS {} -> {} KiB".format(
        items, large["fill_seconds"], rss(large["rss_kib_before_fill"]),
        rss(large["rss_kib_after_fill"])))


# --------------------------------------------------------------------------------------
# Concurrency benchmark (--concurrency): off by default
# --------------------------------------------------------------------------------------

CONCURRENCY_WRITERS = 16          # clients of the --durable vs --ephemeral PutItem rate
CONCURRENCY_PROCESSES = 4         # client processes for the multi-client measurements
MIXED_CONNECTIONS = 64            # connections of the mixed workload
SQS_DEPTH_SMALL = 20
SQS_DEPTH_LARGE = 50_000
SQS_DEPTH_SAMPLES = 200
RESET_FILL_BYTES = 50 * 1024 * 1024
KMS_JSON_HEADERS = aws_headers("kms", {"Content-Type": "application/x-amz-json-1.1",
                                       "X-Amz-Target": "TrentService.CreateKey"})
DDB_JSON_HEADERS = aws_headers("dynamodb", {"Content-Type": "application/x-amz-json-1.0"})
STS_BODY = b"Action=GetCallerIdentity&Version=2011-06-15"


def start_roto_server(args, binary, tmpdir, store_args, name, extra=()):
    """A fresh roto-server with `store_args` (`--ephemeral`, or `--data-dir ...`); returns
    (server, port) once it answers STS."""
    port = pick_free_port(args.host)
    env, _ = roto_environment()
    command = [binary] + list(store_args) + ["--host", args.host, "--port", str(port),
                                             "--account-id", args.account_id] + list(extra)
    server = ServerProcess(name, command, REPO_ROOT, env, tmpdir, args.stop_timeout)
    server.spawn()
    deadline = time.monotonic() + args.startup_timeout
    while time.monotonic() < deadline:
        try:
            if probe_sts(args.host, port, 1.0)[0] == 200:
                return server, port
        except OSError:
            time.sleep(READY_POLL_S)
    server.stop()
    raise BenchmarkError("{} server did not become ready".format(name))


def in_processes(worker, jobs):
    """Runs `worker(job)` for every job, one client process each (so that the Python
    client is not the bottleneck); returns the results in order."""
    import multiprocessing
    pool = multiprocessing.Pool(len(jobs))
    try:
        return pool.map(worker, jobs)
    finally:
        pool.close()
        pool.join()


def in_threads(worker, jobs):
    """Runs `worker(job)` for every job on its own thread; returns the results in order and
    re-raises the first error."""
    import concurrent.futures
    with concurrent.futures.ThreadPoolExecutor(len(jobs)) as pool:
        return list(pool.map(worker, jobs))


def sts_wait_during_keygen(args, port):
    """The STS GetCallerIdentity latencies, one after another on one connection, while two
    KMS CreateKey RSA_4096 calls run on two others."""
    import threading
    body = json.dumps({"KeySpec": "RSA_4096", "KeyUsage": "SIGN_VERIFY"}).encode()
    running = [2]
    errors = []

    def create_key():
        client = Client(args.host, port, timeout=600)
        try:
            status, _, data = client.request("POST", "/", body, KMS_JSON_HEADERS)
            if status != 200:
                errors.append("CreateKey: " + describe_response(status, data))
        finally:
            client.close()
            running[0] -= 1

    sts = Client(args.host, port)
    sts.request("POST", "/", STS_BODY, STS_HEADERS)
    threads = [threading.Thread(target=create_key) for _ in range(2)]
    for t in threads:
        t.start()
    samples = []
    while running[0]:
        start = time.perf_counter_ns()
        status, _, data = sts.request("POST", "/", STS_BODY, STS_HEADERS)
        samples.append(time.perf_counter_ns() - start)
        if status != 200:
            raise ValidationError("GetCallerIdentity: " + describe_response(status, data))
    for t in threads:
        t.join()
    sts.close()
    if errors:
        raise ValidationError(errors[0])
    return latency_summary(samples)


def put_items(job):
    """A client process: `threads` connections each putting items for `seconds`; returns
    how many puts succeeded."""
    host, port, table, first, threads, seconds = job

    def writer(n):
        client = Client(host, port)
        headers = dict(DDB_JSON_HEADERS, **{"X-Amz-Target": "DynamoDB_20120810.PutItem"})
        done, deadline = 0, time.monotonic() + seconds
        while time.monotonic() < deadline:
            item = {"pk": {"S": "w{}-{}".format(n, done)}, "payload": {"S": "x" * 100}}
            body = json.dumps({"TableName": table, "Item": item}).encode()
            status, _, data = client.request("POST", "/", body, headers)
            if status != 200:
                raise ValidationError("PutItem: " + describe_response(status, data))
            done += 1
        client.close()
        return done
    return sum(in_threads(writer, list(range(first, first + threads))))


def create_table(client, table):
    """CreateTable with a string partition key `pk`, on demand."""
    ddb_call(client, "CreateTable", {
        "TableName": table, "BillingMode": "PAY_PER_REQUEST",
        "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
        "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}]})


def put_item_rate(args, binary, store_args, seconds):
    """PutItem/s with CONCURRENCY_WRITERS clients in CONCURRENCY_PROCESSES processes."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-writers-") as tmpdir:
        store_args = [a.format(tmpdir=tmpdir) for a in store_args]
        os.makedirs(os.path.join(tmpdir, "data"))
        server, port = start_roto_server(args, binary, tmpdir, store_args, "writers")
        try:
            setup = Client(args.host, port)
            create_table(setup, "writers")
            setup.close()
            per = CONCURRENCY_WRITERS // CONCURRENCY_PROCESSES
            jobs = [(args.host, port, "writers", p * per, per, seconds)
                    for p in range(CONCURRENCY_PROCESSES)]
            started = time.perf_counter()
            puts = sum(in_processes(put_items, jobs))
            return rounded(puts / (time.perf_counter() - started), 1)
        finally:
            server.stop()


def mixed_client(job):
    """A client process of the mixed workload: `threads` connections, each cycling S3
    PUT+GET, DynamoDB PutItem+GetItem and SQS SendMessage for `seconds`; returns
    (writes by kind, errors)."""
    host, port, first, threads, seconds, queue_url = job
    s3_headers = aws_headers("s3", {"Content-Type": "application/octet-stream"})

    def worker(n):
        client = Client(host, port)
        writes, errors, i = {"s3": 0, "dynamodb": 0, "sqs": 0}, [], 0
        deadline = time.monotonic() + seconds
        while time.monotonic() < deadline:
            key = "c{}-{}".format(n, i)
            calls = [
                ("s3", "PUT", "/mixed/" + key, key.encode(), s3_headers),
                (None, "GET", "/mixed/" + key, None, s3_headers),
                ("dynamodb", "POST", "/", json.dumps({"TableName": "mixed", "Item": {
                    "pk": {"S": key}}}).encode(),
                 dict(DDB_JSON_HEADERS, **{"X-Amz-Target": "DynamoDB_20120810.PutItem"})),
                (None, "POST", "/", json.dumps({"TableName": "mixed", "Key": {
                    "pk": {"S": key}}, "ConsistentRead": True}).encode(),
                 dict(DDB_JSON_HEADERS, **{"X-Amz-Target": "DynamoDB_20120810.GetItem"})),
                ("sqs", "POST", "/", json.dumps({"QueueUrl": queue_url,
                                                 "MessageBody": key}).encode(),
                 dict(SQS_JSON_HEADERS, **{"X-Amz-Target": "AmazonSQS.SendMessage"})),
            ]
            for kind, method, path, body, headers in calls:
                try:
                    status, _, data = client.request(method, path, body, headers)
                except OSError as error:
                    errors.append("{} {}: {}".format(method, path, error))
                    client = Client(host, port)
                    continue
                if status != 200:
                    errors.append("{} {}: {}".format(method, path, describe_response(status, data)))
                elif kind:
                    writes[kind] += 1
            i += 1
        client.close()
        return writes, errors

    results = in_threads(worker, list(range(first, first + threads)))
    totals = {kind: sum(w[kind] for w, _ in results) for kind in ("s3", "dynamodb", "sqs")}
    return totals, [e for _, errors in results for e in errors]


def count_back(args, port, queue_url):
    """What the server holds after the mixed workload: objects, items, messages."""
    import urllib.parse
    client = Client(args.host, port, timeout=600)
    objects, token = 0, None
    while True:
        path = "/mixed?list-type=2" + ("&continuation-token=" + urllib.parse.quote(token)
                                       if token else "")
        status, _, body = client.request("GET", path, None, aws_headers("s3"))
        if status != 200:
            raise ValidationError("ListObjectsV2: " + describe_response(status, body))
        objects += body.count(b"<Key>")
        match = re.search(rb"<NextContinuationToken>([^<]+)<", body)
        if not match:
            break
        token = match.group(1).decode()
    items, start = 0, None
    while True:
        page = ddb_call(client, "Scan", dict({"TableName": "mixed", "Select": "COUNT"},
                                             **({"ExclusiveStartKey": start} if start else {})))
        items += page["Count"]
        start = page.get("LastEvaluatedKey")
        if not start:
            break
    attributes = sqs_call(client, "GetQueueAttributes", {
        "QueueUrl": queue_url, "AttributeNames": ["ApproximateNumberOfMessages"]})
    client.close()
    return {"s3": objects, "dynamodb": items,
            "sqs": int(attributes["Attributes"]["ApproximateNumberOfMessages"])}


def server_p99(args, port):
    """p50/p99 of the request durations the server traced itself (`GET /_roto/traces`)."""
    client = Client(args.host, port, timeout=600)
    status, _, body = client.request("GET", "/_roto/traces?kind=request", None, {})
    client.close()
    if status != 200:
        raise ValidationError("traces: " + describe_response(status, body))
    durations = sorted(e["duration_ms"] for e in json.loads(body)["traces"])
    return {"requests": len(durations),
            "p50_ms": rounded(percentile(durations, 50)) if durations else None,
            "p99_ms": rounded(percentile(durations, 99)) if durations else None}


def mixed_workload(args, binary, seconds):
    """MIXED_CONNECTIONS connections from CONCURRENCY_PROCESSES processes of mixed S3,
    DynamoDB and SQS work; then every write read back and the server's own p99."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-mixed-") as tmpdir:
        server, port = start_roto_server(args, binary, tmpdir, ["--ephemeral"], "mixed",
                                         ["--trace-limit", "1000000"])
        try:
            setup = Client(args.host, port)
            status, _, body = setup.request("PUT", "/mixed", b"", aws_headers("s3"))
            if status != 200:
                raise ValidationError("CreateBucket: " + describe_response(status, body))
            create_table(setup, "mixed")
            url = sqs_call(setup, "CreateQueue", {"QueueName": "mixed"})["QueueUrl"]
            setup.close()
            per = MIXED_CONNECTIONS // CONCURRENCY_PROCESSES
            jobs = [(args.host, port, p * per, per, seconds, url)
                    for p in range(CONCURRENCY_PROCESSES)]
            results = in_processes(mixed_client, jobs)
            written = {kind: sum(r[0][kind] for r in results) for kind in ("s3", "dynamodb", "sqs")}
            errors = [e for _, errs in results for e in errs]
            held = count_back(args, port, url)
            return {"connections": MIXED_CONNECTIONS, "processes": CONCURRENCY_PROCESSES,
                    "seconds": seconds, "written": written, "read_back": held,
                    "lost_writes": sum(written[k] - held[k] for k in written),
                    "errors": len(errors), "first_errors": errors[:5],
                    "server": server_p99(args, port)}
        finally:
            server.stop()


def fill_queue(job):
    """A client process: SendMessageBatch of `count` messages (10 a call) to `queue_url`."""
    host, port, queue_url, count = job
    client = Client(host, port)
    for first in range(0, count, 10):
        entries = [{"Id": str(n), "MessageBody": "m{}".format(first + n)}
                   for n in range(min(10, count - first))]
        sqs_call(client, "SendMessageBatch", {"QueueUrl": queue_url, "Entries": entries})
    client.close()
    return count


def sqs_receive_p50(args, port, queue_url):
    """ReceiveMessage (10 messages, visibility 0 so the depth stays) latencies."""
    client = Client(args.host, port)
    samples = []
    for i in range(SQS_DEPTH_SAMPLES + 20):
        start = time.perf_counter_ns()
        got = sqs_call(client, "ReceiveMessage", {"QueueUrl": queue_url,
                                                  "MaxNumberOfMessages": 10,
                                                  "VisibilityTimeout": 0})
        elapsed = time.perf_counter_ns() - start
        if len(got.get("Messages", [])) != 10:
            raise ValidationError("ReceiveMessage returned {} messages, expected 10".format(
                len(got.get("Messages", []))))
        if i >= 20:
            samples.append(elapsed)
    client.close()
    return latency_summary(samples)


def sqs_depth(args, binary):
    """ReceiveMessage p50 with SQS_DEPTH_LARGE messages queued against SQS_DEPTH_SMALL."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-depth-") as tmpdir:
        server, port = start_roto_server(args, binary, tmpdir, ["--ephemeral"], "depth")
        try:
            setup = Client(args.host, port)
            out = {}
            for depth in (SQS_DEPTH_SMALL, SQS_DEPTH_LARGE):
                url = sqs_call(setup, "CreateQueue", {"QueueName": "depth-%d" % depth})["QueueUrl"]
                share = -(-depth // CONCURRENCY_PROCESSES)
                jobs = [(args.host, port, url, min(share, depth - p * share))
                        for p in range(CONCURRENCY_PROCESSES) if depth > p * share]
                in_processes(fill_queue, jobs)
                out[str(depth)] = sqs_receive_p50(args, port, url)
            setup.close()
        finally:
            server.stop()
    out["p50_ratio_large_over_small"] = ratio(out[str(SQS_DEPTH_LARGE)]["p50_ms"],
                                              out[str(SQS_DEPTH_SMALL)]["p50_ms"])
    return out


def idle_rss(args, server):
    """The server's RSS after --settle-seconds (median of five samples), in KiB."""
    time.sleep(args.settle_seconds)
    return lambda_rss(server.pid)["rss_kib"]


def fill_and_reset(args, port):
    """Puts RESET_FILL_BYTES half in 256 KiB S3 objects and half in 64 KiB DynamoDB items,
    then `POST /_roto/reset`."""
    client = Client(args.host, port)
    status, _, body = client.request("PUT", "/fill", b"", aws_headers("s3"))
    if status != 200:
        raise ValidationError("CreateBucket: " + describe_response(status, body))
    create_table(client, "fill")
    blob = os.urandom(256 * 1024)
    for n in range(RESET_FILL_BYTES // 2 // len(blob)):
        status, _, body = client.request("PUT", "/fill/o%d" % n, blob, aws_headers("s3"))
        if status != 200:
            raise ValidationError("PutObject: " + describe_response(status, body))
    payload = "x" * (64 * 1024)
    for n in range(RESET_FILL_BYTES // 2 // len(payload)):
        ddb_call(client, "PutItem", {"TableName": "fill", "Item": {
            "pk": {"S": "i%d" % n}, "payload": {"S": payload}}})
    status, _, body = client.request("POST", "/_roto/reset", b"", {})
    client.close()
    if status not in (200, 204):
        raise ValidationError("reset: " + describe_response(status, body))


def rss_after_reset(args, binary):
    """Idle RSS of a fresh server, and of one filled with RESET_FILL_BYTES then reset."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-reset-") as tmpdir:
        fresh, port = start_roto_server(args, binary, tmpdir, ["--ephemeral"], "fresh")
        try:
            fresh_kib = idle_rss(args, fresh)
        finally:
            fresh.stop()
        server, port = start_roto_server(args, binary, tmpdir, ["--ephemeral"], "reset")
        try:
            fill_and_reset(args, port)
            reset_kib = idle_rss(args, server)
        finally:
            server.stop()
    return {"fresh_kib": fresh_kib, "after_reset_kib": reset_kib,
            "added_mib": rounded((reset_kib - fresh_kib) / 1024, 2)
            if None not in (fresh_kib, reset_kib) else None}


def concurrency_for(args, binary):
    """The concurrency figures of one binary."""
    out = {"binary": file_info(binary)}
    log("concurrency: STS during two RSA-4096 CreateKey ({})".format(binary))
    with tempfile.TemporaryDirectory(prefix="roto-bench-keygen-") as tmpdir:
        server, port = start_roto_server(args, binary, tmpdir, ["--ephemeral"], "keygen")
        try:
            out["sts_during_keygen"] = sts_wait_during_keygen(args, port)
        finally:
            server.stop()
    log("concurrency: --durable vs --ephemeral PutItem rate")
    seconds = min(args.concurrency_seconds, 10)
    durable = put_item_rate(args, binary, ["--data-dir", "{tmpdir}/data", "--durable"], seconds)
    ephemeral = put_item_rate(args, binary, ["--ephemeral"], seconds)
    out["put_item_rate"] = {"writers": CONCURRENCY_WRITERS, "durable_per_second": durable,
                            "ephemeral_per_second": ephemeral,
                            "durable_over_ephemeral": ratio(durable, ephemeral)}
    log("concurrency: mixed workload, {} connections for {} s".format(
        MIXED_CONNECTIONS, args.concurrency_seconds))
    out["mixed"] = mixed_workload(args, binary, args.concurrency_seconds)
    log("concurrency: SQS ReceiveMessage at depth {} and {}".format(
        SQS_DEPTH_SMALL, SQS_DEPTH_LARGE))
    out["sqs_depth"] = sqs_depth(args, binary)
    log("concurrency: idle RSS after filling 50 MiB and POST /_roto/reset")
    out["rss_after_reset"] = rss_after_reset(args, binary)
    return out


def concurrency_benchmark(args):
    """The concurrency section for --binary and, if given, --baseline-binary."""
    out = {"measured": concurrency_for(args, args.binary)}
    if args.baseline_binary:
        out["baseline"] = concurrency_for(args, args.baseline_binary)
    return out


def print_concurrency_report(results):
    """Prints the concurrency figures, the baseline's beside them when measured."""
    columns = [("measured", results["measured"])]
    if "baseline" in results:
        columns.append(("baseline", results["baseline"]))
    rows = [
        ("STS max wait during 2 RSA-4096 CreateKey (ms; target <= 50)",
         lambda r: r["sts_during_keygen"]["max_ms"]),
        ("STS p50 during 2 RSA-4096 CreateKey (ms)",
         lambda r: r["sts_during_keygen"]["p50_ms"]),
        ("PutItem/s, 16 clients, --durable", lambda r: r["put_item_rate"]["durable_per_second"]),
        ("PutItem/s, 16 clients, --ephemeral",
         lambda r: r["put_item_rate"]["ephemeral_per_second"]),
        ("durable / ephemeral (target >= 0.70)",
         lambda r: r["put_item_rate"]["durable_over_ephemeral"]),
        ("mixed 64 connections: errors (target 0)", lambda r: r["mixed"]["errors"]),
        ("mixed: lost writes (target 0)", lambda r: r["mixed"]["lost_writes"]),
        ("mixed: requests traced", lambda r: r["mixed"]["server"]["requests"]),
        ("mixed: server p99 (ms)", lambda r: r["mixed"]["server"]["p99_ms"]),
        ("SQS receive p50 at {} (ms)".format(SQS_DEPTH_SMALL),
         lambda r: r["sqs_depth"][str(SQS_DEPTH_SMALL)]["p50_ms"]),
        ("SQS receive p50 at {} (ms)".format(SQS_DEPTH_LARGE),
         lambda r: r["sqs_depth"][str(SQS_DEPTH_LARGE)]["p50_ms"]),
        ("  large / small (target <= 1.5)",
         lambda r: r["sqs_depth"]["p50_ratio_large_over_small"]),
        ("idle RSS fresh (MiB)", lambda r: rounded(r["rss_after_reset"]["fresh_kib"] / 1024, 2)),
        ("idle RSS after fill + reset (MiB)",
         lambda r: rounded(r["rss_after_reset"]["after_reset_kib"] / 1024, 2)),
        ("  added (MiB; target <= 2)", lambda r: r["rss_after_reset"]["added_mib"]),
    ]
    shown = lambda v: fmt(v, "{:.2f}" if isinstance(v, float) else "{}")
    table = [[label] + [shown(value(r)) for _, r in columns] for label, value in rows]
    print(format_table(["concurrency"] + [name for name, _ in columns], table))


# --------------------------------------------------------------------------------------
# Lambda benchmark (--lambda): off by default
# --------------------------------------------------------------------------------------

# Each runtime: (Lambda runtime, handler, file name, source of an echo handler).
LAMBDA_RUNTIMES = {
    "python": ("python3.12", "app.handler", "app.py",
               "def handler(event, context):\n    return event\n"),
    "node": ("nodejs20.x", "index.handler", "index.js",
             "exports.handler = async (event) => event;\n"),
}
LAMBDA_WARM_INSTANCES = 10
LAMBDA_WARMUP = 20


def lambda_call(client, method, path, payload, expect):
    """One Lambda REST call; returns (response, body) or raises ValidationError."""
    headers = aws_headers("lambda", {"Content-Type": "application/json"})
    body = b"" if payload is None else json.dumps(payload).encode()
    status, response, data = client.request(method, path, body, headers)
    if status != expect:
        raise ValidationError("Lambda {} {}: {}".format(method, path,
                                                        describe_response(status, data)))
    return response, data


def lambda_create(client, name, runtime, account):
    """Creates function `name` with the echo handler of `runtime`."""
    import base64
    import io
    import zipfile
    runtime_name, handler, filename, source = LAMBDA_RUNTIMES[runtime]
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w", zipfile.ZIP_DEFLATED) as z:
        z.writestr(filename, source)
    lambda_call(client, "POST", "/2015-03-31/functions", {
        "FunctionName": name, "Runtime": runtime_name, "Handler": handler,
        "Role": "arn:aws:iam::{}:role/roto-benchmark".format(account),
        "Code": {"ZipFile": base64.b64encode(archive.getvalue()).decode()},
    }, 201)


def lambda_delete(client, name):
    """Deletes function `name` (which stops its instances)."""
    lambda_call(client, "DELETE", "/2015-03-31/functions/" + name, None, 204)


def lambda_invoke(client, name, n):
    """One synchronous invocation; returns its latency in ns after checking the echo."""
    event = {"n": n}
    start = time.perf_counter_ns()
    response, data = lambda_call(client, "POST",
                                 "/2015-03-31/functions/{}/invocations".format(name), event, 200)
    elapsed = time.perf_counter_ns() - start
    failure = response.getheader("X-Amz-Function-Error")
    if failure or json.loads(data or b"null") != event:
        raise ValidationError("Lambda {} answered {} {!r}".format(name, failure or "", data[:200]))
    return elapsed


def lambda_rss(pid):
    """The median of five RSS samples of the server and of its process tree, 100 ms apart."""
    samples = []
    for _ in range(RSS_SAMPLES):
        samples.append(sample_rss(pid))
        time.sleep(RSS_INTERVAL_S)
    def median(key):
        values = [s[key] for s in samples if s[key] is not None]
        return statistics.median(values) if values else None
    return {"rss_kib": median("rss_kib"), "tree_rss_kib": median("tree_rss_kib"),
            "tree_processes": samples[-1]["tree_processes"]}


def lambda_runtime_latency(args, client, runtime):
    """Cold invocations (each the first of a new function) and warm ones of one function."""
    cold = []
    for i in range(args.lambda_cold):
        name = "cold-{}-{}".format(runtime, i)
        lambda_create(client, name, runtime, args.account_id)
        cold.append(lambda_invoke(client, name, i))
        lambda_delete(client, name)
    name = "warm-" + runtime
    lambda_create(client, name, runtime, args.account_id)
    for i in range(LAMBDA_WARMUP):
        lambda_invoke(client, name, i)
    gc.collect()
    gc.disable()
    try:
        warm = [lambda_invoke(client, name, i) for i in range(args.lambda_invocations)]
    finally:
        gc.enable()
    lambda_delete(client, name)
    return {"runtime": LAMBDA_RUNTIMES[runtime][0], "cold": latency_summary(cold),
            "warm": latency_summary(warm)}


def docker_engine_socket():
    """The Docker engine's unix socket if one answers there (DOCKER_HOST, else the default
    socket), else None."""
    host = os.environ.get("DOCKER_HOST", "")
    if host and not host.startswith("unix://"):
        return None
    path = host[len("unix://"):] if host else "/var/run/docker.sock"
    try:
        with socket.socket(socket.AF_UNIX) as sock:
            sock.settimeout(2)
            sock.connect(path)
            sock.sendall(b"GET /_ping HTTP/1.0\r\nHost: docker\r\n\r\n")
            return path if sock.recv(64).split(b" ")[1:2] == [b"200"] else None
    except OSError:
        return None


def docker_containers_rss_kib(engine, label):
    """The summed RSS of the processes of the containers that carry `label`."""
    import urllib.parse

    class Connection(http.client.HTTPConnection):
        def connect(self):
            self.sock = socket.socket(socket.AF_UNIX)
            self.sock.connect(engine)

    def get(path):
        connection = Connection("docker")
        try:
            connection.request("GET", path)
            return json.loads(connection.getresponse().read() or b"null")
        finally:
            connection.close()
    filters = urllib.parse.quote(json.dumps({"label": [label]}))
    total = 0
    for container in get("/containers/json?filters=" + filters) or []:
        pid = (get("/containers/{}/json".format(container["Id"])) or {}).get("State", {}).get("Pid")
        if pid:
            total += sample_rss(pid)["tree_rss_kib"] or 0
    return total


def lambda_executor_benchmark(args, runtimes, executor, tmpdir):
    """Invoke latency per runtime, and RSS with 10 warm instances, on one fresh server whose
    functions run with `executor`."""
    results = {}
    server, port = start_roto_server(args, args.binary, tmpdir,
                                     ["--ephemeral", "--lambda-executor", executor],
                                     "lambda-" + executor)
    client = Client(args.host, port)
    try:
        time.sleep(args.settle_seconds)
        idle = lambda_rss(server.pid)
        names = ["rss-{}".format(i) for i in range(LAMBDA_WARM_INSTANCES)]
        for i, name in enumerate(names):
            lambda_create(client, name, runtimes[i % len(runtimes)], args.account_id)
            lambda_invoke(client, name, i)
        time.sleep(args.settle_seconds)
        warm = lambda_rss(server.pid)
        engine = docker_engine_socket() if executor == "docker" else None
        containers = docker_containers_rss_kib(engine, "roto.lambda") if engine else None
        for name in names:
            lambda_delete(client, name)
        results["rss"] = {
            "warm_instances": LAMBDA_WARM_INSTANCES,
            "instances_by_runtime": {r: len(names[i::len(runtimes)])
                                     for i, r in enumerate(runtimes)},
            "idle_kib": idle["rss_kib"],
            "with_warm_instances_kib": warm["rss_kib"],
            "added_kib": (warm["rss_kib"] - idle["rss_kib"])
            if None not in (warm["rss_kib"], idle["rss_kib"]) else None,
            "tree_with_warm_instances_kib": warm["tree_rss_kib"] if containers is None
            else (warm["rss_kib"] or 0) + containers,
            "tree_processes": warm["tree_processes"],
        }
        for runtime in runtimes:
            log("Lambda ({}): timing {} invocations ...".format(executor, runtime))
            results[runtime] = lambda_runtime_latency(args, client, runtime)
    finally:
        client.close()
        server.stop()
    return results


def lambda_benchmark(args):
    """The process executor's figures, and beside them the docker executor's where a Docker
    engine answers (with the Lambda images its runtimes map to; see docs/lambda.md)."""
    results = {"skipped": []}
    runtimes = []
    for runtime, interpreter in (("python", "python3"), ("node", "node")):
        if shutil.which(interpreter):
            runtimes.append(runtime)
        else:
            results["skipped"].append({"runtime": runtime, "reason": interpreter + " not on PATH"})
            log("Lambda: skipping {}: {} is not on PATH".format(runtime, interpreter))
    if not runtimes:
        raise BenchmarkError("Lambda: neither python3 nor node is on PATH")
    with tempfile.TemporaryDirectory(prefix="roto-bench-lambda-") as tmpdir:
        results.update(lambda_executor_benchmark(args, runtimes, "process", tmpdir))
        if not docker_engine_socket():
            results["docker"] = {"skipped": "no Docker engine answers (DOCKER_HOST)"}
            log("Lambda: skipping the docker executor: no Docker engine answers")
            return results
        try:
            results["docker"] = lambda_executor_benchmark(args, runtimes, "docker", tmpdir)
        except ValidationError as error:
            results["docker"] = {"skipped": str(error)}
            log("Lambda: the docker executor failed: {}".format(error))
    return results


def print_lambda_report(results):
    """Prints the Lambda figures, the docker executor's beside the process executor's."""
    for executor, rows in (("process", results), ("docker", results.get("docker") or {})):
        if rows.get("skipped") and executor == "docker":
            print("Lambda docker executor skipped: {}".format(rows["skipped"]))
            continue
        for runtime in LAMBDA_RUNTIMES:
            row = rows.get(runtime)
            if not row:
                continue
            cold, warm = row["cold"], row["warm"]
            print("Lambda {:<7} {:<12} cold p50 {:8.2f} ms, p90 {:8.2f} ms ({} invocations); "
                  "warm p50 {:.3f} ms, p90 {:.3f} ms ({} invocations)".format(
                      executor, row["runtime"], cold["p50_ms"], cold["p90_ms"], cold["count"],
                      warm["p50_ms"], warm["p90_ms"], warm["count"]))
        rss = rows["rss"]
        mib = lambda kib: kib / 1024 if kib is not None else float("nan")
        print("Lambda {} RSS of roto-server: {:.1f} MiB idle, {:.1f} MiB with {} warm instances "
              "(+{:.1f} MiB; the runtimes excluded; with them {:.1f} MiB)".format(
                  executor, mib(rss["idle_kib"]), mib(rss["with_warm_instances_kib"]),
                  rss["warm_instances"], mib(rss["added_kib"]),
                  mib(rss["tree_with_warm_instances_kib"])))



# --------------------------------------------------------------------------------------
# Step Functions (--stepfunctions)
# --------------------------------------------------------------------------------------

SFN_HEADERS = aws_headers("states", {"Content-Type": "application/x-amz-json-1.0"})
SFN_ROLE = "arn:aws:iam::{}:role/bench"
SFN_POLL_S = 0.002


def sfn_call(client, action, payload):
    """One Step Functions call; returns the decoded answer or raises ValidationError."""
    return json_call(client, SFN_HEADERS, "AWSStepFunctions." + action, payload,
                     "Step Functions " + action)


def sfn_machine(client, args, name, states):
    """Creates a STANDARD machine over `states` (the first is StartAt); returns its ARN."""
    definition = {"StartAt": next(iter(states)), "States": states}
    return sfn_call(client, "CreateStateMachine", {
        "name": name, "definition": json.dumps(definition),
        "roleArn": SFN_ROLE.format(args.account_id)})["stateMachineArn"]


def sfn_run(client, machine, payload):
    """Starts an execution and polls it to its end; returns (wall ns, its ARN)."""
    started = time.perf_counter_ns()
    arn = sfn_call(client, "StartExecution", {"stateMachineArn": machine,
                                              "input": json.dumps(payload)})["executionArn"]
    while True:
        described = sfn_call(client, "DescribeExecution", {"executionArn": arn})
        if described["status"] != "RUNNING":
            break
        time.sleep(SFN_POLL_S)
    elapsed = time.perf_counter_ns() - started
    if described["status"] != "SUCCEEDED":
        raise ValidationError("execution {} ended {}".format(arn, described["status"]))
    return elapsed, arn


def sfn_server_ms(client, arn):
    """The execution's time on the server: its last history event's timestamp minus its
    first's."""
    events = sfn_call(client, "GetExecutionHistory", {"executionArn": arn, "maxResults": 1000,
                                                     "reverseOrder": False})["events"]
    last = sfn_call(client, "GetExecutionHistory", {"executionArn": arn, "maxResults": 1,
                                                   "reverseOrder": True})["events"][0]
    return (last["timestamp"] - events[0]["timestamp"]) * 1000.0


def sfn_benchmark(args):
    """Per-state overhead (a 100-state Pass chain, from its history's timestamps), a
    1,000-item inline Map with MaxConcurrency 10 (wall time), executions started per second
    (sequential StartExecution on one connection), and the server's RSS before and after."""
    out = {}
    with tempfile.TemporaryDirectory(prefix="roto-bench-sfn-") as tmpdir:
        server, port = start_roto_server(args, args.binary, tmpdir, ["--ephemeral"], "sfn")
        client = Client(args.host, port)
        try:
            time.sleep(args.settle_seconds)
            out["rss_fresh_kib"] = sample_rss(server.proc.pid)["rss_kib"]
            chain = {"S%d" % i: {"Type": "Pass", "Next": "S%d" % (i + 1)} for i in range(99)}
            chain["S99"] = {"Type": "Pass", "End": True}
            machine = sfn_machine(client, args, "chain", chain)
            server_ms, wall = [], []
            for _ in range(args.sfn_runs):
                elapsed, arn = sfn_run(client, machine, {"n": 1})
                wall.append(elapsed)
                server_ms.append(sfn_server_ms(client, arn))
            out["pass_chain_100"] = {
                "runs": args.sfn_runs,
                "server_ms_median": rounded(statistics.median(server_ms), 3),
                "per_state_us_median": rounded(statistics.median(server_ms) * 10.0, 1),
                "wall": latency_summary(wall)}
            processor = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
            machine = sfn_machine(client, args, "map", {"M": {
                "Type": "Map", "MaxConcurrency": 10, "ItemProcessor": processor, "End": True}})
            server_ms, wall = [], []
            for _ in range(args.sfn_runs):
                elapsed, arn = sfn_run(client, machine, list(range(1000)))
                wall.append(elapsed)
                server_ms.append(sfn_server_ms(client, arn))
            out["inline_map_1000_concurrency_10"] = {
                "runs": args.sfn_runs, "server_ms_median": rounded(statistics.median(server_ms), 3),
                "wall": latency_summary(wall)}
            machine = sfn_machine(client, args, "one", {"P": {"Type": "Pass", "End": True}})
            count = args.sfn_starts
            started = time.perf_counter_ns()
            for i in range(count):
                sfn_call(client, "StartExecution", {"stateMachineArn": machine, "input": "{}"})
            elapsed = time.perf_counter_ns() - started
            out["starts_per_second"] = rounded(count / (elapsed / 1e9), 1)
            out["starts"] = count
            time.sleep(args.settle_seconds)
            out["rss_after_kib"] = sample_rss(server.proc.pid)["rss_kib"]
        finally:
            client.close()
            server.stop()
    return out


def print_sfn_report(results):
    """Prints the Step Functions figures."""
    chain, inline = results["pass_chain_100"], results["inline_map_1000_concurrency_10"]
    print("Step Functions 100-state Pass chain: {:.2f} ms on the server (median of {}; "
          "{:.1f} us a state), wall p50 {:.2f} ms".format(
              chain["server_ms_median"], chain["runs"], chain["per_state_us_median"],
              chain["wall"]["p50_ms"]))
    print("Step Functions 1,000-item inline Map, MaxConcurrency 10: wall p50 {:.1f} ms, "
          "max {:.1f} ms; {:.1f} ms on the server (median of {})".format(
              inline["wall"]["p50_ms"], inline["wall"]["max_ms"], inline["server_ms_median"],
              inline["runs"]))
    print("Step Functions StartExecution, sequential on one connection: {:.1f} executions/s "
          "({} started)".format(results["starts_per_second"], results["starts"]))
    print("Step Functions RSS: {:.1f} MiB fresh, {:.1f} MiB after the runs above".format(
        results["rss_fresh_kib"] / 1024, results["rss_after_kib"] / 1024))
# --------------------------------------------------------------------------------------
# API Gateway benchmark (--apigateway): off by default
# --------------------------------------------------------------------------------------

APIGW_FUNCTION = "apigw-bench"
APIGW_ANSWER = {"statusCode": 200, "body": "ok"}


def apigw_call(client, service, method, path, payload, expect):
    """One API Gateway control-plane call (REST APIs or, under /v2, HTTP APIs); its JSON."""
    headers = aws_headers(service, {"Content-Type": "application/json"})
    status, _, data = client.request(method, path, json.dumps(payload).encode(), headers)
    if status != expect:
        raise ValidationError("API Gateway {} {}: {}".format(method, path,
                                                             describe_response(status, data)))
    return json.loads(data or b"{}")


def apigw_apis(client, account):
    """A Python function answering 200 "ok", a REST API whose GET / proxies to it (deployed
    to `prod`) and a quick-created HTTP API on it; the paths each is timed at."""
    import base64
    import io
    import zipfile
    archive = io.BytesIO()
    with zipfile.ZipFile(archive, "w") as z:
        z.writestr("app.py", "def handler(event, context):\n"
                             "    return {\"statusCode\": 200, \"body\": \"ok\"}\n")
    arn = "arn:aws:lambda:{}:{}:function:{}".format(REGION, account, APIGW_FUNCTION)
    lambda_call(client, "POST", "/2015-03-31/functions", {
        "FunctionName": APIGW_FUNCTION, "Runtime": "python3.12", "Handler": "app.handler",
        "Role": "arn:aws:iam::{}:role/roto-benchmark".format(account),
        "Code": {"ZipFile": base64.b64encode(archive.getvalue()).decode()},
    }, 201)
    rest = apigw_call(client, "apigateway", "POST", "/restapis", {"name": "bench"}, 201)
    method = "/restapis/{}/resources/{}/methods/GET".format(rest["id"], rest["rootResourceId"])
    apigw_call(client, "apigateway", "PUT", method, {"authorizationType": "NONE"}, 201)
    uri = "arn:aws:apigateway:{}:lambda:path/2015-03-31/functions/{}/invocations".format(REGION, arn)
    apigw_call(client, "apigateway", "PUT", method + "/integration",
               {"type": "AWS_PROXY", "httpMethod": "POST", "uri": uri}, 201)
    apigw_call(client, "apigateway", "POST", "/restapis/{}/deployments".format(rest["id"]),
               {"stageName": "prod"}, 201)
    http_api = apigw_call(client, "apigateway", "POST", "/v2/apis",
                          {"name": "bench", "protocolType": "HTTP", "target": arn}, 201)
    return {
        "rest": "/_aws/execute-api/{}/prod/".format(rest["id"]),
        "http": "/_aws/execute-api/{}/".format(http_api["apiId"]),
    }


def apigw_timed(client, requests, count):
    """`count` rounds after as many unmeasured ones, each round one request of every
    `(name, method, path, body, headers, check)` in turn (so that a load that comes and goes
    falls on all of them alike); the latencies in ns by name."""
    def once(method, path, body, headers, check):
        start = time.perf_counter_ns()
        status, _, data = client.request(method, path, body, headers)
        elapsed = time.perf_counter_ns() - start
        if not check(status, data):
            raise ValidationError("{} {}: {}".format(method, path, describe_response(status, data)))
        return elapsed
    for _ in range(LAMBDA_WARMUP):
        for _, *request in requests:
            once(*request)
    samples = {name: [] for name, *_ in requests}
    gc.collect()
    gc.disable()
    try:
        for _ in range(count):
            for name, *request in requests:
                samples[name].append(once(*request))
    finally:
        gc.enable()
    return samples


def apigw_server_overheads(client):
    """From the trace: for each request through an API, its ExecuteApi duration less that of
    the Lambda Invoke it made (the entry just before it); in ns, REST's and HTTP's apart (an
    HTTP API's request also has an `apigatewayv2` entry between the two). Direct Invokes'
    own durations beside them."""
    status, _, data = client.request("GET", "/_roto/traces?limit=10000", None, {})
    if status != 200:
        raise ValidationError("GET /_roto/traces: " + describe_response(status, data))
    overheads = {"rest_api": [], "http_api": [], "lambda_invoke": []}
    inner, via_http_api = None, False
    for entry in sorted(json.loads(data)["traces"], key=lambda e: e["seq"]):
        key = (entry["service"], entry["operation"])
        if key == ("lambda", "Invoke"):
            if entry.get("source") == "dispatcher":
                inner, via_http_api = entry["duration_ms"], False
            else:
                overheads["lambda_invoke"].append(entry["duration_ms"] * 1e6)
        elif key == ("apigatewayv2", "ExecuteApi"):
            via_http_api = True
        elif key == ("apigateway", "ExecuteApi") and inner is not None:
            name = "http_api" if via_http_api else "rest_api"
            overheads[name].append((entry["duration_ms"] - inner) * 1e6)
            inner = None
    return overheads


def apigateway_benchmark(args):
    """The overhead API Gateway adds over a direct Lambda Invoke of the same warm function:
    p50 of Invoke, of GET through a REST API (AWS_PROXY) and of GET through an HTTP API
    (quick create, payload 2.0), interleaved over one keep-alive connection of one client,
    on one fresh ephemeral server."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-apigw-") as tmpdir:
        server, port = start_roto_server(args, args.binary, tmpdir, ["--ephemeral"], "apigateway")
        client = Client(args.host, port)
        try:
            paths = apigw_apis(client, args.account_id)
            invoke_headers = aws_headers("lambda", {"Content-Type": "application/json"})
            invoked = lambda status, data: status == 200 and json.loads(data) == APIGW_ANSWER
            served = lambda status, data: status == 200 and data == b"ok"
            log("API Gateway: timing {} requests each ...".format(args.apigateway_requests))
            samples = apigw_timed(client, [
                ("lambda_invoke", "POST",
                 "/2015-03-31/functions/{}/invocations".format(APIGW_FUNCTION), b"{}",
                 invoke_headers, invoked),
                ("rest_api", "GET", paths["rest"], None, {}, served),
                ("http_api", "GET", paths["http"], None, {}, served),
            ], args.apigateway_requests)
            server_side = apigw_server_overheads(client)
        finally:
            client.close()
            server.stop()
    results = {name: latency_summary(ns) for name, ns in samples.items()}
    base = results["lambda_invoke"]["p50_ms"]
    for name in ("rest_api", "http_api"):
        results[name]["overhead_p50_ms"] = rounded(results[name]["p50_ms"] - base)
    results["server_side"] = {name: latency_summary(ns) for name, ns in server_side.items() if ns}
    return results


def print_apigateway_report(results):
    """Prints the API Gateway figures: p50s and the overhead over a direct Invoke."""
    base = results["lambda_invoke"]
    print("API Gateway: direct Lambda Invoke p50 {:.3f} ms ({} requests)".format(
        base["p50_ms"], base["count"]))
    for name, label in (("rest_api", "REST API (AWS_PROXY)"), ("http_api", "HTTP API (payload 2.0)")):
        row = results[name]
        print("API Gateway: {:<23} p50 {:.3f} ms, p90 {:.3f} ms; overhead over Invoke p50 "
              "{:+.3f} ms".format(label, row["p50_ms"], row["p90_ms"], row["overhead_p50_ms"]))
        server = results["server_side"].get(name)
        if server:
            print("API Gateway: {:<23} server side, ExecuteApi less its Invoke: p50 {:.3f} ms, "
                  "p90 {:.3f} ms ({} requests)".format(label, server["p50_ms"], server["p90_ms"],
                                                       server["count"]))
    direct = results["server_side"].get("lambda_invoke")
    if direct:
        print("API Gateway: direct Invoke, server side: p50 {:.3f} ms".format(direct["p50_ms"]))



# --------------------------------------------------------------------------------------
# Kinesis and Firehose (--kinesis): off by default
# --------------------------------------------------------------------------------------

KINESIS_BATCH = 500
KINESIS_RECORD_BYTES = 1024
KINESIS_READ_LIMIT = 100
KINESIS_READS = 200
KINESIS_DELIVERIES = 20
KINESIS_TARGET = "Kinesis_20131202."


def json11_call(client, service, target, payload):
    """One json 1.1 call (`target` is the X-Amz-Target); returns the decoded answer or raises
    ValidationError."""
    headers = aws_headers(service, {"Content-Type": "application/x-amz-json-1.1",
                                    "X-Amz-Target": target})
    status, _, data = client.request("POST", "/", json.dumps(payload).encode(), headers)
    if status != 200:
        raise ValidationError("{} {}: {}".format(service, target, describe_response(status, data)))
    return json.loads(data or b"{}")


def kinesis_call(client, operation, payload):
    """One Kinesis call."""
    return json11_call(client, "kinesis", KINESIS_TARGET + operation, payload)


def kinesis_stream(client, name, account):
    """Creates a one-shard stream; returns its ARN."""
    kinesis_call(client, "CreateStream", {"StreamName": name, "ShardCount": 1})
    return "arn:aws:kinesis:{}:{}:stream/{}".format(REGION, account, name)


def kinesis_put_batch(client, stream, records):
    """One PutRecords call; returns (elapsed ns, the last record's sequence number)."""
    start = time.perf_counter_ns()
    answer = kinesis_call(client, "PutRecords", {"StreamName": stream, "Records": records})
    elapsed = time.perf_counter_ns() - start
    if answer.get("FailedRecordCount") or len(answer.get("Records", [])) != len(records):
        raise ValidationError("PutRecords failed records: {!r}".format(answer)[:400])
    return elapsed, answer["Records"]


def kinesis_batch():
    """500 records of 1 KiB of data each, partition keys spread."""
    import base64
    data = base64.b64encode(b"k" * KINESIS_RECORD_BYTES).decode()
    return [{"Data": data, "PartitionKey": "key-{}".format(i)} for i in range(KINESIS_BATCH)]


def kinesis_read_latency(client, stream, iterator_args):
    """p50/p90 of GetRecords (Limit 100) from a fresh iterator of `iterator_args`."""
    samples = []
    for _ in range(KINESIS_READS):
        iterator = kinesis_call(client, "GetShardIterator", dict(
            {"StreamName": stream, "ShardId": "shardId-000000000000"}, **iterator_args))
        start = time.perf_counter_ns()
        answer = kinesis_call(client, "GetRecords", {"ShardIterator": iterator["ShardIterator"],
                                                     "Limit": KINESIS_READ_LIMIT})
        samples.append(time.perf_counter_ns() - start)
        if len(answer.get("Records", [])) != KINESIS_READ_LIMIT:
            raise ValidationError("GetRecords returned {} records".format(
                len(answer.get("Records", []))))
    return latency_summary(samples)


def trace_wait(client, filters, after):
    """Blocks (up to 10 s) for a trace entry after `after` matching `filters`; returns the
    greatest sequence number seen."""
    import urllib.parse
    query = urllib.parse.urlencode(dict(filters, after=after, wait=10))
    status, _, data = client.request("GET", "/_roto/traces?" + query, None, {})
    entries = json.loads(data or b"[]") if status == 200 else []
    if isinstance(entries, dict):
        entries = entries.get("traces") or entries.get("entries") or []
    if not entries:
        raise ValidationError("no trace entry matched {} after {}: {}".format(
            filters, after, describe_response(status, data)))
    return max(e["seq"] for e in entries)


def trace_tip(client):
    """The sequence number of the latest trace entry (0 when the trace is empty)."""
    status, _, data = client.request("GET", "/_roto/traces?limit=1", None, {})
    entries = json.loads(data or b"[]") if status == 200 else []
    if isinstance(entries, dict):
        entries = entries.get("traces") or entries.get("entries") or []
    return max((e["seq"] for e in entries), default=0)


def delivery_latency(client, trace, put, filters):
    """p50/p90 of the time from calling `put(n)` to the delivery `filters` describes showing
    in the trace, over KINESIS_DELIVERIES puts, one at a time."""
    samples = []
    after = trace_tip(trace)
    for n in range(KINESIS_DELIVERIES):
        start = time.perf_counter_ns()
        put(n)
        after = trace_wait(trace, filters, after)
        samples.append(time.perf_counter_ns() - start)
    return latency_summary(samples)


def kinesis_lambda_latency(args, client, trace):
    """Put-to-Lambda latency through an event source mapping (batch size 1) from a stream."""
    stream = "to-lambda"
    arn = kinesis_stream(client, stream, args.account_id)
    lambda_create(client, "from-kinesis", "python", args.account_id)
    function_arn = "arn:aws:lambda:{}:{}:function:from-kinesis".format(REGION, args.account_id)
    _, data = lambda_call(client, "POST", "/2015-03-31/event-source-mappings", {
        "EventSourceArn": arn, "FunctionName": "from-kinesis", "StartingPosition": "LATEST",
        "BatchSize": 1}, 202)
    uuid = json.loads(data)["UUID"]
    for _ in range(100):
        _, data = lambda_call(client, "GET", "/2015-03-31/event-source-mappings/" + uuid, None, 200)
        if json.loads(data).get("State") == "Enabled":
            break
        time.sleep(0.05)

    def put(n):
        kinesis_call(client, "PutRecord", {"StreamName": stream, "Data": "e30=",
                                           "PartitionKey": "k{}".format(n)})
    return delivery_latency(client, trace, put, {"kind": "delivery", "target": function_arn,
                                                 "outcome": "delivered"})


def firehose_s3_latency(client, trace, account):
    """Put-to-S3 latency through a DirectPut delivery stream with a zero buffering interval."""
    bucket = "roto-bench-firehose"
    status, _, data = client.request("PUT", "/" + bucket, b"", aws_headers("s3"))
    if status != 200:
        raise ValidationError("CreateBucket: " + describe_response(status, data))
    bucket_arn = "arn:aws:s3:::" + bucket
    json11_call(client, "firehose", "Firehose_20150804.CreateDeliveryStream", {
        "DeliveryStreamName": "to-s3", "DeliveryStreamType": "DirectPut",
        "ExtendedS3DestinationConfiguration": {
            "RoleARN": "arn:aws:iam::{}:role/roto-benchmark".format(account),
            "BucketARN": bucket_arn,
            "BufferingHints": {"IntervalInSeconds": 0, "SizeInMBs": 1}}})

    def put(n):
        json11_call(client, "firehose", "Firehose_20150804.PutRecord", {
            "DeliveryStreamName": "to-s3", "Record": {"Data": "e30K"}})
    return delivery_latency(client, trace, put, {"kind": "delivery", "service": "firehose",
                                                 "target": bucket_arn, "outcome": "delivered"})


def kinesis_benchmark(args):
    """PutRecords throughput, GetRecords at the tip and far behind it, and put-to-Lambda and
    put-to-S3 latency, on one fresh ephemeral server."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-kinesis-") as tmpdir:
        server, port = start_roto_server(args, args.binary, tmpdir, ["--ephemeral"], "kinesis")
        client, trace = Client(args.host, port), Client(args.host, port)
        try:
            results = {"records_per_call": KINESIS_BATCH, "record_bytes": KINESIS_RECORD_BYTES}
            stream = "bench"
            kinesis_stream(client, stream, args.account_id)
            batch = kinesis_batch()
            calls = max(1, args.kinesis_behind // KINESIS_BATCH)
            log("Kinesis: putting {} records of 1 KiB ...".format(calls * KINESIS_BATCH))
            gc.collect()
            elapsed, last = 0, []
            for _ in range(calls):
                took, last = kinesis_put_batch(client, stream, batch)
                elapsed += took
            results["put_records"] = {
                "calls": calls, "records": calls * KINESIS_BATCH,
                "records_per_second": rounded(calls * KINESIS_BATCH / (elapsed / 1e9), 1),
                "call_p50_ms": rounded(ns_to_ms(elapsed / calls))}
            log("Kinesis: timing GetRecords ...")
            tip = last[-KINESIS_READ_LIMIT]["SequenceNumber"]
            results["get_records_tip"] = kinesis_read_latency(client, stream, {
                "ShardIteratorType": "AT_SEQUENCE_NUMBER", "StartingSequenceNumber": tip})
            results["get_records_behind"] = kinesis_read_latency(client, stream, {
                "ShardIteratorType": "TRIM_HORIZON"})
            results["get_records_behind"]["records_behind"] = calls * KINESIS_BATCH
            if shutil.which("python3"):
                log("Kinesis: timing put-to-Lambda through an event source mapping ...")
                results["put_to_lambda"] = kinesis_lambda_latency(args, client, trace)
            else:
                results["put_to_lambda"] = {"skipped": "python3 not on PATH"}
            log("Firehose: timing put-to-S3 with a zero buffering interval ...")
            results["firehose_put_to_s3"] = firehose_s3_latency(client, trace, args.account_id)
        finally:
            client.close()
            trace.close()
            server.stop()
    return results


def print_kinesis_report(results):
    """Prints the Kinesis and Firehose figures."""
    put = results["put_records"]
    print("Kinesis: PutRecords {:.0f} records/s ({} calls of {} records of {} B, one client; "
          "{:.2f} ms a call)".format(put["records_per_second"], put["calls"],
                                      results["records_per_call"], results["record_bytes"],
                                      put["call_p50_ms"]))
    for key, label in (("get_records_tip", "at the tip"),
                       ("get_records_behind", "{} records behind".format(
                           results["get_records_behind"].get("records_behind")))):
        row = results[key]
        print("Kinesis: GetRecords Limit 100 {:<22} p50 {:.3f} ms, p90 {:.3f} ms".format(
            label, row["p50_ms"], row["p90_ms"]))
    for key, label in (("put_to_lambda", "Kinesis put -> Lambda (mapping)"),
                       ("firehose_put_to_s3", "Firehose put -> S3 (interval 0)")):
        row = results[key]
        if row.get("skipped"):
            print("{}: skipped ({})".format(label, row["skipped"]))
        else:
            print("{}: p50 {:.2f} ms, p90 {:.2f} ms ({} puts)".format(
                label, row["p50_ms"], row["p90_ms"], row["count"]))


# --------------------------------------------------------------------------------------
# CloudFormation (--cloudformation): off by default
# --------------------------------------------------------------------------------------

CFN_RESOURCES = 50
CFN_HEADERS = aws_headers("cloudformation", {
    "Content-Type": "application/x-www-form-urlencoded; charset=utf-8",
})


def cfn_call(client, params):
    """One CloudFormation query-protocol call; returns the parsed XML answer."""
    import urllib.parse
    import xml.etree.ElementTree as ET
    body = urllib.parse.urlencode(dict(params, Version="2010-05-15")).encode()
    status, _, data = client.request("POST", "/", body, CFN_HEADERS)
    if status != 200:
        raise ValidationError("CloudFormation {}: {}".format(
            params["Action"], describe_response(status, data)))
    root = ET.fromstring(data)
    for element in root.iter():  # the namespace is noise here
        element.tag = element.tag.rpartition("}")[2]
    return root


def cfn_timestamp(text):
    """Seconds since the epoch of a query-protocol timestamp (ISO 8601, UTC)."""
    text = text.strip().replace("Z", "+00:00")
    return datetime.datetime.fromisoformat(text).timestamp()


def cfn_stack_seconds(client, name):
    """Creates a stack of CFN_RESOURCES SSM parameters, waits for it to settle (polling every
    10 ms), and returns the server-side seconds from its CreationTime to the timestamp of its
    own CREATE_COMPLETE event."""
    resources = {"P%d" % i: {"Type": "AWS::SSM::Parameter",
                             "Properties": {"Type": "String", "Value": str(i)}}
                 for i in range(CFN_RESOURCES)}
    cfn_call(client, {"Action": "CreateStack", "StackName": name,
                      "TemplateBody": json.dumps({"Resources": resources})})
    deadline = time.monotonic() + 120
    while True:
        stack = cfn_call(client, {"Action": "DescribeStacks", "StackName": name}).find(".//member")
        status = stack.findtext("StackStatus")
        if not status.endswith("_IN_PROGRESS"):
            break
        if time.monotonic() > deadline:
            raise BenchmarkError("stack {} still {}".format(name, status))
        time.sleep(0.01)
    if status != "CREATE_COMPLETE":
        raise ValidationError("stack {} ended {}".format(name, status))
    created = cfn_timestamp(stack.findtext("CreationTime"))
    events = cfn_call(client, {"Action": "DescribeStackEvents", "StackName": name})
    for event in events.iter("member"):
        if (event.findtext("LogicalResourceId") == name
                and event.findtext("ResourceStatus") == "CREATE_COMPLETE"):
            return cfn_timestamp(event.findtext("Timestamp")) - created
    raise ValidationError("stack {} has no CREATE_COMPLETE event".format(name))


def cloudformation_benchmark(args):
    """Creates --cloudformation-stacks stacks of CFN_RESOURCES resources, one after
    another, on one fresh ephemeral server; the server-side creation times."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-cfn-") as tmpdir:
        server, port = start_roto_server(args, args.binary, tmpdir, ["--ephemeral"],
                                         "cloudformation")
        client = Client(args.host, port)
        try:
            seconds = [cfn_stack_seconds(client, "bench-%d" % i)
                       for i in range(args.cloudformation_stacks)]
        finally:
            client.close()
            server.stop()
    ordered = sorted(seconds)
    return {"resources": CFN_RESOURCES, "stacks": len(seconds),
            "create_seconds": [rounded(v) for v in seconds],
            "median_seconds": rounded(statistics.median(ordered)),
            "max_seconds": rounded(ordered[-1])}


def print_cloudformation_report(cfn):
    """Prints the CloudFormation figure."""
    print("CloudFormation CreateStack -> CREATE_COMPLETE, {} resources (server side): median "
          "{:.3f} s, max {:.3f} s over {} stacks".format(
              cfn["resources"], cfn["median_seconds"], cfn["max_seconds"], cfn["stacks"]))


# --------------------------------------------------------------------------------------
# CloudWatch (--cloudwatch): off by default
# --------------------------------------------------------------------------------------

CW_HEADERS = aws_headers("monitoring", {"Content-Type": "application/x-amz-json-1.0"})
CW_METRICS = 10
CW_DAY_MINUTES = 24 * 60
CW_GET_CALLS = 20


def cw_call(client, action, payload):
    """One CloudWatch JSON-protocol call; returns the decoded answer or raises ValidationError."""
    return json_call(client, CW_HEADERS, "GraniteServiceVersion20100801." + action, payload,
                     "CloudWatch " + action)


def server_clock_s(client):
    """The server clock, in epoch seconds."""
    status, _, body = client.request("GET", "/_roto/clock", None, {})
    if status != 200:
        raise ValidationError("GET /_roto/clock: " + describe_response(status, body))
    return json.loads(body)["now_millis"] / 1000


def cw_put_throughput(client, calls):
    """Datapoints per second of `calls` PutMetricData calls of 1,000 datapoints each (10
    metrics, 100 values each), one client, one connection."""
    started = time.perf_counter_ns()
    for call in range(calls):
        cw_call(client, "PutMetricData", {"Namespace": "Bench/Put", "MetricData": [
            {"MetricName": "m%d" % m, "Value": float(call * 1000 + m * 100 + i), "Unit": "Count"}
            for m in range(CW_METRICS) for i in range(100)]})
    elapsed = time.perf_counter_ns() - started
    return {"calls": calls, "datapoints": calls * 1000,
            "datapoints_per_second": rounded(calls * 1000 / (elapsed / 1e9), 1)}


def cw_day_queries(client):
    """GetMetricData p50 for 10 metrics over a day of one-minute datapoints (seeded first,
    1,000 datapoints a call), each query answering 1,440 values."""
    now = int(server_clock_s(client)) // 60 * 60
    start = now - CW_DAY_MINUTES * 60
    data = [{"MetricName": "m%d" % m, "Timestamp": start + minute * 60, "Value": float(minute)}
            for m in range(CW_METRICS) for minute in range(CW_DAY_MINUTES)]
    for at in range(0, len(data), 1000):
        cw_call(client, "PutMetricData", {"Namespace": "Bench/Day", "MetricData": data[at:at + 1000]})
    queries = [{"Id": "m%d" % m, "MetricStat": {
        "Metric": {"Namespace": "Bench/Day", "MetricName": "m%d" % m},
        "Period": 60, "Stat": "Average"}} for m in range(CW_METRICS)]
    request = {"MetricDataQueries": queries, "StartTime": start, "EndTime": now,
               "MaxDatapoints": 100_800}
    samples = []
    for _ in range(CW_GET_CALLS):
        began = time.perf_counter_ns()
        answer = cw_call(client, "GetMetricData", request)
        samples.append(time.perf_counter_ns() - began)
        counts = {len(r["Values"]) for r in answer["MetricDataResults"]}
        if counts != {CW_DAY_MINUTES} or "NextToken" in answer:
            raise ValidationError("GetMetricData answered {} values per metric".format(counts))
    return dict(latency_summary(samples), metrics=CW_METRICS, values_per_metric=CW_DAY_MINUTES)


def cw_alarm_lag(client, trials):
    """The lag from moving the server clock past a period that holds a threshold-crossing
    datapoint to the alarm's notification arriving in an SQS queue subscribed (raw) to the
    alarm's SNS topic: one fresh alarm and metric per trial."""
    url = sqs_call(client, "CreateQueue", {"QueueName": "bench-alarms"})["QueueUrl"]
    queue_arn = sqs_call(client, "GetQueueAttributes", {
        "QueueUrl": url, "AttributeNames": ["QueueArn"]})["Attributes"]["QueueArn"]
    xml = sns_call(client, {"Action": "CreateTopic", "Name": "bench-alarms"})
    topic = re.search(rb"<TopicArn>([^<]+)</TopicArn>", xml).group(1).decode()
    sns_call(client, {"Action": "Subscribe", "TopicArn": topic, "Protocol": "sqs",
                      "Endpoint": queue_arn, "Attributes.entry.1.key": "RawMessageDelivery",
                      "Attributes.entry.1.value": "true"})
    samples = []
    for trial in range(trials):
        name = "lag-%d" % trial
        cw_call(client, "PutMetricAlarm", {
            "AlarmName": name, "Namespace": "Bench/Lag", "MetricName": name, "Statistic": "Maximum",
            "Period": 60, "EvaluationPeriods": 1, "Threshold": 1.0,
            "ComparisonOperator": "GreaterThanThreshold", "AlarmActions": [topic]})
        cw_call(client, "PutMetricData", {"Namespace": "Bench/Lag", "MetricData": [
            {"MetricName": name, "Value": 5.0, "Timestamp": server_clock_s(client)}]})
        began = time.perf_counter_ns()
        status, _, body = client.request("POST", "/_roto/clock?advance=60", None, {})
        if status != 200:
            raise ValidationError("advancing the clock: " + describe_response(status, body))
        messages = []
        while not messages:
            messages = sqs_call(client, "ReceiveMessage", {
                "QueueUrl": url, "WaitTimeSeconds": 5}).get("Messages", [])
        samples.append(time.perf_counter_ns() - began)
        note = json.loads(messages[0]["Body"])
        if note.get("AlarmName") != name or note.get("NewStateValue") != "ALARM":
            raise ValidationError("alarm notification {!r}, expected {} in ALARM".format(note, name))
        sqs_call(client, "DeleteMessage", {
            "QueueUrl": url, "ReceiptHandle": messages[0]["ReceiptHandle"]})
    return latency_summary(samples)


def cloudwatch_benchmark(args):
    """The issue's CloudWatch figures on one fresh ephemeral server, one client."""
    with tempfile.TemporaryDirectory(prefix="roto-bench-cloudwatch-") as tmpdir:
        server, port = start_roto_server(args, args.binary, tmpdir, ["--ephemeral"], "cloudwatch")
        client = Client(args.host, port)
        try:
            log("CloudWatch: {} PutMetricData calls ...".format(args.cloudwatch_puts))
            put = cw_put_throughput(client, args.cloudwatch_puts)
            log("CloudWatch: a day of minutes for {} metrics, {} GetMetricData calls ...".format(
                CW_METRICS, CW_GET_CALLS))
            day = cw_day_queries(client)
            log("CloudWatch: {} alarm lag trials ...".format(args.cloudwatch_alarms))
            lag = cw_alarm_lag(client, args.cloudwatch_alarms)
        finally:
            client.close()
            server.stop()
    return {"put_metric_data": put, "get_metric_data_day": day, "alarm_to_sns_lag": lag}


def print_cloudwatch_report(cloudwatch):
    """Prints the CloudWatch figures."""
    put = cloudwatch["put_metric_data"]
    print("CloudWatch PutMetricData: {:,.0f} datapoints/s ({} calls of 1,000)".format(
        put["datapoints_per_second"], put["calls"]))
    day = cloudwatch["get_metric_data_day"]
    print("CloudWatch GetMetricData, {} metrics x {} minutes: p50 {:.3f} ms, p95 {:.3f} ms".format(
        day["metrics"], day["values_per_metric"], day["p50_ms"], day["p95_ms"]))
    lag = cloudwatch["alarm_to_sns_lag"]
    print("CloudWatch alarm: clock past the period -> SNS delivery in SQS: p50 {:.3f} ms, "
          "max {:.3f} ms ({} alarms)".format(lag["p50_ms"], lag["max_ms"], lag["count"]))


def main(argv=None):
    """Entry point: parse options, run, report, write JSON; return the exit status."""
    parser = build_parser()
    args = parser.parse_args(argv)
    validate_args(parser, args)
    for signum in (getattr(signal, "SIGTERM", None), getattr(signal, "SIGHUP", None)):
        if signum is not None:
            signal.signal(signum, raise_keyboard_interrupt)
    try:
        if args.only:
            results = sections_document(args)
        else:
            results = benchmark(args)
            print_report(results)
        if args.sqs or args.sns:
            results["messaging"] = messaging_benchmark(args)
            print_messaging_report(results["messaging"])
        if args.s3_scale:
            results["s3_scale"] = s3_scale_benchmark(args)
            print_s3_scale_report(results["s3_scale"], args.s3_scale_objects)
        if args.dynamodb_scale:
            results["dynamodb_scale"] = ddb_scale_benchmark(args)
            print_ddb_scale_report(results["dynamodb_scale"], args.dynamodb_scale_items)
        if args.concurrency:
            results["concurrency"] = concurrency_benchmark(args)
            print_concurrency_report(results["concurrency"])
        if args.lambda_run:
            results["lambda"] = lambda_benchmark(args)
            print_lambda_report(results["lambda"])
        if args.stepfunctions:
            results["stepfunctions"] = sfn_benchmark(args)
            print_sfn_report(results["stepfunctions"])
        if args.cloudformation:
            results["cloudformation"] = cloudformation_benchmark(args)
            print_cloudformation_report(results["cloudformation"])
        if args.apigateway:
            results["apigateway"] = apigateway_benchmark(args)
            print_apigateway_report(results["apigateway"])
        if args.kinesis:
            results["kinesis"] = kinesis_benchmark(args)
            print_kinesis_report(results["kinesis"])
        if args.cloudwatch:
            results["cloudwatch"] = cloudwatch_benchmark(args)
            print_cloudwatch_report(results["cloudwatch"])
        write_json(args.output, results)
        log("raw results written to " + args.output)
        return 0
    except ValidationError as error:
        log("benchmark FAILED: response validation error\n{}".format(error))
        log("no results were written")
        return 1
    except BenchmarkError as error:
        log("benchmark FAILED: {}".format(error))
        log("no results were written")
        return 1
    except KeyboardInterrupt:
        log("interrupted; servers stopped and temporary state removed; no results written")
        return 130
    finally:
        ServerProcess.stop_all()


if __name__ == "__main__":
    sys.exit(main())
