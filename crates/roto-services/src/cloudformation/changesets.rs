//! Change sets: a template and parameters prepared against a stack (a new one, in
//! REVIEW_IN_PROGRESS, for a CREATE change set), the changes it would make listed as AWS
//! lists them, then executed as the stack operation it describes.

use std::sync::Arc;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::deploy;
use super::providers::provider;
use super::stacks::{self, begin_update, prepare, settle, spawn, template_text};
use super::store::{self, ChangeSetRow, EventRow, Stack};
use super::template::section;
use super::{validation, Inner};

/// The change set a request names: by ARN, or by name within the named stack.
pub(crate) fn find(
    inner: &Inner,
    ctx: &Context,
    name: &str,
    stack: Option<&str>,
) -> AwsResult<ChangeSetRow> {
    let not_found = || {
        AwsError::new(
            "ChangeSetNotFoundException",
            format!("ChangeSet [{name}] does not exist"),
        )
        .with_status(404)
    };
    if name.starts_with("arn:") {
        return store::change_sets(inner.store()?, ctx, None)?
            .into_iter()
            .find(|c| c.id == name)
            .ok_or_else(not_found);
    }
    let stack_name = stack.ok_or_else(|| {
        validation("StackName must be specified if ChangeSetName is not specified as an ARN.")
    })?;
    let stack = stacks::named(inner, ctx, stack_name)?;
    store::change_sets(inner.store()?, ctx, Some(&stack.id))?
        .into_iter()
        .find(|c| c.name == name)
        .ok_or_else(not_found)
}

pub(crate) async fn create_change_set(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack_name = input.str("StackName").unwrap_or_default();
    let name = input.str("ChangeSetName").unwrap_or_default();
    let kind = input.str("ChangeSetType").unwrap_or("UPDATE");
    if kind == "IMPORT" {
        return Err(validation("Roto does not support IMPORT change sets"));
    }
    let existing = store::find_stack(inner.store()?, ctx, stack_name)?;
    let stack = match (kind, existing) {
        ("CREATE", Some(s)) if s.status != "REVIEW_IN_PROGRESS" => {
            return Err(AwsError::new("AlreadyExistsException", format!("Stack [{stack_name}] already exists and cannot be created again with the changeSet [{name}].")).with_status(400));
        }
        ("CREATE", Some(s)) => s,
        ("CREATE", None) => review_stack(inner, ctx, stack_name, input)?,
        (_, Some(s)) if s.status != "REVIEW_IN_PROGRESS" => s,
        _ => return Err(validation(format!("Stack [{stack_name}] does not exist"))),
    };
    let cs_list = store::change_sets(inner.store()?, ctx, Some(&stack.id))?;
    if cs_list.iter().any(|c| c.name == name) {
        return Err(AwsError::new(
            "AlreadyExistsException",
            format!("ChangeSet {name} already exists"),
        )
        .with_status(400));
    }
    let body = if input.bool("UsePreviousTemplate") == Some(true) {
        stack.body.clone()
    } else {
        template_text(inner, ctx, input).await?
    };
    let doc = prepare(&body)?;
    let values = settle(inner, ctx, &doc, input, &stack.meta.parameters, &stack.name).await?;
    let mut meta = stacks::meta(input, doc, values);
    meta.rollback = super::watchdog::parse(input)?;
    if input.get("Tags").is_none() {
        meta.tags = stack.meta.tags.clone();
    }
    let changes = changes(inner, &stack, &meta.processed);
    let unchanged = kind == "UPDATE"
        && changes.as_array().is_some_and(Vec::is_empty)
        && meta.parameters == stack.meta.parameters;
    let id = format!(
        "arn:aws:cloudformation:{}:{}:changeSet/{name}/{}",
        ctx.region,
        ctx.account,
        crate::ids::uuid()
    );
    let row = ChangeSetRow {
        id: id.clone(),
        name: name.to_string(),
        stack_id: stack.id.clone(),
        kind: kind.to_string(),
        status: if unchanged { "FAILED" } else { "CREATE_COMPLETE" }.into(),
        execution: if unchanged { "UNAVAILABLE" } else { "AVAILABLE" }.into(),
        reason: unchanged.then(|| "The submitted information didn't contain changes. Submit different information to create a change set.".to_string()),
        created: now_millis(),
        body,
        meta: store::Meta { description: input.str("Description").map(str::to_string).or(meta.description.clone()), ..meta },
        changes,
    };
    store::put_change_set(inner.store()?, ctx, &row)?;
    Ok(Value::map().with("Id", id).with("StackId", stack.id))
}

/// The stack a CREATE change set makes, waiting in REVIEW_IN_PROGRESS with the event that
/// says so (clients such as `sam deploy` read the newest event before executing).
fn review_stack(inner: &Inner, ctx: &Context, name: &str, input: &Value) -> AwsResult<Stack> {
    let stack = Stack {
        id: stacks::stack_id(ctx, name),
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        name: name.to_string(),
        status: "REVIEW_IN_PROGRESS".into(),
        reason: Some("User Initiated".into()),
        created: now_millis(),
        updated: None,
        deleted: None,
        body: String::new(),
        meta: stacks::meta(input, Json::Null, Vec::new()),
    };
    store::put_stack(inner.store()?, &stack)?;
    let event = EventRow {
        event_id: roto_core::dispatch::new_request_id(),
        logical_id: stack.name.clone(),
        physical_id: Some(stack.id.clone()),
        kind: "AWS::CloudFormation::Stack".into(),
        status: stack.status.clone(),
        reason: stack.reason.clone(),
        at: stack.created,
        props: None,
        token: None,
    };
    store::add_event(inner.store()?, &stack.id, &event)?;
    Ok(stack)
}

/// The changes `doc` makes to the stack's resources, as DescribeChangeSet lists them.
fn changes(inner: &Inner, stack: &Stack, doc: &Json) -> Json {
    let state = deploy::state_of(inner, &stack.id);
    let old = section(&stack.meta.processed, "Resources");
    let new = section(doc, "Resources");
    let mut out = Vec::new();
    for (logical, resource) in new {
        let kind = resource["Type"].as_str().unwrap_or_default();
        let physical = state.get(logical).and_then(|r| r.physical_id.clone());
        let change = match old.get(logical) {
            None => json!({"Action": "Add", "LogicalResourceId": logical, "ResourceType": kind}),
            Some(before) if before == resource => continue,
            Some(before) => {
                let replaced = before["Type"] != resource["Type"]
                    || provider(kind).is_none_or(|p| {
                        p.update.is_none()
                            || p.replaces.iter().any(|m| {
                                before["Properties"].get(*m) != resource["Properties"].get(*m)
                            })
                    });
                let scope: Vec<&str> = [
                    "Properties",
                    "Metadata",
                    "DependsOn",
                    "DeletionPolicy",
                    "UpdateReplacePolicy",
                ]
                .into_iter()
                .filter(|k| before.get(*k) != resource.get(*k))
                .collect();
                json!({"Action": "Modify", "LogicalResourceId": logical, "PhysicalResourceId": physical,
                       "ResourceType": kind, "Replacement": if replaced { "True" } else { "False" }, "Scope": scope})
            }
        };
        out.push(json!({"Type": "Resource", "ResourceChange": change}));
    }
    for (logical, before) in old.iter().filter(|(l, _)| !new.contains_key(*l)) {
        let physical = state.get(logical).and_then(|r| r.physical_id.clone());
        out.push(json!({"Type": "Resource", "ResourceChange": {"Action": "Remove", "LogicalResourceId": logical,
            "PhysicalResourceId": physical, "ResourceType": before["Type"]}}));
    }
    Json::Array(out)
}

pub(crate) fn describe_change_set(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let cs = find(
        inner,
        ctx,
        input.str("ChangeSetName").unwrap_or_default(),
        input.str("StackName"),
    )?;
    let stack = stacks::named(inner, ctx, &cs.stack_id)?;
    let m = &cs.meta;
    let parameters = Value::List(m.parameters.iter().map(|p| p.describe()).collect());
    let tags: Vec<Value> = m
        .tags
        .iter()
        .map(|(k, v)| {
            Value::map()
                .with("Key", k.as_str())
                .with("Value", v.as_str())
        })
        .collect();
    let capabilities = Value::List(
        m.capabilities
            .iter()
            .map(|c| Value::from(c.as_str()))
            .collect(),
    );
    Ok(Value::map()
        .with("ChangeSetName", cs.name.as_str())
        .with("ChangeSetId", cs.id.as_str())
        .with("StackId", stack.id.as_str())
        .with("StackName", stack.name.as_str())
        .with_opt("Description", m.description.as_deref())
        .with("Parameters", parameters)
        .with("CreationTime", Value::Timestamp(cs.created))
        .with("ExecutionStatus", cs.execution.as_str())
        .with("Status", cs.status.as_str())
        .with_opt("StatusReason", cs.reason.as_deref())
        .with("NotificationARNs", Value::List(Vec::new()))
        .with("Capabilities", capabilities)
        .with("Tags", Value::List(tags))
        .with("Changes", Value::from_json(&cs.changes))
        .with("IncludeNestedStacks", false))
}

pub(crate) fn execute_change_set(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let mut cs = find(
        inner,
        ctx,
        input.str("ChangeSetName").unwrap_or_default(),
        input.str("StackName"),
    )?;
    if cs.execution != "AVAILABLE" {
        return Err(AwsError::new(
            "InvalidChangeSetStatusException",
            format!(
                "ChangeSet [{}] cannot be executed in its current status of [{}]",
                cs.id, cs.status
            ),
        )
        .with_status(400));
    }
    let old = stacks::named(inner, ctx, &cs.stack_id)?;
    stacks::repeated(&old, "ExecuteChangeSet", input)?;
    let mut new = old.clone();
    new.body = cs.body.clone();
    new.meta = store::Meta {
        outputs: old.meta.outputs.clone(),
        termination_protection: old.meta.termination_protection,
        change_set_id: Some(cs.id.clone()),
        policy: old.meta.policy.clone(),
        rollback: cs.meta.rollback.clone().or(old.meta.rollback.clone()),
        requests: old.meta.requests.clone(),
        ..cs.meta.clone()
    };
    stacks::record(&mut new.meta, "ExecuteChangeSet", input);
    if cs.kind == "CREATE" {
        new.status = "CREATE_IN_PROGRESS".into();
        store::put_stack(inner.store()?, &new)?;
        let created = new.clone();
        spawn(inner, ctx, &new, input, |job| {
            deploy::run_create(job, created)
        })?;
    } else {
        begin_update(inner, ctx, old, new, None, input)?;
    }
    for mut other in store::change_sets(inner.store()?, ctx, Some(&cs.stack_id))? {
        if other.id != cs.id {
            other.execution = "OBSOLETE".into();
            store::put_change_set(inner.store()?, ctx, &other)?;
        }
    }
    cs.execution = "EXECUTE_COMPLETE".into();
    store::put_change_set(inner.store()?, ctx, &cs)?;
    Ok(Value::map())
}

pub(crate) fn delete_change_set(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let cs = find(
        inner,
        ctx,
        input.str("ChangeSetName").unwrap_or_default(),
        input.str("StackName"),
    )?;
    if cs.execution == "EXECUTE_IN_PROGRESS" {
        return Err(AwsError::new(
            "InvalidChangeSetStatusException",
            format!(
                "ChangeSet [{}] cannot be deleted in its current status of [EXECUTE_IN_PROGRESS]",
                cs.id
            ),
        )
        .with_status(400));
    }
    store::remove_change_set(inner.store()?, &cs.id)?;
    Ok(Value::map())
}

pub(crate) fn list_change_sets(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let stack = stacks::named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    let items: Vec<Value> = store::change_sets(inner.store()?, ctx, Some(&stack.id))?
        .into_iter()
        .map(|cs| {
            Value::map()
                .with("StackId", stack.id.as_str())
                .with("StackName", stack.name.as_str())
                .with("ChangeSetId", cs.id)
                .with("ChangeSetName", cs.name)
                .with("ExecutionStatus", cs.execution)
                .with("Status", cs.status)
                .with_opt("StatusReason", cs.reason)
                .with("CreationTime", Value::Timestamp(cs.created))
                .with_opt("Description", cs.meta.description)
                .with("IncludeNestedStacks", false)
        })
        .collect();
    Ok(Value::map().with("Summaries", Value::List(items)))
}
