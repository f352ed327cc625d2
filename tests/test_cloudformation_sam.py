"""The SAM transform (AWS::Serverless-2016-10-31), black-box with boto3: SAM templates given
to CreateStack expand into the resources SAM defines (functions with their roles, events and
URLs, simple tables, layers, state machines, Globals merged in), which then work as
resources made any other way; and what the transform cannot expand is a ValidationError
naming the resource, as SAM words it."""

from __future__ import annotations

import http.client
import json

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import zip_of
from test_cloudformation import events, outputs, settle
from test_cloudformation_types import http_get

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
    cfn.create_stack(StackName="sam", TemplateBody=APP,
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
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
        "WorkerURLInvokeAllowPublicAccess": "AWS::Lambda::Permission",
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
        "Events": {"Get": {"Type": "S3", "Properties": {"Bucket": "b", "Events": "s3:ObjectCreated:*"}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12",
        "Events": {"Get": {"Type": "Api", "Properties": {"Path": "/", "Method": "get", "RestApiId": "abc"}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid. RestApiId must be a valid reference to an "
     "'AWS::Serverless::Api' resource in same template."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12",
        "Events": {"Get": {"Type": "Api", "Properties": {"Path": "/"}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid. Missing required property 'Method'."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12", "AutoPublishAlias": "1"}},
     "Resource with id [R] is invalid. AutoPublishAlias name ('1') must contain only alphanumeric characters"),
    ({"Type": "AWS::Serverless::StateMachine", "Properties": {
        "Definition": {}, "Events": {"Get": {"Type": "Api", "Properties": {"Path": "/"}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid. Missing required property 'Method'."),
    ({"Type": "AWS::Serverless::StateMachine", "Properties": {
        "Definition": {}, "Events": {"Get": {"Type": "SQS", "Properties": {}}}}},
     "Resource with id [R] is invalid. Event with id [Get] is invalid. Roto's SAM transform does not support "
     "state machine events of type SQS yet."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12", "DeploymentPreference": {"Type": "AllAtOnce"}}},
     "Resource with id [R] is invalid. 'DeploymentPreference' requires AutoPublishAlias property to be specified."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12", "AutoPublishAlias": "live",
        "DeploymentPreference": {"Alarms": []}}},
     "Resource with id [R] is invalid. 'DeploymentPreference' is missing required Property 'Type'"),
    ({"Type": "AWS::Serverless::Api", "Properties": {}},
     "Resource with id [R] is invalid. Missing required property 'StageName'."),
    ({"Type": "AWS::Serverless::Api", "Properties": {"StageName": "v1", "Auth": {"UsagePlan": {"Throttle": {}}}}},
     "Resource with id [R] is invalid. 'CreateUsagePlan' is a required field for UsagePlan."),
    ({"Type": "AWS::Serverless::Api", "Properties": {"StageName": "v1", "Auth": {"DefaultAuthorizer": "Gate"}}},
     "Resource with id [R] is invalid. Unable to set DefaultAuthorizer because 'Gate' was not defined in "
     "'Authorizers'."),
    ({"Type": "AWS::Serverless::Function", "Properties": {
        "InlineCode": "x", "Handler": "h", "Runtime": "python3.12",
        "Events": {"Get": {"Type": "Api", "Properties": {"Path": "/", "Method": "get", "Auth": {"Authorizer": "Gate"}}}}}},
     "Event with id [Get] is invalid. Unable to set Authorizer [Gate] on API method [get] for path [/] because "
     "the related API does not define any Authorizers."),
    ({"Type": "AWS::Serverless::Application", "Properties": {"Location": "x"}},
     "Resource with id [R] is invalid."),
])
def test_what_the_transform_cannot_expand_is_a_validation_error(cfn, resource, message):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {"R": resource}})
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="bad", TemplateBody=body,
                         Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    err = e.value.response["Error"]
    assert err["Code"] == "ValidationError"
    assert err["Message"].startswith(
        "Transform AWS::Serverless-2016-10-31 failed with: Invalid Serverless Application Specification document. "
        "Number of errors found: 1. ")
    assert message in err["Message"]


def test_the_processed_template_holds_the_expanded_resources(cfn):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {
        "T": {"Type": "AWS::Serverless::SimpleTable"}}})
    cfn.create_stack(StackName="table", TemplateBody=body, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    assert settle(cfn, "table")["StackStatus"] == "CREATE_COMPLETE"
    processed = cfn.get_template(StackName="table", TemplateStage="Processed")["TemplateBody"]
    assert processed["Resources"]["T"]["Type"] == "AWS::DynamoDB::Table"
    original = cfn.get_template(StackName="table")["TemplateBody"]
    assert original["Resources"]["T"]["Type"] == "AWS::Serverless::SimpleTable"


def test_create_and_update_stack_run_a_transform_only_when_acknowledged(cfn):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {
        "T": {"Type": "AWS::Serverless::SimpleTable"}}})
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="unacknowledged", TemplateBody=body, Capabilities=["CAPABILITY_IAM"])
    assert e.value.response["Error"]["Code"] == "InsufficientCapabilitiesException"
    assert e.value.response["Error"]["Message"] == "Requires capabilities : [CAPABILITY_AUTO_EXPAND]"
    plain = json.dumps({"Resources": {"Q": {"Type": "AWS::SQS::Queue"}}})
    cfn.create_stack(StackName="later", TemplateBody=plain)
    assert settle(cfn, "later")["StackStatus"] == "CREATE_COMPLETE"
    with pytest.raises(ClientError) as e:
        cfn.update_stack(StackName="later", TemplateBody=body)
    assert e.value.response["Error"]["Code"] == "InsufficientCapabilitiesException"


API_APP = """
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Orders:
    Type: AWS::Serverless::Api
    Properties:
      StageName: v1
      Variables: {tier: gold}
  Hello:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        import json
        def handler(event, context):
            return {"statusCode": 200, "body": json.dumps({
                "path": event.get("path") or event.get("rawPath"),
                "params": event.get("pathParameters")})}
      Events:
        Get:
          Type: Api
          Properties: {Path: "/hello/{name}", Method: get}
        Listed:
          Type: Api
          Properties: {Path: /orders, Method: any, RestApiId: !Ref Orders}
        Hi:
          Type: HttpApi
          Properties: {Path: /hi, Method: GET}
        Fallback:
          Type: HttpApi
Outputs:
  Rest: {Value: !Ref ServerlessRestApi}
  Orders: {Value: !Ref Orders}
  Http: {Value: !Ref ServerlessHttpApi}
"""


def test_sam_apis_explicit_and_implicit_serve_their_functions_events(cfn, client, server):
    """Deployed as `sam deploy` does: a change set, which needs no CAPABILITY_AUTO_EXPAND."""
    created = cfn.create_change_set(StackName="apis", ChangeSetName="deploy", ChangeSetType="CREATE",
                                    TemplateBody=API_APP, Capabilities=["CAPABILITY_IAM"])
    cfn.get_waiter("change_set_create_complete").wait(
        ChangeSetName=created["Id"], WaiterConfig={"Delay": 1, "MaxAttempts": 30})
    cfn.execute_change_set(ChangeSetName=created["Id"])
    stack = settle(cfn, "apis")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "apis")
    out = outputs(stack)

    kinds = {r["LogicalResourceId"]: r["ResourceType"]
             for r in cfn.describe_stack_resources(StackName="apis")["StackResources"]}
    deployments = sorted(k for k in kinds if "Deployment" in k)
    assert [d[:-10] for d in deployments] == ["OrdersDeployment", "ServerlessRestApiDeployment"]
    assert {k: v for k, v in kinds.items() if k not in deployments} == {
        "Hello": "AWS::Lambda::Function", "HelloRole": "AWS::IAM::Role",
        "Orders": "AWS::ApiGateway::RestApi", "Ordersv1Stage": "AWS::ApiGateway::Stage",
        "ServerlessRestApi": "AWS::ApiGateway::RestApi",
        "ServerlessRestApiProdStage": "AWS::ApiGateway::Stage",
        "ServerlessHttpApi": "AWS::ApiGatewayV2::Api",
        "ServerlessHttpApiApiGatewayDefaultStage": "AWS::ApiGatewayV2::Stage",
        "HelloGetPermissionProd": "AWS::Lambda::Permission",
        "HelloListedPermissionv1": "AWS::Lambda::Permission",
        "HelloHiPermission": "AWS::Lambda::Permission",
        "HelloFallbackPermission": "AWS::Lambda::Permission",
    }

    status, body = http_get(server, f"/_aws/execute-api/{out['Rest']}/Prod/hello/ann")
    assert status == 200, body
    assert json.loads(body) == {"path": "/hello/ann", "params": {"name": "ann"}}
    status, body = http_get(server, f"/_aws/execute-api/{out['Orders']}/v1/orders")
    assert (status, json.loads(body)["path"]) == (200, "/orders")
    status, body = http_get(server, f"/_aws/execute-api/{out['Http']}/hi")
    assert (status, json.loads(body)["path"]) == (200, "/hi")
    status, body = http_get(server, f"/_aws/execute-api/{out['Http']}/any/other")
    assert (status, json.loads(body)["path"]) == (200, "/any/other")

    apigw = client("apigateway")
    stages = {s["stageName"]: s for s in apigw.get_stages(restApiId=out["Orders"])["item"]}
    assert sorted(stages) == ["Stage", "v1"]
    assert stages["v1"]["variables"] == {"tier": "gold"}
    assert apigw.get_rest_api(restApiId=out["Rest"])["name"] == "apis"

    changed = API_APP.replace("/hello/{name}", "/greet/{name}")
    cfn.update_stack(StackName="apis", TemplateBody=changed,
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    assert settle(cfn, "apis")["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "apis")
    status, body = http_get(server, f"/_aws/execute-api/{out['Rest']}/Prod/greet/bo")
    assert (status, json.loads(body)["params"]) == (200, {"name": "bo"})
    assert len(apigw.get_deployments(restApiId=out["Rest"])["items"]) == 1

    cfn.delete_stack(StackName="apis")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert apigw.get_rest_apis()["items"] == []
    assert client("apigatewayv2").get_apis()["Items"] == []


DEFINED = {
    "Transform": "AWS::Serverless-2016-10-31",
    "Resources": {
        "Public": {"Type": "AWS::Serverless::HttpApi", "Properties": {
            "StageName": "dev", "CorsConfiguration": True, "StageVariables": {"color": "red"}}},
        "Documented": {"Type": "AWS::Serverless::Api", "Properties": {
            "StageName": "live", "OpenApiVersion": "3.0.1", "Cors": {"AllowOrigin": "'*'", "MaxAge": 600},
            "DefinitionBody": {
                "openapi": "3.0.1", "info": {"title": "documented", "version": "1"}, "paths": {"/static": {"get": {
                    "x-amazon-apigateway-integration": {
                        "type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
                        "responses": {"default": {"statusCode": "200",
                                                  "responseTemplates": {"application/json": '{"static": true}'}}}}}}}}}},
        "Fn": {"Type": "AWS::Serverless::Function", "Properties": {
            "Runtime": "python3.12", "Handler": "index.handler",
            "InlineCode": "def handler(event, context):\n    return {'statusCode': 200, 'body': 'fn'}\n",
            "Events": {
                "Items": {"Type": "HttpApi", "Properties": {"ApiId": {"Ref": "Public"}, "Path": "/items", "Method": "get"}},
                "Dynamic": {"Type": "Api", "Properties": {"RestApiId": {"Ref": "Documented"}, "Path": "/dynamic", "Method": "get"}},
            }}},
    },
    "Outputs": {"Public": {"Value": {"Ref": "Public"}}, "Documented": {"Value": {"Ref": "Documented"}}},
}


def test_explicit_apis_keep_their_definitions_stages_and_cors(cfn, client, server):
    cfn.create_stack(StackName="defined", TemplateBody=json.dumps(DEFINED),
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    stack = settle(cfn, "defined")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "defined")
    out = outputs(stack)
    kinds = {r["LogicalResourceId"] for r in cfn.describe_stack_resources(StackName="defined")["StackResources"]}
    assert {"PublicdevStage", "DocumentedliveStage", "FnItemsPermission",
            "FnDynamicPermissionlive"} <= kinds
    status, body = http_get(server, f"/_aws/execute-api/{out['Public']}/dev/items")
    assert (status, body) == (200, b"fn")
    v2 = client("apigatewayv2")
    assert v2.get_api(ApiId=out["Public"])["CorsConfiguration"]["AllowOrigins"] == ["*"]
    assert v2.get_stage(ApiId=out["Public"], StageName="dev")["StageVariables"] == {"color": "red"}
    status, body = http_get(server, f"/_aws/execute-api/{out['Documented']}/live/static")
    assert (status, json.loads(body)) == (200, {"static": True})
    status, body = http_get(server, f"/_aws/execute-api/{out['Documented']}/live/dynamic")
    assert (status, body) == (200, b"fn")
    stages = [s["stageName"] for s in client("apigateway").get_stages(restApiId=out["Documented"])["item"]]
    assert stages == ["live"]
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    conn.request("OPTIONS", f"/_aws/execute-api/{out['Documented']}/live/dynamic")
    preflight = conn.getresponse()
    preflight.read()
    conn.close()
    assert preflight.status == 200
    assert preflight.getheader("Access-Control-Allow-Origin") == "*"
    assert preflight.getheader("Access-Control-Allow-Methods") == "GET,OPTIONS"
    assert preflight.getheader("Access-Control-Max-Age") == "600"


PUBLISHED = """
Transform: AWS::Serverless-2016-10-31
Resources:
  Uploads:
    Type: AWS::S3::Bucket
  Work:
    Type: AWS::SQS::Queue
  Handler:
    Type: AWS::Serverless::Function
    Properties:
      Runtime: python3.12
      Handler: index.handler
      InlineCode: |
        def handler(event, context):
            for record in event.get("Records", []):
                if "s3" in record:
                    print("key=" + record["s3"]["object"]["key"])
            return "ok"
      AutoPublishAlias: live
      VersionDescription: first
      DeploymentPreference: {Type: AllAtOnce}
      Events:
        Upload:
          Type: S3
          Properties:
            Bucket: !Ref Uploads
            Events: s3:ObjectCreated:*
            Filter: {S3Key: {Rules: [{Name: prefix, Value: in/}]}}
        Jobs:
          Type: SQS
          Properties: {Queue: !GetAtt Work.Arn}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: Done, States: {Done: {Type: Succeed}}}
      Events:
        Hourly: {Type: Schedule, Properties: {Schedule: rate(1 hour), Input: '{"a": 1}'}}
        OnOrder: {Type: EventBridgeRule, Properties: {Pattern: {source: [shop]}}}
Outputs:
  Bucket: {Value: !Ref Uploads}
  Function: {Value: !Ref Handler}
  Alias: {Value: !Ref HandlerAliaslive}
  Flow: {Value: !Ref Flow}
"""


def test_s3_events_published_aliases_and_state_machine_events(cfn, client):
    import time
    cfn.create_stack(StackName="published", TemplateBody=PUBLISHED,
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    stack = settle(cfn, "published", timeout=60)
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "published")
    out = outputs(stack)
    resources = {r["LogicalResourceId"]: r["ResourceType"]
                 for r in cfn.describe_stack_resources(StackName="published")["StackResources"]}
    versions = [k for k in resources if k.startswith("HandlerVersion")]
    assert len(versions) == 1 and len(versions[0]) == len("HandlerVersion") + 10
    assert {k: v for k, v in resources.items() if k not in versions} == {
        "Uploads": "AWS::S3::Bucket", "Work": "AWS::SQS::Queue", "Handler": "AWS::Lambda::Function",
        "HandlerRole": "AWS::IAM::Role", "HandlerAliaslive": "AWS::Lambda::Alias",
        "HandlerUploadPermission": "AWS::Lambda::Permission", "HandlerJobs": "AWS::Lambda::EventSourceMapping",
        "Flow": "AWS::StepFunctions::StateMachine", "FlowRole": "AWS::IAM::Role",
        "FlowHourly": "AWS::Events::Rule", "FlowHourlyRole": "AWS::IAM::Role",
        "FlowOnOrder": "AWS::Events::Rule", "FlowOnOrderRole": "AWS::IAM::Role",
        "ServerlessDeploymentApplication": "AWS::CodeDeploy::Application",
        "CodeDeployServiceRole": "AWS::IAM::Role",
        "HandlerDeploymentGroup": "AWS::CodeDeploy::DeploymentGroup",
    }
    processed = cfn.get_template(StackName="published", TemplateStage="Processed")["TemplateBody"]["Resources"]
    assert processed[versions[0]]["DeletionPolicy"] == "Retain"
    assert processed["HandlerAliaslive"]["UpdatePolicy"] == {"CodeDeployLambdaAliasUpdate": {
        "ApplicationName": {"Ref": "ServerlessDeploymentApplication"},
        "DeploymentGroupName": {"Ref": "HandlerDeploymentGroup"}}}
    assert processed["Uploads"]["DependsOn"] == ["HandlerUploadPermission"]

    lam = client("lambda")
    alias = lam.get_alias(FunctionName=out["Function"], Name="live")
    assert (alias["AliasArn"], alias["FunctionVersion"]) == (out["Alias"], "1")
    assert lam.get_function_configuration(FunctionName=out["Function"], Qualifier="1")["Description"] == "first"
    mapping = lam.list_event_source_mappings(FunctionName=out["Alias"])["EventSourceMappings"][0]
    assert mapping["FunctionArn"] == out["Alias"]
    s3 = client("s3")
    notification = s3.get_bucket_notification_configuration(Bucket=out["Bucket"])["LambdaFunctionConfigurations"][0]
    assert (notification["LambdaFunctionArn"], notification["Events"]) == (out["Alias"], ["s3:ObjectCreated:*"])
    assert notification["Filter"]["Key"]["FilterRules"][0]["Value"] == "in/"
    s3.put_object(Bucket=out["Bucket"], Key="in/report.csv", Body=b"x")
    logs, deadline, found = client("logs"), time.time() + 30, []
    while not found and time.time() < deadline:
        try:
            found = logs.filter_log_events(logGroupName=f"/aws/lambda/{out['Function']}",
                                           filterPattern='"key=in/report.csv"')["events"]
        except ClientError:
            pass
        time.sleep(0.2)
    assert found, "the upload did not invoke the alias"

    bridge = client("events")
    rules = {r["Name"]: r for r in bridge.list_rules()["Rules"] if r["Name"].startswith("published-Flow")}
    hourly = next(r for name, r in rules.items() if "Hourly" in name)
    assert hourly["ScheduleExpression"] == "rate(1 hour)"
    target = bridge.list_targets_by_rule(Rule=hourly["Name"])["Targets"][0]
    assert (target["Arn"], target["Id"], target["Input"]) == (out["Flow"], "FlowHourlyStepFunctionsTarget", '{"a": 1}')
    assert target["RoleArn"].split("/")[-1].startswith("published-FlowHourlyRole")
    bridge.put_events(Entries=[{"Source": "shop", "DetailType": "order", "Detail": "{}"}])
    sfn, deadline, runs = client("stepfunctions"), time.time() + 30, []
    while not runs and time.time() < deadline:
        runs = sfn.list_executions(stateMachineArn=out["Flow"])["executions"]
        time.sleep(0.2)
    assert runs, "the rule did not start the state machine"

    cfn.update_stack(StackName="published", TemplateBody=PUBLISHED.replace('return "ok"', 'return "ok2"'),
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    assert settle(cfn, "published", timeout=60)["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "published")
    assert lam.get_alias(FunctionName=out["Function"], Name="live")["FunctionVersion"] == "2"
    assert (versions[0], "DELETE_SKIPPED", None) in events(cfn, "published")
    assert [v["Version"] for v in lam.list_versions_by_function(FunctionName=out["Function"])["Versions"]] == ["$LATEST", "1", "2"]

    s3.delete_object(Bucket=out["Bucket"], Key="in/report.csv")
    cfn.delete_stack(StackName="published")
    assert settle(cfn, stack["StackId"], timeout=60)["StackStatus"] == "DELETE_COMPLETE"


AUTHORIZED = """
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Gatekeeper:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            token = event.get("authorizationToken") or (event.get("headers") or {}).get("x-token", "")
            effect = "Allow" if token == "let-me-in" else "Deny"
            return {"principalId": "user", "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": effect, "Resource": event["methodArn"]}]}}
  Guarded:
    Type: AWS::Serverless::Api
    Properties:
      StageName: live
      Auth:
        UsagePlan: {CreateUsagePlan: PER_API, Throttle: {RateLimit: 5, BurstLimit: 10}}
        DefaultAuthorizer: Token
        Authorizers:
          Token:
            FunctionArn: !GetAtt Gatekeeper.Arn
            Identity: {Header: X-Token, ReauthorizeEvery: 0}
          Users:
            UserPoolArn: arn:aws:cognito-idp:us-east-1:000000000000:userpool/us-east-1_pool
            AuthorizationScopes: [orders/read]
  Jwt:
    Type: AWS::Serverless::HttpApi
    Properties:
      Auth:
        DefaultAuthorizer: Issuer
        Authorizers:
          Issuer:
            JwtConfiguration: {issuer: "https://issuer.example", audience: [app]}
            IdentitySource: $request.header.Authorization
  App:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return {"statusCode": 200, "body": "app"}
      Events:
        Private:
          Type: Api
          Properties: {RestApiId: !Ref Guarded, Path: /private, Method: get}
        Open:
          Type: Api
          Properties: {RestApiId: !Ref Guarded, Path: /open, Method: get, Auth: {Authorizer: NONE}}
        Keyed:
          Type: Api
          Properties: {RestApiId: !Ref Guarded, Path: /keyed, Method: get, Auth: {Authorizer: NONE, ApiKeyRequired: true}}
        Pooled:
          Type: Api
          Properties: {RestApiId: !Ref Guarded, Path: /pooled, Method: get, Auth: {Authorizer: Users}}
        Claims:
          Type: HttpApi
          Properties: {ApiId: !Ref Jwt, Path: /claims, Method: get, Auth: {AuthorizationScopes: [read]}}
Outputs:
  Guarded: {Value: !Ref Guarded}
  Jwt: {Value: !Ref Jwt}
"""


def test_api_auth_writes_authorizers_and_method_security(cfn, client, server):
    cfn.create_stack(StackName="authorized", TemplateBody=AUTHORIZED,
                     Capabilities=["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"])
    stack = settle(cfn, "authorized", timeout=60)
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "authorized")
    out = outputs(stack)
    kinds = {r["LogicalResourceId"]: r["ResourceType"]
             for r in cfn.describe_stack_resources(StackName="authorized")["StackResources"]}
    assert kinds["GuardedTokenAuthorizerPermission"] == "AWS::Lambda::Permission"
    assert "GuardedUsersAuthorizerPermission" not in kinds

    apigw = client("apigateway")
    authorizers = {a["name"]: a for a in apigw.get_authorizers(restApiId=out["Guarded"])["items"]}
    assert (authorizers["Token"]["type"], authorizers["Token"]["identitySource"]) == ("TOKEN", "method.request.header.X-Token")
    assert authorizers["Users"]["type"] == "COGNITO_USER_POOLS"
    resources = {r["path"]: r for r in apigw.get_resources(restApiId=out["Guarded"])["items"]}
    method = lambda path: apigw.get_method(restApiId=out["Guarded"], resourceId=resources[path]["id"], httpMethod="GET")
    assert (method("/private")["authorizationType"], method("/private")["authorizerId"]) == ("CUSTOM", authorizers["Token"]["id"])
    assert method("/open")["authorizationType"] == "NONE"
    assert method("/keyed")["apiKeyRequired"] is True
    assert method("/pooled")["authorizationScopes"] == ["orders/read"]

    base = f"/_aws/execute-api/{out['Guarded']}/live"
    assert http_get(server, base + "/private")[0] == 401
    assert http_get(server, base + "/private", {"X-Token": "wrong"})[0] == 403
    assert http_get(server, base + "/private", {"X-Token": "let-me-in"}) == (200, b"app")
    assert http_get(server, base + "/open") == (200, b"app")
    assert http_get(server, base + "/keyed")[0] == 403
    key = apigw.get_api_key(apiKey=physical(cfn, "authorized", "GuardedApiKey"), includeValue=True)["value"]
    assert http_get(server, base + "/keyed", {"x-api-key": key}) == (200, b"app")
    plan = apigw.get_usage_plan(usagePlanId=physical(cfn, "authorized", "GuardedUsagePlan"))
    assert plan["apiStages"] == [{"apiId": out["Guarded"], "stage": "live"}]
    assert plan["throttle"] == {"rateLimit": 5.0, "burstLimit": 10}

    v2 = client("apigatewayv2")
    jwt = v2.get_authorizers(ApiId=out["Jwt"])["Items"][0]
    assert (jwt["Name"], jwt["AuthorizerType"], jwt["JwtConfiguration"]["Issuer"]) == ("Issuer", "JWT", "https://issuer.example")
    route = next(r for r in v2.get_routes(ApiId=out["Jwt"])["Items"] if r["RouteKey"] == "GET /claims")
    assert (route["AuthorizationType"], route["AuthorizerId"], route["AuthorizationScopes"]) == ("JWT", jwt["AuthorizerId"], ["read"])

    cfn.delete_stack(StackName="authorized")
    assert settle(cfn, stack["StackId"], timeout=60)["StackStatus"] == "DELETE_COMPLETE"


def physical(cfn, stack, logical):
    return cfn.describe_stack_resource(StackName=stack, LogicalResourceId=logical)["StackResourceDetail"]["PhysicalResourceId"]


def mock_api(stage, plan):
    body = {"swagger": "2.0", "info": {"title": stage, "version": "1"}, "paths": {"/": {"get": {
        "x-amazon-apigateway-integration": {"type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
                                            "responses": {"default": {"statusCode": "200"}}}}}}}
    return {"Type": "AWS::Serverless::Api", "Properties": {
        "StageName": stage, "DefinitionBody": body, "Auth": {"UsagePlan": plan}}}


def test_a_shared_usage_plan_covers_every_api_that_asks_for_it(cfn, client):
    body = json.dumps({"Transform": "AWS::Serverless-2016-10-31", "Resources": {
        "One": mock_api("a", {"CreateUsagePlan": "SHARED", "UsagePlanName": "everyone"}),
        "Two": mock_api("b", {"CreateUsagePlan": "SHARED", "UsagePlanName": "everyone"}),
        "Three": mock_api("c", {"CreateUsagePlan": "NONE"}),
    }})
    cfn.create_stack(StackName="shared-plan", TemplateBody=body, Capabilities=["CAPABILITY_AUTO_EXPAND"])
    stack = settle(cfn, "shared-plan")
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "shared-plan")
    kinds = {r["LogicalResourceId"]: r["ResourceType"]
             for r in cfn.describe_stack_resources(StackName="shared-plan")["StackResources"]}
    assert {k for k in kinds if "Usage" in k or "Key" in k} == {
        "ServerlessUsagePlan", "ServerlessApiKey", "ServerlessUsagePlanKey"}
    apigw = client("apigateway")
    plan = apigw.get_usage_plan(usagePlanId=physical(cfn, "shared-plan", "ServerlessUsagePlan"))
    assert plan["name"] == "everyone"
    assert sorted(s["stage"] for s in plan["apiStages"]) == ["a", "b"]
    key = apigw.get_api_key(apiKey=physical(cfn, "shared-plan", "ServerlessApiKey"))
    assert len(key["stageKeys"]) == 2
    cfn.delete_stack(StackName="shared-plan")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"


DEPLOYED = """
Transform: AWS::Serverless-2016-10-31
Globals:
  Function:
    Runtime: python3.12
    Handler: index.handler
Resources:
  Hook:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return None
  Handler:
    Type: AWS::Serverless::Function
    Properties:
      InlineCode: |
        def handler(event, context):
            return {"statusCode": 200, "body": "v1"}
      AutoPublishAlias: live
      FunctionUrlConfig: {AuthType: NONE}
      DeploymentPreference:
        Type: Canary10Percent5Minutes
        Alarms: [handler-errors]
        Hooks: {PreTraffic: !Ref Hook}
      Events:
        Item:
          Type: Api
          Properties:
            RestApiId: !Ref Guarded
            Path: /items/{id}
            Method: get
            Auth: {Authorizer: AWS_IAM, InvokeRole: CALLER_CREDENTIALS}
  Guarded:
    Type: AWS::Serverless::Api
    Properties:
      StageName: live
      Auth:
        ResourcePolicy:
          IpRangeBlacklist: ["10.9.0.0/16"]
          AwsAccountWhitelist: ["000000000000"]
          CustomStatements:
            - {Effect: Allow, Principal: "*", Action: execute-api:Invoke, Resource: "execute-api:/*"}
  Flow:
    Type: AWS::Serverless::StateMachine
    Properties:
      Definition: {StartAt: Done, States: {Done: {Type: Pass, End: true}}}
      Events:
        Start: {Type: Api, Properties: {Path: /start, Method: post}}
Outputs:
  Url: {Value: !GetAtt HandlerUrl.FunctionUrl}
  Function: {Value: !Ref Handler}
  Rest: {Value: !Ref ServerlessRestApi}
  Guarded: {Value: !Ref Guarded}
  Flow: {Value: !Ref Flow}
  Application: {Value: !Ref ServerlessDeploymentApplication}
  Group: {Value: !Ref HandlerDeploymentGroup}
"""


def test_deployment_preference_alias_url_resource_policy_and_state_machine_api(cfn, client, server):
    import time
    from test_lambda import url_request
    caps = ["CAPABILITY_IAM", "CAPABILITY_AUTO_EXPAND"]
    cfn.create_stack(StackName="deployed", TemplateBody=DEPLOYED, Capabilities=caps)
    stack = settle(cfn, "deployed", timeout=60)
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, "deployed")
    out = outputs(stack)
    kinds = {r["LogicalResourceId"]: r["ResourceType"]
             for r in cfn.describe_stack_resources(StackName="deployed")["StackResources"]}
    assert kinds["ServerlessDeploymentApplication"] == "AWS::CodeDeploy::Application"
    assert kinds["HandlerDeploymentGroup"] == "AWS::CodeDeploy::DeploymentGroup"
    assert kinds["FlowStartRole"] == "AWS::IAM::Role" and kinds["HandlerURLInvokeAllowPublicAccess"] == "AWS::Lambda::Permission"
    assert out["Application"].startswith("deployed-ServerlessDeploymentApplication-")
    assert out["Group"].startswith("deployed-HandlerDeploymentGroup-")
    processed = cfn.get_template(StackName="deployed", TemplateStage="Processed")["TemplateBody"]["Resources"]
    update = processed["HandlerAliaslive"]["UpdatePolicy"]["CodeDeployLambdaAliasUpdate"]
    assert update["BeforeAllowTrafficHook"] == {"Ref": "Hook"}
    group = processed["HandlerDeploymentGroup"]["Properties"]
    assert group["AlarmConfiguration"] == {"Enabled": True, "Alarms": [{"Name": "handler-errors"}]}
    assert group["DeploymentConfigName"] == {"Fn::Sub": ["CodeDeployDefault.Lambda${ConfigName}",
                                                         {"ConfigName": "Canary10Percent5Minutes"}]}
    assert processed["HandlerUrl"]["Properties"]["TargetFunctionArn"] == {"Ref": "HandlerAliaslive"}

    lam = client("lambda")
    url = lam.get_function_url_config(FunctionName=out["Function"], Qualifier="live")
    assert url["FunctionUrl"] == out["Url"] and url["FunctionArn"].endswith(":live")
    assert url_request(server, out["Url"])[2] == b"v1"

    apigw = client("apigateway")
    policy = json.loads(apigw.get_rest_api(restApiId=out["Guarded"])["policy"])
    statements = policy["Statement"]
    denied = [s for s in statements if s["Effect"] == "Deny"]
    assert [d["Condition"] for d in denied] == [{"IpAddress": {"aws:SourceIp": ["10.9.0.0/16"]}}]
    assert {"Effect": "Allow", "Principal": {"AWS": ["000000000000"]}} .items() <= statements[0].items()
    assert statements[-1]["Resource"] == "execute-api:/*"
    assert statements[0]["Resource"] == ["execute-api:/live/GET/items/*"]
    resources = apigw.get_resources(restApiId=out["Guarded"])["items"]
    item = next(r for r in resources if r["path"] == "/items/{id}")
    integration = apigw.get_integration(restApiId=out["Guarded"], resourceId=item["id"], httpMethod="GET")
    assert integration["credentials"] == "arn:aws:iam::*:user/*"

    status, _, body = server.request("POST", f"/_aws/execute-api/{out['Rest']}/Prod/start", b'{"n": 7}',
                                     {"Content-Type": "application/json"})
    assert status == 200, body
    assert json.loads(body)["executionArn"].startswith(out["Flow"].replace(":stateMachine:", ":execution:"))
    sfn = client("stepfunctions")
    [run] = sfn.list_executions(stateMachineArn=out["Flow"])["executions"]
    assert json.loads(sfn.describe_execution(executionArn=run["executionArn"])["input"]) == {"n": 7}

    cfn.update_stack(StackName="deployed", TemplateBody=DEPLOYED.replace('"body": "v1"', '"body": "v2"'),
                     Capabilities=caps)
    assert settle(cfn, "deployed", timeout=60)["StackStatus"] == "UPDATE_COMPLETE", events(cfn, "deployed")
    assert lam.get_alias(FunctionName=out["Function"], Name="live")["FunctionVersion"] == "2"
    deadline = time.time() + 10
    while url_request(server, out["Url"])[2] != b"v2":
        assert time.time() < deadline, "the alias's URL still answers with the old version"
        time.sleep(0.1)
    cfn.delete_stack(StackName="deployed")
    assert settle(cfn, stack["StackId"], timeout=60)["StackStatus"] == "DELETE_COMPLETE"
