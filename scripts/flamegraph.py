#!/usr/bin/env python3
"""Flame graphs of the server's hot operations, sampled by `perf` while one client repeats
one operation: where a request's time goes, function by function, with callers.

Why this exists
---------------
scripts/instructions.py gives one number per request (instructions, which hold on a noisy
machine); this gives the shape behind the number. Each operation is run on its own fresh
server: warm-up, then `perf record --call-graph dwarf` attached to the server while the
client sends `--requests` calls of benchmark.py's own requests. The samples are folded into
`<op>.folded` (one line per distinct stack, `frame;frame;... count`, the format every flame
graph tool reads) and drawn into `<op>.svg` (widths are the share of samples; hover a frame
for its name and share).

Build the binary with symbols: `cargo build --profile profiling -p roto-server` (the release
build, not stripped; its unwind tables are what `--call-graph dwarf` walks). Usage:

    python3 scripts/flamegraph.py --binary target/profiling/roto-server \
        --out flamegraphs [--ops s3_get,ddb_put] [--mode ephemeral|persistent]

Needs `perf` and permission to attach to one's own processes (perf_event_paranoid <= 2).
"""

import argparse
import collections
import html
import importlib.util
import os
import re
import signal
import subprocess
import sys
import tempfile
import time

HERE = os.path.dirname(os.path.abspath(__file__))
SPEC = importlib.util.spec_from_file_location("instructions",
                                              os.path.join(HERE, "instructions.py"))
instructions = importlib.util.module_from_spec(SPEC)
SPEC.loader.exec_module(instructions)
benchmark = instructions.benchmark

# A frame line of `perf script`: address, symbol (+offset), (object).
FRAME_RE = re.compile(r"^\s*[0-9a-f]+\s+(.*?)(?:\+0x[0-9a-f]+)?\s+\((.*)\)\s*$")
HASH_RE = re.compile(r"::h[0-9a-f]{16}$")
WIDTH, ROW, MIN_WIDTH = 1200, 16, 0.4


def record(binary, mode, operation, warmup, requests, data):
    """Runs one server, warms it up, and samples it with perf while `requests` calls run."""
    with tempfile.TemporaryDirectory(prefix="roto-flame-") as tmp:
        port = benchmark.pick_free_port("127.0.0.1")
        store = ["--ephemeral"] if mode == "ephemeral" else ["--data-dir", os.path.join(tmp, "d")]
        server = subprocess.Popen([binary, "--port", str(port)] + store,
                                  stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)
        perf = None
        try:
            instructions.wait_ready(port)
            client, call = instructions.prepared_call(port, operation, warmup + requests)
            for _ in range(warmup):
                call()
            perf = subprocess.Popen(["perf", "record", "-q", "-F", "4999", "--call-graph",
                                     "dwarf,32768", "-p", str(server.pid), "-o", data],
                                    stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
            time.sleep(0.5)
            for _ in range(requests):
                call()
            client.close()
        finally:
            if perf is not None:
                perf.send_signal(signal.SIGINT)
                _, err = perf.communicate(timeout=120)
                if perf.returncode not in (0, -signal.SIGINT):
                    raise SystemExit("perf record failed: " + err.decode(errors="replace"))
            server.send_signal(signal.SIGTERM)
            server.wait(timeout=30)


def fold(data):
    """`perf script` output of `data` as a Counter of root-first stacks."""
    script = subprocess.run(["perf", "script", "-i", data, "--no-inline"],
                            capture_output=True, check=True).stdout.decode(errors="replace")
    stacks = collections.Counter()
    for sample in script.split("\n\n"):
        lines = sample.strip("\n").split("\n")
        if len(lines) < 2:
            continue
        thread = lines[0].split()[0]
        frames = []
        for line in lines[1:]:
            match = FRAME_RE.match(line)
            if match:
                name = match.group(1)
                if name == "[unknown]":
                    name = "[{}]".format(os.path.basename(match.group(2)).strip("[]"))
                frames.append(HASH_RE.sub("", name).replace(";", ":"))
        if frames:
            stacks[";".join([thread] + frames[::-1])] += 1
    return stacks


def tree(stacks):
    """The folded stacks as nested {name: [count, children]}."""
    root = [0, {}]
    for stack, n in stacks.items():
        node = root
        node[0] += n
        for frame in stack.split(";"):
            node = node[1].setdefault(frame, [0, {}])
            node[0] += n
    return root


def color(name):
    """A warm colour fixed by the frame's name, so a function keeps its colour across graphs."""
    h = sum(name.encode()) % 97
    return "rgb({},{},{})".format(205 + h % 50, 80 + (h * 7) % 120, 40 + (h * 3) % 50)


def svg(stacks, title):
    """A flame graph of `stacks` (root at the bottom) as SVG text."""
    root = tree(stacks)
    total = root[0] or 1
    rects = []

    def depth_of(node):
        return 1 + max((depth_of(c) for c in node[1].values()), default=0)

    depth = depth_of(root)
    height = (depth + 2) * ROW

    def draw(node, x, level):
        for name, child in sorted(node[1].items()):
            w = child[0] / total * WIDTH
            if w >= MIN_WIDTH:
                y = height - (level + 1) * ROW
                label = "{} ({:.1f}%)".format(name, 100.0 * child[0] / total)
                text = html.escape(name[: int(w / 7)]) if w > 21 else ""
                rects.append(
                    '<g><title>{}</title><rect x="{:.1f}" y="{}" width="{:.1f}" height="{}" '
                    'fill="{}"/><text x="{:.1f}" y="{}">{}</text></g>'.format(
                        html.escape(label), x, y, w, ROW - 1, color(name), x + 3, y + 11, text))
                draw(child, x, level + 1)
            x += w

    draw(root, 0.0, 0)
    return ('<svg xmlns="http://www.w3.org/2000/svg" width="{w}" height="{h}" '
            'font-family="monospace" font-size="11">'
            '<text x="4" y="12">{t} ({n} samples)</text>{r}</svg>\n').format(
                w=WIDTH, h=height, t=html.escape(title), n=total, r="".join(rects))


def main():
    parser = argparse.ArgumentParser(description=__doc__.split("\n\n")[0])
    parser.add_argument("--binary", required=True, help="a roto-server built with symbols")
    parser.add_argument("--out", default="flamegraphs", help="directory for .folded and .svg")
    parser.add_argument("--mode", choices=("ephemeral", "persistent"), default="ephemeral")
    parser.add_argument("--ops", default=",".join(benchmark.AWS_OPERATIONS))
    parser.add_argument("--warmup", type=int, default=200)
    parser.add_argument("--requests", type=int, default=5000)
    args = parser.parse_args()
    os.makedirs(args.out, exist_ok=True)
    for op in [op for op in args.ops.split(",") if op]:
        data = os.path.join(args.out, op + ".perf.data")
        record(args.binary, args.mode, op, args.warmup, args.requests, data)
        stacks = fold(data)
        os.remove(data)
        base = os.path.join(args.out, op)
        with open(base + ".folded", "w") as f:
            for stack, n in sorted(stacks.items()):
                f.write("{} {}\n".format(stack, n))
        with open(base + ".svg", "w") as f:
            f.write(svg(stacks, "{} ({}, {} requests)".format(op, args.mode, args.requests)))
        print("{:<24} {:>7} samples  {}.svg".format(op, sum(stacks.values()), base),
              file=sys.stderr)


if __name__ == "__main__":
    main()
