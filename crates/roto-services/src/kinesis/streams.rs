//! Stream operations: create, describe, list, delete, retention, capacity mode and tags.

use base64::engine::general_purpose::URL_SAFE_NO_PAD;
use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::seq::{self, even_ranges, stored_hash};
use super::{invalid_argument, stream_arn, Kinesis, Stream};

/// The shards an on-demand stream starts with.
const ON_DEMAND_SHARDS: i64 = 4;
/// The account's shard quota.
pub(crate) const SHARD_LIMIT: i64 = 500;
/// Retention bounds, in hours.
const MIN_RETENTION: i64 = 24;
const MAX_RETENTION: i64 = 8760;
/// The largest record a stream takes unless UpdateMaxRecordSize says otherwise, in KiB.
const DEFAULT_MAX_RECORD_KIB: i64 = 1024;
/// The most tags a stream may carry.
const MAX_TAGS: usize = 50;

/// A shard as stored.
#[derive(Debug, Clone)]
pub(crate) struct Shard {
    pub index: i64,
    pub start_hash: String,
    pub end_hash: String,
    pub parent: Option<i64>,
    pub adjacent_parent: Option<i64>,
    pub next_seq: i64,
    pub closed_seq: Option<i64>,
    pub created: i64,
    pub closed_at: Option<i64>,
}

impl Shard {
    /// The shard as AWS describes it.
    pub fn describe(&self, stream: &Stream) -> Value {
        let range = Value::map()
            .with(
                "StartingSequenceNumber",
                seq::sequence_number(stream.created, self.index, 0),
            )
            .with_opt(
                "EndingSequenceNumber",
                self.closed_seq
                    .map(|c| seq::sequence_number(stream.created, self.index, c)),
            );
        Value::map()
            .with("ShardId", seq::shard_id(self.index))
            .with_opt("ParentShardId", self.parent.map(seq::shard_id))
            .with_opt(
                "AdjacentParentShardId",
                self.adjacent_parent.map(seq::shard_id),
            )
            .with(
                "HashKeyRange",
                Value::map()
                    .with("StartingHashKey", seq::shown_hash(&self.start_hash))
                    .with("EndingHashKey", seq::shown_hash(&self.end_hash)),
            )
            .with("SequenceNumberRange", range)
    }
}

pub(crate) fn shard_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Shard> {
    Ok(Shard {
        index: r.get(0)?,
        start_hash: r.get(1)?,
        end_hash: r.get(2)?,
        parent: r.get(3)?,
        adjacent_parent: r.get(4)?,
        next_seq: r.get(5)?,
        closed_seq: r.get(6)?,
        created: r.get(7)?,
        closed_at: r.get(8)?,
    })
}

/// The columns [`shard_from_row`] reads.
pub(crate) const SHARD_COLUMNS: &str =
    "shard, start_hash, end_hash, parent, adjacent_parent, next_seq, closed_seq, created, closed_at";

fn retention_error(requested: i64) -> Option<AwsError> {
    if requested < MIN_RETENTION {
        return Some(invalid_argument(format!(
            "Minimum allowed retention period is {MIN_RETENTION} hours. Requested retention period ({requested} hours) is too short."
        )));
    }
    (requested > MAX_RETENTION).then(|| {
        invalid_argument(format!(
            "Maximum allowed retention period is {MAX_RETENTION} hours. Requested retention period ({requested} hours) is too long."
        ))
    })
}

fn mode_details(mode: &str) -> Value {
    Value::map().with("StreamMode", mode)
}

fn enhanced_monitoring(stream: &Stream) -> Value {
    let metrics = stream.metrics.iter().map(|m| m.as_str().into()).collect();
    Value::List(vec![
        Value::map().with("ShardLevelMetrics", Value::List(metrics))
    ])
}

impl Kinesis {
    /// Every shard of a stream, in index order.
    pub(crate) fn shards(&self, ctx: &Context, stream: &str) -> AwsResult<Vec<Shard>> {
        self.store()?.read(|c| {
            let sql = format!(
                "SELECT {SHARD_COLUMNS} FROM kinesis_shards
                 WHERE account = ?1 AND region = ?2 AND stream = ?3 ORDER BY shard"
            );
            let rows = c
                .prepare_cached(&sql)?
                .query_map([&ctx.account, &ctx.region, stream], shard_from_row)?
                .collect::<rusqlite::Result<Vec<_>>>();
            rows.map_err(AwsError::from)
        })
    }

    /// Open shards across the account and region, for the shard quota.
    fn open_shard_count(&self, ctx: &Context) -> AwsResult<i64> {
        self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT COUNT(*) FROM kinesis_shards
                 WHERE account = ?1 AND region = ?2 AND closed_seq IS NULL",
            )?
            .query_row([&ctx.account, &ctx.region], |r| r.get(0))
            .map_err(AwsError::from)
        })
    }

    pub(crate) fn create_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("StreamName").unwrap_or_default();
        let mode = input
            .get("StreamModeDetails")
            .and_then(|d| d.str("StreamMode"))
            .unwrap_or("PROVISIONED");
        let count = match (mode, input.int("ShardCount")) {
            ("ON_DEMAND", _) => ON_DEMAND_SHARDS,
            (_, Some(n)) => n,
            (_, None) => {
                return Err(invalid_argument(
                    "ShardCount must be provided for a stream in PROVISIONED mode.",
                ));
            }
        };
        self.check_shard_limit(ctx, count)?;
        let warm = input.int("WarmThroughputMiBps");
        if let Some(mibps) = warm {
            self.check_warm_throughput(ctx, mode, mibps)?;
        }
        if self.find(ctx, name)?.is_some() {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "Stream {name} under account {} already exists.",
                    ctx.account
                ),
            ));
        }
        let tags = tag_map(input.get("Tags"));
        let created = now_millis();
        self.store()?.transaction(|tx| {
            tx.execute_cached(
                "INSERT INTO kinesis_streams
                 (account, region, name, created, mode, retention_hours, next_shard, tags,
                  max_record_kib, warm_mibps, distribution)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)",
                params![
                    ctx.account,
                    ctx.region,
                    name,
                    created,
                    mode,
                    MIN_RETENTION,
                    count,
                    serde_json::Value::Object(tags).to_string(),
                    input
                        .int("MaxRecordSizeInKiB")
                        .unwrap_or(DEFAULT_MAX_RECORD_KIB),
                    warm,
                    input.str("RecordDistributionStrategy")
                ],
            )?;
            for (index, (start, end)) in even_ranges(count as u128).into_iter().enumerate() {
                tx.execute_cached(
                    "INSERT INTO kinesis_shards
                     (account, region, stream, shard, start_hash, end_hash, created)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                    params![
                        ctx.account,
                        ctx.region,
                        name,
                        index as i64,
                        stored_hash(start),
                        stored_hash(end),
                        created
                    ],
                )?;
            }
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    /// LimitExceededException when `more` shards would pass the account's quota.
    pub(crate) fn check_shard_limit(&self, ctx: &Context, more: i64) -> AwsResult<()> {
        let current = self.open_shard_count(ctx)?;
        if current + more <= SHARD_LIMIT {
            return Ok(());
        }
        Err(AwsError::new(
            "LimitExceededException",
            format!(
                "This request would exceed the shard limit for the account {} in {}. Current shard count for the account: {current}. Limit: {SHARD_LIMIT}. Number of additional shards that would have resulted from this request: {more}. Refer to the AWS Service Limits page (https://docs.aws.amazon.com/general/latest/gr/aws_service_limits.html) for current limits and how to request higher limits.",
                ctx.account, ctx.region
            ),
        ))
    }

    pub(crate) fn delete_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        self.check_nothing_attached(ctx, &stream.name)?;
        if input.bool("EnforceConsumerDeletion") != Some(true)
            && self.consumer_count(ctx, &stream.name)? > 0
        {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "Stream {} under account {} has registered consumers; set EnforceConsumerDeletion to delete it with them.",
                    stream.name, ctx.account
                ),
            ));
        }
        self.store()?.transaction(|tx| {
            super::settings::forget_policies(tx, ctx, &stream.name)?;
            for table in ["kinesis_records", "kinesis_shards", "kinesis_consumers"] {
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND stream = ?3"
                    ),
                    [&ctx.account, &ctx.region, &stream.name],
                )?;
            }
            tx.execute_cached(
                "DELETE FROM kinesis_streams WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, &stream.name],
            )?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }

    pub(crate) fn describe_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let limit = input.int("Limit").unwrap_or(100).max(1) as usize;
        let after = input.str("ExclusiveStartShardId").map(seq::shard_index);
        let shards: Vec<Shard> = self
            .shards(ctx, &stream.name)?
            .into_iter()
            .filter(|s| after.is_none_or(|a| a.is_some_and(|a| s.index > a)))
            .collect();
        let more = shards.len() > limit;
        let shown = shards.iter().take(limit).map(|s| s.describe(&stream));
        let description = Value::map()
            .with("StreamName", stream.name.as_str())
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("StreamStatus", "ACTIVE")
            .with("StreamModeDetails", mode_details(&stream.mode))
            .with("Shards", Value::List(shown.collect()))
            .with("HasMoreShards", more)
            .with("RetentionPeriodHours", stream.retention_hours)
            .with("StreamCreationTimestamp", Value::Timestamp(stream.created))
            .with("EnhancedMonitoring", enhanced_monitoring(&stream))
            .with("EncryptionType", stream.encryption_type())
            .with_opt("KeyId", stream.key_id.as_deref());
        Ok(Value::map().with("StreamDescription", description))
    }

    pub(crate) fn describe_stream_summary(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let open = self
            .shards(ctx, &stream.name)?
            .iter()
            .filter(|s| s.closed_seq.is_none())
            .count() as i64;
        let summary = Value::map()
            .with("StreamName", stream.name.as_str())
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("StreamStatus", "ACTIVE")
            .with("StreamModeDetails", mode_details(&stream.mode))
            .with("RetentionPeriodHours", stream.retention_hours)
            .with("StreamCreationTimestamp", Value::Timestamp(stream.created))
            .with("EnhancedMonitoring", enhanced_monitoring(&stream))
            .with("EncryptionType", stream.encryption_type())
            .with_opt("KeyId", stream.key_id.as_deref())
            .with("OpenShardCount", open)
            .with("ConsumerCount", self.consumer_count(ctx, &stream.name)?)
            .with("MaxRecordSizeInKiB", stream.max_record_kib)
            .with_opt(
                "WarmThroughput",
                stream
                    .warm_mibps
                    .map(|w| Value::map().with("TargetMiBps", w).with("CurrentMiBps", w)),
            )
            .with_opt("RecordDistributionStrategy", stream.distribution.as_deref());
        Ok(Value::map().with("StreamDescriptionSummary", summary))
    }

    pub(crate) fn list_streams(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let limit = input.int("Limit").unwrap_or(100).max(1);
        let after = match input.str("NextToken") {
            Some(token) => Some(decode_token(token)?),
            None => input.str("ExclusiveStartStreamName").map(str::to_string),
        };
        let mut rows: Vec<(String, i64, String)> = self.store()?.read(|c| {
            let rows = c
                .prepare_cached(
                    "SELECT name, created, mode FROM kinesis_streams
                     WHERE account = ?1 AND region = ?2 AND name > ?3 ORDER BY name LIMIT ?4",
                )?
                .query_map(
                    params![
                        ctx.account,
                        ctx.region,
                        after.unwrap_or_default(),
                        limit + 1
                    ],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )?
                .collect::<rusqlite::Result<Vec<_>>>();
            rows.map_err(AwsError::from)
        })?;
        let more = rows.len() as i64 > limit;
        rows.truncate(limit as usize);
        let next = more
            .then(|| rows.last().map(|(name, _, _)| URL_SAFE_NO_PAD.encode(name)))
            .flatten();
        let names = rows
            .iter()
            .map(|(n, _, _)| Value::from(n.as_str()))
            .collect();
        let summaries = rows
            .iter()
            .map(|(name, created, mode)| {
                Value::map()
                    .with("StreamName", name.as_str())
                    .with("StreamARN", stream_arn(ctx, name))
                    .with("StreamStatus", "ACTIVE")
                    .with("StreamModeDetails", mode_details(mode))
                    .with("StreamCreationTimestamp", Value::Timestamp(*created))
            })
            .collect();
        Ok(Value::map()
            .with("StreamNames", Value::List(names))
            .with("HasMoreStreams", more)
            .with_opt("NextToken", next)
            .with("StreamSummaries", Value::List(summaries)))
    }

    pub(crate) fn change_retention(
        &self,
        ctx: &Context,
        input: &Value,
        increase: bool,
    ) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let requested = input.int("RetentionPeriodHours").unwrap_or_default();
        if let Some(error) = retention_error(requested) {
            return Err(error);
        }
        let current = stream.retention_hours;
        if increase && requested < current {
            return Err(invalid_argument(format!(
                "Requested retention period ({requested} hours) for stream {} can not be shorter than existing retention period ({current} hours). Use DecreaseRetentionPeriod API.",
                stream.name
            )));
        }
        if !increase && requested > current {
            return Err(invalid_argument(format!(
                "Requested retention period ({requested} hours) for stream {} can not be longer than existing retention period ({current} hours). Use IncreaseRetentionPeriod API.",
                stream.name
            )));
        }
        self.set_column(ctx, &stream.name, "retention_hours", &requested)?;
        Ok(Value::map())
    }

    pub(crate) fn update_stream_mode(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let mode = input
            .get("StreamModeDetails")
            .and_then(|d| d.str("StreamMode"))
            .unwrap_or_default();
        if mode == "PROVISIONED" {
            self.check_nothing_attached(ctx, &stream.name)?;
        }
        self.set_column(ctx, &stream.name, "mode", &mode)?;
        Ok(Value::map())
    }

    /// Sets one column of a stream's row.
    pub(crate) fn set_column(
        &self,
        ctx: &Context,
        name: &str,
        column: &str,
        value: &dyn rusqlite::ToSql,
    ) -> AwsResult<()> {
        self.store()?.with(|c| {
            c.execute_cached(
                &format!(
                    "UPDATE kinesis_streams SET {column} = ?4
                     WHERE account = ?1 AND region = ?2 AND name = ?3"
                ),
                params![ctx.account, ctx.region, name, value],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }

    pub(crate) fn add_tags(&self, ctx: &Context, input: &Value, arn: &str) -> AwsResult<Value> {
        let mut stream = self.stream(ctx, input, arn)?;
        stream.tags.extend(tag_map(input.get("Tags")));
        if stream.tags.len() > MAX_TAGS {
            return Err(invalid_argument(format!(
                "Failed to add tags to stream {} under account {} because a given stream cannot have more than {MAX_TAGS} tags.",
                stream.name, ctx.account
            )));
        }
        self.save_tags(ctx, &stream)
    }

    pub(crate) fn remove_tags(&self, ctx: &Context, input: &Value, arn: &str) -> AwsResult<Value> {
        let mut stream = self.stream(ctx, input, arn)?;
        for key in input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            stream.tags.remove(key.as_str().unwrap_or_default());
        }
        self.save_tags(ctx, &stream)
    }

    fn save_tags(&self, ctx: &Context, stream: &Stream) -> AwsResult<Value> {
        let tags = serde_json::Value::Object(stream.tags.clone()).to_string();
        self.set_column(ctx, &stream.name, "tags", &tags)?;
        Ok(Value::map())
    }

    pub(crate) fn list_tags_for_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "StreamARN")?;
        let limit = input.int("Limit").unwrap_or(50).max(1) as usize;
        let after = input.str("ExclusiveStartTagKey").unwrap_or_default();
        let tags: Vec<Value> = tag_list(&stream)
            .into_iter()
            .filter(|(k, _)| after.is_empty() || k.as_str() > after)
            .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
            .collect();
        let more = tags.len() > limit;
        Ok(Value::map()
            .with("Tags", Value::List(tags.into_iter().take(limit).collect()))
            .with("HasMoreTags", more))
    }

    pub(crate) fn list_tags_for_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input, "ResourceARN")?;
        let tags = tag_list(&stream)
            .into_iter()
            .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
            .collect();
        Ok(Value::map().with("Tags", Value::List(tags)))
    }
}

/// The tags of a `TagMap` member.
pub(crate) fn tag_map(tags: Option<&Value>) -> serde_json::Map<String, serde_json::Value> {
    let mut out = serde_json::Map::new();
    for (k, v) in tags.and_then(Value::as_map).into_iter().flatten() {
        out.insert(
            k.clone(),
            serde_json::Value::from(v.as_str().unwrap_or_default()),
        );
    }
    out
}

/// A stream's tags in key order.
fn tag_list(stream: &Stream) -> Vec<(String, String)> {
    let mut tags: Vec<(String, String)> = stream
        .tags
        .iter()
        .map(|(k, v)| (k.clone(), v.as_str().unwrap_or_default().to_string()))
        .collect();
    tags.sort();
    tags
}

/// The stream name a ListStreams token carries.
fn decode_token(token: &str) -> AwsResult<String> {
    URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(|| invalid_argument(format!("Invalid NextToken: {token}")))
}
