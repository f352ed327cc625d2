//! Event source mappings: SQS queues ([`sqs`]), DynamoDB streams and Kinesis data streams
//! ([`streams`]).
//!
//! This module keeps the mappings (Create/Get/Update/Delete/ListEventSourceMappings, with
//! each source's defaults and checks) and runs one poller task per enabled mapping. Pollers
//! read their source through the in-process dispatcher, as AWS's pollers call the source's
//! API, never its tables; they stop when their mapping is disabled or deleted, and restart
//! with the service for persisted mappings. Other sources are refused.

mod sqs;
mod streams;
mod tumbling;

use std::collections::HashSet;
use std::sync::{Arc, Mutex};
use std::time::Duration;

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::functions::Function;
use super::{conflict, function_arn, invalid_parameter, split_function_name, Lambda};
use crate::pattern::{Dialect, Pattern};

/// The batch size of an SQS mapping when the caller names none.
const DEFAULT_SQS_BATCH: i64 = 10;
/// The batch size of a stream mapping when the caller names none.
const DEFAULT_STREAM_BATCH: i64 = 100;
/// How long a poller rests after an error (missing queue, stopped dispatcher).
const ERROR_BACKOFF: Duration = Duration::from_millis(500);

/// The mappings whose pollers run.
pub(super) type Pollers = Arc<Mutex<HashSet<String>>>;

/// What a mapping reads.
#[derive(Debug, PartialEq)]
enum Source {
    /// An SQS queue.
    Queue,
    /// A DynamoDB stream or a Kinesis data stream.
    Stream,
}

impl Source {
    /// The source an event source ARN names, if Roto maps it.
    fn of(arn: &str) -> Option<Source> {
        if sqs::queue_of(arn).is_some() {
            Some(Source::Queue)
        } else if streams::is_stream_arn(arn) {
            Some(Source::Stream)
        } else {
            None
        }
    }
}

fn mapping_not_found(uuid: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("The resource you requested does not exist. (Service: Lambda, Status Code: 404, Request ID: {uuid})"),
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// A context acting in a mapping's account and region.
fn context_of(lambda: &Lambda, account: &str, region: &str) -> Option<Context> {
    let dispatcher = lambda.env.dispatcher()?;
    let mut ctx = dispatcher.default_context();
    ctx.account = account.to_string();
    ctx.region = region.to_string();
    Some(ctx)
}

/// Whether a mapping asks for `ReportBatchItemFailures`.
fn reports_item_failures(config: &Value) -> bool {
    config
        .get("FunctionResponseTypes")
        .and_then(Value::as_list)
        .is_some_and(|l| {
            l.iter()
                .any(|t| t.as_str() == Some("ReportBatchItemFailures"))
        })
}

/// The most filters a mapping's `FilterCriteria` may hold (Lambda's default quota).
const MAX_FILTERS: usize = 5;

/// The patterns of a mapping's `FilterCriteria`, in EventBridge's pattern syntax.
fn filters_of(config: &Value) -> AwsResult<Vec<Pattern>> {
    let filters = config
        .get("FilterCriteria")
        .and_then(|f| f.get("Filters"))
        .and_then(Value::as_list)
        .unwrap_or_default();
    if filters.len() > MAX_FILTERS {
        return Err(invalid_parameter(format!(
            "The number of filters in FilterCriteria ({}) exceeds the limit of {MAX_FILTERS} filters per event source mapping.",
            filters.len()
        )));
    }
    filters
        .iter()
        .map(|f| {
            Pattern::parse(f.str("Pattern").unwrap_or_default(), Dialect::EventBridge)
                .map_err(|_| invalid_parameter("Invalid filter pattern definition."))
        })
        .collect()
}

/// Whether a record reaches the function: any filter matches its document, or there are
/// none. Lambda moves past (streams) or deletes (queues) the records that do not.
fn passes(filters: &[Pattern], document: &serde_json::Value) -> bool {
    filters.is_empty() || filters.iter().any(|p| p.matches(document))
}

/// The function ARN a mapping's `FunctionName` names (qualified when it names a qualifier).
fn function_arn_of(ctx: &Context, given: &str) -> (String, String) {
    let (name, qualifier) = split_function_name(given);
    let arn = match &qualifier {
        Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
        None => function_arn(ctx, &name),
    };
    (name, arn)
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

    /// Mapping `uuid` of the caller's account and region.
    pub(super) fn mapping_in(&self, ctx: &Context, uuid: &str) -> AwsResult<Value> {
        match self.mapping(uuid)? {
            Some((account, region, config)) if account == ctx.account && region == ctx.region => {
                Ok(config)
            }
            _ => Err(mapping_not_found(uuid)),
        }
    }

    /// The version a mapping's invocation runs (an alias's routing applied), with the
    /// function's reserved concurrency.
    fn mapped_function(&self, ctx: &Context, config: &Value) -> AwsResult<Function> {
        let (name, qualifier) = split_function_name(config.str("FunctionArn").unwrap_or_default());
        let mut function = self.resolve(ctx, &name, qualifier.as_deref(), true)?;
        function.reserved = self.latest(ctx, &name)?.reserved;
        Ok(function)
    }

    /// Whether mapping `uuid` still exists and is enabled.
    fn mapping_enabled(&self, uuid: &str) -> bool {
        matches!(self.mapping(uuid), Ok(Some((_, _, c))) if c.str("State") == Some("Enabled"))
    }

    fn save_mapping(&self, ctx: &Context, config: &Value) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_mappings (uuid, account, region, function, source, config)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    config.str("UUID").unwrap_or_default(),
                    ctx.account,
                    ctx.region,
                    config.str("FunctionArn").unwrap_or_default(),
                    config.str("EventSourceArn").unwrap_or_default(),
                    config.to_json().to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Applies the settings of a Create or UpdateEventSourceMapping input and checks the
    /// result against what the source allows.
    fn apply_mapping_settings(config: &mut Value, input: &Value, source: &Source) -> AwsResult<()> {
        let mut members = vec![
            "BatchSize",
            "MaximumBatchingWindowInSeconds",
            "FunctionResponseTypes",
            "FilterCriteria",
            "ScalingConfig",
        ];
        if *source == Source::Stream {
            members.extend([
                "MaximumRetryAttempts",
                "MaximumRecordAgeInSeconds",
                "BisectBatchOnFunctionError",
                "ParallelizationFactor",
                "TumblingWindowInSeconds",
            ]);
            if let Some(destinations) = input.get("DestinationConfig") {
                if destinations.get("OnSuccess").is_some() {
                    return Err(invalid_parameter(
                        "Unsupported DestinationConfig parameter for given event source mapping type.",
                    ));
                }
                let on_failure = destinations
                    .get("OnFailure")
                    .cloned()
                    .unwrap_or_else(Value::map);
                config.insert(
                    "DestinationConfig",
                    Value::map().with("OnFailure", on_failure),
                );
            }
        }
        for member in members {
            if let Some(v) = input.get(member) {
                config.insert(member, v.clone());
            }
        }
        filters_of(config)?;
        match source {
            Source::Queue => {
                let batch = config.int("BatchSize").unwrap_or(DEFAULT_SQS_BATCH);
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
            }
            Source::Stream => {
                let age = config.int("MaximumRecordAgeInSeconds").unwrap_or(-1);
                if (0..60).contains(&age) {
                    return Err(invalid_parameter(format!(
                        "MaximumRecordAgeInSeconds {age} is out of range: it must be -1 or between 60 and 604800."
                    )));
                }
            }
        }
        Ok(())
    }

    pub(super) async fn create_event_source_mapping(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let source_arn = input.str("EventSourceArn").unwrap_or_default();
        let source = Source::of(source_arn).ok_or_else(|| {
            invalid_parameter(format!(
                "Unsupported event source {source_arn}: Roto maps SQS queues, DynamoDB streams and Kinesis streams"
            ))
        })?;
        let (name, arn) = function_arn_of(ctx, input.str("FunctionName").unwrap_or_default());
        let (_, qualifier) = split_function_name(input.str("FunctionName").unwrap_or_default());
        self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        let existing: Option<String> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT uuid FROM lambda_mappings WHERE account = ?1 AND region = ?2 AND function = ?3 AND source = ?4",
            )?
            .query_row(params![ctx.account, ctx.region, arn, source_arn], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })?;
        if let Some(uuid) = existing {
            return Err(conflict(match source {
                Source::Queue => format!(
                    "An event source mapping with SQS arn (\" {source_arn} \") and function (\" {name} \") already exists. Please update or delete the existing mapping with UUID {uuid}"
                ),
                Source::Stream => format!(
                    "The event source arn (\" {source_arn} \") and function (\" {name} \") provided mapping already exists. Please update or delete the existing mapping with UUID {uuid}"
                ),
            }));
        }
        let uuid = super::revision_id();
        let enabled = input.bool("Enabled").unwrap_or(true);
        let mut config = Value::map()
            .with("UUID", uuid.as_str())
            .with("EventSourceArn", source_arn)
            .with("FunctionArn", arn)
            .with("MaximumBatchingWindowInSeconds", 0i64)
            .with("FunctionResponseTypes", Vec::<Value>::new())
            .with(
                "EventSourceMappingArn",
                format!(
                    "arn:aws:lambda:{}:{}:event-source-mapping:{uuid}",
                    ctx.region, ctx.account
                ),
            )
            .with("State", if enabled { "Enabled" } else { "Disabled" })
            .with("LastModified", Value::Float(now_millis() as f64 / 1000.0));
        match source {
            Source::Queue => {
                config.insert("BatchSize", DEFAULT_SQS_BATCH);
                config.insert("StateTransitionReason", "USER_INITIATED");
            }
            Source::Stream => {
                let position = streams::starting_position(input, source_arn)?;
                config.insert("BatchSize", DEFAULT_STREAM_BATCH);
                config.insert("StartingPosition", position);
                if let Some(Value::Timestamp(ms)) = input.get("StartingPositionTimestamp") {
                    config.insert(
                        "StartingPositionTimestamp",
                        Value::Float(*ms as f64 / 1000.0),
                    );
                }
                config.insert("ParallelizationFactor", 1i64);
                config.insert("MaximumRecordAgeInSeconds", -1i64);
                config.insert("MaximumRetryAttempts", -1i64);
                config.insert("BisectBatchOnFunctionError", false);
                config.insert("TumblingWindowInSeconds", 0i64);
                config.insert(
                    "DestinationConfig",
                    Value::map().with("OnFailure", Value::map()),
                );
                config.insert("LastProcessingResult", "No records processed");
                config.insert("StateTransitionReason", "User action");
            }
        }
        Self::apply_mapping_settings(&mut config, input, &source)?;
        if source == Source::Stream {
            self.open_stream(ctx, &uuid, &config).await?;
        }
        self.save_mapping(ctx, &config)?;
        let tags = super::functions::tags_of(input.get("Tags"));
        if !tags.is_empty() {
            let arn = config.str("EventSourceMappingArn").unwrap_or_default();
            self.save_resource_tags(arn, &tags)?;
        }
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
        let source = Source::of(config.str("EventSourceArn").unwrap_or_default())
            .ok_or_else(|| mapping_not_found(uuid))?;
        Self::apply_mapping_settings(&mut config, input, &source)?;
        if let Some(f) = input.str("FunctionName") {
            let (name, qualifier) = split_function_name(f);
            self.resolve(ctx, &name, qualifier.as_deref(), false)?;
            config.insert("FunctionArn", function_arn_of(ctx, f).1);
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
        let uuid = input.str("UUID").unwrap_or_default();
        self.env.store.with(|c| {
            c.execute_cached("DELETE FROM lambda_mappings WHERE uuid = ?1", [uuid])?;
            c.execute_cached("DELETE FROM lambda_stream_windows WHERE uuid = ?1", [uuid])?;
            c.execute_cached(
                "DELETE FROM lambda_stream_positions WHERE uuid = ?1",
                [uuid],
            )
            .map_err(AwsError::from)
        })?;
        self.forget_resource_tags(config.str("EventSourceMappingArn").unwrap_or_default())?;
        config.insert("State", "Deleting");
        Ok(config)
    }

    pub(super) fn list_event_source_mappings(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let function = input.str("FunctionName").map(|f| function_arn_of(ctx, f).1);
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
            let mut cursor = streams::Cursor::default();
            loop {
                match lambda.mapping(&uuid) {
                    Ok(Some((account, region, config)))
                        if config.str("State") == Some("Enabled") =>
                    {
                        let source = config.str("EventSourceArn").unwrap_or_default();
                        let polled = match Source::of(source) {
                            Some(Source::Queue) => {
                                lambda.poll_queue(&account, &region, &config).await
                            }
                            Some(Source::Stream) => {
                                let poll = lambda.poll_stream(
                                    &uuid,
                                    &account,
                                    &region,
                                    &config,
                                    &mut cursor,
                                );
                                poll.await
                            }
                            None => break,
                        };
                        if polled.is_err() {
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
}
