//! GetMetricData, and the queries math-expression alarms evaluate.
//!
//! A request's queries are checked as a whole (ids unique and well formed, each a
//! MetricStat or an Expression, every id an expression names defined), then the returning
//! ones are evaluated, each query at most once (an expression reading another evaluates it
//! first; a cycle is an error). A MetricStat reads its metric's stored rows in its own
//! periods; an expression's periods (what FILL fills and a scalar becomes) are its Period,
//! or the shortest MetricStat period of the request. SEARCH reads the metrics listed in the
//! last two weeks. Results page by datapoint, across the results in request order.

use std::cell::RefCell;
use std::collections::{BTreeMap, HashMap};

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::math::{self, Expr, Fault, Inputs, Series, Val};
use super::metrics::{parse_dimensions, MetricKey, LISTED_MS};
use super::stats::{aligned_start, percentile_of, time, valid_period, Agg, STATISTICS};
use super::{
    invalid_value, list, missing, number, required_str, scan_ascending, validation, Inner,
};
use crate::paging;

/// The most queries one request may hold.
const MAX_QUERIES: usize = 500;
/// The most datapoints one page returns, and the default.
const MAX_DATAPOINTS: usize = 100_800;
/// The most series one SEARCH returns.
const MAX_SEARCH: usize = 500;
/// The longest a query id may be.
const MAX_ID: usize = 255;

/// One query of a request.
pub(super) struct Query {
    pub id: String,
    label: Option<String>,
    pub return_data: bool,
    period: Option<i64>,
    kind: Kind,
}

enum Kind {
    Stat {
        key: MetricKey,
        period: i64,
        stat: String,
        unit: Option<String>,
    },
    Expression(Expr),
}

fn well_formed_id(id: &str) -> bool {
    id.len() <= MAX_ID
        && id.starts_with(|c: char| c.is_ascii_lowercase())
        && id.chars().all(|c| c.is_ascii_alphanumeric() || c == '_')
}

fn valid_statistic(stat: &str) -> bool {
    STATISTICS.contains(&stat) || percentile_of(stat).is_some()
}

/// `Error in expression {id}: {detail}`, the ValidationError of an expression that cannot
/// be parsed or evaluated.
fn expression_error(id: &str, detail: &str) -> AwsError {
    validation(format!("Error in expression {id}: {detail}"))
}

/// One query at `at` (`MetricDataQueries.member.1`), checked.
fn parse_query(q: &Value, at: &str) -> AwsResult<Query> {
    let id = required_str(q, "Id", &format!("{at}.Id"))?;
    if !well_formed_id(id) {
        return Err(validation(format!(
            "The value {id} for parameter {at}.Id is invalid. An Id must start with a \
             lowercase letter and contain only letters, numbers and underscores."
        )));
    }
    let period = match q.get("Period").and_then(number) {
        Some(p) if !valid_period(p as i64) || p.fract() != 0.0 => {
            return Err(invalid_value(format!(
                "The parameter {at}.Period must be 1, 5, 10, 30, or a multiple of 60."
            )))
        }
        p => p.map(|p| p as i64),
    };
    let kind = match (q.get("MetricStat"), q.str("Expression")) {
        (Some(_), Some(_)) => {
            return Err(validation(format!(
                "Exactly one of {at}.MetricStat and {at}.Expression must be set."
            )))
        }
        (None, None) => {
            return Err(validation(format!(
                "The parameter {at}.MetricStat is required."
            )))
        }
        (None, Some(text)) => {
            Kind::Expression(math::parse(text).map_err(|e| expression_error(id, &e))?)
        }
        (Some(ms), None) => parse_metric_stat(ms, &format!("{at}.MetricStat"))?,
    };
    Ok(Query {
        id: id.to_string(),
        label: q.str("Label").map(str::to_string),
        return_data: q.bool("ReturnData").unwrap_or(true),
        period,
        kind,
    })
}

fn parse_metric_stat(ms: &Value, at: &str) -> AwsResult<Kind> {
    let metric = ms
        .get("Metric")
        .ok_or_else(|| missing(&format!("{at}.Metric")))?;
    let key = MetricKey {
        namespace: required_str(metric, "Namespace", &format!("{at}.Metric.Namespace"))?
            .to_string(),
        name: required_str(metric, "MetricName", &format!("{at}.Metric.MetricName"))?.to_string(),
        dims: parse_dimensions(
            list(metric, "Dimensions"),
            &format!("{at}.Metric.Dimensions"),
        )?,
    };
    let period = ms
        .get("Period")
        .and_then(number)
        .ok_or_else(|| missing(&format!("{at}.Period")))?;
    if period.fract() != 0.0 || !valid_period(period as i64) {
        return Err(invalid_value(format!(
            "The parameter {at}.Period must be 1, 5, 10, 30, or a multiple of 60."
        )));
    }
    let stat = required_str(ms, "Stat", &format!("{at}.Stat"))?;
    if !valid_statistic(stat) {
        return Err(validation(format!(
            "The value for parameter {at}.Stat is not a valid statistic."
        )));
    }
    Ok(Kind::Stat {
        key,
        period: period as i64,
        stat: stat.to_string(),
        unit: ms.str("Unit").map(str::to_string),
    })
}

/// The queries of a request (`member` names the list in errors), checked.
pub(super) fn parse_queries(queries: &[Value], member: &str) -> AwsResult<Vec<Query>> {
    if queries.is_empty() {
        return Err(missing(member));
    }
    if queries.len() > MAX_QUERIES {
        return Err(validation(format!(
            "The collection {member} must not have a size greater than {MAX_QUERIES}."
        )));
    }
    let mut parsed: Vec<Query> = Vec::with_capacity(queries.len());
    for (i, q) in queries.iter().enumerate() {
        let at = format!("{member}.member.{}", i + 1);
        let query = parse_query(q, &at)?;
        if parsed.iter().any(|p| p.id == query.id) {
            return Err(validation(format!(
                "The value {} for parameter {at}.Id is not unique.",
                query.id
            )));
        }
        parsed.push(query);
    }
    for q in &parsed {
        if let Kind::Expression(e) = &q.kind {
            if let Some(unknown) = e
                .ids()
                .into_iter()
                .find(|id| !parsed.iter().any(|p| p.id == *id))
            {
                return Err(expression_error(
                    &q.id,
                    &format!("unknown metric id {unknown}"),
                ));
            }
        }
    }
    Ok(parsed)
}

/// One evaluation of a request's queries over `span`, each query's value kept once made.
struct Run<'a> {
    inner: &'a Inner,
    ctx: &'a Context,
    queries: &'a [Query],
    span: (i64, i64),
    now: i64,
    done: RefCell<HashMap<String, Val>>,
    active: RefCell<Vec<String>>,
}

/// The inputs of one expression: the run and the expression's periods.
struct Scope<'r, 'a> {
    run: &'r Run<'a>,
    grid: Vec<i64>,
}

impl<'a> Run<'a> {
    fn new(
        inner: &'a Inner,
        ctx: &'a Context,
        queries: &'a [Query],
        span: (i64, i64),
        now: i64,
    ) -> Self {
        Run {
            inner,
            ctx,
            queries,
            span,
            now,
            done: RefCell::default(),
            active: RefCell::default(),
        }
    }

    /// The period starts of the range at `period` seconds, at most a page's worth.
    fn grid(&self, period: i64) -> Vec<i64> {
        let start = aligned_start(self.span.0, period, self.now);
        (0..MAX_DATAPOINTS as i64)
            .map(|i| start + i * period * 1000)
            .take_while(|t| *t < self.span.1)
            .collect()
    }

    fn expression_period(&self, q: &Query) -> i64 {
        q.period
            .or_else(|| {
                self.queries
                    .iter()
                    .filter_map(|q| match &q.kind {
                        Kind::Stat { period, .. } => Some(*period),
                        Kind::Expression(_) => None,
                    })
                    .min()
            })
            .unwrap_or(60)
    }

    /// A query's value, evaluated once.
    fn value(&self, q: &Query) -> Result<Val, Fault> {
        if let Some(v) = self.done.borrow().get(&q.id) {
            return Ok(v.clone());
        }
        if self.active.borrow().contains(&q.id) {
            return Err(Fault::Invalid(format!("circular reference to {}", q.id)));
        }
        self.active.borrow_mut().push(q.id.clone());
        let value = match &q.kind {
            Kind::Stat {
                key,
                period,
                stat,
                unit,
            } => self
                .metric(key, *period, stat, unit.as_deref())
                .map(|mut s| {
                    s.label = q.label.clone().unwrap_or_else(|| key.name.clone());
                    Val::Series(s)
                })
                .map_err(Fault::from),
            Kind::Expression(e) => {
                let scope = Scope {
                    run: self,
                    grid: self.grid(self.expression_period(q)),
                };
                math::eval(e, &scope).map_err(|f| match f {
                    Fault::Invalid(m) => Fault::Aws(expression_error(&q.id, &m)),
                    other => other,
                })
            }
        };
        self.active.borrow_mut().pop();
        let value = value?;
        self.done.borrow_mut().insert(q.id.clone(), value.clone());
        Ok(value)
    }

    /// One metric's statistic in periods over the range.
    fn metric(
        &self,
        key: &MetricKey,
        period: i64,
        stat: &str,
        unit: Option<&str>,
    ) -> AwsResult<Series> {
        let start = aligned_start(self.span.0, period, self.now);
        let rows = self.inner.series(
            self.ctx,
            key,
            (start, self.span.1),
            period,
            unit,
            percentile_of(stat).is_some(),
        )?;
        let mut merged: BTreeMap<i64, Agg> = BTreeMap::new();
        for ((ts, _), agg) in rows {
            merged.entry(ts).or_insert_with(Agg::empty).merge(&agg);
        }
        Ok(Series {
            label: key.name.clone(),
            points: merged
                .into_iter()
                .filter_map(|(t, agg)| agg.statistic(stat).map(|v| (t, v)))
                .collect(),
        })
    }

    /// The series a returning query gives, with their labels.
    fn results(&self, q: &Query) -> Result<Vec<Series>, Fault> {
        Ok(match self.value(q)? {
            Val::Scalar(x) => {
                let mut s = math::constant(x, &self.grid(self.expression_period(q)));
                s.label = q.label.clone().unwrap_or_else(|| q.id.clone());
                vec![s]
            }
            Val::Series(mut s) => {
                if let Kind::Expression(_) = q.kind {
                    s.label = q.label.clone().unwrap_or_else(|| q.id.clone());
                }
                vec![s]
            }
            Val::Array(xs) => xs
                .into_iter()
                .map(|mut s| {
                    if let Some(label) = &q.label {
                        s.label = format!("{label} {}", s.label);
                    }
                    s
                })
                .collect(),
        })
    }
}

impl Inputs for Scope<'_, '_> {
    fn query(&self, id: &str) -> Result<Val, Fault> {
        match self.run.queries.iter().find(|q| q.id == id) {
            Some(q) => self.run.value(q),
            None => Err(Fault::Invalid(format!("unknown metric id {id}"))),
        }
    }

    fn metrics(&self, filter: Option<&str>) -> Result<Vec<Series>, Fault> {
        let mut out = Vec::new();
        for q in self.run.queries {
            if let Kind::Stat { .. } = q.kind {
                if let Val::Series(s) = self.run.value(q)? {
                    if filter.is_none_or(|f| s.label.contains(f)) {
                        out.push(s);
                    }
                }
            }
        }
        Ok(out)
    }

    fn search(&self, text: &str, stat: &str, period: i64) -> Result<Vec<Series>, Fault> {
        let search = Search::parse(text).map_err(Fault::Invalid)?;
        if !valid_statistic(stat) {
            return Err(Fault::Invalid(format!("{stat} is not a valid statistic")));
        }
        if !valid_period(period) {
            return Err(Fault::Invalid(format!(
                "the period {period} must be 1, 5, 10, 30, or a multiple of 60"
            )));
        }
        let mut found = Vec::new();
        let mut after = 0;
        let since = self.run.now - LISTED_MS;
        let namespace = search.namespace();
        while found.len() < MAX_SEARCH {
            let batch =
                self.run
                    .inner
                    .find_metrics(self.run.ctx, namespace, None, since, after, &[])?;
            let Some((last, _)) = batch.last() else {
                break;
            };
            after = *last;
            found.extend(
                batch
                    .into_iter()
                    .map(|(_, k)| k)
                    .filter(|k| search.matches(k)),
            );
        }
        found.truncate(MAX_SEARCH);
        found
            .iter()
            .map(|key| {
                let mut s = self.run.metric(key, period, stat, None)?;
                s.label = search_label(key);
                Ok(s)
            })
            .collect()
    }

    fn grid(&self) -> &[i64] {
        &self.grid
    }
}

/// A SEARCH result's label: its dimension values and its name.
fn search_label(key: &MetricKey) -> String {
    let mut words: Vec<&str> = key.dims.iter().map(|(_, v)| v.as_str()).collect();
    words.push(&key.name);
    words.join(" ")
}

/// A SEARCH expression's first argument: an optional schema `{Namespace,Dim1,Dim2}` (the
/// namespace and exactly those dimension names), then terms, all of which must match:
/// `Name="value"` (MetricName, Namespace or a dimension name, exactly) or a word or quoted
/// phrase found, ignoring case, in the namespace, the name or a dimension's name or value.
#[derive(Debug, PartialEq)]
struct Search {
    schema: Option<(String, Vec<String>)>,
    exact: Vec<(String, String)>,
    words: Vec<String>,
}

fn unquote(s: &str) -> &str {
    let s = s.trim();
    s.strip_prefix('"')
        .and_then(|r| r.strip_suffix('"'))
        .unwrap_or(s)
}

impl Search {
    fn parse(text: &str) -> Result<Search, String> {
        let mut rest = text.trim();
        let mut search = Search {
            schema: None,
            exact: Vec::new(),
            words: Vec::new(),
        };
        if let Some(body) = rest.strip_prefix('{') {
            let end = body
                .find('}')
                .ok_or("the search schema has no closing '}'")?;
            let mut parts = body[..end].split(',').map(|p| unquote(p).to_string());
            let namespace = parts
                .next()
                .filter(|n| !n.is_empty())
                .ok_or("the search schema has no namespace")?;
            search.schema = Some((namespace, parts.collect()));
            rest = &body[end + 1..];
        }
        loop {
            rest = rest.trim_start();
            if rest.is_empty() {
                return Ok(search);
            }
            let (token, after) = Self::token(rest)?;
            rest = after;
            if let Some(value) = rest.strip_prefix('=') {
                let (value, after) = Self::token(value.trim_start())?;
                rest = after;
                search
                    .exact
                    .push((unquote(token).to_string(), unquote(value).to_string()));
            } else if !token.eq_ignore_ascii_case("AND") {
                search.words.push(unquote(token).to_lowercase());
            }
        }
    }

    /// A quoted phrase or a word (up to a space or `=`), and what follows it.
    fn token(text: &str) -> Result<(&str, &str), String> {
        if let Some(body) = text.strip_prefix('"') {
            let end = body.find('"').ok_or("a search term has no closing quote")?;
            return Ok((&text[..end + 2], &text[end + 2..]));
        }
        let end = text
            .find(|c: char| c.is_whitespace() || c == '=')
            .unwrap_or(text.len());
        if end == 0 {
            return Err("a search term is empty".to_string());
        }
        Ok((&text[..end], &text[end..]))
    }

    /// The namespace the search is limited to, if any.
    fn namespace(&self) -> Option<&str> {
        self.schema.as_ref().map(|(n, _)| n.as_str()).or_else(|| {
            self.exact
                .iter()
                .find(|(k, _)| k == "Namespace")
                .map(|(_, v)| v.as_str())
        })
    }

    fn matches(&self, key: &MetricKey) -> bool {
        if let Some((namespace, names)) = &self.schema {
            let mut have: Vec<&str> = key.dims.iter().map(|(n, _)| n.as_str()).collect();
            let mut want: Vec<&str> = names.iter().map(String::as_str).collect();
            have.sort_unstable();
            want.sort_unstable();
            if *namespace != key.namespace || have != want {
                return false;
            }
        }
        let exact = self.exact.iter().all(|(k, v)| match k.as_str() {
            "MetricName" => key.name == *v,
            "Namespace" => key.namespace == *v,
            dim => key.dims.iter().any(|(n, dv)| n == dim && dv == v),
        });
        let words = self.words.iter().all(|w| {
            std::iter::once(&key.namespace)
                .chain(std::iter::once(&key.name))
                .chain(key.dims.iter().flat_map(|(n, v)| [n, v]))
                .any(|s| s.to_lowercase().contains(w.as_str()))
        });
        exact && words
    }
}

impl Inner {
    pub(super) fn get_metric_data(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queries = parse_queries(list(input, "MetricDataQueries"), "MetricDataQueries")?;
        let start = time(input, "StartTime")?;
        let end = time(input, "EndTime")?;
        if start >= end {
            return Err(invalid_value(
                "The parameter StartTime must be less than the parameter EndTime.",
            ));
        }
        let ascending = scan_ascending(input)?;
        let max = match input.get("MaxDatapoints").and_then(number) {
            None => MAX_DATAPOINTS,
            Some(n) if n >= 1.0 => (n as usize).min(MAX_DATAPOINTS),
            Some(n) => {
                return Err(invalid_value(format!(
                    "The value {n} for parameter MaxDatapoints is invalid."
                )))
            }
        };
        let run = Run::new(self, ctx, &queries, (start, end), now_millis());
        let mut results: Vec<(&str, Series)> = Vec::new();
        for q in queries.iter().filter(|q| q.return_data) {
            let series = run.results(q).map_err(|f| match f {
                Fault::Invalid(m) => expression_error(&q.id, &m),
                Fault::Aws(e) => e,
            })?;
            results.extend(series.into_iter().map(|s| (q.id.as_str(), s)));
        }
        let mut items = Vec::new();
        for (r, (_, s)) in results.iter().enumerate() {
            let mut points: Vec<(&i64, &f64)> = s.points.iter().collect();
            if !ascending {
                points.reverse();
            }
            items.extend(points.into_iter().map(|(t, v)| {
                Value::List(vec![
                    Value::Integer(r as i64),
                    Value::Timestamp(*t),
                    Value::Float(*v),
                ])
            }));
        }
        let (page, next) = paging::page(items, max, input.str("NextToken"), || {
            AwsError::new("InvalidNextToken", "The NextToken is not valid.")
        })?;
        Ok(Value::map()
            .with(
                "MetricDataResults",
                Value::List(page_results(&results, page, next.is_some())),
            )
            .with_opt("NextToken", next)
            .with("Messages", Value::List(Vec::new())))
    }

    /// The values of a math alarm's returning query over `span` by period start; None when
    /// its queries cannot be evaluated (no returning query, an error, or an array).
    pub(super) fn alarm_values(
        &self,
        ctx: &Context,
        config: &Value,
        span: (i64, i64),
    ) -> AwsResult<Option<BTreeMap<i64, f64>>> {
        let Ok(queries) = parse_queries(list(config, "Metrics"), "Metrics") else {
            return Ok(None);
        };
        let Some(q) = queries.iter().find(|q| q.return_data) else {
            return Ok(None);
        };
        let run = Run::new(self, ctx, &queries, span, span.1);
        match run.results(q) {
            Ok(mut series) if series.len() == 1 => Ok(Some(series.remove(0).points)),
            Ok(_) | Err(Fault::Invalid(_)) => Ok(None),
            Err(Fault::Aws(e)) if e.code == "ValidationException" => Ok(None),
            Err(Fault::Aws(e)) => Err(e),
        }
    }
}

/// The MetricDataResults of one page: every returning result, with the datapoints of the
/// page that are its own, PartialData while a later page holds more of them.
fn page_results(results: &[(&str, Series)], page: Vec<Value>, more: bool) -> Vec<Value> {
    let mut timestamps: Vec<Vec<Value>> = vec![Vec::new(); results.len()];
    let mut values: Vec<Vec<Value>> = vec![Vec::new(); results.len()];
    let mut last = None;
    for item in page {
        if let Value::List(mut parts) = item {
            let (Some(v), Some(t), Some(Value::Integer(r))) =
                (parts.pop(), parts.pop(), parts.pop())
            else {
                continue;
            };
            let r = r as usize;
            timestamps[r].push(t);
            values[r].push(v);
            last = Some(r);
        }
    }
    results
        .iter()
        .enumerate()
        .map(|(r, (id, s))| {
            let partial = more
                && match last {
                    Some(l) => r > l || (r == l && values[r].len() < s.points.len()),
                    None => true,
                };
            Value::map()
                .with("Id", *id)
                .with("Label", s.label.as_str())
                .with(
                    "Timestamps",
                    Value::List(std::mem::take(&mut timestamps[r])),
                )
                .with("Values", Value::List(std::mem::take(&mut values[r])))
                .with(
                    "StatusCode",
                    if partial { "PartialData" } else { "Complete" },
                )
                .with("Messages", Value::List(Vec::new()))
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn key(namespace: &str, name: &str, dims: &[(&str, &str)]) -> MetricKey {
        MetricKey {
            namespace: namespace.into(),
            name: name.into(),
            dims: dims
                .iter()
                .map(|(n, v)| (n.to_string(), v.to_string()))
                .collect(),
        }
    }

    #[test]
    fn search_schemas_exact_terms_and_words() {
        let s = Search::parse("{App,Host} MetricName=\"Latency\"").unwrap();
        assert!(s.matches(&key("App", "Latency", &[("Host", "a")])));
        assert!(!s.matches(&key("App", "Latency", &[("Host", "a"), ("Zone", "z")])));
        assert!(!s.matches(&key("App", "Errors", &[("Host", "a")])));
        assert_eq!(s.namespace(), Some("App"));
        let s = Search::parse("Namespace=\"App\" latency Host=b").unwrap();
        assert!(s.matches(&key("App", "Latency", &[("Host", "b")])));
        assert!(!s.matches(&key("App", "Latency", &[("Host", "a")])));
        assert!(Search::parse("{App").is_err());
        assert!(Search::parse("\"open").is_err());
    }

    #[test]
    fn ids_must_start_lower_case() {
        assert!(well_formed_id("m1") && well_formed_id("errorRate_2"));
        assert!(!well_formed_id("M1") && !well_formed_id("1m") && !well_formed_id("m-1"));
    }
}
