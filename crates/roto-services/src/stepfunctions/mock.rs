//! TestState's mocks: the result or error of a Task, Parallel or Map given in the request
//! instead of its work (`mock`), how far its retries and iterations had gone
//! (`stateConfiguration`), and the caller's own context object (`context`), each checked
//! as Step Functions checks them.
//!
//! A Task's mocked result is checked against the output shape of the operation its
//! integration calls (`fieldValidationMode`: `STRICT` wants the required members too,
//! `PRESENT` checks only the members given, `NONE` nothing), with members named as the
//! integrations name them (first letter capitalised); members the shape does not have are
//! let through.

use roto_core::model::{Model, Shape, ShapeKind};
use roto_core::{AwsError, AwsResult, Value};
use serde_json::Value as Json;

use super::interpreter::tasks;
use super::interpreter::{Failure, Mock};
use crate::sdk;

/// The answer to a Map or Parallel tested without a mock.
const MAP_OR_PARALLEL: &str = "TestState API does not support Map or Parallel states. Supported state types include: [Task, Wait, Pass, Succeed, Fail, Choice]";

/// The tested state's mock, checked against the state; None when the request has none
/// (and the state can run without one).
pub(super) fn mock(input: &Value, state: &Json, context: Option<&Json>) -> AwsResult<Option<Mock>> {
    let kind = state.get("Type").and_then(Json::as_str).unwrap_or_default();
    let resource = state
        .get("Resource")
        .and_then(Json::as_str)
        .unwrap_or_default();
    let Some(given) = input.get("mock") else {
        return match kind {
            "Map" | "Parallel" => Err(AwsError::new("InvalidDefinition", MAP_OR_PARALLEL)),
            "Task" if tasks::waits(resource) => Err(AwsError::validation(
                "TestState supports Activity tasks and the .sync and .waitForTaskToken service integration patterns only when a mock is specified",
            )),
            "Task" if input.str("roleArn").is_none() => Err(AwsError::validation(
                "RoleArn must be specified when testing a Task state",
            )),
            _ if context.is_some() => Err(AwsError::validation(
                "A Context object may only be specified when a mock is specified",
            )),
            _ => Ok(None),
        };
    };
    if !matches!(kind, "Task" | "Map" | "Parallel") {
        return Err(AwsError::validation(format!(
            "State type '{kind}' is not supported when a mock is specified"
        )));
    }
    if input.bool("revealSecrets") == Some(true) {
        return Err(AwsError::validation(
            "TestState does not support RevealSecrets when a mock is specified.",
        ));
    }
    if let Some(context) = context {
        check_context(context, kind == "Task" && tasks::waits(resource))?;
    }
    let outcome =
        match (given.str("result"), given.get("errorOutput")) {
            (Some(text), None) => {
                let result: Json = serde_json::from_str(text)
                    .map_err(|_| AwsError::validation("Mocked result must be valid JSON"))?;
                check_result(given, state, kind, resource, &result)?;
                Ok(result)
            }
            (None, Some(error)) => {
                let code = error.str("error").ok_or_else(|| {
                    AwsError::validation("The error of a mocked errorOutput must be specified")
                })?;
                Err(Failure::new(code, error.str("cause").unwrap_or_default()))
            }
            _ => return Err(AwsError::validation(
                "A test mock should have only one of the following fields: [result, errorOutput].",
            )),
        };
    let configuration = input.get("stateConfiguration");
    let count = |name: &str| configuration.and_then(|c| c.int(name)).unwrap_or(0).max(0);
    Ok(Some(Mock {
        outcome,
        retries: u32::try_from(count("retrierRetryCount")).unwrap_or(u32::MAX),
        failures: usize::try_from(count("mapIterationFailureCount")).unwrap_or(usize::MAX),
        own_context: context.is_some(),
    }))
}

/// A mocked result's fit to its state: a Map's is an array (an object with a
/// `ResultWriter`), a Parallel's an array with one output per branch, a Task's its
/// operation's output shape.
fn check_result(
    given: &Value,
    state: &Json,
    kind: &str,
    resource: &str,
    result: &Json,
) -> AwsResult<()> {
    match kind {
        "Map" if state.get("ResultWriter").is_some() && !result.is_object() => {
            Err(AwsError::validation("Mocked result must be a JSON object."))
        }
        "Map" if state.get("ResultWriter").is_none() && !result.is_array() => {
            Err(AwsError::validation("Mocked result must be an array."))
        }
        "Parallel" => {
            let branches = state
                .get("Branches")
                .and_then(Json::as_array)
                .map_or(0, Vec::len);
            match result.as_array() {
                None => Err(AwsError::validation("Mocked result must be an array.")),
                Some(outputs) if outputs.len() != branches => Err(AwsError::validation(
                    "Mocked result must contain the same number of items as number of Parallel branches.",
                )),
                Some(_) => Ok(()),
            }
        }
        "Task" => {
            let strict = match given.str("fieldValidationMode").unwrap_or("STRICT") {
                "NONE" => return Ok(()),
                mode => mode == "STRICT",
            };
            let Some((model, shape)) = tasks::output_shape(resource) else {
                return Ok(());
            };
            if !result.is_object() {
                return Err(schema_error("the mocked result must be a JSON object"));
            }
            fits(model, shape, result, strict, "").map_err(|e| schema_error(&e))
        }
        _ => Ok(()),
    }
}

fn schema_error(problem: &str) -> AwsError {
    AwsError::validation(format!("Mock result schema validation error: {problem}"))
}

/// Whether `value` fits `shape` (field `field` of its parent), or the first problem.
fn fits(
    model: &Model,
    shape: &Shape,
    value: &Json,
    strict: bool,
    field: &str,
) -> Result<(), String> {
    let wrong = |what: &str| Err(format!("Field '{field}' must be {what}"));
    let bounds = |n: f64| match (shape.min, shape.max) {
        (Some(min), _) if n < min => Err(format!("Field '{field}' is less than the minimum value")),
        (_, Some(max)) if n > max => Err(format!("Field '{field}' exceeds the maximum value")),
        _ => Ok(()),
    };
    let length = |text: &str| match shape.min {
        Some(min) if (text.chars().count() as f64) < min => Err(format!(
            "Field '{field}' is smaller than the minimum length"
        )),
        _ => Ok(()),
    };
    if shape.document {
        return Ok(());
    }
    match shape.kind {
        ShapeKind::Structure => {
            let Some(object) = value.as_object() else {
                return wrong("an object");
            };
            for (name, member) in shape.members.iter() {
                let key = sdk::capitalise(name);
                match object.get(&key) {
                    Some(v) => fits(model, model.resolve(member), v, strict, &key)?,
                    None if strict && shape.required.contains(&name) => {
                        return Err(format!("Required field '{key}' is missing"))
                    }
                    None => {}
                }
            }
            Ok(())
        }
        ShapeKind::List => {
            let (Some(items), Some(member)) = (value.as_array(), shape.member.as_deref()) else {
                return wrong("an array");
            };
            let member = model.resolve(member);
            items
                .iter()
                .try_for_each(|item| fits(model, member, item, strict, field))
        }
        ShapeKind::Map => {
            let (Some(object), Some(inner)) = (value.as_object(), shape.value.as_deref()) else {
                return wrong("an object");
            };
            let inner = model.resolve(inner);
            object
                .values()
                .try_for_each(|v| fits(model, inner, v, strict, field))
        }
        ShapeKind::String | ShapeKind::Timestamp | ShapeKind::Blob => match value.as_str() {
            None => wrong("a string"),
            Some(text) if !shape.enum_values.is_empty() && !shape.enum_values.contains(&text) => {
                Err(format!("Field '{field}' is not an expected value"))
            }
            Some(_) if shape.kind == ShapeKind::Timestamp => Ok(()),
            Some(text) => length(text),
        },
        ShapeKind::Integer | ShapeKind::Long => match value.as_f64() {
            Some(n) if value.is_i64() || value.is_u64() => bounds(n),
            _ => wrong("a number"),
        },
        ShapeKind::Float | ShapeKind::Double => match value.as_f64() {
            Some(n) => bounds(n),
            None => wrong("a number"),
        },
        ShapeKind::Boolean => match value.is_boolean() {
            true => Ok(()),
            false => wrong("a boolean"),
        },
    }
}

/// The caller's context object: `Execution`, `StateMachine`, `State`, and `Task` for a
/// state that waits for a token or a child; `Execution.Id` and its kin are strings.
fn check_context(context: &Json, task_allowed: bool) -> AwsResult<()> {
    let invalid = |problem: String| {
        Err(AwsError::validation(format!(
            "Invalid Context object provided: {problem}"
        )))
    };
    let Some(object) = context.as_object() else {
        return invalid("the Context object must be a JSON object".into());
    };
    for (key, value) in object {
        match key.as_str() {
            "Execution" => {
                for field in ["Id", "Name", "RoleArn", "StartTime"] {
                    if value.get(field).is_some_and(|v| !v.is_string()) {
                        return invalid(format!("Execution.{field} must be a string"));
                    }
                }
            }
            "StateMachine" | "State" => {}
            "Task" if task_allowed => {}
            "Task" => return invalid("Context object contains 'Task' when state is not a Task state with a '.sync' or '.waitForTaskToken' service integration pattern".into()),
            "Map" => return invalid("'Map' field is not supported when mocking a Context object".into()),
            other => return invalid(format!("Field '{other}' is not allowed")),
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn output_of(service: &str, operation: &str) -> (&'static Model, &'static Shape) {
        let model = roto_core::model::model(service);
        let op = model.operation(operation).unwrap();
        (model, model.resolve(op.output.as_ref().unwrap()))
    }

    #[test]
    fn mocked_results_are_checked_against_the_output_shape() {
        let (model, shape) = output_of("stepfunctions", "StartExecution");
        let ok = json!({"ExecutionArn": "arn", "StartDate": "2025-01-01T00:00:00Z", "Extra": 1});
        assert_eq!(fits(model, shape, &ok, true, ""), Ok(()));
        let missing = json!({"executionArn": "arn", "StartDate": "x"});
        assert_eq!(
            fits(model, shape, &missing, true, ""),
            Err("Required field 'ExecutionArn' is missing".into())
        );
        assert_eq!(fits(model, shape, &missing, false, ""), Ok(()));
        let wrong = json!({"ExecutionArn": "arn", "StartDate": true});
        assert_eq!(
            fits(model, shape, &wrong, false, ""),
            Err("Field 'StartDate' must be a string".into())
        );
        let (model, shape) = output_of("events", "PutEvents");
        let nested = json!({"Entries": [{"EventId": "a"}, {"EventId": 2}]});
        assert_eq!(
            fits(model, shape, &nested, true, ""),
            Err("Field 'EventId' must be a string".into())
        );
        let (model, shape) = output_of("lambda", "Invoke");
        assert_eq!(
            fits(model, shape, &json!({"StatusCode": "200"}), true, ""),
            Err("Field 'StatusCode' must be a number".into())
        );
    }

    #[test]
    fn context_objects_take_aws_members_only() {
        assert!(check_context(&json!({"Execution": {"Id": "x"}, "State": {}}), false).is_ok());
        let message = |c: Json, task| check_context(&c, task).unwrap_err().message;
        assert_eq!(
            message(json!({"Execution": {"Id": 1}}), false),
            "Invalid Context object provided: Execution.Id must be a string"
        );
        assert!(message(json!({"Map": {}}), false).contains("'Map' field is not supported"));
        assert!(message(json!({"Task": {}}), false).contains("contains 'Task'"));
        assert!(check_context(&json!({"Task": {"Token": "t"}}), true).is_ok());
        assert!(message(json!({"Pokedex": 1}), false).ends_with("Field 'Pokedex' is not allowed"));
    }
}
