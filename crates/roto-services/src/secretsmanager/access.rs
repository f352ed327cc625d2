//! Secrets Manager's side of `--enforce-iam`: a call's secret ARN (from `SecretId`, a name
//! or an ARN), the secret's resource policy and its tags.

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::{AwsResult, Context, Value};

use super::SecretsManager;

impl SecretsManager {
    /// What a Secrets Manager call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        if input.str("SecretId").is_none() {
            return Ok(out);
        }
        let Ok(found) = self.get_resource_policy(ctx, input) else {
            return Ok(out);
        };
        out.resource = found.str("ARN").unwrap_or("*").to_string();
        if let Ok(described) = self.describe_secret(ctx, input) {
            out.resource_tags = described
                .get("Tags")
                .map(access::tag_pairs)
                .unwrap_or_default();
        }
        out.policy = Some(ResourcePolicy {
            owner: ctx.account.clone(),
            document: found.str("ResourcePolicy").map(str::to_string),
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
