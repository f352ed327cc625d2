//! KMS's side of `--enforce-iam`: a call's key ARN (from `KeyId`: an id, an ARN or an
//! alias; else the key a ciphertext names), the key's policy, its tags and what the key's
//! grants give the caller (`grants.rs`). A key policy that names the account's root
//! delegates to IAM policies, as AWS reads the default key policy. A key named by the ARN
//! of another account's key or alias is that account's: the call acts there (KMS's
//! cross-account use), and is decided as a cross-account call, its key policy or a grant
//! to the caller allowing it beside the caller's identity policies.

use roto_core::access::{self, Access, Principal, ResourcePolicy};
use roto_core::{AwsResult, Context, Value};

use super::{key_arn, Kms};

impl Kms {
    /// What a KMS call asks.
    pub(super) fn access_of(
        &self,
        ctx: &Context,
        who: &Principal,
        op: &str,
        input: &Value,
    ) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        let ctx = &*access::in_owner_account(ctx, input.str("KeyId"));
        if op == "RetireGrant" {
            if let Some((key_id, grant)) = self.retire_access(ctx, who, input)? {
                out.resource = key_arn(&ctx.region, &ctx.account, &key_id);
                out.policy = Some(ResourcePolicy {
                    owner: ctx.account.clone(),
                    document: self.policy_of(ctx, &key_id),
                    grant,
                    ..ResourcePolicy::default()
                });
            }
            return Ok(out);
        }
        // Decrypt and ReEncrypt may name no key: the ciphertext does.
        let from_blob = input
            .get("CiphertextBlob")
            .and_then(Value::as_blob)
            .and_then(super::ops::parse_blob)
            .map(|(id, _, _)| id);
        let Some(key_id) = input.str("KeyId").or(from_blob) else {
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
        out.resource_tags = self.tags_of(ctx, &key)?;
        let grant = self.grant_access(ctx, &key.id, who, op, input)?;
        out.resource = key.arn.clone();
        out.policy = Some(ResourcePolicy {
            owner: key.account.clone(),
            document: self.policy_of(ctx, &key.id),
            grant,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }

    /// A key's policy document.
    fn policy_of(&self, ctx: &Context, key_id: &str) -> Option<String> {
        self.get_key_policy(ctx, &Value::map().with("KeyId", key_id))
            .ok()
            .and_then(|p| p.str("Policy").map(str::to_string))
    }
}
