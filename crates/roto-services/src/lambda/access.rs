//! Lambda's side of `--enforce-iam`: a call's function ARN (from `FunctionName`: a name, a
//! partial or a full ARN; `Resource` for the tagging calls), the function's resource
//! policy, which `AddPermission` builds, and its tags (`aws:ResourceTag/<key>`).

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::{AwsResult, Context, Value};

use super::{split_function_name, Lambda};

impl Lambda {
    /// What a Lambda call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        let tagged = input
            .str("Resource")
            .filter(|arn| arn.contains(":function:"));
        let Some(name) = input.str("FunctionName").or(tagged) else {
            return Ok(out);
        };
        out.resource = match name.starts_with("arn:") {
            true => name.to_string(),
            false => access::arn(ctx, "lambda", &format!("function:{name}")),
        };
        let policy = self
            .get_policy(ctx, &Value::map().with("FunctionName", name))
            .ok()
            .and_then(|p| p.str("Policy").map(str::to_string));
        let (function, _) = split_function_name(name);
        if let Some(f) = self.function(ctx, &function, 0)? {
            out.resource_tags = f.tags.into_iter().collect();
        }
        out.policy = Some(ResourcePolicy {
            owner: out
                .resource
                .split(':')
                .nth(4)
                .unwrap_or_default()
                .to_string(),
            document: policy,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
