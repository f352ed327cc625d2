//! The `dynamodbstreams` service: ListStreams, DescribeStream, GetShardIterator, GetRecords.
//!
//! DynamoDB Streams is DynamoDB's second endpoint (its own json 1.0 model and target
//! prefix, signed with the `dynamodb` scope), reading the streams the table side writes
//! (see [`streams`](super::streams)); it shares the module's tables as the two endpoints
//! share one backend in AWS. Each stream has one shard, named from the stream's creation
//! time as AWS names shards (`shardId-00000001764694800123-1a2b3c4d`). A shard iterator
//! carries its stream, the last sequence number it has passed and when it was issued, so
//! it needs no state of its own and expires 15 minutes of the server clock after it was
//! issued. Lambda's event source mappings poll through the in-process dispatcher exactly
//! as AWS's pollers poll this API.

use std::io;
use std::sync::Arc;

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::{Connection, OptionalExtension};
use serde_json::Value as Json;

use super::attr::{item_from_json, item_to_value};
use super::streams::{self, last_seq, RETENTION_MILLIS};
use super::tables::load_table;

static SPEC: ServiceSpec = ServiceSpec {
    name: "dynamodbstreams",
    model: "dynamodbstreams",
    query_model: None,
    // Streams requests sign with the `dynamodb` scope; X-Amz-Target tells them apart.
    signing_names: &[],
    target_prefix: Some("DynamoDBStreams_20120810"),
    query_version: None,
    crc32_responses: true,
    validate_input: true,
};

/// How long a shard iterator stays usable.
const ITERATOR_MILLIS: i64 = 15 * 60 * 1000;
/// The most records one GetRecords returns.
const MAX_RECORDS: i64 = 1000;
/// The most record bytes one GetRecords returns (at least one record is always returned).
const MAX_RECORD_BYTES: i64 = 1024 * 1024;
/// The longest page ListStreams and DescribeStream return.
const MAX_PAGE: i64 = 100;
/// Sequence numbers are this plus the record's number, so they always have 21 digits.
const SEQUENCE_BASE: u128 = 100_000_000_000_000_000_000;

/// DynamoDB Streams.
pub struct DynamoDbStreams {
    env: Arc<Env>,
}

impl DynamoDbStreams {
    /// Creates the stream tables (shared with DynamoDB).
    pub fn new(env: Arc<Env>) -> io::Result<DynamoDbStreams> {
        env.store.migrate(super::SCHEMA)?;
        env.store.migrate(super::ttl::SCHEMA)?;
        env.store.migrate(streams::SCHEMA)?;
        Ok(DynamoDbStreams { env })
    }
}

impl Service for DynamoDbStreams {
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
            let input = &request.input;
            let now = now_millis();
            let output = self.env.store.transaction(|tx| match operation {
                "ListStreams" => list_streams(tx, ctx, input, now),
                "DescribeStream" => describe_stream(tx, ctx, input, now),
                "GetShardIterator" => get_shard_iterator(tx, ctx, input, now),
                "GetRecords" => get_records(tx, ctx, input, now),
                other => Err(AwsError::not_implemented(other)),
            })?;
            Ok(Response::new(output))
        })
    }
}

/// The decimal sequence number of a record.
fn sequence_number(seq: i64) -> String {
    (SEQUENCE_BASE + u128::try_from(seq).unwrap_or_default()).to_string()
}

/// The record number a sequence number names (numbers below the base name 0).
fn parse_sequence_number(text: &str) -> Option<i64> {
    if text.is_empty() || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let n: u128 = text.parse().ok()?;
    i64::try_from(n.saturating_sub(SEQUENCE_BASE)).ok()
}

fn invalid_stream_arn() -> AwsError {
    AwsError::validation("Invalid StreamArn")
}

fn stream_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Requested resource not found: Stream: {arn} not found"),
    )
    .with_status(400)
}

/// Checks that a text has the form of a stream ARN.
fn check_stream_arn(arn: &str) -> AwsResult<()> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    let well_formed = parts.len() == 6
        && parts[0] == "arn"
        && parts[2] == "dynamodb"
        && parts[5]
            .strip_prefix("table/")
            .and_then(|rest| rest.split_once("/stream/"))
            .is_some_and(|(table, label)| !table.is_empty() && !label.is_empty());
    if well_formed {
        Ok(())
    } else {
        Err(invalid_stream_arn())
    }
}

fn page_limit(input: &Value, max: i64) -> AwsResult<i64> {
    let limit = input.int("Limit").unwrap_or(max);
    if limit > max {
        return Err(AwsError::validation(format!(
            "1 validation error detected: Value '{limit}' at 'limit' failed to satisfy constraint: Member must have value less than or equal to {max}"
        )));
    }
    Ok(limit)
}

/// One stream's row.
struct Stream {
    arn: String,
    table: String,
    label: String,
    view_type: String,
    key_schema: Json,
    created: i64,
    first_seq: i64,
    trimmed_through: i64,
    disabled: Option<i64>,
}

impl Stream {
    const COLUMNS: &'static str = "arn, table_name, label, view_type, key_schema, created, first_seq, trimmed_through, disabled";

    fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stream> {
        Ok(Stream {
            arn: r.get(0)?,
            table: r.get(1)?,
            label: r.get(2)?,
            view_type: r.get(3)?,
            key_schema: serde_json::from_str(&r.get::<_, String>(4)?).unwrap_or(Json::Null),
            created: r.get(5)?,
            first_seq: r.get(6)?,
            trimmed_through: r.get(7)?,
            disabled: r.get(8)?,
        })
    }

    /// The one shard's id, from the stream's creation time and ARN.
    fn shard_id(&self) -> String {
        let tag = self.arn.bytes().fold(0x811c_9dc5_u32, |h, b| {
            (h ^ u32::from(b)).wrapping_mul(0x0100_0193)
        });
        format!("shardId-{:020}-{tag:08x}", self.created)
    }

    /// The record number before the shard's oldest record still kept.
    fn horizon(&self) -> i64 {
        self.trimmed_through.max(self.first_seq - 1)
    }
}

/// Forgets the streams disabled more than 24 hours ago, with their records.
fn forget_expired(conn: &Connection, ctx: &Context, now: i64) -> AwsResult<()> {
    let cutoff = now - RETENTION_MILLIS;
    let expired: Vec<String> = conn
        .prepare_cached(
            "SELECT arn FROM ddb_streams WHERE account = ?1 AND region = ?2 AND disabled < ?3",
        )?
        .query_map(rusqlite::params![ctx.account, ctx.region, cutoff], |r| {
            r.get(0)
        })?
        .collect::<rusqlite::Result<_>>()?;
    for arn in expired {
        conn.prepare_cached("DELETE FROM ddb_stream_records WHERE stream = ?1")?
            .execute([&arn])?;
        conn.prepare_cached(
            "DELETE FROM ddb_streams WHERE account = ?1 AND region = ?2 AND arn = ?3",
        )?
        .execute(rusqlite::params![ctx.account, ctx.region, arn])?;
    }
    Ok(())
}

/// The stream an ARN names, with its expired records trimmed.
fn load_stream(conn: &Connection, ctx: &Context, arn: &str, now: i64) -> AwsResult<Stream> {
    check_stream_arn(arn)?;
    forget_expired(conn, ctx, now)?;
    streams::trim(conn, ctx, arn, now)?;
    let sql = format!(
        "SELECT {} FROM ddb_streams WHERE account = ?1 AND region = ?2 AND arn = ?3",
        Stream::COLUMNS
    );
    conn.prepare_cached(&sql)?
        .query_row(
            rusqlite::params![ctx.account, ctx.region, arn],
            Stream::from_row,
        )
        .optional()?
        .ok_or_else(|| stream_not_found(arn))
}

fn list_streams(conn: &Connection, ctx: &Context, input: &Value, now: i64) -> AwsResult<Value> {
    let limit = page_limit(input, MAX_PAGE)?;
    let start = input.str("ExclusiveStartStreamArn");
    if let Some(start) = start {
        check_stream_arn(start)?;
    }
    let table = input.str("TableName");
    forget_expired(conn, ctx, now)?;
    let rows: Vec<(String, String, String)> = conn
        .prepare_cached(
            "SELECT arn, table_name, label FROM ddb_streams
             WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR table_name = ?3) AND arn > ?4
             ORDER BY arn LIMIT ?5",
        )?
        .query_map(
            rusqlite::params![
                ctx.account,
                ctx.region,
                table,
                start.unwrap_or_default(),
                limit + 1
            ],
            |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
        )?
        .collect::<rusqlite::Result<_>>()?;
    if let Some(name) = table {
        if rows.is_empty() && start.is_none() && load_table(conn, ctx, name)?.is_none() {
            return Err(AwsError::new(
                "ResourceNotFoundException",
                format!("Requested resource not found: Table: {name} not found"),
            )
            .with_status(400));
        }
    }
    let more = rows.len() as i64 > limit;
    let page: Vec<_> = rows
        .into_iter()
        .take(usize::try_from(limit).unwrap_or(0))
        .collect();
    let last = more
        .then(|| page.last().map(|(arn, _, _)| arn.clone()))
        .flatten();
    let listed = page
        .into_iter()
        .map(|(arn, table, label)| {
            Value::map()
                .with("StreamArn", arn)
                .with("TableName", table)
                .with("StreamLabel", label)
        })
        .collect();
    Ok(Value::map()
        .with("Streams", Value::List(listed))
        .with_opt("LastEvaluatedStreamArn", last))
}

fn describe_stream(conn: &Connection, ctx: &Context, input: &Value, now: i64) -> AwsResult<Value> {
    let arn = input.str("StreamArn").unwrap_or_default();
    page_limit(input, MAX_PAGE)?;
    let stream = load_stream(conn, ctx, arn, now)?;
    let shard_id = stream.shard_id();
    let mut range = Value::map().with(
        "StartingSequenceNumber",
        sequence_number(stream.horizon() + 1),
    );
    if stream.disabled.is_some() {
        let last: Option<i64> = conn
            .prepare_cached("SELECT MAX(seq) FROM ddb_stream_records WHERE stream = ?1")?
            .query_row([&stream.arn], |r| r.get(0))?;
        let ending = last.unwrap_or(stream.horizon()).max(stream.horizon() + 1);
        range.insert("EndingSequenceNumber", sequence_number(ending));
    }
    let after = input.str("ExclusiveStartShardId");
    let children_only = input.get("ShardFilter").is_some();
    let shards = if children_only || after.is_some_and(|a| a >= shard_id.as_str()) {
        Vec::new()
    } else {
        vec![Value::map()
            .with("ShardId", shard_id)
            .with("SequenceNumberRange", range)]
    };
    let status = if stream.disabled.is_some() {
        "DISABLED"
    } else {
        "ENABLED"
    };
    Ok(Value::map().with(
        "StreamDescription",
        Value::map()
            .with("StreamArn", stream.arn)
            .with("StreamLabel", stream.label)
            .with("StreamStatus", status)
            .with("StreamViewType", stream.view_type)
            .with("CreationRequestDateTime", Value::Timestamp(stream.created))
            .with("TableName", stream.table)
            .with("KeySchema", Value::from_json(&stream.key_schema))
            .with("Shards", Value::List(shards)),
    ))
}

/// What a shard iterator carries.
#[derive(Debug, PartialEq)]
struct ShardIterator {
    arn: String,
    /// The last record number the reader has passed.
    after: i64,
    /// When the iterator was issued (epoch millis).
    issued: i64,
}

impl ShardIterator {
    /// `<stream ARN>|1|<position and issue time>`, as AWS's iterators read.
    fn encode(&self) -> String {
        let mut token = Vec::with_capacity(16);
        token.extend_from_slice(&self.after.to_be_bytes());
        token.extend_from_slice(&self.issued.to_be_bytes());
        format!(
            "{}|1|{}",
            self.arn,
            base64::engine::general_purpose::STANDARD.encode(token)
        )
    }

    fn decode(text: &str) -> Option<ShardIterator> {
        let (arn, token) = text.split_once("|1|")?;
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(token)
            .ok()?;
        let (after, issued) = bytes.split_at_checked(8)?;
        Some(ShardIterator {
            arn: arn.to_string(),
            after: i64::from_be_bytes(after.try_into().ok()?),
            issued: i64::from_be_bytes(issued.try_into().ok()?),
        })
    }
}

fn trimmed() -> AwsError {
    AwsError::new(
        "TrimmedDataAccessException",
        "The data you are trying to access has been trimmed.",
    )
    .with_status(400)
}

fn get_shard_iterator(
    conn: &Connection,
    ctx: &Context,
    input: &Value,
    now: i64,
) -> AwsResult<Value> {
    let arn = input.str("StreamArn").unwrap_or_default();
    let kind = input.str("ShardIteratorType").unwrap_or_default();
    let sequence = input.str("SequenceNumber");
    let by_sequence = matches!(kind, "AT_SEQUENCE_NUMBER" | "AFTER_SEQUENCE_NUMBER");
    if by_sequence != sequence.is_some() {
        return Err(AwsError::validation(format!(
            "Must either specify (1) AT_SEQUENCE_NUMBER or AFTER_SEQUENCE_NUMBER and SequenceNumber or (2) TRIM_HORIZON, LATEST or AT_TIMESTAMP and no SequenceNumber. Request specified {kind}{}.",
            if sequence.is_some() { " and also a SequenceNumber" } else { " and no SequenceNumber" }
        )));
    }
    let position = sequence
        .map(|s| {
            parse_sequence_number(s)
                .ok_or_else(|| AwsError::validation(format!("Invalid SequenceNumber: {s}")))
        })
        .transpose()?;
    let stream = load_stream(conn, ctx, arn, now)?;
    if input.str("ShardId") != Some(stream.shard_id().as_str()) {
        return Err(AwsError::new(
            "ResourceNotFoundException",
            format!(
                "Requested resource not found: Shard: {} in Stream: {arn} not found",
                input.str("ShardId").unwrap_or_default()
            ),
        )
        .with_status(400));
    }
    let after = match (kind, position) {
        ("TRIM_HORIZON", _) => stream.horizon(),
        ("LATEST", _) => last_seq(conn)?.max(stream.horizon()),
        ("AT_SEQUENCE_NUMBER", Some(n)) => n - 1,
        ("AFTER_SEQUENCE_NUMBER", Some(n)) => n,
        ("AT_TIMESTAMP", _) => {
            let Some(Value::Timestamp(at)) = input.get("Timestamp") else {
                return Err(AwsError::validation(
                    "Timestamp must be specified when ShardIteratorType is AT_TIMESTAMP",
                ));
            };
            let first: Option<i64> = conn
                .prepare_cached(
                    "SELECT seq FROM ddb_stream_records WHERE stream = ?1 AND created >= ?2
                     ORDER BY seq LIMIT 1",
                )?
                .query_row(rusqlite::params![stream.arn, at], |r| r.get(0))
                .optional()?;
            first
                .map_or_else(|| last_seq(conn), |seq| Ok(seq - 1))?
                .max(stream.horizon())
        }
        _ => {
            return Err(AwsError::validation(format!(
                "Invalid ShardIteratorType: {kind}"
            )))
        }
    };
    if after < stream.trimmed_through {
        return Err(trimmed());
    }
    let iterator = ShardIterator {
        arn: stream.arn,
        after,
        issued: now,
    };
    Ok(Value::map().with("ShardIterator", iterator.encode()))
}

fn get_records(conn: &Connection, ctx: &Context, input: &Value, now: i64) -> AwsResult<Value> {
    let limit = page_limit(input, MAX_RECORDS)?;
    let given = input.str("ShardIterator").unwrap_or_default();
    let iterator = ShardIterator::decode(given)
        .filter(|i| check_stream_arn(&i.arn).is_ok())
        .ok_or_else(|| AwsError::validation("Invalid ShardIterator"))?;
    if now - iterator.issued > ITERATOR_MILLIS {
        return Err(AwsError::new(
            "ExpiredIteratorException",
            "The provided iterator exceeds the maximum age allowed.",
        )
        .with_status(400));
    }
    let stream = load_stream(conn, ctx, &iterator.arn, now)?;
    if iterator.after < stream.trimmed_through {
        return Err(trimmed());
    }
    let rows: Vec<(i64, i64, String)> = conn
        .prepare_cached(
            "SELECT seq, created, record FROM ddb_stream_records WHERE stream = ?1 AND seq > ?2
             ORDER BY seq LIMIT ?3",
        )?
        .query_map(rusqlite::params![stream.arn, iterator.after, limit], |r| {
            Ok((r.get(0)?, r.get(1)?, r.get(2)?))
        })?
        .collect::<rusqlite::Result<_>>()?;
    let fetched = rows.len();
    let mut records = Vec::new();
    let mut bytes = 0;
    let mut after = iterator.after;
    for (seq, created, text) in rows {
        let record: Json = serde_json::from_str(&text)
            .map_err(|_| AwsError::internal("a stored stream record is unreadable"))?;
        let size = record["SizeBytes"].as_i64().unwrap_or(1);
        if !records.is_empty() && bytes + size > MAX_RECORD_BYTES {
            break;
        }
        bytes += size;
        records.push(record_value(&stream, &ctx.region, seq, created, &record)?);
        after = seq;
    }
    let at_end = records.len() == fetched && (fetched as i64) < limit;
    let next = (stream.disabled.is_none() || !at_end).then(|| {
        ShardIterator {
            arn: stream.arn.clone(),
            after,
            issued: now,
        }
        .encode()
    });
    Ok(Value::map()
        .with("Records", Value::List(records))
        .with_opt("NextShardIterator", next))
}

/// A stored record in the shape GetRecords returns.
fn record_value(
    stream: &Stream,
    region: &str,
    seq: i64,
    created: i64,
    record: &Json,
) -> AwsResult<Value> {
    let image = |member: &str| -> AwsResult<Option<Value>> {
        record
            .get(member)
            .map(|json| {
                item_from_json(json)
                    .map(|item| item_to_value(&item))
                    .ok_or_else(|| AwsError::internal("a stored stream record is unreadable"))
            })
            .transpose()
    };
    let keys = image("Keys")?.unwrap_or_else(Value::map);
    let change = Value::map()
        .with(
            "ApproximateCreationDateTime",
            Value::Timestamp(created - created.rem_euclid(1000)),
        )
        .with("Keys", keys)
        .with_opt("NewImage", image("NewImage")?)
        .with_opt("OldImage", image("OldImage")?)
        .with("SequenceNumber", sequence_number(seq))
        .with("SizeBytes", record["SizeBytes"].as_i64().unwrap_or(1))
        .with("StreamViewType", stream.view_type.as_str());
    let identity = (record["TimeToLive"].as_bool() == Some(true)).then(|| {
        Value::map()
            .with("PrincipalId", "dynamodb.amazonaws.com")
            .with("Type", "Service")
    });
    Ok(Value::map()
        .with("eventID", record["eventID"].as_str().unwrap_or_default())
        .with(
            "eventName",
            record["eventName"].as_str().unwrap_or_default(),
        )
        .with("eventVersion", "1.1")
        .with("eventSource", "aws:dynamodb")
        .with("awsRegion", region)
        .with("dynamodb", change)
        .with_opt("userIdentity", identity))
}

#[cfg(test)]
mod tests {
    use super::*;
    use roto_core::store::{Store, StoreMode};
    use roto_core::Dispatcher;
    use serde_json::json;

    #[test]
    fn sequence_numbers_have_21_digits_and_round_trip() {
        assert_eq!(sequence_number(1), "100000000000000000001");
        assert_eq!(sequence_number(1).len(), 21);
        assert!(sequence_number(9) < sequence_number(10));
        assert_eq!(parse_sequence_number(&sequence_number(42)), Some(42));
        assert_eq!(parse_sequence_number("000000000000000000005"), Some(0));
        assert_eq!(parse_sequence_number("12x"), None);
        assert_eq!(parse_sequence_number(""), None);
    }

    #[test]
    fn iterators_round_trip_and_reject_garbage() {
        let iterator = ShardIterator {
            arn: "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"
                .into(),
            after: 17,
            issued: 1_767_225_600_000,
        };
        let text = iterator.encode();
        assert!(text.starts_with(&format!("{}|1|", iterator.arn)));
        assert_eq!(ShardIterator::decode(&text), Some(iterator));
        assert_eq!(ShardIterator::decode("no separator"), None);
        assert_eq!(ShardIterator::decode("arn|1|!!!"), None);
        assert_eq!(ShardIterator::decode("arn|1|AAAA"), None);
    }

    #[test]
    fn stream_arns_are_checked_for_form() {
        assert!(check_stream_arn(
            "arn:aws:dynamodb:us-east-1:000000000000:table/t/stream/2026-01-01T00:00:00.000"
        )
        .is_ok());
        for bad in [
            "sdfadfsdfnlfkajakfgjalksfgklasjklasdjfklasdfasdfgasf",
            "arn:aws:dynamodb:us-east-1:000000000000:table/t",
            "arn:aws:s3:us-east-1:000000000000:table/t/stream/x",
        ] {
            assert_eq!(
                check_stream_arn(bad).unwrap_err().message,
                "Invalid StreamArn"
            );
        }
    }

    #[tokio::test]
    async fn pollers_read_changes_through_the_in_process_dispatcher() {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            100,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        let services: Vec<Arc<dyn Service>> = vec![
            Arc::new(super::super::DynamoDb::new(env.clone()).unwrap()),
            Arc::new(DynamoDbStreams::new(env.clone()).unwrap()),
        ];
        let dispatcher = Dispatcher::start(env, services);
        let ctx = dispatcher.default_context();
        let call = |service: &'static str, operation: &'static str, input: Json| {
            let dispatcher = dispatcher.clone();
            let ctx = ctx.clone();
            async move {
                dispatcher
                    .call(&ctx, service, operation, Value::from_json(&input))
                    .await
                    .unwrap()
            }
        };
        call(
            "dynamodb",
            "CreateTable",
            json!({
                "TableName": "orders",
                "BillingMode": "PAY_PER_REQUEST",
                "AttributeDefinitions": [{"AttributeName": "id", "AttributeType": "S"}],
                "KeySchema": [{"AttributeName": "id", "KeyType": "HASH"}],
                "StreamSpecification": {"StreamEnabled": true, "StreamViewType": "NEW_IMAGE"},
            }),
        )
        .await;
        let put = |n: &'static str| {
            call(
                "dynamodb",
                "PutItem",
                json!({"TableName": "orders", "Item": {"id": {"S": "o1"}, "n": {"N": n}}}),
            )
        };
        put("1").await;
        let listed = call(
            "dynamodbstreams",
            "ListStreams",
            json!({"TableName": "orders"}),
        )
        .await;
        let arn = listed.get("Streams").and_then(Value::as_list).unwrap()[0]
            .str("StreamArn")
            .unwrap()
            .to_string();
        let described = call(
            "dynamodbstreams",
            "DescribeStream",
            json!({"StreamArn": arn}),
        )
        .await;
        let shard = described
            .get("StreamDescription")
            .and_then(|d| d.get("Shards"))
            .and_then(Value::as_list)
            .unwrap()[0]
            .str("ShardId")
            .unwrap()
            .to_string();
        let iterator = call(
            "dynamodbstreams",
            "GetShardIterator",
            json!({"StreamArn": arn, "ShardId": shard, "ShardIteratorType": "TRIM_HORIZON"}),
        )
        .await;
        let iterator = iterator.str("ShardIterator").unwrap().to_string();
        let events = |page: &Value| -> Vec<String> {
            page.get("Records")
                .and_then(Value::as_list)
                .unwrap()
                .iter()
                .map(|r| r.str("eventName").unwrap().to_string())
                .collect()
        };
        let page = call(
            "dynamodbstreams",
            "GetRecords",
            json!({"ShardIterator": iterator}),
        )
        .await;
        assert_eq!(events(&page), ["INSERT"]);
        let next = page.str("NextShardIterator").unwrap().to_string();
        put("2").await;
        let page = call(
            "dynamodbstreams",
            "GetRecords",
            json!({"ShardIterator": next}),
        )
        .await;
        assert_eq!(events(&page), ["MODIFY"]);
        let record = &page.get("Records").and_then(Value::as_list).unwrap()[0];
        let image = record
            .get("dynamodb")
            .and_then(|d| d.get("NewImage"))
            .unwrap();
        assert_eq!(image.get("n").and_then(|n| n.str("N")), Some("2"));
    }
}
