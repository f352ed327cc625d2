//! Continuous backups: DescribeContinuousBackups and UpdateContinuousBackups.
//!
//! Point-in-time recovery is a stored setting (`ddb_backups`); nothing is restored from it.
//! As in AWS, continuous backups are always `ENABLED`, the change is synchronous and
//! idempotent, the recovery period defaults to 35 days (and returns to 35 on re-enabling),
//! and the restorable window opens when recovery is enabled: its earliest point is the
//! enabling moment or the start of the period, its latest five minutes ago, neither before
//! the enabling moment.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};

use super::tables::{load_table, table_name};
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

/// Removes a deleted table's setting.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_backups WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

/// The `ContinuousBackupsDescription` for a setting at `now`.
fn description(setting: Option<(i64, i64)>, now: i64) -> Value {
    let recovery = match setting {
        Some((days, enabled_at)) => Value::map()
            .with("PointInTimeRecoveryStatus", "ENABLED")
            .with("RecoveryPeriodInDays", days)
            .with(
                "EarliestRestorableDateTime",
                Value::Timestamp(enabled_at.max(now - days * DAY_MILLIS)),
            )
            .with(
                "LatestRestorableDateTime",
                Value::Timestamp(enabled_at.max(now - LATEST_LAG_MILLIS)),
            ),
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
