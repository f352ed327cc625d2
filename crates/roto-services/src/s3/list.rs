//! ListObjects (v1, by marker), ListObjectsV2 (by opaque tokens) and ListObjectVersions:
//! prefix, delimiter, pagination.
//!
//! Keys are read in UTF-8 byte order straight from the `(bucket, key)` primary key, in
//! batches that seek past the last key seen (never `OFFSET`), so a page costs the same in a
//! bucket of a thousand keys or a million. A common prefix is skipped in one seek. The
//! continuation token is the base64 of the position to resume after.

use base64::Engine;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use roto_core::{AwsError, AwsResult, Value};

use super::errors;
use super::versions::{self, ObjectRow, COLUMNS};
use super::{input_str, owner, Bucket, S3};

/// Characters left as they are by `EncodingType=url` (the unreserved set and `/`).
pub(crate) const URL_SAFE: &AsciiSet = &NON_ALPHANUMERIC
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
    checksum_type: Option<String>,
    storage_class: Option<String>,
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
            // One row past what the page can still take tells whether it is truncated.
            let room = max - page.entries.len() - page.prefixes.len() + 1;
            let limit = i64::try_from(room).unwrap_or(BATCH).min(BATCH);
            let batch = self.batch(bucket, &cursor, inclusive, limit)?;
            let exhausted = (batch.len() as i64) < limit;
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
                if common.as_deref() == Some(after) {
                    cursor = format!("{after}{PAST_PREFIX}");
                    skipped = true;
                    break;
                }
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

    fn batch(
        &self,
        bucket: &str,
        cursor: &str,
        inclusive: bool,
        limit: i64,
    ) -> AwsResult<Vec<Entry>> {
        let sql = if inclusive {
            "SELECT key, size, etag, last_modified, checksum_algorithm, storage_class,
                checksum_type
             FROM s3_objects WHERE bucket = ?1 AND key >= ?2 ORDER BY key LIMIT ?3"
        } else {
            "SELECT key, size, etag, last_modified, checksum_algorithm, storage_class,
                checksum_type
             FROM s3_objects WHERE bucket = ?1 AND key > ?2 ORDER BY key LIMIT ?3"
        };
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(sql)?;
            let rows = stmt.query_map(rusqlite::params![bucket, cursor, limit], |r| {
                Ok(Entry {
                    key: r.get(0)?,
                    size: r.get(1)?,
                    etag: r.get(2)?,
                    last_modified: r.get(3)?,
                    checksum_algorithm: r.get(4)?,
                    storage_class: r.get(5)?,
                    checksum_type: r.get(6)?,
                })
            })?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    /// The arguments every listing shares, checked.
    fn list_args<'a>(&self, input: &'a Value) -> AwsResult<ListArgs<'a>> {
        let bucket = self.bucket(input_str(input, "Bucket"))?;
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
        Ok(ListArgs {
            bucket,
            prefix: input_str(input, "Prefix"),
            delimiter: input_str(input, "Delimiter"),
            encoding,
            max_keys,
            max: usize::try_from(max_keys.min(1000)).unwrap_or(1000),
        })
    }

    fn list_page(&self, args: &ListArgs<'_>, after: &str) -> AwsResult<Page> {
        if args.max == 0 {
            return Ok(Page {
                entries: Vec::new(),
                prefixes: Vec::new(),
                next: None,
            });
        }
        self.page(
            &args.bucket.name,
            args.prefix,
            args.delimiter,
            after,
            args.max,
        )
    }

    pub(crate) fn list_objects(&self, input: &Value) -> AwsResult<Value> {
        let args = self.list_args(input)?;
        let marker = input_str(input, "Marker");
        let page = self.list_page(&args, marker)?;
        let mut out = args
            .header()
            .with("Marker", args.enc(marker))
            .with("IsTruncated", page.next.is_some());
        if page.next.is_some() && !args.delimiter.is_empty() {
            let last = page
                .prefixes
                .last()
                .filter(|p| page.entries.last().is_none_or(|e| e.key < **p))
                .cloned()
                .or_else(|| page.entries.last().map(|e| e.key.clone()));
            out = out.with_opt("NextMarker", last.map(|l| args.enc(&l)));
        }
        args.fill(&mut out, &page, true);
        Ok(out)
    }

    pub(crate) fn list_objects_v2(&self, input: &Value) -> AwsResult<Value> {
        let args = self.list_args(input)?;
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
        let page = self.list_page(&args, &after)?;
        let mut out = args
            .header()
            .with("KeyCount", page.entries.len() + page.prefixes.len())
            .with("IsTruncated", page.next.is_some())
            .with_opt("ContinuationToken", token)
            .with_opt(
                "StartAfter",
                (!start_after.is_empty()).then(|| args.enc(start_after)),
            )
            .with_opt(
                "NextContinuationToken",
                page.next.as_deref().map(encode_token),
            );
        args.fill(&mut out, &page, input.bool("FetchOwner") == Some(true));
        Ok(out)
    }

    /// Up to `BATCH` versions after (`key`, `seq`), newest first within a key.
    fn version_batch(
        &self,
        bucket: &str,
        prefix: &str,
        key: &str,
        seq: Option<i64>,
        limit: i64,
    ) -> AwsResult<Vec<(String, ObjectRow, bool)>> {
        let sql = format!(
            "SELECT key, {COLUMNS}, 0, 1 FROM s3_objects
               WHERE bucket = ?1 AND key >= ?5 AND (key > ?2 OR (key = ?2 AND seq < ?3))
             UNION ALL
             SELECT key, {COLUMNS}, delete_marker, 0 FROM s3_versions
               WHERE bucket = ?1 AND key >= ?5 AND (key > ?2 OR (key = ?2 AND seq < ?3))
             ORDER BY 1, 7 DESC LIMIT ?4"
        );
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(&sql)?;
            let rows = stmt.query_map(
                rusqlite::params![bucket, key, seq.unwrap_or(i64::MIN), limit, prefix],
                |r| {
                    let mut row = ObjectRow::read(r, 1)?;
                    row.delete_marker = r.get(15)?;
                    Ok((r.get(0)?, row, r.get(16)?))
                },
            )?;
            rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
        })
    }

    pub(crate) fn list_object_versions(&self, input: &Value) -> AwsResult<Value> {
        let args = self.list_args(input)?;
        let key_marker = input_str(input, "KeyMarker");
        let version_marker = input.str("VersionIdMarker").filter(|v| !v.is_empty());
        let mut seq = None;
        if let Some(v) = version_marker {
            let found = self
                .env
                .store
                .with(|c| versions::find(c, &args.bucket.name, key_marker, Some(v)));
            seq = match found {
                Ok(versions::Found::Object(r) | versions::Found::DeleteMarker(r)) => Some(r.seq),
                Err(_) => return Err(errors::invalid_version_id(v)),
            };
        }
        let mut cursor = key_marker.to_string();
        let mut versions_out = Vec::new();
        let mut markers_out = Vec::new();
        let mut prefixes: Vec<String> = Vec::new();
        let mut last_key: Option<String> = (seq.is_some()).then(|| key_marker.to_string());
        let mut next: Option<(String, Option<String>)> = None;
        let mut truncated = false;
        let owner_value = owner(&args.bucket.account);
        'scan: loop {
            let room = args.max - versions_out.len() - markers_out.len() - prefixes.len() + 1;
            let limit = i64::try_from(room).unwrap_or(BATCH).min(BATCH);
            let batch = self.version_batch(&args.bucket.name, args.prefix, &cursor, seq, limit)?;
            let exhausted = (batch.len() as i64) < limit;
            let mut skipped = false;
            for (key, row, is_current) in batch {
                if !key.starts_with(args.prefix) {
                    break 'scan;
                }
                let rest = &key[args.prefix.len()..];
                let common = (!args.delimiter.is_empty())
                    .then(|| rest.find(args.delimiter))
                    .flatten()
                    .map(|i| format!("{}{}", args.prefix, &rest[..i + args.delimiter.len()]));
                let count = versions_out.len() + markers_out.len() + prefixes.len();
                if count >= args.max {
                    truncated = true;
                    break 'scan;
                }
                if let Some(cp) = common {
                    cursor = format!("{cp}{PAST_PREFIX}");
                    seq = None;
                    next = Some((cp.clone(), None));
                    prefixes.push(cp);
                    skipped = true;
                    break;
                }
                let latest = is_current || (row.delete_marker && last_key.as_deref() != Some(&key));
                last_key = Some(key.clone());
                cursor = key.clone();
                seq = Some(row.seq);
                next = Some((key.clone(), Some(row.version_label())));
                let mut entry = Value::map()
                    .with("Key", args.enc(&key))
                    .with("VersionId", row.version_label())
                    .with("IsLatest", latest)
                    .with("LastModified", Value::Timestamp(row.last_modified))
                    .with("Owner", owner_value.clone());
                if row.delete_marker {
                    markers_out.push(entry);
                } else {
                    entry.insert("ETag", row.etag.clone());
                    entry.insert("Size", row.size);
                    entry.insert("StorageClass", row.storage_class());
                    if let Some(alg) = &row.checksum_algorithm {
                        entry.insert("ChecksumAlgorithm", vec![Value::String(alg.clone())]);
                        entry.insert(
                            "ChecksumType",
                            row.checksum_type.clone().unwrap_or("FULL_OBJECT".into()),
                        );
                    }
                    versions_out.push(entry);
                }
            }
            if exhausted && !skipped {
                break;
            }
        }
        let mut out = args
            .header()
            .with("KeyMarker", args.enc(key_marker))
            .with("VersionIdMarker", version_marker.unwrap_or_default())
            .with("IsTruncated", truncated);
        if truncated {
            if let Some((k, v)) = next {
                out.insert("NextKeyMarker", args.enc(&k));
                out = out.with_opt("NextVersionIdMarker", v);
            }
        }
        out.remove("Contents");
        if !versions_out.is_empty() {
            out.insert("Versions", versions_out);
        }
        if !markers_out.is_empty() {
            out.insert("DeleteMarkers", markers_out);
        }
        if !prefixes.is_empty() {
            let prefixes: Vec<Value> = prefixes
                .iter()
                .map(|p| Value::map().with("Prefix", args.enc(p)))
                .collect();
            out.insert("CommonPrefixes", prefixes);
        }
        Ok(out)
    }
}

/// What ListObjects, ListObjectsV2 and ListObjectVersions share.
struct ListArgs<'a> {
    bucket: Bucket,
    prefix: &'a str,
    delimiter: &'a str,
    encoding: Option<&'a str>,
    max_keys: i64,
    max: usize,
}

impl ListArgs<'_> {
    /// A name, prefix or key as the response shows it (`EncodingType=url` encodes).
    fn enc(&self, s: &str) -> String {
        match self.encoding {
            Some(_) => utf8_percent_encode(s, URL_SAFE).to_string(),
            None => s.to_string(),
        }
    }

    /// `Name`, `Prefix`, `Delimiter`, `MaxKeys`, `EncodingType`.
    fn header(&self) -> Value {
        Value::map()
            .with("Name", self.bucket.name.clone())
            .with("Prefix", self.enc(self.prefix))
            .with("MaxKeys", self.max_keys)
            .with_opt(
                "Delimiter",
                (!self.delimiter.is_empty()).then(|| self.enc(self.delimiter)),
            )
            .with_opt("EncodingType", self.encoding)
    }

    /// `Contents` and `CommonPrefixes` of a page.
    fn fill(&self, out: &mut Value, page: &Page, with_owner: bool) {
        let contents: Vec<Value> = page
            .entries
            .iter()
            .map(|e| {
                let mut v = Value::map()
                    .with("Key", self.enc(&e.key))
                    .with("LastModified", Value::Timestamp(e.last_modified))
                    .with("ETag", e.etag.clone())
                    .with("Size", e.size)
                    .with(
                        "StorageClass",
                        e.storage_class.clone().unwrap_or("STANDARD".into()),
                    );
                if let Some(alg) = &e.checksum_algorithm {
                    v.insert("ChecksumAlgorithm", vec![Value::String(alg.clone())]);
                    v.insert(
                        "ChecksumType",
                        e.checksum_type.clone().unwrap_or("FULL_OBJECT".into()),
                    );
                }
                if with_owner {
                    v.insert("Owner", owner(&self.bucket.account));
                }
                v
            })
            .collect();
        if !contents.is_empty() {
            out.insert("Contents", contents);
        }
        if !page.prefixes.is_empty() {
            let prefixes: Vec<Value> = page
                .prefixes
                .iter()
                .map(|p| Value::map().with("Prefix", self.enc(p)))
                .collect();
            out.insert("CommonPrefixes", prefixes);
        }
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
