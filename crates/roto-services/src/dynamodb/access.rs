//! DynamoDB's side of `--enforce-iam`: a call's table ARN (from `TableName`, `TableArn` or
//! `ResourceArn`; `*` for calls over many tables), the table's resource policy and its
//! tags (`aws:ResourceTag/<key>`). A table named by the ARN of another account's table is
//! that account's: the call acts there, and is decided as a cross-account one (the caller's
//! identity policies and the table's resource policy must both allow it).

use roto_core::access::{self, Access, Principal, PrincipalKind, ResourcePolicy};
use roto_core::store::Cached;
use roto_core::{AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;

use super::DynamoDb;

/// The account, region and name of a table ARN (`arn:aws:dynamodb:<region>:<account>:
/// table/<name>`, or one of its indexes' or streams' ARNs).
pub(super) fn table_of(arn: &str) -> Option<(&str, &str, &str)> {
    let mut parts = arn.splitn(6, ':');
    let (Some("arn"), Some(_), Some("dynamodb")) = (parts.next(), parts.next(), parts.next())
    else {
        return None;
    };
    let (region, account) = (parts.next()?, parts.next()?);
    let table = parts.next()?.strip_prefix("table/")?.split('/').next()?;
    Some((account, region, table))
}

impl DynamoDb {
    /// What a DynamoDB call asks: the table's ARN (in its own account when named by ARN),
    /// its resource policy, and its tags, which only a policy's conditions read (so not
    /// for the root of the table's account when the table has no policy).
    pub(super) fn access_of(
        &self,
        ctx: &Context,
        who: &Principal,
        op: &str,
        input: &Value,
    ) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        match input.str("TableName") {
            Some(arn) if arn.starts_with("arn:") => out.resource = arn.to_string(),
            Some(name) => out.resource = access::arn(ctx, "dynamodb", &format!("table/{name}")),
            None => {}
        }
        let Some((account, region, table)) = table_of(&out.resource) else {
            return Ok(out);
        };
        let table_arn = format!("arn:aws:dynamodb:{region}:{account}:table/{table}");
        let owner_root = who.kind == PrincipalKind::Root && who.account == account;
        let (tags, policy) = self.env.store.read(|c| {
            let policy: Option<String> = c
                .query_row_cached(
                    "SELECT policy FROM ddb_resource_policies
                     WHERE account = ?1 AND region = ?2 AND arn = ?3",
                    rusqlite::params![account, region, table_arn],
                    |r| r.get(0),
                )
                .optional()?;
            if owner_root && policy.is_none() {
                return Ok((None, policy));
            }
            let tags: Option<String> = c
                .query_row_cached(
                    "SELECT tags FROM ddb_tables WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![account, region, table],
                    |r| r.get(0),
                )
                .optional()?;
            Ok::<_, rusqlite::Error>((tags, policy))
        })?;
        let tags: Vec<Json> = tags
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        out.resource_tags = access::tag_pairs(&Value::from_json(&Json::Array(tags)));
        out.policy = Some(ResourcePolicy {
            owner: account.to_string(),
            document: policy,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
