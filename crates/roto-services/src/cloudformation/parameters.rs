//! Parameters, Conditions and Rules: the values a stack's parameters take (supplied,
//! previous or default, checked against their type and constraints in AWS's words), the
//! template's conditions evaluated over them, and its rules' assertions.
//!
//! `AWS::SSM::Parameter::Value<...>` parameters name an SSM parameter; the service
//! resolves them (through the dispatcher) before conditions and rules see them.

use std::collections::BTreeMap;

use roto_core::{AwsResult, Value};
use serde_json::{Map, Value as Json};

use super::intrinsics::Scope;
use super::template::{scalar_text, section};
use super::validation;

/// A parameter's value as the stack keeps it.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct ParameterValue {
    /// The key.
    pub key: String,
    /// The value as given (the SSM parameter's name for SSM types).
    pub value: String,
    /// The SSM parameter's value, for SSM types.
    pub resolved: Option<String>,
    /// Whether DescribeStacks hides the value.
    pub no_echo: bool,
}

impl ParameterValue {
    /// The parameter as DescribeStacks shows it.
    pub(crate) fn describe(&self) -> Value {
        let shown = if self.no_echo {
            "****"
        } else {
            self.value.as_str()
        };
        Value::map()
            .with("ParameterKey", self.key.as_str())
            .with("ParameterValue", shown)
            .with_opt("ResolvedValue", self.resolved.as_deref())
    }
}

/// The SSM parameter type a declared type reads through, if it is one.
pub(crate) fn ssm_type(kind: &str) -> Option<&str> {
    kind.strip_prefix("AWS::SSM::Parameter::Value<")
        .and_then(|k| k.strip_suffix('>'))
}

/// The values of the template's parameters: supplied (or the previous value where the
/// request asks), else the default, checked.
pub(crate) fn values(
    doc: &Json,
    supplied: &[Value],
    previous: &[ParameterValue],
) -> AwsResult<Vec<ParameterValue>> {
    let declared = section(doc, "Parameters");
    let mut given = BTreeMap::new();
    let mut unknown = Vec::new();
    for p in supplied {
        let key = p.str("ParameterKey").unwrap_or_default();
        if !declared.contains_key(key) {
            unknown.push(key.to_string());
            continue;
        }
        let value = if p.bool("UsePreviousValue") == Some(true) {
            previous
                .iter()
                .find(|v| v.key == key)
                .map(|v| v.value.clone())
        } else {
            p.str("ParameterValue").map(str::to_string)
        };
        given.insert(key, value);
    }
    if !unknown.is_empty() {
        return Err(validation(format!(
            "Parameters: [{}] do not exist in the template",
            unknown.join(", ")
        )));
    }
    let mut values = Vec::new();
    let mut missing = Vec::new();
    for (key, decl) in declared {
        let value = given
            .get(key.as_str())
            .cloned()
            .flatten()
            .or_else(|| decl.get("Default").map(scalar_text));
        let Some(value) = value else {
            missing.push(key.clone());
            continue;
        };
        check(key, decl, &value).map_err(validation)?;
        values.push(ParameterValue {
            key: key.clone(),
            value,
            resolved: None,
            no_echo: super::template::no_echo(decl),
        });
    }
    if !missing.is_empty() {
        return Err(validation(format!(
            "Parameters: [{}] must have values",
            missing.join(", ")
        )));
    }
    Ok(values)
}

/// A value checked against its declaration's type and constraints.
fn check(key: &str, decl: &Json, value: &str) -> Result<(), String> {
    let kind = decl["Type"].as_str().unwrap_or("String");
    let constraint = |default: String| match decl["ConstraintDescription"].as_str() {
        Some(d) => format!("Parameter '{key}' failed to satisfy constraint: {d}"),
        None => default,
    };
    if kind == "Number" && value.parse::<f64>().is_err() {
        return Err(format!("Parameter '{key}' must be a number."));
    }
    if let Some(allowed) = decl["AllowedValues"].as_array() {
        if !allowed.iter().any(|a| scalar_text(a) == value) {
            return Err(constraint(format!(
                "Parameter '{key}' must be one of AllowedValues"
            )));
        }
    }
    if let Some(pattern) = decl["AllowedPattern"].as_str() {
        let matches = regex_lite::Regex::new(&format!("^(?:{pattern})$"))
            .map(|re| re.is_match(value))
            .unwrap_or(false);
        if !matches {
            return Err(constraint(format!(
                "Parameter '{key}' must match pattern {pattern}"
            )));
        }
    }
    let bound = |name: &str| {
        decl.get(name)
            .map(scalar_text)
            .and_then(|s| s.parse::<f64>().ok())
    };
    let length = value.chars().count() as f64;
    if bound("MinLength").is_some_and(|m| length < m) {
        return Err(constraint(format!(
            "Parameter '{key}' must contain at least {} characters",
            scalar_text(&decl["MinLength"])
        )));
    }
    if bound("MaxLength").is_some_and(|m| length > m) {
        return Err(constraint(format!(
            "Parameter '{key}' must contain at most {} characters",
            scalar_text(&decl["MaxLength"])
        )));
    }
    let number = value.parse::<f64>().ok();
    if let (Some(n), Some(m)) = (number, bound("MinValue")) {
        if n < m {
            return Err(constraint(format!(
                "Parameter '{key}' must be a number not less than {}",
                scalar_text(&decl["MinValue"])
            )));
        }
    }
    if let (Some(n), Some(m)) = (number, bound("MaxValue")) {
        if n > m {
            return Err(constraint(format!(
                "Parameter '{key}' must be a number not greater than {}",
                scalar_text(&decl["MaxValue"])
            )));
        }
    }
    Ok(())
}

/// The parameters as intrinsic functions see them: list types as lists.
pub(crate) fn scope_values(doc: &Json, values: &[ParameterValue]) -> BTreeMap<String, Json> {
    let declared = section(doc, "Parameters");
    values
        .iter()
        .map(|p| {
            let kind = declared
                .get(&p.key)
                .and_then(|d| d["Type"].as_str())
                .unwrap_or("String");
            let text = p.resolved.as_deref().unwrap_or(&p.value);
            let list = kind.starts_with("List<")
                || kind == "CommaDelimitedList"
                || ssm_type(kind)
                    .is_some_and(|t| t.starts_with("List<") || t == "CommaDelimitedList");
            let value = if list {
                Json::Array(
                    text.split(',')
                        .map(|s| Json::String(s.trim().to_string()))
                        .collect(),
                )
            } else {
                Json::String(text.to_string())
            };
            (p.key.clone(), value)
        })
        .collect()
}

/// The template's conditions, each evaluated once (a condition may name others).
pub(crate) fn conditions(doc: &Json, scope: &Scope<'_>) -> Result<BTreeMap<String, bool>, String> {
    let declared = section(doc, "Conditions");
    let mut known = BTreeMap::new();
    while known.len() < declared.len() {
        let before = known.len();
        let mut last_error = None;
        for (name, expr) in declared {
            if known.contains_key(name) {
                continue;
            }
            let partial = Scope {
                conditions: &known,
                ..*scope
            };
            match partial.truth(expr, 0) {
                Ok(b) => {
                    known.insert(name.clone(), b);
                }
                Err(e) => last_error = Some(e),
            }
        }
        if known.len() == before {
            return Err(last_error.unwrap_or_default());
        }
    }
    Ok(known)
}

/// The first failing assertion of the template's Rules, in AWS's words.
pub(crate) fn check_rules(doc: &Json, scope: &Scope<'_>) -> Result<(), String> {
    for (name, rule) in section(doc, "Rules") {
        if let Some(condition) = rule.get("RuleCondition") {
            if !scope.truth(condition, 0)? {
                continue;
            }
        }
        let assertions = rule["Assertions"]
            .as_array()
            .map(Vec::as_slice)
            .unwrap_or_default();
        for assertion in assertions {
            if !scope.truth(&assertion["Assert"], 0)? {
                return Err(match assertion["AssertDescription"].as_str() {
                    Some(d) => d.to_string(),
                    None => format!("Template error: rule {name} failed assertion"),
                });
            }
        }
    }
    Ok(())
}

/// Fn::Contains, Fn::EachMemberEquals and Fn::EachMemberIn over evaluated arguments.
pub(crate) fn rule_function(name: &str, args: &[Json]) -> Option<Result<bool, String>> {
    let texts = |v: &Json| -> Vec<String> {
        match v {
            Json::Array(items) => items.iter().map(scalar_text).collect(),
            other => vec![scalar_text(other)],
        }
    };
    let invalid = || {
        Err(format!(
            "Template error: {name} requires a list of two values"
        ))
    };
    Some(match (name, args) {
        ("Fn::Contains", [list, value]) => Ok(texts(list).contains(&scalar_text(value))),
        ("Fn::EachMemberEquals", [list, value]) => {
            Ok(texts(list).iter().all(|m| *m == scalar_text(value)))
        }
        ("Fn::EachMemberIn", [list, allowed]) => {
            let allowed = texts(allowed);
            Ok(texts(list).iter().all(|m| allowed.contains(m)))
        }
        ("Fn::Contains" | "Fn::EachMemberEquals" | "Fn::EachMemberIn", _) => invalid(),
        _ => return None,
    })
}

/// The declared parameter named `key`.
pub(crate) fn declared<'a>(doc: &'a Json, key: &str) -> Option<&'a Map<String, Json>> {
    section(doc, "Parameters")
        .get(key)
        .and_then(Json::as_object)
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn values_are_checked_in_aws_words() {
        let doc = json!({"Parameters": {
            "Env": {"Type": "String", "AllowedValues": ["dev", "prod"], "Default": "dev"},
            "Size": {"Type": "Number", "MinValue": 1, "MaxValue": 5},
            "Name": {"Type": "String", "AllowedPattern": "[a-z]+", "MaxLength": 4, "NoEcho": true},
        }});
        let p = |k: &str, v: &str| {
            Value::map()
                .with("ParameterKey", k)
                .with("ParameterValue", v)
        };
        let err = |s: &[Value]| values(&doc, s, &[]).unwrap_err().message;
        assert_eq!(
            err(&[p("Size", "2")]),
            "Parameters: [Name] must have values"
        );
        assert_eq!(
            err(&[p("Size", "2"), p("Name", "ab"), p("X", "1")]),
            "Parameters: [X] do not exist in the template"
        );
        assert_eq!(
            err(&[p("Size", "9"), p("Name", "ab")]),
            "Parameter 'Size' must be a number not greater than 5"
        );
        assert_eq!(
            err(&[p("Size", "2"), p("Name", "AB")]),
            "Parameter 'Name' must match pattern [a-z]+"
        );
        assert_eq!(
            err(&[p("Size", "2"), p("Name", "ab"), p("Env", "x")]),
            "Parameter 'Env' must be one of AllowedValues"
        );
        let ok = values(&doc, &[p("Size", "2"), p("Name", "ab")], &[]).unwrap();
        assert_eq!(ok.iter().find(|v| v.key == "Env").unwrap().value, "dev");
        assert_eq!(
            ok.iter()
                .find(|v| v.key == "Name")
                .unwrap()
                .describe()
                .str("ParameterValue"),
            Some("****")
        );
    }
}
