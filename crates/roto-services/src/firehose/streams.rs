//! Delivery stream operations: create, describe, list, delete, UpdateDestination, tags and
//! server-side encryption.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;
use serde_json::{json, Value as Json};

use super::destinations::{self, SECRETS};
use super::{invalid_argument, not_found, stream_arn, DeliveryStream, Inner, DESTINATION_ID};

/// The most tags a stream may carry.
const MAX_TAGS: usize = 50;
/// ListDeliveryStreams' default page.
const DEFAULT_LIST_LIMIT: usize = 10;

/// `{Key, Value}` pairs as `(key, value)`.
fn tag_pairs(tags: Option<&Value>) -> Vec<(String, String)> {
    tags.and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(|t| {
            (
                t.str("Key").unwrap_or_default().to_string(),
                t.str("Value").unwrap_or_default().to_string(),
            )
        })
        .collect()
}

/// `tags` with `new` laid over them, a key given again taking its new value.
fn with_tags(mut tags: Vec<(String, String)>, new: Vec<(String, String)>) -> Vec<(String, String)> {
    for (k, v) in new {
        match tags.iter_mut().find(|(have, _)| *have == k) {
            Some(slot) => slot.1 = v,
            None => tags.push((k, v)),
        }
    }
    tags
}

fn too_many_tags(name: &str) -> AwsError {
    AwsError::new(
        "LimitExceededException",
        format!("Firehose {name} cannot have more than {MAX_TAGS} tags."),
    )
}

/// The encryption a create request asks for, as described.
fn encryption_input(input: Option<&Value>) -> AwsResult<Option<Json>> {
    let Some(input) = input else {
        return Ok(None);
    };
    let key_type = input.str("KeyType").unwrap_or("AWS_OWNED_CMK");
    let key = input.str("KeyARN");
    match (key_type, key) {
        ("CUSTOMER_MANAGED_CMK", None) => Err(invalid_argument(
            "KeyARN is required when KeyType is CUSTOMER_MANAGED_CMK.",
        )),
        ("AWS_OWNED_CMK", Some(_)) => Err(invalid_argument(
            "KeyARN must not be specified when KeyType is AWS_OWNED_CMK.",
        )),
        _ => Ok(Some(json!({
            "KeyType": key_type,
            "KeyARN": key,
            "Status": "ENABLED",
        }))),
    }
}

impl Inner {
    pub(super) async fn create_delivery_stream(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = input.str("DeliveryStreamName").unwrap_or_default();
        let kind = input.str("DeliveryStreamType").unwrap_or("DirectPut");
        let request = input.to_json();
        let (dest_kind, config) = destinations::the_one(&request, "DestinationConfiguration")?;
        let source = self.source_of(ctx, kind, input).await?;
        let encryption = encryption_input(input.get("DeliveryStreamEncryptionConfigurationInput"))?;
        if encryption.is_some() && kind == "KinesisStreamAsSource" {
            return Err(invalid_argument(
                "Encryption is not supported for a Firehose stream whose source is a Kinesis data stream.",
            ));
        }
        let destination = destinations::describe(dest_kind, config)?;
        let tags = tag_pairs(input.get("Tags"));
        if tags.len() > MAX_TAGS {
            return Err(too_many_tags(name));
        }
        let now = now_millis();
        let inserted = self.store()?.transaction(|tx| -> AwsResult<_> {
            Ok(tx
                .prepare_cached(
                    "INSERT OR IGNORE INTO firehose_streams
                     (account, region, name, kind, created, version, source, destination,
                      encryption, tags)
                     VALUES (?1, ?2, ?3, ?4, ?5, 1, ?6, ?7, ?8, ?9)",
                )?
                .execute(params![
                    ctx.account,
                    ctx.region,
                    name,
                    kind,
                    now,
                    source.as_ref().map(Json::to_string),
                    destination.to_string(),
                    encryption.as_ref().map(Json::to_string),
                    serde_json::to_string(&tags).unwrap_or_default(),
                ])?)
        })?;
        if inserted == 0 {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!(
                    "Firehose {name} under accountId {} already exists",
                    ctx.account
                ),
            ));
        }
        self.wake.notify_one();
        Ok(Value::map().with(
            "DeliveryStreamARN",
            stream_arn(&ctx.account, &ctx.region, name),
        ))
    }

    /// The source description a create request asks for.
    async fn source_of(&self, ctx: &Context, kind: &str, input: &Value) -> AwsResult<Option<Json>> {
        let config = input.get("KinesisStreamSourceConfiguration");
        match (kind, config) {
            ("KinesisStreamAsSource", Some(config)) => {
                let arn = config.str("KinesisStreamARN").unwrap_or_default();
                super::source::check_stream(&self.env, ctx, arn).await?;
                Ok(Some(json!({
                    "KinesisStreamARN": arn,
                    "RoleARN": config.str("RoleARN"),
                    "DeliveryStartTimestamp": now_millis(),
                })))
            }
            ("KinesisStreamAsSource", None) => Err(invalid_argument(
                "KinesisSourceStreamConfig is required for KinesisStreamAsSource stream type",
            )),
            (_, Some(_)) => Err(invalid_argument(
                "KinesisSourceStreamConfig is only applicable for KinesisStreamAsSource stream type",
            )),
            ("DirectPut", None) => Ok(None),
            (other, None) => Err(invalid_argument(format!(
                "{other} is not supported as a source by this Firehose."
            ))),
        }
    }

    pub(super) fn describe_delivery_stream(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        Ok(Value::map().with("DeliveryStreamDescription", description(ctx, &stream)))
    }

    pub(super) fn list_delivery_streams(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let limit = input
            .int("Limit")
            .map_or(DEFAULT_LIST_LIMIT, |l| l.max(1) as usize);
        let kind = input.str("DeliveryStreamType");
        let after = input.str("ExclusiveStartDeliveryStreamName").unwrap_or("");
        let names: Vec<String> = self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name FROM firehose_streams
                 WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR kind = ?3) AND name > ?4
                 ORDER BY name LIMIT ?5",
            )?;
            let rows = stmt.query_map(
                params![ctx.account, ctx.region, kind, after, limit as i64 + 1],
                |r| r.get(0),
            )?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })?;
        let more = names.len() > limit;
        Ok(Value::map()
            .with(
                "DeliveryStreamNames",
                Value::List(names.into_iter().take(limit).map(Value::from).collect()),
            )
            .with("HasMoreDeliveryStreams", more))
    }

    pub(super) fn delete_delivery_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("DeliveryStreamName").unwrap_or_default();
        let removed = self.store()?.transaction(|tx| -> AwsResult<_> {
            let removed = tx
                .prepare_cached(
                    "DELETE FROM firehose_streams WHERE account = ?1 AND region = ?2 AND name = ?3",
                )?
                .execute(params![ctx.account, ctx.region, name])?;
            for table in ["firehose_buffer", "firehose_checkpoints"] {
                tx.execute_cached(
                    &format!(
                        "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND stream = ?3"
                    ),
                    params![ctx.account, ctx.region, name],
                )?;
            }
            Ok(removed)
        })?;
        if removed == 0 {
            return Err(not_found(ctx, name));
        }
        Ok(Value::map())
    }

    pub(super) fn update_destination(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        let given = input
            .str("CurrentDeliveryStreamVersionId")
            .unwrap_or_default();
        if given != stream.version.to_string() {
            return Err(AwsError::new(
                "ConcurrentModificationException",
                format!(
                    "Cannot update firehose: {} since the current version id: {} and specified version id: {given} do not match",
                    stream.name, stream.version
                ),
            ));
        }
        let id = input.str("DestinationId").unwrap_or_default();
        if id != DESTINATION_ID {
            return Err(invalid_argument(format!("Destination Id {id} not found")));
        }
        let request = input.to_json();
        let (kind, update) = destinations::the_one(&request, "DestinationUpdate")?;
        let next = destinations::apply_update(&stream.destination, kind, update)?;
        self.store()?.transaction(|tx| -> AwsResult<_> {
            tx.prepare_cached(
                "UPDATE firehose_streams SET destination = ?4, version = version + 1, updated = ?5
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
            )?
            .execute(params![
                ctx.account,
                ctx.region,
                stream.name,
                next.to_string(),
                now_millis()
            ])?;
            Ok(())
        })?;
        self.wake.notify_one();
        Ok(Value::map())
    }

    fn save_column(
        &self,
        ctx: &Context,
        name: &str,
        column: &str,
        value: Option<String>,
    ) -> AwsResult<()> {
        self.store()?.transaction(|tx| -> AwsResult<_> {
            tx.execute_cached(
                &format!(
                    "UPDATE firehose_streams SET {column} = ?4
                     WHERE account = ?1 AND region = ?2 AND name = ?3"
                ),
                params![ctx.account, ctx.region, name, value],
            )?;
            Ok(())
        })
    }

    pub(super) fn tag_delivery_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        let tags = with_tags(stream.tags, tag_pairs(input.get("Tags")));
        if tags.len() > MAX_TAGS {
            return Err(too_many_tags(&stream.name));
        }
        let text = serde_json::to_string(&tags).unwrap_or_default();
        self.save_column(ctx, &stream.name, "tags", Some(text))?;
        Ok(Value::map())
    }

    pub(super) fn untag_delivery_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut stream = self.stream(ctx, input)?;
        let keys: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        stream.tags.retain(|(k, _)| !keys.contains(&k.as_str()));
        let text = serde_json::to_string(&stream.tags).unwrap_or_default();
        self.save_column(ctx, &stream.name, "tags", Some(text))?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_for_delivery_stream(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        let limit = input.int("Limit").map_or(MAX_TAGS, |l| l.max(1) as usize);
        let after = input.str("ExclusiveStartTagKey");
        let start = after
            .and_then(|a| stream.tags.iter().position(|(k, _)| k == a))
            .map_or(0, |i| i + 1);
        let page: Vec<Value> = stream.tags[start..]
            .iter()
            .take(limit)
            .map(|(k, v)| {
                Value::map()
                    .with("Key", k.as_str())
                    .with("Value", v.as_str())
            })
            .collect();
        Ok(Value::map()
            .with("HasMoreTags", stream.tags.len() > start + limit)
            .with("Tags", Value::List(page)))
    }

    pub(super) fn start_encryption(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        if stream.kind == "KinesisStreamAsSource" {
            return Err(invalid_argument(format!(
                "Firehose {} is a KinesisStreamAsSource stream: encryption is not supported for it.",
                stream.name
            )));
        }
        let requested = input
            .get("DeliveryStreamEncryptionConfigurationInput")
            .cloned()
            .unwrap_or_else(|| Value::map().with("KeyType", "AWS_OWNED_CMK"));
        let encryption = encryption_input(Some(&requested))?;
        let text = encryption.as_ref().map(Json::to_string);
        self.save_column(ctx, &stream.name, "encryption", text)?;
        Ok(Value::map())
    }

    pub(super) fn stop_encryption(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let stream = self.stream(ctx, input)?;
        let off = json!({"Status": "DISABLED"}).to_string();
        self.save_column(ctx, &stream.name, "encryption", Some(off))?;
        Ok(Value::map())
    }
}

/// A stream as DescribeDeliveryStream shows it.
fn description(ctx: &Context, stream: &DeliveryStream) -> Value {
    let mut destination = stream.destination.clone();
    if let Some(object) = destination.as_object_mut() {
        object.remove(SECRETS);
        object.insert("DestinationId".into(), json!(DESTINATION_ID));
    }
    let encryption = stream
        .encryption
        .clone()
        .unwrap_or_else(|| json!({"Status": "DISABLED"}));
    let source = stream.source.as_ref().map(|kinesis| {
        Value::map().with(
            "KinesisStreamSourceDescription",
            source_description(kinesis),
        )
    });
    let status = if now_millis() >= stream.created {
        "ACTIVE"
    } else {
        "CREATING"
    };
    Value::map()
        .with("DeliveryStreamName", stream.name.as_str())
        .with(
            "DeliveryStreamARN",
            stream_arn(&ctx.account, &ctx.region, &stream.name),
        )
        .with("DeliveryStreamStatus", status)
        .with("DeliveryStreamType", stream.kind.as_str())
        .with("VersionId", stream.version.to_string())
        .with("CreateTimestamp", Value::Timestamp(stream.created))
        .with_opt("LastUpdateTimestamp", stream.updated.map(Value::Timestamp))
        .with(
            "DeliveryStreamEncryptionConfiguration",
            Value::from_json(&without_nulls(encryption)),
        )
        .with_opt("Source", source)
        .with(
            "Destinations",
            Value::List(vec![Value::from_json(&destination)]),
        )
        .with("HasMoreDestinations", false)
}

/// A Kinesis source as described (its start a timestamp).
fn source_description(kinesis: &Json) -> Value {
    let mut value = Value::from_json(&without_nulls(kinesis.clone()));
    if let Some(start) = kinesis.get("DeliveryStartTimestamp").and_then(Json::as_i64) {
        value.insert("DeliveryStartTimestamp", Value::Timestamp(start));
    }
    value
}

fn without_nulls(mut json: Json) -> Json {
    if let Some(object) = json.as_object_mut() {
        object.retain(|_, v| !v.is_null());
    }
    json
}
