"""SSM service settings, resource policies and Run Command on an account without managed
nodes: what is put is read back exactly, defaults and errors as SSM answers them."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
TIER = "/ssm/parameter-store/default-parameter-tier"
THROUGHPUT_ARN = f"arn:aws:ssm:us-east-1:{ACCOUNT}:servicesetting/ssm/parameter-store/high-throughput-enabled"
POLICY = json.dumps({
    "Version": "2012-10-17",
    "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                   "Action": "ssm:GetParameter", "Resource": "*"}],
})


@pytest.fixture
def ssm(client):
    return client("ssm")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def test_service_settings_default_until_updated_and_reset(ssm):
    setting = ssm.get_service_setting(SettingId=TIER)["ServiceSetting"]
    assert setting["SettingId"] == TIER and setting["SettingValue"] == "Standard"
    assert setting["Status"] == "Default" and setting["LastModifiedUser"] == "System"
    assert setting["ARN"] == f"arn:aws:ssm:us-east-1:{ACCOUNT}:servicesetting{TIER}"
    by_arn = ssm.get_service_setting(SettingId=THROUGHPUT_ARN)["ServiceSetting"]
    assert by_arn["SettingValue"] == "false"
    assert by_arn["SettingId"] == "/ssm/parameter-store/high-throughput-enabled"
    ssm.update_service_setting(SettingId=TIER, SettingValue="Advanced")
    updated = ssm.get_service_setting(SettingId=TIER)["ServiceSetting"]
    assert updated["SettingValue"] == "Advanced" and updated["Status"] == "Customized"
    assert updated["LastModifiedDate"] is not None
    reset = ssm.reset_service_setting(SettingId=TIER)["ServiceSetting"]
    assert reset["SettingValue"] == "Standard" and reset["Status"] == "Default"
    assert ssm.get_service_setting(SettingId=TIER)["ServiceSetting"] == reset


def test_unknown_service_settings_are_not_found(ssm):
    for call in (lambda: ssm.get_service_setting(SettingId="/ssm/no/such"),
                 lambda: ssm.update_service_setting(SettingId="/ssm/no/such", SettingValue="x"),
                 lambda: ssm.reset_service_setting(SettingId="/ssm/no/such")):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e)[0] == "ServiceSettingNotFound"


def test_resource_policies_follow_their_parameter(ssm):
    ssm.put_parameter(Name="/owned/value", Value="v", Type="String", Tier="Advanced")
    arn = f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/owned/value"
    ssm.put_resource_policy(ResourceArn=arn, Policy=POLICY)
    ssm.delete_parameter(Name="/owned/value")
    for call in (lambda: ssm.get_resource_policies(ResourceArn=arn),
                 lambda: ssm.put_resource_policy(ResourceArn=arn, Policy=POLICY)):
        with pytest.raises(ClientError) as e:
            call()
        assert error_of(e)[0] == "ResourceNotFoundException"
    ssm.put_parameter(Name="/owned/value", Value="again", Type="String", Tier="Advanced")
    assert ssm.get_resource_policies(ResourceArn=arn)["Policies"] == []


def test_resource_policies_are_put_listed_updated_and_deleted(ssm):
    ssm.put_parameter(Name="/shared/value", Value="v", Type="String", Tier="Advanced")
    arn = f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/shared/value"
    assert ssm.get_resource_policies(ResourceArn=arn)["Policies"] == []
    put = ssm.put_resource_policy(ResourceArn=arn, Policy=POLICY)
    [listed] = ssm.get_resource_policies(ResourceArn=arn)["Policies"]
    assert listed == {"PolicyId": put["PolicyId"], "PolicyHash": put["PolicyHash"], "Policy": POLICY}
    changed = POLICY.replace("GetParameter", "GetParameters")
    updated = ssm.put_resource_policy(ResourceArn=arn, Policy=changed, PolicyId=put["PolicyId"],
                                      PolicyHash=put["PolicyHash"])
    assert updated["PolicyId"] == put["PolicyId"] and updated["PolicyHash"] != put["PolicyHash"]
    assert ssm.get_resource_policies(ResourceArn=arn)["Policies"][0]["Policy"] == changed
    with pytest.raises(ClientError) as e:
        ssm.put_resource_policy(ResourceArn=arn, Policy=POLICY, PolicyId=put["PolicyId"],
                                PolicyHash=put["PolicyHash"])
    assert error_of(e)[0] == "ResourcePolicyConflictException"
    with pytest.raises(ClientError) as e:
        ssm.delete_resource_policy(ResourceArn=arn, PolicyId=put["PolicyId"], PolicyHash=put["PolicyHash"])
    assert error_of(e)[0] == "ResourcePolicyConflictException"
    ssm.delete_resource_policy(ResourceArn=arn, PolicyId=put["PolicyId"], PolicyHash=updated["PolicyHash"])
    assert ssm.get_resource_policies(ResourceArn=arn)["Policies"] == []
    with pytest.raises(ClientError) as e:
        ssm.delete_resource_policy(ResourceArn=arn, PolicyId=put["PolicyId"], PolicyHash=updated["PolicyHash"])
    assert error_of(e)[0] == "ResourcePolicyNotFoundException"


def test_resource_policy_errors(ssm):
    missing = f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/missing"
    with pytest.raises(ClientError) as e:
        ssm.put_resource_policy(ResourceArn=missing, Policy=POLICY)
    assert error_of(e)[0] == "ResourceNotFoundException"
    ssm.put_parameter(Name="p", Value="v", Type="String")
    arn = f"arn:aws:ssm:us-east-1:{ACCOUNT}:parameter/p"
    with pytest.raises(ClientError) as e:
        ssm.put_resource_policy(ResourceArn=arn, Policy="not json")
    assert error_of(e)[0] == "MalformedResourcePolicyDocumentException"
    with pytest.raises(ClientError) as e:
        ssm.put_resource_policy(ResourceArn=arn, Policy=POLICY, PolicyId="nope", PolicyHash="x")
    assert error_of(e)[0] == "ResourcePolicyNotFoundException"
    with pytest.raises(ClientError) as e:
        ssm.put_resource_policy(ResourceArn=f"arn:aws:sqs:us-east-1:{ACCOUNT}:q", Policy=POLICY)
    assert error_of(e)[0] == "ResourcePolicyInvalidParameterException"


def test_commands_to_targets_finish_with_no_targets_and_are_listed(ssm):
    sent = ssm.send_command(DocumentName="AWS-RunShellScript", Comment="hello",
                            Targets=[{"Key": "tag:role", "Values": ["web"]}],
                            Parameters={"commands": ["echo hi"]}, TimeoutSeconds=600)["Command"]
    assert sent["Status"] == "Success" and sent["TargetCount"] == 0
    assert sent["DocumentName"] == "AWS-RunShellScript" and sent["Comment"] == "hello"
    assert sent["Parameters"] == {"commands": ["echo hi"]} and sent["InstanceIds"] == []
    assert sent["Targets"] == [{"Key": "tag:role", "Values": ["web"]}]
    assert sent["MaxConcurrency"] == "50" and sent["MaxErrors"] == "0"
    assert (sent["ExpiresAfter"] - sent["RequestedDateTime"]).total_seconds() == 600
    [listed] = ssm.list_commands()["Commands"]
    assert listed == sent
    assert ssm.list_commands(CommandId=sent["CommandId"])["Commands"] == [sent]
    assert ssm.list_commands(InstanceId="i-0123456789abcdef0")["Commands"] == []
    assert ssm.list_command_invocations(CommandId=sent["CommandId"])["CommandInvocations"] == []
    ssm.cancel_command(CommandId=sent["CommandId"])


def test_command_errors(ssm):
    with pytest.raises(ClientError) as e:
        ssm.send_command(DocumentName="AWS-RunShellScript", InstanceIds=["i-0123456789abcdef0"])
    assert error_of(e) == ("InvalidInstanceId", "Instance Id i-0123456789abcdef0 is not valid.")
    with pytest.raises(ClientError) as e:
        ssm.send_command(DocumentName="my-missing-document", Targets=[{"Key": "tag:a", "Values": ["b"]}])
    assert error_of(e)[0] == "InvalidDocument"
    with pytest.raises(ClientError) as e:
        ssm.list_commands(CommandId="00000000-0000-0000-0000-000000000000")
    assert error_of(e)[0] == "InvalidCommandId"
    with pytest.raises(ClientError) as e:
        ssm.cancel_command(CommandId="00000000-0000-0000-0000-000000000000")
    assert error_of(e)[0] == "InvalidCommandId"


def test_commands_run_account_documents(ssm):
    content = json.dumps({"schemaVersion": "2.2", "description": "d", "mainSteps": [
        {"action": "aws:runShellScript", "name": "run", "inputs": {"runCommand": ["echo"]}}]})
    ssm.create_document(Name="mine", Content=content, DocumentType="Command")
    sent = ssm.send_command(DocumentName="mine", Targets=[{"Key": "tag:a", "Values": ["b"]}])["Command"]
    assert sent["DocumentName"] == "mine" and sent["DocumentVersion"] == "$DEFAULT"
