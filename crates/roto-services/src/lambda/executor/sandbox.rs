//! What the process and docker executors share: an instance's Runtime API, its output, one
//! invocation's run on it (deadline, result, drained lines), and the pool of warm instances.
//!
//! Every instance has its own Runtime API listener (`AWS_LAMBDA_RUNTIME_API`), as every
//! Lambda sandbox has its own endpoint: runtime clients (the Rust and Go ones among them)
//! build their URLs from that authority alone. An executor only starts the runtime (a
//! process, a container) and says how it stops; the rest happens here.

use std::collections::HashMap;
use std::convert::Infallible;
use std::future::Future;
use std::net::SocketAddr;
use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use roto_core::timestamp::{now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult};
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Notify};

use super::{Invocation, Outcome, Spec};

/// How long an instance may sit idle before it is stopped.
const IDLE_LIMIT: Duration = Duration::from_secs(300);
/// How often idle instances are looked for.
const REAP_EVERY: Duration = Duration::from_secs(15);
/// How long to wait for an instance's end marker after its result arrived.
const MARKER_WAIT: Duration = Duration::from_millis(200);
/// The line Roto's bootstraps write before posting a result.
pub(super) const END_MARKER: &str = "\u{1e}roto-end";

/// Why an instance did not start.
pub(super) enum StartFailure {
    /// Roto could not prepare it: the Invoke call fails with this error.
    Service(AwsError),
    /// The runtime's entrypoint cannot be executed (a `provided` function's bootstrap is
    /// missing, not executable, not a program): the invocation fails as the function's,
    /// with `Runtime.InvalidEntrypoint` and this message, as Lambda reports it.
    Entrypoint(String),
}

impl<E: Into<AwsError>> From<E> for StartFailure {
    fn from(error: E) -> StartFailure {
        StartFailure::Service(error.into())
    }
}

/// A result the runtime posted, or why none will come.
enum Reply {
    Response(Vec<u8>),
    Error(Vec<u8>),
    Exited(String),
}

/// An invocation waiting for a runtime to take it.
struct Work {
    invocation: Invocation,
    deadline_ms: i64,
}

/// The Runtime API state of one instance.
pub(super) struct Api {
    work_tx: mpsc::UnboundedSender<Work>,
    work_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Work>>,
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
    /// An init error posted, or the runtime's exit, before any invocation waited (a
    /// container's runtime may fail its init before Roto hands it the invocation that
    /// started it); the next invocation gets it.
    early: Mutex<Option<Reply>>,
    alive: AtomicBool,
}

impl Api {
    fn new() -> Api {
        let (work_tx, work_rx) = mpsc::unbounded_channel();
        Api {
            work_tx,
            work_rx: tokio::sync::Mutex::new(work_rx),
            pending: Mutex::new(HashMap::new()),
            early: Mutex::new(None),
            alive: AtomicBool::new(true),
        }
    }

    /// Binds a Runtime API listener on `addr` (port 0 picks one) and serves it until the
    /// instance holding the returned handle drops it.
    pub(super) async fn serve(
        addr: SocketAddr,
    ) -> std::io::Result<(Arc<Api>, SocketAddr, tokio::task::JoinHandle<()>)> {
        let listener = TcpListener::bind(addr).await?;
        let bound = listener.local_addr()?;
        let api = Arc::new(Api::new());
        let server = tokio::spawn(serve_api(listener, api.clone()));
        Ok((api, bound, server))
    }

    /// Records that the runtime is gone: the waiting invocation fails with `message`.
    pub(super) fn exited(&self, message: String) {
        self.alive.store(false, Ordering::SeqCst);
        self.reply_or_keep(Reply::Exited(message));
    }

    /// Gives a reply for no invocation in particular (an init error, the runtime's exit) to
    /// the waiting invocation, or keeps it for the next one if none waits yet; an init error
    /// kept is not replaced by the exit that follows it.
    fn reply_or_keep(&self, reply: Reply) {
        let pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        if pending.is_empty() {
            let mut early = self.early.lock().unwrap_or_else(|p| p.into_inner());
            if !matches!(*early, Some(Reply::Error(_))) {
                *early = Some(reply);
            }
            return;
        }
        drop(pending);
        self.reply(None, reply);
    }

    /// Registers an invocation waiting for its result; it gets a reply kept for it at once.
    fn wait_for(&self, request_id: &str, tx: oneshot::Sender<Reply>) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        let early = self.early.lock().unwrap_or_else(|p| p.into_inner()).take();
        match early {
            Some(reply) => {
                let _ = tx.send(reply);
            }
            None => {
                pending.insert(request_id.to_string(), tx);
            }
        }
    }

    fn reply(&self, request_id: Option<&str>, reply: Reply) {
        let mut pending = self.pending.lock().unwrap_or_else(|p| p.into_inner());
        match request_id {
            Some(id) => {
                if let Some(tx) = pending.remove(id) {
                    let _ = tx.send(reply);
                }
            }
            None => {
                let all: Vec<_> = pending.drain().collect();
                let mut reply = Some(reply);
                for (_, tx) in all {
                    let r = reply
                        .take()
                        .unwrap_or(Reply::Exited("the runtime failed".into()));
                    let _ = tx.send(r);
                }
            }
        }
    }
}

/// What an instance printed, and how many end markers it has printed.
#[derive(Default)]
pub(super) struct Output {
    lines: Mutex<(Vec<(i64, String)>, u64)>,
    changed: Notify,
}

impl Output {
    /// Adds one line the runtime wrote (without its newline).
    pub(super) fn push(&self, line: String) {
        let mut guard = self.lines.lock().unwrap_or_else(|p| p.into_inner());
        if line == END_MARKER {
            guard.1 += 1;
        } else {
            guard.0.push((now_millis(), line));
        }
        drop(guard);
        self.changed.notify_waiters();
    }

    fn markers(&self) -> u64 {
        self.lines.lock().unwrap_or_else(|p| p.into_inner()).1
    }

    fn take(&self) -> Vec<(i64, String)> {
        std::mem::take(&mut self.lines.lock().unwrap_or_else(|p| p.into_inner()).0)
    }

    /// Waits until more than `seen` markers were read, or `limit` passes.
    async fn wait_marker(&self, seen: u64, limit: Duration) {
        let deadline = tokio::time::Instant::now() + limit;
        loop {
            let notified = self.changed.notified();
            if self.markers() > seen {
                return;
            }
            if tokio::time::timeout_at(deadline, notified).await.is_err() {
                return;
            }
        }
    }
}

/// How an instance's last lines are known to have arrived after its result.
#[derive(Debug, Clone, Copy)]
pub(super) enum Drain {
    /// The runtime is Roto's bootstrap, which writes [`END_MARKER`] before each result.
    Marker,
    /// The runtime may write no marker: wait this long for stragglers, unless it has
    /// written markers before (Roto's bootstraps in a container image), whose next is
    /// awaited instead.
    Wait(Duration),
}

/// What holds an instance's runtime (a process, a container): dropping it stops the runtime.
pub(super) trait Sandbox: Send + Sync {
    /// The runtime's peak memory so far, in MB, where it can be measured.
    fn max_memory_mb(&self) -> Option<i64>;
}

/// A process's peak resident memory (`VmHWM`), from `/proc`, in MB.
pub(super) fn process_max_memory_mb(pid: u32) -> Option<i64> {
    let status = std::fs::read_to_string(format!("/proc/{pid}/status")).ok()?;
    let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
    let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
    Some((kb + 1023) / 1024)
}

/// One running runtime, whatever holds it.
pub(super) struct Instance {
    key: String,
    api: Arc<Api>,
    output: Arc<Output>,
    log_stream: String,
    drain: Drain,
    server: tokio::task::JoinHandle<()>,
    last_used: Mutex<Instant>,
    /// Dropping it stops the runtime and removes its files.
    sandbox: Box<dyn Sandbox>,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.server.abort();
    }
}

/// What an executor hands over once its runtime is started.
pub(super) struct Started {
    /// The instance's Runtime API and the task serving it (from [`Api::serve`]).
    pub api: (Arc<Api>, tokio::task::JoinHandle<()>),
    /// Where the runtime's lines arrive.
    pub output: Arc<Output>,
    /// The instance's log stream.
    pub log_stream: String,
    /// How its last lines are awaited.
    pub drain: Drain,
    /// Dropping it stops the runtime.
    pub sandbox: Box<dyn Sandbox>,
}

impl Instance {
    /// An instance of the function whose pool key is `key`.
    pub(super) fn new(key: &str, started: Started) -> Arc<Instance> {
        let (api, server) = started.api;
        Arc::new(Instance {
            key: key.to_string(),
            api,
            output: started.output,
            log_stream: started.log_stream,
            drain: started.drain,
            server,
            last_used: Mutex::new(Instant::now()),
            sandbox: started.sandbox,
        })
    }

    fn alive(&self) -> bool {
        self.api.alive.load(Ordering::SeqCst)
    }

    /// Runs one invocation until its result, its deadline (on the server clock, so an
    /// advanced clock times it out too) or the runtime's exit. Returns the outcome and
    /// whether the instance may serve again.
    async fn run(
        &self,
        spec: &Spec,
        invocation: Invocation,
        init_ms: Option<f64>,
    ) -> (Outcome, bool) {
        let request_id = invocation.request_id.clone();
        let (tx, mut rx) = oneshot::channel();
        self.api.wait_for(&request_id, tx);
        let markers = self.output.markers();
        let run_started = Instant::now();
        let started_ms = now_millis();
        let timeout_ms = i64::try_from(spec.timeout.max(1)).unwrap_or(i64::MAX / 1000) * 1000;
        let deadline_ms = started_ms + timeout_ms;
        let _ = self.api.work_tx.send(Work {
            invocation,
            deadline_ms,
        });
        let reply = tokio::select! {
            reply = &mut rx => Some(reply),
            () = roto_core::timestamp::sleep_until(deadline_ms) => None,
        };
        let duration_ms = run_started.elapsed().as_secs_f64() * 1000.0;
        let from_runtime = matches!(reply, Some(Ok(Reply::Response(_) | Reply::Error(_))));
        let unhandled = Some("Unhandled".to_string());
        let (payload, function_error, status, keep) = match reply {
            Some(Ok(Reply::Response(body))) => (body, None, None, true),
            Some(Ok(Reply::Error(body))) => (body, unhandled, None, true),
            Some(result) => {
                let message = match result {
                    Ok(Reply::Exited(m)) => m,
                    _ => "Runtime exited without providing a reason".into(),
                };
                let failure = RuntimeFailure::new(&request_id, "Runtime.ExitError", &message);
                self.output.push(failure.line.clone());
                (failure.document, unhandled, Some(failure.status), false)
            }
            None => {
                let now = now_millis();
                let message = format!(
                    "{} {request_id} Task timed out after {:.2} seconds",
                    roto_core::timestamp::format(now, TimestampFormat::Iso8601),
                    (now - started_ms) as f64 / 1000.0
                );
                self.output.push(message.clone());
                let doc = serde_json::json!({ "errorMessage": message })
                    .to_string()
                    .into_bytes();
                (doc, unhandled, Some("timeout".to_string()), false)
            }
        };
        if from_runtime {
            match self.drain {
                Drain::Marker => self.output.wait_marker(markers, MARKER_WAIT).await,
                Drain::Wait(_) if markers > 0 => {
                    self.output.wait_marker(markers, MARKER_WAIT).await;
                }
                Drain::Wait(wait) => tokio::time::sleep(wait).await,
            }
        }
        let outcome = Outcome {
            payload,
            function_error,
            lines: self.output.take(),
            log_stream: self.log_stream.clone(),
            duration_ms,
            init_ms,
            max_memory_mb: self.sandbox.max_memory_mb(),
            status,
        };
        (outcome, keep && self.alive())
    }
}

/// The warm instances of an executor, by pool key, and the task that stops idle ones.
#[derive(Default)]
pub(super) struct Pool {
    idle: Arc<Mutex<HashMap<String, Vec<Arc<Instance>>>>>,
    reaper: OnceLock<()>,
}

impl Pool {
    /// Runs an invocation on a warm instance of its function, or on one `start` starts.
    pub(super) async fn invoke<F, Fut>(
        &self,
        spec: Spec,
        invocation: Invocation,
        start: F,
    ) -> AwsResult<Outcome>
    where
        F: FnOnce(Spec) -> Fut,
        Fut: Future<Output = Result<Arc<Instance>, StartFailure>>,
    {
        let (instance, init_ms) = match self.take_idle(&spec.key) {
            Some(instance) => (instance, None),
            None => {
                self.start_reaper();
                let started = Instant::now();
                let init_ms = || Some(started.elapsed().as_secs_f64() * 1000.0);
                match start(spec.clone()).await {
                    Ok(instance) => (instance, init_ms()),
                    Err(StartFailure::Service(error)) => return Err(error),
                    Err(StartFailure::Entrypoint(message)) => {
                        let failure = RuntimeFailure::new(
                            &invocation.request_id,
                            "Runtime.InvalidEntrypoint",
                            &message,
                        );
                        return Ok(Outcome {
                            payload: failure.document,
                            function_error: Some("Unhandled".into()),
                            lines: vec![(now_millis(), failure.line)],
                            log_stream: log_stream_name(&spec.version),
                            duration_ms: 0.0,
                            init_ms: init_ms(),
                            max_memory_mb: None,
                            status: Some(failure.status),
                        });
                    }
                }
            }
        };
        let (outcome, keep) = instance.run(&spec, invocation, init_ms).await;
        if keep {
            self.give_back(instance);
        }
        Ok(outcome)
    }

    /// Stops the idle instances whose key starts with `prefix`.
    pub(super) fn retire(&self, prefix: &str) {
        let mut pools = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        pools.retain(|key, _| !key.starts_with(prefix));
    }

    /// Starts the task that stops idle instances (once, on the first start).
    fn start_reaper(&self) {
        self.reaper.get_or_init(|| {
            let idle = Arc::downgrade(&self.idle);
            tokio::spawn(async move {
                loop {
                    tokio::time::sleep(REAP_EVERY).await;
                    let Some(idle) = idle.upgrade() else { return };
                    let mut pools = idle.lock().unwrap_or_else(|p| p.into_inner());
                    for pool in pools.values_mut() {
                        pool.retain(|i| {
                            i.alive()
                                && i.last_used
                                    .lock()
                                    .unwrap_or_else(|p| p.into_inner())
                                    .elapsed()
                                    < IDLE_LIMIT
                        });
                    }
                    pools.retain(|_, pool| !pool.is_empty());
                }
            });
        });
    }

    fn take_idle(&self, key: &str) -> Option<Arc<Instance>> {
        let mut pools = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        let pool = pools.get_mut(key)?;
        while let Some(instance) = pool.pop() {
            if instance.alive() {
                return Some(instance);
            }
        }
        None
    }

    fn give_back(&self, instance: Arc<Instance>) {
        *instance.last_used.lock().unwrap_or_else(|p| p.into_inner()) = Instant::now();
        let mut pools = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        pools
            .entry(instance.key.clone())
            .or_default()
            .push(instance);
    }
}

/// A log stream name in AWS's form: `2024/01/31/[$LATEST]<32 hex digits>`.
pub(super) fn log_stream_name(version: &str) -> String {
    let date = roto_core::timestamp::format(now_millis(), TimestampFormat::Iso8601);
    let day = date.get(..10).unwrap_or_default().replace('-', "/");
    format!("{day}/[{version}]{:032x}", fastrand::u128(..))
}

/// The message of a runtime that exited, from its exit code (`None`: killed by a signal).
pub(super) fn exit_message(code: Option<i64>) -> String {
    match code {
        Some(code) => format!("Runtime exited with error: exit status {code}"),
        None => "Runtime exited with error: signal: killed".to_string(),
    }
}

/// How a runtime that failed outside the handler shows: the line in the function's log,
/// the error document the invocation returns, and the `REPORT` line's status.
struct RuntimeFailure {
    line: String,
    document: Vec<u8>,
    status: String,
}

impl RuntimeFailure {
    fn new(request_id: &str, error_type: &str, message: &str) -> RuntimeFailure {
        let line = format!("RequestId: {request_id} Error: {message}");
        RuntimeFailure {
            document: error_document(error_type, &line),
            status: format!("error\tError Type: {error_type}"),
            line,
        }
    }
}

/// The error document of a failure Roto detects itself (timeouts, exits).
fn error_document(error_type: &str, message: &str) -> Vec<u8> {
    serde_json::json!({"errorType": error_type, "errorMessage": message})
        .to_string()
        .into_bytes()
}

type ApiBody = http_body_util::combinators::BoxBody<Bytes, Infallible>;

fn reply_with(status: u16, body: impl Into<Bytes>) -> hyper::Response<ApiBody> {
    let mut resp = hyper::Response::new(Full::new(body.into()).boxed());
    *resp.status_mut() = http::StatusCode::from_u16(status).unwrap_or(http::StatusCode::OK);
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

/// Serves one instance's Runtime API until the instance stops.
async fn serve_api(listener: TcpListener, api: Arc<Api>) {
    loop {
        let Ok((stream, _)) = listener.accept().await else {
            continue;
        };
        let _ = stream.set_nodelay(true);
        let api = api.clone();
        tokio::spawn(async move {
            let service = service_fn(move |req| {
                let api = api.clone();
                async move { Ok::<_, Infallible>(runtime_api(&api, req).await) }
            });
            let _ = hyper::server::conn::http1::Builder::new()
                .keep_alive(true)
                .serve_connection(TokioIo::new(stream), service)
                .await;
        });
    }
}

/// One Runtime API request.
async fn runtime_api(api: &Api, req: hyper::Request<Incoming>) -> hyper::Response<ApiBody> {
    let path = req.uri().path().to_string();
    let Some(rest) = path.strip_prefix("/2018-06-01/runtime/") else {
        return reply_with(
            404,
            r#"{"errorType":"NotFound","errorMessage":"unknown path"}"#,
        );
    };
    if rest == "invocation/next" {
        let mut rx = api.work_rx.lock().await;
        let Some(work) = rx.recv().await else {
            return reply_with(500, r#"{"errorType":"Shutdown"}"#);
        };
        drop(rx);
        let inv = work.invocation;
        let mut resp = reply_with(200, inv.payload);
        let headers = resp.headers_mut();
        let mut set = |name: &'static str, value: &str| {
            if let Ok(v) = http::HeaderValue::from_str(value) {
                headers.insert(name, v);
            }
        };
        set("lambda-runtime-aws-request-id", &inv.request_id);
        set("lambda-runtime-deadline-ms", &work.deadline_ms.to_string());
        set("lambda-runtime-invoked-function-arn", &inv.invoked_arn);
        set(
            "lambda-runtime-trace-id",
            &format!(
                "Root=1-{:08x}-{:024x};Sampled=0",
                now_millis() / 1000,
                fastrand::u128(..) >> 32
            ),
        );
        if let Some(cc) = &inv.client_context {
            set("lambda-runtime-client-context", cc);
        }
        return resp;
    }
    let body = match req.into_body().collect().await {
        Ok(b) => b.to_bytes().to_vec(),
        Err(_) => return reply_with(400, r#"{"errorType":"InvalidRequest"}"#),
    };
    if rest == "init/error" {
        api.reply_or_keep(Reply::Error(body));
        return reply_with(202, r#"{"status":"OK"}"#);
    }
    let mut parts = rest.splitn(3, '/');
    match (parts.next(), parts.next(), parts.next()) {
        (Some("invocation"), Some(id), Some("response")) => {
            api.reply(Some(id), Reply::Response(body));
            reply_with(202, r#"{"status":"OK"}"#)
        }
        (Some("invocation"), Some(id), Some("error")) => {
            api.reply(Some(id), Reply::Error(body));
            reply_with(202, r#"{"status":"OK"}"#)
        }
        _ => reply_with(
            404,
            r#"{"errorType":"NotFound","errorMessage":"unknown path"}"#,
        ),
    }
}
