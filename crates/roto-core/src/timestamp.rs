//! The three timestamp forms the AWS protocols use, and the clock.
//!
//! `iso8601` (query and rest-xml bodies, query strings), `rfc822` (HTTP headers) and
//! `unixTimestamp` (json and rest-json bodies); each model member may override its
//! protocol's default with `timestampFormat`.
//!
//! The clock is the system clock plus an offset that only moves forward
//! (`POST /_roto/clock`), so a test can make an hour pass for TTL expiry, scheduled rules,
//! retention or retry back-off without waiting. Everything that waits for a moment of this
//! clock sleeps with [`sleep_until`], which wakes early when the clock is advanced.

use std::sync::atomic::{AtomicI64, Ordering};
use std::time::{Duration, SystemTime, UNIX_EPOCH};

use tokio::sync::Notify;

use time::format_description::well_known::{Rfc2822, Rfc3339};
use time::macros::format_description;
use time::{OffsetDateTime, PrimitiveDateTime, UtcOffset};

use crate::value::EpochMillis;

/// A timestamp wire format.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum TimestampFormat {
    /// `2026-12-02T17:00:00.000Z`
    Iso8601,
    /// `Wed, 02 Dec 2026 17:00:00 GMT`
    Rfc822,
    /// `1796230800.123`
    Epoch,
}

impl TimestampFormat {
    /// The format a model trait names, if it is one.
    pub fn from_trait(name: &str) -> Option<TimestampFormat> {
        match name {
            "iso8601" => Some(TimestampFormat::Iso8601),
            "rfc822" => Some(TimestampFormat::Rfc822),
            "unixTimestamp" => Some(TimestampFormat::Epoch),
            _ => None,
        }
    }
}

/// How far the clock has been advanced past the system clock, in milliseconds.
static CLOCK_OFFSET: AtomicI64 = AtomicI64::new(0);

/// Woken whenever the clock is advanced.
static CLOCK_ADVANCED: Notify = Notify::const_new();

/// Now, in epoch milliseconds: the system clock plus any advance.
pub fn now_millis() -> EpochMillis {
    let system = SystemTime::now()
        .duration_since(UNIX_EPOCH)
        .map(|d| i64::try_from(d.as_millis()).unwrap_or(i64::MAX))
        .unwrap_or(0);
    system.saturating_add(CLOCK_OFFSET.load(Ordering::Relaxed))
}

/// How far the clock has been advanced in all, in milliseconds.
pub fn clock_offset() -> i64 {
    CLOCK_OFFSET.load(Ordering::Relaxed)
}

/// Moves the clock forward by `millis` and wakes everything sleeping on it.
pub fn advance_clock(millis: u64) {
    let millis = i64::try_from(millis).unwrap_or(i64::MAX);
    CLOCK_OFFSET
        .fetch_update(Ordering::Relaxed, Ordering::Relaxed, |o| {
            Some(o.saturating_add(millis))
        })
        .ok();
    CLOCK_ADVANCED.notify_waiters();
}

/// Sleeps until the clock reads at least `deadline`, waking early when it is advanced.
pub async fn sleep_until(deadline: EpochMillis) {
    loop {
        let advanced = CLOCK_ADVANCED.notified();
        tokio::pin!(advanced);
        advanced.as_mut().enable();
        let left = deadline.saturating_sub(now_millis());
        if left <= 0 {
            return;
        }
        let left = Duration::from_millis(u64::try_from(left).unwrap_or(u64::MAX));
        tokio::select! {
            _ = tokio::time::sleep(left) => {}
            _ = advanced => {}
        }
    }
}

/// Sleeps for `duration` of the clock (see [`sleep_until`]).
pub async fn sleep(duration: Duration) {
    let millis = i64::try_from(duration.as_millis()).unwrap_or(i64::MAX);
    sleep_until(now_millis().saturating_add(millis)).await;
}

fn to_datetime(millis: EpochMillis) -> OffsetDateTime {
    OffsetDateTime::from_unix_timestamp_nanos(i128::from(millis) * 1_000_000)
        .unwrap_or(OffsetDateTime::UNIX_EPOCH)
}

/// Formats a timestamp in the given wire format.
pub fn format(millis: EpochMillis, format: TimestampFormat) -> String {
    let dt = to_datetime(millis);
    match format {
        TimestampFormat::Iso8601 => {
            let f = format_description!(
                "[year]-[month]-[day]T[hour]:[minute]:[second].[subsecond digits:3]Z"
            );
            dt.format(f).unwrap_or_default()
        }
        TimestampFormat::Rfc822 => {
            let f = format_description!(
                "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
            );
            dt.format(f).unwrap_or_default()
        }
        TimestampFormat::Epoch => format_epoch(millis),
    }
}

/// Epoch seconds with milliseconds only where they are non-zero (`1796230800`, `1796230800.5`).
fn format_epoch(millis: EpochMillis) -> String {
    let (secs, ms) = (millis.div_euclid(1000), millis.rem_euclid(1000));
    if ms == 0 {
        secs.to_string()
    } else {
        format!("{secs}.{ms:03}").trim_end_matches('0').to_string()
    }
}

/// Epoch seconds as the f64 the json protocols put in bodies.
pub fn epoch_seconds(millis: EpochMillis) -> f64 {
    millis as f64 / 1000.0
}

/// Parses any timestamp form a client may send: ISO 8601 (with or without fraction and
/// offset), RFC 822/1123, or epoch seconds.
pub fn parse(text: &str) -> Option<EpochMillis> {
    let text = text.trim();
    if let Ok(secs) = text.parse::<f64>() {
        return secs_to_millis(secs);
    }
    if let Ok(dt) = OffsetDateTime::parse(text, &Rfc3339) {
        return Some(datetime_millis(dt));
    }
    if let Ok(dt) = OffsetDateTime::parse(text, &Rfc2822) {
        return Some(datetime_millis(dt));
    }
    let gmt = format_description!(
        "[weekday repr:short], [day] [month repr:short] [year] [hour]:[minute]:[second] GMT"
    );
    if let Ok(dt) = PrimitiveDateTime::parse(text, gmt) {
        return Some(datetime_millis(dt.assume_offset(UtcOffset::UTC)));
    }
    let no_zone = format_description!("[year]-[month]-[day]T[hour]:[minute]:[second]");
    let basic = text.trim_end_matches('Z');
    PrimitiveDateTime::parse(basic, no_zone)
        .ok()
        .map(|dt| datetime_millis(dt.assume_offset(UtcOffset::UTC)))
}

/// Converts epoch seconds (possibly fractional) to milliseconds.
pub fn secs_to_millis(secs: f64) -> Option<EpochMillis> {
    if !secs.is_finite() || secs.abs() > 1e14 {
        return None;
    }
    Some((secs * 1000.0).round() as i64)
}

fn datetime_millis(dt: OffsetDateTime) -> EpochMillis {
    i64::try_from(dt.unix_timestamp_nanos() / 1_000_000).unwrap_or(0)
}

#[cfg(test)]
mod tests {
    use super::*;

    const T: EpochMillis = 1_796_230_800_123;

    #[test]
    fn formats_each_wire_form() {
        assert_eq!(
            format(T, TimestampFormat::Iso8601),
            "2026-12-02T17:00:00.123Z"
        );
        assert_eq!(
            format(T, TimestampFormat::Rfc822),
            "Wed, 02 Dec 2026 17:00:00 GMT"
        );
        assert_eq!(format(T, TimestampFormat::Epoch), "1796230800.123");
        assert_eq!(format(1_000, TimestampFormat::Epoch), "1");
        assert_eq!(format(1_500, TimestampFormat::Epoch), "1.5");
    }

    #[test]
    fn parses_every_form_clients_send() {
        assert_eq!(parse("2026-12-02T17:00:00.123Z"), Some(T));
        assert_eq!(parse("2026-12-02T17:00:00Z"), Some(T - 123));
        assert_eq!(parse("2026-12-02T17:00:00"), Some(T - 123));
        assert_eq!(parse("2026-12-02T18:00:00+01:00"), Some(T - 123));
        assert_eq!(parse("Wed, 02 Dec 2026 17:00:00 GMT"), Some(T - 123));
        assert_eq!(parse("1796230800.123"), Some(T));
        assert_eq!(parse("yesterday"), None);
        assert_eq!(parse("NaN"), None);
    }
}
