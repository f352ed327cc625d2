"""More of the metrics Roto's services publish in CloudWatch's AWS/* namespaces, black-box
with boto3 and read back with GetMetricStatistics, GetMetricData and ListMetrics: Lambda's
per version and alias (Resource, ExecutedVersion), Kinesis's per stream, Step Functions'
per state machine, API Gateway's per REST API (ApiName, Stage) and HTTP API (ApiId,
Stage), Firehose's per delivery stream, and DynamoDB's consumed capacity of batches and
transactions."""

from __future__ import annotations

import http.client
import http.server
import json
import threading
from datetime import timedelta

import pytest
from botocore.config import Config

from cloudwatch_helpers import eventually, server_now, stats
from lambda_helpers import ROLE, zip_of
from sfn_helpers import ROLE as SFN_ROLE
from sfn_helpers import finish, machine


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def dimension_sets(cw, namespace, name):
    """The dimension sets ListMetrics shows for a metric, each as a set of pairs."""
    listed = cw.list_metrics(Namespace=namespace, MetricName=name)["Metrics"]
    return {frozenset((d["Name"], d["Value"]) for d in m["Dimensions"]) for m in listed}


def data(cw, server, namespace, name, dims, stat="Sum"):
    """GetMetricData's values of a metric over the last half hour, in one-hour periods."""
    now = server_now(server)
    query = {"Id": "m", "MetricStat": {"Metric": {
        "Namespace": namespace, "MetricName": name,
        "Dimensions": [{"Name": k, "Value": v} for k, v in dims.items()]},
        "Period": 3600, "Stat": stat}}
    result = cw.get_metric_data(MetricDataQueries=[query], StartTime=now - timedelta(minutes=30),
                                EndTime=now + timedelta(minutes=5))["MetricDataResults"][0]
    return result["Values"]


def test_lambda_versions_and_aliases_publish_resource_and_executed_version(server, client, cw):
    lam = client("lambda")
    lam.create_function(FunctionName="f", Runtime="python3.12", Role=ROLE, Handler="app.handler",
                        Code={"ZipFile": zip_of({"app.py": "def handler(e, c):\n    return 1\n"})})
    version = lam.publish_version(FunctionName="f")["Version"]
    lam.create_alias(FunctionName="f", Name="live", FunctionVersion=version)
    lam.invoke(FunctionName="f")
    lam.invoke(FunctionName="f", Qualifier=version)
    lam.invoke(FunctionName="f:live")
    lam.invoke(FunctionName="f", Qualifier="live")
    assert stats(cw, server, "AWS/Lambda", "Invocations", {"FunctionName": "f"})["Sum"] == 4.0
    on_alias = {"FunctionName": "f", "Resource": "f:live"}
    assert stats(cw, server, "AWS/Lambda", "Invocations", on_alias)["Sum"] == 2.0
    on_version = {"FunctionName": "f", "Resource": f"f:{version}"}
    assert stats(cw, server, "AWS/Lambda", "Invocations", on_version)["Sum"] == 1.0
    ran = {**on_alias, "ExecutedVersion": version}
    assert stats(cw, server, "AWS/Lambda", "Invocations", ran)["Sum"] == 2.0
    duration = stats(cw, server, "AWS/Lambda", "Duration", ran, ("SampleCount",))
    assert (duration["SampleCount"], duration["Unit"]) == (2.0, "Milliseconds")
    assert dimension_sets(cw, "AWS/Lambda", "Errors") == {
        frozenset(d.items()) for d in ({}, {"FunctionName": "f"}, ran, on_alias, on_version)}


def test_kinesis_puts_and_reads_publish_stream_metrics(server, client, cw):
    kinesis = client("kinesis")
    kinesis.create_stream(StreamName="clicks", ShardCount=1)
    for data_ in (b"abc", b"defgh"):
        kinesis.put_record(StreamName="clicks", Data=data_, PartitionKey="k")
    out = kinesis.put_records(StreamName="clicks", Records=[
        {"Data": b"x" * 10, "PartitionKey": "pk"} for _ in range(3)])
    assert out["FailedRecordCount"] == 0
    shard = kinesis.list_shards(StreamName="clicks")["Shards"][0]["ShardId"]
    iterator = kinesis.get_shard_iterator(StreamName="clicks", ShardId=shard,
                                          ShardIteratorType="TRIM_HORIZON")["ShardIterator"]
    got = kinesis.get_records(ShardIterator=iterator)
    assert len(got["Records"]) == 5
    kinesis.get_records(ShardIterator=got["NextShardIterator"])
    dims = {"StreamName": "clicks"}

    def total(name, stat="Sum"):
        return stats(cw, server, "AWS/Kinesis", name, dims, (stat,))[stat]

    assert total("IncomingRecords") == 5.0
    assert total("IncomingBytes") == 4 + 6 + 3 * 12
    assert (total("PutRecord.Success"), total("PutRecord.Bytes")) == (2.0, 10.0)
    latency = stats(cw, server, "AWS/Kinesis", "PutRecord.Latency", dims, ("SampleCount",))
    assert (latency["SampleCount"], latency["Unit"]) == (2.0, "Milliseconds")
    assert total("PutRecords.TotalRecords") == 3.0
    assert total("PutRecords.SuccessfulRecords") == 3.0
    assert total("PutRecords.ThrottledRecords") == 0.0
    assert total("PutRecords.Bytes") == 36.0
    assert total("GetRecords.Success") == 2.0
    assert (total("GetRecords.Records"), total("GetRecords.Records", "Maximum")) == (5.0, 5.0)
    assert total("GetRecords.Bytes") == 46.0
    age = stats(cw, server, "AWS/Kinesis", "GetRecords.IteratorAgeMilliseconds", dims, ("Maximum",))
    assert age["Unit"] == "Milliseconds" and age["Maximum"] >= 0
    assert data(cw, server, "AWS/Kinesis", "IncomingRecords", dims) == [5.0]


def test_step_functions_executions_publish_per_state_machine(server, client, cw):
    sfn = client("stepfunctions")
    ok = machine(sfn, {"P": {"Type": "Pass", "End": True}}, name="ok")
    bad = machine(sfn, {"F": {"Type": "Fail", "Error": "E"}}, name="bad")
    slow = machine(sfn, {"W": {"Type": "Wait", "Seconds": 3600, "End": True}}, name="slow")
    for arn in (ok, ok, bad):
        finish(sfn, sfn.start_execution(stateMachineArn=arn)["executionArn"])
    waiting = sfn.start_execution(stateMachineArn=slow)["executionArn"]
    sfn.stop_execution(executionArn=waiting)
    express = sfn.create_state_machine(
        name="fast", type="EXPRESS", roleArn=SFN_ROLE,
        definition=json.dumps({"StartAt": "P", "States": {"P": {"Type": "Pass", "End": True}}}),
    )["stateMachineArn"]
    sync = client("stepfunctions", config=Config(inject_host_prefix=False))
    assert sync.start_sync_execution(stateMachineArn=express)["status"] == "SUCCEEDED"

    def total(arn, name, stat="Sum"):
        got = stats(cw, server, "AWS/States", name, {"StateMachineArn": arn}, (stat,))
        return got and got[stat]

    assert (total(ok, "ExecutionsStarted"), total(ok, "ExecutionsSucceeded")) == (2.0, 2.0)
    assert (total(bad, "ExecutionsStarted"), total(bad, "ExecutionsFailed")) == (1.0, 1.0)
    assert total(bad, "ExecutionsSucceeded") is None
    assert eventually(lambda: total(slow, "ExecutionsAborted")) == 1.0
    assert total(express, "ExecutionsSucceeded") == 1.0
    took = stats(cw, server, "AWS/States", "ExecutionTime", {"StateMachineArn": ok}, ("SampleCount",))
    assert (took["SampleCount"], took["Unit"]) == (2.0, "Milliseconds")


def execute(server, api_id, path, method="GET"):
    conn = http.client.HTTPConnection(server.host, server.port, timeout=30)
    try:
        conn.request(method, path, headers={"Host": f"{api_id}.execute-api.localhost:{server.port}"})
        resp = conn.getresponse()
        resp.read()
        return resp.status
    finally:
        conn.close()


def test_rest_api_requests_publish_per_api_name_and_stage(server, client, cw):
    apigw = client("apigateway")
    api = apigw.create_rest_api(name="shop")["id"]
    root = apigw.get_resources(restApiId=api)["items"][0]["id"]
    apigw.put_method(restApiId=api, resourceId=root, httpMethod="GET", authorizationType="NONE")
    apigw.put_integration(restApiId=api, resourceId=root, httpMethod="GET", type="MOCK",
                          requestTemplates={"application/json": '{"statusCode": 200}'})
    apigw.put_method_response(restApiId=api, resourceId=root, httpMethod="GET", statusCode="200")
    apigw.put_integration_response(restApiId=api, resourceId=root, httpMethod="GET", statusCode="200")
    apigw.create_deployment(restApiId=api, stageName="prod")
    assert [execute(server, api, p) for p in ("/prod/", "/prod/", "/prod/missing")] == [200, 200, 403]
    for dims in ({"ApiName": "shop"}, {"ApiName": "shop", "Stage": "prod"}):
        count = stats(cw, server, "AWS/ApiGateway", "Count", dims, ("SampleCount", "Sum"))
        assert (count["SampleCount"], count["Sum"]) == (3.0, 3.0)
        client_errors = stats(cw, server, "AWS/ApiGateway", "4XXError", dims, ("Sum", "Average"))
        assert client_errors["Sum"] == 1.0 and client_errors["Average"] == pytest.approx(1 / 3)
        assert stats(cw, server, "AWS/ApiGateway", "5XXError", dims)["Sum"] == 0.0
        latency = stats(cw, server, "AWS/ApiGateway", "Latency", dims, ("SampleCount",))
        assert (latency["SampleCount"], latency["Unit"]) == (3.0, "Milliseconds")
    assert cw.list_metrics(Namespace="AWS/ApiGateway", MetricName="4xx")["Metrics"] == []


class Backend(http.server.BaseHTTPRequestHandler):
    def do_GET(self):  # noqa: N802 (the handler's name)
        status = 500 if self.path.endswith("/boom") else 200
        self.send_response(status)
        self.send_header("Content-Length", "2")
        self.end_headers()
        self.wfile.write(b"ok")

    def log_message(self, *args):
        pass


def test_http_api_requests_publish_per_api_id_and_stage(server, client, cw):
    httpd = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Backend)
    threading.Thread(target=httpd.serve_forever, daemon=True).start()
    try:
        apigw = client("apigatewayv2")
        api = apigw.create_api(Name="edge", ProtocolType="HTTP")["ApiId"]
        integration = apigw.create_integration(
            ApiId=api, IntegrationType="HTTP_PROXY", IntegrationMethod="ANY",
            IntegrationUri=f"http://127.0.0.1:{httpd.server_address[1]}/{{proxy}}")
        apigw.create_route(ApiId=api, RouteKey="GET /b/{proxy+}",
                           Target=f"integrations/{integration['IntegrationId']}")
        apigw.create_stage(ApiId=api, StageName="$default", AutoDeploy=True)
        statuses = [execute(server, api, p) for p in ("/b/fine", "/b/boom", "/nowhere")]
    finally:
        httpd.shutdown()
    assert statuses == [200, 500, 404]
    for dims in ({"ApiId": api}, {"ApiId": api, "Stage": "$default"}):
        assert stats(cw, server, "AWS/ApiGateway", "Count", dims)["Sum"] == 3.0
        assert stats(cw, server, "AWS/ApiGateway", "4xx", dims)["Sum"] == 1.0
        assert stats(cw, server, "AWS/ApiGateway", "5xx", dims)["Sum"] == 1.0
        integration_latency = stats(cw, server, "AWS/ApiGateway", "IntegrationLatency", dims,
                                    ("SampleCount",))
        assert integration_latency["SampleCount"] == 2.0
        processed = stats(cw, server, "AWS/ApiGateway", "DataProcessed", dims)
        assert processed["Unit"] == "Bytes" and processed["Sum"] > 0
    assert cw.list_metrics(Namespace="AWS/ApiGateway", MetricName="4XXError")["Metrics"] == []


def test_firehose_puts_and_s3_deliveries_publish_per_stream(server, client, cw):
    s3, firehose = client("s3"), client("firehose")
    s3.create_bucket(Bucket="landing")
    firehose.create_delivery_stream(DeliveryStreamName="hose", ExtendedS3DestinationConfiguration={
        "RoleARN": "arn:aws:iam::000000000000:role/firehose", "BucketARN": "arn:aws:s3:::landing",
        "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 1}})
    firehose.put_record(DeliveryStreamName="hose", Record={"Data": b"12345"})
    firehose.put_record_batch(DeliveryStreamName="hose", Records=[{"Data": b"ab"}, {"Data": b"cde"}])
    server.advance_clock(61)
    server.wait_for_delivery(service="firehose", target="arn:aws:s3:::landing", outcome="delivered")
    dims = {"DeliveryStreamName": "hose"}

    def total(name):
        got = eventually(lambda: stats(cw, server, "AWS/Firehose", name, dims))
        return got["Sum"]

    assert (total("IncomingRecords"), total("IncomingBytes")) == (3.0, 10.0)
    assert (total("IncomingPutRequests"), total("PutRecordBatch.Records")) == (2.0, 2.0)
    assert (total("PutRecord.Bytes"), total("PutRecordBatch.Bytes")) == (5.0, 5.0)
    assert (total("DeliveryToS3.Records"), total("DeliveryToS3.Bytes")) == (3.0, 10.0)
    assert total("DeliveryToS3.Success") == 1.0
    fresh = stats(cw, server, "AWS/Firehose", "DeliveryToS3.DataFreshness", dims, ("Maximum",))
    assert fresh["Unit"] == "Seconds" and fresh["Maximum"] >= 60


def test_dynamodb_batches_and_transactions_consume_capacity(server, client, cw):
    ddb = client("dynamodb")
    ddb.create_table(TableName="tab", KeySchema=[{"AttributeName": "pk", "KeyType": "HASH"}],
                     AttributeDefinitions=[{"AttributeName": "pk", "AttributeType": "S"}],
                     BillingMode="PAY_PER_REQUEST")
    written = ddb.batch_write_item(RequestItems={"tab": [
        {"PutRequest": {"Item": {"pk": {"S": "a"}}}},
        {"PutRequest": {"Item": {"pk": {"S": "b"}, "big": {"S": "x" * 1500}}}}]},
        ReturnConsumedCapacity="TOTAL")
    assert written["ConsumedCapacity"] == [{"TableName": "tab", "CapacityUnits": 3.0}]
    got = ddb.batch_get_item(RequestItems={"tab": {"Keys": [{"pk": {"S": "a"}}, {"pk": {"S": "zz"}}]}},
                             ReturnConsumedCapacity="TOTAL")
    assert got["ConsumedCapacity"] == [{"TableName": "tab", "CapacityUnits": 1.0}]
    transacted = ddb.transact_write_items(TransactItems=[
        {"Put": {"TableName": "tab", "Item": {"pk": {"S": "c"}}}},
        {"ConditionCheck": {"TableName": "tab", "Key": {"pk": {"S": "a"}},
                            "ConditionExpression": "attribute_exists(pk)"}}],
        ReturnConsumedCapacity="TOTAL")
    assert transacted["ConsumedCapacity"] == [{"TableName": "tab", "CapacityUnits": 4.0}]
    read = ddb.transact_get_items(TransactItems=[{"Get": {"TableName": "tab", "Key": {"pk": {"S": "a"}}}}],
                                  ReturnConsumedCapacity="TOTAL")
    assert read["ConsumedCapacity"] == [{"TableName": "tab", "CapacityUnits": 2.0}]
    assert "ConsumedCapacity" not in ddb.transact_get_items(
        TransactItems=[{"Get": {"TableName": "tab", "Key": {"pk": {"S": "a"}}}}])
    dims = {"TableName": "tab"}
    assert stats(cw, server, "AWS/DynamoDB", "ConsumedWriteCapacityUnits", dims)["Sum"] == 7.0
    assert stats(cw, server, "AWS/DynamoDB", "ConsumedReadCapacityUnits", dims)["Sum"] == 5.0
