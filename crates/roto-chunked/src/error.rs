//! The one error type of the decoder, small enough to match on when choosing the S3 error.

use std::fmt;

/// Why an `aws-chunked` body could not be decoded.
///
/// Offsets count bytes of the encoded body from its start.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum ChunkedError {
    /// The chunk framing is broken: a bad chunk-size line, a missing CRLF after chunk
    /// data, a line over [`MAX_LINE_LEN`](crate::MAX_LINE_LEN) bytes, a missing or
    /// malformed chunk signature in a signed body.
    Malformed {
        /// Where in the encoded body the problem was found.
        offset: u64,
        /// What was wrong, in a few words.
        reason: &'static str,
    },
    /// The trailer section (after the final zero-length chunk) is broken, or bytes follow
    /// the end of the body. S3 answers these with `MalformedTrailerError`.
    MalformedTrailer {
        /// Where in the encoded body the problem was found.
        offset: u64,
        /// What was wrong, in a few words.
        reason: &'static str,
    },
    /// The body ended before its final zero-length chunk (or in the middle of a line).
    Incomplete {
        /// How many payload bytes had been decoded when the body ended.
        decoded: u64,
    },
    /// The payload length differs from the `x-amz-decoded-content-length` the caller gave.
    DecodedLengthMismatch {
        /// The length the request declared.
        expected: u64,
        /// The length the body carries (at least this much when found early).
        actual: u64,
    },
}

impl fmt::Display for ChunkedError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Self::Malformed { offset, reason } => {
                write!(f, "malformed aws-chunked body at byte {offset}: {reason}")
            }
            Self::MalformedTrailer { offset, reason } => {
                write!(f, "malformed aws-chunked trailer at byte {offset}: {reason}")
            }
            Self::Incomplete { decoded } => write!(
                f,
                "aws-chunked body ended early, after {decoded} payload bytes"
            ),
            Self::DecodedLengthMismatch { expected, actual } => write!(
                f,
                "aws-chunked payload is {actual} bytes, but x-amz-decoded-content-length is {expected}"
            ),
        }
    }
}

impl std::error::Error for ChunkedError {}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn display_names_the_problem_and_where() {
        let e = ChunkedError::Malformed {
            offset: 7,
            reason: "bad chunk size",
        };
        assert_eq!(
            e.to_string(),
            "malformed aws-chunked body at byte 7: bad chunk size"
        );
        let e = ChunkedError::DecodedLengthMismatch {
            expected: 3,
            actual: 4,
        };
        assert!(e.to_string().contains("4 bytes"));
        assert!(e.to_string().contains("is 3"));
    }
}
