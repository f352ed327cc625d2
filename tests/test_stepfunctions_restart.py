"""Step Functions executions survive a restart of the real binary on the same --data-dir: a
running execution goes on where it stood (a Wait keeps its deadline on the server clock, a
callback its task token, a Parallel its finished branches) without repeating its events."""

from __future__ import annotations

import json
import time

import boto3
from botocore.config import Config

from roto_server import RotoServer
from sfn_helpers import finish, history, machine


def clients(server):
    def make(service):
        return boto3.client(service, endpoint_url=server.endpoint, region_name="us-east-1",
                            aws_access_key_id="test", aws_secret_access_key="test",
                            config=Config(retries={"max_attempts": 1}))
    return make("stepfunctions"), make("sqs")


def kinds(events):
    return [e["type"] for e in events]


def wait_for_events(sfn, arn, kind, count=1, timeout=10.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        if kinds(history(sfn, arn)).count(kind) >= count:
            return
        time.sleep(0.02)
    raise AssertionError(f"no {kind} in {arn}")


def test_running_executions_go_on_after_a_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        sfn, sqs = clients(s)
        url = sqs.create_queue(QueueName="callbacks")["QueueUrl"]
        waits = machine(sfn, {
            "A": {"Type": "Pass", "Result": 1, "ResultPath": "$.a", "Next": "W"},
            "W": {"Type": "Wait", "Seconds": 3600, "Next": "B"},
            "B": {"Type": "Pass", "Parameters": {"a.$": "$.a", "v.$": "$v"}, "End": True},
        }, name="waits", QueryLanguage="JSONPath")
        sfn.update_state_machine(stateMachineArn=waits, definition=json.dumps({
            "StartAt": "A", "States": {
                "A": {"Type": "Pass", "Result": 1, "ResultPath": "$.a", "Assign": {"v": "kept"}, "Next": "W"},
                "W": {"Type": "Wait", "Seconds": 3600, "Next": "B"},
                "B": {"Type": "Pass", "Parameters": {"a.$": "$.a", "v.$": "$v"}, "End": True}}}))
        callback = machine(sfn, {
            "Send": {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                     "Parameters": {"QueueUrl": url, "MessageBody": {"token.$": "$$.Task.Token"}},
                     "HeartbeatSeconds": 600, "Next": "Done"},
            "Done": {"Type": "Pass", "End": True},
        }, name="callback")
        branches = machine(sfn, {"P": {"Type": "Parallel", "Branches": [
            {"StartAt": "Fast", "States": {"Fast": {"Type": "Pass", "Result": "fast", "End": True}}},
            {"StartAt": "Slow", "States": {"Slow": {"Type": "Wait", "Seconds": 600, "Next": "Tail"},
                                           "Tail": {"Type": "Pass", "Result": "slow", "End": True}}},
        ], "End": True}}, name="branches")
        iterations = machine(sfn, {"M": {"Type": "Map", "ItemProcessor": {"StartAt": "Hold", "States": {
            "Hold": {"Type": "Wait", "SecondsPath": "$", "End": True}}}, "End": True}}, name="iterations")
        w = sfn.start_execution(stateMachineArn=waits, input='{"x": 1}')["executionArn"]
        m = sfn.start_execution(stateMachineArn=iterations, input="[0, 600, 0]")["executionArn"]
        c = sfn.start_execution(stateMachineArn=callback, input="{}")["executionArn"]
        p = sfn.start_execution(stateMachineArn=branches, input="{}")["executionArn"]
        wait_for_events(sfn, w, "WaitStateEntered")
        wait_for_events(sfn, c, "TaskSubmitted")
        wait_for_events(sfn, p, "WaitStateEntered")
        wait_for_events(sfn, m, "MapIterationSucceeded", 2)
        before = {arn: len(history(sfn, arn)) for arn in (w, c, p)}
        entered = next(e for e in history(sfn, w) if e["type"] == "WaitStateEntered")["timestamp"].timestamp()
        time.sleep(3)  # a Wait that started again at the restart would end 3 s late

    with RotoServer("--data-dir", data) as s:
        sfn, sqs = clients(s)
        for arn in (w, c, p, m):
            assert sfn.describe_execution(executionArn=arn)["status"] == "RUNNING"
        # The callback's message was sent once, and its token still answers the task.
        messages = sqs.receive_message(QueueUrl=url, MaxNumberOfMessages=10, WaitTimeSeconds=1)["Messages"]
        assert len(messages) == 1
        token = json.loads(messages[0]["Body"])["token"]
        sfn.send_task_success(taskToken=token, output='{"answered": true}')
        done = finish(sfn, c)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == {"answered": True}
        assert kinds(history(sfn, c)).count("TaskScheduled") == 1

        # The Wait counts from when it was entered, on the server clock: moved to one second
        # past that hour, it ends.
        now = json.loads(s.request("GET", "/_roto/clock")[2])["now_millis"] / 1000
        s.advance_clock(entered + 3601 - now)
        done = finish(sfn, w, timeout=1.5)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == {"a": 1, "v": "kept"}
        events = history(sfn, w)
        assert kinds(events).count("WaitStateEntered") == 1 and kinds(events).count("PassStateEntered") == 2
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        assert events[before[w]]["previousEventId"] == before[w]

        done = finish(sfn, p)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == ["fast", "slow"]
        events = history(sfn, p)
        names = [e["stateEnteredEventDetails"]["name"] for e in events if "stateEnteredEventDetails" in e]
        assert names.count("Fast") == 1 and names.count("Slow") == 1 and names.count("P") == 1
        assert kinds(events).count("ParallelStateStarted") == 1
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))

        done = finish(sfn, m)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == [0, 600, 0]
        events = history(sfn, m)
        assert kinds(events).count("MapIterationStarted") == 3 and kinds(events).count("WaitStateEntered") == 3
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))


def test_a_stopped_server_keeps_closed_executions_and_starts_nothing_new(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        sfn, _ = clients(s)
        arn = machine(sfn, {"F": {"Type": "Fail", "Error": "E"}})
        ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
        assert finish(sfn, ex)["status"] == "FAILED"
        count = len(history(sfn, ex))
    with RotoServer("--data-dir", data) as s:
        sfn, _ = clients(s)
        time.sleep(0.2)
        assert sfn.describe_execution(executionArn=ex)["status"] == "FAILED"
        assert len(history(sfn, ex)) == count
        # It can still be redriven after the restart.
        sfn.redrive_execution(executionArn=ex)
        assert finish(sfn, ex)["redriveCount"] == 1


def test_a_task_call_in_flight_at_a_kill_fails_into_its_retry_and_a_sync_child_is_not_started_again(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        sfn, sqs = clients(s)
        url = sqs.create_queue(QueueName="slow")["QueueUrl"]
        poll = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:receiveMessage",
                "Parameters": {"QueueUrl": url, "WaitTimeSeconds": 20}, "ResultSelector": {"n.$": "States.ArrayLength($.Messages)"}}
        retried = machine(sfn, {"Poll": {**poll, "Retry": [{"ErrorEquals": ["States.TaskFailed"], "IntervalSeconds": 1,
                                                             "MaxAttempts": 1}], "End": True}}, name="retried")
        bare = machine(sfn, {"Poll": {**poll, "End": True}}, name="bare")
        child = machine(sfn, {"Hold": {"Type": "Wait", "Seconds": 3600, "Next": "Out"},
                              "Out": {"Type": "Pass", "Result": "child done", "End": True}}, name="child")
        parent = machine(sfn, {"Run": {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution.sync:2",
                                       "Parameters": {"StateMachineArn": child}, "OutputPath": "$.Output", "End": True}},
                         name="parent")
        r = sfn.start_execution(stateMachineArn=retried)["executionArn"]
        b = sfn.start_execution(stateMachineArn=bare)["executionArn"]
        p = sfn.start_execution(stateMachineArn=parent)["executionArn"]
        wait_for_events(sfn, r, "TaskStarted")
        wait_for_events(sfn, b, "TaskStarted")
        wait_for_events(sfn, p, "TaskStarted")
        children = sfn.list_executions(stateMachineArn=child)["executions"]
        assert len(children) == 1
        wait_for_events(sfn, children[0]["executionArn"], "WaitStateEntered")
        entered = next(e for e in history(sfn, children[0]["executionArn"])
                       if e["type"] == "WaitStateEntered")["timestamp"].timestamp()
        s.kill()  # a graceful stop may end SQS's long polls first: their calls complete, empty

    with RotoServer("--data-dir", data) as s:
        sfn, sqs = clients(s)
        # The call in flight is not made again silently: it failed, its outcome unknown...
        done = finish(sfn, b)
        assert (done["status"], done["error"]) == ("FAILED", "States.TaskFailed")
        failed = [e for e in history(sfn, b) if e["type"] == "TaskFailed"]
        assert len(failed) == 1 and "in flight" in failed[0]["taskFailedEventDetails"]["cause"]
        assert kinds(history(sfn, b)).count("TaskScheduled") == 1
        # ...and a Retry that matches makes it again (at least once, as the policy says).
        wait_for_events(sfn, r, "TaskScheduled", 2)
        sqs.send_message(QueueUrl=url, MessageBody="m")
        done = finish(sfn, r, timeout=25)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == {"n": 1}
        events = history(sfn, r)
        assert kinds(events).count("TaskFailed") == 1 and kinds(events).count("TaskSucceeded") == 1
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        # The .sync task had started its child: it waits for that child, not a second one.
        assert sfn.describe_execution(executionArn=p)["status"] == "RUNNING"
        now = json.loads(s.request("GET", "/_roto/clock")[2])["now_millis"] / 1000
        s.advance_clock(entered + 3601 - now)
        done = finish(sfn, p)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == "child done"
        assert len(sfn.list_executions(stateMachineArn=child)["executions"]) == 1
        assert kinds(history(sfn, p)).count("TaskScheduled") == 1


def test_a_distributed_map_goes_on_with_its_own_map_run_after_a_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as s:
        sfn, _ = clients(s)
        arn = machine(sfn, {"M": {"Type": "Map", "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": "STANDARD"},
            "StartAt": "Hold", "States": {"Hold": {"Type": "Wait", "SecondsPath": "$", "End": True}}},
            "End": True}}, name="distributed")
        ex = sfn.start_execution(stateMachineArn=arn, input="[0, 3600, 0, 3600]")["executionArn"]
        wait_for_events(sfn, ex, "MapRunStarted")
        map_run = sfn.list_map_runs(executionArn=ex)["mapRuns"][0]["mapRunArn"]
        deadline = time.time() + 10
        while time.time() < deadline:
            counts = sfn.describe_map_run(mapRunArn=map_run)["executionCounts"]
            if counts["succeeded"] == 2 and counts["running"] == 2:
                break
            time.sleep(0.05)
        children = sfn.list_executions(mapRunArn=map_run)["executions"]
        waiting = [c["executionArn"] for c in children if c["status"] == "RUNNING"]
        assert len(children) == 4 and len(waiting) == 2
        for child in waiting:
            wait_for_events(sfn, child, "WaitStateEntered")
        entered = max(e["timestamp"].timestamp() for child in waiting
                      for e in history(sfn, child) if e["type"] == "WaitStateEntered")

    with RotoServer("--data-dir", data) as s:
        sfn, _ = clients(s)
        assert sfn.describe_execution(executionArn=ex)["status"] == "RUNNING"
        described = sfn.describe_map_run(mapRunArn=map_run)
        assert described["status"] == "RUNNING"
        for child in waiting:
            assert sfn.describe_execution(executionArn=child)["status"] == "RUNNING"
        now = json.loads(s.request("GET", "/_roto/clock")[2])["now_millis"] / 1000
        s.advance_clock(entered + 3601 - now)
        done = finish(sfn, ex)
        assert done["status"] == "SUCCEEDED" and json.loads(done["output"]) == [0, 3600, 0, 3600]
        # The same map run, the same four children: none started again, none repeated.
        assert [r["mapRunArn"] for r in sfn.list_map_runs(executionArn=ex)["mapRuns"]] == [map_run]
        children = sfn.list_executions(mapRunArn=map_run)["executions"]
        assert len(children) == 4 and {c["status"] for c in children} == {"SUCCEEDED"}
        described = sfn.describe_map_run(mapRunArn=map_run)
        assert described["status"] == "SUCCEEDED" and described["executionCounts"]["succeeded"] == 4
        assert described["executionCounts"]["total"] == 4 and described["itemCounts"]["succeeded"] == 4
        events = history(sfn, ex)
        assert kinds(events).count("MapRunStarted") == 1 and kinds(events).count("MapStateStarted") == 1
        assert [e["id"] for e in events] == list(range(1, len(events) + 1))
        for child in waiting:
            assert kinds(history(sfn, child)).count("WaitStateEntered") == 1
