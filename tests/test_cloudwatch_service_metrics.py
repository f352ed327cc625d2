"""The metrics Roto's services publish in CloudWatch's AWS/* namespaces, black-box with
boto3: Lambda's, SQS's (counts and sampled gauges), DynamoDB's, SNS's and EventBridge's,
read back with GetMetricStatistics and ListMetrics, and alarms on them that fire when the
server clock crosses their period (Lambda errors -> alarm -> SNS -> SQS)."""

from __future__ import annotations

import json
import time
from datetime import timedelta

import pytest

from cloudwatch_helpers import eventually, server_now, stats, wait_state
from lambda_helpers import ROLE, zip_of


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def function(client, name, body):
    lam = client("lambda")
    code = {"ZipFile": zip_of({"app.py": body})}
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE,
                        Handler="app.handler", Code=code)
    return lam


def test_lambda_invocations_errors_and_duration(server, client, cw):
    lam = function(client, "flaky", "def handler(event, context):\n"
                   "    if event.get('fail'):\n        raise ValueError('boom')\n    return 1\n")
    for fail in (False, False, True):
        lam.invoke(FunctionName="flaky", Payload=json.dumps({"fail": fail}))
    dims = {"FunctionName": "flaky"}
    assert stats(cw, server, "AWS/Lambda", "Invocations", dims)["Sum"] == 3.0
    errors = stats(cw, server, "AWS/Lambda", "Errors", dims, ("Sum", "SampleCount"))
    assert (errors["Sum"], errors["SampleCount"], errors["Unit"]) == (1.0, 3.0, "Count")
    duration = stats(cw, server, "AWS/Lambda", "Duration", dims, ("Maximum", "SampleCount"))
    assert duration["Unit"] == "Milliseconds" and duration["SampleCount"] == 3.0
    assert duration["Maximum"] > 0
    assert stats(cw, server, "AWS/Lambda", "ConcurrentExecutions", dims, ("Maximum",))["Maximum"] == 1.0
    assert stats(cw, server, "AWS/Lambda", "Invocations", {})["Sum"] == 3.0
    listed = cw.list_metrics(Namespace="AWS/Lambda", Dimensions=[{"Name": "FunctionName"}])["Metrics"]
    assert {m["MetricName"] for m in listed} == {
        "Invocations", "Errors", "Duration", "ConcurrentExecutions"}


def test_lambda_throttles_beyond_reserved_concurrency(server, client, cw):
    lam = function(client, "closed", "def handler(event, context):\n    return 1\n")
    lam.put_function_concurrency(FunctionName="closed", ReservedConcurrentExecutions=0)
    with pytest.raises(lam.exceptions.TooManyRequestsException) as e:
        lam.invoke(FunctionName="closed")
    attempts = e.value.response["ResponseMetadata"]["RetryAttempts"] + 1
    dims = {"FunctionName": "closed"}
    assert stats(cw, server, "AWS/Lambda", "Throttles", dims)["Sum"] == attempts
    assert stats(cw, server, "AWS/Lambda", "Invocations", dims) is None


def test_lambda_errors_alarm_notifies_sns_and_sqs_when_the_period_ends(server, client, cw):
    sqs, sns = client("sqs"), client("sns")
    url = sqs.create_queue(QueueName="pager")["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    topic = sns.create_topic(Name="ops")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn)
    lam = function(client, "broken", "def handler(event, context):\n    raise RuntimeError('no')\n")
    cw.put_metric_alarm(AlarmName="broken-errors", Namespace="AWS/Lambda", MetricName="Errors",
                        Dimensions=[{"Name": "FunctionName", "Value": "broken"}],
                        Statistic="Sum", Period=60, EvaluationPeriods=1, Threshold=1,
                        ComparisonOperator="GreaterThanOrEqualToThreshold",
                        TreatMissingData="notBreaching", AlarmActions=[topic])
    server.advance_clock(60)
    wait_state(cw, "broken-errors", "OK")
    for _ in range(2):
        assert lam.invoke(FunctionName="broken")["FunctionError"] == "Unhandled"
    server.advance_clock(60)
    a = wait_state(cw, "broken-errors", "ALARM")
    assert a["StateReason"].startswith("Threshold Crossed: 1 datapoint [2.0 (")
    deadline = time.time() + 10
    messages = []
    while not messages and time.time() < deadline:
        messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
    note = json.loads(json.loads(messages[0]["Body"])["Message"])
    assert note["AlarmName"] == "broken-errors" and note["NewStateValue"] == "ALARM"
    assert note["Trigger"]["Namespace"] == "AWS/Lambda"
    assert note["Trigger"]["Dimensions"] == [{"value": "broken", "name": "FunctionName"}]


def test_sqs_counts_and_gauges(server, client, cw):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="work")["QueueUrl"]
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=f"job-{i}")
    sqs.send_message_batch(QueueUrl=url, Entries=[{"Id": "a", "MessageBody": "abcd"}])
    got = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=2, VisibilityTimeout=600)["Messages"]
    sqs.delete_message(QueueUrl=url, ReceiptHandle=got[0]["ReceiptHandle"])
    sqs.receive_message(QueueUrl=sqs.create_queue(QueueName="idle")["QueueUrl"])
    dims = {"QueueName": "work"}
    assert stats(cw, server, "AWS/SQS", "NumberOfMessagesSent", dims)["Sum"] == 4.0
    size = stats(cw, server, "AWS/SQS", "SentMessageSize", dims, ("Maximum",))
    assert (size["Maximum"], size["Unit"]) == (5.0, "Bytes")
    assert stats(cw, server, "AWS/SQS", "NumberOfMessagesReceived", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/SQS", "NumberOfMessagesDeleted", dims)["Sum"] == 1.0
    assert stats(cw, server, "AWS/SQS", "NumberOfEmptyReceives", {"QueueName": "idle"})["Sum"] == 1.0
    server.advance_clock(60)  # a minute's gauges are read once it has ended
    visible = stats(cw, server, "AWS/SQS", "ApproximateNumberOfMessagesVisible", dims, ("Maximum",))
    assert visible["Maximum"] == 2.0
    in_flight = stats(cw, server, "AWS/SQS", "ApproximateNumberOfMessagesNotVisible", dims, ("Maximum",))
    assert in_flight["Maximum"] == 1.0
    age = stats(cw, server, "AWS/SQS", "ApproximateAgeOfOldestMessage", dims, ("Maximum",))
    assert age["Unit"] == "Seconds" and age["Maximum"] >= 0


def test_queue_depth_and_age_alarms_fire_as_the_clock_moves(server, client, cw):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="backlog")["QueueUrl"]
    dims = [{"Name": "QueueName", "Value": "backlog"}]
    cw.put_metric_alarm(AlarmName="deep", Namespace="AWS/SQS",
                        MetricName="ApproximateNumberOfMessagesVisible", Dimensions=dims,
                        Statistic="Maximum", Period=60, EvaluationPeriods=1, Threshold=2,
                        ComparisonOperator="GreaterThanThreshold")
    cw.put_metric_alarm(AlarmName="stale", Namespace="AWS/SQS",
                        MetricName="ApproximateAgeOfOldestMessage", Dimensions=dims,
                        Statistic="Maximum", Period=300, EvaluationPeriods=1, Threshold=600,
                        ComparisonOperator="GreaterThanThreshold")
    server.advance_clock(60)
    wait_state(cw, "deep", "OK")
    for i in range(3):
        sqs.send_message(QueueUrl=url, MessageBody=str(i))
    server.advance_clock(60)
    wait_state(cw, "deep", "ALARM")
    server.advance_clock(900)
    wait_state(cw, "stale", "ALARM")


def test_dynamodb_capacity_and_user_errors(server, client, cw):
    ddb = client("dynamodb")
    ddb.create_table(TableName="tab", BillingMode="PAY_PER_REQUEST",
                     KeySchema=[{"AttributeName": "k", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "k", "AttributeType": "S"}])
    ddb.put_item(TableName="tab", Item={"k": {"S": "a"}, "v": {"S": "x" * 1500}})
    ddb.get_item(TableName="tab", Key={"k": {"S": "a"}})
    ddb.get_item(TableName="tab", Key={"k": {"S": "a"}}, ConsistentRead=True)
    ddb.query(TableName="tab", KeyConditionExpression="k = :k",
              ExpressionAttributeValues={":k": {"S": "a"}})
    with pytest.raises(ddb.exceptions.ResourceNotFoundException):
        ddb.get_item(TableName="missing", Key={"k": {"S": "a"}})
    with pytest.raises(ddb.exceptions.ConditionalCheckFailedException):
        ddb.put_item(TableName="tab", Item={"k": {"S": "a"}}, ConditionExpression="attribute_not_exists(k)")
    dims = {"TableName": "tab"}
    assert stats(cw, server, "AWS/DynamoDB", "ConsumedWriteCapacityUnits", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/DynamoDB", "ConsumedReadCapacityUnits", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/DynamoDB", "UserErrors", {})["Sum"] == 1.0
    assert stats(cw, server, "AWS/DynamoDB", "ThrottledRequests", dims) is None


def test_sns_published_delivered_and_failed(server, client, cw):
    sns, sqs = client("sns"), client("sqs")
    topic = sns.create_topic(Name="news")["TopicArn"]
    url = sqs.create_queue(QueueName="reader")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn)
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=arn.replace(":reader", ":gone"))
    sns.publish(TopicArn=topic, Message="hello")
    sns.publish(TopicArn=topic, Message="world!")
    dims = {"TopicName": "news"}
    assert stats(cw, server, "AWS/SNS", "NumberOfMessagesPublished", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/SNS", "PublishSize", dims, ("Maximum",))["Maximum"] == 6.0
    delivered = eventually(lambda: stats(cw, server, "AWS/SNS", "NumberOfNotificationsDelivered", dims))
    assert delivered["Sum"] == 2.0
    failed = eventually(lambda: stats(cw, server, "AWS/SNS", "NumberOfNotificationsFailed", dims), 30)
    assert failed["Sum"] == 2.0


def test_eventbridge_rule_metrics(server, client, cw):
    events, sqs = client("events"), client("sqs")
    url = sqs.create_queue(QueueName="orders")["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="orders", EventPattern=json.dumps({"source": ["shop"]}))
    events.put_targets(Rule="orders", Targets=[{"Id": "q", "Arn": arn}])
    events.create_event_bus(Name="side")
    events.put_rule(Name="side-rule", EventBusName="side", EventPattern=json.dumps({"source": ["shop"]}))
    entries = [{"Source": "shop", "DetailType": "order", "Detail": "{}"}]
    events.put_events(Entries=entries * 2)
    events.put_events(Entries=[dict(entries[0], EventBusName="side")])
    dims = {"RuleName": "orders"}
    assert stats(cw, server, "AWS/Events", "MatchedEvents", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/Events", "TriggeredRules", dims)["Sum"] == 2.0
    assert stats(cw, server, "AWS/Events", "Invocations", dims)["Sum"] == 2.0
    side = {"EventBusName": "side", "RuleName": "side-rule"}
    assert stats(cw, server, "AWS/Events", "MatchedEvents", side)["Sum"] == 1.0
    assert stats(cw, server, "AWS/Events", "MatchedEvents", {})["Sum"] == 3.0


def test_reset_drops_published_metrics(server, client, cw):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName="gone")["QueueUrl"]
    sqs.send_message(QueueUrl=url, MessageBody="x")
    server.request("POST", "/_roto/reset")
    assert cw.list_metrics(Namespace="AWS/SQS")["Metrics"] == []


def logs_stream(client, group="app"):
    logs = client("logs")
    logs.create_log_group(logGroupName=group)
    logs.create_log_stream(logGroupName=group, logStreamName="s")
    return logs


def put_lines(logs, server, lines, group="app"):
    at = int(server_now(server).timestamp() * 1000)
    logs.put_log_events(logGroupName=group, logStreamName="s",
                        logEvents=[{"timestamp": at, "message": m} for m in lines])


def test_metric_filters_publish_counts_values_and_dimensions(server, client, cw):
    logs = logs_stream(client)
    logs.put_metric_filter(logGroupName="app", filterName="errors", filterPattern="ERROR",
                           metricTransformations=[{"metricName": "ErrorCount", "metricNamespace": "App",
                                                   "metricValue": "1", "unit": "Count"}])
    logs.put_metric_filter(logGroupName="app", filterName="latency",
                           filterPattern="{ $.latency > 0 }",
                           metricTransformations=[{"metricName": "Latency", "metricNamespace": "App",
                                                   "metricValue": "$.latency", "unit": "Milliseconds",
                                                   "dimensions": {"Route": "$.route"}}])
    logs.put_metric_filter(logGroupName="app", filterName="fatal", filterPattern="FATAL",
                           metricTransformations=[{"metricName": "Fatal", "metricNamespace": "App",
                                                   "metricValue": "1", "defaultValue": 0}])
    put_lines(logs, server, ["ERROR one", "fine", "ERROR two",
                             json.dumps({"route": "/a", "latency": 30}),
                             json.dumps({"route": "/a", "latency": 10}),
                             json.dumps({"route": "/b", "latency": 5})])
    errors = stats(cw, server, "App", "ErrorCount", {}, ("Sum", "SampleCount"), unit="Count")
    assert (errors["Sum"], errors["SampleCount"]) == (2.0, 2.0)
    a = stats(cw, server, "App", "Latency", {"Route": "/a"}, ("Average", "Maximum"))
    assert (a["Average"], a["Maximum"], a["Unit"]) == (20.0, 30.0, "Milliseconds")
    assert stats(cw, server, "App", "Latency", {"Route": "/b"}, ("Sum",))["Sum"] == 5.0
    fatal = stats(cw, server, "App", "Fatal", {}, ("Sum", "SampleCount"))
    assert (fatal["Sum"], fatal["SampleCount"]) == (0.0, 1.0)


def test_metric_filters_read_transformed_events_only_when_asked(server, client, cw):
    logs = logs_stream(client)
    logs.put_transformer(logGroupIdentifier="app", transformerConfig=[
        {"grok": {"match": "%{WORD:route} took %{NUMBER:ms}"}},
        {"typeConverter": {"entries": [{"key": "ms", "type": "integer"}]}}])
    logs.put_metric_filter(logGroupName="app", filterName="shaped", filterPattern="{ $.ms > 0 }",
                           applyOnTransformedLogs=True,
                           metricTransformations=[{"metricName": "Took", "metricNamespace": "Shaped",
                                                   "metricValue": "$.ms"}])
    logs.put_metric_filter(logGroupName="app", filterName="raw", filterPattern="took",
                           metricTransformations=[{"metricName": "Raw", "metricNamespace": "Shaped",
                                                   "metricValue": "1"}])
    logs.put_metric_filter(logGroupName="app", filterName="blind", filterPattern="{ $.ms > 0 }",
                           metricTransformations=[{"metricName": "Blind", "metricNamespace": "Shaped",
                                                   "metricValue": "1", "defaultValue": 0}])
    put_lines(logs, server, ["home took 30", "cart took 10"])
    took = stats(cw, server, "Shaped", "Took", {}, ("Sum", "SampleCount"))
    assert (took["Sum"], took["SampleCount"]) == (40.0, 2.0)
    assert stats(cw, server, "Shaped", "Raw", {}, ("Sum",))["Sum"] == 2.0
    assert stats(cw, server, "Shaped", "Blind", {}, ("Sum",))["Sum"] == 0.0


def test_metric_filter_alarm_fires_on_the_clock(server, client, cw):
    logs = logs_stream(client)
    logs.put_metric_filter(logGroupName="app", filterName="errors", filterPattern="ERROR",
                           metricTransformations=[{"metricName": "ErrorCount", "metricNamespace": "App",
                                                   "metricValue": "1"}])
    cw.put_metric_alarm(AlarmName="log-errors", Namespace="App", MetricName="ErrorCount",
                        Statistic="Sum", Period=60, EvaluationPeriods=1, Threshold=2,
                        ComparisonOperator="GreaterThanOrEqualToThreshold")
    put_lines(logs, server, ["ERROR a", "ERROR b"])
    server.advance_clock(60)
    wait_state(cw, "log-errors", "ALARM")


def test_embedded_metric_format_publishes_its_metrics(server, client, cw):
    logs = logs_stream(client)
    at = int(server_now(server).timestamp() * 1000)
    emf = {"_aws": {"Timestamp": at, "CloudWatchMetrics": [{
        "Namespace": "Shop", "Dimensions": [["Service"], ["Service", "Region"], []],
        "Metrics": [{"Name": "Latency", "Unit": "Milliseconds"},
                    {"Name": "Orders", "Unit": "Count", "StorageResolution": 1}]}]},
        "Service": "cart", "Region": "eu", "Latency": [12, 18], "Orders": 3, "requestId": "r1"}
    put_lines(logs, server, [json.dumps(emf), json.dumps({"_aws": "not a directive"}),
                             '{"_aws": broken'])
    lat = stats(cw, server, "Shop", "Latency", {"Service": "cart"}, ("Sum", "SampleCount"))
    assert (lat["Sum"], lat["SampleCount"], lat["Unit"]) == (30.0, 2.0, "Milliseconds")
    both = stats(cw, server, "Shop", "Latency", {"Service": "cart", "Region": "eu"}, ("Maximum",))
    assert both["Maximum"] == 18.0
    assert stats(cw, server, "Shop", "Orders", {}, ("Sum",))["Sum"] == 3.0
    listed = cw.list_metrics(Namespace="Shop", MetricName="Orders")["Metrics"]
    assert len(listed) == 3
    now = server_now(server)
    high = cw.get_metric_statistics(Namespace="Shop", MetricName="Orders",
                                    Dimensions=[{"Name": "Service", "Value": "cart"}],
                                    StartTime=now - timedelta(minutes=5), EndTime=now + timedelta(minutes=1),
                                    Period=1, Statistics=["Sum"])["Datapoints"]
    assert [p["Sum"] for p in high] == [3.0]


def test_lambda_emf_output_becomes_metrics(server, client, cw):
    lam = function(client, "emf", "import json\ndef handler(event, context):\n"
                   "    print(json.dumps({'_aws': {'CloudWatchMetrics': [{'Namespace': 'Fn',"
                   " 'Dimensions': [['Kind']], 'Metrics': [{'Name': 'Work'}]}]}, 'Kind': 'x', 'Work': 7}))\n")
    lam.invoke(FunctionName="emf")
    got = eventually(lambda: stats(cw, server, "Fn", "Work", {"Kind": "x"}))
    assert got["Sum"] == 7.0
