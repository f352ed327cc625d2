//! One batch delivered to its destination: the event bus hands the flusher's delivery back
//! to this service, which performs it and answers how it went (the bus traces and retries).
//!
//! To S3 (and extended S3): the records, transformed by the destination's Lambda function
//! where one is configured and grouped by their partition keys where dynamic partitioning
//! is on, are concatenated as they are (Firehose adds no separator), compressed, and written
//! through the dispatcher as S3 `PutObject`s under the evaluated prefix; records that failed
//! processing are written as AWS's JSON lines under the error output prefix. Other
//! destinations Roto cannot reach (Redshift clusters, OpenSearch domains, Splunk, Snowflake,
//! Iceberg tables) fail as AWS reports an unreachable destination, and their records then go
//! to the destination's S3 backup ([`Inner::backup_failed`]).

use std::collections::BTreeMap;

use roto_core::events::{DeliveryError, Event};
use roto_core::{Context, Value};
use serde_json::{json, Value as Json};

use super::compress::compress;
use super::destinations::kind_of;
use super::prefix::{evaluated, file_name, Facts};
use super::Inner;

/// One record of a batch.
#[derive(Debug, Clone)]
pub(super) struct Record {
    pub id: String,
    pub arrival: i64,
    pub data: Vec<u8>,
    /// A Kinesis source's metadata of the record (JSON).
    pub metadata: Option<String>,
    /// Its dynamic partitioning keys.
    pub keys: BTreeMap<String, String>,
}

/// A record that could not be delivered, and why.
pub(super) struct Failed {
    pub record: Record,
    pub code: String,
    pub message: String,
    /// `!{firehose:error-output-type}` for it.
    pub output_type: &'static str,
    pub attempts: u32,
    pub lambda_arn: Option<String>,
}

/// What a delivery is about.
pub(super) struct Batch {
    pub ctx: Context,
    pub stream: String,
    pub stream_arn: String,
    pub version: i64,
    pub records: Vec<Record>,
}

impl Batch {
    pub(super) fn of(event: &Event) -> Batch {
        let records = event
            .payload
            .get("Records")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .map(|r| Record {
                id: r.str("Id").unwrap_or_default().to_string(),
                arrival: r.int("Arrival").unwrap_or_default(),
                data: r
                    .get("Data")
                    .and_then(Value::as_blob)
                    .unwrap_or_default()
                    .to_vec(),
                metadata: r.str("Metadata").map(str::to_string),
                keys: BTreeMap::new(),
            })
            .collect();
        Batch {
            ctx: Context {
                account: event.account.clone(),
                region: event.region.clone(),
                access_key: None,
                request_id: roto_core::dispatch::new_request_id(),
                host: String::new(),
            },
            stream: event.payload.str("Stream").unwrap_or_default().to_string(),
            stream_arn: event.source.clone(),
            version: event.payload.int("Version").unwrap_or(1),
            records,
        }
    }
}

/// The stored destination a delivery event carries.
pub(super) fn destination_of(event: &Event) -> Json {
    event
        .payload
        .str("Destination")
        .and_then(|d| serde_json::from_str(d).ok())
        .unwrap_or(Json::Null)
}

/// Performs one delivery event.
pub(super) async fn deliver(inner: &Inner, event: &Event) -> Result<(), DeliveryError> {
    if event.kind == "firehose:Backup" {
        return super::endpoint::write_backup(inner, event).await;
    }
    let destination = destination_of(event);
    let batch = Batch::of(event);
    match kind_of(&destination) {
        "S3" | "ExtendedS3" => {
            to_s3(
                inner,
                &batch,
                &destination["ExtendedS3DestinationDescription"],
            )
            .await
        }
        "HttpEndpoint" => super::endpoint::to_endpoint(inner, &batch, &destination).await,
        "Redshift" => {
            let staging =
                &destination["RedshiftDestinationDescription"]["S3DestinationDescription"];
            write_objects(inner, &batch, staging, &batch.records).await?;
            Err(DeliveryError::permanent(unreachable(
                "Redshift",
                &destination,
            )))
        }
        kind => Err(DeliveryError::permanent(unreachable(kind, &destination))),
    }
}

/// How AWS reports a destination it cannot connect to.
fn unreachable(kind: &str, destination: &Json) -> String {
    let target = super::flusher::target_of(destination, "the destination");
    let code = match kind {
        "Redshift" => "Redshift.ConnectionFailed",
        "Elasticsearch" => "ES.ConnectionFailed",
        "Amazonopensearchservice" | "AmazonOpenSearchServerless" => "OS.ConnectionFailed",
        "Splunk" => "Splunk.ConnectionTimeout",
        "Snowflake" => "Snowflake.ConnectionFailed",
        "Iceberg" => "Iceberg.AccessDenied",
        _ => "Destination.ConnectionFailed",
    };
    format!("{code}: Firehose could not connect to {target}.")
}

/// Concatenated record data.
fn joined(records: &[&Record]) -> Vec<u8> {
    let mut body = Vec::with_capacity(records.iter().map(|r| r.data.len()).sum());
    for r in records {
        body.extend_from_slice(&r.data);
    }
    body
}

/// Delivers a batch to an S3 destination described by `s3`.
async fn to_s3(inner: &Inner, batch: &Batch, s3: &Json) -> Result<(), DeliveryError> {
    let (ok, failed) = super::transform::process(inner, batch, s3).await?;
    let written = write_objects(inner, batch, s3, &ok).await;
    let env = &inner.env;
    super::metrics::delivered_to_s3(env, &batch.ctx, &batch.stream, &ok, written.is_ok());
    written?;
    write_failed(inner, batch, s3, &failed).await
}

/// Writes records as objects of the S3 destination described by `s3`, one per set of
/// partition keys.
pub(super) async fn write_objects(
    inner: &Inner,
    batch: &Batch,
    s3: &Json,
    records: &[Record],
) -> Result<(), DeliveryError> {
    let mut groups: BTreeMap<&BTreeMap<String, String>, Vec<&Record>> = BTreeMap::new();
    for r in records {
        groups.entry(&r.keys).or_default().push(r);
    }
    let text = |k: &str| s3[k].as_str().unwrap_or_default();
    for (keys, records) in groups {
        let time = records.iter().map(|r| r.arrival).min().unwrap_or_default();
        let facts = Facts {
            time,
            error_output_type: None,
            partition_keys: keys,
        };
        let name = file_name(&batch.stream, batch.version, time);
        let format = text("CompressionFormat").to_string();
        let body = joined(&records);
        let entry = name.clone();
        let (body, extension) = crate::blocking::run(move || Ok(compress(&format, &body, &entry)))
            .await
            .map_err(|e| DeliveryError::from(e.message))?;
        let extension = match text("FileExtension") {
            "" => extension,
            custom => custom,
        };
        let key = format!("{}{name}{extension}", evaluated(text("Prefix"), &facts));
        put_object(inner, &batch.ctx, text("BucketARN"), &key, body).await?;
    }
    Ok(())
}

/// Writes records that failed under the error output prefix, as AWS's JSON
/// lines, one object per error output type.
pub(super) async fn write_failed(
    inner: &Inner,
    batch: &Batch,
    s3: &Json,
    failed: &[Failed],
) -> Result<(), DeliveryError> {
    let mut by_type: BTreeMap<&str, Vec<&Failed>> = BTreeMap::new();
    for f in failed {
        by_type.entry(f.output_type).or_default().push(f);
    }
    let now = roto_core::timestamp::now_millis();
    for (output_type, records) in by_type {
        let time = records
            .iter()
            .map(|f| f.record.arrival)
            .min()
            .unwrap_or(now);
        let mut body = String::new();
        for f in &records {
            body.push_str(&failure_line(f, now).to_string());
            body.push('\n');
        }
        let keys = BTreeMap::new();
        let facts = Facts {
            time,
            error_output_type: Some(output_type),
            partition_keys: &keys,
        };
        let prefix = evaluated(s3["ErrorOutputPrefix"].as_str().unwrap_or_default(), &facts);
        let key = format!("{prefix}{}", file_name(&batch.stream, batch.version, time));
        let bucket = s3["BucketARN"].as_str().unwrap_or_default();
        put_object(inner, &batch.ctx, bucket, &key, body.into_bytes()).await?;
    }
    Ok(())
}

/// A failed record as AWS writes it to the error output.
fn failure_line(f: &Failed, now: i64) -> Json {
    use base64::Engine;
    let mut line = json!({
        "attemptsMade": f.attempts,
        "arrivalTimestamp": f.record.arrival,
        "errorCode": f.code,
        "errorMessage": f.message,
        "attemptEndingTimestamp": now,
        "rawData": base64::engine::general_purpose::STANDARD.encode(&f.record.data),
    });
    if let Some(arn) = &f.lambda_arn {
        line["lambdaArn"] = json!(arn);
    }
    line
}

/// Writes one object through the dispatcher; S3's refusal is a failed attempt.
pub(super) async fn put_object(
    inner: &Inner,
    ctx: &Context,
    bucket_arn: &str,
    key: &str,
    body: Vec<u8>,
) -> Result<(), DeliveryError> {
    let bucket = bucket_arn.rsplit(":::").next().unwrap_or(bucket_arn);
    let dispatcher = inner
        .env
        .dispatcher()
        .ok_or_else(|| DeliveryError::from("the dispatcher is not running".to_string()))?;
    let input = Value::map()
        .with("Bucket", bucket)
        .with("Key", key)
        .with("Body", Value::Blob(body));
    match dispatcher.call(ctx, "s3", "PutObject", input).await {
        Ok(_) => Ok(()),
        Err(e) => Err(format!("S3.{}: {}", e.code, e.message).into()),
    }
}
