//! The rows exports (`ddb_exports`) and imports (`ddb_imports`) are kept in, which share one
//! layout: each task's description as JSON by ARN, and `ClientToken` idempotency: a request
//! that repeats an earlier one's token within eight hours answers that request's
//! description, and one that reuses the token with other parameters is the operation's
//! conflict error.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;

use super::DynamoDb;

/// How long a `ClientToken` names its request.
const CLIENT_TOKEN_MILLIS: i64 = 8 * 60 * 60 * 1000;

/// The request's members that make two requests with one `ClientToken` the same.
pub(super) fn request_key(input: &Value) -> String {
    let mut request = input.to_json();
    if let Json::Object(members) = &mut request {
        members.remove("ClientToken");
    }
    request.to_string()
}

impl DynamoDb {
    /// The description of the task `arn` in `table`, if there is one.
    pub(super) fn stored_description(
        &self,
        ctx: &Context,
        table: &'static str,
        arn: &str,
    ) -> AwsResult<Option<Json>> {
        let stored: Option<String> = self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT description FROM {table} WHERE account = ?1 AND region = ?2 AND arn = ?3"
            ))?
            .query_row(rusqlite::params![ctx.account, ctx.region, arn], |r| {
                r.get(0)
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        stored.map(|s| parse_description(table, &s)).transpose()
    }

    /// Replaces the description of the task `arn` in `table`.
    pub(super) fn save_description(
        &self,
        ctx: &Context,
        table: &'static str,
        arn: &str,
        description: &Json,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE {table} SET description = ?4 WHERE account = ?1 AND region = ?2 AND arn = ?3"
                ),
                rusqlite::params![ctx.account, ctx.region, arn, description.to_string()],
            )
            .map(drop)
            .map_err(AwsError::from)
        })
    }

    /// The stored description of the earlier request in `table` (`ddb_exports`,
    /// `ddb_imports`) that `input`'s `ClientToken` names, if any; `conflict` when that
    /// request had other parameters.
    pub(super) fn replayed_request(
        &self,
        ctx: &Context,
        table: &'static str,
        input: &Value,
        now: i64,
        conflict: impl FnOnce() -> AwsError,
    ) -> AwsResult<Option<Json>> {
        let Some(token) = input.str("ClientToken") else {
            return Ok(None);
        };
        let earlier: Option<(String, String)> = self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT request, description FROM {table}
                 WHERE account = ?1 AND region = ?2 AND client_token = ?3 AND created > ?4
                 ORDER BY created DESC LIMIT 1"
            ))?
            .query_row(
                rusqlite::params![ctx.account, ctx.region, token, now - CLIENT_TOKEN_MILLIS],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )
            .optional()
            .map_err(AwsError::from)
        })?;
        let Some((earlier_request, description)) = earlier else {
            return Ok(None);
        };
        if earlier_request != request_key(input) {
            return Err(conflict());
        }
        parse_description(table, &description).map(Some)
    }
}

fn parse_description(table: &str, text: &str) -> AwsResult<Json> {
    serde_json::from_str(text)
        .map_err(|_| AwsError::internal(format!("a stored {table} row is unreadable")))
}
