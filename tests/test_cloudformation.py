"""CloudFormation, black-box with boto3: templates (JSON and YAML), parameters, rules,
intrinsic functions, stacks created, updated and deleted with their events, rollback,
change sets, exports, and the resource providers creating through the other services."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ROLE


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def error(excinfo):
    return excinfo.value.response["Error"]


def settle(cfn, name, timeout=30):
    """The stack once no operation is in progress on it."""
    deadline = time.time() + timeout
    while True:
        stack = cfn.describe_stacks(StackName=name)["Stacks"][0]
        if not stack["StackStatus"].endswith("_IN_PROGRESS"):
            return stack
        if time.time() > deadline:
            raise AssertionError(f"{name} still {stack['StackStatus']}")
        time.sleep(0.05)


def deleted(cfn, stack_id, timeout=30):
    deadline = time.time() + timeout
    while True:
        stack = cfn.describe_stacks(StackName=stack_id)["Stacks"][0]
        if stack["StackStatus"] in ("DELETE_COMPLETE", "DELETE_FAILED"):
            return stack
        if time.time() > deadline:
            raise AssertionError(f"still {stack['StackStatus']}")
        time.sleep(0.05)


def events(cfn, name):
    return [(e["LogicalResourceId"], e["ResourceStatus"], e.get("ResourceStatusReason"))
            for e in reversed(cfn.describe_stack_events(StackName=name)["StackEvents"])]


def outputs(stack):
    return {o["OutputKey"]: o["OutputValue"] for o in stack.get("Outputs", [])}


APP = """
AWSTemplateFormatVersion: '2010-09-09'
Description: an app
Parameters:
  Env:
    Type: String
    Default: dev
    AllowedValues: [dev, prod]
Mappings:
  Sizes:
    dev: {Retention: 7}
    prod: {Retention: 30}
Conditions:
  IsProd: !Equals [!Ref Env, prod]
Resources:
  Queue:
    Type: AWS::SQS::Queue
    Properties:
      QueueName: !Sub '${AWS::StackName}-${Env}-jobs'
      VisibilityTimeout: 45
      Tags: [{Key: team, Value: core}]
  Topic:
    Type: AWS::SNS::Topic
    Properties:
      DisplayName: !Join [' ', [jobs, !Ref Env]]
  Subscription:
    Type: AWS::SNS::Subscription
    Properties:
      TopicArn: !Ref Topic
      Protocol: sqs
      Endpoint: !GetAtt Queue.Arn
      RawMessageDelivery: true
  Param:
    Type: AWS::SSM::Parameter
    Properties:
      Name: !Sub /${AWS::StackName}/queue
      Type: String
      Value: !GetAtt Queue.QueueUrl
  Table:
    Type: AWS::DynamoDB::Table
    Properties:
      AttributeDefinitions: [{AttributeName: pk, AttributeType: S}]
      KeySchema: [{AttributeName: pk, KeyType: HASH}]
      BillingMode: PAY_PER_REQUEST
      StreamSpecification: {StreamViewType: NEW_IMAGE}
  Logs:
    Type: AWS::Logs::LogGroup
    Properties:
      RetentionInDays: !FindInMap [Sizes, !Ref Env, Retention]
  Bucket:
    Type: AWS::S3::Bucket
    Properties:
      VersioningConfiguration: {Status: Enabled}
  ProdOnly:
    Type: AWS::SQS::Queue
    Condition: IsProd
Outputs:
  QueueUrl:
    Value: !Ref Queue
    Export: {Name: !Sub '${AWS::StackName}-queue'}
  QueueArn:
    Value: !GetAtt Queue.Arn
  TableStream:
    Value: !GetAtt Table.StreamArn
  BucketName:
    Value: !Ref Bucket
  Region:
    Value: !Sub '${AWS::Region}/${AWS::AccountId}'
"""


def test_yaml_stack_creates_every_resource_through_its_service_and_deletes_them(cfn, client):
    stack_id = cfn.create_stack(StackName="app", TemplateBody=APP)["StackId"]
    assert stack_id.startswith("arn:aws:cloudformation:us-east-1:000000000000:stack/app/")
    stack = settle(cfn, "app")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "app")
    assert stack["Description"] == "an app"
    assert stack["Parameters"] == [{"ParameterKey": "Env", "ParameterValue": "dev"}]
    out = outputs(stack)
    sqs = client("sqs")
    assert out["QueueUrl"] == sqs.get_queue_url(QueueName="app-dev-jobs")["QueueUrl"]
    assert out["QueueArn"] == "arn:aws:sqs:us-east-1:000000000000:app-dev-jobs"
    assert out["Region"] == "us-east-1/000000000000"
    attrs = sqs.get_queue_attributes(QueueUrl=out["QueueUrl"], AttributeNames=["VisibilityTimeout"])["Attributes"]
    assert attrs["VisibilityTimeout"] == "45"
    assert sqs.list_queue_tags(QueueUrl=out["QueueUrl"])["Tags"] == {"team": "core"}
    assert client("ssm").get_parameter(Name="/app/queue")["Parameter"]["Value"] == out["QueueUrl"]
    table_name = cfn.describe_stack_resource(StackName="app", LogicalResourceId="Table")["StackResourceDetail"]["PhysicalResourceId"]
    assert table_name.startswith("app-Table-")
    table = client("dynamodb").describe_table(TableName=table_name)["Table"]
    assert table["LatestStreamArn"] == out["TableStream"]
    assert client("s3").get_bucket_versioning(Bucket=out["BucketName"])["Status"] == "Enabled"
    groups = client("logs").describe_log_groups(logGroupNamePrefix="app-Logs-")["logGroups"]
    assert [g["retentionInDays"] for g in groups] == [7]
    topic_arn = cfn.describe_stack_resource(StackName="app", LogicalResourceId="Topic")["StackResourceDetail"]["PhysicalResourceId"]
    client("sns").publish(TopicArn=topic_arn, Message="hello")
    messages = sqs.receive_message(QueueUrl=out["QueueUrl"], WaitTimeSeconds=2)["Messages"]
    assert messages[0]["Body"] == "hello"

    summaries = cfn.list_stack_resources(StackName="app")["StackResourceSummaries"]
    assert {s["LogicalResourceId"] for s in summaries} == {"Queue", "Topic", "Subscription", "Param", "Table", "Logs", "Bucket"}
    assert all(s["ResourceStatus"] == "CREATE_COMPLETE" for s in summaries)
    evs = events(cfn, "app")
    assert evs[0] == ("app", "CREATE_IN_PROGRESS", "User Initiated")
    assert evs[-1] == ("app", "CREATE_COMPLETE", None)
    queue_done = evs.index(("Queue", "CREATE_COMPLETE", None))
    assert queue_done < evs.index(("Subscription", "CREATE_IN_PROGRESS", None))
    exports = cfn.list_exports()["Exports"]
    assert exports == [{"ExportingStackId": stack_id, "Name": "app-queue", "Value": out["QueueUrl"]}]

    client("s3").put_bucket_versioning(Bucket=out["BucketName"], VersioningConfiguration={"Status": "Suspended"})
    cfn.delete_stack(StackName="app")
    gone = deleted(cfn, stack_id)
    assert gone["StackStatus"] == "DELETE_COMPLETE", events(cfn, stack_id)
    with pytest.raises(ClientError) as e:
        cfn.describe_stacks(StackName="app")
    assert error(e) == {"Type": "Sender", "Code": "ValidationError", "Message": "Stack with id app does not exist"}
    with pytest.raises(ClientError):
        sqs.get_queue_url(QueueName="app-dev-jobs")
    assert cfn.list_exports()["Exports"] == []
    listed = cfn.list_stacks(StackStatusFilter=["DELETE_COMPLETE"])["StackSummaries"]
    assert [s["StackId"] for s in listed] == [stack_id]


def test_conditions_choose_resources_and_values(cfn, client):
    cfn.create_stack(StackName="prod", TemplateBody=APP, Parameters=[{"ParameterKey": "Env", "ParameterValue": "prod"}])
    stack = settle(cfn, "prod")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "prod")
    logical = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName="prod")["StackResources"]}
    assert "ProdOnly" in logical
    groups = client("logs").describe_log_groups(logGroupNamePrefix="prod-Logs-")["logGroups"]
    assert [g["retentionInDays"] for g in groups] == [30]


OPTIONAL_KEY = {
    "Parameters": {"KeyId": {"Type": "String", "Default": ""}},
    "Conditions": {"NewKey": {"Fn::Equals": [{"Ref": "KeyId"}, "new"]}},
    "Resources": {
        "Key": {"Type": "AWS::KMS::Key", "Condition": "NewKey", "Properties": {}},
        "Param": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": {
            "Fn::If": ["NewKey", {"Fn::GetAtt": ["Key", "Arn"]}, "no key"]}}},
        "CDKMetadata": {"Type": "AWS::CDK::Metadata", "Properties": {"Analytics": "v2:deflate64:abc"}},
    },
}


def test_a_branch_not_taken_may_name_a_resource_left_out_and_cdk_metadata_creates_nothing(cfn, client):
    cfn.create_stack(StackName="optional", TemplateBody=json.dumps(OPTIONAL_KEY))
    stack = settle(cfn, "optional")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "optional")
    resources = {r["LogicalResourceId"]: r for r in cfn.describe_stack_resources(StackName="optional")["StackResources"]}
    assert set(resources) == {"Param", "CDKMetadata"}
    assert client("ssm").get_parameter(Name=resources["Param"]["PhysicalResourceId"])["Parameter"]["Value"] == "no key"
    stamps = [e["Timestamp"] for e in cfn.describe_stack_events(StackName="optional")["StackEvents"]]
    assert all(newer > older for newer, older in zip(stamps, stamps[1:]))


def test_a_taken_branch_naming_a_resource_left_out_fails_the_stack(cfn):
    body = json.loads(json.dumps(OPTIONAL_KEY))
    body["Resources"]["Param"]["Properties"]["Value"]["Fn::If"][1:] = ["no key", {"Fn::GetAtt": ["Key", "Arn"]}]
    cfn.create_stack(StackName="dangling", TemplateBody=json.dumps(body))
    stack = settle(cfn, "dangling")
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    reasons = [e[2] for e in events(cfn, "dangling") if e[1] == "ROLLBACK_IN_PROGRESS"]
    assert reasons[0].startswith("Template format error: Unresolved resource dependencies [Key] in the Resources block")


def test_validate_template_and_summary(cfn):
    body = json.dumps({
        "Description": "d",
        "Parameters": {"Name": {"Type": "String", "Default": "x", "NoEcho": True, "Description": "the name"},
                       "Size": {"Type": "Number", "AllowedValues": [1, 2]}},
        "Resources": {"Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "r", "AssumeRolePolicyDocument": {}}},
                      "Q": {"Type": "AWS::SQS::Queue"}},
    })
    v = cfn.validate_template(TemplateBody=body)
    assert v["Description"] == "d"
    assert v["Capabilities"] == ["CAPABILITY_NAMED_IAM"]
    assert v["CapabilitiesReason"] == "The following resource(s) require capabilities: [AWS::IAM::Role]"
    params = {p["ParameterKey"]: p for p in v["Parameters"]}
    assert params["Name"] == {"ParameterKey": "Name", "DefaultValue": "x", "NoEcho": True, "Description": "the name"}
    s = cfn.get_template_summary(TemplateBody=body)
    assert s["ResourceTypes"] == ["AWS::IAM::Role", "AWS::SQS::Queue"]
    size = [p for p in s["Parameters"] if p["ParameterKey"] == "Size"][0]
    assert size["ParameterType"] == "Number" and size["ParameterConstraints"] == {"AllowedValues": ["1", "2"]}
    assert s["Version"] == "2010-09-09"
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="iam", TemplateBody=body, Parameters=[{"ParameterKey": "Size", "ParameterValue": "1"}])
    assert error(e)["Code"] == "InsufficientCapabilitiesException"
    assert error(e)["Message"] == "Requires capabilities : [CAPABILITY_NAMED_IAM]"


@pytest.mark.parametrize("body, message", [
    ("{not json", "Template format error: JSON not well-formed."),
    ("a: [", "Template format error: YAML not well-formed."),
    ('{"Resources": {}}', "Template format error: At least one Resources member must be defined."),
    ('{"Resources": {"A": {"Properties": {}}}}', "Template format error: [/Resources/A] Every Resources object must contain a Type member."),
    ('{"Resources": {"A": {"Type": "AWS::SQS::Queue", "Properties": {"X": {"Ref": "Nope"}}}}}',
     "Template format error: Unresolved resource dependencies [Nope] in the Resources block of the template"),
    ('{"Resources": {"A": {"Type": "AWS::SQS::Queue", "DependsOn": "B"}, "B": {"Type": "AWS::SQS::Queue", "DependsOn": "A"}}}',
     "Circular dependency between resources: [A, B]"),
    ('{"Resources": {"A": {"Type": "AWS::SQS::Queue"}}, "Bogus": {}}', "Template format error: Unrecognized section: Bogus"),
])
def test_template_errors_are_validation_errors(cfn, body, message):
    with pytest.raises(ClientError) as e:
        cfn.validate_template(TemplateBody=body)
    assert error(e)["Code"] == "ValidationError"
    assert error(e)["Message"].startswith(message)
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400


PARAMS = """
Parameters:
  Size: {Type: Number, MinValue: 1, MaxValue: 5}
  Name: {Type: String, AllowedPattern: '[a-z]+', ConstraintDescription: lower-case letters}
  Version: {Type: 'AWS::SSM::Parameter::Value<String>', Default: /cdk-bootstrap/hnb659fds/version}
Rules:
  CheckBootstrapVersion:
    Assertions:
      - Assert: !Not [!Contains [['1', '2', '3', '4', '5'], !Ref Version]]
        AssertDescription: CDK bootstrap stack version 6 required.
Resources:
  P:
    Type: AWS::SSM::Parameter
    Properties: {Type: String, Value: !Sub '${Name}-${Size}-${Version}'}
Outputs:
  Name: {Value: !Ref P}
"""


def test_parameters_are_checked_and_ssm_types_resolved_and_rules_asserted(cfn, client):
    p = lambda **kw: [{"ParameterKey": k, "ParameterValue": v} for k, v in kw.items()]
    cases = [
        (p(Size="2"), "Parameters: [Name] must have values"),
        (p(Size="9", Name="ab"), "Parameter 'Size' must be a number not greater than 5"),
        (p(Size="x", Name="ab"), "Parameter 'Size' must be a number."),
        (p(Size="2", Name="AB"), "Parameter 'Name' failed to satisfy constraint: lower-case letters"),
        (p(Size="2", Name="ab", Other="1"), "Parameters: [Other] do not exist in the template"),
        (p(Size="2", Name="ab"), "Unable to fetch parameters [/cdk-bootstrap/hnb659fds/version] from parameter store for this account."),
    ]
    for params, message in cases:
        with pytest.raises(ClientError) as e:
            cfn.create_stack(StackName="p", TemplateBody=PARAMS, Parameters=params)
        assert error(e) == {"Type": "Sender", "Code": "ValidationError", "Message": message}
    ssm = client("ssm")
    ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Type="String", Value="3")
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="p", TemplateBody=PARAMS, Parameters=p(Size="2", Name="ab"))
    assert error(e)["Message"] == "CDK bootstrap stack version 6 required."
    ssm.put_parameter(Name="/cdk-bootstrap/hnb659fds/version", Type="String", Value="21", Overwrite=True)
    cfn.create_stack(StackName="p", TemplateBody=PARAMS, Parameters=p(Size="2", Name="ab"))
    stack = settle(cfn, "p")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "p")
    version = [x for x in stack["Parameters"] if x["ParameterKey"] == "Version"][0]
    assert version == {"ParameterKey": "Version", "ParameterValue": "/cdk-bootstrap/hnb659fds/version", "ResolvedValue": "21"}
    name = outputs(stack)["Name"]
    assert name.startswith("CFN-P-")
    assert ssm.get_parameter(Name=name)["Parameter"]["Value"] == "ab-2-21"


def test_a_failed_resource_rolls_the_stack_back_with_the_services_error(cfn, client):
    body = json.dumps({"Resources": {
        "Good": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "good"}},
        "Bad": {"Type": "AWS::SQS::Queue", "DependsOn": "Good", "Properties": {"QueueName": "bad", "DelaySeconds": 9999}},
    }})
    cfn.create_stack(StackName="rb", TemplateBody=body)
    stack = settle(cfn, "rb")
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE"
    assert ("rb", "ROLLBACK_IN_PROGRESS", "The following resource(s) failed to create: [Bad]. Rollback requested by user.") in events(cfn, "rb")
    failed = [e for e in events(cfn, "rb") if e[1] == "CREATE_FAILED"]
    assert failed[0][0] == "Bad" and "DelaySeconds" in failed[0][2], failed
    assert ("Good", "DELETE_COMPLETE", None) in events(cfn, "rb")
    with pytest.raises(ClientError):
        client("sqs").get_queue_url(QueueName="good")
    with pytest.raises(ClientError) as e:
        cfn.update_stack(StackName="rb", TemplateBody=body)
    assert error(e)["Message"] == f"Stack:{stack['StackId']} is in ROLLBACK_COMPLETE state and can not be updated."
    cfn.delete_stack(StackName="rb")
    assert deleted(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"

    cfn.create_stack(StackName="keep", TemplateBody=body, DisableRollback=True)
    stack = settle(cfn, "keep")
    assert stack["StackStatus"] == "CREATE_FAILED"
    assert client("sqs").get_queue_url(QueueName="good")


def test_unsupported_types_fail_the_resource_clearly(cfn):
    body = json.dumps({"Resources": {"X": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}}}})
    cfn.create_stack(StackName="vpc", TemplateBody=body)
    assert settle(cfn, "vpc")["StackStatus"] == "ROLLBACK_COMPLETE"
    failed = [e for e in events(cfn, "vpc") if e[1] == "CREATE_FAILED"]
    assert failed[0][2].startswith("Roto does not support resource type AWS::EC2::VPC")


def template(resources, outputs=None):
    return json.dumps({"Resources": resources, "Outputs": outputs or {}})


def test_update_in_place_by_replacement_and_removal_then_a_failed_update_rolls_back(cfn, client):
    v1 = template({
        "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/u/p", "Type": "String", "Value": "one"}},
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "u-first"}},
        "Gone": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "u-gone"}},
    }, {"Q": {"Value": {"Ref": "Q"}}})
    cfn.create_stack(StackName="u", TemplateBody=v1)
    assert settle(cfn, "u")["StackStatus"] == "CREATE_COMPLETE"
    with pytest.raises(ClientError) as e:
        cfn.update_stack(StackName="u", TemplateBody=v1)
    assert error(e)["Message"] == "No updates are to be performed."
    v2 = template({
        "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/u/p", "Type": "String", "Value": "two"}},
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "u-second"}},
    }, {"Q": {"Value": {"Ref": "Q"}}})
    cfn.update_stack(StackName="u", TemplateBody=v2)
    stack = settle(cfn, "u")
    assert stack["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "u")
    ssm, sqs = client("ssm"), client("sqs")
    assert ssm.get_parameter(Name="/u/p")["Parameter"]["Value"] == "two"
    assert outputs(stack)["Q"] == sqs.get_queue_url(QueueName="u-second")["QueueUrl"]
    for old in ("u-first", "u-gone"):
        with pytest.raises(ClientError):
            sqs.get_queue_url(QueueName=old)
    statuses = [e[1] for e in events(cfn, "u") if e[0] == "u"]
    assert statuses[-3:] == ["UPDATE_IN_PROGRESS", "UPDATE_COMPLETE_CLEANUP_IN_PROGRESS", "UPDATE_COMPLETE"]

    v3 = template({
        "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Name": "/u/p", "Type": "String", "Value": "three"}},
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "u-second"}},
        "Bad": {"Type": "AWS::SQS::Queue", "DependsOn": "P", "Properties": {"QueueName": "u-bad", "MaximumMessageSize": 1}},
    })
    cfn.update_stack(StackName="u", TemplateBody=v3)
    stack = settle(cfn, "u")
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, "u")
    assert ssm.get_parameter(Name="/u/p")["Parameter"]["Value"] == "two"
    assert {r["LogicalResourceId"] for r in cfn.list_stack_resources(StackName="u")["StackResourceSummaries"]} == {"P", "Q"}
    assert cfn.get_template(StackName="u")["TemplateBody"] == json.loads(v2)


def test_change_sets_create_then_update_a_stack(cfn, client):
    v1 = template({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cs-q"}}})
    created = cfn.create_change_set(StackName="cs", ChangeSetName="first", ChangeSetType="CREATE", TemplateBody=v1)
    assert created["Id"].startswith("arn:aws:cloudformation:us-east-1:000000000000:changeSet/first/")
    assert cfn.describe_stacks(StackName="cs")["Stacks"][0]["StackStatus"] == "REVIEW_IN_PROGRESS"
    described = cfn.describe_change_set(StackName="cs", ChangeSetName="first")
    assert described["Status"] == "CREATE_COMPLETE" and described["ExecutionStatus"] == "AVAILABLE"
    assert described["Changes"] == [{"Type": "Resource", "ResourceChange": {"Action": "Add", "LogicalResourceId": "Q", "ResourceType": "AWS::SQS::Queue"}}]
    cfn.get_waiter("change_set_create_complete").wait(ChangeSetName=created["Id"], WaiterConfig={"Delay": 1})
    cfn.execute_change_set(ChangeSetName=created["Id"])
    assert settle(cfn, "cs")["StackStatus"] == "CREATE_COMPLETE"
    assert client("sqs").get_queue_url(QueueName="cs-q")

    v2 = template({"Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "cs-q2"}},
                   "P": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "v"}}})
    cfn.create_change_set(StackName="cs", ChangeSetName="second", TemplateBody=v2, Description="two")
    changes = cfn.describe_change_set(StackName="cs", ChangeSetName="second")["Changes"]
    by_id = {c["ResourceChange"]["LogicalResourceId"]: c["ResourceChange"] for c in changes}
    assert by_id["P"]["Action"] == "Add"
    assert by_id["Q"]["Action"] == "Modify" and by_id["Q"]["Replacement"] == "True"
    assert by_id["Q"]["PhysicalResourceId"].endswith("/cs-q")
    summaries = cfn.list_change_sets(StackName="cs")["Summaries"]
    assert [(s["ChangeSetName"], s["ExecutionStatus"]) for s in summaries] == [("first", "EXECUTE_COMPLETE"), ("second", "AVAILABLE")]
    cfn.execute_change_set(StackName="cs", ChangeSetName="second")
    assert settle(cfn, "cs")["StackStatus"] == "UPDATE_COMPLETE"
    assert client("sqs").get_queue_url(QueueName="cs-q2")

    cfn.create_change_set(StackName="cs", ChangeSetName="same", TemplateBody=v2)
    same = cfn.describe_change_set(StackName="cs", ChangeSetName="same")
    assert same["Status"] == "FAILED" and same["ExecutionStatus"] == "UNAVAILABLE"
    assert same["StatusReason"] == "The submitted information didn't contain changes. Submit different information to create a change set."
    with pytest.raises(ClientError) as e:
        cfn.execute_change_set(StackName="cs", ChangeSetName="same")
    assert error(e)["Code"] == "InvalidChangeSetStatus"
    cfn.delete_change_set(StackName="cs", ChangeSetName="same")
    with pytest.raises(ClientError) as e:
        cfn.describe_change_set(StackName="cs", ChangeSetName="same")
    assert error(e) == {"Type": "Sender", "Code": "ChangeSetNotFound", "Message": "ChangeSet [same] does not exist"}
    with pytest.raises(ClientError) as e:
        cfn.create_change_set(StackName="cs", ChangeSetName="again", ChangeSetType="CREATE", TemplateBody=v1)
    assert error(e)["Code"] == "AlreadyExistsException"
    with pytest.raises(ClientError) as e:
        cfn.create_change_set(StackName="nope", ChangeSetName="x", TemplateBody=v1)
    assert error(e)["Message"] == "Stack [nope] does not exist"


def test_stack_errors_and_termination_protection(cfn):
    body = template({"Q": {"Type": "AWS::SQS::Queue"}})
    cfn.create_stack(StackName="s", TemplateBody=body, EnableTerminationProtection=True, Tags=[{"Key": "k", "Value": "v"}])
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="s", TemplateBody=body)
    assert error(e) == {"Type": "Sender", "Code": "AlreadyExistsException", "Message": "Stack [s] already exists"}
    stack = settle(cfn, "s")
    assert stack["EnableTerminationProtection"] is True and stack["Tags"] == [{"Key": "k", "Value": "v"}]
    with pytest.raises(ClientError) as e:
        cfn.delete_stack(StackName="s")
    assert error(e)["Message"] == "Stack [s] cannot be deleted while TerminationProtection is enabled"
    cfn.update_termination_protection(StackName="s", EnableTerminationProtection=False)
    cfn.delete_stack(StackName="s")
    cfn.delete_stack(StackName="never-was")
    for op in (lambda: cfn.describe_stack_events(StackName="nope"), lambda: cfn.list_stack_resources(StackName="nope"),
               lambda: cfn.update_stack(StackName="nope", TemplateBody=body), lambda: cfn.get_template(StackName="nope")):
        with pytest.raises(ClientError) as e:
            op()
        assert error(e) == {"Type": "Sender", "Code": "ValidationError", "Message": "Stack with id nope does not exist"}
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="t", TemplateBody=body, TemplateURL="https://s3.amazonaws.com/b/k")
    assert error(e)["Code"] == "ValidationError"


def test_template_url_from_roto_s3_and_imports_across_stacks(cfn, client):
    s3 = client("s3")
    s3.create_bucket(Bucket="templates")
    exporter = template({"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": "shared"}}},
                        {"Name": {"Value": {"Ref": "P"}, "Export": {"Name": "shared-name"}}})
    s3.put_object(Bucket="templates", Key="exporter.json", Body=exporter.encode())
    cfn.create_stack(StackName="exporter", TemplateURL=f"{client('s3').meta.endpoint_url}/templates/exporter.json")
    assert settle(cfn, "exporter")["StackStatus"] == "CREATE_COMPLETE"
    importer = """
Resources:
  P:
    Type: AWS::SSM::Parameter
    Properties:
      Name: /imported
      Type: String
      Value: !ImportValue shared-name
"""
    s3.put_object(Bucket="templates", Key="importer.yaml", Body=importer.encode())
    cfn.create_stack(StackName="importer", TemplateURL="https://templates.s3.amazonaws.com/importer.yaml")
    assert settle(cfn, "importer")["StackStatus"] == "CREATE_COMPLETE"
    exported_name = outputs(cfn.describe_stacks(StackName="exporter")["Stacks"][0])["Name"]
    assert client("ssm").get_parameter(Name="/imported")["Parameter"]["Value"] == exported_name
    assert cfn.list_imports(ExportName="shared-name")["Imports"] == ["importer"]
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="x", TemplateURL="https://templates.s3.amazonaws.com/missing.yaml")
    assert error(e)["Code"] == "ValidationError" and error(e)["Message"].startswith("S3 error:")


def test_iam_lambda_and_dynamic_references(cfn, client):
    client("ssm").put_parameter(Name="/conf/greeting", Type="String", Value="hi")
    client("secretsmanager").create_secret(Name="db", SecretString=json.dumps({"password": "pw"}))
    body = """
Resources:
  Role:
    Type: AWS::IAM::Role
    Properties:
      AssumeRolePolicyDocument:
        Version: '2012-10-17'
        Statement: [{Effect: Allow, Principal: {Service: lambda.amazonaws.com}, Action: sts:AssumeRole}]
      Policies:
        - PolicyName: logs
          PolicyDocument: {Version: '2012-10-17', Statement: [{Effect: Allow, Action: 'logs:*', Resource: '*'}]}
      ManagedPolicyArns: [!Ref Managed]
  Managed:
    Type: AWS::IAM::ManagedPolicy
    Properties:
      PolicyDocument: {Version: '2012-10-17', Statement: [{Effect: Allow, Action: 's3:GetObject', Resource: '*'}]}
  Fn:
    Type: AWS::Lambda::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      Role: !GetAtt Role.Arn
      Environment:
        Variables:
          GREETING: '{{resolve:ssm:/conf/greeting}}'
          PASSWORD: '{{resolve:secretsmanager:db:SecretString:password}}'
      Code:
        ZipFile: |
          import os
          def handler(event, context):
              return {"greeting": os.environ["GREETING"], "password": os.environ["PASSWORD"]}
  Perm:
    Type: AWS::Lambda::Permission
    Properties:
      FunctionName: !Ref Fn
      Action: lambda:InvokeFunction
      Principal: sns.amazonaws.com
  Key:
    Type: AWS::KMS::Key
    Properties:
      Description: k
  Alias:
    Type: AWS::KMS::Alias
    Properties:
      AliasName: alias/app
      TargetKeyId: !Ref Key
  Secret:
    Type: AWS::SecretsManager::Secret
    Properties:
      GenerateSecretString: {SecretStringTemplate: '{"user": "app"}', GenerateStringKey: password, PasswordLength: 12}
Outputs:
  Fn: {Value: !Ref Fn}
  Role: {Value: !Ref Role}
  Secret: {Value: !Ref Secret}
"""
    cfn.create_stack(StackName="fn", TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    stack = settle(cfn, "fn")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "fn")
    out = outputs(stack)
    iam = client("iam")
    assert iam.list_role_policies(RoleName=out["Role"])["PolicyNames"] == ["logs"]
    assert len(iam.list_attached_role_policies(RoleName=out["Role"])["AttachedPolicies"]) == 1
    lam = client("lambda")
    env = lam.get_function_configuration(FunctionName=out["Fn"])["Environment"]["Variables"]
    assert env == {"GREETING": "hi", "PASSWORD": "pw"}
    result = lam.invoke(FunctionName=out["Fn"], Payload=b"{}")
    assert json.loads(result["Payload"].read()) == {"greeting": "hi", "password": "pw"}
    policy = json.loads(lam.get_policy(FunctionName=out["Fn"])["Policy"])
    assert policy["Statement"][0]["Principal"] == {"Service": "sns.amazonaws.com"}
    aliases = [a["AliasName"] for a in client("kms").list_aliases()["Aliases"]]
    assert "alias/app" in aliases
    secret = json.loads(client("secretsmanager").get_secret_value(SecretId=out["Secret"])["SecretString"])
    assert secret["user"] == "app" and len(secret["password"]) == 12

    cfn.delete_stack(StackName="fn")
    assert deleted(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE", events(cfn, stack["StackId"])
    with pytest.raises(ClientError):
        iam.get_role(RoleName=out["Role"])
    with pytest.raises(ClientError):
        lam.get_function(FunctionName=out["Fn"])


def test_deletion_policy_retain_keeps_the_resource(cfn, client):
    body = template({"B": {"Type": "AWS::S3::Bucket", "DeletionPolicy": "Retain", "Properties": {"BucketName": "kept"}}})
    cfn.create_stack(StackName="r", TemplateBody=body)
    stack_id = settle(cfn, "r")["StackId"]
    cfn.delete_stack(StackName="r")
    assert deleted(cfn, stack_id)["StackStatus"] == "DELETE_COMPLETE"
    assert ("B", "DELETE_SKIPPED", None) in events(cfn, stack_id)
    client("s3").head_bucket(Bucket="kept")


def test_custom_resource_backed_by_lambda_answers_through_the_response_url(cfn, client):
    code = """
import json, urllib.request
def handler(event, context):
    body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": "custom-" + event["RequestType"],
                       "StackId": event["StackId"], "RequestId": event["RequestId"],
                       "LogicalResourceId": event["LogicalResourceId"],
                       "Data": {"Echo": event["ResourceProperties"].get("Value", "")}}).encode()
    req = urllib.request.Request(event["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""})
    urllib.request.urlopen(req).read()
"""
    from lambda_helpers import zip_of
    lam = client("lambda")
    arn = lam.create_function(FunctionName="provider", Runtime="python3.12", Role=ROLE, Handler="index.handler",
                              Code={"ZipFile": zip_of({"index.py": code})})["FunctionArn"]
    body = template({"C": {"Type": "Custom::Echo", "Properties": {"ServiceToken": arn, "Value": "v1"}}},
                    {"Echo": {"Value": {"Fn::GetAtt": ["C", "Echo"]}}, "Id": {"Value": {"Ref": "C"}}})
    cfn.create_stack(StackName="custom", TemplateBody=body)
    stack = settle(cfn, "custom", timeout=60)
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "custom")
    assert outputs(stack) == {"Echo": "v1", "Id": "custom-Create"}
    cfn.delete_stack(StackName="custom")
    assert deleted(cfn, stack["StackId"], timeout=60)["StackStatus"] == "DELETE_COMPLETE"


def test_fifty_resources_create_in_under_a_second_of_server_time(cfn):
    resources = {f"P{i}": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": str(i)}} for i in range(50)}
    cfn.create_stack(StackName="big", TemplateBody=template(resources))
    stack = settle(cfn, "big")
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    stamps = [e["Timestamp"] for e in cfn.describe_stack_events(StackName="big")["StackEvents"] if e["LogicalResourceId"] == "big"]
    assert (max(stamps) - min(stamps)).total_seconds() < 1.0


CHILD = json.dumps({
    "Parameters": {"Value": {"Type": "String"}},
    "Resources": {"P": {"Type": "AWS::SSM::Parameter", "Properties": {"Type": "String", "Value": {"Ref": "Value"}}}},
    "Outputs": {"Name": {"Value": {"Ref": "P"}}},
})


def parent(url):
    return json.dumps({
        "Resources": {"Child": {"Type": "AWS::CloudFormation::Stack",
                                "Properties": {"TemplateURL": url, "Parameters": {"Value": "from parent"}}}},
        "Outputs": {"ChildName": {"Value": {"Fn::GetAtt": ["Child", "Outputs.Name"]}}},
    })


def test_nested_stacks_are_created_with_their_outputs_and_deleted_with_their_parent(cfn, client):
    client("s3").create_bucket(Bucket="templates")
    client("s3").put_object(Bucket="templates", Key="child.json", Body=CHILD.encode())
    cfn.create_stack(StackName="outer", TemplateBody=parent("https://s3.amazonaws.com/templates/child.json"))
    stack = settle(cfn, "outer")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "outer")
    child_id = cfn.describe_stack_resource(StackName="outer", LogicalResourceId="Child")[
        "StackResourceDetail"]["PhysicalResourceId"]
    child = cfn.describe_stacks(StackName=child_id)["Stacks"][0]
    assert child["StackName"].startswith("outer-Child-")
    name = outputs(stack)["ChildName"]
    assert client("ssm").get_parameter(Name=name)["Parameter"]["Value"] == "from parent"

    cfn.delete_stack(StackName="outer")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert cfn.describe_stacks(StackName=child_id)["Stacks"][0]["StackStatus"] == "DELETE_COMPLETE"


def test_a_failed_nested_stack_fails_and_rolls_back_its_parent(cfn, client):
    client("s3").create_bucket(Bucket="templates")
    bad = json.dumps({"Resources": {"X": {"Type": "AWS::EC2::VPC", "Properties": {"CidrBlock": "10.0.0.0/16"}}}})
    client("s3").put_object(Bucket="templates", Key="bad.json", Body=bad.encode())
    body = json.dumps({"Resources": {"Child": {"Type": "AWS::CloudFormation::Stack",
                                               "Properties": {"TemplateURL": "https://s3.amazonaws.com/templates/bad.json"}}}})
    cfn.create_stack(StackName="outer", TemplateBody=body)
    assert settle(cfn, "outer")["StackStatus"] == "ROLLBACK_COMPLETE"
    failed = [e for e in events(cfn, "outer") if e[1] == "CREATE_FAILED"]
    assert failed[0][0] == "Child"
    assert failed[0][2].startswith("Embedded stack arn:aws:cloudformation:")
    assert "was not successfully created" in failed[0][2]


def test_custom_resource_backed_by_sns_is_published_and_answers_through_the_response_url(cfn, client):
    import urllib.request
    sns, sqs = client("sns"), client("sqs")
    topic = sns.create_topic(Name="provider")["TopicArn"]
    queue = sqs.create_queue(QueueName="provider-requests")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})

    def answer(physical):
        messages = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=10).get("Messages", [])
        assert messages, "no request was published"
        request = json.loads(messages[0]["Body"])
        body = json.dumps({"Status": "SUCCESS", "PhysicalResourceId": physical, "StackId": request["StackId"],
                           "RequestId": request["RequestId"], "LogicalResourceId": request["LogicalResourceId"],
                           "Data": {"Seen": request["ResourceProperties"]["Value"]}}).encode()
        put = urllib.request.Request(request["ResponseURL"], data=body, method="PUT", headers={"Content-Type": ""})
        urllib.request.urlopen(put).read()
        return request

    body = template({"C": {"Type": "Custom::Topic", "Properties": {"ServiceToken": topic, "Value": "v1"}}},
                    {"Seen": {"Value": {"Fn::GetAtt": ["C", "Seen"]}}, "Id": {"Value": {"Ref": "C"}}})
    stack_id = cfn.create_stack(StackName="sns-custom", TemplateBody=body)["StackId"]
    request = answer("from-sns")
    assert (request["RequestType"], request["ResourceType"], request["ServiceToken"]) == ("Create", "Custom::Topic", topic)
    stack = settle(cfn, "sns-custom")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "sns-custom")
    assert outputs(stack) == {"Seen": "v1", "Id": "from-sns"}
    cfn.delete_stack(StackName="sns-custom")
    request = answer("from-sns")
    assert (request["RequestType"], request["PhysicalResourceId"]) == ("Delete", "from-sns")
    assert deleted(cfn, stack_id)["StackStatus"] == "DELETE_COMPLETE"


def test_a_service_token_naming_neither_a_function_nor_a_topic_fails_the_resource(cfn):
    body = template({"C": {"Type": "Custom::X", "Properties": {"ServiceToken": "arn:aws:sqs:us-east-1:000000000000:q"}}})
    cfn.create_stack(StackName="bad-token", TemplateBody=body)
    assert settle(cfn, "bad-token")["StackStatus"] == "ROLLBACK_COMPLETE"
    reason = next(r for lid, status, r in events(cfn, "bad-token") if lid == "C" and status == "CREATE_FAILED")
    assert reason.startswith("Invalid service token arn:aws:sqs:us-east-1:000000000000:q")
