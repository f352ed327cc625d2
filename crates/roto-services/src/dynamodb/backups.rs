//! Continuous backups: DescribeContinuousBackups and UpdateContinuousBackups, and the
//! change log point-in-time restores read.
//!
//! Point-in-time recovery is a setting (`ddb_backups`). As in AWS, continuous backups are
//! always `ENABLED`, the change is synchronous and idempotent, the recovery period defaults
//! to 35 days (and returns to 35 on re-enabling), and the restorable window opens when
//! recovery is enabled: its earliest point is the enabling moment or the start of the
//! period, its latest five minutes ago, neither before the enabling moment.
//!
//! While recovery is enabled, the one item writer ([`rows`](super::rows)) hands every item
//! change to [`record`], in the write's own transaction, which keeps the item's previous
//! image in `ddb_recovery_log` for the recovery period. The table as it was at a moment of
//! the window is then its current items with every later change undone
//! ([`items_at`]), exactly, whatever the table's stream settings. Disabling recovery,
//! or deleting the table, drops the log, as AWS's window closes then.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};

use std::collections::{BTreeMap, HashMap};

use super::attr::{item_size, item_to_json, Item};
use super::key::EncodedKey;
use super::tables::{load_table, table_name, Table};
use super::DynamoDb;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_backups (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    recovery_days INTEGER NOT NULL,
    enabled_at INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_recovery_log (
    seq INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    at INTEGER NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    old_item TEXT,
    old_size INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS ddb_recovery_log_by_time
    ON ddb_recovery_log (account, region, table_name, at);
";

/// The recovery period when none is given.
const DEFAULT_RECOVERY_DAYS: i64 = 35;
/// How far behind the present the latest restorable time stays.
const LATEST_LAG_MILLIS: i64 = 5 * 60 * 1000;
const DAY_MILLIS: i64 = 24 * 60 * 60 * 1000;

/// `TableNotFoundException`, as the backup operations word it.
fn table_not_found(name: &str) -> AwsError {
    AwsError::new("TableNotFoundException", format!("Table not found: {name}")).with_status(400)
}

/// A table's recovery setting, while enabled: (recovery days, enabled at).
fn recovery(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<Option<(i64, i64)>> {
    Ok(conn
        .prepare_cached(
            "SELECT recovery_days, enabled_at FROM ddb_backups
             WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, table], |r| {
            Ok((r.get(0)?, r.get(1)?))
        })
        .optional()?)
}

/// Removes a table's setting and its change log (recovery disabled, or the table deleted).
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    let params = rusqlite::params![ctx.account, ctx.region, table];
    conn.prepare_cached(
        "DELETE FROM ddb_backups WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(params)?;
    conn.prepare_cached(
        "DELETE FROM ddb_recovery_log WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(params)?;
    Ok(())
}

/// The restorable window of a setting at `now`: (earliest, latest), epoch millis.
fn window((days, enabled_at): (i64, i64), now: i64) -> (i64, i64) {
    (
        enabled_at.max(now - days * DAY_MILLIS),
        enabled_at.max(now - LATEST_LAG_MILLIS),
    )
}

/// A table's restorable window at `now`, while recovery is enabled.
pub fn restorable_window(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    now: i64,
) -> AwsResult<Option<(i64, i64)>> {
    Ok(recovery(conn, ctx, table)?.map(|setting| window(setting, now)))
}

/// Keeps the previous image of an item a write changes, while the table has recovery
/// enabled (as loaded with the table, in the write's transaction), and drops what has aged
/// out of the recovery period.
pub fn record(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    now: i64,
) -> AwsResult<()> {
    let Some(days) = table.recovery_days else {
        return Ok(());
    };
    let table = &table.name;
    conn.prepare_cached(
        "INSERT INTO ddb_recovery_log
         (account, region, table_name, at, hash_key, range_key, old_item, old_size)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        now,
        key.0,
        key.1,
        old.map(item_to_json),
        old.map_or(0, |o| i64::try_from(item_size(o)).unwrap_or(i64::MAX))
    ])?;
    let cutoff = now - days * DAY_MILLIS;
    let params = rusqlite::params![ctx.account, ctx.region, table, cutoff];
    let oldest: Option<i64> = conn
        .prepare_cached(
            "SELECT MIN(at) FROM ddb_recovery_log
             WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, table], |r| {
            r.get(0)
        })?;
    if oldest.is_some_and(|at| at < cutoff) {
        conn.prepare_cached(
            "DELETE FROM ddb_recovery_log
             WHERE account = ?1 AND region = ?2 AND table_name = ?3 AND at < ?4",
        )?
        .execute(params)?;
    }
    Ok(())
}

/// A table's items as they were at `at`, in key order, as stored (JSON and size): its
/// current items with every change made since undone.
pub fn items_at(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    at: i64,
) -> AwsResult<Vec<(EncodedKey, String, i64)>> {
    let mut undo = changes_after(conn, ctx, table, at)?;
    let mut items = BTreeMap::new();
    let mut select = conn.prepare_cached(
        "SELECT hash_key, range_key, item, size FROM ddb_items
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?;
    let mut rows = select.query(rusqlite::params![ctx.account, ctx.region, table])?;
    while let Some(row) = rows.next()? {
        let key: EncodedKey = (row.get(0)?, row.get(1)?);
        match undo.remove(&key) {
            Some(Some(old)) => items.insert(key, old),
            Some(None) => None,
            None => items.insert(key, (row.get(2)?, row.get(3)?)),
        };
    }
    // Keys deleted since.
    items.extend(undo.into_iter().filter_map(|(key, old)| Some((key, old?))));
    Ok(items
        .into_iter()
        .map(|(key, (item, size))| (key, item, size))
        .collect())
}

/// What undoes every change made to a table after `at`: for each key changed since, the
/// stored item (JSON and size) it held at `at`, or `None` where it held none.
fn changes_after(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    at: i64,
) -> AwsResult<HashMap<EncodedKey, Option<(String, i64)>>> {
    let mut select = conn.prepare_cached(
        "SELECT hash_key, range_key, old_item, old_size FROM ddb_recovery_log
         WHERE account = ?1 AND region = ?2 AND table_name = ?3 AND at > ?4
         ORDER BY at DESC, seq DESC",
    )?;
    let mut rows = select.query(rusqlite::params![ctx.account, ctx.region, table, at])?;
    let mut undo = HashMap::new();
    // Newest first, so the image each key keeps is the one from its earliest later change.
    while let Some(row) = rows.next()? {
        let key: EncodedKey = (row.get(0)?, row.get(1)?);
        let old: Option<String> = row.get(2)?;
        let size: i64 = row.get(3)?;
        undo.insert(key, old.map(|item| (item, size)));
    }
    Ok(undo)
}

/// The `ContinuousBackupsDescription` for a setting at `now`.
fn description(setting: Option<(i64, i64)>, now: i64) -> Value {
    let recovery = match setting {
        Some(setting) => {
            let (earliest, latest) = window(setting, now);
            Value::map()
                .with("PointInTimeRecoveryStatus", "ENABLED")
                .with("RecoveryPeriodInDays", setting.0)
                .with("EarliestRestorableDateTime", Value::Timestamp(earliest))
                .with("LatestRestorableDateTime", Value::Timestamp(latest))
        }
        None => Value::map().with("PointInTimeRecoveryStatus", "DISABLED"),
    };
    Value::map().with(
        "ContinuousBackupsDescription",
        Value::map()
            .with("ContinuousBackupsStatus", "ENABLED")
            .with("PointInTimeRecoveryDescription", recovery),
    )
}

impl DynamoDb {
    pub(super) fn describe_continuous_backups(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = table_name(input)?;
        let setting = self.env.store.with(|c| {
            load_table(c, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            recovery(c, ctx, &name)
        })?;
        Ok(description(setting, now_millis()))
    }

    pub(super) fn update_continuous_backups(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = table_name(input)?;
        let spec = input
            .get("PointInTimeRecoverySpecification")
            .cloned()
            .unwrap_or_else(Value::map);
        let enable = spec.bool("PointInTimeRecoveryEnabled") == Some(true);
        let days = spec.int("RecoveryPeriodInDays");
        if !enable && days.is_some() {
            return Err(AwsError::validation(
                "Invalid Request: Cannot specify RecoveryPeriodInDays when disabling point-in-time recovery.",
            ));
        }
        let now = now_millis();
        let setting = self.env.store.transaction(|tx| {
            load_table(tx, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            if !enable {
                forget(tx, ctx, &name)?;
                return Ok(None);
            }
            let current = recovery(tx, ctx, &name)?;
            let setting = match current {
                Some((current_days, enabled_at)) => (days.unwrap_or(current_days), enabled_at),
                None => (days.unwrap_or(DEFAULT_RECOVERY_DAYS), now),
            };
            tx.prepare_cached(
                "INSERT OR REPLACE INTO ddb_backups
                 (account, region, table_name, recovery_days, enabled_at)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                name,
                setting.0,
                setting.1
            ])?;
            Ok::<_, AwsError>(Some(setting))
        })?;
        Ok(description(setting, now))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_restorable_window_opens_at_enabling_and_follows_the_period() {
        let enabled_at = 1_000 * DAY_MILLIS;
        let just_after = description(Some((35, enabled_at)), enabled_at + 60_000);
        let recovery = just_after
            .get("ContinuousBackupsDescription")
            .and_then(|d| d.get("PointInTimeRecoveryDescription"))
            .unwrap();
        assert_eq!(
            recovery.get("EarliestRestorableDateTime"),
            Some(&Value::Timestamp(enabled_at))
        );
        assert_eq!(
            recovery.get("LatestRestorableDateTime"),
            Some(&Value::Timestamp(enabled_at))
        );
        let later = enabled_at + 40 * DAY_MILLIS;
        let recovery = description(Some((35, enabled_at)), later);
        let recovery = recovery
            .get("ContinuousBackupsDescription")
            .and_then(|d| d.get("PointInTimeRecoveryDescription"))
            .unwrap();
        assert_eq!(
            recovery.get("EarliestRestorableDateTime"),
            Some(&Value::Timestamp(later - 35 * DAY_MILLIS))
        );
        assert_eq!(
            recovery.get("LatestRestorableDateTime"),
            Some(&Value::Timestamp(later - LATEST_LAG_MILLIS))
        );
    }
}
