//! SNS: topics, subscriptions and fan-out, over the query protocol.
//!
//! - [`topics`]: CreateTopic, DeleteTopic, Get/SetTopicAttributes, ListTopics, tags and
//!   topic permissions.
//! - [`subscriptions`]: Subscribe, ConfirmSubscription, Unsubscribe, ListSubscriptions
//!   (ByTopic), Get/SetSubscriptionAttributes and filter-policy validation (the matcher is
//!   [`crate::pattern`], shared with EventBridge).
//! - [`publish`]: Publish and PublishBatch: validation, FIFO sequencing and deduplication,
//!   filter policies, and one event-bus delivery per matching subscription.
//! - [`platform`]: mobile push (platform applications and endpoints; publishes to an
//!   endpoint are recorded, not pushed) and the account's SMS settings.
//! - [`deliveries`]: what SNS itself delivers off the bus: HTTP/HTTPS POSTs
//!   (SubscriptionConfirmation, then Notification) and the email and SMS messages that are
//!   recorded in the trace instead of sent.
//! - [`metrics`]: the `AWS/SNS` metrics of publishes and deliveries.
//! - [`sandbox`]: the SMS sandbox's destination phone numbers (documents of `sns_items`).
//! - [`dead_letters`]: notifications whose delivery failed for good, sent to the
//!   subscription's dead-letter queue (`RedrivePolicy`).
//!
//! SQS and Lambda subscriptions are deliveries to those services: SNS publishes an event
//! whose `target_service` is `sqs` (payload: a SendMessage input, the body being the JSON
//! envelope or the raw message) or `lambda` (payload: the `{"Records": [...]}` SNS event).
//!
//! SNS checks its own input (`validate_input: false`): it reports bad input as
//! `InvalidParameter` with its own wording, not the generic `ValidationError`.

mod access;
mod dead_letters;
mod deliveries;
mod metrics;
mod platform;
mod publish;
mod store;
mod subscriptions;
mod topics;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use roto_core::access::{Access, Principal};
use roto_core::events::{DeliveryError, Event};
use roto_core::featureless::{self, Featureless};

use crate::documents::{documents_schema, Documents};
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "sns",
    model: "sns",
    query_model: None,
    signing_names: &["sns"],
    target_prefix: None,
    query_version: Some("2010-03-31"),
    crc32_responses: false,
    validate_input: false,
};

/// FIFO deduplication ids by (topic ARN, id): when seen, the message id and sequence number;
/// and the same keys oldest first, so expiry pops from the front instead of visiting every
/// id a busy topic remembers on each publish.
#[derive(Default)]
struct Dedup {
    seen: HashMap<(String, String), (EpochMillis, String, String)>,
    by_age: std::collections::VecDeque<(EpochMillis, (String, String))>,
}

impl Dedup {
    /// Forgets the ids first seen at or before `cutoff`.
    fn expire(&mut self, cutoff: EpochMillis) {
        while let Some((at, _)) = self.by_age.front() {
            if *at > cutoff {
                break;
            }
            if let Some((at, key)) = self.by_age.pop_front() {
                if self
                    .seen
                    .get(&key)
                    .is_some_and(|(seen_at, _, _)| *seen_at == at)
                {
                    self.seen.remove(&key);
                }
            }
        }
    }

    /// Remembers an id first seen at `at` with its message id and sequence number.
    fn remember(&mut self, key: (String, String), at: EpochMillis, id: String, seq: String) {
        self.by_age.push_back((at, key.clone()));
        self.seen.insert(key, (at, id, seq));
    }
}

/// The document table of the SMS sandbox's phone numbers.
static ITEMS_SCHEMA: &[&str] = &[documents_schema!("sns_items")];

/// SNS.
pub struct Sns {
    env: Arc<Env>,
    /// The SMS sandbox's phone numbers.
    docs: Documents,
    /// Recent FIFO deduplication ids; its lock also orders FIFO publishes (see
    /// `publish_to`).
    dedup: Mutex<Dedup>,
}

impl Sns {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Sns> {
        env.store.migrate(store::SCHEMA)?;
        env.store.migrate(platform::SCHEMA)?;
        Ok(Sns {
            docs: Documents::new(env.clone(), "sns_items", ITEMS_SCHEMA),
            env,
            dedup: Mutex::new(Dedup::default()),
        })
    }
}

impl Service for Sns {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        unmodeled::FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let output = match operation {
                "CreateTopic" => self.create_topic(ctx, input)?,
                "DeleteTopic" => self.delete_topic(ctx, input)?,
                "GetTopicAttributes" => self.get_topic_attributes(ctx, input)?,
                "SetTopicAttributes" => self.set_topic_attributes(ctx, input)?,
                "ListTopics" => self.list_topics(ctx, input)?,
                "TagResource" => self.tag_resource(ctx, input)?,
                "UntagResource" => self.untag_resource(ctx, input)?,
                "ListTagsForResource" => self.list_tags_for_resource(ctx, input)?,
                "AddPermission" => self.add_permission(ctx, input)?,
                "GetDataProtectionPolicy" => self.get_data_protection_policy(input)?,
                "PutDataProtectionPolicy" => self.put_data_protection_policy(input)?,
                "RemovePermission" => self.remove_permission(ctx, input)?,
                "Subscribe" => self.subscribe(ctx, input)?,
                "ConfirmSubscription" => self.confirm_subscription(ctx, input)?,
                "Unsubscribe" => self.unsubscribe(ctx, input)?,
                "ListSubscriptions" => self.list_subscriptions(ctx, input, false)?,
                "ListSubscriptionsByTopic" => self.list_subscriptions(ctx, input, true)?,
                "GetSubscriptionAttributes" => self.get_subscription_attributes(ctx, input)?,
                "SetSubscriptionAttributes" => self.set_subscription_attributes(ctx, input)?,
                "Publish" => self.publish(ctx, input)?,
                "PublishBatch" => self.publish_batch(ctx, input)?,
                "CreatePlatformApplication" => self.create_platform_application(ctx, input)?,
                "GetPlatformApplicationAttributes" => {
                    self.get_platform_application_attributes(input)?
                }
                "SetPlatformApplicationAttributes" => {
                    self.set_platform_application_attributes(input)?
                }
                "ListPlatformApplications" => self.list_platform_applications(ctx, input)?,
                "DeletePlatformApplication" => self.delete_platform_application(input)?,
                "CreatePlatformEndpoint" => self.create_platform_endpoint(input)?,
                "GetEndpointAttributes" => self.get_endpoint_attributes(input)?,
                "SetEndpointAttributes" => self.set_endpoint_attributes(input)?,
                "DeleteEndpoint" => self.delete_endpoint(input)?,
                "ListEndpointsByPlatformApplication" => {
                    self.list_endpoints_by_platform_application(input)?
                }
                "SetSMSAttributes" => self.set_sms_attributes(ctx, input)?,
                "GetSMSAttributes" => self.get_sms_attributes(ctx, input)?,
                "CheckIfPhoneNumberIsOptedOut" => self.check_if_phone_number_is_opted_out(input)?,
                "ListPhoneNumbersOptedOut" => Value::map().with("phoneNumbers", Vec::new()),
                "OptInPhoneNumber" => self.opt_in_phone_number(input)?,
                "GetSMSSandboxAccountStatus" => Value::map().with("IsInSandbox", false),
                "CreateSMSSandboxPhoneNumber" => {
                    self.create_sms_sandbox_phone_number(ctx, input)?
                }
                "VerifySMSSandboxPhoneNumber" => {
                    self.verify_sms_sandbox_phone_number(ctx, input)?
                }
                "DeleteSMSSandboxPhoneNumber" => {
                    self.delete_sms_sandbox_phone_number(ctx, input)?
                }
                "ListSMSSandboxPhoneNumbers" => self.list_sms_sandbox_phone_numbers(ctx, input)?,
                other => {
                    return featureless::answer(SPEC.model(), unmodeled::FEATURELESS, other, input)
                        .map(Response::new)
                }
            };
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(deliveries::deliver(event))
    }

    fn delivered(&self, event: &Event) {
        metrics::notified(&self.env, event, true);
    }

    fn delivery_failed(&self, event: &Event, _error: &str) {
        metrics::notified(&self.env, event, false);
        self.dead_letter(event);
    }

    fn access(&self, ctx: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, op, input)
    }
}

/// `InvalidParameter`, AWS's "Invalid parameter: ..." for bad input.
fn invalid(message: impl std::fmt::Display) -> AwsError {
    AwsError::new(
        "InvalidParameterException",
        format!("Invalid parameter: {message}"),
    )
}

/// `ParameterValueInvalid`, SNS's error for bad message attributes.
fn invalid_value(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterValueException", message)
}

/// `NotFound` (404).
fn not_found(message: &str) -> AwsError {
    AwsError::new("NotFoundException", message)
}

/// A required, non-empty string member, else `InvalidParameter: <name>`.
fn required<'v>(input: &'v Value, name: &str) -> AwsResult<&'v str> {
    match input.str(name) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(invalid(name)),
    }
}

/// The string members of a map member (`Attributes`).
fn string_map(input: &Value, name: &str) -> std::collections::BTreeMap<String, String> {
    input
        .get(name)
        .and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default()
}

/// The string members of a list member (`TagKeys`).
fn string_list<'v>(input: &'v Value, name: &str) -> Vec<&'v str> {
    input
        .get(name)
        .and_then(Value::as_list)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

/// Locks a mutex, surviving a poisoned one.
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

/// The base URL SNS hands out for links back to itself (`SubscribeURL`, `UnsubscribeURL`).
fn self_url(ctx: &Context) -> String {
    if ctx.host.is_empty() {
        "http://localhost:4566".into()
    } else {
        format!("http://{}", ctx.host)
    }
}

/// The current time.
fn now() -> EpochMillis {
    now_millis()
}

/// One page of a listing by ARN: tokens are the last ARN returned.
fn page<T>(mut items: Vec<T>, limit: usize, arn: impl Fn(&T) -> &str) -> (Vec<T>, Option<String>) {
    let more = items.len() > limit;
    items.truncate(limit);
    let token = more
        .then(|| items.last().map(|i| arn(i).to_string()))
        .flatten();
    (items, token)
}

mod sandbox;
#[cfg(test)]
mod tests;
mod unmodeled;
