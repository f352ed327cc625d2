//! Distributed Map: a Map state whose `ItemProcessor` runs in `DISTRIBUTED` mode. Its
//! items come from the state's input or from S3 (`ItemReader`, [`super::s3_items`]), go
//! through `ItemSelector` and `ItemBatcher`, and each item (or batch) runs as a child
//! execution of a map run ([`crate::stepfunctions::map_runs`]), at most `MaxConcurrency`
//! at once. STANDARD children are recorded executions with their own history (ListExecutions
//! with the map run's ARN lists them); EXPRESS children keep none. Failures beyond
//! `ToleratedFailureCount`/`ToleratedFailurePercentage` stop the rest and fail the state
//! with `States.ExceedToleratedFailureThreshold`. The results are the state's result, or go
//! to S3 (`ResultWriter`).
//!
//! Each item's child is marked on the parent's path (see [`Mark`]) when it starts and when
//! it closes, so that a redrive of the parent redrives the same map run (the children that
//! succeeded keep their outputs, a failed STANDARD child is redriven, the others start
//! again) and a restart of the server continues it (the children that closed keep their
//! outcomes, a running STANDARD child goes on where it stood, the others start again).

use std::sync::Arc;

use roto_core::dispatch::new_request_id;
use roto_core::timestamp::{format, now_millis, TimestampFormat};
use serde_json::{json, Value as Json};
use tokio::task::JoinSet;

use super::fanout::{items, max_concurrency, select};
use super::io::Scope;
use super::jsonata::Query;
use super::s3_items::parameters;
use super::{lock, Engine, Failure, Lane, Mark, Outcome, Run};
use crate::stepfunctions::arn;
use crate::stepfunctions::executions::{self, Execution};
use crate::stepfunctions::map_runs::{MapRun, Settings};
use crate::stepfunctions::status_events;

/// What becomes of one item (or batch) of a map run.
enum Plan {
    /// Its child succeeded before a redrive: kept.
    Kept(Closed),
    /// Its STANDARD child failed, timed out or was aborted: redriven.
    Redrive(Execution),
    /// Its STANDARD child was running when the server stopped: it goes on.
    Continue(Execution),
    /// A new child.
    New,
}

/// A child execution once it closed.
struct Closed {
    execution: Execution,
    outcome: Outcome,
    stopped: i64,
}

impl Closed {
    /// The child's status.
    fn status(&self) -> &'static str {
        match &self.outcome {
            Outcome::Succeeded(_) => "SUCCEEDED",
            Outcome::Failed(_) => "FAILED",
            Outcome::TimedOut(_) => "TIMED_OUT",
            Outcome::Aborted => "ABORTED",
        }
    }

    /// The child as ResultWriter writes it (its `NONE` transformation).
    fn record(&self) -> Json {
        let e = &self.execution;
        let status = self.status();
        let (output, failure) = match &self.outcome {
            Outcome::Succeeded(o) => (Some(o), None),
            Outcome::Failed(f) | Outcome::TimedOut(f) => (None, Some(f)),
            Outcome::Aborted => (None, None),
        };
        let mut record = json!({
            "ExecutionArn": e.arn,
            "Input": e.input,
            "InputDetails": {"Included": true},
            "Name": e.name,
            "RedriveCount": 0,
            "RedriveStatus": "NOT_REDRIVABLE",
            "RedriveStatusReason": format!("Execution is {status} and cannot be redriven"),
            "StartDate": format(e.started, TimestampFormat::Iso8601),
            "StateMachineArn": e.machine_arn,
            "Status": status,
            "StopDate": format(self.stopped, TimestampFormat::Iso8601),
        });
        if let Some(o) = output {
            record["Output"] = json!(o.to_string());
            record["OutputDetails"] = json!({"Included": true});
        }
        if let Some(f) = failure {
            record["Error"] = json!(f.error);
            record["Cause"] = json!(f.cause);
        }
        record
    }

    /// The mark the parent keeps of its item: the child, and its output once it succeeded.
    fn mark(&self) -> Mark {
        let e = &self.execution;
        Mark {
            input: serde_json::from_str(&e.input).unwrap_or_default(),
            entered_at: e.started,
            child: Some(e.arn.clone()),
            done: match &self.outcome {
                Outcome::Succeeded(o) => Some(o.clone()),
                _ => None,
            },
            ..Mark::default()
        }
    }
}

/// How a recorded child execution closed.
fn closed_outcome(e: &Execution) -> Outcome {
    let failure = || {
        Failure::new(
            e.error.clone().unwrap_or_default(),
            e.cause.clone().unwrap_or_default(),
        )
    };
    match e.status.as_str() {
        "SUCCEEDED" => Outcome::Succeeded(
            e.output
                .as_deref()
                .and_then(|o| serde_json::from_str(o).ok())
                .unwrap_or_default(),
        ),
        "TIMED_OUT" => Outcome::TimedOut(failure()),
        "ABORTED" => Outcome::Aborted,
        _ => Outcome::Failed(failure()),
    }
}

/// What every child of one map run shares.
struct Children {
    engine: Arc<Engine>,
    parent: Arc<Run>,
    map_run: Arc<MapRun>,
    definition: Arc<Json>,
    express: bool,
}

impl Children {
    /// Runs one item's child as planned, over `input` (holding `items` items), and marks
    /// it on the parent's `path`.
    async fn run(&self, plan: Plan, input: Json, items: i64, path: String) -> Option<Closed> {
        if let Plan::Kept(closed) = plan {
            return Some(closed);
        }
        self.map_run.acquire().await;
        let closed = self.run_admitted(plan, input, items, &path).await;
        self.map_run.release();
        if let Some(c) = &closed {
            self.parent.history.mark(&path, c.mark());
        }
        closed
    }

    /// What to do with an item given the mark its path left before a redrive or (with
    /// `restart`) a restart.
    fn plan(&self, left: Option<Mark>, restart: bool) -> Plan {
        let Some(mark) = left else {
            return Plan::New;
        };
        let child = mark.child.clone().unwrap_or_default();
        let recorded = match self.express {
            true => None,
            false => executions::read_execution(&self.engine.env, &child)
                .ok()
                .flatten(),
        };
        match (mark.done, recorded) {
            (Some(output), Some(execution)) => Plan::Kept(Closed {
                stopped: execution.stopped.unwrap_or(execution.started),
                execution,
                outcome: Outcome::Succeeded(output),
            }),
            (Some(output), None) => {
                let name = child.rsplit(':').nth(1).unwrap_or_default().to_string();
                let mut execution = self.execution(name, &mark.input);
                execution.arn = child;
                Plan::Kept(Closed {
                    stopped: mark.entered_at,
                    execution,
                    outcome: Outcome::Succeeded(output),
                })
            }
            (None, Some(e)) if restart && e.status == "RUNNING" => Plan::Continue(e),
            (None, Some(e)) if restart => Plan::Kept(Closed {
                stopped: e.stopped.unwrap_or(e.started),
                outcome: closed_outcome(&e),
                execution: e,
            }),
            (None, Some(e)) if matches!(e.status.as_str(), "FAILED" | "TIMED_OUT" | "ABORTED") => {
                Plan::Redrive(e)
            }
            _ => Plan::New,
        }
    }

    /// A new child execution over `input`.
    fn execution(&self, name: String, input: &Json) -> Execution {
        Execution {
            arn: arn::execution(&self.map_run.machine_arn, &name, self.express),
            machine_arn: self.map_run.machine_arn.clone(),
            name,
            status: "RUNNING".into(),
            input: input.to_string(),
            output: None,
            error: None,
            cause: None,
            started: now_millis(),
            stopped: None,
            version_arn: None,
            alias_arn: None,
            definition: self.definition.to_string(),
            role_arn: self.parent.context["Execution"]["RoleArn"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            redrive_count: 0,
            map_run_arn: Some(self.map_run.arn.clone()),
            redrive_date: None,
        }
    }

    async fn run_admitted(
        &self,
        plan: Plan,
        input: Json,
        items: i64,
        path: &str,
    ) -> Option<Closed> {
        if self.map_run.stopping() {
            return None;
        }
        self.map_run.count(|i, e| {
            (i.pending, i.running) = (i.pending - items, i.running + items);
            (e.pending, e.running) = (e.pending - 1, e.running + 1);
        });
        let (execution, run, definition, input, lane) = match plan {
            Plan::Redrive(e) => self.redriven(e)?,
            Plan::Continue(e) => self.continued(e)?,
            _ => self.started(input)?,
        };
        lock(&self.map_run.children).insert(execution.arn.clone());
        self.parent.history.mark(
            path,
            Mark {
                input: serde_json::from_str(&execution.input).unwrap_or_default(),
                entered_at: execution.started,
                child: Some(execution.arn.clone()),
                ..Mark::default()
            },
        );
        self.parent.flush();
        let outcome = run.execute(definition, input, lane).await;
        if !self.express {
            executions::finish(&self.engine, &execution.arn, &outcome);
        }
        lock(&self.map_run.children).remove(&execution.arn);
        let closed = Closed {
            execution,
            outcome,
            stopped: now_millis(),
        };
        self.map_run.count(|i, e| {
            i.close(closed.status(), items);
            e.close(closed.status(), 1);
        });
        Some(closed)
    }

    /// A new child over `input`, recorded (STANDARD) and begun.
    fn started(&self, input: Json) -> Option<Ready> {
        let execution = self.execution(new_request_id(), &input);
        let ctx = &self.parent.ctx;
        if !self.express {
            if let Err(e) = executions::insert(&self.engine.env, ctx, &execution, None) {
                tracing::warn!(error = %e.message, "Step Functions could not record a child execution");
                return None;
            }
            status_events::announce(&self.engine.env, &execution);
        }
        let machine_name = self
            .map_run
            .machine_arn
            .rsplit(":stateMachine:")
            .next()
            .unwrap_or_default();
        let run = executions::begin(
            &self.engine,
            ctx,
            &execution,
            &input,
            machine_name,
            !self.express,
        );
        let lane = Lane {
            prev: 1,
            ..Lane::default()
        };
        Some((execution, run, self.definition.clone(), input, lane))
    }

    /// A child that was running when the server stopped, going on from where it stood.
    fn continued(&self, e: Execution) -> Option<Ready> {
        match executions::continued(&self.engine, &self.parent.ctx, &e, true) {
            Ok((run, definition, input, lane)) => Some((e, run, definition, input, lane)),
            Err(e) => {
                tracing::warn!(error = %e.message, "Step Functions could not continue a child execution");
                None
            }
        }
    }

    /// A failed child redriven: running again from where it failed.
    fn redriven(&self, e: Execution) -> Option<Ready> {
        let env = &self.engine.env;
        let redriven = executions::reopen(env, &e.arn, &e.status, None, now_millis())
            .and_then(|_| executions::read_execution(env, &e.arn))
            .and_then(|e| {
                let e = e.ok_or_else(|| roto_core::AwsError::internal("the child is gone"))?;
                status_events::announce(env, &e);
                let (run, definition, input, lane) =
                    executions::continued(&self.engine, &self.parent.ctx, &e, false)?;
                Ok((e, run, definition, input, lane))
            });
        match redriven {
            Ok(ready) => Some(ready),
            Err(e) => {
                tracing::warn!(error = %e.message, "Step Functions could not redrive a child execution");
                None
            }
        }
    }
}

/// A child ready to run: its execution, run, definition, input and top-level path.
type Ready = (Execution, Arc<Run>, Arc<Json>, Json, Lane);

/// Stops what a map run still runs if its Map state is dropped (its execution stopped or
/// timed out) before it finished; not when the server stops, so that a restart goes on
/// with the map run.
struct Cleanup {
    engine: Arc<Engine>,
    map_run: Arc<MapRun>,
    finished: bool,
}

impl Cleanup {
    /// Aborts the children still running and holds back those not started.
    fn stop_children(&self) {
        self.map_run.stop();
        let children: Vec<String> = lock(&self.map_run.children).drain().collect();
        for arn in children {
            if let Err(e) = executions::abort(&self.engine, &arn, None, None) {
                tracing::warn!(error = %e.message, "Step Functions could not stop a child execution");
            }
            lock(&self.engine.running).remove(&arn);
        }
    }
}

impl Drop for Cleanup {
    fn drop(&mut self) {
        if !self.finished && !self.engine.stopping() {
            self.stop_children();
            self.map_run.close(&self.engine.env, "ABORTED");
        }
        lock(&self.engine.map_runs).remove(&self.map_run.arn);
    }
}

impl Run {
    /// A Distributed Map state's work: its map run from items to results.
    pub(super) async fn distributed(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        input: Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let jsonata = lane.jsonata(state);
        let items = match state.get("ItemReader") {
            Some(reader) => self.read_items(scope, reader, &input, jsonata).await?,
            None => items(scope, state, &input, jsonata)?,
        };
        let total = items.len();
        let mut selected = Vec::with_capacity(total);
        for (index, item) in items.into_iter().enumerate() {
            let map = json!({"Item": {"Index": index, "Value": item}});
            selected.push(select(scope, state, &input, &map, jsonata)?);
        }
        let batches = batches(scope, state, &input, selected, jsonata)?;
        let instance = self.instance(lane);
        let restart = self.restarting();
        let left = self
            .history
            .read_mark(&lane.path, |m| m.map_run.clone())
            .flatten();
        let opened = |e: roto_core::AwsError| Failure::new("States.Runtime", e.message);
        let (map_run, redriven) = match left.as_deref() {
            Some(arn) if restart => (MapRun::resume(&self.engine.env, arn).map_err(opened)?, None),
            Some(arn) => {
                let (map_run, count) = MapRun::reopen(&self.engine.env, arn).map_err(opened)?;
                (map_run, Some(count))
            }
            None => (self.map_run(scope, state, &input)?, None),
        };
        lock(&self.engine.map_runs).insert(map_run.arn.clone(), map_run.clone());
        if !(restart && left.is_some()) {
            self.map_run_started(&map_run, redriven, total, lane);
        }
        let mut cleanup = Cleanup {
            engine: self.engine.clone(),
            map_run: map_run.clone(),
            finished: false,
        };
        let children = Arc::new(Children {
            engine: self.engine.clone(),
            parent: self.clone(),
            map_run: map_run.clone(),
            definition: Arc::new(child_definition(state, lane.jsonata)),
            express: state
                .pointer("/ItemProcessor/ProcessorConfig/ExecutionType")
                .and_then(Json::as_str)
                == Some("EXPRESS"),
        });
        let planned: Vec<_> = batches
            .into_iter()
            .enumerate()
            .map(|(index, (input, items))| {
                let path = lane.inner_path(instance, index);
                let plan = children.plan(self.left(&path), restart);
                (plan, input, items, path)
            })
            .collect();
        map_run.count(|i, e| {
            (i.total, e.total) = (total as i64, planned.len() as i64);
            for (plan, _, items, _) in &planned {
                match plan {
                    Plan::Kept(closed) => {
                        (i.running, e.running) = (i.running + items, e.running + 1);
                        i.close(closed.status(), *items);
                        e.close(closed.status(), 1);
                    }
                    _ => (i.pending, e.pending) = (i.pending + items, e.pending + 1),
                }
            }
        });
        let result = run_children(&children, planned, total as i64, &cleanup).await;
        cleanup.finished = true;
        let (status, kind) = match &result {
            Ok(_) => ("SUCCEEDED", "MapRunSucceeded"),
            Err(_) => ("FAILED", "MapRunFailed"),
        };
        let details = match &result {
            Err(f) => Some(json!({"error": f.error, "cause": f.cause})),
            Ok(_) => None,
        };
        self.history.add(
            &mut lane.prev,
            kind,
            details.as_ref().map(|_| "mapRunFailedEventDetails"),
            details.unwrap_or_default(),
        );
        let result = match result {
            Ok(closed) => {
                self.map_results(scope, state, &input, jsonata, &map_run, closed)
                    .await
            }
            Err(f) => Err(f),
        };
        map_run.close(&self.engine.env, status);
        let kind = if result.is_ok() {
            "MapStateSucceeded"
        } else {
            "MapStateFailed"
        };
        self.history.add(&mut lane.prev, kind, None, json!({}));
        result
    }

    /// Marks the path as in its map run and adds the events that open it: the state's
    /// `MapStateStarted`, then `MapRunStarted` (or `MapRunRedriven` with the map run's
    /// redrive count).
    fn map_run_started(
        &self,
        map_run: &MapRun,
        redriven: Option<i64>,
        total: usize,
        lane: &mut Lane,
    ) {
        self.history
            .update_mark(&lane.path, |m| m.map_run = Some(map_run.arn.clone()));
        self.history.add(
            &mut lane.prev,
            "MapStateStarted",
            Some("mapStateStartedEventDetails"),
            json!({"length": total}),
        );
        match redriven {
            Some(count) => self.history.add(
                &mut lane.prev,
                "MapRunRedriven",
                Some("mapRunRedrivenEventDetails"),
                json!({"mapRunArn": map_run.arn, "redriveCount": count}),
            ),
            None => self.history.add(
                &mut lane.prev,
                "MapRunStarted",
                Some("mapRunStartedEventDetails"),
                json!({"mapRunArn": map_run.arn}),
            ),
        };
        self.flush();
    }

    /// The map run a Distributed Map state starts, recorded.
    fn map_run(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
    ) -> Result<Arc<MapRun>, Failure> {
        let number = |field: &str| -> Result<Option<Json>, Failure> {
            match state
                .get(format!("{field}Path").as_str())
                .and_then(Json::as_str)
            {
                Some(path) => scope.select(path, input).map(Some),
                None => Ok(state.get(field).cloned()),
            }
        };
        let settings = Settings {
            max_concurrency: max_concurrency(scope, state, input)? as i64,
            tolerated_count: number("ToleratedFailureCount")?
                .and_then(|v| v.as_i64())
                .unwrap_or(0),
            tolerated_percentage: number("ToleratedFailurePercentage")?
                .and_then(|v| v.as_f64())
                .unwrap_or(0.0),
        };
        let label = match state.get("Label").and_then(Json::as_str) {
            Some(label) => label.to_string(),
            None => crate::ids::hex(8),
        };
        let machine = self.context["StateMachine"]["Id"]
            .as_str()
            .unwrap_or_default();
        let map_run = MapRun::create(
            &self.engine.env,
            &self.arn,
            arn::map_run(machine, &label),
            settings,
        )
        .map_err(|e| Failure::new("States.Runtime", e.message))?;
        Ok(map_run)
    }

    /// The state's result: the children's outputs (by `ResultWriter.WriterConfig`'s
    /// transformation), or where `ResultWriter` wrote them.
    async fn map_results(
        &self,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
        jsonata: bool,
        map_run: &MapRun,
        closed: Vec<Closed>,
    ) -> Result<Json, Failure> {
        let writer = state.get("ResultWriter");
        let config = writer.and_then(|w| w.get("WriterConfig"));
        let setting = |name: &str, default: &'static str| {
            config
                .and_then(|c| c.get(name))
                .and_then(Json::as_str)
                .unwrap_or(default)
                .to_string()
        };
        let to_s3 = writer.is_some_and(|w| w.get("Resource").is_some());
        let transformation = setting("Transformation", if to_s3 { "NONE" } else { "COMPACT" });
        let shaped: Vec<(bool, Json)> = closed
            .iter()
            .map(|c| match (&c.outcome, transformation.as_str()) {
                (Outcome::Succeeded(o), "COMPACT" | "FLATTEN") => (true, o.clone()),
                (Outcome::Succeeded(_), _) => (true, c.record()),
                (Outcome::Failed(f) | Outcome::TimedOut(f), _) if !to_s3 => (false, f.output()),
                _ => (false, c.record()),
            })
            .collect();
        let flatten = |values: Vec<Json>| -> Vec<Json> {
            if transformation != "FLATTEN" {
                return values;
            }
            values
                .into_iter()
                .flat_map(|v| match v {
                    Json::Array(a) => a,
                    other => vec![other],
                })
                .collect()
        };
        if !to_s3 {
            return Ok(Json::Array(flatten(
                shaped.into_iter().map(|(_, v)| v).collect(),
            )));
        }
        let writer = writer.cloned().unwrap_or_default();
        let params = parameters(scope, &writer, input, jsonata)?;
        let (succeeded, failed): (Vec<_>, Vec<_>) = shaped.into_iter().partition(|(ok, _)| *ok);
        let succeeded = flatten(succeeded.into_iter().map(|(_, v)| v).collect());
        let failed: Vec<Json> = failed.into_iter().map(|(_, v)| v).collect();
        let lines = setting("OutputType", "JSON") == "JSONL";
        let result = self
            .write_results(&params, &map_run.arn, &succeeded, &failed, lines)
            .await?;
        map_run.count(|i, e| {
            i.results_written = i.succeeded + i.failed + i.timed_out;
            e.results_written = e.succeeded + e.failed + e.timed_out;
        });
        Ok(result)
    }
}

/// Runs every child, `MapRun::acquire` bounding how many at once; answers them in item
/// order, or `States.ExceedToleratedFailureThreshold` once failed items pass the tolerance
/// (the children still running are then aborted).
async fn run_children(
    children: &Arc<Children>,
    planned: Vec<(Plan, Json, i64, String)>,
    total: i64,
    cleanup: &Cleanup,
) -> Result<Vec<Closed>, Failure> {
    let mut set = JoinSet::new();
    let count = planned.len();
    for (index, (plan, input, items, path)) in planned.into_iter().enumerate() {
        let children = children.clone();
        set.spawn(async move { (index, items, children.run(plan, input, items, path).await) });
    }
    let mut closed: Vec<Option<Closed>> = (0..count).map(|_| None).collect();
    let (mut failed, mut exceeded) = (0, false);
    while let Some(joined) = set.join_next().await {
        let Ok((index, items, Some(child))) = joined else {
            continue;
        };
        if !matches!(child.outcome, Outcome::Succeeded(_)) {
            failed += items;
            if !exceeded && !children.map_run.settings().tolerates(failed, total) {
                exceeded = true;
                cleanup.stop_children();
            }
        }
        closed[index] = Some(child);
    }
    if exceeded {
        children.map_run.count(|i, e| {
            (i.aborted, i.pending) = (i.aborted + i.pending, 0);
            (e.aborted, e.pending) = (e.aborted + e.pending, 0);
        });
        return Err(Failure::new(
            "States.ExceedToleratedFailureThreshold",
            "The specified tolerated failure threshold was exceeded",
        ));
    }
    Ok(closed.into_iter().flatten().collect())
}

/// The definition each child runs: the item processor's states, in the machine's query
/// language.
pub(crate) fn child_definition(state: &Json, jsonata: bool) -> Json {
    let processor = state.get("ItemProcessor").cloned().unwrap_or_default();
    let mut definition = json!({
        "StartAt": processor.get("StartAt").cloned().unwrap_or_default(),
        "States": processor.get("States").cloned().unwrap_or_default(),
    });
    if jsonata {
        definition["QueryLanguage"] = json!("JSONata");
    }
    definition
}

/// The children's inputs with how many items each holds: one per item, or with
/// `ItemBatcher` `{"BatchInput": ..., "Items": [...]}` of at most `MaxItemsPerBatch` items
/// and `MaxInputBytesPerBatch` bytes.
fn batches(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
    items: Vec<Json>,
    jsonata: bool,
) -> Result<Vec<(Json, i64)>, Failure> {
    let Some(batcher) = state.get("ItemBatcher") else {
        return Ok(items.into_iter().map(|i| (i, 1)).collect());
    };
    let limit = |field: &str| -> Result<Option<u64>, Failure> {
        Ok(
            match batcher
                .get(format!("{field}Path").as_str())
                .and_then(Json::as_str)
            {
                Some(path) => scope.select(path, input)?.as_u64(),
                None => batcher.get(field).and_then(Json::as_u64),
            },
        )
    };
    let most_items = limit("MaxItemsPerBatch")?
        .filter(|n| *n > 0)
        .unwrap_or(u64::MAX);
    let most_bytes = limit("MaxInputBytesPerBatch")?
        .filter(|n| *n > 0)
        .unwrap_or(256 * 1024);
    let batch_input = match (batcher.get("BatchInput"), jsonata) {
        (None, _) => None,
        (Some(t), true) => Some(Query::new(scope, input, None, None).template(t, "BatchInput")?),
        (Some(t), false) => Some(scope.template(t, input)?),
    };
    let wrap = |items: Vec<Json>| {
        let n = items.len() as i64;
        let mut batch = json!({"Items": items});
        if let Some(b) = &batch_input {
            batch["BatchInput"] = b.clone();
        }
        (batch, n)
    };
    let mut out = Vec::new();
    let (mut current, mut bytes) = (Vec::new(), 0u64);
    for item in items {
        let size = item.to_string().len() as u64;
        let full = current.len() as u64 >= most_items || bytes + size > most_bytes;
        if full && !current.is_empty() {
            out.push(wrap(std::mem::take(&mut current)));
            bytes = 0;
        }
        bytes += size;
        current.push(item);
    }
    if !current.is_empty() {
        out.push(wrap(current));
    }
    Ok(out)
}
