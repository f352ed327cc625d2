//! Archived objects (`GLACIER`, `DEEP_ARCHIVE`): GetObject and copies refuse them
//! (`InvalidObjectState`) until RestoreObject makes a temporary copy readable for a number
//! of days.
//!
//! A restore completes at once, as in LocalStack and Moto (AWS takes minutes to hours), so
//! the first request answers 202 and a repeated one 200, extending the copy's life. The
//! copy lapses when its expiry passes on the server clock; it is the version's `Restore`
//! stored header, the expiry in epoch millis, shown on HEAD and GET as `x-amz-restore`.

use roto_core::timestamp::{format, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Response, Value};

use super::errors;
use super::objects::{edit_headers, stored_map, StoredHeaders};
use super::versions::{self, ObjectRow};
use super::{input_str, S3};

/// The storage classes whose objects must be restored before they are read.
const ARCHIVED: [&str; 2] = ["GLACIER", "DEEP_ARCHIVE"];

/// The stored-header member holding a restored copy's expiry.
pub(crate) const RESTORE: &str = "Restore";

const DAY_MILLIS: i64 = 86_400_000;

/// The expiry of a version's restored copy, while it lasts.
fn restored_until(row: &ObjectRow, now: i64) -> Option<i64> {
    stored_until(&stored_map(&row.headers), now)
}

fn stored_until(headers: &StoredHeaders, now: i64) -> Option<i64> {
    headers
        .get(RESTORE)
        .and_then(serde_json::Value::as_i64)
        .filter(|t| *t > now)
}

/// When a copy restored at `now` for `days` expires: `days` later, rounded up to the next
/// midnight UTC, as AWS rounds it.
fn expiry(now: i64, days: i64) -> i64 {
    let end = now.saturating_add(days.saturating_mul(DAY_MILLIS));
    (end / DAY_MILLIS + 1).saturating_mul(DAY_MILLIS)
}

fn invalid_object_state(message: &str, row: &ObjectRow) -> AwsError {
    AwsError::new("InvalidObjectState", message)
        .with_status(403)
        .with_field("StorageClass", row.storage_class())
}

/// Refuses reading the bytes of an archived version that has no restored copy;
/// `message` is the one AWS gives for the operation.
pub(crate) fn check_readable(row: &ObjectRow, message: &str) -> AwsResult<()> {
    if ARCHIVED.contains(&row.storage_class()) && restored_until(row, now_millis()).is_none() {
        return Err(invalid_object_state(message, row));
    }
    Ok(())
}

/// The `x-amz-restore` value of a version with a restored copy.
pub(crate) fn restore_header(headers: &StoredHeaders) -> Option<String> {
    stored_until(headers, now_millis()).map(|until| {
        format!(
            "ongoing-request=\"false\", expiry-date=\"{}\"",
            format(until, TimestampFormat::Rfc822)
        )
    })
}

impl S3 {
    pub(crate) fn restore_object(&self, ctx: &Context, input: &Value) -> AwsResult<Response> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let key = input_str(input, "Key");
        let days = input
            .get("RestoreRequest")
            .and_then(|r| r.int("Days"))
            .filter(|d| *d >= 1)
            .ok_or_else(errors::malformed_xml)?;
        let now = now_millis();
        let mut was_restored = false;
        let row = self.env.store.transaction(|tx| {
            versions::update_version(
                tx,
                &bucket.name,
                key,
                input.str("VersionId"),
                "POST",
                |row| {
                    if !ARCHIVED.contains(&row.storage_class()) {
                        return Err(invalid_object_state(
                            "Restore is not allowed for the object's current storage class",
                            row,
                        ));
                    }
                    was_restored = restored_until(row, now).is_some();
                    row.headers = edit_headers(&row.headers, |map| {
                        map.insert(RESTORE.into(), expiry(now, days).into());
                    });
                    Ok(())
                },
            )
        })?;
        if was_restored {
            return Ok(Response::new(Value::map()));
        }
        for event in ["ObjectRestore:Post", "ObjectRestore:Completed"] {
            self.notify(ctx, &bucket, event, key, Some(&row));
        }
        Ok(Response::new(Value::map()).with_status(202))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn restored_copies_expire_at_the_midnight_after_their_days() {
        let noon = 20_000 * DAY_MILLIS + DAY_MILLIS / 2;
        assert_eq!(expiry(noon, 1), 20_002 * DAY_MILLIS);
        assert_eq!(expiry(20_000 * DAY_MILLIS, 2), 20_003 * DAY_MILLIS);
        let row = ObjectRow {
            headers: serde_json::json!({RESTORE: expiry(noon, 1)}).to_string(),
            ..ObjectRow::default()
        };
        assert_eq!(restored_until(&row, noon), Some(20_002 * DAY_MILLIS));
        assert_eq!(restored_until(&row, 20_002 * DAY_MILLIS), None);
    }
}
