"""CloudFormation's types that map onto operations Roto's services serve beyond the core
ones, black-box with boto3: Lambda layer version permissions, EventBridge bus policies,
connections and API destinations, IAM OpenID Connect providers and service-linked roles,
API Gateway custom domain names with their base path and API mappings, HTTP/WebSocket API
models and route and integration responses, SSM documents and CodeDeploy deployment
configurations; each with its Ref and GetAtt values, its updates in place or by
replacement, its delete, and the owning service's error when it fails."""

from __future__ import annotations

import json

import pytest

from lambda_helpers import zip_of
from test_cloudformation import deleted, events
from test_cloudformation_types import deploy, failure, update


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def gone(cfn, name):
    stack_id = cfn.describe_stacks(StackName=name)["Stacks"][0]["StackId"]
    cfn.delete_stack(StackName=name)
    assert deleted(cfn, stack_id)["StackStatus"] == "DELETE_COMPLETE", events(cfn, stack_id)


def outputs_of(resources, values):
    return {"Resources": resources,
            "Outputs": {k: {"Value": v} for k, v in values.items()}}


def layer(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="layers")
    s3.put_object(Bucket="layers", Key="l.zip", Body=zip_of({"python/x.py": "X = 1\n"}))
    return {"Type": "AWS::Lambda::LayerVersion",
            "Properties": {"LayerName": "shared", "Content": {"S3Bucket": "layers", "S3Key": "l.zip"}}}


def layer_permission(principal):
    return {"Type": "AWS::Lambda::LayerVersionPermission", "Properties": {
        "LayerVersionArn": {"Ref": "Layer"}, "Action": "lambda:GetLayerVersion",
        "Principal": principal}}


def test_a_layer_version_permission_is_a_statement_of_the_layers_policy(cfn, client):
    template = outputs_of({"Layer": layer(client), "Share": layer_permission("111122223333")},
                          {"Id": {"Ref": "Share"}, "Layer": {"Ref": "Layer"},
                           "GetId": {"Fn::GetAtt": ["Share", "Id"]}})
    _, out = deploy(cfn, "layers", template)
    arn, sid = out["Id"].split("#")
    assert arn == out["Layer"] and out["GetId"] == out["Id"]
    lam = client("lambda")
    policy = json.loads(lam.get_layer_version_policy(LayerName="shared", VersionNumber=1)["Policy"])
    [statement] = policy["Statement"]
    assert statement["Sid"] == sid
    assert statement["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
    # A changed principal replaces the statement.
    template["Resources"]["Share"] = layer_permission("*")
    out = update(cfn, "layers", template)
    policy = json.loads(lam.get_layer_version_policy(LayerName="shared", VersionNumber=1)["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == [out["Id"].split("#")[1]]
    assert policy["Statement"][0]["Principal"] == "*"
    gone(cfn, "layers")


def test_a_layer_version_permission_on_no_layer_fails_with_lambdas_error(cfn):
    arn = "arn:aws:lambda:us-east-1:000000000000:layer:missing:1"
    template = {"Resources": {"Share": {"Type": "AWS::Lambda::LayerVersionPermission", "Properties": {
        "LayerVersionArn": arn, "Action": "lambda:GetLayerVersion", "Principal": "*"}}}}
    cfn.create_stack(StackName="nolayer", TemplateBody=json.dumps(template))
    assert "ResourceNotFoundException" in failure(cfn, "nolayer", "Share")
    bad = {"Resources": {"Share": {"Type": "AWS::Lambda::LayerVersionPermission", "Properties": {
        "LayerVersionArn": "not-an-arn", "Action": "lambda:GetLayerVersion", "Principal": "*"}}}}
    cfn.create_stack(StackName="badlayer", TemplateBody=json.dumps(bad))
    assert "is not a layer version's ARN" in failure(cfn, "badlayer", "Share")


def test_event_bus_policies_add_statements_from_properties_or_a_statement(cfn, client):
    statement = {"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::444455556666:root"},
                 "Action": "events:PutEvents", "Resource": {"Fn::GetAtt": ["Bus", "Arn"]}}
    template = outputs_of({
        "Bus": {"Type": "AWS::Events::EventBus", "Properties": {"Name": "orders"}},
        "Account": {"Type": "AWS::Events::EventBusPolicy", "Properties": {
            "EventBusName": {"Ref": "Bus"}, "StatementId": "account", "Action": "events:PutEvents",
            "Principal": "111122223333"}},
        "Whole": {"Type": "AWS::Events::EventBusPolicy", "Properties": {
            "EventBusName": {"Ref": "Bus"}, "StatementId": "whole", "Statement": statement}},
    }, {"Account": {"Ref": "Account"}, "Whole": {"Ref": "Whole"}})
    _, out = deploy(cfn, "buspolicy", template)
    assert out == {"Account": "account", "Whole": "whole"}
    events_client = client("events")

    def statements():
        policy = json.loads(events_client.describe_event_bus(Name="orders")["Policy"])
        return {s["Sid"]: s for s in policy["Statement"]}

    found = statements()
    assert found["account"]["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
    assert found["whole"]["Principal"] == {"AWS": "arn:aws:iam::444455556666:root"}
    template["Resources"]["Account"]["Properties"]["Principal"] = "777788889999"
    update(cfn, "buspolicy", template)
    assert statements()["account"]["Principal"] == {"AWS": "arn:aws:iam::777788889999:root"}
    del template["Resources"]["Whole"]
    del template["Outputs"]["Whole"]
    update(cfn, "buspolicy", template)
    assert set(statements()) == {"account"}
    gone(cfn, "buspolicy")


def test_an_event_bus_policy_on_no_bus_fails_with_eventbridges_error(cfn):
    template = {"Resources": {"P": {"Type": "AWS::Events::EventBusPolicy", "Properties": {
        "EventBusName": "nope", "StatementId": "s", "Action": "events:PutEvents", "Principal": "*"}}}}
    cfn.create_stack(StackName="nobus", TemplateBody=json.dumps(template))
    assert "ResourceNotFoundException" in failure(cfn, "nobus", "P")


CONNECTION = {"Type": "AWS::Events::Connection", "Properties": {
    "AuthorizationType": "API_KEY", "Description": "first",
    "AuthParameters": {"ApiKeyAuthParameters": {"ApiKeyName": "x-key", "ApiKeyValue": "secret"}}}}


def test_connections_and_api_destinations_offer_their_arns(cfn, client):
    template = outputs_of({
        "Conn": CONNECTION,
        "Dest": {"Type": "AWS::Events::ApiDestination", "Properties": {
            "ConnectionArn": {"Fn::GetAtt": ["Conn", "Arn"]}, "HttpMethod": "POST",
            "InvocationEndpoint": "https://example.com/hook", "InvocationRateLimitPerSecond": 10}},
    }, {"Conn": {"Ref": "Conn"}, "ConnArn": {"Fn::GetAtt": ["Conn", "Arn"]},
        "ConnPolicy": {"Fn::GetAtt": ["Conn", "ArnForPolicy"]},
        "Secret": {"Fn::GetAtt": ["Conn", "SecretArn"]},
        "Dest": {"Ref": "Dest"}, "DestArn": {"Fn::GetAtt": ["Dest", "Arn"]},
        "DestPolicy": {"Fn::GetAtt": ["Dest", "ArnForPolicy"]}})
    _, out = deploy(cfn, "hooks", template)
    ev = client("events")
    conn = ev.describe_connection(Name=out["Conn"])
    assert out["Conn"].startswith("hooks-Conn-")
    assert conn["ConnectionArn"] == out["ConnArn"] and conn["SecretArn"] == out["Secret"]
    assert out["ConnArn"].startswith(out["ConnPolicy"] + "/")
    assert out["ConnPolicy"].endswith(f":connection/{out['Conn']}")
    dest = ev.describe_api_destination(Name=out["Dest"])
    assert dest["ApiDestinationArn"] == out["DestArn"] and dest["InvocationRateLimitPerSecond"] == 10
    assert out["DestPolicy"].endswith(f":api-destination/{out['Dest']}")
    template["Resources"]["Conn"]["Properties"]["Description"] = "second"
    template["Resources"]["Dest"]["Properties"]["HttpMethod"] = "PUT"
    again = update(cfn, "hooks", template)
    assert again["Conn"] == out["Conn"] and again["Dest"] == out["Dest"]
    assert ev.describe_connection(Name=out["Conn"])["Description"] == "second"
    assert ev.describe_api_destination(Name=out["Dest"])["HttpMethod"] == "PUT"
    gone(cfn, "hooks")
    assert ev.list_connections()["Connections"] == []
    assert ev.list_api_destinations()["ApiDestinations"] == []


def test_an_api_destination_on_no_connection_fails_with_eventbridges_error(cfn):
    template = {"Resources": {"Dest": {"Type": "AWS::Events::ApiDestination", "Properties": {
        "ConnectionArn": "arn:aws:events:us-east-1:000000000000:connection/none/abc",
        "HttpMethod": "POST", "InvocationEndpoint": "https://example.com"}}}}
    cfn.create_stack(StackName="nodest", TemplateBody=json.dumps(template))
    assert "ResourceNotFoundException" in failure(cfn, "nodest", "Dest")


def test_an_oidc_provider_is_referenced_by_its_arn_and_updated_in_place(cfn, client):
    thumb = "a" * 40
    template = outputs_of({"Oidc": {"Type": "AWS::IAM::OIDCProvider", "Properties": {
        "Url": "https://token.example.com", "ClientIdList": ["one", "two"],
        "ThumbprintList": [thumb], "Tags": [{"Key": "team", "Value": "core"}]}}},
        {"Ref": {"Ref": "Oidc"}, "Arn": {"Fn::GetAtt": ["Oidc", "Arn"]}})
    _, out = deploy(cfn, "oidc", template)
    assert out["Ref"] == out["Arn"] == "arn:aws:iam::000000000000:oidc-provider/token.example.com"
    iam = client("iam")
    got = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=out["Arn"])
    assert sorted(got["ClientIDList"]) == ["one", "two"]
    props = template["Resources"]["Oidc"]["Properties"]
    props["ClientIdList"] = ["two", "three"]
    props["ThumbprintList"] = ["b" * 40]
    props["Tags"] = [{"Key": "env", "Value": "dev"}]
    assert update(cfn, "oidc", template)["Arn"] == out["Arn"]
    got = iam.get_open_id_connect_provider(OpenIDConnectProviderArn=out["Arn"])
    assert sorted(got["ClientIDList"]) == ["three", "two"]
    assert got["ThumbprintList"] == ["b" * 40]
    assert got["Tags"] == [{"Key": "env", "Value": "dev"}]
    gone(cfn, "oidc")
    assert iam.list_open_id_connect_providers()["OpenIDConnectProviderList"] == []


def test_an_oidc_provider_with_a_bad_url_fails_with_iams_error(cfn):
    template = {"Resources": {"Oidc": {"Type": "AWS::IAM::OIDCProvider", "Properties": {
        "Url": "http://plain.example.com", "ThumbprintList": ["a" * 40]}}}}
    cfn.create_stack(StackName="badoidc", TemplateBody=json.dumps(template), Capabilities=["CAPABILITY_IAM"])
    assert "HandlerErrorCode" in failure(cfn, "badoidc", "Oidc")


def test_a_service_linked_role_is_named_by_iam(cfn, client):
    template = outputs_of({"Slr": {"Type": "AWS::IAM::ServiceLinkedRole", "Properties": {
        "AWSServiceName": "autoscaling.amazonaws.com", "CustomSuffix": "app", "Description": "first"}}},
        {"Ref": {"Ref": "Slr"}, "Name": {"Fn::GetAtt": ["Slr", "RoleName"]}})
    _, out = deploy(cfn, "slr", template)
    assert out["Ref"] == out["Name"] == "AWSServiceRoleForAutoScaling_app"
    iam = client("iam")
    role = iam.get_role(RoleName=out["Name"])["Role"]
    assert role["Path"] == "/aws-service-role/autoscaling.amazonaws.com/"
    template["Resources"]["Slr"]["Properties"]["Description"] = "second"
    update(cfn, "slr", template)
    assert iam.get_role(RoleName=out["Name"])["Role"]["Description"] == "second"
    gone(cfn, "slr")
    assert not [r for r in iam.list_roles()["Roles"] if r["RoleName"] == out["Name"]]


CERT = "arn:aws:acm:us-east-1:000000000000:certificate/abc"


def rest_api():
    return {
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "shop"}},
        "Method": {"Type": "AWS::ApiGateway::Method", "Properties": {
            "RestApiId": {"Ref": "Api"}, "ResourceId": {"Fn::GetAtt": ["Api", "RootResourceId"]},
            "HttpMethod": "GET", "AuthorizationType": "NONE", "Integration": {"Type": "MOCK"}}},
        "Deployment": {"Type": "AWS::ApiGateway::Deployment", "DependsOn": "Method",
                       "Properties": {"RestApiId": {"Ref": "Api"}, "StageName": "prod"}},
        "Dev": {"Type": "AWS::ApiGateway::Stage", "Properties": {
            "RestApiId": {"Ref": "Api"}, "DeploymentId": {"Ref": "Deployment"}, "StageName": "dev"}},
    }


def test_a_custom_domain_name_maps_base_paths_to_a_rest_apis_stages(cfn, client):
    resources = rest_api()
    resources["Domain"] = {"Type": "AWS::ApiGateway::DomainName", "Properties": {
        "DomainName": "api.example.com", "RegionalCertificateArn": CERT,
        "EndpointConfiguration": {"Types": ["REGIONAL"]}, "SecurityPolicy": "TLS_1_2",
        "Tags": [{"Key": "team", "Value": "core"}]}}
    resources["Mapping"] = {"Type": "AWS::ApiGateway::BasePathMapping", "DependsOn": "Deployment",
                            "Properties": {"DomainName": {"Ref": "Domain"}, "BasePath": "v1",
                                           "RestApiId": {"Ref": "Api"}, "Stage": "prod"}}
    template = outputs_of(resources, {
        "Domain": {"Ref": "Domain"}, "Mapping": {"Ref": "Mapping"},
        "Regional": {"Fn::GetAtt": ["Domain", "RegionalDomainName"]},
        "Zone": {"Fn::GetAtt": ["Domain", "RegionalHostedZoneId"]},
        "Edge": {"Fn::GetAtt": ["Domain", "DistributionDomainName"]},
        "EdgeZone": {"Fn::GetAtt": ["Domain", "DistributionHostedZoneId"]},
        "Arn": {"Fn::GetAtt": ["Domain", "DomainNameArn"]}})
    _, out = deploy(cfn, "domain", template)
    apigw = client("apigateway")
    domain = apigw.get_domain_name(domainName="api.example.com")
    assert out["Domain"] == "api.example.com" and out["Mapping"] == "api.example.com|v1"
    assert out["Regional"] == domain["regionalDomainName"] and out["Zone"] == domain["regionalHostedZoneId"]
    assert out["Edge"] == domain["distributionDomainName"] and out["EdgeZone"] == domain["distributionHostedZoneId"]
    assert out["Arn"] == domain["domainNameArn"]
    assert domain["endpointConfiguration"]["types"] == ["REGIONAL"]
    mapping = apigw.get_base_path_mapping(domainName="api.example.com", basePath="v1")
    assert mapping["stage"] == "prod"
    # The stage and the security policy change in place; the mapping keeps its id.
    template["Resources"]["Mapping"]["Properties"]["Stage"] = "dev"
    template["Resources"]["Mapping"]["DependsOn"] = "Dev"
    template["Resources"]["Domain"]["Properties"]["SecurityPolicy"] = "TLS_1_0"
    template["Resources"]["Domain"]["Properties"]["Tags"] = [{"Key": "env", "Value": "dev"}]
    again = update(cfn, "domain", template)
    assert again["Mapping"] == out["Mapping"]
    assert apigw.get_base_path_mapping(domainName="api.example.com", basePath="v1")["stage"] == "dev"
    domain = apigw.get_domain_name(domainName="api.example.com")
    assert domain["securityPolicy"] == "TLS_1_0" and domain["tags"] == {"env": "dev"}
    gone(cfn, "domain")
    assert apigw.get_domain_names()["items"] == []


def test_a_base_path_mapping_to_no_domain_fails_with_api_gateways_error(cfn):
    resources = rest_api()
    resources["Mapping"] = {"Type": "AWS::ApiGateway::BasePathMapping", "DependsOn": "Deployment",
                            "Properties": {"DomainName": "none.example.com", "RestApiId": {"Ref": "Api"},
                                           "Stage": "prod"}}
    cfn.create_stack(StackName="nodomain", TemplateBody=json.dumps({"Resources": resources}))
    assert "NotFoundException" in failure(cfn, "nodomain", "Mapping")


def test_http_api_domain_names_mappings_and_websocket_responses(cfn, client):
    template = outputs_of({
        "Http": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {"Name": "http", "ProtocolType": "HTTP"}},
        "Stage": {"Type": "AWS::ApiGatewayV2::Stage", "Properties": {
            "ApiId": {"Ref": "Http"}, "StageName": "live", "AutoDeploy": True}},
        "Domain": {"Type": "AWS::ApiGatewayV2::DomainName", "Properties": {
            "DomainName": "http.example.com",
            "DomainNameConfigurations": [{"CertificateArn": CERT, "EndpointType": "REGIONAL"}],
            "Tags": {"team": "core"}}},
        "Mapping": {"Type": "AWS::ApiGatewayV2::ApiMapping", "DependsOn": "Stage", "Properties": {
            "DomainName": {"Ref": "Domain"}, "ApiId": {"Ref": "Http"}, "Stage": "live",
            "ApiMappingKey": "v1"}},
        "Ws": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {
            "Name": "ws", "ProtocolType": "WEBSOCKET", "RouteSelectionExpression": "$request.body.action"}},
        "Model": {"Type": "AWS::ApiGatewayV2::Model", "Properties": {
            "ApiId": {"Ref": "Ws"}, "Name": "Order", "ContentType": "application/json",
            "Schema": {"type": "object", "properties": {"id": {"type": "string"}}}}},
        "Integration": {"Type": "AWS::ApiGatewayV2::Integration", "Properties": {
            "ApiId": {"Ref": "Ws"}, "IntegrationType": "MOCK"}},
        "Route": {"Type": "AWS::ApiGatewayV2::Route", "Properties": {
            "ApiId": {"Ref": "Ws"}, "RouteKey": "order",
            "Target": {"Fn::Sub": "integrations/${Integration}"}}},
        "RouteResponse": {"Type": "AWS::ApiGatewayV2::RouteResponse", "Properties": {
            "ApiId": {"Ref": "Ws"}, "RouteId": {"Ref": "Route"}, "RouteResponseKey": "$default"}},
        "IntegrationResponse": {"Type": "AWS::ApiGatewayV2::IntegrationResponse", "Properties": {
            "ApiId": {"Ref": "Ws"}, "IntegrationId": {"Ref": "Integration"},
            "IntegrationResponseKey": "$default"}},
    }, {"Domain": {"Ref": "Domain"}, "Regional": {"Fn::GetAtt": ["Domain", "RegionalDomainName"]},
        "Zone": {"Fn::GetAtt": ["Domain", "RegionalHostedZoneId"]},
        "DomainArn": {"Fn::GetAtt": ["Domain", "DomainNameArn"]},
        "Mapping": {"Ref": "Mapping"}, "MappingId": {"Fn::GetAtt": ["Mapping", "ApiMappingId"]},
        "Model": {"Ref": "Model"}, "ModelId": {"Fn::GetAtt": ["Model", "ModelId"]},
        "Ws": {"Ref": "Ws"}, "Route": {"Ref": "Route"}, "Integration": {"Ref": "Integration"},
        "RouteResponse": {"Ref": "RouteResponse"},
        "IntegrationResponse": {"Fn::GetAtt": ["IntegrationResponse", "IntegrationResponseId"]}})
    _, out = deploy(cfn, "v2", template)
    v2 = client("apigatewayv2")
    domain = v2.get_domain_name(DomainName="http.example.com")
    assert out["Domain"] == "http.example.com" and out["DomainArn"] == domain["DomainNameArn"]
    assert out["Regional"] == domain["DomainNameConfigurations"][0]["ApiGatewayDomainName"]
    assert out["Zone"] == domain["DomainNameConfigurations"][0]["HostedZoneId"]
    assert out["Mapping"] == out["MappingId"]
    mapping = v2.get_api_mapping(DomainName="http.example.com", ApiMappingId=out["Mapping"])
    assert mapping["ApiMappingKey"] == "v1" and mapping["Stage"] == "live"
    model = v2.get_model(ApiId=out["Ws"], ModelId=out["Model"])
    assert out["Model"] == out["ModelId"]
    assert json.loads(model["Schema"])["properties"]["id"] == {"type": "string"}
    assert v2.get_route_response(ApiId=out["Ws"], RouteId=out["Route"],
                                 RouteResponseId=out["RouteResponse"])["RouteResponseKey"] == "$default"
    assert v2.get_integration_response(ApiId=out["Ws"], IntegrationId=out["Integration"],
                                       IntegrationResponseId=out["IntegrationResponse"])[
        "IntegrationResponseKey"] == "$default"
    res = template["Resources"]
    res["Mapping"]["Properties"]["ApiMappingKey"] = "v2"
    res["Model"]["Properties"]["Description"] = "orders"
    res["RouteResponse"]["Properties"]["ModelSelectionExpression"] = "$request.body.kind"
    res["IntegrationResponse"]["Properties"]["TemplateSelectionExpression"] = "\\$default"
    res["Domain"]["Properties"]["Tags"] = {"env": "dev"}
    again = update(cfn, "v2", template)
    assert again["Mapping"] == out["Mapping"] and again["Model"] == out["Model"]
    assert v2.get_api_mapping(DomainName="http.example.com", ApiMappingId=out["Mapping"])["ApiMappingKey"] == "v2"
    assert v2.get_model(ApiId=out["Ws"], ModelId=out["Model"])["Description"] == "orders"
    assert v2.get_route_response(ApiId=out["Ws"], RouteId=out["Route"], RouteResponseId=out["RouteResponse"])[
        "ModelSelectionExpression"] == "$request.body.kind"
    assert v2.get_domain_name(DomainName="http.example.com")["Tags"] == {"env": "dev"}
    gone(cfn, "v2")
    assert v2.get_domain_names()["Items"] == []


def test_an_api_mapping_to_no_domain_fails_with_api_gateways_error(cfn):
    template = {"Resources": {
        "Http": {"Type": "AWS::ApiGatewayV2::Api", "Properties": {"Name": "http", "ProtocolType": "HTTP"}},
        "Mapping": {"Type": "AWS::ApiGatewayV2::ApiMapping", "Properties": {
            "DomainName": "none.example.com", "ApiId": {"Ref": "Http"}, "Stage": "$default"}}}}
    cfn.create_stack(StackName="nomapping", TemplateBody=json.dumps(template))
    assert "NotFoundException" in failure(cfn, "nomapping", "Mapping")


def command_document(text):
    return {"schemaVersion": "2.2", "description": text, "mainSteps": [{
        "action": "aws:runShellScript", "name": "run", "inputs": {"runCommand": [f"echo {text}"]}}]}


def test_an_ssm_document_gets_new_default_versions_as_its_content_changes(cfn, client):
    template = outputs_of({"Doc": {"Type": "AWS::SSM::Document", "Properties": {
        "Content": command_document("one"), "DocumentType": "Command",
        "Tags": [{"Key": "team", "Value": "core"}]}}}, {"Name": {"Ref": "Doc"}})
    _, out = deploy(cfn, "docs", template)
    assert out["Name"].startswith("docs-Doc-")
    ssm = client("ssm")
    doc = ssm.describe_document(Name=out["Name"])["Document"]
    assert doc["DocumentType"] == "Command" and doc["DefaultVersion"] == "1"
    template["Resources"]["Doc"]["Properties"]["Content"] = command_document("two")
    template["Resources"]["Doc"]["Properties"]["Tags"] = [{"Key": "env", "Value": "dev"}]
    assert update(cfn, "docs", template)["Name"] == out["Name"]
    doc = ssm.describe_document(Name=out["Name"])["Document"]
    assert doc["DefaultVersion"] == "2" and doc["Tags"] == [{"Key": "env", "Value": "dev"}]
    content = json.loads(ssm.get_document(Name=out["Name"])["Content"])
    assert content["description"] == "two"
    # A changed type replaces it under a new generated name.
    template["Resources"]["Doc"]["Properties"]["DocumentType"] = "Automation"
    template["Resources"]["Doc"]["Properties"]["Content"] = {
        "schemaVersion": "0.3", "mainSteps": [{"name": "wait", "action": "aws:sleep",
                                                "inputs": {"Duration": "PT1S"}}]}
    replaced = update(cfn, "docs", template)["Name"]
    assert replaced != out["Name"]
    assert ssm.describe_document(Name=replaced)["Document"]["DocumentType"] == "Automation"
    gone(cfn, "docs")
    assert [d["Name"] for d in ssm.list_documents(Filters=[{"Key": "Owner", "Values": ["Self"]}])[
        "DocumentIdentifiers"]] == []


def test_an_ssm_document_with_bad_content_fails_with_ssms_error(cfn):
    template = {"Resources": {"Doc": {"Type": "AWS::SSM::Document", "Properties": {
        "Content": "not a document", "DocumentType": "Command"}}}}
    cfn.create_stack(StackName="baddoc", TemplateBody=json.dumps(template))
    assert "InvalidDocumentContent" in failure(cfn, "baddoc", "Doc")


def test_a_codedeploy_deployment_config_is_kept_as_configuration(cfn):
    template = outputs_of({
        "Named": {"Type": "AWS::CodeDeploy::DeploymentConfig", "Properties": {
            "DeploymentConfigName": "Canary", "ComputePlatform": "Lambda",
            "TrafficRoutingConfig": {"Type": "TimeBasedCanary",
                                     "TimeBasedCanary": {"CanaryPercentage": 10, "CanaryInterval": 5}}}},
        "Generated": {"Type": "AWS::CodeDeploy::DeploymentConfig", "Properties": {
            "MinimumHealthyHosts": {"Type": "HOST_COUNT", "Value": 1}}},
    }, {"Named": {"Ref": "Named"}, "Generated": {"Ref": "Generated"}})
    _, out = deploy(cfn, "configs", template)
    assert out["Named"] == "Canary" and out["Generated"].startswith("configs-Generated-")
    gone(cfn, "configs")


def test_logs_query_definitions_resource_policies_and_destinations(cfn, client):
    policy = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"Service": "es.amazonaws.com"},
                                                      "Action": "logs:PutLogEvents", "Resource": "*"}]}
    access = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "111122223333"},
                                                      "Action": "logs:PutSubscriptionFilter", "Resource": "*"}]}
    template = outputs_of({
        "Stream": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "Query": {"Type": "AWS::Logs::QueryDefinition", "Properties": {
            "Name": "errors", "QueryString": "fields @message | filter @message like /ERROR/",
            "LogGroupNames": ["/app"]}},
        "Policy": {"Type": "AWS::Logs::ResourcePolicy", "Properties": {
            "PolicyName": "search", "PolicyDocument": json.dumps(policy)}},
        "Destination": {"Type": "AWS::Logs::Destination", "Properties": {
            "DestinationName": "central", "TargetArn": {"Fn::GetAtt": ["Stream", "Arn"]},
            "RoleArn": "arn:aws:iam::000000000000:role/logs", "DestinationPolicy": json.dumps(access)}},
    }, {"Query": {"Ref": "Query"}, "QueryId": {"Fn::GetAtt": ["Query", "QueryDefinitionId"]},
        "Policy": {"Ref": "Policy"}, "Destination": {"Ref": "Destination"},
        "DestinationArn": {"Fn::GetAtt": ["Destination", "Arn"]}})
    _, out = deploy(cfn, "logsx", template)
    logs = client("logs")
    [query] = logs.describe_query_definitions()["queryDefinitions"]
    assert out["Query"] == out["QueryId"] == query["queryDefinitionId"] and query["name"] == "errors"
    assert out["Policy"] == "search"
    assert [p["policyName"] for p in logs.describe_resource_policies()["resourcePolicies"]] == ["search"]
    [dest] = logs.describe_destinations()["destinations"]
    assert out["Destination"] == "central" and out["DestinationArn"] == dest["arn"]
    assert json.loads(dest["accessPolicy"]) == access
    template["Resources"]["Query"]["Properties"]["Name"] = "failures"
    assert update(cfn, "logsx", template)["Query"] == out["Query"]
    assert logs.describe_query_definitions()["queryDefinitions"][0]["name"] == "failures"
    gone(cfn, "logsx")
    assert logs.describe_query_definitions()["queryDefinitions"] == []
    assert logs.describe_resource_policies()["resourcePolicies"] == []
    assert logs.describe_destinations()["destinations"] == []


def test_a_kinesis_resource_policy_and_a_registry_policy(cfn, client):
    def policy(action, resource):
        return {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Principal": {"AWS": "arn:aws:iam::111122223333:root"},
                                                        "Action": action, "Resource": resource}]}
    template = outputs_of({
        "Stream": {"Type": "AWS::Kinesis::Stream", "Properties": {"ShardCount": 1}},
        "StreamPolicy": {"Type": "AWS::Kinesis::ResourcePolicy", "Properties": {
            "ResourceArn": {"Fn::GetAtt": ["Stream", "Arn"]},
            "ResourcePolicy": policy("kinesis:GetRecords", {"Fn::GetAtt": ["Stream", "Arn"]})}},
        "Registry": {"Type": "AWS::ECR::RegistryPolicy", "Properties": {
            "PolicyText": policy(["ecr:ReplicateImage"], "*")}},
    }, {"StreamPolicy": {"Ref": "StreamPolicy"}, "StreamArn": {"Fn::GetAtt": ["Stream", "Arn"]},
        "Registry": {"Ref": "Registry"}})
    _, out = deploy(cfn, "policies", template)
    assert out["StreamPolicy"] == out["StreamArn"] and out["Registry"] == "000000000000"
    kinesis = client("kinesis")
    got = json.loads(kinesis.get_resource_policy(ResourceARN=out["StreamArn"])["Policy"])
    assert got["Statement"][0]["Action"] == "kinesis:GetRecords"
    assert json.loads(client("ecr").get_registry_policy()["policyText"])["Statement"][0]["Action"] == ["ecr:ReplicateImage"]
    gone(cfn, "policies")
    with pytest.raises(Exception):
        client("ecr").get_registry_policy()


def test_a_code_signing_config_a_metric_stream_and_a_maintenance_window(cfn, client):
    profile = "arn:aws:signer:us-east-1:000000000000:/signing-profiles/app"
    template = outputs_of({
        "Signing": {"Type": "AWS::Lambda::CodeSigningConfig", "Properties": {
            "Description": "first", "AllowedPublishers": {"SigningProfileVersionArns": [profile]},
            "CodeSigningPolicies": {"UntrustedArtifactOnDeployment": "Enforce"}}},
        "Delivery": {"Type": "AWS::KinesisFirehose::DeliveryStream", "Properties": {
            "DeliveryStreamType": "DirectPut",
            "S3DestinationConfiguration": {"BucketARN": "arn:aws:s3:::metrics",
                                           "RoleARN": "arn:aws:iam::000000000000:role/firehose"}}},
        "Metrics": {"Type": "AWS::CloudWatch::MetricStream", "Properties": {
            "FirehoseArn": {"Fn::GetAtt": ["Delivery", "Arn"]}, "OutputFormat": "json",
            "RoleArn": "arn:aws:iam::000000000000:role/streams"}},
        "Window": {"Type": "AWS::SSM::MaintenanceWindow", "Properties": {
            "Name": "nightly", "Schedule": "cron(0 2 ? * * *)", "Duration": 2, "Cutoff": 1,
            "AllowUnassociatedTargets": False}},
    }, {"Signing": {"Ref": "Signing"}, "SigningId": {"Fn::GetAtt": ["Signing", "CodeSigningConfigId"]},
        "Metrics": {"Ref": "Metrics"}, "MetricsArn": {"Fn::GetAtt": ["Metrics", "Arn"]},
        "MetricsState": {"Fn::GetAtt": ["Metrics", "State"]}, "Window": {"Ref": "Window"}})
    _, out = deploy(cfn, "misc", template)
    lam = client("lambda")
    config = lam.get_code_signing_config(CodeSigningConfigArn=out["Signing"])["CodeSigningConfig"]
    assert config["CodeSigningConfigId"] == out["SigningId"] and config["Description"] == "first"
    stream = client("cloudwatch").get_metric_stream(Name=out["Metrics"])
    assert out["Metrics"].startswith("misc-Metrics-") and stream["Arn"] == out["MetricsArn"]
    assert out["MetricsState"] == stream["State"]
    ssm = client("ssm")
    assert out["Window"].startswith("mw-")
    assert ssm.get_maintenance_window(WindowId=out["Window"])["Duration"] == 2
    res = template["Resources"]
    res["Signing"]["Properties"]["Description"] = "second"
    res["Metrics"]["Properties"]["OutputFormat"] = "opentelemetry1.0"
    res["Window"]["Properties"]["Duration"] = 3
    res["Window"]["Properties"]["Tags"] = [{"Key": "team", "Value": "ops"}]
    again = update(cfn, "misc", template)
    assert again["Signing"] == out["Signing"] and again["Window"] == out["Window"]
    assert lam.get_code_signing_config(CodeSigningConfigArn=out["Signing"])["CodeSigningConfig"]["Description"] == "second"
    assert client("cloudwatch").get_metric_stream(Name=out["Metrics"])["OutputFormat"] == "opentelemetry1.0"
    assert ssm.get_maintenance_window(WindowId=out["Window"])["Duration"] == 3
    tags = ssm.list_tags_for_resource(ResourceType="MaintenanceWindow", ResourceId=out["Window"])["TagList"]
    assert tags == [{"Key": "team", "Value": "ops"}]
    gone(cfn, "misc")
    assert lam.list_code_signing_configs()["CodeSigningConfigs"] == []
    assert client("cloudwatch").list_metric_streams()["Entries"] == []
    assert ssm.describe_maintenance_windows()["WindowIdentities"] == []


def test_api_gateway_certificates_documentation_and_vpc_links(cfn, client):
    template = outputs_of({
        "Api": {"Type": "AWS::ApiGateway::RestApi", "Properties": {"Name": "docs"}},
        "Cert": {"Type": "AWS::ApiGateway::ClientCertificate", "Properties": {"Description": "backend"}},
        "Part": {"Type": "AWS::ApiGateway::DocumentationPart", "Properties": {
            "RestApiId": {"Ref": "Api"}, "Location": {"Type": "API"},
            "Properties": json.dumps({"description": "the docs API"})}},
        "Version": {"Type": "AWS::ApiGateway::DocumentationVersion", "DependsOn": "Part", "Properties": {
            "RestApiId": {"Ref": "Api"}, "DocumentationVersion": "v1", "Description": "first"}},
        "Link": {"Type": "AWS::ApiGateway::VpcLink", "Properties": {
            "Name": "nlb", "TargetArns": ["arn:aws:elasticloadbalancing:us-east-1:000000000000:loadbalancer/net/a/1"]}},
        "Http": {"Type": "AWS::ApiGatewayV2::VpcLink", "Properties": {
            "Name": "private", "SubnetIds": ["subnet-1"], "Tags": {"team": "core"}}},
    }, {"Api": {"Ref": "Api"}, "Cert": {"Ref": "Cert"}, "Part": {"Ref": "Part"},
        "PartId": {"Fn::GetAtt": ["Part", "DocumentationPartId"]}, "Version": {"Ref": "Version"},
        "Link": {"Ref": "Link"}, "Http": {"Ref": "Http"}, "HttpId": {"Fn::GetAtt": ["Http", "VpcLinkId"]}})
    _, out = deploy(cfn, "apix", template)
    apigw = client("apigateway")
    assert apigw.get_client_certificate(clientCertificateId=out["Cert"])["description"] == "backend"
    assert out["Part"] == out["PartId"]
    part = apigw.get_documentation_part(restApiId=out["Api"], documentationPartId=out["Part"])
    assert json.loads(part["properties"]) == {"description": "the docs API"}
    assert out["Version"] == "v1"
    assert apigw.get_documentation_version(restApiId=out["Api"], documentationVersion="v1")["description"] == "first"
    assert apigw.get_vpc_link(vpcLinkId=out["Link"])["name"] == "nlb"
    v2 = client("apigatewayv2")
    assert out["Http"] == out["HttpId"] and v2.get_vpc_link(VpcLinkId=out["Http"])["Name"] == "private"
    res = template["Resources"]
    res["Cert"]["Properties"]["Description"] = "rotated"
    res["Part"]["Properties"]["Properties"] = json.dumps({"description": "changed"})
    res["Version"]["Properties"]["Description"] = "second"
    res["Link"]["Properties"]["Name"] = "nlb2"
    res["Http"]["Properties"]["Name"] = "private2"
    again = update(cfn, "apix", template)
    assert {k: again[k] for k in ("Cert", "Part", "Link", "Http")} == {k: out[k] for k in ("Cert", "Part", "Link", "Http")}
    assert apigw.get_client_certificate(clientCertificateId=out["Cert"])["description"] == "rotated"
    part = apigw.get_documentation_part(restApiId=out["Api"], documentationPartId=out["Part"])
    assert json.loads(part["properties"]) == {"description": "changed"}
    assert apigw.get_documentation_version(restApiId=out["Api"], documentationVersion="v1")["description"] == "second"
    assert apigw.get_vpc_link(vpcLinkId=out["Link"])["name"] == "nlb2"
    assert v2.get_vpc_link(VpcLinkId=out["Http"])["Name"] == "private2"
    gone(cfn, "apix")
    assert apigw.get_client_certificates()["items"] == [] and apigw.get_vpc_links()["items"] == []
    assert v2.get_vpc_links()["Items"] == []


def test_a_destination_whose_target_is_missing_fails_with_logs_error(cfn):
    template = {"Resources": {"Destination": {"Type": "AWS::Logs::Destination", "Properties": {
        "DestinationName": "central", "TargetArn": "not-an-arn", "RoleArn": "arn:aws:iam::000000000000:role/logs"}}}}
    cfn.create_stack(StackName="baddest", TemplateBody=json.dumps(template))
    assert "HandlerErrorCode" in failure(cfn, "baddest", "Destination")


def test_ecr_registry_settings_and_pull_through_cache_rules(cfn, client):
    replication = {"Rules": [{"Destinations": [{"Region": "us-west-2", "RegistryId": "000000000000"}]}]}
    template = outputs_of({
        "Replication": {"Type": "AWS::ECR::ReplicationConfiguration",
                        "Properties": {"ReplicationConfiguration": replication}},
        "Scanning": {"Type": "AWS::ECR::RegistryScanningConfiguration", "Properties": {
            "ScanType": "ENHANCED", "Rules": [{"ScanFrequency": "SCAN_ON_PUSH",
                                               "RepositoryFilters": [{"Filter": "app*", "FilterType": "WILDCARD"}]}]}},
        "Cache": {"Type": "AWS::ECR::PullThroughCacheRule", "Properties": {
            "EcrRepositoryPrefix": "public", "UpstreamRegistryUrl": "public.ecr.aws"}},
    }, {"Replication": {"Ref": "Replication"}, "RegistryId": {"Fn::GetAtt": ["Scanning", "RegistryId"]},
        "Cache": {"Ref": "Cache"}})
    _, out = deploy(cfn, "registry", template)
    assert out == {"Replication": "000000000000", "RegistryId": "000000000000", "Cache": "public"}
    ecr = client("ecr")
    rules = ecr.describe_registry()["replicationConfiguration"]["rules"]
    assert rules[0]["destinations"][0]["region"] == "us-west-2"
    assert ecr.get_registry_scanning_configuration()["scanningConfiguration"]["scanType"] == "ENHANCED"
    [rule] = ecr.describe_pull_through_cache_rules()["pullThroughCacheRules"]
    assert rule["ecrRepositoryPrefix"] == "public" and rule["upstreamRegistryUrl"] == "public.ecr.aws"
    template["Resources"]["Scanning"]["Properties"]["ScanType"] = "BASIC"
    template["Resources"]["Scanning"]["Properties"]["Rules"][0]["ScanFrequency"] = "SCAN_ON_PUSH"
    update(cfn, "registry", template)
    assert ecr.get_registry_scanning_configuration()["scanningConfiguration"]["scanType"] == "BASIC"
    gone(cfn, "registry")
    assert ecr.describe_registry()["replicationConfiguration"]["rules"] == []
    assert ecr.describe_pull_through_cache_rules()["pullThroughCacheRules"] == []


def test_a_maintenance_window_target_is_registered_and_updated(cfn, client):
    template = outputs_of({
        "Window": {"Type": "AWS::SSM::MaintenanceWindow", "Properties": {
            "Name": "nightly", "Schedule": "rate(1 day)", "Duration": 2, "Cutoff": 1,
            "AllowUnassociatedTargets": True}},
        "Target": {"Type": "AWS::SSM::MaintenanceWindowTarget", "Properties": {
            "WindowId": {"Ref": "Window"}, "ResourceType": "INSTANCE", "Name": "web",
            "Targets": [{"Key": "tag:Role", "Values": ["web"]}]}},
    }, {"Window": {"Ref": "Window"}, "Target": {"Ref": "Target"}})
    _, out = deploy(cfn, "targets", template)
    ssm = client("ssm")
    [target] = ssm.describe_maintenance_window_targets(WindowId=out["Window"])["Targets"]
    assert target["WindowTargetId"] == out["Target"] and target["Name"] == "web"
    template["Resources"]["Target"]["Properties"]["Name"] = "api"
    assert update(cfn, "targets", template)["Target"] == out["Target"]
    [target] = ssm.describe_maintenance_window_targets(WindowId=out["Window"])["Targets"]
    assert target["Name"] == "api"
    gone(cfn, "targets")
    assert ssm.describe_maintenance_windows()["WindowIdentities"] == []


def test_a_target_of_no_window_fails_with_ssms_error(cfn):
    template = {"Resources": {"Target": {"Type": "AWS::SSM::MaintenanceWindowTarget", "Properties": {
        "WindowId": "mw-0123456789abcdef0", "ResourceType": "INSTANCE",
        "Targets": [{"Key": "tag:Role", "Values": ["web"]}]}}}}
    cfn.create_stack(StackName="notarget", TemplateBody=json.dumps(template))
    assert "DoesNotExistException" in failure(cfn, "notarget", "Target")


def test_a_cache_rule_without_the_credential_its_upstream_needs_fails_with_ecrs_error(cfn):
    template = {"Resources": {"Cache": {"Type": "AWS::ECR::PullThroughCacheRule", "Properties": {
        "EcrRepositoryPrefix": "quay", "UpstreamRegistryUrl": "quay.io"}}}}
    cfn.create_stack(StackName="nocred", TemplateBody=json.dumps(template))
    assert "InvalidParameterException" in failure(cfn, "nocred", "Cache")


def endpoint(bus_a, bus_b):
    return {"Type": "AWS::Events::Endpoint", "Properties": {
        "RoutingConfig": {"FailoverConfig": {
            "Primary": {"HealthCheck": "arn:aws:route53:::healthcheck/abc"},
            "Secondary": {"Route": "us-west-2"}}},
        "EventBuses": [{"EventBusArn": bus_a}, {"EventBusArn": bus_b}],
        "Description": "first"}}


def test_a_global_endpoint_offers_its_id_and_url(cfn, client):
    bus_a = "arn:aws:events:us-east-1:000000000000:event-bus/orders"
    bus_b = "arn:aws:events:us-west-2:000000000000:event-bus/orders"
    template = outputs_of({"Endpoint": endpoint(bus_a, bus_b)}, {
        "Name": {"Ref": "Endpoint"}, "Arn": {"Fn::GetAtt": ["Endpoint", "Arn"]},
        "Id": {"Fn::GetAtt": ["Endpoint", "EndpointId"]}})
    _, out = deploy(cfn, "global", template)
    ev = client("events")
    got = ev.describe_endpoint(Name=out["Name"])
    assert out["Name"].startswith("global-Endpoint-")
    assert got["Arn"] == out["Arn"] and got["EndpointId"] == out["Id"]
    template["Resources"]["Endpoint"]["Properties"]["Description"] = "second"
    assert update(cfn, "global", template)["Name"] == out["Name"]
    assert ev.describe_endpoint(Name=out["Name"])["Description"] == "second"
    gone(cfn, "global")
    assert ev.list_endpoints()["Endpoints"] == []


def test_a_global_endpoint_with_one_bus_fails_with_eventbridges_error(cfn):
    bus = "arn:aws:events:us-east-1:000000000000:event-bus/orders"
    resource = endpoint(bus, bus)
    resource["Properties"]["EventBuses"] = [{"EventBusArn": bus}]
    cfn.create_stack(StackName="onebus", TemplateBody=json.dumps({"Resources": {"Endpoint": resource}}))
    assert "HandlerErrorCode: ValidationException" in failure(cfn, "onebus", "Endpoint")
