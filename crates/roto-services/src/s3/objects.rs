//! Object operations: PutObject, GetObject, HeadObject, DeleteObject.

use std::collections::BTreeMap;

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use roto_chunked::{content_encoding_without_aws_chunked, ChecksumAlgorithm};
use roto_core::store::BlobReader;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Request, Response, Value};
use rusqlite::OptionalExtension;

use super::body::{self, FileBody};
use super::errors;
use super::{input_str, S3};

/// The content headers stored with an object: (input member, column).
const CONTENT_HEADERS: [(&str, &str); 5] = [
    ("ContentDisposition", "content_disposition"),
    ("ContentLanguage", "content_language"),
    ("CacheControl", "cache_control"),
    ("Expires", "expires"),
    ("ContentType", "content_type"),
];

/// The output member that carries a checksum (`ChecksumCRC32`).
pub(crate) fn checksum_member(alg: ChecksumAlgorithm) -> String {
    format!("Checksum{}", alg.name())
}

/// Object keys are at most 1024 bytes of UTF-8.
fn check_key(key: &str) -> AwsResult<()> {
    if key.len() > 1024 {
        return Err(AwsError::new("KeyTooLongError", "Your key is too long")
            .with_status(400)
            .with_field("Size", key.len())
            .with_field("MaxSizeAllowed", 1024i64));
    }
    Ok(())
}

/// An object's row, as GetObject and HeadObject read it.
struct Stored {
    blob: String,
    size: i64,
    etag: String,
    last_modified: i64,
    content_encoding: Option<String>,
    headers: Vec<(&'static str, Option<String>)>,
    metadata: String,
    checksum: Option<(String, String)>,
}

impl S3 {
    pub(crate) async fn put_object(&self, request: Request) -> AwsResult<Value> {
        let Request {
            input,
            body,
            headers,
        } = request;
        let bucket = input_str(&input, "Bucket").to_string();
        let key = input_str(&input, "Key").to_string();
        self.bucket(&bucket)?;
        check_key(&key)?;
        let inline = match input.get("Body") {
            Some(Value::Blob(b)) => Some(b.clone()),
            Some(Value::String(s)) => Some(s.clone().into_bytes()),
            _ => None,
        };
        let declared = ChecksumAlgorithm::ALL
            .iter()
            .any(|a| headers.contains_key(a.header_name()))
            || headers.contains_key("x-amz-trailer")
            || headers.contains_key("x-amz-sdk-checksum-algorithm");
        let upload = body::receive(&self.env.store, &headers, body, inline).await?;
        let etag = format!("\"{}\"", upload.md5_hex);
        let metadata = match input.get("Metadata").and_then(Value::as_map) {
            Some(m) => serde_json::Value::Object(
                m.iter()
                    .filter_map(|(k, v)| {
                        Some((
                            k.clone(),
                            serde_json::Value::String(v.as_str()?.to_string()),
                        ))
                    })
                    .collect(),
            )
            .to_string(),
            None => "{}".to_string(),
        };
        let content_encoding = input
            .str("ContentEncoding")
            .and_then(content_encoding_without_aws_chunked);
        let text = |name: &str| input.str(name).map(str::to_string);
        let (alg, checksum) = &upload.checksum;
        let size = i64::try_from(upload.size).unwrap_or(i64::MAX);
        let committed = self.env.store.transaction(|tx| {
            let exists = tx
                .query_row(
                    "SELECT 1 FROM s3_buckets WHERE name = ?1",
                    [&bucket],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if !exists {
                return Err(errors::no_such_bucket(&bucket));
            }
            let old: Option<String> = tx
                .query_row(
                    "SELECT blob FROM s3_objects WHERE bucket = ?1 AND key = ?2",
                    [&bucket, &key],
                    |r| r.get(0),
                )
                .optional()?;
            tx.execute(
                "INSERT OR REPLACE INTO s3_objects (bucket, key, blob, size, etag, last_modified,
                    content_type, content_encoding, content_disposition, content_language,
                    cache_control, expires, metadata, checksum_algorithm, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15)",
                rusqlite::params![
                    bucket,
                    key,
                    upload.blob,
                    size,
                    etag,
                    now_millis() / 1000 * 1000,
                    text("ContentType"),
                    content_encoding,
                    text("ContentDisposition"),
                    text("ContentLanguage"),
                    text("CacheControl"),
                    text("Expires"),
                    metadata,
                    alg.name(),
                    checksum,
                ],
            )?;
            Ok(old)
        });
        match committed {
            Ok(Some(old)) => self.env.store.remove_blob(&old),
            Ok(None) => {}
            Err(e) => {
                self.env.store.remove_blob(&upload.blob);
                return Err(e);
            }
        }
        let mut out = Value::map().with("ETag", etag);
        if declared {
            out.insert(checksum_member(*alg), checksum.clone());
            out.insert("ChecksumType", "FULL_OBJECT");
        }
        Ok(out)
    }

    fn stored(
        &self,
        bucket: &str,
        key: &str,
        open: bool,
    ) -> AwsResult<(Stored, Option<BlobReader>)> {
        self.env.store.with(|c| {
            let row = c
                .prepare_cached(
                    "SELECT blob, size, etag, last_modified, content_encoding, content_disposition,
                        content_language, cache_control, expires, content_type, metadata,
                        checksum_algorithm, checksum
                     FROM s3_objects WHERE bucket = ?1 AND key = ?2",
                )?
                .query_row([bucket, key], |r| {
                    let mut headers = Vec::with_capacity(CONTENT_HEADERS.len());
                    for (i, (member, _)) in CONTENT_HEADERS.iter().enumerate() {
                        headers.push((*member, r.get::<_, Option<String>>(5 + i)?));
                    }
                    let alg: Option<String> = r.get(11)?;
                    let sum: Option<String> = r.get(12)?;
                    Ok(Stored {
                        blob: r.get(0)?,
                        size: r.get(1)?,
                        etag: r.get(2)?,
                        last_modified: r.get(3)?,
                        content_encoding: r.get(4)?,
                        headers,
                        metadata: r.get(10)?,
                        checksum: alg.zip(sum),
                    })
                })
                .optional()?;
            let Some(row) = row else {
                return Err(errors::no_such_key(key));
            };
            // Opened under the store lock: a concurrent replace removes the old blob only
            // after its commit, which this lock orders after the open.
            let file = if open {
                Some(self.env.store.open_blob(c, &row.blob)?)
            } else {
                None
            };
            Ok((row, file))
        })
    }

    pub(crate) fn get_object(&self, input: &Value, head: bool) -> AwsResult<Response> {
        let bucket = input_str(input, "Bucket");
        let key = input_str(input, "Key");
        self.bucket(bucket)?;
        let (row, file) = self.stored(bucket, key, !head)?;
        let metadata: BTreeMap<String, Value> =
            serde_json::from_str::<serde_json::Value>(&row.metadata)
                .ok()
                .and_then(|j| j.as_object().cloned())
                .map(|o| {
                    o.into_iter()
                        .filter_map(|(k, v)| Some((k, Value::String(v.as_str()?.to_string()))))
                        .collect()
                })
                .unwrap_or_default();
        let mut out = Value::map()
            .with("ContentLength", row.size)
            .with("ETag", row.etag)
            .with("LastModified", Value::Timestamp(row.last_modified))
            .with("AcceptRanges", "bytes")
            .with("ContentType", "binary/octet-stream".to_string())
            .with_opt("ContentEncoding", row.content_encoding);
        for (member, value) in row.headers {
            if let Some(v) = value {
                out.insert(member, v);
            }
        }
        if !metadata.is_empty() {
            out.insert("Metadata", Value::Map(metadata));
        }
        if input.str("ChecksumMode") == Some("ENABLED") {
            if let Some((alg, sum)) = row.checksum {
                if let Some(alg) = ChecksumAlgorithm::from_name(&alg) {
                    out.insert(checksum_member(alg), sum);
                    out.insert("ChecksumType", "FULL_OBJECT");
                }
            }
        }
        let body = file.map(|blob| match blob {
            BlobReader::File(f) => FileBody::new(f, u64::try_from(row.size).unwrap_or(0)).boxed(),
            BlobReader::Memory(bytes) => Full::new(Bytes::from(bytes))
                .map_err(|never| match never {})
                .boxed(),
        });
        Ok(Response { output: out, body })
    }

    pub(crate) fn delete_object(&self, input: &Value) -> AwsResult<Value> {
        let bucket = input_str(input, "Bucket");
        let key = input_str(input, "Key");
        self.bucket(bucket)?;
        let old: Option<String> = self.env.store.with(|c| {
            c.query_row(
                "DELETE FROM s3_objects WHERE bucket = ?1 AND key = ?2 RETURNING blob",
                [bucket, key],
                |r| r.get(0),
            )
            .optional()
            .map_err(AwsError::from)
        })?;
        if let Some(blob) = old {
            self.env.store.remove_blob(&blob);
        }
        Ok(Value::map())
    }
}
