//! Bucket configurations that S3 stores and returns: policy, CORS, lifecycle, tagging,
//! encryption, ownership controls, public access block, website, notifications, logging,
//! accelerate, request payment, replication, ACLs (the Object Lock configuration, which
//! changes how objects behave, is `lock.rs`'s).
//!
//! Every configuration is one row of `s3_bucket_config` (bucket, kind, the input payload as
//! JSON), driven by the [`CONFIGS`] table: which operations put, get and delete it, which
//! member carries it, and what a bucket without one answers (the `NoSuch*` error AWS
//! sends, or the default AWS applies to every new bucket). A deleted configuration that
//! has a default is kept as a `null` row, so that it reads as missing, as in AWS.

use roto_core::{AwsError, AwsResult, Value};
use rusqlite::OptionalExtension;

use super::errors;
use super::tagging;
use super::{input_str, owner, Bucket, S3};

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
    },
    Config {
        kind: "tagging",
        put: "PutBucketTagging",
        get: "GetBucketTagging",
        delete: Some("DeleteBucketTagging"),
        member: "Tagging",
        shape: Shape::Members,
        missing: Missing::Error("NoSuchTagSet", "The TagSet does not exist"),
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
    },
    Config {
        kind: "notification",
        put: "PutBucketNotificationConfiguration",
        get: "GetBucketNotificationConfiguration",
        delete: None,
        member: "NotificationConfiguration",
        shape: Shape::Members,
        missing: Missing::Empty,
    },
    Config {
        kind: "logging",
        put: "PutBucketLogging",
        get: "GetBucketLogging",
        delete: None,
        member: "BucketLoggingStatus",
        shape: Shape::Members,
        missing: Missing::Empty,
    },
    Config {
        kind: "accelerate",
        put: "PutBucketAccelerateConfiguration",
        get: "GetBucketAccelerateConfiguration",
        delete: None,
        member: "AccelerateConfiguration",
        shape: Shape::Members,
        missing: Missing::Empty,
    },
    Config {
        kind: "request-payment",
        put: "PutBucketRequestPayment",
        get: "GetBucketRequestPayment",
        delete: None,
        member: "RequestPaymentConfiguration",
        shape: Shape::Members,
        missing: Missing::Default(|| Value::map().with("Payer", "BucketOwner"), "", ""),
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
        Ok(text.map(|t| {
            serde_json::from_str::<serde_json::Value>(&t)
                .ok()
                .filter(|j| !j.is_null())
                .map(|j| from_json(&j))
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
            c.execute(
                "INSERT OR REPLACE INTO s3_bucket_config (bucket, kind, value) VALUES (?1, ?2, ?3)",
                [bucket, kind, &json],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    fn remove_config(&self, bucket: &str, kind: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute(
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
            "PutBucketAcl" | "PutObjectAcl" => {
                self.bucket(input_str(input, "Bucket"))?;
                return Ok(Some(Value::map()));
            }
            "GetBucketPolicyStatus" => {
                let bucket = self.bucket(input_str(input, "Bucket"))?;
                return match self.stored_config(&bucket.name, "policy")? {
                    Some(Some(_)) => Ok(Some(
                        Value::map().with("PolicyStatus", Value::map().with("IsPublic", false)),
                    )),
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
            if c.put == operation {
                Some((c, "put"))
            } else if c.get == operation {
                Some((c, "get"))
            } else if c.delete == Some(operation) {
                Some((c, "delete"))
            } else {
                None
            }
        }) else {
            return Ok(None);
        };
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        match verb {
            "put" => {
                let value = input.get(config.member).ok_or_else(errors::malformed_xml)?;
                self.check_config(config.kind, &bucket, value)?;
                self.store_config(&bucket.name, config.kind, Some(value))?;
                Ok(Some(Value::map()))
            }
            "delete" => {
                match config.missing {
                    Missing::Default(..) => self.store_config(&bucket.name, config.kind, None)?,
                    _ => self.remove_config(&bucket.name, config.kind)?,
                }
                Ok(Some(Value::map()))
            }
            _ => {
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
                Ok(Some(match config.shape {
                    Shape::Members => value,
                    Shape::Wrapped(member) => Value::map().with(member, value),
                }))
            }
        }
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
                Ok(())
            }
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
            "lifecycle" => {
                let rules = value.get("Rules").and_then(Value::as_list).unwrap_or_default();
                if rules.is_empty() {
                    return Err(errors::malformed_xml());
                }
                for rule in rules {
                    match rule.str("Status") {
                        Some("Enabled" | "Disabled") => {}
                        _ => return Err(errors::malformed_xml()),
                    }
                }
                Ok(())
            }
            "replication" if bucket.versioning.as_deref() != Some("Enabled") => {
                Err(errors::invalid_request(
                    "Versioning must be 'Enabled' on the bucket to apply a replication configuration",
                ))
            }
            _ => Ok(()),
        }
    }

    fn get_acl(&self, input: &Value, operation: &str) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if operation == "GetObjectAcl" {
            let key = input_str(input, "Key");
            self.env.store.with(|c| {
                super::versions::find(c, &bucket.name, key, input.str("VersionId")).map(|_| ())
            })?;
        }
        let who = owner(&bucket.account);
        let grantee = who.clone().with("Type", "CanonicalUser");
        Ok(Value::map().with("Owner", who).with(
            "Grants",
            vec![Value::map()
                .with("Grantee", grantee)
                .with("Permission", "FULL_CONTROL")],
        ))
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
