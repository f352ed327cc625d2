"""Step Functions' TestState through boto3: one state run in the request with its input and
output processing (inspection data at DEBUG), a Task's real call, Choice's next state, how
Retry and Catch would handle an error, JSONata with variables, and AWS's errors."""

from __future__ import annotations

import json

import pytest
from botocore.config import Config
from botocore.exceptions import ClientError
from sfn_helpers import ROLE, error


@pytest.fixture
def sfn(client):
    # boto3 sends TestState to the `sync-` host prefix, as StartSyncExecution
    return client("stepfunctions", config=Config(inject_host_prefix=False, retries={"max_attempts": 1}))


def try_state(sfn, state, input=None, **extra):
    return sfn.test_state(definition=json.dumps(state), roleArn=ROLE,
                          input=json.dumps(input if input is not None else {}), **extra)


def test_pass_state_processing_with_debug_inspection(sfn):
    state = {"Type": "Pass", "InputPath": "$.a", "Parameters": {"x.$": "$.b"},
             "ResultPath": "$.out", "Next": "After"}
    out = try_state(sfn, state, {"a": {"b": 1}}, inspectionLevel="DEBUG")
    assert out["status"] == "SUCCEEDED" and out["nextState"] == "After"
    assert json.loads(out["output"]) == {"a": {"b": 1}, "out": {"x": 1}}
    data = out["inspectionData"]
    assert json.loads(data["input"]) == {"a": {"b": 1}}
    assert json.loads(data["afterInputPath"]) == {"b": 1}
    assert json.loads(data["afterParameters"]) == {"x": 1}
    assert json.loads(data["afterResultPath"]) == {"a": {"b": 1}, "out": {"x": 1}}
    info = try_state(sfn, state, {"a": {"b": 1}})
    assert "inspectionData" not in info


def test_task_calls_the_service_and_choice_picks_next(sfn, client):
    client("sqs").create_queue(QueueName="q")
    task = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:getQueueUrl", "Parameters": {"QueueName": "q"}, "End": True}
    out = try_state(sfn, task)
    assert out["status"] == "SUCCEEDED" and json.loads(out["output"])["QueueUrl"].endswith("/q")
    assert "nextState" not in out
    choice = {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericGreaterThan": 1, "Next": "Big"}], "Default": "Small"}
    assert try_state(sfn, choice, {"n": 5})["nextState"] == "Big"
    assert try_state(sfn, choice, {"n": 0})["nextState"] == "Small"
    wait = {"Type": "Wait", "Seconds": 86400, "Next": "Later"}
    assert try_state(sfn, wait, {"k": 1})["nextState"] == "Later"


def test_retry_and_catch_are_reported_not_run(sfn):
    task = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:getQueueUrl", "Parameters": {"QueueName": "missing"},
            "Retry": [{"ErrorEquals": ["Nope"]}, {"ErrorEquals": ["States.ALL"], "IntervalSeconds": 4, "MaxAttempts": 2}],
            "End": True}
    out = try_state(sfn, task, inspectionLevel="DEBUG")
    assert out["status"] == "RETRIABLE" and out["error"] == "Sqs.QueueDoesNotExistException"
    assert out["inspectionData"]["errorDetails"] == {"retryIndex": 1, "retryBackoffIntervalSeconds": 4}
    del task["Retry"]
    task["Catch"] = [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Handle"}]
    out = try_state(sfn, task, {"k": 1}, inspectionLevel="DEBUG")
    assert out["status"] == "CAUGHT_ERROR" and out["nextState"] == "Handle"
    assert out["error"] == "Sqs.QueueDoesNotExistException"
    assert json.loads(out["output"])["err"]["Error"] == "Sqs.QueueDoesNotExistException"
    assert out["inspectionData"]["errorDetails"] == {"catchIndex": 0}
    fail = try_state(sfn, {"Type": "Fail", "Error": "E", "Cause": "C"})
    assert (fail["status"], fail["error"], fail["cause"]) == ("FAILED", "E", "C")


def test_jsonata_state_in_a_machine_with_variables(sfn):
    definition = {"QueryLanguage": "JSONata", "StartAt": "A", "States": {
        "A": {"Type": "Pass", "Output": "{% $states.input.n * $rate %}", "Assign": {"seen": "{% $states.input.n %}"}, "Next": "B"},
        "B": {"Type": "Succeed"}}}
    out = sfn.test_state(definition=json.dumps(definition), stateName="A", input='{"n": 4}', variables='{"rate": 3}',
                         inspectionLevel="DEBUG")
    assert out["status"] == "SUCCEEDED" and json.loads(out["output"]) == 12 and out["nextState"] == "B"
    assert json.loads(out["inspectionData"]["variables"]) == {"rate": 3, "seen": 4}


def test_test_state_errors(sfn):
    with pytest.raises(ClientError) as e:
        sfn.test_state(definition="{not json", input="{}")
    assert error(e)[0] == "InvalidDefinition"
    with pytest.raises(ClientError) as e:
        try_state(sfn, {"Type": "Pass", "Bogus": 1, "End": True})
    assert error(e)[0] == "InvalidDefinition" and "SCHEMA_VALIDATION_FAILED" in error(e)[1]
    with pytest.raises(ClientError) as e:
        sfn.test_state(definition=json.dumps({"Type": "Pass", "End": True}), input="{bad")
    assert error(e)[0] == "InvalidExecutionInput"
    machine = {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}}
    with pytest.raises(ClientError) as e:
        sfn.test_state(definition=json.dumps(machine), input="{}")
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        sfn.test_state(definition=json.dumps(machine), stateName="Z", input="{}")
    assert error(e)[0] == "ValidationException"
