"""API Gateway HTTP APIs: parameter mapping. An HTTP_PROXY integration's RequestParameters
append, overwrite and remove headers and query parameters and overwrite the path (a Lambda
proxy's change the request its event describes); its ResponseParameters change the answer's
headers and status by status code."""

from __future__ import annotations

import json
import threading
import urllib.error
import urllib.request
from http.server import BaseHTTPRequestHandler, ThreadingHTTPServer

import pytest

from lambda_helpers import ECHO_CODE, ROLE


class Echo(BaseHTTPRequestHandler):
    def do_GET(self):
        body = json.dumps({"path": self.path, "headers": {k.lower(): v for k, v in self.headers.items()}}).encode()
        self.send_response(404 if "missing" in self.path else 200)
        self.send_header("content-type", "application/json")
        self.send_header("x-backend", "echo")
        self.send_header("content-length", str(len(body)))
        self.end_headers()
        self.wfile.write(body)

    def log_message(self, *args):
        pass


@pytest.fixture(scope="module")
def echo():
    httpd = ThreadingHTTPServer(("127.0.0.1", 0), Echo)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    yield f"http://127.0.0.1:{httpd.server_port}"
    httpd.shutdown()


def get(server, path, headers=None):
    request = urllib.request.Request(f"{server.endpoint}{path}", headers=headers or {})
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read() or b"{}")


def http_api(client, echo, route_key, **integration):
    v2 = client("apigatewayv2")
    api = v2.create_api(Name="mapped", ProtocolType="HTTP")
    created = v2.create_integration(ApiId=api["ApiId"], IntegrationType="HTTP_PROXY", IntegrationMethod="GET",
                                    IntegrationUri=f"{echo}/base/{{id}}", PayloadFormatVersion="1.0", **integration)
    v2.create_route(ApiId=api["ApiId"], RouteKey=route_key, Target=f"integrations/{created['IntegrationId']}")
    v2.create_stage(ApiId=api["ApiId"], StageName="$default", AutoDeploy=True, StageVariables={"env": "test"})
    return api["ApiId"]


def test_request_parameters_change_headers_query_and_path(server, client, echo):
    api = http_api(client, echo, "GET /items/{id}", RequestParameters={
        "append:header.x-tags": "from-$request.querystring.tag",
        "overwrite:header.x-stage": "$stageVariables.env",
        "remove:header.x-secret": "''",
        "append:querystring.source": "api",
        "overwrite:querystring.tag": "$request.header.x-tag-override",
        "remove:querystring.drop": "''",
        "overwrite:path": "/v2/items/$request.path.id",
    })
    status, _, body = get(server, f"/_aws/execute-api/{api}/items/7?tag=a&drop=1",
                          {"x-tags": "client", "x-secret": "s", "x-tag-override": "b", "x-stage": "prod"})
    assert status == 200
    path, query = body["path"].split("?")
    assert path == "/v2/items/7"
    assert sorted(query.split("&")) == ["source=api", "tag=b"]
    headers = body["headers"]
    assert headers["x-tags"] == "client,from-a"
    assert headers["x-stage"] == "test"
    assert "x-secret" not in headers


def test_response_parameters_apply_by_status_code(server, client, echo):
    api = http_api(client, echo, "GET /{id}", ResponseParameters={
        "200": {"append:header.x-trace": "$context.requestId", "overwrite:header.x-backend": "mapped-$response.header.x-backend",
                "remove:header.content-type": "''"},
        "404": {"overwrite:statuscode": "410", "overwrite:header.x-gone": "yes"},
    })
    status, headers, _ = get(server, f"/_aws/execute-api/{api}/found")
    assert status == 200
    assert headers["x-backend"] == "mapped-echo"
    assert headers["x-trace"] == headers["x-amzn-requestid"]
    assert "content-type" not in headers
    status, headers, _ = get(server, f"/_aws/execute-api/{api}/missing")
    assert status == 410 and headers["x-gone"] == "yes"


def test_without_mappings_the_request_passes_as_sent(server, client, echo):
    api = http_api(client, echo, "GET /items/{id}")
    status, _, body = get(server, f"/_aws/execute-api/{api}/items/9?a=1&a=2", {"x-keep": "yes"})
    assert status == 200 and body["path"] == "/base/9?a=1&a=2" and body["headers"]["x-keep"] == "yes"


def test_request_parameters_change_the_event_of_a_lambda_proxy(server, client):
    lam, v2 = client("lambda"), client("apigatewayv2")
    function = lam.create_function(FunctionName="echo-event", Runtime="python3.12", Role=ROLE,
                                   Handler="app.handler", Code=ECHO_CODE)
    api = v2.create_api(Name="lambda-mapped", ProtocolType="HTTP")
    created = v2.create_integration(ApiId=api["ApiId"], IntegrationType="AWS_PROXY",
                                    IntegrationUri=function["FunctionArn"], PayloadFormatVersion="2.0",
                                    RequestParameters={
                                        "append:header.x-tags": "from-$request.querystring.tag",
                                        "remove:header.x-secret": "''",
                                        "overwrite:querystring.tag": "mapped",
                                        "overwrite:path": "/v2/items/$request.path.id",
                                    })
    v2.create_route(ApiId=api["ApiId"], RouteKey="GET /items/{id}", Target=f"integrations/{created['IntegrationId']}")
    v2.create_stage(ApiId=api["ApiId"], StageName="$default", AutoDeploy=True)
    status, _, event = get(server, f"/_aws/execute-api/{api['ApiId']}/items/7?tag=a",
                           {"x-tags": "client", "x-secret": "s"})
    assert status == 200, event
    assert event["rawPath"] == "/v2/items/7"
    assert event["rawQueryString"] == "tag=mapped" and event["queryStringParameters"] == {"tag": "mapped"}
    assert event["headers"]["x-tags"] == "client,from-a" and "x-secret" not in event["headers"]
    assert event["pathParameters"] == {"id": "7"}


def test_service_integrations_send_to_sqs_from_request_parameters(server, client):
    sqs, v2 = client("sqs"), client("apigatewayv2")
    queue = sqs.create_queue(QueueName="from-api")["QueueUrl"]
    api = v2.create_api(Name="to-sqs", ProtocolType="HTTP")
    created = v2.create_integration(
        ApiId=api["ApiId"], IntegrationType="AWS_PROXY", IntegrationSubtype="SQS-SendMessage",
        PayloadFormatVersion="1.0", CredentialsArn="arn:aws:iam::000000000000:role/api",
        RequestParameters={"QueueUrl": "$request.header.x-queue", "MessageBody": "$request.body.message",
                           "DelaySeconds": "0"})
    v2.create_route(ApiId=api["ApiId"], RouteKey="POST /send", Target=f"integrations/{created['IntegrationId']}")
    v2.create_stage(ApiId=api["ApiId"], StageName="$default", AutoDeploy=True)
    request = urllib.request.Request(f"{server.endpoint}/_aws/execute-api/{api['ApiId']}/send",
                                     data=json.dumps({"message": "hello"}).encode(), method="POST",
                                     headers={"x-queue": queue, "content-type": "application/json"})
    with urllib.request.urlopen(request, timeout=30) as resp:
        assert resp.status == 200
        answer = json.loads(resp.read())
    result = answer["SendMessageResponse"]["SendMessageResult"]
    assert result["MessageId"] and answer["SendMessageResponse"]["ResponseMetadata"]["RequestId"]
    messages = sqs.receive_message(QueueUrl=queue)["Messages"]
    assert [m["Body"] for m in messages] == ["hello"]
    request = urllib.request.Request(f"{server.endpoint}/_aws/execute-api/{api['ApiId']}/send",
                                     data=b'{"message": "x"}', method="POST",
                                     headers={"x-queue": queue + "-missing"})
    with pytest.raises(urllib.error.HTTPError) as e:
        urllib.request.urlopen(request, timeout=30)
    assert e.value.code == 400 and "QueueDoesNotExist" in e.value.read().decode()
