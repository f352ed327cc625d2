//! CloudWatch Logs: log groups, log streams and their events.
//!
//! Logs speaks json 1.1 (`X-Amz-Target: Logs_20140328.<Op>`). Its front end reports
//! constraint violations as `InvalidParameterException` (not the generic
//! `ValidationException`), so the service checks its own input against the model
//! (`validate_input: false`) and raises them with that code.
//!
//! - [`groups`]: log groups (retention, tags, KMS keys, log classes, deletion protection,
//!   DescribeLogGroups and ListLogGroups) and log streams.
//! - [`events`]: PutLogEvents (ordering and batch rules), GetLogEvents (forward and
//!   backward tokens), FilterLogEvents.
//! - [`filter`]: the filter-pattern language FilterLogEvents matches messages with.
//! - [`subscriptions`]: subscription filters, delivering matching events to Lambda.
//! - [`metric_filters`]: metric filters, stored, and TestMetricFilter.
//! - [`metrics`]: the metrics metric filters and the Embedded Metric Format publish to
//!   CloudWatch.
//! - [`destinations`]: subscription destinations and their access policies.
//! - [`resource_policies`]: account- and log-group-scoped resource policies.
//! - [`transformer`]: transformers' processors, run at ingestion and by TestTransformer;
//!   [`grok`] their grok expressions, [`vended`] their parsers for AWS vended logs.
//! - [`settings`]: data protection policies, transformers, field index policies, bearer
//!   token authentication, syslog configurations, account policies and the storage tier,
//!   stored and read back whole (`logs_items`).
//! - [`deliveries`]: vended-log delivery sources, destinations (with policies) and
//!   deliveries; [`analytics`]: anomaly detectors, lookup tables, scheduled queries and
//!   OpenSearch integrations, stored and not run.
//! - [`insights`]: the Logs Insights query language; [`queries`]: query definitions,
//!   StartQuery and its results, GetLogRecord and GetLogGroupFields.
//! - [`live_tail`]: StartLiveTail's event stream of newly ingested events.
//! - [`exports`]: export tasks, writing events to S3 through the dispatcher.
//! - [`fuzz`]: entry points through which `crates/roto-fuzz` reaches the filter-pattern and
//!   Insights parsers.
//!
//! Retention is applied on read: an event older than its group's retention is never
//! returned, and PutLogEvents reports it as expired.

mod analytics;
mod deliveries;
mod destinations;
mod events;
mod exports;
mod filter;
pub mod fuzz;
mod grok;
mod groups;
mod insights;
mod live_tail;
mod metric_filters;
mod metrics;
mod queries;
mod resource_policies;
mod settings;
mod subscriptions;
mod transformer;
mod unmodeled;
mod vended;

use std::io;

use base64::Engine;
use std::sync::atomic::AtomicBool;
use std::sync::Arc;

use metric_filters::test_metric_filter;

use crate::documents::{documents_schema, Documents};
use roto_core::featureless::{self, Featureless};
use roto_core::timestamp::now_millis;
use roto_core::validate;
use roto_core::value::EpochMillis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "logs",
    model: "logs",
    query_model: None,
    signing_names: &["logs"],
    target_prefix: Some("Logs_20140328"),
    query_version: None,
    crc32_responses: false,
    validate_input: false,
};

static ITEMS_SCHEMA: &[&str] = &[documents_schema!("logs_items")];

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS logs_groups (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    retention INTEGER,
    kms_key TEXT,
    class TEXT NOT NULL,
    deletion_protection INTEGER NOT NULL DEFAULT 0,
    tags TEXT NOT NULL,
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS logs_streams (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grp TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    first_event INTEGER,
    last_event INTEGER,
    last_ingestion INTEGER,
    PRIMARY KEY (account, region, grp, name)
);
CREATE TABLE IF NOT EXISTS logs_events (
    id INTEGER PRIMARY KEY AUTOINCREMENT,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grp TEXT NOT NULL,
    stream TEXT NOT NULL,
    ts INTEGER NOT NULL,
    ingested INTEGER NOT NULL,
    message TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS logs_subscriptions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grp TEXT NOT NULL,
    name TEXT NOT NULL,
    pattern TEXT NOT NULL,
    destination TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, grp, name)
);
CREATE TABLE IF NOT EXISTS logs_metric_filters (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grp TEXT NOT NULL,
    name TEXT NOT NULL,
    metric_name TEXT NOT NULL,
    metric_namespace TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, grp, name)
);
CREATE TABLE IF NOT EXISTS logs_destinations (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS logs_resource_policies (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    scope TEXT NOT NULL,
    key TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, scope, key)
);
CREATE TABLE IF NOT EXISTS logs_query_definitions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, id)
);
CREATE TABLE IF NOT EXISTS logs_queries (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    created INTEGER NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, id)
);
CREATE TABLE IF NOT EXISTS logs_export_tasks (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    id TEXT NOT NULL,
    created INTEGER NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, id)
);
CREATE INDEX IF NOT EXISTS logs_events_by_stream
    ON logs_events (account, region, grp, stream, ts, id);
CREATE INDEX IF NOT EXISTS logs_events_by_group
    ON logs_events (account, region, grp, ts, id);
";

/// CloudWatch Logs.
pub struct Logs {
    env: Arc<Env>,
    docs: Documents,
    clock: fn() -> EpochMillis,
    /// Whether any log group may have metric filters (PutLogEvents reads them only then).
    metric_filters: AtomicBool,
}

impl Logs {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Logs> {
        Logs::with_clock(env, now_millis)
    }

    /// Creates the service with its own clock, so tests can move time without waiting.
    pub fn with_clock(env: Arc<Env>, clock: fn() -> EpochMillis) -> io::Result<Logs> {
        env.store.migrate(SCHEMA)?;
        let metric_filters = env
            .store
            .with(|c| {
                c.query_row(
                    "SELECT EXISTS (SELECT 1 FROM logs_metric_filters)",
                    [],
                    |r| r.get(0),
                )
            })
            .map_err(io::Error::other)?;
        Ok(Logs {
            docs: Documents::new(env.clone(), "logs_items", ITEMS_SCHEMA),
            env,
            clock,
            metric_filters: AtomicBool::new(metric_filters),
        })
    }

    fn now(&self) -> EpochMillis {
        (self.clock)()
    }

    /// Checks the input against the model's constraints, reporting violations the way the
    /// Logs front end does.
    fn validate(&self, operation: &str, input: &Value) -> AwsResult<()> {
        let model = SPEC.model();
        let Some(shape) = model.operation(operation).and_then(|op| op.input.as_ref()) else {
            return Ok(());
        };
        let violations = validate::violations(model, model.resolve(shape), input);
        match validate::message(&violations) {
            Some(message) => Err(invalid(message)),
            None => Ok(()),
        }
    }
}

impl Service for Logs {
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
        Box::pin(async move {
            let input = &request.input;
            groups::check_tag_arn(operation, input)?;
            self.validate(operation, input)?;
            if operation == "StartLiveTail" {
                return self.start_live_tail(ctx, input);
            }
            let output = match operation {
                "CreateLogGroup" => self.create_log_group(ctx, input)?,
                "DeleteLogGroup" => self.delete_log_group(ctx, input)?,
                "DescribeLogGroups" => self.describe_log_groups(ctx, input)?,
                "ListLogGroups" => self.list_log_groups(ctx, input)?,
                "PutLogGroupDeletionProtection" => {
                    self.put_log_group_deletion_protection(ctx, input)?
                }
                "AssociateKmsKey" => self.set_kms_key(ctx, input, input.str("kmsKeyId"))?,
                "DisassociateKmsKey" => self.set_kms_key(ctx, input, None)?,
                "PutRetentionPolicy" => self.put_retention_policy(ctx, input)?,
                "DeleteRetentionPolicy" => self.delete_retention_policy(ctx, input)?,
                "CreateLogStream" => self.create_log_stream(ctx, input)?,
                "DeleteLogStream" => self.delete_log_stream(ctx, input)?,
                "DescribeLogStreams" => self.describe_log_streams(ctx, input)?,
                "TagLogGroup" => self.tag_log_group(ctx, input)?,
                "UntagLogGroup" => self.untag_log_group(ctx, input)?,
                "ListTagsLogGroup" => self.list_tags_log_group(ctx, input)?,
                "TagResource" => self.tag_resource(ctx, input)?,
                "UntagResource" => self.untag_resource(ctx, input)?,
                "ListTagsForResource" => self.list_tags_for_resource(ctx, input)?,
                "PutLogEvents" => self.put_log_events(ctx, input)?,
                "PutSubscriptionFilter" => self.put_subscription_filter(ctx, input)?,
                "DescribeSubscriptionFilters" => self.describe_subscription_filters(ctx, input)?,
                "DeleteSubscriptionFilter" => self.delete_subscription_filter(ctx, input)?,
                "GetLogEvents" => self.get_log_events(ctx, input)?,
                "FilterLogEvents" => self.filter_log_events(ctx, input)?,
                "PutMetricFilter" => self.put_metric_filter(ctx, input)?,
                "DescribeMetricFilters" => self.describe_metric_filters(ctx, input)?,
                "DeleteMetricFilter" => self.delete_metric_filter(ctx, input)?,
                "TestMetricFilter" => test_metric_filter(input)?,
                "TestTransformer" => transformer::test_transformer(input)?,
                "PutDestination" => self.put_destination(ctx, input)?,
                "PutDestinationPolicy" => self.put_destination_policy(ctx, input)?,
                "DescribeDestinations" => self.describe_destinations(ctx, input)?,
                "DeleteDestination" => self.delete_destination(ctx, input)?,
                "PutResourcePolicy" => self.put_resource_policy(ctx, input)?,
                "DescribeResourcePolicies" => self.describe_resource_policies(ctx, input)?,
                "DeleteResourcePolicy" => self.delete_resource_policy(ctx, input)?,
                "PutQueryDefinition" => self.put_query_definition(ctx, input)?,
                "DescribeQueryDefinitions" => self.describe_query_definitions(ctx, input)?,
                "DeleteQueryDefinition" => self.delete_query_definition(ctx, input)?,
                "StartQuery" => self.start_query(ctx, input)?,
                "GetQueryResults" => self.get_query_results(ctx, input)?,
                "StopQuery" => self.stop_query(ctx, input)?,
                "DescribeQueries" => self.describe_queries(ctx, input)?,
                "GetLogRecord" => self.get_log_record(ctx, input)?,
                "GetLogGroupFields" => self.get_log_group_fields(ctx, input)?,
                "CreateExportTask" => self.create_export_task(ctx, input).await?,
                "DescribeExportTasks" => self.describe_export_tasks(ctx, input)?,
                "CancelExportTask" => self.cancel_export_task(ctx, input)?,
                "ListLogGroupsForQuery" => self.list_log_groups_for_query(ctx, input)?,
                "PutDataProtectionPolicy" => self.put_data_protection_policy(ctx, input)?,
                "GetDataProtectionPolicy" => self.get_data_protection_policy(ctx, input)?,
                "DeleteDataProtectionPolicy" => self.delete_data_protection_policy(ctx, input)?,
                "PutTransformer" => self.put_transformer(ctx, input)?,
                "GetTransformer" => self.get_transformer(ctx, input)?,
                "DeleteTransformer" => self.delete_transformer(ctx, input)?,
                "PutIndexPolicy" => self.put_index_policy(ctx, input)?,
                "DescribeIndexPolicies" => self.describe_index_policies(ctx, input)?,
                "DeleteIndexPolicy" => self.delete_index_policy(ctx, input)?,
                "DescribeFieldIndexes" => self.describe_field_indexes(ctx, input)?,
                "PutAccountPolicy" => self.put_account_policy(ctx, input)?,
                "DescribeAccountPolicies" => self.describe_account_policies(ctx, input)?,
                "DeleteAccountPolicy" => self.delete_account_policy(ctx, input)?,
                "PutStorageTierPolicy" => self.put_storage_tier_policy(ctx, input)?,
                "GetStorageTierPolicy" => self.get_storage_tier_policy(ctx)?,
                other => self.call_configured(ctx, other, input)?,
            };
            Ok(Response::new(output))
        })
    }
}

impl Logs {
    /// The operations of resources kept whole: deliveries, detectors, lookup tables,
    /// scheduled queries, integrations and log groups' ingestion settings.
    fn call_configured(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(match operation {
            "PutDeliverySource" => self.put_delivery_source(ctx, input)?,
            "GetDeliverySource" => self.get_delivery_source(ctx, input)?,
            "DescribeDeliverySources" => self.describe_delivery_sources(ctx, input)?,
            "DeleteDeliverySource" => self.delete_delivery_source(ctx, input)?,
            "PutDeliveryDestination" => self.put_delivery_destination(ctx, input)?,
            "GetDeliveryDestination" => self.get_delivery_destination(ctx, input)?,
            "DescribeDeliveryDestinations" => self.describe_delivery_destinations(ctx, input)?,
            "DeleteDeliveryDestination" => self.delete_delivery_destination(ctx, input)?,
            "PutDeliveryDestinationPolicy" => self.put_delivery_destination_policy(ctx, input)?,
            "GetDeliveryDestinationPolicy" => self.get_delivery_destination_policy(ctx, input)?,
            "DeleteDeliveryDestinationPolicy" => {
                self.delete_delivery_destination_policy(ctx, input)?
            }
            "CreateDelivery" => self.create_delivery(ctx, input)?,
            "GetDelivery" => self.get_delivery(ctx, input)?,
            "UpdateDeliveryConfiguration" => self.update_delivery_configuration(ctx, input)?,
            "DeleteDelivery" => self.delete_delivery(ctx, input)?,
            "DescribeDeliveries" => self.describe_deliveries(ctx, input)?,
            "CreateLogAnomalyDetector" => self.create_log_anomaly_detector(ctx, input)?,
            "GetLogAnomalyDetector" => self.get_log_anomaly_detector(ctx, input)?,
            "UpdateLogAnomalyDetector" => self.update_log_anomaly_detector(ctx, input)?,
            "DeleteLogAnomalyDetector" => self.delete_log_anomaly_detector(ctx, input)?,
            "ListLogAnomalyDetectors" => self.list_log_anomaly_detectors(ctx, input)?,
            "CreateLookupTable" => self.create_lookup_table(ctx, input)?,
            "GetLookupTable" => self.get_lookup_table(ctx, input)?,
            "UpdateLookupTable" => self.update_lookup_table(ctx, input)?,
            "DeleteLookupTable" => self.delete_lookup_table(ctx, input)?,
            "DescribeLookupTables" => self.describe_lookup_tables(ctx, input)?,
            "CreateScheduledQuery" => self.create_scheduled_query(ctx, input)?,
            "GetScheduledQuery" => self.get_scheduled_query(ctx, input)?,
            "UpdateScheduledQuery" => self.update_scheduled_query(ctx, input)?,
            "DeleteScheduledQuery" => self.delete_scheduled_query(ctx, input)?,
            "ListScheduledQueries" => self.list_scheduled_queries(ctx, input)?,
            "GetScheduledQueryHistory" => self.get_scheduled_query_history(ctx, input)?,
            "PutIntegration" => self.put_integration(ctx, input)?,
            "GetIntegration" => self.get_integration(ctx, input)?,
            "DeleteIntegration" => self.delete_integration(ctx, input)?,
            "ListIntegrations" => self.list_integrations(ctx, input)?,
            "PutBearerTokenAuthentication" => self.put_bearer_token_authentication(ctx, input)?,
            "PutSyslogConfiguration" => self.put_syslog_configuration(ctx, input)?,
            "DeleteSyslogConfiguration" => self.delete_syslog_configuration(ctx, input)?,
            "ListSyslogConfigurations" => self.list_syslog_configurations(ctx, input)?,
            other => featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input)?,
        })
    }
}

/// `InvalidParameterException`.
fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterException", message).with_status(400)
}

/// `ResourceNotFoundException` for a log group.
fn no_group() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified log group does not exist.",
    )
    .with_status(400)
}

/// `ResourceNotFoundException` for a log stream.
fn no_stream() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified log stream does not exist.",
    )
    .with_status(400)
}

/// The `InvalidParameterException` for a token this service did not issue.
fn bad_token() -> AwsError {
    invalid("The specified nextToken is invalid.")
}

/// The page size Describe operations use when the caller names none.
const DEFAULT_PAGE: i64 = 50;

/// `LimitExceededException`, AWS's answer to one resource too many.
fn limit_exceeded() -> AwsError {
    AwsError::new("LimitExceededException", "Resource limit exceeded.").with_status(400)
}

/// A stored document's text (metric filters, destinations, policies, queries, tasks).
fn document(value: &Value) -> String {
    roto_core::protocol::json::value_to_json(value).to_string()
}

/// A stored document read back.
fn from_document(text: &str) -> Value {
    serde_json::from_str(text).map_or_else(|_| Value::map(), |j| Value::from_json(&j))
}

/// A page of `(key, document)` rows (one more than `limit` when there are more), as
/// `member`, with the token that resumes after its last key.
fn page_of(rows: Vec<(String, String)>, limit: usize, member: &str) -> Value {
    let more = rows.len() > limit;
    let page = &rows[..rows.len().min(limit)];
    let items: Vec<Value> = page.iter().map(|(_, d)| from_document(d)).collect();
    let mut out = Value::map().with(member, items);
    if more {
        if let Some((key, _)) = page.last() {
            out.insert("nextToken", token_of(key));
        }
    }
    out
}

/// An opaque page token over a key.
fn token_of(key: &str) -> String {
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(key)
}

/// The key a page token resumes after.
fn name_of_token(token: &str) -> AwsResult<String> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(token)
        .ok()
        .and_then(|b| String::from_utf8(b).ok())
        .ok_or_else(bad_token)
}

/// Escapes `%`, `_` and `\` for a `LIKE ... ESCAPE '\'` prefix match.
fn like_prefix(prefix: &str) -> String {
    let mut out = String::with_capacity(prefix.len() + 1);
    for c in prefix.chars() {
        if matches!(c, '%' | '_' | '\\') {
            out.push('\\');
        }
        out.push(c);
    }
    out.push('%');
    out
}

/// The ARN of a log group (without the `:*` suffix the `arn` member carries).
fn group_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:logs:{}:{}:log-group:{name}",
        ctx.region, ctx.account
    )
}

/// The log group a request names: `logGroupName`, or `logGroupIdentifier` (a name or an
/// ARN); naming both or neither is an error.
fn group_of(input: &Value) -> AwsResult<String> {
    match (input.str("logGroupName"), input.str("logGroupIdentifier")) {
        (Some(_), Some(_)) => Err(invalid(
            "LogGroup name and LogGroup ARN are mutually exclusive parameters.",
        )),
        (Some(name), None) => Ok(name.to_string()),
        (None, Some(id)) => Ok(name_of_arn(id).unwrap_or(id).to_string()),
        (None, None) => Err(invalid(
            "Should provide either a LogGroup name or a LogGroup ARN.",
        )),
    }
}

/// The log group name inside `arn:aws:logs:<region>:<account>:log-group:<name>[:*]`.
fn name_of_arn(arn: &str) -> Option<&str> {
    let rest = arn.strip_prefix("arn:")?;
    let name = rest.splitn(5, ':').nth(4)?.strip_prefix("log-group:")?;
    Some(name.strip_suffix(":*").unwrap_or(name))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn group_names_come_from_either_member_or_an_arn() {
        let by_name = Value::map().with("logGroupName", "/a/b");
        assert_eq!(group_of(&by_name).unwrap(), "/a/b");
        let by_arn = Value::map().with(
            "logGroupIdentifier",
            "arn:aws:logs:us-east-1:1:log-group:/a:*",
        );
        assert_eq!(group_of(&by_arn).unwrap(), "/a");
        assert!(group_of(&Value::map()).is_err());
        let both = by_name.with("logGroupIdentifier", "/a");
        assert!(group_of(&both).is_err());
    }
}
