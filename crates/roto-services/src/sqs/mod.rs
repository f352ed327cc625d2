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
//!   GetQueueAttributes, DeleteQueue, ListQueues.
//! - [`messages`]: SendMessage, ReceiveMessage (with long polling and dead-letter redrive),
//!   DeleteMessage.
//! - [`attributes`]: message attributes, their validation and their MD5 digests.
//! - [`store`]: the tables, and every query over them.

mod attributes;
mod messages;
mod queues;
mod store;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

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

/// SQS.
pub struct Sqs {
    env: Arc<Env>,
    clock: fn() -> EpochMillis,
    /// One wake-up per queue (by row id) for long-polling receivers.
    waiters: Mutex<HashMap<i64, Arc<Notify>>>,
}

impl Sqs {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Sqs> {
        Sqs::with_clock(env, now_millis)
    }

    /// Creates the service with its own clock, so tests can move time without waiting.
    pub fn with_clock(env: Arc<Env>, clock: fn() -> EpochMillis) -> io::Result<Sqs> {
        env.store
            .migrate(store::SCHEMA)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(Sqs {
            env,
            clock,
            waiters: Mutex::new(HashMap::new()),
        })
    }

    fn now(&self) -> EpochMillis {
        (self.clock)()
    }

    /// The wake-up that senders to queue `id` fire.
    fn waiter(&self, id: i64) -> Arc<Notify> {
        let mut waiters = self.waiters.lock().unwrap_or_else(|p| p.into_inner());
        waiters.entry(id).or_default().clone()
    }

    /// Wakes every receiver long-polling queue `id`.
    fn wake(&self, id: i64) {
        let waiters = self.waiters.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(notify) = waiters.get(&id) {
            notify.notify_waiters();
        }
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
                other => return Err(AwsError::not_implemented(other)),
            };
            Ok(Response::new(output))
        })
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
