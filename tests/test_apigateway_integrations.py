"""API Gateway REST APIs: non-proxy integrations with VTL mapping templates (MOCK, Lambda
custom, AWS service integrations through the dispatcher) and integration responses chosen
by selection pattern."""

from __future__ import annotations

import http.client
import json

import pytest

from roto_server import RotoServer
from lambda_helpers import ROLE, zip_of

CUSTOM_HANDLER = '''
def handler(event, context):
    if event.get("fail"):
        raise Exception("Bad input: " + event["fail"])
    return {"got": event}
'''




@pytest.fixture(scope="module")
def env():
    with RotoServer("--ephemeral") as s:
        yield s, s.client("apigateway")


def call(server, api_id, method, path, body=b"", headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request(method, path, body=body, headers={"Host": f"{api_id}.execute-api.localhost", **(headers or {})})
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


def method_with(apigw, api, path_part, http_method, integration, responses):
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart=path_part)
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod=http_method, authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod=http_method, **integration)
    for status, extra in responses.items():
        apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod=http_method, statusCode=status)
        apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod=http_method,
                                       statusCode=status, **extra)
    return resource


def test_mock_templates_render_with_input_context_and_stage_variables(env):
    server, apigw = env
    api = apigw.create_rest_api(name="vtl")
    method_with(apigw, api, "hello", "POST", {
        "type": "MOCK",
        "requestTemplates": {"application/json": '#if($input.params("fail") == "yes"){"statusCode": 400}#else{"statusCode": 200}#end'},
    }, {
        "200": {"responseTemplates": {"application/json":
            '{"stage": "$context.stage", "color": "$stageVariables.color", "q": "$input.params(\'q\')"}'}},
        "400": {"selectionPattern": "400", "responseTemplates": {"application/json": '{"error": true}'}},
    })
    apigw.create_deployment(restApiId=api["id"], stageName="dev", variables={"color": "red"})
    status, _, body = call(server, api["id"], "POST", "/dev/hello?q=x")
    assert status == 200
    assert json.loads(body) == {"stage": "dev", "color": "red", "q": "x"}
    status, _, body = call(server, api["id"], "POST", "/dev/hello?fail=yes")
    assert (status, json.loads(body)) == (400, {"error": True})


def test_lambda_custom_integrations_map_errors_by_selection_pattern(env):
    server, apigw = env
    lam = server.client("lambda")
    lam.create_function(FunctionName="custom", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": CUSTOM_HANDLER})})
    arn = "arn:aws:lambda:us-east-1:000000000000:function:custom"
    api = apigw.create_rest_api(name="custom")
    method_with(apigw, api, "items", "POST", {
        "type": "AWS", "integrationHttpMethod": "POST",
        "uri": f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations",
        "requestTemplates": {"application/json": '{"name": $input.json(\'$.name\'), "fail": "$input.params(\'fail\')", "id": "$context.requestId"}'},
    }, {
        "200": {"responseTemplates": {"application/json": '{"name": $input.json(\'$.got.name\')}'}},
        "400": {"selectionPattern": "Bad input.*",
                "responseTemplates": {"application/json": '{"error": $input.json(\'$.errorMessage\')}'}},
    })
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    status, _, body = call(server, api["id"], "POST", "/prod/items", body=b'{"name": "rex"}',
                           headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (200, {"name": "rex"})
    status, _, body = call(server, api["id"], "POST", "/prod/items?fail=nope", body=b'{"name": "rex"}',
                           headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (400, {"error": "Bad input: nope"})


def test_passthrough_never_refuses_unmapped_content_types(env):
    server, apigw = env
    api = apigw.create_rest_api(name="strict")
    method_with(apigw, api, "x", "POST", {
        "type": "MOCK", "passthroughBehavior": "NEVER",
        "requestTemplates": {"application/json": '{"statusCode": 200}'},
    }, {"200": {}})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    status, _, body = call(server, api["id"], "POST", "/prod/x", body=b"a", headers={"Content-Type": "text/plain"})
    assert (status, json.loads(body)) == (415, {"message": "Unsupported Media Type"})
    status, _, _ = call(server, api["id"], "POST", "/prod/x", body=b"{}", headers={"Content-Type": "application/json"})
    assert status == 200


def test_sqs_and_dynamodb_service_integrations_go_through_the_dispatcher(env):
    server, apigw = env
    sqs = server.client("sqs")
    queue = sqs.create_queue(QueueName="inbox")["QueueUrl"]
    ddb = server.client("dynamodb")
    ddb.create_table(TableName="things", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    api = apigw.create_rest_api(name="services")
    method_with(apigw, api, "queue", "POST", {
        "type": "AWS", "integrationHttpMethod": "POST",
        "uri": "arn:aws:apigateway:us-east-1:sqs:path/000000000000/inbox",
        "requestParameters": {"integration.request.header.Content-Type": "'application/x-www-form-urlencoded'"},
        "requestTemplates": {"application/json": "Action=SendMessage&MessageBody=$util.urlEncode($input.body)"},
    }, {"200": {"responseTemplates": {"application/json": '{"queued": true}'}}})
    method_with(apigw, api, "things", "PUT", {
        "type": "AWS", "integrationHttpMethod": "POST",
        "uri": "arn:aws:apigateway:us-east-1:dynamodb:action/PutItem",
        "requestTemplates": {"application/json":
            '{"TableName": "things", "Item": {"id": {"S": "$input.path(\'$.id\')"}, "n": {"N": "$input.path(\'$.n\')"}}}'},
    }, {
        "200": {"responseTemplates": {"application/json": '{"stored": true}'}},
        "400": {"selectionPattern": "4\\d\\d", "responseTemplates": {"application/json": '{"stored": false}'}},
    })
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    status, _, body = call(server, api["id"], "POST", "/prod/queue", body=b'{"job": 1}',
                           headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (200, {"queued": True})
    messages = sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1)["Messages"]
    assert json.loads(messages[0]["Body"]) == {"job": 1}
    status, _, body = call(server, api["id"], "PUT", "/prod/things", body=b'{"id": "a", "n": 3}',
                           headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (200, {"stored": True})
    assert ddb.get_item(TableName="things", Key={"id": {"S": "a"}})["Item"]["n"] == {"N": "3"}
    status, _, body = call(server, api["id"], "PUT", "/prod/things", body=b'{"id": "", "n": 3}',
                           headers={"Content-Type": "application/json"})
    assert (status, json.loads(body)) == (400, {"stored": False})


PROXY_HANDLER = '''
import json
def handler(event, context):
    return {"statusCode": 200, "body": json.dumps({"path": event["path"], "params": event["pathParameters"]})}
'''


def sam_document(function_arn):
    uri = f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{function_arn}/invocations"
    return {
        "openapi": "3.0.1",
        "info": {"title": "sam-app", "version": "1.0"},
        "x-amazon-apigateway-binary-media-types": ["image/png"],
        "paths": {
            "/pets/{petId}": {
                "get": {
                    "operationId": "getPet",
                    "parameters": [{"name": "petId", "in": "path", "required": True, "schema": {"type": "string"}}],
                    "responses": {"200": {"description": "ok", "content": {"application/json": {"schema": {"$ref": "#/components/schemas/Pet"}}}}},
                    "x-amazon-apigateway-integration": {"type": "aws_proxy", "httpMethod": "POST", "uri": uri},
                },
                "options": {
                    "responses": {"200": {"description": "cors", "headers": {"Access-Control-Allow-Origin": {"schema": {"type": "string"}}}}},
                    "x-amazon-apigateway-integration": {
                        "type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
                        "responses": {"default": {"statusCode": "200",
                                                  "responseParameters": {"method.response.header.Access-Control-Allow-Origin": "'*'"}}},
                    },
                },
            },
            "/{proxy+}": {"x-amazon-apigateway-any-method": {
                "x-amazon-apigateway-integration": {"type": "aws_proxy", "httpMethod": "POST", "uri": uri}}},
        },
        "components": {
            "schemas": {"Pet": {"type": "object", "properties": {"name": {"type": "string"}}}},
            "securitySchemes": {"api_key": {"type": "apiKey", "name": "x-api-key", "in": "header"}},
        },
    }


def test_import_deploy_serve_and_export_an_openapi_document(env):
    server, apigw = env
    lam = server.client("lambda")
    lam.create_function(FunctionName="pets", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": PROXY_HANDLER})})
    arn = "arn:aws:lambda:us-east-1:000000000000:function:pets"
    api = apigw.import_rest_api(body=json.dumps(sam_document(arn)).encode())
    assert api["name"] == "sam-app" and api["binaryMediaTypes"] == ["image/png"] and api["version"] == "1.0"
    paths = {r["path"]: r for r in apigw.get_resources(restApiId=api["id"], embed=["methods"])["items"]}
    assert set(paths) == {"/", "/pets", "/pets/{petId}", "/{proxy+}"}
    get = paths["/pets/{petId}"]["resourceMethods"]["GET"]
    assert get["operationName"] == "getPet"
    assert get["requestParameters"] == {"method.request.path.petId": True}
    assert get["methodResponses"]["200"]["responseModels"] == {"application/json": "Pet"}
    assert get["methodIntegration"]["type"] == "AWS_PROXY"
    assert paths["/{proxy+}"]["resourceMethods"]["ANY"]["methodIntegration"]["type"] == "AWS_PROXY"
    assert apigw.get_model(restApiId=api["id"], modelName="Pet")["contentType"] == "application/json"
    apigw.create_deployment(restApiId=api["id"], stageName="Prod")
    status, _, body = call(server, api["id"], "GET", "/Prod/pets/7")
    assert (status, json.loads(body)) == (200, {"path": "/pets/7", "params": {"petId": "7"}})
    status, headers, _ = call(server, api["id"], "OPTIONS", "/Prod/pets/7")
    assert status == 200 and headers["access-control-allow-origin"] == "*"
    status, _, body = call(server, api["id"], "DELETE", "/Prod/any/thing")
    assert json.loads(body)["params"] == {"proxy": "any/thing"}
    exported = apigw.get_export(restApiId=api["id"], stageName="Prod", exportType="oas30",
                                parameters={"extensions": "integrations"})
    doc = json.loads(exported["body"].read())
    assert doc["openapi"] == "3.0.1" and doc["info"]["title"] == "sam-app"
    assert doc["servers"][0]["variables"]["basePath"]["default"] == "Prod"
    assert doc["paths"]["/pets/{petId}"]["get"]["x-amazon-apigateway-integration"]["type"] == "aws_proxy"
    assert "x-amazon-apigateway-any-method" in doc["paths"]["/{proxy+}"]
    assert doc["components"]["schemas"]["Pet"]["type"] == "object"
    swagger = json.loads(apigw.get_export(restApiId=api["id"], stageName="Prod", exportType="swagger")["body"].read())
    assert swagger["swagger"] == "2.0" and swagger["basePath"] == "/Prod"
    assert "x-amazon-apigateway-integration" not in swagger["paths"]["/pets/{petId}"]["get"]
    again = apigw.import_rest_api(body=json.dumps(doc).encode())
    assert {r["path"] for r in apigw.get_resources(restApiId=again["id"])["items"]} == set(paths)


def test_put_rest_api_overwrites_or_merges(env):
    server, apigw = env
    doc = {"swagger": "2.0", "info": {"title": "put", "version": "1"}, "paths": {
        "/a": {"get": {"responses": {"200": {"description": "ok"}},
                       "x-amazon-apigateway-integration": {"type": "mock", "requestTemplates": {"application/json": '{"statusCode": 200}'},
                                                           "responses": {"default": {"statusCode": "200"}}}}}}}
    api = apigw.create_rest_api(name="put")
    apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="old")
    apigw.put_rest_api(restApiId=api["id"], mode="merge", body=json.dumps(doc).encode())
    assert {r["path"] for r in apigw.get_resources(restApiId=api["id"])["items"]} == {"/", "/old", "/a"}
    apigw.put_rest_api(restApiId=api["id"], mode="overwrite", body=json.dumps(doc).encode())
    resources = apigw.get_resources(restApiId=api["id"])["items"]
    assert {r["path"] for r in resources} == {"/", "/a"}
    assert [r["id"] for r in resources if r["path"] == "/"] == [api["rootResourceId"]]
    with pytest.raises(Exception) as e:
        apigw.import_rest_api(body=b"openapi: 3.0.1\ninfo: [title: yaml\n")
    assert e.value.response["Error"]["Code"] == "BadRequestException"
    yaml_api = apigw.import_rest_api(body=b"openapi: 3.0.1\ninfo:\n  title: yaml\npaths:\n  /y:\n    get:\n      responses:\n        '200': {description: ok}\n")
    assert yaml_api["name"] == "yaml"
    assert {r["path"] for r in apigw.get_resources(restApiId=yaml_api["id"])["items"]} == {"/", "/y"}
