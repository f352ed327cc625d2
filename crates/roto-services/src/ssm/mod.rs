//! Systems Manager (Parameter Store and the resources around it) over the json 1.1 protocol.
//!
//! Every version of a parameter is a row of `ssm_versions` holding the whole parameter as
//! it was written (type, value, description, pattern, tier, labels), so history and
//! `name:version` / `name:label` selectors read one row; `ssm_parameters` holds the latest
//! version number and the tags. SecureString values are encrypted through KMS by envelope
//! encryption (see [`crate::envelope`]) under the parameter's `KeyId` or the account's
//! `alias/aws/ssm` key, with the parameter's ARN as encryption context, as AWS does.
//!
//! - [`names`]: name, hierarchy, selector and label rules.
//! - [`parameters`]: put, get, delete, history, labels, tags.
//! - [`queries`]: GetParametersByPath and DescribeParameters with their filters, and tags.
//! - [`records`]: the resources kept whole as documents (`ssm_items`), and their paging;
//!   [`filters`]: their Describe filters.
//! - [`documents`]: SSM documents, their versions and sharing.
//! - [`windows`]: maintenance windows, their targets and tasks.
//! - [`patching`]: patch baselines, patch groups and default baselines.
//! - [`opscenter`]: OpsItems (with their related items) and OpsMetadata.
//! - [`fleet`]: associations, activations, resource data syncs, cloud connectors.
//! - [`automation`]: runbook executions (recorded, not run), change requests, previews,
//!   document reviews, Change Calendar states.
//! - [`settings`]: Default Host Management Configuration, service settings and resource
//!   policies.
//! - [`commands`]: Run Command on an account without managed nodes.
//! - [`unmodeled`]: what an account without managed nodes answers.

use std::io;
use std::sync::Arc;

use roto_core::featureless::{self, Featureless};
use roto_core::{
    AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

mod automation;
mod commands;
mod documents;
mod filters;
mod fleet;
mod names;
mod opscenter;
mod parameters;
mod patching;
mod queries;
mod records;
mod settings;
mod unmodeled;
mod windows;

use crate::documents::{documents_schema, Documents};

static ITEMS_SCHEMA: &[&str] = &[documents_schema!("ssm_items")];

static SPEC: ServiceSpec = ServiceSpec {
    name: "ssm",
    model: "ssm",
    query_model: None,
    signing_names: &["ssm"],
    target_prefix: Some("AmazonSSM"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ssm_parameters (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS ssm_versions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    type TEXT NOT NULL,
    value BLOB NOT NULL,
    key_id TEXT,
    description TEXT,
    allowed_pattern TEXT,
    tier TEXT NOT NULL,
    data_type TEXT NOT NULL,
    policies TEXT,
    modified INTEGER NOT NULL,
    labels TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name, version)
);
";

/// The KMS alias of the key that protects SecureString parameters that name none.
const DEFAULT_KEY: &str = "alias/aws/ssm";

/// SSM Parameter Store.
pub struct Ssm {
    env: Arc<Env>,
    docs: Documents,
}

impl Ssm {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Ssm> {
        env.store.migrate(SCHEMA)?;
        Ok(Ssm {
            docs: Documents::new(env.clone(), "ssm_items", ITEMS_SCHEMA),
            env,
        })
    }
}

impl Service for Ssm {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let output = match operation {
                "PutParameter" => self.put_parameter(ctx, input).await?,
                "GetParameter" => self.get_parameter(ctx, input).await?,
                "GetParameters" => self.get_parameters(ctx, input).await?,
                "GetParametersByPath" => self.get_parameters_by_path(ctx, input).await?,
                "DescribeParameters" => self.describe_parameters(ctx, input)?,
                "GetParameterHistory" => self.get_parameter_history(ctx, input).await?,
                "LabelParameterVersion" => self.label_parameter_version(ctx, input)?,
                "UnlabelParameterVersion" => self.unlabel_parameter_version(ctx, input)?,
                "DeleteParameter" => self.delete_parameter(ctx, input)?,
                "DeleteParameters" => self.delete_parameters(ctx, input)?,
                "AddTagsToResource" => self.add_tags_to_resource(ctx, input)?,
                "RemoveTagsFromResource" => self.remove_tags_from_resource(ctx, input)?,
                "ListTagsForResource" => self.list_tags_for_resource(ctx, input)?,
                other => self.call_record(ctx, other, input)?,
            };
            Ok(Response::new(output))
        })
    }
}

impl Ssm {
    /// The operations of the resources kept whole as documents.
    fn call_record(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(match operation {
            "CreateDocument" => self.create_document(ctx, input)?,
            "GetDocument" => self.get_document(ctx, input)?,
            "DescribeDocument" => self.describe_document(ctx, input)?,
            "UpdateDocument" => self.update_document(ctx, input)?,
            "UpdateDocumentDefaultVersion" => self.update_document_default_version(ctx, input)?,
            "DeleteDocument" => self.delete_document(ctx, input)?,
            "ListDocuments" => self.list_documents(ctx, input)?,
            "ListDocumentVersions" => self.list_document_versions(ctx, input)?,
            "DescribeDocumentPermission" => self.describe_document_permission(ctx, input)?,
            "ModifyDocumentPermission" => self.modify_document_permission(ctx, input)?,
            "CreateMaintenanceWindow" => self.create_maintenance_window(ctx, input)?,
            "GetMaintenanceWindow" => self.get_maintenance_window(ctx, input)?,
            "UpdateMaintenanceWindow" => self.update_maintenance_window(ctx, input)?,
            "DeleteMaintenanceWindow" => self.delete_maintenance_window(ctx, input)?,
            "DescribeMaintenanceWindows" => self.describe_maintenance_windows(ctx, input)?,
            "DescribeMaintenanceWindowsForTarget" => {
                self.describe_maintenance_windows_for_target(ctx, input)?
            }
            "RegisterTargetWithMaintenanceWindow" => {
                self.register_target_with_maintenance_window(ctx, input)?
            }
            "UpdateMaintenanceWindowTarget" => self.update_maintenance_window_target(ctx, input)?,
            "DeregisterTargetFromMaintenanceWindow" => {
                self.deregister_target_from_maintenance_window(ctx, input)?
            }
            "DescribeMaintenanceWindowTargets" => {
                self.describe_maintenance_window_targets(ctx, input)?
            }
            "RegisterTaskWithMaintenanceWindow" => {
                self.register_task_with_maintenance_window(ctx, input)?
            }
            "GetMaintenanceWindowTask" => self.get_maintenance_window_task(ctx, input)?,
            "UpdateMaintenanceWindowTask" => self.update_maintenance_window_task(ctx, input)?,
            "DeregisterTaskFromMaintenanceWindow" => {
                self.deregister_task_from_maintenance_window(ctx, input)?
            }
            "DescribeMaintenanceWindowTasks" => {
                self.describe_maintenance_window_tasks(ctx, input)?
            }
            "GetServiceSetting" => self.get_service_setting(ctx, input)?,
            "UpdateServiceSetting" => self.update_service_setting(ctx, input)?,
            "ResetServiceSetting" => self.reset_service_setting(ctx, input)?,
            "PutResourcePolicy" => self.put_resource_policy(ctx, input)?,
            "GetResourcePolicies" => self.get_resource_policies(ctx, input)?,
            "DeleteResourcePolicy" => self.delete_resource_policy(ctx, input)?,
            "SendCommand" => self.send_command(ctx, input)?,
            "ListCommands" => self.list_commands(ctx, input)?,
            "CancelCommand" => self.cancel_command(ctx, input)?,
            other => self.call_operations(ctx, other, input)?,
        })
    }

    /// The operations of patching, OpsCenter, State Manager and Automation.
    fn call_operations(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(match operation {
            "CreatePatchBaseline" => self.create_patch_baseline(ctx, input)?,
            "GetPatchBaseline" => self.get_patch_baseline(ctx, input)?,
            "UpdatePatchBaseline" => self.update_patch_baseline(ctx, input)?,
            "DeletePatchBaseline" => self.delete_patch_baseline(ctx, input)?,
            "DescribePatchBaselines" => self.describe_patch_baselines(ctx, input)?,
            "RegisterDefaultPatchBaseline" => self.register_default_patch_baseline(ctx, input)?,
            "GetDefaultPatchBaseline" => self.get_default_patch_baseline(ctx, input)?,
            "RegisterPatchBaselineForPatchGroup" => {
                self.register_patch_baseline_for_patch_group(ctx, input)?
            }
            "DeregisterPatchBaselineForPatchGroup" => {
                self.deregister_patch_baseline_for_patch_group(ctx, input)?
            }
            "GetPatchBaselineForPatchGroup" => {
                self.get_patch_baseline_for_patch_group(ctx, input)?
            }
            "DescribePatchGroups" => self.describe_patch_groups(ctx, input)?,
            "DescribeEffectivePatchesForPatchBaseline" => {
                self.describe_effective_patches_for_patch_baseline(ctx, input)?
            }
            "CreateOpsItem" => self.create_ops_item(ctx, input)?,
            "GetOpsItem" => self.get_ops_item(ctx, input)?,
            "UpdateOpsItem" => self.update_ops_item(ctx, input)?,
            "DeleteOpsItem" => self.delete_ops_item(ctx, input)?,
            "DescribeOpsItems" => self.describe_ops_items(ctx, input)?,
            "AssociateOpsItemRelatedItem" => self.associate_ops_item_related_item(ctx, input)?,
            "DisassociateOpsItemRelatedItem" => {
                self.disassociate_ops_item_related_item(ctx, input)?
            }
            "ListOpsItemRelatedItems" => self.list_ops_item_related_items(ctx, input)?,
            "CreateOpsMetadata" => self.create_ops_metadata(ctx, input)?,
            "GetOpsMetadata" => self.get_ops_metadata(ctx, input)?,
            "UpdateOpsMetadata" => self.update_ops_metadata(ctx, input)?,
            "DeleteOpsMetadata" => self.delete_ops_metadata(ctx, input)?,
            "ListOpsMetadata" => self.list_ops_metadata(ctx, input)?,
            other => self.call_fleet(ctx, other, input)?,
        })
    }

    /// The operations of associations, activations, syncs, connectors and Automation.
    fn call_fleet(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(match operation {
            "CreateAssociation" => self.create_association(ctx, input)?,
            "CreateAssociationBatch" => self.create_association_batch(ctx, input)?,
            "DescribeAssociation" => self.describe_association(ctx, input)?,
            "UpdateAssociation" => self.update_association(ctx, input)?,
            "DeleteAssociation" => self.delete_association(ctx, input)?,
            "ListAssociations" => self.list_associations(ctx, input)?,
            "ListAssociationVersions" => self.list_association_versions(ctx, input)?,
            "DescribeAssociationExecutions" => self.describe_association_executions(ctx, input)?,
            "StartAssociationsOnce" => self.start_associations_once(ctx, input)?,
            "CreateActivation" => self.create_activation(ctx, input)?,
            "DescribeActivations" => self.describe_activations(ctx, input)?,
            "DeleteActivation" => self.delete_activation(ctx, input)?,
            "CreateResourceDataSync" => self.create_resource_data_sync(ctx, input)?,
            "ListResourceDataSync" => self.list_resource_data_sync(ctx, input)?,
            "UpdateResourceDataSync" => self.update_resource_data_sync(ctx, input)?,
            "DeleteResourceDataSync" => self.delete_resource_data_sync(ctx, input)?,
            "CreateCloudConnector" => self.create_cloud_connector(ctx, input)?,
            "GetCloudConnector" => self.get_cloud_connector(ctx, input)?,
            "UpdateCloudConnector" => self.update_cloud_connector(ctx, input)?,
            "DeleteCloudConnector" => self.delete_cloud_connector(ctx, input)?,
            "ListCloudConnectors" => self.list_cloud_connectors(ctx, input)?,
            "ValidateCloudConnector" => self.validate_cloud_connector(ctx, input)?,
            "RegisterDefaultHostManagementConfiguration" => {
                self.register_default_host_management_configuration(ctx, input)?
            }
            "DeregisterDefaultHostManagementConfiguration" => {
                self.deregister_default_host_management_configuration(ctx)?
            }
            other => self.call_automation(ctx, other, input)?,
        })
    }

    /// The operations of Automation, change requests, document reviews and calendars.
    fn call_automation(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(match operation {
            "StartAutomationExecution" => self.start_automation_execution(ctx, input)?,
            "StartChangeRequestExecution" => self.start_change_request_execution(ctx, input)?,
            "GetAutomationExecution" => self.get_automation_execution(ctx, input)?,
            "DescribeAutomationExecutions" => self.describe_automation_executions(ctx, input)?,
            "DescribeAutomationStepExecutions" => {
                self.describe_automation_step_executions(ctx, input)?
            }
            "StopAutomationExecution" | "SendAutomationSignal" => {
                self.finished_execution(ctx, input)?
            }
            "StartExecutionPreview" => self.start_execution_preview(ctx, input)?,
            "GetExecutionPreview" => self.get_execution_preview(ctx, input)?,
            "UpdateDocumentMetadata" => self.update_document_metadata(ctx, input)?,
            "ListDocumentMetadataHistory" => self.list_document_metadata_history(ctx, input)?,
            "GetCalendarState" => self.get_calendar_state(ctx, input)?,
            other => featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input)?,
        })
    }
}
