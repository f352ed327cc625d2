//! What watches a stack operation while it runs: the creation's `TimeoutInMinutes` and the
//! stack's rollback triggers (CloudWatch alarms, whose states are read through CloudWatch's
//! DescribeAlarms on the dispatcher). Either stops the operation as CancelUpdateStack
//! does (the resources in progress are cancelled) with its own reason, and the operation
//! rolls back. Once the resources are deployed the triggers are watched for the
//! `MonitoringTimeInMinutes` more, on the server clock, before the operation completes.

use std::sync::Arc;

use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{AwsResult, Value};
use serde_json::json;

use super::deploy::Job;
use super::validation;

/// The stack status reason of a creation that ran past its `TimeoutInMinutes`.
pub(crate) const TIMED_OUT: &str = "Stack creation time exceeded the specified timeout. ";

/// How often the triggers' alarms are read, in milliseconds of the server clock.
const POLL: i64 = 1_000;

/// The most triggers a stack may have, and the longest monitoring time (AWS's limits).
const MAX_TRIGGERS: usize = 5;
const MAX_MONITORING: i64 = 180;

/// The types a rollback trigger may name, and the DescribeAlarms output list of each.
const TRIGGER_TYPES: [(&str, &str); 2] = [
    ("AWS::CloudWatch::Alarm", "MetricAlarms"),
    ("AWS::CloudWatch::CompositeAlarm", "CompositeAlarms"),
];

/// A stack's rollback configuration.
#[derive(Debug, Clone, Default, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Rollback {
    pub triggers: Vec<Trigger>,
    pub monitoring: i64,
}

/// One rollback trigger: an alarm's ARN and its type.
#[derive(Debug, Clone, PartialEq, serde::Serialize, serde::Deserialize)]
pub(crate) struct Trigger {
    pub arn: String,
    pub kind: String,
}

/// The alarm name an alarm's ARN (`arn:aws:cloudwatch:<region>:<account>:alarm:<name>`)
/// names.
fn alarm_name(arn: &str) -> Option<&str> {
    let rest = arn.strip_prefix("arn:aws:cloudwatch:")?;
    let (_, name) = rest.split_once(":alarm:")?;
    (!name.is_empty()).then_some(name)
}

/// The request's `RollbackConfiguration`, checked as AWS checks it; None when absent.
pub(crate) fn parse(input: &Value) -> AwsResult<Option<Rollback>> {
    let Some(config) = input.get("RollbackConfiguration") else {
        return Ok(None);
    };
    let triggers = match config.get("RollbackTriggers") {
        Some(Value::List(items)) => items.as_slice(),
        _ => &[],
    };
    if triggers.len() > MAX_TRIGGERS {
        return Err(validation(format!(
            "Rollback triggers cannot exceed {MAX_TRIGGERS}"
        )));
    }
    let mut parsed: Vec<Trigger> = Vec::new();
    for t in triggers {
        let arn = t.str("Arn").unwrap_or_default();
        let kind = t.str("Type").unwrap_or_default();
        if !TRIGGER_TYPES.iter().any(|(k, _)| *k == kind) {
            return Err(validation(format!(
                "Unsupported rollback trigger type [{kind}]; the supported types are AWS::CloudWatch::Alarm and AWS::CloudWatch::CompositeAlarm"
            )));
        }
        if alarm_name(arn).is_none() {
            return Err(validation(format!(
                "Rollback trigger ARN [{arn}] is not a CloudWatch alarm's ARN"
            )));
        }
        if parsed.iter().any(|p| p.arn == arn) {
            return Err(validation(format!(
                "Rollback trigger ARN [{arn}] is specified more than once"
            )));
        }
        parsed.push(Trigger {
            arn: arn.to_string(),
            kind: kind.to_string(),
        });
    }
    let monitoring = config.int("MonitoringTimeInMinutes").unwrap_or(0);
    if !(0..=MAX_MONITORING).contains(&monitoring) {
        return Err(validation(format!(
            "MonitoringTimeInMinutes must be between 0 and {MAX_MONITORING}"
        )));
    }
    Ok(Some(Rollback {
        triggers: parsed,
        monitoring,
    }))
}

/// The configuration as DescribeStacks answers it.
pub(crate) fn describe(r: &Rollback) -> Value {
    let triggers = r.triggers.iter().map(|t| {
        Value::map()
            .with("Arn", t.arn.as_str())
            .with("Type", t.kind.as_str())
    });
    Value::map()
        .with("RollbackTriggers", Value::List(triggers.collect()))
        .with("MonitoringTimeInMinutes", r.monitoring)
}

/// Why the operation must roll back now: the first trigger whose alarm is in ALARM, or
/// does not exist.
async fn tripped(job: &Job, triggers: &[Trigger]) -> Option<String> {
    let names: Vec<&str> = triggers.iter().filter_map(|t| alarm_name(&t.arn)).collect();
    let input = json!({"AlarmNames": names, "AlarmTypes": ["MetricAlarm", "CompositeAlarm"]});
    let out = match job.api("cloudwatch", "DescribeAlarms", input).await {
        Ok(out) => out,
        Err(e) => return Some(format!("{e}. ")),
    };
    for t in triggers {
        let list = TRIGGER_TYPES.iter().find(|(k, _)| *k == t.kind)?.1;
        let alarm = out[list]
            .as_array()
            .into_iter()
            .flatten()
            .find(|a| a["AlarmArn"] == t.arn.as_str());
        match alarm {
            None => return Some(format!("Rollback trigger [{}] does not exist. ", t.arn)),
            Some(a) if a["StateValue"] == "ALARM" => {
                return Some(format!("Rollback trigger [{}] is in ALARM state. ", t.arn))
            }
            Some(_) => {}
        }
    }
    None
}

/// Watches a running operation until its task ends: stops it at `deadline` (a creation's
/// timeout) or when a trigger trips.
pub(crate) async fn watch(job: Arc<Job>, deadline: Option<i64>, triggers: Vec<Trigger>) {
    loop {
        if deadline.is_some_and(|d| now_millis() >= d) {
            job.stop(TIMED_OUT);
            return;
        }
        if !triggers.is_empty() {
            if let Some(reason) = tripped(&job, &triggers).await {
                job.stop(&reason);
                return;
            }
        }
        let next = match (deadline, triggers.is_empty()) {
            (None, true) => return,
            (Some(d), true) => d,
            (d, false) => (now_millis() + POLL).min(d.unwrap_or(i64::MAX)),
        };
        sleep_until(next).await;
    }
}

/// Watches the triggers for the monitoring time after the resources are deployed: why
/// the operation must roll back, if one trips. Without triggers an update still waits the
/// monitoring time (before its cleanup); a creation does not.
pub(crate) async fn monitor(job: &Job, rollback: &Rollback, updating: bool) -> Result<(), String> {
    if rollback.triggers.is_empty() && !updating {
        return Ok(());
    }
    let end = now_millis() + rollback.monitoring * 60_000;
    loop {
        if !rollback.triggers.is_empty() {
            if let Some(reason) = tripped(job, &rollback.triggers).await {
                return Err(reason);
            }
        }
        let now = now_millis();
        if now >= end {
            return Ok(());
        }
        sleep_until((now + POLL).min(end)).await;
    }
}
