//! SubscribeToShard: an enhanced fan-out consumer's records pushed as an AWS event stream
//! (`application/vnd.amazon.eventstream`, framed by roto-core's [`eventstream`]) over
//! HTTP/1.1 chunked or HTTP/2, whichever the client speaks.
//!
//! The answer is an `initial-response` event, then a `SubscribeToShardEvent` at once and
//! whenever records are appended (woken by PutRecord(s)), or every five seconds of the
//! server clock when none are; each carries the records, `ContinuationSequenceNumber` and
//! `MillisBehindLatest`. A closed shard read to its end gets a last event naming its
//! children, and the stream ends. A subscription lasts five minutes of the server clock;
//! a consumer subscribing again to the same shard within five seconds is refused
//! (ResourceInUseException), as AWS refuses it. Errors found while pushing (the stream
//! deleted) end the stream with an exception message.

use bytes::Bytes;
use roto_core::model::model;
use roto_core::protocol::json::encode_value;
use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{eventstream, AwsError, AwsResult, Context, Response, Value};
use tokio::sync::mpsc::Sender;

use super::records::{timestamp_of, Start};
use super::{seq, Kinesis, Stream};

/// How long a subscription lasts, in milliseconds of the server clock.
const LIFETIME_MS: i64 = 300_000;
/// The longest wait between two events.
const HEARTBEAT_MS: i64 = 5_000;
/// How soon a consumer may subscribe to the same shard again.
const RESUBSCRIBE_MS: i64 = 5_000;
/// The most records one event carries.
const EVENT_RECORDS: i64 = 1_000;
/// Events that may wait unsent for a slow client.
const BACKLOG: usize = 4;
const JSON: &str = "application/json";

/// Where a subscription stands.
struct Cursor {
    stream: Stream,
    shard: i64,
    position: i64,
}

/// What one push found.
enum Step {
    /// An event to send; `true` when it is the shard's last.
    Event(Vec<u8>, bool),
    /// The subscription fails with this error.
    Failed(AwsError),
}

fn exception_frame(error: &AwsError) -> Vec<u8> {
    let body = serde_json::json!({ "message": error.message });
    eventstream::exception(&error.code, JSON, body.to_string().as_bytes())
}

/// A SubscribeToShardEvent as its event stream message.
fn event_frame(event: &Value) -> Vec<u8> {
    let kinesis = model("kinesis");
    let union = kinesis.shape("SubscribeToShardEventStream");
    let payload = match union.members.get("SubscribeToShardEvent") {
        Some(r) => encode_value(kinesis, r, kinesis.resolve(r), event).to_string(),
        None => "{}".to_string(),
    };
    eventstream::event("SubscribeToShardEvent", JSON, payload.as_bytes())
}

impl Kinesis {
    pub(crate) fn subscribe_to_shard(&self, ctx: &Context, input: &Value) -> AwsResult<Response> {
        let arn = input.str("ConsumerARN").unwrap_or_default();
        let consumer = self.consumer_by_arn(ctx, arn)?.ok_or_else(|| {
            AwsError::new(
                "ResourceNotFoundException",
                format!("Consumer {arn} under account {} not found.", ctx.account),
            )
        })?;
        let stream = self
            .find(ctx, &consumer.stream)?
            .ok_or_else(|| super::not_found(ctx, &consumer.stream))?;
        let shard_id = input.str("ShardId").unwrap_or_default();
        let shard = self.shard(ctx, &stream, shard_id)?;
        let starting = input.get("StartingPosition");
        let start = Start {
            kind: starting.and_then(|s| s.str("Type")).unwrap_or_default(),
            sequence: starting.and_then(|s| s.str("SequenceNumber")),
            at: starting
                .and_then(|s| s.get("Timestamp"))
                .and_then(timestamp_of),
            operation: "SubscribeToShard",
        };
        let position = self.position(ctx, &stream, &shard, &start)?;
        self.claim(arn, shard_id)?;
        let (tx, body) = eventstream::channel(BACKLOG);
        let cursor = Cursor {
            stream,
            shard: shard.index,
            position,
        };
        tokio::spawn(self.clone().push(ctx.clone(), cursor, tx));
        let mut response = Response::new(Value::map()).with_body(Some(body));
        response
            .headers
            .push(("Content-Type".into(), eventstream::CONTENT_TYPE.into()));
        Ok(response)
    }

    /// Records a subscription of `consumer` to `shard`, refusing one within five
    /// seconds of the last.
    fn claim(&self, consumer: &str, shard: &str) -> AwsResult<()> {
        let now = now_millis();
        let mut recent = self
            .subscriptions
            .lock()
            .unwrap_or_else(|poisoned| poisoned.into_inner());
        recent.retain(|_, at| now - *at < RESUBSCRIBE_MS);
        let key = (consumer.to_string(), shard.to_string());
        if recent.contains_key(&key) {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "Another active subscription exists for consumer {consumer} and shard {shard}."
                ),
            ));
        }
        recent.insert(key, now);
        Ok(())
    }

    /// Pushes events until the subscription's five minutes pass, the shard ends, it fails
    /// or the client goes.
    async fn push(self, ctx: Context, mut cursor: Cursor, tx: Sender<Bytes>) {
        let initial = eventstream::event("initial-response", JSON, b"{}");
        if tx.send(initial.into()).await.is_err() {
            return;
        }
        let end = now_millis() + LIFETIME_MS;
        let mut last_sent: Option<i64> = None;
        while now_millis() < end {
            let appended = self.appended.notified();
            tokio::pin!(appended);
            appended.as_mut().enable();
            let before = cursor.position;
            let heartbeat_due = last_sent.is_none_or(|t| now_millis() - t >= HEARTBEAT_MS);
            let (frame, last) = match self.step(&ctx, &mut cursor) {
                Step::Event(frame, last) => (frame, last),
                Step::Failed(error) => (exception_frame(&error), true),
            };
            if last || heartbeat_due || cursor.position != before {
                if tx.send(frame.into()).await.is_err() {
                    return;
                }
                last_sent = Some(now_millis());
            }
            if last {
                return;
            }
            if cursor.position != before {
                continue;
            }
            tokio::select! {
                _ = appended => {}
                _ = sleep_until(end.min(last_sent.unwrap_or(0) + HEARTBEAT_MS)) => {}
            }
        }
    }

    /// Reads the next records at the cursor and advances it.
    fn step(&self, ctx: &Context, cursor: &mut Cursor) -> Step {
        match self.next_event(ctx, cursor) {
            Ok((event, last)) => Step::Event(event_frame(&event), last),
            Err(error) => Step::Failed(error),
        }
    }

    fn next_event(&self, ctx: &Context, cursor: &mut Cursor) -> AwsResult<(Value, bool)> {
        let stream = self
            .find(ctx, &cursor.stream.name)?
            .filter(|s| s.created == cursor.stream.created)
            .ok_or_else(|| super::not_found(ctx, &cursor.stream.name))?;
        let shard = self.shard(ctx, &stream, &seq::shard_id(cursor.shard))?;
        let batch = self.read_batch(ctx, &stream, &shard, cursor.position, EVENT_RECORDS)?;
        cursor.position = batch.next_position;
        let mut event = Value::map()
            .with("Records", Value::List(batch.records))
            .with("MillisBehindLatest", batch.behind);
        if batch.at_closed_end {
            event.insert("ChildShards", self.child_shards(ctx, &stream, shard.index)?);
        } else {
            let continuation = seq::sequence_number(
                stream.created,
                shard.index,
                (batch.next_position - 1).max(0),
            );
            event.insert("ContinuationSequenceNumber", continuation);
        }
        Ok((event, batch.at_closed_end))
    }
}
