#!/usr/bin/env python3
"""Round-trips one large S3 object through a fresh roto-server and reports its peak RSS.

Why this exists
---------------
Roto promises that object bodies are streamed to and from blob files, so that memory stays
flat whatever the object size: a 5 GiB upload and download must keep the server's resident
set under 64 MiB (DESIGN.md, issue 4).  That is a property of a real process under a real
load, too slow and too large for the test suite, so it is checked here, on demand:

    python3 scripts/s3_large_object.py                      # 5 GiB, release binary
    python3 scripts/s3_large_object.py --size-mib 512 --binary target/debug/roto-server

The script starts an ephemeral server on a free port, PUTs the object with a fixed
Content-Length from a generated stream (never held in memory here either), GETs it back,
checks the bytes by MD5 against the ETag, samples the server's VmRSS every 20 ms through
both transfers, and exits 1 if the peak reaches --limit-mib.  Standard library only;
Linux only (it reads /proc).
"""

import argparse
import hashlib
import http.client
import os
import socket
import subprocess
import sys
import threading
import time

REPO_ROOT = os.path.dirname(os.path.dirname(os.path.abspath(__file__)))
AUTH = ("AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, "
        "SignedHeaders=host, Signature=" + "0" * 64)
CHUNK = 1024 * 1024


def rss_kib(pid):
    """The VmRSS of `pid` in KiB, or None once it has gone."""
    try:
        with open("/proc/{}/status".format(pid)) as f:
            for line in f:
                if line.startswith("VmRSS:"):
                    return int(line.split()[1])
    except OSError:
        return None
    return None


class PeakSampler(threading.Thread):
    """Samples a process's RSS until stopped; `peak` is the largest sample in KiB."""

    def __init__(self, pid):
        super().__init__(daemon=True)
        self.pid, self.peak, self.running = pid, 0, True

    def run(self):
        while self.running:
            self.peak = max(self.peak, rss_kib(self.pid) or 0)
            time.sleep(0.02)

    def stop(self):
        self.running = False
        self.join()
        return self.peak


def free_port():
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return s.getsockname()[1]


def start_server(binary, port):
    proc = subprocess.Popen([binary, "--ephemeral", "--port", str(port)],
                            stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
    deadline = time.monotonic() + 30
    while time.monotonic() < deadline:
        try:
            conn = http.client.HTTPConnection("127.0.0.1", port, timeout=2)
            conn.request("GET", "/_roto/health")
            if conn.getresponse().status == 200:
                return proc
        except OSError:
            time.sleep(0.05)
    proc.kill()
    raise SystemExit("server did not become ready")


def body_stream(size, md5):
    """`size` bytes of a fixed pattern, a chunk at a time, hashed as they go."""
    pattern = bytes(range(256)) * (CHUNK // 256)
    sent = 0
    while sent < size:
        piece = pattern[:min(CHUNK, size - sent)]
        md5.update(piece)
        sent += len(piece)
        yield piece


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", default=os.path.join(REPO_ROOT, "target/release/roto-server"))
    parser.add_argument("--size-mib", type=int, default=5 * 1024, help="object size (default 5120)")
    parser.add_argument("--limit-mib", type=int, default=64, help="peak RSS limit (default 64)")
    args = parser.parse_args()
    size = args.size_mib * CHUNK
    port = free_port()
    proc = start_server(args.binary, port)
    try:
        idle = rss_kib(proc.pid)
        conn = http.client.HTTPConnection("127.0.0.1", port, timeout=600)
        conn.request("PUT", "/big-bucket", headers={"Authorization": AUTH})
        conn.getresponse().read()
        sampler = PeakSampler(proc.pid)
        sampler.start()
        md5 = hashlib.md5()
        started = time.monotonic()
        conn.request("PUT", "/big-bucket/big.bin", body=body_stream(size, md5),
                     headers={"Authorization": AUTH, "Content-Length": str(size),
                              "Content-Type": "application/octet-stream"})
        response = conn.getresponse()
        response.read()
        put_s = time.monotonic() - started
        put_peak = sampler.stop()
        if response.status != 200 or response.getheader("ETag") != '"{}"'.format(md5.hexdigest()):
            raise SystemExit("PUT failed: {} {}".format(response.status, response.getheader("ETag")))
        sampler = PeakSampler(proc.pid)
        sampler.start()
        started = time.monotonic()
        conn.request("GET", "/big-bucket/big.bin", headers={"Authorization": AUTH})
        response = conn.getresponse()
        back, received = hashlib.md5(), 0
        while True:
            piece = response.read(CHUNK)
            if not piece:
                break
            back.update(piece)
            received += len(piece)
        get_s = time.monotonic() - started
        get_peak = sampler.stop()
        if received != size or back.hexdigest() != md5.hexdigest():
            raise SystemExit("GET returned {} bytes with MD5 {}".format(received, back.hexdigest()))
    finally:
        proc.terminate()
        proc.wait(timeout=30)
    mib = lambda kib: kib / 1024.0
    print("object {} MiB: PUT {:.1f} s ({:.0f} MiB/s), GET {:.1f} s ({:.0f} MiB/s)".format(
        args.size_mib, put_s, args.size_mib / put_s, get_s, args.size_mib / get_s))
    print("server RSS: idle {:.1f} MiB, peak during PUT {:.1f} MiB, peak during GET {:.1f} MiB "
          "(limit {} MiB)".format(mib(idle or 0), mib(put_peak), mib(get_peak), args.limit_mib))
    peak = max(put_peak, get_peak)
    return 0 if mib(peak) < args.limit_mib else 1


if __name__ == "__main__":
    sys.exit(main())
