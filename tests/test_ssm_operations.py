"""SSM beyond parameters, documents and windows, through boto3: patch baselines and patch
groups, OpsItems and OpsMetadata, associations, activations, resource data syncs, cloud
connectors, Automation executions (recorded, failed at once: Roto runs no runbooks),
previews, document reviews, Change Calendar states, and what an account without managed
nodes answers for inventory, compliance and just-in-time access."""

from __future__ import annotations

import json
from datetime import datetime, timezone

import pytest
from botocore.exceptions import ClientError


def code(excinfo):
    return excinfo.value.response["Error"]["Code"]


@pytest.fixture
def ssm(client):
    return client("ssm")


RULES = {"PatchRules": [{"PatchFilterGroup": {"PatchFilters": [{"Key": "CLASSIFICATION", "Values": ["SecurityUpdates"]}]},
                         "ApproveAfterDays": 7, "ComplianceLevel": "HIGH", "EnableNonSecurity": False}]}


def test_patch_baseline_lifecycle(ssm):
    bid = ssm.create_patch_baseline(Name="web-linux", OperatingSystem="AMAZON_LINUX_2", ApprovalRules=RULES,
                                    Description="web", ApprovedPatches=["KB1"],
                                    Tags=[{"Key": "team", "Value": "ops"}])["BaselineId"]
    assert bid.startswith("pb-") and len(bid) == 20
    got = ssm.get_patch_baseline(BaselineId=bid)
    assert (got["Name"], got["OperatingSystem"], got["Description"]) == ("web-linux", "AMAZON_LINUX_2", "web")
    assert got["ApprovalRules"] == RULES and got["ApprovedPatches"] == ["KB1"] and got["RejectedPatches"] == []
    assert (got["ApprovedPatchesComplianceLevel"], got["RejectedPatchesAction"]) == ("UNSPECIFIED", "ALLOW_AS_DEPENDENCY")
    assert got["PatchGroups"] == [] and "CreatedDate" in got
    up = ssm.update_patch_baseline(BaselineId=bid, RejectedPatches=["KB2"], RejectedPatchesAction="BLOCK")
    assert (up["RejectedPatches"], up["RejectedPatchesAction"], up["Description"]) == (["KB2"], "BLOCK", "web")
    replaced = ssm.update_patch_baseline(BaselineId=bid, Name="web2", Replace=True)
    assert replaced["Name"] == "web2" and "Description" not in replaced
    assert ssm.list_tags_for_resource(ResourceType="PatchBaseline", ResourceId=bid)["TagList"] == [{"Key": "team", "Value": "ops"}]
    assert ssm.delete_patch_baseline(BaselineId=bid)["BaselineId"] == bid
    with pytest.raises(ClientError) as e:
        ssm.get_patch_baseline(BaselineId=bid)
    assert code(e) == "DoesNotExistException"
    with pytest.raises(ClientError) as e:
        ssm.update_patch_baseline(BaselineId=bid, Name="xyz")
    assert code(e) == "DoesNotExistException"


def test_patch_groups_and_default_baselines(ssm):
    managed = ssm.get_default_patch_baseline()
    assert managed["OperatingSystem"] == "WINDOWS" and ":patchbaseline/pb-" in managed["BaselineId"]
    assert ssm.get_patch_baseline_for_patch_group(PatchGroup="web")["BaselineId"] == managed["BaselineId"]
    bid = ssm.create_patch_baseline(Name="win")["BaselineId"]
    reg = ssm.register_patch_baseline_for_patch_group(BaselineId=bid, PatchGroup="web")
    assert (reg["BaselineId"], reg["PatchGroup"]) == (bid, "web")
    got = ssm.get_patch_baseline_for_patch_group(PatchGroup="web")
    assert (got["BaselineId"], got["OperatingSystem"]) == (bid, "WINDOWS")
    with pytest.raises(ClientError) as e:
        ssm.register_patch_baseline_for_patch_group(BaselineId=bid, PatchGroup="web")
    assert code(e) == "AlreadyExistsException"
    groups = ssm.describe_patch_groups()["Mappings"]
    assert [(g["PatchGroup"], g["BaselineIdentity"]["BaselineId"]) for g in groups] == [("web", bid)]
    assert ssm.get_patch_baseline(BaselineId=bid)["PatchGroups"] == ["web"]
    with pytest.raises(ClientError) as e:
        ssm.delete_patch_baseline(BaselineId=bid)
    assert code(e) == "ResourceInUseException"
    ssm.deregister_patch_baseline_for_patch_group(BaselineId=bid, PatchGroup="web")
    with pytest.raises(ClientError) as e:
        ssm.deregister_patch_baseline_for_patch_group(BaselineId=bid, PatchGroup="web")
    assert code(e) == "InvalidResourceId"
    assert ssm.register_default_patch_baseline(BaselineId=bid)["BaselineId"] == bid
    assert ssm.get_default_patch_baseline(OperatingSystem="WINDOWS")["BaselineId"] == bid
    ids = ssm.describe_patch_baselines(Filters=[{"Key": "NAME_PREFIX", "Values": ["wi"]}])["BaselineIdentities"]
    assert [(b["BaselineId"], b["DefaultBaseline"]) for b in ids] == [(bid, True)]
    assert ssm.describe_patch_baselines(Filters=[{"Key": "OWNER", "Values": ["AWS"]}])["BaselineIdentities"] == []
    assert ssm.describe_effective_patches_for_patch_baseline(BaselineId=bid)["EffectivePatches"] == []
    with pytest.raises(ClientError) as e:
        ssm.register_default_patch_baseline(BaselineId="pb-00000000000000000")
    assert code(e) == "DoesNotExistException"
    with pytest.raises(ClientError) as e:
        ssm.describe_effective_patches_for_patch_baseline(BaselineId="pb-00000000000000000")
    assert code(e) == "DoesNotExistException"


def test_ops_items(ssm):
    created = ssm.create_ops_item(Title="disk full", Description="vol 90%", Source="EC2", Priority=2,
                                  OperationalData={"vol": {"Value": "v-1", "Type": "SearchableString"}})
    oid = created["OpsItemId"]
    assert oid.startswith("oi-") and created["OpsItemArn"].endswith(f":opsitem/{oid}")
    item = ssm.get_ops_item(OpsItemId=oid)["OpsItem"]
    assert (item["Title"], item["Status"], item["Priority"], item["Source"]) == ("disk full", "Open", 2, "EC2")
    assert item["OperationalData"] == {"vol": {"Value": "v-1", "Type": "SearchableString"}}
    ssm.update_ops_item(OpsItemId=oid, Status="Resolved", OperationalData={"x": {"Value": "1"}}, OperationalDataToDelete=["vol"])
    item = ssm.get_ops_item(OpsItemId=oid)["OpsItem"]
    assert item["Status"] == "Resolved" and item["OperationalData"] == {"x": {"Value": "1"}}
    other = ssm.create_ops_item(Title="cpu", Description="d", Source="EC2")["OpsItemId"]
    resolved = ssm.describe_ops_items(OpsItemFilters=[{"Key": "Status", "Values": ["Resolved"], "Operator": "Equal"}])
    assert [s["OpsItemId"] for s in resolved["OpsItemSummaries"]] == [oid]
    titled = ssm.describe_ops_items(OpsItemFilters=[{"Key": "Title", "Values": ["cp"], "Operator": "Contains"}])
    assert [s["OpsItemId"] for s in titled["OpsItemSummaries"]] == [other]
    assoc = ssm.associate_ops_item_related_item(OpsItemId=oid, AssociationType="IsParentOf", ResourceType="AWS::SSMIncidents::IncidentRecord",
                                                ResourceUri="arn:aws:ssm-incidents::000000000000:incident-record/x/1")["AssociationId"]
    with pytest.raises(ClientError) as e:
        ssm.associate_ops_item_related_item(OpsItemId=oid, AssociationType="IsParentOf", ResourceType="AWS::SSMIncidents::IncidentRecord",
                                            ResourceUri="arn:aws:ssm-incidents::000000000000:incident-record/x/1")
    assert code(e) == "OpsItemRelatedItemAlreadyExistsException"
    related = ssm.list_ops_item_related_items(OpsItemId=oid)["Summaries"]
    assert [(r["AssociationId"], r["OpsItemId"]) for r in related] == [(assoc, oid)]
    ssm.disassociate_ops_item_related_item(OpsItemId=oid, AssociationId=assoc)
    with pytest.raises(ClientError) as e:
        ssm.disassociate_ops_item_related_item(OpsItemId=oid, AssociationId=assoc)
    assert code(e) == "OpsItemRelatedItemAssociationNotFoundException"
    ssm.delete_ops_item(OpsItemId=oid)
    for call in (lambda: ssm.get_ops_item(OpsItemId=oid), lambda: ssm.update_ops_item(OpsItemId=oid, Status="Open")):
        with pytest.raises(ClientError) as e:
            call()
        assert code(e) == "OpsItemNotFoundException"


def test_ops_metadata(ssm):
    arn = ssm.create_ops_metadata(ResourceId="/aws/ssm/app/appmanager", Metadata={"a": {"Value": "1"}})["OpsMetadataArn"]
    assert arn == "arn:aws:ssm:us-east-1:000000000000:opsmetadata/aws/ssm/app/appmanager"
    with pytest.raises(ClientError) as e:
        ssm.create_ops_metadata(ResourceId="/aws/ssm/app/appmanager")
    assert code(e) == "OpsMetadataAlreadyExistsException"
    assert ssm.get_ops_metadata(OpsMetadataArn=arn)["Metadata"] == {"a": {"Value": "1"}}
    ssm.update_ops_metadata(OpsMetadataArn=arn, MetadataToUpdate={"b": {"Value": "2"}}, KeysToDelete=["a"])
    got = ssm.get_ops_metadata(OpsMetadataArn=arn)
    assert (got["ResourceId"], got["Metadata"]) == ("/aws/ssm/app/appmanager", {"b": {"Value": "2"}})
    assert [m["OpsMetadataArn"] for m in ssm.list_ops_metadata()["OpsMetadataList"]] == [arn]
    ssm.delete_ops_metadata(OpsMetadataArn=arn)
    with pytest.raises(ClientError) as e:
        ssm.get_ops_metadata(OpsMetadataArn=arn)
    assert code(e) == "OpsMetadataNotFoundException"


def test_associations(ssm):
    targets = [{"Key": "tag:env", "Values": ["dev"]}]
    desc = ssm.create_association(Name="AWS-RunPatchBaseline", Targets=targets, ScheduleExpression="rate(1 day)",
                                  AssociationName="patch", Parameters={"Operation": ["Scan"]})["AssociationDescription"]
    aid = desc["AssociationId"]
    assert (desc["Name"], desc["AssociationVersion"], desc["Overview"]["Status"]) == ("AWS-RunPatchBaseline", "1", "Pending")
    got = ssm.describe_association(AssociationId=aid)["AssociationDescription"]
    assert got["Targets"] == targets and got["Parameters"] == {"Operation": ["Scan"]}
    up = ssm.update_association(AssociationId=aid, ScheduleExpression="rate(2 days)")["AssociationDescription"]
    assert (up["AssociationVersion"], up["ScheduleExpression"], up["AssociationName"]) == ("2", "rate(2 days)", "patch")
    assert ssm.describe_association(AssociationId=aid, AssociationVersion="1")["AssociationDescription"]["ScheduleExpression"] == "rate(1 day)"
    versions = ssm.list_association_versions(AssociationId=aid)["AssociationVersions"]
    assert [v["AssociationVersion"] for v in versions] == ["1", "2"]
    with pytest.raises(ClientError) as e:
        ssm.update_association(AssociationId=aid, AssociationVersion="1", ScheduleExpression="rate(3 days)")
    assert code(e) == "InvalidAssociationVersion"
    listed = ssm.list_associations(AssociationFilterList=[{"key": "AssociationName", "value": "patch"}])["Associations"]
    assert [a["AssociationId"] for a in listed] == [aid]
    assert ssm.describe_association_executions(AssociationId=aid)["AssociationExecutions"] == []
    ssm.start_associations_once(AssociationIds=[aid])
    with pytest.raises(ClientError) as e:
        ssm.create_association(Name="missing-doc", Targets=targets)
    assert code(e) == "InvalidDocument"
    batch = ssm.create_association_batch(Entries=[{"Name": "AWS-UpdateSSMAgent", "Targets": targets}, {"Name": "nope", "Targets": targets}])
    assert len(batch["Successful"]) == 1 and batch["Failed"][0]["Entry"]["Name"] == "nope"
    ssm.delete_association(AssociationId=aid)
    for call in (lambda: ssm.describe_association(AssociationId=aid), lambda: ssm.delete_association(AssociationId=aid)):
        with pytest.raises(ClientError) as e:
            call()
        assert code(e) == "AssociationDoesNotExist"
    with pytest.raises(ClientError) as e:
        ssm.start_associations_once(AssociationIds=[aid])
    assert code(e) == "InvalidAssociation"


def test_activations(ssm):
    created = ssm.create_activation(IamRole="SSMServiceRole", DefaultInstanceName="onprem", RegistrationLimit=5,
                                    Tags=[{"Key": "k", "Value": "v"}])
    aid = created["ActivationId"]
    assert len(created["ActivationCode"]) == 20
    listed = ssm.describe_activations(Filters=[{"FilterKey": "ActivationIds", "FilterValues": [aid]}])["ActivationList"]
    a = listed[0]
    assert (a["IamRole"], a["RegistrationLimit"], a["RegistrationsCount"], a["Expired"]) == ("SSMServiceRole", 5, 0, False)
    assert a["Tags"] == [{"Key": "k", "Value": "v"}]
    assert ssm.describe_activations(Filters=[{"FilterKey": "IamRole", "FilterValues": ["other"]}])["ActivationList"] == []
    ssm.delete_activation(ActivationId=aid)
    with pytest.raises(ClientError) as e:
        ssm.delete_activation(ActivationId=aid)
    assert code(e) == "InvalidActivationId"


def test_resource_data_syncs(ssm):
    dest = {"BucketName": "inv", "SyncFormat": "JsonSerDe", "Region": "us-east-1"}
    ssm.create_resource_data_sync(SyncName="s1", S3Destination=dest)
    with pytest.raises(ClientError) as e:
        ssm.create_resource_data_sync(SyncName="s1", S3Destination=dest)
    assert code(e) == "ResourceDataSyncAlreadyExistsException"
    with pytest.raises(ClientError) as e:
        ssm.create_resource_data_sync(SyncName="s2")
    assert code(e) == "ResourceDataSyncInvalidConfigurationException"
    items = ssm.list_resource_data_sync()["ResourceDataSyncItems"]
    assert [(i["SyncName"], i["SyncType"], i["S3Destination"]["BucketName"]) for i in items] == [("s1", "SyncToDestination", "inv")]
    source = {"SourceType": "SingleAccountMultiRegions", "SourceRegions": ["us-east-1"]}
    ssm.create_resource_data_sync(SyncName="s3", SyncType="SyncFromSource", SyncSource=source)
    ssm.update_resource_data_sync(SyncName="s3", SyncType="SyncFromSource", SyncSource={**source, "SourceRegions": ["eu-west-1"]})
    from_source = ssm.list_resource_data_sync(SyncType="SyncFromSource")["ResourceDataSyncItems"]
    assert from_source[0]["SyncSource"]["SourceRegions"] == ["eu-west-1"]
    ssm.delete_resource_data_sync(SyncName="s1")
    with pytest.raises(ClientError) as e:
        ssm.delete_resource_data_sync(SyncName="s1")
    assert code(e) == "ResourceDataSyncNotFoundException"


def test_cloud_connectors(ssm):
    config = {"AzureConfiguration": {"TenantId": "72f988bf-86f1-41af-91ab-2d7cd011db47",
                                     "ApplicationId": "0b1a2c3d-4e5f-6a7b-8c9d-0e1f2a3b4c5d"}}
    try:
        cid = ssm.create_cloud_connector(DisplayName="azure", RoleArn="arn:aws:iam::000000000000:role/c",
                                         Configuration=config)["CloudConnectorId"]
    except ClientError as e:  # the client's model differs from Roto's
        pytest.skip(str(e))
    got = ssm.get_cloud_connector(CloudConnectorId=cid)
    assert got["DisplayName"] == "azure" and got["CloudConnectorArn"].endswith(cid)
    ssm.update_cloud_connector(CloudConnectorId=cid, DisplayName="az")
    assert [(c["DisplayName"], c["Provider"]) for c in ssm.list_cloud_connectors()["CloudConnectors"]] == [("az", "Azure")]
    assert ssm.validate_cloud_connector(CloudConnectorId=cid)["ValidationFindings"] == []
    ssm.delete_cloud_connector(CloudConnectorId=cid)
    with pytest.raises(ClientError) as e:
        ssm.get_cloud_connector(CloudConnectorId=cid)
    assert code(e) == "ResourceNotFoundException"


RUNBOOK = json.dumps({"schemaVersion": "0.3", "mainSteps": [
    {"name": "one", "action": "aws:sleep", "inputs": {"Duration": "PT1S"}},
    {"name": "two", "action": "aws:sleep", "inputs": {"Duration": "PT1S"}}]})


def test_automation_executions_are_recorded_and_failed(ssm):
    ssm.create_document(Name="my-runbook", Content=RUNBOOK, DocumentType="Automation")
    eid = ssm.start_automation_execution(DocumentName="my-runbook", Parameters={"x": ["1"]})["AutomationExecutionId"]
    execution = ssm.get_automation_execution(AutomationExecutionId=eid)["AutomationExecution"]
    assert (execution["DocumentName"], execution["AutomationExecutionStatus"]) == ("my-runbook", "Failed")
    assert "does not run" in execution["FailureMessage"] and execution["Parameters"] == {"x": ["1"]}
    listed = ssm.describe_automation_executions(Filters=[{"Key": "DocumentNamePrefix", "Values": ["my-"]}])
    assert [e["AutomationExecutionId"] for e in listed["AutomationExecutionMetadataList"]] == [eid]
    assert ssm.describe_automation_step_executions(AutomationExecutionId=eid)["StepExecutions"] == []
    with pytest.raises(ClientError) as e:
        ssm.stop_automation_execution(AutomationExecutionId=eid)
    assert code(e) == "InvalidAutomationStatusUpdateException"
    with pytest.raises(ClientError) as e:
        ssm.start_automation_execution(DocumentName="missing")
    assert code(e) == "AutomationDefinitionNotFoundException"
    with pytest.raises(ClientError) as e:
        ssm.start_change_request_execution(DocumentName="my-runbook", Runbooks=[{"DocumentName": "my-runbook"}])
    assert code(e) == "AutomationDefinitionNotFoundException"
    preview = ssm.start_execution_preview(DocumentName="my-runbook")["ExecutionPreviewId"]
    got = ssm.get_execution_preview(ExecutionPreviewId=preview)
    assert got["Status"] == "Success" and got["ExecutionPreview"]["Automation"]["StepPreviews"] == {"Undetermined": 2}
    with pytest.raises(ClientError) as e:
        ssm.start_execution_preview(DocumentName="missing")
    assert code(e) == "ValidationException"


def test_change_template_reviews(ssm):
    ssm.create_document(Name="tmpl", Content=RUNBOOK, DocumentType="Automation.ChangeTemplate")
    ssm.update_document_metadata(Name="tmpl", DocumentReviews={"Action": "Approve", "Comment": [{"Type": "Comment", "Content": "ok"}]})
    history = ssm.list_document_metadata_history(Name="tmpl", Metadata="DocumentReviews")
    responses = history["Metadata"]["ReviewerResponse"]
    assert [(r["ReviewStatus"], r["Comment"][0]["Content"]) for r in responses] == [("APPROVED", "ok")]
    cr = ssm.start_change_request_execution(DocumentName="tmpl", Runbooks=[{"DocumentName": "AWS-RestartEC2Instance"}])
    got = ssm.get_automation_execution(AutomationExecutionId=cr["AutomationExecutionId"])["AutomationExecution"]
    assert got["AutomationSubtype"] == "ChangeRequest"
    ssm.create_document(Name="cmd", Content=json.dumps({"schemaVersion": "2.2", "mainSteps": []}))
    with pytest.raises(ClientError) as e:
        ssm.update_document_metadata(Name="cmd", DocumentReviews={"Action": "Approve"})
    assert code(e) == "InvalidDocumentOperation"
    with pytest.raises(ClientError) as e:
        ssm.list_document_metadata_history(Name="nope", Metadata="DocumentReviews")
    assert code(e) == "InvalidDocument"


CALENDAR = """BEGIN:VCALENDAR
VERSION:2.0
X-CALENDAR-TYPE:DEFAULT_OPEN
BEGIN:VEVENT
DTSTART:20300101T000000Z
DTEND:20300102T000000Z
SUMMARY:freeze
END:VEVENT
END:VCALENDAR
"""


def test_calendar_state(ssm):
    ssm.create_document(Name="cal", Content=CALENDAR, DocumentType="ChangeCalendar", DocumentFormat="TEXT")
    before = ssm.get_calendar_state(CalendarNames=["cal"], AtTime="2029-12-31T12:00:00Z")
    assert before["State"] == "OPEN" and before["NextTransitionTime"].startswith("2030-01-01T00:00:00")
    during = ssm.get_calendar_state(CalendarNames=["cal"], AtTime="2030-01-01T12:00:00Z")
    assert during["State"] == "CLOSED" and during["NextTransitionTime"].startswith("2030-01-02T00:00:00")
    with pytest.raises(ClientError) as e:
        ssm.get_calendar_state(CalendarNames=["missing"])
    assert code(e) == "InvalidDocument"
    ssm.create_document(Name="cmd", Content=json.dumps({"schemaVersion": "2.2", "mainSteps": []}))
    with pytest.raises(ClientError) as e:
        ssm.get_calendar_state(CalendarNames=["cmd"])
    assert code(e) == "InvalidDocumentType"


def test_host_management_and_what_an_account_without_nodes_answers(ssm):
    role = ssm.register_default_host_management_configuration(PermissionModel="SERVICE_MANAGED")["RoleArn"]
    assert role.endswith(":role/service-role/AWSSystemsManagerDefaultEC2InstanceManagementRole")
    with pytest.raises(ClientError) as e:
        ssm.register_default_host_management_configuration(PermissionModel="SERVICE_MANAGED")
    assert code(e) == "ValidationException"
    mine = "arn:aws:iam::000000000000:role/mine"
    assert ssm.register_default_host_management_configuration(PermissionModel="SELF_MANAGED", RoleArn=mine, Overwrite=True)["RoleArn"] == mine
    ssm.deregister_default_host_management_configuration()
    with pytest.raises(ClientError) as e:
        ssm.delete_inventory(TypeName="Custom:Rack")
    assert code(e) == "InvalidTypeNameException"
    summary = {"ExecutionTime": datetime(2030, 1, 1, tzinfo=timezone.utc)}
    with pytest.raises(ClientError) as e:
        ssm.put_compliance_items(ResourceId="i-0123456789abcdef0", ResourceType="ManagedInstance", ComplianceType="Custom:xy",
                                 ExecutionSummary=summary, Items=[{"Severity": "HIGH", "Status": "COMPLIANT"}])
    assert code(e) == "InvalidResourceId"
    with pytest.raises(ClientError) as e:
        ssm.get_deployable_patch_snapshot_for_instance(InstanceId="i-0123456789abcdef0", SnapshotId="11111111-2222-3333-4444-555555555555")
    assert code(e) == "InvalidInstanceId"
    with pytest.raises(ClientError) as e:
        ssm.start_access_request(Reason="debug", Targets=[{"Key": "InstanceIds", "Values": ["i-0123456789abcdef0"]}])
    assert code(e) == "ResourceNotFoundException"
