#!/usr/bin/env python3
"""Instructions per request, counted by valgrind's callgrind: a cost figure that holds on a
noisy shared machine, where latencies do not.

Why this exists
---------------
scripts/benchmark.py measures latency, which moves with the machine's load; comparing two
builds on a busy 2-core machine needs a figure that does not. Callgrind counts the
instructions the server executes (all threads, user space). For each operation the server is
run twice under callgrind, with the same warm-up and then `short` or `long` requests of that
operation, each stopped with SIGTERM so callgrind writes its totals; the difference of the
two totals divided by `long - short` is the cost of one request, with start-up, warm-up and
shutdown cancelled out.

The requests are benchmark.py's own (same bodies, same validation), over one keep-alive
connection. Usage:

    python3 scripts/instructions.py --binary target/release/roto-server \
        --binary /path/to/older/roto-server [--mode ephemeral|persistent] [--ops s3_put,...]

Prints a table of instructions per request per binary, and the ratio of each binary to the
first. Needs valgrind.
"""

import argparse
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("benchmark", os.path.join(HERE, "benchmark.py"))
benchmark = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(benchmark)

TOTALS_RE = re.compile(rb"^(?:summary|totals):\s+(\d+)", re.MULTILINE)


def wait_ready(port, deadline_s=120):
    """Polls STS until the server (slow under valgrind) answers."""
    deadline = time.monotonic() + deadline_s
    while time.monotonic() < deadline:
        try:
            if benchmark.probe_sts("127.0.0.1", port, 5)[0] == 200:
                return
        except OSError:
            pass
        time.sleep(0.2)
    raise SystemExit("server on port {} not ready under valgrind".format(port))


def prepared_call(port, operation, total):
    """A client of the server on `port` with what `operation` needs in place (benchmark.py's
    own workload), and the call that sends one request of it; `total` calls may follow."""
    client = benchmark.Client("127.0.0.1", port, timeout=60)
    workload = benchmark.AwsWorkload(client, "roto", benchmark.DEFAULT_ACCOUNT, total)
    workload.prepare()
    workload.s3_put()
    if operation in benchmark.EXTRA_OPERATIONS:
        getattr(workload, "prepare_" + operation)()
    return client, getattr(workload, operation)


def count(binary, mode, operation, warmup, requests):
    """Total instructions of one server lifetime: start, warm-up, `requests` calls, stop."""
    with tempfile.TemporaryDirectory(prefix="roto-instr-") as tmp:
        port = benchmark.pick_free_port("127.0.0.1")
        out = os.path.join(tmp, "callgrind.out")
        store = ["--ephemeral"] if mode == "ephemeral" else ["--data-dir", os.path.join(tmp, "d")]
        argv = ["valgrind", "--tool=callgrind", "--callgrind-out-file=" + out,
                binary, "--port", str(port)] + store
        server = subprocess.Popen(argv, stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        try:
            wait_ready(port)
            client, call = prepared_call(port, operation, warmup + requests)
            for _ in range(warmup + requests):
                call()
            client.close()
        finally:
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=120)
        with open(out, "rb") as f:
            match = TOTALS_RE.search(f.read())
        if not match:
            raise SystemExit("no totals in callgrind output of " + binary)
        return int(match.group(1))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", action="append", required=True,
                        help="a roto-server binary; give it twice or more to compare")
    parser.add_argument("--mode", choices=("ephemeral", "persistent"), default="ephemeral")
    parser.add_argument("--ops", default=",".join(benchmark.AWS_OPERATIONS))
    parser.add_argument("--warmup", type=int, default=50)
    parser.add_argument("--short", type=int, default=100)
    parser.add_argument("--long", type=int, default=600)
    args = parser.parse_args()
    ops = [op for op in args.ops.split(",") if op]
    results = {}
    for op in ops:
        for binary in args.binary:
            low = count(binary, args.mode, op, args.warmup, args.short)
            high = count(binary, args.mode, op, args.warmup, args.long)
            results[(op, binary)] = (high - low) / (args.long - args.short)
            print("{:<26} {:>12,.0f}  {}".format(op, results[(op, binary)], binary),
                  file=sys.stderr)
    first = args.binary[0]
    print("| operation | " + " | ".join(os.path.basename(os.path.dirname(b)) + "/"
                                        + os.path.basename(b) for b in args.binary)
          + " | ratio to first |")
    print("|---" * (len(args.binary) + 2) + "|")
    for op in ops:
        cells = ["{:,.0f}".format(results[(op, b)]) for b in args.binary]
        ratios = ["{:.2f}".format(results[(op, b)] / results[(op, first)])
                  for b in args.binary[1:]]
        print("| {} | {} | {} |".format(op, " | ".join(cells), " ".join(ratios) or "-"))


if __name__ == "__main__":
    main()
