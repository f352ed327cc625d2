//! Exports to S3: ExportTableToPointInTime, DescribeExport and ListExports.
//!
//! An export writes the table as it was at `ExportTime` (read from the recovery log, so
//! point-in-time recovery must be enabled, as in AWS) to S3 as AWS lays it out, under
//! `<prefix>/AWSDynamoDB/<export id>/`: `_started` (AWS's check that the bucket is
//! writable), `data/<26 characters>.json.gz` (or `.ion.gz`) files of gzip text with one
//! `{"Item": {...}}` per line in DynamoDB JSON (or Amazon Ion) — at least one file, empty
//! for an empty table — then `manifest-files.json` (one line per data file: `itemCount`,
//! `md5Checksum`, `etag`, `dataFileS3Key`), `manifest-summary.json`, and an MD5 `.checksum`
//! beside each manifest. The objects go through the in-process dispatcher (S3 PutObject),
//! never S3's tables. The export runs inside the call: the response says `IN_PROGRESS`, as
//! AWS's does, and DescribeExport finds it `COMPLETED`, or `FAILED` with the S3 error as
//! `FailureCode` `S3<code>` (`S3NoSuchBucket`: the bucket is checked by writing, as AWS
//! does, not when the export is asked for).

use std::fmt::Write as _;

use base64::Engine;
use md5::{Digest, Md5};
use roto_core::store::Cached;
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::attr::{parse_stored_item, Attr, Item};
use super::backups;
use super::on_demand_backups::table_not_found;
use super::tables::{load_table, table_name};
use super::{task_records, DynamoDb};
use crate::gzip;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_exports (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    arn TEXT NOT NULL,
    table_arn TEXT NOT NULL,
    created INTEGER NOT NULL,
    client_token TEXT,
    request TEXT NOT NULL,
    description TEXT NOT NULL,
    PRIMARY KEY (account, region, arn)
) WITHOUT ROWID;
CREATE INDEX IF NOT EXISTS ddb_exports_by_time ON ddb_exports (account, region, created, arn);
";

/// How much item text one data file holds before the next is begun.
const DATA_FILE_BYTES: usize = 8 * 1024 * 1024;
/// The longest ListExports page.
const LIST_EXPORTS_MAX: i64 = 25;

/// The output formats, with their data files' extension.
#[derive(Clone, Copy, PartialEq)]
enum Format {
    DynamoDbJson,
    Ion,
}

impl Format {
    fn name(self) -> &'static str {
        match self {
            Format::DynamoDbJson => "DYNAMODB_JSON",
            Format::Ion => "ION",
        }
    }

    fn extension(self) -> &'static str {
        match self {
            Format::DynamoDbJson => "json.gz",
            Format::Ion => "ion.gz",
        }
    }

    /// One item's line of a data file, from its stored JSON.
    fn line(self, stored: &str) -> AwsResult<String> {
        Ok(match self {
            Format::DynamoDbJson => format!("{{\"Item\":{stored}}}\n"),
            Format::Ion => {
                let mut line = String::from("{Item:");
                ion_struct(&parse_stored_item(stored)?, &mut line);
                line.push_str("}\n");
                line
            }
        })
    }
}

/// Writes an Ion symbol (quoted unless it is a plain identifier).
fn ion_symbol(name: &str, out: &mut String) {
    let plain = name
        .chars()
        .next()
        .is_some_and(|c| c.is_ascii_alphabetic() || c == '_' || c == '$')
        && name
            .chars()
            .all(|c| c.is_ascii_alphanumeric() || c == '_' || c == '$')
        && !matches!(name, "null" | "true" | "false" | "nan");
    if plain {
        out.push_str(name);
    } else {
        ion_quoted(name, '\'', out);
    }
}

fn ion_quoted(text: &str, quote: char, out: &mut String) {
    out.push(quote);
    for c in text.chars() {
        match c {
            '\\' => out.push_str("\\\\"),
            '\n' => out.push_str("\\n"),
            '\r' => out.push_str("\\r"),
            '\t' => out.push_str("\\t"),
            c if c == quote => {
                out.push('\\');
                out.push(c);
            }
            c if (c as u32) < 0x20 => {
                let _ = write!(out, "\\x{:02x}", c as u32);
            }
            c => out.push(c),
        }
    }
    out.push(quote);
}

fn ion_decimal(number: &str, out: &mut String) {
    out.push_str(number);
    if !number.contains('.') {
        out.push('.');
    }
}

fn ion_blob(bytes: &[u8], out: &mut String) {
    out.push_str("{{");
    out.push_str(&base64::engine::general_purpose::STANDARD.encode(bytes));
    out.push_str("}}");
}

fn ion_struct(item: &Item, out: &mut String) {
    out.push('{');
    for (i, (name, value)) in item.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        ion_symbol(name, out);
        out.push(':');
        ion_value(value, out);
    }
    out.push('}');
}

fn ion_list<T>(annotation: &str, items: &[T], out: &mut String, each: impl Fn(&T, &mut String)) {
    out.push_str(annotation);
    out.push('[');
    for (i, item) in items.iter().enumerate() {
        if i > 0 {
            out.push(',');
        }
        each(item, out);
    }
    out.push(']');
}

/// Writes an attribute value as DynamoDB's Ion exports do: numbers as decimals, binaries
/// as blobs, sets as lists annotated `$dynamodb_SS`, `$dynamodb_NS` or `$dynamodb_BS`.
fn ion_value(value: &Attr, out: &mut String) {
    match value {
        Attr::S(s) => ion_quoted(s, '"', out),
        Attr::N(n) => ion_decimal(&n.to_string(), out),
        Attr::B(b) => ion_blob(b, out),
        Attr::Ss(items) => ion_list("$dynamodb_SS::", items, out, |s, out| {
            ion_quoted(s, '"', out)
        }),
        Attr::Ns(items) => ion_list("$dynamodb_NS::", items, out, |n, out| {
            ion_decimal(&n.to_string(), out)
        }),
        Attr::Bs(items) => ion_list("$dynamodb_BS::", items, out, |b, out| ion_blob(b, out)),
        Attr::M(map) => ion_struct(map, out),
        Attr::L(items) => ion_list("", items, out, ion_value),
        Attr::Null => out.push_str("null"),
        Attr::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
    }
}

/// `ExportNotFoundException` for an ARN.
fn export_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ExportNotFoundException",
        format!("Export not found: {arn}"),
    )
    .with_status(400)
}

/// A random data file name, as AWS's look (26 lower-case letters and digits).
fn data_file_name() -> String {
    const CHARS: &[u8] = b"abcdefghijklmnopqrstuvwxyz234567";
    (0..26)
        .map(|_| char::from(CHARS[fastrand::usize(..CHARS.len())]))
        .collect()
}

fn iso(millis: i64) -> String {
    timestamp::format(millis, TimestampFormat::Iso8601)
}

/// What an export writes to S3, once its items are read.
struct Plan {
    bucket: String,
    owner: Option<String>,
    base: String,
    format: Format,
    sse: Option<(String, Option<String>)>,
}

/// One written data file: item count, key, ETag and MD5.
struct DataFile {
    items: usize,
    key: String,
    etag: String,
    md5: Vec<u8>,
}

impl DynamoDb {
    /// Writes one object through the dispatcher; returns its ETag.
    async fn put_export_object(
        &self,
        ctx: &Context,
        plan: &Plan,
        key: &str,
        body: Vec<u8>,
    ) -> AwsResult<String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let (algorithm, key_id) = match &plan.sse {
            Some((algorithm, key_id)) => (Some(algorithm.as_str()), key_id.as_deref()),
            None => (None, None),
        };
        let input = Value::map()
            .with("Bucket", plan.bucket.as_str())
            .with("Key", key)
            .with("Body", Value::Blob(body))
            .with_opt("ExpectedBucketOwner", plan.owner.as_deref())
            .with_opt("ServerSideEncryption", algorithm)
            .with_opt("SSEKMSKeyId", key_id);
        let output = dispatcher.call(ctx, "s3", "PutObject", input).await?;
        Ok(output
            .str("ETag")
            .unwrap_or_default()
            .trim_matches('"')
            .to_string())
    }

    /// Writes the export's objects; returns its data files.
    async fn write_export(
        &self,
        ctx: &Context,
        plan: &Plan,
        lines: Vec<String>,
    ) -> AwsResult<Vec<DataFile>> {
        self.put_export_object(ctx, plan, &format!("{}/_started", plan.base), Vec::new())
            .await?;
        let mut files = Vec::new();
        let mut lines = lines.into_iter().peekable();
        loop {
            let mut text = String::new();
            let mut items = 0;
            if plan.format == Format::Ion {
                text.push_str("$ion_1_0 ");
            }
            while let Some(line) = lines.next_if(|_| text.len() < DATA_FILE_BYTES) {
                text.push_str(&line);
                items += 1;
            }
            let body = gzip::compress_blocking(text.into_bytes()).await?;
            let md5 = Md5::digest(&body).to_vec();
            let key = format!(
                "{}/data/{}.{}",
                plan.base,
                data_file_name(),
                plan.format.extension()
            );
            let etag = self.put_export_object(ctx, plan, &key, body).await?;
            files.push(DataFile {
                items,
                key,
                etag,
                md5,
            });
            if lines.peek().is_none() {
                return Ok(files);
            }
        }
    }

    /// Writes a manifest and its `.checksum`.
    async fn put_manifest(
        &self,
        ctx: &Context,
        plan: &Plan,
        name: &str,
        text: String,
    ) -> AwsResult<()> {
        let checksum = hex::encode(Md5::digest(text.as_bytes()));
        self.put_export_object(
            ctx,
            plan,
            &format!("{}/{name}.json", plan.base),
            text.into_bytes(),
        )
        .await?;
        self.put_export_object(
            ctx,
            plan,
            &format!("{}/{name}.checksum", plan.base),
            checksum.into_bytes(),
        )
        .await?;
        Ok(())
    }

    /// The table and its items at `export_time` as export lines, with the bytes billed:
    /// read and encoded on a blocking thread, since the table may be large.
    async fn read_export(
        &self,
        ctx: &Context,
        name: &str,
        table_arn: &str,
        format: Format,
        (export_time, now): (i64, i64),
    ) -> AwsResult<(super::tables::Table, Vec<String>, i64)> {
        let env = self.env.clone();
        let (ctx, name, table_arn) = (ctx.clone(), name.to_string(), table_arn.to_string());
        crate::blocking::run(move || {
            env.store.with(|c| {
                let (ctx, name) = (&ctx, &name);
                let table =
                    load_table(c, ctx, name)?.ok_or_else(|| table_not_found(&table_arn))?;
                let (earliest, _) =
                    backups::restorable_window(c, ctx, name, now)?.ok_or_else(|| {
                        AwsError::new(
                            "PointInTimeRecoveryUnavailableException",
                            format!("Point in time recovery is not enabled for table '{name}'"),
                        )
                        .with_status(400)
                    })?;
                if export_time < earliest || export_time > now {
                    return Err(AwsError::new(
                        "InvalidExportTimeException",
                        "ExportTime must be between EarliestRestorableDateTime and the current time",
                    )
                    .with_status(400));
                }
                let items = backups::items_at(c, ctx, name, export_time)?;
                let billed: i64 = items.iter().map(|(_, _, size)| size).sum();
                let lines = items
                    .iter()
                    .map(|(_, item, _)| format.line(item))
                    .collect::<AwsResult<Vec<String>>>()?;
                Ok::<_, AwsError>((table, lines, billed))
            })
        })
        .await
    }

    pub(super) async fn export_table_to_point_in_time(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let table_arn = input.str("TableArn").unwrap_or_default();
        for member in ["IncrementalExportSpecification", "FilterSpecification"] {
            if input.get(member).is_some() {
                return Err(AwsError::new(
                    "NotImplemented",
                    format!("The {member} parameter of ExportTableToPointInTime is not implemented by Roto yet"),
                )
                .with_status(501));
            }
        }
        if input.str("ExportType") == Some("INCREMENTAL_EXPORT") {
            return Err(AwsError::new(
                "NotImplemented",
                "Incremental exports are not implemented by Roto yet",
            )
            .with_status(501));
        }
        let format = match input.str("ExportFormat") {
            Some("ION") => Format::Ion,
            _ => Format::DynamoDbJson,
        };
        let name = table_name(&Value::map().with("TableName", table_arn))
            .map_err(|_| table_not_found(table_arn))?;
        let now = now_millis();
        let conflict = || {
            AwsError::new(
                        "ExportConflictException",
                        "There was a conflict when writing to the specified S3 bucket: the client token was used with other parameters.",
            )
            .with_status(400)
        };
        if let Some(description) =
            self.replayed_request(ctx, "ddb_exports", input, now, conflict)?
        {
            return Ok(Value::map().with("ExportDescription", export_value(&description)));
        }
        let token = input.str("ClientToken");
        let request = task_records::request_key(input);
        let export_time = match input.get("ExportTime") {
            Some(Value::Timestamp(at)) => *at,
            _ => now,
        };
        let (table, lines, billed) = self
            .read_export(ctx, &name, table_arn, format, (export_time, now))
            .await?;

        let table_arn = table.description["TableArn"].as_str().unwrap_or(table_arn);
        let export_id = format!("{now:014}-{:08x}", fastrand::u32(..));
        let arn = format!("{table_arn}/export/{export_id}");
        let prefix = input.str("S3Prefix").filter(|p| !p.is_empty());
        let base = match prefix {
            Some(prefix) => format!("{}/AWSDynamoDB/{export_id}", prefix.trim_end_matches('/')),
            None => format!("AWSDynamoDB/{export_id}"),
        };
        let bucket = input.str("S3Bucket").unwrap_or_default();
        let sse_algorithm = input.str("S3SseAlgorithm");
        let plan = Plan {
            bucket: bucket.to_string(),
            owner: input.str("S3BucketOwner").map(str::to_string),
            base: base.clone(),
            format,
            sse: sse_algorithm.map(|a| {
                (
                    if a == "KMS" { "aws:kms" } else { a }.to_string(),
                    input.str("S3SseKmsKeyId").map(str::to_string),
                )
            }),
        };
        let mut description = json!({
            "ExportArn": arn,
            "ExportStatus": "IN_PROGRESS",
            "StartTime": now,
            "TableArn": table_arn,
            "TableId": table.description["TableId"],
            "ExportTime": export_time,
            "S3Bucket": bucket,
            "ExportFormat": format.name(),
            "ExportType": "FULL_EXPORT",
        });
        for (member, value) in [
            ("ClientToken", token),
            ("S3BucketOwner", input.str("S3BucketOwner")),
            ("S3Prefix", prefix),
            ("S3SseAlgorithm", sse_algorithm),
            ("S3SseKmsKeyId", input.str("S3SseKmsKeyId")),
        ] {
            if let Some(value) = value {
                description[member] = value.into();
            }
        }
        let started = description.clone();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO ddb_exports
                 (account, region, arn, table_arn, created, client_token, request, description)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    arn,
                    table_arn,
                    now,
                    token,
                    request,
                    description.to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;

        let item_count = lines.len();
        let written = match self.write_export(ctx, &plan, lines).await {
            Ok(files) => {
                let manifest_files: String = files
                    .iter()
                    .map(|f| {
                        let mut line = json!({
                            "itemCount": f.items,
                            "md5Checksum": base64::engine::general_purpose::STANDARD.encode(&f.md5),
                            "etag": f.etag,
                            "dataFileS3Key": f.key,
                        })
                        .to_string();
                        line.push('\n');
                        line
                    })
                    .collect();
                let summary = json!({
                    "version": "2020-06-30",
                    "exportArn": arn,
                    "startTime": iso(now),
                    "endTime": iso(now_millis()),
                    "tableArn": table_arn,
                    "tableId": table.description["TableId"],
                    "exportTime": iso(export_time),
                    "s3Bucket": bucket,
                    "s3Prefix": prefix,
                    "s3SseAlgorithm": sse_algorithm.unwrap_or("AES256"),
                    "s3SseKmsKeyId": input.str("S3SseKmsKeyId"),
                    "manifestFilesS3Key": format!("{base}/manifest-files.json"),
                    "billedSizeBytes": billed,
                    "itemCount": item_count,
                    "outputFormat": format.name(),
                    "exportType": "FULL_EXPORT",
                });
                async {
                    self.put_manifest(ctx, &plan, "manifest-files", manifest_files)
                        .await?;
                    self.put_manifest(ctx, &plan, "manifest-summary", summary.to_string())
                        .await
                }
                .await
            }
            Err(e) => Err(e),
        };
        description["EndTime"] = now_millis().into();
        match written {
            Ok(()) => {
                description["ExportStatus"] = "COMPLETED".into();
                description["ExportManifest"] = format!("{base}/manifest-summary.json").into();
                description["ItemCount"] = item_count.into();
                description["BilledSizeBytes"] = billed.into();
            }
            Err(e) => {
                description["ExportStatus"] = "FAILED".into();
                description["FailureCode"] = format!("S3{}", e.code).into();
                description["FailureMessage"] = e.message.into();
            }
        }
        self.save_description(ctx, "ddb_exports", &arn, &description)?;
        Ok(Value::map().with("ExportDescription", export_value(&started)))
    }

    pub(super) fn describe_export(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ExportArn").unwrap_or_default();
        let description = self
            .stored_description(ctx, "ddb_exports", arn)?
            .ok_or_else(|| export_not_found(arn))?;
        Ok(Value::map().with("ExportDescription", export_value(&description)))
    }

    pub(super) fn list_exports(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let table = input.str("TableArn");
        let limit = input.int("MaxResults").unwrap_or(LIST_EXPORTS_MAX);
        let after = input
            .str("NextToken")
            .map(|token| {
                self.stored_description(ctx, "ddb_exports", token)?
                    .and_then(|d| d["StartTime"].as_i64())
                    .map(|created| (created, token.to_string()))
                    .ok_or_else(|| AwsError::validation("Invalid NextToken"))
            })
            .transpose()?
            .unwrap_or((i64::MIN, String::new()));
        let mut rows: Vec<(String, String)> = self.env.store.with(|c| {
            let mut select = c.prepare_cached(
                "SELECT arn, description FROM ddb_exports
                 WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR table_arn = ?3)
                 AND (created, arn) > (?4, ?5) ORDER BY created, arn LIMIT ?6",
            )?;
            let rows = select.query_map(
                rusqlite::params![ctx.account, ctx.region, table, after.0, after.1, limit + 1],
                |r| Ok((r.get(0)?, r.get(1)?)),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let more = rows.len() as i64 > limit;
        rows.truncate(usize::try_from(limit).unwrap_or(0));
        let next = more
            .then(|| rows.last().map(|(arn, _)| arn.clone()))
            .flatten();
        let summaries = rows
            .iter()
            .map(|(arn, description)| {
                let description: Json = serde_json::from_str(description).unwrap_or_default();
                Value::map()
                    .with("ExportArn", arn.as_str())
                    .with_opt("ExportStatus", description["ExportStatus"].as_str())
                    .with_opt("ExportType", description["ExportType"].as_str())
            })
            .collect();
        Ok(Value::map()
            .with("ExportSummaries", Value::List(summaries))
            .with_opt("NextToken", next))
    }
}

/// The `ExportDescription` of a stored description (times kept as epoch millis).
fn export_value(description: &Json) -> Value {
    let mut value = Value::from_json(description);
    for member in ["StartTime", "EndTime", "ExportTime"] {
        if let Some(Value::Integer(millis)) = value.get(member) {
            let millis = *millis;
            value.insert(member, Value::Timestamp(millis));
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::super::number::Number;
    use super::*;

    #[test]
    fn ion_lines_follow_dynamodbs_ion_exports() {
        let item = Item::from([
            ("pk".to_string(), Attr::S("a \"q\"\n".into())),
            ("n".to_string(), Attr::N(Number::parse("12").unwrap())),
            ("f".to_string(), Attr::N(Number::parse("-1.50").unwrap())),
            ("b".to_string(), Attr::B(vec![1, 2])),
            ("ss".to_string(), Attr::Ss(vec!["x".into(), "y".into()])),
            (
                "ns".to_string(),
                Attr::Ns(vec![Number::parse("3").unwrap()]),
            ),
            (
                "my key".to_string(),
                Attr::M(Item::from([("null".to_string(), Attr::Null)])),
            ),
            ("l".to_string(), Attr::L(vec![Attr::Bool(true), Attr::Null])),
        ]);
        let mut out = String::new();
        ion_struct(&item, &mut out);
        assert_eq!(
            out,
            r#"{b:{{AQI=}},f:-1.5,l:[true,null],'my key':{'null':null},n:12.,ns:$dynamodb_NS::[3.],pk:"a \"q\"\n",ss:$dynamodb_SS::["x","y"]}"#
        );
    }

    #[test]
    fn json_lines_wrap_the_stored_item() {
        assert_eq!(
            Format::DynamoDbJson.line(r#"{"pk":{"S":"a"}}"#).unwrap(),
            "{\"Item\":{\"pk\":{\"S\":\"a\"}}}\n"
        );
    }
}
