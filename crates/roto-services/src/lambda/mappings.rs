//! Event source mappings from SQS queues.
//!
//! Each enabled mapping has a poller task that receives batches from its queue through the
//! dispatcher (SQS's own ReceiveMessage, never its tables), invokes the function with the
//! `Records` event Lambda builds, and deletes what succeeded: the whole batch, or all but
//! the `batchItemFailures` when the mapping reports batch item failures. A failed batch is
//! left to reappear when its visibility timeout ends, as in AWS. Pollers stop when their
//! mapping is disabled or deleted, and restart with the service for persisted mappings.

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::executor::Invocation;
use super::{conflict, function_arn, invalid_parameter, split_function_name, Lambda};

/// The batch size when the caller names none.
const DEFAULT_BATCH: i64 = 10;
/// How long one ReceiveMessage waits for messages.
const POLL_WAIT_SECONDS: i64 = 2;
/// How long a poller rests after an error (missing queue, stopped dispatcher).
const ERROR_BACKOFF: Duration = Duration::from_millis(500);

/// The mappings whose pollers run.
pub(super) type Pollers = Arc<Mutex<HashSet<String>>>;

fn mapping_not_found(uuid: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("The resource you requested does not exist. (Service: Lambda, Status Code: 404, Request ID: {uuid})"),
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// The queue name and owner of `arn:aws:sqs:<region>:<account>:<name>`.
fn queue_of(arn: &str) -> Option<(&str, &str, &str)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", _, "sqs", region, account, name] => Some((region, account, name)),
        _ => None,
    }
}

/// A context acting in a mapping's account and region.
fn context_of(lambda: &Lambda, account: &str, region: &str) -> Option<Context> {
    let dispatcher = lambda.env.dispatcher()?;
    let mut ctx = dispatcher.default_context();
    ctx.account = account.to_string();
    ctx.region = region.to_string();
    Some(ctx)
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

impl Lambda {
    fn mapping(&self, uuid: &str) -> AwsResult<Option<(String, String, Value)>> {
        self.env.store.with(|c| {
            c.prepare_cached("SELECT account, region, config FROM lambda_mappings WHERE uuid = ?1")?
                .query_row([uuid], |r| {
                    Ok((r.get(0)?, r.get(1)?, r.get::<_, String>(2)?))
                })
                .optional()
                .map(|row| row.map(|(a, r, c)| (a, r, super::from_json_text(&c))))
                .map_err(AwsError::from)
        })
    }

    fn save_mapping(&self, ctx: &Context, config: &Value) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute(
                "INSERT OR REPLACE INTO lambda_mappings (uuid, account, region, function, source, config)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    config.str("UUID").unwrap_or_default(),
                    ctx.account,
                    ctx.region,
                    config.str("FunctionArn").unwrap_or_default(),
                    config.str("EventSourceArn").unwrap_or_default(),
                    super::to_json(config).to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    fn apply_mapping_settings(config: &mut Value, input: &Value) -> AwsResult<()> {
        if let Some(b) = input.int("BatchSize") {
            config.insert("BatchSize", b);
        }
        if let Some(w) = input.int("MaximumBatchingWindowInSeconds") {
            config.insert("MaximumBatchingWindowInSeconds", w);
        }
        if let Some(types) = input.get("FunctionResponseTypes") {
            config.insert("FunctionResponseTypes", types.clone());
        }
        if let Some(f) = input.get("FilterCriteria") {
            config.insert("FilterCriteria", f.clone());
        }
        if let Some(s) = input.get("ScalingConfig") {
            config.insert("ScalingConfig", s.clone());
        }
        let batch = config.int("BatchSize").unwrap_or(DEFAULT_BATCH);
        let window = config.int("MaximumBatchingWindowInSeconds").unwrap_or(0);
        if !(1..=10_000).contains(&batch) {
            return Err(invalid_parameter(format!(
                "BatchSize {batch} is out of range: it must be between 1 and 10000 for SQS."
            )));
        }
        if batch > 10 && window == 0 {
            return Err(invalid_parameter(
                "Maximum batch window in seconds must be greater than 0 if maximum batch size is greater than 10",
            ));
        }
        Ok(())
    }

    pub(super) fn create_event_source_mapping(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let source = input.str("EventSourceArn").unwrap_or_default();
        if queue_of(source).is_none() {
            return Err(invalid_parameter(format!(
                "Unsupported event source {source}: Roto maps SQS queues"
            )));
        }
        let (name, qualifier) = split_function_name(input.str("FunctionName").unwrap_or_default());
        self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        let arn = match &qualifier {
            Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
            None => function_arn(ctx, &name),
        };
        let existing: Option<String> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT uuid FROM lambda_mappings WHERE account = ?1 AND region = ?2 AND function = ?3 AND source = ?4",
            )?
            .query_row(params![ctx.account, ctx.region, arn, source], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })?;
        if let Some(uuid) = existing {
            return Err(conflict(format!(
                "An event source mapping with SQS arn (\" {source} \") and function (\" {name} \") already exists. Please update or delete the existing mapping with UUID {uuid}"
            )));
        }
        let uuid = super::revision_id();
        let enabled = input.bool("Enabled").unwrap_or(true);
        let mut config = Value::map()
            .with("UUID", uuid.as_str())
            .with("EventSourceArn", source)
            .with("FunctionArn", arn)
            .with("BatchSize", DEFAULT_BATCH)
            .with("MaximumBatchingWindowInSeconds", 0i64)
            .with("FunctionResponseTypes", Vec::<Value>::new())
            .with("StateTransitionReason", "USER_INITIATED")
            .with(
                "EventSourceMappingArn",
                format!(
                    "arn:aws:lambda:{}:{}:event-source-mapping:{uuid}",
                    ctx.region, ctx.account
                ),
            )
            .with("State", if enabled { "Enabled" } else { "Disabled" })
            .with("LastModified", Value::Float(now_millis() as f64 / 1000.0));
        Self::apply_mapping_settings(&mut config, input)?;
        self.save_mapping(ctx, &config)?;
        if enabled {
            self.start_poller(&uuid);
        }
        config.insert("State", if enabled { "Creating" } else { "Disabled" });
        Ok(config)
    }

    pub(super) fn get_event_source_mapping(&self, input: &Value) -> AwsResult<Value> {
        let uuid = input.str("UUID").unwrap_or_default();
        self.mapping(uuid)?
            .map(|(_, _, c)| c)
            .ok_or_else(|| mapping_not_found(uuid))
    }

    pub(super) fn update_event_source_mapping(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let uuid = input.str("UUID").unwrap_or_default();
        let (_, _, mut config) = self.mapping(uuid)?.ok_or_else(|| mapping_not_found(uuid))?;
        Self::apply_mapping_settings(&mut config, input)?;
        if let Some(f) = input.str("FunctionName") {
            let (name, qualifier) = split_function_name(f);
            self.resolve(ctx, &name, qualifier.as_deref(), false)?;
            let arn = match &qualifier {
                Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
                None => function_arn(ctx, &name),
            };
            config.insert("FunctionArn", arn);
        }
        let enabled = input
            .bool("Enabled")
            .unwrap_or(config.str("State") == Some("Enabled"));
        config.insert("State", if enabled { "Enabled" } else { "Disabled" });
        config.insert("LastModified", Value::Float(now_millis() as f64 / 1000.0));
        self.save_mapping(ctx, &config)?;
        if enabled {
            self.start_poller(uuid);
        }
        config.insert("State", if enabled { "Updating" } else { "Disabling" });
        Ok(config)
    }

    pub(super) fn delete_event_source_mapping(&self, input: &Value) -> AwsResult<Value> {
        let mut config = self.get_event_source_mapping(input)?;
        self.env.store.with(|c| {
            c.execute(
                "DELETE FROM lambda_mappings WHERE uuid = ?1",
                [input.str("UUID").unwrap_or_default()],
            )
            .map_err(AwsError::from)
        })?;
        config.insert("State", "Deleting");
        Ok(config)
    }

    pub(super) fn list_event_source_mappings(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let function = input.str("FunctionName").map(|f| {
            let (name, qualifier) = split_function_name(f);
            match qualifier {
                Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
                None => function_arn(ctx, &name),
            }
        });
        let rows: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_mappings WHERE account = ?1 AND region = ?2
                   AND (?3 IS NULL OR function = ?3) AND (?4 IS NULL OR source = ?4) ORDER BY uuid",
            )?;
            let rows = st.query_map(
                params![
                    ctx.account,
                    ctx.region,
                    function,
                    input.str("EventSourceArn")
                ],
                |r| r.get::<_, String>(0),
            )?;
            rows.map(|r| r.map(|c| super::from_json_text(&c)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Self::page_of(rows, input, "EventSourceMappings")
    }

    /// Starts the pollers of every enabled mapping (when the service starts).
    pub(super) fn start_pollers(&self) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        let uuids: Vec<String> = self
            .env
            .store
            .with(|c| {
                let mut st = c.prepare("SELECT uuid, config FROM lambda_mappings")?;
                let rows =
                    st.query_map([], |r| Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?)))?;
                rows.collect::<rusqlite::Result<Vec<_>>>()
            })
            .unwrap_or_default()
            .into_iter()
            .filter(|(_, c)| super::from_json_text(c).str("State") == Some("Enabled"))
            .map(|(u, _)| u)
            .collect();
        for uuid in uuids {
            self.start_poller(&uuid);
        }
    }

    /// Starts mapping `uuid`'s poller unless it runs already.
    fn start_poller(&self, uuid: &str) {
        if !self
            .pollers
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(uuid.to_string())
        {
            return;
        }
        let lambda = self.clone();
        let uuid = uuid.to_string();
        tokio::spawn(async move {
            loop {
                match lambda.mapping(&uuid) {
                    Ok(Some((account, region, config)))
                        if config.str("State") == Some("Enabled") =>
                    {
                        if lambda.poll_once(&account, &region, &config).await.is_err() {
                            tokio::time::sleep(ERROR_BACKOFF).await;
                        }
                    }
                    Ok(_) => break,
                    Err(_) => tokio::time::sleep(ERROR_BACKOFF).await,
                }
            }
            lambda
                .pollers
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(&uuid);
        });
    }

    /// Receives one batch and hands it to the function.
    async fn poll_once(&self, account: &str, region: &str, config: &Value) -> AwsResult<()> {
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
        let batch = config.int("BatchSize").unwrap_or(DEFAULT_BATCH);
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
        if messages.is_empty() {
            return Ok(());
        }
        let records: Vec<serde_json::Value> =
            messages.iter().map(|m| record(m, source, region)).collect();
        let event = serde_json::json!({ "Records": records });
        let (name, qualifier) = split_function_name(config.str("FunctionArn").unwrap_or_default());
        let function = self.resolve(&ctx, &name, qualifier.as_deref(), true)?;
        let invocation = Invocation {
            request_id: super::revision_id(),
            payload: event.to_string().into_bytes(),
            invoked_arn: config.str("FunctionArn").unwrap_or_default().to_string(),
            client_context: None,
        };
        let outcome = self.runner.run(&ctx, &function, invocation).await?;
        if outcome.function_error.is_some() {
            return Ok(());
        }
        let reports_failures = config
            .get("FunctionResponseTypes")
            .and_then(Value::as_list)
            .is_some_and(|l| {
                l.iter()
                    .any(|t| t.as_str() == Some("ReportBatchItemFailures"))
            });
        let failed: HashSet<String> = if reports_failures {
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
        let entries: Vec<Value> = messages
            .iter()
            .filter(|m| !failed.contains(m.str("MessageId").unwrap_or_default()))
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
                    &ctx,
                    "sqs",
                    "DeleteMessageBatch",
                    Value::map()
                        .with("QueueUrl", url.as_str())
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
