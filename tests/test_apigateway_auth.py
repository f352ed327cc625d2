"""API Gateway REST APIs: Lambda authorizers (TOKEN and REQUEST, cached by TTL), API keys
with usage plans, request validators, and CORS through a mock OPTIONS method."""

from __future__ import annotations

import http.client
import json

import pytest

from roto_server import RotoServer
from lambda_helpers import ROLE, zip_of

AUTHORIZER = '''
COUNT = {"n": 0}
def handler(event, context):
    COUNT["n"] += 1
    token = event.get("authorizationToken") or (event.get("headers") or {}).get("x-token", "")
    if token == "bad":
        raise Exception("Unauthorized")
    effect = "Deny" if token == "deny" else "Allow"
    return {"principalId": "user-" + token, "context": {"calls": COUNT["n"], "kind": event["type"]},
            "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": effect, "Resource": event["methodArn"]}]}}
'''
ECHO = '''
import json
def handler(event, context):
    return {"statusCode": 200, "body": json.dumps(event["requestContext"])}
'''




def uri(name):
    arn = f"arn:aws:lambda:us-east-1:000000000000:function:{name}"
    return f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations"


@pytest.fixture(scope="module")
def env():
    with RotoServer("--ephemeral") as s:
        lam = s.client("lambda")
        for name, code in (("authorizer", AUTHORIZER), ("echo", ECHO)):
            lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                Code={"ZipFile": zip_of({"app.py": code})})
        yield s, s.client("apigateway")


def call(server, api_id, method, path, body=b"", headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Host": f"{api_id}.execute-api.localhost", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def proxied(apigw, api, part, **method):
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart=part)
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", **method)
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="AWS_PROXY",
                          integrationHttpMethod="POST", uri=uri("echo"))
    return resource


def test_token_authorizers_allow_deny_and_cache_by_ttl(env):
    server, apigw = env
    api = apigw.create_rest_api(name="token")
    auth = apigw.create_authorizer(restApiId=api["id"], name="tok", type="TOKEN", authorizerUri=uri("authorizer"),
                                   identitySource="method.request.header.Authorization", authorizerResultTtlInSeconds=300)
    proxied(apigw, api, "secret", authorizationType="CUSTOM", authorizerId=auth["id"])
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    status, _, body = call(server, api["id"], "GET", "/prod/secret")
    assert (status, json.loads(body)) == (401, {"message": "Unauthorized"})
    status, _, body = call(server, api["id"], "GET", "/prod/secret", headers={"Authorization": "alice"})
    assert status == 200
    context = json.loads(body)["authorizer"]
    assert context["principalId"] == "user-alice" and context["kind"] == "TOKEN"
    status, _, body = call(server, api["id"], "GET", "/prod/secret", headers={"Authorization": "alice"})
    assert json.loads(body)["authorizer"]["calls"] == context["calls"]
    status, _, body = call(server, api["id"], "GET", "/prod/secret", headers={"Authorization": "deny"})
    assert (status, json.loads(body)) == (403, {"message": "User is not authorized to access this resource with an explicit deny"})
    status, _, body = call(server, api["id"], "GET", "/prod/secret", headers={"Authorization": "bad"})
    assert (status, json.loads(body)) == (401, {"message": "Unauthorized"})


def test_request_authorizers_read_their_identity_sources(env):
    server, apigw = env
    api = apigw.create_rest_api(name="request")
    auth = apigw.create_authorizer(restApiId=api["id"], name="req", type="REQUEST", authorizerUri=uri("authorizer"),
                                   identitySource="method.request.header.X-Token", authorizerResultTtlInSeconds=0)
    proxied(apigw, api, "r", authorizationType="CUSTOM", authorizerId=auth["id"])
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    assert call(server, api["id"], "GET", "/prod/r")[0] == 401
    status, _, body = call(server, api["id"], "GET", "/prod/r", headers={"X-Token": "bob"})
    assert status == 200 and json.loads(body)["authorizer"]["kind"] == "REQUEST"


def test_api_keys_need_an_enabled_key_in_a_usage_plan_of_the_stage(env):
    server, apigw = env
    api = apigw.create_rest_api(name="keyed")
    proxied(apigw, api, "k", authorizationType="NONE", apiKeyRequired=True)
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    key = apigw.create_api_key(name="client", enabled=True)
    assert call(server, api["id"], "GET", "/prod/k")[0] == 403
    status, _, body = call(server, api["id"], "GET", "/prod/k", headers={"x-api-key": key["value"]})
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})
    plan = apigw.create_usage_plan(name="p", apiStages=[{"apiId": api["id"], "stage": "prod"}])
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    status, _, body = call(server, api["id"], "GET", "/prod/k", headers={"x-api-key": key["value"]})
    assert status == 200 and json.loads(body)["identity"]["apiKeyId"] == key["id"]
    apigw.update_api_key(apiKey=key["id"], patchOperations=[{"op": "replace", "path": "/enabled", "value": "false"}])
    assert call(server, api["id"], "GET", "/prod/k", headers={"x-api-key": key["value"]})[0] == 403


def test_request_validators_refuse_missing_parameters_and_invalid_bodies(env):
    server, apigw = env
    api = apigw.create_rest_api(name="valid")
    apigw.create_model(restApiId=api["id"], name="Pet", contentType="application/json",
                       schema=json.dumps({"type": "object", "required": ["name"], "properties": {"name": {"type": "string"}}}))
    validator = apigw.create_request_validator(restApiId=api["id"], name="all", validateRequestBody=True,
                                               validateRequestParameters=True)
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="pets")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="POST", authorizationType="NONE",
                     requestValidatorId=validator["id"], requestModels={"application/json": "Pet"},
                     requestParameters={"method.request.querystring.owner": True, "method.request.header.X-Trace": True})
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="POST", type="AWS_PROXY",
                          integrationHttpMethod="POST", uri=uri("echo"))
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    headers = {"Content-Type": "application/json", "X-Trace": "1"}
    status, _, body = call(server, api["id"], "POST", "/prod/pets", body=b'{"name": "rex"}', headers={"Content-Type": "application/json"})
    assert status == 400
    assert json.loads(body)["message"].startswith("Missing required request parameters: [")
    assert "owner" in json.loads(body)["message"] and "X-Trace" in json.loads(body)["message"]
    status, _, body = call(server, api["id"], "POST", "/prod/pets?owner=me", body=b'{"age": 1}', headers=headers)
    assert (status, json.loads(body)) == (400, {"message": "Invalid request body"})
    status, _, _ = call(server, api["id"], "POST", "/prod/pets?owner=me", body=b'{"name": "rex"}', headers=headers)
    assert status == 200


def test_cors_preflights_through_a_mock_options_method(env):
    server, apigw = env
    api = apigw.create_rest_api(name="cors")
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="c")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="OPTIONS", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="OPTIONS", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="OPTIONS", statusCode="200",
                              responseParameters={f"method.response.header.{h}": False for h in
                                                  ("Access-Control-Allow-Origin", "Access-Control-Allow-Methods")})
    apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="OPTIONS", statusCode="200",
                                   responseParameters={"method.response.header.Access-Control-Allow-Origin": "'https://app.example'",
                                                       "method.response.header.Access-Control-Allow-Methods": "'GET,POST'"},
                                   responseTemplates={"application/json": ""})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    status, headers, body = call(server, api["id"], "OPTIONS", "/prod/c",
                                 headers={"Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    assert status == 200 and body == b""
    assert headers["access-control-allow-origin"] == "https://app.example"
    assert headers["access-control-allow-methods"] == "GET,POST"
