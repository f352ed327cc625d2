//! `ClientToken` idempotency for ExportTableToPointInTime and ImportTable: a request that
//! repeats an earlier one's token within eight hours answers that request's description,
//! and one that reuses the token with other parameters is the operation's conflict error.

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
        serde_json::from_str(&description)
            .map(Some)
            .map_err(|_| AwsError::internal(format!("a stored {table} row is unreadable")))
    }
}
