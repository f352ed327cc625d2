//! On-demand backups: CreateBackup, DescribeBackup, ListBackups and DeleteBackup.
//!
//! A backup is taken whole inside CreateBackup's transaction: the table's record (its
//! static description, creation time, counters and Time to Live attribute) goes to
//! `ddb_on_demand_backups`, its items, row for row, to `ddb_backup_items`. So it is
//! `AVAILABLE` as soon as CreateBackup returns (AWS answers `CREATING` and needs seconds),
//! later writes to the table never reach it, and it outlives the table, as AWS's backups
//! do. Its ARN is AWS's: the table's ARN, `/backup/`, the creation time in 14-digit epoch
//! milliseconds and 8 random hex digits. [`restores`](super::restores) makes tables of it.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value as Json;

use super::counters::{self, Counts};
use super::key::KeySchema;
use super::tables::{check_name, load_table, table_arn, table_name, Table};
use super::DynamoDb;

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_on_demand_backups (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    table_name TEXT NOT NULL,
    table_description TEXT NOT NULL,
    table_created INTEGER NOT NULL,
    item_count INTEGER NOT NULL,
    size_bytes INTEGER NOT NULL,
    ttl_attribute TEXT,
    PRIMARY KEY (account, region, arn)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ddb_on_demand_backups_by_time
    ON ddb_on_demand_backups (account, region, created, arn);
CREATE TABLE IF NOT EXISTS ddb_backup_items (
    backup TEXT NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    item TEXT NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (backup, hash_key, range_key)
) WITHOUT ROWID;
";

/// The most backups one ListBackups page holds.
const LIST_BACKUPS_MAX: i64 = 100;

/// One backup: its ARN, name, creation time and the table as it was.
pub struct Backup {
    /// The backup ARN.
    pub arn: String,
    /// The backup name.
    pub name: String,
    /// When it was taken, epoch millis.
    pub created: i64,
    /// The source table's record at that moment.
    pub table: Table,
    /// The source table's figures at that moment.
    pub counts: Counts,
}

/// `BackupNotFoundException` for an ARN.
pub fn backup_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "BackupNotFoundException",
        format!("Backup not found: {arn}"),
    )
    .with_status(400)
}

/// `TableNotFoundException`, as the backup operations word it, for the name as given.
pub fn table_not_found(given: &str) -> AwsError {
    AwsError::new(
        "TableNotFoundException",
        format!("Table not found: {given}"),
    )
    .with_status(400)
}

const COLUMNS: &str = "arn, name, created, table_name, table_description, table_created, \
                       item_count, size_bytes, ttl_attribute";

/// A backup as its row holds it, the table description still text.
struct BackupRow {
    arn: String,
    name: String,
    created: i64,
    table_name: String,
    table_description: String,
    table_created: i64,
    item_count: i64,
    size_bytes: i64,
    ttl_attribute: Option<String>,
}

fn backup_row(row: &rusqlite::Row<'_>) -> rusqlite::Result<BackupRow> {
    Ok(BackupRow {
        arn: row.get(0)?,
        name: row.get(1)?,
        created: row.get(2)?,
        table_name: row.get(3)?,
        table_description: row.get(4)?,
        table_created: row.get(5)?,
        item_count: row.get(6)?,
        size_bytes: row.get(7)?,
        ttl_attribute: row.get(8)?,
    })
}

impl BackupRow {
    fn into_backup(self) -> AwsResult<Backup> {
        let unreadable = || AwsError::internal("a stored DynamoDB backup is unreadable");
        let description: Json =
            serde_json::from_str(&self.table_description).map_err(|_| unreadable())?;
        let schema = KeySchema::from_json(
            &description["KeySchema"],
            &description["AttributeDefinitions"],
        )
        .ok_or_else(unreadable)?;
        Ok(Backup {
            arn: self.arn,
            name: self.name,
            created: self.created,
            table: Table {
                name: self.table_name,
                description: description.into(),
                created: self.table_created,
                schema: schema.into(),
                ttl_attribute: self.ttl_attribute,
                recovery_days: None,
            },
            counts: Counts {
                items: self.item_count,
                bytes: self.size_bytes,
            },
        })
    }
}

/// Loads a backup by ARN.
pub fn load_backup(conn: &Connection, ctx: &Context, arn: &str) -> AwsResult<Option<Backup>> {
    conn.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM ddb_on_demand_backups
         WHERE account = ?1 AND region = ?2 AND arn = ?3"
    ))?
    .query_row(rusqlite::params![ctx.account, ctx.region, arn], backup_row)
    .optional()?
    .map(BackupRow::into_backup)
    .transpose()
}

/// The creation time an ARN of ours carries (`.../backup/<14 digits>-<8 hex>`).
fn created_of_arn(arn: &str) -> Option<i64> {
    let (_, id) = arn.rsplit_once("/backup/")?;
    id.split_once('-')?.0.parse().ok()
}

impl Backup {
    /// `BackupDetails`, in the given status.
    fn details(&self, status: &str) -> Value {
        Value::map()
            .with("BackupArn", self.arn.as_str())
            .with("BackupName", self.name.as_str())
            .with("BackupSizeBytes", self.counts.bytes)
            .with("BackupStatus", status)
            .with("BackupType", "USER")
            .with("BackupCreationDateTime", Value::Timestamp(self.created))
    }

    /// One `BackupSummary` of ListBackups.
    fn summary(&self) -> Value {
        let description = &self.table.description;
        Value::map()
            .with("TableName", self.table.name.as_str())
            .with_opt("TableId", description["TableId"].as_str())
            .with_opt("TableArn", description["TableArn"].as_str())
            .with("BackupArn", self.arn.as_str())
            .with("BackupName", self.name.as_str())
            .with("BackupCreationDateTime", Value::Timestamp(self.created))
            .with("BackupStatus", "AVAILABLE")
            .with("BackupType", "USER")
            .with("BackupSizeBytes", self.counts.bytes)
    }

    /// The `BackupDescription`: details, the source table and its features.
    fn describe(&self, status: &str) -> Value {
        let table = &self.table;
        let description = &table.description;
        let member = |name: &str| Some(&description[name]).filter(|v| !v.is_null());
        let throughput = &description["ProvisionedThroughput"];
        let source = Value::map()
            .with("TableName", table.name.as_str())
            .with_opt("TableId", description["TableId"].as_str())
            .with_opt("TableArn", description["TableArn"].as_str())
            .with("TableSizeBytes", self.counts.bytes)
            .with_opt("KeySchema", member("KeySchema").map(Value::from_json))
            .with("TableCreationDateTime", Value::Timestamp(table.created))
            .with(
                "ProvisionedThroughput",
                Value::map()
                    .with(
                        "ReadCapacityUnits",
                        throughput["ReadCapacityUnits"].as_i64().unwrap_or_default(),
                    )
                    .with(
                        "WriteCapacityUnits",
                        throughput["WriteCapacityUnits"]
                            .as_i64()
                            .unwrap_or_default(),
                    ),
            )
            .with_opt(
                "OnDemandThroughput",
                member("OnDemandThroughput").map(Value::from_json),
            )
            .with("ItemCount", self.counts.items)
            .with_opt(
                "BillingMode",
                description["BillingModeSummary"]["BillingMode"].as_str(),
            );
        let time_to_live = match &table.ttl_attribute {
            Some(attribute) => Value::map()
                .with("TimeToLiveStatus", "ENABLED")
                .with("AttributeName", attribute.as_str()),
            None => Value::map().with("TimeToLiveStatus", "DISABLED"),
        };
        let features = Value::map()
            .with_opt(
                "LocalSecondaryIndexes",
                member("LocalSecondaryIndexes").map(Value::from_json),
            )
            .with_opt(
                "GlobalSecondaryIndexes",
                member("GlobalSecondaryIndexes").map(Value::from_json),
            )
            .with_opt(
                "StreamDescription",
                member("StreamSpecification").map(Value::from_json),
            )
            .with("TimeToLiveDescription", time_to_live)
            .with_opt(
                "SSEDescription",
                member("SSEDescription").map(Value::from_json),
            );
        Value::map()
            .with("BackupDetails", self.details(status))
            .with("SourceTableDetails", source)
            .with("SourceTableFeatureDetails", features)
    }
}

/// The ARN a `BackupArn` member names.
fn backup_arn(input: &Value) -> &str {
    input.str("BackupArn").unwrap_or_default()
}

impl DynamoDb {
    pub(super) fn create_backup(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        let given = input.str("TableName").unwrap_or_default();
        let backup_name = input.str("BackupName").unwrap_or_default().to_string();
        check_name(&backup_name, "backupName")?;
        let created = now_millis();
        let arn = format!(
            "{}/backup/{created:014}-{:08x}",
            table_arn(ctx, &name),
            fastrand::u32(..)
        );
        let (table, counts) = self.env.store.transaction(|tx| {
            let table = load_table(tx, ctx, &name)?.ok_or_else(|| table_not_found(given))?;
            let counts = counters::read(tx, ctx, &name)?.unwrap_or_default();
            tx.prepare_cached(
                "INSERT INTO ddb_on_demand_backups
                 (account, region, arn, name, created, table_name, table_description,
                  table_created, item_count, size_bytes, ttl_attribute)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                arn,
                backup_name,
                created,
                name,
                table.description.to_string(),
                table.created,
                counts.items,
                counts.bytes,
                table.ttl_attribute
            ])?;
            tx.prepare_cached(
                "INSERT INTO ddb_backup_items (backup, hash_key, range_key, item, size)
                 SELECT ?4, hash_key, range_key, item, size FROM ddb_items
                 WHERE account = ?1 AND region = ?2 AND table_name = ?3",
            )?
            .execute(rusqlite::params![ctx.account, ctx.region, name, arn])?;
            Ok::<_, AwsError>((table, counts))
        })?;
        let backup = Backup {
            arn,
            name: backup_name,
            created,
            table,
            counts,
        };
        Ok(Value::map().with("BackupDetails", backup.details("AVAILABLE")))
    }

    pub(super) fn describe_backup(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = backup_arn(input);
        let backup = self
            .env
            .store
            .with(|c| load_backup(c, ctx, arn))?
            .ok_or_else(|| backup_not_found(arn))?;
        Ok(Value::map().with("BackupDescription", backup.describe("AVAILABLE")))
    }

    pub(super) fn delete_backup(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = backup_arn(input);
        let backup = self.env.store.transaction(|tx| {
            let backup = load_backup(tx, ctx, arn)?.ok_or_else(|| backup_not_found(arn))?;
            tx.execute_cached(
                "DELETE FROM ddb_on_demand_backups WHERE account = ?1 AND region = ?2 AND arn = ?3",
                rusqlite::params![ctx.account, ctx.region, arn],
            )?;
            tx.execute_cached("DELETE FROM ddb_backup_items WHERE backup = ?1", [arn])?;
            Ok::<_, AwsError>(backup)
        })?;
        Ok(Value::map().with("BackupDescription", backup.describe("DELETED")))
    }

    pub(super) fn list_backups(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let table = input
            .get("TableName")
            .map(|_| table_name(input))
            .transpose()?;
        let limit = input.int("Limit").unwrap_or(LIST_BACKUPS_MAX);
        let timestamp = |member: &str| match input.get(member) {
            Some(Value::Timestamp(t)) => Some(*t),
            _ => None,
        };
        let lower = timestamp("TimeRangeLowerBound").unwrap_or(i64::MIN);
        let upper = timestamp("TimeRangeUpperBound").unwrap_or(i64::MAX);
        let after = match input.str("ExclusiveStartBackupArn") {
            Some(arn) => {
                let created = created_of_arn(arn).ok_or_else(|| {
                    AwsError::validation(format!("Invalid ExclusiveStartBackupArn: {arn}"))
                })?;
                (created, arn.to_string())
            }
            None => (i64::MIN, String::new()),
        };
        // Every backup Roto takes is a user backup.
        let user_backups = matches!(input.str("BackupType").unwrap_or("USER"), "USER" | "ALL");
        let mut backups: Vec<Backup> = if user_backups {
            self.env.store.with(|c| {
                let mut select = c.prepare_cached(&format!(
                    "SELECT {COLUMNS} FROM ddb_on_demand_backups
                     WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR table_name = ?3)
                     AND created >= ?4 AND created < ?5 AND (created, arn) > (?6, ?7)
                     ORDER BY created, arn LIMIT ?8"
                ))?;
                let rows = select.query_map(
                    rusqlite::params![
                        ctx.account,
                        ctx.region,
                        table,
                        lower,
                        upper,
                        after.0,
                        after.1,
                        limit + 1
                    ],
                    backup_row,
                )?;
                rows.map(|row| row?.into_backup()).collect()
            })?
        } else {
            Vec::new()
        };
        let more = backups.len() as i64 > limit;
        backups.truncate(usize::try_from(limit).unwrap_or(0));
        let last = more
            .then(|| backups.last().map(|b| b.arn.clone()))
            .flatten();
        Ok(Value::map()
            .with(
                "BackupSummaries",
                Value::List(backups.iter().map(Backup::summary).collect()),
            )
            .with_opt("LastEvaluatedBackupArn", last))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn backup_arns_carry_their_creation_time() {
        assert_eq!(
            created_of_arn(
                "arn:aws:dynamodb:us-east-1:123456789012:table/t/backup/01576616366715-b4e58d3a"
            ),
            Some(1_576_616_366_715)
        );
        assert_eq!(
            created_of_arn("arn:aws:dynamodb:us-east-1:123456789012:table/t"),
            None
        );
        assert_eq!(created_of_arn("x/backup/later-b4e58d3a"), None);
    }
}
