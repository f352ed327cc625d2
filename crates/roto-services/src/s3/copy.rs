//! CopyObject (and the source side UploadPartCopy shares): the source named by
//! `x-amz-copy-source`, its conditions, the metadata and tagging directives.
//!
//! The bytes are copied into a new blob on a blocking thread, a chunk at a time, never
//! held whole in memory; the source is opened under the store lock so that a concurrent
//! overwrite cannot remove it mid-copy.

use roto_chunked::ChecksumAlgorithm;
use roto_core::store::BlobReader;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};

use super::annotations;
use super::body::{self, Piece};
use super::conditions::{self, ByteRange};
use super::errors;
use super::objects::{
    check_key, checksum_member, edit_headers, metadata_json, storage_class, stored_headers,
    version_header,
};
use super::restore;
use super::sse;
use super::tagging;
use super::versions::{self, Found, ObjectRow};
use super::{input_str, Bucket, S3};

/// A parsed `x-amz-copy-source`.
pub(crate) struct CopySource {
    pub bucket: String,
    pub key: String,
    pub version: Option<String>,
}

/// Parses `bucket/key`, `/bucket/key` or either with `?versionId=`, percent-encoded.
pub(crate) fn parse_copy_source(text: &str) -> AwsResult<CopySource> {
    let (path, query) = text.split_once('?').unwrap_or((text, ""));
    let encoding =
        || errors::invalid_argument("Invalid copy source encoding.", "x-amz-copy-source", text);
    let decoded = percent_encoding::percent_decode_str(path.trim_start_matches('/'))
        .decode_utf8()
        .map_err(|_| encoding())?
        .into_owned();
    let invalid =
        || errors::invalid_argument("Invalid copy source object key", "x-amz-copy-source", text);
    let (bucket, key) = decoded.split_once('/').ok_or_else(invalid)?;
    if bucket.is_empty() || key.is_empty() {
        return Err(invalid());
    }
    let version = match query.split('&').find_map(|p| p.strip_prefix("versionId=")) {
        Some(v) => Some(
            percent_encoding::percent_decode_str(v)
                .decode_utf8()
                .map_err(|_| encoding())?
                .into_owned(),
        ),
        None => None,
    };
    Ok(CopySource {
        bucket: bucket.to_string(),
        key: key.to_string(),
        version,
    })
}

/// Whether a `COPY`/`REPLACE` directive member says `REPLACE`.
fn directive(input: &Value, member: &str, word: &str) -> AwsResult<bool> {
    match input.str(member) {
        None | Some("COPY") => Ok(false),
        Some("REPLACE") => Ok(true),
        Some(other) => Err(errors::invalid_argument(
            &format!("Unknown {word} directive."),
            &format!("x-amz-{word}-directive"),
            other,
        )),
    }
}

/// A source opened for copying.
pub(crate) struct Opened {
    pub bucket: Bucket,
    pub row: ObjectRow,
    pub reader: BlobReader,
}

impl S3 {
    /// Finds and opens the copy source, checking its `x-amz-copy-source-if-*` conditions.
    pub(crate) fn open_copy_source(&self, input: &Value) -> AwsResult<(CopySource, Opened)> {
        let source = parse_copy_source(input_str(input, "CopySource"))?;
        let bucket = self.bucket(&source.bucket)?;
        let (row, reader) = self.env.store.with(|c| {
            let row = match versions::find(c, &bucket.name, &source.key, source.version.as_deref())? {
                Found::Object(row) => row,
                Found::DeleteMarker(_) => {
                    return Err(errors::invalid_request(
                        "The source of a copy request may not specifically refer to a delete marker by version id.",
                    ))
                }
            };
            restore::check_readable(
                &row,
                "Operation is not valid for the source object's storage class",
            )?;
            sse::check_read(input, "CopySource", &row.headers)?;
            let blob = row.blob.clone().unwrap_or_default();
            let reader = self.env.store.open_blob(c, &blob)?;
            Ok((row, reader))
        })?;
        conditions::check_read(
            input,
            &conditions::COPY_SOURCE,
            &row.etag,
            row.last_modified,
            true,
        )?;
        Ok((
            source,
            Opened {
                bucket,
                row,
                reader,
            },
        ))
    }

    pub(crate) async fn copy_object(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let key = input_str(input, "Key").to_string();
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        check_key(&key)?;
        let replace_metadata = directive(input, "MetadataDirective", "metadata")?;
        let replace_tags = directive(input, "TaggingDirective", "tagging")?;
        let class = storage_class(input)?;
        let metadata = replace_metadata.then(|| metadata_json(input)).transpose()?;
        let (source, opened) = self.open_copy_source(input)?;
        let same_object = source.bucket == bucket.name
            && source.key == key
            && source.version.as_ref().is_none_or(|v| {
                Some(v.as_str()) == opened.row.version_id.as_deref().or(Some("null"))
            });
        let changes = replace_metadata
            || class.is_some()
            || input.get("WebsiteRedirectLocation").is_some()
            || input.get("ServerSideEncryption").is_some()
            || input.get("SSEKMSKeyId").is_some()
            || input.get("SSECustomerAlgorithm").is_some();
        if same_object && !changes {
            return Err(errors::invalid_request(
                "This copy request is illegal because it is trying to copy an object to itself without changing the object's metadata, storage class, website redirect location or encryption attributes.",
            ));
        }
        let headers = self.lock_headers(
            &bucket,
            input,
            &if replace_metadata {
                stored_headers(input)
            } else {
                edit_headers(&opened.row.headers, |map| {
                    map.remove(restore::RESTORE);
                })
            },
        )?;
        let headers = self.with_object_acl(ctx, &bucket, input, headers)?;
        let encryption = self.encryption_for_write(ctx, &bucket, &key, input).await?;
        let headers = sse::store(&headers, &encryption);
        let algorithm = input
            .str("ChecksumAlgorithm")
            .and_then(ChecksumAlgorithm::from_name)
            .or_else(|| {
                opened
                    .row
                    .checksum_algorithm
                    .as_deref()
                    .and_then(ChecksumAlgorithm::from_name)
            })
            .unwrap_or(ChecksumAlgorithm::Crc64Nvme);
        let Opened {
            bucket: source_bucket,
            row: source_row,
            reader,
        } = opened;
        let (upload, _) = body::concat(
            self.env.clone(),
            vec![Piece::Open(reader, None)],
            algorithm,
            true,
        )
        .await?;
        let mut row = ObjectRow {
            blob: Some(upload.blob.id().to_string()),
            size: source_row.size,
            etag: format!("\"{}\"", upload.md5_hex),
            last_modified: now_millis() / 1000 * 1000,
            seq: self.next_seq(),
            headers,
            metadata: metadata.unwrap_or_else(|| source_row.metadata.clone()),
            checksum_algorithm: Some(algorithm.name().to_string()),
            checksum: Some(upload.checksum.1.clone()),
            checksum_type: Some("FULL_OBJECT".into()),
            storage_class: class,
            tags: if replace_tags {
                tagging::from_header(input.str("Tagging"))?
            } else {
                source_row.tags.clone()
            },
            ..ObjectRow::default()
        };
        // The annotations go first, under the new version (unseen until it commits), so a
        // copy onto its own key keeps them when the commit retires the source.
        let destination = (bucket.name.as_str(), key.as_str(), row.seq);
        let annotated = input.str("AnnotationDirective") != Some("EXCLUDE");
        if annotated {
            let source = (
                source_bucket.name.as_str(),
                source.key.as_str(),
                source_row.seq,
            );
            self.env
                .store
                .with(|c| annotations::copy_version(c, source, destination))?;
        }
        let committed = self.commit_object(&bucket, &key, input, &upload.blob, &mut row);
        if committed.is_err() && annotated {
            self.env.store.with(|c| {
                annotations::remove_version(c, destination.0, destination.1, destination.2)
            })?;
        }
        committed?;
        self.notify(ctx, &bucket, "ObjectCreated:Copy", &key, Some(&row));
        let mut result = Value::map()
            .with("ETag", row.etag.clone())
            .with("LastModified", Value::Timestamp(row.last_modified));
        if input.get("ChecksumAlgorithm").is_some() {
            result.insert(checksum_member(algorithm), upload.checksum.1.clone());
            result.insert("ChecksumType", "FULL_OBJECT");
        }
        let mut out = Value::map()
            .with("CopyObjectResult", result)
            .with_opt(
                "CopySourceVersionId",
                version_header(&source_bucket, &source_row),
            )
            .with_opt("VersionId", version_header(&bucket, &row))
            .with_opt(
                "SSEKMSEncryptionContext",
                input.str("SSEKMSEncryptionContext"),
            );
        sse::merge(&mut out, encryption);
        Ok(out)
    }
}

/// Parses `x-amz-copy-source-range` (`bytes=first-last`, both required) against the
/// source's size.
pub(crate) fn copy_source_range(text: &str, size: i64) -> AwsResult<ByteRange> {
    let invalid = || {
        errors::invalid_argument(
            "The x-amz-copy-source-range value must be of the form bytes=first-last where first and last are the zero-based offsets of the first and last bytes to copy",
            "x-amz-copy-source-range",
            text,
        )
    };
    let (a, b) = text
        .strip_prefix("bytes=")
        .and_then(|s| s.split_once('-'))
        .ok_or_else(invalid)?;
    let first: u64 = a.parse().map_err(|_| invalid())?;
    let last: u64 = b.parse().map_err(|_| invalid())?;
    if last < first {
        return Err(invalid());
    }
    if i64::try_from(last).map_or(true, |l| l >= size) {
        return Err(errors::invalid_request(format!(
            "Range specified is not valid for source object of size: {size}"
        )));
    }
    Ok(ByteRange { first, last })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn copy_sources_parse_with_and_without_slash_and_version() {
        let s = parse_copy_source("/b/dir/k%20x").unwrap();
        assert_eq!((s.bucket.as_str(), s.key.as_str()), ("b", "dir/k x"));
        let s = parse_copy_source("b/k?versionId=abc").unwrap();
        assert_eq!(s.version.as_deref(), Some("abc"));
        assert!(parse_copy_source("justbucket").is_err());
        assert!(parse_copy_source("/b/").is_err());
    }

    #[test]
    fn copy_source_ranges_need_both_ends_inside_the_object() {
        assert_eq!(
            copy_source_range("bytes=0-9", 10).unwrap(),
            ByteRange { first: 0, last: 9 }
        );
        assert_eq!(
            copy_source_range("bytes=0-10", 10).unwrap_err().code,
            "InvalidRequest"
        );
        assert_eq!(
            copy_source_range("bytes=5-", 10).unwrap_err().code,
            "InvalidArgument"
        );
    }
}
