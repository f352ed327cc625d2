"""Step Functions executions through boto3: the JSONPath interpreter (every state type,
input and output processing, intrinsic functions, Retry and Catch), waits on the server
clock, histories, and the execution APIs' errors."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError
from sfn_helpers import ROLE, error, finish, history, machine, output, run

@pytest.fixture
def sfn(client):
    return client("stepfunctions")


def test_pass_states_process_input_and_output(sfn):
    states = {
        "A": {"Type": "Pass", "InputPath": "$.user", "Parameters": {"name.$": "$.name", "greeting.$": "States.Format('Hi {}', $.name)", "id.$": "$$.Execution.Name", "fixed": [1, {"deep.$": "$.age"}]}, "ResultPath": "$.made", "Next": "B"},
        "B": {"Type": "Pass", "Result": {"x": 1}, "ResultPath": "$.sel", "OutputPath": "$", "Next": "C"},
        "C": {"Type": "Pass", "ResultPath": None, "OutputPath": "$.made", "End": True},
    }
    arn = machine(sfn, states)
    ex = sfn.start_execution(stateMachineArn=arn, name="run1", input=json.dumps({"user": {"name": "Ada", "age": 36}}))
    out = output(finish(sfn, ex["executionArn"]))
    assert out == {"name": "Ada", "greeting": "Hi Ada", "id": "run1", "fixed": [1, {"deep": 36}]}


def test_history_has_aws_event_types_ids_and_previous_ids(sfn):
    d = run(sfn, {"A": {"Type": "Pass", "Next": "B"}, "B": {"Type": "Succeed"}}, {"k": 1})
    events = history(sfn, d["executionArn"])
    assert [e["type"] for e in events] == ["ExecutionStarted", "PassStateEntered", "PassStateExited",
                                           "SucceedStateEntered", "SucceedStateExited", "ExecutionSucceeded"]
    assert [e["id"] for e in events] == [1, 2, 3, 4, 5, 6]
    assert [e.get("previousEventId") for e in events] == [None, 1, 2, 3, 4, 5]
    assert events[0]["executionStartedEventDetails"]["input"] == '{"k":1}'
    assert events[0]["executionStartedEventDetails"]["roleArn"] == ROLE
    assert events[1]["stateEnteredEventDetails"]["name"] == "A"
    assert json.loads(events[-1]["executionSucceededEventDetails"]["output"]) == {"k": 1}
    rev = sfn.get_execution_history(executionArn=d["executionArn"], reverseOrder=True, maxResults=2)
    assert [e["id"] for e in rev["events"]] == [6, 5] and "nextToken" in rev


def test_choice_rules_and_operators(sfn):
    rules = [
        {"And": [{"Variable": "$.n", "NumericGreaterThan": 5}, {"Not": {"Variable": "$.s", "StringEquals": "no"}}], "Next": "Big"},
        {"Variable": "$.s", "StringMatches": "log-*.txt", "Next": "Log"},
        {"Or": [{"Variable": "$.missing", "IsPresent": True}, {"Variable": "$.b", "BooleanEqualsPath": "$.t"}], "Next": "Bool"},
        {"Variable": "$.ts", "TimestampLessThan": "2030-01-01T00:00:00Z", "Next": "Early"},
    ]
    states = {"C": {"Type": "Choice", "Choices": rules, "Default": "Other"}}
    for name in ("Big", "Log", "Bool", "Early", "Other"):
        states[name] = {"Type": "Pass", "Result": name, "End": True}
    cases = [({"n": 9, "s": "x"}, "Big"), ({"n": 1, "s": "log-1.txt"}, "Log"),
             ({"n": 1, "s": "", "b": True, "t": True}, "Bool"),
             ({"n": 1, "s": "", "b": True, "t": False, "ts": "2024-01-01T00:00:00Z"}, "Early"),
             ({"n": 1, "s": "", "b": True, "t": False, "ts": "2031-01-01T00:00:00Z"}, "Other")]
    arn = machine(sfn, states)
    for i, (input, expected) in enumerate(cases):
        ex = sfn.start_execution(stateMachineArn=arn, name=f"c{i}", input=json.dumps(input))
        assert output(finish(sfn, ex["executionArn"])) == expected


def test_no_choice_matched_and_fail_states(sfn):
    d = run(sfn, {"C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 1, "Next": "X"}]}, "X": {"Type": "Succeed"}}, {"n": 2})
    assert d["status"] == "FAILED" and d["error"] == "States.NoChoiceMatched"
    d = run(sfn, {"F": {"Type": "Fail", "ErrorPath": "$.e", "Cause": "because"}}, {"e": "Custom.Error"}, name="f")
    assert (d["status"], d["error"], d["cause"]) == ("FAILED", "Custom.Error", "because")
    events = history(sfn, d["executionArn"])
    assert [e["type"] for e in events][-2:] == ["FailStateEntered", "ExecutionFailed"]
    assert events[-1]["executionFailedEventDetails"] == {"error": "Custom.Error", "cause": "because"}


def test_missing_paths_fail_with_states_runtime(sfn):
    d = run(sfn, {"A": {"Type": "Pass", "Parameters": {"x.$": "$.nope"}, "End": True}}, {"a": 1})
    assert d["status"] == "FAILED" and d["error"] == "States.Runtime"
    assert d["cause"] == ("An error occurred while executing the state 'A' (entered at the event id #2). "
                          "The JSONPath '$.nope' specified for the field 'x.$' could not be found in the input '{\"a\":1}'")


def test_intrinsic_functions(sfn):
    params = {
        "json.$": "States.StringToJson($.s)", "str.$": "States.JsonToString($.o)", "arr.$": "States.Array(1, $.o.a)",
        "parts.$": "States.ArrayPartition($.l, 2)", "has.$": "States.ArrayContains($.l, 3)", "range.$": "States.ArrayRange(0, 4, 2)",
        "item.$": "States.ArrayGetItem($.l, 1)", "len.$": "States.ArrayLength($.l)", "uniq.$": "States.ArrayUnique($.l)",
        "b64.$": "States.Base64Encode('hi')", "raw.$": "States.Base64Decode('aGk=')", "hash.$": "States.Hash('hi', 'MD5')",
        "merged.$": "States.JsonMerge($.o, States.StringToJson('{\"b\":2}'), false)", "sum.$": "States.MathAdd(1, 2)",
        "split.$": "States.StringSplit('a,b', ',')", "uuid.$": "States.UUID()", "rand.$": "States.MathRandom(5, 6)",
    }
    d = run(sfn, {"A": {"Type": "Pass", "Parameters": params, "End": True}}, {"s": '{"k":1}', "o": {"a": 1}, "l": [1, 3, 3]})
    out = output(d)
    assert out["json"] == {"k": 1} and out["str"] == '{"a":1}' and out["arr"] == [1, 1]
    assert out["parts"] == [[1, 3], [3]] and out["has"] is True and out["range"] == [0, 2, 4]
    assert out["item"] == 3 and out["len"] == 3 and out["uniq"] == [1, 3]
    assert out["b64"] == "aGk=" and out["raw"] == "hi" and out["hash"] == "49f68a5c8493ec2c0bf489821c21fc3b"
    assert out["merged"] == {"a": 1, "b": 2} and out["sum"] == 3 and out["split"] == ["a", "b"]
    assert len(out["uuid"]) == 36 and out["rand"] == 5


def test_parallel_and_map_states(sfn):
    states = {
        "P": {"Type": "Parallel", "Branches": [
            {"StartAt": "A", "States": {"A": {"Type": "Pass", "Result": 1, "End": True}}},
            {"StartAt": "B", "States": {"B": {"Type": "Pass", "InputPath": "$.items", "End": True}}},
        ], "ResultPath": "$.par", "Next": "M"},
        "M": {"Type": "Map", "ItemsPath": "$.items", "MaxConcurrency": 2,
              "ItemSelector": {"v.$": "$$.Map.Item.Value", "i.$": "$$.Map.Item.Index"},
              "ItemProcessor": {"StartAt": "D", "States": {"D": {"Type": "Pass", "Parameters": {"d.$": "States.MathAdd($.v, $.i)"}, "End": True}}},
              "ResultPath": "$.map", "End": True},
    }
    d = run(sfn, states, {"items": [10, 20, 30]})
    out = output(d)
    assert out["par"] == [1, [10, 20, 30]] and out["map"] == [{"d": 10}, {"d": 21}, {"d": 32}]
    types = [e["type"] for e in history(sfn, d["executionArn"])]
    assert types.count("MapIterationStarted") == 3 and "MapStateStarted" in types and "ParallelStateSucceeded" in types


def test_a_long_wait_follows_the_server_clock(sfn, server):
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": 86400, "Next": "D"}, "D": {"Type": "Succeed"}})
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    time.sleep(0.2)
    assert sfn.describe_execution(executionArn=ex)["status"] == "RUNNING"
    server.advance_clock(86400)
    assert finish(sfn, ex)["status"] == "SUCCEEDED"


def test_stop_execution_aborts_it(sfn):
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": 3600, "End": True}})
    ex = sfn.start_execution(stateMachineArn=arn)["executionArn"]
    sfn.stop_execution(executionArn=ex, error="Halt", cause="enough")
    d = sfn.describe_execution(executionArn=ex)
    assert (d["status"], d["error"], d["cause"]) == ("ABORTED", "Halt", "enough")
    assert history(sfn, ex)[-1]["type"] == "ExecutionAborted"


def test_start_is_idempotent_by_name_and_input(sfn):
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": 3600, "End": True}})
    first = sfn.start_execution(stateMachineArn=arn, name="x", input="{}")
    assert sfn.start_execution(stateMachineArn=arn, name="x", input="{}")["executionArn"] == first["executionArn"]
    with pytest.raises(ClientError) as e:
        sfn.start_execution(stateMachineArn=arn, name="x", input='{"a":1}')
    assert error(e) == ("ExecutionAlreadyExists", f"Execution Already Exists: '{first['executionArn']}'")
    with pytest.raises(ClientError) as e:
        sfn.start_execution(stateMachineArn=arn, input="{nope")
    assert error(e)[0] == "InvalidExecutionInput"
    with pytest.raises(ClientError) as e:
        sfn.describe_execution(executionArn=first["executionArn"] + "zz")
    assert error(e)[0] == "ExecutionDoesNotExist"


def test_list_executions_filters_and_pages(sfn):
    arn = machine(sfn, {"A": {"Type": "Pass", "End": True}})
    for i in range(3):
        finish(sfn, sfn.start_execution(stateMachineArn=arn, name=f"e{i}")["executionArn"])
    listed = sfn.list_executions(stateMachineArn=arn, maxResults=2)
    assert [e["name"] for e in listed["executions"]] == ["e2", "e1"]
    rest = sfn.list_executions(stateMachineArn=arn, nextToken=listed["nextToken"])
    assert [e["name"] for e in rest["executions"]] == ["e0"]
    assert sfn.list_executions(stateMachineArn=arn, statusFilter="FAILED")["executions"] == []
    d = sfn.describe_state_machine_for_execution(executionArn=listed["executions"][0]["executionArn"])
    assert d["stateMachineArn"] == arn and json.loads(d["definition"])["StartAt"] == "A"


def test_retry_and_catch(sfn):
    states = {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:getQueueUrl", "Parameters": {"QueueName": "missing"},
              "Retry": [{"ErrorEquals": ["Sqs.QueueDoesNotExistException"], "IntervalSeconds": 0, "MaxAttempts": 2}],
              "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Caught"}], "End": True},
        "Caught": {"Type": "Pass", "End": True},
    }
    d = run(sfn, states, {"k": 1})
    out = output(d)
    assert out["k"] == 1 and out["err"]["Error"] == "Sqs.QueueDoesNotExistException"
    types = [e["type"] for e in history(sfn, d["executionArn"])]
    assert types.count("TaskFailed") == 3


def test_express_machines_run_synchronously(client, sfn):
    arn = machine(sfn, {"A": {"Type": "Pass", "Parameters": {"v.$": "$.v"}, "End": True}}, name="x")
    sync = client("stepfunctions", config=__import__("botocore.config").config.Config(inject_host_prefix=False))
    sfn.update_state_machine(stateMachineArn=arn, definition=json.dumps({"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}))
    with pytest.raises(ClientError) as e:
        sync.start_sync_execution(stateMachineArn=arn, input="{}")
    assert error(e)[0] == "StateMachineTypeNotSupported"
    express = sfn.create_state_machine(name="fast", type="EXPRESS", roleArn=ROLE, definition=json.dumps(
        {"StartAt": "A", "States": {"A": {"Type": "Pass", "Parameters": {"v.$": "$.v"}, "End": True}}}))["stateMachineArn"]
    out = sync.start_sync_execution(stateMachineArn=express, input='{"v": 7}')
    assert out["status"] == "SUCCEEDED" and json.loads(out["output"]) == {"v": 7}
    assert out["executionArn"].startswith("arn:aws:states:us-east-1:000000000000:express:fast:")


def test_lists_page_by_position_with_status_filters_and_token_errors(sfn):
    ok = machine(sfn, {"A": {"Type": "Pass", "End": True}}, name="ok")
    bad = machine(sfn, {"F": {"Type": "Fail", "Error": "E"}}, name="bad")
    for i in range(5):
        finish(sfn, sfn.start_execution(stateMachineArn=ok, name=f"ok{i}")["executionArn"])
    finish(sfn, sfn.start_execution(stateMachineArn=bad, name="bad0")["executionArn"])
    first = sfn.list_executions(stateMachineArn=ok, statusFilter="SUCCEEDED", maxResults=2)
    assert [e["name"] for e in first["executions"]] == ["ok4", "ok3"]
    finish(sfn, sfn.start_execution(stateMachineArn=ok, name="late")["executionArn"])
    pages = [first]
    while "nextToken" in pages[-1]:
        pages.append(sfn.list_executions(stateMachineArn=ok, statusFilter="SUCCEEDED", maxResults=2, nextToken=pages[-1]["nextToken"]))
    assert [e["name"] for p in pages for e in p["executions"]] == ["ok4", "ok3", "ok2", "ok1", "ok0"]
    assert [e["name"] for e in sfn.list_executions(stateMachineArn=bad, statusFilter="FAILED")["executions"]] == ["bad0"]
    for i in range(3):
        sfn.create_activity(name=f"a{i}")
    acts = sfn.list_activities(maxResults=2)
    more = sfn.list_activities(nextToken=acts["nextToken"])
    assert [a["name"] for a in acts["activities"] + more["activities"]] == ["a0", "a1", "a2"] and "nextToken" not in more
    with pytest.raises(ClientError) as e:
        sfn.list_activities(nextToken="bogus")
    assert error(e) == ("InvalidToken", "Invalid Token: 'Invalid token'")
    with pytest.raises(ClientError) as e:
        sfn.list_executions(stateMachineArn=ok, nextToken="ks1.x")
    assert error(e)[0] == "InvalidToken"


def test_roto_pytest_waits_for_an_execution_on_the_server_clock(sfn, server):
    arn = machine(sfn, {"W": {"Type": "Wait", "Seconds": 86400, "Next": "P"}, "P": {"Type": "Pass", "End": True}}, name="waits")
    ex = sfn.start_execution(stateMachineArn=arn, input='{"k": 1}')["executionArn"]
    with pytest.raises(AssertionError, match="still RUNNING"):
        server.wait_for_execution(ex, timeout=0.2)
    server.advance_clock(86400)
    described = server.wait_for_execution(ex)
    assert described["status"] == "SUCCEEDED" and json.loads(described["output"]) == {"k": 1}


def test_an_output_over_256_kib_fails_with_data_limit_exceeded(sfn):
    big = "x" * 150_000
    described = run(sfn, {"Double": {"Type": "Pass", "Parameters": {"a.$": "$.s", "b.$": "$.s"}, "Next": "Done"},
                          "Done": {"Type": "Pass", "End": True}}, {"s": big})
    assert (described["status"], described["error"]) == ("FAILED", "States.DataLimitExceeded")
    assert described["cause"] == ("The state/task 'Double' returned a result with a size exceeding "
                                  "the maximum number of bytes service limit.")
    assert output(run(sfn, {"Once": {"Type": "Pass", "Parameters": {"a.$": "$.s"}, "End": True}},
                      {"s": big}, name="fits")) == {"a": big}
