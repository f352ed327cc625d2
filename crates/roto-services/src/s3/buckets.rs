//! Bucket operations: CreateBucket, HeadBucket, ListBuckets, DeleteBucket,
//! GetBucketLocation, Get/PutBucketVersioning.

use base64::Engine;
use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use roto_core::protocol::xml::XmlWriter;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Response, Value};

use super::errors;
use super::versions;
use super::{input_str, owner, S3};

/// Whether `name` follows the general-purpose bucket naming rules.
pub(crate) fn valid_bucket_name(name: &str) -> bool {
    let bytes = name.as_bytes();
    let edge_ok = |b: u8| b.is_ascii_lowercase() || b.is_ascii_digit();
    let is_ip = name.split('.').count() == 4
        && name
            .split('.')
            .all(|p| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()));
    (3..=63).contains(&bytes.len())
        && bytes.iter().all(|&b| edge_ok(b) || b == b'.' || b == b'-')
        && bytes.first().copied().is_some_and(edge_ok)
        && bytes.last().copied().is_some_and(edge_ok)
        && !name.contains("..")
        && !is_ip
        && !["xn--", "sthree-", "amzn-s3-demo-"]
            .iter()
            .any(|p| name.starts_with(p))
        && !["-s3alias", "--ol-s3", ".mrap", "--x-s3", "--table-s3"]
            .iter()
            .any(|s| name.ends_with(s))
}

/// Whether `region` looks like an AWS region name (`eu-west-1`).
fn is_region(region: &str) -> bool {
    let parts: Vec<&str> = region.split('-').collect();
    parts.len() >= 3
        && parts.iter().all(|p| {
            !p.is_empty()
                && p.bytes()
                    .all(|b| b.is_ascii_lowercase() || b.is_ascii_digit())
        })
        && parts
            .last()
            .is_some_and(|p| p.bytes().all(|b| b.is_ascii_digit()))
}

/// The region a CreateBucket places the bucket in: the `LocationConstraint`, which must
/// agree with the endpoint's region outside us-east-1 (whose endpoint, like the global
/// one, creates buckets anywhere).
fn bucket_region(request_region: &str, constraint: Option<&str>) -> AwsResult<String> {
    let constraint = constraint.filter(|c| !c.is_empty());
    match constraint {
        Some(c) if c == "us-east-1" || !(is_region(c) || c == "EU") => {
            Err(errors::invalid_location_constraint(c))
        }
        Some(c) => {
            let region = if c == "EU" { "eu-west-1" } else { c };
            if request_region != "us-east-1" && region != request_region {
                return Err(errors::illegal_location_constraint(Some(c)));
            }
            Ok(region.to_string())
        }
        None if request_region != "us-east-1" => Err(errors::illegal_location_constraint(None)),
        None => Ok("us-east-1".to_string()),
    }
}

impl S3 {
    pub(crate) fn create_bucket(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input_str(input, "Bucket");
        if !valid_bucket_name(name) {
            return Err(errors::invalid_bucket_name(name));
        }
        let constraint = input
            .get("CreateBucketConfiguration")
            .and_then(|c| c.str("LocationConstraint"));
        let region = bucket_region(&ctx.region, constraint)?;
        let location = format!("/{name}");
        let (ownership, acl) = self.new_bucket_acl(ctx, input)?;
        let created = self.env.store.transaction(|tx| {
            let existing: Option<(String, String)> = rusqlite::OptionalExtension::optional(
                tx.query_row_cached(
                    "SELECT account, region FROM s3_buckets WHERE name = ?1",
                    [name],
                    |r| Ok((r.get(0)?, r.get(1)?)),
                ),
            )?;
            match existing {
                Some((account, _)) if account != ctx.account => {
                    Err(errors::bucket_already_exists(name))
                }
                // us-east-1 answers a re-create by the owner with 200, as AWS does.
                Some((_, existing)) if existing == "us-east-1" && region == "us-east-1" => {
                    Ok(false)
                }
                Some(_) => Err(errors::bucket_already_owned(name)),
                None => {
                    let lock = input.bool("ObjectLockEnabledForBucket") == Some(true);
                    tx.execute_cached(
                        "INSERT INTO s3_buckets (name, account, region, created, versioning, object_lock)
                         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                        rusqlite::params![
                            name,
                            ctx.account,
                            region,
                            now_millis(),
                            lock.then_some("Enabled"),
                            lock
                        ],
                    )?;
                    Ok(true)
                }
            }
        })?;
        if created {
            self.store_new_bucket_acl(name, ownership, acl)?;
        }
        Ok(Value::map()
            .with("Location", location)
            .with("BucketArn", format!("arn:aws:s3:::{name}")))
    }

    pub(crate) fn head_bucket(&self, input: &Value) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        Ok(Value::map()
            .with("BucketRegion", bucket.region)
            .with("BucketArn", format!("arn:aws:s3:::{}", bucket.name)))
    }

    pub(crate) fn list_buckets(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input_str(input, "Prefix");
        let region = input.str("BucketRegion");
        let max = input.int("MaxBuckets").unwrap_or(10000).clamp(1, 10000);
        let token = input.str("ContinuationToken");
        let after = match token {
            Some(t) => base64::engine::general_purpose::STANDARD
                .decode(t)
                .ok()
                .and_then(|b| String::from_utf8(b).ok())
                .ok_or_else(|| {
                    errors::invalid_argument(
                        "The continuation token provided is incorrect",
                        "continuation-token",
                        t,
                    )
                })?,
            None => String::new(),
        };
        let mut buckets = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name, region, created FROM s3_buckets
                 WHERE account = ?1 AND name > ?2 AND substr(name, 1, length(?3)) = ?3
                   AND (?4 IS NULL OR region = ?4)
                 ORDER BY name LIMIT ?5",
            )?;
            let rows = stmt.query_map(
                rusqlite::params![&ctx.account, after, prefix, region, max + 1],
                |r| {
                    Ok(Value::map()
                        .with("Name", r.get::<_, String>(0)?)
                        .with("BucketRegion", r.get::<_, String>(1)?)
                        .with("CreationDate", Value::Timestamp(r.get(2)?)))
                },
            )?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })?;
        let next = if buckets.len() as i64 > max {
            buckets.truncate(usize::try_from(max).unwrap_or(0));
            buckets
                .last()
                .and_then(|b| b.str("Name"))
                .map(|n| base64::engine::general_purpose::STANDARD.encode(n))
        } else {
            None
        };
        Ok(Value::map()
            .with("Buckets", buckets)
            .with("Owner", owner(&ctx.account))
            .with_opt("Prefix", input.str("Prefix"))
            .with_opt("ContinuationToken", next))
    }

    pub(crate) fn delete_bucket(&self, input: &Value) -> AwsResult<Value> {
        let name = input_str(input, "Bucket");
        self.env.store.transaction(|tx| {
            let exists = tx.query_row_cached(
                "SELECT count(*) FROM s3_buckets WHERE name = ?1",
                [name],
                |r| r.get::<_, i64>(0),
            )? > 0;
            if !exists {
                return Err(errors::no_such_bucket(name));
            }
            if versions::bucket_has_objects(tx, name)? {
                return Err(errors::bucket_not_empty(name));
            }
            tx.execute_cached("DELETE FROM s3_buckets WHERE name = ?1", [name])?;
            tx.execute_cached("DELETE FROM s3_bucket_config WHERE bucket = ?1", [name])?;
            tx.execute_cached("DELETE FROM s3_completed_uploads WHERE bucket = ?1", [name])?;
            Ok(())
        })?;
        Ok(Value::map())
    }

    /// GetBucketLocation answers with a bare `<LocationConstraint>` document (empty for
    /// us-east-1), not the wrapped output the model describes: botocore parses it by hand.
    pub(crate) fn get_bucket_location(&self, input: &Value) -> AwsResult<Response> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let mut w = XmlWriter::with_declaration();
        w.start(
            "LocationConstraint",
            &[("xmlns", "http://s3.amazonaws.com/doc/2006-03-01/")],
        );
        if bucket.region != "us-east-1" {
            w.text(&bucket.region);
        }
        w.end("LocationConstraint");
        let body = Full::new(Bytes::from(w.finish()))
            .map_err(|never| match never {})
            .boxed();
        Ok(Response::new(Value::map())
            .with_body(Some(body))
            .with_header("Content-Type", "application/xml"))
    }

    pub(crate) fn get_bucket_versioning(&self, input: &Value) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        Ok(Value::map().with_opt("Status", bucket.versioning))
    }

    pub(crate) fn put_bucket_versioning(&self, input: &Value) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let status = input
            .get("VersioningConfiguration")
            .and_then(|c| c.str("Status"));
        let status = match status {
            Some(s @ ("Enabled" | "Suspended")) => s,
            _ => return Err(errors::malformed_xml()),
        };
        if bucket.object_lock && status == "Suspended" {
            return Err(AwsError::new(
                "InvalidBucketState",
                "An Object Lock configuration is present on this bucket, so the versioning state cannot be changed.",
            )
            .with_status(409));
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE s3_buckets SET versioning = ?2 WHERE name = ?1",
                [&bucket.name, status],
            )
            .map_err(AwsError::from)
        })?;
        Ok(Value::map())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bucket_names_follow_the_general_purpose_rules() {
        for ok in ["abc", "my-bucket.logs", "a1b", "0-0", &"a".repeat(63)] {
            assert!(valid_bucket_name(ok), "{ok}");
        }
        for bad in [
            "ab",
            "ABC",
            "a_b",
            "-ab",
            "ab-",
            "a..b",
            "192.168.1.1",
            "xn--ab",
            "ab-s3alias",
            &"a".repeat(64),
            "a b",
            ".ab",
        ] {
            assert!(!valid_bucket_name(bad), "{bad}");
        }
    }

    #[test]
    fn location_constraints_must_agree_with_the_endpoint() {
        assert_eq!(bucket_region("us-east-1", None).unwrap(), "us-east-1");
        assert_eq!(
            bucket_region("us-east-1", Some("eu-west-2")).unwrap(),
            "eu-west-2"
        );
        assert_eq!(
            bucket_region("eu-west-1", Some("eu-west-1")).unwrap(),
            "eu-west-1"
        );
        assert_eq!(bucket_region("eu-west-1", Some("EU")).unwrap(), "eu-west-1");
        assert_eq!(
            bucket_region("eu-west-1", None).unwrap_err().code,
            "IllegalLocationConstraintException"
        );
        assert_eq!(
            bucket_region("eu-west-1", Some("us-west-2"))
                .unwrap_err()
                .code,
            "IllegalLocationConstraintException"
        );
        assert_eq!(
            bucket_region("us-east-1", Some("us-east-1"))
                .unwrap_err()
                .code,
            "InvalidLocationConstraint"
        );
        assert_eq!(
            bucket_region("us-east-1", Some("moon")).unwrap_err().code,
            "InvalidLocationConstraint"
        );
    }
}
