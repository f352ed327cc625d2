"""Step Functions' Distributed Map through boto3: items from the input and from S3 (JSON,
JSON Lines, CSV, object listings), ItemSelector, ItemBatcher, child executions of a map
run (STANDARD recorded, EXPRESS not), tolerated failures, ResultWriter to S3, and the map
run APIs (DescribeMapRun, ListMapRuns, UpdateMapRun) with their errors."""

from __future__ import annotations

import json
import time

import pytest
from botocore.exceptions import ClientError
from sfn_helpers import error, finish, history, machine, output


@pytest.fixture
def sfn(client):
    return client("stepfunctions")


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket="data")
    return s3


def dmap(processor_states, execution_type="STANDARD", **fields):
    start = next(iter(processor_states))
    return {
        "Type": "Map",
        "ItemProcessor": {
            "ProcessorConfig": {"Mode": "DISTRIBUTED", "ExecutionType": execution_type},
            "StartAt": start,
            "States": processor_states,
        },
        "End": True,
        **fields,
    }


DOUBLE = {"D": {"Type": "Pass", "Parameters": {"v.$": "States.MathAdd($.n, $.n)"}, "End": True}}


def start(sfn, states, input=None, name="m"):
    arn = machine(sfn, states, name=name)
    ex = sfn.start_execution(stateMachineArn=arn, input=json.dumps(input if input is not None else {}))
    return ex["executionArn"]


def test_items_from_input_run_as_child_executions_of_a_map_run(sfn):
    states = {"M": dmap(DOUBLE, ItemsPath="$.items", Label="dbl", MaxConcurrency=2)}
    arn = start(sfn, states, {"items": [{"n": 1}, {"n": 2}, {"n": 3}]})
    d = finish(sfn, arn)
    assert output(d) == [{"v": 2}, {"v": 4}, {"v": 6}]
    kinds = [e["type"] for e in history(sfn, arn)]
    assert kinds[:6] == ["ExecutionStarted", "MapStateEntered", "MapStateStarted", "MapRunStarted",
                         "MapRunSucceeded", "MapStateSucceeded"]
    runs = sfn.list_map_runs(executionArn=arn)["mapRuns"]
    assert len(runs) == 1
    run = runs[0]
    assert run["mapRunArn"].startswith("arn:aws:states:us-east-1:000000000000:mapRun:m/dbl:")
    assert run["stateMachineArn"].endswith(":stateMachine:m/dbl") and run["executionArn"] == arn
    described = sfn.describe_map_run(mapRunArn=run["mapRunArn"])
    assert described["status"] == "SUCCEEDED" and described["maxConcurrency"] == 2
    assert described["itemCounts"]["succeeded"] == 3 and described["itemCounts"]["total"] == 3
    assert described["executionCounts"]["succeeded"] == 3 and described["executionCounts"]["running"] == 0
    children = sfn.list_executions(mapRunArn=run["mapRunArn"])["executions"]
    assert len(children) == 3 and {c["status"] for c in children} == {"SUCCEEDED"}
    child = sfn.describe_execution(executionArn=children[0]["executionArn"])
    assert child["mapRunArn"] == run["mapRunArn"] and child["stateMachineArn"] == run["stateMachineArn"]
    assert child["executionArn"].startswith("arn:aws:states:us-east-1:000000000000:execution:m/dbl:")
    assert json.loads(child["output"]) in ({"v": 2}, {"v": 4}, {"v": 6})
    child_events = history(sfn, child["executionArn"])
    assert child_events[0]["type"] == "ExecutionStarted" and child_events[-1]["type"] == "ExecutionSucceeded"
    for_child = sfn.describe_state_machine_for_execution(executionArn=child["executionArn"])
    assert for_child["mapRunArn"] == run["mapRunArn"] and for_child["label"] == "dbl"
    # the parent machine's own list holds only the parent
    parent_list = sfn.list_executions(stateMachineArn=machine_arn(arn))["executions"]
    assert [e["executionArn"] for e in parent_list] == [arn]


def machine_arn(execution_arn):
    name = execution_arn.split(":")[6]
    return f"arn:aws:states:us-east-1:000000000000:stateMachine:{name}"


def test_json_csv_jsonl_and_listing_readers_with_selector_and_max_items(sfn, s3):
    s3.put_object(Bucket="data", Key="items.json", Body=json.dumps([{"n": 1}, {"n": 2}, {"n": 3}]))
    s3.put_object(Bucket="data", Key="rows.csv", Body='id,name\n1,"Ada, L"\n2,Bob\n')
    s3.put_object(Bucket="data", Key="lines.jsonl", Body='{"n": 5}\n{"n": 6}\n')
    s3.put_object(Bucket="data", Key="in/a.txt", Body=b"abc")
    s3.put_object(Bucket="data", Key="in/b.txt", Body=b"de")
    echo = {"E": {"Type": "Pass", "End": True}}
    cases = [
        ({"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSON", "MaxItems": 2},
          "Parameters": {"Bucket": "data", "Key.$": "$.key"}}, {"key": "items.json"}, [{"n": 1}, {"n": 2}]),
        ({"Resource": "arn:aws:states:::s3:getObject",
          "ReaderConfig": {"InputType": "CSV", "CSVHeaderLocation": "FIRST_ROW"},
          "Parameters": {"Bucket": "data", "Key": "rows.csv"}}, {}, [{"id": "1", "name": "Ada, L"}, {"id": "2", "name": "Bob"}]),
        ({"Resource": "arn:aws:states:::s3:getObject", "ReaderConfig": {"InputType": "JSONL"},
          "Parameters": {"Bucket": "data", "Key": "lines.jsonl"}}, {}, [{"n": 5}, {"n": 6}]),
    ]
    for i, (reader, input, expected) in enumerate(cases):
        arn = start(sfn, {"M": dmap(echo, ItemReader=reader)}, input, name=f"r{i}")
        assert output(finish(sfn, arn)) == expected
    listing = {"Resource": "arn:aws:states:::s3:listObjectsV2", "Parameters": {"Bucket": "data", "Prefix": "in/"}}
    selector = {"key.$": "$$.Map.Item.Value.Key", "size.$": "$$.Map.Item.Value.Size", "index.$": "$$.Map.Item.Index"}
    arn = start(sfn, {"M": dmap(echo, ItemReader=listing, ItemSelector=selector)}, name="list")
    assert output(finish(sfn, arn)) == [{"key": "in/a.txt", "size": 3, "index": 0}, {"key": "in/b.txt", "size": 2, "index": 1}]


def test_item_batcher_groups_items_with_batch_input(sfn):
    count = {"C": {"Type": "Pass", "Parameters": {"n.$": "States.ArrayLength($.Items)", "tag.$": "$.BatchInput.tag"}, "End": True}}
    arn = start(sfn, {"M": dmap(count, ItemsPath="$.xs", ItemBatcher={"MaxItemsPerBatch": 2, "BatchInput": {"tag.$": "$.tag"}})},
                {"xs": [1, 2, 3, 4, 5], "tag": "t"}, name="b1")
    assert output(finish(sfn, arn)) == [{"n": 2, "tag": "t"}, {"n": 2, "tag": "t"}, {"n": 1, "tag": "t"}]
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    described = sfn.describe_map_run(mapRunArn=run)
    assert described["itemCounts"]["total"] == 5 and described["executionCounts"]["total"] == 3


def test_failures_past_the_tolerance_fail_the_map_run(sfn):
    fail_odd = {
        "C": {"Type": "Choice", "Choices": [{"Variable": "$.n", "NumericEquals": 1, "Next": "Bad"}], "Default": "Ok"},
        "Bad": {"Type": "Fail", "Error": "Odd", "Cause": "one"},
        "Ok": {"Type": "Pass", "End": True},
    }
    items = {"xs": [{"n": 0}, {"n": 1}, {"n": 2}, {"n": 0}]}
    arn = start(sfn, {"M": dmap(fail_odd, ItemsPath="$.xs")}, items, name="strict")
    d = finish(sfn, arn)
    assert d["status"] == "FAILED" and d["error"] == "States.ExceedToleratedFailureThreshold"
    assert d["cause"] == "The specified tolerated failure threshold was exceeded"
    events = history(sfn, arn)
    failed = [e for e in events if e["type"] == "MapRunFailed"]
    assert failed and failed[0]["mapRunFailedEventDetails"]["error"] == "States.ExceedToleratedFailureThreshold"
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    assert sfn.describe_map_run(mapRunArn=run)["status"] == "FAILED"
    failed_children = sfn.list_executions(mapRunArn=run, statusFilter="FAILED")["executions"]
    assert len(failed_children) == 1
    assert sfn.describe_execution(executionArn=failed_children[0]["executionArn"])["error"] == "Odd"

    arn = start(sfn, {"M": dmap(fail_odd, ItemsPath="$.xs", ToleratedFailurePercentage=25)}, items, name="lenient")
    out = output(finish(sfn, arn))
    assert out[1] == {"Error": "Odd", "Cause": "one"} and out[0] == {"n": 0}
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    described = sfn.describe_map_run(mapRunArn=run)
    assert described["toleratedFailurePercentage"] == 25 and described["itemCounts"]["failed"] == 1


def test_express_children_keep_no_record(sfn):
    arn = start(sfn, {"M": dmap(DOUBLE, "EXPRESS", ItemsPath="$.xs")}, {"xs": [{"n": 4}]})
    assert output(finish(sfn, arn)) == [{"v": 8}]
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    assert sfn.list_executions(mapRunArn=run)["executions"] == []
    assert sfn.describe_map_run(mapRunArn=run)["executionCounts"]["succeeded"] == 1


def test_result_writer_writes_results_and_manifest_to_s3(sfn, s3):
    states = {"M": dmap(DOUBLE, ItemsPath="$.xs", ResultWriter={
        "Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "data", "Prefix": "out"}})}
    arn = start(sfn, states, {"xs": [{"n": 1}, {"n": 2}]})
    out = output(finish(sfn, arn))
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    run_id = run.rsplit(":", 1)[1]
    assert out == {"MapRunArn": run, "ResultWriterDetails": {"Bucket": "data", "Key": f"out/{run_id}/manifest.json"}}
    manifest = json.loads(s3.get_object(Bucket="data", Key=f"out/{run_id}/manifest.json")["Body"].read())
    assert manifest["DestinationBucket"] == "data" and manifest["MapRunArn"] == run
    assert manifest["ResultFiles"]["FAILED"] == [] and manifest["ResultFiles"]["PENDING"] == []
    [succeeded] = manifest["ResultFiles"]["SUCCEEDED"]
    assert succeeded["Key"] == f"out/{run_id}/SUCCEEDED_0.json"
    results = json.loads(s3.get_object(Bucket="data", Key=succeeded["Key"])["Body"].read())
    assert sorted(json.loads(r["Output"])["v"] for r in results) == [2, 4]
    assert {r["Status"] for r in results} == {"SUCCEEDED"} and all(r["ExecutionArn"].startswith("arn:aws:states:") for r in results)
    assert sfn.describe_map_run(mapRunArn=run)["itemCounts"]["resultsWritten"] == 2

    compact = {"M": dmap(DOUBLE, ItemsPath="$.xs", ResultWriter={"WriterConfig": {"Transformation": "FLATTEN", "OutputType": "JSON"}}),}
    arn = start(sfn, compact, {"xs": [{"n": 1}]}, name="flat")
    assert output(finish(sfn, arn)) == [{"v": 2}]


def test_reader_and_writer_failures_are_their_states_errors(sfn, s3):
    reader = {"Resource": "arn:aws:states:::s3:getObject", "Parameters": {"Bucket": "data", "Key": "missing.json"}}
    d = finish(sfn, start(sfn, {"M": dmap(DOUBLE, ItemReader=reader)}, name="r"))
    assert d["status"] == "FAILED" and d["error"] == "States.ItemReaderFailed"
    s3.put_object(Bucket="data", Key="obj.json", Body=b'{"not": "a list"}')
    reader["Parameters"]["Key"] = "obj.json"
    d = finish(sfn, start(sfn, {"M": dmap(DOUBLE, ItemReader=reader)}, name="r2"))
    assert d["error"] == "States.ItemReaderFailed"
    writer = {"Resource": "arn:aws:states:::s3:putObject", "Parameters": {"Bucket": "no-such-bucket", "Prefix": "p"}}
    d = finish(sfn, start(sfn, {"M": dmap(DOUBLE, ItemsPath="$.xs", ResultWriter=writer)}, {"xs": [{"n": 1}]}, name="w"))
    assert d["status"] == "FAILED" and d["error"] == "States.ResultWriterFailed"


def test_update_map_run_changes_a_running_map(sfn, client):
    wait = {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}
    arn = start(sfn, {"M": dmap(wait, ItemsPath="$.xs", MaxConcurrency=1)}, {"xs": [1, 2, 3]})
    deadline = time.time() + 5
    while not sfn.list_map_runs(executionArn=arn)["mapRuns"] and time.time() < deadline:
        time.sleep(0.02)
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    time.sleep(0.2)
    described = sfn.describe_map_run(mapRunArn=run)
    assert described["status"] == "RUNNING" and described["executionCounts"]["running"] == 1
    assert described["executionCounts"]["pending"] == 2
    sfn.update_map_run(mapRunArn=run, maxConcurrency=3, toleratedFailureCount=1)
    deadline = time.time() + 5
    while sfn.describe_map_run(mapRunArn=run)["executionCounts"]["running"] < 3 and time.time() < deadline:
        time.sleep(0.02)
    described = sfn.describe_map_run(mapRunArn=run)
    assert described["executionCounts"]["running"] == 3 and described["maxConcurrency"] == 3
    assert described["toleratedFailureCount"] == 1
    sfn.stop_execution(executionArn=arn)
    deadline = time.time() + 5
    while sfn.describe_map_run(mapRunArn=run)["status"] == "RUNNING" and time.time() < deadline:
        time.sleep(0.02)
    assert sfn.describe_map_run(mapRunArn=run)["status"] == "ABORTED"
    children = sfn.list_executions(mapRunArn=run)["executions"]
    assert {c["status"] for c in children} == {"ABORTED"}


def test_map_run_api_errors(sfn):
    missing = "arn:aws:states:us-east-1:000000000000:mapRun:m/l:00000000-0000-0000-0000-000000000000"
    for call in (lambda: sfn.describe_map_run(mapRunArn=missing),
                 lambda: sfn.update_map_run(mapRunArn=missing, maxConcurrency=1),
                 lambda: sfn.list_executions(mapRunArn=missing)):
        with pytest.raises(ClientError) as e:
            call()
        assert error(e) == ("ResourceNotFound", f"Resource not found: '{missing}'")
    with pytest.raises(ClientError) as e:
        sfn.describe_map_run(mapRunArn="arn:aws:states:us-east-1:000000000000:activity:a")
    assert error(e)[0] == "InvalidArn"
    with pytest.raises(ClientError) as e:
        sfn.list_map_runs(executionArn="arn:aws:states:us-east-1:000000000000:execution:m:nope")
    assert error(e)[0] == "ExecutionDoesNotExist"
    arn = start(sfn, {"M": dmap(DOUBLE, ItemsPath="$.xs")}, {"xs": []})
    assert output(finish(sfn, arn)) == []
    run = sfn.list_map_runs(executionArn=arn)["mapRuns"][0]["mapRunArn"]
    with pytest.raises(ClientError) as e:
        sfn.update_map_run(mapRunArn=run)
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        sfn.list_executions(mapRunArn=run, stateMachineArn=machine_arn(arn))
    assert error(e)[0] == "ValidationException"


def test_describe_state_machine_of_a_labelled_map(sfn):
    inner = {"Inner": dmap({"E": {"Type": "Pass", "End": True}}, Label="deep")}
    states = {"P": {"Type": "Parallel", "Branches": [{"StartAt": "Inner", "States": inner}], "Next": "M"},
              "M": dmap(DOUBLE, Label="dbl")}
    arn = machine(sfn, states)
    described = sfn.describe_state_machine(stateMachineArn=f"{arn}/dbl")
    assert described["stateMachineArn"] == f"{arn}/dbl" and described["label"] == "dbl"
    assert described["name"] == "m" and described["type"] == "STANDARD" and described["status"] == "ACTIVE"
    assert json.loads(described["definition"]) == {"StartAt": "D", "States": DOUBLE}
    assert json.loads(sfn.describe_state_machine(stateMachineArn=f"{arn}/deep")["definition"])["StartAt"] == "E"
    assert "label" not in sfn.describe_state_machine(stateMachineArn=arn)
    for missing in (f"{arn}/nope", f"{arn}x/dbl"):
        with pytest.raises(ClientError) as e:
            sfn.describe_state_machine(stateMachineArn=missing)
        assert error(e) == ("StateMachineDoesNotExist", f"State Machine Does Not Exist: '{missing}'")
