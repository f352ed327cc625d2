//! Statistics: the aggregate a stored row holds ([`Agg`]), the reading of one metric's rows
//! into periods, and GetMetricStatistics with AWS's period and time-range rules.

use std::collections::BTreeMap;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::metrics::{parse_dimensions, MetricKey, SECOND_RETENTION_MS};
use super::{invalid_combination, invalid_value, list, missing, number, required_str, Inner};

/// The most distinct values a row keeps for percentiles; beyond it, as for statistic sets
/// with spread, percentiles are not available for that row.
const MAX_SAMPLES: usize = 10_000;
/// The most datapoints one call may ask for.
pub(super) const MAX_DATAPOINTS: i64 = 1440;
const DAY_MS: i64 = 24 * 3_600_000;

/// Count, sum, minimum and maximum of some values, with the distinct values and their
/// counts while they are known (percentiles need them).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Agg {
    pub count: f64,
    pub sum: f64,
    pub min: f64,
    pub max: f64,
    samples: Option<Vec<(f64, f64)>>,
}

impl Agg {
    /// Nothing yet.
    pub fn empty() -> Agg {
        Agg {
            count: 0.0,
            sum: 0.0,
            min: f64::INFINITY,
            max: f64::NEG_INFINITY,
            samples: Some(Vec::new()),
        }
    }

    /// `value` seen `count` times.
    pub fn values(value: f64, count: f64) -> Agg {
        if count <= 0.0 {
            return Agg::empty();
        }
        Agg {
            count,
            sum: value * count,
            min: value,
            max: value,
            samples: Some(vec![(value, count)]),
        }
    }

    /// A statistic set: its values are known only when they are all equal.
    pub fn statistic_set(count: f64, sum: f64, min: f64, max: f64) -> Agg {
        let known = count == 1.0 || min == max;
        Agg {
            count,
            sum,
            min,
            max,
            samples: known.then(|| vec![(min, count)]),
        }
    }

    /// What a service published into one bucket (`roto_core::metrics`).
    pub fn published(stat: roto_core::metrics::Stat) -> Agg {
        Agg {
            count: stat.count,
            sum: stat.sum,
            min: stat.min,
            max: stat.max,
            samples: stat.values,
        }
    }

    /// Adds another aggregate's values.
    pub fn merge(&mut self, other: &Agg) {
        self.count += other.count;
        self.sum += other.sum;
        self.min = self.min.min(other.min);
        self.max = self.max.max(other.max);
        self.samples = match (self.samples.take(), &other.samples) {
            (Some(mut mine), Some(theirs)) => {
                for &(v, c) in theirs {
                    match mine.binary_search_by(|(x, _)| x.total_cmp(&v)) {
                        Ok(i) => mine[i].1 += c,
                        Err(i) => mine.insert(i, (v, c)),
                    }
                }
                (mine.len() <= MAX_SAMPLES).then_some(mine)
            }
            _ => None,
        };
    }

    /// The samples as stored (NULL once they are not known).
    pub fn samples_text(&self) -> Option<String> {
        self.samples
            .as_ref()
            .map(|s| serde_json::to_string(s).unwrap_or_default())
    }

    /// A row of `count, sum, min, max, samples`.
    pub fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Agg> {
        let samples: Option<String> = r.get(4)?;
        Ok(Agg {
            count: r.get(0)?,
            sum: r.get(1)?,
            min: r.get(2)?,
            max: r.get(3)?,
            samples: samples.and_then(|s| serde_json::from_str(&s).ok()),
        })
    }

    /// The `p`th percentile (nearest rank), where the values are known and not negative.
    pub fn percentile(&self, p: f64) -> Option<f64> {
        let samples = self.samples.as_ref()?;
        if self.min < 0.0 || samples.is_empty() {
            return None;
        }
        let rank = (p / 100.0 * self.count).ceil().max(1.0);
        let mut seen = 0.0;
        for &(v, c) in samples {
            seen += c;
            if seen >= rank {
                return Some(v);
            }
        }
        samples.last().map(|(v, _)| *v)
    }

    /// A named statistic (`Sum`, `Average`, `p99`, `SampleCount`...), if it can be given.
    pub fn statistic(&self, stat: &str) -> Option<f64> {
        if self.count <= 0.0 {
            return None;
        }
        match stat {
            "Sum" => Some(self.sum),
            "Average" => Some(self.sum / self.count),
            "Minimum" => Some(self.min),
            "Maximum" => Some(self.max),
            "SampleCount" => Some(self.count),
            other => percentile_of(other).and_then(|p| self.percentile(p)),
        }
    }
}

/// The percentile an extended statistic names (`p99`, `p99.9`), if it is one.
pub(super) fn percentile_of(stat: &str) -> Option<f64> {
    let p: f64 = stat.strip_prefix('p')?.parse().ok()?;
    (p.is_finite() && (0.0..=100.0).contains(&p) && stat.len() <= 7).then_some(p)
}

pub(super) const STATISTICS: &[&str] = &["SampleCount", "Average", "Sum", "Minimum", "Maximum"];

/// Whether a period is one AWS accepts: 1, 5, 10, 30 or a multiple of 60 seconds.
pub(super) fn valid_period(period: i64) -> bool {
    matches!(period, 1 | 5 | 10 | 30) || (period >= 60 && period % 60 == 0)
}

/// The first period's start: StartTime rounded down as AWS rounds it for its age.
pub(super) fn aligned_start(start: i64, period: i64, now: i64) -> i64 {
    let unit = if period < 60 {
        1000
    } else if start < now - 63 * DAY_MS {
        3_600_000
    } else if start < now - 15 * DAY_MS {
        300_000
    } else {
        60_000
    };
    start - start.rem_euclid(unit)
}

/// Whether data of this age can be read at this period (AWS keeps one-minute data 15 days,
/// five-minute data 63 days, and hourly data after that).
fn readable(ts: i64, period: i64, now: i64) -> bool {
    let age = now - ts;
    if period < 60 {
        age <= SECOND_RETENTION_MS
    } else if age > 63 * DAY_MS {
        period % 3600 == 0
    } else if age > 15 * DAY_MS {
        period % 300 == 0
    } else {
        true
    }
}

/// The number of periods from `start` to `end`, checked against the datapoint limit.
pub(super) fn check_datapoints(start: i64, end: i64, period: i64) -> AwsResult<()> {
    let n = (end - start + period * 1000 - 1) / (period * 1000);
    if n > MAX_DATAPOINTS {
        return Err(invalid_combination(format!(
            "You have requested up to {} datapoints, which exceeds the limit of 1,440. You may \
             reduce the datapoints requested by increasing Period, or decreasing the time range.",
            thousands(n)
        )));
    }
    Ok(())
}

fn thousands(n: i64) -> String {
    let digits = n.to_string();
    let mut out = String::new();
    for (i, ch) in digits.chars().enumerate() {
        if i > 0 && (digits.len() - i) % 3 == 0 {
            out.push(',');
        }
        out.push(ch);
    }
    out
}

/// A metric's data over `[start, end)` in periods of `period` seconds from `start`: one
/// aggregate per (period start, unit) that has data, in time order.
pub(super) type Series = BTreeMap<(i64, String), Agg>;

impl Inner {
    /// One metric's data in periods (see [`Series`]); `unit` keeps only that unit. The
    /// stored values are read only for `percentiles` (they cost a parse per row).
    pub(super) fn series(
        &self,
        ctx: &Context,
        key: &MetricKey,
        span: (i64, i64),
        period: i64,
        unit: Option<&str>,
        percentiles: bool,
    ) -> AwsResult<Series> {
        let mut out = Series::new();
        let Some(id) = self.metric_id(ctx, key)? else {
            return Ok(out);
        };
        let (start, end) = span;
        let res = if period < 60 { 1 } else { 60 };
        let now = now_millis();
        self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT count, sum, min, max, CASE WHEN ?6 THEN samples END, ts, unit
                 FROM cw_data
                 WHERE metric = ?1 AND res = ?2 AND ts >= ?3 AND ts < ?4
                   AND (?5 IS NULL OR unit = ?5)",
            )?;
            let rows = stmt.query_map(params![id, res, start, end, unit, percentiles], |r| {
                Ok((
                    Agg::from_row(r)?,
                    r.get::<_, i64>(5)?,
                    r.get::<_, String>(6)?,
                ))
            })?;
            for row in rows {
                let (agg, ts, unit) = row?;
                if !readable(ts, period, now) {
                    continue;
                }
                let bucket = start + (ts - start) / (period * 1000) * period * 1000;
                out.entry((bucket, unit))
                    .or_insert_with(Agg::empty)
                    .merge(&agg);
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(out)
    }

    pub(super) fn get_metric_statistics(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let namespace = required_str(input, "Namespace", "Namespace")?;
        let name = required_str(input, "MetricName", "MetricName")?;
        let start = time(input, "StartTime")?;
        let end = time(input, "EndTime")?;
        let period = input
            .get("Period")
            .and_then(number)
            .ok_or_else(|| missing("Period"))? as i64;
        let (stats, extended) = requested_statistics(input)?;
        if !valid_period(period) {
            return Err(invalid_value(
                "The parameter Period must be 1, 5, 10, 30, or a multiple of 60.",
            ));
        }
        if start >= end {
            return Err(invalid_value(
                "The parameter StartTime must be less than the parameter EndTime.",
            ));
        }
        let start = aligned_start(start, period, now_millis());
        check_datapoints(start, end, period)?;
        let key = MetricKey {
            namespace: namespace.to_string(),
            name: name.to_string(),
            dims: parse_dimensions(list(input, "Dimensions"), "Dimensions")?,
        };
        let percentiles = !extended.is_empty();
        let series = self.series(
            ctx,
            &key,
            (start, end),
            period,
            input.str("Unit"),
            percentiles,
        )?;
        let datapoints = series
            .iter()
            .map(|((ts, unit), agg)| datapoint(*ts, unit, agg, &stats, &extended))
            .collect();
        Ok(Value::map()
            .with("Label", name)
            .with("Datapoints", Value::List(datapoints)))
    }
}

/// A required timestamp member.
pub(super) fn time(input: &Value, member: &str) -> AwsResult<i64> {
    match input.get(member) {
        Some(Value::Timestamp(t)) => Ok(*t),
        Some(_) => Err(invalid_value(format!(
            "The parameter {member} must be a valid timestamp."
        ))),
        None => Err(missing(member)),
    }
}

/// The Statistics and ExtendedStatistics a request asks for, checked.
fn requested_statistics(input: &Value) -> AwsResult<(Vec<String>, Vec<String>)> {
    let strings = |member: &str| -> Vec<String> {
        list(input, member)
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    };
    let (stats, extended) = (strings("Statistics"), strings("ExtendedStatistics"));
    if stats.is_empty() == extended.is_empty() {
        return Err(invalid_combination(
            "Must specify either Statistics or ExtendedStatistics, but not both.",
        ));
    }
    if stats.len() > 5 {
        return Err(invalid_value(
            "The collection Statistics must not have a size greater than 5.",
        ));
    }
    if extended.len() > 10 {
        return Err(invalid_value(
            "The collection ExtendedStatistics must not have a size greater than 10.",
        ));
    }
    for (i, s) in stats.iter().enumerate() {
        if !STATISTICS.contains(&s.as_str()) {
            return Err(invalid_value(format!(
                "The value {s} for parameter Statistics.member.{} is invalid.",
                i + 1
            )));
        }
    }
    for (i, s) in extended.iter().enumerate() {
        if percentile_of(s).is_none() {
            return Err(invalid_value(format!(
                "The value {s} for parameter ExtendedStatistics.member.{} is invalid.",
                i + 1
            )));
        }
    }
    Ok((stats, extended))
}

/// One `Datapoint` of GetMetricStatistics.
fn datapoint(ts: i64, unit: &str, agg: &Agg, stats: &[String], extended: &[String]) -> Value {
    let mut point = Value::map()
        .with("Timestamp", Value::Timestamp(ts))
        .with("Unit", unit);
    for s in stats {
        if let Some(v) = agg.statistic(s) {
            point.insert(s.as_str(), Value::Float(v));
        }
    }
    if !extended.is_empty() {
        let mut map = Value::map();
        for s in extended {
            if let Some(v) = agg.statistic(s) {
                map.insert(s.as_str(), Value::Float(v));
            }
        }
        point.insert("ExtendedStatistics", map);
    }
    point
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn percentiles_use_the_nearest_rank_and_need_known_values() {
        let mut agg = Agg::empty();
        for v in 1..=100 {
            agg.merge(&Agg::values(f64::from(v), 1.0));
        }
        assert_eq!(agg.statistic("p99"), Some(99.0));
        assert_eq!(agg.statistic("p50"), Some(50.0));
        assert_eq!(agg.statistic("Average"), Some(50.5));
        agg.merge(&Agg::statistic_set(2.0, 3.0, 1.0, 2.0));
        assert_eq!(agg.statistic("p99"), None);
        assert_eq!(agg.statistic("SampleCount"), Some(102.0));
    }

    #[test]
    fn periods_and_datapoint_limits_follow_aws() {
        assert!(valid_period(1) && valid_period(30) && valid_period(120));
        assert!(!valid_period(7) && !valid_period(90));
        assert!(check_datapoints(0, 1440 * 60_000, 60).is_ok());
        let e = check_datapoints(0, 1441 * 60_000, 60).unwrap_err();
        assert!(e.message.contains("up to 1,441 datapoints"));
        assert_eq!(percentile_of("p99.9"), Some(99.9));
        assert_eq!(percentile_of("p101"), None);
    }
}
