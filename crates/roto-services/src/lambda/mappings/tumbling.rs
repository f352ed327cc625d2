//! Tumbling windows of stream mappings (`TumblingWindowInSeconds`): each shard's records
//! are grouped by the window their arrival time falls in (windows of that width from the
//! epoch), a batch never spans two windows, and every invocation carries the window, the
//! `state` the function answered last in that window (`{}` at first), `shardId`,
//! `eventSourceARN`, `isFinalInvokeForWindow` and `isWindowTerminatedEarly`. An answer
//! without `state` fails the batch, as in AWS. When the shard's records move on to a later
//! window, or the server clock passes the window's end, the function is invoked once more
//! with no records and `isFinalInvokeForWindow: true`. Windows live with the poller, so a
//! restart opens a new one.

use std::sync::{Arc, Mutex};

use roto_core::timestamp::{self, TimestampFormat};
use roto_core::Value;
use serde_json::{json, Value as Json};

/// A shard's open window.
#[derive(Debug)]
pub(super) struct Window {
    pub start: i64,
    pub end: i64,
    state: Json,
}

/// An open window shared by the poller and the batch it is delivering.
pub(super) type Shared = Arc<Mutex<Window>>;

impl Window {
    pub fn open(start: i64, width: i64) -> Shared {
        Arc::new(Mutex::new(Window {
            start,
            end: start + width,
            state: json!({}),
        }))
    }

    /// Adds the window's members to an invocation's event.
    pub fn describe(&self, event: &mut Json, shard: &str, arn: &str, last: bool) {
        let at = |ms: i64| timestamp::format(ms, TimestampFormat::Iso8601).replace(".000Z", "Z");
        event["window"] = json!({ "start": at(self.start), "end": at(self.end) });
        event["state"] = self.state.clone();
        event["shardId"] = shard.into();
        event["eventSourceARN"] = arn.into();
        event["isFinalInvokeForWindow"] = last.into();
        event["isWindowTerminatedEarly"] = false.into();
    }

    /// Keeps the `state` of a function's answer; false when it has none (a failure).
    pub fn keep(&mut self, answer: &[u8]) -> bool {
        let state = serde_json::from_slice::<Json>(answer)
            .ok()
            .and_then(|a| a.get("state").cloned());
        match state {
            Some(state) => {
                self.state = state;
                true
            }
            None => false,
        }
    }
}

/// Consecutive runs of records that share a window, with the window's start.
pub(super) fn windowed(
    records: Vec<Value>,
    width: i64,
    arrival: impl Fn(&Value) -> i64,
) -> Vec<(i64, Vec<Value>)> {
    let mut runs: Vec<(i64, Vec<Value>)> = Vec::new();
    for record in records {
        let start = arrival(&record).div_euclid(width) * width;
        match runs.last_mut() {
            Some((s, run)) if *s == start => run.push(record),
            _ => runs.push((start, vec![record])),
        }
    }
    runs
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn records_fall_into_windows_and_state_is_kept() {
        let at = |ms: i64| Value::map().with("t", ms);
        let runs = windowed(
            vec![at(1_000), at(59_999), at(60_000), at(61_000)],
            60_000,
            |r| r.int("t").unwrap_or_default(),
        );
        assert_eq!(
            runs.iter().map(|(s, r)| (*s, r.len())).collect::<Vec<_>>(),
            [(0, 2), (60_000, 2)]
        );
        let window = Window::open(60_000, 60_000);
        let mut w = window.lock().unwrap();
        assert!(w.keep(br#"{"state": {"n": 2}}"#));
        assert!(!w.keep(br#"{"batchItemFailures": []}"#));
        let mut event = json!({"Records": []});
        w.describe(&mut event, "shardId-000000000000", "arn:s", true);
        assert_eq!(event["window"]["end"], "1970-01-01T00:02:00Z");
        assert_eq!(event["state"], json!({"n": 2}));
        assert_eq!(event["isFinalInvokeForWindow"], true);
    }
}
