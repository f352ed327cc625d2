//! Resource-based policies: PutResourcePolicy, GetResourcePolicy and DeleteResourcePolicy
//! on tables and streams, and CreateTable's `ResourcePolicy`.
//!
//! A policy is kept verbatim in `ddb_resource_policies` under its resource's ARN with a
//! revision id, the epoch milliseconds of its last change as AWS's are (so later revisions
//! compare greater); putting the same document again changes nothing and answers the same
//! revision, as in AWS. `ExpectedRevisionId` (or `NO_POLICY`) makes a put or delete
//! conditional, refused with AWS's `PolicyNotFoundException` messages. Documents are checked
//! the way DynamoDB's front end checks them (JSON, a version, statements with an effect, a
//! principal, DynamoDB actions and resources, 20 KB at most), in its words; they are never
//! evaluated, as Roto enforces no permissions, so `ConfirmRemoveSelfResourceAccess` is
//! accepted and changes nothing. A table's policies, its streams' included, go with it.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value as Json;

use super::streams;
use super::tables::{load_table, table_arn, table_not_found};
use super::DynamoDb;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_resource_policies (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    table_name TEXT NOT NULL,
    policy TEXT NOT NULL,
    revision TEXT NOT NULL,
    PRIMARY KEY (account, region, arn)
) WITHOUT ROWID;
";

/// The largest policy document, white space included.
const MAX_POLICY_BYTES: usize = 20 * 1024;
/// The `ExpectedRevisionId` that asks for no policy to be present.
const NO_POLICY: &str = "NO_POLICY";

/// A resource a policy attaches to.
struct Resource {
    arn: String,
    table: String,
    /// Whether the resource is one of the table's streams.
    stream: bool,
}

impl Resource {
    /// How the `PolicyNotFoundException` messages name the resource.
    fn shown(&self) -> String {
        if self.stream {
            format!("stream {}", self.arn)
        } else {
            format!("table {}", self.table)
        }
    }
}

fn invalid_arn(arn: &str) -> AwsError {
    AwsError::validation(format!("Invalid ResourceArn provided as input {arn}"))
}

/// The resource a `ResourceArn` names: a table, or a table's stream, in the caller's account
/// and region; checked to exist.
fn resource(conn: &Connection, ctx: &Context, arn: &str) -> AwsResult<Resource> {
    let rest = arn
        .strip_prefix("arn:aws:dynamodb:")
        .ok_or_else(|| invalid_arn(arn))?;
    let mut parts = rest.splitn(3, ':');
    let (Some(region), Some(account), Some(path)) = (parts.next(), parts.next(), parts.next())
    else {
        return Err(invalid_arn(arn));
    };
    let path = path
        .strip_prefix("table/")
        .ok_or_else(|| invalid_arn(arn))?;
    let (table, stream) = match path.split_once('/') {
        Some((table, label)) if label.starts_with("stream/") => (table, true),
        Some(_) => return Err(invalid_arn(arn)),
        None => (path, false),
    };
    let here = region == ctx.region && account == ctx.account;
    if !here || load_table(conn, ctx, table)?.is_none() {
        return Err(table_not_found(table));
    }
    if stream && !streams::exists(conn, ctx, arn)? {
        return Err(AwsError::new(
            "ResourceNotFoundException",
            format!("Requested resource not found: Stream: {arn} not found"),
        )
        .with_status(400));
    }
    Ok(Resource {
        arn: arn.to_string(),
        table: table.to_string(),
        stream,
    })
}

/// The policy attached to an ARN: (document, revision).
fn attached(conn: &Connection, ctx: &Context, arn: &str) -> AwsResult<Option<(String, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT policy, revision FROM ddb_resource_policies
             WHERE account = ?1 AND region = ?2 AND arn = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, arn], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?)
}

fn policy_not_found(detail: impl AsRef<str>) -> AwsError {
    AwsError::new(
        "PolicyNotFoundException",
        format!(
            "Resource-based policy not found for the provided ResourceArn: {}",
            detail.as_ref()
        ),
    )
    .with_status(400)
}

/// Checks `ExpectedRevisionId` against the policy in place.
fn check_expected(
    resource: &Resource,
    current: Option<&str>,
    expected: Option<&str>,
) -> AwsResult<()> {
    match (expected, current) {
        (None, _) | (Some(NO_POLICY), None) => Ok(()),
        (Some(NO_POLICY), Some(current)) => Err(policy_not_found(format!(
            "Requested policy update expecting none to be present for {}, but a policy exists with revision id {current}.",
            resource.shown()
        ))),
        (Some(expected), Some(current)) if expected == current => Ok(()),
        (Some(expected), Some(current)) => Err(policy_not_found(format!(
            "Requested update for policy with revision id {expected}, but the policy associated to target {} has revision id {current}.",
            resource.shown()
        ))),
        (Some(_), None) => Err(policy_not_found(&resource.arn)),
    }
}

fn invalid_policy(detail: &str) -> AwsError {
    AwsError::validation(format!(
        "One or more parameter values were invalid: Invalid policy document: {detail}"
    ))
}

/// The members of a policy element that may be one value or a list of them.
fn one_or_many(value: &Json) -> Vec<&Json> {
    match value {
        Json::Array(items) => items.iter().collect(),
        other => vec![other],
    }
}

/// Whether a principal element names principals DynamoDB accepts.
fn valid_principal(principal: &Json) -> bool {
    let aws_principal = |p: &Json| {
        p.as_str().is_some_and(|p| {
            p == "*"
                || (p.len() == 12 && p.bytes().all(|b| b.is_ascii_digit()))
                || p.starts_with("arn:aws:iam::")
                || p.starts_with("arn:aws:sts::")
        })
    };
    match principal {
        Json::String(s) => s == "*",
        Json::Object(kinds) if !kinds.is_empty() => kinds.iter().all(|(kind, values)| {
            let values = one_or_many(values);
            !values.is_empty()
                && match kind.as_str() {
                    "AWS" => values.into_iter().all(aws_principal),
                    "Service" | "Federated" | "CanonicalUser" => {
                        values.into_iter().all(|v| v.as_str().is_some())
                    }
                    _ => false,
                }
        }),
        _ => false,
    }
}

/// Checks a policy document as DynamoDB does before attaching it.
pub fn check_policy(document: &str) -> AwsResult<()> {
    if document.len() > MAX_POLICY_BYTES {
        return Err(AwsError::new(
            "LimitExceededException",
            format!(
                "Policy document size exceeds the maximum allowed size of {MAX_POLICY_BYTES} bytes"
            ),
        )
        .with_status(400));
    }
    let Ok(Json::Object(policy)) = serde_json::from_str::<Json>(document) else {
        return Err(invalid_policy("This policy contains invalid Json"));
    };
    if let Some(version) = policy.get("Version") {
        if !matches!(version.as_str(), Some("2012-10-17" | "2008-10-17")) {
            return Err(invalid_policy("The policy document has an invalid Version"));
        }
    }
    let statements = match policy.get("Statement") {
        Some(Json::Array(list)) if !list.is_empty() => list.iter().collect(),
        Some(statement @ Json::Object(_)) => vec![statement],
        _ => return Err(invalid_policy("Policy document must contain a Statement")),
    };
    for statement in statements {
        let Json::Object(statement) = statement else {
            return Err(invalid_policy("This policy contains invalid Json"));
        };
        if !matches!(
            statement.get("Effect").and_then(Json::as_str),
            Some("Allow" | "Deny")
        ) {
            return Err(invalid_policy(
                "Policy statement must contain a valid Effect",
            ));
        }
        match statement
            .get("Principal")
            .or_else(|| statement.get("NotPrincipal"))
        {
            Some(principal) if valid_principal(principal) => {}
            Some(_) => return Err(AwsError::validation(
                "One or more parameter values were invalid: Invalid principal in policy document.",
            )),
            None => {
                return Err(invalid_policy(
                    "Policy statement must contain a Principal or NotPrincipal",
                ))
            }
        }
        let Some(actions) = statement
            .get("Action")
            .or_else(|| statement.get("NotAction"))
        else {
            return Err(invalid_policy("Policy statement must contain actions"));
        };
        let invalid: Vec<String> = one_or_many(actions)
            .into_iter()
            .filter(|action| {
                !action.as_str().is_some_and(|a| {
                    a == "*"
                        || a.get(..9)
                            .is_some_and(|p| p.eq_ignore_ascii_case("dynamodb:"))
                            && a.len() > 9
                })
            })
            .map(Json::to_string)
            .collect();
        if !invalid.is_empty() {
            return Err(invalid_policy(&format!(
                "The following action names are invalid: {}",
                invalid.join(", ")
            )));
        }
        if statement.get("Resource").is_none() && statement.get("NotResource").is_none() {
            return Err(invalid_policy("Policy statement must contain resources"));
        }
    }
    Ok(())
}

/// The next revision id of a resource whose current one is `current`: now, in epoch millis,
/// and always greater.
fn next_revision(current: Option<&str>) -> String {
    let now = now_millis();
    let after = current
        .and_then(|c| c.parse::<i64>().ok())
        .map_or(now, |c| c + 1);
    now.max(after).to_string()
}

/// Attaches a policy to a resource, replacing any; returns the revision.
fn attach(
    conn: &Connection,
    ctx: &Context,
    arn: &str,
    table: &str,
    policy: &str,
    current: Option<&str>,
) -> AwsResult<String> {
    let revision = next_revision(current);
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_resource_policies
         (account, region, arn, table_name, policy, revision) VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        arn,
        table,
        policy,
        revision
    ])?;
    Ok(revision)
}

/// Attaches CreateTable's `ResourcePolicy` to the new table (checked beforehand).
pub fn attach_to_new_table(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    policy: &str,
) -> AwsResult<()> {
    attach(conn, ctx, &table_arn(ctx, table), table, policy, None).map(|_| ())
}

/// Removes the policies of a deleted table and its streams.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_resource_policies WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

fn same_document(a: &str, b: &str) -> bool {
    a == b
        || matches!(
            (serde_json::from_str::<Json>(a), serde_json::from_str::<Json>(b)),
            (Ok(a), Ok(b)) if a == b
        )
}

impl DynamoDb {
    pub(super) fn put_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let policy = input.str("Policy").unwrap_or_default();
        let expected = input.str("ExpectedRevisionId");
        let revision = self.env.store.transaction(|tx| {
            let resource = resource(tx, ctx, arn)?;
            check_policy(policy)?;
            let current = attached(tx, ctx, arn)?;
            check_expected(&resource, current.as_ref().map(|c| c.1.as_str()), expected)?;
            match current {
                Some((document, revision)) if same_document(&document, policy) => Ok(revision),
                current => attach(
                    tx,
                    ctx,
                    arn,
                    &resource.table,
                    policy,
                    current.as_ref().map(|c| c.1.as_str()),
                ),
            }
        })?;
        Ok(Value::map().with("RevisionId", revision))
    }

    pub(super) fn get_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let (policy, revision) = self.env.store.with(|c| {
            resource(c, ctx, arn)?;
            attached(c, ctx, arn)?.ok_or_else(|| policy_not_found(arn))
        })?;
        Ok(Value::map()
            .with("Policy", policy)
            .with("RevisionId", revision))
    }

    pub(super) fn delete_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let expected = input.str("ExpectedRevisionId");
        let revision = self.env.store.transaction(|tx| {
            let resource = resource(tx, ctx, arn)?;
            let (_, revision) = attached(tx, ctx, arn)?.ok_or_else(|| policy_not_found(arn))?;
            check_expected(&resource, Some(&revision), expected)?;
            tx.execute_cached(
                "DELETE FROM ddb_resource_policies WHERE account = ?1 AND region = ?2 AND arn = ?3",
                rusqlite::params![ctx.account, ctx.region, arn],
            )?;
            Ok::<_, AwsError>(revision)
        })?;
        Ok(Value::map().with("RevisionId", revision))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn statement(extra: &str) -> String {
        format!(r#"{{"Version": "2012-10-17", "Statement": [{{{extra}}}]}}"#)
    }

    #[test]
    fn documents_are_checked_in_dynamodbs_words() {
        let good = r#""Effect": "Allow", "Principal": {"AWS": "123456789012"}, "Action": ["dynamodb:GetItem"], "Resource": "*""#;
        assert!(check_policy(&statement(good)).is_ok());
        let message = |doc: &str| check_policy(doc).unwrap_err().message;
        assert_eq!(
            message("{nope"),
            "One or more parameter values were invalid: Invalid policy document: This policy contains invalid Json"
        );
        assert_eq!(
            message(&statement(
                r#""Effect": "Allow", "Principal": {"AWS": "bob"}, "Action": "dynamodb:*", "Resource": "*""#
            )),
            "One or more parameter values were invalid: Invalid principal in policy document."
        );
        assert_eq!(
            message(&statement(
                r#""Effect": "Allow", "Principal": "*", "Action": ["s3:GetObject", "dynamodb:Query"], "Resource": "*""#
            )),
            "One or more parameter values were invalid: Invalid policy document: The following action names are invalid: \"s3:GetObject\""
        );
        assert!(message(&statement(
            r#""Effect": "Allow", "Action": "dynamodb:*", "Resource": "*""#
        ))
        .contains("Principal"));
        assert!(message(&statement(
            r#""Effect": "Maybe", "Principal": "*", "Action": "dynamodb:*", "Resource": "*""#
        ))
        .contains("Effect"));
        let huge = statement(&format!(
            "{good}, \"Sid\": \"{}\"",
            "x".repeat(MAX_POLICY_BYTES)
        ));
        assert_eq!(
            check_policy(&huge).unwrap_err().code,
            "LimitExceededException"
        );
    }

    #[test]
    fn revisions_only_grow() {
        let far_future = (now_millis() + 1_000_000).to_string();
        let next = next_revision(Some(&far_future));
        assert!(next.parse::<i64>().unwrap() > far_future.parse::<i64>().unwrap());
        assert!(next_revision(None).parse::<i64>().is_ok());
    }
}
