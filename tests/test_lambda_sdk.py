"""The AWS SDK inside functions under the process executor: Lambda's runtimes include it
(boto3 for Python, the AWS SDK for JavaScript v3 for Node 18 and later), so functions import
it unpackaged. The process executor finds it where the host has it (the interpreter's
site-packages; the global node_modules of the `node` it runs) and, where it has not, says on
the function's log how to provide it. (The docker executor's images include it:
test_lambda_docker.py.)"""

from __future__ import annotations

import base64
import json
import os
import shutil
import subprocess
import sys

import pytest

sys.path.insert(0, os.path.dirname(__file__))
from lambda_helpers import ROLE, zip_of  # noqa: E402
from test_lambda import lam, server, unique  # noqa: E402,F401 (lam and server are fixtures)


def invoke(lam, name, event):
    resp = lam.invoke(FunctionName=name, Payload=json.dumps(event).encode(), LogType="Tail")
    return resp, json.loads(resp["Payload"].read() or b"null"), base64.b64decode(resp["LogResult"]).decode()


def create(lam, runtime, handler, files):
    name = unique("sdk")
    lam.create_function(FunctionName=name, Runtime=runtime, Role=ROLE, Handler=handler, Timeout=30,
                        Code={"ZipFile": zip_of(files)})
    return name


def host_python_has_boto3() -> bool:
    python = shutil.which("python3")
    return bool(python) and subprocess.run([python, "-c", "import boto3"], capture_output=True).returncode == 0


@pytest.mark.skipif(not host_python_has_boto3(), reason="the host's python3 has no boto3")
def test_python_functions_import_the_hosts_boto3_and_reach_roto(server, lam):
    handler = "import boto3\ndef handler(e, c):\n    return boto3.client('sts').get_caller_identity()['Account']\n"
    name = create(lam, "python3.12", "app.handler", {"app.py": handler})
    resp, out, _ = invoke(lam, name, {})
    assert "FunctionError" not in resp, out
    assert out == "000000000000"


def test_a_python_function_without_boto3_is_told_how_to_provide_it(lam):
    # As `import boto3` fails where the interpreter has none.
    source = "raise ImportError(\"No module named 'boto3'\", name='boto3')\n"
    name = create(lam, "python3.12", "app.handler", {"app.py": source})
    resp, out, log = invoke(lam, name, {})
    assert resp["FunctionError"] == "Unhandled" and out["errorType"] == "Runtime.ImportModuleError"
    assert out["errorMessage"] == "Unable to import module 'app': No module named 'boto3'"
    assert "Roto: Lambda's Python runtime includes boto3, but this interpreter (" in log
    assert "-m pip install boto3" in log and "--lambda-executor docker" in log


@pytest.mark.skipif(shutil.which("node") is None, reason="node is not installed")
def test_node_functions_search_the_hosts_global_modules_and_are_told_how_to_provide_the_sdk(lam):
    node = os.path.realpath(shutil.which("node"))
    global_modules = os.path.join(os.path.dirname(os.path.dirname(node)), "lib", "node_modules")
    paths = create(lam, "nodejs20.x", "index.handler",
                   {"index.js": "exports.handler = async () => process.env.NODE_PATH.split(':');\n"})
    _, out, _ = invoke(lam, paths, {})
    assert (global_modules in out) == os.path.isdir(global_modules)
    missing = create(lam, "nodejs20.x", "index.handler",
                     {"index.js": "require('@aws-sdk/client-roto-absent');\nexports.handler = async () => 1;\n"})
    resp, out, log = invoke(lam, missing, {})
    assert resp["FunctionError"] == "Unhandled" and out["errorType"] == "Runtime.ImportModuleError"
    assert "Roto: Lambda's Node.js runtime includes the AWS SDK for JavaScript v3" in log
    assert "npm install -g @aws-sdk/client-s3" in log
