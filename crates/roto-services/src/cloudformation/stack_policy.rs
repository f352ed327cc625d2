//! Stack policies: the JSON documents that say which update actions (`Update:Modify`,
//! `Update:Replace`, `Update:Delete`) a stack update may take on which resources, checked
//! when set and evaluated for each resource an update would touch.
//!
//! As AWS evaluates them: once a stack has a policy, an action no statement allows is
//! denied, and a matching `Deny` wins over any `Allow`. A statement matches by `Action` or
//! `NotAction` (wildcards), `Resource` or `NotResource` (`*` or `LogicalResourceId/<id>`,
//! wildcards) and a `Condition` on `ResourceType` (`StringEquals`, `StringLike` and their
//! negations). `Principal` must be `*`. Creations and rollbacks are never checked.

use serde_json::Value as Json;

use super::validation;
use crate::glob;
use roto_core::AwsError;

/// The update actions a policy governs.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Action {
    Modify,
    Replace,
    Delete,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Modify => "Update:Modify",
            Action::Replace => "Update:Replace",
            Action::Delete => "Update:Delete",
        }
    }
}

/// A stack policy, checked.
#[derive(Clone, Debug)]
pub(crate) struct StackPolicy {
    statements: Vec<Statement>,
}

#[derive(Clone, Debug)]
struct Statement {
    deny: bool,
    actions: Vec<String>,
    not_actions: bool,
    resources: Vec<String>,
    not_resources: bool,
    /// (operator, resource type patterns) pairs, all of which must hold.
    conditions: Vec<(String, Vec<String>)>,
}

/// AWS's answer to any policy it cannot read.
fn invalid() -> AwsError {
    validation("Error validating stack policy: Invalid stack policy")
}

/// A string or a list of strings, as policies write them.
fn strings(value: &Json) -> Option<Vec<String>> {
    match value {
        Json::String(s) => Some(vec![s.clone()]),
        Json::Array(items) => items
            .iter()
            .map(|i| i.as_str().map(str::to_string))
            .collect(),
        _ => None,
    }
}

impl StackPolicy {
    /// The policy `text` holds, or AWS's ValidationError.
    pub(crate) fn parse(text: &str) -> Result<StackPolicy, AwsError> {
        let doc: Json = serde_json::from_str(text).map_err(|_| invalid())?;
        let doc = doc.as_object().ok_or_else(invalid)?;
        let statements = match doc.get("Statement") {
            None => Vec::new(),
            Some(Json::Array(items)) => items.iter().collect(),
            Some(one) => vec![one],
        };
        let statements = statements
            .into_iter()
            .map(Statement::parse)
            .collect::<Option<Vec<_>>>()
            .ok_or_else(invalid)?;
        Ok(StackPolicy { statements })
    }

    /// Whether the policy lets an update take `action` on the resource `logical` of type
    /// `kind`: `Err` is the resource's failure reason, as AWS words it.
    pub(crate) fn check(&self, action: Action, logical: &str, kind: &str) -> Result<(), String> {
        let resource = format!("LogicalResourceId/{logical}");
        let matching = self
            .statements
            .iter()
            .enumerate()
            .filter(|(_, s)| s.matches(action, &resource, kind));
        let mut allowed = false;
        for (i, statement) in matching {
            if statement.deny {
                return Err(format!(
                    "Action denied by stack policy: Statement [#{i}] does not allow [{}] for resource [{resource}]",
                    action.name()
                ));
            }
            allowed = true;
        }
        if allowed {
            return Ok(());
        }
        Err(format!(
            "Action not allowed by stack policy: no statement allows [{}] for resource [{resource}]",
            action.name()
        ))
    }
}

impl Statement {
    fn parse(value: &Json) -> Option<Statement> {
        let deny = match value.get("Effect")?.as_str()? {
            "Allow" => false,
            "Deny" => true,
            _ => return None,
        };
        if value.get("Principal")?.as_str()? != "*" {
            return None;
        }
        let (actions, not_actions) = one_of(value, "Action", "NotAction")?;
        if !actions.iter().all(|a| a.starts_with("Update:")) {
            return None;
        }
        let (resources, not_resources) = one_of(value, "Resource", "NotResource")?;
        if !resources
            .iter()
            .all(|r| r == "*" || r.starts_with("LogicalResourceId/"))
        {
            return None;
        }
        let mut conditions = Vec::new();
        for (operator, test) in value
            .get("Condition")
            .map(|c| c.as_object())
            .unwrap_or(Some(&serde_json::Map::new()))?
        {
            if !matches!(
                operator.as_str(),
                "StringEquals" | "StringNotEquals" | "StringLike" | "StringNotLike"
            ) {
                return None;
            }
            let test = test.as_object()?;
            if test.keys().any(|k| k != "ResourceType") {
                return None;
            }
            conditions.push((operator.clone(), strings(test.get("ResourceType")?)?));
        }
        Some(Statement {
            deny,
            actions,
            not_actions,
            resources,
            not_resources,
            conditions,
        })
    }

    fn matches(&self, action: Action, resource: &str, kind: &str) -> bool {
        let action_listed = self
            .actions
            .iter()
            .any(|a| glob::glob(a, action.name(), false));
        let resource_listed = self
            .resources
            .iter()
            .any(|r| glob::glob(r, resource, false));
        action_listed != self.not_actions
            && resource_listed != self.not_resources
            && self.conditions.iter().all(|(op, types)| {
                let like = op.ends_with("Like");
                let found = types.iter().any(|t| {
                    if like {
                        glob::glob(t, kind, false)
                    } else {
                        t == kind
                    }
                });
                found != op.contains("Not")
            })
    }
}

/// The list a statement gives under `name` or under `negated` (exactly one of them), and
/// whether it was the negated one.
fn one_of(value: &Json, name: &str, negated: &str) -> Option<(Vec<String>, bool)> {
    match (value.get(name), value.get(negated)) {
        (Some(v), None) => Some((strings(v)?, false)),
        (None, Some(v)) => Some((strings(v)?, true)),
        _ => None,
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn policy(text: &str) -> StackPolicy {
        StackPolicy::parse(text).unwrap()
    }

    #[test]
    fn a_deny_wins_and_what_no_statement_allows_is_denied() {
        let p = policy(
            r#"{"Statement": [
                {"Effect": "Allow", "Action": "Update:*", "Principal": "*", "Resource": "*"},
                {"Effect": "Deny", "Action": "Update:Replace", "Principal": "*", "Resource": "LogicalResourceId/Db*"}
            ]}"#,
        );
        assert!(p
            .check(Action::Modify, "Db1", "AWS::DynamoDB::Table")
            .is_ok());
        assert_eq!(
            p.check(Action::Replace, "Db1", "AWS::DynamoDB::Table").unwrap_err(),
            "Action denied by stack policy: Statement [#1] does not allow [Update:Replace] for resource [LogicalResourceId/Db1]"
        );
        let empty = policy("{}");
        assert!(empty
            .check(Action::Delete, "Q", "AWS::SQS::Queue")
            .unwrap_err()
            .starts_with("Action not allowed by stack policy"));
    }

    #[test]
    fn conditions_on_the_resource_type_and_negations() {
        let p = policy(
            r#"{"Statement": [
                {"Effect": "Allow", "NotAction": "Update:Delete", "Principal": "*", "NotResource": "LogicalResourceId/Keep"},
                {"Effect": "Deny", "Action": ["Update:Modify"], "Principal": "*", "Resource": "*",
                 "Condition": {"StringLike": {"ResourceType": ["AWS::SQS::*"]}}}
            ]}"#,
        );
        assert!(p.check(Action::Modify, "T", "AWS::SNS::Topic").is_ok());
        assert!(p.check(Action::Modify, "Q", "AWS::SQS::Queue").is_err());
        assert!(p.check(Action::Delete, "T", "AWS::SNS::Topic").is_err());
        assert!(p.check(Action::Replace, "Keep", "AWS::SNS::Topic").is_err());
    }

    #[test]
    fn what_aws_refuses_to_set() {
        for text in [
            "not json",
            "[]",
            r#"{"Statement": [{"Effect": "Deny", "Action": "Update:*", "Principal": "me", "Resource": "*"}]}"#,
            r#"{"Statement": [{"Effect": "Deny", "Action": "Delete:*", "Principal": "*", "Resource": "*"}]}"#,
            r#"{"Statement": [{"Effect": "Maybe", "Action": "Update:*", "Principal": "*", "Resource": "*"}]}"#,
            r#"{"Statement": [{"Effect": "Deny", "Action": "Update:*", "Principal": "*", "Resource": "arn:aws:s3:::b"}]}"#,
        ] {
            let e = StackPolicy::parse(text).unwrap_err();
            assert_eq!(
                e.message,
                "Error validating stack policy: Invalid stack policy"
            );
        }
    }
}
