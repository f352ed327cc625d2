//! The flusher: the one background task that turns due buffers into deliveries, and reads
//! Kinesis sources.
//!
//! A stream's buffer is due when it holds its buffering hints' `SizeInMBs` or when its
//! oldest record has waited `IntervalInSeconds` on the server clock (0 seconds: at once).
//! A due buffer is taken out in batches of at most the size hint, each published on the
//! event bus as one delivery for this service to perform. Between rounds the task sleeps
//! until the next buffer falls due, waking early when records arrive, a stream changes, or
//! the clock is advanced; with nothing buffered and no Kinesis source it sleeps until woken.
//! It starts with the service's first call.

use std::sync::Arc;
use std::time::Duration;

use roto_core::events::Event;
use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{AwsError, AwsResult, Value};
use rusqlite::params;
use serde_json::Value as Json;

use super::destinations::kind_of;
use super::{source, stream_arn, Inner};

/// How many attempts a delivery gets before it is recorded as failed.
const DELIVERY_ATTEMPTS: u32 = 4;
/// How often Kinesis sources are read, on the server clock.
pub(super) const SOURCE_POLL: Duration = Duration::from_secs(1);

/// Starts the flusher unless it runs.
pub(super) fn ensure_running(inner: &Arc<Inner>) {
    if inner.flusher.set(()).is_ok() {
        tokio::spawn(run(inner.clone()));
    }
}

async fn run(inner: Arc<Inner>) {
    loop {
        let now = now_millis();
        let next_flush = inner.flush_due(now).unwrap_or_else(|e| {
            tracing::warn!("Firehose flush: {}", e.message);
            Some(now + 1000)
        });
        let next_poll = source::poll_all(&inner).await;
        let wake = inner.wake.notified();
        match next_flush.into_iter().chain(next_poll).min() {
            Some(deadline) => {
                tokio::select! {
                    _ = sleep_until(deadline) => {}
                    _ = wake => {}
                }
            }
            None => wake.await,
        }
    }
}

/// A stream's buffer at a glance.
struct Pending {
    account: String,
    region: String,
    stream: String,
    oldest: i64,
    bytes: i64,
    destination: Json,
}

/// The buffering hints of a stored destination: (bytes, milliseconds).
pub(super) fn hints(destination: &Json) -> (i64, i64) {
    let kind = kind_of(destination);
    let described = match kind {
        "Redshift" => {
            &destination[format!("{kind}DestinationDescription")]["S3DestinationDescription"]
        }
        _ => &destination[format!("{kind}DestinationDescription")],
    };
    let hints = &described["BufferingHints"];
    let size = hints["SizeInMBs"].as_i64().unwrap_or(5);
    let interval = hints["IntervalInSeconds"].as_i64().unwrap_or(300);
    (size * 1024 * 1024, interval * 1000)
}

/// Where a stored destination delivers (its bucket, URL or endpoint), for the trace.
pub(super) fn target_of(destination: &Json, stream_arn: &str) -> String {
    let kind = kind_of(destination);
    let described = &destination[format!("{kind}DestinationDescription")];
    let candidates = [
        &described["BucketARN"],
        &described["EndpointConfiguration"]["Url"],
        &described["HECEndpoint"],
        &described["ClusterJDBCURL"],
        &described["DomainARN"],
        &described["ClusterEndpoint"],
        &described["CollectionEndpoint"],
        &described["AccountUrl"],
    ];
    candidates
        .into_iter()
        .find_map(Json::as_str)
        .unwrap_or(stream_arn)
        .to_string()
}

impl Inner {
    fn pending(&self) -> AwsResult<Vec<Pending>> {
        self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT b.account, b.region, b.stream, MIN(b.arrival), SUM(length(b.data)),
                        s.destination
                 FROM firehose_buffer b JOIN firehose_streams s
                   ON s.account = b.account AND s.region = b.region AND s.name = b.stream
                 GROUP BY b.account, b.region, b.stream",
            )?;
            let rows = stmt.query_map([], |r| {
                let destination: String = r.get(5)?;
                Ok(Pending {
                    account: r.get(0)?,
                    region: r.get(1)?,
                    stream: r.get(2)?,
                    oldest: r.get(3)?,
                    bytes: r.get(4)?,
                    destination: serde_json::from_str(&destination).unwrap_or(Json::Null),
                })
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })
    }

    /// Flushes every due buffer; returns when the next one falls due.
    fn flush_due(&self, now: i64) -> AwsResult<Option<i64>> {
        let mut next: Option<i64> = None;
        for p in self.pending()? {
            let (size, interval) = hints(&p.destination);
            let due_at = p.oldest.saturating_add(interval);
            if p.bytes >= size || now >= due_at {
                self.flush(&p, size, now >= due_at)?;
                next = Some(now);
            } else {
                next = Some(next.map_or(due_at, |n| n.min(due_at)));
            }
        }
        Ok(next)
    }

    /// Takes batches out of a buffer: every full batch, and the rest when `all`.
    fn flush(&self, p: &Pending, size: i64, all: bool) -> AwsResult<()> {
        loop {
            let Some(batch) = self.take_batch(p, size, all)? else {
                return Ok(());
            };
            self.env.bus.publish(batch);
        }
    }

    /// The next batch of a buffer as a delivery event, removed from the buffer.
    fn take_batch(&self, p: &Pending, size: i64, all: bool) -> AwsResult<Option<Event>> {
        self.store()?.transaction(|tx| {
            let mut stmt = tx.prepare_cached(
                "SELECT id, arrival, record_id, data, metadata FROM firehose_buffer
                 WHERE account = ?1 AND region = ?2 AND stream = ?3 ORDER BY id",
            )?;
            let mut rows = stmt.query(params![p.account, p.region, p.stream])?;
            let (mut records, mut bytes, mut last, mut full) = (Vec::new(), 0i64, 0i64, false);
            while let Some(r) = rows.next()? {
                let data: Vec<u8> = r.get(3)?;
                if !records.is_empty() && bytes + data.len() as i64 > size {
                    full = true;
                    break;
                }
                bytes += data.len() as i64;
                last = r.get(0)?;
                let metadata: Option<String> = r.get(4)?;
                records.push(
                    Value::map()
                        .with("Arrival", Value::Integer(r.get(1)?))
                        .with("Id", r.get::<_, String>(2)?)
                        .with("Data", Value::Blob(data))
                        .with_opt("Metadata", metadata),
                );
            }
            drop(rows);
            if records.is_empty() || (!all && !full && bytes < size) {
                return Ok(None);
            }
            tx.prepare_cached(
                "DELETE FROM firehose_buffer
                 WHERE account = ?1 AND region = ?2 AND stream = ?3 AND id <= ?4",
            )?
            .execute(params![p.account, p.region, p.stream, last])?;
            let version: i64 = tx
                .prepare_cached(
                    "SELECT version FROM firehose_streams
                     WHERE account = ?1 AND region = ?2 AND name = ?3",
                )?
                .query_row(params![p.account, p.region, p.stream], |r| r.get(0))?;
            Ok(Some(delivery_event(p, version, records)))
        })
    }
}

/// The delivery of one batch.
fn delivery_event(p: &Pending, version: i64, records: Vec<Value>) -> Event {
    let arn = stream_arn(&p.account, &p.region, &p.stream);
    Event {
        kind: "firehose:Delivery".into(),
        source_service: "firehose".into(),
        target_service: "firehose".into(),
        target: target_of(&p.destination, &arn),
        source: arn,
        account: p.account.clone(),
        region: p.region.clone(),
        payload: Value::map()
            .with("Stream", p.stream.as_str())
            .with("Version", Value::Integer(version))
            .with("Destination", p.destination.to_string())
            .with("Records", Value::List(records)),
        max_attempts: DELIVERY_ATTEMPTS,
    }
}
