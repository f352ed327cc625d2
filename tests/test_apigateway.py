"""API Gateway REST APIs (v1): the control plane with boto3, AWS's shapes, defaults and
errors."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def apigw(client):
    return client("apigateway")


def error_of(excinfo):
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"], excinfo.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_create_rest_api_answers_defaults_and_a_root_resource(apigw):
    api = apigw.create_rest_api(name="shop", description="d", binaryMediaTypes=["image/png"])
    assert api["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert len(api["id"]) == 10 and api["id"].isalnum()
    assert api["name"] == "shop"
    assert api["apiKeySource"] == "HEADER"
    assert api["endpointConfiguration"]["types"] == ["EDGE"]
    assert api["disableExecuteApiEndpoint"] is False
    assert api["binaryMediaTypes"] == ["image/png"]
    assert "createdDate" in api
    resources = apigw.get_resources(restApiId=api["id"])["items"]
    assert resources == [{"id": api["rootResourceId"], "path": "/"}]
    assert apigw.get_rest_api(restApiId=api["id"])["name"] == "shop"
    regional = apigw.create_rest_api(name="r", endpointConfiguration={"types": ["REGIONAL"]}, tags={"team": "a"})
    assert regional["endpointConfiguration"]["types"] == ["REGIONAL"]
    assert regional["tags"] == {"team": "a"}


def test_unknown_ids_are_not_found_with_aws_words(apigw):
    with pytest.raises(ClientError) as e:
        apigw.get_rest_api(restApiId="nope123456")
    assert error_of(e) == ("NotFoundException", "Invalid API identifier specified 000000000000:nope123456", 404)
    api = apigw.create_rest_api(name="x")
    with pytest.raises(ClientError) as e:
        apigw.get_resource(restApiId=api["id"], resourceId="nope")
    assert error_of(e) == ("NotFoundException", "Invalid Resource identifier specified", 404)
    with pytest.raises(ClientError) as e:
        apigw.get_method(restApiId=api["id"], resourceId=api["rootResourceId"], httpMethod="GET")
    assert error_of(e) == ("NotFoundException", "Invalid Method identifier specified", 404)
    with pytest.raises(ClientError) as e:
        apigw.get_stage(restApiId=api["id"], stageName="prod")
    assert error_of(e) == ("NotFoundException", "Invalid Stage identifier specified", 404)


def test_update_rest_api_applies_patch_operations(apigw):
    api = apigw.create_rest_api(name="p", binaryMediaTypes=["image/png"])
    out = apigw.update_rest_api(restApiId=api["id"], patchOperations=[
        {"op": "replace", "path": "/name", "value": "renamed"},
        {"op": "add", "path": "/binaryMediaTypes/application~1octet-stream"},
        {"op": "remove", "path": "/binaryMediaTypes/image~1png"},
        {"op": "replace", "path": "/minimumCompressionSize", "value": "1024"},
        {"op": "replace", "path": "/endpointConfiguration/types/EDGE", "value": "REGIONAL"},
    ])
    assert out["name"] == "renamed"
    assert out["binaryMediaTypes"] == ["application/octet-stream"]
    assert out["minimumCompressionSize"] == 1024
    assert out["endpointConfiguration"]["types"] == ["REGIONAL"]
    with pytest.raises(ClientError) as e:
        apigw.update_rest_api(restApiId=api["id"], patchOperations=[{"op": "replace", "path": "/nope", "value": "x"}])
    assert error_of(e)[0] == "BadRequestException"


def test_resources_follow_path_part_rules(apigw):
    api = apigw.create_rest_api(name="tree")
    root = api["rootResourceId"]
    items = apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="items")
    assert items["path"] == "/items" and items["parentId"] == root
    one = apigw.create_resource(restApiId=api["id"], parentId=items["id"], pathPart="{id}")
    assert one["path"] == "/items/{id}"
    with pytest.raises(ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="items")
    assert error_of(e) == ("ConflictException", "Another resource with the same parent already has this name: items", 409)
    with pytest.raises(ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=items["id"], pathPart="{other}")
    code, message, status = error_of(e)
    assert (code, status) == ("BadRequestException", 400) and "variable path part" in message
    with pytest.raises(ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="bad path")
    assert error_of(e)[0] == "BadRequestException"
    greedy = apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="{proxy+}")
    with pytest.raises(ClientError) as e:
        apigw.create_resource(restApiId=api["id"], parentId=greedy["id"], pathPart="x")
    assert error_of(e)[0] == "BadRequestException"
    renamed = apigw.update_resource(restApiId=api["id"], resourceId=items["id"],
                                    patchOperations=[{"op": "replace", "path": "/pathPart", "value": "things"}])
    assert renamed["path"] == "/things"
    assert apigw.get_resource(restApiId=api["id"], resourceId=one["id"])["path"] == "/things/{id}"
    apigw.delete_resource(restApiId=api["id"], resourceId=items["id"])
    paths = {r["path"] for r in apigw.get_resources(restApiId=api["id"])["items"]}
    assert paths == {"/", "/{proxy+}"}


def test_methods_integrations_and_their_responses_nest_in_resources(apigw):
    api = apigw.create_rest_api(name="m")
    root = api["rootResourceId"]
    method = apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="GET", authorizationType="NONE",
                              requestParameters={"method.request.querystring.q": False})
    assert method["ResponseMetadata"]["HTTPStatusCode"] == 201
    assert method["httpMethod"] == "GET" and method["apiKeyRequired"] is False
    with pytest.raises(ClientError) as e:
        apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="GET", authorizationType="NONE")
    assert error_of(e) == ("ConflictException", "Method already exists for this resource", 409)
    with pytest.raises(ClientError) as e:
        apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="FETCH", authorizationType="NONE")
    assert error_of(e)[0] == "BadRequestException"
    apigw.put_method_response(restApiId=api["id"], resourceId=root, httpMethod="GET", statusCode="200",
                              responseModels={"application/json": "Empty"})
    integration = apigw.put_integration(restApiId=api["id"], resourceId=root, httpMethod="GET", type="MOCK",
                                        requestTemplates={"application/json": '{"statusCode": 200}'})
    assert integration["type"] == "MOCK"
    assert integration["passthroughBehavior"] == "WHEN_NO_MATCH"
    assert integration["timeoutInMillis"] == 29000
    assert integration["cacheNamespace"] == root
    apigw.put_integration_response(restApiId=api["id"], resourceId=root, httpMethod="GET", statusCode="200",
                                   responseTemplates={"application/json": '{"ok": true}'})
    got = apigw.get_method(restApiId=api["id"], resourceId=root, httpMethod="GET")
    assert got["methodResponses"]["200"]["responseModels"] == {"application/json": "Empty"}
    assert got["methodIntegration"]["integrationResponses"]["200"]["responseTemplates"] == {"application/json": '{"ok": true}'}
    embedded = apigw.get_resources(restApiId=api["id"], embed=["methods"])["items"][0]
    assert embedded["resourceMethods"]["GET"]["methodIntegration"]["type"] == "MOCK"
    plain = apigw.get_resources(restApiId=api["id"])["items"][0]
    assert plain["resourceMethods"] == {"GET": {}}
    updated = apigw.update_integration(restApiId=api["id"], resourceId=root, httpMethod="GET",
                                       patchOperations=[{"op": "replace", "path": "/timeoutInMillis", "value": "5000"}])
    assert updated["timeoutInMillis"] == 5000
    with pytest.raises(ClientError) as e:
        apigw.put_integration(restApiId=api["id"], resourceId=root, httpMethod="GET", type="HTTP",
                              integrationHttpMethod="GET", uri="not-a-url")
    assert error_of(e)[0] == "BadRequestException"
    apigw.delete_integration(restApiId=api["id"], resourceId=root, httpMethod="GET")
    with pytest.raises(ClientError) as e:
        apigw.get_integration(restApiId=api["id"], resourceId=root, httpMethod="GET")
    assert error_of(e) == ("NotFoundException", "Invalid Integration identifier specified", 404)
    apigw.delete_method(restApiId=api["id"], resourceId=root, httpMethod="GET")


def mock_api(apigw, name="mocked"):
    api = apigw.create_rest_api(name=name)
    root = api["rootResourceId"]
    apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=root, httpMethod="GET", type="MOCK")
    return api


def test_deployments_need_methods_and_create_their_stage(apigw):
    empty = apigw.create_rest_api(name="empty")
    with pytest.raises(ClientError) as e:
        apigw.create_deployment(restApiId=empty["id"], stageName="prod")
    assert error_of(e) == ("BadRequestException", "The REST API doesn't contain any methods", 400)
    api = mock_api(apigw)
    deployment = apigw.create_deployment(restApiId=api["id"], stageName="prod", variables={"fn": "a"},
                                         description="first")
    assert deployment["description"] == "first" and "createdDate" in deployment
    stage = apigw.get_stage(restApiId=api["id"], stageName="prod")
    assert stage["deploymentId"] == deployment["id"]
    assert stage["variables"] == {"fn": "a"}
    assert stage["cacheClusterEnabled"] is False and stage["cacheClusterStatus"] == "NOT_AVAILABLE"
    summary = apigw.get_deployment(restApiId=api["id"], deploymentId=deployment["id"], embed=["apisummary"])
    assert summary["apiSummary"] == {"/": {"GET": {"authorizationType": "NONE", "apiKeyRequired": False}}}
    with pytest.raises(ClientError) as e:
        apigw.delete_deployment(restApiId=api["id"], deploymentId=deployment["id"])
    assert error_of(e)[0] == "BadRequestException"
    second = apigw.create_deployment(restApiId=api["id"])
    staged = apigw.create_stage(restApiId=api["id"], stageName="dev", deploymentId=second["id"], tags={"a": "b"})
    assert staged["ResponseMetadata"]["HTTPStatusCode"] == 201 and staged["tags"] == {"a": "b"}
    with pytest.raises(ClientError) as e:
        apigw.create_stage(restApiId=api["id"], stageName="dev", deploymentId=second["id"])
    assert error_of(e) == ("ConflictException", "Stage already exists", 409)
    assert {s["stageName"] for s in apigw.get_stages(restApiId=api["id"])["item"]} == {"prod", "dev"}
    patched = apigw.update_stage(restApiId=api["id"], stageName="dev", patchOperations=[
        {"op": "replace", "path": "/variables/env", "value": "test"},
        {"op": "replace", "path": "/*/*/metrics/enabled", "value": "true"},
        {"op": "replace", "path": "/*/*/throttling/rateLimit", "value": "10"},
        {"op": "replace", "path": "/deploymentId", "value": deployment["id"]},
    ])
    assert patched["variables"] == {"env": "test"}
    assert patched["methodSettings"]["*/*"]["metricsEnabled"] is True
    assert patched["methodSettings"]["*/*"]["throttlingRateLimit"] == 10.0
    assert patched["deploymentId"] == deployment["id"]
    apigw.delete_stage(restApiId=api["id"], stageName="dev")
    apigw.delete_deployment(restApiId=api["id"], deploymentId=second["id"])
    assert len(apigw.get_deployments(restApiId=api["id"])["items"]) == 1


def test_lists_page_with_position_and_limit(apigw):
    ids = [apigw.create_rest_api(name=f"api{i}")["id"] for i in range(5)]
    first = apigw.get_rest_apis(limit=2)
    assert [a["id"] for a in first["items"]] == ids[:2]
    second = apigw.get_rest_apis(limit=2, position=first["position"])
    assert [a["id"] for a in second["items"]] == ids[2:4]
    paginator = apigw.get_paginator("get_rest_apis")
    assert [a["id"] for page in paginator.paginate(PaginationConfig={"PageSize": 2}) for a in page["items"]] == ids


def test_delete_rest_api_takes_its_children(apigw):
    api = mock_api(apigw, "gone")
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    apigw.delete_rest_api(restApiId=api["id"])
    with pytest.raises(ClientError) as e:
        apigw.get_stages(restApiId=api["id"])
    assert error_of(e)[0] == "NotFoundException"
    assert apigw.get_rest_apis()["items"] == []


def test_models_validators_authorizers_and_gateway_responses(apigw):
    api = apigw.create_rest_api(name="kids")
    model = apigw.create_model(restApiId=api["id"], name="Pet", contentType="application/json",
                               schema='{"type": "object"}')
    assert model["name"] == "Pet" and model["id"]
    with pytest.raises(ClientError) as e:
        apigw.create_model(restApiId=api["id"], name="Pet", contentType="application/json")
    assert error_of(e)[0] == "ConflictException"
    with pytest.raises(ClientError) as e:
        apigw.create_model(restApiId=api["id"], name="bad-name", contentType="application/json")
    assert error_of(e) == ("BadRequestException", "Model name must be alphanumeric", 400)
    assert apigw.get_model(restApiId=api["id"], modelName="Pet")["schema"] == '{"type": "object"}'
    validator = apigw.create_request_validator(restApiId=api["id"], name="body", validateRequestBody=True)
    assert apigw.get_request_validator(restApiId=api["id"], requestValidatorId=validator["id"])["validateRequestBody"] is True
    authorizer = apigw.create_authorizer(restApiId=api["id"], name="auth", type="TOKEN",
                                         authorizerUri="arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:auth/invocations",
                                         identitySource="method.request.header.Authorization")
    assert authorizer["authorizerResultTtlInSeconds"] == 300
    with pytest.raises(ClientError) as e:
        apigw.create_authorizer(restApiId=api["id"], name="x", type="TOKEN")
    assert error_of(e)[0] == "BadRequestException"
    responses = apigw.get_gateway_responses(restApiId=api["id"], limit=500)["items"]
    by_type = {r["responseType"]: r for r in responses}
    assert by_type["MISSING_AUTHENTICATION_TOKEN"]["statusCode"] == "403"
    assert by_type["DEFAULT_4XX"]["defaultResponse"] is True and "statusCode" not in by_type["DEFAULT_4XX"]
    assert by_type["UNAUTHORIZED"]["responseTemplates"] == {"application/json": '{"message":$context.error.messageString}'}
    put = apigw.put_gateway_response(restApiId=api["id"], responseType="DEFAULT_4XX", statusCode="400",
                                     responseParameters={"gatewayresponse.header.Access-Control-Allow-Origin": "'*'"})
    assert put["defaultResponse"] is False
    assert apigw.get_gateway_response(restApiId=api["id"], responseType="DEFAULT_4XX")["statusCode"] == "400"
    apigw.delete_gateway_response(restApiId=api["id"], responseType="DEFAULT_4XX")
    assert apigw.get_gateway_response(restApiId=api["id"], responseType="DEFAULT_4XX")["defaultResponse"] is True


def test_api_keys_usage_plans_and_their_keys(apigw):
    key = apigw.create_api_key(name="k1", enabled=True, tags={"t": "1"})
    assert len(key["value"]) == 40 and key["enabled"] is True
    assert "value" not in apigw.get_api_key(apiKey=key["id"])
    assert apigw.get_api_key(apiKey=key["id"], includeValue=True)["value"] == key["value"]
    assert apigw.create_api_key(name="k2")["enabled"] is False
    assert [k["name"] for k in apigw.get_api_keys(nameQuery="k1")["items"]] == ["k1"]
    api = mock_api(apigw, "planned")
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    plan = apigw.create_usage_plan(name="basic", apiStages=[{"apiId": api["id"], "stage": "prod"}],
                                   throttle={"rateLimit": 10.0, "burstLimit": 5}, quota={"limit": 100, "period": "DAY"})
    assert plan["apiStages"] == [{"apiId": api["id"], "stage": "prod"}]
    plan_key = apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"], keyType="API_KEY")
    assert plan_key == {**plan_key, "id": key["id"], "type": "API_KEY", "name": "k1", "value": key["value"]}
    assert [k["id"] for k in apigw.get_usage_plan_keys(usagePlanId=plan["id"])["items"]] == [key["id"]]
    patched = apigw.update_usage_plan(usagePlanId=plan["id"], patchOperations=[
        {"op": "replace", "path": "/throttle/rateLimit", "value": "20"},
        {"op": "remove", "path": "/apiStages", "value": f"{api['id']}:prod"},
    ])
    assert patched["throttle"]["rateLimit"] == 20.0 and patched["apiStages"] == []
    apigw.delete_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"])
    with pytest.raises(ClientError) as e:
        apigw.get_usage_plan_key(usagePlanId=plan["id"], keyId=key["id"])
    assert error_of(e)[0] == "NotFoundException"


def test_domain_names_base_path_mappings_and_tags(apigw):
    api = mock_api(apigw, "domained")
    domain = apigw.create_domain_name(domainName="api.example.com", certificateArn="arn:aws:acm:us-east-1:000000000000:certificate/x")
    assert domain["domainName"] == "api.example.com"
    assert domain["distributionDomainName"].endswith(".cloudfront.net")
    mapping = apigw.create_base_path_mapping(domainName="api.example.com", restApiId=api["id"], stage="prod")
    assert mapping["basePath"] == "(none)"
    assert apigw.get_base_path_mappings(domainName="api.example.com")["items"] == [
        {"basePath": "(none)", "restApiId": api["id"], "stage": "prod"}]
    arn = f"arn:aws:apigateway:us-east-1::/restapis/{api['id']}"
    apigw.tag_resource(resourceArn=arn, tags={"a": "1", "b": "2"})
    apigw.untag_resource(resourceArn=arn, tagKeys=["a"])
    assert apigw.get_tags(resourceArn=arn)["tags"] == {"b": "2"}
    assert apigw.get_rest_api(restApiId=api["id"])["tags"] == {"b": "2"}
