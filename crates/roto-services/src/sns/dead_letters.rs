//! Subscriptions' dead-letter queues (`RedrivePolicy`).
//!
//! When a notification's delivery fails for good (the event bus tells SNS through
//! [`Service::delivery_failed`](roto_core::Service::delivery_failed)), it goes to the SQS
//! queue the subscription's `RedrivePolicy` names, as the message the endpoint would have
//! received: the JSON envelope, or for a raw SQS subscription the bare message with its
//! attributes as SQS message attributes, with the FIFO group and deduplication ids when
//! the dead-letter queue is FIFO. SNS adds no attributes of its own (AWS's dead-letter
//! messages carry none). The move is an event-bus delivery to `sqs` of kind
//! `sns:DeadLetter`, traced like any other; a move that fails is only traced.

use roto_core::events::Event;
use roto_core::{AwsError, Value};
use serde_json::Value as Json;

use super::publish::{arn_location, envelope_of_lambda_sns, SNS_SENDER_ID};
use super::store::{self, Subscription};
use super::Sns;

/// The event kind of a message moved to a dead-letter queue.
const DEAD_LETTER_KIND: &str = "sns:DeadLetter";

/// The queue a subscription's redrive policy names, if it has one.
fn dead_letter_queue(subscription: &Subscription) -> Option<String> {
    let policy: Json = serde_json::from_str(subscription.attributes.get("RedrivePolicy")?).ok()?;
    policy["deadLetterTargetArn"].as_str().map(str::to_string)
}

/// The SendMessage input that puts a failed delivery in `queue`: what the endpoint would
/// have received.
fn dead_letter_message(subscription: &Subscription, event: &Event, queue: &str) -> Option<Value> {
    let mut message = match subscription.protocol.as_str() {
        "sqs" => event.payload.clone(),
        "lambda" => {
            let record = event.payload.get("Records")?.as_list()?.first()?;
            let envelope = envelope_of_lambda_sns(&record.get("Sns")?.to_json());
            Value::map().with("MessageBody", envelope.to_string())
        }
        "http" | "https" => Value::map().with("MessageBody", event.payload.str("Body")?),
        _ => return None,
    };
    message.insert("SenderId", SNS_SENDER_ID);
    if !queue.ends_with(".fifo") {
        message.remove("MessageGroupId");
        message.remove("MessageDeduplicationId");
    }
    Some(message)
}

impl Sns {
    /// Sends a notification whose delivery failed for good to its subscription's
    /// dead-letter queue, if the subscription (still) has one.
    pub(super) fn dead_letter(&self, event: &Event) {
        if event.kind != "sns:Notification" {
            return;
        }
        let found = self.env.store.with(|c| {
            store::find_topic_subscription(c, &event.source, &event.target).map_err(AwsError::from)
        });
        let Ok(Some(subscription)) = found else {
            return;
        };
        let Some(queue) = dead_letter_queue(&subscription) else {
            return;
        };
        let Some(payload) = dead_letter_message(&subscription, event, &queue) else {
            return;
        };
        let (account, region) = arn_location(&queue)
            .map(|(a, r)| (a.to_string(), r.to_string()))
            .unwrap_or_else(|| (subscription.account.clone(), subscription.region.clone()));
        self.env.bus.publish(Event {
            kind: DEAD_LETTER_KIND.into(),
            source_service: "sns".into(),
            source: subscription.arn.clone(),
            target_service: "sqs".into(),
            target: queue,
            account,
            region,
            payload,
            max_attempts: 1,
        });
    }
}
