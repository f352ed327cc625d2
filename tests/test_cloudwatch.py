"""CloudWatch metrics, black-box with boto3 (awsJson1_0) and raw awsQuery: PutMetricData,
ListMetrics and GetMetricStatistics with AWS's limits and errors."""

from __future__ import annotations

import urllib.parse
from datetime import datetime, timedelta, timezone

import pytest
from botocore.exceptions import ClientError

from cloudwatch_helpers import error, minute


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def stats(cw, name, start, end, period=60, **kw):
    kw.setdefault("Statistics", ["Sum", "Average", "Minimum", "Maximum", "SampleCount"])
    return cw.get_metric_statistics(
        Namespace="App", MetricName=name, StartTime=start, EndTime=end, Period=period, **kw
    )


def test_values_counts_and_statistic_sets_aggregate_per_minute(cw):
    t = minute(-5)
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "Latency", "Timestamp": t, "Value": 10, "Unit": "Milliseconds"},
        {"MetricName": "Latency", "Timestamp": t + timedelta(seconds=20), "Values": [20, 30], "Counts": [1, 2], "Unit": "Milliseconds"},
        {"MetricName": "Latency", "Timestamp": t + timedelta(minutes=1),
         "StatisticValues": {"SampleCount": 4, "Sum": 100, "Minimum": 5, "Maximum": 50}, "Unit": "Milliseconds"},
    ])
    points = stats(cw, "Latency", t, t + timedelta(minutes=2))["Datapoints"]
    points.sort(key=lambda p: p["Timestamp"])
    assert len(points) == 2
    first, second = points
    assert first["Timestamp"] == t
    assert (first["SampleCount"], first["Sum"], first["Minimum"], first["Maximum"]) == (4, 90, 10, 30)
    assert first["Average"] == 22.5 and first["Unit"] == "Milliseconds"
    assert (second["SampleCount"], second["Sum"], second["Average"]) == (4, 100, 25)
    wide = stats(cw, "Latency", t, t + timedelta(minutes=2), period=120)["Datapoints"]
    assert [p["SampleCount"] for p in wide] == [8]


def test_percentiles_from_raw_values_not_from_spread_statistic_sets(cw):
    t = minute(-3)
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "P", "Timestamp": t, "Values": [float(v) for v in range(1, 101)]},
    ])
    out = cw.get_metric_statistics(Namespace="App", MetricName="P", StartTime=t,
                                   EndTime=t + timedelta(minutes=1), Period=60,
                                   ExtendedStatistics=["p99", "p50"])
    [point] = out["Datapoints"]
    assert point["ExtendedStatistics"] == {"p99": 99.0, "p50": 50.0}
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "P", "Timestamp": t, "StatisticValues": {"SampleCount": 2, "Sum": 3, "Minimum": 1, "Maximum": 2}},
    ])
    out = cw.get_metric_statistics(Namespace="App", MetricName="P", StartTime=t,
                                   EndTime=t + timedelta(minutes=1), Period=60, ExtendedStatistics=["p99"])
    assert out["Datapoints"][0]["ExtendedStatistics"] == {}


def test_dimensions_units_and_high_resolution(cw):
    t = minute(-2)
    dims = [{"Name": "Service", "Value": "api"}, {"Name": "Env", "Value": "prod"}]
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "Hits", "Dimensions": dims, "Timestamp": t, "Value": 1, "Unit": "Count"},
        {"MetricName": "Hits", "Dimensions": dims, "Timestamp": t, "Value": 5, "Unit": "Seconds"},
        {"MetricName": "Fast", "Timestamp": t + timedelta(seconds=1), "Value": 1, "StorageResolution": 1},
        {"MetricName": "Fast", "Timestamp": t + timedelta(seconds=2), "Value": 3, "StorageResolution": 1},
    ])
    assert stats(cw, "Hits", t, t + timedelta(minutes=1))["Datapoints"] == []
    both = stats(cw, "Hits", t, t + timedelta(minutes=1), Dimensions=list(reversed(dims)))["Datapoints"]
    assert sorted(p["Unit"] for p in both) == ["Count", "Seconds"]
    counted = stats(cw, "Hits", t, t + timedelta(minutes=1), Dimensions=dims, Unit="Count")["Datapoints"]
    assert [(p["Sum"], p["Unit"]) for p in counted] == [(1, "Count")]
    seconds = stats(cw, "Fast", t, t + timedelta(seconds=10), period=1)["Datapoints"]
    assert sorted(p["Sum"] for p in seconds) == [1, 3]
    assert stats(cw, "Fast", t, t + timedelta(minutes=1))["Datapoints"][0]["Sum"] == 4


def test_list_metrics_filters_recently_active_and_pages(cw, server):
    cw.put_metric_data(Namespace="A", MetricData=[
        {"MetricName": "m", "Dimensions": [{"Name": "Q", "Value": "1"}], "Value": 1},
        {"MetricName": "m", "Dimensions": [{"Name": "Q", "Value": "2"}, {"Name": "R", "Value": "x"}], "Value": 1},
        {"MetricName": "n", "Value": 1},
    ])
    cw.put_metric_data(Namespace="B", MetricData=[{"MetricName": "m", "Value": 1}])
    assert len(cw.list_metrics()["Metrics"]) == 4
    assert len(cw.list_metrics(Namespace="A")["Metrics"]) == 3
    assert len(cw.list_metrics(MetricName="m")["Metrics"]) == 3
    only = cw.list_metrics(Dimensions=[{"Name": "R"}])["Metrics"]
    assert only == [{"Namespace": "A", "MetricName": "m",
                     "Dimensions": [{"Name": "Q", "Value": "2"}, {"Name": "R", "Value": "x"}]}]
    assert len(cw.list_metrics(Dimensions=[{"Name": "Q", "Value": "1"}])["Metrics"]) == 1
    server.advance_clock(4 * 3600)
    cw.put_metric_data(Namespace="C", MetricData=[{"MetricName": "late", "Value": 1}])
    recent = cw.list_metrics(RecentlyActive="PT3H")["Metrics"]
    assert [m["Namespace"] for m in recent] == ["C"]
    assert len(cw.list_metrics()["Metrics"]) == 5


def test_list_metrics_pages_of_500(cw):
    for batch in range(2):
        cw.put_metric_data(Namespace="Many", MetricData=[
            {"MetricName": f"m{batch}-{i}", "Value": 1} for i in range(300)
        ])
    first = cw.list_metrics(Namespace="Many")
    assert len(first["Metrics"]) == 500 and "NextToken" in first
    second = cw.list_metrics(Namespace="Many", NextToken=first["NextToken"])
    assert len(second["Metrics"]) == 100 and "NextToken" not in second
    pages = cw.get_paginator("list_metrics").paginate(Namespace="Many")
    assert sum(len(p["Metrics"]) for p in pages) == 600


@pytest.mark.parametrize("datum,code,message", [
    ({"MetricName": "m", "Value": 1, "StatisticValues": {"SampleCount": 1, "Sum": 1, "Minimum": 1, "Maximum": 1}},
     "InvalidParameterCombination",
     "The parameters MetricData.member.1.Value and MetricData.member.1.StatisticValues are mutually exclusive and you have specified both."),
    ({"MetricName": "m", "Values": [1, 2], "Counts": [1]}, "InvalidParameterValue",
     "The parameters MetricData.member.1.Values and MetricData.member.1.Counts must be of the same size."),
    ({"MetricName": "m", "Values": [1] * 151}, "InvalidParameterValue",
     "The collection MetricData.member.1.Values must not have a size greater than 150."),
    ({"MetricName": "m", "Value": 1, "Dimensions": [{"Name": f"d{i}", "Value": "v"} for i in range(31)]},
     "InvalidParameterValue",
     "The collection MetricData.member.1.Dimensions must not have a size greater than 30."),
    ({"MetricName": "m", "Value": 1, "StorageResolution": 30}, "InvalidParameterValue",
     "The value 30 for parameter MetricData.member.1.StorageResolution is invalid."),
    ({"MetricName": "m", "Value": 1, "Timestamp": datetime.now(timezone.utc) - timedelta(days=15)},
     "InvalidParameterValue",
     "The parameter MetricData.member.1.Timestamp must specify a time within the past two weeks."),
])
def test_put_metric_data_errors(cw, datum, code, message):
    with pytest.raises(ClientError) as e:
        cw.put_metric_data(Namespace="App", MetricData=[datum])
    assert error(e) == (code, message, 400)


def test_put_metric_data_rejects_aws_namespaces_and_too_many_data(cw):
    with pytest.raises(ClientError) as e:
        cw.put_metric_data(Namespace="AWS/EC2", MetricData=[{"MetricName": "m", "Value": 1}])
    assert error(e) == ("InvalidParameterValue", "The value AWS/EC2 for parameter Namespace is invalid.", 400)
    with pytest.raises(ClientError) as e:
        cw.put_metric_data(Namespace="App", MetricData=[{"MetricName": "m", "Value": 1}] * 1001)
    assert error(e)[1] == "The collection MetricData must not have a size greater than 1000."


def test_get_metric_statistics_errors(cw):
    t = minute(-60)
    with pytest.raises(ClientError) as e:
        stats(cw, "x", t, t + timedelta(days=2), period=60)
    assert error(e) == ("InvalidParameterCombination",
                        "You have requested up to 2,880 datapoints, which exceeds the limit of 1,440. You may "
                        "reduce the datapoints requested by increasing Period, or decreasing the time range.", 400)
    with pytest.raises(ClientError) as e:
        stats(cw, "x", t, t - timedelta(minutes=1))
    assert error(e) == ("InvalidParameterValue",
                        "The parameter StartTime must be less than the parameter EndTime.", 400)
    with pytest.raises(ClientError) as e:
        stats(cw, "x", t, t + timedelta(minutes=5), period=90)
    assert error(e)[0] == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        stats(cw, "x", t, t + timedelta(minutes=5), ExtendedStatistics=["p99"])
    assert error(e)[0] == "InvalidParameterCombination"


def query(server, params):
    body = urllib.parse.urlencode({"Version": "2010-08-01", **params}).encode()
    headers = {
        "Content-Type": "application/x-www-form-urlencoded",
        "Authorization": "AWS4-HMAC-SHA256 Credential=test/20260101/us-east-1/monitoring/aws4_request, SignedHeaders=host, Signature=x",
    }
    return server.request("POST", "/", body, headers)


def test_the_query_protocol_serves_the_same_operations(server):
    status, _, body = query(server, {
        "Action": "PutMetricData", "Namespace": "Q",
        "MetricData.member.1.MetricName": "m", "MetricData.member.1.Value": "2",
    })
    assert status == 200, body
    status, _, body = query(server, {"Action": "ListMetrics", "Namespace": "Q"})
    assert status == 200 and b"<MetricName>m</MetricName>" in body
    assert b"<ListMetricsResult>" in body
    status, _, body = query(server, {"Action": "PutMetricData", "Namespace": "Q"})
    assert status == 400
    assert b"<Code>MissingParameter</Code>" in body
    assert b"The parameter MetricData is required." in body


def test_lua_setup_seeds_metrics(tmp_path):
    from roto_server import RotoServer

    path = tmp_path / "setup.lua"
    path.write_text("""
        aws.cloudwatch.PutMetricData{Namespace = "Seeded", MetricData = {
          {MetricName = "Jobs", Value = 3, Unit = "Count", Dimensions = {{Name = "Queue", Value = "q"}}},
        }}
        aws.cloudwatch.PutMetricAlarm{AlarmName = "backlog", Namespace = "Seeded", MetricName = "Jobs",
          Statistic = "Sum", Period = 60, EvaluationPeriods = 1, Threshold = 1,
          ComparisonOperator = "GreaterThanThreshold"}
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        metrics = s.client("cloudwatch").list_metrics(Namespace="Seeded")["Metrics"]
        assert metrics == [{"Namespace": "Seeded", "MetricName": "Jobs",
                            "Dimensions": [{"Name": "Queue", "Value": "q"}]}]
        [alarm] = s.client("cloudwatch").describe_alarms()["MetricAlarms"]
        assert alarm["AlarmName"] == "backlog" and alarm["StateValue"] == "INSUFFICIENT_DATA"
