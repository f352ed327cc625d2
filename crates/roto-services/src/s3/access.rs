//! S3's side of `--enforce-iam`: the IAM action each operation needs (AWS's names, which
//! differ from the operation's: `HeadObject` needs `s3:GetObject`, `ListObjectsV2`
//! `s3:ListBucket`), the bucket's or object's ARN, and the bucket's access policy: its
//! bucket policy, and what its ACLs grant the caller, with Block Public Access
//! (`IgnorePublicAcls`, `RestrictPublicBuckets`) and Object Ownership (ACLs count for
//! nothing under `BucketOwnerEnforced`) applied. A copy (`CopyObject`, `UploadPartCopy`)
//! also needs `s3:GetObject` (`s3:GetObjectVersion`) on its source, decided the same way.
//!
//! Tags: an existing object's tags are `s3:ExistingObjectTag/<key>` for the actions on it
//! that S3 gives that key; a bucket's tags are `aws:ResourceTag/<key>` for every call on
//! the bucket and its objects once attribute-based access control is enabled on it
//! (`PutBucketAbac`), as S3 reads them.

use roto_core::access::{Access, Grant, Principal, PrincipalKind, ResourcePolicy};
use roto_core::{AwsResult, Value};

use super::acl::{
    self, canonical_id, ownership_of, PublicAccessBlock, ALL_USERS, AUTHENTICATED_USERS,
};
use super::versions::{self, ObjectRow};
use super::{input_str, public, tagging, Bucket, S3};

/// The actions S3 evaluates `s3:ExistingObjectTag/<key>` for.
const EXISTING_OBJECT_TAG_ACTIONS: &[&str] = &[
    "s3:GetObject",
    "s3:GetObjectVersion",
    "s3:GetObjectAcl",
    "s3:GetObjectVersionAcl",
    "s3:GetObjectTagging",
    "s3:GetObjectVersionTagging",
    "s3:PutObjectAcl",
    "s3:PutObjectVersionAcl",
    "s3:PutObjectTagging",
    "s3:PutObjectVersionTagging",
    "s3:DeleteObjectTagging",
    "s3:DeleteObjectVersionTagging",
];

/// The IAM action an operation needs, where its name is not the operation's.
fn renamed(operation: &str, versioned: bool) -> Option<&'static str> {
    Some(match (operation, versioned) {
        ("HeadObject" | "GetObject", false) => "GetObject",
        ("HeadObject" | "GetObject", true) => "GetObjectVersion",
        ("GetObjectAcl", true) => "GetObjectVersionAcl",
        ("PutObjectAcl", true) => "PutObjectVersionAcl",
        ("GetObjectTagging", true) => "GetObjectVersionTagging",
        ("PutObjectTagging", true) => "PutObjectVersionTagging",
        ("DeleteObjectTagging", true) => "DeleteObjectVersionTagging",
        ("DeleteObject", true) => "DeleteObjectVersion",
        ("GetObjectAttributes", true) => "GetObjectVersionAttributes",
        ("HeadBucket" | "ListObjects" | "ListObjectsV2", _) => "ListBucket",
        ("ListObjectVersions", _) => "ListBucketVersions",
        ("ListBuckets", _) => "ListAllMyBuckets",
        (
            "CreateMultipartUpload"
            | "UploadPart"
            | "UploadPartCopy"
            | "CompleteMultipartUpload"
            | "CopyObject"
            | "PostObject",
            _,
        ) => "PutObject",
        ("ListParts", _) => "ListMultipartUploadParts",
        ("ListMultipartUploads", _) => "ListBucketMultipartUploads",
        ("DeleteObjects", _) => "DeleteObject",
        ("GetPublicAccessBlock", _) => "GetBucketPublicAccessBlock",
        ("PutPublicAccessBlock" | "DeletePublicAccessBlock", _) => "PutBucketPublicAccessBlock",
        ("DeleteBucketOwnershipControls", _) => "PutBucketOwnershipControls",
        ("GetBucketCors", _) => "GetBucketCORS",
        ("PutBucketCors" | "DeleteBucketCors", _) => "PutBucketCORS",
        ("GetBucketLifecycleConfiguration" | "GetBucketLifecycle", _) => {
            "GetLifecycleConfiguration"
        }
        ("PutBucketLifecycleConfiguration" | "PutBucketLifecycle" | "DeleteBucketLifecycle", _) => {
            "PutLifecycleConfiguration"
        }
        ("GetBucketEncryption", _) => "GetEncryptionConfiguration",
        ("PutBucketEncryption" | "DeleteBucketEncryption", _) => "PutEncryptionConfiguration",
        ("DeleteBucketTagging", _) => "PutBucketTagging",
        ("GetBucketNotificationConfiguration", _) => "GetBucketNotification",
        ("PutBucketNotificationConfiguration", _) => "PutBucketNotification",
        ("GetBucketReplication", _) => "GetReplicationConfiguration",
        ("PutBucketReplication" | "DeleteBucketReplication", _) => "PutReplicationConfiguration",
        ("GetObjectLockConfiguration", _) => "GetBucketObjectLockConfiguration",
        ("PutObjectLockConfiguration", _) => "PutBucketObjectLockConfiguration",
        ("GetBucketAccelerateConfiguration", _) => "GetAccelerateConfiguration",
        ("PutBucketAccelerateConfiguration", _) => "PutAccelerateConfiguration",
        (
            "GetBucketAnalyticsConfiguration"
            | "ListBucketAnalyticsConfigurations"
            | "PutBucketAnalyticsConfiguration"
            | "DeleteBucketAnalyticsConfiguration",
            _,
        ) => analytics(operation, "AnalyticsConfiguration"),
        (
            "GetBucketInventoryConfiguration"
            | "ListBucketInventoryConfigurations"
            | "PutBucketInventoryConfiguration"
            | "DeleteBucketInventoryConfiguration",
            _,
        ) => analytics(operation, "InventoryConfiguration"),
        (
            "GetBucketMetricsConfiguration"
            | "ListBucketMetricsConfigurations"
            | "PutBucketMetricsConfiguration"
            | "DeleteBucketMetricsConfiguration",
            _,
        ) => analytics(operation, "MetricsConfiguration"),
        (
            "GetBucketIntelligentTieringConfiguration"
            | "ListBucketIntelligentTieringConfigurations"
            | "PutBucketIntelligentTieringConfiguration"
            | "DeleteBucketIntelligentTieringConfiguration",
            _,
        ) => analytics(operation, "IntelligentTieringConfiguration"),
        _ => return None,
    })
}

/// `s3:Get<what>` for reads and lists of a configuration family, `s3:Put<what>` for writes.
fn analytics(operation: &str, what: &'static str) -> &'static str {
    let read = operation.starts_with("Get") || operation.starts_with("List");
    match (what, read) {
        ("AnalyticsConfiguration", true) => "GetAnalyticsConfiguration",
        ("AnalyticsConfiguration", false) => "PutAnalyticsConfiguration",
        ("InventoryConfiguration", true) => "GetInventoryConfiguration",
        ("InventoryConfiguration", false) => "PutInventoryConfiguration",
        ("MetricsConfiguration", true) => "GetMetricsConfiguration",
        ("MetricsConfiguration", false) => "PutMetricsConfiguration",
        (_, true) => "GetIntelligentTieringConfiguration",
        (_, false) => "PutIntelligentTieringConfiguration",
    }
}

/// The ACL permission an operation needs, and whether the object's ACL (rather than the
/// bucket's) grants it.
fn acl_permission(action: &str) -> Option<(&'static str, bool)> {
    Some(match action {
        "s3:GetObject" | "s3:GetObjectVersion" => ("READ", true),
        "s3:GetObjectAcl" | "s3:GetObjectVersionAcl" => ("READ_ACP", true),
        "s3:PutObjectAcl" | "s3:PutObjectVersionAcl" => ("WRITE_ACP", true),
        "s3:ListBucket" | "s3:ListBucketVersions" | "s3:ListBucketMultipartUploads" => {
            ("READ", false)
        }
        "s3:PutObject" | "s3:DeleteObject" | "s3:DeleteObjectVersion" => ("WRITE", false),
        "s3:GetBucketAcl" => ("READ_ACP", false),
        "s3:PutBucketAcl" => ("WRITE_ACP", false),
        _ => return None,
    })
}

/// What an ACL grants the caller for `permission`.
fn acl_grant(acl: &Value, principal: &Principal, permission: &str, ignore_public: bool) -> Grant {
    let own_id = canonical_id(&principal.account);
    let mut best = Grant::None;
    for grant in acl::grants_of(acl) {
        let Some(p) = grant.str("Permission") else {
            continue;
        };
        if p != permission && p != "FULL_CONTROL" {
            continue;
        }
        let grantee = grant.get("Grantee");
        let uri = grantee.and_then(|g| g.str("URI"));
        let signed = principal.kind != PrincipalKind::Anonymous;
        let found = match uri {
            Some(ALL_USERS) if !ignore_public => Grant::Caller,
            Some(AUTHENTICATED_USERS) if !ignore_public && signed => Grant::Caller,
            _ if signed && grantee.and_then(|g| g.str("ID")) == Some(own_id.as_str()) => {
                match principal.kind {
                    PrincipalKind::Root => Grant::Caller,
                    _ => Grant::Account,
                }
            }
            _ => Grant::None,
        };
        if found == Grant::Caller {
            return found;
        }
        if found == Grant::Account {
            best = found;
        }
    }
    best
}

/// The bucket settings access control reads, fetched in one query.
const ACCESS_CONFIGS: [&str; 6] = [
    "policy",
    "public-access-block",
    "ownership",
    "acl",
    "abac",
    "tagging",
];

impl S3 {
    /// What an S3 call asks.
    pub(crate) fn access_of(
        &self,
        principal: &Principal,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Access> {
        let versioned = input.str("VersionId").is_some();
        let action = match renamed(operation, versioned) {
            Some(name) => format!("s3:{name}"),
            None => format!("s3:{operation}"),
        };
        let name = input_str(input, "Bucket");
        let resource = match (name, input.str("Key")) {
            ("", _) => "*".to_string(),
            (bucket, Some(key)) => format!("arn:aws:s3:::{bucket}/{key}"),
            (bucket, None) => format!("arn:aws:s3:::{bucket}"),
        };
        let mut access = Access {
            action,
            resource,
            open: operation == "PreflightRequest",
            ..Access::default()
        };
        if let Some(bucket) = self.find_bucket(name)? {
            self.bucket_access(&bucket, principal, input, &mut access)?;
        }
        let source = input.str("CopySource").map(super::copy::parse_copy_source);
        if let Some(Ok(source)) = source {
            let mut read = Value::map()
                .with("Bucket", source.bucket)
                .with("Key", source.key);
            if let Some(version) = source.version {
                read.insert("VersionId", version);
            }
            access
                .also
                .push(self.access_of(principal, "GetObject", &read)?);
        }
        Ok(access)
    }

    /// The bucket's policy and what its ACLs grant, as Block Public Access and Object
    /// Ownership let them count; the bucket's tags where ABAC is enabled on it, and the
    /// object's tags for the actions S3 gives them to. The root of the bucket's own account
    /// is allowed whatever ACLs grant, and only a bucket policy's conditions could read
    /// tags, so neither is read for it unless the bucket has a policy.
    fn bucket_access(
        &self,
        bucket: &Bucket,
        principal: &Principal,
        input: &Value,
        access: &mut Access,
    ) -> AwsResult<()> {
        let [policy, block, ownership, bucket_acl, abac, tagging] =
            self.stored_configs(&bucket.name, ACCESS_CONFIGS)?;
        let block = PublicAccessBlock::stored(&block);
        let mut document = policy
            .flatten()
            .and_then(|p| p.as_str().map(str::to_string));
        let outsider =
            principal.kind == PrincipalKind::Anonymous || principal.account != bucket.account;
        let restricted = document
            .as_deref()
            .is_some_and(|text| block.restrict_public_buckets && public::policy_is_public(text));
        if restricted && outsider {
            document = None;
        }
        let owner_root = principal.kind == PrincipalKind::Root && !outsider;
        let conditions_read = !owner_root || document.is_some();
        let permission = acl_permission(&access.action)
            .filter(|_| !owner_root && ownership_of(&ownership) != "BucketOwnerEnforced");
        let key = input.str("Key");
        let object_tags = conditions_read
            && key.is_some()
            && EXISTING_OBJECT_TAG_ACTIONS.contains(&access.action.as_str());
        let on_object = permission.is_some_and(|(_, on_object)| on_object);
        let object = match on_object || object_tags {
            true => self.named_object(&bucket.name, input),
            false => None,
        };
        let grant = match permission {
            Some((permission, on_object)) => {
                let acl = match on_object {
                    true => object
                        .as_ref()
                        .and_then(|row| acl::stored_acl(&row.headers)),
                    false => bucket_acl.flatten(),
                };
                let acl = acl.unwrap_or_else(|| acl::private(&bucket.account));
                acl_grant(&acl, principal, permission, block.ignore_public_acls)
            }
            None => Grant::None,
        };
        let abac_on = abac
            .flatten()
            .and_then(|v| v.str("Status").map(str::to_string))
            == Some("Enabled".into());
        if conditions_read && abac_on {
            let tags = tagging.flatten();
            access.resource_tags =
                tagging::from_tag_set(tags.as_ref().and_then(|t| t.get("TagSet")));
        }
        if let Some(row) = object.filter(|_| object_tags) {
            access.context = tagging::from_json(row.tags.as_deref())
                .into_iter()
                .map(|(k, v)| (format!("s3:ExistingObjectTag/{k}"), vec![v]))
                .collect();
        }
        access.policy = Some(ResourcePolicy {
            owner: bucket.account.clone(),
            document,
            grant,
            required: false,
        });
        Ok(())
    }

    /// The object (or version) a call names, if it exists.
    fn named_object(&self, bucket: &str, input: &Value) -> Option<ObjectRow> {
        let key = input_str(input, "Key");
        let found = self
            .env
            .store
            .with(|c| versions::find(c, bucket, key, input.str("VersionId")));
        match found {
            Ok(versions::Found::Object(row)) => Some(row),
            _ => None,
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn actions_take_aws_names() {
        assert_eq!(renamed("HeadObject", false), Some("GetObject"));
        assert_eq!(renamed("GetObject", true), Some("GetObjectVersion"));
        assert_eq!(renamed("ListObjectsV2", false), Some("ListBucket"));
        assert_eq!(renamed("PutBucketAcl", false), None);
        assert_eq!(
            renamed("ListBucketInventoryConfigurations", false),
            Some("GetInventoryConfiguration")
        );
    }

    #[test]
    fn public_grants_count_unless_ignored() {
        let acl = Value::map().with(
            "Grants",
            vec![Value::map()
                .with(
                    "Grantee",
                    Value::map().with("Type", "Group").with("URI", ALL_USERS),
                )
                .with("Permission", "READ")],
        );
        let anonymous = Principal::anonymous("111111111111");
        assert_eq!(acl_grant(&acl, &anonymous, "READ", false), Grant::Caller);
        assert_eq!(acl_grant(&acl, &anonymous, "READ", true), Grant::None);
        assert_eq!(acl_grant(&acl, &anonymous, "WRITE", false), Grant::None);
    }
}
