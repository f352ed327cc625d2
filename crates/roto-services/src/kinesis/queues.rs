//! Queues: a stream read one record at a time, with visibility timeouts, acknowledgements
//! and built-in dead-letter handling (CreateQueue, DescribeQueue, ListQueues, UpdateQueue,
//! DeleteQueue, ReceiveQueueRecords, AcknowledgeQueueRecords, UpdateQueueRecordsVisibility
//! and their dead-letter counterparts).
//!
//! A queue is a row of `kinesis_queues`. It does not copy the stream's records: each shard
//! has a cursor in `kinesis_queue_cursors`, and a receive first moves the cursors on by up to
//! [`PULL_PER_SHARD`] records, giving each a row of `kinesis_queue_records` that keeps its
//! delivery state (when it is visible again, how often it was received, its current receipt
//! handle, whether it is a dead-letter record). Acknowledging deletes that row; a record the
//! stream's retention removes leaves the queue with it. A record received `MaxReceiveCount`
//! times without an acknowledgement becomes a dead-letter record once its visibility timeout
//! ends; ReceiveQueueRecords skips it and ReceiveDeadLetterQueueRecords returns it until it
//! is acknowledged or restored.
//!
//! The queue's ARN ends in a random identifier, as AWS's does, so a name can be reused
//! after DeleteQueue. CreateQueue answers CREATING and UpdateQueue UPDATING; the first read
//! after them shows ACTIVE, as Roto's other status transitions do. Receive waits up to
//! `WaitTimeSeconds` (9 by default, as in AWS) for records put on the stream or records whose
//! visibility timeout ends on the server clock.

use std::time::Duration;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::{self, now_millis};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, Connection, OptionalExtension};

use super::attached::{list_page, passes_filter, MAX_TAGS, QUEUES};
use super::records::timestamp_of;
use super::streams::tag_map;
use super::{invalid_argument, stream_arn, Kinesis, Stream};
use crate::tags::{self, Tags};

/// The visibility timeout of a queue created without one, in seconds.
const DEFAULT_VISIBILITY: i64 = 30;
/// The receive count after which a record becomes a dead-letter record, by default.
const DEFAULT_MAX_RECEIVE: i64 = 6;
/// How long a receive waits when the request does not say, in seconds.
const DEFAULT_WAIT: i64 = 9;
/// How many records a receive returns when the request does not say.
const DEFAULT_LIMIT: i64 = 10;
/// How many new records one receive takes from each shard into the queue.
const PULL_PER_SHARD: i64 = 100;
/// The registered consumers (enhanced fan-out consumers and queues) a stream may have.
pub(crate) const MAX_REGISTERED: i64 = 20;

/// A queue as stored.
#[derive(Debug, Clone)]
pub(crate) struct Queue {
    id: String,
    name: String,
    stream: String,
    stream_created: i64,
    created: i64,
    visibility: i64,
    /// The receive count that makes a record a dead-letter record; none when dead-letter
    /// handling is off.
    max_receive: Option<i64>,
    start_type: String,
    start_at: Option<i64>,
    tags: Tags,
}

const QUEUE_COLUMNS: &str = "id, name, stream, stream_created, created, visibility,
    max_receive, start_type, start_at, tags";

fn queue_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Queue> {
    let tags: String = r.get(9)?;
    Ok(Queue {
        id: r.get(0)?,
        name: r.get(1)?,
        stream: r.get(2)?,
        stream_created: r.get(3)?,
        created: r.get(4)?,
        visibility: r.get(5)?,
        max_receive: r.get(6)?,
        start_type: r.get(7)?,
        start_at: r.get(8)?,
        tags: tags::from_stored(&tags),
    })
}

impl Queue {
    pub(crate) fn arn(&self, ctx: &Context) -> String {
        QUEUES.arn(ctx, &self.id)
    }

    fn attributes(&self) -> Value {
        let dead_letter = match self.max_receive {
            Some(max) => Value::map()
                .with("TargetType", "BUILT_IN")
                .with("MaxReceiveCount", max),
            None => Value::map().with("TargetType", "NONE"),
        };
        Value::map()
            .with("VisibilityTimeoutSeconds", self.visibility)
            .with("DeadLetterConfiguration", dead_letter)
    }

    /// The queue as DescribeQueue (and the calls that answer a description) show it.
    fn describe(&self, ctx: &Context, status: &str) -> Value {
        let start = Value::map()
            .with("Type", self.start_type.as_str())
            .with_opt("Timestamp", self.start_at.map(Value::Timestamp));
        let stream = Value::map()
            .with("StreamARN", stream_arn(ctx, &self.stream))
            .with("StartingPosition", start);
        Value::map()
            .with("QueueName", self.name.as_str())
            .with("QueueARN", self.arn(ctx))
            .with("QueueStatus", status)
            .with("QueueCreationTimestamp", Value::Timestamp(self.created))
            .with("StreamConfigurationList", Value::List(vec![stream]))
            .with("QueueAttributes", self.attributes())
    }

    /// The queue as ListQueues shows it.
    fn summary(&self, ctx: &Context) -> Value {
        let stream = Value::map()
            .with("StreamARN", stream_arn(ctx, &self.stream))
            .with(
                "StreamCreationTimestamp",
                Value::Timestamp(self.stream_created),
            );
        Value::map()
            .with("QueueName", self.name.as_str())
            .with("QueueARN", self.arn(ctx))
            .with("QueueStatus", "ACTIVE")
            .with("QueueCreationTimestamp", Value::Timestamp(self.created))
            .with("Streams", Value::List(vec![stream]))
    }
}

/// The dead-letter setting a `QueueAttributes` member asks for: `Some(None)` turns
/// dead-letter handling off, `None` leaves it as it is.
fn dead_letter_setting(attributes: &Value) -> AwsResult<Option<Option<i64>>> {
    let Some(config) = attributes.get("DeadLetterConfiguration") else {
        return Ok(None);
    };
    let max = config.int("MaxReceiveCount");
    match (config.str("TargetType").unwrap_or_default(), max) {
        ("BUILT_IN", Some(max)) => Ok(Some(Some(max))),
        ("BUILT_IN", None) => Err(AwsError::validation(
            "MaxReceiveCount is required when TargetType is BUILT_IN.",
        )),
        (_, None) => Ok(Some(None)),
        (_, Some(_)) => Err(AwsError::validation(
            "MaxReceiveCount can be specified only when TargetType is BUILT_IN.",
        )),
    }
}

/// Where a new queue starts: its type and, for AT_TIMESTAMP, its time.
fn starting_position(config: &Value) -> AwsResult<(String, Option<i64>)> {
    let start = config.get("StartingPosition");
    let kind = start.and_then(|s| s.str("Type")).unwrap_or("LATEST");
    let at = start
        .and_then(|s| s.get("Timestamp"))
        .and_then(timestamp_of);
    match (kind, at) {
        ("AT_TIMESTAMP", None) => Err(AwsError::validation(
            "Timestamp is required when StartingPosition Type is AT_TIMESTAMP.",
        )),
        ("AT_TIMESTAMP", at) | (_, at @ None) => Ok((kind.to_string(), at)),
        (_, Some(_)) => Err(AwsError::validation(format!(
            "Timestamp can be specified only when StartingPosition Type is AT_TIMESTAMP, not {kind}."
        ))),
    }
}

/// A receipt handle names its record (shard and counter) and one receipt of it.
fn receipt_handle(shard: i64, counter: i64) -> String {
    URL_SAFE_NO_PAD.encode(format!("{shard}.{counter}.{}", crate::ids::hex(32)))
}

/// The shard and counter a receipt handle names, if it is one Roto issued.
fn parse_receipt(handle: &str) -> Option<(i64, i64)> {
    let text = String::from_utf8(URL_SAFE_NO_PAD.decode(handle).ok()?).ok()?;
    let mut parts = text.split('.');
    let shard = parts.next()?.parse().ok()?;
    let counter = parts.next()?.parse().ok()?;
    let nonce = parts.next()?;
    (nonce.len() == 32 && parts.next().is_none()).then_some((shard, counter))
}

/// What a per-entry call does to each record its receipt handles name.
#[derive(Clone, Copy)]
enum Action {
    Acknowledge,
    Hide(i64),
    Restore,
}

impl Kinesis {
    /// The queue a request's `member` names, or ResourceNotFoundException.
    pub(crate) fn queue(&self, ctx: &Context, input: &Value, member: &str) -> AwsResult<Queue> {
        let arn = input.str(member).unwrap_or_default();
        self.find_attached(ctx, &QUEUES, arn, QUEUE_COLUMNS, queue_from_row)?
            .ok_or_else(|| QUEUES.missing(ctx, arn))
    }

    /// The stream a CreateQueue request reads, checked for a queue.
    fn queue_stream(&self, ctx: &Context, config: &Value) -> AwsResult<Stream> {
        let stream = self.on_demand_source(ctx, &QUEUES, config)?;
        let name = stream.name.as_str();
        let registered =
            self.consumer_count(ctx, name)? + self.attached_count(ctx, &QUEUES, name)?;
        if registered >= MAX_REGISTERED {
            return Err(AwsError::new(
                "LimitExceededException",
                format!(
                    "Registered consumer limit of {MAX_REGISTERED} for stream {name} under account {} has been reached.",
                    ctx.account
                ),
            ));
        }
        Ok(stream)
    }

    pub(crate) fn create_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("QueueName").unwrap_or_default();
        super::check_name("queueName", name)?;
        let configs = input
            .get("StreamConfigurationList")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let [config] = configs else {
            return Err(AwsError::validation(
                "StreamConfigurationList must contain exactly one entry.",
            ));
        };
        let attributes = input
            .get("QueueAttributes")
            .cloned()
            .unwrap_or_else(Value::map);
        let max_receive = dead_letter_setting(&attributes)?.unwrap_or(Some(DEFAULT_MAX_RECEIVE));
        let (start_type, start_at) = starting_position(config)?;
        let tags = tag_map(input.get("Tags"));
        if tags.len() > MAX_TAGS {
            return Err(QUEUES.too_many_tags(name));
        }
        let stream = self.queue_stream(ctx, config)?;
        self.check_name_free(ctx, &QUEUES, name)?;
        let queue = Queue {
            id: crate::ids::hex(32),
            name: name.to_string(),
            stream: stream.name.clone(),
            stream_created: stream.created,
            created: now_millis(),
            visibility: attributes
                .int("VisibilityTimeoutSeconds")
                .unwrap_or(DEFAULT_VISIBILITY),
            max_receive,
            start_type,
            start_at,
            tags,
        };
        self.store()?
            .transaction(|tx| insert_queue(tx, ctx, &queue))?;
        Ok(Value::map().with("QueueDescription", queue.describe(ctx, "CREATING")))
    }

    pub(crate) fn describe_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue(ctx, input, "QueueARN")?;
        Ok(Value::map().with("QueueDescription", queue.describe(ctx, "ACTIVE")))
    }

    pub(crate) fn list_queues(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let summaries = self
            .all_attached(ctx, &QUEUES, QUEUE_COLUMNS, queue_from_row)?
            .iter()
            .filter(|q| passes_filter(ctx, input, &q.stream, q.stream_created))
            .map(|q| q.summary(ctx))
            .collect();
        list_page(input, summaries, "QueueSummaries")
    }

    pub(crate) fn update_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut queue = self.queue(ctx, input, "QueueARN")?;
        let attributes = input
            .get("QueueAttributes")
            .cloned()
            .unwrap_or_else(Value::map);
        if let Some(max) = dead_letter_setting(&attributes)? {
            queue.max_receive = max;
        }
        if let Some(visibility) = attributes.int("VisibilityTimeoutSeconds") {
            queue.visibility = visibility;
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE kinesis_queues SET visibility = ?4, max_receive = ?5
                 WHERE account = ?1 AND region = ?2 AND id = ?3",
                params![
                    ctx.account,
                    ctx.region,
                    queue.id,
                    queue.visibility,
                    queue.max_receive
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("QueueDescription", queue.describe(ctx, "UPDATING")))
    }

    pub(crate) fn delete_queue(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue(ctx, input, "QueueARN")?;
        self.store()?.transaction(|tx| {
            for table in [
                "kinesis_queue_records",
                "kinesis_queue_cursors",
                "kinesis_queues",
            ] {
                let column = if table == "kinesis_queues" {
                    "id"
                } else {
                    "queue"
                };
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND {column} = ?3"
                    ),
                    [&ctx.account, &ctx.region, &queue.id],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    /// ReceiveQueueRecords (`dead` false) and ReceiveDeadLetterQueueRecords (`dead` true):
    /// waits up to the request's wait time for a visible record.
    pub(crate) async fn receive_queue_records(
        &self,
        ctx: &Context,
        input: &Value,
        dead: bool,
    ) -> AwsResult<Value> {
        let queue = self.queue(ctx, input, "QueueARN")?;
        let limit = input.int("Limit").unwrap_or(DEFAULT_LIMIT);
        let visibility = input
            .int("VisibilityTimeoutSeconds")
            .unwrap_or(queue.visibility);
        let wait = input.int("WaitTimeSeconds").unwrap_or(DEFAULT_WAIT);
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs(u64::try_from(wait).unwrap_or(0));
        loop {
            let appended = self.appended.notified();
            tokio::pin!(appended);
            appended.as_mut().enable();
            let (records, next_visible) = self
                .store()?
                .transaction(|tx| take(tx, ctx, &queue, limit, visibility, dead))?;
            if !records.is_empty() || tokio::time::Instant::now() >= deadline {
                return Ok(Value::map().with("QueueRecords", Value::List(records)));
            }
            let visible = async {
                match next_visible {
                    Some(at) => timestamp::sleep_until(at).await,
                    None => std::future::pending().await,
                }
            };
            tokio::select! {
                () = appended.as_mut(), if !dead => {}
                () = tokio::time::sleep_until(deadline) => {}
                () = visible => {}
                () = self.env.stopping() => {
                    return Ok(Value::map().with("QueueRecords", Value::List(vec![])));
                }
            }
        }
    }

    /// AcknowledgeQueueRecords, UpdateQueueRecordsVisibility and their dead-letter
    /// counterparts, and RestoreDeadLetterQueueRecords: `action` on each entry's record,
    /// with a result per entry.
    fn per_entry(
        &self,
        ctx: &Context,
        input: &Value,
        dead: bool,
        action: Action,
    ) -> AwsResult<Value> {
        let queue = self.queue(ctx, input, "QueueARN")?;
        let entries = input
            .get("Entries")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let mut successful = Vec::new();
        let mut failed = Vec::new();
        for entry in entries {
            let handle = entry.str("ReceiptHandle").unwrap_or_default();
            let action = match (action, entry.int("VisibilityTimeoutSeconds")) {
                (Action::Hide(_), Some(secs)) => Action::Hide(secs),
                (other, _) => other,
            };
            let done = self
                .store()?
                .transaction(|tx| apply(tx, ctx, &queue, handle, dead, action))?;
            match done {
                Ok(()) => successful.push(Value::map().with("ReceiptHandle", handle)),
                Err(e) => failed.push(
                    Value::map()
                        .with("ReceiptHandle", handle)
                        .with("ErrorCode", e.code.as_ref())
                        .with("ErrorMessage", e.message),
                ),
            }
        }
        Ok(Value::map()
            .with("Successful", Value::List(successful))
            .with("Failed", Value::List(failed)))
    }

    pub(crate) fn acknowledge_queue_records(
        &self,
        ctx: &Context,
        input: &Value,
        dead: bool,
    ) -> AwsResult<Value> {
        self.per_entry(ctx, input, dead, Action::Acknowledge)
    }

    pub(crate) fn update_queue_records_visibility(
        &self,
        ctx: &Context,
        input: &Value,
        dead: bool,
    ) -> AwsResult<Value> {
        self.per_entry(ctx, input, dead, Action::Hide(0))
    }

    pub(crate) fn restore_dead_letter_queue_records(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.per_entry(ctx, input, true, Action::Restore)
    }
}

/// Stores a new queue; a LATEST queue's cursors start at each open shard's tip.
fn insert_queue(tx: &Connection, ctx: &Context, queue: &Queue) -> AwsResult<()> {
    tx.execute_cached(
        &format!(
            "INSERT INTO kinesis_queues (account, region, {QUEUE_COLUMNS})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12)"
        ),
        params![
            ctx.account,
            ctx.region,
            queue.id,
            queue.name,
            queue.stream,
            queue.stream_created,
            queue.created,
            queue.visibility,
            queue.max_receive,
            queue.start_type,
            queue.start_at,
            tags::store_text(&queue.tags)
        ],
    )?;
    if queue.start_type == "LATEST" {
        tx.execute_cached(
            "INSERT INTO kinesis_queue_cursors (account, region, queue, shard, next)
             SELECT account, region, ?4, shard, next_seq FROM kinesis_shards
             WHERE account = ?1 AND region = ?2 AND stream = ?3",
            params![ctx.account, ctx.region, queue.stream, queue.id],
        )?;
    }
    Ok(())
}

/// Moves each shard's cursor on by up to [`PULL_PER_SHARD`] records, giving each record a
/// visible row in the queue. A shard without a cursor starts at its first record (at or
/// after the queue's timestamp, for AT_TIMESTAMP).
fn pull(tx: &Connection, ctx: &Context, queue: &Queue) -> AwsResult<()> {
    let shards: Vec<(i64, Option<i64>)> = tx
        .prepare_cached(
            "SELECT s.shard, c.next FROM kinesis_shards s LEFT JOIN kinesis_queue_cursors c
             ON c.account = s.account AND c.region = s.region AND c.queue = ?4 AND c.shard = s.shard
             WHERE s.account = ?1 AND s.region = ?2 AND s.stream = ?3",
        )?
        .query_map(
            params![ctx.account, ctx.region, queue.stream, queue.id],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    let since = queue.start_at.unwrap_or(i64::MIN);
    for (shard, cursor) in shards {
        let from = cursor.unwrap_or(0);
        let taken = tx
            .prepare_cached(
                "INSERT INTO kinesis_queue_records
                 (account, region, queue, shard, seq, visible_at, receives, dead)
                 SELECT account, region, ?4, shard, seq, 0, 0, 0 FROM kinesis_records
                 WHERE account = ?1 AND region = ?2 AND stream = ?3 AND shard = ?5
                 AND seq >= ?6 AND arrival >= ?7 ORDER BY seq LIMIT ?8
                 RETURNING seq",
            )?
            .query_map(
                params![
                    ctx.account,
                    ctx.region,
                    queue.stream,
                    queue.id,
                    shard,
                    from,
                    since,
                    PULL_PER_SHARD
                ],
                |r| r.get::<_, i64>(0),
            )?
            .collect::<rusqlite::Result<Vec<_>>>()?;
        let next = taken.into_iter().max().map_or(from, |s| s + 1);
        tx.execute_cached(
            "INSERT INTO kinesis_queue_cursors (account, region, queue, shard, next)
             VALUES (?1, ?2, ?3, ?4, ?5)
             ON CONFLICT (account, region, queue, shard) DO UPDATE SET next = excluded.next",
            params![ctx.account, ctx.region, queue.id, shard, next],
        )?;
    }
    Ok(())
}

/// A visible record of a queue, with what the stream keeps of it.
struct Visible {
    shard: i64,
    counter: i64,
    receives: i64,
    first_receive: Option<i64>,
    arrival: i64,
    partition_key: String,
    data: Vec<u8>,
}

/// Forgets the records the stream's retention removed, and turns records received
/// `MaxReceiveCount` times whose visibility timeout ended into dead-letter records.
fn tidy(tx: &Connection, ctx: &Context, queue: &Queue, now: i64) -> AwsResult<()> {
    tx.execute_cached(
        "DELETE FROM kinesis_queue_records AS q WHERE account = ?1 AND region = ?2 AND queue = ?3
         AND NOT EXISTS (SELECT 1 FROM kinesis_records r WHERE r.account = q.account
         AND r.region = q.region AND r.stream = ?4 AND r.shard = q.shard AND r.seq = q.seq)",
        params![ctx.account, ctx.region, queue.id, queue.stream],
    )?;
    if let Some(max) = queue.max_receive {
        tx.execute_cached(
            "UPDATE kinesis_queue_records SET dead = 1, visible_at = 0, receipt = NULL
             WHERE account = ?1 AND region = ?2 AND queue = ?3 AND dead = 0
             AND visible_at <= ?4 AND receives >= ?5",
            params![ctx.account, ctx.region, queue.id, now, max],
        )?;
    }
    Ok(())
}

/// Up to `limit` records visible at `now` (dead-letter ones when `dead`), oldest first.
fn visible(
    tx: &Connection,
    ctx: &Context,
    queue: &Queue,
    dead: bool,
    now: i64,
    limit: i64,
) -> AwsResult<Vec<Visible>> {
    let rows = tx
        .prepare_cached(
            "SELECT q.shard, q.seq, q.receives, q.first_receive, r.arrival, r.partition_key, r.data
             FROM kinesis_queue_records q JOIN kinesis_records r ON r.account = q.account
             AND r.region = q.region AND r.stream = ?4 AND r.shard = q.shard AND r.seq = q.seq
             WHERE q.account = ?1 AND q.region = ?2 AND q.queue = ?3 AND q.dead = ?5
             AND q.visible_at <= ?6 ORDER BY r.arrival, q.shard, q.seq LIMIT ?7",
        )?
        .query_map(
            params![
                ctx.account,
                ctx.region,
                queue.id,
                queue.stream,
                dead,
                now,
                limit
            ],
            |r| {
                Ok(Visible {
                    shard: r.get(0)?,
                    counter: r.get(1)?,
                    receives: r.get(2)?,
                    first_receive: r.get(3)?,
                    arrival: r.get(4)?,
                    partition_key: r.get(5)?,
                    data: r.get(6)?,
                })
            },
        )?
        .collect::<rusqlite::Result<_>>();
    rows.map_err(AwsError::from)
}

/// Takes up to `limit` visible records (dead-letter ones when `dead`), hiding each for
/// `visibility` seconds under a new receipt handle; also says when the next hidden record
/// becomes visible.
fn take(
    tx: &Connection,
    ctx: &Context,
    queue: &Queue,
    limit: i64,
    visibility: i64,
    dead: bool,
) -> AwsResult<(Vec<Value>, Option<i64>)> {
    let now = now_millis();
    if !dead {
        pull(tx, ctx, queue)?;
    }
    tidy(tx, ctx, queue, now)?;
    let hidden_until = now + visibility * 1000;
    let mut records = Vec::new();
    for record in visible(tx, ctx, queue, dead, now, limit)? {
        let handle = receipt_handle(record.shard, record.counter);
        let first = record.first_receive.unwrap_or(now);
        let receives = record.receives + 1;
        tx.execute_cached(
            "UPDATE kinesis_queue_records SET receives = ?6, first_receive = ?7,
             visible_at = ?8, receipt = ?9
             WHERE account = ?1 AND region = ?2 AND queue = ?3 AND shard = ?4 AND seq = ?5",
            params![
                ctx.account,
                ctx.region,
                queue.id,
                record.shard,
                record.counter,
                receives,
                first,
                hidden_until,
                handle
            ],
        )?;
        let id = super::seq::sequence_number(queue.stream_created, record.shard, record.counter);
        records.push(
            Value::map()
                .with("ReceiptHandle", handle)
                .with("RecordId", id)
                .with("PartitionKey", record.partition_key)
                .with("Data", Value::Blob(record.data))
                .with(
                    "ApproximateArrivalTimestamp",
                    Value::Timestamp(record.arrival),
                )
                .with("FirstReceiveTimestamp", Value::Timestamp(first))
                .with("ReceiveCount", receives),
        );
    }
    let next_visible = tx
        .prepare_cached(
            "SELECT MIN(visible_at) FROM kinesis_queue_records
             WHERE account = ?1 AND region = ?2 AND queue = ?3 AND dead = ?4 AND visible_at > ?5",
        )?
        .query_row(params![ctx.account, ctx.region, queue.id, dead, now], |r| {
            r.get(0)
        })?;
    Ok((records, next_visible))
}

/// Applies `action` to the record a receipt handle names. The outer error is the store's;
/// the inner one is the entry's failure.
fn apply(
    tx: &Connection,
    ctx: &Context,
    queue: &Queue,
    handle: &str,
    dead: bool,
    action: Action,
) -> AwsResult<Result<(), AwsError>> {
    let Some((shard, counter)) = parse_receipt(handle) else {
        return Ok(Err(invalid_argument(format!(
            "Invalid ReceiptHandle {handle}."
        ))));
    };
    let visible_at: Option<i64> = tx
        .prepare_cached(
            "SELECT visible_at FROM kinesis_queue_records WHERE account = ?1 AND region = ?2
             AND queue = ?3 AND shard = ?4 AND seq = ?5 AND dead = ?6 AND receipt = ?7",
        )?
        .query_row(
            params![
                ctx.account,
                ctx.region,
                queue.id,
                shard,
                counter,
                dead,
                handle
            ],
            |r| r.get(0),
        )
        .optional()?;
    let now = now_millis();
    let in_flight = visible_at.is_some_and(|v| v > now);
    let sql = match action {
        Action::Acknowledge if visible_at.is_some() => {
            "DELETE FROM kinesis_queue_records WHERE account = ?1 AND region = ?2
             AND queue = ?3 AND shard = ?4 AND seq = ?5"
        }
        Action::Hide(_) if in_flight => {
            "UPDATE kinesis_queue_records SET visible_at = ?6 WHERE account = ?1
             AND region = ?2 AND queue = ?3 AND shard = ?4 AND seq = ?5"
        }
        Action::Restore if visible_at.is_some() => {
            "UPDATE kinesis_queue_records SET dead = 0, receives = 0, first_receive = NULL,
             visible_at = 0, receipt = NULL WHERE account = ?1 AND region = ?2
             AND queue = ?3 AND shard = ?4 AND seq = ?5"
        }
        _ => {
            return Ok(Err(AwsError::new(
                "ResourceNotFoundException",
                format!(
                    "No {}record in flight in queue {} has the receipt handle {handle}.",
                    if dead { "dead-letter " } else { "" },
                    queue.name
                ),
            )))
        }
    };
    let until = match action {
        Action::Hide(secs) => now + secs * 1000,
        _ => 0,
    };
    let mut statement = tx.prepare_cached(sql)?;
    let bound = [
        &ctx.account as &dyn rusqlite::ToSql,
        &ctx.region,
        &queue.id,
        &shard,
        &counter,
        &until,
    ];
    let count = statement.parameter_count();
    statement.execute(&bound[..count])?;
    Ok(Ok(()))
}
