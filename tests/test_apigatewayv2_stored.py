"""API Gateway HTTP APIs: what the control plane stores and returns without serving it
(VPC links, routing rules, developer portals, portal products and their pages, sharing
policies), their errors, and WebSocket APIs, which the data plane does not serve."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError


def code(e):
    return e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]


def test_vpc_links_are_stored_available_and_tagged(client):
    v2 = client("apigatewayv2")
    link = v2.create_vpc_link(Name="link", SubnetIds=["subnet-1"], SecurityGroupIds=["sg-1"], Tags={"a": "1"})
    assert (link["VpcLinkStatus"], link["VpcLinkVersion"]) == ("AVAILABLE", "V2")
    assert link["SubnetIds"] == ["subnet-1"] and link["Tags"] == {"a": "1"}
    got = v2.get_vpc_link(VpcLinkId=link["VpcLinkId"])
    assert got["Name"] == "link" and got["CreatedDate"] == link["CreatedDate"]
    assert v2.update_vpc_link(VpcLinkId=link["VpcLinkId"], Name="renamed")["Name"] == "renamed"
    assert [item["Name"] for item in v2.get_vpc_links()["Items"]] == ["renamed"]
    arn = f"arn:aws:apigateway:us-east-1::/vpclinks/{link['VpcLinkId']}"
    v2.tag_resource(ResourceArn=arn, Tags={"b": "2"})
    assert v2.get_tags(ResourceArn=arn)["Tags"] == {"a": "1", "b": "2"}
    v2.delete_vpc_link(VpcLinkId=link["VpcLinkId"])
    with pytest.raises(ClientError) as e:
        v2.get_vpc_link(VpcLinkId=link["VpcLinkId"])
    assert code(e) == ("NotFoundException", 404)
    with pytest.raises(ClientError) as e:
        v2.update_vpc_link(VpcLinkId=link["VpcLinkId"], Name="gone")
    assert code(e) == ("NotFoundException", 404)


def test_routing_rules_belong_to_a_domain_name_with_unique_priorities(client):
    v2 = client("apigatewayv2")
    v2.create_domain_name(DomainName="api.example.com")
    rule = dict(Actions=[{"InvokeApi": {"ApiId": "abc", "Stage": "prod", "StripBasePath": True}}],
                Conditions=[{"MatchBasePaths": {"AnyOf": ["orders"]}}])
    created = v2.create_routing_rule(DomainName="api.example.com", Priority=10, **rule)
    assert created["RoutingRuleArn"].endswith(f"/domainnames/api.example.com/routingrules/{created['RoutingRuleId']}")
    assert created["Actions"] == rule["Actions"] and created["Priority"] == 10
    with pytest.raises(ClientError) as e:
        v2.create_routing_rule(DomainName="api.example.com", Priority=10, **rule)
    assert code(e) == ("ConflictException", 409)
    put = v2.put_routing_rule(DomainName="api.example.com", RoutingRuleId=created["RoutingRuleId"],
                              Priority=20, **rule)
    assert put["Priority"] == 20
    listed = v2.list_routing_rules(DomainName="api.example.com")["RoutingRules"]
    assert [r["Priority"] for r in listed] == [20]
    got = v2.get_routing_rule(DomainName="api.example.com", RoutingRuleId=created["RoutingRuleId"])
    assert got == {k: v for k, v in put.items() if k != "ResponseMetadata"} | {"ResponseMetadata": got["ResponseMetadata"]}
    with pytest.raises(ClientError) as e:
        v2.create_routing_rule(DomainName="none.example.com", Priority=1, **rule)
    assert code(e) == ("NotFoundException", 404)
    v2.delete_routing_rule(DomainName="api.example.com", RoutingRuleId=created["RoutingRuleId"])
    with pytest.raises(ClientError) as e:
        v2.get_routing_rule(DomainName="api.example.com", RoutingRuleId=created["RoutingRuleId"])
    assert code(e) == ("NotFoundException", 404)


def test_portals_products_and_pages_are_stored_and_published(client):
    v2 = client("apigatewayv2")
    product = v2.create_portal_product(DisplayName="Orders", Description="order APIs")
    assert product["PortalProductArn"].endswith(f":/portalproducts/{product['PortalProductId']}")
    page = v2.create_product_page(PortalProductId=product["PortalProductId"],
                                  DisplayContent={"Title": "Intro", "Body": "# Orders"})
    assert page["DisplayContent"] == {"Title": "Intro", "Body": "# Orders"}
    pages = v2.list_product_pages(PortalProductId=product["PortalProductId"])["Items"]
    assert [(p["ProductPageId"], p["PageTitle"]) for p in pages] == [(page["ProductPageId"], "Intro")]
    endpoint = v2.create_product_rest_endpoint_page(
        PortalProductId=product["PortalProductId"],
        RestEndpointIdentifier={"IdentifierParts": {"RestApiId": "r1", "Stage": "prod", "Method": "GET",
                                                    "Path": "/orders"}})
    assert endpoint["Status"] == "AVAILABLE" and endpoint["TryItState"] == "DISABLED"
    assert endpoint["DisplayContent"]["Endpoint"] == "https://r1.execute-api.us-east-1.amazonaws.com/prod/orders"
    listed = v2.list_product_rest_endpoint_pages(PortalProductId=product["PortalProductId"])["Items"]
    assert listed[0]["OperationName"] == "GET /orders"
    v2.put_portal_product_sharing_policy(PortalProductId=product["PortalProductId"],
                                         PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": []}))
    policy = v2.get_portal_product_sharing_policy(PortalProductId=product["PortalProductId"])
    assert json.loads(policy["PolicyDocument"])["Statement"] == []
    v2.delete_portal_product_sharing_policy(PortalProductId=product["PortalProductId"])
    with pytest.raises(ClientError) as e:
        v2.get_portal_product_sharing_policy(PortalProductId=product["PortalProductId"])
    assert code(e) == ("NotFoundException", 404)

    portal = v2.create_portal(
        Authorization={"None": {}}, EndpointConfiguration={"None": {}},
        IncludedPortalProductArns=[product["PortalProductArn"]],
        PortalContent={"DisplayName": "Developers", "Theme": {"CustomColors": {
            "AccentColor": "#000000", "BackgroundColor": "#ffffff", "ErrorValidationColor": "#ff0000",
            "HeaderColor": "#000000", "NavigationColor": "#000000", "TextColor": "#000000"}}})
    assert portal["EndpointConfiguration"]["PortalDefaultDomainName"].startswith(portal["PortalId"])
    assert portal["PublishStatus"] == "DISABLED"
    v2.publish_portal(PortalId=portal["PortalId"], Description="first")
    published = v2.get_portal(PortalId=portal["PortalId"])
    assert (published["PublishStatus"], published["LastPublishedDescription"]) == ("PUBLISHED", "first")
    v2.preview_portal(PortalId=portal["PortalId"])
    assert v2.get_portal(PortalId=portal["PortalId"])["Preview"]["PreviewStatus"] == "PREVIEW_READY"
    v2.disable_portal(PortalId=portal["PortalId"])
    assert v2.get_portal(PortalId=portal["PortalId"])["PublishStatus"] == "DISABLED"
    with pytest.raises(ClientError) as e:
        v2.disable_portal(PortalId=portal["PortalId"])
    assert code(e) == ("ConflictException", 409)
    assert [p["PortalId"] for p in v2.list_portals()["Items"]] == [portal["PortalId"]]
    v2.delete_portal_product(PortalProductId=product["PortalProductId"])
    with pytest.raises(ClientError) as e:
        v2.list_product_pages(PortalProductId=product["PortalProductId"])
    assert code(e) == ("NotFoundException", 404)
    v2.delete_portal(PortalId=portal["PortalId"])
    assert v2.list_portals()["Items"] == []


def test_websocket_apis_are_stored_but_not_served(server, client):
    v2 = client("apigatewayv2")
    api = v2.create_api(Name="ws", ProtocolType="WEBSOCKET", RouteSelectionExpression="$request.body.action")
    assert api["ApiEndpoint"].startswith("wss://")
    integration = v2.create_integration(ApiId=api["ApiId"], IntegrationType="MOCK")
    v2.create_route(ApiId=api["ApiId"], RouteKey="$default", Target=f"integrations/{integration['IntegrationId']}")
    v2.create_stage(ApiId=api["ApiId"], StageName="prod", AutoDeploy=True)
    assert v2.get_api(ApiId=api["ApiId"])["ProtocolType"] == "WEBSOCKET"
    request = urllib.request.Request(f"{server.endpoint}/_aws/execute-api/{api['ApiId']}/prod")
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=10)
    assert e.value.code == 404 and json.loads(e.value.read()) == {"message": "Not Found"}
