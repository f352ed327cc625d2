//! `RollbackStack`: a stack whose creation failed with rollback disabled
//! (`CREATE_FAILED`) rolled back on request: the resources it created are deleted, by the
//! engine's own deletion, and the stack ends `ROLLBACK_COMPLETE` (or `ROLLBACK_FAILED`),
//! as after an automatic rollback. Roto's updates always roll back on failure, so no stack
//! is ever left `UPDATE_FAILED`; other states are refused as AWS refuses them.

use std::sync::Arc;

use roto_core::{AwsResult, Context, Value};
use serde_json::Value as Json;

use super::{store, validation, Inner};

const REASON: &str = "Rollback requested by user.";

pub(crate) fn rollback_stack(inner: &Arc<Inner>, ctx: &Context, input: &Value) -> AwsResult<Value> {
    let stack = super::stacks::named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    if stack.status != "CREATE_FAILED" {
        return Err(validation(format!(
            "Stack:{} is in {} state and can not be rolled back.",
            stack.id, stack.status
        )));
    }
    let store = inner.store()?;
    let rows = store::resources(store, &stack.id)?;
    store::set_status(store, &stack.id, "ROLLBACK_IN_PROGRESS", Some(REASON))?;
    super::stacks::spawn(inner, ctx, &stack, input, move |job| async move {
        job.status("ROLLBACK_IN_PROGRESS", Some(REASON));
        match job.delete(rows, &Json::Null, true).await {
            Ok(()) => job.status("ROLLBACK_COMPLETE", None),
            Err(e) => job.status("ROLLBACK_FAILED", Some(&e)),
        }
    })?;
    Ok(Value::map().with("StackId", stack.id))
}
