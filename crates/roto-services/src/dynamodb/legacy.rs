//! The legacy (pre-expression) parameters: `Expected`, `AttributeUpdates`, `KeyConditions`,
//! `QueryFilter`, `ScanFilter` and their `ConditionalOperator`.
//!
//! Each is checked in DynamoDB's words and then translated into the expression tree
//! ([`Condition`], [`Update`]) the expression parameters produce, so one evaluator serves
//! both and every later check (key schema, index keys, item size) applies alike.
//! `AttributesToGet` needs no translation: it is a list of top-level paths, read beside
//! `ProjectionExpression` in [`selected_paths`](super::items::selected_paths).

use roto_core::{AwsError, AwsResult, Value};

use super::attr::Attr;
use super::expr::eval::compare;
use super::expr::parse::{Comparator, Operand};
use super::expr::{Condition, Update};
use super::projection::{Path, Step};

fn invalid(message: impl AsRef<str>) -> AwsError {
    AwsError::validation(format!(
        "One or more parameter values were invalid: {}",
        message.as_ref()
    ))
}

/// Refuses a request that mixes expression and legacy parameters, naming both in the order
/// DynamoDB lists them (`expressions` and `legacy` are given in that order).
pub fn check_not_mixed(input: &Value, expressions: &[&str], legacy: &[&str]) -> AwsResult<()> {
    let present = |members: &[&str]| -> Vec<String> {
        members
            .iter()
            .filter(|m| input.get(m).is_some())
            .map(|m| m.to_string())
            .collect()
    };
    let used_expressions = present(expressions);
    if used_expressions.is_empty() {
        return Ok(());
    }
    // A Query's KeyConditions beside a FilterExpression alone is no mix: the key condition
    // has no expression counterpart in the request.
    let legacy: Vec<&str> = legacy
        .iter()
        .copied()
        .filter(|m| *m != "KeyConditions" || input.get("KeyConditionExpression").is_some())
        .collect();
    let used_legacy = present(&legacy);
    if used_legacy.is_empty() {
        return Ok(());
    }
    Err(AwsError::validation(format!(
        "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {{{}}} Expression parameters: {{{}}}",
        used_legacy.join(", "),
        used_expressions.join(", ")
    )))
}

/// A legacy comparison operator and the arguments it takes.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Operator {
    Eq,
    Ne,
    Le,
    Lt,
    Ge,
    Gt,
    NotNull,
    Null,
    Contains,
    NotContains,
    BeginsWith,
    In,
    Between,
}

impl Operator {
    fn parse(name: &str) -> Option<Operator> {
        Some(match name {
            "EQ" => Operator::Eq,
            "NE" => Operator::Ne,
            "LE" => Operator::Le,
            "LT" => Operator::Lt,
            "GE" => Operator::Ge,
            "GT" => Operator::Gt,
            "NOT_NULL" => Operator::NotNull,
            "NULL" => Operator::Null,
            "CONTAINS" => Operator::Contains,
            "NOT_CONTAINS" => Operator::NotContains,
            "BEGINS_WITH" => Operator::BeginsWith,
            "IN" => Operator::In,
            "BETWEEN" => Operator::Between,
            _ => return None,
        })
    }

    fn takes(self, count: usize) -> bool {
        match self {
            Operator::NotNull | Operator::Null => count == 0,
            Operator::In => count > 0,
            Operator::Between => count == 2,
            _ => count == 1,
        }
    }

    /// Whether an argument of this type suits the operator.
    fn accepts(self, attr: &Attr) -> bool {
        let scalar = matches!(attr, Attr::S(_) | Attr::N(_) | Attr::B(_));
        match self {
            Operator::Eq | Operator::Ne | Operator::NotNull | Operator::Null => true,
            Operator::BeginsWith => matches!(attr, Attr::S(_) | Attr::B(_)),
            _ => scalar,
        }
    }

    /// Whether a Query key condition can use the operator.
    fn indexable(self) -> bool {
        !matches!(
            self,
            Operator::Ne
                | Operator::NotNull
                | Operator::Null
                | Operator::Contains
                | Operator::NotContains
                | Operator::In
        )
    }
}

/// One attribute's condition: `ComparisonOperator` over `AttributeValueList`, checked.
fn condition(name: &str, operator: &str, values: Vec<Attr>) -> AwsResult<(Operator, Condition)> {
    let op = Operator::parse(operator).ok_or_else(|| {
        AwsError::validation(format!(
            "1 validation error detected: Value '{operator}' at 'comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [IN, NULL, BETWEEN, LT, NOT_CONTAINS, EQ, GT, NOT_NULL, NE, LE, BEGINS_WITH, GE, CONTAINS]"
        ))
    })?;
    if !op.takes(values.len()) {
        return Err(invalid(format!(
            "Invalid number of argument(s) for the {operator} ComparisonOperator"
        )));
    }
    if let Some(first) = values.first() {
        if values.iter().any(|v| v.tag() != first.tag()) {
            return Err(invalid(
                "AttributeValues inside AttributeValueList must be of same type",
            ));
        }
    }
    if let Some(bad) = values.iter().find(|v| !op.accepts(v)) {
        return Err(invalid(format!(
            "ComparisonOperator {operator} is not valid for {} AttributeValue type",
            bad.tag()
        )));
    }
    if op == Operator::Between
        && compare(&values[0], &values[1]) == Some(std::cmp::Ordering::Greater)
    {
        return Err(AwsError::validation(
            "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound",
        ));
    }
    let path: Path = vec![Step::Name(name.to_string())];
    let attr = || Operand::Path(path.clone());
    let operands: Vec<Operand> = values.into_iter().map(Operand::Value).collect();
    let nothing = Operand::Value(Attr::Null);
    let first = || operands.first().unwrap_or(&nothing).clone();
    let compared = |comparator| Condition::Compare(attr(), comparator, first());
    let built = match op {
        Operator::Eq => compared(Comparator::Eq),
        Operator::Ne => compared(Comparator::Ne),
        Operator::Le => compared(Comparator::Le),
        Operator::Lt => compared(Comparator::Lt),
        Operator::Ge => compared(Comparator::Ge),
        Operator::Gt => compared(Comparator::Gt),
        Operator::NotNull => Condition::Exists(path.clone()),
        Operator::Null => Condition::NotExists(path.clone()),
        Operator::Contains => Condition::Contains(attr(), first()),
        // A missing attribute contains nothing, but neither does it satisfy NOT_CONTAINS.
        Operator::NotContains => Condition::And(
            Box::new(Condition::Exists(path.clone())),
            Box::new(Condition::Not(Box::new(Condition::Contains(
                attr(),
                first(),
            )))),
        ),
        Operator::BeginsWith => Condition::BeginsWith(attr(), first()),
        Operator::In => Condition::In(attr(), operands.clone()),
        Operator::Between => {
            let high = operands.last().unwrap_or(&nothing).clone();
            Condition::Between(attr(), first(), high)
        }
    };
    Ok((op, built))
}

fn values_of(list: Option<&Value>) -> AwsResult<Vec<Attr>> {
    list.and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(Attr::from_value)
        .collect()
}

/// Joins conditions with `ConditionalOperator` (AND unless it says OR).
fn joined(input: &Value, conditions: Vec<Condition>) -> Option<Condition> {
    let join = if input.str("ConditionalOperator") == Some("OR") {
        Condition::Or
    } else {
        Condition::And
    };
    super::expr::balanced(conditions, join)
}

/// The condition `Expected` states, if the request has one.
pub fn expected(input: &Value) -> AwsResult<Option<Condition>> {
    let Some(map) = input.get("Expected").and_then(Value::as_map) else {
        return Ok(None);
    };
    let mut conditions = Vec::new();
    for (name, entry) in map {
        let has = |member: &str| entry.get(member).is_some();
        if has("AttributeValueList") && has("Value") {
            return Err(invalid(format!(
                "Value and AttributeValueList cannot be used together for Attribute: {name}"
            )));
        }
        if let Some(operator) = entry.str("ComparisonOperator") {
            if has("Exists") {
                return Err(invalid(format!(
                    "Exists and ComparisonOperator cannot be used together for Attribute: {name}"
                )));
            }
            if !matches!(operator, "NULL" | "NOT_NULL")
                && !has("AttributeValueList")
                && !has("Value")
            {
                return Err(invalid(format!(
                    "Value or AttributeValueList must be used with ComparisonOperator: {operator} for Attribute: {name}"
                )));
            }
            let values = match entry.get("Value") {
                Some(value) => vec![Attr::from_value(value)?],
                None => values_of(entry.get("AttributeValueList"))?,
            };
            conditions.push(condition(name, operator, values)?.1);
            continue;
        }
        if has("AttributeValueList") {
            return Err(invalid(format!(
                "AttributeValueList can only be used with a ComparisonOperator for Attribute: {name}"
            )));
        }
        let exists = entry.bool("Exists");
        let value = entry.get("Value").map(Attr::from_value).transpose()?;
        let path = vec![Step::Name(name.clone())];
        conditions.push(match (exists, value) {
            (Some(false), None) => Condition::NotExists(path),
            (Some(false), Some(_)) => {
                return Err(invalid(format!(
                    "Value cannot be used when Exists is false for Attribute: {name}"
                )))
            }
            (_, Some(value)) => {
                Condition::Compare(Operand::Path(path), Comparator::Eq, Operand::Value(value))
            }
            (exists, None) => {
                let shown = if exists.is_some() { "true" } else { "null" };
                return Err(invalid(format!(
                    "Value must be provided when Exists is {shown} for Attribute: {name}"
                )));
            }
        });
    }
    Ok(joined(input, conditions))
}

/// The conditions of a `QueryFilter`, `ScanFilter` or `KeyConditions` map, each checked,
/// with their operators.
fn conditions_of(input: &Value, member: &str) -> AwsResult<Option<Vec<(Operator, Condition)>>> {
    let Some(map) = input.get(member).and_then(Value::as_map) else {
        return Ok(None);
    };
    map.iter()
        .map(|(name, entry)| {
            let operator = entry.str("ComparisonOperator").unwrap_or_default();
            condition(name, operator, values_of(entry.get("AttributeValueList"))?)
        })
        .collect::<AwsResult<Vec<_>>>()
        .map(Some)
}

/// The filter a `QueryFilter` or `ScanFilter` (`member`) states, if the request has one.
pub fn filter(input: &Value, member: &str) -> AwsResult<Option<Condition>> {
    Ok(conditions_of(input, member)?
        .and_then(|conditions| joined(input, conditions.into_iter().map(|(_, c)| c).collect())))
}

/// The key condition `KeyConditions` states, if the request has one.
pub fn key_conditions(input: &Value) -> AwsResult<Option<Condition>> {
    let Some(conditions) = conditions_of(input, "KeyConditions")? else {
        return Ok(None);
    };
    if !(1..=2).contains(&conditions.len()) {
        return Err(AwsError::validation(
            "Conditions can be of length 1 or 2 only",
        ));
    }
    if conditions.iter().any(|(op, _)| !op.indexable()) {
        return Err(AwsError::validation(
            "Attempted conditional constraint is not an indexable operation",
        ));
    }
    Ok(conditions
        .into_iter()
        .map(|(_, c)| c)
        .reduce(|a, b| Condition::And(Box::new(a), Box::new(b))))
}

/// The update `AttributeUpdates` states, if the request has one.
pub fn attribute_updates(input: &Value) -> AwsResult<Option<Update>> {
    let Some(map) = input.get("AttributeUpdates").and_then(Value::as_map) else {
        return Ok(None);
    };
    let mut update = Update::default();
    for (name, entry) in map {
        let path: Path = vec![Step::Name(name.clone())];
        let value = entry.get("Value").map(Attr::from_value).transpose()?;
        match (entry.str("Action").unwrap_or("PUT"), value) {
            ("DELETE", None) => update.remove.push(path),
            ("DELETE", Some(set @ (Attr::Ss(_) | Attr::Ns(_) | Attr::Bs(_)))) => {
                update.delete.push((path, set))
            }
            ("DELETE", Some(other)) => {
                return Err(invalid(format!(
                    "DELETE action with value is not supported for the type {}",
                    other.tag()
                )))
            }
            (_, None) => {
                return Err(invalid(
                    "Only DELETE action is allowed when no attribute value is specified",
                ))
            }
            ("ADD", Some(list @ Attr::L(_))) => {
                let existing =
                    Operand::IfNotExists(path.clone(), Box::new(Operand::Value(Attr::L(vec![]))));
                let appended =
                    Operand::ListAppend(Box::new(existing), Box::new(Operand::Value(list)));
                update.set.push((path, appended));
            }
            ("ADD", Some(addend @ (Attr::N(_) | Attr::Ss(_) | Attr::Ns(_) | Attr::Bs(_)))) => {
                update.add.push((path, addend))
            }
            ("ADD", Some(other)) => {
                return Err(invalid(format!(
                    "ADD action is not supported for the type {}",
                    other.tag()
                )))
            }
            (_, Some(value)) => update.set.push((path, Operand::Value(value))),
        }
    }
    Ok(Some(update))
}

#[cfg(test)]
mod tests {
    use super::super::attr::Item;
    use super::super::expr::eval;
    use super::*;

    fn s(text: &str) -> Value {
        Value::map().with("S", text)
    }

    fn n(text: &str) -> Value {
        Value::map().with("N", text)
    }

    fn entry(operator: &str, values: Vec<Value>) -> Value {
        Value::map()
            .with("ComparisonOperator", operator)
            .with("AttributeValueList", Value::List(values))
    }

    fn item() -> Item {
        Attr::item(&Value::map().with("a", s("apple")).with("n", n("5"))).unwrap()
    }

    fn expected_holds(expected: Value, operator: Option<&str>) -> AwsResult<bool> {
        let input = Value::map()
            .with("Expected", expected)
            .with_opt("ConditionalOperator", operator.map(Value::from));
        let condition = super::expected(&input)?.unwrap();
        Ok(eval::matches(&condition, &item()))
    }

    #[test]
    fn expected_forms_translate_to_conditions() {
        let eq = Value::map().with("a", Value::map().with("Value", s("apple")));
        assert!(expected_holds(eq, None).unwrap());
        let absent = Value::map().with("zz", Value::map().with("Exists", false));
        assert!(expected_holds(absent, None).unwrap());
        let between = Value::map().with("n", entry("BETWEEN", vec![n("1"), n("9")]));
        assert!(expected_holds(between, None).unwrap());
        let either = Value::map()
            .with("a", entry("BEGINS_WITH", vec![s("x")]))
            .with("n", entry("IN", vec![n("4"), n("5")]));
        assert!(!expected_holds(either.clone(), None).unwrap());
        assert!(expected_holds(either, Some("OR")).unwrap());
        let not_contains = Value::map().with("missing", entry("NOT_CONTAINS", vec![s("x")]));
        assert!(!expected_holds(not_contains, None).unwrap());
    }

    #[test]
    fn bad_expected_entries_get_dynamodb_messages() {
        let err = |expected: Value| expected_holds(expected, None).unwrap_err().message;
        assert_eq!(
            err(Value::map().with("a", entry("EQ", vec![]))),
            "One or more parameter values were invalid: Invalid number of argument(s) for the EQ ComparisonOperator"
        );
        assert_eq!(
            err(Value::map().with("a", Value::map().with("Exists", true))),
            "One or more parameter values were invalid: Value must be provided when Exists is true for Attribute: a"
        );
        assert_eq!(
            err(Value::map().with("a", Value::map().with("Exists", false).with("Value", s("x")))),
            "One or more parameter values were invalid: Value cannot be used when Exists is false for Attribute: a"
        );
        assert_eq!(
            err(Value::map().with("a", entry("GT", vec![Value::map().with("BOOL", true)]))),
            "One or more parameter values were invalid: ComparisonOperator GT is not valid for BOOL AttributeValue type"
        );
        assert_eq!(
            err(Value::map().with("a", entry("IN", vec![s("x"), n("1")]))),
            "One or more parameter values were invalid: AttributeValues inside AttributeValueList must be of same type"
        );
        assert_eq!(
            err(Value::map().with("n", entry("BETWEEN", vec![n("9"), n("1")]))),
            "The BETWEEN condition was provided a range where the lower bound is greater than the upper bound"
        );
        assert_eq!(
            err(Value::map().with("a", Value::map().with("ComparisonOperator", "EQ"))),
            "One or more parameter values were invalid: Value or AttributeValueList must be used with ComparisonOperator: EQ for Attribute: a"
        );
    }

    #[test]
    fn mixing_names_both_kinds_in_dynamodb_order() {
        let input = Value::map()
            .with("FilterExpression", "x = :x")
            .with("QueryFilter", Value::map())
            .with("AttributesToGet", Value::List(vec![]));
        let message = check_not_mixed(
            &input,
            &[
                "ProjectionExpression",
                "FilterExpression",
                "KeyConditionExpression",
            ],
            &[
                "AttributesToGet",
                "QueryFilter",
                "ConditionalOperator",
                "KeyConditions",
            ],
        )
        .unwrap_err()
        .message;
        assert_eq!(
            message,
            "Can not use both expression and non-expression parameters in the same request: Non-expression parameters: {AttributesToGet, QueryFilter} Expression parameters: {FilterExpression}"
        );
    }

    #[test]
    fn attribute_updates_translate_to_update_actions() {
        let input = Value::map().with(
            "AttributeUpdates",
            Value::map()
                .with("a", Value::map().with("Value", s("pear")))
                .with(
                    "n",
                    Value::map().with("Action", "ADD").with("Value", n("2")),
                )
                .with("gone", Value::map().with("Action", "DELETE")),
        );
        let update = attribute_updates(&input).unwrap().unwrap();
        let new = eval::apply(&update, &item()).unwrap();
        assert_eq!(new.get("a"), Some(&Attr::S("pear".into())));
        assert_eq!(
            new.get("n").map(Attr::to_json),
            Some(serde_json::json!({"N": "7"}))
        );
        let bad = Value::map().with(
            "AttributeUpdates",
            Value::map().with(
                "a",
                Value::map().with("Action", "ADD").with("Value", s("x")),
            ),
        );
        assert_eq!(
            attribute_updates(&bad).unwrap_err().message,
            "One or more parameter values were invalid: ADD action is not supported for the type S"
        );
    }
}
