"""Shared fixtures, as thin names over the roto-pytest plugin's `roto` fixture: `server` (a
fresh ephemeral server per test), `client` (its boto3 client factory) and `aws` (the AWS
CLI pointed at it)."""

from __future__ import annotations

import importlib.util
import os
import subprocess
import sys

import pytest

# awscrt (installed for SigV4a) would make botocore sign SigV4 with its CRT signers, whose clock
# the signature tests cannot move; the suite keeps botocore's own signers and uses the CRT's
# SigV4a signer directly (test_signatures_v4a.py).
os.environ.setdefault("BOTO_DISABLE_CRT", "true")

HERE = os.path.dirname(os.path.abspath(__file__))
sys.path.insert(0, HERE)

# tests/requirements.txt installs the plugin, whose pytest11 entry point loads it; a venv made
# before that still runs the suite from the source tree.
if importlib.util.find_spec("roto_pytest") is None:
    sys.path.insert(0, os.path.join(os.path.dirname(HERE), "python", "roto-pytest"))
    pytest_plugins = ["roto_pytest.plugin"]


@pytest.fixture
def server(roto):
    """A fresh, empty, in-memory roto-server for one test."""
    return roto


@pytest.fixture
def client(server):
    """A factory of boto3 clients for `server`: client("s3"), client("sqs", region_name=...)."""
    return server.client


def tool_env(server, tmp_path):
    """The environment a command-line tool (the AWS CLI, the CDK) needs to reach `server`
    with test credentials, its configuration files kept under `tmp_path`."""
    env = dict(os.environ)
    env.update({
        "AWS_ACCESS_KEY_ID": "test",
        "AWS_SECRET_ACCESS_KEY": "test",
        "AWS_DEFAULT_REGION": "us-east-1",
        "AWS_REGION": "us-east-1",
        "AWS_ENDPOINT_URL": server.endpoint,
        "AWS_CONFIG_FILE": str(tmp_path / "aws-config"),
        "AWS_SHARED_CREDENTIALS_FILE": str(tmp_path / "aws-credentials"),
        "AWS_PAGER": "",
    })
    return env


@pytest.fixture
def aws(server, tmp_path):
    """Runs the AWS CLI against `server`; returns the CompletedProcess."""

    def run(*args: str, check: bool = True):
        env = tool_env(server, tmp_path)
        cli = os.path.join(os.path.dirname(sys.executable), "aws")
        proc = subprocess.run([cli, *args, "--output", "json"], capture_output=True, text=True, env=env, timeout=60)
        if check and proc.returncode != 0:
            raise AssertionError(f"aws {' '.join(args)} failed: {proc.stderr}")
        return proc

    return run
