//! The metrics log events produce, as CloudWatch Logs publishes them to CloudWatch: each
//! metric filter of the log group counts or measures the events its pattern matches (its
//! transformation's value, a literal or an extracted `$field`/`$.path`, its dimensions,
//! unit, and its default value for a batch in which no event matched), and every event in
//! the Embedded Metric Format (a JSON object whose `_aws.CloudWatchMetrics` directives name
//! the namespace, dimension sets and metrics of its members) gives its metrics. Both are
//! published through `roto_core::metrics` at the event's time; a group without metric
//! filters costs one flag read, an event that is not EMF one substring search.

use std::collections::BTreeMap;
use std::sync::atomic::Ordering;

use roto_core::metrics::Datum;
use roto_core::{AwsError, AwsResult, Context, Env};
use rusqlite::params;
use serde_json::Value as Json;

use super::filter::{json_member, Pattern};
use super::Logs;

/// The most values one EMF member may carry, and dimensions one set may have.
const MAX_EMF_VALUES: usize = 100;
const MAX_EMF_DIMENSIONS: usize = 30;

impl Logs {
    /// Publishes the metrics of events stored in `group`.
    pub(super) fn publish_metrics(
        &self,
        ctx: &Context,
        group: &str,
        events: &[(i64, &str)],
        transformed: Option<&[(i64, &str)]>,
    ) -> AwsResult<()> {
        for (ts, message) in events {
            if message.contains("\"_aws\"") {
                embedded(&self.env, ctx, *ts, message);
            }
        }
        if self.metric_filters.load(Ordering::Relaxed) {
            for filter in self.group_filters(ctx, group)? {
                let events = match transformed {
                    Some(t) if filter["applyOnTransformedLogs"] == Json::Bool(true) => t,
                    _ => events,
                };
                filtered(&self.env, ctx, &filter, events);
            }
        }
        Ok(())
    }

    /// The metric filters of a group, as stored.
    fn group_filters(&self, ctx: &Context, group: &str) -> AwsResult<Vec<Json>> {
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT config FROM logs_metric_filters
                 WHERE account = ?1 AND region = ?2 AND grp = ?3",
            )?;
            let rows = stmt.query_map(params![ctx.account, ctx.region, group], |r| {
                r.get::<_, String>(0)
            })?;
            let mut out = Vec::new();
            for text in rows {
                out.extend(serde_json::from_str(&text?).ok());
            }
            Ok::<_, AwsError>(out)
        })
    }
}

/// A transformation's value or dimension: a literal, what the match extracted for it, or
/// the member of the JSON event it names.
fn resolve(spec: &str, extracted: &BTreeMap<String, String>, message: &str) -> Option<String> {
    if !spec.starts_with('$') {
        return Some(spec.to_string());
    }
    match extracted.get(spec) {
        Some(v) => Some(v.clone()),
        None if spec.starts_with("$.") => json_member(message, spec),
        None => None,
    }
}

/// One metric filter over a batch of events.
fn filtered(env: &Env, ctx: &Context, filter: &Json, events: &[(i64, &str)]) {
    let Ok(pattern) = Pattern::parse(filter["filterPattern"].as_str().unwrap_or_default()) else {
        return;
    };
    let Some(t) = filter["metricTransformations"].get(0) else {
        return;
    };
    let text = |member: &str| t[member].as_str().unwrap_or_default();
    let (namespace, name, unit) = (text("metricNamespace"), text("metricName"), text("unit"));
    let unit = if unit.is_empty() { "None" } else { unit };
    let mut matched = false;
    for (ts, message) in events {
        let Some(extracted) = pattern.extract(message) else {
            continue;
        };
        matched = true;
        let value =
            resolve(text("metricValue"), &extracted, message).and_then(|v| v.parse::<f64>().ok());
        let dims: Option<Vec<(&str, String)>> = t["dimensions"]
            .as_object()
            .into_iter()
            .flatten()
            .map(|(k, v)| Some((k.as_str(), resolve(v.as_str()?, &extracted, message)?)))
            .collect();
        let dims: Option<Vec<(&str, &str)>> = dims
            .as_ref()
            .map(|d| d.iter().map(|(k, v)| (*k, v.as_str())).collect());
        if let (Some(value), Some(dims)) = (value.filter(|v| v.is_finite()), dims) {
            let datum = Datum {
                at: *ts,
                ..Datum::new(namespace, name, &dims, value, unit)
            };
            env.metrics.put(&ctx.account, &ctx.region, &datum);
        }
    }
    let default = t["defaultValue"].as_f64();
    if let (false, Some(value), Some((ts, _))) = (matched, default, events.last()) {
        let datum = Datum {
            at: *ts,
            ..Datum::new(namespace, name, &[], value, unit)
        };
        env.metrics.put(&ctx.account, &ctx.region, &datum);
    }
}

/// The metrics of one event in the Embedded Metric Format; nothing when it is not one.
fn embedded(env: &Env, ctx: &Context, ts: i64, message: &str) {
    let Ok(Json::Object(root)) = serde_json::from_str::<Json>(message) else {
        return;
    };
    let Some(meta) = root.get("_aws") else {
        return;
    };
    let at = meta["Timestamp"].as_i64().unwrap_or(ts);
    for directive in meta["CloudWatchMetrics"].as_array().into_iter().flatten() {
        let Some(namespace) = directive["Namespace"].as_str() else {
            continue;
        };
        let sets: Vec<Vec<(&str, &str)>> = directive["Dimensions"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(|set| {
                let keys = set.as_array()?;
                (keys.len() <= MAX_EMF_DIMENSIONS).then_some(())?;
                keys.iter()
                    .map(|k| {
                        let k = k.as_str()?;
                        Some((k, root.get(k)?.as_str()?))
                    })
                    .collect()
            })
            .collect();
        let sets = if sets.is_empty() {
            vec![Vec::new()]
        } else {
            sets
        };
        for metric in directive["Metrics"].as_array().into_iter().flatten() {
            let Some(name) = metric["Name"].as_str() else {
                continue;
            };
            let values: Vec<f64> = match root.get(name) {
                Some(Json::Number(n)) => n.as_f64().into_iter().collect(),
                Some(Json::Array(a)) => a
                    .iter()
                    .take(MAX_EMF_VALUES)
                    .filter_map(Json::as_f64)
                    .collect(),
                _ => continue,
            };
            let unit = metric["Unit"].as_str().unwrap_or("None");
            let high_res = metric["StorageResolution"].as_i64() == Some(1);
            for dims in &sets {
                for value in &values {
                    let datum = Datum {
                        at,
                        high_res,
                        ..Datum::new(namespace, name, dims, *value, unit)
                    };
                    env.metrics.put(&ctx.account, &ctx.region, &datum);
                }
            }
        }
    }
}
