"""CloudWatch metric alarms, black-box with boto3: PutMetricAlarm and its checks, evaluation
on the server clock (Period, EvaluationPeriods, DatapointsToAlarm, comparison operators,
TreatMissingData), reasons and reason data as AWS writes them, SetAlarmState, history,
DescribeAlarms filters and paging, DescribeAlarmsForMetric, actions to SNS and Lambda,
Enable/DisableAlarmActions, tags, and the state change event on the default bus."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from cloudwatch_helpers import error, server_now, wait_state
from lambda_helpers import ROLE as LAMBDA_ROLE
from lambda_helpers import zip_of

ACCOUNT = "000000000000"


@pytest.fixture
def cw(client):
    return client("cloudwatch")


@pytest.fixture
def sqs(client):
    return client("sqs")


def alarm(cw, name="high", **kw):
    params = {"AlarmName": name, "Namespace": "App", "MetricName": "Errors", "Statistic": "Sum",
              "Period": 60, "EvaluationPeriods": 1, "Threshold": 3.0,
              "ComparisonOperator": "GreaterThanThreshold"}
    params.update(kw)
    cw.put_metric_alarm(**params)


def put(cw, server, value, name="Errors"):
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": name, "Value": value, "Timestamp": server_now(server)}])


def describe(cw, name):
    return cw.describe_alarms(AlarmNames=[name])["MetricAlarms"][0]


def queue(sqs, name="alarms"):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def topic_to_queue(client, sqs, name="ops"):
    sns = client("sns")
    topic = sns.create_topic(Name=name)["TopicArn"]
    url, arn = queue(sqs, f"{name}-q")
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    return topic, url


def receive(sqs, url, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        r = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1)
        if r.get("Messages"):
            m = r["Messages"][0]
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            return json.loads(m["Body"])
    raise AssertionError("no message")


# --- creating and describing -------------------------------------------------------------

def test_a_new_alarm_has_insufficient_data_and_a_creation_history(cw):
    alarm(cw, Dimensions=[{"Name": "Svc", "Value": "api"}], AlarmDescription="too many errors",
          Unit="Count", TreatMissingData="notBreaching")
    a = describe(cw, "high")
    assert a["AlarmArn"] == f"arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:high"
    assert a["StateValue"] == "INSUFFICIENT_DATA"
    assert a["StateReason"] == "Unchecked: Initial alarm creation"
    assert a["ActionsEnabled"] is True and a["AlarmActions"] == [] and a["OKActions"] == []
    assert a["Dimensions"] == [{"Name": "Svc", "Value": "api"}]
    assert (a["Threshold"], a["Period"], a["Unit"], a["TreatMissingData"]) == (3.0, 60, "Count", "notBreaching")
    [item] = cw.describe_alarm_history(AlarmName="high")["AlarmHistoryItems"]
    assert item["HistoryItemType"] == "ConfigurationUpdate"
    assert item["HistorySummary"] == 'Alarm "high" created'
    data = json.loads(item["HistoryData"])
    assert data["type"] == "Create" and data["createdAlarm"]["threshold"] == 3.0
    alarm(cw, Threshold=5.0)
    assert describe(cw, "high")["Threshold"] == 5.0
    items = cw.describe_alarm_history(AlarmName="high")["AlarmHistoryItems"]
    assert items[0]["HistorySummary"] == 'Alarm "high" updated'
    assert json.loads(items[0]["HistoryData"])["originalAlarm"]["threshold"] == 3.0


@pytest.mark.parametrize("kw,code,message", [
    ({"DatapointsToAlarm": 2}, "ValidationError",
     "DatapointsToAlarm must be less than or equal to EvaluationPeriods"),
    ({"Period": 45}, "ValidationError", "Period must be 10, 30 or a multiple of 60"),
    ({"Period": 60, "EvaluationPeriods": 1441}, "ValidationError",
     "Metrics cannot be checked across more than a day (EvaluationPeriods * Period must be <= 86400)"),
    ({"TreatMissingData": "sometimes"}, "ValidationError",
     "Option sometimes is not supported. Supported options for parameter TreatMissingData are: missing, ignore, breaching, notBreaching."),
    ({"AlarmActions": ["not-an-arn"]}, "ValidationError", "Invalid arn syntax: not-an-arn"),
    ({"ExtendedStatistic": "p99"}, "InvalidParameterCombination",
     "Exactly one of Statistic and ExtendedStatistic must be set."),
])
def test_put_metric_alarm_refuses_what_aws_refuses(cw, kw, code, message):
    with pytest.raises(ClientError) as e:
        alarm(cw, **kw)
    assert error(e) == (code, message, 400)


def test_threshold_is_required_for_threshold_operators(cw):
    with pytest.raises(ClientError) as e:
        cw.put_metric_alarm(AlarmName="x", Namespace="App", MetricName="m", Statistic="Sum", Period=60,
                            EvaluationPeriods=1, ComparisonOperator="GreaterThanThreshold")
    assert error(e) == ("MissingParameter", "The parameter Threshold is required.", 400)


def test_describe_alarms_filters_and_pages(cw):
    topic = f"arn:aws:sns:us-east-1:{ACCOUNT}:pager"
    for name in ("api-errors", "api-latency", "db-cpu"):
        alarm(cw, name, AlarmActions=[topic] if name.startswith("api") else [])
    names = lambda r: [a["AlarmName"] for a in r["MetricAlarms"]]  # noqa: E731
    assert names(cw.describe_alarms()) == ["api-errors", "api-latency", "db-cpu"]
    assert names(cw.describe_alarms(AlarmNamePrefix="api-")) == ["api-errors", "api-latency"]
    assert names(cw.describe_alarms(ActionPrefix="arn:aws:sns")) == ["api-errors", "api-latency"]
    assert names(cw.describe_alarms(StateValue="OK")) == []
    assert cw.describe_alarms(AlarmTypes=["CompositeAlarm"])["MetricAlarms"] == []
    first = cw.describe_alarms(MaxRecords=2)
    assert names(first) == ["api-errors", "api-latency"]
    rest = cw.describe_alarms(MaxRecords=2, NextToken=first["NextToken"])
    assert names(rest) == ["db-cpu"] and "NextToken" not in rest
    with pytest.raises(ClientError) as e:
        cw.describe_alarms(AlarmNames=["a"], AlarmNamePrefix="a")
    assert error(e)[0] == "InvalidParameterCombination"
    with pytest.raises(ClientError) as e:
        cw.describe_alarms(NextToken="bogus")
    assert error(e)[0] == "InvalidNextToken"
    cw.delete_alarms(AlarmNames=["db-cpu", "never-existed"])
    assert names(cw.describe_alarms()) == ["api-errors", "api-latency"]


def test_describe_alarms_for_metric_matches_metric_and_filters(cw):
    dims = [{"Name": "Svc", "Value": "api"}]
    alarm(cw, "a", Dimensions=dims)
    alarm(cw, "b", Dimensions=dims, Statistic="Average")
    alarm(cw, "c", MetricName="Other")
    found = cw.describe_alarms_for_metric(Namespace="App", MetricName="Errors", Dimensions=dims)
    assert sorted(a["AlarmName"] for a in found["MetricAlarms"]) == ["a", "b"]
    found = cw.describe_alarms_for_metric(Namespace="App", MetricName="Errors", Dimensions=dims,
                                          Statistic="Average")
    assert [a["AlarmName"] for a in found["MetricAlarms"]] == ["b"]


# --- evaluation on the clock -------------------------------------------------------------

def test_a_breaching_datapoint_alarms_once_the_period_ends(server, cw):
    alarm(cw)
    put(cw, server, 5)
    server.advance_clock(60)
    a = wait_state(cw, "high", "ALARM")
    assert a["StateReason"].startswith("Threshold Crossed: 1 datapoint [5.0 (")
    assert a["StateReason"].endswith(")] was greater than the threshold (3.0).")
    data = json.loads(a["StateReasonData"])
    assert data["version"] == "1.0" and data["statistic"] == "Sum" and data["period"] == 60
    assert data["recentDatapoints"] == [5.0] and data["threshold"] == 3.0
    assert data["evaluatedDatapoints"][0]["value"] == 5.0
    assert data["queryDate"].endswith("+0000")
    server.advance_clock(60)
    a = wait_state(cw, "high", "INSUFFICIENT_DATA")
    assert a["StateReason"] == "Insufficient Data: 1 datapoint was unknown."
    items = cw.describe_alarm_history(AlarmName="high", HistoryItemType="StateUpdate")["AlarmHistoryItems"]
    assert [i["HistorySummary"] for i in items] == [
        "Alarm updated from ALARM to INSUFFICIENT_DATA", "Alarm updated from INSUFFICIENT_DATA to ALARM"]
    oldest = cw.describe_alarm_history(AlarmName="high", HistoryItemType="StateUpdate",
                                       ScanBy="TimestampAscending")["AlarmHistoryItems"][0]
    assert json.loads(oldest["HistoryData"])["newState"]["stateValue"] == "ALARM"


def test_m_out_of_n_and_treat_missing_data(server, cw):
    alarm(cw, "m-of-n", EvaluationPeriods=3, DatapointsToAlarm=2, TreatMissingData="notBreaching")
    alarm(cw, "breaching", MetricName="Quiet", TreatMissingData="breaching")
    alarm(cw, "ignore", MetricName="Quiet", TreatMissingData="ignore")
    put(cw, server, 9)
    server.advance_clock(60)
    wait_state(cw, "m-of-n", "OK")
    put(cw, server, 8)
    server.advance_clock(60)
    a = wait_state(cw, "m-of-n", "ALARM")
    assert a["StateReason"].startswith("Threshold Crossed: 2 out of the last 3 datapoints [8.0 (")
    assert a["StateReason"].endswith("(minimum 2 datapoints for OK -> ALARM transition).")
    b = wait_state(cw, "breaching", "ALARM")
    assert b["StateReason"] == ("Threshold Crossed: no datapoints were received for 1 period and "
                                "1 missing datapoint was treated as [Breaching].")
    assert describe(cw, "ignore")["StateValue"] == "INSUFFICIENT_DATA"


@pytest.mark.parametrize("op,value,state", [
    ("GreaterThanOrEqualToThreshold", 3, "ALARM"),
    ("GreaterThanThreshold", 3, "OK"),
    ("LessThanThreshold", 2, "ALARM"),
    ("LessThanOrEqualToThreshold", 4, "OK"),
])
def test_every_comparison_operator(server, cw, op, value, state):
    alarm(cw, ComparisonOperator=op)
    put(cw, server, value)
    server.advance_clock(60)
    wait_state(cw, "high", state)


def test_high_resolution_alarms_evaluate_every_period(server, cw):
    alarm(cw, Period=10)
    cw.put_metric_data(Namespace="App", MetricData=[
        {"MetricName": "Errors", "Value": 7, "Timestamp": server_now(server), "StorageResolution": 1}])
    server.advance_clock(10)
    wait_state(cw, "high", "ALARM")


# --- SetAlarmState, actions and events ---------------------------------------------------

def test_set_alarm_state_notifies_the_sns_topic_as_aws_does(client, cw, sqs):
    topic, url = topic_to_queue(client, sqs)
    alarm(cw, AlarmActions=[topic], Dimensions=[{"Name": "Svc", "Value": "api"}])
    cw.set_alarm_state(AlarmName="high", StateValue="ALARM", StateReason="testing",
                       StateReasonData='{"k": 1}')
    a = describe(cw, "high")
    assert (a["StateValue"], a["StateReason"], a["StateReasonData"]) == ("ALARM", "testing", '{"k": 1}')
    envelope = receive(sqs, url)
    assert envelope["Subject"] == 'ALARM: "high" in US East (N. Virginia)'
    message = json.loads(envelope["Message"])
    assert message["AlarmName"] == "high" and message["NewStateValue"] == "ALARM"
    assert message["OldStateValue"] == "INSUFFICIENT_DATA" and message["NewStateReason"] == "testing"
    assert message["Region"] == "US East (N. Virginia)" and message["AWSAccountId"] == ACCOUNT
    assert message["AlarmArn"] == a["AlarmArn"] and message["AlarmActions"] == [topic]
    trigger = message["Trigger"]
    assert trigger["MetricName"] == "Errors" and trigger["Namespace"] == "App"
    assert trigger["Statistic"] == "SUM" and trigger["StatisticType"] == "Statistic"
    assert trigger["Dimensions"] == [{"value": "api", "name": "Svc"}]
    assert trigger["ComparisonOperator"] == "GreaterThanThreshold" and trigger["Threshold"] == 3.0
    actions = cw.describe_alarm_history(AlarmName="high", HistoryItemType="Action")
    deadline = time.time() + 5
    while not actions["AlarmHistoryItems"] and time.time() < deadline:
        time.sleep(0.05)
        actions = cw.describe_alarm_history(AlarmName="high", HistoryItemType="Action")
    assert actions["AlarmHistoryItems"][0]["HistorySummary"] == f"Successfully executed action {topic}"


def test_disabled_actions_do_not_run(server, client, cw, sqs):
    topic, url = topic_to_queue(client, sqs)
    alarm(cw, OKActions=[topic])
    cw.disable_alarm_actions(AlarmNames=["high"])
    assert describe(cw, "high")["ActionsEnabled"] is False
    cw.set_alarm_state(AlarmName="high", StateValue="OK", StateReason="quiet")
    assert sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages") is None
    cw.enable_alarm_actions(AlarmNames=["high"])
    cw.set_alarm_state(AlarmName="high", StateValue="ALARM", StateReason="a")
    cw.set_alarm_state(AlarmName="high", StateValue="OK", StateReason="b")
    assert json.loads(receive(sqs, url)["Message"])["NewStateReason"] == "b"


def test_lambda_actions_receive_the_alarm_event(server, client, cw):
    lam = client("lambda")
    code = {"ZipFile": zip_of({"app.py": "import json\ndef handler(event, context):\n    print('EVENT ' + json.dumps(event))\n"})}
    fn = lam.create_function(FunctionName="on-alarm", Runtime="python3.12", Role=LAMBDA_ROLE,
                             Handler="app.handler", Code=code)["FunctionArn"]
    alarm(cw, AlarmActions=[fn])
    cw.set_alarm_state(AlarmName="high", StateValue="ALARM", StateReason="paged")
    server.wait_for_delivery(service="cloudwatch", target=fn, outcome="delivered", timeout=15)
    logs = client("logs")
    deadline = time.time() + 15
    events = []
    while not events and time.time() < deadline:
        try:
            events = [e["message"] for e in logs.filter_log_events(logGroupName="/aws/lambda/on-alarm")["events"]
                      if e["message"].startswith("EVENT ")]
        except ClientError:
            pass
        time.sleep(0.2)
    event = json.loads(events[0][len("EVENT "):])
    assert event["source"] == "aws.cloudwatch" and event["alarmArn"].endswith(":alarm:high")
    assert event["accountId"] == ACCOUNT and event["region"] == "us-east-1"
    data = event["alarmData"]
    assert data["alarmName"] == "high"
    assert data["state"]["value"] == "ALARM" and data["state"]["reason"] == "paged"
    assert data["previousState"]["value"] == "INSUFFICIENT_DATA"
    [metric] = data["configuration"]["metrics"]
    assert metric["metricStat"]["metric"] == {"namespace": "App", "name": "Errors", "dimensions": {}}
    assert metric["metricStat"]["stat"] == "Sum" and metric["returnData"] is True


def test_state_changes_reach_the_default_event_bus(client, cw, sqs):
    events = client("events")
    url, arn = queue(sqs, "events")
    events.put_rule(Name="alarms", EventPattern=json.dumps({"source": ["aws.cloudwatch"],
                                                           "detail-type": ["CloudWatch Alarm State Change"]}))
    events.put_targets(Rule="alarms", Targets=[{"Id": "q", "Arn": arn}])
    alarm(cw)
    cw.set_alarm_state(AlarmName="high", StateValue="ALARM", StateReason="r")
    event = receive(sqs, url)
    assert event["resources"] == [f"arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:high"]
    assert event["detail"]["alarmName"] == "high"
    assert event["detail"]["state"]["value"] == "ALARM"
    assert event["detail"]["previousState"]["value"] == "INSUFFICIENT_DATA"


def test_set_alarm_state_errors(cw):
    with pytest.raises(ClientError) as e:
        cw.set_alarm_state(AlarmName="nope", StateValue="OK", StateReason="r")
    assert error(e) == ("ResourceNotFound", "Alarm nope not found", 404)
    alarm(cw)
    with pytest.raises(ClientError) as e:
        cw.set_alarm_state(AlarmName="high", StateValue="OK", StateReason="r", StateReasonData="{nope")
    assert error(e)[0] == "InvalidFormat"


# --- tags --------------------------------------------------------------------------------

def test_alarm_tags(cw):
    alarm(cw, Tags=[{"Key": "team", "Value": "a"}])
    arn = describe(cw, "high")["AlarmArn"]
    cw.tag_resource(ResourceARN=arn, Tags=[{"Key": "env", "Value": "dev"}, {"Key": "team", "Value": "b"}])
    tags = cw.list_tags_for_resource(ResourceARN=arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "dev"), ("team", "b")]
    cw.untag_resource(ResourceARN=arn, TagKeys=["team"])
    assert cw.list_tags_for_resource(ResourceARN=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    with pytest.raises(ClientError) as e:
        cw.list_tags_for_resource(ResourceARN=arn.replace(":high", ":missing"))
    assert error(e)[0] == "ResourceNotFoundException"


# --- composite alarms --------------------------------------------------------------------

def test_composite_alarms_follow_their_rule(client, cw, sqs):
    topic, url = topic_to_queue(client, sqs)
    alarm(cw, "cpu")
    alarm(cw, "deploying")
    cw.put_composite_alarm(AlarmName="page", AlarmActions=[topic],
                           AlarmRule='ALARM("cpu") AND NOT ALARM(deploying)')
    [composite] = cw.describe_alarms(AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]
    assert composite["StateValue"] == "OK" and composite["AlarmRule"] == 'ALARM("cpu") AND NOT ALARM(deploying)'
    assert composite["AlarmArn"] == f"arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:page"
    cw.set_alarm_state(AlarmName="cpu", StateValue="ALARM", StateReason="hot")
    page = cw.describe_alarms(AlarmNames=["page"], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]
    assert page["StateValue"] == "ALARM"
    cpu_arn = f"arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:cpu"
    assert page["StateReason"].startswith(f"{cpu_arn} transitioned to ALARM at ")
    assert json.loads(page["StateReasonData"])["triggeringAlarms"][0]["arn"] == cpu_arn
    message = json.loads(receive(sqs, url)["Message"])
    assert message["AlarmName"] == "page" and message["AlarmRule"].startswith('ALARM("cpu")')
    assert "Trigger" not in message
    cw.set_alarm_state(AlarmName="deploying", StateValue="ALARM", StateReason="rollout")
    assert cw.describe_alarms(AlarmNames=["page"], AlarmTypes=["CompositeAlarm"])["CompositeAlarms"][0]["StateValue"] == "OK"
    names = lambda r: sorted(a["AlarmName"] for a in r["MetricAlarms"] + r["CompositeAlarms"])  # noqa: E731
    assert names(cw.describe_alarms(ChildrenOfAlarmName="page")) == ["cpu", "deploying"]
    assert names(cw.describe_alarms(ParentsOfAlarmName="cpu")) == ["page"]
    with pytest.raises(ClientError) as e:
        cw.describe_alarms(ParentsOfAlarmName="cpu", StateValue="OK")
    assert error(e)[0] == "InvalidParameterCombination"
    items = cw.describe_alarm_history(AlarmName="page", AlarmTypes=["CompositeAlarm"],
                                      HistoryItemType="StateUpdate")["AlarmHistoryItems"]
    assert [i["AlarmType"] for i in items] == ["CompositeAlarm"] * 3


def test_composite_rules_with_constants_and_arns(cw):
    alarm(cw, "a")
    cw.put_composite_alarm(AlarmName="always", AlarmRule="TRUE OR ALARM(a)")
    cw.put_composite_alarm(AlarmName="by-arn",
                           AlarmRule=f"INSUFFICIENT_DATA(arn:aws:cloudwatch:us-east-1:{ACCOUNT}:alarm:a)")
    states = {a["AlarmName"]: a["StateValue"]
              for a in cw.describe_alarms(AlarmTypes=["CompositeAlarm"])["CompositeAlarms"]}
    assert states == {"always": "ALARM", "by-arn": "ALARM"}


@pytest.mark.parametrize("rule,message", [
    ("ALARM(missing)", "Could not save the composite alarm as alarms [missing] in the alarm rule do not exist"),
    ("ALARM(a) AND", "Error in alarm rule: expected ALARM, OK, INSUFFICIENT_DATA, TRUE, FALSE, NOT or '(' at character 13."),
    ("ALARM(c)", "A composite alarm cannot reference itself in its alarm rule."),
])
def test_composite_rules_are_checked(cw, rule, message):
    alarm(cw, "a")
    with pytest.raises(ClientError) as e:
        cw.put_composite_alarm(AlarmName="c", AlarmRule=rule)
    assert error(e) == ("ValidationError", message, 400)


def test_delete_alarms_refuses_children_of_a_composite_alarm(cw):
    alarm(cw, "a")
    alarm(cw, "b")
    alarm(cw, "c")
    cw.put_composite_alarm(AlarmName="parent", AlarmRule="ALARM(a) OR ALARM(b)")
    with pytest.raises(ClientError) as e:
        cw.delete_alarms(AlarmNames=["a", "c"])
    assert error(e) == ("ValidationError", "Cannot delete a as there are composite alarm(s) depending on it.", 400)
    with pytest.raises(ClientError) as e:
        cw.delete_alarms(AlarmNames=["a", "b"])
    assert error(e)[1] == "Cannot delete a,b as there are composite alarm(s) depending on them."
    names = {a["AlarmName"] for a in cw.describe_alarms(AlarmTypes=["MetricAlarm"])["MetricAlarms"]}
    assert names == {"a", "b", "c"}  # nothing was deleted
    cw.delete_alarms(AlarmNames=["parent", "a"])  # the parent goes in the same call
    cw.delete_alarms(AlarmNames=["b"])
    names = {a["AlarmName"] for a in cw.describe_alarms(AlarmTypes=["MetricAlarm"])["MetricAlarms"]}
    assert names == {"c"}
