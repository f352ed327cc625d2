//! Destinations (PutDestination, PutDestinationPolicy, DescribeDestinations,
//! DeleteDestination): the named endpoints a cross-account subscription filter sends to,
//! each an ARN of a target stream and the role that writes to it, with an access policy.
//! They are stored and described; nothing is delivered through them.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{
    document, from_document, invalid, like_prefix, name_of_token, page_of, Logs, DEFAULT_PAGE,
};

/// `ResourceNotFoundException` for a destination.
pub(super) fn no_destination() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified destination does not exist.",
    )
    .with_status(400)
}

/// Whether `arn` has the six parts of an ARN.
fn is_arn(arn: &str) -> bool {
    arn.starts_with("arn:") && arn.splitn(6, ':').count() == 6
}

impl Logs {
    /// The destination `name`, if it exists.
    fn destination(&self, ctx: &Context, name: &str) -> AwsResult<Option<Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM logs_destinations WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .query_row(params![ctx.account, ctx.region, name], |r| {
                r.get::<_, String>(0)
            })
            .optional()
            .map(|d| d.as_deref().map(from_document))
            .map_err(AwsError::from)
        })
    }

    fn store_destination(&self, ctx: &Context, destination: &Value) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO logs_destinations (account, region, name, config)
                 VALUES (?1, ?2, ?3, ?4)
                 ON CONFLICT (account, region, name) DO UPDATE SET config = excluded.config",
                params![
                    ctx.account,
                    ctx.region,
                    destination.str("destinationName").unwrap_or_default(),
                    document(destination)
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) fn put_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("destinationName").unwrap_or_default();
        for member in ["targetArn", "roleArn"] {
            let arn = input.str(member).unwrap_or_default();
            if !is_arn(arn) {
                return Err(invalid(format!("Invalid {member}: {arn}")));
            }
        }
        let existing = self.destination(ctx, name)?;
        let created = existing.is_none();
        let mut destination = existing.unwrap_or_else(|| {
            Value::map()
                .with("destinationName", name)
                .with(
                    "arn",
                    format!(
                        "arn:aws:logs:{}:{}:destination:{name}",
                        ctx.region, ctx.account
                    ),
                )
                .with("creationTime", self.now())
        });
        destination.insert("targetArn", input.str("targetArn").unwrap_or_default());
        destination.insert("roleArn", input.str("roleArn").unwrap_or_default());
        self.store_destination(ctx, &destination)?;
        if let Some(tags) = input.get("tags").filter(|_| created) {
            self.env.store.with(|c| {
                c.execute_cached(
                    "UPDATE logs_destinations SET tags = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                    params![ctx.account, ctx.region, name, document(tags)],
                )
                .map_err(AwsError::from)
            })?;
        }
        Ok(Value::map().with("destination", destination))
    }

    pub(super) fn put_destination_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("destinationName").unwrap_or_default();
        let policy = input.str("accessPolicy").unwrap_or_default();
        if serde_json::from_str::<serde_json::Value>(policy).map_or(true, |p| !p.is_object()) {
            return Err(invalid(
                "Access policy is not a valid JSON policy document.",
            ));
        }
        let mut destination = self.destination(ctx, name)?.ok_or_else(no_destination)?;
        destination.insert("accessPolicy", policy);
        self.store_destination(ctx, &destination)?;
        Ok(Value::map())
    }

    pub(super) fn describe_destinations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("DestinationNamePrefix").unwrap_or_default();
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT name, config FROM logs_destinations
                 WHERE account = ?1 AND region = ?2 AND name LIKE ?3 ESCAPE '\\' AND name > ?4
                 ORDER BY name LIMIT ?5",
            )?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    like_prefix(prefix),
                    after.unwrap_or_default(),
                    (limit + 1) as i64
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Ok(page_of(rows, limit, "destinations"))
    }

    pub(super) fn delete_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let n = self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM logs_destinations WHERE account = ?1 AND region = ?2 AND name = ?3",
                params![
                    ctx.account,
                    ctx.region,
                    input.str("destinationName").unwrap_or_default()
                ],
            )
            .map_err(AwsError::from)
        })?;
        if n == 0 {
            return Err(no_destination());
        }
        Ok(Value::map())
    }
}
