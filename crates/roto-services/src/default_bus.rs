//! Events a service sends to its account's default EventBridge bus, as AWS services do
//! (S3's EventBridge notifications, Step Functions' execution status changes, CloudWatch's
//! alarm state changes): one `PutEvents` entry carried by Roto's event bus to EventBridge,
//! whose delivery makes the call through the dispatcher, so a rule can route it anywhere.

use roto_core::events::Event;
use roto_core::{Env, Value};

/// One event for the default bus.
pub(crate) struct BusEvent<'a> {
    /// The emitting service (`s3`), for the trace.
    pub service: &'a str,
    /// The delivery's kind, as the trace shows it (`s3:ObjectCreated:Put`).
    pub kind: String,
    /// The resource the event is about; its only `resources` entry.
    pub resource: String,
    /// The event's `source` (`aws.s3`).
    pub source: &'a str,
    /// The event's `detail-type`.
    pub detail_type: &'a str,
    /// The event's `detail`.
    pub detail: serde_json::Value,
    pub account: &'a str,
    pub region: &'a str,
}

/// Publishes `e` to the default bus of its account and region.
pub(crate) fn publish(env: &Env, e: BusEvent<'_>) {
    let entry = Value::map()
        .with("Source", e.source)
        .with("DetailType", e.detail_type)
        .with("Detail", e.detail.to_string())
        .with("Resources", vec![Value::String(e.resource.clone())])
        .with("EventBusName", "default");
    let put_events = Value::map()
        .with("Service", "events")
        .with("Operation", "PutEvents")
        .with("Input", Value::map().with("Entries", vec![entry]));
    env.bus.publish(Event {
        kind: e.kind,
        source_service: e.service.into(),
        source: e.resource,
        target_service: "events".into(),
        target: format!(
            "arn:aws:events:{}:{}:event-bus/default",
            e.region, e.account
        ),
        account: e.account.to_string(),
        region: e.region.to_string(),
        payload: Value::map().with("Calls", vec![put_events]),
        max_attempts: 3,
    });
}
