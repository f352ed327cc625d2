//! The one store layer: SQLite for state, blob files for large bodies.
//!
//! `--ephemeral` keeps the database in memory and blobs in a temporary directory removed at
//! exit; `--data-dir` keeps `roto.db` (WAL, `synchronous=NORMAL`) and `blobs/` there;
//! `--durable` adds `synchronous=FULL` and fsyncs every blob before the commit that
//! references it, so an acknowledged write survives `kill -9` and power loss. Each service
//! creates its own tables (prefixed with its name) through [`Store::migrate`] and never
//! touches another's. Blob files are named by random ids, never by user keys.

use std::fs::File;
use std::io::{self, Write};
use std::path::{Path, PathBuf};
use std::sync::{Mutex, MutexGuard};

use rusqlite::{Connection, Transaction, TransactionBehavior};

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
    conn: Mutex<Connection>,
    blobs: PathBuf,
    _temp: Option<tempfile::TempDir>,
}

/// A blob being written; becomes visible under its id once finished.
pub struct BlobWriter {
    file: File,
    tmp_path: PathBuf,
    final_path: PathBuf,
    id: String,
    durable: bool,
    written: u64,
}

impl BlobWriter {
    /// Appends bytes.
    pub fn write(&mut self, bytes: &[u8]) -> io::Result<()> {
        self.file.write_all(bytes)?;
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

    /// Flushes (and in durable mode fsyncs) the blob and returns its id.
    pub fn finish(mut self) -> io::Result<String> {
        self.file.flush()?;
        if self.durable {
            self.file.sync_all()?;
        }
        std::fs::rename(&self.tmp_path, &self.final_path)?;
        if self.durable {
            if let Some(dir) = self.final_path.parent() {
                File::open(dir)?.sync_all()?;
            }
        }
        Ok(std::mem::take(&mut self.id))
    }
}

impl Drop for BlobWriter {
    fn drop(&mut self) {
        if !self.id.is_empty() {
            let _ = std::fs::remove_file(&self.tmp_path);
        }
    }
}

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
        let (conn, blobs, temp) = match &mode {
            StoreMode::Ephemeral => {
                let temp = tempfile::Builder::new().prefix("roto-blobs-").tempdir()?;
                let conn = Connection::open_in_memory().map_err(to_io)?;
                (conn, temp.path().to_path_buf(), Some(temp))
            }
            StoreMode::Persistent(dir) | StoreMode::Durable(dir) => {
                std::fs::create_dir_all(dir.join("blobs"))?;
                let conn = Connection::open(dir.join("roto.db")).map_err(to_io)?;
                let sync = if matches!(mode, StoreMode::Durable(_)) {
                    "FULL"
                } else {
                    "NORMAL"
                };
                conn.execute_batch(&format!(
                    "PRAGMA journal_mode=WAL; PRAGMA synchronous={sync}; PRAGMA busy_timeout=5000;"
                ))
                .map_err(to_io)?;
                (conn, dir.join("blobs"), None)
            }
        };
        conn.execute_batch("PRAGMA foreign_keys=ON; PRAGMA temp_store=MEMORY;")
            .map_err(to_io)?;
        Ok(Store {
            mode,
            conn: Mutex::new(conn),
            blobs,
            _temp: temp,
        })
    }

    /// The mode the store was opened in.
    pub fn mode(&self) -> &StoreMode {
        &self.mode
    }

    /// Runs idempotent schema SQL (`CREATE TABLE IF NOT EXISTS ...`) for a service.
    pub fn migrate(&self, schema: &str) -> rusqlite::Result<()> {
        self.lock().execute_batch(schema)
    }

    fn lock(&self) -> MutexGuard<'_, Connection> {
        self.conn.lock().unwrap_or_else(|p| p.into_inner())
    }

    /// Runs a closure with the connection (single statements, reads).
    pub fn with<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        f(&self.lock())
    }

    /// Runs a closure in an immediate transaction, committed if it returns `Ok`.
    pub fn transaction<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Transaction<'_>) -> Result<T, E>,
    ) -> Result<T, E> {
        let mut conn = self.lock();
        let tx = conn.transaction_with_behavior(TransactionBehavior::Immediate)?;
        let out = f(&tx)?;
        tx.commit()?;
        Ok(out)
    }

    /// Starts a new blob.
    pub fn create_blob(&self) -> io::Result<BlobWriter> {
        let id = random_id();
        let tmp_path = self.blobs.join(format!("{id}.part"));
        let file = File::create(&tmp_path)?;
        Ok(BlobWriter {
            file,
            tmp_path,
            final_path: self.blobs.join(&id),
            id,
            durable: matches!(self.mode, StoreMode::Durable(_)),
            written: 0,
        })
    }

    /// The path of a finished blob.
    pub fn blob_path(&self, id: &str) -> PathBuf {
        self.blobs
            .join(Path::new(id).file_name().unwrap_or_default())
    }

    /// Removes a blob; a missing blob is not an error.
    pub fn remove_blob(&self, id: &str) {
        let _ = std::fs::remove_file(self.blob_path(id));
    }

    /// Empties every table and removes every blob (`POST /_roto/reset`).
    pub fn reset(&self) -> rusqlite::Result<()> {
        let conn = self.lock();
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
        sql.push_str("COMMIT;");
        conn.execute_batch(&sql)?;
        if let Ok(entries) = std::fs::read_dir(&self.blobs) {
            for entry in entries.flatten() {
                let _ = std::fs::remove_file(entry.path());
            }
        }
        Ok(())
    }

    /// Checkpoints the WAL into the database file (on graceful stop).
    pub fn flush(&self) {
        if !matches!(self.mode, StoreMode::Ephemeral) {
            let _ = self
                .lock()
                .execute_batch("PRAGMA wal_checkpoint(TRUNCATE);");
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
            blob.write(b"hello").unwrap();
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
        assert_eq!(std::fs::read(store.blob_path(&id)).unwrap(), b"hello");
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
        abandoned.write(b"partial").unwrap();
        drop(abandoned);
        let mut kept = store.create_blob().unwrap();
        kept.write(b"kept").unwrap();
        let id = kept.finish().unwrap();
        assert_eq!(std::fs::read_dir(&store.blobs).unwrap().count(), 1);
        store.reset().unwrap();
        let n: i64 = store
            .with(|c| c.query_row("SELECT count(*) FROM t_kv", [], |r| r.get(0)))
            .unwrap();
        assert_eq!(n, 0);
        assert!(!store.blob_path(&id).exists());
    }

    #[test]
    fn blob_ids_never_escape_the_blob_directory() {
        let store = Store::open(StoreMode::Ephemeral).unwrap();
        assert_eq!(
            store.blob_path("../../etc/passwd"),
            store.blobs.join("passwd")
        );
    }
}
