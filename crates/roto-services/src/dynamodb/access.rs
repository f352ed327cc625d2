//! DynamoDB's side of `--enforce-iam`: a call's table ARN (from `TableName`, `TableArn` or
//! `ResourceArn`; `*` for calls over many tables), the table's resource policy and its
//! tags (`aws:ResourceTag/<key>`).

use roto_core::access::{self, Access, ResourcePolicy};
use roto_core::store::Cached;
use roto_core::{AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;

use super::DynamoDb;

impl DynamoDb {
    /// What a DynamoDB call asks.
    pub(super) fn access_of(&self, ctx: &Context, op: &str, input: &Value) -> AwsResult<Access> {
        let mut out = access::generic(&super::SPEC, op, input);
        match input.str("TableName") {
            Some(arn) if arn.starts_with("arn:") => out.resource = arn.to_string(),
            Some(name) => out.resource = access::arn(ctx, "dynamodb", &format!("table/{name}")),
            None => {}
        }
        let prefix = format!("arn:aws:dynamodb:{}:{}:table/", ctx.region, ctx.account);
        let Some(table) = out
            .resource
            .strip_prefix(&prefix)
            .and_then(|rest| rest.split('/').next())
        else {
            return Ok(out);
        };
        let table_arn = format!("{prefix}{table}");
        let (tags, policy) = self.env.store.read(|c| {
            let tags: Option<String> = c
                .query_row_cached(
                    "SELECT tags FROM ddb_tables WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![ctx.account, ctx.region, table],
                    |r| r.get(0),
                )
                .optional()?;
            let policy: Option<String> = c
                .query_row_cached(
                    "SELECT policy FROM ddb_resource_policies
                     WHERE account = ?1 AND region = ?2 AND arn = ?3",
                    rusqlite::params![ctx.account, ctx.region, table_arn],
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
            owner: ctx.account.clone(),
            document: policy,
            ..ResourcePolicy::default()
        });
        Ok(out)
    }
}
