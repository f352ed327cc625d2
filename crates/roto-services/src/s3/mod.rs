//! S3: buckets and objects over the rest-xml codec.
//!
//! One file per operation family, as in Garage: `annotations.rs` (object annotations),
//! `buckets.rs` (Create/Head/List/Delete
//! bucket, location, versioning), `config.rs` (the stored bucket configurations: policy,
//! CORS, lifecycle, tagging, encryption, ...), `acl.rs` (ACLs, Object Ownership and Block
//! Public Access), `access.rs` (what each call asks of `--enforce-iam`: its action,
//! resource and the bucket's policy and ACLs), `public.rs` (whether a bucket policy is public), `legacy.rs` (the deprecated notification
//! and lifecycle operations over them), `lifecycle.rs` (lifecycle rules checked as S3
//! checks them), `objects.rs` (Put/Get/Head/Delete object,
//! DeleteObjects, GetObjectAttributes), `conditions.rs` (conditional requests and ranges),
//! `copy.rs` (CopyObject), `sse.rs` (server-side encryption), `reencrypt.rs`
//! (UpdateObjectEncryption), `torrent.rs` (GetObjectTorrent's metainfo files), `tagging.rs` (object tags), `multipart.rs` (multipart uploads),
//! `versions.rs` (the version chain every write goes through), `lock.rs` (Object Lock:
//! retention, legal holds, and the deletions they refuse), `restore.rs` (archived objects
//! and RestoreObject), `select/` (SelectObjectContent: S3 Select's SQL over CSV and JSON
//! objects, answered as an event stream), `list.rs` (ListObjects v1 and v2, ListObjectVersions), `body.rs`
//! (request bodies streamed into blob files, `aws-chunked` decoding, digests; response
//! bodies streamed from them), `errors.rs` (the AWS errors). Bucket names are global
//! across accounts, as in AWS; everything else is reached through its bucket. Object
//! bodies live in blob files named by random ids, never by keys; a row references its
//! blob and is committed only after the blob is complete.

mod access;
mod acl;
mod annotations;
mod body;
mod buckets;
mod conditions;
mod config;
mod copy;
mod cors;
mod errors;
mod legacy;
mod lifecycle;
mod list;
mod lock;
mod metadata;
mod multipart;
mod notifications;
mod objects;
mod post;
mod public;
mod reencrypt;
mod restore;
mod select;
mod sse;
mod tagging;
mod torrent;
mod versions;

pub use select::fuzz;

use std::io;
use std::sync::atomic::{AtomicI64, Ordering};
use std::sync::Arc;

use md5::{Digest, Md5};
use roto_core::access::{Access, Principal};
use roto_core::featureless::{self, Featureless};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

/// The S3 features Roto does not model, answered as S3 answers an account without them:
/// directory buckets (S3 Express One Zone), of which an account here has none, so that
/// their operations on a general purpose bucket are refused; and S3 Object Lambda, whose
/// routes no request here was given.
const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListDirectoryBuckets"),
    Featureless::error("CreateSession", directory_only),
    Featureless::error("RenameObject", directory_only),
    Featureless::error("WriteGetObjectResponse", no_object_lambda_route),
];

/// The refusal of a directory bucket's operation (S3 Express One Zone) on a general
/// purpose bucket.
fn directory_only(_: &Value) -> AwsError {
    AwsError::new(
        "InvalidRequest",
        "This operation is only supported for directory buckets.",
    )
    .with_status(400)
}

/// The answer to an Object Lambda response for a route and token no request was given.
fn no_object_lambda_route(input: &Value) -> AwsError {
    AwsError::new(
        "InvalidRequest",
        format!(
            "The request route {} and token do not belong to a pending Object Lambda request.",
            input.str("RequestRoute").unwrap_or_default()
        ),
    )
    .with_status(400)
}

static SPEC: ServiceSpec = ServiceSpec {
    name: "s3",
    model: "s3",
    query_model: None,
    signing_names: &["s3"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: false,
};

/// Buckets are global (the name is the key). The current version of each key lives in
/// `s3_objects`, keyed by (bucket, key) so that listing seeks the primary-key index in
/// UTF-8 byte order whatever the bucket's size; older versions and delete markers live in
/// `s3_versions`, ordered by a sequence number. Multipart uploads keep their parts' blobs
/// until they complete or abort.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS s3_buckets (
    name TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    created INTEGER NOT NULL,
    versioning TEXT,
    object_lock INTEGER NOT NULL DEFAULT 0
);
CREATE INDEX IF NOT EXISTS s3_buckets_account ON s3_buckets (account, name);
CREATE TABLE IF NOT EXISTS s3_bucket_config (
    bucket TEXT NOT NULL,
    kind TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (bucket, kind)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS s3_objects (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    version_id TEXT,
    blob TEXT,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    last_modified INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    headers TEXT NOT NULL DEFAULT '{}',
    metadata TEXT NOT NULL DEFAULT '{}',
    checksum_algorithm TEXT,
    checksum TEXT,
    checksum_type TEXT,
    storage_class TEXT,
    tags TEXT,
    parts TEXT,
    PRIMARY KEY (bucket, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS s3_versions (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    version_id TEXT,
    blob TEXT,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    last_modified INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    headers TEXT NOT NULL DEFAULT '{}',
    metadata TEXT NOT NULL DEFAULT '{}',
    checksum_algorithm TEXT,
    checksum TEXT,
    checksum_type TEXT,
    storage_class TEXT,
    tags TEXT,
    parts TEXT,
    delete_marker INTEGER NOT NULL DEFAULT 0,
    PRIMARY KEY (bucket, key, seq)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS s3_uploads (
    upload_id TEXT PRIMARY KEY,
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    account TEXT NOT NULL,
    initiated INTEGER NOT NULL,
    template TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS s3_uploads_bucket ON s3_uploads (bucket, key, initiated);
CREATE TABLE IF NOT EXISTS s3_completed_uploads (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    upload_id TEXT NOT NULL,
    etag TEXT NOT NULL,
    PRIMARY KEY (bucket, key)
) WITHOUT ROWID;
CREATE TABLE IF NOT EXISTS s3_parts (
    upload_id TEXT NOT NULL,
    part_number INTEGER NOT NULL,
    blob TEXT NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    last_modified INTEGER NOT NULL,
    checksum TEXT,
    PRIMARY KEY (upload_id, part_number)
) WITHOUT ROWID;
";

/// A bucket's row.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    pub name: String,
    pub account: String,
    pub region: String,
    /// `Enabled`, `Suspended`, or `None` for a bucket never versioned.
    pub versioning: Option<String>,
    /// Whether it has a notification configuration (so writes look it up).
    pub notifies: bool,
    /// Whether Object Lock is enabled (so writes look up its default retention).
    pub object_lock: bool,
}

/// S3.
pub struct S3 {
    env: Arc<Env>,
    seq: AtomicI64,
}

impl S3 {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<S3> {
        env.store.migrate(SCHEMA)?;
        env.store.migrate(annotations::SCHEMA)?;
        for table in ["s3_objects", "s3_versions", "s3_parts"] {
            env.store.register_blob_column(table, "blob");
        }
        let last: i64 = env
            .store
            .with(|c| {
                c.query_row(
                    "SELECT max(coalesce((SELECT max(seq) FROM s3_objects), 0),
                                coalesce((SELECT max(seq) FROM s3_versions), 0))",
                    [],
                    |r| r.get(0),
                )
            })
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(S3 {
            env,
            seq: AtomicI64::new(last),
        })
    }

    /// The next version sequence number: increasing, and past every stored one.
    pub(crate) fn next_seq(&self) -> i64 {
        self.seq.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// The bucket named `name`, whoever owns it.
    pub(crate) fn find_bucket(&self, name: &str) -> AwsResult<Option<Bucket>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT name, account, region, versioning,
                    EXISTS (SELECT 1 FROM s3_bucket_config
                            WHERE bucket = name AND kind = 'notification'),
                    object_lock
                 FROM s3_buckets WHERE name = ?1",
            )?
            .query_row([name], |r| {
                Ok(Bucket {
                    name: r.get(0)?,
                    account: r.get(1)?,
                    region: r.get(2)?,
                    versioning: r.get(3)?,
                    notifies: r.get(4)?,
                    object_lock: r.get(5)?,
                })
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// The bucket named `name`, or `NoSuchBucket`.
    pub(crate) fn bucket(&self, name: &str) -> AwsResult<Bucket> {
        self.find_bucket(name)?
            .ok_or_else(|| errors::no_such_bucket(name))
    }
}

/// A string member of the input.
pub(crate) fn input_str<'a>(input: &'a Value, name: &str) -> &'a str {
    input.str(name).unwrap_or_default()
}

/// The canonical user id S3 shows as an account's `Owner.ID` (64 hex digits).
pub(crate) fn owner(account: &str) -> Value {
    let a = Md5::digest(format!("roto-owner:{account}").as_bytes());
    let b = Md5::digest(account.as_bytes());
    Value::map()
        .with("ID", format!("{}{}", hex::encode(a), hex::encode(b)))
        .with("DisplayName", account)
}

impl Service for S3 {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn featureless(&self) -> &'static [Featureless] {
        FEATURELESS
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let bucket = input_str(&request.input, "Bucket").to_string();
            let method = method_of(operation);
            let headers = request
                .headers
                .contains_key("origin")
                .then(|| request.headers.clone());
            if let Some(expected) = request.input.str("ExpectedBucketOwner") {
                if self
                    .find_bucket(&bucket)?
                    .is_some_and(|b| b.account != expected)
                {
                    return Err(AwsError::new("AccessDenied", "Access Denied").with_status(403));
                }
            }
            let mut response = self.run(ctx, operation, request).await?;
            if let Some(headers) = headers.filter(|_| !bucket.is_empty()) {
                self.add_cors_headers(&bucket, method, &headers, &mut response);
            }
            Ok(response)
        })
    }

    fn access(&self, _: &Context, who: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(who, op, input)
    }
}

/// The HTTP method an operation is sent with (for CORS rule matching).
fn method_of(operation: &str) -> &'static str {
    match operation {
        op if op.starts_with("Get") || op.starts_with("List") => "GET",
        op if op.starts_with("Head") => "HEAD",
        op if op.starts_with("Delete") => "DELETE",
        "PostObject" | "DeleteObjects" | "CompleteMultipartUpload" | "CreateMultipartUpload" => {
            "POST"
        }
        _ => "PUT",
    }
}

impl S3 {
    /// Runs one operation.
    async fn run(&self, ctx: &Context, operation: &str, request: Request) -> AwsResult<Response> {
        let input = &request.input;
        let output = match operation {
            "PreflightRequest" => return self.preflight(&request),
            "PostObject" => return self.post_object(ctx, &request).await,
            "CreateBucket" => self.create_bucket(ctx, input)?,
            "HeadBucket" => self.head_bucket(input)?,
            "ListBuckets" => self.list_buckets(ctx, input)?,
            "DeleteBucket" => self.delete_bucket(input)?,
            "GetBucketLocation" => return self.get_bucket_location(input),
            "GetBucketVersioning" => self.get_bucket_versioning(input)?,
            "PutBucketVersioning" => self.put_bucket_versioning(input)?,
            "ListObjects" => self.list_objects(input)?,
            "ListObjectsV2" => self.list_objects_v2(input)?,
            "ListObjectVersions" => self.list_object_versions(input)?,
            "PutObject" => return self.put_object(ctx, request).await.map(Response::new),
            "GetObject" => return self.get_object(input, false),
            "HeadObject" => return self.get_object(input, true),
            "DeleteObject" => self.delete_object(ctx, input)?,
            "RestoreObject" => return self.restore_object(ctx, input),
            "DeleteObjects" => self.delete_objects(ctx, &request)?,
            "CopyObject" => self.copy_object(ctx, input).await?,
            "GetObjectAttributes" => self.get_object_attributes(input)?,
            "SelectObjectContent" => return self.select_object_content(input).await,
            "GetObjectTorrent" => return self.get_object_torrent(input).await,
            "UpdateObjectEncryption" => self.update_object_encryption(ctx, input).await?,
            "PutObjectAnnotation" => self.put_object_annotation(request).await?,
            "GetObjectAnnotation" => return self.get_object_annotation(input),
            "ListObjectAnnotations" => self.list_object_annotations(input)?,
            "DeleteObjectAnnotation" => self.delete_object_annotation(input)?,
            "GetObjectTagging" => self.get_object_tagging(input)?,
            "PutObjectTagging" => self.put_object_tagging(input)?,
            "DeleteObjectTagging" => self.delete_object_tagging(input)?,
            "CreateMultipartUpload" => self.create_multipart_upload(ctx, input).await?,
            "UploadPart" => return self.upload_part(request).await.map(Response::new),
            "UploadPartCopy" => self.upload_part_copy(input).await?,
            "CompleteMultipartUpload" => self.complete_multipart_upload(ctx, &request).await?,
            "PutBucketNotificationConfiguration" => {
                self.put_bucket_notification(ctx, input).await?
            }
            "PutBucketNotification" => self.put_bucket_notification_legacy(ctx, input).await?,
            "GetBucketNotification" => self.get_bucket_notification_legacy(input)?,
            "PutBucketLifecycle" => self.put_bucket_lifecycle_legacy(input)?,
            "GetBucketLifecycle" => self.get_bucket_lifecycle_legacy(input)?,
            "PutObjectLockConfiguration" => self.put_object_lock_configuration(&request)?,
            "GetObjectLockConfiguration" => self.get_object_lock_configuration(input)?,
            "PutObjectRetention" => self.put_object_retention(&request)?,
            "GetObjectRetention" => self.get_object_retention(input)?,
            "PutObjectLegalHold" => self.put_object_legal_hold(&request)?,
            "GetObjectLegalHold" => self.get_object_legal_hold(input)?,
            "AbortMultipartUpload" => self.abort_multipart_upload(input)?,
            "ListParts" => self.list_parts(input)?,
            "ListMultipartUploads" => self.list_multipart_uploads(input)?,
            "PutBucketPolicy" => {
                let out = self.bucket_config(operation, input)?;
                return Ok(Response::new(out.unwrap_or_else(Value::map)).with_status(204));
            }
            other => match self.metadata(other, input)? {
                Some(out) => out,
                None => self.configuration(other, input)?,
            },
        };
        Ok(Response::new(output))
    }

    /// A bucket configuration operation, or the featureless answer of another.
    fn configuration(&self, operation: &str, input: &Value) -> AwsResult<Value> {
        if let Some(out) = self.bucket_config(operation, input)? {
            return Ok(out);
        }
        if let Some(bucket) = input.str("Bucket") {
            self.bucket(bucket)?;
        }
        featureless::answer(SPEC.model(), FEATURELESS, operation, input)
    }
}
