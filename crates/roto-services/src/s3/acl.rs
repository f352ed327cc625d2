//! Access control lists, Object Ownership and Block Public Access, stored and answered as
//! S3 does in every mode (enforcement reads them too, see `access.rs`).
//!
//! An ACL is an owner and a list of grants; a request sets one with a canned ACL
//! (`x-amz-acl`), with grant headers (`x-amz-grant-read: id="...", uri="..."`) or with an
//! `AccessControlPolicy` body, never with two of these at once. A bucket's ACL is a bucket
//! configuration (`acl`); an object's lives in its version's stored headers under `Acl`,
//! which no response header reads. Absent, an ACL is its owner's full control.
//!
//! Object Ownership `BucketOwnerEnforced` (the default of a new bucket) disables ACLs: a
//! write may name only the bucket owner's full control, reads show exactly that. Block
//! Public Access refuses public ACLs (`BlockPublicAcls`) and public policies
//! (`BlockPublicPolicy`) with `AccessDenied`; its other two settings act when access is
//! enforced.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::versions;
use super::{errors, input_str, owner, Bucket, S3};

/// The group of everyone, signed or not.
pub(crate) const ALL_USERS: &str = "http://acs.amazonaws.com/groups/global/AllUsers";
/// The group of every signed caller, of any account.
pub(crate) const AUTHENTICATED_USERS: &str =
    "http://acs.amazonaws.com/groups/global/AuthenticatedUsers";
const LOG_DELIVERY: &str = "http://acs.amazonaws.com/groups/s3/LogDelivery";
/// The canonical user `aws-exec-read` grants read to (EC2's bundle reader).
const EC2_BUNDLE_READER: &str = "6aa5a366c34c1cbe25dc49211496e913e0351eb0e8c37aa3477e40942ec6b97c";

/// The request members that carry grant headers, with the permission each grants.
const GRANT_MEMBERS: &[(&str, &str)] = &[
    ("GrantFullControl", "FULL_CONTROL"),
    ("GrantRead", "READ"),
    ("GrantReadACP", "READ_ACP"),
    ("GrantWrite", "WRITE"),
    ("GrantWriteACP", "WRITE_ACP"),
];

const PERMISSIONS: &[&str] = &["FULL_CONTROL", "READ", "READ_ACP", "WRITE", "WRITE_ACP"];

/// The ownership setting S3 gives a bucket that names none.
pub(crate) const DEFAULT_OWNERSHIP: &str = "BucketOwnerEnforced";

/// An account's canonical id.
pub(crate) fn canonical_id(account: &str) -> String {
    owner(account).str("ID").unwrap_or_default().to_string()
}

fn user_grantee(account: &str) -> Value {
    owner(account).with("Type", "CanonicalUser")
}

fn group_grantee(uri: &str) -> Value {
    Value::map().with("Type", "Group").with("URI", uri)
}

fn grant(grantee: Value, permission: &str) -> Value {
    Value::map()
        .with("Grantee", grantee)
        .with("Permission", permission)
}

fn acl(owner_account: &str, grants: Vec<Value>) -> Value {
    Value::map()
        .with("Owner", owner(owner_account))
        .with("Grants", grants)
}

/// The ACL a resource has when none was set: its owner's full control.
pub(crate) fn private(owner_account: &str) -> Value {
    acl(
        owner_account,
        vec![grant(user_grantee(owner_account), "FULL_CONTROL")],
    )
}

fn invalid_argument(message: &str) -> AwsError {
    AwsError::new("InvalidArgument", message).with_status(400)
}

fn malformed_acl() -> AwsError {
    AwsError::new(
        "MalformedACLError",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
    .with_status(400)
}

/// `AccessControlListNotSupported`: the bucket's ownership setting disables ACLs.
fn acls_disabled() -> AwsError {
    AwsError::new(
        "AccessControlListNotSupported",
        "The bucket does not allow ACLs",
    )
    .with_status(400)
}

/// `InvalidBucketAclWithObjectOwnership`: ACLs that grant others meet `BucketOwnerEnforced`.
pub(crate) fn acl_with_enforced_ownership() -> AwsError {
    AwsError::new(
        "InvalidBucketAclWithObjectOwnership",
        "Bucket cannot have ACLs set with ObjectOwnership's BucketOwnerEnforced setting",
    )
    .with_status(400)
}

/// What Block Public Access answers a public ACL or policy.
pub(crate) fn blocked() -> AwsError {
    AwsError::new("AccessDenied", "Access Denied").with_status(403)
}

/// The grants of a canned ACL for a resource owned by `owner_account` in a bucket owned by
/// `bucket_owner`.
fn canned(name: &str, owner_account: &str, bucket_owner: &str) -> AwsResult<Vec<Value>> {
    let mut grants = vec![grant(user_grantee(owner_account), "FULL_CONTROL")];
    let mut add = |grantee: Value, permission: &str| grants.push(grant(grantee, permission));
    match name {
        "private" => {}
        "public-read" => add(group_grantee(ALL_USERS), "READ"),
        "public-read-write" => {
            add(group_grantee(ALL_USERS), "READ");
            add(group_grantee(ALL_USERS), "WRITE");
        }
        "authenticated-read" => add(group_grantee(AUTHENTICATED_USERS), "READ"),
        "log-delivery-write" => {
            add(group_grantee(LOG_DELIVERY), "WRITE");
            add(group_grantee(LOG_DELIVERY), "READ_ACP");
        }
        "aws-exec-read" => add(
            Value::map()
                .with("Type", "CanonicalUser")
                .with("ID", EC2_BUNDLE_READER),
            "READ",
        ),
        "bucket-owner-read" if bucket_owner != owner_account => {
            add(user_grantee(bucket_owner), "READ")
        }
        "bucket-owner-full-control" if bucket_owner != owner_account => {
            add(user_grantee(bucket_owner), "FULL_CONTROL")
        }
        "bucket-owner-read" | "bucket-owner-full-control" => {}
        _ => return Err(invalid_argument("Invalid canned ACL")),
    }
    Ok(grants)
}

/// The grantees of one grant header: `id="..."`, `emailAddress="..."`, `uri="..."`,
/// separated by commas.
fn header_grantees(text: &str) -> AwsResult<Vec<Value>> {
    let mut out = Vec::new();
    for item in text.split(',').map(str::trim).filter(|s| !s.is_empty()) {
        let (kind, value) = item
            .split_once('=')
            .ok_or_else(|| invalid_argument("Argument format not recognized"))?;
        let value = value.trim().trim_matches('"');
        let grantee = match kind.trim().to_ascii_lowercase().as_str() {
            "id" => Value::map().with("Type", "CanonicalUser").with("ID", value),
            "emailaddress" => Value::map()
                .with("Type", "AmazonCustomerByEmail")
                .with("EmailAddress", value),
            "uri" => group_grantee(value),
            _ => return Err(invalid_argument("Argument format not recognized")),
        };
        out.push(grantee);
    }
    Ok(out)
}

/// Checks one grant of an `AccessControlPolicy` body as S3's schema does.
fn check_grant(grant: &Value) -> AwsResult<()> {
    let grantee = grant.get("Grantee").ok_or_else(malformed_acl)?;
    let needed = match grantee.str("Type") {
        Some("CanonicalUser") => "ID",
        Some("Group") => "URI",
        Some("AmazonCustomerByEmail") => "EmailAddress",
        _ => return Err(malformed_acl()),
    };
    if grantee.str(needed).is_none() {
        return Err(malformed_acl());
    }
    match grant.str("Permission") {
        Some(p) if PERMISSIONS.contains(&p) => Ok(()),
        _ => Err(malformed_acl()),
    }
}

/// The ACL a request sets for a resource owned by `owner_account` in a bucket owned by
/// `bucket_owner`, or `None` if it sets none.
pub(crate) fn requested(
    input: &Value,
    owner_account: &str,
    bucket_owner: &str,
) -> AwsResult<Option<Value>> {
    let canned_name = input.str("ACL");
    let headers: Vec<(&str, &str)> = GRANT_MEMBERS
        .iter()
        .filter_map(|(member, permission)| Some((input.str(member)?, *permission)))
        .collect();
    let body = input.get("AccessControlPolicy");
    if canned_name.is_some() && !headers.is_empty() {
        return Err(errors::invalid_request(
            "Specifying both Canned ACLs and Header Grants is not allowed",
        ));
    }
    if body.is_some() && (canned_name.is_some() || !headers.is_empty()) {
        return Err(
            AwsError::new("UnexpectedContent", "This request does not support content")
                .with_status(400),
        );
    }
    if let Some(name) = canned_name {
        return Ok(Some(acl(
            owner_account,
            canned(name, owner_account, bucket_owner)?,
        )));
    }
    if !headers.is_empty() {
        let mut grants = Vec::new();
        for (text, permission) in headers {
            for grantee in header_grantees(text)? {
                grants.push(grant(grantee, permission));
            }
        }
        return Ok(Some(acl(owner_account, grants)));
    }
    let Some(body) = body else { return Ok(None) };
    let stated = body.get("Owner").and_then(|o| o.str("ID"));
    if stated.is_none() {
        return Err(malformed_acl());
    }
    let grants = body
        .get("Grants")
        .and_then(Value::as_list)
        .unwrap_or_default();
    for g in grants {
        check_grant(g)?;
    }
    Ok(Some(acl(owner_account, grants.to_vec())))
}

/// Whether an ACL grants anything to everyone or to every signed caller.
pub(crate) fn is_public(acl: &Value) -> bool {
    grants_of(acl).iter().any(|g| {
        g.get("Grantee")
            .and_then(|e| e.str("URI"))
            .is_some_and(|uri| uri == ALL_USERS || uri == AUTHENTICATED_USERS)
    })
}

/// Whether every grant of an ACL is full control to `account` (what `BucketOwnerEnforced`
/// accepts).
fn owner_only(acl: &Value, account: &str) -> bool {
    let id = canonical_id(account);
    grants_of(acl).iter().all(|g| {
        g.str("Permission") == Some("FULL_CONTROL")
            && g.get("Grantee").and_then(|e| e.str("ID")) == Some(id.as_str())
    })
}

/// An ACL's grants.
pub(crate) fn grants_of(acl: &Value) -> &[Value] {
    acl.get("Grants")
        .and_then(Value::as_list)
        .unwrap_or_default()
}

/// A bucket's Block Public Access settings (each false unless set).
#[derive(Debug, Clone, Copy, Default)]
pub(crate) struct PublicAccessBlock {
    pub block_public_acls: bool,
    pub ignore_public_acls: bool,
    pub block_public_policy: bool,
    pub restrict_public_buckets: bool,
}

impl PublicAccessBlock {
    /// The settings of a stored `public-access-block` configuration (a new bucket's block
    /// everything; a deleted configuration blocks nothing).
    pub(crate) fn stored(stored: &Option<Option<Value>>) -> PublicAccessBlock {
        match stored {
            Some(Some(value)) => PublicAccessBlock::of(value),
            Some(None) => PublicAccessBlock::default(),
            None => PublicAccessBlock {
                block_public_acls: true,
                ignore_public_acls: true,
                block_public_policy: true,
                restrict_public_buckets: true,
            },
        }
    }

    fn of(value: &Value) -> PublicAccessBlock {
        let on = |m: &str| value.bool(m) == Some(true);
        PublicAccessBlock {
            block_public_acls: on("BlockPublicAcls"),
            ignore_public_acls: on("IgnorePublicAcls"),
            block_public_policy: on("BlockPublicPolicy"),
            restrict_public_buckets: on("RestrictPublicBuckets"),
        }
    }
}

/// The Object Ownership setting of a stored `ownership` configuration.
pub(crate) fn ownership_of(stored: &Option<Option<Value>>) -> &str {
    let rule = match stored {
        Some(Some(value)) => value
            .get("Rules")
            .and_then(Value::as_list)
            .and_then(|r| r.first())
            .and_then(|r| r.str("ObjectOwnership")),
        Some(None) => Some("ObjectWriter"),
        None => None,
    };
    rule.unwrap_or(DEFAULT_OWNERSHIP)
}

/// The four settings as S3 stores them: each present, false unless set.
pub(crate) fn full_public_access_block(value: &Value) -> Value {
    let mut out = Value::map();
    for member in [
        "BlockPublicAcls",
        "IgnorePublicAcls",
        "BlockPublicPolicy",
        "RestrictPublicBuckets",
    ] {
        out.insert(member, value.bool(member) == Some(true));
    }
    out
}

impl S3 {
    /// The bucket's Object Ownership setting.
    pub(crate) fn ownership(&self, bucket: &str) -> AwsResult<String> {
        Ok(ownership_of(&self.stored_config(bucket, "ownership")?).to_string())
    }

    /// The bucket's Block Public Access.
    pub(crate) fn public_access_block(&self, bucket: &str) -> AwsResult<PublicAccessBlock> {
        Ok(PublicAccessBlock::stored(
            &self.stored_config(bucket, "public-access-block")?,
        ))
    }

    /// Refuses an ACL the bucket's ownership setting or Block Public Access forbids.
    fn check_acl(&self, bucket: &Bucket, acl: &Value) -> AwsResult<()> {
        if self.ownership(&bucket.name)? == "BucketOwnerEnforced" {
            if !owner_only(acl, &bucket.account) {
                return Err(acls_disabled());
            }
            return Ok(());
        }
        if is_public(acl) && self.public_access_block(&bucket.name)?.block_public_acls {
            return Err(blocked());
        }
        Ok(())
    }

    /// A new bucket's ownership and ACL, checked before it exists: `BucketOwnerEnforced`
    /// (the default) takes only the owner's full control, and a new bucket blocks public
    /// ACLs.
    pub(crate) fn new_bucket_acl(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(Option<String>, Option<Value>)> {
        let ownership = input.str("ObjectOwnership").map(str::to_string);
        let Some(acl) = requested(input, &ctx.account, &ctx.account)? else {
            return Ok((ownership, None));
        };
        let enforced = ownership.as_deref().unwrap_or(DEFAULT_OWNERSHIP) == "BucketOwnerEnforced";
        if enforced && !owner_only(&acl, &ctx.account) {
            return Err(acl_with_enforced_ownership());
        }
        if is_public(&acl) {
            return Err(blocked());
        }
        Ok((ownership, Some(acl)))
    }

    /// Stores a new bucket's ownership setting and ACL.
    pub(crate) fn store_new_bucket_acl(
        &self,
        bucket: &str,
        ownership: Option<String>,
        acl: Option<Value>,
    ) -> AwsResult<()> {
        if let Some(ownership) = ownership {
            let rules = vec![Value::map().with("ObjectOwnership", ownership)];
            self.store_config(
                bucket,
                "ownership",
                Some(&Value::map().with("Rules", rules)),
            )?;
        }
        if let Some(acl) = acl {
            self.store_config(bucket, "acl", Some(&acl))?;
        }
        Ok(())
    }

    /// The account that owns an object `ctx` writes: the bucket owner under
    /// `BucketOwnerEnforced`, and under `BucketOwnerPreferred` when the write grants the
    /// bucket owner full control; otherwise the writer.
    fn object_owner(&self, ctx: &Context, bucket: &Bucket, input: &Value) -> AwsResult<String> {
        let ownership = self.ownership(&bucket.name)?;
        let preferred = ownership == "BucketOwnerPreferred"
            && input.str("ACL") == Some("bucket-owner-full-control");
        Ok(match ownership.as_str() {
            "BucketOwnerEnforced" => bucket.account.clone(),
            _ if preferred => bucket.account.clone(),
            _ => ctx.account.clone(),
        })
    }

    /// The stored headers of an object `ctx` writes, with the ACL the write sets (none
    /// kept from a copy's source), checked against ownership and Block Public Access.
    pub(crate) fn with_object_acl(
        &self,
        ctx: &Context,
        bucket: &Bucket,
        input: &Value,
        headers: String,
    ) -> AwsResult<String> {
        let object_owner = self.object_owner(ctx, bucket, input)?;
        let acl = match requested(input, &object_owner, &bucket.account)? {
            Some(acl) => {
                self.check_acl(bucket, &acl)?;
                Some(acl)
            }
            None if object_owner != bucket.account => Some(private(&object_owner)),
            None => None,
        };
        Ok(super::objects::edit_headers(&headers, |map| {
            match acl {
                Some(acl) => map.insert("Acl".into(), super::config::to_json(&acl)),
                None => map.remove("Acl"),
            };
        }))
    }

    /// `PutBucketAcl` and `PutObjectAcl`.
    pub(crate) fn put_acl(&self, input: &Value, operation: &str) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if operation == "PutBucketAcl" {
            let acl =
                requested(input, &bucket.account, &bucket.account)?.ok_or_else(missing_acl)?;
            self.check_acl(&bucket, &acl)?;
            self.store_config(&bucket.name, "acl", Some(&acl))?;
            return Ok(Value::map());
        }
        let key = input_str(input, "Key");
        let version = input.str("VersionId");
        let current = self
            .env
            .store
            .with(|c| versions::find_object(c, &bucket.name, key, version, "PUT"))?;
        let owner_account = stored_owner(&current.headers).unwrap_or(bucket.account.clone());
        let acl = requested(input, &owner_account, &bucket.account)?.ok_or_else(missing_acl)?;
        self.check_acl(&bucket, &acl)?;
        self.env.store.with(|c| {
            versions::update_version(c, &bucket.name, key, version, "PUT", |row| {
                row.headers = super::objects::edit_headers(&row.headers, |map| {
                    map.insert("Acl".into(), super::config::to_json(&acl));
                });
                Ok(())
            })
        })?;
        Ok(Value::map())
    }

    /// `GetBucketAcl` and `GetObjectAcl`; under `BucketOwnerEnforced` always the bucket
    /// owner's full control, as S3 answers.
    pub(crate) fn get_acl(&self, input: &Value, operation: &str) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let stored = if operation == "GetObjectAcl" {
            let key = input_str(input, "Key");
            let row = self.env.store.with(|c| {
                versions::find_object(c, &bucket.name, key, input.str("VersionId"), "GET")
            })?;
            stored_acl(&row.headers)
        } else {
            self.bucket_acl(&bucket)?
        };
        if self.ownership(&bucket.name)? == "BucketOwnerEnforced" {
            return Ok(private(&bucket.account));
        }
        Ok(stored.unwrap_or_else(|| private(&bucket.account)))
    }

    /// The bucket's stored ACL, if one was set.
    pub(crate) fn bucket_acl(&self, bucket: &Bucket) -> AwsResult<Option<Value>> {
        Ok(self.stored_config(&bucket.name, "acl")?.flatten())
    }

    /// Refuses `BucketOwnerEnforced` while the bucket's ACL grants others.
    pub(crate) fn check_ownership(&self, bucket: &Bucket, value: &Value) -> AwsResult<()> {
        let rules = value
            .get("Rules")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let [rule] = rules else {
            return Err(errors::malformed_xml());
        };
        match rule.str("ObjectOwnership") {
            Some("BucketOwnerEnforced") => {
                let acl = self.bucket_acl(bucket)?;
                if acl.is_some_and(|acl| !owner_only(&acl, &bucket.account)) {
                    return Err(acl_with_enforced_ownership());
                }
                Ok(())
            }
            Some("ObjectWriter" | "BucketOwnerPreferred") => Ok(()),
            _ => Err(errors::malformed_xml()),
        }
    }
}

/// An object's ACL, from its stored headers.
pub(crate) fn stored_acl(headers: &str) -> Option<Value> {
    let json: serde_json::Value = serde_json::from_str(headers).ok()?;
    json.get("Acl").map(super::config::from_json)
}

/// The account that owns an object, from its stored ACL (its canonical id's display name).
fn stored_owner(headers: &str) -> Option<String> {
    stored_acl(headers)?
        .get("Owner")?
        .str("DisplayName")
        .map(str::to_string)
}

/// What `Put*Acl` answers when the request names no ACL.
fn missing_acl() -> AwsError {
    AwsError::new(
        "MissingSecurityHeader",
        "Your request was missing a required header",
    )
    .with_status(400)
    .with_field("MissingHeaderName", "x-amz-acl")
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn canned_acls_expand_to_their_grants() {
        let grants = canned("public-read-write", "111111111111", "111111111111").unwrap();
        assert_eq!(grants.len(), 3);
        assert!(is_public(&acl("111111111111", grants)));
        let grants = canned("bucket-owner-full-control", "222222222222", "111111111111").unwrap();
        assert_eq!(grants.len(), 2);
        assert!(!owner_only(&acl("222222222222", grants), "111111111111"));
        let grants = canned("bucket-owner-full-control", "111111111111", "111111111111").unwrap();
        assert!(owner_only(&acl("111111111111", grants), "111111111111"));
        assert!(canned("no-such-acl", "1", "1").is_err());
    }

    #[test]
    fn grant_headers_name_ids_emails_and_groups() {
        let grantees = header_grantees(
            r#"id="abc", emailAddress="a@example.com", uri="http://acs.amazonaws.com/groups/global/AllUsers""#,
        )
        .unwrap();
        assert_eq!(grantees.len(), 3);
        assert_eq!(grantees[0].str("ID"), Some("abc"));
        assert_eq!(grantees[1].str("Type"), Some("AmazonCustomerByEmail"));
        assert_eq!(grantees[2].str("URI"), Some(ALL_USERS));
        assert!(header_grantees("nonsense").is_err());
    }
}
