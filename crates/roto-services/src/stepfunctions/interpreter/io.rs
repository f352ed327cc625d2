//! A JSONPath state's input and output processing: InputPath, Parameters (and
//! ItemSelector, ResultSelector: templates whose `.$` fields are paths or intrinsic
//! functions), ResultPath and OutputPath, with the `States.Runtime` errors AWS raises when
//! a path finds nothing. A path that starts with a variable's name (`$order.id`) reads the
//! workflow variable.

use std::sync::Arc;

use roto_jsonpath::Path;
use serde_json::{Map, Value as Json};

use super::Failure;
use crate::stepfunctions::intrinsics;

/// What paths are evaluated against, and how failures name the state.
pub(crate) struct Scope<'a> {
    /// The context object's `Execution` and `StateMachine` members.
    pub base: &'a Json,
    /// Its members for this state: `State`, and `Map` or `Task` where they apply.
    pub extra: Json,
    /// The state's name.
    pub state: &'a str,
    /// The id of the state's Entered event.
    pub entered: i64,
    /// The workflow variables this state sees.
    pub vars: Arc<Map<String, Json>>,
}

/// A path that reads a variable: the variable's name and the path into its value
/// (`$order.id` is `order` and `$.id`).
pub(crate) fn variable_path(text: &str) -> Option<(&str, String)> {
    let rest = text.strip_prefix('$')?;
    let end = rest
        .find(|c: char| !(c.is_alphanumeric() || c == '_'))
        .unwrap_or(rest.len());
    if end == 0 {
        return None;
    }
    Some((&rest[..end], format!("${}", &rest[end..])))
}

impl Scope<'_> {
    /// The whole context object (`$$`), built when a path reads it.
    pub fn context(&self) -> Json {
        let mut context = self.base.clone();
        if let (Some(c), Some(extra)) = (context.as_object_mut(), self.extra.as_object()) {
            c.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
        }
        context
    }

    /// A `States.Runtime` failure of this state.
    pub fn runtime(&self, detail: impl AsRef<str>) -> Failure {
        Failure::new(
            "States.Runtime",
            format!(
                "An error occurred while executing the state '{}' (entered at the event id #{}). {}",
                self.state,
                self.entered,
                detail.as_ref()
            ),
        )
    }

    /// Parses a path the definition holds.
    fn path(&self, text: &str) -> Result<Path, Failure> {
        Path::parse(text).map_err(|e| self.runtime(format!("Invalid path '{text}': {e}")))
    }

    /// A path's value over `input` (or the context object for `$$` paths); `None` when it
    /// finds nothing.
    pub fn lookup(&self, text: &str, input: &Json) -> Result<Option<Json>, Failure> {
        if let Some((name, rest)) = variable_path(text) {
            let path = self.path(&rest)?;
            return Ok(self.vars.get(name).and_then(|v| path.evaluate(v)));
        }
        let path = self.path(text)?;
        if path.is_context() {
            return Ok(path.evaluate(&self.context()));
        }
        Ok(path.evaluate(input))
    }

    /// A path's value, or `States.Runtime` naming the path.
    pub fn select(&self, text: &str, input: &Json) -> Result<Json, Failure> {
        self.lookup(text, input)?.ok_or_else(|| {
            self.runtime(format!(
                "Invalid path '{text}' : No results for path: {text}"
            ))
        })
    }

    /// InputPath: the part of the raw input the state works on.
    pub fn input_path(&self, state: &Json, input: &Json) -> Result<Json, Failure> {
        match state.get("InputPath") {
            None => Ok(input.clone()),
            Some(Json::Null) => Ok(Json::Object(Map::new())),
            Some(p) => self.select(p.as_str().unwrap_or("$"), input),
        }
    }

    /// OutputPath: the part of the state's output passed on.
    pub fn output_path(&self, state: &Json, output: Json) -> Result<Json, Failure> {
        match state.get("OutputPath") {
            None => Ok(output),
            Some(Json::Null) => Ok(Json::Object(Map::new())),
            Some(p) => self.select(p.as_str().unwrap_or("$"), &output),
        }
    }

    /// ResultPath: where the result goes in the raw input.
    pub fn result_path(&self, state: &Json, input: &Json, result: Json) -> Result<Json, Failure> {
        let text = match state.get("ResultPath") {
            None => return Ok(result),
            Some(Json::Null) => return Ok(input.clone()),
            Some(p) => p.as_str().unwrap_or("$"),
        };
        let path = self.path(text)?;
        let mut output = input.clone();
        path.set(&mut output, result).map_err(|_| {
            Failure::new(
                "States.ResultPathMatchFailure",
                format!(
                    "An error occurred while executing the state '{}' (entered at the event id #{}). Unable to apply ResultPath \"{text}\" to input \"{input}\".",
                    self.state, self.entered
                ),
            )
        })?;
        Ok(output)
    }

    /// A template field (Parameters, ResultSelector, ItemSelector) applied to `input`;
    /// none leaves the input as it is.
    pub fn template_field(&self, state: &Json, field: &str, input: Json) -> Result<Json, Failure> {
        match state.get(field) {
            None => Ok(input),
            Some(template) => self.template(template, &input),
        }
    }

    /// Expands a template: `.$` fields become their path's value or their function's result.
    pub fn template(&self, template: &Json, input: &Json) -> Result<Json, Failure> {
        match template {
            Json::Object(obj) => {
                let mut out = Map::new();
                for (key, value) in obj {
                    match key.strip_suffix(".$") {
                        Some(name) => {
                            let text = value.as_str().unwrap_or_default();
                            out.insert(name.to_string(), self.dynamic(key, text, input)?);
                        }
                        None => {
                            out.insert(key.clone(), self.template(value, input)?);
                        }
                    }
                }
                Ok(Json::Object(out))
            }
            Json::Array(items) => items
                .iter()
                .map(|i| self.template(i, input))
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array),
            other => Ok(other.clone()),
        }
    }

    /// The value of one `.$` field: a path, a context path or an intrinsic function.
    fn dynamic(&self, key: &str, text: &str, input: &Json) -> Result<Json, Failure> {
        if text.starts_with("States.") {
            return self.intrinsic(text, input);
        }
        self.lookup(text, input)?.ok_or_else(|| {
            self.runtime(format!(
                "The JSONPath '{text}' specified for the field '{key}' could not be found in the input '{input}'"
            ))
        })
    }

    /// Evaluates an intrinsic function call.
    pub fn intrinsic(&self, text: &str, input: &Json) -> Result<Json, Failure> {
        let call = intrinsics::parse(text).map_err(|e| self.runtime(e))?;
        let resolve = |p: &str| -> Result<Json, String> {
            match self.lookup(p, input) {
                Ok(Some(v)) => Ok(v),
                Ok(None) => Err(format!(
                    "The JSONPath '{p}' could not be found in the input '{input}'"
                )),
                Err(f) => Err(f.cause),
            }
        };
        intrinsics::evaluate(&call, &resolve).map_err(|e| {
            Failure::new(
                "States.IntrinsicFailure",
                format!(
                    "An error occurred while executing the state '{}' (entered at the event id #{}). {e}",
                    self.state, self.entered
                ),
            )
        })
    }
}
