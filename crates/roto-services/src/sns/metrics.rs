//! SNS's metrics in `AWS/SNS`, per topic (dimension `TopicName`), as AWS publishes them:
//! NumberOfMessagesPublished and PublishSize as messages are published, and
//! NumberOfNotificationsDelivered and NumberOfNotificationsFailed as the event bus reports
//! each delivery's end.

use roto_core::events::Event;
use roto_core::metrics::Datum;
use roto_core::Env;

use super::store::Topic;

const NAMESPACE: &str = "AWS/SNS";

fn put(
    env: &Env,
    (account, region, topic): (&str, &str, &str),
    name: &str,
    value: f64,
    unit: &str,
) {
    let dims = [("TopicName", topic)];
    let datum = Datum::new(NAMESPACE, name, &dims, value, unit);
    env.metrics.put(account, region, &datum);
}

/// A message published to `topic`, of `size` bytes.
pub(super) fn published(env: &Env, topic: &Topic, size: usize) {
    let at = (
        topic.account.as_str(),
        topic.region.as_str(),
        topic.name.as_str(),
    );
    put(env, at, "NumberOfMessagesPublished", 1.0, "Count");
    put(env, at, "PublishSize", size as f64, "Bytes");
}

/// A delivery from a topic that ended, delivered or failed.
pub(super) fn notified(env: &Env, event: &Event, delivered: bool) {
    // arn:aws:sns:{region}:{account}:{name}
    let parts: Vec<&str> = event.source.splitn(6, ':').collect();
    let [_, _, _, region, account, topic] = parts[..] else {
        return;
    };
    let name = if delivered {
        "NumberOfNotificationsDelivered"
    } else {
        "NumberOfNotificationsFailed"
    };
    put(env, (account, region, topic), name, 1.0, "Count");
}
