"""API Gateway's data plane on Roto's port: which requests reach it (execute-api host names
and the `/_aws/execute-api/{id}/` path form), and what an id no API has answers."""

from __future__ import annotations

import http.client
import json

import pytest


def raw(server, method: str, path: str, host: str | None = None, body: bytes = b"", headers=None):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        all_headers = dict(headers or {})
        if host:
            all_headers["Host"] = host
        conn.request(method, path, body=body, headers=all_headers)
        resp = conn.getresponse()
        return resp.status, {k.lower(): v for k, v in resp.getheaders()}, resp.read()
    finally:
        conn.close()


@pytest.mark.parametrize("host", [
    "nosuchapi1.execute-api.localhost",
    "nosuchapi1.execute-api.us-east-1.amazonaws.com",
    "nosuchapi1.execute-api.localhost.localstack.cloud",
])
def test_unknown_api_ids_answer_404_not_found_on_every_host_form(server, host):
    status, headers, body = raw(server, "GET", "/prod/items", host=f"{host}:{server.port}")
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}
    assert headers["content-type"] == "application/json"
    assert headers["x-amzn-requestid"]


def test_the_path_form_reaches_the_data_plane_and_never_s3(server, client):
    status, _, body = raw(server, "PUT", "/_aws/execute-api/nosuchapi1/prod/key", body=b"data")
    assert status == 404
    assert json.loads(body) == {"message": "Not Found"}
    assert client("s3").list_buckets()["Buckets"] == []
    signed = "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/s3/aws4_request, SignedHeaders=host, Signature=00"
    status, _, body = raw(server, "PUT", "/prod/key", host="nosuchapi1.execute-api.localhost",
                          body=b"data", headers={"Authorization": signed})
    assert status == 404
    assert client("s3").list_buckets()["Buckets"] == []


def test_data_plane_requests_are_traced(server):
    raw(server, "GET", "/_aws/execute-api/nosuchapi1/prod/")
    entry = server.wait_for_trace(service="apigateway", operation="ExecuteApi")
    assert entry["status"] == 404


# --- REST APIs serving requests -------------------------------------------------------------

import base64  # noqa: E402
import threading  # noqa: E402
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer  # noqa: E402

from lambda_helpers import ROLE, zip_of  # noqa: E402


PROXY_HANDLER = '''
import json, time
def handler(event, context):
    mode = (event.get("queryStringParameters") or {}).get("mode")
    if mode == "malformed":
        return {"statusCode": 200, "unexpected": True}
    if mode == "fail":
        raise ValueError("boom")
    if mode == "sleep":
        time.sleep(2)
    if mode == "binary":
        return {"statusCode": 200, "headers": {"Content-Type": "image/png"}, "body": "AAEC", "isBase64Encoded": True}
    return {"statusCode": 201, "headers": {"X-Echo": "yes"},
            "multiValueHeaders": {"Set-Cookie": ["a=1", "b=2"]}, "body": json.dumps(event)}
'''




@pytest.fixture(scope="module")
def stack():
    from roto_server import RotoServer
    with RotoServer("--ephemeral") as s:
        lam = s.client("lambda")
        lam.create_function(FunctionName="echo", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                            Code={"ZipFile": zip_of({"app.py": PROXY_HANDLER})}, Timeout=5)
        apigw = s.client("apigateway")
        api = apigw.create_rest_api(name="echo", binaryMediaTypes=["image/png"])
        root = api["rootResourceId"]
        items = apigw.create_resource(restApiId=api["id"], parentId=root, pathPart="items")
        one = apigw.create_resource(restApiId=api["id"], parentId=items["id"], pathPart="{id}")
        arn = "arn:aws:lambda:us-east-1:000000000000:function:echo"
        uri = f"arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/{arn}/invocations"
        apigw.put_method(restApiId=api["id"], resourceId=one["id"], httpMethod="ANY", authorizationType="NONE")
        apigw.put_integration(restApiId=api["id"], resourceId=one["id"], httpMethod="ANY", type="AWS_PROXY",
                              integrationHttpMethod="POST", uri=uri, timeoutInMillis=1000)
        apigw.put_method(restApiId=api["id"], resourceId=root, httpMethod="GET", authorizationType="NONE")
        apigw.put_integration(restApiId=api["id"], resourceId=root, httpMethod="GET", type="MOCK",
                              requestTemplates={"application/json": '{"statusCode": 200}'})
        apigw.put_method_response(restApiId=api["id"], resourceId=root, httpMethod="GET", statusCode="200")
        apigw.put_integration_response(restApiId=api["id"], resourceId=root, httpMethod="GET", statusCode="200",
                                       responseParameters={"method.response.header.X-Mock": "'mocked'"},
                                       responseTemplates={"application/json": '{"mock": true}'})
        apigw.create_deployment(restApiId=api["id"], stageName="prod", variables={"color": "blue"})
        yield s, api["id"]


def call(stack, method, path, body=b"", headers=None, form="host"):
    server, api_id = stack
    if form == "host":
        return raw(server, method, path, host=f"{api_id}.execute-api.localhost:{server.port}", body=body, headers=headers)
    return raw(server, method, f"/_aws/execute-api/{api_id}{path}", body=body, headers=headers)


def test_lambda_proxy_gets_the_full_1_0_event(stack):
    status, headers, body = call(stack, "POST", "/prod/items/42?a=1&a=2&b=x", body=b'{"k": 1}',
                                 headers={"Content-Type": "application/json", "X-Multi": "v", "User-Agent": "ua"})
    assert status == 201
    assert headers["x-echo"] == "yes"
    event = json.loads(body)
    assert event["resource"] == "/items/{id}"
    assert event["path"] == "/items/42"
    assert event["httpMethod"] == "POST"
    assert event["pathParameters"] == {"id": "42"}
    assert event["queryStringParameters"] == {"a": "2", "b": "x"}
    assert event["multiValueQueryStringParameters"] == {"a": ["1", "2"], "b": ["x"]}
    assert event["headers"]["x-multi"] == "v"
    assert event["multiValueHeaders"]["x-multi"] == ["v"]
    assert event["stageVariables"] == {"color": "blue"}
    assert event["body"] == '{"k": 1}' and event["isBase64Encoded"] is False
    context = event["requestContext"]
    server, api_id = stack
    assert context["apiId"] == api_id and context["accountId"] == "000000000000"
    assert context["stage"] == "prod" and context["resourcePath"] == "/items/{id}"
    assert context["path"] == "/prod/items/42" and context["httpMethod"] == "POST"
    assert context["identity"]["sourceIp"] == "127.0.0.1" and context["identity"]["userAgent"] == "ua"
    assert context["protocol"] == "HTTP/1.1" and context["domainName"] == f"{api_id}.execute-api.localhost"
    assert context["requestId"] == headers["x-amzn-requestid"]
    assert isinstance(context["requestTimeEpoch"], int) and context["requestTime"].endswith("+0000")
    assert context["resourceId"]


def test_the_path_form_serves_the_same_api(stack):
    status, _, body = call(stack, "GET", "/prod/items/7", form="path")
    assert status == 201
    assert json.loads(body)["pathParameters"] == {"id": "7"}


def test_binary_bodies_are_base64_in_and_out(stack):
    status, headers, body = call(stack, "PUT", "/prod/items/1", body=b"\x00\x01\x02",
                                 headers={"Content-Type": "image/png"})
    event = json.loads(body)
    assert event["isBase64Encoded"] is True and base64.b64decode(event["body"]) == b"\x00\x01\x02"
    status, headers, body = call(stack, "GET", "/prod/items/1?mode=binary")
    assert status == 200 and body == b"\x00\x01\x02" and headers["content-type"] == "image/png"


def test_integration_failures_answer_502_and_504(stack):
    for mode in ("malformed", "fail"):
        status, headers, body = call(stack, "GET", f"/prod/items/1?mode={mode}")
        assert status == 502, mode
        assert json.loads(body) == {"message": "Internal server error"}
    status, _, body = call(stack, "GET", "/prod/items/1?mode=sleep")
    assert status == 504
    assert json.loads(body) == {"message": "Endpoint request timed out"}


def test_unknown_paths_and_stages_are_refused_as_aws_refuses_them(stack):
    status, _, body = call(stack, "GET", "/prod/nothing/here")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    status, _, body = call(stack, "POST", "/prod")
    assert (status, json.loads(body)) == (403, {"message": "Missing Authentication Token"})
    status, _, body = call(stack, "GET", "/staging/items/1")
    assert (status, json.loads(body)) == (403, {"message": "Forbidden"})


def test_mock_integrations_answer_from_their_integration_response(stack):
    status, headers, body = call(stack, "GET", "/prod")
    assert status == 200
    assert headers["x-mock"] == "mocked"
    assert json.loads(body) == {"mock": True}


class Echo(BaseHTTPRequestHandler):
    def do_any(self):
        length = int(self.headers.get("Content-Length") or 0)
        body = self.rfile.read(length)
        out = json.dumps({"method": self.command, "path": self.path, "body": body.decode(),
                          "header": self.headers.get("X-In")}).encode()
        self.send_response(207)
        self.send_header("Content-Type", "application/json")
        self.send_header("X-Upstream", "1")
        self.send_header("Content-Length", str(len(out)))
        self.end_headers()
        self.wfile.write(out)

    do_GET = do_POST = do_PUT = do_any

    def log_message(self, *args):
        pass


def test_http_proxy_integrations_forward_the_request(server, client):
    upstream = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=upstream.serve_forever, daemon=True).start()
    try:
        apigw = client("apigateway")
        api = apigw.create_rest_api(name="proxy")
        proxy = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart="{proxy+}")
        apigw.put_method(restApiId=api["id"], resourceId=proxy["id"], httpMethod="ANY", authorizationType="NONE")
        apigw.put_integration(restApiId=api["id"], resourceId=proxy["id"], httpMethod="ANY", type="HTTP_PROXY",
                              integrationHttpMethod="ANY",
                              uri=f"http://127.0.0.1:{upstream.server_port}/base/{{proxy}}")
        apigw.create_deployment(restApiId=api["id"], stageName="v1")
        status, headers, body = raw(server, "POST", "/v1/a/b?q=1", host=f"{api['id']}.execute-api.localhost",
                                    body=b"hello", headers={"X-In": "in"})
        assert status == 207 and headers["x-upstream"] == "1"
        assert json.loads(body) == {"method": "POST", "path": "/base/a/b?q=1", "body": "hello", "header": "in"}
    finally:
        upstream.shutdown()
