"""EventBridge Scheduler, black-box with boto3: schedule groups, schedules, their validation,
and firing on the server clock (time zones and daylight saving time included) into SQS, SNS,
EventBridge, Step Functions, Kinesis, Lambda and universal targets, with retries and
dead-letter queues."""

from __future__ import annotations

import datetime
import json
import time

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ROLE as LAMBDA_ROLE
from lambda_helpers import ECHO_CODE

ACCOUNT = "000000000000"
ROLE = f"arn:aws:iam::{ACCOUNT}:role/scheduler-role"
CONTEXT = json.dumps({
    "arn": "<aws.scheduler.schedule-arn>",
    "time": "<aws.scheduler.scheduled-time>",
    "id": "<aws.scheduler.execution-id>",
    "attempt": "<aws.scheduler.attempt-number>",
})


@pytest.fixture
def scheduler(client):
    return client("scheduler")


@pytest.fixture
def sqs(client):
    return client("sqs")


def error(excinfo):
    e = excinfo.value.response
    return e["Error"]["Code"], e["Error"]["Message"], e["ResponseMetadata"]["HTTPStatusCode"]


def now_ms(server) -> int:
    status, _, body = server.request("GET", "/_roto/clock")
    assert status == 200
    return json.loads(body)["now_millis"]


def advance_to(server, millis: int) -> None:
    server.advance_clock(max(0, millis - now_ms(server)) / 1000)


def iso_ms(text: str) -> int:
    return int(datetime.datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000)


def queue(sqs, name="target"):
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    return url, arn


def drain(sqs, url, count, timeout=10.0, attributes=False):
    """Receives until `count` messages came (or the timeout); returns their bodies, or the
    whole messages when `attributes`."""
    got = []
    deadline = time.time() + timeout
    while len(got) < count and time.time() < deadline:
        r = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1,
                                MessageAttributeNames=["All"], AttributeNames=["All"])
        for m in r.get("Messages", []):
            sqs.delete_message(QueueUrl=url, ReceiptHandle=m["ReceiptHandle"])
            got.append(m if attributes else m["Body"])
    return got


def schedule(scheduler, name, expression, target, **extra):
    params = {"Name": name, "ScheduleExpression": expression, "Target": target,
              "FlexibleTimeWindow": {"Mode": "OFF"}}
    params.update(extra)
    return scheduler.create_schedule(**params)["ScheduleArn"]


def sqs_target(arn, input_=CONTEXT, **extra):
    return {"Arn": arn, "RoleArn": ROLE, "Input": input_, **extra}


# --- schedule groups ---------------------------------------------------------------------

def test_the_default_group_exists_and_cannot_be_created_or_deleted(scheduler):
    g = scheduler.get_schedule_group(Name="default")
    assert g["Arn"] == f"arn:aws:scheduler:us-east-1:{ACCOUNT}:schedule-group/default"
    assert g["State"] == "ACTIVE"
    assert [x["Name"] for x in scheduler.list_schedule_groups()["ScheduleGroups"]] == ["default"]
    for call in (scheduler.create_schedule_group, scheduler.delete_schedule_group):
        with pytest.raises(ClientError) as e:
            call(Name="default")
        assert error(e) == ("ValidationException",
                            "This operation cannot be performed on schedule group default.", 400)


def test_groups_are_created_listed_tagged_and_deleted(scheduler):
    arn = scheduler.create_schedule_group(Name="jobs", Tags=[{"Key": "team", "Value": "a"}])["ScheduleGroupArn"]
    assert arn == f"arn:aws:scheduler:us-east-1:{ACCOUNT}:schedule-group/jobs"
    g = scheduler.get_schedule_group(Name="jobs")
    assert g["State"] == "ACTIVE" and g["CreationDate"] and g["LastModificationDate"]
    with pytest.raises(ClientError) as e:
        scheduler.create_schedule_group(Name="jobs")
    assert error(e) == ("ConflictException", "Schedule group jobs already exists.", 409)
    scheduler.create_schedule_group(Name="other")
    names = [x["Name"] for x in scheduler.list_schedule_groups()["ScheduleGroups"]]
    assert names == ["default", "jobs", "other"]
    assert [x["Name"] for x in scheduler.list_schedule_groups(NamePrefix="jo")["ScheduleGroups"]] == ["jobs"]
    page = scheduler.list_schedule_groups(MaxResults=2)
    assert len(page["ScheduleGroups"]) == 2
    rest = scheduler.list_schedule_groups(MaxResults=2, NextToken=page["NextToken"])
    assert [x["Name"] for x in rest["ScheduleGroups"]] == ["other"] and "NextToken" not in rest
    scheduler.tag_resource(ResourceArn=arn, Tags=[{"Key": "env", "Value": "dev"}])
    tags = scheduler.list_tags_for_resource(ResourceArn=arn)["Tags"]
    assert sorted((t["Key"], t["Value"]) for t in tags) == [("env", "dev"), ("team", "a")]
    scheduler.untag_resource(ResourceArn=arn, TagKeys=["team"])
    assert scheduler.list_tags_for_resource(ResourceArn=arn)["Tags"] == [{"Key": "env", "Value": "dev"}]
    scheduler.delete_schedule_group(Name="jobs")
    with pytest.raises(ClientError) as e:
        scheduler.get_schedule_group(Name="jobs")
    assert error(e) == ("ResourceNotFoundException", "Schedule group jobs does not exist.", 404)
    with pytest.raises(ClientError) as e:
        scheduler.delete_schedule_group(Name="jobs")
    assert error(e)[0] == "ResourceNotFoundException"


def test_deleting_a_group_deletes_its_schedules(scheduler, sqs):
    _, arn = queue(sqs)
    scheduler.create_schedule_group(Name="batch")
    schedule(scheduler, "nightly", "cron(0 3 * * ? *)", sqs_target(arn), GroupName="batch")
    schedule(scheduler, "kept", "cron(0 3 * * ? *)", sqs_target(arn))
    scheduler.delete_schedule_group(Name="batch")
    assert [s["Name"] for s in scheduler.list_schedules()["Schedules"]] == ["kept"]
    with pytest.raises(ClientError) as e:
        scheduler.get_schedule(Name="nightly", GroupName="batch")
    assert error(e) == ("ResourceNotFoundException", "Schedule nightly does not exist.", 404)


# --- schedules -----------------------------------------------------------------------------

def test_a_schedule_reads_back_with_aws_defaults(scheduler, sqs):
    _, arn = queue(sqs)
    sarn = schedule(scheduler, "daily", "cron(0 9 * * ? *)", {"Arn": arn, "RoleArn": ROLE})
    assert sarn == f"arn:aws:scheduler:us-east-1:{ACCOUNT}:schedule/default/daily"
    s = scheduler.get_schedule(Name="daily")
    assert s["Arn"] == sarn and s["GroupName"] == "default"
    assert s["State"] == "ENABLED"
    assert s["ScheduleExpressionTimezone"] == "UTC"
    assert s["ActionAfterCompletion"] == "NONE"
    assert s["FlexibleTimeWindow"] == {"Mode": "OFF"}
    assert s["Target"] == {"Arn": arn, "RoleArn": ROLE,
                           "RetryPolicy": {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 185}}
    assert "Description" not in s and "StartDate" not in s and "KmsKeyArn" not in s
    with pytest.raises(ClientError) as e:
        schedule(scheduler, "daily", "cron(0 9 * * ? *)", {"Arn": arn, "RoleArn": ROLE})
    assert error(e) == ("ConflictException", "Schedule daily already exists.", 409)


def test_every_member_is_stored_and_update_replaces_the_whole_schedule(scheduler, sqs):
    _, arn = queue(sqs)
    kms = f"arn:aws:kms:us-east-1:{ACCOUNT}:key/1234abcd-12ab-34cd-56ef-1234567890ab"
    start = datetime.datetime.now(datetime.timezone.utc) + datetime.timedelta(days=1)
    end = start + datetime.timedelta(days=30)
    schedule(scheduler, "full", "rate(2 hours)", sqs_target(arn, RetryPolicy={"MaximumRetryAttempts": 3}),
             Description="d", ScheduleExpressionTimezone="Europe/Paris", StartDate=start, EndDate=end,
             State="DISABLED", KmsKeyArn=kms, ActionAfterCompletion="DELETE",
             FlexibleTimeWindow={"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15})
    s = scheduler.get_schedule(Name="full")
    assert s["Description"] == "d" and s["ScheduleExpressionTimezone"] == "Europe/Paris"
    assert abs(s["StartDate"].timestamp() - start.timestamp()) < 1
    assert abs(s["EndDate"].timestamp() - end.timestamp()) < 1
    assert s["State"] == "DISABLED" and s["KmsKeyArn"] == kms and s["ActionAfterCompletion"] == "DELETE"
    assert s["FlexibleTimeWindow"] == {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 15}
    assert s["Target"]["RetryPolicy"] == {"MaximumEventAgeInSeconds": 86400, "MaximumRetryAttempts": 3}
    created = s["CreationDate"]
    scheduler.update_schedule(Name="full", ScheduleExpression="rate(2 minute)",
                              Target={"Arn": arn, "RoleArn": ROLE}, FlexibleTimeWindow={"Mode": "OFF"})
    u = scheduler.get_schedule(Name="full")
    assert u["ScheduleExpression"] == "rate(2 minute)" and u["State"] == "ENABLED"
    assert u["ScheduleExpressionTimezone"] == "UTC" and u["ActionAfterCompletion"] == "NONE"
    assert "Description" not in u and "KmsKeyArn" not in u and "StartDate" not in u
    assert u["CreationDate"] == created and u["LastModificationDate"] >= created
    with pytest.raises(ClientError) as e:
        scheduler.update_schedule(Name="missing", ScheduleExpression="rate(1 hour)",
                                  Target={"Arn": arn, "RoleArn": ROLE}, FlexibleTimeWindow={"Mode": "OFF"})
    assert error(e) == ("ResourceNotFoundException", "Schedule missing does not exist.", 404)


def test_list_schedules_filters_and_pages(scheduler, sqs):
    _, arn = queue(sqs)
    scheduler.create_schedule_group(Name="g2")
    for name in ["a1", "a2", "b1"]:
        schedule(scheduler, name, "cron(0 9 * * ? *)", sqs_target(arn))
    schedule(scheduler, "a3", "cron(0 9 * * ? *)", sqs_target(arn), GroupName="g2", State="DISABLED")
    everything = scheduler.list_schedules()["Schedules"]
    assert [(s["Name"], s["GroupName"]) for s in everything] == [
        ("a1", "default"), ("a2", "default"), ("a3", "g2"), ("b1", "default")]
    assert everything[0]["Target"] == {"Arn": arn}
    assert set(everything[0]) == {"Arn", "Name", "GroupName", "State", "CreationDate",
                                  "LastModificationDate", "Target"}
    assert [s["Name"] for s in scheduler.list_schedules(NamePrefix="a")["Schedules"]] == ["a1", "a2", "a3"]
    assert [s["Name"] for s in scheduler.list_schedules(GroupName="g2")["Schedules"]] == ["a3"]
    assert [s["Name"] for s in scheduler.list_schedules(State="DISABLED")["Schedules"]] == ["a3"]
    first = scheduler.list_schedules(MaxResults=3)
    second = scheduler.list_schedules(MaxResults=3, NextToken=first["NextToken"])
    assert [s["Name"] for s in first["Schedules"] + second["Schedules"]] == ["a1", "a2", "a3", "b1"]
    with pytest.raises(ClientError) as e:
        scheduler.list_schedules(GroupName="nope")
    assert error(e) == ("ResourceNotFoundException", "Schedule group nope does not exist.", 404)
    with pytest.raises(ClientError) as e:
        scheduler.list_schedules(NextToken="bogus")
    assert error(e)[0] == "ValidationException"


def test_delete_schedule_and_its_not_found(scheduler, sqs):
    _, arn = queue(sqs)
    schedule(scheduler, "gone", "rate(1 day)", sqs_target(arn))
    scheduler.delete_schedule(Name="gone")
    assert scheduler.list_schedules()["Schedules"] == []
    with pytest.raises(ClientError) as e:
        scheduler.delete_schedule(Name="gone")
    assert error(e) == ("ResourceNotFoundException", "Schedule gone does not exist.", 404)
    with pytest.raises(ClientError) as e:
        schedule(scheduler, "x", "rate(1 day)", sqs_target(arn), GroupName="absent")
    assert error(e) == ("ResourceNotFoundException", "Schedule group absent does not exist.", 404)


@pytest.mark.parametrize("expression", [
    "cron(0 1 * * * *)", "cron(7 20 * * NOT *)", "cron(INVALID)", "cron(0 dummy ? * MON-FRI *)",
    "cron(71 8 1 * ? *)", "cron()", "rate(10 seconds)", "rate(10 years)", "rate()", "rate(10)",
    "rate(10 minutess)", "rate(foo minutes)", "rate(-10 minutes)", "rate( 10 minutes )",
    " rate(10 minutes)", "at(2021-12-31T23:59:59Z)", "at(2021-12-31)", "at(2026-02-30T10:00:00)",
])
def test_invalid_expressions_are_refused_in_aws_words(scheduler, sqs, expression):
    _, arn = queue(sqs)
    with pytest.raises(ClientError) as e:
        schedule(scheduler, "bad", expression, sqs_target(arn))
    assert error(e) == ("ValidationException", f"Invalid Schedule Expression {expression}.", 400)


@pytest.mark.parametrize("expression", [
    "rate(1 minute)", "rate(5 minutes)", "rate(1 hours)", "rate(3 day)", "cron(0/15 * * * ? *)",
    "cron(0 9 ? * MON-FRI *)", "cron(0 0 L * ? *)", "cron(0 0 15W * ? *)", "cron(0 0 ? * 6#3 *)",
    "cron(0-15/1 8-8 ? * 2,3,4,5,6,7 *)", "at(2030-01-01T00:00:00)",
])
def test_valid_expressions_are_accepted(scheduler, sqs, expression):
    _, arn = queue(sqs)
    schedule(scheduler, "ok", expression, sqs_target(arn))
    assert scheduler.get_schedule(Name="ok")["ScheduleExpression"] == expression


def test_other_inputs_are_checked(client, sqs):
    """Checked by the server, so the client's own checks are off."""
    from botocore.config import Config

    scheduler = client("scheduler", config=Config(parameter_validation=False, retries={"max_attempts": 1}))
    _, arn = queue(sqs)
    cases = [
        ({"Name": "bad name"}, "ValidationException"),
        ({"ScheduleExpressionTimezone": "Mars/Olympus"}, "ValidationException"),
        ({"FlexibleTimeWindow": {"Mode": "FLEXIBLE"}}, "ValidationException"),
        ({"FlexibleTimeWindow": {"Mode": "OFF", "MaximumWindowInMinutes": 5}}, "ValidationException"),
        ({"FlexibleTimeWindow": {"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 0}}, "ValidationException"),
        ({"Target": {"Arn": arn, "RoleArn": "not-a-role"}}, "ValidationException"),
        ({"Target": {"Arn": arn, "RoleArn": ROLE, "RetryPolicy": {"MaximumRetryAttempts": 186}}},
         "ValidationException"),
        ({"KmsKeyArn": "arn:aws:kms:us-east-1:1:key/x"}, "ValidationException"),
        ({"State": "PAUSED"}, "ValidationException"),
    ]
    for override, code in cases:
        params = {"Name": "s", "ScheduleExpression": "rate(1 hour)", "Target": sqs_target(arn),
                  "FlexibleTimeWindow": {"Mode": "OFF"}}
        params.update(override)
        with pytest.raises(ClientError) as e:
            scheduler.create_schedule(**params)
        assert error(e)[0] == code, override
    with pytest.raises(ClientError) as e:
        schedule(scheduler, "s", "rate(1 hour)", sqs_target(arn), ScheduleExpressionTimezone="Mars/Olympus")
    assert error(e)[1] == "Invalid Schedule Expression Timezone Mars/Olympus."
    past = datetime.datetime.now(datetime.timezone.utc) - datetime.timedelta(minutes=10)
    with pytest.raises(ClientError) as e:
        schedule(scheduler, "s", "rate(1 hour)", sqs_target(arn), StartDate=past)
    assert error(e) == ("ValidationException",
                        "The StartDate you specify cannot be earlier than 5 minutes ago.", 400)
    schedule(scheduler, "once", "at(2020-01-01T00:00:00)", sqs_target(arn), StartDate=past)


# --- firing --------------------------------------------------------------------------------

def test_a_rate_schedule_fires_at_once_then_each_period_exactly_once(server, scheduler, sqs):
    url, arn = queue(sqs)
    created = now_ms(server)
    sarn = schedule(scheduler, "every-minute", "rate(1 minute)", sqs_target(arn))
    first = json.loads(drain(sqs, url, 1)[0])
    assert first["arn"] == sarn and first["attempt"] == "1"
    assert abs(iso_ms(first["time"]) - created) < 2_000
    server.advance_clock(180)
    bodies = [json.loads(b) for b in drain(sqs, url, 3)]
    times = [iso_ms(b["time"]) for b in bodies]
    assert len(times) == 3 and times == sorted(times)
    assert [t - iso_ms(first["time"]) for t in times] == [60_000, 120_000, 180_000]
    assert len({b["id"] for b in bodies + [first]}) == 4
    assert drain(sqs, url, 1, timeout=1.5) == []
    entry = server.wait_for_delivery(service="scheduler", target=arn, outcome="delivered")
    assert entry["source"] == sarn and entry["operation"] == "scheduler:Invoke"


def test_a_disabled_schedule_fires_once_enabled(server, scheduler, sqs):
    url, arn = queue(sqs)
    schedule(scheduler, "off", "rate(1 minute)", sqs_target(arn, "tick"), State="DISABLED")
    server.advance_clock(120)
    assert drain(sqs, url, 1, timeout=1.5) == []
    scheduler.update_schedule(Name="off", ScheduleExpression="rate(1 minute)",
                              Target=sqs_target(arn, "tick"), FlexibleTimeWindow={"Mode": "OFF"})
    assert drain(sqs, url, 1) == ["tick"]


def test_a_one_time_schedule_fires_once_and_deletes_itself(server, scheduler, sqs):
    url, arn = queue(sqs)
    at = datetime.datetime.fromtimestamp(now_ms(server) / 1000 + 3600, datetime.timezone.utc)
    at = at.replace(second=0, microsecond=0)
    expression = f"at({at.strftime('%Y-%m-%dT%H:%M:%S')})"
    schedule(scheduler, "once", expression, sqs_target(arn), ActionAfterCompletion="DELETE")
    schedule(scheduler, "kept", expression, sqs_target(arn))
    assert drain(sqs, url, 1, timeout=1.5) == []
    server.advance_clock(3700)
    bodies = [json.loads(b) for b in drain(sqs, url, 2)]
    assert [iso_ms(b["time"]) for b in bodies] == [int(at.timestamp() * 1000)] * 2
    names = [s["Name"] for s in scheduler.list_schedules()["Schedules"]]
    assert names == ["kept"]
    server.advance_clock(86_400)
    assert drain(sqs, url, 1, timeout=1.5) == []


def test_cron_in_a_time_zone_fires_at_the_zone_wall_clock(server, scheduler, sqs):
    url, arn = queue(sqs)
    zone = "Asia/Kolkata"  # +05:30 all year
    local = datetime.datetime.fromtimestamp(now_ms(server) / 1000 + 7200, datetime.timezone.utc)
    local = local.astimezone(datetime.timezone(datetime.timedelta(hours=5, minutes=30)))
    schedule(scheduler, "kolkata", f"cron({local.minute} {local.hour} * * ? *)", sqs_target(arn),
             ScheduleExpressionTimezone=zone)
    server.advance_clock(7260)
    body = json.loads(drain(sqs, url, 1)[0])
    expected = local.replace(second=0, microsecond=0).astimezone(datetime.timezone.utc)
    assert body["time"] == expected.strftime("%Y-%m-%dT%H:%M:%SZ")


def fire_over(server, sqs, url, start_iso, end_iso, step_hours=6):
    """Advances the clock from `start_iso` to `end_iso` in steps; returns the scheduled
    times (ISO) of what arrived, in order."""
    advance_to(server, iso_ms(start_iso))
    got = []
    t = iso_ms(start_iso)
    while t < iso_ms(end_iso):
        t += step_hours * 3_600_000
        advance_to(server, t)
        got += [json.loads(b)["time"] for b in drain(sqs, url, 10, timeout=1.0)]
    return got


def test_the_spring_forward_gap_is_skipped(server, scheduler, sqs):
    # New York skips 02:00-03:00 on 2027-03-14.
    url, arn = queue(sqs)
    schedule(scheduler, "dst", "cron(30 2 * * ? *)", sqs_target(arn), ScheduleExpressionTimezone="America/New_York",
             StartDate=datetime.datetime(2027, 3, 13, tzinfo=datetime.timezone.utc))
    times = fire_over(server, sqs, url, "2027-03-13T00:00:00Z", "2027-03-16T00:00:00Z")
    assert times == ["2027-03-13T07:30:00Z", "2027-03-15T06:30:00Z"]


def test_the_fall_back_fold_fires_once(server, scheduler, sqs):
    # New York repeats 01:00-02:00 on 2027-11-07.
    url, arn = queue(sqs)
    schedule(scheduler, "dst", "cron(30 1 * * ? *)", sqs_target(arn), ScheduleExpressionTimezone="America/New_York",
             StartDate=datetime.datetime(2027, 11, 6, tzinfo=datetime.timezone.utc))
    times = fire_over(server, sqs, url, "2027-11-06T00:00:00Z", "2027-11-09T00:00:00Z")
    assert times == ["2027-11-06T05:30:00Z", "2027-11-07T05:30:00Z", "2027-11-08T06:30:00Z"]


def test_end_date_completes_a_recurring_schedule(server, scheduler, sqs):
    url, arn = queue(sqs)
    start = datetime.datetime(2028, 1, 1, tzinfo=datetime.timezone.utc)
    schedule(scheduler, "bounded", "rate(1 hour)", sqs_target(arn), StartDate=start,
             EndDate=start + datetime.timedelta(hours=3), ActionAfterCompletion="DELETE")
    times = fire_over(server, sqs, url, "2027-12-31T23:00:00Z", "2028-01-01T06:00:00Z", step_hours=1)
    assert times == ["2028-01-01T00:00:00Z", "2028-01-01T01:00:00Z", "2028-01-01T02:00:00Z"]
    assert scheduler.list_schedules()["Schedules"] == []


def test_a_flexible_window_fires_within_it_and_keeps_the_scheduled_time(server, scheduler, sqs):
    url, arn = queue(sqs)
    start = datetime.datetime(2028, 2, 1, 12, tzinfo=datetime.timezone.utc)
    schedule(scheduler, "flex", "cron(0 12 * * ? *)", sqs_target(arn), StartDate=start,
             FlexibleTimeWindow={"Mode": "FLEXIBLE", "MaximumWindowInMinutes": 10})
    advance_to(server, iso_ms("2028-02-01T11:59:00Z"))
    assert drain(sqs, url, 1, timeout=1.0) == []
    advance_to(server, iso_ms("2028-02-01T12:10:00Z"))
    body = json.loads(drain(sqs, url, 1)[0])
    assert body["time"] == "2028-02-01T12:00:00Z"


def test_a_year_of_clock_fires_at_most_the_event_age_of_occurrences(server, scheduler, sqs):
    url, arn = queue(sqs)
    schedule(scheduler, "hourly", "rate(1 hour)",
             sqs_target(arn, "x", RetryPolicy={"MaximumEventAgeInSeconds": 7200}))
    assert drain(sqs, url, 1) == ["x"]
    server.advance_clock(365 * 86_400)
    assert len(drain(sqs, url, 10, timeout=2.0)) == 2


def test_templated_targets_sns_eventbridge_stepfunctions_kinesis(server, client, scheduler, sqs):
    url, qarn = queue(sqs, "sink")
    sns = client("sns")
    topic = sns.create_topic(Name="t")["TopicArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=qarn, Attributes={"RawMessageDelivery": "true"})
    events = client("events")
    events.put_rule(Name="r", EventPattern=json.dumps({"source": ["my.app"]}))
    events.put_targets(Rule="r", Targets=[{"Id": "q", "Arn": qarn}])
    sfn = client("stepfunctions")
    machine = sfn.create_state_machine(name="m", roleArn=ROLE, definition=json.dumps(
        {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}))["stateMachineArn"]
    kinesis = client("kinesis")
    kinesis.create_stream(StreamName="st", ShardCount=1)
    stream = kinesis.describe_stream(StreamName="st")["StreamDescription"]["StreamARN"]
    bus = f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/default"
    schedule(scheduler, "sns", "rate(1 day)", {"Arn": topic, "RoleArn": ROLE, "Input": "via-sns"})
    schedule(scheduler, "bus", "rate(1 day)", {"Arn": bus, "RoleArn": ROLE, "Input": '{"k": "v"}',
                                               "EventBridgeParameters": {"DetailType": "tick", "Source": "my.app"}})
    schedule(scheduler, "sfn", "rate(1 day)", {"Arn": machine, "RoleArn": ROLE, "Input": '{"a": 1}'})
    schedule(scheduler, "kin", "rate(1 day)", {"Arn": stream, "RoleArn": ROLE, "Input": "rec",
                                               "KinesisParameters": {"PartitionKey": "pk"}})
    bodies = drain(sqs, url, 2)
    assert "via-sns" in bodies
    event = json.loads(next(b for b in bodies if b != "via-sns"))
    assert event["detail-type"] == "tick" and event["source"] == "my.app" and event["detail"] == {"k": "v"}
    server.wait_for_delivery(service="scheduler", target=machine, outcome="delivered")
    executions = sfn.list_executions(stateMachineArn=machine)["executions"]
    assert len(executions) == 1
    assert sfn.describe_execution(executionArn=executions[0]["executionArn"])["input"] == '{"a": 1}'
    server.wait_for_delivery(service="scheduler", target=stream, outcome="delivered")
    shard = kinesis.describe_stream(StreamName="st")["StreamDescription"]["Shards"][0]["ShardId"]
    it = kinesis.get_shard_iterator(StreamName="st", ShardId=shard, ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    records = kinesis.get_records(ShardIterator=it)["Records"]
    assert [(r["Data"], r["PartitionKey"]) for r in records] == [(b"rec", "pk")]


def test_sqs_fifo_targets_carry_the_message_group(server, scheduler, sqs):
    url = sqs.create_queue(QueueName="jobs.fifo", Attributes={
        "FifoQueue": "true", "ContentBasedDeduplication": "true"})["QueueUrl"]
    arn = sqs.get_queue_attributes(QueueUrl=url, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    schedule(scheduler, "fifo", "rate(1 day)", sqs_target(arn, "job", SqsParameters={"MessageGroupId": "g1"}))
    [message] = drain(sqs, url, 1, attributes=True)
    assert message["Body"] == "job" and message["Attributes"]["MessageGroupId"] == "g1"


def test_lambda_targets_are_invoked_asynchronously(server, client, scheduler):
    lam = client("lambda")
    fn = lam.create_function(FunctionName="f", Runtime="python3.12", Role=LAMBDA_ROLE,
                             Handler="app.handler", Code=ECHO_CODE)["FunctionArn"]
    schedule(scheduler, "fn", "rate(1 day)", {"Arn": fn, "RoleArn": ROLE, "Input": CONTEXT})
    server.wait_for_delivery(service="scheduler", target=fn, outcome="delivered", timeout=10)
    call = server.wait_for_trace(service="lambda", operation="Invoke")
    assert call["status"] == 200


def test_universal_targets_call_any_operation(server, scheduler, sqs):
    url, _ = queue(sqs)
    target = {"Arn": "arn:aws:scheduler:::aws-sdk:sqs:sendMessage", "RoleArn": ROLE,
              "Input": json.dumps({"QueueUrl": url, "MessageBody": "<aws.scheduler.attempt-number>"})}
    schedule(scheduler, "universal", "rate(1 day)", target)
    assert drain(sqs, url, 1) == ["1"]


def test_a_failed_invocation_goes_to_the_dead_letter_queue(server, scheduler, sqs):
    dlq_url, dlq = queue(sqs, "dlq")
    missing = f"arn:aws:sqs:us-east-1:{ACCOUNT}:does-not-exist"
    sarn = schedule(scheduler, "broken", "rate(1 day)",
                    {"Arn": missing, "RoleArn": ROLE, "Input": "payload", "DeadLetterConfig": {"Arn": dlq},
                     "RetryPolicy": {"MaximumRetryAttempts": 2}})
    [message] = drain(sqs, dlq_url, 1, attributes=True)
    assert message["Body"] == "payload"
    attrs = {k: v["StringValue"] for k, v in message["MessageAttributes"].items()}
    assert attrs["ERROR_CODE"] in ("QueueDoesNotExist", "AWS.SimpleQueueService.NonExistentQueue")
    assert attrs["SCHEDULE_ARN"] == sarn and attrs["TARGET_ARN"] == missing
    assert attrs["EXECUTION_ID"] and attrs["ERROR_MESSAGE"]
    assert attrs["SCHEDULED_TIME"].endswith("Z")
    failed = server.wait_for_delivery(service="scheduler", target=missing, outcome="failed")
    assert failed["attempt"] == 1


def test_a_callers_fault_is_not_retried(server, scheduler, sqs):
    url, _ = queue(sqs)
    target = {"Arn": "arn:aws:scheduler:::aws-sdk:sqs:sendMessage", "RoleArn": ROLE,
              "RetryPolicy": {"MaximumRetryAttempts": 1},
              "Input": json.dumps({"QueueUrl": url, "MessageBody": "attempt <aws.scheduler.attempt-number>",
                                   "DelaySeconds": 901})}
    schedule(scheduler, "bad-input", "rate(1 day)", target)
    failed = server.wait_for_delivery(service="scheduler", operation="scheduler:Invoke", outcome="failed")
    assert failed["attempt"] == 1 and "InvalidParameterValue" in failed["detail"]


def test_schedules_survive_a_restart_and_fire_from_then_on(tmp_path):
    from roto_server import RotoServer

    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        sqs = s.client("sqs")
        url, arn = queue(sqs)
        sch = s.client("scheduler")
        sch.create_schedule_group(Name="kept")
        schedule(sch, "hourly", "rate(1 hour)", sqs_target(arn, "tick"), GroupName="kept")
        assert drain(sqs, url, 1) == ["tick"]
    with RotoServer("--data-dir", data) as s:
        sch = s.client("scheduler")
        assert sch.get_schedule(Name="hourly", GroupName="kept")["ScheduleExpression"] == "rate(1 hour)"
        sqs = s.client("sqs")
        s.advance_clock(3600)
        assert drain(sqs, url, 1) == ["tick"]


def test_setup_scripts_seed_groups_and_schedules_that_fire(tmp_path):
    from roto_server import RotoServer

    path = tmp_path / "seed.lua"
    path.write_text(f"""
        local q = aws.sqs.CreateQueue{{QueueName = "seeded"}}
        local arn = aws.sqs.GetQueueAttributes{{QueueUrl = q.QueueUrl, AttributeNames = {{"QueueArn"}}}}
        aws.scheduler.CreateScheduleGroup{{Name = "ops", Tags = {{{{Key = "team", Value = "a"}}}}}}
        aws.scheduler.CreateSchedule{{
          Name = "hourly", GroupName = "ops", ScheduleExpression = "cron(0 * * * ? *)",
          ScheduleExpressionTimezone = "Europe/London", FlexibleTimeWindow = {{Mode = "OFF"}},
          Target = {{Arn = arn.Attributes.QueueArn, RoleArn = "{ROLE}", Input = "seeded"}},
        }}
    """)
    with RotoServer("--ephemeral", "--setup", str(path)) as s:
        sch, sqs = s.client("scheduler"), s.client("sqs")
        assert sch.get_schedule(Name="hourly", GroupName="ops")["ScheduleExpressionTimezone"] == "Europe/London"
        s.advance_clock(3600)
        url = sqs.get_queue_url(QueueName="seeded")["QueueUrl"]
        assert drain(sqs, url, 1) == ["seeded"]
