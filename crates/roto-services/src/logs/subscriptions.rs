//! Subscription filters: log events matching a filter pattern are sent on, as they arrive,
//! to a destination (a Lambda function here), through the event bus.
//!
//! A Lambda destination receives what AWS sends: `{"awslogs": {"data": ...}}`, the data a
//! base64 gzip of `{"messageType": "DATA_MESSAGE", "owner", "logGroup", "logStream",
//! "subscriptionFilters", "logEvents": [{"id", "timestamp", "message"}]}`.

use base64::Engine;
use roto_core::events::Event;
use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::params;

use super::filter::Pattern;
use super::{from_document, group_arn, invalid, Logs};
use crate::gzip;

/// How many subscription filters one log group may have.
const MAX_FILTERS: usize = 2;

/// One subscription filter.
struct Subscription {
    name: String,
    pattern: String,
    destination: String,
    value: Value,
}

impl Logs {
    fn subscriptions(&self, ctx: &Context, group: &str) -> AwsResult<Vec<Subscription>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT name, pattern, destination, config FROM logs_subscriptions
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 ORDER BY name",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, group], |r| {
                let config: String = r.get(3)?;
                Ok(Subscription {
                    name: r.get(0)?,
                    pattern: r.get(1)?,
                    destination: r.get(2)?,
                    value: from_document(&config),
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    pub(super) fn put_subscription_filter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let name = input.str("filterName").unwrap_or_default();
        let pattern = input.str("filterPattern").unwrap_or_default();
        let destination = input.str("destinationArn").unwrap_or_default();
        let existing = self.standard_group(ctx, group)?;
        Pattern::parse(pattern).map_err(invalid)?;
        let service = destination.split(':').nth(2).unwrap_or_default();
        if !destination.starts_with("arn:")
            || !["lambda", "kinesis", "firehose", "logs"].contains(&service)
        {
            return Err(invalid(format!("Invalid destination ARN: {destination}")));
        }
        let current = self.subscriptions(ctx, group)?;
        if current.len() >= MAX_FILTERS && !current.iter().any(|s| s.name == name) {
            return Err(
                AwsError::new("LimitExceededException", "Resource limit exceeded.")
                    .with_status(400),
            );
        }
        let config = serde_json::json!({
            "filterName": name,
            "logGroupName": existing.name,
            "filterPattern": pattern,
            "destinationArn": destination,
            "roleArn": input.str("roleArn"),
            "distribution": input.str("distribution").unwrap_or("ByLogStream"),
            "applyOnTransformedLogs": input.bool("applyOnTransformedLogs").unwrap_or(false),
            "creationTime": self.now(),
        });
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO logs_subscriptions (account, region, grp, name, pattern, destination, config)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                params![ctx.account, ctx.region, group, name, pattern, destination, config.to_string()],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }

    pub(super) fn describe_subscription_filters(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        self.standard_group(ctx, group)?;
        let prefix = input.str("filterNamePrefix").unwrap_or_default();
        let filters: Vec<Value> = self
            .subscriptions(ctx, group)?
            .into_iter()
            .filter(|s| s.name.starts_with(prefix))
            .map(|s| s.value)
            .collect();
        Ok(Value::map().with("subscriptionFilters", filters))
    }

    pub(super) fn delete_subscription_filter(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.delete_group_filter(ctx, input, "logs_subscriptions", "subscription filter")
    }

    /// Sends newly stored events (`(event id, timestamp, message)`) to every subscription
    /// whose pattern they match.
    pub(super) fn notify_subscriptions(
        &self,
        ctx: &Context,
        group: &str,
        stream: &str,
        events: &[(String, i64, String)],
        transformed: Option<&[(String, i64, String)]>,
    ) -> AwsResult<()> {
        if events.is_empty() {
            return Ok(());
        }
        for s in self.subscriptions(ctx, group)? {
            let Ok(pattern) = Pattern::parse(&s.pattern) else {
                continue;
            };
            let events = match transformed {
                Some(t) if s.value.bool("applyOnTransformedLogs") == Some(true) => t,
                _ => events,
            };
            let matched: Vec<serde_json::Value> = events
                .iter()
                .filter(|(_, _, m)| pattern.matches(m))
                .map(|(id, ts, m)| serde_json::json!({"id": id, "timestamp": ts, "message": m}))
                .collect();
            if matched.is_empty() {
                continue;
            }
            let document = serde_json::json!({
                "messageType": "DATA_MESSAGE",
                "owner": ctx.account,
                "logGroup": group,
                "logStream": stream,
                "subscriptionFilters": [s.name],
                "logEvents": matched,
            });
            let data = base64::engine::general_purpose::STANDARD
                .encode(gzip::compress(document.to_string().as_bytes()));
            let service = s
                .destination
                .split(':')
                .nth(2)
                .unwrap_or_default()
                .to_string();
            self.env.bus.publish(Event {
                kind: "logs:Subscription".into(),
                source_service: "logs".into(),
                source: group_arn(ctx, group),
                target_service: service,
                target: s.destination.clone(),
                account: ctx.account.clone(),
                region: ctx.region.clone(),
                payload: Value::map().with("awslogs", Value::map().with("data", data)),
                max_attempts: 3,
            });
        }
        Ok(())
    }
}
