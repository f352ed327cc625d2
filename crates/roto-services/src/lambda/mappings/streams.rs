//! Stream event source mappings: DynamoDB streams and Kinesis data streams.
//!
//! A poller reads each shard of the stream through the source's own API (`dynamodbstreams`
//! or `kinesis`: DescribeStream, GetShardIterator and GetRecords, never their tables), from
//! `StartingPosition` (`TRIM_HORIZON`, `LATEST` as it was when the mapping was created, or
//! for Kinesis `AT_TIMESTAMP`), and invokes the function with up to `BatchSize` records in
//! the event Lambda builds (DynamoDB: `{"Records": [{eventID, eventName, eventVersion,
//! eventSource, awsRegion, dynamodb, eventSourceARN}]}`; Kinesis: `{"Records": [{kinesis:
//! {kinesisSchemaVersion, partitionKey, sequenceNumber, data, approximateArrivalTimestamp},
//! eventSource, eventVersion, eventID, eventName, invokeIdentityArn, awsRegion,
//! eventSourceARN}]}`), waiting up to `MaximumBatchingWindowInSeconds` to fill a batch. When a
//! shard ends (resharding), the stream's shards are listed again and the new ones read
//! from their start.
//! What it has handled is checkpointed per shard (`lambda_stream_positions`), so a restart
//! with a persistent store resumes after it. A batch whose invocation fails is retried, in
//! order, after 1 s doubling to a minute on the server clock, `MaximumRetryAttempts` times
//! (`-1`: until its records are too old); with `ReportBatchItemFailures` only the records
//! from the first reported failure on are retried. A batch given up on, or records older
//! than `MaximumRecordAgeInSeconds`, go to the `OnFailure` destination with their
//! `DDBStreamBatchInfo` or `KinesisBatchInfo`, and the poller moves past them. With
//! `BisectBatchOnFunctionError` a failed batch is split in two and each half retried on its
//! own (a split is not a retry).
//! With a `ParallelizationFactor` above 1, a poll reads up to that many batches from a
//! shard and splits them into lanes by the hash of each record's partition key (a DynamoDB
//! record's item key), delivered at once, each lane in order; the shard is checkpointed
//! when every lane is done. Records that pass none of the mapping's `FilterCriteria`
//! patterns (EventBridge's syntax over the record, a Kinesis record's JSON data as `data`)
//! are moved past without invoking the function. `TumblingWindowInSeconds` groups batches by
//! window ([`tumbling`](super::tumbling)), one lane per shard.

use std::collections::{HashMap, HashSet};
use std::hash::{DefaultHasher, Hash, Hasher};
use std::time::Duration;

use roto_core::store::Cached;
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::trace::{TraceEntry, TraceKind};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};
use tokio::task::JoinSet;

use super::tumbling::{self, Window};
use super::{
    context_of, filters_of, invalid_parameter, passes, reports_item_failures, DEFAULT_STREAM_BATCH,
};
use crate::lambda::executor::Invocation;
use crate::lambda::Lambda;

/// How long a poller waits before reading a shard that had nothing new.
const POLL_INTERVAL: Duration = Duration::from_secs(1);
/// How often a poller looks for more records while a batching window is open.
const WINDOW_POLL: Duration = Duration::from_millis(200);
/// The most records one GetRecords returns.
const MAX_GET_RECORDS: usize = 1000;
/// The most batches of one shard a mapping delivers at once (`ParallelizationFactor`).
const MAX_PARALLELIZATION: usize = 10;
/// The first and the longest wait before retrying a failed batch.
const RETRY_FIRST_DELAY: Duration = Duration::from_secs(1);
const RETRY_MAX_DELAY: Duration = Duration::from_secs(60);

/// The kind of stream a mapping reads.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Kind {
    /// A DynamoDB stream (`arn:aws:dynamodb:<region>:<account>:table/<table>/stream/<label>`).
    Dynamodb,
    /// A Kinesis data stream (`arn:aws:kinesis:<region>:<account>:stream/<name>`).
    Kinesis,
}

impl Kind {
    fn of(arn: &str) -> Option<Kind> {
        let parts: Vec<&str> = arn.splitn(6, ':').collect();
        match parts.as_slice() {
            ["arn", _, "dynamodb", _, _, resource]
                if resource
                    .strip_prefix("table/")
                    .and_then(|r| r.split_once("/stream/"))
                    .is_some_and(|(table, label)| !table.is_empty() && !label.is_empty()) =>
            {
                Some(Kind::Dynamodb)
            }
            ["arn", _, "kinesis", _, _, resource]
                if resource
                    .strip_prefix("stream/")
                    .is_some_and(|name| !name.is_empty() && !name.contains('/')) =>
            {
                Some(Kind::Kinesis)
            }
            _ => None,
        }
    }

    /// The service whose API the poller reads.
    fn service(self) -> &'static str {
        match self {
            Kind::Dynamodb => "dynamodbstreams",
            Kind::Kinesis => "kinesis",
        }
    }

    /// A request to the source's API naming the stream.
    fn request(self, arn: &str) -> Value {
        match self {
            Kind::Dynamodb => Value::map().with("StreamArn", arn),
            Kind::Kinesis => Value::map().with("StreamARN", arn),
        }
    }

    /// The member GetShardIterator takes a sequence number in.
    fn sequence_member(self) -> &'static str {
        match self {
            Kind::Dynamodb => "SequenceNumber",
            Kind::Kinesis => "StartingSequenceNumber",
        }
    }

    /// The member of an `OnFailure` record describing the batch.
    fn batch_info(self) -> &'static str {
        match self {
            Kind::Dynamodb => "DDBStreamBatchInfo",
            Kind::Kinesis => "KinesisBatchInfo",
        }
    }
}

/// The kind of a mapping's stream (a DynamoDB stream when the ARN names neither).
fn kind_of(config: &Value) -> Kind {
    Kind::of(config.str("EventSourceArn").unwrap_or_default()).unwrap_or(Kind::Dynamodb)
}

/// Whether an ARN names a DynamoDB stream or a Kinesis data stream.
pub(super) fn is_stream_arn(arn: &str) -> bool {
    Kind::of(arn).is_some()
}

/// The `StartingPosition` of a stream mapping, which must name one the source supports
/// (`AT_TIMESTAMP`, Kinesis only, with `StartingPositionTimestamp`).
pub(super) fn starting_position<'a>(input: &'a Value, arn: &str) -> AwsResult<&'a str> {
    let kinesis = Kind::of(arn) == Some(Kind::Kinesis);
    match input.str("StartingPosition") {
        None => Err(invalid_parameter(
            "1 validation error detected: Value null at 'startingPosition' failed to satisfy constraint: Member must not be null.",
        )),
        Some(p @ ("TRIM_HORIZON" | "LATEST")) => Ok(p),
        Some(p @ "AT_TIMESTAMP") if kinesis => match input.get("StartingPositionTimestamp") {
            Some(_) => Ok(p),
            None => Err(invalid_parameter(
                "StartingPositionTimestamp must be provided when StartingPosition is AT_TIMESTAMP.",
            )),
        },
        Some(_) => Err(invalid_parameter(format!(
            "Unsupported starting position for arn type: {arn}"
        ))),
    }
}

/// Where a poller is in the stream: the shards, and the iterator to read next per shard.
#[derive(Default)]
pub(super) struct Cursor {
    shards: Option<Vec<String>>,
    iterators: HashMap<String, String>,
    closed: HashSet<String>,
    /// Each shard's open tumbling window.
    windows: HashMap<String, tumbling::Shared>,
}

/// Who the function's records came through: the stream, shard, region and the function's
/// role (Kinesis records name it as `invokeIdentityArn`).
struct Origin<'a> {
    arn: &'a str,
    shard: &'a str,
    region: &'a str,
    role: &'a str,
}

/// A record as the function receives it. A DynamoDB stream's: the GetRecords record, with
/// timestamps in epoch seconds (binary attributes in base64, as `Value::to_json` writes
/// them), and the stream's ARN. A Kinesis stream's: Lambda's `kinesis` envelope.
fn event_record(record: &Value, origin: &Origin<'_>) -> Json {
    if record.get("dynamodb").is_some() {
        let mut json = event_json(record);
        json["eventSourceARN"] = origin.arn.into();
        return json;
    }
    let data = record.get("Data").map(Value::to_json).unwrap_or_default();
    json!({
        "kinesis": {
            "kinesisSchemaVersion": "1.0",
            "partitionKey": record.str("PartitionKey").unwrap_or_default(),
            "sequenceNumber": sequence_of(record),
            "data": data,
            "approximateArrivalTimestamp": created_of(record) as f64 / 1000.0,
        },
        "eventSource": "aws:kinesis",
        "eventVersion": "1.0",
        "eventID": format!("{}:{}", origin.shard, sequence_of(record)),
        "eventName": "aws:kinesis:record",
        "invokeIdentityArn": origin.role,
        "awsRegion": origin.region,
        "eventSourceARN": origin.arn,
    })
}

fn event_json(value: &Value) -> Json {
    match value {
        Value::Timestamp(ms) if ms % 1000 == 0 => Json::from(ms / 1000),
        Value::Timestamp(ms) => Json::from(*ms as f64 / 1000.0),
        Value::List(items) => items.iter().map(event_json).collect(),
        Value::Map(map) => map
            .iter()
            .map(|(k, v)| (k.clone(), event_json(v)))
            .collect::<serde_json::Map<_, _>>()
            .into(),
        other => other.to_json(),
    }
}

/// A record's sequence number (a DynamoDB stream record's, or a Kinesis record's).
fn sequence_of(record: &Value) -> &str {
    match record.get("dynamodb") {
        Some(d) => d.str("SequenceNumber"),
        None => record.str("SequenceNumber"),
    }
    .unwrap_or_default()
}

/// When a record was written, in epoch milliseconds.
fn created_of(record: &Value) -> i64 {
    let at = match record.get("dynamodb") {
        Some(d) => d.get("ApproximateCreationDateTime"),
        None => record.get("ApproximateArrivalTimestamp"),
    };
    match at {
        Some(Value::Timestamp(ms)) => *ms,
        _ => 0,
    }
}

/// The index of the first record a `batchItemFailures` answer reports (an identifier that
/// names no record of the batch fails the whole batch, as in AWS); `None` when none failed.
fn first_failure(payload: &[u8], records: &[Value]) -> Option<usize> {
    let answer: Json = serde_json::from_slice(payload).ok()?;
    let failures = answer.get("batchItemFailures")?.as_array()?;
    failures
        .iter()
        .map(|f| {
            let id = f
                .get("itemIdentifier")
                .and_then(Json::as_str)
                .unwrap_or_default();
            records
                .iter()
                .position(|r| !id.is_empty() && sequence_of(r) == id)
                .unwrap_or(0)
        })
        .min()
}

/// A record as the mapping's filters see it: a DynamoDB stream record as the function
/// receives it; a Kinesis record's data, where it is JSON, as `data` (Lambda filters
/// Kinesis records on their data alone, so a filter matches no record whose data is not
/// JSON).
fn filter_document(record: &Value) -> Json {
    if record.get("dynamodb").is_some() {
        return event_json(record);
    }
    let data = record
        .get("Data")
        .and_then(Value::as_blob)
        .and_then(|d| serde_json::from_slice::<Json>(d).ok());
    match data {
        Some(data) => json!({ "data": data }),
        None => json!({}),
    }
}

/// Splits what was read from a shard into at most `factor` lanes by the hash of each
/// record's partition key (a DynamoDB item's key), keeping each key's records in order in
/// one lane, as Lambda does with a `ParallelizationFactor` above 1.
fn lanes_of(records: Vec<Value>, factor: usize) -> Vec<Vec<Value>> {
    let mut lanes: Vec<Vec<Value>> = vec![Vec::new(); factor];
    for record in records {
        let mut hasher = DefaultHasher::new();
        match record.get("dynamodb") {
            Some(d) => d
                .get("Keys")
                .map(Value::to_json)
                .unwrap_or_default()
                .to_string(),
            None => record.str("PartitionKey").unwrap_or_default().to_string(),
        }
        .hash(&mut hasher);
        let lane = usize::try_from(hasher.finish() % factor as u64).unwrap_or(0);
        lanes[lane].push(record);
    }
    lanes.retain(|l| !l.is_empty());
    lanes
}

/// Where a lane's batches come from, and whether they are checkpointed as they go: a lone
/// lane's are; parallel lanes' are checkpointed together, once every lane is done.
#[derive(Clone)]
struct Lane {
    ctx: Context,
    uuid: String,
    config: Value,
    shard: String,
    checkpoint: bool,
    /// The tumbling window its batches belong to, where the mapping has them.
    window: Option<tumbling::Shared>,
}

/// How delivering a batch ended.
enum Delivered {
    /// Delivered, or given up on and passed.
    Done,
    /// Failed as a whole and split in two, each to deliver in order.
    Split(Vec<Value>, Vec<Value>),
    /// The mapping was disabled or deleted meanwhile.
    Stopped,
}

/// Records a poller gives up on, and why.
struct GivenUp<'a> {
    records: &'a [Value],
    /// `RetryAttemptsExhausted` or `RecordAgeExceeded`.
    condition: &'static str,
    attempts: i64,
    /// The last invocation's request id and response context, where there was one.
    last: Option<(String, Json)>,
}

/// A time as the destination record's batch info writes it (`2024-01-01T00:00:00Z`).
fn arrival(ms: i64) -> String {
    timestamp::format(ms, TimestampFormat::Iso8601).replace(".000Z", "Z")
}

impl Lambda {
    /// Checks that the stream exists (DescribeStream) and, for `LATEST`, records where each
    /// of its shards ends now, so records written before the poller's first read are not
    /// taken for older ones.
    pub(super) async fn open_stream(
        &self,
        ctx: &Context,
        uuid: &str,
        config: &Value,
    ) -> AwsResult<()> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let arn = config.str("EventSourceArn").unwrap_or_default();
        let kind = kind_of(config);
        let description = dispatcher
            .call(ctx, kind.service(), "DescribeStream", kind.request(arn))
            .await
            .map_err(|_| invalid_parameter(format!("Stream not found: {arn}")))?;
        if config.str("StartingPosition") != Some("LATEST") {
            return Ok(());
        }
        for shard in shard_ids(&description) {
            let iterator = dispatcher
                .call(
                    ctx,
                    kind.service(),
                    "GetShardIterator",
                    kind.request(arn)
                        .with("ShardId", shard.as_str())
                        .with("ShardIteratorType", "LATEST"),
                )
                .await?;
            let iterator = iterator.str("ShardIterator").unwrap_or_default();
            self.env.store.with(|c| {
                c.execute_cached(
                    "INSERT OR REPLACE INTO lambda_stream_positions (uuid, shard, sequence, iterator) VALUES (?1, ?2, NULL, ?3)",
                    params![uuid, shard, iterator],
                )
                .map_err(AwsError::from)
            })?;
        }
        Ok(())
    }

    /// The checkpoint of a shard, and the iterator pinned at creation (taken, so it is
    /// used once); `None` for a shard the mapping has never seen.
    #[allow(clippy::type_complexity)]
    fn take_position(
        &self,
        uuid: &str,
        shard: &str,
    ) -> AwsResult<Option<(Option<String>, Option<String>)>> {
        self.env.store.with(|c| {
            let row: Option<(Option<String>, Option<String>)> = c
                .prepare_cached(
                    "SELECT sequence, iterator FROM lambda_stream_positions WHERE uuid = ?1 AND shard = ?2",
                )?
                .query_row(params![uuid, shard], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()?;
            if row.as_ref().is_some_and(|(_, it)| it.is_some()) {
                c.prepare_cached(
                    "UPDATE lambda_stream_positions SET iterator = NULL WHERE uuid = ?1 AND shard = ?2",
                )?
                .execute(params![uuid, shard])?;
            }
            Ok::<_, AwsError>(row)
        })
    }

    /// Checkpoints a shard after `sequence`.
    fn save_position(&self, uuid: &str, shard: &str, sequence: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_stream_positions (uuid, shard, sequence, iterator) VALUES (?1, ?2, ?3, NULL)",
                params![uuid, shard, sequence],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// An iterator for a shard: after its checkpoint, else the pinned `LATEST`, else the
    /// mapping's starting position (the horizon when the checkpoint was trimmed away, and
    /// for a `LATEST` mapping's shard that appeared after it was created: a child of
    /// resharding, read from its start).
    async fn shard_iterator(
        &self,
        ctx: &Context,
        uuid: &str,
        config: &Value,
        shard: &str,
    ) -> AwsResult<String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let arn = config.str("EventSourceArn").unwrap_or_default();
        let kind = kind_of(config);
        let position = self.take_position(uuid, shard)?;
        let new_shard = position.is_none();
        let (sequence, pinned) = position.unwrap_or_default();
        if let (None, Some(pinned)) = (&sequence, pinned) {
            return Ok(pinned);
        }
        let request = |kind_name: &str| {
            kind.request(arn)
                .with("ShardId", shard)
                .with("ShardIteratorType", kind_name)
        };
        let starting = match config.str("StartingPosition").unwrap_or("TRIM_HORIZON") {
            "LATEST" if new_shard => "TRIM_HORIZON",
            other => other,
        };
        let first = match &sequence {
            Some(seq) => {
                request("AFTER_SEQUENCE_NUMBER").with(kind.sequence_member(), seq.as_str())
            }
            None => request(starting).with_opt(
                "Timestamp",
                config
                    .get("StartingPositionTimestamp")
                    .and_then(timestamp_value),
            ),
        };
        let answer = match dispatcher
            .call(ctx, kind.service(), "GetShardIterator", first)
            .await
        {
            Err(e)
                if e.code == "TrimmedDataAccessException"
                    || e.code == "InvalidArgumentException" && sequence.is_some() =>
            {
                dispatcher
                    .call(
                        ctx,
                        kind.service(),
                        "GetShardIterator",
                        request("TRIM_HORIZON"),
                    )
                    .await?
            }
            other => other?,
        };
        Ok(answer.str("ShardIterator").unwrap_or_default().to_string())
    }

    /// Reads what is new on every shard of the stream and hands it to the function; rests
    /// when nothing was.
    pub(super) async fn poll_stream(
        &self,
        uuid: &str,
        account: &str,
        region: &str,
        config: &Value,
        cursor: &mut Cursor,
    ) -> AwsResult<()> {
        let ctx = context_of(self, account, region)
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        if cursor.shards.is_none() {
            let dispatcher = self
                .env
                .dispatcher()
                .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
            let kind = kind_of(config);
            let arn = config.str("EventSourceArn").unwrap_or_default();
            let description = dispatcher
                .call(&ctx, kind.service(), "DescribeStream", kind.request(arn))
                .await?;
            cursor.shards = Some(shard_ids(&description));
        }
        let mut read = false;
        for shard in cursor.shards.clone().unwrap_or_default() {
            read |= self.poll_shard(&ctx, uuid, config, &shard, cursor).await?;
        }
        if !read {
            tokio::time::sleep(POLL_INTERVAL).await;
        }
        Ok(())
    }

    /// Reads one batch from a shard (waiting out the batching window) and delivers it;
    /// returns whether there was one.
    async fn poll_shard(
        &self,
        ctx: &Context,
        uuid: &str,
        config: &Value,
        shard: &str,
        cursor: &mut Cursor,
    ) -> AwsResult<bool> {
        if cursor.closed.contains(shard) {
            return Ok(false);
        }
        let mut lane = Lane {
            ctx: ctx.clone(),
            uuid: uuid.to_string(),
            config: config.clone(),
            shard: shard.to_string(),
            checkpoint: true,
            window: None,
        };
        let width = config.int("TumblingWindowInSeconds").unwrap_or(0) * 1000;
        if width > 0 && !cursor.windows.contains_key(shard) {
            if let Some(saved) = Window::load(&self.env.store, uuid, shard, width)? {
                cursor.windows.insert(shard.to_string(), saved);
            }
        }
        let ended = cursor
            .windows
            .get(shard)
            .is_some_and(|w| w.lock().unwrap_or_else(|p| p.into_inner()).end <= now_millis());
        if ended {
            self.close_window(&lane, cursor).await;
        }
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let batch = usize::try_from(config.int("BatchSize").unwrap_or(DEFAULT_STREAM_BATCH))
            .unwrap_or(1)
            .max(1);
        let factor = usize::try_from(config.int("ParallelizationFactor").unwrap_or(1))
            .unwrap_or(1)
            .clamp(1, MAX_PARALLELIZATION);
        let capacity = batch * factor;
        let window = Duration::from_secs(
            u64::try_from(config.int("MaximumBatchingWindowInSeconds").unwrap_or(0)).unwrap_or(0),
        );
        let started = tokio::time::Instant::now();
        let mut iterator = match cursor.iterators.remove(shard) {
            Some(iterator) => iterator,
            None => self.shard_iterator(ctx, uuid, config, shard).await?,
        };
        let mut records: Vec<Value> = Vec::new();
        let (next, closed) = loop {
            let want = (capacity - records.len()).min(MAX_GET_RECORDS);
            let answer = dispatcher
                .call(
                    ctx,
                    kind_of(config).service(),
                    "GetRecords",
                    Value::map()
                        .with("ShardIterator", iterator.as_str())
                        .with("Limit", want),
                )
                .await;
            let answer = match answer {
                Ok(answer) => answer,
                Err(e)
                    if e.code == "ExpiredIteratorException"
                        || e.code == "TrimmedDataAccessException" =>
                {
                    break (None, false);
                }
                Err(e) => return Err(e),
            };
            let got = answer
                .get("Records")
                .and_then(Value::as_list)
                .unwrap_or_default()
                .to_vec();
            let full_page = got.len() == want;
            records.extend(got);
            let Some(next) = answer.str("NextShardIterator").map(str::to_string) else {
                break (None, true);
            };
            if records.len() >= capacity
                || (!full_page && (records.is_empty() || started.elapsed() >= window))
            {
                break (Some(next), false);
            }
            if !full_page {
                let left = window.saturating_sub(started.elapsed());
                tokio::time::sleep(left.min(WINDOW_POLL)).await;
            }
            iterator = next;
        };
        let keep = |cursor: &mut Cursor| match next {
            Some(next) => {
                cursor.iterators.insert(shard.to_string(), next);
            }
            None if closed => {
                cursor.closed.insert(shard.to_string());
                cursor.shards = None;
            }
            None => {}
        };
        let Some(last) = records.last().map(|r| sequence_of(r).to_string()) else {
            keep(cursor);
            return Ok(false);
        };
        let filters = filters_of(config)?;
        records.retain(|r| passes(&filters, &filter_document(r)));
        let lanes = lanes_of(records, if width > 0 { 1 } else { factor });
        lane.checkpoint = lanes.len() == 1;
        let finished = if width > 0 {
            let records = lanes.into_iter().flatten().collect();
            self.deliver_windows(&lane, records, width, batch, cursor)
                .await?
        } else {
            self.deliver_lanes(&lane, lanes, batch).await?
        };
        if finished {
            self.save_position(uuid, shard, &last)?;
            keep(cursor);
        }
        Ok(true)
    }

    /// Delivers parallel lanes at once; false when the mapping was disabled or deleted
    /// meanwhile.
    async fn deliver_lanes(
        &self,
        lane: &Lane,
        lanes: Vec<Vec<Value>>,
        batch: usize,
    ) -> AwsResult<bool> {
        let mut running = JoinSet::new();
        for records in lanes {
            let (lambda, lane) = (self.clone(), lane.clone());
            running.spawn(async move { lambda.deliver_lane(&lane, records, batch).await });
        }
        let mut finished = true;
        while let Some(done) = running.join_next().await {
            finished &= done.map_err(|e| AwsError::internal(e.to_string()))??;
        }
        Ok(finished)
    }

    /// Delivers records window by window, closing the shard's open window when they move on
    /// to a later one.
    async fn deliver_windows(
        &self,
        lane: &Lane,
        records: Vec<Value>,
        width: i64,
        batch: usize,
        cursor: &mut Cursor,
    ) -> AwsResult<bool> {
        for (start, records) in tumbling::windowed(records, width, created_of) {
            let open = cursor.windows.get(&lane.shard).cloned();
            let window = match open {
                Some(w) if w.lock().unwrap_or_else(|p| p.into_inner()).start == start => w,
                _ => {
                    self.close_window(lane, cursor).await;
                    let w = Window::open(start, width);
                    cursor.windows.insert(lane.shard.clone(), w.clone());
                    w
                }
            };
            let windowed = Lane {
                window: Some(window.clone()),
                ..lane.clone()
            };
            if !self.deliver_lane(&windowed, records, batch).await? {
                return Ok(false);
            }
            let early = window
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .terminated_early;
            if early {
                self.close_window(lane, cursor).await;
            } else {
                window.lock().unwrap_or_else(|p| p.into_inner()).save(
                    &self.env.store,
                    &lane.uuid,
                    &lane.shard,
                )?;
            }
        }
        Ok(true)
    }

    /// Invokes the function for the end of the shard's open window (no records,
    /// `isFinalInvokeForWindow`), and forgets the window.
    async fn close_window(&self, lane: &Lane, cursor: &mut Cursor) {
        let Some(window) = cursor.windows.remove(&lane.shard) else {
            return;
        };
        let _ = Window::forget(&self.env.store, &lane.uuid, &lane.shard);
        let Ok(function) = self.mapped_function(&lane.ctx, &lane.config) else {
            return;
        };
        let mut event = json!({ "Records": [] });
        let arn = lane.config.str("EventSourceArn").unwrap_or_default();
        window.lock().unwrap_or_else(|p| p.into_inner()).describe(
            &mut event,
            &lane.shard,
            arn,
            true,
        );
        let invocation = Invocation {
            request_id: crate::lambda::revision_id(),
            payload: event.to_string().into_bytes(),
            invoked_arn: lane
                .config
                .str("FunctionArn")
                .unwrap_or_default()
                .to_string(),
            client_context: None,
        };
        let _ = self.runner.run(&lane.ctx, &function, invocation).await;
    }

    /// Delivers a lane's records in batches of `batch`, in order; false when the mapping
    /// was disabled or deleted meanwhile.
    async fn deliver_lane(
        &self,
        lane: &Lane,
        records: Vec<Value>,
        batch: usize,
    ) -> AwsResult<bool> {
        for part in records.chunks(batch) {
            if !self.deliver_stream_batch(lane, part.to_vec()).await? {
                return Ok(false);
            }
        }
        Ok(true)
    }

    /// Checkpoints a lone lane after `sequence` (parallel lanes are checkpointed together).
    fn checkpoint(&self, lane: &Lane, sequence: &str) -> AwsResult<()> {
        if lane.checkpoint {
            self.save_position(&lane.uuid, &lane.shard, sequence)?;
        }
        Ok(())
    }

    /// Delivers a batch, bisecting it on function errors where the mapping asks; returns
    /// false when the mapping was disabled or deleted meanwhile (the rest is read again
    /// from the checkpoint).
    async fn deliver_stream_batch(&self, lane: &Lane, records: Vec<Value>) -> AwsResult<bool> {
        let mut pending = vec![records];
        while let Some(batch) = pending.pop() {
            match self.deliver_part(lane, batch).await? {
                Delivered::Done => {}
                Delivered::Split(first, second) => {
                    pending.push(second);
                    pending.push(first);
                }
                Delivered::Stopped => return Ok(false),
            }
        }
        Ok(true)
    }

    /// Invokes the function with a batch until it succeeds, its retries run out or its
    /// records are too old, checkpointing what is done; a batch that fails as a whole is
    /// split instead when `BisectBatchOnFunctionError` is on.
    async fn deliver_part(&self, lane: &Lane, mut records: Vec<Value>) -> AwsResult<Delivered> {
        let Lane {
            ctx,
            uuid,
            config,
            shard,
            ..
        } = lane;
        let bisect = config.bool("BisectBatchOnFunctionError").unwrap_or(false);
        let arn = config.str("EventSourceArn").unwrap_or_default();
        let function_arn = config.str("FunctionArn").unwrap_or_default();
        let max_retries = config.int("MaximumRetryAttempts").unwrap_or(-1);
        let max_age = config.int("MaximumRecordAgeInSeconds").unwrap_or(-1);
        let mut attempts = 0;
        let mut delay = RETRY_FIRST_DELAY;
        loop {
            if max_age >= 0 {
                let cutoff = now_millis() - max_age * 1000;
                let too_old = records
                    .iter()
                    .take_while(|r| created_of(r) < cutoff)
                    .count();
                if too_old > 0 {
                    let old: Vec<Value> = records.drain(..too_old).collect();
                    let given_up = GivenUp {
                        records: &old,
                        condition: "RecordAgeExceeded",
                        attempts,
                        last: None,
                    };
                    self.give_up(lane, given_up).await?;
                    if records.is_empty() {
                        return Ok(Delivered::Done);
                    }
                }
            }
            attempts += 1;
            let function = self.mapped_function(ctx, config)?;
            let origin = Origin {
                arn,
                shard,
                region: &ctx.region,
                role: function.config.str("Role").unwrap_or_default(),
            };
            let mut event = json!({ "Records": records.iter().map(|r| event_record(r, &origin)).collect::<Vec<_>>() });
            if let Some(window) = &lane.window {
                let window = window.lock().unwrap_or_else(|p| p.into_inner());
                window.describe(&mut event, shard, arn, false);
            }
            let invocation = Invocation {
                request_id: crate::lambda::revision_id(),
                payload: event.to_string().into_bytes(),
                invoked_arn: function_arn.to_string(),
                client_context: None,
            };
            let request_id = invocation.request_id.clone();
            let started = std::time::Instant::now();
            let result = self.runner.run(ctx, &function, invocation).await;
            let stateless = |answer: &[u8]| {
                lane.window
                    .as_ref()
                    .is_some_and(|w| !w.lock().unwrap_or_else(|p| p.into_inner()).keep(answer))
            };
            let failed_at = match &result {
                Ok(o) if o.function_error.is_none() && !stateless(&o.payload) => {
                    reports_item_failures(config)
                        .then(|| first_failure(&o.payload, &records))
                        .flatten()
                }
                _ => Some(0),
            };
            let whole = failed_at == Some(0)
                && result.as_ref().map_or(true, |o| o.function_error.is_some());
            let split = whole && bisect && records.len() > 1;
            let exhausted =
                !split && failed_at.is_some() && max_retries >= 0 && attempts > max_retries;
            let mut entry = TraceEntry::request(&ctx.account, &ctx.region, "lambda", "Invoke");
            entry.kind = TraceKind::Delivery;
            entry.source = Some(arn.to_string());
            entry.target = Some(function_arn.to_string());
            entry.attempt = Some(u32::try_from(attempts).unwrap_or(u32::MAX));
            entry.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            entry.outcome = Some(
                match (failed_at, exhausted, split) {
                    (None, _, _) => "delivered",
                    (Some(_), _, true) => "bisected",
                    (Some(_), true, _) => "failed",
                    (Some(_), false, _) => "retrying",
                }
                .into(),
            );
            entry.error_code = match &result {
                Ok(o) => o
                    .function_error
                    .clone()
                    .or_else(|| failed_at.map(|_| "BatchItemFailures".into())),
                Err(e) => Some(e.code.to_string()),
            };
            entry.detail = Some(format!("{} records", records.len()));
            self.env.trace.record(entry);
            let Some(failed_at) = failed_at else {
                self.checkpoint(lane, sequence_of(&records[records.len() - 1]))?;
                return Ok(Delivered::Done);
            };
            if split {
                let second = records.split_off(records.len() / 2);
                return Ok(Delivered::Split(records, second));
            }
            if failed_at > 0 {
                self.checkpoint(lane, sequence_of(&records[failed_at - 1]))?;
                records.drain(..failed_at);
            }
            if exhausted {
                let response = match &result {
                    Ok(o) => json!({"statusCode": 200, "executedVersion": function.version_name(),
                                    "functionError": o.function_error.as_deref().unwrap_or("Unhandled")}),
                    Err(e) => {
                        json!({"statusCode": e.status.unwrap_or(500), "executedVersion": function.version_name(),
                                     "functionError": e.code.to_string()})
                    }
                };
                let given_up = GivenUp {
                    records: &records,
                    condition: "RetryAttemptsExhausted",
                    attempts,
                    last: Some((request_id, response)),
                };
                self.give_up(lane, given_up).await?;
                return Ok(Delivered::Done);
            }
            timestamp::sleep(delay).await;
            delay = (delay * 2).min(RETRY_MAX_DELAY);
            if !self.mapping_enabled(uuid) {
                return Ok(Delivered::Stopped);
            }
        }
    }

    /// Moves past records given up on, sending them first to the mapping's `OnFailure`
    /// destination where it has one.
    async fn give_up(&self, lane: &Lane, given_up: GivenUp<'_>) -> AwsResult<()> {
        let Lane {
            ctx, config, shard, ..
        } = lane;
        let GivenUp {
            records,
            condition,
            attempts,
            last,
        } = given_up;
        let (Some(first), Some(end)) = (records.first(), records.last()) else {
            return Ok(());
        };
        self.checkpoint(lane, sequence_of(end))?;
        let Some(destination) = config
            .get("DestinationConfig")
            .and_then(|d| d.get("OnFailure"))
            .and_then(|d| d.str("Destination"))
        else {
            return Ok(());
        };
        let (request_id, response) =
            last.unwrap_or_else(|| (crate::lambda::revision_id(), Json::Null));
        let mut record = json!({
            "requestContext": {
                "requestId": request_id,
                "functionArn": config.str("FunctionArn").unwrap_or_default(),
                "condition": condition,
                "approximateInvokeCount": attempts,
            },
            "version": "1.0",
            "timestamp": timestamp::format(now_millis(), TimestampFormat::Iso8601),
            kind_of(config).batch_info(): {
                "shardId": shard,
                "startSequenceNumber": sequence_of(first),
                "endSequenceNumber": sequence_of(end),
                "approximateArrivalOfFirstRecord": arrival(created_of(first)),
                "approximateArrivalOfLastRecord": arrival(created_of(end)),
                "batchSize": records.len(),
                "streamArn": config.str("EventSourceArn").unwrap_or_default(),
            },
        });
        if !response.is_null() {
            record["responseContext"] = response;
        }
        self.runner
            .send_to_destination(ctx, destination, &record)
            .await;
        Ok(())
    }
}

/// A stored `StartingPositionTimestamp` (epoch seconds, as the mapping keeps its times)
/// as the timestamp GetShardIterator takes.
fn timestamp_value(stored: &Value) -> Option<Value> {
    let millis = match stored {
        Value::Float(secs) => timestamp::secs_to_millis(*secs)?,
        Value::Integer(secs) => secs.checked_mul(1000)?,
        _ => return None,
    };
    Some(Value::Timestamp(millis))
}

/// The shard ids of a DescribeStream answer.
fn shard_ids(description: &Value) -> Vec<String> {
    description
        .get("StreamDescription")
        .and_then(|d| d.get("Shards"))
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|s| s.str("ShardId").map(str::to_string))
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn record(seq: &str, created: i64) -> Value {
        Value::map().with("eventName", "INSERT").with(
            "dynamodb",
            Value::map()
                .with("SequenceNumber", seq)
                .with("ApproximateCreationDateTime", Value::Timestamp(created))
                .with(
                    "NewImage",
                    Value::map().with("b", Value::map().with("B", Value::Blob(b"foobar".to_vec()))),
                ),
        )
    }

    #[test]
    fn stream_arns_are_told_from_table_and_other_arns() {
        assert!(is_stream_arn(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"
        ));
        assert!(!is_stream_arn(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t"
        ));
        assert!(is_stream_arn(
            "arn:aws:kinesis:us-east-1:000000000000:stream/s"
        ));
        assert!(!is_stream_arn(
            "arn:aws:kinesis:us-east-1:000000000000:stream/s/consumer/c:1"
        ));
    }

    #[test]
    fn records_reach_the_function_in_lambdas_shape() {
        let origin = Origin {
            arn: "arn:s",
            shard: "shardId-000000000000",
            region: "us-east-1",
            role: "arn:aws:iam::000000000000:role/r",
        };
        let json = event_record(&record("100000000000000000001", 1_700_000_000_000), &origin);
        assert_eq!(json["eventSourceARN"], "arn:s");
        assert_eq!(
            json["dynamodb"]["ApproximateCreationDateTime"],
            1_700_000_000i64
        );
        assert_eq!(json["dynamodb"]["NewImage"]["b"]["B"], "Zm9vYmFy");
        assert_eq!(json["dynamodb"]["SequenceNumber"], "100000000000000000001");
        assert_eq!(arrival(1_700_000_000_000), "2023-11-14T22:13:20Z");
        let kinesis = Value::map()
            .with("SequenceNumber", "49")
            .with("PartitionKey", "k")
            .with("Data", Value::Blob(b"hi".to_vec()))
            .with("ApproximateArrivalTimestamp", Value::Timestamp(1_500));
        let json = event_record(&kinesis, &origin);
        assert_eq!(json["kinesis"]["data"], "aGk=");
        assert_eq!(json["kinesis"]["approximateArrivalTimestamp"], 1.5);
        assert_eq!(json["eventID"], "shardId-000000000000:49");
        assert_eq!(
            json["invokeIdentityArn"],
            "arn:aws:iam::000000000000:role/r"
        );
        assert_eq!(created_of(&kinesis), 1_500);
    }

    #[test]
    fn lanes_keep_each_keys_records_together_in_order() {
        let kinesis = |key: &str, seq: &str| {
            Value::map()
                .with("PartitionKey", key)
                .with("SequenceNumber", seq)
        };
        let records: Vec<Value> = (0..30)
            .map(|i| kinesis(&format!("k{}", i % 6), &i.to_string()))
            .collect();
        let lanes = lanes_of(records, 4);
        assert!(lanes.len() > 1 && lanes.len() <= 4);
        assert_eq!(lanes.iter().map(Vec::len).sum::<usize>(), 30);
        for lane in &lanes {
            let seqs: Vec<i64> = lane
                .iter()
                .map(|r| sequence_of(r).parse().unwrap())
                .collect();
            assert!(seqs.windows(2).all(|w| w[0] < w[1]));
            for key in lane.iter().map(|r| r.str("PartitionKey")) {
                assert!(
                    lanes
                        .iter()
                        .filter(|l| l.iter().any(|r| r.str("PartitionKey") == key))
                        .count()
                        == 1
                );
            }
        }
        assert_eq!(lanes_of(vec![kinesis("a", "1")], 1).len(), 1);
        let json = kinesis("a", "1").with("Data", Value::Blob(br#"{"n": 1}"#.to_vec()));
        assert_eq!(filter_document(&json), json!({"data": {"n": 1}}));
        let text = kinesis("a", "1").with("Data", Value::Blob(b"n".to_vec()));
        assert_eq!(filter_document(&text), json!({}));
    }

    #[test]
    fn batch_item_failures_name_the_first_record_to_retry() {
        let records = [record("1", 0), record("2", 0), record("3", 0)];
        let answer = |items: &str| format!(r#"{{"batchItemFailures": [{items}]}}"#);
        assert_eq!(first_failure(answer("").as_bytes(), &records), None);
        assert_eq!(
            first_failure(
                answer(r#"{"itemIdentifier":"3"},{"itemIdentifier":"2"}"#).as_bytes(),
                &records
            ),
            Some(1)
        );
        assert_eq!(
            first_failure(answer(r#"{"itemIdentifier":"9"}"#).as_bytes(), &records),
            Some(0)
        );
        assert_eq!(first_failure(b"null", &records), None);
        let missing = Value::map();
        assert!(starting_position(&missing, "arn")
            .unwrap_err()
            .message
            .contains("'startingPosition'"));
        let at = Value::map().with("StartingPosition", "AT_TIMESTAMP");
        assert_eq!(
            starting_position(&at, "arn:x").unwrap_err().message,
            "Unsupported starting position for arn type: arn:x"
        );
    }
}
