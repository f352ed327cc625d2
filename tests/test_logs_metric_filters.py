"""CloudWatch Logs metric filters: Put/Describe/Delete with AWS's filters, order, pagination
and errors, and TestMetricFilter's extracted values."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


@pytest.fixture
def logs(client):
    return client("logs")


def error_of(excinfo) -> tuple[str, str]:
    err = excinfo.value.response["Error"]
    return err["Code"], err["Message"]


def put_filter(logs, group, name, metric="Errors", namespace="App", pattern="ERROR", **extra):
    transformation = {"metricName": metric, "metricNamespace": namespace, "metricValue": "1", **extra}
    logs.put_metric_filter(
        logGroupName=group,
        filterName=name,
        filterPattern=pattern,
        metricTransformations=[transformation],
    )


def test_put_describe_delete_metric_filter_round_trips_its_transformation(logs):
    logs.create_log_group(logGroupName="/app")
    put_filter(
        logs, "/app", "latency", metric="Latency", pattern="{ $.latency = * }",
        defaultValue=0.0, unit="Milliseconds", dimensions={"Service": "$.service"},
    )
    (described,) = logs.describe_metric_filters(logGroupName="/app")["metricFilters"]
    assert described["filterName"] == "latency"
    assert described["logGroupName"] == "/app"
    assert described["filterPattern"] == "{ $.latency = * }"
    assert described["metricTransformations"] == [{
        "metricName": "Latency", "metricNamespace": "App", "metricValue": "1",
        "defaultValue": 0.0, "unit": "Milliseconds", "dimensions": {"Service": "$.service"},
    }]
    assert described["creationTime"] > 0
    assert logs.describe_log_groups()["logGroups"][0]["metricFilterCount"] == 1

    put_filter(logs, "/app", "latency", metric="Latency2")
    (replaced,) = logs.describe_metric_filters(logGroupName="/app")["metricFilters"]
    assert replaced["metricTransformations"][0]["metricName"] == "Latency2"

    logs.delete_metric_filter(logGroupName="/app", filterName="latency")
    assert logs.describe_metric_filters(logGroupName="/app")["metricFilters"] == []
    assert logs.describe_log_groups()["logGroups"][0]["metricFilterCount"] == 0


def test_describe_metric_filters_selects_by_group_prefix_and_metric(logs):
    for group in ["/a", "/b"]:
        logs.create_log_group(logGroupName=group)
    put_filter(logs, "/a", "errors", metric="Errors")
    put_filter(logs, "/a", "warnings", metric="Warnings")
    put_filter(logs, "/b", "errors", metric="Errors", namespace="Other")

    every = logs.describe_metric_filters()["metricFilters"]
    assert [(f["filterName"], f["logGroupName"]) for f in every] == [
        ("errors", "/a"), ("errors", "/b"), ("warnings", "/a"),
    ]
    by_prefix = logs.describe_metric_filters(logGroupName="/a", filterNamePrefix="warn")
    assert [f["filterName"] for f in by_prefix["metricFilters"]] == ["warnings"]
    by_metric = logs.describe_metric_filters(metricName="Errors", metricNamespace="Other")
    assert [f["logGroupName"] for f in by_metric["metricFilters"]] == ["/b"]


def test_describe_metric_filters_paginates_in_name_order(logs):
    logs.create_log_group(logGroupName="/app")
    names = [f"f{i:02}" for i in range(7)]
    for name in reversed(names):
        put_filter(logs, "/app", name)
    seen, token = [], None
    while True:
        page = logs.describe_metric_filters(logGroupName="/app", limit=3, **({"nextToken": token} if token else {}))
        seen += [f["filterName"] for f in page["metricFilters"]]
        token = page.get("nextToken")
        if not token:
            break
        assert len(page["metricFilters"]) == 3
    assert seen == names
    paginator = logs.get_paginator("describe_metric_filters")
    pages = list(paginator.paginate(logGroupName="/app", PaginationConfig={"PageSize": 4}))
    assert [len(p["metricFilters"]) for p in pages] == [4, 3]


def test_metric_filter_errors_are_the_real_ones(logs):
    with pytest.raises(ClientError) as e:
        put_filter(logs, "/missing", "f")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    logs.create_log_group(logGroupName="/app")
    with pytest.raises(ClientError) as e:
        put_filter(logs, "/app", "f", pattern='{ $.level = "x" ')
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        put_filter(logs, "/app", "bad:name")
    assert error_of(e)[0] == "InvalidParameterException"
    assert "at 'filterName' failed to satisfy constraint" in error_of(e)[1]
    with pytest.raises(ClientError) as e:
        two = [{"metricName": m, "metricNamespace": "App", "metricValue": "1"} for m in ["A", "B"]]
        logs.put_metric_filter(logGroupName="/app", filterName="f", filterPattern="", metricTransformations=two)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.delete_metric_filter(logGroupName="/app", filterName="nope")
    assert error_of(e) == ("ResourceNotFoundException", "The specified metric filter does not exist.")
    with pytest.raises(ClientError) as e:
        logs.delete_metric_filter(logGroupName="/missing", filterName="nope")
    assert error_of(e) == ("ResourceNotFoundException", "The specified log group does not exist.")
    with pytest.raises(ClientError) as e:
        logs.describe_metric_filters(metricName="Errors")
    assert error_of(e) == (
        "InvalidParameterException",
        "If you include the metricName parameter in your request, you must also include the metricNamespace parameter.",
    )
    with pytest.raises(ClientError) as e:
        logs.describe_metric_filters(metricNamespace="App")
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.describe_metric_filters(logGroupName="/missing")
    assert error_of(e)[0] == "ResourceNotFoundException"
    with pytest.raises(ClientError) as e:
        logs.describe_metric_filters(nextToken="garbage")
    assert error_of(e)[0] == "InvalidParameterException"


def test_a_log_group_holds_at_most_100_metric_filters(logs):
    logs.create_log_group(logGroupName="/app")
    for i in range(100):
        put_filter(logs, "/app", f"f{i}")
    with pytest.raises(ClientError) as e:
        put_filter(logs, "/app", "one-more")
    assert error_of(e) == ("LimitExceededException", "Resource limit exceeded.")
    put_filter(logs, "/app", "f0", metric="Replaced")


def test_deleting_a_log_group_deletes_its_metric_filters(logs):
    logs.create_log_group(logGroupName="/app")
    put_filter(logs, "/app", "f")
    logs.delete_log_group(logGroupName="/app")
    logs.create_log_group(logGroupName="/app")
    assert logs.describe_metric_filters(logGroupName="/app")["metricFilters"] == []


APACHE = [
    '127.0.0.1 - frank [10/Oct/2000:13:25:15 -0700] "GET /index.html HTTP/1.0" 404 1534',
    '127.0.0.1 - frank [10/Oct/2000:13:35:22 -0700] "GET /about.html HTTP/1.0" 200 5324',
    '127.0.0.1 - frank [10/Oct/2000:13:50:35 -0700] "GET /apache_pb.gif HTTP/1.0" 404 4355',
]


def test_test_metric_filter_reports_space_delimited_fields_by_name_and_position(logs):
    matches = logs.test_metric_filter(
        filterPattern="[..., request = *.html*, status_code = 4*, size]", logEventMessages=APACHE,
    )["matches"]
    assert [m["eventNumber"] for m in matches] == [0]
    assert matches[0]["eventMessage"] == APACHE[0]
    assert matches[0]["extractedValues"] == {
        "$1": "127.0.0.1", "$2": "-", "$3": "frank", "$4": "10/Oct/2000:13:25:15 -0700",
        "$request": "GET /index.html HTTP/1.0", "$status_code": "404", "$size": "1534",
    }
    every = logs.test_metric_filter(filterPattern="[]", logEventMessages=APACHE)["matches"]
    assert [m["eventNumber"] for m in every] == [0, 1, 2]
    assert every[2]["extractedValues"]["$7"] == "4355"


def test_test_metric_filter_with_terms_and_json(logs):
    messages = ["[ERROR] db down", "[INFO] ok", '{"latency": 250, "path": "/a"}', '{"latency": 5}']
    terms = logs.test_metric_filter(filterPattern='"[ERROR]"', logEventMessages=messages)["matches"]
    assert [(m["eventNumber"], m["extractedValues"]) for m in terms] == [(0, {})]
    json_matches = logs.test_metric_filter(
        filterPattern="{ $.latency > 100 }", logEventMessages=messages,
    )["matches"]
    assert [(m["eventNumber"], m["extractedValues"]) for m in json_matches] == [(2, {"$.latency": "250"})]
    with pytest.raises(ClientError) as e:
        logs.test_metric_filter(filterPattern="{ $.latency > }", logEventMessages=messages)
    assert error_of(e)[0] == "InvalidParameterException"
    with pytest.raises(ClientError) as e:
        logs.test_metric_filter(filterPattern="x", logEventMessages=["x"] * 51)
    assert error_of(e)[0] == "InvalidParameterException"
