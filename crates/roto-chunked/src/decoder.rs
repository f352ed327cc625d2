//! The incremental `aws-chunked` decoder and the trailers it collects.
//!
//! The body is a sequence of chunks, each `<hex-size>[;ext[=value]]*\r\n<data>\r\n`,
//! ended by a zero-size chunk whose header line is followed by the trailer section:
//! `name:value\r\n` lines (in signed bodies the last is `x-amz-trailer-signature`),
//! then an empty line. The decoder is a state machine fed arbitrary slices; it copies
//! nothing but header and trailer lines.
//!
//! Leniency, exactly where real clients differ:
//! - the body may end right after the final chunk's header line or after the last
//!   trailer line, without the empty line (some SDKs never send the final CRLF);
//! - chunk extensions other than `chunk-signature` are ignored, as are spaces and tabs
//!   around the size, extensions, trailer names and values;
//! - unsigned kinds accept (and ignore) a `chunk-signature`, and any kind accepts
//!   trailers, declared or not; the trailer signature is optional.
//!
//! Strict where S3 is: each chunk's data must be followed by CRLF, lines end in CRLF,
//! a signed kind requires a well-formed `chunk-signature` on every chunk, and nothing
//! may follow the end of the body (the .NET SDK's old empty-body bug, a second zero
//! chunk, is rejected as S3 rejects it).

use crate::checksum::ChecksumAlgorithm;
use crate::error::ChunkedError;
use crate::kind::ChunkedKind;
use std::ops::Range;

/// The longest chunk-size or trailer line accepted, CRLF excluded. Real lines are under
/// 200 bytes (a size, a SigV4a signature); anything longer is an error, never buffered.
pub const MAX_LINE_LEN: usize = 4096;

/// The most trailers accepted in one body. S3 allows one checksum trailer; the margin is
/// for clients that send more, not for unbounded memory.
pub const MAX_TRAILERS: usize = 32;

const TRAILER_SIGNATURE: &str = "x-amz-trailer-signature";

/// What [`ChunkedDecoder::decode_events`] reports, in the order of the body.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Event<'a> {
    /// A chunk starts (the final, empty one too), with its `chunk-signature` if it has one.
    Chunk {
        /// The signature, hex, as sent.
        signature: Option<&'a str>,
    },
    /// Payload bytes, at this range of the input just given.
    Data(Range<usize>),
}

/// The trailing headers of an `aws-chunked` body, in the order they were sent.
///
/// Names are lower-cased; values have surrounding whitespace removed. The
/// `x-amz-trailer-signature` line is kept apart, in [`Trailers::signature`].
#[derive(Debug, Clone, Default, PartialEq, Eq)]
pub struct Trailers {
    fields: Vec<(String, String)>,
    signature: Option<String>,
}

impl Trailers {
    /// The value of the first trailer with this name (case-insensitive).
    pub fn get(&self, name: &str) -> Option<&str> {
        self.fields
            .iter()
            .find(|(n, _)| n.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
    }

    /// Every trailer as (lower-case name, value), in the order sent.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &str)> {
        self.fields.iter().map(|(n, v)| (n.as_str(), v.as_str()))
    }

    /// How many trailers there are (the trailer signature not counted).
    pub fn len(&self) -> usize {
        self.fields.len()
    }

    /// Whether there are no trailers (the trailer signature not counted).
    pub fn is_empty(&self) -> bool {
        self.fields.is_empty()
    }

    /// The `x-amz-trailer-signature` value (hex), if the body had one; the decoder does
    /// not verify it (see [`Trailers::canonical`]).
    pub fn signature(&self) -> Option<&str> {
        self.signature.as_deref()
    }

    /// The trailers as SigV4 signs them for `x-amz-trailer-signature`: `name:value\n` for
    /// each, sorted by name.
    pub fn canonical(&self) -> String {
        let mut fields: Vec<&(String, String)> = self.fields.iter().collect();
        fields.sort();
        fields
            .iter()
            .map(|(name, value)| format!("{name}:{value}\n"))
            .collect()
    }

    /// The first `x-amz-checksum-*` trailer naming a known algorithm, with its base64
    /// value as sent (the caller checks it with [`ChecksumAlgorithm::decode_base64`]).
    pub fn checksum(&self) -> Option<(ChecksumAlgorithm, &str)> {
        self.fields.iter().find_map(|(name, value)| {
            ChecksumAlgorithm::from_header_name(name).map(|alg| (alg, value.as_str()))
        })
    }
}

#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum State {
    /// Reading a chunk-size line into `line`.
    ChunkHeader,
    /// Passing through the current chunk's data, `remaining` bytes still to come.
    ChunkData { remaining: u64 },
    /// Expecting the CR that ends a chunk's data.
    ChunkDataCr,
    /// Expecting the LF that ends a chunk's data.
    ChunkDataLf,
    /// After the final chunk: reading a trailer line, or the empty line that ends the body.
    Trailer,
    /// The body is complete; nothing more may come.
    Done,
}

/// Which part of the body a line belongs to, for the error it raises.
#[derive(Clone, Copy)]
enum Section {
    Chunks,
    Trailers,
}

impl Section {
    fn error(self, offset: u64, reason: &'static str) -> ChunkedError {
        match self {
            Section::Chunks => ChunkedError::Malformed { offset, reason },
            Section::Trailers => ChunkedError::MalformedTrailer { offset, reason },
        }
    }
}

/// An incremental decoder of one `aws-chunked` body.
///
/// Feed the body in pieces of any size to [`decode`](Self::decode) or
/// [`decode_ranges`](Self::decode_ranges), then call [`finish`](Self::finish). After an
/// error every later call returns the same error.
#[derive(Debug, Clone)]
pub struct ChunkedDecoder {
    kind: ChunkedKind,
    state: State,
    /// The partial chunk-size or trailer line, CR included once seen.
    line: Vec<u8>,
    /// Offset in the encoded body of the first byte of the next input.
    offset: u64,
    /// Offset in the encoded body where `line` starts.
    line_start: u64,
    decoded_len: u64,
    expected_len: Option<u64>,
    trailers: Trailers,
    error: Option<ChunkedError>,
}

impl ChunkedDecoder {
    /// A decoder for a body of this kind, at its first byte.
    pub fn new(kind: ChunkedKind) -> ChunkedDecoder {
        ChunkedDecoder {
            kind,
            state: State::ChunkHeader,
            line: Vec::new(),
            offset: 0,
            line_start: 0,
            decoded_len: 0,
            expected_len: None,
            trailers: Trailers::default(),
            error: None,
        }
    }

    /// Requires the payload to be exactly `len` bytes, the request's
    /// `x-amz-decoded-content-length`. A chunk that goes past it fails at once, a body
    /// that ends short of it fails in [`finish`](Self::finish).
    pub fn with_decoded_length(mut self, len: u64) -> ChunkedDecoder {
        self.set_decoded_length(Some(len));
        self
    }

    /// Sets (or, with `None`, clears) the required payload length; see
    /// [`with_decoded_length`](Self::with_decoded_length).
    pub fn set_decoded_length(&mut self, len: Option<u64>) {
        self.expected_len = len;
    }

    /// The kind of body being decoded.
    pub fn kind(&self) -> ChunkedKind {
        self.kind
    }

    /// How many payload bytes have been decoded so far.
    pub fn decoded_len(&self) -> u64 {
        self.decoded_len
    }

    /// Whether the body's end (the empty line after the trailers) has been decoded;
    /// nothing more may be fed after it.
    pub fn is_done(&self) -> bool {
        self.state == State::Done && self.error.is_none()
    }

    /// Decodes the next piece of the body, appending its payload bytes to `out`.
    pub fn decode(&mut self, input: &[u8], out: &mut Vec<u8>) -> Result<(), ChunkedError> {
        self.run(input, |event| {
            if let Event::Data(range) = event {
                out.extend_from_slice(&input[range]);
            }
        })
    }

    /// Decodes the next piece of the body, reporting each chunk's start (with its
    /// signature) and where its payload bytes lie in `input`, in body order: what a caller
    /// verifying the chunk signatures needs.
    pub fn decode_events(
        &mut self,
        input: &[u8],
        on_event: impl FnMut(Event<'_>),
    ) -> Result<(), ChunkedError> {
        self.run(input, on_event)
    }

    /// Decodes the next piece of the body, appending to `ranges` where its payload bytes
    /// lie in `input` (so a caller holding `bytes::Bytes` can slice without copying).
    pub fn decode_ranges(
        &mut self,
        input: &[u8],
        ranges: &mut Vec<Range<usize>>,
    ) -> Result<(), ChunkedError> {
        self.run(input, |event| {
            if let Event::Data(range) = event {
                ranges.push(range);
            }
        })
    }

    /// Ends the body: returns its trailers, or the error if the body was broken, ended
    /// early or carried a payload of the wrong length.
    pub fn finish(self) -> Result<Trailers, ChunkedError> {
        if let Some(error) = self.error {
            return Err(error);
        }
        let complete = match self.state {
            State::Done => true,
            // The final CRLF is optional: the body may end where a trailer line (or the
            // empty line) would start.
            State::Trailer => self.line.is_empty(),
            _ => false,
        };
        if !complete {
            return Err(ChunkedError::Incomplete {
                decoded: self.decoded_len,
            });
        }
        self.check_length()?;
        Ok(self.trailers)
    }

    /// Decodes a whole body held in memory: the payload and the trailers.
    pub fn decode_all(mut self, body: &[u8]) -> Result<(Vec<u8>, Trailers), ChunkedError> {
        let mut payload = Vec::with_capacity(body.len());
        self.decode(body, &mut payload)?;
        let trailers = self.finish()?;
        Ok((payload, trailers))
    }

    fn run(&mut self, input: &[u8], mut emit: impl FnMut(Event<'_>)) -> Result<(), ChunkedError> {
        if let Some(error) = &self.error {
            return Err(error.clone());
        }
        match self.step_all(input, &mut emit) {
            Ok(()) => {
                self.offset += input.len() as u64;
                Ok(())
            }
            Err(error) => {
                self.error = Some(error.clone());
                Err(error)
            }
        }
    }

    fn step_all(
        &mut self,
        input: &[u8],
        emit: &mut impl FnMut(Event<'_>),
    ) -> Result<(), ChunkedError> {
        let mut pos = 0;
        while pos < input.len() {
            match self.state {
                State::ChunkHeader => {
                    if self.read_line(input, &mut pos, Section::Chunks)? {
                        self.end_chunk_header(emit)?;
                    }
                }
                State::ChunkData { remaining } => {
                    let available = input.len() - pos;
                    let take = usize::try_from(remaining).map_or(available, |r| r.min(available));
                    emit(Event::Data(pos..pos + take));
                    pos += take;
                    self.decoded_len += take as u64;
                    let remaining = remaining - take as u64;
                    self.state = if remaining == 0 {
                        State::ChunkDataCr
                    } else {
                        State::ChunkData { remaining }
                    };
                }
                State::ChunkDataCr | State::ChunkDataLf => {
                    let expected = if self.state == State::ChunkDataCr {
                        b'\r'
                    } else {
                        b'\n'
                    };
                    if input[pos] != expected {
                        return Err(ChunkedError::Malformed {
                            offset: self.offset + pos as u64,
                            reason: "chunk data not followed by CRLF",
                        });
                    }
                    pos += 1;
                    self.state = if expected == b'\r' {
                        State::ChunkDataLf
                    } else {
                        State::ChunkHeader
                    };
                }
                State::Trailer => {
                    if self.read_line(input, &mut pos, Section::Trailers)? {
                        self.end_trailer_line()?;
                    }
                }
                State::Done => {
                    return Err(ChunkedError::MalformedTrailer {
                        offset: self.offset + pos as u64,
                        reason: "data after the end of the body",
                    });
                }
            }
        }
        Ok(())
    }

    /// Moves bytes of the current line from `input` into `self.line`. Returns true once
    /// the line is complete, its CRLF consumed and stripped.
    fn read_line(
        &mut self,
        input: &[u8],
        pos: &mut usize,
        section: Section,
    ) -> Result<bool, ChunkedError> {
        if self.line.is_empty() {
            self.line_start = self.offset + *pos as u64;
        }
        let rest = &input[*pos..];
        let (piece, complete) = match rest.iter().position(|&b| b == b'\n') {
            Some(lf) => (&rest[..lf], true),
            None => (rest, false),
        };
        // The line may hold MAX_LINE_LEN bytes and its CR.
        if self.line.len() + piece.len() > MAX_LINE_LEN + 1 {
            return Err(section.error(self.line_start, "line too long"));
        }
        self.line.extend_from_slice(piece);
        *pos += piece.len();
        if !complete {
            return Ok(false);
        }
        *pos += 1; // the LF
        if self.line.pop() != Some(b'\r') {
            return Err(section.error(self.line_start, "line not ended by CRLF"));
        }
        if self.line.len() > MAX_LINE_LEN {
            return Err(section.error(self.line_start, "line too long"));
        }
        if !self
            .line
            .iter()
            .all(|&b| b == b'\t' || (b' '..=b'~').contains(&b))
        {
            return Err(section.error(self.line_start, "control or non-ASCII byte in line"));
        }
        Ok(true)
    }

    fn end_chunk_header(&mut self, emit: &mut impl FnMut(Event<'_>)) -> Result<(), ChunkedError> {
        let at = self.line_start;
        let (size, signature) = parse_chunk_header(&self.line, self.kind)
            .map_err(|reason| ChunkedError::Malformed { offset: at, reason })?;
        emit(Event::Chunk { signature });
        self.line.clear();
        if size == 0 {
            self.state = State::Trailer;
            return Ok(());
        }
        if let Some(expected) = self.expected_len {
            let actual = self.decoded_len.saturating_add(size);
            if actual > expected {
                return Err(ChunkedError::DecodedLengthMismatch { expected, actual });
            }
        }
        self.state = State::ChunkData { remaining: size };
        Ok(())
    }

    fn end_trailer_line(&mut self) -> Result<(), ChunkedError> {
        let at = self.line_start;
        let malformed = |reason| ChunkedError::MalformedTrailer { offset: at, reason };
        if self.line.is_empty() {
            self.state = State::Done;
            return self.check_length();
        }
        // The line is printable ASCII (checked by read_line), so this cannot fail.
        let line = std::str::from_utf8(&self.line).map_err(|_| malformed("not ASCII"))?;
        let (name, value) = line
            .split_once(':')
            .ok_or_else(|| malformed("trailer line without a colon"))?;
        let name = name.trim_matches(is_blank);
        let value = value.trim_matches(is_blank);
        if name.is_empty() || !name.bytes().all(is_token_byte) {
            return Err(malformed("bad trailer name"));
        }
        if name.eq_ignore_ascii_case(TRAILER_SIGNATURE) {
            if self.trailers.signature.is_some() {
                return Err(malformed("repeated trailer signature"));
            }
            if !is_signature(value, self.kind) {
                return Err(malformed("bad trailer signature"));
            }
            self.trailers.signature = Some(value.to_owned());
        } else {
            if self.trailers.signature.is_some() {
                return Err(malformed("trailer after the trailer signature"));
            }
            if self.trailers.fields.len() == MAX_TRAILERS {
                return Err(malformed("too many trailers"));
            }
            self.trailers
                .fields
                .push((name.to_ascii_lowercase(), value.to_owned()));
        }
        self.line.clear();
        Ok(())
    }

    fn check_length(&self) -> Result<(), ChunkedError> {
        match self.expected_len {
            Some(expected) if expected != self.decoded_len => {
                Err(ChunkedError::DecodedLengthMismatch {
                    expected,
                    actual: self.decoded_len,
                })
            }
            _ => Ok(()),
        }
    }
}

/// Parses `<hex-size>[;name[=value]]*` (CRLF already stripped) into the chunk size and its
/// `chunk-signature`.
fn parse_chunk_header(line: &[u8], kind: ChunkedKind) -> Result<(u64, Option<&str>), &'static str> {
    let line = std::str::from_utf8(line).map_err(|_| "chunk header is not ASCII")?;
    let mut parts = line.split(';');
    let size = parts.next().unwrap_or_default().trim_matches(is_blank);
    if size.is_empty() || !size.bytes().all(|b| b.is_ascii_hexdigit()) {
        return Err("bad chunk size");
    }
    let digits = size.trim_start_matches('0');
    if digits.len() > 16 {
        return Err("chunk size too large");
    }
    let size = if digits.is_empty() {
        0
    } else {
        u64::from_str_radix(digits, 16).map_err(|_| "bad chunk size")?
    };
    let mut signature = None;
    for extension in parts {
        let (name, value) = extension.split_once('=').unwrap_or((extension, ""));
        if name
            .trim_matches(is_blank)
            .eq_ignore_ascii_case("chunk-signature")
        {
            if signature.is_some() {
                return Err("repeated chunk-signature");
            }
            signature = Some(value.trim_matches(is_blank));
        }
    }
    if kind.is_signed() {
        match signature {
            None => return Err("missing chunk-signature"),
            Some(value) if !is_signature(value, kind) => return Err("bad chunk-signature"),
            Some(_) => {}
        }
    }
    Ok((size, signature))
}

/// Whether `value` looks like a signature of this kind: 64 hex digits for SigV4, an
/// even, non-zero number of hex digits (a DER ECDSA signature) for SigV4a. Unsigned kinds
/// accept any hex.
fn is_signature(value: &str, kind: ChunkedKind) -> bool {
    let hex = !value.is_empty() && value.bytes().all(|b| b.is_ascii_hexdigit());
    if kind.is_hmac() {
        hex && value.len() == 64
    } else if kind.is_signed() {
        hex && value.len() % 2 == 0
    } else {
        hex
    }
}

fn is_blank(c: char) -> bool {
    c == ' ' || c == '\t'
}

/// An HTTP token character (RFC 9110 `tchar`).
fn is_token_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b"!#$%&'*+-.^_`|~".contains(&b)
}

#[cfg(test)]
mod tests;
