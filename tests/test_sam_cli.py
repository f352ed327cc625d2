"""The real AWS SAM CLI against Roto, black-box: `sam deploy --resolve-s3` of tests/sam/app
(its managed stack `aws-sam-cli-managed-default` with the artifacts bucket, the function's
code packaged from `CodeUri` and uploaded, the packaged template deployed through a change
set), the function then answering through the implicit REST and HTTP APIs on Roto's port
and its URL on the alias `AutoPublishAlias` publishes (with a `DeploymentPreference`), a
state machine started through its `Api` event, a second `sam deploy` of changed code moving
the alias to the new version, and `sam delete` removing the stack and its artifacts.

The CLI comes from PyPI as tests/sam/requirements.txt pins it, installed on first use into
tests/sam/.venv. Without PyPI the test skips, except under CI=true where it fails."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import sys

import pytest

from conftest import tool_env
from test_cloudformation_types import http_get
from test_lambda import url_request

SAM = os.path.join(os.path.dirname(os.path.abspath(__file__)), "sam")
VENV = os.path.join(SAM, ".venv")
CLI = os.path.join(VENV, "bin", "sam")


def sam_cli():
    """The path of the installed `sam`, or why it cannot be had."""
    if not os.path.exists(CLI):
        subprocess.run([sys.executable, "-m", "venv", VENV], capture_output=True, timeout=300)
        subprocess.run([os.path.join(VENV, "bin", "pip"), "install", "-q", "-r",
                        os.path.join(SAM, "requirements.txt")], capture_output=True, timeout=900)
    if not os.path.exists(CLI):
        return None, "pip could not install tests/sam's requirements"
    return CLI, None


@pytest.fixture
def sam(server, tmp_path):
    """Runs the SAM CLI against `server` in a copy of tests/sam/app."""
    cli, why = sam_cli()
    if cli is None:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    app = tmp_path / "app"
    shutil.copytree(os.path.join(SAM, "app"), app)
    env = tool_env(server, tmp_path)
    env.update({"HOME": str(tmp_path), "SAM_CLI_TELEMETRY": "0"})

    def run(*args: str):
        proc = subprocess.run([cli, *args], cwd=app, capture_output=True, text=True, env=env, timeout=600)
        assert proc.returncode == 0, f"sam {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    return run


def test_sam_deploy_and_delete_a_serverless_app(sam, client, server, tmp_path):
    sam("deploy", "--stack-name", "hello", "--resolve-s3", "--capabilities", "CAPABILITY_IAM",
        "--no-confirm-changeset", "--no-progressbar")
    cfn = client("cloudformation")
    managed = cfn.describe_stacks(StackName="aws-sam-cli-managed-default")["Stacks"][0]
    assert managed["StackStatus"] == "CREATE_COMPLETE"
    stack = cfn.describe_stacks(StackName="hello")["Stacks"][0]
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    out = {o["OutputKey"]: o["OutputValue"] for o in stack["Outputs"]}
    assert out["HelloUrl"] == f"https://{out['RestApi']}.execute-api.us-east-1.amazonaws.com/Prod/hello/"

    status, body = http_get(server, f"/_aws/execute-api/{out['RestApi']}/Prod/hello")
    assert status == 200, body
    answer = json.loads(body)
    assert answer["path"] == "/hello"
    client("dynamodb").describe_table(TableName=answer["table"])
    status, body = http_get(server, f"/_aws/execute-api/{out['HttpApi']}/hi")
    assert (status, json.loads(body)["path"]) == (200, "/hi")
    code = cfn.get_template(StackName="hello", TemplateStage="Original")["TemplateBody"]
    assert "s3://aws-sam-cli-managed-default-samclisourcebucket-" in json.dumps(code)

    lam = client("lambda")
    assert lam.get_alias(FunctionName=out["Function"], Name="live")["FunctionVersion"] == "1"
    assert json.loads(url_request(server, out["Url"], path="/via-url")[2])["path"] == "/via-url"
    status, _, body = server.request("POST", f"/_aws/execute-api/{out['RestApi']}/Prod/start", b'{"n": 1}',
                                     {"Content-Type": "application/json"})
    assert status == 200, body
    assert client("stepfunctions").list_executions(stateMachineArn=out["Flow"])["executions"]

    source = tmp_path / "app" / "src" / "app.py"
    source.write_text(source.read_text().replace('"path":', '"version": 2, "path":'))
    sam("deploy", "--stack-name", "hello", "--resolve-s3", "--capabilities", "CAPABILITY_IAM",
        "--no-confirm-changeset", "--no-progressbar")
    assert cfn.describe_stacks(StackName="hello")["Stacks"][0]["StackStatus"] == "UPDATE_COMPLETE"
    assert lam.get_alias(FunctionName=out["Function"], Name="live")["FunctionVersion"] == "2"
    assert json.loads(url_request(server, out["Url"])[2])["version"] == 2

    sam("delete", "--stack-name", "hello", "--no-prompts")
    stacks = {s["StackName"] for s in cfn.list_stacks(StackStatusFilter=["CREATE_COMPLETE"])["StackSummaries"]}
    assert stacks == {"aws-sam-cli-managed-default"}
    assert client("apigateway").get_rest_apis()["items"] == []
