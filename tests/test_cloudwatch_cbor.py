"""CloudWatch over smithy's rpc-v2-cbor, the protocol its current model lists first:
requests built with the cbor2 library, signed with SigV4 and sent raw (`POST
/service/GraniteServiceVersion20100801/operation/<name>`), and boto3 made to choose the
protocol from a copy of its model that lists only it."""

from __future__ import annotations

import gzip
import http.client
import json
import os
import urllib.parse
from datetime import datetime, timedelta, timezone

import boto3
import botocore
import botocore.session
import cbor2
import pytest
from botocore.auth import SigV4Auth
from botocore.awsrequest import AWSRequest
from botocore.config import Config
from botocore.credentials import Credentials
from botocore.exceptions import ClientError

from cloudwatch_helpers import error, minute

PREFIX = "/service/GraniteServiceVersion20100801/operation/"


@pytest.fixture
def call(server):
    url = urllib.parse.urlparse(server.endpoint)

    def send(operation, body=None, path=None):
        data = b"" if body is None else cbor2.dumps(body, datetime_as_timestamp=True)
        headers = {"smithy-protocol": "rpc-v2-cbor", "Accept": "application/cbor"}
        if data:
            headers["Content-Type"] = "application/cbor"
        target = path or PREFIX + operation
        request = AWSRequest(method="POST", url=server.endpoint + target, data=data, headers=headers)
        SigV4Auth(Credentials("test", "test"), "monitoring", "us-east-1").add_auth(request)
        conn = http.client.HTTPConnection(url.hostname, url.port, timeout=10)
        conn.request("POST", target, body=data, headers=dict(request.headers.items()))
        response = conn.getresponse()
        raw = response.read()
        conn.close()
        headers = {k.lower(): v for k, v in response.getheaders()}
        return response.status, headers, cbor2.loads(raw) if raw else None

    return send


def test_metrics_round_trip_in_cbor_with_epoch_second_timestamps(call):
    t = minute(-3)
    status, headers, body = call("PutMetricData", {"Namespace": "App", "MetricData": [
        {"MetricName": "Latency", "Timestamp": t, "Value": 10.0},
        {"MetricName": "Latency", "Timestamp": t + timedelta(seconds=10), "Value": 30.0},
    ]})
    assert (status, body) == (200, {})
    assert headers["content-type"] == "application/cbor" and headers["smithy-protocol"] == "rpc-v2-cbor"
    status, _, stats = call("GetMetricStatistics", {
        "Namespace": "App", "MetricName": "Latency", "StartTime": t, "EndTime": t + timedelta(minutes=1),
        "Period": 60, "Statistics": ["Average", "SampleCount"]})
    assert status == 200
    [point] = stats["Datapoints"]
    assert point["Timestamp"] == t  # tag 1 over epoch seconds, read back as a datetime
    assert (point["Average"], point["SampleCount"]) == (20.0, 2.0)
    status, _, data = call("GetMetricData", {
        "StartTime": t, "EndTime": t + timedelta(minutes=1),
        "MetricDataQueries": [
            {"Id": "m1", "MetricStat": {"Metric": {"Namespace": "App", "MetricName": "Latency"},
                                        "Period": 60, "Stat": "Sum"}, "ReturnData": False},
            {"Id": "e1", "Expression": "m1 * 2"},
        ]})
    assert status == 200
    [result] = data["MetricDataResults"]
    assert (result["Id"], result["Values"], result["Timestamps"]) == ("e1", [80.0], [t])


def test_errors_carry_type_query_code_and_status(call):
    status, headers, body = call("GetMetricStatistics", {
        "Namespace": "App", "MetricName": "Latency", "StartTime": minute(-1), "EndTime": minute(),
        "Period": 7, "Statistics": ["Sum"]})
    assert status == 400 and headers["smithy-protocol"] == "rpc-v2-cbor"
    assert body["__type"] == "InvalidParameterValueException"
    assert body["message"] == "The parameter Period must be 1, 5, 10, 30, or a multiple of 60."
    assert headers["x-amzn-query-error"] == "InvalidParameterValue;Sender"
    status, _, body = call("GetDashboard", {"DashboardName": "nope"})
    assert status == 404 and body["__type"] == "DashboardNotFoundError"
    status, _, body = call("PutDashboard", {"DashboardName": "d", "DashboardBody": '{"widgets":[{"type":"chart"}]}'})
    assert status == 400
    assert body["dashboardValidationMessages"] == [
        {"DataPath": "/widgets/0/type", "Message": "Should be equal to one of the allowed values"}]


def test_operations_without_input_and_unknown_paths(call):
    status, _, body = call("ListDashboards")
    assert (status, body) == (200, {"DashboardEntries": []})
    status, _, body = call("Nope")
    assert status == 404 and body["__type"] == "UnknownOperationException"
    status, _, _ = call(None, {}, path="/service/Kinesis_20131202/operation/ListStreams")
    assert status == 404


@pytest.fixture
def cbor_cw(server, tmp_path):
    """A boto3 CloudWatch client whose model lists only smithy-rpc-v2-cbor, so it speaks it."""
    source = os.path.join(os.path.dirname(botocore.__file__), "data", "cloudwatch", "2010-08-01")
    with gzip.open(os.path.join(source, "service-2.json.gz")) as f:
        service = json.load(f)
    service["metadata"]["protocols"] = ["smithy-rpc-v2-cbor"]
    service["metadata"]["protocol"] = "smithy-rpc-v2-cbor"
    target = tmp_path / "cloudwatch" / "2010-08-01"
    target.mkdir(parents=True)
    (target / "service-2.json").write_text(json.dumps(service))
    session = botocore.session.get_session()
    session.get_component("data_loader").search_paths.insert(0, str(tmp_path))
    client = boto3.Session(botocore_session=session).client(
        "cloudwatch", endpoint_url=server.endpoint, region_name="us-east-1",
        aws_access_key_id="test", aws_secret_access_key="test", config=Config(retries={"max_attempts": 1}))
    assert client.meta.service_model.protocol == "smithy-rpc-v2-cbor"
    return client


def test_boto3_speaks_rpc_v2_cbor_when_the_model_lists_it(cbor_cw, server):
    t = minute(-2)
    cbor_cw.put_metric_data(Namespace="App", MetricData=[{"MetricName": "Hits", "Timestamp": t, "Value": 3}])
    out = cbor_cw.get_metric_data(
        MetricDataQueries=[{"Id": "m1", "MetricStat": {
            "Metric": {"Namespace": "App", "MetricName": "Hits"}, "Period": 60, "Stat": "Sum"}}],
        StartTime=t, EndTime=t + timedelta(minutes=1))
    assert out["MetricDataResults"][0]["Values"] == [3.0]
    assert out["MetricDataResults"][0]["Timestamps"] == [t]
    assert [m["MetricName"] for m in cbor_cw.list_metrics(Namespace="App")["Metrics"]] == ["Hits"]
    cbor_cw.put_metric_alarm(AlarmName="hits", Namespace="App", MetricName="Hits", Statistic="Sum",
                             Period=60, EvaluationPeriods=1, Threshold=1, ComparisonOperator="GreaterThanThreshold")
    alarm = cbor_cw.describe_alarms(AlarmNames=["hits"])["MetricAlarms"][0]
    assert alarm["StateValue"] == "INSUFFICIENT_DATA"
    assert isinstance(alarm["StateUpdatedTimestamp"], datetime)
    assert alarm["StateUpdatedTimestamp"].tzinfo is not None
    assert abs(alarm["StateUpdatedTimestamp"] - datetime.now(timezone.utc)) < timedelta(minutes=5)
    with pytest.raises(ClientError) as e:
        cbor_cw.get_dashboard(DashboardName="nope")
    assert error(e) == ("ResourceNotFound", "Dashboard nope does not exist", 404)
    with pytest.raises(ClientError) as e:
        cbor_cw.put_metric_data(Namespace="AWS/EC2", MetricData=[{"MetricName": "x", "Value": 1}])
    assert error(e)[0] == "InvalidParameterValue"
    entry = server.wait_for_trace(service="cloudwatch", operation="GetMetricData")
    assert entry["status"] == 200
