//! UpdateObjectEncryption: an existing object's server-side encryption changed to SSE-KMS
//! under another key (or with S3 Bucket Keys) in place, its body, ETag, dates and checksum
//! unchanged, as S3 does it.
//!
//! S3 asks KMS for a data key under the new key, so a key that does not exist or is
//! disabled refuses the change with KMS's error; objects encrypted with SSE-C or DSSE-KMS
//! are refused, as S3 refuses them.

use roto_core::{AwsResult, Context, Value};

use super::{errors, input_str, sse, versions, S3};

impl S3 {
    pub(crate) async fn update_object_encryption(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let key = input_str(input, "Key");
        let version = input.str("VersionId");
        let kms = input
            .get("ObjectEncryption")
            .and_then(|e| e.get("SSEKMS"))
            .ok_or_else(errors::malformed_xml)?;
        let key_arn = kms.str("KMSKeyArn").ok_or_else(errors::malformed_xml)?;
        let row = self
            .env
            .store
            .with(|c| versions::find_object(c, &bucket.name, key, version, "PUT"))?;
        let current = sse::echo(&row.headers);
        if current.get("SSECustomerAlgorithm").is_some()
            || current.str("ServerSideEncryption") == Some("aws:kms:dsse")
        {
            return Err(errors::invalid_request(
                "The UpdateObjectEncryption operation does not support objects encrypted with SSE-C or DSSE-KMS.",
            ));
        }
        let arn = self
            .kms_data_key(ctx, &bucket, key, Some(key_arn), &Value::map())
            .await?;
        let mut encryption = Value::map()
            .with("ServerSideEncryption", "aws:kms")
            .with("SSEKMSKeyId", arn);
        if kms.bool("BucketKeyEnabled") == Some(true) {
            encryption.insert("BucketKeyEnabled", true);
        }
        self.env.store.transaction(|tx| {
            versions::update_version(tx, &bucket.name, key, version, "PUT", |row| {
                row.headers = sse::store(&row.headers, &encryption);
                Ok(())
            })
        })?;
        Ok(Value::map())
    }
}
