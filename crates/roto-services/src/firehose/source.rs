//! Kinesis data streams as sources, read through the dispatcher as any consumer reads them:
//! ListShards, GetShardIterator, GetRecords. Never Kinesis' tables.
//!
//! A stream starts reading where AWS starts, at the moment it was created (`AT_TIMESTAMP`
//! of its `DeliveryStartTimestamp`, so records put before are not delivered), then after
//! the last sequence number it took from each shard, kept in `firehose_checkpoints` in the
//! same transaction as the records it buffered. Sources are read once a second of the server
//! clock; the reads go through `Dispatcher::invoke`, so they do not fill the trace.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Env, Request, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::{json, Value as Json};

use super::flusher::SOURCE_POLL;
use super::records::{record_id, Incoming};
use super::{invalid_argument, Inner};

/// The most records one GetRecords takes from a shard.
const READ_LIMIT: i64 = 10_000;

/// The (account, region) a Kinesis stream ARN names.
fn arn_location(arn: &str) -> Option<(&str, &str)> {
    let mut parts = arn.split(':');
    let region = parts.nth(3)?;
    let account = parts.next()?;
    Some((account, region))
}

fn context_for(arn: &str, fallback: (&str, &str)) -> Context {
    let (account, region) = arn_location(arn).unwrap_or(fallback);
    Context::internal(account, region)
}

/// Calls a Kinesis operation without tracing it.
async fn kinesis(env: &Env, ctx: &Context, operation: &str, input: Value) -> AwsResult<Value> {
    let dispatcher = env
        .dispatcher()
        .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
    let service = dispatcher
        .service("kinesis")
        .ok_or_else(|| AwsError::internal("Kinesis is not served"))?
        .clone();
    let response = dispatcher
        .invoke(service.as_ref(), ctx, operation, Request::new(input))
        .await?;
    Ok(response.output)
}

/// Checks that a source stream exists, as CreateDeliveryStream does.
pub(super) async fn check_stream(env: &Env, ctx: &Context, arn: &str) -> AwsResult<()> {
    let ctx = context_for(arn, (&ctx.account, &ctx.region));
    let input = Value::map().with("StreamARN", arn);
    match kinesis(env, &ctx, "DescribeStreamSummary", input).await {
        Ok(_) => Ok(()),
        Err(e) if e.code == "ResourceNotFoundException" || e.code == "InvalidArgumentException" => {
            Err(invalid_argument(format!(
                "Kinesis stream {arn} does not exist or is not accessible."
            )))
        }
        Err(e) => Err(e),
    }
}

/// A Kinesis-sourced delivery stream.
struct Sourced {
    account: String,
    region: String,
    name: String,
    arn: String,
    start: i64,
}

/// Reads every Kinesis source once; returns when to read them again (none: no sources).
pub(super) async fn poll_all(inner: &Inner) -> Option<i64> {
    let sourced = inner.sourced().ok()?;
    if sourced.is_empty() {
        return None;
    }
    for s in &sourced {
        if let Err(e) = poll(inner, s).await {
            tracing::debug!("Firehose {} reading {}: {}", s.name, s.arn, e.message);
        }
    }
    Some(now_millis() + SOURCE_POLL.as_millis() as i64)
}

async fn poll(inner: &Inner, s: &Sourced) -> AwsResult<()> {
    let ctx = context_for(&s.arn, (&s.account, &s.region));
    let mut token: Option<String> = None;
    loop {
        let input = match &token {
            Some(t) => Value::map().with("NextToken", t.as_str()),
            None => Value::map().with("StreamARN", s.arn.as_str()),
        };
        let page = kinesis(&inner.env, &ctx, "ListShards", input).await?;
        for shard in page
            .get("Shards")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let id = shard.str("ShardId").unwrap_or_default();
            read_shard(inner, s, &ctx, id).await?;
        }
        token = page.str("NextToken").map(str::to_string);
        if token.is_none() {
            return Ok(());
        }
    }
}

async fn read_shard(inner: &Inner, s: &Sourced, ctx: &Context, shard: &str) -> AwsResult<()> {
    let checkpoint = inner.checkpoint(s, shard)?;
    let mut input = Value::map()
        .with("StreamARN", s.arn.as_str())
        .with("ShardId", shard);
    match checkpoint {
        Some(seq) => {
            input.insert("ShardIteratorType", "AFTER_SEQUENCE_NUMBER");
            input.insert("StartingSequenceNumber", seq);
        }
        None => {
            input.insert("ShardIteratorType", "AT_TIMESTAMP");
            input.insert("Timestamp", Value::Timestamp(s.start));
        }
    }
    let iterator = kinesis(&inner.env, ctx, "GetShardIterator", input).await?;
    let Some(iterator) = iterator.str("ShardIterator") else {
        return Ok(());
    };
    let read = Value::map()
        .with("ShardIterator", iterator)
        .with("StreamARN", s.arn.as_str())
        .with("Limit", Value::Integer(READ_LIMIT));
    let output = kinesis(&inner.env, ctx, "GetRecords", read).await?;
    let records = output
        .get("Records")
        .and_then(Value::as_list)
        .unwrap_or_default();
    let Some(last) = records.last().and_then(|r| r.str("SequenceNumber")) else {
        return Ok(());
    };
    let incoming: Vec<Incoming<'_>> = records.iter().map(|r| incoming(r, &s.arn, shard)).collect();
    inner.append_from_source(s, &incoming, shard, last)
}

/// A Kinesis record as a buffered record, its Kinesis metadata kept for Lambda.
fn incoming<'a>(record: &'a Value, source: &str, shard: &str) -> Incoming<'a> {
    let arrival = match record.get("ApproximateArrivalTimestamp") {
        Some(Value::Timestamp(t)) => *t,
        _ => now_millis(),
    };
    let metadata = json!({
        "sourceArn": source,
        "shardId": shard,
        "partitionKey": record.str("PartitionKey"),
        "approximateArrivalTimestamp": arrival,
        "sequenceNumber": record.str("SequenceNumber"),
        "subsequenceNumber": "",
    });
    Incoming {
        arrival,
        id: record_id(),
        data: record
            .get("Data")
            .and_then(Value::as_blob)
            .unwrap_or_default(),
        metadata: Some(metadata.to_string()),
    }
}

impl Inner {
    fn sourced(&self) -> AwsResult<Vec<Sourced>> {
        self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT account, region, name, source FROM firehose_streams
                 WHERE kind = 'KinesisStreamAsSource'",
            )?;
            let rows = stmt.query_map([], |r| {
                let source: Option<String> = r.get(3)?;
                let source: Json = source
                    .and_then(|t| serde_json::from_str(&t).ok())
                    .unwrap_or(Json::Null);
                Ok(Sourced {
                    account: r.get(0)?,
                    region: r.get(1)?,
                    name: r.get(2)?,
                    arn: source["KinesisStreamARN"]
                        .as_str()
                        .unwrap_or_default()
                        .into(),
                    start: source["DeliveryStartTimestamp"].as_i64().unwrap_or(0),
                })
            })?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })
    }

    fn checkpoint(&self, s: &Sourced, shard: &str) -> AwsResult<Option<String>> {
        self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT sequence FROM firehose_checkpoints
                 WHERE account = ?1 AND region = ?2 AND stream = ?3 AND shard = ?4",
            )?
            .query_row(params![s.account, s.region, s.name, shard], |r| r.get(0))
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Buffers records read from a shard and moves its checkpoint, in one transaction.
    fn append_from_source(
        &self,
        s: &Sourced,
        records: &[Incoming<'_>],
        shard: &str,
        last: &str,
    ) -> AwsResult<()> {
        self.store()?.transaction(|tx| -> AwsResult<_> {
            super::records::insert(tx, &s.account, &s.region, &s.name, records)?;
            tx.prepare_cached(
                "INSERT OR REPLACE INTO firehose_checkpoints
                 (account, region, stream, shard, sequence) VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(params![s.account, s.region, s.name, shard, last])?;
            Ok(())
        })?;
        self.wake.notify_one();
        Ok(())
    }
}
