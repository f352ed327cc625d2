//! Resource policies (PutResourcePolicy, DescribeResourcePolicies, DeleteResourcePolicy):
//! the policies that let other AWS services put log events into the account.
//!
//! Two scopes, as AWS has them: account-scoped policies, named, at most 10 per account and
//! region; and a log group's own policy (`resourceArn`), one per group, guarded by a
//! revision id that an update must name (`expectedRevisionId`; none for the first). They are
//! stored and described, not enforced.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{
    document, from_document, group_arn, invalid, limit_exceeded, name_of_arn, name_of_token,
    page_of, Logs, DEFAULT_PAGE,
};

/// How many account-scoped resource policies one account may have in a region.
const MAX_ACCOUNT_POLICIES: i64 = 10;

/// Where a policy applies: the account, or one log group (by its ARN).
enum Scope<'a> {
    Account,
    Resource(&'a str),
}

impl Scope<'_> {
    fn name(&self) -> &'static str {
        match self {
            Scope::Account => "ACCOUNT",
            Scope::Resource(_) => "RESOURCE",
        }
    }
}

/// The scope a request names, and the policy's key within it (its name, or the ARN).
fn scope_of(input: &Value) -> AwsResult<(Scope<'_>, &str)> {
    match input.str("resourceArn") {
        Some(arn) => {
            let arn = arn.strip_suffix(":*").unwrap_or(arn);
            Ok((Scope::Resource(arn), arn))
        }
        None => input.str("policyName").map(|n| (Scope::Account, n)).ok_or_else(|| {
            invalid("1 validation error detected: Value null at 'policyName' failed to satisfy constraint: Member must not be null")
        }),
    }
}

/// The error for a revision id that is not the policy's current one.
fn revision_conflict() -> AwsError {
    AwsError::new(
        "OperationAbortedException",
        "Multiple concurrent requests to update the same resource were in conflict.",
    )
    .with_status(400)
}

impl Logs {
    fn resource_policy(&self, ctx: &Context, scope: &Scope, key: &str) -> AwsResult<Option<Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM logs_resource_policies
                 WHERE account = ?1 AND region = ?2 AND scope = ?3 AND key = ?4",
            )?
            .query_row(params![ctx.account, ctx.region, scope.name(), key], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map(|d| d.as_deref().map(from_document))
            .map_err(AwsError::from)
        })
    }

    /// Checks that a resource ARN names an existing log group of this account and region.
    fn policy_resource(&self, ctx: &Context, arn: &str) -> AwsResult<()> {
        let name = name_of_arn(arn).unwrap_or_default();
        if group_arn(ctx, name) != arn {
            return Err(invalid(format!("Invalid resource ARN: {arn}")));
        }
        self.existing_group(ctx, name).map(|_| ())
    }

    pub(super) fn put_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (scope, key) = scope_of(input)?;
        let Some(document_text) = input.str("policyDocument") else {
            return Err(invalid("1 validation error detected: Value null at 'policyDocument' failed to satisfy constraint: Member must not be null"));
        };
        if serde_json::from_str::<serde_json::Value>(document_text).map_or(true, |d| !d.is_object())
        {
            return Err(invalid(
                "Policy document is not a valid JSON policy document.",
            ));
        }
        let existing = self.resource_policy(ctx, &scope, key)?;
        let mut policy = Value::map()
            .with("policyDocument", document_text)
            .with("lastUpdatedTime", self.now())
            .with("policyScope", scope.name())
            .with_opt("policyName", input.str("policyName"));
        match scope {
            Scope::Account => {
                if existing.is_none() && self.account_policy_count(ctx)? >= MAX_ACCOUNT_POLICIES {
                    return Err(limit_exceeded());
                }
            }
            Scope::Resource(arn) => {
                self.policy_resource(ctx, arn)?;
                let current = existing.as_ref().and_then(|p| p.str("revisionId"));
                if current != input.str("expectedRevisionId") {
                    return Err(revision_conflict());
                }
                policy.insert("resourceArn", arn);
                policy.insert("revisionId", roto_core::dispatch::new_request_id());
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO logs_resource_policies (account, region, scope, key, config)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![ctx.account, ctx.region, scope.name(), key, document(&policy)],
            )
            .map_err(AwsError::from)
        })?;
        let revision = policy.str("revisionId").map(str::to_string);
        Ok(Value::map()
            .with("resourcePolicy", policy)
            .with_opt("revisionId", revision))
    }

    fn account_policy_count(&self, ctx: &Context) -> AwsResult<i64> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT COUNT(*) FROM logs_resource_policies
                 WHERE account = ?1 AND region = ?2 AND scope = 'ACCOUNT'",
            )?
            .query_row(params![ctx.account, ctx.region], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    pub(super) fn describe_resource_policies(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let resource = input.str("resourceArn");
        let scope = match (input.str("policyScope"), resource) {
            (Some("ACCOUNT"), Some(_)) => {
                return Err(invalid(
                    "resourceArn cannot be specified with policyScope ACCOUNT.",
                ))
            }
            (Some("RESOURCE"), _) | (None, Some(_)) => "RESOURCE",
            _ => "ACCOUNT",
        };
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT key, config FROM logs_resource_policies
                 WHERE account = ?1 AND region = ?2 AND scope = ?3 AND (?4 IS NULL OR key = ?4)
                   AND key > ?5
                 ORDER BY key LIMIT ?6",
            )?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    scope,
                    resource,
                    after.unwrap_or_default(),
                    (limit + 1) as i64
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Ok(page_of(rows, limit, "resourcePolicies"))
    }

    pub(super) fn delete_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (scope, key) = scope_of(input)?;
        let Some(existing) = self.resource_policy(ctx, &scope, key)? else {
            let message = match scope {
                Scope::Account => format!("Policy with name [{key}] does not exist"),
                Scope::Resource(arn) => format!("No resource policy found for resource [{arn}]"),
            };
            return Err(AwsError::new("ResourceNotFoundException", message).with_status(400));
        };
        if let Scope::Resource(_) = scope {
            if let Some(expected) = input.str("expectedRevisionId") {
                if existing.str("revisionId") != Some(expected) {
                    return Err(revision_conflict());
                }
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM logs_resource_policies WHERE account = ?1 AND region = ?2 AND scope = ?3 AND key = ?4",
                params![ctx.account, ctx.region, scope.name(), key],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }
}
