//! Providers of messaging types: SQS queues and queue policies, SNS topics,
//! subscriptions and topic policies (and the inline policy of one queue or topic),
//! EventBridge rules, buses and archives.

use serde_json::{json, Map, Value as Json};

use super::{gone_ok, pick, resolved, tag_map, with, Call, Outcome, Provider};
use crate::cloudformation::template::scalar_text;

const QUEUE_ATTRIBUTES: [&str; 14] = [
    "DelaySeconds",
    "MaximumMessageSize",
    "MessageRetentionPeriod",
    "ReceiveMessageWaitTimeSeconds",
    "VisibilityTimeout",
    "FifoQueue",
    "ContentBasedDeduplication",
    "DeduplicationScope",
    "FifoThroughputLimit",
    "KmsMasterKeyId",
    "KmsDataKeyReusePeriodSeconds",
    "SqsManagedSseEnabled",
    "RedrivePolicy",
    "RedriveAllowPolicy",
];

/// The queue's attributes as SQS names them, every value a string (JSON documents as text).
fn queue_attributes(props: &Json, creating: bool) -> Json {
    let mut out = Map::new();
    for name in QUEUE_ATTRIBUTES {
        if !creating && (name == "FifoQueue") {
            continue;
        }
        let text = match props.get(name) {
            Some(Json::Object(doc)) => Json::Object(doc.clone()).to_string(),
            Some(v) if !v.is_null() => scalar_text(v),
            _ => continue,
        };
        out.insert(name.to_string(), Json::String(text));
    }
    Json::Object(out)
}

pub(crate) const QUEUE: Provider = Provider {
    kind: "AWS::SQS::Queue",
    replaces: &["QueueName", "FifoQueue"],
    create: |c| Box::pin(queue_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            let input =
                json!({"QueueUrl": c.physical(), "Attributes": queue_attributes(&c.props, false)});
            c.api("sqs", "SetQueueAttributes", input).await?;
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("sqs", "DeleteQueue", json!({"QueueUrl": c.physical()}))
                    .await,
            )
        })
    },
};

async fn queue_create(c: &Call) -> Outcome {
    let fifo = c.prop("FifoQueue").map(scalar_text).as_deref() == Some("true");
    let name = match c.str("QueueName") {
        Some(n) => n.to_string(),
        None if fifo => format!(
            "{}.fifo",
            super::generated_name(&c.stack_name, &c.logical_id, 75)
        ),
        None => super::generated_name(&c.stack_name, &c.logical_id, 80),
    };
    let mut input = json!({"QueueName": name, "Attributes": queue_attributes(&c.props, true)});
    if c.prop("Tags").is_some() {
        input = with(input, "tags", tag_map(c.prop("Tags")));
    }
    let out = c.api("sqs", "CreateQueue", input).await?;
    let url = out["QueueUrl"].as_str().unwrap_or_default();
    let arn = c.arn("sqs", &name);
    Ok(resolved(
        url,
        json!({"Arn": arn, "QueueName": name, "QueueUrl": url}),
    ))
}

pub(crate) const QUEUE_POLICY: Provider = Provider {
    kind: "AWS::SQS::QueuePolicy",
    replaces: &[],
    create: |c| Box::pin(queue_policy(c, false)),
    update: Some(|c| Box::pin(queue_policy(c, false))),
    delete: |c| Box::pin(async move { queue_policy(c, true).await.map(|_| ()) }),
};

async fn queue_policy(c: &Call, removing: bool) -> Outcome {
    let policy = if removing {
        String::new()
    } else {
        c.document("PolicyDocument").unwrap_or_default()
    };
    let single = c.props.get("Queue");
    for url in c.props["Queues"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(single)
    {
        let input = json!({"QueueUrl": url, "Attributes": {"Policy": policy}});
        let result = c.api("sqs", "SetQueueAttributes", input).await;
        if removing {
            gone_ok(result)?;
        } else {
            result?;
        }
    }
    let id = c
        .physical_id
        .clone()
        .unwrap_or_else(|| super::generated_name(&c.stack_name, &c.logical_id, 64));
    Ok(resolved(id.as_str(), json!({"Id": id})))
}

pub(crate) const TOPIC: Provider = Provider {
    kind: "AWS::SNS::Topic",
    replaces: &["TopicName", "FifoTopic"],
    create: |c| Box::pin(topic_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            for name in [
                "DisplayName",
                "KmsMasterKeyId",
                "ContentBasedDeduplication",
                "SignatureVersion",
                "TracingConfig",
            ] {
                if let Some(v) = c.prop(name).filter(|v| c.old_props.get(name) != Some(v)) {
                    let input = json!({"TopicArn": c.physical(), "AttributeName": name, "AttributeValue": scalar_text(v)});
                    c.api("sns", "SetTopicAttributes", input).await?;
                }
            }
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("sns", "DeleteTopic", json!({"TopicArn": c.physical()}))
                    .await,
            )
        })
    },
};

async fn topic_create(c: &Call) -> Outcome {
    let fifo = c.prop("FifoTopic").map(scalar_text).as_deref() == Some("true");
    let name = match c.str("TopicName") {
        Some(n) => n.to_string(),
        None if fifo => format!(
            "{}.fifo",
            super::generated_name(&c.stack_name, &c.logical_id, 251)
        ),
        None => super::generated_name(&c.stack_name, &c.logical_id, 256),
    };
    let mut attributes = Map::new();
    for attr in [
        "DisplayName",
        "KmsMasterKeyId",
        "FifoTopic",
        "ContentBasedDeduplication",
        "SignatureVersion",
        "TracingConfig",
    ] {
        if let Some(v) = c.prop(attr) {
            attributes.insert(attr.to_string(), Json::String(scalar_text(v)));
        }
    }
    let mut input = json!({"Name": name, "Attributes": attributes});
    input = with(input, "Tags", c.props["Tags"].clone());
    let out = c.api("sns", "CreateTopic", input).await?;
    let arn = out["TopicArn"].as_str().unwrap_or_default().to_string();
    for s in c.props["Subscription"].as_array().into_iter().flatten() {
        let input = json!({"TopicArn": arn, "Protocol": s["Protocol"], "Endpoint": s["Endpoint"]});
        c.api("sns", "Subscribe", input).await?;
    }
    Ok(resolved(
        arn.as_str(),
        json!({"TopicArn": arn, "TopicName": name}),
    ))
}

const SUBSCRIPTION_ATTRIBUTES: [&str; 6] = [
    "FilterPolicy",
    "FilterPolicyScope",
    "RawMessageDelivery",
    "RedrivePolicy",
    "DeliveryPolicy",
    "SubscriptionRoleArn",
];

fn subscription_attribute(v: &Json) -> String {
    match v {
        Json::Object(_) => v.to_string(),
        other => scalar_text(other),
    }
}

pub(crate) const SUBSCRIPTION: Provider = Provider {
    kind: "AWS::SNS::Subscription",
    replaces: &["TopicArn", "Protocol", "Endpoint"],
    create: |c| Box::pin(subscription_create(c)),
    update: Some(|c| {
        Box::pin(async move {
            for name in SUBSCRIPTION_ATTRIBUTES {
                if let Some(v) = c.prop(name).filter(|v| c.old_props.get(name) != Some(v)) {
                    let input = json!({"SubscriptionArn": c.physical(), "AttributeName": name, "AttributeValue": subscription_attribute(v)});
                    c.api("sns", "SetSubscriptionAttributes", input).await?;
                }
            }
            Ok(c.previous.clone())
        })
    }),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api(
                    "sns",
                    "Unsubscribe",
                    json!({"SubscriptionArn": c.physical()}),
                )
                .await,
            )
        })
    },
};

async fn subscription_create(c: &Call) -> Outcome {
    let mut attributes = Map::new();
    for name in SUBSCRIPTION_ATTRIBUTES {
        if let Some(v) = c.prop(name) {
            attributes.insert(name.to_string(), Json::String(subscription_attribute(v)));
        }
    }
    let mut input = pick(&c.props, &["TopicArn", "Protocol", "Endpoint"]);
    input = with(input, "Attributes", Json::Object(attributes));
    input = with(input, "ReturnSubscriptionArn", json!(true));
    let out = c.api("sns", "Subscribe", input).await?;
    let arn = out["SubscriptionArn"].as_str().unwrap_or_default();
    Ok(resolved(arn, json!({"Arn": arn})))
}

/// One queue's policy (`Queue`), the same work as `QueuePolicy`'s.
pub(crate) const QUEUE_INLINE_POLICY: Provider = Provider {
    kind: "AWS::SQS::QueueInlinePolicy",
    replaces: &["Queue"],
    ..QUEUE_POLICY
};

/// One topic's policy (`TopicArn`), the same work as `TopicPolicy`'s.
pub(crate) const TOPIC_INLINE_POLICY: Provider = Provider {
    kind: "AWS::SNS::TopicInlinePolicy",
    replaces: &["TopicArn"],
    ..TOPIC_POLICY
};

pub(crate) const TOPIC_POLICY: Provider = Provider {
    kind: "AWS::SNS::TopicPolicy",
    replaces: &[],
    create: |c| Box::pin(topic_policy(c)),
    update: Some(|c| Box::pin(topic_policy(c))),
    delete: |_| Box::pin(async { Ok(()) }),
};

async fn topic_policy(c: &Call) -> Outcome {
    let policy = c.document("PolicyDocument").unwrap_or_default();
    let single = c.props.get("TopicArn");
    for arn in c.props["Topics"]
        .as_array()
        .into_iter()
        .flatten()
        .chain(single)
    {
        let input = json!({"TopicArn": arn, "AttributeName": "Policy", "AttributeValue": policy});
        c.api("sns", "SetTopicAttributes", input).await?;
    }
    let id = c
        .physical_id
        .clone()
        .unwrap_or_else(|| super::generated_name(&c.stack_name, &c.logical_id, 64));
    Ok(resolved(id.as_str(), json!({"Id": id})))
}

pub(crate) const RULE: Provider = Provider {
    kind: "AWS::Events::Rule",
    replaces: &["Name", "EventBusName"],
    create: |c| Box::pin(rule_put(c)),
    update: Some(|c| Box::pin(rule_put(c))),
    delete: |c| Box::pin(rule_delete(c)),
};

fn target_ids(props: &Json) -> Vec<Json> {
    props["Targets"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|t| t["Id"].clone())
        .collect()
}

async fn rule_put(c: &Call) -> Outcome {
    let name = c.name("Name", 64);
    let mut input = pick(
        &c.props,
        &[
            "ScheduleExpression",
            "State",
            "Description",
            "EventBusName",
            "RoleArn",
        ],
    );
    input = with(input, "Name", json!(name));
    input = with(
        input,
        "EventPattern",
        c.document("EventPattern")
            .map(Json::String)
            .unwrap_or_default(),
    );
    let out = c.api("events", "PutRule", input).await?;
    let bus = c.props["EventBusName"].clone();
    let new_ids = target_ids(&c.props);
    let stale: Vec<Json> = target_ids(&c.old_props)
        .into_iter()
        .filter(|id| !new_ids.contains(id))
        .collect();
    if !stale.is_empty() {
        let input = with(
            json!({"Rule": name, "Ids": stale}),
            "EventBusName",
            bus.clone(),
        );
        c.api("events", "RemoveTargets", input).await?;
    }
    if !new_ids.is_empty() {
        let input = with(
            json!({"Rule": name, "Targets": c.props["Targets"]}),
            "EventBusName",
            bus,
        );
        c.api("events", "PutTargets", input).await?;
    }
    Ok(resolved(name, json!({"Arn": out["RuleArn"]})))
}

async fn rule_delete(c: &Call) -> Result<(), String> {
    let name = c.physical();
    let bus = c.props["EventBusName"].clone();
    let ids = target_ids(&c.props);
    if !ids.is_empty() {
        gone_ok(
            c.api(
                "events",
                "RemoveTargets",
                with(
                    json!({"Rule": name, "Ids": ids}),
                    "EventBusName",
                    bus.clone(),
                ),
            )
            .await,
        )?;
    }
    gone_ok(
        c.api(
            "events",
            "DeleteRule",
            with(json!({"Name": name}), "EventBusName", bus),
        )
        .await,
    )
}

pub(crate) const EVENT_BUS: Provider = Provider {
    kind: "AWS::Events::EventBus",
    replaces: &["Name", "EventSourceName"],
    create: |c| {
        Box::pin(async move {
            let name = c.str("Name").unwrap_or_default().to_string();
            let out = c
                .api(
                    "events",
                    "CreateEventBus",
                    pick(
                        &c.props,
                        &["Name", "EventSourceName", "Description", "KmsKeyIdentifier"],
                    ),
                )
                .await?;
            Ok(resolved(
                name.as_str(),
                json!({"Arn": out["EventBusArn"], "Name": name}),
            ))
        })
    },
    update: Some(|c| Box::pin(async move { Ok(c.previous.clone()) })),
    delete: |c| {
        Box::pin(async move {
            gone_ok(
                c.api("events", "DeleteEventBus", json!({"Name": c.physical()}))
                    .await,
            )
        })
    },
};

pub(crate) const EVENT_ARCHIVE: Provider = Provider {
    kind: "AWS::Events::Archive",
    replaces: &["ArchiveName", "SourceArn"],
    create: |c| Box::pin(archive_put(c, "CreateArchive")),
    update: Some(|c| Box::pin(archive_put(c, "UpdateArchive"))),
    delete: |c| {
        Box::pin(async move {
            let input = json!({"ArchiveName": c.physical()});
            gone_ok(c.api("events", "DeleteArchive", input).await)
        })
    },
};

/// CreateArchive or UpdateArchive: the source is `SourceArn` in templates, the pattern an
/// object there and a string in the API. `Ref` the name, `Arn` its ARN.
async fn archive_put(c: &Call, operation: &str) -> Outcome {
    let name = c.name("ArchiveName", 48);
    let mut input = pick(
        &c.props,
        &["Description", "RetentionDays", "KmsKeyIdentifier"],
    );
    input = with(input, "ArchiveName", json!(name));
    if operation == "CreateArchive" {
        input = with(input, "EventSourceArn", c.props["SourceArn"].clone());
    }
    if let Some(pattern) = c.document("EventPattern") {
        input = with(input, "EventPattern", json!(pattern));
    }
    let out = c.api("events", operation, input).await?;
    let arn = out["ArchiveArn"]
        .as_str()
        .map(str::to_string)
        .unwrap_or_else(|| c.arn("events", &format!("archive/{name}")));
    Ok(resolved(name, json!({"Arn": arn})))
}
