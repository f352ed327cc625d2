//! CloudWatch Contributor Insights for DynamoDB: DescribeContributorInsights,
//! UpdateContributorInsights and ListContributorInsights.
//!
//! The setting of a table or one of its global secondary indexes is stored
//! (`ddb_contributor_insights`); no CloudWatch rule is created and no key is counted. As in
//! AWS, the update answers `ENABLING` or `DISABLING` and the next describe finds it
//! `ENABLED` or `DISABLED` (Roto applies it at once), with AWS's rule names
//! (`DynamoDBContributorInsights-<PKC|SKC|PKT|SKT>-<table>[-<index>]-<epoch millis>`: the
//! most accessed and most throttled partition and sort keys, only the throttled ones in
//! `THROTTLED_KEYS` mode). A table and its indexes never enabled are `DISABLED`.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};

use super::tables::{load_table, table_name, table_not_found, Table};
use super::DynamoDb;
use crate::paging;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_contributor_insights (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    index_name TEXT NOT NULL,
    enabled INTEGER NOT NULL,
    mode TEXT NOT NULL,
    changed INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name, index_name)
) WITHOUT ROWID;
";

const DEFAULT_MODE: &str = "ACCESSED_AND_THROTTLED_KEYS";
/// The longest ListContributorInsights page.
const LIST_MAX: usize = 100;

/// One stored setting: enabled, mode, when it last changed.
struct Setting {
    enabled: bool,
    mode: String,
    changed: i64,
}

fn setting(
    conn: &Connection,
    ctx: &Context,
    table: &str,
    index: &str,
) -> AwsResult<Option<Setting>> {
    Ok(conn
        .prepare_cached(
            "SELECT enabled, mode, changed FROM ddb_contributor_insights
             WHERE account = ?1 AND region = ?2 AND table_name = ?3 AND index_name = ?4",
        )?
        .query_row(
            rusqlite::params![ctx.account, ctx.region, table, index],
            |r| {
                Ok(Setting {
                    enabled: r.get(0)?,
                    mode: r.get(1)?,
                    changed: r.get(2)?,
                })
            },
        )
        .optional()?)
}

/// Removes a deleted table's settings.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_contributor_insights
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

/// The global secondary indexes of a table, by name.
fn global_indexes(table: &Table) -> Vec<String> {
    table.description["GlobalSecondaryIndexes"]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|i| i["IndexName"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Loads the table and checks the index (a global secondary index of it, if named).
fn target(conn: &Connection, ctx: &Context, input: &Value) -> AwsResult<(Table, String)> {
    let name = table_name(input)?;
    let table = load_table(conn, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
    let index = input.str("IndexName").unwrap_or_default().to_string();
    if !index.is_empty() && !global_indexes(&table).contains(&index) {
        return Err(AwsError::new(
            "ResourceNotFoundException",
            format!("Requested resource not found: Index: {index} not found for table: {name}"),
        )
        .with_status(400));
    }
    Ok((table, index))
}

/// The rule names of an enabled setting.
fn rules(table: &Table, index: &str, setting: &Setting) -> Vec<Value> {
    let kinds: &[&str] = if setting.mode == "THROTTLED_KEYS" {
        &["PKT", "SKT"]
    } else {
        &["PKC", "SKC", "PKT", "SKT"]
    };
    let sorted = if index.is_empty() {
        table.schema.range.is_some()
    } else {
        table
            .indexes()
            .iter()
            .any(|(name, schema)| name == index && schema.range.is_some())
    };
    let subject = if index.is_empty() {
        table.name.clone()
    } else {
        format!("{}-{index}", table.name)
    };
    kinds
        .iter()
        .filter(|kind| sorted || kind.starts_with('P'))
        .map(|kind| {
            Value::String(format!(
                "DynamoDBContributorInsights-{kind}-{subject}-{}",
                setting.changed
            ))
        })
        .collect()
}

fn status(setting: Option<&Setting>) -> &'static str {
    match setting {
        Some(s) if s.enabled => "ENABLED",
        _ => "DISABLED",
    }
}

impl DynamoDb {
    pub(super) fn describe_contributor_insights(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (table, index, setting) = self.env.store.with(|c| {
            let (table, index) = target(c, ctx, input)?;
            let setting = setting(c, ctx, &table.name, &index)?;
            Ok::<_, AwsError>((table, index, setting))
        })?;
        let mut out = Value::map()
            .with("TableName", table.name.as_str())
            .with_opt("IndexName", Some(index.as_str()).filter(|i| !i.is_empty()))
            .with("ContributorInsightsStatus", status(setting.as_ref()));
        if let Some(setting) = &setting {
            out.insert("LastUpdateDateTime", Value::Timestamp(setting.changed));
            if setting.enabled {
                out.insert(
                    "ContributorInsightsRuleList",
                    Value::List(rules(&table, &index, setting)),
                );
                out.insert("ContributorInsightsMode", setting.mode.as_str());
            }
        }
        Ok(out)
    }

    pub(super) fn update_contributor_insights(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let enable = input.str("ContributorInsightsAction") == Some("ENABLE");
        let now = now_millis();
        let (table, index, mode) = self.env.store.transaction(|tx| {
            let (table, index) = target(tx, ctx, input)?;
            let current = setting(tx, ctx, &table.name, &index)?;
            let mode = input
                .str("ContributorInsightsMode")
                .map(str::to_string)
                .or_else(|| current.map(|c| c.mode))
                .unwrap_or_else(|| DEFAULT_MODE.to_string());
            tx.prepare_cached(
                "INSERT OR REPLACE INTO ddb_contributor_insights
                 (account, region, table_name, index_name, enabled, mode, changed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?
            .execute(rusqlite::params![
                ctx.account,
                ctx.region,
                table.name,
                index,
                enable,
                mode,
                now
            ])?;
            Ok::<_, AwsError>((table, index, mode))
        })?;
        Ok(Value::map()
            .with("TableName", table.name.as_str())
            .with_opt("IndexName", Some(index.as_str()).filter(|i| !i.is_empty()))
            .with(
                "ContributorInsightsStatus",
                if enable { "ENABLING" } else { "DISABLING" },
            )
            .with("ContributorInsightsMode", mode))
    }

    pub(super) fn list_contributor_insights(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let summary = |table: &str, index: &str, setting: Option<&Setting>| {
            Value::map()
                .with("TableName", table)
                .with_opt("IndexName", Some(index).filter(|i| !i.is_empty()))
                .with("ContributorInsightsStatus", status(setting))
                .with_opt("ContributorInsightsMode", setting.map(|s| s.mode.as_str()))
        };
        let summaries: Vec<Value> = self.env.store.with(|c| {
            if input.get("TableName").is_some() {
                let name = table_name(input)?;
                let table = load_table(c, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
                let mut out = Vec::new();
                for index in std::iter::once(String::new()).chain(global_indexes(&table)) {
                    let setting = setting(c, ctx, &name, &index)?;
                    out.push(summary(&name, &index, setting.as_ref()));
                }
                return Ok(out);
            }
            let mut select = c.prepare_cached(
                "SELECT s.table_name, s.index_name, s.enabled, s.mode, s.changed
                 FROM ddb_contributor_insights s
                 WHERE s.account = ?1 AND s.region = ?2
                 ORDER BY s.table_name, s.index_name",
            )?;
            let rows = select.query_map(rusqlite::params![ctx.account, ctx.region], |r| {
                Ok((
                    r.get::<_, String>(0)?,
                    r.get::<_, String>(1)?,
                    Setting {
                        enabled: r.get(2)?,
                        mode: r.get(3)?,
                        changed: r.get(4)?,
                    },
                ))
            })?;
            rows.map(|row| {
                let (table, index, setting) = row?;
                Ok(summary(&table, &index, Some(&setting)))
            })
            .collect::<AwsResult<Vec<Value>>>()
        })?;
        let limit = input
            .int("MaxResults")
            .and_then(|m| usize::try_from(m).ok())
            .filter(|m| *m > 0)
            .unwrap_or(LIST_MAX);
        let (page, next) = paging::page(summaries, limit, input.str("NextToken"), || {
            AwsError::validation("Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("ContributorInsightsSummaries", Value::List(page))
            .with_opt("NextToken", next))
    }
}
