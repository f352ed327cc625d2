//! Checks of an Amazon States Language definition, before it is stored or run.
//!
//! One walk over the parsed JSON collects diagnostics with AWS's codes
//! (`INVALID_JSON_DESCRIPTION`, `SCHEMA_VALIDATION_FAILED`, `MISSING_TRANSITION_TARGET`,
//! ...), a message and the JSON pointer of the offending field. CreateStateMachine and
//! UpdateStateMachine join them into one `InvalidDefinition` ("Invalid State Machine
//! Definition: '...'"); ValidateStateMachineDefinition returns them as its diagnostics.
//! serde_json refuses documents nested deeper than 128 levels, which bounds the walk.
//! A JSONata state's `{% %}` expressions are parsed (`INVALID_JSONATA_EXPRESSION`) and
//! their `$states` members checked against where they exist
//! (`UNSUPPORTED_JSONATA_EXPRESSION`).

use std::collections::{BTreeMap, BTreeSet};

use roto_core::{AwsError, AwsResult, Value};
use serde_json::{Map, Value as Json};

use super::interpreter::jsonata::expression;
use super::paths;

/// One problem found in a definition.
#[derive(Debug, Clone, PartialEq, Eq)]
pub(super) struct Diagnostic {
    /// AWS's code (`SCHEMA_VALIDATION_FAILED`).
    pub code: &'static str,
    /// What is wrong.
    pub message: String,
    /// The JSON pointer of the field (`/States/A/Next`).
    pub location: String,
}

impl Diagnostic {
    fn text(&self) -> String {
        format!("{}: {} at {}", self.code, self.message, self.location)
    }
}

const STATE_TYPES: &[&str] = &[
    "Task", "Pass", "Choice", "Wait", "Succeed", "Fail", "Parallel", "Map",
];

const COMMON_FIELDS: &[&str] = &["Type", "Comment", "QueryLanguage", "Assign", "Output"];

/// The fields each state type accepts, beyond [`COMMON_FIELDS`].
fn fields_of(kind: &str) -> &'static [&'static str] {
    match kind {
        "Pass" => &[
            "Next",
            "End",
            "InputPath",
            "OutputPath",
            "ResultPath",
            "Parameters",
            "Result",
        ],
        "Task" => &[
            "Next",
            "End",
            "InputPath",
            "OutputPath",
            "ResultPath",
            "Parameters",
            "Arguments",
            "ResultSelector",
            "Resource",
            "Retry",
            "Catch",
            "TimeoutSeconds",
            "TimeoutSecondsPath",
            "HeartbeatSeconds",
            "HeartbeatSecondsPath",
            "Credentials",
        ],
        "Choice" => &["InputPath", "OutputPath", "Choices", "Default"],
        "Wait" => &[
            "Next",
            "End",
            "InputPath",
            "OutputPath",
            "Seconds",
            "Timestamp",
            "SecondsPath",
            "TimestampPath",
        ],
        "Succeed" => &["InputPath", "OutputPath"],
        "Fail" => &["Error", "ErrorPath", "Cause", "CausePath"],
        "Parallel" => &[
            "Next",
            "End",
            "InputPath",
            "OutputPath",
            "ResultPath",
            "Parameters",
            "Arguments",
            "ResultSelector",
            "Branches",
            "Retry",
            "Catch",
        ],
        "Map" => &[
            "Next",
            "End",
            "InputPath",
            "OutputPath",
            "ResultPath",
            "Parameters",
            "Arguments",
            "ResultSelector",
            "Iterator",
            "ItemProcessor",
            "ItemsPath",
            "Items",
            "ItemSelector",
            "ItemReader",
            "ItemBatcher",
            "ResultWriter",
            "MaxConcurrency",
            "MaxConcurrencyPath",
            "ToleratedFailurePercentage",
            "ToleratedFailurePercentagePath",
            "ToleratedFailureCount",
            "ToleratedFailureCountPath",
            "Label",
            "Retry",
            "Catch",
        ],
        _ => &[],
    }
}

/// JSONPath-only fields, refused in a JSONata state.
const JSONPATH_ONLY: &[&str] = &[
    "InputPath",
    "OutputPath",
    "ResultPath",
    "Parameters",
    "ResultSelector",
    "ItemsPath",
    "SecondsPath",
    "TimestampPath",
    "ErrorPath",
    "CausePath",
    "TimeoutSecondsPath",
    "HeartbeatSecondsPath",
    "MaxConcurrencyPath",
    "ToleratedFailureCountPath",
    "ToleratedFailurePercentagePath",
];

/// JSONata-only fields, refused in a JSONPath state.
const JSONATA_ONLY: &[&str] = &["Arguments", "Output", "Items"];

/// The checks of a whole definition.
struct Checker {
    diagnostics: Vec<Diagnostic>,
}

impl Checker {
    fn error(&mut self, code: &'static str, message: impl Into<String>, location: &str) {
        self.diagnostics.push(Diagnostic {
            code,
            message: message.into(),
            location: if location.is_empty() {
                "/".into()
            } else {
                location.into()
            },
        });
    }

    fn schema(&mut self, message: impl Into<String>, location: &str) {
        self.error("SCHEMA_VALIDATION_FAILED", message, location);
    }

    /// A set of states with its `StartAt` (the top level, a branch, an item processor).
    fn machine(&mut self, obj: &Map<String, Json>, at: &str, language: &str) {
        let required: Vec<&str> = ["StartAt", "States"]
            .into_iter()
            .filter(|f| !obj.contains_key(*f))
            .collect();
        if !required.is_empty() {
            self.schema(
                format!("These fields are required: [{}]", required.join(", ")),
                at,
            );
            return;
        }
        let language = self.language(obj, at, language);
        let Some(states) = obj.get("States").and_then(Json::as_object) else {
            self.schema(
                "The field 'States' must be an object",
                &format!("{at}/States"),
            );
            return;
        };
        if states.is_empty() {
            self.schema(
                "The field 'States' must have at least one state",
                &format!("{at}/States"),
            );
            return;
        }
        for (name, state) in states {
            let here = format!("{at}/States/{name}");
            if name.is_empty() || name.chars().count() > 80 {
                self.error(
                    "INVALID_STATE_NAME",
                    format!("State name '{name}' is not valid"),
                    &here,
                );
            }
            match state.as_object() {
                Some(state) => self.state(state, states, &here, language),
                None => self.schema("A state must be an object", &here),
            }
        }
        self.start_and_reachability(obj, states, at);
    }

    /// The query language an object declares, else the one it inherits.
    fn language<'a>(
        &mut self,
        obj: &'a Map<String, Json>,
        at: &str,
        inherited: &'a str,
    ) -> &'a str {
        match obj.get("QueryLanguage") {
            None => inherited,
            Some(Json::String(s)) if s == "JSONPath" || s == "JSONata" => {
                if inherited == "JSONata" && s == "JSONPath" && !at.is_empty() {
                    self.schema(
                        "The QueryLanguage of a state cannot be JSONPath when the state machine's is JSONata",
                        &format!("{at}/QueryLanguage"),
                    );
                }
                s
            }
            Some(_) => {
                self.schema(
                    "The field 'QueryLanguage' should have one of these values: [JSONPath, JSONata]",
                    &format!("{at}/QueryLanguage"),
                );
                inherited
            }
        }
    }

    fn start_and_reachability(
        &mut self,
        obj: &Map<String, Json>,
        states: &Map<String, Json>,
        at: &str,
    ) {
        let start = obj
            .get("StartAt")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if !states.contains_key(start) {
            self.error(
                "MISSING_TRANSITION_TARGET",
                format!("Missing 'Next' target: {start}"),
                &format!("{at}/StartAt"),
            );
            return;
        }
        let mut reached = BTreeSet::new();
        let mut queue = vec![start.to_string()];
        while let Some(name) = queue.pop() {
            if !reached.insert(name.clone()) {
                continue;
            }
            if let Some(state) = states.get(&name) {
                queue.extend(transitions(state).into_iter().map(|(_, t)| t));
            }
        }
        for name in states.keys().filter(|n| !reached.contains(*n)) {
            self.error(
                "MISSING_TRANSITION_TARGET",
                format!("State \"{name}\" is not reachable."),
                &format!("{at}/States/{name}"),
            );
        }
        let terminal = states.values().any(|s| {
            let kind = s.get("Type").and_then(Json::as_str).unwrap_or_default();
            matches!(kind, "Succeed" | "Fail") || s.get("End") == Some(&Json::Bool(true))
        });
        if !terminal {
            self.error(
                "MISSING_END_STATE",
                "Workflow has no terminal state",
                &format!("{at}/States"),
            );
        }
    }

    fn state(
        &mut self,
        state: &Map<String, Json>,
        states: &Map<String, Json>,
        at: &str,
        language: &str,
    ) {
        let Some(kind) = state.get("Type").and_then(Json::as_str) else {
            self.schema("These fields are required: [Type]", at);
            return;
        };
        if !STATE_TYPES.contains(&kind) {
            self.schema(
                format!(
                    "The field \"Type\" should have one of these values: [{}]",
                    STATE_TYPES.join(", ")
                ),
                &format!("{at}/Type"),
            );
            return;
        }
        let language = self.language(state, at, language);
        self.fields(state, kind, at, language);
        for (field, target) in transitions(&Json::Object(state.clone())) {
            if !states.contains_key(&target) {
                self.error(
                    "MISSING_TRANSITION_TARGET",
                    format!("Missing 'Next' target: {target}"),
                    &format!("{at}/{field}"),
                );
            }
        }
        self.transition_fields(state, kind, at);
        self.kind_specific(state, kind, at, language);
        self.error_handlers(state, at);
        if language == "JSONata" {
            self.expressions(state, kind, at);
        } else {
            for field in ["Parameters", "ResultSelector", "ItemSelector"] {
                if let Some(template) = state.get(field) {
                    self.template(template, &format!("{at}/{field}"));
                }
            }
            for field in ["InputPath", "OutputPath", "ResultPath", "ItemsPath"] {
                self.path_field(state, field, at);
            }
        }
    }

    fn fields(&mut self, state: &Map<String, Json>, kind: &str, at: &str, language: &str) {
        let allowed = fields_of(kind);
        for field in state.keys() {
            let f = field.as_str();
            let foreign = match language {
                "JSONata" => JSONPATH_ONLY.contains(&f) || (kind == "Pass" && f == "Result"),
                _ => JSONATA_ONLY.contains(&f),
            };
            if foreign || (!COMMON_FIELDS.contains(&f) && !allowed.contains(&f)) {
                self.schema(format!("Field '{f}' is not supported"), at);
            }
        }
    }

    fn transition_fields(&mut self, state: &Map<String, Json>, kind: &str, at: &str) {
        if matches!(kind, "Choice" | "Succeed" | "Fail") {
            return;
        }
        let next = state.contains_key("Next");
        let end = state.get("End") == Some(&Json::Bool(true));
        if next && end {
            self.schema("Only one of 'Next' or 'End' can be set", at);
        } else if !next && !end {
            self.schema("These fields are required: [Next or End]", at);
        }
    }

    fn kind_specific(&mut self, state: &Map<String, Json>, kind: &str, at: &str, language: &str) {
        match kind {
            "Task" if !state.contains_key("Resource") => {
                self.schema("These fields are required: [Resource]", at)
            }
            "Task" if !state.get("Resource").is_some_and(Json::is_string) => self.schema(
                "The field 'Resource' must be a string",
                &format!("{at}/Resource"),
            ),
            "Wait" => {
                let count = ["Seconds", "Timestamp", "SecondsPath", "TimestampPath"]
                    .iter()
                    .filter(|f| state.contains_key(**f))
                    .count();
                if count != 1 {
                    self.schema(
                        "Exactly one of 'Seconds', 'Timestamp', 'SecondsPath' or 'TimestampPath' must be set",
                        at,
                    );
                }
            }
            "Fail" => {
                for (a, b) in [("Error", "ErrorPath"), ("Cause", "CausePath")] {
                    if state.contains_key(a) && state.contains_key(b) {
                        self.schema(format!("Only one of '{a}' or '{b}' can be set"), at);
                    }
                }
            }
            "Choice" => self.choice(state, at, language),
            "Parallel" => self.branches(state, at, language),
            "Map" => self.map(state, at, language),
            _ => {}
        }
    }

    fn choice(&mut self, state: &Map<String, Json>, at: &str, language: &str) {
        match state.get("Choices").and_then(Json::as_array) {
            Some(choices) if !choices.is_empty() => {
                for (i, rule) in choices.iter().enumerate() {
                    let here = format!("{at}/Choices/{i}");
                    if rule.get("Next").and_then(Json::as_str).is_none() {
                        self.schema("These fields are required: [Next]", &here);
                    }
                    if language == "JSONata" && rule.get("Condition").is_none() {
                        self.schema("These fields are required: [Condition]", &here);
                    }
                }
            }
            _ => self.schema("These fields are required: [Choices]", at),
        }
    }

    fn branches(&mut self, state: &Map<String, Json>, at: &str, language: &str) {
        match state.get("Branches").and_then(Json::as_array) {
            Some(branches) if !branches.is_empty() => {
                for (i, branch) in branches.iter().enumerate() {
                    let here = format!("{at}/Branches/{i}");
                    match branch.as_object() {
                        Some(b) => self.machine(b, &here, language),
                        None => self.schema("A branch must be an object", &here),
                    }
                }
            }
            _ => self.schema("These fields are required: [Branches]", at),
        }
    }

    fn map(&mut self, state: &Map<String, Json>, at: &str, language: &str) {
        let field = if state.contains_key("ItemProcessor") {
            "ItemProcessor"
        } else {
            "Iterator"
        };
        match state.get(field).and_then(Json::as_object) {
            Some(processor) => self.machine(processor, &format!("{at}/{field}"), language),
            None => self.schema("These fields are required: [ItemProcessor]", at),
        }
        if let Some(n) = state.get("MaxConcurrency") {
            if n.as_u64().is_none() && !n.is_string() {
                self.schema(
                    "The field 'MaxConcurrency' must be a non-negative integer",
                    &format!("{at}/MaxConcurrency"),
                );
            }
        }
    }

    fn error_handlers(&mut self, state: &Map<String, Json>, at: &str) {
        for field in ["Retry", "Catch"] {
            let Some(handlers) = state.get(field) else {
                continue;
            };
            let Some(handlers) = handlers.as_array() else {
                self.schema(
                    format!("The field '{field}' must be an array"),
                    &format!("{at}/{field}"),
                );
                continue;
            };
            for (i, h) in handlers.iter().enumerate() {
                let here = format!("{at}/{field}/{i}");
                let errors = h.get("ErrorEquals").and_then(Json::as_array);
                match errors {
                    Some(errors) if !errors.is_empty() => {
                        let all = errors.iter().any(|e| e == "States.ALL");
                        if all && (errors.len() > 1 || i + 1 != handlers.len()) {
                            self.schema(
                                "States.ALL must appear alone in the last ErrorEquals",
                                &format!("{here}/ErrorEquals"),
                            );
                        }
                    }
                    _ => self.schema("These fields are required: [ErrorEquals]", &here),
                }
                if field == "Catch" && h.get("Next").and_then(Json::as_str).is_none() {
                    self.schema("These fields are required: [Next]", &here);
                }
            }
        }
    }

    /// A Parameters-like template: every `.$` key holds a path or an intrinsic function.
    fn template(&mut self, template: &Json, at: &str) {
        let Json::Object(obj) = template else {
            if let Json::Array(items) = template {
                for (i, item) in items.iter().enumerate() {
                    self.template(item, &format!("{at}/{i}"));
                }
            }
            return;
        };
        for (key, value) in obj {
            let here = format!("{at}/{key}");
            if key.ends_with(".$") {
                let ok = value.as_str().is_some_and(paths::valid_dynamic);
                if !ok {
                    self.schema(
                        format!("The value for the field '{key}' must be a valid JSONPath or a valid intrinsic function call"),
                        &here,
                    );
                }
            } else {
                self.template(value, &here);
            }
        }
    }

    /// The expressions of a JSONata state, with the `$states` members each field has.
    fn expressions(&mut self, state: &Map<String, Json>, kind: &str, at: &str) {
        const FIELDS: &[&str] = &[
            "Arguments",
            "Items",
            "ItemSelector",
            "Seconds",
            "Timestamp",
            "TimeoutSeconds",
            "HeartbeatSeconds",
            "MaxConcurrency",
            "ToleratedFailureCount",
            "ToleratedFailurePercentage",
            "Error",
            "Cause",
        ];
        let with_result: &[&str] = match kind {
            "Task" | "Parallel" | "Map" => &["result"],
            _ => &[],
        };
        for field in FIELDS {
            if let Some(value) = state.get(*field) {
                self.jsonata(value, &format!("{at}/{field}"), &[]);
            }
        }
        for field in ["Output", "Assign"] {
            if let Some(value) = state.get(field) {
                self.jsonata(value, &format!("{at}/{field}"), with_result);
            }
        }
        for (list, members) in [("Choices", &[][..]), ("Catch", &["errorOutput"][..])] {
            let Some(rules) = state.get(list).and_then(Json::as_array) else {
                continue;
            };
            for (i, rule) in rules.iter().enumerate() {
                for field in ["Condition", "Output", "Assign"] {
                    if let Some(value) = rule.get(field) {
                        self.jsonata(value, &format!("{at}/{list}/{i}/{field}"), members);
                    }
                }
            }
        }
    }

    /// Every `{% %}` string in a JSONata field: it must parse, and read only the
    /// `$states` members that exist there (`input` and `context` always, plus `extra`).
    fn jsonata(&mut self, value: &Json, at: &str, extra: &[&str]) {
        match value {
            Json::String(s) => {
                let Some(text) = expression(s) else {
                    return;
                };
                if let Err(e) = roto_jsonata::Expression::parse(text) {
                    self.error("INVALID_JSONATA_EXPRESSION", e.message(), at);
                } else if text.contains("$$") {
                    self.error(
                        "UNSUPPORTED_JSONATA_EXPRESSION",
                        "Reference to '$$' is not supported.",
                        at,
                    );
                } else if let Some(member) = states_members(text)
                    .into_iter()
                    .find(|m| !matches!(*m, "input" | "context") && !extra.contains(m))
                {
                    self.error(
                        "UNSUPPORTED_JSONATA_EXPRESSION",
                        format!("Field '$states.{member}' does not exist."),
                        at,
                    );
                }
            }
            Json::Object(obj) => {
                for (key, v) in obj {
                    self.jsonata(v, &format!("{at}/{key}"), extra);
                }
            }
            Json::Array(items) => {
                for (i, v) in items.iter().enumerate() {
                    self.jsonata(v, &format!("{at}/{i}"), extra);
                }
            }
            _ => {}
        }
    }

    fn path_field(&mut self, state: &Map<String, Json>, field: &str, at: &str) {
        match state.get(field) {
            None | Some(Json::Null) => {}
            Some(Json::String(p)) if paths::valid_path(p, field == "ResultPath") => {}
            Some(_) => self.schema(
                format!("The value for the field '{field}' must be a valid JSONPath"),
                &format!("{at}/{field}"),
            ),
        }
    }
}

/// The members of `$states` an expression reads (`$states.result` reads `result`).
fn states_members(text: &str) -> Vec<&str> {
    text.match_indices("$states.")
        .map(|(i, m)| {
            let rest = &text[i + m.len()..];
            let end = rest
                .find(|c: char| !(c.is_alphanumeric() || c == '_'))
                .unwrap_or(rest.len());
            &rest[..end]
        })
        .collect()
}

/// The states a state may go to next, with the field naming each.
fn transitions(state: &Json) -> Vec<(String, String)> {
    let mut out = Vec::new();
    let mut add = |field: String, v: Option<&Json>| {
        if let Some(t) = v.and_then(Json::as_str) {
            out.push((field, t.to_string()));
        }
    };
    add("Next".into(), state.get("Next"));
    add("Default".into(), state.get("Default"));
    for field in ["Choices", "Catch"] {
        for (i, rule) in state
            .get(field)
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .enumerate()
        {
            add(format!("{field}/{i}/Next"), rule.get("Next"));
        }
    }
    out
}

/// A one-state machine around a state TestState is given alone: the state is its start, and
/// each state it may go to is a Succeed state, so that the checks find its transitions.
pub(super) fn machine_for_state(name: &str, state: &Json) -> Json {
    let mut states = serde_json::Map::new();
    for (_, target) in transitions(state) {
        states.insert(target, serde_json::json!({"Type": "Succeed"}));
    }
    states.insert(name.to_string(), state.clone());
    serde_json::json!({"StartAt": name, "States": states})
}

/// Every problem in a definition (its text as the caller sent it).
pub(super) fn check(definition: &str) -> Vec<Diagnostic> {
    if definition.trim().is_empty() {
        return vec![Diagnostic {
            code: "MISSING_DESCRIPTION",
            message: "The definition is empty".into(),
            location: "/".into(),
        }];
    }
    let json: Json = match serde_json::from_str(definition) {
        Ok(json) => json,
        Err(e) => {
            return vec![Diagnostic {
                code: "INVALID_JSON_DESCRIPTION",
                message: e.to_string(),
                location: "/".into(),
            }]
        }
    };
    let mut checker = Checker {
        diagnostics: Vec::new(),
    };
    match json.as_object() {
        Some(obj) => {
            const TOP: &[&str] = &[
                "Comment",
                "StartAt",
                "States",
                "TimeoutSeconds",
                "Version",
                "QueryLanguage",
            ];
            for key in obj.keys().filter(|k| !TOP.contains(&k.as_str())) {
                checker.schema(
                    format!("Field \"{key}\" is not supported"),
                    &format!("/{key}"),
                );
            }
            checker.machine(obj, "", "JSONPath");
            for name in duplicate_names(&json) {
                checker.error(
                    "DUPLICATE_STATE_NAME",
                    format!("Duplicate State name: {name}"),
                    "/States",
                );
            }
        }
        None => checker.schema("The definition must be a JSON object", "/"),
    }
    checker.diagnostics
}

/// Parses a definition that passes [`check`], or `InvalidDefinition` with every problem.
pub(super) fn parse(definition: &str) -> AwsResult<Json> {
    let problems = check(definition);
    if let Some(message) = invalid_message(&problems) {
        return Err(AwsError::new("InvalidDefinition", message));
    }
    serde_json::from_str(definition).map_err(|e| AwsError::new("InvalidDefinition", e.to_string()))
}

/// The `InvalidDefinition` message for some problems, if there are any.
fn invalid_message(problems: &[Diagnostic]) -> Option<String> {
    if problems.is_empty() {
        return None;
    }
    let texts: Vec<String> = problems.iter().map(Diagnostic::text).collect();
    Some(format!(
        "Invalid State Machine Definition: '{}'",
        texts.join(", ")
    ))
}

/// ValidateStateMachineDefinition: the diagnostics, at most `maxResults` of them.
pub(super) fn validate_operation(input: &Value) -> AwsResult<Value> {
    let problems = check(input.str("definition").unwrap_or_default());
    let limit = match input.int("maxResults") {
        Some(n) if n > 0 => usize::try_from(n).unwrap_or(100),
        _ => 100,
    };
    let diagnostics: Vec<Value> = problems
        .iter()
        .take(limit)
        .map(|d| {
            Value::map()
                .with("severity", "ERROR")
                .with("code", d.code)
                .with("message", d.message.clone())
                .with("location", d.location.clone())
        })
        .collect();
    Ok(Value::map()
        .with("result", if problems.is_empty() { "OK" } else { "FAIL" })
        .with("diagnostics", diagnostics)
        .with("truncated", problems.len() > limit))
}

/// The state names a definition declares more than once, at any level (a state name must
/// be unique across the whole machine).
fn duplicate_names(definition: &Json) -> Vec<String> {
    let mut counts: BTreeMap<String, usize> = BTreeMap::new();
    let mut stack = vec![definition];
    while let Some(machine) = stack.pop() {
        for (name, state) in machine
            .get("States")
            .and_then(Json::as_object)
            .into_iter()
            .flatten()
        {
            *counts.entry(name.clone()).or_default() += 1;
            for branch in state
                .get("Branches")
                .and_then(Json::as_array)
                .into_iter()
                .flatten()
            {
                stack.push(branch);
            }
            for field in ["ItemProcessor", "Iterator"] {
                if let Some(p) = state.get(field) {
                    stack.push(p);
                }
            }
        }
    }
    counts
        .into_iter()
        .filter(|(_, n)| *n > 1)
        .map(|(k, _)| k)
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn codes(definition: &str) -> Vec<String> {
        check(definition).iter().map(Diagnostic::text).collect()
    }

    #[test]
    fn a_minimal_machine_passes() {
        assert!(check(r#"{"StartAt":"A","States":{"A":{"Type":"Pass","End":true}}}"#).is_empty());
    }

    #[test]
    fn problems_name_their_code_and_location() {
        assert_eq!(
            codes(r#"{"StartAt":"A","States":{"A":{"Type":"Pass","Next":"B"}}}"#),
            vec![
                "MISSING_TRANSITION_TARGET: Missing 'Next' target: B at /States/A/Next",
                "MISSING_END_STATE: Workflow has no terminal state at /States",
            ]
        );
        assert_eq!(
            codes(r#"{"States":{}}"#),
            vec!["SCHEMA_VALIDATION_FAILED: These fields are required: [StartAt] at /"]
        );
        assert!(codes("{")
            .iter()
            .all(|c| c.starts_with("INVALID_JSON_DESCRIPTION")));
        let unreachable =
            r#"{"StartAt":"A","States":{"A":{"Type":"Succeed"},"B":{"Type":"Succeed"}}}"#;
        assert_eq!(
            codes(unreachable),
            vec!["MISSING_TRANSITION_TARGET: State \"B\" is not reachable. at /States/B"]
        );
    }
}
