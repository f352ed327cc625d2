//! Export tasks (CreateExportTask, DescribeExportTasks, CancelExportTask): a log group's
//! events of a time range written to an S3 bucket as AWS lays them out.
//!
//! The objects go through the in-process dispatcher (S3 `PutObject`), never S3's tables:
//! first `<prefix>/aws-logs-write-test` (AWS's permission check), then, for each log stream,
//! `<prefix>/<taskId>/<stream>/000000.gz`, a gzip of the stream's events, one
//! `<ISO-8601 timestamp> <message>` line each. The task runs inside CreateExportTask, so it
//! is `COMPLETED` when described (or `FAILED`, with S3's error, if a write failed).

use roto_core::store::Cached;
use roto_core::timestamp::{format, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use crate::gzip;

use super::{
    document, from_document, invalid, name_of_token, no_group, page_of, Logs, DEFAULT_PAGE,
};

/// The key prefix AWS uses when the task names none.
const DEFAULT_PREFIX: &str = "exportedlogs";

/// `ResourceNotFoundException` for a task id.
fn no_task() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified export task does not exist.",
    )
    .with_status(400)
}

impl Logs {
    /// The events to export: `(stream, lines)` per stream with events in `[from, to]`.
    fn export_lines(
        &self,
        ctx: &Context,
        group: &str,
        stream_prefix: &str,
        from: i64,
        to: i64,
    ) -> AwsResult<Vec<(String, String)>> {
        let retention = self.group(ctx, group)?.ok_or_else(no_group)?.retention;
        let from = from.max(self.retained_since(retention));
        let rows: Vec<(String, i64, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT stream, ts, message FROM logs_events
                 WHERE account = ?1 AND region = ?2 AND grp = ?3 AND ts >= ?4 AND ts <= ?5
                   AND substr(stream, 1, length(?6)) = ?6
                 ORDER BY stream, ts, id",
            )?;
            let rows = st.query_map(
                params![ctx.account, ctx.region, group, from, to, stream_prefix],
                |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let mut out: Vec<(String, String)> = Vec::new();
        for (stream, ts, message) in rows {
            if out.last().is_none_or(|(s, _)| *s != stream) {
                out.push((stream.clone(), String::new()));
            }
            if let Some((_, lines)) = out.last_mut() {
                lines.push_str(&format(ts, TimestampFormat::Iso8601));
                lines.push(' ');
                lines.push_str(&message);
                lines.push('\n');
            }
        }
        Ok(out)
    }

    /// Writes one object through the dispatcher.
    async fn put_export_object(
        &self,
        ctx: &Context,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
    ) -> AwsResult<()> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let input = Value::map()
            .with("Bucket", bucket)
            .with("Key", key)
            .with("Body", Value::Blob(body));
        dispatcher.call(ctx, "s3", "PutObject", input).await?;
        Ok(())
    }

    pub(super) async fn create_export_task(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = input.str("logGroupName").unwrap_or_default();
        let (from, to) = (
            input.int("from").unwrap_or_default(),
            input.int("to").unwrap_or_default(),
        );
        if to <= from {
            return Err(invalid("The end time must be later than the start time."));
        }
        self.existing_group(ctx, group)?;
        let bucket = input.str("destination").unwrap_or_default();
        let prefix = input
            .str("destinationPrefix")
            .filter(|p| !p.is_empty())
            .unwrap_or(DEFAULT_PREFIX)
            .trim_end_matches('/');
        self.put_export_object(
            ctx,
            bucket,
            &format!("{prefix}/aws-logs-write-test"),
            b"Permission Check Successful".to_vec(),
        )
        .await
        .map_err(|e| match e.code.as_ref() {
            "NoSuchBucket" => {
                invalid("The given bucket does not exist. Please make sure the bucket is valid.")
            }
            _ => invalid(format!(
                "PutObject call on the given bucket failed: {}",
                e.message
            )),
        })?;
        let task_id = roto_core::dispatch::new_request_id();
        let created = self.now();
        let stream_prefix = input.str("logStreamNamePrefix").unwrap_or_default();
        let mut status = ("COMPLETED", "Completed successfully".to_string());
        for (stream, lines) in self.export_lines(ctx, group, stream_prefix, from, to)? {
            let key = format!("{prefix}/{task_id}/{stream}/000000.gz");
            let body = gzip::compress_blocking(lines.into_bytes()).await?;
            if let Err(e) = self.put_export_object(ctx, bucket, &key, body).await {
                status = ("FAILED", format!("{}: {}", e.code, e.message));
                break;
            }
        }
        let task = Value::map()
            .with("taskId", task_id.as_str())
            .with_opt("taskName", input.str("taskName"))
            .with("logGroupName", group)
            .with("from", from)
            .with("to", to)
            .with("destination", bucket)
            .with("destinationPrefix", prefix)
            .with(
                "status",
                Value::map()
                    .with("code", status.0)
                    .with("message", status.1),
            )
            .with(
                "executionInfo",
                Value::map()
                    .with("creationTime", created)
                    .with("completionTime", self.now()),
            );
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO logs_export_tasks (account, region, id, created, config)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
                params![ctx.account, ctx.region, task_id, created, document(&task)],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map().with("taskId", task_id))
    }

    pub(super) fn describe_export_tasks(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("taskId");
        let code = input.str("statusCode");
        let limit = input.int("limit").unwrap_or(DEFAULT_PAGE).max(1) as usize;
        let after = input.str("nextToken").map(name_of_token).transpose()?;
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT printf('%020d', 9223372036854775807 - created) || id, config
                 FROM logs_export_tasks
                 WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR id = ?3)
                 ORDER BY created DESC, id",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, id], |r| {
                Ok((r.get(0)?, r.get(1)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let rows: Vec<(String, String)> = rows
            .into_iter()
            .filter(|(key, task)| {
                after.as_ref().is_none_or(|a| key > a)
                    && code.is_none_or(|c| {
                        from_document(task)
                            .get("status")
                            .and_then(|s| s.str("code").map(|s| s == c))
                            .unwrap_or(false)
                    })
            })
            .take(limit + 1)
            .collect();
        Ok(page_of(rows, limit, "exportTasks"))
    }

    pub(super) fn cancel_export_task(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let task = self
            .env
            .store
            .with(|c| {
                c.prepare_cached(
                    "SELECT config FROM logs_export_tasks WHERE account = ?1 AND region = ?2 AND id = ?3",
                )?
                .query_row(
                    params![ctx.account, ctx.region, input.str("taskId").unwrap_or_default()],
                    |r| r.get::<_, String>(0),
                )
                .optional()
                .map_err(AwsError::from)
            })?
            .map(|t| from_document(&t))
            .ok_or_else(no_task)?;
        let code = task
            .get("status")
            .and_then(|s| s.str("code"))
            .unwrap_or_default();
        Err(AwsError::new(
            "InvalidOperationException",
            format!("The specified export task has already finished ({code})."),
        )
        .with_status(400))
    }
}
