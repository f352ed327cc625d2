#!/usr/bin/env bash
# Runs Roto's whole test suite on a fresh machine: builds the release binary, runs the Rust
# unit tests, creates the Python virtual environment with boto3 and the AWS CLI, and runs
# the black-box tests against the real binary. Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -p roto-server --release --locked
cargo test --workspace --locked

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt

ROTO_BINARY="$PWD/target/release/roto-server" .venv/bin/python -m pytest tests "$@"
