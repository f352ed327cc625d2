//! DynamoDB: tables and items over the json 1.0 protocol.
//!
//! The codec decodes each request by the model and validates it against the model's
//! constraints before a handler runs; the handlers here add DynamoDB's own checks (key
//! schemas, attribute values, numbers, sizes) in its own words. Items live in `ddb_items`
//! under an order-preserving encoding of their primary key (see [`key`]), one lookup per
//! single-item operation and ready for ordered range scans.
//!
//! - [`tables`]: CreateTable, DescribeTable, ListTables, DeleteTable, tags.
//! - [`table_updates`]: UpdateTable (billing, throughput, indexes, streams, protection).
//! - [`replicas`]: global tables (version 2019.11.21): UpdateTable's `ReplicaUpdates`, the
//!   replica tables in other regions, DeleteTable of a member.
//! - [`replication`]: item changes carried between a global table's members.
//! - [`replica_scaling`]: DescribeTableReplicaAutoScaling, UpdateTableReplicaAutoScaling.
//! - [`streams`]: each table's stream of item changes.
//! - [`streams_service`]: the `dynamodbstreams` service that reads them.
//! - [`ttl`]: Time to Live and the sweeper that deletes expired items.
//! - [`backups`]: continuous backups (point-in-time recovery) and their change log.
//! - [`on_demand_backups`]: CreateBackup, DescribeBackup, ListBackups, DeleteBackup.
//! - [`restores`]: RestoreTableFromBackup, RestoreTableToPointInTime.
//! - [`resource_policies`]: Put/Get/DeleteResourcePolicy on tables and streams.
//! - [`exports`]: ExportTableToPointInTime, DescribeExport, ListExports (to S3).
//! - [`imports`]: ImportTable, DescribeImport, ListImports (from S3).
//! - [`bulk`]: StartBulkPutItems and its Describe/List/CancelBulkOperation (from S3 into an
//!   existing table).
//! - [`contributor_insights`]: Describe/Update/ListContributorInsights (stored).
//! - [`kinesis_destinations`]: Kinesis streaming destinations, and the item changes they
//!   put on their streams.
//! - [`outbox`]: where item changes wait for their request's commit before the bus.
//! - [`items`]: PutItem, GetItem, UpdateItem, DeleteItem, conditions, consumed capacity.
//! - [`metrics`]: the `AWS/DynamoDB` metrics: consumed capacity, user errors.
//! - [`expr`]: the expression language (conditions, projections, updates).
//! - [`batch`]: BatchGetItem, BatchWriteItem, TransactGetItems, TransactWriteItems.
//! - [`queries`]: Query and Scan on tables and indexes.
//! - [`legacy`]: the pre-expression parameters, translated into expressions.
//! - [`partiql`]: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction.
//! - [`rows`]: the one writer of items, their index rows and the table counters.
//! - [`counters`]: ItemCount and TableSizeBytes, exact without a row write per item write.
//! - [`attr`], [`number`], [`key`], [`projection`]: the value model they share.
//! - [`fuzz`]: entry points through which `crates/roto-fuzz` reaches the expression and
//!   PartiQL parsers.

use std::io;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, OnceLock};

use roto_core::access::{Access, Principal};
use roto_core::events::{DeliveryError, Event};
use roto_core::featureless::Featureless;
use roto_core::Value;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec,
};

pub use streams_service::DynamoDbStreams;

mod access;
mod attr;
mod backups;
mod batch;
mod bulk;
mod contributor_insights;
mod counters;
mod exports;
mod expr;
pub mod fuzz;
mod imports;
mod items;
mod key;
mod kinesis_destinations;
mod legacy;
mod metrics;
mod number;
mod on_demand_backups;
mod outbox;
mod partiql;
mod projection;
mod queries;
mod replica_scaling;
mod replicas;
mod replication;
mod resource_policies;
mod restores;
mod rows;
mod streams;
mod streams_service;
mod table_updates;
mod tables;
mod task_records;
mod ttl;
mod unmodeled;

static SPEC: ServiceSpec = ServiceSpec {
    name: "dynamodb",
    model: "dynamodb",
    query_model: None,
    signing_names: &["dynamodb"],
    target_prefix: Some("DynamoDB_20120810"),
    query_version: None,
    crc32_responses: true,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_tables (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    description TEXT NOT NULL,
    created INTEGER NOT NULL,
    item_count INTEGER NOT NULL DEFAULT 0,
    size_bytes INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS ddb_items (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    table_name TEXT NOT NULL,
    hash_key BLOB NOT NULL,
    range_key BLOB NOT NULL,
    item TEXT NOT NULL,
    size INTEGER NOT NULL,
    PRIMARY KEY (account, region, table_name, hash_key, range_key)
) WITHOUT ROWID;
";

/// DynamoDB.
pub struct DynamoDb {
    env: Arc<Env>,
    sweeper: OnceLock<()>,
    /// Whether a Kinesis streaming destination has been active, so that requests relay
    /// the item changes captured for it.
    kinesis_active: AtomicBool,
    /// Whether a table has had replicas, so that requests relay the changes captured for
    /// the other members.
    replicating: AtomicBool,
}

impl DynamoDb {
    /// Creates the service's tables, and starts the Time to Live sweeper if a runtime is
    /// running (else with the first call).
    pub fn new(env: Arc<Env>) -> io::Result<DynamoDb> {
        for schema in [
            SCHEMA,
            rows::SCHEMA,
            batch::SCHEMA,
            streams::SCHEMA,
            ttl::SCHEMA,
            backups::SCHEMA,
            on_demand_backups::SCHEMA,
            resource_policies::SCHEMA,
            exports::SCHEMA,
            imports::SCHEMA,
            bulk::SCHEMA,
            contributor_insights::SCHEMA,
            kinesis_destinations::SCHEMA,
            replicas::SCHEMA,
            replication::SCHEMA,
            counters::SCHEMA,
        ] {
            env.store.migrate(schema)?;
        }
        let to_io = |e: AwsError| io::Error::other(e.message.to_string());
        env.store.with(counters::recount).map_err(to_io)?;
        let (active, replicating) = env
            .store
            .with(|c| Ok((kinesis_destinations::any_active(c)?, replicas::any(c)?)))
            .map_err(to_io)?;
        let service = DynamoDb {
            env,
            sweeper: OnceLock::new(),
            kinesis_active: AtomicBool::new(active),
            replicating: AtomicBool::new(replicating),
        };
        service.start_sweeper();
        Ok(service)
    }

    /// Moves the item changes captured for Kinesis destinations and replicas onto the bus.
    fn relay(&self) {
        if self.kinesis_active.load(Ordering::Relaxed) {
            if let Err(e) = kinesis_destinations::relay(&self.env) {
                tracing::warn!("Kinesis streaming destinations: {}", e.message);
            }
        }
        if self.replicating.load(Ordering::Relaxed) {
            if let Err(e) = replication::relay(&self.env) {
                tracing::warn!("global table replication: {}", e.message);
            }
        }
    }

    fn start_sweeper(&self) {
        if self.sweeper.get().is_none() && tokio::runtime::Handle::try_current().is_ok() {
            self.sweeper
                .get_or_init(|| ttl::spawn_sweeper(Arc::downgrade(&self.env)));
        }
    }
}

/// The largest request DynamoDB accepts.
const MAX_REQUEST: u64 = 16 * 1024 * 1024;

/// Refuses a request whose body is larger than DynamoDB accepts, with HTTP 413.
fn check_request_size(request: &Request) -> AwsResult<()> {
    let length = request
        .headers
        .get(http::header::CONTENT_LENGTH)
        .and_then(|v| v.to_str().ok())
        .and_then(|v| v.parse::<u64>().ok());
    match length {
        Some(n) if n > MAX_REQUEST => Err(AwsError::new(
            "RequestEntityTooLarge",
            format!("Request size {n} exceeds the limit of {MAX_REQUEST} bytes"),
        )
        .with_status(413)),
        _ => Ok(()),
    }
}

impl Service for DynamoDb {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        self.start_sweeper();
        Box::pin(metrics::counted(&self.env, ctx, async move {
            check_request_size(&request)?;
            let input = &request.input;
            let table = input
                .str("TableName")
                .filter(|t| access::table_of(t).is_some());
            let owner = roto_core::access::in_owner_account(ctx, table);
            let ctx = owner.as_ref();
            let output = match operation {
                "CreateTable" => self.create_table(ctx, input)?,
                "DescribeTable" => self.describe_table(ctx, input)?,
                "ListTables" => self.list_tables(ctx, input)?,
                "DeleteTable" => self.delete_table(ctx, input)?,
                "UpdateTable" => self.update_table(ctx, input)?,
                "UpdateTimeToLive" => self.update_time_to_live(ctx, input)?,
                "DescribeTimeToLive" => self.describe_time_to_live(ctx, input)?,
                "UpdateContinuousBackups" => self.update_continuous_backups(ctx, input)?,
                "DescribeContinuousBackups" => self.describe_continuous_backups(ctx, input)?,
                "CreateBackup" => self.create_backup(ctx, input)?,
                "DescribeBackup" => self.describe_backup(ctx, input)?,
                "ListBackups" => self.list_backups(ctx, input)?,
                "DeleteBackup" => self.delete_backup(ctx, input)?,
                "RestoreTableFromBackup" => self.restore_table_from_backup(ctx, input)?,
                "RestoreTableToPointInTime" => self.restore_table_to_point_in_time(ctx, input)?,
                "PutResourcePolicy" => self.put_resource_policy(ctx, input)?,
                "GetResourcePolicy" => self.get_resource_policy(ctx, input)?,
                "DeleteResourcePolicy" => self.delete_resource_policy(ctx, input)?,
                "ExportTableToPointInTime" => {
                    self.export_table_to_point_in_time(ctx, input).await?
                }
                "DescribeExport" => self.describe_export(ctx, input)?,
                "ListExports" => self.list_exports(ctx, input)?,
                "ImportTable" => self.import_table(ctx, input).await?,
                "StartBulkPutItems" => self.start_bulk_put_items(ctx, input).await?,
                "DescribeBulkOperation" => self.describe_bulk_operation(ctx, input)?,
                "ListBulkOperations" => self.list_bulk_operations(ctx, input)?,
                "CancelBulkOperation" => self.cancel_bulk_operation(ctx, input)?,
                "DescribeImport" => self.describe_import(ctx, input)?,
                "ListImports" => self.list_imports(ctx, input)?,
                "DescribeContributorInsights" => self.describe_contributor_insights(ctx, input)?,
                "UpdateContributorInsights" => self.update_contributor_insights(ctx, input)?,
                "ListContributorInsights" => self.list_contributor_insights(ctx, input)?,
                "EnableKinesisStreamingDestination" => {
                    self.enable_kinesis_streaming_destination(ctx, input)
                        .await?
                }
                "DisableKinesisStreamingDestination" => {
                    self.disable_kinesis_streaming_destination(ctx, input)?
                }
                "UpdateKinesisStreamingDestination" => {
                    self.update_kinesis_streaming_destination(ctx, input)?
                }
                "DescribeKinesisStreamingDestination" => {
                    self.describe_kinesis_streaming_destination(ctx, input)?
                }
                "PutItem" => self.put_item(ctx, input)?,
                "GetItem" => self.get_item(ctx, input)?,
                "UpdateItem" => self.update_item(ctx, input)?,
                "DeleteItem" => self.delete_item(ctx, input)?,
                "Query" => self.query(ctx, input)?,
                "BatchGetItem" => self.batch_get_item(ctx, input)?,
                "BatchWriteItem" => self.batch_write_item(ctx, input)?,
                "TransactGetItems" => self.transact_get_items(ctx, input)?,
                "TransactWriteItems" => self.transact_write_items(ctx, input)?,
                "Scan" => self.scan(ctx, input)?,
                "ExecuteStatement" => self.execute_statement(ctx, input)?,
                "BatchExecuteStatement" => self.batch_execute_statement(ctx, input)?,
                "ExecuteTransaction" => self.execute_transaction(ctx, input)?,
                "TagResource" => self.tag_resource(ctx, input)?,
                "UntagResource" => self.untag_resource(ctx, input)?,
                "ListTagsOfResource" => self.list_tags_of_resource(ctx, input)?,
                "DescribeTableReplicaAutoScaling" => {
                    self.describe_table_replica_auto_scaling(ctx, input)?
                }
                "UpdateTableReplicaAutoScaling" => {
                    self.update_table_replica_auto_scaling(ctx, input)?
                }
                "DescribeLimits" => self.describe_limits(),
                "DescribeEndpoints" => self.describe_endpoints(ctx),
                other => return self.unmodeled(ctx, other, input).map(Response::new),
            };
            self.relay();
            Ok(Response::new(output))
        }))
    }

    /// Folds the tables' live figures into their rows, so that the next start-up need not
    /// count their items again.
    fn stop(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {
            if let Err(e) = self.env.store.transaction(counters::fold) {
                tracing::warn!("DynamoDB table figures: {}", e.message);
            }
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(async move {
            let result = if event.kind == replication::KIND {
                replication::deliver(&self.env, event)
            } else {
                kinesis_destinations::deliver(&self.env, event).await
            };
            self.relay();
            result
        })
    }

    fn access(&self, ctx: &Context, who: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, who, op, input)
    }
}
