//! Stack refactors: resources moved between stacks (or renamed within one) without being
//! replaced.
//!
//! A refactor (kind `refactor`) keeps the new templates of its stacks and its resource
//! mappings; its actions are the moves those mappings name. Executing it gives each stack
//! its new template and moves each mapped resource's record (its physical resource,
//! properties and attributes) to its destination stack and logical id, so later updates
//! and deletions of either stack treat the resource as the destination's. A destination
//! stack that does not exist yet is not created: Roto refuses such a refactor when it
//! runs.

use std::sync::Arc;

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::families::{page, scope};
use super::stacksets::now_seconds;
use super::{store, validation, Inner, SPEC};
use crate::documents::{document, shaped};
use crate::ids;

const REFACTOR: &str = "refactor";

fn load(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Json> {
    let id = input.str("StackRefactorId").unwrap_or_default();
    inner
        .documents
        .get(scope(ctx, REFACTOR), id)?
        .ok_or_else(|| {
            AwsError::new(
                "StackRefactorNotFoundException",
                format!("Stack refactor {id} does not exist"),
            )
        })
}

pub(crate) async fn create_stack_refactor(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let given = document(input);
    let creation = input.bool("EnableStackCreation").unwrap_or(false);
    let mut definitions = Vec::new();
    let mut stack_ids = Vec::new();
    for definition in input
        .get("StackDefinitions")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let name = definition.str("StackName").unwrap_or_default();
        let body = super::stacks::template_text(inner, ctx, definition).await?;
        super::stacks::prepare(&body)?;
        match store::find_stack(inner.store()?, ctx, name)?.filter(|s| s.deleted.is_none()) {
            Some(stack) => stack_ids.push(json!(stack.id)),
            None if creation => {}
            None => return Err(super::no_stack(name)),
        }
        definitions.push(json!({"StackName": name, "TemplateBody": body}));
    }
    if definitions.is_empty() {
        return Err(validation("StackDefinitions must name at least one stack"));
    }
    let mut actions = Vec::new();
    for mapping in given["ResourceMappings"].as_array().into_iter().flatten() {
        actions.push(move_action(inner, ctx, mapping)?);
    }
    let id = ids::uuid();
    let doc = json!({
        "StackRefactorId": id,
        "Description": given.get("Description"),
        "StackIds": stack_ids,
        "Status": "CREATE_COMPLETE",
        "ExecutionStatus": "AVAILABLE",
        "Definitions": definitions,
        "Mappings": given["ResourceMappings"],
        "Actions": actions,
        "Created": now_seconds(),
    });
    inner.documents.put(scope(ctx, REFACTOR), &id, &doc)?;
    Ok(Value::map().with("StackRefactorId", id))
}

/// The action a resource mapping stands for: the move of the source's physical resource.
fn move_action(inner: &Inner, ctx: &Context, mapping: &Json) -> AwsResult<Json> {
    let source = &mapping["Source"];
    let stack_name = source["StackName"].as_str().unwrap_or_default();
    let logical = source["LogicalResourceId"].as_str().unwrap_or_default();
    let stack = super::stacks::named(inner, ctx, stack_name)?;
    let resource = store::resources(inner.store()?, &stack.id)?
        .into_iter()
        .find(|r| r.logical_id == logical)
        .ok_or_else(|| {
            validation(format!(
                "Resource {logical} does not exist in stack {stack_name}"
            ))
        })?;
    Ok(json!({
        "Action": "MOVE",
        "Entity": "RESOURCE",
        "PhysicalResourceId": resource.physical_id,
        "Description": format!(
            "Move {logical} from {stack_name} to {}/{}",
            mapping["Destination"]["StackName"].as_str().unwrap_or_default(),
            mapping["Destination"]["LogicalResourceId"].as_str().unwrap_or_default()
        ),
        "Detection": "MANUAL",
        "TagResources": [],
        "UntagResources": [],
        "ResourceMapping": mapping,
    }))
}

pub(crate) fn describe_stack_refactor(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    shaped(
        SPEC.model(),
        "DescribeStackRefactorOutput",
        &load(inner, ctx, input)?,
    )
}

pub(crate) fn list_stack_refactors(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let wanted: Vec<&str> = input
        .get("ExecutionStatusFilter")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    let summaries = inner
        .documents
        .list(scope(ctx, REFACTOR))?
        .iter()
        .filter(|r| wanted.is_empty() || wanted.iter().any(|w| r["ExecutionStatus"] == *w))
        .map(|r| shaped(SPEC.model(), "StackRefactorSummary", r))
        .collect::<AwsResult<Vec<_>>>()?;
    page(summaries, input, "StackRefactorSummaries")
}

pub(crate) fn list_stack_refactor_actions(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let doc = load(inner, ctx, input)?;
    let actions = doc["Actions"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|a| shaped(SPEC.model(), "StackRefactorAction", a))
        .collect::<AwsResult<Vec<_>>>()?;
    page(actions, input, "StackRefactorActions")
}

pub(crate) fn execute_stack_refactor(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let mut doc = load(inner, ctx, input)?;
    if doc["ExecutionStatus"] != "AVAILABLE" {
        return Err(validation(format!(
            "Stack refactor {} cannot be executed in its {} state",
            doc["StackRefactorId"].as_str().unwrap_or_default(),
            doc["ExecutionStatus"].as_str().unwrap_or_default()
        )));
    }
    let (status, reason) = match apply(inner, ctx, &doc) {
        Ok(()) => ("EXECUTE_COMPLETE", "Refactor complete".to_string()),
        Err(e) => ("EXECUTE_FAILED", e.message),
    };
    doc["ExecutionStatus"] = status.into();
    doc["ExecutionStatusReason"] = reason.into();
    let id = doc["StackRefactorId"]
        .as_str()
        .unwrap_or_default()
        .to_string();
    inner.documents.put(scope(ctx, REFACTOR), &id, &doc)?;
    Ok(Value::map())
}

/// The refactor carried out: the stacks' new templates, then the moves. Every stack and
/// resource is checked before anything changes.
fn apply(inner: &Inner, ctx: &Context, doc: &Json) -> AwsResult<()> {
    let store = inner.store()?;
    let mut stacks = Vec::new();
    for definition in doc["Definitions"].as_array().into_iter().flatten() {
        let name = definition["StackName"].as_str().unwrap_or_default();
        let mut stack = super::stacks::named(inner, ctx, name)?;
        let body = definition["TemplateBody"].as_str().unwrap_or_default();
        stack.meta.processed = super::stacks::prepare(body)?;
        stack.body = body.to_string();
        stacks.push(stack);
    }
    let mut moves = Vec::new();
    for mapping in doc["Mappings"].as_array().into_iter().flatten() {
        let at = |end: &str| {
            (
                mapping[end]["StackName"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
                mapping[end]["LogicalResourceId"]
                    .as_str()
                    .unwrap_or_default()
                    .to_string(),
            )
        };
        let (source, logical) = at("Source");
        let (destination, new_logical) = at("Destination");
        let from = super::stacks::named(inner, ctx, &source)?;
        let to = super::stacks::named(inner, ctx, &destination)?;
        let row = store::resources(store, &from.id)?
            .into_iter()
            .find(|r| r.logical_id == logical)
            .ok_or_else(|| {
                validation(format!(
                    "Resource {logical} does not exist in stack {source}"
                ))
            })?;
        moves.push((from.id, to.id, row, new_logical));
    }
    for stack in &stacks {
        store::put_stack(store, stack)?;
    }
    for (from, to, mut row, new_logical) in moves {
        store::remove_resource(store, &from, &row.logical_id)?;
        row.logical_id = new_logical;
        store::put_resource(store, &to, &row)?;
    }
    Ok(())
}
