"""Step Functions' service integrations through boto3, against the real services of the
same server: Lambda (`lambda:invoke` and a plain function ARN, function errors caught by
name), the `.waitForTaskToken` callback (SendTaskSuccess, SendTaskFailure,
SendTaskHeartbeat and the heartbeat timeout on the server clock), SQS, SNS, DynamoDB,
nested executions with `.sync` and `.sync:2`, and activities."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError

from lambda_helpers import ROLE as LAMBDA_ROLE
from lambda_helpers import zip_of
from sfn_helpers import error, finish, machine, output, run

HANDLER = """
class Refused(Exception):
    pass

def handler(event, context):
    if event.get("fail"):
        raise Refused("no thanks")
    return {"doubled": event["n"] * 2}
"""


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


def function(client, name="double"):
    lam = client("lambda")
    out = lam.create_function(FunctionName=name, Runtime="python3.12", Role=LAMBDA_ROLE, Handler="app.handler",
                              Code={"ZipFile": zip_of({"app.py": HANDLER})})
    lam.get_waiter("function_active_v2").wait(FunctionName=name)
    return out["FunctionArn"]


def queue(client, name="work"):
    sqs = client("sqs")
    url = sqs.create_queue(QueueName=name)["QueueUrl"]
    return sqs, url


def one_message(sqs, url, timeout=10):
    deadline = time.time() + timeout
    while time.time() < deadline:
        got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=1).get("Messages", [])
        if got:
            return json.loads(got[0]["Body"])
    raise AssertionError("no message")


def test_lambda_invoke_and_function_arn_with_errors_caught_by_name(client, sfn):
    arn = function(client)
    states = {
        "Invoke": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke",
                   "Parameters": {"FunctionName": "double", "Payload.$": "$"}, "ResultSelector": {"p.$": "$.Payload", "s.$": "$.StatusCode"},
                   "ResultPath": "$.invoked", "Next": "Plain"},
        "Plain": {"Type": "Task", "Resource": arn, "InputPath": "$.invoked.p", "Parameters": {"n.$": "$.doubled"}, "Next": "Fail"},
        "Fail": {"Type": "Task", "Resource": arn, "Parameters": {"fail": True},
                 "Catch": [{"ErrorEquals": ["Refused"], "ResultPath": "$.caught", "Next": "Done"}], "Next": "Done"},
        "Done": {"Type": "Pass", "End": True},
    }
    out = output(run(sfn, states, {"n": 3}))
    assert out["doubled"] == 12
    assert out["caught"]["Error"] == "Refused" and "no thanks" in out["caught"]["Cause"]
    out = output(run(sfn, {"I": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": arn, "Payload": {"n": 1}}, "End": True}},
                     name="raw"))
    assert out["Payload"] == {"doubled": 2} and out["StatusCode"] == 200
    failed = run(sfn, {"I": {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "missing"}, "End": True}}, name="gone")
    assert failed["status"] == "FAILED" and failed["error"] == "Lambda.ResourceNotFoundException"


def callback_machine(sfn, name="cb", heartbeat=None):
    task = {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
            "Parameters": {"QueueUrl.$": "$.url", "MessageBody": {"token.$": "$$.Task.Token", "order.$": "$.order"}}, "End": True}
    if heartbeat:
        task["HeartbeatSeconds"] = heartbeat
    return machine(sfn, {"Wait": task}, name=name)


def test_wait_for_task_token_success_failure_and_heartbeat(client, sfn, server):
    sqs, url = queue(client)
    arn = callback_machine(sfn, heartbeat=60)
    ok = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"url": url, "order": 1}))["executionArn"]
    body = one_message(sqs, url)
    assert body["order"] == 1 and len(body["token"]) > 100
    sfn.send_task_heartbeat(taskToken=body["token"])
    sfn.send_task_success(taskToken=body["token"], output='{"paid": true}')
    assert output(finish(sfn, ok)) == {"paid": True}
    with pytest.raises(ClientError) as e:
        sfn.send_task_success(taskToken=body["token"], output="{}")
    assert error(e) == ("TaskTimedOut", "Task Timed Out: 'Provided task does not exist anymore'")
    with pytest.raises(ClientError) as e:
        sfn.send_task_success(taskToken="nonsense", output="{}")
    assert error(e)[0] == "InvalidToken"

    bad = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"url": url, "order": 2}))["executionArn"]
    token = one_message(sqs, url)["token"]
    with pytest.raises(ClientError) as e:
        sfn.send_task_success(taskToken=token, output="{not json")
    assert error(e)[0] == "InvalidOutput"
    sfn.send_task_failure(taskToken=token, error="Declined", cause="card")
    d = finish(sfn, bad)
    assert (d["status"], d["error"], d["cause"]) == ("FAILED", "Declined", "card")

    silent = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"url": url, "order": 3}))["executionArn"]
    one_message(sqs, url)
    server.advance_clock(61)
    d = finish(sfn, silent)
    assert (d["status"], d["error"]) == ("FAILED", "States.HeartbeatTimeout")
    kinds = [e["type"] for e in sfn.get_execution_history(executionArn=silent)["events"]]
    assert kinds[-2:] == ["TaskTimedOut", "ExecutionFailed"]


def test_sqs_sns_and_dynamodb_integrations(client, sfn):
    sqs, url = queue(client, "plain")
    sns = client("sns")
    topic = sns.create_topic(Name="t")["TopicArn"]
    ddb = client("dynamodb")
    ddb.create_table(TableName="orders", KeySchema=[{"AttributeName": "id", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "id", "AttributeType": "S"}], BillingMode="PAY_PER_REQUEST")
    states = {
        "Send": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage", "Parameters": {"QueueUrl": url, "MessageBody.$": "$.msg"},
                 "ResultPath": "$.sent", "Next": "Publish"},
        "Publish": {"Type": "Task", "Resource": "arn:aws:states:::sns:publish", "Parameters": {"TopicArn": topic, "Message": "hi"},
                    "ResultPath": "$.published", "Next": "Put"},
        "Put": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:putItem",
                "Parameters": {"TableName": "orders", "Item": {"id": {"S.$": "$.id"}, "n": {"N": "1"}}}, "ResultPath": None, "Next": "Update"},
        "Update": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:updateItem",
                   "Parameters": {"TableName": "orders", "Key": {"id": {"S.$": "$.id"}}, "UpdateExpression": "SET n = n + :one",
                                  "ExpressionAttributeValues": {":one": {"N": "1"}}, "ReturnValues": "ALL_NEW"},
                   "ResultSelector": {"n.$": "$.Attributes.n.N"}, "ResultPath": "$.updated", "Next": "Get"},
        "Get": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem", "Parameters": {"TableName": "orders", "Key": {"id": {"S.$": "$.id"}}},
                "ResultSelector": {"item.$": "$.Item"}, "ResultPath": "$.got", "Next": "Delete"},
        "Delete": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:deleteItem", "Parameters": {"TableName": "orders", "Key": {"id": {"S.$": "$.id"}}},
                   "ResultPath": None, "Next": "Missing"},
        "Missing": {"Type": "Task", "Resource": "arn:aws:states:::dynamodb:getItem", "Parameters": {"TableName": "nope", "Key": {"id": {"S": "x"}}},
                    "Catch": [{"ErrorEquals": ["DynamoDB.ResourceNotFoundException"], "ResultPath": "$.missing", "Next": "Done"}], "Next": "Done"},
        "Done": {"Type": "Pass", "End": True},
    }
    out = output(run(sfn, states, {"msg": "hello", "id": "o-1"}))
    assert out["sent"]["MessageId"] and out["published"]["MessageId"]
    assert out["updated"] == {"n": "2"} and out["got"]["item"] == {"id": {"S": "o-1"}, "n": {"N": "2"}}
    assert out["missing"]["Error"] == "DynamoDB.ResourceNotFoundException"
    assert one_message_text(sqs, url) == "hello"
    assert "Item" not in ddb.get_item(TableName="orders", Key={"id": {"S": "o-1"}})


def one_message_text(sqs, url):
    got = sqs.receive_message(QueueUrl=url, WaitTimeSeconds=2)["Messages"]
    return got[0]["Body"]


def test_nested_executions_sync_and_sync2(sfn):
    child = machine(sfn, {"C": {"Type": "Pass", "Parameters": {"got.$": "$.v"}, "End": True}}, name="child")
    failing = machine(sfn, {"F": {"Type": "Fail", "Error": "ChildError", "Cause": "c"}}, name="failing")
    states = {
        "Sync": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
                 "Parameters": {"StateMachineArn": child, "Input": {"v": 1}}, "ResultSelector": {"out.$": "$.Output", "status.$": "$.Status"},
                 "ResultPath": "$.one", "Next": "Sync2"},
        "Sync2": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                  "Parameters": {"StateMachineArn": child, "Input": {"v": 2}}, "ResultSelector": {"out.$": "$.Output"},
                  "ResultPath": "$.two", "Next": "Bad"},
        "Bad": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync",
                "Parameters": {"StateMachineArn": failing}, "Catch": [{"ErrorEquals": ["States.TaskFailed"], "ResultPath": "$.bad", "Next": "Done"}],
                "Next": "Done"},
        "Done": {"Type": "Pass", "End": True},
    }
    out = output(run(sfn, states, {}, name="parent"))
    assert out["one"] == {"out": '{"got":1}', "status": "SUCCEEDED"}
    assert out["two"] == {"out": {"got": 2}}
    assert out["bad"]["Error"] == "States.TaskFailed"


def test_activities_hand_work_to_a_worker(sfn):
    activity = sfn.create_activity(name="work")["activityArn"]
    arn = machine(sfn, {"A": {"Type": "Task", "Resource": activity, "End": True}}, name="act")
    execution = sfn.start_execution(stateMachineArn=arn, input='{"job": 1}')["executionArn"]
    task = sfn.get_activity_task(activityArn=activity, workerName="w")
    assert json.loads(task["input"]) == {"job": 1}
    sfn.send_task_success(taskToken=task["taskToken"], output='{"done": 1}')
    assert output(finish(sfn, execution)) == {"done": 1}


SLEEPY = """
import time

def handler(event, context):
    time.sleep(event["sleep"])
    return event
"""


def test_task_timeouts_are_recorded_by_resource_kind(client, sfn, server):
    lam = client("lambda")
    sleepy = lam.create_function(FunctionName="sleepy", Runtime="python3.12", Role=LAMBDA_ROLE, Handler="app.handler",
                                 Code={"ZipFile": zip_of({"app.py": SLEEPY})}, Timeout=60)["FunctionArn"]
    lam.get_waiter("function_active_v2").wait(FunctionName="sleepy")
    activity = sfn.create_activity(name="idle")["activityArn"]
    started = {}
    for name, resource in (("lambda", sleepy), ("activity", activity)):
        arn = machine(sfn, {"T": {"Type": "Task", "Resource": resource, "TimeoutSeconds": 30, "End": True}}, name=name)
        started[name] = sfn.start_execution(stateMachineArn=arn, input='{"sleep": 20}')["executionArn"]
    for arn in started.values():
        deadline = time.time() + 10
        while not any(e["type"] in ("LambdaFunctionStarted", "ActivityScheduled")
                      for e in sfn.get_execution_history(executionArn=arn)["events"]):
            assert time.time() < deadline
            time.sleep(0.05)
    server.advance_clock(31)
    for name, kind, key in (("lambda", "LambdaFunctionTimedOut", "lambdaFunctionTimedOutEventDetails"),
                            ("activity", "ActivityTimedOut", "activityTimedOutEventDetails")):
        d = finish(sfn, started[name])
        assert (d["status"], d["error"]) == ("FAILED", "States.Timeout")
        events = sfn.get_execution_history(executionArn=started[name])["events"]
        assert [e["type"] for e in events][-2:] == [kind, "ExecutionFailed"]
        assert events[-2][key]["error"] == "States.Timeout"
