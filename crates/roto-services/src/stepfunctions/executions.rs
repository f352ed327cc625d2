//! Executions: StartExecution (on a background task), StartSyncExecution (EXPRESS, in the
//! request), DescribeExecution, StopExecution, ListExecutions, GetExecutionHistory and
//! DescribeStateMachineForExecution.
//!
//! A STANDARD execution is a row of `sfn_executions` with its history in `sfn_history`;
//! an EXPRESS one keeps neither, as AWS keeps none (only its result, for
//! StartSyncExecution's answer). Each status change of a STANDARD execution is announced
//! to EventBridge ([`super::status_events`]).

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
use super::interpreter::{Engine, Lane, Outcome, Run};
use super::keyset::Keyset;
use super::machines::{describe_for_execution, no_machine, Runnable};
use super::status_events;
use super::{bad_token, page_size, StepFunctions};
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
    map_run_arn TEXT
);
CREATE INDEX IF NOT EXISTS sfn_executions_machine ON sfn_executions (machine_arn, started);
CREATE INDEX IF NOT EXISTS sfn_executions_map_run ON sfn_executions (map_run_arn, started)
    WHERE map_run_arn IS NOT NULL;
";

/// The largest execution input AWS accepts, in bytes.
const MAX_INPUT: usize = 256 * 1024;

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
}

const COLUMNS: &str =
    "arn, machine_arn, name, status, input, output, error, cause, started, stopped,
    version_arn, alias_arn, definition, role_arn, redrive_count, map_run_arn";

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
    json!({
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
    })
}

/// Why an execution cannot be redriven, as AWS words it.
pub(super) fn redrive_reason(e: &Execution) -> String {
    format!("Execution is {} and cannot be redriven", e.status)
}

/// An execution's redrive status: Roto does not redrive executions.
pub(super) fn redrive_status(_: &Execution) -> &'static str {
    "NOT_REDRIVABLE"
}

/// The execution with this ARN, if it is recorded.
fn read_execution(env: &Env, arn: &str) -> AwsResult<Option<Execution>> {
    env.store.with(|c| {
        c.prepare_cached(&format!(
            "SELECT {COLUMNS} FROM sfn_executions WHERE arn = ?1"
        ))?
        .query_row([arn], from_row)
        .optional()
        .map_err(AwsError::from)
    })
}

/// Announces a recorded execution's status as it now stands.
fn announce_current(env: &Env, arn: &str) {
    match read_execution(env, arn) {
        Ok(Some(e)) => status_events::announce(env, &e),
        Ok(None) => {}
        Err(e) => tracing::warn!(error = %e.message, "Step Functions could not read an execution"),
    }
}

/// Marks an execution closed with its outcome (unless StopExecution closed it first).
pub(super) fn finish(engine: &Engine, arn: &str, outcome: &Outcome) {
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
        let (redrive, reason) = (redrive_status(&e), redrive_reason(&e));
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
            .with("redriveStatus", redrive)
            .with("redriveStatusReason", reason))
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
        let keyset = Keyset::of(input, true)?;
        let rows = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS}, rowid FROM sfn_executions WHERE {column} = ?1
                 AND (?2 IS NULL OR status = ?2)
                 AND (?3 IS NULL OR version_arn = ?3 OR alias_arn = ?3)
                 AND (started, rowid) < (?4, ?5)
                 ORDER BY started DESC, rowid DESC LIMIT ?6"
            ))?;
            let (key, rowid) = keyset.after;
            let params = params![owner, status, filter, key, rowid, keyset.fetch()];
            let rows = stmt.query_map(params, |r| {
                let e = from_row(r)?;
                Ok((e.started, r.get(16)?, list_item(&e)))
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
}
