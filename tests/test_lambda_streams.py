"""Lambda event source mappings from DynamoDB streams: the mapping's configuration and
errors, the records' event shape, starting positions and batching, retries with
ReportBatchItemFailures and the OnFailure destination, disabling, and checkpoints that
survive a restart."""

from __future__ import annotations

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

STREAM_HANDLER = '''
import json
SEEN = set()
def handler(event, context):
    records = event["Records"]
    print("BATCH", json.dumps([r["dynamodb"]["Keys"]["pk"]["S"] for r in records]))
    for r in records:
        print("RECORD", json.dumps(r))
    failures = []
    for r in records:
        image = r["dynamodb"].get("NewImage", {})
        if "fail" in image:
            raise RuntimeError("refusing " + r["dynamodb"]["Keys"]["pk"]["S"])
        if "flaky" in image and r["dynamodb"]["SequenceNumber"] not in SEEN:
            SEEN.add(r["dynamodb"]["SequenceNumber"])
            failures.append({"itemIdentifier": r["dynamodb"]["SequenceNumber"]})
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
def db(server):
    return make_client(server, "dynamodb")


@pytest.fixture(scope="module")
def logs(server):
    return make_client(server, "logs")


def stream_table(db, view_type="NEW_AND_OLD_IMAGES"):
    name = unique("tbl")
    described = db.create_table(TableName=name, BillingMode="PAY_PER_REQUEST",
                                AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                                KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                                StreamSpecification={"StreamEnabled": True, "StreamViewType": view_type})
    return name, described["TableDescription"]["LatestStreamArn"]


def stream_function(lam, handler=STREAM_HANDLER):
    name = unique("fn")
    lam.create_function(FunctionName=name, Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": handler})})
    return name


def put(db, table, key, **attributes):
    item = {"pk": {"S": key}, **attributes}
    db.put_item(TableName=table, Item=item)


def printed(logs, function, word):
    group = f"/aws/lambda/{function}"
    if not logs.describe_log_groups(logGroupNamePrefix=group)["logGroups"]:
        return []
    events = logs.filter_log_events(logGroupName=group, filterPattern=f'"{word}"')["events"]
    return [e["message"].split(" ", 1)[1] for e in events]


def batches(logs, function):
    return [json.loads(b) for b in printed(logs, function, "BATCH")]


def wait_for(predicate, timeout=15.0):
    deadline = time.time() + timeout
    while time.time() < deadline:
        value = predicate()
        if value:
            return value
        time.sleep(0.1)
    return predicate()


def test_stream_mappings_are_configured_with_the_stream_defaults(lam, db):
    _, arn = stream_table(db)
    function = stream_function(lam)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function)
    assert error_of(e) == ("InvalidParameterValueException", "1 validation error detected: Value null at "
                           "'startingPosition' failed to satisfy constraint: Member must not be null.", 400)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="AT_TIMESTAMP",
                                        StartingPositionTimestamp=time.time())
    assert error_of(e) == ("InvalidParameterValueException", f"Unsupported starting position for arn type: {arn}", 400)
    missing = arn.replace(arn.split("/")[1], "no-such-table")
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=missing, FunctionName=function, StartingPosition="LATEST")
    assert error_of(e) == ("InvalidParameterValueException", f"Stream not found: {missing}", 400)
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST",
                                        DestinationConfig={"OnSuccess": {"Destination": "arn:aws:sqs:us-east-1:000000000000:q"}})
    assert error_of(e)[1] == "Unsupported DestinationConfig parameter for given event source mapping type."
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST",
                                        MaximumRecordAgeInSeconds=30)
    assert error_of(e)[0] == "InvalidParameterValueException"
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn="arn:aws:kinesis:us-east-1:000000000000:stream/s",
                                        FunctionName=function, StartingPosition="LATEST")
    assert error_of(e)[0] == "InvalidParameterValueException"

    created = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="TRIM_HORIZON")
    assert created["ResponseMetadata"]["HTTPStatusCode"] == 202
    expected = {"BatchSize": 100, "MaximumBatchingWindowInSeconds": 0, "StartingPosition": "TRIM_HORIZON",
                "ParallelizationFactor": 1, "MaximumRecordAgeInSeconds": -1, "MaximumRetryAttempts": -1,
                "BisectBatchOnFunctionError": False, "TumblingWindowInSeconds": 0, "FunctionResponseTypes": [],
                "DestinationConfig": {"OnFailure": {}}, "LastProcessingResult": "No records processed",
                "State": "Creating", "StateTransitionReason": "User action", "EventSourceArn": arn}
    assert {k: created[k] for k in expected} == expected
    assert created["FunctionArn"].endswith(f":function:{function}")
    with pytest.raises(ClientError) as e:
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST")
    assert error_of(e) == ("ResourceConflictException",
                           f'The event source arn (" {arn} ") and function (" {function} ") provided mapping already '
                           f"exists. Please update or delete the existing mapping with UUID {created['UUID']}", 409)
    assert lam.get_event_source_mapping(UUID=created["UUID"])["State"] == "Enabled"
    destination = "arn:aws:sqs:us-east-1:000000000000:failures"
    updated = lam.update_event_source_mapping(UUID=created["UUID"], BatchSize=5, MaximumRetryAttempts=3,
                                              BisectBatchOnFunctionError=True,
                                              DestinationConfig={"OnFailure": {"Destination": destination}})
    assert (updated["BatchSize"], updated["MaximumRetryAttempts"], updated["BisectBatchOnFunctionError"]) == (5, 3, True)
    assert updated["DestinationConfig"] == {"OnFailure": {"Destination": destination}}
    assert updated["StartingPosition"] == "TRIM_HORIZON"
    assert lam.delete_event_source_mapping(UUID=created["UUID"])["State"] == "Deleting"


def test_records_reach_the_function_in_lambdas_event_shape(server, lam, db, logs):
    table, arn = stream_table(db)
    function = stream_function(lam)
    put(db, table, "before", data={"B": b"foobar"})
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="TRIM_HORIZON")
    db.update_item(TableName=table, Key={"pk": {"S": "before"}}, UpdateExpression="SET n = :n",
                   ExpressionAttributeValues={":n": {"N": "7"}})
    db.delete_item(TableName=table, Key={"pk": {"S": "before"}})
    records = wait_for(lambda: (r := [json.loads(m) for m in printed(logs, function, "RECORD")]) and len(r) >= 3 and r)
    assert [r["eventName"] for r in records] == ["INSERT", "MODIFY", "REMOVE"]
    insert, modify, remove = records
    for record in records:
        assert (record["eventSource"], record["eventVersion"], record["awsRegion"]) == ("aws:dynamodb", "1.1", "us-east-1")
        assert record["eventSourceARN"] == arn
        assert record["dynamodb"]["StreamViewType"] == "NEW_AND_OLD_IMAGES"
        assert record["dynamodb"]["Keys"] == {"pk": {"S": "before"}}
        assert isinstance(record["dynamodb"]["ApproximateCreationDateTime"], int)
        assert record["dynamodb"]["SizeBytes"] > 0 and len(record["dynamodb"]["SequenceNumber"]) == 21
    assert insert["dynamodb"]["NewImage"] == {"pk": {"S": "before"}, "data": {"B": "Zm9vYmFy"}}
    assert "OldImage" not in insert["dynamodb"]
    assert modify["dynamodb"]["NewImage"]["n"] == {"N": "7"} and "n" not in modify["dynamodb"]["OldImage"]
    assert "NewImage" not in remove["dynamodb"] and remove["dynamodb"]["OldImage"]["n"] == {"N": "7"}
    assert len({r["eventID"] for r in records}) == 3
    sequences = [int(r["dynamodb"]["SequenceNumber"]) for r in records]
    assert sequences == sorted(sequences)
    delivered = server.wait_for_delivery(service="lambda", operation="Invoke", outcome="delivered",
                                         target=mapping["FunctionArn"])
    assert delivered["source"] == arn
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_latest_starts_after_what_the_stream_holds_and_windows_fill_batches(lam, db, logs):
    table, arn = stream_table(db, view_type="KEYS_ONLY")
    function = stream_function(lam)
    put(db, table, "old-1")
    put(db, table, "old-2")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST",
                                              BatchSize=3, MaximumBatchingWindowInSeconds=2)
    for key in ("new-1", "new-2", "new-3", "new-4"):
        put(db, table, key)
    got = wait_for(lambda: (b := batches(logs, function)) and sum(map(len, b)) >= 4 and b)
    assert got == [["new-1", "new-2", "new-3"], ["new-4"]]
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_failed_batches_are_retried_then_sent_to_the_on_failure_destination(server, lam, db, logs):
    sqs = make_client(server, "sqs")
    queue = sqs.create_queue(QueueName=unique("stream-failures"))["QueueUrl"]
    queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
    table, arn = stream_table(db)
    function = stream_function(lam)
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST",
                                              MaximumRetryAttempts=1,
                                              DestinationConfig={"OnFailure": {"Destination": queue_arn}})
    put(db, table, "poison", fail={"BOOL": True})
    message = wait_for(lambda: sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages"))
    record = json.loads(message[0]["Body"])
    assert record["requestContext"]["condition"] == "RetryAttemptsExhausted"
    assert record["requestContext"]["approximateInvokeCount"] == 2
    assert record["requestContext"]["functionArn"] == mapping["FunctionArn"]
    assert record["responseContext"] == {"statusCode": 200, "executedVersion": "$LATEST", "functionError": "Unhandled"}
    info = record["DDBStreamBatchInfo"]
    assert (info["batchSize"], info["streamArn"]) == (1, arn)
    assert info["startSequenceNumber"] == info["endSequenceNumber"]
    assert info["approximateArrivalOfFirstRecord"].endswith("Z") and info["shardId"].startswith("shardId-")
    assert wait_for(lambda: batches(logs, function) == [["poison"], ["poison"]])
    outcomes = [t["outcome"] for t in server.traces(service="lambda", kind="delivery", target=mapping["FunctionArn"])]
    assert sorted(outcomes) == ["failed", "retrying"]
    put(db, table, "healthy")  # the poller has moved past the batch it gave up on
    assert wait_for(lambda: batches(logs, function)[-1:] == [["healthy"]])
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_reported_item_failures_retry_from_the_first_failed_record(lam, db, logs):
    table, arn = stream_table(db)
    function = stream_function(lam)
    put(db, table, "a")
    put(db, table, "b", flaky={"BOOL": True})
    put(db, table, "c")
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="TRIM_HORIZON",
                                              FunctionResponseTypes=["ReportBatchItemFailures"])
    got = wait_for(lambda: (b := batches(logs, function)) and len(b) >= 2 and b)
    assert got == [["a", "b", "c"], ["b", "c"]]
    time.sleep(1.5)
    assert len(batches(logs, function)) == 2  # nothing is retried once it succeeded
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_a_disabled_mapping_resumes_from_its_checkpoint(lam, db, logs):
    table, arn = stream_table(db)
    function = stream_function(lam)
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST")
    put(db, table, "first")
    assert wait_for(lambda: batches(logs, function) == [["first"]])
    lam.update_event_source_mapping(UUID=mapping["UUID"], Enabled=False)
    time.sleep(1.5)
    put(db, table, "while-disabled")
    time.sleep(1.5)
    assert batches(logs, function) == [["first"]]
    lam.update_event_source_mapping(UUID=mapping["UUID"], Enabled=True)
    assert wait_for(lambda: batches(logs, function) == [["first"], ["while-disabled"]])
    lam.delete_event_source_mapping(UUID=mapping["UUID"])


def test_checkpoints_survive_a_restart(tmp_path):
    data = str(tmp_path / "data")
    with RotoServer("--data-dir", data) as first:
        lam, db, logs = make_client(first, "lambda"), make_client(first, "dynamodb"), make_client(first, "logs")
        table, arn = stream_table(db)
        function = stream_function(lam)
        lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="TRIM_HORIZON")
        put(db, table, "before-restart")
        assert wait_for(lambda: batches(logs, function) == [["before-restart"]])
    with RotoServer("--data-dir", data) as second:
        db, logs = make_client(second, "dynamodb"), make_client(second, "logs")
        put(db, table, "after-restart")
        assert wait_for(lambda: batches(logs, function) == [["before-restart"], ["after-restart"]])


def test_records_older_than_the_maximum_age_are_given_up():
    with RotoServer("--ephemeral") as own:
        lam, db, logs, sqs = (make_client(own, s) for s in ("lambda", "dynamodb", "logs", "sqs"))
        queue = sqs.create_queue(QueueName="too-old-records")["QueueUrl"]
        queue_arn = sqs.get_queue_attributes(QueueUrl=queue, AttributeNames=["QueueArn"])["Attributes"]["QueueArn"]
        table, arn = stream_table(db)
        function = stream_function(lam)
        mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=function, StartingPosition="LATEST",
                                                  MaximumRecordAgeInSeconds=60,
                                                  DestinationConfig={"OnFailure": {"Destination": queue_arn}})
        put(db, table, "stale", fail={"BOOL": True})
        own.wait_for_delivery(service="lambda", operation="Invoke", outcome="retrying", target=mapping["FunctionArn"])
        assert not sqs.receive_message(QueueUrl=queue).get("Messages")  # -1 retries: it keeps trying
        own.advance_clock(120)
        message = wait_for(lambda: sqs.receive_message(QueueUrl=queue, WaitTimeSeconds=1).get("Messages"))
        record = json.loads(message[0]["Body"])
        assert record["requestContext"]["condition"] == "RecordAgeExceeded"
        assert record["DDBStreamBatchInfo"]["batchSize"] == 1
        put(db, table, "fresh")
        assert wait_for(lambda: batches(logs, function)[-1:] == [["fresh"]])


def test_filters_pass_only_matching_records(lam, db, logs):
    table, arn = stream_table(db)
    fn = stream_function(lam)
    only_inserts = json.dumps({"eventName": ["INSERT"], "dynamodb": {"NewImage": {"colour": {"S": ["red"]}}}})
    mapping = lam.create_event_source_mapping(EventSourceArn=arn, FunctionName=fn, StartingPosition="TRIM_HORIZON",
                                              FilterCriteria={"Filters": [{"Pattern": only_inserts}]})
    put(db, table, "a", colour={"S": "blue"})
    put(db, table, "b", colour={"S": "red"})
    put(db, table, "b", colour={"S": "red"}, size={"N": "2"})
    put(db, table, "c", colour={"S": "red"})
    got = wait_for(lambda: (b := batches(logs, fn)) and sum(map(len, b)) >= 2 and b)
    assert sum(got, []) == ["b", "c"]
    with pytest.raises(ClientError) as e:
        lam.update_event_source_mapping(UUID=mapping["UUID"], FilterCriteria={"Filters": [{"Pattern": "{\"a\": 1}"}]})
    assert error_of(e) == ("InvalidParameterValueException", "Invalid filter pattern definition.", 400)
    lam.delete_event_source_mapping(UUID=mapping["UUID"])
