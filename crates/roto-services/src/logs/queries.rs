//! Logs Insights: saved query definitions (Put/Describe/DeleteQueryDefinition), queries
//! (StartQuery, GetQueryResults, StopQuery, DescribeQueries), and the record views they
//! share with GetLogRecord and GetLogGroupFields.
//!
//! A query runs to completion inside StartQuery, over the events of its log groups whose
//! timestamps fall in `[startTime, endTime]` (epoch seconds, both ends included), so
//! GetQueryResults always finds it `Complete`. Results are kept for 7 days, as AWS keeps
//! them. `@ptr` names one event (its log group and row id) for GetLogRecord.

use std::collections::BTreeMap;

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::insights::{add_json_fields, Datum, Query, Record};
use super::{
    document, from_document, group_arn, group_of, invalid, limit_exceeded, name_of_arn,
    name_of_token, page_of, token_of, Logs,
};

/// How long a query's results are kept.
const RESULTS_KEPT_MS: i64 = 7 * 24 * 3600 * 1000;
/// The rows a query returns when StartQuery names no limit.
const DEFAULT_QUERY_LIMIT: usize = 10_000;
/// How many query definitions one account may save in a region.
const MAX_DEFINITIONS: i64 = 1000;
/// The page size DescribeQueries and DescribeQueryDefinitions use by default.
const DEFAULT_LIST_PAGE: i64 = 1000;
/// The events GetLogGroupFields samples at most.
const FIELD_SAMPLE: i64 = 10_000;

/// One stored event, as the record views read it.
struct StoredEvent {
    id: i64,
    ts: i64,
    stream: String,
    ingested: i64,
    message: String,
}

impl StoredEvent {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<StoredEvent> {
        Ok(StoredEvent {
            id: r.get(0)?,
            ts: r.get(1)?,
            stream: r.get(2)?,
            ingested: r.get(3)?,
            message: r.get(4)?,
        })
    }

    /// The event's Insights record: the system fields and a JSON message's members.
    fn record(&self, ctx: &Context, group: &str) -> Record {
        let mut record = Record::new();
        add_json_fields(&mut record, &self.message);
        record.insert("@timestamp".into(), Datum::Time(self.ts));
        record.insert("@ingestionTime".into(), Datum::Time(self.ingested));
        record.insert("@message".into(), Datum::Str(self.message.clone()));
        record.insert("@logStream".into(), Datum::Str(self.stream.clone()));
        record.insert(
            "@log".into(),
            Datum::Str(format!("{}:{group}", ctx.account)),
        );
        record.insert("@ptr".into(), Datum::Str(pointer(group, self.id)));
        record
    }
}

/// The `@ptr` of an event.
fn pointer(group: &str, id: i64) -> String {
    token_of(&serde_json::json!([group, id]).to_string())
}

/// `ResourceNotFoundException` for a query id.
fn no_query() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified query does not exist.",
    )
    .with_status(400)
}

/// Where a page of a query's results or groups starts: after the `nextToken`'s offset.
fn offset_of(input: &Value) -> AwsResult<usize> {
    match input.str("nextToken") {
        Some(t) => name_of_token(t)?
            .parse::<usize>()
            .map_err(|_| super::bad_token()),
        None => Ok(0),
    }
}

/// `ResourceNotFoundException` for a query definition id.
fn no_definition() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified query definition does not exist.",
    )
    .with_status(400)
}

impl Logs {
    /// The events of `group` with timestamps in `[from, to]`, newest first, at most `limit`.
    fn events_between(
        &self,
        ctx: &Context,
        group: &str,
        from: i64,
        to: i64,
        limit: i64,
    ) -> AwsResult<Vec<StoredEvent>> {
        let retention = self.existing_group(ctx, group)?.retention;
        let from = from.max(self.retained_since(retention));
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, ts, stream, ingested, message FROM logs_events
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND ts >= ?4 AND ts <= ?5
                 ORDER BY ts DESC, id DESC LIMIT ?6",
            )?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, group, from, to, limit],
                StoredEvent::from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    pub(super) fn put_query_definition(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let existing = match input.str("queryDefinitionId") {
            Some(id) => Some(self.query_definition(ctx, id)?.ok_or_else(no_definition)?),
            None => None,
        };
        if existing.is_none() && self.definition_count(ctx)? >= MAX_DEFINITIONS {
            return Err(limit_exceeded());
        }
        let id = existing
            .as_ref()
            .and_then(|d| d.str("queryDefinitionId"))
            .map_or_else(roto_core::dispatch::new_request_id, str::to_string);
        let definition = Value::map()
            .with("queryDefinitionId", id.as_str())
            .with("name", input.str("name").unwrap_or_default())
            .with("queryString", input.str("queryString").unwrap_or_default())
            .with(
                "queryLanguage",
                input.str("queryLanguage").unwrap_or("CWLI"),
            )
            .with("lastModified", self.now())
            .with(
                "logGroupNames",
                input
                    .get("logGroupNames")
                    .cloned()
                    .unwrap_or(Value::List(Vec::new())),
            )
            .with_opt("parameters", input.get("parameters").cloned());
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO logs_query_definitions (account, region, id, name, config)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![
                    ctx.account,
                    ctx.region,
                    id,
                    input.str("name").unwrap_or_default(),
                    document(&definition)
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("queryDefinitionId", id))
    }

    fn query_definition(&self, ctx: &Context, id: &str) -> AwsResult<Option<Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM logs_query_definitions WHERE account = ?1 AND region = ?2 AND id = ?3",
            )?
            .query_row(params![ctx.account, ctx.region, id], |r| r.get::<_, String>(0))
            .optional()
            .map(|d| d.as_deref().map(from_document))
            .map_err(AwsError::from)
        })
    }

    fn definition_count(&self, ctx: &Context) -> AwsResult<i64> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT COUNT(*) FROM logs_query_definitions WHERE account = ?1 AND region = ?2",
            )?
            .query_row(params![ctx.account, ctx.region], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    pub(super) fn describe_query_definitions(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = input.str("queryDefinitionNamePrefix").unwrap_or_default();
        let language = input.str("queryLanguage");
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let limit = input.int("maxResults").unwrap_or(DEFAULT_LIST_PAGE).max(1) as usize;
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT name || char(0) || id, config FROM logs_query_definitions
                 WHERE account = ?1 AND region = ?2 AND substr(name, 1, length(?3)) = ?3
                   AND name || char(0) || id > ?4
                 ORDER BY name || char(0) || id",
            )?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, prefix, after.unwrap_or_default()],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .filter(|(_, d)| {
                language.is_none_or(|l| from_document(d).str("queryLanguage") == Some(l))
            })
            .take(limit + 1)
            .collect();
        Ok(page_of(rows, limit, "queryDefinitions"))
    }

    pub(super) fn delete_query_definition(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let n = self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM logs_query_definitions WHERE account = ?1 AND region = ?2 AND id = ?3",
                params![
                    ctx.account,
                    ctx.region,
                    input.str("queryDefinitionId").unwrap_or_default()
                ],
            )
            .map_err(AwsError::from)
        })?;
        if n == 0 {
            return Err(no_definition());
        }
        Ok(Value::map().with("success", true))
    }

    /// The log groups a StartQuery names, checked to exist.
    fn query_groups(&self, ctx: &Context, input: &Value) -> AwsResult<Vec<String>> {
        let list = |member: &str| {
            input.get(member).and_then(Value::as_list).map(|l| {
                l.iter()
                    .filter_map(Value::as_str)
                    .map(|id| name_of_arn(id).unwrap_or(id).to_string())
                    .collect::<Vec<_>>()
            })
        };
        let given = [
            input.str("logGroupName").map(|n| vec![n.to_string()]),
            list("logGroupNames"),
            list("logGroupIdentifiers"),
        ];
        let mut named = given.into_iter().flatten();
        let groups = match (named.next(), named.next()) {
            (Some(groups), None) if !groups.is_empty() => groups,
            (Some(_), Some(_)) => return Err(invalid(
                "Only one of logGroupName, logGroupNames or logGroupIdentifiers may be specified.",
            )),
            _ => {
                return Err(invalid(
                    "Must specify either logGroupName, logGroupNames or logGroupIdentifiers.",
                ))
            }
        };
        for group in &groups {
            if self.group(ctx, group)?.is_none() {
                return Err(AwsError::new(
                    "ResourceNotFoundException",
                    format!(
                        "Log group '{group}' does not exist for account ID '{}'",
                        ctx.account
                    ),
                )
                .with_status(400));
            }
        }
        Ok(groups)
    }

    pub(super) fn start_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let language = input.str("queryLanguage").unwrap_or("CWLI");
        if language != "CWLI" {
            return Err(invalid(format!(
                "Query language {language} is not supported; use CWLI."
            )));
        }
        let text = input.str("queryString").unwrap_or_default();
        let start = input.int("startTime").unwrap_or_default();
        let end = input.int("endTime").unwrap_or_default();
        if end < start {
            return Err(invalid("End time should not be before the start time"));
        }
        let groups = self.query_groups(ctx, input)?;
        let query = Query::parse(text).map_err(|e| {
            AwsError::new("MalformedQueryException", e.message.clone())
                .with_status(400)
                .with_field(
                    "queryCompileError",
                    Value::map()
                        .with(
                            "location",
                            Value::map()
                                .with("startCharOffset", e.start)
                                .with("endCharOffset", e.end),
                        )
                        .with("message", e.message),
                )
        })?;
        let limit = input
            .int("limit")
            .map_or(DEFAULT_QUERY_LIMIT, |l| l.max(1) as usize);
        let (from, to) = (start.saturating_mul(1000), end.saturating_mul(1000) + 999);
        let mut records = Vec::new();
        let mut bytes = 0usize;
        for group in &groups {
            for event in self.events_between(ctx, group, from, to, i64::MAX)? {
                bytes += event.message.len();
                records.push(event.record(ctx, group));
            }
        }
        records.sort_by(|a, b| {
            let ts = |r: &Record| match r.get("@timestamp") {
                Some(Datum::Time(t)) => *t,
                _ => 0,
            };
            ts(b).cmp(&ts(a))
        });
        let scanned = records.len();
        let outcome = query.run(records, limit);
        let results: Vec<Value> = outcome
            .rows
            .iter()
            .map(|row| {
                Value::List(
                    row.iter()
                        .map(|(field, value)| {
                            Value::map()
                                .with("field", field.as_str())
                                .with("value", value.as_str())
                        })
                        .collect(),
                )
            })
            .collect();
        let statistics = Value::map()
            .with("recordsMatched", outcome.matched as f64)
            .with("recordsScanned", scanned as f64)
            .with("estimatedRecordsSkipped", 0.0)
            .with("bytesScanned", bytes as f64)
            .with("estimatedBytesSkipped", 0.0)
            .with("logGroupsScanned", groups.len() as f64);
        let id = roto_core::dispatch::new_request_id();
        let now = self.now();
        let info = Value::map()
            .with("queryLanguage", "CWLI")
            .with("queryId", id.as_str())
            .with("queryString", text)
            .with("status", "Complete")
            .with("createTime", now)
            .with("logGroupName", groups[0].as_str())
            .with("queryDuration", 0i64)
            .with("bytesScanned", bytes as f64);
        let stored = Value::map()
            .with("info", info)
            .with("groups", groups.iter().map(Value::from).collect::<Vec<_>>())
            .with("results", results)
            .with("statistics", statistics);
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO logs_queries (account, region, id, created, config)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![ctx.account, ctx.region, id, now, document(&stored)],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("queryId", id))
    }

    /// A query still within its 7 days.
    fn stored_query(&self, ctx: &Context, id: &str) -> AwsResult<Value> {
        self.env
            .store
            .with(|c| {
                c.prepare_cached(
                    "SELECT config FROM logs_queries
                     WHERE account = ?1 AND region = ?2 AND id = ?3 AND created >= ?4",
                )?
                .query_row(
                    params![ctx.account, ctx.region, id, self.now() - RESULTS_KEPT_MS],
                    |r| r.get::<_, String>(0),
                )
                .optional()
                .map_err(AwsError::from)
            })?
            .map(|d| from_document(&d))
            .ok_or_else(no_query)
    }

    /// ListLogGroupsForQuery: the ARNs of the log groups a query searched, a page at a time.
    pub(super) fn list_log_groups_for_query(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let stored = self.stored_query(ctx, input.str("queryId").unwrap_or_default())?;
        let arns: Vec<String> = stored
            .get("groups")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(|name| group_arn(ctx, name))
            .collect();
        let offset = offset_of(input)?;
        let page = input.int("maxResults").unwrap_or(50).max(1) as usize;
        let rows: Vec<Value> = arns
            .iter()
            .skip(offset)
            .take(page)
            .map(Value::from)
            .collect();
        let next = offset + rows.len();
        Ok(Value::map().with("logGroupIdentifiers", rows).with_opt(
            "nextToken",
            (next < arns.len()).then(|| token_of(&next.to_string())),
        ))
    }

    pub(super) fn get_query_results(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stored = self.stored_query(ctx, input.str("queryId").unwrap_or_default())?;
        let results = stored
            .get("results")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let offset = offset_of(input)?;
        let page = input
            .int("maxItems")
            .filter(|n| *n > 0)
            .map_or(results.len(), |n| n as usize);
        let rows: Vec<Value> = results.iter().skip(offset).take(page).cloned().collect();
        let next = offset + rows.len();
        let info = stored.get("info").cloned().unwrap_or_else(Value::map);
        let mut out = Value::map()
            .with("queryLanguage", "CWLI")
            .with("results", rows)
            .with(
                "statistics",
                stored.get("statistics").cloned().unwrap_or_else(Value::map),
            )
            .with("status", info.str("status").unwrap_or("Complete"));
        if next < results.len() {
            out.insert("nextToken", token_of(&next.to_string()));
        }
        Ok(out)
    }

    pub(super) fn stop_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.stored_query(ctx, input.str("queryId").unwrap_or_default())?;
        Ok(Value::map().with("success", false))
    }

    pub(super) fn describe_queries(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName");
        let status = input.str("status");
        let language = input.str("queryLanguage");
        let limit = input.int("maxResults").unwrap_or(DEFAULT_LIST_PAGE).max(1) as usize;
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT printf('%020d', 9223372036854775807 - created) || id, config FROM logs_queries
                 WHERE account = ?1 AND region = ?2 AND created >= ?3
                 ORDER BY created DESC, id",
            )?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, self.now() - RESULTS_KEPT_MS],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .filter(|(key, _)| after.as_ref().is_none_or(|a| key > a))
            .filter_map(|(key, d)| {
                let stored = from_document(&d);
                let groups = stored
                    .get("groups")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                let info = stored.get("info")?;
                let wanted = group.is_none_or(|g| groups.iter().any(|n| n.as_str() == Some(g)))
                    && status.is_none_or(|s| info.str("status") == Some(s))
                    && language.is_none_or(|l| info.str("queryLanguage") == Some(l));
                wanted.then(|| (key, document(info)))
            })
            .take(limit + 1)
            .collect();
        Ok(page_of(rows, limit, "queries"))
    }

    pub(super) fn get_log_record(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let pointer = input.str("logRecordPointer").unwrap_or_default();
        let (group, id) = name_of_token(pointer)
            .ok()
            .and_then(|t| serde_json::from_str::<(String, i64)>(&t).ok())
            .ok_or_else(|| invalid("The specified log record pointer is invalid."))?;
        let event = self
            .env
            .store
            .with(|c| {
                c.prepare_cached(
                    "SELECT id, ts, stream, ingested, message FROM logs_events
                     WHERE account = ?1 AND region = ?2 AND grp = ?3 AND id = ?4",
                )?
                .query_row(
                    params![ctx.account, ctx.region, group, id],
                    StoredEvent::from_row,
                )
                .optional()
                .map_err(AwsError::from)
            })?
            .ok_or_else(|| {
                AwsError::new(
                    "ResourceNotFoundException",
                    "The specified log record does not exist.",
                )
                .with_status(400)
            })?;
        let record: BTreeMap<String, Value> = event
            .record(ctx, &group)
            .into_iter()
            .filter(|(field, _)| field != "@ptr")
            .map(|(field, value)| {
                let text = match value {
                    Datum::Time(ms) => ms.to_string(),
                    other => other.text(),
                };
                (field, Value::from(text))
            })
            .collect();
        Ok(Value::map().with("logRecord", Value::Map(record)))
    }

    pub(super) fn get_log_group_fields(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_of(input)?;
        let (from, to) = match input.int("time") {
            Some(center) => (center * 1000 - 8 * 60_000, center * 1000 + 8 * 60_000),
            None => (self.now() - 15 * 60_000, self.now()),
        };
        let events = self.events_between(ctx, &group, from, to, FIELD_SAMPLE)?;
        let mut counts: BTreeMap<String, usize> = BTreeMap::new();
        for event in &events {
            for field in event.record(ctx, &group).into_keys() {
                if field != "@ptr" {
                    *counts.entry(field).or_default() += 1;
                }
            }
        }
        let mut fields: Vec<(String, usize)> = counts.into_iter().collect();
        fields.sort_by(|a, b| b.1.cmp(&a.1).then_with(|| a.0.cmp(&b.0)));
        let fields: Vec<Value> = fields
            .into_iter()
            .map(|(name, n)| {
                Value::map()
                    .with("name", name)
                    .with("percent", (n * 100 / events.len()) as i64)
            })
            .collect();
        Ok(Value::map().with("logGroupFields", fields))
    }
}
