//! Lifecycle configurations as S3 checks them before storing: each rule has a status and
//! an action, an expiration says Days or Date (not both) and counts positive days, rule
//! ids are unique and at most 255 characters, and a rule without one is given one.

use std::collections::HashSet;

use roto_core::{AwsResult, Value};

use super::errors;

/// The members of a rule that are actions.
const ACTIONS: [&str; 5] = [
    "Expiration",
    "Transitions",
    "NoncurrentVersionExpiration",
    "NoncurrentVersionTransitions",
    "AbortIncompleteMultipartUpload",
];

/// The longest rule id S3 accepts.
const MAX_ID: usize = 255;

/// Checks a lifecycle configuration's rules as S3 does.
pub(crate) fn check(config: &Value) -> AwsResult<()> {
    let rules = config
        .get("Rules")
        .and_then(Value::as_list)
        .unwrap_or_default();
    if rules.is_empty() {
        return Err(errors::malformed_xml());
    }
    let mut ids = HashSet::new();
    for rule in rules {
        check_rule(rule)?;
        if let Some(id) = rule.str("ID") {
            if !ids.insert(id) {
                return Err(errors::invalid_argument(
                    "Rule ID must be unique. Found same ID for more than one rule",
                    "ID",
                    id,
                ));
            }
        }
    }
    Ok(())
}

fn check_rule(rule: &Value) -> AwsResult<()> {
    if !matches!(rule.str("Status"), Some("Enabled" | "Disabled")) {
        return Err(errors::malformed_xml());
    }
    if let Some(id) = rule.str("ID").filter(|id| id.chars().count() > MAX_ID) {
        return Err(errors::invalid_argument(
            "ID length should not exceed allowed limit of 255",
            "ID",
            id,
        ));
    }
    let has_action = ACTIONS.iter().any(|member| match rule.get(member) {
        Some(Value::List(items)) => !items.is_empty(),
        Some(_) => true,
        None => false,
    });
    if !has_action {
        return Err(errors::invalid_request(
            "At least one action needs to be specified in a rule",
        ));
    }
    if let Some(expiration) = rule.get("Expiration") {
        let days = expiration.int("Days");
        let date = expiration.get("Date").is_some();
        let marker = expiration.get("ExpiredObjectDeleteMarker").is_some();
        if (days.is_some() && date) || (marker && (days.is_some() || date)) {
            return Err(errors::malformed_xml());
        }
        if let Some(days) = days.filter(|d| *d <= 0) {
            return Err(errors::invalid_argument(
                "'Days' for Expiration action must be a positive integer",
                "Days",
                &days.to_string(),
            ));
        }
    }
    Ok(())
}

/// The rules with an `ID` given to each rule put without one, as S3 gives them.
pub(crate) fn with_ids(config: &mut Value) {
    let Some(Value::List(rules)) = config.get("Rules") else {
        return;
    };
    let rules: Vec<Value> = rules
        .iter()
        .map(|rule| match rule.get("ID") {
            Some(_) => rule.clone(),
            None => rule.clone().with("ID", new_id()),
        })
        .collect();
    config.insert("Rules", rules);
}

/// A generated rule id.
fn new_id() -> String {
    (0..32).map(|_| fastrand::alphanumeric()).collect()
}
