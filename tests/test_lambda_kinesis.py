"""Lambda event source mappings from Kinesis data streams: the records' event shape,
starting positions and batching, resharding, retries with bisection and
ReportBatchItemFailures, the OnFailure destination with KinesisBatchInfo, and errors."""

from __future__ import annotations

import base64
import json
import os
import sys
import time

import pytest
from botocore.exceptions import ClientError

sys.path.insert(0, os.path.dirname(__file__))
from roto_server import RotoServer  # noqa: E402
from lambda_helpers import ROLE, zip_of  # noqa: E402
from test_lambda import error_of, make_client, unique  # noqa: E402
from test_lambda_streams import printed, wait_for  # noqa: E402

HANDLER = '''
import base64, json
SEEN = set()
def handler(event, context):
    records = event["Records"]
    data = [base64.b64decode(r["kinesis"]["data"]).decode() for r in records]
    print("BATCH", json.dumps(data))
    for r in records:
        print("RECORD", json.dumps(r))
    if any(d.startswith("fail") for d in data):
        raise RuntimeError("refusing " + ",".join(data))
    failures = []
    for r, d in zip(records, data):
        if d.startswith("flaky") and r["kinesis"]["sequenceNumber"] not in SEEN:
            SEEN.add(r["kinesis"]["sequenceNumber"])
            failures.append({"itemIdentifier": r["kinesis"]["sequenceNumber"]})
    return {"batchItemFailures": failures}
'''


@pytest.fixture(scope="module")
def server():
    with RotoServer("--ephemeral") as s:
        yield s


@pytest.fixture(scope="module")
def lam(server):
    return make_client(server, "lambda")


@pytest.fixture(scope="module")
def kinesis(server):
    return make_client(server, "kinesis")


@pytest.fixture(scope="module")
def logs(server):
    return make_client(server, "logs")


def stream(kinesis, shards=1):
    name = unique("ks")
    kinesis.create_stream(StreamName=name, ShardCount=shards)
    return name, kinesis.describe_stream_summary(StreamName=name)["StreamDescriptionSummary"]["StreamARN"]


def function(lam):
    name = unique("fn")
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": HANDLER})})
    return name


def put(kinesis, name, *data, key="k"):
    for d in data:
        kinesis.put_record(StreamName=name, Data=d.encode(), PartitionKey=key)


def batches(logs, fn):
    return [json.loads(b) for b in printed(logs, fn, "BATCH")]


def test_kinesis_records_reach_the_function_in_lambdas_event_shape(server, lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    put(kinesis, name, "one", "two")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON")
    assert mapping["StartingPosition"] == "TRIM_HORIZON" and mapping["BatchSize"] == 100
    records = wait_for(lambda: (r := [json.loads(m) for m in printed(logs, fn, "RECORD")]) and len(r) >= 2 and r)
    first = records[0]
    assert base64.b64decode(first["kinesis"]["data"]) == b"one"
    assert first["kinesis"]["partitionKey"] == "k" and first["kinesis"]["kinesisSchemaVersion"] == "1.0"
    assert len(first["kinesis"]["sequenceNumber"]) == 56
    assert isinstance(first["kinesis"]["approximateArrivalTimestamp"], float)
    assert (first["eventSource"], first["eventVersion"], first["eventName"]) == ("aws:kinesis", "1.0", "aws:kinesis:record")
    assert first["eventID"] == f"shardId-000000000000:{first['kinesis']['sequenceNumber']}"
    assert first["eventSourceARN"] == arn and first["awsRegion"] == "us-east-1"
    assert first["invokeIdentityArn"] == ROLE
    delivered = server.wait_for_delivery(service="lambda", operation="Invoke", outcome="delivered",
                                         target=mapping["FunctionArn"])
    assert delivered["source"] == arn
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_latest_windows_and_batches(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    put(kinesis, name, "old")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="LATEST",
                                              BatchSize=3, MaximumBatchingWindowInSeconds=2)
    put(kinesis, name, "n1", "n2", "n3", "n4")
    got = wait_for(lambda: (b := batches(logs, fn)) and sum(map(len, b)) >= 4 and b)
    assert got == [["n1", "n2", "n3"], ["n4"]]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_at_timestamp_and_starting_position_errors(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="AT_TIMESTAMP")
    assert error_of(e)[0] == "InvalidParameterValueException"
    missing = arn + "-missing"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=missing, FunctionName=fn, StartingPosition="LATEST")
    assert error_of(e) == ("InvalidParameterValueException", f"Stream not found: {missing}", 400)
    put(kinesis, name, "early")
    time.sleep(1.1)
    mark = time.time()
    put(kinesis, name, "late")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="AT_TIMESTAMP",
                                              StartingPositionTimestamp=mark)
    assert wait_for(lambda: batches(logs, fn) == [["late"]])
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_resharding_moves_on_to_the_children(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="LATEST")
    put(kinesis, name, "parent")
    assert wait_for(lambda: batches(logs, fn) == [["parent"]])
    kinesis.split_shard(StreamName=name, ShardToSplit="shardId-000000000000", NewStartingHashKey=str(2**127))
    kinesis.put_record(StreamName=name, Data=b"low", PartitionKey="k", ExplicitHashKey="1")
    kinesis.put_record(StreamName=name, Data=b"high", PartitionKey="k", ExplicitHashKey=str(2**127 + 1))
    got = wait_for(lambda: (b := batches(logs, fn)) and len(b) >= 3 and b)
    assert sorted(sum(got[1:], [])) == ["high", "low"]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_bisection_isolates_the_failing_record_and_sends_it_to_the_destination(server, lam, kinesis, logs):
    sqs = make_client(server, "sqs")
    queue = sqs.create_queue(QueueName=unique("kinesis-failures"))["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    name, arn = stream(kinesis)
    fn = function(lam)
    put(kinesis, name, "a", "b", "fail-c", "d")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              MaximumRetryAttempts=0, BisectBatchOnFunctionError=True,
                                              DestinationConfig={"OnFailure": {"Destination": queue_arn}})
    assert mapping["BisectBatchOnFunctionError"] is True
    message = wait_for(lambda: sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages"))
    record = json.loads(message[0]["Body"])
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    info = record["KinesisBatchInfo"]
    assert (info["batchSize"], info["streamArn"], info["shardId"]) == (1, arn, "shardId-000000000000")
    assert "DDBStreamBatchInfo" not in record
    got = wait_for(lambda: (b := batches(logs, fn)) and ["d"] in b and b)
    assert got == [["a", "b", "fail-c", "d"], ["a", "b"], ["fail-c", "d"], ["fail-c"], ["d"]]
    outcomes = [t["outcome"] for t in server.traces(service="lambda", kind="delivery", target=mapping["FunctionArn"])]
    assert outcomes.count("bisected") == 2
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_reported_item_failures_retry_from_the_first_failed_record(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    put(kinesis, name, "a", "flaky-b", "c")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              FunctionResponseTypes=["ReportBatchItemFailures"])
    got = wait_for(lambda: (b := batches(logs, fn)) and len(b) >= 2 and b)
    assert got == [["a", "flaky-b", "c"], ["flaky-b", "c"]]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_checkpoints_survive_a_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as first:
        lam, kinesis, logs = (make_client(first, s) for s in ("lambda", "kinesis", "logs"))
        name, arn = stream(kinesis)
        fn = function(lam)
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON")
        put(kinesis, name, "before-restart")
        assert wait_for(lambda: batches(logs, fn) == [["before-restart"]])
    with RotoServer("--data-dir", data) as second:
        kinesis, logs = make_client(second, "kinesis"), make_client(second, "logs")
        put(kinesis, name, "after-restart")
        assert wait_for(lambda: batches(logs, fn) == [["before-restart"], ["after-restart"]])


KEPT_WINDOW_HANDLER = '''
import base64, json
def handler(event, context):
    data = [base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]]
    if event["isFinalInvokeForWindow"]:
        print("FINAL", json.dumps({"state": event["state"], "early": event["isWindowTerminatedEarly"]}))
        return {"state": {}}
    state = dict(event["state"])
    state["seen"] = state.get("seen", []) + data
    print("WINDOW", json.dumps({"seen": state["seen"], "early": event["isWindowTerminatedEarly"]}))
    if "huge" in data:
        return {"state": {"blob": "x" * (1024 * 1024 + 1)}}
    return {"state": state}
'''


def test_a_tumbling_window_and_its_state_survive_a_restart_and_a_huge_state_ends_it_early(tmp_path):
    if time.time() % 900 > 840:
        pytest.skip("too close to the end of a 15-minute window for a restart within it")
    data = str(tmp_path / "data")

    def windows(logs, fn):
        return [json.loads(p) for p in printed(logs, fn, "WINDOW")]

    with RotoServer("--data-dir", data) as first:
        lam, kinesis, logs = (make_client(first, s) for s in ("lambda", "kinesis", "logs"))
        name, arn = stream(kinesis)
        fn = unique("fn")
        lam.create_function(FunctionName=fn, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                            Code={"ZipFile": zip_of({"app.py": KEPT_WINDOW_HANDLER})})
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                        TumblingWindowInSeconds=900)
        put(kinesis, name, "a")
        assert wait_for(lambda: windows(logs, fn) == [{"seen": ["a"], "early": False}])
    with RotoServer("--data-dir", data) as second:
        kinesis, logs = make_client(second, "kinesis"), make_client(second, "logs")
        put(kinesis, name, "b")
        assert wait_for(lambda: len(windows(logs, fn)) >= 2)
        assert windows(logs, fn)[1] == {"seen": ["a", "b"], "early": False}
        assert printed(logs, fn, "FINAL") == []
        put(kinesis, name, "huge")
        final = wait_for(lambda: [json.loads(p) for p in printed(logs, fn, "FINAL")])
        assert final == [{"state": {"seen": ["a", "b"]}, "early": True}]
        put(kinesis, name, "c")
        assert wait_for(lambda: len(windows(logs, fn)) >= 4)
        assert windows(logs, fn)[3] == {"seen": ["c"], "early": False}


TIMED_HANDLER = '''
import base64, json, time
def handler(event, context):
    started = time.time()
    time.sleep(0.4)
    data = [base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]]
    print("SPAN", json.dumps([started, time.time(), data]))
'''


def test_parallelization_factor_runs_lanes_at_once_in_key_order(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = unique("fn")
    lam.create_function(FunctionName=fn, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": TIMED_HANDLER})})
    keys = [f"key-{i}" for i in range(8)]
    for round_ in range(3):
        for key in keys:
            put(kinesis, name, f"{key}/{round_}", key=key)
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              BatchSize=1, ParallelizationFactor=10)
    assert lam.get_event_source_mapping(UUID=mapping["UUID"])["ParallelizationFactor"] == 10
    spans = wait_for(lambda: (s := [json.loads(p) for p in printed(logs, fn, "SPAN")]) and len(s) >= 24 and s,
                     timeout=30)
    assert sorted(d for _, _, data in spans for d in data) == sorted(f"{k}/{r}" for k in keys for r in range(3))
    for key in keys:
        order = [d for _, _, data in sorted(spans) for d in data if d.startswith(key + "/")]
        assert order == [f"{key}/{r}" for r in range(3)]
    overlapping = sum(1 for a in spans for b in spans if a is not b and a[0] < b[0] < a[1])
    assert overlapping > 0
    lam.delete_event_source_mapping(UUID=mapping["UUID"])
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="LATEST",
                                        ParallelizationFactor=11)
    assert error_of(e) == ("ValidationException", "1 validation error detected: Value '11' at 'parallelizationFactor' "
                           "failed to satisfy constraint: Member must have value less than or equal to 10", 400)


def test_filters_pass_only_matching_json_data(lam, kinesis, logs):
    name, arn = stream(kinesis)
    fn = function(lam)
    pattern = json.dumps({"data": {"kind": ["keep"]}})
    for bad in ("{not json", json.dumps({"data": "keep"}), ""):
        with pytest.raises(ClientError) as e:
            lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                            FilterCriteria={"Filters": [{"Pattern": bad}]})
        assert error_of(e) == ("InvalidParameterValueException", "Invalid filter pattern definition.", 400)
    six = [{"Pattern": json.dumps({"data": {"n": [i]}})} for i in range(6)]
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                        FilterCriteria={"Filters": six})
    assert error_of(e)[0] == "InvalidParameterValueException"
    put(kinesis, name, json.dumps({"kind": "drop", "n": 1}), "plain text", json.dumps({"kind": "keep", "n": 2}))
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              FilterCriteria={"Filters": [{"Pattern": pattern}]})
    assert mapping["FilterCriteria"] == {"Filters": [{"Pattern": pattern}]}
    assert wait_for(lambda: batches(logs, fn) == [[json.dumps({"kind": "keep", "n": 2})]])
    with pytest.raises(ClientError) as e:
        lam.update_event_source_mapping(UUID=mapping["UUID"], FilterCriteria={"Filters": [{"Pattern": "[1]"}]})
    assert error_of(e)[0] == "InvalidParameterValueException"
    with pytest.raises(ClientError) as e:
        lam.update_event_source_mapping(UUID=mapping["UUID"], FilterCriteria={"Filters": six})
    assert error_of(e) == ("InvalidParameterValueException",
                           "The number of filters in FilterCriteria (6) exceeds the limit of 5 filters per event source mapping.", 400)
    lam.update_event_source_mapping(UUID=mapping["UUID"], FilterCriteria={"Filters": six[:5]})
    either = [{"Pattern": pattern}, {"Pattern": json.dumps({"data": {"n": [{"numeric": [">", 10]}]}})}]
    lam.update_event_source_mapping(UUID=mapping["UUID"], FilterCriteria={"Filters": either})
    put(kinesis, name, json.dumps({"kind": "drop", "n": 11}), json.dumps({"kind": "drop", "n": 3}))
    got = wait_for(lambda: (b := batches(logs, fn)) and len(b) >= 2 and b)
    assert got == [[json.dumps({"kind": "keep", "n": 2})], [json.dumps({"kind": "drop", "n": 11})]]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_retries_exhausted_go_to_an_sns_destination(server, lam, kinesis, logs):
    sns, sqs = make_client(server, "sns"), make_client(server, "sqs")
    topic = sns.create_topic(Name=unique("kinesis-failures"))["TopicArn"]
    queue = sqs.create_queue(QueueName=unique("kinesis-topic-copy"))["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    sns.subscribe(TopicArn=topic, Protocol="sqs", Endpoint=queue_arn, Attributes={"RawMessageDelivery": "true"})
    name, arn = stream(kinesis)
    fn = function(lam)
    put(kinesis, name, "fail-1", "fail-2")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              MaximumRetryAttempts=1,
                                              DestinationConfig={"OnFailure": {"Destination": topic}})
    message = wait_for(lambda: sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages"))
    record = json.loads(message[0]["Body"])
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 2
    assert record["responseContext"]["functionError"] == "Unhandled"
    info = record["KinesisBatchInfo"]
    assert info["batchSize"] == 2 and info["streamArn"] == arn
    assert batches(logs, fn) == [["fail-1", "fail-2"], ["fail-1", "fail-2"]]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


WINDOW_HANDLER = '''
import base64, json
def handler(event, context):
    data = [base64.b64decode(r["kinesis"]["data"]).decode() for r in event["Records"]]
    state = dict(event["state"])
    if event["isFinalInvokeForWindow"]:
        print("FINAL", json.dumps({"state": state, "window": event["window"], "records": data}))
        return {"state": {}}
    state["seen"] = state.get("seen", []) + data
    print("WINDOW", json.dumps({"state": state, "window": event["window"], "shard": event["shardId"],
                                "arn": event["eventSourceARN"], "early": event["isWindowTerminatedEarly"]}))
    if "stateless" in data:
        return {}
    return {"state": state}
'''


def test_tumbling_windows_carry_state_and_end_with_a_final_invocation():
    with RotoServer("--ephemeral") as server:
        lam, kinesis, logs = (make_client(server, s) for s in ("lambda", "kinesis", "logs"))
        name, arn = stream(kinesis)
        fn = unique("fn")
        lam.create_function(FunctionName=fn, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                            Code={"ZipFile": zip_of({"app.py": WINDOW_HANDLER})})
        server.advance_clock(900 - time.time() % 900 + 1)  # 1 s into a fresh 15-minute window
        put(kinesis, name, "a", "b")
        mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                                  TumblingWindowInSeconds=900)
        assert lam.get_event_source_mapping(UUID=mapping["UUID"])["TumblingWindowInSeconds"] == 900

        def windows():
            return [json.loads(p) for p in printed(logs, fn, "WINDOW")]

        first = wait_for(lambda: windows())
        assert first[0]["state"] == {"seen": ["a", "b"]} and first[0]["shard"] == "shardId-000000000000"
        assert first[0]["arn"] == arn and first[0]["early"] is False
        start, end = first[0]["window"]["start"], first[0]["window"]["end"]
        assert start.endswith(("00:00Z", "15:00Z", "30:00Z", "45:00Z")) and end > start
        put(kinesis, name, "c")
        assert wait_for(lambda: len(w := windows()) >= 2 and w[1]["state"] == {"seen": ["a", "b", "c"]})
        server.advance_clock(900)
        final = wait_for(lambda: [json.loads(p) for p in printed(logs, fn, "FINAL")])
        assert final == [{"state": {"seen": ["a", "b", "c"]}, "window": {"start": start, "end": end}, "records": []}]
        put(kinesis, name, "d")
        later = wait_for(lambda: len(w := windows()) >= 3 and w[2])
        assert later["state"] == {"seen": ["d"]} and later["window"]["start"] == end
        put(kinesis, name, "stateless")
        retried = wait_for(lambda: sum(1 for w in windows() if "stateless" in w["state"]["seen"]) >= 2)
        assert retried
        with pytest.raises(ClientError) as e:
            lam.update_event_source_mapping(UUID=mapping["UUID"], TumblingWindowInSeconds=901)
        assert error_of(e)[0] == "ValidationException"
