//! Restores: RestoreTableFromBackup and RestoreTableToPointInTime.
//!
//! Both make a new table of a source table's settings: a backup's record, or the live
//! table's current settings (a point-in-time restore takes the settings of the moment of
//! the restore, as AWS does). The new table keeps the key schema, the secondary indexes,
//! the billing mode and throughput, the encryption and the table class, each overridable
//! by the request's `...Override` members, and drops what AWS drops: streams, Time to Live,
//! point-in-time recovery, deletion protection and tags. The request is turned into the
//! CreateTable it amounts to (attribute definitions narrowed to the keys still used), so
//! it is validated in CreateTable's words.
//!
//! The items come in the same transaction: a backup's copied rows, or the source table's
//! current items with every change made after the restore time undone from its recovery
//! log ([`backups::items_at`]), so the restored table holds exactly what the source
//! held at that moment. Index rows are rebuilt and the counters recounted; no stream
//! records are written. The response shows the table `CREATING` with `RestoreInProgress`,
//! as AWS's does; every later DescribeTable finds it `ACTIVE`, the restore finished.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::Connection;
use serde_json::{json, Value as Json};

use super::backups;
use super::counters::{self, Counts};
use super::on_demand_backups::{backup_not_found, load_backup, table_not_found};
use super::rows;
use super::tables::{build_description, check_name, insert_table, load_table, table_name, Table};
use super::DynamoDb;

const PAY_PER_REQUEST: &str = "PAY_PER_REQUEST";

/// Where a restored table's items come from.
enum Items<'a> {
    /// The rows of a backup.
    Backup(&'a str),
    /// The source table's items as they were at a moment.
    PointInTime(i64),
}

/// The read and write units of a stored `ProvisionedThroughput`.
fn units(throughput: &Json) -> Value {
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
        )
}

/// The CreateTable input a restore of `source` as `target` amounts to.
fn creation_input(source: &Table, target: &str, input: &Value) -> Value {
    let description = &source.description;
    let was_on_demand =
        description["BillingModeSummary"]["BillingMode"].as_str() == Some(PAY_PER_REQUEST);
    let billing = input
        .str("BillingModeOverride")
        .unwrap_or(if was_on_demand {
            PAY_PER_REQUEST
        } else {
            "PROVISIONED"
        });
    let on_demand = billing == PAY_PER_REQUEST;
    let throughput = match input.get("ProvisionedThroughputOverride") {
        Some(throughput) => Some(throughput.clone()),
        None if !on_demand && !was_on_demand => Some(units(&description["ProvisionedThroughput"])),
        None => None,
    };
    let on_demand_throughput = input
        .get("OnDemandThroughputOverride")
        .cloned()
        .or_else(|| {
            Some(&description["OnDemandThroughput"])
                .filter(|t| on_demand && !t.is_null())
                .map(Value::from_json)
        });
    let stored_indexes = |kind: &str| description[kind].as_array().cloned().unwrap_or_default();
    let locals = match input.get("LocalSecondaryIndexOverride") {
        Some(list) => list.as_list().unwrap_or_default().to_vec(),
        None => stored_indexes("LocalSecondaryIndexes")
            .iter()
            .map(|index| {
                Value::map()
                    .with("IndexName", Value::from_json(&index["IndexName"]))
                    .with("KeySchema", Value::from_json(&index["KeySchema"]))
                    .with("Projection", Value::from_json(&index["Projection"]))
            })
            .collect(),
    };
    let globals = match input.get("GlobalSecondaryIndexOverride") {
        Some(list) => list.as_list().unwrap_or_default().to_vec(),
        None => stored_indexes("GlobalSecondaryIndexes")
            .iter()
            .map(|index| {
                // An index of an on-demand table switched to provisioned takes the table's
                // throughput.
                let index_throughput = match (on_demand, was_on_demand) {
                    (true, _) => None,
                    (false, false) => Some(units(&index["ProvisionedThroughput"])),
                    (false, true) => throughput.clone(),
                };
                let index_on_demand = Some(&index["OnDemandThroughput"])
                    .filter(|t| on_demand && !t.is_null())
                    .map(Value::from_json);
                Value::map()
                    .with("IndexName", Value::from_json(&index["IndexName"]))
                    .with("KeySchema", Value::from_json(&index["KeySchema"]))
                    .with("Projection", Value::from_json(&index["Projection"]))
                    .with_opt("ProvisionedThroughput", index_throughput)
                    .with_opt("OnDemandThroughput", index_on_demand)
            })
            .collect(),
    };
    let key_schema = Value::from_json(&description["KeySchema"]);
    let mut used = key_names(&key_schema);
    for index in locals.iter().chain(&globals) {
        used.extend(index.get("KeySchema").map(key_names).unwrap_or_default());
    }
    let definitions: Vec<Value> = description["AttributeDefinitions"]
        .as_array()
        .cloned()
        .unwrap_or_default()
        .iter()
        .filter(|d| {
            d["AttributeName"]
                .as_str()
                .is_some_and(|name| used.iter().any(|u| u == name))
        })
        .map(Value::from_json)
        .collect();
    let non_empty = |list: Vec<Value>| (!list.is_empty()).then_some(Value::List(list));
    Value::map()
        .with("TableName", target)
        .with("KeySchema", key_schema)
        .with("AttributeDefinitions", Value::List(definitions))
        .with("BillingMode", billing)
        .with_opt("ProvisionedThroughput", throughput)
        .with_opt("OnDemandThroughput", on_demand_throughput)
        .with_opt("LocalSecondaryIndexes", non_empty(locals))
        .with_opt("GlobalSecondaryIndexes", non_empty(globals))
        .with_opt(
            "SSESpecification",
            input.get("SSESpecificationOverride").cloned(),
        )
        .with_opt(
            "TableClass",
            description["TableClassSummary"]["TableClass"].as_str(),
        )
}

fn key_names(key_schema: &Value) -> Vec<String> {
    key_schema
        .as_list()
        .unwrap_or_default()
        .iter()
        .filter_map(|k| k.str("AttributeName").map(str::to_string))
        .collect()
}

/// `TableAlreadyExistsException` for a restore's target.
fn table_exists(name: &str) -> AwsError {
    AwsError::new(
        "TableAlreadyExistsException",
        format!("Table already exists: {name}"),
    )
    .with_status(400)
}

/// The restore itself, inside the caller's transaction: creates `target` from `source`
/// and fills it from `items`. Returns the new table's record and figures.
fn restore(
    tx: &Connection,
    ctx: &Context,
    source: &Table,
    target: &str,
    input: &Value,
    items: Items<'_>,
    summary: Json,
) -> AwsResult<(Table, Counts)> {
    check_name(target, "targetTableName")?;
    if load_table(tx, ctx, target)?.is_some() {
        return Err(table_exists(target));
    }
    let mut description = build_description(ctx, target, &creation_input(source, target, input))?;
    if input.get("SSESpecificationOverride").is_none() {
        if let Some(sse) = source.description.get("SSEDescription") {
            description["SSEDescription"] = sse.clone();
        }
    }
    description["RestoreSummary"] = summary;
    let created = now_millis();
    insert_table(tx, ctx, target, &description, created, &json!([]))?;
    match items {
        Items::Backup(arn) => {
            tx.execute_cached(
                "INSERT INTO ddb_items (account, region, table_name, hash_key, range_key, item, size)
                 SELECT ?1, ?2, ?3, hash_key, range_key, item, size FROM ddb_backup_items
                 WHERE backup = ?4",
                rusqlite::params![ctx.account, ctx.region, target, arn],
            )?;
        }
        Items::PointInTime(at) => {
            let mut insert = tx.prepare_cached(
                "INSERT INTO ddb_items
                 (account, region, table_name, hash_key, range_key, item, size)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for (key, item, size) in backups::items_at(tx, ctx, &source.name, at)? {
                insert.execute(rusqlite::params![
                    ctx.account,
                    ctx.region,
                    target,
                    key.0,
                    key.1,
                    item,
                    size
                ])?;
            }
        }
    }
    tx.execute_cached(
        "UPDATE ddb_tables SET
         item_count = (SELECT COUNT(*) FROM ddb_items
                       WHERE account = ?1 AND region = ?2 AND table_name = ?3),
         size_bytes = (SELECT COALESCE(SUM(size), 0) FROM ddb_items
                       WHERE account = ?1 AND region = ?2 AND table_name = ?3)
         WHERE account = ?1 AND region = ?2 AND name = ?3",
        rusqlite::params![ctx.account, ctx.region, target],
    )?;
    let table = load_table(tx, ctx, target)?
        .ok_or_else(|| AwsError::internal("a restored table vanished"))?;
    for (index, schema) in table.indexes() {
        rows::fill_index(tx, ctx, target, &index, &schema)?;
    }
    let counts = counters::read(tx, ctx, target)?.unwrap_or_default();
    Ok((table, counts))
}

/// The response's view of a restored table: still `CREATING`, its restore in progress.
fn in_progress((table, counts): (Table, Counts)) -> Value {
    let mut description = Json::clone(&table.description);
    description["RestoreSummary"]["RestoreInProgress"] = true.into();
    let shown = Table {
        description: description.into(),
        ..table
    };
    Value::map().with("TableDescription", shown.describe("CREATING", counts))
}

/// The source table a point-in-time restore names, by ARN or name, and the name as given.
fn source_table(input: &Value) -> AwsResult<(String, String)> {
    let given = input
        .str("SourceTableArn")
        .or_else(|| input.str("SourceTableName"))
        .ok_or_else(|| {
            AwsError::validation("Either SourceTableArn or SourceTableName must be specified")
        })?;
    let name = table_name(&Value::map().with("TableName", given))?;
    Ok((name, given.to_string()))
}

impl DynamoDb {
    pub(super) fn restore_table_from_backup(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("BackupArn").unwrap_or_default();
        let target = input.str("TargetTableName").unwrap_or_default();
        let table = self.env.store.transaction(|tx| {
            let backup = load_backup(tx, ctx, arn)?.ok_or_else(|| backup_not_found(arn))?;
            let summary = json!({
                "SourceBackupArn": arn,
                "SourceTableArn": backup.table.description["TableArn"],
                "RestoreDateTime": backup.created,
                "RestoreInProgress": false,
            });
            restore(
                tx,
                ctx,
                &backup.table,
                target,
                input,
                Items::Backup(arn),
                summary,
            )
        })?;
        Ok(in_progress(table))
    }

    pub(super) fn restore_table_to_point_in_time(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (source, given) = source_table(input)?;
        let target = input.str("TargetTableName").unwrap_or_default();
        let latest = input.bool("UseLatestRestorableTime") == Some(true);
        let asked = match input.get("RestoreDateTime") {
            Some(Value::Timestamp(at)) => Some(*at),
            _ => None,
        };
        if latest && asked.is_some() {
            return Err(AwsError::validation(
                "Only one of RestoreDateTime or UseLatestRestorableTime can be specified",
            ));
        }
        if !latest && asked.is_none() {
            return Err(AwsError::validation(
                "Either RestoreDateTime or UseLatestRestorableTime must be specified",
            ));
        }
        let now = now_millis();
        let table = self.env.store.transaction(|tx| {
            let table = load_table(tx, ctx, &source)?.ok_or_else(|| table_not_found(&given))?;
            let (earliest, latest_time) = backups::restorable_window(tx, ctx, &source, now)?
                .ok_or_else(|| {
                    AwsError::new(
                        "PointInTimeRecoveryUnavailableException",
                        format!("Point in time recovery is not enabled for table '{source}'"),
                    )
                    .with_status(400)
                })?;
            let at = asked.unwrap_or(latest_time);
            if at < earliest || at > latest_time {
                return Err(AwsError::new(
                    "InvalidRestoreTimeException",
                    "RestoreDateTime must be between EarliestRestorableDateTime and LatestRestorableDateTime",
                )
                .with_status(400));
            }
            let summary = json!({
                "SourceTableArn": table.description["TableArn"],
                "RestoreDateTime": at,
                "RestoreInProgress": false,
            });
            restore(
                tx,
                ctx,
                &table,
                target,
                input,
                Items::PointInTime(at),
                summary,
            )
        })?;
        Ok(in_progress(table))
    }
}

#[cfg(test)]
mod tests {
    use super::super::key::KeySchema;
    use super::*;

    fn table(description: Json) -> Table {
        let schema = KeySchema::from_json(
            &description["KeySchema"],
            &description["AttributeDefinitions"],
        )
        .unwrap();
        Table {
            name: "src".into(),
            description: description.into(),
            created: 0,
            schema: schema.into(),
            ttl_attribute: None,
            recovery_days: None,
        }
    }

    fn provisioned_with_index() -> Table {
        table(json!({
            "TableName": "src",
            "KeySchema": [{"AttributeName": "pk", "KeyType": "HASH"}],
            "AttributeDefinitions": [
                {"AttributeName": "pk", "AttributeType": "S"},
                {"AttributeName": "g", "AttributeType": "N"},
            ],
            "BillingModeSummary": {"BillingMode": "PROVISIONED"},
            "ProvisionedThroughput": {"ReadCapacityUnits": 3, "WriteCapacityUnits": 4,
                                      "NumberOfDecreasesToday": 0},
            "GlobalSecondaryIndexes": [{
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
                "IndexStatus": "ACTIVE",
            }],
        }))
    }

    #[test]
    fn a_restore_is_the_source_tables_create_table() {
        let input = creation_input(&provisioned_with_index(), "copy", &Value::map());
        assert_eq!(input.str("TableName"), Some("copy"));
        assert_eq!(input.str("BillingMode"), Some("PROVISIONED"));
        assert_eq!(
            input.get("ProvisionedThroughput").unwrap().to_json(),
            json!({"ReadCapacityUnits": 3, "WriteCapacityUnits": 4})
        );
        let index = &input
            .get("GlobalSecondaryIndexes")
            .unwrap()
            .as_list()
            .unwrap()[0];
        assert_eq!(
            index.to_json(),
            json!({
                "IndexName": "by-g",
                "KeySchema": [{"AttributeName": "g", "KeyType": "HASH"}],
                "Projection": {"ProjectionType": "ALL"},
                "ProvisionedThroughput": {"ReadCapacityUnits": 1, "WriteCapacityUnits": 2},
            })
        );
        assert_eq!(
            input
                .get("AttributeDefinitions")
                .unwrap()
                .as_list()
                .unwrap()
                .len(),
            2
        );
    }

    #[test]
    fn overrides_replace_indexes_and_billing_and_narrow_the_definitions() {
        let overrides = Value::map()
            .with("BillingModeOverride", PAY_PER_REQUEST)
            .with("GlobalSecondaryIndexOverride", Value::List(vec![]));
        let input = creation_input(&provisioned_with_index(), "copy", &overrides);
        assert_eq!(input.str("BillingMode"), Some(PAY_PER_REQUEST));
        assert!(input.get("ProvisionedThroughput").is_none());
        assert!(input.get("GlobalSecondaryIndexes").is_none());
        assert_eq!(
            input.get("AttributeDefinitions").unwrap().to_json(),
            json!([{"AttributeName": "pk", "AttributeType": "S"}])
        );
    }
}
