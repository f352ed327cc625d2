"""Secrets Manager through boto3 and the AWS CLI: values encrypted through KMS, version
stages, deletion and recovery, listing, policies, passwords."""

from __future__ import annotations

import io
import json
import re
import string
import time
import zipfile

import pytest
from botocore.exceptions import ClientError


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def sm(client):
    return client("secretsmanager")


def stages(sm, secret):
    return sm.describe_secret(SecretId=secret)["VersionIdsToStages"]


def test_create_and_get_by_name_full_arn_and_partial_arn(sm):
    out = sm.create_secret(Name="prod/db", SecretString='{"password":"p"}', Description="db")
    assert re.fullmatch(r"arn:aws:secretsmanager:us-east-1:000000000000:secret:prod/db-[A-Za-z0-9]{6}", out["ARN"])
    for ref in ("prod/db", out["ARN"], out["ARN"][:-7]):
        got = sm.get_secret_value(SecretId=ref)
        assert got["SecretString"] == '{"password":"p"}'
        assert got["VersionId"] == out["VersionId"] and got["VersionStages"] == ["AWSCURRENT"]
        assert got["ARN"] == out["ARN"] and got["Name"] == "prod/db"
    described = sm.describe_secret(SecretId="prod/db")
    assert described["Description"] == "db" and "KmsKeyId" not in described
    assert described["VersionIdsToStages"] == {out["VersionId"]: ["AWSCURRENT"]}


def test_binary_secrets_round_trip_and_both_values_are_refused(sm):
    sm.create_secret(Name="bin", SecretBinary=b"\x00\x01\xff")
    assert sm.get_secret_value(SecretId="bin")["SecretBinary"] == b"\x00\x01\xff"
    with pytest.raises(ClientError) as e:
        sm.create_secret(Name="both", SecretString="s", SecretBinary=b"b")
    assert error(e)[0] == "InvalidParameterException"


def test_missing_secret_and_existing_name_errors(sm):
    with pytest.raises(ClientError) as e:
        sm.get_secret_value(SecretId="nope")
    assert error(e) == ("ResourceNotFoundException", "Secrets Manager can't find the specified secret.")
    sm.create_secret(Name="dup", SecretString="a")
    with pytest.raises(ClientError) as e:
        sm.create_secret(Name="dup", SecretString="b")
    assert error(e) == ("ResourceExistsException", "The operation failed because the secret dup already exists.")
    with pytest.raises(ClientError) as e:
        sm.create_secret(Name="bad name!")
    assert error(e)[0] == "InvalidParameterException"


def test_client_request_token_makes_create_and_put_idempotent(sm):
    token = "a" * 32
    first = sm.create_secret(Name="idem", SecretString="v", ClientRequestToken=token)
    again = sm.create_secret(Name="idem", SecretString="v", ClientRequestToken=token)
    assert again["VersionId"] == first["VersionId"] == token
    put_token = "b" * 32
    sm.put_secret_value(SecretId="idem", SecretString="w", ClientRequestToken=put_token)
    sm.put_secret_value(SecretId="idem", SecretString="w", ClientRequestToken=put_token)
    assert len(sm.list_secret_version_ids(SecretId="idem")["Versions"]) == 2
    with pytest.raises(ClientError) as e:
        sm.put_secret_value(SecretId="idem", SecretString="different", ClientRequestToken=put_token)
    assert error(e)[0] == "ResourceExistsException"


def test_put_secret_value_moves_current_to_previous_and_deprecates_the_older(sm):
    v1 = sm.create_secret(Name="rot", SecretString="1")["VersionId"]
    v2 = sm.put_secret_value(SecretId="rot", SecretString="2")["VersionId"]
    assert stages(sm, "rot") == {v1: ["AWSPREVIOUS"], v2: ["AWSCURRENT"]}
    v3 = sm.put_secret_value(SecretId="rot", SecretString="3")
    assert v3["VersionStages"] == ["AWSCURRENT"]
    assert stages(sm, "rot") == {v2: ["AWSPREVIOUS"], v3["VersionId"]: ["AWSCURRENT"]}
    assert sm.get_secret_value(SecretId="rot", VersionStage="AWSPREVIOUS")["SecretString"] == "2"
    assert sm.get_secret_value(SecretId="rot", VersionId=v1)["SecretString"] == "1"
    listed = sm.list_secret_version_ids(SecretId="rot")["Versions"]
    assert {v["VersionId"] for v in listed} == {v2, v3["VersionId"]}
    with_deprecated = sm.list_secret_version_ids(SecretId="rot", IncludeDeprecated=True)["Versions"]
    assert {v["VersionId"] for v in with_deprecated} == {v1, v2, v3["VersionId"]}
    assert all(v["KmsKeyIds"] == ["DefaultEncryptionKey"] for v in listed)


def test_pending_version_does_not_move_current(sm):
    v1 = sm.create_secret(Name="pend", SecretString="1")["VersionId"]
    v2 = sm.put_secret_value(SecretId="pend", SecretString="2", VersionStages=["AWSPENDING"])["VersionId"]
    assert stages(sm, "pend") == {v1: ["AWSCURRENT"], v2: ["AWSPENDING"]}
    assert sm.get_secret_value(SecretId="pend")["SecretString"] == "1"
    assert sm.get_secret_value(SecretId="pend", VersionStage="AWSPENDING")["SecretString"] == "2"


def test_update_secret_version_stage_moves_current_and_requires_the_holder(sm):
    v1 = sm.create_secret(Name="stage", SecretString="1")["VersionId"]
    v2 = sm.put_secret_value(SecretId="stage", SecretString="2", VersionStages=["AWSPENDING"])["VersionId"]
    with pytest.raises(ClientError) as e:
        sm.update_secret_version_stage(SecretId="stage", VersionStage="AWSCURRENT", MoveToVersionId=v2)
    assert error(e) == (
        "InvalidParameterException",
        f"The staging label AWSCURRENT is currently attached to version {v1}, so you must explicitly reference that version in RemoveFromVersionId.",
    )
    sm.update_secret_version_stage(SecretId="stage", VersionStage="AWSCURRENT", MoveToVersionId=v2, RemoveFromVersionId=v1)
    assert stages(sm, "stage") == {v1: ["AWSPREVIOUS"], v2: ["AWSPENDING", "AWSCURRENT"]}
    sm.update_secret_version_stage(SecretId="stage", VersionStage="AWSPENDING", RemoveFromVersionId=v2)
    assert stages(sm, "stage") == {v1: ["AWSPREVIOUS"], v2: ["AWSCURRENT"]}
    with pytest.raises(ClientError) as e:
        sm.update_secret_version_stage(SecretId="stage", VersionStage="AWSCURRENT", RemoveFromVersionId=v2)
    assert error(e)[0] == "InvalidParameterException"
    sm.update_secret_version_stage(SecretId="stage", VersionStage="custom", MoveToVersionId=v1)
    assert sm.get_secret_value(SecretId="stage", VersionStage="custom")["SecretString"] == "1"


def test_update_secret_changes_value_and_description(sm):
    v1 = sm.create_secret(Name="upd", SecretString="1")["VersionId"]
    out = sm.update_secret(SecretId="upd", SecretString="2", Description="new")
    assert out["VersionId"] != v1
    assert sm.get_secret_value(SecretId="upd")["SecretString"] == "2"
    assert sm.describe_secret(SecretId="upd")["Description"] == "new"
    only_description = sm.update_secret(SecretId="upd", Description="again")
    assert "VersionId" not in only_description


def test_secret_without_value_has_no_current_version(sm):
    sm.create_secret(Name="empty")
    with pytest.raises(ClientError) as e:
        sm.get_secret_value(SecretId="empty")
    assert error(e) == (
        "ResourceNotFoundException",
        "Secrets Manager can't find the specified secret value for staging label: AWSCURRENT",
    )


def test_delete_with_recovery_window_blocks_use_until_restored(sm):
    sm.create_secret(Name="del", SecretString="x")
    out = sm.delete_secret(SecretId="del", RecoveryWindowInDays=7)
    assert "DeletionDate" in out
    with pytest.raises(ClientError) as e:
        sm.get_secret_value(SecretId="del")
    assert error(e) == (
        "InvalidRequestException",
        "You can't perform this operation on the secret because it was marked for deletion.",
    )
    assert "DeletedDate" in sm.describe_secret(SecretId="del")
    with pytest.raises(ClientError) as e:
        sm.create_secret(Name="del", SecretString="y")
    assert error(e)[0] == "InvalidRequestException"
    assert [s["Name"] for s in sm.list_secrets()["SecretList"]] == []
    assert [s["Name"] for s in sm.list_secrets(IncludePlannedDeletion=True)["SecretList"]] == ["del"]
    sm.restore_secret(SecretId="del")
    assert sm.get_secret_value(SecretId="del")["SecretString"] == "x"


def test_delete_parameter_errors_and_force_delete(sm):
    sm.create_secret(Name="force", SecretString="x")
    with pytest.raises(ClientError) as e:
        sm.delete_secret(SecretId="force", RecoveryWindowInDays=3)
    assert error(e) == ("InvalidParameterException", "The RecoveryWindowInDays value must be between 7 and 30 days (inclusive).")
    with pytest.raises(ClientError) as e:
        sm.delete_secret(SecretId="force", RecoveryWindowInDays=7, ForceDeleteWithoutRecovery=True)
    assert error(e)[0] == "InvalidParameterException"
    sm.delete_secret(SecretId="force", ForceDeleteWithoutRecovery=True)
    with pytest.raises(ClientError) as e:
        sm.describe_secret(SecretId="force")
    assert error(e)[0] == "ResourceNotFoundException"
    sm.create_secret(Name="force", SecretString="again")


def test_list_secrets_filters_and_paginates(sm):
    sm.create_secret(Name="app/one", SecretString="1", Tags=[{"Key": "env", "Value": "prod"}])
    sm.create_secret(Name="app/two", SecretString="2", Description="second")
    sm.create_secret(Name="other", SecretString="3")
    names = lambda **kw: [s["Name"] for s in sm.list_secrets(**kw)["SecretList"]]
    assert names(Filters=[{"Key": "name", "Values": ["app/"]}]) == ["app/one", "app/two"]
    assert names(Filters=[{"Key": "name", "Values": ["!app/"]}]) == ["other"]
    assert names(Filters=[{"Key": "tag-key", "Values": ["env"]}]) == ["app/one"]
    assert names(Filters=[{"Key": "description", "Values": ["sec"]}]) == ["app/two"]
    assert names(Filters=[{"Key": "all", "Values": ["prod"]}]) == ["app/one"]
    first = sm.list_secrets(MaxResults=2)
    assert len(first["SecretList"]) == 2
    second = sm.list_secrets(MaxResults=2, NextToken=first["NextToken"])
    assert [s["Name"] for s in second["SecretList"]] == ["other"] and "NextToken" not in second
    entry = first["SecretList"][0]
    assert list(entry["SecretVersionsToStages"].values()) == [["AWSCURRENT"]]
    with pytest.raises(ClientError) as e:
        sm.list_secrets(NextToken="junk")
    assert error(e)[0] == "InvalidNextTokenException"


def test_batch_get_secret_value_reports_values_and_errors(sm):
    sm.create_secret(Name="b1", SecretString="1")
    sm.create_secret(Name="b2", SecretString="2")
    out = sm.batch_get_secret_value(SecretIdList=["b1", "b2", "missing"])
    assert sorted(v["SecretString"] for v in out["SecretValues"]) == ["1", "2"]
    assert [(e["SecretId"], e["ErrorCode"]) for e in out["Errors"]] == [("missing", "ResourceNotFoundException")]
    by_filter = sm.batch_get_secret_value(Filters=[{"Key": "name", "Values": ["b2"]}])
    assert [v["Name"] for v in by_filter["SecretValues"]] == ["b2"]


def test_customer_kms_key_encrypts_and_a_disabled_key_fails_decryption(client, sm):
    kms = client("kms")
    key = kms.create_key()["KeyMetadata"]
    sm.create_secret(Name="cmk", SecretString="guarded", KmsKeyId=key["Arn"])
    assert sm.describe_secret(SecretId="cmk")["KmsKeyId"] == key["Arn"]
    assert sm.get_secret_value(SecretId="cmk")["SecretString"] == "guarded"
    kms.disable_key(KeyId=key["KeyId"])
    with pytest.raises(ClientError) as e:
        sm.get_secret_value(SecretId="cmk")
    assert error(e)[0] == "DecryptionFailure"
    with pytest.raises(ClientError) as e:
        sm.put_secret_value(SecretId="cmk", SecretString="new")
    assert error(e)[0] == "EncryptionFailure"


def test_default_key_is_created_in_kms_on_first_secret(client, sm):
    kms = client("kms")
    assert "alias/aws/secretsmanager" not in [a["AliasName"] for a in kms.list_aliases()["Aliases"]]
    sm.create_secret(Name="first", SecretString="x")
    meta = kms.describe_key(KeyId="alias/aws/secretsmanager")["KeyMetadata"]
    assert meta["KeyManager"] == "AWS"


def test_large_secret_string_round_trips(sm):
    value = "x" * 60000
    sm.create_secret(Name="large", SecretString=value)
    assert sm.get_secret_value(SecretId="large")["SecretString"] == value


def test_tags_policies_and_rotation_settings_are_stored(sm):
    sm.create_secret(Name="meta", SecretString="x", Tags=[{"Key": "a", "Value": "1"}])
    sm.tag_resource(SecretId="meta", Tags=[{"Key": "b", "Value": "2"}, {"Key": "a", "Value": "3"}])
    sm.untag_resource(SecretId="meta", TagKeys=["b"])
    assert sm.describe_secret(SecretId="meta")["Tags"] == [{"Key": "a", "Value": "3"}]
    policy = json.dumps({"Version": "2012-10-17", "Statement": []})
    sm.put_resource_policy(SecretId="meta", ResourcePolicy=policy)
    assert sm.get_resource_policy(SecretId="meta")["ResourcePolicy"] == policy
    with pytest.raises(ClientError) as e:
        sm.put_resource_policy(SecretId="meta", ResourcePolicy="{bad")
    assert error(e)[0] == "MalformedPolicyDocumentException"
    sm.delete_resource_policy(SecretId="meta")
    assert "ResourcePolicy" not in sm.get_resource_policy(SecretId="meta")
    with pytest.raises(ClientError) as e:
        sm.rotate_secret(SecretId="meta")
    assert error(e)[0] == "InvalidRequestException"
    lam = "arn:aws:lambda:us-east-1:000000000000:function:rotate"
    sm.rotate_secret(SecretId="meta", RotationLambdaARN=lam, RotationRules={"AutomaticallyAfterDays": 30},
                     RotateImmediately=False)
    described = sm.describe_secret(SecretId="meta")
    assert described["RotationEnabled"] is True and described["RotationLambdaARN"] == lam
    assert described["RotationRules"]["AutomaticallyAfterDays"] == 30 and "NextRotationDate" in described
    sm.cancel_rotate_secret(SecretId="meta")
    assert sm.describe_secret(SecretId="meta")["RotationEnabled"] is False


def test_get_random_password_honours_exclusions(sm):
    pw = sm.get_random_password(PasswordLength=50, ExcludePunctuation=True, ExcludeCharacters="aeiou")["RandomPassword"]
    assert len(pw) == 50
    assert not set(pw) & set(string.punctuation + "aeiou ")
    assert any(c.isdigit() for c in pw) and any(c.isupper() for c in pw)
    with pytest.raises(ClientError) as e:
        sm.get_random_password(PasswordLength=5000)
    assert error(e)[0] == "ValidationException"


def test_secrets_are_isolated_per_region(client):
    client("secretsmanager", region_name="us-east-1").create_secret(Name="here", SecretString="x")
    with pytest.raises(ClientError) as e:
        client("secretsmanager", region_name="eu-west-1").get_secret_value(SecretId="here")
    assert error(e)[0] == "ResourceNotFoundException"


def test_cli_creates_and_reads_a_secret(aws):
    aws("secretsmanager", "create-secret", "--name", "cli/secret", "--secret-string", "s3cret")
    out = json.loads(aws("secretsmanager", "get-secret-value", "--secret-id", "cli/secret").stdout)
    assert out["SecretString"] == "s3cret"
    failed = aws("secretsmanager", "describe-secret", "--secret-id", "missing", check=False)
    assert failed.returncode != 0 and "ResourceNotFoundException" in failed.stderr


ROTATION_FUNCTION = """
import json, os, urllib.request

def call(target, body):
    request = urllib.request.Request(
        os.environ["AWS_ENDPOINT_URL"], data=json.dumps(body).encode(),
        headers={"Content-Type": "application/x-amz-json-1.1", "X-Amz-Target": "secretsmanager." + target,
                 "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/secretsmanager/aws4_request, SignedHeaders=host, Signature=0"})
    return json.loads(urllib.request.urlopen(request).read() or b"{}")

def handler(event, context):
    arn, token, step = event["SecretId"], event["ClientRequestToken"], event["Step"]
    stages = call("DescribeSecret", {"SecretId": arn})["VersionIdsToStages"]
    if "AWSPENDING" not in stages.get(token, []):
        raise ValueError("version %s is not pending" % token)
    if step == "createSecret":
        current = call("GetSecretValue", {"SecretId": arn, "VersionStage": "AWSCURRENT"})["SecretString"]
        call("PutSecretValue", {"SecretId": arn, "ClientRequestToken": token,
                                "SecretString": current + "-rotated", "VersionStages": ["AWSPENDING"]})
    elif step == "finishSecret":
        current = [v for v, s in stages.items() if "AWSCURRENT" in s][0]
        call("UpdateSecretVersionStage", {"SecretId": arn, "VersionStage": "AWSCURRENT",
                                          "MoveToVersionId": token, "RemoveFromVersionId": current})
"""


def test_rotate_secret_runs_the_rotation_function_through_its_four_steps(client, sm):
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("rotate.py", ROTATION_FUNCTION)
    fn = client("lambda").create_function(
        FunctionName="rotator", Runtime="python3.12", Role="arn:aws:iam::000000000000:role/r",
        Handler="rotate.handler", Code={"ZipFile": buf.getvalue()},
    )["FunctionArn"]
    v1 = sm.create_secret(Name="rotated", SecretString="pw")["VersionId"]
    out = sm.rotate_secret(SecretId="rotated", RotationLambdaARN=fn, RotationRules={"AutomaticallyAfterDays": 7})
    token = out["VersionId"]
    deadline = time.time() + 30
    while time.time() < deadline and "LastRotatedDate" not in sm.describe_secret(SecretId="rotated"):
        time.sleep(0.1)
    described = sm.describe_secret(SecretId="rotated")
    assert "LastRotatedDate" in described, described
    assert described["VersionIdsToStages"] == {v1: ["AWSPREVIOUS"], token: ["AWSCURRENT"]}
    assert sm.get_secret_value(SecretId="rotated")["SecretString"] == "pw-rotated"


def test_rotation_placeholder_has_no_value_until_the_function_writes_it(sm):
    sm.create_secret(Name="placeholder", SecretString="pw")
    token = sm.rotate_secret(
        SecretId="placeholder", RotationLambdaARN="arn:aws:lambda:us-east-1:000000000000:function:absent",
    )["VersionId"]
    assert stages(sm, "placeholder")[token] == ["AWSPENDING"]
    with pytest.raises(ClientError) as e:
        sm.get_secret_value(SecretId="placeholder", VersionStage="AWSPENDING")
    assert error(e)[0] == "ResourceNotFoundException"
    sm.put_secret_value(SecretId="placeholder", ClientRequestToken=token, SecretString="new", VersionStages=["AWSPENDING"])
    assert sm.get_secret_value(SecretId="placeholder", VersionStage="AWSPENDING")["SecretString"] == "new"
