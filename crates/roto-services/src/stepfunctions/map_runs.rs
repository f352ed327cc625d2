//! Map runs: the resource a Distributed Map state creates for the child executions it
//! starts. A row of `sfn_map_runs` holds its settings, status and counts; while it runs,
//! its live [`MapRun`] (registered with the engine) holds the counts and the settings
//! UpdateMapRun changes, which the running Map obeys at once (a lower `maxConcurrency`
//! holds back the next children; a higher one starts them).
//!
//! DescribeMapRun, ListMapRuns and UpdateMapRun are here; the Map state's work is
//! `interpreter/distributed.rs`.

use std::collections::HashSet;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};
use tokio::sync::Notify;

use super::arn::{self, Target};
use super::interpreter::lock;
use super::machines::not_found;
use super::{bad_token, page_size, StepFunctions};
use crate::paging::page;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sfn_map_runs (
    arn TEXT PRIMARY KEY,
    execution_arn TEXT NOT NULL,
    machine_arn TEXT NOT NULL,
    status TEXT NOT NULL,
    started INTEGER NOT NULL,
    stopped INTEGER,
    max_concurrency INTEGER NOT NULL,
    tolerated_count INTEGER NOT NULL,
    tolerated_percentage REAL NOT NULL,
    counts TEXT NOT NULL,
    redrive_count INTEGER NOT NULL DEFAULT 0,
    redrive_date INTEGER
);
CREATE INDEX IF NOT EXISTS sfn_map_runs_execution ON sfn_map_runs (execution_arn, started);
";

/// The most child executions a map run runs at once, whatever its `MaxConcurrency`.
const MOST_CONCURRENT: i64 = 10_000;

/// How many items (or child executions) are in each state, as DescribeMapRun counts them.
#[derive(Debug, Clone, Copy, Default, PartialEq, Eq)]
pub(crate) struct Counts {
    pub pending: i64,
    pub running: i64,
    pub succeeded: i64,
    pub failed: i64,
    pub timed_out: i64,
    pub aborted: i64,
    pub total: i64,
    pub results_written: i64,
}

impl Counts {
    fn to_json(self) -> Json {
        json!({
            "pending": self.pending, "running": self.running, "succeeded": self.succeeded,
            "failed": self.failed, "timedOut": self.timed_out, "aborted": self.aborted,
            "total": self.total, "resultsWritten": self.results_written,
        })
    }

    /// Moves `n` from running to the bucket of a child's closing status.
    pub fn close(&mut self, status: &str, n: i64) {
        self.running -= n;
        match status {
            "SUCCEEDED" => self.succeeded += n,
            "TIMED_OUT" => self.timed_out += n,
            "ABORTED" => self.aborted += n,
            _ => self.failed += n,
        }
    }
}

/// What UpdateMapRun may change.
#[derive(Debug, Clone, Copy)]
pub(crate) struct Settings {
    /// Children at once; 0 for as many as Step Functions allows.
    pub max_concurrency: i64,
    pub tolerated_count: i64,
    pub tolerated_percentage: f64,
}

impl Settings {
    /// Whether `failed` failures out of `total` children stay within the tolerance.
    pub fn tolerates(&self, failed: i64, total: i64) -> bool {
        let by_percentage = (self.tolerated_percentage / 100.0 * total as f64).floor() as i64;
        failed <= self.tolerated_count.max(by_percentage)
    }
}

/// A map run while its Map state runs.
pub(crate) struct MapRun {
    /// Its ARN.
    pub arn: String,
    /// The ARN its child executions name as their state machine (`machine/label`).
    pub machine_arn: String,
    settings: Mutex<Settings>,
    /// Item counts and child execution counts.
    counts: Mutex<(Counts, Counts)>,
    /// Children started and not yet closed.
    active: Mutex<usize>,
    /// The child executions running now, by ARN.
    pub children: Mutex<HashSet<String>>,
    /// Set once the run stops: children not yet started never start.
    stopping: AtomicBool,
    changed: Notify,
}

impl MapRun {
    fn new(arn: String, machine_arn: String, settings: Settings) -> MapRun {
        MapRun {
            arn,
            machine_arn,
            settings: Mutex::new(settings),
            counts: Mutex::new(Default::default()),
            active: Mutex::new(0),
            children: Mutex::new(HashSet::new()),
            stopping: AtomicBool::new(false),
            changed: Notify::new(),
        }
    }

    /// Opens a closed map run again for a redrive of its parent: `RUNNING`, its redrive
    /// count and date moved on, with the settings it had. Answers it and its redrive count.
    pub fn reopen(env: &Env, arn: &str) -> AwsResult<(Arc<MapRun>, i64)> {
        env.store.with(|c| {
            c.query_row_cached(
                "UPDATE sfn_map_runs SET status = 'RUNNING', stopped = NULL,
                 redrive_count = redrive_count + 1, redrive_date = ?2 WHERE arn = ?1
                 RETURNING machine_arn, max_concurrency, tolerated_count, tolerated_percentage,
                 redrive_count",
                params![arn, now_millis()],
                |r| {
                    let settings = Settings {
                        max_concurrency: r.get(1)?,
                        tolerated_count: r.get(2)?,
                        tolerated_percentage: r.get(3)?,
                    };
                    let run = MapRun::new(arn.to_string(), r.get(0)?, settings);
                    Ok((Arc::new(run), r.get(4)?))
                },
            )
            .map_err(AwsError::from)
        })
    }

    /// A map run that was running when the server stopped, with the settings it had, for
    /// its Map state to go on with.
    pub fn resume(env: &Env, arn: &str) -> AwsResult<Arc<MapRun>> {
        env.store.read(|c| {
            c.query_row_cached(
                "SELECT machine_arn, max_concurrency, tolerated_count, tolerated_percentage
                 FROM sfn_map_runs WHERE arn = ?1",
                [arn],
                |r| {
                    let settings = Settings {
                        max_concurrency: r.get(1)?,
                        tolerated_count: r.get(2)?,
                        tolerated_percentage: r.get(3)?,
                    };
                    Ok(Arc::new(MapRun::new(arn.to_string(), r.get(0)?, settings)))
                },
            )
            .map_err(AwsError::from)
        })
    }

    /// Records a new map run for the execution `execution_arn`.
    pub fn create(
        env: &Env,
        execution_arn: &str,
        (arn, machine_arn): (String, String),
        settings: Settings,
    ) -> AwsResult<Arc<MapRun>> {
        let run = MapRun::new(arn, machine_arn, settings);
        env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO sfn_map_runs (arn, execution_arn, machine_arn, status, started,
                 max_concurrency, tolerated_count, tolerated_percentage, counts)
                 VALUES (?1, ?2, ?3, 'RUNNING', ?4, ?5, ?6, ?7, ?8)",
                params![
                    run.arn,
                    execution_arn,
                    run.machine_arn,
                    now_millis(),
                    settings.max_concurrency,
                    settings.tolerated_count,
                    settings.tolerated_percentage,
                    run.counts_json().to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Arc::new(run))
    }

    /// The settings now.
    pub fn settings(&self) -> Settings {
        *lock(&self.settings)
    }

    /// Changes the counts.
    pub fn count(&self, change: impl FnOnce(&mut Counts, &mut Counts)) {
        let mut counts = lock(&self.counts);
        let (items, executions) = &mut *counts;
        change(items, executions);
    }

    /// The item and execution counts as DescribeMapRun shows them.
    fn counts_json(&self) -> Json {
        let (items, executions) = *lock(&self.counts);
        json!({"itemCounts": items.to_json(), "executionCounts": executions.to_json()})
    }

    /// Waits until another child may start under `maxConcurrency`, and counts it.
    pub async fn acquire(&self) {
        loop {
            let notified = self.changed.notified();
            tokio::pin!(notified);
            notified.as_mut().enable();
            {
                let limit = match self.settings().max_concurrency {
                    n if n <= 0 || n > MOST_CONCURRENT => MOST_CONCURRENT,
                    n => n,
                };
                let mut active = lock(&self.active);
                if (*active as i64) < limit {
                    *active += 1;
                    return;
                }
            }
            notified.await;
        }
    }

    /// Holds back every child not yet started.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Whether the run is stopping.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// A child closed: the next may start.
    pub fn release(&self) {
        *lock(&self.active) -= 1;
        self.changed.notify_waiters();
    }

    /// Applies UpdateMapRun's changes.
    fn update(&self, update: impl FnOnce(&mut Settings)) {
        update(&mut lock(&self.settings));
        self.changed.notify_waiters();
    }

    /// Records how the map run ended, with its final counts.
    pub fn close(&self, env: &Env, status: &str) {
        let result = env.store.with(|c| {
            c.execute_cached(
                "UPDATE sfn_map_runs SET status = ?2, stopped = ?3, counts = ?4
                 WHERE arn = ?1 AND status = 'RUNNING'",
                params![
                    self.arn,
                    status,
                    now_millis(),
                    self.counts_json().to_string()
                ],
            )
        });
        if let Err(e) = result {
            tracing::warn!(error = %e, "Step Functions could not record a map run's end");
        }
    }
}

/// A map run as stored.
struct Row {
    arn: String,
    execution_arn: String,
    machine_arn: String,
    status: String,
    started: EpochMillis,
    stopped: Option<EpochMillis>,
    settings: Settings,
    counts: Json,
    redrive_count: i64,
    redrive_date: Option<EpochMillis>,
}

fn read_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Row> {
    let counts: String = r.get(9)?;
    Ok(Row {
        arn: r.get(0)?,
        execution_arn: r.get(1)?,
        machine_arn: r.get(2)?,
        status: r.get(3)?,
        started: r.get(4)?,
        stopped: r.get(5)?,
        settings: Settings {
            max_concurrency: r.get(6)?,
            tolerated_count: r.get(7)?,
            tolerated_percentage: r.get(8)?,
        },
        counts: serde_json::from_str(&counts).unwrap_or_default(),
        redrive_count: r.get(10)?,
        redrive_date: r.get(11)?,
    })
}

const COLUMNS: &str = "arn, execution_arn, machine_arn, status, started, stopped,
    max_concurrency, tolerated_count, tolerated_percentage, counts, redrive_count, redrive_date";

impl StepFunctions {
    /// The map run an ARN names, or ResourceNotFound.
    pub(super) fn existing_map_run(&self, ctx: &Context, arn_text: &str) -> AwsResult<String> {
        let parsed = arn::parse(arn_text)?;
        if parsed.target != Target::MapRun {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        let found = self
            .map_run_row(arn_text)?
            .filter(|_| arn::in_scope(&parsed, ctx));
        found.map(|r| r.arn).ok_or_else(|| not_found(arn_text))
    }

    fn map_run_row(&self, arn: &str) -> AwsResult<Option<Row>> {
        self.env.store.with(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sfn_map_runs WHERE arn = ?1"
            ))?
            .query_row([arn], read_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    pub(super) fn describe_map_run(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = self.existing_map_run(ctx, input.str("mapRunArn").unwrap_or_default())?;
        let row = self.map_run_row(&arn)?.ok_or_else(|| not_found(&arn))?;
        let (settings, counts) = match self.engine.map_run(&arn) {
            Some(live) => (live.settings(), live.counts_json()),
            None => (row.settings, row.counts),
        };
        let counts = Value::from_json(&counts);
        Ok(Value::map()
            .with("mapRunArn", row.arn)
            .with("executionArn", row.execution_arn)
            .with("status", row.status)
            .with("startDate", Value::Timestamp(row.started))
            .with_opt("stopDate", row.stopped.map(Value::Timestamp))
            .with("maxConcurrency", settings.max_concurrency)
            .with("toleratedFailurePercentage", settings.tolerated_percentage)
            .with("toleratedFailureCount", settings.tolerated_count)
            .with_opt("itemCounts", counts.get("itemCounts").cloned())
            .with_opt("executionCounts", counts.get("executionCounts").cloned())
            .with("redriveCount", row.redrive_count)
            .with_opt("redriveDate", row.redrive_date.map(Value::Timestamp)))
    }

    pub(super) fn list_map_runs(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let execution =
            self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        let rows = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM sfn_map_runs WHERE execution_arn = ?1 ORDER BY started, rowid"
            ))?;
            let rows = stmt.query_map([&execution.arn], read_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let items = rows
            .into_iter()
            .map(|r| {
                Value::map()
                    .with("executionArn", r.execution_arn)
                    .with("mapRunArn", r.arn)
                    .with("stateMachineArn", r.machine_arn)
                    .with("startDate", Value::Timestamp(r.started))
                    .with_opt("stopDate", r.stopped.map(Value::Timestamp))
            })
            .collect();
        let (items, next) = page(
            items,
            page_size(input).min(1000),
            input.str("nextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("mapRuns", items)
            .with_opt("nextToken", next))
    }

    pub(super) fn update_map_run(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = self.existing_map_run(ctx, input.str("mapRunArn").unwrap_or_default())?;
        let (concurrency, count) = (
            input.int("maxConcurrency"),
            input.int("toleratedFailureCount"),
        );
        let percentage = match input.get("toleratedFailurePercentage") {
            Some(Value::Float(f)) => Some(*f),
            Some(Value::Integer(i)) => Some(*i as f64),
            _ => None,
        };
        if concurrency.is_none() && count.is_none() && percentage.is_none() {
            return Err(AwsError::validation(
                "Must specify at least one of maxConcurrency, toleratedFailureCount or toleratedFailurePercentage",
            ));
        }
        let apply = |s: &mut Settings| {
            s.max_concurrency = concurrency.unwrap_or(s.max_concurrency);
            s.tolerated_count = count.unwrap_or(s.tolerated_count);
            s.tolerated_percentage = percentage.unwrap_or(s.tolerated_percentage);
        };
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sfn_map_runs SET
                 max_concurrency = COALESCE(?2, max_concurrency),
                 tolerated_count = COALESCE(?3, tolerated_count),
                 tolerated_percentage = COALESCE(?4, tolerated_percentage)
                 WHERE arn = ?1",
                params![arn, concurrency, count, percentage],
            )
            .map_err(AwsError::from)
        })?;
        if let Some(live) = self.engine.map_run(&arn) {
            live.update(apply);
        }
        Ok(Value::map())
    }
}
