"""Terraform with the real AWS provider against Roto, black-box: `terraform apply` of
tests/terraform/main.tf (S3, DynamoDB, SQS, SNS, SSM, Secrets Manager, KMS, Logs, IAM,
Lambda with an SQS event source mapping, EventBridge), the resources then used through
boto3, `terraform plan` clean afterwards, and `terraform destroy` leaving nothing.

The provider cannot be fetched from the Terraform registry here: the test uses the one the
machine has installed as a filesystem mirror (`/opt/tf-plugins`, or `ROTO_TF_PLUGINS`),
and skips without it or without `terraform`."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import zipfile

import pytest

from conftest import tool_env

CONFIG = os.path.join(os.path.dirname(os.path.abspath(__file__)), "terraform", "main.tf")
PLUGINS = os.environ.get("ROTO_TF_PLUGINS", "/opt/tf-plugins")


@pytest.fixture
def terraform(server, tmp_path):
    """Runs terraform in a copy of tests/terraform against `server`."""
    if shutil.which("terraform") is None:
        pytest.skip("terraform is not installed")
    if not os.path.isdir(os.path.join(PLUGINS, "registry.terraform.io", "hashicorp", "aws")):
        pytest.skip(f"no Terraform AWS provider in {PLUGINS}")
    work = tmp_path / "tf"
    work.mkdir()
    shutil.copy(CONFIG, work / "main.tf")
    with zipfile.ZipFile(tmp_path / "fn.zip", "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return {'ok': True}\n")
    rc = tmp_path / "terraform.rc"
    rc.write_text('provider_installation {\n  filesystem_mirror {\n'
                  f'    path = "{PLUGINS}"\n    include = ["registry.terraform.io/hashicorp/aws"]\n  }}\n}}\n')
    env = tool_env(server, tmp_path)
    env.update({"TF_CLI_CONFIG_FILE": str(rc), "TF_VAR_lambda_zip": str(tmp_path / "fn.zip"),
                "TF_IN_AUTOMATION": "1", "CHECKPOINT_DISABLE": "1"})

    def run(*args: str):
        flags = [] if args[0] == "output" else ["-input=false"]
        return subprocess.run(["terraform", *args, *flags, "-no-color"], cwd=work, env=env,
                              capture_output=True, text=True, timeout=540)

    return run


def test_terraform_applies_plans_clean_and_destroys(terraform, client):
    init = terraform("init")
    assert init.returncode == 0, init.stdout + init.stderr
    apply = terraform("apply", "-auto-approve")
    assert apply.returncode == 0, apply.stdout + apply.stderr
    assert "Resources: 17 added, 0 changed, 0 destroyed." in apply.stdout

    out = json.loads(terraform("output", "-json").stdout)
    answer = client("lambda").invoke(FunctionName=out["function_arn"]["value"])
    assert json.loads(answer["Payload"].read()) == {"ok": True}
    assert client("s3").get_object(Bucket="tf-assets", Key="readme.txt")["Body"].read() == b"hello"
    assert client("ssm").get_parameter(Name="/tf/stage")["Parameter"]["Value"] == "test"
    assert client("secretsmanager").get_secret_value(SecretId="tf-token")["SecretString"] == "s3cret"
    assert client("dynamodb").describe_table(TableName="tf-items")["Table"]["TableStatus"] == "ACTIVE"
    mappings = client("lambda").list_event_source_mappings(FunctionName="tf-worker")["EventSourceMappings"]
    assert [m["BatchSize"] for m in mappings] == [5]

    plan = terraform("plan", "-detailed-exitcode")
    assert plan.returncode == 0, plan.stdout + plan.stderr
    assert "No changes." in plan.stdout

    destroy = terraform("destroy", "-auto-approve")
    assert destroy.returncode == 0, destroy.stdout + destroy.stderr
    assert "Resources: 17 destroyed." in destroy.stdout
    assert client("s3").list_buckets()["Buckets"] == []
    assert client("lambda").list_functions()["Functions"] == []
    assert client("sqs").list_queues().get("QueueUrls", []) == []
