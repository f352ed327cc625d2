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
//! for them, leave it through `block_in_place`. Checkpoints run on a thread of their own
//! ([`checkpoints`](super::checkpoints)), on this connection only when that thread falls
//! behind, and sync the WAL and the database file, so frames a checkpoint moves stay
//! durable.
//!
//! A call that runs under [`Store::acknowledging`](super::Store::acknowledging) (every
//! service call the dispatcher makes) does not wait for its commits where it writes them:
//! it notes the last one and, once it has its answer, awaits a syncer thread's fsync that
//! covers it. The runtime worker then serves other requests while the disk syncs, instead
//! of blocking on the fsync or on the lock of one another thread is taking, and the answer
//! still leaves only once its writes are on disk. A call that publishes an event makes its
//! writes durable first, so no delivery ever acts on a write that could still be lost.

use std::cell::RefCell;
use std::fs::File;
use std::path::PathBuf;
use std::sync::atomic::{AtomicBool, AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::{Duration, Instant};

use parking_lot::{Condvar, Mutex, MutexGuard};
use rusqlite::Connection;
use tokio::sync::watch;

use super::checkpoints::Checkpoints;

/// How long a caller on a worker waits for a taken connection before it hands the worker off.
const BRIEF_WAIT: Duration = Duration::from_micros(50);

/// An fsync at most this long runs on the worker that needs it, like any short blocking
/// call: handing the worker off would cost more. A slower disk's fsyncs, and waits for them,
/// run under `block_in_place`.
const FAST_FSYNC: Duration = Duration::from_millis(1);

/// How long the idle syncer thread sleeps before it checks whether its store still exists.
const SYNCER_IDLE: Duration = Duration::from_secs(1);

tokio::task_local! {
    /// Set while a call runs under [`Writer::acknowledging`]: the last commit it wrote
    /// whose fsync it has not awaited yet.
    static DEFERRED: RefCell<Option<(Arc<Durability>, u64)>>;
}

/// The write connection.
pub(super) struct Writer {
    conn: Mutex<Connection>,
    durability: Option<Arc<Durability>>,
    checkpoints: Option<Arc<Checkpoints>>,
}

/// Shared fsyncs of the WAL (durable mode).
pub(super) struct Durability {
    wal: PathBuf,
    /// The WAL file, kept open for its fsyncs.
    file: File,
    /// Commits written to the WAL so far.
    written: AtomicU64,
    /// Commits known to be on disk; held while an fsync runs.
    synced: Mutex<u64>,
    /// Whether the last fsync took longer than [`FAST_FSYNC`].
    slow: AtomicBool,
    /// Commits known to be on disk, for calls that await them; or the error of the fsync
    /// that failed.
    reached: watch::Sender<Result<u64, String>>,
    /// Wakes the syncer thread: commits wait for it.
    wanted: Condvar,
    /// Whether a call awaits the syncer (guarded for the condition variable).
    asked: Mutex<bool>,
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
    /// Durability for the database whose WAL file is `wal`, with its syncer thread.
    pub(super) fn new(wal: PathBuf) -> std::io::Result<Arc<Durability>> {
        let durability = Arc::new(Durability {
            file: File::open(&wal)?,
            wal,
            written: AtomicU64::new(0),
            synced: Mutex::new(0),
            slow: AtomicBool::new(false),
            reached: watch::Sender::new(Ok(0)),
            wanted: Condvar::new(),
            asked: Mutex::new(false),
        });
        let weak = Arc::downgrade(&durability);
        std::thread::Builder::new()
            .name("roto-syncer".into())
            .spawn(move || syncer(weak))?;
        Ok(durability)
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
        if let Err(message) = &*self.reached.borrow() {
            return Err(fsync_failed(message.clone()));
        }
        let covered = self.written.load(Ordering::SeqCst);
        let started = Instant::now();
        let fsync = || self.file.sync_data();
        let done = if slow { off_worker(fsync) } else { fsync() };
        if let Err(e) = done {
            let message = format!("cannot fsync {}: {e}", self.wal.display());
            // A failed fsync may have dropped the pages it was to write: no later commit
            // can be called durable (the same rule as PostgreSQL's since 2018).
            let _ = self.reached.send_replace(Err(message.clone()));
            return Err(fsync_failed(message));
        }
        self.slow
            .store(started.elapsed() > FAST_FSYNC, Ordering::Relaxed);
        *synced = covered;
        self.reached.send_if_modified(|reached| match reached {
            Ok(at) if *at < covered => {
                *at = covered;
                true
            }
            _ => false,
        });
        Ok(())
    }

    /// Waits, without holding a thread, until commit `n` is on disk.
    async fn reach(&self, n: u64) -> rusqlite::Result<()> {
        let mut reached = self.reached.subscribe();
        *self.asked.lock() = true;
        self.wanted.notify_one();
        loop {
            match &*reached.borrow_and_update() {
                Ok(at) if *at >= n => return Ok(()),
                Ok(_) => {}
                Err(message) => return Err(fsync_failed(message.clone())),
            }
            if reached.changed().await.is_err() {
                return Err(fsync_failed("the store was closed".into()));
            }
        }
    }
}

fn fsync_failed(message: String) -> rusqlite::Error {
    rusqlite::Error::SqliteFailure(
        rusqlite::ffi::Error::new(rusqlite::ffi::SQLITE_IOERR_FSYNC),
        Some(message),
    )
}

/// The syncer thread: whenever a call awaits its commits, one fsync covers every commit
/// written so far; it ends once its store is gone.
fn syncer(durability: Weak<Durability>) {
    loop {
        let Some(d) = durability.upgrade() else {
            return;
        };
        let mut asked = d.asked.lock();
        if !*asked {
            d.wanted.wait_for(&mut asked, SYNCER_IDLE);
        }
        if !std::mem::take(&mut *asked) {
            continue;
        }
        drop(asked);
        let _ = d.sync_through(d.written.load(Ordering::SeqCst));
    }
}

impl Writer {
    /// Wraps the write connection; `durability` in durable mode, `checkpoints` on disk.
    pub(super) fn new(
        conn: Connection,
        durability: Option<Arc<Durability>>,
        checkpoints: Option<Arc<Checkpoints>>,
    ) -> Writer {
        conn.set_prepared_statement_cache_capacity(super::STATEMENT_CACHE);
        Writer {
            conn: Mutex::new(conn),
            durability,
            checkpoints,
        }
    }

    /// Counts a commit towards the next checkpoint.
    fn committed(&self) {
        if let Some(checkpoints) = &self.checkpoints {
            checkpoints.committed();
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
        let out = f(&self.acquire());
        self.committed();
        out
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
        if wrote {
            self.committed();
        }
        match &self.durability {
            Some(durability) if wrote => {
                let n = durability.written();
                drop(conn);
                let deferred = DEFERRED.try_with(|pending| {
                    *pending.borrow_mut() = Some((durability.clone(), n));
                });
                match deferred {
                    Ok(()) => Ok(()),
                    Err(_) => durability.sync_through(n),
                }
            }
            _ => Ok(()),
        }
    }

    /// Runs `work` (one call) with its commits' fsyncs deferred to its end (see the module
    /// documentation): its output, and whether its writes reached the disk.
    pub(super) async fn acknowledging<F: std::future::Future>(
        &self,
        work: F,
    ) -> (F::Output, rusqlite::Result<()>) {
        if self.durability.is_none() || DEFERRED.try_with(|_| ()).is_ok() {
            return (work.await, Ok(()));
        }
        let (output, pending) = DEFERRED
            .scope(RefCell::new(None), async {
                let output = work.await;
                (output, DEFERRED.with(|pending| pending.borrow_mut().take()))
            })
            .await;
        let durable = match pending {
            Some((durability, n)) => durability.reach(n).await,
            None => Ok(()),
        };
        (output, durable)
    }

    /// Runs `f` with the connection held (schema changes, checkpoints, reset).
    pub(super) fn exclusive<T>(&self, f: impl FnOnce(&mut Connection) -> T) -> T {
        f(&mut self.acquire())
    }
}

/// Makes the commits of the call running now durable before it goes on (see the module
/// documentation): for a call about to publish an event.
pub fn sync_deferred() -> rusqlite::Result<()> {
    let pending = DEFERRED
        .try_with(|pending| pending.borrow_mut().take())
        .ok()
        .flatten();
    let Some((durability, n)) = pending else {
        return Ok(());
    };
    durability.sync_through(n).inspect_err(|_| {
        let _ = DEFERRED.try_with(|pending| *pending.borrow_mut() = Some((durability.clone(), n)));
    })
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
