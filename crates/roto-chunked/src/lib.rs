//! Decoding of S3 `aws-chunked` request bodies, and the S3 checksum algorithms.
//!
//! # Why this crate exists
//!
//! Every current AWS SDK uploads S3 objects (PutObject, UploadPart) with *flexible
//! checksums*: instead of sending the payload as it is, the SDK wraps it in the
//! `aws-chunked` framing, a sequence of length-prefixed chunks optionally followed by
//! trailing headers that carry the checksum computed while streaming (for example
//! `x-amz-checksum-crc32`). boto3 and the AWS CLI over HTTPS send
//! `x-amz-content-sha256: STREAMING-UNSIGNED-PAYLOAD-TRAILER`; the Rust, JavaScript,
//! Java and Go SDKs send the signed variants (`STREAMING-AWS4-HMAC-SHA256-PAYLOAD`,
//! `…-PAYLOAD-TRAILER`) over plain HTTP. Before S3 can store an object it has to strip
//! that framing, and it must do so while the body streams in, since objects reach 5 GiB.
//!
//! The framing is a small, self-contained codec with many edge cases (SDKs differ on
//! whether the final CRLF is sent, on chunk extensions, on how the trailer section ends),
//! so it lives here, apart from the S3 service, with byte-exact fixtures for each format.
//! This crate knows nothing about HTTP types, S3 or the rest of Roto. Chunk and trailer
//! signatures are parsed and reported ([`ChunkedDecoder::decode_events`],
//! [`Trailers::signature`]), not verified: verifying needs the caller's secret.
//!
//! # How to use it
//!
//! 1. Choose the framing from the request headers with [`ChunkedKind::from_headers`];
//!    `None` means the body is not `aws-chunked` and is the payload as it is.
//! 2. Create a [`ChunkedDecoder`], passing `x-amz-decoded-content-length` when the
//!    request has it so that a body of the wrong length is rejected.
//! 3. Feed each piece of the body, split anywhere, to [`ChunkedDecoder::decode`] (which
//!    appends payload bytes to a `Vec`) or [`ChunkedDecoder::decode_ranges`] (which
//!    reports where the payload lies in the input, for zero-copy slicing).
//! 4. Call [`ChunkedDecoder::finish`] at the end of the body: it fails if the body ended
//!    early and otherwise returns the [`Trailers`], whose checksum the caller compares
//!    with one computed over the payload by a [`Checksummer`].
//!
//! ```
//! use roto_chunked::{ChecksumAlgorithm, ChunkedDecoder, ChunkedKind};
//!
//! let kind = ChunkedKind::from_headers(Some("STREAMING-UNSIGNED-PAYLOAD-TRAILER"), None)
//!     .expect("an aws-chunked body");
//! let mut decoder = ChunkedDecoder::new(kind).with_decoded_length(11);
//! let mut payload = Vec::new();
//! // The body as boto3 sends it, arriving in two pieces split at an arbitrary byte.
//! decoder.decode(b"b\r\nhello w", &mut payload)?;
//! decoder.decode(b"orld\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n", &mut payload)?;
//! let trailers = decoder.finish()?;
//! assert_eq!(payload, b"hello world");
//!
//! let (algorithm, value) = trailers.checksum().expect("a checksum trailer");
//! assert_eq!(algorithm, ChecksumAlgorithm::Crc32);
//! assert_eq!(algorithm.checksum_base64(&payload), value);
//! # Ok::<(), roto_chunked::ChunkedError>(())
//! ```
//!
//! Memory stays bounded whatever the body size: payload bytes pass straight through,
//! and only a chunk-size line or a trailer line (at most [`MAX_LINE_LEN`] bytes) and the
//! trailers themselves (at most [`MAX_TRAILERS`]) are held.

#![forbid(unsafe_code)]
#![warn(missing_docs)]

mod checksum;
mod decoder;
mod error;
mod kind;

pub use checksum::{ChecksumAlgorithm, Checksummer};
pub use decoder::{ChunkedDecoder, Event, Trailers, MAX_LINE_LEN, MAX_TRAILERS};
pub use error::ChunkedError;
pub use kind::{content_encoding_without_aws_chunked, ChunkedKind};
