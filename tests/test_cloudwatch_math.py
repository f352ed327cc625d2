"""CloudWatch GetMetricData and metric math, black-box with boto3: MetricStat and
expression queries, labels, ScanBy, paging by MaxDatapoints, SEARCH over stored metrics,
the ValidationErrors of bad queries and expressions, and math-expression alarms."""

from __future__ import annotations

import json
from datetime import timedelta

import pytest
from botocore.exceptions import ClientError

from cloudwatch_helpers import error, minute, server_now, wait_state


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def stat(id, name, stat="Sum", period=60, dims=None, **kw):
    metric = {"Namespace": "App", "MetricName": name}
    if dims:
        metric["Dimensions"] = [{"Name": k, "Value": v} for k, v in dims.items()]
    return {"Id": id, "MetricStat": {"Metric": metric, "Period": period, "Stat": stat}, **kw}


def expr(id, text, **kw):
    return {"Id": id, "Expression": text, **kw}


def put(cw, name, values, start, dims=None):
    """One datum per minute from `start`; None leaves that minute empty."""
    data = []
    for i, v in enumerate(values):
        if v is None:
            continue
        d = {"MetricName": name, "Timestamp": start + timedelta(minutes=i), "Value": v}
        if dims:
            d["Dimensions"] = [{"Name": k, "Value": val} for k, val in dims.items()]
        data.append(d)
    cw.put_metric_data(Namespace="App", MetricData=data)


def data(cw, queries, start, end, **kw):
    return cw.get_metric_data(MetricDataQueries=queries, StartTime=start, EndTime=end, **kw)


def by_id(out):
    return {r["Id"]: r for r in out["MetricDataResults"]}


@pytest.fixture
def seeded(cw):
    t = minute(-10)
    put(cw, "Errors", [2, 4, None, 10, None], t)
    put(cw, "Requests", [4, 0, 5, 20, 8], t)
    return t


def test_metric_stat_results_newest_first_with_labels_and_status(cw, seeded):
    t = seeded
    out = data(cw, [stat("m1", "Errors"), stat("m2", "Requests", Label="Calls")], t, t + timedelta(minutes=5))
    results = by_id(out)
    assert results["m1"]["Label"] == "Errors" and results["m2"]["Label"] == "Calls"
    assert results["m1"]["Timestamps"] == [t + timedelta(minutes=3), t + timedelta(minutes=1), t]
    assert results["m1"]["Values"] == [10, 4, 2]
    assert results["m1"]["StatusCode"] == "Complete" and out["Messages"] == []
    assert "NextToken" not in out
    up = data(cw, [stat("m1", "Errors")], t, t + timedelta(minutes=5), ScanBy="TimestampAscending")
    assert by_id(up)["m1"]["Values"] == [2, 4, 10]


def test_arithmetic_between_series_and_scalars(cw, seeded):
    t = seeded
    queries = [
        stat("m1", "Errors", ReturnData=False),
        stat("m2", "Requests", ReturnData=False),
        expr("rate", "m1 / m2 * 100", Label="Error rate"),
        expr("shifted", "m1 + 1"),
        expr("total", "SUM(m2)"),
    ]
    out = data(cw, queries, t, t + timedelta(minutes=5), ScanBy="TimestampAscending")
    results = by_id(out)
    assert set(results) == {"rate", "shifted", "total"}
    # division by zero at minute 1 gives no datapoint
    assert results["rate"]["Label"] == "Error rate"
    assert results["rate"]["Timestamps"] == [t, t + timedelta(minutes=3)]
    assert results["rate"]["Values"] == [50, 50]
    assert results["shifted"]["Label"] == "shifted" and results["shifted"]["Values"] == [3, 5, 11]
    # a scalar is a constant series over the periods of the range
    assert results["total"]["Values"] == [37] * 5


def test_metrics_aggregates_fill_rate_diff_and_if(cw, seeded):
    t = seeded
    queries = [
        stat("m1", "Errors", ReturnData=False),
        stat("m2", "Requests", ReturnData=False),
        expr("all", "SUM(METRICS())"),
        expr("errs", "MAX(METRICS('Err'))"),
        expr("zero", "FILL(m1, 0)"),
        expr("repeat", "FILL(m1, REPEAT)"),
        expr("linear", "FILL(m1, LINEAR)"),
        expr("diff", "DIFF(m1)"),
        expr("rate", "RATE(m1)"),
        expr("busy", "IF(m2 > 4, m2, 0)"),
        expr("calc", "ABS(-m1) + CEIL(0.2) + FLOOR(0.7)"),
        expr("flag", "m2 >= 8 AND m2 != 20"),
        expr("spread", "STDDEV(METRICS())"),
    ]
    out = data(cw, queries, t, t + timedelta(minutes=5), ScanBy="TimestampAscending")
    v = {k: r["Values"] for k, r in by_id(out).items()}
    assert v["all"] == [6, 4, 5, 30, 8]
    assert v["errs"] == [2, 4, 10]
    assert v["zero"] == [2, 4, 0, 10, 0]
    assert v["repeat"] == [2, 4, 4, 10, 10]
    assert v["linear"] == [2, 4, 7, 10, 10]
    assert v["diff"] == [2, 6]
    assert v["rate"] == pytest.approx([2 / 60, 6 / 120])
    assert v["busy"] == [0, 0, 5, 20, 8]
    assert v["calc"] == [3, 5, 11]
    assert v["flag"] == [0, 0, 0, 0, 1]
    assert v["spread"] == [1, 2, 0, 5, 0]


def test_search_finds_stored_metrics_by_schema_and_terms(cw):
    t = minute(-5)
    put(cw, "Latency", [10, 20], t, dims={"Host": "a"})
    put(cw, "Latency", [30, 40], t, dims={"Host": "b"})
    put(cw, "Latency", [99], t, dims={"Host": "c", "Zone": "z"})
    put(cw, "Errors", [1], t, dims={"Host": "a"})
    out = data(cw, [expr("s", "SEARCH('{App,Host} MetricName=\"Latency\"', 'Average', 60)")],
               t, t + timedelta(minutes=2), ScanBy="TimestampAscending")
    results = out["MetricDataResults"]
    assert sorted(r["Label"] for r in results) == ["a Latency", "b Latency"]
    assert all(r["Id"] == "s" for r in results)
    assert sorted(r["Values"] for r in results) == [[10, 20], [30, 40]]
    total = data(cw, [expr("s", "SEARCH('{App,Host} MetricName=\"Latency\"', 'Sum', 60)", ReturnData=False),
                      expr("t", "SUM(s)")], t, t + timedelta(minutes=2), ScanBy="TimestampAscending")
    assert by_id(total)["t"]["Values"] == [40, 60]
    free = data(cw, [expr("s", "SEARCH('Host=a', 'Sum', 60)")], t, t + timedelta(minutes=2))
    assert sorted(r["Label"] for r in free["MetricDataResults"]) == ["a Errors", "a Latency"]
    with pytest.raises(ClientError) as e:
        data(cw, [expr("s", "SEARCH('{App,Host', 'Sum', 60)")], t, t + timedelta(minutes=2))
    code, message, status = error(e)
    assert (code, status) == ("ValidationError", 400)
    assert message.startswith("Error in expression s:")


def test_paging_by_max_datapoints_marks_partial_data(cw, seeded):
    t = seeded
    queries = [stat("m1", "Errors"), stat("m2", "Requests")]
    kw = dict(MaxDatapoints=3, ScanBy="TimestampAscending")
    first = data(cw, queries, t, t + timedelta(minutes=5), **kw)
    r = by_id(first)
    assert r["m1"]["Values"] == [2, 4, 10] and r["m1"]["StatusCode"] == "Complete"
    assert r["m2"]["Values"] == [] and r["m2"]["StatusCode"] == "PartialData"
    seen = []
    token = first["NextToken"]
    while token:
        page = data(cw, queries, t, t + timedelta(minutes=5), NextToken=token, **kw)
        seen += by_id(page)["m2"]["Values"]
        token = page.get("NextToken")
    assert seen == [4, 0, 5, 20, 8]
    with pytest.raises(ClientError) as e:
        data(cw, queries, t, t + timedelta(minutes=5), NextToken="nope")
    assert error(e)[0] == "InvalidNextToken"


@pytest.mark.parametrize("queries,code,message", [
    ([stat("M1", "Errors")], "ValidationError",
     "The value M1 for parameter MetricDataQueries.member.1.Id is invalid."),
    ([stat("m1", "Errors"), stat("m1", "Requests")], "ValidationError",
     "The value m1 for parameter MetricDataQueries.member.2.Id is not unique."),
    ([{"Id": "m1"}], "ValidationError", "The parameter MetricDataQueries.member.1.MetricStat is required."),
    ([stat("m1", "Errors", stat="Median")], "ValidationError",
     "The value for parameter MetricDataQueries.member.1.MetricStat.Stat is not a valid statistic."),
    ([stat("m1", "Errors", period=45)], "InvalidParameterValue",
     "The parameter MetricDataQueries.member.1.MetricStat.Period must be 1, 5, 10, 30, or a multiple of 60."),
    ([expr("e1", "m1 +")], "ValidationError", "Error in expression e1: unexpected end of expression"),
    ([expr("e1", "m1 $ 2"), stat("m1", "Errors")], "ValidationError",
     "Error in expression e1: unexpected '$' at character 4"),
    ([expr("e1", "m9 * 2")], "ValidationError", "Error in expression e1: unknown metric id m9"),
    ([expr("e1", "FOO(m1)"), stat("m1", "Errors")], "ValidationError", "Error in expression e1: unknown function FOO"),
    ([expr("e1", "FILL(m1)"), stat("m1", "Errors")], "ValidationError",
     "Error in expression e1: FILL takes 2 arguments, not 1"),
    ([expr("e1", "e2 + 1"), expr("e2", "e1 * 2")], "ValidationError",
     "Error in expression e2: circular reference to e1"),
    ([expr("e1", "(" * 70 + "1" + ")" * 70)], "ValidationError",
     "Error in expression e1: the expression nests deeper than 64"),
])
def test_bad_queries_and_expressions_are_validation_errors(cw, queries, code, message):
    t = minute(-5)
    with pytest.raises(ClientError) as e:
        data(cw, queries, t, t + timedelta(minutes=5))
    got = error(e)
    assert got[0] == code and got[2] == 400
    assert got[1].startswith(message), got[1]


def test_request_level_errors(cw):
    t = minute(-5)
    with pytest.raises(ClientError) as e:
        data(cw, [stat("m1", "Errors")], t, t)
    assert error(e) == ("InvalidParameterValue",
                        "The parameter StartTime must be less than the parameter EndTime.", 400)
    with pytest.raises(ClientError) as e:
        data(cw, [stat("m1", "Errors")], t, t + timedelta(minutes=1), ScanBy="Sideways")
    assert error(e)[0] == "InvalidParameterValue"
    with pytest.raises(ClientError) as e:
        data(cw, [stat(f"m{i}", "Errors") for i in range(501)], t, t + timedelta(minutes=1))
    assert error(e)[1] == "The collection MetricDataQueries must not have a size greater than 500."


def test_math_alarm_goes_to_alarm_when_the_expression_crosses(server, cw):
    now = server_now(server)
    cw.put_metric_alarm(
        AlarmName="error-rate", EvaluationPeriods=1, Threshold=10,
        ComparisonOperator="GreaterThanThreshold",
        Metrics=[
            stat("m1", "Errors", ReturnData=False),
            stat("m2", "Requests", ReturnData=False),
            expr("e1", "m1 / m2 * 100", Label="Error rate", ReturnData=True),
        ],
    )
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "Errors", "Value": 50, "Timestamp": now},
        {"MetricName": "Requests", "Value": 100, "Timestamp": now},
    ])
    server.advance_clock(60)
    alarm = wait_state(cw, "error-rate", "ALARM")
    assert alarm["StateReason"].startswith("Threshold Crossed: 1 datapoint [50.0 (")
    reason = json.loads(alarm["StateReasonData"])
    assert "statistic" not in reason and reason["recentDatapoints"] == [50.0]
    assert [m["Id"] for m in alarm["Metrics"]] == ["m1", "m2", "e1"]
    server.advance_clock(60)
    wait_state(cw, "error-rate", "INSUFFICIENT_DATA")


def test_math_alarm_expressions_are_checked(cw):
    with pytest.raises(ClientError) as e:
        cw.put_metric_alarm(
            AlarmName="bad", EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold",
            Metrics=[stat("m1", "Errors", ReturnData=False), expr("e1", "m1 * (2", ReturnData=True)],
        )
    assert error(e)[:2] == ("ValidationError", "Error in expression e1: unexpected end of expression")
