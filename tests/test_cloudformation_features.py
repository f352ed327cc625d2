"""CloudFormation's drift detection, IaC generator (resource scans and generated templates),
stack refactors, hooks, limits, cost estimates and Organizations access, with boto3."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

QUEUE = json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "jobs"}}}})


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def code(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def created(cfn, name, body=QUEUE):
    cfn.create_stack(StackName=name, TemplateBody=body)
    deadline = time.time() + 30
    while (stack := cfn.describe_stacks(StackName=name)["Stacks"][0])["StackStatus"].endswith("IN_PROGRESS"):
        assert time.time() < deadline
        time.sleep(0.05)
    assert stack["StackStatus"] == "CREATE_COMPLETE", stack
    return stack


def test_drift_detection_reports_resources_it_cannot_compare_as_not_checked(cfn):
    stack = created(cfn, "app")
    detection = cfn.detect_stack_drift(StackName="app")["StackDriftDetectionId"]
    status = cfn.describe_stack_drift_detection_status(StackDriftDetectionId=detection)
    assert status["DetectionStatus"] == "DETECTION_COMPLETE" and status["StackDriftStatus"] == "NOT_CHECKED"
    assert status["StackId"] == stack["StackId"]
    drift = cfn.detect_stack_resource_drift(StackName="app", LogicalResourceId="Q")["StackResourceDrift"]
    assert drift["StackResourceDriftStatus"] == "NOT_CHECKED" and drift["ResourceType"] == "AWS::SQS::Queue"
    drifts = cfn.describe_stack_resource_drifts(StackName="app")["StackResourceDrifts"]
    assert [d["LogicalResourceId"] for d in drifts] == ["Q"]
    assert cfn.describe_stack_resource_drifts(StackName="app", StackResourceDriftStatusFilters=["MODIFIED"])["StackResourceDrifts"] == []
    with pytest.raises(ClientError) as e:
        cfn.detect_stack_drift(StackName="missing")
    assert code(e) == ("ValidationError", 400)
    with pytest.raises(ClientError) as e:
        cfn.detect_stack_resource_drift(StackName="app", LogicalResourceId="Nope")
    assert code(e) == ("ValidationError", 400)


def test_scans_find_stack_resources_and_templates_are_generated_from_them(cfn):
    created(cfn, "app")
    scan = cfn.start_resource_scan()["ResourceScanId"]
    described = cfn.describe_resource_scan(ResourceScanId=scan)
    assert described["Status"] == "COMPLETE" and described["ResourcesScanned"] == 1
    [found] = cfn.list_resource_scan_resources(ResourceScanId=scan)["Resources"]
    assert found["ResourceType"] == "AWS::SQS::Queue" and found["ManagedByStack"] is True
    assert cfn.list_resource_scan_resources(ResourceScanId=scan, ResourceTypePrefix="AWS::S3")["Resources"] == []
    assert [s["ResourceScanId"] for s in cfn.list_resource_scans()["ResourceScanSummaries"]] == [scan]
    assert cfn.list_resource_scan_related_resources(ResourceScanId=scan, Resources=[
        {"ResourceType": found["ResourceType"], "ResourceIdentifier": found["ResourceIdentifier"]}])["RelatedResources"] == []
    template_id = cfn.create_generated_template(GeneratedTemplateName="gen", Resources=[{
        "ResourceType": "AWS::SQS::Queue", "LogicalResourceId": "Jobs",
        "ResourceIdentifier": {"QueueUrl": "http://sqs/jobs"}}])["GeneratedTemplateId"]
    got = cfn.describe_generated_template(GeneratedTemplateName="gen")
    assert got["GeneratedTemplateId"] == template_id and got["Status"] == "COMPLETE"
    assert got["Resources"][0]["LogicalResourceId"] == "Jobs" and got["Progress"]["ResourcesSucceeded"] == 1
    body = json.loads(cfn.get_generated_template(GeneratedTemplateName="gen", Format="JSON")["TemplateBody"])
    assert body["Resources"]["Jobs"] == {"Type": "AWS::SQS::Queue", "DeletionPolicy": "Retain",
                                         "UpdateReplacePolicy": "Retain", "Properties": {"QueueUrl": "http://sqs/jobs"}}
    cfn.update_generated_template(GeneratedTemplateName="gen", NewGeneratedTemplateName="gen2",
                                  RemoveResources=["Jobs"])
    [summary] = cfn.list_generated_templates()["Summaries"]
    assert summary["GeneratedTemplateName"] == "gen2" and summary["NumberOfResources"] == 0
    with pytest.raises(ClientError) as e:
        cfn.create_generated_template(GeneratedTemplateName="gen2")
    assert code(e) == ("AlreadyExistsException", 400)
    cfn.delete_generated_template(GeneratedTemplateName=template_id)
    with pytest.raises(ClientError) as e:
        cfn.describe_generated_template(GeneratedTemplateName="gen2")
    assert code(e) == ("GeneratedTemplateNotFound", 404)
    with pytest.raises(ClientError) as e:
        cfn.describe_resource_scan(ResourceScanId="arn:aws:cloudformation:us-east-1:000000000000:resourceScan/x")
    assert code(e) == ("ResourceScanNotFound", 400)


def test_a_refactor_moves_a_resource_between_stacks(cfn, client):
    created(cfn, "source")
    created(cfn, "target", json.dumps({"Resources": {"T": {"Type": "AWS::SNS::Topic"}}}))
    refactor = cfn.create_stack_refactor(
        Description="move the queue",
        StackDefinitions=[
            {"StackName": "source", "TemplateBody": json.dumps({"Resources": {"W": {"Type": "AWS::SNS::Topic"}}})},
            {"StackName": "target", "TemplateBody": json.dumps({"Resources": {
                "T": {"Type": "AWS::SNS::Topic"},
                "Jobs": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "jobs"}}}})},
        ],
        ResourceMappings=[{"Source": {"StackName": "source", "LogicalResourceId": "Q"},
                           "Destination": {"StackName": "target", "LogicalResourceId": "Jobs"}}],
    )["StackRefactorId"]
    described = cfn.describe_stack_refactor(StackRefactorId=refactor)
    assert described["Status"] == "CREATE_COMPLETE" and described["ExecutionStatus"] == "AVAILABLE"
    [action] = cfn.list_stack_refactor_actions(StackRefactorId=refactor)["StackRefactorActions"]
    assert action["Action"] == "MOVE" and action["PhysicalResourceId"].endswith("/jobs")
    cfn.execute_stack_refactor(StackRefactorId=refactor)
    assert cfn.describe_stack_refactor(StackRefactorId=refactor)["ExecutionStatus"] == "EXECUTE_COMPLETE"
    moved = cfn.describe_stack_resource(StackName="target", LogicalResourceId="Jobs")["StackResourceDetail"]
    assert moved["PhysicalResourceId"].endswith("/jobs")
    assert "Jobs" in cfn.get_template(StackName="target")["TemplateBody"]["Resources"]
    listed = cfn.list_stack_refactors(ExecutionStatusFilter=["EXECUTE_COMPLETE"])["StackRefactorSummaries"]
    assert [r["StackRefactorId"] for r in listed] == [refactor]
    with pytest.raises(ClientError) as e:
        cfn.execute_stack_refactor(StackRefactorId=refactor)
    assert code(e) == ("ValidationError", 400)
    with pytest.raises(ClientError) as e:
        cfn.describe_stack_refactor(StackRefactorId="missing")
    assert code(e) == ("StackRefactorNotFoundException", 404)


def test_hooks_limits_cost_and_organizations_access(cfn):
    created(cfn, "app")
    cs = cfn.create_change_set(StackName="app", ChangeSetName="cs", UsePreviousTemplate=True,
                               Tags=[{"Key": "k", "Value": "v"}])
    hooks = cfn.describe_change_set_hooks(ChangeSetName=cs["Id"])
    assert hooks["Hooks"] == [] and hooks["Status"] == "UNAVAILABLE" and hooks["StackName"] == "app"
    with pytest.raises(ClientError) as e:
        cfn.describe_change_set_hooks(ChangeSetName="nope", StackName="app")
    assert code(e) == ("ChangeSetNotFound", 404)
    with pytest.raises(ClientError) as e:
        cfn.get_hook_result(HookResultId="11111111-2222-3333-4444-555555555555")
    assert code(e) == ("HookResultNotFound", 404)
    assert cfn.list_hook_results(TargetType="STACK", TargetId="app")["HookResults"] == []
    limits = {l["Name"]: l["Value"] for l in cfn.describe_account_limits()["AccountLimits"]}
    assert limits == {"StackLimit": 2000, "StackOutputsLimit": 200, "ConcurrentResourcesLimit": 2500}
    assert cfn.estimate_template_cost(TemplateBody=QUEUE)["Url"].startswith("https://calculator.")
    with pytest.raises(ClientError) as e:
        cfn.estimate_template_cost(TemplateBody="{")
    assert code(e) == ("ValidationError", 400)
    assert cfn.describe_organizations_access()["Status"] == "DISABLED"
    with pytest.raises(ClientError) as e:
        cfn.activate_organizations_access()
    assert code(e) == ("InvalidOperationException", 400)


def test_describe_events_groups_a_stacks_events_by_operation(cfn):
    created(cfn, "ops")
    cfn.update_stack(StackName="ops", TemplateBody=json.dumps({"Resources": {
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "jobs"}},
        "Bad": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "bad name!"}}}}))
    deadline = time.time() + 30
    while cfn.describe_stacks(StackName="ops")["Stacks"][0]["StackStatus"] != "UPDATE_ROLLBACK_COMPLETE":
        assert time.time() < deadline
        time.sleep(0.05)
    events = cfn.describe_events(StackName="ops")["OperationEvents"]
    kinds = []
    for e in reversed(events):
        if (e["OperationId"], e["OperationType"], e["OperationStatus"]) not in kinds:
            kinds.append((e["OperationId"], e["OperationType"], e["OperationStatus"]))
    assert [(k, s) for _, k, s in kinds] == [
        ("CREATE_STACK", "SUCCEEDED"), ("UPDATE_STACK", "FAILED"), ("ROLLBACK", "SUCCEEDED")]
    update = kinds[1][0]
    only = cfn.describe_events(StackName="ops", OperationId=update)["OperationEvents"]
    assert {e["OperationId"] for e in only} == {update}
    failed = cfn.describe_events(StackName="ops", Filters={"FailedEvents": True})["OperationEvents"]
    assert failed and all(e["ResourceStatus"].endswith("FAILED") for e in failed)
    assert any(e["EventType"] == "PROVISIONING_ERROR" and e["LogicalResourceId"] == "Bad" for e in failed)
    with pytest.raises(ClientError) as e:
        cfn.describe_events(StackName="missing")
    assert code(e) == ("ValidationError", 400)


def test_rollback_stack_rolls_back_a_failed_creation_kept_for_inspection(cfn, client):
    body = json.dumps({"Resources": {
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "kept"}},
        "Bad": {"Type": "AWS::SNS::Topic", "DependsOn": "Q", "Properties": {"TopicName": "bad name!"}}}})
    cfn.create_stack(StackName="failed", TemplateBody=body, DisableRollback=True)
    deadline = time.time() + 30
    while cfn.describe_stacks(StackName="failed")["Stacks"][0]["StackStatus"] != "CREATE_FAILED":
        assert time.time() < deadline
        time.sleep(0.05)
    assert "kept" in " ".join(client("sqs").list_queues().get("QueueUrls", []))
    stack_id = cfn.rollback_stack(StackName="failed")["StackId"]
    deadline = time.time() + 30
    while (status := cfn.describe_stacks(StackName=stack_id)["Stacks"][0]["StackStatus"]).endswith("IN_PROGRESS"):
        assert time.time() < deadline
        time.sleep(0.05)
    assert status == "ROLLBACK_COMPLETE"
    assert client("sqs").list_queues().get("QueueUrls", []) == []
    with pytest.raises(ClientError) as e:
        cfn.rollback_stack(StackName="failed")
    assert code(e) == ("ValidationError", 400)
