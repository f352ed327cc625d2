//! Object annotations: named payloads (1 byte to 1 MiB of UTF-8 text, names of 1 to 512
//! bytes, at most 1,000 per object version) attached to an object version and put, read,
//! listed and deleted without changing the object (PutObjectAnnotation,
//! GetObjectAnnotation, ListObjectAnnotations, DeleteObjectAnnotation).
//!
//! They live in `s3_annotations`, keyed by the version's sequence number, so that a new
//! version of the key starts without annotations and a version's annotations stay with it,
//! until the version itself goes ([`remove_version`]).

use md5::{Digest, Md5};
use roto_chunked::ChecksumAlgorithm;
use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Request, Response, Value};
use rusqlite::{Connection, OptionalExtension};

use super::body::memory_body;
use super::objects::checksum_member;
use super::versions::{self, ObjectRow};
use super::{conditions, errors, input_str, sse, Bucket, S3};

/// The annotations' table.
pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS s3_annotations (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    seq INTEGER NOT NULL,
    name TEXT NOT NULL,
    payload BLOB NOT NULL,
    etag TEXT NOT NULL,
    last_modified INTEGER NOT NULL,
    checksum_algorithm TEXT,
    checksum TEXT,
    PRIMARY KEY (bucket, key, seq, name)
) WITHOUT ROWID;
";

const MAX_PAYLOAD: usize = 1 << 20;
const MAX_NAME: usize = 512;
const MAX_PER_VERSION: i64 = 1000;

/// Removes the annotations of a version that is gone for good (deleted, or overwritten
/// where versioning keeps no copy).
pub(crate) fn remove_version(c: &Connection, bucket: &str, key: &str, seq: i64) -> AwsResult<()> {
    c.execute_cached(
        "DELETE FROM s3_annotations WHERE bucket = ?1 AND key = ?2 AND seq = ?3",
        rusqlite::params![bucket, key, seq],
    )?;
    Ok(())
}

/// Copies a version's annotations to another version (CopyObject's default,
/// `x-amz-object-annotation-directive: COPY`), each as it was.
pub(crate) fn copy_version(
    c: &Connection,
    (from_bucket, from_key, from_seq): (&str, &str, i64),
    (to_bucket, to_key, to_seq): (&str, &str, i64),
) -> AwsResult<()> {
    c.execute_cached(
        "INSERT INTO s3_annotations
             SELECT ?4, ?5, ?6, name, payload, etag, last_modified, checksum_algorithm, checksum
             FROM s3_annotations WHERE bucket = ?1 AND key = ?2 AND seq = ?3",
        rusqlite::params![from_bucket, from_key, from_seq, to_bucket, to_key, to_seq],
    )?;
    Ok(())
}

fn no_such_annotation(name: &str) -> AwsError {
    AwsError::new(
        "NoSuchAnnotation",
        "The specified annotation does not exist.",
    )
    .with_status(404)
    .with_field("AnnotationName", name)
}

/// Checks an annotation name: 1 to 512 bytes without control characters.
fn check_name(name: &str) -> AwsResult<()> {
    if name.len() > MAX_NAME {
        return Err(AwsError::new(
            "AnnotationNameTooLong",
            "The annotation name exceeds 512 bytes.",
        )
        .with_status(400));
    }
    if name.is_empty() || name.chars().any(char::is_control) {
        return Err(
            AwsError::new("InvalidAnnotationName", "The annotation name is not valid.")
                .with_status(400),
        );
    }
    Ok(())
}

/// One stored annotation.
struct Annotation {
    name: String,
    payload: Vec<u8>,
    etag: String,
    last_modified: i64,
    checksum: Option<(String, String)>,
}

impl Annotation {
    fn read(r: &rusqlite::Row<'_>) -> rusqlite::Result<Annotation> {
        let algorithm: Option<String> = r.get(5)?;
        let checksum: Option<String> = r.get(6)?;
        Ok(Annotation {
            name: r.get(0)?,
            payload: r.get(1)?,
            etag: r.get(2)?,
            last_modified: r.get(3)?,
            checksum: algorithm.zip(checksum),
        })
    }

    /// The checksum member (`ChecksumCRC32`) and its value.
    fn checksum_output(&self) -> Option<(String, String)> {
        let (name, value) = self.checksum.as_ref()?;
        let alg = ChecksumAlgorithm::from_name(name)?;
        Some((checksum_member(alg), value.clone()))
    }
}

/// The checksum a request declares for the payload, checked against it.
fn declared_checksum(input: &Value, payload: &[u8]) -> AwsResult<Option<(String, String)>> {
    for alg in ChecksumAlgorithm::ALL {
        if let Some(given) = input.str(&checksum_member(alg)) {
            if alg.checksum_base64(payload) != given {
                return Err(errors::bad_checksum(alg.name()));
            }
            return Ok(Some((alg.name().to_string(), given.to_string())));
        }
    }
    Ok(None)
}

impl S3 {
    /// The object version an annotation operation names, with its bucket.
    fn annotated(&self, input: &Value, method: &str) -> AwsResult<(Bucket, ObjectRow)> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let key = input_str(input, "Key");
        let row = self.env.store.with(|c| {
            versions::find_object(c, &bucket.name, key, input.str("VersionId"), method)
        })?;
        if let Some(expected) = input.str("ObjectIfMatch") {
            if !conditions::etag_matches(expected, &row.etag) {
                return Err(errors::precondition_failed("x-amz-object-if-match"));
            }
        }
        Ok((bucket, row))
    }

    pub(crate) async fn put_object_annotation(&self, request: Request) -> AwsResult<Value> {
        let input = &request.input;
        let name = input_str(input, "AnnotationName");
        check_name(name)?;
        let payload = match request.body {
            Some(body) => read_limited(body).await?,
            None => input
                .get("AnnotationPayload")
                .and_then(Value::as_blob)
                .unwrap_or_default()
                .to_vec(),
        };
        if payload.is_empty() || payload.len() > MAX_PAYLOAD {
            return Err(errors::invalid_request(
                "The annotation payload must be between 1 byte and 1 MiB.",
            ));
        }
        if std::str::from_utf8(&payload).is_err() {
            return Err(AwsError::new(
                "UnsupportedMediaType",
                "The annotation payload must be UTF-8 text.",
            )
            .with_status(415));
        }
        let checksum = declared_checksum(input, &payload)?;
        let (bucket, row) = self.annotated(input, "PUT")?;
        let encryption = sse::echo(&row.headers);
        if encryption.get("SSECustomerAlgorithm").is_some() {
            return Err(errors::invalid_request(
                "Objects encrypted with SSE-C cannot have annotations.",
            ));
        }
        let key = input_str(input, "Key");
        let etag = format!("\"{}\"", hex::encode(Md5::digest(&payload)));
        let now = roto_core::timestamp::now_millis();
        self.env.store.transaction(|tx| {
            let count: i64 = tx.query_row(
                "SELECT count(*) FROM s3_annotations
                 WHERE bucket = ?1 AND key = ?2 AND seq = ?3 AND name <> ?4",
                rusqlite::params![bucket.name, key, row.seq, name],
                |r| r.get(0),
            )?;
            if count >= MAX_PER_VERSION {
                return Err(AwsError::new(
                    "AnnotationLimitExceeded",
                    "The object already has the maximum of 1,000 annotations.",
                )
                .with_status(400));
            }
            tx.execute(
                "INSERT OR REPLACE INTO s3_annotations
                 (bucket, key, seq, name, payload, etag, last_modified, checksum_algorithm, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9)",
                rusqlite::params![
                    bucket.name,
                    key,
                    row.seq,
                    name,
                    payload,
                    etag,
                    now,
                    checksum.as_ref().map(|c| &c.0),
                    checksum.as_ref().map(|c| &c.1),
                ],
            )?;
            Ok::<_, AwsError>(())
        })?;
        let mut out = Value::map()
            .with("Key", key)
            .with("AnnotationName", name)
            .with("ETag", etag)
            .with_opt(
                "ObjectVersionId",
                super::objects::version_header(&bucket, &row),
            );
        if let Some(alg) = checksum.and_then(|(n, _)| ChecksumAlgorithm::from_name(&n)) {
            out.insert(checksum_member(alg), alg.checksum_base64(&payload));
            out.insert("ChecksumType", "FULL_OBJECT");
        }
        if let Some(sse) = encryption.str("ServerSideEncryption") {
            out.insert("ServerSideEncryption", sse);
        }
        Ok(out)
    }

    fn find_annotation(
        &self,
        bucket: &str,
        row: &ObjectRow,
        key: &str,
        name: &str,
    ) -> AwsResult<Annotation> {
        self.env
            .store
            .with(|c| {
                c.query_row(
                    "SELECT name, payload, etag, last_modified, 0, checksum_algorithm, checksum
                     FROM s3_annotations WHERE bucket = ?1 AND key = ?2 AND seq = ?3 AND name = ?4",
                    rusqlite::params![bucket, key, row.seq, name],
                    Annotation::read,
                )
                .optional()
                .map_err(AwsError::from)
            })?
            .ok_or_else(|| no_such_annotation(name))
    }

    pub(crate) fn get_object_annotation(&self, input: &Value) -> AwsResult<Response> {
        let (bucket, row) = self.annotated(input, "GET")?;
        let key = input_str(input, "Key");
        let annotation =
            self.find_annotation(&bucket.name, &row, key, input_str(input, "AnnotationName"))?;
        let mut out = Value::map()
            .with("ContentLength", annotation.payload.len() as i64)
            .with("ETag", annotation.etag.as_str())
            .with("LastModified", Value::Timestamp(annotation.last_modified))
            .with_opt(
                "ObjectVersionId",
                super::objects::version_header(&bucket, &row),
            )
            .with_opt(
                "ServerSideEncryption",
                sse::echo(&row.headers).str("ServerSideEncryption"),
            );
        if input.str("ChecksumMode") == Some("ENABLED") {
            if let Some((member, value)) = annotation.checksum_output() {
                out.insert(member, value);
                out.insert("ChecksumType", "FULL_OBJECT");
            }
        }
        Ok(Response::new(out).with_body(Some(memory_body(annotation.payload))))
    }

    pub(crate) fn list_object_annotations(&self, input: &Value) -> AwsResult<Value> {
        let (bucket, row) = self.annotated(input, "GET")?;
        let key = input_str(input, "Key");
        let prefix = input.str("AnnotationPrefix").unwrap_or_default();
        let max = input
            .int("MaxAnnotationResults")
            .unwrap_or(1000)
            .clamp(1, 1000);
        let after = input.str("ContinuationToken").unwrap_or_default();
        let mut annotations: Vec<Annotation> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, payload, etag, last_modified, 0, checksum_algorithm, checksum
                 FROM s3_annotations WHERE bucket = ?1 AND key = ?2 AND seq = ?3
                   AND substr(name, 1, length(?4)) = ?4 AND name > ?5
                 ORDER BY name LIMIT ?6",
            )?;
            let rows = stmt.query_map(
                rusqlite::params![bucket.name, key, row.seq, prefix, after, max + 1],
                Annotation::read,
            )?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let truncated = annotations.len() as i64 > max;
        annotations.truncate(max as usize);
        let listed: Vec<Value> = annotations
            .iter()
            .map(|a| {
                let algorithms: Vec<Value> = a
                    .checksum
                    .iter()
                    .map(|(alg, _)| Value::from(alg.as_str()))
                    .collect();
                Value::map()
                    .with("AnnotationName", a.name.as_str())
                    .with("LastModified", Value::Timestamp(a.last_modified))
                    .with("ETag", a.etag.as_str())
                    .with("Size", a.payload.len() as i64)
                    .with("ChecksumAlgorithm", algorithms)
            })
            .collect();
        Ok(Value::map()
            .with("Bucket", bucket.name.as_str())
            .with("Key", key)
            .with("AnnotationCount", listed.len() as i64)
            .with("MaxAnnotationResults", max)
            .with_opt("AnnotationPrefix", input.str("AnnotationPrefix"))
            .with_opt("ContinuationToken", input.str("ContinuationToken"))
            .with_opt(
                "NextContinuationToken",
                truncated
                    .then(|| annotations.last().map(|a| a.name.clone()))
                    .flatten(),
            )
            .with_opt(
                "ObjectVersionId",
                super::objects::version_header(&bucket, &row),
            )
            .with("Annotations", listed))
    }

    pub(crate) fn delete_object_annotation(&self, input: &Value) -> AwsResult<Value> {
        let (bucket, row) = self.annotated(input, "DELETE")?;
        let key = input_str(input, "Key");
        let name = input_str(input, "AnnotationName");
        let deleted = self.env.store.with(|c| {
            c.execute(
                "DELETE FROM s3_annotations WHERE bucket = ?1 AND key = ?2 AND seq = ?3 AND name = ?4",
                rusqlite::params![bucket.name, key, row.seq, name],
            )
            .map_err(AwsError::from)
        })?;
        if deleted == 0 {
            return Err(no_such_annotation(name));
        }
        Ok(Value::map().with_opt(
            "ObjectVersionId",
            super::objects::version_header(&bucket, &row),
        ))
    }
}

/// A request body read whole, refused past the largest payload.
async fn read_limited(body: roto_core::dispatch::Body) -> AwsResult<Vec<u8>> {
    use http_body_util::BodyExt;
    let mut body = body;
    let mut out = Vec::new();
    while let Some(frame) = body.frame().await {
        if let Ok(data) = frame.map_err(AwsError::from)?.into_data() {
            out.extend_from_slice(&data);
            if out.len() > MAX_PAYLOAD {
                return Err(errors::invalid_request(
                    "The annotation payload must be between 1 byte and 1 MiB.",
                ));
            }
        }
    }
    Ok(out)
}
