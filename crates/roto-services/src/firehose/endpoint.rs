//! HTTP endpoint destinations: AWS's request and response format, and the S3 backup of
//! what could not be delivered.
//!
//! One batch is one `POST` to the endpoint's URL (an `https://` URL is reached over plain
//! HTTP, as the shared client does) with Firehose's headers (`X-Amz-Firehose-Protocol-Version:
//! 1.0`, `X-Amz-Firehose-Request-Id`, `X-Amz-Firehose-Source-Arn`, the access key as
//! `X-Amz-Firehose-Access-Key`, the common attributes as `X-Amz-Firehose-Common-Attributes`)
//! and the body `{"requestId", "timestamp", "records": [{"data": base64}]}`, gzipped when
//! the request configuration's `ContentEncoding` is `GZIP`. The endpoint must answer 200
//! with a JSON body echoing the `requestId`; anything else fails the attempt, which the event
//! bus retries. With `S3BackupMode` `AllData` every batch is also written to the backup
//! bucket; a batch that fails for good goes there under the error prefix
//! (`http-endpoint-failed`), as it does for every destination Roto cannot reach.

use std::collections::BTreeMap;

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use roto_core::events::{DeliveryError, Event};
use roto_core::timestamp::now_millis;
use serde_json::{json, Value as Json};

use super::delivery::{write_failed, write_objects, Batch, Failed};
use super::destinations::{kind_of, SECRETS};
use super::Inner;
use crate::http_client::{self, HttpRequest};

/// The `!{firehose:error-output-type}` of records a destination could not take.
pub(super) fn output_type(kind: &str) -> &'static str {
    match kind {
        "HttpEndpoint" => "http-endpoint-failed",
        "Splunk" => "splunk-failed",
        "Elasticsearch" => "elasticsearch-failed",
        "Amazonopensearchservice" => "AmazonOpenSearchService-failed",
        "AmazonOpenSearchServerless" => "AmazonOpenSearchServerless-failed",
        "Snowflake" => "snowflake-failed",
        "Iceberg" => "iceberg-failed",
        _ => "delivery-failed",
    }
}

/// The request body and the request id it carries.
fn request_body(records: &[super::delivery::Record]) -> (String, Vec<u8>) {
    let id = crate::ids::uuid();
    let list: Vec<Json> = records
        .iter()
        .map(|r| json!({"data": STANDARD.encode(&r.data)}))
        .collect();
    let body = json!({"requestId": id, "timestamp": now_millis(), "records": list});
    (id, body.to_string().into_bytes())
}

fn headers(destination: &Json, batch: &Batch, id: &str, gzip: bool) -> Vec<(String, String)> {
    let d = &destination["HttpEndpointDestinationDescription"];
    let mut headers = vec![
        ("Content-Type".to_string(), "application/json".to_string()),
        (
            "User-Agent".into(),
            "Amazon Kinesis Data Firehose Agent/1.0".into(),
        ),
        ("X-Amz-Firehose-Protocol-Version".into(), "1.0".into()),
        ("X-Amz-Firehose-Request-Id".into(), id.to_string()),
        ("X-Amz-Firehose-Source-Arn".into(), batch.stream_arn.clone()),
    ];
    if let Some(key) = destination[SECRETS]["AccessKey"].as_str() {
        headers.push(("X-Amz-Firehose-Access-Key".into(), key.to_string()));
    }
    let attributes: BTreeMap<&str, &str> = d["RequestConfiguration"]["CommonAttributes"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|a| Some((a["AttributeName"].as_str()?, a["AttributeValue"].as_str()?)))
        .collect();
    if !attributes.is_empty() {
        let common = json!({"commonAttributes": attributes}).to_string();
        headers.push(("X-Amz-Firehose-Common-Attributes".into(), common));
    }
    if gzip {
        headers.push(("Content-Encoding".into(), "gzip".into()));
    }
    headers
}

/// Delivers a batch to an HTTP endpoint.
pub(super) async fn to_endpoint(
    inner: &Inner,
    batch: &Batch,
    destination: &Json,
) -> Result<(), DeliveryError> {
    let d = &destination["HttpEndpointDestinationDescription"];
    let (records, failed) = super::transform::process(inner, batch, d).await?;
    let backup = &d["S3DestinationDescription"];
    write_failed(inner, batch, backup, &failed).await?;
    if d["S3BackupMode"] == "AllData" {
        write_objects(inner, batch, backup, &records).await?;
    }
    let (id, body) = request_body(&records);
    let gzip = d["RequestConfiguration"]["ContentEncoding"] == "GZIP";
    let body = match gzip {
        true => crate::gzip::compress_blocking(body)
            .await
            .map_err(|e| DeliveryError::from(e.message))?,
        false => body,
    };
    let url = d["EndpointConfiguration"]["Url"]
        .as_str()
        .unwrap_or_default();
    let request = HttpRequest {
        headers: headers(destination, batch, &id, gzip),
        body,
        ..HttpRequest::new("POST", url)
    };
    let response = http_client::send(&request)
        .await
        .map_err(|e| format!("HttpEndpoint.ConnectionFailed: {e}"))?;
    if !response.status.is_success() {
        return Err(format!(
            "HttpEndpoint.DestinationException: the endpoint answered {}: {}",
            response.status.as_u16(),
            String::from_utf8_lossy(&response.body)
        )
        .into());
    }
    let answer: Json = serde_json::from_slice(&response.body).unwrap_or(Json::Null);
    if answer["requestId"] != id.as_str() {
        return Err(format!(
            "HttpEndpoint.InvalidResponseFromDestination: the response does not echo the request id {id}"
        )
        .into());
    }
    Ok(())
}

impl Inner {
    /// A delivery failed for good: its records go to the destination's S3 backup under the
    /// error prefix, as a delivery of their own.
    pub(super) fn backup_failed(&self, event: &Event, error: &str) {
        if event.kind != "firehose:Delivery" {
            return;
        }
        let destination = super::delivery::destination_of(event);
        let kind = kind_of(&destination);
        let described = &destination[format!("{kind}DestinationDescription")];
        let Some(backup) = described.get("S3DestinationDescription") else {
            return;
        };
        let mut payload = event.payload.clone();
        payload.insert("Backup", backup.to_string());
        payload.insert("Error", error);
        payload.insert("Kind", kind);
        self.env.bus.publish(Event {
            kind: "firehose:Backup".into(),
            target: backup["BucketARN"].as_str().unwrap_or_default().to_string(),
            payload,
            ..event.clone()
        });
    }
}

/// Writes a failed batch to its backup bucket as AWS's error records.
pub(super) async fn write_backup(inner: &Inner, event: &Event) -> Result<(), DeliveryError> {
    let batch = Batch::of(event);
    let backup: Json = event
        .payload
        .str("Backup")
        .and_then(|b| serde_json::from_str(b).ok())
        .unwrap_or(Json::Null);
    let error = event.payload.str("Error").unwrap_or_default();
    let (code, message) = error
        .split_once(": ")
        .unwrap_or(("Destination.Failed", error));
    let output_type = output_type(event.payload.str("Kind").unwrap_or_default());
    let failed: Vec<Failed> = batch
        .records
        .iter()
        .map(|r| Failed {
            record: r.clone(),
            code: code.to_string(),
            message: message.to_string(),
            output_type,
            attempts: event.max_attempts,
            lambda_arn: None,
        })
        .collect();
    write_failed(inner, &batch, &backup, &failed).await
}
