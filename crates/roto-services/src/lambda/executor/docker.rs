//! The `docker` executor: runtimes in containers of the Lambda base images.
//!
//! Each instance is one container. A zip function runs in its runtime's image
//! ([`super::images`]: `public.ecr.aws/lambda/<runtime>` by default, or the image the user
//! mapped it to), whose entrypoint is the image's own runtime bootstrap
//! (`/var/runtime/bootstrap`; for `provided.*` the function's `bootstrap`), never the
//! runtime interface emulator: the runtime speaks to the instance's Runtime API, served by
//! Roto (see [`super::sandbox`]). The function's code and its layers, unpacked as for the
//! process executor, are bind-mounted read-only at `/var/task` and `/opt`. A container-image
//! function runs its own image with its `ImageConfig`. The memory size is the container's
//! memory limit. An image the engine has is used as it is; one it lacks is pulled once, and
//! if that fails the invocation fails at once, naming the image and the flags that map it.
//!
//! Networking: where the engine shares this host's network (a local engine, not rootless,
//! not in a VM), containers join the host network and reach the Runtime API and Roto on
//! loopback, with or without a bridge network. Otherwise they reach this host as
//! `host.docker.internal`, mapped to the engine's `host-gateway`: with a bridge whose
//! gateway is an address of this host, the Runtime API listeners bind there and a forwarder
//! relays handler SDK calls to Roto's port, which stays on loopback; where the gateway is
//! not an address of this host (Docker Desktop), `host.docker.internal` reaches the host's
//! loopback, so the listeners and Roto's port are used as they are. Either way the
//! container's `AWS_ENDPOINT_URL` names `host.docker.internal`, as LocalStack's does.
//!
//! Cleanup: every container is labelled with its owner: the kernel's boot id, the PID
//! namespace Roto's pid is counted in, the pid and the process's start time. Stopping the
//! server removes its containers; a server starting removes the labelled containers of
//! owners it can prove gone (a `kill -9`), never a live sibling's: an owner in its own PID
//! namespace whose pid no longer names a process started when the owner did, or, from the
//! initial PID namespace (which sees every process), an owner whose namespace holds no
//! process any more. Servers in containers have PID namespaces of their own (often all as
//! pid 1), so one never judges another's pid; what a killed server in a container left is
//! removed by a later server in the same namespace or on the host.
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
use roto_core::{AwsError, AwsResult, BoxFuture, Env};
use serde_json::{json, Value as Json};
use tokio::net::{TcpListener, TcpStream};
use tokio::sync::OnceCell;

use super::engine::{self, Demux, Engine};
use super::images::{self, Images};
use super::sandbox::{self, Api, Drain, Instance, Output, Pool, Sandbox, StartFailure, Started};
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
/// The label naming the server that owns a container ([`Owner`]).
const OWNER_LABEL: &str = "roto.lambda.owner";
/// How long a stopping server waits for the engine to remove its containers.
const STOP_WAIT: Duration = Duration::from_secs(10);

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

/// The initial PID namespace's inode (`PROC_PID_INIT_INO`): a server in it sees every
/// process on the machine.
const INITIAL_PID_NAMESPACE: u64 = 0xEFFF_FFFC;

/// Which kernel a server runs on and which PID namespace its pid is counted in: the
/// identity under which an owner's pid and start time name one process.
#[derive(Debug, Clone, PartialEq)]
struct Identity {
    /// The kernel's boot id (the same in every container on the machine).
    boot: String,
    /// The inode of the PID namespace.
    pid_namespace: u64,
}

impl Identity {
    /// This process's identity, where `/proc` tells it.
    fn of_this_process() -> Option<Identity> {
        let boot = std::fs::read_to_string("/proc/sys/kernel/random/boot_id").ok()?;
        Some(Identity {
            boot: boot.trim().to_string(),
            pid_namespace: pid_namespace_of("self")?,
        })
    }
}

/// The server that owns a container, as its label names it:
/// `<boot id>/<pid namespace>/<pid>/<start time>`.
#[derive(Debug, PartialEq)]
struct Owner {
    identity: Identity,
    pid: u32,
    /// When the process started, in clock ticks after boot.
    started: u64,
}

impl Owner {
    /// This server, where `/proc` tells who it is.
    fn this_server() -> Option<Owner> {
        let pid = std::process::id();
        Some(Owner {
            identity: Identity::of_this_process()?,
            pid,
            started: Proc.start_time(pid)?,
        })
    }

    /// The owner a label names; `None` for a label of another form (an older server's).
    fn parse(label: &str) -> Option<Owner> {
        let mut parts = label.splitn(4, '/');
        let boot = parts.next()?.to_string();
        let pid_namespace = parts.next()?.parse().ok()?;
        let pid = parts.next()?.parse().ok()?;
        let started = parts.next()?.parse().ok()?;
        Some(Owner {
            identity: Identity {
                boot,
                pid_namespace,
            },
            pid,
            started,
        })
    }

    /// The label value naming this owner.
    fn label(&self) -> String {
        let Identity {
            boot,
            pid_namespace,
        } = &self.identity;
        format!("{boot}/{pid_namespace}/{}/{}", self.pid, self.started)
    }

    /// Whether this owner is provably gone, seen by a server of identity `me` among
    /// `processes`. Only two cases prove it: the owner counted its pid in `me`'s PID
    /// namespace and that pid no longer names a process started when the owner did; or
    /// `me` is in the initial PID namespace, which sees every process, and no process is
    /// left in the owner's. An owner on another kernel or in a namespace `me` cannot see
    /// into is alive: its containers are left to it.
    fn is_gone(&self, me: &Identity, processes: &impl Processes) -> bool {
        if self.identity.boot != me.boot {
            return false;
        }
        if self.identity.pid_namespace == me.pid_namespace {
            return processes.start_time(self.pid) != Some(self.started);
        }
        me.pid_namespace == INITIAL_PID_NAMESPACE
            && processes.namespace_is_empty(self.identity.pid_namespace)
    }
}

/// What a server sees of the processes around it.
trait Processes {
    /// When process `pid` started (clock ticks after boot): with the pid it names one
    /// process, whatever reuses the pid later.
    fn start_time(&self, pid: u32) -> Option<u64>;
    /// Whether no process is in PID namespace `namespace`: false where that cannot be
    /// told.
    fn namespace_is_empty(&self, namespace: u64) -> bool;
}

/// The processes `/proc` shows.
struct Proc;

impl Processes for Proc {
    fn start_time(&self, pid: u32) -> Option<u64> {
        let stat = std::fs::read_to_string(format!("/proc/{pid}/stat")).ok()?;
        let (_, fields) = stat.rsplit_once(')')?;
        fields.split_whitespace().nth(19)?.parse().ok()
    }

    /// Seen from the initial PID namespace (the only place it is asked). A process whose
    /// namespace this server may not read (another user's, or one guarded against
    /// inspection) counts as outside `namespace` only where `/proc` shows it is in the
    /// initial one; otherwise the namespace is not proved empty.
    fn namespace_is_empty(&self, namespace: u64) -> bool {
        let Ok(entries) = std::fs::read_dir("/proc") else {
            return false;
        };
        for entry in entries.flatten() {
            let name = entry.file_name();
            let Some(pid) = name
                .to_str()
                .filter(|n| n.bytes().all(|b| b.is_ascii_digit()))
            else {
                continue;
            };
            let outside = match pid_namespace_of(pid) {
                Some(n) => n != namespace,
                None => in_initial_namespace(pid) || !entry.path().exists(),
            };
            if !outside {
                return false;
            }
        }
        true
    }
}

/// Whether process `pid` is in the initial PID namespace, from its `NSpid` (its pid in
/// each namespace it is in, outermost first), which anyone may read.
fn in_initial_namespace(pid: &str) -> bool {
    let Ok(status) = std::fs::read_to_string(format!("/proc/{pid}/status")) else {
        return false;
    };
    status
        .lines()
        .find_map(|line| line.strip_prefix("NSpid:"))
        .is_some_and(|pids| pids.split_whitespace().count() == 1)
}

/// The inode of the PID namespace of process `pid` (`self` for this one).
fn pid_namespace_of(pid: &str) -> Option<u64> {
    let link = std::fs::read_link(format!("/proc/{pid}/ns/pid")).ok()?;
    let link = link.to_str()?;
    link.strip_prefix("pid:[")?.strip_suffix(']')?.parse().ok()
}

/// This host's name, as an engine on it names itself.
fn hostname() -> String {
    std::fs::read_to_string("/proc/sys/kernel/hostname")
        .map(|h| h.trim().to_string())
        .unwrap_or_default()
}

/// This server's owner label value, or where `/proc` does not say who it is, a unique
/// value that no server ever proves gone.
fn owner_of_this_server() -> String {
    Owner::this_server()
        .map(|owner| owner.label())
        .unwrap_or_else(|| format!("unknown/{}", roto_core::dispatch::new_request_id()))
}

/// How containers reach this host.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Network {
    /// On the host network: loopback is this host's.
    Host,
    /// On the engine's default network, reaching this host through `host-gateway`.
    Gateway,
}

/// The container-create document for an instance.
fn container_config(
    spec: &Spec,
    image: &str,
    environment: &BTreeMap<String, String>,
    mounts: Option<(&Path, &Path)>,
    network: Network,
    owner: &str,
) -> Json {
    let memory = spec.memory.max(1) * 1024 * 1024;
    let host_address = match network {
        Network::Host => "127.0.0.1",
        Network::Gateway => "host-gateway",
    };
    let mut host_config = json!({
        "ExtraHosts": [format!("{HOST_ALIAS}:{host_address}")],
        "Memory": memory,
        "MemorySwap": memory,
        "AutoRemove": true,
    });
    if network == Network::Host {
        host_config["NetworkMode"] = json!("host");
    }
    let mut config = json!({
        "Image": image,
        "Env": environment.iter().map(|(k, v)| format!("{k}={v}")).collect::<Vec<_>>(),
        "Labels": {
            LABEL: format!("{}/{}/{}:{}", spec.account, spec.region, spec.name, spec.version),
            OWNER_LABEL: owner,
        },
        "AttachStdout": true,
        "AttachStderr": true,
        "Tty": false,
    });
    match (&spec.image, mounts) {
        (Some(function), _) => {
            if !function.entrypoint.is_empty() {
                config["Entrypoint"] = json!(function.entrypoint);
            }
            if !function.command.is_empty() {
                config["Cmd"] = json!(function.command);
            }
            if let Some(dir) = &function.working_directory {
                config["WorkingDir"] = json!(dir);
            }
        }
        (None, Some((task, opt))) => {
            config["Entrypoint"] = json!([entrypoint_of(&spec.runtime, task, opt)]);
            config["WorkingDir"] = json!("/var/task");
            host_config["Binds"] = json!([
                format!("{}:/var/task:ro", task.display()),
                format!("{}:/opt:ro", opt.display()),
            ]);
        }
        (None, None) => {}
    }
    config["HostConfig"] = host_config;
    config
}

/// Where containers find Roto, settled on the first start.
struct HostSide {
    network: Network,
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
    /// The file holding the peak memory of the container's cgroup, where this host shows it.
    peak_memory: Option<PathBuf>,
    _dir: tempfile::TempDir,
}

impl Sandbox for DockerSandbox {
    fn max_memory_mb(&self) -> Option<i64> {
        let bytes: u64 = std::fs::read_to_string(self.peak_memory.as_ref()?)
            .ok()?
            .trim()
            .parse()
            .ok()?;
        i64::try_from(bytes.div_ceil(1024 * 1024)).ok()
    }
}

/// The file holding the peak memory of a container's cgroup, from its process's
/// `/proc/<pid>/cgroup` listing: cgroup v1's `memory.max_usage_in_bytes` where the memory
/// controller is a v1 one, else v2's `memory.peak`. None unless the listing names the
/// container (where Roto runs in a container of its own, the engine's pid names another
/// process, or none).
fn peak_memory_file(cgroups: &str, container: &str) -> Option<PathBuf> {
    if container.is_empty() || !cgroups.contains(container) {
        return None;
    }
    let entries: Vec<(&str, &str)> = cgroups
        .lines()
        .filter_map(|line| {
            let mut parts = line.splitn(3, ':');
            let (_, controllers, path) = (parts.next()?, parts.next()?, parts.next()?);
            Some((controllers, path))
        })
        .collect();
    let v1 = entries
        .iter()
        .find(|(controllers, _)| controllers.split(',').any(|c| c == "memory"));
    match v1 {
        Some((_, path)) => Some(format!(
            "/sys/fs/cgroup/memory{path}/memory.max_usage_in_bytes"
        )),
        None => entries
            .iter()
            .find(|(controllers, _)| controllers.is_empty())
            .map(|(_, path)| format!("/sys/fs/cgroup{path}/memory.peak")),
    }
    .map(PathBuf::from)
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
    /// Which image each runtime runs in.
    images: Images,
    /// Where instances' code is unpacked.
    root: tempfile::TempDir,
    pool: Pool,
    host: OnceCell<HostSide>,
    /// The owner label of this server's containers.
    owner: String,
    /// Images the engine is known to have.
    present: Mutex<HashSet<String>>,
}

impl DockerExecutor {
    /// The executor for the engine `DOCKER_HOST` names (else `/var/run/docker.sock`); says
    /// on stderr when no engine answers there, and removes the containers servers on this
    /// host left when they were killed.
    pub fn new(env: Arc<Env>, images: Images) -> io::Result<DockerExecutor> {
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
        let executor = DockerExecutor::with_socket(env, socket, images)?;
        if let (Ok(engine), Ok(runtime)) = (&executor.engine, tokio::runtime::Handle::try_current())
        {
            runtime.spawn(remove_orphans(engine.clone()));
        }
        Ok(executor)
    }

    /// The executor for the engine at `socket` (or the reason there is none).
    fn with_socket(
        env: Arc<Env>,
        socket: Result<PathBuf, String>,
        images: Images,
    ) -> io::Result<DockerExecutor> {
        Ok(DockerExecutor {
            env,
            engine: socket.map(Engine::new),
            images,
            root: tempfile::Builder::new().prefix("roto-lambda-").tempdir()?,
            pool: Pool::default(),
            host: OnceCell::new(),
            owner: owner_of_this_server(),
            present: Mutex::new(HashSet::new()),
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
                let loopback = HostSide {
                    network: Network::Host,
                    bind: IpAddr::V4(Ipv4Addr::LOCALHOST),
                    endpoint_port: None,
                    _forwarder: None,
                };
                if engine.shares_loopback(&hostname()).await {
                    return Ok(loopback);
                }
                let gateway = match engine.bridge_gateway().await {
                    Some(ip) if !ip.is_loopback() => TcpListener::bind((ip, 0)).await.ok(),
                    _ => None,
                };
                let Some(listener) = gateway else {
                    return Ok(HostSide {
                        network: Network::Gateway,
                        ..loopback
                    });
                };
                let bound = listener.local_addr()?;
                let env = Arc::downgrade(&self.env);
                let forwarder = tokio::spawn(forward(listener, env));
                Ok(HostSide {
                    network: Network::Gateway,
                    bind: bound.ip(),
                    endpoint_port: Some(bound.port()),
                    _forwarder: Some(AbortOnDrop(forwarder)),
                })
            })
            .await
    }

    /// The images a function may run in, in the order to look for them.
    fn candidates(&self, spec: &Spec) -> Result<Vec<String>, String> {
        if let Some(function) = &spec.image {
            return Ok(self.images.for_uri(&function.uri));
        }
        self.images
            .for_runtime(&spec.runtime)
            .map(|image| vec![image])
            .ok_or_else(|| {
                format!(
                    "there is no Lambda base image for the runtime {}; map it to one with {}",
                    spec.runtime,
                    images::FLAGS
                )
            })
    }

    /// The first candidate image the engine has, else the first pulled.
    async fn image(&self, engine: &Engine, spec: &Spec) -> Result<String, String> {
        let candidates = self.candidates(spec)?;
        let present = |image: &String| {
            self.present
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .contains(image)
        };
        if let Some(image) = candidates.iter().find(|i| present(i)) {
            return Ok(image.clone());
        }
        for image in &candidates {
            if engine.has_image(image).await? {
                self.remember(image);
                return Ok(image.clone());
            }
        }
        let first = &candidates[0];
        match engine.pull(first, platform_of(&spec.architecture)).await {
            Ok(()) => {
                self.remember(first);
                Ok(first.clone())
            }
            Err(why) => Err(missing_image(&candidates, spec, &why)),
        }
    }

    fn remember(&self, image: &str) {
        self.present
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(image.to_string());
    }

    /// Starts an instance: the image, the code, the Runtime API, then the container.
    async fn start(&self, spec: Spec) -> Result<Arc<Instance>, StartFailure> {
        let cannot = |why: String| unsupported(format!("Cannot run {}: {why}", spec.name));
        let engine = self.engine.as_ref().map_err(|e| cannot(e.clone()))?;
        let image = self.image(engine, &spec).await.map_err(cannot)?;
        let host = self.host_side(engine).await?;
        let dir = tempfile::Builder::new()
            .prefix("instance-")
            .tempdir_in(self.root.path())?;
        let mounts = match spec.image {
            Some(_) => None,
            None => Some(unpack(&self.env, &spec, dir.path()).await?),
        };
        if let Some((task, opt)) = &mounts {
            check_bootstrap(&spec.runtime, task, opt)?;
        }
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
            &standard_environment(&spec, &paths),
            mounts.as_ref().map(|(t, o)| (t.as_path(), o.as_path())),
            host.network,
            &self.owner,
        );
        let name = format!("roto-lambda-{}-{:08x}", spec.name, fastrand::u32(..));
        let id = engine.create(&name, &config).await.map_err(cannot)?;
        let mut sandbox = DockerSandbox {
            engine: engine.clone(),
            id: id.clone(),
            peak_memory: None,
            _dir: dir,
        };
        let output = Arc::new(Output::default());
        let stream = engine.attach(&id).await.map_err(cannot)?;
        tokio::spawn(read_output(stream, output.clone()));
        if let Err(why) = engine.start(&id).await {
            return Err(start_failure(&spec, mounts.as_ref(), why, cannot));
        }
        sandbox.peak_memory = peak_memory_of(engine, &id).await;
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
                sandbox: Box::new(sandbox),
            },
        ))
    }
}

/// Where the peak memory of a started container is read, if this host shows it.
async fn peak_memory_of(engine: &Engine, id: &str) -> Option<PathBuf> {
    let pid = engine.pid(id).await.ok()?;
    let cgroups = std::fs::read_to_string(format!("/proc/{pid}/cgroup")).ok()?;
    peak_memory_file(&cgroups, id).filter(|file| file.exists())
}

/// The error for a function whose image the engine lacks and cannot pull.
fn missing_image(candidates: &[String], spec: &Spec, why: &str) -> String {
    let (names, mapping) = match &spec.image {
        Some(function) => (
            candidates.join(" or "),
            format!("--lambda-image {}=IMAGE (ROTO_LAMBDA_IMAGE)", function.uri),
        ),
        None => (
            candidates.join(" or "),
            format!(
                "--lambda-image {}=IMAGE (ROTO_LAMBDA_IMAGE) or --lambda-image-registry PREFIX (ROTO_LAMBDA_IMAGE_REGISTRY)",
                spec.runtime
            ),
        ),
    };
    format!(
        "the Docker engine has no image {names}, and pulling {} failed ({why}); pull or build it, or map the function to an image the engine has with {mapping}",
        candidates[0]
    )
}

/// Refuses a `provided` function whose bootstrap is missing, as Lambda does.
fn check_bootstrap(runtime: &str, task: &Path, opt: &Path) -> Result<(), StartFailure> {
    let (dir, _) = super::provided_bootstrap(task, opt);
    if runtime.starts_with("provided") && !dir.join("bootstrap").exists() {
        return Err(StartFailure::Entrypoint(
            "Couldn't find valid bootstrap(s): [/var/task/bootstrap /opt/bootstrap]".into(),
        ));
    }
    Ok(())
}

/// Why a container did not start: a `provided` bootstrap the engine cannot execute is the
/// function's `Runtime.InvalidEntrypoint`, as Lambda reports it; anything else is Roto's.
fn start_failure(
    spec: &Spec,
    mounts: Option<&(PathBuf, PathBuf)>,
    why: String,
    cannot: impl Fn(String) -> AwsError,
) -> StartFailure {
    let reason = ["permission denied", "exec format error"]
        .into_iter()
        .find(|r| why.contains(r));
    match (mounts, reason) {
        (Some((task, opt)), Some(reason)) if spec.runtime.starts_with("provided") => {
            let (_, path) = super::provided_bootstrap(task, opt);
            StartFailure::Entrypoint(format!("fork/exec {path}: {reason}"))
        }
        _ => StartFailure::Service(cannot(why)),
    }
}

/// Reads a container's multiplexed output into its instance's lines.
async fn read_output(mut stream: hyper::body::Incoming, output: Arc<Output>) {
    let mut demux = Demux::default();
    while let Some(Ok(frame)) = stream.frame().await {
        for line in frame.data_ref().map(|d| demux.feed(d)).unwrap_or_default() {
            output.push(line);
        }
    }
    for line in demux.finish() {
        output.push(line);
    }
}

/// Removes the containers that servers on this machine left when they were killed, where
/// [`Owner::is_gone`] proves their owner gone.
async fn remove_orphans(engine: Engine) {
    let Some(me) = Identity::of_this_process() else {
        return;
    };
    let Ok(containers) = engine.labelled(OWNER_LABEL).await else {
        return;
    };
    let mut gone = BTreeMap::new();
    for (id, labels) in containers {
        let label = labels[OWNER_LABEL].as_str().unwrap_or_default();
        let is_gone = *gone
            .entry(label.to_string())
            .or_insert_with(|| Owner::parse(label).is_some_and(|owner| owner.is_gone(&me, &Proc)));
        if is_gone {
            if let Err(e) = engine.remove(&id).await {
                tracing::warn!("cannot remove the orphaned Lambda container {id}: {e}");
            }
        }
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
        Box::pin(self.pool.invoke(spec, invocation, |spec| self.start(spec)))
    }

    fn retire(&self, prefix: &str) {
        self.pool.retire(prefix);
    }

    /// Removes every container this server started, busy ones too, and waits (briefly)
    /// until the engine has removed them all.
    fn stop(&self) -> BoxFuture<'_, ()> {
        self.pool.retire("");
        Box::pin(async move {
            let Ok(engine) = &self.engine else { return };
            let label = format!("{OWNER_LABEL}={}", self.owner);
            let removal = async {
                while let Ok(containers) = engine.labelled(&label).await {
                    if containers.is_empty() {
                        return;
                    }
                    let mut removals = tokio::task::JoinSet::new();
                    for (id, _) in containers {
                        let engine = engine.clone();
                        removals.spawn(async move { engine.remove(&id).await });
                    }
                    while removals.join_next().await.is_some() {}
                    tokio::time::sleep(Duration::from_millis(50)).await;
                }
            };
            let _ = tokio::time::timeout(STOP_WAIT, removal).await;
        })
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
            image: None,
        }
    }

    #[test]
    fn architectures_map_to_the_engines_platforms() {
        assert_eq!(platform_of("arm64"), "linux/arm64");
        assert_eq!(platform_of("x86_64"), "linux/amd64");
    }

    /// A fixed process table: the pids alive with their start times, and the PID
    /// namespaces that hold a process.
    struct Table {
        alive: Vec<(u32, u64)>,
        occupied: Vec<u64>,
    }

    impl Processes for Table {
        fn start_time(&self, pid: u32) -> Option<u64> {
            self.alive.iter().find(|(p, _)| *p == pid).map(|(_, s)| *s)
        }

        fn namespace_is_empty(&self, namespace: u64) -> bool {
            !self.occupied.contains(&namespace)
        }
    }

    const BOOT: &str = "2425a2dc-0b3b-46c3-80d5-680f3bb770e0";

    fn identity(pid_namespace: u64) -> Identity {
        Identity {
            boot: BOOT.into(),
            pid_namespace,
        }
    }

    fn owner(pid_namespace: u64, pid: u32, started: u64) -> Owner {
        Owner {
            identity: identity(pid_namespace),
            pid,
            started,
        }
    }

    #[test]
    fn owner_labels_name_boot_namespace_pid_and_start_time() {
        let label = format!("{BOOT}/4026532201/1/3512");
        let parsed = Owner::parse(&label).unwrap();
        assert_eq!(parsed, owner(4_026_532_201, 1, 3512));
        assert_eq!(parsed.label(), label);
        for other in [
            "garbage",
            "host/4194304/1",
            &format!("{BOOT}/ns/1/2"),
            &format!("{BOOT}/1/2"),
            &format!("{BOOT}/1/2/3/4"),
            &format!("{BOOT}/1/-2/3"),
            "unknown/0f1e2d3c-request-id",
        ] {
            assert_eq!(Owner::parse(other), None, "{other}");
        }
    }

    #[test]
    fn this_servers_label_names_this_process() {
        let me = Owner::this_server().unwrap();
        assert_eq!(me.pid, std::process::id());
        assert_eq!(me.identity, Identity::of_this_process().unwrap());
        assert_eq!(Owner::parse(&owner_of_this_server()), Some(me));
        assert!(!Owner::parse(&owner_of_this_server())
            .unwrap()
            .is_gone(&Identity::of_this_process().unwrap(), &Proc));
    }

    #[test]
    fn an_owner_in_the_same_namespace_is_gone_when_its_pid_names_another_process() {
        let table = Table {
            alive: vec![(1, 500), (42, 900)],
            occupied: vec![7],
        };
        let me = identity(7);
        assert!(!owner(7, 1, 500).is_gone(&me, &table));
        assert!(
            owner(7, 1, 499).is_gone(&me, &table),
            "pid 1 is another process now"
        );
        assert!(owner(7, 43, 900).is_gone(&me, &table), "no pid 43 any more");
    }

    #[test]
    fn servers_in_other_namespaces_never_judge_each_others_pids() {
        // Two servers in containers of their own, each pid 1 of its namespace.
        let table = Table {
            alive: vec![(1, 800)],
            occupied: vec![7, 8],
        };
        assert!(!owner(7, 1, 500).is_gone(&identity(8), &table));
        assert!(
            !owner(7, 1, 500).is_gone(
                &identity(8),
                &Table {
                    alive: vec![],
                    occupied: vec![],
                }
            ),
            "an empty namespace proves nothing from inside another"
        );
    }

    #[test]
    fn the_initial_namespace_judges_others_by_whether_any_process_is_left_in_them() {
        let table = Table {
            alive: vec![(1, 10), (300, 20)],
            occupied: vec![INITIAL_PID_NAMESPACE, 7],
        };
        let host = identity(INITIAL_PID_NAMESPACE);
        assert!(
            !owner(7, 1, 99).is_gone(&host, &table),
            "its namespace holds a process"
        );
        assert!(
            owner(8, 1, 99).is_gone(&host, &table),
            "its namespace is empty"
        );
        assert!(owner(INITIAL_PID_NAMESPACE, 301, 20).is_gone(&host, &table));
        assert!(!owner(INITIAL_PID_NAMESPACE, 300, 20).is_gone(&host, &table));
    }

    #[test]
    fn owners_on_another_kernel_are_never_judged() {
        let table = Table {
            alive: vec![],
            occupied: vec![],
        };
        let elsewhere = Owner {
            identity: Identity {
                boot: "another-boot".into(),
                pid_namespace: INITIAL_PID_NAMESPACE,
            },
            pid: 1,
            started: 1,
        };
        assert!(!elsewhere.is_gone(&identity(INITIAL_PID_NAMESPACE), &table));
    }

    #[test]
    fn the_proc_table_sees_this_process_and_its_namespace() {
        let ns = Identity::of_this_process().unwrap().pid_namespace;
        assert!(Proc.start_time(std::process::id()).is_some());
        assert!(!Proc.namespace_is_empty(ns));
        assert_eq!(in_initial_namespace("self"), ns == INITIAL_PID_NAMESPACE);
    }

    #[test]
    fn the_peak_memory_file_is_the_containers_memory_cgroups() {
        let id = "c0ffee";
        let v1 = "12:pids:/docker/c0ffee\n4:memory:/docker/c0ffee\n0::/docker/c0ffee\n";
        assert_eq!(
            peak_memory_file(v1, id).unwrap(),
            Path::new("/sys/fs/cgroup/memory/docker/c0ffee/memory.max_usage_in_bytes")
        );
        let joined = "5:cpu,memory:/system.slice/docker-c0ffee.scope\n";
        assert_eq!(
            peak_memory_file(joined, id).unwrap(),
            Path::new(
                "/sys/fs/cgroup/memory/system.slice/docker-c0ffee.scope/memory.max_usage_in_bytes"
            )
        );
        let v2 = "0::/system.slice/docker-c0ffee.scope\n";
        assert_eq!(
            peak_memory_file(v2, id).unwrap(),
            Path::new("/sys/fs/cgroup/system.slice/docker-c0ffee.scope/memory.peak")
        );
        assert_eq!(
            peak_memory_file("0::/user.slice/session-1.scope\n", id),
            None,
            "another process than the container's"
        );
        assert_eq!(peak_memory_file(v1, ""), None);
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
        let mounts = (Path::new("/tmp/i/task"), Path::new("/tmp/i/opt"));
        let config = container_config(
            &spec("b"),
            "public.ecr.aws/lambda/python:3.12",
            &environment,
            Some(mounts),
            Network::Gateway,
            "h/1/2",
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
        assert!(host.get("NetworkMode").is_none());
        assert_eq!(host["Memory"], 256 * 1024 * 1024);
        assert_eq!(host["MemorySwap"], host["Memory"]);
        assert_eq!(host["AutoRemove"], true);
        assert_eq!(
            config["Labels"][LABEL],
            "000000000000/us-east-1/echo:$LATEST"
        );
        assert_eq!(config["Labels"][OWNER_LABEL], "h/1/2");

        let local = container_config(
            &spec("b"),
            "img",
            &environment,
            Some(mounts),
            Network::Host,
            "h/1/2",
        );
        assert_eq!(local["HostConfig"]["NetworkMode"], "host");
        assert_eq!(
            local["HostConfig"]["ExtraHosts"],
            json!(["host.docker.internal:127.0.0.1"])
        );
    }

    #[test]
    fn a_container_image_function_runs_its_image_with_its_image_config() {
        let mut spec = spec("");
        spec.image = Some(super::super::ImageFunction {
            uri: "app:v1".into(),
            entrypoint: vec!["/lambda-entrypoint.sh".into()],
            command: vec!["app.handler".into()],
            working_directory: Some("/app".into()),
        });
        let config = container_config(
            &spec,
            "app:v1",
            &BTreeMap::new(),
            None,
            Network::Host,
            "h/1/2",
        );
        assert_eq!(config["Entrypoint"], json!(["/lambda-entrypoint.sh"]));
        assert_eq!(config["Cmd"], json!(["app.handler"]));
        assert_eq!(config["WorkingDir"], "/app");
        assert!(config["HostConfig"].get("Binds").is_none());
        spec.image = Some(super::super::ImageFunction {
            uri: "app:v1".into(),
            ..Default::default()
        });
        let plain = container_config(&spec, "app:v1", &BTreeMap::new(), None, Network::Host, "o");
        for member in ["Entrypoint", "Cmd", "WorkingDir"] {
            assert!(plain.get(member).is_none(), "{member}");
        }
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
        let executor = DockerExecutor::with_socket(env, Ok(socket), Images::default()).unwrap();

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
        assert!(requests
            .iter()
            .any(|r| r.starts_with("POST /v1.41/containers/create?name=roto-lambda-echo-")));
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
        let executor =
            DockerExecutor::with_socket(env.clone(), Ok(missing), Images::default()).unwrap();
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
        let tcp = DockerExecutor::with_socket(
            env,
            engine::socket_from(Some("tcp://10.0.0.1:2375")),
            Images::default(),
        )
        .unwrap();
        let err = tcp.invoke(spec(&blob), invocation("r")).await.unwrap_err();
        assert!(err
            .message
            .contains("DOCKER_HOST=tcp://10.0.0.1:2375 is not a unix socket"));
    }
}
