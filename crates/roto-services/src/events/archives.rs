//! Archives and replays: events a bus received, kept when they match an archive's
//! pattern, and sent again to the bus's rules by StartReplay.
//!
//! A replay runs when it starts (its deliveries are asynchronous like any other), so it is
//! `COMPLETED` by the time DescribeReplay sees it. Replayed events carry `replay-name`, as
//! AWS's do, and are not archived again.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;

use super::buses::{bad_token, no_bus};
use super::rules::parse_pattern;
use super::{bus_name, Events};
use crate::paging;

/// A stored archive.
struct Archive {
    name: String,
    bus: String,
    description: Option<String>,
    pattern: Option<String>,
    retention: i64,
    created: i64,
}

const ARCHIVE_COLUMNS: &str = "name, bus, description, pattern, retention, created";

impl Archive {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Archive> {
        Ok(Archive {
            name: r.get(0)?,
            bus: r.get(1)?,
            description: r.get(2)?,
            pattern: r.get(3)?,
            retention: r.get(4)?,
            created: r.get(5)?,
        })
    }
}

fn archive_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:events:{}:{}:archive/{name}",
        ctx.region, ctx.account
    )
}

fn replay_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:events:{}:{}:replay/{name}",
        ctx.region, ctx.account
    )
}

fn no_archive(name: &str) -> AwsError {
    super::not_found(format!("Archive {name} does not exist."))
}

fn already_exists(what: &str, name: &str) -> AwsError {
    AwsError::new(
        "ResourceAlreadyExistsException",
        format!("{what} {name} already exists."),
    )
    .with_status(400)
}

/// The name at the end of an ARN (`.../archive/<name>`), or the text itself.
fn last_segment(text: &str) -> &str {
    text.rsplit('/').next().unwrap_or(text)
}

impl Events {
    fn find_archive(&self, ctx: &Context, name: &str) -> AwsResult<Archive> {
        self.env
            .store
            .with(|c| {
                c.prepare_cached(&format!(
                    "SELECT {ARCHIVE_COLUMNS} FROM events_archives
                     WHERE account = ?1 AND region = ?2 AND name = ?3"
                ))?
                .query_row([&ctx.account, &ctx.region, name], Archive::from_row)
                .optional()
                .map_err(AwsError::from)
            })?
            .ok_or_else(|| no_archive(name))
    }

    fn archive_counts(&self, ctx: &Context, name: &str) -> AwsResult<(i64, i64)> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT COUNT(*), COALESCE(SUM(LENGTH(event)), 0) FROM events_archived
                 WHERE account = ?1 AND region = ?2 AND archive = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, name], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })
            .map_err(AwsError::from)
        })
    }

    fn archive_value(&self, ctx: &Context, a: &Archive) -> AwsResult<Value> {
        let (count, size) = self.archive_counts(ctx, &a.name)?;
        Ok(Value::map()
            .with("ArchiveName", a.name.as_str())
            .with("ArchiveArn", archive_arn(ctx, &a.name))
            .with("EventSourceArn", super::bus_arn(ctx, &a.bus))
            .with_opt("Description", a.description.as_deref())
            .with_opt("EventPattern", a.pattern.as_deref())
            .with("State", "ENABLED")
            .with("RetentionDays", a.retention)
            .with("SizeBytes", size)
            .with("EventCount", count)
            .with("CreationTime", Value::Timestamp(a.created)))
    }

    /// Keeps `event` in every archive of `bus` whose pattern it matches.
    pub(super) fn archive_event(&self, ctx: &Context, bus: &str, event: &Json) -> AwsResult<()> {
        if event.get("replay-name").is_some() {
            return Ok(());
        }
        let archives: Vec<Archive> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ARCHIVE_COLUMNS} FROM events_archives
                 WHERE account = ?1 AND region = ?2 AND bus = ?3"
            ))?;
            let rows = stmt.query_map([&ctx.account, &ctx.region, bus], Archive::from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let now = self.now();
        for archive in archives {
            let matches = match &archive.pattern {
                Some(p) => parse_pattern(p).is_ok_and(|p| p.matches(event)),
                None => true,
            };
            if matches {
                self.env.store.with(|c| {
                    c.execute_cached(
                        "INSERT INTO events_archived (account, region, archive, time, event)
                         VALUES (?1, ?2, ?3, ?4, ?5)",
                        rusqlite::params![
                            ctx.account,
                            ctx.region,
                            archive.name,
                            now,
                            event.to_string()
                        ],
                    )?;
                    Ok::<_, AwsError>(())
                })?;
            }
        }
        Ok(())
    }

    pub(super) fn create_archive(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("ArchiveName").unwrap_or_default();
        let bus = bus_name(input, "EventSourceArn");
        if !self.bus_exists(ctx, &bus)? {
            return Err(no_bus(&bus));
        }
        if let Some(p) = input.str("EventPattern") {
            parse_pattern(p)?;
        }
        if self.find_archive(ctx, name).is_ok() {
            return Err(already_exists("Archive", name));
        }
        let now = self.now();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO events_archives
                 (account, region, name, bus, description, pattern, retention, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    name,
                    bus,
                    input.str("Description"),
                    input.str("EventPattern"),
                    input.int("RetentionDays").unwrap_or(0),
                    now
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("ArchiveArn", archive_arn(ctx, name))
            .with("State", "ENABLED")
            .with("CreationTime", Value::Timestamp(now)))
    }

    pub(super) fn describe_archive(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let archive = self.find_archive(ctx, input.str("ArchiveName").unwrap_or_default())?;
        self.archive_value(ctx, &archive)
    }

    pub(super) fn update_archive(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let archive = self.find_archive(ctx, input.str("ArchiveName").unwrap_or_default())?;
        if let Some(p) = input.str("EventPattern") {
            parse_pattern(p)?;
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE events_archives SET description = ?4, pattern = ?5, retention = ?6
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    archive.name,
                    input.str("Description").or(archive.description.as_deref()),
                    input.str("EventPattern").or(archive.pattern.as_deref()),
                    input.int("RetentionDays").unwrap_or(archive.retention)
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("ArchiveArn", archive_arn(ctx, &archive.name))
            .with("State", "ENABLED")
            .with("CreationTime", Value::Timestamp(archive.created)))
    }

    pub(super) fn delete_archive(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let archive = self.find_archive(ctx, input.str("ArchiveName").unwrap_or_default())?;
        self.env.store.transaction(|tx| {
            for table in ["events_archives", "events_archived"] {
                let column = if table == "events_archives" {
                    "name"
                } else {
                    "archive"
                };
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND {column} = ?3"
                    ),
                    [&ctx.account, &ctx.region, &archive.name],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_archives(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let source = input
            .str("EventSourceArn")
            .map(|_| bus_name(input, "EventSourceArn"));
        let archives: Vec<Archive> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {ARCHIVE_COLUMNS} FROM events_archives
                 WHERE account = ?1 AND region = ?2 ORDER BY name"
            ))?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], Archive::from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let mut items = Vec::new();
        for a in archives
            .iter()
            .filter(|a| a.name.starts_with(prefix) && source.as_ref().is_none_or(|s| *s == a.bus))
        {
            let mut v = self.archive_value(ctx, a)?;
            for hidden in ["ArchiveArn", "Description", "EventPattern"] {
                v.remove(hidden);
            }
            items.push(v);
        }
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("Archives", page)
            .with_opt("NextToken", next))
    }

    pub(super) fn start_replay(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("ReplayName").unwrap_or_default();
        let archive_name = last_segment(input.str("EventSourceArn").unwrap_or_default());
        let archive = self.find_archive(ctx, archive_name)?;
        let start = match input.get("EventStartTime") {
            Some(Value::Timestamp(t)) => *t,
            _ => 0,
        };
        let end = match input.get("EventEndTime") {
            Some(Value::Timestamp(t)) => *t,
            _ => 0,
        };
        if end <= start {
            return Err(AwsError::validation(
                "Parameter EventEndTime is not valid. Reason: EventStartTime must be before EventEndTime.",
            ));
        }
        let destination = input.get("Destination").cloned().unwrap_or_else(Value::map);
        let bus = bus_name(&destination, "Arn");
        if bus != archive.bus {
            return Err(AwsError::validation(
                "Parameter Destination.Arn is not valid. Reason: Cross event bus replay is not permitted.",
            ));
        }
        let exists = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT 1 FROM events_replays WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .exists([&ctx.account, &ctx.region, name])
            .map_err(AwsError::from)
        })?;
        if exists {
            return Err(already_exists("Replay", name));
        }
        let filters: Vec<String> = destination
            .get("FilterArns")
            .and_then(Value::as_list)
            .unwrap_or(&[])
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect();
        let archived: Vec<String> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT event FROM events_archived
                 WHERE account = ?1 AND region = ?2 AND archive = ?3 AND time >= ?4 AND time < ?5
                 ORDER BY rowid",
            )?;
            let rows = stmt.query_map(
                rusqlite::params![ctx.account, ctx.region, archive.name, start, end],
                |r| r.get::<_, String>(0),
            )?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let now = self.now();
        for text in &archived {
            let Ok(mut event) = serde_json::from_str::<Json>(text) else {
                continue;
            };
            event["replay-name"] = Json::from(name);
            for rule in self.bus_rules(&ctx.account, &ctx.region, &bus)? {
                let wanted = filters.is_empty() || filters.contains(&rule.arn());
                let matches = rule.state == "ENABLED"
                    && rule
                        .pattern
                        .as_deref()
                        .is_some_and(|p| parse_pattern(p).is_ok_and(|p| p.matches(&event)));
                if wanted && matches {
                    self.fire(&rule, &event)?;
                }
            }
        }
        let last = (!archived.is_empty()).then_some(now);
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO events_replays
                 (account, region, name, description, archive, destination, start, end_time, started, last_replayed)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    name,
                    input.str("Description"),
                    archive.name,
                    destination.to_json().to_string(),
                    start,
                    end,
                    now,
                    last
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map()
            .with("ReplayArn", replay_arn(ctx, name))
            .with("State", "STARTING")
            .with("ReplayStartTime", Value::Timestamp(now)))
    }

    fn replays(&self, ctx: &Context) -> AwsResult<Vec<Value>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, description, archive, destination, start, end_time, started, last_replayed
                 FROM events_replays WHERE account = ?1 AND region = ?2 ORDER BY name",
            )?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], |r| {
                let name: String = r.get(0)?;
                let destination: String = r.get(3)?;
                let started: i64 = r.get(6)?;
                Ok(Value::map()
                    .with("ReplayArn", replay_arn(ctx, &name))
                    .with("ReplayName", name)
                    .with_opt("Description", r.get::<_, Option<String>>(1)?)
                    .with("EventSourceArn", archive_arn(ctx, &r.get::<_, String>(2)?))
                    .with(
                        "Destination",
                        Value::from_json(&serde_json::from_str(&destination).unwrap_or_default()),
                    )
                    .with("State", "COMPLETED")
                    .with("EventStartTime", Value::Timestamp(r.get(4)?))
                    .with("EventEndTime", Value::Timestamp(r.get(5)?))
                    .with("ReplayStartTime", Value::Timestamp(started))
                    .with("ReplayEndTime", Value::Timestamp(started))
                    .with_opt(
                        "EventLastReplayedTime",
                        r.get::<_, Option<i64>>(7)?.map(Value::Timestamp),
                    ))
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    fn find_replay(&self, ctx: &Context, name: &str) -> AwsResult<Value> {
        self.replays(ctx)?
            .into_iter()
            .find(|r| r.str("ReplayName") == Some(name))
            .ok_or_else(|| super::not_found(format!("Replay {name} does not exist.")))
    }

    pub(super) fn describe_replay(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.find_replay(ctx, input.str("ReplayName").unwrap_or_default())
    }

    pub(super) fn cancel_replay(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("ReplayName").unwrap_or_default();
        self.find_replay(ctx, name)?;
        Err(AwsError::new(
            "IllegalStatusException",
            format!("Replay {name} is not in a valid state for this operation."),
        )
        .with_status(400))
    }

    pub(super) fn list_replays(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let state = input.str("State");
        let source = input.str("EventSourceArn");
        let items: Vec<Value> = self
            .replays(ctx)?
            .into_iter()
            .filter(|r| {
                r.str("ReplayName").is_some_and(|n| n.starts_with(prefix))
                    && state.is_none_or(|s| r.str("State") == Some(s))
                    && source.is_none_or(|s| r.str("EventSourceArn") == Some(s))
            })
            .map(|mut r| {
                for hidden in ["ReplayArn", "Description", "Destination"] {
                    r.remove(hidden);
                }
                r
            })
            .collect();
        let (page, next) = paging::page(
            items,
            input.int("Limit").unwrap_or(100) as usize,
            input.str("NextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("Replays", page)
            .with_opt("NextToken", next))
    }
}
