//! A Distributed Map's S3 ends: `ItemReader` (items from an object holding a JSON array,
//! JSON Lines or CSV, or from an object listing) and `ResultWriter` (the child executions'
//! results as objects under a prefix, with a `manifest.json`), both through S3's
//! operations on the dispatcher. Their failures are `States.ItemReaderFailed` and
//! `States.ResultWriterFailed`.

use std::sync::Arc;

use roto_core::{Request, Value};
use serde_json::{json, Map, Value as Json};

use super::io::Scope;
use super::jsonata::Query;
use super::{Failure, Run};

/// A reader's or writer's S3 parameters: `Parameters` (JSONPath) or `Arguments` (JSONata).
pub(super) fn parameters(
    scope: &Scope<'_>,
    holder: &Json,
    input: &Json,
    jsonata: bool,
) -> Result<Json, Failure> {
    let params = match jsonata {
        true => Query::new(scope, input, None, None).field(holder, "Arguments")?,
        false => holder
            .get("Parameters")
            .map(|t| scope.template(t, input))
            .transpose()?,
    };
    Ok(params.unwrap_or_else(|| json!({})))
}

/// The largest object an `ItemReader` reads (it is parsed in memory).
const MAX_OBJECT: i64 = 256 * 1024 * 1024;

fn reader_failed(cause: impl Into<String>) -> Failure {
    Failure::new("States.ItemReaderFailed", cause)
}

/// A string parameter, or an empty string.
fn text<'a>(params: &'a Json, name: &str) -> &'a str {
    params.get(name).and_then(Json::as_str).unwrap_or_default()
}

impl Run {
    /// The items an `ItemReader` reads, at most its `ReaderConfig.MaxItems`.
    pub(super) async fn read_items(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        reader: &Json,
        input: &Json,
        jsonata: bool,
    ) -> Result<Vec<Json>, Failure> {
        let params = parameters(scope, reader, input, jsonata)?;
        let config = reader.get("ReaderConfig").cloned().unwrap_or_default();
        let resource = text(reader, "Resource");
        let mut items = match resource {
            "arn:aws:states:::s3:getObject" => {
                let request = Value::map()
                    .with("Bucket", text(&params, "Bucket"))
                    .with("Key", text(&params, "Key"))
                    .with_opt("VersionId", params.get("VersionId").and_then(Json::as_str));
                let response = self
                    .call_request("s3", "GetObject", Request::new(request))
                    .await
                    .map_err(|e| reader_failed(e.message))?;
                let size = response.output.int("ContentLength").unwrap_or(0);
                if size > MAX_OBJECT {
                    return Err(reader_failed(format!(
                        "The object is {size} bytes; Roto reads items from objects of at most {MAX_OBJECT} bytes"
                    )));
                }
                let body = response
                    .into_payload()
                    .await
                    .map_err(|e| reader_failed(e.message))?;
                parse_object(&body, &config)?
            }
            "arn:aws:states:::s3:listObjectsV2" => self.list_objects(&params).await?,
            other => {
                return Err(reader_failed(format!(
                    "The ItemReader resource '{other}' is not supported"
                )))
            }
        };
        let max = match config.get("MaxItemsPath").and_then(Json::as_str) {
            Some(path) => scope.select(path, input)?.as_u64(),
            None => config.get("MaxItems").and_then(Json::as_u64),
        };
        if let Some(max) = max.filter(|m| *m > 0) {
            items.truncate(usize::try_from(max).unwrap_or(usize::MAX));
        }
        Ok(items)
    }

    /// Every object a listing finds, as `{Etag, Key, LastModified, Size, StorageClass}`.
    async fn list_objects(&self, params: &Json) -> Result<Vec<Json>, Failure> {
        let mut items = Vec::new();
        let mut token: Option<String> = None;
        loop {
            let request = Value::map()
                .with("Bucket", text(params, "Bucket"))
                .with_opt("Prefix", params.get("Prefix").and_then(Json::as_str))
                .with_opt("ContinuationToken", token.take());
            let page = self
                .call("s3", "ListObjectsV2", request)
                .await
                .map_err(|e| reader_failed(e.message))?;
            for object in page
                .get("Contents")
                .and_then(Value::as_list)
                .unwrap_or_default()
            {
                let modified = match object.get("LastModified") {
                    Some(Value::Timestamp(ms)) => roto_core::timestamp::format(
                        *ms,
                        roto_core::timestamp::TimestampFormat::Iso8601,
                    ),
                    _ => String::new(),
                };
                items.push(json!({
                    "Etag": object.str("ETag").unwrap_or_default(),
                    "Key": object.str("Key").unwrap_or_default(),
                    "LastModified": modified,
                    "Size": object.int("Size").unwrap_or(0),
                    "StorageClass": object.str("StorageClass").unwrap_or("STANDARD"),
                }));
            }
            match page.str("NextContinuationToken") {
                Some(next) if page.bool("IsTruncated") == Some(true) => {
                    token = Some(next.to_string())
                }
                _ => return Ok(items),
            }
        }
    }

    /// Writes the results under `Prefix/<map run id>/` and answers the state's result:
    /// the map run's ARN and where its manifest is.
    pub(super) async fn write_results(
        &self,
        params: &Json,
        map_run_arn: &str,
        succeeded: &[Json],
        failed: &[Json],
        lines: bool,
    ) -> Result<Json, Failure> {
        let written = |e: roto_core::AwsError| Failure::new("States.ResultWriterFailed", e.message);
        let bucket = text(params, "Bucket");
        let prefix = match text(params, "Prefix") {
            "" => String::new(),
            p if p.ends_with('/') => p.to_string(),
            p => format!("{p}/"),
        };
        let id = map_run_arn.rsplit(':').next().unwrap_or_default();
        let mut files = Map::new();
        for (status, results) in [
            ("FAILED", failed),
            ("PENDING", &[][..]),
            ("SUCCEEDED", succeeded),
        ] {
            let mut listed = Vec::new();
            if !results.is_empty() {
                let key = format!("{prefix}{id}/{status}_0.json");
                let body = encode(results, lines);
                listed.push(json!({"Key": key, "Size": body.len()}));
                self.put_object(bucket, &key, body).await.map_err(written)?;
            }
            files.insert(status.into(), Json::Array(listed));
        }
        let manifest = json!({
            "DestinationBucket": bucket,
            "MapRunArn": map_run_arn,
            "ResultFiles": files,
        });
        let key = format!("{prefix}{id}/manifest.json");
        self.put_object(bucket, &key, manifest.to_string().into_bytes())
            .await
            .map_err(written)?;
        Ok(json!({
            "MapRunArn": map_run_arn,
            "ResultWriterDetails": {"Bucket": bucket, "Key": key},
        }))
    }

    async fn put_object(
        &self,
        bucket: &str,
        key: &str,
        body: Vec<u8>,
    ) -> Result<(), roto_core::AwsError> {
        let request = Value::map()
            .with("Bucket", bucket)
            .with("Key", key)
            .with("Body", Value::Blob(body));
        self.call("s3", "PutObject", request).await.map(|_| ())
    }
}

/// Results as a JSON array, or as JSON Lines.
fn encode(results: &[Json], lines: bool) -> Vec<u8> {
    if !lines {
        return Json::Array(results.to_vec()).to_string().into_bytes();
    }
    let mut out = String::new();
    for r in results {
        out.push_str(&r.to_string());
        out.push('\n');
    }
    out.into_bytes()
}

/// An object's items by `ReaderConfig.InputType`: a JSON array, JSON Lines, or CSV rows as
/// objects keyed by the first row (`CSVHeaderLocation` `FIRST_ROW`) or by `CSVHeaders`.
fn parse_object(body: &[u8], config: &Json) -> Result<Vec<Json>, Failure> {
    let text =
        std::str::from_utf8(body).map_err(|_| reader_failed("The object is not UTF-8 text"))?;
    match config
        .get("InputType")
        .and_then(Json::as_str)
        .unwrap_or("JSON")
    {
        "JSON" => match serde_json::from_str(text) {
            Ok(Json::Array(items)) => Ok(items),
            Ok(_) => Err(reader_failed("Attempting to map over non-iterable node.")),
            Err(e) => Err(reader_failed(format!("The object is not valid JSON: {e}"))),
        },
        "JSONL" => text
            .lines()
            .filter(|l| !l.trim().is_empty())
            .map(|l| {
                serde_json::from_str(l)
                    .map_err(|e| reader_failed(format!("A line is not valid JSON: {e}")))
            })
            .collect(),
        "CSV" => csv_items(text, config),
        other => Err(reader_failed(format!(
            "The InputType '{other}' is not supported"
        ))),
    }
}

fn csv_items(text: &str, config: &Json) -> Result<Vec<Json>, Failure> {
    let delimiter = match config.get("CSVDelimiter").and_then(Json::as_str) {
        Some("PIPE") => '|',
        Some("SEMICOLON") => ';',
        Some("SPACE") => ' ',
        Some("TAB") => '\t',
        _ => ',',
    };
    let mut rows = csv_rows(text, delimiter).into_iter();
    let headers: Vec<String> = match config.get("CSVHeaderLocation").and_then(Json::as_str) {
        Some("GIVEN") => config
            .get("CSVHeaders")
            .and_then(Json::as_array)
            .into_iter()
            .flatten()
            .filter_map(|h| h.as_str().map(str::to_string))
            .collect(),
        _ => rows.next().unwrap_or_default(),
    };
    if headers.is_empty() {
        return Err(reader_failed("The CSV headers are missing"));
    }
    rows.map(|row| {
        if row.len() > headers.len() {
            return Err(reader_failed(format!(
                "A CSV row has {} fields but there are {} headers",
                row.len(),
                headers.len()
            )));
        }
        let mut item = Map::new();
        for (i, header) in headers.iter().enumerate() {
            let value = row.get(i).cloned().unwrap_or_default();
            item.insert(header.clone(), Json::String(value));
        }
        Ok(Json::Object(item))
    })
    .collect()
}

/// CSV rows (RFC 4180: quoted fields may hold the delimiter, doubled quotes and line
/// breaks); blank lines are skipped.
fn csv_rows(text: &str, delimiter: char) -> Vec<Vec<String>> {
    let mut rows = Vec::new();
    let (mut row, mut field) = (Vec::new(), String::new());
    let (mut quoted, mut chars) = (false, text.chars().peekable());
    while let Some(c) = chars.next() {
        match c {
            '"' if quoted && chars.peek() == Some(&'"') => {
                field.push('"');
                chars.next();
            }
            '"' => quoted = !quoted,
            c if c == delimiter && !quoted => row.push(std::mem::take(&mut field)),
            '\r' if !quoted => {}
            '\n' if !quoted => {
                row.push(std::mem::take(&mut field));
                if !(row.len() == 1 && row[0].is_empty()) {
                    rows.push(std::mem::take(&mut row));
                }
                row.clear();
            }
            c => field.push(c),
        }
    }
    if !field.is_empty() || !row.is_empty() {
        row.push(field);
        rows.push(row);
    }
    rows
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn csv_reads_quotes_delimiters_and_given_headers() {
        let rows = csv_rows("a,b\n\"x, y\",\"say \"\"hi\"\"\"\r\n\n1,2", ',');
        assert_eq!(
            rows,
            vec![vec!["a", "b"], vec!["x, y", "say \"hi\""], vec!["1", "2"]]
        );
        let items = csv_items("1|2\n3|4\n", &json!({"CSVHeaderLocation": "GIVEN", "CSVHeaders": ["p", "q"], "CSVDelimiter": "PIPE"})).unwrap();
        assert_eq!(
            items,
            vec![json!({"p": "1", "q": "2"}), json!({"p": "3", "q": "4"})]
        );
        assert!(csv_items("a\n1,2\n", &json!({})).is_err());
    }

    #[test]
    fn objects_parse_by_input_type() {
        assert_eq!(
            parse_object(b"[1,2]", &json!({})).unwrap(),
            vec![json!(1), json!(2)]
        );
        assert_eq!(
            parse_object(b"{\"a\":1}\n\n{\"a\":2}\n", &json!({"InputType": "JSONL"})).unwrap(),
            vec![json!({"a": 1}), json!({"a": 2})]
        );
        let f = parse_object(b"{}", &json!({})).unwrap_err();
        assert_eq!(f.error, "States.ItemReaderFailed");
    }
}
