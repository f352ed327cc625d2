"""SSM maintenance windows through boto3: windows, their targets and tasks, updates with
and without Replace, filters, paging, tags, and what an account without managed nodes
answers for executions, commands, sessions and automation."""

from __future__ import annotations

import pytest
from botocore.exceptions import ClientError


def error(excinfo):
    return excinfo.value.response["Error"]["Code"], excinfo.value.response["Error"]["Message"]


@pytest.fixture
def ssm(client):
    return client("ssm")


def window(ssm, name="win", **extra):
    return ssm.create_maintenance_window(Name=name, Schedule="cron(0 4 ? * SUN *)", Duration=3, Cutoff=1,
                                         AllowUnassociatedTargets=False, **extra)["WindowId"]


def test_create_get_update_delete_window(ssm):
    wid = window(ssm, Description="weekly", Tags=[{"Key": "env", "Value": "dev"}])
    assert wid.startswith("mw-") and len(wid) == 20
    got = ssm.get_maintenance_window(WindowId=wid)
    assert (got["Name"], got["Schedule"], got["Duration"], got["Cutoff"], got["Enabled"]) == ("win", "cron(0 4 ? * SUN *)", 3, 1, True)
    assert got["Description"] == "weekly" and got["AllowUnassociatedTargets"] is False
    assert "CreatedDate" in got and "ModifiedDate" in got
    up = ssm.update_maintenance_window(WindowId=wid, Enabled=False, Duration=5)
    assert (up["Enabled"], up["Duration"], up["Description"]) == (False, 5, "weekly")
    replaced = ssm.update_maintenance_window(WindowId=wid, Name="win2", Schedule="rate(7 days)", Duration=4, Cutoff=0,
                                             AllowUnassociatedTargets=True, Enabled=True, Replace=True)
    assert "Description" not in replaced and replaced["Name"] == "win2"
    assert ssm.list_tags_for_resource(ResourceType="MaintenanceWindow", ResourceId=wid)["TagList"] == [{"Key": "env", "Value": "dev"}]
    assert ssm.delete_maintenance_window(WindowId=wid)["WindowId"] == wid
    with pytest.raises(ClientError) as e:
        ssm.get_maintenance_window(WindowId=wid)
    assert error(e) == ("DoesNotExistException", f"Maintenance window {wid} does not exist")


def test_window_validation(ssm):
    with pytest.raises(ClientError) as e:
        ssm.create_maintenance_window(
            Name="win", Schedule="cron(0 4 ? * SUN *)", Duration=2, Cutoff=2, AllowUnassociatedTargets=False)
    assert error(e)[0] == "ValidationException"
    with pytest.raises(ClientError) as e:
        ssm.create_maintenance_window(Name="win", Schedule="weekly", Duration=2, Cutoff=1, AllowUnassociatedTargets=False)
    assert error(e)[0] == "ValidationException"


def test_describe_windows_filters_and_pages(ssm):
    a, b, c = window(ssm, "w-a"), window(ssm, "w-b"), window(ssm, "w-c")
    ssm.update_maintenance_window(WindowId=b, Enabled=False)
    ids = [w["WindowId"] for w in ssm.describe_maintenance_windows()["WindowIdentities"]]
    assert ids == [a, b, c]
    off = ssm.describe_maintenance_windows(Filters=[{"Key": "Enabled", "Values": ["false"]}])["WindowIdentities"]
    assert [(w["WindowId"], w["Name"], w["Enabled"]) for w in off] == [(b, "w-b", False)]
    first = ssm.describe_maintenance_windows(MaxResults=10)
    assert len(first["WindowIdentities"]) == 3 and "NextToken" not in first


def test_targets(ssm):
    wid = window(ssm)
    tid = ssm.register_target_with_maintenance_window(
        WindowId=wid, ResourceType="INSTANCE", Targets=[{"Key": "tag:role", "Values": ["web"]}],
        OwnerInformation="me", Name="web")["WindowTargetId"]
    targets = ssm.describe_maintenance_window_targets(WindowId=wid)["Targets"]
    assert targets == [{"WindowId": wid, "WindowTargetId": tid, "ResourceType": "INSTANCE",
                        "Targets": [{"Key": "tag:role", "Values": ["web"]}], "OwnerInformation": "me", "Name": "web"}]
    up = ssm.update_maintenance_window_target(WindowId=wid, WindowTargetId=tid, Description="d")
    assert (up["Description"], up["Name"]) == ("d", "web")
    found = ssm.describe_maintenance_windows_for_target(Targets=[{"Key": "tag:role", "Values": ["web"]}], ResourceType="INSTANCE")
    assert found["WindowIdentities"] == [{"WindowId": wid, "Name": "win"}]
    ssm.deregister_target_from_maintenance_window(WindowId=wid, WindowTargetId=tid)
    assert ssm.describe_maintenance_window_targets(WindowId=wid)["Targets"] == []
    with pytest.raises(ClientError) as e:
        ssm.deregister_target_from_maintenance_window(WindowId=wid, WindowTargetId=tid)
    assert error(e)[0] == "DoesNotExistException"
    with pytest.raises(ClientError) as e:
        ssm.register_target_with_maintenance_window(WindowId="mw-0123456789abcdef0", ResourceType="INSTANCE",
                                                    Targets=[{"Key": "InstanceIds", "Values": ["i-1"]}])
    assert error(e) == ("DoesNotExistException", "Maintenance window mw-0123456789abcdef0 does not exist")


def test_tasks(ssm):
    wid = window(ssm)
    task = ssm.register_task_with_maintenance_window(
        WindowId=wid, TaskArn="AWS-RunShellScript", TaskType="RUN_COMMAND", MaxConcurrency="1", MaxErrors="1",
        Priority=5, Name="run",
        TaskInvocationParameters={"RunCommand": {"Parameters": {"commands": ["uptime"]}}})["WindowTaskId"]
    got = ssm.get_maintenance_window_task(WindowId=wid, WindowTaskId=task)
    assert (got["TaskArn"], got["TaskType"], got["Priority"], got["Name"]) == ("AWS-RunShellScript", "RUN_COMMAND", 5, "run")
    assert got["TaskInvocationParameters"]["RunCommand"]["Parameters"] == {"commands": ["uptime"]}
    listed = ssm.describe_maintenance_window_tasks(WindowId=wid)["Tasks"]
    assert [(t["WindowTaskId"], t["Type"]) for t in listed] == [(task, "RUN_COMMAND")]
    up = ssm.update_maintenance_window_task(WindowId=wid, WindowTaskId=task, Priority=2)
    assert (up["Priority"], up["Name"]) == (2, "run")
    ssm.deregister_task_from_maintenance_window(WindowId=wid, WindowTaskId=task)
    with pytest.raises(ClientError) as e:
        ssm.get_maintenance_window_task(WindowId=wid, WindowTaskId=task)
    assert error(e)[0] == "DoesNotExistException"


def test_deleting_a_window_forgets_its_targets(ssm):
    wid = window(ssm)
    ssm.register_target_with_maintenance_window(WindowId=wid, ResourceType="INSTANCE",
                                                Targets=[{"Key": "InstanceIds", "Values": ["i-1"]}])
    ssm.delete_maintenance_window(WindowId=wid)
    with pytest.raises(ClientError) as e:
        ssm.describe_maintenance_window_targets(WindowId=wid)
    assert error(e)[0] == "DoesNotExistException"


def test_what_an_account_without_managed_nodes_answers(ssm):
    wid = window(ssm)
    assert ssm.describe_maintenance_window_executions(WindowId=wid)["WindowExecutions"] == []
    with pytest.raises(ClientError) as e:
        ssm.get_maintenance_window_execution(WindowExecutionId="11111111-2222-3333-4444-555555555555")
    assert error(e)[0] == "DoesNotExistException"
    with pytest.raises(ClientError) as e:
        ssm.describe_instance_patches(InstanceId="i-0123456789abcdef0")
    assert error(e)[0] == "InvalidInstanceId"
    with pytest.raises(ClientError) as e:
        ssm.get_automation_execution(AutomationExecutionId="11111111-2222-3333-4444-555555555555")
    assert error(e)[0] == "AutomationExecutionNotFoundException"
    with pytest.raises(ClientError) as e:
        ssm.start_session(Target="i-0123456789abcdef0")
    assert error(e)[0] == "TargetNotConnected"
    assert ssm.get_connection_status(Target="i-0123456789abcdef0")["Status"] == "notconnected"
    state = ssm.describe_patch_group_state(PatchGroup="web")
    assert state["Instances"] == 0 and state["InstancesWithMissingPatches"] == 0
    with pytest.raises(ClientError) as e:
        ssm.get_ops_item(OpsItemId="oi-0123456789ab")
    assert error(e)[0] == "OpsItemNotFoundException"
