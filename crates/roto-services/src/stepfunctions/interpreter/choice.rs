//! A JSONPath Choice state's rules: every comparison operator with its `Path` variant,
//! the type tests (`IsPresent`, `IsNull`, ...), and `And`/`Or`/`Not` (nesting bounded by
//! the definition's JSON depth, which serde_json caps); a JSONata rule's `Condition`.

use std::cmp::Ordering;

use serde_json::Value as Json;

use super::io::Scope;
use super::jsonata::Query;
use super::Failure;

/// A rule's `Next` and the rule.
type Chosen<'s> = (String, Option<&'s Json>);

fn rules(state: &Json) -> impl Iterator<Item = &Json> {
    state
        .get("Choices")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
}

fn chosen(rule: &Json) -> Chosen<'_> {
    let next = rule.get("Next").and_then(Json::as_str).unwrap_or_default();
    (next.to_string(), Some(rule))
}

/// The `Next` of the first rule that matches (with the rule), else the `Default`, else
/// `States.NoChoiceMatched`.
pub(super) fn choose<'s>(
    scope: &Scope<'_>,
    state: &'s Json,
    input: &Json,
) -> Result<Chosen<'s>, Failure> {
    for rule in rules(state) {
        if matches(scope, rule, input)? {
            return Ok(chosen(rule));
        }
    }
    default(scope, state)
}

/// The first rule whose JSONata `Condition` is true, else the `Default`, else
/// `States.NoChoiceMatched`.
pub(super) fn choose_jsonata<'s>(
    scope: &Scope<'_>,
    query: &Query<'_>,
    state: &'s Json,
) -> Result<Chosen<'s>, Failure> {
    for rule in rules(state) {
        let condition = query.typed(rule, "Condition", "boolean")?;
        if condition == Some(Json::Bool(true)) {
            return Ok(chosen(rule));
        }
    }
    default(scope, state)
}

fn default<'s>(scope: &Scope<'_>, state: &'s Json) -> Result<Chosen<'s>, Failure> {
    state
        .get("Default")
        .and_then(Json::as_str)
        .map(|d| (d.to_string(), None))
        .ok_or_else(|| {
            Failure::new(
                "States.NoChoiceMatched",
                format!(
                    "An error occurred while executing the state '{}' (entered at the event id #{}). No Matches!",
                    scope.state, scope.entered
                ),
            )
        })
}

/// Whether one rule matches.
pub(super) fn matches(scope: &Scope<'_>, rule: &Json, input: &Json) -> Result<bool, Failure> {
    if let Some(rules) = rule.get("And").and_then(Json::as_array) {
        for r in rules {
            if !matches(scope, r, input)? {
                return Ok(false);
            }
        }
        return Ok(true);
    }
    if let Some(rules) = rule.get("Or").and_then(Json::as_array) {
        for r in rules {
            if matches(scope, r, input)? {
                return Ok(true);
            }
        }
        return Ok(false);
    }
    if let Some(inner) = rule.get("Not") {
        return Ok(!matches(scope, inner, input)?);
    }
    let variable = rule.get("Variable").and_then(Json::as_str).unwrap_or("$");
    let value = scope.lookup(variable, input)?;
    let Some((operator, expected)) = operator(rule) else {
        return Ok(false);
    };
    if operator == "IsPresent" {
        return Ok(value.is_some() == (expected == &Json::Bool(true)));
    }
    let Some(value) = value else {
        return Err(scope.runtime(format!(
            "Invalid path '{variable}': The choice state's condition path references an invalid value."
        )));
    };
    let (operator, expected) = match operator.strip_suffix("Path") {
        Some(base) => (base, scope.select(expected.as_str().unwrap_or("$"), input)?),
        None => (operator, expected.clone()),
    };
    Ok(compare(operator, &value, &expected))
}

/// The rule's comparison operator and its operand.
fn operator(rule: &Json) -> Option<(&str, &Json)> {
    rule.as_object()?
        .iter()
        .find(|(k, _)| {
            !matches!(
                k.as_str(),
                "Variable" | "Next" | "Comment" | "Assign" | "Output"
            )
        })
        .map(|(k, v)| (k.as_str(), v))
}

fn compare(operator: &str, value: &Json, expected: &Json) -> bool {
    let is = expected == &Json::Bool(true);
    match operator {
        "IsNull" => value.is_null() == is,
        "IsNumeric" => value.is_number() == is,
        "IsString" => value.is_string() == is,
        "IsBoolean" => value.is_boolean() == is,
        "IsTimestamp" => value.as_str().and_then(timestamp).is_some() == is,
        "BooleanEquals" => value.is_boolean() && value == expected,
        "StringMatches" => match (value.as_str(), expected.as_str()) {
            (Some(v), Some(p)) => wildcard(v, p),
            _ => false,
        },
        _ => ordered(operator, value, expected),
    }
}

/// The String*, Numeric* and Timestamp* comparisons.
fn ordered(operator: &str, value: &Json, expected: &Json) -> bool {
    let (kind, relation) = ["String", "Numeric", "Timestamp"]
        .iter()
        .find_map(|k| operator.strip_prefix(k).map(|r| (*k, r)))
        .unwrap_or(("", operator));
    let ordering = match kind {
        "String" => match (value.as_str(), expected.as_str()) {
            (Some(a), Some(b)) => Some(a.cmp(b)),
            _ => None,
        },
        "Numeric" => match (value.as_f64(), expected.as_f64()) {
            (Some(a), Some(b)) => a.partial_cmp(&b),
            _ => None,
        },
        "Timestamp" => match (
            value.as_str().and_then(timestamp),
            expected.as_str().and_then(timestamp),
        ) {
            (Some(a), Some(b)) => Some(a.cmp(&b)),
            _ => None,
        },
        _ => None,
    };
    let Some(ordering) = ordering else {
        return false;
    };
    match relation {
        "Equals" => ordering == Ordering::Equal,
        "LessThan" => ordering == Ordering::Less,
        "GreaterThan" => ordering == Ordering::Greater,
        "LessThanEquals" => ordering != Ordering::Greater,
        "GreaterThanEquals" => ordering != Ordering::Less,
        _ => false,
    }
}

/// An RFC 3339 timestamp, as Step Functions reads them.
pub(super) fn timestamp(text: &str) -> Option<i64> {
    if !text.contains('T') {
        return None;
    }
    roto_core::timestamp::parse(text)
}

/// StringMatches: `*` matches any run of characters; `\*` and `\\` are literal.
fn wildcard(value: &str, pattern: &str) -> bool {
    let mut tokens: Vec<Option<char>> = Vec::new();
    let mut chars = pattern.chars();
    while let Some(c) = chars.next() {
        match c {
            '\\' => tokens.push(Some(chars.next().unwrap_or('\\'))),
            '*' => tokens.push(None),
            c => tokens.push(Some(c)),
        }
    }
    let value: Vec<char> = value.chars().collect();
    // Iterative wildcard matching with one backtrack point (linear in practice).
    let (mut v, mut t) = (0, 0);
    let mut star: Option<(usize, usize)> = None;
    while v < value.len() {
        match tokens.get(t) {
            Some(Some(c)) if *c == value[v] => {
                v += 1;
                t += 1;
            }
            Some(None) => {
                star = Some((t, v));
                t += 1;
            }
            _ => match star {
                Some((st, sv)) => {
                    t = st + 1;
                    v = sv + 1;
                    star = Some((st, sv + 1));
                }
                None => return false,
            },
        }
    }
    tokens[t..].iter().all(Option::is_none)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn wildcards_match_as_step_functions_reads_them() {
        assert!(wildcard("log-2024.txt", "log-*.txt"));
        assert!(wildcard("abc", "*"));
        assert!(!wildcard("abc", "a*d"));
        assert!(wildcard("a*c", "a\\*c"));
        assert!(!wildcard("abc", "a\\*c"));
    }

    #[test]
    fn comparisons_need_matching_types() {
        assert!(compare(
            "NumericGreaterThan",
            &Json::from(5),
            &Json::from(3)
        ));
        assert!(!compare("StringEquals", &Json::from(5), &Json::from("5")));
        assert!(compare(
            "TimestampLessThan",
            &Json::from("2024-01-01T00:00:00Z"),
            &Json::from("2024-06-01T00:00:00Z")
        ));
    }
}
