//! Executions: StartExecution (on a background task), StartSyncExecution (EXPRESS, in the
//! request), DescribeExecution, StopExecution, RedriveExecution, ListExecutions,
//! GetExecutionHistory and DescribeStateMachineForExecution.
//!
//! A STANDARD execution is a row of `sfn_executions` with its history in `sfn_history`;
//! an EXPRESS one keeps neither, as AWS keeps none (only its result, for
//! StartSyncExecution's answer). Each status change of a STANDARD execution is announced
//! to EventBridge ([`super::status_events`]).
//!
//! A redrive, and a server restarted on the same data directory, continue an execution
//! from the marks its paths left with its history ([`super::history::Mark`]): a redrive
//! enters the states that did not finish again (a branch or iteration that finished keeps
//! its output); a restart lets the states in progress go on (a Wait keeps its deadline, a
//! callback its token).

use std::sync::Arc;

use roto_core::dispatch::new_request_id;
use roto_core::store::Cached;
use roto_core::timestamp::{format, now_millis, TimestampFormat};
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};

use super::arn::{self, Target};
use super::history::{self, payload_details};
use super::interpreter::{Engine, Lane, Outcome, Resume, Run};
use super::keyset::Keyset;
use super::machines::{describe_for_execution, no_machine, Runnable};
use super::{bad_token, page_size, StepFunctions};
use super::{metrics, status_events};
use crate::paging::page;

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sfn_executions (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    machine_arn TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    input TEXT NOT NULL,
    output TEXT,
    error TEXT,
    cause TEXT,
    started INTEGER NOT NULL,
    stopped INTEGER,
    version_arn TEXT,
    alias_arn TEXT,
    definition TEXT NOT NULL,
    role_arn TEXT NOT NULL,
    trace_header TEXT,
    redrive_count INTEGER NOT NULL DEFAULT 0,
    map_run_arn TEXT,
    redrive_date INTEGER,
    redrive_tokens TEXT
);
CREATE INDEX IF NOT EXISTS sfn_executions_running ON sfn_executions (status)
    WHERE status = 'RUNNING';
CREATE INDEX IF NOT EXISTS sfn_executions_machine ON sfn_executions (machine_arn, started);
CREATE INDEX IF NOT EXISTS sfn_executions_map_run ON sfn_executions (map_run_arn, started)
    WHERE map_run_arn IS NOT NULL;
";

/// The largest execution input AWS accepts, in bytes.
const MAX_INPUT: usize = 256 * 1024;

/// How long after it closed an execution may be redriven: 14 days.
const REDRIVABLE_PERIOD: i64 = 14 * 24 * 3600 * 1000;

/// How long an execution may stay open: a year.
const MAX_OPEN: i64 = 365 * 24 * 3600 * 1000;

/// A redrive needs room for its ExecutionRedriven event and one more under the 25,000
/// event limit.
const MOST_EVENTS_TO_REDRIVE: i64 = 24_999;

/// How long RedriveExecution answers a client token it saw again, and how many it keeps.
const TOKEN_LIFE: i64 = 15 * 60 * 1000;
const TOKENS_KEPT: usize = 10;

/// An execution as stored.
#[derive(Debug, Clone)]
pub(super) struct Execution {
    pub arn: String,
    pub machine_arn: String,
    pub name: String,
    pub status: String,
    pub input: String,
    pub output: Option<String>,
    pub error: Option<String>,
    pub cause: Option<String>,
    pub started: EpochMillis,
    pub stopped: Option<EpochMillis>,
    pub version_arn: Option<String>,
    pub alias_arn: Option<String>,
    pub definition: String,
    pub role_arn: String,
    pub redrive_count: i64,
    /// The map run that started it, for a Distributed Map's child execution.
    pub map_run_arn: Option<String>,
    /// When it was last redriven.
    pub redrive_date: Option<EpochMillis>,
}

const COLUMNS: &str =
    "arn, machine_arn, name, status, input, output, error, cause, started, stopped,
    version_arn, alias_arn, definition, role_arn, redrive_count, map_run_arn, redrive_date";

fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Execution> {
    Ok(Execution {
        arn: r.get(0)?,
        machine_arn: r.get(1)?,
        name: r.get(2)?,
        status: r.get(3)?,
        input: r.get(4)?,
        output: r.get(5)?,
        error: r.get(6)?,
        cause: r.get(7)?,
        started: r.get(8)?,
        stopped: r.get(9)?,
        version_arn: r.get(10)?,
        alias_arn: r.get(11)?,
        definition: r.get(12)?,
        role_arn: r.get(13)?,
        redrive_count: r.get(14)?,
        map_run_arn: r.get(15)?,
        redrive_date: r.get(16)?,
    })
}

fn no_execution(arn: &str) -> AwsError {
    AwsError::new(
        "ExecutionDoesNotExist",
        format!("Execution Does Not Exist: '{arn}'"),
    )
}

/// The input of a start, checked as AWS checks it.
fn execution_input(input: &Value) -> AwsResult<(String, Json)> {
    let text = input.str("input").unwrap_or("{}");
    if text.len() > MAX_INPUT {
        return Err(AwsError::new(
            "InvalidExecutionInput",
            "Invalid State Machine Execution Input: 'The input exceeds the maximum size of 262144 bytes'",
        ));
    }
    let json = serde_json::from_str(text).map_err(|e| {
        AwsError::new(
            "InvalidExecutionInput",
            format!("Invalid State Machine Execution Input: '{e}'"),
        )
    })?;
    Ok((text.to_string(), json))
}

/// The context object's `Execution` and `StateMachine` members.
pub(super) fn context_object(e: &Execution, input: &Json, machine_name: &str) -> Json {
    let mut context = json!({
        "Execution": {
            "Id": e.arn,
            "Input": input,
            "Name": e.name,
            "RoleArn": e.role_arn,
            "StartTime": format(e.started, TimestampFormat::Iso8601),
            "RedriveCount": e.redrive_count,
        },
        "StateMachine": {
            "Id": e.version_arn.clone().unwrap_or_else(|| e.machine_arn.clone()),
            "Name": machine_name,
        },
    });
    if let Some(date) = e.redrive_date {
        context["Execution"]["RedriveTime"] = json!(format(date, TimestampFormat::Iso8601));
    }
    context
}

/// Why an execution cannot be redriven now (with `events` events in its history), as
/// AWS words it; None if it can be.
pub(super) fn not_redrivable(e: &Execution, events: i64, now: EpochMillis) -> Option<String> {
    Some(match e.status.as_str() {
        "RUNNING" | "SUCCEEDED" => format!("Execution is {} and cannot be redriven", e.status),
        _ if now.saturating_sub(e.started) > MAX_OPEN => {
            "Execution has exceeded the max execution time".into()
        }
        _ if now.saturating_sub(e.stopped.unwrap_or(now)) > REDRIVABLE_PERIOD => {
            "Execution redrivable period exceeded".into()
        }
        _ if events >= MOST_EVENTS_TO_REDRIVE => "Execution history event limit exceeded".into(),
        _ => return None,
    })
}

/// An execution's redrive status and, when it cannot be redriven, why. A map run's child
/// is redriven through its map run (by redriving the parent).
pub(super) fn redrive_status(e: &Execution, events: i64) -> (&'static str, Option<String>) {
    match not_redrivable(e, events, now_millis()) {
        Some(reason) => ("NOT_REDRIVABLE", Some(reason)),
        None if e.map_run_arn.is_some() => ("REDRIVABLE_BY_MAP_RUN", None),
        None => ("REDRIVABLE", None),
    }
}

fn not_redrivable_error(reason: impl Into<String>) -> AwsError {
    AwsError::new("ExecutionNotRedrivable", reason)
}

/// The execution with this ARN, if it is recorded.
pub(super) fn read_execution(env: &Env, arn: &str) -> AwsResult<Option<Execution>> {
    env.store.with(|c| {
        c.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sfn_executions WHERE arn = ?1"
        ))?
        .query_row([arn], from_row)
        .optional()
        .map_err(AwsError::from)
    })
}

/// Announces a recorded execution's status as it now stands, and publishes its metrics
/// if it closed.
fn announce_current(env: &Env, arn: &str) {
    match read_execution(env, arn) {
        Ok(Some(e)) => {
            status_events::announce(env, &e);
            if let Some(stopped) = e.stopped.filter(|_| e.status != "RUNNING") {
                metrics::closed(env, &e, &e.status, stopped);
            }
        }
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e.message, "Step Functions could not read an execution"),
    }
}

/// Marks an execution closed with its outcome (unless StopExecution closed it first); a
/// succeeded one forgets its marks, which only a redrive would read.
pub(super) fn finish(engine: &Engine, arn: &str, outcome: &Outcome) {
    if matches!(outcome, Outcome::Succeeded(_)) {
        if let Err(e) = history::forget_marks(&engine.env, arn) {
            tracing::warn!(error = %e.message, "Step Functions could not forget an execution's marks");
        }
    }
    let (status, output, failure) = match outcome {
        Outcome::Succeeded(o) => ("SUCCEEDED", Some(o.to_string()), None),
        Outcome::Failed(f) => ("FAILED", None, Some(f)),
        Outcome::TimedOut(f) => ("TIMED_OUT", None, Some(f)),
        Outcome::Aborted => return,
    };
    let result = engine.env.store.with(|c| {
        c.execute_cached(
            "UPDATE sfn_executions SET status = ?2, output = ?3, error = ?4, cause = ?5, stopped = ?6
             WHERE arn = ?1 AND status = 'RUNNING'",
            params![
                arn,
                status,
                output,
                failure.map(|f| f.error.clone()),
                failure.map(|f| f.cause.clone()),
                now_millis()
            ],
        )
    });
    match result {
        Ok(0) => {}
        Ok(_) => announce_current(&engine.env, arn),
        Err(e) => tracing::warn!(error = %e, "Step Functions could not record an execution's end"),
    }
}

/// Records a new STANDARD execution.
pub(super) fn insert(
    env: &Env,
    ctx: &Context,
    e: &Execution,
    trace_header: Option<&str>,
) -> AwsResult<()> {
    env.store.with(|c| {
        c.execute_cached(
            "INSERT INTO sfn_executions (arn, account, region, machine_arn, name, status, input,
             started, version_arn, alias_arn, definition, role_arn, trace_header, map_run_arn)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14)",
            params![
                e.arn,
                ctx.account,
                ctx.region,
                e.machine_arn,
                e.name,
                e.status,
                e.input,
                e.started,
                e.version_arn,
                e.alias_arn,
                e.definition,
                e.role_arn,
                trace_header,
                e.map_run_arn
            ],
        )
        .map(|_| ())
        .map_err(AwsError::from)
    })
}

/// A run of an execution, its ExecutionStarted event added and written.
pub(super) fn begin(
    engine: &Arc<Engine>,
    ctx: &Context,
    e: &Execution,
    input: &Json,
    machine_name: &str,
    record: bool,
) -> Arc<Run> {
    metrics::started(&engine.env, e);
    let run = Run::new(
        engine.clone(),
        ctx.clone(),
        &e.arn,
        context_object(e, input, machine_name),
        1,
        record,
    );
    let mut details = payload_details("input", input, "inputDetails");
    details["roleArn"] = json!(e.role_arn);
    if let Some(v) = &e.version_arn {
        details["stateMachineVersionArn"] = json!(v);
    }
    if let Some(a) = &e.alias_arn {
        details["stateMachineAliasArn"] = json!(a);
    }
    let mut prev = 0;
    run.history.add(
        &mut prev,
        "ExecutionStarted",
        Some("executionStartedEventDetails"),
        details,
    );
    run.flush();
    engine.register(&run);
    run
}

/// Stops a running execution as StopExecution does: ABORTED, its run told to stop and its
/// ExecutionAborted event written, the change announced. False if it was not running.
pub(super) fn abort(
    engine: &Engine,
    arn: &str,
    error: Option<&str>,
    cause: Option<&str>,
) -> AwsResult<bool> {
    let changed = engine.env.store.with(|c| {
        c.execute_cached(
            "UPDATE sfn_executions SET status = 'ABORTED', stopped = ?2, error = ?3, cause = ?4
             WHERE arn = ?1 AND status = 'RUNNING'",
            params![arn, now_millis(), error, cause],
        )
        .map_err(AwsError::from)
    })?;
    if changed == 0 {
        return Ok(false);
    }
    if let Some(run) = engine.running(arn) {
        run.stop();
        run.abort_event(error, cause);
    }
    announce_current(&engine.env, arn);
    Ok(true)
}

impl StepFunctions {
    /// The execution with this ARN, if it is recorded.
    pub(super) fn execution(&self, arn: &str) -> AwsResult<Option<Execution>> {
        read_execution(&self.env, arn)
    }

    /// The execution an ARN names, or ExecutionDoesNotExist.
    pub(super) fn existing_execution(&self, ctx: &Context, arn_text: &str) -> AwsResult<Execution> {
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Execution(..)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        self.execution(arn_text)?
            .filter(|_| arn::in_scope(&parsed, ctx))
            .ok_or_else(|| no_execution(arn_text))
    }

    /// The execution a start creates, before it is stored.
    fn new_execution(
        &self,
        ctx: &Context,
        input: &Value,
        runnable: &Runnable,
    ) -> AwsResult<(Execution, Json)> {
        let name = match input.str("name") {
            Some(n) => n.to_string(),
            None => new_request_id(),
        };
        arn::check_name(&name)?;
        let (text, json) = execution_input(input)?;
        let express = runnable.machine.kind == "EXPRESS";
        let _ = ctx;
        Ok((
            Execution {
                arn: arn::execution(&runnable.machine.arn, &name, express),
                machine_arn: runnable.machine.arn.clone(),
                name,
                status: "RUNNING".into(),
                input: text,
                output: None,
                error: None,
                cause: None,
                started: now_millis(),
                stopped: None,
                version_arn: runnable.version_arn.clone(),
                alias_arn: runnable.alias_arn.clone(),
                definition: runnable.definition.clone(),
                role_arn: runnable.machine.role_arn.clone(),
                redrive_count: 0,
                map_run_arn: None,
                redrive_date: None,
            },
            json,
        ))
    }

    pub(super) fn start_execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let runnable = self.runnable(ctx, input.str("stateMachineArn").unwrap_or_default())?;
        let (execution, json) = self.new_execution(ctx, input, &runnable)?;
        let express = runnable.machine.kind == "EXPRESS";
        if !express {
            if let Some(existing) = self.execution(&execution.arn)? {
                if existing.status == "RUNNING" && existing.input == execution.input {
                    return Ok(Value::map()
                        .with("executionArn", existing.arn)
                        .with("startDate", Value::Timestamp(existing.started)));
                }
                return Err(AwsError::new(
                    "ExecutionAlreadyExists",
                    format!("Execution Already Exists: '{}'", execution.arn),
                ));
            }
            insert(&self.env, ctx, &execution, input.str("traceHeader"))?;
            status_events::announce(&self.env, &execution);
        }
        let definition = Arc::new(serde_json::from_str(&execution.definition).unwrap_or_default());
        let run = begin(
            &self.engine,
            ctx,
            &execution,
            &json,
            &runnable.machine.name,
            !express,
        );
        let engine = self.engine.clone();
        let arn = execution.arn.clone();
        let unrecorded = express.then(|| execution.clone());
        tokio::spawn(async move {
            let outcome = run
                .execute(
                    definition,
                    json,
                    Lane {
                        prev: 1,
                        ..Lane::default()
                    },
                )
                .await;
            finish(&engine, &arn, &outcome);
            if let Some(e) = unrecorded {
                metrics::closed(&engine.env, &e, outcome.status(), now_millis());
            }
        });
        Ok(Value::map()
            .with("executionArn", execution.arn)
            .with("startDate", Value::Timestamp(execution.started)))
    }

    pub(super) async fn start_sync_execution(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let runnable = self.runnable(ctx, input.str("stateMachineArn").unwrap_or_default())?;
        if runnable.machine.kind != "EXPRESS" {
            return Err(AwsError::new(
                "StateMachineTypeNotSupported",
                "This operation is not supported by this type of state machine",
            ));
        }
        let (execution, json) = self.new_execution(ctx, input, &runnable)?;
        let definition = Arc::new(serde_json::from_str(&execution.definition).unwrap_or_default());
        let run = begin(
            &self.engine,
            ctx,
            &execution,
            &json,
            &runnable.machine.name,
            false,
        );
        let outcome = run
            .execute(
                definition,
                json.clone(),
                Lane {
                    prev: 1,
                    ..Lane::default()
                },
            )
            .await;
        let (status, output, failure) = match &outcome {
            Outcome::Succeeded(o) => ("SUCCEEDED", Some(o.to_string()), None),
            Outcome::Failed(f) => ("FAILED", None, Some(f.clone())),
            Outcome::TimedOut(f) => ("TIMED_OUT", None, Some(f.clone())),
            Outcome::Aborted => ("FAILED", None, None),
        };
        metrics::closed(&self.env, &execution, status, now_millis());
        Ok(Value::map()
            .with("executionArn", execution.arn)
            .with("stateMachineArn", execution.machine_arn)
            .with("name", execution.name)
            .with("startDate", Value::Timestamp(execution.started))
            .with("stopDate", Value::Timestamp(now_millis()))
            .with("status", status)
            .with("input", execution.input)
            .with("inputDetails", Value::map().with("included", true))
            .with_opt("output", output.clone())
            .with_opt(
                "outputDetails",
                output.map(|_| Value::map().with("included", true)),
            )
            .with_opt("error", failure.as_ref().map(|f| f.error.clone()))
            .with_opt("cause", failure.map(|f| f.cause))
            .with(
                "billingDetails",
                Value::map()
                    .with("billedMemoryUsedInMB", 64i64)
                    .with("billedDurationInMilliseconds", 100i64),
            ))
    }

    pub(super) fn describe_execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let e = self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        let (events, _) = history::count(&self.env, &e.arn)?;
        let (redrive, reason) = redrive_status(&e, events);
        Ok(Value::map()
            .with("executionArn", e.arn)
            .with("stateMachineArn", e.machine_arn)
            .with("name", e.name)
            .with("status", e.status)
            .with("startDate", Value::Timestamp(e.started))
            .with_opt("stopDate", e.stopped.map(Value::Timestamp))
            .with("input", e.input)
            .with("inputDetails", Value::map().with("included", true))
            .with_opt(
                "outputDetails",
                e.output
                    .as_ref()
                    .map(|_| Value::map().with("included", true)),
            )
            .with_opt("output", e.output)
            .with_opt("error", e.error)
            .with_opt("cause", e.cause)
            .with_opt("stateMachineVersionArn", e.version_arn)
            .with_opt("stateMachineAliasArn", e.alias_arn)
            .with_opt("mapRunArn", e.map_run_arn)
            .with("redriveCount", e.redrive_count)
            .with_opt("redriveDate", e.redrive_date.map(Value::Timestamp))
            .with("redriveStatus", redrive)
            .with_opt("redriveStatusReason", reason))
    }

    pub(super) async fn redrive_execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let e = self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        if e.status != "RUNNING" {
            self.wound_down(&e.arn).await;
        }
        let now = now_millis();
        let mut tokens = self.redrive_tokens(&e.arn, now)?;
        let token = input.str("clientToken");
        if let Some((_, date)) = tokens.iter().find(|(t, _)| Some(t.as_str()) == token) {
            if e.status == "RUNNING" {
                return Ok(Value::map().with("redriveDate", Value::Timestamp(*date)));
            }
        }
        let (events, _) = history::count(&self.env, &e.arn)?;
        if let Some(reason) = not_redrivable(&e, events, now) {
            return Err(not_redrivable_error(reason));
        }
        if e.map_run_arn.is_some() {
            return Err(not_redrivable_error(
                "Execution is a child of a Map Run and is redriven by redriving its parent",
            ));
        }
        let (machine, _) = e
            .machine_arn
            .split_once('/')
            .unwrap_or((&e.machine_arn, ""));
        if self.machine(machine)?.is_none() {
            return Err(not_redrivable_error("State machine is in DELETING status"));
        }
        if let Some(t) = token {
            tokens.insert(0, (t.to_string(), now));
            tokens.truncate(TOKENS_KEPT);
        }
        let tokens = json!(tokens).to_string();
        if !reopen(&self.env, &e.arn, &e.status, Some(&tokens), now)? {
            return Err(not_redrivable_error(
                "Execution is RUNNING and cannot be redriven",
            ));
        }
        let e = self
            .execution(&e.arn)?
            .ok_or_else(|| no_execution(&e.arn))?;
        status_events::announce(&self.env, &e);
        resume(&self.engine, ctx, &e, false)?;
        Ok(Value::map().with("redriveDate", Value::Timestamp(now)))
    }

    /// Waits (a little) for a stopped execution's run to write its last events and marks,
    /// so that a redrive continues from them.
    async fn wound_down(&self, arn: &str) {
        for _ in 0..200 {
            if self.engine.running(arn).is_none() {
                return;
            }
            tokio::time::sleep(std::time::Duration::from_millis(5)).await;
        }
    }

    /// The client tokens of an execution's recent redrives, with their dates: those of the
    /// last 15 minutes.
    fn redrive_tokens(&self, arn: &str, now: EpochMillis) -> AwsResult<Vec<(String, i64)>> {
        let text: Option<String> = self.env.store.with(|c| {
            c.query_row_cached(
                "SELECT redrive_tokens FROM sfn_executions WHERE arn = ?1",
                [arn],
                |r| r.get(0),
            )
            .map_err(AwsError::from)
        })?;
        let mut tokens: Vec<(String, i64)> = text
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default();
        tokens.retain(|(_, date)| now.saturating_sub(*date) < TOKEN_LIFE);
        Ok(tokens)
    }

    pub(super) fn stop_execution(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let e = self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        let now = now_millis();
        abort(&self.engine, &e.arn, input.str("error"), input.str("cause"))?;
        Ok(Value::map().with("stopDate", Value::Timestamp(e.stopped.unwrap_or(now))))
    }

    pub(super) fn list_executions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (column, owner, filter) = self.executions_owner(ctx, input)?;
        let status = input.str("statusFilter");
        let redriven = input.str("redriveFilter").map(|f| f == "REDRIVEN");
        let keyset = Keyset::of(input, true)?;
        let rows = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS}, rowid FROM sfn_executions WHERE {column} = ?1
                 AND (?2 IS NULL OR status = ?2)
                 AND (?3 IS NULL OR version_arn = ?3 OR alias_arn = ?3)
                 AND (?7 IS NULL OR (redrive_count > 0) = ?7)
                 AND (started, rowid) < (?4, ?5)
                 ORDER BY started DESC, rowid DESC LIMIT ?6"
            ))?;
            let (key, rowid) = keyset.after;
            let params = params![owner, status, filter, key, rowid, keyset.fetch(), redriven];
            let rows = stmt.query_map(params, |r| {
                let e = from_row(r)?;
                Ok((e.started, r.get(17)?, list_item(&e)))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let (items, next) = keyset.page(rows);
        Ok(Value::map()
            .with("executions", items)
            .with_opt("nextToken", next))
    }

    /// Whose executions ListExecutions lists: a map run's children (`mapRunArn`), or a
    /// state machine's (with a version or alias ARN as a filter), as (column, ARN, filter).
    fn executions_owner(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(&'static str, String, Option<String>)> {
        let machine = input.str("stateMachineArn");
        match (machine, input.str("mapRunArn")) {
            (Some(_), Some(_)) => Err(AwsError::validation(
                "Only one of stateMachineArn or mapRunArn can be specified",
            )),
            (None, None) => Err(AwsError::validation(
                "Must specify either stateMachineArn or mapRunArn",
            )),
            (None, Some(map_run)) => {
                Ok(("map_run_arn", self.existing_map_run(ctx, map_run)?, None))
            }
            (Some(arn_text), None) => {
                let runnable = self.runnable(ctx, arn_text)?;
                if runnable.machine.kind == "EXPRESS" {
                    return Err(AwsError::new(
                        "StateMachineTypeNotSupported",
                        "This operation is not supported by this type of state machine",
                    ));
                }
                let filter = (arn_text != runnable.machine.arn).then(|| arn_text.to_string());
                Ok(("machine_arn", runnable.machine.arn, filter))
            }
        }
    }

    pub(super) fn get_execution_history(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let e = self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        let events = history::read(
            &self.env,
            &e.arn,
            input.bool("reverseOrder").unwrap_or(false),
            input.bool("includeExecutionData").unwrap_or(true),
        )?;
        let (events, next) = page(
            events,
            page_size(input).min(1000),
            input.str("nextToken"),
            bad_token,
        )?;
        Ok(Value::map()
            .with("events", events)
            .with_opt("nextToken", next))
    }

    pub(super) fn describe_state_machine_for_execution(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let e = self.existing_execution(ctx, input.str("executionArn").unwrap_or_default())?;
        let (parent, label) = match e.machine_arn.split_once('/') {
            Some((parent, label)) => (parent, Some(label)),
            None => (e.machine_arn.as_str(), None),
        };
        let machine = self
            .machine(parent)?
            .ok_or_else(|| no_machine(&e.machine_arn))?;
        let mut described = describe_for_execution(&machine, &e.definition);
        if let (Some(label), Some(map_run)) = (label, &e.map_run_arn) {
            described.insert("stateMachineArn", e.machine_arn.as_str());
            described.insert("mapRunArn", map_run.as_str());
            described.insert("label", label);
        }
        Ok(described)
    }
}

fn list_item(e: &Execution) -> Value {
    Value::map()
        .with("executionArn", e.arn.as_str())
        .with("stateMachineArn", e.machine_arn.as_str())
        .with("name", e.name.as_str())
        .with("status", e.status.as_str())
        .with("startDate", Value::Timestamp(e.started))
        .with_opt("stopDate", e.stopped.map(Value::Timestamp))
        .with_opt("stateMachineVersionArn", e.version_arn.clone())
        .with_opt("stateMachineAliasArn", e.alias_arn.clone())
        .with_opt("mapRunArn", e.map_run_arn.clone())
        .with("redriveCount", e.redrive_count)
        .with_opt("redriveDate", e.redrive_date.map(Value::Timestamp))
}

/// A recorded execution's run, ready to go on from the marks its paths left: after a
/// redrive (its ExecutionRedriven event added) or a restart of the server. Answers the run,
/// its definition, its input and its top-level path.
pub(super) fn continued(
    engine: &Arc<Engine>,
    ctx: &Context,
    e: &Execution,
    restart: bool,
) -> AwsResult<(Arc<Run>, Arc<Json>, Json, Lane)> {
    let env = &engine.env;
    let (_, last) = history::count(env, &e.arn)?;
    let marks = history::read_marks(env, &e.arn)?;
    let input: Json = serde_json::from_str(&e.input).unwrap_or_default();
    let machine_name = e
        .machine_arn
        .rsplit(":stateMachine:")
        .next()
        .unwrap_or_default();
    let context = context_object(e, &input, machine_name);
    let run = Run::new(engine.clone(), ctx.clone(), &e.arn, context, last + 1, true);
    let mut prev = last;
    if !restart {
        run.history.add(
            &mut prev,
            "ExecutionRedriven",
            Some("executionRedrivenEventDetails"),
            json!({"redriveCount": e.redrive_count}),
        );
    }
    run.resume_from(Resume { marks, restart });
    run.flush();
    engine.register(&run);
    let definition = Arc::new(serde_json::from_str(&e.definition).unwrap_or_default());
    let lane = Lane {
        prev,
        ..Lane::default()
    };
    Ok((run, definition, input, lane))
}

/// Marks a closed execution running again for a redrive at `now` (its count and date
/// moved on); false if it was not closed with `status`.
pub(super) fn reopen(
    env: &Env,
    arn: &str,
    status: &str,
    tokens: Option<&str>,
    now: EpochMillis,
) -> AwsResult<bool> {
    env.store.with(|c| {
        c.execute_cached(
            "UPDATE sfn_executions SET status = 'RUNNING', stopped = NULL, output = NULL,
             error = NULL, cause = NULL, redrive_count = redrive_count + 1,
             redrive_date = ?2, redrive_tokens = COALESCE(?3, redrive_tokens)
             WHERE arn = ?1 AND status = ?4",
            params![arn, now, tokens, status],
        )
        .map(|changed| changed > 0)
        .map_err(AwsError::from)
    })
}

/// Runs a recorded execution on (see [`continued`]) on its own task.
pub(super) fn resume(
    engine: &Arc<Engine>,
    ctx: &Context,
    e: &Execution,
    restart: bool,
) -> AwsResult<()> {
    let (run, definition, input, lane) = continued(engine, ctx, e, restart)?;
    let (engine, arn) = (engine.clone(), e.arn.clone());
    tokio::spawn(async move {
        if restart {
            // At start-up the dispatcher that Task states call through is set just after
            // the services are built.
            for _ in 0..1000 {
                if engine.env.dispatcher().is_some() {
                    break;
                }
                tokio::time::sleep(std::time::Duration::from_millis(5)).await;
            }
        }
        let outcome = run.execute(definition, input, lane).await;
        finish(&engine, &arn, &outcome);
    });
    Ok(())
}

/// At start-up on a data directory that holds executions: runs on the STANDARD executions
/// that were running when the server stopped. A Distributed Map in progress goes on with
/// its map run, which continues its own running children; a map run whose execution no
/// longer runs is closed ABORTED, and so are its running children.
pub(super) fn resume_running(engine: &Arc<Engine>) -> AwsResult<()> {
    let now = now_millis();
    engine.env.store.transaction(|tx| {
        tx.execute_cached(
            "UPDATE sfn_map_runs SET status = 'ABORTED', stopped = ?1 WHERE status = 'RUNNING'
             AND execution_arn NOT IN (SELECT arn FROM sfn_executions WHERE status = 'RUNNING')",
            [now],
        )?;
        tx.execute_cached(
            "UPDATE sfn_executions SET status = 'ABORTED', stopped = ?1
             WHERE status = 'RUNNING' AND map_run_arn IS NOT NULL
             AND map_run_arn NOT IN (SELECT arn FROM sfn_map_runs WHERE status = 'RUNNING')",
            [now],
        )?;
        Ok::<_, AwsError>(())
    })?;
    let running = engine.env.store.read(|c| {
        let mut stmt = c.prepare_cached(&format!(
            "SELECT {COLUMNS}, account, region FROM sfn_executions
             WHERE status = 'RUNNING' AND map_run_arn IS NULL"
        ))?;
        let rows = stmt.query_map([], |r| Ok((from_row(r)?, r.get(17)?, r.get(18)?)))?;
        rows.collect::<rusqlite::Result<Vec<(Execution, String, String)>>>()
            .map_err(AwsError::from)
    })?;
    for (e, account, region) in running {
        resume(engine, &Context::internal(&account, &region), &e, true)?;
    }
    Ok(())
}
