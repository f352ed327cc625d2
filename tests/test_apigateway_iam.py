"""API Gateway: AWS_IAM authorization of REST API methods and HTTP API routes. A request
must be signed; under --enforce-iam its signer must be allowed execute-api:Invoke on the
method's ARN by an identity policy or the API's resource policy, as AWS decides it."""

from __future__ import annotations

import json
import urllib.error
import urllib.request

import boto3
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials

from roto_server import RotoServer

ACCOUNT = "000000000000"


@pytest.fixture(scope="module")
def enforcing():
    with RotoServer("--ephemeral", "--enforce-iam") as s:
        yield s


def boto(server, service):
    return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                        aws_access_key_id="test", aws_secret_access_key="test",
                        config=Config(retries={"max_attempts": 1}))


def iam_api(apigw, name, policy=None):
    """A REST API whose GET /secret is AWS_IAM and answers the signer's ARN (MOCK)."""
    api = apigw.create_rest_api(name=name, **({"policy": json.dumps(policy)} if policy else {}))
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="secret")
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", authorizationType="AWS_IAM")
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", statusCode="200")
    apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", statusCode="200",
                                   responseTemplates={"application/json":
                                                      '{"arn": "$!context.identity.userArn"}'})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    return api


def call(server, path, key=None, secret="secret"):
    """GET through the path form, SigV4-signed for execute-api with `key` when given."""
    url = f"{server.endpoint}{path}"
    headers = {}
    if key:
        request = AWSRequest(method="GET", url=url)
        SigV4Auth(Credentials(key, secret), "execute-api", "us-east-1").add_auth(request)
        headers = dict(request.headers.items())
    try:
        with urllib.request.urlopen(urllib.request.Request(url, headers=headers), timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read())


def user(server, name, *statements):
    iam = boto(server, "iam")
    arn = iam.create_user(UserName=name)["User"]["Arn"]
    if statements:
        iam.put_user_policy(UserName=name, PolicyName="p",
                            PolicyDocument=json.dumps({"Version": "2012-10-17", "Statement": list(statements)}))
    key = iam.create_access_key(UserName=name)["AccessKey"]
    return arn, key["AccessKeyId"], key["SecretAccessKey"]


def method_arn(api_id, resource="secret"):
    return f"arn:aws:execute-api:us-east-1:{ACCOUNT}:{api_id}/prod/GET/{resource}"


def test_unsigned_requests_are_403_missing_authentication_token(enforcing):
    api = iam_api(boto(enforcing, "apigateway"), "unsigned")
    status, headers, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret")
    assert (status, body) == (403, {"message": "Missing Authentication Token"})
    assert headers["x-amzn-errortype"] == "MissingAuthenticationTokenException"


def test_the_root_and_allowed_users_pass_and_the_integration_sees_the_signer(enforcing):
    api = iam_api(boto(enforcing, "apigateway"), "allowed")
    path = f"/_aws/execute-api/{api['id']}/prod/secret"
    assert call(enforcing, path, "test", "test")[::2] == (200, {"arn": f"arn:aws:iam::{ACCOUNT}:root"})
    arn, key, secret = user(enforcing, "caller", {"Effect": "Allow", "Action": "execute-api:Invoke",
                                                  "Resource": f"arn:aws:execute-api:us-east-1:*:{api['id']}/*/GET/*"})
    status, _, body = call(enforcing, path, key, secret)
    assert (status, body) == (200, {"arn": arn})


def test_users_without_an_allowing_policy_are_denied_with_aws_message(enforcing):
    api = iam_api(boto(enforcing, "apigateway"), "denied")
    arn, key, secret = user(enforcing, "nobody")
    status, headers, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret", key, secret)
    assert status == 403 and headers["x-amzn-errortype"] == "AccessDeniedException"
    assert body == {"Message": f"User: {arn} is not authorized to perform: execute-api:Invoke on resource: "
                               f"{method_arn(api['id'])} because no identity-based policy allows the "
                               "execute-api:Invoke action"}
    denied_arn, key, secret = user(enforcing, "denied", {"Effect": "Allow", "Action": "execute-api:*", "Resource": "*"},
                                   {"Effect": "Deny", "Action": "execute-api:Invoke", "Resource": method_arn(api["id"])})
    status, _, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret", key, secret)
    assert status == 403 and body["Message"].endswith("with an explicit deny in an identity-based policy")


def test_the_apis_resource_policy_allows_and_denies(enforcing):
    apigw = boto(enforcing, "apigateway")
    arn, key, secret = user(enforcing, "by-resource")
    api = iam_api(apigw, "resource-allowed", policy={"Version": "2012-10-17", "Statement": [
        {"Effect": "Allow", "Principal": {"AWS": arn}, "Action": "execute-api:Invoke", "Resource": "*"}]})
    assert call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret", key, secret)[::2] == (200, {"arn": arn})
    api = iam_api(apigw, "resource-denied", policy={"Version": "2012-10-17", "Statement": [
        {"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "*"}]})
    status, _, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret", "test", "test")
    assert status == 403 and body["Message"].endswith("with an explicit deny in a resource-based policy")


def test_unknown_keys_are_refused_as_invalid_tokens(enforcing):
    api = iam_api(boto(enforcing, "apigateway"), "unknown-key")
    status, headers, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/secret",
                                 "AKIAZZZZZZZZZZZZZZZZ", "x")
    assert (status, body) == (403, {"message": "The security token included in the request is invalid."})
    assert headers["x-amzn-errortype"] == "UnrecognizedClientException"


def test_http_api_iam_routes_answer_forbidden_and_pass_the_signer(enforcing):
    v2 = boto(enforcing, "apigatewayv2")
    api = v2.create_api(Name="iam-http", ProtocolType="HTTP")
    integration = v2.create_integration(ApiId=api["ApiId"], IntegrationType="HTTP_PROXY", IntegrationMethod="GET",
                                        IntegrationUri=f"{enforcing.endpoint}/_roto/health",
                                        PayloadFormatVersion="1.0")
    v2.create_route(ApiId=api["ApiId"], RouteKey="GET /health", AuthorizationType="AWS_IAM",
                    Target=f"integrations/{integration['IntegrationId']}")
    v2.create_stage(ApiId=api["ApiId"], StageName="$default", AutoDeploy=True)
    path = f"/_aws/execute-api/{api['ApiId']}/health"
    assert call(enforcing, path)[::2] == (403, {"message": "Forbidden"})
    _, key, secret = user(enforcing, "http-nobody")
    assert call(enforcing, path, key, secret)[::2] == (403, {"message": "Forbidden"})
    _, key, secret = user(enforcing, "http-caller", {"Effect": "Allow", "Action": "execute-api:Invoke",
                                                     "Resource": f"arn:aws:execute-api:*:*:{api['ApiId']}/*"})
    assert call(enforcing, path, key, secret)[0] == 200


def test_without_enforcement_any_signature_passes_but_one_is_required(server):
    api = iam_api(boto(server, "apigateway"), "permissive")
    path = f"/_aws/execute-api/{api['id']}/prod/secret"
    assert call(server, path)[::2] == (403, {"message": "Missing Authentication Token"})
    status, _, body = call(server, path, "AKIAZZZZZZZZZZZZZZZZ", "anything")
    assert status == 200 and body == {"arn": ""}
    assert call(server, path, "test", "test")[::2] == (200, {"arn": f"arn:aws:iam::{ACCOUNT}:root"})


def open_api(apigw, name, policy, authorization="NONE", authorizer=None):
    """A REST API whose GET /open answers 200 (MOCK) under authorization `authorization`."""
    api = apigw.create_rest_api(name=name, policy=json.dumps(policy))
    resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="open")
    extra = {"authorizerId": authorizer(api["id"])} if authorizer else {}
    apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                     authorizationType=authorization, **extra)
    apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", statusCode="200")
    apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                                   statusCode="200", responseTemplates={"application/json": '{"ok": true}'})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    return api


def policy(*statements):
    return {"Version": "2012-10-17", "Statement": list(statements)}


# The `execute-api:/` shorthand is written out against the API, as API Gateway does.
ALLOW_ALL = {"Effect": "Allow", "Principal": "*", "Action": "execute-api:Invoke", "Resource": "execute-api:/*"}


def anonymous_denied(arn, explicit):
    suffix = " with an explicit deny" if explicit else ""
    return {"Message": f"User: anonymous is not authorized to perform: execute-api:Invoke on resource: {arn}{suffix}"}


def test_a_resource_policy_denies_anonymous_callers_by_source_ip(enforcing):
    apigw = boto(enforcing, "apigateway")
    deny_local = {"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": f"arn:aws:execute-api:us-east-1:{ACCOUNT}:*",
                  "Condition": {"IpAddress": {"aws:SourceIp": ["127.0.0.0/8"]}}}
    api = open_api(apigw, "ip-denied", policy(ALLOW_ALL, deny_local))
    status, headers, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/open")
    assert (status, body) == (403, anonymous_denied(method_arn(api["id"], "open"), True))
    assert headers["x-amzn-errortype"] == "AccessDeniedException"
    elsewhere = {**deny_local, "Condition": {"IpAddress": {"aws:SourceIp": ["203.0.113.0/24"]}}}
    api = open_api(apigw, "ip-allowed", policy(ALLOW_ALL, elsewhere))
    assert call(enforcing, f"/_aws/execute-api/{api['id']}/prod/open")[::2] == (200, {"ok": True})


def test_a_vpc_only_policy_denies_callers_outside_the_vpc(enforcing):
    vpc_only = {"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": f"arn:aws:execute-api:us-east-1:{ACCOUNT}:*",
                "Condition": {"StringNotEquals": {"aws:SourceVpce": "vpce-1a2b3c4d"}}}
    api = open_api(boto(enforcing, "apigateway"), "vpc-only", policy(ALLOW_ALL, vpc_only))
    status, _, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/open")
    assert (status, body) == (403, anonymous_denied(method_arn(api["id"], "open"), True))


def test_a_policy_that_allows_nothing_refuses_a_method_without_authorization(enforcing):
    other_user = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/someone"},
                  "Action": "execute-api:Invoke", "Resource": f"arn:aws:execute-api:us-east-1:{ACCOUNT}:*"}
    api = open_api(boto(enforcing, "apigateway"), "principal-only", policy(other_user))
    status, _, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/open")
    assert (status, body) == (403, anonymous_denied(method_arn(api["id"], "open"), False))


def test_an_authorizers_allow_stands_where_the_policy_says_nothing(enforcing):
    apigw = boto(enforcing, "apigateway")

    def authorizer(api_id):
        # A Cognito authorizer: Roto reads, never verifies, the token it is given.
        return apigw.create_authorizer(restApiId=api_id, name="pool", type="COGNITO_USER_POOLS",
                                       providerARNs=[f"arn:aws:cognito-idp:us-east-1:{ACCOUNT}:userpool/us-east-1_x"],
                                       identitySource="method.request.header.Authorization")["id"]

    other_user = {"Effect": "Allow", "Principal": {"AWS": f"arn:aws:iam::{ACCOUNT}:user/someone"},
                  "Action": "execute-api:Invoke", "Resource": f"arn:aws:execute-api:us-east-1:{ACCOUNT}:*"}
    api = open_api(apigw, "authorized", policy(other_user), "COGNITO_USER_POOLS", authorizer)
    status, _, body = call(enforcing, f"/_aws/execute-api/{api['id']}/prod/open")
    assert status != 403 or "anonymous" not in json.dumps(body)


def test_without_enforcement_resource_policies_of_open_methods_are_not_evaluated(server):
    deny_all = {"Effect": "Deny", "Principal": "*", "Action": "execute-api:Invoke", "Resource": f"arn:aws:execute-api:us-east-1:{ACCOUNT}:*"}
    api = open_api(boto(server, "apigateway"), "lenient", policy(deny_all))
    assert call(server, f"/_aws/execute-api/{api['id']}/prod/open")[::2] == (200, {"ok": True})
