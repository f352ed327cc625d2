//! Log events: PutLogEvents, GetLogEvents and FilterLogEvents.
//!
//! Events are ordered by `(timestamp, row id)`: two events with one timestamp keep the
//! order they arrived in. Tokens name a position in that order: 56 digits (the timestamp in
//! 20, the row id in 36), prefixed `f/` or `b/` in GetLogEvents as AWS's are, bare in
//! FilterLogEvents.

use roto_core::store::Cached;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::filter::Pattern;
use super::{bad_token, group_of, invalid, no_stream, Logs};

/// The largest PutLogEvents batch: the messages' UTF-8 bytes plus 26 bytes per event.
const MAX_BATCH_BYTES: usize = 1_048_576;
/// The per-event overhead counted toward the batch size.
const EVENT_OVERHEAD: usize = 26;
/// How far apart the first and last events of one batch may be.
const MAX_SPAN_MS: i64 = 24 * 3600 * 1000;
/// Events further in the future than this are rejected as too new.
const MAX_FUTURE_MS: i64 = 2 * 3600 * 1000;
/// Events older than this are rejected as too old.
const MAX_AGE_MS: i64 = 14 * 24 * 3600 * 1000;
/// The events one read returns when the caller names no limit.
const DEFAULT_LIMIT: i64 = 10_000;
/// The bytes one read returns at most.
const MAX_READ_BYTES: usize = 1_048_576;
const DAY_MS: i64 = 24 * 3600 * 1000;

/// A position in a group's event order.
#[derive(Debug, Clone, Copy, PartialEq, Eq, PartialOrd, Ord)]
struct Position {
    ts: i64,
    id: i64,
}

impl Position {
    const START: Position = Position {
        ts: i64::MIN,
        id: i64::MIN,
    };
    const END: Position = Position {
        ts: i64::MAX,
        id: i64::MAX,
    };

    fn encode(self) -> String {
        format!("{:020}{:036}", self.ts.max(0), self.id.max(0))
    }

    fn decode(digits: &str) -> Option<Position> {
        if digits.len() != 56 || !digits.bytes().all(|b| b.is_ascii_digit()) {
            return None;
        }
        Some(Position {
            ts: digits[..20].parse().ok()?,
            id: digits[20..].parse().ok()?,
        })
    }
}

/// One stored event.
struct Event {
    pos: Position,
    stream: String,
    ingested: i64,
    message: String,
}

impl Event {
    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Event> {
        Ok(Event {
            pos: Position {
                id: r.get(0)?,
                ts: r.get(1)?,
            },
            stream: r.get(2)?,
            ingested: r.get(3)?,
            message: r.get(4)?,
        })
    }
}

impl Logs {
    /// The oldest timestamp still kept under a group's retention.
    pub(super) fn retained_since(&self, retention: Option<i64>) -> EpochMillis {
        retention.map_or(i64::MIN, |days| self.now() - days * DAY_MS)
    }

    pub(super) fn put_log_events(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let stream = input.str("logStreamName").unwrap_or_default();
        let events: Vec<(i64, &str)> = input
            .get("logEvents")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .map(|e| {
                (
                    e.int("timestamp").unwrap_or_default(),
                    e.str("message").unwrap_or_default(),
                )
            })
            .collect();
        if events.windows(2).any(|w| w[1].0 < w[0].0) {
            return Err(invalid(
                "Log events in a single PutLogEvents request must be in chronological order.",
            ));
        }
        if let (Some(first), Some(last)) = (events.first(), events.last()) {
            if last.0 - first.0 > MAX_SPAN_MS {
                return Err(invalid(
                    "The batch of log events in a single PutLogEvents request cannot span more than 24 hours.",
                ));
            }
        }
        let size: usize = events.iter().map(|(_, m)| m.len() + EVENT_OVERHEAD).sum();
        if size > MAX_BATCH_BYTES {
            return Err(invalid(format!(
                "Upload too large: {size} bytes exceeds limit of {MAX_BATCH_BYTES}"
            )));
        }
        let retention = self.existing_group(ctx, group)?.retention;
        if !self.stream_exists(ctx, group, stream)? {
            return Err(no_stream());
        }
        let now = self.now();
        let expired_before = self.retained_since(retention);
        let mut rejected = Value::map();
        let mut accepted = Vec::with_capacity(events.len());
        for (i, &(ts, message)) in events.iter().enumerate() {
            if ts > now + MAX_FUTURE_MS {
                if rejected.get("tooNewLogEventStartIndex").is_none() {
                    rejected.insert("tooNewLogEventStartIndex", i);
                }
            } else if ts < expired_before {
                rejected.insert("expiredLogEventEndIndex", i);
            } else if ts < now - MAX_AGE_MS {
                rejected.insert("tooOldLogEventEndIndex", i);
            } else {
                accepted.push((ts, message));
            }
        }
        let transformed = self.transform(ctx, group, stream, &accepted)?;
        let stored_messages: Vec<&str> = match &transformed {
            Some(t) => t.iter().map(String::as_str).collect(),
            None => accepted.iter().map(|(_, m)| *m).collect(),
        };
        let last_id = self.env.store.transaction(|tx| {
            let mut insert = tx.prepare_cached(
                "INSERT INTO logs_events (account, region, grp, stream, ts, ingested, message)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
            )?;
            for ((ts, _), message) in accepted.iter().zip(&stored_messages) {
                insert.execute(params![
                    ctx.account,
                    ctx.region,
                    group,
                    stream,
                    ts,
                    now,
                    message
                ])?;
            }
            if let (Some(first), Some(last)) = (accepted.first(), accepted.last()) {
                tx.execute_cached(
                    "UPDATE logs_streams SET
                        first_event = MIN(COALESCE(first_event, ?5), ?5),
                        last_event = MAX(COALESCE(last_event, ?6), ?6),
                        last_ingestion = ?7
                     WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4",
                    params![ctx.account, ctx.region, group, stream, first.0, last.0, now],
                )?;
            }
            Ok::<_, AwsError>(tx.last_insert_rowid())
        })?;
        let first_id = last_id - accepted.len() as i64 + 1;
        let with_ids = |messages: &[&str]| -> Vec<(String, i64, String)> {
            accepted
                .iter()
                .zip(messages)
                .zip(first_id..)
                .map(|((&(ts, _), m), id)| (Position { ts, id }.encode(), ts, m.to_string()))
                .collect()
        };
        let originals: Vec<&str> = accepted.iter().map(|(_, m)| *m).collect();
        let transformed_events = transformed.is_some().then(|| with_ids(&stored_messages));
        self.notify_subscriptions(
            ctx,
            group,
            stream,
            &with_ids(&originals),
            transformed_events.as_deref(),
        )?;
        let transformed_metrics: Option<Vec<(i64, &str)>> = transformed.is_some().then(|| {
            accepted
                .iter()
                .zip(&stored_messages)
                .map(|(&(ts, _), m)| (ts, *m))
                .collect()
        });
        self.publish_metrics(ctx, group, &accepted, transformed_metrics.as_deref())?;
        let mut out = Value::map().with("nextSequenceToken", format!("{last_id:056}"));
        if rejected.as_map().is_some_and(|m| !m.is_empty()) {
            out.insert("rejectedLogEventsInfo", rejected);
        }
        Ok(out)
    }

    pub(super) fn get_log_events(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_of(input)?;
        let stream = input.str("logStreamName").unwrap_or_default();
        let token = input
            .str("nextToken")
            .map(|t| {
                let forward = match t.get(..2) {
                    Some("f/") => true,
                    Some("b/") => false,
                    _ => return Err(bad_token()),
                };
                Position::decode(&t[2..])
                    .map(|p| (forward, p))
                    .ok_or_else(bad_token)
            })
            .transpose()?;
        let retention = self.existing_group(ctx, &group)?.retention;
        if !self.stream_exists(ctx, &group, stream)? {
            return Err(no_stream());
        }
        let (forward, from) = token.unwrap_or(if input.bool("startFromHead").unwrap_or(false) {
            (true, Position::START)
        } else {
            (false, Position::END)
        });
        let start = input
            .int("startTime")
            .unwrap_or(i64::MIN)
            .max(self.retained_since(retention));
        let end = input.int("endTime").unwrap_or(i64::MAX);
        let limit = input.int("limit").unwrap_or(DEFAULT_LIMIT);
        let (cmp, order) = if forward { (">", "ASC") } else { ("<", "DESC") };
        let mut events: Vec<Event> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT id, ts, stream, ingested, message FROM logs_events
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND stream = ?4
                   AND (ts, id) {cmp} (?5, ?6) AND ts >= ?7 AND ts < ?8
                 ORDER BY ts {order}, id {order} LIMIT ?9"
            ))?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    group,
                    stream,
                    from.ts,
                    from.id,
                    start,
                    end,
                    limit
                ],
                Event::from_row,
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        truncate_to_bytes(&mut events);
        if !forward {
            events.reverse();
        }
        let zero = Position { ts: 0, id: 0 };
        let (first, last) = match (events.first(), events.last()) {
            (Some(f), Some(l)) => (f.pos, l.pos),
            _ if token.is_some() => (from, from),
            _ => (zero, zero),
        };
        let out_events: Vec<Value> = events
            .into_iter()
            .map(|e| {
                Value::map()
                    .with("timestamp", e.pos.ts)
                    .with("message", e.message)
                    .with("ingestionTime", e.ingested)
            })
            .collect();
        Ok(Value::map()
            .with("events", out_events)
            .with("nextForwardToken", format!("f/{}", last.encode()))
            .with("nextBackwardToken", format!("b/{}", first.encode())))
    }

    pub(super) fn filter_log_events(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_of(input)?;
        let names: Option<Vec<&str>> = input
            .get("logStreamNames")
            .and_then(Value::as_list)
            .map(|l| l.iter().filter_map(Value::as_str).collect());
        let prefix = input.str("logStreamNamePrefix");
        if names.is_some() && prefix.is_some() {
            return Err(invalid(
                "Cannot specify both logStreamNames and logStreamNamePrefix.",
            ));
        }
        let pattern =
            Pattern::parse(input.str("filterPattern").unwrap_or_default()).map_err(invalid)?;
        let after = match input.str("nextToken") {
            Some(t) => Position::decode(t).ok_or_else(bad_token)?,
            None => Position::START,
        };
        let retention = self.existing_group(ctx, &group)?.retention;
        let start = input
            .int("startTime")
            .unwrap_or(i64::MIN)
            .max(self.retained_since(retention));
        let end = input.int("endTime").unwrap_or(i64::MAX);
        let limit = usize::try_from(input.int("limit").unwrap_or(DEFAULT_LIMIT)).unwrap_or(1);
        let wanted = |stream: &str| {
            names.as_ref().is_none_or(|n| n.contains(&stream))
                && prefix.is_none_or(|p| stream.starts_with(p))
        };
        let (matched, more) = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT id, ts, stream, ingested, message FROM logs_events
                 WHERE account = ?1 AND region = ?2 AND grp = ?3
                   AND (ts, id) > (?4, ?5) AND ts >= ?6 AND ts <= ?7
                 ORDER BY ts, id",
            )?;
            let mut rows = st.query(params![
                ctx.account,
                ctx.region,
                group,
                after.ts,
                after.id,
                start,
                end
            ])?;
            let mut matched = Vec::new();
            let mut bytes = 0;
            while let Some(row) = rows.next()? {
                let event = Event::from_row(row)?;
                if !wanted(&event.stream) || !pattern.matches(&event.message) {
                    continue;
                }
                if matched.len() == limit || bytes + event.message.len() > MAX_READ_BYTES {
                    return Ok::<_, AwsError>((matched, true));
                }
                bytes += event.message.len();
                matched.push(event);
            }
            Ok((matched, false))
        })?;
        let token = if more {
            matched.last().map(|e| e.pos.encode())
        } else {
            None
        };
        let events: Vec<Value> = matched
            .into_iter()
            .map(|e| {
                Value::map()
                    .with("logStreamName", e.stream)
                    .with("timestamp", e.pos.ts)
                    .with("message", e.message)
                    .with("ingestionTime", e.ingested)
                    .with("eventId", e.pos.encode())
            })
            .collect();
        Ok(Value::map()
            .with("events", events)
            .with("searchedLogStreams", Vec::<Value>::new())
            .with_opt("nextToken", token))
    }
}

/// Drops events past the 1 MB a read returns, keeping at least one.
fn truncate_to_bytes(events: &mut Vec<Event>) {
    let mut bytes = 0;
    let keep = events
        .iter()
        .position(|e| {
            bytes += e.message.len();
            bytes > MAX_READ_BYTES
        })
        .unwrap_or(events.len())
        .max(1);
    events.truncate(keep);
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn positions_round_trip_through_their_56_digits() {
        let p = Position {
            ts: 1_700_000_000_123,
            id: 42,
        };
        let digits = p.encode();
        assert_eq!(digits.len(), 56);
        assert_eq!(Position::decode(&digits), Some(p));
        assert_eq!(Position::decode("12"), None);
        assert_eq!(Position::decode(&"x".repeat(56)), None);
    }
}
