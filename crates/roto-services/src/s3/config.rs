//! Bucket configurations that S3 stores and returns: policy, CORS, lifecycle, tagging,
//! encryption, ownership controls, public access block, website, notifications, logging,
//! accelerate, request payment, replication, attribute-based access control (ABAC), ACLs (the Object Lock configuration, which
//! changes how objects behave, is `lock.rs`'s).
//!
//! Every configuration is one row of `s3_bucket_config` (bucket, kind, the input payload as
//! JSON), driven by the [`CONFIGS`] table: which operations put, get and delete it, which
//! member carries it, and what a bucket without one answers (the `NoSuch*` error AWS
//! sends, or the default AWS applies to every new bucket). A deleted configuration that
//! has a default is kept as a `null` row, so that it reads as missing, as in AWS.
//!
//! Analytics, inventory, metrics and intelligent-tiering configurations are many per
//! bucket, each named by its `Id`: their rows' kind is `<kind>/<id>`, so that a List
//! operation pages through them in `Id` order with one range scan.

use base64::Engine;
use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult, Value};
use rusqlite::OptionalExtension;

use super::errors;
use super::lifecycle;
use super::tagging;
use super::{acl, public};
use super::{input_str, Bucket, S3};

/// The lifecycle member (the `x-amz-transition-default-minimum-object-size` header) that
/// says which objects transition, stored beside the rules and returned by Put and Get.
const TRANSITION_MINIMUM_SIZE: &str = "TransitionDefaultMinimumObjectSize";

/// What S3 applies to a lifecycle configuration put without that header.
const DEFAULT_TRANSITION_MINIMUM_SIZE: &str = "all_storage_classes_128K";

/// How a Get operation shapes the stored payload.
#[derive(Clone, Copy)]
enum Shape {
    /// The payload's members are the output's members.
    Members,
    /// The payload is the output member of this name.
    Wrapped(&'static str),
}

/// What a bucket without the configuration answers.
#[derive(Clone, Copy)]
enum Missing {
    /// An error: code, message.
    Error(&'static str, &'static str),
    /// An empty output.
    Empty,
    /// The default every new bucket has (until deleted, when `Error` applies).
    Default(fn() -> Value, &'static str, &'static str),
}

/// A configuration a bucket holds many of, each named by its `Id`.
struct Listed {
    /// The List operation, and the member of its output that lists them.
    operation: &'static str,
    member: &'static str,
    /// The error for a configuration whose `Id` is not the one the request names.
    id_mismatch: fn() -> AwsError,
}

/// One kind of configuration.
struct Config {
    kind: &'static str,
    put: &'static str,
    get: &'static str,
    delete: Option<&'static str>,
    /// The input member of `put` that carries it.
    member: &'static str,
    shape: Shape,
    missing: Missing,
    listed: Option<Listed>,
}

/// What an operation does with its configuration.
#[derive(Clone, Copy, PartialEq)]
enum Verb {
    Put,
    Get,
    Delete,
    List,
}

/// The most configurations of one kind a bucket holds, by `Id`.
const MAX_LISTED: i64 = 1000;

/// A List page.
const LIST_PAGE: usize = 100;

/// What a bucket without the named configuration (by `Id`) answers.
const NO_SUCH_CONFIGURATION: Missing = Missing::Error(
    "NoSuchConfiguration",
    "The specified configuration does not exist.",
);

fn inventory_id_mismatch() -> AwsError {
    AwsError::new(
        "IdMismatch",
        "Document ID does not match the specified configuration ID.",
    )
    .with_status(400)
}

/// A configuration by `Id`, listed by `operation` under `member`.
const fn listed(operation: &'static str, member: &'static str) -> Option<Listed> {
    Some(Listed {
        operation,
        member,
        id_mismatch: errors::malformed_xml,
    })
}

fn default_encryption() -> Value {
    Value::map().with(
        "Rules",
        vec![Value::map()
            .with(
                "ApplyServerSideEncryptionByDefault",
                Value::map().with("SSEAlgorithm", "AES256"),
            )
            .with("BucketKeyEnabled", false)],
    )
}

fn default_ownership() -> Value {
    Value::map().with(
        "Rules",
        vec![Value::map().with("ObjectOwnership", "BucketOwnerEnforced")],
    )
}

fn default_public_access_block() -> Value {
    Value::map()
        .with("BlockPublicAcls", true)
        .with("IgnorePublicAcls", true)
        .with("BlockPublicPolicy", true)
        .with("RestrictPublicBuckets", true)
}

const CONFIGS: &[Config] = &[
    Config {
        kind: "policy",
        put: "PutBucketPolicy",
        get: "GetBucketPolicy",
        delete: Some("DeleteBucketPolicy"),
        member: "Policy",
        shape: Shape::Wrapped("Policy"),
        missing: Missing::Error("NoSuchBucketPolicy", "The bucket policy does not exist"),
        listed: None,
    },
    Config {
        kind: "cors",
        put: "PutBucketCors",
        get: "GetBucketCors",
        delete: Some("DeleteBucketCors"),
        member: "CORSConfiguration",
        shape: Shape::Members,
        missing: Missing::Error(
            "NoSuchCORSConfiguration",
            "The CORS configuration does not exist",
        ),
        listed: None,
    },
    Config {
        kind: "lifecycle",
        put: "PutBucketLifecycleConfiguration",
        get: "GetBucketLifecycleConfiguration",
        delete: Some("DeleteBucketLifecycle"),
        member: "LifecycleConfiguration",
        shape: Shape::Members,
        missing: Missing::Error(
            "NoSuchLifecycleConfiguration",
            "The lifecycle configuration does not exist",
        ),
        listed: None,
    },
    Config {
        kind: "tagging",
        put: "PutBucketTagging",
        get: "GetBucketTagging",
        delete: Some("DeleteBucketTagging"),
        member: "Tagging",
        shape: Shape::Members,
        missing: Missing::Error("NoSuchTagSet", "The TagSet does not exist"),
        listed: None,
    },
    Config {
        kind: "encryption",
        put: "PutBucketEncryption",
        get: "GetBucketEncryption",
        delete: Some("DeleteBucketEncryption"),
        member: "ServerSideEncryptionConfiguration",
        shape: Shape::Wrapped("ServerSideEncryptionConfiguration"),
        missing: Missing::Default(
            default_encryption,
            "ServerSideEncryptionConfigurationNotFoundError",
            "The server side encryption configuration was not found",
        ),
        listed: None,
    },
    Config {
        kind: "ownership",
        put: "PutBucketOwnershipControls",
        get: "GetBucketOwnershipControls",
        delete: Some("DeleteBucketOwnershipControls"),
        member: "OwnershipControls",
        shape: Shape::Wrapped("OwnershipControls"),
        missing: Missing::Default(
            default_ownership,
            "OwnershipControlsNotFoundError",
            "The bucket ownership controls were not found",
        ),
        listed: None,
    },
    Config {
        kind: "public-access-block",
        put: "PutPublicAccessBlock",
        get: "GetPublicAccessBlock",
        delete: Some("DeletePublicAccessBlock"),
        member: "PublicAccessBlockConfiguration",
        shape: Shape::Wrapped("PublicAccessBlockConfiguration"),
        missing: Missing::Default(
            default_public_access_block,
            "NoSuchPublicAccessBlockConfiguration",
            "The public access block configuration was not found",
        ),
        listed: None,
    },
    Config {
        kind: "website",
        put: "PutBucketWebsite",
        get: "GetBucketWebsite",
        delete: Some("DeleteBucketWebsite"),
        member: "WebsiteConfiguration",
        shape: Shape::Members,
        missing: Missing::Error(
            "NoSuchWebsiteConfiguration",
            "The specified bucket does not have a website configuration",
        ),
        listed: None,
    },
    Config {
        kind: "notification",
        put: "PutBucketNotificationConfiguration",
        get: "GetBucketNotificationConfiguration",
        delete: None,
        member: "NotificationConfiguration",
        shape: Shape::Members,
        missing: Missing::Empty,
        listed: None,
    },
    Config {
        kind: "logging",
        put: "PutBucketLogging",
        get: "GetBucketLogging",
        delete: None,
        member: "BucketLoggingStatus",
        shape: Shape::Members,
        missing: Missing::Empty,
        listed: None,
    },
    Config {
        kind: "accelerate",
        put: "PutBucketAccelerateConfiguration",
        get: "GetBucketAccelerateConfiguration",
        delete: None,
        member: "AccelerateConfiguration",
        shape: Shape::Members,
        missing: Missing::Empty,
        listed: None,
    },
    Config {
        kind: "request-payment",
        put: "PutBucketRequestPayment",
        get: "GetBucketRequestPayment",
        delete: None,
        member: "RequestPaymentConfiguration",
        shape: Shape::Members,
        missing: Missing::Default(|| Value::map().with("Payer", "BucketOwner"), "", ""),
        listed: None,
    },
    Config {
        kind: "abac",
        put: "PutBucketAbac",
        get: "GetBucketAbac",
        delete: None,
        member: "AbacStatus",
        shape: Shape::Wrapped("AbacStatus"),
        missing: Missing::Default(|| Value::map().with("Status", "Disabled"), "", ""),
        listed: None,
    },
    Config {
        kind: "replication",
        put: "PutBucketReplication",
        get: "GetBucketReplication",
        delete: Some("DeleteBucketReplication"),
        member: "ReplicationConfiguration",
        shape: Shape::Wrapped("ReplicationConfiguration"),
        missing: Missing::Error(
            "ReplicationConfigurationNotFoundError",
            "The replication configuration was not found",
        ),
        listed: None,
    },
    Config {
        kind: "analytics",
        put: "PutBucketAnalyticsConfiguration",
        get: "GetBucketAnalyticsConfiguration",
        delete: Some("DeleteBucketAnalyticsConfiguration"),
        member: "AnalyticsConfiguration",
        shape: Shape::Wrapped("AnalyticsConfiguration"),
        missing: NO_SUCH_CONFIGURATION,
        listed: listed(
            "ListBucketAnalyticsConfigurations",
            "AnalyticsConfigurationList",
        ),
    },
    Config {
        kind: "inventory",
        put: "PutBucketInventoryConfiguration",
        get: "GetBucketInventoryConfiguration",
        delete: Some("DeleteBucketInventoryConfiguration"),
        member: "InventoryConfiguration",
        shape: Shape::Wrapped("InventoryConfiguration"),
        missing: NO_SUCH_CONFIGURATION,
        listed: Some(Listed {
            operation: "ListBucketInventoryConfigurations",
            member: "InventoryConfigurationList",
            id_mismatch: inventory_id_mismatch,
        }),
    },
    Config {
        kind: "metrics",
        put: "PutBucketMetricsConfiguration",
        get: "GetBucketMetricsConfiguration",
        delete: Some("DeleteBucketMetricsConfiguration"),
        member: "MetricsConfiguration",
        shape: Shape::Wrapped("MetricsConfiguration"),
        missing: NO_SUCH_CONFIGURATION,
        listed: listed(
            "ListBucketMetricsConfigurations",
            "MetricsConfigurationList",
        ),
    },
    Config {
        kind: "intelligent-tiering",
        put: "PutBucketIntelligentTieringConfiguration",
        get: "GetBucketIntelligentTieringConfiguration",
        delete: Some("DeleteBucketIntelligentTieringConfiguration"),
        member: "IntelligentTieringConfiguration",
        shape: Shape::Wrapped("IntelligentTieringConfiguration"),
        missing: NO_SUCH_CONFIGURATION,
        listed: listed(
            "ListBucketIntelligentTieringConfigurations",
            "IntelligentTieringConfigurationList",
        ),
    },
];

/// A value as JSON, timestamps kept as `{"$t": millis}` so they read back as timestamps.
pub(crate) fn to_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as Json;
    match value {
        Value::Bool(b) => Json::Bool(*b),
        Value::Integer(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.clone()),
        Value::Blob(b) => Json::String(String::from_utf8_lossy(b).into_owned()),
        Value::Timestamp(t) => serde_json::json!({ "$t": t }),
        Value::List(l) => Json::Array(l.iter().map(to_json).collect()),
        Value::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), to_json(v))).collect()),
        Value::Null => Json::Null,
    }
}

/// The inverse of [`to_json`].
pub(crate) fn from_json(json: &serde_json::Value) -> Value {
    match json {
        serde_json::Value::Object(o) if o.len() == 1 && o.contains_key("$t") => {
            Value::Timestamp(o["$t"].as_i64().unwrap_or_default())
        }
        serde_json::Value::Object(o) => {
            Value::Map(o.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
        serde_json::Value::Array(a) => Value::List(a.iter().map(from_json).collect()),
        other => Value::from_json(other),
    }
}

/// A query over the rows of configurations by `Id` of one kind: those whose kind lies
/// after `?2` (`<kind>/`, or the last one listed) and before `?3` (`<kind>0`: `0` is the
/// character after `/`).
fn by_id_sql(select: &str) -> String {
    format!(
        "SELECT {select} FROM s3_bucket_config
         WHERE bucket = ?1 AND kind > ?2 AND kind < ?3"
    )
}

/// The fields an inventory report may add.
const INVENTORY_FIELDS: [&str; 13] = [
    "Size",
    "LastModifiedDate",
    "StorageClass",
    "ETag",
    "IsMultipartUploaded",
    "ReplicationStatus",
    "EncryptionStatus",
    "ObjectLockRetainUntilDate",
    "ObjectLockMode",
    "ObjectLockLegalHoldStatus",
    "IntelligentTieringAccessTier",
    "BucketKeyStatus",
    "ChecksumAlgorithm",
];

/// `MalformedXML` unless `member` is one of `allowed`.
fn one_of(value: &Value, member: &str, allowed: &[&str]) -> AwsResult<()> {
    match value.str(member) {
        Some(v) if allowed.contains(&v) => Ok(()),
        _ => Err(errors::malformed_xml()),
    }
}

/// A stored configuration's text as a value; `None` for a deleted one.
fn parse_stored(text: &str) -> Option<Value> {
    serde_json::from_str::<serde_json::Value>(text)
        .ok()
        .filter(|j| !j.is_null())
        .map(|j| from_json(&j))
}

/// A configuration as its Get operation answers it.
fn shaped(config: &Config, value: Value) -> Value {
    match config.shape {
        Shape::Members => value,
        Shape::Wrapped(member) => Value::map().with(member, value),
    }
}

fn error(code: &'static str, message: &'static str, bucket: &str) -> AwsError {
    AwsError::new(code, message)
        .with_status(404)
        .with_field("BucketName", bucket)
}

impl S3 {
    /// A stored configuration: `None` if never set, `Some(None)` if deleted.
    pub(crate) fn stored_config(
        &self,
        bucket: &str,
        kind: &str,
    ) -> AwsResult<Option<Option<Value>>> {
        let text: Option<String> = self.env.store.with(|c| {
            c.prepare_cached("SELECT value FROM s3_bucket_config WHERE bucket = ?1 AND kind = ?2")?
                .query_row([bucket, kind], |r| r.get(0))
                .optional()
                .map_err(AwsError::from)
        })?;
        Ok(text.map(|t| parse_stored(&t)))
    }

    /// Several stored configurations in one query, in the order of `kinds`, each as
    /// [`S3::stored_config`] answers it.
    pub(crate) fn stored_configs<const N: usize>(
        &self,
        bucket: &str,
        kinds: [&str; N],
    ) -> AwsResult<[Option<Option<Value>>; N]> {
        let placeholders: Vec<String> = (2..N + 2).map(|i| format!("?{i}")).collect();
        let sql = format!(
            "SELECT kind, value FROM s3_bucket_config WHERE bucket = ?1 AND kind IN ({})",
            placeholders.join(", ")
        );
        let rows: Vec<(String, String)> = self.env.store.with(|c| {
            let params = std::iter::once(bucket).chain(kinds);
            c.prepare_cached(&sql)?
                .query_map(rusqlite::params_from_iter(params), |r| {
                    Ok((r.get(0)?, r.get(1)?))
                })?
                .collect::<Result<_, _>>()
                .map_err(AwsError::from)
        })?;
        Ok(kinds.map(|kind| {
            rows.iter()
                .find(|(k, _)| k == kind)
                .map(|(_, text)| parse_stored(text))
        }))
    }

    pub(crate) fn store_config(
        &self,
        bucket: &str,
        kind: &str,
        value: Option<&Value>,
    ) -> AwsResult<()> {
        let json = value.map_or(serde_json::Value::Null, to_json).to_string();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO s3_bucket_config (bucket, kind, value) VALUES (?1, ?2, ?3)",
                [bucket, kind, &json],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(crate) fn remove_config(&self, bucket: &str, kind: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM s3_bucket_config WHERE bucket = ?1 AND kind = ?2",
                [bucket, kind],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Serves a configuration operation, or `None` if `operation` is not one.
    pub(crate) fn bucket_config(&self, operation: &str, input: &Value) -> AwsResult<Option<Value>> {
        match operation {
            "GetBucketAcl" | "GetObjectAcl" => return self.get_acl(input, operation).map(Some),
            "PutBucketAcl" | "PutObjectAcl" => return self.put_acl(input, operation).map(Some),
            "GetBucketPolicyStatus" => {
                let bucket = self.bucket(input_str(input, "Bucket"))?;
                return match self.stored_config(&bucket.name, "policy")? {
                    Some(Some(policy)) => {
                        let public = public::policy_is_public(policy.as_str().unwrap_or_default());
                        Ok(Some(Value::map().with(
                            "PolicyStatus",
                            Value::map().with("IsPublic", public),
                        )))
                    }
                    _ => Err(error(
                        "NoSuchBucketPolicy",
                        "The bucket policy does not exist",
                        &bucket.name,
                    )),
                };
            }
            _ => {}
        }
        let Some((config, verb)) = CONFIGS.iter().find_map(|c| {
            let verb = match operation {
                op if op == c.put => Verb::Put,
                op if op == c.get => Verb::Get,
                op if Some(op) == c.delete => Verb::Delete,
                op if c.listed.as_ref().is_some_and(|l| l.operation == op) => Verb::List,
                _ => return None,
            };
            Some((c, verb))
        }) else {
            return Ok(None);
        };
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if let Some(listed) = &config.listed {
            return self
                .config_by_id(config, listed, verb, &bucket, input)
                .map(Some);
        }
        match verb {
            Verb::Put => {
                let value = input.get(config.member).ok_or_else(errors::malformed_xml)?;
                let mut value = self.checked_config(config.kind, &bucket, value)?;
                let mut output = Value::map();
                if config.kind == "lifecycle" {
                    let size = input
                        .str(TRANSITION_MINIMUM_SIZE)
                        .unwrap_or(DEFAULT_TRANSITION_MINIMUM_SIZE);
                    value.insert(TRANSITION_MINIMUM_SIZE, size);
                    output.insert(TRANSITION_MINIMUM_SIZE, size);
                }
                self.store_config(&bucket.name, config.kind, Some(&value))?;
                Ok(Some(output))
            }
            Verb::Delete => {
                match config.missing {
                    Missing::Default(..) => self.store_config(&bucket.name, config.kind, None)?,
                    _ => self.remove_config(&bucket.name, config.kind)?,
                }
                Ok(Some(Value::map()))
            }
            Verb::Get | Verb::List => {
                let stored = self.stored_config(&bucket.name, config.kind)?;
                let value = match (stored, config.missing) {
                    (Some(Some(v)), _) => v,
                    (None, Missing::Default(default, ..)) => default(),
                    (Some(None), Missing::Default(_, code, message))
                    | (_, Missing::Error(code, message)) => {
                        return Err(error(code, message, &bucket.name));
                    }
                    (_, Missing::Empty) => Value::map(),
                };
                Ok(Some(shaped(config, value)))
            }
        }
    }

    /// Serves a configuration a bucket holds many of, by `Id`.
    fn config_by_id(
        &self,
        config: &Config,
        listed: &Listed,
        verb: Verb,
        bucket: &Bucket,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = format!("{}/", config.kind);
        if verb == Verb::List {
            return self.list_configs(listed, &prefix, bucket, input);
        }
        let id = input_str(input, "Id");
        let kind = format!("{prefix}{id}");
        let missing = || match config.missing {
            Missing::Error(code, message) => error(code, message, &bucket.name),
            _ => errors::malformed_xml(),
        };
        let stored = self.stored_config(&bucket.name, &kind)?.flatten();
        match verb {
            Verb::Put => {
                let value = input.get(config.member).ok_or_else(errors::malformed_xml)?;
                let value = self.checked_config(config.kind, bucket, value)?;
                if value.str("Id") != Some(id) {
                    return Err((listed.id_mismatch)());
                }
                if stored.is_none() && self.count_configs(&bucket.name, &prefix)? >= MAX_LISTED {
                    return Err(AwsError::new(
                        "TooManyConfigurations",
                        "You are attempting to create a new configuration but have already reached the 1,000-configuration limit.",
                    )
                    .with_status(400));
                }
                self.store_config(&bucket.name, &kind, Some(&value))?;
                Ok(Value::map())
            }
            Verb::Delete => {
                stored.ok_or_else(missing)?;
                self.remove_config(&bucket.name, &kind)?;
                Ok(Value::map())
            }
            Verb::Get | Verb::List => Ok(shaped(config, stored.ok_or_else(missing)?)),
        }
    }

    fn count_configs(&self, bucket: &str, prefix: &str) -> AwsResult<i64> {
        let end = format!("{}0", prefix.trim_end_matches('/'));
        self.env.store.with(|c| {
            c.prepare_cached(&by_id_sql("count(*)"))?
                .query_row([bucket, prefix, &end], |r| r.get(0))
                .map_err(AwsError::from)
        })
    }

    /// A page of configurations by `Id`, in `Id` order; the continuation token is the last
    /// `Id` listed, base64-encoded.
    fn list_configs(
        &self,
        listed: &Listed,
        prefix: &str,
        bucket: &Bucket,
        input: &Value,
    ) -> AwsResult<Value> {
        let token = input.str("ContinuationToken");
        let after = match token {
            None => String::new(),
            Some(t) => base64::engine::general_purpose::STANDARD
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .filter(|id| !id.is_empty())
                .ok_or_else(|| {
                    errors::invalid_argument(
                        "The continuation token provided is incorrect",
                        "continuation-token",
                        t,
                    )
                })?,
        };
        let start = format!("{prefix}{after}");
        let end = format!("{}0", prefix.trim_end_matches('/'));
        let limit = i64::try_from(LIST_PAGE + 1).unwrap_or(i64::MAX);
        let texts: Vec<String> = self.env.store.with(|c| {
            let sql = format!("{} ORDER BY kind LIMIT ?4", by_id_sql("value"));
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(rusqlite::params![bucket.name, start, end, limit], |r| {
                r.get(0)
            })?;
            rows.collect::<Result<_, _>>().map_err(AwsError::from)
        })?;
        let truncated = texts.len() > LIST_PAGE;
        let page: Vec<Value> = texts
            .iter()
            .take(LIST_PAGE)
            .filter_map(|t| serde_json::from_str::<serde_json::Value>(t).ok())
            .map(|j| from_json(&j))
            .collect();
        let next = page
            .last()
            .filter(|_| truncated)
            .and_then(|v| v.str("Id"))
            .map(|id| base64::engine::general_purpose::STANDARD.encode(id));
        let mut out = Value::map()
            .with("IsTruncated", truncated)
            .with_opt("ContinuationToken", token)
            .with_opt("NextContinuationToken", next);
        if !page.is_empty() {
            out.insert(listed.member, page);
        }
        Ok(out)
    }

    /// The configuration to store: checked as AWS checks it, with the members AWS fills in
    /// (a replication or lifecycle rule's `ID`).
    fn checked_config(&self, kind: &str, bucket: &Bucket, value: &Value) -> AwsResult<Value> {
        self.check_config(kind, bucket, value)?;
        if kind == "public-access-block" {
            return Ok(acl::full_public_access_block(value));
        }
        let mut value = value.clone();
        if kind == "replication" || kind == "lifecycle" {
            lifecycle::with_ids(&mut value);
        }
        Ok(value)
    }

    /// The checks AWS makes on a configuration before storing it.
    fn check_config(&self, kind: &str, bucket: &Bucket, value: &Value) -> AwsResult<()> {
        match kind {
            "policy" => {
                let text = value.as_str().unwrap_or_default();
                let json: Option<serde_json::Value> = serde_json::from_str(text).ok();
                let statements = json
                    .as_ref()
                    .and_then(|j| j.get("Statement"))
                    .is_some_and(|s| s.is_array() || s.is_object());
                if !text.trim_start().starts_with('{') || json.is_none() {
                    return Err(AwsError::new(
                        "MalformedPolicy",
                        "Policies must be valid JSON and the first byte must be '{'",
                    )
                    .with_status(400));
                }
                if !statements {
                    return Err(AwsError::new("MalformedPolicy", "Missing required field Statement")
                        .with_status(400));
                }
                if public::policy_is_public(text)
                    && self.public_access_block(&bucket.name)?.block_public_policy
                {
                    return Err(acl::blocked());
                }
                Ok(())
            }
            "ownership" => self.check_ownership(bucket, value),
            "cors" => {
                let rules = value.get("CORSRules").and_then(Value::as_list).unwrap_or_default();
                if rules.is_empty() || rules.len() > 100 {
                    return Err(errors::malformed_xml());
                }
                for rule in rules {
                    for method in rule
                        .get("AllowedMethods")
                        .and_then(Value::as_list)
                        .unwrap_or_default()
                        .iter()
                        .filter_map(Value::as_str)
                    {
                        if !["GET", "PUT", "HEAD", "POST", "DELETE"].contains(&method) {
                            return Err(errors::invalid_request(format!(
                                "Found unsupported HTTP method in CORS config. Unsupported method is {method}"
                            )));
                        }
                    }
                }
                Ok(())
            }
            "tagging" => {
                let tags = tagging::from_tag_set(value.get("TagSet"));
                tagging::check(&tags, 50, "Bucket")
            }
            "lifecycle" => lifecycle::check(value),
            "replication" if bucket.versioning.as_deref() != Some("Enabled") => {
                Err(errors::invalid_request(
                    "Versioning must be 'Enabled' on the bucket to apply a replication configuration",
                ))
            }
            "replication" => {
                let rules = value.get("Rules").and_then(Value::as_list).unwrap_or_default();
                if rules.is_empty() {
                    return Err(errors::malformed_xml());
                }
                for rule in rules {
                    if !matches!(rule.str("Status"), Some("Enabled" | "Disabled")) {
                        return Err(errors::malformed_xml());
                    }
                    let arn = rule
                        .get("Destination")
                        .and_then(|d| d.str("Bucket"))
                        .ok_or_else(errors::malformed_xml)?;
                    let name = arn.strip_prefix("arn:aws:s3:::").unwrap_or(arn);
                    let versioned = self
                        .find_bucket(name)?
                        .is_some_and(|b| b.versioning.as_deref() == Some("Enabled"));
                    if !versioned {
                        return Err(errors::invalid_request(
                            "Destination bucket must have versioning enabled.",
                        ));
                    }
                }
                Ok(())
            }
            "logging" => {
                let Some(enabled) = value.get("LoggingEnabled") else {
                    return Ok(());
                };
                let target = enabled
                    .str("TargetBucket")
                    .ok_or_else(errors::malformed_xml)?;
                let Some(target_bucket) = self
                    .find_bucket(target)?
                    .filter(|b| b.account == bucket.account)
                else {
                    return Err(AwsError::new(
                        "InvalidTargetBucketForLogging",
                        "The target bucket for logging does not exist",
                    )
                    .with_status(400)
                    .with_field("TargetBucket", target));
                };
                if target_bucket.region != bucket.region {
                    let mut e = AwsError::new(
                        "CrossLocationLoggingProhibitted",
                        "Cross S3 location logging not allowed. ",
                    )
                    .with_status(403);
                    if bucket.region != "us-east-1" {
                        e = e.with_field("SourceBucketLocation", &bucket.region);
                    }
                    return Err(e.with_field("TargetBucketLocation", &target_bucket.region));
                }
                Ok(())
            }
            "accelerate" => {
                if bucket.name.contains('.') {
                    return Err(errors::invalid_request(
                        "S3 Transfer Acceleration is not supported for buckets with periods (.) in their names",
                    ));
                }
                one_of(value, "Status", &["Enabled", "Suspended"])
            }
            "request-payment" => one_of(value, "Payer", &["Requester", "BucketOwner"]),
            "analytics" if value.get("StorageClassAnalysis").is_none() => {
                Err(errors::malformed_xml())
            }
            "inventory" => {
                let destination = value
                    .get("Destination")
                    .and_then(|d| d.get("S3BucketDestination"))
                    .ok_or_else(errors::malformed_xml)?;
                one_of(destination, "Format", &["CSV", "ORC", "Parquet"])?;
                one_of(value, "IncludedObjectVersions", &["All", "Current"])?;
                one_of(
                    value.get("Schedule").ok_or_else(errors::malformed_xml)?,
                    "Frequency",
                    &["Daily", "Weekly"],
                )?;
                if value.bool("IsEnabled").is_none() {
                    return Err(errors::malformed_xml());
                }
                let fields = value
                    .get("OptionalFields")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                if fields
                    .iter()
                    .any(|f| !f.as_str().is_some_and(|f| INVENTORY_FIELDS.contains(&f)))
                {
                    return Err(errors::malformed_xml());
                }
                if !destination
                    .str("Bucket")
                    .is_some_and(|b| b.starts_with("arn:"))
                {
                    return Err(AwsError::new("InvalidS3DestinationBucket", "Invalid bucket ARN.")
                        .with_status(400));
                }
                Ok(())
            }
            "intelligent-tiering" => {
                one_of(value, "Status", &["Enabled", "Disabled"])?;
                let tierings = value
                    .get("Tierings")
                    .and_then(Value::as_list)
                    .unwrap_or_default();
                if tierings.is_empty() {
                    return Err(errors::malformed_xml());
                }
                for tiering in tierings {
                    one_of(tiering, "AccessTier", &["ARCHIVE_ACCESS", "DEEP_ARCHIVE_ACCESS"])?;
                    if tiering.int("Days").is_none() {
                        return Err(errors::malformed_xml());
                    }
                }
                Ok(())
            }
            _ => Ok(()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn stored_values_keep_their_types() {
        let v = Value::map()
            .with("Date", Value::Timestamp(1_700_000_000_000))
            .with("Days", 3i64)
            .with("On", true)
            .with("Rules", vec![Value::map().with("ID", "r")]);
        assert_eq!(from_json(&to_json(&v)), v);
    }
}
