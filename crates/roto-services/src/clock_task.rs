//! The one background task a service runs on the server clock (Scheduler's firing,
//! CloudWatch's alarm evaluation). The task runs the service's step, which does what is due
//! at the clock's time and tells when it next has work, then sleeps on the server clock
//! until then, waking early when the clock is advanced or the service says something
//! changed. It starts on first need and holds the service weakly, so it ends with it; a
//! server that never needs it runs none.

use std::sync::{Arc, OnceLock, Weak};

use roto_core::store::StoreMode;
use roto_core::timestamp::{now_millis, sleep_until};
use roto_core::{AwsResult, Env};
use rusqlite::OptionalExtension;
use tokio::sync::Notify;

/// What one run of a step does: the work due at a time, and when there is more (None:
/// only when woken).
pub(crate) type Step<T> = fn(&T, i64) -> AwsResult<Option<i64>>;

/// A service's clock task: not running until [`ClockTask::start`].
#[derive(Default)]
pub(crate) struct ClockTask {
    changed: Arc<Notify>,
    started: OnceLock<()>,
}

impl ClockTask {
    /// Wakes the task: what it works on changed.
    pub fn wake(&self) {
        self.changed.notify_one();
    }

    /// Starts the task (once) running `step` on `owner`, if a runtime is running.
    pub fn start<T: Send + Sync + 'static>(
        &self,
        owner: &Arc<T>,
        name: &'static str,
        step: Step<T>,
    ) {
        if tokio::runtime::Handle::try_current().is_err() {
            return;
        }
        self.started.get_or_init(|| {
            tokio::spawn(run(Arc::downgrade(owner), self.changed.clone(), name, step));
        });
    }
}

async fn run<T>(owner: Weak<T>, changed: Arc<Notify>, name: &'static str, step: Step<T>) {
    loop {
        let next = {
            let Some(me) = owner.upgrade() else {
                return;
            };
            match step(&me, now_millis()) {
                Ok(next) => next,
                Err(e) => {
                    tracing::warn!("{name}: {}", e.message);
                    Some(now_millis() + 1_000)
                }
            }
        };
        match next {
            Some(at) => {
                tokio::select! {
                    _ = sleep_until(at) => {}
                    _ = changed.notified() => {}
                }
            }
            None => changed.notified().await,
        }
    }
}

/// Whether a persistent store already holds `table` (a store in memory never does at
/// start-up), so a service can resume its task without creating its tables.
pub(crate) fn stored_table(env: &Env, table: &str) -> AwsResult<bool> {
    if matches!(env.store.mode(), StoreMode::Ephemeral) {
        return Ok(false);
    }
    Ok(env.store.read(|c| {
        c.query_row(
            "SELECT 1 FROM sqlite_master WHERE type = 'table' AND name = ?1",
            [table],
            |_| Ok(()),
        )
        .optional()
        .map(|found| found.is_some())
    })?)
}
