//! Firehose's metrics in `AWS/Firehose`, per stream (dimension `DeliveryStreamName`), as
//! AWS publishes them: IncomingRecords, IncomingBytes and IncomingPutRequests with the
//! PutRecord and PutRecordBatch figures as records are put directly, and for each delivery
//! to S3 DeliveryToS3.Records, DeliveryToS3.Bytes, DeliveryToS3.Success (1 for a delivery
//! that wrote its objects, 0 for one that failed) and DeliveryToS3.DataFreshness (the age,
//! in seconds, of the oldest record delivered).

use std::time::Instant;

use roto_core::metrics::Datum;
use roto_core::timestamp::now_millis;
use roto_core::{Context, Env};

use super::delivery::Record;

const NAMESPACE: &str = "AWS/Firehose";

fn put(env: &Env, ctx: &Context, stream: &str, (name, value, unit): (&str, f64, &str)) {
    let dims = [("DeliveryStreamName", stream)];
    let datum = Datum::new(NAMESPACE, name, &dims, value, unit);
    env.metrics.put(&ctx.account, &ctx.region, &datum);
}

/// A PutRecord (`batch` false) or PutRecordBatch of `records` records of `bytes` bytes.
pub(super) fn put_records(
    env: &Env,
    ctx: &Context,
    stream: &str,
    (records, bytes): (usize, usize),
    batch: bool,
    started: Instant,
) {
    let operation = if batch { "PutRecordBatch" } else { "PutRecord" };
    let ms = started.elapsed().as_secs_f64() * 1000.0;
    let data = [
        ("IncomingRecords", records as f64, "Count"),
        ("IncomingBytes", bytes as f64, "Bytes"),
        ("IncomingPutRequests", 1.0, "Count"),
        (&format!("{operation}.Requests"), 1.0, "Count"),
        (&format!("{operation}.Bytes"), bytes as f64, "Bytes"),
        (&format!("{operation}.Latency"), ms, "Milliseconds"),
    ];
    for datum in data {
        put(env, ctx, stream, datum);
    }
    if batch {
        put(
            env,
            ctx,
            stream,
            ("PutRecordBatch.Records", records as f64, "Count"),
        );
    }
}

/// A delivery of `records` to S3 that wrote its objects or failed.
pub(super) fn delivered_to_s3(
    env: &Env,
    ctx: &Context,
    stream: &str,
    records: &[Record],
    written: bool,
) {
    put(
        env,
        ctx,
        stream,
        (
            "DeliveryToS3.Success",
            f64::from(u8::from(written)),
            "Count",
        ),
    );
    if !written {
        return;
    }
    let bytes: usize = records.iter().map(|r| r.data.len()).sum();
    put(
        env,
        ctx,
        stream,
        ("DeliveryToS3.Records", records.len() as f64, "Count"),
    );
    put(
        env,
        ctx,
        stream,
        ("DeliveryToS3.Bytes", bytes as f64, "Bytes"),
    );
    if let Some(oldest) = records.iter().map(|r| r.arrival).min() {
        let age = (now_millis() - oldest).max(0) / 1000;
        put(
            env,
            ctx,
            stream,
            ("DeliveryToS3.DataFreshness", age as f64, "Seconds"),
        );
    }
}
