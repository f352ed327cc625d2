"""RedriveExecution through boto3: a FAILED, ABORTED or TIMED_OUT STANDARD execution continues
from the state that did not finish, keeping what finished (the states before it, the Parallel
branches and Map iterations that succeeded); AWS's redrive fields, filter, event and errors."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError
from sfn_helpers import error, finish, history, machine


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


@pytest.fixture
def sqs(client):
    return client("sqs")


def queue_url(name, next_state=None):
    """A Task that needs queue `name` to exist: it fails until the queue is created."""
    state = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:getQueueUrl",
             "Parameters": {"QueueName": name}, "ResultSelector": {"url.$": "$.QueueUrl"}}
    return {**state, "Next": next_state} if next_state else {**state, "End": True}


def kinds(events):
    return [e["type"] for e in events]


def test_a_failed_execution_continues_from_the_failed_state(sfn, sqs):
    arn = machine(sfn, {
        "A": {"Type": "Pass", "Result": {"a": 1}, "ResultPath": "$.a", "Next": "B"},
        "B": {**queue_url("jobs", "C"), "ResultPath": "$.b"},
        "C": {"Type": "Pass", "Parameters": {"a.$": "$.a", "url.$": "$.b.url", "count.$": "$$.Execution.RedriveCount"}, "End": True},
    })
    ex = sfn.start_execution(stateMachineArn=arn, name="e1", input='{"x": 1}')["executionArn"]
    failed = finish(sfn, ex)
    assert failed["status"] == "FAILED" and failed["error"] == "Sqs.QueueDoesNotExistException"
    assert failed["redriveStatus"] == "REDRIVABLE" and "redriveStatusReason" not in failed
    assert failed["redriveCount"] == 0 and "redriveDate" not in failed
    first = len(history(sfn, ex))

    url = sqs.create_queue(QueueName="jobs")["QueueUrl"]
    date = sfn.redrive_execution(executionArn=ex)["redriveDate"]
    done = finish(sfn, ex)
    assert done["status"] == "SUCCEEDED", done
    assert json.loads(done["output"]) == {"a": {"a": 1}, "url": url, "count": 1}
    assert done["redriveCount"] == 1 and done["redriveDate"] == date
    assert (done["redriveStatus"], done["redriveStatusReason"]) == (
        "NOT_REDRIVABLE", "Execution is SUCCEEDED and cannot be redriven")
    assert "error" not in done and "cause" not in done

    events = history(sfn, ex)
    redriven = events[first]
    assert redriven["type"] == "ExecutionRedriven" and redriven["id"] == first + 1
    assert redriven["previousEventId"] == first
    assert redriven["executionRedrivenEventDetails"] == {"redriveCount": 1}
    assert kinds(events[first + 1:]) == ["TaskStateEntered", "TaskScheduled", "TaskStarted", "TaskSucceeded",
                                         "TaskStateExited", "PassStateEntered", "PassStateExited", "ExecutionSucceeded"]
    assert kinds(events).count("PassStateEntered") == 2  # A once, C once
    assert json.loads(events[first + 1]["stateEnteredEventDetails"]["input"]) == {"x": 1, "a": {"a": 1}}
    assert [e["id"] for e in events] == list(range(1, len(events) + 1))

    listed = sfn.list_executions(stateMachineArn=arn, redriveFilter="REDRIVEN")["executions"]
    assert [e["executionArn"] for e in listed] == [ex] and listed[0]["redriveCount"] == 1
    assert listed[0]["redriveDate"] == date
    assert sfn.list_executions(stateMachineArn=arn, redriveFilter="NOT_REDRIVEN")["executions"] == []


def test_only_the_failed_branches_and_iterations_run_again(server, sfn, sqs):
    item = {"StartAt": "Pick", "States": {
        "Pick": {"Type": "Choice", "Choices": [{"Variable": "$", "NumericEquals": 2, "Next": "Hold"}], "Default": "Easy"},
        "Hold": {"Type": "Wait", "Seconds": 5, "Next": "Need"},
        "Need": queue_url("items"),
        "Easy": {"Type": "Pass", "Result": "easy", "End": True},
    }}
    arn = machine(sfn, {"P": {"Type": "Parallel", "Branches": [
        {"StartAt": "Quick", "States": {"Quick": {"Type": "Pass", "Result": "quick", "End": True}}},
        {"StartAt": "Later", "States": {"Later": {"Type": "Wait", "Seconds": 5, "Next": "Slow"}, "Slow": queue_url("branch")}},
        {"StartAt": "M", "States": {"M": {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": item, "End": True}}},
    ], "End": True}})
    ex = sfn.start_execution(stateMachineArn=arn, input='{"items": [1, 2, 3]}')["executionArn"]
    time.sleep(0.2)  # what need not wait finishes before the waits end and fail
    server.advance_clock(6)
    assert finish(sfn, ex)["status"] == "FAILED"
    first = len(history(sfn, ex))

    branch = sqs.create_queue(QueueName="branch")["QueueUrl"]
    items = sqs.create_queue(QueueName="items")["QueueUrl"]
    sfn.redrive_execution(executionArn=ex)
    time.sleep(0.2)
    server.advance_clock(6)  # a wait stopped when the other side failed is entered again
    done = finish(sfn, ex)
    assert done["status"] == "SUCCEEDED", done
    assert json.loads(done["output"]) == ["quick", {"url": branch}, ["easy", {"url": items}, "easy"]]
    again = history(sfn, ex)[first:]
    names = [e["stateEnteredEventDetails"]["name"] for e in again if "stateEnteredEventDetails" in e]
    # Quick and the items other than 2 finished before: only what failed or was stopped runs again.
    assert "Quick" not in names and "Easy" not in names and "Pick" not in names
    assert names.count("Slow") == 1 and names.count("P") == 1 and names.count("M") == 1
    assert names.count("Need") == 1 and kinds(again).count("MapIterationStarted") == 1


def test_an_aborted_execution_is_redriven_once_per_client_token(server, sfn):
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": 100, "Next": "D"}, "D": {"Type": "Pass", "End": True}})
    ex = sfn.start_execution(stateMachineArn=arn, input="{}")["executionArn"]
    sfn.stop_execution(executionArn=ex, error="Stop", cause="test")
    assert finish(sfn, ex)["redriveStatus"] == "REDRIVABLE"
    date = sfn.redrive_execution(executionArn=ex, clientToken="token-1")["redriveDate"]
    assert sfn.describe_execution(executionArn=ex)["status"] == "RUNNING"
    assert sfn.redrive_execution(executionArn=ex, clientToken="token-1")["redriveDate"] == date
    with pytest.raises(ClientError) as e:
        sfn.redrive_execution(executionArn=ex, clientToken="token-2")
    assert error(e) == ("ExecutionNotRedrivable", "Execution is RUNNING and cannot be redriven")
    server.advance_clock(101)
    done = finish(sfn, ex)
    assert done["status"] == "SUCCEEDED" and done["redriveCount"] == 1
    events = history(sfn, ex)
    assert kinds(events).count("ExecutionRedriven") == 1
    assert kinds(events).count("WaitStateEntered") == 2


def test_a_timed_out_execution_can_be_redriven(server, sfn):
    seconds = "{% $states.context.Execution.RedriveCount = 0 ? 50 : 5 %}"
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": seconds, "End": True}}, TimeoutSeconds=10, QueryLanguage="JSONata")
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    server.advance_clock(11)
    assert finish(sfn, ex)["status"] == "TIMED_OUT"
    sfn.redrive_execution(executionArn=ex)
    server.advance_clock(6)
    assert finish(sfn, ex)["status"] == "SUCCEEDED"


def test_redrive_errors(server, sfn):
    arn = machine(sfn, {"F": {"Type": "Fail", "Error": "E"}}, name="fails")
    failed = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    assert finish(sfn, failed)["status"] == "FAILED"
    ok = machine(sfn, {"P": {"Type": "Pass", "End": True}}, name="ok")
    succeeded = sfn.start_execution(stateMachineArn=ok)["executionArn"]
    finish(sfn, succeeded)
    waits = machine(sfn, {"W": {"Type": "Wait", "Seconds": 100, "End": True}}, name="waits")
    running = sfn.start_execution(stateMachineArn=waits)["executionArn"]
    cases = [
        (succeeded, ("ExecutionNotRedrivable", "Execution is SUCCEEDED and cannot be redriven")),
        (running, ("ExecutionNotRedrivable", "Execution is RUNNING and cannot be redriven")),
        (failed.replace(":fails:", ":nope:"), ("ExecutionDoesNotExist", f"Execution Does Not Exist: '{failed.replace(':fails:', ':nope:')}'")),
        (arn, ("InvalidArn", "Invalid Arn: 'Resource type not valid in this context: stateMachine'")),
        ("nope", ("InvalidArn", "Invalid Arn: 'Invalid ARN prefix: nope'")),
    ]
    for target, expected in cases:
        with pytest.raises(ClientError) as e:
            sfn.redrive_execution(executionArn=target)
        assert error(e) == expected, target
    described = sfn.describe_execution(executionArn=running)
    assert (described["redriveStatus"], described["redriveStatusReason"]) == (
        "NOT_REDRIVABLE", "Execution is RUNNING and cannot be redriven")

    # Redriving the Fail state fails again, and counts.
    sfn.redrive_execution(executionArn=failed)
    again = finish(sfn, failed)
    assert (again["status"], again["error"], again["redriveCount"]) == ("FAILED", "E", 1)

    # Fourteen days after it closed, an execution can no longer be redriven.
    server.advance_clock(14 * 24 * 3600 + 60)
    described = sfn.describe_execution(executionArn=failed)
    assert (described["redriveStatus"], described["redriveStatusReason"]) == (
        "NOT_REDRIVABLE", "Execution redrivable period exceeded")
    with pytest.raises(ClientError) as e:
        sfn.redrive_execution(executionArn=failed)
    assert error(e) == ("ExecutionNotRedrivable", "Execution redrivable period exceeded")


def test_a_deleted_machine_s_executions_are_not_redriven(sfn):
    arn = machine(sfn, {"F": {"Type": "Fail", "Error": "E"}})
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    finish(sfn, ex)
    sfn.delete_state_machine(stateMachineArn=arn)
    with pytest.raises(ClientError) as e:
        sfn.redrive_execution(executionArn=ex)
    assert error(e) == ("ExecutionNotRedrivable", "State machine is in DELETING status")


def test_a_redrive_redrives_the_failed_children_of_the_same_map_run(server, sfn, sqs):
    child = {
        "Pick": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 2, "Next": "Hold"}], "Default": "Easy"},
        "Hold": {"Type": "Wait", "Seconds": 5, "Next": "Need"},
        "Need": queue_url("dmap"),
        "Easy": {"Type": "Pass", "Parameters": {"n.$": "$.n"}, "End": True},
    }
    arn = machine(sfn, {"M": {"Type": "Map", "Label": "lbl", "ItemsPath": "$.items", "End": True, "ItemProcessor": {
        "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"}, "StartAt": "Pick", "States": child}}})
    ex = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"items": [{"n": 1}, {"n": 2}, {"n": 3}]}))["executionArn"]
    time.sleep(0.3)
    server.advance_clock(6)
    assert finish(sfn, ex)["status"] == "FAILED"
    run = sfn.list_map_runs(executionArn=ex)["mapRuns"][0]["mapRunArn"]
    assert sfn.describe_map_run(mapRunArn=run)["status"] == "FAILED"
    children = sfn.list_executions(mapRunArn=run)["executions"]
    failed = [c["executionArn"] for c in children if c["status"] == "FAILED"]
    assert len(children) == 3 and len(failed) == 1
    assert sfn.describe_execution(executionArn=failed[0])["redriveStatus"] == "REDRIVABLE_BY_MAP_RUN"
    with pytest.raises(ClientError) as e:
        sfn.redrive_execution(executionArn=failed[0])
    assert error(e)[0] == "ExecutionNotRedrivable"

    url = sqs.create_queue(QueueName="dmap")["QueueUrl"]
    sfn.redrive_execution(executionArn=ex)
    done = finish(sfn, ex)
    assert done["status"] == "SUCCEEDED", done
    assert json.loads(done["output"]) == [{"n": 1}, {"url": url}, {"n": 3}]
    runs = sfn.list_map_runs(executionArn=ex)["mapRuns"]
    assert [r["mapRunArn"] for r in runs] == [run]
    described = sfn.describe_map_run(mapRunArn=run)
    assert described["status"] == "SUCCEEDED" and described["redriveCount"] == 1 and "redriveDate" in described
    assert described["itemCounts"]["succeeded"] == 3 and described["itemCounts"]["failed"] == 0
    assert described["executionCounts"]["total"] == 3 and described["executionCounts"]["pending"] == 0
    assert len(sfn.list_executions(mapRunArn=run)["executions"]) == 3
    again = sfn.describe_execution(executionArn=failed[0])
    assert again["status"] == "SUCCEEDED" and again["redriveCount"] == 1
    assert sfn.list_executions(mapRunArn=run, redriveFilter="REDRIVEN")["executions"][0]["executionArn"] == failed[0]
    redriven = [e for e in history(sfn, ex) if e["type"] == "MapRunRedriven"]
    assert [e["mapRunRedrivenEventDetails"] for e in redriven] == [{"mapRunArn": run, "redriveCount": 1}]
    assert "ExecutionRedriven" in kinds(history(sfn, failed[0]))
