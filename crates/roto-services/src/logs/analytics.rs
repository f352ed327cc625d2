//! Log anomaly detectors, lookup tables, scheduled queries and OpenSearch integrations,
//! stored and answered as CloudWatch Logs does (`logs_items`). They are kept, not run:
//! detectors find no anomalies, scheduled queries never trigger (their history is empty),
//! and an integration is reported `ACTIVE` without an OpenSearch collection behind it.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{bad_token, name_of_arn, Logs, DEFAULT_PAGE, SPEC};
use crate::documents::Scope;
use crate::ids;
use crate::paging::page;

const DETECTOR: &str = "anomaly-detector";
const LOOKUP_TABLE: &str = "lookup-table";
const SCHEDULED_QUERY: &str = "scheduled-query";
const INTEGRATION: &str = "integration";

fn not_found(what: &str, id: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("{what} {id} does not exist."),
    )
    .with_status(400)
}

/// One page of `items` after the input's `nextToken`, at most its `size_member` (else 50).
fn paged(input: &Value, items: Vec<Value>, member: &str, size_member: &str) -> AwsResult<Value> {
    let limit = input.int(size_member).unwrap_or(DEFAULT_PAGE).max(1) as usize;
    let (items, next) = page(items, limit, input.str("nextToken"), bad_token)?;
    Ok(Value::map().with(member, items).with_opt("nextToken", next))
}

/// Copies each of `members` the input sets onto `record`.
fn merge(record: &mut Value, input: &Value, members: &[&str]) {
    for member in members {
        if let Some(v) = input.get(member) {
            record.insert(*member, v.clone());
        }
    }
}

impl Logs {
    fn save_item(&self, ctx: &Context, kind: &str, id: &str, value: &Value) -> AwsResult<()> {
        self.docs.put_value(Scope::of(ctx, kind, ""), id, value)
    }

    fn found(&self, ctx: &Context, kind: &str, id: &str, what: &str) -> AwsResult<Value> {
        self.docs
            .value(Scope::of(ctx, kind, ""), id)?
            .ok_or_else(|| not_found(what, id))
    }

    fn found_as(
        &self,
        ctx: &Context,
        kind: &str,
        id: &str,
        what: &str,
        shape: &str,
    ) -> AwsResult<Value> {
        self.docs
            .value_as(SPEC.model(), Scope::of(ctx, kind, ""), id, shape)?
            .ok_or_else(|| not_found(what, id))
    }

    fn forget_item(&self, ctx: &Context, kind: &str, id: &str, what: &str) -> AwsResult<Value> {
        if !self.docs.delete(Scope::of(ctx, kind, ""), id)? {
            return Err(not_found(what, id));
        }
        Ok(Value::map())
    }

    pub(super) fn create_log_anomaly_detector(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        for arn in input
            .get("logGroupArnList")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
        {
            self.existing_group(ctx, name_of_arn(arn).unwrap_or(arn))?;
        }
        let arn = format!(
            "arn:aws:logs:{}:{}:anomaly-detector:{}",
            ctx.region,
            ctx.account,
            ids::uuid()
        );
        let now = self.now();
        let mut detector = Value::map()
            .with("anomalyDetectorArn", arn.as_str())
            .with("anomalyDetectorStatus", "INITIALIZING")
            .with("creationTimeStamp", now)
            .with("lastModifiedTimeStamp", now);
        merge(
            &mut detector,
            input,
            &[
                "detectorName",
                "logGroupArnList",
                "evaluationFrequency",
                "filterPattern",
                "kmsKeyId",
                "anomalyVisibilityTime",
            ],
        );
        self.save_item(ctx, DETECTOR, &arn, &detector)?;
        Ok(Value::map().with("anomalyDetectorArn", arn))
    }

    pub(super) fn get_log_anomaly_detector(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("anomalyDetectorArn").unwrap_or_default();
        self.found_as(
            ctx,
            DETECTOR,
            arn,
            "Anomaly detector",
            "GetLogAnomalyDetectorResponse",
        )
    }

    pub(super) fn update_log_anomaly_detector(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("anomalyDetectorArn").unwrap_or_default();
        let mut detector = self.found(ctx, DETECTOR, arn, "Anomaly detector")?;
        merge(
            &mut detector,
            input,
            &[
                "evaluationFrequency",
                "filterPattern",
                "anomalyVisibilityTime",
            ],
        );
        let status = if input.bool("enabled").unwrap_or(true) {
            "INITIALIZING"
        } else {
            "PAUSED"
        };
        detector.insert("anomalyDetectorStatus", status);
        detector.insert("lastModifiedTimeStamp", self.now());
        self.save_item(ctx, DETECTOR, arn, &detector)?;
        Ok(Value::map())
    }

    pub(super) fn delete_log_anomaly_detector(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = input.str("anomalyDetectorArn").unwrap_or_default();
        self.forget_item(ctx, DETECTOR, arn, "Anomaly detector")
    }

    pub(super) fn list_log_anomaly_detectors(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = input.str("filterLogGroupArn");
        let detectors: Vec<Value> = self
            .docs
            .values_as(
                SPEC.model(),
                Scope::of(ctx, DETECTOR, ""),
                "AnomalyDetector",
            )?
            .into_iter()
            .filter(|d| {
                let groups = d
                    .get("logGroupArnList")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                group.is_none_or(|g| groups.iter().any(|a| a.as_str() == Some(g)))
            })
            .collect();
        paged(input, detectors, "anomalyDetectors", "limit")
    }

    /// A lookup table's CSV body: its header's fields and its count of records.
    fn table_facts(body: &str) -> (Vec<Value>, i64) {
        let mut lines = body.lines().filter(|l| !l.trim().is_empty());
        let fields = lines
            .next()
            .map(|h| h.split(',').map(|f| Value::from(f.trim())).collect())
            .unwrap_or_default();
        (fields, lines.count() as i64)
    }

    /// Sets a lookup table's body and what is read from it.
    fn set_table_body(table: &mut Value, body: &str, now: i64) {
        let (fields, records) = Self::table_facts(body);
        table.insert("tableBody", body);
        table.insert("tableFields", fields);
        table.insert("recordsCount", records);
        table.insert("sizeBytes", body.len() as i64);
        table.insert("lastUpdatedTime", now);
    }

    pub(super) fn create_lookup_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("lookupTableName").unwrap_or_default();
        let arn = format!(
            "arn:aws:logs:{}:{}:lookup-table:{name}",
            ctx.region, ctx.account
        );
        if self
            .docs
            .get(Scope::of(ctx, LOOKUP_TABLE, ""), &arn)?
            .is_some()
        {
            return Err(AwsError::new(
                "ResourceAlreadyExistsException",
                format!("Lookup table {name} already exists."),
            )
            .with_status(400));
        }
        let now = self.now();
        let mut table = Value::map()
            .with("lookupTableArn", arn.as_str())
            .with("lookupTableName", name);
        merge(&mut table, input, &["description", "kmsKeyId"]);
        Self::set_table_body(&mut table, input.str("tableBody").unwrap_or_default(), now);
        self.save_item(ctx, LOOKUP_TABLE, &arn, &table)?;
        Ok(Value::map()
            .with("lookupTableArn", arn)
            .with("createdAt", now))
    }

    pub(super) fn get_lookup_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("lookupTableArn").unwrap_or_default();
        self.found_as(
            ctx,
            LOOKUP_TABLE,
            arn,
            "Lookup table",
            "GetLookupTableResponse",
        )
    }

    pub(super) fn update_lookup_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("lookupTableArn").unwrap_or_default();
        let mut table = self.found(ctx, LOOKUP_TABLE, arn, "Lookup table")?;
        merge(&mut table, input, &["description", "kmsKeyId"]);
        let now = self.now();
        let body = input
            .str("tableBody")
            .or(table.str("tableBody"))
            .unwrap_or_default()
            .to_string();
        Self::set_table_body(&mut table, &body, now);
        self.save_item(ctx, LOOKUP_TABLE, arn, &table)?;
        Ok(Value::map()
            .with("lookupTableArn", arn)
            .with("lastUpdatedTime", now))
    }

    pub(super) fn delete_lookup_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("lookupTableArn").unwrap_or_default();
        self.forget_item(ctx, LOOKUP_TABLE, arn, "Lookup table")
    }

    pub(super) fn describe_lookup_tables(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("lookupTableNamePrefix").unwrap_or_default();
        let tables: Vec<Value> = self
            .docs
            .values_as(
                SPEC.model(),
                Scope::of(ctx, LOOKUP_TABLE, ""),
                "LookupTable",
            )?
            .into_iter()
            .filter(|t| {
                t.str("lookupTableName")
                    .unwrap_or_default()
                    .starts_with(prefix)
            })
            .collect();
        paged(input, tables, "lookupTables", "maxResults")
    }

    /// The scheduled query an `identifier` (its name or ARN) names, with its ARN.
    fn scheduled_query(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Value)> {
        let identifier = input.str("identifier").unwrap_or_default();
        let found = self
            .docs
            .list(Scope::of(ctx, SCHEDULED_QUERY, ""))?
            .into_iter()
            .map(|doc| Value::from_json(&doc))
            .find(|q| {
                q.str("scheduledQueryArn") == Some(identifier) || q.str("name") == Some(identifier)
            })
            .ok_or_else(|| not_found("Scheduled query", identifier))?;
        let arn = found
            .str("scheduledQueryArn")
            .unwrap_or_default()
            .to_string();
        Ok((arn, found))
    }

    pub(super) fn create_scheduled_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        if self
            .scheduled_query(ctx, &Value::map().with("identifier", name))
            .is_ok()
        {
            return Err(AwsError::new(
                "ConflictException",
                format!("Scheduled query {name} already exists."),
            )
            .with_status(400));
        }
        let arn = format!(
            "arn:aws:logs:{}:{}:scheduled-query:{}",
            ctx.region,
            ctx.account,
            ids::uuid()
        );
        let now = self.now();
        let mut query = Value::map()
            .with("scheduledQueryArn", arn.as_str())
            .with("state", "ENABLED")
            .with("scheduleType", "CUSTOMER_MANAGED")
            .with("creationTime", now)
            .with("lastUpdatedTime", now);
        merge(&mut query, input, SCHEDULED_QUERY_MEMBERS);
        self.save_item(ctx, SCHEDULED_QUERY, &arn, &query)?;
        let state = query.str("state").unwrap_or("ENABLED").to_string();
        Ok(Value::map()
            .with("scheduledQueryArn", arn)
            .with("state", state))
    }

    pub(super) fn get_scheduled_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, _) = self.scheduled_query(ctx, input)?;
        self.found_as(
            ctx,
            SCHEDULED_QUERY,
            &arn,
            "Scheduled query",
            "GetScheduledQueryResponse",
        )
    }

    pub(super) fn update_scheduled_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, mut query) = self.scheduled_query(ctx, input)?;
        merge(&mut query, input, SCHEDULED_QUERY_MEMBERS);
        query.insert("lastUpdatedTime", self.now());
        self.save_item(ctx, SCHEDULED_QUERY, &arn, &query)?;
        self.found_as(
            ctx,
            SCHEDULED_QUERY,
            &arn,
            "Scheduled query",
            "UpdateScheduledQueryResponse",
        )
    }

    pub(super) fn delete_scheduled_query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, _) = self.scheduled_query(ctx, input)?;
        self.forget_item(ctx, SCHEDULED_QUERY, &arn, "Scheduled query")
    }

    pub(super) fn list_scheduled_queries(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let state = input.str("state");
        let queries: Vec<Value> = self
            .docs
            .values_as(
                SPEC.model(),
                Scope::of(ctx, SCHEDULED_QUERY, ""),
                "ScheduledQuerySummary",
            )?
            .into_iter()
            .filter(|q| state.is_none() || q.str("state") == state)
            .collect();
        paged(input, queries, "scheduledQueries", "maxResults")
    }

    pub(super) fn get_scheduled_query_history(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (arn, query) = self.scheduled_query(ctx, input)?;
        Ok(Value::map()
            .with_opt("name", query.str("name"))
            .with("scheduledQueryArn", arn)
            .with("triggerHistory", Vec::<Value>::new()))
    }

    pub(super) fn put_integration(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("integrationName").unwrap_or_default();
        let integration = Value::map()
            .with("integrationName", name)
            .with_opt("integrationType", input.str("integrationType"))
            .with("integrationStatus", "ACTIVE")
            .with_opt("resourceConfig", input.get("resourceConfig").cloned())
            .with(
                "integrationDetails",
                Value::map().with("openSearchIntegrationDetails", Value::map()),
            );
        self.save_item(ctx, INTEGRATION, name, &integration)?;
        Ok(Value::map()
            .with("integrationName", name)
            .with("integrationStatus", "ACTIVE"))
    }

    pub(super) fn get_integration(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("integrationName").unwrap_or_default();
        self.found_as(
            ctx,
            INTEGRATION,
            name,
            "Integration",
            "GetIntegrationResponse",
        )
    }

    pub(super) fn delete_integration(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("integrationName").unwrap_or_default();
        self.forget_item(ctx, INTEGRATION, name, "Integration")
    }

    pub(super) fn list_integrations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("integrationNamePrefix").unwrap_or_default();
        let integrations: Vec<Value> = self
            .docs
            .values_as(
                SPEC.model(),
                Scope::of(ctx, INTEGRATION, ""),
                "IntegrationSummary",
            )?
            .into_iter()
            .filter(|i| {
                i.str("integrationName")
                    .unwrap_or_default()
                    .starts_with(prefix)
                    && ["integrationType", "integrationStatus"]
                        .iter()
                        .all(|m| input.str(m).is_none() || input.str(m) == i.str(m))
            })
            .collect();
        Ok(Value::map().with("integrationSummaries", integrations))
    }
}

/// The members a scheduled query keeps from Create and Update.
const SCHEDULED_QUERY_MEMBERS: &[&str] = &[
    "name",
    "description",
    "queryLanguage",
    "queryString",
    "logGroupIdentifiers",
    "scheduleExpression",
    "timezone",
    "startTimeOffset",
    "endTimeOffset",
    "destinationConfiguration",
    "scheduleStartTime",
    "scheduleEndTime",
    "executionRoleArn",
    "state",
    "tags",
];
