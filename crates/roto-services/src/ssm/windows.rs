//! Maintenance windows with their targets and tasks, stored and answered as SSM does.
//! Windows never run here (no managed nodes to run on), so their executions are always
//! empty and an execution id is never found.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::records::{paged, Kind};
use super::Ssm;
use crate::ids;

const WINDOW: Kind<'static> = Kind::top("window");

fn window_missing(id: &str) -> AwsError {
    AwsError::new(
        "DoesNotExistException",
        format!("Maintenance window {id} does not exist"),
    )
}

fn child_missing(what: &str, id: &str, window: &str) -> AwsError {
    AwsError::new(
        "DoesNotExistException",
        format!("Maintenance window {what} {id} does not exist in maintenance window {window}"),
    )
}

fn execution_missing(id: &str) -> AwsError {
    AwsError::new(
        "DoesNotExistException",
        format!("Maintenance window execution {id} does not exist"),
    )
}

/// The members a window keeps from CreateMaintenanceWindow and UpdateMaintenanceWindow.
const WINDOW_MEMBERS: &[&str] = &[
    "Name",
    "Description",
    "StartDate",
    "EndDate",
    "Schedule",
    "ScheduleTimezone",
    "ScheduleOffset",
    "Duration",
    "Cutoff",
    "AllowUnassociatedTargets",
    "Enabled",
];
/// The members UpdateMaintenanceWindow with `Replace` leaves unset when not given.
const WINDOW_OPTIONAL: &[&str] = &[
    "Description",
    "StartDate",
    "EndDate",
    "ScheduleTimezone",
    "ScheduleOffset",
];
const TARGET_MEMBERS: &[&str] = &[
    "ResourceType",
    "Targets",
    "OwnerInformation",
    "Name",
    "Description",
];
const TASK_MEMBERS: &[&str] = &[
    "Targets",
    "TaskArn",
    "ServiceRoleArn",
    "TaskType",
    "TaskParameters",
    "TaskInvocationParameters",
    "Priority",
    "MaxConcurrency",
    "MaxErrors",
    "LoggingInfo",
    "Name",
    "Description",
    "CutoffBehavior",
    "AlarmConfiguration",
];

/// The members UpdateMaintenanceWindowTask with `Replace` leaves unset when not given.
const TASK_OPTIONAL: &[&str] = &[
    "Targets",
    "TaskParameters",
    "TaskInvocationParameters",
    "LoggingInfo",
    "Name",
    "Description",
    "AlarmConfiguration",
];

/// A window's targets or tasks: their record kind and the member naming one.
#[derive(Clone, Copy)]
struct Child {
    kind: &'static str,
    id_member: &'static str,
}

const TARGET: Child = Child {
    kind: "target",
    id_member: "WindowTargetId",
};
const TASK: Child = Child {
    kind: "task",
    id_member: "WindowTaskId",
};

/// Copies each of `members` that `input` sets onto `record`; with `replace`, each of
/// `optional` that it does not set is removed.
pub(super) fn merge(
    record: &mut Value,
    input: &Value,
    members: &[&str],
    optional: &[&str],
    replace: bool,
) {
    for name in members {
        match input.get(name) {
            Some(v) => record.insert(*name, v.clone()),
            None if replace && optional.contains(name) => {
                record.remove(name);
            }
            None => {}
        }
    }
}

fn check_cutoff(window: &Value) -> AwsResult<()> {
    let (duration, cutoff) = (
        window.int("Duration").unwrap_or(0),
        window.int("Cutoff").unwrap_or(0),
    );
    if cutoff >= duration {
        return Err(AwsError::validation(
            "The cutoff time must be less than the duration of the maintenance window.",
        ));
    }
    Ok(())
}

fn check_schedule(schedule: &str) -> AwsResult<()> {
    let known = ["cron(", "rate(", "at("];
    if known.iter().any(|p| schedule.starts_with(p)) && schedule.ends_with(')') {
        return Ok(());
    }
    Err(AwsError::validation(format!(
        "Invalid schedule expression: {schedule}"
    )))
}

impl Ssm {
    fn window(&self, ctx: &Context, id: &str) -> AwsResult<Value> {
        self.record(ctx, WINDOW, id)?
            .ok_or_else(|| window_missing(id))
    }

    pub(super) fn create_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        check_schedule(input.str("Schedule").unwrap_or_default())?;
        let id = format!("mw-{}", ids::hex(17));
        let now = Value::Timestamp(now_millis());
        let mut window = Value::map()
            .with("WindowId", id.as_str())
            .with("Enabled", true)
            .with("CreatedDate", now.clone())
            .with("ModifiedDate", now);
        merge(&mut window, input, WINDOW_MEMBERS, &[], false);
        check_cutoff(&window)?;
        self.save(ctx, WINDOW, &id, &window)?;
        self.store_tags(ctx, "MaintenanceWindow", &id, input)?;
        Ok(Value::map().with("WindowId", id))
    }

    pub(super) fn get_maintenance_window(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("WindowId").unwrap_or_default();
        self.record_as(ctx, WINDOW, id, "GetMaintenanceWindowResult")?
            .ok_or_else(|| window_missing(id))
    }

    pub(super) fn update_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("WindowId").unwrap_or_default();
        let mut window = self.window(ctx, id)?;
        if let Some(schedule) = input.str("Schedule") {
            check_schedule(schedule)?;
        }
        let replace = input.bool("Replace").unwrap_or(false);
        merge(&mut window, input, WINDOW_MEMBERS, WINDOW_OPTIONAL, replace);
        check_cutoff(&window)?;
        window.insert("ModifiedDate", Value::Timestamp(now_millis()));
        self.save(ctx, WINDOW, id, &window)?;
        self.record_as(ctx, WINDOW, id, "UpdateMaintenanceWindowResult")?
            .ok_or_else(|| window_missing(id))
    }

    pub(super) fn delete_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("WindowId").unwrap_or_default();
        self.forget(ctx, WINDOW, id)?;
        self.forget_children(ctx, id)?;
        self.drop_tags(ctx, "MaintenanceWindow", id)?;
        Ok(Value::map().with("WindowId", id))
    }

    pub(super) fn describe_maintenance_windows(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let windows = self.records_as(ctx, WINDOW, "MaintenanceWindowIdentity")?;
        let windows = super::filters::keep(windows, input.get("Filters"), |w, key| match key {
            "Name" => w.str("Name").map(str::to_string),
            "Enabled" => w.bool("Enabled").map(|b| b.to_string()),
            _ => None,
        })?;
        paged(input, windows, "WindowIdentities", 10)
    }

    pub(super) fn register_target_with_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        self.window(ctx, window)?;
        let id = ids::uuid();
        let mut target = Value::map()
            .with("WindowId", window)
            .with("WindowTargetId", id.as_str());
        merge(&mut target, input, TARGET_MEMBERS, &[], false);
        self.save(ctx, Kind::under("target", window), &id, &target)?;
        Ok(Value::map().with("WindowTargetId", id))
    }

    pub(super) fn update_maintenance_window_target(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        let id = input.str("WindowTargetId").unwrap_or_default();
        self.window(ctx, window)?;
        let kind = Kind::under("target", window);
        let mut target = self
            .record(ctx, kind, id)?
            .ok_or_else(|| child_missing("target", id, window))?;
        let replace = input.bool("Replace").unwrap_or(false);
        merge(
            &mut target,
            input,
            TARGET_MEMBERS,
            &["OwnerInformation", "Name", "Description"],
            replace,
        );
        self.save(ctx, kind, id, &target)?;
        self.record_as(ctx, kind, id, "UpdateMaintenanceWindowTargetResult")?
            .ok_or_else(|| child_missing("target", id, window))
    }

    pub(super) fn deregister_target_from_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.deregister(ctx, input, TARGET)
    }

    pub(super) fn describe_maintenance_window_targets(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let targets = self.children(ctx, input, TARGET, "MaintenanceWindowTarget")?;
        let targets = super::filters::keep(targets, input.get("Filters"), |t, key| match key {
            "WindowTargetId" | "OwnerInformation" | "ResourceType" => {
                t.str(key).map(str::to_string)
            }
            _ => None,
        })?;
        paged(input, targets, "Targets", 10)
    }

    pub(super) fn register_task_with_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        self.window(ctx, window)?;
        let id = ids::uuid();
        let mut task = Value::map()
            .with("WindowId", window)
            .with("WindowTaskId", id.as_str())
            .with("Priority", 1)
            .with("CutoffBehavior", "CONTINUE_TASK");
        merge(&mut task, input, TASK_MEMBERS, &[], false);
        self.save_task(ctx, window, &id, task)?;
        Ok(Value::map().with("WindowTaskId", id))
    }

    /// Writes a task with `Type`, the name Describe gives `TaskType`.
    fn save_task(&self, ctx: &Context, window: &str, id: &str, mut task: Value) -> AwsResult<()> {
        if let Some(kind) = task.get("TaskType").cloned() {
            task.insert("Type", kind);
        }
        self.save(ctx, Kind::under("task", window), id, &task)
    }

    fn task(&self, ctx: &Context, window: &str, id: &str) -> AwsResult<Value> {
        self.window(ctx, window)?;
        self.record(ctx, Kind::under("task", window), id)?
            .ok_or_else(|| child_missing("task", id, window))
    }

    pub(super) fn get_maintenance_window_task(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        let id = input.str("WindowTaskId").unwrap_or_default();
        self.task(ctx, window, id)?;
        self.record_as(
            ctx,
            Kind::under("task", window),
            id,
            "GetMaintenanceWindowTaskResult",
        )?
        .ok_or_else(|| child_missing("task", id, window))
    }

    pub(super) fn update_maintenance_window_task(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        let id = input.str("WindowTaskId").unwrap_or_default();
        let mut task = self.task(ctx, window, id)?;
        let replace = input.bool("Replace").unwrap_or(false);
        let kept: Vec<&str> = TASK_MEMBERS
            .iter()
            .copied()
            .filter(|m| *m != "TaskType")
            .collect();
        merge(&mut task, input, &kept, TASK_OPTIONAL, replace);
        self.save_task(ctx, window, id, task)?;
        self.record_as(
            ctx,
            Kind::under("task", window),
            id,
            "UpdateMaintenanceWindowTaskResult",
        )?
        .ok_or_else(|| child_missing("task", id, window))
    }

    pub(super) fn deregister_task_from_maintenance_window(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.deregister(ctx, input, TASK)
    }

    pub(super) fn describe_maintenance_window_tasks(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let tasks = self.children(ctx, input, TASK, "MaintenanceWindowTask")?;
        let tasks = super::filters::keep(tasks, input.get("Filters"), |t, key| match key {
            "WindowTaskId" | "TaskArn" | "Type" => t.str(key).map(str::to_string),
            "Priority" => t.int(key).map(|p| p.to_string()),
            _ => None,
        })?;
        paged(input, tasks, "Tasks", 10)
    }

    /// Removes the target or task the input names from its window.
    fn deregister(&self, ctx: &Context, input: &Value, child: Child) -> AwsResult<Value> {
        let window = input.str("WindowId").unwrap_or_default();
        let id = input.str(child.id_member).unwrap_or_default();
        self.window(ctx, window)?;
        if !self.forget(ctx, Kind::under(child.kind, window), id)? {
            return Err(child_missing(child.kind, id, window));
        }
        Ok(Value::map()
            .with("WindowId", window)
            .with(child.id_member, id))
    }

    /// The targets or tasks of the input's window, read as `shape`.
    fn children(
        &self,
        ctx: &Context,
        input: &Value,
        child: Child,
        shape: &str,
    ) -> AwsResult<Vec<Value>> {
        let window = input.str("WindowId").unwrap_or_default();
        self.window(ctx, window)?;
        self.records_as(ctx, Kind::under(child.kind, window), shape)
    }

    /// The windows with a target of the input's resource type naming one of its targets.
    pub(super) fn describe_maintenance_windows_for_target(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let wanted = input
            .get("Targets")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let resource_type = input.str("ResourceType").unwrap_or_default();
        let mut found = Vec::new();
        for window in self.records_as(ctx, WINDOW, "MaintenanceWindowIdentity")? {
            let id = window.str("WindowId").unwrap_or_default().to_string();
            let targets =
                self.records_as(ctx, Kind::under("target", &id), "MaintenanceWindowTarget")?;
            let hit = targets.iter().any(|t| {
                t.str("ResourceType") == Some(resource_type)
                    && t.get("Targets")
                        .and_then(Value::as_list)
                        .is_some_and(|ts| ts.iter().any(|x| wanted.contains(x)))
            });
            if hit {
                found.push(
                    Value::map()
                        .with("WindowId", id.as_str())
                        .with_opt("Name", window.str("Name")),
                );
            }
        }
        paged(input, found, "WindowIdentities", 10)
    }
}

/// Executions never exist: a window does not run without managed nodes.
pub(super) fn execution_not_found(input: &Value) -> AwsError {
    execution_missing(input.str("WindowExecutionId").unwrap_or_default())
}
