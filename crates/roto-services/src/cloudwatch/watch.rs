//! The evaluation task, state changes, and alarm actions.
//!
//! One task per server evaluates alarms: it reads the earliest `next_eval`, sleeps on the
//! server clock until then (waking early when the clock is advanced or an alarm changes),
//! and evaluates every alarm whose time has come, one tick at a time, so an advance of the
//! clock evaluates each tick it crosses in order (ticks more than a day old are skipped, as
//! an outage of the evaluator would skip them). An alarm ticks every minute, or every
//! Period for periods under a minute; each evaluation reads the EvaluationPeriods periods
//! that end at the tick.
//!
//! A change of state updates the alarm, adds a StateUpdate item to its history, sends a
//! "CloudWatch Alarm State Change" event to the default event bus, and, while the alarm's
//! actions are enabled, runs the new state's actions: an SNS topic gets AWS's alarm
//! notification message (subject `ALARM: "name" in <region name>`), a Lambda function is
//! invoked asynchronously with AWS's alarm event. Each action is an event on the bus for
//! `cloudwatch`, delivered through the dispatcher and recorded in the history as an
//! `Action` item.

use std::sync::Arc;

use roto_core::dispatch::new_request_id;
use roto_core::events::{DeliveryError, Event};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};

use crate::clock_task::stored_table;

use super::alarms::{alarm_period, child_name, Alarm, COLUMNS, METRIC_ALARM};
use super::evaluate::{self, reason_timestamp, Point, Rule, Verdict, ALARM, OK};
use super::metrics::{parse_dimensions, MetricKey};
use super::rule;
use super::stats::percentile_of;
use super::{list, number, Inner};

/// The kind of an alarm action on the bus, as the trace shows it.
const ACTION: &str = "cloudwatch:AlarmAction";
/// How many composite alarms up one change of state is followed (rules cannot form
/// cycles through names that exist, but a chain is bounded all the same).
const MAX_COMPOSITE_DEPTH: usize = 16;
/// How far back a late evaluation still runs.
const MAX_LATE_MS: i64 = 24 * 3_600_000;

/// Starts the evaluation task (once), if a runtime is running.
pub(super) fn start(inner: &Arc<Inner>) {
    inner.clock.start(inner, "cloudwatch", Inner::evaluate_due);
}

/// At start-up on a persistent store that holds alarms: starts the task. Nothing in
/// memory, nor on a store that never held an alarm.
pub(super) fn resume(inner: &Arc<Inner>) -> AwsResult<()> {
    if stored_table(&inner.env, "cw_alarms")? && inner.next_due()?.is_some() {
        start(inner);
    }
    Ok(())
}

/// How often an alarm is evaluated: every Period under a minute, else every minute.
fn tick_ms(config: &Value) -> i64 {
    alarm_period(config).clamp(1, 60) * 1000
}

/// The first tick after `now`.
pub(super) fn next_tick(config: &Value, now: i64) -> i64 {
    let tick = tick_ms(config);
    (now.div_euclid(tick) + 1) * tick
}

impl Inner {
    /// The earliest `next_eval` of any alarm.
    fn next_due(&self) -> AwsResult<Option<i64>> {
        Ok(self.store()?.read(|c| {
            c.query_row_cached("SELECT MIN(next_eval) FROM cw_alarms", [], |r| r.get(0))
        })?)
    }

    /// The alarm due first, if it is due at `now`.
    fn first_due(&self, now: i64) -> AwsResult<Option<Alarm>> {
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM cw_alarms WHERE next_eval <= ?1
                 ORDER BY next_eval, account, region, name LIMIT 1"
            ))?
            .query_row([now], Alarm::from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Evaluates every tick due at `now`, in order; returns the next `next_eval`.
    fn evaluate_due(&self, now: i64) -> AwsResult<Option<i64>> {
        self.absorb()?;
        while let Some(mut alarm) = self.first_due(now)? {
            let late = next_tick(&alarm.config, now - MAX_LATE_MS);
            let tick = alarm.next_eval.unwrap_or(now).max(late);
            alarm.next_eval = Some(tick + tick_ms(&alarm.config));
            self.store()?.with(|c| {
                c.execute_cached(
                    "UPDATE cw_alarms SET next_eval = ?4
                     WHERE account = ?1 AND region = ?2 AND name = ?3",
                    params![alarm.account, alarm.region, alarm.name, alarm.next_eval],
                )
            })?;
            if let Some(verdict) = self.evaluate_alarm(&alarm, tick)? {
                if verdict.state != alarm.state {
                    self.change_state(
                        alarm,
                        verdict.state,
                        &verdict.reason,
                        Some(verdict.data),
                        tick,
                    )?;
                }
            }
        }
        self.next_due()
    }

    /// One evaluation of a metric alarm at `tick`; None when it cannot be evaluated (an
    /// anomaly band, queries that give no single series, or `ignore` with no data) and
    /// keeps its state.
    fn evaluate_alarm(&self, alarm: &Alarm, tick: i64) -> AwsResult<Option<Verdict>> {
        let c = &alarm.config;
        let n = c.int("EvaluationPeriods").unwrap_or(1).max(1) as usize;
        let period = alarm_period(c);
        let start = tick - n as i64 * period * 1000;
        let ctx = context_of(alarm);
        let starts = (0..n).map(|i| start + i as i64 * period * 1000);
        let watched = Watched::of(c);
        let points: Vec<Point> = match &watched {
            Some(w) => {
                let percentile = percentile_of(w.stat.1).is_some();
                let series =
                    self.series(&ctx, &w.key, (start, tick), period, w.unit, percentile)?;
                starts
                    .map(|at| {
                        let agg = series.iter().find(|((ts, _), _)| *ts == at).map(|(_, a)| a);
                        Point {
                            start: at,
                            value: agg.and_then(|a| a.statistic(w.stat.1).map(|v| (v, a.count))),
                        }
                    })
                    .collect()
            }
            None => {
                let Some(values) = self.alarm_values(&ctx, c, (start, tick))? else {
                    return Ok(None);
                };
                starts
                    .map(|at| Point {
                        start: at,
                        value: values.get(&at).map(|v| (*v, 1.0)),
                    })
                    .collect()
            }
        };
        let rule = Rule {
            comparison: c.str("ComparisonOperator").unwrap_or_default(),
            threshold: c.get("Threshold").and_then(number).unwrap_or(0.0),
            evaluation_periods: n,
            datapoints_to_alarm: c.int("DatapointsToAlarm").map(|m| m.max(1) as usize),
            treat_missing: c.str("TreatMissingData").unwrap_or("missing"),
            statistic: watched.as_ref().map(|w| w.stat),
            period,
            unit: watched.as_ref().and_then(|w| w.unit),
        };
        if !evaluate::is_threshold_comparison(rule.comparison) {
            return Ok(None);
        }
        Ok(evaluate::evaluate(&rule, &points, tick))
    }

    /// Moves an alarm to `state` at `at`: the row, its history, the state change event
    /// and, when the state is new, its actions (while enabled) and the evaluation of the
    /// composite alarms that name it.
    pub(super) fn change_state(
        &self,
        alarm: Alarm,
        state: &str,
        reason: &str,
        data: Option<String>,
        at: i64,
    ) -> AwsResult<()> {
        self.change_state_at(alarm, (state, reason, data), at, 0)
    }

    /// [`Inner::change_state`] `depth` composite alarms up from the alarm that changed.
    fn change_state_at(
        &self,
        mut alarm: Alarm,
        (state, reason, data): (&str, &str, Option<String>),
        at: i64,
        depth: usize,
    ) -> AwsResult<()> {
        let old = alarm.clone();
        let changed = alarm.state != state;
        alarm.state = state.to_string();
        alarm.reason = reason.to_string();
        alarm.reason_data = data;
        alarm.state_updated = at;
        if changed {
            alarm.transitioned = at;
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE cw_alarms SET state = ?4, reason = ?5, reason_data = ?6,
                     state_updated = ?7, transitioned = ?8
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                params![
                    alarm.account,
                    alarm.region,
                    alarm.name,
                    alarm.state,
                    alarm.reason,
                    alarm.reason_data,
                    alarm.state_updated,
                    alarm.transitioned
                ],
            )
        })?;
        if !changed {
            return Ok(());
        }
        let history = json!({
            "version": "1.0",
            "oldState": state_json(&old),
            "newState": state_json(&alarm),
        });
        self.record_history(
            &alarm,
            at,
            "StateUpdate",
            &format!("Alarm updated from {} to {}", old.state, alarm.state),
            &history.to_string(),
        )?;
        self.announce(&old, &alarm);
        if alarm.actions_enabled() {
            self.publish_actions(&old, &alarm);
        }
        if depth < MAX_COMPOSITE_DEPTH {
            for parent in self.parents_of(&context_of(&alarm), &alarm.name)? {
                self.evaluate_composite(parent, Some(&alarm), at, depth + 1)?;
            }
        }
        Ok(())
    }

    /// Evaluates a composite alarm's rule at `at` (after `trigger` changed state, or on
    /// its creation or update), moving it to ALARM when the rule holds and OK otherwise.
    pub(super) fn evaluate_composite(
        &self,
        alarm: Alarm,
        trigger: Option<&Alarm>,
        at: i64,
        depth: usize,
    ) -> AwsResult<()> {
        let Some(rule) = alarm
            .config
            .str("AlarmRule")
            .and_then(|r| rule::parse(r).ok())
        else {
            return Ok(());
        };
        let ctx = context_of(&alarm);
        let children: Vec<Alarm> = rule
            .alarms()
            .iter()
            .filter_map(|c| self.find_alarm(&ctx, child_name(&ctx, c)).ok().flatten())
            .collect();
        let state_of = |reference: &str| {
            let name = child_name(&ctx, reference);
            children
                .iter()
                .find(|c| c.name == name)
                .map(|c| c.state.clone())
        };
        let state = if rule.holds(&state_of) { ALARM } else { OK };
        if state == alarm.state {
            return Ok(());
        }
        let triggering: Vec<&Alarm> = match trigger {
            Some(t) => vec![t],
            None => children.iter().collect(),
        };
        let reason = match triggering.first() {
            Some(t) => format!(
                "{} transitioned to {} at {}",
                t.arn(),
                t.state,
                long_date(t.state_updated)
            ),
            None => format!(
                "The alarm rule evaluated to {}",
                if state == ALARM { "TRUE" } else { "FALSE" }
            ),
        };
        let data = json!({"triggeringAlarms": triggering.iter().map(|t| json!({
            "arn": t.arn(),
            "state": {"value": t.state, "timestamp": reason_timestamp(t.state_updated)},
        })).collect::<Vec<_>>()});
        self.change_state_at(alarm, (state, &reason, Some(data.to_string())), at, depth)
    }

    /// Sends the state change to the account's default event bus.
    fn announce(&self, old: &Alarm, new: &Alarm) {
        let detail = json!({
            "alarmName": new.name,
            "state": state_event_json(new),
            "previousState": state_event_json(old),
            "configuration": configuration_json(new),
        });
        crate::default_bus::publish(
            &self.env,
            crate::default_bus::BusEvent {
                service: "cloudwatch",
                kind: format!("cloudwatch:{}", new.state),
                resource: new.arn(),
                source: "aws.cloudwatch",
                detail_type: "CloudWatch Alarm State Change",
                detail,
                account: &new.account,
                region: &new.region,
            },
        );
    }

    /// Publishes the new state's actions as events for `cloudwatch` itself.
    fn publish_actions(&self, old: &Alarm, new: &Alarm) {
        let member = match new.state.as_str() {
            "ALARM" => "AlarmActions",
            "OK" => "OKActions",
            _ => "InsufficientDataActions",
        };
        for action in list(&new.config, member).iter().filter_map(Value::as_str) {
            let Some(call) = action_call(action, old, new) else {
                continue;
            };
            let parts: Vec<&str> = action.splitn(6, ':').collect();
            let [_, _, _, region, account, _] = parts[..] else {
                continue;
            };
            self.env.bus.publish(Event {
                kind: ACTION.into(),
                source_service: "cloudwatch".into(),
                source: new.arn(),
                target_service: "cloudwatch".into(),
                target: action.to_string(),
                account: account.to_string(),
                region: region.to_string(),
                payload: call
                    .with("AlarmAccount", new.account.as_str())
                    .with("AlarmRegion", new.region.as_str())
                    .with("AlarmName", new.name.as_str())
                    .with("AlarmKind", new.kind.as_str()),
                max_attempts: 3,
            });
        }
    }

    /// Runs one alarm action (an event [`Inner::publish_actions`] published) through the
    /// dispatcher, and records it in the alarm's history.
    pub(super) async fn act(&self, event: &Event) -> Result<(), DeliveryError> {
        let p = &event.payload;
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| DeliveryError::from("the dispatcher is not running".to_string()))?;
        let ctx = Context {
            account: event.account.clone(),
            region: event.region.clone(),
            access_key: None,
            request_id: new_request_id(),
            host: String::new(),
        };
        let result = dispatcher
            .call(
                &ctx,
                p.str("Service").unwrap_or_default(),
                p.str("Operation").unwrap_or_default(),
                p.get("Input").cloned().unwrap_or_else(Value::map),
            )
            .await;
        let (summary, error) = match &result {
            Ok(_) => (
                format!("Successfully executed action {}", event.target),
                None,
            ),
            Err(e) => (
                format!("Failed to execute action {}", event.target),
                Some(format!("{}: {}", e.code, e.message)),
            ),
        };
        let alarm = Alarm {
            account: p.str("AlarmAccount").unwrap_or_default().to_string(),
            region: p.str("AlarmRegion").unwrap_or_default().to_string(),
            name: p.str("AlarmName").unwrap_or_default().to_string(),
            kind: p.str("AlarmKind").unwrap_or(METRIC_ALARM).to_string(),
            config: Value::map(),
            state: String::new(),
            reason: String::new(),
            reason_data: None,
            state_updated: 0,
            transitioned: 0,
            updated: 0,
            tags: Vec::new(),
            next_eval: None,
        };
        let data = json!({"actionState": if error.is_some() {"Failed"} else {"Succeeded"},
                          "notificationResource": event.target, "error": error});
        let _ = self.record_history(&alarm, now_millis(), "Action", &summary, &data.to_string());
        match result {
            Ok(_) => Ok(()),
            Err(e) => Err(DeliveryError {
                message: format!("{}: {}", e.code, e.message),
                retryable: !e.sender_fault,
            }),
        }
    }
}

/// The context of calls made for an alarm: its account and region.
fn context_of(alarm: &Alarm) -> Context {
    Context {
        account: alarm.account.clone(),
        region: alarm.region.clone(),
        access_key: None,
        request_id: String::new(),
        host: String::new(),
    }
}

/// `Friday 04 December, 2026 14:30:00 UTC`, as composite alarm reasons give times.
fn long_date(millis: i64) -> String {
    jiff::Timestamp::from_millisecond(millis)
        .map(|t| t.strftime("%A %d %B, %Y %H:%M:%S UTC").to_string())
        .unwrap_or_default()
}

/// What a metric alarm watches: its metric, statistic and unit (from its own members, or
/// from a Metrics list of one MetricStat).
struct Watched<'a> {
    key: MetricKey,
    stat: (&'static str, &'a str),
    unit: Option<&'a str>,
}

impl<'a> Watched<'a> {
    fn of(config: &'a Value) -> Option<Watched<'a>> {
        let (metric, stat, unit) = match config.get("Metrics").and_then(Value::as_list) {
            Some([query]) => {
                let ms = query.get("MetricStat")?;
                let stat = ms.str("Stat")?;
                let kind = if stat.starts_with('p') {
                    "extendedStatistic"
                } else {
                    "statistic"
                };
                (ms.get("Metric")?, (kind, stat), ms.str("Unit"))
            }
            Some(_) => return None,
            None => {
                let stat = match (config.str("Statistic"), config.str("ExtendedStatistic")) {
                    (Some(s), _) => ("statistic", s),
                    (None, Some(e)) => ("extendedStatistic", e),
                    _ => return None,
                };
                (config, stat, config.str("Unit"))
            }
        };
        Some(Watched {
            key: MetricKey {
                namespace: metric.str("Namespace")?.to_string(),
                name: metric.str("MetricName")?.to_string(),
                dims: parse_dimensions(list(metric, "Dimensions"), "Dimensions").ok()?,
            },
            stat,
            unit,
        })
    }
}

/// A state as history data writes it.
fn state_json(a: &Alarm) -> Json {
    let mut out = json!({"stateValue": a.state, "stateReason": a.reason});
    if let Some(data) = a
        .reason_data
        .as_deref()
        .and_then(|d| serde_json::from_str::<Json>(d).ok())
    {
        out["stateReasonData"] = data;
    }
    out
}

/// A state as the state change event and the Lambda alarm event write it.
fn state_event_json(a: &Alarm) -> Json {
    let mut out = json!({
        "value": a.state,
        "reason": a.reason,
        "timestamp": reason_timestamp(a.state_updated),
    });
    if let Some(data) = &a.reason_data {
        out["reasonData"] = json!(data);
    }
    out
}

/// An alarm's configuration as alarm events write it: its metrics as metric queries.
fn configuration_json(a: &Alarm) -> Json {
    let c = &a.config;
    let metrics: Vec<Json> = match c.get("Metrics").and_then(Value::as_list) {
        Some(queries) => queries.iter().map(query_json).collect(),
        None => {
            let dims: serde_json::Map<String, Json> = list(c, "Dimensions")
                .iter()
                .filter_map(|d| Some((d.str("Name")?.to_string(), json!(d.str("Value")?))))
                .collect();
            let mut stat = json!({
                "metric": {"namespace": c.str("Namespace"), "name": c.str("MetricName"), "dimensions": dims},
                "period": c.int("Period"),
                "stat": c.str("Statistic").or(c.str("ExtendedStatistic")),
            });
            if let Some(unit) = c.str("Unit") {
                stat["unit"] = json!(unit);
            }
            vec![json!({"id": new_request_id(), "metricStat": stat, "returnData": true})]
        }
    };
    let mut out = json!({"metrics": metrics});
    if let Some(d) = c.str("AlarmDescription") {
        out["description"] = json!(d);
    }
    if let Some(rule) = c.str("AlarmRule") {
        out["alarmRule"] = json!(rule);
    }
    out
}

fn query_json(q: &Value) -> Json {
    let mut out = json!({"id": q.str("Id"), "returnData": q.bool("ReturnData").unwrap_or(true)});
    if let Some(e) = q.str("Expression") {
        out["expression"] = json!(e);
    }
    if let Some(l) = q.str("Label") {
        out["label"] = json!(l);
    }
    if let Some(ms) = q.get("MetricStat") {
        let m = ms.get("Metric").cloned().unwrap_or_else(Value::map);
        let dims: serde_json::Map<String, Json> = list(&m, "Dimensions")
            .iter()
            .filter_map(|d| Some((d.str("Name")?.to_string(), json!(d.str("Value")?))))
            .collect();
        out["metricStat"] = json!({
            "metric": {"namespace": m.str("Namespace"), "name": m.str("MetricName"), "dimensions": dims},
            "period": ms.int("Period"),
            "stat": ms.str("Stat"),
        });
    }
    out
}

/// The call one action makes: SNS Publish of the alarm notification, or an asynchronous
/// Lambda Invoke with the alarm event; None for an action Roto does not run.
fn action_call(action: &str, old: &Alarm, new: &Alarm) -> Option<Value> {
    let parts: Vec<&str> = action.splitn(6, ':').collect();
    match parts.get(2).copied()? {
        "sns" => Some(
            Value::map()
                .with("Service", "sns")
                .with("Operation", "Publish")
                .with(
                    "Input",
                    Value::map()
                        .with("TopicArn", action)
                        .with(
                            "Subject",
                            subject(&format!(
                                "{}: \"{}\" in {}",
                                new.state,
                                new.name,
                                region_name(&new.region)
                            )),
                        )
                        .with("Message", notification(old, new).to_string()),
                ),
        ),
        "lambda" => Some(
            Value::map()
                .with("Service", "lambda")
                .with("Operation", "Invoke")
                .with(
                    "Input",
                    Value::map()
                        .with("FunctionName", action)
                        .with("InvocationType", "Event")
                        .with(
                            "Payload",
                            Value::Blob(lambda_event(old, new).to_string().into_bytes()),
                        ),
                ),
        ),
        _ => None,
    }
}

/// SNS subjects are at most 100 characters.
fn subject(text: &str) -> String {
    text.chars().take(100).collect()
}

/// The JSON message an SNS alarm action publishes, as AWS writes it.
fn notification(old: &Alarm, new: &Alarm) -> Json {
    let c = &new.config;
    let actions = |m: &str| -> Vec<Json> {
        list(c, m)
            .iter()
            .filter_map(Value::as_str)
            .map(|s| json!(s))
            .collect()
    };
    let mut out = json!({
        "AlarmName": new.name,
        "AlarmDescription": c.str("AlarmDescription"),
        "AWSAccountId": new.account,
        "AlarmConfigurationUpdatedTimestamp": reason_timestamp(new.updated),
        "NewStateValue": new.state,
        "NewStateReason": new.reason,
        "StateChangeTime": reason_timestamp(new.state_updated),
        "Region": region_name(&new.region),
        "AlarmArn": new.arn(),
        "OldStateValue": old.state,
        "OKActions": actions("OKActions"),
        "AlarmActions": actions("AlarmActions"),
        "InsufficientDataActions": actions("InsufficientDataActions"),
    });
    if let Some(rule) = c.str("AlarmRule") {
        out["AlarmRule"] = json!(rule);
        return out;
    }
    out["Trigger"] = trigger(c);
    out
}

/// The `Trigger` of a metric alarm's notification.
fn trigger(c: &Value) -> Json {
    let mut t = json!({
        "Period": alarm_period(c),
        "EvaluationPeriods": c.int("EvaluationPeriods"),
        "ComparisonOperator": c.str("ComparisonOperator"),
        "Threshold": c.get("Threshold").and_then(number),
        "TreatMissingData": c.str("TreatMissingData").unwrap_or("missing"),
        "EvaluateLowSampleCountPercentile": c.str("EvaluateLowSampleCountPercentile").unwrap_or(""),
    });
    if let Some(m) = c.int("DatapointsToAlarm") {
        t["DatapointsToAlarm"] = json!(m);
    }
    if let Some(queries) = c.get("Metrics").and_then(Value::as_list) {
        t["Metrics"] = Json::Array(queries.iter().map(query_json).collect());
        return t;
    }
    let dims: Vec<Json> = list(c, "Dimensions")
        .iter()
        .map(|d| json!({"value": d.str("Value"), "name": d.str("Name")}))
        .collect();
    t["MetricName"] = json!(c.str("MetricName"));
    t["Namespace"] = json!(c.str("Namespace"));
    match c.str("Statistic") {
        Some(s) => {
            t["StatisticType"] = json!("Statistic");
            t["Statistic"] = json!(s.to_ascii_uppercase());
        }
        None => {
            t["StatisticType"] = json!("ExtendedStatistic");
            t["ExtendedStatistic"] = json!(c.str("ExtendedStatistic"));
        }
    }
    t["Unit"] = json!(c.str("Unit"));
    t["Dimensions"] = Json::Array(dims);
    t
}

/// The event a Lambda alarm action receives, as AWS writes it.
fn lambda_event(old: &Alarm, new: &Alarm) -> Json {
    json!({
        "source": "aws.cloudwatch",
        "alarmArn": new.arn(),
        "accountId": new.account,
        "time": reason_timestamp(new.state_updated),
        "region": new.region,
        "alarmData": {
            "alarmName": new.name,
            "state": state_event_json(new),
            "previousState": state_event_json(old),
            "configuration": configuration_json(new),
        },
    })
}

/// A region's name as alarm notifications give it.
fn region_name(region: &str) -> String {
    const NAMES: &[(&str, &str)] = &[
        ("us-east-1", "US East (N. Virginia)"),
        ("us-east-2", "US East (Ohio)"),
        ("us-west-1", "US West (N. California)"),
        ("us-west-2", "US West (Oregon)"),
        ("af-south-1", "Africa (Cape Town)"),
        ("ap-east-1", "Asia Pacific (Hong Kong)"),
        ("ap-south-1", "Asia Pacific (Mumbai)"),
        ("ap-northeast-1", "Asia Pacific (Tokyo)"),
        ("ap-northeast-2", "Asia Pacific (Seoul)"),
        ("ap-northeast-3", "Asia Pacific (Osaka)"),
        ("ap-southeast-1", "Asia Pacific (Singapore)"),
        ("ap-southeast-2", "Asia Pacific (Sydney)"),
        ("ca-central-1", "Canada (Central)"),
        ("eu-central-1", "EU (Frankfurt)"),
        ("eu-west-1", "EU (Ireland)"),
        ("eu-west-2", "EU (London)"),
        ("eu-west-3", "EU (Paris)"),
        ("eu-north-1", "EU (Stockholm)"),
        ("eu-south-1", "EU (Milan)"),
        ("me-south-1", "Middle East (Bahrain)"),
        ("sa-east-1", "South America (Sao Paulo)"),
    ];
    NAMES
        .iter()
        .find(|(code, _)| *code == region)
        .map_or_else(|| region.to_string(), |(_, name)| name.to_string())
}
