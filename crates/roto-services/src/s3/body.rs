//! Object bodies: request bodies streamed into blob files, response bodies streamed out.
//!
//! An upload is read frame by frame, de-framed by `roto_chunked` when it is `aws-chunked`,
//! and written to a new blob while its MD5 and its S3 checksum are computed, so memory
//! stays flat whatever the size. The digests the client declared (`Content-MD5`, an
//! `x-amz-checksum-*` header or trailer) are checked at the end; on any failure the
//! partial blob is dropped, which removes it.

use std::io;
use std::pin::Pin;
use std::task::{Context as TaskContext, Poll};

use base64::Engine;
use bytes::Bytes;
use http::HeaderMap;
use http_body::{Body as HttpBody, Frame, SizeHint};
use http_body_util::BodyExt;
use md5::{Digest, Md5};
use roto_chunked::{ChecksumAlgorithm, ChunkedDecoder, ChunkedError, ChunkedKind};
use roto_core::dispatch::Body;
use roto_core::store::{FinishedBlob, Store};
use roto_core::{AwsError, AwsResult};
use tokio::io::{AsyncRead, ReadBuf};

use super::errors;

/// A stored upload: its blob and digests.
#[derive(Debug)]
pub(crate) struct Upload {
    /// The finished blob, saved with the row that refers to it.
    pub blob: FinishedBlob,
    /// The payload's length.
    pub size: u64,
    /// The payload's MD5, hex.
    pub md5_hex: String,
    /// The S3 checksum kept with the object.
    pub checksum: (ChecksumAlgorithm, String),
    /// The algorithm the request named (by header, trailer or SDK header), if any.
    pub declared: Option<ChecksumAlgorithm>,
}

fn header<'a>(headers: &'a HeaderMap, name: &str) -> Option<&'a str> {
    headers
        .get(name)
        .and_then(|v| v.to_str().ok())
        .map(str::trim)
}

/// What the request declares about its body, read before the body is.
struct Expected {
    md5: Option<(String, Vec<u8>)>,
    checksum_header: Option<(ChecksumAlgorithm, Vec<u8>)>,
    trailer: Option<ChecksumAlgorithm>,
    algorithm: ChecksumAlgorithm,
    declared: Option<ChecksumAlgorithm>,
    chunked: Option<ChunkedKind>,
    decoded_length: Option<u64>,
}

fn unsupported_algorithm() -> AwsError {
    errors::invalid_request(
        "Checksum algorithm provided is unsupported. Please try again with any of the valid types: [CRC32, CRC32C, CRC64NVME, SHA1, SHA256]",
    )
}

/// Refuses a body of unknown length (`Transfer-Encoding: chunked` with no `Content-Length`)
/// unless it is `aws-chunked` with its `x-amz-decoded-content-length`, as S3 does.
fn check_length_known(headers: &HeaderMap) -> AwsResult<()> {
    let aws_chunked = ChunkedKind::from_headers(
        header(headers, "x-amz-content-sha256"),
        header(headers, "content-encoding"),
    )
    .is_some();
    let declared = ["content-length", "x-amz-decoded-content-length"]
        .iter()
        .any(|name| headers.contains_key(*name));
    if headers.contains_key("transfer-encoding") && !declared && !aws_chunked {
        return Err(errors::header_not_implemented("Transfer-Encoding"));
    }
    Ok(())
}

impl Expected {
    fn from_headers(headers: &HeaderMap, default: ChecksumAlgorithm) -> AwsResult<Expected> {
        check_length_known(headers)?;
        let md5 = match header(headers, "content-md5") {
            Some(text) => match base64::engine::general_purpose::STANDARD.decode(text) {
                Ok(bytes) if bytes.len() == 16 => Some((text.to_string(), bytes)),
                _ => return Err(errors::invalid_digest(text)),
            },
            None => None,
        };
        let mut declared = Vec::new();
        for alg in ChecksumAlgorithm::ALL {
            if let Some(text) = header(headers, alg.header_name()) {
                let bytes = alg.decode_base64(text).ok_or_else(|| {
                    errors::invalid_request(format!(
                        "Value for {} header is invalid.",
                        alg.header_name()
                    ))
                })?;
                declared.push((alg, bytes));
            }
        }
        if declared.len() > 1 {
            return Err(errors::invalid_request(
                "Expecting a single x-amz-checksum- header. Multiple checksum Types are not allowed.",
            ));
        }
        let checksum_header = declared.pop();
        let trailer = match header(headers, "x-amz-trailer") {
            Some(name) => {
                Some(ChecksumAlgorithm::from_header_name(name).ok_or_else(unsupported_algorithm)?)
            }
            None => None,
        };
        let sdk = match header(headers, "x-amz-sdk-checksum-algorithm") {
            Some(name) => {
                Some(ChecksumAlgorithm::from_name(name).ok_or_else(unsupported_algorithm)?)
            }
            None => None,
        };
        let named = checksum_header.as_ref().map(|(a, _)| *a).or(trailer);
        if let (Some(sdk), Some(named)) = (sdk, named) {
            if sdk != named {
                return Err(errors::invalid_request(format!(
                    "Value for x-amz-sdk-checksum-algorithm header is invalid. Expected {} but got {}",
                    named.name(),
                    sdk.name()
                )));
            }
        }
        let chunked = ChunkedKind::from_headers(
            header(headers, "x-amz-content-sha256"),
            header(headers, "content-encoding"),
        );
        let decoded_length = match header(headers, "x-amz-decoded-content-length") {
            Some(text) => Some(text.parse().map_err(|_| {
                errors::invalid_argument(
                    "x-amz-decoded-content-length is not a number",
                    "x-amz-decoded-content-length",
                    text,
                )
            })?),
            None => None,
        };
        Ok(Expected {
            md5,
            checksum_header,
            trailer,
            algorithm: named.or(sdk).unwrap_or(default),
            declared: named.or(sdk),
            chunked,
            decoded_length,
        })
    }
}

fn chunked_error(e: ChunkedError) -> AwsError {
    match e {
        ChunkedError::MalformedTrailer { .. } => errors::malformed_trailer(),
        ChunkedError::Malformed { .. }
        | ChunkedError::Incomplete { .. }
        | ChunkedError::DecodedLengthMismatch { .. } => errors::incomplete_body(),
    }
}

/// Streams a request body (or an in-memory one, for in-process callers) into a new blob,
/// checking every digest the request declares; the checksum kept is of the declared
/// algorithm, else of `default`.
pub(crate) async fn receive(
    store: &Store,
    headers: &HeaderMap,
    body: Option<Body>,
    inline: Option<Vec<u8>>,
    default: ChecksumAlgorithm,
) -> AwsResult<Upload> {
    let expected = Expected::from_headers(headers, default)?;
    let mut writer = store.create_blob()?;
    let mut md5 = Md5::new();
    let mut checksummer = expected.algorithm.checksummer();
    let mut decoder = expected.chunked.map(|kind| {
        let mut d = ChunkedDecoder::new(kind);
        d.set_decoded_length(expected.decoded_length);
        d
    });
    let mut decoded = Vec::new();
    let mut consume = |bytes: &[u8], writer: &mut roto_core::store::BlobWriter| -> AwsResult<()> {
        let payload: &[u8] = match decoder.as_mut() {
            Some(d) => {
                decoded.clear();
                d.decode(bytes, &mut decoded).map_err(chunked_error)?;
                &decoded
            }
            None => bytes,
        };
        md5.update(payload);
        checksummer.update(payload);
        writer.write(payload)?;
        Ok(())
    };
    match (body, inline) {
        (Some(mut body), _) => {
            while let Some(frame) = body.frame().await {
                let frame = frame
                    .map_err(|e| AwsError::carried(&e).unwrap_or_else(errors::incomplete_body))?;
                if let Ok(data) = frame.into_data() {
                    consume(&data, &mut writer)?;
                }
            }
        }
        (None, Some(bytes)) => consume(&bytes, &mut writer)?,
        (None, None) => {}
    }
    let trailer_checksum = match decoder {
        Some(d) => {
            let trailers = d.finish().map_err(chunked_error)?;
            match (expected.trailer, trailers.checksum()) {
                (Some(declared), Some((alg, value))) if alg == declared => Some((
                    alg,
                    alg.decode_base64(value).ok_or_else(|| {
                        errors::invalid_request(format!(
                            "Value for {} trailing header is invalid.",
                            alg.header_name()
                        ))
                    })?,
                )),
                (Some(_), _) => return Err(errors::malformed_trailer()),
                (None, _) => None,
            }
        }
        None if expected.trailer.is_some() => return Err(errors::malformed_trailer()),
        None => None,
    };
    let md5 = md5.finalize();
    if let Some((text, bytes)) = &expected.md5 {
        if bytes.as_slice() != md5.as_slice() {
            let calculated = base64::engine::general_purpose::STANDARD.encode(md5);
            return Err(errors::bad_md5(text, &calculated));
        }
    }
    let computed = checksummer.finalize();
    if let Some((alg, value)) = expected.checksum_header.or(trailer_checksum) {
        if value != computed {
            return Err(errors::bad_checksum(alg.name()));
        }
    }
    let size = writer.len();
    let blob = if writer.is_inline() {
        writer.finish_in_place()?
    } else {
        tokio::task::spawn_blocking(move || writer.finish_in_place())
            .await
            .map_err(|e| AwsError::internal(format!("blob writer panicked: {e}")))??
    };
    Ok(Upload {
        blob,
        size,
        md5_hex: hex::encode(md5),
        checksum: (
            expected.algorithm,
            base64::engine::general_purpose::STANDARD.encode(computed),
        ),
        declared: expected.declared,
    })
}

/// How much of a blob one response frame carries.
const FRAME: usize = 64 * 1024;

/// A blob file streamed as a response body, `remaining` bytes from where the file is.
pub(crate) struct FileBody {
    file: tokio::fs::File,
    remaining: u64,
    buf: Vec<u8>,
}

impl FileBody {
    /// Streams `len` bytes of an open file.
    pub(crate) fn new(file: std::fs::File, len: u64) -> FileBody {
        FileBody {
            file: tokio::fs::File::from_std(file),
            remaining: len,
            buf: Vec::new(),
        }
    }

    /// As the boxed body a `Response` carries.
    pub(crate) fn boxed(self) -> Body {
        BodyExt::boxed(self)
    }
}

impl HttpBody for FileBody {
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut TaskContext<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.get_mut();
        if this.remaining == 0 {
            return Poll::Ready(None);
        }
        let want = usize::try_from(this.remaining).map_or(FRAME, |r| r.min(FRAME));
        this.buf.resize(want, 0);
        let mut read = ReadBuf::new(&mut this.buf);
        match Pin::new(&mut this.file).poll_read(cx, &mut read) {
            Poll::Pending => Poll::Pending,
            Poll::Ready(Err(e)) => Poll::Ready(Some(Err(e))),
            Poll::Ready(Ok(())) => {
                let filled = read.filled();
                if filled.is_empty() {
                    return Poll::Ready(Some(Err(io::Error::from(io::ErrorKind::UnexpectedEof))));
                }
                this.remaining -= filled.len() as u64;
                Poll::Ready(Some(Ok(Frame::data(Bytes::copy_from_slice(filled)))))
            }
        }
    }

    fn is_end_stream(&self) -> bool {
        self.remaining == 0
    }

    fn size_hint(&self) -> SizeHint {
        SizeHint::with_exact(self.remaining)
    }
}

/// One source of a server-side copy or concatenation.
pub(crate) enum Piece {
    /// A blob already opened (under the store lock, by the caller), and the range of it.
    Open(roto_core::store::BlobReader, Option<(u64, u64)>),
    /// A blob by id, opened when its turn comes (a multipart upload's parts).
    Blob(String),
}

/// How much a copy reads at a time.
const COPY_CHUNK: usize = 1024 * 1024;

/// Writes the pieces, in order, into a new blob on a blocking thread, computing the MD5
/// (when `md5`: a multipart object's ETag needs none), the checksum of `algorithm` and,
/// per piece, the piece's own checksum. Memory stays at one chunk whatever the sizes.
pub(crate) async fn concat(
    env: std::sync::Arc<roto_core::Env>,
    pieces: Vec<Piece>,
    algorithm: ChecksumAlgorithm,
    md5: bool,
) -> AwsResult<(Upload, Vec<Vec<u8>>)> {
    tokio::task::spawn_blocking(move || concat_blocking(&env.store, pieces, algorithm, md5))
        .await
        .map_err(|e| AwsError::internal(format!("copy panicked: {e}")))?
}

fn concat_blocking(
    store: &Store,
    pieces: Vec<Piece>,
    algorithm: ChecksumAlgorithm,
    with_md5: bool,
) -> AwsResult<(Upload, Vec<Vec<u8>>)> {
    use roto_core::store::BlobReader;
    use std::io::{Read, Seek, SeekFrom};
    let mut writer = store.create_blob()?;
    let mut md5 = Md5::new();
    let mut whole = algorithm.checksummer();
    let mut per_piece = Vec::with_capacity(pieces.len());
    let mut buf = vec![0u8; COPY_CHUNK];
    for piece in pieces {
        let (reader, range) = match piece {
            Piece::Open(reader, range) => (reader, range),
            Piece::Blob(id) => {
                let reader = store
                    .with(|c| Ok::<_, AwsError>(store.open_blob(c, &id)))?
                    .map_err(|_| errors::no_such_upload("(removed during completion)"))?;
                (reader, None)
            }
        };
        let mut own = algorithm.checksummer();
        let mut feed = |bytes: &[u8], writer: &mut roto_core::store::BlobWriter| {
            if with_md5 {
                md5.update(bytes);
            }
            whole.update(bytes);
            own.update(bytes);
            writer.write(bytes)
        };
        match reader {
            BlobReader::Memory(bytes) => {
                let (first, last) = range.unwrap_or((0, (bytes.len() as u64).saturating_sub(1)));
                let start = usize::try_from(first)
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                let end = usize::try_from(last.saturating_add(1))
                    .unwrap_or(usize::MAX)
                    .min(bytes.len());
                if start < end {
                    feed(&bytes[start..end], &mut writer)?;
                }
            }
            BlobReader::File(mut file) => {
                let mut remaining = match range {
                    Some((first, last)) => {
                        file.seek(SeekFrom::Start(first))?;
                        last - first + 1
                    }
                    None => u64::MAX,
                };
                while remaining > 0 {
                    let want = usize::try_from(remaining).map_or(COPY_CHUNK, |r| r.min(COPY_CHUNK));
                    let n = file.read(&mut buf[..want])?;
                    if n == 0 {
                        break;
                    }
                    feed(&buf[..n], &mut writer)?;
                    remaining -= n as u64;
                }
            }
        }
        per_piece.push(own.finalize());
    }
    let size = writer.len();
    let blob = writer.finish_in_place()?;
    Ok((
        Upload {
            blob,
            size,
            md5_hex: hex::encode(md5.finalize()),
            checksum: (
                algorithm,
                base64::engine::general_purpose::STANDARD.encode(whole.finalize()),
            ),
            declared: None,
        },
        per_piece,
    ))
}

/// A response body of bytes held in memory (a torrent file, an annotation's payload).
pub(crate) fn memory_body(bytes: Vec<u8>) -> Body {
    http_body_util::Full::new(Bytes::from(bytes))
        .map_err(|never| match never {})
        .boxed()
}
