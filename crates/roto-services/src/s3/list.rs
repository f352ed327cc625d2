//! ListObjectsV2: prefix, delimiter, pagination by opaque tokens.
//!
//! Keys are read in UTF-8 byte order straight from the `(bucket, key)` primary key, in
//! batches that seek past the last key seen (never `OFFSET`), so a page costs the same in a
//! bucket of a thousand keys or a million. A common prefix is skipped in one seek. The
//! continuation token is the base64 of the position to resume after.

use base64::Engine;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use roto_core::{AwsError, AwsResult, Value};

use super::errors;
use super::{input_str, owner, S3};

/// Characters left as they are by `EncodingType=url` (the unreserved set and `/`).
const URL_SAFE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~')
    .remove(b'/');

/// Sorts after every key that starts with a given prefix (short of U+10FFFF itself).
const PAST_PREFIX: char = '\u{10FFFF}';

/// How many keys one batch reads.
const BATCH: i64 = 1000;

/// One listed key.
struct Entry {
    key: String,
    size: i64,
    etag: String,
    last_modified: i64,
    checksum_algorithm: Option<String>,
}

/// A page: keys, common prefixes, and where to resume if truncated.
struct Page {
    entries: Vec<Entry>,
    prefixes: Vec<String>,
    next: Option<String>,
}

impl S3 {
    /// Reads up to `max` keys and common prefixes after `after` under `prefix`.
    fn page(
        &self,
        bucket: &str,
        prefix: &str,
        delimiter: &str,
        after: &str,
        max: usize,
    ) -> AwsResult<Page> {
        let mut page = Page {
            entries: Vec::new(),
            prefixes: Vec::new(),
            next: None,
        };
        let mut cursor = after.to_string();
        let mut inclusive = prefix > after;
        if inclusive {
            cursor = prefix.to_string();
        }
        loop {
            let batch = self.batch(bucket, &cursor, inclusive)?;
            let exhausted = (batch.len() as i64) < BATCH;
            inclusive = false;
            let mut skipped = false;
            for entry in batch {
                if !entry.key.starts_with(prefix) {
                    return Ok(page);
                }
                let rest = &entry.key[prefix.len()..];
                let common = (!delimiter.is_empty())
                    .then(|| rest.find(delimiter))
                    .flatten()
                    .map(|i| format!("{prefix}{}", &rest[..i + delimiter.len()]));
                if page.entries.len() + page.prefixes.len() >= max {
                    page.next = page
                        .prefixes
                        .last()
                        .filter(|p| page.entries.last().is_none_or(|e| e.key < **p))
                        .map(|p| format!("{p}{PAST_PREFIX}"))
                        .or_else(|| page.entries.last().map(|e| e.key.clone()));
                    return Ok(page);
                }
                match common {
                    Some(cp) => {
                        cursor = format!("{cp}{PAST_PREFIX}");
                        page.prefixes.push(cp);
                        skipped = true;
                        break;
                    }
                    None => {
                        cursor = entry.key.clone();
                        page.entries.push(entry);
                    }
                }
            }
            if exhausted && !skipped {
                return Ok(page);
            }
        }
    }

    fn batch(&self, bucket: &str, cursor: &str, inclusive: bool) -> AwsResult<Vec<Entry>> {
        let sql = if inclusive {
            "SELECT key, size, etag, last_modified, checksum_algorithm FROM s3_objects
             WHERE bucket = ?1 AND key >= ?2 ORDER BY key LIMIT ?3"
        } else {
            "SELECT key, size, etag, last_modified, checksum_algorithm FROM s3_objects
             WHERE bucket = ?1 AND key > ?2 ORDER BY key LIMIT ?3"
        };
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let rows = stmt.query_map(rusqlite::params![bucket, cursor, BATCH], |r| {
                Ok(Entry {
                    key: r.get(0)?,
                    size: r.get(1)?,
                    etag: r.get(2)?,
                    last_modified: r.get(3)?,
                    checksum_algorithm: r.get(4)?,
                })
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    pub(crate) fn list_objects_v2(&self, input: &Value) -> AwsResult<Value> {
        let name = input_str(input, "Bucket");
        let bucket = self.bucket(name)?;
        let prefix = input_str(input, "Prefix");
        let delimiter = input_str(input, "Delimiter");
        let encoding = input.str("EncodingType");
        if let Some(e) = encoding.filter(|e| *e != "url") {
            return Err(errors::invalid_argument(
                "Invalid Encoding Method specified in Request",
                "encoding-type",
                e,
            ));
        }
        let max_keys = input.int("MaxKeys").unwrap_or(1000);
        if max_keys < 0 {
            return Err(errors::invalid_argument(
                "Argument maxKeys must be an integer between 0 and 2147483647",
                "maxKeys",
                &max_keys.to_string(),
            ));
        }
        let token = input.str("ContinuationToken");
        let start_after = input_str(input, "StartAfter");
        let after = match token {
            Some(t) => decode_token(t).ok_or_else(|| {
                errors::invalid_argument(
                    "The continuation token provided is incorrect",
                    "continuation-token",
                    t,
                )
            })?,
            None => start_after.to_string(),
        };
        let max = usize::try_from(max_keys.min(1000)).unwrap_or(1000);
        let page = if max == 0 {
            Page {
                entries: Vec::new(),
                prefixes: Vec::new(),
                next: None,
            }
        } else {
            self.page(&bucket.name, prefix, delimiter, &after, max)?
        };
        let enc = |s: &str| match encoding {
            Some(_) => utf8_percent_encode(s, URL_SAFE).to_string(),
            None => s.to_string(),
        };
        let fetch_owner = input.bool("FetchOwner") == Some(true);
        let contents: Vec<Value> = page
            .entries
            .iter()
            .map(|e| {
                let mut v = Value::map()
                    .with("Key", enc(&e.key))
                    .with("LastModified", Value::Timestamp(e.last_modified))
                    .with("ETag", e.etag.clone())
                    .with("Size", e.size)
                    .with("StorageClass", "STANDARD");
                if let Some(alg) = &e.checksum_algorithm {
                    v.insert("ChecksumAlgorithm", vec![Value::String(alg.clone())]);
                    v.insert("ChecksumType", "FULL_OBJECT");
                }
                if fetch_owner {
                    v.insert("Owner", owner(&bucket.account));
                }
                v
            })
            .collect();
        let key_count = contents.len() + page.prefixes.len();
        let mut out = Value::map()
            .with("Name", bucket.name.clone())
            .with("Prefix", enc(prefix))
            .with("MaxKeys", max_keys)
            .with("KeyCount", key_count)
            .with("IsTruncated", page.next.is_some())
            .with_opt("Delimiter", (!delimiter.is_empty()).then(|| enc(delimiter)))
            .with_opt("EncodingType", encoding)
            .with_opt("ContinuationToken", token)
            .with_opt(
                "StartAfter",
                (!start_after.is_empty()).then(|| enc(start_after)),
            )
            .with_opt(
                "NextContinuationToken",
                page.next.as_deref().map(encode_token),
            );
        if !contents.is_empty() {
            out.insert("Contents", contents);
        }
        if !page.prefixes.is_empty() {
            let prefixes: Vec<Value> = page
                .prefixes
                .iter()
                .map(|p| Value::map().with("Prefix", enc(p)))
                .collect();
            out.insert("CommonPrefixes", prefixes);
        }
        Ok(out)
    }
}

fn encode_token(after: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(format!("v1:{after}"))
}

fn decode_token(token: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token)
        .ok()?;
    String::from_utf8(bytes)
        .ok()?
        .strip_prefix("v1:")
        .map(str::to_string)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_round_trip_and_garbage_is_rejected() {
        assert_eq!(
            decode_token(&encode_token("a/b\u{10FFFF}")).as_deref(),
            Some("a/b\u{10FFFF}")
        );
        assert_eq!(decode_token("not base64!"), None);
        assert_eq!(
            decode_token(&base64::engine::general_purpose::STANDARD.encode("x")),
            None
        );
    }
}
