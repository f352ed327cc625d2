//! An execution's history: the events GetExecutionHistory returns, numbered from 1 in the
//! order they happen, each naming the event before it on its own path (`previousEventId`:
//! a Parallel branch or a Map iteration has its own chain).
//!
//! Events are numbered as they happen and written in batches: the interpreter flushes
//! before anything that waits (a Task call, a Wait, a branch join) and when the execution
//! closes, so a 100-state Pass chain costs one write, not 200.
//!
//! With the events go the [`Mark`]s: where each path of the execution (the top level, each
//! Parallel branch, each Map iteration) stands, written in the same transaction, so that
//! RedriveExecution and a restart on the same data directory continue from there.

use std::collections::HashMap;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Mutex;

use roto_core::store::Cached;
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
CREATE TABLE IF NOT EXISTS sfn_marks (
    execution_arn TEXT NOT NULL,
    path TEXT NOT NULL,
    mark TEXT NOT NULL,
    PRIMARY KEY (execution_arn, path)
) WITHOUT ROWID;
";

/// Where one path of an execution stands: the state it is in (with what that state needs
/// to run again), or its output once it finished. A path is `""` for the top level and
/// `<parent>/<instance>.<index>` for a branch or an iteration of the state whose instance
/// is `instance`.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
#[serde(rename_all = "camelCase", default)]
pub(crate) struct Mark {
    /// The state the path is in.
    pub state: String,
    /// The state's input.
    pub input: Json,
    /// The workflow variables the state sees.
    pub vars: serde_json::Map<String, Json>,
    /// What names the state's inner paths: the id of its first Entered event, kept when a
    /// redrive enters it again.
    pub instance: i64,
    /// The id of its Entered event, and when that happened (a Wait counts from it).
    pub entered: i64,
    pub entered_at: EpochMillis,
    /// The path's last event.
    pub prev: i64,
    /// The task token the state waits on.
    pub token: Option<String>,
    /// Whether the state's task was handed over (its callback message sent, its activity
    /// task queued), so that only the wait for its token remains.
    pub submitted: bool,
    /// Whether the state's Task call is in flight: made, its outcome not yet known.
    pub dispatched: bool,
    /// The result of the state's Task call, once it completed.
    pub called: Option<Json>,
    /// The id of its `ParallelStateStarted` or `MapStateStarted` event, once added.
    pub started: Option<i64>,
    /// The map run a Distributed Map state started.
    pub map_run: Option<String>,
    /// For an item (or batch) of a map run, or a `.sync` Task: its child execution.
    pub child: Option<String>,
    /// The path's output, once it finished.
    pub done: Option<Json>,
}

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
    /// Each path's mark, and whether it changed since the last flush.
    marks: Mutex<HashMap<String, (Mark, bool)>>,
    /// Held while a flush writes, so that flushes commit in the order they took events.
    flushing: Mutex<()>,
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
            marks: Mutex::new(HashMap::new()),
            flushing: Mutex::new(()),
        }
    }

    /// Sets a path's mark (kept only where events are).
    pub fn mark(&self, path: &str, mark: Mark) {
        if self.record {
            lock(&self.marks).insert(path.to_string(), (mark, true));
        }
    }

    /// Changes a path's mark, if it has one.
    pub fn update_mark(&self, path: &str, change: impl FnOnce(&mut Mark)) {
        if let Some((mark, dirty)) = lock(&self.marks).get_mut(path) {
            change(mark);
            *dirty = true;
        }
    }

    /// Reads a path's mark, if it has one.
    pub fn read_mark<T>(&self, path: &str, read: impl FnOnce(&Mark) -> T) -> Option<T> {
        lock(&self.marks).get(path).map(|(m, _)| read(m))
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
        lock(&self.pending).push(event);
        id
    }

    /// The id of the last event added.
    pub fn last_id(&self) -> i64 {
        self.next_id.load(Ordering::SeqCst) - 1
    }

    /// Writes the events added since the last flush.
    pub fn flush(&self, env: &Env) -> AwsResult<()> {
        let _flushing = lock(&self.flushing);
        let events = std::mem::take(&mut *lock(&self.pending));
        let marks = self.changed_marks();
        if events.is_empty() && marks.is_empty() {
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
            for (path, mark) in &marks {
                tx.execute_cached(
                    "INSERT OR REPLACE INTO sfn_marks (execution_arn, path, mark) VALUES (?1, ?2, ?3)",
                    params![self.arn, path, mark],
                )?;
            }
            Ok::<_, AwsError>(())
        })
    }

    /// The marks changed since the last flush, as JSON texts; a finished path's mark is
    /// then dropped from memory (it never changes again).
    fn changed_marks(&self) -> Vec<(String, String)> {
        let mut marks = lock(&self.marks);
        let changed = marks
            .iter_mut()
            .filter(|(_, (_, dirty))| *dirty)
            .map(|(path, (mark, dirty))| {
                *dirty = false;
                let text = serde_json::to_string(mark).unwrap_or_default();
                (path.clone(), text)
            })
            .collect();
        marks.retain(|_, (mark, _)| mark.done.is_none());
        changed
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The marks an execution's paths left, by path.
pub(super) fn read_marks(env: &Env, arn: &str) -> AwsResult<HashMap<String, Mark>> {
    env.store.read(|c| {
        let mut stmt =
            c.prepare_cached("SELECT path, mark FROM sfn_marks WHERE execution_arn = ?1")?;
        let rows = stmt.query_map([arn], |r| {
            let text: String = r.get(1)?;
            Ok((r.get(0)?, serde_json::from_str(&text).unwrap_or_default()))
        })?;
        rows.collect::<rusqlite::Result<_>>()
            .map_err(AwsError::from)
    })
}

/// Forgets an execution's marks (it succeeded: nothing will continue it).
pub(super) fn forget_marks(env: &Env, arn: &str) -> AwsResult<()> {
    env.store.with(|c| {
        c.execute_cached("DELETE FROM sfn_marks WHERE execution_arn = ?1", [arn])
            .map(|_| ())
            .map_err(AwsError::from)
    })
}

/// How many events an execution has, and the id of its last.
pub(super) fn count(env: &Env, arn: &str) -> AwsResult<(i64, i64)> {
    env.store.read(|c| {
        c.prepare_cached(
            "SELECT COUNT(*), COALESCE(MAX(id), 0) FROM sfn_history WHERE execution_arn = ?1",
        )?
        .query_row([arn], |r| Ok((r.get(0)?, r.get(1)?)))
        .map_err(AwsError::from)
    })
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
