//! Execution status changes as EventBridge events: each time a STANDARD execution starts
//! or closes, an event goes to its account's default bus in EventBridge's shape (`source`
//! `aws.states`, `detail-type` `Step Functions Execution Status Change`, the execution in
//! `detail` as AWS writes it), through the event bus, so a rule can route it anywhere.

use roto_core::Env;
use serde_json::{json, Value as Json};

use crate::default_bus::BusEvent;

use super::executions::{redrive_status, Execution};

/// The `detail` of an execution's status event.
fn detail(e: &Execution) -> Json {
    let (redrive, reason) = redrive_status(e, 0);
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
        "redriveDate": e.redrive_date,
        "redriveStatus": redrive,
        "redriveStatusReason": reason,
    })
}

/// Publishes an execution's current status to its account's default event bus.
pub(super) fn announce(env: &Env, e: &Execution) {
    let mut parts = e.arn.split(':');
    let (Some(region), Some(account)) = (parts.nth(3), parts.next()) else {
        return;
    };
    crate::default_bus::publish(
        env,
        BusEvent {
            service: "stepfunctions",
            kind: format!("states:{}", e.status),
            resource: e.arn.clone(),
            source: "aws.states",
            detail_type: "Step Functions Execution Status Change",
            detail: detail(e),
            account,
            region,
        },
    );
}
