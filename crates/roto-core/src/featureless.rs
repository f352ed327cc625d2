//! Operations of features Roto does not model, answered as AWS answers them for a resource
//! (or an account) that does not use the feature.
//!
//! Deployment tools read every attribute of every resource they manage: Terraform reads a
//! Lambda function's recursion configuration and an S3 bucket's metadata configuration on
//! every refresh, whether or not the configuration uses them. AWS answers such reads for a
//! resource without the feature with the empty configuration, the default, or the documented
//! not-found error; a service lists those operations in a [`Featureless`] table (its
//! [`crate::Service::featureless`]) and answers them through [`answer`] once it has checked
//! the resource they name, so that what Roto serves this way is listed in one place and in
//! the generated list of operations (`docs/operations.md`).

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, ShapeKind};
use crate::value::Value;

/// How AWS answers an operation for a resource without the feature.
#[derive(Clone, Copy)]
pub enum Answer {
    /// The operation's output with every list empty (nothing configured, nothing to list).
    Empty,
    /// A fixed output built from the input (the default configuration).
    Output(fn(&Value) -> Value),
    /// The documented error (the configuration does not exist, the resource does not
    /// support the feature).
    Error(fn(&Value) -> AwsError),
}

/// One operation a service answers as a resource without the feature.
#[derive(Clone, Copy)]
pub struct Featureless {
    /// The operation's name in the model.
    pub operation: &'static str,
    /// What it answers.
    pub answer: Answer,
}

impl Featureless {
    /// The operation answering its output with every list empty.
    pub const fn empty(operation: &'static str) -> Featureless {
        Featureless {
            operation,
            answer: Answer::Empty,
        }
    }

    /// The operation answering a fixed output.
    pub const fn output(operation: &'static str, output: fn(&Value) -> Value) -> Featureless {
        Featureless {
            operation,
            answer: Answer::Output(output),
        }
    }

    /// The operation answering an error.
    pub const fn error(operation: &'static str, error: fn(&Value) -> AwsError) -> Featureless {
        Featureless {
            operation,
            answer: Answer::Error(error),
        }
    }
}

/// Whether `table` lists `operation`.
pub fn lists(table: &[Featureless], operation: &str) -> bool {
    table.iter().any(|f| f.operation == operation)
}

/// The answer `table` gives `operation` for `input`; `NotImplemented` for an operation it
/// does not list.
pub fn answer(
    model: &Model,
    table: &[Featureless],
    operation: &str,
    input: &Value,
) -> AwsResult<Value> {
    let Some(entry) = table.iter().find(|f| f.operation == operation) else {
        return Err(AwsError::not_implemented(operation));
    };
    match entry.answer {
        Answer::Empty => Ok(empty_output(model, operation)),
        Answer::Output(output) => Ok(output(input)),
        Answer::Error(error) => Err(error(input)),
    }
}

/// The output of `operation` with each list member empty and nothing else set.
fn empty_output(model: &Model, operation: &str) -> Value {
    let mut output = Value::map();
    let Some(shape) = model
        .operation(operation)
        .and_then(|op| op.output.as_ref())
        .map(|r| model.resolve(r))
    else {
        return output;
    };
    for (name, member) in shape.members.iter() {
        if model.resolve(member).kind == ShapeKind::List {
            output.insert(name, Vec::<Value>::new());
        }
    }
    output
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;

    const TABLE: &[Featureless] = &[
        Featureless::empty("ListGlobalTables"),
        Featureless::error("DescribeGlobalTable", |input| {
            AwsError::new(
                "GlobalTableNotFoundException",
                format!(
                    "Global table not found: {}",
                    input.str("GlobalTableName").unwrap_or_default()
                ),
            )
            .with_status(400)
        }),
    ];

    #[test]
    fn empty_answers_have_every_list_empty() {
        let out = answer(model("dynamodb"), TABLE, "ListGlobalTables", &Value::map()).unwrap();
        assert_eq!(
            out.get("GlobalTables")
                .and_then(Value::as_list)
                .map(|l| l.len()),
            Some(0)
        );
        assert!(out.get("LastEvaluatedGlobalTableName").is_none());
    }

    #[test]
    fn error_answers_name_the_resource_and_unlisted_operations_are_not_implemented() {
        let input = Value::map().with("GlobalTableName", "orders");
        let err = answer(model("dynamodb"), TABLE, "DescribeGlobalTable", &input).unwrap_err();
        assert_eq!(err.message, "Global table not found: orders");
        let err = answer(model("dynamodb"), TABLE, "CreateGlobalTable", &input).unwrap_err();
        assert_eq!(err.code, "NotImplemented");
        assert!(lists(TABLE, "ListGlobalTables") && !lists(TABLE, "CreateGlobalTable"));
    }
}
