//! The HTTP front end: one request's path from hyper to a service and back.
//!
//! route -> pick the codec -> resolve the operation -> read the body (or hand its stream to
//! an operation with a streaming payload) -> decode -> dispatcher -> encode -> trace.
//! Every failure on the way is an AWS error in the protocol the caller speaks; nothing here
//! panics on input.

use std::sync::atomic::{AtomicBool, Ordering};
use std::sync::Arc;
use std::time::Instant;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Full, Limited};
use roto_core::dispatch::{new_request_id, Body};
use roto_core::model::{model, Model};
use roto_core::protocol::{cbor, query, Protocol, Resolved, WireRequest, WireResponse};
use roto_core::trace::TraceEntry;
use roto_core::{AwsError, Context, Dispatcher, Request, Service};

use crate::boundary::CatchPanic;
use crate::conn::{DrainOnDrop, TimedBody, Timeouts};
use crate::guard::Guard;
use crate::router::{host_of, Route, Router};
use crate::{introspect, localstack, ui};

/// A request body as the front end reads it: failing once the client stops sending.
type Incoming = DrainOnDrop<TimedBody<hyper::body::Incoming>>;

/// The largest non-streamed request body read into memory.
const MAX_BODY: usize = 64 * 1024 * 1024;

/// What every connection shares.
pub struct App {
    /// The dispatcher over every service.
    pub dispatcher: Arc<Dispatcher>,
    /// The routing table.
    pub router: Router,
    /// The browser guard.
    pub guard: Guard,
    /// The connection and body timeouts.
    pub timeouts: Timeouts,
    /// What LocalStack's endpoints report.
    pub localstack: localstack::Instance,
    /// Whether access is enforced as AWS does (`--enforce-iam`).
    pub enforce_iam: bool,
    /// Whether signatures are verified as AWS does (`--verify-signatures`).
    pub verify_signatures: bool,
}

/// The address a request's connection comes from (a request extension), which data planes
/// report as the caller's source IP.
#[derive(Debug, Clone, Copy)]
pub struct Peer(pub std::net::SocketAddr);

/// A fixed body.
pub fn full(bytes: impl Into<Bytes>) -> Body {
    Full::new(bytes.into())
        .map_err(|never| match never {})
        .boxed()
}

/// Serves one request; never fails at the HTTP level, not even when a handler panics.
pub async fn serve(
    app: Arc<App>,
    req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    match CatchPanic::new(serve_request(app, req)).await {
        Ok(response) => response,
        Err(panic) => {
            let request_id = new_request_id();
            tracing::error!(%request_id, "request failed with a panic: {panic}");
            plain_error(internal_error(), &request_id)
        }
    }
}

/// One request: the browser guard's host check, then `/_roto/*` or a service call.
async fn serve_request(
    app: Arc<App>,
    req: hyper::Request<hyper::body::Incoming>,
) -> hyper::Response<Body> {
    let (parts, body) = req.into_parts();
    let path = parts.uri.path();
    let introspection = path.starts_with("/_roto/") || localstack::serves(path);
    if let Err(error) = app.guard.check_host(&parts) {
        if introspection {
            return introspect::forbidden(error.message);
        }
        return plain_error(error, &new_request_id());
    }
    if introspection {
        return match app.guard.check_introspection(&parts) {
            Err(message) => introspect::forbidden(message),
            Ok(()) if ui::serves(path) => ui::handle(&app, &parts, body).await,
            Ok(()) if path.starts_with("/_roto/") => introspect::handle(&app, &parts).await,
            Ok(()) => localstack::handle(&app, &parts),
        };
    }
    let expired = Arc::new(AtomicBool::new(false));
    let awaits_continue = parts
        .headers
        .get(http::header::EXPECT)
        .is_some_and(|v| v.as_bytes().eq_ignore_ascii_case(b"100-continue"));
    let body = DrainOnDrop::new(
        TimedBody::new(body, app.timeouts.body, expired.clone()),
        awaits_continue,
    );
    let mut response = serve_call(&app, parts, body, &expired).await;
    if expired.load(Ordering::Relaxed) {
        response
            .headers_mut()
            .insert(http::header::CONNECTION, HeaderValue::from_static("close"));
    }
    response
}

/// Serves one call to a service: route, guard, run, answer, trace.
async fn serve_call(
    app: &App,
    parts: Parts,
    body: Incoming,
    expired: &AtomicBool,
) -> hyper::Response<Body> {
    let started = Instant::now();
    let request_id = new_request_id();
    let mut pending = Some(body);
    let mut buffered: Option<Bytes> = None;
    let routed = app.router.route(&parts);
    if let Some(preflight) = service_preflight(app, &parts, routed.as_ref()) {
        return preflight.map(|()| full(Bytes::new()));
    }
    let route = match routed {
        Some(route) => route,
        None => {
            let bytes = match read_body(&mut pending, &mut buffered).await {
                Ok(b) => b,
                Err(_) if expired.load(Ordering::Relaxed) => {
                    return plain_error(request_timeout(), &request_id)
                }
                Err(e) => return plain_error(e, &request_id),
            };
            let mut form = form_params(&parts, &bytes);
            let version = form.remove("Version");
            let key = form.remove("AWSAccessKeyId");
            match app
                .router
                .fallback(&parts, version.as_deref(), key.as_deref())
            {
                Some(route) => route,
                None => {
                    return plain_error(
                        AwsError::new("UnknownService", "No service can serve this request")
                            .with_status(400),
                        &request_id,
                    )
                }
            }
        }
    };
    let spec = route.service.spec();
    let (protocol, model) = codec(route.service.as_ref(), &parts);
    // The entry borrows the service's and the operation's names and takes the route's
    // account and region once it is done with them: tracing a request copies no string.
    let mut entry = TraceEntry::request("", "", "", "");
    entry.service = spec.name.into();
    let head = parts.method == Method::HEAD;
    let caught = CatchPanic::new(run(
        app,
        &route,
        protocol,
        model,
        &parts,
        &mut pending,
        &mut buffered,
        &request_id,
        &mut entry,
    ))
    .await;
    let outcome = caught.unwrap_or_else(|panic| {
        tracing::error!(service = spec.name, operation = %entry.operation, %request_id,
            "request failed with a panic: {panic}");
        Err(internal_error())
    });
    let mut wire = match outcome {
        Ok(wire) => wire,
        Err(mut error) => {
            if expired.load(Ordering::Relaxed) {
                error = request_timeout();
            }
            entry.error_code = Some(error.code.to_string());
            if protocol == Protocol::Json {
                fill_query_code(spec.query_model, &mut error);
            }
            let mut wire = match cbor_dialect(protocol, model, &parts) {
                Some(dialect) => cbor::encode_error(model, &error, &request_id, dialect),
                None => protocol.encode_error(model, &error, &request_id, head),
            };
            for (name, value) in error.headers() {
                wire.header(name, value);
            }
            Wire {
                response: wire,
                stream: None,
            }
        }
    };
    if spec.crc32_responses && wire.stream.is_none() {
        let crc = crc32fast::hash(&wire.response.body);
        wire.response.header("x-amz-crc32", &crc.to_string());
    }
    if spec.name != "s3" && route.raw_operation.is_none() {
        app.guard.add_cors(&parts, &mut wire.response.headers);
    }
    entry.status = Some(wire.response.status.as_u16());
    entry.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
    entry.account = route.account;
    entry.region = route.region;
    app.dispatcher.env.trace.record(entry);
    into_hyper(wire, head)
}

/// The guard's answer to a CORS preflight for a service other than S3: one routed to such
/// a service, or to `/`, which names no bucket. S3's buckets and function URLs answer
/// their own.
fn service_preflight(
    app: &App,
    parts: &Parts,
    route: Option<&Route>,
) -> Option<hyper::Response<()>> {
    let names_bucket = parts.uri.path() != "/";
    let own_cors = match route {
        Some(route) if route.raw_operation.is_some() => true,
        Some(route) if route.service.spec().name == "s3" => {
            names_bucket || route.virtual_bucket.is_some()
        }
        Some(_) => false,
        None => names_bucket,
    };
    if own_cors {
        return None;
    }
    app.guard.preflight(parts)
}

/// What a request whose handler panicked answers: a fault of the server's, not the caller's.
fn internal_error() -> AwsError {
    let mut error = AwsError::new(
        "InternalError",
        "We encountered an internal error. Please try again.",
    )
    .with_status(500);
    error.sender_fault = false;
    error
}

/// What a request whose body stopped arriving answers (S3's words for it).
fn request_timeout() -> AwsError {
    AwsError::new(
        "RequestTimeout",
        "Your socket connection to the server was not read from or written to within the \
         timeout period. Idle connections will be closed.",
    )
    .with_status(400)
}

/// The most a compressed query or JSON request body may inflate to.
const MAX_INFLATED: usize = 16 * 1024 * 1024;

/// The body of a query or JSON request as the codec reads it: inflated when the SDK
/// compressed it (`Content-Encoding: gzip`, as boto3 does for CloudWatch's PutMetricData
/// bodies over 10 KB).
fn inflate_request(parts: &Parts, body: Bytes) -> Result<Bytes, AwsError> {
    let gzipped = parts
        .headers
        .get(http::header::CONTENT_ENCODING)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|v| v.trim().eq_ignore_ascii_case("gzip"));
    if !gzipped {
        return Ok(body);
    }
    roto_services::gzip::decompress_within(&body, MAX_INFLATED)
        .map(Bytes::from)
        .map_err(|e| AwsError::new("SerializationException", format!("The request body {e}.")))
}

/// An encoded response and, for streaming payloads, the stream that replaces its body.
struct Wire {
    response: WireResponse,
    stream: Option<Body>,
}

/// The codec and model for a request: the service's own, or its query model when a
/// JSON-protocol service (SQS) receives a form-encoded query call.
fn codec(service: &dyn Service, parts: &Parts) -> (Protocol, &'static Model) {
    let spec = service.spec();
    let main = spec.model();
    let protocol = Protocol::of(main);
    let is_form = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("application/x-www-form-urlencoded"));
    let has_action = parts.uri.query().is_some_and(|q| q.contains("Action="));
    match spec.query_model {
        Some(qm)
            if protocol == Protocol::Json
                && !parts.headers.contains_key("x-amz-target")
                && (is_form || has_action) =>
        {
            (Protocol::Query, model(qm))
        }
        _ => (protocol, main),
    }
}

/// The CBOR protocol a json-protocol request speaks, to be answered in: smithy's
/// rpc-v2-cbor (`smithy-protocol: rpc-v2-cbor`) where the service's model lists it, or CBOR
/// bodies on the json protocol's routing (`application/x-amz-cbor-1.1`, what the Java SDK
/// and the Kinesis Client Library send).
fn cbor_dialect(protocol: Protocol, model: &Model, parts: &Parts) -> Option<cbor::Dialect> {
    if protocol != Protocol::Json {
        return None;
    }
    let (name, value) = cbor::RPC_V2_HEADER;
    let rpc_v2 = parts.headers.get(name).is_some_and(|v| v == value)
        && model
            .metadata
            .protocols
            .iter()
            .any(|p| p == "smithy-rpc-v2-cbor");
    if rpc_v2 {
        return Some(cbor::Dialect::Seconds);
    }
    let content_type = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok());
    cbor::is_cbor(content_type).then_some(cbor::Dialect::Millis)
}

/// Gives JSON errors of a query-compatible service their query code from its query model,
/// else their own code: such services (SQS) send `x-amzn-query-error` with every error.
fn fill_query_code(query_model: Option<&'static str>, error: &mut AwsError) {
    let Some(qm) = query_model else { return };
    if error.query_code.is_some() {
        return;
    }
    let code = model(qm)
        .error_shape(&error.code)
        .and_then(|s| s.error.as_ref())
        .and_then(|e| e.code);
    error.query_code = Some(code.map_or_else(|| error.code.clone(), Into::into));
}

#[allow(clippy::too_many_arguments)]
async fn run(
    app: &App,
    route: &Route,
    protocol: Protocol,
    model: &'static Model,
    parts: &Parts,
    pending: &mut Option<Incoming>,
    buffered: &mut Option<Bytes>,
    request_id: &str,
    entry: &mut TraceEntry,
) -> Result<Wire, AwsError> {
    let raw = route
        .raw_operation
        .or_else(|| raw_operation(protocol, parts));
    let data_plane = route.raw_operation.is_some_and(|op| {
        crate::router::DATA_PLANES
            .iter()
            .any(|plane| plane.operation == op)
    });
    app.guard
        .check_call(
            parts,
            route.service.spec().name,
            raw == Some("PostObject"),
            data_plane,
        )
        .map_err(|mut e| {
            if matches!(protocol, Protocol::Json | Protocol::RestJson) {
                e.code = "AccessDeniedException".into();
            }
            e
        })?;
    crate::presign::check_now(parts)?;
    let path = match &route.virtual_bucket {
        Some(bucket) => format!("/{bucket}{}", parts.uri.path()),
        None => parts.uri.path().to_string(),
    };
    let query = parts.uri.query().unwrap_or_default();
    let empty = Bytes::new();
    let probe = WireRequest {
        method: &parts.method,
        path: &path,
        query,
        headers: &parts.headers,
        body: &empty,
    };
    if let Some(operation) = raw {
        entry.operation = operation.into();
        let body = read_body(pending, buffered).await?;
        let input = roto_core::Value::map()
            .with("Method", parts.method.as_str())
            .with("Path", path.as_str())
            .with("Query", query)
            .with("Body", roto_core::Value::Blob(body.to_vec()))
            .with_opt(
                "SourceIp",
                parts.extensions.get::<Peer>().map(|p| p.0.ip().to_string()),
            );
        let request = Request {
            input,
            body: None,
            headers: parts.headers.clone(),
        };
        let ctx = context(route, parts, request_id);
        let response = app
            .dispatcher
            .invoke(route.service.as_ref(), &ctx, operation, request)
            .await?;
        let mut wire = WireResponse::new(response.status.unwrap_or(200), "", Bytes::new());
        wire.header("x-amz-request-id", request_id);
        for (name, value) in &response.headers {
            wire.header(name, value);
        }
        return Ok(Wire {
            response: wire,
            stream: response.body,
        });
    }
    let is_rest = matches!(protocol, Protocol::RestXml | Protocol::RestJson);
    let mut stream = None;
    // A REST operation is resolved from the method, path, query and headers alone, once,
    // before its body is read: whether its input streams decides how the body is read.
    let (body, rest_resolved) = if is_rest {
        let resolved = protocol.resolve(model, &probe)?;
        let body = if streams_input(model, resolved.operation) {
            stream = match pending.take() {
                Some(body) => Some(body.boxed()),
                None => buffered.clone().map(full),
            };
            empty.clone()
        } else {
            read_body(pending, buffered).await?
        };
        (body, Some(resolved))
    } else {
        let body = inflate_request(parts, read_body(pending, buffered).await?)?;
        (body, None)
    };
    let wire_req = WireRequest {
        body: &body,
        ..probe
    };
    let dialect = cbor_dialect(protocol, model, parts);
    let resolved = match (dialect, rest_resolved) {
        (Some(cbor::Dialect::Seconds), _) => Resolved {
            operation: cbor::rpc_v2_operation(model, parts.uri.path())?,
            labels: Vec::new(),
        },
        (_, Some(resolved)) => resolved,
        (_, None) => protocol.resolve(model, &wire_req)?,
    };
    let op = resolved.operation;
    entry.operation = op.name.into();
    if app.verify_signatures {
        let signed = crate::signature::Signed {
            parts,
            route,
            protocol,
            operation: op.name,
            body: stream.is_none().then_some(&body[..]),
        };
        if let Some(proof) = crate::signature::verify(&app.dispatcher, &signed)? {
            stream = stream.map(|body| proof.check(body));
        }
    }
    let input = match dialect {
        Some(dialect) => cbor::decode(model, op, &body, dialect)?,
        None => protocol.decode(model, &resolved, &wire_req)?,
    };
    let ctx = context(route, parts, request_id);
    if app.enforce_iam {
        let call = crate::access::Call {
            service: route.service.as_ref(),
            parts,
            ctx: &ctx,
            protocol,
            operation: op.name,
            input: &input,
        };
        crate::access::check(&app.dispatcher, call, entry)?;
    }
    let request = Request {
        input,
        body: stream,
        headers: parts.headers.clone(),
    };
    let response = app
        .dispatcher
        .invoke(route.service.as_ref(), &ctx, op.name, request)
        .await?;
    let mut encoded = match dialect {
        Some(dialect) => cbor::encode(model, op, &response.output, request_id, dialect),
        None => protocol.encode(model, op, &response.output, request_id),
    };
    if let Some(status) = response.status.and_then(|s| StatusCode::from_u16(s).ok()) {
        encoded.status = status;
    }
    for (name, value) in &response.headers {
        if name.eq_ignore_ascii_case("content-type") {
            encoded.headers.remove(http::header::CONTENT_TYPE);
        }
        encoded.header(name, value);
    }
    Ok(Wire {
        response: encoded,
        stream: response.body,
    })
}

/// The caller's context for a routed request.
fn context(route: &Route, parts: &Parts, request_id: &str) -> Context {
    Context {
        account: route.account.clone(),
        region: route.region.clone(),
        access_key: route.access_key.clone(),
        request_id: request_id.to_string(),
        host: host_of(parts),
    }
}

/// The requests a rest-xml model has no operation for but S3 serves (besides those the
/// router already named, such as function URLs): a CORS preflight
/// (`OPTIONS`) and a browser form upload (`POST` of `multipart/form-data` to a bucket).
/// The service receives them as `PreflightRequest` and `PostObject`, with the path and
/// the raw body as input, and answers with status, headers and body of its own.
fn raw_operation(protocol: Protocol, parts: &Parts) -> Option<&'static str> {
    if protocol != Protocol::RestXml {
        return None;
    }
    let form = parts
        .headers
        .get(http::header::CONTENT_TYPE)
        .and_then(|v| v.to_str().ok())
        .is_some_and(|ct| ct.starts_with("multipart/form-data"));
    match parts.method {
        Method::OPTIONS => Some("PreflightRequest"),
        Method::POST if form && parts.uri.query().is_none_or(str::is_empty) => Some("PostObject"),
        _ => None,
    }
}

/// Whether an operation's input payload is a streaming blob (S3 `PutObject`'s `Body`).
fn streams_input(model: &Model, op: &roto_core::model::Operation) -> bool {
    op.input.as_ref().is_some_and(|input| {
        let shape = model.resolve(input);
        shape
            .payload
            .as_ref()
            .and_then(|p| shape.members.get(p))
            .is_some_and(|m| m.streaming || model.resolve(m).streaming)
    })
}

/// Reads the body once (later calls return the same bytes).
async fn read_body(
    pending: &mut Option<Incoming>,
    buffered: &mut Option<Bytes>,
) -> Result<Bytes, AwsError> {
    if let Some(b) = buffered {
        return Ok(b.clone());
    }
    let bytes = match pending.take() {
        Some(body) => match Limited::new(body, MAX_BODY).collect().await {
            Ok(collected) => collected.to_bytes(),
            Err(e) if e.is::<http_body_util::LengthLimitError>() => {
                return Err(AwsError::new(
                    "RequestEntityTooLarge",
                    format!("Request body exceeds the {MAX_BODY}-byte limit"),
                )
                .with_status(413))
            }
            Err(e) => {
                return Err(AwsError::new(
                    "IncompleteBody",
                    format!("Could not read the request body: {e}"),
                )
                .with_status(400))
            }
        },
        None => Bytes::new(),
    };
    *buffered = Some(bytes.clone());
    Ok(bytes)
}

/// The query protocol's parameters in a form body (its `Version`, a SigV2 signer's
/// `AWSAccessKeyId`).
fn form_params(parts: &Parts, body: &[u8]) -> std::collections::BTreeMap<String, String> {
    let req = WireRequest {
        method: &parts.method,
        path: parts.uri.path(),
        query: parts.uri.query().unwrap_or_default(),
        headers: &parts.headers,
        body,
    };
    query::params(&req)
}

fn plain_error(error: AwsError, request_id: &str) -> hyper::Response<Body> {
    let wire = Protocol::Query.encode_error(model("sts"), &error, request_id, false);
    into_hyper(
        Wire {
            response: wire,
            stream: None,
        },
        false,
    )
}

fn into_hyper(wire: Wire, head: bool) -> hyper::Response<Body> {
    let Wire { response, stream } = wire;
    let body = match (head || response.status == StatusCode::NOT_MODIFIED, stream) {
        (true, _) => full(Bytes::new()),
        (false, Some(stream)) => stream,
        (false, None) => full(response.body),
    };
    let mut out = hyper::Response::new(body);
    *out.status_mut() = response.status;
    *out.headers_mut() = response.headers;
    if !out.headers().contains_key(http::header::SERVER) {
        out.headers_mut()
            .insert(http::header::SERVER, HeaderValue::from_static("Roto"));
    }
    if out.status() == StatusCode::NO_CONTENT {
        out.headers_mut().remove(http::header::CONTENT_LENGTH);
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;
    use roto_core::dispatch::{BoxFuture, ServiceSpec};
    use roto_core::trace::TraceFilter;
    use roto_core::{AwsResult, Response};
    use tokio::io::{AsyncReadExt, AsyncWriteExt};

    /// STS's facts, with a handler that panics on every call.
    struct Panicking(&'static ServiceSpec);

    impl Service for Panicking {
        fn spec(&self) -> &'static ServiceSpec {
            self.0
        }

        fn call<'a>(
            &'a self,
            _: &'a Context,
            operation: &'a str,
            _: Request,
        ) -> BoxFuture<'a, AwsResult<Response>> {
            Box::pin(async move { panic!("a bug in {operation}") })
        }
    }

    fn app() -> Arc<App> {
        let env = crate::router::tests::env();
        let sts = roto_services::all(&env)
            .unwrap()
            .into_iter()
            .find(|s| s.spec().name == "sts")
            .unwrap();
        let services: Vec<Arc<dyn Service>> = vec![Arc::new(Panicking(sts.spec()))];
        Arc::new(App {
            dispatcher: Dispatcher::start(env, services.clone()),
            router: Router::new(
                services,
                "000000000000".into(),
                "us-east-1".into(),
                "localhost".into(),
            ),
            guard: Guard::new("127.0.0.1", "localhost", &[], &[]),
            timeouts: Timeouts {
                header: std::time::Duration::from_secs(5),
                body: std::time::Duration::from_secs(5),
                idle: std::time::Duration::from_secs(5),
            },
            localstack: localstack::Instance::new(Arc::default()),
            enforce_iam: false,
            verify_signatures: false,
        })
    }

    const CALL: &str = "Action=GetCallerIdentity&Version=2011-06-15";

    #[tokio::test]
    async fn a_panicking_handler_costs_its_request_and_the_connection_goes_on() {
        let app = app();
        let (mut client, server) = tokio::io::duplex(64 * 1024);
        let served = app.clone();
        let service = hyper::service::service_fn(move |req| {
            let app = served.clone();
            async move { Ok::<_, std::convert::Infallible>(serve(app, req).await) }
        });
        let conn = hyper::server::conn::http1::Builder::new()
            .serve_connection(hyper_util::rt::TokioIo::new(server), service);
        tokio::spawn(conn);
        for _ in 0..2 {
            let request = format!(
                "POST / HTTP/1.1\r\nHost: localhost\r\nContent-Type: \
                 application/x-www-form-urlencoded\r\nContent-Length: {}\r\n\r\n{CALL}",
                CALL.len()
            );
            client.write_all(request.as_bytes()).await.unwrap();
            let mut answer = Vec::new();
            while !answer.ends_with(b"</ErrorResponse>") {
                let mut chunk = [0u8; 4096];
                let n = client.read(&mut chunk).await.unwrap();
                assert!(
                    n > 0,
                    "connection closed: {}",
                    String::from_utf8_lossy(&answer)
                );
                answer.extend_from_slice(&chunk[..n]);
            }
            let text = String::from_utf8_lossy(&answer);
            assert!(text.starts_with("HTTP/1.1 500"), "{text}");
            assert!(text.contains("<Code>InternalError</Code>"), "{text}");
            assert!(text.contains("<Type>Receiver</Type>"), "{text}");
            assert!(text.contains("<RequestId>"), "{text}");
        }
        let traced = app.dispatcher.env.trace.query(&TraceFilter::default());
        assert_eq!(traced.len(), 2);
        assert_eq!(traced[0].operation, "GetCallerIdentity");
        assert_eq!(traced[0].error_code.as_deref(), Some("InternalError"));
        assert_eq!(traced[0].status, Some(500));
    }
}
