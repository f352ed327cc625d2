//! Gzip (RFC 1952) over miniz_oxide's deflate, for the services that write or read gzip
//! objects themselves: Logs' subscription payloads and export objects, DynamoDB's table
//! exports and imports, Firehose's GZIP and ZIP objects.

use miniz_oxide::inflate::stream::{inflate, InflateState};
use miniz_oxide::{DataFormat, MZFlush, MZStatus};
use roto_chunked::ChecksumAlgorithm;

const MAGIC: [u8; 3] = [0x1f, 0x8b, 8];
const FHCRC: u8 = 2;
const FEXTRA: u8 = 4;
const FNAME: u8 = 8;
const FCOMMENT: u8 = 16;

/// The CRC-32 (IEEE) of `data`, as gzip and zip carry it.
pub fn crc32(data: &[u8]) -> u32 {
    let digest = ChecksumAlgorithm::Crc32.checksum(data);
    u32::from_be_bytes(digest.try_into().unwrap_or_default())
}

/// A gzip member holding `data` (deflate, then CRC-32 and length).
pub fn compress(data: &[u8]) -> Vec<u8> {
    let mut out = vec![MAGIC[0], MAGIC[1], MAGIC[2], 0, 0, 0, 0, 0, 0, 0xff];
    out.extend(miniz_oxide::deflate::compress_to_vec(data, 6));
    out.extend_from_slice(&crc32(data).to_le_bytes());
    out.extend_from_slice(&(data.len() as u32).to_le_bytes());
    out
}

/// [`compress`] on a blocking thread, for bodies large enough to hold an async worker.
pub async fn compress_blocking(data: Vec<u8>) -> roto_core::AwsResult<Vec<u8>> {
    crate::blocking::run(move || Ok(compress(&data))).await
}

/// [`decompress`] on a blocking thread.
pub async fn decompress_blocking(data: Vec<u8>) -> Result<Vec<u8>, String> {
    crate::blocking::run(move || Ok(decompress(&data)))
        .await
        .unwrap_or_else(|e| Err(e.message))
}

/// What a gzip file holds: every member's data, one after another, each checked against
/// its CRC-32 and length. The error says what is wrong.
pub fn decompress(data: &[u8]) -> Result<Vec<u8>, String> {
    decompress_within(data, usize::MAX)
}

/// [`decompress`], failing once the data would grow past `max` bytes (request bodies a
/// client compressed, which must not inflate without bound).
pub fn decompress_within(mut data: &[u8], max: usize) -> Result<Vec<u8>, String> {
    let mut out = Vec::new();
    while !data.is_empty() {
        let body = member_body(data)?;
        let start = out.len();
        let consumed = inflate_raw(body, &mut out, max)?;
        let trailer = body
            .get(consumed..consumed + 8)
            .ok_or("the gzip data is truncated")?;
        let (crc, len) = trailer.split_at(4);
        let member = &out[start..];
        if u32::from_le_bytes(crc.try_into().unwrap_or_default()) != crc32(member)
            || u32::from_le_bytes(len.try_into().unwrap_or_default()) != member.len() as u32
        {
            return Err("the gzip data fails its checksum".into());
        }
        data = &body[consumed + 8..];
    }
    Ok(out)
}

/// The deflate stream of a member and all that follows it, past the member's header.
fn member_body(data: &[u8]) -> Result<&[u8], String> {
    if data.len() < 10 || data[..3] != MAGIC {
        return Err("the data is not in gzip format".into());
    }
    let flags = data[3];
    let mut at = 10;
    let truncated = || "the gzip header is truncated".to_string();
    if flags & FEXTRA != 0 {
        let len = data.get(at..at + 2).ok_or_else(truncated)?;
        at += 2 + usize::from(u16::from_le_bytes([len[0], len[1]]));
    }
    for flag in [FNAME, FCOMMENT] {
        if flags & flag != 0 {
            let end = data
                .get(at..)
                .and_then(|rest| rest.iter().position(|&b| b == 0))
                .ok_or_else(truncated)?;
            at += end + 1;
        }
    }
    if flags & FHCRC != 0 {
        at += 2;
    }
    data.get(at..).ok_or_else(truncated)
}

/// Inflates one raw deflate stream from the start of `input` onto `out`; returns how many
/// input bytes it took.
fn inflate_raw(input: &[u8], out: &mut Vec<u8>, max: usize) -> Result<usize, String> {
    let mut state = InflateState::new_boxed(DataFormat::Raw);
    let mut buffer = vec![0u8; 64 * 1024];
    let mut consumed = 0;
    loop {
        let result = inflate(&mut state, &input[consumed..], &mut buffer, MZFlush::None);
        consumed += result.bytes_consumed;
        out.extend_from_slice(&buffer[..result.bytes_written]);
        if out.len() > max {
            return Err(format!("the gzip data inflates past {max} bytes"));
        }
        match result.status {
            Ok(MZStatus::StreamEnd) => return Ok(consumed),
            Ok(_) if result.bytes_consumed > 0 || result.bytes_written > 0 => {}
            _ => return Err("the gzip data is corrupt".into()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn members_carry_a_standard_crc_and_inflate_back() {
        assert_eq!(crc32(b"123456789"), 0xCBF4_3926);
        let z = compress(b"hello hello hello");
        assert_eq!(&z[..3], &MAGIC);
        assert_eq!(decompress(&z).unwrap(), b"hello hello hello");
    }

    #[test]
    fn inflating_stops_at_the_bound() {
        let z = compress(&[0u8; 200_000]);
        assert!(decompress_within(&z, 100_000).is_err());
        assert_eq!(decompress_within(&z, 200_000).unwrap().len(), 200_000);
    }

    #[test]
    fn concatenated_members_and_header_fields_are_read() {
        let mut both = compress(b"one ");
        let mut named = compress(b"two");
        named[3] = FNAME;
        named.splice(10..10, b"file.json\0".iter().copied());
        both.extend(named);
        assert_eq!(decompress(&both).unwrap(), b"one two");
        assert_eq!(decompress(&compress(b"")).unwrap(), b"");
        let large: Vec<u8> = (0..300_000u32).map(|i| (i * 7 % 251) as u8).collect();
        assert_eq!(decompress(&compress(&large)).unwrap(), large);
    }

    #[test]
    fn damage_is_reported() {
        assert!(decompress(b"plain text").is_err());
        let mut z = compress(b"hello");
        let last = z.len() - 5;
        z[last] ^= 1;
        assert_eq!(
            decompress(&z).unwrap_err(),
            "the gzip data fails its checksum"
        );
        let z = compress(b"hello");
        assert!(decompress(&z[..z.len() - 3]).is_err());
    }
}
