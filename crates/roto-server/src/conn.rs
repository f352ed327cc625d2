//! Connection hygiene: no client holds a connection, a file descriptor or a request open
//! for ever.
//!
//! Each connection's socket is wrapped in [`TrackedIo`], which records when bytes last
//! moved and when a request's head began to arrive; the service wrapper records when
//! requests start and finish ([`Activity`]). A [`watchdog`] on a task of its own beside
//! each connection (so that it costs requests nothing) then closes it when a request head takes longer than the header timeout (slowloris) or when
//! no request has been in flight and no byte has moved for the idle timeout. Request bodies
//! go through [`TimedBody`], which fails a body that sends no byte for the body timeout, so
//! a slow upload that keeps sending is never cut. [`Connections`] knows every open
//! connection, so that when `accept` fails for want of file descriptors the listener closes
//! the connections idle the longest and backs off briefly instead of spinning.

use std::collections::HashMap;
use std::future::Future;
use std::io;
use std::pin::Pin;
use std::sync::atomic::{AtomicBool, AtomicU64, AtomicUsize, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::task::{Context, Poll};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body::{Body, Frame, SizeHint};
use tokio::io::{AsyncRead, AsyncWrite, ReadBuf};
use tokio::sync::Notify;
use tokio::time::Sleep;

/// The connection and body timeouts.
#[derive(Debug, Clone, Copy)]
pub struct Timeouts {
    /// From a request's first byte to its complete head.
    pub header: Duration,
    /// The longest wait for the next byte of a request body.
    pub body: Duration,
    /// The longest a connection may stay open with no request in flight and no byte moving.
    pub idle: Duration,
}

/// The marker for "no request head is arriving".
const NO_HEAD: u64 = u64::MAX;

/// The HTTP/2 connection preface a prior-knowledge client opens with.
const H2_PREFACE: &[u8] = b"PRI * HTTP/2.0";

/// Milliseconds on a monotonic clock shared by every connection.
fn now_ms() -> u64 {
    static START: OnceLock<Instant> = OnceLock::new();
    u64::try_from(START.get_or_init(Instant::now).elapsed().as_millis()).unwrap_or(u64::MAX)
}

/// What one connection has been doing.
pub struct Activity {
    /// When a byte last moved or a response was last produced.
    last: AtomicU64,
    /// When the first byte of a request whose head is not complete arrived, or [`NO_HEAD`].
    head_since: AtomicU64,
    /// Requests the service is answering.
    in_flight: AtomicUsize,
    /// Whether the connection speaks HTTP/2 (whose control frames are no request head).
    h2: AtomicBool,
    /// Whether the connection has ended.
    closed: AtomicBool,
    /// Wakes the watchdog: the connection ended, or it is asked to close if idle.
    shed: Notify,
}

impl Activity {
    fn new() -> Activity {
        Activity {
            last: AtomicU64::new(now_ms()),
            head_since: AtomicU64::new(NO_HEAD),
            in_flight: AtomicUsize::new(0),
            h2: AtomicBool::new(false),
            closed: AtomicBool::new(false),
            shed: Notify::new(),
        }
    }

    fn read(&self, bytes: &[u8], first: bool) {
        let now = now_ms();
        self.last.store(now, Ordering::Relaxed);
        if first && bytes.starts_with(H2_PREFACE) {
            self.h2.store(true, Ordering::Relaxed);
        }
        if !bytes.is_empty()
            && self.in_flight.load(Ordering::Relaxed) == 0
            && !self.h2.load(Ordering::Relaxed)
        {
            let _ = self.head_since.compare_exchange(
                NO_HEAD,
                now,
                Ordering::Relaxed,
                Ordering::Relaxed,
            );
        }
    }

    fn wrote(&self) {
        self.last.store(now_ms(), Ordering::Relaxed);
    }

    /// Marks a request as being answered until the returned guard drops.
    pub fn begin(self: &Arc<Activity>) -> InFlight {
        self.in_flight.fetch_add(1, Ordering::Relaxed);
        self.head_since.store(NO_HEAD, Ordering::Relaxed);
        InFlight(self.clone())
    }

    /// When the connection became idle, if it is.
    fn idle_since(&self) -> Option<u64> {
        (self.in_flight.load(Ordering::Relaxed) == 0
            && self.head_since.load(Ordering::Relaxed) == NO_HEAD)
            .then(|| self.last.load(Ordering::Relaxed))
    }
}

/// Marks the connection as ended when dropped (however its task ends), so its watchdog
/// stops.
pub struct Closing(pub Arc<Activity>);

impl Drop for Closing {
    fn drop(&mut self) {
        self.0.closed.store(true, Ordering::Relaxed);
        self.0.shed.notify_one();
    }
}

/// A request in flight on a connection.
pub struct InFlight(Arc<Activity>);

impl Drop for InFlight {
    fn drop(&mut self) {
        self.0.in_flight.fetch_sub(1, Ordering::Relaxed);
        self.0.wrote();
    }
}

/// Watches a connection from its own task: `true` when the connection should be closed
/// (its request head is late, it has been idle too long, or it was asked to close while
/// idle), `false` once it has ended by itself.
///
/// Requests never wake it: it looks at the connection at least once per header timeout,
/// which is enough to close a head that started arriving since exactly when it is due (a
/// head that began at `h` is seen at the first look after `h`, no later than
/// `h + header`, and that look then sleeps until `h + header`).
pub async fn watchdog(activity: &Activity, timeouts: Timeouts) -> bool {
    let header = millis(timeouts.header).max(1);
    loop {
        if activity.closed.load(Ordering::Relaxed) {
            return false;
        }
        let now = now_ms();
        let head = activity.head_since.load(Ordering::Relaxed);
        let due = if activity.in_flight.load(Ordering::Relaxed) > 0 {
            u64::MAX
        } else if head != NO_HEAD {
            head.saturating_add(header)
        } else {
            activity
                .last
                .load(Ordering::Relaxed)
                .saturating_add(millis(timeouts.idle))
        };
        if due <= now {
            return true;
        }
        let wait = (due - now).min(header);
        tokio::select! {
            () = tokio::time::sleep(Duration::from_millis(wait)) => {}
            () = activity.shed.notified() => {
                if activity.idle_since().is_some() && !activity.closed.load(Ordering::Relaxed) {
                    return true;
                }
            }
        }
    }
}

fn millis(d: Duration) -> u64 {
    u64::try_from(d.as_millis()).unwrap_or(u64::MAX)
}

/// Every open connection's activity, by connection number.
#[derive(Default)]
pub struct Connections {
    open: Mutex<HashMap<u64, Arc<Activity>>>,
    next: AtomicU64,
}

/// A connection's place in [`Connections`], given up when it drops.
pub struct Tracked {
    /// The connection's activity.
    pub activity: Arc<Activity>,
    id: u64,
    connections: Arc<Connections>,
}

impl Drop for Tracked {
    fn drop(&mut self) {
        lock(&self.connections.open).remove(&self.id);
    }
}

fn lock<T>(m: &Mutex<T>) -> std::sync::MutexGuard<'_, T> {
    m.lock().unwrap_or_else(|p| p.into_inner())
}

impl Connections {
    /// Registers a new connection.
    pub fn track(self: &Arc<Connections>) -> Tracked {
        let id = self.next.fetch_add(1, Ordering::Relaxed);
        let activity = Arc::new(Activity::new());
        lock(&self.open).insert(id, activity.clone());
        Tracked {
            activity,
            id,
            connections: self.clone(),
        }
    }

    /// What the listener does when `accept` fails: out of file descriptors, it closes the
    /// quarter of idle connections idle the longest (at least one); in every case it waits
    /// a moment, so a failing `accept` never spins.
    pub async fn after_accept_error(&self, error: &io::Error) {
        if out_of_descriptors(error) {
            self.shed_idle();
        }
        tracing::warn!(%error, "accept failed");
        tokio::time::sleep(Duration::from_millis(10)).await;
    }

    fn shed_idle(&self) {
        let mut idle: Vec<(u64, Arc<Activity>)> = lock(&self.open)
            .values()
            .filter_map(|a| a.idle_since().map(|since| (since, a.clone())))
            .collect();
        idle.sort_by_key(|(since, _)| *since);
        let count = (idle.len() / 4).max(1);
        for (_, activity) in idle.iter().take(count) {
            activity.shed.notify_one();
        }
    }
}

/// A socket that reports its reads and writes to the connection's [`Activity`].
pub struct TrackedIo<T> {
    inner: T,
    activity: Arc<Activity>,
    first_read: bool,
}

impl<T> TrackedIo<T> {
    /// Wraps a socket.
    pub fn new(inner: T, activity: Arc<Activity>) -> TrackedIo<T> {
        TrackedIo {
            inner,
            activity,
            first_read: true,
        }
    }
}

impl<T: AsyncRead + Unpin> AsyncRead for TrackedIo<T> {
    fn poll_read(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &mut ReadBuf<'_>,
    ) -> Poll<io::Result<()>> {
        let before = buf.filled().len();
        let this = &mut *self;
        let polled = Pin::new(&mut this.inner).poll_read(cx, buf);
        if let Poll::Ready(Ok(())) = polled {
            this.activity.read(&buf.filled()[before..], this.first_read);
            this.first_read = false;
        }
        polled
    }
}

impl<T: AsyncWrite + Unpin> AsyncWrite for TrackedIo<T> {
    fn poll_write(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        buf: &[u8],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write(cx, buf);
        if let Poll::Ready(Ok(_)) = polled {
            self.activity.wrote();
        }
        polled
    }

    fn poll_write_vectored(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
        bufs: &[io::IoSlice<'_>],
    ) -> Poll<io::Result<usize>> {
        let polled = Pin::new(&mut self.inner).poll_write_vectored(cx, bufs);
        if let Poll::Ready(Ok(_)) = polled {
            self.activity.wrote();
        }
        polled
    }

    fn is_write_vectored(&self) -> bool {
        self.inner.is_write_vectored()
    }

    fn poll_flush(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_flush(cx)
    }

    fn poll_shutdown(mut self: Pin<&mut Self>, cx: &mut Context<'_>) -> Poll<io::Result<()>> {
        Pin::new(&mut self.inner).poll_shutdown(cx)
    }
}

pin_project_lite::pin_project! {
    /// A request body that fails once no byte has arrived for the body timeout.
    pub struct TimedBody<B> {
        #[pin]
        inner: B,
        timeout: Duration,
        sleep: Option<Pin<Box<Sleep>>>,
        armed: bool,
        expired: Arc<AtomicBool>,
    }
}

impl<B> TimedBody<B> {
    /// Wraps a body; `expired` is set if it times out.
    pub fn new(inner: B, timeout: Duration, expired: Arc<AtomicBool>) -> TimedBody<B> {
        TimedBody {
            inner,
            timeout,
            sleep: None,
            armed: false,
            expired,
        }
    }
}

impl<B> Body for TimedBody<B>
where
    B: Body<Data = Bytes>,
    B::Error: Into<Box<dyn std::error::Error + Send + Sync>>,
{
    type Data = Bytes;
    type Error = io::Error;

    fn poll_frame(
        self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
        let this = self.project();
        if let Poll::Ready(frame) = this.inner.poll_frame(cx) {
            *this.armed = false;
            return Poll::Ready(frame.map(|f| f.map_err(io::Error::other)));
        }
        let deadline = tokio::time::Instant::now() + *this.timeout;
        let sleep = this
            .sleep
            .get_or_insert_with(|| Box::pin(tokio::time::sleep_until(deadline)));
        if !*this.armed {
            sleep.as_mut().reset(deadline);
            *this.armed = true;
        }
        if sleep.as_mut().poll(cx).is_ready() {
            this.expired.store(true, Ordering::Relaxed);
            return Poll::Ready(Some(Err(io::Error::new(
                io::ErrorKind::TimedOut,
                "no byte of the request body arrived within the body timeout",
            ))));
        }
        Poll::Pending
    }

    fn is_end_stream(&self) -> bool {
        self.inner.is_end_stream()
    }

    fn size_hint(&self) -> SizeHint {
        self.inner.size_hint()
    }
}

/// The most of an unread request body drained after its answer to keep the connection.
const MAX_DRAINED: u64 = 1024 * 1024;

/// A request body that is read to its end even when its handler answers without it (an
/// error found in the request head, say). Left unread, the body's bytes would still be
/// arriving when the connection closes, and the reset that closing then causes can destroy
/// an answer the client has not read yet (RFC 9112, section 9.6). Dropped unread, the body
/// is drained on a task of its own, up to [`MAX_DRAINED`] bytes and within its timeout,
/// while the answer goes out; a longer body, or one whose client awaits
/// `100 Continue` and so never sends it, closes the connection instead.
pub struct DrainOnDrop<B: Body<Data = Bytes> + Unpin + Send + 'static> {
    inner: Option<B>,
    drain: bool,
}

impl<B: Body<Data = Bytes> + Unpin + Send + 'static> DrainOnDrop<B> {
    /// Wraps a body; `awaits_continue` when its request asked for `100 Continue`.
    pub fn new(inner: B, awaits_continue: bool) -> DrainOnDrop<B> {
        DrainOnDrop {
            inner: Some(inner),
            drain: !awaits_continue,
        }
    }
}

impl<B: Body<Data = Bytes> + Unpin + Send + 'static> Body for DrainOnDrop<B> {
    type Data = Bytes;
    type Error = B::Error;

    fn poll_frame(
        mut self: Pin<&mut Self>,
        cx: &mut Context<'_>,
    ) -> Poll<Option<Result<Frame<Bytes>, B::Error>>> {
        match self.inner.as_mut() {
            Some(inner) => Pin::new(inner).poll_frame(cx),
            None => Poll::Ready(None),
        }
    }

    fn is_end_stream(&self) -> bool {
        self.inner.as_ref().is_none_or(Body::is_end_stream)
    }

    fn size_hint(&self) -> SizeHint {
        self.inner
            .as_ref()
            .map_or_else(|| SizeHint::with_exact(0), Body::size_hint)
    }
}

impl<B: Body<Data = Bytes> + Unpin + Send + 'static> Drop for DrainOnDrop<B> {
    fn drop(&mut self) {
        let Some(mut body) = self.inner.take() else {
            return;
        };
        if !self.drain || body.is_end_stream() || body.size_hint().lower() > MAX_DRAINED {
            return;
        }
        let Ok(runtime) = tokio::runtime::Handle::try_current() else {
            return;
        };
        runtime.spawn(async move {
            let mut drained = 0u64;
            while drained <= MAX_DRAINED {
                match std::future::poll_fn(|cx| Pin::new(&mut body).poll_frame(cx)).await {
                    Some(Ok(frame)) => {
                        drained += frame.data_ref().map_or(0, |d| d.len() as u64);
                    }
                    _ => return,
                }
            }
        });
    }
}

/// Whether `accept` failed for want of file descriptors or socket memory.
#[cfg(unix)]
fn out_of_descriptors(error: &io::Error) -> bool {
    matches!(
        error.raw_os_error(),
        Some(libc::EMFILE | libc::ENFILE | libc::ENOBUFS | libc::ENOMEM)
    )
}

/// Whether `accept` failed for want of file descriptors (no such limit to hit here).
#[cfg(not(unix))]
fn out_of_descriptors(_: &io::Error) -> bool {
    false
}

/// Raises the soft limit on open files to the hard limit, so that many clients (and the
/// store's blob files) do not run out of descriptors at a low default such as 256 or 1024.
#[cfg(unix)]
pub fn raise_fd_limit() {
    let mut limit = libc::rlimit {
        rlim_cur: 0,
        rlim_max: 0,
    };
    // SAFETY: getrlimit and setrlimit only read and write the struct passed to them.
    unsafe {
        if libc::getrlimit(libc::RLIMIT_NOFILE, &mut limit) != 0 || limit.rlim_cur >= limit.rlim_max
        {
            return;
        }
        limit.rlim_cur = limit.rlim_max;
        if libc::setrlimit(libc::RLIMIT_NOFILE, &limit) != 0 {
            tracing::debug!("could not raise the open-file limit");
        }
    }
}

/// Raises the open-file limit where there is one to raise (not here).
#[cfg(not(unix))]
pub fn raise_fd_limit() {}

#[cfg(test)]
mod tests {
    use super::*;
    use http_body_util::BodyExt;

    #[test]
    fn a_request_head_in_progress_is_not_idle_until_the_request_starts() {
        let activity = Arc::new(Activity::new());
        assert!(activity.idle_since().is_some());
        activity.read(b"GET / HTTP/1.1\r\n", true);
        assert!(activity.idle_since().is_none());
        let guard = activity.begin();
        assert!(activity.idle_since().is_none());
        drop(guard);
        assert!(activity.idle_since().is_some());
    }

    #[test]
    fn http2_frames_are_no_request_head() {
        let activity = Activity::new();
        activity.read(b"PRI * HTTP/2.0\r\n\r\nSM\r\n\r\n", true);
        assert!(activity.idle_since().is_some());
    }

    #[tokio::test]
    async fn the_watchdog_closes_a_connection_whose_head_is_late() {
        let timeouts = Timeouts {
            header: Duration::from_millis(100),
            body: Duration::from_secs(60),
            idle: Duration::from_secs(60),
        };
        let activity = Activity::new();
        activity.read(b"GE", true);
        let started = Instant::now();
        let close = tokio::time::timeout(Duration::from_secs(5), watchdog(&activity, timeouts));
        assert!(close.await.unwrap());
        assert!(started.elapsed() >= Duration::from_millis(90));
    }

    #[tokio::test]
    async fn shedding_closes_idle_connections_and_spares_busy_ones() {
        let timeouts = Timeouts {
            header: Duration::from_secs(60),
            body: Duration::from_secs(60),
            idle: Duration::from_secs(60),
        };
        let connections = Arc::new(Connections::default());
        let idle = connections.track();
        let busy = connections.track();
        let _request = busy.activity.begin();
        connections.shed_idle();
        busy.activity.shed.notify_one();
        let close =
            tokio::time::timeout(Duration::from_secs(1), watchdog(&idle.activity, timeouts));
        assert!(close.await.unwrap());
        let busy_watch = watchdog(&busy.activity, timeouts);
        assert!(tokio::time::timeout(Duration::from_millis(50), busy_watch)
            .await
            .is_err());
        drop(Closing(busy.activity.clone()));
        let ended =
            tokio::time::timeout(Duration::from_secs(1), watchdog(&busy.activity, timeouts));
        assert!(!ended.await.unwrap());
    }

    /// A body that yields ten bytes, then never another.
    struct Stalled(bool);

    impl Body for Stalled {
        type Data = Bytes;
        type Error = io::Error;

        fn poll_frame(
            mut self: Pin<&mut Self>,
            _: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, io::Error>>> {
            if std::mem::replace(&mut self.0, true) {
                return Poll::Pending;
            }
            Poll::Ready(Some(Ok(Frame::data(Bytes::from_static(b"0123456789")))))
        }
    }

    #[tokio::test]
    async fn a_body_that_stops_sending_fails_and_says_so() {
        let expired = Arc::new(AtomicBool::new(false));
        let body = TimedBody::new(Stalled(false), Duration::from_millis(50), expired.clone());
        let error = body.collect().await.err().unwrap();
        assert_eq!(error.kind(), io::ErrorKind::TimedOut);
        assert!(expired.load(Ordering::Relaxed));
    }
}
