//! Metric filters: PutMetricFilter, DescribeMetricFilters, DeleteMetricFilter and
//! TestMetricFilter.
//!
//! Filters are stored and described as AWS keeps them (at most 100 per log group, listed in
//! ASCII order of their names); PutLogEvents publishes their metrics (`super::metrics`).
//! TestMetricFilter runs the same [`Pattern`] FilterLogEvents uses and reports what a match
//! extracts.

use std::sync::atomic::Ordering;

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::filter::Pattern;
use super::{document, invalid, limit_exceeded, name_of_token, page_of, Logs, DEFAULT_PAGE};

/// How many metric filters one log group may have.
const MAX_FILTERS: i64 = 100;

/// The filter pattern of a request, parsed.
fn pattern_of(input: &Value) -> AwsResult<Pattern> {
    Pattern::parse(input.str("filterPattern").unwrap_or_default()).map_err(invalid)
}

/// TestMetricFilter: which messages match, and the values each match extracts.
pub(super) fn test_metric_filter(input: &Value) -> AwsResult<Value> {
    let pattern = pattern_of(input)?;
    let matches: Vec<Value> = input
        .get("logEventMessages")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .enumerate()
        .filter_map(|(i, message)| {
            let message = message.as_str()?;
            let values = pattern.extract(message)?;
            Some(
                Value::map()
                    .with("eventNumber", i as i64)
                    .with("eventMessage", message)
                    .with(
                        "extractedValues",
                        Value::Map(
                            values
                                .into_iter()
                                .map(|(k, v)| (k, Value::from(v)))
                                .collect(),
                        ),
                    ),
            )
        })
        .collect();
    Ok(Value::map().with("matches", matches))
}

impl Logs {
    /// How many metric filters group `group` has.
    pub(super) fn metric_filter_count(&self, ctx: &Context, group: &str) -> AwsResult<i64> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT COUNT(*) FROM logs_metric_filters WHERE account = ?1 AND region = ?2 AND grp = ?3",
            )?
            .query_row(params![ctx.account, ctx.region, group], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    pub(super) fn put_metric_filter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let name = input.str("filterName").unwrap_or_default();
        pattern_of(input)?;
        let transformation = input
            .get("metricTransformations")
            .and_then(Value::as_list)
            .and_then(<[Value]>::first)
            .cloned()
            .unwrap_or_else(Value::map);
        self.standard_group(ctx, group)?;
        let replacing = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT 1 FROM logs_metric_filters WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4",
            )?
            .exists(params![ctx.account, ctx.region, group, name])
            .map_err(AwsError::from)
        })?;
        if !replacing && self.metric_filter_count(ctx, group)? >= MAX_FILTERS {
            return Err(limit_exceeded());
        }
        let mut filter = Value::map()
            .with("filterName", name)
            .with(
                "filterPattern",
                input.str("filterPattern").unwrap_or_default(),
            )
            .with("metricTransformations", vec![transformation.clone()])
            .with("creationTime", self.now())
            .with("logGroupName", group);
        for member in [
            "applyOnTransformedLogs",
            "fieldSelectionCriteria",
            "emitSystemFieldDimensions",
        ] {
            if let Some(v) = input.get(member) {
                filter.insert(member, v.clone());
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO logs_metric_filters
                    (account, region, grp, name, metric_name, metric_namespace, config)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![
                    ctx.account,
                    ctx.region,
                    group,
                    name,
                    transformation.str("metricName").unwrap_or_default(),
                    transformation.str("metricNamespace").unwrap_or_default(),
                    document(&filter)
                ],
            )
            .map_err(AwsError::from)
        })?;
        self.metric_filters.store(true, Ordering::Relaxed);
        Ok(Value::map())
    }

    pub(super) fn describe_metric_filters(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName");
        let metric = match (input.str("metricName"), input.str("metricNamespace")) {
            (Some(_), None) => {
                return Err(invalid(
                    "If you include the metricName parameter in your request, you must also include the metricNamespace parameter.",
                ))
            }
            (None, Some(_)) => {
                return Err(invalid(
                    "If you include the metricNamespace parameter in your request, you must also include the metricName parameter.",
                ))
            }
            (name, namespace) => name.zip(namespace),
        };
        // AWS applies the prefix only together with a log group name.
        let prefix = group.and(input.str("filterNamePrefix")).unwrap_or_default();
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
        if let Some(group) = group {
            self.existing_group(ctx, group)?;
        }
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT name || char(0) || grp, config FROM logs_metric_filters
                 WHERE account = ?1 AND region = ?2
                   AND (?3 IS NULL OR grp = ?3)
                   AND substr(name, 1, length(?4)) = ?4
                   AND (?5 IS NULL OR (metric_name = ?5 AND metric_namespace = ?6))
                   AND name || char(0) || grp > ?7
                 ORDER BY name || char(0) || grp LIMIT ?8",
            )?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    group,
                    prefix,
                    metric.map(|m| m.0),
                    metric.map(|m| m.1),
                    after.unwrap_or_default(),
                    (limit + 1) as i64
                ],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Ok(page_of(rows, limit, "metricFilters"))
    }

    pub(super) fn delete_metric_filter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.delete_group_filter(ctx, input, "logs_metric_filters", "metric filter")
    }

    /// Deletes the filter `filterName` of the group `logGroupName` from `table` (metric
    /// and subscription filters), `ResourceNotFoundException` naming `what` when absent.
    pub(super) fn delete_group_filter(
        &self,
        ctx: &Context,
        input: &Value,
        table: &'static str,
        what: &str,
    ) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        self.existing_group(ctx, group)?;
        let n = self.env.store.with(|c| {
            c.execute_cached(
                &format!(
                    "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4"
                ),
                params![ctx.account, ctx.region, group, input.str("filterName").unwrap_or_default()],
            )
            .map_err(AwsError::from)
        })?;
        if n == 0 {
            return Err(AwsError::new(
                "ResourceNotFoundException",
                format!("The specified {what} does not exist."),
            )
            .with_status(400));
        }
        Ok(Value::map())
    }
}
