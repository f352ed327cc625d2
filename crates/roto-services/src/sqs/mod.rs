//! SQS: standard and FIFO queues over both of SQS's wire protocols.
//!
//! SDKs since 2023 speak JSON 1.0 (`X-Amz-Target: AmazonSQS.<Op>`); older ones post
//! form-encoded query calls answered in XML. The codecs turn both into the same shaped
//! [`Value`], so this module never knows which one the caller spoke; errors are raised by
//! their model shape name (`QueueDoesNotExist`) and the front end supplies the query code
//! (`AWS.SimpleQueueService.NonExistentQueue`) for each protocol.
//!
//! SQS checks its own input (`validate_input: false`) because it reports bad input with its
//! own codes (`MissingParameter`, `InvalidParameterValue`, `InvalidAttributeName`), not the
//! generic `ValidationException`.
//!
//! - [`queues`]: queue names, URLs and attributes; CreateQueue, GetQueueUrl,
//!   Get/SetQueueAttributes, DeleteQueue, ListQueues, PurgeQueue.
//! - [`messages`]: SendMessage, ReceiveMessage (with long polling, dead-letter redrive and
//!   `ReceiveRequestAttemptId`), DeleteMessage, ChangeMessageVisibility.
//! - [`batch`]: SendMessageBatch, DeleteMessageBatch, ChangeMessageVisibilityBatch and the
//!   checks every batch shares.
//! - [`moves`]: dead-letter sources, message move tasks (redrive out of a dead-letter
//!   queue) and deliveries from other services through the event bus.
//! - [`policy`]: tags, and AddPermission/RemovePermission kept in the queue's `Policy`.
//! - [`attributes`]: message attributes, their validation and their MD5 digests.
//! - [`metrics`]: the `AWS/SQS` metrics, counted as they happen and sampled.
//! - [`store`]: the tables, and every query over them.

mod access;
mod attributes;
mod batch;
mod messages;
mod metrics;
mod moves;
mod peek;
mod policy;
mod queues;
mod store;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use roto_core::access::{Access, Principal};
use roto_core::events::{DeliveryError, Event};
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use tokio::sync::Notify;

static SPEC: ServiceSpec = ServiceSpec {
    name: "sqs",
    model: "sqs",
    query_model: Some("sqs-query"),
    signing_names: &["sqs"],
    target_prefix: Some("AmazonSQS"),
    query_version: Some("2012-11-05"),
    crc32_responses: false,
    validate_input: false,
};

/// How long a FIFO receive's `ReceiveRequestAttemptId` answers with the same messages.
const ATTEMPT_WINDOW_MS: EpochMillis = 5 * 60 * 1000;

/// FIFO receives by (queue id, attempt id): when they happened and what they returned.
type Attempts = HashMap<(i64, String), (EpochMillis, Vec<Value>)>;

/// Deletion times by (account, region, queue name).
type Deleted = HashMap<(String, String, String), EpochMillis>;

/// SQS.
pub struct Sqs {
    env: Arc<Env>,
    /// One wake-up per queue (by row id) for long-polling receivers.
    waiters: Mutex<HashMap<i64, Arc<Notify>>>,
    /// Recent FIFO receives that named a `ReceiveRequestAttemptId`.
    attempts: Mutex<Attempts>,
    /// The last PurgeQueue of each queue (by row id).
    purges: Mutex<HashMap<i64, EpochMillis>>,
    /// Recent deletions, when recently deleted names are held back.
    deleted: Option<Mutex<Deleted>>,
}

/// Locks a mutex, surviving a poisoned one (its maps stay consistent after any panic).
fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Sqs {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Sqs> {
        env.store.migrate(store::SCHEMA)?;
        metrics::add_gauges(&env);
        let hold_deleted = std::env::var("ROTO_SQS_DELAY_RECENTLY_DELETED")
            .is_ok_and(|v| matches!(v.as_str(), "1" | "true"));
        Ok(Sqs {
            env,
            waiters: Mutex::new(HashMap::new()),
            attempts: Mutex::new(HashMap::new()),
            purges: Mutex::new(HashMap::new()),
            deleted: hold_deleted.then(|| Mutex::new(HashMap::new())),
        })
    }

    /// The wake-up that senders to queue `id` fire.
    fn waiter(&self, id: i64) -> Arc<Notify> {
        lock(&self.waiters).entry(id).or_default().clone()
    }

    /// Wakes every receiver long-polling queue `id`.
    fn wake(&self, id: i64) {
        if let Some(notify) = lock(&self.waiters).get(&id) {
            notify.notify_waiters();
        }
    }

    /// What an earlier FIFO receive with this attempt id returned, if still within its window.
    fn attempt(&self, queue_id: i64, attempt: &str) -> Option<Vec<Value>> {
        let now = now_millis();
        let mut attempts = lock(&self.attempts);
        attempts.retain(|_, (at, _)| now - *at < ATTEMPT_WINDOW_MS);
        attempts
            .get(&(queue_id, attempt.to_string()))
            .map(|(_, messages)| messages.clone())
    }

    /// Remembers what a FIFO receive with an attempt id returned.
    fn remember_attempt(&self, queue_id: i64, attempt: &str, messages: &[Value]) {
        lock(&self.attempts).insert(
            (queue_id, attempt.to_string()),
            (now_millis(), messages.to_vec()),
        );
    }

    /// Drops a queue's remembered attempts (its messages were deleted or changed).
    fn forget_attempts(&self, queue_id: i64) {
        lock(&self.attempts).retain(|(id, _), _| *id != queue_id);
    }
}

impl Service for Sqs {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
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
                "CreateQueue" => self.create_queue(ctx, input)?,
                "GetQueueUrl" => self.get_queue_url(ctx, input)?,
                "GetQueueAttributes" => self.get_queue_attributes(ctx, input)?,
                "DeleteQueue" => self.delete_queue(ctx, input)?,
                "ListQueues" => self.list_queues(ctx, input)?,
                "SendMessage" => self.send_message(ctx, input)?,
                "ReceiveMessage" => self.receive_message(ctx, input).await?,
                "DeleteMessage" => self.delete_message(ctx, input)?,
                "SetQueueAttributes" => self.set_queue_attributes(ctx, input)?,
                "PurgeQueue" => self.purge_queue(ctx, input)?,
                "ChangeMessageVisibility" => self.change_message_visibility(ctx, input)?,
                "SendMessageBatch" => self.send_message_batch(ctx, input)?,
                "DeleteMessageBatch" => self.delete_message_batch(ctx, input)?,
                "ChangeMessageVisibilityBatch" => {
                    self.change_message_visibility_batch(ctx, input)?
                }
                "TagQueue" => self.tag_queue(ctx, input)?,
                "UntagQueue" => self.untag_queue(ctx, input)?,
                "ListQueueTags" => self.list_queue_tags(ctx, input)?,
                "AddPermission" => self.add_permission(ctx, input)?,
                "RemovePermission" => self.remove_permission(ctx, input)?,
                "ListDeadLetterSourceQueues" => self.list_dead_letter_source_queues(ctx, input)?,
                "StartMessageMoveTask" => self.start_message_move_task(ctx, input)?,
                "ListMessageMoveTasks" => self.list_message_move_tasks(ctx, input)?,
                "CancelMessageMoveTask" => self.cancel_message_move_task(ctx, input)?,
                other => return Err(AwsError::not_implemented(other)),
            };
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(async move { Ok(self.accept_delivery(event)?) })
    }

    fn access(&self, ctx: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, op, input)
    }

    fn peek(&self, ctx: &Context, input: &Value) -> Option<AwsResult<Value>> {
        Some(self.peek_messages(ctx, input))
    }
}

/// `MissingParameter`: a required parameter is absent (or empty).
fn missing(parameter: &str) -> AwsError {
    AwsError::new(
        "MissingParameter",
        format!("The request must contain the parameter {parameter}."),
    )
    .with_status(400)
}

/// `InvalidParameterValue` with a free-form message.
fn invalid_parameter(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterValue", message).with_status(400)
}

/// `InvalidParameterValue` in AWS's "Value X for parameter Y is invalid. Reason: Z" form.
fn invalid_value(parameter: &str, value: impl std::fmt::Display, reason: &str) -> AwsError {
    invalid_parameter(format!(
        "Value {value} for parameter {parameter} is invalid. Reason: {reason}"
    ))
}

/// A required, non-empty string member.
fn required<'v>(input: &'v Value, name: &str) -> AwsResult<&'v str> {
    match input.str(name) {
        Some(s) if !s.is_empty() => Ok(s),
        _ => Err(missing(name)),
    }
}

/// An optional integer member within `min..=max`, else `InvalidParameterValue` with `reason`.
fn int_in(input: &Value, name: &str, min: i64, max: i64, reason: &str) -> AwsResult<Option<i64>> {
    match input.int(name) {
        Some(v) if !(min..=max).contains(&v) => Err(invalid_value(name, v, reason)),
        other => Ok(other),
    }
}

/// The string members of a list member (`AttributeNames`), empty when absent.
fn string_list<'v>(input: &'v Value, name: &str) -> Vec<&'v str> {
    input
        .get(name)
        .and_then(Value::as_list)
        .map(|l| l.iter().filter_map(Value::as_str).collect())
        .unwrap_or_default()
}

#[cfg(test)]
mod tests;
