//! The bodies of compressed objects, by a destination's `CompressionFormat`, and the file
//! extension AWS gives each.
//!
//! - `GZIP` (`.gz`): one gzip member ([`crate::gzip`]).
//! - `ZIP` (`.zip`): an archive holding one deflated entry named after the object.
//! - `Snappy` (`.snappy`): Snappy's framing format (stream identifier, then compressed
//!   chunks of at most 64 KiB with their masked CRC-32C).
//! - `HADOOP_SNAPPY` (`.hsnappy`): Hadoop's block format (per block its length, then its
//!   compressed length and Snappy data, big-endian), what Hadoop's `SnappyCodec` reads.
//!
//! The Snappy block compressor is a greedy one over a table of 4-byte hashes: its output
//! is standard Snappy any decoder reads, a little larger than the reference encoder's.

use roto_chunked::ChecksumAlgorithm;

/// A Snappy block's largest input (the framing format's and our Hadoop blocks' bound).
const BLOCK: usize = 65_536;

/// The compressed body and the extension for `format` (`UNCOMPRESSED` or unknown: as is).
pub(super) fn compress(format: &str, data: &[u8], entry: &str) -> (Vec<u8>, &'static str) {
    match format {
        "GZIP" => (crate::gzip::compress(data), ".gz"),
        "ZIP" => (zip(entry, data), ".zip"),
        "Snappy" => (snappy_framed(data), ".snappy"),
        "HADOOP_SNAPPY" => (hadoop_snappy(data), ".hsnappy"),
        _ => (data.to_vec(), ""),
    }
}

/// A zip archive holding `data` as one deflated entry.
fn zip(name: &str, data: &[u8]) -> Vec<u8> {
    let deflated = miniz_oxide::deflate::compress_to_vec(data, 6);
    let crc = crate::gzip::crc32(data);
    let (size, packed) = (data.len() as u32, deflated.len() as u32);
    let name_len = name.len() as u16;
    let mut out = Vec::with_capacity(deflated.len() + 2 * name.len() + 100);
    let common = |out: &mut Vec<u8>| {
        for v in [20u16, 0, 8, 0, 0x21] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        for v in [crc, packed, size] {
            out.extend_from_slice(&v.to_le_bytes());
        }
        out.extend_from_slice(&name_len.to_le_bytes());
        out.extend_from_slice(&0u16.to_le_bytes());
    };
    out.extend_from_slice(&0x0403_4b50u32.to_le_bytes());
    common(&mut out);
    out.extend_from_slice(name.as_bytes());
    out.extend_from_slice(&deflated);
    let directory = out.len() as u32;
    out.extend_from_slice(&0x0201_4b50u32.to_le_bytes());
    out.extend_from_slice(&20u16.to_le_bytes());
    common(&mut out);
    for v in [0u16, 0, 0] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(&0u32.to_le_bytes());
    out.extend_from_slice(name.as_bytes());
    let directory_len = out.len() as u32 - directory;
    out.extend_from_slice(&0x0605_4b50u32.to_le_bytes());
    for v in [0u16, 0, 1, 1] {
        out.extend_from_slice(&v.to_le_bytes());
    }
    out.extend_from_slice(&directory_len.to_le_bytes());
    out.extend_from_slice(&directory.to_le_bytes());
    out.extend_from_slice(&0u16.to_le_bytes());
    out
}

/// Snappy's framing format.
fn snappy_framed(data: &[u8]) -> Vec<u8> {
    let mut out = vec![0xff, 6, 0, 0];
    out.extend_from_slice(b"sNaPpY");
    for chunk in data.chunks(BLOCK) {
        let block = snappy_block(chunk);
        let crc = ChecksumAlgorithm::Crc32c.checksum(chunk);
        let crc = u32::from_be_bytes(crc.try_into().unwrap_or_default());
        let masked = crc.rotate_right(15).wrapping_add(0xa282_ead8);
        let len = (block.len() + 4) as u32;
        out.push(0);
        out.extend_from_slice(&len.to_le_bytes()[..3]);
        out.extend_from_slice(&masked.to_le_bytes());
        out.extend_from_slice(&block);
    }
    out
}

/// Hadoop's block format, one Snappy chunk per block.
fn hadoop_snappy(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    for chunk in data.chunks(BLOCK) {
        let block = snappy_block(chunk);
        out.extend_from_slice(&(chunk.len() as u32).to_be_bytes());
        out.extend_from_slice(&(block.len() as u32).to_be_bytes());
        out.extend_from_slice(&block);
    }
    out
}

fn varint(mut n: usize, out: &mut Vec<u8>) {
    while n >= 0x80 {
        out.push((n as u8) | 0x80);
        n >>= 7;
    }
    out.push(n as u8);
}

fn literal(bytes: &[u8], out: &mut Vec<u8>) {
    if bytes.is_empty() {
        return;
    }
    let n = bytes.len() - 1;
    match n {
        0..60 => out.push((n as u8) << 2),
        60..0x100 => out.extend_from_slice(&[60 << 2, n as u8]),
        0x100..0x1_0000 => {
            out.push(61 << 2);
            out.extend_from_slice(&(n as u16).to_le_bytes());
        }
        _ => {
            out.push(63 << 2);
            out.extend_from_slice(&(n as u32).to_le_bytes());
        }
    }
    out.extend_from_slice(bytes);
}

fn copy(offset: usize, mut len: usize, out: &mut Vec<u8>) {
    while len > 0 {
        let piece = if len > 64 && len - 64 < 4 {
            60
        } else {
            len.min(64)
        };
        out.push((((piece - 1) as u8) << 2) | 2);
        out.extend_from_slice(&(offset as u16).to_le_bytes());
        len -= piece;
    }
}

fn read4(data: &[u8], at: usize) -> u32 {
    u32::from_le_bytes([data[at], data[at + 1], data[at + 2], data[at + 3]])
}

/// One Snappy block (input of at most [`BLOCK`] bytes, so every offset fits two bytes).
fn snappy_block(data: &[u8]) -> Vec<u8> {
    let mut out = Vec::with_capacity(data.len() + data.len() / 6 + 8);
    varint(data.len(), &mut out);
    let mut table = vec![usize::MAX; 1 << 14];
    let (mut i, mut pending) = (0, 0);
    while i + 4 <= data.len() {
        let word = read4(data, i);
        let slot = (word.wrapping_mul(0x1e35_a7bd) >> 18) as usize;
        let candidate = std::mem::replace(&mut table[slot], i);
        if candidate == usize::MAX || read4(data, candidate) != word {
            i += 1;
            continue;
        }
        let mut len = 4;
        while i + len < data.len() && data[candidate + len] == data[i + len] {
            len += 1;
        }
        literal(&data[pending..i], &mut out);
        copy(i - candidate, len, &mut out);
        i += len;
        pending = i;
    }
    literal(&data[pending..], &mut out);
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    /// A Snappy block decoder, to check the encoder against.
    fn unsnappy(block: &[u8]) -> Vec<u8> {
        let (mut len, mut shift, mut at) = (0usize, 0, 0);
        loop {
            let b = block[at];
            at += 1;
            len |= usize::from(b & 0x7f) << shift;
            shift += 7;
            if b < 0x80 {
                break;
            }
        }
        let mut out = Vec::with_capacity(len);
        while at < block.len() {
            let tag = block[at];
            at += 1;
            if tag & 3 == 0 {
                let mut n = usize::from(tag >> 2);
                if n >= 60 {
                    let bytes = n - 59;
                    n = (0..bytes)
                        .map(|k| usize::from(block[at + k]) << (8 * k))
                        .sum();
                    at += bytes;
                }
                out.extend_from_slice(&block[at..at + n + 1]);
                at += n + 1;
            } else {
                assert_eq!(tag & 3, 2);
                let n = usize::from(tag >> 2) + 1;
                let offset = usize::from(u16::from_le_bytes([block[at], block[at + 1]]));
                at += 2;
                for _ in 0..n {
                    out.push(out[out.len() - offset]);
                }
            }
        }
        assert_eq!(out.len(), len);
        out
    }

    #[test]
    fn snappy_blocks_decode_to_their_input() {
        let text: Vec<u8> = (0..10_000)
            .flat_map(|i| format!("{{\"n\":{}}}\n", i % 37).into_bytes())
            .collect();
        for input in [
            &b""[..],
            b"a",
            b"abcdabcdabcdabcdabcd",
            &text[..BLOCK.min(text.len())],
        ] {
            let block = snappy_block(input);
            assert_eq!(unsnappy(&block), input);
        }
        assert!(snappy_block(&text[..BLOCK]).len() < BLOCK / 4);
    }

    #[test]
    fn framed_snappy_starts_with_the_stream_identifier() {
        let framed = snappy_framed(b"hello");
        assert_eq!(&framed[..10], b"\xff\x06\x00\x00sNaPpY");
        assert_eq!(framed[10], 0);
        let hadoop = hadoop_snappy(b"hello");
        assert_eq!(&hadoop[..4], &5u32.to_be_bytes());
    }

    #[test]
    fn zip_archives_hold_one_entry() {
        let z = zip("entry", b"hello hello");
        assert_eq!(&z[..4], b"PK\x03\x04");
        assert!(z.windows(4).any(|w| w == b"PK\x05\x06"));
    }
}
