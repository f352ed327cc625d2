//! Conditional requests (`If-Match`, `If-None-Match`, `If-Modified-Since`,
//! `If-Unmodified-Since`, and their `x-amz-copy-source-` forms), conditional writes, and
//! byte ranges.
//!
//! Reads follow RFC 7232 as S3 applies it: a true `If-Match` overrides a false
//! `If-Unmodified-Since`, a false `If-None-Match` (the ETag matches) answers 304 whatever
//! `If-Modified-Since` says, and 412 wins over 304.

use roto_core::timestamp::{format, TimestampFormat};
use roto_core::{AwsError, AwsResult, Value};

use super::errors;

/// The names of the four condition members in an input (`IfMatch`, or `CopySourceIfMatch`).
pub(crate) struct Members {
    pub if_match: &'static str,
    pub if_none_match: &'static str,
    pub if_modified_since: &'static str,
    pub if_unmodified_since: &'static str,
    /// The header names reported in `<Condition>`, in the same order.
    pub headers: [&'static str; 4],
}

/// GetObject's and HeadObject's conditions.
pub(crate) const READ: Members = Members {
    if_match: "IfMatch",
    if_none_match: "IfNoneMatch",
    if_modified_since: "IfModifiedSince",
    if_unmodified_since: "IfUnmodifiedSince",
    headers: [
        "If-Match",
        "If-None-Match",
        "If-Modified-Since",
        "If-Unmodified-Since",
    ],
};

/// CopyObject's and UploadPartCopy's conditions on the source.
pub(crate) const COPY_SOURCE: Members = Members {
    if_match: "CopySourceIfMatch",
    if_none_match: "CopySourceIfNoneMatch",
    if_modified_since: "CopySourceIfModifiedSince",
    if_unmodified_since: "CopySourceIfUnmodifiedSince",
    headers: [
        "x-amz-copy-source-If-Match",
        "x-amz-copy-source-If-None-Match",
        "x-amz-copy-source-If-Modified-Since",
        "x-amz-copy-source-If-Unmodified-Since",
    ],
};

/// Whether an `If-Match`-style list (`"a", "b"`, `*`) names the ETag.
pub(crate) fn etag_matches(list: &str, etag: &str) -> bool {
    let bare = etag.trim_matches('"');
    list.split(',')
        .map(str::trim)
        .any(|t| t == "*" || t.trim_start_matches("W/").trim_matches('"') == bare)
}

/// A timestamp member in seconds (S3 compares at whole seconds).
fn seconds(input: &Value, member: &str) -> Option<i64> {
    match input.get(member)? {
        Value::Timestamp(t) => Some(t.div_euclid(1000)),
        _ => None,
    }
}

/// Checks read conditions against an object; `copy` conditions fail with 412 where a
/// GET's would answer 304.
pub(crate) fn check_read(
    input: &Value,
    m: &Members,
    etag: &str,
    last_modified: i64,
    copy: bool,
) -> AwsResult<()> {
    let modified = last_modified.div_euclid(1000);
    let if_match = input.str(m.if_match);
    if let Some(list) = if_match {
        if !etag_matches(list, etag) {
            return Err(errors::precondition_failed(m.headers[0]));
        }
    } else if seconds(input, m.if_unmodified_since).is_some_and(|since| modified > since) {
        return Err(errors::precondition_failed(m.headers[3]));
    }
    let not_modified = match input.str(m.if_none_match) {
        Some(list) => etag_matches(list, etag).then_some(m.headers[1]),
        None => seconds(input, m.if_modified_since)
            .is_some_and(|since| modified <= since)
            .then_some(m.headers[2]),
    };
    match not_modified {
        Some(condition) if copy => Err(errors::precondition_failed(condition)),
        Some(_) => Err(AwsError::new("NotModified", "Not Modified")
            .with_status(304)
            .with_header("ETag", etag)
            .with_header(
                "Last-Modified",
                format(last_modified, TimestampFormat::Rfc822),
            )),
        None => Ok(()),
    }
}

/// Checks a write's `If-None-Match: *` and `If-Match` against the current object's ETag.
pub(crate) fn check_write(input: &Value, key: &str, current: Option<&str>) -> AwsResult<()> {
    if let Some(v) = input.str("IfNoneMatch") {
        if v != "*" {
            return Err(errors::header_not_implemented("If-None-Match"));
        }
        if current.is_some() {
            return Err(errors::precondition_failed("If-None-Match"));
        }
    }
    if let Some(list) = input.str("IfMatch") {
        match current {
            None => return Err(errors::no_such_key(key)),
            Some(etag) if !etag_matches(list, etag) => {
                return Err(errors::precondition_failed("If-Match"))
            }
            Some(_) => {}
        }
    }
    Ok(())
}

/// A satisfiable byte range: first and last byte, inclusive.
#[derive(Debug, PartialEq, Clone, Copy)]
pub(crate) struct ByteRange {
    pub first: u64,
    pub last: u64,
}

impl ByteRange {
    /// How many bytes it covers.
    pub(crate) fn len(&self) -> u64 {
        self.last - self.first + 1
    }

    /// The `Content-Range` value.
    pub(crate) fn content_range(&self, size: u64) -> String {
        format!("bytes {}-{}/{size}", self.first, self.last)
    }
}

/// Parses a `Range` header against an object's size. `Ok(None)` serves the whole object,
/// as S3 does for syntax it does not take (several ranges, other units); a range that
/// starts past the end is `InvalidRange`.
pub(crate) fn parse_range(text: &str, size: u64) -> AwsResult<Option<ByteRange>> {
    let Some(spec) = text.trim().strip_prefix("bytes=") else {
        return Ok(None);
    };
    if spec.contains(',') {
        return Ok(None);
    }
    let Some((a, b)) = spec.trim().split_once('-') else {
        return Ok(None);
    };
    let (a, b) = (a.trim(), b.trim());
    let num = |s: &str| -> Option<u64> {
        (!s.is_empty() && s.bytes().all(|c| c.is_ascii_digit()))
            .then(|| s.parse().ok())
            .flatten()
    };
    let unsatisfiable = || errors::invalid_range(text, i64::try_from(size).unwrap_or(i64::MAX));
    match (num(a), num(b)) {
        (Some(first), last) => {
            if last.is_some_and(|l| l < first) {
                return Ok(None);
            }
            if first >= size {
                return Err(unsatisfiable());
            }
            let last = last.map_or(size - 1, |l| l.min(size - 1));
            Ok(Some(ByteRange { first, last }))
        }
        (None, Some(suffix)) if a.is_empty() => {
            if suffix == 0 || size == 0 {
                return Err(unsatisfiable());
            }
            Ok(Some(ByteRange {
                first: size.saturating_sub(suffix),
                last: size - 1,
            }))
        }
        _ => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn r(text: &str, size: u64) -> Option<(u64, u64)> {
        parse_range(text, size).unwrap().map(|r| (r.first, r.last))
    }

    #[test]
    fn ranges_take_every_single_range_form() {
        assert_eq!(r("bytes=0-4", 10), Some((0, 4)));
        assert_eq!(r("bytes=5-", 10), Some((5, 9)));
        assert_eq!(r("bytes=-3", 10), Some((7, 9)));
        assert_eq!(r("bytes=-30", 10), Some((0, 9)));
        assert_eq!(r("bytes=8-100", 10), Some((8, 9)));
        assert_eq!(r("bytes=0-1,4-5", 10), None);
        assert_eq!(r("items=0-1", 10), None);
        assert_eq!(r("bytes=5-2", 10), None);
        assert_eq!(r("bytes=x-2", 10), None);
    }

    #[test]
    fn ranges_past_the_end_are_invalid_range() {
        for text in ["bytes=10-", "bytes=10-20", "bytes=-0"] {
            let e = parse_range(text, 10).unwrap_err();
            assert_eq!(e.code, "InvalidRange");
            assert_eq!(e.status, Some(416));
        }
        assert_eq!(parse_range("bytes=0-", 0).unwrap_err().code, "InvalidRange");
    }

    #[test]
    fn etag_lists_match_quoted_unquoted_and_star() {
        assert!(etag_matches("\"abc\"", "\"abc\""));
        assert!(etag_matches("abc", "\"abc\""));
        assert!(etag_matches("\"x\", \"abc\"", "\"abc\""));
        assert!(etag_matches("*", "\"abc\""));
        assert!(!etag_matches("\"abd\"", "\"abc\""));
    }

    #[test]
    fn if_match_overrides_if_unmodified_since_and_none_match_gives_304() {
        let etag = "\"e\"";
        let input = Value::map()
            .with("IfMatch", "\"e\"")
            .with("IfUnmodifiedSince", Value::Timestamp(0));
        assert!(check_read(&input, &READ, etag, 5000, false).is_ok());
        let input = Value::map().with("IfUnmodifiedSince", Value::Timestamp(0));
        assert_eq!(
            check_read(&input, &READ, etag, 5000, false)
                .unwrap_err()
                .status,
            Some(412)
        );
        let input = Value::map()
            .with("IfNoneMatch", "\"e\"")
            .with("IfModifiedSince", Value::Timestamp(0));
        assert_eq!(
            check_read(&input, &READ, etag, 5000, false)
                .unwrap_err()
                .status,
            Some(304)
        );
        let input = Value::map().with("IfModifiedSince", Value::Timestamp(5999));
        assert_eq!(
            check_read(&input, &READ, etag, 5000, false)
                .unwrap_err()
                .status,
            Some(304)
        );
        assert_eq!(
            check_read(&input, &COPY_SOURCE, etag, 5000, false).map(|_| ()),
            Ok(())
        );
        let input = Value::map().with("CopySourceIfNoneMatch", "*");
        assert_eq!(
            check_read(&input, &COPY_SOURCE, etag, 5000, true)
                .unwrap_err()
                .status,
            Some(412)
        );
    }
}
