//! One evaluation of a metric alarm: its last EvaluationPeriods datapoints (some missing)
//! against its threshold, with DatapointsToAlarm and TreatMissingData, giving the state the
//! alarm should be in and the reason, in AWS's words and with AWS's `StateReasonData`.
//!
//! Missing datapoints count as breaching or not for `breaching` and `notBreaching`; for
//! `missing` and `ignore` they are left out, and the alarm goes to ALARM when at least
//! DatapointsToAlarm of the datapoints present breach (or all of them, when fewer are
//! present), to OK otherwise. With no datapoint at all, `missing` gives INSUFFICIENT_DATA
//! and `ignore` keeps the current state.

use roto_core::timestamp::{format, TimestampFormat};
use serde_json::{json, Value as Json};

/// The alarm states.
pub(super) const ALARM: &str = "ALARM";
pub(super) const OK: &str = "OK";
pub(super) const INSUFFICIENT: &str = "INSUFFICIENT_DATA";

/// The comparison operators a threshold alarm may use, and how AWS words them.
const COMPARISONS: &[(&str, &str)] = &[
    ("GreaterThanOrEqualToThreshold", "greater than or equal to"),
    ("GreaterThanThreshold", "greater than"),
    ("LessThanThreshold", "less than"),
    ("LessThanOrEqualToThreshold", "less than or equal to"),
];

/// The operators that compare with an anomaly detection band (stored, evaluated only with
/// the band's expression).
pub(super) const BAND_COMPARISONS: &[&str] = &[
    "LessThanLowerOrGreaterThanUpperThreshold",
    "LessThanLowerThreshold",
    "GreaterThanUpperThreshold",
];

/// The values of TreatMissingData.
pub(super) const TREAT_MISSING: &[&str] = &["breaching", "notBreaching", "ignore", "missing"];

/// Whether `op` is a threshold comparison this module evaluates.
pub(super) fn is_threshold_comparison(op: &str) -> bool {
    COMPARISONS.iter().any(|(name, _)| *name == op)
}

/// What an evaluation compares: the alarm's rule.
#[derive(Debug, Clone)]
pub(super) struct Rule<'a> {
    pub comparison: &'a str,
    pub threshold: f64,
    pub evaluation_periods: usize,
    /// DatapointsToAlarm as given (None: all of EvaluationPeriods, "N consecutive").
    pub datapoints_to_alarm: Option<usize>,
    pub treat_missing: &'a str,
    /// `("statistic", "Average")` or `("extendedStatistic", "p99")`; None for a math
    /// expression.
    pub statistic: Option<(&'a str, &'a str)>,
    pub period: i64,
    pub unit: Option<&'a str>,
}

/// One period's datapoint: its start and, when it has data, its value and sample count.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(super) struct Point {
    pub start: i64,
    pub value: Option<(f64, f64)>,
}

/// A state an evaluation arrived at, with its reason and reason data (JSON text).
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Verdict {
    pub state: &'static str,
    pub reason: String,
    pub data: String,
}

impl Rule<'_> {
    fn breaches(&self, v: f64) -> bool {
        match self.comparison {
            "GreaterThanOrEqualToThreshold" => v >= self.threshold,
            "GreaterThanThreshold" => v > self.threshold,
            "LessThanThreshold" => v < self.threshold,
            _ => v <= self.threshold,
        }
    }

    fn words(&self) -> &'static str {
        COMPARISONS
            .iter()
            .find(|(name, _)| *name == self.comparison)
            .map_or("less than or equal to", |(_, w)| w)
    }

    fn needed(&self) -> usize {
        self.datapoints_to_alarm.unwrap_or(self.evaluation_periods)
    }
}

/// Evaluates `points` (oldest first, one per period) at `now`; None keeps the current
/// state (`ignore` with no data).
pub(super) fn evaluate(rule: &Rule<'_>, points: &[Point], now: i64) -> Option<Verdict> {
    let present: Vec<(i64, f64)> = points
        .iter()
        .filter_map(|p| p.value.map(|(v, _)| (p.start, v)))
        .collect();
    let missing = points.len() - present.len();
    let data = reason_data(rule, points, now);
    if present.is_empty() {
        let verdict = |state, reason| Verdict {
            state,
            reason,
            data,
        };
        return match rule.treat_missing {
            "breaching" => Some(verdict(ALARM, all_missing(missing, "Breaching"))),
            "notBreaching" => Some(verdict(OK, all_missing(missing, "NonBreaching"))),
            "ignore" => None,
            _ => Some(verdict(
                INSUFFICIENT,
                format!(
                    "Insufficient Data: {} {} unknown.",
                    datapoints(missing),
                    if missing == 1 { "was" } else { "were" }
                ),
            )),
        };
    }
    let missing_breach = rule.treat_missing == "breaching";
    let counts_missing = matches!(rule.treat_missing, "breaching" | "notBreaching");
    let breaching: Vec<(i64, f64)> = present
        .iter()
        .copied()
        .filter(|(_, v)| rule.breaches(*v))
        .collect();
    let mut breach_count = breaching.len();
    if counts_missing && missing_breach {
        breach_count += missing;
    }
    let considered = if counts_missing {
        points.len()
    } else {
        present.len()
    };
    let needed = rule.needed().min(considered).max(1);
    let alarm = breach_count >= needed;
    let shown: Vec<(i64, f64)> = if alarm {
        breaching
    } else {
        present
            .iter()
            .copied()
            .filter(|(_, v)| !rule.breaches(*v))
            .collect()
    };
    let reason = crossed(rule, &shown, considered, alarm);
    Some(Verdict {
        state: if alarm { ALARM } else { OK },
        reason,
        data,
    })
}

/// "no datapoints were received for 2 periods and 2 missing datapoints were treated as
/// [Breaching]."
fn all_missing(n: usize, treated: &str) -> String {
    let periods = if n == 1 { "period" } else { "periods" };
    let verb = if n == 1 { "was" } else { "were" };
    format!(
        "Threshold Crossed: no datapoints were received for {n} {periods} and {n} missing {} {verb} treated as [{treated}].",
        if n == 1 { "datapoint" } else { "datapoints" }
    )
}

/// "Threshold Crossed: 1 datapoint [5.0 (04/12/26 14:30:00)] was greater than the threshold
/// (3.0)." or, for M out of N alarms, "2 out of the last 3 datapoints [...] were ... (minimum
/// 2 datapoints for OK -> ALARM transition)."
fn crossed(rule: &Rule<'_>, shown: &[(i64, f64)], considered: usize, alarm: bool) -> String {
    let listed = shown
        .iter()
        .rev()
        .map(|(t, v)| format!("{} ({})", java_double(*v), reason_date(*t)))
        .collect::<Vec<_>>()
        .join(", ");
    let n = shown.len();
    let verb = if n == 1 { "was" } else { "were" };
    let not = if alarm { "" } else { "not " };
    let threshold = java_double(rule.threshold);
    let words = rule.words();
    match rule.datapoints_to_alarm {
        Some(m) if m < rule.evaluation_periods => {
            let (min, transition) = if alarm {
                (m, "OK -> ALARM")
            } else {
                (considered.saturating_sub(m) + 1, "ALARM -> OK")
            };
            format!(
                "Threshold Crossed: {n} out of the last {considered} datapoints [{listed}] {verb} {not}{words} the threshold ({threshold}) (minimum {} for {transition} transition).",
                datapoints(min)
            )
        }
        _ => format!(
            "Threshold Crossed: {} [{listed}] {verb} {not}{words} the threshold ({threshold}).",
            datapoints(n)
        ),
    }
}

fn datapoints(n: usize) -> String {
    format!("{n} {}", if n == 1 { "datapoint" } else { "datapoints" })
}

/// `StateReasonData` as AWS writes it for a threshold evaluation.
fn reason_data(rule: &Rule<'_>, points: &[Point], now: i64) -> String {
    let recent: Vec<f64> = points.iter().filter_map(|p| p.value.map(|v| v.0)).collect();
    let evaluated: Vec<Json> = points
        .iter()
        .rev()
        .filter_map(|p| {
            p.value.map(|(v, count)| {
                json!({"timestamp": reason_timestamp(p.start), "sampleCount": count, "value": v})
            })
        })
        .collect();
    let mut data = json!({
        "version": "1.0",
        "queryDate": reason_timestamp(now),
        "startDate": reason_timestamp(points.first().map_or(now, |p| p.start)),
        "period": rule.period,
        "recentDatapoints": recent,
        "threshold": rule.threshold,
    });
    if let Some((kind, name)) = rule.statistic {
        data[kind] = json!(name);
    }
    if let Some(unit) = rule.unit {
        data["unit"] = json!(unit);
    }
    if !evaluated.is_empty() {
        data["evaluatedDatapoints"] = Json::Array(evaluated);
    }
    data.to_string()
}

/// `2026-12-04T14:30:00.000+0000`, the timestamps of reason data and notifications.
pub(super) fn reason_timestamp(millis: i64) -> String {
    let iso = format(millis, TimestampFormat::Iso8601);
    format!("{}+0000", iso.trim_end_matches('Z'))
}

/// `04/12/26 14:30:00`, the datapoint times of a reason.
fn reason_date(millis: i64) -> String {
    let iso = format(millis, TimestampFormat::Iso8601);
    // yyyy-mm-ddThh:mm:ss.sssZ
    format!(
        "{}/{}/{} {}",
        &iso[8..10],
        &iso[5..7],
        &iso[2..4],
        &iso[11..19]
    )
}

/// A number as Java prints a double (`5.0`, `0.25`, `1.0E7`), as AWS's reasons show them.
pub(super) fn java_double(v: f64) -> String {
    if !v.is_finite() {
        return v.to_string();
    }
    let a = v.abs();
    if a != 0.0 && !(1e-3..1e7).contains(&a) {
        let exp = a.log10().floor() as i32;
        let mantissa = v / 10f64.powi(exp);
        let m = format!("{mantissa}");
        let m = if m.contains('.') { m } else { format!("{m}.0") };
        return format!("{m}E{exp}");
    }
    let s = format!("{v}");
    if s.contains('.') {
        s
    } else {
        format!("{s}.0")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn rule<'a>(n: usize, m: Option<usize>, missing: &'a str) -> Rule<'a> {
        Rule {
            comparison: "GreaterThanThreshold",
            threshold: 3.0,
            evaluation_periods: n,
            datapoints_to_alarm: m,
            treat_missing: missing,
            statistic: Some(("statistic", "Average")),
            period: 60,
            unit: None,
        }
    }

    fn points(values: &[Option<f64>]) -> Vec<Point> {
        values
            .iter()
            .enumerate()
            .map(|(i, v)| Point {
                start: 1_796_400_000_000 + i as i64 * 60_000,
                value: v.map(|v| (v, 1.0)),
            })
            .collect()
    }

    #[test]
    fn one_breaching_datapoint_alarms_in_aws_words() {
        let v = evaluate(&rule(1, None, "missing"), &points(&[Some(5.0)]), 0).unwrap();
        assert_eq!(v.state, ALARM);
        assert_eq!(
            v.reason,
            "Threshold Crossed: 1 datapoint [5.0 (04/12/26 16:00:00)] was greater than the threshold (3.0)."
        );
        let data: Json = serde_json::from_str(&v.data).unwrap();
        assert_eq!(data["recentDatapoints"], json!([5.0]));
        assert_eq!(
            data["evaluatedDatapoints"][0]["timestamp"],
            "2026-12-04T16:00:00.000+0000"
        );
    }

    #[test]
    fn m_out_of_n_counts_breaching_datapoints() {
        let r = rule(3, Some(2), "missing");
        let v = evaluate(&r, &points(&[Some(5.0), Some(1.0), Some(4.0)]), 0).unwrap();
        assert_eq!(v.state, ALARM);
        assert!(v
            .reason
            .starts_with("Threshold Crossed: 2 out of the last 3 datapoints [4.0"));
        assert!(v
            .reason
            .ends_with("(minimum 2 datapoints for OK -> ALARM transition)."));
        let v = evaluate(&r, &points(&[Some(5.0), Some(1.0), Some(1.0)]), 0).unwrap();
        assert_eq!(v.state, OK);
        assert!(v
            .reason
            .contains("were not greater than the threshold (3.0)"));
    }

    #[test]
    fn missing_data_follows_treat_missing_data() {
        let none = points(&[None, None]);
        let missing = evaluate(&rule(2, None, "missing"), &none, 0).unwrap();
        assert_eq!(missing.state, INSUFFICIENT);
        assert_eq!(
            missing.reason,
            "Insufficient Data: 2 datapoints were unknown."
        );
        assert!(evaluate(&rule(2, None, "ignore"), &none, 0).is_none());
        let breaching = evaluate(&rule(2, None, "breaching"), &none, 0).unwrap();
        assert_eq!(breaching.state, ALARM);
        assert_eq!(breaching.reason, "Threshold Crossed: no datapoints were received for 2 periods and 2 missing datapoints were treated as [Breaching].");
        let ok = evaluate(&rule(2, None, "notBreaching"), &none, 0).unwrap();
        assert_eq!(ok.state, OK);
        let half = points(&[None, Some(9.0)]);
        assert_eq!(
            evaluate(&rule(2, None, "missing"), &half, 0).unwrap().state,
            ALARM
        );
        assert_eq!(
            evaluate(&rule(2, None, "notBreaching"), &half, 0)
                .unwrap()
                .state,
            OK
        );
        assert_eq!(
            evaluate(&rule(2, None, "breaching"), &half, 0)
                .unwrap()
                .state,
            ALARM
        );
    }

    #[test]
    fn every_comparison_operator() {
        for (op, at, expected) in [
            ("GreaterThanOrEqualToThreshold", 3.0, ALARM),
            ("GreaterThanThreshold", 3.0, OK),
            ("LessThanThreshold", 2.0, ALARM),
            ("LessThanOrEqualToThreshold", 3.0, ALARM),
            ("LessThanThreshold", 3.0, OK),
        ] {
            let mut r = rule(1, None, "missing");
            r.comparison = op;
            let v = evaluate(&r, &points(&[Some(at)]), 0).unwrap();
            assert_eq!(v.state, expected, "{op} {at}");
        }
    }

    #[test]
    fn doubles_print_as_java_prints_them() {
        assert_eq!(java_double(5.0), "5.0");
        assert_eq!(java_double(0.25), "0.25");
        assert_eq!(java_double(-2.0), "-2.0");
        assert_eq!(java_double(1e7), "1.0E7");
        assert_eq!(java_double(0.0), "0.0");
    }
}
