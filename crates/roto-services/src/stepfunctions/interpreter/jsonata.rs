//! A JSONata state's expressions: `{% %}` strings anywhere in Arguments, Output, Assign,
//! Items, ItemSelector and the scalar fields (Seconds, TimeoutSeconds, Error...),
//! evaluated by roto-jsonata with Step Functions' functions, the workflow's variables and
//! the reserved `$states` (`input`, `context`, and `result` or `errorOutput` where they
//! exist). A failed evaluation is `States.QueryEvaluationError` with AWS's cause.

use roto_jsonata::{Environment, Expression};
use serde_json::{Map, Value as Json};

use super::io::Scope;
use super::Failure;

/// The expression inside a `{% %}` string, if the string is one.
pub(crate) fn expression(text: &str) -> Option<&str> {
    text.strip_prefix("{%")?.strip_suffix("%}").map(str::trim)
}

/// What expressions of one state evaluate against.
pub(crate) struct Query<'a> {
    scope: &'a Scope<'a>,
    env: Environment,
    input: Json,
}

/// JSONata's name for a value's type, as AWS's causes name it.
fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

impl<'a> Query<'a> {
    /// A query over a state's input, with its result or error output where there is one.
    pub fn new(
        scope: &'a Scope<'a>,
        input: &Json,
        result: Option<&Json>,
        error_output: Option<&Json>,
    ) -> Query<'a> {
        let mut env = Environment::with_step_functions();
        for (name, value) in scope.vars.iter() {
            env.bind(name, value.clone());
        }
        let mut states = Map::new();
        states.insert("input".into(), input.clone());
        states.insert("context".into(), scope.context());
        if let Some(r) = result {
            states.insert("result".into(), r.clone());
        }
        if let Some(e) = error_output {
            states.insert("errorOutput".into(), e.clone());
        }
        env.bind("states", Json::Object(states));
        Query {
            scope,
            env,
            input: input.clone(),
        }
    }

    /// A `States.QueryEvaluationError` of this state about the expression in `field`.
    fn error(&self, text: &str, field: &str, what: &str) -> Failure {
        Failure::evaluation(
            format!(
                "An error occurred while executing the state '{}' (entered at the event id #{}). The JSONata expression '{text}' specified for the field '{field}' {what}",
                self.scope.state, self.scope.entered
            ),
            field,
        )
    }

    /// One expression's value; undefined is an error.
    fn evaluate(&self, text: &str, field: &str) -> Result<Json, Failure> {
        let parsed = Expression::parse(text).map_err(|e| {
            self.error(
                text,
                field,
                &format!("threw an error during evaluation: {}", e.message()),
            )
        })?;
        match parsed.evaluate(&self.input, &self.env) {
            Ok(Some(value)) => Ok(value),
            Ok(None) => Err(self.error(text, field, "returned nothing (undefined).")),
            Err(e) => Err(self.error(
                text,
                field,
                &format!("threw an error during evaluation: {}", e.message()),
            )),
        }
    }

    /// A template: every `{% %}` string in it (at any depth) replaced by its value.
    pub fn template(&self, template: &Json, field: &str) -> Result<Json, Failure> {
        match template {
            Json::String(s) => match expression(s) {
                Some(text) => self.evaluate(text, field),
                None => Ok(template.clone()),
            },
            Json::Object(obj) => {
                let mut out = Map::new();
                for (key, value) in obj {
                    out.insert(
                        key.clone(),
                        self.template(value, &format!("{field}/{key}"))?,
                    );
                }
                Ok(Json::Object(out))
            }
            Json::Array(items) => items
                .iter()
                .enumerate()
                .map(|(i, v)| self.template(v, &format!("{field}[{i}]")))
                .collect::<Result<Vec<_>, _>>()
                .map(Json::Array),
            other => Ok(other.clone()),
        }
    }

    /// A state's field through [`Query::template`], if the state has it.
    pub fn field(&self, state: &Json, field: &str) -> Result<Option<Json>, Failure> {
        state
            .get(field)
            .map(|t| self.template(t, field))
            .transpose()
    }

    /// A field that must evaluate to one type (`Items` an array, `Condition` a boolean):
    /// AWS's "unexpected result type" otherwise.
    pub fn typed(
        &self,
        state: &Json,
        field: &str,
        expected: &str,
    ) -> Result<Option<Json>, Failure> {
        let Some(value) = self.field(state, field)? else {
            return Ok(None);
        };
        let ok = match expected {
            "integer" => value.as_i64().is_some() || value.as_u64().is_some(),
            other => type_name(&value) == other,
        };
        if ok {
            return Ok(Some(value));
        }
        let text = state
            .get(field)
            .and_then(Json::as_str)
            .and_then(expression)
            .unwrap_or_default();
        Err(self.error(
            text,
            field,
            &format!(
                "returned an unexpected result type. Expected '{expected}', but was '{}' for value: {value}",
                type_name(&value)
            ),
        ))
    }

    /// The state with its scalar fields' expressions (Seconds, Timestamp, TimeoutSeconds,
    /// HeartbeatSeconds, MaxConcurrency, the tolerated failures) replaced by their values,
    /// each of the type the field takes.
    pub fn scalars(&self, state: &Json) -> Result<Json, Failure> {
        const FIELDS: &[(&str, &str)] = &[
            ("Seconds", "integer"),
            ("Timestamp", "string"),
            ("TimeoutSeconds", "integer"),
            ("HeartbeatSeconds", "integer"),
            ("MaxConcurrency", "integer"),
            ("ToleratedFailureCount", "integer"),
            ("ToleratedFailurePercentage", "number"),
        ];
        let mut resolved = state.clone();
        for (field, expected) in FIELDS {
            let is_expression = state
                .get(*field)
                .and_then(Json::as_str)
                .and_then(expression)
                .is_some();
            if is_expression {
                if let Some(value) = self.typed(state, field, expected)? {
                    resolved[*field] = value;
                }
            }
        }
        Ok(resolved)
    }

    /// The variables an `Assign` sets, evaluated now (all against the values from before
    /// the state, as AWS evaluates them).
    pub fn assign(&self, assign: &Json) -> Result<Map<String, Json>, Failure> {
        match self.template(assign, "Assign")? {
            Json::Object(vars) => Ok(vars),
            other => Err(self.error(
                assign.as_str().and_then(expression).unwrap_or_default(),
                "Assign",
                &format!(
                    "returned an unexpected result type. Expected 'object', but was '{}' for value: {other}",
                    type_name(&other)
                ),
            )),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;
    use std::sync::Arc;

    fn scope(base: &Json) -> Scope<'_> {
        let mut vars = Map::new();
        vars.insert("rate".into(), json!(3));
        Scope {
            base,
            extra: json!({"State": {"Name": "S"}}),
            state: "S",
            entered: 2,
            vars: Arc::new(vars),
        }
    }

    #[test]
    fn templates_evaluate_every_expression_with_states_and_variables() {
        let base = json!({"Execution": {"Id": "e"}});
        let scope = scope(&base);
        let q = Query::new(&scope, &json!({"n": 2}), Some(&json!([1, 2])), None);
        let out = q
            .template(
                &json!({"a": "{% $states.input.n * $rate %}", "b": ["{% $count($states.result) %}", "x"], "c": "{% $states.context.State.Name %}"}),
                "Output",
            )
            .unwrap();
        assert_eq!(out, json!({"a": 6, "b": [2, "x"], "c": "S"}));
    }

    #[test]
    fn failures_name_the_field_as_aws_does() {
        let base = json!({});
        let scope = scope(&base);
        let q = Query::new(&scope, &json!({}), None, None);
        let f = q
            .template(&json!({"x": "{% $states.input.missing %}"}), "Arguments")
            .unwrap_err();
        assert_eq!(f.error, "States.QueryEvaluationError");
        assert_eq!(f.cause, "An error occurred while executing the state 'S' (entered at the event id #2). The JSONata expression '$states.input.missing' specified for the field 'Arguments/x' returned nothing (undefined).");
        let f = q
            .typed(&json!({"Items": "{% 'a' %}"}), "Items", "array")
            .unwrap_err();
        assert!(f
            .cause
            .ends_with("returned an unexpected result type. Expected 'array', but was 'string' for value: \"a\""));
        let f = q.template(&json!("{% 1 + 'a' %}"), "Output").unwrap_err();
        assert!(
            f.cause.contains("threw an error during evaluation: "),
            "{}",
            f.cause
        );
    }
}
