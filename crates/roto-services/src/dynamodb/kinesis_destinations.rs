//! Kinesis Data Streams destinations: Enable, Disable, Describe and
//! UpdateKinesisStreamingDestination, and the item changes they put on the stream.
//!
//! A destination is a row of `ddb_kinesis_destinations` per table and stream ARN. Status
//! transitions complete at once, as Roto's other services' do: Enable answers `ENABLING` and
//! the first read after it shows `ACTIVE`, or `ENABLE_FAILED` with AWS's description when
//! Kinesis (asked through the dispatcher, never its tables) does not know the stream;
//! Disable answers `DISABLING` and leaves a `DISABLED` entry, Update answers `UPDATING`. A
//! table has at most one destination that is not `DISABLED` or `ENABLE_FAILED`, as in AWS.
//!
//! While a destination is `ACTIVE`, every item change reaches [`capture`] from the one
//! writer of items, in the write's own transaction, which appends AWS's record (the change
//! with both images, `tableName`, `recordFormat`) to `ddb_kinesis_outbox`; so a record exists
//! exactly when the change does. After the request (and after each Time to Live sweep),
//! [`relay`] moves the outbox, in order, onto the event bus as deliveries to DynamoDB itself,
//! whose [`deliver`] puts each record on the stream with Kinesis' own PutRecord.

use md5::{Digest, Md5};
use roto_core::events::{DeliveryError, Event};
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Env, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::json;

use super::attr::{item_json, item_size, Item};
use super::key::EncodedKey;
use super::streams::{event_name, keys_of, Origin};
use super::tables::{load_table, table_arn, table_name, table_not_found, Table};
use super::{outbox, DynamoDb};

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_kinesis_destinations (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    stream_arn TEXT NOT NULL,
    status TEXT NOT NULL,
    description TEXT,
    precision TEXT,
    changed INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name, stream_arn)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_kinesis_outbox (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    stream_arn TEXT NOT NULL,
    partition_key TEXT NOT NULL,
    record TEXT NOT NULL
);
";

/// The event kind of a record on its way to a stream.
pub const KIND: &str = "dynamodb:KinesisStreamingDestination";

/// How many times the bus tries to put a record on its stream.
const ATTEMPTS: u32 = 4;

/// What AWS says of a destination whose stream it could not use.
const CANNOT_USE: &str = "User does not have a permission to use kinesis stream";

/// AWS's prefix of every refusal for the destination's state.
const INVALID_STATE: &str = "Table is not in a valid state to enable Kinesis Streaming Destination";

/// A stream ARN's parts: (account, region), when it has the form of a Kinesis stream's.
fn stream_arn_parts(arn: &str) -> Option<(&str, &str)> {
    let parts: Vec<&str> = arn.splitn(6, ':').collect();
    match parts.as_slice() {
        ["arn", partition, "kinesis", region, account, resource]
            if partition.starts_with("aws")
                && !region.is_empty()
                && account.len() == 12
                && account.bytes().all(|b| b.is_ascii_digit())
                && resource
                    .strip_prefix("stream/")
                    .is_some_and(|name| !name.is_empty() && !name.contains('/')) =>
        {
            Some((account, region))
        }
        _ => None,
    }
}

fn invalid_state(detail: &str) -> AwsError {
    AwsError::validation(format!("{INVALID_STATE}: {detail}"))
}

/// One destination as stored.
struct Destination {
    stream_arn: String,
    status: String,
    description: Option<String>,
    precision: Option<String>,
}

impl Destination {
    fn describe(&self) -> Value {
        let mut entry = Value::map()
            .with("StreamArn", self.stream_arn.as_str())
            .with("DestinationStatus", self.status.as_str());
        if let Some(description) = &self.description {
            entry = entry.with("DestinationStatusDescription", description.as_str());
        }
        if let Some(precision) = &self.precision {
            entry = entry.with("ApproximateCreationDateTimePrecision", precision.as_str());
        }
        entry
    }

    /// Whether it counts against the table's one live destination.
    fn live(&self) -> bool {
        !matches!(self.status.as_str(), "DISABLED" | "ENABLE_FAILED")
    }
}

/// A table's destinations, the most recently changed first.
fn destinations(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<Vec<Destination>> {
    let mut select = conn.prepare_cached(
        "SELECT stream_arn, status, description, precision FROM ddb_kinesis_destinations
         WHERE account = ?1 AND region = ?2 AND table_name = ?3 ORDER BY changed DESC",
    )?;
    let rows = select.query_map(rusqlite::params![ctx.account, ctx.region, table], |r| {
        Ok(Destination {
            stream_arn: r.get(0)?,
            status: r.get(1)?,
            description: r.get(2)?,
            precision: r.get(3)?,
        })
    })?;
    Ok(rows.collect::<rusqlite::Result<_>>()?)
}

/// Records a destination's new state.
fn save(conn: &Connection, ctx: &Context, table: &str, d: &Destination) -> AwsResult<()> {
    conn.prepare_cached(
        "INSERT OR REPLACE INTO ddb_kinesis_destinations
         (account, region, table_name, stream_arn, status, description, precision, changed)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table,
        d.stream_arn,
        d.status,
        d.description,
        d.precision,
        now_millis()
    ])?;
    Ok(())
}

/// Forgets a deleted table's destinations.
pub fn forget(conn: &Connection, ctx: &Context, table: &str) -> AwsResult<()> {
    conn.prepare_cached(
        "DELETE FROM ddb_kinesis_destinations
         WHERE account = ?1 AND region = ?2 AND table_name = ?3",
    )?
    .execute(rusqlite::params![ctx.account, ctx.region, table])?;
    Ok(())
}

/// Whether any destination is active, so that requests relay the outbox.
pub fn any_active(conn: &Connection) -> AwsResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM ddb_kinesis_destinations WHERE status = 'ACTIVE' LIMIT 1")?
        .query_row([], |_| Ok(()))
        .optional()?
        .is_some())
}

/// The precision a configuration member asks for.
fn precision_of(input: &Value, member: &str) -> Option<String> {
    input
        .get(member)
        .and_then(|c| c.str("ApproximateCreationDateTimePrecision"))
        .map(str::to_string)
}

impl DynamoDb {
    /// The table a request names, and its destinations; ResourceNotFoundException for a
    /// missing table.
    fn table_destinations(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(String, Vec<Destination>)> {
        let name = table_name(input)?;
        self.env.store.with(|c| {
            load_table(c, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            Ok((name.clone(), destinations(c, ctx, &name)?))
        })
    }

    /// EnableKinesisStreamingDestination: `ACTIVE` at once when Kinesis knows the stream,
    /// else `ENABLE_FAILED`.
    pub(super) async fn enable_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("StreamArn").unwrap_or_default();
        let (table, existing) = self.table_destinations(ctx, input)?;
        let Some((account, region)) = stream_arn_parts(arn) else {
            return Err(AwsError::validation(format!("Invalid StreamArn: {arn}")));
        };
        if existing.iter().any(Destination::live) {
            return Err(invalid_state(
                "EnableKinesisStreamingDestination must be DISABLED or ENABLE_FAILED to perform ENABLE operation.",
            ));
        }
        let known = self.stream_exists(account, region, arn).await;
        let destination = Destination {
            stream_arn: arn.to_string(),
            status: if known { "ACTIVE" } else { "ENABLE_FAILED" }.to_string(),
            description: (!known).then(|| CANNOT_USE.to_string()),
            precision: precision_of(input, "EnableKinesisStreamingConfiguration"),
        };
        self.env
            .store
            .transaction(|tx| save(tx, ctx, &table, &destination))?;
        if known {
            self.kinesis_active
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        let configuration = input
            .get("EnableKinesisStreamingConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        Ok(Value::map()
            .with("TableName", table)
            .with("StreamArn", arn)
            .with("DestinationStatus", "ENABLING")
            .with("EnableKinesisStreamingConfiguration", configuration))
    }

    /// Whether Kinesis knows the stream (DescribeStreamSummary through the dispatcher).
    async fn stream_exists(&self, account: &str, region: &str, arn: &str) -> bool {
        let Some(dispatcher) = self.env.dispatcher() else {
            return false;
        };
        let ctx = Context::internal(account, region);
        let input = Value::map().with("StreamARN", arn);
        dispatcher
            .call(&ctx, "kinesis", "DescribeStreamSummary", input)
            .await
            .is_ok()
    }

    /// DisableKinesisStreamingDestination: an `ACTIVE` destination becomes `DISABLED`.
    pub(super) fn disable_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("StreamArn").unwrap_or_default();
        let (table, existing) = self.table_destinations(ctx, input)?;
        if input.get("EnableKinesisStreamingConfiguration").is_some() {
            return Err(AwsError::validation(
                "Stream cannot be disabled using EnableKinesisStreamingConfiguration parameters",
            ));
        }
        let Some(mut destination) = existing
            .into_iter()
            .find(|d| d.stream_arn == arn && d.status == "ACTIVE")
        else {
            return Err(invalid_state(
                "KinesisStreamingDestination must be ACTIVE to perform DISABLE operation.",
            ));
        };
        destination.status = "DISABLED".to_string();
        self.env
            .store
            .transaction(|tx| save(tx, ctx, &table, &destination))?;
        Ok(Value::map()
            .with("TableName", table)
            .with("StreamArn", arn)
            .with("DestinationStatus", "DISABLING"))
    }

    /// UpdateKinesisStreamingDestination: an `ACTIVE` destination's timestamp precision.
    pub(super) fn update_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("StreamArn").unwrap_or_default();
        let (table, existing) = self.table_destinations(ctx, input)?;
        let Some(mut destination) = existing.into_iter().find(|d| d.stream_arn == arn) else {
            return Err(invalid_state(&format!(
                "No streaming destination with streamArn: {arn} found for table with tableName: {table}"
            )));
        };
        if destination.status != "ACTIVE" {
            return Err(invalid_state(&format!(
                "Kinesis streaming is not in ACTIVE state. Updates are only allowed in ACTIVE state. TableName: {table}"
            )));
        }
        let configuration = input
            .get("UpdateKinesisStreamingConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        if let Some(precision) = precision_of(input, "UpdateKinesisStreamingConfiguration") {
            destination.precision = Some(precision);
        }
        self.env
            .store
            .transaction(|tx| save(tx, ctx, &table, &destination))?;
        Ok(Value::map()
            .with("TableName", table)
            .with("StreamArn", arn)
            .with("DestinationStatus", "UPDATING")
            .with("UpdateKinesisStreamingConfiguration", configuration))
    }

    pub(super) fn describe_kinesis_streaming_destination(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (table, existing) = self.table_destinations(ctx, input)?;
        Ok(Value::map().with("TableName", table).with(
            "KinesisDataStreamDestinations",
            Value::List(existing.iter().map(Destination::describe).collect()),
        ))
    }
}

/// Appends an item change to the outbox of the table's active destination, if it has one:
/// AWS's record with both images, whatever the table's own stream shows.
#[allow(clippy::too_many_arguments)]
pub fn capture(
    conn: &Connection,
    ctx: &Context,
    table: &Table,
    key: &EncodedKey,
    old: Option<&Item>,
    new: Option<&Item>,
    origin: Origin,
    now: i64,
) -> AwsResult<()> {
    let active: Option<(String, Option<String>)> = conn
        .prepare_cached(
            "SELECT stream_arn, precision FROM ddb_kinesis_destinations
             WHERE account = ?1 AND region = ?2 AND table_name = ?3 AND status = 'ACTIVE'",
        )?
        .query_row(
            rusqlite::params![ctx.account, ctx.region, table.name],
            |r| Ok((r.get(0)?, r.get(1)?)),
        )
        .optional()?;
    let (Some((stream_arn, precision)), Some(item)) = (active, new.or(old)) else {
        return Ok(());
    };
    let created = match precision.as_deref() {
        Some("MICROSECOND") => now.saturating_mul(1000),
        _ => now,
    };
    let record = record(
        ctx,
        table,
        &keys_of(table, item),
        (old, new),
        origin,
        created,
    );
    let mut digest = Md5::new();
    digest.update(&key.0);
    digest.update(&key.1);
    let partition_key = format!("{:032X}", u128::from_be_bytes(digest.finalize().into()));
    conn.prepare_cached(
        "INSERT INTO ddb_kinesis_outbox
         (account, region, table_name, stream_arn, partition_key, record)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
    )?
    .execute(rusqlite::params![
        ctx.account,
        ctx.region,
        table.name,
        stream_arn,
        partition_key,
        record.to_string()
    ])?;
    Ok(())
}

/// AWS's record of one item change (`old`, `new`) on a Kinesis destination, made at
/// `created` in the destination's precision.
fn record(
    ctx: &Context,
    table: &Table,
    keys: &Item,
    (old, new): (Option<&Item>, Option<&Item>),
    origin: Origin,
    created: i64,
) -> serde_json::Value {
    let size: usize = [Some(keys), new, old]
        .into_iter()
        .flatten()
        .map(item_size)
        .sum();
    let mut change = json!({
        "ApproximateCreationDateTime": created,
        "Keys": item_json(keys),
        "SizeBytes": size,
    });
    if let Some(image) = new {
        change["NewImage"] = item_json(image);
    }
    if let Some(image) = old {
        change["OldImage"] = item_json(image);
    }
    let identity = match origin {
        Origin::TimeToLive => {
            json!({"type": "Service", "principalId": "dynamodb.amazonaws.com"})
        }
        Origin::Request | Origin::Replica => serde_json::Value::Null,
    };
    json!({
        "awsRegion": ctx.region,
        "eventID": crate::ids::uuid(),
        "eventName": event_name(old, new),
        "userIdentity": identity,
        "recordFormat": "application/json",
        "tableName": table.name,
        "dynamodb": change,
        "eventSource": "aws:dynamodb",
    })
}

/// Moves the outbox onto the event bus, oldest first.
pub fn relay(env: &Env) -> AwsResult<()> {
    outbox::relay(
        env,
        "ddb_kinesis_outbox",
        "account, region, table_name, stream_arn, partition_key, record",
        |r| {
            Ok([
                r.get::<_, String>(1)?,
                r.get(2)?,
                r.get(3)?,
                r.get(4)?,
                r.get(5)?,
                r.get(6)?,
            ])
        },
        |[account, region, table, stream_arn, partition_key, record]| {
            let source = Context::internal(&account, &region);
            let (target_account, target_region) =
                stream_arn_parts(&stream_arn).unwrap_or((&source.account, &source.region));
            env.bus.publish(Event {
                kind: KIND.to_string(),
                source_service: "dynamodb".to_string(),
                source: table_arn(&source, &table),
                target_service: "dynamodb".to_string(),
                account: target_account.to_string(),
                region: target_region.to_string(),
                payload: Value::map()
                    .with("StreamARN", stream_arn.as_str())
                    .with("PartitionKey", partition_key)
                    .with("Data", Value::Blob(record.into_bytes())),
                target: stream_arn.clone(),
                max_attempts: ATTEMPTS,
            });
        },
    )
}

/// Puts one record on its stream through Kinesis' PutRecord; a stream that no longer
/// exists is a failure no retry can fix.
pub async fn deliver(env: &Env, event: &Event) -> Result<(), DeliveryError> {
    let dispatcher = env
        .dispatcher()
        .ok_or_else(|| DeliveryError::permanent("the server is stopping"))?;
    let ctx = Context::internal(&event.account, &event.region);
    match dispatcher
        .call(&ctx, "kinesis", "PutRecord", event.payload.clone())
        .await
    {
        Ok(_) => Ok(()),
        Err(e) if e.code == "ResourceNotFoundException" => Err(DeliveryError::permanent(format!(
            "{}: {}",
            e.code, e.message
        ))),
        Err(e) => Err(format!("{}: {}", e.code, e.message).into()),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stream_arns_are_told_from_others() {
        assert_eq!(
            stream_arn_parts("arn:aws:kinesis:us-east-1:123456789012:stream/orders"),
            Some(("123456789012", "us-east-1"))
        );
        for arn in [
            "arn:aws:kinesis:us-east-1:123456789012:stream/",
            "arn:aws:sqs:us-east-1:123456789012:stream/orders",
            "arn:aws:kinesis:us-east-1:1234:stream/orders",
            "arn:aws:kinesis:us-east-1:123456789012:stream/orders/consumer/c:1",
            "orders",
        ] {
            assert_eq!(stream_arn_parts(arn), None, "{arn}");
        }
    }
}
