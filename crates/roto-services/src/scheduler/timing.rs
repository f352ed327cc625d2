//! When a schedule fires: its expression read in its time zone, between its start and end
//! dates.
//!
//! - `rate(n unit)` occurs every period from its anchor (the StartDate, else the time the
//!   schedule was created or last updated, so a schedule without a StartDate fires at once,
//!   as AWS's does). A day is 24 hours whatever the zone, as AWS documents.
//! - `cron(...)` occurs at the wall-clock minutes it names in the schedule's zone. A time the
//!   zone skips (the spring-forward gap) does not occur; a time it repeats (the fall-back
//!   fold) occurs once, at its first instant. Both as AWS documents.
//! - `at(...)` occurs once, at the wall-clock time in the zone (a time inside a gap is read
//!   with the offset before it, moving it forward); StartDate and EndDate do not apply.
//!
//! Recurring occurrences are at or after the StartDate and before the EndDate. Time zones
//! are IANA names, resolved by `jiff` from the tz database compiled into the binary.

use jiff::tz::{AmbiguousOffset, TimeZone};
use jiff::Timestamp;
use roto_core::value::EpochMillis;

use crate::cron::{self, Civil, Dialect, Expression};

/// How many matching minutes one search may pass over because a gap or a fold made them not
/// occur (a handful at most in any real zone).
const MAX_SKIPS: usize = 1_000;

/// A schedule's timing.
pub(super) struct Timing {
    pub expression: Expression,
    pub zone: TimeZone,
    pub start: Option<EpochMillis>,
    pub end: Option<EpochMillis>,
    /// Where a rate's periods count from.
    pub anchor: EpochMillis,
}

/// Parses a schedule expression as Scheduler reads it.
pub(super) fn parse(text: &str) -> Option<Expression> {
    cron::parse(text, Dialect::Scheduler)
}

/// The IANA time zone `name`.
pub(super) fn zone(name: &str) -> Option<TimeZone> {
    TimeZone::get(name).ok()
}

/// The wall-clock time of an instant in a zone.
fn local(zone: &TimeZone, millis: EpochMillis) -> Option<Civil> {
    let dt = zone.to_datetime(Timestamp::from_millisecond(millis).ok()?);
    Some(Civil {
        year: i64::from(dt.year()),
        month: dt.month() as u32,
        day: dt.day() as u32,
        hour: dt.hour() as u32,
        minute: dt.minute() as u32,
        second: dt.second() as u32,
    })
}

/// The instant of a wall-clock time in a zone: `None` inside a gap unless `in_gap` says
/// to read it with the offset before the gap; the first instant of a fold.
fn instant(zone: &TimeZone, t: Civil, in_gap: bool) -> Option<EpochMillis> {
    let dt = jiff::civil::DateTime::new(
        i16::try_from(t.year).ok()?,
        t.month as i8,
        t.day as i8,
        t.hour as i8,
        t.minute as i8,
        t.second as i8,
        0,
    )
    .ok()?;
    let ambiguous = zone.to_ambiguous_timestamp(dt);
    let offset = match ambiguous.offset() {
        AmbiguousOffset::Unambiguous { offset } => offset,
        AmbiguousOffset::Gap { before, .. } if in_gap => before,
        AmbiguousOffset::Gap { .. } => return None,
        AmbiguousOffset::Fold { before, .. } => before,
    };
    offset.to_timestamp(dt).ok().map(|ts| ts.as_millisecond())
}

impl Timing {
    /// The first occurrence at or after `from`, if any remains.
    pub(super) fn next(&self, from: EpochMillis) -> Option<EpochMillis> {
        if let Expression::At(t) = &self.expression {
            return instant(&self.zone, *t, true).filter(|at| *at >= from);
        }
        let from = self.start.map_or(from, |s| from.max(s));
        let next = match &self.expression {
            Expression::Rate(period) => Some(next_period(self.anchor, *period, from)),
            Expression::Cron(fields) => self.next_cron(fields, from),
            Expression::At(_) => None,
        }?;
        self.end.is_none_or(|end| next < end).then_some(next)
    }

    fn next_cron(&self, fields: &[cron::Field; 6], from: EpochMillis) -> Option<EpochMillis> {
        let minute = 60_000;
        let first = from + (minute - from.rem_euclid(minute)) % minute;
        let mut search = local(&self.zone, first)?;
        for _ in 0..MAX_SKIPS {
            let candidate = cron::next_minute(fields, search)?;
            match instant(&self.zone, candidate, false) {
                Some(at) if at >= from => return Some(at),
                _ => search = candidate.next_minute(),
            }
        }
        None
    }
}

/// The first of `anchor + k * period` (k >= 0) at or after `from`.
fn next_period(anchor: EpochMillis, period: i64, from: EpochMillis) -> EpochMillis {
    if from <= anchor {
        return anchor;
    }
    let periods = (from - anchor + period - 1) / period;
    anchor.saturating_add(periods.saturating_mul(period))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn timing(expr: &str, zone_name: &str) -> Timing {
        Timing {
            expression: parse(expr).unwrap(),
            zone: zone(zone_name).unwrap(),
            start: None,
            end: None,
            anchor: 0,
        }
    }

    fn millis(text: &str) -> EpochMillis {
        roto_core::timestamp::parse(text).unwrap()
    }

    #[test]
    fn cron_reads_wall_clock_times_in_the_zone() {
        let t = timing("cron(0 9 * * ? *)", "America/New_York");
        let next = t.next(millis("2026-07-01T00:00:00Z")).unwrap();
        assert_eq!(next, millis("2026-07-01T13:00:00Z"));
        let next = t.next(millis("2026-12-01T00:00:00Z")).unwrap();
        assert_eq!(next, millis("2026-12-01T14:00:00Z"));
    }

    #[test]
    fn the_spring_gap_is_skipped_and_the_autumn_fold_fires_once() {
        // 2026-03-08: New York skips 02:00-03:00; 2026-11-01 repeats 01:00-02:00.
        let t = timing("cron(30 2 * * ? *)", "America/New_York");
        let next = t.next(millis("2026-03-08T05:00:00Z")).unwrap();
        assert_eq!(next, millis("2026-03-09T06:30:00Z"));
        let t = timing("cron(30 1 * * ? *)", "America/New_York");
        let first = t.next(millis("2026-11-01T04:00:00Z")).unwrap();
        assert_eq!(first, millis("2026-11-01T05:30:00Z"));
        let after = t.next(first + 1).unwrap();
        assert_eq!(after, millis("2026-11-02T06:30:00Z"));
    }

    #[test]
    fn rates_count_periods_from_the_anchor_and_stop_at_the_end() {
        let mut t = timing("rate(5 minutes)", "UTC");
        t.anchor = 1_000;
        assert_eq!(t.next(0), Some(1_000));
        assert_eq!(t.next(1_001), Some(301_000));
        t.end = Some(301_000);
        assert_eq!(t.next(1_001), None);
    }

    #[test]
    fn at_occurs_once_in_its_zone() {
        let t = timing("at(2026-06-01T12:00:00)", "Europe/Berlin");
        let at = millis("2026-06-01T10:00:00Z");
        assert_eq!(t.next(0), Some(at));
        assert_eq!(t.next(at + 1), None);
    }
}
