//! Providers of the types that watch and fire: CloudWatch metric and composite alarms and
//! dashboards, EventBridge Scheduler schedules and schedule groups, and CloudWatch Logs'
//! streams, metric filters and subscription filters, and CloudWatch metric streams.

use serde_json::{json, Map, Value as Json};

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

/// PutMetricAlarm (PutCompositeAlarm for a composite alarm) takes the template's
/// properties under their own names, and replaces an alarm whole.
async fn alarm_put(c: &Call) -> Outcome {
    let name = c.name("AlarmName", 255);
    let input = with(c.props.clone(), "AlarmName", json!(name));
    let operation = match c.kind.as_str() {
        "AWS::CloudWatch::CompositeAlarm" => "PutCompositeAlarm",
        _ => "PutMetricAlarm",
    };
    c.api("cloudwatch", operation, input).await?;
    let arn = c.arn("cloudwatch", &format!("alarm:{name}"));
    Ok(resolved(name, json!({"Arn": arn})))
}

pub(crate) const COMPOSITE_ALARM: Provider = Provider {
    kind: "AWS::CloudWatch::CompositeAlarm",
    ..ALARM
};

pub(crate) const DASHBOARD: Provider = Provider {
    kind: "AWS::CloudWatch::Dashboard",
    replaces: &["DashboardName"],
    create: |c| Box::pin(dashboard_put(c)),
    update: Some(|c| Box::pin(dashboard_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"DashboardNames": [c.physical()]});
            gone_ok(c.api("cloudwatch", "DeleteDashboards", input).await)
        })
    },
};

async fn dashboard_put(c: &Call) -> Outcome {
    let name = c.name("DashboardName", 255);
    let input = with(c.props.clone(), "DashboardName", json!(name));
    c.api("cloudwatch", "PutDashboard", input).await?;
    Ok(resolved(name, json!({})))
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

pub(crate) const LOG_STREAM: Provider = Provider {
    kind: "AWS::Logs::LogStream",
    replaces: &["LogGroupName", "LogStreamName"],
    create: |c| {
        Box::pin(async move {
            let name = c.name("LogStreamName", 512);
            let input = json!({"logGroupName": c.props["LogGroupName"], "logStreamName": name});
            c.api("logs", "CreateLogStream", input).await?;
            Ok(resolved(name, json!({})))
        })
    },
    update: None,
    delete: |c| {
        Box::pin(async move {
            let input =
                json!({"logGroupName": c.props["LogGroupName"], "logStreamName": c.physical()});
            gone_ok(c.api("logs", "DeleteLogStream", input).await)
        })
    },
};

pub(crate) const METRIC_FILTER: Provider = Provider {
    kind: "AWS::Logs::MetricFilter",
    replaces: &["LogGroupName", "FilterName"],
    create: |c| Box::pin(metric_filter_put(c)),
    update: Some(|c| Box::pin(metric_filter_put(c))),
    delete: |c| Box::pin(filter_delete(c, "DeleteMetricFilter")),
};

/// PutMetricFilter, each transformation's `Dimensions` (a `[{Key, Value}]` list in
/// templates) as the map the API takes.
async fn metric_filter_put(c: &Call) -> Outcome {
    let name = c.name("FilterName", 512);
    let mut input = pick(
        &c.props,
        &["LogGroupName", "FilterPattern", "ApplyOnTransformedLogs"],
    );
    input = with(input, "filterName", json!(name));
    let transformations: Vec<Json> = c.props["MetricTransformations"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| {
            let mut t = t.clone();
            if let Some(dimensions) = t.get("Dimensions").and_then(Json::as_array) {
                let map: Map<String, Json> = dimensions
                    .iter()
                    .filter_map(|d| Some((d["Key"].as_str()?.to_string(), d["Value"].clone())))
                    .collect();
                t["Dimensions"] = Json::Object(map);
            }
            t
        })
        .collect();
    input = with(input, "metricTransformations", Json::Array(transformations));
    c.api("logs", "PutMetricFilter", input).await?;
    Ok(resolved(name, json!({})))
}

pub(crate) const SUBSCRIPTION_FILTER: Provider = Provider {
    kind: "AWS::Logs::SubscriptionFilter",
    replaces: &["LogGroupName", "FilterName"],
    create: |c| Box::pin(subscription_filter_put(c)),
    update: Some(|c| Box::pin(subscription_filter_put(c))),
    delete: |c| Box::pin(filter_delete(c, "DeleteSubscriptionFilter")),
};

async fn subscription_filter_put(c: &Call) -> Outcome {
    let name = c.name("FilterName", 512);
    let input = with(c.props.clone(), "FilterName", json!(name));
    c.api("logs", "PutSubscriptionFilter", input).await?;
    Ok(resolved(name, json!({})))
}

/// Deletes a log group's metric or subscription filter (`operation`).
async fn filter_delete(c: &Call, operation: &str) -> Result<(), String> {
    let input = json!({"logGroupName": c.props["LogGroupName"], "filterName": c.physical()});
    gone_ok(c.api("logs", operation, input).await)
}

/// A metric stream to a Firehose delivery stream: `Ref` its name; `Arn`, `State`,
/// `CreationDate` and `LastUpdateDate` as GetMetricStream answers them. Everything but the
/// name changes in place (PutMetricStream again).
pub(crate) const METRIC_STREAM: Provider = Provider {
    kind: "AWS::CloudWatch::MetricStream",
    replaces: &["Name"],
    create: |c| Box::pin(metric_stream_put(c)),
    update: Some(|c| Box::pin(metric_stream_put(c))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"Name": c.physical()});
            gone_ok(c.api("cloudwatch", "DeleteMetricStream", input).await)
        })
    },
};

async fn metric_stream_put(c: &Call) -> Outcome {
    let name = c.name("Name", 255);
    let settings = [
        "IncludeFilters",
        "ExcludeFilters",
        "FirehoseArn",
        "RoleArn",
        "OutputFormat",
        "Tags",
        "StatisticsConfigurations",
        "IncludeLinkedAccountsMetrics",
    ];
    let input = with(pick(&c.props, &settings), "Name", json!(name));
    c.api("cloudwatch", "PutMetricStream", input).await?;
    let out = c
        .api("cloudwatch", "GetMetricStream", json!({"Name": name}))
        .await?;
    let attributes = pick(&out, &["Arn", "State", "CreationDate", "LastUpdateDate"]);
    Ok(resolved(name, attributes))
}
