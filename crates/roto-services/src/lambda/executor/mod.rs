//! Executors: where a function's code runs.
//!
//! One trait, chosen with `--lambda-executor`:
//! - [`process`] (the default) starts the runtime as a local process that speaks the Lambda
//!   Runtime API, served by Roto on a loopback port of its own for each instance.
//! - [`docker`] runs the runtime in a container of the public Lambda base image, through
//!   the Docker Engine API ([`engine`]).
//! - [`none`] keeps functions stored and refuses every invocation with a clear error.
//!
//! The process and docker executors share [`sandbox`]: instances stay warm, run one
//! invocation at a time and are reaped when idle.

mod docker;
mod engine;
pub mod images;
mod none;
mod process;
mod python;
mod sandbox;

use std::collections::BTreeMap;
use std::io;
use std::path::{Path, PathBuf};
use std::sync::Arc;

use roto_core::{AwsError, AwsResult, BoxFuture, Env};

use crate::lambda::zip;

/// What an instance of a function needs to start and to identify itself.
#[derive(Debug, Clone)]
pub struct Spec {
    /// Instances are pooled by this key; it changes whenever code or configuration does.
    pub key: String,
    /// The account the function lives in.
    pub account: String,
    /// The region the function lives in.
    pub region: String,
    /// The function's name.
    pub name: String,
    /// The version that runs (`$LATEST`, `3`).
    pub version: String,
    /// The runtime (`python3.12`, `nodejs20.x`, `provided.al2023`).
    pub runtime: String,
    /// The instruction set (`x86_64`, `arm64`).
    pub architecture: String,
    /// The handler (`app.handler`).
    pub handler: String,
    /// The timeout, in seconds.
    pub timeout: u64,
    /// The memory size, in MB.
    pub memory: i64,
    /// The function's own environment variables.
    pub environment: BTreeMap<String, String>,
    /// The store blob holding the function's zip.
    pub code_blob: String,
    /// The store blobs of its layers' zips, in the order they apply.
    pub layers: Vec<String>,
    /// The log group the runtime is told about.
    pub log_group: String,
    /// For a container-image function (`PackageType: Image`), its image; `None` for a zip.
    pub image: Option<ImageFunction>,
}

/// A container-image function's image and its `ImageConfig` overrides.
#[derive(Debug, Clone, Default, PartialEq)]
pub struct ImageFunction {
    /// The `ImageUri` it was created with.
    pub uri: String,
    /// `ImageConfig.EntryPoint`, replacing the image's entrypoint when not empty.
    pub entrypoint: Vec<String>,
    /// `ImageConfig.Command`, replacing the image's command when not empty.
    pub command: Vec<String>,
    /// `ImageConfig.WorkingDirectory`, replacing the image's when set.
    pub working_directory: Option<String>,
}

/// One invocation.
#[derive(Debug, Clone)]
pub struct Invocation {
    /// The request id the runtime sees.
    pub request_id: String,
    /// The event.
    pub payload: Vec<u8>,
    /// The ARN the caller invoked (qualified with the alias or version it named).
    pub invoked_arn: String,
    /// The base64 client context, if the caller sent one.
    pub client_context: Option<String>,
}

/// How an invocation ended.
#[derive(Debug, Clone)]
pub struct Outcome {
    /// The response payload, or the error document.
    pub payload: Vec<u8>,
    /// `Unhandled` when the function failed.
    pub function_error: Option<String>,
    /// What the instance wrote during the invocation, one entry per line, with the time
    /// it was read.
    pub lines: Vec<(i64, String)>,
    /// The log stream of the instance that ran it.
    pub log_stream: String,
    /// How long the invocation ran, in milliseconds.
    pub duration_ms: f64,
    /// How long the instance took to start, when this invocation started it.
    pub init_ms: Option<f64>,
    /// The peak memory of the instance's process, in MB, where known.
    pub max_memory_mb: Option<i64>,
    /// How the invocation failed outside the handler, for the `REPORT` line's `Status`
    /// (`timeout`; `error` and the error type when the runtime exited).
    pub status: Option<String>,
}

/// Where functions run.
pub trait Executor: Send + Sync {
    /// Runs one invocation.
    fn invoke<'a>(
        &'a self,
        spec: Spec,
        invocation: Invocation,
    ) -> BoxFuture<'a, AwsResult<Outcome>>;

    /// Stops the idle instances whose key starts with `prefix` (the function changed or
    /// was deleted); busy ones stop when their invocation ends.
    fn retire(&self, prefix: &str);

    /// Stops the idle instances before the server exits, and waits (briefly) until they are
    /// gone, so that no runtime outlives the server.
    fn stop(&self) -> BoxFuture<'_, ()> {
        self.retire("");
        Box::pin(async {})
    }
}

/// The first executable file named `program` in the PATH's directories.
fn on_path(program: &str, path: Option<&std::ffi::OsStr>) -> Option<PathBuf> {
    use std::os::unix::fs::PermissionsExt;
    std::env::split_paths(path?)
        .map(|dir| dir.join(program))
        .find(|p| {
            std::fs::metadata(p).is_ok_and(|m| m.is_file() && m.permissions().mode() & 0o111 != 0)
        })
}

/// Where a `provided` function's `bootstrap` is, as Lambda looks for it: in its code, else
/// in a layer. Gives the directory of the unpacked code or layers that holds it, and the
/// path Lambda's sandbox has for it.
fn provided_bootstrap<'a>(task: &'a Path, opt: &'a Path) -> (&'a Path, &'static str) {
    if !task.join("bootstrap").exists() && opt.join("bootstrap").exists() {
        (opt, "/opt/bootstrap")
    } else {
        (task, "/var/task/bootstrap")
    }
}

/// The executor named `name`.
pub fn build(env: &Arc<Env>, name: &str) -> io::Result<Arc<dyn Executor>> {
    match name {
        "none" => Ok(Arc::new(none::NoExecutor)),
        "process" => Ok(Arc::new(process::ProcessExecutor::new(env.clone())?)),
        "docker" => {
            let images = images::Images::parse(
                &env.option("lambda-images").unwrap_or_default(),
                env.option("lambda-image-registry").as_deref(),
            )
            .map_err(io::Error::other)?;
            Ok(Arc::new(docker::DockerExecutor::new(env.clone(), images)?))
        }
        other => Err(io::Error::other(format!("unknown Lambda executor {other}"))),
    }
}

/// Where an instance's pieces are, as its runtime is told.
pub struct Paths<'a> {
    /// `host:port` of its Runtime API.
    pub api: &'a str,
    /// `LAMBDA_TASK_ROOT`.
    pub task_root: &'a str,
    /// `LAMBDA_RUNTIME_DIR`.
    pub runtime_dir: &'a str,
    /// `AWS_LAMBDA_LOG_STREAM_NAME`.
    pub log_stream: &'a str,
    /// `AWS_ENDPOINT_URL`: Roto, as the runtime reaches it.
    pub endpoint: &'a str,
}

/// Unpacks a function's code into `dir/task` and its layers, in order, into `dir/opt`, on a
/// blocking thread: inflating a large deployment package would hold an async worker.
pub async fn unpack(env: &Arc<Env>, spec: &Spec, dir: &Path) -> AwsResult<(PathBuf, PathBuf)> {
    let (env, code, layers) = (env.clone(), spec.code_blob.clone(), spec.layers.clone());
    let (task, opt) = (dir.join("task"), dir.join("opt"));
    crate::blocking::run(move || {
        std::fs::create_dir_all(&task)?;
        zip::extract(&crate::lambda::read_blob(&env, &code)?, &task)?;
        std::fs::create_dir_all(&opt)?;
        for layer in &layers {
            zip::extract(&crate::lambda::read_blob(&env, layer)?, &opt)?;
        }
        Ok((task, opt))
    })
    .await
}

/// The environment Lambda gives a runtime: the function's own variables, overridden by the
/// standard ones (the function cannot set those: CreateFunction refuses them).
pub fn standard_environment(spec: &Spec, paths: &Paths<'_>) -> BTreeMap<String, String> {
    let mut env = spec.environment.clone();
    let standard = [
        ("AWS_LAMBDA_RUNTIME_API", paths.api.to_string()),
        ("_HANDLER", spec.handler.clone()),
        ("LAMBDA_TASK_ROOT", paths.task_root.to_string()),
        ("LAMBDA_RUNTIME_DIR", paths.runtime_dir.to_string()),
        ("AWS_LAMBDA_FUNCTION_NAME", spec.name.clone()),
        ("AWS_LAMBDA_FUNCTION_VERSION", spec.version.clone()),
        ("AWS_LAMBDA_FUNCTION_MEMORY_SIZE", spec.memory.to_string()),
        ("AWS_LAMBDA_LOG_GROUP_NAME", spec.log_group.clone()),
        ("AWS_LAMBDA_LOG_STREAM_NAME", paths.log_stream.to_string()),
        ("AWS_LAMBDA_INITIALIZATION_TYPE", "on-demand".to_string()),
        ("AWS_EXECUTION_ENV", format!("AWS_Lambda_{}", spec.runtime)),
        ("AWS_REGION", spec.region.clone()),
        ("AWS_DEFAULT_REGION", spec.region.clone()),
        // The account's root, whose secret is `test` (what `--verify-signatures` checks).
        ("AWS_ACCESS_KEY_ID", spec.account.clone()),
        ("AWS_SECRET_ACCESS_KEY", "test".to_string()),
        ("AWS_SESSION_TOKEN", "roto".to_string()),
        ("AWS_ENDPOINT_URL", paths.endpoint.to_string()),
        ("TZ", ":UTC".to_string()),
    ];
    env.extend(standard.map(|(k, v)| (k.to_string(), v)));
    if spec.image.is_some() {
        // A container image names its handler in its command and its runtime itself.
        env.remove("_HANDLER");
        env.remove("AWS_EXECUTION_ENV");
    }
    env
}

/// The error for an invocation no executor can run.
pub fn unsupported(message: String) -> AwsError {
    AwsError::new("ServiceException", message).with_status(501)
}
