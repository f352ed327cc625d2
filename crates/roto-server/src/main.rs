//! roto-server: the binary.
//!
//! Parses the flags, opens the store, builds the services and the dispatcher, runs the
//! setup scripts, then listens (HTTP/1.1 and HTTP/2 with prior knowledge on one port): one
//! start line on stdout once the port is open, graceful stop on SIGINT/SIGTERM (stop
//! accepting, answer long polls at once, finish in-flight requests, stop the services'
//! outside work such as Lambda's runtime processes, flush the store, exit 0).

mod access;
mod boundary;
mod cli;
mod conn;
mod guard;
mod hooks;
mod http;
mod introspect;
mod localstack;
mod presign;
mod router;
mod signature;
mod signed_body;
mod ui;

use std::io::Write;
use std::net::SocketAddr;
use std::process::ExitCode;
use std::sync::Arc;
use std::time::Duration;

use clap::Parser;
use hyper::service::service_fn;
use hyper_util::rt::{TokioExecutor, TokioIo};
use hyper_util::server::conn::auto;
use hyper_util::server::graceful::GracefulShutdown;
use roto_core::store::Store;
use roto_core::{Dispatcher, Env};
use tokio::net::{TcpListener, TcpStream};

use crate::cli::Cli;
use crate::conn::{Connections, TrackedIo};
use crate::guard::Guard;
use crate::hooks::{HookEnv, Hooks};
use crate::http::App;
use crate::localstack::Instance;
use crate::router::Router;

/// How long in-flight requests may take to finish after a stop signal.
const DRAIN_TIMEOUT: Duration = Duration::from_secs(10);

fn main() -> ExitCode {
    let cli = Cli::parse();
    let checked = cli.store_mode().and_then(|m| cli.check().map(|()| m));
    let ready = checked.and_then(|m| Ok((m, Hooks::discover(&cli.ready_hook)?)));
    let (mode, hooks) = match ready {
        Ok(ready) => ready,
        Err(message) => {
            eprintln!("roto-server: error: {message}");
            return ExitCode::from(2);
        }
    };
    init_logging(&cli.log_level);
    boundary::install_hook();
    conn::raise_fd_limit();
    // One worker per core (tokio's default); store waits and CPU-heavy work leave the
    // workers through block_in_place and spawn_blocking.
    let runtime = match tokio::runtime::Builder::new_multi_thread()
        .enable_all()
        .build()
    {
        Ok(rt) => rt,
        Err(e) => {
            eprintln!("roto-server: error: cannot start the runtime: {e}");
            return ExitCode::FAILURE;
        }
    };
    match runtime.block_on(run(cli, mode, Arc::new(hooks))) {
        Ok(()) => ExitCode::SUCCESS,
        Err(message) => {
            eprintln!("roto-server: error: {message}");
            ExitCode::FAILURE
        }
    }
}

fn init_logging(level: &str) {
    let filter = level
        .parse::<tracing_subscriber::filter::LevelFilter>()
        .unwrap_or(tracing_subscriber::filter::LevelFilter::WARN);
    tracing_subscriber::fmt()
        .with_max_level(filter)
        .with_writer(std::io::stderr)
        .with_target(false)
        .init();
}

async fn run(cli: Cli, mode: roto_core::store::StoreMode, hooks: Arc<Hooks>) -> Result<(), String> {
    let store = Store::open(mode.clone()).map_err(|e| format!("cannot open the store: {e}"))?;
    let env = Arc::new(Env::new(
        store,
        cli.trace_limit,
        cli.account_id.clone(),
        cli.region.clone(),
        cli.domain.clone(),
    ));
    env.set_option("lambda-executor", &cli.lambda_executor);
    if cli.enforce_iam {
        env.set_option(roto_core::access::ENFORCE_OPTION, "true");
    }
    if cli.verify_signatures {
        env.set_option(roto_core::dispatch::VERIFY_SIGNATURES_OPTION, "true");
    }
    if cli.kinesis_shard_limits {
        env.set_option(roto_services::kinesis::LIMITS_OPTION, "true");
    }
    env.set_option("lambda-images", &cli.lambda_image.join("\n"));
    if let Some(prefix) = &cli.lambda_image_registry {
        env.set_option("lambda-image-registry", prefix);
    }
    if cli.port != 0 {
        env.set_endpoint(format!("http://{}:{}", cli.host, cli.port));
    }
    let services =
        roto_services::all(&env).map_err(|e| format!("cannot create the services: {e}"))?;
    env.store.sweep_orphans().map_err(|e| e.to_string())?;
    let dispatcher = Dispatcher::start(env.clone(), services.clone());
    roto_core::memory::trim_when_quiet(&env);
    // URLs returned to setup scripts name the configured address; with --port 0 the port
    // is not known before the listener binds, so they fall back to the services' default.
    let setup_host = match cli.port {
        0 => String::new(),
        port => format!("{}:{port}", cli.host),
    };
    roto_lua::Runner::new(dispatcher.clone(), setup_host)
        .run_files(&cli.setup)
        .await
        .map_err(|e| e.to_string())?;
    let addr = format!("{}:{}", cli.host, cli.port);
    let listener = TcpListener::bind(&addr)
        .await
        .map_err(|e| format!("cannot listen on {addr}: {e}"))?;
    let local: SocketAddr = listener.local_addr().map_err(|e| e.to_string())?;
    let stop = shutdown_signal();
    env.set_endpoint(format!("http://{local}"));
    let names: Vec<&str> = services.iter().map(|s| s.spec().name).collect();
    {
        let mut out = std::io::stdout().lock();
        let _ = writeln!(
            out,
            "roto-server {} listening on http://{} store={} services={}",
            env!("CARGO_PKG_VERSION"),
            local,
            mode.name(),
            names.join(",")
        );
        let _ = out.flush();
    }
    let running = services.clone();
    let hook_env = HookEnv {
        endpoint: loopback_url(local),
        region: cli.region.clone(),
    };
    let app = Arc::new(App {
        dispatcher: dispatcher.clone(),
        guard: Guard::new(&cli.host, &cli.domain, &cli.allow_host, &cli.allow_origin),
        timeouts: cli.timeouts(),
        localstack: Instance::new(hooks.clone()),
        enforce_iam: cli.enforce_iam,
        verify_signatures: cli.verify_signatures,
        router: Router::new(services, cli.account_id, cli.region, cli.domain),
    });
    let print_ready = cli.print_ready;
    tokio::spawn(async move {
        hooks.run(hook_env).await;
        if print_ready {
            let mut out = std::io::stdout().lock();
            let _ = writeln!(out, "Ready.");
            let _ = out.flush();
        }
    });
    accept_until_signal(listener, app, stop).await;
    for service in &running {
        service.stop().await;
    }
    env.store.flush();
    Ok(())
}

/// The URL processes on this machine reach the server at: loopback when it listens on
/// every interface.
fn loopback_url(local: SocketAddr) -> String {
    let ip = match local.ip() {
        ip if !ip.is_unspecified() => ip,
        std::net::IpAddr::V4(_) => std::net::Ipv4Addr::LOCALHOST.into(),
        std::net::IpAddr::V6(_) => std::net::Ipv6Addr::LOCALHOST.into(),
    };
    format!("http://{}", SocketAddr::new(ip, local.port()))
}

async fn accept_until_signal(
    listener: TcpListener,
    app: Arc<App>,
    stop: impl std::future::Future<Output = ()>,
) {
    let graceful = GracefulShutdown::new();
    let connections = Arc::new(Connections::default());
    let mut builder = auto::Builder::new(TokioExecutor::new());
    builder
        .http1()
        .keep_alive(true)
        // S3's 8 KiB of request headers fit 546 of the shortest x-amz-meta- lines.
        .max_headers(600);
    tokio::pin!(stop);
    loop {
        tokio::select! {
            accepted = listener.accept() => match accepted {
                Ok((stream, _)) => spawn_connection(stream, &app, &builder, &graceful, &connections),
                Err(error) => connections.after_accept_error(&error).await,
            },
            () = &mut stop => break,
        }
    }
    drop(listener);
    app.dispatcher.env.begin_stop();
    if tokio::time::timeout(DRAIN_TIMEOUT, graceful.shutdown())
        .await
        .is_err()
    {
        tracing::warn!("in-flight requests did not finish within {DRAIN_TIMEOUT:?}");
    }
}

/// Serves one connection on its own task, closed by its watchdog when a request head is
/// late or the connection has been idle too long.
fn spawn_connection(
    stream: TcpStream,
    app: &Arc<App>,
    builder: &auto::Builder<TokioExecutor>,
    graceful: &GracefulShutdown,
    connections: &Arc<Connections>,
) {
    let _ = stream.set_nodelay(true);
    let peer = stream.peer_addr().ok().map(http::Peer);
    let tracked = connections.track();
    let activity = tracked.activity.clone();
    let io = TokioIo::new(TrackedIo::new(stream, activity.clone()));
    let timeouts = app.timeouts;
    let app = app.clone();
    let service = service_fn(move |mut req: hyper::Request<hyper::body::Incoming>| {
        if let Some(peer) = peer {
            req.extensions_mut().insert(peer);
        }
        let in_flight = activity.begin();
        let app = app.clone();
        async move {
            let response = http::serve(app, req).await;
            drop(in_flight);
            Ok::<_, std::convert::Infallible>(response)
        }
    });
    let conn = graceful.watch(builder.serve_connection(io, service).into_owned());
    let closing = conn::Closing(tracked.activity.clone());
    let served = tokio::spawn(async move {
        let _closing = closing;
        if let Err(e) = conn.await {
            tracing::debug!(error = %e, "connection ended with an error");
        }
    });
    let abort = served.abort_handle();
    tokio::spawn(async move {
        if conn::watchdog(&tracked.activity, timeouts).await {
            tracing::debug!("closing a connection whose request head was late or that was idle");
            abort.abort();
        }
    });
}

/// Resolves on the first SIGTERM or SIGINT after the call: the handlers are installed when
/// it is called, before the start line is printed, so a client that signals as soon as it
/// reads that line still stops the server gracefully.
fn shutdown_signal() -> impl std::future::Future<Output = ()> {
    #[cfg(unix)]
    {
        use tokio::signal::unix::{signal, SignalKind};
        let streams = (
            signal(SignalKind::terminate()),
            signal(SignalKind::interrupt()),
        );
        async move {
            match streams {
                (Ok(mut term), Ok(mut int)) => tokio::select! {
                    _ = term.recv() => {}
                    _ = int.recv() => {}
                },
                _ => {
                    let _ = tokio::signal::ctrl_c().await;
                }
            }
        }
    }
    #[cfg(not(unix))]
    async {
        let _ = tokio::signal::ctrl_c().await;
    }
}
