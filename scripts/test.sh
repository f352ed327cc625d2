#!/usr/bin/env bash
# Runs Roto's whole test suite on a fresh machine: builds the release binary, runs the Rust
# unit tests and the fuzzer, creates the Python virtual environment with boto3 and the AWS
# CLI, and runs the black-box tests against the real binary. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -p roto-server --release --locked
cargo test --workspace --locked
# Fuzz every parser: 10,000 executions per target over crates/roto-fuzz/corpus, unoptimised
# (the crates are already built for the tests); 35 s on two idle cores, under 3 minutes busy.
cargo run -p roto-fuzz --locked -- --execs 10000

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt

ROTO_BINARY="$PWD/target/release/roto-server" .venv/bin/python -m pytest tests "$@"
