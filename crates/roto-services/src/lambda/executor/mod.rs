//! Executors: where a function's code runs.
//!
//! One trait, chosen with `--lambda-executor`:
//! - [`process`] (the default) starts the runtime as a local process that speaks the Lambda
//!   Runtime API, served by Roto on a loopback port of its own for each instance; instances
//!   stay warm, run one invocation at a time and are reaped when idle.
//! - [`none`] keeps functions stored and refuses every invocation with a clear error.

mod none;
mod process;

use std::collections::BTreeMap;
use std::io;
use std::sync::Arc;

use roto_core::{AwsError, AwsResult, BoxFuture, Env};

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
}

/// The executor named `name`.
pub fn build(env: &Arc<Env>, name: &str) -> io::Result<Arc<dyn Executor>> {
    match name {
        "none" => Ok(Arc::new(none::NoExecutor)),
        "process" => Ok(Arc::new(process::ProcessExecutor::new(env.clone())?)),
        "docker" => {
            tracing::warn!(
                "the docker Lambda executor is not built yet: functions run as local processes"
            );
            Ok(Arc::new(process::ProcessExecutor::new(env.clone())?))
        }
        other => Err(io::Error::other(format!("unknown Lambda executor {other}"))),
    }
}

/// The error for an invocation no executor can run.
pub fn unsupported(message: String) -> AwsError {
    AwsError::new("ServiceException", message).with_status(501)
}
