"""CloudFormation's stack options, black-box with boto3: TimeoutInMinutes (a creation past
it is cancelled and rolled back, on the server clock), ClientRequestToken (a retried
request is idempotent, a used token on another request is TokenAlreadyExistsException, and
the token is on the operation's events), and rollback triggers (CloudWatch alarms watched
during the operation and its monitoring time)."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from test_cloudformation import deleted, error, events, settle

QUEUE = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue"}}}

WAITING = {"Resources": {
    "Queue": {"Type": "AWS::SQS::Queue"},
    "Handle": {"Type": "AWS::CloudFormation::WaitConditionHandle"},
    "Wait": {"Type": "AWS::CloudFormation::WaitCondition",
             "Properties": {"Handle": {"Ref": "Handle"}, "Timeout": "3600"}}}}


@pytest.fixture
def cfn(client):
    return client("cloudformation")


def until(check, timeout=15):
    deadline = time.time() + timeout
    while not check():
        if time.time() > deadline:
            raise AssertionError("condition never held")
        time.sleep(0.05)


def waiting(cfn, name):
    """Waits until the stack's wait condition is being created."""
    until(lambda: ("Wait", "CREATE_IN_PROGRESS", None) in events(cfn, name))


def stack_reasons(cfn, name):
    return [(status, reason) for lid, status, reason in events(cfn, name) if lid == name]


def test_a_creation_past_its_timeout_is_cancelled_and_rolled_back(cfn, server):
    cfn.create_stack(StackName="slow", TemplateBody=json.dumps(WAITING), TimeoutInMinutes=1)
    waiting(cfn, "slow")
    assert cfn.describe_stacks(StackName="slow")["Stacks"][0]["TimeoutInMinutes"] == 1
    server.advance_clock(61)
    stack = settle(cfn, "slow")
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", events(cfn, "slow")
    assert ("ROLLBACK_IN_PROGRESS",
            "Stack creation time exceeded the specified timeout. Rollback requested by user.") in stack_reasons(cfn, "slow")
    assert ("Wait", "CREATE_FAILED", "Resource creation cancelled") in events(cfn, "slow")
    assert ("Queue", "DELETE_COMPLETE", None) in events(cfn, "slow")


def test_a_timed_out_creation_without_rollback_stops_at_create_failed(cfn, server):
    cfn.create_stack(StackName="kept", TemplateBody=json.dumps(WAITING), TimeoutInMinutes=2,
                     OnFailure="DO_NOTHING")
    waiting(cfn, "kept")
    server.advance_clock(60)
    time.sleep(0.3)
    assert cfn.describe_stacks(StackName="kept")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    server.advance_clock(61)
    stack = settle(cfn, "kept")
    assert stack["StackStatus"] == "CREATE_FAILED"
    assert stack["StackStatusReason"] == "Stack creation time exceeded the specified timeout."


def test_a_creation_within_its_timeout_completes(cfn, server):
    cfn.create_stack(StackName="quick", TemplateBody=json.dumps(QUEUE), TimeoutInMinutes=5)
    assert settle(cfn, "quick")["StackStatus"] == "CREATE_COMPLETE"
    server.advance_clock(600)
    time.sleep(0.2)
    assert cfn.describe_stacks(StackName="quick")["Stacks"][0]["StackStatus"] == "CREATE_COMPLETE"


def tokens(cfn, stack):
    return {e.get("ClientRequestToken") for e in cfn.describe_stack_events(StackName=stack)["StackEvents"]}


def test_a_client_request_token_makes_retries_idempotent_and_marks_the_events(cfn):
    first = cfn.create_stack(StackName="tok", TemplateBody=json.dumps(QUEUE), ClientRequestToken="create-1")
    again = cfn.create_stack(StackName="tok", TemplateBody=json.dumps(QUEUE), ClientRequestToken="create-1")
    assert again["StackId"] == first["StackId"]
    assert settle(cfn, "tok")["StackStatus"] == "CREATE_COMPLETE"
    assert tokens(cfn, "tok") == {"create-1"}
    # Another CreateStack of that name, without the token or with another, is refused.
    for kwargs in ({}, {"ClientRequestToken": "create-2"}):
        with pytest.raises(ClientError) as e:
            cfn.create_stack(StackName="tok", TemplateBody=json.dumps(QUEUE), **kwargs)
        assert error(e)["Code"] == "AlreadyExistsException"
    # A different request with a used token.
    changed = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}}}
    with pytest.raises(ClientError) as e:
        cfn.update_stack(StackName="tok", TemplateBody=json.dumps(changed), ClientRequestToken="create-1")
    assert error(e)["Code"] == "TokenAlreadyExistsException"
    assert e.value.response["ResponseMetadata"]["HTTPStatusCode"] == 400
    cfn.update_stack(StackName="tok", TemplateBody=json.dumps(changed), ClientRequestToken="update-1")
    assert settle(cfn, "tok")["StackStatus"] == "UPDATE_COMPLETE"
    count = len(cfn.describe_stack_events(StackName="tok")["StackEvents"])
    retry = cfn.update_stack(StackName="tok", TemplateBody=json.dumps(changed), ClientRequestToken="update-1")
    assert retry["StackId"] == first["StackId"]
    assert len(cfn.describe_stack_events(StackName="tok")["StackEvents"]) == count
    assert tokens(cfn, "tok") == {"create-1", "update-1"}
    with pytest.raises(ClientError) as e:
        cfn.delete_stack(StackName="tok", ClientRequestToken="update-1")
    assert error(e)["Code"] == "TokenAlreadyExistsException"
    cfn.delete_stack(StackName="tok", ClientRequestToken="delete-1")
    cfn.delete_stack(StackName="tok", ClientRequestToken="delete-1")
    assert deleted(cfn, first["StackId"])["StackStatus"] == "DELETE_COMPLETE"
    assert tokens(cfn, first["StackId"]) == {"create-1", "update-1", "delete-1"}


def test_operations_without_a_token_have_events_without_one(cfn):
    cfn.create_stack(StackName="plain", TemplateBody=json.dumps(QUEUE))
    settle(cfn, "plain")
    assert tokens(cfn, "plain") == {None}


def test_a_change_set_execution_carries_its_token(cfn):
    cfn.create_change_set(StackName="cs", ChangeSetName="one", ChangeSetType="CREATE",
                          TemplateBody=json.dumps(QUEUE))
    until(lambda: cfn.describe_change_set(StackName="cs", ChangeSetName="one")["Status"] == "CREATE_COMPLETE")
    cfn.execute_change_set(StackName="cs", ChangeSetName="one", ClientRequestToken="exec-1")
    assert settle(cfn, "cs")["StackStatus"] == "CREATE_COMPLETE"
    assert "exec-1" in tokens(cfn, "cs")


def alarm(client, name, state="OK"):
    cw = client("cloudwatch")
    cw.put_metric_alarm(AlarmName=name, MetricName="Errors", Namespace="App", Statistic="Sum",
                        Period=60, EvaluationPeriods=1, Threshold=1,
                        ComparisonOperator="GreaterThanOrEqualToThreshold")
    cw.set_alarm_state(AlarmName=name, StateValue=state, StateReason="test")
    return cw.describe_alarms(AlarmNames=[name])["MetricAlarms"][0]["AlarmArn"]


def triggers(*arns, kind="AWS::CloudWatch::Alarm", minutes=0):
    return {"RollbackTriggers": [{"Arn": a, "Type": kind} for a in arns],
            "MonitoringTimeInMinutes": minutes}


def test_rollback_triggers_are_checked_when_given(cfn, client):
    arn = alarm(client, "health")
    bad = [
        ({"RollbackTriggers": [{"Arn": arn, "Type": "AWS::SNS::Topic"}]}, "Unsupported rollback trigger type"),
        ({"RollbackTriggers": [{"Arn": "arn:aws:sns:us-east-1:000000000000:topic", "Type": "AWS::CloudWatch::Alarm"}]},
         "is not a CloudWatch alarm's ARN"),
        (triggers(arn, arn), "is specified more than once"),
    ]
    for config, message in bad:
        with pytest.raises(ClientError) as e:
            cfn.create_stack(StackName="bad", TemplateBody=json.dumps(QUEUE), RollbackConfiguration=config)
        assert error(e)["Code"] == "ValidationError" and message in error(e)["Message"]
    cfn.create_stack(StackName="good", TemplateBody=json.dumps(QUEUE), RollbackConfiguration=triggers(arn))
    stack = settle(cfn, "good")
    assert stack["StackStatus"] == "CREATE_COMPLETE"
    assert stack["RollbackConfiguration"] == {
        "RollbackTriggers": [{"Arn": arn, "Type": "AWS::CloudWatch::Alarm"}], "MonitoringTimeInMinutes": 0}


def test_a_missing_trigger_alarm_rolls_the_creation_back(cfn, client):
    arn = alarm(client, "health")
    missing = arn.replace(":alarm:health", ":alarm:gone")
    cfn.create_stack(StackName="missing", TemplateBody=json.dumps(QUEUE), RollbackConfiguration=triggers(missing))
    assert settle(cfn, "missing")["StackStatus"] == "ROLLBACK_COMPLETE"
    assert ("ROLLBACK_IN_PROGRESS",
            f"Rollback trigger [{missing}] does not exist. Rollback requested by user.") in stack_reasons(cfn, "missing")
    # A metric alarm named as a composite alarm is not found either.
    cfn.create_stack(StackName="kind", TemplateBody=json.dumps(QUEUE),
                     RollbackConfiguration=triggers(arn, kind="AWS::CloudWatch::CompositeAlarm"))
    assert settle(cfn, "kind")["StackStatus"] == "ROLLBACK_COMPLETE"


def test_an_alarm_in_alarm_during_creation_rolls_it_back(cfn, client):
    arn = alarm(client, "health")
    cfn.create_stack(StackName="watched", TemplateBody=json.dumps(WAITING), RollbackConfiguration=triggers(arn))
    waiting(cfn, "watched")
    client("cloudwatch").set_alarm_state(AlarmName="health", StateValue="ALARM", StateReason="errors")
    stack = settle(cfn, "watched")
    assert stack["StackStatus"] == "ROLLBACK_COMPLETE", events(cfn, "watched")
    assert ("ROLLBACK_IN_PROGRESS",
            f"Rollback trigger [{arn}] is in ALARM state. Rollback requested by user.") in stack_reasons(cfn, "watched")
    assert ("Wait", "CREATE_FAILED", "Resource creation cancelled") in events(cfn, "watched")


def delayed(seconds):
    return {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": seconds}}}}


def test_triggers_are_watched_for_the_monitoring_time(cfn, client, server):
    arn = alarm(client, "health")
    cfn.create_stack(StackName="monitored", TemplateBody=json.dumps(delayed(3)),
                     RollbackConfiguration=triggers(arn, minutes=1))
    until(lambda: ("Queue", "CREATE_COMPLETE", None) in events(cfn, "monitored"))
    time.sleep(0.3)
    assert cfn.describe_stacks(StackName="monitored")["Stacks"][0]["StackStatus"] == "CREATE_IN_PROGRESS"
    server.advance_clock(61)
    assert settle(cfn, "monitored")["StackStatus"] == "CREATE_COMPLETE"
    # An update whose alarm goes off in its monitoring time rolls back.
    cfn.update_stack(StackName="monitored", TemplateBody=json.dumps(delayed(5)))
    until(lambda: ("Queue", "UPDATE_COMPLETE", None) in events(cfn, "monitored"))
    client("cloudwatch").set_alarm_state(AlarmName="health", StateValue="ALARM", StateReason="errors")
    stack = settle(cfn, "monitored")
    assert stack["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE", events(cfn, "monitored")
    assert ("UPDATE_ROLLBACK_IN_PROGRESS", f"Rollback trigger [{arn}] is in ALARM state. ") in stack_reasons(
        cfn, "monitored")
    url = client("sqs").get_queue_url(QueueName=cfn.describe_stack_resource(
        StackName="monitored", LogicalResourceId="Queue")["StackResourceDetail"]["PhysicalResourceId"].rsplit("/", 1)[1])
    attrs = client("sqs").get_queue_attributes(QueueUrl=url["QueueUrl"], AttributeNames=["DelaySeconds"])
    assert attrs["Attributes"]["DelaySeconds"] == "3"


def test_an_update_can_replace_or_clear_the_triggers(cfn, client):
    arn = alarm(client, "health", state="ALARM")
    cfn.create_stack(StackName="cleared", TemplateBody=json.dumps(QUEUE))
    settle(cfn, "cleared")
    changed = {"Resources": {"Queue": {"Type": "AWS::SQS::Queue", "Properties": {"DelaySeconds": 5}}}}
    cfn.update_stack(StackName="cleared", TemplateBody=json.dumps(changed), RollbackConfiguration=triggers(arn))
    assert settle(cfn, "cleared")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    # The triggers stay with the stack: the next update without them is watched too.
    cfn.update_stack(StackName="cleared", TemplateBody=json.dumps(changed))
    assert settle(cfn, "cleared")["StackStatus"] == "UPDATE_ROLLBACK_COMPLETE"
    # An empty list clears them.
    cfn.update_stack(StackName="cleared", TemplateBody=json.dumps(changed),
                     RollbackConfiguration={"RollbackTriggers": []})
    stack = settle(cfn, "cleared")
    assert stack["StackStatus"] == "UPDATE_COMPLETE"
    assert stack["RollbackConfiguration"] == {"RollbackTriggers": [], "MonitoringTimeInMinutes": 0}
