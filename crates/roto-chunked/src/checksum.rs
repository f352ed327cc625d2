//! The S3 checksum algorithms (`x-amz-checksum-*`), computed incrementally.
//!
//! S3 needs them for the trailers of `aws-chunked` bodies, for `x-amz-checksum-*`
//! request headers, for multipart parts and their composite or full-object checksums,
//! and for GetObject/HeadObject with `ChecksumMode=ENABLED`. Values travel as the
//! base64 of the big-endian digest bytes, as S3 sends them.

use base64::engine::general_purpose::STANDARD as BASE64;
use base64::Engine as _;
use sha2::Digest as _;
use std::fmt;

/// One of the checksum algorithms S3 supports.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Hash)]
pub enum ChecksumAlgorithm {
    /// CRC-32 (ISO-HDLC, the zlib one), 4 bytes.
    Crc32,
    /// CRC-32C (Castagnoli), 4 bytes.
    Crc32c,
    /// CRC-64/NVME, 8 bytes.
    Crc64Nvme,
    /// SHA-1, 20 bytes.
    Sha1,
    /// SHA-256, 32 bytes.
    Sha256,
}

impl ChecksumAlgorithm {
    /// Every algorithm, in the order S3 documents them.
    pub const ALL: [ChecksumAlgorithm; 5] = [
        Self::Crc32,
        Self::Crc32c,
        Self::Crc64Nvme,
        Self::Sha1,
        Self::Sha256,
    ];

    /// The algorithm with this S3 name (`CRC32`, `CRC32C`, `CRC64NVME`, `SHA1`, `SHA256`),
    /// as in `x-amz-checksum-algorithm` or `x-amz-sdk-checksum-algorithm`; case-insensitive.
    pub fn from_name(name: &str) -> Option<ChecksumAlgorithm> {
        let name = name.trim();
        Self::ALL
            .into_iter()
            .find(|alg| alg.name().eq_ignore_ascii_case(name))
    }

    /// The algorithm whose value travels in this header or trailer
    /// (`x-amz-checksum-crc32c`, …); case-insensitive.
    pub fn from_header_name(header_name: &str) -> Option<ChecksumAlgorithm> {
        let header_name = header_name.trim();
        Self::ALL
            .into_iter()
            .find(|alg| alg.header_name().eq_ignore_ascii_case(header_name))
    }

    /// The S3 name: `CRC32`, `CRC32C`, `CRC64NVME`, `SHA1` or `SHA256`.
    pub const fn name(self) -> &'static str {
        match self {
            Self::Crc32 => "CRC32",
            Self::Crc32c => "CRC32C",
            Self::Crc64Nvme => "CRC64NVME",
            Self::Sha1 => "SHA1",
            Self::Sha256 => "SHA256",
        }
    }

    /// The lower-case header (and trailer) name, e.g. `x-amz-checksum-crc32c`.
    pub const fn header_name(self) -> &'static str {
        match self {
            Self::Crc32 => "x-amz-checksum-crc32",
            Self::Crc32c => "x-amz-checksum-crc32c",
            Self::Crc64Nvme => "x-amz-checksum-crc64nvme",
            Self::Sha1 => "x-amz-checksum-sha1",
            Self::Sha256 => "x-amz-checksum-sha256",
        }
    }

    /// The length of the digest in bytes (before base64).
    pub const fn digest_len(self) -> usize {
        match self {
            Self::Crc32 | Self::Crc32c => 4,
            Self::Crc64Nvme => 8,
            Self::Sha1 => 20,
            Self::Sha256 => 32,
        }
    }

    /// Whether this is a CRC, whose values can be combined with [`Self::combine`].
    pub const fn is_crc(self) -> bool {
        matches!(self, Self::Crc32 | Self::Crc32c | Self::Crc64Nvme)
    }

    /// A new incremental checksummer for this algorithm.
    pub fn checksummer(self) -> Checksummer {
        Checksummer::new(self)
    }

    /// The digest of `data` in one call.
    pub fn checksum(self, data: &[u8]) -> Vec<u8> {
        let mut checksummer = self.checksummer();
        checksummer.update(data);
        checksummer.finalize()
    }

    /// The base64 digest of `data` in one call, as S3 writes it in headers.
    pub fn checksum_base64(self, data: &[u8]) -> String {
        BASE64.encode(self.checksum(data))
    }

    /// The digest bytes of a base64 header or trailer value, or `None` if the value is
    /// not base64 or not [`Self::digest_len`] bytes long (S3 rejects such a value).
    pub fn decode_base64(self, value: &str) -> Option<Vec<u8>> {
        let bytes = BASE64.decode(value.trim()).ok()?;
        (bytes.len() == self.digest_len()).then_some(bytes)
    }

    /// The CRC of `A ‖ B` from the CRC of `A`, the CRC of `B` and the length of `B`,
    /// without reading the data again: how S3 computes a multipart upload's full-object
    /// checksum from its parts'. `None` for SHA algorithms and for digests of the wrong
    /// length.
    pub fn combine(self, first: &[u8], second: &[u8], second_len: u64) -> Option<Vec<u8>> {
        if first.len() != self.digest_len() || second.len() != self.digest_len() {
            return None;
        }
        let (poly, width) = match self {
            Self::Crc32 => (0xedb8_8320, 32),
            Self::Crc32c => (0x82f6_3b78, 32),
            Self::Crc64Nvme => (0x9a6c_9329_ac4b_c9b5, 64),
            Self::Sha1 | Self::Sha256 => return None,
        };
        let be = |bytes: &[u8]| bytes.iter().fold(0u64, |acc, &b| (acc << 8) | u64::from(b));
        let combined = crc_combine(poly, width, be(first), be(second), second_len);
        Some(combined.to_be_bytes()[8 - self.digest_len()..].to_vec())
    }
}

impl fmt::Display for ChecksumAlgorithm {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}

/// An in-progress checksum: feed it bytes with [`update`](Self::update), then take the
/// digest with [`finalize`](Self::finalize) or [`finalize_base64`](Self::finalize_base64).
#[derive(Clone)]
pub struct Checksummer {
    state: State,
}

#[derive(Clone)]
enum State {
    Crc32(crc32fast::Hasher),
    Crc32c(u32),
    Crc64Nvme(crc64fast_nvme::Digest),
    Sha1(sha1::Sha1),
    Sha256(sha2::Sha256),
}

impl Checksummer {
    /// A checksummer for `algorithm` that has seen no bytes yet.
    pub fn new(algorithm: ChecksumAlgorithm) -> Checksummer {
        let state = match algorithm {
            ChecksumAlgorithm::Crc32 => State::Crc32(crc32fast::Hasher::new()),
            ChecksumAlgorithm::Crc32c => State::Crc32c(0),
            ChecksumAlgorithm::Crc64Nvme => State::Crc64Nvme(crc64fast_nvme::Digest::new()),
            ChecksumAlgorithm::Sha1 => State::Sha1(sha1::Sha1::new()),
            ChecksumAlgorithm::Sha256 => State::Sha256(sha2::Sha256::new()),
        };
        Checksummer { state }
    }

    /// The algorithm this checksummer computes.
    pub fn algorithm(&self) -> ChecksumAlgorithm {
        match self.state {
            State::Crc32(_) => ChecksumAlgorithm::Crc32,
            State::Crc32c(_) => ChecksumAlgorithm::Crc32c,
            State::Crc64Nvme(_) => ChecksumAlgorithm::Crc64Nvme,
            State::Sha1(_) => ChecksumAlgorithm::Sha1,
            State::Sha256(_) => ChecksumAlgorithm::Sha256,
        }
    }

    /// Adds `data` to the checksum.
    pub fn update(&mut self, data: &[u8]) {
        match &mut self.state {
            State::Crc32(hasher) => hasher.update(data),
            State::Crc32c(crc) => *crc = crc32c::crc32c_append(*crc, data),
            State::Crc64Nvme(digest) => digest.write(data),
            State::Sha1(hasher) => hasher.update(data),
            State::Sha256(hasher) => hasher.update(data),
        }
    }

    /// The digest bytes (big-endian for the CRCs), [`ChecksumAlgorithm::digest_len`] long.
    pub fn finalize(self) -> Vec<u8> {
        match self.state {
            State::Crc32(hasher) => hasher.finalize().to_be_bytes().to_vec(),
            State::Crc32c(crc) => crc.to_be_bytes().to_vec(),
            State::Crc64Nvme(digest) => digest.sum64().to_be_bytes().to_vec(),
            State::Sha1(hasher) => hasher.finalize().to_vec(),
            State::Sha256(hasher) => hasher.finalize().to_vec(),
        }
    }

    /// The digest in base64, as S3 writes it in `x-amz-checksum-*` headers.
    pub fn finalize_base64(self) -> String {
        BASE64.encode(self.finalize())
    }
}

impl fmt::Debug for Checksummer {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.debug_struct("Checksummer")
            .field("algorithm", &self.algorithm())
            .finish_non_exhaustive()
    }
}

/// Combines two reflected CRCs whose initial value equals their final xor (true of all
/// three S3 CRCs), the way zlib's `crc32_combine` does: the CRC of `A` is advanced over
/// `len2` zero bytes by repeated squaring of the one-zero-bit operator, then xored with
/// the CRC of `B`.
fn crc_combine(poly: u64, width: usize, mut crc1: u64, crc2: u64, mut len2: u64) -> u64 {
    if len2 == 0 {
        return crc1;
    }
    let mut odd = [0u64; 64];
    let mut even = [0u64; 64];
    // The operator for one zero bit.
    odd[0] = poly;
    for (n, row) in odd.iter_mut().enumerate().take(width).skip(1) {
        *row = 1 << (n - 1);
    }
    gf2_square(&mut even, &odd, width); // two zero bits
    gf2_square(&mut odd, &even, width); // four zero bits
    loop {
        // The first squaring gives one zero byte, then two, four, …
        gf2_square(&mut even, &odd, width);
        if len2 & 1 != 0 {
            crc1 = gf2_times(&even, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
        gf2_square(&mut odd, &even, width);
        if len2 & 1 != 0 {
            crc1 = gf2_times(&odd, crc1);
        }
        len2 >>= 1;
        if len2 == 0 {
            break;
        }
    }
    crc1 ^ crc2
}

fn gf2_times(matrix: &[u64; 64], mut vector: u64) -> u64 {
    let mut sum = 0;
    let mut row = 0;
    while vector != 0 {
        if vector & 1 != 0 {
            sum ^= matrix[row];
        }
        vector >>= 1;
        row += 1;
    }
    sum
}

fn gf2_square(square: &mut [u64; 64], matrix: &[u64; 64], width: usize) {
    for n in 0..width {
        square[n] = gf2_times(matrix, matrix[n]);
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn hex(bytes: &[u8]) -> String {
        bytes.iter().map(|b| format!("{b:02x}")).collect()
    }

    #[test]
    fn check_values_of_123456789() {
        let data = b"123456789";
        assert_eq!(hex(&ChecksumAlgorithm::Crc32.checksum(data)), "cbf43926");
        assert_eq!(hex(&ChecksumAlgorithm::Crc32c.checksum(data)), "e3069283");
        assert_eq!(
            hex(&ChecksumAlgorithm::Crc64Nvme.checksum(data)),
            "ae8b14860a799888"
        );
        assert_eq!(
            hex(&ChecksumAlgorithm::Sha1.checksum(data)),
            "f7c3bc1d808e04732adf679965ccc34ca7ae3441"
        );
        assert_eq!(
            hex(&ChecksumAlgorithm::Sha256.checksum(data)),
            "15e2b0d3c33891ebb0f1ef609ec419420c20e320ce94c65fbc8c3312448eb225"
        );
    }

    #[test]
    fn base64_values_of_hello_world_match_what_s3_returns() {
        let data = b"hello world";
        assert_eq!(ChecksumAlgorithm::Crc32.checksum_base64(data), "DUoRhQ==");
        assert_eq!(ChecksumAlgorithm::Crc32c.checksum_base64(data), "yZRlqg==");
        assert_eq!(
            ChecksumAlgorithm::Sha1.checksum_base64(data),
            "Kq5sNclPz7QV2+lfQIuc6R7oRu0="
        );
        assert_eq!(
            ChecksumAlgorithm::Sha256.checksum_base64(data),
            "uU0nuZNNPgilLlLX2n2r+sSE7+N6U4DukIj3rOLvzek="
        );
        // The crc64fast-nvme documentation's own example.
        assert_eq!(
            hex(&ChecksumAlgorithm::Crc64Nvme.checksum(b"hello world!")),
            "d9160d1fa8e418e3"
        );
    }

    #[test]
    fn empty_input_digests() {
        assert_eq!(ChecksumAlgorithm::Crc32.checksum_base64(b""), "AAAAAA==");
        assert_eq!(ChecksumAlgorithm::Crc32c.checksum_base64(b""), "AAAAAA==");
        assert_eq!(
            ChecksumAlgorithm::Crc64Nvme.checksum_base64(b""),
            "AAAAAAAAAAA="
        );
        assert_eq!(
            ChecksumAlgorithm::Sha256.checksum_base64(b""),
            "47DEQpj8HBSa+/TImW+5JCeuQeRkm5NMpJWZG3hSuFU="
        );
    }

    #[test]
    fn incremental_updates_equal_one_shot() {
        let data: Vec<u8> = (0..10_000u32).map(|i| (i * 31 % 251) as u8).collect();
        for alg in ChecksumAlgorithm::ALL {
            let mut checksummer = alg.checksummer();
            for piece in data.chunks(333) {
                checksummer.update(piece);
            }
            assert_eq!(checksummer.algorithm(), alg);
            let digest = checksummer.finalize();
            assert_eq!(digest.len(), alg.digest_len(), "{alg}");
            assert_eq!(digest, alg.checksum(&data), "{alg}");
        }
    }

    #[test]
    fn names_round_trip_case_insensitively() {
        for alg in ChecksumAlgorithm::ALL {
            assert_eq!(ChecksumAlgorithm::from_name(alg.name()), Some(alg));
            assert_eq!(
                ChecksumAlgorithm::from_name(&alg.name().to_ascii_lowercase()),
                Some(alg)
            );
            assert_eq!(
                ChecksumAlgorithm::from_header_name(alg.header_name()),
                Some(alg)
            );
            assert_eq!(
                ChecksumAlgorithm::from_header_name(&alg.header_name().to_ascii_uppercase()),
                Some(alg)
            );
            assert_eq!(alg.to_string(), alg.name());
        }
        assert_eq!(
            ChecksumAlgorithm::from_header_name("x-amz-checksum-crc32c"),
            Some(ChecksumAlgorithm::Crc32c)
        );
        assert_eq!(ChecksumAlgorithm::from_name("CRC64"), None);
        assert_eq!(ChecksumAlgorithm::from_name("MD5"), None);
        assert_eq!(
            ChecksumAlgorithm::from_header_name("x-amz-checksum-type"),
            None
        );
    }

    #[test]
    fn decode_base64_checks_encoding_and_length() {
        assert_eq!(
            ChecksumAlgorithm::Crc32.decode_base64("DUoRhQ=="),
            Some(vec![0x0d, 0x4a, 0x11, 0x85])
        );
        assert_eq!(ChecksumAlgorithm::Crc32.decode_base64("not base64!"), None);
        assert_eq!(ChecksumAlgorithm::Crc64Nvme.decode_base64("DUoRhQ=="), None);
        assert_eq!(ChecksumAlgorithm::Sha256.decode_base64(""), None);
    }

    #[test]
    fn combining_crcs_equals_the_crc_of_the_concatenation() {
        let data: Vec<u8> = (0..5000u32).map(|i| (i * 7 % 256) as u8).collect();
        for alg in ChecksumAlgorithm::ALL.into_iter().filter(|a| a.is_crc()) {
            for split in [0, 1, 2, 3, 17, 1000, 4096, 4999, 5000] {
                let (a, b) = data.split_at(split);
                let combined = alg
                    .combine(&alg.checksum(a), &alg.checksum(b), b.len() as u64)
                    .expect("a CRC combines");
                assert_eq!(combined, alg.checksum(&data), "{alg} split at {split}");
            }
        }
    }

    #[test]
    fn combining_is_refused_for_sha_and_bad_lengths() {
        let sha = ChecksumAlgorithm::Sha256.checksum(b"a");
        assert_eq!(ChecksumAlgorithm::Sha256.combine(&sha, &sha, 1), None);
        assert_eq!(ChecksumAlgorithm::Crc32.combine(&[0; 8], &[0; 4], 1), None);
    }
}
