//! A small Docker Engine API client over the engine's unix socket, for the docker executor.
//!
//! Only what running a Lambda image needs: inspect and pull an image, where the engine runs
//! and the bridge network's gateway, list/create/attach/start/wait/remove containers, and a
//! container's pid. Each call opens its own connection (hyper's HTTP/1 client over a
//! `UnixStream`): calls happen when instances start and stop, never per invocation, so
//! pooling would buy nothing. Requests name API version
//! 1.41 (Docker 20.10, the first with `host-gateway`), which every later engine accepts.

use std::path::{Path, PathBuf};

use bytes::Bytes;
use http::{Method, StatusCode};
use http_body_util::{BodyExt, Full};
use hyper::body::Incoming;
use hyper_util::rt::TokioIo;
use percent_encoding::{utf8_percent_encode, AsciiSet, NON_ALPHANUMERIC};
use serde_json::Value as Json;

/// The API version requests name.
const API_VERSION: &str = "v1.41";
/// What a query value keeps unencoded (RFC 3986's unreserved characters).
const QUERY_VALUE: &AsciiSet = &NON_ALPHANUMERIC
    .remove(b'-')
    .remove(b'.')
    .remove(b'_')
    .remove(b'~');
/// The engine's socket when `DOCKER_HOST` names none.
const DEFAULT_SOCKET: &str = "/var/run/docker.sock";

/// Where the engine is, from `DOCKER_HOST` (`unix:///path`), else the default socket; an
/// engine on another transport (`tcp://`, `ssh://`) is an error naming it.
pub fn socket_from(docker_host: Option<&str>) -> Result<PathBuf, String> {
    match docker_host.filter(|h| !h.is_empty()) {
        None => Ok(PathBuf::from(DEFAULT_SOCKET)),
        Some(host) => host.strip_prefix("unix://").map(PathBuf::from).ok_or_else(|| {
            format!("DOCKER_HOST={host} is not a unix socket, and Roto reaches the Docker engine over a unix socket only")
        }),
    }
}

/// Whether something listens on the socket (a quick, blocking check for start-up).
pub fn listening(socket: &Path) -> Result<(), String> {
    std::os::unix::net::UnixStream::connect(socket)
        .map(drop)
        .map_err(|e| {
            format!(
                "no Docker engine answers at unix://{} ({e})",
                socket.display()
            )
        })
}

/// `?a=b&c=d` with each value percent-encoded.
pub fn query(pairs: &[(&str, &str)]) -> String {
    let parts: Vec<String> = pairs
        .iter()
        .map(|(k, v)| format!("{k}={}", utf8_percent_encode(v, QUERY_VALUE)))
        .collect();
    format!("?{}", parts.join("&"))
}

/// An image reference split into repository and tag (`public.ecr.aws/lambda/python`, `3.12`).
pub fn split_image(image: &str) -> (&str, &str) {
    match image.rsplit_once(':') {
        Some((repo, tag)) if !tag.contains('/') => (repo, tag),
        _ => (image, "latest"),
    }
}

/// The engine at a unix socket.
#[derive(Debug, Clone)]
pub struct Engine {
    socket: PathBuf,
}

impl Engine {
    /// The engine listening on `socket`.
    pub fn new(socket: PathBuf) -> Engine {
        Engine { socket }
    }

    /// Where the engine listens, as `DOCKER_HOST` would name it.
    pub fn address(&self) -> String {
        format!("unix://{}", self.socket.display())
    }

    /// Sends one request and returns the response with its body unread.
    async fn send(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<hyper::Response<Incoming>, String> {
        let stream = tokio::net::UnixStream::connect(&self.socket)
            .await
            .map_err(|e| format!("no Docker engine answers at {} ({e})", self.address()))?;
        let (mut sender, connection) = hyper::client::conn::http1::handshake(TokioIo::new(stream))
            .await
            .map_err(|e| format!("the Docker engine at {}: {e}", self.address()))?;
        tokio::spawn(async move {
            let _ = connection.await;
        });
        let bytes = body.map_or_else(Bytes::new, |b| Bytes::from(b.to_string()));
        let request = hyper::Request::builder()
            .method(method)
            .uri(format!("/{API_VERSION}{path}"))
            .header(http::header::HOST, "docker")
            .header(http::header::CONTENT_TYPE, "application/json")
            .body(Full::new(bytes))
            .map_err(|e| e.to_string())?;
        sender
            .send_request(request)
            .await
            .map_err(|e| format!("the Docker engine at {}: {e}", self.address()))
    }

    /// Sends one request and reads its whole answer; an error status is an error carrying
    /// the engine's message.
    async fn call(
        &self,
        method: Method,
        path: &str,
        body: Option<&Json>,
    ) -> Result<(StatusCode, Vec<u8>), String> {
        let response = self.send(method, path, body).await?;
        let status = response.status();
        let bytes = response
            .into_body()
            .collect()
            .await
            .map_err(|e| format!("the Docker engine at {}: {e}", self.address()))?
            .to_bytes()
            .to_vec();
        if status.is_client_error() || status.is_server_error() {
            return Err(engine_message(status, &bytes));
        }
        Ok((status, bytes))
    }

    /// Whether the engine has `image` (no registry is contacted).
    pub async fn has_image(&self, image: &str) -> Result<bool, String> {
        match self
            .call(Method::GET, &format!("/images/{image}/json"), None)
            .await
        {
            Ok(_) => Ok(true),
            Err(e) if e.starts_with("404") => Ok(false),
            Err(e) => Err(e),
        }
    }

    /// Pulls `image` for `platform` from its registry.
    pub async fn pull(&self, image: &str, platform: &str) -> Result<(), String> {
        let (repo, tag) = split_image(image);
        let path = format!(
            "/images/create{}",
            query(&[("fromImage", repo), ("tag", tag), ("platform", platform)])
        );
        let (_, body) = self.call(Method::POST, &path, None).await?;
        pull_error(&body).map_or(Ok(()), Err)
    }

    /// Whether the engine runs on this host, in its network namespace: not in a VM (Docker
    /// Desktop, whose engine names itself `docker-desktop`), not rootless (whose containers'
    /// host network is its own namespace). Only then do containers on the host network
    /// share this host's loopback.
    pub async fn shares_loopback(&self, hostname: &str) -> bool {
        let Ok((_, body)) = self.call(Method::GET, "/info", None).await else {
            return false;
        };
        let info: Json = serde_json::from_slice(&body).unwrap_or_default();
        let rootless = info["SecurityOptions"].as_array().is_some_and(|o| {
            o.iter()
                .any(|o| o.as_str().is_some_and(|o| o.contains("rootless")))
        });
        let desktop = info["OperatingSystem"]
            .as_str()
            .is_some_and(|os| os.contains("Docker Desktop"));
        info["Name"].as_str() == Some(hostname) && !rootless && !desktop
    }

    /// The ids and labels of the containers, running or not, that carry `label`.
    pub async fn labelled(&self, label: &str) -> Result<Vec<(String, Json)>, String> {
        let filters = serde_json::json!({ "label": [label] }).to_string();
        let path = format!(
            "/containers/json{}",
            query(&[("all", "true"), ("filters", &filters)])
        );
        let (_, body) = self.call(Method::GET, &path, None).await?;
        let list: Vec<Json> = serde_json::from_slice(&body).unwrap_or_default();
        Ok(list
            .into_iter()
            .filter_map(|c| Some((c["Id"].as_str()?.to_string(), c["Labels"].clone())))
            .collect())
    }

    /// The gateway address of the default bridge network, where `host-gateway` leads.
    pub async fn bridge_gateway(&self) -> Option<std::net::IpAddr> {
        let (_, body) = self
            .call(Method::GET, "/networks/bridge", None)
            .await
            .ok()?;
        let doc: Json = serde_json::from_slice(&body).ok()?;
        doc["IPAM"]["Config"]
            .as_array()?
            .iter()
            .find_map(|c| c["Gateway"].as_str()?.parse().ok())
    }

    /// Creates a container and returns its id.
    pub async fn create(&self, name: &str, config: &Json) -> Result<String, String> {
        let path = format!("/containers/create{}", query(&[("name", name)]));
        let (_, body) = self.call(Method::POST, &path, Some(config)).await?;
        let doc: Json = serde_json::from_slice(&body).unwrap_or_default();
        doc["Id"]
            .as_str()
            .map(str::to_string)
            .ok_or_else(|| "the Docker engine created a container without an id".to_string())
    }

    /// Attaches to a container's stdout and stderr: the body is the engine's multiplexed
    /// stream (see [`Demux`]) until the container stops.
    pub async fn attach(&self, id: &str) -> Result<Incoming, String> {
        let path = format!(
            "/containers/{id}/attach{}",
            query(&[("stream", "1"), ("stdout", "1"), ("stderr", "1")])
        );
        let response = self.send(Method::POST, &path, None).await?;
        if !response.status().is_success() {
            let status = response.status();
            let body = response
                .into_body()
                .collect()
                .await
                .map_err(|e| e.to_string())?;
            return Err(engine_message(status, &body.to_bytes()));
        }
        Ok(response.into_body())
    }

    /// Starts a created container.
    pub async fn start(&self, id: &str) -> Result<(), String> {
        self.call(Method::POST, &format!("/containers/{id}/start"), None)
            .await
            .map(drop)
    }

    /// Waits for a container to stop and returns its exit code.
    pub async fn wait(&self, id: &str) -> Result<i64, String> {
        let (_, body) = self
            .call(Method::POST, &format!("/containers/{id}/wait"), None)
            .await?;
        let doc: Json = serde_json::from_slice(&body).unwrap_or_default();
        doc["StatusCode"]
            .as_i64()
            .ok_or_else(|| "the Docker engine did not say how the container ended".to_string())
    }

    /// The pid of a running container's process, as the engine's PID namespace counts it.
    pub async fn pid(&self, id: &str) -> Result<u32, String> {
        let (_, body) = self
            .call(Method::GET, &format!("/containers/{id}/json"), None)
            .await?;
        let doc: Json = serde_json::from_slice(&body).unwrap_or_default();
        doc["State"]["Pid"]
            .as_u64()
            .and_then(|pid| u32::try_from(pid).ok())
            .filter(|pid| *pid > 0)
            .ok_or_else(|| "the Docker engine did not say the container's pid".to_string())
    }

    /// Kills and removes a container (one already being removed, or gone, is fine).
    pub async fn remove(&self, id: &str) -> Result<(), String> {
        let path = format!(
            "/containers/{id}{}",
            query(&[("force", "true"), ("v", "true")])
        );
        match self.call(Method::DELETE, &path, None).await {
            Err(e) if e.starts_with("404") || e.contains("already in progress") => Ok(()),
            other => other.map(drop),
        }
    }
}

/// `"<status>: <the engine's message>"` for an error answer.
fn engine_message(status: StatusCode, body: &[u8]) -> String {
    let doc: Json = serde_json::from_slice(body).unwrap_or_default();
    let message = doc["message"].as_str().map_or_else(
        || String::from_utf8_lossy(body).trim().to_string(),
        str::to_string,
    );
    format!(
        "{} {}: {message}",
        status.as_u16(),
        status.canonical_reason().unwrap_or("")
    )
}

/// The error a pull's progress stream ends with, if it failed.
fn pull_error(body: &[u8]) -> Option<String> {
    body.split(|b| *b == b'\n')
        .filter_map(|line| serde_json::from_slice::<Json>(line).ok())
        .find_map(|doc| doc["error"].as_str().map(str::to_string))
}

/// Splits the engine's multiplexed attach stream (an 8-byte header per frame: the stream,
/// 1 for stdout or 2 for stderr, three zero bytes, the big-endian length) into lines per
/// stream, whatever the frame boundaries.
#[derive(Default)]
pub struct Demux {
    pending: Vec<u8>,
    partial: [Vec<u8>; 2],
}

impl Demux {
    /// Feeds bytes from the stream; returns the lines (without their newline) they complete.
    pub fn feed(&mut self, bytes: &[u8]) -> Vec<String> {
        self.pending.extend_from_slice(bytes);
        let mut lines = Vec::new();
        while let Some(header) = self.pending.get(..8) {
            let stream = usize::from(header[0] == 2);
            let len = u32::from_be_bytes([header[4], header[5], header[6], header[7]]) as usize;
            if self.pending.len() < 8 + len {
                break;
            }
            let frame: Vec<u8> = self.pending.drain(..8 + len).skip(8).collect();
            let partial = &mut self.partial[stream];
            partial.extend_from_slice(&frame);
            while let Some(at) = partial.iter().position(|b| *b == b'\n') {
                let line: Vec<u8> = partial.drain(..=at).collect();
                let text = String::from_utf8_lossy(&line[..at]);
                lines.push(text.trim_end_matches('\r').to_string());
            }
        }
        lines
    }

    /// The unterminated lines left when the stream ends.
    pub fn finish(&mut self) -> Vec<String> {
        self.partial
            .iter_mut()
            .filter(|p| !p.is_empty())
            .map(|p| String::from_utf8_lossy(&std::mem::take(p)).into_owned())
            .collect()
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn frame(stream: u8, text: &str) -> Vec<u8> {
        let mut f = vec![stream, 0, 0, 0];
        f.extend_from_slice(&(text.len() as u32).to_be_bytes());
        f.extend_from_slice(text.as_bytes());
        f
    }

    #[test]
    fn docker_host_names_a_unix_socket_or_the_default() {
        assert_eq!(
            socket_from(None).unwrap(),
            PathBuf::from("/var/run/docker.sock")
        );
        assert_eq!(
            socket_from(Some("")).unwrap(),
            PathBuf::from("/var/run/docker.sock")
        );
        assert_eq!(
            socket_from(Some("unix:///run/user/1000/docker.sock")).unwrap(),
            PathBuf::from("/run/user/1000/docker.sock")
        );
        let err = socket_from(Some("tcp://10.0.0.1:2375")).unwrap_err();
        assert!(err.contains("tcp://10.0.0.1:2375") && err.contains("unix socket"));
    }

    #[test]
    fn images_split_into_repository_and_tag() {
        assert_eq!(
            split_image("public.ecr.aws/lambda/python:3.12"),
            ("public.ecr.aws/lambda/python", "3.12")
        );
        assert_eq!(
            split_image("localhost:5000/img"),
            ("localhost:5000/img", "latest")
        );
        assert_eq!(
            query(&[("fromImage", "a/b"), ("tag", "3.12")]),
            "?fromImage=a%2Fb&tag=3.12"
        );
    }

    #[test]
    fn demux_reassembles_lines_across_frames_and_streams() {
        let mut demux = Demux::default();
        let mut stream = frame(1, "hello wo");
        stream.extend(frame(2, "err line\n"));
        stream.extend(frame(1, "rld\nsecond\r\nthi"));
        let (first, rest) = stream.split_at(5);
        assert!(demux.feed(first).is_empty());
        assert_eq!(demux.feed(rest), ["err line", "hello world", "second"]);
        assert_eq!(demux.finish(), ["thi"]);
    }

    #[test]
    fn engine_errors_carry_the_engine_message() {
        let body = br#"{"message":"No such image: x"}"#;
        assert_eq!(
            engine_message(StatusCode::NOT_FOUND, body),
            "404 Not Found: No such image: x"
        );
        assert_eq!(
            pull_error(b"{\"status\":\"Pulling\"}\n{\"error\":\"denied\"}\n").as_deref(),
            Some("denied")
        );
        assert_eq!(pull_error(b"{\"status\":\"Done\"}\n"), None);
    }
}
