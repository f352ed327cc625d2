//! Step Functions' execution metrics in `AWS/States`, per state machine (dimension
//! `StateMachineArn`), as AWS publishes them: ExecutionsStarted as an execution begins;
//! ExecutionsSucceeded, ExecutionsFailed, ExecutionsTimedOut or ExecutionsAborted as it
//! closes, with ExecutionTime, the milliseconds from its start to its close.

use roto_core::metrics::Datum;
use roto_core::Env;

use super::executions::Execution;

const NAMESPACE: &str = "AWS/States";

fn put(env: &Env, e: &Execution, name: &str, value: f64, unit: &str) {
    // arn:aws:states:{region}:{account}:execution:...
    let mut parts = e.arn.split(':');
    let (Some(region), Some(account)) = (parts.nth(3), parts.next()) else {
        return;
    };
    let dims = [("StateMachineArn", e.machine_arn.as_str())];
    let datum = Datum::new(NAMESPACE, name, &dims, value, unit);
    env.metrics.put(account, region, &datum);
}

/// An execution that began.
pub(super) fn started(env: &Env, e: &Execution) {
    put(env, e, "ExecutionsStarted", 1.0, "Count");
}

/// An execution that closed with `status` at `stopped`.
pub(super) fn closed(env: &Env, e: &Execution, status: &str, stopped: i64) {
    let name = match status {
        "SUCCEEDED" => "ExecutionsSucceeded",
        "FAILED" => "ExecutionsFailed",
        "TIMED_OUT" => "ExecutionsTimedOut",
        "ABORTED" => "ExecutionsAborted",
        _ => return,
    };
    put(env, e, name, 1.0, "Count");
    let took = (stopped - e.started).max(0) as f64;
    put(env, e, "ExecutionTime", took, "Milliseconds");
}
