//! Alarms as stored, and the calls that read and change them: PutMetricAlarm with AWS's
//! checks, DescribeAlarms with its filters and paging, DescribeAlarmsForMetric,
//! DeleteAlarms, Enable/DisableAlarmActions, SetAlarmState, DescribeAlarmHistory and the
//! tags of alarms.
//!
//! An alarm's configuration is kept as the members PutMetricAlarm gave (without its tags),
//! so DescribeAlarms returns what was put; its state, reason and timestamps are columns.
//! Updating an alarm keeps its state, as AWS documents.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::json;

use super::data::parse_queries;
use super::evaluate::{is_threshold_comparison, BAND_COMPARISONS, INSUFFICIENT, TREAT_MISSING};
use super::metrics::{check_namespace, dimensions_value, parse_dimensions};
use super::rule;
use super::stats::{percentile_of, STATISTICS};
use super::{
    invalid_combination, invalid_value, list, missing, number, required_str, scan_ascending,
    validation, Inner,
};
use crate::paging::page;

/// The columns [`Alarm::from_row`] reads, in order.
pub(super) const COLUMNS: &str = "account, region, name, kind, config, state, reason,
    reason_data, state_updated, transitioned, updated, tags, next_eval";

/// The kinds of alarm, as `AlarmType` names them.
pub(super) const METRIC_ALARM: &str = "MetricAlarm";
pub(super) const COMPOSITE_ALARM: &str = "CompositeAlarm";
pub(super) const LOG_ALARM: &str = "LogAlarm";

const STATES: &[&str] = &["OK", "ALARM", "INSUFFICIENT_DATA"];
const MAX_ACTIONS: usize = 5;
const MAX_TAGS: usize = 50;

/// An alarm as stored.
#[derive(Debug, Clone)]
pub(super) struct Alarm {
    pub account: String,
    pub region: String,
    pub name: String,
    pub kind: String,
    pub config: Value,
    pub state: String,
    pub reason: String,
    pub reason_data: Option<String>,
    pub state_updated: i64,
    pub transitioned: i64,
    pub updated: i64,
    pub tags: Vec<(String, String)>,
    pub next_eval: Option<i64>,
}

impl Alarm {
    pub fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Alarm> {
        let config: String = r.get(4)?;
        let tags: String = r.get(11)?;
        Ok(Alarm {
            account: r.get(0)?,
            region: r.get(1)?,
            name: r.get(2)?,
            kind: r.get(3)?,
            config: serde_json::from_str(&config)
                .map(|j| Value::from_json(&j))
                .unwrap_or_else(|_| Value::map()),
            state: r.get(5)?,
            reason: r.get(6)?,
            reason_data: r.get(7)?,
            state_updated: r.get(8)?,
            transitioned: r.get(9)?,
            updated: r.get(10)?,
            tags: serde_json::from_str(&tags).unwrap_or_default(),
            next_eval: r.get(12)?,
        })
    }

    /// `arn:aws:cloudwatch:<region>:<account>:alarm:<name>`.
    pub fn arn(&self) -> String {
        alarm_arn(&self.account, &self.region, &self.name)
    }

    /// Whether the alarm's actions run.
    pub fn actions_enabled(&self) -> bool {
        self.config.bool("ActionsEnabled").unwrap_or(true)
    }

    /// The alarm as DescribeAlarms shows it.
    pub fn describe(&self) -> Value {
        let mut out = self.config.clone();
        for member in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
            if out.get(member).is_none() {
                out.insert(member, Value::List(Vec::new()));
            }
        }
        let single_metric = self.kind == METRIC_ALARM && out.get("Metrics").is_none();
        if single_metric && out.get("Dimensions").is_none() {
            out.insert("Dimensions", Value::List(Vec::new()));
        }
        out.with("AlarmArn", self.arn())
            .with("ActionsEnabled", self.actions_enabled())
            .with("StateValue", self.state.as_str())
            .with("StateReason", self.reason.as_str())
            .with_opt("StateReasonData", self.reason_data.as_deref())
            .with(
                "StateUpdatedTimestamp",
                Value::Timestamp(self.state_updated),
            )
            .with(
                "StateTransitionedTimestamp",
                Value::Timestamp(self.transitioned),
            )
            .with(
                "AlarmConfigurationUpdatedTimestamp",
                Value::Timestamp(self.updated),
            )
    }
}

/// A new alarm, before its first evaluation.
pub(super) fn new_alarm(ctx: &Context, name: &str, kind: &str, input: &Value, now: i64) -> Alarm {
    Alarm {
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        name: name.to_string(),
        kind: kind.to_string(),
        config: Value::map(),
        state: INSUFFICIENT.to_string(),
        reason: "Unchecked: Initial alarm creation".to_string(),
        reason_data: None,
        state_updated: now,
        transitioned: now,
        updated: now,
        tags: tags_of(input),
        next_eval: None,
    }
}

/// The name of an alarm a rule names by name or by ARN (of the caller's account and
/// region).
pub(super) fn child_name<'a>(ctx: &Context, reference: &'a str) -> &'a str {
    let prefix = alarm_arn(&ctx.account, &ctx.region, "");
    reference.strip_prefix(&prefix).unwrap_or(reference)
}

/// An alarm's ARN.
pub(super) fn alarm_arn(account: &str, region: &str, name: &str) -> String {
    format!("arn:aws:cloudwatch:{region}:{account}:alarm:{name}")
}

/// The `AlarmName` of a Put*Alarm, checked: 1 to 255 characters.
pub(super) fn check_alarm_name(input: &Value) -> AwsResult<&str> {
    let name = required_str(input, "AlarmName", "AlarmName")?;
    if name.is_empty() || name.chars().count() > 255 {
        return Err(invalid_value(format!(
            "The value {name} for parameter AlarmName is invalid."
        )));
    }
    Ok(name)
}

/// The tags of a Put*Alarm, checked: at most fifty.
pub(super) fn check_tags(input: &Value) -> AwsResult<()> {
    if tags_of(input).len() > MAX_TAGS {
        return Err(validation(format!(
            "The collection Tags must not have a size greater than {MAX_TAGS}."
        )));
    }
    Ok(())
}

/// A positive integer member, or InvalidParameterValue naming it.
fn positive(input: &Value, member: &str) -> AwsResult<Option<i64>> {
    match input.get(member).and_then(number) {
        None => Ok(None),
        Some(n) if n >= 1.0 && n.fract() == 0.0 => Ok(Some(n as i64)),
        Some(n) => Err(invalid_value(format!(
            "The value {n} for parameter {member} is invalid."
        ))),
    }
}

/// The actions of one state, checked: at most five, each an ARN.
pub(super) fn check_actions(input: &Value, member: &str) -> AwsResult<()> {
    let actions = list(input, member);
    if actions.len() > MAX_ACTIONS {
        return Err(validation(format!(
            "The collection {member} must not have a size greater than {MAX_ACTIONS}."
        )));
    }
    for action in actions.iter().filter_map(Value::as_str) {
        if action.split(':').count() < 6 || !action.starts_with("arn:") {
            return Err(validation(format!("Invalid arn syntax: {action}")));
        }
    }
    Ok(())
}

/// The single-metric members of a metric alarm, checked.
fn check_single_metric(input: &Value) -> AwsResult<()> {
    let namespace = required_str(input, "Namespace", "Namespace")?;
    check_namespace_for_alarm(namespace)?;
    required_str(input, "MetricName", "MetricName")?;
    let period = positive(input, "Period")?.ok_or_else(|| missing("Period"))?;
    if period != 10 && period != 30 && !(period >= 60 && period % 60 == 0) {
        return Err(validation(
            "Period must be 10, 30 or a multiple of 60".to_string(),
        ));
    }
    match (input.str("Statistic"), input.str("ExtendedStatistic")) {
        (Some(_), Some(_)) => {
            return Err(invalid_combination(
                "Exactly one of Statistic and ExtendedStatistic must be set.",
            ))
        }
        (None, None) => {
            return Err(missing("Statistic"));
        }
        (Some(s), None) if !STATISTICS.contains(&s) => {
            return Err(invalid_value(format!(
                "The value {s} for parameter Statistic is invalid."
            )))
        }
        (None, Some(e)) if percentile_of(e).is_none() => {
            return Err(invalid_value(format!(
                "The value {e} for parameter ExtendedStatistic is invalid."
            )))
        }
        _ => {}
    }
    parse_dimensions(list(input, "Dimensions"), "Dimensions")?;
    Ok(())
}

/// Alarms may watch AWS/ namespaces (unlike PutMetricData), but not empty ones.
fn check_namespace_for_alarm(namespace: &str) -> AwsResult<()> {
    if namespace.starts_with("AWS/") {
        return Ok(());
    }
    check_namespace(namespace)
}

/// The metric queries of a math alarm, checked as far as storing them needs.
fn check_metric_queries(input: &Value) -> AwsResult<()> {
    for member in [
        "MetricName",
        "Namespace",
        "Statistic",
        "ExtendedStatistic",
        "Period",
    ] {
        if input.get(member).is_some() {
            return Err(invalid_combination(format!(
                "Metrics and {member} cannot be specified together."
            )));
        }
    }
    let queries = list(input, "Metrics");
    let returning = queries
        .iter()
        .filter(|q| q.bool("ReturnData").unwrap_or(true))
        .count();
    if returning != 1 && input.str("ThresholdMetricId").is_none() {
        return Err(validation(
            "Exactly one element of the metrics list should return data.",
        ));
    }
    for (i, q) in queries.iter().enumerate() {
        let at = format!("Metrics.member.{}", i + 1);
        required_str(q, "Id", &format!("{at}.Id"))?;
        if q.get("MetricStat").is_some() == q.get("Expression").is_some() {
            return Err(validation(
                "Exactly one of MetricStat and Expression must be set.",
            ));
        }
    }
    parse_queries(queries, "Metrics").map(drop)
}

/// The PutMetricAlarm checks that do not depend on how the metric is given.
fn check_rule(input: &Value) -> AwsResult<()> {
    let evaluation_periods =
        positive(input, "EvaluationPeriods")?.ok_or_else(|| missing("EvaluationPeriods"))?;
    if let Some(m) = positive(input, "DatapointsToAlarm")? {
        if m > evaluation_periods {
            return Err(validation(
                "DatapointsToAlarm must be less than or equal to EvaluationPeriods",
            ));
        }
    }
    let op = required_str(input, "ComparisonOperator", "ComparisonOperator")?;
    let band = BAND_COMPARISONS.contains(&op);
    if !band && !is_threshold_comparison(op) {
        return Err(invalid_value(format!(
            "The value {op} for parameter ComparisonOperator is invalid."
        )));
    }
    match (
        band,
        input.get("Threshold").is_some(),
        input.str("ThresholdMetricId"),
    ) {
        (false, false, _) => return Err(missing("Threshold")),
        (true, _, None) => return Err(missing("ThresholdMetricId")),
        (false, _, Some(_)) => {
            return Err(invalid_combination(
                "ThresholdMetricId can only be used with anomaly detection comparison operators.",
            ))
        }
        _ => {}
    }
    if let Some(t) = input.str("TreatMissingData") {
        if !TREAT_MISSING.contains(&t) {
            return Err(validation(format!(
                "Option {t} is not supported. Supported options for parameter TreatMissingData are: missing, ignore, breaching, notBreaching."
            )));
        }
    }
    if let Some(p) = input.str("EvaluateLowSampleCountPercentile") {
        if !matches!(p, "evaluate" | "ignore") {
            return Err(validation(format!(
                "Option {p} is not supported. Supported options for parameter EvaluateLowSampleCountPercentile are: evaluate, ignore."
            )));
        }
    }
    Ok(())
}

/// The window one evaluation reads (EvaluationPeriods times Period) is at most a day for
/// periods under an hour, and a week otherwise.
fn check_window(input: &Value) -> AwsResult<()> {
    let n = positive(input, "EvaluationPeriods")?.unwrap_or(1);
    let period = alarm_period(input);
    let (limit, span) = if period < 3600 {
        (86_400, "a day")
    } else {
        (604_800, "7 days")
    };
    if n.saturating_mul(period) > limit {
        return Err(validation(format!(
            "Metrics cannot be checked across more than {span} (EvaluationPeriods * Period must be <= {limit})"
        )));
    }
    Ok(())
}

/// The period an alarm evaluates: its Period, or its returning query's.
pub(super) fn alarm_period(config: &Value) -> i64 {
    if let Some(p) = config.get("Period").and_then(number) {
        return p as i64;
    }
    list(config, "Metrics")
        .iter()
        .filter_map(|q| {
            q.get("Period")
                .or_else(|| q.get("MetricStat").and_then(|s| s.get("Period")))
                .and_then(number)
        })
        .map(|p| p as i64)
        .next()
        .unwrap_or(60)
}

/// Tags from a request's `[{Key, Value}]`.
fn tags_of(input: &Value) -> Vec<(String, String)> {
    list(input, "Tags")
        .iter()
        .filter_map(|t| Some((t.str("Key")?.to_string(), t.str("Value")?.to_string())))
        .collect()
}

fn tags_value(tags: &[(String, String)]) -> Value {
    Value::List(
        tags.iter()
            .map(|(k, v)| {
                Value::map()
                    .with("Key", k.as_str())
                    .with("Value", v.as_str())
            })
            .collect(),
    )
}

impl Inner {
    /// The alarm `name`, if it exists.
    pub(super) fn find_alarm(&self, ctx: &Context, name: &str) -> AwsResult<Option<Alarm>> {
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM cw_alarms WHERE account = ?1 AND region = ?2 AND name = ?3"
            ))?
            .query_row(params![ctx.account, ctx.region, name], Alarm::from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Every alarm of the caller's account and region, by name.
    pub(super) fn all_alarms(&self, ctx: &Context) -> AwsResult<Vec<Alarm>> {
        self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM cw_alarms WHERE account = ?1 AND region = ?2 ORDER BY name"
            ))?;
            let rows = stmt.query_map(params![ctx.account, ctx.region], Alarm::from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// Writes an alarm row whole.
    pub(super) fn save_alarm(&self, a: &Alarm) -> AwsResult<()> {
        let config = a.config.to_json().to_string();
        let tags = serde_json::to_string(&a.tags).unwrap_or_default();
        self.store()?.with(|c| {
            c.prepare_cached(&format!(
                "INSERT OR REPLACE INTO cw_alarms ({COLUMNS})
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"
            ))?
            .execute(params![
                a.account,
                a.region,
                a.name,
                a.kind,
                config,
                a.state,
                a.reason,
                a.reason_data,
                a.state_updated,
                a.transitioned,
                a.updated,
                tags,
                a.next_eval
            ])
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) fn put_metric_alarm(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = check_alarm_name(input)?;
        if input.get("Metrics").is_some() {
            check_metric_queries(input)?;
        } else {
            check_single_metric(input)?;
        }
        check_rule(input)?;
        check_window(input)?;
        for member in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
            check_actions(input, member)?;
        }
        check_tags(input)?;
        let mut config = input.clone();
        config.remove("Tags");
        if let Some(dims) = input.get("Dimensions").and_then(Value::as_list) {
            let sorted = parse_dimensions(dims, "Dimensions")?;
            config.insert("Dimensions", dimensions_value(&sorted));
        }
        let now = now_millis();
        let existing = self.find_alarm(ctx, name)?;
        let original = existing.as_ref().map(Alarm::describe);
        if existing.as_ref().is_some_and(|a| a.kind != METRIC_ALARM) {
            return Err(validation(format!(
                "The alarm {name} already exists and is not a metric alarm."
            )));
        }
        let mut alarm = existing.unwrap_or_else(|| new_alarm(ctx, name, METRIC_ALARM, input, now));
        alarm.config = config;
        alarm.updated = now;
        alarm.next_eval = Some(super::watch::next_tick(&alarm.config, now));
        self.save_alarm(&alarm)?;
        self.record_configuration(&alarm, original)?;
        self.clock.wake();
        Ok(Value::map())
    }

    pub(super) fn put_composite_alarm(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = check_alarm_name(input)?;
        let text = required_str(input, "AlarmRule", "AlarmRule")?;
        let rule =
            rule::parse(text).map_err(|e| validation(format!("Error in alarm rule: {e}.")))?;
        let mut absent = Vec::new();
        for child in rule.alarms() {
            let child_name = child_name(ctx, child);
            if child_name == name {
                return Err(validation(
                    "A composite alarm cannot reference itself in its alarm rule.",
                ));
            }
            if self.find_alarm(ctx, child_name)?.is_none() && !absent.contains(&child) {
                absent.push(child);
            }
        }
        if !absent.is_empty() {
            return Err(validation(format!(
                "Could not save the composite alarm as alarms [{}] in the alarm rule do not exist",
                absent.join(", ")
            )));
        }
        for member in ["OKActions", "AlarmActions", "InsufficientDataActions"] {
            check_actions(input, member)?;
        }
        let mut config = input.clone();
        config.remove("Tags");
        let now = now_millis();
        let existing = self.find_alarm(ctx, name)?;
        if existing.as_ref().is_some_and(|a| a.kind != COMPOSITE_ALARM) {
            return Err(validation(format!(
                "The alarm {name} already exists and is not a composite alarm."
            )));
        }
        let original = existing.as_ref().map(Alarm::describe);
        let mut alarm =
            existing.unwrap_or_else(|| new_alarm(ctx, name, COMPOSITE_ALARM, input, now));
        alarm.config = config;
        alarm.updated = now;
        self.save_alarm(&alarm)?;
        self.record_configuration(&alarm, original)?;
        self.evaluate_composite(alarm, None, now, 0)?;
        Ok(Value::map())
    }

    /// A ConfigurationUpdate history item: created, or updated from `original`.
    pub(super) fn record_configuration(
        &self,
        alarm: &Alarm,
        original: Option<Value>,
    ) -> AwsResult<()> {
        let updated = history_config(&alarm.describe());
        let (summary, data) = match original {
            None => (
                format!("Alarm \"{}\" created", alarm.name),
                json!({"version": "1.0", "type": "Create", "createdAlarm": updated}),
            ),
            Some(o) => (
                format!("Alarm \"{}\" updated", alarm.name),
                json!({"version": "1.0", "type": "Update", "originalAlarm": history_config(&o), "updatedAlarm": updated}),
            ),
        };
        self.record_history(
            alarm,
            alarm.updated,
            "ConfigurationUpdate",
            &summary,
            &data.to_string(),
        )
    }

    /// Appends an item to an alarm's history.
    pub(super) fn record_history(
        &self,
        alarm: &Alarm,
        at: i64,
        item_type: &str,
        summary: &str,
        data: &str,
    ) -> AwsResult<()> {
        self.store()?.with(|c| {
            c.prepare_cached(
                "INSERT INTO cw_history (account, region, alarm, kind, ts, item_type, summary, data)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
            )?
            .execute(params![
                alarm.account,
                alarm.region,
                alarm.name,
                alarm.kind,
                at,
                item_type,
                summary,
                data
            ])
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) fn describe_alarms(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let names: Vec<&str> = list(input, "AlarmNames")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if names.len() > 100 {
            return Err(validation(
                "The collection AlarmNames must not have a size greater than 100.",
            ));
        }
        let prefix = input.str("AlarmNamePrefix");
        if prefix.is_some() && !names.is_empty() {
            return Err(invalid_combination(
                "AlarmNamePrefix and AlarmNames cannot be specified together.",
            ));
        }
        let types = alarm_types(input)?;
        if let Some(s) = input.str("StateValue") {
            check_state(s, "StateValue")?;
        }
        let max = max_records(input, 50)?;
        let action_prefix = input.str("ActionPrefix");
        let related = self.related_alarms(ctx, input)?;
        let mut by_kind = [Vec::new(), Vec::new(), Vec::new()];
        for alarm in self.all_alarms(ctx)? {
            let wanted = (names.is_empty() || names.contains(&alarm.name.as_str()))
                && prefix.is_none_or(|p| alarm.name.starts_with(p))
                && input.str("StateValue").is_none_or(|s| alarm.state == s)
                && action_prefix.is_none_or(|p| has_action_with_prefix(&alarm, p))
                && related.as_ref().is_none_or(|r| r.contains(&alarm.name))
                && (related.is_some() || types.contains(&alarm.kind.as_str()));
            if !wanted {
                continue;
            }
            let at = [METRIC_ALARM, COMPOSITE_ALARM, LOG_ALARM]
                .iter()
                .position(|k| *k == alarm.kind)
                .unwrap_or(0);
            by_kind[at].push(alarm.describe());
        }
        let all: Vec<Value> = by_kind.into_iter().flatten().collect();
        let (shown, next) = page(all, max, input.str("NextToken"), || {
            AwsError::new("InvalidNextToken", "The service cannot find the NextToken.")
        })?;
        let mut lists = [Vec::new(), Vec::new(), Vec::new()];
        for alarm in shown {
            let at = match (
                alarm.get("AlarmRule"),
                alarm.get("ScheduledQueryConfiguration"),
            ) {
                (Some(_), _) => 1,
                (None, Some(_)) => 2,
                (None, None) => 0,
            };
            lists[at].push(alarm);
        }
        let [metric, composite, log] = lists;
        Ok(Value::map()
            .with("MetricAlarms", Value::List(metric))
            .with("CompositeAlarms", Value::List(composite))
            .with("LogAlarms", Value::List(log))
            .with_opt("NextToken", next))
    }

    /// The names ChildrenOfAlarmName or ParentsOfAlarmName select, if either is given.
    fn related_alarms(&self, ctx: &Context, input: &Value) -> AwsResult<Option<Vec<String>>> {
        let children = input.str("ChildrenOfAlarmName");
        let parents = input.str("ParentsOfAlarmName");
        if children.is_none() && parents.is_none() {
            return Ok(None);
        }
        let others = [
            "AlarmNames",
            "AlarmNamePrefix",
            "StateValue",
            "ActionPrefix",
            "AlarmTypes",
        ];
        if (children.is_some() && parents.is_some())
            || others.iter().any(|m| input.get(m).is_some())
        {
            return Err(invalid_combination(
                "If you are trying to retrieve children or parents of an alarm, you cannot specify any other parameter except MaxRecords and NextToken.",
            ));
        }
        if let Some(name) = children {
            let Some(alarm) = self.find_alarm(ctx, name)? else {
                return Ok(Some(Vec::new()));
            };
            let rule = alarm
                .config
                .str("AlarmRule")
                .and_then(|r| rule::parse(r).ok());
            return Ok(Some(rule.map_or_else(Vec::new, |r| {
                r.alarms()
                    .iter()
                    .map(|a| child_name(ctx, a).to_string())
                    .collect()
            })));
        }
        let name = parents.unwrap_or_default();
        Ok(Some(
            self.parents_of(ctx, name)?
                .into_iter()
                .map(|a| a.name)
                .collect(),
        ))
    }

    /// The composite alarms whose rules name `name`.
    pub(super) fn parents_of(&self, ctx: &Context, name: &str) -> AwsResult<Vec<Alarm>> {
        Ok(self
            .all_alarms(ctx)?
            .into_iter()
            .filter(|a| {
                a.kind == COMPOSITE_ALARM
                    && a.config
                        .str("AlarmRule")
                        .and_then(|r| rule::parse(r).ok())
                        .is_some_and(|r| r.alarms().iter().any(|c| child_name(ctx, c) == name))
            })
            .collect())
    }

    pub(super) fn describe_alarms_for_metric(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let namespace = required_str(input, "Namespace", "Namespace")?;
        let name = required_str(input, "MetricName", "MetricName")?;
        let dims = parse_dimensions(list(input, "Dimensions"), "Dimensions")?;
        let same = |alarm: &Alarm, member: &str| {
            input
                .get(member)
                .is_none_or(|v| alarm.config.get(member) == Some(v))
        };
        let period = input.get("Period").and_then(number);
        let alarms = self
            .all_alarms(ctx)?
            .into_iter()
            .filter(|a| {
                a.config.str("Namespace") == Some(namespace)
                    && a.config.str("MetricName") == Some(name)
                    && (dims.is_empty()
                        || parse_dimensions(list(&a.config, "Dimensions"), "Dimensions")
                            .ok()
                            .as_ref()
                            == Some(&dims))
                    && same(a, "Statistic")
                    && same(a, "ExtendedStatistic")
                    && same(a, "Unit")
                    && period.is_none_or(|p| a.config.get("Period").and_then(number) == Some(p))
            })
            .map(|a| a.describe())
            .collect();
        Ok(Value::map().with("MetricAlarms", Value::List(alarms)))
    }

    /// DeleteAlarms deletes nothing while a composite alarm it does not also delete names
    /// one of the alarms: `Cannot delete a,b as there are composite alarm(s) depending on
    /// them.`
    fn check_no_parents(&self, ctx: &Context, names: &[String]) -> AwsResult<()> {
        let mut held = Vec::new();
        for name in names {
            let parents = self.parents_of(ctx, name)?;
            if parents.iter().any(|p| !names.contains(&p.name)) && !held.contains(&name) {
                held.push(name);
            }
        }
        match held.as_slice() {
            [] => Ok(()),
            [one] => Err(validation(format!(
                "Cannot delete {one} as there are composite alarm(s) depending on it."
            ))),
            many => Err(validation(format!(
                "Cannot delete {} as there are composite alarm(s) depending on them.",
                many.iter()
                    .map(|n| n.as_str())
                    .collect::<Vec<_>>()
                    .join(",")
            ))),
        }
    }

    pub(super) fn delete_alarms(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let names: Vec<String> = list(input, "AlarmNames")
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect();
        if names.len() > 100 {
            return Err(validation(
                "The collection AlarmNames must not have a size greater than 100.",
            ));
        }
        self.check_no_parents(ctx, &names)?;
        self.store()?.with(|c| {
            for name in &names {
                c.prepare_cached(
                    "DELETE FROM cw_alarms WHERE account = ?1 AND region = ?2 AND name = ?3",
                )?
                .execute(params![ctx.account, ctx.region, name])?;
            }
            Ok::<_, AwsError>(())
        })?;
        self.clock.wake();
        Ok(Value::map())
    }

    pub(super) fn set_actions_enabled(
        &self,
        ctx: &Context,
        input: &Value,
        enabled: bool,
    ) -> AwsResult<Value> {
        for name in list(input, "AlarmNames").iter().filter_map(Value::as_str) {
            if let Some(mut alarm) = self.find_alarm(ctx, name)? {
                alarm.config.insert("ActionsEnabled", enabled);
                self.save_alarm(&alarm)?;
            }
        }
        Ok(Value::map())
    }

    pub(super) fn set_alarm_state(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "AlarmName", "AlarmName")?;
        let state = required_str(input, "StateValue", "StateValue")?;
        let reason = required_str(input, "StateReason", "StateReason")?;
        check_state(state, "StateValue")?;
        let data = input.str("StateReasonData");
        if let Some(d) = data {
            if serde_json::from_str::<serde_json::Value>(d).is_err() {
                return Err(AwsError::new(
                    "InvalidFormatFault",
                    "StateReasonData is not valid JSON.",
                ));
            }
        }
        let alarm = self
            .find_alarm(ctx, name)?
            .ok_or_else(|| AwsError::new("ResourceNotFound", format!("Alarm {name} not found")))?;
        self.change_state(alarm, state, reason, data.map(str::to_string), now_millis())?;
        Ok(Value::map())
    }

    pub(super) fn describe_alarm_history(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let types = alarm_types(input)?;
        let item_type = input.str("HistoryItemType");
        if let Some(t) = item_type {
            if !matches!(t, "ConfigurationUpdate" | "StateUpdate" | "Action") {
                return Err(invalid_value(format!(
                    "The value {t} for parameter HistoryItemType is invalid."
                )));
            }
        }
        let ascending = scan_ascending(input)?;
        let max = max_records(input, 100)?;
        let start = match input.get("StartDate") {
            Some(Value::Timestamp(t)) => *t,
            _ => i64::MIN,
        };
        let end = match input.get("EndDate") {
            Some(Value::Timestamp(t)) => *t,
            _ => i64::MAX,
        };
        let items: Vec<Value> = self.store()?.read(|c| {
            let order = if ascending { "ASC" } else { "DESC" };
            let mut stmt = c.prepare_cached(&format!(
                "SELECT alarm, kind, ts, item_type, summary, data FROM cw_history
                 WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR alarm = ?3)
                   AND (?4 IS NULL OR item_type = ?4) AND ts >= ?5 AND ts <= ?6
                 ORDER BY ts {order}, id {order}"
            ))?;
            let rows = stmt.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    input.str("AlarmName"),
                    item_type,
                    start,
                    end
                ],
                |r| {
                    Ok(Value::map()
                        .with("AlarmName", r.get::<_, String>(0)?)
                        .with("AlarmType", r.get::<_, String>(1)?)
                        .with("Timestamp", Value::Timestamp(r.get(2)?))
                        .with("HistoryItemType", r.get::<_, String>(3)?)
                        .with("HistorySummary", r.get::<_, String>(4)?)
                        .with("HistoryData", r.get::<_, String>(5)?))
                },
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let items: Vec<Value> = items
            .into_iter()
            .filter(|i| i.str("AlarmType").is_some_and(|k| types.contains(&k)))
            .collect();
        let (shown, next) = page(items, max, input.str("NextToken"), || {
            AwsError::new("InvalidNextToken", "The service cannot find the NextToken.")
        })?;
        Ok(Value::map()
            .with("AlarmHistoryItems", Value::List(shown))
            .with_opt("NextToken", next))
    }

    /// The alarm a tagging call's `ResourceARN` names.
    fn tagged_alarm(&self, ctx: &Context, input: &Value) -> AwsResult<Alarm> {
        let arn = required_str(input, "ResourceARN", "ResourceARN")?;
        let prefix = format!("arn:aws:cloudwatch:{}:{}:alarm:", ctx.region, ctx.account);
        let Some(name) = arn.strip_prefix(&prefix) else {
            return Err(invalid_value(format!("Invalid ARN: {arn}")));
        };
        self.find_alarm(ctx, name)?.ok_or_else(|| {
            AwsError::new(
                "ResourceNotFoundException",
                format!("Alarm {name} does not exist."),
            )
        })
    }

    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut alarm = self.tagged_alarm(ctx, input)?;
        for (k, v) in tags_of(input) {
            match alarm.tags.iter_mut().find(|(key, _)| *key == k) {
                Some(t) => t.1 = v,
                None => alarm.tags.push((k, v)),
            }
        }
        if alarm.tags.len() > MAX_TAGS {
            return Err(AwsError::new(
                "LimitExceededException",
                format!("The resource can have at most {MAX_TAGS} tags."),
            ));
        }
        self.save_alarm(&alarm)?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut alarm = self.tagged_alarm(ctx, input)?;
        let keys: Vec<&str> = list(input, "TagKeys")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        alarm.tags.retain(|(k, _)| !keys.contains(&k.as_str()));
        self.save_alarm(&alarm)?;
        Ok(Value::map())
    }

    pub(super) fn list_tags(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let alarm = self.tagged_alarm(ctx, input)?;
        Ok(Value::map().with("Tags", tags_value(&alarm.tags)))
    }
}

/// The alarm types a call asks for (metric alarms when it names none).
fn alarm_types(input: &Value) -> AwsResult<Vec<&str>> {
    let types: Vec<&str> = list(input, "AlarmTypes")
        .iter()
        .filter_map(Value::as_str)
        .collect();
    for t in &types {
        if ![METRIC_ALARM, COMPOSITE_ALARM, LOG_ALARM].contains(t) {
            return Err(invalid_value(format!(
                "The value {t} for parameter AlarmTypes is invalid."
            )));
        }
    }
    if types.is_empty() {
        return Ok(vec![METRIC_ALARM]);
    }
    Ok(types)
}

fn check_state(state: &str, member: &str) -> AwsResult<()> {
    if STATES.contains(&state) {
        return Ok(());
    }
    Err(invalid_value(format!(
        "The value {state} for parameter {member} is invalid."
    )))
}

/// MaxRecords, 1 to 100.
fn max_records(input: &Value, default: usize) -> AwsResult<usize> {
    match input.get("MaxRecords").and_then(number) {
        None => Ok(default),
        Some(n) if (1.0..=100.0).contains(&n) => Ok(n as usize),
        Some(n) => Err(invalid_value(format!(
            "The value {n} for parameter MaxRecords is invalid."
        ))),
    }
}

fn has_action_with_prefix(alarm: &Alarm, prefix: &str) -> bool {
    ["OKActions", "AlarmActions", "InsufficientDataActions"]
        .iter()
        .flat_map(|m| list(&alarm.config, m))
        .filter_map(Value::as_str)
        .any(|a| a.starts_with(prefix))
}

/// An alarm as history data shows it: its description in JSON, lower camel case as AWS
/// writes it there.
fn history_config(described: &Value) -> serde_json::Value {
    fn lower(v: serde_json::Value) -> serde_json::Value {
        match v {
            serde_json::Value::Object(o) => o
                .into_iter()
                .map(|(k, v)| {
                    let mut chars = k.chars();
                    let key = match chars.next() {
                        Some(c) => c.to_ascii_lowercase().to_string() + chars.as_str(),
                        None => k,
                    };
                    (key, lower(v))
                })
                .collect(),
            serde_json::Value::Array(a) => a.into_iter().map(lower).collect(),
            other => other,
        }
    }
    let mut config = described.clone();
    for member in [
        "StateValue",
        "StateReason",
        "StateReasonData",
        "StateUpdatedTimestamp",
        "StateTransitionedTimestamp",
        "AlarmConfigurationUpdatedTimestamp",
    ] {
        config.remove(member);
    }
    lower(config.to_json())
}
