//! The version chain: how every write, delete and read finds and replaces an object row.
//!
//! The current version of a key is its row in `s3_objects` (absent when the key does not
//! exist or its latest version is a delete marker); every noncurrent version and every
//! delete marker is a row in `s3_versions`. A bucket never versioned keeps only current
//! rows, so a write simply replaces. Once versioning is `Enabled`, a write moves the
//! current row aside and adds one with a fresh version id; while `Suspended`, writes and
//! deletes take the `null` version id, replacing the previous null version. Each function
//! here runs inside the caller's transaction and returns the blobs no row references any
//! more, which the caller removes after the commit.

use rusqlite::{Connection, OptionalExtension, Row};

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult};

use super::{annotations, errors};

/// The columns an object row has in both tables, in [`ObjectRow::read`]'s order.
macro_rules! columns {
    () => {
        "version_id, blob, size, etag, last_modified, seq, headers, metadata, \
         checksum_algorithm, checksum, checksum_type, storage_class, tags, parts"
    };
}
pub(crate) const COLUMNS: &str = columns!();

/// One version of an object (or a delete marker) as stored.
#[derive(Debug, Clone, Default)]
pub(crate) struct ObjectRow {
    /// The version id; `None` is the `null` version.
    pub version_id: Option<String>,
    /// The blob holding the body; `None` for a delete marker.
    pub blob: Option<String>,
    pub size: i64,
    /// The quoted ETag.
    pub etag: String,
    pub last_modified: i64,
    pub seq: i64,
    /// The stored header members, as a JSON object (`ContentType`, `CacheControl`, ...).
    pub headers: String,
    /// User metadata, as a JSON object.
    pub metadata: String,
    pub checksum_algorithm: Option<String>,
    pub checksum: Option<String>,
    pub checksum_type: Option<String>,
    pub storage_class: Option<String>,
    /// Tags, as a JSON object, or `None` for none.
    pub tags: Option<String>,
    /// For a multipart object, its parts as a JSON list of `[size, checksum]`.
    pub parts: Option<String>,
    pub delete_marker: bool,
}

impl ObjectRow {
    /// Reads the [`COLUMNS`] starting at column `at`.
    pub(crate) fn read(r: &Row<'_>, at: usize) -> rusqlite::Result<ObjectRow> {
        Ok(ObjectRow {
            version_id: r.get(at)?,
            blob: r.get(at + 1)?,
            size: r.get(at + 2)?,
            etag: r.get(at + 3)?,
            last_modified: r.get(at + 4)?,
            seq: r.get(at + 5)?,
            headers: r.get(at + 6)?,
            metadata: r.get(at + 7)?,
            checksum_algorithm: r.get(at + 8)?,
            checksum: r.get(at + 9)?,
            checksum_type: r.get(at + 10)?,
            storage_class: r.get(at + 11)?,
            tags: r.get(at + 12)?,
            parts: r.get(at + 13)?,
            delete_marker: false,
        })
    }

    /// The version id as S3 shows it (`null` for the null version).
    pub(crate) fn version_label(&self) -> String {
        self.version_id.clone().unwrap_or_else(|| "null".into())
    }

    /// The storage class, `STANDARD` unless set.
    pub(crate) fn storage_class(&self) -> &str {
        self.storage_class.as_deref().unwrap_or("STANDARD")
    }

    /// Number of parts of a multipart object.
    pub(crate) fn parts(&self) -> Vec<(i64, Option<String>)> {
        self.parts
            .as_deref()
            .and_then(|p| serde_json::from_str::<Vec<(i64, Option<String>)>>(p).ok())
            .unwrap_or_default()
    }

    fn insert(&self, c: &Connection, table: &str, bucket: &str, key: &str) -> AwsResult<()> {
        let marker = if table == "s3_versions" {
            ", delete_marker"
        } else {
            ""
        };
        let values = if table == "s3_versions" { ", ?17" } else { "" };
        let sql = format!(
            "INSERT INTO {table} (bucket, key, {COLUMNS}{marker})
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, ?14, ?15, ?16{values})"
        );
        let mut stmt = c.prepare_cached(&sql)?;
        let params: [&dyn rusqlite::ToSql; 17] = [
            &bucket,
            &key,
            &self.version_id,
            &self.blob,
            &self.size,
            &self.etag,
            &self.last_modified,
            &self.seq,
            &self.headers,
            &self.metadata,
            &self.checksum_algorithm,
            &self.checksum,
            &self.checksum_type,
            &self.storage_class,
            &self.tags,
            &self.parts,
            &self.delete_marker,
        ];
        let n = if table == "s3_versions" { 17 } else { 16 };
        stmt.execute(&params[..n])?;
        Ok(())
    }
}

/// A fresh version id: 32 URL-safe characters, like AWS's opaque ids.
pub(crate) fn new_version_id() -> String {
    const ALPHABET: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789._";
    (0..32)
        .map(|_| ALPHABET[fastrand::usize(..ALPHABET.len())] as char)
        .collect()
}

/// What a lookup of a key (and perhaps a version) found.
pub(crate) enum Found {
    Object(ObjectRow),
    DeleteMarker(ObjectRow),
}

/// The current row of a key.
pub(crate) fn current(c: &Connection, bucket: &str, key: &str) -> AwsResult<Option<ObjectRow>> {
    // Spelled out at compile time: every GetObject and PutObject runs it.
    const CURRENT: &str = concat!(
        "SELECT ",
        columns!(),
        " FROM s3_objects WHERE bucket = ?1 AND key = ?2"
    );
    Ok(c.prepare_cached(CURRENT)?
        .query_row([bucket, key], |r| ObjectRow::read(r, 0))
        .optional()?)
}

/// The newest row of a key in `s3_versions`.
fn newest_noncurrent(c: &Connection, bucket: &str, key: &str) -> AwsResult<Option<ObjectRow>> {
    let sql = format!(
        "SELECT {COLUMNS}, delete_marker FROM s3_versions WHERE bucket = ?1 AND key = ?2
         ORDER BY seq DESC LIMIT 1"
    );
    Ok(c.prepare_cached(&sql)?
        .query_row([bucket, key], |r| {
            let mut row = ObjectRow::read(r, 0)?;
            row.delete_marker = r.get(14)?;
            Ok(row)
        })
        .optional()?)
}

/// The `null`-aware version id parameter (`null` names the row whose id is NULL).
fn version_param(version: &str) -> Option<&str> {
    (version != "null").then_some(version)
}

/// Looks a key up: its latest version, or the version named. A missing key is
/// `NoSuchKey` (with the delete-marker headers when its latest version is one); a
/// missing version `NoSuchVersion`.
pub(crate) fn find(
    c: &Connection,
    bucket: &str,
    key: &str,
    version: Option<&str>,
) -> AwsResult<Found> {
    let Some(version) = version else {
        if let Some(row) = current(c, bucket, key)? {
            return Ok(Found::Object(row));
        }
        return match newest_noncurrent(c, bucket, key)? {
            Some(marker) if marker.delete_marker => Err(errors::no_such_key(key)
                .with_header("x-amz-delete-marker", "true")
                .with_header("x-amz-version-id", marker.version_label())),
            _ => Err(errors::no_such_key(key)),
        };
    };
    let id = version_param(version);
    if let Some(row) = current(c, bucket, key)?.filter(|r| r.version_id.as_deref() == id) {
        return Ok(Found::Object(row));
    }
    let sql = format!(
        "SELECT {COLUMNS}, delete_marker FROM s3_versions
         WHERE bucket = ?1 AND key = ?2 AND version_id IS ?3"
    );
    let row = c
        .prepare_cached(&sql)?
        .query_row(rusqlite::params![bucket, key, id], |r| {
            let mut row = ObjectRow::read(r, 0)?;
            row.delete_marker = r.get(14)?;
            Ok(row)
        })
        .optional()?;
    match row {
        Some(row) if row.delete_marker => Ok(Found::DeleteMarker(row)),
        Some(row) => Ok(Found::Object(row)),
        None if id.is_some() && !plausible_version_id(version) => {
            Err(errors::invalid_version_id(version))
        }
        None => Err(errors::no_such_version(key, version)),
    }
}

/// Whether a version id could be one this server issued.
fn plausible_version_id(version: &str) -> bool {
    version.len() == 32
        && version
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'.' || b == b'_')
}

/// Moves the current row aside (or drops it when it is the null version and the new
/// write also takes the null id); drops any noncurrent null version likewise.
fn retire_current(
    c: &Connection,
    bucket: &str,
    key: &str,
    versioning: Option<&str>,
    new_is_null: bool,
    garbage: &mut Vec<String>,
) -> AwsResult<()> {
    if let Some(old) = current(c, bucket, key)? {
        c.prepare_cached("DELETE FROM s3_objects WHERE bucket = ?1 AND key = ?2")?
            .execute([bucket, key])?;
        if versioning.is_none() || (new_is_null && old.version_id.is_none()) {
            annotations::remove_version(c, bucket, key, old.seq)?;
            garbage.extend(old.blob);
        } else {
            old.insert(c, "s3_versions", bucket, key)?;
        }
    }
    if new_is_null && versioning.is_some() {
        let dropped: Vec<(Option<String>, i64)> = c
            .prepare_cached(
                "DELETE FROM s3_versions WHERE bucket = ?1 AND key = ?2 AND version_id IS NULL
                 RETURNING blob, seq",
            )?
            .query_map([bucket, key], |r| Ok((r.get(0)?, r.get(1)?)))?
            .collect::<Result<_, _>>()?;
        for (blob, seq) in dropped {
            annotations::remove_version(c, bucket, key, seq)?;
            garbage.extend(blob);
        }
    }
    Ok(())
}

/// Makes `row` the current version of a key under the bucket's versioning status (setting
/// its version id), and returns the blobs no longer referenced.
pub(crate) fn put_current(
    c: &Connection,
    bucket: &str,
    key: &str,
    versioning: Option<&str>,
    row: &mut ObjectRow,
) -> AwsResult<Vec<String>> {
    let enabled = versioning == Some("Enabled");
    row.version_id = enabled.then(new_version_id);
    let mut garbage = Vec::new();
    retire_current(c, bucket, key, versioning, !enabled, &mut garbage)?;
    row.delete_marker = false;
    row.insert(c, "s3_objects", bucket, key)?;
    Ok(garbage)
}

/// What a delete did: the version id it created or removed, and whether that is a
/// delete marker.
#[derive(Debug, Default)]
pub(crate) struct Deleted {
    pub version_id: Option<String>,
    pub delete_marker: bool,
    pub garbage: Vec<String>,
    /// Whether an object (not a marker, not nothing) was removed or hidden.
    pub removed_object: bool,
}

/// Deletes a key's latest version: removes it in a bucket never versioned, else adds a
/// delete marker.
pub(crate) fn delete_latest(
    c: &Connection,
    bucket: &str,
    key: &str,
    versioning: Option<&str>,
    seq: i64,
    now: i64,
) -> AwsResult<Deleted> {
    let mut out = Deleted {
        removed_object: current(c, bucket, key)?.is_some(),
        ..Deleted::default()
    };
    let Some(status) = versioning else {
        retire_current(c, bucket, key, None, true, &mut out.garbage)?;
        return Ok(out);
    };
    let enabled = status == "Enabled";
    retire_current(c, bucket, key, versioning, !enabled, &mut out.garbage)?;
    let marker = ObjectRow {
        version_id: enabled.then(new_version_id),
        etag: String::new(),
        last_modified: now,
        seq,
        headers: "{}".into(),
        metadata: "{}".into(),
        delete_marker: true,
        ..ObjectRow::default()
    };
    marker.insert(c, "s3_versions", bucket, key)?;
    out.version_id = Some(marker.version_label());
    out.delete_marker = true;
    Ok(out)
}

/// Permanently deletes one version (or delete marker); the newest remaining version
/// becomes current if it is an object. A version that does not exist is no error; an
/// object version `protect` refuses (Object Lock) is kept and the refusal returned.
pub(crate) fn delete_version(
    c: &Connection,
    bucket: &str,
    key: &str,
    version: &str,
    protect: &dyn Fn(&ObjectRow) -> AwsResult<()>,
) -> AwsResult<Deleted> {
    let id = version_param(version);
    let mut out = Deleted {
        version_id: Some(version.to_string()),
        ..Deleted::default()
    };
    if let Some(row) = current(c, bucket, key)?.filter(|r| r.version_id.as_deref() == id) {
        protect(&row)?;
        c.prepare_cached("DELETE FROM s3_objects WHERE bucket = ?1 AND key = ?2")?
            .execute([bucket, key])?;
        annotations::remove_version(c, bucket, key, row.seq)?;
        out.garbage.extend(row.blob);
        out.removed_object = true;
        promote_newest(c, bucket, key)?;
        return Ok(out);
    }
    let sql = format!(
        "SELECT {COLUMNS}, delete_marker FROM s3_versions
         WHERE bucket = ?1 AND key = ?2 AND version_id IS ?3"
    );
    let row = c
        .prepare_cached(&sql)?
        .query_row(rusqlite::params![bucket, key, id], |r| {
            let mut row = ObjectRow::read(r, 0)?;
            row.delete_marker = r.get(14)?;
            Ok(row)
        })
        .optional()?;
    let Some(row) = row else {
        if id.is_some() && !plausible_version_id(version) {
            return Err(errors::invalid_version_id(version));
        }
        return Ok(out);
    };
    if !row.delete_marker {
        protect(&row)?;
    }
    c.prepare_cached("DELETE FROM s3_versions WHERE bucket = ?1 AND key = ?2 AND seq = ?3")?
        .execute(rusqlite::params![bucket, key, row.seq])?;
    if !row.delete_marker {
        annotations::remove_version(c, bucket, key, row.seq)?;
    }
    out.garbage.extend(row.blob);
    out.delete_marker = row.delete_marker;
    out.removed_object = !row.delete_marker;
    if row.delete_marker && current(c, bucket, key)?.is_none() {
        promote_newest(c, bucket, key)?;
    }
    Ok(out)
}

/// Makes the newest noncurrent version of a key current, if it is an object.
fn promote_newest(c: &Connection, bucket: &str, key: &str) -> AwsResult<()> {
    if let Some(next) = newest_noncurrent(c, bucket, key)?.filter(|r| !r.delete_marker) {
        c.prepare_cached("DELETE FROM s3_versions WHERE bucket = ?1 AND key = ?2 AND seq = ?3")?
            .execute(rusqlite::params![bucket, key, next.seq])?;
        next.insert(c, "s3_objects", bucket, key)?;
    }
    Ok(())
}

/// Looks a key (or one version) up as [`find`] does, for an operation that needs an
/// object: a delete marker is `MethodNotAllowed` for `method`.
pub(crate) fn find_object(
    c: &Connection,
    bucket: &str,
    key: &str,
    version: Option<&str>,
    method: &str,
) -> AwsResult<ObjectRow> {
    match find(c, bucket, key, version)? {
        Found::Object(row) => Ok(row),
        Found::DeleteMarker(row) => Err(errors::delete_marker_method(&row, method)),
    }
}

/// Changes one version of a key (its tags or stored headers) in place: `change` gets the
/// row and may refuse; a delete marker is `MethodNotAllowed` for `method`. Returns the
/// changed row.
pub(crate) fn update_version(
    c: &Connection,
    bucket: &str,
    key: &str,
    version: Option<&str>,
    method: &str,
    change: impl FnOnce(&mut ObjectRow) -> AwsResult<()>,
) -> AwsResult<ObjectRow> {
    let mut row = find_object(c, bucket, key, version, method)?;
    change(&mut row)?;
    for table in ["s3_objects", "s3_versions"] {
        let sql = format!(
            "UPDATE {table} SET tags = ?4, headers = ?5 WHERE bucket = ?1 AND key = ?2 AND seq = ?3"
        );
        let n = c.prepare_cached(&sql)?.execute(rusqlite::params![
            bucket,
            key,
            row.seq,
            row.tags,
            row.headers
        ])?;
        if n > 0 {
            break;
        }
    }
    Ok(row)
}

/// Whether a bucket holds any object, version or delete marker.
pub(crate) fn bucket_has_objects(c: &Connection, bucket: &str) -> Result<bool, AwsError> {
    Ok(c.query_row_cached(
        "SELECT EXISTS (SELECT 1 FROM s3_objects WHERE bucket = ?1)
             OR EXISTS (SELECT 1 FROM s3_versions WHERE bucket = ?1)",
        [bucket],
        |r| r.get(0),
    )?)
}
