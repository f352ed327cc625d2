"""API Gateway HTTP APIs (apigatewayv2), the control plane: APIs, quick create, routes,
integrations, stages and deployments, authorizers, models, domain names and API mappings,
tags, paging, OpenAPI import and export, and AWS's errors."""

from __future__ import annotations

import json
import os
import sys

import boto3
import pytest
from botocore.config import Config
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402

CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}
FN_ARN = "arn:aws:lambda:us-east-1:000000000000:function:f"


@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral") as s:
        yield s


@pytest.fixture(scope="module")
def apigw(server):
    return boto3.client("apigatewayv2", endpoint_url=server.endpoint,
                        config=Config(retries={"max_attempts": 1}), **CREDENTIALS)


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def plain(response):
    """A response without botocore's metadata."""
    return {k: v for k, v in response.items() if k != "ResponseMetadata"}


def lambda_integration(apigw, api_id, version="2.0"):
    return apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY", IntegrationUri=FN_ARN,
                                    PayloadFormatVersion=version)["IntegrationId"]


def test_create_api_returns_aws_values(apigw):
    api = apigw.create_api(Name="shop", ProtocolType="HTTP", Description="d", Tags={"team": "core"},
                           CorsConfiguration={"AllowOrigins": ["https://app.example"], "MaxAge": 60})
    api_id = api["ApiId"]
    assert len(api_id) == 10 and api_id.isalnum() and api_id == api_id.lower()
    assert api["ApiEndpoint"] == f"https://{api_id}.execute-api.us-east-1.amazonaws.com"
    assert api["RouteSelectionExpression"] == "$request.method $request.path"
    assert api["ApiKeySelectionExpression"] == "$request.header.x-api-key"
    assert api["ProtocolType"] == "HTTP" and api["DisableExecuteApiEndpoint"] is False
    assert api["CorsConfiguration"] == {"AllowOrigins": ["https://app.example"], "MaxAge": 60}
    assert api["Tags"] == {"team": "core"} and "CreatedDate" in api
    got = apigw.get_api(ApiId=api_id)
    assert got["Name"] == "shop" and got["Description"] == "d"
    updated = apigw.update_api(ApiId=api_id, Name="shop2", CorsConfiguration={"AllowOrigins": ["*"]})
    assert updated["Name"] == "shop2" and updated["CorsConfiguration"] == {"AllowOrigins": ["*"]}
    apigw.delete_cors_configuration(ApiId=api_id)
    assert "CorsConfiguration" not in apigw.get_api(ApiId=api_id)
    apigw.delete_api(ApiId=api_id)
    with pytest.raises(ClientError) as e:
        apigw.get_api(ApiId=api_id)
    assert error_of(e) == ("NotFoundException", f"Invalid API identifier specified 000000000000:{api_id}", 404)


def test_websocket_apis_are_stored_with_their_selection_expression(apigw):
    api = apigw.create_api(Name="ws", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")
    assert api["ApiEndpoint"].startswith("wss://") and api["RouteSelectionExpression"] == "$request.body.action"
    integration = apigw.create_integration(ApiId=api["ApiId"], IntegrationType="MOCK")
    assert integration["IntegrationType"] == "MOCK"
    route = apigw.create_route(ApiId=api["ApiId"], RouteKey="$connect",
                               Target=f"integrations/{integration['IntegrationId']}")
    response = apigw.create_route_response(ApiId=api["ApiId"], RouteId=route["RouteId"], RouteResponseKey="$default")
    assert apigw.get_route_responses(ApiId=api["ApiId"], RouteId=route["RouteId"])["Items"] == [plain(response)]
    ir = apigw.create_integration_response(ApiId=api["ApiId"], IntegrationId=integration["IntegrationId"],
                                           IntegrationResponseKey="$default")
    assert plain(apigw.get_integration_response(ApiId=api["ApiId"], IntegrationId=integration["IntegrationId"],
                                                IntegrationResponseId=ir["IntegrationResponseId"])) == plain(ir)
    with pytest.raises(ClientError) as e:
        apigw.create_api(Name="ws", ProtocolType="WEBSOCKET")
    assert error_of(e)[0] == "BadRequestException"


def test_quick_create_makes_default_route_integration_and_auto_deployed_stage(apigw):
    api = apigw.create_api(Name="quick", ProtocolType="HTTP", Target=FN_ARN)
    api_id = api["ApiId"]
    routes = apigw.get_routes(ApiId=api_id)["Items"]
    assert [r["RouteKey"] for r in routes] == ["$default"] and routes[0]["ApiGatewayManaged"] is True
    integration = apigw.get_integrations(ApiId=api_id)["Items"][0]
    assert integration["IntegrationType"] == "AWS_PROXY" and integration["PayloadFormatVersion"] == "2.0"
    assert routes[0]["Target"] == f"integrations/{integration['IntegrationId']}"
    stage = apigw.get_stage(ApiId=api_id, StageName="$default")
    assert stage["AutoDeploy"] is True and stage["DeploymentId"]
    deployment = apigw.get_deployment(ApiId=api_id, DeploymentId=stage["DeploymentId"])
    assert deployment["AutoDeployed"] is True and deployment["DeploymentStatus"] == "DEPLOYED"
    keyed = apigw.create_api(Name="quick2", ProtocolType="HTTP", Target="https://example.com", RouteKey="GET /x")
    assert [r["RouteKey"] for r in apigw.get_routes(ApiId=keyed["ApiId"])["Items"]] == ["GET /x"]
    assert apigw.get_integrations(ApiId=keyed["ApiId"])["Items"][0]["IntegrationType"] == "HTTP_PROXY"


def test_routes_and_integrations_with_aws_checks(apigw):
    api_id = apigw.create_api(Name="r", ProtocolType="HTTP")["ApiId"]
    integration_id = lambda_integration(apigw, api_id)
    for key in ["GET /items/{id}", "ANY /{proxy+}", "$default"]:
        route = apigw.create_route(ApiId=api_id, RouteKey=key, Target=f"integrations/{integration_id}")
        assert route["RouteKey"] == key and route["AuthorizationType"] == "NONE" and route["ApiKeyRequired"] is False
        assert len(route["RouteId"]) == 7
    with pytest.raises(ClientError) as e:
        apigw.create_route(ApiId=api_id, RouteKey="GET /items/{id}")
    assert error_of(e)[0] == "ConflictException"
    for bad in ["FETCH /x", "GET x", "GET /{proxy+}/more"]:
        with pytest.raises(ClientError) as e:
            apigw.create_route(ApiId=api_id, RouteKey=bad)
        assert error_of(e)[0] == "BadRequestException"
    with pytest.raises(ClientError) as e:
        apigw.create_integration(ApiId=api_id, IntegrationType="MOCK")
    assert error_of(e)[0] == "BadRequestException"
    with pytest.raises(ClientError) as e:
        apigw.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationUri="https://e.com",
                                 IntegrationMethod="GET", PayloadFormatVersion="2.0")
    assert error_of(e)[0] == "BadRequestException"
    http = apigw.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationUri="https://e.com",
                                    IntegrationMethod="GET")
    assert http["PayloadFormatVersion"] == "1.0" and http["TimeoutInMillis"] == 30000
    assert http["ConnectionType"] == "INTERNET"
    updated = apigw.update_integration(ApiId=api_id, IntegrationId=http["IntegrationId"], TimeoutInMillis=5000)
    assert updated["TimeoutInMillis"] == 5000 and updated["IntegrationUri"] == "https://e.com"
    route_id = apigw.get_routes(ApiId=api_id)["Items"][0]["RouteId"]
    assert apigw.update_route(ApiId=api_id, RouteId=route_id, OperationName="getItem")["OperationName"] == "getItem"
    apigw.delete_route(ApiId=api_id, RouteId=route_id)
    with pytest.raises(ClientError) as e:
        apigw.get_route(ApiId=api_id, RouteId=route_id)
    assert error_of(e) == ("NotFoundException", f"Invalid Route identifier specified 000000000000:{route_id}", 404)
    with pytest.raises(ClientError) as e:
        apigw.get_integration(ApiId=api_id, IntegrationId="nope123")
    assert error_of(e)[0] == "NotFoundException"


def test_stages_deployments_and_auto_deploy(apigw):
    api_id = apigw.create_api(Name="s", ProtocolType="HTTP")["ApiId"]
    with pytest.raises(ClientError) as e:
        apigw.create_deployment(ApiId=api_id)
    assert error_of(e)[0] == "BadRequestException"
    integration_id = lambda_integration(apigw, api_id)
    apigw.create_route(ApiId=api_id, RouteKey="GET /a", Target=f"integrations/{integration_id}")
    stage = apigw.create_stage(ApiId=api_id, StageName="dev", StageVariables={"table": "t1"},
                               AccessLogSettings={"DestinationArn": "arn:aws:logs:us-east-1:000000000000:log-group:g",
                                                  "Format": "$context.requestId"},
                               DefaultRouteSettings={"ThrottlingBurstLimit": 10})
    assert stage["StageVariables"] == {"table": "t1"} and "DeploymentId" not in stage
    with pytest.raises(ClientError) as e:
        apigw.create_stage(ApiId=api_id, StageName="dev")
    assert error_of(e)[0] == "ConflictException"
    deployment = apigw.create_deployment(ApiId=api_id, StageName="dev", Description="first")
    assert deployment["DeploymentStatus"] == "DEPLOYED" and deployment["AutoDeployed"] is False
    assert apigw.get_stage(ApiId=api_id, StageName="dev")["DeploymentId"] == deployment["DeploymentId"]
    with pytest.raises(ClientError) as e:
        apigw.delete_deployment(ApiId=api_id, DeploymentId=deployment["DeploymentId"])
    assert error_of(e)[0] == "BadRequestException"
    auto = apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    first = auto["DeploymentId"]
    apigw.create_route(ApiId=api_id, RouteKey="GET /b", Target=f"integrations/{integration_id}")
    second = apigw.get_stage(ApiId=api_id, StageName="$default")["DeploymentId"]
    assert second != first
    assert apigw.get_stage(ApiId=api_id, StageName="dev")["DeploymentId"] == deployment["DeploymentId"]
    apigw.delete_access_log_settings(ApiId=api_id, StageName="dev")
    assert "AccessLogSettings" not in apigw.get_stage(ApiId=api_id, StageName="dev")
    names = [s["StageName"] for s in apigw.get_stages(ApiId=api_id)["Items"]]
    assert names == ["dev", "$default"]
    apigw.delete_stage(ApiId=api_id, StageName="dev")
    with pytest.raises(ClientError) as e:
        apigw.get_stage(ApiId=api_id, StageName="dev")
    assert error_of(e)[0] == "NotFoundException"


def test_authorizers_jwt_and_request(apigw):
    api_id = apigw.create_api(Name="auth", ProtocolType="HTTP")["ApiId"]
    jwt = apigw.create_authorizer(ApiId=api_id, AuthorizerType="JWT", Name="jwt",
                                  IdentitySource=["$request.header.Authorization"],
                                  JwtConfiguration={"Issuer": "https://issuer.example", "Audience": ["app"]})
    assert jwt["JwtConfiguration"]["Audience"] == ["app"]
    lam = apigw.create_authorizer(ApiId=api_id, AuthorizerType="REQUEST", Name="lam",
                                  IdentitySource=["$request.header.x-token"],
                                  AuthorizerUri=f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{FN_ARN}/invocations",
                                  AuthorizerPayloadFormatVersion="2.0", EnableSimpleResponses=True,
                                  AuthorizerResultTtlInSeconds=60)
    assert lam["EnableSimpleResponses"] is True
    with pytest.raises(ClientError) as e:
        apigw.create_authorizer(ApiId=api_id, AuthorizerType="REQUEST", Name="x", IdentitySource=["$request.header.a"],
                                AuthorizerUri="arn:x", AuthorizerPayloadFormatVersion="1.0", EnableSimpleResponses=True)
    assert error_of(e)[0] == "BadRequestException"
    route = apigw.create_route(ApiId=api_id, RouteKey="GET /me", AuthorizationType="JWT",
                               AuthorizerId=jwt["AuthorizerId"], AuthorizationScopes=["read"])
    assert route["AuthorizationScopes"] == ["read"]
    with pytest.raises(ClientError) as e:
        apigw.create_route(ApiId=api_id, RouteKey="GET /x", AuthorizationType="JWT", AuthorizerId=lam["AuthorizerId"])
    assert error_of(e)[0] == "BadRequestException"
    assert len(apigw.get_authorizers(ApiId=api_id)["Items"]) == 2
    apigw.delete_authorizer(ApiId=api_id, AuthorizerId=lam["AuthorizerId"])
    with pytest.raises(ClientError) as e:
        apigw.get_authorizer(ApiId=api_id, AuthorizerId=lam["AuthorizerId"])
    assert error_of(e)[0] == "NotFoundException"


def test_models(apigw):
    api_id = apigw.create_api(Name="m", ProtocolType="HTTP")["ApiId"]
    model = apigw.create_model(ApiId=api_id, Name="Item", Schema='{"type": "object"}')
    assert model["ContentType"] == "application/json" and model["Name"] == "Item"
    assert apigw.get_model(ApiId=api_id, ModelId=model["ModelId"])["Schema"] == '{"type": "object"}'
    assert "Value" in apigw.get_model_template(ApiId=api_id, ModelId=model["ModelId"])
    apigw.update_model(ApiId=api_id, ModelId=model["ModelId"], Description="an item")
    assert apigw.get_models(ApiId=api_id)["Items"][0]["Description"] == "an item"


def test_domain_names_api_mappings_and_tags(apigw):
    api_id = apigw.create_api(Name="d", ProtocolType="HTTP", Target=FN_ARN)["ApiId"]
    domain = apigw.create_domain_name(DomainName="api.example.com", Tags={"a": "1"},
                                      DomainNameConfigurations=[{"CertificateArn": "arn:aws:acm:us-east-1:000000000000:certificate/x"}])
    config = domain["DomainNameConfigurations"][0]
    assert config["ApiGatewayDomainName"].endswith(".execute-api.us-east-1.amazonaws.com")
    assert config["DomainNameStatus"] == "AVAILABLE" and config["EndpointType"] == "REGIONAL"
    with pytest.raises(ClientError) as e:
        apigw.create_domain_name(DomainName="api.example.com")
    assert error_of(e)[0] == "ConflictException"
    mapping = apigw.create_api_mapping(DomainName="api.example.com", ApiId=api_id, Stage="$default", ApiMappingKey="v1")
    assert apigw.get_api_mappings(DomainName="api.example.com")["Items"] == [plain(mapping)]
    with pytest.raises(ClientError) as e:
        apigw.create_api_mapping(DomainName="api.example.com", ApiId=api_id, Stage="$default", ApiMappingKey="v1")
    assert error_of(e)[0] == "ConflictException"
    with pytest.raises(ClientError) as e:
        apigw.create_api_mapping(DomainName="api.example.com", ApiId=api_id, Stage="nope")
    assert error_of(e)[0] == "NotFoundException"
    arn = f"arn:aws:apigateway:us-east-1::/apis/{api_id}"
    apigw.tag_resource(ResourceArn=arn, Tags={"env": "test", "team": "x"})
    apigw.untag_resource(ResourceArn=arn, TagKeys=["team"])
    assert apigw.get_tags(ResourceArn=arn)["Tags"] == {"env": "test"}
    assert apigw.get_tags(ResourceArn="arn:aws:apigateway:us-east-1::/domainnames/api.example.com")["Tags"] == {"a": "1"}
    stage_arn = f"arn:aws:apigateway:us-east-1::/apis/{api_id}/stages/$default"
    apigw.tag_resource(ResourceArn=stage_arn, Tags={"s": "1"})
    assert apigw.get_stage(ApiId=api_id, StageName="$default")["Tags"] == {"s": "1"}
    with pytest.raises(ClientError) as e:
        apigw.get_tags(ResourceArn="arn:aws:apigateway:us-east-1::/apis/nope000000")
    assert error_of(e)[0] == "NotFoundException"
    apigw.delete_api_mapping(DomainName="api.example.com", ApiMappingId=mapping["ApiMappingId"])
    apigw.delete_domain_name(DomainName="api.example.com")
    with pytest.raises(ClientError) as e:
        apigw.get_domain_name(DomainName="api.example.com")
    assert error_of(e)[0] == "NotFoundException"


def test_paging_with_next_token(apigw, server):
    fresh = boto3.client("apigatewayv2", endpoint_url=server.endpoint,
                         **{**CREDENTIALS, "region_name": "eu-west-3"})
    ids = [fresh.create_api(Name=f"p{i}", ProtocolType="HTTP")["ApiId"] for i in range(5)]
    page = fresh.get_apis(MaxResults="2")
    seen = [a["ApiId"] for a in page["Items"]]
    while "NextToken" in page:
        page = fresh.get_apis(MaxResults="2", NextToken=page["NextToken"])
        seen += [a["ApiId"] for a in page["Items"]]
    assert seen == ids
    with pytest.raises(ClientError) as e:
        fresh.get_apis(NextToken="garbage")
    assert error_of(e)[0] == "BadRequestException"


SAM_DOC = {
    "openapi": "3.0.1",
    "info": {"title": "sam-app", "version": "1.0"},
    "x-amazon-apigateway-cors": {"allowOrigins": ["*"], "allowMethods": ["GET"], "maxAge": 300},
    "paths": {
        "/items/{id}": {"get": {
            "security": [{"OAuth2": ["items/read"]}],
            "x-amazon-apigateway-integration": {
                "type": "aws_proxy", "httpMethod": "POST", "payloadFormatVersion": "2.0",
                "uri": f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{FN_ARN}/invocations"}}},
        "/$default": {"x-amazon-apigateway-any-method": {
            "isDefaultRoute": True,
            "x-amazon-apigateway-integration": {"type": "http_proxy", "httpMethod": "ANY",
                                                "uri": "https://example.com", "payloadFormatVersion": "1.0"}}},
    },
    "components": {"securitySchemes": {"OAuth2": {
        "type": "oauth2",
        "x-amazon-apigateway-authorizer": {
            "type": "jwt", "identitySource": "$request.header.Authorization",
            "jwtConfiguration": {"issuer": "https://issuer.example", "audience": ["app"]}}}}},
}


def test_import_export_and_reimport_openapi(apigw):
    api = apigw.import_api(Body=json.dumps(SAM_DOC))
    api_id = api["ApiId"]
    assert api["Name"] == "sam-app" and api["CorsConfiguration"]["MaxAge"] == 300
    routes = {r["RouteKey"]: r for r in apigw.get_routes(ApiId=api_id)["Items"]}
    assert set(routes) == {"GET /items/{id}", "$default"}
    secured = routes["GET /items/{id}"]
    assert secured["AuthorizationType"] == "JWT" and secured["AuthorizationScopes"] == ["items/read"]
    authorizer = apigw.get_authorizer(ApiId=api_id, AuthorizerId=secured["AuthorizerId"])
    assert authorizer["JwtConfiguration"] == {"Issuer": "https://issuer.example", "Audience": ["app"]}
    assert authorizer["IdentitySource"] == ["$request.header.Authorization"]
    types = sorted(i["IntegrationType"] for i in apigw.get_integrations(ApiId=api_id)["Items"])
    assert types == ["AWS_PROXY", "HTTP_PROXY"]
    exported = json.loads(apigw.export_api(ApiId=api_id, Specification="OAS30", OutputType="JSON")["body"].read())
    assert exported["openapi"].startswith("3.0") and exported["info"]["title"] == "sam-app"
    get = exported["paths"]["/items/{id}"]["get"]
    assert get["x-amazon-apigateway-integration"]["type"] == "aws_proxy"
    assert get["security"] == [{"OAuth2": ["items/read"]}]
    assert "x-amazon-apigateway-any-method" in exported["paths"]["/$default"]
    assert exported["components"]["securitySchemes"]["OAuth2"]["x-amazon-apigateway-authorizer"]["type"] == "jwt"
    assert exported["x-amazon-apigateway-cors"]["maxAge"] == 300
    yaml_text = apigw.export_api(ApiId=api_id, Specification="OAS30", OutputType="YAML")["body"].read().decode()
    assert '"openapi": "3.0.1"' in yaml_text
    again = apigw.import_api(Body=json.dumps(exported))
    assert len(apigw.get_routes(ApiId=again["ApiId"])["Items"]) == 2
    smaller = dict(SAM_DOC, paths={"/only": {"post": SAM_DOC["paths"]["/$default"]["x-amazon-apigateway-any-method"]}})
    apigw.reimport_api(ApiId=api_id, Body=json.dumps(smaller))
    assert [r["RouteKey"] for r in apigw.get_routes(ApiId=api_id)["Items"]] == ["POST /only"]
    yaml_api = apigw.import_api(Body="openapi: 3.0.1\ninfo: {title: from-yaml, version: '1'}\npaths:\n  /y:\n    get:\n"
                                     "      x-amazon-apigateway-integration:\n        type: http_proxy\n"
                                     "        httpMethod: GET\n        uri: https://example.com\n        payloadFormatVersion: '1.0'\n")
    assert yaml_api["Name"] == "from-yaml"
    assert [r["RouteKey"] for r in apigw.get_routes(ApiId=yaml_api["ApiId"])["Items"]] == ["GET /y"]
    with pytest.raises(ClientError) as e:
        apigw.import_api(Body="not json at all {")
    assert error_of(e)[0] == "BadRequestException"
    warned = dict(SAM_DOC, paths={"/bare": {"get": {}}})
    with pytest.raises(ClientError) as e:
        apigw.import_api(Body=json.dumps(warned), FailOnWarnings=True)
    assert error_of(e)[0] == "BadRequestException"
    assert apigw.import_api(Body=json.dumps(warned))["Warnings"]
