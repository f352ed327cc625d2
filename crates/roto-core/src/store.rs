//! The one store layer: SQLite for state, blob files for large bodies.
//!
//! `--ephemeral` keeps the database in memory and blobs in a temporary directory removed at
//! exit; `--data-dir` keeps `roto.db` (WAL, `synchronous=NORMAL`) and `blobs/` there;
//! `--durable` fsyncs the WAL before acknowledging a commit (shared between concurrent
//! writers) and every blob before the commit that references it, so an acknowledged write survives `kill -9` and power loss. Each service
//! creates its own tables (prefixed with its name) through [`Store::migrate`] and never
//! touches another's. Blob files are named by random ids, never by user keys. Blobs of up
//! to [`INLINE_LIMIT`] bytes stay in the database (`roto_blobs`), which spares small S3
//! objects a file create, a rename and a threaded file read, and lets their bytes go in
//! with the row that refers to them, in one commit ([`BlobWriter::finish_in_place`]);
//! larger ones spill to a file as soon as they outgrow the limit, so memory stays flat
//! whatever the size.
//!
//! Concurrency: writes go through one connection ([`writer`]) that is never waited for on
//! a runtime worker and whose fsyncs concurrent writers share in `--durable` mode; reads that need no
//! write lock ([`Store::read`]) use read-only connections ([`readers`]) in the on-disk modes,
//! so they run while a write commits. An ephemeral store is one in-memory connection: its
//! commits are memory copies of microseconds, so its reads share the writer.

mod cached;
mod checkpoints;
mod lazy;
mod readers;
mod writer;

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};

use rusqlite::{Connection, OptionalExtension};

pub use cached::Cached;
use checkpoints::Checkpoints;
pub use lazy::LazySchema;
use readers::Readers;
pub use writer::sync_deferred;
use writer::{Durability, Writer};

mod recovery;

pub use recovery::Sweep;

/// The largest blob kept in the database rather than in a file.
pub const INLINE_LIMIT: usize = 64 * 1024;

/// The prefix of the ids of blobs kept in the database.
const INLINE_PREFIX: &str = "i-";

/// How state is kept.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum StoreMode {
    /// In memory; gone at exit.
    Ephemeral,
    /// On disk in a directory.
    Persistent(PathBuf),
    /// On disk, fsynced before every acknowledgement.
    Durable(PathBuf),
}

impl StoreMode {
    /// `ephemeral`, `persistent` or `durable`, as the start line and health report say.
    pub fn name(&self) -> &'static str {
        match self {
            StoreMode::Ephemeral => "ephemeral",
            StoreMode::Persistent(_) => "persistent",
            StoreMode::Durable(_) => "durable",
        }
    }
}

/// The database and the blob directory.
pub struct Store {
    mode: StoreMode,
    writer: Arc<Writer>,
    readers: Option<Readers>,
    blobs: PathBuf,
    _temp: Option<tempfile::TempDir>,
    /// The `(table, column)` pairs that hold blob ids, as services declare them.
    blob_columns: Mutex<Vec<(String, String)>>,
}

/// A blob being written; becomes visible under its id once finished.
pub struct BlobWriter {
    sink: Sink,
    writer: Arc<Writer>,
    dir: PathBuf,
    durable: bool,
    written: u64,
}

/// Where a blob's bytes go: memory until they pass [`INLINE_LIMIT`], then a file.
enum Sink {
    Memory(Vec<u8>),
    File {
        file: File,
        tmp_path: PathBuf,
        id: String,
    },
    Finished,
}

impl BlobWriter {
    /// Appends bytes.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        if let Sink::Memory(buf) = &mut self.sink {
            if buf.len() + bytes.len() <= INLINE_LIMIT {
                buf.extend_from_slice(bytes);
                self.written += bytes.len() as u64;
                return Ok(());
            }
            let id = random_id();
            let tmp_path = self.dir.join(format!("{id}.part"));
            let mut file = File::create(&tmp_path)?;
            file.write_all(buf)?;
            self.sink = Sink::File { file, tmp_path, id };
        }
        if let Sink::File { file, .. } = &mut self.sink {
            file.write_all(bytes)?;
        }
        self.written += bytes.len() as u64;
        Ok(())
    }

    /// Bytes written so far.
    pub fn len(&self) -> u64 {
        self.written
    }

    /// Whether nothing was written.
    pub fn is_empty(&self) -> bool {
        self.written == 0
    }

    /// Whether the blob will be kept in the database (finishing it does no file I/O).
    pub fn is_inline(&self) -> bool {
        matches!(self.sink, Sink::Memory(_))
    }

    /// Stores the blob (in durable mode fsyncing a file before returning) and returns its id.
    pub fn finish(self) -> io::Result<String> {
        let writer = self.writer.clone();
        let blob = self.finish_in_place()?;
        // Nobody can reach the blob before a transaction that refers to it commits, and that
        // commit's fsync covers this earlier one.
        writer
            .with_unsynced(|conn| blob.save(conn))
            .map_err(|e| io::Error::other(e.to_string()))?;
        Ok(blob.id)
    }

    /// Finishes the blob but leaves a small one's bytes to [`FinishedBlob::save`], for a
    /// caller that writes the row referring to the blob in a transaction of its own: the
    /// bytes then go in with that row, in one commit, instead of in a commit before it.
    pub fn finish_in_place(mut self) -> io::Result<FinishedBlob> {
        match std::mem::replace(&mut self.sink, Sink::Finished) {
            Sink::Memory(buf) => Ok(FinishedBlob {
                id: format!("{INLINE_PREFIX}{}", random_id()),
                inline: Some(buf),
            }),
            Sink::File {
                mut file,
                tmp_path,
                id,
            } => {
                let finished = (|| {
                    file.flush()?;
                    if self.durable {
                        file.sync_all()?;
                    }
                    std::fs::rename(&tmp_path, self.dir.join(&id))?;
                    if self.durable {
                        File::open(&self.dir)?.sync_all()?;
                    }
                    Ok(id)
                })();
                if finished.is_err() {
                    let _ = std::fs::remove_file(&tmp_path);
                }
                finished.map(|id| FinishedBlob { id, inline: None })
            }
            Sink::Finished => Err(io::Error::other("blob already finished")),
        }
    }
}

/// A finished blob whose bytes, when it is small enough to stay in the database, are
/// written by [`FinishedBlob::save`] in the transaction that refers to it.
#[derive(Debug)]
pub struct FinishedBlob {
    id: String,
    inline: Option<Vec<u8>>,
}

impl FinishedBlob {
    /// The id the referring row keeps.
    pub fn id(&self) -> &str {
        &self.id
    }

    /// Writes a small blob's bytes with `conn`, in the transaction that writes the row
    /// referring to the blob; a blob file is already in place.
    pub fn save(&self, conn: &Connection) -> rusqlite::Result<()> {
        if let Some(data) = &self.inline {
            conn.prepare_cached("INSERT INTO roto_blobs (id, data) VALUES (?1, ?2)")?
                .execute(rusqlite::params![self.id, data])?;
        }
        Ok(())
    }
}

impl Drop for BlobWriter {
    fn drop(&mut self) {
        if let Sink::File { tmp_path, .. } = &self.sink {
            let _ = std::fs::remove_file(tmp_path);
        }
    }
}

/// A finished blob opened for reading.
pub enum BlobReader {
    /// A blob kept in the database.
    Memory(Vec<u8>),
    /// A blob file.
    File(File),
}

impl BlobReader {
    /// The whole blob in memory, for blobs a caller bounds (a function's zip, an image
    /// layer's part).
    pub fn into_bytes(self) -> io::Result<Vec<u8>> {
        match self {
            BlobReader::Memory(bytes) => Ok(bytes),
            BlobReader::File(mut file) => {
                let mut bytes = Vec::new();
                io::Read::read_to_end(&mut file, &mut bytes)?;
                Ok(bytes)
            }
        }
    }
}

/// Adds to `conn`'s tables the columns `schema` declares and they lack, learning the
/// declared columns by running the schema on an empty in-memory database.
fn add_missing_columns(conn: &Connection, schema: &str) -> rusqlite::Result<()> {
    let shadow = Connection::open_in_memory()?;
    shadow.execute_batch(schema)?;
    let tables: Vec<String> = shadow
        .prepare("SELECT name FROM sqlite_master WHERE type = 'table'")?
        .query_map([], |r| r.get(0))?
        .collect::<Result<_, _>>()?;
    for table in tables {
        let existing: Vec<String> = conn
            .prepare(&format!("SELECT name FROM pragma_table_info('{table}')"))?
            .query_map([], |r| r.get(0))?
            .collect::<Result<_, _>>()?;
        if existing.is_empty() {
            continue;
        }
        let mut declared = shadow.prepare(&format!(
            "SELECT name, type, \"notnull\", dflt_value FROM pragma_table_info('{table}')"
        ))?;
        let columns = declared.query_map([], |r| {
            Ok((
                r.get::<_, String>(0)?,
                r.get::<_, String>(1)?,
                r.get::<_, bool>(2)?,
                r.get::<_, Option<String>>(3)?,
            ))
        })?;
        for column in columns {
            let (name, kind, not_null, default) = column?;
            if existing.contains(&name) {
                continue;
            }
            let zero = match kind.to_ascii_uppercase().as_str() {
                k if k.contains("INT") || k.contains("REAL") => "0",
                k if k.contains("BLOB") => "x''",
                _ => "''",
            };
            let default = match (default, not_null) {
                (Some(d), _) => format!(" DEFAULT {d}"),
                (None, true) => format!(" DEFAULT {zero}"),
                (None, false) => String::new(),
            };
            let null = if not_null { " NOT NULL" } else { "" };
            conn.execute_batch(&format!(
                "ALTER TABLE {table} ADD COLUMN {name} {kind}{null}{default}"
            ))?;
        }
    }
    Ok(())
}

/// Prepared statements each connection keeps. rusqlite's default of 16 is fewer than one
/// S3 PutObject and one DynamoDB PutItem use between them, so hot statements were parsed
/// again on every request; a statement is kept only once used, so idle memory is unchanged.
const STATEMENT_CACHE: usize = 128;

fn random_id() -> String {
    let mut id = String::with_capacity(32);
    for _ in 0..2 {
        id.push_str(&format!("{:016x}", fastrand::u64(..)));
    }
    id
}

impl Store {
    /// Opens (creating if needed) the store for a mode.
    pub fn open(mode: StoreMode) -> io::Result<Store> {
        let to_io = |e: rusqlite::Error| io::Error::other(e.to_string());
        let (conn, blobs, temp, readers) = match &mode {
            StoreMode::Ephemeral => {
                let temp = tempfile::Builder::new().prefix("roto-blobs-").tempdir()?;
                let conn = Connection::open_in_memory().map_err(to_io)?;
                // Each of the services' empty tables and indexes holds a whole page in
                // memory; a test's store stays small, so small pages keep it light (about
                // 0.4 MiB less than SQLite's default 4 KiB pages). Freed pages go back to
                // the allocator at each commit, so deleted data does not keep its memory.
                conn.execute_batch("PRAGMA page_size=1024; PRAGMA auto_vacuum=FULL;")
                    .map_err(to_io)?;
                (conn, temp.path().to_path_buf(), Some(temp), None)
            }
            StoreMode::Persistent(dir) | StoreMode::Durable(dir) => {
                let blobs = recovery::prepare_dir(dir)?;
                // Durable mode syncs the WAL itself after commits, shared between
                // concurrent writers (see `writer`), so SQLite need not sync each commit.
                let conn = recovery::open_database(dir, "NORMAL")?;
                recovery::check_integrity(dir, &conn)?;
                // Checkpoints run on their own thread (see `checkpoints`).
                conn.pragma_update(None, "wal_autocheckpoint", checkpoints::WRITER_FRAMES)
                    .map_err(to_io)?;
                (
                    conn,
                    blobs,
                    None,
                    Some(Readers::new(recovery::database(dir))),
                )
            }
        };
        conn.execute_batch(
            "PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;
             CREATE TABLE IF NOT EXISTS roto_blobs (id TEXT PRIMARY KEY, data BLOB NOT NULL);",
        )
        .map_err(to_io)?;
        let durability = match &mode {
            StoreMode::Durable(dir) => {
                // The WAL file exists now; its directory entry must be on disk too.
                recovery::sync_dir(dir)?;
                Some(Durability::new(dir.join("roto.db-wal"))?)
            }
            _ => None,
        };
        let checkpoints = match &mode {
            StoreMode::Ephemeral => None,
            StoreMode::Persistent(dir) | StoreMode::Durable(dir) => {
                Some((dir, Arc::<Checkpoints>::default()))
            }
        };
        let signal = checkpoints.as_ref().map(|(_, c)| c.clone());
        let writer = Arc::new(Writer::new(conn, durability, signal));
        if let Some((dir, checkpoints)) = checkpoints {
            checkpoints::start(dir, checkpoints, Arc::downgrade(&writer))?;
        }
        Ok(Store {
            mode,
            writer,
            readers,
            blobs,
            _temp: temp,
            blob_columns: Mutex::default(),
        })
    }

    /// Runs `work` (one service call) with the fsyncs of its commits deferred to its end
    /// in durable mode, awaited there without holding a thread: its output, and whether its
    /// writes reached the disk. Its answer must not leave unless they did.
    pub async fn acknowledging<F: std::future::Future>(
        &self,
        work: F,
    ) -> (F::Output, rusqlite::Result<()>) {
        self.writer.acknowledging(work).await
    }

    /// The mode the store was opened in.
    pub fn mode(&self) -> &StoreMode {
        &self.mode
    }

    /// Runs idempotent schema SQL (`CREATE TABLE IF NOT EXISTS ...`) for a service. On disk,
    /// a table a newer schema gives more columns than the store's copy has gets them added
    /// first (with the column's default, else the zero of its type), so a data directory
    /// written by an earlier build opens with its data intact.
    pub fn migrate(&self, schema: &str) -> io::Result<()> {
        let to_io = |e| self.describe(e);
        let on_disk = !matches!(self.mode, StoreMode::Ephemeral);
        self.writer.exclusive(|conn| {
            if on_disk {
                add_missing_columns(conn, schema).map_err(to_io)?;
            }
            conn.execute_batch(schema).map_err(to_io)
        })
    }

    /// Runs a closure with the write connection: single statements, and reads that must see
    /// the caller's own uncommitted state or hold the write lock (reading a row, then
    /// opening the blob it names, before a concurrent replace can remove that blob). A
    /// statement that changes rows is durable, in durable mode, when this returns.
    pub fn with<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        self.writer.with(f)
    }

    /// Runs a read-only closure; in the on-disk modes on a read connection that sees the
    /// last commit and runs while a write commits.
    pub fn read<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        match &self.readers {
            Some(readers) => readers.read(f),
            None => self.writer.with(f),
        }
    }

    /// Runs a closure in an immediate transaction, committed (durably, in durable mode)
    /// before this returns if it returns `Ok`; rolled back if it fails or panics.
    pub fn transaction<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        self.writer.transaction(f)
    }

    /// Starts a new blob. The column its id is kept in must be declared with
    /// [`Store::register_blob_column`], or the start-up sweep removes it.
    pub fn create_blob(&self) -> io::Result<BlobWriter> {
        Ok(BlobWriter {
            sink: Sink::Memory(Vec::new()),
            writer: self.writer.clone(),
            dir: self.blobs.clone(),
            durable: matches!(self.mode, StoreMode::Durable(_)),
            written: 0,
        })
    }

    fn blob_path(&self, id: &str) -> PathBuf {
        self.blobs
            .join(Path::new(id).file_name().unwrap_or_default())
    }

    /// Opens a finished blob, with the connection the caller already holds (so that a
    /// concurrent replace, which removes the old blob after its commit, cannot remove it
    /// between the caller's read of the row and this open).
    pub fn open_blob(&self, conn: &Connection, id: &str) -> io::Result<BlobReader> {
        if id.starts_with(INLINE_PREFIX) {
            let data: Option<Vec<u8>> = conn
                .prepare_cached("SELECT data FROM roto_blobs WHERE id = ?1")
                .and_then(|mut st| st.query_row([id], |r| r.get(0)).optional())
                .map_err(|e| io::Error::other(e.to_string()))?;
            return data
                .map(BlobReader::Memory)
                .ok_or_else(|| io::Error::new(io::ErrorKind::NotFound, format!("no blob {id}")));
        }
        File::open(self.blob_path(id)).map(BlobReader::File)
    }

    /// Removes a blob; a missing blob is not an error.
    pub fn remove_blob(&self, id: &str) {
        if id.starts_with(INLINE_PREFIX) {
            // Unsynced: a removal lost to a crash leaves an orphan row, which the start-up
            // sweep removes; waiting for the disk here would add a sync to every overwrite.
            let _ = self.writer.with_unsynced(|c| {
                c.prepare_cached("DELETE FROM roto_blobs WHERE id = ?1")
                    .and_then(|mut st| st.execute([id]))
            });
        } else {
            let _ = std::fs::remove_file(self.blob_path(id));
        }
    }

    /// Empties every table and removes every blob (`POST /_roto/reset`), and gives the
    /// memory the data held back to the operating system.
    pub fn reset(&self) -> rusqlite::Result<()> {
        self.writer.exclusive(|conn| -> rusqlite::Result<()> {
            let tables: Vec<String> = conn
                .prepare(
                    "SELECT name FROM sqlite_master WHERE type = 'table' AND name NOT LIKE 'sqlite_%'",
                )?
                .query_map([], |row| row.get(0))?
                .collect::<rusqlite::Result<_>>()?;
            let mut sql = String::from("BEGIN;");
            for t in tables {
                sql.push_str(&format!("DELETE FROM \"{}\";", t.replace('"', "\"\"")));
            }
            // In memory, auto_vacuum=FULL has already given the freed pages back at the
            // commit, and a VACUUM would only copy the empty schema and fragment the heap.
            sql.push_str(match self.mode {
                StoreMode::Ephemeral => "COMMIT;",
                _ => "COMMIT; VACUUM;",
            });
            conn.execute_batch(&sql)
        })?;
        if let Ok(entries) = std::fs::read_dir(&self.blobs) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        self.release_memory();
        Ok(())
    }

    /// Gives the memory SQLite's caches and the allocator hold free back to the system:
    /// page caches, and the prepared statements the connections keep (up to
    /// `STATEMENT_CACHE` each, a few KiB apiece), which the next requests prepare again.
    pub fn release_memory(&self) {
        self.writer.exclusive(|conn| {
            conn.flush_prepared_statement_cache();
            let _ = conn.execute_batch("PRAGMA shrink_memory;");
        });
        if let Some(readers) = &self.readers {
            readers.close_idle();
        }
        crate::memory::release_free_memory();
    }

    /// Checkpoints the WAL into the database file (on graceful stop).
    pub fn flush(&self) {
        if !matches!(self.mode, StoreMode::Ephemeral) {
            self.writer.exclusive(|conn| {
                let _ = conn.execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
            });
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn persistent_store_keeps_rows_and_blobs_across_reopen() {
        let dir = tempfile::tempdir().unwrap();
        let id = {
            let store = Store::open(StoreMode::Durable(dir.path().to_path_buf())).unwrap();
            store
                .migrate("CREATE TABLE IF NOT EXISTS t_kv (k TEXT PRIMARY KEY, v TEXT)")
                .unwrap();
            let mut blob = store.create_blob().unwrap();
            blob.write(&vec![7u8; INLINE_LIMIT + 1]).unwrap();
            assert!(!blob.is_inline());
            let id = blob.finish().unwrap();
            store
                .transaction(|tx| {
                    tx.execute("INSERT INTO t_kv VALUES ('a', ?1)", [&id])
                        .map(|_| ())
                })
                .unwrap();
            id
        };
        let store = Store::open(StoreMode::Persistent(dir.path().to_path_buf())).unwrap();
        let v: String = store
            .with(|c| c.query_row("SELECT v FROM t_kv WHERE k = 'a'", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(v, id);
        assert_eq!(read(&store, &id), vec![7u8; INLINE_LIMIT + 1]);
    }

    #[test]
    fn an_older_table_gains_the_columns_a_newer_schema_declares() {
        let dir = tempfile::tempdir().unwrap();
        let mode = || StoreMode::Persistent(dir.path().to_path_buf());
        {
            let store = Store::open(mode()).unwrap();
            store
                .migrate("CREATE TABLE IF NOT EXISTS t_groups (name TEXT PRIMARY KEY)")
                .unwrap();
            store
                .with(|c| c.execute("INSERT INTO t_groups VALUES ('a')", []))
                .unwrap();
        }
        let store = Store::open(mode()).unwrap();
        store
            .migrate(
                "CREATE TABLE IF NOT EXISTS t_groups (
                    name TEXT PRIMARY KEY,
                    protected INTEGER NOT NULL,
                    class TEXT NOT NULL DEFAULT 'STANDARD',
                    kms TEXT
                 );
                 CREATE INDEX IF NOT EXISTS t_groups_by_class ON t_groups (class);",
            )
            .unwrap();
        let row: (String, i64, String, Option<String>) = store
            .with(|c| {
                c.query_row(
                    "SELECT name, protected, class, kms FROM t_groups",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?, r.get(3)?)),
                )
            })
            .unwrap();
        assert_eq!(row, ("a".into(), 0, "STANDARD".into(), None));
    }

    fn open(store: &Store, id: &str) -> io::Result<BlobReader> {
        store
            .with(|c| Ok::<_, rusqlite::Error>(store.open_blob(c, id)))
            .unwrap()
    }

    fn read(store: &Store, id: &str) -> Vec<u8> {
        open(store, id).unwrap().into_bytes().unwrap()
    }

    #[test]
    fn small_blobs_stay_in_the_database_and_large_ones_spill_to_files() {
        let store = Store::open(StoreMode::Ephemeral).unwrap();
        let mut small = store.create_blob().unwrap();
        small.write(&[1u8; 1000]).unwrap();
        small.write(&[2u8; 1000]).unwrap();
        assert!(small.is_inline());
        let small = small.finish().unwrap();
        let mut large = store.create_blob().unwrap();
        large.write(&[3u8; INLINE_LIMIT - 10]).unwrap();
        large.write(&[4u8; 20]).unwrap();
        assert!(!large.is_inline());
        let large = large.finish().unwrap();
        assert_eq!(read(&store, &small).len(), 2000);
        let bytes = read(&store, &large);
        assert_eq!(bytes.len(), INLINE_LIMIT + 10);
        assert_eq!(&bytes[INLINE_LIMIT - 11..INLINE_LIMIT - 9], &[3, 4]);
        assert_eq!(std::fs::read_dir(&store.blobs).unwrap().count(), 1);
        store.remove_blob(&small);
        store.remove_blob(&large);
        assert!(open(&store, &small).is_err());
        assert_eq!(std::fs::read_dir(&store.blobs).unwrap().count(), 0);
    }

    #[test]
    fn a_small_blob_finished_in_place_exists_once_its_transaction_commits() {
        let store = Store::open(StoreMode::Ephemeral).unwrap();
        let finish = |len: usize| {
            let mut blob = store.create_blob().unwrap();
            blob.write(&vec![7u8; len]).unwrap();
            blob.finish_in_place().unwrap()
        };
        let small = finish(100);
        assert!(open(&store, small.id()).is_err());
        let rolled_back: rusqlite::Result<()> = store.transaction(|tx| {
            small.save(tx)?;
            Err(rusqlite::Error::QueryReturnedNoRows)
        });
        assert!(rolled_back.is_err());
        assert!(open(&store, small.id()).is_err());
        store.transaction(|tx| small.save(tx)).unwrap();
        assert_eq!(read(&store, small.id()), vec![7u8; 100]);
        let large = finish(INLINE_LIMIT + 1);
        assert_eq!(read(&store, large.id()).len(), INLINE_LIMIT + 1);
        store.transaction(|tx| large.save(tx)).unwrap();
        assert_eq!(read(&store, large.id()).len(), INLINE_LIMIT + 1);
    }

    #[test]
    fn abandoned_blobs_leave_no_file_and_reset_empties_everything() {
        let store = Store::open(StoreMode::Ephemeral).unwrap();
        store
            .migrate("CREATE TABLE IF NOT EXISTS t_kv (k TEXT)")
            .unwrap();
        store
            .with(|c| c.execute("INSERT INTO t_kv VALUES ('x')", []))
            .unwrap();
        let mut abandoned = store.create_blob().unwrap();
        abandoned.write(&vec![0u8; INLINE_LIMIT * 2]).unwrap();
        drop(abandoned);
        assert_eq!(std::fs::read_dir(&store.blobs).unwrap().count(), 0);
        let mut kept = store.create_blob().unwrap();
        kept.write(&vec![0u8; INLINE_LIMIT * 2]).unwrap();
        let id = kept.finish().unwrap();
        assert_eq!(std::fs::read_dir(&store.blobs).unwrap().count(), 1);
        store.reset().unwrap();
        let n: i64 = store
            .with(|c| c.query_row("SELECT count(*) FROM t_kv", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 0);
        assert!(open(&store, &id).is_err());
    }

    #[test]
    fn blob_ids_never_escape_the_blob_directory() {
        let store = Store::open(StoreMode::Ephemeral).unwrap();
        assert_eq!(
            store.blob_path("../../etc/passwd"),
            store.blobs.join("passwd")
        );
    }

    #[test]
    fn concurrent_durable_transactions_all_commit_and_failures_stay_their_own() {
        let dir = tempfile::tempdir().unwrap();
        let mode = || StoreMode::Durable(dir.path().to_path_buf());
        {
            let store = Arc::new(Store::open(mode()).unwrap());
            store
                .migrate("CREATE TABLE IF NOT EXISTS t_kv (k TEXT PRIMARY KEY, v INTEGER)")
                .unwrap();
            let writers: Vec<_> = (0..16)
                .map(|w| {
                    let store = store.clone();
                    std::thread::spawn(move || {
                        for i in 0..40 {
                            let key = format!("{w}-{i}");
                            store
                                .transaction(|c| {
                                    c.execute("INSERT INTO t_kv VALUES (?1, ?2)", (&key, i))
                                })
                                .unwrap();
                            let failed: rusqlite::Result<()> = store.transaction(|c| {
                                c.execute("INSERT INTO t_kv VALUES (?1, -1)", [format!("x{key}")])?;
                                c.execute("INSERT INTO t_kv VALUES (?1, -1)", [&key])?;
                                Ok(())
                            });
                            assert!(failed.is_err());
                            store
                                .with(|c| {
                                    c.execute("UPDATE t_kv SET v = v + 1 WHERE k = ?1", [&key])
                                })
                                .unwrap();
                        }
                    })
                })
                .collect();
            for w in writers {
                w.join().unwrap();
            }
            let panicked = std::panic::catch_unwind(std::panic::AssertUnwindSafe(|| {
                let _: rusqlite::Result<()> = store.transaction(|c| {
                    c.execute("INSERT INTO t_kv VALUES ('p', 0)", [])?;
                    panic!("a handler bug");
                });
            }));
            assert!(panicked.is_err());
            store
                .transaction(|c| c.execute("INSERT INTO t_kv VALUES ('after', 0)", []))
                .unwrap();
        }
        let store = Store::open(mode()).unwrap();
        let (rows, sum, strays): (i64, i64, i64) = store
            .read(|c| {
                c.query_row(
                    "SELECT count(*), sum(v), (SELECT count(*) FROM t_kv WHERE v < 0 OR k = 'p')
                     FROM t_kv",
                    [],
                    |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)),
                )
            })
            .unwrap();
        assert_eq!((rows, strays), (16 * 40 + 1, 0));
        assert_eq!(sum, 16 * (0..40).map(|i| i + 1).sum::<i64>());
    }

    #[test]
    fn the_log_starts_again_under_a_steady_stream_of_writes() {
        let dir = tempfile::tempdir().unwrap();
        let mode = || StoreMode::Persistent(dir.path().to_path_buf());
        let value = "v".repeat(20_000);
        let commits = 3_000;
        {
            let store = Store::open(mode()).unwrap();
            store
                .migrate("CREATE TABLE IF NOT EXISTS t_kv (k INTEGER PRIMARY KEY, v TEXT)")
                .unwrap();
            for k in 0..commits {
                store
                    .transaction(|c| c.execute("INSERT INTO t_kv VALUES (?1, ?2)", (k, &value)))
                    .unwrap();
                // A steady stream, not one that starves the checkpointing thread.
                if k % 100 == 0 {
                    std::thread::sleep(std::time::Duration::from_millis(5));
                }
            }
            // A log never started again would hold every page written: about 87 MB.
            let wal = std::fs::metadata(dir.path().join("roto.db-wal")).unwrap();
            assert!(wal.len() < 50_000_000, "log of {} bytes", wal.len());
        }
        let store = Store::open(mode()).unwrap();
        let rows: i64 = store
            .read(|c| c.query_row("SELECT count(*) FROM t_kv", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(rows, commits);
    }

    #[test]
    fn reads_on_disk_see_the_last_commit_while_a_write_is_open() {
        let dir = tempfile::tempdir().unwrap();
        let store = Arc::new(Store::open(StoreMode::Persistent(dir.path().to_path_buf())).unwrap());
        store
            .migrate("CREATE TABLE IF NOT EXISTS t_kv (k TEXT PRIMARY KEY)")
            .unwrap();
        store
            .with(|c| c.execute("INSERT INTO t_kv VALUES ('committed')", []))
            .unwrap();
        let (inside, release) = (std::sync::mpsc::channel(), std::sync::mpsc::channel::<()>());
        let writer = {
            let store = store.clone();
            let (inside, release) = (inside.0, release.1);
            std::thread::spawn(move || {
                store
                    .transaction(|c| {
                        c.execute("INSERT INTO t_kv VALUES ('pending')", [])?;
                        inside.send(()).unwrap();
                        release.recv().unwrap();
                        Ok::<_, rusqlite::Error>(())
                    })
                    .unwrap();
            })
        };
        inside.1.recv().unwrap();
        let count = |store: &Store| -> i64 {
            store
                .read(|c| c.query_row("SELECT count(*) FROM t_kv", [], |r| r.get(0)))
                .unwrap()
        };
        assert_eq!(count(&store), 1);
        release.0.send(()).unwrap();
        writer.join().unwrap();
        assert_eq!(count(&store), 2);
    }
}
