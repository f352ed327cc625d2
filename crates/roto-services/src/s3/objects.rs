//! Object operations: PutObject, GetObject, HeadObject, DeleteObject, DeleteObjects,
//! GetObjectAttributes.

use std::collections::BTreeMap;
use std::io::{Seek, SeekFrom};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use roto_chunked::{content_encoding_without_aws_chunked, ChecksumAlgorithm};
use roto_core::dispatch::Body;
use roto_core::store::Cached;
use roto_core::store::{BlobReader, FinishedBlob};
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Request, Response, Value};

use super::body::{self, FileBody, Upload};
use super::conditions::{self, ByteRange};
use super::errors;
use super::lock;
use super::restore;
use super::sse;
use super::tagging;
use super::versions::{self, Deleted, Found, ObjectRow};
use super::{input_str, Bucket, S3};

/// The input members stored with an object and returned as they were on GET and HEAD
/// (the Object Lock members are stored too, once checked: see `lock.rs`).
const STORED_HEADERS: [&str; 12] = [
    "ContentType",
    "ContentEncoding",
    "ContentDisposition",
    "ContentLanguage",
    "CacheControl",
    "Expires",
    "WebsiteRedirectLocation",
    "ServerSideEncryption",
    "SSEKMSKeyId",
    "BucketKeyEnabled",
    "SSECustomerAlgorithm",
    "SSECustomerKeyMD5",
];

/// The largest single PutObject (5 GiB).
const MAX_PUT: i64 = 5 * 1024 * 1024 * 1024;

/// The storage classes PutObject accepts.
const STORAGE_CLASSES: [&str; 11] = [
    "STANDARD",
    "REDUCED_REDUNDANCY",
    "STANDARD_IA",
    "ONEZONE_IA",
    "INTELLIGENT_TIERING",
    "GLACIER",
    "DEEP_ARCHIVE",
    "OUTPOSTS",
    "GLACIER_IR",
    "SNOW",
    "EXPRESS_ONEZONE",
];

/// The output member that carries a checksum (`ChecksumCRC32`).
pub(crate) fn checksum_member(alg: ChecksumAlgorithm) -> String {
    format!("Checksum{}", alg.name())
}

/// Object keys are at most 1024 bytes of UTF-8.
pub(crate) fn check_key(key: &str) -> AwsResult<()> {
    if key.len() > 1024 {
        return Err(AwsError::new("KeyTooLongError", "Your key is too long")
            .with_status(400)
            .with_field("Size", key.len())
            .with_field("MaxSizeAllowed", 1024i64));
    }
    Ok(())
}

/// The storage class an input asks for, checked.
pub(crate) fn storage_class(input: &Value) -> AwsResult<Option<String>> {
    match input.str("StorageClass") {
        None | Some("STANDARD") => Ok(None),
        Some(c) if STORAGE_CLASSES.contains(&c) => Ok(Some(c.to_string())),
        Some(c) => Err(errors::invalid_storage_class(c)),
    }
}

/// The stored header members of an input, as a JSON object (`aws-chunked` dropped from
/// `Content-Encoding`).
pub(crate) fn stored_headers(input: &Value) -> String {
    let mut map = serde_json::Map::new();
    for member in STORED_HEADERS {
        let value = match (member, input.get(member)) {
            ("ContentEncoding", Some(Value::String(s))) => {
                content_encoding_without_aws_chunked(s).map(serde_json::Value::String)
            }
            (_, Some(Value::String(s))) => Some(serde_json::Value::String(s.clone())),
            (_, Some(Value::Bool(b))) => Some(serde_json::Value::Bool(*b)),
            _ => None,
        };
        if let Some(v) = value {
            map.insert(member.to_string(), v);
        }
    }
    serde_json::Value::Object(map).to_string()
}

/// Stored headers with some members changed (timestamps are stored as epoch millis).
pub(crate) fn edit_headers(
    headers: &str,
    edit: impl FnOnce(&mut serde_json::Map<String, serde_json::Value>),
) -> String {
    let mut map = match serde_json::from_str(headers) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => serde_json::Map::new(),
    };
    edit(&mut map);
    serde_json::Value::Object(map).to_string()
}

/// The most user metadata an object may carry: the UTF-8 bytes of every key (without
/// `x-amz-meta-`) and value, summed.
const MAX_METADATA: usize = 2048;

/// User metadata of an input, as a JSON object; `MetadataTooLarge` past S3's 2 KB.
pub(crate) fn metadata_json(input: &Value) -> AwsResult<String> {
    let map: serde_json::Map<String, serde_json::Value> = input
        .get("Metadata")
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.into())))
        .collect();
    let size: usize = map
        .iter()
        .map(|(k, v)| k.len() + v.as_str().map_or(0, str::len))
        .sum();
    if size > MAX_METADATA {
        return Err(errors::metadata_too_large(size, MAX_METADATA));
    }
    Ok(serde_json::Value::Object(map).to_string())
}

/// A version's stored headers (its `headers` column), parsed once for a read's checks and
/// output.
pub(crate) type StoredHeaders = serde_json::Map<String, serde_json::Value>;

/// Parses a JSON object column (empty if it is not one).
pub(crate) fn stored_map(text: &str) -> StoredHeaders {
    match serde_json::from_str(text) {
        Ok(serde_json::Value::Object(map)) => map,
        _ => StoredHeaders::new(),
    }
}

/// A JSON object column as a map of strings (or booleans and timestamps, for headers).
fn json_members(map: &StoredHeaders) -> BTreeMap<String, Value> {
    map.iter()
        .filter_map(|(k, v)| {
            let value = match v {
                serde_json::Value::String(s) => Value::String(s.clone()),
                serde_json::Value::Bool(b) => Value::Bool(*b),
                serde_json::Value::Number(n) => Value::Timestamp(n.as_i64()?),
                _ => return None,
            };
            Some((k.clone(), value))
        })
        .collect()
}

/// Whether the request declared a checksum of its own (then the output echoes it).
pub(crate) fn declares_checksum(headers: &http::HeaderMap) -> bool {
    ChecksumAlgorithm::ALL
        .iter()
        .any(|a| headers.contains_key(a.header_name()))
        || headers.contains_key("x-amz-trailer")
        || headers.contains_key("x-amz-sdk-checksum-algorithm")
}

/// Whether a request that must carry `Content-MD5` or a checksum (its integrity on the
/// wire) lacks both. A call through the in-process dispatcher has no wire, and no headers.
pub(crate) fn lacks_digest(headers: &http::HeaderMap) -> bool {
    !headers.is_empty() && !headers.contains_key("content-md5") && !declares_checksum(headers)
}

/// The version id header a write or read shows: none in a bucket never versioned.
pub(crate) fn version_header(bucket: &Bucket, row: &ObjectRow) -> Option<String> {
    bucket.versioning.as_ref().map(|_| row.version_label())
}

/// A row for a new object from a finished upload, its stored headers and the input.
pub(crate) fn new_row(
    input: &Value,
    upload: &Upload,
    seq: i64,
    headers: String,
) -> AwsResult<ObjectRow> {
    Ok(ObjectRow {
        blob: Some(upload.blob.id().to_string()),
        size: i64::try_from(upload.size).unwrap_or(i64::MAX),
        etag: format!("\"{}\"", upload.md5_hex),
        last_modified: now_millis() / 1000 * 1000,
        seq,
        headers,
        metadata: metadata_json(input)?,
        checksum_algorithm: Some(upload.checksum.0.name().to_string()),
        checksum: Some(upload.checksum.1.clone()),
        checksum_type: Some("FULL_OBJECT".into()),
        storage_class: storage_class(input)?,
        tags: tagging::from_header(input.str("Tagging"))?,
        ..ObjectRow::default()
    })
}

/// The body of a response: a whole blob or a range of it.
fn response_body(blob: BlobReader, range: Option<ByteRange>, size: u64) -> AwsResult<Body> {
    let (first, len) = range.map_or((0, size), |r| (r.first, r.len()));
    Ok(match blob {
        BlobReader::File(mut f) => {
            if first > 0 {
                f.seek(SeekFrom::Start(first))?;
            }
            FileBody::new(f, len).boxed()
        }
        BlobReader::Memory(bytes) => {
            let start = usize::try_from(first)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            let end = usize::try_from(first + len)
                .unwrap_or(usize::MAX)
                .min(bytes.len());
            Full::new(Bytes::from(bytes).slice(start..end))
                .map_err(|never| match never {})
                .boxed()
        }
    })
}

impl S3 {
    /// Commits a new current version and its blob in one transaction (checking that the
    /// bucket still exists and the write's conditions hold), removing whatever it replaced;
    /// on failure the new blob is removed.
    pub(crate) fn commit_object(
        &self,
        bucket: &Bucket,
        key: &str,
        input: &Value,
        blob: &FinishedBlob,
        row: &mut ObjectRow,
    ) -> AwsResult<()> {
        let committed = self.apply_default_retention(bucket, row).and_then(|()| {
            self.env.store.transaction(|tx| {
                let versioning: Option<Option<String>> =
                    rusqlite::OptionalExtension::optional(tx.query_row_cached(
                        "SELECT versioning FROM s3_buckets WHERE name = ?1",
                        [&bucket.name],
                        |r| r.get(0),
                    ))?;
                let Some(versioning) = versioning else {
                    return Err(errors::no_such_bucket(&bucket.name));
                };
                let current = versions::current(tx, &bucket.name, key)?;
                conditions::check_write(input, key, current.as_ref().map(|r| r.etag.as_str()))?;
                blob.save(tx)?;
                versions::put_current(tx, &bucket.name, key, versioning.as_deref(), row)
            })
        });
        match committed {
            Ok(garbage) => {
                for blob in garbage {
                    self.env.store.remove_blob(&blob);
                }
                Ok(())
            }
            Err(e) => {
                if let Some(blob) = &row.blob {
                    self.env.store.remove_blob(blob);
                }
                Err(e)
            }
        }
    }

    pub(crate) async fn put_object(&self, ctx: &Context, request: Request) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(&request.input, "Bucket"))?;
        self.check_put_lock(&bucket, &request)?;
        let Request {
            input,
            body,
            headers,
        } = request;
        let key = input_str(&input, "Key").to_string();
        check_key(&key)?;
        if let Some(len) = input.int("ContentLength").filter(|l| *l > MAX_PUT) {
            return Err(errors::entity_too_large(len, MAX_PUT));
        }
        storage_class(&input)?;
        tagging::from_header(input.str("Tagging"))?;
        metadata_json(&input)?;
        let stored = self.lock_headers(&bucket, &input, &stored_headers(&input))?;
        let stored = self.with_object_acl(ctx, &bucket, &input, stored)?;
        let encryption = self
            .encryption_for_write(ctx, &bucket, &key, &input)
            .await?;
        let stored = sse::store(&stored, &encryption);
        if input.get("IfNoneMatch").is_some() || input.get("IfMatch").is_some() {
            let current = self
                .env
                .store
                .with(|c| versions::current(c, &bucket.name, &key))?;
            conditions::check_write(&input, &key, current.as_ref().map(|r| r.etag.as_str()))?;
        }
        let inline = match input.get("Body") {
            Some(Value::Blob(b)) => Some(b.clone()),
            Some(Value::String(s)) => Some(s.clone().into_bytes()),
            _ => None,
        };
        let declared = declares_checksum(&headers);
        let upload = body::receive(
            &self.env.store,
            &headers,
            body,
            inline,
            ChecksumAlgorithm::Crc64Nvme,
        )
        .await?;
        let mut row = match new_row(&input, &upload, self.next_seq(), stored) {
            Ok(row) => row,
            Err(e) => {
                self.env.store.remove_blob(upload.blob.id());
                return Err(e);
            }
        };
        self.commit_object(&bucket, &key, &input, &upload.blob, &mut row)?;
        self.notify(ctx, &bucket, "ObjectCreated:Put", &key, Some(&row));
        let mut out = Value::map()
            .with("ETag", row.etag.clone())
            .with_opt("VersionId", version_header(&bucket, &row))
            .with_opt(
                "SSEKMSEncryptionContext",
                input.str("SSEKMSEncryptionContext"),
            );
        sse::merge(&mut out, encryption);
        if declared {
            let (alg, checksum) = &upload.checksum;
            out.insert(checksum_member(*alg), checksum.clone());
            out.insert("ChecksumType", "FULL_OBJECT");
        }
        Ok(out)
    }

    /// Finds a key's version and, unless `head`, opens its blob under the same lock.
    pub(crate) fn open_version(
        &self,
        bucket: &str,
        key: &str,
        version: Option<&str>,
        open: bool,
    ) -> AwsResult<(Found, Option<BlobReader>)> {
        self.env.store.with(|c| {
            let found = versions::find(c, bucket, key, version)?;
            // Opened under the store lock: a concurrent replace removes the old blob only
            // after its commit, which this lock orders after the open.
            let blob = match (&found, open) {
                (Found::Object(row), true) => match &row.blob {
                    Some(id) => Some(self.env.store.open_blob(c, id)?),
                    None => None,
                },
                _ => None,
            };
            Ok((found, blob))
        })
    }

    pub(crate) fn get_object(&self, input: &Value, head: bool) -> AwsResult<Response> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let version = input.str("VersionId");
        let (found, blob) = self.open_version(&bucket.name, key, version, !head)?;
        let row = match found {
            Found::Object(row) => row,
            Found::DeleteMarker(row) => {
                return Err(errors::delete_marker_method(
                    &row,
                    if head { "HEAD" } else { "GET" },
                ))
            }
        };
        let stored = stored_map(&row.headers);
        sse::check_read_stored(input, "", &stored)?;
        if !head {
            restore::check_readable(
                &row,
                "The operation is not valid for the object's storage class",
            )?;
        }
        conditions::check_read(
            input,
            &conditions::READ,
            &row.etag,
            row.last_modified,
            false,
        )?;
        let size = u64::try_from(row.size).unwrap_or(0);
        let range_header = input.str("Range");
        let part_number = input.int("PartNumber");
        if range_header.is_some() && part_number.is_some() {
            return Err(errors::invalid_request(
                "Cannot specify both Range header and partNumber query parameter",
            ));
        }
        let mut out = object_output(&bucket, &row, &stored);
        let range = match (range_header, part_number) {
            (Some(text), _) => conditions::parse_range(text, size)?,
            (None, Some(n)) => Some(part_range(&row, n, &mut out)?),
            (None, None) => None,
        };
        let whole_or_part = range.is_none() || part_number.is_some();
        if input.str("ChecksumMode") == Some("ENABLED") && whole_or_part {
            let alg = row
                .checksum_algorithm
                .as_deref()
                .and_then(ChecksumAlgorithm::from_name);
            if let (Some(alg), Some(sum)) = (alg, stored_checksum(&row, part_number)) {
                out.insert(checksum_member(alg), sum);
                out.insert(
                    "ChecksumType",
                    row.checksum_type.clone().unwrap_or("FULL_OBJECT".into()),
                );
            }
        }
        let tag_count = row.tags.as_deref().map(tagging::count).filter(|n| *n > 0);
        if let (Some(tags), false) = (tag_count, head) {
            out.insert("TagCount", tags);
        }
        for (member, header) in RESPONSE_OVERRIDES {
            if let Some(v) = input.str(member) {
                out.insert(header, v);
            }
        }
        let mut response = Response::new(out);
        if let (Some(tags), true) = (tag_count, head) {
            response = response.with_header("x-amz-tagging-count", tags.to_string());
        }
        if let Some(range) = range {
            response
                .output
                .insert("ContentLength", i64::try_from(range.len()).unwrap_or(0));
            response
                .output
                .insert("ContentRange", range.content_range(size));
            response = response.with_status(206);
        }
        if let Some(blob) = blob {
            response.body = Some(response_body(blob, range, size)?);
        }
        Ok(response)
    }

    /// Deletes one key (or one version), in its own transaction; a version Object Lock
    /// protects (unless `bypass` overrides its governance retention) is refused.
    pub(crate) fn delete_one(
        &self,
        bucket: &Bucket,
        key: &str,
        version: Option<&str>,
        bypass: bool,
    ) -> AwsResult<Deleted> {
        let seq = self.next_seq();
        let now = now_millis();
        let protect = |row: &ObjectRow| match bucket.object_lock {
            true => lock::protect(row, bypass, now),
            false => Ok(()),
        };
        let deleted = self.env.store.transaction(|tx| match version {
            Some(v) => versions::delete_version(tx, &bucket.name, key, v, &protect),
            None => versions::delete_latest(
                tx,
                &bucket.name,
                key,
                bucket.versioning.as_deref(),
                seq,
                now / 1000 * 1000,
            ),
        })?;
        for blob in &deleted.garbage {
            self.env.store.remove_blob(blob);
        }
        Ok(deleted)
    }

    pub(crate) fn delete_object(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let version = input.str("VersionId");
        let bypass = lock::bypass(&bucket, input)?;
        let deleted = self.delete_one(&bucket, key, version, bypass)?;
        self.notify_deleted(ctx, &bucket, key, &deleted, version.is_some());
        Ok(Value::map()
            .with_opt("DeleteMarker", deleted.delete_marker.then_some(true))
            .with_opt("VersionId", deleted.version_id))
    }

    /// Notifies the `ObjectRemoved` event for what a delete did: a delete marker created (a
    /// delete naming no version, in a versioned bucket), else a permanent deletion (of an
    /// object, of a version, or of a delete marker); either names the version concerned.
    fn notify_deleted(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        key: &str,
        deleted: &Deleted,
        by_version: bool,
    ) {
        let version = ObjectRow {
            version_id: deleted.version_id.clone().filter(|v| v != "null"),
            seq: self.next_seq(),
            ..ObjectRow::default()
        };
        let event = if deleted.delete_marker && !by_version {
            "ObjectRemoved:DeleteMarkerCreated"
        } else {
            "ObjectRemoved:Delete"
        };
        self.notify(ctx, bucket, event, key, Some(&version));
    }

    pub(crate) fn delete_objects(&self, ctx: &Context, request: &Request) -> AwsResult<Value> {
        let input = &request.input;
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if lacks_digest(&request.headers) {
            return Err(errors::missing_content_md5());
        }
        let bypass = lock::bypass(&bucket, input)?;
        let delete = input.get("Delete").ok_or_else(errors::malformed_xml)?;
        let objects = delete
            .get("Objects")
            .and_then(Value::as_list)
            .unwrap_or_default();
        if objects.is_empty() || objects.len() > 1000 {
            return Err(errors::malformed_xml());
        }
        let quiet = delete.bool("Quiet") == Some(true);
        let (mut done, mut failed) = (Vec::new(), Vec::new());
        for object in objects {
            let key = input_str(object, "Key");
            let version = object.str("VersionId");
            let result =
                check_key(key).and_then(|_| self.delete_one(&bucket, key, version, bypass));
            match result {
                Ok(deleted) => {
                    self.notify_deleted(ctx, &bucket, key, &deleted, version.is_some());
                    if quiet {
                        continue;
                    }
                    let mut entry = Value::map().with("Key", key);
                    match (version, deleted.delete_marker) {
                        (Some(v), marker) => {
                            entry.insert("VersionId", v);
                            if marker {
                                entry.insert("DeleteMarker", true);
                                entry.insert("DeleteMarkerVersionId", v);
                            }
                        }
                        (None, true) => {
                            entry.insert("DeleteMarker", true);
                            if let Some(id) = deleted.version_id {
                                entry.insert("DeleteMarkerVersionId", id);
                            }
                        }
                        (None, false) => {}
                    }
                    done.push(entry);
                }
                Err(e) => failed.push(
                    Value::map()
                        .with("Key", key)
                        .with_opt("VersionId", version)
                        .with("Code", e.code.to_string())
                        .with("Message", e.message),
                ),
            }
        }
        let mut out = Value::map();
        if !done.is_empty() {
            out.insert("Deleted", done);
        }
        if !failed.is_empty() {
            out.insert("Errors", failed);
        }
        Ok(out)
    }

    pub(crate) fn get_object_attributes(&self, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let wanted: Vec<&str> = input
            .get("ObjectAttributes")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        const ATTRIBUTES: [&str; 5] = [
            "ETag",
            "Checksum",
            "ObjectParts",
            "StorageClass",
            "ObjectSize",
        ];
        if wanted.is_empty() {
            return Err(errors::invalid_request(
                "The x-amz-object-attributes header specifying the attributes to be retrieved is either missing or empty",
            ));
        }
        if let Some(bad) = wanted.iter().find(|w| !ATTRIBUTES.contains(w)) {
            return Err(errors::invalid_argument(
                "Invalid attribute name specified.",
                "x-amz-object-attributes",
                bad,
            ));
        }
        let (found, _) = self.open_version(&bucket.name, key, input.str("VersionId"), false)?;
        let row = match found {
            Found::Object(row) => row,
            Found::DeleteMarker(row) => return Err(errors::delete_marker_method(&row, "GET")),
        };
        let mut out = Value::map()
            .with("LastModified", Value::Timestamp(row.last_modified))
            .with_opt("VersionId", version_header(&bucket, &row));
        let alg = row
            .checksum_algorithm
            .as_deref()
            .and_then(ChecksumAlgorithm::from_name);
        let parts = row.parts();
        for attribute in wanted {
            match attribute {
                "ETag" => out.insert("ETag", row.etag.trim_matches('"')),
                "StorageClass" => out.insert("StorageClass", row.storage_class()),
                "ObjectSize" => out.insert("ObjectSize", row.size),
                "Checksum" => {
                    if let (Some(alg), Some(sum)) = (alg, &row.checksum) {
                        out.insert(
                            "Checksum",
                            Value::map().with(checksum_member(alg), sum.clone()).with(
                                "ChecksumType",
                                row.checksum_type.clone().unwrap_or("FULL_OBJECT".into()),
                            ),
                        );
                    }
                }
                _ if parts.is_empty() => {}
                _ => out.insert("ObjectParts", object_parts(input, &parts, alg)),
            }
        }
        Ok(out)
    }
}

/// `ResponseContentType` and friends: GET overrides of the stored headers.
const RESPONSE_OVERRIDES: [(&str, &str); 6] = [
    ("ResponseCacheControl", "CacheControl"),
    ("ResponseContentDisposition", "ContentDisposition"),
    ("ResponseContentEncoding", "ContentEncoding"),
    ("ResponseContentLanguage", "ContentLanguage"),
    ("ResponseContentType", "ContentType"),
    ("ResponseExpires", "Expires"),
];

/// The headers GET and HEAD return for an object.
fn object_output(bucket: &Bucket, row: &ObjectRow, stored: &StoredHeaders) -> Value {
    let mut out = Value::map()
        .with("ContentLength", row.size)
        .with("ETag", row.etag.clone())
        .with("LastModified", Value::Timestamp(row.last_modified))
        .with("AcceptRanges", "bytes")
        .with("ContentType", "binary/octet-stream")
        .with_opt("VersionId", version_header(bucket, row));
    for (member, value) in json_members(stored) {
        out.insert(member, value);
    }
    sse::merge(&mut out, sse::echo_stored(stored));
    out.remove(restore::RESTORE);
    if let Some(restore) = restore::restore_header(stored) {
        out.insert(restore::RESTORE, restore);
    }
    if row.storage_class() != "STANDARD" {
        out.insert("StorageClass", row.storage_class());
    }
    let metadata = json_members(&stored_map(&row.metadata));
    if !metadata.is_empty() {
        out.insert("Metadata", Value::Map(metadata));
    }
    out
}

/// The byte range of part `n` (`partNumber=`), adding `PartsCount` for a multipart object.
/// The checksum a read returns: the object's, or with `partNumber` the part's (an object
/// uploaded in one piece is its own part 1).
fn stored_checksum(row: &ObjectRow, part_number: Option<i64>) -> Option<String> {
    let parts = row.parts();
    match part_number {
        Some(n) if !parts.is_empty() => usize::try_from(n - 1)
            .ok()
            .and_then(|i| parts.get(i))
            .and_then(|(_, sum)| sum.clone()),
        _ => row.checksum.clone(),
    }
}

fn part_range(row: &ObjectRow, n: i64, out: &mut Value) -> AwsResult<ByteRange> {
    let parts = row.parts();
    let sizes: Vec<i64> = if parts.is_empty() {
        vec![row.size]
    } else {
        out.insert("PartsCount", parts.len());
        parts.iter().map(|(size, _)| *size).collect()
    };
    let index = usize::try_from(n)
        .ok()
        .filter(|i| *i >= 1 && *i <= sizes.len());
    let Some(index) = index else {
        return Err(AwsError::new(
            "InvalidPartNumber",
            "The requested partnumber is not satisfiable",
        )
        .with_status(416)
        .with_field("PartNumberRequested", n.to_string())
        .with_field("ActualPartCount", sizes.len().to_string()));
    };
    let first: i64 = sizes[..index - 1].iter().sum();
    let len = sizes[index - 1];
    if len == 0 {
        return Err(errors::invalid_range(&format!("partNumber={n}"), row.size));
    }
    Ok(ByteRange {
        first: u64::try_from(first).unwrap_or(0),
        last: u64::try_from(first + len - 1).unwrap_or(0),
    })
}

/// GetObjectAttributes' `ObjectParts`, paginated by `PartNumberMarker` and `MaxParts`.
fn object_parts(
    input: &Value,
    parts: &[(i64, Option<String>)],
    alg: Option<ChecksumAlgorithm>,
) -> Value {
    let marker = input.int("PartNumberMarker").unwrap_or(0).max(0);
    let max = input.int("MaxParts").unwrap_or(1000).clamp(0, 1000);
    let listed: Vec<Value> = parts
        .iter()
        .enumerate()
        .map(|(i, p)| (i as i64 + 1, p))
        .filter(|(n, _)| *n > marker)
        .take(usize::try_from(max).unwrap_or(0))
        .map(|(n, (size, sum))| {
            let mut v = Value::map().with("PartNumber", n).with("Size", *size);
            if let (Some(alg), Some(sum)) = (alg, sum) {
                v.insert(checksum_member(alg), sum.clone());
            }
            v
        })
        .collect();
    let last = listed
        .last()
        .and_then(|p| p.int("PartNumber"))
        .unwrap_or(marker);
    let mut out = Value::map()
        .with("TotalPartsCount", parts.len())
        .with("PartNumberMarker", marker)
        .with("NextPartNumberMarker", last)
        .with("MaxParts", max)
        .with("IsTruncated", (last as usize) < parts.len());
    if !listed.is_empty() {
        out.insert("Parts", listed);
    }
    out
}
