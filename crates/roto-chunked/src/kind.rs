//! Which `aws-chunked` framing a request uses, told from its headers.

/// The `aws-chunked` framing of a request body, named after its `x-amz-content-sha256`.
///
/// Every kind is decoded the same way; the kind decides whether each chunk must carry a
/// `chunk-signature` extension (the signed kinds) and says whether the client declared
/// trailing headers.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChunkedKind {
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD`: SigV4-signed chunks, no trailers.
    Signed,
    /// `STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER`: SigV4-signed chunks, then trailers
    /// and an `x-amz-trailer-signature`.
    SignedWithTrailer,
    /// `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD`: SigV4a-signed chunks, no trailers.
    SignedEcdsa,
    /// `STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER`: SigV4a-signed chunks, then
    /// trailers and an `x-amz-trailer-signature`.
    SignedEcdsaWithTrailer,
    /// `STREAMING-UNSIGNED-PAYLOAD-TRAILER`: unsigned chunks, then trailers (boto3 and
    /// the AWS CLI over HTTPS).
    UnsignedWithTrailer,
    /// `Content-Encoding: aws-chunked` with any other `x-amz-content-sha256` (such as
    /// `UNSIGNED-PAYLOAD`): unsigned chunks, trailers accepted if present.
    Unsigned,
}

impl ChunkedKind {
    /// Every kind, for tests and tables.
    pub const ALL: [ChunkedKind; 6] = [
        Self::Signed,
        Self::SignedWithTrailer,
        Self::SignedEcdsa,
        Self::SignedEcdsaWithTrailer,
        Self::UnsignedWithTrailer,
        Self::Unsigned,
    ];

    /// The framing of a body with these `x-amz-content-sha256` and `Content-Encoding`
    /// header values, or `None` if the body is not `aws-chunked`.
    ///
    /// A `STREAMING-*` content hash decides alone (S3 does not require the
    /// `aws-chunked` content encoding with it); otherwise an `aws-chunked` token in
    /// `Content-Encoding` (which may list several codings, e.g. `aws-chunked,gzip`) means
    /// unsigned chunks.
    pub fn from_headers(
        content_sha256: Option<&str>,
        content_encoding: Option<&str>,
    ) -> Option<ChunkedKind> {
        if let Some(kind) = content_sha256.and_then(Self::from_content_sha256) {
            return Some(kind);
        }
        content_encoding
            .filter(|value| has_aws_chunked(value))
            .map(|_| Self::Unsigned)
    }

    /// The kind named by a `STREAMING-*` `x-amz-content-sha256` value (case-insensitive).
    pub fn from_content_sha256(value: &str) -> Option<ChunkedKind> {
        let value = value.trim();
        Self::ALL.into_iter().find(|kind| {
            kind.content_sha256()
                .is_some_and(|name| name.eq_ignore_ascii_case(value))
        })
    }

    /// The `x-amz-content-sha256` value that names this kind (`None` for [`Self::Unsigned`]).
    pub const fn content_sha256(self) -> Option<&'static str> {
        match self {
            Self::Signed => Some("STREAMING-AWS4-HMAC-SHA256-PAYLOAD"),
            Self::SignedWithTrailer => Some("STREAMING-AWS4-HMAC-SHA256-PAYLOAD-TRAILER"),
            Self::SignedEcdsa => Some("STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD"),
            Self::SignedEcdsaWithTrailer => {
                Some("STREAMING-AWS4-ECDSA-P256-SHA256-PAYLOAD-TRAILER")
            }
            Self::UnsignedWithTrailer => Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER"),
            Self::Unsigned => None,
        }
    }

    /// Whether every chunk carries a `chunk-signature` extension.
    pub const fn is_signed(self) -> bool {
        matches!(
            self,
            Self::Signed
                | Self::SignedWithTrailer
                | Self::SignedEcdsa
                | Self::SignedEcdsaWithTrailer
        )
    }

    /// Whether the framing declares trailing headers after the final chunk.
    pub const fn has_trailer(self) -> bool {
        matches!(
            self,
            Self::SignedWithTrailer | Self::SignedEcdsaWithTrailer | Self::UnsignedWithTrailer
        )
    }

    /// Whether signatures are SigV4 HMAC-SHA256 ones (64 hex digits); SigV4a ones are
    /// hex-encoded DER ECDSA signatures of varying length.
    pub(crate) const fn is_hmac(self) -> bool {
        matches!(self, Self::Signed | Self::SignedWithTrailer)
    }
}

fn has_aws_chunked(content_encoding: &str) -> bool {
    content_encoding
        .split(',')
        .any(|coding| coding.trim().eq_ignore_ascii_case("aws-chunked"))
}

/// The `Content-Encoding` to store with the object: the header value without its
/// `aws-chunked` coding, or `None` if nothing else is left.
///
/// S3 drops `aws-chunked` from the stored `Content-Encoding`, so
/// `aws-chunked,gzip` is stored as `gzip` and a lone `aws-chunked` as no header.
pub fn content_encoding_without_aws_chunked(content_encoding: &str) -> Option<String> {
    let rest: Vec<&str> = content_encoding
        .split(',')
        .map(str::trim)
        .filter(|coding| !coding.is_empty() && !coding.eq_ignore_ascii_case("aws-chunked"))
        .collect();
    if rest.is_empty() {
        None
    } else {
        Some(rest.join(","))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn streaming_content_sha256_values_choose_their_kind() {
        for kind in ChunkedKind::ALL {
            if let Some(name) = kind.content_sha256() {
                assert_eq!(ChunkedKind::from_headers(Some(name), None), Some(kind));
                assert_eq!(
                    ChunkedKind::from_headers(Some(name), Some("aws-chunked")),
                    Some(kind)
                );
            }
        }
        assert_eq!(
            ChunkedKind::from_headers(Some("streaming-unsigned-payload-trailer"), None),
            Some(ChunkedKind::UnsignedWithTrailer)
        );
    }

    #[test]
    fn aws_chunked_encoding_with_other_sha_is_unsigned_chunks() {
        for sha in [
            None,
            Some("UNSIGNED-PAYLOAD"),
            Some("STREAMING-SOMETHING-NEW"),
        ] {
            assert_eq!(
                ChunkedKind::from_headers(sha, Some("aws-chunked")),
                Some(ChunkedKind::Unsigned)
            );
            assert_eq!(
                ChunkedKind::from_headers(sha, Some("gzip, AWS-Chunked")),
                Some(ChunkedKind::Unsigned)
            );
        }
    }

    #[test]
    fn plain_bodies_are_not_chunked() {
        assert_eq!(ChunkedKind::from_headers(None, None), None);
        assert_eq!(
            ChunkedKind::from_headers(Some("UNSIGNED-PAYLOAD"), Some("gzip")),
            None
        );
        let sha = "e3b0c44298fc1c149afbf4c8996fb92427ae41e4649b934ca495991b7852b855";
        assert_eq!(ChunkedKind::from_headers(Some(sha), None), None);
        assert_eq!(
            ChunkedKind::from_headers(None, Some("aws-chunked-not")),
            None
        );
    }

    #[test]
    fn kinds_say_whether_signed_and_trailed() {
        assert!(ChunkedKind::Signed.is_signed());
        assert!(!ChunkedKind::Signed.has_trailer());
        assert!(ChunkedKind::SignedWithTrailer.is_signed());
        assert!(ChunkedKind::SignedWithTrailer.has_trailer());
        assert!(ChunkedKind::SignedEcdsaWithTrailer.is_signed());
        assert!(!ChunkedKind::UnsignedWithTrailer.is_signed());
        assert!(ChunkedKind::UnsignedWithTrailer.has_trailer());
        assert!(!ChunkedKind::Unsigned.is_signed());
        assert!(!ChunkedKind::Unsigned.has_trailer());
    }

    #[test]
    fn stored_content_encoding_drops_aws_chunked() {
        assert_eq!(content_encoding_without_aws_chunked("aws-chunked"), None);
        assert_eq!(
            content_encoding_without_aws_chunked("aws-chunked,gzip").as_deref(),
            Some("gzip")
        );
        assert_eq!(
            content_encoding_without_aws_chunked("gzip, aws-chunked, br").as_deref(),
            Some("gzip,br")
        );
        assert_eq!(
            content_encoding_without_aws_chunked("gzip").as_deref(),
            Some("gzip")
        );
    }
}
