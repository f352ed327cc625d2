//! Scheduled rules: `rate(...)` and `cron(...)` expressions, and the task that fires them.
//!
//! The task wakes every second and asks [`Events::tick`] which enabled scheduled rules are
//! due at the service's clock; a due rule sends AWS's `Scheduled Event` to its targets and
//! records when it fired. Tests drive `tick` with any time, so none waits for a minute.

use std::sync::Weak;
use std::time::Duration;

use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult};
use serde_json::json;

use super::put_events::event_time;
use super::rules::{Rule, RULE_COLUMNS};
use super::{new_id, Events};

const MINUTE: i64 = 60_000;

/// A parsed schedule expression.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Schedule {
    /// Every so many milliseconds.
    Rate(i64),
    /// Minutes, hours, days of month, months, days of week (1 = Sunday), years.
    Cron(Box<[Field; 6]>),
}

/// The values one cron field allows (`None`: any), plus the `L`/`W`/`#` forms.
#[derive(Debug, Clone, PartialEq, Default)]
pub(super) struct Field {
    values: Option<Vec<u32>>,
    last: bool,
    nth: Option<(u32, u32)>,
    last_weekday: Option<u32>,
}

fn invalid() -> AwsError {
    AwsError::validation("Parameter ScheduleExpression is not valid.")
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

impl Schedule {
    /// Parses a schedule expression, else AWS's `ValidationException`.
    pub(super) fn parse(text: &str) -> AwsResult<Schedule> {
        if let Some(body) = text.strip_prefix("rate(").and_then(|t| t.strip_suffix(')')) {
            let (n, unit) = body.trim().split_once(' ').ok_or_else(invalid)?;
            let n: i64 = n.parse().map_err(|_| invalid())?;
            let per = match (unit, n == 1) {
                ("minute", true) | ("minutes", false) => MINUTE,
                ("hour", true) | ("hours", false) => 60 * MINUTE,
                ("day", true) | ("days", false) => 24 * 60 * MINUTE,
                _ => return Err(invalid()),
            };
            if n < 1 {
                return Err(invalid());
            }
            return n.checked_mul(per).map(Schedule::Rate).ok_or_else(invalid);
        }
        let body = text
            .strip_prefix("cron(")
            .and_then(|t| t.strip_suffix(')'))
            .ok_or_else(invalid)?;
        let parts: Vec<&str> = body.split_whitespace().collect();
        if parts.len() != 6 || (parts[2] == "?") == (parts[4] == "?") {
            return Err(invalid());
        }
        let ranges = [(0, 59), (0, 23), (1, 31), (1, 12), (1, 7), (1970, 2199)];
        let mut fields: [Field; 6] = Default::default();
        for (i, part) in parts.iter().enumerate() {
            fields[i] = field(part, ranges[i], i).ok_or_else(invalid)?;
        }
        Ok(Schedule::Cron(Box::new(fields)))
    }

    /// Whether a cron schedule fires in the minute starting at `minute` (epoch millis).
    pub(super) fn cron_matches(fields: &[Field; 6], minute: EpochMillis) -> bool {
        let t = Civil::of(minute);
        let dim = days_in_month(t.year, t.month);
        let simple = |f: &Field, v: u32| f.values.as_ref().is_none_or(|vs| vs.contains(&v));
        let dom = &fields[2];
        let dom_ok = if dom.last {
            t.day == dim
        } else {
            simple(dom, t.day)
        };
        let dow = &fields[4];
        let dow_ok = match (dow.nth, dow.last_weekday) {
            (Some((d, n)), _) => t.weekday == d && (t.day - 1) / 7 + 1 == n,
            (_, Some(d)) => t.weekday == d && t.day + 7 > dim,
            _ => simple(dow, t.weekday),
        };
        simple(&fields[0], t.minute)
            && simple(&fields[1], t.hour)
            && dom_ok
            && simple(&fields[3], t.month)
            && dow_ok
            && simple(&fields[5], t.year as u32)
    }
}

/// Parses one cron field (`*`, `?`, lists, ranges, steps, names, `L`, `W`, `#`).
fn field(text: &str, (lo, hi): (u32, u32), index: usize) -> Option<Field> {
    if text == "*" || text == "?" {
        return Some(Field::default());
    }
    if index == 2 && text == "L" {
        return Some(Field {
            last: true,
            ..Field::default()
        });
    }
    if index == 2 {
        if let Some(day) = text.strip_suffix('W') {
            let d = number(day, index)?;
            return (lo..=hi).contains(&d).then(|| Field {
                values: Some(vec![d]),
                ..Field::default()
            });
        }
    }
    if index == 4 {
        if let Some((d, n)) = text.split_once('#') {
            let (d, n): (u32, u32) = (number(d, index)?, n.parse().ok()?);
            return ((1..=7).contains(&d) && (1..=5).contains(&n)).then(|| Field {
                nth: Some((d, n)),
                ..Field::default()
            });
        }
        if let Some(d) = text.strip_suffix('L') {
            let d = number(d, index)?;
            return (1..=7).contains(&d).then(|| Field {
                last_weekday: Some(d),
                ..Field::default()
            });
        }
    }
    let mut values = Vec::new();
    for item in text.split(',') {
        let (range, step) = match item.split_once('/') {
            Some((r, s)) => (r, s.parse::<u32>().ok().filter(|s| *s > 0)?),
            None => (item, 1),
        };
        let (start, end) = match range.split_once('-') {
            _ if range == "*" => (lo, hi),
            Some((a, b)) => (number(a, index)?, number(b, index)?),
            None => {
                let a = number(range, index)?;
                (a, if item.contains('/') { hi } else { a })
            }
        };
        if start < lo || end > hi || start > end {
            return None;
        }
        values.extend((start..=end).step_by(step as usize));
    }
    Some(Field {
        values: Some(values),
        ..Field::default()
    })
}

/// A field value: a number, or a month or weekday name.
fn number(text: &str, index: usize) -> Option<u32> {
    let names: &[&str] = match index {
        3 => &MONTHS,
        4 => &DAYS,
        _ => &[],
    };
    match names.iter().position(|n| n.eq_ignore_ascii_case(text)) {
        Some(i) => Some(i as u32 + 1),
        None => text.parse().ok(),
    }
}

/// A UTC date and time broken into fields.
struct Civil {
    year: i64,
    month: u32,
    day: u32,
    hour: u32,
    minute: u32,
    /// 1 = Sunday.
    weekday: u32,
}

impl Civil {
    fn of(millis: EpochMillis) -> Civil {
        let days = millis.div_euclid(86_400_000);
        let in_day = millis.rem_euclid(86_400_000) / MINUTE;
        // Howard Hinnant's civil_from_days.
        let z = days + 719_468;
        let era = z.div_euclid(146_097);
        let doe = z.rem_euclid(146_097);
        let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
        let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
        let mp = (5 * doy + 2) / 153;
        let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
        let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
        let year = yoe + era * 400 + i64::from(month <= 2);
        Civil {
            year,
            month,
            day,
            hour: (in_day / 60) as u32,
            minute: (in_day % 60) as u32,
            weekday: ((days + 4).rem_euclid(7) + 1) as u32,
        }
    }
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// When a rule last fired, or should first be due from (its creation).
fn since(rule: &Rule) -> EpochMillis {
    rule.last_fired.unwrap_or(rule.created)
}

/// The time a rule fires at, if it is due at `now`.
fn due(rule: &Rule, schedule: &Schedule, now: EpochMillis) -> Option<EpochMillis> {
    let since = since(rule);
    match schedule {
        Schedule::Rate(period) => {
            let periods = (now - since) / period;
            (periods >= 1).then(|| since + periods * period)
        }
        Schedule::Cron(fields) => {
            let minute = now - now.rem_euclid(MINUTE);
            (minute > since - since.rem_euclid(MINUTE) && Schedule::cron_matches(fields, minute))
                .then_some(minute)
        }
    }
}

impl Events {
    /// Fires every enabled scheduled rule due at `now`; returns how many fired.
    pub(super) fn tick(&self, now: EpochMillis) -> AwsResult<usize> {
        let rules: Vec<Rule> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {RULE_COLUMNS} FROM events_rules
                 WHERE schedule IS NOT NULL AND state = 'ENABLED'"
            ))?;
            let rows = stmt.query_map([], Rule::from_row)?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let mut fired = 0;
        for rule in rules {
            let Some(Ok(schedule)) = rule.schedule.as_deref().map(Schedule::parse) else {
                continue;
            };
            let Some(at) = due(&rule, &schedule, now) else {
                continue;
            };
            self.env.store.with(|c| {
                c.execute(
                    "UPDATE events_rules SET last_fired = ?5
                     WHERE account = ?1 AND region = ?2 AND bus = ?3 AND name = ?4",
                    rusqlite::params![rule.account, rule.region, rule.bus, rule.name, at],
                )?;
                Ok::<_, AwsError>(())
            })?;
            let event = json!({
                "version": "0",
                "id": new_id(),
                "detail-type": "Scheduled Event",
                "source": "aws.events",
                "account": rule.account,
                "time": event_time(at),
                "region": rule.region,
                "resources": [rule.arn()],
                "detail": {},
            });
            self.fire(&rule, &event)?;
            fired += 1;
        }
        Ok(fired)
    }
}

/// Starts the task that ticks every second of the clock (at once when it is advanced)
/// until the service is gone.
pub(super) fn spawn(events: Weak<Events>) {
    tokio::spawn(async move {
        loop {
            roto_core::timestamp::sleep(Duration::from_secs(1)).await;
            let Some(events) = events.upgrade() else {
                return;
            };
            if let Err(e) = events.tick(events.now()) {
                tracing::warn!("scheduled rules: {}", e.message);
            }
        }
    });
}

#[cfg(test)]
mod tests {
    use super::*;
    use roto_core::store::{Store, StoreMode};
    use roto_core::{Context, Env, Value};
    use std::sync::Arc;

    /// 2026-01-05T00:00:00Z, a Monday.
    const MONDAY: EpochMillis = 1_767_571_200_000;

    fn cron(text: &str) -> Box<[Field; 6]> {
        match Schedule::parse(text) {
            Ok(Schedule::Cron(fields)) => fields,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn rates_are_periods_with_singular_units_for_one() {
        assert_eq!(
            Schedule::parse("rate(1 minute)"),
            Ok(Schedule::Rate(MINUTE))
        );
        assert_eq!(
            Schedule::parse("rate(3 hours)"),
            Ok(Schedule::Rate(3 * 60 * MINUTE))
        );
        for bad in [
            "rate(2 minute)",
            "rate(1 days)",
            "rate(-1 days)",
            "rate()",
            "rate(9223372036854775807 days)",
        ] {
            assert!(Schedule::parse(bad).is_err(), "{bad}");
        }
    }

    #[test]
    fn cron_fields_match_minutes_weekdays_and_last_days() {
        let weekdays_at_nine = cron("cron(0 9 ? * MON-FRI *)");
        assert!(Schedule::cron_matches(
            &weekdays_at_nine,
            MONDAY + 9 * 60 * MINUTE
        ));
        assert!(!Schedule::cron_matches(
            &weekdays_at_nine,
            MONDAY + 9 * 60 * MINUTE + MINUTE
        ));
        assert!(!Schedule::cron_matches(
            &weekdays_at_nine,
            MONDAY - 24 * 60 * MINUTE + 9 * 60 * MINUTE
        ));
        let quarter_hours = cron("cron(0/15 * * * ? *)");
        assert!(Schedule::cron_matches(&quarter_hours, MONDAY + 45 * MINUTE));
        assert!(!Schedule::cron_matches(
            &quarter_hours,
            MONDAY + 50 * MINUTE
        ));
        let last_day = cron("cron(0 0 L * ? *)");
        assert!(Schedule::cron_matches(
            &last_day,
            MONDAY + 26 * 24 * 60 * MINUTE
        ));
        let first_monday = cron("cron(0 0 ? * 2#1 *)");
        assert!(Schedule::cron_matches(&first_monday, MONDAY));
        assert!(!Schedule::cron_matches(
            &first_monday,
            MONDAY + 7 * 24 * 60 * MINUTE
        ));
        assert!(Schedule::parse("cron(0 0 1 * 1 *)").is_err());
        assert!(Schedule::parse("cron(0 25 * * ? *)").is_err());
    }

    fn clock() -> EpochMillis {
        MONDAY
    }

    #[tokio::test]
    async fn tick_fires_rate_rules_once_per_period_and_skips_disabled_ones() {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            100,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        let events = Events {
            env,
            clock,
            tokens: Default::default(),
        };
        let ctx = Context {
            account: "000000000000".into(),
            region: "us-east-1".into(),
            access_key: None,
            request_id: "r".into(),
            host: String::new(),
        };
        events.env.store.migrate(super::super::SCHEMA).unwrap();
        let rule = |name: &str, expr: &str| {
            Value::map()
                .with("Name", name)
                .with("ScheduleExpression", expr)
        };
        events
            .put_rule(&ctx, &rule("every5", "rate(5 minutes)"))
            .unwrap();
        events
            .put_rule(
                &ctx,
                &rule("off", "rate(1 minute)").with("State", "DISABLED"),
            )
            .unwrap();
        assert_eq!(events.tick(MONDAY + 4 * MINUTE).unwrap(), 0);
        assert_eq!(events.tick(MONDAY + 5 * MINUTE).unwrap(), 1);
        assert_eq!(events.tick(MONDAY + 6 * MINUTE).unwrap(), 0);
        assert_eq!(events.tick(MONDAY + 10 * MINUTE).unwrap(), 1);
    }
}
