//! Input validation against the model's constraints, as AWS's front ends do it.
//!
//! Required members, string and collection lengths, numeric ranges and enum values are
//! checked before a handler runs, and violations are reported in AWS's own words:
//! `1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint:
//! Member must have length greater than or equal to 3`. Services whose real front end
//! reports input errors differently (S3, SQS) opt out in their [`ServiceSpec`](crate::ServiceSpec).

use std::fmt;

use crate::model::{Model, Shape, ShapeKind};
use crate::value::Value;

/// The violations in `value` against structure `shape`, in AWS's phrasing.
pub fn violations(model: &Model, shape: &Shape, value: &Value) -> Vec<String> {
    let mut out = Vec::new();
    check_structure(model, shape, value, &Path::Root, &mut out);
    out
}

/// The message AWS gives for a set of violations, or `None` if there are none.
pub fn message(violations: &[String]) -> Option<String> {
    match violations.len() {
        0 => None,
        1 => Some(format!("1 validation error detected: {}", violations[0])),
        n => Some(format!(
            "{n} validation errors detected: {}",
            violations.join("; ")
        )),
    }
}

/// Where a value sits in the input (`tableName`, `items.2.member`), written out only when
/// a violation is reported, so a valid request allocates nothing for it.
#[derive(Clone, Copy)]
enum Path<'a> {
    Root,
    Member(&'a Path<'a>, &'a str),
    Index(&'a Path<'a>, usize),
    Key(&'a Path<'a>, &'a str),
}

impl fmt::Display for Path<'_> {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Path::Root => Ok(()),
            Path::Member(parent, name) => {
                if !matches!(parent, Path::Root) {
                    write!(f, "{parent}.")?;
                }
                let mut chars = name.chars();
                if let Some(first) = chars.next() {
                    write!(f, "{}{}", first.to_lowercase(), chars.as_str())?;
                }
                Ok(())
            }
            Path::Index(parent, i) => write!(f, "{parent}.{}.member", i + 1),
            Path::Key(parent, k) => write!(f, "{parent}.{k}.member"),
        }
    }
}

fn check_structure(
    model: &Model,
    shape: &Shape,
    value: &Value,
    path: &Path<'_>,
    out: &mut Vec<String>,
) {
    for (name, member) in shape.members.iter() {
        let member_path = Path::Member(path, name);
        match value.get(name) {
            None => {
                // A streaming payload arrives as the request's body, never in the value.
                if shape.required.contains(&name) && !model.resolve(member).streaming {
                    out.push(format!(
                        "Value null at '{member_path}' failed to satisfy constraint: Member must not be null"
                    ));
                }
            }
            Some(v) => check_value(model, model.resolve(member), v, &member_path, out),
        }
    }
}

fn display(value: &Value) -> String {
    match value {
        Value::String(s) => s.clone(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => f.to_string(),
        Value::Bool(b) => b.to_string(),
        _ => String::new(),
    }
}

fn check_value(
    model: &Model,
    shape: &Shape,
    value: &Value,
    path: &Path<'_>,
    out: &mut Vec<String>,
) {
    let fail = |out: &mut Vec<String>, constraint: String| {
        let shown = match value {
            Value::String(_) | Value::Integer(_) | Value::Float(_) | Value::Bool(_) => {
                format!("'{}'", display(value))
            }
            _ => "null".to_string(),
        };
        let shown = if matches!(value, Value::List(_) | Value::Map(_)) {
            format!("'{}'", "[...]")
        } else {
            shown
        };
        out.push(format!(
            "Value {shown} at '{path}' failed to satisfy constraint: {constraint}"
        ));
    };
    let length = match value {
        Value::String(s) => Some(s.chars().count() as f64),
        Value::List(l) => Some(l.len() as f64),
        Value::Map(m) if shape.kind == ShapeKind::Map => Some(m.len() as f64),
        Value::Blob(b) => Some(b.len() as f64),
        _ => None,
    };
    let numeric = match value {
        Value::Integer(i) => Some(*i as f64),
        Value::Float(f) => Some(*f),
        _ => None,
    };
    if let Some(len) = length {
        if let Some(min) = shape.min.filter(|m| len < *m) {
            fail(
                out,
                format!("Member must have length greater than or equal to {min}"),
            );
        }
        if let Some(max) = shape.max.filter(|m| len > *m) {
            fail(
                out,
                format!("Member must have length less than or equal to {max}"),
            );
        }
    }
    if let Some(n) = numeric {
        if let Some(min) = shape.min.filter(|m| n < *m) {
            fail(
                out,
                format!("Member must have value greater than or equal to {min}"),
            );
        }
        if let Some(max) = shape.max.filter(|m| n > *m) {
            fail(
                out,
                format!("Member must have value less than or equal to {max}"),
            );
        }
    }
    if let Value::String(s) = value {
        if !shape.enum_values.is_empty() && !shape.enum_values.iter().any(|e| e == s) {
            fail(
                out,
                format!(
                    "Member must satisfy enum value set: [{}]",
                    shape.enum_values.join(", ")
                ),
            );
        }
    }
    match (shape.kind, value) {
        (ShapeKind::Structure, Value::Map(_)) => check_structure(model, shape, value, path, out),
        (ShapeKind::List, Value::List(items)) => {
            if let Some(member) = &shape.member {
                let member_shape = model.resolve(member);
                for (i, item) in items.iter().enumerate() {
                    check_value(model, member_shape, item, &Path::Index(path, i), out);
                }
            }
        }
        (ShapeKind::Map, Value::Map(entries)) => {
            if let Some(val) = &shape.value {
                let val_shape = model.resolve(val);
                for (k, v) in entries {
                    check_value(model, val_shape, v, &Path::Key(path, k), out);
                }
            }
        }
        _ => {}
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;

    #[test]
    fn reports_missing_required_members_and_length_violations_in_aws_words() {
        let m = model("dynamodb");
        let shape = m.shape(
            m.operation("DescribeTable")
                .unwrap()
                .input
                .as_ref()
                .unwrap()
                .shape,
        );
        let v = violations(m, shape, &Value::map());
        assert_eq!(
            message(&v).unwrap(),
            "1 validation error detected: Value null at 'tableName' failed to satisfy constraint: Member must not be null"
        );
        let v = violations(m, shape, &Value::map().with("TableName", ""));
        assert_eq!(v.len(), 1, "{v:?}");
        assert!(
            v[0].contains("Member must have length greater than or equal to 1"),
            "{v:?}"
        );
    }

    #[test]
    fn reports_enum_and_range_violations_together() {
        let m = model("sts");
        let shape = m.shape("AssumeRoleRequest");
        let input = Value::map()
            .with("RoleArn", "arn:aws:iam::123456789012:role/r")
            .with("RoleSessionName", "s")
            .with("DurationSeconds", 60i64);
        let v = violations(m, shape, &input);
        let msg = message(&v).unwrap();
        assert!(msg.starts_with("2 validation errors detected: "), "{msg}");
        assert!(msg.contains("Value 's' at 'roleSessionName'"), "{msg}");
        assert!(msg.contains("Value '60' at 'durationSeconds' failed to satisfy constraint: Member must have value greater than or equal to 900"), "{msg}");
    }
}
