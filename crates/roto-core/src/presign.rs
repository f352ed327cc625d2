//! Presigned URLs' query authentication: their signatures are verified only under
//! `--verify-signatures` ([`crate::signature`]), but their expiry always is, as AWS checks
//! it before anything else: SigV4 query auth (`X-Amz-Date` + `X-Amz-Expires`, at most a
//! week) and SigV2 query auth (`Expires`, epoch seconds).
//!
//! The parsing lives here, apart from the server that calls it, so that it can be fuzzed.

use crate::error::AwsError;
use crate::timestamp::{format, parse, TimestampFormat};

fn query_error(message: &str) -> AwsError {
    AwsError::new("AuthorizationQueryParametersError", message).with_status(400)
}

/// S3's `AccessDenied` for an expired URL, its times in whole seconds as S3 writes them.
fn expired(expires_at: i64, now: i64) -> AwsError {
    let seconds = |millis: i64| {
        format(millis.div_euclid(1000) * 1000, TimestampFormat::Iso8601).replace(".000Z", "Z")
    };
    AwsError::new("AccessDenied", "Request has expired")
        .with_status(403)
        .with_field("Expires", seconds(expires_at))
        .with_field("ServerTime", seconds(now))
}

/// `20260101T000000Z` as epoch millis; anything but digits around the `T` and `Z` is not one.
pub fn amz_date(text: &str) -> Option<i64> {
    let b = text.as_bytes();
    let shaped = b.len() == 16
        && b.iter().enumerate().all(|(i, c)| match i {
            8 => *c == b'T',
            15 => *c == b'Z',
            _ => c.is_ascii_digit(),
        });
    if !shaped {
        return None;
    }
    let iso = format!(
        "{}-{}-{}T{}:{}:{}Z",
        &text[0..4],
        &text[4..6],
        &text[6..8],
        &text[9..11],
        &text[11..13],
        &text[13..15]
    );
    parse(&iso)
}

/// Checks the expiry a request's query string states at `now` (epoch millis); a query
/// without presigned parameters passes.
pub fn check_query(query: &str, now: i64) -> Result<(), AwsError> {
    let (mut date, mut expires_v4, mut expires_v2, mut v2) = (None, None, None, false);
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        match k.as_ref() {
            "X-Amz-Date" => date = Some(v.into_owned()),
            "X-Amz-Expires" => expires_v4 = Some(v.into_owned()),
            "Expires" => expires_v2 = Some(v.into_owned()),
            "AWSAccessKeyId" => v2 = true,
            _ => {}
        }
    }
    if let Some(seconds) = expires_v4 {
        let seconds: i64 = seconds
            .parse()
            .map_err(|_| query_error("X-Amz-Expires should be a number"))?;
        if seconds < 0 {
            return Err(query_error("X-Amz-Expires must be non-negative"));
        }
        if seconds > 604_800 {
            return Err(query_error(
                "X-Amz-Expires must be less than a week (in seconds) that is, the given X-Amz-Expires must be less than 604800 seconds",
            ));
        }
        let signed = date.as_deref().and_then(amz_date).ok_or_else(|| {
            query_error("X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\"")
        })?;
        let expires_at = signed + seconds * 1000;
        if now > expires_at {
            return Err(expired(expires_at, now).with_field("X-Amz-Expires", seconds.to_string()));
        }
    } else if let (true, Some(epoch)) = (v2, expires_v2) {
        let expires_at = epoch
            .parse::<i64>()
            .map(|s| s.saturating_mul(1000))
            .unwrap_or(0);
        if now > expires_at {
            return Err(expired(expires_at, now));
        }
    }
    Ok(())
}

#[cfg(test)]
mod tests {
    use super::*;

    const SIGNED: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    #[test]
    fn sigv4_urls_expire_after_their_seconds() {
        let q = "X-Amz-Algorithm=AWS4-HMAC-SHA256&X-Amz-Date=20260101T000000Z&X-Amz-Expires=60";
        assert!(check_query(q, SIGNED + 59_000).is_ok());
        let e = check_query(q, SIGNED + 61_000).unwrap_err();
        assert_eq!((e.code.as_ref(), e.status), ("AccessDenied", Some(403)));
        assert_eq!(e.message, "Request has expired");
        assert_eq!(e.fields.str("Expires"), Some("2026-01-01T00:01:00Z"));
        let week = "X-Amz-Date=20260101T000000Z&X-Amz-Expires=604801";
        assert_eq!(
            check_query(week, SIGNED).unwrap_err().code,
            "AuthorizationQueryParametersError"
        );
    }

    #[test]
    fn sigv2_urls_expire_at_their_epoch_and_plain_requests_pass() {
        let q = "AWSAccessKeyId=test&Expires=1767225660&Signature=x";
        assert!(check_query(q, SIGNED).is_ok());
        assert!(check_query(q, SIGNED + 61_000).is_err());
        assert!(check_query("Expires=1", SIGNED).is_ok());
        assert!(check_query("", SIGNED).is_ok());
        let huge = "AWSAccessKeyId=test&Expires=9223372036854775807";
        assert!(check_query(huge, SIGNED).is_ok());
    }

    #[test]
    fn dates_with_multibyte_characters_are_malformed_not_sliced() {
        let q = "X-Amz-Expires=60&X-Amz-Date=202%C3%A9010T000000Z";
        let e = check_query(q, SIGNED).unwrap_err();
        assert_eq!(e.code, "AuthorizationQueryParametersError");
        assert_eq!(
            e.message,
            "X-Amz-Date must be in the ISO8601 Long Format \"yyyyMMdd'T'HHmmss'Z'\""
        );
        assert!(check_query("X-Amz-Expires=60&X-Amz-Date=2026010%C3%A9T000000", SIGNED).is_err());
    }
}
