//! LocalStack's own endpoints, so that the wait strategies and health checks written for
//! LocalStack (compose health checks, CI scripts, Testcontainers) work against Roto unchanged.
//!
//! - `GET /_localstack/health`: `{"services": {"s3": "running", ...}, "edition", "version"}`
//!   in LocalStack's shape and with its service names (Roto's are the same), plus
//!   `features.initScripts` (`initializing`, then `initialized` once the ready hooks ran).
//! - `GET /_localstack/info`: version, edition, session id, system, uptime.
//! - `GET /_localstack/init` and `GET /_localstack/init/<stage>`: the ready hooks
//!   (`--ready-hook`) as LocalStack reports its init scripts. Roto's stages: `BOOT` and
//!   `START` are complete once the port is open (Lua setup scripts ran before it),
//!   `READY` once every hook has run, `SHUTDOWN` never while it answers.
//!
//! Anything else under `/_localstack/` or `/_aws/` (LocalStack's extensions, such as its SQS
//! message peek) answers 404 naming `/_roto/*`, Roto's own interface, rather than reaching S3
//! as a bucket name. These paths follow the browser guard's rules for `/_roto/*`.

use std::sync::Arc;
use std::time::Instant;

use http::request::Parts;
use http::{Method, StatusCode};
use roto_core::dispatch::{new_request_id, Body};
use roto_core::timestamp::{self, TimestampFormat};
use serde_json::{json, Map, Value};

use crate::hooks::{Hooks, Script};
use crate::http::App;
use crate::introspect::respond;

/// The edition LocalStack tooling is told: the free feature set.
const EDITION: &str = "community";

/// LocalStack's lifecycle stages, in order.
const STAGES: [&str; 4] = ["BOOT", "START", "READY", "SHUTDOWN"];

/// What the LocalStack endpoints report about this server.
pub struct Instance {
    started: Instant,
    session_id: String,
    /// The ready hooks and their states.
    pub hooks: Arc<Hooks>,
}

impl Instance {
    /// A server starting now with these hooks.
    pub fn new(hooks: Arc<Hooks>) -> Instance {
        Instance {
            started: Instant::now(),
            session_id: new_request_id(),
            hooks,
        }
    }
}

/// Whether a path is LocalStack's rather than a bucket's (bucket names have no `_`), and
/// not a data plane's path form (`/_aws/execute-api/...`), which the router routes.
pub fn serves(path: &str) -> bool {
    let data_plane = crate::router::DATA_PLANES
        .iter()
        .filter_map(|plane| plane.path_prefix)
        .any(|prefix| path.starts_with(prefix));
    !data_plane
        && ["/_localstack", "/_aws"].iter().any(|base| {
            path.strip_prefix(base)
                .is_some_and(|rest| rest.is_empty() || rest.starts_with('/'))
        })
}

/// Serves one request to a LocalStack endpoint.
pub fn handle(app: &App, parts: &Parts) -> hyper::Response<Body> {
    let path = parts.uri.path().trim_end_matches('/');
    let readable = matches!(parts.method, Method::GET | Method::HEAD);
    let instance = &app.localstack;
    match path.strip_prefix("/_localstack/") {
        Some("health") if readable => respond(StatusCode::OK, health(app)),
        Some("info") if readable => respond(StatusCode::OK, info(instance)),
        Some("init") if readable => respond(StatusCode::OK, init(instance, None)),
        Some(stage) if readable && stage.starts_with("init/") => {
            let stage = stage.trim_start_matches("init/").to_ascii_uppercase();
            match STAGES.contains(&stage.as_str()) {
                true => respond(StatusCode::OK, init(instance, Some(&stage))),
                false => not_found(format!("no such stage {stage}")),
            }
        }
        _ => not_found(format!(
            "Roto does not serve {} {path}, a LocalStack extension; Roto's own interface is \
             /_roto/* (docs/localstack.md)",
            parts.method
        )),
    }
}

fn not_found(message: String) -> hyper::Response<Body> {
    respond(StatusCode::NOT_FOUND, json!({ "error": message }))
}

fn health(app: &App) -> Value {
    let services: Map<String, Value> = app
        .dispatcher
        .services()
        .iter()
        .map(|s| (s.spec().name.to_string(), json!("running")))
        .collect();
    let (completed, _) = app.localstack.hooks.snapshot();
    let init = if completed {
        "initialized"
    } else {
        "initializing"
    };
    json!({
        "services": services,
        "features": { "initScripts": init },
        "edition": EDITION,
        "version": env!("CARGO_PKG_VERSION"),
    })
}

fn info(instance: &Instance) -> Value {
    let now = timestamp::format(timestamp::now_millis(), TimestampFormat::Iso8601);
    let system = match std::env::consts::OS {
        "macos" => "darwin",
        os => os,
    };
    json!({
        "version": env!("CARGO_PKG_VERSION"),
        "edition": EDITION,
        "is_license_activated": false,
        "session_id": instance.session_id,
        "machine_id": "roto",
        "system": system,
        "is_docker": std::path::Path::new("/.dockerenv").exists(),
        "server_time_utc": now.get(..19).unwrap_or(&now),
        "uptime": instance.started.elapsed().as_secs(),
    })
}

/// `/_localstack/init` (every stage) or `/_localstack/init/<stage>`.
fn init(instance: &Instance, stage: Option<&str>) -> Value {
    let (ready, scripts) = instance.hooks.snapshot();
    let completed = |stage: &str| match stage {
        "BOOT" | "START" => true,
        "READY" => ready,
        _ => false,
    };
    let listed: Vec<Value> = scripts
        .iter()
        .filter(|_| stage.is_none_or(|s| s == "READY"))
        .map(script)
        .collect();
    let completed = match stage {
        Some(stage) => json!(completed(stage)),
        None => STAGES
            .iter()
            .map(|s| (s.to_string(), json!(completed(s))))
            .collect::<Map<String, Value>>()
            .into(),
    };
    json!({ "completed": completed, "scripts": listed })
}

fn script(script: &Script) -> Value {
    json!({ "stage": "READY", "name": script.name, "state": script.state.name() })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn localstack_paths_are_told_from_bucket_names() {
        for path in [
            "/_localstack/health",
            "/_localstack",
            "/_aws/sqs/messages",
            "/_aws",
        ] {
            assert!(serves(path), "{path}");
        }
        for path in ["/_localstackx", "/bucket/_aws", "/_awsome", "/"] {
            assert!(!serves(path), "{path}");
        }
    }

    #[test]
    fn init_reports_every_stage_or_one() {
        let instance = Instance::new(Arc::new(Hooks::default()));
        let all = init(&instance, None);
        assert_eq!(all["completed"]["START"], json!(true));
        assert_eq!(all["completed"]["READY"], json!(false));
        assert_eq!(all["scripts"], json!([]));
        assert_eq!(init(&instance, Some("BOOT"))["completed"], json!(true));
    }
}
