"""API Gateway HTTP APIs served on Roto's port: stages, route matching, Lambda proxy
integrations (payload formats 2.0 and 1.0) with real functions, HTTP proxies, CORS, JWT and
Lambda authorizers, access logs and the trace. Requests are plain `http.client` calls."""

from __future__ import annotations

import base64
import http.client
import http.server
import json
import os
import sys
import threading
import time
import uuid

import boto3
import pytest
from botocore.config import Config
from cryptography.hazmat.primitives import hashes
from cryptography.hazmat.primitives.asymmetric import padding, rsa

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402
from lambda_helpers import ROLE, zip_of  # noqa: E402

CREDENTIALS = {"aws_access_key_id": "test", "aws_secret_access_key": "test", "region_name": "us-east-1"}

ECHO = '''
import base64, json, time
def handler(event, context):
    path = event.get("rawPath") or event.get("path") or ""
    if path.endswith("/fail"):
        raise ValueError("boom")
    if path.endswith("/slow"):
        time.sleep(2)
    if path.endswith("/plain"):
        return {"plain": True}
    if path.endswith("/cookies"):
        return {"statusCode": 201, "cookies": ["a=1", "b=2"], "headers": {"x-custom": "v"}, "body": "made"}
    if path.endswith("/binary"):
        return {"statusCode": 200, "isBase64Encoded": True, "body": base64.b64encode(b"\\x00\\x01").decode(),
                "headers": {"content-type": "application/octet-stream"}}
    return {"statusCode": 200, "headers": {"content-type": "application/json"}, "body": json.dumps(event)}
'''

SIMPLE_AUTHORIZER = '''
COUNT = {"n": 0}
def handler(event, context):
    COUNT["n"] += 1
    token = (event.get("identitySource") or [""])[0]
    return {"isAuthorized": token == "letmein", "context": {"user": "u1", "calls": COUNT["n"]}}
'''

POLICY_AUTHORIZER = '''
def handler(event, context):
    effect = "Allow" if event["headers"].get("x-token") == "ok" else "Deny"
    return {"principalId": "p1", "context": {"k": "v"}, "policyDocument": {"Version": "2012-10-17",
            "Statement": [{"Action": "execute-api:Invoke", "Effect": effect, "Resource": event["methodArn"]}]}}
'''




@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral") as s:
        yield s


def make(server, service):
    return boto3.client(service, endpoint_url=server.endpoint,
                        config=Config(retries={"max_attempts": 1}, read_timeout=30), **CREDENTIALS)


@pytest.fixture(scope="module")
def apigw(server):
    return make(server, "apigatewayv2")


@pytest.fixture(scope="module")
def functions(server):
    lam = make(server, "lambda")
    arns = {}
    for name, source in [("echo", ECHO), ("simple-auth", SIMPLE_AUTHORIZER), ("policy-auth", POLICY_AUTHORIZER)]:
        arns[name] = lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                                         Code={"ZipFile": zip_of({"app.py": source})}, Timeout=5)["FunctionArn"]
    return arns


def call(server, api_id, method, path, body=b"", headers=None, path_form=False):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        all_headers = dict(headers or {})
        if path_form:
            path = f"/_aws/execute-api/{api_id}{path}"
        else:
            all_headers["Host"] = f"{api_id}.execute-api.localhost:{server.port}"
        conn.request(method, path, body=body, headers=all_headers)
        resp = conn.getresponse()
        return resp.status, resp.getheaders(), resp.read()
    finally:
        conn.close()


def header(headers, name):
    return [v for k, v in headers if k.lower() == name]


def quick_api(apigw, arn, **kw):
    return apigw.create_api(Name=f"q-{uuid.uuid4().hex[:6]}", ProtocolType="HTTP", Target=arn, **kw)["ApiId"]


def test_quick_created_api_serves_payload_2_events_on_default_stage(server, apigw, functions):
    api_id = quick_api(apigw, functions["echo"])
    status, headers, body = call(server, api_id, "POST", "/items/7?q=a&q=b&flag", body=b'{"k": 1}',
                                 headers={"Content-Type": "application/json", "Cookie": "c1=x; c2=y",
                                          "X-Multi": "one", "User-Agent": "tests"})
    assert status == 200, body
    assert header(headers, "apigw-requestid")
    event = json.loads(body)
    assert event["version"] == "2.0" and event["routeKey"] == "$default"
    assert event["rawPath"] == "/items/7" and event["rawQueryString"] == "q=a&q=b&flag"
    assert event["queryStringParameters"] == {"q": "a,b", "flag": ""}
    assert event["cookies"] == ["c1=x", "c2=y"] and "cookie" not in event["headers"]
    assert event["headers"]["x-multi"] == "one" and event["body"] == '{"k": 1}'
    assert event["isBase64Encoded"] is False
    context = event["requestContext"]
    assert context["apiId"] == api_id and context["accountId"] == "000000000000"
    assert context["stage"] == "$default" and context["domainPrefix"] == api_id
    assert context["domainName"] == f"{api_id}.execute-api.localhost"
    assert context["http"] == {"method": "POST", "path": "/items/7", "protocol": "HTTP/1.1",
                               "sourceIp": "127.0.0.1", "userAgent": "tests"}
    assert context["requestId"] and context["timeEpoch"] > 0 and "+0000" in context["time"]
    status, _, body = call(server, api_id, "GET", "/x", path_form=True)
    assert status == 200 and json.loads(body)["rawPath"] == "/x"


def test_function_answers_become_responses_as_aws_reads_them(server, apigw, functions):
    api_id = quick_api(apigw, functions["echo"])
    status, headers, body = call(server, api_id, "GET", "/plain")
    assert (status, json.loads(body)) == (200, {"plain": True})
    assert header(headers, "content-type") == ["application/json"]
    status, headers, body = call(server, api_id, "GET", "/cookies")
    assert (status, body) == (201, b"made")
    assert header(headers, "set-cookie") == ["a=1", "b=2"] and header(headers, "x-custom") == ["v"]
    status, _, body = call(server, api_id, "GET", "/binary")
    assert (status, body) == (200, b"\x00\x01")
    status, _, body = call(server, api_id, "GET", "/fail")
    assert (status, json.loads(body)) == (500, {"message": "Internal Server Error"})


def test_integration_timeout_answers_service_unavailable(server, apigw, functions):
    api_id = quick_api(apigw, functions["echo"])
    integration = apigw.get_integrations(ApiId=api_id)["Items"][0]
    apigw.update_integration(ApiId=api_id, IntegrationId=integration["IntegrationId"], TimeoutInMillis=300)
    status, _, body = call(server, api_id, "GET", "/slow")
    assert (status, json.loads(body)) == (503, {"message": "Service Unavailable"})


def test_routes_match_most_specific_first_on_named_stages(server, apigw, functions):
    api_id = apigw.create_api(Name="routes", ProtocolType="HTTP")["ApiId"]
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="2.0")
    target = f"integrations/{integration['IntegrationId']}"
    for key in ["GET /items/{id}", "GET /items/special", "ANY /{proxy+}"]:
        apigw.create_route(ApiId=api_id, RouteKey=key, Target=target)
    apigw.create_stage(ApiId=api_id, StageName="dev", StageVariables={"table": "t1"})
    status, _, _ = call(server, api_id, "GET", "/dev/items/7")
    assert status == 404, "nothing is deployed to dev yet"
    apigw.create_deployment(ApiId=api_id, StageName="dev")
    cases = [("GET", "/dev/items/special", "GET /items/special", None),
             ("GET", "/dev/items/7", "GET /items/{id}", {"id": "7"}),
             ("DELETE", "/dev/items/7", "ANY /{proxy+}", {"proxy": "items/7"}),
             ("GET", "/dev/a/b/c", "ANY /{proxy+}", {"proxy": "a/b/c"})]
    for method, path, route_key, parameters in cases:
        status, _, body = call(server, api_id, method, path)
        event = json.loads(body)
        assert status == 200 and event["routeKey"] == route_key, (path, body)
        assert event.get("pathParameters") == parameters
        assert event["stageVariables"] == {"table": "t1"} and event["requestContext"]["stage"] == "dev"
        assert event["rawPath"] == path
    status, _, body = call(server, api_id, "GET", "/dev")
    assert (status, json.loads(body)) == (404, {"message": "Not Found"})
    status, _, body = call(server, api_id, "GET", "/prod/items/7")
    assert (status, json.loads(body)) == (404, {"message": "Not Found"}), "no such stage and no $default"
    apigw.create_route(ApiId=api_id, RouteKey="GET /new", Target=target)
    status, _, body = call(server, api_id, "GET", "/dev/new")
    assert status == 200 and json.loads(body)["routeKey"] == "ANY /{proxy+}", "undeployed routes are not served"


def test_payload_format_1_events(server, apigw, functions):
    api_id = apigw.create_api(Name="v1", ProtocolType="HTTP")["ApiId"]
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="1.0")
    apigw.create_route(ApiId=api_id, RouteKey="GET /items/{id}", Target=f"integrations/{integration['IntegrationId']}")
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    status, _, body = call(server, api_id, "GET", "/items/9?a=1&a=2", headers={"X-H": "v"})
    assert status == 200, body
    event = json.loads(body)
    assert event["version"] == "1.0" and event["resource"] == "/items/{id}" and event["httpMethod"] == "GET"
    assert event["path"] == "/items/9" and event["pathParameters"] == {"id": "9"}
    assert event["multiValueQueryStringParameters"] == {"a": ["1", "2"]}
    assert event["multiValueHeaders"]["x-h"] == ["v"]
    assert event["requestContext"]["resourceId"] == "GET /items/{id}"
    assert event["requestContext"]["identity"]["sourceIp"] == "127.0.0.1"


def test_unknown_routes_answer_404_not_found(server, apigw, functions):
    api_id = apigw.create_api(Name="nf", ProtocolType="HTTP")["ApiId"]
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="2.0")
    apigw.create_route(ApiId=api_id, RouteKey="GET /only", Target=f"integrations/{integration['IntegrationId']}")
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    assert call(server, api_id, "GET", "/only")[0] == 200
    status, _, body = call(server, api_id, "POST", "/only")
    assert (status, json.loads(body)) == (404, {"message": "Not Found"})


def test_cors_preflights_and_response_headers(server, apigw, functions):
    api_id = quick_api(apigw, functions["echo"], CorsConfiguration={
        "AllowOrigins": ["https://app.example"], "AllowMethods": ["GET", "POST"], "AllowHeaders": ["content-type"],
        "ExposeHeaders": ["x-custom"], "MaxAge": 600, "AllowCredentials": True})
    status, headers, body = call(server, api_id, "OPTIONS", "/items", headers={
        "Origin": "https://app.example", "Access-Control-Request-Method": "POST"})
    assert status == 204 and body == b""
    assert header(headers, "access-control-allow-origin") == ["https://app.example"]
    assert header(headers, "access-control-allow-methods") == ["GET,POST"]
    assert header(headers, "access-control-allow-headers") == ["content-type"]
    assert header(headers, "access-control-max-age") == ["600"]
    assert header(headers, "access-control-allow-credentials") == ["true"]
    status, headers, _ = call(server, api_id, "GET", "/cookies", headers={"Origin": "https://app.example"})
    assert status == 201 and header(headers, "access-control-expose-headers") == ["x-custom"]
    _, headers, _ = call(server, api_id, "GET", "/cookies", headers={"Origin": "https://evil.example"})
    assert not header(headers, "access-control-allow-origin")


class Backend(http.server.BaseHTTPRequestHandler):
    """An HTTP endpoint that answers with what it received, and serves a JWKS."""

    jwks: dict = {}

    def log_message(self, *args):
        pass

    def answer(self):
        if self.path == "/.well-known/openid-configuration":
            return self.send_json({"issuer": self.issuer(), "jwks_uri": f"{self.issuer()}/jwks"})
        if self.path == "/jwks":
            return self.send_json(Backend.jwks)
        length = int(self.headers.get("content-length") or 0)
        body = self.rfile.read(length).decode()
        self.send_json({"method": self.command, "path": self.path, "body": body,
                        "x-forwarded": self.headers.get("x-test")}, extra={"x-backend": "yes"}, status=202)

    def issuer(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def send_json(self, doc, extra=None, status=200):
        data = json.dumps(doc).encode()
        self.send_response(status)
        self.send_header("content-type", "application/json")
        for k, v in (extra or {}).items():
            self.send_header(k, v)
        self.send_header("content-length", str(len(data)))
        self.end_headers()
        self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_DELETE = answer


@pytest.fixture(scope="module")
def backend():
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    thread = threading.Thread(target=httpd.serve_forever, daemon=True)
    thread.start()
    yield f"http://127.0.0.1:{httpd.server_address[1]}"
    httpd.shutdown()


def test_http_proxy_integrations_reach_real_endpoints(server, apigw, backend):
    api_id = apigw.create_api(Name="proxy", ProtocolType="HTTP")["ApiId"]
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="HTTP_PROXY", IntegrationMethod="ANY",
                                           IntegrationUri=f"{backend}/backend/{{proxy}}")
    apigw.create_route(ApiId=api_id, RouteKey="ANY /proxy/{proxy+}", Target=f"integrations/{integration['IntegrationId']}")
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    status, headers, body = call(server, api_id, "PUT", "/proxy/a/b?x=1", body=b"payload", headers={"X-Test": "t"})
    assert status == 202, body
    assert json.loads(body) == {"method": "PUT", "path": "/backend/a/b?x=1", "body": "payload", "x-forwarded": "t"}
    assert header(headers, "x-backend") == ["yes"]


def b64url(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


@pytest.fixture(scope="module")
def signing_key(backend):
    key = rsa.generate_private_key(public_exponent=65537, key_size=2048)
    numbers = key.public_key().public_numbers()
    Backend.jwks = {"keys": [{"kty": "RSA", "kid": "k1", "alg": "RS256", "use": "sig",
                              "n": b64url(numbers.n.to_bytes(256, "big")), "e": b64url(numbers.e.to_bytes(3, "big"))}]}
    return key


def jwt(key, claims, kid="k1"):
    header = b64url(json.dumps({"alg": "RS256", "typ": "JWT", "kid": kid}).encode())
    payload = b64url(json.dumps(claims).encode())
    signature = key.sign(f"{header}.{payload}".encode(), padding.PKCS1v15(), hashes.SHA256())
    return f"{header}.{payload}.{b64url(signature)}"


def test_jwt_authorizers_check_signature_issuer_audience_expiry_and_scopes(server, apigw, functions, backend, signing_key):
    api_id = apigw.create_api(Name="jwt", ProtocolType="HTTP")["ApiId"]
    authorizer = apigw.create_authorizer(ApiId=api_id, AuthorizerType="JWT", Name="jwt",
                                         IdentitySource=["$request.header.Authorization"],
                                         JwtConfiguration={"Issuer": backend, "Audience": ["app"]})
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="2.0")
    target = f"integrations/{integration['IntegrationId']}"
    apigw.create_route(ApiId=api_id, RouteKey="GET /me", Target=target, AuthorizationType="JWT",
                       AuthorizerId=authorizer["AuthorizerId"])
    apigw.create_route(ApiId=api_id, RouteKey="GET /admin", Target=target, AuthorizationType="JWT",
                       AuthorizerId=authorizer["AuthorizerId"], AuthorizationScopes=["admin"])
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    now = int(time.time())
    good = jwt(signing_key, {"iss": backend, "aud": "app", "sub": "user-1", "exp": now + 600, "scope": "read"})
    status, _, body = call(server, api_id, "GET", "/me", headers={"Authorization": f"Bearer {good}"})
    assert status == 200, body
    claims = json.loads(body)["requestContext"]["authorizer"]["jwt"]
    assert claims["claims"]["sub"] == "user-1" and claims["scopes"] == ["read"]
    unauthorized = {"message": "Unauthorized"}
    status, headers, body = call(server, api_id, "GET", "/me")
    assert (status, json.loads(body)) == (401, unauthorized)
    for bad in [jwt(signing_key, {"iss": backend, "aud": "other", "exp": now + 600}),
                jwt(signing_key, {"iss": "https://elsewhere", "aud": "app", "exp": now + 600}),
                jwt(signing_key, {"iss": backend, "aud": "app", "exp": now - 10}),
                jwt(rsa.generate_private_key(public_exponent=65537, key_size=2048), {"iss": backend, "aud": "app"}),
                "not-a-token"]:
        status, headers, body = call(server, api_id, "GET", "/me", headers={"Authorization": bad})
        assert (status, json.loads(body)) == (401, unauthorized)
        assert header(headers, "www-authenticate")
    status, _, body = call(server, api_id, "GET", "/admin", headers={"Authorization": good})
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})
    admin = jwt(signing_key, {"iss": backend, "aud": "app", "exp": now + 600, "scope": "read admin"})
    assert call(server, api_id, "GET", "/admin", headers={"Authorization": admin})[0] == 200


def test_lambda_authorizers_simple_responses_are_cached_by_identity(server, apigw, functions):
    api_id = apigw.create_api(Name="lauth", ProtocolType="HTTP")["ApiId"]
    authorizer = apigw.create_authorizer(ApiId=api_id, AuthorizerType="REQUEST", Name="simple",
                                         IdentitySource=["$request.header.x-token"],
                                         AuthorizerUri=functions["simple-auth"], AuthorizerPayloadFormatVersion="2.0",
                                         EnableSimpleResponses=True, AuthorizerResultTtlInSeconds=300)
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="2.0")
    apigw.create_route(ApiId=api_id, RouteKey="GET /secret", Target=f"integrations/{integration['IntegrationId']}",
                       AuthorizationType="CUSTOM", AuthorizerId=authorizer["AuthorizerId"])
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    status, _, body = call(server, api_id, "GET", "/secret")
    assert (status, json.loads(body)) == (401, {"message": "Unauthorized"})
    status, _, body = call(server, api_id, "GET", "/secret", headers={"X-Token": "letmein"})
    assert status == 200, body
    first = json.loads(body)["requestContext"]["authorizer"]["lambda"]
    assert first["user"] == "u1"
    status, _, body = call(server, api_id, "GET", "/secret", headers={"X-Token": "letmein"})
    assert json.loads(body)["requestContext"]["authorizer"]["lambda"]["calls"] == first["calls"], "cached"
    status, _, body = call(server, api_id, "GET", "/secret", headers={"X-Token": "wrong"})
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})
    apigw.reset_authorizers_cache(ApiId=api_id, StageName="$default")
    _, _, body = call(server, api_id, "GET", "/secret", headers={"X-Token": "letmein"})
    assert json.loads(body)["requestContext"]["authorizer"]["lambda"]["calls"] > first["calls"]


def test_lambda_authorizers_iam_policies_are_evaluated_against_the_route(server, apigw, functions):
    api_id = apigw.create_api(Name="pauth", ProtocolType="HTTP")["ApiId"]
    authorizer = apigw.create_authorizer(ApiId=api_id, AuthorizerType="REQUEST", Name="policy",
                                         IdentitySource=["$request.header.x-token"],
                                         AuthorizerUri=functions["policy-auth"], AuthorizerPayloadFormatVersion="1.0")
    integration = apigw.create_integration(ApiId=api_id, IntegrationType="AWS_PROXY",
                                           IntegrationUri=functions["echo"], PayloadFormatVersion="2.0")
    apigw.create_route(ApiId=api_id, RouteKey="GET /p", Target=f"integrations/{integration['IntegrationId']}",
                       AuthorizationType="CUSTOM", AuthorizerId=authorizer["AuthorizerId"])
    apigw.create_stage(ApiId=api_id, StageName="$default", AutoDeploy=True)
    status, _, body = call(server, api_id, "GET", "/p", headers={"X-Token": "ok"})
    assert status == 200, body
    assert json.loads(body)["requestContext"]["authorizer"]["lambda"] == {"k": "v", "principalId": "p1"}
    status, _, body = call(server, api_id, "GET", "/p", headers={"X-Token": "no"})
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})


def test_requests_are_traced_and_written_to_access_logs(server, apigw, functions):
    logs = make(server, "logs")
    logs.create_log_group(logGroupName="api-access")
    api_id = quick_api(apigw, functions["echo"])
    apigw.update_stage(ApiId=api_id, StageName="$default", AccessLogSettings={
        "DestinationArn": "arn:aws:logs:us-east-1:000000000000:log-group:api-access",
        "Format": '{"requestId":"$context.requestId","status":"$context.status","routeKey":"$context.routeKey"}'})
    status, headers, _ = call(server, api_id, "GET", "/logged")
    assert status == 200
    request_id = header(headers, "apigw-requestid")[0]
    entry = server.wait_for_trace(service="apigatewayv2", operation="ExecuteApi", target=f"{api_id}/$default/$default")
    assert entry["status"] == 200 and entry["duration_ms"] > 0
    assert entry["source"].startswith("AWS_PROXY ")
    server.wait_for_trace(service="lambda", operation="Invoke")
    deadline = time.monotonic() + 10
    while True:
        events = logs.filter_log_events(logGroupName="api-access")["events"]
        if events or time.monotonic() > deadline:
            break
        time.sleep(0.05)
    line = json.loads(events[0]["message"])
    assert line == {"requestId": request_id, "status": "200", "routeKey": "$default"}
