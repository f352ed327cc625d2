"""Amazon Data Firehose's other deliveries, black-box with boto3: HTTP endpoints (AWS's
request format, retries, the S3 backup of what failed), Lambda transformation, dynamic
partitioning, Kinesis data streams as source, and destinations Roto cannot reach."""

from __future__ import annotations

import base64
import gzip
import json
import threading
from http.server import BaseHTTPRequestHandler, HTTPServer

import pytest

from lambda_helpers import ROLE as LAMBDA_ROLE, zip_of

ROLE = "arn:aws:iam::000000000000:role/firehose"
BUCKET = "landing"
BUCKET_ARN = f"arn:aws:s3:::{BUCKET}"


@pytest.fixture
def firehose(client):
    return client("firehose")


@pytest.fixture
def s3(client):
    s3 = client("s3")
    s3.create_bucket(Bucket=BUCKET)
    return s3


def objects(s3, prefix=""):
    listed = s3.list_objects_v2(Bucket=BUCKET, Prefix=prefix).get("Contents", [])
    return {o["Key"]: s3.get_object(Bucket=BUCKET, Key=o["Key"])["Body"].read() for o in listed}


class Endpoint:
    """A local HTTP endpoint that records Firehose's requests and answers `status`."""

    def __init__(self, status=200, echo=True):
        self.requests: list[tuple[dict, bytes]] = []
        self.status, self.echo = status, echo
        endpoint = self

        class Handler(BaseHTTPRequestHandler):
            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                endpoint.requests.append(({k.lower(): v for k, v in self.headers.items()}, body))
                if self.headers.get("Content-Encoding") == "gzip":
                    body = gzip.decompress(body)
                request_id = json.loads(body)["requestId"] if endpoint.echo else "other"
                answer = json.dumps({"requestId": request_id, "timestamp": 1}).encode()
                self.send_response(endpoint.status)
                self.send_header("Content-Length", str(len(answer)))
                self.end_headers()
                self.wfile.write(answer)

            def log_message(self, *args):
                pass

        self.server = HTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()
        self.url = f"https://127.0.0.1:{self.server.server_port}/ingest"

    def close(self):
        self.server.shutdown()


def http_stream(firehose, endpoint, **extra):
    config = {
        "EndpointConfiguration": {"Url": endpoint.url, "Name": "local", "AccessKey": "secret-key"},
        "BufferingHints": {"IntervalInSeconds": 0, "SizeInMBs": 1},
        "RequestConfiguration": {
            "ContentEncoding": "GZIP",
            "CommonAttributes": [{"AttributeName": "env", "AttributeValue": "test"}],
        },
        "S3Configuration": {"RoleARN": ROLE, "BucketARN": BUCKET_ARN},
    }
    config.update(extra)
    firehose.create_delivery_stream(DeliveryStreamName="web", HttpEndpointDestinationConfiguration=config)


def test_http_endpoint_gets_aws_request_format(server, firehose, s3):
    endpoint = Endpoint()
    try:
        http_stream(firehose, endpoint)
        d = firehose.describe_delivery_stream(DeliveryStreamName="web")["DeliveryStreamDescription"]
        described = d["Destinations"][0]["HttpEndpointDestinationDescription"]
        assert described["EndpointConfiguration"] == {"Url": endpoint.url, "Name": "local"}
        assert described["S3BackupMode"] == "FailedDataOnly"
        firehose.put_record_batch(DeliveryStreamName="web", Records=[{"Data": b"one"}, {"Data": b"two"}])
        server.wait_for_delivery(service="firehose", target=endpoint.url, outcome="delivered")
        [(headers, body)] = endpoint.requests
        assert headers["x-amz-firehose-access-key"] == "secret-key"
        assert headers["x-amz-firehose-protocol-version"] == "1.0"
        assert headers["x-amz-firehose-source-arn"] == d["DeliveryStreamARN"]
        assert json.loads(headers["x-amz-firehose-common-attributes"]) == {"commonAttributes": {"env": "test"}}
        assert headers["content-type"] == "application/json"
        doc = json.loads(gzip.decompress(body))
        assert doc["requestId"] == headers["x-amz-firehose-request-id"]
        assert [base64.b64decode(r["data"]) for r in doc["records"]] == [b"one", b"two"]
        assert objects(s3) == {}
    finally:
        endpoint.close()


def test_http_endpoint_failures_are_retried_then_backed_up(server, firehose, s3):
    endpoint = Endpoint(status=500)
    try:
        http_stream(firehose, endpoint)
        firehose.put_record(DeliveryStreamName="web", Record={"Data": b"lost"})
        entry = server.wait_for_delivery(service="firehose", target=endpoint.url, outcome="retrying")
        assert entry["detail"].startswith("HttpEndpoint.DestinationException")
        for _ in range(10):
            server.advance_clock(10)
            if server.traces(kind="delivery", service="firehose", outcome="failed"):
                break
        server.wait_for_delivery(service="firehose", target=endpoint.url, outcome="failed")
        server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
        [(key, body)] = objects(s3).items()
        assert key.startswith("http-endpoint-failed/")
        line = json.loads(body)
        assert line["errorCode"] == "HttpEndpoint.DestinationException"
        assert base64.b64decode(line["rawData"]) == b"lost"
        assert len(endpoint.requests) == 4
    finally:
        endpoint.close()


def test_unreachable_destinations_fail_as_aws_reports(server, firehose, s3):
    firehose.create_delivery_stream(
        DeliveryStreamName="splunk",
        SplunkDestinationConfiguration={
            "HECEndpoint": "https://splunk.example:8088",
            "HECEndpointType": "Raw",
            "HECToken": "token",
            "BufferingHints": {"IntervalInSeconds": 0, "SizeInMBs": 1},
            "S3Configuration": {"RoleARN": ROLE, "BucketARN": BUCKET_ARN},
        },
    )
    d = firehose.describe_delivery_stream(DeliveryStreamName="splunk")["DeliveryStreamDescription"]
    assert d["Destinations"][0]["SplunkDestinationDescription"]["HECEndpoint"] == "https://splunk.example:8088"
    firehose.put_record(DeliveryStreamName="splunk", Record={"Data": b"event"})
    entry = server.wait_for_delivery(service="firehose", target="https://splunk.example:8088", outcome="failed")
    assert entry["detail"].startswith("Splunk.ConnectionTimeout")
    server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
    [key] = objects(s3)
    assert key.startswith("splunk-failed/")


TRANSFORM = """
import base64, json

def handler(event, context):
    out = []
    for r in event["records"]:
        doc = json.loads(base64.b64decode(r["data"]))
        if doc.get("drop"):
            out.append({"recordId": r["recordId"], "result": "Dropped"})
        elif doc.get("bad"):
            out.append({"recordId": r["recordId"], "result": "ProcessingFailed", "data": r["data"]})
        else:
            doc["seen"] = event["deliveryStreamArn"].split("/")[-1]
            data = base64.b64encode((json.dumps(doc) + "\\n").encode()).decode()
            out.append({"recordId": r["recordId"], "result": "Ok", "data": data,
                        "metadata": {"partitionKeys": {"kind": doc["kind"]}}})
    return {"records": out}
"""


def test_lambda_transformation_and_partition_keys(server, firehose, s3, client):
    lam = client("lambda")
    arn = lam.create_function(
        FunctionName="transform", Runtime="python3.12", Role=LAMBDA_ROLE, Handler="app.handler",
        Code={"ZipFile": zip_of({"app.py": TRANSFORM})}, Timeout=30,
    )["FunctionArn"]
    firehose.create_delivery_stream(
        DeliveryStreamName="t",
        ExtendedS3DestinationConfiguration={
            "RoleARN": ROLE, "BucketARN": BUCKET_ARN,
            "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 64},
            "Prefix": "kind=!{partitionKeyFromLambda:kind}/",
            "ErrorOutputPrefix": "errors/!{firehose:error-output-type}/",
            "DynamicPartitioningConfiguration": {"Enabled": True},
            "ProcessingConfiguration": {"Enabled": True, "Processors": [
                {"Type": "Lambda", "Parameters": [{"ParameterName": "LambdaArn", "ParameterValue": arn}]},
            ]},
        },
    )
    records = [{"kind": "a", "n": 1}, {"kind": "b", "n": 2}, {"drop": True}, {"bad": True}, {"kind": "a", "n": 3}]
    firehose.put_record_batch(DeliveryStreamName="t", Records=[{"Data": json.dumps(r).encode()} for r in records])
    server.advance_clock(61)
    server.wait_for_delivery(timeout=60, service="firehose", target=BUCKET_ARN, outcome="delivered")
    found = objects(s3)
    a = [v for k, v in found.items() if k.startswith("kind=a/")]
    b = [v for k, v in found.items() if k.startswith("kind=b/")]
    errors = [v for k, v in found.items() if k.startswith("errors/processing-failed/")]
    assert [json.loads(line)["n"] for line in a[0].splitlines()] == [1, 3]
    assert json.loads(b[0])["seen"] == "t"
    [failed] = [json.loads(line) for line in errors[0].splitlines()]
    assert failed["lambdaArn"] == arn
    assert json.loads(base64.b64decode(failed["rawData"])) == {"bad": True}
    assert len(found) == 3


def test_metadata_extraction_partitions_by_query(server, firehose, s3):
    firehose.create_delivery_stream(
        DeliveryStreamName="p",
        ExtendedS3DestinationConfiguration={
            "RoleARN": ROLE, "BucketARN": BUCKET_ARN,
            "BufferingHints": {"IntervalInSeconds": 0, "SizeInMBs": 64},
            "Prefix": "customer=!{partitionKeyFromQuery:customer}/",
            "ErrorOutputPrefix": "errors/!{firehose:error-output-type}/",
            "DynamicPartitioningConfiguration": {"Enabled": True},
            "ProcessingConfiguration": {"Enabled": True, "Processors": [
                {"Type": "MetadataExtraction", "Parameters": [
                    {"ParameterName": "MetadataExtractionQuery", "ParameterValue": "{customer: .customer.id}"},
                    {"ParameterName": "JsonParsingEngine", "ParameterValue": "JQ-1.6"},
                ]},
                {"Type": "AppendDelimiterToRecord", "Parameters": []},
            ]},
        },
    )
    docs = [{"customer": {"id": 7}}, {"customer": {"id": 9}}, {"customer": {"id": 7}}, {"nothing": 1}]
    firehose.put_record_batch(DeliveryStreamName="p", Records=[{"Data": json.dumps(d).encode()} for d in docs])
    server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
    found = objects(s3)
    seven = [v for k, v in found.items() if k.startswith("customer=7/")]
    nine = [v for k, v in found.items() if k.startswith("customer=9/")]
    errors = [v for k, v in found.items() if k.startswith("errors/partitioning-failed/")]
    assert seven == [b'{"customer": {"id": 7}}\n{"customer": {"id": 7}}\n']
    assert nine == [b'{"customer": {"id": 9}}\n']
    assert json.loads(errors[0])["errorCode"] == "DynamicPartitioning.MetadataExtractionFailed"


def partitioned(query, prefix="kind=!{partitionKeyFromQuery:kind}/"):
    return {
        "RoleARN": ROLE, "BucketARN": BUCKET_ARN,
        "BufferingHints": {"IntervalInSeconds": 0, "SizeInMBs": 64},
        "Prefix": prefix,
        "ErrorOutputPrefix": "errors/!{firehose:error-output-type}/",
        "DynamicPartitioningConfiguration": {"Enabled": True},
        "ProcessingConfiguration": {"Enabled": True, "Processors": [
            {"Type": "MetadataExtraction", "Parameters": [
                {"ParameterName": "MetadataExtractionQuery", "ParameterValue": query},
                {"ParameterName": "JsonParsingEngine", "ParameterValue": "JQ-1.6"},
            ]},
        ]},
    }


def partition_by(server, firehose, s3, query, prefix, docs):
    """Creates a stream partitioning by `query` into `prefix`, puts `docs` and answers the
    objects delivered, by key."""
    firehose.create_delivery_stream(
        DeliveryStreamName="jq", ExtendedS3DestinationConfiguration=partitioned(query, prefix))
    firehose.put_record_batch(DeliveryStreamName="jq", Records=[{"Data": json.dumps(d).encode()} for d in docs])
    server.wait_for_delivery(service="firehose", target=BUCKET_ARN, outcome="delivered")
    return objects(s3)


def test_invalid_and_unbounded_queries_are_refused(firehose, s3):
    for query, reason in (('{kind: .kind | nosuchfunction}', "filter nosuchfunction is not defined"),
                          ('{kind: .kind', "expected "),
                          ('{kind: [repeat(1)]}', "repeat is not available in partitioning queries"),
                          ('{home: env.HOME}', "env is not available in partitioning queries"),
                          ('def f: f; {k: f}', "def is not available in partitioning queries"),
                          ("{k: " + "[" * 40 + "." + "]" * 40 + "}", "it nests deeper than 32 levels")):
        with pytest.raises(firehose.exceptions.InvalidArgumentException) as e:
            firehose.create_delivery_stream(DeliveryStreamName="bad", ExtendedS3DestinationConfiguration=partitioned(query))
        message = e.value.response["Error"]["Message"]
        assert message.startswith(f"MetadataExtractionQuery {query} is not a valid partitioning query: {reason}"), message
    firehose.create_delivery_stream(DeliveryStreamName="alt",
                                    ExtendedS3DestinationConfiguration=partitioned('{kind: .type // "other"}'))
    described = firehose.describe_delivery_stream(DeliveryStreamName="alt")["DeliveryStreamDescription"]
    with pytest.raises(firehose.exceptions.InvalidArgumentException):
        firehose.update_destination(
            DeliveryStreamName="alt", CurrentDeliveryStreamVersionId=described["VersionId"],
            DestinationId="destinationId-000000000001",
            ExtendedS3DestinationUpdate={"ProcessingConfiguration": partitioned("{kind: .a +}")["ProcessingConfiguration"]})


def test_alternatives_and_literals_partition(server, firehose, s3):
    docs = [{"type": "a"}, {"legacy": {"type": "b"}}, {"type": None}]
    found = partition_by(server, firehose, s3, '{kind: .type // .legacy.type // "other"}',
                         "kind=!{partitionKeyFromQuery:kind}/", docs)
    assert sorted(k.split("/")[0] for k in found) == ["kind=a", "kind=b", "kind=other"]


def test_aws_documented_queries_partition_by_nested_fields(server, firehose, s3):
    # The queries of AWS's dynamic partitioning guide: top-level and nested fields.
    docs = [
        {"customer_id": "c1", "event": {"type": "click", "device": {"os": "ios"}}},
        {"customer_id": "c2", "event": {"type": "view", "device": {"os": "android"}}},
        {"customer_id": "c1", "event": {"type": "click", "device": {"os": "ios"}}},
    ]
    found = partition_by(
        server, firehose, s3,
        "{customer_id: .customer_id, type: .event.type, os: .event.device.os}",
        "customer_id=!{partitionKeyFromQuery:customer_id}/type=!{partitionKeyFromQuery:type}/"
        "os=!{partitionKeyFromQuery:os}/",
        docs)
    prefixes = sorted("/".join(k.split("/")[:3]) for k in found)
    assert prefixes == ["customer_id=c1/type=click/os=ios", "customer_id=c2/type=view/os=android"]
    [c1] = [v for k, v in found.items() if k.startswith("customer_id=c1/")]
    assert c1.count(b'"c1"') == 2


def test_jq_functions_shape_keys(server, firehose, s3):
    # tostring, string functions, and time formatting as jq 1.6 has them.
    docs = [{"id": 42, "name": "Alice", "ts": 1796230800},
            {"id": 7, "name": "bob", "ts": "2026-12-03T10:00:00Z"}]
    query = ('{id: .id | tostring, who: .name | ascii_downcase, '
             'day: (if (.ts | type) == "number" then .ts else .ts | fromdateiso8601 end) | strftime("%Y-%m-%d")}')
    found = partition_by(server, firehose, s3, query,
                         "day=!{partitionKeyFromQuery:day}/who=!{partitionKeyFromQuery:who}/id=!{partitionKeyFromQuery:id}/",
                         docs)
    prefixes = sorted("/".join(k.split("/")[:3]) for k in found)
    assert prefixes == ["day=2026-12-02/who=alice/id=42", "day=2026-12-03/who=bob/id=7"]


def test_records_the_query_cannot_key_fail_as_aws_reports(server, firehose, s3):
    docs = [{"event": {"type": "ok"}}, {"event": "flat"}, {"event": {"type": {"nested": 1}}}, {"other": 1}]
    found = partition_by(server, firehose, s3, "{type: .event.type}",
                         "type=!{partitionKeyFromQuery:type}/", docs)
    assert [k.split("/")[0] for k in found if k.startswith("type=")] == ["type=ok"]
    errors = [json.loads(line) for k, v in found.items() if k.startswith("errors/partitioning-failed/")
              for line in v.splitlines()]
    assert len(errors) == 3
    assert {e["errorCode"] for e in errors} == {"DynamicPartitioning.MetadataExtractionFailed"}
    assert sorted(json.loads(base64.b64decode(e["rawData"])).get("event", {}) != {} for e in errors) == [False, True, True]


def test_kinesis_stream_as_source(server, firehose, s3, client):
    kinesis = client("kinesis")
    kinesis.create_stream(StreamName="src", ShardCount=2)
    kinesis.put_record(StreamName="src", Data=b"before", PartitionKey="k")
    arn = kinesis.describe_stream_summary(StreamName="src")["StreamDescriptionSummary"]["StreamARN"]
    server.advance_clock(1)
    firehose.create_delivery_stream(
        DeliveryStreamName="fromk",
        DeliveryStreamType="KinesisStreamAsSource",
        KinesisStreamSourceConfiguration={"KinesisStreamARN": arn, "RoleARN": ROLE},
        ExtendedS3DestinationConfiguration={
            "RoleARN": ROLE, "BucketARN": BUCKET_ARN,
            "BufferingHints": {"IntervalInSeconds": 60, "SizeInMBs": 1},
        },
    )
    server.advance_clock(1)
    for i in range(4):
        kinesis.put_record(StreamName="src", Data=f"r{i};".encode(), PartitionKey=f"p{i}")
    server.advance_clock(2)
    server.advance_clock(61)
    server.wait_for_delivery(timeout=10, service="firehose", target=BUCKET_ARN, outcome="delivered")
    [(key, body)] = objects(s3).items()
    assert sorted(body.decode().rstrip(";").split(";")) == ["r0", "r1", "r2", "r3"]
    with pytest.raises(Exception):
        firehose.create_delivery_stream(
            DeliveryStreamName="nostream",
            DeliveryStreamType="KinesisStreamAsSource",
            KinesisStreamSourceConfiguration={
                "KinesisStreamARN": "arn:aws:kinesis:us-east-1:000000000000:stream/none", "RoleARN": ROLE},
            ExtendedS3DestinationConfiguration={"RoleARN": ROLE, "BucketARN": BUCKET_ARN},
        )
