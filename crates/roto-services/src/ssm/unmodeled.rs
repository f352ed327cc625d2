//! The Systems Manager features Roto does not model (managed nodes and what they report:
//! sessions, patch states, inventory, compliance; maintenance window executions;
//! just-in-time node access), answered as SSM answers an account that has no managed
//! nodes: empty lists, and the documented not-found error for any id.

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

fn no_resource(_: &Value) -> AwsError {
    not_found(
        "ResourceNotFoundException",
        "The specified resource does not exist.",
    )
}

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("DescribeAvailablePatches"),
    Featureless::empty("DescribeInstanceInformation"),
    Featureless::empty("DescribeInstanceProperties"),
    Featureless::empty("DescribeInventoryDeletions"),
    Featureless::empty("DescribeMaintenanceWindowSchedule"),
    Featureless::empty("DescribeMaintenanceWindowExecutions"),
    Featureless::empty("DescribePatchProperties"),
    Featureless::empty("DescribeInstancePatchStates"),
    Featureless::empty("DescribeInstancePatchStatesForPatchGroup"),
    Featureless::empty("DescribeSessions"),
    Featureless::empty("GetInventory"),
    Featureless::empty("GetInventorySchema"),
    Featureless::empty("GetOpsSummary"),
    Featureless::empty("ListCommandInvocations"),
    Featureless::empty("ListComplianceItems"),
    Featureless::empty("ListComplianceSummaries"),
    Featureless::empty("ListNodes"),
    Featureless::empty("ListNodesSummary"),
    Featureless::empty("ListOpsItemEvents"),
    Featureless::empty("ListResourceComplianceSummaries"),
    Featureless::output("DescribePatchGroupState", |_| patch_group_state()),
    Featureless::output("GetConnectionStatus", |input| {
        Value::map()
            .with_opt("Target", input.str("Target"))
            .with("Status", "notconnected")
    }),
    Featureless::output("TerminateSession", |input| {
        Value::map().with_opt("SessionId", input.str("SessionId"))
    }),
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
    Featureless::error("GetAccessToken", no_resource),
    Featureless::error("GetDeployablePatchSnapshotForInstance", no_instance),
    Featureless::error("UpdateAssociationStatus", no_instance),
    Featureless::error("DescribeAssociationExecutionTargets", |input| {
        let id = input.str("ExecutionId").unwrap_or_default();
        not_found(
            "AssociationExecutionDoesNotExist",
            format!("Association execution {id} does not exist."),
        )
    }),
    Featureless::error("StartAccessRequest", |_| {
        not_found(
            "ResourceNotFoundException",
            "The specified target does not exist.",
        )
    }),
    Featureless::error("DeleteInventory", |input| {
        let name = input.str("TypeName").unwrap_or_default();
        not_found(
            "InvalidTypeNameException",
            format!("The inventory type {name} does not exist."),
        )
    }),
    Featureless::error("PutComplianceItems", |input| {
        let id = input.str("ResourceId").unwrap_or_default();
        match input.str("ResourceType") {
            Some("ManagedInstance") => not_found(
                "InvalidResourceId",
                format!("The resource ID {id} isn't valid."),
            ),
            _ => not_found(
                "InvalidResourceType",
                "The resource type isn't valid. ResourceType must be ManagedInstance.",
            ),
        }
    }),
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
