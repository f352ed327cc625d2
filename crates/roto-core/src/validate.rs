//! Input validation against the model's constraints, as AWS's front ends do it.
//!
//! Required members, string and collection lengths, numeric ranges, enum values and
//! patterns are checked before a handler runs, and violations are reported in AWS's own
//! words: `1 validation error detected: Value 'ab' at 'tableName' failed to satisfy
//! constraint: Member must have length greater than or equal to 3`. Services whose real
//! front end reports input errors differently (S3, SQS) opt out in their
//! [`ServiceSpec`](crate::ServiceSpec).
//!
//! A pattern is a Java regular expression that AWS matches against the whole value. Each is
//! compiled, anchored, the first time its shape is checked; one `regex_lite` cannot compile
//! (lookarounds, `\p{..}` classes, a class range that starts at `\w`) or whose automaton
//! would be large (a counted repetition that restates a length bound) is not checked, and one
//! that accepts anything (`.*`) is never run.
//!
//! A valid request pays little: each shape remembers, from its first check, whether anything
//! beneath it is constrained (so DynamoDB's attribute values are never walked) and which of
//! its members can fail, and a pattern remembers the last short value it accepted, so a
//! caller naming the same function or stream again does not run the regex.

use std::fmt;

use parking_lot::Mutex;
use regex_lite::{Regex, RegexBuilder};

use crate::model::{Model, Shape, ShapeKind};
use crate::value::Value;

/// Patterns that accept any string: never run.
const ACCEPTS_ANYTHING: &[&str] = &[".*", "^.*$", "[\\s\\S]*", "^[\\s\\S]*$"];

/// The largest automaton a pattern may compile to, in bytes; larger ones restate length
/// bounds (`^.{1,100000}$`) and are not worth their memory.
const PATTERN_SIZE_LIMIT: usize = 64 * 1024;

/// Values up to this many bytes are remembered once a pattern accepts them.
const REMEMBERED_LEN: usize = 256;

/// What validation needs of one shape, worked out on its first check.
#[derive(Debug)]
pub(crate) struct Checks {
    /// Whether this shape or any shape beneath it has a constraint.
    constrained: bool,
    /// A structure's members that can fail (required, or constrained beneath), as positions
    /// in its members with whether each is required, in model order.
    members: Vec<(usize, bool)>,
    /// The pattern, where it is worth running.
    pattern: Option<Pattern>,
}

#[derive(Debug)]
struct Pattern {
    regex: Regex,
    /// The last short value the pattern accepted.
    accepted: Mutex<Option<Box<str>>>,
}

impl Pattern {
    fn compile(source: &str) -> Option<Pattern> {
        if ACCEPTS_ANYTHING.contains(&source) {
            return None;
        }
        let regex = RegexBuilder::new(&format!("^(?:{source})$"))
            .size_limit(PATTERN_SIZE_LIMIT)
            .build()
            .ok()?;
        Some(Pattern {
            regex,
            accepted: Mutex::new(None),
        })
    }

    fn matches(&self, value: &str) -> bool {
        let remembered = self
            .accepted
            .try_lock()
            .is_some_and(|last| last.as_deref() == Some(value));
        if remembered {
            return true;
        }
        let matches = self.regex.is_match(value);
        if matches && value.len() <= REMEMBERED_LEN {
            if let Some(mut last) = self.accepted.try_lock() {
                *last = Some(value.into());
            }
        }
        matches
    }
}

/// Whether a shape constrains its own values (members aside).
fn own_constraint(shape: &Shape) -> bool {
    !shape.required.is_empty()
        || shape.min.is_some()
        || shape.max.is_some()
        || !shape.enum_values.is_empty()
        || shape
            .pattern
            .as_deref()
            .is_some_and(|p| !ACCEPTS_ANYTHING.contains(&p))
}

/// Whether `shape` or any shape reachable from it has a constraint.
fn reaches_constraint<'m>(
    model: &'m Model,
    shape: &'m Shape,
    seen: &mut Vec<*const Shape>,
) -> bool {
    if seen.contains(&(shape as *const Shape)) {
        return false;
    }
    seen.push(shape);
    own_constraint(shape)
        || shape
            .members
            .iter()
            .map(|(_, r)| r)
            .chain(shape.member.as_deref())
            .chain(shape.value.as_deref())
            .any(|r| reaches_constraint(model, model.resolve(r), seen))
}

impl Checks {
    fn of(model: &Model, shape: &Shape) -> Checks {
        let members = shape
            .members
            .iter()
            .enumerate()
            .filter_map(|(i, (name, r))| {
                let required = shape.required.contains(&name);
                let can_fail =
                    required || reaches_constraint(model, model.resolve(r), &mut Vec::new());
                can_fail.then_some((i, required))
            })
            .collect();
        Checks {
            constrained: reaches_constraint(model, shape, &mut Vec::new()),
            members,
            pattern: shape.pattern.as_deref().and_then(Pattern::compile),
        }
    }
}

fn checks<'m>(model: &Model, shape: &'m Shape) -> &'m Checks {
    shape.checks.get_or_init(|| Checks::of(model, shape))
}

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
    for &(i, required) in &checks(model, shape).members {
        let (name, member) = &shape.members.0[i];
        let member_path = Path::Member(path, name);
        match value.get(name) {
            None => {
                // A streaming payload arrives as the request's body, never in the value.
                if required && !model.resolve(member).streaming {
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
    let plan = checks(model, shape);
    if !plan.constrained {
        return;
    }
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
    if let (Some(pattern), Value::String(s)) = (&plan.pattern, value) {
        if !pattern.matches(s) {
            fail(
                out,
                format!(
                    "Member must satisfy regular expression pattern: {}",
                    shape.pattern.as_deref().unwrap_or_default()
                ),
            );
        }
    }
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
                if !checks(model, member_shape).constrained {
                    return;
                }
                for (i, item) in items.iter().enumerate() {
                    check_value(model, member_shape, item, &Path::Index(path, i), out);
                }
            }
        }
        (ShapeKind::Map, Value::Map(entries)) => {
            if let Some(val) = &shape.value {
                let val_shape = model.resolve(val);
                if !checks(model, val_shape).constrained {
                    return;
                }
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

    fn input<'m>(m: &'m Model, operation: &str) -> &'m Shape {
        m.resolve(m.operation(operation).unwrap().input.as_ref().unwrap())
    }

    #[test]
    fn reports_pattern_violations_in_aws_words_before_length() {
        let m = model("iam");
        let v = violations(
            m,
            input(m, "CreateUser"),
            &Value::map().with("UserName", "a b"),
        );
        assert_eq!(
            message(&v).unwrap(),
            "1 validation error detected: Value 'a b' at 'userName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+"
        );
        let long = "!".repeat(65);
        let v = violations(
            m,
            input(m, "CreateUser"),
            &Value::map().with("UserName", long.as_str()),
        );
        let msg = message(&v).unwrap();
        assert!(msg.starts_with(&format!("2 validation errors detected: Value '{long}' at 'userName' failed to satisfy constraint: Member must satisfy regular expression pattern: [\\w+=,.@-]+; Value '{long}' at 'userName' failed to satisfy constraint: Member must have length less than or equal to 64")), "{msg}");
        assert!(violations(
            m,
            input(m, "CreateUser"),
            &Value::map().with("UserName", "a+b=c,d.e@f-g_1")
        )
        .is_empty());
    }

    #[test]
    fn patterns_match_the_whole_value() {
        let m = model("dynamodb");
        let query = |index: &str| {
            violations(
                m,
                input(m, "Query"),
                &Value::map().with("TableName", "t").with("IndexName", index),
            )
        };
        assert!(query("by_name-1.x").is_empty());
        // Twice: the second answer comes from the remembered value.
        assert!(query("by_name-1.x").is_empty());
        assert_eq!(query("by name").len(), 1);
        assert_eq!(query("ok!").len(), 1);
    }

    #[test]
    fn every_pattern_in_every_model_compiles_or_is_skipped() {
        let (mut compiled, mut skipped) = (0, 0);
        for name in [
            "cloudformation",
            "dynamodb",
            "events",
            "firehose",
            "iam",
            "kinesis",
            "kms",
            "lambda",
            "logs",
            "scheduler",
            "secretsmanager",
            "ssm",
            "stepfunctions",
            "sts",
            "apigatewayv2",
            "cloudwatch",
            "ecr",
        ] {
            let m = model(name);
            for (_, shape) in m.shapes() {
                if shape.pattern.is_some() {
                    match checks(m, shape).pattern {
                        Some(_) => compiled += 1,
                        None => skipped += 1,
                    }
                }
            }
        }
        assert!(compiled > 450, "{compiled} compiled, {skipped} skipped");
        // Lookarounds, \p{..} classes and the accept-anything patterns.
        assert!(skipped < 120, "{compiled} compiled, {skipped} skipped");
    }

    #[test]
    fn an_unconstrained_subtree_is_never_walked() {
        let m = model("dynamodb");
        assert!(!checks(m, m.shape("AttributeValue")).constrained);
        let put = input(m, "PutItem");
        let plan = checks(m, put);
        assert!(plan.constrained);
        let names: Vec<&str> = plan
            .members
            .iter()
            .map(|&(i, _)| put.members.0[i].0)
            .collect();
        assert!(
            names.contains(&"TableName") && !names.contains(&"ExpressionAttributeValues"),
            "{names:?}"
        );
        // Item is required, so looked for, but its map of attribute values is not walked.
        let item = m.resolve(put.members.get("Item").unwrap());
        assert!(!checks(m, item).constrained);
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
