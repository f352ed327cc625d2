//! Providers of the types that watch and fire: CloudWatch metric alarms, and EventBridge
//! Scheduler schedules and schedule groups.

use serde_json::json;

use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};

pub(crate) const ALARM: Provider = Provider {
    kind: "AWS::CloudWatch::Alarm",
    replaces: &["AlarmName"],
    create: |c| Box::pin(alarm_put(c)),
    update: Some(|c| Box::pin(alarm_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"AlarmNames": [c.physical()]});
            gone_ok(c.api("cloudwatch", "DeleteAlarms", input).await)
        })
    },
};

/// PutMetricAlarm takes the template's properties under their own names, and replaces
/// an alarm whole.
async fn alarm_put(c: &Call) -> Outcome {
    let name = c.name("AlarmName", 255);
    let input = with(c.props.clone(), "AlarmName", json!(name));
    c.api("cloudwatch", "PutMetricAlarm", input).await?;
    let arn = c.arn("cloudwatch", &format!("alarm:{name}"));
    Ok(resolved(name, json!({"Arn": arn})))
}

/// A schedule's properties, as CreateSchedule and UpdateSchedule take them.
const SCHEDULE_SETTINGS: [&str; 11] = [
    "GroupName",
    "Description",
    "ScheduleExpression",
    "ScheduleExpressionTimezone",
    "FlexibleTimeWindow",
    "Target",
    "State",
    "StartDate",
    "EndDate",
    "KmsKeyArn",
    "ActionAfterCompletion",
];

pub(crate) const SCHEDULE: Provider = Provider {
    kind: "AWS::Scheduler::Schedule",
    replaces: &["Name", "GroupName"],
    create: |c| Box::pin(schedule_put(c, "CreateSchedule")),
    update: Some(|c| Box::pin(schedule_put(c, "UpdateSchedule"))),
    delete: |c| {
        Box::pin(async move {
            let input = with(
                json!({"Name": c.physical()}),
                "GroupName",
                c.props["GroupName"].clone(),
            );
            gone_ok(c.api("scheduler", "DeleteSchedule", input).await)
        })
    },
};

async fn schedule_put(c: &Call, operation: &str) -> Outcome {
    let name = c.name("Name", 64);
    let input = with(pick(&c.props, &SCHEDULE_SETTINGS), "Name", json!(name));
    let out = c.api("scheduler", operation, input).await?;
    Ok(resolved(name, json!({"Arn": out["ScheduleArn"]})))
}

pub(crate) const SCHEDULE_GROUP: Provider = Provider {
    kind: "AWS::Scheduler::ScheduleGroup",
    replaces: &["Name"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("Name", 64);
            let input = with(pick(&c.props, &["Tags"]), "Name", json!(name));
            let out = c.api("scheduler", "CreateScheduleGroup", input).await?;
            Ok(resolved(
                name,
                json!({"Arn": out["ScheduleGroupArn"], "State": "ACTIVE"}),
            ))
        })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("scheduler", "DeleteScheduleGroup", input).await)
        })
    },
};
