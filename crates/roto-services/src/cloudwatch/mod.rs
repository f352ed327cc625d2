//! Amazon CloudWatch: custom metrics, their statistics and metric math, dashboards and
//! alarms evaluated on the server clock.
//!
//! botocore lists three protocols for CloudWatch (`smithy-rpc-v2-cbor`, `json`, `query`);
//! the model is embedded with `json` as its main protocol (what boto3 sends today, by its
//! priority order); the server's generic CBOR codec serves rpc-v2-cbor calls through the
//! same model (the model lists the protocol), and form-encoded `awsQuery` calls (older
//! SDKs, raw HTTP) too, with the query error codes (`InvalidParameterValue`) in all three.
//!
//! A metric is a row of `cw_metrics` (namespace, name and its dimensions, sorted by name);
//! its data are aggregated on arrival into one row per metric, minute and unit of
//! `cw_data` (count, sum, minimum, maximum and the distinct values with their counts, for
//! percentiles), and high-resolution data (StorageResolution 1) also into per-second rows.
//! Every read is an index range over one metric's rows, so its cost does not grow with
//! other metrics. The tables are created on the first call.
//!
//! - [`metrics`]: PutMetricData, ListMetrics and the stored data.
//! - [`stats`]: GetMetricStatistics and the aggregation of rows into periods.
//! - [`data`]: GetMetricData's queries, their evaluation and paging; math alarms' values.
//! - [`math`]: the metric math language, parsed and evaluated.
//! - [`alarms`]: PutMetricAlarm, DescribeAlarms and the other calls on stored alarms.
//! - [`log_alarms`]: PutLogAlarm, alarms over a Logs scheduled query's results (stored,
//!   not evaluated).
//! - [`published`]: the metrics Roto's services publish (`AWS/Lambda`, `AWS/SQS`...), taken
//!   into the store off their request paths.
//! - [`configs`]: metric streams, anomaly detectors, insight rules, query definitions, mute
//!   rules, OTel enrichment and resource metrics configurations, stored, not run.
//! - [`dashboards`]: PutDashboard with its body checks, Get, List and DeleteDashboards.
//! - [`evaluate`]: one evaluation of a metric alarm, and its reason in AWS's words.
//! - [`rule`]: the rule language of composite alarms.
//! - [`fuzz`]: the entries through which `crates/roto-fuzz` reaches the rule parser and
//!   the metric math parser.
//! - [`watch`]: the task that evaluates alarms on the server clock, state changes, their
//!   history and their actions.
//!
//! Alarms are evaluated by one task per server, started with the first alarm (or at
//! start-up, on a persistent store that holds alarms), so a server that never creates an
//! alarm runs none. Actions are events on the bus for `cloudwatch` itself, whose
//! [`Service::deliver`] publishes to the SNS topic or invokes the Lambda function through
//! the dispatcher.

use std::io;
use std::sync::Arc;

use crate::clock_task::ClockTask;
use crate::documents::{documents_schema, Documents};
use roto_core::events::{DeliveryError, Event};
use roto_core::store::{LazySchema, Store};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

mod alarms;
mod configs;
mod dashboards;
mod data;
mod evaluate;
pub mod fuzz;
mod log_alarms;
mod math;
mod metrics;
mod published;
mod rule;
mod stats;
mod watch;

static SPEC: ServiceSpec = ServiceSpec {
    name: "cloudwatch",
    model: "cloudwatch",
    query_model: Some("cloudwatch"),
    signing_names: &["monitoring"],
    target_prefix: Some("GraniteServiceVersion20100801"),
    query_version: Some("2010-08-01"),
    crc32_responses: false,
    validate_input: false,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cw_metrics (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    namespace TEXT NOT NULL,
    name TEXT NOT NULL,
    dims TEXT NOT NULL,
    last_put INTEGER NOT NULL,
    UNIQUE (account, region, namespace, name, dims)
);
CREATE TABLE IF NOT EXISTS cw_data (
    metric INTEGER NOT NULL,
    res INTEGER NOT NULL,
    ts INTEGER NOT NULL,
    unit TEXT NOT NULL,
    count REAL NOT NULL,
    sum REAL NOT NULL,
    min REAL NOT NULL,
    max REAL NOT NULL,
    samples TEXT,
    PRIMARY KEY (metric, res, ts, unit)
);
CREATE TABLE IF NOT EXISTS cw_alarms (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    state TEXT NOT NULL,
    reason TEXT NOT NULL,
    reason_data TEXT,
    state_updated INTEGER NOT NULL,
    transitioned INTEGER NOT NULL,
    updated INTEGER NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    next_eval INTEGER,
    PRIMARY KEY (account, region, name)
);
CREATE INDEX IF NOT EXISTS cw_alarms_due ON cw_alarms (next_eval)
    WHERE next_eval IS NOT NULL;
CREATE TABLE IF NOT EXISTS cw_history (
    id INTEGER PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    alarm TEXT NOT NULL,
    kind TEXT NOT NULL,
    ts INTEGER NOT NULL,
    item_type TEXT NOT NULL,
    summary TEXT NOT NULL,
    data TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cw_history_alarm ON cw_history (account, region, alarm, ts);
CREATE TABLE IF NOT EXISTS cw_dashboards (
    account TEXT NOT NULL,
    name TEXT NOT NULL,
    body TEXT NOT NULL,
    modified INTEGER NOT NULL,
    PRIMARY KEY (account, name)
);
";

static ITEMS_SCHEMA: &[&str] = &[documents_schema!("cw_items")];

/// `InvalidParameterValue` with AWS's message.
fn invalid_value(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterValueException", message)
}

/// `InvalidParameterCombination` with AWS's message.
fn invalid_combination(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterCombinationException", message)
}

/// `ValidationError` with AWS's message.
fn validation(message: impl Into<String>) -> AwsError {
    AwsError::new("ValidationException", message)
}

/// `MissingParameter`: `The parameter {name} is required.`
fn missing(name: &str) -> AwsError {
    AwsError::new(
        "MissingRequiredParameterException",
        format!("The parameter {name} is required."),
    )
}

/// A required string member, or MissingParameter naming it as `path`.
fn required_str<'a>(input: &'a Value, member: &str, path: &str) -> AwsResult<&'a str> {
    input.str(member).ok_or_else(|| missing(path))
}

/// A numeric member (the codecs give doubles as floats, or integers where the wire did).
fn number(value: &Value) -> Option<f64> {
    match value {
        Value::Float(f) => Some(*f),
        Value::Integer(i) => Some(*i as f64),
        Value::String(s) => s.parse().ok(),
        _ => None,
    }
}

/// Whether `ScanBy` asks for the oldest first (`TimestampAscending`; the default is
/// `TimestampDescending`).
fn scan_ascending(input: &Value) -> AwsResult<bool> {
    match input.str("ScanBy") {
        None | Some("TimestampDescending") => Ok(false),
        Some("TimestampAscending") => Ok(true),
        Some(other) => Err(invalid_value(format!(
            "The value {other} for parameter ScanBy is invalid."
        ))),
    }
}

/// A list member, empty when absent.
fn list<'a>(input: &'a Value, member: &str) -> &'a [Value] {
    input.get(member).and_then(Value::as_list).unwrap_or(&[])
}

/// The service's state, shared with the evaluation task.
struct Inner {
    env: Arc<Env>,
    schema: LazySchema,
    /// The evaluation task, woken when an alarm is created, changed or deleted.
    clock: ClockTask,
    /// The configuration resources ([`configs`]), in `cw_items`.
    docs: Documents,
    /// The last minute whose gauges were sampled.
    sampled: std::sync::Mutex<Option<i64>>,
}

/// CloudWatch.
pub struct CloudWatch {
    inner: Arc<Inner>,
}

impl CloudWatch {
    /// The service; its tables are created on its first call. On a persistent store that
    /// already holds alarms, the evaluation task starts now.
    pub fn new(env: Arc<Env>) -> io::Result<CloudWatch> {
        let inner = Arc::new(Inner {
            env: env.clone(),
            schema: LazySchema::new(&[SCHEMA]),
            clock: ClockTask::default(),
            sampled: std::sync::Mutex::new(None),
            docs: Documents::new(env.clone(), "cw_items", ITEMS_SCHEMA),
        });
        published::take_when_full(&inner);
        watch::resume(&inner).map_err(|e| io::Error::other(e.message))?;
        Ok(CloudWatch { inner })
    }
}

impl Inner {
    /// The store, its tables created.
    fn store(&self) -> AwsResult<&Store> {
        self.schema.store(&self.env.store)
    }

    /// The configuration resources' documents.
    fn docs(&self) -> &Documents {
        &self.docs
    }

    fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        self.absorb()?;
        match operation {
            "PutMetricData" => self.put_metric_data(ctx, input),
            "ListMetrics" => self.list_metrics(ctx, input),
            "GetMetricStatistics" => self.get_metric_statistics(ctx, input),
            "GetMetricData" => self.get_metric_data(ctx, input),
            "PutMetricAlarm" => self.put_metric_alarm(ctx, input),
            "PutCompositeAlarm" => self.put_composite_alarm(ctx, input),
            "PutLogAlarm" => self.put_log_alarm(ctx, input),
            "DescribeAlarms" => self.describe_alarms(ctx, input),
            "DescribeAlarmsForMetric" => self.describe_alarms_for_metric(ctx, input),
            "DeleteAlarms" => self.delete_alarms(ctx, input),
            "EnableAlarmActions" => self.set_actions_enabled(ctx, input, true),
            "DisableAlarmActions" => self.set_actions_enabled(ctx, input, false),
            "SetAlarmState" => self.set_alarm_state(ctx, input),
            "DescribeAlarmHistory" => self.describe_alarm_history(ctx, input),
            "PutDashboard" => self.put_dashboard(ctx, input),
            "GetDashboard" => self.get_dashboard(ctx, input),
            "ListDashboards" => self.list_dashboards(ctx, input),
            "DeleteDashboards" => self.delete_dashboards(ctx, input),
            "TagResource" => self.tag_resource(ctx, input),
            "UntagResource" => self.untag_resource(ctx, input),
            "ListTagsForResource" => self.list_tags(ctx, input),
            "PutMetricStream" => self.put_metric_stream(ctx, input),
            "GetMetricStream" => self.get_metric_stream(ctx, input),
            "ListMetricStreams" => self.list_metric_streams(ctx, input),
            "DeleteMetricStream" => self.delete_metric_stream(ctx, input),
            "StartMetricStreams" => self.set_stream_state(ctx, input, "running"),
            "StopMetricStreams" => self.set_stream_state(ctx, input, "stopped"),
            "PutAnomalyDetector" => self.put_anomaly_detector(ctx, input),
            "DescribeAnomalyDetectors" => self.describe_anomaly_detectors(ctx, input),
            "DeleteAnomalyDetector" => self.delete_anomaly_detector(ctx, input),
            "PutInsightRule" => self.put_insight_rule(ctx, input),
            "DescribeInsightRules" => self.describe_insight_rules(ctx, input),
            "DeleteInsightRules" => self.change_insight_rules(ctx, input, None),
            "EnableInsightRules" => self.change_insight_rules(ctx, input, Some("ENABLED")),
            "DisableInsightRules" => self.change_insight_rules(ctx, input, Some("DISABLED")),
            "GetInsightRuleReport" => self.get_insight_rule_report(ctx, input),
            "ListManagedInsightRules" => Ok(Value::map().with("ManagedRules", Vec::<Value>::new())),
            "PutManagedInsightRules" => self.put_managed_insight_rules(input),
            "PutMetricDataQueryDefinition" => self.put_query_definition(ctx, input),
            "GetMetricDataQueryDefinition" => self.get_query_definition(ctx, input),
            "ListMetricDataQueryDefinitions" => self.list_query_definitions(ctx, input),
            "DeleteMetricDataQueryDefinition" => self.delete_query_definition(ctx, input),
            "PutAlarmMuteRule" => self.put_alarm_mute_rule(ctx, input),
            "GetAlarmMuteRule" => self.get_alarm_mute_rule(ctx, input),
            "ListAlarmMuteRules" => self.list_alarm_mute_rules(ctx, input),
            "DeleteAlarmMuteRule" => self.delete_alarm_mute_rule(ctx, input),
            "GetOTelEnrichment" => self.get_otel_enrichment(ctx),
            "StartOTelEnrichment" => self.put_otel_enrichment(ctx, input, true),
            "UpdateOTelEnrichment" => self.put_otel_enrichment(ctx, input, false),
            "StopOTelEnrichment" => self.stop_otel_enrichment(ctx),
            "CreateResourceMetricsConfiguration" => self.put_resource_metrics(ctx, input, true),
            "UpdateResourceMetricsConfiguration" => self.put_resource_metrics(ctx, input, false),
            "GetResourceMetricsConfiguration" => self.get_resource_metrics(ctx, input),
            "DeleteResourceMetricsConfiguration" => self.delete_resource_metrics(ctx, input),
            "GetDataset" | "AssociateDatasetKmsKey" | "DisassociateDatasetKmsKey" => {
                self.no_dataset(input)
            }
            "DescribeAlarmContributors" => self.describe_alarm_contributors(ctx, input),
            "GetMetricWidgetImage" => self.get_metric_widget_image(input),
            other => Err(AwsError::not_implemented(other)),
        }
    }
}

impl Service for CloudWatch {
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
            let output = self.inner.dispatch(ctx, operation, &request.input)?;
            if operation == "PutMetricAlarm" {
                watch::start(&self.inner);
            }
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(self.inner.act(event))
    }
}
