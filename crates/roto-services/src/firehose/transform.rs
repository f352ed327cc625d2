//! A destination's processors, run over a batch before it is written: record
//! transformation through a Lambda function, dynamic partitioning's metadata extraction,
//! and the delimiter appended to each record.
//!
//! The Lambda function is invoked through the dispatcher with AWS's event (`invocationId`,
//! `deliveryStreamArn`, `region`, `records` of `recordId`, `approximateArrivalTimestamp`,
//! base64 `data`, and for a Kinesis source `sourceKinesisStreamArn` and each record's
//! `kinesisRecordMetadata`), at most `BufferSizeInMBs` (default 1 MiB) of records per
//! invocation. It answers `records` of `recordId`, `result` (`Ok`, `Dropped`,
//! `ProcessingFailed`), base64 `data` and, for dynamic partitioning, `metadata.partitionKeys`.
//! A failed invocation is retried `NumberOfRetries` times (default 3); then, like records the
//! function failed or forgot, its records go to the error output as `processing-failed`.
//! Records whose metadata extraction fails go there as `partitioning-failed`. The
//! `RecordDeAggregation`, `Decompression` and `CloudWatchLogProcessing` processors are kept
//! in the configuration but not run.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use roto_core::events::DeliveryError;
use roto_core::Value;
use serde_json::{json, Value as Json};

use super::delivery::{Batch, Failed, Record};
use super::partition::Query;
use super::Inner;

/// The records that go on, and those that failed.
pub(super) type Processed = (Vec<Record>, Vec<Failed>);

/// A processor's parameter, if given.
pub(super) fn parameter<'a>(processor: &'a Json, name: &str) -> Option<&'a str> {
    processor["Parameters"]
        .as_array()?
        .iter()
        .find(|p| p["ParameterName"] == name)?["ParameterValue"]
        .as_str()
}

/// Runs the destination's processors (`described` is its description) over a batch.
pub(super) async fn process(
    inner: &Inner,
    batch: &Batch,
    described: &Json,
) -> Result<Processed, DeliveryError> {
    let mut records = batch.records.clone();
    let mut failed = Vec::new();
    let processing = &described["ProcessingConfiguration"];
    let processors = processing["Processors"]
        .as_array()
        .cloned()
        .unwrap_or_default();
    if processing["Enabled"] == false {
        return Ok((records, failed));
    }
    for processor in &processors {
        match processor["Type"].as_str().unwrap_or_default() {
            "Lambda" => {
                let (ok, bad) = through_lambda(inner, batch, processor, records).await;
                records = ok;
                failed.extend(bad);
            }
            "MetadataExtraction" => {
                let (ok, bad) = extract_metadata(processor, records);
                records = ok;
                failed.extend(bad);
            }
            "AppendDelimiterToRecord" => append_delimiter(processor, &mut records),
            _ => {}
        }
    }
    if described["DynamicPartitioningConfiguration"]["Enabled"] != true {
        records.iter_mut().for_each(|r| r.keys.clear());
    }
    Ok((records, failed))
}

fn append_delimiter(processor: &Json, records: &mut [Record]) {
    let delimiter = parameter(processor, "Delimiter")
        .unwrap_or("\\n")
        .replace("\\n", "\n")
        .replace("\\t", "\t");
    for r in records {
        r.data.extend_from_slice(delimiter.as_bytes());
    }
}

fn failure(record: Record, code: &str, message: &str, output_type: &'static str) -> Failed {
    Failed {
        record,
        code: code.to_string(),
        message: message.to_string(),
        output_type,
        attempts: 1,
        lambda_arn: None,
    }
}

fn extract_metadata(processor: &Json, records: Vec<Record>) -> Processed {
    let query = parameter(processor, "MetadataExtractionQuery").unwrap_or_default();
    let Ok(query) = Query::parse(query) else {
        return (records, Vec::new());
    };
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for mut r in records {
        match query.extract(&r.data) {
            Ok(keys) => {
                r.keys.extend(keys);
                ok.push(r);
            }
            Err(message) => bad.push(failure(
                r,
                "DynamicPartitioning.MetadataExtractionFailed",
                &message,
                "partitioning-failed",
            )),
        }
    }
    (ok, bad)
}

/// Splits records into invocations of at most `limit` bytes (at least one record each).
fn chunks(records: Vec<Record>, limit: usize) -> Vec<Vec<Record>> {
    let mut out: Vec<Vec<Record>> = Vec::new();
    let mut size = 0;
    for r in records {
        match out.last_mut() {
            Some(chunk) if size + r.data.len() <= limit => {
                size += r.data.len();
                chunk.push(r);
            }
            _ => {
                size = r.data.len();
                out.push(vec![r]);
            }
        }
    }
    out
}

async fn through_lambda(
    inner: &Inner,
    batch: &Batch,
    processor: &Json,
    records: Vec<Record>,
) -> Processed {
    let arn = parameter(processor, "LambdaArn")
        .unwrap_or_default()
        .to_string();
    let retries: u32 = parameter(processor, "NumberOfRetries")
        .and_then(|n| n.parse().ok())
        .unwrap_or(3);
    let limit = parameter(processor, "BufferSizeInMBs")
        .and_then(|n| n.parse::<usize>().ok())
        .unwrap_or(1)
        * 1024
        * 1024;
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    for chunk in chunks(records, limit) {
        let (good, failed) = invoke_with_retries(inner, batch, &arn, retries, chunk).await;
        ok.extend(good);
        bad.extend(failed);
    }
    (ok, bad)
}

async fn invoke_with_retries(
    inner: &Inner,
    batch: &Batch,
    arn: &str,
    retries: u32,
    records: Vec<Record>,
) -> Processed {
    let event = lambda_event(batch, &records);
    let mut last = (String::new(), String::new());
    for _ in 0..=retries {
        match invoke(inner, batch, arn, &event).await {
            Ok(answer) => return read_answer(&answer, records, arn),
            Err(e) => last = e,
        }
    }
    let failed = records
        .into_iter()
        .map(|r| Failed {
            attempts: retries + 1,
            lambda_arn: Some(arn.to_string()),
            ..failure(r, &last.0, &last.1, "processing-failed")
        })
        .collect();
    (Vec::new(), failed)
}

/// The event a transformation function receives.
fn lambda_event(batch: &Batch, records: &[Record]) -> Json {
    let mut source = None;
    let list: Vec<Json> = records
        .iter()
        .map(|r| {
            let mut record = json!({
                "recordId": r.id,
                "approximateArrivalTimestamp": r.arrival,
                "data": STANDARD.encode(&r.data),
            });
            let metadata = r
                .metadata
                .as_deref()
                .and_then(|m| serde_json::from_str::<Json>(m).ok());
            if let Some(mut metadata) = metadata {
                if let Some(arn) = metadata.as_object_mut().and_then(|m| m.remove("sourceArn")) {
                    source = Some(arn);
                }
                record["kinesisRecordMetadata"] = metadata;
            }
            record
        })
        .collect();
    let mut event = json!({
        "invocationId": crate::ids::uuid(),
        "deliveryStreamArn": batch.stream_arn,
        "region": batch.ctx.region,
        "records": list,
    });
    if let Some(arn) = source {
        event["sourceKinesisStreamArn"] = arn;
    }
    event
}

/// One invocation: the function's answer, or (errorCode, errorMessage).
async fn invoke(
    inner: &Inner,
    batch: &Batch,
    arn: &str,
    event: &Json,
) -> Result<Json, (String, String)> {
    let dispatcher = inner.env.dispatcher().ok_or_else(|| {
        (
            "Lambda.InvokeAccessDenied".to_string(),
            "Lambda is not reachable.".to_string(),
        )
    })?;
    let input = Value::map()
        .with("FunctionName", arn)
        .with("Payload", Value::Blob(event.to_string().into_bytes()));
    let output = dispatcher
        .call(&batch.ctx, "lambda", "Invoke", input)
        .await
        .map_err(|e| {
            let code = e.code.trim_end_matches("Exception");
            (format!("Lambda.{code}"), e.message)
        })?;
    if output.str("FunctionError").is_some() {
        return Err((
            "Lambda.FunctionError".into(),
            "The Lambda function was successfully invoked but it returned an error result.".into(),
        ));
    }
    let payload = output
        .get("Payload")
        .and_then(Value::as_blob)
        .unwrap_or_default();
    serde_json::from_slice(payload).map_err(|_| {
        (
            "Lambda.JsonProcessingException".into(),
            "The Lambda function's response is not valid JSON.".into(),
        )
    })
}

/// The records a function's answer keeps, and those it failed or left out.
fn read_answer(answer: &Json, records: Vec<Record>, arn: &str) -> Processed {
    let answered: BTreeMap<&str, &Json> = answer["records"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| Some((r["recordId"].as_str()?, r)))
        .collect();
    let (mut ok, mut bad) = (Vec::new(), Vec::new());
    let fail = |r: Record, code: &str, message: &str| Failed {
        lambda_arn: Some(arn.to_string()),
        ..failure(r, code, message, "processing-failed")
    };
    for mut r in records {
        let Some(answer) = answered.get(r.id.as_str()) else {
            bad.push(fail(
                r,
                "Lambda.MissingRecordId",
                "The record id was not returned by the Lambda function.",
            ));
            continue;
        };
        match answer["result"].as_str() {
            Some("Ok") => match STANDARD.decode(answer["data"].as_str().unwrap_or_default()) {
                Ok(data) => {
                    r.data = data;
                    for (k, v) in answer["metadata"]["partitionKeys"]
                        .as_object()
                        .into_iter()
                        .flatten()
                    {
                        let text = v.as_str().map_or_else(|| v.to_string(), str::to_string);
                        r.keys.insert(k.clone(), text);
                    }
                    ok.push(r);
                }
                Err(_) => bad.push(fail(
                    r,
                    "Lambda.InvalidReturnedData",
                    "The data returned for the record is not base64.",
                )),
            },
            Some("Dropped") => {}
            Some("ProcessingFailed") => bad.push(fail(
                r,
                "Lambda.ProcessingFailed",
                "The Lambda function reported that processing failed for the record.",
            )),
            _ => bad.push(fail(
                r,
                "Lambda.InvalidResult",
                "The result returned for the record is not Ok, Dropped or ProcessingFailed.",
            )),
        }
    }
    (ok, bad)
}
