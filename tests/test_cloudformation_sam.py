"""The SAM transform (AWS::Serverless-2016-10-31), black-box with boto3: SAM templates given
to CreateStack expand into the resources SAM defines (functions with their roles, events and
URLs, simple tables, layers, state machines, Globals merged in), which then work as
resources made any other way; and what the transform cannot expand is a ValidationError
naming the resource, as SAM words it."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import zip_of
from test_cloudformation import events, outputs, settle

APP = """
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Timeout: 10
    Environment:
      Variables:
        TABLE: !Ref Items
Resources:
  Items:
    Type: AWS::Serverless::SimpleTable
    Properties:
      PrimaryKey: {Name: pk, Type: String}
  Jobs:
    Type: AWS::SQS::Queue
  Alerts:
    Type: AWS::SNS::Topic
  Shared:
    Type: AWS::Serverless::LayerVersion
    Properties:
      ContentUri: s3://sam-artifacts/layer.zip
      CompatibleRuntimes: [python3.12]
      RetentionPolicy: Delete
  Worker:
    Type: AWS::Serverless::Function
    Properties:
      Handler: index.handler
      InlineCode: |
        import os
        def handler(event, context):
            return {"table": os.environ["TABLE"], "mode": os.environ["MODE"]}
      Layers: [!Ref Shared]
      Environment:
        Variables:
          MODE: worker
      Policies:
        - AWSLambdaBasicExecutionRole
        - DynamoDBCrudPolicy: {TableName: !Ref Items}
        - Statement: [{Effect: Allow, Action: sqs:SendMessage, Resource: !GetAtt Jobs.Arn}]
      FunctionUrlConfig:
        AuthType: NONE
      Events:
        FromQueue:
          Type: SQS
          Properties: {Queue: !GetAtt Jobs.Arn, BatchSize: 5}
        FromTopic:
          Type: SNS
          Properties: {Topic: !Ref Alerts}
        Nightly:
          Type: Schedule
          Properties: {Schedule: rate(1 day), Enabled: false}
        OnEvent:
          Type: EventBridgeRule
          Properties:
            Pattern: {source: [app.orders]}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition:
        StartAt: Done
        States:
          Done: {Type: Pass, Result: {ok: true}, End: true}
      Policies:
        - LambdaInvokePolicy: {FunctionName: !Ref Worker}
Outputs:
  WorkerName: {Value: !Ref Worker}
  WorkerRole: {Value: !Ref WorkerRole}
  TableName: {Value: !Ref Items}
  FlowArn: {Value: !Ref Flow}
  LayerArn: {Value: !Ref Shared}
  Url: {Value: !GetAtt WorkerUrl.FunctionUrl}
"""


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def test_a_sam_application_expands_into_working_resources(cfn, client):
    s3 = client("s3")
    s3.create_bucket(Bucket="sam-artifacts")
    s3.put_object(Bucket="sam-artifacts", Key="layer.zip", Body=zip_of({"python/shared.py": "X = 1\n"}))
    cfn.create_stack(StackName="sam", TemplateBody=APP, Capabilities=["CAPABILITY_IAM"])
    stack = settle(cfn, "sam")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "sam")
    out = outputs(stack)

    resources = {r["LogicalResourceId"]: r["ResourceType"]
                 for r in cfn.describe_stack_resources(StackName="sam")["StackResources"]}
    assert resources == {
        "Items": "AWS::DynamoDB::Table", "Jobs": "AWS::SQS::Queue", "Alerts": "AWS::SNS::Topic",
        "Shared": "AWS::Lambda::LayerVersion", "Worker": "AWS::Lambda::Function",
        "WorkerRole": "AWS::IAM::Role", "WorkerFromQueue": "AWS::Lambda::EventSourceMapping",
        "WorkerFromTopic": "AWS::SNS::Subscription", "WorkerFromTopicPermission": "AWS::Lambda::Permission",
        "WorkerNightly": "AWS::Events::Rule", "WorkerNightlyPermission": "AWS::Lambda::Permission",
        "WorkerOnEvent": "AWS::Events::Rule", "WorkerOnEventPermission": "AWS::Lambda::Permission",
        "WorkerUrl": "AWS::Lambda::Url", "WorkerUrlPublicPermissions": "AWS::Lambda::Permission",
        "Flow": "AWS::StepFunctions::StateMachine", "FlowRole": "AWS::IAM::Role",
    }

    lam = client("lambda")
    answer = lam.invoke(FunctionName=out["WorkerName"])
    assert json.loads(answer["Payload"].read()) == {"table": out["TableName"], "mode": "worker"}
    config = lam.get_function_configuration(FunctionName=out["WorkerName"])
    assert (config["Runtime"], config["Timeout"]) == ("python3.12", 10)
    assert [layer["Arn"] for layer in config["Layers"]] == [out["LayerArn"]]
    assert out["Url"].startswith("http")
    mappings = lam.list_event_source_mappings(FunctionName=out["WorkerName"])["EventSourceMappings"]
    assert [m["BatchSize"] for m in mappings] == [5]

    table = client("dynamodb").describe_table(TableName=out["TableName"])["Table"]
    assert table["KeySchema"] == [{"AttributeName": "pk", "KeyType": "HASH"}]
    assert table["BillingModeSummary"]["BillingMode"] == "PAY_PER_REQUEST"

    iam = client("iam")
    attached = {p["PolicyName"] for p in iam.list_attached_role_policies(RoleName=out["WorkerRole"])["AttachedPolicies"]}
    assert {"AWSLambdaBasicExecutionRole", "AWSLambdaSQSQueueExecutionRole"} <= attached
    inline = iam.list_role_policies(RoleName=out["WorkerRole"])["PolicyNames"]
    assert sorted(inline) == ["WorkerRolePolicy1", "WorkerRolePolicy2"]
    crud = iam.get_role_policy(RoleName=out["WorkerRole"], PolicyName="WorkerRolePolicy1")["PolicyDocument"]
    assert crud["Statement"][0]["Resource"][0].endswith(f":table/{out['TableName']}")

    rules = client("events").list_rules()["Rules"]
    states = sorted(r["State"] for r in rules if r["Name"].startswith("sam-Worker"))
    assert states == ["DISABLED", "ENABLED"]

    sfn = client("stepfunctions")
    execution = sfn.start_execution(stateMachineArn=out["FlowArn"])["executionArn"]
    assert sfn.describe_execution(executionArn=execution)["status"] in ("RUNNING", "SUCCEEDED")

    cfn.delete_stack(StackName="sam")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert client("lambda").list_layer_versions(LayerName="Shared")["LayerVersions"] == []


@pytest.mark.parametrize("resource, message", [
    ({"Type": "AWS::Serverless::Function", "Properties": {"CodeUri": "./src", "Handler": "h", "Runtime": "python3.12"}},
     "Resource with id [R] is invalid. 'CodeUri' is not a valid S3 Uri of the form 's3://bucket/key'"),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12",
        "Events": {"Get": {"Type": "Api", "Properties": {"Path": "/", "Method": "get"}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid."),
    ({"Type": "AWS::Serverless::Application", "Properties": {"Location": "x"}},
     "Resource with id [R] is invalid."),
])
def test_what_the_transform_cannot_expand_is_a_validation_error(cfn, resource, message):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {"R": resource}})
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="bad", TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationError"
    assert err["Message"].startswith(
        "Transform AWS::Serverless-2016-10-31 failed with: Invalid Serverless Application Specification document. "
        "Number of errors found: 1. ")
    assert message in err["Message"]


def test_the_processed_template_holds_the_expanded_resources(cfn):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {
        "T": {"Type": "AWS::Serverless::SimpleTable"}}})
    cfn.create_stack(StackName="table", TemplateBody=body)
    assert settle(cfn, "table")["StackStatus"] == "CREATE_COMPLETE"
    processed = cfn.get_template(StackName="table", TemplateStage="Processed")["TemplateBody"]
    assert processed["Resources"]["T"]["Type"] == "AWS::DynamoDB::Table"
    original = cfn.get_template(StackName="table")["TemplateBody"]
    assert original["Resources"]["T"]["Type"] == "AWS::Serverless::SimpleTable"
