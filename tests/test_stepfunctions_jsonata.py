"""Step Functions' JSONata query language and workflow variables through boto3:
`QueryLanguage` at the top and per state, Arguments/Output/Assign/Condition with `{% %}`
expressions, `$states`, variables in JSONata and in JSONPath, States.QueryEvaluationError,
and the definition checks of a JSONata state."""

from __future__ import annotations

import itertools
import json
import time

import pytest
from botocore.exceptions import ClientError

import sfn_helpers as helpers
from sfn_helpers import finish, output

NAMES = itertools.count()


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


def machine(sfn, states, name=None, **extra):
    return helpers.machine(sfn, states, name=name or f"m{next(NAMES)}", **extra)


def run(sfn, states, input=None, **extra):
    return helpers.run(sfn, states, input, name=f"m{next(NAMES)}", **extra)


def jsonata(sfn, states, input=None):
    return run(sfn, states, input, QueryLanguage="JSONata")


def test_pass_output_and_states_members(sfn):
    states = {
        "A": {"Type": "Pass", "Output": {"sum": "{% $sum($states.input.n) %}", "name": "{% $states.context.Execution.Name %}",
                                         "state": "{% $states.context.State.Name %}", "kept": "$not.evaluated", "list": ["{% $count($states.input.n) %}", 1]},
              "Next": "B"},
        "B": {"Type": "Pass", "End": True},
    }
    out = output(jsonata(sfn, states, {"n": [1, 2, 3.5]}))
    assert out["sum"] == 6.5 and out["state"] == "A" and out["kept"] == "$not.evaluated" and out["list"] == [3, 1]
    assert len(out["name"]) > 0


def test_assign_sets_variables_seen_by_later_states_not_by_its_own_output(sfn):
    states = {
        "A": {"Type": "Pass", "Assign": {"x": 1, "y": "{% $states.input.v %}"}, "Next": "B"},
        "B": {"Type": "Pass", "Assign": {"x": "{% $x + 10 %}"}, "Output": {"x": "{% $x %}", "y": "{% $y %}"}, "Next": "C"},
        "C": {"Type": "Pass", "Output": {"before": "{% $states.input.x %}", "after": "{% $x %}"}, "End": True},
    }
    assert output(jsonata(sfn, states, {"v": "hi"})) == {"before": 1, "after": 11}


def test_choice_conditions_and_rule_output(sfn):
    states = {
        "C": {"Type": "Choice", "Choices": [
            {"Condition": "{% $states.input.n > 10 %}", "Next": "Big", "Output": {"size": "big"}, "Assign": {"seen": "big"}},
            {"Condition": "{% $states.input.n > 5 %}", "Next": "Big"},
        ], "Default": "Small"},
        "Big": {"Type": "Pass", "Output": {"in": "{% $states.input %}", "seen": "{% $exists($seen) ? $seen : 'none' %}"}, "End": True},
        "Small": {"Type": "Succeed", "Output": "{% 'small:' & $string($states.input.n) %}"},
    }
    assert output(jsonata(sfn, states, {"n": 11})) == {"in": {"size": "big"}, "seen": "big"}
    assert output(jsonata(sfn, states, {"n": 6})) == {"in": {"n": 6}, "seen": "none"}
    assert output(jsonata(sfn, states, {"n": 1})) == "small:1"


def test_a_non_boolean_condition_is_a_query_evaluation_error(sfn):
    states = {
        "C": {"Type": "Choice", "Choices": [{"Condition": "{% $states.input.n %}", "Next": "D"}], "Default": "D"},
        "D": {"Type": "Succeed"},
    }
    out = jsonata(sfn, states, {"n": 3})
    assert out["status"] == "FAILED" and out["error"] == "States.QueryEvaluationError"
    assert out["cause"] == ("An error occurred while executing the state 'C' (entered at the event id #2). The JSONata expression "
                            "'$states.input.n' specified for the field 'Condition' returned an unexpected result type. "
                            "Expected 'boolean', but was 'number' for value: 3")


def test_an_undefined_argument_fails_and_a_catch_sees_the_error_output(sfn):
    fail = {"A": {"Type": "Pass", "Output": {"v": "{% $states.input.missing %}"}, "End": True}}
    out = jsonata(sfn, fail)
    assert out["error"] == "States.QueryEvaluationError"
    assert out["cause"] == ("An error occurred while executing the state 'A' (entered at the event id #2). The JSONata expression "
                            "'$states.input.missing' specified for the field 'Output/v' returned nothing (undefined).")
    states = {
        "A": {"Type": "Parallel", "Arguments": {"x": 1}, "Branches": [
            {"StartAt": "F", "States": {"F": {"Type": "Fail", "Error": "{% 'Custom' & $string($states.input.x) %}", "Cause": "because"}}}],
            "Catch": [{"ErrorEquals": ["Custom1"], "Next": "H", "Assign": {"err": "{% $states.errorOutput.Error %}"},
                       "Output": {"caught": "{% $states.errorOutput %}", "in": "{% $states.input %}"}}],
            "End": True},
        "H": {"Type": "Pass", "Output": {"o": "{% $states.input %}", "err": "{% $err %}"}, "End": True},
    }
    assert output(jsonata(sfn, states, {"raw": True})) == {
        "o": {"caught": {"Error": "Custom1", "Cause": "because"}, "in": {"raw": True}}, "err": "Custom1"}


def test_map_items_selector_and_branch_scoped_variables(sfn):
    states = {
        "Init": {"Type": "Pass", "Assign": {"factor": 10}, "Next": "M"},
        "M": {"Type": "Map", "Items": "{% $states.input.xs %}", "MaxConcurrency": "{% 2 %}",
              "ItemSelector": {"v": "{% $states.context.Map.Item.Value %}", "i": "{% $states.context.Map.Item.Index %}"},
              "ItemProcessor": {"StartAt": "Mul", "States": {
                  "Mul": {"Type": "Pass", "Assign": {"inner": 1}, "Output": "{% $states.input.v * $factor + $states.input.i %}", "End": True}}},
              "Output": {"r": "{% $states.result %}", "inner": "{% $exists($inner) %}"}, "End": True},
    }
    assert output(jsonata(sfn, states, {"xs": [1, 2, 3]})) == {"r": [10, 21, 32], "inner": False}
    out = jsonata(sfn, {"M": {"Type": "Map", "Items": "{% 'x' %}", "ItemProcessor": {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}, "End": True}})
    assert out["error"] == "States.QueryEvaluationError" and "Expected 'array', but was 'string'" in out["cause"]


def test_wait_seconds_from_an_expression_follows_the_clock(sfn, server):
    states = {"W": {"Type": "Wait", "Seconds": "{% $states.input.s %}", "Next": "D"}, "D": {"Type": "Succeed"}}
    arn = machine(sfn, states, QueryLanguage="JSONata")
    execution = sfn.start_execution(stateMachineArn=arn, input=json.dumps({"s": 3600}))["executionArn"]
    time.sleep(0.3)
    assert sfn.describe_execution(executionArn=execution)["status"] == "RUNNING"
    server.advance_clock(3601)
    assert output(finish(sfn, execution)) == {"s": 3600}


def test_task_arguments_and_result(sfn):
    child = machine(sfn, {"P": {"Type": "Pass", "End": True}}, name="child")
    states = {
        "T": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sfn:describeStateMachine",
              "Arguments": {"StateMachineArn": "{% $states.input.arn %}"},
              "Output": {"name": "{% $states.result.Name %}", "input": "{% $states.input.arn %}"},
              "Assign": {"kind": "{% $states.result.Type %}"}, "Next": "E"},
        "E": {"Type": "Pass", "Output": "{% $merge([$states.input, {'kind': $kind}]) %}", "End": True},
    }
    assert output(jsonata(sfn, states, {"arn": child})) == {"name": "child", "input": child, "kind": "STANDARD"}


def test_a_jsonata_state_in_a_jsonpath_machine_and_variables_in_jsonpath(sfn):
    states = {
        "A": {"Type": "Pass", "Parameters": {"v.$": "$.v"}, "Assign": {"saved.$": "$.v", "lit": 5}, "ResultPath": "$.p", "Next": "B"},
        "B": {"Type": "Pass", "Parameters": {"fromVar.$": "$saved", "deep.$": "$obj.k", "fmt.$": "States.Format('{}-{}', $saved, $lit)"}, "Next": "C"},
        "C": {"Type": "Choice", "Choices": [{"Variable": "$lit", "NumericEquals": 5, "Next": "D"}], "Default": "D"},
        "D": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": {"all": "{% $states.input %}", "saved": "{% $saved %}"}, "End": True},
    }
    first = {"Init": {"Type": "Pass", "Assign": {"obj": {"k": "deep"}}, "Next": "A"}, **states}
    assert output(run(sfn, first, {"v": "x"})) == {
        "all": {"fromVar": "x", "deep": "deep", "fmt": "x-5"}, "saved": "x"}


def test_jsonata_definition_checks(sfn):
    def problems(states, **top):
        definition = json.dumps({"StartAt": next(iter(states)), "States": states, **top})
        out = sfn.validate_state_machine_definition(definition=definition)
        return [(d["code"], d["message"], d["location"]) for d in out["diagnostics"]]

    assert problems({"A": {"Type": "Pass", "InputPath": "$.a", "End": True}}, QueryLanguage="JSONata") == [
        ("SCHEMA_VALIDATION_FAILED", "Field 'InputPath' is not supported", "/States/A")]
    assert problems({"A": {"Type": "Pass", "Output": {"x": 1}, "End": True}}) == [
        ("SCHEMA_VALIDATION_FAILED", "Field 'Output' is not supported", "/States/A")]
    assert problems({"A": {"Type": "Pass", "Output": "{% 1 + %}", "End": True}}, QueryLanguage="JSONata") == [
        ("INVALID_JSONATA_EXPRESSION", "Unexpected end of expression", "/States/A/Output")]
    assert problems({"A": {"Type": "Pass", "Output": "{% $$ %}", "End": True}}, QueryLanguage="JSONata") == [
        ("UNSUPPORTED_JSONATA_EXPRESSION", "Reference to '$$' is not supported.", "/States/A/Output")]
    assert problems({"A": {"Type": "Pass", "Output": "{% $states.errorOutput %}", "End": True}}, QueryLanguage="JSONata") == [
        ("UNSUPPORTED_JSONATA_EXPRESSION", "Field '$states.errorOutput' does not exist.", "/States/A/Output")]
    assert problems({"A": {"Type": "Pass", "QueryLanguage": "JSONata", "Output": "{% $states.input %}", "End": True}}) == []
    with pytest.raises(ClientError) as e:
        machine(sfn, {"A": {"Type": "Pass", "Output": "{% $states.result %}", "End": True}}, QueryLanguage="JSONata")
    assert e.value.response["Error"]["Code"] == "InvalidDefinition"
    assert e.value.response["Error"]["Message"] == (
        "Invalid State Machine Definition: 'UNSUPPORTED_JSONATA_EXPRESSION: Field '$states.result' does not exist. at /States/A/Output'")


def test_an_evaluation_error_adds_an_evaluation_failed_event(sfn):
    cause = ("An error occurred while executing the state 'A' (entered at the event id #2). The JSONata expression "
             "'$states.input.missing' specified for the field 'Output/v' returned nothing (undefined).")
    out = jsonata(sfn, {"A": {"Type": "Pass", "Output": {"v": "{% $states.input.missing %}"}, "End": True}})
    events = helpers.history(sfn, out["executionArn"])
    assert [e["type"] for e in events] == ["ExecutionStarted", "PassStateEntered", "EvaluationFailed", "ExecutionFailed"]
    assert events[2]["previousEventId"] == 2
    assert events[2]["evaluationFailedEventDetails"] == {
        "error": "States.QueryEvaluationError", "cause": cause, "location": "Output/v", "state": "A"}
    # Inside a branch the event belongs to the failing state, once; a retried state adds one per attempt.
    states = {
        "P": {"Type": "Parallel", "Branches": [{"StartAt": "C", "States": {
            "C": {"Type": "Choice", "Choices": [{"Condition": "{% $states.input.n %}", "Next": "D"}], "Default": "D"},
            "D": {"Type": "Succeed"}}}], "Next": "T"},
        "T": {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:listQueues", "Arguments": {"x": "{% $nope %}"},
              "Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 1, "IntervalSeconds": 1}], "End": True},
    }
    out = jsonata(sfn, {"P": {**states["P"], "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "T"}]}, "T": states["T"]}, {"n": 1})
    failed = [e["evaluationFailedEventDetails"] for e in helpers.history(sfn, out["executionArn"]) if e["type"] == "EvaluationFailed"]
    assert [(f["state"], f["location"]) for f in failed] == [("C", "Condition"), ("T", "Arguments/x"), ("T", "Arguments/x")]
    assert out["status"] == "FAILED" and out["error"] == "States.QueryEvaluationError"
