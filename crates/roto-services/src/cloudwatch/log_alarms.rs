//! PutLogAlarm: alarms over the results of a CloudWatch Logs scheduled query, with AWS's
//! checks, stored beside the metric and composite alarms (`AlarmType` `LogAlarm`) and
//! shown by DescribeAlarms under `LogAlarms`.
//!
//! The alarm keeps the members it was put with (without its tags), and the ARN of its
//! managed scheduled query (`ScheduledQueryConfiguration.QueryARN`), made when the alarm
//! is created and kept across updates. Roto does not run that query: the alarm stays in
//! INSUFFICIENT_DATA until SetAlarmState moves it, which runs its actions and history
//! like any alarm's.

use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};

use super::alarms::{check_actions, check_alarm_name, check_tags, new_alarm, Alarm, LOG_ALARM};
use super::evaluate::TREAT_MISSING;
use super::{missing, number, validation, Inner};
use crate::ids;

/// The comparisons a log alarm may use.
const COMPARISONS: &[&str] = &[
    "GreaterThanThreshold",
    "GreaterThanOrEqualToThreshold",
    "LessThanThreshold",
    "LessThanOrEqualToThreshold",
];

/// A member of `parent` (named `path` in errors), or MissingParameter.
fn required<'a>(parent: &'a Value, member: &str, path: &str) -> AwsResult<&'a Value> {
    parent.get(member).ok_or_else(|| missing(path))
}

/// An integer member within `range`, or ValidationError naming it.
fn within(value: &Value, path: &str, range: std::ops::RangeInclusive<i64>) -> AwsResult<i64> {
    match number(value) {
        Some(n) if n.fract() == 0.0 && range.contains(&(n as i64)) => Ok(n as i64),
        _ => Err(validation(format!(
            "Value at '{path}' failed to satisfy constraint: Member must be between {} and {}.",
            range.start(),
            range.end()
        ))),
    }
}

/// Whether `expression` is a `rate(N unit)` expression.
fn is_rate(expression: &str) -> bool {
    let Some(inner) = expression
        .strip_prefix("rate(")
        .and_then(|r| r.strip_suffix(')'))
    else {
        return false;
    };
    let Some((n, unit)) = inner.split_once(' ') else {
        return false;
    };
    let units: &[&str] = match n.parse::<u32>() {
        Ok(1) => &["minute", "hour", "day"],
        Ok(n) if n > 1 => &["minutes", "hours", "days"],
        _ => return false,
    };
    units.contains(&unit)
}

/// The scheduled query's configuration, checked.
fn check_query(input: &Value) -> AwsResult<()> {
    let config = required(
        input,
        "ScheduledQueryConfiguration",
        "ScheduledQueryConfiguration",
    )?;
    let path = |member: &str| format!("ScheduledQueryConfiguration.{member}");
    let query = required(config, "QueryString", &path("QueryString"))?;
    if query.as_str().map_or(0, str::len) > 10_000 {
        return Err(validation(
            "Value at 'scheduledQueryConfiguration.queryString' failed to satisfy constraint: Member must have length less than or equal to 10000.",
        ));
    }
    required(
        config,
        "ScheduledQueryRoleARN",
        &path("ScheduledQueryRoleARN"),
    )?;
    let aggregation = required(
        config,
        "AggregationExpression",
        &path("AggregationExpression"),
    )?;
    if !(1..=2048).contains(&aggregation.as_str().map_or(0, str::len)) {
        return Err(validation(
            "Value at 'scheduledQueryConfiguration.aggregationExpression' failed to satisfy constraint: Member must have length between 1 and 2048.",
        ));
    }
    if let Some(groups) = config.get("LogGroupIdentifiers").and_then(Value::as_list) {
        if !(1..=50).contains(&groups.len()) {
            return Err(validation(
                "Value at 'scheduledQueryConfiguration.logGroupIdentifiers' failed to satisfy constraint: Member must have length between 1 and 50.",
            ));
        }
    }
    let schedule = required(
        config,
        "ScheduleConfiguration",
        &path("ScheduleConfiguration"),
    )?;
    let schedule_path = |member: &str| path(&format!("ScheduleConfiguration.{member}"));
    let expression = required(
        schedule,
        "ScheduleExpression",
        &schedule_path("ScheduleExpression"),
    )?
    .as_str()
    .unwrap_or_default();
    if !is_rate(expression) {
        return Err(validation(format!(
            "Invalid ScheduleExpression {expression}: log alarms run on rate() expressions."
        )));
    }
    let start = required(
        schedule,
        "StartTimeOffset",
        &schedule_path("StartTimeOffset"),
    )?;
    let start = within(start, &schedule_path("StartTimeOffset"), 1..=i64::MAX)?;
    if let Some(end) = schedule.get("EndTimeOffset") {
        let end = within(end, &schedule_path("EndTimeOffset"), 0..=i64::MAX)?;
        if end >= start {
            return Err(validation(
                "EndTimeOffset must be less than StartTimeOffset.",
            ));
        }
    }
    Ok(())
}

/// The evaluation members, checked: M of N, threshold, comparison, missing data.
fn check_evaluation(input: &Value) -> AwsResult<()> {
    let evaluate = required(input, "QueryResultsToEvaluate", "QueryResultsToEvaluate")?;
    let evaluate = within(evaluate, "queryResultsToEvaluate", 1..=100)?;
    let alarm = required(input, "QueryResultsToAlarm", "QueryResultsToAlarm")?;
    let alarm = within(alarm, "queryResultsToAlarm", 1..=100)?;
    if alarm > evaluate {
        return Err(validation(
            "QueryResultsToAlarm must be less than or equal to QueryResultsToEvaluate.",
        ));
    }
    required(input, "Threshold", "Threshold")?;
    let op = required(input, "ComparisonOperator", "ComparisonOperator")?
        .as_str()
        .unwrap_or_default();
    if !COMPARISONS.contains(&op) {
        return Err(validation(format!(
            "Value '{op}' at 'comparisonOperator' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            COMPARISONS.join(", ")
        )));
    }
    if let Some(treat) = input.str("TreatMissingData") {
        if !TREAT_MISSING.contains(&treat) {
            return Err(validation(format!(
                "The value {treat} for parameter TreatMissingData is invalid."
            )));
        }
    }
    let lines = match input.get("ActionLogLineCount") {
        Some(n) => within(n, "actionLogLineCount", 0..=50)?,
        None => 0,
    };
    if lines > 0 && input.get("ActionLogLineRoleArn").is_none() {
        return Err(validation(
            "ActionLogLineRoleArn is required when ActionLogLineCount is greater than 0.",
        ));
    }
    if let Some(warm_up) = input.get("WarmUpConfiguration") {
        required(
            warm_up,
            "WarmUpPeriodDurationInMinutes",
            "WarmUpConfiguration.WarmUpPeriodDurationInMinutes",
        )?;
    }
    Ok(())
}

impl Inner {
    pub(super) fn put_log_alarm(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = check_alarm_name(input)?;
        check_query(input)?;
        check_evaluation(input)?;
        for member in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
            check_actions(input, member)?;
        }
        check_tags(input)?;
        let now = now_millis();
        let existing = self.find_alarm(ctx, name)?;
        if existing.as_ref().is_some_and(|a| a.kind != LOG_ALARM) {
            return Err(validation(format!(
                "The alarm {name} already exists and is not a log alarm."
            )));
        }
        let original = existing.as_ref().map(Alarm::describe);
        let query_arn = existing
            .as_ref()
            .and_then(|a| a.config.get("ScheduledQueryConfiguration"))
            .and_then(|c| c.str("QueryARN"))
            .map(str::to_string)
            .unwrap_or_else(|| {
                format!(
                    "arn:aws:logs:{}:{}:scheduled-query:{}",
                    ctx.region,
                    ctx.account,
                    ids::uuid()
                )
            });
        let mut config = input.clone();
        config.remove("Tags");
        let mut query = input
            .get("ScheduledQueryConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        query.insert("QueryARN", query_arn);
        config.insert("ScheduledQueryConfiguration", query);
        let mut alarm = existing.unwrap_or_else(|| new_alarm(ctx, name, LOG_ALARM, input, now));
        alarm.config = config;
        alarm.updated = now;
        self.save_alarm(&alarm)?;
        self.record_configuration(&alarm, original)?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::is_rate;

    #[test]
    fn only_rate_expressions_with_a_matching_unit_schedule_a_log_alarm() {
        for ok in [
            "rate(1 minute)",
            "rate(5 minutes)",
            "rate(2 hours)",
            "rate(1 day)",
        ] {
            assert!(is_rate(ok), "{ok}");
        }
        for bad in [
            "rate(1 minutes)",
            "rate(0 minutes)",
            "cron(0 * * * ? *)",
            "rate(5)",
        ] {
            assert!(!is_rate(bad), "{bad}");
        }
    }
}
