//! GetObjectTorrent: the object as a BitTorrent metainfo file, bencoded as S3 produced it
//! (S3's tracker as `announce`, the object's URL as a web seed in `url-list`, 256 KiB
//! pieces with their SHA-1s, and the bucket and key in `x-amz-bucket`/`x-amz-key`).
//!
//! The pieces are hashed on a blocking thread from the object's blob, read a piece at a
//! time; S3 refuses objects of 5 GB and more, and those encrypted with SSE-C.

use std::io::Read;

use roto_core::store::BlobReader;
use roto_core::{AwsResult, Response, Value};
use sha1::{Digest, Sha1};

use super::body::memory_body;
use super::versions::Found;
use super::{errors, input_str, S3};

/// The piece length S3's torrents use.
const PIECE: usize = 256 * 1024;
/// The tracker S3's torrents announce to.
const TRACKER: &str = "http://s3-tracker.amazonaws.com:6969/announce";
/// S3 makes torrents only of objects smaller than this.
const MAX_SIZE: i64 = 5_368_709_120;

/// A bencoded value, written in its canonical form (dictionary keys sorted).
enum Bencode {
    Int(i64),
    Bytes(Vec<u8>),
    List(Vec<Bencode>),
    Dict(Vec<(&'static str, Bencode)>),
}

impl Bencode {
    fn text(s: &str) -> Bencode {
        Bencode::Bytes(s.as_bytes().to_vec())
    }

    fn write(&self, out: &mut Vec<u8>) {
        match self {
            Bencode::Int(n) => out.extend_from_slice(format!("i{n}e").as_bytes()),
            Bencode::Bytes(b) => {
                out.extend_from_slice(format!("{}:", b.len()).as_bytes());
                out.extend_from_slice(b);
            }
            Bencode::List(items) => {
                out.push(b'l');
                for item in items {
                    item.write(out);
                }
                out.push(b'e');
            }
            Bencode::Dict(entries) => {
                let mut sorted: Vec<_> = entries.iter().collect();
                sorted.sort_by_key(|(k, _)| *k);
                out.push(b'd');
                for (key, value) in sorted {
                    Bencode::text(key).write(out);
                    value.write(out);
                }
                out.push(b'e');
            }
        }
    }
}

/// The concatenated SHA-1s of the blob's pieces.
fn piece_hashes(blob: BlobReader) -> AwsResult<Vec<u8>> {
    let mut reader: Box<dyn Read + Send> = match blob {
        BlobReader::File(f) => Box::new(f),
        BlobReader::Memory(bytes) => Box::new(std::io::Cursor::new(bytes)),
    };
    let mut hashes = Vec::new();
    let mut piece = vec![0; PIECE];
    loop {
        let mut filled = 0;
        while filled < PIECE {
            let n = reader.read(&mut piece[filled..])?;
            if n == 0 {
                break;
            }
            filled += n;
        }
        if filled == 0 {
            return Ok(hashes);
        }
        hashes.extend_from_slice(&Sha1::digest(&piece[..filled]));
        if filled < PIECE {
            return Ok(hashes);
        }
    }
}

/// The metainfo file of `key` in `bucket`, `size` bytes with piece hashes `pieces`.
fn metainfo(bucket: &str, key: &str, size: i64, pieces: Vec<u8>) -> Vec<u8> {
    let name = key.rsplit('/').next().unwrap_or(key);
    let url = format!("http://{bucket}.s3.amazonaws.com/{key}");
    let info = Bencode::Dict(vec![
        ("length", Bencode::Int(size)),
        ("name", Bencode::text(name)),
        ("piece length", Bencode::Int(PIECE as i64)),
        ("pieces", Bencode::Bytes(pieces)),
        ("x-amz-bucket", Bencode::text(bucket)),
        ("x-amz-key", Bencode::text(key)),
    ]);
    let torrent = Bencode::Dict(vec![
        ("announce", Bencode::text(TRACKER)),
        (
            "announce-list",
            Bencode::List(vec![Bencode::List(vec![Bencode::text(TRACKER)])]),
        ),
        ("info", info),
        ("url-list", Bencode::List(vec![Bencode::text(&url)])),
    ]);
    let mut out = Vec::new();
    torrent.write(&mut out);
    out
}

impl S3 {
    pub(crate) async fn get_object_torrent(&self, input: &Value) -> AwsResult<Response> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
        let key = input_str(input, "Key").to_string();
        let (found, blob) = self.open_version(&bucket.name, &key, None, true)?;
        let Found::Object(row) = found else {
            return Err(errors::no_such_key(&key));
        };
        if row.size >= MAX_SIZE {
            return Err(errors::invalid_request(format!(
                "Torrent creation is not supported for objects larger than {MAX_SIZE}"
            )));
        }
        if super::sse::echo(&row.headers)
            .get("SSECustomerAlgorithm")
            .is_some()
        {
            return Err(errors::invalid_request(
                "Torrent creation is not supported for objects encrypted with customer-provided keys",
            ));
        }
        let blob = blob.unwrap_or(BlobReader::Memory(Vec::new()));
        let pieces = crate::blocking::run(move || piece_hashes(blob)).await?;
        let torrent = metainfo(&bucket.name, &key, row.size, pieces);
        Ok(Response::new(Value::map()).with_body(Some(memory_body(torrent))))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn metainfo_is_canonical_bencode_with_one_hash_per_piece() {
        let data = vec![7u8; PIECE + 10];
        let pieces = piece_hashes(BlobReader::Memory(data.clone())).unwrap();
        assert_eq!(pieces.len(), 40);
        assert_eq!(&pieces[20..], Sha1::digest(&data[PIECE..]).as_slice());
        let torrent = metainfo("b", "dir/f.bin", data.len() as i64, pieces);
        let text = String::from_utf8_lossy(&torrent);
        assert!(text.starts_with(
            "d8:announce45:http://s3-tracker.amazonaws.com:6969/announce13:announce-listll45:"
        ));
        assert!(
            text.contains("4:infod6:lengthi262154e4:name5:f.bin12:piece lengthi262144e6:pieces40:")
        );
        assert!(text.ends_with("12:x-amz-bucket1:b9:x-amz-key9:dir/f.bine8:url-listl35:http://b.s3.amazonaws.com/dir/f.binee"));
        assert!(piece_hashes(BlobReader::Memory(Vec::new()))
            .unwrap()
            .is_empty());
    }
}
