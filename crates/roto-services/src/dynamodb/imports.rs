//! Imports from S3: ImportTable, DescribeImport and ListImports.
//!
//! ImportTable checks `TableCreationParameters` as CreateTable does (its refusals are the
//! request's), then reads every object under `S3KeyPrefix` through the in-process
//! dispatcher (S3 ListObjectsV2 and GetObject, never S3's tables), plain or gzip, in
//! DynamoDB JSON (`{"Item": {...}}` objects, one after another, newlines optional) or CSV
//! (a header row, or `HeaderList`; key and index attributes typed by the attribute
//! definitions, the rest strings, empty values left out), and writes the items into the
//! new table through the one item writer, so indexes and counters follow. As in AWS, an
//! unreadable source (`S3NoSuchBucket`, ...) fails the import and leaves no table; items
//! that cannot be read or stored are counted in `ErrorCount` and the rest imported, the
//! import then `FAILED` with `ItemValidationError`. The import runs inside the call: the
//! response says `IN_PROGRESS`, as AWS's does, and DescribeImport finds it finished.

use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Request, Value};
use serde_json::{json, Value as Json};

use super::attr::{item_from_json, Attr, Item};
use super::items::check_storable;
use super::number::Number;
use super::rows;
use super::tables::{build_description, check_name, insert_table, load_table, table_arn, Table};
use super::{task_records, DynamoDb};
use crate::gzip;

/// The table this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_imports (
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
CREATE INDEX IF NOT EXISTS ddb_imports_by_time ON ddb_imports (account, region, created, arn);
";

/// The longest ListImports page.
const LIST_IMPORTS_MAX: i64 = 25;
/// The message of an import some of whose items were refused.
const ITEM_ERRORS: &str = "Some of the items failed validation checks and were not imported. Please check CloudWatch error logs for more details.";

/// The source formats Roto reads.
#[derive(Clone, Copy)]
enum Format {
    DynamoDbJson,
    Csv,
}

/// What reading one object gave: each item, or `None` for one that could not be read.
type Parsed = Vec<Option<Item>>;

/// Reads DynamoDB JSON: `{"Item": {...}}` values one after another. A value that is not
/// JSON costs the rest of its line.
fn parse_dynamodb_json(text: &str) -> Parsed {
    let mut out = Vec::new();
    let mut rest = text;
    loop {
        let mut values = serde_json::Deserializer::from_str(rest).into_iter::<Json>();
        match values.next() {
            None => return out,
            Some(Ok(value)) => {
                out.push(
                    value
                        .get("Item")
                        .filter(|_| value.as_object().is_some_and(|o| o.len() == 1))
                        .and_then(item_from_json),
                );
                rest = &rest[values.byte_offset()..];
            }
            Some(Err(_)) => {
                out.push(None);
                let at = values.byte_offset();
                match rest[at..].find('\n') {
                    Some(newline) => rest = &rest[at + newline + 1..],
                    None => return out,
                }
            }
        }
    }
}

/// Splits CSV text into records of fields (RFC 4180: quoted fields may hold the
/// delimiter, line breaks and doubled quotes).
fn csv_records(text: &str, delimiter: char) -> Vec<Vec<String>> {
    let mut records = Vec::new();
    let mut record = Vec::new();
    let mut field = String::new();
    let mut quoted = false;
    let mut chars = text.chars().peekable();
    let mut any = false;
    while let Some(c) = chars.next() {
        any = true;
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                chars.next();
                field.push('"');
            }
            '"' if quoted => quoted = false,
            '"' if field.is_empty() => quoted = true,
            c if c == delimiter && !quoted => record.push(std::mem::take(&mut field)),
            '\r' if !quoted && chars.peek() == Some(&'\n') => {}
            '\n' if !quoted => {
                record.push(std::mem::take(&mut field));
                records.push(std::mem::take(&mut record));
                any = false;
            }
            c => field.push(c),
        }
    }
    if any {
        record.push(field);
        records.push(record);
    }
    records
}

/// Reads CSV into items, typing the defined attributes by their definitions.
fn parse_csv(text: &str, delimiter: char, header: Option<&[String]>, definitions: &Json) -> Parsed {
    let mut records = csv_records(text, delimiter).into_iter();
    let header: Vec<String> = match header {
        Some(header) => header.to_vec(),
        None => match records.next() {
            Some(header) => header,
            None => return Vec::new(),
        },
    };
    let kind_of = |name: &str| {
        definitions.as_array().and_then(|defs| {
            defs.iter()
                .find(|d| d["AttributeName"].as_str() == Some(name))
                .and_then(|d| d["AttributeType"].as_str())
        })
    };
    records
        .filter(|record| !(record.len() == 1 && record[0].is_empty()))
        .map(|record| {
            if record.len() != header.len() {
                return None;
            }
            header
                .iter()
                .zip(record)
                .filter(|(_, value)| !value.is_empty())
                .map(|(name, value)| {
                    let attr = match kind_of(name) {
                        Some("N") => Attr::N(Number::parse(&value).ok()?),
                        Some("B") => Attr::B(
                            base64::engine::general_purpose::STANDARD
                                .decode(&value)
                                .ok()?,
                        ),
                        _ => Attr::S(value),
                    };
                    Some((name.clone(), attr))
                })
                .collect()
        })
        .collect()
}

/// `ImportNotFoundException` for an ARN.
fn import_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ImportNotFoundException",
        format!("Import not found: {arn}"),
    )
    .with_status(400)
}

/// The `NextToken` of a ListImports page ending at an import: its ARN in hex, padded with
/// zero bytes to the token's form (`([0-9a-f]{16})+`, at least 112 digits).
fn next_token(arn: &str) -> String {
    let mut bytes = arn.as_bytes().to_vec();
    while bytes.len() < 56 || bytes.len() % 8 != 0 {
        bytes.push(0);
    }
    hex::encode(bytes)
}

/// The import ARN a `NextToken` carries.
fn arn_of_token(token: &str) -> Option<String> {
    let mut bytes = hex::decode(token).ok()?;
    while bytes.last() == Some(&0) {
        bytes.pop();
    }
    String::from_utf8(bytes).ok()
}

/// Counts of an import's (or a bulk put's) progress.
#[derive(Default)]
pub(super) struct Progress {
    pub processed_bytes: usize,
    pub processed_items: usize,
    pub imported_items: usize,
    pub errors: usize,
}

/// Why an import (or a bulk put) stopped before reading all its source.
pub(super) struct Failure {
    pub code: String,
    pub message: String,
}

fn s3_failure(e: AwsError) -> Failure {
    Failure {
        code: format!("S3{}", e.code),
        message: e.message,
    }
}

impl DynamoDb {
    async fn s3_call(&self, ctx: &Context, operation: &str, input: Value) -> AwsResult<Value> {
        self.env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?
            .call(ctx, "s3", operation, input)
            .await
    }

    /// The keys of the source's objects.
    async fn source_keys(&self, ctx: &Context, source: &Value) -> Result<Vec<String>, Failure> {
        let mut keys = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let input = Value::map()
                .with("Bucket", source.str("S3Bucket").unwrap_or_default())
                .with_opt("Prefix", source.str("S3KeyPrefix"))
                .with_opt("ExpectedBucketOwner", source.str("S3BucketOwner"))
                .with_opt("ContinuationToken", token.take());
            let page = self
                .s3_call(ctx, "ListObjectsV2", input)
                .await
                .map_err(s3_failure)?;
            keys.extend(
                page.get("Contents")
                    .and_then(Value::as_list)
                    .unwrap_or_default()
                    .iter()
                    .filter_map(|o| o.str("Key").map(str::to_string)),
            );
            match page.str("NextContinuationToken") {
                Some(next) if page.bool("IsTruncated") == Some(true) => {
                    token = Some(next.to_string())
                }
                _ => return Ok(keys),
            }
        }
    }

    /// One source object's bytes.
    async fn source_object(&self, ctx: &Context, source: &Value, key: &str) -> AwsResult<Vec<u8>> {
        let input = Value::map()
            .with("Bucket", source.str("S3Bucket").unwrap_or_default())
            .with("Key", key)
            .with_opt("ExpectedBucketOwner", source.str("S3BucketOwner"));
        let response = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?
            .call_request(ctx, "s3", "GetObject", Request::new(input))
            .await?;
        response.into_payload().await
    }

    /// Writes one object's items into the table.
    fn store_items(
        &self,
        ctx: &Context,
        table: &Table,
        items: Parsed,
        progress: &mut Progress,
    ) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            // The table as it stands now: its Time to Live or recovery may have been turned
            // on since the import began.
            let current = load_table(tx, ctx, &table.name)?;
            let table = current.as_ref().unwrap_or(table);
            for item in items {
                progress.processed_items += 1;
                let stored = item.and_then(|item| {
                    let key = table.schema.encode_item_key(&item).ok()?;
                    check_storable(table, &item, "").ok()?;
                    Some((key, item))
                });
                let Some((key, item)) = stored else {
                    progress.errors += 1;
                    continue;
                };
                let old = rows::read_item(tx, ctx, &table.name, &key)?;
                rows::store(tx, ctx, table, &key, old.as_ref(), Some(&item))?;
                progress.imported_items += 1;
            }
            Ok::<_, AwsError>(())
        })
    }

    /// Stores the items of every DynamoDB JSON object of `source` in `table` (a bulk put).
    pub(super) async fn read_source(
        &self,
        ctx: &Context,
        table: &Table,
        source: &Value,
        gzipped: bool,
        progress: &mut Progress,
    ) -> Result<(), Failure> {
        let keys = self.source_keys(ctx, source).await?;
        self.read_objects(
            ctx,
            table,
            source,
            keys,
            gzipped,
            parse_dynamodb_json,
            progress,
        )
        .await
    }

    /// Creates the table and fills it from the source.
    async fn run_import(
        &self,
        ctx: &Context,
        input: &Value,
        name: &str,
        description: &Json,
        progress: &mut Progress,
    ) -> Result<(), Failure> {
        let source = input
            .get("S3BucketSource")
            .cloned()
            .unwrap_or_else(Value::map);
        let keys = self.source_keys(ctx, &source).await?;
        let internal = |e: AwsError| Failure {
            code: "InternalServerError".into(),
            message: e.message,
        };
        let table = self
            .env
            .store
            .transaction(|tx| {
                insert_table(tx, ctx, name, description, now_millis(), &json!([]))?;
                load_table(tx, ctx, name)?
                    .ok_or_else(|| AwsError::internal("an imported table vanished"))
            })
            .map_err(internal)?;
        let format = match input.str("InputFormat") {
            Some("CSV") => Format::Csv,
            _ => Format::DynamoDbJson,
        };
        let csv = input.get("InputFormatOptions").and_then(|o| o.get("Csv"));
        let delimiter = csv
            .and_then(|c| c.str("Delimiter"))
            .and_then(|d| d.chars().next())
            .unwrap_or(',');
        let header: Option<Vec<String>> = csv.and_then(|c| c.get("HeaderList")).map(|list| {
            list.as_list()
                .unwrap_or_default()
                .iter()
                .filter_map(|h| h.as_str().map(str::to_string))
                .collect()
        });
        let gzipped = input.str("InputCompressionType") == Some("GZIP");
        let parse = |text: &str| match format {
            Format::DynamoDbJson => parse_dynamodb_json(text),
            Format::Csv => parse_csv(
                text,
                delimiter,
                header.as_deref(),
                &description["AttributeDefinitions"],
            ),
        };
        self.read_objects(ctx, &table, &source, keys, gzipped, parse, progress)
            .await
    }

    /// Reads the source's objects under `keys` (gzip when `gzipped`), each with `parse`,
    /// and stores their items in `table`.
    #[allow(clippy::too_many_arguments)]
    async fn read_objects(
        &self,
        ctx: &Context,
        table: &Table,
        source: &Value,
        keys: Vec<String>,
        gzipped: bool,
        parse: impl Fn(&str) -> Parsed,
        progress: &mut Progress,
    ) -> Result<(), Failure> {
        let internal = |e: AwsError| Failure {
            code: "InternalServerError".into(),
            message: e.message,
        };
        for key in keys {
            let bytes = self
                .source_object(ctx, source, &key)
                .await
                .map_err(s3_failure)?;
            progress.processed_bytes += bytes.len();
            let text = if gzipped {
                gzip::decompress_blocking(bytes).await.ok()
            } else {
                Some(bytes)
            }
            .and_then(|b| String::from_utf8(b).ok());
            let Some(text) = text else {
                progress.processed_items += 1;
                progress.errors += 1;
                continue;
            };
            self.store_items(ctx, table, parse(&text), progress)
                .map_err(internal)?;
        }
        Ok(())
    }

    pub(super) async fn import_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        if input.str("InputFormat") == Some("ION")
            || input.str("InputCompressionType") == Some("ZSTD")
        {
            return Err(AwsError::new(
                "NotImplemented",
                "Imports of ION or ZSTD sources are not implemented by Roto yet",
            )
            .with_status(501));
        }
        let parameters = input
            .get("TableCreationParameters")
            .cloned()
            .unwrap_or_else(Value::map);
        let name = parameters.str("TableName").unwrap_or_default().to_string();
        check_name(&name, "tableCreationParameters.tableName")?;
        let description = build_description(ctx, &name, &parameters)?;
        let now = now_millis();
        let conflict = || {
            AwsError::new(
                        "ImportConflictException",
                        "There was a conflict when importing from the specified S3 source. This can occur when the current import conflicts with a previous import request that had the same client token.",
            )
            .with_status(400)
        };
        if let Some(description) =
            self.replayed_request(ctx, "ddb_imports", input, now, conflict)?
        {
            return Ok(Value::map().with("ImportTableDescription", import_value(&description)));
        }
        let token = input.str("ClientToken");
        let request = task_records::request_key(input);
        if self
            .env
            .store
            .with(|c| load_table(c, ctx, &name))?
            .is_some()
        {
            return Err(AwsError::new(
                "ResourceInUseException",
                format!("Table already exists: {name}"),
            )
            .with_status(400));
        }
        let table_arn = table_arn(ctx, &name);
        let arn = format!("{table_arn}/import/{now:014}-{:08x}", fastrand::u32(..));
        let mut record = input.to_json();
        if let Json::Object(members) = &mut record {
            members.insert("ImportArn".into(), arn.clone().into());
            members.insert("ImportStatus".into(), "IN_PROGRESS".into());
            members.insert("TableArn".into(), table_arn.clone().into());
            members.insert("TableId".into(), description["TableId"].clone());
            members.insert("StartTime".into(), now.into());
            members
                .entry("InputCompressionType")
                .or_insert_with(|| "NONE".into());
        }
        let started = record.clone();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO ddb_imports
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
                    record.to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        let mut progress = Progress::default();
        let outcome = self
            .run_import(ctx, input, &name, &description, &mut progress)
            .await;
        let (status, failure) = match outcome {
            Err(failure) => ("FAILED", Some((failure.code, failure.message))),
            Ok(()) if progress.errors > 0 => (
                "FAILED",
                Some(("ItemValidationError".to_string(), ITEM_ERRORS.to_string())),
            ),
            Ok(()) => ("COMPLETED", None),
        };
        record["ImportStatus"] = status.into();
        record["EndTime"] = now_millis().into();
        record["ProcessedSizeBytes"] = progress.processed_bytes.into();
        record["ProcessedItemCount"] = progress.processed_items.into();
        record["ImportedItemCount"] = progress.imported_items.into();
        record["ErrorCount"] = progress.errors.into();
        if let Some((code, message)) = failure {
            record["FailureCode"] = code.into();
            record["FailureMessage"] = message.into();
        }
        self.save_description(ctx, "ddb_imports", &arn, &record)?;
        Ok(Value::map().with("ImportTableDescription", import_value(&started)))
    }

    pub(super) fn describe_import(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ImportArn").unwrap_or_default();
        let description = self
            .stored_description(ctx, "ddb_imports", arn)?
            .ok_or_else(|| import_not_found(arn))?;
        Ok(Value::map().with("ImportTableDescription", import_value(&description)))
    }

    pub(super) fn list_imports(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let table = input.str("TableArn");
        let limit = input.int("PageSize").unwrap_or(LIST_IMPORTS_MAX);
        let after = input
            .str("NextToken")
            .map(|token| {
                let arn = arn_of_token(token).unwrap_or_default();
                self.stored_description(ctx, "ddb_imports", &arn)?
                    .and_then(|d| d["StartTime"].as_i64())
                    .map(|created| (created, arn))
                    .ok_or_else(|| AwsError::validation("Invalid NextToken"))
            })
            .transpose()?
            .unwrap_or((i64::MIN, String::new()));
        let mut rows: Vec<String> = self.env.store.with(|c| {
            let mut select = c.prepare_cached(
                "SELECT description FROM ddb_imports
                 WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR table_arn = ?3)
                 AND (created, arn) > (?4, ?5) ORDER BY created, arn LIMIT ?6",
            )?;
            let rows = select.query_map(
                rusqlite::params![ctx.account, ctx.region, table, after.0, after.1, limit + 1],
                |r| r.get(0),
            )?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        let more = rows.len() as i64 > limit;
        rows.truncate(usize::try_from(limit).unwrap_or(0));
        let descriptions: Vec<Json> = rows
            .iter()
            .map(|d| serde_json::from_str(d).unwrap_or_default())
            .collect();
        let next = more
            .then(|| {
                descriptions
                    .last()
                    .and_then(|d| d["ImportArn"].as_str().map(next_token))
            })
            .flatten();
        // The summary members are a subset of the description's; the codec keeps only them.
        let summaries = descriptions.iter().map(import_value).collect();
        Ok(Value::map()
            .with("ImportSummaryList", Value::List(summaries))
            .with_opt("NextToken", next))
    }
}

/// The `ImportTableDescription` of a stored record (times kept as epoch millis).
fn import_value(description: &Json) -> Value {
    let mut value = Value::from_json(description);
    for member in ["StartTime", "EndTime"] {
        if let Some(Value::Integer(millis)) = value.get(member) {
            let millis = *millis;
            value.insert(member, Value::Timestamp(millis));
        }
    }
    value
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn next_tokens_have_the_models_form_and_carry_the_arn() {
        for arn in [
            "arn:aws:dynamodb:us-east-1:1:table/t/import/1-2",
            &"x".repeat(200),
        ] {
            let token = next_token(arn);
            assert!(token.len() >= 112 && token.len() % 16 == 0);
            assert_eq!(arn_of_token(&token).as_deref(), Some(arn));
        }
        assert_eq!(arn_of_token("zz"), None);
    }

    #[test]
    fn dynamodb_json_values_need_no_newlines_and_bad_ones_cost_their_line() {
        let text = "{\"Item\":{\"pk\":{\"S\":\"a\"}}}\n{\"Item\":{\"pk\":{\"S\":\"b\"}}}{\"Item\":{\"pk\":{\"S\":\"c\"}}}\n{\"pk\":{\"S\":\"no wrapper\"}}\n{broken\n{\"Item\":{\"pk\":{\"N\":\"x\"}}}\n{\"Item\":{\"pk\":{\"S\":\"d\"}}}\n";
        let parsed = parse_dynamodb_json(text);
        let names: Vec<Option<String>> = parsed
            .iter()
            .map(|i| {
                i.as_ref().map(|i| match &i["pk"] {
                    Attr::S(s) => s.clone(),
                    other => format!("{other:?}"),
                })
            })
            .collect();
        assert_eq!(
            names,
            vec![
                Some("a".into()),
                Some("b".into()),
                Some("c".into()),
                None,
                None,
                None,
                Some("d".into())
            ]
        );
    }

    #[test]
    fn csv_fields_follow_rfc_4180_and_definitions_type_them() {
        let records = csv_records("a,\"b,c\",\"say \"\"hi\"\"\"\r\n\"multi\nline\",,x\n", ',');
        assert_eq!(
            records,
            vec![
                vec!["a".to_string(), "b,c".into(), "say \"hi\"".into()],
                vec!["multi\nline".to_string(), String::new(), "x".into()],
            ]
        );
        let definitions = json!([{"AttributeName": "n", "AttributeType": "N"}]);
        let parsed = parse_csv("pk;n;note\nk1;5;\nk2;x;y\nk3;1\n", ';', None, &definitions);
        assert_eq!(parsed.len(), 3);
        let first = parsed[0].as_ref().unwrap();
        assert_eq!(first["n"], Attr::N(Number::parse("5").unwrap()));
        assert!(!first.contains_key("note"));
        assert!(parsed[1].is_none(), "a bad number refuses the item");
        assert!(parsed[2].is_none(), "a short row refuses the item");
        let headed = parse_csv(
            "k9,7\n",
            ',',
            Some(&["pk".into(), "n".into()]),
            &definitions,
        );
        assert_eq!(headed[0].as_ref().unwrap()["pk"], Attr::S("k9".into()));
    }
}
