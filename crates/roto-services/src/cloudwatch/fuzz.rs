//! Entry points for the fuzzer (`crates/roto-fuzz`): a composite alarm rule, and a metric
//! math expression, parsed and evaluated. They exist so the fuzzer can reach private
//! modules; nothing in the server calls them.

use std::collections::BTreeMap;

use super::math::{self, Fault, Inputs, Series, Val};
use super::rule;

/// Parses `text` as PutCompositeAlarm reads an AlarmRule, and evaluates it with every alarm
/// in ALARM except those whose name starts with `o`.
pub fn fuzz_alarm_rule(text: &str) {
    if let Ok(rule) = rule::parse(text) {
        let names = rule.alarms().len();
        let state =
            |name: &str| Some(if name.starts_with('o') { "OK" } else { "ALARM" }.to_string());
        let _ = (names, rule.holds(&state));
    }
}

/// A request of two metrics (`m1`, `m2`) over ten one-minute periods, with gaps; SEARCH
/// finds both.
struct Fixed {
    grid: Vec<i64>,
    metrics: Vec<Series>,
}

impl Inputs for Fixed {
    fn query(&self, id: &str) -> Result<Val, Fault> {
        match id {
            "m1" => Ok(Val::Series(self.metrics[0].clone())),
            "m2" => Ok(Val::Series(self.metrics[1].clone())),
            other => Err(Fault::Invalid(format!("unknown metric id {other}"))),
        }
    }
    fn metrics(&self, filter: Option<&str>) -> Result<Vec<Series>, Fault> {
        Ok(self
            .metrics
            .iter()
            .filter(|s| filter.is_none_or(|f| s.label.contains(f)))
            .cloned()
            .collect())
    }
    fn search(&self, _: &str, _: &str, _: i64) -> Result<Vec<Series>, Fault> {
        Ok(self.metrics.clone())
    }
    fn grid(&self) -> &[i64] {
        &self.grid
    }
}

/// Parses `text` as a GetMetricData Expression and evaluates it over two fixed metrics.
pub fn fuzz_metric_math(text: &str) {
    let Ok(expr) = math::parse(text) else {
        return;
    };
    let series = |label: &str, every: i64| Series {
        label: label.to_string(),
        points: (0..10)
            .filter(|i| i % every != 0)
            .map(|i| (i * 60_000, (i * i) as f64 - 7.5))
            .collect::<BTreeMap<_, _>>(),
    };
    let inputs = Fixed {
        grid: (0..10).map(|i| i * 60_000).collect(),
        metrics: vec![series("Errors", 3), series("Requests", 4)],
    };
    let _ = math::eval(&expr, &inputs);
}
