//! DynamoDB Streams: each table's stream of item changes.
//!
//! Enabling a stream on a table (CreateTable or UpdateTable) opens a new stream, named by
//! the moment it was enabled (`.../stream/2026-12-02T17:00:00.123`); disabling it, or
//! deleting the table, closes it. A closed stream stays readable, `DISABLED`, for 24 hours,
//! as in AWS, and a re-enabled table gets a new stream beside it. `ddb_streams` holds one
//! row per stream, whatever became of its table.

use roto_core::timestamp::{self, TimestampFormat};
use roto_core::{AwsResult, Context};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value as Json};

use super::tables::table_arn;

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_streams (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    table_name TEXT NOT NULL,
    label TEXT NOT NULL,
    view_type TEXT NOT NULL,
    key_schema TEXT NOT NULL,
    created INTEGER NOT NULL,
    disabled INTEGER,
    PRIMARY KEY (account, region, arn)
) WITHOUT ROWID;
";

fn exists(conn: &Connection, ctx: &Context, arn: &str) -> AwsResult<bool> {
    Ok(conn
        .prepare_cached(
            "SELECT 1 FROM ddb_streams WHERE account = ?1 AND region = ?2 AND arn = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, arn], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Opens a new stream on a table and records it in the table's description
/// (`StreamSpecification`, `LatestStreamArn`, `LatestStreamLabel`).
pub fn open(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    description: &mut Json,
    view_type: &str,
    now: i64,
) -> AwsResult<()> {
    // The label is the enabling moment; two streams of one table never share it.
    let mut at = now;
    let (arn, label) = loop {
        let label = timestamp::format(at, TimestampFormat::Iso8601)
            .trim_end_matches('Z')
            .to_string();
        let arn = format!("{}/stream/{label}", table_arn(ctx, table));
        if !exists(conn, ctx, &arn)? {
            break (arn, label);
        }
        at += 1;
    };
    conn.prepare_cached(
        "INSERT INTO ddb_streams
         (account, region, arn, table_name, label, view_type, key_schema, created)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        arn,
        table,
        label,
        view_type,
        description["KeySchema"].to_string(),
        now
    ])?;
    description["StreamSpecification"] =
        json!({"StreamEnabled": true, "StreamViewType": view_type});
    description["LatestStreamArn"] = arn.into();
    description["LatestStreamLabel"] = label.into();
    Ok(())
}

/// The enabled stream of a table with this description, if any: (ARN, view type).
pub fn enabled(description: &Json) -> Option<(&str, &str)> {
    let spec = &description["StreamSpecification"];
    if spec["StreamEnabled"].as_bool() != Some(true) {
        return None;
    }
    Some((
        description["LatestStreamArn"].as_str()?,
        spec["StreamViewType"].as_str()?,
    ))
}

/// Closes the table's enabled stream, if it has one; its records stay readable.
pub fn close(conn: &Connection, ctx: &Context, description: &Json, now: i64) -> AwsResult<()> {
    if let Some((arn, _)) = enabled(description) {
        conn.prepare_cached(
            "UPDATE ddb_streams SET disabled = ?4
             WHERE account = ?1 AND region = ?2 AND arn = ?3 AND disabled IS NULL",
        )?
        .execute(rusqlite::params![ctx.account, ctx.region, arn, now])?;
    }
    Ok(())
}
