"""API Gateway: REST stages' access logs in CloudWatch Logs, the account-level throttle on
REST and HTTP APIs, API keys from a Lambda authorizer (`apiKeySource: AUTHORIZER`), and API
key values unique in an account. Requests are plain urllib calls through the path form."""

from __future__ import annotations

import json
import time
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ROLE, zip_of

LOG_ARN = "arn:aws:logs:us-east-1:000000000000:log-group:rest-access"

AUTHORIZER = '''
def handler(event, context):
    token = event["authorizationToken"]
    return {"principalId": "user-" + token, "usageIdentifierKey": token,
            "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": "Allow", "Resource": "*"}]}}
'''


def get(server, api_id, path, headers=None):
    """A GET through the path form: status, headers (lower-case), JSON body."""
    request = urllib.request.Request(f"{server.endpoint}/_aws/execute-api/{api_id}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read())


def mock_api(apigw, name="logged", **method):
    """A REST API whose GET /m answers 200 {"ok": true} from a MOCK integration, deployed to prod."""
    api = apigw.create_rest_api(name=name)
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="m")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                     authorizationType=method.pop("authorizationType", "NONE"), **method)
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", statusCode="200")
    apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                                   statusCode="200", responseTemplates={"application/json": '{"ok": true}'})
    return api


def log_lines(logs, group, count):
    deadline = time.monotonic() + 10
    while True:
        events = logs.filter_log_events(logGroupName=group)["events"]
        if len(events) >= count or time.monotonic() > deadline:
            return [json.loads(e["message"]) for e in events]
        time.sleep(0.05)


def test_rest_stage_access_logs_write_context_variables(server, client):
    apigw, logs = client("apigateway"), client("logs")
    logs.create_log_group(logGroupName="rest-access")
    api = mock_api(apigw)
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    fmt = ('{"requestId":"$context.requestId","status":"$context.status","resourcePath":"$context.resourcePath",'
           '"method":"$context.httpMethod","ip":"$context.identity.sourceIp","error":"$context.error.message",'
           '"type":"$context.error.responseType","integration":"$context.integrationStatus",'
           '"stage":"$context.stage","nothing":"$context.wafResponseCode"}')
    apigw.update_stage(restApiId=api["id"], stageName="prod", patchOperations=[
        {"op": "replace", "path": "/accessLogSettings/destinationArn", "value": LOG_ARN},
        {"op": "replace", "path": "/accessLogSettings/format", "value": fmt}])
    assert apigw.get_stage(restApiId=api["id"], stageName="prod")["accessLogSettings"] == {
        "destinationArn": LOG_ARN, "format": fmt}
    status, headers, _ = get(server, api["id"], "/prod/m")
    assert status == 200
    assert get(server, api["id"], "/prod/nowhere")[0] == 403
    lines = log_lines(logs, "rest-access", 2)
    assert len(lines) == 2
    ok, refused = sorted(lines, key=lambda line: line["status"])
    assert ok == {"requestId": headers["x-amzn-requestid"], "status": "200", "resourcePath": "/m",
                  "method": "GET", "ip": "127.0.0.1", "error": "-", "type": "-", "integration": "200",
                  "stage": "prod", "nothing": "-"}
    assert refused["status"] == "403" and refused["resourcePath"] == "-"
    assert (refused["error"], refused["type"]) == ("Missing Authentication Token", "MISSING_AUTHENTICATION_TOKEN")
    streams = logs.describe_log_streams(logGroupName="rest-access")["logStreams"]
    assert [s["logStreamName"] for s in streams] == [f"{api['id']}_prod"]


def test_a_stage_without_access_log_settings_writes_nothing(server, client):
    apigw, logs = client("apigateway"), client("logs")
    logs.create_log_group(logGroupName="rest-access")
    api = mock_api(apigw)
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    assert get(server, api["id"], "/prod/m")[0] == 200
    time.sleep(0.3)
    assert logs.filter_log_events(logGroupName="rest-access")["events"] == []


def test_the_account_throttle_covers_rest_and_http_apis_together(server, client):
    apigw, v2 = client("apigateway"), client("apigatewayv2")
    assert apigw.get_account()["throttleSettings"] == {"burstLimit": 5000, "rateLimit": 10000.0}
    api = mock_api(apigw)
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    http_api = v2.create_api(Name="h", ProtocolType="HTTP", Target="http://127.0.0.1:9/unreachable")
    apigw.update_account(patchOperations=[
        {"op": "replace", "path": "/throttleSettings/burstLimit", "value": "2"},
        {"op": "replace", "path": "/throttleSettings/rateLimit", "value": "1"}])
    assert apigw.get_account()["throttleSettings"] == {"burstLimit": 2, "rateLimit": 1.0}
    assert [get(server, api["id"], "/prod/m")[0] for _ in range(2)] == [200, 200]
    status, headers, body = get(server, api["id"], "/prod/m")
    assert (status, body) == (429, {"message": "Too Many Requests"})
    assert headers["x-amzn-errortype"] == "TooManyRequestsException"
    status, _, body = get(server, http_api["ApiId"], "/anything")
    assert (status, body) == (429, {"message": "Too Many Requests"})
    server.advance_clock(1)
    assert get(server, api["id"], "/prod/m")[0] == 200


def test_keys_from_the_authorizer_when_the_api_key_source_is_authorizer(server, client):
    lam, apigw = client("lambda"), client("apigateway")
    function = lam.create_function(FunctionName="keys", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                   Code={"ZipFile": zip_of({"app.py": AUTHORIZER})})
    api = apigw.create_rest_api(name="by-authorizer", apiKeySource="AUTHORIZER")
    uri = f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{function['FunctionArn']}/invocations"
    authorizer = apigw.create_authorizer(restApiId=api["id"], name="a", type="TOKEN", authorizerUri=uri,
                                         identitySource="method.request.header.Authorization",
                                         authorizerResultTtlInSeconds=0)
    mock_api_on = apigw.get_rest_api(restApiId=api["id"])
    assert mock_api_on["apiKeySource"] == "AUTHORIZER"
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="m")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", authorizationType="CUSTOM",
                     authorizerId=authorizer["id"], apiKeyRequired=True)
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                                   statusCode="200",
                                   responseTemplates={"application/json": '{"key": "$context.identity.apiKey"}'})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    value = "authorizer-issued-key-0000000001"
    key = apigw.create_api_key(name="k", value=value, enabled=True)
    plan = apigw.create_usage_plan(name="p", apiStages=[{"apiId": api["id"], "stage": "prod"}])
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    status, _, body = get(server, api["id"], "/prod/m", {"Authorization": value, "x-api-key": "ignored"})
    assert (status, body) == (200, {"key": value})
    status, _, body = get(server, api["id"], "/prod/m", {"Authorization": "not-a-key-value-00000000",
                                                          "x-api-key": value})
    assert (status, body) == (403, {"message": "Forbidden"})


def test_api_key_values_are_unique_and_keys_leave_their_plans(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, apiKeyRequired=True)
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    value = "a-key-value-of-twenty-chars-or-more"
    key = apigw.create_api_key(name="one", value=value, enabled=True)
    with pytest.raises(ClientError) as e:
        apigw.create_api_key(name="two", value=value)
    assert e.value.response["Error"]["Code"] == "ConflictException"
    assert e.value.response["Error"]["Message"] == "API Key already exists"
    plan = apigw.create_usage_plan(name="p", apiStages=[{"apiId": api["id"], "stage": "prod"}])
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 200
    apigw.update_api_key(apiKey=key["id"], patchOperations=[{"op": "replace", "path": "/enabled", "value": "false"}])
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 403
    apigw.update_api_key(apiKey=key["id"], patchOperations=[{"op": "replace", "path": "/enabled", "value": "true"}])
    apigw.delete_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"])
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 403
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 200
    apigw.delete_api_key(apiKey=key["id"])
    assert apigw.get_usage_plan_keys(usagePlanId=plan["id"])["items"] == []
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 403
    again = apigw.create_api_key(name="again", value=value, enabled=True)
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=again["id"], keyType="API_KEY")
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 200
    apigw.delete_usage_plan(usagePlanId=plan["id"])
    assert get(server, api["id"], "/prod/m", {"x-api-key": value})[0] == 403
