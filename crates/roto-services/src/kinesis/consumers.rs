//! Enhanced fan-out consumers: RegisterStreamConsumer, DescribeStreamConsumer,
//! ListStreamConsumers and DeregisterStreamConsumer.
//!
//! A consumer is a row of `kinesis_consumers`; its ARN is the stream's with
//! `/consumer/<name>:<creation seconds>`, as AWS writes it. Registration answers
//! `CREATING` as AWS does, and the first read after it shows the consumer `ACTIVE`
//! (waiters finish at once); deregistration removes it before answering.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{invalid_argument, name_from_arn, stream_arn, Kinesis, Stream};

use super::queues::MAX_REGISTERED as MAX_CONSUMERS;
/// ListStreamConsumers' default page.
const DEFAULT_PAGE: i64 = 100;

/// A consumer as stored.
#[derive(Debug, Clone)]
pub(crate) struct Consumer {
    pub stream: String,
    pub name: String,
    pub arn: String,
    pub created: i64,
}

impl Consumer {
    fn describe(&self, status: &str) -> Value {
        Value::map()
            .with("ConsumerName", self.name.as_str())
            .with("ConsumerARN", self.arn.as_str())
            .with("ConsumerStatus", status)
            .with("ConsumerCreationTimestamp", Value::Timestamp(self.created))
    }
}

fn consumer_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Consumer> {
    Ok(Consumer {
        stream: r.get(0)?,
        name: r.get(1)?,
        arn: r.get(2)?,
        created: r.get(3)?,
    })
}

fn consumer_missing(ctx: &Context, what: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Consumer {what} under account {} not found.", ctx.account),
    )
}

impl Kinesis {
    /// The stream a consumer request's `StreamARN` names.
    fn consumer_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Stream> {
        let arn = input.str("StreamARN").unwrap_or_default();
        let name = name_from_arn(ctx, arn)?;
        self.find(ctx, name)?
            .ok_or_else(|| super::not_found(ctx, name))
    }

    /// The consumer an ARN names, if it exists.
    pub(crate) fn consumer_by_arn(&self, ctx: &Context, arn: &str) -> AwsResult<Option<Consumer>> {
        self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT stream, name, arn, created FROM kinesis_consumers
                 WHERE account = ?1 AND region = ?2 AND arn = ?3",
            )?
            .query_row([&ctx.account, &ctx.region, arn], consumer_from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Whether the consumer an ARN names exists.
    pub(crate) fn consumer_exists(&self, ctx: &Context, arn: &str) -> AwsResult<bool> {
        Ok(self.consumer_by_arn(ctx, arn)?.is_some())
    }

    /// The consumers of a stream, by name, from after `after`.
    fn consumers(
        &self,
        ctx: &Context,
        stream: &str,
        after: &str,
        limit: i64,
    ) -> AwsResult<Vec<Consumer>> {
        self.store()?.read(|c| {
            let rows = c
                .prepare_cached(
                    "SELECT stream, name, arn, created FROM kinesis_consumers
                     WHERE account = ?1 AND region = ?2 AND stream = ?3 AND name > ?4
                     ORDER BY name LIMIT ?5",
                )?
                .query_map(
                    params![ctx.account, ctx.region, stream, after, limit],
                    consumer_from_row,
                )?
                .collect::<rusqlite::Result<Vec<_>>>();
            rows.map_err(AwsError::from)
        })
    }

    /// How many consumers a stream has.
    pub(crate) fn consumer_count(&self, ctx: &Context, stream: &str) -> AwsResult<i64> {
        Ok(self.consumers(ctx, stream, "", MAX_CONSUMERS + 1)?.len() as i64)
    }

    /// The consumer a request names by `ConsumerARN`, or by `StreamARN` and `ConsumerName`.
    pub(crate) fn named_consumer(&self, ctx: &Context, input: &Value) -> AwsResult<Consumer> {
        match (input.str("ConsumerARN"), input.str("ConsumerName")) {
            (Some(arn), _) => self
                .consumer_by_arn(ctx, arn)?
                .ok_or_else(|| consumer_missing(ctx, arn)),
            (None, Some(name)) => {
                let stream = self.consumer_stream(ctx, input)?;
                self.consumers(ctx, &stream.name, "", MAX_CONSUMERS + 1)?
                    .into_iter()
                    .find(|c| c.name == name)
                    .ok_or_else(|| consumer_missing(ctx, name))
            }
            (None, None) => Err(invalid_argument(
                "Either ConsumerARN or StreamARN and ConsumerName must be provided.",
            )),
        }
    }

    pub(crate) fn register_consumer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.consumer_stream(ctx, input)?;
        let name = input.str("ConsumerName").unwrap_or_default();
        let existing = self.consumers(ctx, &stream.name, "", MAX_CONSUMERS + 1)?;
        if existing.iter().any(|c| c.name == name) {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "Consumer {name} under stream {} already exists for account {}.",
                    stream.name, ctx.account
                ),
            ));
        }
        if existing.len() as i64
            + self.attached_count(ctx, &super::attached::QUEUES, &stream.name)?
            >= MAX_CONSUMERS
        {
            return Err(AwsError::new(
                "LimitExceededException",
                format!(
                    "Consumer limit of {MAX_CONSUMERS} for stream {} under account {} has been reached.",
                    stream.name, ctx.account
                ),
            ));
        }
        let created = now_millis();
        let consumer = Consumer {
            stream: stream.name.clone(),
            name: name.to_string(),
            arn: format!(
                "{}/consumer/{name}:{}",
                stream_arn(ctx, &stream.name),
                created / 1000
            ),
            created,
        };
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT INTO kinesis_consumers (account, region, stream, name, arn, created)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![
                    ctx.account,
                    ctx.region,
                    consumer.stream,
                    consumer.name,
                    consumer.arn,
                    consumer.created
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("Consumer", consumer.describe("CREATING")))
    }

    pub(crate) fn describe_consumer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let consumer = self.named_consumer(ctx, input)?;
        let description = consumer
            .describe("ACTIVE")
            .with("StreamARN", stream_arn(ctx, &consumer.stream));
        Ok(Value::map().with("ConsumerDescription", description))
    }

    pub(crate) fn list_consumers(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.consumer_stream(ctx, input)?;
        let limit = input.int("MaxResults").unwrap_or(DEFAULT_PAGE).max(1);
        let after = match input.str("NextToken") {
            Some(token) => URL_SAFE_NO_PAD
                .decode(token)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| invalid_argument(format!("Invalid NextToken: {token}")))?,
            None => String::new(),
        };
        let mut page = self.consumers(ctx, &stream.name, &after, limit + 1)?;
        let more = page.len() as i64 > limit;
        page.truncate(limit as usize);
        let next = more
            .then(|| page.last().map(|c| URL_SAFE_NO_PAD.encode(&c.name)))
            .flatten();
        let listed = page.iter().map(|c| c.describe("ACTIVE")).collect();
        Ok(Value::map()
            .with("Consumers", Value::List(listed))
            .with_opt("NextToken", next))
    }

    pub(crate) fn deregister_consumer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let consumer = self.named_consumer(ctx, input)?;
        self.store()?.transaction(|tx| {
            for table in ["kinesis_consumers", "kinesis_policies"] {
                tx.execute_cached(
                    &format!("DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND arn = ?3"),
                    [&ctx.account, &ctx.region, &consumer.arn],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }
}
