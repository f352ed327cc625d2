//! Read-only connections for the on-disk modes, so that reads run while a write commits.
//!
//! In WAL mode a reader sees the last committed state and never waits for the writer, nor
//! the writer for it. Connections open on first need and are kept for reuse, so a server
//! that never reads concurrently holds only the one it first needed; each keeps a small
//! page cache, since the operating system's cache already holds the file.

use std::path::PathBuf;
use std::sync::Mutex;

use rusqlite::{Connection, OpenFlags};

/// The idle read connections of one database file.
pub(super) struct Readers {
    path: PathBuf,
    idle: Mutex<Vec<Connection>>,
}

impl Readers {
    /// Readers of the database at `path`.
    pub(super) fn new(path: PathBuf) -> Readers {
        Readers {
            path,
            idle: Mutex::new(Vec::new()),
        }
    }

    fn open(&self) -> rusqlite::Result<Connection> {
        let conn = Connection::open_with_flags(
            &self.path,
            OpenFlags::SQLITE_OPEN_READ_ONLY | OpenFlags::SQLITE_OPEN_NO_MUTEX,
        )?;
        conn.execute_batch("PRAGMA busy_timeout=5000; PRAGMA cache_size=-512;")?;
        conn.set_prepared_statement_cache_capacity(super::STATEMENT_CACHE);
        Ok(conn)
    }

    /// Runs `f` with a read connection.
    pub(super) fn read<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let idle = self.idle.lock().unwrap_or_else(|p| p.into_inner()).pop();
        let conn = match idle {
            Some(conn) => conn,
            None => self.open()?,
        };
        let out = f(&conn);
        self.idle
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .push(conn);
        out
    }

    /// Closes the idle connections: after a reset shrinks the file, and to free their page
    /// and statement caches when the server goes quiet.
    pub(super) fn close_idle(&self) {
        self.idle.lock().unwrap_or_else(|p| p.into_inner()).clear();
    }
}
