//! Kinesis's stream-level metrics in `AWS/Kinesis`, per stream (dimension `StreamName`),
//! as AWS publishes them: IncomingRecords and IncomingBytes for the records put, the
//! PutRecord and PutRecords figures (Bytes, Latency, Success, and PutRecords' record
//! counts), the GetRecords figures (Bytes, Records, Latency, Success,
//! IteratorAgeMilliseconds: how old the last record a read returned was), and the reads
//! and records refused over a shard's limits (Read/WriteProvisionedThroughputExceeded).

use std::time::Instant;

use roto_core::metrics::Datum;
use roto_core::{Context, Env, Value};

const NAMESPACE: &str = "AWS/Kinesis";

/// Where a call's metrics go: the caller's account and region, and the stream.
pub(super) struct StreamMetrics<'a> {
    pub env: &'a Env,
    pub ctx: &'a Context,
    pub stream: &'a str,
}

impl StreamMetrics<'_> {
    fn put(&self, name: &str, value: f64, unit: &str) {
        let dims = [("StreamName", self.stream)];
        let datum = Datum::new(NAMESPACE, name, &dims, value, unit);
        self.env
            .metrics
            .put(&self.ctx.account, &self.ctx.region, &datum);
    }

    fn count(&self, name: &str, value: usize) {
        self.put(name, value as f64, "Count");
    }

    fn latency(&self, name: &str, started: Instant) {
        let ms = started.elapsed().as_secs_f64() * 1000.0;
        self.put(name, ms, "Milliseconds");
    }

    /// A PutRecord of `bytes` (data and partition key), stored or refused over the shard's
    /// limit.
    pub fn put_record(&self, bytes: usize, stored: bool, started: Instant) {
        self.latency("PutRecord.Latency", started);
        self.count("PutRecord.Success", usize::from(stored));
        if stored {
            self.incoming(1, bytes);
            self.put("PutRecord.Bytes", bytes as f64, "Bytes");
        } else {
            self.count("WriteProvisionedThroughputExceeded", 1);
        }
    }

    /// A PutRecords of `total` records, of which those stored carried `bytes`, and
    /// `throttled` were refused over a shard's limit.
    pub fn put_records(&self, total: usize, throttled: usize, bytes: usize, started: Instant) {
        let stored = total - throttled;
        self.latency("PutRecords.Latency", started);
        self.count("PutRecords.Success", usize::from(stored > 0));
        self.count("PutRecords.TotalRecords", total);
        self.count("PutRecords.SuccessfulRecords", stored);
        self.count("PutRecords.FailedRecords", 0);
        self.count("PutRecords.ThrottledRecords", throttled);
        self.count("WriteProvisionedThroughputExceeded", throttled);
        self.put("PutRecords.Bytes", bytes as f64, "Bytes");
        self.incoming(stored, bytes);
    }

    fn incoming(&self, records: usize, bytes: usize) {
        self.count("IncomingRecords", records);
        self.put("IncomingBytes", bytes as f64, "Bytes");
    }

    /// A GetRecords that returned `records` (of `bytes`), at `now`.
    pub fn get_records(&self, records: &[Value], bytes: usize, started: Instant, now: i64) {
        let age = records
            .last()
            .and_then(|r| match r.get("ApproximateArrivalTimestamp") {
                Some(Value::Timestamp(at)) => Some((now - at).max(0)),
                _ => None,
            })
            .unwrap_or(0);
        self.latency("GetRecords.Latency", started);
        self.count("GetRecords.Success", 1);
        self.count("GetRecords.Records", records.len());
        self.put("GetRecords.Bytes", bytes as f64, "Bytes");
        self.put(
            "GetRecords.IteratorAgeMilliseconds",
            age as f64,
            "Milliseconds",
        );
    }

    /// A GetRecords refused over the shard's read limit.
    pub fn read_throttled(&self) {
        self.count("ReadProvisionedThroughputExceeded", 1);
    }
}
