"""EventBridge black-box tests: buses, rules, targets, PutEvents with deliveries to SQS, SNS,
Lambda and CloudWatch Logs (asserted by receiving them and through /_roto/traces),
input transformation, TestEventPattern, scheduled-rule validation, tags and error paths."""

from __future__ import annotations

import io
import json
import time
import zipfile

import pytest
from botocore.exceptions import ClientError

ACCOUNT = "000000000000"
PATTERN = json.dumps({"source": ["shop"], "detail-type": ["OrderPlaced"]})


@pytest.fixture
def events(client):
    return client("events")


@pytest.fixture
def sqs(client):
    return client("sqs")


def queue(sqs, name="target"):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def receive(sqs, url, wait=5):
    messages = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=wait, MaxNumberOfMessages=10).get("Messages", [])
    return [m["Body"] for m in messages]


def delivery_to(server, target, timeout=5.0):
    """The last finished delivery by EventBridge to `target` (waiting for one)."""
    deadline = time.monotonic() + timeout
    while time.monotonic() < deadline:
        found = [e for e in server.traces(kind="delivery", service="events", wait=1)
                 if e.get("target") == target and e.get("outcome") != "retrying"]
        if found:
            return found[-1]
        time.sleep(0.05)
    raise AssertionError(f"no delivery to {target}: {server.traces(kind='delivery')}")


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


def order(detail=None, bus=None, **extra):
    entry = {"Source": "shop", "DetailType": "OrderPlaced", "Detail": json.dumps(detail or {"id": "o-1"})}
    if bus:
        entry["EventBusName"] = bus
    entry.update(extra)
    return entry


def rule_to_queue(events, sqs, pattern=PATTERN, bus=None, **target):
    url, arn = queue(sqs)
    bus_args = {"EventBusName": bus} if bus else {}
    events.put_rule(Name="to-queue", EventPattern=pattern, **bus_args)
    out = events.put_targets(Rule="to-queue", Targets=[{"Id": "q", "Arn": arn, **target}], **bus_args)
    assert out["FailedEntryCount"] == 0
    return url, arn


# Buses


def test_default_bus_exists_and_custom_buses_are_created_listed_and_deleted(events):
    default = events.describe_event_bus()
    assert default["Name"] == "default"
    assert default["Arn"] == f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/default"
    arn = events.create_event_bus(Name="orders", Description="order events")["EventBusArn"]
    assert arn == f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/orders"
    described = events.describe_event_bus(Name=arn)
    assert described["Name"] == "orders" and described["Description"] == "order events"
    assert "CreationTime" in described
    names = [b["Name"] for b in events.list_event_buses()["EventBuses"]]
    assert names == ["default", "orders"]
    assert [b["Name"] for b in events.list_event_buses(NamePrefix="ord")["EventBuses"]] == ["orders"]
    events.put_rule(Name="r", EventPattern=PATTERN, EventBusName="orders")
    with pytest.raises(ClientError) as e:
        events.delete_event_bus(Name="orders")
    assert error(e) == ("ValidationException", "EventBus can't be deleted since it has rules.")
    events.delete_rule(Name="r", EventBusName="orders")
    events.delete_event_bus(Name="orders")
    events.delete_event_bus(Name="orders")
    with pytest.raises(ClientError) as e:
        events.describe_event_bus(Name="orders")
    assert error(e) == ("ResourceNotFoundException", "Event bus orders does not exist.")


def test_update_event_bus_changes_the_description(events):
    events.create_event_bus(Name="u", Description="old")
    out = events.update_event_bus(Name="u", Description="new")
    assert out["Name"] == "u" and out["Description"] == "new"
    assert events.describe_event_bus(Name="u")["Description"] == "new"
    with pytest.raises(ClientError) as e:
        events.update_event_bus(Name="missing", Description="x")
    assert error(e) == ("ResourceNotFoundException", "Event bus missing does not exist.")


def test_fifo_queue_targets_get_the_message_group(events, sqs):
    url = sqs.create_queue(QueueName="t.fifo", Attributes={"FifoQueue": "true"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    events.put_rule(Name="fifo", EventPattern=PATTERN)
    events.put_targets(Rule="fifo", Targets=[{"Id": "q", "Arn": arn, "SqsParameters": {"MessageGroupId": "g1"}}])
    events.put_events(Entries=[order({"n": 1}), order({"n": 2})])
    messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=5,
                                   AttributeNames=["MessageGroupId"])["Messages"]
    assert [json.loads(m["Body"])["detail"]["n"] for m in messages] == [1, 2]
    assert messages[0]["Attributes"]["MessageGroupId"] == "g1"


def test_bus_errors(events):
    events.create_event_bus(Name="dup")
    with pytest.raises(ClientError) as e:
        events.create_event_bus(Name="dup")
    assert error(e) == ("ResourceAlreadyExistsException", "Event bus dup already exists.")
    with pytest.raises(ClientError) as e:
        events.delete_event_bus(Name="default")
    assert error(e) == ("ValidationException", "Cannot delete event bus default.")
    with pytest.raises(ClientError) as e:
        events.create_event_bus(Name="bad name!")
    assert e.value.response["Error"]["Code"] == "ValidationException"


def test_list_event_buses_paginates(events):
    for i in range(3):
        events.create_event_bus(Name=f"bus-{i}")
    first = events.list_event_buses(Limit=2)
    assert [b["Name"] for b in first["EventBuses"]] == ["default", "bus-0"]
    rest = events.list_event_buses(Limit=2, NextToken=first["NextToken"])
    assert [b["Name"] for b in rest["EventBuses"]] == ["bus-1", "bus-2"]
    assert "NextToken" not in rest


# Rules


def test_put_rule_then_describe_and_list(events):
    arn = events.put_rule(Name="r1", EventPattern=PATTERN, Description="orders")["RuleArn"]
    assert arn == f"arn:aws:events:us-east-1:{ACCOUNT}:rule/r1"
    rule = events.describe_rule(Name="r1")
    assert rule["State"] == "ENABLED" and rule["EventPattern"] == PATTERN
    assert rule["EventBusName"] == "default" and rule["Description"] == "orders"
    assert rule["CreatedBy"] == ACCOUNT
    events.disable_rule(Name="r1")
    assert events.describe_rule(Name="r1")["State"] == "DISABLED"
    events.enable_rule(Name="r1")
    assert events.describe_rule(Name="r1")["State"] == "ENABLED"
    events.create_event_bus(Name="custom")
    custom = events.put_rule(Name="r1", EventPattern=PATTERN, EventBusName="custom")["RuleArn"]
    assert custom == f"arn:aws:events:us-east-1:{ACCOUNT}:rule/custom/r1"
    assert [r["Name"] for r in events.list_rules(EventBusName="custom")["Rules"]] == ["r1"]


def test_list_rules_filters_by_prefix_and_paginates(events):
    for name in ["a-1", "a-2", "a-3", "b-1"]:
        events.put_rule(Name=name, EventPattern=PATTERN)
    assert [r["Name"] for r in events.list_rules(NamePrefix="a-")["Rules"]] == ["a-1", "a-2", "a-3"]
    page = events.list_rules(Limit=3)
    assert len(page["Rules"]) == 3 and "NextToken" in page
    rest = events.list_rules(Limit=3, NextToken=page["NextToken"])
    assert [r["Name"] for r in rest["Rules"]] == ["b-1"]


def test_rule_errors(events):
    with pytest.raises(ClientError) as e:
        events.describe_rule(Name="missing")
    assert error(e) == ("ResourceNotFoundException", "Rule missing does not exist on EventBus default.")
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="nothing")
    assert error(e) == ("ValidationException", "Parameter(s) EventPattern or ScheduleExpression must be specified.")
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="bad", EventPattern='{"source": "shop"}')
    code, message = error(e)
    assert code == "InvalidEventPatternException" and message.startswith("Event pattern is not valid. Reason: ")
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="bad", EventPattern="{not json")
    assert error(e)[0] == "InvalidEventPatternException"
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="x", EventPattern=PATTERN, EventBusName="nope")
    assert error(e) == ("ResourceNotFoundException", "Event bus nope does not exist.")
    with pytest.raises(ClientError) as e:
        events.enable_rule(Name="missing")
    assert error(e)[0] == "ResourceNotFoundException"
    events.delete_rule(Name="never-existed")


def test_rule_with_targets_cannot_be_deleted_until_they_are_removed(events, sqs):
    rule_to_queue(events, sqs)
    with pytest.raises(ClientError) as e:
        events.delete_rule(Name="to-queue")
    assert error(e) == ("ValidationException", "Rule can't be deleted since it has targets.")
    out = events.remove_targets(Rule="to-queue", Ids=["q"])
    assert out["FailedEntryCount"] == 0 and out["FailedEntries"] == []
    events.delete_rule(Name="to-queue")
    assert events.list_rules()["Rules"] == []


def test_schedule_expressions_are_validated(events):
    for ok in ["rate(1 minute)", "rate(5 minutes)", "rate(2 hours)", "rate(1 day)",
               "cron(0 12 * * ? *)", "cron(0/15 * ? * MON-FRI *)", "cron(0 8 1 * ? 2030)"]:
        events.put_rule(Name="s", ScheduleExpression=ok)
        assert events.describe_rule(Name="s")["ScheduleExpression"] == ok
    for bad in ["rate(1 minutes)", "rate(5 minute)", "rate(0 minutes)", "rate(x minutes)", "every minute",
                "cron(0 12 * * *)", "cron(0 12 * * * *)", "cron(61 * * * ? *)"]:
        with pytest.raises(ClientError) as e:
            events.put_rule(Name="s", ScheduleExpression=bad)
        assert error(e) == ("ValidationException", "Parameter ScheduleExpression is not valid."), bad
    events.create_event_bus(Name="custom")
    with pytest.raises(ClientError) as e:
        events.put_rule(Name="s", ScheduleExpression="rate(1 minute)", EventBusName="custom")
    assert error(e) == ("ValidationException", "ScheduleExpression is supported only on the default event bus.")


# Targets


def test_put_targets_then_list_and_replace(events, sqs):
    _, arn = rule_to_queue(events, sqs, Input='{"fixed": true}')
    targets = events.list_targets_by_rule(Rule="to-queue")["Targets"]
    assert targets == [{"Id": "q", "Arn": arn, "Input": '{"fixed": true}'}]
    events.put_targets(Rule="to-queue", Targets=[{"Id": "q", "Arn": arn, "InputPath": "$.detail"}])
    assert events.list_targets_by_rule(Rule="to-queue")["Targets"] == [{"Id": "q", "Arn": arn, "InputPath": "$.detail"}]
    assert events.list_rule_names_by_target(TargetArn=arn)["RuleNames"] == ["to-queue"]


def test_target_errors(events, sqs):
    _, arn = queue(sqs)
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="missing", Targets=[{"Id": "q", "Arn": arn}])
    assert error(e) == ("ResourceNotFoundException", "Rule missing does not exist on EventBus default.")
    events.put_rule(Name="r", EventPattern=PATTERN)
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn, "Input": "{}", "InputPath": "$"}])
    assert error(e) == ("ValidationException", "Only one of Input, InputPath, or InputTransformer must be provided.")
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn, "Input": "not json"}])
    assert error(e) == ("ValidationException", "Input is not a valid JSON text.")
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": "not-an-arn"}])
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": "bad id!", "Arn": arn}])
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": "f", "Arn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:q.fifo"}])
    assert error(e) == ("ValidationException", "Parameter(s) SqsParameters must be specified for target: f.")
    with pytest.raises(ClientError) as e:
        events.put_targets(Rule="r", Targets=[{"Id": f"t{i}", "Arn": arn} for i in range(6)])
    assert error(e)[0] == "LimitExceededException"
    with pytest.raises(ClientError) as e:
        events.list_targets_by_rule(Rule="missing")
    assert error(e)[0] == "ResourceNotFoundException"


# PutEvents and deliveries


def test_matching_event_is_delivered_to_sqs_as_the_event_json(events, sqs, server):
    url, arn = rule_to_queue(events, sqs)
    out = events.put_events(Entries=[order({"id": "o-1", "total": 5}, Resources=["arn:aws:s3:::b"])])
    assert out["FailedEntryCount"] == 0
    event_id = out["Entries"][0]["EventId"]
    [body] = receive(sqs, url)
    event = json.loads(body)
    assert event["id"] == event_id
    assert event["version"] == "0"
    assert event["detail-type"] == "OrderPlaced" and event["source"] == "shop"
    assert event["account"] == ACCOUNT and event["region"] == "us-east-1"
    assert event["resources"] == ["arn:aws:s3:::b"]
    assert event["detail"] == {"id": "o-1", "total": 5}
    assert event["time"].endswith("Z") and len(event["time"]) == 20
    delivery = delivery_to(server, arn)
    assert delivery["outcome"] == "delivered"
    assert delivery["source"] == f"arn:aws:events:us-east-1:{ACCOUNT}:rule/to-queue"


def test_events_that_do_not_match_or_hit_disabled_rules_are_not_delivered(events, sqs):
    url, _ = rule_to_queue(events, sqs)
    events.put_events(Entries=[{"Source": "other", "DetailType": "OrderPlaced", "Detail": "{}"}])
    assert receive(sqs, url, wait=0) == []
    events.disable_rule(Name="to-queue")
    events.put_events(Entries=[order()])
    assert receive(sqs, url, wait=1) == []
    events.enable_rule(Name="to-queue")
    events.put_events(Entries=[order()])
    assert len(receive(sqs, url)) == 1


def test_custom_bus_rules_only_see_their_bus(events, sqs):
    events.create_event_bus(Name="orders")
    url, _ = rule_to_queue(events, sqs, bus="orders")
    events.put_events(Entries=[order()])
    assert receive(sqs, url, wait=1) == []
    events.put_events(Entries=[order(bus="orders")])
    assert len(receive(sqs, url)) == 1


def test_put_events_reports_failed_entries(events):
    out = events.put_events(Entries=[
        order(),
        {"DetailType": "x", "Detail": "{}"},
        {"Source": "s", "Detail": "{}"},
        {"Source": "s", "DetailType": "x"},
        {"Source": "s", "DetailType": "x", "Detail": "[1]"},
        order(bus="nope"),
    ])
    assert out["FailedEntryCount"] == 5
    entries = out["Entries"]
    assert "EventId" in entries[0]
    assert entries[1] == {"ErrorCode": "InvalidArgument",
                          "ErrorMessage": "Parameter Source is not valid. Reason: Source is a required argument."}
    assert entries[2]["ErrorMessage"] == "Parameter DetailType is not valid. Reason: DetailType is a required argument."
    assert entries[3]["ErrorMessage"] == "Parameter Detail is not valid. Reason: Detail is a required argument."
    assert entries[4] == {"ErrorCode": "MalformedDetail", "ErrorMessage": "Detail is malformed."}
    assert entries[5]["ErrorCode"] == "ResourceNotFoundException"


def test_put_events_refuses_requests_over_256_kb(events):
    big = json.dumps({"data": "x" * (130 * 1024)})
    with pytest.raises(ClientError) as e:
        events.put_events(Entries=[order(), {"Source": "s", "DetailType": "t", "Detail": big},
                                   {"Source": "s", "DetailType": "t", "Detail": big}])
    assert error(e) == ("ValidationException", "Total size of the entries in the request is over the limit.")
    with pytest.raises(ClientError) as e:
        events.put_events(Entries=[order()] * 11)
    assert error(e)[0] == "ValidationException"


def test_input_and_input_path_shape_what_the_target_receives(events, sqs):
    url, _ = rule_to_queue(events, sqs, Input='{"fixed": 1}')
    events.put_events(Entries=[order()])
    assert receive(sqs, url) == ['{"fixed": 1}']
    _, arn = queue(sqs)
    events.put_targets(Rule="to-queue", Targets=[{"Id": "q", "Arn": arn, "InputPath": "$.detail.id"}])
    events.put_events(Entries=[order({"id": "o-9"})])
    assert receive(sqs, url) == ['"o-9"']


def test_input_transformer_fills_the_template(events, sqs):
    transformer = {
        "InputPathsMap": {"id": "$.detail.id", "total": "$.detail.total", "src": "$.source"},
        "InputTemplate": '{"order": <id>, "summary": "order <id> from <src>", "total": <total>, "rule": "<aws.events.rule-name>"}',
    }
    url, _ = rule_to_queue(events, sqs, InputTransformer=transformer)
    events.put_events(Entries=[order({"id": "o-2", "total": 9.5})])
    [body] = receive(sqs, url)
    assert json.loads(body) == {"order": "o-2", "summary": "order o-2 from shop", "total": 9.5, "rule": "to-queue"}


def test_event_pattern_operators_select_events(events, sqs):
    pattern = json.dumps({
        "source": [{"prefix": "shop"}],
        "detail": {"total": [{"numeric": [">", 100]}], "country": [{"anything-but": ["NZ"]}], "coupon": [{"exists": False}]},
    })
    url, _ = rule_to_queue(events, sqs, pattern=pattern)
    events.put_events(Entries=[
        order({"total": 150, "country": "AU"}),
        order({"total": 50, "country": "AU"}),
        order({"total": 150, "country": "NZ"}),
        order({"total": 150, "country": "AU", "coupon": "X"}),
    ])
    bodies = receive(sqs, url)
    assert [json.loads(b)["detail"] for b in bodies] == [{"total": 150, "country": "AU"}]


def test_sns_target_receives_the_event_as_the_message(events, sqs, client, server):
    sns = client("sns")
    topic = sns.create_topic(Name="events-topic")["TopicArn"]
    url, queue_arn = queue(sqs, "via-sns")
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    events.put_rule(Name="to-topic", EventPattern=PATTERN)
    events.put_targets(Rule="to-topic", Targets=[{"Id": "t", "Arn": topic}])
    events.put_events(Entries=[order({"id": "o-3"})])
    [body] = receive(sqs, url)
    assert json.loads(body)["detail"] == {"id": "o-3"}
    assert delivery_to(server, topic)["outcome"] == "delivered"


def test_logs_target_writes_the_event_to_the_log_group(events, client, server):
    logs = client("logs")
    logs.create_log_group(logGroupName="/aws/events/orders")
    group_arn = f"arn:aws:logs:us-east-1:{ACCOUNT}:log-group:/aws/events/orders"
    events.put_rule(Name="to-logs", EventPattern=PATTERN)
    events.put_targets(Rule="to-logs", Targets=[{"Id": "l", "Arn": group_arn}])
    event_id = events.put_events(Entries=[order({"id": "o-4"})])["Entries"][0]["EventId"]
    assert delivery_to(server, group_arn)["outcome"] == "delivered"
    found = logs.filter_log_events(logGroupName="/aws/events/orders")["events"]
    assert [json.loads(e["message"])["id"] for e in found] == [event_id]
    assert found[0]["logStreamName"] == event_id


def test_lambda_target_is_invoked_with_the_event(events, client, server):
    lam = client("lambda")
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    print('EVENT', event['detail-type'])\n    return event\n")
    fn = lam.create_function(FunctionName="on-order", Runtime="python3.12", Role=f"arn:aws:iam::{ACCOUNT}:role/r",
                             Handler="index.handler", Code={"ZipFile": buf.getvalue()})["FunctionArn"]
    events.put_rule(Name="to-fn", EventPattern=PATTERN)
    events.put_targets(Rule="to-fn", Targets=[{"Id": "f", "Arn": fn}])
    events.put_events(Entries=[order()])
    assert delivery_to(server, fn)["outcome"] == "delivered"


def test_event_bus_target_forwards_to_the_other_bus(events, sqs):
    events.create_event_bus(Name="downstream")
    url, _ = rule_to_queue(events, sqs, bus="downstream")
    events.put_rule(Name="forward", EventPattern=PATTERN)
    events.put_targets(Rule="forward", Targets=[{"Id": "b", "Arn": f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/downstream"}])
    events.put_events(Entries=[order({"id": "o-5"})])
    [body] = receive(sqs, url)
    assert json.loads(body)["detail"] == {"id": "o-5"}


def test_delivery_to_a_missing_queue_is_traced_as_failed(events, server):
    arn = f"arn:aws:sqs:us-east-1:{ACCOUNT}:gone"
    events.put_rule(Name="r", EventPattern=PATTERN)
    events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": arn}])
    events.put_events(Entries=[order()])
    entry = server.wait_for_delivery(service="events", operation="events:RuleTriggered")
    assert entry["target"] == arn
    assert entry["outcome"] == "retrying" and "does not exist" in entry["detail"]


# TestEventPattern


EVENT = json.dumps({"id": "1", "account": ACCOUNT, "source": "shop", "time": "2026-01-01T00:00:00Z",
                    "region": "us-east-1", "detail-type": "OrderPlaced", "resources": [], "detail": {"n": 5}})


@pytest.mark.parametrize("pattern,result", [
    ({"source": ["shop"]}, True),
    ({"source": ["other"]}, False),
    ({"detail": {"n": [{"numeric": [">=", 5, "<", 10]}]}}, True),
    ({"detail": {"n": [{"numeric": [">", 5]}]}}, False),
    ({"source": [{"suffix": "op"}]}, True),
    ({"detail-type": [{"equals-ignore-case": "orderplaced"}]}, True),
    ({"detail": {"missing": [{"exists": True}]}}, False),
    ({"$or": [{"source": ["x"]}, {"detail": {"n": [5]}}]}, True),
])
def test_test_event_pattern(events, pattern, result):
    assert events.test_event_pattern(EventPattern=json.dumps(pattern), Event=EVENT)["Result"] is result


def test_test_event_pattern_errors(events):
    with pytest.raises(ClientError) as e:
        events.test_event_pattern(EventPattern='{"source": [{"bogus": 1}]}', Event=EVENT)
    assert error(e)[0] == "InvalidEventPatternException"
    with pytest.raises(ClientError) as e:
        events.test_event_pattern(EventPattern='{"source": ["shop"]}', Event="not json")
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        events.test_event_pattern(EventPattern='{"source": ["shop"]}', Event='{"source": "shop"}')
    assert error(e)[0] == "ValidationException"


# Tags


def test_tags_on_rules_and_buses(events):
    rule = events.put_rule(Name="r", EventPattern=PATTERN, Tags=[{"Key": "team", "Value": "a"}])["RuleArn"]
    events.tag_resource(ResourceARN=rule, Tags=[{"Key": "env", "Value": "dev"}])
    assert events.list_tags_for_resource(ResourceARN=rule)["Tags"] == [
        {"Key": "env", "Value": "dev"}, {"Key": "team", "Value": "a"}]
    events.untag_resource(ResourceARN=rule, TagKeys=["team"])
    assert events.list_tags_for_resource(ResourceARN=rule)["Tags"] == [{"Key": "env", "Value": "dev"}]
    bus = events.create_event_bus(Name="b", Tags=[{"Key": "k", "Value": "v"}])["EventBusArn"]
    assert events.list_tags_for_resource(ResourceARN=bus)["Tags"] == [{"Key": "k", "Value": "v"}]
    with pytest.raises(ClientError) as e:
        events.list_tags_for_resource(ResourceARN=f"arn:aws:events:us-east-1:{ACCOUNT}:rule/missing")
    assert error(e)[0] == "ResourceNotFoundException"


def test_aws_cli_puts_a_rule_and_an_event(aws):
    arn = json.loads(aws("events", "put-rule", "--name", "cli", "--event-pattern", PATTERN).stdout)["RuleArn"]
    assert arn.endswith(":rule/cli")
    out = json.loads(aws("events", "put-events", "--entries",
                         json.dumps([{"Source": "shop", "DetailType": "OrderPlaced", "Detail": "{}"}])).stdout)
    assert out["FailedEntryCount"] == 0
    listed = json.loads(aws("events", "list-rules").stdout)["Rules"]
    assert [r["Name"] for r in listed] == ["cli"]


# Archives and replays


def test_archive_keeps_matching_events_and_replay_redelivers_them(events, sqs):
    import datetime

    bus_arn = f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/default"
    archive = events.create_archive(ArchiveName="orders", EventSourceArn=bus_arn,
                                    EventPattern=json.dumps({"source": ["shop"]}), RetentionDays=1)
    assert archive["ArchiveArn"] == f"arn:aws:events:us-east-1:{ACCOUNT}:archive/orders"
    assert archive["State"] == "ENABLED"
    start = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=1)
    events.put_events(Entries=[order({"id": "o-7"}), {"Source": "other", "DetailType": "x", "Detail": "{}"}])
    described = events.describe_archive(ArchiveName="orders")
    assert described["EventCount"] == 1 and described["EventSourceArn"] == bus_arn
    assert [a["ArchiveName"] for a in events.list_archives()["Archives"]] == ["orders"]
    url, _ = rule_to_queue(events, sqs)
    end = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(minutes=1)
    replay = events.start_replay(ReplayName="again", EventSourceArn=archive["ArchiveArn"],
                                 EventStartTime=start, EventEndTime=end, Destination={"Arn": bus_arn})
    assert replay["ReplayArn"].endswith(":replay/again")
    [body] = receive(sqs, url)
    event = json.loads(body)
    assert event["detail"] == {"id": "o-7"} and event["replay-name"] == "again"
    assert events.describe_replay(ReplayName="again")["State"] == "COMPLETED"
    assert [r["ReplayName"] for r in events.list_replays()["Replays"]] == ["again"]
    assert events.describe_archive(ArchiveName="orders")["EventCount"] == 1
    with pytest.raises(ClientError) as e:
        events.start_replay(ReplayName="again", EventSourceArn=archive["ArchiveArn"],
                            EventStartTime=start, EventEndTime=end, Destination={"Arn": bus_arn})
    assert error(e) == ("ResourceAlreadyExistsException", "Replay again already exists.")
    with pytest.raises(ClientError) as e:
        events.start_replay(ReplayName="back", EventSourceArn=archive["ArchiveArn"],
                            EventStartTime=end, EventEndTime=start, Destination={"Arn": bus_arn})
    assert error(e)[0] == "ValidationException"
    events.delete_archive(ArchiveName="orders")
    with pytest.raises(ClientError) as e:
        events.describe_archive(ArchiveName="orders")
    assert error(e) == ("ResourceNotFoundException", "Archive orders does not exist.")


def test_archive_errors(events):
    bus_arn = f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/default"
    events.create_archive(ArchiveName="a", EventSourceArn=bus_arn)
    with pytest.raises(ClientError) as e:
        events.create_archive(ArchiveName="a", EventSourceArn=bus_arn)
    assert error(e) == ("ResourceAlreadyExistsException", "Archive a already exists.")
    with pytest.raises(ClientError) as e:
        events.create_archive(ArchiveName="b", EventSourceArn=f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/nope")
    assert error(e) == ("ResourceNotFoundException", "Event bus nope does not exist.")
    with pytest.raises(ClientError) as e:
        events.create_archive(ArchiveName="c", EventSourceArn=bus_arn, EventPattern='{"source": "x"}')
    assert error(e)[0] == "InvalidEventPatternException"


def test_put_permission_builds_the_bus_policy_and_remove_permission_takes_it_apart(events):
    events.put_permission(Action="events:PutEvents", Principal="111122223333", StatementId="s1")
    events.put_permission(Action="events:PutEvents", Principal="*", StatementId="s2")
    policy = json.loads(events.describe_event_bus()["Policy"])
    assert [s["Sid"] for s in policy["Statement"]] == ["s1", "s2"]
    assert policy["Statement"][0]["Principal"] == {"AWS": "arn:aws:iam::111122223333:root"}
    assert policy["Statement"][0]["Resource"] == f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/default"
    events.remove_permission(StatementId="s1")
    assert [s["Sid"] for s in json.loads(events.describe_event_bus()["Policy"])["Statement"]] == ["s2"]
    with pytest.raises(ClientError) as e:
        events.remove_permission(StatementId="s1")
    assert error(e) == ("ResourceNotFoundException", "Statement with the provided id does not exist.")
    events.remove_permission(RemoveAllPermissions=True)
    assert "Policy" not in events.describe_event_bus()
    with pytest.raises(ClientError) as e:
        events.remove_permission(StatementId="s2")
    assert error(e) == ("ResourceNotFoundException", "EventBus does not have a policy.")
