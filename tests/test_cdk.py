"""The real AWS CDK v2 against Roto, black-box: `cdk bootstrap` (the CDKToolkit stack: the
assets bucket and its policy, the ECR repository, the publishing, lookup, deploy and
execution roles with their policies, the version parameter), `cdk deploy` of tests/cdk/app.js
(a function whose code is a file asset uploaded to the bootstrap bucket, a table, a queue
and the grants between them) and `cdk destroy`, with AWS_ENDPOINT_URL on 127.0.0.1.

The CLI and aws-cdk-lib come from the npm registry as tests/cdk/package-lock.json pins them
(scripts/test.sh runs `npm ci` there; this test runs it on first use). Without node and npm,
or without the registry, the test skips, except under CI=true where it fails."""

from __future__ import annotations

import os
import shutil
import subprocess
import time

import pytest

from conftest import tool_env

CDK = os.path.join(os.path.dirname(os.path.abspath(__file__)), "cdk")
CLI = os.path.join(CDK, "node_modules", ".bin", "cdk")


def cdk_cli():
    """The path of the installed `cdk`, or why it cannot be had."""
    if shutil.which("node") is None or shutil.which("npm") is None:
        return None, "node and npm are not installed"
    if not os.path.exists(CLI):
        subprocess.run(["npm", "ci", "--no-audit", "--no-fund"], cwd=CDK, capture_output=True, timeout=600)
    if not os.path.exists(CLI):
        return None, "npm could not install tests/cdk's packages"
    return CLI, None


@pytest.fixture
def cdk(server, tmp_path):
    """Runs the CDK CLI against `server` in `tmp_path`; returns its CompletedProcess."""
    cli, why = cdk_cli()
    if cli is None:
        if os.environ.get("CI") == "true":
            pytest.fail(why)
        pytest.skip(why)
    env = tool_env(server, tmp_path)
    env.update({
        "HOME": str(tmp_path),
        "CDK_DISABLE_VERSION_CHECK": "1",
        "CDK_DISABLE_CLI_TELEMETRY": "true",
        "ROTO_CDK_STACK": "RotoCdkApp",
    })

    def run(*args: str):
        proc = subprocess.run([cli, *args, "--no-notices"], cwd=tmp_path, capture_output=True, text=True, env=env,
                              timeout=600)
        assert proc.returncode == 0, f"cdk {' '.join(args)} failed:\n{proc.stdout}\n{proc.stderr}"
        return proc

    return run


def stack_outputs(cfn, name):
    stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
    return stack, {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


def test_bootstrap_deploy_and_destroy_a_serverless_app(cdk, client, tmp_path):
    cfn, account = client("cloudformation"), client("sts").get_caller_identity()["Account"]

    cdk("bootstrap", f"aws://{account}/us-east-1")
    toolkit, toolkit_outputs = stack_outputs(cfn, "CDKToolkit")
    assert toolkit["StackStatus"] == "CREATE_COMPLETE"
    bucket = toolkit_outputs["BucketName"]
    assert bucket == f"cdk-hnb659fds-assets-{account}-us-east-1"
    version = client("ssm").get_parameter(Name="/cdk-bootstrap/hnb659fds/version")["Parameter"]["Value"]
    assert toolkit_outputs["BootstrapVersion"] == version
    roles = {r["RoleName"] for r in client("iam").list_roles()["Roles"]}
    for role in ("deploy", "cfn-exec", "file-publishing", "image-publishing", "lookup"):
        assert f"cdk-hnb659fds-{role}-role-{account}-us-east-1" in roles

    # Synthesised once; deploy and destroy read the cloud assembly.
    out = str(tmp_path / "cdk.out")
    cdk("synth", "--app", f"node {os.path.join(CDK, 'app.js')}", "--quiet", "--output", out)
    started = time.monotonic()
    cdk("deploy", "--app", out, "--require-approval", "never")
    deploy_seconds = time.monotonic() - started
    stack, outputs = stack_outputs(cfn, "RotoCdkApp")
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert [o["Key"] for o in client("s3").list_objects_v2(Bucket=bucket)["Contents"] if o["Key"].endswith(".zip")]

    answer = client("lambda").invoke(FunctionName=outputs["FunctionName"])
    assert "FunctionError" not in answer
    assert answer["Payload"].read().decode() == (
        f'{{"table":"{outputs["TableName"]}","queue":"{outputs["QueueUrl"]}"}}')
    client("dynamodb").put_item(TableName=outputs["TableName"], Item={"id": {"S": "1"}})
    client("sqs").send_message(QueueUrl=outputs["QueueUrl"], MessageBody="job")
    role = client("lambda").get_function(FunctionName=outputs["FunctionName"])["Configuration"]["Role"].split("/")[-1]
    policies = client("iam").list_role_policies(RoleName=role)["PolicyNames"]
    assert len(policies) == 1
    document = client("iam").get_role_policy(RoleName=role, PolicyName=policies[0])["PolicyDocument"]
    actions = {a for s in document["Statement"] for a in ([s["Action"]] if isinstance(s["Action"], str) else s["Action"])}
    assert {"dynamodb:PutItem", "sqs:SendMessage"} <= actions

    cdk("destroy", "--app", out, "--force")
    gone = cfn.describe_stacks(StackName=stack["StackId"])["Stacks"][0]
    assert gone["StackStatus"] == "DELETE_COMPLETE"
    assert outputs["TableName"] not in client("dynamodb").list_tables()["TableNames"]
    assert outputs["FunctionName"] not in [f["FunctionName"] for f in client("lambda").list_functions()["Functions"]]
    print(f"cdk deploy: {deploy_seconds:.1f} s")
