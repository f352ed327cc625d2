//! Start-up care of a store on disk, kept apart from the store's read and write paths.
//!
//! A `kill -9` can leave behind what no row references: the `.part` file of a blob being
//! written, or a finished blob (a file, or an inline `roto_blobs` row) whose referencing
//! commit never happened. The store cannot know which service columns hold blob ids, so each
//! service declares its own ([`Store::register_blob_column`]) where it migrates its schema,
//! and the server runs [`Store::sweep_orphans`] once, after every service is built and
//! before anything can write a blob: one pass over the blob directory against the set of
//! referenced ids. Declarations are also kept in the database, so a build that does not
//! know a newer service's columns still keeps that service's blobs. A damaged `roto.db` is refused when the store opens (`PRAGMA
//! quick_check`) rather than met later as a 500 or an altered value, and every error about
//! a data directory names the flag and the path it came from.

use std::collections::HashSet;
use std::fmt::Display;
use std::io;
use std::path::{Path, PathBuf};

use rusqlite::{Connection, ErrorCode};

use super::{Store, StoreMode, INLINE_PREFIX};

/// The flag a data directory comes from, as errors name it.
const FLAG: &str = "--data-dir";

/// What a sweep removed.
#[derive(Debug, Default, Clone, Copy, PartialEq, Eq)]
pub struct Sweep {
    /// Blob and `.part` files removed.
    pub files: u64,
    /// Their total size in bytes.
    pub bytes: u64,
    /// Inline blob rows removed.
    pub rows: u64,
}

/// An error about a data directory, naming the flag and the path.
fn in_dir(dir: &Path, what: impl Display) -> io::Error {
    io::Error::other(format!("{FLAG} {}: {what}", dir.display()))
}

/// An I/O error's text without Rust's `(os error N)` suffix.
fn reason(e: &io::Error) -> String {
    let text = e.to_string();
    match text.rsplit_once(" (os error ") {
        Some((reason, _)) => reason.to_string(),
        None => text,
    }
}

/// Creates a data directory and its blob directory; returns the blob directory.
pub(super) fn prepare_dir(dir: &Path) -> io::Result<PathBuf> {
    let blobs = dir.join("blobs");
    std::fs::create_dir_all(&blobs).map_err(|e| {
        in_dir(
            dir,
            format_args!("cannot create {}: {}", blobs.display(), reason(&e)),
        )
    })?;
    Ok(blobs)
}

/// Opens a data directory's `roto.db` in WAL mode with the given `synchronous` level.
pub(super) fn open_database(dir: &Path, synchronous: &str) -> io::Result<Connection> {
    let fail = |e| opening_error(dir, e);
    let conn = Connection::open(database(dir)).map_err(fail)?;
    conn.execute_batch(&format!(
        "PRAGMA journal_mode=WAL; PRAGMA synchronous={synchronous}; PRAGMA busy_timeout=5000;"
    ))
    .map_err(fail)?;
    Ok(conn)
}

/// Puts the data directory's entries (the WAL file's among them) on disk.
pub(super) fn sync_dir(dir: &Path) -> io::Result<()> {
    std::fs::File::open(dir)
        .and_then(|d| d.sync_all())
        .map_err(|e| {
            in_dir(
                dir,
                format_args!("cannot sync the directory: {}", reason(&e)),
            )
        })
}

/// Refuses a damaged database: `PRAGMA quick_check` checks every page's structure (not
/// the indexes' agreement with their tables, which a full `integrity_check` adds).
pub(super) fn check_integrity(dir: &Path, conn: &Connection) -> io::Result<()> {
    let problems = conn
        .prepare("PRAGMA quick_check(5)")
        .and_then(|mut st| {
            st.query_map([], |r| r.get::<_, String>(0))?
                .collect::<rusqlite::Result<Vec<_>>>()
        })
        .map_err(|e| opening_error(dir, e))?;
    if problems.iter().all(|p| p == "ok") {
        return Ok(());
    }
    Err(damaged(
        dir,
        format_args!("quick_check: {}", problems.join("; ")),
    ))
}

/// The database file of a data directory.
pub(super) fn database(dir: &Path) -> PathBuf {
    dir.join("roto.db")
}

fn opening_error(dir: &Path, e: rusqlite::Error) -> io::Error {
    match e.sqlite_error_code() {
        Some(ErrorCode::DatabaseCorrupt | ErrorCode::NotADatabase) => damaged(dir, e),
        _ => in_dir(
            dir,
            format_args!("cannot open {}: {e}", database(dir).display()),
        ),
    }
}

fn damaged(dir: &Path, detail: impl Display) -> io::Error {
    in_dir(
        dir,
        format_args!(
            "the store {} is damaged ({detail}): restore it from a backup, or move it aside \
             (with its -wal and -shm files) to start empty",
            database(dir).display()
        ),
    )
}

/// The 128-bit value of a blob file's name: exactly 32 lower-case hex digits, as
/// `random_id` makes them; anything else is not a blob file and is never removed.
fn blob_file_id(name: &str) -> Option<u128> {
    let hex = name.len() == 32 && name.bytes().all(|b| matches!(b, b'0'..=b'9' | b'a'..=b'f'));
    hex.then(|| u128::from_str_radix(name, 16).ok()).flatten()
}

fn quote(identifier: &str) -> String {
    format!("\"{}\"", identifier.replace('"', "\"\""))
}

/// The columns to keep blobs for: this build's declarations, and those any build declared
/// in this database (kept in `roto_blob_columns`, so that a data directory opened by an
/// older build keeps the blobs of a service it does not know) that still exist.
fn declared_columns(
    conn: &Connection,
    registered: &[(String, String)],
) -> rusqlite::Result<Vec<(String, String)>> {
    conn.execute_batch(
        "CREATE TABLE IF NOT EXISTS roto_blob_columns
             (tbl TEXT NOT NULL, col TEXT NOT NULL, PRIMARY KEY (tbl, col))",
    )?;
    for (table, column) in registered {
        conn.execute(
            "INSERT OR IGNORE INTO roto_blob_columns VALUES (?1, ?2)",
            [table, column],
        )?;
    }
    conn.prepare(
        "SELECT tbl, col FROM roto_blob_columns
         WHERE EXISTS (SELECT 1 FROM pragma_table_info(tbl) WHERE name = col)",
    )?
    .query_map([], |r| Ok((r.get(0)?, r.get(1)?)))?
    .collect()
}

/// One `SELECT` of every non-null id the declared columns hold.
fn referenced_ids_sql(columns: &[(String, String)]) -> String {
    columns
        .iter()
        .map(|(table, column)| {
            let (t, c) = (quote(table), quote(column));
            format!("SELECT {c} FROM {t} WHERE {c} IS NOT NULL")
        })
        .collect::<Vec<_>>()
        .join(" UNION ALL ")
}

/// The ids of the blob files the declared columns reference.
fn referenced_files(
    conn: &Connection,
    columns: &[(String, String)],
) -> rusqlite::Result<HashSet<u128>> {
    let mut st = conn.prepare(&referenced_ids_sql(columns))?;
    let mut rows = st.query([])?;
    let mut ids = HashSet::new();
    while let Some(row) = rows.next()? {
        if let Ok(id) = row.get_ref(0)?.as_str() {
            ids.extend(blob_file_id(id));
        }
    }
    Ok(ids)
}

/// Removes the `.part` files and the blob files `referenced` does not name.
fn sweep_files(blobs: &Path, referenced: &HashSet<u128>) -> io::Result<Sweep> {
    let mut sweep = Sweep::default();
    for entry in std::fs::read_dir(blobs)? {
        let entry = entry?;
        let name = entry.file_name();
        let Some(name) = name.to_str() else { continue };
        let orphan = match name.strip_suffix(".part") {
            Some(id) => blob_file_id(id).is_some(),
            None => blob_file_id(name).is_some_and(|id| !referenced.contains(&id)),
        };
        let meta = entry.metadata()?;
        if !orphan || !meta.is_file() {
            continue;
        }
        std::fs::remove_file(entry.path())?;
        sweep.files += 1;
        sweep.bytes += meta.len();
    }
    Ok(sweep)
}

impl Store {
    /// Declares that `table.column` holds ids of blobs from [`Store::create_blob`]. Every
    /// column that keeps a blob id must be declared (where its service migrates its schema):
    /// [`Store::sweep_orphans`] removes every blob no declared column names.
    pub fn register_blob_column(&self, table: &str, column: &str) {
        let mut columns = self.blob_columns.lock().unwrap_or_else(|p| p.into_inner());
        let entry = (table.to_string(), column.to_string());
        if !columns.contains(&entry) {
            columns.push(entry);
        }
    }

    /// On disk, removes the `.part` files, blob files and inline blob rows that no declared
    /// column references: what interrupted writes leave. Call it once at start-up, after
    /// every service has declared its columns and before anything writes a blob (a blob
    /// written but not yet committed looks the same). Does nothing in memory or when no
    /// column is declared.
    pub fn sweep_orphans(&self) -> io::Result<Sweep> {
        let (StoreMode::Persistent(dir) | StoreMode::Durable(dir)) = &self.mode else {
            return Ok(Sweep::default());
        };
        let registered = self
            .blob_columns
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clone();
        if registered.is_empty() {
            return Ok(Sweep::default());
        }
        let fail = |e: rusqlite::Error| {
            in_dir(
                dir,
                format_args!("cannot sweep {}: {e}", database(dir).display()),
            )
        };
        let columns = self
            .with(|c| declared_columns(c, &registered))
            .map_err(fail)?;
        let referenced = self.with(|c| referenced_files(c, &columns)).map_err(fail)?;
        let mut sweep = sweep_files(&self.blobs, &referenced).map_err(|e| {
            in_dir(
                dir,
                format_args!("cannot sweep {}: {}", self.blobs.display(), reason(&e)),
            )
        })?;
        let unreferenced = format!(
            "DELETE FROM roto_blobs WHERE id LIKE '{INLINE_PREFIX}%' AND id NOT IN ({})",
            referenced_ids_sql(&columns)
        );
        sweep.rows = self.with(|c| c.execute(&unreferenced, [])).map_err(fail)? as u64;
        if sweep != Sweep::default() {
            tracing::info!(
                files = sweep.files,
                bytes = sweep.bytes,
                rows = sweep.rows,
                "removed blobs no row references"
            );
        }
        Ok(sweep)
    }

    /// A database error, naming the data directory when the store is on disk.
    pub(super) fn describe(&self, e: rusqlite::Error) -> io::Error {
        match &self.mode {
            StoreMode::Persistent(dir) | StoreMode::Durable(dir) => {
                in_dir(dir, format_args!("{}: {e}", database(dir).display()))
            }
            StoreMode::Ephemeral => io::Error::other(e.to_string()),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::store::INLINE_LIMIT;

    const SCHEMA: &str = "CREATE TABLE IF NOT EXISTS t_objects (key TEXT PRIMARY KEY, blob TEXT)";

    fn on_disk(dir: &Path) -> Store {
        let store = Store::open(StoreMode::Persistent(dir.to_path_buf())).unwrap();
        store.migrate(SCHEMA).unwrap();
        store.register_blob_column("t_objects", "blob");
        store
    }

    fn blob(store: &Store, size: usize) -> String {
        let mut w = store.create_blob().unwrap();
        w.write(&vec![9u8; size]).unwrap();
        w.finish().unwrap()
    }

    fn keep(store: &Store, key: &str, id: &str) {
        store
            .with(|c| c.execute("INSERT INTO t_objects VALUES (?1, ?2)", [key, id]))
            .unwrap();
    }

    fn files(store: &Store) -> Vec<String> {
        let mut names: Vec<String> = std::fs::read_dir(&store.blobs)
            .unwrap()
            .map(|e| e.unwrap().file_name().into_string().unwrap())
            .collect();
        names.sort();
        names
    }

    #[test]
    fn the_sweep_removes_only_what_no_row_references() {
        let dir = tempfile::tempdir().unwrap();
        let store = on_disk(dir.path());
        let (kept_file, kept_inline) = (blob(&store, INLINE_LIMIT + 1), blob(&store, 10));
        keep(&store, "a", &kept_file);
        keep(&store, "b", &kept_inline);
        store
            .with(|c| c.execute("INSERT INTO t_objects VALUES ('empty', NULL)", []))
            .unwrap();
        let (orphan_file, orphan_inline) = (blob(&store, INLINE_LIMIT + 1), blob(&store, 10));
        let part = format!("{}.part", "ab".repeat(16));
        std::fs::write(store.blobs.join(&part), b"partial").unwrap();
        std::fs::write(store.blobs.join("notes.txt"), b"not a blob").unwrap();
        let sweep = store.sweep_orphans().unwrap();
        assert_eq!(
            sweep,
            Sweep {
                files: 2,
                bytes: INLINE_LIMIT as u64 + 1 + 7,
                rows: 1
            }
        );
        let mut expected = vec![kept_file.clone(), "notes.txt".to_string()];
        expected.sort();
        assert_eq!(files(&store), expected);
        let inline_left = |id: &str| {
            store
                .with(|c| {
                    c.query_row("SELECT count(*) FROM roto_blobs WHERE id = ?1", [id], |r| {
                        r.get::<_, i64>(0)
                    })
                })
                .unwrap()
        };
        assert_eq!(
            (inline_left(&kept_inline), inline_left(&orphan_inline)),
            (1, 0)
        );
        assert!(!files(&store).contains(&orphan_file));
    }

    #[test]
    fn columns_an_earlier_start_declared_keep_their_blobs() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let store = on_disk(dir.path());
            store
                .migrate("CREATE TABLE IF NOT EXISTS t_newer (blob TEXT)")
                .unwrap();
            store.register_blob_column("t_newer", "blob");
            let id = blob(&store, INLINE_LIMIT + 1);
            store
                .with(|c| c.execute("INSERT INTO t_newer VALUES (?1)", [&id]))
                .unwrap();
            store.sweep_orphans().unwrap();
            id
        };
        let older = on_disk(dir.path());
        assert_eq!(older.sweep_orphans().unwrap(), Sweep::default());
        assert_eq!(files(&older), vec![id]);
    }

    #[test]
    fn without_declared_columns_or_in_memory_nothing_is_swept() {
        let dir = tempfile::tempdir().unwrap();
        let store = Store::open(StoreMode::Persistent(dir.path().to_path_buf())).unwrap();
        let id = blob(&store, INLINE_LIMIT + 1);
        assert_eq!(store.sweep_orphans().unwrap(), Sweep::default());
        assert_eq!(files(&store), vec![id]);
        let memory = Store::open(StoreMode::Ephemeral).unwrap();
        memory.register_blob_column("roto_blobs", "id");
        assert_eq!(memory.sweep_orphans().unwrap(), Sweep::default());
    }

    #[test]
    fn a_damaged_database_is_refused_naming_the_file_and_the_flag() {
        let dir = tempfile::tempdir().unwrap();
        {
            let store = on_disk(dir.path());
            for i in 0..2000 {
                keep(&store, &format!("key-{i:05}"), &"x".repeat(200));
            }
            store.flush();
        }
        let db = dir.path().join("roto.db");
        let mut bytes = std::fs::read(&db).unwrap();
        let middle = bytes.len() / 2;
        bytes[middle..middle + 8192].fill(0xA5);
        std::fs::write(&db, bytes).unwrap();
        let err = Store::open(StoreMode::Persistent(dir.path().to_path_buf()))
            .err()
            .unwrap()
            .to_string();
        let named = format!(
            "--data-dir {}: the store {} is damaged",
            dir.path().display(),
            db.display()
        );
        assert!(err.starts_with(&named), "{err}");
        assert!(err.contains("restore it from a backup"), "{err}");
    }

    #[test]
    fn a_data_dir_that_is_a_file_is_named_with_its_flag() {
        let dir = tempfile::tempdir().unwrap();
        let file = dir.path().join("plain");
        std::fs::write(&file, b"").unwrap();
        let err = Store::open(StoreMode::Persistent(file.clone()))
            .err()
            .unwrap()
            .to_string();
        assert_eq!(
            err,
            format!(
                "--data-dir {0}: cannot create {0}/blobs: Not a directory",
                file.display()
            )
        );
    }
}
