//! Drift detection. Roto's resource providers create, update and delete, but none reads a
//! resource's live properties back, so there is nothing to compare a stack's template
//! with: a detection completes at once and reports every resource, and the stack, as
//! `NOT_CHECKED` (AWS's word for a resource whose type drift detection does not support),
//! never `IN_SYNC`. Detections are documents (kind `drift`) so that their status can be
//! read back by id.

use roto_core::{AwsResult, Context, Value};
use serde_json::json;

use super::families::{page, scope};
use super::stacksets::now_seconds;
use super::store::{self, ResourceRow, Stack};
use super::{no_stack, validation, Inner, SPEC};
use crate::documents::{shaped, Scope};
use crate::ids;

const NOT_CHECKED: &str = "NOT_CHECKED";

fn detections(ctx: &Context) -> Scope<'_> {
    scope(ctx, "drift")
}

fn live_stack(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Stack> {
    let name = input.str("StackName").unwrap_or_default();
    store::find_stack(inner.store()?, ctx, name)?
        .filter(|s| s.deleted.is_none())
        .ok_or_else(|| no_stack(name))
}

/// A resource's drift record: not checked.
fn drift_of(stack: &Stack, r: &ResourceRow) -> serde_json::Value {
    json!({
        "StackId": stack.id,
        "LogicalResourceId": r.logical_id,
        "PhysicalResourceId": r.physical_id,
        "ResourceType": r.kind,
        "StackResourceDriftStatus": NOT_CHECKED,
        "Timestamp": now_seconds(),
    })
}

pub(crate) fn detect_stack_drift(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let stack = live_stack(inner, ctx, input)?;
    let id = ids::uuid();
    let detection = json!({
        "StackId": stack.id,
        "StackDriftDetectionId": id,
        "StackDriftStatus": NOT_CHECKED,
        "DetectionStatus": "DETECTION_COMPLETE",
        "DriftedStackResourceCount": 0,
        "Timestamp": now_seconds(),
    });
    inner.documents.put(detections(ctx), &id, &detection)?;
    Ok(Value::map().with("StackDriftDetectionId", id))
}

pub(crate) fn describe_stack_drift_detection_status(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let id = input.str("StackDriftDetectionId").unwrap_or_default();
    let doc = inner
        .documents
        .get(detections(ctx), id)?
        .ok_or_else(|| validation(format!("Drift detection with id {id} does not exist")))?;
    shaped(
        SPEC.model(),
        "DescribeStackDriftDetectionStatusOutput",
        &doc,
    )
}

pub(crate) fn detect_stack_resource_drift(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = live_stack(inner, ctx, input)?;
    let logical = input.str("LogicalResourceId").unwrap_or_default();
    let resource = store::resource(inner.store()?, &stack, logical)?;
    let drift = shaped(
        SPEC.model(),
        "StackResourceDrift",
        &drift_of(&stack, &resource),
    )?;
    Ok(Value::map().with("StackResourceDrift", drift))
}

pub(crate) fn describe_stack_resource_drifts(
    inner: &Inner,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = live_stack(inner, ctx, input)?;
    let wanted: Vec<&str> = input
        .get("StackResourceDriftStatusFilters")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if !wanted.is_empty() && !wanted.contains(&NOT_CHECKED) {
        return Ok(Value::map().with("StackResourceDrifts", Vec::<Value>::new()));
    }
    let drifts = store::resources(inner.store()?, &stack.id)?
        .iter()
        .map(|r| shaped(SPEC.model(), "StackResourceDrift", &drift_of(&stack, r)))
        .collect::<AwsResult<Vec<_>>>()?;
    page(drifts, input, "StackResourceDrifts")
}
