//! `DescribeEvents`: a stack's events grouped by the operation they belong to.
//!
//! The engine records a stack's events in order, each operation opening with an event for
//! the stack itself (`CREATE_IN_PROGRESS`, `UPDATE_IN_PROGRESS`, `DELETE_IN_PROGRESS`, or
//! a rollback's `ROLLBACK_IN_PROGRESS`/`UPDATE_ROLLBACK_IN_PROGRESS`). Each operation's id is
//! the id of the event that opened it, so it is stable across calls; its status is the
//! outcome its last stack event shows (an operation a rollback follows failed), its start
//! and end the times of its first and last events. A resource's failure is a
//! `PROVISIONING_ERROR`.

use roto_core::value::Value;
use roto_core::{AwsResult, Context};

use super::store::{self, EventRow};
use super::{validation, Inner};
use crate::paging;

/// The operation a stack event opens, if it opens one.
fn opens(status: &str) -> Option<&'static str> {
    match status {
        "CREATE_IN_PROGRESS" => Some("CREATE_STACK"),
        "UPDATE_IN_PROGRESS" => Some("UPDATE_STACK"),
        "DELETE_IN_PROGRESS" => Some("DELETE_STACK"),
        "ROLLBACK_IN_PROGRESS" | "UPDATE_ROLLBACK_IN_PROGRESS" => Some("ROLLBACK"),
        _ => None,
    }
}

/// What an operation's last stack event says of it.
fn outcome(kind: &str, last: &str) -> &'static str {
    if last.ends_with("_IN_PROGRESS") {
        "IN_PROGRESS"
    } else if last.ends_with("FAILED") || (kind != "ROLLBACK" && last.contains("ROLLBACK")) {
        "FAILED"
    } else {
        "SUCCEEDED"
    }
}

/// One operation: its id, type, and events (oldest first).
struct Operation {
    id: String,
    kind: &'static str,
    events: Vec<EventRow>,
}

fn operations(stack_name: &str, mut events: Vec<EventRow>) -> Vec<Operation> {
    events.reverse();
    let mut operations: Vec<Operation> = Vec::new();
    for event in events {
        let of_stack = event.logical_id == stack_name && event.kind == "AWS::CloudFormation::Stack";
        match (
            of_stack.then(|| opens(&event.status)).flatten(),
            operations.last_mut(),
        ) {
            (Some(kind), _) => operations.push(Operation {
                id: event.event_id.clone(),
                kind,
                events: vec![event],
            }),
            (None, Some(current)) => current.events.push(event),
            (None, None) => {}
        }
    }
    operations
}

pub(crate) fn describe_events(inner: &Inner, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let Some(name) = input.str("StackName") else {
        if let Some(change_set) = input.str("ChangeSetName") {
            super::changesets::find(inner, ctx, change_set, None)?;
            return Ok(Value::map().with("OperationEvents", Vec::<Value>::new()));
        }
        return Err(validation(
            "StackName, ChangeSetName or OperationId must be specified",
        ));
    };
    let stack = super::stacks::named(inner, ctx, name)?;
    let failed_only = input
        .get("Filters")
        .and_then(|f| f.bool("FailedEvents"))
        .unwrap_or(false);
    let wanted = input.str("OperationId");
    let mut items = Vec::new();
    let operations = operations(&stack.name, store::events(inner.store()?, &stack.id)?);
    for (n, op) in operations.iter().enumerate() {
        if wanted.is_some_and(|w| w != op.id) {
            continue;
        }
        let rolled_back = operations
            .get(n + 1)
            .is_some_and(|next| next.kind == "ROLLBACK");
        let stack_events: Vec<&EventRow> = op
            .events
            .iter()
            .filter(|e| e.logical_id == stack.name && e.kind == "AWS::CloudFormation::Stack")
            .collect();
        let last = stack_events.last().map_or("", |e| e.status.as_str());
        let status = if rolled_back {
            "FAILED"
        } else {
            outcome(op.kind, last)
        };
        let start = op.events.first().map_or(0, |e| e.at);
        let end = (status != "IN_PROGRESS").then(|| op.events.last().map_or(start, |e| e.at));
        for e in &op.events {
            let failed = e.status.ends_with("FAILED");
            if failed_only && !failed {
                continue;
            }
            let of_resource = e.logical_id != stack.name;
            items.push(
                Value::map()
                    .with("EventId", e.event_id.as_str())
                    .with("StackId", stack.id.as_str())
                    .with("OperationId", op.id.as_str())
                    .with("OperationType", op.kind)
                    .with("OperationStatus", status)
                    .with(
                        "EventType",
                        if failed && of_resource {
                            "PROVISIONING_ERROR"
                        } else {
                            "STACK_EVENT"
                        },
                    )
                    .with("LogicalResourceId", e.logical_id.as_str())
                    .with_opt("PhysicalResourceId", e.physical_id.as_deref())
                    .with("ResourceType", e.kind.as_str())
                    .with("Timestamp", Value::Timestamp(e.at))
                    .with("StartTime", Value::Timestamp(start))
                    .with_opt("EndTime", end.map(Value::Timestamp))
                    .with("ResourceStatus", e.status.as_str())
                    .with_opt("ResourceStatusReason", e.reason.as_deref())
                    .with_opt("ResourceProperties", e.props.as_deref()),
            );
        }
    }
    items.reverse();
    let (page, next) = paging::page(items, 100, input.str("NextToken"), || {
        validation("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("OperationEvents", page)
        .with_opt("NextToken", next))
}
