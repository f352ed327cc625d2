//! Subscriptions: Subscribe, ConfirmSubscription, Unsubscribe, ListSubscriptions(ByTopic),
//! Get/SetSubscriptionAttributes.
//!
//! SQS, Lambda, Firehose, application and SMS subscriptions are confirmed at once, as AWS
//! confirms same-account ones; HTTP/HTTPS and email ones stay pending until
//! ConfirmSubscription names their token. HTTP endpoints receive a SubscriptionConfirmation
//! POST carrying the token and a `SubscribeURL` that confirms when fetched; email
//! confirmations are recorded in the trace with their token.

use std::collections::BTreeMap;

use roto_core::dispatch::new_request_id;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::deliveries;
use super::store::{self, Subscription, Topic};
use super::{invalid, not_found, page, required, self_url, string_map, Sns};
use crate::pattern::{Dialect, Pattern};

/// The subscriptions one listing page returns.
const PAGE_SIZE: usize = 100;

/// Protocols SNS delivers to.
const PROTOCOLS: &[&str] = &[
    "http",
    "https",
    "email",
    "email-json",
    "sms",
    "sqs",
    "application",
    "lambda",
    "firehose",
];

/// Attributes a subscription may set.
const SETTABLE: &[&str] = &[
    "DeliveryPolicy",
    "FilterPolicy",
    "FilterPolicyScope",
    "RawMessageDelivery",
    "RedrivePolicy",
    "SubscriptionRoleArn",
    "ReplayPolicy",
];

/// Whether an endpoint fits its protocol.
fn endpoint_fits(protocol: &str, endpoint: &str) -> bool {
    let arn_of = |service: &str| endpoint.starts_with(&format!("arn:aws:{service}:"));
    match protocol {
        "http" => endpoint.starts_with("http://"),
        "https" => endpoint.starts_with("https://"),
        "email" | "email-json" => endpoint
            .split_once('@')
            .is_some_and(|(u, d)| !u.is_empty() && d.contains('.')),
        "sms" => {
            let digits = endpoint.strip_prefix('+').unwrap_or(endpoint);
            !digits.is_empty()
                && digits.len() <= 15
                && digits.bytes().all(|b| b.is_ascii_digit() || b == b'-')
        }
        "sqs" => arn_of("sqs"),
        "lambda" => arn_of("lambda"),
        "firehose" => arn_of("firehose"),
        "application" => arn_of("sns"),
        _ => false,
    }
}

/// Whether a protocol's subscriptions need confirming.
fn needs_confirmation(protocol: &str) -> bool {
    matches!(protocol, "http" | "https" | "email" | "email-json")
}

/// The filter-policy dialect of a scope.
fn dialect(scope: Option<&String>) -> Dialect {
    match scope.map(String::as_str) {
        Some("MessageBody") => Dialect::SnsBody,
        _ => Dialect::SnsAttributes,
    }
}

/// Checks a filter policy in its scope, wording errors as SNS does.
pub fn check_filter_policy(policy: &str, scope: Option<&String>) -> AwsResult<()> {
    match Pattern::parse(policy, dialect(scope)) {
        Ok(_) => Ok(()),
        Err(e) if e.syntax => Err(invalid(format!(
            "Attributes Reason: FilterPolicy: {}\n at [Source: (String)\"{policy}\"; line: 1, column: {}]",
            e.reason,
            policy.chars().count()
        ))),
        Err(e) if e.reason.starts_with("Filter policy scope") => Err(invalid(e.reason)),
        Err(e) => Err(invalid(format!("FilterPolicy: {}", e.reason))),
    }
}

/// Validates one subscription attribute against the others it will sit with.
fn check_attribute(name: &str, value: &str, all: &BTreeMap<String, String>) -> AwsResult<()> {
    if !SETTABLE.contains(&name) {
        return Err(invalid("AttributeName"));
    }
    match name {
        "RawMessageDelivery" if !matches!(value, "true" | "false") => Err(invalid(format!(
            "Attributes Reason: RawMessageDelivery: Invalid value [{value}]. Must be true or false."
        ))),
        "FilterPolicyScope" if !matches!(value, "MessageAttributes" | "MessageBody") => {
            Err(invalid(format!(
                "Attributes Reason: FilterPolicyScope: Invalid value [{value}]. Please use either MessageBody or MessageAttributes"
            )))
        }
        "FilterPolicy" if !value.is_empty() => {
            check_filter_policy(value, all.get("FilterPolicyScope"))
        }
        "RedrivePolicy" if !value.is_empty() => {
            let policy: Option<serde_json::Value> = serde_json::from_str(value).ok();
            match policy.as_ref().and_then(|p| p["deadLetterTargetArn"].as_str()) {
                Some(arn) if arn.starts_with("arn:aws:sqs:") => Ok(()),
                Some(_) => Err(invalid("RedrivePolicy: deadLetterTargetArn is not an SQS queue ARN")),
                None => Err(invalid(
                    "RedrivePolicy: Redrive policy is not a valid JSON map with deadLetterTargetArn",
                )),
            }
        }
        "DeliveryPolicy" | "ReplayPolicy"
            if serde_json::from_str::<serde_json::Value>(value).is_err() =>
        {
            Err(invalid(format!("{name}: failed to parse JSON")))
        }
        _ => Ok(()),
    }
}

/// A subscription as the `Subscription` listing shape.
fn listing(s: &Subscription) -> Value {
    let arn = if s.confirmed {
        s.arn.as_str()
    } else {
        "PendingConfirmation"
    };
    Value::map()
        .with("SubscriptionArn", arn)
        .with("Owner", s.owner.as_str())
        .with("Protocol", s.protocol.as_str())
        .with("Endpoint", s.endpoint.as_str())
        .with("TopicArn", s.topic_arn.as_str())
}

/// Whether a string is shaped like a subscription ARN.
fn check_subscription_arn(arn: &str) -> AwsResult<()> {
    let parts = arn.split(':').count();
    if parts < 6 {
        return Err(invalid(format!(
            "SubscriptionArn Reason: An ARN must have at least 6 elements, not {parts}"
        )));
    }
    Ok(())
}

impl Sns {
    fn subscription(&self, arn: &str) -> AwsResult<Subscription> {
        check_subscription_arn(arn)?;
        self.env
            .store
            .with(|c| store::find_subscription(c, arn).map_err(AwsError::from))?
            .ok_or_else(|| not_found("Subscription does not exist"))
    }

    pub(super) fn subscribe(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let topic = self.topic(required(input, "TopicArn")?)?;
        let protocol = required(input, "Protocol")?.to_ascii_lowercase();
        if !PROTOCOLS.contains(&protocol.as_str()) {
            return Err(invalid(format!(
                "Amazon SNS does not support this protocol string: {protocol}"
            )));
        }
        let endpoint = input.str("Endpoint").unwrap_or_default();
        if !endpoint_fits(&protocol, endpoint) {
            return Err(invalid(match protocol.as_str() {
                "sqs" => "SQS endpoint ARN".to_string(),
                "lambda" => "Lambda endpoint ARN".to_string(),
                "email" | "email-json" => "Email address".to_string(),
                "sms" => format!("Invalid SMS endpoint: {endpoint}"),
                _ => "Endpoint must match the specified protocol".to_string(),
            }));
        }
        let attributes = string_map(input, "Attributes");
        for (k, v) in &attributes {
            check_attribute(k, v, &attributes).map_err(|e| {
                if e.message == "Invalid parameter: AttributeName" {
                    invalid(format!("Attributes Reason: Unknown attribute {k}"))
                } else {
                    e
                }
            })?;
        }
        let return_arn = input.bool("ReturnSubscriptionArn").unwrap_or(false);
        let existing = self
            .env
            .store
            .with(|c| store::topic_subscriptions(c, &topic.arn).map_err(AwsError::from))?;
        if let Some(s) = existing
            .iter()
            .find(|s| s.protocol == protocol && s.endpoint == endpoint)
        {
            if attributes
                .iter()
                .any(|(k, v)| s.attributes.get(k) != Some(v))
            {
                return Err(invalid(
                    "Attributes Reason: Subscription already exists with different attributes",
                ));
            }
            let arn = if s.confirmed || return_arn {
                s.arn.as_str()
            } else {
                "pending confirmation"
            };
            return Ok(Value::map().with("SubscriptionArn", arn));
        }
        let pending = needs_confirmation(&protocol);
        let subscription = Subscription {
            arn: format!("{}:{}", topic.arn, new_request_id()),
            topic_arn: topic.arn.clone(),
            account: topic.account.clone(),
            region: topic.region.clone(),
            owner: ctx.account.clone(),
            protocol,
            endpoint: endpoint.to_string(),
            attributes,
            confirmed: !pending,
            token: format!(
                "{:016x}{:016x}{:016x}",
                fastrand::u64(..),
                fastrand::u64(..),
                fastrand::u64(..)
            ),
        };
        self.env
            .store
            .with(|c| store::insert_subscription(c, &subscription).map_err(AwsError::from))?;
        if pending {
            self.request_confirmation(ctx, &topic, &subscription);
        }
        let arn = if pending && !return_arn {
            "pending confirmation".to_string()
        } else {
            subscription.arn
        };
        Ok(Value::map().with("SubscriptionArn", arn))
    }

    /// Sends (HTTP) or records (email) the SubscriptionConfirmation of a new subscription.
    fn request_confirmation(&self, ctx: &Context, topic: &Topic, s: &Subscription) {
        let subscribe_url = format!(
            "{}/?Action=ConfirmSubscription&Version=2010-03-31&TopicArn={}&Token={}",
            self_url(ctx),
            percent_encoding::utf8_percent_encode(&topic.arn, percent_encoding::NON_ALPHANUMERIC),
            s.token
        );
        let message = format!(
            "You have chosen to subscribe to the topic {}.\nTo confirm the subscription, visit the SubscribeURL included in this message.",
            topic.arn
        );
        let envelope = serde_json::json!({
            "Type": "SubscriptionConfirmation",
            "MessageId": new_request_id(),
            "Token": s.token,
            "TopicArn": topic.arn,
            "Message": message,
            "SubscribeURL": subscribe_url,
            "Timestamp": deliveries::timestamp(super::now()),
            "SignatureVersion": "1",
            "Signature": deliveries::signature(&message),
            "SigningCertURL": deliveries::signing_cert_url(&topic.region),
        });
        deliveries::send(
            &self.env,
            topic,
            s,
            "SubscriptionConfirmation",
            &envelope,
            false,
        );
    }

    pub(super) fn confirm_subscription(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let topic = self.topic(required(input, "TopicArn")?)?;
        let token = required(input, "Token")?;
        let mut subscription = self
            .env
            .store
            .with(|c| store::topic_subscriptions(c, &topic.arn).map_err(AwsError::from))?
            .into_iter()
            .find(|s| s.token == token)
            .ok_or_else(|| invalid("Token"))?;
        if !subscription.confirmed {
            subscription.confirmed = true;
            if input.str("AuthenticateOnUnsubscribe") == Some("true") {
                subscription
                    .attributes
                    .insert("ConfirmationWasAuthenticated".into(), "true".into());
            }
            self.env
                .store
                .with(|c| store::update_subscription(c, &subscription).map_err(AwsError::from))?;
        }
        Ok(Value::map().with("SubscriptionArn", subscription.arn))
    }

    pub(super) fn unsubscribe(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "SubscriptionArn")?;
        let subscription = self.subscription(arn)?;
        self.env
            .store
            .with(|c| store::delete_subscription(c, &subscription.arn).map_err(AwsError::from))?;
        Ok(Value::map())
    }

    pub(super) fn list_subscriptions(
        &self,
        ctx: &Context,
        input: &Value,
        by_topic: bool,
    ) -> AwsResult<Value> {
        let topic = if by_topic {
            Some(self.topic(required(input, "TopicArn")?)?.arn)
        } else {
            None
        };
        let after = input.str("NextToken").unwrap_or_default();
        let subs = self.env.store.with(|c| {
            store::subscriptions(
                c,
                &ctx.account,
                &ctx.region,
                topic.as_deref(),
                after,
                PAGE_SIZE as i64 + 1,
            )
            .map_err(AwsError::from)
        })?;
        let (subs, token) = page(subs, PAGE_SIZE, |s| s.arn.as_str());
        let listed: Vec<Value> = subs.iter().map(listing).collect();
        Ok(Value::map()
            .with("Subscriptions", listed)
            .with_opt("NextToken", token))
    }

    pub(super) fn get_subscription_attributes(
        &self,
        _ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let s = self.subscription(required(input, "SubscriptionArn")?)?;
        let mut all: BTreeMap<String, Value> = BTreeMap::new();
        let mut put = |k: &str, v: &str| {
            all.insert(k.to_string(), Value::String(v.to_string()));
        };
        put("SubscriptionArn", &s.arn);
        put("TopicArn", &s.topic_arn);
        put("Owner", &s.owner);
        put("Protocol", &s.protocol);
        put("Endpoint", &s.endpoint);
        put(
            "PendingConfirmation",
            if s.confirmed { "false" } else { "true" },
        );
        put(
            "ConfirmationWasAuthenticated",
            if s.confirmed { "true" } else { "false" },
        );
        put("RawMessageDelivery", "false");
        put(
            "SubscriptionPrincipal",
            &format!("arn:aws:iam::{}:root", s.owner),
        );
        if s.protocol.starts_with("http") {
            put(
                "EffectiveDeliveryPolicy",
                r#"{"healthyRetryPolicy":{"minDelayTarget":20,"maxDelayTarget":20,"numRetries":3,"numMaxDelayRetries":0,"numNoDelayRetries":0,"numMinDelayRetries":0,"backoffFunction":"linear"},"sicklyRetryPolicy":null,"throttlePolicy":null,"guaranteed":false}"#,
            );
        }
        if s.attributes.contains_key("FilterPolicy") {
            put("FilterPolicyScope", "MessageAttributes");
        }
        for (k, v) in &s.attributes {
            put(k, v);
        }
        Ok(Value::map().with("Attributes", all))
    }

    pub(super) fn set_subscription_attributes(
        &self,
        _ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = required(input, "AttributeName")?;
        let value = input.str("AttributeValue").unwrap_or_default();
        let mut s = self.subscription(required(input, "SubscriptionArn")?)?;
        let mut next = s.attributes.clone();
        next.insert(name.to_string(), value.to_string());
        check_attribute(name, value, &next)?;
        if name == "FilterPolicyScope" {
            if let Some(policy) = next.get("FilterPolicy") {
                check_filter_policy(policy, next.get("FilterPolicyScope"))?;
            }
        }
        if value.is_empty() && matches!(name, "FilterPolicy" | "RedrivePolicy" | "DeliveryPolicy") {
            next.remove(name);
        }
        s.attributes = next;
        self.env
            .store
            .with(|c| store::update_subscription(c, &s).map_err(AwsError::from))?;
        Ok(Value::map())
    }
}
