//! The numbers Kinesis shows: shard ids, hash key ranges, sequence numbers and shard
//! iterators, each a pure function of what the store keeps.
//!
//! A sequence number is 56 digits, as AWS's are: `49`, the stream's creation time (19
//! digits, so that a recreated stream's numbers are not its predecessor's), the shard's
//! index (15) and the record's per-shard counter (20), so numbers increase per shard and
//! decode back to the row they name. A shard iterator is base64 of the stream, shard,
//! position (the counter of the next record to read) and the time it was issued.

use base64::engine::general_purpose::STANDARD;
use base64::Engine;
use md5::{Digest, Md5};

/// How long a shard iterator stays valid, in milliseconds.
pub const ITERATOR_LIFETIME_MS: i64 = 300_000;

/// A shard's id as AWS writes it.
pub fn shard_id(index: i64) -> String {
    format!("shardId-{index:012}")
}

/// The index of a shard id, if it is one.
pub fn shard_index(id: &str) -> Option<i64> {
    let digits = id.strip_prefix("shardId-")?;
    if digits.len() != 12 || !digits.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    digits.parse().ok()
}

/// The 56-digit sequence number of counter `counter` in a shard.
pub fn sequence_number(stream_created: i64, shard: i64, counter: i64) -> String {
    format!("49{stream_created:019}{shard:015}{counter:020}")
}

/// The shard index and counter a sequence number of this stream encodes.
pub fn decode_sequence_number(stream_created: i64, text: &str) -> Option<(i64, i64)> {
    if text.len() != 56 || !text.bytes().all(|b| b.is_ascii_digit()) {
        return None;
    }
    let created: i64 = text.get(2..21)?.parse().ok()?;
    if created != stream_created || !text.starts_with("49") {
        return None;
    }
    Some((
        text.get(21..36)?.parse().ok()?,
        text.get(36..)?.parse().ok()?,
    ))
}

/// A 128-bit hash key as stored: zero-padded so that text order is numeric order.
pub fn stored_hash(key: u128) -> String {
    format!("{key:039}")
}

/// A stored hash key as AWS shows it.
pub fn shown_hash(stored: &str) -> String {
    stored
        .parse::<u128>()
        .map(|k| k.to_string())
        .unwrap_or_default()
}

/// The hash key of a partition key: its MD5 as a big-endian 128-bit integer.
pub fn partition_hash(partition_key: &str) -> u128 {
    u128::from_be_bytes(Md5::digest(partition_key.as_bytes()).into())
}

/// The hash key ranges of `count` shards splitting 0..2^128-1 evenly, as AWS splits them.
pub fn even_ranges(count: u128) -> Vec<(u128, u128)> {
    if count <= 1 {
        return vec![(0, u128::MAX)];
    }
    let (q, r) = (u128::MAX / count, u128::MAX % count);
    let width = if r + 1 == count { q + 1 } else { q };
    (0..count)
        .map(|i| {
            let end = if i + 1 == count {
                u128::MAX
            } else {
                (i + 1) * width - 1
            };
            (i * width, end)
        })
        .collect()
}

/// What a shard iterator holds.
#[derive(Debug, Clone, PartialEq)]
pub struct Iterator {
    /// The stream's name.
    pub stream: String,
    /// The stream's creation time, telling it from a recreated stream of the same name.
    pub stream_created: i64,
    /// The shard's index.
    pub shard: i64,
    /// The counter of the next record to read.
    pub position: i64,
    /// When it was issued, on the server clock.
    pub issued: i64,
}

impl Iterator {
    /// The iterator as the opaque token callers pass back.
    pub fn encode(&self) -> String {
        STANDARD.encode(format!(
            "{}|{}|{}|{}|{}",
            self.issued, self.stream_created, self.shard, self.position, self.stream
        ))
    }

    /// The iterator a token holds, if it is one [`Iterator::encode`] wrote.
    pub fn decode(token: &str) -> Option<Iterator> {
        let text = String::from_utf8(STANDARD.decode(token).ok()?).ok()?;
        let mut parts = text.splitn(5, '|');
        let mut number = || parts.next()?.parse::<i64>().ok();
        let (issued, stream_created, shard, position) =
            (number()?, number()?, number()?, number()?);
        Some(Iterator {
            issued,
            stream_created,
            shard,
            position,
            stream: parts.next()?.to_string(),
        })
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn ranges_split_the_key_space_as_aws_does() {
        assert_eq!(even_ranges(1), vec![(0, u128::MAX)]);
        let two = even_ranges(2);
        assert_eq!(
            two[0].1.to_string(),
            "170141183460469231731687303715884105727"
        );
        assert_eq!(
            two[1].0.to_string(),
            "170141183460469231731687303715884105728"
        );
        let three = even_ranges(3);
        assert_eq!(
            three[1].0.to_string(),
            "113427455640312821154458202477256070485"
        );
        assert_eq!(three[2].1, u128::MAX);
    }

    #[test]
    fn sequence_numbers_round_trip_and_order() {
        let a = sequence_number(1_700_000_000_000, 3, 9);
        let b = sequence_number(1_700_000_000_000, 3, 10);
        assert_eq!(a.len(), 56);
        assert!(a < b);
        assert_eq!(decode_sequence_number(1_700_000_000_000, &b), Some((3, 10)));
        assert_eq!(decode_sequence_number(1_700_000_000_001, &b), None);
        assert_eq!(decode_sequence_number(1, "49x"), None);
    }

    #[test]
    fn iterators_round_trip_and_reject_foreign_tokens() {
        let it = Iterator {
            stream: "a|b".into(),
            stream_created: 5,
            shard: 2,
            position: 7,
            issued: 11,
        };
        assert_eq!(Iterator::decode(&it.encode()), Some(it));
        assert_eq!(Iterator::decode("not base64!"), None);
        assert_eq!(Iterator::decode(&STANDARD.encode("1|2|x")), None);
    }

    #[test]
    fn shard_ids_round_trip() {
        assert_eq!(shard_id(1), "shardId-000000000001");
        assert_eq!(shard_index("shardId-000000000012"), Some(12));
        assert_eq!(shard_index("shardId-12"), None);
    }
}
