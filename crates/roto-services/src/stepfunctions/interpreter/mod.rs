//! The interpreter: runs an execution's definition state by state on a background task.
//!
//! - this module: the [`Engine`] every execution shares (stop signals, task-token
//!   waiters, activity wake-ups), one [`Run`] per execution, the state loop and each
//!   state type's work, Retry and Catch.
//! - [`io`]: JSONPath input and output processing and templates.
//! - [`jsonata`]: a JSONata state's `{% %}` expressions.
//! - [`choice`]: Choice rules.
//! - [`fanout`]: Parallel branches and inline Map iterations.
//! - [`distributed`]: Distributed Map states, their map runs and child executions;
//!   [`s3_items`] their `ItemReader` and `ResultWriter`.
//! - [`tasks`]: Task states: the service integrations, callbacks and activities.
//!
//! A state runs in its `QueryLanguage`, else the machine's. Workflow variables (`Assign`)
//! live on the [`Lane`]: a branch or an iteration starts with a copy of its parent's, so
//! what it assigns stays inside it.
//!
//! Every wait (Wait states, retry intervals, timeouts) sleeps on the server clock, so
//! `POST /_roto/clock` moves them on.

use std::collections::HashMap;
use std::future::Future;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex};

use roto_core::dispatch::BoxFuture;
use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{Context, Env};
use serde_json::{json, Value as Json};
use tokio::sync::{mpsc, watch, Notify};

use super::history::{payload_details, History, Mark};
use super::map_runs::MapRun;

pub(super) mod choice;
pub(super) mod distributed;
mod fanout;
pub(super) mod io;
pub(super) mod jsonata;
mod s3_items;
pub(super) mod tasks;

use io::Scope;
use jsonata::Query;
use serde_json::Map;

/// How a state, a branch or an execution failed: the error name and its cause.
#[derive(Debug, Clone, PartialEq)]
pub(crate) struct Failure {
    /// The error (`States.TaskFailed`, `Lambda.ResourceNotFoundException`, ...).
    pub error: String,
    /// Its cause.
    pub cause: String,
    /// The field whose JSONata expression failed, until its EvaluationFailed event is added.
    pub location: Option<String>,
}

impl Failure {
    /// A failure with an error name and a cause.
    pub fn new(error: impl Into<String>, cause: impl Into<String>) -> Failure {
        Failure {
            error: error.into(),
            cause: cause.into(),
            location: None,
        }
    }

    /// A failure of the JSONata expression in a state's field `location`.
    pub fn evaluation(cause: impl Into<String>, location: &str) -> Failure {
        Failure {
            location: Some(location.to_string()),
            ..Failure::new("States.QueryEvaluationError", cause)
        }
    }

    /// The error output a Catch passes on: `{"Error": ..., "Cause": ...}`.
    fn output(&self) -> Json {
        json!({"Error": self.error, "Cause": self.cause})
    }
}

/// What a waiting task hears from SendTaskSuccess, SendTaskFailure or SendTaskHeartbeat.
#[derive(Debug)]
pub(crate) enum Signal {
    /// The task's output.
    Success(Json),
    /// The task's failure.
    Failure(Failure),
    /// A heartbeat: the task is alive.
    Heartbeat,
}

/// How often a running execution writes the events it added meanwhile.
const FLUSH_EVERY: std::time::Duration = std::time::Duration::from_millis(250);

/// What every execution shares.
pub(crate) struct Engine {
    /// The shared environment (store, dispatcher).
    pub env: Arc<Env>,
    /// Running executions by ARN.
    running: Mutex<HashMap<String, Arc<Run>>>,
    /// Task tokens waited on, with where their signals go.
    pub tokens: Mutex<HashMap<String, mpsc::UnboundedSender<Signal>>>,
    /// Woken when an activity task is queued.
    pub activity_queued: Notify,
    /// Map runs whose Distributed Map runs now, by ARN.
    map_runs: Mutex<HashMap<String, Arc<MapRun>>>,
    /// Set when the server stops: what runs now is left as it stands, for a restart to
    /// go on with.
    stopping: AtomicBool,
}

/// Locks a mutex, surviving a poisoned one.
pub(crate) fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Engine {
    /// An engine over the environment.
    pub fn new(env: Arc<Env>) -> Engine {
        Engine {
            env,
            running: Mutex::new(HashMap::new()),
            tokens: Mutex::new(HashMap::new()),
            activity_queued: Notify::new(),
            map_runs: Mutex::new(HashMap::new()),
            stopping: AtomicBool::new(false),
        }
    }

    /// The server is stopping: from now on a Task call that returns is left in flight
    /// and a Map state dropped leaves its map run running.
    pub fn stop(&self) {
        self.stopping.store(true, Ordering::SeqCst);
    }

    /// Whether the server is stopping.
    pub fn stopping(&self) -> bool {
        self.stopping.load(Ordering::SeqCst)
    }

    /// Records a run as running, before its task starts, so that StopExecution finds it.
    pub fn register(&self, run: &Arc<Run>) {
        lock(&self.running).insert(run.arn.clone(), run.clone());
    }

    /// The live map run with this ARN, while its Map state runs.
    pub fn map_run(&self, arn: &str) -> Option<Arc<MapRun>> {
        lock(&self.map_runs).get(arn).cloned()
    }

    /// The running execution with this ARN, if it runs in this process.
    pub fn running(&self, arn: &str) -> Option<Arc<Run>> {
        lock(&self.running).get(arn).cloned()
    }
}

/// The largest state output, in bytes of its JSON text (256 KiB, Step Functions' payload
/// quota); beyond it the state fails with `States.DataLimitExceeded`.
const MAX_PAYLOAD: usize = 262_144;

/// How an execution ended.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Outcome {
    /// SUCCEEDED, with the output.
    Succeeded(Json),
    /// FAILED.
    Failed(Failure),
    /// TIMED_OUT.
    TimedOut(Failure),
    /// ABORTED by StopExecution.
    Aborted,
}

impl Outcome {
    /// The execution's status, as the API names it.
    pub fn status(&self) -> &'static str {
        match self {
            Outcome::Succeeded(_) => "SUCCEEDED",
            Outcome::Failed(_) => "FAILED",
            Outcome::TimedOut(_) => "TIMED_OUT",
            Outcome::Aborted => "ABORTED",
        }
    }
}

/// One execution while it runs.
pub(crate) struct Run {
    /// The engine.
    pub engine: Arc<Engine>,
    /// The account and region it runs in.
    pub ctx: Context,
    /// The execution's ARN.
    pub arn: String,
    /// Its history.
    pub history: History,
    /// The context object's `Execution` and `StateMachine` members.
    pub context: Json,
    stop: watch::Sender<bool>,
    /// What TestState reports, when this run tests one state.
    test: Option<Mutex<Inspection>>,
    /// What TestState's `mock` puts in place of the tested state's work.
    mock: Option<Mock>,
    /// Where a redriven or restarted execution's paths stood, each taken when its path
    /// starts again.
    resume: Mutex<Resume>,
}

/// Where an execution continues from.
#[derive(Debug, Default)]
pub(crate) struct Resume {
    /// The marks its paths left, by path.
    pub marks: HashMap<String, Mark>,
    /// Whether the server restarted (the states in progress go on: no new Entered events,
    /// their deadlines and tokens kept) rather than a redrive (they are entered again).
    pub restart: bool,
}

/// What a TestState run saw: each processing step's value, and the Retry or Catch that
/// handled an error. A run under test neither retries nor waits.
#[derive(Debug, Default)]
pub(crate) struct Inspection {
    /// `input`, `afterInputPath`, `afterParameters`, `afterArguments`, `result`,
    /// `afterResultSelector`, `afterResultPath`, `variables`: JSON texts.
    pub data: Map<String, Json>,
    /// The retrier that would retry the error, and its delay in seconds.
    pub retry: Option<(usize, f64)>,
    /// The catcher that caught the error, and the error.
    pub catch: Option<(usize, Failure)>,
}

/// TestState's `mock` and `stateConfiguration`: the tested Task's, Parallel's or Map's
/// result or error instead of its work, and how far its retries and iterations had gone.
#[derive(Debug, Clone)]
pub(crate) struct Mock {
    /// The mocked result, or the mocked error.
    pub outcome: Result<Json, Failure>,
    /// `retrierRetryCount`: the retries the matching retrier has already made.
    pub retries: u32,
    /// `mapIterationFailureCount`: how many of a Map's iterations failed.
    pub failures: usize,
    /// Whether the caller's `context` is the whole context object (no `State` added).
    pub own_context: bool,
}

/// One path through the states: the top level, a branch or an iteration.
#[derive(Debug, Clone, Default)]
pub(crate) struct Lane {
    /// The id of this path's last event.
    pub prev: i64,
    /// The context object's `Map` member in an iteration.
    pub map: Option<Json>,
    /// The workflow variables this path sees.
    pub vars: Arc<Map<String, Json>>,
    /// Whether the machine's query language is JSONata.
    pub jsonata: bool,
    /// Which path this is (see [`Mark`]): `""` at the top level.
    pub path: Arc<str>,
}

impl Lane {
    /// A path inside this one (branch or iteration `index` of the state whose instance is
    /// `instance`) starting after event `prev`.
    pub fn inner(&self, prev: i64, map: Option<Json>, instance: i64, index: usize) -> Lane {
        Lane {
            prev,
            map: map.or_else(|| self.map.clone()),
            vars: self.vars.clone(),
            jsonata: self.jsonata,
            path: self.inner_path(instance, index).into(),
        }
    }

    /// The path of branch, iteration or map-run item `index` of the state whose instance
    /// is `instance`.
    pub fn inner_path(&self, instance: i64, index: usize) -> String {
        format!("{}/{instance}.{index}", self.path)
    }

    /// Whether a state runs in JSONata: its own `QueryLanguage`, else the machine's.
    fn jsonata(&self, state: &Json) -> bool {
        match state.get("QueryLanguage").and_then(Json::as_str) {
            Some(language) => language == "JSONata",
            None => self.jsonata,
        }
    }

    /// Sets the variables an Assign evaluated.
    fn assign(&mut self, assigned: Option<Map<String, Json>>) {
        if let Some(vars) = assigned.filter(|v| !v.is_empty()) {
            Arc::make_mut(&mut self.vars).extend(vars);
        }
    }
}

/// Where a state goes after it ran.
enum Step {
    Next(String, Json),
    End(Json),
}

impl Run {
    /// A run for an execution whose history continues at `next_event`.
    pub fn new(
        engine: Arc<Engine>,
        ctx: Context,
        arn: &str,
        context: Json,
        next_event: i64,
        record: bool,
    ) -> Arc<Run> {
        Arc::new(Run {
            engine,
            ctx,
            arn: arn.to_string(),
            history: History::new(arn, next_event, record),
            context,
            stop: watch::Sender::new(false),
            test: None,
            mock: None,
            resume: Mutex::default(),
        })
    }

    /// Continues from where the execution's paths stood rather than from its start.
    pub fn resume_from(&self, resume: Resume) {
        *lock(&self.resume) = resume;
    }

    /// The mark a path left, taken: where it starts again.
    fn resumed(&self, path: &str) -> Option<Mark> {
        lock(&self.resume).marks.remove(path)
    }

    /// Whether resumed states go on rather than being entered again.
    pub(super) fn restarting(&self) -> bool {
        lock(&self.resume).restart
    }

    /// Whether a path goes on after a restart from where it stood (its events so far
    /// are not added again).
    pub(super) fn continuing(&self, path: &str) -> bool {
        let resume = lock(&self.resume);
        resume.restart && resume.marks.contains_key(path)
    }

    /// The mark a path left before a redrive or a restart, if any.
    pub(super) fn left(&self, path: &str) -> Option<Mark> {
        lock(&self.resume).marks.get(path).cloned()
    }

    /// The output of a branch or iteration that finished before a redrive or a restart.
    pub(super) fn finished(&self, path: &str) -> Option<Json> {
        let resume = lock(&self.resume);
        resume.marks.get(path).and_then(|m| m.done.clone())
    }

    /// The instance id that names a state's inner paths (see [`Mark`]).
    pub(super) fn instance(&self, lane: &Lane) -> i64 {
        self.history
            .read_mark(&lane.path, |m| m.instance)
            .unwrap_or(lane.prev)
    }

    /// A run that tests one state (TestState): nothing recorded, no retries, no waits;
    /// with a mock, the state's work is not done.
    pub fn testing(
        engine: Arc<Engine>,
        ctx: Context,
        arn: &str,
        context: Json,
        mock: Option<Mock>,
    ) -> Run {
        Run {
            engine,
            ctx,
            arn: arn.to_string(),
            history: History::new(arn, 1, false),
            context,
            stop: watch::Sender::new(false),
            test: Some(Mutex::new(Inspection::default())),
            mock,
            resume: Mutex::default(),
        }
    }

    /// The mocked outcome of the Task, Parallel or Map under test, if it is mocked.
    pub(super) fn mocked(&self) -> Option<Result<Json, Failure>> {
        self.mock.as_ref().map(|m| m.outcome.clone())
    }

    /// Whether the context object is the caller's own, as given (TestState's `context`).
    fn own_context(&self) -> bool {
        self.mock.as_ref().is_some_and(|m| m.own_context)
    }

    /// Runs one state as TestState does.
    pub async fn test_state(
        self: &Arc<Run>,
        name: &str,
        state: &Json,
        input: Json,
        lane: &mut Lane,
    ) -> (Result<Option<String>, Failure>, Json, Inspection) {
        let result = self.state(name, state, input, lane, None).await;
        let inspection = self
            .test
            .as_ref()
            .map(|t| std::mem::take(&mut *lock(t)))
            .unwrap_or_default();
        match result {
            Ok(Step::Next(next, output)) => (Ok(Some(next)), output, inspection),
            Ok(Step::End(output)) => (Ok(None), output, inspection),
            Err(f) => (Err(f), Json::Null, inspection),
        }
    }

    /// Notes a processing step's value for TestState's inspection data.
    fn inspect(&self, step: &str, value: &Json) {
        self.inspect_value(step, Json::String(value.to_string()));
    }

    /// Notes an inspection datum as it is (a number, such as a Map's `maxConcurrency`).
    fn inspect_value(&self, step: &str, value: Json) {
        if let Some(test) = &self.test {
            lock(test).data.insert(step.into(), value);
        }
    }

    /// Asks the run to stop where it is.
    pub fn stop(&self) {
        self.stop.send_replace(true);
    }

    /// Adds the ExecutionAborted event StopExecution closes the run with.
    pub fn abort_event(&self, error: Option<&str>, cause: Option<&str>) {
        let mut prev = self.history.last_id();
        let mut details = json!({});
        if let Some(e) = error {
            details["error"] = json!(e);
        }
        if let Some(c) = cause {
            details["cause"] = json!(c);
        }
        self.history.add(
            &mut prev,
            "ExecutionAborted",
            Some("executionAbortedEventDetails"),
            details,
        );
        self.flush();
    }

    /// Writes the events added so far.
    pub fn flush(&self) {
        if let Err(e) = self.history.flush(&self.engine.env) {
            tracing::warn!(error = %e.message, "Step Functions history write failed");
        }
    }

    /// Runs the definition to its end (or the machine's `TimeoutSeconds`, or a stop),
    /// registered as running meanwhile. Events added since the last flush are written every
    /// [`FLUSH_EVERY`] meanwhile, so that a branch or iteration that finished while another
    /// waits shows in the history (and counts as finished after a restart).
    pub async fn execute(
        self: Arc<Run>,
        definition: Arc<Json>,
        input: Json,
        lane: Lane,
    ) -> Outcome {
        lock(&self.engine.running).insert(self.arn.clone(), self.clone());
        let mut stopped = self.stop.subscribe();
        let deadline = definition
            .get("TimeoutSeconds")
            .and_then(Json::as_i64)
            .map(|s| now_millis().saturating_add(s.saturating_mul(1000)));
        let mut lane = lane;
        lane.jsonata = definition.get("QueryLanguage").and_then(Json::as_str) == Some("JSONata");
        let mut work = self.clone().machine(definition, input, &mut lane);
        let outcome = loop {
            tokio::select! {
                result = &mut work => break match result {
                    Ok(output) => Outcome::Succeeded(output),
                    Err(f) => Outcome::Failed(f),
                },
                _ = stopped.wait_for(|s| *s) => break Outcome::Aborted,
                _ = wait_for(deadline) => break Outcome::TimedOut(Failure::new("States.Timeout", "")),
                _ = tokio::time::sleep(FLUSH_EVERY) => self.flush(),
            }
        };
        drop(work);
        self.close(&outcome, &mut lane);
        lock(&self.engine.running).remove(&self.arn);
        outcome
    }

    /// Adds the execution's closing event.
    fn close(&self, outcome: &Outcome, lane: &mut Lane) {
        let prev = &mut lane.prev;
        match outcome {
            Outcome::Succeeded(output) => self.history.add(
                prev,
                "ExecutionSucceeded",
                Some("executionSucceededEventDetails"),
                payload_details("output", output, "outputDetails"),
            ),
            Outcome::Failed(f) => self.history.add(
                prev,
                "ExecutionFailed",
                Some("executionFailedEventDetails"),
                json!({"error": f.error, "cause": f.cause}),
            ),
            Outcome::TimedOut(f) => self.history.add(
                prev,
                "ExecutionTimedOut",
                Some("executionTimedOutEventDetails"),
                json!({"error": f.error, "cause": f.cause}),
            ),
            Outcome::Aborted => 0,
        };
        self.flush();
    }

    /// Runs a set of states (the definition, a branch, an item processor) from its
    /// `StartAt` to its end.
    pub fn machine<'a>(
        self: Arc<Run>,
        machine: Arc<Json>,
        input: Json,
        lane: &'a mut Lane,
    ) -> BoxFuture<'a, Result<Json, Failure>> {
        Box::pin(async move {
            let mut resumed = self.resumed(&lane.path).filter(|m| m.done.is_none());
            let (mut name, mut input) = match &resumed {
                Some(mark) => {
                    lane.vars = Arc::new(mark.vars.clone());
                    (mark.state.clone(), mark.input.clone())
                }
                None => (
                    machine
                        .get("StartAt")
                        .and_then(Json::as_str)
                        .unwrap_or_default()
                        .to_string(),
                    input,
                ),
            };
            loop {
                let state = machine
                    .get("States")
                    .and_then(|s| s.get(&name))
                    .ok_or_else(|| {
                        Failure::new("States.Runtime", format!("No state named '{name}'"))
                    })?;
                match self
                    .state(&name, state, input, lane, resumed.take())
                    .await?
                {
                    Step::Next(next, output) => {
                        name = next;
                        input = output;
                    }
                    Step::End(output) => {
                        if !lane.path.is_empty() {
                            let done = Mark {
                                done: Some(output.clone()),
                                ..Mark::default()
                            };
                            self.history.mark(&lane.path, done);
                        }
                        return Ok(output);
                    }
                }
            }
        })
    }

    /// The context object's members for one state (see [`Scope::context`]).
    fn context_for(&self, name: &str, entered_at: i64, retries: u32, lane: &Lane) -> Json {
        let mut context = json!({});
        if self.own_context() {
            return context;
        }
        context["State"] = json!({
            "Name": name,
            "EnteredTime": roto_core::timestamp::format(entered_at, roto_core::timestamp::TimestampFormat::Iso8601),
            "RetryCount": retries,
        });
        if let Some(map) = &lane.map {
            context["Map"] = map.clone();
        }
        context
    }

    /// Runs one state: its Entered event, its work (with Retry and Catch where it has
    /// them), its Exited event. A state `resumed` from its mark is entered again after a
    /// redrive, and goes on where it stood after a restart.
    async fn state(
        self: &Arc<Run>,
        name: &str,
        state: &Json,
        input: Json,
        lane: &mut Lane,
        resumed: Option<Mark>,
    ) -> Result<Step, Failure> {
        let kind = state
            .get("Type")
            .and_then(Json::as_str)
            .unwrap_or_default()
            .to_string();
        let (entered, entered_at) = self.enter(name, &kind, &input, lane, resumed);
        let scope = Scope {
            base: &self.context,
            extra: self.context_for(name, entered_at, 0, lane),
            state: name,
            entered,
            vars: lane.vars.clone(),
        };
        let jsonata = lane.jsonata(state);
        let result = match kind.as_str() {
            "Fail" if jsonata => Err(fail_jsonata(&scope, state, &input)),
            "Fail" => Err(fail(&scope, state, &input)),
            "Choice" => choose(&scope, state, &input, lane),
            "Succeed" if jsonata => Query::new(&scope, &input, None, None)
                .field(state, "Output")
                .map(|o| (o.unwrap_or(input.clone()), None)),
            "Succeed" => scope
                .input_path(state, &input)
                .and_then(|i| scope.output_path(state, i))
                .map(|o| (o, None)),
            _ => {
                self.with_handlers(name, state, &input, lane, entered, entered_at)
                    .await
            }
        };
        let (output, next) = result.map_err(|f| self.evaluation_failed(name, f, lane))?;
        let text = output.to_string();
        if text.len() > MAX_PAYLOAD {
            return Err(Failure::new(
                "States.DataLimitExceeded",
                format!("The state/task '{name}' returned a result with a size exceeding the maximum number of bytes service limit."),
            ));
        }
        if kind != "Fail" {
            self.history.add(
                &mut lane.prev,
                &format!("{kind}StateExited"),
                Some("stateExitedEventDetails"),
                json!({"name": name, "output": text, "outputDetails": {"truncated": false}}),
            );
        }
        let next = next.or_else(|| state.get("Next").and_then(Json::as_str).map(str::to_string));
        Ok(match (next, state.get("End")) {
            (Some(next), _) if kind != "Succeed" => Step::Next(next, output),
            _ => Step::End(output),
        })
    }

    /// Adds a state's Entered event (unless a restart resumes it) and marks its path as in
    /// it; answers the event's id and time.
    fn enter(
        &self,
        name: &str,
        kind: &str,
        input: &Json,
        lane: &mut Lane,
        resumed: Option<Mark>,
    ) -> (i64, i64) {
        let mark = match resumed {
            Some(mark) if self.restarting() => {
                lane.prev = mark.prev;
                mark
            }
            resumed => {
                let (instance, map_run) = match resumed {
                    Some(m) => (Some(m.instance), m.map_run),
                    None => (None, None),
                };
                let entered = self.history.add(
                    &mut lane.prev,
                    &format!("{kind}StateEntered"),
                    Some("stateEnteredEventDetails"),
                    json!({"name": name, "input": input.to_string(), "inputDetails": {"truncated": false}}),
                );
                Mark {
                    state: name.to_string(),
                    input: input.clone(),
                    vars: (*lane.vars).clone(),
                    instance: instance.unwrap_or(entered),
                    map_run,
                    entered,
                    entered_at: now_millis(),
                    prev: entered,
                    ..Mark::default()
                }
            }
        };
        let entered = (mark.entered, mark.entered_at);
        self.history.mark(&lane.path, mark);
        entered
    }

    /// A state's work under its Retry and Catch: retried while a retrier matches and has
    /// attempts left; caught into the catcher's `Next` with the error output at its
    /// `ResultPath`.
    async fn with_handlers(
        self: &Arc<Run>,
        name: &str,
        state: &Json,
        input: &Json,
        lane: &mut Lane,
        entered: i64,
        entered_at: i64,
    ) -> Result<(Json, Option<String>), Failure> {
        let mut retries = self.mock.as_ref().map_or(0, |m| m.retries);
        let mut attempts: Vec<u32> = vec![
            retries;
            state
                .get("Retry")
                .and_then(Json::as_array)
                .map_or(0, Vec::len)
        ];
        loop {
            let mut extra = self.context_for(name, entered_at, retries, lane);
            if state.get("Type").and_then(Json::as_str) == Some("Task")
                && tasks::uses_token(state)
                && !self.own_context()
            {
                extra["Task"] = json!({"Token": self.token(lane, retries)});
            }
            let scope = Scope {
                base: &self.context,
                extra,
                state: name,
                entered,
                vars: lane.vars.clone(),
            };
            let failure = match self.work(&scope, state, input, lane).await {
                Ok(output) => return Ok((output, None)),
                Err(f) => self.evaluation_failed(name, f, lane),
            };
            self.flush();
            if let Some((index, wait)) = retry_delay(state, &failure, &mut attempts) {
                if let Some(test) = &self.test {
                    lock(test).retry = Some((index, wait as f64 / 1000.0));
                    return Err(failure);
                }
                sleep_until(now_millis().saturating_add(wait)).await;
                retries += 1;
                continue;
            }
            if let (Some(test), Some(index)) = (&self.test, catcher(state, &failure)) {
                lock(test).catch = Some((index, failure.clone()));
            }
            return catch(&scope, state, input, failure, lane);
        }
    }

    /// Adds the EvaluationFailed event of a failure whose JSONata expression failed (once:
    /// the failure passed on no longer names its field).
    fn evaluation_failed(&self, name: &str, mut failure: Failure, lane: &mut Lane) -> Failure {
        if let Some(location) = failure.location.take() {
            self.history.add(
                &mut lane.prev,
                "EvaluationFailed",
                Some("evaluationFailedEventDetails"),
                json!({"error": failure.error, "cause": failure.cause, "location": location, "state": name}),
            );
        }
        failure
    }

    /// The task token of a Task state's attempt: the one its path's mark holds for a first
    /// attempt resumed after a restart, else a new one (kept in the mark).
    fn token(&self, lane: &Lane, retries: u32) -> String {
        let kept = self
            .history
            .read_mark(&lane.path, |m| m.token.clone())
            .flatten();
        match kept.filter(|_| retries == 0) {
            Some(token) => token,
            None => {
                let token = tasks::new_token();
                self.history.update_mark(&lane.path, |m| {
                    m.token = Some(token.clone());
                    m.submitted = false;
                });
                token
            }
        }
    }

    /// The work of a Pass, Wait, Task, Parallel or Map state, from InputPath to OutputPath.
    async fn work(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let kind = state.get("Type").and_then(Json::as_str).unwrap_or_default();
        if lane.jsonata(state) {
            return self.work_jsonata(scope, state, input, lane).await;
        }
        self.inspect("input", input);
        let effective = scope.input_path(state, input)?;
        self.inspect("afterInputPath", &effective);
        if kind == "Wait" {
            self.wait(scope, state, &effective, lane).await?;
            let assigned = assign_path(scope, state, &effective)?;
            let output = scope.output_path(state, effective)?;
            lane.assign(assigned);
            return Ok(output);
        }
        let result = match kind {
            "Map" => self.map(scope, state, effective, lane).await?,
            _ => {
                let effective = scope.template_field(state, "Parameters", effective)?;
                self.inspect("afterParameters", &effective);
                match kind {
                    "Pass" => state.get("Result").cloned().unwrap_or(effective),
                    "Task" => self.task(scope, state, effective, lane).await?,
                    "Parallel" => self.parallel(scope, state, effective, lane).await?,
                    other => {
                        return Err(Failure::new(
                            "States.Runtime",
                            format!("Unknown state type {other}"),
                        ))
                    }
                }
            }
        };
        self.inspect("result", &result);
        let result = scope.template_field(state, "ResultSelector", result)?;
        self.inspect("afterResultSelector", &result);
        let assigned = assign_path(scope, state, &result)?;
        let output = scope.result_path(state, input, result)?;
        self.inspect("afterResultPath", &output);
        let output = scope.output_path(state, output)?;
        lane.assign(assigned);
        self.inspect("variables", &Json::Object((*lane.vars).clone()));
        Ok(output)
    }

    /// The work of a JSONata Pass, Wait, Task, Parallel or Map state: Arguments in,
    /// Output and Assign out (both evaluated against the variables from before the state).
    async fn work_jsonata(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let kind = state.get("Type").and_then(Json::as_str).unwrap_or_default();
        self.inspect("input", input);
        let query = Query::new(scope, input, None, None);
        let resolved = query.scalars(state)?;
        let state = &resolved;
        let result = match kind {
            "Pass" => None,
            "Wait" => {
                self.wait(scope, state, input, lane).await?;
                None
            }
            "Map" => Some(self.map(scope, state, input.clone(), lane).await?),
            _ => {
                let arguments = query.field(state, "Arguments")?;
                let arguments = arguments.unwrap_or_else(|| input.clone());
                self.inspect("afterArguments", &arguments);
                Some(match kind {
                    "Task" => self.task(scope, state, arguments, lane).await?,
                    _ => self.parallel(scope, state, arguments, lane).await?,
                })
            }
        };
        if let Some(r) = &result {
            self.inspect("result", r);
        }
        let query = Query::new(scope, input, result.as_ref(), None);
        let output = query.field(state, "Output")?;
        let assigned = state.get("Assign").map(|a| query.assign(a)).transpose()?;
        lane.assign(assigned);
        self.inspect("variables", &Json::Object((*lane.vars).clone()));
        Ok(output.or(result).unwrap_or_else(|| input.clone()))
    }

    /// A Wait state's pause, on the server clock, counted from when the state was entered
    /// (so that it keeps its deadline across a restart).
    async fn wait(
        &self,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
        lane: &Lane,
    ) -> Result<(), Failure> {
        let entered_at = self
            .history
            .read_mark(&lane.path, |m| m.entered_at)
            .unwrap_or_else(now_millis);
        let deadline = if let Some(s) = state.get("Seconds") {
            entered_at.saturating_add(seconds(s).unwrap_or(0))
        } else if let Some(p) = state.get("SecondsPath").and_then(Json::as_str) {
            let value = scope.select(p, input)?;
            let ms = seconds(&value).ok_or_else(|| {
                scope.runtime(format!(
                    "The SecondsPath parameter does not reference a valid integer value: {value}"
                ))
            })?;
            entered_at.saturating_add(ms)
        } else {
            let text = match (
                state.get("Timestamp"),
                state.get("TimestampPath").and_then(Json::as_str),
            ) {
                (Some(t), _) => t.clone(),
                (None, Some(p)) => scope.select(p, input)?,
                (None, None) => Json::Null,
            };
            text.as_str()
                .and_then(choice::timestamp)
                .ok_or_else(|| scope.runtime(format!("The TimestampPath parameter does not reference a valid ISO-8601 extended offset date-time format string: {text}")))?
        };
        self.flush();
        if self.test.is_none() {
            sleep_until(deadline).await;
        }
        Ok(())
    }
}

/// Seconds (a non-negative integer) as milliseconds.
fn seconds(value: &Json) -> Option<i64> {
    value
        .as_i64()
        .filter(|s| *s >= 0)
        .map(|s| s.saturating_mul(1000))
}

/// Sleeps until a deadline of the server clock, or forever without one.
async fn wait_for(deadline: Option<i64>) {
    match deadline {
        Some(d) => sleep_until(d).await,
        None => std::future::pending().await,
    }
}

/// Runs `work` unless `deadline` (server clock) passes first.
pub(crate) async fn with_deadline<T>(
    deadline: Option<i64>,
    work: impl Future<Output = T>,
) -> Option<T> {
    tokio::select! {
        out = work => Some(out),
        _ = wait_for(deadline) => None,
    }
}

fn fail(scope: &Scope<'_>, state: &Json, input: &Json) -> Failure {
    let read = |field: &str, path: &str| -> String {
        match (state.get(field), state.get(path).and_then(Json::as_str)) {
            (Some(Json::String(s)), _) => s.clone(),
            (None, Some(p)) => match scope.lookup(p, input) {
                Ok(Some(Json::String(s))) => s,
                _ => String::new(),
            },
            _ => String::new(),
        }
    };
    Failure::new(read("Error", "ErrorPath"), read("Cause", "CausePath"))
}

/// A JSONata Fail state's Error and Cause, which may be expressions.
fn fail_jsonata(scope: &Scope<'_>, state: &Json, input: &Json) -> Failure {
    let query = Query::new(scope, input, None, None);
    let read = |field: &str| match query.typed(state, field, "string") {
        Ok(value) => Ok(value
            .and_then(|v| v.as_str().map(str::to_string))
            .unwrap_or_default()),
        Err(f) => Err(f),
    };
    match (read("Error"), read("Cause")) {
        (Ok(error), Ok(cause)) => Failure::new(error, cause),
        (Err(f), _) | (_, Err(f)) => f,
    }
}

/// A Choice state: the matching rule's `Next`, with its (else the state's) Output and
/// Assign in JSONata; InputPath, Assign and OutputPath in JSONPath.
fn choose(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
    lane: &mut Lane,
) -> Result<(Json, Option<String>), Failure> {
    if lane.jsonata(state) {
        let query = Query::new(scope, input, None, None);
        let (next, rule) = choice::choose_jsonata(scope, &query, state)?;
        let field = |name: &str| rule.and_then(|r| r.get(name)).or_else(|| state.get(name));
        let output = field("Output")
            .map(|o| query.template(o, "Output"))
            .transpose()?;
        let assigned = field("Assign").map(|a| query.assign(a)).transpose()?;
        lane.assign(assigned);
        return Ok((output.unwrap_or_else(|| input.clone()), Some(next)));
    }
    let effective = scope.input_path(state, input)?;
    let (next, rule) = choice::choose(scope, state, &effective)?;
    let holder = match rule {
        Some(r) if r.get("Assign").is_some() => r,
        _ => state,
    };
    let assigned = assign_path(scope, holder, &effective)?;
    let output = scope.output_path(state, effective)?;
    lane.assign(assigned);
    Ok((output, Some(next)))
}

/// A JSONPath state's Assign: a template whose `.$` fields read `value` (the state's
/// result), the context object or variables.
fn assign_path(
    scope: &Scope<'_>,
    state: &Json,
    value: &Json,
) -> Result<Option<Map<String, Json>>, Failure> {
    match state.get("Assign") {
        None => Ok(None),
        Some(template) => match scope.template(template, value)? {
            Json::Object(vars) => Ok(Some(vars)),
            _ => Ok(None),
        },
    }
}

/// Whether an `ErrorEquals` list matches an error: by name, `States.ALL` for any error but
/// the terminal ones, `States.TaskFailed` for any but a timeout.
fn error_matches(errors: &Json, error: &str) -> bool {
    let terminal = matches!(error, "States.Runtime" | "States.DataLimitExceeded");
    errors
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .any(|e| {
            e == error
                || (e == "States.ALL" && !terminal)
                || (e == "States.TaskFailed"
                    && !terminal
                    && !matches!(error, "States.Timeout" | "States.HeartbeatTimeout"))
                || (e == "States.Timeout" && error == "States.HeartbeatTimeout")
        })
}

/// The delay before the next attempt, in milliseconds, if a retrier matches and has
/// attempts left (`IntervalSeconds` times `BackoffRate` to the power of the attempts
/// made, at most `MaxDelaySeconds`). Counts the attempt.
fn retry_delay(state: &Json, failure: &Failure, attempts: &mut [u32]) -> Option<(usize, i64)> {
    let retriers = state.get("Retry")?.as_array()?;
    let (i, retrier) = retriers.iter().enumerate().find(|(_, r)| {
        r.get("ErrorEquals")
            .is_some_and(|e| error_matches(e, &failure.error))
    })?;
    let max = retrier
        .get("MaxAttempts")
        .and_then(Json::as_u64)
        .unwrap_or(3);
    if u64::from(attempts[i]) >= max {
        return None;
    }
    let interval = retrier
        .get("IntervalSeconds")
        .and_then(Json::as_f64)
        .unwrap_or(1.0);
    let rate = retrier
        .get("BackoffRate")
        .and_then(Json::as_f64)
        .unwrap_or(2.0);
    let made = i32::try_from(attempts[i]).unwrap_or(i32::MAX);
    let mut delay = interval * rate.powi(made);
    if let Some(cap) = retrier.get("MaxDelaySeconds").and_then(Json::as_f64) {
        delay = delay.min(cap);
    }
    attempts[i] += 1;
    let jittered = match retrier.get("JitterStrategy").and_then(Json::as_str) {
        Some("FULL") => delay * fastrand::f64(),
        _ => delay,
    };
    Some((i, (jittered * 1000.0).round() as i64))
}

/// The index of the state's first catcher that matches a failure.
fn catcher(state: &Json, failure: &Failure) -> Option<usize> {
    state.get("Catch")?.as_array()?.iter().position(|c| {
        c.get("ErrorEquals")
            .is_some_and(|e| error_matches(e, &failure.error))
    })
}

/// A failure through the state's Catch: the catcher's `Next` with the error output put at
/// its `ResultPath`, or the failure itself.
fn catch(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
    failure: Failure,
    lane: &mut Lane,
) -> Result<(Json, Option<String>), Failure> {
    let catchers = state.get("Catch").and_then(Json::as_array);
    let Some(catcher) = catcher(state, &failure).and_then(|i| catchers?.get(i)) else {
        return Err(failure);
    };
    let error_output = failure.output();
    let (output, assigned) = if lane.jsonata(state) {
        let query = Query::new(scope, input, None, Some(&error_output));
        let output = query.field(catcher, "Output")?;
        let assigned = catcher.get("Assign").map(|a| query.assign(a)).transpose()?;
        (output.unwrap_or(error_output), assigned)
    } else {
        let assigned = assign_path(scope, catcher, &error_output)?;
        (scope.result_path(catcher, input, error_output)?, assigned)
    };
    lane.assign(assigned);
    let next = catcher
        .get("Next")
        .and_then(Json::as_str)
        .unwrap_or_default()
        .to_string();
    Ok((output, Some(next)))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn retriers_back_off_and_cap() {
        let state = json!({"Retry": [{"ErrorEquals": ["States.ALL"], "IntervalSeconds": 2, "BackoffRate": 3, "MaxAttempts": 3, "MaxDelaySeconds": 10}]});
        let f = Failure::new("X", "");
        let mut a = vec![0];
        let delays: Vec<_> = (0..4)
            .map(|_| retry_delay(&state, &f, &mut a).map(|(_, ms)| ms))
            .collect();
        assert_eq!(delays, vec![Some(2000), Some(6000), Some(10000), None]);
        let none = json!({"Retry": [{"ErrorEquals": ["States.ALL"], "MaxAttempts": 0}]});
        assert_eq!(retry_delay(&none, &f, &mut [0]), None);
        assert_eq!(retry_delay(&state, &f, &mut [1]), Some((0, 6000)));
    }

    #[test]
    fn error_names_match_as_aws_matches_them() {
        let all = json!(["States.ALL"]);
        assert!(error_matches(&all, "Lambda.ServiceException"));
        assert!(!error_matches(&all, "States.Runtime"));
        assert!(error_matches(&json!(["States.TaskFailed"]), "CustomError"));
        assert!(!error_matches(
            &json!(["States.TaskFailed"]),
            "States.Timeout"
        ));
        assert!(error_matches(
            &json!(["States.Timeout"]),
            "States.HeartbeatTimeout"
        ));
    }
}
