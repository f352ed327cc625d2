//! The trace: a bounded ring of every request and every asynchronous delivery.
//!
//! Tests assert on what happened by reading it (`GET /_roto/traces`), optionally blocking
//! until an entry matching their filter appears. The ring keeps the last `--trace-limit`
//! entries; each has a sequence number so readers can ask for what came after one they saw.

use std::borrow::Cow;
use std::collections::VecDeque;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::Mutex;
use std::time::Duration;

use serde::Serialize;
use tokio::sync::Notify;

use crate::timestamp::now_millis;
use crate::value::EpochMillis;

/// What an entry records.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Serialize)]
#[serde(rename_all = "lowercase")]
pub enum TraceKind {
    /// An API call, over HTTP or through the in-process dispatcher.
    Request,
    /// An asynchronous delivery on the event bus.
    Delivery,
}

/// One recorded request or delivery.
#[derive(Debug, Clone, Serialize)]
pub struct TraceEntry {
    /// Position in the trace, increasing from 1.
    pub seq: u64,
    /// When it finished, epoch milliseconds.
    pub time: EpochMillis,
    /// Request or delivery.
    pub kind: TraceKind,
    /// The account.
    pub account: String,
    /// The region.
    pub region: String,
    /// The service that served the request, or that emitted the delivery (borrowed from the
    /// service's spec on the HTTP path, so that tracing a request copies no name).
    pub service: Cow<'static, str>,
    /// The operation, or the delivery's event type (borrowed from the model on the HTTP
    /// path).
    pub operation: Cow<'static, str>,
    /// HTTP status of a request.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub status: Option<u16>,
    /// AWS error code, if the request or delivery failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub error_code: Option<String>,
    /// How long it took, in milliseconds.
    pub duration_ms: f64,
    /// Delivery source (an ARN or service).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub source: Option<String>,
    /// Delivery target (an ARN or URL).
    #[serde(skip_serializing_if = "Option::is_none")]
    pub target: Option<String>,
    /// Delivery outcome: `delivered`, `retrying` or `failed`.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub outcome: Option<String>,
    /// Delivery attempt, from 1.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub attempt: Option<u32>,
    /// A short description of what failed.
    #[serde(skip_serializing_if = "Option::is_none")]
    pub detail: Option<String>,
}

impl TraceEntry {
    /// A request entry; `seq` and `time` are set when recorded.
    pub fn request(account: &str, region: &str, service: &str, operation: &str) -> TraceEntry {
        TraceEntry {
            seq: 0,
            time: 0,
            kind: TraceKind::Request,
            account: account.to_string(),
            region: region.to_string(),
            service: Cow::Owned(service.to_string()),
            operation: Cow::Owned(operation.to_string()),
            status: None,
            error_code: None,
            duration_ms: 0.0,
            source: None,
            target: None,
            outcome: None,
            attempt: None,
            detail: None,
        }
    }
}

/// Which entries a reader wants.
#[derive(Debug, Default, Clone)]
pub struct TraceFilter {
    /// Only this service.
    pub service: Option<String>,
    /// Only this operation.
    pub operation: Option<String>,
    /// Only this kind.
    pub kind: Option<TraceKind>,
    /// Only entries with this error code.
    pub error_code: Option<String>,
    /// Only deliveries to this target.
    pub target: Option<String>,
    /// Only deliveries with this outcome (`delivered`, `retrying`, `failed`).
    pub outcome: Option<String>,
    /// Only entries after this sequence number.
    pub after: Option<u64>,
    /// At most this many (the newest).
    pub limit: Option<usize>,
}

impl TraceFilter {
    fn matches(&self, e: &TraceEntry) -> bool {
        self.service.as_ref().is_none_or(|s| *s == e.service)
            && self.operation.as_ref().is_none_or(|o| *o == e.operation)
            && self.kind.is_none_or(|k| k == e.kind)
            && self
                .error_code
                .as_ref()
                .is_none_or(|c| Some(c) == e.error_code.as_ref())
            && self
                .target
                .as_ref()
                .is_none_or(|t| Some(t) == e.target.as_ref())
            && self
                .outcome
                .as_ref()
                .is_none_or(|o| Some(o) == e.outcome.as_ref())
            && self.after.is_none_or(|a| e.seq > a)
    }
}

/// The bounded ring of entries.
pub struct Trace {
    limit: usize,
    entries: Mutex<VecDeque<TraceEntry>>,
    next_seq: AtomicU64,
    recorded: Notify,
}

impl Trace {
    /// A trace keeping the last `limit` entries (0 records nothing).
    pub fn new(limit: usize) -> Trace {
        Trace {
            limit,
            entries: Mutex::new(VecDeque::with_capacity(limit.min(1024))),
            next_seq: AtomicU64::new(1),
            recorded: Notify::new(),
        }
    }

    /// Records an entry, stamping its sequence number and time.
    pub fn record(&self, mut entry: TraceEntry) {
        if self.limit == 0 {
            return;
        }
        entry.seq = self.next_seq.fetch_add(1, Ordering::Relaxed);
        entry.time = now_millis();
        {
            let mut entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
            if entries.len() == self.limit {
                entries.pop_front();
            }
            entries.push_back(entry);
        }
        self.recorded.notify_waiters();
    }

    /// The entries matching a filter, oldest first.
    pub fn query(&self, filter: &TraceFilter) -> Vec<TraceEntry> {
        let entries = self.entries.lock().unwrap_or_else(|p| p.into_inner());
        let mut out: Vec<TraceEntry> = entries
            .iter()
            .filter(|e| filter.matches(e))
            .cloned()
            .collect();
        if let Some(limit) = filter.limit {
            let skip = out.len().saturating_sub(limit);
            out.drain(..skip);
        }
        out
    }

    /// The entries matching a filter, waiting up to `timeout` for at least one to appear.
    pub async fn wait(&self, filter: &TraceFilter, timeout: Duration) -> Vec<TraceEntry> {
        let deadline = tokio::time::Instant::now() + timeout;
        loop {
            let notified = self.recorded.notified();
            let found = self.query(filter);
            if !found.is_empty() {
                return found;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return Vec::new();
            }
        }
    }

    /// The sequence number of the latest entry recorded (0 before the first).
    pub fn latest_seq(&self) -> u64 {
        self.next_seq.load(Ordering::Relaxed) - 1
    }

    /// Forgets every entry and the memory they held (sequence numbers keep increasing).
    pub fn clear(&self) {
        *self.entries.lock().unwrap_or_else(|p| p.into_inner()) = VecDeque::new();
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ring_keeps_the_newest_entries() {
        let t = Trace::new(2);
        for op in ["A", "B", "C"] {
            t.record(TraceEntry::request("1", "r", "s3", op));
        }
        let ops: Vec<_> = t
            .query(&TraceFilter::default())
            .into_iter()
            .map(|e| e.operation)
            .collect();
        assert_eq!(ops, ["B", "C"]);
    }

    #[test]
    fn filters_select_by_service_operation_and_sequence() {
        let t = Trace::new(10);
        t.record(TraceEntry::request("1", "r", "s3", "PutObject"));
        t.record(TraceEntry::request("1", "r", "sqs", "SendMessage"));
        t.record(TraceEntry::request("1", "r", "s3", "GetObject"));
        let f = TraceFilter {
            service: Some("s3".into()),
            after: Some(1),
            ..TraceFilter::default()
        };
        let found = t.query(&f);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].operation, "GetObject");
    }

    #[test]
    fn filters_select_deliveries_by_target_and_outcome() {
        let t = Trace::new(10);
        for (target, outcome) in [("q1", "retrying"), ("q1", "failed"), ("q2", "failed")] {
            let mut e = TraceEntry::request("1", "r", "sns", "sns:Notification");
            e.kind = TraceKind::Delivery;
            e.target = Some(target.into());
            e.outcome = Some(outcome.into());
            t.record(e);
        }
        let f = TraceFilter {
            target: Some("q1".into()),
            outcome: Some("failed".into()),
            ..TraceFilter::default()
        };
        let found = t.query(&f);
        assert_eq!(found.len(), 1);
        assert_eq!(found[0].seq, 2);
    }

    #[tokio::test]
    async fn wait_returns_as_soon_as_a_match_is_recorded() {
        let t = std::sync::Arc::new(Trace::new(10));
        let writer = t.clone();
        tokio::spawn(async move {
            tokio::time::sleep(Duration::from_millis(20)).await;
            writer.record(TraceEntry::request("1", "r", "sqs", "SendMessage"));
        });
        let f = TraceFilter {
            operation: Some("SendMessage".into()),
            ..TraceFilter::default()
        };
        let found = t.wait(&f, Duration::from_secs(5)).await;
        assert_eq!(found.len(), 1);
        let none = t
            .wait(
                &TraceFilter {
                    operation: Some("Nope".into()),
                    ..TraceFilter::default()
                },
                Duration::from_millis(10),
            )
            .await;
        assert!(none.is_empty());
    }
}
