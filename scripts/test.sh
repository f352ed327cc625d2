#!/usr/bin/env bash
# Runs Roto's whole test suite on a fresh machine: builds the release binary, runs the Rust
# unit tests and the fuzzer, runs the JavaScript test kit's tests (js/roto-testing) and the web
# console's in headless Chromium (tests/console), creates the Python virtual environment with
# boto3 and the AWS CLI, starts a Docker engine for the docker executor's tests where none
# runs (scripts/docker-engine.sh), and runs the black-box tests against the real binary.
# Extra arguments go to pytest.
set -euo pipefail
cd "$(dirname "$0")/.."

cargo build -p roto-server --release --locked
cargo test --workspace --locked
# Fuzz every parser: 10,000 executions per target over crates/roto-fuzz/corpus, unoptimised
# (the crates are already built for the tests); 35 s on two idle cores, under 3 minutes busy.
cargo run -p roto-fuzz --locked -- --execs 10000

# The JavaScript test kit against the release binary, its two devDependencies (the AWS SDK's
# S3 and SQS clients) installed from the npm registry as package-lock.json pins them; about
# 10 s. Then the web console in headless Chromium (tests/console): Debian's chromium
# (scripts/chromium.sh installs it) driven by playwright-core from the npm registry; about
# 10 s. Without Node both are skipped, and without Chromium the console's, except in CI.
# tests/cdk's packages (the AWS CDK CLI and aws-cdk-lib, about 220 MB) are installed here
# for tests/test_cdk.py, which the black-box run below includes. tests/js-sdk drives the
# server with the AWS SDK for JavaScript v3 where it sends what boto3 does not (default
# checksums, aws-chunked trailers, lib-storage, DocumentClient, presigned URLs with fetch);
# about 15 s.
if command -v node >/dev/null && command -v npm >/dev/null; then
  (cd tests/cdk && npm ci --no-audit --no-fund)
  (cd js/roto-testing && npm ci --no-audit --no-fund &&
    ROTO_BINARY="$PWD/../../target/release/roto-server" node --test test/*.test.mjs)
  (cd tests/js-sdk && npm ci --no-audit --no-fund &&
    ROTO_BINARY="$PWD/../../target/release/roto-server" node --test sdk.test.mjs)
  chromium_path="$(scripts/chromium.sh)"
  (cd tests/console && npm ci --no-audit --no-fund &&
    ROTO_CHROMIUM="$chromium_path" ROTO_BINARY="$PWD/../../target/release/roto-server" \
      node --test console.test.mjs)
elif [ "${CI:-}" = true ]; then
  echo "node and npm are needed for js/roto-testing's tests" >&2
  exit 1
else
  echo "skipping js/roto-testing's tests: node or npm is not installed"
fi

if [ ! -x .venv/bin/python ]; then
  python3 -m venv .venv
fi
.venv/bin/python -m pip install --quiet --disable-pip-version-check -r tests/requirements.txt

# The SAM CLI for tests/test_sam_cli.py, in a virtual environment of its own (its pins are
# not boto3's), installed here so that no test's setup waits on the package index: about 4
# minutes on a fresh machine. Where PyPI cannot be reached the test skips, except in CI.
if [ ! -x tests/sam/.venv/bin/sam ]; then
  { python3 -m venv tests/sam/.venv &&
    tests/sam/.venv/bin/python -m pip install --quiet --disable-pip-version-check \
      -r tests/sam/requirements.txt; } || [ "${CI:-}" != true ]
fi

# The docker executor's tests run against a real engine: an engine that answers is used as
# it is; otherwise scripts/docker-engine.sh starts a private one (installing Debian's
# docker.io where it can), with its state in a temporary directory removed on exit, and
# builds the test images. Where no engine can be had those tests skip, except in CI.
engine_env="$(scripts/docker-engine.sh start)"
eval "$engine_env"
trap 'scripts/docker-engine.sh stop' EXIT

ROTO_BINARY="$PWD/target/release/roto-server" .venv/bin/python -m pytest tests "$@"
