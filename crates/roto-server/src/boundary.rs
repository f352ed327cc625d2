//! The panic boundary: a bug in one handler costs that request, not the server.
//!
//! The release profile unwinds, and every request's future runs inside [`CatchPanic`],
//! which polls it under `std::panic::catch_unwind`. A panic anywhere below (codec, handler,
//! store call) ends that future only: the caller turns it into a 500 `InternalError` in the
//! request's protocol, and the connection and the server carry on. [`install_hook`] sends
//! the panic's message and place to the log instead of bare stderr.

use std::any::Any;
use std::future::Future;
use std::panic::{catch_unwind, AssertUnwindSafe};
use std::pin::Pin;
use std::task::{Context, Poll};

pin_project_lite::pin_project! {
    /// A future that answers `Err(message)` instead of unwinding when its inner future panics.
    pub struct CatchPanic<F> {
        #[pin]
        inner: F,
    }
}

impl<F: Future> CatchPanic<F> {
    /// Wraps `inner`.
    pub fn new(inner: F) -> CatchPanic<F> {
        CatchPanic { inner }
    }
}

impl<F: Future> Future for CatchPanic<F> {
    type Output = Result<F::Output, String>;

    fn poll(self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<Self::Output> {
        let inner = self.project().inner;
        // The inner future is never polled again after a panic: this one is then Ready, so
        // whatever state the panic left behind is only dropped.
        match catch_unwind(AssertUnwindSafe(|| inner.poll(cx))) {
            Ok(Poll::Pending) => Poll::Pending,
            Ok(Poll::Ready(value)) => Poll::Ready(Ok(value)),
            Err(payload) => Poll::Ready(Err(message(payload.as_ref()))),
        }
    }
}

/// The text a panic was raised with.
fn message(payload: &(dyn Any + Send)) -> String {
    payload
        .downcast_ref::<&str>()
        .map(|s| s.to_string())
        .or_else(|| payload.downcast_ref::<String>().cloned())
        .unwrap_or_else(|| "a panic without a message".to_string())
}

/// Logs every panic (message and source location) through `tracing` at error level.
pub fn install_hook() {
    std::panic::set_hook(Box::new(|info| {
        let location = info
            .location()
            .map(|l| format!("{}:{}", l.file(), l.line()))
            .unwrap_or_default();
        tracing::error!(%location, "panic: {}", message(info.payload()));
    }));
}

#[cfg(test)]
mod tests {
    use super::*;

    #[tokio::test]
    async fn a_panic_after_a_pending_poll_becomes_an_error() {
        let mut polled = false;
        let future = std::future::poll_fn(|cx| {
            if !polled {
                polled = true;
                cx.waker().wake_by_ref();
                return Poll::Pending;
            }
            panic!("handler bug {}", 7);
        });
        let out: Result<(), String> = CatchPanic::new(future).await;
        assert_eq!(out, Err("handler bug 7".to_string()));
    }

    #[tokio::test]
    async fn a_future_that_finishes_passes_its_value_through() {
        assert_eq!(CatchPanic::new(async { 42 }).await, Ok(42));
    }
}
