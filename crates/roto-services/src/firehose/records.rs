//! PutRecord and PutRecordBatch, and the buffer records wait in until their batch is due.
//!
//! A record is at most 1,000 KiB (the model's bound, checked before the handler runs); a
//! batch is at most 500 records (likewise) and 4 MiB in all. Records go to the stream's
//! buffer in one transaction and the flusher is woken to see whether a batch is due.

use std::time::Instant;

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};
use rusqlite::params;

use super::metrics;
use super::{invalid_argument, DeliveryStream, Inner};

/// The most a PutRecordBatch may carry, in bytes of record data.
const MAX_BATCH_BYTES: usize = 4 * 1024 * 1024;

/// One record on its way into the buffer.
pub(super) struct Incoming<'a> {
    /// When it arrived (for a Kinesis source, when it arrived in the data stream).
    pub arrival: i64,
    /// Its record id.
    pub id: String,
    /// Its bytes.
    pub data: &'a [u8],
    /// For a Kinesis source, the record's Kinesis metadata (JSON).
    pub metadata: Option<String>,
}

/// A record id as Firehose gives them: an opaque string of 224 characters.
pub(super) fn record_id() -> String {
    let bytes: Vec<u8> = (0..168).map(|_| fastrand::u8(..)).collect();
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn check_direct_put(stream: &DeliveryStream) -> AwsResult<()> {
    if stream.kind != "DirectPut" {
        return Err(invalid_argument(format!(
            "This operation is not permitted on {} delivery stream type.",
            stream.kind
        )));
    }
    Ok(())
}

fn encrypted(stream: &DeliveryStream) -> bool {
    stream
        .encryption
        .as_ref()
        .and_then(|e| e.get("Status"))
        .and_then(|s| s.as_str())
        == Some("ENABLED")
}

fn data_of(record: Option<&Value>) -> &[u8] {
    record
        .and_then(|r| r.get("Data"))
        .and_then(Value::as_blob)
        .unwrap_or_default()
}

impl Inner {
    pub(super) fn put_record(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let started = Instant::now();
        let stream = self.stream(ctx, input)?;
        check_direct_put(&stream)?;
        let incoming = Incoming {
            arrival: now_millis(),
            id: record_id(),
            data: data_of(input.get("Record")),
            metadata: None,
        };
        let id = incoming.id.clone();
        let counts = (1, incoming.data.len());
        self.append(&ctx.account, &ctx.region, &stream.name, &[incoming])?;
        metrics::put_records(&self.env, ctx, &stream.name, counts, false, started);
        Ok(Value::map()
            .with("RecordId", id)
            .with("Encrypted", encrypted(&stream)))
    }

    pub(super) fn put_record_batch(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let started = Instant::now();
        let stream = self.stream(ctx, input)?;
        check_direct_put(&stream)?;
        let records = input
            .get("Records")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let total: usize = records.iter().map(|r| data_of(Some(r)).len()).sum();
        if total > MAX_BATCH_BYTES {
            return Err(invalid_argument(format!(
                "Records size exceeds 4 MB limit: the batch holds {total} bytes."
            )));
        }
        let now = now_millis();
        let incoming: Vec<Incoming<'_>> = records
            .iter()
            .map(|r| Incoming {
                arrival: now,
                id: record_id(),
                data: data_of(Some(r)),
                metadata: None,
            })
            .collect();
        self.append(&ctx.account, &ctx.region, &stream.name, &incoming)?;
        let counts = (incoming.len(), total);
        metrics::put_records(&self.env, ctx, &stream.name, counts, true, started);
        let responses: Vec<Value> = incoming
            .into_iter()
            .map(|r| Value::map().with("RecordId", r.id))
            .collect();
        Ok(Value::map()
            .with("FailedPutCount", Value::Integer(0))
            .with("Encrypted", encrypted(&stream))
            .with("RequestResponses", Value::List(responses)))
    }

    /// Adds records to a stream's buffer and wakes the flusher.
    pub(super) fn append(
        &self,
        account: &str,
        region: &str,
        stream: &str,
        records: &[Incoming<'_>],
    ) -> AwsResult<()> {
        self.store()?
            .transaction(|tx| insert(tx, account, region, stream, records))?;
        self.wake.notify_one();
        Ok(())
    }
}

/// Inserts records into a stream's buffer.
pub(super) fn insert(
    tx: &rusqlite::Connection,
    account: &str,
    region: &str,
    stream: &str,
    records: &[Incoming<'_>],
) -> AwsResult<()> {
    let mut insert = tx.prepare_cached(
        "INSERT INTO firehose_buffer
         (account, region, stream, arrival, record_id, data, metadata)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
    )?;
    for r in records {
        insert.execute(params![
            account, region, stream, r.arrival, r.id, r.data, r.metadata
        ])?;
    }
    Ok(())
}
