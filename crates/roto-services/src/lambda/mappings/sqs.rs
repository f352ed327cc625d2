//! SQS event source mappings: a poller receives batches through SQS's own ReceiveMessage
//! (never its tables), invokes the function with the `Records` event Lambda builds, and
//! deletes what succeeded: the whole batch, or all but the `batchItemFailures` when the
//! mapping reports batch item failures. A failed batch is left to reappear when its
//! visibility timeout ends, as in AWS. Messages that pass none of the mapping's filters are
//! deleted without reaching the function; filters see the record with its body as JSON
//! where the body is JSON.

use std::collections::HashSet;
use std::time::Duration;

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{context_of, filters_of, passes, reports_item_failures, DEFAULT_SQS_BATCH};
use crate::lambda::executor::Invocation;
use crate::lambda::Lambda;

/// How long one ReceiveMessage waits for messages.
const POLL_WAIT_SECONDS: i64 = 2;

/// The queue name and owner of `arn:aws:sqs:<region>:<account>:<name>`.
pub(super) fn queue_of(arn: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", _, "sqs", region, account, name] => Some((region, account, name)),
        _ => None,
    }
}

/// The SQS record Lambda passes for one received message.
fn record(message: &Value, source_arn: &str, region: &str) -> serde_json::Value {
    let attributes: serde_json::Map<String, serde_json::Value> = message
        .get("Attributes")
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| {
            Some((
                k.clone(),
                serde_json::Value::String(v.as_str()?.to_string()),
            ))
        })
        .collect();
    let message_attributes: serde_json::Map<String, serde_json::Value> = message
        .get("MessageAttributes")
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let mut attr = serde_json::json!({
                "stringListValues": [], "binaryListValues": [],
                "dataType": v.str("DataType").unwrap_or("String"),
            });
            if let Some(s) = v.str("StringValue") {
                attr["stringValue"] = s.into();
            }
            if let Some(b) = v.get("BinaryValue").and_then(Value::as_blob) {
                use base64::Engine;
                attr["binaryValue"] = base64::engine::general_purpose::STANDARD.encode(b).into();
            }
            (k.clone(), attr)
        })
        .collect();
    serde_json::json!({
        "messageId": message.str("MessageId").unwrap_or_default(),
        "receiptHandle": message.str("ReceiptHandle").unwrap_or_default(),
        "body": message.str("Body").unwrap_or_default(),
        "attributes": attributes,
        "messageAttributes": message_attributes,
        "md5OfBody": message.str("MD5OfBody").unwrap_or_default(),
        "eventSource": "aws:sqs",
        "eventSourceARN": source_arn,
        "awsRegion": region,
    })
}

/// A record as the mapping's filters see it: its body as JSON where the body is JSON.
fn filter_document(record: &serde_json::Value) -> serde_json::Value {
    let mut document = record.clone();
    if let Some(body) = record["body"]
        .as_str()
        .and_then(|b| serde_json::from_str::<serde_json::Value>(b).ok())
    {
        document["body"] = body;
    }
    document
}

impl Lambda {
    /// Receives one batch from the queue and hands it to the function.
    pub(super) async fn poll_queue(
        &self,
        account: &str,
        region: &str,
        config: &Value,
    ) -> AwsResult<()> {
        let ctx =
            context_of(self, account, region).ok_or_else(|| AwsError::internal("no dispatcher"))?;
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("no dispatcher"))?;
        let source = config.str("EventSourceArn").unwrap_or_default();
        let (_, owner, queue) = queue_of(source).ok_or_else(|| AwsError::internal("bad source"))?;
        let url = dispatcher
            .call(
                &ctx,
                "sqs",
                "GetQueueUrl",
                Value::map()
                    .with("QueueName", queue)
                    .with("QueueOwnerAWSAccountId", owner),
            )
            .await?
            .str("QueueUrl")
            .unwrap_or_default()
            .to_string();
        let batch = config.int("BatchSize").unwrap_or(DEFAULT_SQS_BATCH);
        let window = Duration::from_secs(
            u64::try_from(config.int("MaximumBatchingWindowInSeconds").unwrap_or(0)).unwrap_or(0),
        );
        let started = tokio::time::Instant::now();
        let mut messages: Vec<Value> = Vec::new();
        loop {
            let want = (batch - messages.len() as i64).clamp(1, 10);
            let wait = if messages.is_empty() {
                POLL_WAIT_SECONDS
            } else {
                0
            };
            let received = dispatcher
                .call(
                    &ctx,
                    "sqs",
                    "ReceiveMessage",
                    Value::map()
                        .with("QueueUrl", url.as_str())
                        .with("MaxNumberOfMessages", want)
                        .with("WaitTimeSeconds", wait)
                        .with("AttributeNames", vec![Value::from("All")])
                        .with("MessageSystemAttributeNames", vec![Value::from("All")])
                        .with("MessageAttributeNames", vec![Value::from("All")]),
                )
                .await?;
            let got = received
                .get("Messages")
                .and_then(Value::as_list)
                .unwrap_or_default()
                .to_vec();
            let empty = got.is_empty();
            messages.extend(got);
            if messages.len() as i64 >= batch
                || started.elapsed() >= window
                || (empty && !messages.is_empty() && window.is_zero())
            {
                break;
            }
            if empty && messages.is_empty() {
                return Ok(());
            }
            if empty {
                tokio::time::sleep(Duration::from_millis(50)).await;
            }
        }
        let filters = filters_of(config)?;
        let (passed, filtered): (Vec<_>, Vec<_>) = messages
            .into_iter()
            .map(|m| (record(&m, source, region), m))
            .partition(|(r, _)| passes(&filters, &filter_document(r)));
        self.delete_messages(&ctx, &url, filtered.iter().map(|(_, m)| m))
            .await?;
        if passed.is_empty() {
            return Ok(());
        }
        let (records, messages): (Vec<serde_json::Value>, Vec<Value>) = passed.into_iter().unzip();
        let event = serde_json::json!({ "Records": records });
        let function = self.mapped_function(&ctx, config)?;
        let invocation = Invocation {
            request_id: crate::lambda::revision_id(),
            payload: event.to_string().into_bytes(),
            invoked_arn: config.str("FunctionArn").unwrap_or_default().to_string(),
            client_context: None,
        };
        let outcome = self.runner.run(&ctx, &function, invocation).await?;
        if outcome.function_error.is_some() {
            return Ok(());
        }
        let failed: HashSet<String> = if reports_item_failures(config) {
            serde_json::from_slice::<serde_json::Value>(&outcome.payload)
                .ok()
                .and_then(|v| v.get("batchItemFailures").cloned())
                .and_then(|f| f.as_array().cloned())
                .unwrap_or_default()
                .iter()
                .filter_map(|f| {
                    f.get("itemIdentifier")
                        .and_then(|i| i.as_str())
                        .map(str::to_string)
                })
                .collect()
        } else {
            HashSet::new()
        };
        let done = messages
            .iter()
            .filter(|m| !failed.contains(m.str("MessageId").unwrap_or_default()));
        self.delete_messages(&ctx, &url, done).await
    }

    /// Deletes received messages from the queue.
    async fn delete_messages<'a>(
        &self,
        ctx: &Context,
        url: &str,
        messages: impl Iterator<Item = &'a Value>,
    ) -> AwsResult<()> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("no dispatcher"))?;
        let entries: Vec<Value> = messages
            .enumerate()
            .map(|(i, m)| {
                Value::map()
                    .with("Id", i.to_string())
                    .with("ReceiptHandle", m.str("ReceiptHandle").unwrap_or_default())
            })
            .collect();
        for chunk in entries.chunks(10) {
            dispatcher
                .call(
                    ctx,
                    "sqs",
                    "DeleteMessageBatch",
                    Value::map()
                        .with("QueueUrl", url)
                        .with("Entries", chunk.to_vec()),
                )
                .await?;
        }
        Ok(())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn queue_arns_split_into_region_owner_and_name() {
        assert_eq!(
            queue_of("arn:aws:sqs:us-east-1:123456789012:jobs"),
            Some(("us-east-1", "123456789012", "jobs"))
        );
        assert_eq!(queue_of("arn:aws:kinesis:us-east-1:1:stream/s"), None);
    }
}
