//! StackSets: one template deployed as a stack in each of several accounts and regions.
//!
//! A stack set, its stack instances and its operations are documents of the service's
//! document table (kinds `stackset`, `instance` and `operation`, instances and operations
//! under their set's name). Each operation on instances (create, update, delete, drift
//! detection) is recorded `RUNNING` and carried out by [`super::stackset_runs`] on a
//! background task, which deploys every instance as an ordinary stack of the target account
//! and region through CloudFormation's own `CreateStack`, `UpdateStack` and `DeleteStack`
//! on the dispatcher, waits for each stack to settle, and records the outcome per instance
//! (`ListStackSetOperationResults`) and for the operation. Stacks are named
//! `StackSet-<set>-<uuid>`, as AWS names them.

use std::sync::Arc;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::families::{page, scope};
use super::stackset_runs::{self, Action, Target};
use super::{validation, Inner, SPEC};
use crate::documents::{document, shaped, Scope};
use crate::ids;

pub(crate) const STACKSET: &str = "stackset";
pub(crate) const INSTANCE: &str = "instance";
pub(crate) const OPERATION: &str = "operation";

/// Where the stack sets of the caller's account and region live.
pub(crate) fn sets(ctx: &Context) -> Scope<'_> {
    scope(ctx, STACKSET)
}

/// Where the documents of `kind` under the stack set `name` live.
pub(crate) fn under<'a>(ctx: &'a Context, kind: &'a str, name: &'a str) -> Scope<'a> {
    Scope {
        account: &ctx.account,
        region: &ctx.region,
        kind,
        parent: name,
    }
}

pub(crate) fn set_not_found(name: &str) -> AwsError {
    AwsError::new(
        "StackSetNotFoundException",
        format!("StackSet {name} not found"),
    )
}

/// The stack set a request names (by name or by id), as stored.
pub(crate) fn load_set(inner: &Inner, ctx: &Context, named: &str) -> AwsResult<Json> {
    let name = named.split(':').next().unwrap_or(named);
    match inner.documents.get(sets(ctx), name)? {
        Some(doc) if doc["Status"] != "DELETED" => Ok(doc),
        _ => Err(set_not_found(named)),
    }
}

fn set_name(input: &Value) -> &str {
    input.str("StackSetName").unwrap_or_default()
}

pub(crate) async fn create_stack_set(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    let taken = inner.documents.get(sets(ctx), name)?;
    if taken.is_some_and(|doc| doc["Status"] != "DELETED") {
        return Err(AwsError::new(
            "NameAlreadyExistsException",
            format!("StackSet {name} already exists"),
        ));
    }
    let body = super::stacks::template_text(inner, ctx, input).await?;
    super::stacks::prepare(&body)?;
    let id = format!("{name}:{}", ids::uuid());
    let mut fields = match document(input) {
        Json::Object(fields) => fields,
        _ => serde_json::Map::new(),
    };
    for member in ["TemplateURL", "ClientRequestToken", "CallAs", "StackId"] {
        fields.remove(member);
    }
    fields.insert("TemplateBody".into(), body.into());
    fields.insert("StackSetId".into(), id.clone().into());
    fields.insert("Status".into(), "ACTIVE".into());
    fields.insert(
        "StackSetARN".into(),
        format!(
            "arn:aws:cloudformation:{}:{}:stackset/{id}",
            ctx.region, ctx.account
        )
        .into(),
    );
    let defaults = [
        (
            "AdministrationRoleARN",
            json!(format!(
                "arn:aws:iam::{}:role/AWSCloudFormationStackSetAdministrationRole",
                ctx.account
            )),
        ),
        (
            "ExecutionRoleName",
            json!("AWSCloudFormationStackSetExecutionRole"),
        ),
        ("PermissionModel", json!("SELF_MANAGED")),
        ("ManagedExecution", json!({"Active": false})),
        ("Parameters", json!([])),
        ("Capabilities", json!([])),
        ("Tags", json!([])),
        (
            "StackSetDriftDetectionDetails",
            json!({"DriftStatus": "NOT_CHECKED"}),
        ),
    ];
    for (member, value) in defaults {
        fields.entry(member).or_insert(value);
    }
    inner
        .documents
        .put(sets(ctx), name, &Json::Object(fields))?;
    Ok(Value::map().with("StackSetId", id))
}

pub(crate) fn describe_stack_set(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let mut doc = load_set(inner, ctx, set_name(input))?;
    let regions: Vec<Json> = instances(inner, ctx, set_name(input))?
        .iter()
        .map(|i| i["Region"].clone())
        .fold(Vec::new(), |mut seen, r| {
            if !seen.contains(&r) {
                seen.push(r);
            }
            seen
        });
    doc["Regions"] = Json::Array(regions);
    Ok(Value::map().with("StackSet", shaped(SPEC.model(), "StackSet", &doc)?))
}

pub(crate) fn list_stack_sets(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let wanted = input.str("Status").unwrap_or("ACTIVE");
    let summaries = inner
        .documents
        .list(sets(ctx))?
        .into_iter()
        .filter(|doc| doc["Status"] == wanted)
        .map(|mut doc| {
            doc["DriftStatus"] = doc["StackSetDriftDetectionDetails"]["DriftStatus"].clone();
            shaped(SPEC.model(), "StackSetSummary", &doc)
        })
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "Summaries")
}

pub(crate) async fn update_stack_set(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    let mut doc = load_set(inner, ctx, name)?;
    stackset_runs::check_idle(inner, ctx, name)?;
    if input.bool("UsePreviousTemplate") != Some(true) {
        let body = super::stacks::template_text(inner, ctx, input).await?;
        super::stacks::prepare(&body)?;
        doc["TemplateBody"] = body.into();
    }
    let given = document(input);
    for member in [
        "Description",
        "Parameters",
        "Capabilities",
        "Tags",
        "AdministrationRoleARN",
        "ExecutionRoleName",
        "PermissionModel",
        "AutoDeployment",
        "ManagedExecution",
    ] {
        if let Some(value) = given.get(member) {
            doc[member] = value.clone();
        }
    }
    inner.documents.put(sets(ctx), name, &doc)?;
    let targets = match targets_of(input) {
        targets if targets.is_empty() => existing_targets(inner, ctx, name)?,
        targets => targets,
    };
    let op = stackset_runs::start(inner, ctx, name, Action::Update, targets, input)?;
    Ok(Value::map().with("OperationId", op))
}

pub(crate) fn delete_stack_set(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let name = set_name(input);
    let mut doc = load_set(inner, ctx, name)?;
    stackset_runs::check_idle(inner, ctx, name)?;
    if !instances(inner, ctx, name)?.is_empty() {
        return Err(AwsError::new(
            "StackSetNotEmptyException",
            format!("StackSet {name} cannot be deleted while it still has instances"),
        ));
    }
    doc["Status"] = "DELETED".into();
    inner
        .documents
        .delete_children(&ctx.account, &ctx.region, name)?;
    inner.documents.put(sets(ctx), name, &doc)?;
    Ok(Value::map())
}

/// The stack set's instances, as stored.
pub(crate) fn instances(inner: &Inner, ctx: &Context, name: &str) -> AwsResult<Vec<Json>> {
    inner.documents.list(under(ctx, INSTANCE, name))
}

/// The accounts and regions a request names: every account (`Accounts`, or
/// `DeploymentTargets.Accounts`; the caller's own when neither) in every region.
pub(crate) fn targets_of(input: &Value) -> Vec<Target> {
    let listed = |v: Option<&Value>| -> Vec<String> {
        v.and_then(Value::as_list)
            .map(|l| {
                l.iter()
                    .filter_map(|x| x.as_str().map(str::to_string))
                    .collect()
            })
            .unwrap_or_default()
    };
    let mut accounts = listed(input.get("Accounts"));
    accounts.extend(listed(
        input
            .get("DeploymentTargets")
            .and_then(|d| d.get("Accounts")),
    ));
    let regions = listed(input.get("Regions"));
    accounts
        .iter()
        .flat_map(|account| {
            regions.iter().map(move |region| Target {
                account: account.clone(),
                region: region.clone(),
            })
        })
        .collect()
}

fn existing_targets(inner: &Inner, ctx: &Context, name: &str) -> AwsResult<Vec<Target>> {
    Ok(instances(inner, ctx, name)?
        .iter()
        .map(|i| Target {
            account: i["Account"].as_str().unwrap_or_default().to_string(),
            region: i["Region"].as_str().unwrap_or_default().to_string(),
        })
        .collect())
}

fn check_accounts(targets: &[Target]) -> AwsResult<()> {
    if targets.is_empty() {
        return Err(validation(
            "Accounts or DeploymentTargets and Regions must be specified",
        ));
    }
    match targets
        .iter()
        .find(|t| t.account.len() != 12 || !t.account.bytes().all(|b| b.is_ascii_digit()))
    {
        Some(t) => Err(validation(format!("Account {} is not valid", t.account))),
        None => Ok(()),
    }
}

pub(crate) fn create_stack_instances(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    start_instances(inner, ctx, input, Action::Create)
}

pub(crate) fn update_stack_instances(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    start_instances(inner, ctx, input, Action::Update)
}

pub(crate) fn delete_stack_instances(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let retain = input.bool("RetainStacks").unwrap_or(false);
    start_instances(inner, ctx, input, Action::Delete { retain })
}

/// Starts an operation of `action` on the instances the request targets, after the checks
/// every instance operation makes (an update's instances must already exist).
fn start_instances(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
    action: Action,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let targets = targets_of(input);
    check_accounts(&targets)?;
    if matches!(action, Action::Update) {
        for t in &targets {
            instance(inner, ctx, name, &t.account, &t.region)?;
        }
    }
    stackset_runs::check_idle(inner, ctx, name)?;
    let op = stackset_runs::start(inner, ctx, name, action, targets, input)?;
    Ok(Value::map().with("OperationId", op))
}

/// The instance of the set `name` in `account` and `region`, as stored.
pub(crate) fn instance(
    inner: &Inner,
    ctx: &Context,
    name: &str,
    account: &str,
    region: &str,
) -> AwsResult<Json> {
    inner
        .documents
        .get(under(ctx, INSTANCE, name), &format!("{account}:{region}"))?
        .ok_or_else(|| {
            AwsError::new(
                "StackInstanceNotFoundException",
                format!("Stack instance {account}/{region} of StackSet {name} not found"),
            )
        })
}

pub(crate) fn describe_stack_instance(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let account = input.str("StackInstanceAccount").unwrap_or_default();
    let region = input.str("StackInstanceRegion").unwrap_or_default();
    let doc = instance(inner, ctx, name, account, region)?;
    Ok(Value::map().with(
        "StackInstance",
        shaped(SPEC.model(), "StackInstance", &doc)?,
    ))
}

pub(crate) fn list_stack_instances(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let filters: Vec<(String, String)> = input
        .get("Filters")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|f| {
            let key = match f.str("Name").unwrap_or_default() {
                "DETAILED_STATUS" => "/StackInstanceStatus/DetailedStatus",
                "LAST_OPERATION_ID" => "/LastOperationId",
                _ => "/DriftStatus",
            };
            (
                key.to_string(),
                f.str("Values").unwrap_or_default().to_string(),
            )
        })
        .collect();
    let summaries = instances(inner, ctx, name)?
        .into_iter()
        .filter(|i| {
            input
                .str("StackInstanceAccount")
                .is_none_or(|a| i["Account"] == a)
                && input
                    .str("StackInstanceRegion")
                    .is_none_or(|r| i["Region"] == r)
                && filters
                    .iter()
                    .all(|(key, value)| i.pointer(key).and_then(Json::as_str) == Some(value))
        })
        .map(|i| shaped(SPEC.model(), "StackInstanceSummary", &i))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "Summaries")
}

/// The stack set and the operation of it a request names.
fn named_operation<'a>(
    inner: &Inner,
    ctx: &Context,
    input: &'a Value,
) -> AwsResult<(&'a str, Json)> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let id = input.str("OperationId").unwrap_or_default();
    Ok((name, stackset_runs::operation(inner, ctx, name, id)?))
}

pub(crate) fn describe_stack_set_operation(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (_, op) = named_operation(inner, ctx, input)?;
    Ok(Value::map().with(
        "StackSetOperation",
        shaped(SPEC.model(), "StackSetOperation", &op)?,
    ))
}

pub(crate) fn list_stack_set_operations(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let mut ops = inner.documents.list(under(ctx, OPERATION, name))?;
    ops.reverse();
    let summaries = ops
        .iter()
        .map(|op| shaped(SPEC.model(), "StackSetOperationSummary", op))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "Summaries")
}

pub(crate) fn list_stack_set_operation_results(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (_, op) = named_operation(inner, ctx, input)?;
    let wanted: Vec<&str> = input
        .get("Filters")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|f| f.str("Values"))
        .collect();
    let results = op["Results"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|r| wanted.is_empty() || wanted.iter().any(|w| r["Status"] == *w))
        .map(|r| shaped(SPEC.model(), "StackSetOperationResultSummary", r))
        .collect::<AwsResult<Vec<_>>>()?;
    page(results, input, "Summaries")
}

pub(crate) fn stop_stack_set_operation(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (name, op) = named_operation(inner, ctx, input)?;
    let id = input.str("OperationId").unwrap_or_default();
    if op["Status"] != "RUNNING" && op["Status"] != "QUEUED" {
        return Err(AwsError::new(
            "InvalidOperationException",
            format!("Operation {id} is not running and cannot be stopped"),
        ));
    }
    stackset_runs::request_stop(inner, ctx, name, id)?;
    Ok(Value::map())
}

pub(crate) fn detect_stack_set_drift(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    stackset_runs::check_idle(inner, ctx, name)?;
    let targets = existing_targets(inner, ctx, name)?;
    let op = stackset_runs::start(inner, ctx, name, Action::DetectDrift, targets, input)?;
    Ok(Value::map().with("OperationId", op))
}

/// `ImportStacksToStackSet`: stacks of this account and region become instances of the
/// set, each keeping its stack.
pub(crate) fn import_stacks_to_stack_set(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let name = set_name(input);
    load_set(inner, ctx, name)?;
    let ids: Vec<String> = input
        .get("StackIds")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect();
    if ids.is_empty() {
        return Err(validation("StackIds must be specified"));
    }
    let mut targets = Vec::new();
    for id in &ids {
        let stack = super::stacks::named(inner, ctx, id).map_err(|_| {
            AwsError::new("StackNotFoundException", format!("Stack {id} not found"))
        })?;
        targets.push(Target {
            account: stack.account,
            region: stack.region,
        });
    }
    stackset_runs::check_idle(inner, ctx, name)?;
    let op = stackset_runs::start_import(inner, ctx, name, targets, ids, input)?;
    Ok(Value::map().with("OperationId", op))
}

/// `ListStackSetAutoDeploymentTargets`: automatic deployment follows organizational units,
/// which only service-managed sets in an organization have.
pub(crate) fn list_stack_set_auto_deployment_targets(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    load_set(inner, ctx, set_name(input))?;
    Ok(Value::map().with("Summaries", Vec::<Value>::new()))
}

/// `ListStackInstanceResourceDrifts`: the resources of an instance a drift detection
/// operation checked. Roto's drift detection checks none (see [`super::drift`]).
pub(crate) fn list_stack_instance_resource_drifts(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let (name, _) = named_operation(inner, ctx, input)?;
    let account = input.str("StackInstanceAccount").unwrap_or_default();
    let region = input.str("StackInstanceRegion").unwrap_or_default();
    instance(inner, ctx, name, account, region)?;
    Ok(Value::map().with("Summaries", Vec::<Value>::new()))
}

/// The time a document records, in the json protocol's epoch seconds.
pub(crate) fn now_seconds() -> Json {
    json!(now_millis() as f64 / 1000.0)
}
