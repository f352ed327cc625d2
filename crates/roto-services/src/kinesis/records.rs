//! Records: PutRecord(s) onto the shard whose hash key range holds the record's hash key,
//! GetShardIterator of every type, GetRecords through iterators, and ListShards.
//!
//! Every read is an index seek: records are keyed by shard and counter, and the retention
//! cut-off is found through the arrival index, so a read deep in a shard costs what one at
//! its tip does. Records past the retention period are deleted as the shard is written.

use std::time::Instant;

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, Connection, OptionalExtension};

use super::limits::{self, Limits};
use super::metrics::StreamMetrics;
use super::seq::{self, stored_hash, Iterator, ITERATOR_LIFETIME_MS};
use super::streams::{Shard, SHARD_COLUMNS};
use super::{invalid_argument, not_found, Kinesis, Stream};

/// The most bytes one PutRecords call may carry (data and partition keys).
const MAX_REQUEST_BYTES: usize = 10 * 1024 * 1024;
/// The most records GetRecords returns when no Limit is given.
const DEFAULT_GET_LIMIT: i64 = 10_000;
/// ListShards' default page.
const DEFAULT_LIST_SHARDS: usize = 1000;

/// A record to append.
struct Entry<'a> {
    data: &'a [u8],
    partition_key: &'a str,
    explicit_hash: Option<&'a str>,
}

impl<'a> Entry<'a> {
    fn of(input: &'a Value) -> Entry<'a> {
        Entry {
            data: input
                .get("Data")
                .and_then(Value::as_blob)
                .unwrap_or_default(),
            partition_key: input.str("PartitionKey").unwrap_or_default(),
            explicit_hash: input.str("ExplicitHashKey"),
        }
    }

    /// The record's hash key: its ExplicitHashKey, or the MD5 of its partition key, once
    /// its data is found within the stream's largest record. `at` is the member path AWS
    /// names a too-large record by.
    fn hash(&self, at: &str, stream: &Stream) -> AwsResult<u128> {
        let max = usize::try_from(stream.max_record_kib * 1024).unwrap_or(usize::MAX);
        if self.data.len() > max {
            return Err(AwsError::validation(format!(
                "1 validation error detected: Value at '{at}' failed to satisfy constraint: Member must have length less than or equal to {max}"
            )));
        }
        match self.explicit_hash {
            None => Ok(seq::partition_hash(self.partition_key)),
            Some(text) => text
                .parse::<u128>()
                .ok()
                .filter(|_| text.bytes().all(|b| b.is_ascii_digit()))
                .ok_or_else(|| {
                    invalid_argument(format!(
                        "Invalid ExplicitHashKey. ExplicitHashKey must be in the range: [0, 2^128-1]. Specified value was {text}"
                    ))
                }),
        }
    }
}

/// The retention cut-off of a stream: records that arrived before it are gone.
fn cutoff(stream: &Stream) -> i64 {
    now_millis() - stream.retention_hours * 3_600_000
}

/// Open shards of a stream, inside a write transaction.
fn open_shards(tx: &Connection, ctx: &Context, stream: &str) -> AwsResult<Vec<Shard>> {
    let sql = format!(
        "SELECT {SHARD_COLUMNS} FROM kinesis_shards
         WHERE account = ?1 AND region = ?2 AND stream = ?3 AND closed_seq IS NULL ORDER BY shard"
    );
    let rows = tx
        .prepare_cached(&sql)?
        .query_map(
            [&ctx.account, &ctx.region, stream],
            super::streams::shard_from_row,
        )?
        .collect::<rusqlite::Result<Vec<_>>>();
    rows.map_err(AwsError::from)
}

/// Where a record went: its shard and counter, or the shard whose limit refused it.
type Placed = Result<(i64, i64), i64>;

/// Appends records to a stream in one transaction; returns where each one went. With
/// `limits`, a record its shard cannot take now is refused and the others go on.
fn append(
    tx: &Connection,
    ctx: &Context,
    stream: &Stream,
    entries: &[(Entry<'_>, u128)],
    limits: Option<&Limits>,
) -> AwsResult<Vec<Placed>> {
    let mut shards = open_shards(tx, ctx, &stream.name)?;
    let now = now_millis();
    let mut placed = Vec::with_capacity(entries.len());
    for (entry, hash) in entries {
        let key = stored_hash(*hash);
        let Some(shard) = shards
            .iter_mut()
            .find(|s| s.start_hash <= key && key <= s.end_hash)
        else {
            return Err(AwsError::internal("no open shard holds the hash key"));
        };
        let bytes = entry.data.len() + entry.partition_key.len();
        if limits.is_some_and(|l| !l.admit_put((ctx, &stream.name, shard.index), bytes, now)) {
            placed.push(Err(shard.index));
            continue;
        }
        tx.prepare_cached(
            "INSERT INTO kinesis_records
             (account, region, stream, shard, seq, arrival, partition_key, data)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        )?
        .execute(params![
            ctx.account,
            ctx.region,
            stream.name,
            shard.index,
            shard.next_seq,
            now,
            entry.partition_key,
            entry.data
        ])?;
        placed.push(Ok((shard.index, shard.next_seq)));
        shard.next_seq += 1;
    }
    let expired = cutoff(stream);
    for shard in &shards {
        tx.prepare_cached(
            "UPDATE kinesis_shards SET next_seq = ?5
             WHERE account = ?1 AND region = ?2 AND stream = ?3 AND shard = ?4",
        )?
        .execute(params![
            ctx.account,
            ctx.region,
            stream.name,
            shard.index,
            shard.next_seq
        ])?;
        tx.prepare_cached(
            "DELETE FROM kinesis_records WHERE account = ?1 AND region = ?2 AND stream = ?3
             AND shard = ?4 AND arrival < ?5",
        )?
        .execute(params![
            ctx.account,
            ctx.region,
            stream.name,
            shard.index,
            expired
        ])?;
    }
    Ok(placed)
}

/// The bytes a record read counts against its shard: data and partition key.
fn record_bytes(record: &Value) -> usize {
    record
        .get("Data")
        .and_then(Value::as_blob)
        .map_or(0, <[u8]>::len)
        + record.str("PartitionKey").map_or(0, str::len)
}

fn shard_not_found(ctx: &Context, stream: &str, shard: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!(
            "Shard {shard} in stream {stream} under account {} does not exist",
            ctx.account
        ),
    )
}

fn invalid_iterator() -> AwsError {
    invalid_argument("Invalid ShardIterator.")
}

/// A stored record: counter, arrival, partition key, data.
type Row = (i64, i64, String, Vec<u8>);

/// Where a read starts: GetShardIterator's type, sequence number and timestamp, or
/// SubscribeToShard's StartingPosition.
pub(crate) struct Start<'a> {
    pub kind: &'a str,
    pub sequence: Option<&'a str>,
    pub at: Option<i64>,
    /// The operation AWS names in its messages.
    pub operation: &'a str,
}

/// What one read of a shard found.
pub(crate) struct Batch {
    /// The records, as AWS shows them.
    pub records: Vec<Value>,
    /// The counter of the next record to read.
    pub next_position: i64,
    /// How far behind the shard's tip the read ends, in milliseconds.
    pub behind: i64,
    /// Whether the shard is closed and read to its end.
    pub at_closed_end: bool,
}

impl Kinesis {
    /// Where a call on `stream` publishes its metrics.
    fn metrics<'a>(&'a self, ctx: &'a Context, stream: &'a Stream) -> StreamMetrics<'a> {
        StreamMetrics {
            env: &self.env,
            ctx,
            stream: &stream.name,
        }
    }

    pub(crate) fn put_record(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let started = Instant::now();
        let stream = self.stream(ctx, input, "StreamARN")?;
        let entry = Entry::of(input);
        let hash = entry.hash("data", &stream)?;
        let bytes = entry.data.len() + entry.partition_key.len();
        let placed = self
            .store()?
            .transaction(|tx| append(tx, ctx, &stream, &[(entry, hash)], self.limits.as_deref()))?;
        self.appended.notify_waiters();
        let stored = !matches!(placed.first(), Some(Err(_)));
        self.metrics(ctx, &stream)
            .put_record(bytes, stored, started);
        let (shard, counter) = match placed.first().copied() {
            Some(Err(shard)) => return Err(limits::exceeded(ctx, &stream.name, shard)),
            Some(Ok(place)) => place,
            None => (0, 0),
        };
        Ok(Value::map()
            .with("ShardId", seq::shard_id(shard))
            .with(
                "SequenceNumber",
                seq::sequence_number(stream.created, shard, counter),
            )
            .with_opt("EncryptionType", encryption(&stream)))
    }

    pub(crate) fn put_records(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let started = Instant::now();
        let stream = self.stream(ctx, input, "StreamARN")?;
        let records = input
            .get("Records")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let size: usize = records
            .iter()
            .map(|r| Entry::of(r).data.len() + Entry::of(r).partition_key.len())
            .sum();
        if size > MAX_REQUEST_BYTES {
            return Err(invalid_argument("Records size exceeds 10 MB limit"));
        }
        let entries = records
            .iter()
            .enumerate()
            .map(|(i, r)| {
                let entry = Entry::of(r);
                entry
                    .hash(&format!("records.{}.member.data", i + 1), &stream)
                    .map(|h| (entry, h))
            })
            .collect::<AwsResult<Vec<_>>>()?;
        let placed = self
            .store()?
            .transaction(|tx| append(tx, ctx, &stream, &entries, self.limits.as_deref()))?;
        self.appended.notify_waiters();
        let failed = placed.iter().filter(|p| p.is_err()).count();
        let stored_bytes = records
            .iter()
            .zip(&placed)
            .filter(|(_, p)| p.is_ok())
            .map(|(r, _)| Entry::of(r).data.len() + Entry::of(r).partition_key.len())
            .sum();
        self.metrics(ctx, &stream)
            .put_records(placed.len(), failed, stored_bytes, started);
        let results = placed
            .into_iter()
            .map(|place| match place {
                Ok((shard, counter)) => Value::map().with("ShardId", seq::shard_id(shard)).with(
                    "SequenceNumber",
                    seq::sequence_number(stream.created, shard, counter),
                ),
                Err(shard) => Value::map()
                    .with("ErrorCode", "ProvisionedThroughputExceededException")
                    .with(
                        "ErrorMessage",
                        limits::exceeded_message(ctx, &stream.name, shard),
                    ),
            })
            .collect();
        Ok(Value::map()
            .with("FailedRecordCount", failed as i64)
            .with("Records", Value::List(results))
            .with_opt("EncryptionType", encryption(&stream)))
    }

    /// The shard a request's `ShardId` names.
    pub(crate) fn shard(&self, ctx: &Context, stream: &Stream, id: &str) -> AwsResult<Shard> {
        let index = seq::shard_index(id);
        self.shards(ctx, &stream.name)?
            .into_iter()
            .find(|s| Some(s.index) == index)
            .ok_or_else(|| shard_not_found(ctx, &stream.name, id))
    }

    pub(crate) fn get_shard_iterator(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let shard_id = input.str("ShardId").unwrap_or_default();
        let shard = self.shard(ctx, &stream, shard_id)?;
        let start = Start {
            kind: input.str("ShardIteratorType").unwrap_or_default(),
            sequence: input.str("StartingSequenceNumber"),
            at: input.get("Timestamp").and_then(timestamp_of),
            operation: "GetShardIterator",
        };
        let position = self.position(ctx, &stream, &shard, &start)?;
        let iterator = Iterator {
            stream: stream.name.clone(),
            stream_created: stream.created,
            shard: shard.index,
            position,
            issued: now_millis(),
        };
        Ok(Value::map().with("ShardIterator", iterator.encode()))
    }

    /// The counter a starting position names in a shard.
    pub(crate) fn position(
        &self,
        ctx: &Context,
        stream: &Stream,
        shard: &Shard,
        start: &Start<'_>,
    ) -> AwsResult<i64> {
        match start.kind {
            "TRIM_HORIZON" => Ok(0),
            "LATEST" => Ok(shard.next_seq),
            "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER" => {
                let counter = self.starting_counter(ctx, stream, shard, start)?;
                Ok(counter + i64::from(start.kind == "AFTER_SEQUENCE_NUMBER"))
            }
            _ => {
                let at = start.at.ok_or_else(|| {
                    invalid_argument(
                        "Must specify timestampInMillis parameter for iterator of type AT_TIMESTAMP. Current request has no timestamp parameter.",
                    )
                })?;
                self.first_at(ctx, stream, shard, at)
            }
        }
    }

    /// The counter a starting sequence number names in this shard.
    fn starting_counter(
        &self,
        ctx: &Context,
        stream: &Stream,
        shard: &Shard,
        start: &Start<'_>,
    ) -> AwsResult<i64> {
        let text = start.sequence.ok_or_else(|| {
            invalid_argument(format!(
                "StartingSequenceNumber must be specified for ShardIteratorType {}",
                start.kind
            ))
        })?;
        match seq::decode_sequence_number(stream.created, text) {
            Some((index, counter)) if index == shard.index && counter <= shard.next_seq => {
                Ok(counter)
            }
            _ => Err(invalid_argument(format!(
                "StartingSequenceNumber {text} used in {} on shard {} in stream {} under account {} is invalid.",
                start.operation,
                seq::shard_id(shard.index),
                stream.name,
                ctx.account
            ))),
        }
    }

    /// The counter of the first record that arrived at or after `at`, or the shard's tip.
    fn first_at(&self, ctx: &Context, stream: &Stream, shard: &Shard, at: i64) -> AwsResult<i64> {
        let found: Option<i64> = self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT seq FROM kinesis_records WHERE account = ?1 AND region = ?2
                 AND stream = ?3 AND shard = ?4 AND arrival >= ?5 ORDER BY arrival, seq LIMIT 1",
            )?
            .query_row(
                params![ctx.account, ctx.region, stream.name, shard.index, at],
                |r| r.get(0),
            )
            .optional()
            .map_err(AwsError::from)
        })?;
        Ok(found.unwrap_or(shard.next_seq))
    }

    pub(crate) fn get_records(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let started = Instant::now();
        let token = input.str("ShardIterator").unwrap_or_default();
        let iterator = Iterator::decode(token).ok_or_else(invalid_iterator)?;
        let now = now_millis();
        if now - iterator.issued > ITERATOR_LIFETIME_MS {
            return Err(expired(iterator.issued, now));
        }
        let stream = self
            .find(ctx, &iterator.stream)?
            .filter(|s| s.created == iterator.stream_created)
            .ok_or_else(|| not_found(ctx, &iterator.stream))?;
        let shard = self.shard(ctx, &stream, &seq::shard_id(iterator.shard))?;
        let limit = input.int("Limit").unwrap_or(DEFAULT_GET_LIMIT);
        if let Some(limits) = &self.limits {
            if !limits.admit_read((ctx, &stream.name, shard.index), now) {
                self.metrics(ctx, &stream).read_throttled();
                return Err(limits::exceeded(ctx, &stream.name, shard.index));
            }
        }
        let batch = self.read_batch(ctx, &stream, &shard, iterator.position, limit)?;
        let bytes = batch.records.iter().map(record_bytes).sum();
        if let Some(limits) = &self.limits {
            limits.charge_read((ctx, &stream.name, shard.index), bytes, now);
        }
        self.metrics(ctx, &stream)
            .get_records(&batch.records, bytes, started, now);
        let next = (!batch.at_closed_end).then(|| {
            Iterator {
                position: batch.next_position,
                issued: now,
                ..iterator
            }
            .encode()
        });
        let mut output = Value::map()
            .with("Records", Value::List(batch.records))
            .with_opt("NextShardIterator", next)
            .with("MillisBehindLatest", batch.behind);
        if batch.at_closed_end {
            output.insert("ChildShards", self.child_shards(ctx, &stream, shard.index)?);
        }
        Ok(output)
    }

    /// Up to `limit` records of a shard from counter `position` (or the retention
    /// horizon, if later), as GetRecords and SubscribeToShard show them.
    pub(crate) fn read_batch(
        &self,
        ctx: &Context,
        stream: &Stream,
        shard: &Shard,
        position: i64,
        limit: i64,
    ) -> AwsResult<Batch> {
        let now = now_millis();
        let start = position.max(self.first_at(ctx, stream, shard, cutoff(stream))?);
        let rows = self.read_records(ctx, stream, shard, start, limit)?;
        let next_position = rows.last().map_or(start, |r| r.0 + 1);
        let behind = match next_position < shard.next_seq {
            true => {
                now - self
                    .arrival_of(ctx, stream, shard, next_position)?
                    .unwrap_or(now)
            }
            false => 0,
        };
        let encrypted = encryption(stream);
        let records = rows
            .into_iter()
            .map(|(counter, arrival, key, data)| {
                Value::map()
                    .with(
                        "SequenceNumber",
                        seq::sequence_number(stream.created, shard.index, counter),
                    )
                    .with("ApproximateArrivalTimestamp", Value::Timestamp(arrival))
                    .with("Data", Value::Blob(data))
                    .with("PartitionKey", key)
                    .with_opt("EncryptionType", encrypted)
            })
            .collect();
        Ok(Batch {
            records,
            next_position,
            behind,
            at_closed_end: shard.closed_seq.is_some_and(|c| next_position >= c),
        })
    }

    /// Up to `limit` records of a shard from counter `start`.
    fn read_records(
        &self,
        ctx: &Context,
        stream: &Stream,
        shard: &Shard,
        start: i64,
        limit: i64,
    ) -> AwsResult<Vec<Row>> {
        self.store()?.read(|c| {
            let rows = c
                .prepare_cached(
                    "SELECT seq, arrival, partition_key, data FROM kinesis_records
                     WHERE account = ?1 AND region = ?2 AND stream = ?3 AND shard = ?4
                     AND seq >= ?5 ORDER BY seq LIMIT ?6",
                )?
                .query_map(
                    params![
                        ctx.account,
                        ctx.region,
                        stream.name,
                        shard.index,
                        start,
                        limit
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )?
                .collect::<rusqlite::Result<Vec<Row>>>();
            rows.map_err(AwsError::from)
        })
    }

    /// When the record at `counter` (or the next one after it) arrived.
    fn arrival_of(
        &self,
        ctx: &Context,
        stream: &Stream,
        shard: &Shard,
        counter: i64,
    ) -> AwsResult<Option<i64>> {
        self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT arrival FROM kinesis_records WHERE account = ?1 AND region = ?2
                 AND stream = ?3 AND shard = ?4 AND seq >= ?5 ORDER BY seq LIMIT 1",
            )?
            .query_row(
                params![ctx.account, ctx.region, stream.name, shard.index, counter],
                |r| r.get(0),
            )
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The shards whose parent is shard `index`, as GetRecords and ListShards show them.
    pub(crate) fn child_shards(
        &self,
        ctx: &Context,
        stream: &Stream,
        index: i64,
    ) -> AwsResult<Value> {
        let children = self
            .shards(ctx, &stream.name)?
            .into_iter()
            .filter(|s| s.parent == Some(index) || s.adjacent_parent == Some(index))
            .map(|s| {
                let parents = [Some(index), s.parent, s.adjacent_parent];
                let mut ids: Vec<i64> = parents.into_iter().flatten().collect();
                ids.sort_unstable();
                ids.dedup();
                Value::map()
                    .with("ShardId", seq::shard_id(s.index))
                    .with(
                        "ParentShards",
                        Value::List(ids.into_iter().map(|i| seq::shard_id(i).into()).collect()),
                    )
                    .with(
                        "HashKeyRange",
                        Value::map()
                            .with("StartingHashKey", seq::shown_hash(&s.start_hash))
                            .with("EndingHashKey", seq::shown_hash(&s.end_hash)),
                    )
            })
            .collect();
        Ok(Value::List(children))
    }

    pub(crate) fn list_shards(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, after) = match input.str("NextToken") {
            Some(token) => {
                if input.get("StreamName").is_some() {
                    return Err(invalid_argument(
                        "NextToken and StreamName cannot be provided together.",
                    ));
                }
                decode_shard_token(token)?
            }
            None => {
                let name = super::stream_name(ctx, input, "StreamARN")?.to_string();
                let after = input
                    .str("ExclusiveStartShardId")
                    .and_then(seq::shard_index);
                (name, after)
            }
        };
        let stream = self
            .find(ctx, &name)?
            .ok_or_else(|| not_found(ctx, &name))?;
        let filter = ShardFilter::of(input.get("ShardFilter"), &stream);
        let limit = input
            .int("MaxResults")
            .map_or(DEFAULT_LIST_SHARDS, |n| n.max(1) as usize);
        let shards: Vec<Shard> = self
            .shards(ctx, &name)?
            .into_iter()
            .filter(|s| after.is_none_or(|a| s.index > a) && filter.keeps(s))
            .collect();
        let more = shards.len() > limit;
        let page: Vec<&Shard> = shards.iter().take(limit).collect();
        let next = more
            .then(|| {
                page.last()
                    .map(|s| URL_SAFE_NO_PAD.encode(format!("{}|{name}", s.index)))
            })
            .flatten();
        Ok(Value::map()
            .with(
                "Shards",
                Value::List(page.iter().map(|s| s.describe(&stream)).collect()),
            )
            .with_opt("NextToken", next))
    }
}

/// The stream and last shard a ListShards token carries.
fn decode_shard_token(token: &str) -> AwsResult<(String, Option<i64>)> {
    let text = URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok());
    let parsed = text.as_deref().and_then(|t| {
        let (index, name) = t.split_once('|')?;
        Some((name.to_string(), Some(index.parse().ok()?)))
    });
    parsed.ok_or_else(|| invalid_argument(format!("Invalid ListShards NextToken: {token}")))
}

/// Which shards a ListShards `ShardFilter` keeps.
enum ShardFilter {
    All,
    After(Option<i64>),
    OpenAt(i64),
    OpenSince(i64),
}

impl ShardFilter {
    fn of(filter: Option<&Value>, stream: &Stream) -> ShardFilter {
        let Some(filter) = filter else {
            return ShardFilter::All;
        };
        let at = filter.get("Timestamp").and_then(timestamp_of);
        let horizon = cutoff(stream);
        match filter.str("Type").unwrap_or_default() {
            "AFTER_SHARD_ID" => {
                ShardFilter::After(filter.str("ShardId").and_then(seq::shard_index))
            }
            "AT_TRIM_HORIZON" => ShardFilter::OpenAt(horizon),
            "FROM_TRIM_HORIZON" => ShardFilter::OpenSince(horizon),
            "AT_LATEST" => ShardFilter::OpenAt(now_millis()),
            "AT_TIMESTAMP" => ShardFilter::OpenAt(at.unwrap_or(horizon)),
            "FROM_TIMESTAMP" => ShardFilter::OpenSince(at.unwrap_or(horizon)),
            _ => ShardFilter::All,
        }
    }

    fn keeps(&self, shard: &Shard) -> bool {
        let open_after = |t: i64| shard.closed_at.is_none_or(|c| c > t);
        match self {
            ShardFilter::All => true,
            ShardFilter::After(after) => after.is_none_or(|a| shard.index > a),
            ShardFilter::OpenAt(t) => {
                open_after(*t) && (shard.created <= *t || shard.parent.is_none())
            }
            ShardFilter::OpenSince(t) => open_after(*t),
        }
    }
}

/// `KMS` for what an encrypted stream answers, else nothing.
fn encryption(stream: &Stream) -> Option<&'static str> {
    stream.key_id.as_ref().map(|_| "KMS")
}

/// A Timestamp member's time in milliseconds.
pub(crate) fn timestamp_of(value: &Value) -> Option<i64> {
    match value {
        Value::Timestamp(ms) => Some(*ms),
        _ => None,
    }
}

fn expired(issued: i64, now: i64) -> AwsError {
    AwsError::new(
        "ExpiredIteratorException",
        format!(
            "Iterator expired. The iterator was created at time {} while right now it is {} which is further in the future than the tolerated delay of {ITERATOR_LIFETIME_MS} milliseconds.",
            timestamp::format(issued, TimestampFormat::Iso8601),
            timestamp::format(now, TimestampFormat::Iso8601)
        ),
    )
}
