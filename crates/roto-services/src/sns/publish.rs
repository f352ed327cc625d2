//! Publish and PublishBatch: validation, FIFO sequencing and deduplication, filter
//! policies, and one delivery per matching confirmed subscription.
//!
//! Each delivery gets the message its protocol should see: the JSON envelope AWS sends
//! (`Type`, `MessageId`, `TopicArn`, `Subject`, `Message`, `Timestamp`, `SignatureVersion`,
//! `Signature`, `SigningCertURL`, `UnsubscribeURL`, `MessageAttributes`; on FIFO topics
//! `SequenceNumber` and no signature fields), the bare message with its attributes as SQS
//! message attributes when `RawMessageDelivery` is on, or the `{"Records": [...]}` event
//! Lambda receives. With `MessageStructure=json` each protocol gets its own entry of the message
//! object, else `default`.

use std::collections::{BTreeMap, BTreeSet};

use base64::Engine;
use roto_core::dispatch::new_request_id;
use roto_core::events::Event;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Map, Value as Json};
use sha2::{Digest, Sha256};

use super::metrics;
use super::store::{self, Subscription, Topic};
use super::{deliveries, platform};
use super::{invalid, invalid_value, lock, not_found, required, self_url, Sns};
use crate::pattern::{Dialect, Pattern};

/// The largest message, attributes included (256 KiB).
const MAX_MESSAGE_BYTES: usize = 262_144;

/// The most attributes a message may carry.
const MAX_ATTRIBUTES: usize = 10;

/// How long a FIFO deduplication id is remembered.
const DEDUP_WINDOW_MS: EpochMillis = 5 * 60 * 1000;

/// The sender id SQS reports for messages SNS delivers.
pub(super) const SNS_SENDER_ID: &str = "AIDAIT2UOQQY3AUEKVGXU";

/// Attempts per SQS or Lambda delivery: what fails there (the queue or the function is
/// gone) is a client-side error, which SNS does not retry.
const ENDPOINT_ATTEMPTS: u32 = 1;

/// Envelope members the Lambda event spells its own way.
const LAMBDA_SPELLINGS: [(&str, &str); 2] = [
    ("SigningCertURL", "SigningCertUrl"),
    ("UnsubscribeURL", "UnsubscribeUrl"),
];

/// The `Sns` member of the Lambda event made from an envelope: Lambda's spellings, with
/// `Subject` null and `MessageAttributes` empty when the message has none.
fn lambda_sns(envelope: &Json) -> Json {
    let mut sns = envelope.clone();
    if let Json::Object(members) = &mut sns {
        for (ours, lambdas) in LAMBDA_SPELLINGS {
            if let Some(v) = members.remove(ours) {
                members.insert(lambdas.into(), v);
            }
        }
        members.entry("Subject").or_insert(Json::Null);
        members
            .entry("MessageAttributes")
            .or_insert_with(|| json!({}));
    }
    sns
}

/// The envelope a Lambda event's `Sns` member was made from (what [`lambda_sns`] undoes).
pub(super) fn envelope_of_lambda_sns(sns: &Json) -> Json {
    let mut envelope = sns.clone();
    if let Json::Object(members) = &mut envelope {
        for (ours, lambdas) in LAMBDA_SPELLINGS {
            if let Some(v) = members.remove(lambdas) {
                members.insert(ours.into(), v);
            }
        }
        if members.get("Subject").is_some_and(Json::is_null) {
            members.remove("Subject");
        }
        if members
            .get("MessageAttributes")
            .and_then(Json::as_object)
            .is_some_and(Map::is_empty)
        {
            members.remove("MessageAttributes");
        }
    }
    envelope
}

/// One message attribute.
#[derive(Debug, Clone)]
struct Attribute {
    data_type: String,
    value: AttributeValue,
}

#[derive(Debug, Clone)]
enum AttributeValue {
    Text(String),
    Binary(Vec<u8>),
}

impl Attribute {
    fn size(&self, name: &str) -> usize {
        name.len()
            + self.data_type.len()
            + match &self.value {
                AttributeValue::Text(s) => s.len(),
                AttributeValue::Binary(b) => b.len(),
            }
    }

    /// The `{"Type", "Value"}` form of the JSON envelope.
    fn envelope(&self) -> Json {
        let value = match &self.value {
            AttributeValue::Text(s) => s.clone(),
            AttributeValue::Binary(b) => base64::engine::general_purpose::STANDARD.encode(b),
        };
        json!({"Type": self.data_type, "Value": value})
    }

    /// The SQS message attribute a raw delivery carries (`String.Array` arrives as String).
    fn sqs(&self) -> Value {
        match &self.value {
            AttributeValue::Text(s) => {
                let data_type = if self.data_type == "String.Array" {
                    "String"
                } else {
                    &self.data_type
                };
                Value::map()
                    .with("DataType", data_type)
                    .with("StringValue", s.as_str())
            }
            AttributeValue::Binary(b) => Value::map()
                .with("DataType", self.data_type.as_str())
                .with("BinaryValue", Value::Blob(b.clone())),
        }
    }

    /// The value a filter policy sees: numbers as numbers, string arrays as arrays, binary
    /// not at all.
    fn filterable(&self) -> Option<Json> {
        let AttributeValue::Text(s) = &self.value else {
            return None;
        };
        if self.data_type.starts_with("Number") {
            return Some(
                s.parse::<f64>()
                    .ok()
                    .and_then(serde_json::Number::from_f64)
                    .map_or_else(|| Json::String(s.clone()), Json::Number),
            );
        }
        if self.data_type == "String.Array" {
            if let Ok(array @ Json::Array(_)) = serde_json::from_str(s) {
                return Some(array);
            }
        }
        Some(Json::String(s.clone()))
    }
}

fn parse_attributes(input: &Value) -> AwsResult<BTreeMap<String, Attribute>> {
    let Some(map) = input.get("MessageAttributes").and_then(Value::as_map) else {
        return Ok(BTreeMap::new());
    };
    if map.len() > MAX_ATTRIBUTES {
        return Err(invalid_value(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{MAX_ATTRIBUTES}].",
            map.len()
        )));
    }
    let mut out = BTreeMap::new();
    for (name, value) in map {
        let lower = name.to_ascii_lowercase();
        if name.is_empty()
            || name.len() > 256
            || lower.starts_with("aws.")
            || lower.starts_with("amazon.")
            || name.starts_with('.')
            || name.ends_with('.')
            || name.contains("..")
        {
            return Err(invalid_value(format!(
                "The message attribute name '{name}' is invalid."
            )));
        }
        let data_type = value.str("DataType").unwrap_or_default();
        let base = ["String.Array", "String", "Number", "Binary"]
            .into_iter()
            .find(|t| data_type == *t || data_type.starts_with(&format!("{t}.")))
            .filter(|_| !data_type.is_empty())
            .ok_or_else(|| {
                invalid_value(format!(
                    "The message attribute '{name}' has an invalid message attribute type, the set of supported type prefixes is Binary, Number, and String."
                ))
            })?;
        let empty = || {
            invalid_value(format!(
                "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{base}'."
            ))
        };
        let parsed = if base == "Binary" {
            match value.get("BinaryValue").and_then(Value::as_blob) {
                Some(b) if !b.is_empty() => AttributeValue::Binary(b.to_vec()),
                _ => return Err(empty()),
            }
        } else {
            let text = value
                .str("StringValue")
                .filter(|s| !s.is_empty())
                .ok_or_else(empty)?;
            if base == "Number" && text.trim().parse::<f64>().is_err() {
                return Err(invalid_value(format!(
                    "Could not cast message attribute '{name}' value to number."
                )));
            }
            if base == "String.Array" && !matches!(serde_json::from_str(text), Ok(Json::Array(_))) {
                return Err(invalid(format!(
                    "MessageAttributes Reason: The message attribute '{name}' with type 'String.Array' is not a valid JSON array."
                )));
            }
            AttributeValue::Text(text.to_string())
        };
        out.insert(
            name.clone(),
            Attribute {
                data_type: data_type.to_string(),
                value: parsed,
            },
        );
    }
    Ok(out)
}

/// A message accepted for fan-out.
struct Message<'a> {
    topic: &'a Topic,
    id: String,
    default: String,
    per_protocol: Option<Map<String, Json>>,
    subject: Option<String>,
    attributes: BTreeMap<String, Attribute>,
    group_id: Option<String>,
    dedup_id: Option<String>,
    sequence_number: Option<String>,
    timestamp: EpochMillis,
}

impl Message<'_> {
    /// The text a protocol receives.
    fn text_for(&self, protocol: &str) -> String {
        self.per_protocol
            .as_ref()
            .and_then(|m| m.get(protocol))
            .and_then(Json::as_str)
            .unwrap_or(&self.default)
            .to_string()
    }

    /// The JSON envelope (SQS, HTTP and email-json deliveries); a FIFO topic's carries its
    /// `SequenceNumber` and, as AWS's do, no signature.
    fn envelope(&self, ctx: &Context, subscription: &Subscription) -> Json {
        let message = self.text_for(&subscription.protocol);
        let mut envelope = json!({
            "Type": "Notification",
            "MessageId": self.id,
            "TopicArn": self.topic.arn,
            "Message": message,
            "Timestamp": deliveries::timestamp(self.timestamp),
            "UnsubscribeURL": unsubscribe_url(ctx, subscription),
        });
        if !self.topic.fifo {
            envelope["SignatureVersion"] = "1".into();
            envelope["Signature"] = deliveries::signature(&message).into();
            envelope["SigningCertURL"] = deliveries::signing_cert_url(&self.topic.region).into();
        }
        if let Some(subject) = &self.subject {
            envelope["Subject"] = subject.as_str().into();
        }
        if let Some(seq) = &self.sequence_number {
            envelope["SequenceNumber"] = seq.as_str().into();
        }
        if !self.attributes.is_empty() {
            envelope["MessageAttributes"] = self.envelope_attributes();
        }
        envelope
    }

    fn envelope_attributes(&self) -> Json {
        Json::Object(
            self.attributes
                .iter()
                .map(|(k, a)| (k.clone(), a.envelope()))
                .collect(),
        )
    }

    /// The document a subscription's filter policy is matched against, if any.
    fn passes(&self, subscription: &Subscription) -> bool {
        let Some(policy) = subscription.attributes.get("FilterPolicy") else {
            return true;
        };
        let body_scope = subscription
            .attributes
            .get("FilterPolicyScope")
            .is_some_and(|s| s == "MessageBody");
        let dialect = if body_scope {
            Dialect::SnsBody
        } else {
            Dialect::SnsAttributes
        };
        let Ok(pattern) = Pattern::parse(policy, dialect) else {
            return false;
        };
        let document = if body_scope {
            match serde_json::from_str(&self.text_for(&subscription.protocol)) {
                Ok(doc @ Json::Object(_)) => doc,
                _ => return false,
            }
        } else {
            Json::Object(
                self.attributes
                    .iter()
                    .filter_map(|(k, a)| Some((k.clone(), a.filterable()?)))
                    .collect(),
            )
        };
        pattern.matches(&document)
    }
}

fn unsubscribe_url(ctx: &Context, subscription: &Subscription) -> String {
    format!(
        "{}/?Action=Unsubscribe&Version=2010-03-31&SubscriptionArn={}",
        self_url(ctx),
        percent_encoding::utf8_percent_encode(
            &subscription.arn,
            percent_encoding::NON_ALPHANUMERIC
        )
    )
}

/// The account and region in an ARN.
pub(super) fn arn_location(arn: &str) -> Option<(&str, &str)> {
    match arn.split(':').collect::<Vec<_>>()[..] {
        ["arn", _, _, region, account, ..] => Some((account, region)),
        _ => None,
    }
}

fn check_subject(subject: &str) -> AwsResult<()> {
    let valid = !subject.is_empty()
        && subject.chars().count() <= 100
        && subject.chars().all(|c| !c.is_control());
    if valid {
        Ok(())
    } else {
        Err(invalid("Subject"))
    }
}

impl Sns {
    pub(super) fn publish(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let target = input
            .str("TopicArn")
            .or_else(|| input.str("TargetArn"))
            .filter(|a| !a.is_empty());
        if let Some(number) = input.str("PhoneNumber").filter(|_| target.is_none()) {
            let message = required(input, "Message")?;
            platform::check_phone_number(number)?;
            let message_id = new_request_id();
            deliveries::record_direct(
                &self.env,
                ctx,
                "sns:SmsNotification",
                number,
                &json!({ "Message": message, "MessageId": message_id }),
            );
            return Ok(Value::map().with("MessageId", message_id));
        }
        let arn = target.ok_or_else(|| {
            invalid("TopicArn or TargetArn Reason: no value for required parameter")
        })?;
        if !arn.starts_with("arn:aws:sns:") {
            return Err(not_found("Endpoint does not exist"));
        }
        if arn.contains(":endpoint/") {
            return self.publish_to_endpoint(ctx, arn, input);
        }
        let topic = self.topic(arn)?;
        self.publish_to(ctx, &topic, input)
    }

    /// Validates one message (Publish or a batch entry) and fans it out.
    fn publish_to(&self, ctx: &Context, topic: &Topic, input: &Value) -> AwsResult<Value> {
        let default = match input.str("Message") {
            Some(m) if !m.is_empty() => m,
            _ => return Err(invalid("Empty message")),
        };
        let per_protocol = match input.str("MessageStructure") {
            None => None,
            Some("json") => match serde_json::from_str::<Json>(default) {
                Ok(Json::Object(m)) if m.get("default").is_some_and(Json::is_string) => Some(m),
                Ok(Json::Object(_)) => {
                    return Err(invalid(
                        "Message Structure - No default entry in JSON message body",
                    ))
                }
                _ => {
                    return Err(invalid(
                        "Message Structure - JSON message body failed to parse",
                    ))
                }
            },
            Some(_) => return Err(invalid("MessageStructure")),
        };
        let default = per_protocol
            .as_ref()
            .and_then(|m| m["default"].as_str())
            .unwrap_or(default)
            .to_string();
        let subject = input.str("Subject");
        if let Some(s) = subject {
            check_subject(s)?;
        }
        let attributes = parse_attributes(input)?;
        let size = input.str("Message").map_or(0, str::len)
            + attributes.iter().map(|(k, a)| a.size(k)).sum::<usize>();
        if size > MAX_MESSAGE_BYTES {
            return Err(invalid("Message too long"));
        }
        let group_id = input.str("MessageGroupId");
        let mut dedup_id = input.str("MessageDeduplicationId").map(str::to_string);
        if topic.fifo {
            if group_id.is_none() {
                return Err(invalid(
                    "The MessageGroupId parameter is required for FIFO topics",
                ));
            }
            if dedup_id.is_none() {
                if topic
                    .attributes
                    .get("ContentBasedDeduplication")
                    .is_some_and(|v| v == "true")
                {
                    dedup_id = Some(hex::encode(Sha256::digest(default.as_bytes())));
                } else {
                    return Err(invalid(
                        "The topic should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    ));
                }
            }
        } else if group_id.is_some() {
            return Err(invalid(
                "MessageGroupId Reason: The request includes MessageGroupId parameter that is not valid for this topic type",
            ));
        } else if dedup_id.is_some() {
            return Err(invalid(
                "MessageDeduplicationId Reason: The request includes MessageDeduplicationId parameter that is not valid for this topic type",
            ));
        }
        let timestamp = super::now();
        // On a FIFO topic, deduplication, sequencing and fan-out happen under one lock:
        // concurrent duplicates then find each other, and each group's messages reach the
        // event bus (whose lanes keep order) in sequence-number order.
        let mut seen = topic.fifo.then(|| lock(&self.dedup));
        let key = dedup_id.as_ref().map(|d| (topic.arn.clone(), d.clone()));
        if let (Some(seen), Some(key)) = (seen.as_mut(), &key) {
            seen.expire(timestamp - DEDUP_WINDOW_MS);
            if let Some((_, id, seq)) = seen.seen.get(key) {
                return Ok(Value::map()
                    .with("MessageId", id.as_str())
                    .with("SequenceNumber", seq.as_str()));
            }
        }
        let sequence_number = if topic.fifo {
            Some(
                self.env
                    .store
                    .with(|c| store::next_sequence_number(c, &topic.arn).map_err(AwsError::from))?,
            )
        } else {
            None
        };
        let message = Message {
            topic,
            id: new_request_id(),
            default,
            per_protocol,
            subject: subject.map(str::to_string),
            attributes,
            group_id: group_id.map(str::to_string),
            dedup_id,
            sequence_number: sequence_number.clone(),
            timestamp,
        };
        if let (Some(seen), Some(key), Some(seq)) = (seen.as_mut(), key, &sequence_number) {
            seen.remember(key, timestamp, message.id.clone(), seq.clone());
        }
        self.fan_out(ctx, &message)?;
        Ok(Value::map()
            .with("MessageId", message.id)
            .with_opt("SequenceNumber", sequence_number))
    }

    /// Delivers a message to every confirmed subscription whose filter policy it passes.
    fn fan_out(&self, ctx: &Context, message: &Message<'_>) -> AwsResult<()> {
        metrics::published(&self.env, message.topic, message.default.len());
        let subscriptions = self
            .env
            .store
            .with(|c| store::topic_subscriptions(c, &message.topic.arn).map_err(AwsError::from))?;
        for s in subscriptions.iter().filter(|s| s.confirmed) {
            if !message.passes(s) {
                continue;
            }
            let raw = s.flag("RawMessageDelivery");
            match s.protocol.as_str() {
                "sqs" => self.to_queue(ctx, message, s, raw),
                "lambda" => self.to_function(ctx, message, s),
                "http" | "https" | "email" | "email-json" | "sms" => {
                    let mut envelope = message.envelope(ctx, s);
                    if s.protocol == "sms" || s.protocol == "email" {
                        envelope["Message"] = message.text_for(&s.protocol).into();
                    }
                    deliveries::send(&self.env, message.topic, s, "Notification", &envelope, raw);
                }
                _ => {}
            }
        }
        Ok(())
    }

    fn delivery_event(&self, message: &Message<'_>, s: &Subscription, service: &str) -> Event {
        let (account, region) = arn_location(&s.endpoint).unwrap_or((&s.account, &s.region));
        Event {
            kind: "sns:Notification".into(),
            source_service: "sns".into(),
            source: message.topic.arn.clone(),
            target_service: service.into(),
            target: s.endpoint.clone(),
            account: account.to_string(),
            region: region.to_string(),
            payload: Value::map(),
            max_attempts: ENDPOINT_ATTEMPTS,
        }
    }

    fn to_queue(&self, ctx: &Context, message: &Message<'_>, s: &Subscription, raw: bool) {
        let mut payload = Value::map().with("SenderId", SNS_SENDER_ID);
        if raw {
            payload.insert("MessageBody", message.text_for("sqs"));
            if !message.attributes.is_empty() {
                let attrs: BTreeMap<String, Value> = message
                    .attributes
                    .iter()
                    .map(|(k, a)| (k.clone(), a.sqs()))
                    .collect();
                payload.insert("MessageAttributes", attrs);
            }
        } else {
            payload.insert("MessageBody", message.envelope(ctx, s).to_string());
        }
        if s.endpoint.ends_with(".fifo") {
            if let Some(g) = &message.group_id {
                payload.insert("MessageGroupId", g.as_str());
            }
            let dedup = message
                .dedup_id
                .clone()
                .unwrap_or_else(|| message.id.clone());
            payload.insert("MessageDeduplicationId", dedup);
        }
        let mut event = self.delivery_event(message, s, "sqs");
        event.payload = payload;
        self.env.bus.publish(event);
    }

    fn to_function(&self, ctx: &Context, message: &Message<'_>, s: &Subscription) {
        let record = json!({
            "EventSource": "aws:sns",
            "EventVersion": "1.0",
            "EventSubscriptionArn": s.arn,
            "Sns": lambda_sns(&message.envelope(ctx, s)),
        });
        let mut event = self.delivery_event(message, s, "lambda");
        event.payload = Value::from_json(&json!({"Records": [record]}));
        self.env.bus.publish(event);
    }

    pub(super) fn publish_batch(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let topic = self.topic(required(input, "TopicArn")?)?;
        let entries = input
            .get("PublishBatchRequestEntries")
            .and_then(Value::as_list)
            .unwrap_or(&[]);
        if entries.is_empty() {
            return Err(AwsError::new(
                "EmptyBatchRequestException",
                "The batch request doesn't contain any entries",
            ));
        }
        if entries.len() > 10 {
            return Err(AwsError::new(
                "TooManyEntriesInBatchRequestException",
                "The batch request contains more entries than permissible.",
            ));
        }
        let mut ids = BTreeSet::new();
        for entry in entries {
            let id = entry.str("Id").unwrap_or_default();
            let valid = !id.is_empty()
                && id.len() <= 80
                && id
                    .bytes()
                    .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
            if !valid {
                return Err(AwsError::new(
                    "InvalidBatchEntryIdException",
                    "The Id of a batch entry in a batch request doesn't abide by the specification.",
                ));
            }
            if !ids.insert(id) {
                return Err(AwsError::new(
                    "BatchEntryIdsNotDistinctException",
                    "Two or more batch entries in the request have the same Id.",
                ));
            }
        }
        let total: usize = entries
            .iter()
            .map(|e| e.str("Message").map_or(0, str::len))
            .sum();
        if total > MAX_MESSAGE_BYTES {
            return Err(AwsError::new(
                "BatchRequestTooLongException",
                "The length of all the messages put together is more than the limit.",
            ));
        }
        let model = super::SPEC.model();
        let mut successful = Vec::new();
        let mut failed = Vec::new();
        for entry in entries {
            let id = entry.str("Id").unwrap_or_default();
            match self.publish_to(ctx, &topic, entry) {
                Ok(out) => successful.push(out.with("Id", id)),
                Err(e) => {
                    let code = model
                        .error_shape(&e.code)
                        .and_then(|s| s.error.as_ref())
                        .and_then(|s| s.code)
                        .map_or_else(|| e.code.to_string(), str::to_string);
                    failed.push(
                        Value::map()
                            .with("Id", id)
                            .with("Code", code)
                            .with("Message", e.message)
                            .with("SenderFault", e.sender_fault),
                    );
                }
            }
        }
        Ok(Value::map()
            .with("Successful", successful)
            .with("Failed", failed))
    }
}
