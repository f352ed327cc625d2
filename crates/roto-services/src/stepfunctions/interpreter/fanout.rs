//! Parallel branches and inline Map iterations: each runs on its own task with its own
//! chain of history events; a failure stops the others and fails the state (a Map
//! tolerates failures up to its `ToleratedFailureCount`/`ToleratedFailurePercentage`).
//! After a redrive or a restart, a branch or iteration that had finished keeps its output
//! and does not run again.

use std::sync::Arc;

use serde_json::{json, Value as Json};
use tokio::sync::Semaphore;
use tokio::task::JoinSet;

use super::io::Scope;
use super::jsonata::Query;
use super::{Failure, Lane, Run};

/// The outcome of one branch or iteration, by its index.
type Finished = (usize, Result<Json, Failure>);

impl Run {
    /// A Parallel state's branches, each given the same input; the result is their outputs
    /// in branch order.
    pub(super) async fn parallel(
        self: &Arc<Run>,
        _scope: &Scope<'_>,
        state: &Json,
        input: Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        if let Some(outcome) = self.mocked() {
            return outcome;
        }
        let branches: Vec<Arc<Json>> = state
            .get("Branches")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .map(|b| Arc::new(b.clone()))
            .collect();
        let instance = self.instance(lane);
        let started = self.start_inner(lane, "ParallelStateStarted", None, json!({}));
        self.flush();
        let mut set = JoinSet::new();
        for (i, branch) in branches.into_iter().enumerate() {
            let (run, input) = (self.clone(), input.clone());
            let mut branch_lane = lane.inner(started, None, instance, i);
            if let Some(output) = self.finished(&branch_lane.path) {
                set.spawn(async move { (i, Ok(output)) });
                continue;
            }
            set.spawn(async move { (i, run.machine(branch, input, &mut branch_lane).await) });
        }
        match collect(&mut set, 0).await {
            Ok(outputs) => {
                self.history
                    .add(&mut lane.prev, "ParallelStateSucceeded", None, json!({}));
                Ok(Json::Array(outputs))
            }
            Err(failure) => {
                self.history
                    .add(&mut lane.prev, "ParallelStateFailed", None, json!({}));
                Err(failure)
            }
        }
    }

    /// An inline Map state: its item processor over each item of `ItemsPath` (or
    /// `ItemSelector`'s view of it), at most `MaxConcurrency` at once.
    pub(super) async fn map(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        input: Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let jsonata = lane.jsonata(state);
        if self.mock.is_some() {
            return self.mocked_map(scope, state, &input, jsonata);
        }
        if distributed(state) {
            return self.distributed(scope, state, input, lane).await;
        }
        let items = items(scope, state, &input, jsonata)?;
        let processor = Arc::new(
            state
                .get("ItemProcessor")
                .or_else(|| state.get("Iterator"))
                .cloned()
                .unwrap_or_default(),
        );
        let limit = match max_concurrency(scope, state, &input)? {
            0 => Semaphore::MAX_PERMITS,
            n => n,
        };
        let instance = self.instance(lane);
        let started = self.start_inner(
            lane,
            "MapStateStarted",
            Some("mapStateStartedEventDetails"),
            json!({"length": items.len()}),
        );
        self.flush();
        let permits = Arc::new(Semaphore::new(limit));
        let mut set = JoinSet::new();
        for (index, item) in items.into_iter().enumerate() {
            let map = json!({"Item": {"Index": index, "Value": item}});
            let item = select(scope, state, &input, &map, jsonata)?;
            let iteration_lane = lane.inner(started, Some(map.clone()), instance, index);
            if let Some(output) = self.finished(&iteration_lane.path) {
                set.spawn(async move { (index, Ok(output)) });
                continue;
            }
            let iteration = Iteration {
                lane: iteration_lane,
                run: self.clone(),
                processor: processor.clone(),
                name: scope.state.to_string(),
                index,
            };
            let permits = permits.clone();
            set.spawn(async move {
                let _permit = permits.acquire_owned().await;
                (index, iteration.run(item).await)
            });
        }
        let tolerated = tolerated_failures(state, set.len());
        let result = collect(&mut set, tolerated).await;
        let kind = if result.is_ok() {
            "MapStateSucceeded"
        } else {
            "MapStateFailed"
        };
        self.history.add(&mut lane.prev, kind, None, json!({}));
        result.map(Json::Array)
    }

    /// A Map state under TestState with a mock: its items are selected (without reading
    /// an `ItemReader`) but not processed; `mapIterationFailureCount` failures beyond a
    /// tolerance it declares fail it with `States.ExceedToleratedFailureThreshold`, else
    /// the mock is its outcome.
    fn mocked_map(
        &self,
        scope: &Scope<'_>,
        state: &Json,
        input: &Json,
        jsonata: bool,
    ) -> Result<Json, Failure> {
        let outcome = self.mocked().unwrap_or(Ok(Json::Null));
        if state.get("ItemReader").is_none() {
            let items = items(scope, state, input, jsonata)?;
            self.inspect("afterItemsPath", &Json::Array(items));
        }
        self.inspect_value(
            "maxConcurrency",
            json!(max_concurrency(scope, state, input)?),
        );
        for field in ["ToleratedFailureCount", "ToleratedFailurePercentage"] {
            if let Some(value) = state.get(field) {
                let mut name = field.to_string();
                name[..1].make_ascii_lowercase();
                self.inspect_value(&name, value.clone());
            }
        }
        let total = match &outcome {
            Ok(Json::Array(results)) => results.len(),
            _ => 0,
        };
        let failures = self.mock.as_ref().map_or(0, |m| m.failures);
        let declared = state.get("ToleratedFailureCount").is_some()
            || state.get("ToleratedFailurePercentage").is_some();
        if declared && failures > tolerated_failures(state, total) {
            return Err(threshold_exceeded());
        }
        outcome
    }

    /// Adds a Parallel or Map state's Started event, the one its branches or iterations
    /// follow; after a restart, answers the one it added before.
    fn start_inner(
        &self,
        lane: &mut Lane,
        kind: &str,
        details_key: Option<&'static str>,
        details: Json,
    ) -> i64 {
        let added = self.history.read_mark(&lane.path, |m| m.started).flatten();
        if let Some(started) = added {
            return started;
        }
        let started = self.history.add(&mut lane.prev, kind, details_key, details);
        self.history.update_mark(&lane.path, |m| {
            m.started = Some(started);
            m.prev = started;
        });
        started
    }
}

/// Whether a Map state runs its items as child executions (`ProcessorConfig.Mode`
/// `DISTRIBUTED`).
fn distributed(state: &Json) -> bool {
    state
        .pointer("/ItemProcessor/ProcessorConfig/Mode")
        .and_then(Json::as_str)
        == Some("DISTRIBUTED")
}

/// A Map state's items: `ItemsPath` (JSONPath) or `Items` (JSONata) over its input.
pub(super) fn items(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
    jsonata: bool,
) -> Result<Vec<Json>, Failure> {
    let items = match jsonata {
        true => Query::new(scope, input, None, None)
            .typed(state, "Items", "array")?
            .unwrap_or_else(|| input.clone()),
        false => scope.select(
            state.get("ItemsPath").and_then(Json::as_str).unwrap_or("$"),
            input,
        )?,
    };
    match items {
        Json::Array(items) => Ok(items),
        other => Err(scope.runtime(format!("Map state input must be an array, got: {other}"))),
    }
}

/// One item as its iteration gets it: `ItemSelector` (or the older `Parameters`) with
/// `$$.Map.Item` set to `map`'s `Item`, or the item itself.
pub(super) fn select(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
    map: &Json,
    jsonata: bool,
) -> Result<Json, Failure> {
    let selector = state
        .get("ItemSelector")
        .or_else(|| state.get("Parameters"));
    let Some(template) = selector else {
        return Ok(map["Item"]["Value"].clone());
    };
    let item_scope = Scope {
        base: scope.base,
        extra: json!({"Map": map}),
        state: scope.state,
        entered: scope.entered,
        vars: scope.vars.clone(),
    };
    match jsonata {
        true => Query::new(&item_scope, input, None, None).template(template, "ItemSelector"),
        false => item_scope.template(template, input),
    }
}

/// One Map iteration.
struct Iteration {
    lane: Lane,
    run: Arc<Run>,
    processor: Arc<Json>,
    name: String,
    index: usize,
}

impl Iteration {
    async fn run(self, item: Json) -> Result<Json, Failure> {
        let details = json!({"name": self.name, "index": self.index});
        let mut lane = self.lane;
        if !self.run.continuing(&lane.path) {
            self.run.history.add(
                &mut lane.prev,
                "MapIterationStarted",
                Some("mapIterationStartedEventDetails"),
                details.clone(),
            );
        }
        let result = self
            .run
            .clone()
            .machine(self.processor.clone(), item, &mut lane)
            .await;
        let (kind, key) = match &result {
            Ok(_) => ("MapIterationSucceeded", "mapIterationSucceededEventDetails"),
            Err(_) => ("MapIterationFailed", "mapIterationFailedEventDetails"),
        };
        self.run
            .history
            .add(&mut lane.prev, kind, Some(key), details);
        result
    }
}

/// MaxConcurrency, or the number MaxConcurrencyPath finds (0 means no limit).
pub(super) fn max_concurrency(
    scope: &Scope<'_>,
    state: &Json,
    input: &Json,
) -> Result<usize, Failure> {
    let value = match state.get("MaxConcurrencyPath").and_then(Json::as_str) {
        Some(p) => scope.select(p, input)?,
        None => state.get("MaxConcurrency").cloned().unwrap_or(json!(0)),
    };
    value
        .as_u64()
        .and_then(|n| usize::try_from(n).ok())
        .ok_or_else(|| {
            scope.runtime(format!(
                "The MaxConcurrency value is not a non-negative integer: {value}"
            ))
        })
}

/// How many iterations may fail before the Map fails.
fn tolerated_failures(state: &Json, total: usize) -> usize {
    let count = state
        .get("ToleratedFailureCount")
        .and_then(Json::as_u64)
        .map(|n| n as usize);
    let percent = state
        .get("ToleratedFailurePercentage")
        .and_then(Json::as_f64)
        .map(|p| (p / 100.0 * total as f64).floor() as usize);
    match (count, percent) {
        (None, None) => 0,
        (c, p) => c.unwrap_or(0).max(p.unwrap_or(0)),
    }
}

/// The outputs in index order once every task finished; with more than `tolerated`
/// failures, stops the rest and answers the first failure (or, past a tolerance,
/// `States.ExceedToleratedFailureThreshold`). A tolerated failure's output is its error
/// output.
async fn collect(set: &mut JoinSet<Finished>, tolerated: usize) -> Result<Vec<Json>, Failure> {
    let mut outputs = vec![Json::Null; set.len()];
    let mut failures = 0;
    while let Some(joined) = set.join_next().await {
        let (index, result) = joined.map_err(|e| Failure::new("States.Runtime", e.to_string()))?;
        match result {
            Ok(output) => outputs[index] = output,
            Err(failure) if failures >= tolerated => {
                set.abort_all();
                if tolerated > 0 {
                    return Err(threshold_exceeded());
                }
                return Err(failure);
            }
            Err(failure) => {
                failures += 1;
                outputs[index] = failure.output();
            }
        }
    }
    Ok(outputs)
}

/// The failure of a Map whose failed iterations exceed its tolerance.
fn threshold_exceeded() -> Failure {
    Failure::new(
        "States.ExceedToleratedFailureThreshold",
        "The specified tolerated failure threshold was exceeded",
    )
}
