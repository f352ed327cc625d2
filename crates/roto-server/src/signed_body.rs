//! The body half of `--verify-signatures`, for bodies streamed to their operation (S3's
//! uploads): what the signed head promised about the body is checked as the bytes pass,
//! and a broken promise ends the stream with S3's error, which the operation answers.
//!
//! Two promises: a hex `x-amz-content-sha256` (the body must hash to it:
//! `XAmzContentSHA256Mismatch`), and the signed `aws-chunked` framings, whose every chunk
//! signs the one before it from the seed signature in `Authorization`, and whose trailer
//! signature signs the last chunk's and the trailers (`SignatureDoesNotMatch`). The bytes
//! are passed on unchanged: the operation de-frames them and checks the checksums itself.
//! A body whose framing is broken is left to the operation's own decoder to refuse.

use std::pin::Pin;
use std::task::{Context, Poll};

use bytes::Bytes;
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::BodyExt;
use roto_chunked::{ChunkedDecoder, ChunkedKind, Event};
use roto_core::dispatch::Body;
use roto_core::signature::{ChunkChain, Link};
use roto_core::AwsError;
use sha2::{Digest, Sha256};

/// What a streamed body must still prove once its head's signature holds.
pub enum Proof {
    /// Its SHA-256 is this (hex, as declared).
    Sha256(String),
    /// Its chunks (and trailer, where the framing has one) carry this chain's signatures.
    Chunks {
        /// The chain from the seed signature.
        chain: ChunkChain,
        /// The framing.
        kind: ChunkedKind,
        /// The access key, which a refusal names.
        key: String,
    },
}

impl Proof {
    /// The body, checked as it streams.
    pub fn check(self, body: Body) -> Body {
        let state = match self {
            Proof::Sha256(declared) => State::Hash {
                declared,
                hasher: Sha256::new(),
            },
            Proof::Chunks { chain, kind, key } => State::Chunks(Box::new(Chunks {
                chain,
                decoder: Some(ChunkedDecoder::new(kind)),
                key,
                pending: None,
                hasher: Sha256::new(),
                failed: None,
            })),
        };
        Checked { inner: body, state }.boxed()
    }
}

enum State {
    Hash {
        declared: String,
        hasher: Sha256,
    },
    Chunks(Box<Chunks>),
    /// Nothing more to check (proved, refused, or framing the operation will refuse).
    Done,
}

struct Chunks {
    chain: ChunkChain,
    /// `None` once the framing broke: the operation's decoder refuses the body.
    decoder: Option<ChunkedDecoder>,
    key: String,
    /// The signature of the chunk whose data is being read.
    pending: Option<String>,
    hasher: Sha256,
    failed: Option<AwsError>,
}

impl Chunks {
    fn feed(&mut self, data: &[u8]) -> Result<(), AwsError> {
        let Some(decoder) = self.decoder.as_mut() else {
            return Ok(());
        };
        let Chunks {
            chain,
            key,
            pending,
            hasher,
            failed,
            ..
        } = self;
        let decoded = decoder.decode_events(data, |event| match event {
            Event::Data(range) => hasher.update(&data[range]),
            Event::Chunk { signature } => {
                if let Some(claimed) = pending.take() {
                    let link = chain.chunk(&hasher.finalize_reset());
                    if failed.is_none() {
                        *failed = refuse(key, &claimed, &link);
                    }
                }
                *pending = Some(signature.unwrap_or_default().to_string());
            }
        });
        if decoded.is_err() {
            self.decoder = None;
        }
        self.failed.take().map_or(Ok(()), Err)
    }

    /// At the body's end: the final chunk's signature, then the trailer's.
    fn finish(&mut self) -> Result<(), AwsError> {
        let Some(decoder) = self.decoder.take() else {
            return Ok(());
        };
        let kind = decoder.kind();
        let Ok(trailers) = decoder.finish() else {
            return Ok(());
        };
        if let Some(claimed) = self.pending.take() {
            let link = self.chain.chunk(&self.hasher.finalize_reset());
            if let Some(error) = refuse(&self.key, &claimed, &link) {
                return Err(error);
            }
        }
        if kind.has_trailer() {
            let link = self.chain.trailer(&trailers.canonical());
            let claimed = trailers.signature().unwrap_or_default();
            if let Some(error) = refuse(&self.key, claimed, &link) {
                return Err(error);
            }
        }
        Ok(())
    }
}

/// S3's refusal of a chunk or trailer signature that is not the expected one.
fn refuse(key: &str, claimed: &str, link: &Link) -> Option<AwsError> {
    let holds = roto_core::signature::same(&link.signature, claimed);
    (!holds).then(|| roto_core::signature::s3_mismatch(key, claimed, &link.to_sign, None))
}

/// S3's refusal of a body that does not hash to its `x-amz-content-sha256`.
pub fn sha256_mismatch(declared: &str, computed: &str) -> AwsError {
    AwsError::new(
        "XAmzContentSHA256Mismatch",
        "The provided 'x-amz-content-sha256' header does not match what was computed.",
    )
    .with_status(400)
    .with_field("ClientComputedContentSHA256", declared)
    .with_field("S3ComputedContentSHA256", computed)
}

struct Checked {
    inner: Body,
    state: State,
}

impl Checked {
    fn on_data(&mut self, data: &[u8]) -> Result<(), AwsError> {
        match &mut self.state {
            State::Hash { hasher, .. } => hasher.update(data),
            State::Chunks(chunks) => chunks.feed(data)?,
            State::Done => {}
        }
        Ok(())
    }

    fn on_end(&mut self) -> Result<(), AwsError> {
        match std::mem::replace(&mut self.state, State::Done) {
            State::Hash { declared, hasher } => {
                let computed = hex::encode(hasher.finalize());
                match computed.eq_ignore_ascii_case(&declared) {
                    true => Ok(()),
                    false => Err(sha256_mismatch(&declared, &computed)),
                }
            }
            State::Chunks(mut chunks) => chunks.finish(),
            State::Done => Ok(()),
        }
    }
}

impl HttpBody for Checked {
    type Data = Bytes;
    type Error = std::io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, std::io::Error>>> {
        let this = self.get_mut();
        let polled = Pin::new(&mut this.inner).poll_frame(cx);
        let outcome = match &polled {
            Poll::Ready(Some(Ok(frame))) => match frame.data_ref() {
                Some(data) => this.on_data(data),
                None => Ok(()),
            },
            Poll::Ready(None) => this.on_end(),
            _ => Ok(()),
        };
        match outcome {
            Ok(()) => polled,
            Err(error) => {
                this.state = State::Done;
                Poll::Ready(Some(Err(error.into_body_error())))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        matches!(self.state, State::Done) && self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}
