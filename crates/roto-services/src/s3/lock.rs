//! Object Lock: the bucket's lock configuration (with its default retention), each
//! version's retention and legal hold, and the rule that keeps a protected version from
//! being deleted.
//!
//! A version's lock lives in its stored headers (`ObjectLockMode`,
//! `ObjectLockRetainUntilDate` as epoch millis, `ObjectLockLegalHoldStatus`), so GET and
//! HEAD return it as they return the other headers. Retention is judged against the
//! server clock, so a test lets it lapse by advancing the clock. Locking never stops a
//! new version or a delete marker: only the permanent deletion of a protected version.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Request, Value};

use super::errors;
use super::objects::{edit_headers, lacks_digest};
use super::versions::{self, ObjectRow};
use super::{input_str, Bucket, S3};

const MODE: &str = "ObjectLockMode";
const RETAIN_UNTIL: &str = "ObjectLockRetainUntilDate";
const LEGAL_HOLD: &str = "ObjectLockLegalHoldStatus";

/// The stored-header members that make up a version's lock.
pub(crate) const LOCK_MEMBERS: [&str; 3] = [MODE, RETAIN_UNTIL, LEGAL_HOLD];

/// The retention modes.
const MODES: [&str; 2] = ["GOVERNANCE", "COMPLIANCE"];

const DAY_MILLIS: i64 = 86_400_000;

/// The configuration kind in `s3_bucket_config`.
const KIND: &str = "object-lock";

/// A change a retention or legal-hold operation makes to a version's lock.
type LockChange<'a> = &'a dyn Fn(&mut Lock) -> AwsResult<()>;

/// A version's lock, read from its stored headers.
#[derive(Debug, Default, PartialEq)]
struct Lock {
    mode: Option<String>,
    until: Option<i64>,
    legal_hold: Option<String>,
}

impl Lock {
    fn of(row: &ObjectRow) -> Lock {
        let Ok(serde_json::Value::Object(map)) = serde_json::from_str(&row.headers) else {
            return Lock::default();
        };
        let text = |m: &str| map.get(m).and_then(|v| v.as_str()).map(str::to_string);
        Lock {
            mode: text(MODE),
            until: map.get(RETAIN_UNTIL).and_then(serde_json::Value::as_i64),
            legal_hold: text(LEGAL_HOLD),
        }
    }

    /// Whether the retention still holds at `now`.
    fn retains(&self, now: i64) -> bool {
        self.until.is_some_and(|t| t > now)
    }

    fn mode_is(&self, mode: &str) -> bool {
        self.mode.as_deref() == Some(mode)
    }
}

/// `AccessDenied` (403) for a change the lock forbids.
fn protected() -> AwsError {
    AwsError::new(
        "AccessDenied",
        "Access Denied because object protected by object lock.",
    )
    .with_status(403)
}

/// `InvalidRequest` (400): a lock operation on a bucket without Object Lock.
fn lock_not_enabled() -> AwsError {
    errors::invalid_request("Bucket is missing Object Lock Configuration")
}

/// `NoSuchObjectLockConfiguration` (404): a version without retention or legal hold.
fn no_object_lock() -> AwsError {
    AwsError::new(
        "NoSuchObjectLockConfiguration",
        "The specified object does not have a ObjectLock configuration",
    )
    .with_status(404)
}

fn retain_until_in_past(argument: &str) -> AwsError {
    AwsError::new(
        "InvalidArgument",
        "The retain until date must be in the future!",
    )
    .with_status(400)
    .with_field("ArgumentName", argument)
}

/// Refuses the permanent deletion of a version under a legal hold or an unexpired
/// retention (`GOVERNANCE` gives way to `bypass`).
pub(crate) fn protect(row: &ObjectRow, bypass: bool, now: i64) -> AwsResult<()> {
    let lock = Lock::of(row);
    let retained = lock.retains(now) && !(bypass && lock.mode_is("GOVERNANCE"));
    if lock.legal_hold.as_deref() == Some("ON") || retained {
        return Err(protected());
    }
    Ok(())
}

/// Whether the request asks to bypass governance retention, which only a bucket with
/// Object Lock accepts.
pub(crate) fn bypass(bucket: &Bucket, input: &Value) -> AwsResult<bool> {
    match input.bool("BypassGovernanceRetention") {
        Some(_) if !bucket.object_lock => Err(AwsError::new(
            "InvalidArgument",
            "x-amz-bypass-governance-retention is only applicable to Object Lock enabled buckets.",
        )
        .with_status(400)
        .with_field("ArgumentName", "x-amz-bypass-governance-retention")),
        flag => Ok(flag == Some(true)),
    }
}

/// The request's lock members for a new version (PutObject, CopyObject,
/// CreateMultipartUpload), checked as S3 checks the `x-amz-object-lock-*` headers.
fn requested(bucket: &Bucket, input: &Value, now: i64) -> AwsResult<Lock> {
    let lock = Lock {
        mode: input.str(MODE).map(str::to_string),
        until: match input.get(RETAIN_UNTIL) {
            Some(Value::Timestamp(t)) => Some(*t),
            _ => None,
        },
        legal_hold: input.str(LEGAL_HOLD).map(str::to_string),
    };
    if lock == Lock::default() {
        return Ok(lock);
    }
    if !bucket.object_lock {
        return Err(lock_not_enabled());
    }
    if lock.mode.is_some() != lock.until.is_some() {
        return Err(errors::invalid_request(
            "x-amz-object-lock-retain-until-date and x-amz-object-lock-mode must both be supplied",
        ));
    }
    if let Some(mode) = lock.mode.as_deref().filter(|m| !MODES.contains(m)) {
        return Err(errors::invalid_argument(
            "Unknown wormMode directive.",
            "x-amz-object-lock-mode",
            mode,
        ));
    }
    if lock.until.is_some_and(|t| t <= now) {
        return Err(retain_until_in_past("x-amz-object-lock-retain-until-date"));
    }
    if let Some(hold) = lock
        .legal_hold
        .as_deref()
        .filter(|h| !["ON", "OFF"].contains(h))
    {
        return Err(errors::invalid_argument(
            "Legal Hold must be either of 'ON' or 'OFF'",
            "x-amz-object-lock-legal-hold",
            hold,
        ));
    }
    Ok(lock)
}

/// Stored headers with the lock replaced by `lock`.
fn with_lock(headers: &str, lock: &Lock) -> String {
    edit_headers(headers, |map| {
        for member in LOCK_MEMBERS {
            map.remove(member);
        }
        if let Some(mode) = &lock.mode {
            map.insert(MODE.into(), mode.clone().into());
        }
        if let Some(until) = lock.until {
            map.insert(RETAIN_UNTIL.into(), until.into());
        }
        if let Some(hold) = &lock.legal_hold {
            map.insert(LEGAL_HOLD.into(), hold.clone().into());
        }
    })
}

/// The retention a rule's `DefaultRetention` gives: its mode, and its period in millis
/// (a year counts 365 days).
fn default_period(rule: &Value) -> Option<(String, i64)> {
    let retention = rule.get("Rule")?.get("DefaultRetention")?;
    let days = match (retention.int("Days"), retention.int("Years")) {
        (Some(days), _) => days,
        (None, Some(years)) => years.saturating_mul(365),
        (None, None) => return None,
    };
    Some((
        retention.str("Mode")?.to_string(),
        days.saturating_mul(DAY_MILLIS),
    ))
}

impl S3 {
    /// The bucket's default retention: mode and period.
    fn default_retention(&self, bucket: &Bucket) -> AwsResult<Option<(String, i64)>> {
        if !bucket.object_lock {
            return Ok(None);
        }
        Ok(self
            .stored_config(&bucket.name, KIND)?
            .flatten()
            .as_ref()
            .and_then(default_period))
    }

    /// Stored headers for a new version: `base` with the request's (checked) lock in
    /// place of any it had.
    pub(crate) fn lock_headers(
        &self,
        bucket: &Bucket,
        input: &Value,
        base: &str,
    ) -> AwsResult<String> {
        let lock = requested(bucket, input, now_millis())?;
        Ok(with_lock(base, &lock))
    }

    /// PutObject's checks: a lock needs `Content-MD5` or a checksum on the request,
    /// whether the request asks for it or the bucket's default retention will apply.
    pub(crate) fn check_put_lock(&self, bucket: &Bucket, request: &Request) -> AwsResult<()> {
        let asks = LOCK_MEMBERS.iter().any(|m| request.input.get(m).is_some());
        if (asks || self.default_retention(bucket)?.is_some()) && lacks_digest(&request.headers) {
            return Err(errors::invalid_request(
                "Content-MD5 OR x-amz-checksum- HTTP header is required for Put Object requests with Object Lock parameters",
            ));
        }
        Ok(())
    }

    /// Gives a new version the bucket's default retention, unless it names its own.
    pub(crate) fn apply_default_retention(
        &self,
        bucket: &Bucket,
        row: &mut ObjectRow,
    ) -> AwsResult<()> {
        let own = Lock::of(row);
        if own.mode.is_some() {
            return Ok(());
        }
        if let Some((mode, period)) = self.default_retention(bucket)? {
            let lock = Lock {
                mode: Some(mode),
                until: Some(now_millis().saturating_add(period)),
                ..own
            };
            row.headers = with_lock(&row.headers, &lock);
        }
        Ok(())
    }

    pub(crate) fn put_object_lock_configuration(&self, request: &Request) -> AwsResult<Value> {
        let input = &request.input;
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if lacks_digest(&request.headers) {
            return Err(errors::missing_content_md5());
        }
        if bucket.versioning.as_deref() != Some("Enabled") {
            return Err(AwsError::new(
                "InvalidBucketState",
                "Versioning must be 'Enabled' on the bucket to apply a Object Lock configuration",
            )
            .with_status(409));
        }
        let config = input
            .get("ObjectLockConfiguration")
            .filter(|c| c.str("ObjectLockEnabled") == Some("Enabled"))
            .ok_or_else(errors::malformed_xml)?;
        if let Some(rule) = config.get("Rule") {
            let retention = rule
                .get("DefaultRetention")
                .ok_or_else(errors::malformed_xml)?;
            let period = match (retention.int("Days"), retention.int("Years")) {
                (Some(n), None) | (None, Some(n)) => n,
                _ => return Err(errors::malformed_xml()),
            };
            if !retention.str("Mode").is_some_and(|m| MODES.contains(&m)) {
                return Err(errors::malformed_xml());
            }
            if period <= 0 {
                return Err(AwsError::new(
                    "InvalidArgument",
                    "Default retention period must be a positive integer value",
                )
                .with_status(400));
            }
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE s3_buckets SET object_lock = 1 WHERE name = ?1",
                [&bucket.name],
            )
            .map_err(AwsError::from)
        })?;
        self.store_config(&bucket.name, KIND, Some(config))?;
        Ok(Value::map())
    }

    pub(crate) fn get_object_lock_configuration(&self, input: &Value) -> AwsResult<Value> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if !bucket.object_lock {
            return Err(AwsError::new(
                "ObjectLockConfigurationNotFoundError",
                "Object Lock configuration does not exist for this bucket",
            )
            .with_status(404)
            .with_field("BucketName", &bucket.name));
        }
        let config = self
            .stored_config(&bucket.name, KIND)?
            .flatten()
            .unwrap_or_else(|| Value::map().with("ObjectLockEnabled", "Enabled"));
        Ok(Value::map().with("ObjectLockConfiguration", config))
    }

    /// Finds the version a retention or legal-hold operation names and, when `change`
    /// is given, rewrites its lock with it.
    fn lock_version(
        &self,
        input: &Value,
        method: &str,
        change: Option<LockChange<'_>>,
    ) -> AwsResult<Lock> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        if !bucket.object_lock {
            return Err(lock_not_enabled());
        }
        let key = input_str(input, "Key");
        let version = input.str("VersionId");
        let row = match change {
            None => self
                .env
                .store
                .with(|c| versions::find_object(c, &bucket.name, key, version, method))?,
            Some(change) => self.env.store.transaction(|tx| {
                versions::update_version(tx, &bucket.name, key, version, method, |row| {
                    let mut lock = Lock::of(row);
                    change(&mut lock)?;
                    row.headers = with_lock(&row.headers, &lock);
                    Ok(())
                })
            })?,
        };
        Ok(Lock::of(&row))
    }

    pub(crate) fn put_object_retention(&self, request: &Request) -> AwsResult<Value> {
        let input = &request.input;
        if lacks_digest(&request.headers) {
            return Err(errors::missing_content_md5());
        }
        let retention = input
            .get("Retention")
            .filter(|r| !r.as_map().is_some_and(|m| m.is_empty()));
        let wanted = match retention {
            None => None,
            Some(r) => {
                let mode = r.str("Mode").filter(|m| MODES.contains(m));
                let until = match r.get("RetainUntilDate") {
                    Some(Value::Timestamp(t)) => Some(*t),
                    _ => None,
                };
                let (Some(mode), Some(until)) = (mode, until) else {
                    return Err(errors::malformed_xml());
                };
                Some((mode.to_string(), until))
            }
        };
        let now = now_millis();
        if wanted.as_ref().is_some_and(|(_, until)| *until <= now) {
            return Err(retain_until_in_past("RetainUntilDate"));
        }
        let bypass = input.bool("BypassGovernanceRetention") == Some(true);
        let change = |lock: &mut Lock| {
            if lock.retains(now) {
                let shortens = wanted
                    .as_ref()
                    .is_none_or(|(_, until)| Some(*until) < lock.until);
                let weakens = lock.mode_is("COMPLIANCE")
                    && wanted.as_ref().is_none_or(|(mode, _)| mode != "COMPLIANCE");
                let changes_mode = lock.mode_is("GOVERNANCE")
                    && wanted
                        .as_ref()
                        .is_some_and(|(mode, _)| mode != "GOVERNANCE");
                let overridable = lock.mode_is("GOVERNANCE") && bypass;
                if (shortens || weakens || changes_mode) && !overridable {
                    return Err(protected());
                }
            }
            lock.mode = wanted.as_ref().map(|(mode, _)| mode.clone());
            lock.until = wanted.as_ref().map(|(_, until)| *until);
            Ok(())
        };
        self.lock_version(input, "PUT", Some(&change))?;
        Ok(Value::map())
    }

    pub(crate) fn get_object_retention(&self, input: &Value) -> AwsResult<Value> {
        let lock = self.lock_version(input, "GET", None)?;
        let (Some(mode), Some(until)) = (lock.mode, lock.until) else {
            return Err(no_object_lock());
        };
        Ok(Value::map().with(
            "Retention",
            Value::map()
                .with("Mode", mode)
                .with("RetainUntilDate", Value::Timestamp(until)),
        ))
    }

    pub(crate) fn put_object_legal_hold(&self, request: &Request) -> AwsResult<Value> {
        let input = &request.input;
        if lacks_digest(&request.headers) {
            return Err(errors::missing_content_md5());
        }
        let status = input
            .get("LegalHold")
            .ok_or_else(errors::malformed_xml)?
            .str("Status")
            .map(str::to_string);
        let change = |lock: &mut Lock| {
            match status.as_deref() {
                Some("ON" | "OFF") => lock.legal_hold = status.clone(),
                _ => return Err(errors::malformed_xml()),
            }
            Ok(())
        };
        self.lock_version(input, "PUT", Some(&change))?;
        Ok(Value::map())
    }

    pub(crate) fn get_object_legal_hold(&self, input: &Value) -> AwsResult<Value> {
        let lock = self.lock_version(input, "GET", None)?;
        let status = lock.legal_hold.ok_or_else(no_object_lock)?;
        Ok(Value::map().with("LegalHold", Value::map().with("Status", status)))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn row(headers: serde_json::Value) -> ObjectRow {
        ObjectRow {
            headers: headers.to_string(),
            ..ObjectRow::default()
        }
    }

    #[test]
    fn retention_and_legal_hold_protect_a_version() {
        let governed = row(serde_json::json!({MODE: "GOVERNANCE", RETAIN_UNTIL: 2000}));
        assert!(protect(&governed, false, 1000).is_err());
        assert!(protect(&governed, true, 1000).is_ok());
        assert!(protect(&governed, false, 2000).is_ok());
        let compliant = row(serde_json::json!({MODE: "COMPLIANCE", RETAIN_UNTIL: 2000}));
        assert_eq!(
            protect(&compliant, true, 1000).unwrap_err().code,
            "AccessDenied"
        );
        let held = row(serde_json::json!({LEGAL_HOLD: "ON"}));
        assert!(protect(&held, true, 1000).is_err());
        assert!(protect(&row(serde_json::json!({LEGAL_HOLD: "OFF"})), false, 0).is_ok());
    }

    #[test]
    fn default_retention_counts_days_or_years() {
        let rule = |retention: Value| {
            Value::map().with("Rule", Value::map().with("DefaultRetention", retention))
        };
        assert_eq!(
            default_period(&rule(
                Value::map().with("Mode", "GOVERNANCE").with("Days", 2i64)
            )),
            Some(("GOVERNANCE".into(), 2 * DAY_MILLIS))
        );
        assert_eq!(
            default_period(&rule(
                Value::map().with("Mode", "COMPLIANCE").with("Years", 1i64)
            )),
            Some(("COMPLIANCE".into(), 365 * DAY_MILLIS))
        );
        assert_eq!(
            default_period(&Value::map().with("ObjectLockEnabled", "Enabled")),
            None
        );
    }

    #[test]
    fn a_new_lock_replaces_the_old_one_and_keeps_other_headers() {
        let headers =
            serde_json::json!({"ContentType": "text/plain", MODE: "GOVERNANCE"}).to_string();
        let lock = Lock {
            legal_hold: Some("ON".into()),
            ..Lock::default()
        };
        let out: serde_json::Value = serde_json::from_str(&with_lock(&headers, &lock)).unwrap();
        assert_eq!(
            out,
            serde_json::json!({"ContentType": "text/plain", LEGAL_HOLD: "ON"})
        );
    }
}
