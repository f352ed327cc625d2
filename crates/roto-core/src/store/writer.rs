//! The write connection: one SQLite connection every write goes through, taken without
//! parking a runtime worker, and, in `--durable` mode, made durable by shared fsyncs taken
//! outside its lock.
//!
//! SQLite allows one writer at a time, so writes queue for one connection behind a mutex.
//! A caller on a runtime worker that finds it taken for longer than a few tens of
//! microseconds waits under [`tokio::task::block_in_place`], which hands the worker's other
//! tasks to another thread: a slow holder costs its waiters time, never an unrelated
//! request. Shorter waits and uncontended takes stay on the worker, since the statements a
//! request runs take microseconds and a thread hand-off would cost more than they do.
//!
//! Group commit (`--durable`): the connection runs WAL with `synchronous=NORMAL`, so a
//! commit writes its frames to the WAL file without an fsync and releases the connection
//! at once. The committer then, outside the lock, waits until an fsync of the WAL that began
//! after its commit has finished ([`Durability::sync_through`]); whoever finds no fsync
//! running starts one that covers every commit written so far. So no write is acknowledged
//! before it is on disk, the next transactions run while an fsync is in flight, and 16
//! writers share one fsync instead of queueing for 16. While the disk's fsyncs take under a
//! millisecond they run on the worker (a hand-off would cost more); slower ones, and waits
//! for them, leave it through `block_in_place`. SQLite's own checkpoints sync the
//! WAL and the database file in this mode, so frames a checkpoint moves stay durable.

use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::time::{Duration, Instant};

use parking_lot::{Mutex, MutexGuard};
use rusqlite::Connection;

/// How long a caller on a worker waits for a taken connection before it hands the worker off.
const BRIEF_WAIT: Duration = Duration::from_micros(50);

/// An fsync at most this long runs on the worker that needs it, like any short blocking
/// call: handing the worker off would cost more. A slower disk's fsyncs, and waits for them,
/// run under `block_in_place`.
const FAST_FSYNC: Duration = Duration::from_millis(1);

/// The write connection.
pub(super) struct Writer {
    conn: Mutex<Connection>,
    durability: Option<Durability>,
}

/// Shared fsyncs of the WAL (durable mode).
pub(super) struct Durability {
    wal: PathBuf,
    /// Commits written to the WAL so far.
    written: AtomicU64,
    /// Commits known to be on disk; held while an fsync runs.
    synced: Mutex<u64>,
    /// Whether the last fsync took longer than [`FAST_FSYNC`].
    slow: AtomicBool,
}

/// Runs blocking work without parking a multi-threaded runtime's worker.
pub(super) fn off_worker<R>(work: impl FnOnce() -> R) -> R {
    use tokio::runtime::{Handle, RuntimeFlavor};
    match Handle::try_current() {
        Ok(handle) if handle.runtime_flavor() == RuntimeFlavor::MultiThread => {
            tokio::task::block_in_place(work)
        }
        _ => work(),
    }
}

impl Durability {
    /// Durability for the database whose WAL file is `wal`.
    pub(super) fn new(wal: PathBuf) -> Durability {
        Durability {
            wal,
            written: AtomicU64::new(0),
            synced: Mutex::new(0),
            slow: AtomicBool::new(false),
        }
    }

    /// Counts a commit just written to the WAL; returns its number.
    fn written(&self) -> u64 {
        self.written.fetch_add(1, Ordering::SeqCst) + 1
    }

    /// Returns once commit `n` is on disk, taking an fsync if none that covers it ran.
    fn sync_through(&self, n: u64) -> rusqlite::Result<()> {
        let slow = self.slow.load(Ordering::Relaxed);
        let mut synced = match slow {
            true => self
                .synced
                .try_lock_for(BRIEF_WAIT)
                .unwrap_or_else(|| off_worker(|| self.synced.lock())),
            false => self.synced.lock(),
        };
        if *synced >= n {
            return Ok(());
        }
        let covered = self.written.load(Ordering::SeqCst);
        let started = Instant::now();
        let fsync = || File::open(&self.wal).and_then(|wal| wal.sync_data());
        let done = if slow { off_worker(fsync) } else { fsync() };
        done.map_err(|e| {
            rusqlite::Error::SqliteFailure(
                rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR_FSYNC),
                Some(format!("cannot fsync {}: {e}", self.wal.display())),
            )
        })?;
        self.slow
            .store(started.elapsed() > FAST_FSYNC, Ordering::Relaxed);
        *synced = covered;
        Ok(())
    }
}

impl Writer {
    /// Wraps the write connection; `durability` in durable mode.
    pub(super) fn new(conn: Connection, durability: Option<Durability>) -> Writer {
        conn.set_prepared_statement_cache_capacity(super::STATEMENT_CACHE);
        Writer {
            conn: Mutex::new(conn),
            durability,
        }
    }

    fn acquire(&self) -> MutexGuard<'_, Connection> {
        self.conn
            .try_lock_for(BRIEF_WAIT)
            .unwrap_or_else(|| off_worker(|| self.conn.lock()))
    }

    /// Runs `f` with the connection, outside any transaction; a statement that changed rows
    /// is durable (in durable mode) when this returns.
    pub(super) fn with<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.acquire();
        let before = conn.total_changes();
        let out = f(&conn);
        let wrote = conn.total_changes() != before;
        self.settle(conn, wrote)?;
        out
    }

    /// Runs `f` with the connection, outside any transaction, without waiting for its
    /// writes to reach the disk: for rows that only a later, durable commit refers to.
    pub(super) fn with_unsynced<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        f(&self.acquire())
    }

    /// Runs `f` in a transaction, committed (durably, in durable mode) before this returns
    /// if `f` returns `Ok`, rolled back if it fails or panics.
    pub(super) fn transaction<T, E: From<rusqlite::Error>>(
        &self,
        f: impl FnOnce(&Connection) -> Result<T, E>,
    ) -> Result<T, E> {
        let conn = self.acquire();
        let tx = Open::begin(&conn)?;
        let out = f(&conn)?;
        tx.commit()?;
        self.settle(conn, true)?;
        Ok(out)
    }

    /// Releases the connection; in durable mode, waits for a commit it wrote to be on disk.
    fn settle(&self, conn: MutexGuard<'_, Connection>, wrote: bool) -> rusqlite::Result<()> {
        match &self.durability {
            Some(durability) if wrote => {
                let n = durability.written();
                drop(conn);
                durability.sync_through(n)
            }
            _ => Ok(()),
        }
    }

    /// Runs `f` with the connection held (schema changes, checkpoints, reset).
    pub(super) fn exclusive<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> T {
        f(&mut self.acquire())
    }
}

/// An open transaction, rolled back unless committed (also when its closure panics). Its
/// `BEGIN` and `COMMIT` are cached statements: rusqlite's own transactions parse both
/// again for every write.
struct Open<'c> {
    conn: &'c Connection,
    committed: bool,
}

impl<'c> Open<'c> {
    fn begin(conn: &'c Connection) -> rusqlite::Result<Open<'c>> {
        conn.prepare_cached("BEGIN IMMEDIATE")?.execute([])?;
        Ok(Open {
            conn,
            committed: false,
        })
    }

    fn commit(mut self) -> rusqlite::Result<()> {
        self.conn.prepare_cached("COMMIT")?.execute([])?;
        self.committed = true;
        Ok(())
    }
}

impl Drop for Open<'_> {
    fn drop(&mut self) {
        if !self.committed && !self.conn.is_autocommit() {
            let _ = self.conn.execute_batch("ROLLBACK");
        }
    }
}
