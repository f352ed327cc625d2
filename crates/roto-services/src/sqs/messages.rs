//! Messages: SendMessage, ReceiveMessage (long polling included) and DeleteMessage.
//!
//! A long-polling receive never holds the store while it waits: it takes what is visible in
//! one short transaction, and if that is nothing it sleeps until the first of: the queue's
//! [`Notify`] (fired by every send, delivery and visibility change), the moment the next
//! delayed or in-flight message becomes visible on the server clock (which wakes early when
//! a test advances that clock past it), or the end of its wait time (real time), then looks
//! again. It returns as soon as there is a message, and never polls; when the server stops,
//! a waiting receive answers at once with no messages, as its wait time running out would.
//!
//! Receipt handles are opaque to callers but carry the message id, so any handle SQS ever
//! issued for a message (a stale one included) deletes it, while a string that is no
//! receipt handle at all is `ReceiptHandleIsInvalid`, as in AWS.

use std::time::Duration;

use base64::Engine;
use roto_core::dispatch::new_request_id;
use roto_core::timestamp::{self, now_millis};
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use sha2::{Digest, Sha256};

use super::attributes::{self, check_characters, md5_hex, Attributes, Kind};
use super::metrics;
use super::queues::no_such_queue;
use super::store::{self, NewMessage, Queue, StoredMessage};
use super::{int_in, invalid_parameter, invalid_value, missing, required, string_list, Sqs};

/// How long a FIFO deduplication id is remembered.
const DEDUP_WINDOW_MS: EpochMillis = 5 * 60 * 1000;

/// System attributes a receive can ask for.
const SYSTEM_ATTRIBUTES: &[&str] = &[
    "SenderId",
    "SentTimestamp",
    "ApproximateReceiveCount",
    "ApproximateFirstReceiveTimestamp",
    "SequenceNumber",
    "MessageDeduplicationId",
    "MessageGroupId",
    "AWSTraceHeader",
    "DeadLetterQueueSourceArn",
];

/// Checks a FIFO id (`MessageGroupId`, `MessageDeduplicationId`): 1-128 characters,
/// alphanumeric or punctuation.
fn check_fifo_id(parameter: &str, value: &str) -> AwsResult<()> {
    let valid = !value.is_empty()
        && value.chars().count() <= 128
        && value
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c.is_ascii_punctuation());
    if valid {
        Ok(())
    } else {
        Err(invalid_value(
            parameter,
            value,
            &format!(
                "{parameter} can only include alphanumeric and punctuation characters. 1 to 128 in length."
            ),
        ))
    }
}

/// A new receipt handle for one receive of a message.
fn new_receipt_handle(queue: &Queue, message_id: &str) -> String {
    let nonce = format!("{:016x}{:016x}", fastrand::u64(..), fastrand::u64(..));
    base64::engine::general_purpose::STANDARD
        .encode(format!("{message_id} {} {nonce}", queue.arn()))
}

/// The message id a receipt handle was issued for.
fn message_id_of_handle(handle: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(handle)
        .ok()?;
    let text = String::from_utf8(bytes).ok()?;
    match text.split(' ').collect::<Vec<_>>()[..] {
        [id, arn, nonce] if arn.starts_with("arn:aws:sqs:") && nonce.len() == 32 => {
            Some(id.to_string())
        }
        _ => None,
    }
}

/// What a receive asked to see of each message.
struct Selection {
    system: Vec<String>,
    user: Vec<String>,
}

impl Selection {
    fn of(input: &Value) -> Selection {
        let mut system: Vec<String> = string_list(input, "AttributeNames")
            .into_iter()
            .chain(string_list(input, "MessageSystemAttributeNames"))
            .map(str::to_string)
            .collect();
        if system.iter().any(|n| n == "All") {
            system = SYSTEM_ATTRIBUTES.iter().map(|s| s.to_string()).collect();
        }
        let user = string_list(input, "MessageAttributeNames")
            .into_iter()
            .map(str::to_string)
            .collect();
        Selection { system, user }
    }

    fn wants_system(&self, name: &str) -> bool {
        self.system.iter().any(|n| n == name)
    }

    fn wants_user(&self, name: &str) -> bool {
        self.user.iter().any(|pattern| {
            pattern == "All"
                || pattern == ".*"
                || pattern == name
                || pattern
                    .strip_suffix(".*")
                    .is_some_and(|prefix| name.starts_with(&format!("{prefix}.")))
        })
    }
}

impl Sqs {
    pub(super) fn send_message(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let sent = self.enqueue(&queue, &ctx.account, input)?;
        self.wake(queue.id);
        Ok(sent)
    }

    /// Validates and stores one message (a SendMessage input, a batch entry, or a delivery
    /// from another service) without waking receivers; returns the SendMessage output.
    pub(super) fn enqueue(&self, queue: &Queue, sender: &str, input: &Value) -> AwsResult<Value> {
        let body = match input.str("MessageBody") {
            Some(b) if !b.is_empty() => b,
            _ => return Err(missing("MessageBody")),
        };
        let user = attributes::parse(input.get("MessageAttributes"), Kind::User)?;
        let system = attributes::parse(input.get("MessageSystemAttributes"), Kind::System)?;
        check_characters(body, "message body")?;
        let max = queue.int_attribute("MaximumMessageSize");
        if (body.len() + attributes::size(&user)) as i64 > max {
            return Err(invalid_parameter(format!(
                "One or more parameters are invalid. Reason: Message must be shorter than {max} bytes."
            )));
        }
        let delay = match input.int("DelaySeconds") {
            Some(d) if queue.fifo => {
                return Err(invalid_value(
                    "DelaySeconds",
                    d,
                    "The request include parameter that is not valid for this queue type.",
                ))
            }
            Some(d) if !(0..=900).contains(&d) => {
                return Err(invalid_value(
                    "DelaySeconds",
                    d,
                    "DelaySeconds must be >= 0 and <= 900.",
                ))
            }
            Some(d) => d,
            None => queue.int_attribute("DelaySeconds"),
        };
        let group_id = input.str("MessageGroupId");
        let mut dedup_id = input.str("MessageDeduplicationId").map(str::to_string);
        if let Some(g) = group_id {
            check_fifo_id("MessageGroupId", g)?;
        }
        if queue.fifo {
            if group_id.is_none() {
                return Err(missing("MessageGroupId"));
            }
            match &dedup_id {
                Some(d) => check_fifo_id("MessageDeduplicationId", d)?,
                None if queue.bool_attribute("ContentBasedDeduplication") => {
                    dedup_id = Some(hex::encode(Sha256::digest(body.as_bytes())));
                }
                None => {
                    return Err(invalid_parameter(
                        "The queue should either have ContentBasedDeduplication enabled or MessageDeduplicationId provided explicitly",
                    ))
                }
            }
        } else if let Some(d) = &dedup_id {
            return Err(invalid_value(
                "MessageDeduplicationId",
                d,
                "The request includes a parameter that is not valid for this queue type.",
            ));
        }
        let now = now_millis();
        let (message_id, sequence_number) = self.env.store.transaction(|tx| {
            let scope = match (queue.attributes.get("DeduplicationScope"), group_id) {
                (Some(s), Some(g)) if s == "messageGroup" => g,
                _ => "",
            };
            if let Some(d) = dedup_id.as_deref().filter(|_| queue.fifo) {
                if let Some((id, seq)) = store::find_duplicate(tx, queue.id, scope, d, now)? {
                    return Ok::<_, AwsError>((id, Some(seq)));
                }
            }
            let message_id = new_request_id();
            let sequence_number = if queue.fifo {
                Some(store::next_sequence_number(tx, queue.id)?)
            } else {
                None
            };
            store::insert_message(
                tx,
                &NewMessage {
                    queue_id: queue.id,
                    message_id: &message_id,
                    body,
                    attributes: &attributes::to_json(&user),
                    system_attributes: &attributes::to_json(&system),
                    sender_id: sender,
                    sent_at: now,
                    visible_at: now + delay * 1000,
                    expires_at: now + queue.int_attribute("MessageRetentionPeriod") * 1000,
                    group_id,
                    dedup_id: dedup_id.as_deref(),
                    sequence_number: sequence_number.as_deref(),
                },
            )?;
            if let (Some(d), Some(seq)) = (dedup_id.as_deref(), sequence_number.as_deref()) {
                store::remember_dedup(
                    tx,
                    queue.id,
                    scope,
                    d,
                    (&message_id, seq),
                    now + DEDUP_WINDOW_MS,
                )?;
            }
            Ok((message_id, sequence_number))
        })?;
        metrics::sent(&self.env, queue, body.len());
        Ok(Value::map()
            .with("MessageId", message_id)
            .with("MD5OfMessageBody", md5_hex(body.as_bytes()))
            .with_opt("MD5OfMessageAttributes", attributes::md5_of(&user))
            .with_opt("MD5OfMessageSystemAttributes", attributes::md5_of(&system))
            .with_opt("SequenceNumber", sequence_number))
    }

    pub(super) async fn receive_message(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let max = int_in(
            input,
            "MaxNumberOfMessages",
            1,
            10,
            "Must be between 1 and 10, if provided.",
        )?
        .unwrap_or(1);
        let visibility = int_in(
            input,
            "VisibilityTimeout",
            0,
            43_200,
            "Must be >= 0 and <= 43200, if provided.",
        )?;
        let wait = int_in(
            input,
            "WaitTimeSeconds",
            0,
            20,
            "Must be >= 0 and <= 20, if provided.",
        )?
        .unwrap_or_else(|| queue.int_attribute("ReceiveMessageWaitTimeSeconds"));
        let selection = Selection::of(input);
        let attempt = match input.str("ReceiveRequestAttemptId") {
            Some(a) => {
                check_fifo_id("ReceiveRequestAttemptId", a)?;
                Some(a).filter(|_| queue.fifo)
            }
            None => None,
        };
        if let Some(previous) = attempt.and_then(|a| self.attempt(queue.id, a)) {
            return Ok(Value::map().with("Messages", previous));
        }
        let deadline =
            tokio::time::Instant::now() + Duration::from_secs(u64::try_from(wait).unwrap_or(0));
        let notify = self.waiter(queue.id);
        loop {
            let sent = notify.notified();
            tokio::pin!(sent);
            sent.as_mut().enable();
            let (messages, next_visible) =
                self.take_visible(queue.id, max, visibility, &selection)?;
            if !messages.is_empty() || tokio::time::Instant::now() >= deadline {
                metrics::received(&self.env, &queue, messages.len());
                let mut out = Value::map();
                if !messages.is_empty() {
                    if let Some(a) = attempt {
                        self.remember_attempt(queue.id, a, &messages);
                    }
                    out.insert("Messages", messages);
                }
                return Ok(out);
            }
            tokio::select! {
                _ = sent.as_mut() => {}
                _ = tokio::time::sleep_until(deadline) => {}
                _ = visible_at(next_visible) => {}
                () = self.env.stopping() => return Ok(Value::map()),
            }
        }
    }

    /// Takes up to `max` visible messages of queue `id` in one transaction, hiding each for
    /// its visibility timeout; also says when the next hidden message becomes visible.
    fn take_visible(
        &self,
        id: i64,
        max: i64,
        visibility: Option<i64>,
        selection: &Selection,
    ) -> AwsResult<(Vec<Value>, Option<EpochMillis>)> {
        let now = now_millis();
        let mut moved = Vec::new();
        let taken = self.env.store.transaction(|tx| {
            let queue = store::queue_by_id(tx, id)?.ok_or_else(no_such_queue)?;
            store::purge_expired(tx, id, now)?;
            let timeout = visibility.unwrap_or_else(|| queue.int_attribute("VisibilityTimeout"));
            let dead_letter = dead_letter_target(tx, &queue)?;
            let mut out = Vec::new();
            for mut message in store::visible_messages(tx, id, queue.fifo, now, max)? {
                if let Some((target, max_receives)) = &dead_letter {
                    if message.receive_count >= *max_receives {
                        store::move_to_dead_letter(tx, message.seq, target.id, &queue.arn(), now)?;
                        moved.push(target.id);
                        continue;
                    }
                }
                store::mark_received(tx, message.seq, now, now + timeout * 1000)?;
                message.receive_count += 1;
                message.first_receive_at.get_or_insert(now);
                let handle = new_receipt_handle(&queue, &message.message_id);
                out.push(message_output(&message, handle, selection));
            }
            let next = store::next_visible_at(tx, id, now)?;
            Ok((out, next))
        });
        for target in moved {
            self.wake(target);
        }
        taken
    }

    pub(super) fn delete_message(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        self.delete_one(&queue, input)?;
        Ok(Value::map())
    }

    /// Deletes the message a `ReceiptHandle` member names (DeleteMessage or a batch entry).
    pub(super) fn delete_one(&self, queue: &Queue, entry: &Value) -> AwsResult<()> {
        let message_id = handle_message_id(required(entry, "ReceiptHandle")?)?;
        self.forget_attempts(queue.id);
        self.env
            .store
            .with(|c| store::delete_message(c, queue.id, &message_id).map_err(AwsError::from))?;
        metrics::deleted(&self.env, queue);
        Ok(())
    }

    pub(super) fn change_message_visibility(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        self.change_visibility(&queue, input)?;
        Ok(Value::map())
    }

    /// Gives an in-flight message a new visibility timeout from now (ChangeMessageVisibility
    /// or a batch entry).
    pub(super) fn change_visibility(&self, queue: &Queue, entry: &Value) -> AwsResult<()> {
        let handle = required(entry, "ReceiptHandle")?;
        let message_id = handle_message_id(handle)?;
        let timeout = int_in(
            entry,
            "VisibilityTimeout",
            0,
            43_200,
            "Must be >= 0 and <= 43200, if provided.",
        )?
        .ok_or_else(|| missing("VisibilityTimeout"))?;
        let now = now_millis();
        self.forget_attempts(queue.id);
        self.env.store.transaction(|tx| {
            match store::message_state(tx, queue.id, &message_id)? {
                None => Err(invalid_value(
                    "ReceiptHandle",
                    handle,
                    "Message does not exist or is not available for visibility timeout change.",
                )),
                Some((visible_at, receives)) if visible_at <= now || receives == 0 => {
                    Err(AwsError::new(
                        "MessageNotInflight",
                        "The message referred to is not in flight.",
                    )
                    .with_status(400))
                }
                Some(_) => {
                    store::set_visible_at(tx, queue.id, &message_id, now + timeout * 1000)?;
                    Ok(())
                }
            }
        })?;
        self.wake(queue.id);
        Ok(())
    }
}

/// The message id in a receipt handle, else `ReceiptHandleIsInvalid`.
fn handle_message_id(handle: &str) -> AwsResult<String> {
    message_id_of_handle(handle).ok_or_else(|| {
        AwsError::new(
            "ReceiptHandleIsInvalid",
            format!("The input receipt handle \"{handle}\" is not a valid receipt handle."),
        )
        .with_status(400)
    })
}

/// The dead-letter queue of `queue` and the receive count that sends messages there, if
/// its redrive policy names a queue that exists.
fn dead_letter_target(
    c: &rusqlite::Connection,
    queue: &Queue,
) -> rusqlite::Result<Option<(Queue, i64)>> {
    let Some(policy) = queue.attributes.get("RedrivePolicy") else {
        return Ok(None);
    };
    let policy: serde_json::Value = serde_json::from_str(policy).unwrap_or_default();
    let (Some(arn), Some(max)) = (
        policy["deadLetterTargetArn"].as_str(),
        policy["maxReceiveCount"].as_i64(),
    ) else {
        return Ok(None);
    };
    let Some((account, region, name)) = super::queues::parse_queue_arn(arn) else {
        return Ok(None);
    };
    Ok(store::find_queue(c, account, region, name)?.map(|target| (target, max)))
}

/// Returns once the server clock reaches `moment` (early when the clock is advanced past
/// it); never without one.
async fn visible_at(moment: Option<EpochMillis>) {
    match moment {
        Some(at) => timestamp::sleep_until(at).await,
        None => std::future::pending().await,
    }
}

/// One received message as the `Message` shape.
fn message_output(message: &StoredMessage, handle: String, selection: &Selection) -> Value {
    let system = attributes::from_json(&message.system_attributes);
    let trace_header = system.get("AWSTraceHeader").and_then(|a| match &a.value {
        attributes::AttributeValue::String(s) => Some(s.clone()),
        attributes::AttributeValue::Binary(_) => None,
    });
    let values: [(&str, Option<String>); 9] = [
        ("SenderId", Some(message.sender_id.clone())),
        ("SentTimestamp", Some(message.sent_at.to_string())),
        (
            "ApproximateReceiveCount",
            Some(message.receive_count.to_string()),
        ),
        (
            "ApproximateFirstReceiveTimestamp",
            message.first_receive_at.map(|t| t.to_string()),
        ),
        ("SequenceNumber", message.sequence_number.clone()),
        ("MessageDeduplicationId", message.dedup_id.clone()),
        ("MessageGroupId", message.group_id.clone()),
        ("AWSTraceHeader", trace_header),
        (
            "DeadLetterQueueSourceArn",
            message.dead_letter_source.clone(),
        ),
    ];
    let mut system_out = Value::map();
    for (name, value) in values {
        if let Some(v) = value.filter(|_| selection.wants_system(name)) {
            system_out.insert(name, v);
        }
    }
    let user: Attributes = attributes::from_json(&message.attributes)
        .into_iter()
        .filter(|(name, _)| selection.wants_user(name))
        .collect();
    let mut out = Value::map()
        .with("MessageId", message.message_id.as_str())
        .with("ReceiptHandle", handle)
        .with("MD5OfBody", md5_hex(message.body.as_bytes()))
        .with("Body", message.body.as_str());
    if system_out.as_map().is_some_and(|m| !m.is_empty()) {
        out.insert("Attributes", system_out);
    }
    if let Some(md5) = attributes::md5_of(&user) {
        out.insert("MD5OfMessageAttributes", md5);
        out.insert("MessageAttributes", attributes::to_value(&user));
    }
    out
}
