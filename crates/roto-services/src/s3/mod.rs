//! S3: buckets and objects over the rest-xml codec.
//!
//! One file per operation family, as in Garage: `buckets.rs` (Create/Head/List/Delete
//! bucket), `objects.rs` (Put/Get/Head/Delete object), `list.rs` (ListObjectsV2),
//! `body.rs` (request bodies streamed into blob files, `aws-chunked` decoding, digests;
//! response bodies streamed from them), `errors.rs` (the AWS errors). Bucket names are
//! global across accounts, as in AWS; everything else is reached through its bucket.
//! Object bodies live in blob files named by random ids, never by keys; a row in
//! `s3_objects` references its blob and is committed only after the blob is complete.

mod body;
mod buckets;
mod errors;
mod list;
mod objects;

use std::io;
use std::sync::Arc;

use md5::{Digest, Md5};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};
use rusqlite::OptionalExtension;

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

/// Buckets are global (the name is the key); objects are keyed by (bucket, key) so that
/// listing seeks the primary-key index in UTF-8 byte order.
const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS s3_buckets (
    name TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    created INTEGER NOT NULL
);
CREATE INDEX IF NOT EXISTS s3_buckets_account ON s3_buckets (account, name);
CREATE TABLE IF NOT EXISTS s3_objects (
    bucket TEXT NOT NULL,
    key TEXT NOT NULL,
    blob TEXT NOT NULL,
    size INTEGER NOT NULL,
    etag TEXT NOT NULL,
    last_modified INTEGER NOT NULL,
    content_type TEXT,
    content_encoding TEXT,
    content_disposition TEXT,
    content_language TEXT,
    cache_control TEXT,
    expires TEXT,
    metadata TEXT NOT NULL DEFAULT '{}',
    checksum_algorithm TEXT,
    checksum TEXT,
    PRIMARY KEY (bucket, key)
) WITHOUT ROWID;
";

/// A bucket's row.
#[derive(Debug, Clone)]
pub(crate) struct Bucket {
    pub name: String,
    pub account: String,
    pub region: String,
}

/// S3.
pub struct S3 {
    env: Arc<Env>,
}

impl S3 {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<S3> {
        env.store
            .migrate(SCHEMA)
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(S3 { env })
    }

    /// The bucket named `name`, whoever owns it.
    pub(crate) fn find_bucket(&self, name: &str) -> AwsResult<Option<Bucket>> {
        self.env.store.with(|c| {
            c.query_row(
                "SELECT name, account, region FROM s3_buckets WHERE name = ?1",
                [name],
                |r| {
                    Ok(Bucket {
                        name: r.get(0)?,
                        account: r.get(1)?,
                        region: r.get(2)?,
                    })
                },
            )
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

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let input = &request.input;
            let output = match operation {
                "CreateBucket" => self.create_bucket(ctx, input)?,
                "HeadBucket" => self.head_bucket(input)?,
                "ListBuckets" => self.list_buckets(ctx)?,
                "DeleteBucket" => self.delete_bucket(input)?,
                "ListObjectsV2" => self.list_objects_v2(input)?,
                "PutObject" => return self.put_object(request).await.map(Response::new),
                "GetObject" => return self.get_object(input, false),
                "HeadObject" => return self.get_object(input, true),
                "DeleteObject" => self.delete_object(input)?,
                _ => return Err(AwsError::not_implemented(operation)),
            };
            Ok(Response::new(output))
        })
    }
}
