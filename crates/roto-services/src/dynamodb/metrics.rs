//! DynamoDB's metrics in `AWS/DynamoDB`, as AWS publishes them: the read and write
//! capacity units each item operation consumes, per table (dimension `TableName`, Sum per
//! period), and UserErrors for the account (no dimension): requests answered with a 400
//! error other than a failed condition. Roto never throttles, so ThrottledRequests and the
//! throttle events are never published, as in AWS for a table that is not throttled.

use std::future::Future;

use roto_core::metrics::Datum;
use roto_core::{AwsResult, Context, Env};

const NAMESPACE: &str = "AWS/DynamoDB";

/// `units` of read (or write) capacity consumed on `table`.
pub(super) fn consumed(env: &Env, ctx: &Context, table: &str, units: f64, write: bool) {
    let name = if write {
        "ConsumedWriteCapacityUnits"
    } else {
        "ConsumedReadCapacityUnits"
    };
    let dims = [("TableName", table)];
    let datum = Datum::new(NAMESPACE, name, &dims, units, "Count");
    env.metrics.put(&ctx.account, &ctx.region, &datum);
}

/// Runs a request, publishing UserErrors when it answers a client error.
pub(super) async fn counted<T>(
    env: &Env,
    ctx: &Context,
    request: impl Future<Output = AwsResult<T>>,
) -> AwsResult<T> {
    let answer = request.await;
    if let Err(e) = &answer {
        let client = e.status.is_none_or(|s| (400..500).contains(&s));
        if client && e.code != "ConditionalCheckFailedException" && e.code != "InternalServerError"
        {
            let datum = Datum::new(NAMESPACE, "UserErrors", &[], 1.0, "Count");
            env.metrics.put(&ctx.account, &ctx.region, &datum);
        }
    }
    answer
}
