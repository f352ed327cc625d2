//! TestState: one state run on its own, in the request, as Step Functions' console and
//! SDKs test a state: its input and output processing, its Task's real call through the
//! dispatcher, its Choice, and how its Retry and Catch would handle an error (`RETRIABLE`
//! with the retrier's index and delay, `CAUGHT_ERROR` with the catcher's `Next`), without
//! retrying or waiting. `inspectionLevel` `DEBUG` or `TRACE` adds each processing step's
//! value (`inspectionData`).
//!
//! The definition is a state (named by `stateName`, else `TestState`) or a whole state
//! machine with `stateName` naming the state; either is checked as CreateStateMachine
//! checks definitions. A `mock` ([`super::mock`]) stands in for a Task's, Parallel's or
//! Map's work; Parallel and Map are tested only with one.

use std::sync::Arc;

use roto_core::dispatch::new_request_id;
use roto_core::timestamp::{format, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};

use super::interpreter::{Failure, Inspection, Lane, Run};
use super::StepFunctions;
use super::{definition, mock};

/// The state under test, its name, and whether its machine's language is JSONata.
fn state_under_test(input: &Value) -> AwsResult<(String, Json, bool)> {
    let text = input.str("definition").unwrap_or_default();
    let parsed: Json = serde_json::from_str(text).map_err(|e| {
        AwsError::new(
            "InvalidDefinition",
            format!("Invalid State Machine Definition: 'INVALID_JSON_DESCRIPTION: {e} at /'"),
        )
    })?;
    let name = input.str("stateName");
    let (machine, name) = match (parsed.get("States"), name) {
        (Some(_), Some(name)) => (parsed.clone(), name.to_string()),
        (Some(_), None) => {
            return Err(AwsError::validation(
                "stateName must be specified when the definition is a state machine",
            ))
        }
        (None, name) => {
            let name = name.unwrap_or("TestState").to_string();
            (definition::machine_for_state(&name, &parsed), name)
        }
    };
    let machine = definition::parse(&machine.to_string())?;
    let state = machine
        .get("States")
        .and_then(|s| s.get(&name))
        .cloned()
        .ok_or_else(|| {
            AwsError::validation(format!("State '{name}' does not exist in the definition"))
        })?;
    let jsonata = machine.get("QueryLanguage").and_then(Json::as_str) == Some("JSONata");
    Ok((name, state, jsonata))
}

/// A JSON member of the request (`input`, `variables`, `context`), or its default.
fn json_member(input: &Value, member: &str, default: Json) -> AwsResult<Json> {
    match input.str(member) {
        None => Ok(default),
        Some(text) => serde_json::from_str(text).map_err(|e| {
            AwsError::new(
                "InvalidExecutionInput",
                format!("Invalid State Machine Execution Input: '{e}'"),
            )
        }),
    }
}

/// The context object a tested state sees: the caller's `context` (with a mock), else a
/// made-up execution's.
fn context_object(ctx: &Context, given: Option<Json>, state_input: &Json, role: &str) -> Json {
    let arn = format!(
        "arn:aws:states:{}:{}:execution:TestStateMachine:{}",
        ctx.region,
        ctx.account,
        new_request_id()
    );
    let made_up = json!({
        "Execution": {
            "Id": arn,
            "Input": state_input,
            "Name": arn.rsplit(':').next().unwrap_or_default(),
            "RoleArn": role,
            "StartTime": format(now_millis(), TimestampFormat::Iso8601),
            "RedriveCount": 0,
        },
        "StateMachine": {
            "Id": format!("arn:aws:states:{}:{}:stateMachine:TestStateMachine", ctx.region, ctx.account),
            "Name": "TestStateMachine",
        },
    });
    given.unwrap_or(made_up)
}

/// `inspectionData`: the processing steps' values, and how an error was handled.
fn inspection_data(inspection: Inspection) -> Value {
    let mut data = inspection.data;
    let mut details = Map::new();
    if let Some((index, seconds)) = inspection.retry {
        details.insert("retryIndex".into(), json!(index));
        details.insert(
            "retryBackoffIntervalSeconds".into(),
            json!(seconds.round() as i64),
        );
    }
    if let Some((index, _)) = &inspection.catch {
        details.insert("catchIndex".into(), json!(index));
    }
    if !details.is_empty() {
        data.insert("errorDetails".into(), Json::Object(details));
    }
    Value::from_json(&Json::Object(data))
}

impl StepFunctions {
    pub(super) async fn test_state(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, state, jsonata) = state_under_test(input)?;
        let state_input = json_member(input, "input", json!({}))?;
        let vars = match json_member(input, "variables", json!({}))? {
            Json::Object(vars) => vars,
            _ => return Err(AwsError::validation("variables must be a JSON object")),
        };
        let role = input.str("roleArn").unwrap_or_default();
        let given = input
            .str("context")
            .map(|_| json_member(input, "context", Json::Null))
            .transpose()?;
        let mock = mock::mock(input, &state, given.as_ref())?;
        let context = context_object(ctx, given, &state_input, role);
        let arn = context["Execution"]["Id"]
            .as_str()
            .unwrap_or_default()
            .to_string();
        let run = Arc::new(Run::testing(
            self.engine.clone(),
            ctx.clone(),
            &arn,
            context,
            mock,
        ));
        let mut lane = Lane {
            vars: Arc::new(vars),
            jsonata,
            ..Lane::default()
        };
        let (result, output, inspection) =
            run.test_state(&name, &state, state_input, &mut lane).await;
        let (status, next, failure) = match (result, &inspection) {
            (
                Ok(next),
                Inspection {
                    catch: Some((_, f)),
                    ..
                },
            ) => ("CAUGHT_ERROR", next, Some(f.clone())),
            (Ok(next), _) => ("SUCCEEDED", next, None),
            (Err(f), Inspection { retry: Some(_), .. }) => ("RETRIABLE", None, Some(f)),
            (Err(f), _) => ("FAILED", None, Some(f)),
        };
        let debug = matches!(input.str("inspectionLevel"), Some("DEBUG" | "TRACE"));
        let output =
            (status == "SUCCEEDED" || status == "CAUGHT_ERROR").then(|| output.to_string());
        let Failure { error, cause, .. } = failure.unwrap_or_else(|| Failure::new("", ""));
        Ok(Value::map()
            .with("status", status)
            .with_opt("output", output)
            .with_opt("nextState", next)
            .with_opt("error", (!error.is_empty()).then_some(error))
            .with_opt("cause", (!cause.is_empty()).then_some(cause))
            .with_opt("inspectionData", debug.then(|| inspection_data(inspection))))
    }
}
