//! Presigned URLs: the server's side of [`roto_core::presign`], which reads the query
//! string's expiry parameters and refuses an expired URL before anything else runs.

use http::request::Parts;
use roto_core::timestamp::now_millis;
use roto_core::AwsError;

/// Checks a presigned URL's expiry at `now` (epoch millis); other requests pass.
pub fn check(parts: &Parts, now: i64) -> Result<(), AwsError> {
    match parts.uri.query() {
        Some(query) => roto_core::presign::check_query(query, now),
        None => Ok(()),
    }
}

/// [`check`] against the clock.
pub fn check_now(parts: &Parts) -> Result<(), AwsError> {
    check(parts, now_millis())
}

#[cfg(test)]
mod tests {
    use super::*;

    fn parts(uri: &str) -> Parts {
        http::Request::get(uri).body(()).unwrap().into_parts().0
    }

    const SIGNED: i64 = 1_767_225_600_000; // 2026-01-01T00:00:00Z

    #[test]
    fn the_query_string_decides_and_urls_without_one_pass() {
        let url = "/b/k?X-Amz-Date=20260101T000000Z&X-Amz-Expires=60";
        assert!(check(&parts(url), SIGNED).is_ok());
        assert!(check(&parts(url), SIGNED + 61_000).is_err());
        assert!(check(&parts("/b/k"), SIGNED).is_ok());
    }
}
