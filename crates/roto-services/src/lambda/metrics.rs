//! Lambda's metrics in `AWS/Lambda`, published as AWS publishes them, for the function
//! (dimension `FunctionName`) and for the account (no dimension): Invocations, Errors
//! (function errors and invocations that could not run), Duration in milliseconds,
//! Throttles, and ConcurrentExecutions (the invocations running as each one starts, read
//! with the Maximum statistic).

use roto_core::metrics::Datum;
use roto_core::{AwsResult, Context, Env};

use super::executor::Outcome;

const NAMESPACE: &str = "AWS/Lambda";

/// Publishes `value` of `name` for the function and for the account.
fn put(env: &Env, ctx: &Context, function: &str, name: &str, value: f64, unit: &str) {
    for dims in [&[("FunctionName", function)][..], &[]] {
        let datum = Datum::new(NAMESPACE, name, dims, value, unit);
        env.metrics.put(&ctx.account, &ctx.region, &datum);
    }
}

/// An invocation that ran (or failed to), with the concurrency when it started (the
/// function's, the account's).
pub(super) fn invoked(
    env: &Env,
    ctx: &Context,
    function: &str,
    result: &AwsResult<Outcome>,
    concurrency: (i64, i64),
) {
    let failed = result.as_ref().map_or(true, |o| o.function_error.is_some());
    put(env, ctx, function, "Invocations", 1.0, "Count");
    put(
        env,
        ctx,
        function,
        "Errors",
        f64::from(u8::from(failed)),
        "Count",
    );
    if let Ok(outcome) = result {
        put(
            env,
            ctx,
            function,
            "Duration",
            outcome.duration_ms,
            "Milliseconds",
        );
    }
    let running = [("FunctionName", function)];
    let datum = Datum::new(
        NAMESPACE,
        "ConcurrentExecutions",
        &running,
        concurrency.0 as f64,
        "Count",
    );
    env.metrics.put(&ctx.account, &ctx.region, &datum);
    let datum = Datum::new(
        NAMESPACE,
        "ConcurrentExecutions",
        &[],
        concurrency.1 as f64,
        "Count",
    );
    env.metrics.put(&ctx.account, &ctx.region, &datum);
}

/// An invocation refused beyond the function's reserved concurrency.
pub(super) fn throttled(env: &Env, ctx: &Context, function: &str) {
    put(env, ctx, function, "Throttles", 1.0, "Count");
}
