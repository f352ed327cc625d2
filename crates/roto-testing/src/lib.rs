//! roto-testing: Roto as a fixture for `cargo test`.
//!
//! [`Roto::start`] launches the real `roto-server` binary with `--ephemeral --port 0`, reads
//! the port from its start line, waits until STS `GetCallerIdentity` answers (setup scripts
//! run before the port opens, so ready means seeded), and kills the process when the value
//! is dropped. Point any SDK at [`Roto::endpoint`]; assert on what happened with
//! [`Roto::traces`] and [`Roto::wait_for_trace`]; share one server between tests with
//! [`Roto::reset`].
//!
//! ```no_run
//! let roto = roto_testing::Roto::builder().setup("tests/setup.lua").start()?;
//! let url = roto.endpoint(); // http://127.0.0.1:PORT for the SDK's endpoint_url
//! let sends = roto.traces(&[("service", "sqs"), ("operation", "SendMessage")])?;
//! # let _ = (url, sends);
//! # Ok::<(), roto_testing::Error>(())
//! ```
//!
//! The binary is `$ROTO_BINARY` if set, else the newer of `target/release/roto-server` and
//! `target/debug/roto-server` in the target directory the test runs from, else
//! `roto-server` on `PATH` (see [`binary`]).

use std::fmt;
use std::io::{self, BufRead, BufReader, Read, Write};
use std::net::TcpStream;
use std::path::{Path, PathBuf};
use std::process::{Child, Command, ExitStatus, Stdio};
use std::sync::{Arc, Mutex};
use std::thread;
use std::time::{Duration, Instant};

use serde_json::Value as Json;

/// The form of the start line: `roto-server <version> listening on http://<host>:<port> ...`.
const START_PREFIX: &str = "roto-server ";
const LISTENING: &str = " listening on http://";
const IDENTITY_BODY: &str = "Action=GetCallerIdentity&Version=2011-06-15";
const BINARY_NAME: &str = "roto-server";

/// Why a server could not be started or asked.
#[derive(Debug)]
pub enum Error {
    /// No binary was found; the message says where it was looked for.
    NoBinary(String),
    /// The process could not be started, did not print its start line, or never became
    /// ready; carries what it wrote on stderr.
    Start(String),
    /// An HTTP exchange with the server failed.
    Io(io::Error),
    /// The server answered something unexpected.
    Response(String),
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        match self {
            Error::NoBinary(m) => write!(f, "no roto-server binary: {m}"),
            Error::Start(m) => write!(f, "roto-server did not start: {m}"),
            Error::Io(e) => write!(f, "talking to roto-server: {e}"),
            Error::Response(m) => write!(f, "unexpected answer from roto-server: {m}"),
        }
    }
}

impl std::error::Error for Error {}

impl From<io::Error> for Error {
    fn from(e: io::Error) -> Error {
        Error::Io(e)
    }
}

/// The result type of this crate.
pub type Result<T> = std::result::Result<T, Error>;

/// How to start a server: flags, environment, binary and readiness timeout.
#[derive(Debug, Clone)]
pub struct Builder {
    args: Vec<String>,
    envs: Vec<(String, String)>,
    binary: Option<PathBuf>,
    timeout: Duration,
}

impl Default for Builder {
    fn default() -> Builder {
        Builder {
            args: Vec::new(),
            envs: Vec::new(),
            binary: None,
            timeout: Duration::from_secs(20),
        }
    }
}

impl Builder {
    /// Adds a flag (or a flag's value) after `--ephemeral --port 0`.
    pub fn arg(mut self, arg: impl Into<String>) -> Builder {
        self.args.push(arg.into());
        self
    }

    /// Adds `--setup PATH` (repeatable; the scripts run in order before the port opens).
    pub fn setup(self, path: impl AsRef<Path>) -> Builder {
        let path = path.as_ref().display().to_string();
        self.arg("--setup").arg(path)
    }

    /// Sets an environment variable for the server process.
    pub fn env(mut self, key: impl Into<String>, value: impl Into<String>) -> Builder {
        self.envs.push((key.into(), value.into()));
        self
    }

    /// Uses this binary instead of discovering one.
    pub fn binary(mut self, path: impl Into<PathBuf>) -> Builder {
        self.binary = Some(path.into());
        self
    }

    /// How long to wait for readiness (20 s by default).
    pub fn timeout(mut self, timeout: Duration) -> Builder {
        self.timeout = timeout;
        self
    }

    /// Starts the server and returns once it answers `GetCallerIdentity`.
    pub fn start(self) -> Result<Roto> {
        let binary = match self.binary {
            Some(b) => b,
            None => binary()?,
        };
        let mut child = Command::new(&binary)
            .args(["--ephemeral", "--port", "0"])
            .args(&self.args)
            .envs(self.envs.iter().map(|(k, v)| (k.as_str(), v.as_str())))
            .stdin(Stdio::null())
            .stdout(Stdio::piped())
            .stderr(Stdio::piped())
            .spawn()
            .map_err(|e| Error::Start(format!("cannot run {}: {e}", binary.display())))?;
        let (stderr, drainer) = drain(child.stderr.take());
        let mut line = String::new();
        if let Some(out) = child.stdout.take() {
            let mut reader = BufReader::new(out);
            let _ = reader.read_line(&mut line);
            thread::spawn(move || io::copy(&mut reader, &mut io::sink()));
        }
        let Some(port) = parse_port(&line) else {
            let _ = child.kill();
            let _ = child.wait();
            if let Some(drainer) = drainer {
                let _ = drainer.join();
            }
            return Err(Error::Start(format!(
                "start line {:?}; stderr: {}",
                line.trim(),
                collected(&stderr)
            )));
        };
        let roto = Roto {
            child,
            host: "127.0.0.1".into(),
            port,
            stderr,
        };
        roto.wait_ready(self.timeout)?;
        Ok(roto)
    }
}

/// One running `roto-server`, killed when dropped.
pub struct Roto {
    child: Child,
    host: String,
    port: u16,
    stderr: Arc<Mutex<Vec<u8>>>,
}

impl Roto {
    /// Starts a fresh, empty, in-memory server with the discovered binary.
    pub fn start() -> Result<Roto> {
        Builder::default().start()
    }

    /// A builder for flags, setup scripts and environment.
    pub fn builder() -> Builder {
        Builder::default()
    }

    /// The endpoint URL SDKs take (`http://127.0.0.1:PORT`).
    pub fn endpoint(&self) -> String {
        format!("http://{}:{}", self.host, self.port)
    }

    /// The port it listens on.
    pub fn port(&self) -> u16 {
        self.port
    }

    /// What the server has written on stderr so far (logs, `roto.log` from setup).
    pub fn stderr(&self) -> String {
        collected(&self.stderr)
    }

    /// Trace entries matching the filters (`service`, `operation`, `kind`, `after`, ...).
    pub fn traces(&self, filters: &[(&str, &str)]) -> Result<Vec<Json>> {
        let query: Vec<String> = filters
            .iter()
            .map(|(k, v)| format!("{}={}", encode(k), encode(v)))
            .collect();
        let (status, body) =
            self.request("GET", &format!("/_roto/traces?{}", query.join("&")), b"")?;
        if status != 200 {
            return Err(Error::Response(format!(
                "GET /_roto/traces answered {status}: {}",
                String::from_utf8_lossy(&body)
            )));
        }
        let json: Json = serde_json::from_slice(&body)
            .map_err(|e| Error::Response(format!("traces are not JSON: {e}")))?;
        match json.get("traces") {
            Some(Json::Array(entries)) => Ok(entries.clone()),
            _ => Err(Error::Response("traces lack a \"traces\" array".into())),
        }
    }

    /// Blocks (server side, `?wait=`) until an entry matches, up to `timeout`; returns the
    /// matches, empty if none arrived in time.
    pub fn wait_for_trace(&self, filters: &[(&str, &str)], timeout: Duration) -> Result<Vec<Json>> {
        let wait = format!("{}", timeout.as_secs_f64());
        let mut all = filters.to_vec();
        all.push(("wait", &wait));
        self.traces(&all)
    }

    /// Empties every service's state and the trace (`POST /_roto/reset`).
    pub fn reset(&self) -> Result<()> {
        match self.request("POST", "/_roto/reset", b"")? {
            (200 | 204, _) => Ok(()),
            (status, body) => Err(Error::Response(format!(
                "POST /_roto/reset answered {status}: {}",
                String::from_utf8_lossy(&body)
            ))),
        }
    }

    /// Moves the server's clock forward (`POST /_roto/clock?advance=SECONDS`), so TTL
    /// expiry, scheduled rules, retention and retry back-off happen without waiting.
    pub fn advance_clock(&self, by: Duration) -> Result<()> {
        let path = format!("/_roto/clock?advance={}", by.as_secs_f64());
        match self.request("POST", &path, b"")? {
            (200, _) => Ok(()),
            (status, body) => Err(Error::Response(format!(
                "POST /_roto/clock answered {status}: {}",
                String::from_utf8_lossy(&body)
            ))),
        }
    }

    /// One raw HTTP/1.1 request; returns the status and the body.
    pub fn request(&self, method: &str, path: &str, body: &[u8]) -> Result<(u16, Vec<u8>)> {
        let mut stream = TcpStream::connect((self.host.as_str(), self.port))?;
        stream.set_read_timeout(Some(Duration::from_secs(70)))?;
        let head = format!(
            "{method} {path} HTTP/1.1\r\nHost: {}:{}\r\nContent-Type: application/x-www-form-urlencoded\r\nContent-Length: {}\r\nConnection: close\r\n\r\n",
            self.host,
            self.port,
            body.len()
        );
        stream.write_all(head.as_bytes())?;
        stream.write_all(body)?;
        let mut response = Vec::new();
        stream.read_to_end(&mut response)?;
        parse_response(&response)
    }

    /// Stops the server (SIGKILL: ephemeral state has nothing to flush) and returns its
    /// exit status.
    pub fn stop(mut self) -> Result<ExitStatus> {
        self.kill()
    }

    fn kill(&mut self) -> Result<ExitStatus> {
        if let Some(status) = self.child.try_wait()? {
            return Ok(status);
        }
        self.child.kill()?;
        Ok(self.child.wait()?)
    }

    fn wait_ready(&self, timeout: Duration) -> Result<()> {
        let deadline = Instant::now() + timeout;
        loop {
            if let Ok((200, _)) = self.request("POST", "/", IDENTITY_BODY.as_bytes()) {
                return Ok(());
            }
            if Instant::now() > deadline {
                return Err(Error::Start(format!(
                    "no answer to GetCallerIdentity within {timeout:?}; stderr: {}",
                    self.stderr()
                )));
            }
            thread::sleep(Duration::from_millis(5));
        }
    }
}

impl Drop for Roto {
    fn drop(&mut self) {
        let _ = self.kill();
    }
}

/// The binary to run: `$ROTO_BINARY`, else the newest `release/roto-server` or
/// `debug/roto-server` in the target directory above the running executable (where
/// `cargo test` puts test binaries), else `roto-server` on `PATH`.
pub fn binary() -> Result<PathBuf> {
    if let Some(path) = std::env::var_os("ROTO_BINARY") {
        let path = PathBuf::from(path);
        return if path.is_file() {
            Ok(path)
        } else {
            Err(Error::NoBinary(format!(
                "ROTO_BINARY={} does not exist",
                path.display()
            )))
        };
    }
    let exe = std::env::current_exe().unwrap_or_default();
    for dir in exe.ancestors().skip(1) {
        let newest = ["release", "debug"]
            .iter()
            .map(|profile| dir.join(profile).join(BINARY_NAME))
            .filter_map(|p| Some((p.metadata().ok()?.modified().ok()?, p)))
            .max();
        if let Some((_, path)) = newest {
            return Ok(path);
        }
    }
    let on_path = std::env::var_os("PATH").map(|paths| {
        std::env::split_paths(&paths)
            .map(|d| d.join(BINARY_NAME))
            .find(|p| p.is_file())
    });
    on_path.flatten().ok_or_else(|| {
        Error::NoBinary(format!(
            "set ROTO_BINARY, build it with `cargo build -p roto-server --release` (looked in \
             the target directories above {}), or put roto-server on PATH",
            exe.display()
        ))
    })
}

fn parse_port(line: &str) -> Option<u16> {
    let rest = line.strip_prefix(START_PREFIX)?;
    let (_, address) = rest.split_once(LISTENING)?;
    let address = address.split_whitespace().next()?;
    address.rsplit_once(':')?.1.parse().ok()
}

fn parse_response(raw: &[u8]) -> Result<(u16, Vec<u8>)> {
    let split = raw
        .windows(4)
        .position(|w| w == b"\r\n\r\n")
        .ok_or_else(|| Error::Response("no end of headers".into()))?;
    let head = String::from_utf8_lossy(&raw[..split]);
    let status = head
        .split_whitespace()
        .nth(1)
        .and_then(|s| s.parse().ok())
        .ok_or_else(|| Error::Response(format!("bad status line in {head:?}")))?;
    let chunked = head.lines().any(|l| {
        l.to_ascii_lowercase().starts_with("transfer-encoding:")
            && l.to_ascii_lowercase().contains("chunked")
    });
    let body = &raw[split + 4..];
    Ok((
        status,
        if chunked {
            dechunk(body)
        } else {
            body.to_vec()
        },
    ))
}

fn dechunk(mut body: &[u8]) -> Vec<u8> {
    let mut out = Vec::new();
    while let Some(end) = body.windows(2).position(|w| w == b"\r\n") {
        let size = std::str::from_utf8(&body[..end])
            .ok()
            .and_then(|s| usize::from_str_radix(s.split(';').next().unwrap_or("").trim(), 16).ok())
            .unwrap_or(0);
        let start = end + 2;
        if size == 0 || start + size > body.len() {
            break;
        }
        out.extend_from_slice(&body[start..start + size]);
        body = body.get(start + size + 2..).unwrap_or_default();
    }
    out
}

fn encode(text: &str) -> String {
    text.bytes()
        .map(|b| match b {
            b'A'..=b'Z' | b'a'..=b'z' | b'0'..=b'9' | b'-' | b'_' | b'.' | b'~' => {
                (b as char).to_string()
            }
            _ => format!("%{b:02X}"),
        })
        .collect()
}

/// Copies a stream into a shared buffer on a thread (joined to read everything once the
/// process has exited).
fn drain(
    stream: Option<impl Read + Send + 'static>,
) -> (Arc<Mutex<Vec<u8>>>, Option<thread::JoinHandle<()>>) {
    let buffer = Arc::new(Mutex::new(Vec::new()));
    let handle = stream.map(|mut stream| {
        let sink = buffer.clone();
        thread::spawn(move || {
            let mut chunk = [0u8; 4096];
            while let Ok(n) = stream.read(&mut chunk) {
                if n == 0 {
                    break;
                }
                sink.lock()
                    .unwrap_or_else(|p| p.into_inner())
                    .extend_from_slice(&chunk[..n]);
            }
        })
    });
    (buffer, handle)
}

fn collected(buffer: &Mutex<Vec<u8>>) -> String {
    String::from_utf8_lossy(&buffer.lock().unwrap_or_else(|p| p.into_inner())).into_owned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_port_comes_from_the_start_line() {
        let line = "roto-server 0.1.0 listening on http://127.0.0.1:40123 store=ephemeral services=s3,sqs\n";
        assert_eq!(parse_port(line), Some(40123));
        assert_eq!(parse_port("something else"), None);
    }

    #[test]
    fn responses_parse_with_and_without_chunking() {
        let plain = b"HTTP/1.1 200 OK\r\nContent-Length: 2\r\n\r\nok";
        assert_eq!(parse_response(plain).unwrap(), (200, b"ok".to_vec()));
        let chunked = b"HTTP/1.1 404 Not Found\r\nTransfer-Encoding: chunked\r\n\r\n3\r\nabc\r\n2\r\nde\r\n0\r\n\r\n";
        assert_eq!(parse_response(chunked).unwrap(), (404, b"abcde".to_vec()));
        assert!(parse_response(b"garbage").is_err());
    }

    #[test]
    fn filters_are_percent_encoded() {
        assert_eq!(encode("a b/c"), "a%20b%2Fc");
    }
}
