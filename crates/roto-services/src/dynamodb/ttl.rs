//! Time to Live: UpdateTimeToLive, DescribeTimeToLive, and the sweeper that deletes
//! expired items.
//!
//! A table's setting lives in `ddb_ttl`. While it is enabled, every item whose TTL
//! attribute is a Number (epoch seconds) has a row in `ddb_expiry`, kept by the one item
//! writer ([`rows`](super::rows)) and indexed by expiry time, so finding what is due is one
//! index seek whatever the tables' sizes. The sweeper is one background task: while no
//! table has Time to Live enabled it sleeps until an UpdateTimeToLive enables it; otherwise
//! it wakes every second of the server clock (at once when the clock is advanced), deletes
//! the items that have expired, oldest first, through the same writer as DeleteItem (so
//! indexes, counters and stream records follow, the stream record naming the
//! `dynamodb.amazonaws.com` service), and sleeps again. AWS takes up to days to delete an
//! expired item and reads return it until then; Roto deletes it within about a second of
//! the clock passing its expiry, and reads return it until then too. Expiry times more than
//! five years in the past are ignored, as AWS ignores them.

use std::collections::HashMap;
use std::sync::Weak;
use std::time::Duration;

use roto_core::dispatch::new_request_id;
use roto_core::timestamp::{self, now_millis};
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{Connection, OptionalExtension};
use tokio::sync::Notify;

use super::attr::{parse_stored_item, Attr, Item};
use super::key::EncodedKey;
use super::rows::{read_item, write};
use super::streams::Origin;
use super::tables::{load_table, table_name, table_not_found, Table};
use super::DynamoDb;
use super::{kinesis_destinations, replicas, replication};

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_ttl (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    attribute TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    changed INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_expiry (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    expires INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name, hash_key, range_key)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ddb_expiry_by_time ON ddb_expiry (expires);
";

/// How long after a change UpdateTimeToLive refuses the next one (AWS documents an hour;
/// it measures about 31 minutes).
const COOLDOWN_MILLIS: i64 = 31 * 60 * 1000;
/// Expiry times further in the past than this are not acted on.
const IGNORED_AFTER_SECS: i64 = 5 * 365 * 24 * 60 * 60;
/// How many expired items one sweep transaction deletes.
const SWEEP_BATCH: i64 = 100;

/// Woken when a table's Time to Live is enabled, so an idle sweeper starts sweeping.
static ENABLED: Notify = Notify::const_new();

/// The epoch second an item expires at, if its TTL attribute is a whole-second Number.
fn expiry_of(item: &Item, attribute: &str) -> Option<i64> {
    match item.get(attribute)? {
        Attr::N(n) => n.to_string().split('.').next()?.parse().ok(),
        _ => None,
    }
}

/// Keeps an item's row in the expiry index in step with a write of it.
pub fn index(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    new: Option<&Item>,
) -> AwsResult<()> {
    let Some(attribute) = &table.ttl_attribute else {
        return Ok(());
    };
    let old_expiry = old.and_then(|i| expiry_of(i, attribute));
    let new_expiry = new.and_then(|i| expiry_of(i, attribute));
    if old_expiry == new_expiry {
        return Ok(());
    }
    match new_expiry {
        Some(expires) => insert_expiry(conn, ctx, &table.name, key, expires),
        None => delete_expiry(conn, ctx, &table.name, key),
    }
}

fn insert_expiry(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    key: &EncodedKey,
    expires: i64,
) -> AwsResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_expiry
         (account, region, table_name, hash_key, range_key, expires)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        key.0,
        key.1,
        expires
    ])?;
    Ok(())
}

fn delete_expiry(conn: &Connection, ctx: &Context, table: &str, key: &EncodedKey) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_expiry WHERE account = ?1 AND region = ?2 AND table_name = ?3
         AND hash_key = ?4 AND range_key = ?5",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        key.0,
        key.1
    ])?;
    Ok(())
}

fn drop_index(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_expiry WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

/// Indexes the expiry of every item a table already holds (Time to Live just enabled).
fn fill_index(conn: &Connection, ctx: &Context, table: &str, attribute: &str) -> AwsResult<()> {
    let mut select = conn.prepare_cached(
        "SELECT hash_key, range_key, item FROM ddb_items
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?;
    let mut rows = select.query(rusqlite::params![ctx.account, ctx.region, table])?;
    while let Some(row) = rows.next()? {
        let item = parse_stored_item(&row.get::<_, String>(2)?)?;
        if let Some(expires) = expiry_of(&item, attribute) {
            insert_expiry(conn, ctx, table, &(row.get(0)?, row.get(1)?), expires)?;
        }
    }
    Ok(())
}

/// Removes a deleted table's setting and expiry rows.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_ttl WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    drop_index(conn, ctx, table)
}

/// Indexes a table's items by their expiry when Time to Live is enabled, else drops the index.
fn index_setting(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    enable: bool,
    attribute: &str,
) -> AwsResult<()> {
    if enable {
        fill_index(conn, ctx, table, attribute)
    } else {
        drop_index(conn, ctx, table)
    }
}

/// Gives a new replica its source's setting (Time to Live is a setting of the whole
/// global table).
pub fn copy_setting(conn: &Connection, from: &Context, to: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_ttl (account, region, table_name, attribute, enabled, changed)
         SELECT account, ?4, table_name, attribute, enabled, changed FROM ddb_ttl
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![
        from.account,
        from.region,
        table,
        to.region
    ])?;
    Ok(())
}

/// A table's stored setting: (attribute, enabled, when it last changed).
fn setting(
    conn: &Connection,
    ctx: &Context,
    table: &str,
) -> AwsResult<Option<(String, bool, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT attribute, enabled, changed FROM ddb_ttl
             WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, table], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })
        .optional()?)
}

/// Checks an UpdateTimeToLive against the current setting, in the order DynamoDB checks:
/// what it asks for, then how recently the setting changed.
fn check_change(
    current: Option<&(String, bool, i64)>,
    enable: bool,
    attribute: &str,
    now: i64,
) -> AwsResult<()> {
    let active = current.filter(|(_, enabled, _)| *enabled);
    match (enable, active) {
        (true, Some((name, _, _))) if name == attribute => {
            return Err(AwsError::validation("TimeToLive is already enabled"))
        }
        (false, None) => return Err(AwsError::validation("TimeToLive is already disabled")),
        (_, Some((name, _, _))) if name != attribute => {
            return Err(AwsError::validation(format!(
                "TimeToLive is active on a different AttributeName: current AttributeName is {name}"
            )))
        }
        _ => {}
    }
    if current.is_some_and(|(_, _, changed)| now - changed < COOLDOWN_MILLIS) {
        return Err(AwsError::validation(
            "Time to live has been modified multiple times within a fixed interval",
        ));
    }
    Ok(())
}

impl DynamoDb {
    pub(super) fn update_time_to_live(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        let spec = input
            .get("TimeToLiveSpecification")
            .cloned()
            .unwrap_or_else(Value::map);
        let enable = spec.bool("Enabled") == Some(true);
        let attribute = spec.str("AttributeName").unwrap_or_default();
        let now = now_millis();
        self.env.store.transaction(|tx| {
            let table = load_table(tx, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            let current = setting(tx, ctx, &name)?;
            check_change(current.as_ref(), enable, attribute, now)?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO ddb_ttl
                 (account, region, table_name, attribute, enabled, changed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                name,
                attribute,
                enable,
                now
            ])?;
            // Time to Live is a setting of the whole global table.
            for region in replicas::regions(&table.description) {
                let there = Context::internal(&ctx.account, region);
                copy_setting(tx, ctx, &there, &name)?;
                index_setting(tx, &there, &name, enable, attribute)?;
            }
            index_setting(tx, ctx, &name, enable, attribute)
        })?;
        if enable {
            ENABLED.notify_waiters();
        }
        Ok(Value::map().with(
            "TimeToLiveSpecification",
            Value::map()
                .with("Enabled", enable)
                .with("AttributeName", attribute),
        ))
    }

    pub(super) fn describe_time_to_live(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        let current = self.env.store.with(|c| {
            load_table(c, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            setting(c, ctx, &name)
        })?;
        let description = match current {
            Some((attribute, true, _)) => Value::map()
                .with("TimeToLiveStatus", "ENABLED")
                .with("AttributeName", attribute),
            _ => Value::map().with("TimeToLiveStatus", "DISABLED"),
        };
        Ok(Value::map().with("TimeToLiveDescription", description))
    }
}

/// Deletes up to one batch of expired items; returns whether the batch was full (more may
/// be due).
fn sweep_batch(env: &Env, now: i64) -> AwsResult<bool> {
    let due_before = now.div_euclid(1000) + i64::from(now.rem_euclid(1000) > 0);
    let floor = now.div_euclid(1000) - IGNORED_AFTER_SECS;
    env.store.transaction(|tx| {
        let due: Vec<(Context, String, EncodedKey)> = tx
            .prepare_cached(
                "SELECT account, region, table_name, hash_key, range_key FROM ddb_expiry
                 WHERE expires >= ?1 AND expires < ?2 ORDER BY expires LIMIT ?3",
            )?
            .query_map(rusqlite::params![floor, due_before, SWEEP_BATCH], |r| {
                let ctx = Context {
                    account: r.get(0)?,
                    region: r.get(1)?,
                    access_key: None,
                    request_id: new_request_id(),
                    host: String::new(),
                };
                Ok((ctx, r.get(2)?, (r.get(3)?, r.get(4)?)))
            })?
            .collect::<rusqlite::Result<_>>()?;
        let mut tables: HashMap<(String, String, String), Option<Table>> = HashMap::new();
        for (ctx, name, key) in &due {
            let id = (ctx.account.clone(), ctx.region.clone(), name.clone());
            if !tables.contains_key(&id) {
                let loaded = load_table(tx, ctx, name)?;
                tables.insert(id.clone(), loaded);
            }
            let table = tables.get(&id).and_then(Option::as_ref);
            let old = match table {
                Some(_) => read_item(tx, ctx, name, key)?,
                None => None,
            };
            match (table, old) {
                (Some(table), Some(old)) => {
                    write(tx, ctx, table, key, Some(&old), None, Origin::TimeToLive)?
                }
                _ => delete_expiry(tx, ctx, name, key)?,
            }
        }
        Ok(due.len() as i64 == SWEEP_BATCH)
    })
}

/// Whether any table has Time to Live enabled.
fn any_enabled(env: &Env) -> AwsResult<bool> {
    env.store.with(|c| {
        Ok(
            c.prepare_cached("SELECT 1 FROM ddb_ttl WHERE enabled = 1 LIMIT 1")?
                .query_row([], |_| Ok(()))
                .optional()?
                .is_some(),
        )
    })
}

/// Starts the sweeper, which runs until the environment is gone.
pub fn spawn_sweeper(env: Weak<Env>) {
    tokio::spawn(async move {
        loop {
            let enabled = ENABLED.notified();
            tokio::pin!(enabled);
            enabled.as_mut().enable();
            let Some(live) = env.upgrade() else {
                return;
            };
            let active = sweep(&live);
            drop(live);
            match active {
                Ok(true) => timestamp::sleep(Duration::from_secs(1)).await,
                Ok(false) => enabled.await,
                Err(e) => {
                    tracing::warn!("Time to Live sweep: {}", e.message);
                    timestamp::sleep(Duration::from_secs(1)).await;
                }
            }
        }
    });
}

/// Deletes everything due; returns whether any table has Time to Live enabled.
fn sweep(env: &Env) -> AwsResult<bool> {
    if !any_enabled(env)? {
        return Ok(false);
    }
    while sweep_batch(env, now_millis())? {}
    kinesis_destinations::relay(env)?;
    replication::relay(env)?;
    Ok(true)
}

#[cfg(test)]
mod tests {
    use super::super::number::Number;
    use super::*;

    fn item(ttl: Attr) -> Item {
        Item::from([("ttl".to_string(), ttl)])
    }

    #[test]
    fn only_numbers_give_an_expiry_in_whole_seconds() {
        let n = |text: &str| Attr::N(Number::parse(text).unwrap());
        assert_eq!(
            expiry_of(&item(n("1767225600")), "ttl"),
            Some(1_767_225_600)
        );
        assert_eq!(
            expiry_of(&item(n("1767225600.9")), "ttl"),
            Some(1_767_225_600)
        );
        assert_eq!(expiry_of(&item(n("1.5E3")), "ttl"), Some(1500));
        assert_eq!(expiry_of(&item(Attr::S("1767225600".into())), "ttl"), None);
        assert_eq!(expiry_of(&item(n("1E+100")), "ttl"), None);
        assert_eq!(expiry_of(&item(n("1")), "other"), None);
    }

    #[test]
    fn changes_are_checked_for_content_before_the_cooldown() {
        let now = 10 * COOLDOWN_MILLIS;
        let on = ("ttl".to_string(), true, now - 1);
        let off = ("ttl".to_string(), false, now - 1);
        let message = |r: AwsResult<()>| r.unwrap_err().message;
        assert_eq!(
            message(check_change(Some(&on), true, "ttl", now)),
            "TimeToLive is already enabled"
        );
        assert_eq!(
            message(check_change(Some(&on), true, "other", now)),
            "TimeToLive is active on a different AttributeName: current AttributeName is ttl"
        );
        assert_eq!(
            message(check_change(None, false, "ttl", now)),
            "TimeToLive is already disabled"
        );
        assert_eq!(
            message(check_change(Some(&off), false, "ttl", now)),
            "TimeToLive is already disabled"
        );
        assert_eq!(
            message(check_change(Some(&on), false, "ttl", now)),
            "Time to live has been modified multiple times within a fixed interval"
        );
        assert!(check_change(Some(&on), false, "ttl", now - 1 + COOLDOWN_MILLIS).is_ok());
        assert!(check_change(None, true, "ttl", now).is_ok());
    }
}
