//! Schedule expressions, shared by EventBridge's scheduled rules and EventBridge Scheduler:
//! `rate(value unit)`, AWS's six-field `cron(...)` and Scheduler's one-time `at(...)`.
//!
//! The two services read the same grammar with two differences, which [`Dialect`] names:
//! EventBridge rules want a singular unit for 1 and a plural one otherwise and know no
//! `at(...)`; Scheduler accepts either unit form and `at(yyyy-mm-ddThh:mm:ss)`. Cron fields
//! are matched against a civil (wall-clock) minute, so Scheduler can evaluate them in any
//! time zone; [`next_minute`] finds the next matching minute by skipping whole years,
//! months and days that cannot match, so a sparse expression costs no more than a dense one.
//! Parsing is a loop over at most six whitespace-separated fields and their comma lists: no
//! recursion, and nothing the input can deepen.

use roto_core::value::EpochMillis;

const MINUTE: i64 = 60_000;
const DAY: i64 = 86_400_000;

/// The last year a cron expression may name, as AWS's parser allows.
const LAST_YEAR: i64 = 2199;

/// Which service's reading of the grammar.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(crate) enum Dialect {
    /// EventBridge rules: `rate(1 minute)`, `rate(5 minutes)`, `cron(...)`.
    Rules,
    /// EventBridge Scheduler: any unit form, and `at(...)`.
    Scheduler,
}

/// A parsed schedule expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expression {
    /// Every so many milliseconds.
    Rate(i64),
    /// Minutes, hours, days of month, months, days of week (1 = Sunday), years.
    Cron(Box<[Field; 6]>),
    /// Once, at a wall-clock time (Scheduler only).
    At(Civil),
}

/// The values one cron field allows (`None`: any), plus the `L`/`W`/`#` forms.
#[derive(Debug, Clone, PartialEq, Default)]
pub(crate) struct Field {
    values: Option<Vec<u32>>,
    /// `L` in the day of month: the month's last day.
    last: bool,
    /// `nW` in the day of month: the weekday nearest day n, within the month.
    nearest_weekday: Option<u32>,
    /// `d#n` in the day of week: the n-th weekday d of the month.
    nth: Option<(u32, u32)>,
    /// `dL` in the day of week: the month's last weekday d.
    last_weekday: Option<u32>,
}

/// A wall-clock date and time to the second, in no particular zone.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
pub(crate) struct Civil {
    pub year: i64,
    pub month: u32,
    pub day: u32,
    pub hour: u32,
    pub minute: u32,
    pub second: u32,
}

const MONTHS: [&str; 12] = [
    "JAN", "FEB", "MAR", "APR", "MAY", "JUN", "JUL", "AUG", "SEP", "OCT", "NOV", "DEC",
];
const DAYS: [&str; 7] = ["SUN", "MON", "TUE", "WED", "THU", "FRI", "SAT"];

/// Parses a schedule expression in `dialect`; `None` when it is not one.
pub(crate) fn parse(text: &str, dialect: Dialect) -> Option<Expression> {
    if let Some(body) = text.strip_prefix("rate(").and_then(|t| t.strip_suffix(')')) {
        return rate(body, dialect).map(Expression::Rate);
    }
    if let Some(body) = text.strip_prefix("at(").and_then(|t| t.strip_suffix(')')) {
        return (dialect == Dialect::Scheduler)
            .then(|| at(body))
            .flatten()
            .map(Expression::At);
    }
    let body = text.strip_prefix("cron(")?.strip_suffix(')')?;
    let parts: Vec<&str> = body.split_whitespace().collect();
    if parts.len() != 6 || (parts[2] == "?") == (parts[4] == "?") {
        return None;
    }
    let ranges = [(0, 59), (0, 23), (1, 31), (1, 12), (1, 7), (1970, 2199)];
    let mut fields: [Field; 6] = Default::default();
    for (i, part) in parts.iter().enumerate() {
        fields[i] = field(part, ranges[i], i)?;
    }
    Some(Expression::Cron(Box::new(fields)))
}

/// The milliseconds of `value unit`.
fn rate(body: &str, dialect: Dialect) -> Option<i64> {
    let (n, unit) = match dialect {
        Dialect::Rules => body.trim().split_once(' ')?,
        Dialect::Scheduler => body.split_once(' ')?,
    };
    if !n.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: i64 = n.parse().ok().filter(|n| *n >= 1)?;
    let strict = dialect == Dialect::Rules;
    let per = match unit {
        "minute" if n == 1 || !strict => MINUTE,
        "minutes" if n != 1 || !strict => MINUTE,
        "hour" if n == 1 || !strict => 60 * MINUTE,
        "hours" if n != 1 || !strict => 60 * MINUTE,
        "day" if n == 1 || !strict => DAY,
        "days" if n != 1 || !strict => DAY,
        _ => return None,
    };
    n.checked_mul(per)
}

/// `yyyy-mm-ddThh:mm:ss`.
fn at(body: &str) -> Option<Civil> {
    let b = body.as_bytes();
    let shape = b.len() == 19
        && b[4] == b'-'
        && b[7] == b'-'
        && b[10] == b'T'
        && b[13] == b':'
        && b[16] == b':';
    let digits = |r: std::ops::Range<usize>| -> Option<u32> {
        let s = body.get(r)?;
        s.bytes()
            .all(|c| c.is_ascii_digit())
            .then(|| s.parse().ok())?
    };
    if !shape {
        return None;
    }
    let civil = Civil {
        year: i64::from(digits(0..4)?),
        month: digits(5..7)?,
        day: digits(8..10)?,
        hour: digits(11..13)?,
        minute: digits(14..16)?,
        second: digits(17..19)?,
    };
    let valid = (1..=12).contains(&civil.month)
        && (1..=days_in_month(civil.year, civil.month)).contains(&civil.day)
        && civil.hour < 24
        && civil.minute < 60
        && civil.second < 60;
    valid.then_some(civil)
}

/// Parses one cron field (`*`, `?`, lists, ranges, steps, names, `L`, `W`, `#`).
fn field(text: &str, (lo, hi): (u32, u32), index: usize) -> Option<Field> {
    if text == "*" || text == "?" {
        return Some(Field::default());
    }
    if index == 2 {
        if text == "L" {
            return Some(Field {
                last: true,
                ..Field::default()
            });
        }
        if let Some(day) = text.strip_suffix('W') {
            let d = number(day, index)?;
            return (lo..=hi).contains(&d).then(|| Field {
                nearest_weekday: Some(d),
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
        None if text.bytes().all(|b| b.is_ascii_digit()) => text.parse().ok(),
        None => None,
    }
}

impl Field {
    fn allows(&self, v: u32) -> bool {
        self.values.as_ref().is_none_or(|vs| vs.contains(&v))
    }
}

impl Civil {
    /// The UTC date and time of epoch milliseconds.
    pub(crate) fn of(millis: EpochMillis) -> Civil {
        let (year, month, day) = civil_from_days(millis.div_euclid(DAY));
        let in_day = millis.rem_euclid(DAY) / 1000;
        Civil {
            year,
            month,
            day,
            hour: (in_day / 3600) as u32,
            minute: (in_day / 60 % 60) as u32,
            second: (in_day % 60) as u32,
        }
    }

    /// Epoch milliseconds of this time read as UTC.
    pub(crate) fn utc_millis(&self) -> EpochMillis {
        days_from_civil(self.year, self.month, self.day) * DAY
            + i64::from(self.hour * 3600 + self.minute * 60 + self.second) * 1000
    }

    /// The start of the next minute.
    pub(crate) fn next_minute(&self) -> Civil {
        let start = Civil { second: 0, ..*self };
        Civil::of(start.utc_millis() + MINUTE)
    }
}

/// Howard Hinnant's civil_from_days.
fn civil_from_days(days: i64) -> (i64, u32, u32) {
    let z = days + 719_468;
    let era = z.div_euclid(146_097);
    let doe = z.rem_euclid(146_097);
    let yoe = (doe - doe / 1460 + doe / 36_524 - doe / 146_096) / 365;
    let doy = doe - (365 * yoe + yoe / 4 - yoe / 100);
    let mp = (5 * doy + 2) / 153;
    let day = (doy - (153 * mp + 2) / 5 + 1) as u32;
    let month = if mp < 10 { mp + 3 } else { mp - 9 } as u32;
    (yoe + era * 400 + i64::from(month <= 2), month, day)
}

/// Howard Hinnant's days_from_civil.
fn days_from_civil(year: i64, month: u32, day: u32) -> i64 {
    let y = if month <= 2 { year - 1 } else { year };
    let era = y.div_euclid(400);
    let yoe = y.rem_euclid(400);
    let m = i64::from(month);
    let doy = (153 * (if m > 2 { m - 3 } else { m + 9 }) + 2) / 5 + i64::from(day) - 1;
    let doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    era * 146_097 + doe - 719_468
}

/// The day of week of a date, 1 = Sunday.
fn weekday(year: i64, month: u32, day: u32) -> u32 {
    ((days_from_civil(year, month, day) + 4).rem_euclid(7) + 1) as u32
}

fn days_in_month(year: i64, month: u32) -> u32 {
    match month {
        4 | 6 | 9 | 11 => 30,
        2 if year % 4 == 0 && (year % 100 != 0 || year % 400 == 0) => 29,
        2 => 28,
        _ => 31,
    }
}

/// The weekday nearest `day` within its month (AWS's `W`).
fn nearest_weekday(year: i64, month: u32, day: u32) -> u32 {
    let dim = days_in_month(year, month);
    let day = day.min(dim);
    match weekday(year, month, day) {
        7 if day == 1 => 3,
        7 => day - 1,
        1 if day == dim => day - 2,
        1 => day + 1,
        _ => day,
    }
}

/// Whether the date matches the day-of-month, month, day-of-week and year fields.
fn day_matches(fields: &[Field; 6], year: i64, month: u32, day: u32) -> bool {
    let dim = days_in_month(year, month);
    let dom = &fields[2];
    let dom_ok = if dom.last {
        day == dim
    } else if let Some(n) = dom.nearest_weekday {
        day == nearest_weekday(year, month, n)
    } else {
        dom.allows(day)
    };
    let wd = weekday(year, month, day);
    let dow = &fields[4];
    let dow_ok = match (dow.nth, dow.last_weekday) {
        (Some((d, n)), _) => wd == d && (day - 1) / 7 + 1 == n,
        (_, Some(d)) => wd == d && day + 7 > dim,
        _ => dow.allows(wd),
    };
    dom_ok && dow_ok && fields[3].allows(month) && fields[5].allows(year as u32)
}

/// Whether a cron expression fires in the UTC minute starting at `minute` (epoch millis).
pub(crate) fn matches_utc(fields: &[Field; 6], minute: EpochMillis) -> bool {
    let t = Civil::of(minute);
    day_matches(fields, t.year, t.month, t.day)
        && fields[1].allows(t.hour)
        && fields[0].allows(t.minute)
}

/// The first wall-clock minute at or after `from` (its seconds ignored) that the fields
/// match, or `None` when none does before the end of year 2199.
pub(crate) fn next_minute(fields: &[Field; 6], from: Civil) -> Option<Civil> {
    let (mut year, mut month, mut day) = (from.year, from.month, from.day);
    let mut earliest = Some((from.hour, from.minute));
    while year <= LAST_YEAR {
        if year < 1970 || !fields[5].allows(year as u32) {
            (year, month, day, earliest) = (year + 1, 1, 1, None);
            continue;
        }
        if !fields[3].allows(month) {
            (year, month) = if month == 12 {
                (year + 1, 1)
            } else {
                (year, month + 1)
            };
            (day, earliest) = (1, None);
            continue;
        }
        if day_matches(fields, year, month, day) {
            if let Some((hour, minute)) = first_time(fields, earliest) {
                return Some(Civil {
                    year,
                    month,
                    day,
                    hour,
                    minute,
                    second: 0,
                });
            }
        }
        let next = civil_from_days(days_from_civil(year, month, day) + 1);
        (year, month, day) = next;
        earliest = None;
    }
    None
}

/// The first hour and minute the fields allow at or after `earliest` (midnight if none).
fn first_time(fields: &[Field; 6], earliest: Option<(u32, u32)>) -> Option<(u32, u32)> {
    let (from_hour, from_minute) = earliest.unwrap_or((0, 0));
    (from_hour..24)
        .filter(|h| fields[1].allows(*h))
        .find_map(|hour| {
            let start = if hour == from_hour { from_minute } else { 0 };
            (start..60)
                .find(|m| fields[0].allows(*m))
                .map(|minute| (hour, minute))
        })
}

#[cfg(test)]
mod tests {
    use super::*;

    /// 2026-01-05T00:00:00Z, a Monday.
    const MONDAY: EpochMillis = 1_767_571_200_000;

    fn cron(text: &str) -> Box<[Field; 6]> {
        match parse(text, Dialect::Rules) {
            Some(Expression::Cron(fields)) => fields,
            other => panic!("{text}: {other:?}"),
        }
    }

    #[test]
    fn rules_want_singular_units_for_one_and_scheduler_takes_either() {
        assert_eq!(
            parse("rate(1 minute)", Dialect::Rules),
            Some(Expression::Rate(MINUTE))
        );
        assert_eq!(
            parse("rate(3 hours)", Dialect::Rules),
            Some(Expression::Rate(3 * 60 * MINUTE))
        );
        for bad in [
            "rate(2 minute)",
            "rate(1 days)",
            "rate(-1 days)",
            "rate()",
            "rate(9223372036854775807 days)",
            "at(2026-01-01T00:00:00)",
        ] {
            assert!(parse(bad, Dialect::Rules).is_none(), "{bad}");
        }
        assert_eq!(
            parse("rate(2 minute)", Dialect::Scheduler),
            Some(Expression::Rate(2 * MINUTE))
        );
        for bad in [
            "rate( 10 minutes )",
            "rate(10 minutess)",
            "rate(10 seconds)",
            "rate(+1 minutes)",
            "rate(10)",
            "at(2021-12-31)",
            "at(2021-12-31T23:59:59Z)",
            "at(2026-02-29T00:00:00)",
            "cron(0 1 * * * *)",
        ] {
            assert!(parse(bad, Dialect::Scheduler).is_none(), "{bad}");
        }
    }

    #[test]
    fn cron_fields_match_minutes_weekdays_and_last_days() {
        let weekdays_at_nine = cron("cron(0 9 ? * MON-FRI *)");
        assert!(matches_utc(&weekdays_at_nine, MONDAY + 9 * 60 * MINUTE));
        assert!(!matches_utc(
            &weekdays_at_nine,
            MONDAY + 9 * 60 * MINUTE + MINUTE
        ));
        assert!(!matches_utc(
            &weekdays_at_nine,
            MONDAY - DAY + 9 * 60 * MINUTE
        ));
        let quarter_hours = cron("cron(0/15 * * * ? *)");
        assert!(matches_utc(&quarter_hours, MONDAY + 45 * MINUTE));
        assert!(!matches_utc(&quarter_hours, MONDAY + 50 * MINUTE));
        let last_day = cron("cron(0 0 L * ? *)");
        assert!(matches_utc(&last_day, MONDAY + 26 * DAY));
        let first_monday = cron("cron(0 0 ? * 2#1 *)");
        assert!(matches_utc(&first_monday, MONDAY));
        assert!(!matches_utc(&first_monday, MONDAY + 7 * DAY));
        assert!(parse("cron(0 0 1 * 1 *)", Dialect::Rules).is_none());
        assert!(parse("cron(0 25 * * ? *)", Dialect::Rules).is_none());
    }

    #[test]
    fn nearest_weekday_moves_off_weekends_within_the_month() {
        // 2026-02-01 is a Sunday: 1W is Monday the 2nd; 2026-01-31 is a Saturday.
        let first = cron("cron(0 0 1W * ? *)");
        let from = Civil::of(MONDAY + 20 * DAY);
        let next = next_minute(&first, from).unwrap();
        assert_eq!((next.month, next.day), (2, 2));
        let last_saturday = cron("cron(0 0 31W * ? *)");
        let next = next_minute(&last_saturday, Civil::of(MONDAY)).unwrap();
        assert_eq!((next.month, next.day), (1, 30));
    }

    #[test]
    fn next_minute_skips_what_cannot_match() {
        let yearly = cron("cron(30 12 29 2 ? *)");
        let next = next_minute(&yearly, Civil::of(MONDAY)).unwrap();
        assert_eq!(
            (next.year, next.month, next.day, next.hour, next.minute),
            (2028, 2, 29, 12, 30)
        );
        let far = cron("cron(0 0 1 1 ? 2199)");
        assert_eq!(next_minute(&far, Civil::of(MONDAY)).unwrap().year, 2199);
        let past = cron("cron(0 0 1 1 ? 2020)");
        assert_eq!(next_minute(&past, Civil::of(MONDAY)), None);
        let every = cron("cron(* * * * ? *)");
        let from = Civil::of(MONDAY + 90_000);
        assert_eq!(next_minute(&every, from).unwrap().minute, 1);
    }

    #[test]
    fn civil_round_trips_through_epoch_millis() {
        for millis in [0, MONDAY, MONDAY + 12_345_000, 4_102_444_800_000] {
            assert_eq!(Civil::of(millis).utc_millis(), millis);
        }
        assert_eq!(
            Civil::of(MONDAY + 59_000).next_minute().utc_millis(),
            MONDAY + MINUTE
        );
    }
}
