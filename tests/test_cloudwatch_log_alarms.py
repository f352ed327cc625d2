"""PutLogAlarm, black-box with boto3: log alarms stored with AWS's checks, shown by
DescribeAlarms under LogAlarms (only when AlarmTypes asks for them), updated in place with
their scheduled query's ARN kept, moved by SetAlarmState, tagged and deleted."""

from __future__ import annotations

import json
import re

import pytest

from cloudwatch_helpers import error


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def log_alarm(**extra):
    alarm = {
        "AlarmName": "errors-in-logs",
        "ScheduledQueryConfiguration": {
            "QueryString": "fields @message | filter @message like /ERROR/",
            "LogGroupIdentifiers": ["/app/api"],
            "ScheduledQueryRoleARN": "arn:aws:iam::000000000000:role/alarms",
            "ScheduleConfiguration": {"ScheduleExpression": "rate(5 minutes)", "StartTimeOffset": 300},
            "AggregationExpression": "count(*)",
        },
        "QueryResultsToEvaluate": 3,
        "QueryResultsToAlarm": 2,
        "Threshold": 10.0,
        "ComparisonOperator": "GreaterThanThreshold",
    }
    alarm.update(extra)
    return alarm


def described(cw, name="errors-in-logs"):
    out = cw.describe_alarms(AlarmNames=[name], AlarmTypes=["LogAlarm"])
    assert out["MetricAlarms"] == [] and out["CompositeAlarms"] == []
    return out["LogAlarms"]


def test_a_log_alarm_is_stored_and_described_under_log_alarms(cw):
    cw.put_log_alarm(**log_alarm(AlarmDescription="too many errors", TreatMissingData="notBreaching",
                                 AlarmActions=["arn:aws:sns:us-east-1:000000000000:ops"],
                                 Tags=[{"Key": "team", "Value": "api"}]))
    [alarm] = described(cw)
    assert alarm["AlarmArn"] == "arn:aws:cloudwatch:us-east-1:000000000000:alarm:errors-in-logs"
    assert (alarm["StateValue"], alarm["ActionsEnabled"]) == ("INSUFFICIENT_DATA", True)
    assert (alarm["QueryResultsToEvaluate"], alarm["QueryResultsToAlarm"]) == (3, 2)
    assert (alarm["Threshold"], alarm["ComparisonOperator"]) == (10.0, "GreaterThanThreshold")
    assert alarm["TreatMissingData"] == "notBreaching"
    assert alarm["AlarmActions"] == ["arn:aws:sns:us-east-1:000000000000:ops"]
    assert alarm["OKActions"] == [] and alarm["InsufficientDataActions"] == []
    query = alarm["ScheduledQueryConfiguration"]
    assert query["AggregationExpression"] == "count(*)"
    assert query["ScheduleConfiguration"] == {"ScheduleExpression": "rate(5 minutes)", "StartTimeOffset": 300}
    assert re.fullmatch(r"arn:aws:logs:us-east-1:000000000000:scheduled-query:[0-9a-f-]{36}", query["QueryARN"])
    assert cw.list_tags_for_resource(ResourceARN=alarm["AlarmArn"])["Tags"] == [{"Key": "team", "Value": "api"}]
    assert cw.describe_alarms()["LogAlarms"] == []
    everything = cw.describe_alarms(AlarmTypes=["MetricAlarm", "CompositeAlarm", "LogAlarm"])
    assert [a["AlarmName"] for a in everything["LogAlarms"]] == ["errors-in-logs"]


def test_updating_keeps_the_state_and_the_query_arn_and_records_history(cw):
    cw.put_log_alarm(**log_alarm())
    [first] = described(cw)
    cw.set_alarm_state(AlarmName="errors-in-logs", StateValue="ALARM", StateReason="testing")
    cw.put_log_alarm(**log_alarm(Threshold=50.0))
    [second] = described(cw)
    assert second["Threshold"] == 50.0 and second["StateValue"] == "ALARM"
    query_arn = first["ScheduledQueryConfiguration"]["QueryARN"]
    assert second["ScheduledQueryConfiguration"]["QueryARN"] == query_arn
    items = cw.describe_alarm_history(AlarmName="errors-in-logs", AlarmTypes=["LogAlarm"])["AlarmHistoryItems"]
    assert sorted(i["HistoryItemType"] for i in items) == [
        "ConfigurationUpdate", "ConfigurationUpdate", "StateUpdate"]
    update = json.loads(next(i for i in items if "updated" in i["HistorySummary"])["HistoryData"])
    assert update["type"] == "Update"
    cw.delete_alarms(AlarmNames=["errors-in-logs"])
    assert described(cw) == []


def test_a_name_held_by_another_kind_of_alarm_is_refused(cw):
    cw.put_metric_alarm(AlarmName="taken", Namespace="App", MetricName="Errors", Statistic="Sum",
                        Period=60, EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold")
    with pytest.raises(cw.exceptions.ClientError) as e:
        cw.put_log_alarm(**log_alarm(AlarmName="taken"))
    assert error(e)[0] == "ValidationError"
    assert "not a log alarm" in error(e)[1]


@pytest.mark.parametrize("change, code, text", [
    ({"QueryResultsToAlarm": 4}, "ValidationError", "less than or equal to QueryResultsToEvaluate"),
    ({"QueryResultsToEvaluate": 101, "QueryResultsToAlarm": 1}, "ValidationError", "between 1 and 100"),
    ({"ComparisonOperator": "LessThanLowerThreshold"}, "ValidationError", "enum value set"),
    ({"TreatMissingData": "sometimes"}, "ValidationError", "TreatMissingData is invalid"),
    ({"ActionLogLineCount": 5}, "ValidationError", "ActionLogLineRoleArn is required"),
    ({"ActionLogLineCount": 51, "ActionLogLineRoleArn": "arn:aws:iam::000000000000:role/r"},
     "ValidationError", "between 0 and 50"),
    ({"AlarmActions": ["not-an-arn"]}, "ValidationError", "Invalid arn syntax"),
    ({"Tags": [{"Key": f"k{i}", "Value": "v"} for i in range(51)]}, "ValidationError", "Tags"),
])
def test_bad_evaluation_members_are_refused(cw, change, code, text):
    with pytest.raises(cw.exceptions.ClientError) as e:
        cw.put_log_alarm(**log_alarm(**change))
    assert error(e)[0] == code and text in error(e)[1], error(e)
    assert described(cw) == []


@pytest.mark.parametrize("query, text", [
    ({"ScheduleConfiguration": {"ScheduleExpression": "cron(0 * * * ? *)", "StartTimeOffset": 300}},
     "rate() expressions"),
    ({"ScheduleConfiguration": {"ScheduleExpression": "rate(5 minutes)", "StartTimeOffset": 300,
                                "EndTimeOffset": 300}}, "less than StartTimeOffset"),
    ({"AggregationExpression": "x" * 2049}, "between 1 and 2048"),
    ({"LogGroupIdentifiers": [f"/g/{i}" for i in range(51)]}, "between 1 and 50"),
    ({"QueryString": "x" * 10_001}, "less than or equal to 10000"),
])
def test_bad_scheduled_query_configurations_are_refused(cw, query, text):
    alarm = log_alarm()
    alarm["ScheduledQueryConfiguration"].update(query)
    with pytest.raises(cw.exceptions.ClientError) as e:
        cw.put_log_alarm(**alarm)
    assert error(e)[0] == "ValidationError" and text in error(e)[1], error(e)


def test_missing_required_members_are_named(server, cw):
    alarm = log_alarm()
    del alarm["ScheduledQueryConfiguration"]["AggregationExpression"]
    status, _, raw = server.request(
        "POST", "/", body=json.dumps(alarm).encode(),
        headers={"Content-Type": "application/x-amz-json-1.0",
                 "X-Amz-Target": "GraniteServiceVersion20100801.PutLogAlarm",
                 "Authorization": "AWS4-HMAC-SHA256 Credential=AKID/20260101/us-east-1/monitoring/aws4_request, "
                                  "SignedHeaders=host, Signature=x"})
    assert status == 400
    answer = json.loads(raw)
    assert answer["__type"].endswith("#MissingRequiredParameterException"), answer
    assert "ScheduledQueryConfiguration.AggregationExpression" in answer["message"]
