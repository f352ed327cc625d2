"""API Gateway REST APIs: ImportApiKeys, ImportDocumentationParts, SDK types and GetSdk,
TestInvokeMethod and TestInvokeAuthorizer, and domain name access associations, with
boto3, and their errors."""

from __future__ import annotations

import io
import json
import zipfile

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ROLE, zip_of

AUTHORIZER = '''
def handler(event, context):
    token = event["authorizationToken"]
    if token == "bad":
        raise Exception("Unauthorized")
    effect = "Deny" if token == "deny" else "Allow"
    return {"principalId": "user-" + token, "context": {"tier": "gold"},
            "policyDocument": {"Version": "2012-10-17", "Statement": [
                {"Action": "execute-api:Invoke", "Effect": effect, "Resource": event["methodArn"]}]}}
'''


def code(e):
    return e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_import_api_keys_reads_csv_and_joins_usage_plans(client):
    apigw = client("apigateway")
    plan = apigw.create_usage_plan(name="p")
    csv = ("Name,key,description,Enabled,usageplanIds\n"
           f"first,abcdefghijklmnopqrstuvwxyz0001,\"first, quoted\",TRUE,{plan['id']}\n"
           "second,abcdefghijklmnopqrstuvwxyz0002,,false,\n")
    imported = apigw.import_api_keys(body=csv.encode(), format="csv")
    assert len(imported["ids"]) == 2 and imported["warnings"] == []
    keys = {k["name"]: k for k in apigw.get_api_keys(includeValues=True)["items"]}
    assert keys["first"]["value"] == "abcdefghijklmnopqrstuvwxyz0001"
    assert keys["first"]["description"] == "first, quoted" and keys["first"]["enabled"] is True
    assert keys["second"]["enabled"] is False
    assert [k["id"] for k in apigw.get_usage_plan_keys(usagePlanId=plan["id"])["items"]] == [keys["first"]["id"]]
    with_warning = apigw.import_api_keys(body=b"name,key\nthird,\n", format="csv")
    assert with_warning["ids"] == [] and len(with_warning["warnings"]) == 1
    with pytest.raises(ClientError) as e:
        apigw.import_api_keys(body=b"name,key\nthird,\n", format="csv", failOnWarnings=True)
    assert code(e) == ("BadRequestException", 400)
    with pytest.raises(ClientError) as e:
        apigw.import_api_keys(body=b"name,description\nx,y\n", format="csv")
    assert code(e) == ("BadRequestException", 400)
    with pytest.raises(ClientError) as e:
        apigw.import_api_keys(body=b"key\nabcdefghijklmnopqrstuvwxyz0001\n", format="csv")
    assert code(e) == ("ConflictException", 409)


def test_import_documentation_parts_merges_or_overwrites(client):
    apigw = client("apigateway")
    api = apigw.create_rest_api(name="docs")
    apigw.create_documentation_part(restApiId=api["id"], location={"type": "RESOURCE", "path": "/old"},
                                    properties='{"description": "old"}')
    doc = {"openapi": "3.0.1", "info": {"title": "docs"}, "x-amazon-apigateway-documentation": {
        "version": "1", "documentationParts": [
            {"location": {"type": "API"}, "properties": {"description": "the API"}},
            {"location": {"type": "METHOD", "path": "/pets", "method": "GET"}, "properties": {"summary": "list"}}]}}
    merged = apigw.import_documentation_parts(restApiId=api["id"], body=json.dumps(doc).encode())
    assert len(merged["ids"]) == 2
    parts = apigw.get_documentation_parts(restApiId=api["id"])["items"]
    assert len(parts) == 3
    described = {p["location"]["type"]: json.loads(p["properties"]) for p in parts}
    assert described["API"] == {"description": "the API"}
    again = apigw.import_documentation_parts(restApiId=api["id"], body=json.dumps(doc).encode())
    assert sorted(again["ids"]) == sorted(merged["ids"])
    apigw.import_documentation_parts(restApiId=api["id"], mode="overwrite", body=json.dumps(doc).encode())
    assert len(apigw.get_documentation_parts(restApiId=api["id"])["items"]) == 2
    with pytest.raises(ClientError) as e:
        apigw.import_documentation_parts(restApiId="nope000000", body=json.dumps(doc).encode())
    assert code(e) == ("NotFoundException", 404)
    with pytest.raises(ClientError) as e:
        apigw.import_documentation_parts(restApiId=api["id"], body=b"{not json")
    assert code(e) == ("BadRequestException", 400)


def test_sdk_types_and_an_empty_sdk_archive(client):
    apigw = client("apigateway")
    types = {t["id"]: t for t in apigw.get_sdk_types()["items"]}
    assert {"android", "javascript", "ios-objective-c", "ios-swift", "java", "ruby"} <= set(types)
    java = apigw.get_sdk_type(id="java")
    assert java["friendlyName"] == "Java SDK"
    assert any(p["name"] == "service.name" and p["required"] for p in java["configurationProperties"])
    with pytest.raises(ClientError) as e:
        apigw.get_sdk_type(id="cobol")
    assert code(e) == ("NotFoundException", 404)
    api = apigw.create_rest_api(name="sdk")
    resource = apigw.get_resources(restApiId=api["id"])["items"][0]
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK")
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    sdk = apigw.get_sdk(restApiId=api["id"], stageName="prod", sdkType="javascript")
    assert zipfile.ZipFile(io.BytesIO(sdk["body"].read())).namelist() == []
    assert "attachment" in sdk["contentDisposition"]
    with pytest.raises(ClientError) as e:
        apigw.get_sdk(restApiId=api["id"], stageName="prod", sdkType="java")
    assert code(e) == ("BadRequestException", 400)
    with pytest.raises(ClientError) as e:
        apigw.get_sdk(restApiId=api["id"], stageName="nope", sdkType="javascript")
    assert code(e) == ("NotFoundException", 404)


def test_test_invoke_method_runs_the_undeployed_method(client):
    apigw = client("apigateway")
    api = apigw.create_rest_api(name="tested")
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="{id}")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="POST",
                     authorizationType="AWS_IAM", apiKeyRequired=True)
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="POST", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 201}'})
    apigw.put_integration_response(
        restApiId=api["id"], resourceId=resource["id"], httpMethod="POST", statusCode="201",
        responseParameters={"method.response.header.x-id": "'fixed'"},
        responseTemplates={"application/json":
                           '{"id": "$input.params(\'id\')", "q": "$input.params(\'q\')", "v": "$stageVariables.v"}'})
    answer = apigw.test_invoke_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="POST",
                                      pathWithQueryString="/7?q=x", body="{}", headers={"X-A": "1"},
                                      stageVariables={"v": "sv"})
    assert answer["status"] == 201
    assert json.loads(answer["body"]) == {"id": "7", "q": "x", "v": "sv"}
    assert answer["headers"]["x-id"] == "fixed" and answer["multiValueHeaders"]["x-id"] == ["fixed"]
    assert "Method completed with status: 201" in answer["log"] and answer["latency"] >= 0
    with pytest.raises(ClientError) as e:
        apigw.test_invoke_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET")
    assert code(e) == ("NotFoundException", 404)
    with pytest.raises(ClientError) as e:
        apigw.test_invoke_method(restApiId=api["id"], resourceId="nope00", httpMethod="POST")
    assert code(e) == ("NotFoundException", 404)


def test_test_invoke_authorizer_reports_the_lambda_verdict(client):
    lam, apigw = client("lambda"), client("apigateway")
    function = lam.create_function(FunctionName="auth", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                   Code={"ZipFile": zip_of({"app.py": AUTHORIZER})})
    api = apigw.create_rest_api(name="auth")
    uri = f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{function['FunctionArn']}/invocations"
    authorizer = apigw.create_authorizer(restApiId=api["id"], name="a", type="TOKEN", authorizerUri=uri,
                                         identitySource="method.request.header.Authorization")
    allowed = apigw.test_invoke_authorizer(restApiId=api["id"], authorizerId=authorizer["id"],
                                           headers={"Authorization": "good"})
    assert allowed["clientStatus"] == 200 and allowed["principalId"] == "user-good"
    assert json.loads(allowed["policy"])["Statement"][0]["Effect"] == "Allow"
    denied = apigw.test_invoke_authorizer(restApiId=api["id"], authorizerId=authorizer["id"],
                                          headers={"Authorization": "deny"})
    assert denied["clientStatus"] == 403
    refused = apigw.test_invoke_authorizer(restApiId=api["id"], authorizerId=authorizer["id"],
                                           headers={"Authorization": "bad"})
    assert refused["clientStatus"] == 401
    missing = apigw.test_invoke_authorizer(restApiId=api["id"], authorizerId=authorizer["id"])
    assert missing["clientStatus"] == 401
    with pytest.raises(ClientError) as e:
        apigw.test_invoke_authorizer(restApiId=api["id"], authorizerId="nope00")
    assert code(e) == ("NotFoundException", 404)


def test_domain_name_access_associations_are_stored(client):
    apigw = client("apigateway")
    apigw.create_domain_name(domainName="private.example.com", endpointConfiguration={"types": ["PRIVATE"]})
    domain_arn = "arn:aws:apigateway:us-east-1:000000000000:/domainnames/private.example.com+abc123"
    created = apigw.create_domain_name_access_association(
        domainNameArn=domain_arn, accessAssociationSourceType="VPCE", accessAssociationSource="vpce-0123",
        tags={"team": "a"})
    arn = created["domainNameAccessAssociationArn"]
    assert arn.endswith("/domainnameaccessassociations/domainname/private.example.com+abc123/vpcesource/vpce-0123")
    assert created["tags"] == {"team": "a"}
    listed = apigw.get_domain_name_access_associations()["items"]
    assert [a["domainNameAccessAssociationArn"] for a in listed] == [arn]
    assert apigw.get_domain_name_access_associations(resourceOwner="OTHER_ACCOUNTS")["items"] == []
    with pytest.raises(ClientError) as e:
        apigw.create_domain_name_access_association(
            domainNameArn=domain_arn, accessAssociationSourceType="VPCE", accessAssociationSource="vpce-0123")
    assert code(e) == ("ConflictException", 409)
    with pytest.raises(ClientError) as e:
        apigw.create_domain_name_access_association(
            domainNameArn="arn:aws:apigateway:us-east-1:000000000000:/domainnames/none.example.com",
            accessAssociationSourceType="VPCE", accessAssociationSource="vpce-0123")
    assert code(e) == ("BadRequestException", 400)
    apigw.delete_domain_name_access_association(domainNameAccessAssociationArn=arn)
    with pytest.raises(ClientError) as e:
        apigw.reject_domain_name_access_association(domainNameAccessAssociationArn=arn, domainNameArn=domain_arn)
    assert code(e) == ("NotFoundException", 404)


def test_documentation_versions_are_known_by_their_version(client):
    apigw = client("apigateway")
    api = apigw.create_rest_api(name="versions")
    created = apigw.create_documentation_version(restApiId=api["id"], documentationVersion="v1",
                                                 description="first")
    assert created["version"] == "v1" and created["description"] == "first"
    got = apigw.get_documentation_version(restApiId=api["id"], documentationVersion="v1")
    assert got["version"] == "v1" and "documentationVersion" not in got
    assert [v["version"] for v in apigw.get_documentation_versions(restApiId=api["id"])["items"]] == ["v1"]
    with pytest.raises(ClientError) as e:
        apigw.create_documentation_version(restApiId=api["id"], documentationVersion="v1")
    assert e.value.response["Error"]["Code"] == "ConflictException"
