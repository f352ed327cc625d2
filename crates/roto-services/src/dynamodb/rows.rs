//! Item rows: reading one item, and writing one with everything that follows it.
//!
//! An item lives in `ddb_items` under its encoded primary key. Each secondary index the
//! item belongs to (it carries the index's key attributes) has a row in `ddb_index_items`
//! under the index key followed by the table key, pointing back at the item, so a Query
//! on an index is an ordered range seek like one on the table. [`store`] is the only
//! writer: it replaces or deletes the item, its index rows, its Time to Live expiry and
//! the table's live counters ([`counters`]), and records the change on the table's stream,
//! for its Kinesis streaming destination, for the other members of its global table and,
//! while point-in-time recovery is enabled, in its recovery log, in the caller's
//! transaction.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context};
use rusqlite::{Connection, OptionalExtension};

use super::attr::{item_size, item_to_json, parse_stored_item, Item};
use super::backups;
use super::counters;
use super::key::{EncodedKey, KeySchema};
use super::kinesis_destinations;
use super::replication;
use super::streams::{self, Origin};
use super::tables::Table;
use super::ttl;

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_index_items (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    index_name TEXT NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    table_hash BLOB NOT NULL,
    table_range BLOB NOT NULL,
    PRIMARY KEY (account, region, table_name, index_name, hash_key, range_key, table_hash, table_range)
) WITHOUT ROWID;
";

/// The item stored under `key`.
pub fn read_item(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    key: &EncodedKey,
) -> AwsResult<Option<Item>> {
    let stored: Option<String> = conn
        .prepare_cached(
            "SELECT item FROM ddb_items WHERE account = ?1 AND region = ?2 AND table_name = ?3
             AND hash_key = ?4 AND range_key = ?5",
        )?
        .query_row(
            rusqlite::params![ctx.account, ctx.region, table, key.0, key.1],
            |r| r.get(0),
        )
        .optional()?;
    stored.as_deref().map(parse_stored_item).transpose()
}

fn insert_index_row(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    index: &str,
    index_key: &EncodedKey,
    key: &EncodedKey,
) -> AwsResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_index_items
         (account, region, table_name, index_name, hash_key, range_key, table_hash, table_range)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        index,
        index_key.0,
        index_key.1,
        key.0,
        key.1
    ])?;
    Ok(())
}

/// Backfills a new index: a row for every item of the table that carries its key.
pub fn fill_index(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    index: &str,
    schema: &KeySchema,
) -> AwsResult<()> {
    let mut select = conn.prepare_cached(
        "SELECT hash_key, range_key, item FROM ddb_items
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?;
    let mut rows = select.query(rusqlite::params![ctx.account, ctx.region, table])?;
    while let Some(row) = rows.next()? {
        let key: EncodedKey = (row.get(0)?, row.get(1)?);
        let item = parse_stored_item(&row.get::<_, String>(2)?)?;
        if let Some(index_key) = schema.index_key(&item) {
            insert_index_row(conn, ctx, table, index, &index_key, &key)?;
        }
    }
    Ok(())
}

/// Removes every row of a deleted index.
pub fn drop_index(conn: &Connection, ctx: &Context, table: &str, index: &str) -> AwsResult<()> {
    conn.execute_cached(
        "DELETE FROM ddb_index_items WHERE account = ?1 AND region = ?2 AND table_name = ?3
         AND index_name = ?4",
        rusqlite::params![ctx.account, ctx.region, table, index],
    )?;
    Ok(())
}

fn size_i64(size: usize) -> i64 {
    i64::try_from(size).unwrap_or(i64::MAX)
}

/// Writes `new` under `key` (or deletes the item when `new` is `None`), replacing `old`,
/// for a request.
pub fn store(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    new: Option<&Item>,
) -> AwsResult<()> {
    write(conn, ctx, table, key, old, new, Origin::Request)
}

/// [`store`] for any origin: a write that changes nothing writes nothing and leaves no
/// stream record.
pub fn write(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    new: Option<&Item>,
    origin: Origin,
) -> AwsResult<()> {
    if old == new {
        return Ok(());
    }
    let name = &table.name;
    match new {
        Some(item) => {
            conn.prepare_cached(
                "INSERT OR REPLACE INTO ddb_items
                 (account, region, table_name, hash_key, range_key, item, size)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                name,
                key.0,
                key.1,
                item_to_json(item),
                size_i64(item_size(item))
            ])?;
        }
        None => {
            conn.prepare_cached(
                "DELETE FROM ddb_items WHERE account = ?1 AND region = ?2
                 AND table_name = ?3 AND hash_key = ?4 AND range_key = ?5",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                name,
                key.0,
                key.1
            ])?;
        }
    }
    for (index, schema) in table.indexes() {
        let old_key = old.and_then(|o| schema.index_key(o));
        let new_key = new.and_then(|n| schema.index_key(n));
        if old_key == new_key {
            continue;
        }
        if let Some(k) = old_key {
            conn.prepare_cached(
                "DELETE FROM ddb_index_items WHERE account = ?1 AND region = ?2
                 AND table_name = ?3 AND index_name = ?4 AND hash_key = ?5 AND range_key = ?6
                 AND table_hash = ?7 AND table_range = ?8",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                name,
                index,
                k.0,
                k.1,
                key.0,
                key.1
            ])?;
        }
        if let Some(k) = new_key {
            insert_index_row(conn, ctx, name, &index, &k, key)?;
        }
    }
    let count = i64::from(new.is_some()) - i64::from(old.is_some());
    let size = size_i64(new.map_or(0, item_size)) - size_i64(old.map_or(0, item_size));
    counters::add(conn, ctx, name, count, size)?;
    ttl::index(conn, ctx, table, key, old, new)?;
    let now = now_millis();
    backups::record(conn, ctx, table, key, old, now)?;
    streams::capture(conn, ctx, table, old, new, origin, now)?;
    kinesis_destinations::capture(conn, ctx, table, key, old, new, origin, now)?;
    replication::capture(conn, ctx, table, key, old, new, origin, now)
}
