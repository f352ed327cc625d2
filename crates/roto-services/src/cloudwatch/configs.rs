//! The configuration resources CloudWatch keeps without running them: metric streams,
//! anomaly detectors, Contributor Insights rules, metric data query definitions, alarm mute
//! rules, OTel enrichment and resource metrics configurations, stored whole (one document
//! each, `cw_items`) and returned as they were put, with AWS's checks, states and errors.
//! Nothing runs behind them: streams deliver nothing to Firehose, detectors train no model
//! (they stay `PENDING_TRAINING`), insight rules analyse no logs (their reports are empty),
//! mute rules mute nothing. What Roto does not model at all answers as AWS does for an
//! account without it: no managed rules, no datasets, no alarm contributors, and a blank
//! image for GetMetricWidgetImage.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::{invalid_combination, invalid_value, list, missing, required_str, Inner, SPEC};
use crate::documents::{document, shaped, Scope};
use crate::ids::uuid;
use crate::paging::page;

const STREAM: &str = "metric-stream";
const DETECTOR: &str = "anomaly-detector";
const INSIGHT: &str = "insight-rule";
const QUERY: &str = "query-definition";
const MUTE: &str = "mute-rule";
const OTEL: &str = "otel-enrichment";
const RESOURCE: &str = "resource-metrics";
const OUTPUT_FORMATS: &[&str] = &["json", "opentelemetry0.7", "opentelemetry1.0"];
/// A 1x1 transparent PNG: Roto draws no graphs.
const BLANK_PNG: &[u8] = &[
    0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x48, 0x44, 0x52,
    0x00, 0x00, 0x00, 0x01, 0x00, 0x00, 0x00, 0x01, 0x08, 0x06, 0x00, 0x00, 0x00, 0x1f, 0x15, 0xc4,
    0x89, 0x00, 0x00, 0x00, 0x0d, 0x49, 0x44, 0x41, 0x54, 0x78, 0x9c, 0x63, 0x00, 0x01, 0x00, 0x00,
    0x05, 0x00, 0x01, 0x0d, 0x0a, 0x2d, 0xb4, 0x00, 0x00, 0x00, 0x00, 0x49, 0x45, 0x4e, 0x44, 0xae,
    0x42, 0x60, 0x82,
];

fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new("ResourceNotFoundException", message)
}

fn arn(ctx: &Context, resource: &str) -> String {
    format!(
        "arn:aws:cloudwatch:{}:{}:{resource}",
        ctx.region, ctx.account
    )
}

/// Epoch seconds, as documents keep timestamps.
fn now_seconds() -> Json {
    json!(now_millis() as f64 / 1000.0)
}

/// A document as the model's `shape`.
fn as_shape(shape: &str, doc: &Json) -> AwsResult<Value> {
    shaped(SPEC.model(), shape, doc)
}

/// A page of documents as `shape`, under `member`, with `NextToken`.
fn paged(docs: Vec<Json>, shape: &str, member: &str, input: &Value, max: &str) -> AwsResult<Value> {
    let items = docs
        .iter()
        .map(|d| as_shape(shape, d))
        .collect::<AwsResult<Vec<_>>>()?;
    let limit = input.int(max).map_or(100, |m| m.clamp(1, 500) as usize);
    let bad = || {
        AwsError::new(
            "InvalidNextToken",
            "The service couldn't process the token.",
        )
    };
    let (items, next) = page(items, limit, input.str("NextToken"), bad)?;
    Ok(Value::map()
        .with(member, Value::List(items))
        .with_opt("NextToken", next))
}

/// A `Failures` list naming `names` as not found (DeleteInsightRules and its kin).
fn failures(names: Vec<&str>) -> Value {
    Value::List(
        names
            .into_iter()
            .map(|n| {
                Value::map()
                    .with("FailureResource", n)
                    .with("ExceptionType", "ResourceNotFound")
                    .with("FailureCode", "404")
                    .with("FailureDescription", format!("Rule {n} does not exist."))
            })
            .collect(),
    )
}

impl Inner {
    pub(super) fn put_metric_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "Name", "Name")?;
        for member in ["FirehoseArn", "RoleArn", "OutputFormat"] {
            required_str(input, member, member)?;
        }
        let format = input.str("OutputFormat").unwrap_or_default();
        if !OUTPUT_FORMATS.contains(&format) {
            return Err(invalid_value(format!(
                "The value {format} for parameter OutputFormat is invalid."
            )));
        }
        if !list(input, "IncludeFilters").is_empty() && !list(input, "ExcludeFilters").is_empty() {
            return Err(invalid_combination(
                "You cannot specify both IncludeFilters and ExcludeFilters.",
            ));
        }
        let docs = self.docs();
        let old = docs.get(Scope::of(ctx, STREAM, ""), name)?;
        let stream_arn = arn(ctx, &format!("metric-stream/{name}"));
        let mut doc = document(input);
        doc["Arn"] = json!(stream_arn);
        doc["State"] = json!("running");
        doc["CreationDate"] = old.map_or_else(now_seconds, |o| o["CreationDate"].clone());
        doc["LastUpdateDate"] = now_seconds();
        doc["IncludeLinkedAccountsMetrics"] = json!(matches!(
            input.get("IncludeLinkedAccountsMetrics"),
            Some(Value::Bool(true))
        ));
        docs.put(Scope::of(ctx, STREAM, ""), name, &doc)?;
        Ok(Value::map().with("Arn", stream_arn))
    }

    pub(super) fn get_metric_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "Name", "Name")?;
        let doc = self
            .docs()
            .get(Scope::of(ctx, STREAM, ""), name)?
            .ok_or_else(|| not_found(format!("The metric stream {name} does not exist.")))?;
        as_shape("GetMetricStreamOutput", &doc)
    }

    pub(super) fn list_metric_streams(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let docs = self.docs().list(Scope::of(ctx, STREAM, ""))?;
        paged(docs, "MetricStreamEntry", "Entries", input, "MaxResults")
    }

    pub(super) fn delete_metric_stream(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "Name", "Name")?;
        self.docs().delete(Scope::of(ctx, STREAM, ""), name)?;
        Ok(Value::map())
    }

    /// StartMetricStreams and StopMetricStreams: the named streams that exist take `state`.
    pub(super) fn set_stream_state(
        &self,
        ctx: &Context,
        input: &Value,
        state: &str,
    ) -> AwsResult<Value> {
        if input.get("Names").is_none() {
            return Err(missing("Names"));
        }
        let docs = self.docs();
        for name in list(input, "Names").iter().filter_map(Value::as_str) {
            if let Some(mut doc) = docs.get(Scope::of(ctx, STREAM, ""), name)? {
                doc["State"] = json!(state);
                doc["LastUpdateDate"] = now_seconds();
                docs.put(Scope::of(ctx, STREAM, ""), name, &doc)?;
            }
        }
        Ok(Value::map())
    }

    pub(super) fn put_anomaly_detector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, mut doc) = detector_of(input)?;
        let docs = self.docs();
        let id = match docs.get(Scope::of(ctx, DETECTOR, ""), &key)? {
            Some(old) => old["AnomalyDetectorId"]
                .as_str()
                .unwrap_or_default()
                .to_string(),
            None => uuid(),
        };
        doc["AnomalyDetectorId"] = json!(id);
        doc["StateValue"] = json!("PENDING_TRAINING");
        for member in ["Configuration", "MetricCharacteristics"] {
            if let Some(v) = input.get(member) {
                doc[member] = document(v);
            }
        }
        docs.put(Scope::of(ctx, DETECTOR, ""), &key, &doc)?;
        Ok(Value::map().with("AnomalyDetectorId", id))
    }

    pub(super) fn describe_anomaly_detectors(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let ids: Vec<&str> = list(input, "AnomalyDetectorIds")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let types: Vec<&str> = list(input, "AnomalyDetectorTypes")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let dims = document(input.get("Dimensions").unwrap_or(&Value::List(Vec::new())));
        let wanted = |d: &Json| {
            let single = d.get("SingleMetricAnomalyDetector");
            let kind = if single.is_some() {
                "SINGLE_METRIC"
            } else {
                "METRIC_MATH"
            };
            let member = |m: &str| single.and_then(|s| s.get(m)).and_then(Json::as_str);
            (ids.is_empty() || ids.contains(&d["AnomalyDetectorId"].as_str().unwrap_or_default()))
                && (types.is_empty() || types.contains(&kind))
                && input
                    .str("Namespace")
                    .is_none_or(|n| member("Namespace") == Some(n))
                && input
                    .str("MetricName")
                    .is_none_or(|n| member("MetricName") == Some(n))
                && (dims.as_array().is_none_or(Vec::is_empty)
                    || single.and_then(|s| s.get("Dimensions")) == Some(&dims))
        };
        let docs = self
            .docs()
            .list(Scope::of(ctx, DETECTOR, ""))?
            .into_iter()
            .filter(wanted)
            .collect();
        paged(
            docs,
            "AnomalyDetector",
            "AnomalyDetectors",
            input,
            "MaxResults",
        )
    }

    pub(super) fn delete_anomaly_detector(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (key, _) = detector_of(input)?;
        if !self.docs().delete(Scope::of(ctx, DETECTOR, ""), &key)? {
            return Err(AwsError::new(
                "ResourceNotFoundException",
                "No anomaly detector found for namespace, metric name, dimensions and stat.",
            ));
        }
        Ok(Value::map())
    }

    pub(super) fn put_insight_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "RuleName", "RuleName")?;
        let definition = required_str(input, "RuleDefinition", "RuleDefinition")?;
        let parsed: Json = serde_json::from_str(definition).map_err(|_| {
            invalid_value("The value for parameter RuleDefinition is not a valid JSON document.")
        })?;
        let schema = &parsed["Schema"];
        let state = input.str("RuleState").unwrap_or("ENABLED");
        if !matches!(state, "ENABLED" | "DISABLED") {
            return Err(invalid_value(format!(
                "The value {state} for parameter RuleState is invalid."
            )));
        }
        let doc = json!({
            "Name": name,
            "State": state,
            "Schema": format!("{}/{}", schema["Name"].as_str().unwrap_or("CloudWatchLogRule"),
                              schema["Version"].as_i64().unwrap_or(1)),
            "Definition": definition,
            "ManagedRule": false,
            "ApplyOnTransformedLogs": matches!(input.get("ApplyOnTransformedLogs"), Some(Value::Bool(true))),
        });
        self.docs().put(Scope::of(ctx, INSIGHT, ""), name, &doc)?;
        Ok(Value::map())
    }

    pub(super) fn describe_insight_rules(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let docs = self.docs().list(Scope::of(ctx, INSIGHT, ""))?;
        paged(docs, "InsightRule", "InsightRules", input, "MaxResults")
    }

    /// DeleteInsightRules, EnableInsightRules, DisableInsightRules: `state` None deletes.
    pub(super) fn change_insight_rules(
        &self,
        ctx: &Context,
        input: &Value,
        state: Option<&str>,
    ) -> AwsResult<Value> {
        if input.get("RuleNames").is_none() {
            return Err(missing("RuleNames"));
        }
        let docs = self.docs();
        let mut absent = Vec::new();
        for name in list(input, "RuleNames").iter().filter_map(Value::as_str) {
            match (docs.get(Scope::of(ctx, INSIGHT, ""), name)?, state) {
                (None, _) => absent.push(name),
                (Some(_), None) => {
                    docs.delete(Scope::of(ctx, INSIGHT, ""), name)?;
                }
                (Some(mut doc), Some(state)) => {
                    doc["State"] = json!(state);
                    docs.put(Scope::of(ctx, INSIGHT, ""), name, &doc)?;
                }
            }
        }
        Ok(Value::map().with("Failures", failures(absent)))
    }

    /// An empty report: Roto analyses no logs for the rule.
    pub(super) fn get_insight_rule_report(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "RuleName", "RuleName")?;
        for member in ["StartTime", "EndTime", "Period"] {
            if input.get(member).is_none() {
                return Err(missing(member));
            }
        }
        let doc = self
            .docs()
            .get(Scope::of(ctx, INSIGHT, ""), name)?
            .ok_or_else(|| not_found(format!("Rule {name} does not exist.")))?;
        let definition: Json =
            serde_json::from_str(doc["Definition"].as_str().unwrap_or("{}")).unwrap_or_default();
        let keys: Vec<Value> = definition["Contribution"]["Keys"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str)
            .map(Value::from)
            .collect();
        Ok(Value::map()
            .with("KeyLabels", Value::List(keys))
            .with(
                "AggregationStatistic",
                definition["AggregateOn"].as_str().unwrap_or("Count"),
            )
            .with("AggregateValue", 0.0)
            .with("ApproximateUniqueCount", 0i64)
            .with("Contributors", Value::List(Vec::new()))
            .with("MetricDatapoints", Value::List(Vec::new())))
    }

    /// Every template fails: no resource Roto serves has managed rules.
    pub(super) fn put_managed_insight_rules(&self, input: &Value) -> AwsResult<Value> {
        if input.get("ManagedRules").is_none() {
            return Err(missing("ManagedRules"));
        }
        let failed = list(input, "ManagedRules")
            .iter()
            .map(|r| {
                let template = r.str("TemplateName").unwrap_or_default();
                Value::map()
                    .with("FailureResource", r.str("ResourceARN").unwrap_or_default())
                    .with("ExceptionType", "InvalidParameterValue")
                    .with("FailureCode", "400")
                    .with(
                        "FailureDescription",
                        format!("Template {template} is not available for the resource."),
                    )
            })
            .collect();
        Ok(Value::map().with("Failures", Value::List(failed)))
    }

    pub(super) fn put_query_definition(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        for member in ["Path", "Expression", "Type"] {
            required_str(input, member, member)?;
        }
        let docs = self.docs();
        let (id, created) = match input.str("Id") {
            Some(id) => {
                let old = docs.get(Scope::of(ctx, QUERY, ""), id)?.ok_or_else(|| {
                    not_found(format!(
                        "The metric data query definition {id} does not exist."
                    ))
                })?;
                (id.to_string(), old["CreatedAt"].clone())
            }
            None => (uuid(), now_seconds()),
        };
        let mut doc = document(input);
        doc["Id"] = json!(id);
        doc["Arn"] = json!(arn(ctx, &format!("metric-data-query-definition/{id}")));
        doc["CreatedAt"] = created;
        doc["UpdatedAt"] = now_seconds();
        docs.put(Scope::of(ctx, QUERY, ""), &id, &doc)?;
        as_shape("PutMetricDataQueryDefinitionOutput", &doc)
    }

    pub(super) fn get_query_definition(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = required_str(input, "Id", "Id")?;
        let doc = self
            .docs()
            .get(Scope::of(ctx, QUERY, ""), id)?
            .ok_or_else(|| {
                not_found(format!(
                    "The metric data query definition {id} does not exist."
                ))
            })?;
        as_shape("GetMetricDataQueryDefinitionOutput", &doc)
    }

    pub(super) fn list_query_definitions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let docs = self.docs().list(Scope::of(ctx, QUERY, ""))?;
        paged(
            docs,
            "MetricDataQueryDefinitionSummary",
            "Items",
            input,
            "MaxResults",
        )
    }

    pub(super) fn delete_query_definition(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = required_str(input, "Id", "Id")?;
        self.docs().delete(Scope::of(ctx, QUERY, ""), id)?;
        Ok(Value::map())
    }

    pub(super) fn put_alarm_mute_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "Name", "Name")?;
        if input.get("Rule").is_none() {
            return Err(missing("Rule"));
        }
        let mut doc = document(input);
        doc["AlarmMuteRuleArn"] = json!(arn(ctx, &format!("alarm-mute-rule:{name}")));
        doc["LastUpdatedTimestamp"] = now_seconds();
        doc["MuteType"] = json!(
            if input.get("Rule").and_then(|r| r.get("Schedule")).is_some() {
                "RECURRING"
            } else {
                "ONE_TIME"
            }
        );
        self.docs().put(Scope::of(ctx, MUTE, ""), name, &doc)?;
        Ok(Value::map())
    }

    pub(super) fn get_alarm_mute_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "AlarmMuteRuleName", "AlarmMuteRuleName")?;
        let doc = self
            .docs()
            .get(Scope::of(ctx, MUTE, ""), name)?
            .ok_or_else(|| not_found(format!("The alarm mute rule {name} does not exist.")))?;
        as_shape("GetAlarmMuteRuleOutput", &with_status(doc))
    }

    pub(super) fn list_alarm_mute_rules(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let statuses: Vec<&str> = list(input, "Statuses")
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let alarm = input.str("AlarmName");
        let docs = self
            .docs()
            .list(Scope::of(ctx, MUTE, ""))?
            .into_iter()
            .map(with_status)
            .filter(|d| {
                statuses.is_empty() || statuses.contains(&d["Status"].as_str().unwrap_or_default())
            })
            .filter(|d| {
                alarm.is_none_or(|a| {
                    d["MuteTargets"]["AlarmNames"]
                        .as_array()
                        .is_some_and(|n| n.iter().any(|x| x == a))
                })
            })
            .collect();
        paged(
            docs,
            "AlarmMuteRuleSummary",
            "AlarmMuteRuleSummaries",
            input,
            "MaxRecords",
        )
    }

    pub(super) fn delete_alarm_mute_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = required_str(input, "AlarmMuteRuleName", "AlarmMuteRuleName")?;
        self.docs().delete(Scope::of(ctx, MUTE, ""), name)?;
        Ok(Value::map())
    }

    pub(super) fn get_otel_enrichment(&self, ctx: &Context) -> AwsResult<Value> {
        let doc = self
            .docs()
            .get(Scope::of(ctx, OTEL, ""), "")?
            .unwrap_or_else(|| json!({"Status": "STOPPED"}));
        as_shape("GetOTelEnrichmentOutput", &doc)
    }

    /// StartOTelEnrichment (`start`) and UpdateOTelEnrichment (of a started enrichment).
    pub(super) fn put_otel_enrichment(
        &self,
        ctx: &Context,
        input: &Value,
        start: bool,
    ) -> AwsResult<Value> {
        let docs = self.docs();
        let old = docs.get(Scope::of(ctx, OTEL, ""), "")?;
        if !start && old.is_none() {
            return Err(not_found(
                "OTel enrichment is not enabled for this account.",
            ));
        }
        let mut doc = document(input);
        doc["Status"] = json!("RUNNING");
        doc["CreatedAt"] = old.map_or_else(now_seconds, |o| o["CreatedAt"].clone());
        doc["UpdatedAt"] = now_seconds();
        docs.put(Scope::of(ctx, OTEL, ""), "", &doc)?;
        as_shape("StartOTelEnrichmentOutput", &doc)
    }

    pub(super) fn stop_otel_enrichment(&self, ctx: &Context) -> AwsResult<Value> {
        let docs = self.docs();
        if let Some(mut doc) = docs.get(Scope::of(ctx, OTEL, ""), "")? {
            doc["Status"] = json!("STOPPED");
            doc["UpdatedAt"] = now_seconds();
            docs.put(Scope::of(ctx, OTEL, ""), "", &doc)?;
        }
        Ok(Value::map())
    }

    /// Create (`create`) or UpdateResourceMetricsConfiguration.
    pub(super) fn put_resource_metrics(
        &self,
        ctx: &Context,
        input: &Value,
        create: bool,
    ) -> AwsResult<Value> {
        let resource = required_str(input, "ResourceArn", "ResourceArn")?;
        let docs = self.docs();
        let old = docs.get(Scope::of(ctx, RESOURCE, ""), resource)?;
        let created = match (old, create) {
            (Some(_), true) => {
                return Err(AwsError::new(
                    "ConflictException",
                    format!("A resource metrics configuration for {resource} already exists."),
                ))
            }
            (None, false) => return Err(resource_not_found(resource)),
            (Some(o), false) => o["CreatedAt"].clone(),
            (None, true) => now_seconds(),
        };
        let mut doc = document(input);
        doc["CreatedAt"] = created;
        doc["UpdatedAt"] = now_seconds();
        docs.put(Scope::of(ctx, RESOURCE, ""), resource, &doc)?;
        Ok(Value::map().with(
            "ResourceMetricsConfiguration",
            as_shape("ResourceMetricsConfiguration", &doc)?,
        ))
    }

    pub(super) fn get_resource_metrics(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = required_str(input, "ResourceArn", "ResourceArn")?;
        let doc = self
            .docs()
            .get(Scope::of(ctx, RESOURCE, ""), resource)?
            .ok_or_else(|| resource_not_found(resource))?;
        Ok(Value::map().with(
            "ResourceMetricsConfiguration",
            as_shape("ResourceMetricsConfiguration", &doc)?,
        ))
    }

    pub(super) fn delete_resource_metrics(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let resource = required_str(input, "ResourceArn", "ResourceArn")?;
        if !self.docs().delete(Scope::of(ctx, RESOURCE, ""), resource)? {
            return Err(resource_not_found(resource));
        }
        Ok(Value::map())
    }

    /// GetDataset, Associate/DisassociateDatasetKmsKey: Roto keeps no datasets.
    pub(super) fn no_dataset(&self, input: &Value) -> AwsResult<Value> {
        let id = required_str(input, "DatasetIdentifier", "DatasetIdentifier")?;
        Err(not_found(format!("Dataset {id} does not exist."))
            .with_field("ResourceType", "Dataset")
            .with_field("ResourceId", id))
    }

    /// No contributors: Roto's alarms are not Contributor Insights alarms.
    pub(super) fn describe_alarm_contributors(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = required_str(input, "AlarmName", "AlarmName")?;
        let found = self.describe_alarms(
            ctx,
            &Value::map()
                .with("AlarmNames", vec![Value::from(name)])
                .with(
                    "AlarmTypes",
                    vec![Value::from("MetricAlarm"), Value::from("CompositeAlarm")],
                ),
        )?;
        let count = ["MetricAlarms", "CompositeAlarms"]
            .iter()
            .map(|m| list(&found, m).len())
            .sum::<usize>();
        if count == 0 {
            return Err(AwsError::new(
                "ResourceNotFound",
                format!("Alarm {name} not found"),
            ));
        }
        Ok(Value::map().with("AlarmContributors", Value::List(Vec::new())))
    }

    pub(super) fn get_metric_widget_image(&self, input: &Value) -> AwsResult<Value> {
        let widget = required_str(input, "MetricWidget", "MetricWidget")?;
        if !serde_json::from_str::<Json>(widget).is_ok_and(|w| w.is_object()) {
            return Err(invalid_value(
                "The value for parameter MetricWidget is not a valid JSON object.",
            ));
        }
        Ok(Value::map().with("MetricWidgetImage", Value::Blob(BLANK_PNG.to_vec())))
    }
}

fn resource_not_found(resource: &str) -> AwsError {
    not_found(format!(
        "No resource metrics configuration exists for {resource}."
    ))
    .with_field("ResourceType", "ResourceMetricsConfiguration")
    .with_field("ResourceId", resource)
}

/// A mute rule with its status on the server clock.
fn with_status(mut doc: Json) -> Json {
    let now = now_millis() as f64 / 1000.0;
    let status = match (doc["StartDate"].as_f64(), doc["ExpireDate"].as_f64()) {
        (_, Some(end)) if end <= now => "EXPIRED",
        (Some(start), _) if start > now => "SCHEDULED",
        _ => "ACTIVE",
    };
    doc["Status"] = json!(status);
    doc
}

/// The detector an input names (SingleMetricAnomalyDetector, MetricMathAnomalyDetector, or
/// the legacy members), as its document and the key it is stored under.
fn detector_of(input: &Value) -> AwsResult<(String, Json)> {
    let legacy = ["Namespace", "MetricName", "Dimensions", "Stat"];
    let has_legacy = legacy.iter().any(|m| input.get(m).is_some());
    let single = input.get("SingleMetricAnomalyDetector");
    let math = input.get("MetricMathAnomalyDetector");
    if [has_legacy, single.is_some(), math.is_some()]
        .iter()
        .filter(|b| **b)
        .count()
        > 1
    {
        return Err(invalid_combination(
            "The parameters SingleMetricAnomalyDetector, MetricMathAnomalyDetector and the metric members are mutually exclusive.",
        ));
    }
    if let Some(math) = math {
        let doc = json!({"MetricMathAnomalyDetector": document(math)});
        return Ok((format!("math:{}", doc["MetricMathAnomalyDetector"]), doc));
    }
    let source = single.unwrap_or(input);
    let mut spec = serde_json::Map::new();
    for member in legacy {
        match source.get(member) {
            Some(v) => {
                spec.insert(member.to_string(), document(v));
            }
            None if member == "Dimensions" => {
                spec.insert(member.to_string(), json!([]));
            }
            None if single.is_some() && member != "Namespace" && member != "MetricName" => {
                return Err(missing(&format!("SingleMetricAnomalyDetector.{member}")));
            }
            None => return Err(missing(member)),
        }
    }
    let spec = Json::Object(spec);
    let mut doc = spec.clone();
    doc["SingleMetricAnomalyDetector"] = spec.clone();
    Ok((format!("single:{spec}"), doc))
}
