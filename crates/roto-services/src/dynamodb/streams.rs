//! DynamoDB Streams: each table's stream of item changes.
//!
//! Enabling a stream on a table (CreateTable or UpdateTable) opens a new stream, named by
//! the moment it was enabled (`.../stream/2026-12-02T17:00:00.123`); disabling it, or
//! deleting the table, closes it. A closed stream stays readable, `DISABLED`, for 24 hours,
//! as in AWS, and a re-enabled table gets a new stream beside it. `ddb_streams` holds one
//! row per stream, whatever became of its table.
//!
//! Every item change reaches [`capture`] from the one writer of items
//! ([`rows`](super::rows)), in the write's own transaction, so a record exists exactly when
//! the change does: none for a write that changes nothing or fails its condition. Records
//! live in `ddb_stream_records` under a sequence number that only grows, and each is kept
//! 24 hours of the server clock; [`trim`] drops the expired ones of a stream, oldest first,
//! and remembers the last one dropped so readers can tell trimmed data from no data.

use roto_core::timestamp::{self, TimestampFormat};
use roto_core::{AwsResult, Context};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value as Json};

use super::attr::{item_json, item_size, Item};
use super::tables::{table_arn, Table};

/// How long a stream record, and a disabled stream, is kept.
pub const RETENTION_MILLIS: i64 = 24 * 60 * 60 * 1000;

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
    first_seq INTEGER NOT NULL,
    trimmed_through INTEGER NOT NULL DEFAULT 0,
    disabled INTEGER,
    PRIMARY KEY (account, region, arn)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_stream_records (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    stream TEXT NOT NULL,
    created INTEGER NOT NULL,
    record TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS ddb_stream_records_by_stream ON ddb_stream_records (stream, seq);
";

/// Who made a change, as its stream record tells.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Origin {
    /// A request to the table.
    Request,
    /// Time to Live deleting an expired item.
    TimeToLive,
    /// A change replicated from another member of the table's global table.
    Replica,
}

/// The last sequence number given to any record (0 before the first).
pub fn last_seq(conn: &Connection) -> AwsResult<i64> {
    Ok(conn
        .prepare_cached("SELECT seq FROM sqlite_sequence WHERE name = 'ddb_stream_records'")?
        .query_row([], |r| r.get(0))
        .optional()?
        .unwrap_or(0))
}

/// Whether a stream with this ARN exists (enabled, or disabled and still kept).
pub fn exists(conn: &Connection, ctx: &Context, arn: &str) -> AwsResult<bool> {
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
         (account, region, arn, table_name, label, view_type, key_schema, created, first_seq)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        arn,
        table,
        label,
        view_type,
        description["KeySchema"].to_string(),
        now,
        last_seq(conn)? + 1
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

/// An item's primary key attributes.
pub fn keys_of(table: &Table, item: &Item) -> Item {
    table
        .schema
        .attrs()
        .filter_map(|a| item.get(&a.name).map(|v| (a.name.clone(), v.clone())))
        .collect()
}

/// The record's `eventName` for a change: `old` absent is an INSERT, `new` absent a REMOVE.
pub fn event_name(old: Option<&Item>, new: Option<&Item>) -> &'static str {
    match (old, new) {
        (None, _) => "INSERT",
        (Some(_), Some(_)) => "MODIFY",
        (Some(_), None) => "REMOVE",
    }
}

/// Records an item change on the table's enabled stream, if it has one: `old` absent is
/// an INSERT, `new` absent a REMOVE, both a MODIFY.
pub fn capture(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    old: Option<&Item>,
    new: Option<&Item>,
    origin: Origin,
    now: i64,
) -> AwsResult<()> {
    let Some((arn, view_type)) = enabled(&table.description) else {
        return Ok(());
    };
    let Some(item) = new.or(old) else {
        return Ok(());
    };
    let keys = keys_of(table, item);
    let event = event_name(old, new);
    let new_image = new.filter(|_| matches!(view_type, "NEW_IMAGE" | "NEW_AND_OLD_IMAGES"));
    let old_image = old.filter(|_| matches!(view_type, "OLD_IMAGE" | "NEW_AND_OLD_IMAGES"));
    let size: usize = [Some(&keys), new_image, old_image]
        .into_iter()
        .flatten()
        .map(item_size)
        .sum();
    let mut record = json!({
        "eventID": format!("{:032x}", fastrand::u128(..)),
        "eventName": event,
        "Keys": item_json(&keys),
        "SizeBytes": size,
    });
    if let Some(image) = new_image {
        record["NewImage"] = item_json(image);
    }
    if let Some(image) = old_image {
        record["OldImage"] = item_json(image);
    }
    if origin == Origin::TimeToLive {
        record["TimeToLive"] = true.into();
    }
    conn.prepare_cached(
        "INSERT INTO ddb_stream_records (stream, created, record) VALUES (?1, ?2, ?3)",
    )?
    .execute(rusqlite::params![arn, now, record.to_string()])?;
    trim(conn, ctx, arn, now)
}

/// Drops a stream's records older than the retention, oldest first (records of a stream
/// are in clock order), and remembers the last sequence number dropped. When nothing has
/// expired this is one index seek.
pub fn trim(conn: &Connection, ctx: &Context, arn: &str, now: i64) -> AwsResult<()> {
    const BATCH: i64 = 256;
    let cutoff = now - RETENTION_MILLIS;
    loop {
        let oldest: Option<i64> = conn
            .prepare_cached(
                "SELECT created FROM ddb_stream_records WHERE stream = ?1 ORDER BY seq LIMIT 1",
            )?
            .query_row([arn], |r| r.get(0))
            .optional()?;
        if oldest.is_none_or(|created| created >= cutoff) {
            return Ok(());
        }
        let last: i64 = conn
            .prepare_cached(
                "SELECT MAX(seq) FROM (SELECT seq, created FROM ddb_stream_records
                 WHERE stream = ?1 ORDER BY seq LIMIT ?2) WHERE created < ?3",
            )?
            .query_row(rusqlite::params![arn, BATCH, cutoff], |r| r.get(0))?;
        conn.prepare_cached("DELETE FROM ddb_stream_records WHERE stream = ?1 AND seq <= ?2")?
            .execute(rusqlite::params![arn, last])?;
        conn.prepare_cached(
            "UPDATE ddb_streams SET trimmed_through = ?4
             WHERE account = ?1 AND region = ?2 AND arn = ?3",
        )?
        .execute(rusqlite::params![ctx.account, ctx.region, arn, last])?;
    }
}
