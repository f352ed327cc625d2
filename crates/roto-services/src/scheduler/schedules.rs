//! Schedules: Create/Get/Update/Delete/ListSchedules, with the checks AWS makes on a
//! schedule's expression, time zone, dates, flexible window and target.
//!
//! UpdateSchedule replaces the whole schedule, as AWS documents: what it leaves out takes
//! its default again (state ENABLED, time zone UTC, the default retry policy, no action
//! after completion). A schedule's next occurrence is worked out whenever it is written, so
//! the firing task only reads the earliest `due`.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::groups::{check_name_prefix, no_group, page};
use super::timing::{self, Timing};
use super::{check_name, conflict, group_name, invalid, not_found, schedule_arn, Inner};
use crate::cron::Expression;

/// How far in the past a recurring schedule's StartDate may be.
const START_DATE_GRACE_MS: i64 = 5 * 60_000;

/// The retry policy a target has when it names none (AWS's defaults).
const DEFAULT_MAX_AGE_SECONDS: i64 = 86_400;
const DEFAULT_MAX_RETRIES: i64 = 185;

/// The columns [`Schedule::from_row`] reads, in order.
pub(super) const COLUMNS: &str = "account, region, grp, name, expression, timezone, start_date,
    end_date, description, state, kms_key, target, window, after_completion, created, modified,
    anchor, scheduled, due";

/// A schedule as stored.
#[derive(Debug, Clone)]
pub(super) struct Schedule {
    pub account: String,
    pub region: String,
    pub group: String,
    pub name: String,
    pub expression: String,
    pub timezone: String,
    pub start: Option<EpochMillis>,
    pub end: Option<EpochMillis>,
    pub description: Option<String>,
    pub state: String,
    pub kms_key: Option<String>,
    pub target: Value,
    pub window: Value,
    pub after_completion: String,
    pub created: EpochMillis,
    pub modified: EpochMillis,
    pub anchor: EpochMillis,
    pub scheduled: Option<EpochMillis>,
    pub due: Option<EpochMillis>,
}

fn json_column(text: &str) -> Value {
    serde_json::from_str(text)
        .map(|j| Value::from_json(&j))
        .unwrap_or_else(|_| Value::map())
}

impl Schedule {
    pub(super) fn from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Schedule> {
        let target: String = r.get(11)?;
        let window: String = r.get(12)?;
        Ok(Schedule {
            account: r.get(0)?,
            region: r.get(1)?,
            group: r.get(2)?,
            name: r.get(3)?,
            expression: r.get(4)?,
            timezone: r.get(5)?,
            start: r.get(6)?,
            end: r.get(7)?,
            description: r.get(8)?,
            state: r.get(9)?,
            kms_key: r.get(10)?,
            target: json_column(&target),
            window: json_column(&window),
            after_completion: r.get(13)?,
            created: r.get(14)?,
            modified: r.get(15)?,
            anchor: r.get(16)?,
            scheduled: r.get(17)?,
            due: r.get(18)?,
        })
    }

    /// The schedule's ARN.
    pub(super) fn arn(&self) -> String {
        schedule_arn(&self.account, &self.region, &self.group, &self.name)
    }

    /// Its timing, if its stored expression and zone still read (they were checked when
    /// written).
    pub(super) fn timing(&self) -> Option<Timing> {
        Some(Timing {
            expression: timing::parse(&self.expression)?,
            zone: timing::zone(&self.timezone)?,
            start: self.start,
            end: self.end,
            anchor: self.anchor,
        })
    }

    /// The flexible window's width in milliseconds (0 when OFF).
    pub(super) fn window_ms(&self) -> i64 {
        match self.window.str("Mode") {
            Some("FLEXIBLE") => self.window.int("MaximumWindowInMinutes").unwrap_or(0) * 60_000,
            _ => 0,
        }
    }

    /// The oldest an invocation may grow before it is dropped, in milliseconds.
    pub(super) fn max_age_ms(&self) -> i64 {
        let policy = self.target.get("RetryPolicy");
        policy
            .and_then(|p| p.int("MaximumEventAgeInSeconds"))
            .unwrap_or(DEFAULT_MAX_AGE_SECONDS)
            * 1000
    }

    /// GetSchedule's output.
    fn describe(&self) -> Value {
        Value::map()
            .with("Arn", self.arn())
            .with("Name", self.name.as_str())
            .with("GroupName", self.group.as_str())
            .with("ScheduleExpression", self.expression.as_str())
            .with("ScheduleExpressionTimezone", self.timezone.as_str())
            .with_opt("StartDate", self.start.map(Value::Timestamp))
            .with_opt("EndDate", self.end.map(Value::Timestamp))
            .with_opt("Description", self.description.as_deref())
            .with("State", self.state.as_str())
            .with("CreationDate", Value::Timestamp(self.created))
            .with("LastModificationDate", Value::Timestamp(self.modified))
            .with_opt("KmsKeyArn", self.kms_key.as_deref())
            .with("Target", self.target.clone())
            .with("FlexibleTimeWindow", self.window.clone())
            .with("ActionAfterCompletion", self.after_completion.as_str())
    }

    /// ListSchedules' summary.
    fn summary(&self) -> Value {
        Value::map()
            .with("Arn", self.arn())
            .with("Name", self.name.as_str())
            .with("GroupName", self.group.as_str())
            .with("State", self.state.as_str())
            .with("CreationDate", Value::Timestamp(self.created))
            .with("LastModificationDate", Value::Timestamp(self.modified))
            .with(
                "Target",
                Value::map().with("Arn", self.target.str("Arn").unwrap_or_default()),
            )
    }

    /// Sets when it next fires, from `from` on: the occurrence, and that plus a random
    /// offset within its flexible window. Nothing when it is disabled or has no more.
    pub(super) fn plan(&mut self, from: EpochMillis) {
        let next = match self.state.as_str() {
            "ENABLED" => self.timing().and_then(|t| t.next(from)),
            _ => None,
        };
        self.scheduled = next;
        let window = self.window_ms();
        self.due = next.map(|at| match window {
            0 => at,
            w => at + fastrand::i64(0..w),
        });
    }
}

/// `1 validation error detected` for a member that does not match its model pattern.
fn check_pattern(value: &str, member: &str, pattern: &str) -> AwsResult<()> {
    let anchored = format!("^(?:{pattern})$");
    let matches = regex_lite::Regex::new(&anchored).is_ok_and(|re| re.is_match(value));
    if matches {
        return Ok(());
    }
    Err(invalid(format!(
        "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy regular expression pattern: {pattern}"
    )))
}

/// The target as stored: the request's, with AWS's default retry policy filled in.
fn target_of(input: &Value) -> AwsResult<Value> {
    let mut target = input.get("Target").cloned().unwrap_or_else(Value::map);
    let role = target.str("RoleArn").unwrap_or_default();
    check_pattern(
        role,
        "target.roleArn",
        r"arn:aws[a-z-]*:iam::\d{12}:role\/[\w+=,.@\/-]+",
    )?;
    if let Some(dlq) = target.get("DeadLetterConfig").and_then(|d| d.str("Arn")) {
        check_pattern(
            dlq,
            "target.deadLetterConfig.arn",
            r"arn:aws(-[a-z]+)?:sqs:[a-z0-9\-]+:\d{12}:[a-zA-Z0-9\-_]+",
        )?;
    }
    let policy = target
        .get("RetryPolicy")
        .cloned()
        .unwrap_or_else(Value::map);
    let policy = Value::map()
        .with(
            "MaximumEventAgeInSeconds",
            policy
                .int("MaximumEventAgeInSeconds")
                .unwrap_or(DEFAULT_MAX_AGE_SECONDS),
        )
        .with(
            "MaximumRetryAttempts",
            policy
                .int("MaximumRetryAttempts")
                .unwrap_or(DEFAULT_MAX_RETRIES),
        );
    target.insert("RetryPolicy", policy);
    Ok(target)
}

/// The flexible time window, checked.
fn window_of(input: &Value) -> AwsResult<Value> {
    let window = input
        .get("FlexibleTimeWindow")
        .cloned()
        .unwrap_or_else(Value::map);
    let max = window.int("MaximumWindowInMinutes");
    match (window.str("Mode"), max) {
        (Some("FLEXIBLE"), None) => Err(invalid(
            "MaximumWindowInMinutes must be provided when the FlexibleTimeWindow Mode is FLEXIBLE.",
        )),
        (Some("OFF"), Some(_)) => Err(invalid(
            "MaximumWindowInMinutes can only be provided when the FlexibleTimeWindow Mode is FLEXIBLE.",
        )),
        _ => Ok(window),
    }
}

/// A schedule read from a Create or Update request, checked, not yet planned.
fn schedule_of(ctx: &Context, input: &Value, group: &str, now: EpochMillis) -> AwsResult<Schedule> {
    let name = input.str("Name").unwrap_or_default();
    check_name(name, "name")?;
    let expression = input.str("ScheduleExpression").unwrap_or_default();
    let parsed = timing::parse(expression)
        .ok_or_else(|| invalid(format!("Invalid Schedule Expression {expression}.")))?;
    let timezone = input.str("ScheduleExpressionTimezone").unwrap_or("UTC");
    if timing::zone(timezone).is_none() {
        return Err(invalid(format!(
            "Invalid Schedule Expression Timezone {timezone}."
        )));
    }
    let start = input.get("StartDate").and_then(timestamp);
    let end = input.get("EndDate").and_then(timestamp);
    check_dates(&parsed, start, end, now)?;
    let kms_key = input.str("KmsKeyArn");
    if let Some(key) = kms_key {
        check_pattern(
            key,
            "kmsKeyArn",
            r"arn:aws[a-z-]*:kms:[a-z0-9\-]+:\d{12}:(key|alias)\/[0-9a-zA-Z-_]*",
        )?;
    }
    Ok(Schedule {
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        group: group.to_string(),
        name: name.to_string(),
        expression: expression.to_string(),
        timezone: timezone.to_string(),
        start,
        end,
        description: input.str("Description").map(str::to_string),
        state: input.str("State").unwrap_or("ENABLED").to_string(),
        kms_key: kms_key.map(str::to_string),
        target: target_of(input)?,
        window: window_of(input)?,
        after_completion: input
            .str("ActionAfterCompletion")
            .unwrap_or("NONE")
            .to_string(),
        created: now,
        modified: now,
        anchor: start.unwrap_or(now),
        scheduled: None,
        due: None,
    })
}

fn timestamp(value: &Value) -> Option<EpochMillis> {
    match value {
        Value::Timestamp(t) => Some(*t),
        _ => None,
    }
}

/// AWS's checks of StartDate and EndDate on a recurring schedule.
fn check_dates(
    expression: &Expression,
    start: Option<EpochMillis>,
    end: Option<EpochMillis>,
    now: EpochMillis,
) -> AwsResult<()> {
    if matches!(expression, Expression::At(_)) {
        return Ok(());
    }
    if start.is_some_and(|s| s < now - START_DATE_GRACE_MS) {
        return Err(invalid(
            "The StartDate you specify cannot be earlier than 5 minutes ago.",
        ));
    }
    if let (Some(s), Some(e)) = (start, end) {
        if e <= s {
            return Err(invalid("The StartDate must come before the EndDate."));
        }
    }
    Ok(())
}

fn no_schedule(name: &str) -> AwsError {
    not_found(format!("Schedule {name} does not exist."))
}

impl Inner {
    /// The schedule `name` in `group`, if it exists.
    pub(super) fn find_schedule(
        &self,
        ctx: &Context,
        group: &str,
        name: &str,
    ) -> AwsResult<Option<Schedule>> {
        self.read(|c| {
            c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM scheduler_schedules
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4"
            ))?
            .query_row([&ctx.account, &ctx.region, group, name], Schedule::from_row)
            .optional()
        })
    }

    /// Writes a schedule (inserting or replacing it) and wakes the firing task.
    pub(super) fn save(&self, s: &Schedule) -> AwsResult<()> {
        self.store()?.with(|c| {
            c.execute_cached(
                &format!(
                    "INSERT OR REPLACE INTO scheduler_schedules ({COLUMNS})
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15,
                             ?16, ?17, ?18, ?19)"
                ),
                rusqlite::params![
                    s.account,
                    s.region,
                    s.group,
                    s.name,
                    s.expression,
                    s.timezone,
                    s.start,
                    s.end,
                    s.description,
                    s.state,
                    s.kms_key,
                    s.target.to_json().to_string(),
                    s.window.to_json().to_string(),
                    s.after_completion,
                    s.created,
                    s.modified,
                    s.anchor,
                    s.scheduled,
                    s.due,
                ],
            )
        })?;
        self.wake();
        Ok(())
    }

    pub(super) fn create_schedule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_name(input, "GroupName")?;
        let now = now_millis();
        let mut schedule = schedule_of(ctx, input, &group, now)?;
        if !self.group_exists(ctx, &group)? {
            return Err(no_group(&group));
        }
        if self.find_schedule(ctx, &group, &schedule.name)?.is_some() {
            return Err(conflict(format!(
                "Schedule {} already exists.",
                schedule.name
            )));
        }
        schedule.plan(now);
        self.save(&schedule)?;
        Ok(Value::map().with("ScheduleArn", schedule.arn()))
    }

    pub(super) fn update_schedule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let group = group_name(input, "GroupName")?;
        let now = now_millis();
        let mut schedule = schedule_of(ctx, input, &group, now)?;
        let old = self
            .find_schedule(ctx, &group, &schedule.name)?
            .ok_or_else(|| no_schedule(&schedule.name))?;
        schedule.created = old.created;
        schedule.plan(now);
        self.save(&schedule)?;
        Ok(Value::map().with("ScheduleArn", schedule.arn()))
    }

    pub(super) fn get_schedule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name, "name")?;
        let group = group_name(input, "GroupName")?;
        let schedule = self
            .find_schedule(ctx, &group, name)?
            .ok_or_else(|| no_schedule(name))?;
        Ok(schedule.describe())
    }

    pub(super) fn delete_schedule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        check_name(name, "name")?;
        let group = group_name(input, "GroupName")?;
        let deleted = self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM scheduler_schedules
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND name = ?4",
                [&ctx.account, &ctx.region, &group, name],
            )
        })?;
        if deleted == 0 {
            return Err(no_schedule(name));
        }
        self.wake();
        Ok(Value::map())
    }

    pub(super) fn list_schedules(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        check_name_prefix(input)?;
        let group = input.str("GroupName");
        if let Some(g) = group {
            check_name(g, "groupName")?;
            if !self.group_exists(ctx, g)? {
                return Err(no_group(g));
            }
        }
        let prefix = input.str("NamePrefix").unwrap_or_default();
        let state = input.str("State");
        let schedules: Vec<Schedule> = self.read(|c| {
            let mut stmt = c.prepare_cached(&format!(
                "SELECT {COLUMNS} FROM scheduler_schedules
                 WHERE account = ?1 AND region = ?2 ORDER BY name, grp"
            ))?;
            let rows = stmt.query_map([&ctx.account, &ctx.region], Schedule::from_row)?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?;
        let items: Vec<Value> = schedules
            .iter()
            .filter(|s| group.is_none_or(|g| s.group == g))
            .filter(|s| s.name.starts_with(prefix))
            .filter(|s| state.is_none_or(|st| s.state == st))
            .map(Schedule::summary)
            .collect();
        let (page, next) = page(items, input)?;
        Ok(Value::map()
            .with("Schedules", Value::List(page))
            .with_opt("NextToken", next))
    }
}
