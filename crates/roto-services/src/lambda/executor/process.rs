//! The `process` executor: runtimes as local processes speaking the Lambda Runtime API.
//!
//! Each instance is one process with its code unpacked in a private temporary directory
//! and its own loopback Runtime API listener (`AWS_LAMBDA_RUNTIME_API`), as every Lambda
//! sandbox has its own endpoint: runtime clients (the Rust and Go ones among them) build
//! their URLs from that authority alone. python and node run the small bootstraps Roto
//! ships; `provided.*` runs the zip's `bootstrap`. An instance runs one invocation at a
//! time, goes back to its pool when it ends, and is stopped when idle for
//! [`IDLE_LIMIT`], when it times out, or when its function changes.
//!
//! The runtime starts through `sh -c 'exec prog 2>&1'`, so stdout and stderr share one
//! pipe and lines keep their order; Roto's bootstraps write
//! an end marker before posting each result, so an invocation's lines are all read before
//! it returns.

use std::collections::HashMap;
use std::convert::Infallible;
use std::io;
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::atomic::{AtomicU64, Ordering};
use std::sync::{Arc, Mutex, OnceLock};
use std::time::{Duration, Instant};

use bytes::Bytes;
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper::service::service_fn;
use hyper_util::rt::TokioIo;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, BoxFuture, Env};
use tokio::io::AsyncBufReadExt;
use tokio::net::TcpListener;
use tokio::sync::{mpsc, oneshot, Notify};

use super::{unsupported, Executor, Invocation, Outcome, Spec};
use crate::lambda::zip;

/// How long an instance may sit idle before it is stopped.
const IDLE_LIMIT: Duration = Duration::from_secs(300);
/// How often idle instances are looked for.
const REAP_EVERY: Duration = Duration::from_secs(15);
/// How long to wait for an instance's last lines after its result arrived.
const DRAIN_WAIT: Duration = Duration::from_millis(200);
/// How long to let a `provided` runtime's last lines arrive (it writes no end marker).
const PROVIDED_DRAIN_WAIT: Duration = Duration::from_millis(5);
/// The line Roto's bootstraps write before posting a result.
const END_MARKER: &str = "\u{1e}roto-end";

const PYTHON_BOOTSTRAP: &str = include_str!("bootstrap.py");
const NODE_BOOTSTRAP: &str = include_str!("bootstrap.js");

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
struct Api {
    work_tx: mpsc::UnboundedSender<Work>,
    work_rx: tokio::sync::Mutex<mpsc::UnboundedReceiver<Work>>,
    pending: Mutex<HashMap<String, oneshot::Sender<Reply>>>,
}

impl Api {
    fn new() -> Api {
        let (work_tx, work_rx) = mpsc::unbounded_channel();
        Api {
            work_tx,
            work_rx: tokio::sync::Mutex::new(work_rx),
            pending: Mutex::new(HashMap::new()),
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

/// What the instance printed, and how many end markers it has printed.
#[derive(Default)]
struct Output {
    lines: Mutex<(Vec<(i64, String)>, u64)>,
    changed: Notify,
}

impl Output {
    fn push(&self, line: String) {
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

/// One running runtime process.
struct Instance {
    key: String,
    api: Arc<Api>,
    output: Arc<Output>,
    log_stream: String,
    pid: Option<u32>,
    /// Dropping it stops the process.
    _kill: oneshot::Sender<()>,
    server: tokio::task::JoinHandle<()>,
    alive: Arc<std::sync::atomic::AtomicBool>,
    last_used: Mutex<Instant>,
    _dir: tempfile::TempDir,
}

impl Drop for Instance {
    fn drop(&mut self) {
        self.server.abort();
    }
}

impl Instance {
    fn alive(&self) -> bool {
        self.alive.load(Ordering::SeqCst)
    }

    /// The process's peak resident memory, from `/proc`, in MB.
    fn max_memory_mb(&self) -> Option<i64> {
        let status = std::fs::read_to_string(format!("/proc/{}/status", self.pid?)).ok()?;
        let line = status.lines().find(|l| l.starts_with("VmHWM:"))?;
        let kb: i64 = line.split_whitespace().nth(1)?.parse().ok()?;
        Some((kb + 1023) / 1024)
    }
}

/// The process executor.
pub struct ProcessExecutor {
    env: Arc<Env>,
    /// Where the shipped bootstraps live (`LAMBDA_RUNTIME_DIR`), and instances' code.
    root: tempfile::TempDir,
    idle: Arc<Mutex<HashMap<String, Vec<Arc<Instance>>>>>,
    reaper: OnceLock<()>,
    started: AtomicU64,
    /// The Python interpreter behind `python3`, found on first use.
    python: OnceLock<PathBuf>,
}

impl ProcessExecutor {
    /// Writes the bootstraps into a private temporary directory.
    pub fn new(env: Arc<Env>) -> io::Result<ProcessExecutor> {
        let root = tempfile::Builder::new().prefix("roto-lambda-").tempdir()?;
        let runtime = root.path().join("runtime");
        std::fs::create_dir_all(&runtime)?;
        std::fs::write(runtime.join("bootstrap.py"), PYTHON_BOOTSTRAP)?;
        std::fs::write(runtime.join("bootstrap.js"), NODE_BOOTSTRAP)?;
        Ok(ProcessExecutor {
            env,
            root,
            idle: Arc::new(Mutex::new(HashMap::new())),
            reaper: OnceLock::new(),
            started: AtomicU64::new(0),
            python: OnceLock::new(),
        })
    }

    fn runtime_dir(&self) -> PathBuf {
        self.root.path().join("runtime")
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

    /// The program and arguments that start a runtime.
    fn command(&self, spec: &Spec, task: &Path) -> AwsResult<(PathBuf, Vec<PathBuf>)> {
        let runtime = spec.runtime.as_str();
        if runtime.starts_with("python") {
            let python = self
                .python
                .get_or_init(|| real_python().unwrap_or_else(|| "python3".into()));
            Ok((
                python.clone(),
                vec!["-u".into(), self.runtime_dir().join("bootstrap.py")],
            ))
        } else if runtime.starts_with("nodejs") {
            Ok(("node".into(), vec![self.runtime_dir().join("bootstrap.js")]))
        } else if runtime.starts_with("provided") {
            Ok((task.join("bootstrap"), Vec::new()))
        } else {
            Err(unsupported(format!(
                "The runtime {runtime} is not supported by Roto's process executor (python, nodejs and provided are)"
            )))
        }
    }

    /// Starts an instance: unpacks the code, binds its Runtime API, spawns the runtime.
    async fn start(&self, spec: &Spec) -> AwsResult<Arc<Instance>> {
        self.start_reaper();
        let code = crate::lambda::read_blob(&self.env, &spec.code_blob)?;
        let dir = tempfile::Builder::new()
            .prefix("instance-")
            .tempdir_in(self.root.path())?;
        let task = dir.path().join("task");
        std::fs::create_dir_all(&task)?;
        zip::extract(&code, &task)?;
        let opt = dir.path().join("opt");
        std::fs::create_dir_all(&opt)?;
        for layer in &spec.layers {
            zip::extract(&crate::lambda::read_blob(&self.env, layer)?, &opt)?;
        }
        let (program, args) = self.command(spec, &task)?;

        let listener = TcpListener::bind("127.0.0.1:0").await?;
        let api_addr = listener.local_addr()?;
        let api = Arc::new(Api::new());
        let server = tokio::spawn(serve_api(listener, api.clone()));

        let n = self.started.fetch_add(1, Ordering::Relaxed);
        let log_stream = log_stream_name(&spec.version, n);
        let mut cmd = tokio::process::Command::new("/bin/sh");
        cmd.arg("-c")
            .arg("exec \"$0\" \"$@\" 2>&1")
            .arg(&program)
            .args(&args)
            .current_dir(&task)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::null())
            .kill_on_drop(true);
        for (k, v) in std::env::vars() {
            if matches!(k.as_str(), "HOME" | "LANG" | "PYENV_ROOT" | "PYENV_VERSION") {
                cmd.env(k, v);
            }
        }
        for (k, v) in search_paths(&opt, &spec.environment) {
            cmd.env(k, v);
        }
        for (k, v) in &spec.environment {
            if !matches!(
                k.as_str(),
                "PATH" | "PYTHONPATH" | "NODE_PATH" | "LD_LIBRARY_PATH"
            ) {
                cmd.env(k, v);
            }
        }
        let endpoint = self
            .env
            .endpoint()
            .unwrap_or("http://127.0.0.1:4566")
            .to_string();
        cmd.env("AWS_LAMBDA_RUNTIME_API", api_addr.to_string())
            .env("_HANDLER", &spec.handler)
            .env("LAMBDA_TASK_ROOT", &task)
            .env("LAMBDA_RUNTIME_DIR", self.runtime_dir())
            .env("AWS_LAMBDA_FUNCTION_NAME", &spec.name)
            .env("AWS_LAMBDA_FUNCTION_VERSION", &spec.version)
            .env("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", spec.memory.to_string())
            .env("AWS_LAMBDA_LOG_GROUP_NAME", &spec.log_group)
            .env("AWS_LAMBDA_LOG_STREAM_NAME", &log_stream)
            .env("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand")
            .env("AWS_EXECUTION_ENV", format!("AWS_Lambda_{}", spec.runtime))
            .env("AWS_REGION", &spec.region)
            .env("AWS_DEFAULT_REGION", &spec.region)
            .env("AWS_ACCESS_KEY_ID", &spec.account)
            .env("AWS_SECRET_ACCESS_KEY", "roto")
            .env("AWS_SESSION_TOKEN", "roto")
            .env("AWS_ENDPOINT_URL", endpoint)
            .env("TZ", ":UTC")
            .env("PYTHONUNBUFFERED", "1");
        let mut child = cmd.spawn().map_err(|e| {
            AwsError::new(
                "ServiceException",
                format!(
                    "Cannot start the {} runtime ({}): {e}",
                    spec.runtime,
                    program.display()
                ),
            )
            .with_status(500)
        })?;
        drop(cmd);
        let pid = child.id();
        let output = Arc::new(Output::default());
        if let Some(stdout) = child.stdout.take() {
            let output = output.clone();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(stdout);
                let mut buf = Vec::new();
                while matches!(reader.read_until(b'\n', &mut buf).await, Ok(n) if n > 0) {
                    let line = String::from_utf8_lossy(&buf);
                    output.push(line.trim_end_matches(['\n', '\r']).to_string());
                    buf.clear();
                }
            });
        }
        let alive = Arc::new(std::sync::atomic::AtomicBool::new(true));
        let (kill, killed) = oneshot::channel::<()>();
        {
            let api = api.clone();
            let alive = alive.clone();
            tokio::spawn(async move {
                let message = tokio::select! {
                    status = child.wait() => match status {
                        Ok(s) => match s.code() {
                            Some(code) => format!("Runtime exited with error: exit status {code}"),
                            None => "Runtime exited with error: signal: killed".to_string(),
                        },
                        Err(e) => format!("Runtime exited with error: {e}"),
                    },
                    _ = killed => {
                        let _ = child.kill().await;
                        "Runtime exited with error: signal: killed".to_string()
                    }
                };
                alive.store(false, Ordering::SeqCst);
                api.reply(None, Reply::Exited(message));
            });
        }
        Ok(Arc::new(Instance {
            key: spec.key.clone(),
            api,
            output,
            log_stream,
            pid,
            _kill: kill,
            server,
            alive,
            last_used: Mutex::new(Instant::now()),
            _dir: dir,
        }))
    }
}

/// The search paths of a runtime with its layers under `opt`, as Lambda lays out `/opt`:
/// the function's own values first, then the layers' directories, then Roto's `PATH`.
fn search_paths(
    opt: &Path,
    environment: &std::collections::BTreeMap<String, String>,
) -> Vec<(String, String)> {
    let join = |name: &str, dirs: &[&str], inherited: Option<String>| {
        let mut parts: Vec<String> = environment.get(name).cloned().into_iter().collect();
        parts.extend(dirs.iter().map(|d| opt.join(d).display().to_string()));
        parts.extend(inherited);
        (name.to_string(), parts.join(":"))
    };
    vec![
        join("PATH", &["bin"], std::env::var("PATH").ok()),
        join("PYTHONPATH", &["python"], None),
        join("NODE_PATH", &["nodejs/node_modules"], None),
        join("LD_LIBRARY_PATH", &["lib"], None),
    ]
}

/// The interpreter `python3` on the PATH runs: version managers (pyenv) put a shell shim
/// there whose start-up would be paid by every cold start.
fn real_python() -> Option<PathBuf> {
    let out = std::process::Command::new("python3")
        .args(["-c", "import sys; print(sys.executable)"])
        .stdin(Stdio::null())
        .stderr(Stdio::null())
        .output()
        .ok()?;
    let path = String::from_utf8(out.stdout).ok()?;
    let path = PathBuf::from(path.trim());
    path.is_file().then_some(path)
}

/// A log stream name in AWS's form: `2024/01/31/[$LATEST]<32 hex digits>`.
fn log_stream_name(version: &str, n: u64) -> String {
    let date =
        roto_core::timestamp::format(now_millis(), roto_core::timestamp::TimestampFormat::Iso8601);
    let day = date.get(..10).unwrap_or_default().replace('-', "/");
    format!("{day}/[{version}]{:016x}{:016x}", fastrand::u64(..), n)
}

/// The error document of a failure Roto detects itself (timeouts, exits).
fn error_document(error_type: &str, message: &str) -> Vec<u8> {
    serde_json::json!({"errorType": error_type, "errorMessage": message})
        .to_string()
        .into_bytes()
}

impl Executor for ProcessExecutor {
    fn invoke<'a>(
        &'a self,
        spec: Spec,
        invocation: Invocation,
    ) -> BoxFuture<'a, AwsResult<Outcome>> {
        Box::pin(async move {
            let started = Instant::now();
            let (instance, init_ms) = match self.take_idle(&spec.key) {
                Some(i) => (i, None),
                None => {
                    let i = self.start(&spec).await?;
                    (i, Some(started.elapsed().as_secs_f64() * 1000.0))
                }
            };
            let request_id = invocation.request_id.clone();
            let (tx, rx) = oneshot::channel();
            instance
                .api
                .pending
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(request_id.clone(), tx);
            let markers = instance.output.markers();
            let run_started = Instant::now();
            let timeout = Duration::from_secs(spec.timeout.max(1));
            let deadline_ms = now_millis() + i64::try_from(timeout.as_millis()).unwrap_or(i64::MAX);
            let _ = instance.api.work_tx.send(Work {
                invocation,
                deadline_ms,
            });
            let reply = tokio::time::timeout(timeout, rx).await;
            let duration_ms = run_started.elapsed().as_secs_f64() * 1000.0;
            let from_runtime = matches!(reply, Ok(Ok(Reply::Response(_) | Reply::Error(_))));
            let (payload, function_error, keep) = match reply {
                Ok(Ok(Reply::Response(body))) => (body, None, true),
                Ok(Ok(Reply::Error(body))) => (body, Some("Unhandled".to_string()), true),
                Ok(result) => {
                    let message = match result {
                        Ok(Reply::Exited(m)) => m,
                        _ => "Runtime exited without providing a reason".into(),
                    };
                    let line = format!("RequestId: {request_id} Error: {message}");
                    instance.output.push(line.clone());
                    (
                        error_document("Runtime.ExitError", &line),
                        Some("Unhandled".to_string()),
                        false,
                    )
                }
                Err(_) => {
                    let iso = roto_core::timestamp::format(
                        now_millis(),
                        roto_core::timestamp::TimestampFormat::Iso8601,
                    );
                    let message = format!(
                        "{iso} {request_id} Task timed out after {}.00 seconds",
                        timeout.as_secs()
                    );
                    instance.output.push(message.clone());
                    let doc = serde_json::json!({ "errorMessage": message })
                        .to_string()
                        .into_bytes();
                    (doc, Some("Unhandled".to_string()), false)
                }
            };
            if from_runtime {
                let wait = if spec.runtime.starts_with("provided") {
                    PROVIDED_DRAIN_WAIT
                } else {
                    DRAIN_WAIT
                };
                instance.output.wait_marker(markers, wait).await;
            }
            let lines = instance.output.take();
            let max_memory_mb = instance.max_memory_mb();
            let log_stream = instance.log_stream.clone();
            if keep && instance.alive() {
                self.give_back(instance);
            }
            Ok(Outcome {
                payload,
                function_error,
                lines,
                log_stream,
                duration_ms,
                init_ms,
                max_memory_mb,
            })
        })
    }

    fn retire(&self, prefix: &str) {
        let mut pools = self.idle.lock().unwrap_or_else(|p| p.into_inner());
        pools.retain(|key, _| !key.starts_with(prefix));
    }
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
        api.reply(None, Reply::Error(body));
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
