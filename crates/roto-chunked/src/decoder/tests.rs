//! Byte-exact fixtures of each framing as the SDKs send it, fed whole, split at every
//! position and one byte at a time, plus the malformed bodies a decoder must reject.

use super::*;

// Signatures from the AWS "Signature Calculations for the Authorization Header:
// Transferring Payload in Multiple Chunks" examples. They are never verified.
const SIG_1: &str = "ad80c730a21e5b8d04586a2213dd63b9a0e99e0e2307b0ade35a65485a288648";
const SIG_2: &str = "0055627c9e194cb4542bae2aa5492e3c1575bbb81b612b7d234b86a503ef5497";
const SIG_FINAL: &str = "b6c6ea8a5354eaf15b3cb7646744f4275b71ea724fed81ceb9323e279d449df9";
const SIG_TRAILER: &str = "63bddb248ad2590c92712055f51b8e78ab024eead08276b24f010b0efd74843f";
/// A hex-encoded DER ECDSA P-256 signature (72 bytes), as SigV4a sends.
const SIG_ECDSA: &str =
    "3046022100a8d1f0a1e4c5b6d7e8f90a1b2c3d4e5f60718293a4b5c6d7e8f90a1b2c3d4e5f\
022100b1c2d3e4f5061728394a5b6c7d8e9f00112233445566778899aabbccddeeff00";

struct Fixture {
    name: &'static str,
    kind: ChunkedKind,
    body: Vec<u8>,
    payload: Vec<u8>,
    trailers: Vec<(&'static str, &'static str)>,
    trailer_signature: Option<&'static str>,
}

fn cat(parts: &[&[u8]]) -> Vec<u8> {
    parts.concat()
}

fn fixtures() -> Vec<Fixture> {
    vec![
        Fixture {
            name: "boto3 over HTTPS: unsigned chunks, crc32 trailer",
            kind: ChunkedKind::UnsignedWithTrailer,
            body: b"b\r\nhello world\r\n0\r\nx-amz-checksum-crc32:DUoRhQ==\r\n\r\n".to_vec(),
            payload: b"hello world".to_vec(),
            trailers: vec![("x-amz-checksum-crc32", "DUoRhQ==")],
            trailer_signature: None,
        },
        Fixture {
            name: "boto3, several chunks of varying size",
            kind: ChunkedKind::UnsignedWithTrailer,
            body: b"5\r\nhello\r\n1\r\n \r\na\r\nbrave new \r\n5\r\nworld\r\n\
0\r\nx-amz-checksum-crc32:mJfEqg==\r\n\r\n"
                .to_vec(),
            payload: b"hello brave new world".to_vec(),
            trailers: vec![("x-amz-checksum-crc32", "mJfEqg==")],
            trailer_signature: None,
        },
        Fixture {
            name: "boto3, empty object",
            kind: ChunkedKind::UnsignedWithTrailer,
            body: b"0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n".to_vec(),
            payload: Vec::new(),
            trailers: vec![("x-amz-checksum-crc32", "AAAAAA==")],
            trailer_signature: None,
        },
        Fixture {
            name: "JS SDK over HTTPS: unsigned chunks, crc64nvme trailer, no final CRLF",
            kind: ChunkedKind::UnsignedWithTrailer,
            body: b"b\r\nhello world\r\n0\r\nx-amz-checksum-crc64nvme:jSnVw/bqjr4=\r\n".to_vec(),
            payload: b"hello world".to_vec(),
            trailers: vec![("x-amz-checksum-crc64nvme", "jSnVw/bqjr4=")],
            trailer_signature: None,
        },
        Fixture {
            name: "signed chunks (aws-sdk-rust, Java v1)",
            kind: ChunkedKind::Signed,
            body: cat(&[
                b"b;chunk-signature=",
                SIG_1.as_bytes(),
                b"\r\nhello world\r\n0;chunk-signature=",
                SIG_FINAL.as_bytes(),
                b"\r\n\r\n",
            ]),
            payload: b"hello world".to_vec(),
            trailers: vec![],
            trailer_signature: None,
        },
        Fixture {
            name: "signed chunks, no final CRLF",
            kind: ChunkedKind::Signed,
            body: cat(&[
                b"5;chunk-signature=",
                SIG_1.as_bytes(),
                b"\r\nhello\r\n6;chunk-signature=",
                SIG_2.as_bytes(),
                b"\r\n world\r\n0;chunk-signature=",
                SIG_FINAL.as_bytes(),
                b"\r\n",
            ]),
            payload: b"hello world".to_vec(),
            trailers: vec![],
            trailer_signature: None,
        },
        Fixture {
            name: "signed, empty object",
            kind: ChunkedKind::Signed,
            body: cat(&[b"0;chunk-signature=", SIG_FINAL.as_bytes(), b"\r\n\r\n"]),
            payload: Vec::new(),
            trailers: vec![],
            trailer_signature: None,
        },
        Fixture {
            name: "signed chunks with a signed crc32c trailer (aws-sdk-rust, JS over HTTP)",
            kind: ChunkedKind::SignedWithTrailer,
            body: cat(&[
                b"b;chunk-signature=",
                SIG_1.as_bytes(),
                b"\r\nhello world\r\n0;chunk-signature=",
                SIG_FINAL.as_bytes(),
                b"\r\nx-amz-checksum-crc32c:yZRlqg==\r\nx-amz-trailer-signature:",
                SIG_TRAILER.as_bytes(),
                b"\r\n\r\n",
            ]),
            payload: b"hello world".to_vec(),
            trailers: vec![("x-amz-checksum-crc32c", "yZRlqg==")],
            trailer_signature: Some(SIG_TRAILER),
        },
        Fixture {
            name: "SigV4a chunks with a trailer",
            kind: ChunkedKind::SignedEcdsaWithTrailer,
            body: cat(&[
                b"b;chunk-signature=",
                SIG_ECDSA.as_bytes(),
                b"\r\nhello world\r\n0;chunk-signature=",
                SIG_ECDSA.as_bytes(),
                b"\r\nx-amz-checksum-sha256:uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=\r\n\
x-amz-trailer-signature:",
                SIG_ECDSA.as_bytes(),
                b"\r\n\r\n",
            ]),
            payload: b"hello world".to_vec(),
            trailers: vec![(
                "x-amz-checksum-sha256",
                "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek=",
            )],
            trailer_signature: Some(SIG_ECDSA),
        },
        Fixture {
            name: "Content-Encoding aws-chunked with UNSIGNED-PAYLOAD, no trailer",
            kind: ChunkedKind::Unsigned,
            body: b"5\r\nhello\r\n6\r\n world\r\n0\r\n\r\n".to_vec(),
            payload: b"hello world".to_vec(),
            trailers: vec![],
            trailer_signature: None,
        },
        Fixture {
            name: "unknown extensions, blanks and a chunk-signature in an unsigned body",
            kind: ChunkedKind::Unsigned,
            body: b"05 ;foo=bar;baz;chunk-signature=abc1\r\nhello\r\n0;x=1\r\n\
X-Amz-Checksum-CRC32 :\tNhCmhg== \r\n\r\n"
                .to_vec(),
            payload: b"hello".to_vec(),
            trailers: vec![("x-amz-checksum-crc32", "NhCmhg==")],
            trailer_signature: None,
        },
        Fixture {
            name: "signed chunks with an extra extension",
            kind: ChunkedKind::Signed,
            body: cat(&[
                b"5;x-ext=1;chunk-signature=",
                SIG_1.as_bytes(),
                b"\r\nhello\r\n0;chunk-signature=",
                SIG_FINAL.as_bytes(),
                b";x-ext=2\r\n\r\n",
            ]),
            payload: b"hello".to_vec(),
            trailers: vec![],
            trailer_signature: None,
        },
        Fixture {
            name: "binary payload holding CRLFs and chunk-like text",
            kind: ChunkedKind::UnsignedWithTrailer,
            body: b"c\r\n\r\n0\r\n\r\n\x00\xff\r\n\n\r\n0\r\n\r\n".to_vec(),
            payload: b"\r\n0\r\n\r\n\x00\xff\r\n\n".to_vec(),
            trailers: vec![],
            trailer_signature: None,
        },
    ]
}

/// Decodes `body` fed in the given pieces, through both output APIs, checking they agree.
fn decode_pieces(
    kind: ChunkedKind,
    pieces: &[&[u8]],
    decoded_len: Option<u64>,
) -> Result<(Vec<u8>, Trailers), ChunkedError> {
    let mut by_vec = ChunkedDecoder::new(kind);
    let mut by_ranges = ChunkedDecoder::new(kind);
    by_vec.set_decoded_length(decoded_len);
    by_ranges.set_decoded_length(decoded_len);
    let mut payload = Vec::new();
    let mut ranged = Vec::new();
    for piece in pieces {
        let mut ranges = Vec::new();
        let a = by_vec.decode(piece, &mut payload);
        let b = by_ranges.decode_ranges(piece, &mut ranges);
        assert_eq!(a, b);
        for range in ranges {
            ranged.extend_from_slice(&piece[range]);
        }
        a?;
        assert!(by_vec.line.len() <= MAX_LINE_LEN + 1);
    }
    assert_eq!(payload, ranged);
    assert_eq!(by_vec.decoded_len(), payload.len() as u64);
    let trailers = by_vec.finish();
    assert_eq!(trailers, by_ranges.finish());
    Ok((payload, trailers?))
}

fn check(fixture: &Fixture, pieces: &[&[u8]], how: &str) {
    for decoded_len in [None, Some(fixture.payload.len() as u64)] {
        let (payload, trailers) = decode_pieces(fixture.kind, pieces, decoded_len)
            .unwrap_or_else(|e| panic!("{}, {how}: {e}", fixture.name));
        assert_eq!(payload, fixture.payload, "{}, {how}", fixture.name);
        let got: Vec<(&str, &str)> = trailers.iter().collect();
        assert_eq!(got, fixture.trailers, "{}, {how}", fixture.name);
        assert_eq!(
            trailers.signature(),
            fixture.trailer_signature,
            "{}, {how}",
            fixture.name
        );
    }
}

#[test]
fn each_fixture_decodes_whole() {
    for fixture in fixtures() {
        check(&fixture, &[&fixture.body], "whole");
        let (payload, _) = ChunkedDecoder::new(fixture.kind)
            .decode_all(&fixture.body)
            .expect("decodes");
        assert_eq!(payload, fixture.payload);
    }
}

#[test]
fn each_fixture_decodes_split_at_every_position() {
    for fixture in fixtures() {
        let body = &fixture.body;
        for i in 0..=body.len() {
            let (a, b) = body.split_at(i);
            check(&fixture, &[a, b], &format!("split at {i}"));
        }
    }
}

#[test]
fn each_fixture_decodes_split_in_three_anywhere() {
    for fixture in fixtures().into_iter().filter(|f| f.body.len() < 200) {
        let body = &fixture.body;
        for i in 0..=body.len() {
            for j in i..=body.len() {
                let pieces = [&body[..i], &body[i..j], &body[j..]];
                let (payload, _) = decode_pieces(fixture.kind, &pieces, None)
                    .unwrap_or_else(|e| panic!("{}, split at {i},{j}: {e}", fixture.name));
                assert_eq!(payload, fixture.payload);
            }
        }
    }
}

#[test]
fn each_fixture_decodes_one_byte_at_a_time() {
    for fixture in fixtures() {
        let pieces: Vec<&[u8]> = fixture.body.chunks(1).collect();
        check(&fixture, &pieces, "byte by byte");
    }
}

#[test]
fn trailer_checksums_match_the_decoded_payload() {
    for fixture in fixtures() {
        let (payload, trailers) = ChunkedDecoder::new(fixture.kind)
            .decode_all(&fixture.body)
            .expect("decodes");
        if let Some((alg, value)) = trailers.checksum() {
            let mut checksummer = alg.checksummer();
            checksummer.update(&payload);
            assert_eq!(checksummer.finalize_base64(), value, "{}", fixture.name);
            assert!(alg.decode_base64(value).is_some());
        }
    }
}

/// The AWS documentation's signed example: 66,560 bytes of `a` in a 64 KiB chunk and a
/// 1 KiB chunk, whose Content-Length the documentation gives as 66,824.
fn aws_docs_signed_body() -> (Vec<u8>, Vec<u8>) {
    let payload = vec![b'a'; 66_560];
    let body = cat(&[
        b"10000;chunk-signature=",
        SIG_1.as_bytes(),
        b"\r\n",
        &payload[..65_536],
        b"\r\n400;chunk-signature=",
        SIG_2.as_bytes(),
        b"\r\n",
        &payload[65_536..],
        b"\r\n0;chunk-signature=",
        SIG_FINAL.as_bytes(),
        b"\r\n\r\n",
    ]);
    (body, payload)
}

#[test]
fn a_64_kib_chunk_then_a_short_one() {
    let (body, payload) = aws_docs_signed_body();
    assert_eq!(body.len(), 66_824);
    let fixture = Fixture {
        name: "AWS docs signed example",
        kind: ChunkedKind::Signed,
        body,
        payload,
        trailers: vec![],
        trailer_signature: None,
    };
    check(&fixture, &[&fixture.body], "whole");
    let bytes: Vec<&[u8]> = fixture.body.chunks(1).collect();
    check(&fixture, &bytes, "byte by byte");
    for size in [7, 1000, 8192, 65_536] {
        let pieces: Vec<&[u8]> = fixture.body.chunks(size).collect();
        check(&fixture, &pieces, &format!("pieces of {size}"));
    }
    // Every split near a framing boundary.
    let boundaries = [88, 88 + 65_536, 88 + 65_538, 88 + 65_538 + 86, 66_824 - 86];
    for boundary in boundaries {
        for i in boundary - 4..=boundary + 4 {
            let (a, b) = fixture.body.split_at(i);
            check(&fixture, &[a, b], &format!("split at {i}"));
        }
    }
}

#[test]
fn chunk_data_streams_through_without_buffering() {
    let (body, _) = aws_docs_signed_body();
    let mut decoder = ChunkedDecoder::new(ChunkedKind::Signed);
    let mut out = Vec::new();
    // The header line and 100 bytes of the first chunk's data.
    decoder
        .decode(&body[..88 + 100], &mut out)
        .expect("decodes");
    assert_eq!(out.len(), 100);
    assert!(decoder.line.is_empty());
    let mut ranges = Vec::new();
    decoder
        .decode_ranges(&body[188..1188], &mut ranges)
        .expect("decodes");
    assert_eq!(ranges, vec![0..1000]);
    assert_eq!(decoder.decoded_len(), 1100);
    assert!(decoder.line.capacity() < 200);
}

#[test]
fn truncated_bodies_are_incomplete_except_at_the_optional_final_crlf() {
    for fixture in fixtures() {
        let body = &fixture.body;
        let zero_chunk = find_zero_chunk_line_end(body);
        for len in 0..body.len() {
            let result = decode_pieces(fixture.kind, &[&body[..len]], None);
            // Accepted: the body cut where a trailer line or the final empty line starts.
            let at_line_start = len >= zero_chunk && body[..len].ends_with(b"\r\n");
            match result {
                Ok((payload, _)) => {
                    assert!(at_line_start, "{}: prefix {len} accepted", fixture.name);
                    assert_eq!(payload, fixture.payload);
                }
                Err(ChunkedError::Incomplete { decoded }) => {
                    assert!(!at_line_start, "{}: prefix {len} refused", fixture.name);
                    assert!(decoded <= fixture.payload.len() as u64);
                }
                Err(e) => panic!("{}: prefix {len}: unexpected {e}", fixture.name),
            }
        }
    }
}

/// The offset just past the final zero-size chunk's header line.
fn find_zero_chunk_line_end(body: &[u8]) -> usize {
    let mut decoder = ChunkedDecoder::new(ChunkedKind::Unsigned);
    let mut out = Vec::new();
    for (i, byte) in body.iter().enumerate() {
        decoder
            .decode(std::slice::from_ref(byte), &mut out)
            .expect("decodes");
        if decoder.state == State::Trailer {
            return i + 1;
        }
    }
    panic!("no zero-size chunk");
}

#[test]
fn truncated_in_data_reports_how_much_was_decoded() {
    let body = b"b\r\nhello wo";
    let mut decoder = ChunkedDecoder::new(ChunkedKind::UnsignedWithTrailer);
    let mut out = Vec::new();
    decoder.decode(body, &mut out).expect("decodes");
    assert_eq!(out, b"hello wo");
    assert_eq!(
        decoder.finish(),
        Err(ChunkedError::Incomplete { decoded: 8 })
    );
    assert_eq!(
        ChunkedDecoder::new(ChunkedKind::Signed).finish(),
        Err(ChunkedError::Incomplete { decoded: 0 })
    );
}

fn decode_err(kind: ChunkedKind, body: &[u8]) -> ChunkedError {
    let whole = ChunkedDecoder::new(kind)
        .decode_all(body)
        .expect_err("must be refused");
    // The same error, at the same offset, whichever way the body is split.
    let pieces: Vec<&[u8]> = body.chunks(1).collect();
    let bytewise = decode_pieces(kind, &pieces, None).expect_err("must be refused");
    assert_eq!(whole, bytewise);
    whole
}

fn malformed_at(kind: ChunkedKind, body: &[u8]) -> (u64, &'static str) {
    match decode_err(kind, body) {
        ChunkedError::Malformed { offset, reason } => (offset, reason),
        other => panic!("expected Malformed, got {other:?}"),
    }
}

fn malformed_trailer_at(kind: ChunkedKind, body: &[u8]) -> (u64, &'static str) {
    match decode_err(kind, body) {
        ChunkedError::MalformedTrailer { offset, reason } => (offset, reason),
        other => panic!("expected MalformedTrailer, got {other:?}"),
    }
}

#[test]
fn bad_hex_sizes_are_malformed() {
    let u = ChunkedKind::UnsignedWithTrailer;
    for body in [
        &b"zz\r\nhello\r\n0\r\n\r\n"[..],
        b"0x5\r\nhello\r\n0\r\n\r\n",
        b"\r\nhello\r\n0\r\n\r\n",
        b";chunk-signature=ab\r\nhello\r\n0\r\n\r\n",
        b"-5\r\nhello\r\n0\r\n\r\n",
        b"+5\r\nhello\r\n0\r\n\r\n",
        b"5 5\r\nhello\r\n0\r\n\r\n",
        b"10000000000000000\r\n",
    ] {
        assert_eq!(malformed_at(u, body).0, 0, "{body:?}");
    }
    assert_eq!(
        malformed_at(u, b"5\r\nhello\r\ng\r\n"),
        (10, "bad chunk size")
    );
    // Leading zeros do not count against the 16 digits.
    let ok = ChunkedDecoder::new(u)
        .decode_all(b"00000000000000005\r\nhello\r\n0\r\n\r\n")
        .expect("decodes");
    assert_eq!(ok.0, b"hello");
}

#[test]
fn missing_crlf_after_chunk_data_is_malformed() {
    let u = ChunkedKind::UnsignedWithTrailer;
    assert_eq!(
        malformed_at(u, b"5\r\nhelloX\r\n0\r\n\r\n"),
        (8, "chunk data not followed by CRLF")
    );
    assert_eq!(malformed_at(u, b"5\r\nhello\n0\r\n\r\n").0, 8);
    assert_eq!(malformed_at(u, b"5\r\nhello\rX0\r\n\r\n").0, 9);
    // A chunk longer than its declared size runs into the next header.
    assert_eq!(malformed_at(u, b"4\r\nhello\r\n0\r\n\r\n").0, 7);
}

#[test]
fn lines_must_end_in_crlf_and_hold_no_control_bytes() {
    let u = ChunkedKind::UnsignedWithTrailer;
    assert_eq!(
        malformed_at(u, b"5\nhello\r\n0\r\n\r\n"),
        (0, "line not ended by CRLF")
    );
    assert_eq!(
        malformed_at(u, b"5\rx\r\nhello\r\n0\r\n\r\n"),
        (0, "control or non-ASCII byte in line")
    );
    assert_eq!(malformed_at(u, b"5;\xc3\xa9=1\r\nhello\r\n").0, 0);
    assert_eq!(
        malformed_trailer_at(u, b"0\r\nx-amz-checksum-crc32:AAAAAA==\n\n"),
        (3, "line not ended by CRLF")
    );
    assert_eq!(malformed_trailer_at(u, b"0\r\n\n").0, 3);
}

#[test]
fn oversize_lines_are_refused_before_they_are_buffered() {
    let u = ChunkedKind::UnsignedWithTrailer;
    let mut long_header = b"5;x=".to_vec();
    long_header.resize(10_000, b'a');
    long_header.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    assert_eq!(malformed_at(u, &long_header), (0, "line too long"));

    // Fed a byte at a time, the error comes as the line passes the limit.
    let mut decoder = ChunkedDecoder::new(u);
    let mut out = Vec::new();
    let mut failed_at = None;
    for (i, byte) in long_header.iter().enumerate() {
        if decoder
            .decode(std::slice::from_ref(byte), &mut out)
            .is_err()
        {
            failed_at = Some(i);
            break;
        }
        assert!(decoder.line.len() <= MAX_LINE_LEN + 1);
    }
    assert_eq!(failed_at, Some(MAX_LINE_LEN + 1));

    // A line of exactly MAX_LINE_LEN bytes is fine.
    let mut max_header = b"5;x=".to_vec();
    max_header.resize(MAX_LINE_LEN, b'a');
    max_header.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    let (payload, _) = ChunkedDecoder::new(u)
        .decode_all(&max_header)
        .expect("decodes");
    assert_eq!(payload, b"hello");
    let mut just_over = b"5;x=".to_vec();
    just_over.resize(MAX_LINE_LEN + 1, b'a');
    just_over.extend_from_slice(b"\r\nhello\r\n0\r\n\r\n");
    assert_eq!(malformed_at(u, &just_over), (0, "line too long"));

    let mut long_trailer = b"0\r\nx-amz-meta:".to_vec();
    long_trailer.resize(5000, b'v');
    long_trailer.extend_from_slice(b"\r\n\r\n");
    assert_eq!(malformed_trailer_at(u, &long_trailer), (3, "line too long"));
}

#[test]
fn signed_bodies_need_a_well_formed_chunk_signature() {
    let s = ChunkedKind::Signed;
    assert_eq!(
        malformed_at(s, b"5\r\nhello\r\n"),
        (0, "missing chunk-signature")
    );
    assert_eq!(
        malformed_at(s, b"5;chunk-signature=abc\r\nhello\r\n"),
        (0, "bad chunk-signature")
    );
    let not_hex = "g".repeat(64);
    let body = cat(&[b"5;chunk-signature=", not_hex.as_bytes(), b"\r\n"]);
    assert_eq!(malformed_at(s, &body).1, "bad chunk-signature");
    let body = cat(&[
        b"5;chunk-signature=",
        SIG_1.as_bytes(),
        b";chunk-signature=",
        SIG_2.as_bytes(),
        b"\r\n",
    ]);
    assert_eq!(malformed_at(s, &body).1, "repeated chunk-signature");
    // The final chunk needs one too.
    let body = cat(&[
        b"5;chunk-signature=",
        SIG_1.as_bytes(),
        b"\r\nhello\r\n0\r\n\r\n",
    ]);
    assert_eq!(malformed_at(s, &body), (91, "missing chunk-signature"));
    // SigV4a signatures vary in length but are whole bytes of hex.
    let body = cat(&[b"0;chunk-signature=", SIG_ECDSA.as_bytes(), b"a\r\n\r\n"]);
    assert_eq!(
        malformed_at(ChunkedKind::SignedEcdsa, &body).1,
        "bad chunk-signature"
    );
    // An HMAC signature in a SigV4a body is still hex of whole bytes, so accepted.
    let body = cat(&[b"0;chunk-signature=", SIG_FINAL.as_bytes(), b"\r\n\r\n"]);
    assert!(ChunkedDecoder::new(ChunkedKind::SignedEcdsa)
        .decode_all(&body)
        .is_ok());
}

#[test]
fn malformed_trailers_are_refused() {
    let u = ChunkedKind::UnsignedWithTrailer;
    assert_eq!(
        malformed_trailer_at(u, b"0\r\nx-amz-checksum-crc32 AAAAAA==\r\n\r\n"),
        (3, "trailer line without a colon")
    );
    assert_eq!(
        malformed_trailer_at(u, b"0\r\n:AAAAAA==\r\n\r\n").1,
        "bad trailer name"
    );
    assert_eq!(
        malformed_trailer_at(u, b"0\r\nx amz:1\r\n\r\n").1,
        "bad trailer name"
    );
    let body = cat(&[
        b"0\r\nx-amz-trailer-signature:",
        SIG_TRAILER.as_bytes(),
        b"\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n",
    ]);
    assert_eq!(
        malformed_trailer_at(u, &body).1,
        "trailer after the trailer signature"
    );
    let body = cat(&[
        b"0;chunk-signature=",
        SIG_FINAL.as_bytes(),
        b"\r\nx-amz-trailer-signature:xyz\r\n\r\n",
    ]);
    assert_eq!(
        malformed_trailer_at(ChunkedKind::SignedWithTrailer, &body).1,
        "bad trailer signature"
    );
    let mut many = b"0\r\n".to_vec();
    for i in 0..=MAX_TRAILERS {
        many.extend_from_slice(format!("x-amz-meta-{i}:v\r\n").as_bytes());
    }
    many.extend_from_slice(b"\r\n");
    assert_eq!(malformed_trailer_at(u, &many).1, "too many trailers");
}

#[test]
fn nothing_may_follow_the_end_of_the_body() {
    // The .NET SDK's old empty-object body, which S3 refuses with MalformedTrailerError.
    let body = b"0\r\n\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
    assert_eq!(
        malformed_trailer_at(ChunkedKind::UnsignedWithTrailer, body),
        (5, "data after the end of the body")
    );
    let body = b"5\r\nhello\r\n0\r\n\r\n\r\n";
    assert_eq!(malformed_trailer_at(ChunkedKind::Unsigned, body).0, 15);
}

#[test]
fn a_second_zero_chunk_in_the_trailer_section_is_refused() {
    let body = b"0\r\n0\r\nx-amz-checksum-crc32:AAAAAA==\r\n\r\n";
    assert_eq!(
        malformed_trailer_at(ChunkedKind::UnsignedWithTrailer, body),
        (3, "trailer line without a colon")
    );
}

#[test]
fn wrong_decoded_length_is_an_error() {
    let fixture = &fixtures()[0];
    let body = &fixture.body;
    // Declared longer than sent: found at the end.
    let short = ChunkedDecoder::new(fixture.kind)
        .with_decoded_length(12)
        .decode_all(body);
    assert_eq!(
        short,
        Err(ChunkedError::DecodedLengthMismatch {
            expected: 12,
            actual: 11
        })
    );
    // Also when the final CRLF is missing.
    let without_final_crlf = &body[..body.len() - 2];
    let short = ChunkedDecoder::new(fixture.kind)
        .with_decoded_length(12)
        .decode_all(without_final_crlf);
    assert!(matches!(
        short,
        Err(ChunkedError::DecodedLengthMismatch { .. })
    ));
    // Declared shorter than sent: found at the chunk header, before its data.
    let mut decoder = ChunkedDecoder::new(fixture.kind).with_decoded_length(10);
    let mut out = Vec::new();
    assert_eq!(
        decoder.decode(b"b\r\n", &mut out),
        Err(ChunkedError::DecodedLengthMismatch {
            expected: 10,
            actual: 11
        })
    );
    assert!(out.is_empty());
    // A huge declared chunk size does not overflow.
    let mut decoder = ChunkedDecoder::new(fixture.kind).with_decoded_length(11);
    assert_eq!(
        decoder.decode(b"5\r\nhello\r\nffffffffffffffff\r\n", &mut out),
        Err(ChunkedError::DecodedLengthMismatch {
            expected: 11,
            actual: u64::MAX
        })
    );
    // The right length passes, including zero for an empty body.
    let empty = &fixtures()[2];
    assert!(ChunkedDecoder::new(empty.kind)
        .with_decoded_length(0)
        .decode_all(&empty.body)
        .is_ok());
}

#[test]
fn errors_stick() {
    let mut decoder = ChunkedDecoder::new(ChunkedKind::UnsignedWithTrailer);
    let mut out = Vec::new();
    let first = decoder.decode(b"xyz\r\n", &mut out).expect_err("bad size");
    assert_eq!(decoder.decode(b"0\r\n\r\n", &mut out), Err(first.clone()));
    assert!(!decoder.is_done());
    assert_eq!(decoder.finish(), Err(first));
}

#[test]
fn is_done_after_the_final_empty_line() {
    let fixture = &fixtures()[0];
    let mut decoder = ChunkedDecoder::new(fixture.kind);
    let mut out = Vec::new();
    let (head, tail) = fixture.body.split_at(fixture.body.len() - 1);
    decoder.decode(head, &mut out).expect("decodes");
    assert!(!decoder.is_done());
    decoder.decode(tail, &mut out).expect("decodes");
    assert!(decoder.is_done());
    assert_eq!(decoder.kind(), ChunkedKind::UnsignedWithTrailer);
    // Empty input is always fine, even after the end.
    decoder.decode(b"", &mut out).expect("empty input");
}

#[test]
fn trailers_are_looked_up_case_insensitively() {
    let body = b"0\r\nX-Amz-Checksum-SHA1:Kq5sNclPz7QV2+lfQIuc6R7oRu0=\r\nx-amz-meta-a:1\r\n\r\n";
    let (_, trailers) = ChunkedDecoder::new(ChunkedKind::UnsignedWithTrailer)
        .decode_all(body)
        .expect("decodes");
    assert_eq!(trailers.len(), 2);
    assert!(!trailers.is_empty());
    assert_eq!(
        trailers.get("x-amz-checksum-sha1"),
        Some("Kq5sNclPz7QV2+lfQIuc6R7oRu0=")
    );
    assert_eq!(trailers.get("X-AMZ-META-A"), Some("1"));
    assert_eq!(trailers.get("x-amz-meta-b"), None);
    assert_eq!(
        trailers.checksum(),
        Some((ChecksumAlgorithm::Sha1, "Kq5sNclPz7QV2+lfQIuc6R7oRu0="))
    );
    assert_eq!(trailers.signature(), None);
}
