//! Checkpoints off the write path (the on-disk modes).
//!
//! A WAL database copies its log back into the database file in checkpoints. SQLite runs
//! them itself, on the connection whose commit takes the log past 1,000 pages, while that
//! connection is held: with one write connection every writer then waited for the copy and
//! its fsyncs (of the log, then of the database file) about every 200 DynamoDB writes. The
//! write connection's own checkpoints wait for a four times longer log; instead a
//! `roto-checkpointer` thread with a connection of its own runs a passive checkpoint every
//! [`PASS_COMMITS`] commits, copying while writes go on.
//!
//! A commit starts the log again from its beginning (so that its file stays the same size
//! and is overwritten in place) only if, when its transaction began, every page in the log
//! had been copied. Under a steady stream of writes that moment never comes by itself (a
//! passive checkpoint is overtaken by the next commit, or finishes while the next
//! transaction is already open), so once the log passes [`RESTART_FRAMES`] one pass runs
//! with the write connection held: it copies only what came in since the previous pass,
//! and the next transaction finds the log fully copied.
//!
//! Should the thread fall behind, the write connection checkpoints by itself once the log
//! passes [`WRITER_FRAMES`], as SQLite would.
//!
//! Nothing is lost to a crash at any point: SQLite syncs the log before it copies from it
//! and the database file before a finished checkpoint lets the log be reused. After an
//! unfinished pass the thread syncs the database file itself, so that the pass under the
//! lock has little left to write.

use std::fs::File;
use std::io;
use std::path::Path;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Weak};
use std::time::Duration;

use parking_lot::{Condvar, Mutex};
use rusqlite::Connection;

use super::recovery;
use super::writer::Writer;

/// Commits between two passes (about 600 log pages of DynamoDB writes).
const PASS_COMMITS: u64 = 128;

/// The log length, in pages, past which a pass runs with the write connection held, so
/// that the log starts again: SQLite's own default. A longer log costs every commit more:
/// its index finds a free slot for a page by probing past every earlier copy of that page
/// in the log, and a page some rows of which every commit writes (a DynamoDB table's
/// counters row was one, at 4,096 pages a PutItem took 8% more instructions) has many.
const RESTART_FRAMES: i64 = 1000;

/// The log length, in pages, at which the write connection checkpoints by itself, as SQLite
/// does by default: only when this thread falls behind (a starved machine), so that the log
/// stays bounded whatever the thread's pace.
pub(super) const WRITER_FRAMES: i64 = 4 * RESTART_FRAMES;

/// How long the idle thread sleeps before it checks whether its store still exists.
const IDLE: Duration = Duration::from_secs(1);

/// Commits counted towards the next pass, and the thread's wake-up.
#[derive(Default)]
pub(super) struct Checkpoints {
    commits: AtomicU64,
    asked: Mutex<bool>,
    wanted: Condvar,
}

impl Checkpoints {
    /// Counts a commit; every [`PASS_COMMITS`]th wakes the thread.
    pub(super) fn committed(&self) {
        if (self.commits.fetch_add(1, Ordering::Relaxed) + 1) % PASS_COMMITS == 0 {
            *self.asked.lock() = true;
            self.wanted.notify_one();
        }
    }
}

/// Starts the thread checkpointing the database in `dir`, whose write connection is
/// `writer`; it ends once the writer is gone.
pub(super) fn start(
    dir: &Path,
    checkpoints: Arc<Checkpoints>,
    writer: Weak<Writer>,
) -> io::Result<()> {
    let conn = recovery::open_database(dir, "NORMAL")?;
    let database = File::open(recovery::database(dir))?;
    std::thread::Builder::new()
        .name("roto-checkpointer".into())
        .spawn(move || loop {
            let mut asked = checkpoints.asked.lock();
            if !*asked {
                checkpoints.wanted.wait_for(&mut asked, IDLE);
            }
            let wanted = std::mem::take(&mut *asked);
            drop(asked);
            if writer.strong_count() == 0 {
                return;
            }
            if wanted {
                let _ = pass(&conn, &database, &writer);
            }
        })?;
    Ok(())
}

/// One pass: a passive checkpoint, a sync of what it copied if it did not finish (it then
/// left that to a later pass), and, on a long log, a second one with the write connection
/// held, after which the next commit starts the log again.
fn pass(conn: &Connection, database: &File, writer: &Weak<Writer>) -> io::Result<()> {
    let to_io = |e: rusqlite::Error| io::Error::other(e.to_string());
    let (log, copied) = checkpoint(conn).map_err(to_io)?;
    if copied < log {
        database.sync_data()?;
    }
    if log < RESTART_FRAMES {
        return Ok(());
    }
    match writer.upgrade() {
        Some(writer) => writer
            .exclusive(|_| checkpoint(conn))
            .map_err(to_io)
            .map(drop),
        None => Ok(()),
    }
}

/// A passive checkpoint: the pages in the log, and those copied to the database file.
fn checkpoint(conn: &Connection) -> rusqlite::Result<(i64, i64)> {
    conn.query_row("PRAGMA wal_checkpoint(PASSIVE)", [], |r| {
        Ok((r.get(1)?, r.get(2)?))
    })
}
