//! DynamoDB's side of `--enforce-iam`: a call's table ARN (from `TableName` or
//! `TableArn`; `*` for calls over many tables).

use roto_core::access::{self, Access};
use roto_core::{Context, Value};

/// What a DynamoDB call asks.
pub(super) fn access_of(ctx: &Context, operation: &str, input: &Value) -> Access {
    let mut out = access::generic(&super::SPEC, operation, input);
    if let Some(name) = input.str("TableName").filter(|n| !n.starts_with("arn:")) {
        out.resource = access::arn(ctx, "dynamodb", &format!("table/{name}"));
    } else if let Some(arn) = input.str("TableName") {
        out.resource = arn.to_string();
    }
    out
}
