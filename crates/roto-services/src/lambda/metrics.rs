//! Lambda's metrics in `AWS/Lambda`, published as AWS publishes them: for the account (no
//! dimension), for the function (`FunctionName`), for the version or alias the caller
//! named (`FunctionName` and `Resource`, `name:qualifier`), and, for an alias, for the
//! version it ran (with `ExecutedVersion`). Invocations, Errors (function errors and
//! invocations that could not run), Duration in milliseconds, Throttles, and
//! ConcurrentExecutions (the invocations running as each one starts, read with the
//! Maximum statistic).

use roto_core::metrics::Datum;
use roto_core::{AwsResult, Context, Env};

use super::executor::Outcome;
use super::functions::Function;

const NAMESPACE: &str = "AWS/Lambda";

/// The function invoked, as its metrics name it.
pub(super) struct Invoked<'a> {
    pub function: &'a Function,
    /// The ARN the caller invoked (with its qualifier, if it named one).
    pub arn: &'a str,
}

impl Invoked<'_> {
    /// Publishes `value` of `name` for the account, the function, the qualifier the caller
    /// named and, for an alias, the version it ran; `value` is the function's and the
    /// account's (they differ for ConcurrentExecutions).
    fn put(&self, env: &Env, ctx: &Context, name: &str, value: (f64, f64), unit: &str) {
        let function = self.function.name.as_str();
        let account = Datum::new(NAMESPACE, name, &[], value.1, unit);
        env.metrics.put(&ctx.account, &ctx.region, &account);
        let named = [("FunctionName", function)];
        let datum = Datum::new(NAMESPACE, name, &named, value.0, unit);
        env.metrics.put(&ctx.account, &ctx.region, &datum);
        let Some(qualifier) = qualifier_of(self.arn, function) else {
            return;
        };
        let resource = format!("{function}:{qualifier}");
        let executed = self.function.version_name();
        let on_resource = [("FunctionName", function), ("Resource", resource.as_str())];
        let datum = Datum::new(NAMESPACE, name, &on_resource, value.0, unit);
        env.metrics.put(&ctx.account, &ctx.region, &datum);
        if qualifier != executed {
            let ran = [
                ("ExecutedVersion", executed.as_str()),
                ("FunctionName", function),
                ("Resource", resource.as_str()),
            ];
            let datum = Datum::new(NAMESPACE, name, &ran, value.0, unit);
            env.metrics.put(&ctx.account, &ctx.region, &datum);
        }
    }
}

/// The alias or version an invoked ARN names after the function's name.
fn qualifier_of<'a>(arn: &'a str, function: &str) -> Option<&'a str> {
    let (_, after) = arn.split_once(":function:")?;
    after.strip_prefix(function)?.strip_prefix(':')
}

/// An invocation that ran (or failed to), with the concurrency when it started (the
/// function's, the account's).
pub(super) fn invoked(
    env: &Env,
    ctx: &Context,
    invoked: &Invoked<'_>,
    result: &AwsResult<Outcome>,
    concurrency: (i64, i64),
) {
    let failed = f64::from(u8::from(
        result.as_ref().map_or(true, |o| o.function_error.is_some()),
    ));
    invoked.put(env, ctx, "Invocations", (1.0, 1.0), "Count");
    invoked.put(env, ctx, "Errors", (failed, failed), "Count");
    if let Ok(outcome) = result {
        let ms = outcome.duration_ms;
        invoked.put(env, ctx, "Duration", (ms, ms), "Milliseconds");
    }
    let running = (concurrency.0 as f64, concurrency.1 as f64);
    invoked.put(env, ctx, "ConcurrentExecutions", running, "Count");
}

/// An invocation refused beyond the function's reserved concurrency.
pub(super) fn throttled(env: &Env, ctx: &Context, invoked: &Invoked<'_>) {
    invoked.put(env, ctx, "Throttles", (1.0, 1.0), "Count");
}

#[cfg(test)]
mod tests {
    use super::qualifier_of;

    #[test]
    fn the_qualifier_is_what_follows_the_function_name() {
        let arn = "arn:aws:lambda:us-east-1:000000000000:function:f";
        assert_eq!(qualifier_of(arn, "f"), None);
        assert_eq!(qualifier_of(&format!("{arn}:live"), "f"), Some("live"));
        assert_eq!(qualifier_of(&format!("{arn}:3"), "f"), Some("3"));
        assert_eq!(qualifier_of(&format!("{arn}x:3"), "f"), None);
    }
}
