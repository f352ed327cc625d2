//! Entry point for the fuzzer (`crates/roto-fuzz`): a schedule expression parsed and, for a
//! cron, matched against a few minutes. It exists so the fuzzer can reach a private module;
//! nothing in the server calls it.

use super::schedule::{parse, Schedule};
use crate::cron;

/// Parses `text` as a `rate(...)` or `cron(...)` schedule expression and matches a cron
/// against minutes around leap days and month ends.
pub fn fuzz_schedule_expression(text: &str) {
    if let Ok(Schedule::Cron(fields)) = parse(text) {
        // 2024-02-29T23:59Z, 2026-12-31T00:00Z, the epoch.
        for minute in [1_709_251_140_000, 1_798_675_200_000, 0] {
            cron::matches_utc(&fields, minute);
        }
    }
}
