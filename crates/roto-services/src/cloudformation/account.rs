//! Account-level reads and the features an account without them answers for: the
//! account's limits, template cost estimates, hooks (no hook is registered, so a change
//! set has no hook invocations and no target has hook results), and trusted access with
//! AWS Organizations (an account in no organization has it off and cannot turn it on).

use std::sync::Arc;

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{changesets, Inner};
use crate::ids;

/// `DescribeAccountLimits`: CloudFormation's default quotas.
pub(crate) fn describe_account_limits() -> Value {
    let limits: Vec<Value> = [
        ("StackLimit", 2000),
        ("StackOutputsLimit", 200),
        ("ConcurrentResourcesLimit", 2500),
    ]
    .into_iter()
    .map(|(name, value)| Value::map().with("Name", name).with("Value", value as i64))
    .collect();
    Value::map().with("AccountLimits", limits)
}

/// `EstimateTemplateCost`: the template is checked, and the answer is a link to the AWS
/// Pricing Calculator, as AWS answers.
pub(crate) async fn estimate_template_cost(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let body = super::stacks::template_text(inner, ctx, input).await?;
    super::stacks::prepare(&body)?;
    Ok(Value::map().with(
        "Url",
        format!(
            "https://calculator.s3.amazonaws.com/calc5.html?key=cloudformation/{}",
            ids::uuid()
        ),
    ))
}

/// `DescribeChangeSetHooks`: the change set exists and no hook was invoked for it.
pub(crate) fn describe_change_set_hooks(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let cs = changesets::find(
        inner,
        ctx,
        input.str("ChangeSetName").unwrap_or_default(),
        input.str("StackName"),
    )?;
    let stack = super::stacks::named(inner, ctx, &cs.stack_id)?;
    Ok(Value::map()
        .with("ChangeSetId", cs.id)
        .with("ChangeSetName", cs.name)
        .with("Hooks", Vec::<Value>::new())
        .with("Status", "UNAVAILABLE")
        .with("StackId", stack.id)
        .with("StackName", stack.name))
}

/// `GetHookResult`: no hook ever ran.
pub(crate) fn get_hook_result(input: &Value) -> AwsResult<Value> {
    Err(AwsError::new(
        "HookResultNotFoundException",
        format!(
            "Hook result {} does not exist",
            input.str("HookResultId").unwrap_or_default()
        ),
    ))
}

/// `ListHookResults`: no target has hook results.
pub(crate) fn list_hook_results(input: &Value) -> Value {
    Value::map()
        .with_opt("TargetType", input.str("TargetType"))
        .with_opt("TargetId", input.str("TargetId"))
        .with("HookResults", Vec::<Value>::new())
}

/// `DescribeOrganizationsAccess`: trusted access is off outside an organization.
pub(crate) fn describe_organizations_access() -> Value {
    Value::map().with("Status", "DISABLED")
}

/// `ActivateOrganizationsAccess` and `DeactivateOrganizationsAccess`: the account is in no
/// organization.
pub(crate) fn organizations_access_change() -> AwsResult<Value> {
    Err(AwsError::new(
        "InvalidOperationException",
        "This account is not a member of an organization, so trusted access with AWS Organizations cannot be changed.",
    ))
}
