//! S3 Metadata configurations: the V2 configuration (journal, inventory and annotation
//! tables: CreateBucketMetadataConfiguration, the three Update*TableConfiguration
//! operations, Get and Delete) and the V1 metadata table configuration
//! (CreateBucketMetadataTableConfiguration, Get and Delete).
//!
//! Roto has no S3 Tables, so no table is written; what Create and Update store, Get
//! returns, as S3 reports it once its tables exist (`ACTIVE`, in the account's
//! AWS-managed `aws-s3` table bucket for V2, in the named table bucket for V1), so that a
//! deployment tool's plan after an apply is clean. Each configuration is one row of
//! `s3_bucket_config` (kinds `metadata` and `metadata-table`).

use roto_core::{AwsError, AwsResult, Value};

use super::{errors, input_str, Bucket, S3};

const V2: &str = "metadata";
const V1: &str = "metadata-table";

/// `MetadataConfigurationNotFound`, S3's answer for a bucket without S3 Metadata.
pub(crate) fn not_found() -> AwsError {
    AwsError::new(
        "MetadataConfigurationNotFound",
        "The metadata table configuration does not exist.",
    )
    .with_status(404)
}

fn already_exists() -> AwsError {
    AwsError::new(
        "InvalidRequest",
        "A metadata configuration already exists for this bucket. Delete it before you create a new one.",
    )
    .with_status(400)
}

/// Checks a table's encryption: `aws:kms` names its key, `AES256` names none.
fn check_encryption(table: &Value) -> AwsResult<()> {
    let Some(encryption) = table.get("EncryptionConfiguration") else {
        return Ok(());
    };
    match (encryption.str("SseAlgorithm"), encryption.str("KmsKeyArn")) {
        (Some("aws:kms"), None) => Err(errors::invalid_request(
            "A KMS key ARN is required when the SSE algorithm is aws:kms.",
        )),
        (Some("AES256"), Some(_)) => Err(errors::invalid_request(
            "A KMS key ARN can only be specified when the SSE algorithm is aws:kms.",
        )),
        (Some("aws:kms" | "AES256"), _) => Ok(()),
        _ => Err(errors::malformed_xml()),
    }
}

/// Checks a journal table's record expiration: `ENABLED` with 7 days or more, or
/// `DISABLED` without days.
fn check_expiration(journal: &Value) -> AwsResult<()> {
    let expiration = journal
        .get("RecordExpiration")
        .ok_or_else(errors::malformed_xml)?;
    match (expiration.str("Expiration"), expiration.int("Days")) {
        (Some("ENABLED"), Some(days)) if (7..=2_147_483_647).contains(&days) => Ok(()),
        (Some("ENABLED"), _) => Err(errors::invalid_request(
            "Record expiration must be between 7 and 2147483647 days when it is enabled.",
        )),
        (Some("DISABLED"), None) => Ok(()),
        (Some("DISABLED"), Some(_)) => Err(errors::invalid_request(
            "Record expiration days cannot be specified when expiration is disabled.",
        )),
        _ => Err(errors::malformed_xml()),
    }
}

/// Checks a table whose `ConfigurationState` is `ENABLED` or `DISABLED`.
fn check_state(table: &Value) -> AwsResult<()> {
    match table.str("ConfigurationState") {
        Some("ENABLED" | "DISABLED") => check_encryption(table),
        _ => Err(errors::malformed_xml()),
    }
}

/// The namespace S3 Metadata uses in the AWS-managed table bucket for `bucket`.
fn namespace(bucket: &str) -> String {
    format!("b_{}", bucket.replace(['-', '.'], "_"))
}

/// A table's status and ARN in the AWS-managed table bucket, beside the stored settings.
fn table_result(bucket: &Bucket, table: &str, settings: &Value, members: &[&str]) -> Value {
    let mut out = Value::map()
        .with("TableStatus", "ACTIVE")
        .with("TableName", table)
        .with(
            "TableArn",
            format!(
                "arn:aws:s3tables:{}:{}:bucket/aws-s3/table/{}/{table}",
                bucket.region,
                bucket.account,
                namespace(&bucket.name)
            ),
        );
    for member in members {
        if let Some(v) = settings.get(member) {
            out.insert(*member, v.clone());
        }
    }
    out
}

impl S3 {
    /// Serves an S3 Metadata operation, or `None` if `operation` is not one.
    pub(crate) fn metadata(&self, operation: &str, input: &Value) -> AwsResult<Option<Value>> {
        let handler: fn(&S3, &Bucket, &Value) -> AwsResult<Value> = match operation {
            "CreateBucketMetadataConfiguration" => S3::create_metadata,
            "GetBucketMetadataConfiguration" => S3::get_metadata,
            "DeleteBucketMetadataConfiguration" => |s3, bucket, _| s3.delete_metadata(bucket, V2),
            "UpdateBucketMetadataJournalTableConfiguration" => S3::update_journal,
            "UpdateBucketMetadataInventoryTableConfiguration" => {
                |s3, bucket, input| s3.update_table(bucket, input, "InventoryTableConfiguration")
            }
            "UpdateBucketMetadataAnnotationTableConfiguration" => {
                |s3, bucket, input| s3.update_table(bucket, input, "AnnotationTableConfiguration")
            }
            "CreateBucketMetadataTableConfiguration" => S3::create_metadata_table,
            "GetBucketMetadataTableConfiguration" => S3::get_metadata_table,
            "DeleteBucketMetadataTableConfiguration" => {
                |s3, bucket, _| s3.delete_metadata(bucket, V1)
            }
            _ => return Ok(None),
        };
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        handler(self, &bucket, input).map(Some)
    }

    fn stored_metadata(&self, bucket: &str, kind: &str) -> AwsResult<Option<Value>> {
        Ok(self.stored_config(bucket, kind)?.flatten())
    }

    fn create_metadata(&self, bucket: &Bucket, input: &Value) -> AwsResult<Value> {
        let config = input
            .get("MetadataConfiguration")
            .ok_or_else(errors::malformed_xml)?;
        let journal = config
            .get("JournalTableConfiguration")
            .ok_or_else(errors::malformed_xml)?;
        check_expiration(journal)?;
        check_encryption(journal)?;
        for table in [
            "InventoryTableConfiguration",
            "AnnotationTableConfiguration",
        ] {
            if let Some(table) = config.get(table) {
                check_state(table)?;
            }
        }
        if self.stored_metadata(&bucket.name, V2)?.is_some() {
            return Err(already_exists());
        }
        self.store_config(&bucket.name, V2, Some(config))?;
        Ok(Value::map())
    }

    fn get_metadata(&self, bucket: &Bucket, _: &Value) -> AwsResult<Value> {
        let config = self
            .stored_metadata(&bucket.name, V2)?
            .ok_or_else(not_found)?;
        let mut result = Value::map().with(
            "DestinationResult",
            Value::map()
                .with("TableBucketType", "aws")
                .with(
                    "TableBucketArn",
                    format!(
                        "arn:aws:s3tables:{}:{}:bucket/aws-s3",
                        bucket.region, bucket.account
                    ),
                )
                .with("TableNamespace", namespace(&bucket.name)),
        );
        if let Some(journal) = config.get("JournalTableConfiguration") {
            result.insert(
                "JournalTableConfigurationResult",
                table_result(bucket, "journal", journal, &["RecordExpiration"]),
            );
        }
        let inventory = config.get("InventoryTableConfiguration");
        let inventory = inventory
            .cloned()
            .unwrap_or_else(|| Value::map().with("ConfigurationState", "DISABLED"));
        result.insert(
            "InventoryTableConfigurationResult",
            self.state_result(bucket, "inventory", &inventory, &[]),
        );
        if let Some(annotation) = config.get("AnnotationTableConfiguration") {
            result.insert(
                "AnnotationTableConfigurationResult",
                self.state_result(bucket, "annotation", annotation, &["Role"]),
            );
        }
        Ok(Value::map().with(
            "GetBucketMetadataConfigurationResult",
            Value::map().with("MetadataConfigurationResult", result),
        ))
    }

    /// An inventory or annotation table's result: its state, and the table while enabled.
    fn state_result(
        &self,
        bucket: &Bucket,
        table: &str,
        settings: &Value,
        extra: &[&str],
    ) -> Value {
        let state = settings.str("ConfigurationState").unwrap_or("DISABLED");
        let mut out = if state == "ENABLED" {
            table_result(bucket, table, settings, extra)
        } else {
            let mut out = Value::map();
            for member in extra {
                if let Some(v) = settings.get(member) {
                    out.insert(*member, v.clone());
                }
            }
            out
        };
        out.insert("ConfigurationState", state);
        out
    }

    fn delete_metadata(&self, bucket: &Bucket, kind: &str) -> AwsResult<Value> {
        if self.stored_metadata(&bucket.name, kind)?.is_none() {
            return Err(not_found());
        }
        self.remove_config(&bucket.name, kind)?;
        Ok(Value::map())
    }

    /// Replaces one table's settings in the stored V2 configuration.
    fn replace_table(&self, bucket: &Bucket, member: &str, table: &Value) -> AwsResult<Value> {
        let mut config = self
            .stored_metadata(&bucket.name, V2)?
            .ok_or_else(not_found)?;
        config.insert(member, table.clone());
        self.store_config(&bucket.name, V2, Some(&config))?;
        Ok(Value::map())
    }

    fn update_journal(&self, bucket: &Bucket, input: &Value) -> AwsResult<Value> {
        let update = input
            .get("JournalTableConfiguration")
            .ok_or_else(errors::malformed_xml)?;
        check_expiration(update)?;
        let mut journal = self
            .stored_metadata(&bucket.name, V2)?
            .ok_or_else(not_found)?
            .get("JournalTableConfiguration")
            .cloned()
            .unwrap_or_else(Value::map);
        if let Some(expiration) = update.get("RecordExpiration") {
            journal.insert("RecordExpiration", expiration.clone());
        }
        self.replace_table(bucket, "JournalTableConfiguration", &journal)
    }

    fn update_table(&self, bucket: &Bucket, input: &Value, member: &str) -> AwsResult<Value> {
        let table = input.get(member).ok_or_else(errors::malformed_xml)?;
        check_state(table)?;
        self.replace_table(bucket, member, table)
    }

    fn create_metadata_table(&self, bucket: &Bucket, input: &Value) -> AwsResult<Value> {
        let destination = input
            .get("MetadataTableConfiguration")
            .and_then(|c| c.get("S3TablesDestination"))
            .ok_or_else(errors::malformed_xml)?;
        let arn = destination.str("TableBucketArn").unwrap_or_default();
        if !arn.starts_with("arn:aws:s3tables:") || !arn.contains(":bucket/") {
            return Err(errors::invalid_request(
                "The table bucket ARN is not valid.",
            ));
        }
        let name = destination.str("TableName").unwrap_or_default();
        let valid_name = !name.is_empty()
            && name.len() <= 255
            && name
                .chars()
                .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || c == '_');
        if !valid_name {
            return Err(errors::invalid_request(
                "The table name must be 1 to 255 lowercase letters, numbers or underscores.",
            ));
        }
        if self.stored_metadata(&bucket.name, V1)?.is_some() {
            return Err(already_exists());
        }
        let result = Value::map()
            .with("TableBucketArn", arn)
            .with("TableName", name)
            .with("TableArn", format!("{arn}/table/aws_s3_metadata/{name}"))
            .with("TableNamespace", "aws_s3_metadata");
        self.store_config(&bucket.name, V1, Some(&result))?;
        Ok(Value::map())
    }

    fn get_metadata_table(&self, bucket: &Bucket, _: &Value) -> AwsResult<Value> {
        let destination = self
            .stored_metadata(&bucket.name, V1)?
            .ok_or_else(not_found)?;
        Ok(Value::map().with(
            "GetBucketMetadataTableConfigurationResult",
            Value::map()
                .with(
                    "MetadataTableConfigurationResult",
                    Value::map().with("S3TablesDestinationResult", destination),
                )
                .with("Status", "ACTIVE"),
        ))
    }
}
