//! Activities: named queues of Task work that outside workers poll for, and the
//! task-token calls (SendTaskSuccess, SendTaskFailure, SendTaskHeartbeat) that answer an
//! activity task or a `.waitForTaskToken` integration.

use roto_core::store::Cached;
use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};
use serde_json::Value as Json;

use super::interpreter::tasks::is_token;
use super::interpreter::{lock, Engine, Failure, Signal};

use super::arn::{self, Target};
use super::keyset::Keyset;
use super::StepFunctions;

fn no_activity(arn: &str) -> AwsError {
    AwsError::new(
        "ActivityDoesNotExist",
        format!("Activity Does Not Exist: '{arn}'"),
    )
}

impl StepFunctions {
    /// Whether the activity exists.
    pub(super) fn activity_exists(&self, arn: &str) -> AwsResult<bool> {
        self.env.store.with(|c| {
            c.prepare_cached("SELECT 1 FROM sfn_activities WHERE arn = ?1")?
                .query_row([arn], |_| Ok(()))
                .optional()
                .map(|r| r.is_some())
                .map_err(AwsError::from)
        })
    }

    /// The activity an ARN names, or ActivityDoesNotExist.
    pub(super) fn existing_activity(
        &self,
        ctx: &Context,
        arn_text: &str,
    ) -> AwsResult<(String, i64)> {
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Activity(_)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        let found: Option<(String, i64)> = self.env.store.with(|c| {
            c.prepare_cached("SELECT name, created FROM sfn_activities WHERE arn = ?1")?
                .query_row([arn_text], |r| Ok((r.get(0)?, r.get(1)?)))
                .optional()
                .map_err(AwsError::from)
        })?;
        found
            .filter(|_| arn::in_scope(&parsed, ctx))
            .ok_or_else(|| no_activity(arn_text))
    }

    pub(super) fn create_activity(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        arn::check_name(name)?;
        let arn = arn::activity(ctx, name);
        let now = now_millis();
        let created: i64 = self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR IGNORE INTO sfn_activities (arn, account, region, name, created)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![arn, ctx.account, ctx.region, name, now],
            )?;
            c.query_row_cached(
                "SELECT created FROM sfn_activities WHERE arn = ?1",
                [&arn],
                |r| r.get(0),
            )
            .map_err(AwsError::from)
        })?;
        if created == now {
            self.set_tags(&arn, input.get("tags"))?;
        }
        Ok(Value::map()
            .with("activityArn", arn)
            .with("creationDate", Value::Timestamp(created)))
    }

    pub(super) fn describe_activity(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn_text = input.str("activityArn").unwrap_or_default();
        let (name, created) = self.existing_activity(ctx, arn_text)?;
        Ok(Value::map()
            .with("activityArn", arn_text)
            .with("name", name)
            .with("creationDate", Value::Timestamp(created)))
    }

    pub(super) fn list_activities(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let keyset = Keyset::of(input, false)?;
        let rows = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT created, rowid, arn, name FROM sfn_activities
                 WHERE account = ?1 AND region = ?2 AND (created, rowid) > (?3, ?4)
                 ORDER BY created, rowid LIMIT ?5",
            )?;
            let (key, rowid) = keyset.after;
            let params = params![ctx.account, ctx.region, key, rowid, keyset.fetch()];
            let rows = stmt.query_map(params, |r| {
                let created: i64 = r.get(0)?;
                let item = Value::map()
                    .with("activityArn", r.get::<_, String>(2)?)
                    .with("name", r.get::<_, String>(3)?)
                    .with("creationDate", Value::Timestamp(created));
                Ok((created, r.get(1)?, item))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let (items, next) = keyset.page(rows);
        Ok(Value::map()
            .with("activities", items)
            .with_opt("nextToken", next))
    }

    pub(super) fn delete_activity(&self, _ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn_text = input.str("activityArn").unwrap_or_default();
        let parsed = arn::parse(arn_text)?;
        if !matches!(parsed.target, Target::Activity(_)) {
            return Err(arn::wrong_kind(parsed.target.kind()));
        }
        self.env.store.transaction(|tx| {
            tx.execute_cached("DELETE FROM sfn_activities WHERE arn = ?1", [arn_text])?;
            tx.execute_cached("DELETE FROM sfn_tags WHERE arn = ?1", [arn_text])?;
            Ok::<_, AwsError>(())
        })?;
        Ok(Value::map())
    }
}

/// The activity tasks waiting for a worker (and the ones a worker holds).
pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS sfn_tasks (
    token TEXT PRIMARY KEY,
    activity_arn TEXT NOT NULL,
    execution_arn TEXT NOT NULL,
    scheduled INTEGER NOT NULL,
    input TEXT NOT NULL,
    created INTEGER NOT NULL,
    taken INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS sfn_tasks_activity ON sfn_tasks (activity_arn, taken, created);
";

/// How long GetActivityTask waits for a task, as AWS's long poll does.
const POLL_MILLIS: i64 = 60_000;

/// Queues an activity task for the next GetActivityTask of its activity.
pub(super) fn enqueue(
    engine: &Engine,
    activity: &str,
    token: &str,
    execution: &str,
    scheduled: i64,
    input: &Json,
) -> AwsResult<()> {
    engine.env.store.with(|c| {
        c.execute_cached(
            "INSERT INTO sfn_tasks (token, activity_arn, execution_arn, scheduled, input, created)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
            params![
                token,
                activity,
                execution,
                scheduled,
                input.to_string(),
                now_millis()
            ],
        )
        .map_err(AwsError::from)
    })?;
    engine.activity_queued.notify_waiters();
    Ok(())
}

/// Forgets an activity task once it closed.
pub(super) fn dequeue(engine: &Engine, token: &str) {
    let _ = engine
        .env
        .store
        .with(|c| c.execute_cached("DELETE FROM sfn_tasks WHERE token = ?1", [token]));
}

/// A task a worker took: its token, input, execution and scheduling event.
type Taken = (String, String, String, i64);

impl StepFunctions {
    /// Takes the oldest waiting task of an activity.
    fn take_task(&self, activity: &str) -> AwsResult<Option<Taken>> {
        self.env.store.with(|c| {
            c.query_row_cached(
                "UPDATE sfn_tasks SET taken = 1 WHERE token = (SELECT token FROM sfn_tasks
                 WHERE activity_arn = ?1 AND taken = 0 ORDER BY created LIMIT 1)
                 RETURNING token, input, execution_arn, scheduled",
                [activity],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
            )
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// GetActivityTask: a waiting task, else a wait of up to 60 seconds of the server clock
    /// for one, answered without a token if none comes.
    pub(super) async fn get_activity_task(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let activity = input.str("activityArn").unwrap_or_default();
        self.existing_activity(ctx, activity)?;
        let deadline = now_millis().saturating_add(POLL_MILLIS);
        let stopping = self.env.stopping();
        tokio::pin!(stopping);
        loop {
            let queued = self.engine.activity_queued.notified();
            tokio::pin!(queued);
            queued.as_mut().enable();
            if let Some((token, task_input, execution, scheduled)) = self.take_task(activity)? {
                if let Some(run) = self.engine.running(&execution) {
                    let mut prev = scheduled;
                    let worker = input.str("workerName").map(str::to_string);
                    run.history.add(
                        &mut prev,
                        "ActivityStarted",
                        Some("activityStartedEventDetails"),
                        serde_json::json!({"workerName": worker}),
                    );
                    run.flush();
                }
                return Ok(Value::map()
                    .with("taskToken", token)
                    .with("input", task_input));
            }
            if now_millis() >= deadline {
                return Ok(Value::map());
            }
            tokio::select! {
                _ = queued => {}
                _ = sleep_until(deadline) => {}
                _ = &mut stopping => return Ok(Value::map()),
            }
        }
    }

    /// Sends a signal to the task waiting with a token.
    fn signal(&self, input: &Value, signal: Signal) -> AwsResult<Value> {
        let token = input.str("taskToken").unwrap_or_default();
        if !is_token(token) {
            return Err(AwsError::new(
                "InvalidToken",
                "Invalid Token: 'Invalid token'",
            ));
        }
        let sender = lock(&self.engine.tokens).get(token).cloned();
        match sender.map(|s| s.send(signal)) {
            Some(Ok(())) => Ok(Value::map()),
            _ => Err(AwsError::new(
                "TaskTimedOut",
                "Task Timed Out: 'Provided task does not exist anymore'",
            )),
        }
    }

    pub(super) fn send_task_success(&self, input: &Value) -> AwsResult<Value> {
        let text = input.str("output").unwrap_or_default();
        let output: Json = serde_json::from_str(text)
            .map_err(|e| AwsError::new("InvalidOutput", format!("Invalid Output: '{e}'")))?;
        self.signal(input, Signal::Success(output))
    }

    pub(super) fn send_task_failure(&self, input: &Value) -> AwsResult<Value> {
        let failure = Failure::new(
            input.str("error").unwrap_or_default(),
            input.str("cause").unwrap_or_default(),
        );
        self.signal(input, Signal::Failure(failure))
    }

    pub(super) fn send_task_heartbeat(&self, input: &Value) -> AwsResult<Value> {
        self.signal(input, Signal::Heartbeat)
    }
}
