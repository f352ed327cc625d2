"""EventBridge API destination targets: a matching rule calls the destination's endpoint
(a local HTTP server the test runs) with its method, the event or transformed input as a
JSON body, the connection's authorization (Basic, API key, OAuth client credentials with a
cached token) and parameters merged with the target's; DEAUTHORIZED connections and 4xx
answers fail at once, 429 and 5xx answers are retried by the event bus, every attempt
traced."""

from __future__ import annotations

import base64
import http.server
import json
import threading
import time
import urllib.parse

import pytest

PATTERN = json.dumps({"source": ["shop"]})


class Handler(http.server.BaseHTTPRequestHandler):
    """Records every request on its server's `Endpoint`, and answers what it says."""

    def answer(self):
        endpoint = self.server.endpoint
        body = self.rfile.read(int(self.headers.get("Content-Length") or 0)).decode()
        endpoint.received.append({
            "method": self.command,
            "path": self.path,
            "headers": {k.lower(): v for k, v in self.headers.items()},
            "body": body,
        })
        status, payload = endpoint.reply(self.path)
        data = json.dumps(payload).encode()
        self.send_response(status)
        self.send_header("Content-Type", "application/json")
        self.send_header("Content-Length", str(len(data)))
        self.end_headers()
        if self.command != "HEAD":
            self.wfile.write(data)

    do_GET = do_POST = do_PUT = do_PATCH = do_DELETE = do_HEAD = answer

    def log_message(self, *args):
        pass


class Endpoint:
    """A local HTTP server: `/token` hands out OAuth tokens (`tok-1`, `tok-2`, ...), every
    other path answers the next of `statuses`, then 200."""

    def __init__(self):
        self.received: list[dict] = []
        self.statuses: list[int] = []
        self.tokens_issued = 0
        self.token_lifetime = 3600
        self.httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        self.httpd.endpoint = self
        threading.Thread(target=self.httpd.serve_forever, daemon=True).start()

    def url(self, path: str) -> str:
        return f"http://127.0.0.1:{self.httpd.server_address[1]}{path}"

    def reply(self, path: str):
        if path.startswith("/token"):
            self.tokens_issued += 1
            return 200, {"access_token": f"tok-{self.tokens_issued}", "token_type": "Bearer",
                         "expires_in": self.token_lifetime}
        return (self.statuses.pop(0) if self.statuses else 200), {"ok": True}

    def calls(self, prefix: str = "/hook") -> list[dict]:
        return [r for r in self.received if r["path"].startswith(prefix)]

    def wait(self, count: int, prefix: str = "/hook", timeout: float = 5.0) -> list[dict]:
        deadline = time.monotonic() + timeout
        while len(self.calls(prefix)) < count and time.monotonic() < deadline:
            time.sleep(0.02)
        calls = self.calls(prefix)
        assert len(calls) >= count, self.received
        return calls


@pytest.fixture
def endpoint():
    e = Endpoint()
    yield e
    e.httpd.shutdown()


@pytest.fixture
def events(client):
    return client("events")


def connection(events, auth_type, auth, name="conn"):
    return events.create_connection(Name=name, AuthorizationType=auth_type, AuthParameters=auth)["ConnectionArn"]


def destination(events, connection_arn, url, method="POST", name="dest"):
    return events.create_api_destination(
        Name=name, ConnectionArn=connection_arn, InvocationEndpoint=url, HttpMethod=method,
    )["ApiDestinationArn"]


def route_to(events, arn, **target):
    events.put_rule(Name="to-api", EventPattern=PATTERN)
    events.put_targets(Rule="to-api", Targets=[{"Id": "api", "Arn": arn, **target}])


def put_event(events, detail=None):
    out = events.put_events(Entries=[{
        "Source": "shop", "DetailType": "OrderPlaced", "Detail": json.dumps(detail or {"order": "o-1"}),
    }])
    assert out["FailedEntryCount"] == 0
    return out["Entries"][0]["EventId"]


def attempts(server, arn):
    return [(e["attempt"], e["outcome"]) for e in server.traces(kind="delivery", target=arn)]


def settle(server, arn, attempts_expected: int) -> None:
    """Moves the server clock past the bus's back-off until the delivery to `arn` ends."""
    for _ in range(20):
        if server.traces(kind="delivery", target=arn, outcome="failed") or server.traces(
                kind="delivery", target=arn, outcome="delivered"):
            return
        server.advance_clock(10)
        server.traces(kind="delivery", target=arn, outcome="failed", wait=0.3)
    raise AssertionError(f"no last attempt among {attempts(server, arn)} (wanted {attempts_expected})")


def test_basic_auth_with_connection_and_target_parameters(events, endpoint, server):
    conn = connection(events, "BASIC", {
        "BasicAuthParameters": {"Username": "shop", "Password": "hunter2"},
        "InvocationHttpParameters": {
            "HeaderParameters": [
                {"Key": "X-Tenant", "Value": "t-1", "IsValueSecret": False},
                {"Key": "X-Signature", "Value": "s3cret", "IsValueSecret": True},
            ],
            "QueryStringParameters": [{"Key": "region", "Value": "eu west", "IsValueSecret": False}],
            "BodyParameters": [{"Key": "system", "Value": "crm", "IsValueSecret": False}],
        },
    })
    dest = destination(events, conn, endpoint.url("/hook/orders/*/lines/*"))
    route_to(events, dest, HttpParameters={
        "PathParameterValues": ["o-1", "7"],
        "HeaderParameters": {"X-Rule": "to-api", "X-Tenant": "the target's"},
        "QueryStringParameters": {"region": "the target's", "page": "2"},
    })
    event_id = put_event(events)
    [call] = endpoint.wait(1)
    assert call["method"] == "POST"
    path, _, query = call["path"].partition("?")
    assert path == "/hook/orders/o-1/lines/7"
    assert urllib.parse.parse_qs(query) == {"page": ["2"], "region": ["eu west"]}
    headers = call["headers"]
    assert headers["authorization"] == "Basic " + base64.b64encode(b"shop:hunter2").decode()
    assert headers["content-type"].startswith("application/json")
    assert headers["user-agent"] == "Amazon/EventBridge/ApiDestinations"
    assert (headers["x-tenant"], headers["x-signature"], headers["x-rule"]) == ("t-1", "s3cret", "to-api")
    body = json.loads(call["body"])
    assert (body["id"], body["source"], body["detail"], body["system"]) == (event_id, "shop", {"order": "o-1"}, "crm")
    delivered = server.wait_for_delivery(service="events", target=dest, outcome="delivered")
    assert delivered["operation"] == "events:RuleTriggered" and delivered["attempt"] == 1
    assert delivered["source"].endswith(":rule/to-api")


def test_api_key_with_an_input_transformer_and_put(events, endpoint, server):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k-123"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"), method="PUT")
    route_to(events, dest, InputTransformer={
        "InputPathsMap": {"order": "$.detail.order"},
        "InputTemplate": '{"order": <order>, "via": "eventbridge"}',
    })
    put_event(events, {"order": "o-9"})
    [call] = endpoint.wait(1)
    assert call["method"] == "PUT" and call["path"] == "/hook/orders"
    assert call["headers"]["x-api-key"] == "k-123" and "authorization" not in call["headers"]
    assert json.loads(call["body"]) == {"order": "o-9", "via": "eventbridge"}
    server.wait_for_delivery(target=dest, outcome="delivered")


def test_get_destinations_send_no_body(events, endpoint, server):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/ping"), method="GET")
    route_to(events, dest)
    put_event(events)
    [call] = endpoint.wait(1)
    assert (call["method"], call["path"], call["body"]) == ("GET", "/hook/ping", "")
    server.wait_for_delivery(target=dest, outcome="delivered")


def oauth(events, endpoint):
    return connection(events, "OAUTH_CLIENT_CREDENTIALS", {"OAuthParameters": {
        "AuthorizationEndpoint": endpoint.url("/token"),
        "HttpMethod": "POST",
        "ClientParameters": {"ClientID": "client-1", "ClientSecret": "very-secret"},
        "OAuthHttpParameters": {
            "BodyParameters": [{"Key": "grant_type", "Value": "client_credentials", "IsValueSecret": False}],
            "QueryStringParameters": [{"Key": "audience", "Value": "orders", "IsValueSecret": False}],
            "HeaderParameters": [{"Key": "X-Auth-Tenant", "Value": "t-1", "IsValueSecret": False}],
        },
    }})


def test_oauth_fetches_a_token_once_and_again_when_it_expires(events, endpoint, server):
    dest = destination(events, oauth(events, endpoint), endpoint.url("/hook/orders"))
    route_to(events, dest)
    put_event(events)
    put_event(events)
    calls = endpoint.wait(2)
    assert [c["headers"]["authorization"] for c in calls] == ["Bearer tok-1", "Bearer tok-1"]
    [token_call] = endpoint.calls("/token")
    assert token_call["method"] == "POST" and token_call["path"] == "/token?audience=orders"
    assert token_call["headers"]["authorization"] == "Basic " + base64.b64encode(b"client-1:very-secret").decode()
    assert token_call["headers"]["x-auth-tenant"] == "t-1"
    assert token_call["headers"]["content-type"] == "application/x-www-form-urlencoded"
    assert urllib.parse.parse_qs(token_call["body"]) == {"grant_type": ["client_credentials"]}
    # Within a minute of its expiry (on the server clock) the token is fetched anew.
    server.advance_clock(3600 - 30)
    put_event(events)
    calls = endpoint.wait(3)
    assert calls[2]["headers"]["authorization"] == "Bearer tok-2"
    assert len(endpoint.calls("/token")) == 2


def test_oauth_token_is_refreshed_after_a_401(events, endpoint, server):
    dest = destination(events, oauth(events, endpoint), endpoint.url("/hook/orders"))
    route_to(events, dest)
    endpoint.statuses = [401]
    put_event(events)
    first = server.wait_for_delivery(target=dest, outcome="retrying")
    assert "401" in first["detail"]
    settle(server, dest, 2)
    calls = endpoint.wait(2)
    assert [c["headers"]["authorization"] for c in calls] == ["Bearer tok-1", "Bearer tok-2"]
    assert attempts(server, dest) == [(1, "retrying"), (2, "delivered")]


def test_updating_the_connection_drops_its_token(events, endpoint, server):
    conn = oauth(events, endpoint)
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    put_event(events)
    endpoint.wait(1)
    events.update_connection(Name="conn", Description="rotated")
    put_event(events)
    calls = endpoint.wait(2)
    assert calls[1]["headers"]["authorization"] == "Bearer tok-2"


def test_deauthorized_connections_fail_the_delivery_at_once(events, endpoint, server):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    events.deauthorize_connection(Name="conn")
    put_event(events)
    failed = server.wait_for_delivery(target=dest, outcome="failed")
    assert failed["attempt"] == 1 and "DEAUTHORIZED" in failed["detail"] and conn in failed["detail"]
    assert endpoint.received == []
    # Authorized again (UpdateConnection re-authorizes), it is called.
    events.update_connection(Name="conn", AuthParameters={"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k2"}})
    put_event(events)
    [call] = endpoint.wait(1)
    assert call["headers"]["x-api-key"] == "k2"


@pytest.mark.parametrize("status", [400, 403, 404])
def test_client_errors_fail_without_retrying(events, endpoint, server, status):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    endpoint.statuses = [status]
    put_event(events)
    failed = server.wait_for_delivery(target=dest, outcome="failed")
    assert failed["attempt"] == 1 and str(status) in failed["detail"]
    server.advance_clock(60)
    time.sleep(0.3)
    assert len(endpoint.calls()) == 1
    assert attempts(server, dest) == [(1, "failed")]


@pytest.mark.parametrize("status", [429, 500, 503])
def test_throttling_and_server_errors_are_retried(events, endpoint, server, status):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    endpoint.statuses = [status, status]
    put_event(events)
    first = server.wait_for_delivery(target=dest, outcome="retrying")
    assert first["attempt"] == 1 and str(status) in first["detail"]
    settle(server, dest, 3)
    assert attempts(server, dest) == [(1, "retrying"), (2, "retrying"), (3, "delivered")]
    calls = endpoint.calls()
    assert len(calls) == 3 and len({c["body"] for c in calls}) == 1


def test_endpoints_that_keep_failing_end_as_failed(events, endpoint, server):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    endpoint.statuses = [502] * 10
    put_event(events)
    server.wait_for_delivery(target=dest, outcome="retrying")
    settle(server, dest, 3)
    assert attempts(server, dest) == [(1, "retrying"), (2, "retrying"), (3, "failed")]
    assert len(endpoint.calls()) == 3


def test_deleted_destinations_fail_the_delivery(events, endpoint, server):
    conn = connection(events, "API_KEY", {"ApiKeyAuthParameters": {"ApiKeyName": "x-api-key", "ApiKeyValue": "k"}})
    dest = destination(events, conn, endpoint.url("/hook/orders"))
    route_to(events, dest)
    events.delete_api_destination(Name="dest")
    put_event(events)
    failed = server.wait_for_delivery(target=dest, outcome="failed")
    assert failed["attempt"] == 1 and "does not exist" in failed["detail"]
    assert endpoint.received == []
