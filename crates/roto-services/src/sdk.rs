//! AWS SDK integrations: the names services go by in `aws-sdk:<service>:<action>`
//! resources, JSON parameters as an operation's input shape, and an operation's output as
//! JSON, by the called service's model. It is what lets one mechanism call any operation of
//! any Roto service, from Step Functions' `arn:aws:states:::aws-sdk:<service>:<action>` Tasks,
//! from Scheduler's universal targets (`arn:aws:scheduler:::aws-sdk:<service>:<action>`) and
//! from CloudFormation's resource providers.
//!
//! Member names match without regard to the case of their first letter (Step Functions
//! writes `StateMachineArn` for the API's `stateMachineArn`); outputs name members with a
//! capital first letter, as the SDK integrations do. Nesting is bounded by [`MAX_DEPTH`].

use roto_core::model::{Model, Shape, ShapeKind, ShapeRef};
use roto_core::timestamp::{self, TimestampFormat};
use roto_core::Value;
use serde_json::{Map, Value as Json};

/// The names Roto's services go by in `aws-sdk:` resources, and the prefix of their
/// errors.
pub(crate) fn service(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "sfn" => ("stepfunctions", "Sfn"),
        "dynamodb" => ("dynamodb", "DynamoDb"),
        "sqs" => ("sqs", "Sqs"),
        "sns" => ("sns", "Sns"),
        "lambda" => ("lambda", "Lambda"),
        "s3" => ("s3", "S3"),
        "eventbridge" => ("events", "EventBridge"),
        "cloudwatchlogs" => ("logs", "CloudWatchLogs"),
        "secretsmanager" => ("secretsmanager", "SecretsManager"),
        "ssm" => ("ssm", "Ssm"),
        "kms" => ("kms", "Kms"),
        "iam" => ("iam", "Iam"),
        "sts" => ("sts", "Sts"),
        "kinesis" => ("kinesis", "Kinesis"),
        "scheduler" => ("scheduler", "Scheduler"),
        "ecr" => ("ecr", "Ecr"),
        _ => return None,
    })
}

/// The operation an SDK action names (`getObject` is `GetObject`).
pub(crate) fn operation(action: &str) -> String {
    capitalise(action)
}

/// How deep a converted value may nest.
const MAX_DEPTH: usize = 64;

/// Whether `a` and `b` name the same member (the case of the first letter aside).
pub(crate) fn same_member(a: &str, b: &str) -> bool {
    let (mut a, mut b) = (a.chars(), b.chars());
    match (a.next(), b.next()) {
        (Some(x), Some(y)) => x.eq_ignore_ascii_case(&y) && a.eq(b),
        (None, None) => true,
        _ => false,
    }
}

/// JSON parameters as a value of `shape`, or why they do not fit.
pub(crate) fn to_value(
    model: &Model,
    shape: &Shape,
    json: &Json,
    depth: usize,
) -> Result<Value, String> {
    if depth > MAX_DEPTH {
        return Err("The parameters nest too deeply".into());
    }
    if shape.document {
        return Ok(Value::from_json(json));
    }
    Ok(match (shape.kind, json) {
        (_, Json::Null) => Value::Null,
        (ShapeKind::Structure, Json::Object(obj)) => {
            let mut out = Value::map();
            for (key, v) in obj {
                let (name, member) = shape
                    .members
                    .iter()
                    .find(|(name, _)| same_member(name, key))
                    .ok_or_else(|| format!("The field '{key}' is not supported"))?;
                out.insert(name, to_value(model, model.resolve(member), v, depth + 1)?);
            }
            out
        }
        (ShapeKind::List, Json::Array(items)) => {
            let member = model.resolve(shape.member.as_deref().ok_or("a list without members")?);
            Value::List(
                items
                    .iter()
                    .map(|i| to_value(model, member, i, depth + 1))
                    .collect::<Result<_, _>>()?,
            )
        }
        (ShapeKind::Map, Json::Object(obj)) => {
            let value = model.resolve(shape.value.as_deref().ok_or("a map without values")?);
            let mut out = Value::map();
            for (k, v) in obj {
                out.insert(k.clone(), to_value(model, value, v, depth + 1)?);
            }
            out
        }
        (ShapeKind::Blob, Json::String(s)) => Value::Blob(s.as_bytes().to_vec()),
        (ShapeKind::Blob, other) => Value::Blob(other.to_string().into_bytes()),
        (ShapeKind::String, Json::String(s)) => Value::String(s.clone()),
        (ShapeKind::String, other) => Value::String(other.to_string()),
        (ShapeKind::Boolean, Json::Bool(b)) => Value::Bool(*b),
        (ShapeKind::Integer | ShapeKind::Long, Json::Number(n)) => {
            Value::Integer(n.as_i64().ok_or_else(|| format!("{n} is not an integer"))?)
        }
        (ShapeKind::Float | ShapeKind::Double, Json::Number(n)) => {
            Value::Float(n.as_f64().unwrap_or_default())
        }
        (ShapeKind::Timestamp, Json::Number(n)) => Value::Timestamp(
            n.as_f64()
                .and_then(timestamp::secs_to_millis)
                .ok_or("an invalid timestamp")?,
        ),
        (ShapeKind::Timestamp, Json::String(s)) => {
            Value::Timestamp(timestamp::parse(s).ok_or("an invalid timestamp")?)
        }
        (_, other) => return Err(format!("The value {other} does not fit its field")),
    })
}

/// An operation's output as JSON, its structures' members capitalised as the SDK
/// integrations name them; the keys of its maps (DynamoDB's attribute names, tags) kept as
/// they are. Without a shape every object is taken for a structure.
pub(crate) fn to_json(model: &Model, shape: Option<&Shape>, value: &Value, depth: usize) -> Json {
    if depth > MAX_DEPTH {
        return Json::Null;
    }
    let member = |name: Option<&ShapeRef>| name.map(|n| model.resolve(n));
    match value {
        Value::Map(m) => {
            let mut out = Map::new();
            for (k, v) in m {
                let (key, inner) = match shape {
                    Some(s) if s.kind == ShapeKind::Map => (k.clone(), member(s.value.as_deref())),
                    Some(s) => (
                        capitalise(k),
                        s.members
                            .iter()
                            .find(|(n, _)| n == k)
                            .map(|(_, r)| model.resolve(r)),
                    ),
                    None => (capitalise(k), None),
                };
                out.insert(key, to_json(model, inner, v, depth + 1));
            }
            Json::Object(out)
        }
        Value::List(items) => {
            let inner = shape.and_then(|s| member(s.member.as_deref()));
            Json::Array(
                items
                    .iter()
                    .map(|v| to_json(model, inner, v, depth + 1))
                    .collect(),
            )
        }
        Value::Blob(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
        Value::Timestamp(t) => Json::String(timestamp::format(*t, TimestampFormat::Iso8601)),
        other => other.to_json(),
    }
}

/// A member's name as the SDK integrations write it: its first letter capitalised.
pub(crate) fn capitalise(name: &str) -> String {
    let mut chars = name.chars();
    match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn parameters_fit_the_input_shape_whatever_the_first_letter() {
        let model = roto_core::model::model("stepfunctions");
        let op = model.operation("StartExecution").unwrap();
        let shape = model.resolve(op.input.as_ref().unwrap());
        let v = to_value(
            model,
            shape,
            &serde_json::json!({"StateMachineArn": "arn", "Input": "{}"}),
            0,
        )
        .unwrap();
        assert_eq!(v.str("stateMachineArn"), Some("arn"));
        assert!(to_value(model, shape, &serde_json::json!({"Nope": 1}), 0).is_err());
        assert_eq!(
            to_json(model, Some(shape), &v, 0),
            serde_json::json!({"StateMachineArn": "arn", "Input": "{}"})
        );
    }
}
