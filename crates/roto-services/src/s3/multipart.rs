//! Multipart uploads: CreateMultipartUpload, UploadPart, UploadPartCopy,
//! CompleteMultipartUpload, AbortMultipartUpload, ListParts, ListMultipartUploads.
//!
//! Each part is streamed into its own blob as it arrives. Completing concatenates the
//! parts' blobs into the object's blob a chunk at a time (never a part in memory), checks
//! the rules AWS checks (ascending part numbers, ETags and checksums that match, every part
//! but the last at least 5 MiB), and gives the object the ETag `md5(md5s)-N` and, when the
//! upload named an algorithm, a composite (`checksum-of-checksums-N`) or full-object
//! checksum.

use base64::Engine;
use md5::{Digest, Md5};
use roto_chunked::ChecksumAlgorithm;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Request, Value};
use rusqlite::OptionalExtension;

use super::body::{self, Piece};
use super::copy::copy_source_range;
use super::errors;
use super::objects::{
    check_key, checksum_member, metadata_json, storage_class, stored_headers, version_header,
};
use super::sse;
use super::tagging;
use super::versions::ObjectRow;
use super::{input_str, owner, S3};

/// The smallest part but the last.
const MIN_PART: i64 = 5 * 1024 * 1024;

/// What CreateMultipartUpload fixes for the object the upload will make.
#[derive(serde::Serialize, serde::Deserialize, Default)]
struct Template {
    headers: String,
    metadata: String,
    storage_class: Option<String>,
    tags: Option<String>,
    checksum_algorithm: Option<String>,
    checksum_type: Option<String>,
}

/// An upload's row.
struct Upload {
    bucket: String,
    key: String,
    account: String,
    template: Template,
}

impl Template {
    fn algorithm(&self) -> Option<ChecksumAlgorithm> {
        self.checksum_algorithm
            .as_deref()
            .and_then(ChecksumAlgorithm::from_name)
    }
}

fn new_upload_id() -> String {
    let mut bytes = [0u8; 48];
    for b in bytes.iter_mut() {
        *b = fastrand::u8(..);
    }
    base64::engine::general_purpose::URL_SAFE_NO_PAD.encode(bytes)
}

/// A part number as S3 accepts it.
fn part_number(input: &Value) -> AwsResult<i64> {
    let n = input.int("PartNumber").unwrap_or(0);
    if !(1..=10000).contains(&n) {
        return Err(errors::invalid_argument(
            "Part number must be an integer between 1 and 10000, inclusive",
            "partNumber",
            &n.to_string(),
        ));
    }
    Ok(n)
}

/// The checksum algorithm and type CreateMultipartUpload asks for, checked together.
fn checksum_choice(input: &Value) -> AwsResult<(Option<ChecksumAlgorithm>, Option<String>)> {
    let alg = match input.str("ChecksumAlgorithm") {
        Some(name) => Some(ChecksumAlgorithm::from_name(name).ok_or_else(|| {
            errors::invalid_request(
                "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]",
            )
        })?),
        None => None,
    };
    let kind = input.str("ChecksumType");
    let Some(alg) = alg else {
        if kind.is_some() {
            return Err(errors::invalid_request(
                "The x-amz-checksum-type header can only be used with the x-amz-checksum-algorithm header.",
            ));
        }
        return Ok((None, None));
    };
    let kind = match kind {
        Some(k @ ("COMPOSITE" | "FULL_OBJECT")) => k,
        Some(other) => {
            return Err(errors::invalid_request(format!(
                "Value for x-amz-checksum-type header is invalid: {other}"
            )))
        }
        None if alg == ChecksumAlgorithm::Crc64Nvme => "FULL_OBJECT",
        None => "COMPOSITE",
    };
    let allowed = match kind {
        "FULL_OBJECT" => alg.is_crc(),
        _ => alg != ChecksumAlgorithm::Crc64Nvme,
    };
    if !allowed {
        return Err(errors::invalid_request(format!(
            "The {kind} checksum type cannot be used with the {} checksum algorithm.",
            alg.name().to_ascii_lowercase()
        )));
    }
    Ok((Some(alg), Some(kind.to_string())))
}

/// What CompleteMultipartUpload answers for the object it made at a key.
fn completed_output(ctx: &Context, bucket: &str, key: &str, etag: String) -> Value {
    let host = if ctx.host.is_empty() {
        "localhost"
    } else {
        &ctx.host
    };
    let location = format!(
        "http://{host}/{bucket}/{}",
        percent_encoding::utf8_percent_encode(key, super::list::URL_SAFE)
    );
    Value::map()
        .with("Location", location)
        .with("Bucket", bucket)
        .with("Key", key)
        .with("ETag", etag)
}

impl S3 {
    fn upload(&self, upload_id: &str, bucket: &str, key: &str) -> AwsResult<Upload> {
        let row: Option<(String, String, String, String)> = self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT bucket, key, account, template FROM s3_uploads WHERE upload_id = ?1",
            )?
            .query_row([upload_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?))
            })
            .optional()
            .map_err(AwsError::from)
        })?;
        match row {
            Some((b, k, account, template)) if b == bucket && k == key => Ok(Upload {
                bucket: b,
                key: k,
                account,
                template: serde_json::from_str(&template).unwrap_or_default(),
            }),
            _ => Err(errors::no_such_upload(upload_id)),
        }
    }

    pub(crate) async fn create_multipart_upload(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        check_key(key)?;
        let (alg, kind) = checksum_choice(input)?;
        let headers = self.with_object_acl(
            ctx,
            &bucket,
            input,
            self.lock_headers(&bucket, input, &stored_headers(input))?,
        )?;
        let encryption = self.encryption_for_write(ctx, &bucket, key, input).await?;
        let template = Template {
            headers: sse::store(&headers, &encryption),
            metadata: metadata_json(input)?,
            storage_class: storage_class(input)?,
            tags: tagging::from_header(input.str("Tagging"))?,
            checksum_algorithm: alg.map(|a| a.name().to_string()),
            checksum_type: kind.clone(),
        };
        let upload_id = new_upload_id();
        let json = serde_json::to_string(&template).unwrap_or_default();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT INTO s3_uploads (upload_id, bucket, key, account, initiated, template)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                rusqlite::params![upload_id, bucket.name, key, ctx.account, now_millis(), json],
            )
            .map_err(AwsError::from)
        })?;
        let mut out = Value::map()
            .with("Bucket", bucket.name)
            .with("Key", key)
            .with("UploadId", upload_id)
            .with_opt("ChecksumAlgorithm", alg.map(|a| a.name()))
            .with_opt("ChecksumType", kind)
            .with_opt(
                "SSEKMSEncryptionContext",
                input.str("SSEKMSEncryptionContext"),
            );
        sse::merge(&mut out, encryption);
        Ok(out)
    }

    /// Records a finished part and its blob, replacing (and removing) any earlier upload of
    /// its number.
    fn record_part(
        &self,
        upload_id: &str,
        number: i64,
        part: &body::Upload,
        checksum: Option<&str>,
    ) -> AwsResult<String> {
        let etag = format!("\"{}\"", part.md5_hex);
        let size = i64::try_from(part.size).unwrap_or(i64::MAX);
        let result = self.env.store.transaction(|tx| {
            let live = tx
                .query_row_cached(
                    "SELECT 1 FROM s3_uploads WHERE upload_id = ?1",
                    [upload_id],
                    |_| Ok(()),
                )
                .optional()?
                .is_some();
            if !live {
                return Err(errors::no_such_upload(upload_id));
            }
            let old: Option<String> = tx
                .query_row_cached(
                    "SELECT blob FROM s3_parts WHERE upload_id = ?1 AND part_number = ?2",
                    rusqlite::params![upload_id, number],
                    |r| r.get(0),
                )
                .optional()?;
            part.blob.save(tx)?;
            tx.execute_cached(
                "INSERT OR REPLACE INTO s3_parts
                    (upload_id, part_number, blob, size, etag, last_modified, checksum)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
                rusqlite::params![
                    upload_id,
                    number,
                    part.blob.id(),
                    size,
                    etag,
                    now_millis() / 1000 * 1000,
                    checksum
                ],
            )?;
            Ok(old)
        });
        match result {
            Ok(old) => {
                if let Some(old) = old {
                    self.env.store.remove_blob(&old);
                }
                Ok(etag)
            }
            Err(e) => {
                self.env.store.remove_blob(part.blob.id());
                Err(e)
            }
        }
    }

    pub(crate) async fn upload_part(&self, request: Request) -> AwsResult<Value> {
        let Request {
            input,
            body,
            headers,
        } = request;
        let key = input_str(&input, "Key");
        let bucket = self.bucket(input_str(&input, "Bucket"))?;
        let upload_id = input_str(&input, "UploadId");
        let number = part_number(&input)?;
        let upload = self.upload(upload_id, &bucket.name, key)?;
        sse::check_part(&input, &upload.template.headers)?;
        let expected = upload.template.algorithm();
        let inline = input
            .get("Body")
            .and_then(Value::as_blob)
            .map(<[u8]>::to_vec);
        let part = body::receive(
            &self.env.store,
            &headers,
            body,
            inline,
            expected.unwrap_or(ChecksumAlgorithm::Crc64Nvme),
        )
        .await?;
        if let (Some(want), Some(got)) = (expected, part.declared) {
            if want != got {
                self.env.store.remove_blob(part.blob.id());
                return Err(errors::invalid_request(format!(
                    "Checksum Type mismatch occurred, expected checksum Type: {}, actual checksum Type: {}",
                    want.name().to_ascii_lowercase(),
                    got.name().to_ascii_lowercase()
                )));
            }
        }
        let checksum = expected.map(|_| part.checksum.1.clone());
        let etag = self.record_part(upload_id, number, &part, checksum.as_deref())?;
        let mut out = sse::echo(&upload.template.headers).with("ETag", etag);
        if let Some(alg) = expected.or(part.declared) {
            out.insert(checksum_member(alg), part.checksum.1.clone());
        }
        Ok(out)
    }

    pub(crate) async fn upload_part_copy(&self, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let upload_id = input_str(input, "UploadId");
        let number = part_number(input)?;
        let upload = self.upload(upload_id, &bucket.name, key)?;
        sse::check_part(input, &upload.template.headers)?;
        let (_, opened) = self.open_copy_source(input)?;
        let range = match input.str("CopySourceRange") {
            Some(text) => Some(copy_source_range(text, opened.row.size)?),
            None => None,
        };
        let alg = upload.template.algorithm();
        let (part, _) = body::concat(
            self.env.clone(),
            vec![Piece::Open(opened.reader, range.map(|r| (r.first, r.last)))],
            alg.unwrap_or(ChecksumAlgorithm::Crc64Nvme),
            true,
        )
        .await?;
        let checksum = alg.map(|_| part.checksum.1.clone());
        let etag = self.record_part(upload_id, number, &part, checksum.as_deref())?;
        let mut result = Value::map()
            .with("ETag", etag)
            .with("LastModified", Value::Timestamp(now_millis() / 1000 * 1000));
        if let (Some(alg), Some(sum)) = (alg, checksum) {
            result.insert(checksum_member(alg), sum);
        }
        Ok(sse::echo(&upload.template.headers)
            .with("CopyPartResult", result)
            .with_opt(
                "CopySourceVersionId",
                version_header(&opened.bucket, &opened.row),
            ))
    }

    pub(crate) async fn complete_multipart_upload(
        &self,
        ctx: &Context,
        request: &Request,
    ) -> AwsResult<Value> {
        let input = &request.input;
        let key = input_str(input, "Key").to_string();
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let upload_id = input_str(input, "UploadId");
        let upload = match self.upload(upload_id, &bucket.name, &key) {
            Ok(upload) => upload,
            Err(e) => {
                return match self.completed_etag(&bucket.name, &key, upload_id)? {
                    Some(etag) => Ok(completed_output(ctx, &bucket.name, &key, etag)),
                    None => Err(e),
                }
            }
        };
        let requested = input
            .get("MultipartUpload")
            .and_then(|m| m.get("Parts"))
            .and_then(Value::as_list)
            .unwrap_or_default();
        if requested.is_empty() {
            return Err(errors::malformed_xml());
        }
        let stored: Vec<(i64, String, i64, String, Option<String>)> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT part_number, blob, size, etag, checksum FROM s3_parts
                     WHERE upload_id = ?1 ORDER BY part_number",
            )?;
            let rows = stmt.query_map([upload_id], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let alg = upload.template.algorithm();
        let mut chosen = Vec::with_capacity(requested.len());
        let mut last_number = 0;
        for (i, part) in requested.iter().enumerate() {
            let number = part.int("PartNumber").unwrap_or(0);
            if number <= last_number {
                return Err(AwsError::new(
                    "InvalidPartOrder",
                    "The list of parts was not in ascending order. Parts must be ordered by part number.",
                )
                .with_status(400)
                .with_field("UploadId", upload_id));
            }
            last_number = number;
            let etag = input_str(part, "ETag");
            let invalid_part = || {
                AwsError::new(
                    "InvalidPart",
                    "One or more of the specified parts could not be found.  The part may not have been uploaded, or the specified entity tag may not match the part's entity tag.",
                )
                .with_status(400)
                .with_field("UploadId", upload_id)
                .with_field("PartNumber", number.to_string())
                .with_field("ETag", etag)
            };
            let found = stored
                .iter()
                .find(|p| p.0 == number)
                .filter(|p| p.3.trim_matches('"') == etag.trim_matches('"'))
                .ok_or_else(invalid_part)?;
            if let Some(alg) = alg {
                match part.str(&checksum_member(alg)) {
                    Some(given) if Some(given) != found.4.as_deref() => return Err(invalid_part()),
                    Some(_) => {}
                    None if upload.template.checksum_type.as_deref() == Some("COMPOSITE") => {
                        return Err(errors::invalid_request(format!(
                            "The upload was created using a {} checksum. The complete request must include the checksum for each part. It was missing for part {number} in the request.",
                            alg.name().to_ascii_lowercase()
                        )))
                    }
                    None => {}
                }
            }
            if i + 1 < requested.len() && found.2 < MIN_PART {
                return Err(AwsError::new(
                    "EntityTooSmall",
                    "Your proposed upload is smaller than the minimum allowed size",
                )
                .with_status(400)
                .with_field("ProposedSize", found.2.to_string())
                .with_field("MinSizeAllowed", MIN_PART.to_string())
                .with_field("PartNumber", number.to_string())
                .with_field("ETag", found.3.trim_matches('"')));
            }
            chosen.push(found);
        }
        let mut md5s = Md5::new();
        for part in &chosen {
            md5s.update(hex::decode(part.3.trim_matches('"')).unwrap_or_default());
        }
        let etag = format!("\"{}-{}\"", hex::encode(md5s.finalize()), chosen.len());
        let pieces = chosen.iter().map(|p| Piece::Blob(p.1.clone())).collect();
        let (object, part_sums) = body::concat(
            self.env.clone(),
            pieces,
            alg.unwrap_or(ChecksumAlgorithm::Crc64Nvme),
            false,
        )
        .await?;
        let composite = upload.template.checksum_type.as_deref() == Some("COMPOSITE");
        let checksum = match alg {
            Some(alg) if composite => {
                let mut all = alg.checksummer();
                for sum in &part_sums {
                    all.update(sum);
                }
                format!("{}-{}", all.finalize_base64(), chosen.len())
            }
            _ => object.checksum.1.clone(),
        };
        if let Some(alg) = alg.filter(|_| !composite) {
            if let Some(given) = input.str(&checksum_member(alg)) {
                if given != checksum {
                    self.env.store.remove_blob(object.blob.id());
                    return Err(errors::bad_checksum(alg.name()));
                }
            }
        }
        let template = &upload.template;
        let part_list: Vec<(i64, Option<String>)> = chosen
            .iter()
            .zip(&part_sums)
            .map(|(p, sum)| {
                (
                    p.2,
                    alg.map(|_| base64::engine::general_purpose::STANDARD.encode(sum)),
                )
            })
            .collect();
        let mut row = ObjectRow {
            blob: Some(object.blob.id().to_string()),
            size: i64::try_from(object.size).unwrap_or(i64::MAX),
            etag: etag.clone(),
            last_modified: now_millis() / 1000 * 1000,
            seq: self.next_seq(),
            headers: template.headers.clone(),
            metadata: template.metadata.clone(),
            checksum_algorithm: Some(
                alg.unwrap_or(ChecksumAlgorithm::Crc64Nvme)
                    .name()
                    .to_string(),
            ),
            checksum: Some(checksum.clone()),
            checksum_type: Some(
                if composite {
                    "COMPOSITE"
                } else {
                    "FULL_OBJECT"
                }
                .into(),
            ),
            storage_class: template.storage_class.clone(),
            tags: template.tags.clone(),
            parts: serde_json::to_string(&part_list).ok(),
            ..ObjectRow::default()
        };
        self.commit_object(&bucket, &key, input, &object.blob, &mut row)?;
        self.drop_upload(upload_id)?;
        self.remember_completed(&bucket.name, &key, upload_id, &etag)?;
        self.notify(
            ctx,
            &bucket,
            "ObjectCreated:CompleteMultipartUpload",
            &key,
            Some(&row),
        );
        let mut out = completed_output(ctx, &bucket.name, &key, etag)
            .with_opt("VersionId", version_header(&bucket, &row));
        sse::merge(&mut out, sse::echo(&row.headers));
        if let Some(alg) = alg {
            out.insert(checksum_member(alg), checksum);
            out.insert(
                "ChecksumType",
                row.checksum_type.clone().unwrap_or_default(),
            );
        }
        Ok(out)
    }

    /// Records the last upload completed at a key, so that completing it again (a client
    /// retrying after a lost answer) succeeds as in S3.
    fn remember_completed(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
        etag: &str,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO s3_completed_uploads (bucket, key, upload_id, etag)
                 VALUES (?1, ?2, ?3, ?4)",
                [bucket, key, upload_id, etag],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// The ETag of the object upload `upload_id` completed at a key, while it is still the
    /// key's current object.
    fn completed_etag(
        &self,
        bucket: &str,
        key: &str,
        upload_id: &str,
    ) -> AwsResult<Option<String>> {
        self.env.store.with(|c| {
            let etag: Option<String> = c
                .prepare_cached(
                    "SELECT etag FROM s3_completed_uploads WHERE bucket = ?1 AND key = ?2 AND upload_id = ?3",
                )?
                .query_row([bucket, key, upload_id], |r| r.get(0))
                .optional()?;
            let current = super::versions::current(c, bucket, key)?;
            Ok(etag.filter(|e| current.is_some_and(|row| row.etag == *e && !row.delete_marker)))
        })
    }

    /// Deletes an upload's rows and its parts' blobs.
    fn drop_upload(&self, upload_id: &str) -> AwsResult<()> {
        let blobs: Vec<String> = self.env.store.transaction(|tx| {
            tx.execute_cached("DELETE FROM s3_uploads WHERE upload_id = ?1", [upload_id])?;
            let mut stmt =
                tx.prepare_cached("DELETE FROM s3_parts WHERE upload_id = ?1 RETURNING blob")?;
            let rows = stmt.query_map([upload_id], |r| r.get(0))?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        for blob in blobs {
            self.env.store.remove_blob(&blob);
        }
        Ok(())
    }

    pub(crate) fn abort_multipart_upload(&self, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let upload_id = input_str(input, "UploadId");
        self.upload(upload_id, &bucket.name, key)?;
        self.drop_upload(upload_id)?;
        Ok(Value::map())
    }

    pub(crate) fn list_parts(&self, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key");
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let upload_id = input_str(input, "UploadId");
        let upload = self.upload(upload_id, &bucket.name, key)?;
        let marker = input.int("PartNumberMarker").unwrap_or(0).max(0);
        let max = input.int("MaxParts").unwrap_or(1000).clamp(0, 1000);
        let alg = upload.template.algorithm();
        let mut parts: Vec<Value> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT part_number, last_modified, etag, size, checksum FROM s3_parts
                 WHERE upload_id = ?1 AND part_number > ?2 ORDER BY part_number LIMIT ?3",
            )?;
            let rows = stmt.query_map(rusqlite::params![upload_id, marker, max + 1], |r| {
                let checksum: Option<String> = r.get(4)?;
                let mut v = Value::map()
                    .with("PartNumber", r.get::<_, i64>(0)?)
                    .with("LastModified", Value::Timestamp(r.get(1)?))
                    .with("ETag", r.get::<_, String>(2)?)
                    .with("Size", r.get::<_, i64>(3)?);
                if let (Some(alg), Some(sum)) = (alg, checksum) {
                    v.insert(checksum_member(alg), sum);
                }
                Ok(v)
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let truncated = parts.len() as i64 > max;
        parts.truncate(usize::try_from(max).unwrap_or(0));
        let next = parts.last().and_then(|p| p.int("PartNumber"));
        let who = owner(&upload.account);
        let mut out = Value::map()
            .with("Bucket", upload.bucket)
            .with("Key", upload.key)
            .with("UploadId", upload_id)
            .with("PartNumberMarker", marker)
            .with_opt("NextPartNumberMarker", next)
            .with("MaxParts", max)
            .with("IsTruncated", truncated)
            .with("Initiator", who.clone())
            .with("Owner", who)
            .with(
                "StorageClass",
                upload
                    .template
                    .storage_class
                    .clone()
                    .unwrap_or("STANDARD".into()),
            )
            .with_opt("ChecksumAlgorithm", alg.map(|a| a.name()))
            .with_opt("ChecksumType", upload.template.checksum_type.clone());
        if !parts.is_empty() {
            out.insert("Parts", parts);
        }
        Ok(out)
    }

    pub(crate) fn list_multipart_uploads(&self, input: &Value) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let prefix = input_str(input, "Prefix");
        let delimiter = input_str(input, "Delimiter");
        let key_marker = input_str(input, "KeyMarker");
        let id_marker = input_str(input, "UploadIdMarker");
        let max = input.int("MaxUploads").unwrap_or(1000).clamp(0, 1000);
        let rows: Vec<(String, String, String, i64, String)> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT key, upload_id, account, initiated, template FROM s3_uploads
                 WHERE bucket = ?1 AND key >= ?2 ORDER BY key, initiated, upload_id",
            )?;
            let rows = stmt.query_map(rusqlite::params![bucket.name, key_marker], |r| {
                Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?, r.get(4)?))
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let mut uploads = Vec::new();
        let mut prefixes: Vec<String> = Vec::new();
        let mut truncated = false;
        let mut past_id_marker = id_marker.is_empty();
        let mut next: Option<(String, String)> = None;
        for (key, id, account, initiated, template) in rows {
            if !key.starts_with(prefix) {
                continue;
            }
            if !key_marker.is_empty() && key == key_marker {
                if !past_id_marker {
                    past_id_marker = id == id_marker;
                    continue;
                }
                if id_marker.is_empty() {
                    continue;
                }
            }
            let common = (!delimiter.is_empty())
                .then(|| key[prefix.len()..].find(delimiter))
                .flatten()
                .map(|i| key[..prefix.len() + i + delimiter.len()].to_string());
            if let Some(cp) = &common {
                if prefixes.last() == Some(cp) {
                    continue;
                }
            }
            if (uploads.len() + prefixes.len()) as i64 >= max {
                truncated = true;
                break;
            }
            next = Some((key.clone(), id.clone()));
            match common {
                Some(cp) => prefixes.push(cp),
                None => {
                    let template: Template = serde_json::from_str(&template).unwrap_or_default();
                    let who = owner(&account);
                    uploads.push(
                        Value::map()
                            .with("UploadId", id)
                            .with("Key", key)
                            .with("Initiated", Value::Timestamp(initiated))
                            .with(
                                "StorageClass",
                                template.storage_class.unwrap_or("STANDARD".into()),
                            )
                            .with("Owner", who.clone())
                            .with("Initiator", who)
                            .with_opt("ChecksumAlgorithm", template.checksum_algorithm)
                            .with_opt("ChecksumType", template.checksum_type),
                    );
                }
            }
        }
        let mut out = Value::map()
            .with("Bucket", bucket.name)
            .with("KeyMarker", key_marker)
            .with("UploadIdMarker", id_marker)
            .with("Prefix", prefix)
            .with_opt("Delimiter", (!delimiter.is_empty()).then_some(delimiter))
            .with("MaxUploads", max)
            .with("IsTruncated", truncated);
        if truncated {
            if let Some((k, id)) = next {
                out.insert("NextKeyMarker", k);
                out.insert("NextUploadIdMarker", id);
            }
        }
        if !uploads.is_empty() {
            out.insert("Uploads", uploads);
        }
        if !prefixes.is_empty() {
            let prefixes: Vec<Value> = prefixes
                .into_iter()
                .map(|p| Value::map().with("Prefix", p))
                .collect();
            out.insert("CommonPrefixes", prefixes);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn checksum_type_must_suit_the_algorithm() {
        let input = |alg: &str, kind: Option<&str>| {
            let v = Value::map().with("ChecksumAlgorithm", alg);
            match kind {
                Some(k) => v.with("ChecksumType", k),
                None => v,
            }
        };
        assert_eq!(
            checksum_choice(&input("CRC32", None)).unwrap().1.as_deref(),
            Some("COMPOSITE")
        );
        assert_eq!(
            checksum_choice(&input("CRC64NVME", None))
                .unwrap()
                .1
                .as_deref(),
            Some("FULL_OBJECT")
        );
        assert!(checksum_choice(&input("SHA256", Some("FULL_OBJECT"))).is_err());
        assert!(checksum_choice(&input("CRC64NVME", Some("COMPOSITE"))).is_err());
        assert!(checksum_choice(&input("MD4", None)).is_err());
    }
}
