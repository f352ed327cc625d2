//! Kinesis Data Streams: streams of ordered shards, records put by partition key and read
//! through shard iterators, over the json 1.1 protocol.
//!
//! A stream is a row of `kinesis_streams`; its shards are rows of `kinesis_shards` (hash key
//! ranges as 39-digit zero-padded decimals, so that text order is numeric order); records are
//! rows of `kinesis_records` keyed by shard and a per-shard counter, which the 56-digit
//! sequence numbers AWS shows encode (see [`seq`]). The tables are created on the first call.
//!
//! Status transitions complete at once, as Roto's other services' do: CreateStream's stream
//! is ACTIVE to the first read after it (waiters finish at once), and DeleteStream removes
//! the stream and its records before it answers.
//!
//! - [`streams`]: create, describe, list, delete, retention, mode, tags.
//! - [`records`]: PutRecord(s), GetShardIterator, GetRecords, ListShards.
//! - [`reshard`]: SplitShard, MergeShards, UpdateShardCount.
//! - [`settings`]: enhanced monitoring, encryption, limits, resource policies, the
//!   account's settings, record size, warm throughput and record distribution.
//! - [`consumers`]: enhanced fan-out consumers.
//! - [`queues`]: queues, which deliver a stream's records one by one with acknowledgements.
//! - [`channels`]: channels, a stream's delivery to S3 or S3 Tables, kept as configuration.
//! - [`subscribe`]: SubscribeToShard's event streams.
//! - [`limits`]: the per-shard throughput limits, with `--kinesis-shard-limits`.
//! - [`metrics`]: the stream's metrics in `AWS/Kinesis`.
//! - [`seq`]: sequence numbers, hash keys and shard iterators.

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use roto_core::store::LazySchema;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

mod attached;
mod channels;
mod consumers;
mod limits;
mod metrics;
mod queues;
mod records;
mod reshard;
mod seq;
mod settings;
mod streams;
mod subscribe;

static SPEC: ServiceSpec = ServiceSpec {
    name: "kinesis",
    model: "kinesis",
    query_model: None,
    signing_names: &["kinesis"],
    target_prefix: Some("Kinesis_20131202"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS kinesis_streams (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    mode TEXT NOT NULL,
    retention_hours INTEGER NOT NULL,
    next_shard INTEGER NOT NULL,
    tags TEXT NOT NULL DEFAULT '{}',
    key_id TEXT,
    metrics TEXT NOT NULL DEFAULT '[]',
    scalings TEXT NOT NULL DEFAULT '[]',
    max_record_kib INTEGER NOT NULL DEFAULT 1024,
    warm_mibps INTEGER,
    distribution TEXT,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS kinesis_accounts (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    commitment TEXT NOT NULL,
    PRIMARY KEY (account, region)
);
CREATE TABLE IF NOT EXISTS kinesis_consumers (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    stream TEXT NOT NULL,
    name TEXT NOT NULL,
    arn TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, stream, name)
);
CREATE UNIQUE INDEX IF NOT EXISTS kinesis_consumers_arn ON kinesis_consumers (account, region, arn);
CREATE TABLE IF NOT EXISTS kinesis_policies (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    policy TEXT NOT NULL,
    PRIMARY KEY (account, region, arn)
);
CREATE TABLE IF NOT EXISTS kinesis_shards (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    stream TEXT NOT NULL,
    shard INTEGER NOT NULL,
    start_hash TEXT NOT NULL,
    end_hash TEXT NOT NULL,
    parent INTEGER,
    adjacent_parent INTEGER,
    next_seq INTEGER NOT NULL DEFAULT 1,
    closed_seq INTEGER,
    closed_at INTEGER,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, stream, shard)
);
CREATE TABLE IF NOT EXISTS kinesis_records (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    stream TEXT NOT NULL,
    shard INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    arrival INTEGER NOT NULL,
    partition_key TEXT NOT NULL,
    data BLOB NOT NULL,
    PRIMARY KEY (account, region, stream, shard, seq)
);
CREATE TABLE IF NOT EXISTS kinesis_queues (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    stream TEXT NOT NULL,
    stream_created INTEGER NOT NULL,
    created INTEGER NOT NULL,
    visibility INTEGER NOT NULL,
    max_receive INTEGER,
    start_type TEXT NOT NULL,
    start_at INTEGER,
    tags TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (account, region, id)
);
CREATE TABLE IF NOT EXISTS kinesis_queue_cursors (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    queue TEXT NOT NULL,
    shard INTEGER NOT NULL,
    next INTEGER NOT NULL,
    PRIMARY KEY (account, region, queue, shard)
);
CREATE TABLE IF NOT EXISTS kinesis_queue_records (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    queue TEXT NOT NULL,
    shard INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    visible_at INTEGER NOT NULL,
    receives INTEGER NOT NULL,
    first_receive INTEGER,
    dead INTEGER NOT NULL,
    receipt TEXT,
    PRIMARY KEY (account, region, queue, shard, seq)
);
CREATE TABLE IF NOT EXISTS kinesis_channels (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    stream TEXT NOT NULL,
    stream_created INTEGER NOT NULL,
    created INTEGER NOT NULL,
    settings TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (account, region, id)
);
CREATE INDEX IF NOT EXISTS kinesis_records_arrival
    ON kinesis_records (account, region, stream, shard, arrival);
";

/// A stream as stored.
#[derive(Debug, Clone)]
pub(crate) struct Stream {
    name: String,
    created: i64,
    mode: String,
    retention_hours: i64,
    tags: serde_json::Map<String, serde_json::Value>,
    /// The KMS key records are encrypted under, when encryption is on.
    key_id: Option<String>,
    /// The shard-level metrics enhanced monitoring publishes.
    metrics: Vec<String>,
    /// When UpdateShardCount last ran (the most recent ten), for its daily quota.
    scalings: Vec<i64>,
    /// The largest record the stream takes, in KiB (UpdateMaxRecordSize).
    max_record_kib: i64,
    /// The warm throughput an on-demand stream is kept at, in MiB/s.
    warm_mibps: Option<i64>,
    /// The record distribution strategy, where one was chosen.
    distribution: Option<String>,
}

impl Stream {
    /// `KMS` when the stream is encrypted, else `NONE`.
    fn encryption_type(&self) -> &'static str {
        match self.key_id {
            Some(_) => "KMS",
            None => "NONE",
        }
    }
}

/// The columns [`stream_from_row`] reads.
const STREAM_COLUMNS: &str =
    "name, created, mode, retention_hours, tags, key_id, metrics, scalings,
     max_record_kib, warm_mibps, distribution";

fn stream_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stream> {
    let tags: String = r.get(4)?;
    let metrics: String = r.get(6)?;
    let scalings: String = r.get(7)?;
    Ok(Stream {
        name: r.get(0)?,
        created: r.get(1)?,
        mode: r.get(2)?,
        retention_hours: r.get(3)?,
        tags: serde_json::from_str(&tags).unwrap_or_default(),
        key_id: r.get(5)?,
        metrics: serde_json::from_str(&metrics).unwrap_or_default(),
        scalings: serde_json::from_str(&scalings).unwrap_or_default(),
        max_record_kib: r.get(8)?,
        warm_mibps: r.get(9)?,
        distribution: r.get(10)?,
    })
}

/// ValidationException, in the words of AWS's front end, unless `value` matches the pattern
/// of Kinesis' names (streams, consumers, queues, channels): `[a-zA-Z0-9_.-]+`. `member` is
/// the member as the message spells it (`streamName`).
fn check_name(member: &str, value: &str) -> AwsResult<()> {
    if value
        .chars()
        .all(|c| c.is_ascii_alphanumeric() || matches!(c, '_' | '.' | '-'))
    {
        return Ok(());
    }
    Err(AwsError::validation(format!(
        "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"
    )))
}

fn invalid_argument(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidArgumentException", message)
}

fn not_found(ctx: &Context, name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Stream {name} under account {} not found.", ctx.account),
    )
}

/// A stream's ARN.
fn stream_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:kinesis:{}:{}:stream/{name}",
        ctx.region, ctx.account
    )
}

/// The stream name an ARN of this account and region names.
fn name_from_arn<'a>(ctx: &Context, arn: &'a str) -> AwsResult<&'a str> {
    let prefix = format!("arn:aws:kinesis:{}:{}:stream/", ctx.region, ctx.account);
    match arn.strip_prefix(&prefix) {
        Some(name) if !name.is_empty() && !name.contains('/') => Ok(name),
        _ => Err(invalid_argument(format!("Invalid StreamARN {arn}"))),
    }
}

/// The stream name a request gives as `StreamName` or as `StreamARN` (`arn_member`).
fn stream_name<'a>(ctx: &Context, input: &'a Value, arn_member: &str) -> AwsResult<&'a str> {
    match (input.str("StreamName"), input.str(arn_member)) {
        (Some(name), None) => Ok(name),
        (None, Some(arn)) => name_from_arn(ctx, arn),
        (Some(name), Some(arn)) => {
            if name_from_arn(ctx, arn)? != name {
                return Err(invalid_argument(
                    "StreamARN and StreamName in the request must refer to the same stream.",
                ));
            }
            Ok(name)
        }
        (None, None) => Err(invalid_argument(
            "Either StreamName or StreamARN should be provided.",
        )),
    }
}

/// The server option that turns the per-shard throughput limits on (`true`).
pub const LIMITS_OPTION: &str = "kinesis-shard-limits";

/// Kinesis Data Streams (cheap to clone: subscriptions hold a clone while they push).
#[derive(Clone)]
pub struct Kinesis {
    env: Arc<Env>,
    schema: Arc<LazySchema>,
    /// Woken whenever records are appended, for subscriptions waiting at a shard's tip.
    appended: Arc<tokio::sync::Notify>,
    /// When each consumer last subscribed to each shard, for AWS's five-second rule.
    subscriptions: Arc<Mutex<HashMap<(String, String), i64>>>,
    /// The per-shard throughput limits, when the server enforces them.
    limits: Option<Arc<limits::Limits>>,
}

impl Kinesis {
    /// The service; its tables are created on its first call.
    pub fn new(env: Arc<Env>) -> Kinesis {
        Kinesis {
            schema: Arc::new(LazySchema::new(&[SCHEMA])),
            appended: Arc::default(),
            subscriptions: Arc::default(),
            limits: env
                .option(LIMITS_OPTION)
                .is_some_and(|v| v == "true")
                .then(Arc::default),
            env,
        }
    }

    /// The store, its tables created.
    fn store(&self) -> AwsResult<&roto_core::store::Store> {
        self.schema.store(&self.env.store)
    }

    /// The stream `name`, if it exists.
    fn find(&self, ctx: &Context, name: &str) -> AwsResult<Option<Stream>> {
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {STREAM_COLUMNS} FROM kinesis_streams
                 WHERE account = ?1 AND region = ?2 AND name = ?3"
            ))?
            .query_row([&ctx.account, &ctx.region, name], stream_from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The stream a request names (by `StreamName` or `arn_member`), or
    /// ResourceNotFoundException.
    fn stream(&self, ctx: &Context, input: &Value, arn_member: &str) -> AwsResult<Stream> {
        let name = stream_name(ctx, input, arn_member)?;
        self.find(ctx, name)?.ok_or_else(|| not_found(ctx, name))
    }

    fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        match operation {
            "CreateStream" => self.create_stream(ctx, input),
            "DeleteStream" => self.delete_stream(ctx, input),
            "DescribeStream" => self.describe_stream(ctx, input),
            "DescribeStreamSummary" => self.describe_stream_summary(ctx, input),
            "ListStreams" => self.list_streams(ctx, input),
            "IncreaseStreamRetentionPeriod" => self.change_retention(ctx, input, true),
            "DecreaseStreamRetentionPeriod" => self.change_retention(ctx, input, false),
            "UpdateStreamMode" => self.update_stream_mode(ctx, input),
            "AddTagsToStream" => self.add_tags(ctx, input, "StreamARN"),
            "TagResource" | "UntagResource" | "ListTagsForResource"
                if attached::named_kind(input).is_some() =>
            {
                self.attached_tags(ctx, operation, input)
            }
            "TagResource" => self.add_tags(ctx, input, "ResourceARN"),
            "RemoveTagsFromStream" => self.remove_tags(ctx, input, "StreamARN"),
            "UntagResource" => self.remove_tags(ctx, input, "ResourceARN"),
            "ListTagsForStream" => self.list_tags_for_stream(ctx, input),
            "ListTagsForResource" => self.list_tags_for_resource(ctx, input),
            "ListShards" => self.list_shards(ctx, input),
            "PutRecord" => self.put_record(ctx, input),
            "PutRecords" => self.put_records(ctx, input),
            "GetShardIterator" => self.get_shard_iterator(ctx, input),
            "GetRecords" => self.get_records(ctx, input),
            "SplitShard" => self.split_shard(ctx, input),
            "MergeShards" => self.merge_shards(ctx, input),
            "UpdateShardCount" => self.update_shard_count(ctx, input),
            "EnableEnhancedMonitoring" => self.change_monitoring(ctx, input, true),
            "DisableEnhancedMonitoring" => self.change_monitoring(ctx, input, false),
            "StopStreamEncryption" => self.stop_encryption(ctx, input),
            "DescribeLimits" => self.describe_limits(ctx),
            "DescribeAccountSettings" => self.describe_account_settings(ctx),
            "UpdateAccountSettings" => self.update_account_settings(ctx, input),
            "UpdateMaxRecordSize" => self.update_max_record_size(ctx, input),
            "UpdateStreamWarmThroughput" => self.update_warm_throughput(ctx, input),
            "UpdateStreamRecordDistributionStrategy" => self.update_distribution(ctx, input),
            "PutResourcePolicy" => self.put_resource_policy(ctx, input),
            "GetResourcePolicy" => self.get_resource_policy(ctx, input),
            "DeleteResourcePolicy" => self.delete_resource_policy(ctx, input),
            "RegisterStreamConsumer" => self.register_consumer(ctx, input),
            "DescribeStreamConsumer" => self.describe_consumer(ctx, input),
            "ListStreamConsumers" => self.list_consumers(ctx, input),
            "DeregisterStreamConsumer" => self.deregister_consumer(ctx, input),
            "CreateQueue" => self.create_queue(ctx, input),
            "DescribeQueue" => self.describe_queue(ctx, input),
            "ListQueues" => self.list_queues(ctx, input),
            "UpdateQueue" => self.update_queue(ctx, input),
            "DeleteQueue" => self.delete_queue(ctx, input),
            "AcknowledgeQueueRecords" => self.acknowledge_queue_records(ctx, input, false),
            "AcknowledgeDeadLetterQueueRecords" => self.acknowledge_queue_records(ctx, input, true),
            "UpdateQueueRecordsVisibility" => {
                self.update_queue_records_visibility(ctx, input, false)
            }
            "UpdateDeadLetterQueueRecordsVisibility" => {
                self.update_queue_records_visibility(ctx, input, true)
            }
            "RestoreDeadLetterQueueRecords" => self.restore_dead_letter_queue_records(ctx, input),
            "DescribeChannel" => self.describe_channel(ctx, input),
            "ListChannels" => self.list_channels(ctx, input),
            "UpdateChannel" => self.update_channel(ctx, input),
            "DeleteChannel" => self.delete_channel(ctx, input),
            other => Err(AwsError::not_implemented(other)),
        }
    }
}

impl Service for Kinesis {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let output = match operation {
                "StartStreamEncryption" => self.start_encryption(ctx, &request.input).await?,
                "CreateChannel" => self.create_channel(ctx, &request.input).await?,
                "SubscribeToShard" => return self.subscribe_to_shard(ctx, &request.input),
                "ReceiveQueueRecords" => {
                    self.receive_queue_records(ctx, &request.input, false)
                        .await?
                }
                "ReceiveDeadLetterQueueRecords" => {
                    self.receive_queue_records(ctx, &request.input, true)
                        .await?
                }
                _ => self.dispatch(ctx, operation, &request.input)?,
            };
            Ok(Response::new(output))
        })
    }
}
