//! Evaluation of a parsed expression over time series.
//!
//! A value is a scalar, one series or an array of series (METRICS(), SEARCH()). Arithmetic
//! and comparisons apply point by point: a series with a scalar at each of its points, two
//! series at the timestamps both have, an array series by series. A result that is not a
//! finite number (a division by zero) is no datapoint. SUM, AVG, MIN, MAX and STDDEV
//! (population) of an array give one series of the values present at each timestamp; of a
//! series, the scalar over its values. FILL fills the periods of the query's range that
//! have no value with a number, the last value before (REPEAT) or the straight line
//! between the values either side (LINEAR); before the first value and after the last,
//! both take the nearest value. RATE and DIFF give, at each datapoint after the first, the
//! change from the one before (RATE per second). IF(c, a, b) takes `a` where `c` is not
//! zero and `b` (or no datapoint) where it is.

use std::collections::BTreeMap;

use roto_core::AwsError;

use super::parse::{Expr, Op};

/// A time series: its label and its values by period start (epoch milliseconds).
#[derive(Debug, Clone, Default, PartialEq)]
pub(crate) struct Series {
    pub label: String,
    pub points: BTreeMap<i64, f64>,
}

/// What an expression evaluates to.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Scalar(f64),
    Series(Series),
    Array(Vec<Series>),
}

/// Why an evaluation failed: the expression is wrong (the text says how), or with an
/// error already in AWS's terms (the store's, or a query's that the expression read).
#[derive(Debug)]
pub(crate) enum Fault {
    Invalid(String),
    Aws(AwsError),
}

impl From<AwsError> for Fault {
    fn from(e: AwsError) -> Fault {
        Fault::Aws(e)
    }
}

type Result<T> = std::result::Result<T, Fault>;

fn invalid<T>(message: impl Into<String>) -> Result<T> {
    Err(Fault::Invalid(message.into()))
}

/// What an expression reads besides its own text.
pub(crate) trait Inputs {
    /// The value of another query of the request.
    fn query(&self, id: &str) -> Result<Val>;
    /// The request's metrics (MetricStat queries), those whose label contains `filter`.
    fn metrics(&self, filter: Option<&str>) -> Result<Vec<Series>>;
    /// The stored metrics a SEARCH finds, read with `stat` in periods of `period` seconds.
    fn search(&self, text: &str, stat: &str, period: i64) -> Result<Vec<Series>>;
    /// The period starts of the query's time range.
    fn grid(&self) -> &[i64];
}

/// Evaluates `expr`.
pub(crate) fn eval(expr: &Expr, inputs: &dyn Inputs) -> Result<Val> {
    match expr {
        Expr::Number(n) => Ok(Val::Scalar(*n)),
        Expr::Id(id) => inputs.query(id),
        Expr::Text(t) => invalid(format!("the string '{t}' is not a value")),
        Expr::Keyword(k) => invalid(format!("unknown identifier {k}")),
        Expr::Neg(a) => Ok(map(eval(a, inputs)?, |x| -x)),
        Expr::Not(a) => Ok(map(eval(a, inputs)?, |x| truth(x == 0.0))),
        Expr::Binary(op, a, b) => binary(*op, eval(a, inputs)?, eval(b, inputs)?),
        Expr::Call(name, args) => call(name, args, inputs),
    }
}

fn truth(b: bool) -> f64 {
    if b {
        1.0
    } else {
        0.0
    }
}

fn apply(op: Op, x: f64, y: f64) -> f64 {
    match op {
        Op::Add => x + y,
        Op::Sub => x - y,
        Op::Mul => x * y,
        Op::Div => x / y,
        Op::Pow => x.powf(y),
        Op::Eq => truth(x == y),
        Op::Ne => truth(x != y),
        Op::Lt => truth(x < y),
        Op::Le => truth(x <= y),
        Op::Gt => truth(x > y),
        Op::Ge => truth(x >= y),
        Op::And => truth(x != 0.0 && y != 0.0),
        Op::Or => truth(x != 0.0 || y != 0.0),
    }
}

/// A series with `f` applied to each value, non-finite results dropped.
fn map_series(s: Series, f: impl Fn(f64) -> f64) -> Series {
    let points = s
        .points
        .into_iter()
        .map(|(t, v)| (t, f(v)))
        .filter(|(_, v)| v.is_finite())
        .collect();
    Series {
        label: s.label,
        points,
    }
}

/// `f` applied to every value of a scalar, series or array.
fn map(v: Val, f: impl Fn(f64) -> f64) -> Val {
    match v {
        Val::Scalar(x) => Val::Scalar(f(x)),
        Val::Series(s) => Val::Series(map_series(s, f)),
        Val::Array(xs) => Val::Array(xs.into_iter().map(|s| map_series(s, &f)).collect()),
    }
}

/// A series-to-series function applied to a series or to each series of an array.
fn each(v: Val, name: &str, f: impl Fn(Series) -> Result<Series>) -> Result<Val> {
    match v {
        Val::Series(s) => Ok(Val::Series(f(s)?)),
        Val::Array(xs) => Ok(Val::Array(xs.into_iter().map(f).collect::<Result<_>>()?)),
        Val::Scalar(_) => invalid(format!("{name} takes a time series, not a scalar")),
    }
}

fn binary(op: Op, a: Val, b: Val) -> Result<Val> {
    Ok(match (a, b) {
        (Val::Scalar(x), Val::Scalar(y)) => Val::Scalar(apply(op, x, y)),
        (Val::Series(s), Val::Scalar(y)) => Val::Series(map_series(s, |x| apply(op, x, y))),
        (Val::Scalar(x), Val::Series(s)) => Val::Series(map_series(s, |y| apply(op, x, y))),
        (Val::Series(a), Val::Series(b)) => {
            let points = a
                .points
                .iter()
                .filter_map(|(t, x)| b.points.get(t).map(|y| (*t, apply(op, *x, *y))))
                .filter(|(_, v)| v.is_finite())
                .collect();
            Val::Series(Series {
                label: a.label,
                points,
            })
        }
        (Val::Array(_), Val::Array(_)) => {
            return invalid("an operator cannot combine two arrays of time series")
        }
        (Val::Array(xs), other) => Val::Array(series_of(xs, |s| binary(op, s, other.clone()))?),
        (other, Val::Array(xs)) => Val::Array(series_of(xs, |s| binary(op, other.clone(), s))?),
    })
}

/// Each series of an array through `f`, which gives a series back for a series.
fn series_of(xs: Vec<Series>, f: impl Fn(Val) -> Result<Val>) -> Result<Vec<Series>> {
    xs.into_iter()
        .map(|s| match f(Val::Series(s))? {
            Val::Series(s) => Ok(s),
            _ => invalid("an array of time series cannot be nested"),
        })
        .collect()
}

fn arity(name: &str, args: &[Expr], range: std::ops::RangeInclusive<usize>) -> Result<()> {
    if range.contains(&args.len()) {
        return Ok(());
    }
    let (min, max) = (*range.start(), *range.end());
    let count = if min == max {
        format!("{min}")
    } else {
        format!("{min} to {max}")
    };
    invalid(format!(
        "{name} takes {count} argument{}, not {}",
        if max == 1 { "" } else { "s" },
        args.len()
    ))
}

fn text_arg<'e>(name: &str, arg: &'e Expr) -> Result<&'e str> {
    match arg {
        Expr::Text(t) => Ok(t),
        _ => invalid(format!("{name} takes a string here")),
    }
}

fn call(name: &str, args: &[Expr], inputs: &dyn Inputs) -> Result<Val> {
    let arg = |i: usize| eval(&args[i], inputs);
    match name {
        "ABS" | "CEIL" | "FLOOR" => {
            arity(name, args, 1..=1)?;
            let f = match name {
                "ABS" => f64::abs,
                "CEIL" => f64::ceil,
                _ => f64::floor,
            };
            Ok(map(arg(0)?, f))
        }
        "SUM" | "AVG" | "MIN" | "MAX" | "STDDEV" => {
            arity(name, args, 1..=1)?;
            Ok(aggregate(name, arg(0)?))
        }
        "METRICS" => {
            arity(name, args, 0..=1)?;
            let filter = args.first().map(|a| text_arg(name, a)).transpose()?;
            Ok(Val::Array(inputs.metrics(filter)?))
        }
        "FILL" => {
            arity(name, args, 2..=2)?;
            let with = match &args[1] {
                Expr::Keyword(k) if k.eq_ignore_ascii_case("REPEAT") => Fill::Repeat,
                Expr::Keyword(k) if k.eq_ignore_ascii_case("LINEAR") => Fill::Linear,
                other => match eval(other, inputs)? {
                    Val::Scalar(x) => Fill::Value(x),
                    _ => return invalid("FILL takes a number, REPEAT or LINEAR to fill with"),
                },
            };
            each(arg(0)?, name, |s| Ok(fill(s, inputs.grid(), with)))
        }
        "RATE" | "DIFF" => {
            arity(name, args, 1..=1)?;
            let per_second = name == "RATE";
            each(arg(0)?, name, |s| Ok(change(s, per_second)))
        }
        "IF" => {
            arity(name, args, 2..=3)?;
            let otherwise = args.get(2).map(|e| eval(e, inputs)).transpose()?;
            choose(arg(0)?, &arg(1)?, otherwise.as_ref(), inputs.grid())
        }
        "SEARCH" => {
            arity(name, args, 3..=3)?;
            let text = text_arg(name, &args[0])?;
            let stat = text_arg(name, &args[1])?;
            let period = match arg(2)? {
                Val::Scalar(p) if p >= 1.0 && p.fract() == 0.0 => p as i64,
                _ => return invalid("SEARCH takes a period in seconds as its third argument"),
            };
            Ok(Val::Array(inputs.search(text, stat, period)?))
        }
        "TIME_SERIES" => {
            arity(name, args, 1..=1)?;
            match arg(0)? {
                Val::Scalar(x) => Ok(Val::Series(constant(x, inputs.grid()))),
                _ => invalid("TIME_SERIES takes a number"),
            }
        }
        other => invalid(format!("unknown function {other}")),
    }
}

/// A series of `x` at every period start of `grid` (none when `x` is not finite).
pub(crate) fn constant(x: f64, grid: &[i64]) -> Series {
    let points = if x.is_finite() {
        grid.iter().map(|t| (*t, x)).collect()
    } else {
        BTreeMap::new()
    };
    Series {
        label: String::new(),
        points,
    }
}

fn statistic(name: &str, values: &[f64]) -> f64 {
    if values.is_empty() {
        return f64::NAN;
    }
    let n = values.len() as f64;
    let sum: f64 = values.iter().sum();
    match name {
        "SUM" => sum,
        "AVG" => sum / n,
        "MIN" => values.iter().copied().fold(f64::INFINITY, f64::min),
        "MAX" => values.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        _ => {
            let mean = sum / n;
            (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / n).sqrt()
        }
    }
}

fn aggregate(name: &str, v: Val) -> Val {
    match v {
        Val::Scalar(x) => Val::Scalar(x),
        Val::Series(s) => Val::Scalar(statistic(name, &s.points.into_values().collect::<Vec<_>>())),
        Val::Array(xs) => {
            let mut at: BTreeMap<i64, Vec<f64>> = BTreeMap::new();
            for s in xs {
                for (t, v) in s.points {
                    at.entry(t).or_default().push(v);
                }
            }
            let points = at
                .into_iter()
                .map(|(t, vs)| (t, statistic(name, &vs)))
                .collect();
            Val::Series(Series {
                label: String::new(),
                points,
            })
        }
    }
}

#[derive(Clone, Copy)]
enum Fill {
    Value(f64),
    Repeat,
    Linear,
}

fn fill(mut s: Series, grid: &[i64], with: Fill) -> Series {
    let known: Vec<(i64, f64)> = s.points.iter().map(|(t, v)| (*t, *v)).collect();
    for &t in grid {
        if s.points.contains_key(&t) {
            continue;
        }
        let value = match with {
            Fill::Value(x) => Some(x),
            Fill::Repeat | Fill::Linear => {
                let after = known.partition_point(|(k, _)| *k < t);
                let before = after.checked_sub(1).map(|i| known[i]);
                match (before, known.get(after).copied()) {
                    (Some((t0, v0)), Some((t1, v1))) if matches!(with, Fill::Linear) => {
                        Some(v0 + (v1 - v0) * (t - t0) as f64 / (t1 - t0) as f64)
                    }
                    (Some((_, v)), _) | (None, Some((_, v))) => Some(v),
                    (None, None) => None,
                }
            }
        };
        if let Some(v) = value.filter(|v| v.is_finite()) {
            s.points.insert(t, v);
        }
    }
    s
}

fn change(s: Series, per_second: bool) -> Series {
    let pairs: Vec<(i64, f64)> = s.points.into_iter().collect();
    let points = pairs
        .windows(2)
        .map(|w| {
            let (t0, v0) = w[0];
            let (t1, v1) = w[1];
            let d = v1 - v0;
            (
                t1,
                if per_second {
                    d * 1000.0 / (t1 - t0) as f64
                } else {
                    d
                },
            )
        })
        .collect();
    Series {
        label: s.label,
        points,
    }
}

/// A value at `t`: a scalar everywhere, a series where it has a datapoint.
fn value_at(v: &Val, t: i64) -> Option<f64> {
    match v {
        Val::Scalar(x) => Some(*x),
        Val::Series(s) => s.points.get(&t).copied(),
        Val::Array(_) => None,
    }
}

fn choose(cond: Val, then: &Val, otherwise: Option<&Val>, grid: &[i64]) -> Result<Val> {
    if matches!(then, Val::Array(_)) || matches!(otherwise, Some(Val::Array(_))) {
        return invalid("IF takes a time series or a number as its second and third arguments");
    }
    let pick = |s: Series| -> Series {
        let points = s
            .points
            .iter()
            .filter_map(|(t, c)| {
                let chosen = if *c != 0.0 { Some(then) } else { otherwise };
                chosen.and_then(|v| value_at(v, *t)).map(|v| (*t, v))
            })
            .filter(|(_, v)| v.is_finite())
            .collect();
        Series {
            label: s.label,
            points,
        }
    };
    match cond {
        Val::Scalar(c) => Ok(Val::Series(pick(constant(c, grid)))),
        Val::Series(s) => Ok(Val::Series(pick(s))),
        Val::Array(xs) => Ok(Val::Array(xs.into_iter().map(pick).collect())),
    }
}

#[cfg(test)]
mod tests {
    use super::super::parse::parse;
    use super::*;

    const MIN: i64 = 60_000;

    struct Fixed {
        grid: Vec<i64>,
        m1: Series,
        m2: Series,
    }

    fn series(label: &str, points: &[(i64, f64)]) -> Series {
        Series {
            label: label.to_string(),
            points: points.iter().map(|(t, v)| (t * MIN, *v)).collect(),
        }
    }

    impl Inputs for Fixed {
        fn query(&self, id: &str) -> Result<Val> {
            match id {
                "m1" => Ok(Val::Series(self.m1.clone())),
                "m2" => Ok(Val::Series(self.m2.clone())),
                other => invalid(format!("unknown metric id {other}")),
            }
        }
        fn metrics(&self, filter: Option<&str>) -> Result<Vec<Series>> {
            Ok([&self.m1, &self.m2]
                .into_iter()
                .filter(|s| filter.is_none_or(|f| s.label.contains(f)))
                .cloned()
                .collect())
        }
        fn search(&self, _: &str, _: &str, _: i64) -> Result<Vec<Series>> {
            Ok(vec![self.m1.clone()])
        }
        fn grid(&self) -> &[i64] {
            &self.grid
        }
    }

    fn fixed() -> Fixed {
        Fixed {
            grid: (0..5).map(|i| i * MIN).collect(),
            m1: series("Errors", &[(0, 2.0), (1, 4.0), (3, 10.0)]),
            m2: series("Requests", &[(0, 4.0), (1, 0.0), (2, 5.0), (3, 20.0)]),
        }
    }

    fn run(text: &str) -> Val {
        match eval(&parse(text).unwrap(), &fixed()) {
            Ok(v) => v,
            Err(Fault::Invalid(m)) => panic!("{text}: {m}"),
            Err(Fault::Aws(e)) => panic!("{text}: {e:?}"),
        }
    }

    fn points(v: Val) -> Vec<(i64, f64)> {
        match v {
            Val::Series(s) => s.points.into_iter().map(|(t, v)| (t / MIN, v)).collect(),
            other => panic!("{other:?}"),
        }
    }

    #[test]
    fn arithmetic_meets_series_at_common_timestamps_and_drops_division_by_zero() {
        assert_eq!(points(run("m1 / m2 * 100")), vec![(0, 50.0), (3, 50.0)]);
        assert_eq!(points(run("m1 + 1")), vec![(0, 3.0), (1, 5.0), (3, 11.0)]);
        assert_eq!(run("2 ^ 3 - 1"), Val::Scalar(7.0));
        assert_eq!(
            points(run("m2 >= 5 || m2 == 0")),
            vec![(0, 0.0), (1, 1.0), (2, 1.0), (3, 1.0)]
        );
    }

    #[test]
    fn aggregates_of_a_series_are_scalars_and_of_an_array_series() {
        assert_eq!(run("SUM(m1)"), Val::Scalar(16.0));
        assert_eq!(run("MAX(m2)"), Val::Scalar(20.0));
        assert_eq!(run("STDDEV(m1)"), Val::Scalar(run_stddev()));
        assert_eq!(
            points(run("SUM(METRICS())")),
            vec![(0, 6.0), (1, 4.0), (2, 5.0), (3, 30.0)]
        );
        assert_eq!(
            points(run("AVG(METRICS('Err'))")),
            vec![(0, 2.0), (1, 4.0), (3, 10.0)]
        );
        assert_eq!(
            points(run("m1 - MIN(m1)")),
            vec![(0, 0.0), (1, 2.0), (3, 8.0)]
        );
    }

    fn run_stddev() -> f64 {
        let values: [f64; 3] = [2.0, 4.0, 10.0];
        let mean = 16.0 / 3.0;
        (values.iter().map(|v| (v - mean).powi(2)).sum::<f64>() / 3.0).sqrt()
    }

    #[test]
    fn fill_repeat_linear_and_values() {
        assert_eq!(
            points(run("FILL(m1, 0)")),
            vec![(0, 2.0), (1, 4.0), (2, 0.0), (3, 10.0), (4, 0.0)]
        );
        assert_eq!(
            points(run("FILL(m1, REPEAT)")),
            vec![(0, 2.0), (1, 4.0), (2, 4.0), (3, 10.0), (4, 10.0)]
        );
        assert_eq!(
            points(run("FILL(m1, LINEAR)")),
            vec![(0, 2.0), (1, 4.0), (2, 7.0), (3, 10.0), (4, 10.0)]
        );
    }

    #[test]
    fn rate_diff_if_and_functions() {
        assert_eq!(points(run("DIFF(m1)")), vec![(1, 2.0), (3, 6.0)]);
        assert_eq!(
            points(run("RATE(m1)")),
            vec![(1, 2.0 / 60.0), (3, 6.0 / 120.0)]
        );
        assert_eq!(
            points(run("IF(m2 > 4, m2, 0)")),
            vec![(0, 0.0), (1, 0.0), (2, 5.0), (3, 20.0)]
        );
        assert_eq!(points(run("IF(m2 > 4, m1)")), vec![(3, 10.0)]);
        assert_eq!(
            points(run("ABS(-m1) + CEIL(0.5) + FLOOR(0.5)")),
            vec![(0, 3.0), (1, 5.0), (3, 11.0)]
        );
        assert_eq!(points(run("TIME_SERIES(1)")).len(), 5);
        assert!(matches!(run("SEARCH('x', 'Sum', 60)"), Val::Array(a) if a.len() == 1));
    }

    #[test]
    fn wrong_calls_are_invalid() {
        for bad in [
            "FOO(m1)",
            "FILL(m1)",
            "m9 + 1",
            "RATE(1)",
            "METRICS() + METRICS()",
            "'s' + 1",
            "SEARCH(m1, 'Sum', 60)",
            "FILL(m1, FOO)",
        ] {
            let e = eval(&parse(bad).unwrap(), &fixed());
            assert!(matches!(e, Err(Fault::Invalid(_))), "{bad}");
        }
    }
}
