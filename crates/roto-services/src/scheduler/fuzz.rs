//! Entry point for the fuzzer (`crates/roto-fuzz`): a Scheduler schedule expression parsed
//! and its next occurrences found in a zone with daylight saving time. It exists so the
//! fuzzer can reach a private module; nothing in the server calls it.

use super::timing::{self, Timing};

/// Parses `text` as Scheduler reads `at(...)`, `rate(...)` and `cron(...)`, and asks for
/// the occurrences after a few instants (around a DST change, a leap day and the epoch).
pub fn fuzz_schedule_expression(text: &str) {
    let (Some(expression), Some(zone)) = (timing::parse(text), timing::zone("America/New_York"))
    else {
        return;
    };
    let timing = Timing {
        expression,
        zone,
        start: None,
        end: None,
        anchor: 0,
    };
    // 2026-03-08T06:59Z, 2024-02-29T23:59Z, the epoch.
    for from in [1_772_953_140_000, 1_709_251_140_000, 0] {
        if let Some(next) = timing.next(from) {
            timing.next(next + 1);
        }
    }
}
