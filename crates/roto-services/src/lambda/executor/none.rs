//! The `none` executor: functions are stored, never run.

use roto_core::{AwsResult, BoxFuture};

use super::{unsupported, Executor, Invocation, Outcome, Spec};

/// Refuses every invocation.
pub struct NoExecutor;

impl Executor for NoExecutor {
    fn invoke<'a>(
        &'a self,
        spec: Spec,
        _invocation: Invocation,
    ) -> BoxFuture<'a, AwsResult<Outcome>> {
        Box::pin(async move {
            Err(unsupported(format!(
                "Cannot invoke {}: Roto was started with --lambda-executor none, which stores functions without running them",
                spec.name
            )))
        })
    }

    fn retire(&self, _prefix: &str) {}
}
