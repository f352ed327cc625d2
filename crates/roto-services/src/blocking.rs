//! CPU-heavy work off the async worker threads.
//!
//! Key generation (an RSA 4096-bit key takes seconds), compression and decompression,
//! exports and imports run on tokio's blocking threads through [`run`], so that an
//! unrelated request (STS GetCallerIdentity) never waits behind them for a worker.

use roto_core::{AwsError, AwsResult};

/// Runs `work` on a blocking thread and awaits it; a panic there answers InternalError.
pub(crate) async fn run<T: Send + 'static>(
    work: impl FnOnce() -> AwsResult<T> + Send + 'static,
) -> AwsResult<T> {
    tokio::task::spawn_blocking(work)
        .await
        .map_err(|e| AwsError::internal(format!("blocking work failed: {e}")))?
}
