"""CloudFormation StackSets with boto3: a set's instances deployed as stacks of their accounts
and regions through the stack engine, updated with overrides, deleted (or retained), and the
operations, results, paging and errors AWS documents."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

TEMPLATE = json.dumps({
    "Parameters": {"Suffix": {"Type": "String", "Default": "a"}},
    "Resources": {"Queue": {"Type": "AWS::SQS::Queue",
                            "Properties": {"QueueName": {"Fn::Sub": "set-${AWS::Region}-${Suffix}"}}}},
    "Outputs": {"Name": {"Value": {"Fn::GetAtt": ["Queue", "QueueName"]}}},
})
OTHER = "111111111111"


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def code(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def finished(cfn, name, op, timeout=30):
    deadline = time.time() + timeout
    while True:
        got = cfn.describe_stack_set_operation(StackSetName=name, OperationId=op)["StackSetOperation"]
        if got["Status"] not in ("RUNNING", "QUEUED", "STOPPING"):
            return got
        assert time.time() < deadline, got
        time.sleep(0.05)


def queues(client, region, account="000000000000"):
    sqs = client("sqs", region_name=region, aws_access_key_id=account, aws_secret_access_key="test")
    return sorted(u.rsplit("/", 1)[1] for u in sqs.list_queues().get("QueueUrls", []))


def test_a_stack_set_deploys_instances_as_stacks_in_each_account_and_region(cfn, client):
    set_id = cfn.create_stack_set(StackSetName="queues", TemplateBody=TEMPLATE, Description="q",
                                  Tags=[{"Key": "team", "Value": "ops"}])["StackSetId"]
    assert set_id.startswith("queues:")
    described = cfn.describe_stack_set(StackSetName="queues")["StackSet"]
    assert described["TemplateBody"] == TEMPLATE and described["Description"] == "q"
    assert described["Status"] == "ACTIVE" and described["PermissionModel"] == "SELF_MANAGED"
    assert described["Tags"] == [{"Key": "team", "Value": "ops"}]
    assert described["StackSetARN"].endswith(f":stackset/{set_id}")
    op = cfn.create_stack_instances(StackSetName="queues", Accounts=["000000000000", OTHER],
                                    Regions=["us-east-1", "eu-west-1"])["OperationId"]
    got = finished(cfn, "queues", op)
    assert got["Status"] == "SUCCEEDED" and got["Action"] == "CREATE"
    results = cfn.list_stack_set_operation_results(StackSetName="queues", OperationId=op)["Summaries"]
    assert sorted((r["Account"], r["Region"], r["Status"]) for r in results) == [
        ("000000000000", "eu-west-1", "SUCCEEDED"), ("000000000000", "us-east-1", "SUCCEEDED"),
        (OTHER, "eu-west-1", "SUCCEEDED"), (OTHER, "us-east-1", "SUCCEEDED")]
    assert queues(client, "eu-west-1") == ["set-eu-west-1-a"]
    assert queues(client, "us-east-1", OTHER) == ["set-us-east-1-a"]
    instance = cfn.describe_stack_instance(StackSetName="queues", StackInstanceAccount=OTHER,
                                           StackInstanceRegion="eu-west-1")["StackInstance"]
    assert instance["Status"] == "CURRENT" and instance["StackInstanceStatus"]["DetailedStatus"] == "SUCCEEDED"
    assert instance["LastOperationId"] == op
    stack = client("cloudformation", region_name="eu-west-1", aws_access_key_id=OTHER,
                   aws_secret_access_key="test").describe_stacks(StackName=instance["StackId"])["Stacks"][0]
    assert stack["StackName"].startswith("StackSet-queues-") and stack["StackStatus"] == "CREATE_COMPLETE"
    assert sorted(cfn.describe_stack_set(StackSetName="queues")["StackSet"]["Regions"]) == ["eu-west-1", "us-east-1"]


def test_overrides_updates_and_deletion_with_and_without_retained_stacks(cfn, client):
    cfn.create_stack_set(StackSetName="s", TemplateBody=TEMPLATE)
    finished(cfn, "s", cfn.create_stack_instances(StackSetName="s", Accounts=["000000000000"],
                                                  Regions=["us-east-1", "us-west-2"])["OperationId"])
    op = cfn.update_stack_instances(StackSetName="s", Accounts=["000000000000"], Regions=["us-west-2"],
                                    ParameterOverrides=[{"ParameterKey": "Suffix", "ParameterValue": "b"}])["OperationId"]
    assert finished(cfn, "s", op)["Status"] == "SUCCEEDED"
    assert queues(client, "us-west-2") == ["set-us-west-2-b"]
    instance = cfn.describe_stack_instance(StackSetName="s", StackInstanceAccount="000000000000",
                                           StackInstanceRegion="us-west-2")["StackInstance"]
    assert instance["ParameterOverrides"] == [{"ParameterKey": "Suffix", "ParameterValue": "b"}]
    op = cfn.update_stack_set(StackSetName="s", UsePreviousTemplate=True, Description="new",
                              Parameters=[{"ParameterKey": "Suffix", "ParameterValue": "c"}])["OperationId"]
    assert finished(cfn, "s", op)["Action"] == "UPDATE"
    assert queues(client, "us-east-1") == ["set-us-east-1-c"]
    assert queues(client, "us-west-2") == ["set-us-west-2-b"]
    with pytest.raises(ClientError) as e:
        cfn.delete_stack_set(StackSetName="s")
    assert code(e) == ("StackSetNotEmptyException", 409)
    op = cfn.delete_stack_instances(StackSetName="s", Accounts=["000000000000"], Regions=["us-east-1"],
                                    RetainStacks=False)["OperationId"]
    assert finished(cfn, "s", op)["Status"] == "SUCCEEDED"
    assert queues(client, "us-east-1") == []
    op = cfn.delete_stack_instances(StackSetName="s", Accounts=["000000000000"], Regions=["us-west-2"],
                                    RetainStacks=True)["OperationId"]
    assert finished(cfn, "s", op)["RetainStacks"] is True
    assert queues(client, "us-west-2") == ["set-us-west-2-b"]
    assert cfn.list_stack_instances(StackSetName="s")["Summaries"] == []
    cfn.delete_stack_set(StackSetName="s")
    assert cfn.list_stack_sets()["Summaries"] == []
    assert [s["StackSetName"] for s in cfn.list_stack_sets(Status="DELETED")["Summaries"]] == ["s"]
    with pytest.raises(ClientError) as e:
        cfn.describe_stack_set(StackSetName="s")
    assert code(e) == ("StackSetNotFoundException", 404)


def test_a_failing_instance_fails_the_operation_with_its_reason(cfn):
    bad = json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "bad name!"}}}})
    cfn.create_stack_set(StackSetName="bad", TemplateBody=bad)
    op = cfn.create_stack_instances(StackSetName="bad", Accounts=["000000000000"], Regions=["us-east-1"])["OperationId"]
    assert finished(cfn, "bad", op)["Status"] == "FAILED"
    [result] = cfn.list_stack_set_operation_results(StackSetName="bad", OperationId=op)["Summaries"]
    assert result["Status"] == "FAILED" and "ROLLBACK_COMPLETE" in result["StatusReason"]
    [summary] = cfn.list_stack_instances(StackSetName="bad")["Summaries"]
    assert summary["Status"] == "OUTDATED" and summary["StackInstanceStatus"]["DetailedStatus"] == "FAILED"


def test_operations_are_listed_newest_first_and_paged(cfn):
    cfn.create_stack_set(StackSetName="p", TemplateBody=TEMPLATE)
    ops = []
    for region in ["us-east-1", "us-east-2", "us-west-1"]:
        ops.append(cfn.create_stack_instances(StackSetName="p", Accounts=["000000000000"],
                                              Regions=[region])["OperationId"])
        finished(cfn, "p", ops[-1])
    first = cfn.list_stack_set_operations(StackSetName="p", MaxResults=2)
    assert [s["OperationId"] for s in first["Summaries"]] == [ops[2], ops[1]]
    rest = cfn.list_stack_set_operations(StackSetName="p", MaxResults=2, NextToken=first["NextToken"])
    assert [s["OperationId"] for s in rest["Summaries"]] == [ops[0]] and "NextToken" not in rest
    filtered = cfn.list_stack_instances(StackSetName="p", StackInstanceRegion="us-east-2")["Summaries"]
    assert [s["Region"] for s in filtered] == ["us-east-2"]
    drift = cfn.detect_stack_set_drift(StackSetName="p")["OperationId"]
    done = finished(cfn, "p", drift)
    assert done["Action"] == "DETECT_DRIFT" and done["StackSetDriftDetectionDetails"]["DriftStatus"] == "NOT_CHECKED"


def test_stack_set_errors(cfn):
    cfn.create_stack_set(StackSetName="e", TemplateBody=TEMPLATE)
    with pytest.raises(ClientError) as e:
        cfn.create_stack_set(StackSetName="e", TemplateBody=TEMPLATE)
    assert code(e) == ("NameAlreadyExistsException", 409)
    with pytest.raises(ClientError) as e:
        cfn.create_stack_set(StackSetName="broken", TemplateBody="{")
    assert code(e)[0] == "ValidationError"
    with pytest.raises(ClientError) as e:
        cfn.create_stack_instances(StackSetName="missing", Accounts=["000000000000"], Regions=["us-east-1"])
    assert code(e) == ("StackSetNotFoundException", 404)
    with pytest.raises(ClientError) as e:
        cfn.describe_stack_instance(StackSetName="e", StackInstanceAccount="000000000000",
                                    StackInstanceRegion="us-east-1")
    assert code(e) == ("StackInstanceNotFoundException", 404)
    with pytest.raises(ClientError) as e:
        cfn.describe_stack_set_operation(StackSetName="e", OperationId="nope")
    assert code(e) == ("OperationNotFoundException", 404)
    op = cfn.create_stack_instances(StackSetName="e", Accounts=["000000000000"], Regions=["us-east-1"],
                                    OperationId="fixed-id")["OperationId"]
    assert op == "fixed-id"
    finished(cfn, "e", op)
    with pytest.raises(ClientError) as e:
        cfn.create_stack_instances(StackSetName="e", Accounts=["000000000000"], Regions=["us-east-2"],
                                   OperationId="fixed-id")
    assert code(e) == ("OperationIdAlreadyExistsException", 409)
    with pytest.raises(ClientError) as e:
        cfn.stop_stack_set_operation(StackSetName="e", OperationId="fixed-id")
    assert code(e) == ("InvalidOperationException", 400)
    assert cfn.list_stack_set_auto_deployment_targets(StackSetName="e")["Summaries"] == []


def test_existing_stacks_are_imported_as_instances(cfn, client):
    stack_id = cfn.create_stack(StackName="standalone", TemplateBody=TEMPLATE)["StackId"]
    cfn.create_stack_set(StackSetName="adopt", TemplateBody=TEMPLATE)
    op = cfn.import_stacks_to_stack_set(StackSetName="adopt", StackIds=[stack_id])["OperationId"]
    assert finished(cfn, "adopt", op)["Status"] == "SUCCEEDED"
    [summary] = cfn.list_stack_instances(StackSetName="adopt")["Summaries"]
    assert summary["StackId"] == stack_id and summary["Region"] == "us-east-1"
    with pytest.raises(ClientError) as e:
        cfn.import_stacks_to_stack_set(StackSetName="adopt", StackIds=["missing"])
    assert code(e) == ("StackNotFoundException", 404)
