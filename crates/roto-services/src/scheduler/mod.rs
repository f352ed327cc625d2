//! EventBridge Scheduler: schedule groups and schedules that invoke targets on the server
//! clock, over the rest-json protocol.
//!
//! A group is a row of `scheduler_groups` (the `default` group of every account and region
//! exists without one); a schedule is a row of `scheduler_schedules` that keeps, beside what
//! the API shows, when it next fires: `scheduled` (the occurrence, what
//! `<aws.scheduler.scheduled-time>` reads) and `due` (that time plus the flexible window's
//! offset). The tables are created on the first call.
//!
//! - [`groups`]: Create/Get/List/DeleteScheduleGroup and tags (groups are what AWS tags).
//! - [`schedules`]: Create/Get/Update/Delete/ListSchedules and their validation.
//! - [`timing`]: when a schedule's expression next occurs, in its time zone, between its
//!   start and end dates (the grammar is [`crate::cron`]'s, shared with EventBridge rules).
//! - [`fire`]: the task that fires due schedules in order, once per occurrence.
//! - [`targets`]: the call an invocation makes (templated and universal targets), its
//!   context attributes, and the dead-letter message.
//! - [`fuzz`]: the entry through which `crates/roto-fuzz` reaches the expressions.
//!
//! Invocations are events on the bus for `scheduler` itself, whose [`Service::deliver`]
//! makes the target's call through the dispatcher, so that every attempt is traced and
//! retried as the schedule's RetryPolicy says; the last failure sends the dead-letter
//! message. The firing task starts with the first schedule (or, on a persistent store, at
//! start-up when schedules exist), so a server that never schedules anything runs no task.

mod fire;
pub mod fuzz;
mod groups;
mod schedules;
mod targets;
mod timing;

use std::collections::HashMap;
use std::io;
use std::sync::{Arc, Mutex};

use roto_core::events::{DeliveryError, Event};
use roto_core::store::{LazySchema, Store};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

use crate::clock_task::ClockTask;

static SPEC: ServiceSpec = ServiceSpec {
    name: "scheduler",
    model: "scheduler",
    query_model: None,
    signing_names: &["scheduler"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS scheduler_groups (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    tags TEXT NOT NULL DEFAULT '[]',
    PRIMARY KEY (account, region, name)
);
CREATE TABLE IF NOT EXISTS scheduler_schedules (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    grp TEXT NOT NULL,
    name TEXT NOT NULL,
    expression TEXT NOT NULL,
    timezone TEXT NOT NULL,
    start_date INTEGER,
    end_date INTEGER,
    description TEXT,
    state TEXT NOT NULL,
    kms_key TEXT,
    target TEXT NOT NULL,
    window TEXT NOT NULL,
    after_completion TEXT NOT NULL,
    created INTEGER NOT NULL,
    modified INTEGER NOT NULL,
    anchor INTEGER NOT NULL,
    scheduled INTEGER,
    due INTEGER,
    PRIMARY KEY (account, region, grp, name)
);
CREATE INDEX IF NOT EXISTS scheduler_schedules_due ON scheduler_schedules (due)
    WHERE due IS NOT NULL;
";

/// The group every account and region has.
const DEFAULT_GROUP: &str = "default";

/// What one invocation's attempts have learnt so far: how many were made, and the last
/// error's code and message (for the dead-letter message).
#[derive(Debug, Default, Clone)]
struct Attempts {
    made: u32,
    code: String,
    message: String,
}

/// The service's state, shared with the firing task.
struct Inner {
    env: Arc<Env>,
    schema: LazySchema,
    /// The firing task, woken when a schedule is created, changed or deleted.
    clock: ClockTask,
    /// Invocations under way, by execution id.
    attempts: Mutex<HashMap<String, Attempts>>,
}

/// EventBridge Scheduler.
pub struct Scheduler {
    inner: Arc<Inner>,
}

impl Scheduler {
    /// The service; its tables are created on its first call. On a persistent store that
    /// already holds schedules, the firing task starts now.
    pub fn new(env: Arc<Env>) -> io::Result<Scheduler> {
        let scheduler = Scheduler {
            inner: Arc::new(Inner {
                env,
                schema: LazySchema::new(&[SCHEMA]),
                clock: ClockTask::default(),
                attempts: Mutex::new(HashMap::new()),
            }),
        };
        fire::resume(&scheduler.inner).map_err(|e| io::Error::other(e.message))?;
        Ok(scheduler)
    }
}

impl Inner {
    /// The store, its tables created.
    fn store(&self) -> AwsResult<&Store> {
        self.schema.store(&self.env.store)
    }

    /// Runs a read on the store, its tables created.
    fn read<T>(
        &self,
        f: impl FnOnce(&rusqlite::Connection) -> rusqlite::Result<T>,
    ) -> AwsResult<T> {
        Ok(self.store()?.read(f)?)
    }

    fn attempts(&self) -> std::sync::MutexGuard<'_, HashMap<String, Attempts>> {
        self.attempts.lock().unwrap_or_else(|p| p.into_inner())
    }

    fn dispatch(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        match operation {
            "CreateScheduleGroup" => self.create_group(ctx, input),
            "GetScheduleGroup" => self.get_group(ctx, input),
            "ListScheduleGroups" => self.list_groups(ctx, input),
            "DeleteScheduleGroup" => self.delete_group(ctx, input),
            "TagResource" => self.tag_resource(ctx, input),
            "UntagResource" => self.untag_resource(ctx, input),
            "ListTagsForResource" => self.list_tags(ctx, input),
            "CreateSchedule" => self.create_schedule(ctx, input),
            "GetSchedule" => self.get_schedule(ctx, input),
            "UpdateSchedule" => self.update_schedule(ctx, input),
            "DeleteSchedule" => self.delete_schedule(ctx, input),
            "ListSchedules" => self.list_schedules(ctx, input),
            other => Err(AwsError::not_implemented(other)),
        }
    }
}

impl Service for Scheduler {
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
            let output = self.inner.dispatch(ctx, operation, &request.input)?;
            if matches!(operation, "CreateSchedule" | "UpdateSchedule") {
                fire::start(&self.inner);
            }
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(self.inner.invoke(event))
    }

    fn delivery_failed(&self, event: &Event, error: &str) {
        self.inner.dead_letter(event, error);
    }
}

/// `ValidationException`.
fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::new("ValidationException", message).with_status(400)
}

/// `ResourceNotFoundException`.
fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new("ResourceNotFoundException", message).with_status(404)
}

/// `ConflictException`.
fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new("ConflictException", message).with_status(409)
}

/// Checks a name against the model's `[0-9a-zA-Z-_.]+`, which the generic validator does
/// not enforce, in AWS's words.
fn check_name(value: &str, member: &str) -> AwsResult<()> {
    let ok = |c: char| c.is_ascii_alphanumeric() || matches!(c, '-' | '_' | '.');
    if value.chars().all(ok) {
        return Ok(());
    }
    Err(invalid(format!(
        "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: [0-9a-zA-Z-_.]+"
    )))
}

/// A group's ARN.
fn group_arn(account: &str, region: &str, group: &str) -> String {
    format!("arn:aws:scheduler:{region}:{account}:schedule-group/{group}")
}

/// A schedule's ARN.
fn schedule_arn(account: &str, region: &str, group: &str, name: &str) -> String {
    format!("arn:aws:scheduler:{region}:{account}:schedule/{group}/{name}")
}

/// The group a request names, `default` when it names none.
fn group_name(input: &Value, member: &str) -> AwsResult<String> {
    match input.str(member) {
        Some(g) => {
            check_name(g, "groupName")?;
            Ok(g.to_string())
        }
        None => Ok(DEFAULT_GROUP.to_string()),
    }
}
