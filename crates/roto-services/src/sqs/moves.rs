//! Dead-letter queues seen from the other side, and messages arriving from elsewhere.
//!
//! - ListDeadLetterSourceQueues: the queues whose redrive policy targets a queue.
//! - StartMessageMoveTask / ListMessageMoveTasks / CancelMessageMoveTask: redrive out of a
//!   dead-letter queue, to a named queue or back to each message's source. Roto moves the
//!   messages when the task starts, so a task is `COMPLETED` as soon as it is listed (AWS
//!   moves at a bounded rate; the end state is the same).
//! - Deliveries: SNS, S3 and EventBridge enqueue through the event bus. An event's target
//!   is the queue ARN and its payload a SendMessage input without `QueueUrl`
//!   (`MessageBody`, `MessageAttributes`, `MessageGroupId`, `MessageDeduplicationId`), plus
//!   an optional `SenderId`.

use base64::Engine;
use roto_core::dispatch::new_request_id;
use roto_core::events::Event;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::queues::{parse_queue_arn, queue_url, Page};
use super::store::{self, MoveTask, Queue};
use super::{int_in, invalid_parameter, required, Sqs};

fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new("ResourceNotFoundException", message).with_status(404)
}

/// The source queue ARN a task handle was issued for.
fn source_of_handle(handle: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(handle)
        .ok()?;
    let json: serde_json::Value = serde_json::from_slice(&bytes).ok()?;
    json["sourceArn"].as_str().map(str::to_string)
}

/// One task as the `ListMessageMoveTasksResultEntry` shape.
fn task_output(task: &MoveTask) -> Value {
    Value::map()
        .with_opt(
            "TaskHandle",
            (task.status == "RUNNING").then(|| task.handle.clone()),
        )
        .with("Status", task.status.as_str())
        .with("SourceArn", task.source_arn.as_str())
        .with_opt("DestinationArn", task.destination_arn.clone())
        .with_opt("MaxNumberOfMessagesPerSecond", task.rate)
        .with("ApproximateNumberOfMessagesMoved", task.moved)
        .with("ApproximateNumberOfMessagesToMove", task.to_move)
        .with("StartedTimestamp", task.started)
}

impl Sqs {
    /// The queue an ARN names, if it exists.
    fn queue_by_arn(&self, arn: &str) -> AwsResult<Option<Queue>> {
        let Some((account, region, name)) = parse_queue_arn(arn) else {
            return Ok(None);
        };
        self.env
            .store
            .with(|c| store::find_queue(c, account, region, name).map_err(AwsError::from))
    }

    pub(super) fn list_dead_letter_source_queues(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let queue = self.queue_of(ctx, input)?;
        let page = Page::of(input)?;
        let names = self.env.store.with(|c| {
            store::dead_letter_sources(
                c,
                &queue.account,
                &queue.region,
                &queue.arn(),
                &page.after,
                page.limit + 1,
            )
            .map_err(AwsError::from)
        })?;
        let (names, out) = page.finish(names);
        let urls: Vec<Value> = names
            .iter()
            .map(|n| Value::String(queue_url(ctx, &queue.account, n)))
            .collect();
        Ok(out.with("queueUrls", urls))
    }

    pub(super) fn start_message_move_task(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let source_arn = required(input, "SourceArn")?;
        let source = self.queue_by_arn(source_arn)?.ok_or_else(|| {
            not_found("The resource that you specified for the SourceArn parameter doesn't exist.")
        })?;
        let rate = int_in(
            input,
            "MaxNumberOfMessagesPerSecond",
            1,
            500,
            "Must be between 1 and 500.",
        )?;
        let destination_arn = input.str("DestinationArn").filter(|a| !a.is_empty());
        let destination = match destination_arn {
            Some(arn) => Some(self.queue_by_arn(arn)?.ok_or_else(|| {
                not_found(
                    "The resource that you specified for the DestinationArn parameter doesn't exist.",
                )
            })?),
            None => None,
        };
        let now = now_millis();
        let handle = base64::engine::general_purpose::STANDARD.encode(
            serde_json::json!({"taskId": new_request_id(), "sourceArn": source_arn}).to_string(),
        );
        let mut woken = Vec::new();
        self.env.store.transaction(|tx| {
            let sources = store::dead_letter_sources(
                tx,
                &source.account,
                &source.region,
                &source.arn(),
                "",
                1,
            )?;
            if sources.is_empty() {
                return Err(invalid_parameter(
                    "Source queue must be configured as a Dead Letter Queue.",
                ));
            }
            let messages = store::all_messages(tx, source.id)?;
            let mut moved = 0;
            for message in &messages {
                let target = match (&destination, &message.dead_letter_source) {
                    (Some(d), _) => Some(d.clone()),
                    (None, Some(arn)) => match parse_queue_arn(arn) {
                        Some((a, r, n)) => store::find_queue(tx, a, r, n)?,
                        None => None,
                    },
                    (None, None) => None,
                };
                let Some(target) = target else { continue };
                let retention = target.int_attribute("MessageRetentionPeriod") * 1000;
                store::move_message(tx, message.seq, target.id, now, now + retention)?;
                woken.push(target.id);
                moved += 1;
            }
            store::insert_move_task(
                tx,
                &ctx.account,
                &ctx.region,
                &MoveTask {
                    handle: handle.clone(),
                    source_arn: source_arn.to_string(),
                    destination_arn: destination_arn.map(str::to_string),
                    rate,
                    status: "COMPLETED".into(),
                    moved,
                    to_move: messages.len() as i64,
                    started: now,
                },
            )?;
            Ok(())
        })?;
        woken.dedup();
        for id in woken {
            self.wake(id);
        }
        Ok(Value::map().with("TaskHandle", handle))
    }

    pub(super) fn list_message_move_tasks(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let source_arn = required(input, "SourceArn")?;
        if self.queue_by_arn(source_arn)?.is_none() {
            return Err(not_found(
                "The resource that you specified for the SourceArn parameter doesn't exist.",
            ));
        }
        let max = int_in(input, "MaxResults", 1, 10, "Must be between 1 and 10.")?.unwrap_or(1);
        let tasks = self.env.store.with(|c| {
            store::move_tasks(c, &ctx.account, &ctx.region, source_arn, max).map_err(AwsError::from)
        })?;
        let results: Vec<Value> = tasks.iter().map(task_output).collect();
        Ok(Value::map().with("Results", results))
    }

    pub(super) fn cancel_message_move_task(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let handle = required(input, "TaskHandle")?;
        let missing_task = || not_found("Task does not exist.");
        let source_arn = source_of_handle(handle).ok_or_else(missing_task)?;
        let tasks = self.env.store.with(|c| {
            store::move_tasks(c, &ctx.account, &ctx.region, &source_arn, i64::MAX)
                .map_err(AwsError::from)
        })?;
        let task = tasks
            .iter()
            .find(|t| t.handle == handle)
            .ok_or_else(missing_task)?;
        if task.status != "RUNNING" {
            return Err(not_found("Only active tasks can be cancelled."));
        }
        Ok(Value::map().with("ApproximateNumberOfMessagesMoved", task.moved))
    }

    /// Enqueues an event-bus delivery (see the module documentation for its form).
    pub(super) fn accept_delivery(&self, event: &Event) -> Result<(), String> {
        let queue = self
            .queue_by_arn(&event.target)
            .map_err(|e| e.message)?
            .ok_or_else(|| format!("queue {} does not exist", event.target))?;
        let sender = event.payload.str("SenderId").unwrap_or(&event.account);
        self.enqueue(&queue, sender, &event.payload)
            .map_err(|e| format!("{}: {}", e.code, e.message))?;
        self.wake(queue.id);
        Ok(())
    }
}
