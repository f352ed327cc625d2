//! An execution's history: the events GetExecutionHistory returns, numbered from 1 in the
//! order they happen, each naming the event before it on its own path (`previousEventId`:
//! a Parallel branch or a Map iteration has its own chain).
//!
//! Events are numbered as they happen and written in batches: the interpreter flushes
//! before anything that waits (a Task call, a Wait, a branch join) and when the execution
//! closes, so a 100-state Pass chain costs one write, not 200.

use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Env, Value};
use rusqlite::params;
use serde_json::{json, Value as Json};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sfn_history (
    execution_arn TEXT NOT NULL,
    id INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    kind TEXT NOT NULL,
    prev INTEGER NOT NULL,
    details_key TEXT,
    details TEXT,
    PRIMARY KEY (execution_arn, id)
) WITHOUT ROWID;
";

/// One event, before it is written.
struct Pending {
    id: i64,
    ts: EpochMillis,
    kind: String,
    prev: i64,
    details_key: Option<&'static str>,
    details: Json,
}

/// The events of one execution.
pub(super) struct History {
    arn: String,
    /// Whether events are kept (EXPRESS executions keep none).
    record: bool,
    next_id: AtomicI64,
    pending: Mutex<Vec<Pending>>,
}

impl History {
    /// A history whose next event gets id `next_id` (1 for a new execution); `record`
    /// false numbers events without keeping them.
    pub fn new(arn: &str, next_id: i64, record: bool) -> History {
        History {
            arn: arn.to_string(),
            record,
            next_id: AtomicI64::new(next_id),
            pending: Mutex::new(Vec::new()),
        }
    }

    /// Adds an event after `prev` (0 for none) and moves `prev` to it; answers its id.
    pub fn add(
        &self,
        prev: &mut i64,
        kind: &str,
        details_key: Option<&'static str>,
        details: Json,
    ) -> i64 {
        let id = self.next_id.fetch_add(1, Ordering::SeqCst);
        let previous = std::mem::replace(prev, id);
        if !self.record {
            return id;
        }
        let event = Pending {
            id,
            ts: now_millis(),
            kind: kind.to_string(),
            prev: previous,
            details_key,
            details,
        };
        self.pending
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(event);
        id
    }

    /// The id of the last event added.
    pub fn last_id(&self) -> i64 {
        self.next_id.load(Ordering::SeqCst) - 1
    }

    /// Writes the events added since the last flush.
    pub fn flush(&self, env: &Env) -> AwsResult<()> {
        let events = std::mem::take(&mut *self.pending.lock().unwrap_or_else(|p| p.into_inner()));
        if events.is_empty() {
            return Ok(());
        }
        env.store.transaction(|tx| {
            let mut stmt = tx.prepare_cached(
                "INSERT OR REPLACE INTO sfn_history (execution_arn, id, ts, kind, prev, details_key, details)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for e in &events {
                stmt.execute(params![
                    self.arn,
                    e.id,
                    e.ts,
                    e.kind,
                    e.prev,
                    e.details_key,
                    e.details.to_string()
                ])?;
            }
            Ok::<_, AwsError>(())
        })
    }
}

/// The `inputDetails`/`outputDetails` AWS attaches to a payload.
pub(super) fn payload_details(field: &str, payload: &Json, details: &str) -> Json {
    json!({ field: payload.to_string(), details: {"truncated": false} })
}

/// Reads one page of an execution's events, as GetExecutionHistory returns them.
pub(super) fn read(
    env: &Env,
    arn: &str,
    reverse: bool,
    include_data: bool,
) -> AwsResult<Vec<Value>> {
    env.store.read(|c| {
        let sql = format!(
            "SELECT id, ts, kind, prev, details_key, details FROM sfn_history
             WHERE execution_arn = ?1 ORDER BY id {}",
            if reverse { "DESC" } else { "ASC" }
        );
        let mut stmt = c.prepare_cached(&sql)?;
        let rows = stmt.query_map([arn], |r| {
            let key: Option<String> = r.get(4)?;
            let details: Option<String> = r.get(5)?;
            let mut event = Value::map()
                .with("id", r.get::<_, i64>(0)?)
                .with("timestamp", Value::Timestamp(r.get(1)?))
                .with("type", r.get::<_, String>(2)?);
            let prev: i64 = r.get(3)?;
            if prev > 0 {
                event.insert("previousEventId", prev);
            }
            if let (Some(key), Some(details)) = (key, details) {
                let mut json: Json = serde_json::from_str(&details).unwrap_or_default();
                if !include_data {
                    strip_data(&mut json);
                }
                event.insert(key, Value::from_json(&json));
            }
            Ok(event)
        })?;
        rows.collect::<rusqlite::Result<Vec<_>>>()
            .map_err(AwsError::from)
    })
}

/// Removes the payloads `includeExecutionData: false` leaves out.
fn strip_data(details: &mut Json) {
    if let Some(obj) = details.as_object_mut() {
        for field in ["input", "output", "parameters", "error", "cause"] {
            obj.remove(field);
        }
    }
}
