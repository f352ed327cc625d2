//! What SNS delivers itself: HTTP/HTTPS POSTs through the event bus, and the email and SMS
//! messages it records in the trace rather than sends.
//!
//! An HTTP delivery is an event with `target_service` `sns`, the endpoint URL as target and
//! `{Body, Headers}` as payload; [`deliver`] POSTs it with [`crate::http_client`] (which
//! reaches `https://` endpoints over plain HTTP), and any answer outside 2xx is a failure
//! the bus retries and traces. An email or SMS "delivery" is a trace entry of
//! kind `delivery` whose `detail` is the message as JSON (`{"Subject", "Message"}`), so a
//! test reads it from `GET /_roto/traces?service=sns&kind=delivery`.

use base64::Engine;
use roto_core::events::{DeliveryError, Event};
use roto_core::timestamp::{format, TimestampFormat};
use roto_core::trace::{TraceEntry, TraceKind};
use roto_core::value::EpochMillis;
use roto_core::{Context, Env, Value};
use sha2::{Digest, Sha256};

use super::store::{Subscription, Topic};
use crate::http_client::{self, HttpRequest};

/// Attempts per HTTP delivery (AWS's default healthy retry policy: 3 retries).
const HTTP_ATTEMPTS: u32 = 4;

/// A timestamp as SNS writes them (`2026-01-01T00:00:00.000Z`).
pub fn timestamp(millis: EpochMillis) -> String {
    format(millis, TimestampFormat::Iso8601)
}

/// A stand-in signature: present and well-formed (base64), since clients that verify SNS
/// signatures fetch AWS's certificate, which no local emulator can sign for.
pub fn signature(text: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(Sha256::digest(text.as_bytes()))
}

/// The certificate URL SNS messages name.
pub fn signing_cert_url(region: &str) -> String {
    format!(
        "https://sns.{region}.amazonaws.com/SimpleNotificationService-9c6465fa7f48f5cacd23014631ec1136.pem"
    )
}

/// Delivers or records one message for a subscription of an SNS-handled protocol
/// (`http`, `https`, `email`, `email-json`, `sms`). `kind` is `Notification` or
/// `SubscriptionConfirmation`; `envelope` the JSON message; `raw` sends the bare message
/// (the envelope's `Message`) instead.
pub fn send(
    env: &Env,
    topic: &Topic,
    subscription: &Subscription,
    kind: &str,
    envelope: &serde_json::Value,
    raw: bool,
) {
    let message = envelope["Message"].as_str().unwrap_or_default();
    match subscription.protocol.as_str() {
        "http" | "https" => {
            let body = if raw {
                message.to_string()
            } else {
                envelope.to_string()
            };
            let mut headers = Value::map()
                .with("x-amz-sns-message-type", kind)
                .with(
                    "x-amz-sns-message-id",
                    envelope["MessageId"].as_str().unwrap_or_default(),
                )
                .with("x-amz-sns-topic-arn", topic.arn.as_str())
                .with("content-type", "text/plain; charset=UTF-8")
                .with("user-agent", "Amazon Simple Notification Service Agent");
            if kind == "Notification" {
                headers.insert("x-amz-sns-subscription-arn", subscription.arn.as_str());
            }
            if raw {
                headers.insert("x-amz-sns-rawdelivery", "true");
            }
            env.bus.publish(Event {
                kind: format!("sns:{kind}"),
                source_service: "sns".into(),
                source: topic.arn.clone(),
                target_service: "sns".into(),
                target: subscription.endpoint.clone(),
                account: subscription.account.clone(),
                region: subscription.region.clone(),
                payload: Value::map().with("Body", body).with("Headers", headers),
                max_attempts: HTTP_ATTEMPTS,
            });
        }
        protocol => {
            let text = match protocol {
                "email-json" => envelope.to_string(),
                _ if kind == "SubscriptionConfirmation" => format!(
                    "{message}\n{}",
                    envelope["SubscribeURL"].as_str().unwrap_or_default()
                ),
                _ => message.to_string(),
            };
            let mut recorded = serde_json::json!({"Message": text});
            if let Some(subject) = envelope["Subject"].as_str() {
                recorded["Subject"] = subject.into();
            }
            if kind == "SubscriptionConfirmation" {
                recorded["Token"] = envelope["Token"].clone();
            }
            let label = if protocol == "sms" { "Sms" } else { "Email" };
            let mut entry = TraceEntry::request(
                &subscription.account,
                &subscription.region,
                "sns",
                &format!("sns:{label}{kind}"),
            );
            entry.kind = TraceKind::Delivery;
            entry.source = Some(topic.arn.clone());
            entry.target = Some(subscription.endpoint.clone());
            entry.outcome = Some("delivered".into());
            entry.attempt = Some(1);
            entry.detail = Some(recorded.to_string());
            env.trace.record(entry);
        }
    }
}

/// Records a message published straight to a phone number or a push endpoint, which
/// Roto never sends: `operation` names the kind (`sns:SmsNotification`), `detail` is what
/// would have been sent.
pub fn record_direct(
    env: &Env,
    ctx: &Context,
    operation: &str,
    target: &str,
    detail: &serde_json::Value,
) {
    let mut entry = TraceEntry::request(&ctx.account, &ctx.region, "sns", operation);
    entry.kind = TraceKind::Delivery;
    entry.source = Some(format!("arn:aws:sns:{}:{}", ctx.region, ctx.account));
    entry.target = Some(target.to_string());
    entry.outcome = Some("delivered".into());
    entry.attempt = Some(1);
    entry.detail = Some(detail.to_string());
    env.trace.record(entry);
}

/// Runs an HTTP delivery off the bus: a POST that wants a 2xx answer; anything else is a
/// failure the bus retries.
pub async fn deliver(event: &Event) -> Result<(), DeliveryError> {
    let mut request = HttpRequest::new("POST", &event.target);
    request.body = event.payload.str("Body").unwrap_or_default().into();
    request.headers = event
        .payload
        .get("Headers")
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(name, value)| Some((name.clone(), value.as_str()?.to_string())))
        .collect();
    let response = http_client::send(&request).await?;
    if response.status.is_success() {
        Ok(())
    } else {
        Err(format!("POST {} answered {}", event.target, response.status).into())
    }
}
