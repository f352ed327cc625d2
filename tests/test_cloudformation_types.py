"""CloudFormation's resource types beyond the core ones, black-box with boto3 and plain HTTP:
API Gateway REST APIs and HTTP APIs built from their parts or from an OpenAPI body and
served on Roto's port, Lambda versions and aliases, IAM users, groups, instance profiles
and access keys, CloudWatch alarms, Scheduler schedules, Firehose delivery streams and
Step Functions activities; each with its Ref and GetAtt values as AWS documents them, its
updates, and the underlying service's error when a resource fails."""

from __future__ import annotations

import http.client
import json

import pytest

from lambda_helpers import ROLE
from test_cloudformation import events, outputs, settle


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def deploy(cfn, name, template, **kwargs):
    """The stack once created (CREATE_COMPLETE asserted), and its outputs."""
    cfn.create_stack(StackName=name, TemplateBody=json.dumps(template),
                     Capabilities=["CAPABILITY_NAMED_IAM"], **kwargs)
    stack = settle(cfn, name)
    assert stack["StackStatus"] == "CREATE_COMPLETE", events(cfn, name)
    return stack, outputs(stack)


def update(cfn, name, template):
    cfn.update_stack(StackName=name, TemplateBody=json.dumps(template),
                     Capabilities=["CAPABILITY_NAMED_IAM"])
    stack = settle(cfn, name)
    assert stack["StackStatus"] == "UPDATE_COMPLETE", events(cfn, name)
    return outputs(stack)


def http_get(server, path, headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request("GET", path, headers=headers or {})
        resp = conn.getresponse()
        return resp.status, resp.read()
    finally:
        conn.close()


def failure(cfn, name, logical):
    """The reason `logical` failed to be created."""
    stack = settle(cfn, name)
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", events(cfn, name)
    return next(reason for lid, status, reason in events(cfn, name)
                if lid == logical and status == "CREATE_FAILED")


ECHO = ("def handler(event, context):\n"
        "    return {'statusCode': 200, 'body': event.get('rawPath') or event.get('path')}\n")


def function(code=ECHO):
    return {"Type": "AWS::Lambda::Function", "Properties": {
        "Runtime": "python3.12", "Handler": "index.handler", "Role": ROLE,
        "Code": {"ZipFile": code}}}


def test_the_function_takes_kms_key_arn_under_its_template_name(cfn, client):
    key = client("kms").create_key()["KeyMetadata"]["Arn"]
    fn = function()
    fn["Properties"]["KmsKeyArn"] = key
    _, out = deploy(cfn, "kms", {"Resources": {"Fn": fn}, "Outputs": {"Name": {"Value": {"Ref": "Fn"}}}})
    config = client("lambda").get_function_configuration(FunctionName=out["Name"])
    assert config["KMSKeyArn"] == key


MOCK = {"Type": "MOCK", "RequestTemplates": {"application/json": '{"statusCode": 200}'},
        "IntegrationResponses": [{"StatusCode": "200",
                                  "ResponseTemplates": {"application/json": '{"stage": "$context.stage"}'}}]}


def rest_template(variables):
    return {"Resources": {
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "parts", "Description": "d"}},
        "Items": {"Type": "AWS::ApiGateway::Resource", "Properties": {
            "RestApiId": {"Ref": "Api"}, "ParentId": {"Fn::GetAtt": ["Api", "RootResourceId"]}, "PathPart": "items"}},
        "Get": {"Type": "AWS::ApiGateway::Method", "Properties": {
            "RestApiId": {"Ref": "Api"}, "ResourceId": {"Ref": "Items"}, "HttpMethod": "GET",
            "AuthorizationType": "NONE", "ApiKeyRequired": False, "Integration": MOCK,
            "MethodResponses": [{"StatusCode": "200"}]}},
        "Deployment": {"Type": "AWS::ApiGateway::Deployment", "DependsOn": "Get",
                       "Properties": {"RestApiId": {"Ref": "Api"}, "Description": "first"}},
        "Stage": {"Type": "AWS::ApiGateway::Stage", "Properties": {
            "RestApiId": {"Ref": "Api"}, "DeploymentId": {"Ref": "Deployment"}, "StageName": "live",
            "Variables": variables}},
        "Key": {"Type": "AWS::ApiGateway::ApiKey", "DependsOn": "Stage", "Properties": {
            "Enabled": True, "StageKeys": [{"RestApiId": {"Ref": "Api"}, "StageName": "live"}]}},
        "Plan": {"Type": "AWS::ApiGateway::UsagePlan", "DependsOn": "Stage", "Properties": {
            "UsagePlanName": "gold", "ApiStages": [{"ApiId": {"Ref": "Api"}, "Stage": "live"}],
            "Throttle": {"RateLimit": 10, "BurstLimit": 20}}},
        "PlanKey": {"Type": "AWS::ApiGateway::UsagePlanKey", "Properties": {
            "KeyId": {"Ref": "Key"}, "KeyType": "API_KEY", "UsagePlanId": {"Ref": "Plan"}}},
        "Auth": {"Type": "AWS::ApiGateway::Authorizer", "Properties": {
            "RestApiId": {"Ref": "Api"}, "Name": "tokens", "Type": "TOKEN",
            "IdentitySource": "method.request.header.Authorization",
            "AuthorizerUri": "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:auth/invocations"}},
    }, "Outputs": {
        "ApiId": {"Value": {"Ref": "Api"}}, "Root": {"Value": {"Fn::GetAtt": ["Api", "RootResourceId"]}},
        "ResourceId": {"Value": {"Fn::GetAtt": ["Items", "ResourceId"]}},
        "DeploymentId": {"Value": {"Fn::GetAtt": ["Deployment", "DeploymentId"]}},
        "Stage": {"Value": {"Ref": "Stage"}}, "KeyId": {"Value": {"Fn::GetAtt": ["Key", "APIKeyId"]}},
        "PlanId": {"Value": {"Ref": "Plan"}}, "PlanKey": {"Value": {"Ref": "PlanKey"}},
        "AuthId": {"Value": {"Fn::GetAtt": ["Auth", "AuthorizerId"]}}}}


def test_a_rest_api_built_from_its_parts_serves_on_rotos_port(cfn, client, server):
    stack, out = deploy(cfn, "rest", rest_template({"v": "1"}))
    apigw = client("apigateway")
    api = apigw.get_rest_api(restApiId=out["ApiId"])
    assert (api["name"], api["rootResourceId"]) == ("parts", out["Root"])
    paths = {r["path"]: r["id"] for r in apigw.get_resources(restApiId=out["ApiId"])["items"]}
    assert paths["/items"] == out["ResourceId"]
    assert out["Stage"] == "live"
    stage = apigw.get_stage(restApiId=out["ApiId"], stageName="live")
    assert (stage["deploymentId"], stage["variables"]) == (out["DeploymentId"], {"v": "1"})
    status, body = http_get(server, f"/_aws/execute-api/{out['ApiId']}/live/items")
    assert (status, json.loads(body)) == (200, {"stage": "live"})

    assert apigw.get_api_key(apiKey=out["KeyId"])["enabled"] is True
    assert out["PlanKey"] == f"{out['KeyId']}:{out['PlanId']}"
    plan = apigw.get_usage_plan(usagePlanId=out["PlanId"])
    assert plan["throttle"] == {"rateLimit": 10.0, "burstLimit": 20}
    assert [k["id"] for k in apigw.get_usage_plan_keys(usagePlanId=out["PlanId"])["items"]] == [out["KeyId"]]
    assert apigw.get_authorizer(restApiId=out["ApiId"], authorizerId=out["AuthId"])["type"] == "TOKEN"

    update(cfn, "rest", rest_template({"v": "2"}))
    assert apigw.get_stage(restApiId=out["ApiId"], stageName="live")["variables"] == {"v": "2"}

    cfn.delete_stack(StackName="rest")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert apigw.get_rest_apis()["items"] == []
    assert apigw.get_api_keys()["items"] == []
    assert apigw.get_usage_plans()["items"] == []


OPENAPI = {"openapi": "3.0.1", "info": {"title": "from-body", "version": "1"}, "paths": {"/ping": {"get": {
    "responses": {"200": {"description": "ok"}},
    "x-amazon-apigateway-integration": {
        "type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
        "responses": {"default": {"statusCode": "200",
                                  "responseTemplates": {"application/json": '{"pong": true}'}}}}}}}}


def test_a_rest_api_comes_from_its_body_or_from_s3_and_deploys_with_its_stage(cfn, client, server):
    s3 = client("s3")
    s3.create_bucket(Bucket="specs")
    s3.put_object(Bucket="specs", Key="api.json", Body=json.dumps(OPENAPI).encode())
    stack, out = deploy(cfn, "body", {"Resources": {
        "Inline": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Body": OPENAPI, "Name": "named"}},
        "FromS3": {"Type": "AWS::ApiGateway::RestApi", "Properties": {
            "BodyS3Location": {"Bucket": "specs", "Key": "api.json"}}},
        "Deployment": {"Type": "AWS::ApiGateway::Deployment", "Properties": {
            "RestApiId": {"Ref": "Inline"}, "StageName": "v1",
            "StageDescription": {"Variables": {"color": "blue"}}}},
    }, "Outputs": {"Inline": {"Value": {"Ref": "Inline"}}, "FromS3": {"Value": {"Ref": "FromS3"}}}})
    apigw = client("apigateway")
    assert apigw.get_rest_api(restApiId=out["Inline"])["name"] == "named"
    assert apigw.get_rest_api(restApiId=out["FromS3"])["name"] == "from-body"
    assert apigw.get_stage(restApiId=out["Inline"], stageName="v1")["variables"] == {"color": "blue"}
    status, body = http_get(server, f"/_aws/execute-api/{out['Inline']}/v1/ping")
    assert (status, json.loads(body)) == (200, {"pong": True})
    cfn.delete_stack(StackName="body")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert apigw.get_rest_apis()["items"] == []


def test_a_rest_api_whose_document_is_missing_fails_with_the_reason(cfn):
    cfn.create_stack(StackName="nobody", TemplateBody=json.dumps({"Resources": {
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {
            "BodyS3Location": {"Bucket": "nowhere", "Key": "api.json"}}}}}))
    assert "Unable to read s3://nowhere/api.json" in failure(cfn, "nobody", "Api")


def test_a_method_on_a_resource_that_does_not_exist_fails_with_api_gateways_error(cfn):
    cfn.create_stack(StackName="badmethod", TemplateBody=json.dumps({"Resources": {
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "x"}},
        "Get": {"Type": "AWS::ApiGateway::Method", "Properties": {
            "RestApiId": {"Ref": "Api"}, "ResourceId": "nosuchres0", "HttpMethod": "GET",
            "AuthorizationType": "NONE"}}}}))
    reason = failure(cfn, "badmethod", "Get")
    assert "NotFoundException" in reason and "Invalid Resource identifier specified" in reason


def test_http_apis_quick_created_or_built_from_parts_serve_lambda(cfn, client, server):
    template = {"Resources": {
        "Fn": function(),
        "Quick": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {
            "Name": "quick", "ProtocolType": "HTTP", "Target": {"Fn::GetAtt": ["Fn", "Arn"]}}},
        "Parts": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {"Name": "parts", "ProtocolType": "HTTP"}},
        "Integration": {"Type": "AWS::ApiGatewayV2::Integration", "Properties": {
            "ApiId": {"Ref": "Parts"}, "IntegrationType": "AWS_PROXY",
            "IntegrationUri": {"Fn::GetAtt": ["Fn", "Arn"]}, "PayloadFormatVersion": "2.0"}},
        "Auth": {"Type": "AWS::ApiGatewayV2::Authorizer", "Properties": {
            "ApiId": {"Ref": "Parts"}, "Name": "jwt", "AuthorizerType": "JWT",
            "IdentitySource": ["$request.header.Authorization"],
            "JwtConfiguration": {"Audience": ["app"], "Issuer": "https://issuer.example.com"}}},
        "Route": {"Type": "AWS::ApiGatewayV2::Route", "Properties": {
            "ApiId": {"Ref": "Parts"}, "RouteKey": "GET /hello/{name}",
            "Target": {"Fn::Join": ["/", ["integrations", {"Ref": "Integration"}]]}}},
        "Stage": {"Type": "AWS::ApiGatewayV2::Stage", "Properties": {
            "ApiId": {"Ref": "Parts"}, "StageName": "dev", "AutoDeploy": True}},
        "Deployment": {"Type": "AWS::ApiGatewayV2::Deployment", "DependsOn": "Route", "Properties": {
            "ApiId": {"Ref": "Parts"}, "Description": "manual"}},
    }, "Outputs": {
        "Quick": {"Value": {"Ref": "Quick"}}, "QuickEndpoint": {"Value": {"Fn::GetAtt": ["Quick", "ApiEndpoint"]}},
        "Parts": {"Value": {"Fn::GetAtt": ["Parts", "ApiId"]}}, "Route": {"Value": {"Ref": "Route"}},
        "Integration": {"Value": {"Fn::GetAtt": ["Integration", "IntegrationId"]}},
        "Auth": {"Value": {"Ref": "Auth"}}, "Stage": {"Value": {"Ref": "Stage"}},
        "Deployment": {"Value": {"Ref": "Deployment"}}}}
    stack, out = deploy(cfn, "http", template)
    v2 = client("apigatewayv2")
    assert out["QuickEndpoint"] == v2.get_api(ApiId=out["Quick"])["ApiEndpoint"]
    # Lambda invocations by API Gateway need their permission, as on AWS.
    client("lambda").add_permission(FunctionName=next(
        r["PhysicalResourceId"] for r in cfn.describe_stack_resources(StackName="http")["StackResources"]
        if r["LogicalResourceId"] == "Fn"), StatementId="apigw", Action="lambda:InvokeFunction",
        Principal="apigateway.amazonaws.com")
    status, body = http_get(server, f"/_aws/execute-api/{out['Quick']}/anything/here")
    assert (status, body) == (200, b"/anything/here")
    status, body = http_get(server, f"/_aws/execute-api/{out['Parts']}/dev/hello/ann")
    assert (status, body) == (200, b"/dev/hello/ann")
    route = v2.get_route(ApiId=out["Parts"], RouteId=out["Route"])
    assert route["Target"] == f"integrations/{out['Integration']}"
    assert v2.get_authorizer(ApiId=out["Parts"], AuthorizerId=out["Auth"])["AuthorizerType"] == "JWT"
    assert out["Stage"] == "dev"
    assert v2.get_deployment(ApiId=out["Parts"], DeploymentId=out["Deployment"])["Description"] == "manual"

    template["Resources"]["Route"]["Properties"]["RouteKey"] = "GET /hi/{name}"
    update(cfn, "http", template)
    assert v2.get_route(ApiId=out["Parts"], RouteId=out["Route"])["RouteKey"] == "GET /hi/{name}"

    cfn.delete_stack(StackName="http")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert v2.get_apis()["Items"] == []


def test_versions_and_aliases_publish_and_route_invocations(cfn, client):
    template = {"Resources": {
        "Fn": function("def handler(event, context):\n    return 'v1'\n"),
        "V1": {"Type": "AWS::Lambda::Version", "Properties": {"FunctionName": {"Ref": "Fn"}, "Description": "one"}},
        "Live": {"Type": "AWS::Lambda::Alias", "Properties": {
            "FunctionName": {"Ref": "Fn"}, "Name": "live", "FunctionVersion": {"Fn::GetAtt": ["V1", "Version"]}}},
    }, "Outputs": {
        "Name": {"Value": {"Ref": "Fn"}}, "V1": {"Value": {"Ref": "V1"}},
        "Version": {"Value": {"Fn::GetAtt": ["V1", "Version"]}},
        "Alias": {"Value": {"Ref": "Live"}}, "AliasArn": {"Value": {"Fn::GetAtt": ["Live", "AliasArn"]}}}}
    stack, out = deploy(cfn, "versions", template)
    lam = client("lambda")
    fn_arn = lam.get_function(FunctionName=out["Name"])["Configuration"]["FunctionArn"]
    assert (out["V1"], out["Version"]) == (f"{fn_arn}:1", "1")
    assert out["Alias"] == out["AliasArn"] == f"{fn_arn}:live"
    assert lam.get_alias(FunctionName=out["Name"], Name="live")["FunctionVersion"] == "1"
    assert lam.invoke(FunctionName=out["Alias"])["Payload"].read() == b'"v1"'

    template["Resources"]["Live"]["Properties"]["Description"] = "now described"
    update(cfn, "versions", template)
    assert lam.get_alias(FunctionName=out["Name"], Name="live")["Description"] == "now described"
    cfn.delete_stack(StackName="versions")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert lam.list_functions()["Functions"] == []


def test_iam_users_groups_instance_profiles_and_access_keys(cfn, client):
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:*", "Resource": "*"}]}
    template = {"Resources": {
        "Devs": {"Type": "AWS::IAM::Group", "Properties": {
            "Policies": [{"PolicyName": "s3", "PolicyDocument": policy}]}},
        "Ann": {"Type": "AWS::IAM::User", "Properties": {
            "UserName": "ann", "Groups": [{"Ref": "Devs"}],
            "ManagedPolicyArns": ["arn:aws:iam::aws:policy/ReadOnlyAccess"],
            "LoginProfile": {"Password": "Secret-123", "PasswordResetRequired": False}}},
        "Key": {"Type": "AWS::IAM::AccessKey", "Properties": {"UserName": {"Ref": "Ann"}, "Status": "Inactive"}},
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
                                                   "Principal": {"Service": "ec2.amazonaws.com"}}]}}},
        "Profile": {"Type": "AWS::IAM::InstanceProfile", "Properties": {"Roles": [{"Ref": "Role"}]}},
    }, "Outputs": {
        "Group": {"Value": {"Ref": "Devs"}}, "GroupArn": {"Value": {"Fn::GetAtt": ["Devs", "Arn"]}},
        "UserArn": {"Value": {"Fn::GetAtt": ["Ann", "Arn"]}}, "KeyId": {"Value": {"Ref": "Key"}},
        "Secret": {"Value": {"Fn::GetAtt": ["Key", "SecretAccessKey"]}},
        "Profile": {"Value": {"Ref": "Profile"}}, "ProfileArn": {"Value": {"Fn::GetAtt": ["Profile", "Arn"]}}}}
    stack, out = deploy(cfn, "people", template)
    iam = client("iam")
    assert out["UserArn"] == "arn:aws:iam::000000000000:user/ann"
    assert out["GroupArn"].endswith(f":group/{out['Group']}")
    assert [g["GroupName"] for g in iam.list_groups_for_user(UserName="ann")["Groups"]] == [out["Group"]]
    assert iam.list_group_policies(GroupName=out["Group"])["PolicyNames"] == ["s3"]
    attached = iam.list_attached_user_policies(UserName="ann")["AttachedPolicies"]
    assert [p["PolicyName"] for p in attached] == ["ReadOnlyAccess"]
    assert iam.get_login_profile(UserName="ann")["LoginProfile"]["UserName"] == "ann"
    keys = iam.list_access_keys(UserName="ann")["AccessKeyMetadata"]
    assert [(k["AccessKeyId"], k["Status"]) for k in keys] == [(out["KeyId"], "Inactive")]
    assert len(out["Secret"]) == 40
    profile = iam.get_instance_profile(InstanceProfileName=out["Profile"])["InstanceProfile"]
    assert profile["Arn"] == out["ProfileArn"] and len(profile["Roles"]) == 1

    template["Resources"]["Key"]["Properties"]["Status"] = "Active"
    del template["Resources"]["Ann"]["Properties"]["Groups"]
    update(cfn, "people", template)
    assert iam.list_access_keys(UserName="ann")["AccessKeyMetadata"][0]["Status"] == "Active"
    assert iam.list_groups_for_user(UserName="ann")["Groups"] == []

    cfn.delete_stack(StackName="people")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert iam.list_users()["Users"] == []
    assert iam.list_groups()["Groups"] == []
    assert iam.list_instance_profiles()["InstanceProfiles"] == []


def test_iam_users_need_the_named_iam_capability_when_named(cfn):
    from botocore.exceptions import ClientError
    with pytest.raises(ClientError) as e:
        cfn.create_stack(StackName="named", TemplateBody=json.dumps({"Resources": {
            "U": {"Type": "AWS::IAM::User", "Properties": {"UserName": "bob"}}}}),
            Capabilities=["CAPABILITY_IAM"])
    assert e.value.response["Error"]["Code"] == "InsufficientCapabilitiesException"
    assert e.value.response["Error"]["Message"] == "Requires capabilities : [CAPABILITY_NAMED_IAM]"


def test_alarms_schedules_delivery_streams_and_activities(cfn, client):
    client("s3").create_bucket(Bucket="firehose-out")
    template = {"Resources": {
        "Queue": {"Type": "AWS::SQS::Queue"},
        "Alarm": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
            "AlarmDescription": "too many", "Namespace": "App", "MetricName": "Errors",
            "Statistic": "Sum", "Period": 60, "EvaluationPeriods": 1, "Threshold": 5,
            "ComparisonOperator": "GreaterThanThreshold",
            "Dimensions": [{"Name": "Service", "Value": "api"}]}},
        "Group": {"Type": "AWS::Scheduler::ScheduleGroup", "Properties": {"Name": "jobs"}},
        "Nightly": {"Type": "AWS::Scheduler::Schedule", "Properties": {
            "GroupName": {"Ref": "Group"}, "ScheduleExpression": "rate(1 day)",
            "FlexibleTimeWindow": {"Mode": "OFF"},
            "Target": {"Arn": {"Fn::GetAtt": ["Queue", "Arn"]}, "RoleArn": ROLE, "Input": "{}"}}},
        "Stream": {"Type": "AWS::KinesisFirehose::DeliveryStream", "Properties": {
            "DeliveryStreamType": "DirectPut",
            "ExtendedS3DestinationConfiguration": {
                "BucketARN": "arn:aws:s3:::firehose-out", "RoleARN": ROLE,
                "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 1}}}},
        "Work": {"Type": "AWS::StepFunctions::Activity", "Properties": {
            "Name": "work", "Tags": [{"Key": "team", "Value": "core"}]}},
    }, "Outputs": {
        "Alarm": {"Value": {"Ref": "Alarm"}}, "AlarmArn": {"Value": {"Fn::GetAtt": ["Alarm", "Arn"]}},
        "Group": {"Value": {"Ref": "Group"}}, "GroupArn": {"Value": {"Fn::GetAtt": ["Group", "Arn"]}},
        "Schedule": {"Value": {"Ref": "Nightly"}}, "ScheduleArn": {"Value": {"Fn::GetAtt": ["Nightly", "Arn"]}},
        "Stream": {"Value": {"Ref": "Stream"}}, "StreamArn": {"Value": {"Fn::GetAtt": ["Stream", "Arn"]}},
        "Activity": {"Value": {"Ref": "Work"}}, "ActivityName": {"Value": {"Fn::GetAtt": ["Work", "Name"]}}}}
    stack, out = deploy(cfn, "ops", template)
    alarm = client("cloudwatch").describe_alarms(AlarmNames=[out["Alarm"]])["MetricAlarms"][0]
    assert (alarm["AlarmArn"], alarm["Threshold"]) == (out["AlarmArn"], 5.0)
    assert out["Alarm"].startswith("ops-Alarm-")
    scheduler = client("scheduler")
    assert out["GroupArn"].endswith(":schedule-group/jobs")
    schedule = scheduler.get_schedule(Name=out["Schedule"], GroupName="jobs")
    assert (schedule["Arn"], schedule["ScheduleExpression"]) == (out["ScheduleArn"], "rate(1 day)")
    firehose = client("firehose").describe_delivery_stream(DeliveryStreamName=out["Stream"])
    assert firehose["DeliveryStreamDescription"]["DeliveryStreamARN"] == out["StreamArn"]
    activity = client("stepfunctions").describe_activity(activityArn=out["Activity"])
    assert activity["name"] == out["ActivityName"] == "work"

    template["Resources"]["Alarm"]["Properties"]["Threshold"] = 9
    template["Resources"]["Nightly"]["Properties"]["ScheduleExpression"] = "rate(2 days)"
    update(cfn, "ops", template)
    alarm = client("cloudwatch").describe_alarms(AlarmNames=[out["Alarm"]])["MetricAlarms"][0]
    assert alarm["Threshold"] == 9.0
    assert scheduler.get_schedule(Name=out["Schedule"], GroupName="jobs")["ScheduleExpression"] == "rate(2 days)"

    cfn.delete_stack(StackName="ops")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert client("cloudwatch").describe_alarms()["MetricAlarms"] == []
    assert client("firehose").list_delivery_streams()["DeliveryStreamNames"] == []
    assert client("stepfunctions").list_activities()["activities"] == []
    assert [g["Name"] for g in scheduler.list_schedule_groups()["ScheduleGroups"]] == ["default"]


def test_a_property_the_api_does_not_know_fails_the_resource_by_name(cfn):
    cfn.create_stack(StackName="unknown", TemplateBody=json.dumps({"Resources": {
        "Stream": {"Type": "AWS::KinesisFirehose::DeliveryStream", "Properties": {"NoSuchSetting": 1}}}}))
    reason = failure(cfn, "unknown", "Stream")
    assert reason.startswith("Properties validation failed for resource Stream")
    assert "NoSuchSetting" in reason


def test_quoted_booleans_and_numbers_take_the_propertys_type(cfn, client):
    _, out = deploy(cfn, "quoted", {"Resources": {
        "Bucket": {"Type": "AWS::S3::Bucket", "Properties": {"PublicAccessBlockConfiguration": {
            "BlockPublicAcls": "true", "BlockPublicPolicy": "false",
            "IgnorePublicAcls": "true", "RestrictPublicBuckets": "true"}}},
        "Queue": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": "5"}},
        "Table": {"Type": "AWS::DynamoDB::Table", "Properties": {
            "AttributeDefinitions": [{"AttributeName": "pk", "AttributeType": "S"}],
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "ProvisionedThroughput": {"ReadCapacityUnits": "3", "WriteCapacityUnits": "4"}}},
    }, "Outputs": {"Bucket": {"Value": {"Ref": "Bucket"}}, "Table": {"Value": {"Ref": "Table"}},
                   "Queue": {"Value": {"Ref": "Queue"}}}})
    block = client("s3").get_public_access_block(Bucket=out["Bucket"])["PublicAccessBlockConfiguration"]
    assert (block["BlockPublicAcls"], block["BlockPublicPolicy"]) == (True, False)
    table = client("dynamodb").describe_table(TableName=out["Table"])["Table"]
    assert table["ProvisionedThroughput"]["ReadCapacityUnits"] == 3
    attributes = client("sqs").get_queue_attributes(QueueUrl=out["Queue"], AttributeNames=["DelaySeconds"])
    assert attributes["Attributes"]["DelaySeconds"] == "5"


def test_ecr_repositories_are_made_through_ecr(cfn, client):
    lifecycle = json.dumps({"rules": [{"rulePriority": 1, "selection": {
        "tagStatus": "untagged", "countType": "sinceImagePushed", "countUnit": "days", "countNumber": 7},
        "action": {"type": "expire"}}]})
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "*"},
                                                      "Action": ["ecr:BatchGetImage"]}]}
    template = {"Resources": {"Repo": {"Type": "AWS::ECR::Repository", "Properties": {
        "RepositoryName": "Team/App", "ImageTagMutability": "IMMUTABLE",
        "ImageScanningConfiguration": {"ScanOnPush": "true"},
        "LifecyclePolicy": {"LifecyclePolicyText": lifecycle}, "RepositoryPolicyText": policy,
        "EmptyOnDelete": True, "Tags": [{"Key": "team", "Value": "core"}]}}},
        "Outputs": {"Name": {"Value": {"Ref": "Repo"}}, "Arn": {"Value": {"Fn::GetAtt": ["Repo", "Arn"]}},
                    "Uri": {"Value": {"Fn::GetAtt": ["Repo", "RepositoryUri"]}}}}
    stack, out = deploy(cfn, "registry", template)
    ecr = client("ecr")
    repo = ecr.describe_repositories(repositoryNames=["team/app"])["repositories"][0]
    assert (out["Name"], out["Arn"], out["Uri"]) == ("team/app", repo["repositoryArn"], repo["repositoryUri"])
    assert (repo["imageTagMutability"], repo["imageScanningConfiguration"]) == ("IMMUTABLE", {"scanOnPush": True})
    assert json.loads(ecr.get_lifecycle_policy(repositoryName="team/app")["lifecyclePolicyText"]) == json.loads(lifecycle)
    assert json.loads(ecr.get_repository_policy(repositoryName="team/app")["policyText"]) == policy

    template["Resources"]["Repo"]["Properties"]["ImageTagMutability"] = "MUTABLE"
    update(cfn, "registry", template)
    assert ecr.describe_repositories()["repositories"][0]["imageTagMutability"] == "MUTABLE"
    cfn.delete_stack(StackName="registry")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert ecr.describe_repositories()["repositories"] == []


def test_rest_resources_authorizers_and_usage_plans_update_in_place(cfn, client):
    template = rest_template({"v": "1"})
    stack, out = deploy(cfn, "inplace", template)
    resources = template["Resources"]
    resources["Items"]["Properties"]["PathPart"] = "things"
    resources["Auth"]["Properties"].update({"IdentitySource": "method.request.header.X-Token",
                                            "AuthorizerResultTtlInSeconds": 60})
    resources["Plan"]["Properties"].update({
        "UsagePlanName": "platinum", "Description": "more", "Throttle": {"RateLimit": 50, "BurstLimit": 100},
        "Quota": {"Limit": 1000, "Period": "DAY"}, "Tags": [{"Key": "tier", "Value": "top"}]})
    after = update(cfn, "inplace", template)
    assert {k: after[k] for k in ("ResourceId", "AuthId", "PlanId")} == {k: out[k] for k in ("ResourceId", "AuthId", "PlanId")}
    apigw = client("apigateway")
    assert apigw.get_resource(restApiId=out["ApiId"], resourceId=out["ResourceId"])["path"] == "/things"
    auth = apigw.get_authorizer(restApiId=out["ApiId"], authorizerId=out["AuthId"])
    assert (auth["identitySource"], auth["authorizerResultTtlInSeconds"]) == ("method.request.header.X-Token", 60)
    plan = apigw.get_usage_plan(usagePlanId=out["PlanId"])
    assert (plan["name"], plan["description"]) == ("platinum", "more")
    assert plan["throttle"] == {"rateLimit": 50.0, "burstLimit": 100}
    assert (plan["quota"]["limit"], plan["quota"]["period"]) == (1000, "DAY")
    assert plan["apiStages"] == [{"apiId": out["ApiId"], "stage": "live"}]
    assert plan.get("tags") == {"tier": "top"}
    updates = [e for e in events(cfn, "inplace") if e[1] == "UPDATE_IN_PROGRESS" and e[0] != "inplace"]
    assert all("new physical resource" not in (reason or "") for _, _, reason in updates), updates

    del resources["Plan"]["Properties"]["Quota"]
    resources["Plan"]["Properties"]["Tags"] = []
    update(cfn, "inplace", template)
    plan = apigw.get_usage_plan(usagePlanId=out["PlanId"])
    assert "quota" not in plan and not plan.get("tags")
    cfn.delete_stack(StackName="inplace")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"


def test_streams_and_delivery_streams_update_in_place(cfn, client):
    client("s3").create_bucket(Bucket="firehose-in-place")
    template = {"Resources": {
        "Stream": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "Delivery": {"Type": "AWS::KinesisFirehose::DeliveryStream", "Properties": {
            "DeliveryStreamType": "DirectPut",
            "ExtendedS3DestinationConfiguration": {
                "BucketARN": "arn:aws:s3:::firehose-in-place", "RoleARN": ROLE, "Prefix": "one/",
                "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 1}}}},
    }, "Outputs": {"Stream": {"Value": {"Ref": "Stream"}}, "Delivery": {"Value": {"Fn::GetAtt": ["Delivery", "Arn"]}}}}
    stack, out = deploy(cfn, "streams", template)
    resources = template["Resources"]
    resources["Stream"]["Properties"].update({"ShardCount": 2, "RetentionPeriodHours": 48,
                                              "Tags": [{"Key": "team", "Value": "data"}]})
    destination = resources["Delivery"]["Properties"]["ExtendedS3DestinationConfiguration"]
    destination.update({"Prefix": "two/", "BufferingHints": {"IntervalInSeconds": 120, "SizeInMBs": 2}})
    resources["Delivery"]["Properties"]["Tags"] = [{"Key": "team", "Value": "data"}]
    assert update(cfn, "streams", template) == out
    kinesis = client("kinesis")
    summary = kinesis.describe_stream_summary(StreamName=out["Stream"])["StreamDescriptionSummary"]
    assert (summary["OpenShardCount"], summary["RetentionPeriodHours"]) == (2, 48)
    assert kinesis.list_tags_for_stream(StreamName=out["Stream"])["Tags"] == [{"Key": "team", "Value": "data"}]
    firehose = client("firehose")
    name = out["Delivery"].rsplit("/", 1)[1]
    description = firehose.describe_delivery_stream(DeliveryStreamName=name)["DeliveryStreamDescription"]
    s3 = description["Destinations"][0]["ExtendedS3DestinationDescription"]
    assert (s3["Prefix"], s3["BufferingHints"]) == ("two/", {"IntervalInSeconds": 120, "SizeInMBs": 2})
    assert firehose.list_tags_for_delivery_stream(DeliveryStreamName=name)["Tags"] == [{"Key": "team", "Value": "data"}]

    resources["Stream"]["Properties"]["RetentionPeriodHours"] = 24
    resources["Stream"]["Properties"]["Tags"] = []
    update(cfn, "streams", template)
    summary = kinesis.describe_stream_summary(StreamName=out["Stream"])["StreamDescriptionSummary"]
    assert summary["RetentionPeriodHours"] == 24
    assert kinesis.list_tags_for_stream(StreamName=out["Stream"])["Tags"] == []

    resources["Stream"]["Properties"]["ShardCount"] = 100000
    cfn.update_stack(StackName="streams", TemplateBody=json.dumps(template))
    assert settle(cfn, "streams")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    reason = next(r for lid, status, r in events(cfn, "streams") if lid == "Stream" and status == "UPDATE_FAILED")
    assert "Service: kinesis" in reason
    cfn.delete_stack(StackName="streams")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"


def test_log_streams_filters_archives_rotation_schedules_and_secret_policies(cfn, client):
    template = {"Resources": {
        "Group": {"Type": "AWS::Logs::LogGroup", "Properties": {"LogGroupName": "/app/web"}},
        "Stream": {"Type": "AWS::Logs::LogStream", "Properties": {"LogGroupName": {"Ref": "Group"}}},
        "Errors": {"Type": "AWS::Logs::MetricFilter", "Properties": {
            "LogGroupName": {"Ref": "Group"}, "FilterPattern": "ERROR",
            "MetricTransformations": [{"MetricName": "Errors", "MetricNamespace": "App", "MetricValue": "1",
                                       "Dimensions": [{"Key": "Service", "Value": "$.service"}]}]}},
        "Feed": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "Ship": {"Type": "AWS::Logs::SubscriptionFilter", "Properties": {
            "LogGroupName": {"Ref": "Group"}, "FilterName": "ship", "FilterPattern": "",
            "DestinationArn": {"Fn::GetAtt": ["Feed", "Arn"]}}},
        "Keep": {"Type": "AWS::Events::Archive", "Properties": {
            "SourceArn": {"Fn::Sub": "arn:aws:events:${AWS::Region}:${AWS::AccountId}:event-bus/default"},
            "EventPattern": {"source": ["shop"]}, "RetentionDays": 7}},
        "Rotator": function("def handler(event, context):\n    return None\n"),
        "Secret": {"Type": "AWS::SecretsManager::Secret", "Properties": {"SecretString": "s3cret"}},
        "Rotation": {"Type": "AWS::SecretsManager::RotationSchedule", "Properties": {
            "SecretId": {"Ref": "Secret"}, "RotationLambdaARN": {"Fn::GetAtt": ["Rotator", "Arn"]},
            "RotationRules": {"AutomaticallyAfterDays": 30}, "RotateImmediatelyOnUpdate": False}},
        "Policy": {"Type": "AWS::SecretsManager::ResourcePolicy", "Properties": {
            "SecretId": {"Ref": "Secret"}, "ResourcePolicy": {"Version": "2012-10-17", "Statement": [
                {"Effect": "Deny", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                 "Action": "secretsmanager:GetSecretValue", "Resource": "*"}]}}},
    }, "Outputs": {
        "Stream": {"Value": {"Ref": "Stream"}}, "Errors": {"Value": {"Ref": "Errors"}},
        "Ship": {"Value": {"Ref": "Ship"}}, "Keep": {"Value": {"Ref": "Keep"}},
        "KeepArn": {"Value": {"Fn::GetAtt": ["Keep", "Arn"]}}, "Secret": {"Value": {"Ref": "Secret"}},
        "Rotation": {"Value": {"Ref": "Rotation"}}, "Policy": {"Value": {"Ref": "Policy"}}}}
    stack, out = deploy(cfn, "extras", template)
    logs = client("logs")
    streams = logs.describe_log_streams(logGroupName="/app/web")["logStreams"]
    assert [s["logStreamName"] for s in streams] == [out["Stream"]] and out["Stream"].startswith("extras-Stream-")
    [metric] = logs.describe_metric_filters(logGroupName="/app/web")["metricFilters"]
    assert (metric["filterName"], metric["filterPattern"]) == (out["Errors"], "ERROR")
    assert metric["metricTransformations"][0]["dimensions"] == {"Service": "$.service"}
    [ship] = logs.describe_subscription_filters(logGroupName="/app/web")["subscriptionFilters"]
    assert (ship["filterName"], out["Ship"]) == ("ship", "ship")
    archive = client("events").describe_archive(ArchiveName=out["Keep"])
    assert (archive["ArchiveArn"], archive["RetentionDays"]) == (out["KeepArn"], 7)
    assert json.loads(archive["EventPattern"]) == {"source": ["shop"]}
    sm = client("secretsmanager")
    described = sm.describe_secret(SecretId=out["Secret"])
    assert described["RotationEnabled"] and described["RotationRules"]["AutomaticallyAfterDays"] == 30
    assert out["Rotation"] == out["Policy"] == out["Secret"]
    assert "111122223333" in sm.get_resource_policy(SecretId=out["Secret"])["ResourcePolicy"]

    template["Resources"]["Errors"]["Properties"]["FilterPattern"] = "FATAL"
    template["Resources"]["Keep"]["Properties"]["RetentionDays"] = 14
    template["Resources"]["Rotation"]["Properties"]["RotationRules"] = {"AutomaticallyAfterDays": 10}
    update(cfn, "extras", template)
    assert logs.describe_metric_filters(logGroupName="/app/web")["metricFilters"][0]["filterPattern"] == "FATAL"
    assert client("events").describe_archive(ArchiveName=out["Keep"])["RetentionDays"] == 14
    assert sm.describe_secret(SecretId=out["Secret"])["RotationRules"]["AutomaticallyAfterDays"] == 10

    del template["Resources"]["Policy"], template["Resources"]["Rotation"], template["Outputs"]["Policy"]
    del template["Outputs"]["Rotation"]
    update(cfn, "extras", template)
    assert not sm.describe_secret(SecretId=out["Secret"]).get("RotationEnabled")
    assert "ResourcePolicy" not in sm.get_resource_policy(SecretId=out["Secret"])
    cfn.delete_stack(StackName="extras")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert logs.describe_log_groups()["logGroups"] == []
    assert client("events").list_archives()["Archives"] == []


def test_a_rotation_schedule_of_a_hosted_function_fails_clearly(cfn):
    template = {"Resources": {
        "Secret": {"Type": "AWS::SecretsManager::Secret", "Properties": {"SecretString": "x"}},
        "Rotation": {"Type": "AWS::SecretsManager::RotationSchedule", "Properties": {
            "SecretId": {"Ref": "Secret"}, "HostedRotationLambda": {"RotationType": "PostgreSQLSingleUser"}}}}}
    cfn.create_stack(StackName="hosted", TemplateBody=json.dumps(template))
    assert failure(cfn, "hosted", "Rotation") == "Roto does not support HostedRotationLambda: give RotationLambdaARN"


def test_inline_policies_of_one_principal_queue_or_topic_and_group_additions(cfn, client):
    doc = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "s3:ListBucket", "Resource": "*"}]}
    template = {"Resources": {
        "Role": {"Type": "AWS::IAM::Role", "Properties": {"RoleName": "inline-role", "AssumeRolePolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "lambda.amazonaws.com"},
                                                    "Action": "sts:AssumeRole"}]}}},
        "Ann": {"Type": "AWS::IAM::User", "Properties": {"UserName": "ann"}},
        "Bob": {"Type": "AWS::IAM::User", "Properties": {"UserName": "bob"}},
        "Team": {"Type": "AWS::IAM::Group", "Properties": {"GroupName": "team"}},
        "RoleDoc": {"Type": "AWS::IAM::RolePolicy", "Properties": {
            "RoleName": {"Ref": "Role"}, "PolicyName": "list", "PolicyDocument": doc}},
        "UserDoc": {"Type": "AWS::IAM::UserPolicy", "Properties": {
            "UserName": {"Ref": "Ann"}, "PolicyName": "list", "PolicyDocument": doc}},
        "GroupDoc": {"Type": "AWS::IAM::GroupPolicy", "Properties": {
            "GroupName": {"Ref": "Team"}, "PolicyName": "list", "PolicyDocument": doc}},
        "Members": {"Type": "AWS::IAM::UserToGroupAddition", "Properties": {
            "GroupName": {"Ref": "Team"}, "Users": [{"Ref": "Ann"}, {"Ref": "Bob"}]}},
        "Q": {"Type": "AWS::SQS::Queue", "Properties": {"QueueName": "inline-q"}},
        "QDoc": {"Type": "AWS::SQS::QueueInlinePolicy", "Properties": {"Queue": {"Ref": "Q"}, "PolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sqs:SendMessage",
                                                    "Resource": {"Fn::GetAtt": ["Q", "Arn"]}}]}}},
        "T": {"Type": "AWS::SNS::Topic", "Properties": {"TopicName": "inline-t"}},
        "TDoc": {"Type": "AWS::SNS::TopicInlinePolicy", "Properties": {"TopicArn": {"Ref": "T"}, "PolicyDocument": {
            "Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": "*", "Action": "sns:Publish",
                                                    "Resource": {"Ref": "T"}}]}}},
    }}
    stack, _ = deploy(cfn, "inline", template)
    iam = client("iam")
    assert iam.get_role_policy(RoleName="inline-role", PolicyName="list")["PolicyDocument"] == doc
    assert iam.get_user_policy(UserName="ann", PolicyName="list")["PolicyDocument"] == doc
    assert iam.get_group_policy(GroupName="team", PolicyName="list")["PolicyDocument"] == doc
    assert sorted(u["UserName"] for u in iam.get_group(GroupName="team")["Users"]) == ["ann", "bob"]
    sqs = client("sqs")
    url = sqs.get_queue_url(QueueName="inline-q")["QueueUrl"]
    assert "sqs:SendMessage" in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"])["Attributes"]["Policy"]
    topic = client("sns").create_topic(Name="inline-t")["TopicArn"]
    assert "sns:Publish" in client("sns").get_topic_attributes(TopicArn=topic)["Attributes"]["Policy"]

    template["Resources"]["Members"]["Properties"]["Users"] = [{"Ref": "Bob"}]
    del template["Resources"]["RoleDoc"], template["Resources"]["QDoc"]
    update(cfn, "inline", template)
    assert [u["UserName"] for u in iam.get_group(GroupName="team")["Users"]] == ["bob"]
    assert iam.list_role_policies(RoleName="inline-role")["PolicyNames"] == []
    assert "Policy" not in sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["Policy"]).get("Attributes", {})
    cfn.delete_stack(StackName="inline")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert iam.list_users()["Users"] == [] and iam.list_groups()["Groups"] == []


def test_consumers_composite_alarms_dashboards_invoke_configs_and_machine_versions(cfn, client):
    machine = {"Type": "AWS::StepFunctions::StateMachine", "Properties": {
        "RoleArn": ROLE, "Definition": {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}}}
    template = {"Resources": {
        "Feed": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "Reader": {"Type": "AWS::Kinesis::StreamConsumer", "Properties": {
            "StreamARN": {"Fn::GetAtt": ["Feed", "Arn"]}, "ConsumerName": "reader"}},
        "Base": {"Type": "AWS::CloudWatch::Alarm", "Properties": {
            "AlarmName": "base", "MetricName": "Errors", "Namespace": "App", "Statistic": "Sum", "Period": 60,
            "EvaluationPeriods": 1, "Threshold": 1, "ComparisonOperator": "GreaterThanOrEqualToThreshold"}},
        "Both": {"Type": "AWS::CloudWatch::CompositeAlarm", "Properties": {
            "AlarmName": "both", "AlarmRule": {"Fn::Sub": "ALARM(${Base})"}}},
        "Board": {"Type": "AWS::CloudWatch::Dashboard", "Properties": {
            "DashboardName": "ops", "DashboardBody": json.dumps({"widgets": []})}},
        "Fn": function(),
        "Async": {"Type": "AWS::Lambda::EventInvokeConfig", "Properties": {
            "FunctionName": {"Ref": "Fn"}, "Qualifier": "$LATEST", "MaximumRetryAttempts": 1}},
        "Flow": machine,
        "V1": {"Type": "AWS::StepFunctions::StateMachineVersion", "Properties": {
            "StateMachineArn": {"Ref": "Flow"}, "Description": "first"}},
        "Live": {"Type": "AWS::StepFunctions::StateMachineAlias", "Properties": {
            "Name": "live", "RoutingConfiguration": [{"StateMachineVersionArn": {"Ref": "V1"}, "Weight": 100}]}},
    }, "Outputs": {
        "Reader": {"Value": {"Ref": "Reader"}}, "ReaderStatus": {"Value": {"Fn::GetAtt": ["Reader", "ConsumerStatus"]}},
        "Both": {"Value": {"Ref": "Both"}}, "BothArn": {"Value": {"Fn::GetAtt": ["Both", "Arn"]}},
        "Board": {"Value": {"Ref": "Board"}}, "Fn": {"Value": {"Ref": "Fn"}},
        "V1": {"Value": {"Ref": "V1"}}, "Live": {"Value": {"Ref": "Live"}}}}
    stack, out = deploy(cfn, "more", template)
    consumer = client("kinesis").describe_stream_consumer(ConsumerARN=out["Reader"])["ConsumerDescription"]
    assert consumer["ConsumerName"] == "reader" and out["ReaderStatus"] in ("CREATING", "ACTIVE")
    cw = client("cloudwatch")
    [composite] = cw.describe_alarms(AlarmNames=["both"], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]
    assert (out["Both"], composite["AlarmArn"], composite["AlarmRule"]) == ("both", out["BothArn"], "ALARM(base)")
    assert cw.get_dashboard(DashboardName="ops")["DashboardBody"] == json.dumps({"widgets": []})
    lam = client("lambda")
    assert lam.get_function_event_invoke_config(FunctionName=out["Fn"])["MaximumRetryAttempts"] == 1
    sfn = client("stepfunctions")
    assert sfn.describe_state_machine(stateMachineArn=out["V1"])["description"] == "first"
    alias = sfn.describe_state_machine_alias(stateMachineAliasArn=out["Live"])
    assert alias["routingConfiguration"] == [{"stateMachineVersionArn": out["V1"], "weight": 100}]

    template["Resources"]["Async"]["Properties"]["MaximumRetryAttempts"] = 0
    template["Resources"]["Live"]["Properties"]["Description"] = "serving"
    update(cfn, "more", template)
    assert lam.get_function_event_invoke_config(FunctionName=out["Fn"])["MaximumRetryAttempts"] == 0
    assert sfn.describe_state_machine_alias(stateMachineAliasArn=out["Live"])["description"] == "serving"
    cfn.delete_stack(StackName="more")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE", events(cfn, "more")
    assert cw.list_dashboards()["DashboardEntries"] == []
    assert cw.describe_alarms()["CompositeAlarms"] == [] == cw.describe_alarms()["MetricAlarms"]


def test_request_validators_models_and_gateway_responses(cfn, client):
    template = {"Resources": {
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "shapes"}},
        "Check": {"Type": "AWS::ApiGateway::RequestValidator", "Properties": {
            "RestApiId": {"Ref": "Api"}, "Name": "body", "ValidateRequestBody": True}},
        "Order": {"Type": "AWS::ApiGateway::Model", "Properties": {
            "RestApiId": {"Ref": "Api"}, "Name": "Order", "ContentType": "application/json",
            "Schema": {"type": "object", "required": ["id"]}}},
        "Missing": {"Type": "AWS::ApiGateway::GatewayResponse", "Properties": {
            "RestApiId": {"Ref": "Api"}, "ResponseType": "MISSING_AUTHENTICATION_TOKEN", "StatusCode": "404",
            "ResponseTemplates": {"application/json": '{"message": "no such route"}'}}},
    }, "Outputs": {"Api": {"Value": {"Ref": "Api"}}, "Check": {"Value": {"Ref": "Check"}},
                   "CheckId": {"Value": {"Fn::GetAtt": ["Check", "RequestValidatorId"]}},
                   "Order": {"Value": {"Ref": "Order"}}}}
    stack, out = deploy(cfn, "shapes", template)
    apigw = client("apigateway")
    validator = apigw.get_request_validator(restApiId=out["Api"], requestValidatorId=out["Check"])
    assert (validator["name"], validator["validateRequestBody"], out["CheckId"]) == ("body", True, out["Check"])
    model = apigw.get_model(restApiId=out["Api"], modelName=out["Order"])
    assert out["Order"] == "Order" and json.loads(model["schema"]) == {"type": "object", "required": ["id"]}
    response = apigw.get_gateway_response(restApiId=out["Api"], responseType="MISSING_AUTHENTICATION_TOKEN")
    assert response["statusCode"] == "404"

    template["Resources"]["Check"]["Properties"]["ValidateRequestParameters"] = True
    template["Resources"]["Order"]["Properties"]["Schema"] = {"type": "object"}
    template["Resources"]["Missing"]["Properties"]["StatusCode"] = "410"
    update(cfn, "shapes", template)
    validator = apigw.get_request_validator(restApiId=out["Api"], requestValidatorId=out["Check"])
    assert validator["validateRequestParameters"] is True
    assert json.loads(apigw.get_model(restApiId=out["Api"], modelName="Order")["schema"]) == {"type": "object"}
    response = apigw.get_gateway_response(restApiId=out["Api"], responseType="MISSING_AUTHENTICATION_TOKEN")
    assert response["statusCode"] == "410"
    cfn.delete_stack(StackName="shapes")
    assert settle(cfn, stack["StackId"])["StackStatus"] == "DELETE_COMPLETE", events(cfn, "shapes")
    assert apigw.get_rest_apis()["items"] == []
