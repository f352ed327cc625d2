//! The deprecated operations PutBucketNotification, GetBucketNotification,
//! PutBucketLifecycle and GetBucketLifecycle, served by the current ones over the same
//! stored configuration.
//!
//! On the wire they are the current operations' requests (same method and URI, bodies the
//! current shapes parse), so HTTP routing never picks them; they arrive by name through
//! the in-process dispatcher (setup scripts), in the old input shapes, and answer in the
//! old output shapes. This module turns one shape into the other: where the old shape has
//! one element (a rule's `Transition`, one `QueueConfiguration`) the current one has a
//! list.

use roto_core::{AwsResult, Context, Value};

use super::{input_str, S3};

/// The notification destinations: (old member, current list member, old ARN member,
/// current ARN member).
const DESTINATIONS: [(&str, &str, &str, &str); 3] = [
    (
        "QueueConfiguration",
        "QueueConfigurations",
        "Queue",
        "QueueArn",
    ),
    (
        "TopicConfiguration",
        "TopicConfigurations",
        "Topic",
        "TopicArn",
    ),
    (
        "CloudFunctionConfiguration",
        "LambdaFunctionConfigurations",
        "CloudFunction",
        "LambdaFunctionArn",
    ),
];

/// A lifecycle rule's (old member, current list member) pairs.
const RULE_LISTS: [(&str, &str); 2] = [
    ("Transition", "Transitions"),
    (
        "NoncurrentVersionTransition",
        "NoncurrentVersionTransitions",
    ),
];

/// A map's members renamed (`from` to `to`) where present.
fn renamed(value: &Value, from: &str, to: &str) -> Value {
    let mut out = value.clone();
    if let Some(v) = out.remove(from) {
        out.insert(to, v);
    }
    out
}

/// An old notification configuration as a current one: each destination becomes a
/// one-element list, its `Event` joins its `Events`.
fn current_notification(old: &Value) -> Value {
    let mut out = Value::map();
    for (single, list, arn, current_arn) in DESTINATIONS {
        let Some(dest) = old.get(single) else {
            continue;
        };
        let mut dest = renamed(dest, arn, current_arn);
        dest.remove("InvocationRole");
        let mut events: Vec<Value> = dest.remove("Events").map(list_of).unwrap_or_default();
        if let Some(event) = dest.remove("Event").filter(|e| !events.contains(e)) {
            events.insert(0, event);
        }
        out.insert(list, vec![dest.with("Events", events)]);
    }
    out
}

/// A current notification configuration as an old one: the first destination of each
/// kind, with its first event as `Event` too.
fn old_notification(current: &Value) -> Value {
    let mut out = Value::map();
    for (single, list, arn, current_arn) in DESTINATIONS {
        let Some(dest) = current.get(list).and_then(first) else {
            continue;
        };
        let mut dest = renamed(&dest, current_arn, arn);
        dest.remove("Filter");
        if let Some(event) = dest.get("Events").and_then(first) {
            dest.insert("Event", event);
        }
        out.insert(single, dest);
    }
    out
}

/// An old lifecycle configuration's rules as current ones.
fn current_lifecycle(old: &Value) -> Value {
    map_rules(old, |rule| {
        let mut rule = rule.clone();
        for (single, list) in RULE_LISTS {
            if let Some(v) = rule.remove(single) {
                rule.insert(list, vec![v]);
            }
        }
        rule
    })
}

/// A current lifecycle configuration's rules as old ones: the first of each list, and a
/// filter's prefix as the rule's.
fn old_lifecycle(current: &Value) -> Value {
    map_rules(current, |rule| {
        let mut rule = rule.clone();
        for (single, list) in RULE_LISTS {
            if let Some(v) = rule.remove(list).as_ref().and_then(first) {
                rule.insert(single, v);
            }
        }
        if let Some(filter) = rule.remove("Filter") {
            if rule.get("Prefix").is_none() {
                rule.insert("Prefix", filter.str("Prefix").unwrap_or_default());
            }
        }
        rule
    })
}

fn map_rules(config: &Value, f: impl Fn(&Value) -> Value) -> Value {
    let rules: Vec<Value> = config
        .get("Rules")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(f)
        .collect();
    config.clone().with("Rules", rules)
}

fn list_of(value: Value) -> Vec<Value> {
    match value {
        Value::List(items) => items,
        Value::Null => Vec::new(),
        one => vec![one],
    }
}

fn first(value: &Value) -> Option<Value> {
    value.as_list().and_then(|l| l.first()).cloned()
}

impl S3 {
    pub(crate) async fn put_bucket_notification_legacy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let config = input
            .get("NotificationConfiguration")
            .map(current_notification)
            .unwrap_or_else(Value::map);
        let input = Value::map()
            .with("Bucket", input_str(input, "Bucket"))
            .with("NotificationConfiguration", config);
        self.put_bucket_notification(ctx, &input).await
    }

    pub(crate) fn get_bucket_notification_legacy(&self, input: &Value) -> AwsResult<Value> {
        let current = self.current_config("GetBucketNotificationConfiguration", input)?;
        Ok(old_notification(&current))
    }

    pub(crate) fn put_bucket_lifecycle_legacy(&self, input: &Value) -> AwsResult<Value> {
        let mut input = input.clone();
        if let Some(config) = input.get("LifecycleConfiguration").map(current_lifecycle) {
            input.insert("LifecycleConfiguration", config);
        }
        self.current_config("PutBucketLifecycleConfiguration", &input)
    }

    pub(crate) fn get_bucket_lifecycle_legacy(&self, input: &Value) -> AwsResult<Value> {
        let current = self.current_config("GetBucketLifecycleConfiguration", input)?;
        Ok(old_lifecycle(&current))
    }

    /// A stored-configuration operation this module serves the old one with.
    fn current_config(&self, operation: &str, input: &Value) -> AwsResult<Value> {
        Ok(self
            .bucket_config(operation, input)?
            .unwrap_or_else(Value::map))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn notifications_convert_both_ways() {
        let old = Value::map().with(
            "QueueConfiguration",
            Value::map()
                .with("Id", "n")
                .with("Event", "s3:ObjectCreated:Put")
                .with("Events", vec![Value::from("s3:ObjectRemoved:*")])
                .with("Queue", "arn:aws:sqs:us-east-1:000000000000:q"),
        );
        let current = current_notification(&old);
        assert_eq!(
            current,
            Value::map().with(
                "QueueConfigurations",
                vec![Value::map()
                    .with("Id", "n")
                    .with(
                        "Events",
                        vec![
                            Value::from("s3:ObjectCreated:Put"),
                            Value::from("s3:ObjectRemoved:*")
                        ]
                    )
                    .with("QueueArn", "arn:aws:sqs:us-east-1:000000000000:q")]
            )
        );
        let back = old_notification(&current);
        let queue = back.get("QueueConfiguration").unwrap();
        assert_eq!(queue.str("Event"), Some("s3:ObjectCreated:Put"));
        assert_eq!(
            queue.str("Queue"),
            Some("arn:aws:sqs:us-east-1:000000000000:q")
        );
        assert_eq!(old_notification(&Value::map()), Value::map());
    }

    #[test]
    fn lifecycle_rules_convert_both_ways() {
        let transition = Value::map()
            .with("Days", 30i64)
            .with("StorageClass", "GLACIER");
        let old = Value::map().with(
            "Rules",
            vec![Value::map()
                .with("ID", "r")
                .with("Prefix", "logs/")
                .with("Status", "Enabled")
                .with("Transition", transition.clone())],
        );
        let current = current_lifecycle(&old);
        let rule = &current.get("Rules").unwrap().as_list().unwrap()[0];
        assert_eq!(
            rule.get("Transitions"),
            Some(&Value::List(vec![transition]))
        );
        assert_eq!(old_lifecycle(&current), old);
        let filtered = Value::map().with(
            "Rules",
            vec![Value::map()
                .with("ID", "f")
                .with("Status", "Enabled")
                .with("Filter", Value::map().with("Prefix", "tmp/"))],
        );
        let converted = old_lifecycle(&filtered);
        let rule = &converted.get("Rules").unwrap().as_list().unwrap()[0];
        assert_eq!(rule.str("Prefix"), Some("tmp/"));
        assert!(rule.get("Filter").is_none());
    }
}
