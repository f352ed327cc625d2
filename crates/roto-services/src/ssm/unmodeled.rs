//! The Systems Manager features Roto does not model (commands, automation, sessions,
//! patching state, inventory, OpsCenter, associations, managed nodes), answered as SSM
//! answers an account that has no managed nodes and none of these resources: empty lists,
//! and the documented not-found error for any id.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

fn not_found(code: &'static str, message: impl Into<String>) -> AwsError {
    AwsError::new(code, message.into())
}

fn no_instance(input: &Value) -> AwsError {
    super::commands::invalid_instance(input.str("InstanceId").unwrap_or_default())
}

fn no_window_execution(input: &Value) -> AwsError {
    super::windows::execution_not_found(input)
}

fn no_automation(input: &Value) -> AwsError {
    let id = input.str("AutomationExecutionId").unwrap_or_default();
    not_found(
        "AutomationExecutionNotFoundException",
        format!("Automation execution {id} does not exist."),
    )
}

fn no_ops_item(input: &Value) -> AwsError {
    let id = input.str("OpsItemId").unwrap_or_default();
    not_found(
        "OpsItemNotFoundException",
        format!("OpsItem with id {id} does not exist."),
    )
}

fn no_ops_metadata(input: &Value) -> AwsError {
    let arn = input.str("OpsMetadataArn").unwrap_or_default();
    not_found(
        "OpsMetadataNotFoundException",
        format!("OpsMetadata object {arn} does not exist."),
    )
}

fn no_association(_: &Value) -> AwsError {
    not_found(
        "AssociationDoesNotExist",
        "The specified association does not exist.",
    )
}

fn no_sync(input: &Value) -> AwsError {
    let name = input.str("SyncName").unwrap_or_default();
    not_found(
        "ResourceDataSyncNotFoundException",
        format!("Resource data sync {name} does not exist."),
    )
}

fn no_resource(_: &Value) -> AwsError {
    not_found(
        "ResourceNotFoundException",
        "The specified resource does not exist.",
    )
}

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("DescribeActivations"),
    Featureless::empty("DescribeAutomationExecutions"),
    Featureless::empty("DescribeAvailablePatches"),
    Featureless::empty("DescribeInstanceInformation"),
    Featureless::empty("DescribeInstanceProperties"),
    Featureless::empty("DescribeInventoryDeletions"),
    Featureless::empty("DescribeMaintenanceWindowSchedule"),
    Featureless::empty("DescribeMaintenanceWindowExecutions"),
    Featureless::empty("DescribeOpsItems"),
    Featureless::empty("DescribePatchBaselines"),
    Featureless::empty("DescribePatchGroups"),
    Featureless::empty("DescribePatchProperties"),
    Featureless::empty("DescribeInstancePatchStates"),
    Featureless::empty("DescribeInstancePatchStatesForPatchGroup"),
    Featureless::empty("DescribeSessions"),
    Featureless::empty("GetInventory"),
    Featureless::empty("GetInventorySchema"),
    Featureless::empty("GetOpsSummary"),
    Featureless::empty("ListAssociations"),
    Featureless::empty("ListCloudConnectors"),
    Featureless::empty("ListCommandInvocations"),
    Featureless::empty("ListComplianceItems"),
    Featureless::empty("ListComplianceSummaries"),
    Featureless::empty("ListNodes"),
    Featureless::empty("ListNodesSummary"),
    Featureless::empty("ListOpsItemEvents"),
    Featureless::empty("ListOpsItemRelatedItems"),
    Featureless::empty("ListOpsMetadata"),
    Featureless::empty("ListResourceComplianceSummaries"),
    Featureless::empty("ListResourceDataSync"),
    Featureless::output("DescribePatchGroupState", |_| patch_group_state()),
    Featureless::output("GetConnectionStatus", |input| {
        Value::map()
            .with_opt("Target", input.str("Target"))
            .with("Status", "notconnected")
    }),
    Featureless::output("TerminateSession", |input| {
        Value::map().with_opt("SessionId", input.str("SessionId"))
    }),
    Featureless::output("DeleteOpsItem", |_| Value::map()),
    Featureless::error("StartSession", |input| {
        let target = input.str("Target").unwrap_or_default();
        not_found("TargetNotConnected", format!("{target} is not connected."))
    }),
    Featureless::error("ResumeSession", |input| {
        let id = input.str("SessionId").unwrap_or_default();
        not_found(
            "DoesNotExistException",
            format!("Session {id} does not exist."),
        )
    }),
    Featureless::error("DescribeInstancePatches", no_instance),
    Featureless::error("DescribeInstanceAssociationsStatus", no_instance),
    Featureless::error("DescribeEffectiveInstanceAssociations", no_instance),
    Featureless::error("ListInventoryEntries", no_instance),
    Featureless::error("DeregisterManagedInstance", no_instance),
    Featureless::error("UpdateManagedInstanceRole", no_instance),
    Featureless::error("PutInventory", no_instance),
    Featureless::error("GetCommandInvocation", |_| {
        not_found("InvocationDoesNotExist", "")
    }),
    Featureless::error("CancelMaintenanceWindowExecution", no_window_execution),
    Featureless::error("GetMaintenanceWindowExecution", no_window_execution),
    Featureless::error("GetMaintenanceWindowExecutionTask", no_window_execution),
    Featureless::error(
        "GetMaintenanceWindowExecutionTaskInvocation",
        no_window_execution,
    ),
    Featureless::error(
        "DescribeMaintenanceWindowExecutionTasks",
        no_window_execution,
    ),
    Featureless::error(
        "DescribeMaintenanceWindowExecutionTaskInvocations",
        no_window_execution,
    ),
    Featureless::error("GetAutomationExecution", no_automation),
    Featureless::error("StopAutomationExecution", no_automation),
    Featureless::error("SendAutomationSignal", no_automation),
    Featureless::error("DescribeAutomationStepExecutions", no_automation),
    Featureless::error("GetOpsItem", no_ops_item),
    Featureless::error("UpdateOpsItem", no_ops_item),
    Featureless::error("AssociateOpsItemRelatedItem", no_ops_item),
    Featureless::error("DisassociateOpsItemRelatedItem", no_ops_item),
    Featureless::error("GetOpsMetadata", no_ops_metadata),
    Featureless::error("UpdateOpsMetadata", no_ops_metadata),
    Featureless::error("DeleteOpsMetadata", no_ops_metadata),
    Featureless::error("DescribeAssociation", no_association),
    Featureless::error("UpdateAssociation", no_association),
    Featureless::error("DeleteAssociation", no_association),
    Featureless::error("ListAssociationVersions", no_association),
    Featureless::error("DescribeAssociationExecutions", no_association),
    Featureless::error("DescribeAssociationExecutionTargets", no_association),
    Featureless::error("StartAssociationsOnce", no_association),
    Featureless::error("UpdateAssociationStatus", no_association),
    Featureless::error("DeleteResourceDataSync", no_sync),
    Featureless::error("UpdateResourceDataSync", no_sync),
    Featureless::error("DeleteActivation", |input| {
        let id = input.str("ActivationId").unwrap_or_default();
        not_found(
            "InvalidActivationId",
            format!("Activation ID {id} is not valid."),
        )
    }),
    Featureless::error("GetCloudConnector", no_resource),
    Featureless::error("UpdateCloudConnector", no_resource),
    Featureless::error("DeleteCloudConnector", no_resource),
    Featureless::error("ValidateCloudConnector", no_resource),
    Featureless::error("GetAccessToken", no_resource),
    Featureless::error("GetExecutionPreview", no_resource),
];

/// A patch group's state with no managed nodes in it: every count zero.
fn patch_group_state() -> Value {
    let model = super::SPEC.model();
    let mut out = Value::map();
    if let Some(op) = model.operation("DescribePatchGroupState") {
        if let Some(shape) = op.output.as_ref().map(|r| model.resolve(r)) {
            for (name, _) in shape.members.iter() {
                out.insert(name, 0);
            }
        }
    }
    out
}
