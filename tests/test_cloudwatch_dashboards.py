"""CloudWatch dashboards, black-box with boto3: PutDashboard with its body checks
(InvalidParameterInput with DashboardValidationMessages), GetDashboard, ListDashboards with
a prefix and paging, DeleteDashboards (ResourceNotFound, nothing deleted), and dashboards
being global to the account."""

from __future__ import annotations

import json

import pytest
from botocore.exceptions import ClientError

from cloudwatch_helpers import error

ACCOUNT = "000000000000"

BODY = json.dumps({"widgets": [
    {"type": "text", "x": 0, "y": 0, "width": 24, "height": 2, "properties": {"markdown": "# Ops"}},
    {"type": "metric", "x": 0, "y": 2, "width": 12, "height": 6,
     "properties": {"region": "us-east-1", "metrics": [["App", "Errors"]], "stat": "Sum"}},
]})


@pytest.fixture
def cw(client):
    return client("cloudwatch")


def test_put_get_and_replace_a_dashboard(cw):
    out = cw.put_dashboard(DashboardName="ops", DashboardBody=BODY)
    assert out["DashboardValidationMessages"] == []
    got = cw.get_dashboard(DashboardName="ops")
    assert got["DashboardName"] == "ops" and got["DashboardBody"] == BODY
    assert got["DashboardArn"] == f"arn:aws:cloudwatch::{ACCOUNT}:dashboard/ops"
    cw.put_dashboard(DashboardName="ops", DashboardBody='{"widgets": []}')
    assert cw.get_dashboard(DashboardName="ops")["DashboardBody"] == '{"widgets": []}'


def test_dashboards_are_global_to_the_account(client):
    client("cloudwatch", region_name="eu-west-1").put_dashboard(DashboardName="shared", DashboardBody=BODY)
    east = client("cloudwatch", region_name="us-east-1")
    assert east.get_dashboard(DashboardName="shared")["DashboardBody"] == BODY
    assert [d["DashboardName"] for d in east.list_dashboards()["DashboardEntries"]] == ["shared"]


def test_bad_json_is_invalid_parameter_input(cw):
    with pytest.raises(ClientError) as e:
        cw.put_dashboard(DashboardName="ops", DashboardBody="{not json")
    assert error(e) == ("InvalidParameterInput", "The field DashboardBody must be a valid JSON object", 400)


def test_bad_bodies_list_their_validation_messages(cw):
    body = json.dumps({"widgets": [
        {"type": "text", "properties": {}},
        {"type": "chart"},
        {"type": "metric", "width": 30, "properties": {"region": "us-east-1"}},
    ]})
    with pytest.raises(ClientError) as e:
        cw.put_dashboard(DashboardName="ops", DashboardBody=body)
    code, message, status = error(e)
    assert (code, status) == ("InvalidParameterInput", 400)
    assert message.startswith("The dashboard body is invalid, there are 3 validation errors:")
    assert "Should have required property 'markdown'" in message
    assert e.value.response["dashboardValidationMessages"] == [
        {"DataPath": "/widgets/0/properties", "Message": "Should have required property 'markdown'"},
        {"DataPath": "/widgets/1/type", "Message": "Should be equal to one of the allowed values"},
        {"DataPath": "/widgets/2/width", "Message": "Should be <= 24"},
    ]
    with pytest.raises(ClientError) as e:
        cw.put_dashboard(DashboardName="ops", DashboardBody="{}")
    assert "Should have required property 'widgets'" in error(e)[1]
    with pytest.raises(ClientError) as e:
        cw.get_dashboard(DashboardName="ops")
    assert error(e)[0] == "ResourceNotFound"


def test_bad_names_are_refused(cw):
    with pytest.raises(ClientError) as e:
        cw.put_dashboard(DashboardName="has space", DashboardBody=BODY)
    code, message, status = error(e)
    assert (code, status) == ("InvalidParameterInput", 400)
    assert "can only contain alphanumerics, dash (-) and underscore (_)" in message


def test_list_with_prefix_and_paging(cw):
    for name in ["app-a", "app-b", "db"]:
        cw.put_dashboard(DashboardName=name, DashboardBody=BODY)
    entries = cw.list_dashboards()["DashboardEntries"]
    assert [d["DashboardName"] for d in entries] == ["app-a", "app-b", "db"]
    assert entries[0]["Size"] == len(BODY) and "LastModified" in entries[0]
    assert entries[0]["DashboardArn"].endswith(":dashboard/app-a")
    assert [d["DashboardName"] for d in cw.list_dashboards(DashboardNamePrefix="app")["DashboardEntries"]] == \
        ["app-a", "app-b"]
    assert cw.list_dashboards(DashboardNamePrefix="zzz")["DashboardEntries"] == []
    with pytest.raises(ClientError) as e:
        cw.list_dashboards(NextToken="bogus")
    assert error(e)[0] == "InvalidParameterValue"


def test_list_pages_by_a_thousand(cw):
    for i in range(1001):
        cw.put_dashboard(DashboardName=f"d{i:04}", DashboardBody='{"widgets":[]}')
    first = cw.list_dashboards()
    assert len(first["DashboardEntries"]) == 1000
    second = cw.list_dashboards(NextToken=first["NextToken"])
    assert [d["DashboardName"] for d in second["DashboardEntries"]] == ["d1000"]
    assert "NextToken" not in second


def test_get_unknown_dashboard_is_resource_not_found(cw):
    with pytest.raises(ClientError) as e:
        cw.get_dashboard(DashboardName="nope")
    assert error(e) == ("ResourceNotFound", "Dashboard nope does not exist", 404)


def test_delete_is_all_or_nothing(cw):
    cw.put_dashboard(DashboardName="a", DashboardBody=BODY)
    cw.put_dashboard(DashboardName="b", DashboardBody=BODY)
    with pytest.raises(ClientError) as e:
        cw.delete_dashboards(DashboardNames=["a", "missing"])
    code, message, status = error(e)
    assert (code, status) == ("ResourceNotFound", 404)
    assert "missing" in message
    assert [d["DashboardName"] for d in cw.list_dashboards()["DashboardEntries"]] == ["a", "b"]
    cw.delete_dashboards(DashboardNames=["a", "b"])
    assert cw.list_dashboards()["DashboardEntries"] == []
