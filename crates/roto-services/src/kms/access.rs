//! KMS's side of `--enforce-iam`: a call's key ARN (from `KeyId`: an id, an ARN or an
//! alias) and the key's policy. A key policy that names the account's root delegates to
//! IAM policies, as AWS reads the default key policy. A key of another account, which KMS
//! cannot find from the caller's, is that account's, with no policy the caller could read.

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::{AwsResult, Context, Value};

use super::Kms;

impl Kms {
    /// What a KMS call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        let Some(key_id) = input.str("KeyId") else {
            return Ok(out);
        };
        let Ok(key) = self.find_key(ctx, key_id) else {
            if key_id.starts_with("arn:") {
                out.resource = key_id.to_string();
                out.policy = Some(ResourcePolicy {
                    owner: key_id.split(':').nth(4).unwrap_or_default().to_string(),
                    ..ResourcePolicy::default()
                });
            }
            return Ok(out);
        };
        let policy = self
            .get_key_policy(ctx, &Value::map().with("KeyId", key.id.as_str()))
            .ok()
            .and_then(|p| p.str("Policy").map(str::to_string));
        out.resource = key.arn.clone();
        out.policy = Some(ResourcePolicy {
            owner: key.account.clone(),
            document: policy,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
