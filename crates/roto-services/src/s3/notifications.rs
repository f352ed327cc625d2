//! Event notifications: the bucket's `NotificationConfiguration` matched against each
//! object event, and the real S3 event JSON sent to SQS queues, SNS topics, Lambda
//! functions and EventBridge after the request returns.
//!
//! With `EventBridgeConfiguration` every object event also goes to the account's default
//! event bus in EventBridge's shape (`source` `aws.s3`, `detail-type` `Object Created` or
//! `Object Deleted`, `detail` with the bucket, the object, `reason` and `deletion-type`),
//! as an event-bus delivery whose call is EventBridge's PutEvents, so rules on that bus
//! route it like any other event.
//!
//! PutBucketNotificationConfiguration checks every destination through the dispatcher
//! (GetQueueUrl, GetTopicAttributes, GetFunction), rejecting one that does not exist as
//! AWS does, and sends each new destination the `s3:TestEvent`.

use roto_core::events::Event;
use roto_core::timestamp::{format, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};

use super::errors;
use super::list::URL_SAFE;
use super::versions::ObjectRow;
use super::{input_str, Bucket, S3};

/// The event names a configuration may name (with `s3:` and, for families, `:*`).
const EVENTS: &[&str] = &[
    "ObjectCreated:*",
    "ObjectCreated:Put",
    "ObjectCreated:Post",
    "ObjectCreated:Copy",
    "ObjectCreated:CompleteMultipartUpload",
    "ObjectRemoved:*",
    "ObjectRemoved:Delete",
    "ObjectRemoved:DeleteMarkerCreated",
    "ObjectRestore:*",
    "ObjectRestore:Post",
    "ObjectRestore:Completed",
    "ObjectRestore:Delete",
    "ObjectTagging:*",
    "ObjectTagging:Put",
    "ObjectTagging:Delete",
    "ObjectAcl:Put",
    "ReducedRedundancyLostObject",
    "Replication:*",
    "LifecycleExpiration:*",
    "LifecycleTransition",
    "IntelligentTiering",
];

/// The three kinds of destination: (configurations member, ARN member, service).
const DESTINATIONS: [(&str, &str, &str); 3] = [
    ("QueueConfigurations", "QueueArn", "sqs"),
    ("TopicConfigurations", "TopicArn", "sns"),
    (
        "LambdaFunctionConfigurations",
        "LambdaFunctionArn",
        "lambda",
    ),
];

/// `arn:aws:<service>:<region>:<account>:<resource>` split into region, account, resource.
fn arn_parts(arn: &str) -> Option<(&str, &str, &str)> {
    let mut it = arn.splitn(6, ':');
    let (_, _, _, region, account, resource) = (
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
        it.next()?,
    );
    Some((region, account, resource))
}

fn unable_to_validate(arn: &str) -> AwsError {
    AwsError::new(
        "InvalidArgument",
        "Unable to validate the following destination configurations",
    )
    .with_status(400)
    .with_field("ArgumentName", arn)
    .with_field("ArgumentValue", "Not authorized to invoke function")
}

/// Whether a configured event name covers an event (`s3:ObjectCreated:*` covers
/// `ObjectCreated:Put`).
fn covers(pattern: &str, event: &str) -> bool {
    let pattern = pattern.strip_prefix("s3:").unwrap_or(pattern);
    match pattern.strip_suffix('*') {
        Some(family) => event.starts_with(family),
        None => pattern == event,
    }
}

/// Whether a key passes a configuration's prefix and suffix filter rules.
fn passes_filter(config: &Value, key: &str) -> bool {
    let rules = config
        .get("Filter")
        .and_then(|f| f.get("Key"))
        .and_then(|k| k.get("FilterRules"))
        .and_then(Value::as_list)
        .unwrap_or_default();
    rules.iter().all(|rule| {
        let value = input_str(rule, "Value");
        match input_str(rule, "Name").to_ascii_lowercase().as_str() {
            "prefix" => key.starts_with(value),
            "suffix" => key.ends_with(value),
            _ => true,
        }
    })
}

/// The event's `s3.object`.
fn object_json(key: &str, row: Option<&ObjectRow>, seq: i64, created: bool) -> serde_json::Value {
    let mut object = serde_json::json!({
        "key": percent_encoding::utf8_percent_encode(key, URL_SAFE).to_string(),
        "sequencer": format!("{seq:016X}"),
    });
    if let Some(row) = row {
        if created {
            object["size"] = row.size.into();
            object["eTag"] = row.etag.trim_matches('"').into();
        }
        if let Some(v) = &row.version_id {
            object["versionId"] = v.clone().into();
        }
    }
    object
}

/// What EventBridge calls an S3 event: its `detail-type`, its `reason`, and for a deletion
/// its `deletion-type`.
fn eventbridge_kind(event: &str) -> Option<(&'static str, &'static str, Option<&'static str>)> {
    let created = |reason| Some(("Object Created", reason, None));
    let deleted = |deletion| Some(("Object Deleted", "DeleteObject", Some(deletion)));
    match event {
        "ObjectCreated:Put" => created("PutObject"),
        "ObjectCreated:Post" => created("POST Object"),
        "ObjectCreated:Copy" => created("CopyObject"),
        "ObjectCreated:CompleteMultipartUpload" => created("CompleteMultipartUpload"),
        "ObjectRemoved:Delete" => deleted("Permanently Deleted"),
        "ObjectRemoved:DeleteMarkerCreated" => deleted("Delete Marker Created"),
        _ => None,
    }
}

/// The ETag of a delete marker (the MD5 of nothing), which S3's EventBridge events give.
const DELETE_MARKER_ETAG: &str = "d41d8cd98f00b204e9800998ecf8427e";

/// The EventBridge event's `detail.object`: the key as stored (not URL-encoded, unlike the
/// notification record's), `size` and `etag` of a created object, `version-id` in a
/// versioned bucket, and the `sequencer`.
fn eventbridge_object(
    key: &str,
    row: Option<&ObjectRow>,
    seq: i64,
    deletion_type: Option<&str>,
) -> serde_json::Value {
    let mut object = serde_json::json!({"key": key});
    match (row, deletion_type) {
        (Some(row), None) => {
            object["size"] = row.size.into();
            object["etag"] = row.etag.trim_matches('"').into();
        }
        (_, Some("Delete Marker Created")) => object["etag"] = DELETE_MARKER_ETAG.into(),
        _ => {}
    }
    if let Some(v) = row.and_then(|r| r.version_id.as_ref()) {
        object["version-id"] = v.clone().into();
    }
    object["sequencer"] = format!("{seq:016X}").into();
    object
}

impl S3 {
    /// Publishes `event` (`ObjectCreated:Put`) for `key` to every destination of the
    /// bucket's notification configuration that wants it.
    pub(crate) fn notify(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        event: &str,
        key: &str,
        row: Option<&ObjectRow>,
    ) {
        if !bucket.notifies {
            return;
        }
        let Ok(Some(Some(config))) = self.stored_config(&bucket.name, "notification") else {
            return;
        };
        let seq = row.map_or_else(|| self.next_seq(), |r| r.seq);
        let time = format(now_millis(), TimestampFormat::Iso8601);
        let created = event.starts_with("ObjectCreated");
        for (list, arn_member, service) in DESTINATIONS {
            for dest in config
                .get(list)
                .and_then(Value::as_list)
                .unwrap_or_default()
            {
                let wanted = dest
                    .get("Events")
                    .and_then(Value::as_list)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(Value::as_str)
                    .any(|p| covers(p, event));
                if !wanted || !passes_filter(dest, key) {
                    continue;
                }
                let record = serde_json::json!({
                    "eventVersion": "2.1",
                    "eventSource": "aws:s3",
                    "awsRegion": bucket.region,
                    "eventTime": time,
                    "eventName": event,
                    "userIdentity": {"principalId": format!("AWS:{}", ctx.account)},
                    "requestParameters": {"sourceIPAddress": "127.0.0.1"},
                    "responseElements": {
                        "x-amz-request-id": ctx.request_id,
                        "x-amz-id-2": ctx.request_id,
                    },
                    "s3": {
                        "s3SchemaVersion": "1.0",
                        "configurationId": input_str(dest, "Id"),
                        "bucket": {
                            "name": bucket.name,
                            "ownerIdentity": {"principalId": bucket.account},
                            "arn": format!("arn:aws:s3:::{}", bucket.name),
                        },
                        "object": object_json(key, row, seq, created),
                    },
                });
                let body = serde_json::json!({ "Records": [record] }).to_string();
                self.publish(
                    bucket,
                    service,
                    input_str(dest, arn_member),
                    &format!("s3:{event}"),
                    body,
                );
            }
        }
        if config.get("EventBridgeConfiguration").is_some() {
            self.to_event_bus(ctx, bucket, event, key, row, seq);
        }
    }

    /// Puts an object event on the default event bus of the bucket's account and region,
    /// as S3 does once `EventBridgeConfiguration` is set: an event-bus delivery to
    /// EventBridge that calls its PutEvents through the dispatcher.
    fn to_event_bus(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        event: &str,
        key: &str,
        row: Option<&ObjectRow>,
        seq: i64,
    ) {
        let Some((detail_type, reason, deletion_type)) = eventbridge_kind(event) else {
            return;
        };
        let mut detail = serde_json::json!({
            "version": "0",
            "bucket": {"name": bucket.name},
            "object": eventbridge_object(key, row, seq, deletion_type),
            "request-id": ctx.request_id,
            "requester": ctx.account,
            "source-ip-address": "127.0.0.1",
            "reason": reason,
        });
        if let Some(deletion) = deletion_type {
            detail["deletion-type"] = deletion.into();
        }
        crate::default_bus::publish(
            &self.env,
            crate::default_bus::BusEvent {
                service: "s3",
                kind: format!("s3:{event}"),
                resource: format!("arn:aws:s3:::{}", bucket.name),
                source: "aws.s3",
                detail_type,
                detail,
                account: &bucket.account,
                region: &bucket.region,
            },
        );
    }

    /// Sends one S3 message to a queue, topic or function, after the request returns:
    /// queues and functions through the event bus (an SQS SendMessage input; the Lambda
    /// event itself), topics as an SNS Publish through the dispatcher, on a task of its
    /// own (SNS's bus deliveries are its subscriptions' HTTP posts).
    fn publish(&self, bucket: &Bucket, service: &str, arn: &str, kind: &str, body: String) {
        let (region, account) = arn_parts(arn)
            .map(|(r, a, _)| (r.to_string(), a.to_string()))
            .unwrap_or_else(|| (bucket.region.clone(), bucket.account.clone()));
        if service == "sns" {
            let Some(dispatcher) = self.env.dispatcher() else {
                return;
            };
            let mut ctx = dispatcher.default_context();
            ctx.account = account;
            ctx.region = region;
            let input = Value::map()
                .with("TopicArn", arn)
                .with("Message", body)
                .with("Subject", "Amazon S3 Notification");
            tokio::spawn(async move {
                let _ = dispatcher.call(&ctx, "sns", "Publish", input).await;
            });
            return;
        }
        let payload = match service {
            "sqs" => Value::map().with("MessageBody", body),
            _ => serde_json::from_str(&body)
                .map(|json: serde_json::Value| Value::from_json(&json))
                .unwrap_or_else(|_| Value::map()),
        };
        self.env.bus.publish(Event {
            kind: kind.to_string(),
            source_service: "s3".into(),
            source: format!("arn:aws:s3:::{}", bucket.name),
            target_service: service.into(),
            target: arn.to_string(),
            account,
            region,
            payload,
            max_attempts: 3,
        });
    }

    /// Checks a notification configuration: known events, prefix/suffix rules, and
    /// destinations that exist (where their service runs here).
    pub(crate) async fn check_notification(&self, ctx: &Context, config: &Value) -> AwsResult<()> {
        for (list, arn_member, service) in DESTINATIONS {
            for dest in config
                .get(list)
                .and_then(Value::as_list)
                .unwrap_or_default()
            {
                let events = dest
                    .get("Events")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                for e in events.iter().filter_map(Value::as_str) {
                    if !EVENTS.contains(&e.strip_prefix("s3:").unwrap_or(e)) {
                        return Err(errors::invalid_argument(
                            "The event is not supported for notifications",
                            "Event",
                            e,
                        ));
                    }
                }
                let rules = dest
                    .get("Filter")
                    .and_then(|f| f.get("Key"))
                    .and_then(|k| k.get("FilterRules"))
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                for rule in rules {
                    let name = input_str(rule, "Name").to_ascii_lowercase();
                    if name != "prefix" && name != "suffix" {
                        return Err(errors::invalid_argument(
                            "filter rule name must be either prefix or suffix",
                            "FilterRule.Name",
                            input_str(rule, "Name"),
                        ));
                    }
                }
                let arn = input_str(dest, arn_member);
                if !self.destination_exists(ctx, service, arn).await {
                    return Err(unable_to_validate(arn));
                }
            }
        }
        Ok(())
    }

    /// Whether a destination exists; a destination whose service is not registered here
    /// is taken on trust.
    async fn destination_exists(&self, ctx: &Context, service: &str, arn: &str) -> bool {
        let Some((region, account, resource)) = arn_parts(arn) else {
            return false;
        };
        let Some(dispatcher) = self.env.dispatcher() else {
            return true;
        };
        if dispatcher.service(service).is_none() {
            return true;
        }
        let caller = Context {
            account: account.to_string(),
            region: region.to_string(),
            ..ctx.clone()
        };
        let (operation, input) = match service {
            "sqs" => ("GetQueueUrl", Value::map().with("QueueName", resource)),
            "sns" => ("GetTopicAttributes", Value::map().with("TopicArn", arn)),
            _ => ("GetFunction", Value::map().with("FunctionName", arn)),
        };
        match dispatcher.call(&caller, service, operation, input).await {
            Ok(_) => true,
            Err(e) => e.code == "NotImplemented",
        }
    }

    /// Sends `s3:TestEvent` to every destination of a new configuration.
    pub(crate) fn send_test_events(&self, ctx: &Context, bucket: &Bucket, config: &Value) {
        for (list, arn_member, service) in DESTINATIONS {
            for dest in config
                .get(list)
                .and_then(Value::as_list)
                .unwrap_or_default()
            {
                let body = serde_json::json!({
                    "Service": "Amazon S3",
                    "Event": "s3:TestEvent",
                    "Time": format(now_millis(), TimestampFormat::Iso8601),
                    "Bucket": bucket.name,
                    "RequestId": ctx.request_id,
                    "HostId": ctx.request_id,
                })
                .to_string();
                self.publish(
                    bucket,
                    service,
                    input_str(dest, arn_member),
                    "s3:TestEvent",
                    body,
                );
            }
        }
    }

    pub(crate) async fn put_bucket_notification(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let config = input
            .get("NotificationConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        self.check_notification(ctx, &config).await?;
        self.store_config(&bucket.name, "notification", Some(&config))?;
        self.send_test_events(ctx, &bucket, &config);
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn event_patterns_and_filters_match_as_s3_does() {
        assert!(covers("s3:ObjectCreated:*", "ObjectCreated:Put"));
        assert!(covers("s3:ObjectCreated:Put", "ObjectCreated:Put"));
        assert!(!covers("s3:ObjectCreated:Copy", "ObjectCreated:Put"));
        assert!(!covers("s3:ObjectRemoved:*", "ObjectCreated:Put"));
        let config = Value::map().with(
            "Filter",
            Value::map().with(
                "Key",
                Value::map().with(
                    "FilterRules",
                    vec![
                        Value::map().with("Name", "prefix").with("Value", "img/"),
                        Value::map().with("Name", "Suffix").with("Value", ".jpg"),
                    ],
                ),
            ),
        );
        assert!(passes_filter(&config, "img/a.jpg"));
        assert!(!passes_filter(&config, "img/a.png"));
        assert!(!passes_filter(&config, "doc/a.jpg"));
    }
}
