//! The operations beyond stacks and change sets, by family: stack sets ([`super::stacksets`]),
//! the registry ([`super::registry`]), drift detection ([`super::drift`]), the IaC generator
//! ([`super::generated`]), stack refactors ([`super::refactors`]), events by operation
//! ([`super::operation_events`]), `RollbackStack` ([`super::rollback`]), and the
//! account-level reads, hooks and Organizations access ([`super::account`]).

use std::sync::Arc;

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{
    account, drift, generated, operation_events, refactors, registry, rollback, stacksets,
    validation, Inner,
};
use crate::documents::Scope;
use crate::paging;

/// Where the documents of `kind` that belong to the caller's account and region live.
pub(crate) fn scope<'a>(ctx: &'a Context, kind: &'a str) -> Scope<'a> {
    Scope {
        account: &ctx.account,
        region: &ctx.region,
        kind,
        parent: "",
    }
}

/// One page of `items` as the output member `member`, by the request's `MaxResults` (at
/// most 100) and `NextToken`.
pub(crate) fn page(items: Vec<Value>, input: &Value, member: &str) -> AwsResult<Value> {
    let limit = input.int("MaxResults").unwrap_or(100).clamp(1, 100) as usize;
    let (items, next) = paging::page(items, limit, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map().with(member, items).with_opt("NextToken", next))
}

/// Answers `operation`, or `NotImplemented` for an operation no family serves.
pub(crate) async fn dispatch(
    inner: &Arc<Inner>,
    ctx: &Context,
    operation: &str,
    input: &Value,
) -> AwsResult<Value> {
    match operation {
        "CreateStackSet" => stacksets::create_stack_set(inner, ctx, input).await,
        "UpdateStackSet" => stacksets::update_stack_set(inner, ctx, input).await,
        "ImportStacksToStackSet" => stacksets::import_stacks_to_stack_set(inner, ctx, input),
        "RollbackStack" => rollback::rollback_stack(inner, ctx, input),
        "CreateStackRefactor" => refactors::create_stack_refactor(inner, ctx, input).await,
        "EstimateTemplateCost" => account::estimate_template_cost(inner, ctx, input).await,
        _ => stack_sets(inner, ctx, operation, input)
            .or_else(|| registry(inner, ctx, operation, input))
            .or_else(|| others(inner, ctx, operation, input))
            .unwrap_or_else(|| Err(AwsError::not_implemented(operation))),
    }
}

fn stack_sets(
    inner: &Arc<Inner>,
    ctx: &Context,
    operation: &str,
    input: &Value,
) -> Option<AwsResult<Value>> {
    Some(match operation {
        "DescribeStackSet" => stacksets::describe_stack_set(inner, ctx, input),
        "ListStackSets" => stacksets::list_stack_sets(inner, ctx, input),
        "DeleteStackSet" => stacksets::delete_stack_set(inner, ctx, input),
        "CreateStackInstances" => stacksets::create_stack_instances(inner, ctx, input),
        "UpdateStackInstances" => stacksets::update_stack_instances(inner, ctx, input),
        "DeleteStackInstances" => stacksets::delete_stack_instances(inner, ctx, input),
        "DescribeStackInstance" => stacksets::describe_stack_instance(inner, ctx, input),
        "ListStackInstances" => stacksets::list_stack_instances(inner, ctx, input),
        "DescribeStackSetOperation" => stacksets::describe_stack_set_operation(inner, ctx, input),
        "ListStackSetOperations" => stacksets::list_stack_set_operations(inner, ctx, input),
        "ListStackSetOperationResults" => {
            stacksets::list_stack_set_operation_results(inner, ctx, input)
        }
        "StopStackSetOperation" => stacksets::stop_stack_set_operation(inner, ctx, input),
        "DetectStackSetDrift" => stacksets::detect_stack_set_drift(inner, ctx, input),
        "ListStackSetAutoDeploymentTargets" => {
            stacksets::list_stack_set_auto_deployment_targets(inner, ctx, input)
        }
        "ListStackInstanceResourceDrifts" => {
            stacksets::list_stack_instance_resource_drifts(inner, ctx, input)
        }
        _ => return None,
    })
}

fn registry(
    inner: &Inner,
    ctx: &Context,
    operation: &str,
    input: &Value,
) -> Option<AwsResult<Value>> {
    Some(match operation {
        "DescribeType" => registry::describe_type(inner, ctx, input),
        "ListTypes" => registry::list_types(inner, ctx, input),
        "RegisterType" => registry::register_type(inner, ctx, input),
        "DescribeTypeRegistration" => registry::describe_type_registration(inner, ctx, input),
        "ListTypeRegistrations" => registry::list_type_registrations(inner, ctx, input),
        "ListTypeVersions" => registry::list_type_versions(inner, ctx, input),
        "SetTypeDefaultVersion" => registry::set_type_default_version(inner, ctx, input),
        "DeregisterType" => registry::deregister_type(inner, ctx, input),
        "SetTypeConfiguration" => registry::set_type_configuration(inner, ctx, input),
        "BatchDescribeTypeConfigurations" => {
            registry::batch_describe_type_configurations(inner, ctx, input)
        }
        "TestType" => registry::test_type(inner, ctx, input),
        "PublishType" => registry::publish_type(inner, ctx, input),
        "ActivateType" | "DeactivateType" => registry::activate_type(input),
        "RegisterPublisher" => registry::register_publisher(inner, ctx, input),
        "DescribePublisher" => registry::describe_publisher(inner, ctx, input),
        "RecordHandlerProgress" => registry::record_handler_progress(),
        _ => return None,
    })
}

fn others(
    inner: &Inner,
    ctx: &Context,
    operation: &str,
    input: &Value,
) -> Option<AwsResult<Value>> {
    Some(match operation {
        "DetectStackDrift" => drift::detect_stack_drift(inner, ctx, input),
        "DescribeStackDriftDetectionStatus" => {
            drift::describe_stack_drift_detection_status(inner, ctx, input)
        }
        "DetectStackResourceDrift" => drift::detect_stack_resource_drift(inner, ctx, input),
        "DescribeStackResourceDrifts" => drift::describe_stack_resource_drifts(inner, ctx, input),
        "CreateGeneratedTemplate" => generated::create_generated_template(inner, ctx, input),
        "DescribeGeneratedTemplate" => generated::describe_generated_template(inner, ctx, input),
        "ListGeneratedTemplates" => generated::list_generated_templates(inner, ctx, input),
        "UpdateGeneratedTemplate" => generated::update_generated_template(inner, ctx, input),
        "DeleteGeneratedTemplate" => generated::delete_generated_template(inner, ctx, input),
        "GetGeneratedTemplate" => generated::get_generated_template(inner, ctx, input),
        "StartResourceScan" => generated::start_resource_scan(inner, ctx, input),
        "DescribeResourceScan" => generated::describe_resource_scan(inner, ctx, input),
        "ListResourceScans" => generated::list_resource_scans(inner, ctx, input),
        "ListResourceScanResources" => generated::list_resource_scan_resources(inner, ctx, input),
        "ListResourceScanRelatedResources" => {
            generated::list_resource_scan_related_resources(inner, ctx, input)
        }
        "DescribeStackRefactor" => refactors::describe_stack_refactor(inner, ctx, input),
        "ListStackRefactors" => refactors::list_stack_refactors(inner, ctx, input),
        "ListStackRefactorActions" => refactors::list_stack_refactor_actions(inner, ctx, input),
        "ExecuteStackRefactor" => refactors::execute_stack_refactor(inner, ctx, input),
        "DescribeEvents" => operation_events::describe_events(inner, ctx, input),
        "DescribeAccountLimits" => Ok(account::describe_account_limits()),
        "DescribeChangeSetHooks" => account::describe_change_set_hooks(inner, ctx, input),
        "GetHookResult" => account::get_hook_result(input),
        "ListHookResults" => Ok(account::list_hook_results(input)),
        "DescribeOrganizationsAccess" => Ok(account::describe_organizations_access()),
        "ActivateOrganizationsAccess" | "DeactivateOrganizationsAccess" => {
            account::organizations_access_change()
        }
        _ => return None,
    })
}
