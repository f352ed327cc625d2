//! Channels: a stream's records delivered to a general purpose S3 bucket or to streaming
//! tables in S3 Tables (CreateChannel, DescribeChannel, ListChannels, UpdateChannel,
//! DeleteChannel, and tagging by channel ARN).
//!
//! A channel is a row of `kinesis_channels`; what its description shows beside its name,
//! ids and source stream (the role, the destination with its defaults filled in, the
//! encryption and logging settings) is kept as one JSON document, since only UpdateChannel's
//! data freshness and logging change after creation. Roto keeps channels as configuration:
//! it checks them as AWS does (an on-demand source stream, one stream and one table, record
//! formats that suit the destination, a KMS key that KMS can use) but does not deliver
//! records through them. CreateChannel answers CREATING and UpdateChannel UPDATING; the
//! first read after them shows ACTIVE (the `ChannelActive` waiter finishes at once). A
//! stream with channels cannot be deleted or switched to provisioned capacity.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::attached::{list_page, passes_filter, CHANNELS, MAX_TAGS};
use super::streams::tag_map;
use super::{stream_arn, Kinesis};
use crate::tags::{self, Tags};

/// How long undelivered data may wait when the request does not say, in seconds.
const DEFAULT_FRESHNESS: i64 = 300;
/// The log stream a channel logs to when the request names none.
const DEFAULT_LOG_STREAM: &str = "DestinationDelivery";
/// The prefix of failed records in the destination bucket, when no dead-letter bucket is named.
const DEFAULT_ERROR_PREFIX: &str = "error/";

/// A channel as stored.
#[derive(Debug, Clone)]
pub(crate) struct Channel {
    id: String,
    name: String,
    stream: String,
    stream_created: i64,
    created: i64,
    /// The description's settings: role, record configuration, destination, encryption
    /// and logging, as the API shows them.
    settings: Value,
    tags: Tags,
}

const CHANNEL_COLUMNS: &str = "id, name, stream, stream_created, created, settings, tags";

fn channel_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Channel> {
    let settings: String = r.get(5)?;
    let tags: String = r.get(6)?;
    Ok(Channel {
        id: r.get(0)?,
        name: r.get(1)?,
        stream: r.get(2)?,
        stream_created: r.get(3)?,
        created: r.get(4)?,
        settings: serde_json::from_str(&settings)
            .map(|j| Value::from_json(&j))
            .unwrap_or_else(|_| Value::map()),
        tags: tags::from_stored(&tags),
    })
}

impl Channel {
    fn arn(&self, ctx: &Context) -> String {
        CHANNELS.arn(ctx, &self.id)
    }

    /// `S3` or `S3_TABLES`.
    fn destination_type(&self) -> &'static str {
        match self.settings.get("S3TablesDestinationConfiguration") {
            Some(_) => "S3_TABLES",
            None => "S3",
        }
    }

    /// The channel as DescribeChannel (and the calls that answer a description) show it.
    fn describe(&self, ctx: &Context, status: &str) -> Value {
        let mut out = self.settings.clone();
        if let Some(Value::List(streams)) = out.get("StreamConfigurationList").cloned() {
            let streams = streams
                .into_iter()
                .map(|s| {
                    s.with(
                        "StreamCreationTimestamp",
                        Value::Timestamp(self.stream_created),
                    )
                })
                .collect();
            out.insert("StreamConfigurationList", Value::List(streams));
        }
        out.with("ChannelName", self.name.as_str())
            .with("ChannelARN", self.arn(ctx))
            .with("ChannelId", self.id.as_str())
            .with("ChannelStatus", status)
            .with("ChannelCreationTimestamp", Value::Timestamp(self.created))
    }

    /// The channel as ListChannels shows it.
    fn summary(&self, ctx: &Context) -> Value {
        let stream = Value::map()
            .with("StreamARN", stream_arn(ctx, &self.stream))
            .with(
                "StreamCreationTimestamp",
                Value::Timestamp(self.stream_created),
            );
        Value::map()
            .with("ChannelName", self.name.as_str())
            .with("ChannelARN", self.arn(ctx))
            .with("ChannelId", self.id.as_str())
            .with("ChannelStatus", "ACTIVE")
            .with("ChannelCreationTimestamp", Value::Timestamp(self.created))
            .with("ChannelDestinationType", self.destination_type())
            .with("Streams", Value::List(vec![stream]))
    }
}

/// The one entry of a list member that may hold only one today (`what` names it in the
/// error).
fn only_entry<'a>(input: &'a Value, member: &str, what: &str) -> AwsResult<&'a Value> {
    match input
        .get(member)
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        [one] => Ok(one),
        _ => Err(AwsError::validation(format!(
            "{member} must contain exactly one {what}."
        ))),
    }
}

/// The destination a CreateChannel request configures, its defaults filled in, checked
/// against the stream's record configuration: (member, description).
fn destination(input: &Value, record: &Value) -> AwsResult<(&'static str, Value)> {
    let format = record.str("RecordFormatType").unwrap_or_default();
    let schema = record.str("GSRSchemaARN");
    match (
        input.get("S3DestinationConfiguration"),
        input.get("S3TablesDestinationConfiguration"),
    ) {
        (Some(s3), None) => {
            if format == "GSR_JSON" {
                return Err(AwsError::validation(
                    "RecordFormatType GSR_JSON is supported only for S3 Tables destinations.",
                ));
            }
            let storage = s3.get("StorageConfiguration").cloned().unwrap_or_else(Value::map);
            let dead_letter = s3.get("DeadLetterQueueS3Configuration").cloned();
            let dead_letter = dead_letter.unwrap_or_else(|| {
                Value::map()
                    .with_opt("BucketARN", storage.str("BucketARN"))
                    .with_opt("ExpectedBucketOwner", storage.str("ExpectedBucketOwner"))
                    .with("ErrorOutputPrefix", DEFAULT_ERROR_PREFIX)
            });
            let description = Value::map()
                .with("DataFreshnessInSeconds", freshness(s3)?)
                .with("DeadLetterQueueS3Configuration", dead_letter)
                .with("StorageConfiguration", storage);
            Ok(("S3DestinationConfiguration", description))
        }
        (None, Some(tables)) => {
            if matches!(format, "STRING" | "BYTE_ARRAY") {
                return Err(AwsError::validation(format!(
                    "RecordFormatType {format} is supported only for general purpose S3 destinations."
                )));
            }
            if schema.is_none() {
                return Err(AwsError::validation(
                    "GSRSchemaARN is required when the channel destination is a streaming table.",
                ));
            }
            only_entry(tables, "S3TablesConfigurationList", "table")?;
            let mut description = tables.clone();
            description.insert("DataFreshnessInSeconds", freshness(tables)?);
            Ok(("S3TablesDestinationConfiguration", description))
        }
        _ => Err(AwsError::validation(
            "Exactly one of S3DestinationConfiguration and S3TablesDestinationConfiguration must be specified.",
        )),
    }
}

/// A destination's data freshness, or the default; at least one second.
fn freshness(config: &Value) -> AwsResult<i64> {
    match config.int("DataFreshnessInSeconds") {
        None => Ok(DEFAULT_FRESHNESS),
        Some(n) if n >= 1 => Ok(n),
        Some(n) => Err(AwsError::validation(format!(
            "DataFreshnessInSeconds must be a positive number of seconds, not {n}."
        ))),
    }
}

/// A logging configuration as a description shows it: an enabled one names its log group
/// (`/aws/kinesis/{name}/{id}` by default) and log stream.
fn logging(requested: Option<&Value>, name: &str, id: &str) -> Value {
    let logs = requested
        .and_then(|l| l.get("CloudWatchLogs"))
        .cloned()
        .unwrap_or_else(|| Value::map().with("Enabled", false));
    let logs = match logs.bool("Enabled") {
        Some(true) => {
            let group = logs
                .str("LogGroupName")
                .map_or_else(|| format!("/aws/kinesis/{name}/{id}"), str::to_string);
            let stream = logs.str("LogStreamName").unwrap_or(DEFAULT_LOG_STREAM);
            Value::map()
                .with("Enabled", true)
                .with("LogGroupName", group)
                .with("LogStreamName", stream)
        }
        _ => logs,
    };
    Value::map().with("CloudWatchLogs", logs)
}

impl Kinesis {
    /// The channel a request's `member` names, or ResourceNotFoundException.
    fn channel(&self, ctx: &Context, input: &Value, member: &str) -> AwsResult<Channel> {
        let arn = input.str(member).unwrap_or_default();
        self.find_attached(ctx, &CHANNELS, arn, CHANNEL_COLUMNS, channel_from_row)?
            .ok_or_else(|| CHANNELS.missing(ctx, arn))
    }

    pub(crate) async fn create_channel(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("ChannelName").unwrap_or_default();
        super::check_name("channelName", name)?;
        let config = only_entry(input, "StreamConfigurationList", "stream")?;
        let record = config
            .get("RecordConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        let (member, destination) = destination(input, &record)?;
        let tags = tag_map(input.get("Tags"));
        if tags.len() > MAX_TAGS {
            return Err(CHANNELS.too_many_tags(name));
        }
        let stream = self.on_demand_source(ctx, &CHANNELS, config)?;
        self.check_name_free(ctx, &CHANNELS, name)?;
        let encryption = input.get("EncryptionConfiguration");
        if let Some(key_id) = encryption.and_then(|e| e.str("KeyId")) {
            if key_id == "alias/aws/kinesis" {
                return Err(AwsError::validation(
                    "The Kinesis Data Streams service key (alias/aws/kinesis) cannot encrypt a channel's destination; use a customer managed key.",
                ));
            }
            self.check_key(ctx, key_id).await?;
        }
        let id = crate::ids::uuid();
        let source = Value::map()
            .with("StreamARN", stream_arn(ctx, &stream.name))
            .with("RecordConfiguration", record);
        let settings = Value::map()
            .with_opt(
                "ServiceExecutionRoleARN",
                input.str("ServiceExecutionRoleARN"),
            )
            .with("StreamConfigurationList", Value::List(vec![source]))
            .with(member, destination)
            .with_opt("EncryptionConfiguration", encryption.cloned())
            .with(
                "LoggingConfiguration",
                logging(input.get("LoggingConfiguration"), name, &id),
            );
        let channel = Channel {
            id,
            name: name.to_string(),
            stream: stream.name.clone(),
            stream_created: stream.created,
            created: now_millis(),
            settings,
            tags,
        };
        self.store()?.with(|c| {
            c.execute_cached(
                &format!(
                    "INSERT INTO kinesis_channels (account, region, {CHANNEL_COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)"
                ),
                params![
                    ctx.account,
                    ctx.region,
                    channel.id,
                    channel.name,
                    channel.stream,
                    channel.stream_created,
                    channel.created,
                    channel.settings.to_json().to_string(),
                    tags::store_text(&channel.tags)
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("ChannelDescription", channel.describe(ctx, "CREATING")))
    }

    pub(crate) fn describe_channel(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let channel = self.channel(ctx, input, "ChannelARN")?;
        Ok(Value::map().with("ChannelDescription", channel.describe(ctx, "ACTIVE")))
    }

    pub(crate) fn list_channels(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let summaries = self
            .all_attached(ctx, &CHANNELS, CHANNEL_COLUMNS, channel_from_row)?
            .iter()
            .filter(|c| passes_filter(ctx, input, &c.stream, c.stream_created))
            .map(|c| c.summary(ctx))
            .collect();
        list_page(input, summaries, "ChannelSummaries")
    }

    pub(crate) fn update_channel(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut channel = self.channel(ctx, input, "ChannelARN")?;
        let kept = match channel.destination_type() {
            "S3" => "S3DestinationConfiguration",
            _ => "S3TablesDestinationConfiguration",
        };
        let other = match kept {
            "S3DestinationConfiguration" => "S3TablesDestinationConfiguration",
            _ => "S3DestinationConfiguration",
        };
        if input.get(other).is_some() {
            return Err(AwsError::validation(format!(
                "Channel {} delivers through {kept}; {other} cannot be updated.",
                channel.name
            )));
        }
        let logging_update = input.get("LoggingConfiguration");
        let destination_update = input.get(kept);
        if logging_update.is_none() && destination_update.is_none() {
            return Err(AwsError::validation(format!(
                "Specify {kept} or LoggingConfiguration to update channel {}.",
                channel.name
            )));
        }
        if let Some(update) = destination_update {
            let seconds = freshness(update)?;
            if let Some(destination) = channel.settings.get(kept).cloned() {
                let destination = destination.with("DataFreshnessInSeconds", seconds);
                channel.settings.insert(kept, destination);
            }
        }
        if logging_update.is_some() {
            let logs = logging(logging_update, &channel.name, &channel.id);
            channel.settings.insert("LoggingConfiguration", logs);
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE kinesis_channels SET settings = ?4
                 WHERE account = ?1 AND region = ?2 AND id = ?3",
                params![
                    ctx.account,
                    ctx.region,
                    channel.id,
                    channel.settings.to_json().to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("ChannelDescription", channel.describe(ctx, "UPDATING")))
    }

    pub(crate) fn delete_channel(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let channel = self.channel(ctx, input, "ChannelARN")?;
        self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM kinesis_channels WHERE account = ?1 AND region = ?2 AND id = ?3",
                [&ctx.account, &ctx.region, &channel.id],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }
}
