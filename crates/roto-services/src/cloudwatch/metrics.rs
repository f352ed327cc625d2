//! PutMetricData and ListMetrics: validating data as AWS does, aggregating it into the
//! per-minute (and, at StorageResolution 1, per-second) rows it is read back from, and
//! listing the metrics that have data.

use std::collections::BTreeMap;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::stats::Agg;
use super::{invalid_combination, invalid_value, list, missing, number, required_str, Inner};

/// The most data a PutMetricData call may carry.
const MAX_DATA: usize = 1000;
/// The most values (and counts) one datum may carry.
const MAX_VALUES: usize = 150;
/// The most dimensions a metric may have.
pub(super) const MAX_DIMENSIONS: usize = 30;
/// How far back and ahead of now a datum's timestamp may lie.
const MAX_AGE_MS: i64 = 14 * 24 * 3_600_000;
const MAX_AHEAD_MS: i64 = 2 * 3_600_000;
/// How long metrics stay listed after their last datum, and what RecentlyActive means.
pub(super) const LISTED_MS: i64 = 14 * 24 * 3_600_000;
const RECENT_MS: i64 = 3 * 3_600_000;
/// Second rows are kept three hours and minute rows 455 days, as AWS retains them.
pub(super) const SECOND_RETENTION_MS: i64 = 3 * 3_600_000;
pub(super) const MINUTE_RETENTION_MS: i64 = 455 * 24 * 3_600_000;
/// ListMetrics' page size.
const PAGE: usize = 500;
/// The values a double may take (AWS rejects beyond ±2^360).
const LIMIT: f64 = 2.348_542_582_773_833_2e108;

const UNITS: &[&str] = &[
    "Seconds",
    "Microseconds",
    "Milliseconds",
    "Bytes",
    "Kilobytes",
    "Megabytes",
    "Gigabytes",
    "Terabytes",
    "Bits",
    "Kilobits",
    "Megabits",
    "Gigabits",
    "Terabits",
    "Percent",
    "Count",
    "Bytes/Second",
    "Kilobytes/Second",
    "Megabytes/Second",
    "Gigabytes/Second",
    "Terabytes/Second",
    "Bits/Second",
    "Kilobits/Second",
    "Megabits/Second",
    "Gigabits/Second",
    "Terabits/Second",
    "Count/Second",
    "None",
];

/// A metric's identity: namespace, name and dimensions sorted by name.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct MetricKey {
    pub namespace: String,
    pub name: String,
    pub dims: Vec<(String, String)>,
}

impl MetricKey {
    /// The dimensions as stored (`[["Name","Value"],...]`, sorted by name).
    pub fn dims_text(&self) -> String {
        serde_json::to_string(&self.dims).unwrap_or_default()
    }

    /// The `Metric` structure AWS returns.
    pub fn to_value(&self) -> Value {
        Value::map()
            .with("Namespace", self.namespace.as_str())
            .with("MetricName", self.name.as_str())
            .with("Dimensions", dimensions_value(&self.dims))
    }
}

/// `Dimensions` as AWS returns them.
pub(super) fn dimensions_value(dims: &[(String, String)]) -> Value {
    Value::List(
        dims.iter()
            .map(|(n, v)| {
                Value::map()
                    .with("Name", n.as_str())
                    .with("Value", v.as_str())
            })
            .collect(),
    )
}

/// The dimensions a request gives at `path` (`MetricData.member.1.Dimensions`), checked and
/// sorted by name.
pub(super) fn parse_dimensions(dims: &[Value], path: &str) -> AwsResult<Vec<(String, String)>> {
    if dims.len() > MAX_DIMENSIONS {
        return Err(invalid_value(format!(
            "The collection {path} must not have a size greater than {MAX_DIMENSIONS}."
        )));
    }
    let mut out = Vec::with_capacity(dims.len());
    for (i, d) in dims.iter().enumerate() {
        let at = format!("{path}.member.{}", i + 1);
        let name = required_str(d, "Name", &format!("{at}.Name"))?;
        let value = required_str(d, "Value", &format!("{at}.Value"))?;
        if name.trim().is_empty() || name.starts_with(':') {
            return Err(invalid_value(format!(
                "The value {name} for parameter {at}.Name is invalid."
            )));
        }
        if value.trim().is_empty() {
            return Err(invalid_value(format!(
                "The value {value} for parameter {at}.Value is invalid."
            )));
        }
        out.push((name.to_string(), value.to_string()));
    }
    out.sort();
    if let Some(w) = out.windows(2).find(|w| w[0].0 == w[1].0) {
        return Err(invalid_value(format!(
            "No metric may have duplicate dimension names: {} appears more than once.",
            w[0].0
        )));
    }
    Ok(out)
}

/// A finite value CloudWatch stores, or InvalidParameterValue naming `path`.
fn datum_value(value: &Value, path: &str) -> AwsResult<f64> {
    match number(value) {
        Some(v) if v.is_finite() && v.abs() <= LIMIT => Ok(v),
        Some(v) => Err(invalid_value(format!(
            "The value {} for parameter {path} is invalid.",
            shown(v)
        ))),
        None => Err(invalid_value(format!(
            "The value for parameter {path} is invalid."
        ))),
    }
}

/// A double as AWS writes it in messages (`NaN`, `Infinity`).
fn shown(v: f64) -> String {
    if v.is_nan() {
        "NaN".into()
    } else if v.is_infinite() {
        if v > 0.0 { "Infinity" } else { "-Infinity" }.into()
    } else {
        v.to_string()
    }
}

/// One validated datum, ready to store.
struct Datum {
    key: MetricKey,
    at: i64,
    unit: String,
    high_res: bool,
    agg: Agg,
}

/// The datum's mutually exclusive value members, checked pairwise as AWS names them.
fn check_exclusive(d: &Value, p: &str) -> AwsResult<()> {
    let given = ["Value", "StatisticValues", "Values"];
    let present: Vec<&str> = given.into_iter().filter(|m| d.get(m).is_some()).collect();
    if present.len() > 1 {
        return Err(invalid_combination(format!(
            "The parameters {p}.{} and {p}.{} are mutually exclusive and you have specified both.",
            present[0], present[1]
        )));
    }
    if present.is_empty() {
        return Err(invalid_combination(format!(
            "At least one of the parameters {p}.Value, {p}.StatisticValues or {p}.Values must \
             be specified."
        )));
    }
    Ok(())
}

/// The aggregate of a datum's Values and Counts.
fn values_agg(d: &Value, p: &str) -> AwsResult<Agg> {
    let values = list(d, "Values");
    let counts = list(d, "Counts");
    if values.len() > MAX_VALUES {
        return Err(invalid_value(format!(
            "The collection {p}.Values must not have a size greater than {MAX_VALUES}."
        )));
    }
    if !counts.is_empty() && counts.len() != values.len() {
        return Err(invalid_value(format!(
            "The parameters {p}.Values and {p}.Counts must be of the same size."
        )));
    }
    let mut agg = Agg::empty();
    for (i, v) in values.iter().enumerate() {
        let value = datum_value(v, &format!("{p}.Values.member.{}", i + 1))?;
        let count = match counts.get(i) {
            Some(c) => datum_value(c, &format!("{p}.Counts.member.{}", i + 1))?,
            None => 1.0,
        };
        if count < 0.0 {
            return Err(invalid_value(format!(
                "The value {} for parameter {p}.Counts.member.{} is invalid.",
                shown(count),
                i + 1
            )));
        }
        agg.merge(&Agg::values(value, count));
    }
    Ok(agg)
}

/// The aggregate of a datum's StatisticValues.
fn statistic_set_agg(set: &Value, p: &str) -> AwsResult<Agg> {
    let field = |name: &str| -> AwsResult<f64> {
        let path = format!("{p}.StatisticValues.{name}");
        datum_value(set.get(name).ok_or_else(|| missing(&path))?, &path)
    };
    let (count, sum, min, max) = (
        field("SampleCount")?,
        field("Sum")?,
        field("Minimum")?,
        field("Maximum")?,
    );
    if count <= 0.0 {
        return Err(invalid_value(format!(
            "The value {} for parameter {p}.StatisticValues.SampleCount is invalid.",
            shown(count)
        )));
    }
    if min > max {
        return Err(invalid_value(format!(
            "The parameter {p}.StatisticValues.Maximum must be greater than {p}.StatisticValues.Minimum."
        )));
    }
    Ok(Agg::statistic_set(count, sum, min, max))
}

/// A datum's timestamp (now when absent), within two weeks back and two hours ahead.
fn datum_time(d: &Value, p: &str, now: i64) -> AwsResult<i64> {
    let Some(at) = d.get("Timestamp") else {
        return Ok(now);
    };
    let Value::Timestamp(at) = at else {
        return Err(invalid_value(format!(
            "The parameter {p}.Timestamp must be a valid timestamp."
        )));
    };
    if *at < now - MAX_AGE_MS {
        return Err(invalid_value(format!(
            "The parameter {p}.Timestamp must specify a time within the past two weeks."
        )));
    }
    if *at > now + MAX_AHEAD_MS {
        return Err(invalid_value(format!(
            "The parameter {p}.Timestamp must specify a time no more than two hours in the future."
        )));
    }
    Ok(*at)
}

/// Checks one datum of PutMetricData (`index` from 1) as AWS does.
fn parse_datum(namespace: &str, d: &Value, index: usize, now: i64) -> AwsResult<Datum> {
    let p = format!("MetricData.member.{index}");
    let name = required_str(d, "MetricName", &format!("{p}.MetricName"))?;
    let dims = parse_dimensions(list(d, "Dimensions"), &format!("{p}.Dimensions"))?;
    check_exclusive(d, &p)?;
    let agg = match (d.get("Value"), d.get("StatisticValues")) {
        (Some(v), _) => Agg::values(datum_value(v, &format!("{p}.Value"))?, 1.0),
        (None, Some(set)) => statistic_set_agg(set, &p)?,
        (None, None) => values_agg(d, &p)?,
    };
    let unit = d.str("Unit").unwrap_or("None");
    if !UNITS.contains(&unit) {
        return Err(invalid_value(format!(
            "The value {unit} for parameter {p}.Unit is invalid."
        )));
    }
    let high_res = match d.get("StorageResolution").and_then(number) {
        None => false,
        Some(1.0) => true,
        Some(60.0) => false,
        Some(r) => {
            return Err(invalid_value(format!(
                "The value {} for parameter {p}.StorageResolution is invalid.",
                shown(r)
            )))
        }
    };
    Ok(Datum {
        key: MetricKey {
            namespace: namespace.to_string(),
            name: name.to_string(),
            dims,
        },
        at: datum_time(d, &p, now)?,
        unit: unit.to_string(),
        high_res,
        agg,
    })
}

/// The namespace of a request, checked as AWS checks it.
pub(super) fn check_namespace(namespace: &str) -> AwsResult<()> {
    if namespace.starts_with("AWS/")
        || namespace.trim().is_empty()
        || namespace.chars().any(|c| c.is_control() || !c.is_ascii())
    {
        return Err(invalid_value(format!(
            "The value {namespace} for parameter Namespace is invalid."
        )));
    }
    Ok(())
}

impl Inner {
    pub(super) fn put_metric_data(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let namespace = required_str(input, "Namespace", "Namespace")?;
        check_namespace(namespace)?;
        let data = list(input, "MetricData");
        if data.len() > MAX_DATA {
            return Err(invalid_value(format!(
                "The collection MetricData must not have a size greater than {MAX_DATA}."
            )));
        }
        if data.is_empty() && input.get("EntityMetricData").is_none() {
            return Err(missing("MetricData"));
        }
        let now = now_millis();
        let parsed = data
            .iter()
            .enumerate()
            .map(|(i, d)| parse_datum(namespace, d, i + 1, now))
            .collect::<AwsResult<Vec<_>>>()?;
        self.record(ctx, &parsed_refs(&parsed), now)?;
        Ok(Value::map())
    }

    /// Stores data: each datum merged into its minute row and, at high resolution, its
    /// second row; rows past retention of the metrics written are dropped on the way. The
    /// data of one row are merged in memory first, so a row is read and written once per
    /// call however many of the call's data it takes.
    pub(super) fn record(
        &self,
        ctx: &Context,
        data: &[StoredDatum<'_>],
        now: i64,
    ) -> AwsResult<()> {
        self.store()?.transaction(|c| {
            let mut ids: BTreeMap<(String, String, String), i64> = BTreeMap::new();
            let mut rows: BTreeMap<(i64, i64, i64, &str), Agg> = BTreeMap::new();
            for d in data {
                let key = (
                    d.key.namespace.clone(),
                    d.key.name.clone(),
                    d.key.dims_text(),
                );
                let id = match ids.get(&key) {
                    Some(id) => *id,
                    None => {
                        let id = upsert_metric(c, ctx, &key, now)?;
                        prune(c, id, now)?;
                        ids.insert(key, id);
                        id
                    }
                };
                let minute = (id, 60, d.at - d.at.rem_euclid(60_000), d.unit);
                rows.entry(minute).or_insert_with(Agg::empty).merge(d.agg);
                if d.high_res {
                    let second = (id, 1, d.at - d.at.rem_euclid(1000), d.unit);
                    rows.entry(second).or_insert_with(Agg::empty).merge(d.agg);
                }
            }
            for ((id, res, ts, unit), agg) in &rows {
                merge_row(c, *id, *res, *ts, unit, agg)?;
            }
            Ok::<_, AwsError>(())
        })
    }

    pub(super) fn list_metrics(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let filters = dimension_filters(list(input, "Dimensions"))?;
        let now = now_millis();
        let since = match input.str("RecentlyActive") {
            None => now - LISTED_MS,
            Some("PT3H") => now - RECENT_MS,
            Some(other) => {
                return Err(invalid_value(format!(
                    "The value {other} for parameter RecentlyActive is invalid."
                )))
            }
        };
        let offset = match input.str("NextToken") {
            None => 0,
            Some(t) => t
                .parse::<i64>()
                .map_err(|_| invalid_value("The value for parameter NextToken is invalid."))?,
        };
        let found = self.find_metrics(
            ctx,
            input.str("Namespace"),
            input.str("MetricName"),
            since,
            offset,
            &filters,
        )?;
        let next = (found.len() > PAGE).then(|| found[PAGE - 1].0.to_string());
        let metrics = found.iter().take(PAGE).map(|(_, k)| k.to_value()).collect();
        Ok(Value::map()
            .with("Metrics", Value::List(metrics))
            .with_opt("NextToken", next))
    }

    /// Metrics with data since `since` matching the filters, in id order after `after`,
    /// at most one more than a page.
    pub(super) fn find_metrics(
        &self,
        ctx: &Context,
        namespace: Option<&str>,
        name: Option<&str>,
        since: i64,
        after: i64,
        filters: &[(String, Option<String>)],
    ) -> AwsResult<Vec<(i64, MetricKey)>> {
        self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT id, namespace, name, dims FROM cw_metrics
                 WHERE account = ?1 AND region = ?2 AND last_put >= ?3 AND id > ?4
                   AND (?5 IS NULL OR namespace = ?5) AND (?6 IS NULL OR name = ?6)
                 ORDER BY id",
            )?;
            let rows = stmt.query_map(
                params![ctx.account, ctx.region, since, after, namespace, name],
                metric_from_row,
            )?;
            let mut out = Vec::new();
            for row in rows {
                let (id, key) = row?;
                if matches_filters(&key.dims, filters) {
                    out.push((id, key));
                    if out.len() > PAGE {
                        break;
                    }
                }
            }
            Ok::<_, AwsError>(out)
        })
    }

    /// The stored id of a metric, if it has ever had data.
    pub(super) fn metric_id(&self, ctx: &Context, key: &MetricKey) -> AwsResult<Option<i64>> {
        self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT id FROM cw_metrics WHERE account = ?1 AND region = ?2
                 AND namespace = ?3 AND name = ?4 AND dims = ?5",
            )?
            .query_row(
                params![
                    ctx.account,
                    ctx.region,
                    key.namespace,
                    key.name,
                    key.dims_text()
                ],
                |r| r.get(0),
            )
            .optional()
            .map_err(AwsError::from)
        })
    }
}

/// A datum as [`Inner::record`] stores it.
pub(super) struct StoredDatum<'a> {
    pub key: &'a MetricKey,
    pub at: i64,
    pub unit: &'a str,
    pub high_res: bool,
    pub agg: &'a Agg,
}

fn parsed_refs(parsed: &[Datum]) -> Vec<StoredDatum<'_>> {
    parsed
        .iter()
        .map(|d| StoredDatum {
            key: &d.key,
            at: d.at,
            unit: &d.unit,
            high_res: d.high_res,
            agg: &d.agg,
        })
        .collect()
}

fn metric_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<(i64, MetricKey)> {
    let dims: String = r.get(3)?;
    Ok((
        r.get(0)?,
        MetricKey {
            namespace: r.get(1)?,
            name: r.get(2)?,
            dims: serde_json::from_str(&dims).unwrap_or_default(),
        },
    ))
}

/// ListMetrics' dimension filters: a name, with or without a value.
fn dimension_filters(filters: &[Value]) -> AwsResult<Vec<(String, Option<String>)>> {
    if filters.len() > 10 {
        return Err(invalid_value(
            "The collection Dimensions must not have a size greater than 10.",
        ));
    }
    filters
        .iter()
        .enumerate()
        .map(|(i, f)| {
            let name = required_str(f, "Name", &format!("Dimensions.member.{}.Name", i + 1))?;
            Ok((name.to_string(), f.str("Value").map(str::to_string)))
        })
        .collect()
}

/// Whether a metric's dimensions include every filter.
pub(super) fn matches_filters(
    dims: &[(String, String)],
    filters: &[(String, Option<String>)],
) -> bool {
    filters.iter().all(|(name, value)| {
        dims.iter()
            .any(|(n, v)| n == name && value.as_ref().is_none_or(|want| want == v))
    })
}

fn upsert_metric(
    c: &rusqlite::Connection,
    ctx: &Context,
    (namespace, name, dims): &(String, String, String),
    now: i64,
) -> rusqlite::Result<i64> {
    c.prepare_cached(
        "INSERT INTO cw_metrics (account, region, namespace, name, dims, last_put)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)
         ON CONFLICT (account, region, namespace, name, dims)
         DO UPDATE SET last_put = excluded.last_put
         RETURNING id",
    )?
    .query_row(
        params![ctx.account, ctx.region, namespace, name, dims, now],
        |r| r.get(0),
    )
}

/// Drops one metric's rows past retention.
fn prune(c: &rusqlite::Connection, id: i64, now: i64) -> rusqlite::Result<()> {
    c.prepare_cached(
        "DELETE FROM cw_data WHERE metric = ?1 AND
         ((res = 1 AND ts < ?2) OR (res = 60 AND ts < ?3))",
    )?
    .execute(params![
        id,
        now - SECOND_RETENTION_MS,
        now - MINUTE_RETENTION_MS
    ])?;
    Ok(())
}

/// Merges an aggregate into the row of (metric, resolution, bucket, unit).
fn merge_row(
    c: &rusqlite::Connection,
    id: i64,
    res: i64,
    ts: i64,
    unit: &str,
    agg: &Agg,
) -> rusqlite::Result<()> {
    let existing = c
        .prepare_cached(
            "SELECT count, sum, min, max, samples FROM cw_data
             WHERE metric = ?1 AND res = ?2 AND ts = ?3 AND unit = ?4",
        )?
        .query_row(params![id, res, ts, unit], Agg::from_row)
        .optional()?;
    let mut merged = existing.unwrap_or_else(Agg::empty);
    merged.merge(agg);
    c.prepare_cached(
        "INSERT OR REPLACE INTO cw_data (metric, res, ts, unit, count, sum, min, max, samples)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
    )?
    .execute(params![
        id,
        res,
        ts,
        unit,
        merged.count,
        merged.sum,
        merged.min,
        merged.max,
        merged.samples_text()
    ])?;
    Ok(())
}
