"""--enforce-iam and iam:PassRole: a call that hands a role to its service (Lambda's
CreateFunction and UpdateFunctionConfiguration, Step Functions' CreateStateMachine,
EventBridge's PutTargets, Scheduler's CreateSchedule) also needs iam:PassRole on that role,
with iam:PassedToService naming the service; denials in each protocol's shape."""

from __future__ import annotations

import io
import json
import zipfile

import pytest

from access_helpers import ACCOUNT, client, enforcing_server, user
from s3_helpers import fails
ROLE = f"arn:aws:iam::{ACCOUNT}:role/service-role"


server = enforcing_server("--lambda-executor", "none")


@pytest.fixture(autouse=True)
def clean(server):
    trust = {"Version": "2012-10-17", "Statement": [{"Effect": "Allow", "Action": "sts:AssumeRole",
             "Principal": {"Service": ["lambda.amazonaws.com", "states.amazonaws.com",
                                       "events.amazonaws.com", "scheduler.amazonaws.com"]}}]}
    client(server, "iam").create_role(RoleName="service-role", AssumeRolePolicyDocument=json.dumps(trust))
    yield
    server.reset()


def allow(action, **extra):
    return {"Effect": "Allow", "Action": action, "Resource": "*", **extra}


def pass_role_denied(arn, role=ROLE):
    return (f"User: {arn} is not authorized to perform: iam:PassRole on resource: {role} "
            f"because no identity-based policy allows the iam:PassRole action")


def zipped():
    buf = io.BytesIO()
    with zipfile.ZipFile(buf, "w") as z:
        z.writestr("index.py", "def handler(event, context):\n    return event\n")
    return buf.getvalue()


def create_function(lam, name="f", role=ROLE):
    return lam.create_function(FunctionName=name, Runtime="python3.12", Role=role, Handler="index.handler",
                               Code={"ZipFile": zipped()})


def test_lambda_create_function_needs_pass_role_for_lambda(server):
    arn, as_user = user(server, "alice", allow("lambda:*"))
    fails(lambda: create_function(as_user("lambda")), "AccessDeniedException", 403, pass_role_denied(arn))
    _, as_bob = user(server, "bob", allow("lambda:*"), allow("iam:PassRole", Condition={
        "StringEquals": {"iam:PassedToService": "states.amazonaws.com"}}))
    fails(lambda: create_function(as_bob("lambda")), "AccessDeniedException", 403)
    _, as_carol = user(server, "carol", allow("lambda:*"), {
        "Effect": "Allow", "Action": "iam:PassRole", "Resource": ROLE,
        "Condition": {"StringEquals": {"iam:PassedToService": "lambda.amazonaws.com"}}})
    assert create_function(as_carol("lambda"))["Role"] == ROLE


def test_lambda_configuration_update_passing_a_role_needs_pass_role(server):
    create_function(client(server, "lambda"))
    arn, as_user = user(server, "alice", allow("lambda:*"))
    lam = as_user("lambda")
    lam.update_function_configuration(FunctionName="f", Timeout=10)
    fails(lambda: lam.update_function_configuration(FunctionName="f", Role=ROLE), "AccessDeniedException", 403,
          pass_role_denied(arn))


def test_an_explicit_deny_of_pass_role_wins_for_that_role(server):
    other = client(server, "iam").create_role(RoleName="other", AssumeRolePolicyDocument=json.dumps({
        "Version": "2012-10-17", "Statement": []}))["Role"]["Arn"]
    _, as_user = user(server, "alice", allow("lambda:*"), allow("iam:PassRole"),
                      {"Effect": "Deny", "Action": "iam:PassRole", "Resource": other})
    lam = as_user("lambda")
    create_function(lam)
    error = fails(lambda: create_function(lam, "g", other), "AccessDeniedException", 403)
    assert error["Message"].endswith("with an explicit deny in an identity-based policy")


def test_root_passes_any_role_of_its_account(server):
    create_function(client(server, "lambda"))


def test_step_functions_create_state_machine_needs_pass_role(server):
    definition = json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}})
    arn, as_user = user(server, "alice", allow("states:*"))
    sfn = as_user("stepfunctions")
    fails(lambda: sfn.create_state_machine(name="m", definition=definition, roleArn=ROLE),
          "AccessDeniedException", 400, pass_role_denied(arn))
    _, as_bob = user(server, "bob", allow("states:*"), allow("iam:PassRole", Condition={
        "StringEquals": {"iam:PassedToService": "states.amazonaws.com"}}))
    as_bob("stepfunctions").create_state_machine(name="m", definition=definition, roleArn=ROLE)


def test_eventbridge_targets_with_a_role_need_pass_role(server):
    client(server, "events").put_rule(Name="r", EventPattern=json.dumps({"source": ["app"]}))
    queue = client(server, "sqs").create_queue(QueueName="q")["QueueUrl"]
    queue_arn = client(server, "sqs").get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])[
        "Attributes"]["QueueArn"]
    arn, as_user = user(server, "alice", allow("events:*"))
    events = as_user("events")
    events.put_targets(Rule="r", Targets=[{"Id": "plain", "Arn": queue_arn}])
    bus = f"arn:aws:events:us-east-1:{ACCOUNT}:event-bus/other"
    fails(lambda: events.put_targets(Rule="r", Targets=[{"Id": "bus", "Arn": bus, "RoleArn": ROLE}]),
          "AccessDeniedException", 400, pass_role_denied(arn))


def test_scheduler_schedules_need_pass_role(server):
    target = {"Arn": f"arn:aws:sqs:us-east-1:{ACCOUNT}:q", "RoleArn": ROLE}
    arn, as_user = user(server, "alice", allow("scheduler:*"))
    fails(lambda: as_user("scheduler").create_schedule(
        Name="s", ScheduleExpression="rate(1 hour)", FlexibleTimeWindow={"Mode": "OFF"}, Target=target),
        "AccessDeniedException", 403, pass_role_denied(arn))
    _, as_bob = user(server, "bob", allow("scheduler:*"), allow("iam:PassRole"))
    as_bob("scheduler").create_schedule(Name="s", ScheduleExpression="rate(1 hour)",
                                        FlexibleTimeWindow={"Mode": "OFF"}, Target=target)
