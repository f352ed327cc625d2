//! The firing task, invocations and dead letters.
//!
//! One task per server fires due schedules: it reads the earliest `due`, sleeps on the
//! server clock until then (waking early when the clock is advanced or a schedule changes),
//! and fires every schedule whose `due` has come, one at a time in `due` order, so an
//! advance of the clock across many occurrences fires each of them once, in order. Firing
//! an occurrence plans the next one in the same row write. Occurrences older than the
//! schedule's MaximumEventAgeInSeconds when the clock reaches them are skipped, as AWS would
//! drop them; so an advance of a year costs at most a day of occurrences per schedule.
//!
//! An invocation is an event on the bus for `scheduler` itself (target: the target's ARN),
//! with as many attempts as RetryPolicy's MaximumRetryAttempts allows; each attempt
//! replaces the context attributes (the attempt number among them) and makes the target's
//! call through the dispatcher. A caller's fault (a queue that does not exist) is not
//! retried, throttling and service faults are, and an attempt made after the event's
//! MaximumEventAgeInSeconds fails for good. The last failure sends the dead-letter message
//! to the target's DeadLetterConfig queue: the input as its body, with the attributes
//! `ERROR_CODE`, `ERROR_MESSAGE`, `EXECUTION_ID`, `SCHEDULE_ARN`, `SCHEDULED_TIME` and
//! `TARGET_ARN`.
//!
//! On a persistent store the task starts at start-up when schedules exist. Occurrences that
//! fell due while the server was stopped are not fired: each schedule resumes with its
//! first occurrence from the restart on (AWS's service does not stop, so nothing there
//! tells what a late start should fire; firing a backlog at start-up would surprise more).

use std::sync::Arc;

use roto_core::dispatch::new_request_id;
use roto_core::events::{DeliveryError, Event};
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use crate::clock_task::stored_table;

use super::schedules::{Schedule, COLUMNS};
use super::targets::{self, iso_seconds};
use super::{Attempts, Inner};

/// The kind of an invocation on the bus, as the trace shows it.
const INVOKE: &str = "scheduler:Invoke";
/// The kind of a dead-letter message on the bus.
const DEAD_LETTER: &str = "scheduler:DeadLetter";

/// Starts the firing task (once), if a runtime is running.
pub(super) fn start(inner: &Arc<Inner>) {
    inner.clock.start(inner, "scheduler", Inner::fire_due);
}

/// At start-up on a persistent store that holds schedules: plans each from now on and
/// starts the task. Nothing in memory, nor on a store that never held a schedule.
pub(super) fn resume(inner: &Arc<Inner>) -> AwsResult<()> {
    if !stored_table(&inner.env, "scheduler_schedules")? {
        return Ok(());
    }
    let now = now_millis();
    for mut schedule in inner.overdue(now)? {
        schedule.plan(now);
        inner.replan(&schedule)?;
    }
    if inner.next_due()?.is_some() {
        start(inner);
    }
    Ok(())
}

impl Inner {
    /// Wakes the firing task: a schedule changed.
    pub(super) fn wake(&self) {
        self.clock.wake();
    }

    /// The earliest `due` of any schedule.
    fn next_due(&self) -> AwsResult<Option<EpochMillis>> {
        self.read(|c| {
            c.query_row_cached("SELECT MIN(due) FROM scheduler_schedules", [], |r| r.get(0))
        })
    }

    /// Schedules due before `now`.
    fn overdue(&self, now: EpochMillis) -> AwsResult<Vec<Schedule>> {
        self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM scheduler_schedules WHERE due < ?1"
            ))?;
            let rows = stmt.query_map([now], Schedule::from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })
    }

    /// The schedule due first, if it is due at `now`.
    fn first_due(&self, now: EpochMillis) -> AwsResult<Option<Schedule>> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM scheduler_schedules WHERE due <= ?1
                 ORDER BY due, account, region, grp, name LIMIT 1"
            ))?
            .query_row([now], Schedule::from_row)
            .optional()
        })
    }

    /// Fires every occurrence due at `now`, in order; returns the next `due`.
    fn fire_due(&self, now: EpochMillis) -> AwsResult<Option<EpochMillis>> {
        while let Some(schedule) = self.first_due(now)? {
            self.fire(schedule, now)?;
        }
        self.next_due()
    }

    /// Writes a schedule's next occurrence, unless it changed since it was read.
    fn replan(&self, s: &Schedule) -> AwsResult<()> {
        self.store()?.with(|c| {
            c.execute_cached(
                "UPDATE scheduler_schedules SET scheduled = ?6, due = ?7
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4
                   AND modified = ?5",
                rusqlite::params![
                    s.account,
                    s.region,
                    s.group,
                    s.name,
                    s.modified,
                    s.scheduled,
                    s.due
                ],
            )
        })?;
        Ok(())
    }

    /// Invokes one occurrence and plans the next (or completes the schedule).
    fn fire(&self, mut schedule: Schedule, now: EpochMillis) -> AwsResult<()> {
        let scheduled = schedule.scheduled.or(schedule.due).unwrap_or(now);
        self.publish_invocation(&schedule, scheduled);
        schedule.plan((scheduled + 1).max(now - schedule.max_age_ms()));
        if schedule.due.is_some() || schedule.after_completion != "DELETE" {
            return self.replan(&schedule);
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM scheduler_schedules
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4
                   AND modified = ?5",
                rusqlite::params![
                    schedule.account,
                    schedule.region,
                    schedule.group,
                    schedule.name,
                    schedule.modified
                ],
            )
        })?;
        Ok(())
    }

    fn publish_invocation(&self, schedule: &Schedule, scheduled: EpochMillis) {
        let retries = schedule
            .target
            .get("RetryPolicy")
            .and_then(|p| p.int("MaximumRetryAttempts"))
            .unwrap_or(0);
        let payload = Value::map()
            .with("ScheduleArn", schedule.arn())
            .with("ScheduledTime", scheduled)
            .with("ExecutionId", new_request_id())
            .with("MaxAgeMs", schedule.max_age_ms())
            .with("Target", schedule.target.clone());
        self.env.bus.publish(Event {
            kind: INVOKE.into(),
            source_service: "scheduler".into(),
            source: schedule.arn(),
            target_service: "scheduler".into(),
            target: schedule.target.str("Arn").unwrap_or_default().to_string(),
            account: schedule.account.clone(),
            region: schedule.region.clone(),
            payload,
            max_attempts: u32::try_from(retries + 1).unwrap_or(1),
        });
    }

    /// Notes a failed attempt's error for the dead-letter message.
    fn note_failure(&self, execution: &str, code: &str, message: &str) {
        let mut attempts = self.attempts();
        let entry = attempts.entry(execution.to_string()).or_default();
        entry.code = code.to_string();
        entry.message = message.to_string();
    }

    /// One attempt of an invocation (or the sending of a dead letter).
    pub(super) async fn invoke(&self, event: &Event) -> Result<(), DeliveryError> {
        if event.kind == DEAD_LETTER {
            return self
                .send(event, "sqs", "SendMessage", event.payload.clone())
                .await;
        }
        let p = &event.payload;
        let execution = p.str("ExecutionId").unwrap_or_default();
        let scheduled = p.int("ScheduledTime").unwrap_or_default();
        let attempt = {
            let mut attempts = self.attempts();
            let entry = attempts.entry(execution.to_string()).or_default();
            entry.made += 1;
            entry.made
        };
        if now_millis() - scheduled > p.int("MaxAgeMs").unwrap_or(i64::MAX) {
            let message = "The event is older than the retry policy's MaximumEventAgeInSeconds.";
            self.note_failure(execution, "MaximumEventAgeExceeded", message);
            return Err(DeliveryError::permanent(message));
        }
        let target = p.get("Target").cloned().unwrap_or_else(Value::map);
        let ctx = targets::Context {
            schedule_arn: p.str("ScheduleArn").unwrap_or_default(),
            scheduled_time: scheduled,
            execution_id: execution,
            attempt,
        };
        let input = targets::substitute(target.str("Input").unwrap_or("{}"), &ctx);
        let call = targets::call(&target, &input).map_err(|e| {
            self.note_failure(execution, "ValidationException", &e);
            DeliveryError::permanent(e)
        })?;
        let result = self
            .send(event, call.service, &call.operation, call.input)
            .await;
        if result.is_ok() {
            self.attempts().remove(execution);
        }
        result
    }

    /// Makes one call as the event's account, noting a failure's code and message.
    async fn send(
        &self,
        event: &Event,
        service: &str,
        operation: &str,
        input: Value,
    ) -> Result<(), DeliveryError> {
        let execution = event.payload.str("ExecutionId").unwrap_or_default();
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| DeliveryError::from("the dispatcher is not running".to_string()))?;
        let ctx = Context {
            account: event.account.clone(),
            region: event.region.clone(),
            access_key: None,
            request_id: new_request_id(),
            host: String::new(),
        };
        let error = match dispatcher.call(&ctx, service, operation, input).await {
            Ok(out) if out.int("FailedEntryCount").unwrap_or(0) > 0 => failed_entry(&out),
            Ok(_) => return Ok(()),
            Err(e) => e,
        };
        if !execution.is_empty() {
            self.note_failure(execution, &error.code, &error.message);
        }
        let message = format!("{service} {operation}: {}: {}", error.code, error.message);
        let retryable = !error.sender_fault || error.code.contains("Throttl");
        Err(DeliveryError { message, retryable })
    }

    /// After an invocation's last failed attempt: the dead-letter message, if the target
    /// has a dead-letter queue.
    pub(super) fn dead_letter(&self, event: &Event, error: &str) {
        if event.kind != INVOKE {
            return;
        }
        let p = &event.payload;
        let execution = p.str("ExecutionId").unwrap_or_default();
        let noted: Attempts = self.attempts().remove(execution).unwrap_or_default();
        let target = p.get("Target").cloned().unwrap_or_else(Value::map);
        let Some(queue) = target.get("DeadLetterConfig").and_then(|d| d.str("Arn")) else {
            return;
        };
        let (code, message) = match noted.code.is_empty() {
            true => ("DeliveryFailed", error),
            false => (noted.code.as_str(), noted.message.as_str()),
        };
        let attribute = |v: &str| {
            Value::map()
                .with("DataType", "String")
                .with("StringValue", v)
        };
        let attributes = Value::map()
            .with("ERROR_CODE", attribute(code))
            .with("ERROR_MESSAGE", attribute(message))
            .with("EXECUTION_ID", attribute(execution))
            .with(
                "SCHEDULE_ARN",
                attribute(p.str("ScheduleArn").unwrap_or_default()),
            )
            .with(
                "SCHEDULED_TIME",
                attribute(&iso_seconds(p.int("ScheduledTime").unwrap_or_default())),
            )
            .with(
                "TARGET_ARN",
                attribute(target.str("Arn").unwrap_or_default()),
            );
        let parts: Vec<&str> = queue.splitn(6, ':').collect();
        let [_, _, _, region, account, name] = parts[..] else {
            return;
        };
        let payload = Value::map()
            .with(
                "QueueUrl",
                format!("https://sqs.{region}.amazonaws.com/{account}/{name}"),
            )
            .with("MessageBody", target.str("Input").unwrap_or("{}"))
            .with("MessageAttributes", attributes);
        self.env.bus.publish(Event {
            kind: DEAD_LETTER.into(),
            source_service: "scheduler".into(),
            source: p.str("ScheduleArn").unwrap_or_default().to_string(),
            target_service: "scheduler".into(),
            target: queue.to_string(),
            account: account.to_string(),
            region: region.to_string(),
            payload,
            max_attempts: 3,
        });
    }
}

/// PutEvents' first failed entry as an error.
fn failed_entry(out: &Value) -> AwsError {
    let entry = out
        .get("Entries")
        .and_then(Value::as_list)
        .and_then(|l| l.iter().find(|e| e.str("ErrorCode").is_some()));
    AwsError::new(
        entry
            .and_then(|e| e.str("ErrorCode"))
            .unwrap_or("FailedEntry")
            .to_string(),
        entry
            .and_then(|e| e.str("ErrorMessage"))
            .unwrap_or("PutEvents failed an entry")
            .to_string(),
    )
}
