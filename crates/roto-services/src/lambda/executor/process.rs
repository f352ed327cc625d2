//! The `process` executor: runtimes as local processes speaking the Lambda Runtime API.
//!
//! Each instance is one process with its code unpacked in a private temporary directory
//! and its own loopback Runtime API listener (see [`super::sandbox`]). python and node
//! run the small bootstraps Roto ships; `provided.*` runs the zip's `bootstrap`.
//!
//! The runtime's stdout and stderr are one pipe, so its lines keep their order; Roto's
//! bootstraps write an end marker before posting each result, so an invocation's lines are
//! all read before it returns.

use std::collections::BTreeMap;
use std::io;
use std::net::{Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::process::Stdio;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use roto_core::{AwsError, AwsResult, BoxFuture, Env};
use tokio::io::AsyncBufReadExt;
use tokio::net::unix::pipe;
use tokio::sync::oneshot;

use super::sandbox::{self, Api, Drain, Instance, Output, Pool, Sandbox, StartFailure, Started};
use super::{
    standard_environment, unpack, unsupported, Executor, Invocation, Outcome, Paths, Spec,
};

/// How long a stopping server waits for its runtime processes to exit (a busy one is killed
/// when the server exits).
const STOP_WAIT: Duration = Duration::from_secs(1);
/// How long to let a `provided` runtime's last lines arrive (it writes no end marker).
const PROVIDED_DRAIN_WAIT: Duration = Duration::from_millis(5);

const PYTHON_BOOTSTRAP: &str = include_str!("bootstrap.py");
const NODE_BOOTSTRAP: &str = include_str!("bootstrap.js");

/// What keeps a process instance running: dropping it kills the process and removes its
/// directory.
struct ProcessSandbox {
    /// The runtime's process, for its peak memory.
    pid: Option<u32>,
    _kill: oneshot::Sender<()>,
    _dir: tempfile::TempDir,
}

impl Sandbox for ProcessSandbox {
    fn max_memory_mb(&self) -> Option<i64> {
        self.pid.and_then(sandbox::process_max_memory_mb)
    }
}

/// The process executor.
pub struct ProcessExecutor {
    env: Arc<Env>,
    /// Where the shipped bootstraps live (`LAMBDA_RUNTIME_DIR`), and instances' code.
    root: tempfile::TempDir,
    pool: Pool,
    /// The Python interpreter behind `python3`, found on first use.
    python: OnceLock<PathBuf>,
    /// The `node` on the PATH, found on first use: a program named by its path starts
    /// through `posix_spawn`, where one the child's PATH must find costs a `fork`.
    node: OnceLock<PathBuf>,
    /// The global `node_modules` beside that `node`, found on first use.
    node_modules: OnceLock<Option<PathBuf>>,
    /// The tasks that reap the runtime processes (they end when their process has exited).
    watchers: Mutex<Vec<tokio::task::JoinHandle<()>>>,
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
            pool: Pool::default(),
            python: OnceLock::new(),
            node: OnceLock::new(),
            node_modules: OnceLock::new(),
            watchers: Mutex::default(),
        })
    }

    /// The global `node_modules` of the `node` that runs functions (`npm install -g`
    /// puts packages there), if it exists.
    fn sdk_modules(&self) -> Option<&Path> {
        let node = self.node.get()?;
        let dir = self.node_modules.get_or_init(|| {
            let node = std::fs::canonicalize(node).ok()?;
            let dir = node.parent()?.parent()?.join("lib/node_modules");
            dir.is_dir().then_some(dir)
        });
        dir.as_deref()
    }

    fn runtime_dir(&self) -> PathBuf {
        self.root.path().join("runtime")
    }

    /// The program and arguments that start a runtime, and whether it writes end markers.
    fn command(
        &self,
        spec: &Spec,
        task: &Path,
        opt: &Path,
    ) -> AwsResult<(PathBuf, Vec<PathBuf>, Drain)> {
        let runtime = spec.runtime.as_str();
        if runtime.starts_with("python") {
            let python = self.python.get_or_init(super::python::interpreter);
            Ok((
                python.clone(),
                vec![
                    "-u".into(),
                    "-S".into(),
                    self.runtime_dir().join("bootstrap.py"),
                ],
                Drain::Marker,
            ))
        } else if runtime.starts_with("nodejs") {
            let node = self.node.get_or_init(|| {
                super::on_path("node", std::env::var_os("PATH").as_deref())
                    .unwrap_or_else(|| "node".into())
            });
            Ok((
                node.clone(),
                vec![self.runtime_dir().join("bootstrap.js")],
                Drain::Marker,
            ))
        } else if runtime.starts_with("provided") {
            Ok((
                super::provided_bootstrap(task, opt).0.join("bootstrap"),
                Vec::new(),
                Drain::Wait(PROVIDED_DRAIN_WAIT),
            ))
        } else {
            Err(unsupported(format!(
                "The runtime {runtime} is not supported by Roto's process executor (python, nodejs and provided are)"
            )))
        }
    }

    /// Starts an instance: unpacks the code, binds its Runtime API, spawns the runtime.
    async fn start(&self, spec: Spec) -> Result<Arc<Instance>, StartFailure> {
        if spec.image.is_some() {
            return Err(unsupported(format!(
                "Cannot run {}: it is a container-image function (PackageType Image), which runs with --lambda-executor docker",
                spec.name
            ))
            .into());
        }
        let dir = tempfile::Builder::new()
            .prefix("instance-")
            .tempdir_in(self.root.path())?;
        let (task, opt) = unpack(&self.env, &spec, dir.path()).await?;
        let (program, args, drain) = self.command(&spec, &task, &opt)?;
        let (api, api_addr, server) =
            Api::serve(SocketAddr::from((Ipv4Addr::LOCALHOST, 0))).await?;
        let log_stream = sandbox::log_stream_name(&spec.version);
        let (output_writer, output_reader) = pipe::pipe()?;
        let output_writer = output_writer.into_blocking_fd()?;
        let mut cmd = tokio::process::Command::new(&program);
        cmd.args(&args)
            .current_dir(&task)
            .env_clear()
            .stdin(Stdio::null())
            .stdout(output_writer.try_clone()?)
            .stderr(output_writer)
            .kill_on_drop(true);
        for (k, v) in std::env::vars() {
            if matches!(k.as_str(), "HOME" | "LANG" | "PYENV_ROOT" | "PYENV_VERSION") {
                cmd.env(k, v);
            }
        }
        let endpoint = self.env.endpoint().unwrap_or("http://127.0.0.1:4566");
        let runtime_dir = self.runtime_dir();
        let paths = Paths {
            api: &api_addr.to_string(),
            task_root: &task.display().to_string(),
            runtime_dir: &runtime_dir.display().to_string(),
            log_stream: &log_stream,
            endpoint,
        };
        cmd.envs(standard_environment(&spec, &paths))
            .envs(search_paths(&opt, &spec.environment, self.sdk_modules()))
            .env("PYTHONUNBUFFERED", "1");
        let mut child = match cmd.spawn() {
            Ok(child) => child,
            Err(e) if spec.runtime.starts_with("provided") => {
                let (_, lambda_path) = super::provided_bootstrap(&task, &opt);
                return Err(StartFailure::Entrypoint(entrypoint_error(&e, lambda_path)));
            }
            Err(e) => {
                return Err(AwsError::new(
                    "ServiceException",
                    format!(
                        "Cannot start the {} runtime ({}): {e}",
                        spec.runtime,
                        program.display()
                    ),
                )
                .with_status(500)
                .into())
            }
        };
        drop(cmd);
        let pid = child.id();
        let output = Arc::new(Output::default());
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut reader = tokio::io::BufReader::new(output_reader);
                let mut buf = Vec::new();
                while matches!(reader.read_until(b'\n', &mut buf).await, Ok(n) if n > 0) {
                    let line = String::from_utf8_lossy(&buf);
                    output.push(line.trim_end_matches(['\n', '\r']).to_string());
                    buf.clear();
                }
            });
        }
        let (kill, killed) = oneshot::channel::<()>();
        {
            let api = api.clone();
            let watcher = tokio::spawn(async move {
                let message = tokio::select! {
                    status = child.wait() => match status {
                        Ok(s) => sandbox::exit_message(s.code().map(i64::from)),
                        Err(e) => format!("Runtime exited with error: {e}"),
                    },
                    _ = killed => {
                        let _ = child.kill().await;
                        sandbox::exit_message(None)
                    }
                };
                api.exited(message);
            });
            let mut watchers = self.watchers.lock().unwrap_or_else(|p| p.into_inner());
            watchers.retain(|w| !w.is_finished());
            watchers.push(watcher);
        }
        Ok(Instance::new(
            &spec.key,
            Started {
                api: (api, server),
                output,
                log_stream,
                drain,
                sandbox: Box::new(ProcessSandbox {
                    pid,
                    _kill: kill,
                    _dir: dir,
                }),
            },
        ))
    }
}

/// Lambda's words for a `provided` bootstrap that cannot be executed, which Lambda's sandbox
/// has at `lambda_path`.
fn entrypoint_error(error: &io::Error, lambda_path: &str) -> String {
    if error.kind() == io::ErrorKind::NotFound {
        return "Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]".into();
    }
    let reason = error.to_string();
    let reason = reason.split(" (os error").next().unwrap_or_default();
    format!("fork/exec {lambda_path}: {}", reason.to_lowercase())
}

/// The search paths of a runtime with its layers under `opt`, as Lambda lays out `/opt`:
/// the function's own values first, then the layers' directories, then Roto's `PATH` and
/// the host's global node modules (`sdk_modules`), where the AWS SDK for JavaScript that
/// Lambda's runtime includes is found when installed with `npm install -g`.
fn search_paths(
    opt: &Path,
    environment: &BTreeMap<String, String>,
    sdk_modules: Option<&Path>,
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
        join(
            "NODE_PATH",
            &["nodejs/node_modules"],
            sdk_modules.map(|p| p.display().to_string()),
        ),
        join("LD_LIBRARY_PATH", &["lib"], None),
    ]
}

impl Executor for ProcessExecutor {
    fn invoke<'a>(
        &'a self,
        spec: Spec,
        invocation: Invocation,
    ) -> BoxFuture<'a, AwsResult<Outcome>> {
        Box::pin(self.pool.invoke(spec, invocation, |spec| self.start(spec)))
    }

    fn retire(&self, prefix: &str) {
        self.pool.retire(prefix);
    }

    fn stop(&self) -> BoxFuture<'_, ()> {
        self.pool.retire("");
        let watchers =
            std::mem::take(&mut *self.watchers.lock().unwrap_or_else(|p| p.into_inner()));
        Box::pin(async move {
            let exited = async {
                for watcher in watchers {
                    let _ = watcher.await;
                }
            };
            let _ = tokio::time::timeout(STOP_WAIT, exited).await;
        })
    }
}
