//! Giving freed memory back to the operating system.
//!
//! SQLite's page cache and glibc's allocator keep what a burst of requests freed (a deleted
//! table's rows, a large transaction's journal, a vacuum's copy) inside the process, so a
//! server that held 80 MiB for a moment would hold it while idle for the rest of its life.
//! Releasing it ([`crate::store::Store::release_memory`]) costs a walk of the free lists, so
//! it runs only once the server has gone quiet after work: on reset, and when the trace
//! shows requests that were followed by a quiet period.

use std::sync::Arc;
use std::time::Duration;

use crate::dispatch::Env;

/// How long the server must have been quiet, after requests, before its memory is trimmed.
const QUIET: Duration = Duration::from_secs(2);

/// Returns the allocator's free memory to the operating system.
pub fn release_free_memory() {
    #[cfg(all(target_os = "linux", target_env = "gnu"))]
    // SAFETY: malloc_trim only walks the allocator's own free lists.
    unsafe {
        libc::malloc_trim(0);
    }
}

/// Releases memory once each time the server goes quiet after requests, for as long as it
/// runs.
pub fn trim_when_quiet(env: &Arc<Env>) {
    let env = Arc::downgrade(env);
    tokio::spawn(async move {
        let mut trimmed_at = 0;
        let mut seen = 0;
        loop {
            tokio::time::sleep(QUIET).await;
            let Some(env) = env.upgrade() else { return };
            let latest = env.trace.latest_seq();
            if latest == seen && latest != trimmed_at {
                trimmed_at = latest;
                let _ = tokio::task::spawn_blocking(move || env.store.release_memory()).await;
            }
            seen = latest;
        }
    });
}
