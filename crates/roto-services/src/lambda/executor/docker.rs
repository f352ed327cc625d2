//! The `docker` executor: runtimes in containers of the public Lambda base images.
//!
//! Each instance is one container of `public.ecr.aws/lambda/<runtime>` (pulled when the
//! engine lacks it) whose entrypoint is the image's own runtime bootstrap
//! (`/var/runtime/bootstrap`; for `provided.*` the function's `bootstrap`), never the
//! runtime interface emulator: the runtime speaks to the instance's Runtime API, served by
//! Roto (see [`super::sandbox`]). The function's code and its layers, unpacked as for the
//! process executor, are bind-mounted read-only at `/var/task` and `/opt`; the memory size
//! is the container's memory limit.
//!
//! Containers reach Roto through `host.docker.internal`, mapped to the engine's
//! `host-gateway`. On Linux that is the bridge network's gateway, an address of this host:
//! the Runtime API listeners bind there, and a forwarder there relays handler SDK calls to
//! Roto's own port, which stays on loopback. Where the gateway is not an address of this
//! host (Docker Desktop, whose engine runs in a VM), `host.docker.internal` reaches the
//! host's loopback, so the listeners and Roto's port are used as they are.
//!
//! Without an engine the server says so once at start, and each invocation fails with that
//! reason until one answers: a user who asked for containers gets containers or an error,
//! never local processes in their place.

use std::collections::{BTreeMap, HashSet};
use std::io;
use std::net::{IpAddr, Ipv4Addr, SocketAddr};
use std::path::{Path, PathBuf};
use std::sync::{Arc, Mutex};
use std::time::Duration;

use http_body_util::BodyExt;
use roto_core::{AwsResult, BoxFuture, Env};
use serde_json::{json, Value as Json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::OnceCell;

use super::engine::{self, Demux, Engine};
use super::sandbox::{self, Api, Drain, Instance, Output, Pool, Started};
use super::{
    standard_environment, unpack, unsupported, Executor, Invocation, Outcome, Paths, Spec,
};

/// The name containers reach this host by.
const HOST_ALIAS: &str = "host.docker.internal";
/// How long to let a container's last lines arrive through the engine after its result
/// (the images' runtimes write no end marker).
const DRAIN_WAIT: Duration = Duration::from_millis(20);
/// The label every container Roto starts carries (`docker rm -f $(docker ps -aq --filter
/// label=roto.lambda)` clears what a killed Roto left).
const LABEL: &str = "roto.lambda";

/// The image a runtime runs in: `python3.12` -> `public.ecr.aws/lambda/python:3.12`,
/// `nodejs20.x` -> `nodejs:20`, `provided.al2023` -> `provided:al2023`, `java21`,
/// `ruby3.3` and `dotnet8` alike.
fn image_of(runtime: &str) -> Option<String> {
    let tag = match runtime {
        "provided" => "provided:alami".to_string(),
        r if r.starts_with("provided.") => format!("provided:{}", &r["provided.".len()..]),
        r => {
            let at = r.find(|c: char| c.is_ascii_digit()).filter(|at| *at > 0)?;
            let (family, version) = r.split_at(at);
            format!("{family}:{}", version.strip_suffix(".x").unwrap_or(version))
        }
    };
    Some(format!("public.ecr.aws/lambda/{tag}"))
}

/// The engine's platform for a function's architecture.
fn platform_of(architecture: &str) -> &'static str {
    match architecture {
        "arm64" => "linux/arm64",
        _ => "linux/amd64",
    }
}

/// What the container runs: the image's runtime bootstrap, or for `provided.*` the
/// function's `bootstrap` (in its code, else in a layer), as Lambda looks for it.
fn entrypoint_of(runtime: &str, task: &Path, opt: &Path) -> &'static str {
    if runtime.starts_with("provided") {
        super::provided_bootstrap(task, opt).1
    } else {
        "/var/runtime/bootstrap"
    }
}

/// The container-create document for an instance.
fn container_config(
    spec: &Spec,
    image: &str,
    entrypoint: &str,
    environment: &BTreeMap<String, String>,
    task: &Path,
    opt: &Path,
) -> Json {
    let memory = spec.memory.max(1) * 1024 * 1024;
    json!({
        "Image": image,
        "Entrypoint": [entrypoint],
        "Env": environment.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "WorkingDir": "/var/task",
        "Labels": {
            LABEL: format!("{}/{}/{}:{}", spec.account, spec.region, spec.name, spec.version),
        },
        "AttachStdout": true,
        "AttachStderr": true,
        "Tty": false,
        "HostConfig": {
            "Binds": [
                format!("{}:/var/task:ro", task.display()),
                format!("{}:/opt:ro", opt.display()),
            ],
            "ExtraHosts": [format!("{HOST_ALIAS}:host-gateway")],
            "Memory": memory,
            "MemorySwap": memory,
            "AutoRemove": true,
        },
    })
}

/// Where containers find Roto, settled on the first start.
struct HostSide {
    /// The address the Runtime API listeners bind.
    bind: IpAddr,
    /// The port containers reach Roto's own API on: a forwarder's, or Roto's itself.
    endpoint_port: Option<u16>,
    _forwarder: Option<AbortOnDrop>,
}

/// A task stopped when its holder goes.
struct AbortOnDrop(tokio::task::JoinHandle<()>);

impl Drop for AbortOnDrop {
    fn drop(&mut self) {
        self.0.abort();
    }
}

/// What keeps a container instance running: dropping it removes the container and the
/// instance's directory.
struct DockerSandbox {
    engine: Engine,
    id: String,
    _dir: tempfile::TempDir,
}

impl Drop for DockerSandbox {
    fn drop(&mut self) {
        let engine = self.engine.clone();
        let id = std::mem::take(&mut self.id);
        if let Ok(runtime) = tokio::runtime::Handle::try_current() {
            runtime.spawn(async move {
                if let Err(e) = engine.remove(&id).await {
                    tracing::warn!("cannot remove Lambda container {id}: {e}");
                }
            });
        }
    }
}

/// The docker executor.
pub struct DockerExecutor {
    env: Arc<Env>,
    /// The engine, or why there is none to talk to.
    engine: Result<Engine, String>,
    /// Where instances' code is unpacked.
    root: tempfile::TempDir,
    pool: Pool,
    host: OnceCell<HostSide>,
    /// Images the engine is known to have.
    images: Mutex<HashSet<String>>,
}

impl DockerExecutor {
    /// The executor for the engine `DOCKER_HOST` names (else `/var/run/docker.sock`); says
    /// on stderr when no engine answers there.
    pub fn new(env: Arc<Env>) -> io::Result<DockerExecutor> {
        let socket = engine::socket_from(std::env::var("DOCKER_HOST").ok().as_deref());
        let problem = match &socket {
            Ok(path) => engine::listening(path).err(),
            Err(why) => Some(why.clone()),
        };
        if let Some(why) = problem {
            tracing::warn!(
                "--lambda-executor docker: {why}; Lambda invocations fail until an engine runs"
            );
        }
        DockerExecutor::with_socket(env, socket)
    }

    /// The executor for the engine at `socket` (or the reason there is none).
    fn with_socket(env: Arc<Env>, socket: Result<PathBuf, String>) -> io::Result<DockerExecutor> {
        Ok(DockerExecutor {
            env,
            engine: socket.map(Engine::new),
            root: tempfile::Builder::new().prefix("roto-lambda-").tempdir()?,
            pool: Pool::default(),
            host: OnceCell::new(),
            images: Mutex::new(HashSet::new()),
        })
    }

    /// Roto's port, as its endpoint names it (4566 until it listens).
    fn roto_port(&self) -> u16 {
        self.env
            .endpoint()
            .and_then(|e| e.rsplit(':').next())
            .and_then(|p| p.trim_end_matches('/').parse().ok())
            .unwrap_or(4566)
    }

    /// Where the Runtime API listeners bind, and how containers reach Roto.
    async fn host_side(&self, engine: &Engine) -> io::Result<&HostSide> {
        self.host
            .get_or_try_init(|| async {
                let gateway = match engine.bridge_gateway().await {
                    Some(ip) if !ip.is_loopback() => TcpListener::bind((ip, 0)).await.ok(),
                    _ => None,
                };
                let Some(listener) = gateway else {
                    return Ok(HostSide {
                        bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
                        endpoint_port: None,
                        _forwarder: None,
                    });
                };
                let bound = listener.local_addr()?;
                let env = Arc::downgrade(&self.env);
                let forwarder = tokio::spawn(forward(listener, env));
                Ok(HostSide {
                    bind: bound.ip(),
                    endpoint_port: Some(bound.port()),
                    _forwarder: Some(AbortOnDrop(forwarder)),
                })
            })
            .await
    }

    /// Starts an instance: the image, the code, the Runtime API, then the container.
    async fn start(&self, spec: Spec) -> AwsResult<Arc<Instance>> {
        let cannot = |why: String| unsupported(format!("Cannot run {}: {why}", spec.name));
        let engine = self.engine.as_ref().map_err(|e| cannot(e.clone()))?;
        let image = image_of(&spec.runtime).ok_or_else(|| {
            cannot(format!(
                "there is no Lambda base image for the runtime {}",
                spec.runtime
            ))
        })?;
        let platform = platform_of(&spec.architecture);
        let known = self
            .images
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .contains(&image);
        if !known {
            engine
                .ensure_image(&image, platform)
                .await
                .map_err(cannot)?;
            self.images
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .insert(image.clone());
        }
        let host = self.host_side(engine).await?;
        let dir = tempfile::Builder::new()
            .prefix("instance-")
            .tempdir_in(self.root.path())?;
        let (task, opt) = unpack(&self.env, &spec, dir.path()).await?;
        let (api, api_addr, server) = Api::serve(SocketAddr::new(host.bind, 0)).await?;
        let log_stream = sandbox::log_stream_name(&spec.version);
        let endpoint_port = host.endpoint_port.unwrap_or_else(|| self.roto_port());
        let paths = Paths {
            api: &format!("{HOST_ALIAS}:{}", api_addr.port()),
            task_root: "/var/task",
            runtime_dir: "/var/runtime",
            log_stream: &log_stream,
            endpoint: &format!("http://{HOST_ALIAS}:{endpoint_port}"),
        };
        let config = container_config(
            &spec,
            &image,
            entrypoint_of(&spec.runtime, &task, &opt),
            &standard_environment(&spec, &paths),
            &task,
            &opt,
        );
        let name = format!("roto-lambda-{}-{:08x}", spec.name, fastrand::u32(..));
        let id = engine
            .create(&name, platform, &config)
            .await
            .map_err(cannot)?;
        let sandbox = DockerSandbox {
            engine: engine.clone(),
            id: id.clone(),
            _dir: dir,
        };
        let output = Arc::new(Output::default());
        let mut stream = engine.attach(&id).await.map_err(cannot)?;
        {
            let output = output.clone();
            tokio::spawn(async move {
                let mut demux = Demux::default();
                while let Some(Ok(frame)) = stream.frame().await {
                    for line in frame.data_ref().map(|d| demux.feed(d)).unwrap_or_default() {
                        output.push(line);
                    }
                }
                for line in demux.finish() {
                    output.push(line);
                }
            });
        }
        engine.start(&id).await.map_err(cannot)?;
        {
            let api = api.clone();
            let engine = engine.clone();
            tokio::spawn(async move {
                let message = match engine.wait(&id).await {
                    Ok(code) => sandbox::exit_message(Some(code)),
                    Err(e) => format!("Runtime exited with error: {e}"),
                };
                api.exited(message);
            });
        }
        Ok(Instance::new(
            &spec.key,
            Started {
                api: (api, server),
                output,
                log_stream,
                drain: Drain::Wait(DRAIN_WAIT),
                pid: None,
                sandbox: Box::new(sandbox),
            },
        ))
    }
}

/// Relays connections from containers to Roto's own port, on loopback.
async fn forward(listener: TcpListener, env: std::sync::Weak<Env>) {
    loop {
        let Ok((mut inbound, _)) = listener.accept().await else {
            continue;
        };
        let Some(target) = env.upgrade().and_then(|e| {
            let endpoint = e.endpoint()?;
            Some(
                endpoint
                    .trim_start_matches("http://")
                    .trim_end_matches('/')
                    .to_string(),
            )
        }) else {
            continue;
        };
        tokio::spawn(async move {
            if let Ok(mut outbound) = TcpStream::connect(&target).await {
                let _ = outbound.set_nodelay(true);
                let _ = tokio::io::copy_bidirectional(&mut inbound, &mut outbound).await;
            }
        });
    }
}

impl Executor for DockerExecutor {
    fn invoke<'a>(
        &'a self,
        spec: Spec,
        invocation: Invocation,
    ) -> BoxFuture<'a, AwsResult<Outcome>> {
        Box::pin(self.pool.invoke(spec, invocation, |spec| async {
            Ok(self.start(spec).await?)
        }))
    }

    fn retire(&self, prefix: &str) {
        self.pool.retire(prefix);
    }
}

#[cfg(test)]
mod tests {
    use std::convert::Infallible;
    use std::pin::Pin;
    use std::task::{Context, Poll};

    use bytes::Bytes;
    use http::Method;
    use http_body_util::{combinators::BoxBody, Full};
    use hyper::body::{Frame, Incoming};
    use hyper_util::rt::TokioIo;
    use roto_core::store::{Store, StoreMode};
    use tokio::sync::{mpsc, Notify};

    use super::*;

    fn spec(blob: &str) -> Spec {
        Spec {
            key: "000000000000/us-east-1/echo/$LATEST/r1".into(),
            account: "000000000000".into(),
            region: "us-east-1".into(),
            name: "echo".into(),
            version: "$LATEST".into(),
            runtime: "python3.12".into(),
            architecture: "arm64".into(),
            handler: "app.handler".into(),
            timeout: 3,
            memory: 256,
            environment: BTreeMap::from([("GREETING".to_string(), "hi".to_string())]),
            code_blob: blob.into(),
            layers: Vec::new(),
            log_group: "/aws/lambda/echo".into(),
        }
    }

    #[test]
    fn runtimes_map_to_the_public_lambda_images() {
        let image = |r| image_of(r).unwrap();
        assert_eq!(image("python3.12"), "public.ecr.aws/lambda/python:3.12");
        assert_eq!(image("nodejs20.x"), "public.ecr.aws/lambda/nodejs:20");
        assert_eq!(
            image("provided.al2023"),
            "public.ecr.aws/lambda/provided:al2023"
        );
        assert_eq!(image("provided.al2"), "public.ecr.aws/lambda/provided:al2");
        assert_eq!(image("provided"), "public.ecr.aws/lambda/provided:alami");
        assert_eq!(image("java21"), "public.ecr.aws/lambda/java:21");
        assert_eq!(image("ruby3.3"), "public.ecr.aws/lambda/ruby:3.3");
        assert_eq!(image_of("cobol"), None);
        assert_eq!(platform_of("arm64"), "linux/arm64");
        assert_eq!(platform_of("x86_64"), "linux/amd64");
    }

    #[test]
    fn provided_runtimes_run_the_function_bootstrap_from_the_code_or_a_layer() {
        let dir = tempfile::tempdir().unwrap();
        let (task, opt) = (dir.path().join("task"), dir.path().join("opt"));
        std::fs::create_dir_all(&task).unwrap();
        std::fs::create_dir_all(&opt).unwrap();
        assert_eq!(
            entrypoint_of("nodejs20.x", &task, &opt),
            "/var/runtime/bootstrap"
        );
        assert_eq!(
            entrypoint_of("provided.al2023", &task, &opt),
            "/var/task/bootstrap"
        );
        std::fs::write(opt.join("bootstrap"), "").unwrap();
        assert_eq!(
            entrypoint_of("provided.al2023", &task, &opt),
            "/opt/bootstrap"
        );
        std::fs::write(task.join("bootstrap"), "").unwrap();
        assert_eq!(
            entrypoint_of("provided.al2023", &task, &opt),
            "/var/task/bootstrap"
        );
    }

    #[test]
    fn container_config_mounts_code_and_layers_and_limits_memory() {
        let environment = BTreeMap::from([
            (
                "AWS_LAMBDA_RUNTIME_API".to_string(),
                "host.docker.internal:9001".to_string(),
            ),
            ("_HANDLER".to_string(), "app.handler".to_string()),
        ]);
        let config = container_config(
            &spec("b"),
            "public.ecr.aws/lambda/python:3.12",
            "/var/runtime/bootstrap",
            &environment,
            Path::new("/tmp/i/task"),
            Path::new("/tmp/i/opt"),
        );
        assert_eq!(config["Image"], "public.ecr.aws/lambda/python:3.12");
        assert_eq!(config["Entrypoint"], json!(["/var/runtime/bootstrap"]));
        assert!(config.get("Cmd").is_none());
        assert_eq!(
            config["Env"],
            json!([
                "AWS_LAMBDA_RUNTIME_API=host.docker.internal:9001",
                "_HANDLER=app.handler"
            ])
        );
        assert_eq!(config["WorkingDir"], "/var/task");
        let host = &config["HostConfig"];
        assert_eq!(
            host["Binds"],
            json!(["/tmp/i/task:/var/task:ro", "/tmp/i/opt:/opt:ro"])
        );
        assert_eq!(
            host["ExtraHosts"],
            json!(["host.docker.internal:host-gateway"])
        );
        assert_eq!(host["Memory"], 256 * 1024 * 1024);
        assert_eq!(host["MemorySwap"], host["Memory"]);
        assert_eq!(host["AutoRemove"], true);
        assert_eq!(
            config["Labels"][LABEL],
            "000000000000/us-east-1/echo:$LATEST"
        );
    }

    /// A body fed from a channel (the fake engine's attach stream).
    struct ChannelBody(mpsc::UnboundedReceiver<Bytes>);

    impl hyper::body::Body for ChannelBody {
        type Data = Bytes;
        type Error = Infallible;
        fn poll_frame(
            mut self: Pin<&mut Self>,
            cx: &mut Context<'_>,
        ) -> Poll<Option<Result<Frame<Bytes>, Infallible>>> {
            self.0.poll_recv(cx).map(|b| b.map(|b| Ok(Frame::data(b))))
        }
    }

    /// What the fake engine saw.
    #[derive(Default)]
    struct Seen {
        requests: Vec<String>,
        created: Option<Json>,
        pulled: bool,
        attach: Option<mpsc::UnboundedSender<Bytes>>,
    }

    #[derive(Default)]
    struct Fake {
        seen: Mutex<Seen>,
        removed: Notify,
    }

    fn frame(text: &str) -> Bytes {
        let mut f = vec![1, 0, 0, 0];
        f.extend_from_slice(&(text.len() as u32).to_be_bytes());
        f.extend_from_slice(text.as_bytes());
        Bytes::from(f)
    }

    fn answer(status: u16, body: impl Into<Bytes>) -> hyper::Response<BoxBody<Bytes, Infallible>> {
        let mut r = hyper::Response::new(Full::new(body.into()).boxed());
        *r.status_mut() = http::StatusCode::from_u16(status).unwrap();
        r
    }

    /// One HTTP/1 request over TCP, as the container's runtime sends it.
    async fn runtime_call(
        addr: &str,
        method: Method,
        path: &str,
        body: Vec<u8>,
    ) -> hyper::Response<Incoming> {
        let stream = TcpStream::connect(addr).await.unwrap();
        let (mut sender, conn) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .unwrap();
        tokio::spawn(conn);
        let req = hyper::Request::builder()
            .method(method)
            .uri(format!("/2018-06-01/runtime/{path}"))
            .header("host", addr)
            .body(Full::new(Bytes::from(body)))
            .unwrap();
        sender.send_request(req).await.unwrap()
    }

    /// The container's runtime: takes invocations from the Runtime API its environment
    /// names, prints a line, answers with the event wrapped.
    async fn fake_runtime(config: Json, attach: mpsc::UnboundedSender<Bytes>) {
        let env: Vec<String> = serde_json::from_value(config["Env"].clone()).unwrap();
        let api = env
            .iter()
            .find_map(|e| e.strip_prefix("AWS_LAMBDA_RUNTIME_API="))
            .unwrap()
            .replace(HOST_ALIAS, "127.0.0.1");
        loop {
            let next = runtime_call(&api, Method::GET, "invocation/next", Vec::new()).await;
            let id = next.headers()["lambda-runtime-aws-request-id"]
                .to_str()
                .unwrap()
                .to_string();
            let event = next.into_body().collect().await.unwrap().to_bytes();
            let _ = attach.send(frame(&format!("handled {id}\n")));
            let reply = format!(r#"{{"fake":{}}}"#, String::from_utf8_lossy(&event));
            let path = format!("invocation/{id}/response");
            runtime_call(&api, Method::POST, &path, reply.into_bytes()).await;
        }
    }

    async fn fake_engine(
        fake: Arc<Fake>,
        req: hyper::Request<Incoming>,
    ) -> hyper::Response<BoxBody<Bytes, Infallible>> {
        let method = req.method().clone();
        let path = req.uri().path().to_string();
        let target = format!("{method} {}", req.uri());
        let body = req.into_body().collect().await.unwrap().to_bytes();
        fake.seen.lock().unwrap().requests.push(target);
        match (method, path.as_str()) {
            (Method::GET, "/v1.41/networks/bridge") => {
                answer(200, r#"{"IPAM":{"Config":[{"Gateway":"127.0.0.1"}]}}"#)
            }
            (Method::GET, p) if p.starts_with("/v1.41/images/") => {
                match fake.seen.lock().unwrap().pulled {
                    true => answer(200, "{}"),
                    false => answer(404, r#"{"message":"No such image"}"#),
                }
            }
            (Method::POST, "/v1.41/images/create") => {
                fake.seen.lock().unwrap().pulled = true;
                answer(
                    200,
                    "{\"status\":\"Pulling\"}\n{\"status\":\"Downloaded\"}\n",
                )
            }
            (Method::POST, "/v1.41/containers/create") => {
                fake.seen.lock().unwrap().created = serde_json::from_slice(&body).ok();
                answer(201, r#"{"Id":"c0ffee"}"#)
            }
            (Method::POST, "/v1.41/containers/c0ffee/attach") => {
                let (tx, rx) = mpsc::unbounded_channel();
                fake.seen.lock().unwrap().attach = Some(tx);
                let mut r = hyper::Response::new(ChannelBody(rx).boxed());
                r.headers_mut().insert(
                    http::header::CONTENT_TYPE,
                    http::HeaderValue::from_static("application/vnd.docker.raw-stream"),
                );
                r
            }
            (Method::POST, "/v1.41/containers/c0ffee/start") => {
                let (config, attach) = {
                    let seen = fake.seen.lock().unwrap();
                    (seen.created.clone().unwrap(), seen.attach.clone().unwrap())
                };
                tokio::spawn(fake_runtime(config, attach));
                answer(204, "")
            }
            (Method::POST, "/v1.41/containers/c0ffee/wait") => {
                fake.removed.notified().await;
                answer(200, r#"{"StatusCode":137}"#)
            }
            (Method::DELETE, "/v1.41/containers/c0ffee") => {
                fake.removed.notify_waiters();
                answer(204, "")
            }
            _ => answer(404, r#"{"message":"page not found"}"#),
        }
    }

    fn env_with_code() -> (Arc<Env>, String) {
        let env = Arc::new(Env::new(
            Store::open(StoreMode::Ephemeral).unwrap(),
            10,
            "000000000000".into(),
            "us-east-1".into(),
            "localhost".into(),
        ));
        // An empty zip archive: its end-of-central-directory record alone.
        let mut empty_zip = b"PK\x05\x06".to_vec();
        empty_zip.extend([0; 18]);
        let mut blob = env.store.create_blob().unwrap();
        blob.write(&empty_zip).unwrap();
        let id = blob.finish().unwrap();
        (env, id)
    }

    fn invocation(id: &str) -> Invocation {
        Invocation {
            request_id: id.into(),
            payload: br#"{"n":1}"#.to_vec(),
            invoked_arn: "arn:aws:lambda:us-east-1:000000000000:function:echo".into(),
            client_context: None,
        }
    }

    #[tokio::test(flavor = "multi_thread", worker_threads = 2)]
    async fn invocations_run_in_a_container_the_engine_creates_and_stay_warm() {
        let dir = tempfile::tempdir().unwrap();
        let socket = dir.path().join("docker.sock");
        let listener = tokio::net::UnixListener::bind(&socket).unwrap();
        let fake = Arc::new(Fake::default());
        {
            let fake = fake.clone();
            tokio::spawn(async move {
                loop {
                    let (stream, _) = listener.accept().await.unwrap();
                    let fake = fake.clone();
                    tokio::spawn(async move {
                        let service = hyper::service::service_fn(move |req| {
                            let fake = fake.clone();
                            async move { Ok::<_, Infallible>(fake_engine(fake, req).await) }
                        });
                        let _ = hyper::server::conn::http1::Builder::new()
                            .serve_connection(TokioIo::new(stream), service)
                            .await;
                    });
                }
            });
        }
        let (env, blob) = env_with_code();
        let executor = DockerExecutor::with_socket(env, Ok(socket)).unwrap();

        let cold = executor
            .invoke(spec(&blob), invocation("req-1"))
            .await
            .unwrap();
        assert_eq!(
            String::from_utf8(cold.payload).unwrap(),
            r#"{"fake":{"n":1}}"#
        );
        assert!(cold.function_error.is_none() && cold.init_ms.is_some());
        let lines: Vec<&str> = cold.lines.iter().map(|(_, l)| l.as_str()).collect();
        assert_eq!(lines, ["handled req-1"]);
        let warm = executor
            .invoke(spec(&blob), invocation("req-2"))
            .await
            .unwrap();
        assert!(warm.init_ms.is_none());
        assert_eq!(warm.log_stream, cold.log_stream);

        let (requests, created) = {
            let seen = fake.seen.lock().unwrap();
            (seen.requests.clone(), seen.created.clone().unwrap())
        };
        let pulls: Vec<&String> = requests
            .iter()
            .filter(|r| r.contains("/images/create"))
            .collect();
        assert_eq!(
            pulls,
            ["POST /v1.41/images/create?fromImage=public.ecr.aws%2Flambda%2Fpython&tag=3.12&platform=linux%2Farm64"]
        );
        assert_eq!(
            requests
                .iter()
                .filter(|r| r.contains("/containers/create"))
                .count(),
            1
        );
        assert!(requests.iter().any(|r| r
            .starts_with("POST /v1.41/containers/create?name=roto-lambda-echo-")
            && r.ends_with("&platform=linux%2Farm64")));
        assert_eq!(created["Image"], "public.ecr.aws/lambda/python:3.12");
        let environment: Vec<String> = serde_json::from_value(created["Env"].clone()).unwrap();
        for expected in [
            "_HANDLER=app.handler",
            "GREETING=hi",
            "LAMBDA_TASK_ROOT=/var/task",
            "AWS_LAMBDA_FUNCTION_MEMORY_SIZE=256",
            "AWS_ENDPOINT_URL=http://host.docker.internal:4566",
        ] {
            assert!(
                environment.iter().any(|e| e == expected),
                "{expected} in {environment:?}"
            );
        }
        assert!(environment
            .iter()
            .any(|e| e.starts_with("AWS_LAMBDA_RUNTIME_API=host.docker.internal:")));

        let removed = fake.removed.notified();
        executor.retire("000000000000/us-east-1/echo/");
        tokio::time::timeout(Duration::from_secs(5), removed)
            .await
            .unwrap();
        let requests = fake.seen.lock().unwrap().requests.clone();
        assert!(requests
            .iter()
            .any(|r| r == "DELETE /v1.41/containers/c0ffee?force=true&v=true"));
    }

    #[tokio::test]
    async fn the_forwarder_relays_containers_connections_to_roto() {
        use tokio::io::{AsyncReadExt, AsyncWriteExt};
        let roto = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let (env, _) = env_with_code();
        env.set_endpoint(format!("http://{}", roto.local_addr().unwrap()));
        let listener = TcpListener::bind("127.0.0.1:0").await.unwrap();
        let relay = listener.local_addr().unwrap();
        let _forwarder = AbortOnDrop(tokio::spawn(forward(listener, Arc::downgrade(&env))));
        let mut client = TcpStream::connect(relay).await.unwrap();
        client.write_all(b"ping").await.unwrap();
        let (mut server, _) = roto.accept().await.unwrap();
        let mut got = [0; 4];
        server.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"ping");
        server.write_all(b"pong").await.unwrap();
        client.read_exact(&mut got).await.unwrap();
        assert_eq!(&got, b"pong");
    }

    #[tokio::test]
    async fn without_an_engine_invocations_fail_saying_so() {
        let (env, blob) = env_with_code();
        let missing = PathBuf::from("/nonexistent/docker.sock");
        let executor = DockerExecutor::with_socket(env.clone(), Ok(missing)).unwrap();
        let err = executor
            .invoke(spec(&blob), invocation("r"))
            .await
            .unwrap_err();
        assert_eq!(err.code, "ServiceException");
        assert!(
            err.message.starts_with(
                "Cannot run echo: no Docker engine answers at unix:///nonexistent/docker.sock"
            ),
            "{}",
            err.message
        );
        let tcp =
            DockerExecutor::with_socket(env, engine::socket_from(Some("tcp://10.0.0.1:2375")))
                .unwrap();
        let err = tcp.invoke(spec(&blob), invocation("r")).await.unwrap_err();
        assert!(err
            .message
            .contains("DOCKER_HOST=tcp://10.0.0.1:2375 is not a unix socket"));
    }
}
