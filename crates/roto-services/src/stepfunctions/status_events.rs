//! Execution status changes as EventBridge events: each time a STANDARD execution starts
//! or closes, an event goes to its account's default bus in EventBridge's shape (`source`
//! `aws.states`, `detail-type` `Step Functions Execution Status Change`, the execution in
//! `detail` as AWS writes it), through the event bus, so a rule can route it anywhere.

use roto_core::events::Event;
use roto_core::{Env, Value};
use serde_json::{json, Value as Json};

use super::executions::{redrive_reason, redrive_status, Execution};

/// The `detail` of an execution's status event.
fn detail(e: &Execution) -> Json {
    let included = |v: &Option<String>| v.as_ref().map(|_| json!({"included": true}));
    json!({
        "executionArn": e.arn,
        "stateMachineArn": e.machine_arn,
        "name": e.name,
        "status": e.status,
        "startDate": e.started,
        "stopDate": e.stopped,
        "input": e.input,
        "output": e.output,
        "inputDetails": {"included": true},
        "outputDetails": included(&e.output),
        "error": e.error,
        "cause": e.cause,
        "redriveCount": e.redrive_count,
        "redriveDate": Json::Null,
        "redriveStatus": redrive_status(e),
        "redriveStatusReason": redrive_reason(e),
    })
}

/// Publishes an execution's current status to its account's default event bus.
pub(super) fn announce(env: &Env, e: &Execution) {
    let mut parts = e.arn.split(':');
    let (Some(region), Some(account)) = (parts.nth(3), parts.next()) else {
        return;
    };
    let entry = Value::map()
        .with("Source", "aws.states")
        .with("DetailType", "Step Functions Execution Status Change")
        .with("Detail", detail(e).to_string())
        .with("Resources", vec![Value::String(e.arn.clone())])
        .with("EventBusName", "default");
    let put_events = Value::map()
        .with("Service", "events")
        .with("Operation", "PutEvents")
        .with("Input", Value::map().with("Entries", vec![entry]));
    env.bus.publish(Event {
        kind: format!("states:{}", e.status),
        source_service: "stepfunctions".into(),
        source: e.arn.clone(),
        target_service: "events".into(),
        target: format!("arn:aws:events:{region}:{account}:event-bus/default"),
        account: account.to_string(),
        region: region.to_string(),
        payload: Value::map().with("Calls", vec![put_events]),
        max_attempts: 3,
    });
}
