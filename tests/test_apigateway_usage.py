"""API Gateway REST APIs: usage plans enforced on the data plane (API keys, throttles per
plan, per method and per stage, quotas by period on the server clock), and GetUsage /
UpdateUsage reporting and changing what was counted."""

from __future__ import annotations

import datetime
import json
import urllib.error
import urllib.request

import pytest
from botocore.exceptions import ClientError


def mock_api(apigw, name, *, paths=("m",), key_required=True):
    """A REST API whose GET methods answer 200 {"ok": true} from a MOCK integration."""
    api = apigw.create_rest_api(name=name)
    for part in paths:
        resource = apigw.create_resource(restApiId=api["id"], parentId=api["rootResourceId"], pathPart=part)
        apigw.put_method(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                         authorizationType="NONE", apiKeyRequired=key_required)
        apigw.put_integration(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", type="MOCK",
                              requestTemplates={"application/json": '{"statusCode": 200}'})
        apigw.put_method_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET", statusCode="200")
        apigw.put_integration_response(restApiId=api["id"], resourceId=resource["id"], httpMethod="GET",
                                       statusCode="200", responseTemplates={"application/json": '{"ok": true}'})
    apigw.create_deployment(restApiId=api["id"], stageName="prod")
    return api


def get(server, api_id, path, key=None):
    """A plain urllib GET through the path form; status, headers (lower-case), JSON body."""
    request = urllib.request.Request(f"{server.endpoint}/_aws/execute-api/{api_id}{path}")
    if key:
        request.add_header("x-api-key", key)
    try:
        with urllib.request.urlopen(request, timeout=30) as resp:
            return resp.status, {k.lower(): v for k, v in resp.headers.items()}, json.loads(resp.read())
    except urllib.error.HTTPError as e:
        return e.code, {k.lower(): v for k, v in e.headers.items()}, json.loads(e.read())


def keyed_plan(apigw, api, **plan):
    key = apigw.create_api_key(name=f"key-{api['id']}", enabled=True)
    created = apigw.create_usage_plan(name=f"plan-{api['id']}", **plan)
    apigw.create_usage_plan_key(usagePlanId=created["id"], keyId=key["id"], keyType="API_KEY")
    return created, key


def today(server) -> str:
    now = server.advance_clock(0)["now"]
    return now[:10]


def test_a_missing_or_unknown_key_is_403_forbidden(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "keys")
    keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}])
    for key in (None, "not-a-key-of-this-account-0000"):
        status, headers, body = get(server, api["id"], "/prod/m", key)
        assert (status, body) == (403, {"message": "Forbidden"})
        assert headers["x-amzn-errortype"] == "ForbiddenException"


def test_the_plan_throttle_answers_429_too_many_requests_until_the_bucket_refills(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "throttled")
    _, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                        throttle={"burstLimit": 2, "rateLimit": 1.0})
    assert [get(server, api["id"], "/prod/m", key["value"])[0] for _ in range(2)] == [200, 200]
    status, headers, body = get(server, api["id"], "/prod/m", key["value"])
    assert (status, body) == (429, {"message": "Too Many Requests"})
    assert headers["x-amzn-errortype"] == "TooManyRequestsException"
    server.advance_clock(1)
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 429


def test_each_key_has_its_own_bucket(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "per-key")
    plan, first = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                             throttle={"burstLimit": 1, "rateLimit": 0.001})
    second = apigw.create_api_key(name="second", enabled=True)
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=second["id"], keyType="API_KEY")
    assert get(server, api["id"], "/prod/m", first["value"])[0] == 200
    assert get(server, api["id"], "/prod/m", first["value"])[0] == 429
    assert get(server, api["id"], "/prod/m", second["value"])[0] == 200


def test_per_method_throttles_of_an_api_stage_override_the_plans(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "per-method", paths=("slow", "fast"))
    _, key = keyed_plan(apigw, api, throttle={"burstLimit": 100, "rateLimit": 100.0},
                        apiStages=[{"apiId": api["id"], "stage": "prod",
                                    "throttle": {"/slow/GET": {"burstLimit": 1, "rateLimit": 0.001}}}])
    assert get(server, api["id"], "/prod/slow", key["value"])[0] == 200
    assert get(server, api["id"], "/prod/slow", key["value"])[0] == 429
    assert [get(server, api["id"], "/prod/fast", key["value"])[0] for _ in range(3)] == [200] * 3


def test_stage_method_settings_throttle_every_caller(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "stage-throttle", paths=("a", "b"), key_required=False)
    stage = apigw.update_stage(restApiId=api["id"], stageName="prod", patchOperations=[
        {"op": "replace", "path": "/*/*/throttling/burstLimit", "value": "5"},
        {"op": "replace", "path": "/*/*/throttling/rateLimit", "value": "5"},
        {"op": "replace", "path": "/~1a/GET/throttling/burstLimit", "value": "1"},
        {"op": "replace", "path": "/~1a/GET/throttling/rateLimit", "value": "0.001"},
    ])
    assert stage["methodSettings"]["*/*"] == {"throttlingBurstLimit": 5, "throttlingRateLimit": 5.0}
    assert get(server, api["id"], "/prod/a")[0] == 200
    status, headers, body = get(server, api["id"], "/prod/a")
    assert (status, body) == (429, {"message": "Too Many Requests"})
    assert [get(server, api["id"], "/prod/b")[0] for _ in range(6)] == [200] * 5 + [429]
    apigw.update_stage(restApiId=api["id"], stageName="prod", patchOperations=[
        {"op": "remove", "path": "/~1a/GET/throttling/burstLimit"},
        {"op": "remove", "path": "/~1a/GET/throttling/rateLimit"},
        {"op": "remove", "path": "/*/*/throttling/burstLimit"},
        {"op": "remove", "path": "/*/*/throttling/rateLimit"},
    ])
    assert [get(server, api["id"], "/prod/a")[0] for _ in range(3)] == [200] * 3


def test_a_daily_quota_answers_429_limit_exceeded_until_the_next_day(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "quota")
    plan, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                           quota={"limit": 3, "period": "DAY"})
    assert [get(server, api["id"], "/prod/m", key["value"])[0] for _ in range(3)] == [200] * 3
    status, headers, body = get(server, api["id"], "/prod/m", key["value"])
    assert (status, body) == (429, {"message": "Limit Exceeded"})
    assert headers["x-amzn-errortype"] == "LimitExceededException"
    day = today(server)
    usage = apigw.get_usage(usagePlanId=plan["id"], startDate=day, endDate=day)
    assert usage["items"] == {key["id"]: [[3, 0]]}
    assert (usage["startDate"], usage["endDate"], usage["usagePlanId"]) == (day, day, plan["id"])
    server.advance_clock(86_400)
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    tomorrow = today(server)
    usage = apigw.get_usage(usagePlanId=plan["id"], startDate=day, endDate=tomorrow)
    assert usage["items"] == {key["id"]: [[3, 0], [1, 2]]}


def test_a_weekly_quota_spans_the_days_of_its_week(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "weekly")
    now = datetime.date.fromisoformat(today(server))
    offset = (now.isoweekday() % 7)  # today's weekday, Sunday 0: the week starts today
    plan, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                           quota={"limit": 2, "period": "WEEK", "offset": offset})
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    server.advance_clock(86_400)
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 429
    server.advance_clock(6 * 86_400)
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200


def test_update_usage_grants_what_remains_of_the_period(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "extend")
    plan, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                           quota={"limit": 1, "period": "MONTH"})
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 429
    usage = apigw.update_usage(usagePlanId=plan["id"], keyId=key["id"],
                               patchOperations=[{"op": "replace", "path": "/remaining", "value": "2"}])
    assert usage["items"] == {key["id"]: [[1, 2]]}
    assert [get(server, api["id"], "/prod/m", key["value"])[0] for _ in range(3)] == [200, 200, 429]
    day = today(server)
    assert apigw.get_usage(usagePlanId=plan["id"], keyId=key["id"], startDate=day,
                           endDate=day)["items"] == {key["id"]: [[3, 0]]}


def test_usage_is_counted_without_a_quota_and_pages_by_key(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "counted")
    plan, first = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}])
    second = apigw.create_api_key(name="second-counted", enabled=True)
    apigw.create_usage_plan_key(usagePlanId=plan["id"], keyId=second["id"], keyType="API_KEY")
    for _ in range(2):
        get(server, api["id"], "/prod/m", first["value"])
    day = today(server)
    page = apigw.get_usage(usagePlanId=plan["id"], startDate=day, endDate=day, limit=1)
    assert page["items"] == {first["id"]: [[2, 0]]} and page["position"]
    rest = apigw.get_usage(usagePlanId=plan["id"], startDate=day, endDate=day, limit=1, position=page["position"])
    assert rest["items"] == {second["id"]: [[0, 0]]} and "position" not in rest


def test_usage_errors(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "usage-errors")
    plan, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}])
    day = today(server)

    def error(call, **kwargs):
        with pytest.raises(ClientError) as e:
            call(**kwargs)
        return e.value.response["Error"]["Code"], e.value.response["ResponseMetadata"]["HTTPStatusCode"]

    assert error(apigw.get_usage, usagePlanId="nosuchplan", startDate=day, endDate=day) == ("NotFoundException", 404)
    assert error(apigw.get_usage, usagePlanId=plan["id"], startDate="yesterday", endDate=day) == \
        ("BadRequestException", 400)
    assert error(apigw.get_usage, usagePlanId=plan["id"], startDate="2026-12-05", endDate="2026-12-04") == \
        ("BadRequestException", 400)
    assert error(apigw.get_usage, usagePlanId=plan["id"], keyId="nosuchkey", startDate=day, endDate=day) == \
        ("NotFoundException", 404)
    replace = [{"op": "replace", "path": "/remaining", "value": "5"}]
    assert error(apigw.update_usage, usagePlanId=plan["id"], keyId=key["id"], patchOperations=replace) == \
        ("BadRequestException", 400)
    apigw.update_usage_plan(usagePlanId=plan["id"], patchOperations=[
        {"op": "replace", "path": "/quota/limit", "value": "10"},
        {"op": "replace", "path": "/quota/period", "value": "DAY"}])
    assert error(apigw.update_usage, usagePlanId=plan["id"], keyId=key["id"],
                 patchOperations=[{"op": "replace", "path": "/used", "value": "1"}]) == ("BadRequestException", 400)
    assert error(apigw.update_usage, usagePlanId=plan["id"], keyId=key["id"],
                 patchOperations=[{"op": "replace", "path": "/remaining", "value": "-1"}]) == \
        ("BadRequestException", 400)
    assert apigw.update_usage(usagePlanId=plan["id"], keyId=key["id"],
                              patchOperations=replace)["items"] == {key["id"]: [[0, 5]]}


def test_deleting_a_plan_forgets_its_keys_and_counts(server, client):
    apigw = client("apigateway")
    api = mock_api(apigw, "deleted-plan")
    plan, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}],
                           quota={"limit": 1, "period": "DAY"})
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200
    apigw.delete_usage_plan(usagePlanId=plan["id"])
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 403
    again = apigw.create_usage_plan(name="again", apiStages=[{"apiId": api["id"], "stage": "prod"}],
                                    quota={"limit": 1, "period": "DAY"})
    apigw.create_usage_plan_key(usagePlanId=again["id"], keyId=key["id"], keyType="API_KEY")
    assert get(server, api["id"], "/prod/m", key["value"])[0] == 200


def test_keys_and_plans_a_store_kept_before_their_indexes_are_found_after_a_restart(tmp_path):
    """A data directory written before the data plane's indexes of keys by value and plans
    by key existed: they are filled in when API Gateway's table is opened."""
    import sqlite3

    from roto_server import RotoServer

    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as first:
        apigw = first.client("apigateway")
        api = mock_api(apigw, "kept")
        _, key = keyed_plan(apigw, api, apiStages=[{"apiId": api["id"], "stage": "prod"}])
        assert get(first, api["id"], "/prod/m", key["value"])[0] == 200
    with sqlite3.connect(str(tmp_path / "data" / "roto.db")) as db:
        dropped = db.execute("DELETE FROM apigateway_items WHERE kind IN ('apikey-value', 'apikey-plan')")
        assert dropped.rowcount == 2
    with RotoServer("--data-dir", data) as second:
        assert get(second, api["id"], "/prod/m", key["value"])[0] == 200
        with pytest.raises(ClientError) as raised:
            second.client("apigateway").create_api_key(name="again", value=key["value"])
        assert raised.value.response["Error"]["Code"] == "ConflictException"
