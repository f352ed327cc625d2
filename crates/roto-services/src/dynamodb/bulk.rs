//! Bulk operations: StartBulkPutItems, DescribeBulkOperation, ListBulkOperations and
//! CancelBulkOperation.
//!
//! A bulk put reads every object under the input's `S3KeyPrefix` through S3's operations on
//! the dispatcher, as an import does (plain or gzip DynamoDB JSON, [`super::imports`]'s
//! reader), and writes the items into the existing table through the one item writer, so
//! indexes, streams and counters follow. It runs inside the call, so the response says
//! `IN_PROGRESS`, as AWS's does, and DescribeBulkOperation finds it `COMPLETED` (or
//! `COMPLETED_WITH_ERRORS` when some items could not be stored, or `FAILED` when the source
//! could not be read); a finished operation cannot be cancelled. Roto writes no error
//! report to the output location, which is kept as given. A `ClientToken` reused with the
//! same request answers the same operation, with another request
//! `IdempotentParameterMismatchException`.

use roto_core::dispatch::new_request_id;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::{json, Value as Json};

use super::imports::{self, Progress};
use super::tables::{load_table, table_arn};
use super::DynamoDb;
use crate::documents::{document, shaped};
use crate::paging;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_bulk_operations (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    client_token TEXT,
    request TEXT NOT NULL,
    description TEXT NOT NULL,
    PRIMARY KEY (account, region, arn)
);
";

fn not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Bulk operation {arn} does not exist"),
    )
    .with_status(400)
}

/// A bulk operation as stored: its client token, the request and its description.
struct Stored {
    token: Option<String>,
    request: Json,
    description: Json,
}

impl DynamoDb {
    fn bulk_operations(&self, ctx: &Context) -> AwsResult<Vec<Stored>> {
        self.env.store.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT client_token, request, description FROM ddb_bulk_operations
                 WHERE account = ?1 AND region = ?2 ORDER BY rowid",
            )?;
            let rows = st.query_map(rusqlite::params![ctx.account, ctx.region], |r| {
                let request: String = r.get(1)?;
                let description: String = r.get(2)?;
                Ok(Stored {
                    token: r.get(0)?,
                    request: serde_json::from_str(&request).unwrap_or_default(),
                    description: serde_json::from_str(&description).unwrap_or_default(),
                })
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    fn bulk_operation(&self, ctx: &Context, arn: &str) -> AwsResult<Json> {
        self.env
            .store
            .read(|c| {
                c.query_row_cached(
                    "SELECT description FROM ddb_bulk_operations
                     WHERE account = ?1 AND region = ?2 AND arn = ?3",
                    rusqlite::params![ctx.account, ctx.region, arn],
                    |r| r.get::<_, String>(0),
                )
                .optional()
                .map_err(AwsError::from)
            })?
            .map(|text| serde_json::from_str(&text).unwrap_or_default())
            .ok_or_else(|| not_found(arn))
    }

    fn put_bulk_operation(
        &self,
        ctx: &Context,
        arn: &str,
        token: Option<&str>,
        request: &Json,
        description: &Json,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO ddb_bulk_operations
                 (account, region, arn, client_token, request, description)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    arn,
                    token,
                    request.to_string(),
                    description.to_string()
                ],
            )
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }

    pub(super) async fn start_bulk_put_items(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut request = document(input);
        let token = input.str("ClientToken").map(str::to_string);
        if let Some(o) = request.as_object_mut() {
            o.remove("ClientToken");
        }
        if let Some(token) = &token {
            let earlier = self
                .bulk_operations(ctx)?
                .into_iter()
                .find(|s| s.token.as_deref() == Some(token.as_str()));
            if let Some(earlier) = earlier {
                if earlier.request != request {
                    return Err(AwsError::new(
                        "IdempotentParameterMismatchException",
                        "The ClientToken was used with a different request",
                    ));
                }
                return self.bulk_output(earlier.description);
            }
        }
        let name = input.str("TableName").unwrap_or_default();
        let name = name.rsplit('/').next().unwrap_or(name).to_string();
        let table = self
            .env
            .store
            .read(|c| load_table(c, ctx, &name))?
            .ok_or_else(super::tables::resource_not_found)?;
        let arn = format!(
            "{}/bulk-operation/{}",
            table_arn(ctx, &name),
            new_request_id()
        );
        let started = now_millis() as f64 / 1000.0;
        let mut progress = Progress::default();
        let source = input
            .get("InputS3Configuration")
            .cloned()
            .unwrap_or_else(Value::map);
        let outcome = match source.str("InputFormat") {
            Some("DYNAMODB_JSON") => {
                let gzipped = source.str("InputCompressionType") == Some("GZIP");
                self.read_source(ctx, &table, &source, gzipped, &mut progress)
                    .await
            }
            other => Err(imports::Failure {
                code: "InvalidInputFormat".into(),
                message: format!(
                    "Roto reads DYNAMODB_JSON sources only, not {}",
                    other.unwrap_or_default()
                ),
            }),
        };
        let (status, failure) = match outcome {
            Err(f) => ("FAILED", Some(f)),
            Ok(()) if progress.errors > 0 => ("COMPLETED_WITH_ERRORS", None),
            Ok(()) => ("COMPLETED", None),
        };
        let mut description = json!({
            "BulkOperationArn": arn,
            "BulkOperationStatus": status,
            "TableDetails": [{"TableName": table_arn(ctx, &name), "TableId": table.description["TableId"]}],
            "InputS3Configuration": request["InputS3Configuration"],
            "OutputS3Configuration": request["OutputS3Configuration"],
            "StartTime": started,
            "EndTime": now_millis() as f64 / 1000.0,
            "ProcessedItemCount": progress.processed_items,
            "FailedItemCount": progress.errors,
            "ProcessedInputBytes": progress.processed_bytes,
            "TotalInputBytes": progress.processed_bytes,
            "MaxWriteRequestUnits": request.get("MaxWriteRequestUnits"),
            "PerformanceTier": request.get("PerformanceTier").cloned().unwrap_or(json!("STANDARD")),
        });
        if let Some(token) = &token {
            description["ClientToken"] = token.clone().into();
        }
        if let Some(f) = failure {
            description["FailureCode"] = f.code.into();
            description["FailureMessage"] = f.message.into();
        }
        self.put_bulk_operation(ctx, &arn, token.as_deref(), &request, &description)?;
        let mut shown = description;
        shown["BulkOperationStatus"] = "IN_PROGRESS".into();
        if let Some(o) = shown.as_object_mut() {
            o.remove("EndTime");
        }
        self.bulk_output(shown)
    }

    fn bulk_output(&self, description: Json) -> AwsResult<Value> {
        let description = shaped(
            super::SPEC.model(),
            "BulkOperationDescription",
            &description,
        )?;
        Ok(Value::map().with("BulkOperationDescription", description))
    }

    pub(super) fn describe_bulk_operation(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("BulkOperationArn").unwrap_or_default();
        self.bulk_output(self.bulk_operation(ctx, arn)?)
    }

    pub(super) fn list_bulk_operations(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut summaries = self
            .bulk_operations(ctx)?
            .into_iter()
            .map(|s| shaped(super::SPEC.model(), "BulkOperationSummary", &s.description))
            .collect::<AwsResult<Vec<_>>>()?;
        summaries.reverse();
        let limit = input.int("MaxResults").unwrap_or(100).clamp(1, 100) as usize;
        let (page, next) = paging::page(summaries, limit, input.str("NextToken"), || {
            AwsError::validation("The provided NextToken is not valid")
        })?;
        Ok(Value::map()
            .with("BulkOperationsSummaryList", page)
            .with_opt("NextToken", next))
    }

    /// `CancelBulkOperation`: every bulk operation Roto runs has finished by the time its
    /// ARN is known, and a finished operation cannot be cancelled.
    pub(super) fn cancel_bulk_operation(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("BulkOperationArn").unwrap_or_default();
        let description = self.bulk_operation(ctx, arn)?;
        Err(AwsError::validation(format!(
            "Bulk operation {arn} is {} and cannot be cancelled",
            description["BulkOperationStatus"]
                .as_str()
                .unwrap_or_default()
        )))
    }
}
