//! Control over an update once it runs: `CancelUpdateStack` cancels an update in progress
//! (the resources it is working on fail with "Resource update cancelled" and the stack
//! rolls back to its previous template, `UPDATE_ROLLBACK_IN_PROGRESS` to
//! `UPDATE_ROLLBACK_COMPLETE`), and `ContinueUpdateRollback` resumes a rollback that failed
//! (`UPDATE_ROLLBACK_FAILED`), skipping the resources it names or, with `ForceRollback`,
//! every resource whose rollback failed.

use std::collections::BTreeSet;
use std::sync::Arc;

use roto_core::{AwsResult, Context, Value};

use super::deploy::{self, state_of, UPDATE_CANCELLED};
use super::stacks::{job, named, start};
use super::{store, validation, Inner};

pub(crate) fn cancel_update_stack(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    if stack.status != "UPDATE_IN_PROGRESS" || !inner.updates.cancel(&stack.id) {
        return Err(validation(
            "CancelUpdateStack cannot be called from current stack status",
        ));
    }
    Ok(Value::map())
}

pub(crate) fn continue_update_rollback(
    inner: &Arc<Inner>,
    ctx: &Context,
    input: &Value,
) -> AwsResult<Value> {
    let stack = named(inner, ctx, input.str("StackName").unwrap_or_default())?;
    if stack.status != "UPDATE_ROLLBACK_FAILED" {
        return Err(validation(
            "ContinueUpdateRollback cannot be called from current stack status",
        ));
    }
    let named_skips = input.strings("ResourcesToSkip");
    let force = input.bool("ForceRollback") == Some(true);
    if force && !named_skips.is_empty() {
        return Err(validation(
            "ForceRollback and ResourcesToSkip are mutually exclusive",
        ));
    }
    let store = inner.store()?;
    let skippable: BTreeSet<String> = store::resources(store, &stack.id)?
        .into_iter()
        .filter(|r| r.status == "UPDATE_FAILED" && r.reason.as_deref() != Some(UPDATE_CANCELLED))
        .map(|r| r.logical_id)
        .collect();
    let skip = if force {
        skippable
    } else {
        let refused: Vec<&str> = named_skips
            .iter()
            .filter(|l| !skippable.contains(*l))
            .map(String::as_str)
            .collect();
        if !refused.is_empty() {
            return Err(validation(format!(
                "Only resources in UPDATE_FAILED state because a rollback failed can be skipped: [{}]",
                refused.join(", ")
            )));
        }
        named_skips.into_iter().collect()
    };
    store::set_status(store, &stack.id, "UPDATE_ROLLBACK_IN_PROGRESS", None)?;
    let mut resumed = job(inner, ctx, &stack, input)?;
    resumed.skip = skip;
    start(resumed, |job| async move {
        job.status("UPDATE_ROLLBACK_IN_PROGRESS", None);
        let state = state_of(&job.inner, &job.stack_id);
        deploy::roll_back(&job, &stack, state, Vec::new()).await
    });
    Ok(Value::map())
}
