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


def bad_request(sfn, **kwargs):
    with pytest.raises(ClientError) as e:
        sfn.test_state(**kwargs)
    return error(e)


def test_mocked_task_result_goes_through_output_processing(sfn, client):
    task = {"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage",
            "Parameters": {"QueueUrl": "http://nowhere/q", "MessageBody.$": "$.body"},
            "ResultSelector": {"id.$": "$.MessageId"}, "ResultPath": "$.sent", "Next": "After"}
    mock = {"result": json.dumps({"MessageId": "m-1", "MD5OfMessageBody": "x"})}
    out = sfn.test_state(definition=json.dumps(task), input='{"body": "hi"}', mock=mock, inspectionLevel="DEBUG")
    assert out["status"] == "SUCCEEDED" and out["nextState"] == "After"
    assert json.loads(out["output"]) == {"body": "hi", "sent": {"id": "m-1"}}
    assert json.loads(out["inspectionData"]["afterParameters"]) == {"QueueUrl": "http://nowhere/q", "MessageBody": "hi"}
    assert json.loads(out["inspectionData"]["result"]) == {"MessageId": "m-1", "MD5OfMessageBody": "x"}
    # nothing was sent: the queue does not exist, and a real call would have failed
    assert client("sqs").list_queues().get("QueueUrls") is None


def test_mocked_error_meets_retry_with_its_retry_count_and_catch(sfn):
    task = {"Type": "Task", "Resource": "arn:aws:states:::lambda:invoke", "Parameters": {"FunctionName": "f"},
            "Retry": [{"ErrorEquals": ["Mock.Error"], "IntervalSeconds": 2, "BackoffRate": 3, "MaxAttempts": 3}],
            "Catch": [{"ErrorEquals": ["States.ALL"], "ResultPath": "$.err", "Next": "Handle"}], "End": True}
    mock = {"errorOutput": {"error": "Mock.Error", "cause": "boom"}}
    out = sfn.test_state(definition=json.dumps(task), input="{}", mock=mock, inspectionLevel="DEBUG",
                         stateConfiguration={"retrierRetryCount": 2})
    assert (out["status"], out["error"], out["cause"]) == ("RETRIABLE", "Mock.Error", "boom")
    assert out["inspectionData"]["errorDetails"] == {"retryIndex": 0, "retryBackoffIntervalSeconds": 18}
    out = sfn.test_state(definition=json.dumps(task), input="{}", mock=mock, inspectionLevel="DEBUG",
                         stateConfiguration={"retrierRetryCount": 3})
    assert out["status"] == "CAUGHT_ERROR" and out["nextState"] == "Handle"
    assert json.loads(out["output"]) == {"err": {"Error": "Mock.Error", "Cause": "boom"}}
    assert out["inspectionData"]["errorDetails"] == {"catchIndex": 0}


def test_mocked_results_are_checked_against_the_integration_output_shape(sfn):
    task = {"Type": "Task", "Resource": "arn:aws:states:::states:startExecution",
            "Parameters": {"StateMachineArn": "arn:aws:states:us-east-1:000000000000:stateMachine:x"}, "End": True}
    definition = json.dumps(task)
    missing = {"result": json.dumps({"executionArn": "a"})}
    assert bad_request(sfn, definition=definition, mock=missing) == (
        "ValidationException", "Mock result schema validation error: Required field 'ExecutionArn' is missing")
    present = {**missing, "fieldValidationMode": "PRESENT"}
    assert sfn.test_state(definition=definition, mock=present)["status"] == "SUCCEEDED"
    wrong = {"result": json.dumps({"ExecutionArn": "a", "StartDate": 5}), "fieldValidationMode": "PRESENT"}
    assert bad_request(sfn, definition=definition, mock=wrong)[1] == (
        "Mock result schema validation error: Field 'StartDate' must be a string")
    assert sfn.test_state(definition=definition, mock={**wrong, "fieldValidationMode": "NONE"})["status"] == "SUCCEEDED"
    events = {"Type": "Task", "Resource": "arn:aws:states:::events:putEvents", "Parameters": {"Entries": []}, "End": True}
    nested = {"result": json.dumps({"Entries": [{"EventId": "a"}, {"EventId": 2}]})}
    assert bad_request(sfn, definition=json.dumps(events), mock=nested)[1] == (
        "Mock result schema validation error: Field 'EventId' must be a string")
    enum = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:s3:getObject", "Parameters": {"Bucket": "b", "Key": "k"}, "End": True}
    bad_class = {"result": json.dumps({"StorageClass": "NOPE"})}
    assert bad_request(sfn, definition=json.dumps(enum), mock=bad_class)[1] == (
        "Mock result schema validation error: Field 'StorageClass' is not an expected value")
    assert bad_request(sfn, definition=definition, mock={"result": "not json"}) == (
        "ValidationException", "Mocked result must be valid JSON")


def test_parallel_and_map_run_only_mocked(sfn):
    parallel = {"Type": "Parallel", "Branches": [
        {"StartAt": "A", "States": {"A": {"Type": "Pass", "End": True}}},
        {"StartAt": "B", "States": {"B": {"Type": "Pass", "End": True}}}], "ResultPath": "$.r", "End": True}
    assert bad_request(sfn, definition=json.dumps(parallel)) == ("InvalidDefinition",
        "TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]")
    out = sfn.test_state(definition=json.dumps(parallel), input='{"k": 1}', mock={"result": "[1, 2]"})
    assert json.loads(out["output"]) == {"k": 1, "r": [1, 2]}
    assert bad_request(sfn, definition=json.dumps(parallel), mock={"result": "[1]"})[1] == (
        "Mocked result must contain the same number of items as number of Parallel branches.")
    assert bad_request(sfn, definition=json.dumps(parallel), mock={"result": "{}"})[1] == "Mocked result must be an array."
    processor = {"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}
    inline = {"Type": "Map", "ItemsPath": "$.items", "ItemProcessor": processor, "MaxConcurrency": 2,
              "ToleratedFailureCount": 1, "Catch": [{"ErrorEquals": ["States.ALL"], "Next": "Over"}], "End": True}
    items = json.dumps({"items": [1, 2, 3]})
    out = sfn.test_state(definition=json.dumps(inline), input=items, mock={"result": "[10, 20, 30]"},
                         inspectionLevel="DEBUG", stateConfiguration={"mapIterationFailureCount": 1})
    assert out["status"] == "SUCCEEDED" and json.loads(out["output"]) == [10, 20, 30]
    data = out["inspectionData"]
    assert json.loads(data["afterItemsPath"]) == [1, 2, 3]
    assert (data["maxConcurrency"], data["toleratedFailureCount"]) == (2, 1)
    over = sfn.test_state(definition=json.dumps(inline), input=items, mock={"result": "[10, 20, 30]"},
                          stateConfiguration={"mapIterationFailureCount": 2})
    assert (over["status"], over["error"], over["nextState"]) == (
        "CAUGHT_ERROR", "States.ExceedToleratedFailureThreshold", "Over")
    failed = sfn.test_state(definition=json.dumps(inline), input=items,
                            mock={"errorOutput": {"error": "E", "cause": "C"}},
                            stateConfiguration={"errorCausedByState": "P"})
    assert (failed["status"], failed["error"]) == ("CAUGHT_ERROR", "E")
    assert bad_request(sfn, definition=json.dumps(inline), input=items, mock={"result": "{}"})[1] == (
        "Mocked result must be an array.")
    writer = {**inline, "ResultWriter": {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "b"}}}
    assert bad_request(sfn, definition=json.dumps(writer), input=items, mock={"result": "[]"})[1] == (
        "Mocked result must be a JSON object.")


def test_mock_and_context_validation(sfn):
    pass_state = json.dumps({"Type": "Pass", "End": True})
    mock = {"result": "{}"}
    assert bad_request(sfn, definition=pass_state, mock=mock) == (
        "ValidationException", "State type 'Pass' is not supported when a mock is specified")
    task = {"Type": "Task", "Resource": "arn:aws:states:::aws-sdk:sqs:listQueues",
            "Parameters": {"ctx.$": "$$"}, "End": True}
    definition = json.dumps(task)
    assert bad_request(sfn, definition=definition, mock={"result": "{}", "errorOutput": {"error": "E"}})[1] == (
        "A test mock should have only one of the following fields: [result, errorOutput].")
    assert bad_request(sfn, definition=definition, mock=mock, revealSecrets=True)[1] == (
        "TestState does not support RevealSecrets when a mock is specified.")
    assert bad_request(sfn, definition=definition) == (
        "ValidationException", "RoleArn must be specified when testing a Task state")
    assert bad_request(sfn, definition=pass_state, context="{}")[0] == "ValidationException"
    callback = json.dumps({"Type": "Task", "Resource": "arn:aws:states:::sqs:sendMessage.waitForTaskToken",
                           "Parameters": {"QueueUrl": "q", "MessageBody": {"t.$": "$$.Task.Token"}}, "End": True})
    assert bad_request(sfn, definition=callback, roleArn=ROLE)[0] == "ValidationException"
    out = sfn.test_state(definition=callback, mock={"result": '{"done": true}'}, context=json.dumps({"Task": {"Token": "tok"}}),
                         inspectionLevel="DEBUG")
    assert json.loads(out["inspectionData"]["afterParameters"])["MessageBody"] == {"t": "tok"}
    assert json.loads(out["output"]) == {"done": True}
    assert bad_request(sfn, definition=definition, mock=mock, context='{"Map": {}}')[1] == (
        "Invalid Context object provided: 'Map' field is not supported when mocking a Context object")
    assert bad_request(sfn, definition=definition, mock=mock, context='{"Execution": {"Id": 1}}')[1] == (
        "Invalid Context object provided: Execution.Id must be a string")
    assert bad_request(sfn, definition=definition, mock=mock, context='{"Task": {}}')[1].startswith(
        "Invalid Context object provided: Context object contains 'Task'")
    given = {"Execution": {"Id": "arn:aws:states:us-east-1:000000000000:execution:M:e"}, "Custom": 1}
    assert bad_request(sfn, definition=definition, mock=mock, context=json.dumps(given))[1] == (
        "Invalid Context object provided: Field 'Custom' is not allowed")
    del given["Custom"]
    out = sfn.test_state(definition=definition, mock=mock, context=json.dumps(given), inspectionLevel="DEBUG")
    assert json.loads(out["inspectionData"]["afterParameters"]) == {"ctx": given}
