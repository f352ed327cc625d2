//! Replication between the members of a global table (version 2019.11.21): every item
//! change of a member reaches the others through the event bus, and the last writer wins.
//!
//! The one writer of items calls [`capture`] in the write's own transaction: for a table
//! with replicas it stamps the item's change time in `ddb_replica_clock` and appends the
//! change (the keys and the new image, none for a deletion) to `ddb_replica_outbox` once per
//! other member, so a change travels exactly when it happened. After the request (and
//! after each Time to Live sweep) [`relay`] moves the [`outbox`], in order, onto the bus as
//! deliveries to DynamoDB in each member's region, one lane per member table, so a member
//! receives one region's changes in the order they were made. [`deliver`] applies a change
//! unless the item there changed later (at the same millisecond, the region that sorts
//! last wins, so every member settles on the same item), through the same writer (the
//! member's stream, indexes, counters and Kinesis destination follow) without replicating
//! it again. Each delivery is a `dynamodb:Replication` entry of the trace, which is how a
//! test waits for a write to reach another region.

use roto_core::events::{DeliveryError, Event};
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value as Json};

use super::attr::{item_from_json, item_json, parse_stored_item, Item};
use super::key::EncodedKey;
use super::rows::{read_item, write};
use super::streams::{keys_of, Origin};
use super::tables::{load_table, table_arn, Table};
use super::{outbox, replicas};

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_replica_clock (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    written INTEGER NOT NULL,
    origin TEXT NOT NULL,
    PRIMARY KEY (account, region, table_name, hash_key, range_key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_replica_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    target_region TEXT NOT NULL,
    written INTEGER NOT NULL,
    change TEXT NOT NULL
);
";

/// The event kind of a change on its way to another member.
pub const KIND: &str = "dynamodb:Replication";

/// How many times the bus tries to apply a change.
const ATTEMPTS: u32 = 4;

/// Records when (and where) an item last changed.
fn stamp(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    key: &EncodedKey,
    written: i64,
    origin: &str,
) -> AwsResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_replica_clock
         (account, region, table_name, hash_key, range_key, written, origin)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        key.0,
        key.1,
        written,
        origin
    ])?;
    Ok(())
}

/// When (and where) an item last changed, if it changed since its table became global.
fn last_change(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    key: &EncodedKey,
) -> AwsResult<Option<(i64, String)>> {
    Ok(conn
        .prepare_cached(
            "SELECT written, origin FROM ddb_replica_clock WHERE account = ?1 AND region = ?2
             AND table_name = ?3 AND hash_key = ?4 AND range_key = ?5",
        )?
        .query_row(
            rusqlite::params![ctx.account, ctx.region, table, key.0, key.1],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?)
}

/// Forgets a deleted table's change times.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_replica_clock WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

/// Queues an item change of a global table for every other member. A table without
/// replicas costs one look at its description.
#[allow(clippy::too_many_arguments)]
pub fn capture(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    new: Option<&Item>,
    origin: Origin,
    now: i64,
) -> AwsResult<()> {
    if table.description.get("Replicas").is_none() || origin == Origin::Replica {
        return Ok(());
    }
    let Some(item) = new.or(old) else {
        return Ok(());
    };
    stamp(conn, ctx, &table.name, key, now, &ctx.region)?;
    let mut change = json!({"Keys": item_json(&keys_of(table, item))});
    if let Some(image) = new {
        change["NewImage"] = item_json(image);
    }
    let change = change.to_string();
    for target in replicas::regions(&table.description) {
        conn.prepare_cached(
            "INSERT INTO ddb_replica_outbox
             (account, region, table_name, target_region, written, change)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        )?
        .execute(rusqlite::params![
            ctx.account,
            ctx.region,
            table.name,
            target,
            now,
            change
        ])?;
    }
    Ok(())
}

/// Copies a new replica's items from its source, stamped as the source's changes at `now`.
pub fn copy_items(
    tx: &Connection,
    from: &Context,
    to: &Context,
    name: &str,
    now: i64,
) -> AwsResult<()> {
    let target = load_table(tx, to, name)?
        .ok_or_else(|| AwsError::internal("a new replica's table is missing"))?;
    let items: Vec<(EncodedKey, String)> = tx
        .prepare_cached(
            "SELECT hash_key, range_key, item FROM ddb_items
             WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        )?
        .query_map(rusqlite::params![from.account, from.region, name], |r| {
            Ok(((r.get(0)?, r.get(1)?), r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    for (key, stored) in items {
        let item = parse_stored_item(&stored)?;
        write(tx, to, &target, &key, None, Some(&item), Origin::Replica)?;
        stamp(tx, to, name, &key, now, &from.region)?;
    }
    Ok(())
}

/// Moves the outbox onto the event bus, oldest first.
pub fn relay(env: &Env) -> AwsResult<()> {
    outbox::relay(
        env,
        "ddb_replica_outbox",
        "account, region, table_name, target_region, written, change",
        |r| {
            Ok((
                r.get::<_, String>(1)?,
                r.get::<_, String>(2)?,
                r.get::<_, String>(3)?,
                r.get::<_, String>(4)?,
                r.get::<_, i64>(5)?,
                r.get::<_, String>(6)?,
            ))
        },
        |(account, region, table, target_region, written, change)| {
            let source = Context::internal(&account, &region);
            let target = Context::internal(&account, &target_region);
            env.bus.publish(Event {
                kind: KIND.to_string(),
                source_service: "dynamodb".to_string(),
                source: table_arn(&source, &table),
                target_service: "dynamodb".to_string(),
                target: table_arn(&target, &table),
                account,
                region: target_region,
                payload: Value::map()
                    .with("TableName", table)
                    .with("SourceRegion", region)
                    .with("Written", written)
                    .with("Change", change),
                max_attempts: ATTEMPTS,
            });
        },
    )
}

/// Applies one replicated change in the event's region. A change for a table that is no
/// longer a member of the source's group is dropped, as AWS stops replicating to it.
pub fn deliver(env: &Env, event: &Event) -> Result<(), DeliveryError> {
    let p = &event.payload;
    let (Some(name), Some(source), Some(written), Some(change)) = (
        p.str("TableName"),
        p.str("SourceRegion"),
        p.int("Written"),
        p.str("Change"),
    ) else {
        return Err(DeliveryError::permanent("a malformed replicated change"));
    };
    let change: Json = serde_json::from_str(change)
        .map_err(|_| DeliveryError::permanent("a malformed replicated change"))?;
    let ctx = Context::internal(&event.account, &event.region);
    env.store
        .transaction(|tx| apply(tx, &ctx, name, (source, written), &change))
        .map_err(|e| format!("{}: {}", e.code, e.message).into())
}

/// Writes a change made in `source` at `written`, unless the item changed later here.
fn apply(
    tx: &Connection,
    ctx: &Context,
    name: &str,
    (source, written): (&str, i64),
    change: &Json,
) -> AwsResult<()> {
    let Some(table) = load_table(tx, ctx, name)? else {
        return Ok(());
    };
    if !replicas::regions(&table.description).contains(&source) {
        return Ok(());
    }
    let unreadable = || AwsError::internal("a replicated change is unreadable");
    let keys = item_from_json(&change["Keys"]).ok_or_else(unreadable)?;
    let key = table.schema.encode_item_key(&keys)?;
    if let Some((at, origin)) = last_change(tx, ctx, name, &key)? {
        if (at, origin.as_str()) >= (written, source) {
            return Ok(());
        }
    }
    let new = match change.get("NewImage") {
        Some(image) => Some(item_from_json(image).ok_or_else(unreadable)?),
        None => None,
    };
    let old = read_item(tx, ctx, name, &key)?;
    write(
        tx,
        ctx,
        &table,
        &key,
        old.as_ref(),
        new.as_ref(),
        Origin::Replica,
    )?;
    stamp(tx, ctx, name, &key, written, source)
}
