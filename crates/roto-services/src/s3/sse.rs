//! Server-side encryption as S3 applies and reports it: SSE-S3 (`AES256`), SSE-KMS
//! (`aws:kms`, `aws:kms:dsse`) and SSE-C (a key the caller sends with every request).
//!
//! A write resolves its encryption from its own headers, else from the bucket's default
//! encryption; the result (algorithm, KMS key ARN, Bucket Key, or the customer key's
//! algorithm and MD5, never the key) is stored with the object's headers and echoed by
//! every response about the object. SSE-KMS asks KMS, through the dispatcher, for a data key
//! under the chosen key (the account's `aws/s3` key when none is named), so a key that does
//! not exist, is disabled or is pending deletion refuses the write with KMS's error as S3
//! relays it (`KMS.NotFoundException`, ...). Reads of an SSE-C object, and copies from one,
//! need the same key; SSE-C parameters for an object without SSE-C are refused.
//!
//! The bytes themselves are stored as received, not encrypted: Roto's store is the user's
//! own disk, and what S3 shows of encryption (headers, key checks, refusals) does not
//! depend on it.

use base64::Engine;
use md5::{Digest, Md5};
use roto_core::{AwsError, AwsResult, Context, Value};

use super::errors;
use super::objects::{edit_headers, stored_map, StoredHeaders};
use super::{Bucket, S3};

/// The stored header members that describe an object's encryption.
const MEMBERS: [&str; 5] = [
    "ServerSideEncryption",
    "SSEKMSKeyId",
    "BucketKeyEnabled",
    "SSECustomerAlgorithm",
    "SSECustomerKeyMD5",
];

/// The algorithms `x-amz-server-side-encryption` accepts.
const ALGORITHMS: [&str; 3] = ["AES256", "aws:kms", "aws:kms:dsse"];

/// A customer-provided key as a request gives it, checked: its algorithm and the MD5 of the
/// key (base64).
#[derive(Debug, PartialEq)]
pub(crate) struct CustomerKey {
    algorithm: String,
    md5: String,
}

fn invalid(message: &str, name: &str, value: &str) -> AwsError {
    errors::invalid_argument(message, name, value)
}

/// The header a member of the SSE-C triple is sent in, for `prefix` "" or "CopySource".
fn header_of(prefix: &str, suffix: &str) -> String {
    let base = if prefix.is_empty() {
        "x-amz-server-side-encryption-customer-"
    } else {
        "x-amz-copy-source-server-side-encryption-customer-"
    };
    format!("{base}{suffix}")
}

/// The SSE-C key `input` gives under `prefix` ("" for the object written or read,
/// "CopySource" for a copy's source), checked as S3 checks it.
pub(crate) fn customer_key(input: &Value, prefix: &str) -> AwsResult<Option<CustomerKey>> {
    let member = |name: &str| match prefix {
        "" => input.str(name),
        _ => input.str(&format!("{prefix}{name}")),
    };
    let algorithm = member("SSECustomerAlgorithm");
    let key = member("SSECustomerKey");
    let md5 = member("SSECustomerKeyMD5");
    let (algorithm, key) = match (algorithm, key, md5) {
        (None, None, None) => return Ok(None),
        (None, _, _) => {
            return Err(invalid(
                "Requests specifying Server Side Encryption with Customer provided keys must provide a valid encryption algorithm.",
                &header_of(prefix, "algorithm"),
                "null",
            ))
        }
        (Some(_), None, _) => {
            return Err(invalid(
                "Requests specifying Server Side Encryption with Customer provided keys must provide an appropriate secret key.",
                &header_of(prefix, "key"),
                "null",
            ))
        }
        (Some(a), Some(k), _) => (a, k),
    };
    if algorithm != "AES256" {
        return Err(AwsError::new(
            "InvalidEncryptionAlgorithmError",
            "The Encryption request you specified is not valid. Supported value: AES256.",
        )
        .with_status(400)
        .with_field("ArgumentName", header_of(prefix, "algorithm"))
        .with_field("ArgumentValue", algorithm));
    }
    let engine = base64::engine::general_purpose::STANDARD;
    let bytes = engine.decode(key).ok().filter(|k| k.len() == 32);
    let Some(bytes) = bytes else {
        return Err(invalid(
            "The secret key was invalid for the specified algorithm.",
            &header_of(prefix, "key"),
            "null",
        ));
    };
    let calculated = engine.encode(Md5::digest(&bytes));
    match md5 {
        None => Err(invalid(
            "Requests specifying Server Side Encryption with Customer provided keys must provide the client calculated MD5 of the secret key.",
            &header_of(prefix, "key-MD5"),
            "null",
        )),
        Some(given) if given != calculated => Err(invalid(
            "The calculated MD5 hash of the key did not match the hash that was provided.",
            &header_of(prefix, "key-MD5"),
            given,
        )),
        Some(_) => Ok(Some(CustomerKey {
            algorithm: algorithm.to_string(),
            md5: calculated,
        })),
    }
}

/// The SSE-C key MD5 an object's stored headers hold, if it was written with SSE-C.
fn stored_customer_md5(headers: &StoredHeaders) -> Option<&str> {
    headers.get("SSECustomerKeyMD5")?.as_str()
}

/// Checks the SSE-C parameters a read (`prefix` "") or a copy's source ("CopySource")
/// sends against the object's stored encryption.
pub(crate) fn check_read(input: &Value, prefix: &str, headers: &str) -> AwsResult<()> {
    check_read_stored(input, prefix, &stored_map(headers))
}

/// [`check_read`] over headers already parsed.
pub(crate) fn check_read_stored(
    input: &Value,
    prefix: &str,
    headers: &StoredHeaders,
) -> AwsResult<()> {
    let given = customer_key(input, prefix)?;
    match (stored_customer_md5(headers), given) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(errors::invalid_request(
            "The object was stored using a form of Server Side Encryption. The correct parameters must be provided to retrieve the object.",
        )),
        (None, Some(_)) => Err(errors::invalid_request(
            "The encryption parameters are not applicable to this object.",
        )),
        (Some(stored), Some(given)) if stored != given.md5 => {
            Err(AwsError::new("AccessDenied", "Access Denied").with_status(403))
        }
        (Some(_), Some(_)) => Ok(()),
    }
}

/// Checks the SSE-C parameters of a part (UploadPart, UploadPartCopy) against those its
/// multipart upload was created with.
pub(crate) fn check_part(input: &Value, upload_headers: &str) -> AwsResult<()> {
    let given = customer_key(input, "")?;
    match (stored_customer_md5(&stored_map(upload_headers)), given) {
        (None, None) => Ok(()),
        (Some(_), None) => Err(errors::invalid_request(
            "The multipart upload initiate requested encryption. Subsequent part requests must include the appropriate encryption parameters.",
        )),
        (None, Some(_)) => Err(errors::invalid_request(
            "The multipart upload initiate did not request encryption. Subsequent part requests must not include encryption parameters.",
        )),
        (Some(stored), Some(given)) if stored != given.md5 => Err(errors::invalid_request(
            "The provided encryption parameters did not match the ones used originally.",
        )),
        (Some(_), Some(_)) => Ok(()),
    }
}

/// The encryption members of stored headers, as responses echo them: `AES256` for an
/// object stored before encryption was recorded.
pub(crate) fn echo(headers: &str) -> Value {
    echo_stored(&stored_map(headers))
}

/// [`echo`] over headers already parsed.
pub(crate) fn echo_stored(map: &StoredHeaders) -> Value {
    let mut out = Value::map();
    for member in MEMBERS {
        if let Some(v) = map.get(member) {
            out.insert(member, Value::from_json(v));
        }
    }
    if out.get("ServerSideEncryption").is_none() && out.get("SSECustomerAlgorithm").is_none() {
        out.insert("ServerSideEncryption", "AES256");
    }
    out
}

/// Copies every member of `from` into `to`.
pub(crate) fn merge(to: &mut Value, from: Value) {
    if let Value::Map(members) = from {
        for (name, value) in members {
            to.insert(name, value);
        }
    }
}

/// Stored headers with their encryption members replaced by `encryption`'s.
pub(crate) fn store(headers: &str, encryption: &Value) -> String {
    edit_headers(headers, |map| {
        for member in MEMBERS {
            map.remove(member);
        }
        if let Some(members) = encryption.as_map() {
            for (name, value) in members {
                map.insert(name.clone(), value.to_json());
            }
        }
    })
}

/// `x-amz-server-side-encryption` (or the bucket default) and its key, as a write resolves
/// them.
struct Managed {
    algorithm: String,
    key_id: Option<String>,
    bucket_key: Option<bool>,
}

impl S3 {
    /// The encryption a write of `key` into `bucket` gets, checked and resolved: the
    /// members to store with the object and echo in responses.
    pub(crate) async fn encryption_for_write(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        key: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let customer = customer_key(input, "")?;
        let requested = input.str("ServerSideEncryption");
        if let Some(alg) = requested.filter(|a| !ALGORITHMS.contains(a)) {
            return Err(invalid(
                "The encryption method specified is not supported",
                "x-amz-server-side-encryption",
                alg,
            ));
        }
        if let (Some(_), Some(alg)) = (&customer, requested) {
            return Err(invalid(
                "Server Side Encryption with Customer provided key is incompatible with the encryption method specified",
                "x-amz-server-side-encryption",
                alg,
            ));
        }
        let kms = requested.is_some_and(|a| a.starts_with("aws:kms"));
        if let (Some(id), false) = (input.str("SSEKMSKeyId"), kms) {
            return Err(invalid(
                "Server Side Encryption with AWS KMS managed key requires HTTP header x-amz-server-side-encryption : aws:kms",
                "x-amz-server-side-encryption-aws-kms-key-id",
                id,
            ));
        }
        if let Some(customer) = customer {
            return Ok(Value::map()
                .with("SSECustomerAlgorithm", customer.algorithm)
                .with("SSECustomerKeyMD5", customer.md5));
        }
        let managed = match requested {
            Some(alg) => Managed {
                algorithm: alg.to_string(),
                key_id: input.str("SSEKMSKeyId").map(str::to_string),
                bucket_key: input.bool("BucketKeyEnabled"),
            },
            None => self.default_encryption(&bucket.name)?,
        };
        let bucket_key = managed.bucket_key.or(input.bool("BucketKeyEnabled"));
        let mut out = Value::map().with("ServerSideEncryption", managed.algorithm.as_str());
        if managed.algorithm.starts_with("aws:kms") {
            let arn = self
                .kms_data_key(ctx, bucket, key, managed.key_id.as_deref(), input)
                .await?;
            out.insert("SSEKMSKeyId", arn);
            if bucket_key == Some(true) {
                out.insert("BucketKeyEnabled", true);
            }
        }
        Ok(out)
    }

    /// The bucket's default encryption (SSE-S3 unless configured otherwise).
    fn default_encryption(&self, bucket: &str) -> AwsResult<Managed> {
        let stored = self.stored_config(bucket, "encryption")?.flatten();
        let rule = stored
            .as_ref()
            .and_then(|c| c.get("Rules"))
            .and_then(Value::as_list)
            .and_then(<[Value]>::first);
        let by_default = rule.and_then(|r| r.get("ApplyServerSideEncryptionByDefault"));
        Ok(Managed {
            algorithm: by_default
                .and_then(|d| d.str("SSEAlgorithm"))
                .unwrap_or("AES256")
                .to_string(),
            key_id: by_default
                .and_then(|d| d.str("KMSMasterKeyID"))
                .map(str::to_string),
            bucket_key: rule.and_then(|r| r.bool("BucketKeyEnabled")),
        })
    }

    /// Asks KMS for a data key under `key_id` (the account's `aws/s3` key by default) for
    /// the object, as S3 does for every SSE-KMS write; answers the key's ARN, or KMS's
    /// error as S3 relays it.
    pub(crate) async fn kms_data_key(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        key: &str,
        key_id: Option<&str>,
        input: &Value,
    ) -> AwsResult<String> {
        let mut context = encryption_context(input)?;
        context.insert("aws:s3:arn", format!("arn:aws:s3:::{}/{key}", bucket.name));
        let request = Value::map()
            .with("KeyId", key_id.unwrap_or("alias/aws/s3"))
            .with("KeySpec", "AES_256")
            .with("EncryptionContext", context);
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the dispatcher is not running"))?;
        let kms_ctx = Context {
            account: bucket.account.clone(),
            region: bucket.region.clone(),
            ..ctx.clone()
        };
        let out = dispatcher
            .call(&kms_ctx, "kms", "GenerateDataKey", request)
            .await
            .map_err(|e| AwsError::new(format!("KMS.{}", e.code), e.message).with_status(400))?;
        out.str("KeyId")
            .map(str::to_string)
            .ok_or_else(|| AwsError::internal("GenerateDataKey returned no key id"))
    }
}

/// The `x-amz-server-side-encryption-context` a request gives (base64 of a JSON object of
/// strings), checked.
fn encryption_context(input: &Value) -> AwsResult<Value> {
    let Some(text) = input.str("SSEKMSEncryptionContext") else {
        return Ok(Value::map());
    };
    let bad = || {
        invalid(
            "The header 'x-amz-server-side-encryption-context' shall be Base64-encoded UTF-8 string holding JSON which represents a string-string map",
            "x-amz-server-side-encryption-context",
            text,
        )
    };
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(text)
        .map_err(|_| bad())?;
    let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| bad())?;
    let map = json.as_object().ok_or_else(bad)?;
    if map.values().any(|v| !v.is_string()) {
        return Err(bad());
    }
    Ok(Value::from_json(&json))
}

#[cfg(test)]
mod tests {
    use super::*;

    const KEY: &str = "pO3upElrwuEXSoFwCfnZPdSsmt/xWeFa0N9KgDijwVs=";
    const MD5: &str = "DWygnHRtgiJ77HCm+1rvHw==";

    fn sse_c(key: &str, md5: &str) -> Value {
        Value::map()
            .with("SSECustomerAlgorithm", "AES256")
            .with("SSECustomerKey", key)
            .with("SSECustomerKeyMD5", md5)
    }

    #[test]
    fn customer_keys_are_checked_as_s3_checks_them() {
        let key = customer_key(&sse_c(KEY, MD5), "").unwrap().unwrap();
        assert_eq!(key.md5, MD5);
        let bad_md5 = customer_key(&sse_c(KEY, "AAAAAAAAAAAAAAAAAAAAAA=="), "").unwrap_err();
        assert_eq!(bad_md5.code, "InvalidArgument");
        let short = customer_key(&sse_c("AAAA", MD5), "").unwrap_err();
        assert_eq!(
            short.message,
            "The secret key was invalid for the specified algorithm."
        );
        let no_algorithm = Value::map().with("SSECustomerKeyMD5", MD5);
        assert_eq!(
            customer_key(&no_algorithm, "").unwrap_err().code,
            "InvalidArgument"
        );
    }

    #[test]
    fn reads_need_the_key_the_object_was_written_with() {
        let stored = store("{}", &Value::map().with("SSECustomerKeyMD5", MD5));
        assert!(check_read(&sse_c(KEY, MD5), "", &stored).is_ok());
        assert_eq!(
            check_read(&Value::map(), "", &stored).unwrap_err().code,
            "InvalidRequest"
        );
        let other = "6b+WOZ1T3cqZMxgThRcXAQBrS5mXKdDUphvpxptl9/4=";
        let other_md5 = "arxBvwY2V4SiOne6yppVPQ==";
        let denied = check_read(&sse_c(other, other_md5), "", &stored).unwrap_err();
        assert_eq!(
            (denied.code.as_ref(), denied.status),
            ("AccessDenied", Some(403))
        );
        assert_eq!(
            check_read(&sse_c(KEY, MD5), "", "{}").unwrap_err().message,
            "The encryption parameters are not applicable to this object."
        );
    }
}
