//! Tumbling windows of stream mappings (`TumblingWindowInSeconds`): each shard's records
//! are grouped by the window their arrival time falls in (windows of that width from the
//! epoch), a batch never spans two windows, and every invocation carries the window, the
//! `state` the function answered last in that window (`{}` at first), `shardId`,
//! `eventSourceARN`, `isFinalInvokeForWindow` and `isWindowTerminatedEarly`. An answer
//! without `state` fails the batch, as in AWS. When the shard's records move on to a later
//! window, or the server clock passes the window's end, the function is invoked once more
//! with no records and `isFinalInvokeForWindow: true`. An open window and its state are
//! kept in `lambda_stream_windows` after each batch, so a restart carries them on. A state
//! larger than 1 MB (AWS's limit) ends the window early: the final invocation carries
//! `isWindowTerminatedEarly: true` and the previous state, and the window's later records
//! start again from `{}`.

use std::sync::{Arc, Mutex};

use roto_core::store::{Cached, Store};
use roto_core::timestamp::{self, TimestampFormat};
use roto_core::{AwsError, AwsResult, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};

/// The largest state a window keeps, in bytes of JSON (AWS's 1 MB).
const MAX_STATE: usize = 1024 * 1024;

/// A shard's open window.
#[derive(Debug)]
pub(super) struct Window {
    pub start: i64,
    pub end: i64,
    state: Json,
    /// Whether a state over [`MAX_STATE`] ended the window early.
    pub terminated_early: bool,
}

/// An open window shared by the poller and the batch it is delivering.
pub(super) type Shared = Arc<Mutex<Window>>;

impl Window {
    pub fn open(start: i64, width: i64) -> Shared {
        Arc::new(Mutex::new(Window {
            start,
            end: start + width,
            state: json!({}),
            terminated_early: false,
        }))
    }

    /// The window a shard of a mapping had open when it was last saved, if any.
    pub fn load(store: &Store, uuid: &str, shard: &str, width: i64) -> AwsResult<Option<Shared>> {
        let saved: Option<(i64, String)> = store.read(|c| {
            c.prepare_cached(
                "SELECT start, state FROM lambda_stream_windows WHERE uuid = ?1 AND shard = ?2",
            )?
            .query_row([uuid, shard], |r| Ok((r.get(0)?, r.get(1)?)))
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(saved.map(|(start, state)| {
            let window = Window::open(start, width);
            window.lock().unwrap_or_else(|p| p.into_inner()).state =
                serde_json::from_str(&state).unwrap_or_else(|_| json!({}));
            window
        }))
    }

    /// Saves the window and its state for the shard of a mapping.
    pub fn save(&self, store: &Store, uuid: &str, shard: &str) -> AwsResult<()> {
        store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_stream_windows (uuid, shard, start, state)
                 VALUES (?1, ?2, ?3, ?4)",
                params![uuid, shard, self.start, self.state.to_string()],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Forgets the saved window of the shard of a mapping.
    pub fn forget(store: &Store, uuid: &str, shard: &str) -> AwsResult<()> {
        store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_stream_windows WHERE uuid = ?1 AND shard = ?2",
                [uuid, shard],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Adds the window's members to an invocation's event.
    pub fn describe(&self, event: &mut Json, shard: &str, arn: &str, last: bool) {
        let at = |ms: i64| timestamp::format(ms, TimestampFormat::Iso8601).replace(".000Z", "Z");
        event["window"] = json!({ "start": at(self.start), "end": at(self.end) });
        event["state"] = self.state.clone();
        event["shardId"] = shard.into();
        event["eventSourceARN"] = arn.into();
        event["isFinalInvokeForWindow"] = last.into();
        event["isWindowTerminatedEarly"] = (last && self.terminated_early).into();
    }

    /// Keeps the `state` of a function's answer; false when it has none (a failure). A
    /// state over [`MAX_STATE`] is not kept: it ends the window early.
    pub fn keep(&mut self, answer: &[u8]) -> bool {
        let state = serde_json::from_slice::<Json>(answer)
            .ok()
            .and_then(|a| a.get("state").cloned());
        match state {
            Some(state) if state.to_string().len() > MAX_STATE => {
                self.terminated_early = true;
                true
            }
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
