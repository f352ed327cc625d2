//! Amazon Data Firehose: delivery streams that buffer records and deliver them, in batches,
//! to S3 (and the other destinations AWS offers), over the json 1.1 protocol.
//!
//! A delivery stream is a row of `firehose_streams` holding its source, its one destination
//! (as the `DestinationDescription` AWS shows, kept as JSON) and its version, which every
//! UpdateDestination increments. Records put to it wait in `firehose_buffer` until its
//! buffering hints say the batch is due (its size, or the interval since its oldest record
//! on the server clock); the flusher then takes the batch out of the buffer and publishes
//! it on the event bus as a delivery to the stream's destination, which this service itself
//! performs (`Service::deliver`): S3 objects through the dispatcher, HTTP endpoints through
//! the shared client. Every delivery attempt is thus traced, retried and reported like SNS's
//! and EventBridge's. Tables are created, and the flusher started, on the first call.
//!
//! Status transitions complete at once on the server clock, as Roto's other services' do: a
//! stream is CREATING at the instant it is created and ACTIVE from then on, so the first
//! read after CreateDeliveryStream shows it ACTIVE (waiters finish at once).
//!
//! - [`streams`]: create, describe, list, delete, update the destination, tags, encryption.
//! - [`destinations`]: a destination's configuration as AWS describes it, and its updates.
//! - [`records`]: PutRecord(Batch) and the buffer.
//! - [`metrics`]: the stream's metrics in `AWS/Firehose`.
//! - [`flusher`]: the background task that flushes due buffers and reads Kinesis sources.
//! - [`delivery`]: one batch delivered to its destination.
//! - [`endpoint`]: HTTP endpoint destinations, and the S3 backup of failed deliveries.
//! - [`prefix`]: object keys, custom prefixes and their `!{...}` expressions.
//! - [`compress`]: GZIP, ZIP, Snappy and Hadoop-Snappy object bodies.
//! - [`transform`]: record transformation through a Lambda function.
//! - [`partition`]: dynamic partitioning's metadata extraction queries.
//! - [`source`]: reading a Kinesis data stream through the dispatcher.

use std::sync::{Arc, OnceLock};

use roto_core::events::{DeliveryError, Event};
use roto_core::store::LazySchema;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;
use serde_json::Value as Json;
use tokio::sync::Notify;

mod compress;
mod delivery;
mod destinations;
mod endpoint;
mod flusher;
mod metrics;
pub mod partition;
pub mod prefix;
mod records;
mod source;
mod streams;
mod transform;

static SPEC: ServiceSpec = ServiceSpec {
    name: "firehose",
    model: "firehose",
    query_model: None,
    signing_names: &["firehose"],
    target_prefix: Some("Firehose_20150804"),
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS firehose_streams (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    created INTEGER NOT NULL,
    updated INTEGER,
    version INTEGER NOT NULL,
    source TEXT,
    destination TEXT NOT NULL,
    encryption TEXT,
    tags TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS firehose_buffer (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    stream TEXT NOT NULL,
    arrival INTEGER NOT NULL,
    record_id TEXT NOT NULL,
    data BLOB NOT NULL,
    metadata TEXT
);
CREATE INDEX IF NOT EXISTS firehose_buffer_by_stream
    ON firehose_buffer (account, region, stream, id);
CREATE TABLE IF NOT EXISTS firehose_checkpoints (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    stream TEXT NOT NULL,
    shard TEXT NOT NULL,
    sequence TEXT NOT NULL,
    PRIMARY KEY (account, region, stream, shard)
);
";

/// The one destination id a stream has.
const DESTINATION_ID: &str = "destinationId-000000000001";

/// A delivery stream as stored.
#[derive(Debug, Clone)]
pub(crate) struct DeliveryStream {
    name: String,
    kind: String,
    created: i64,
    updated: Option<i64>,
    version: i64,
    source: Option<Json>,
    destination: Json,
    encryption: Option<Json>,
    tags: Vec<(String, String)>,
}

/// The columns [`stream_from_row`] reads.
const STREAM_COLUMNS: &str =
    "name, kind, created, updated, version, source, destination, encryption, tags";

fn stream_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<DeliveryStream> {
    let json = |text: Option<String>| text.and_then(|t| serde_json::from_str(&t).ok());
    let tags: String = r.get(8)?;
    Ok(DeliveryStream {
        name: r.get(0)?,
        kind: r.get(1)?,
        created: r.get(2)?,
        updated: r.get(3)?,
        version: r.get(4)?,
        source: json(r.get(5)?),
        destination: json(r.get(6)?).unwrap_or(Json::Null),
        encryption: json(r.get(7)?),
        tags: serde_json::from_str(&tags).unwrap_or_default(),
    })
}

fn invalid_argument(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidArgumentException", message)
}

fn not_found(ctx: &Context, name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Firehose {name} under account {} not found.", ctx.account),
    )
}

/// A delivery stream's ARN.
fn stream_arn(account: &str, region: &str, name: &str) -> String {
    format!("arn:aws:firehose:{region}:{account}:deliverystream/{name}")
}

/// What the service and its background task share.
pub(crate) struct Inner {
    env: Arc<Env>,
    schema: LazySchema,
    /// Set once the flusher runs.
    flusher: OnceLock<()>,
    /// Wakes the flusher: records arrived, a stream changed.
    wake: Notify,
}

impl Inner {
    /// The store, its tables created.
    fn store(&self) -> AwsResult<&roto_core::store::Store> {
        self.schema.store(&self.env.store)
    }

    /// The stream `name`, if it exists.
    fn find(&self, ctx: &Context, name: &str) -> AwsResult<Option<DeliveryStream>> {
        self.find_in(&ctx.account, &ctx.region, name)
    }

    fn find_in(
        &self,
        account: &str,
        region: &str,
        name: &str,
    ) -> AwsResult<Option<DeliveryStream>> {
        self.store()?.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {STREAM_COLUMNS} FROM firehose_streams
                 WHERE account = ?1 AND region = ?2 AND name = ?3"
            ))?
            .query_row([account, region, name], stream_from_row)
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The stream the request's `DeliveryStreamName` names, or ResourceNotFoundException.
    fn stream(&self, ctx: &Context, input: &Value) -> AwsResult<DeliveryStream> {
        let name = input.str("DeliveryStreamName").unwrap_or_default();
        self.find(ctx, name)?.ok_or_else(|| not_found(ctx, name))
    }
}

/// Amazon Data Firehose.
pub struct Firehose {
    inner: Arc<Inner>,
}

impl Firehose {
    /// The service; its tables are created, and its flusher started, on its first call.
    pub fn new(env: Arc<Env>) -> Firehose {
        Firehose {
            inner: Arc::new(Inner {
                env,
                schema: LazySchema::new(&[SCHEMA]),
                flusher: OnceLock::new(),
                wake: Notify::new(),
            }),
        }
    }

    async fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let inner = &self.inner;
        match operation {
            "CreateDeliveryStream" => inner.create_delivery_stream(ctx, input).await,
            "DescribeDeliveryStream" => inner.describe_delivery_stream(ctx, input),
            "ListDeliveryStreams" => inner.list_delivery_streams(ctx, input),
            "DeleteDeliveryStream" => inner.delete_delivery_stream(ctx, input),
            "UpdateDestination" => inner.update_destination(ctx, input),
            "TagDeliveryStream" => inner.tag_delivery_stream(ctx, input),
            "UntagDeliveryStream" => inner.untag_delivery_stream(ctx, input),
            "ListTagsForDeliveryStream" => inner.list_tags_for_delivery_stream(ctx, input),
            "StartDeliveryStreamEncryption" => inner.start_encryption(ctx, input),
            "StopDeliveryStreamEncryption" => inner.stop_encryption(ctx, input),
            "PutRecord" => inner.put_record(ctx, input),
            "PutRecordBatch" => inner.put_record_batch(ctx, input),
            other => Err(AwsError::not_implemented(other)),
        }
    }
}

impl Service for Firehose {
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
            flusher::ensure_running(&self.inner);
            let output = self.dispatch(ctx, operation, &request.input).await?;
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(delivery::deliver(&self.inner, event))
    }

    fn delivery_failed(&self, event: &Event, error: &str) {
        self.inner.backup_failed(event, error);
    }
}
