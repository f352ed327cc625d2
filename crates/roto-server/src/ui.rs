//! `/_roto/ui`: the web console, a page that shows what a running server holds and the
//! live trace, for people rather than tests.
//!
//! The page, its script and its style are compiled into the binary (`include_str!`): no
//! CDN, nothing fetched at run time, and nothing allocated until a browser asks. It reads
//! through the dispatcher like any client, with three JSON endpoints:
//! - `GET /_roto/ui/api/scopes`: the default account and region, the account/region pairs
//!   the trace has seen, and each service's listings (its `List*`/`Describe*` operations
//!   that need no input), so a service the page has no panel for is still shown.
//! - `POST /_roto/ui/api/call` `{service, operation, account, region, input}`: one read
//!   operation ([`reads`]); anything that could change state is refused with 403. These
//!   calls are not traced, so opening the console leaves the trace as it was.
//! - `POST /_roto/ui/api/peek` `{service, account, region, input}`: what a service shows
//!   of a resource without changing it (an SQS queue's messages, not received).
//!
//! The live trace is `/_roto/traces` itself. Everything here sits behind the browser guard
//! like the rest of `/_roto/*`, and every answer forbids framing.

use std::collections::BTreeSet;
use std::time::Duration;

use bytes::Bytes;
use http::request::Parts;
use http::{HeaderValue, Method, StatusCode};
use http_body_util::{BodyExt, Limited};
use roto_core::dispatch::Body;
use roto_core::protocol::json::value_to_json;
use roto_core::trace::TraceFilter;
use roto_core::value::Value;
use roto_core::{AwsError, Context, Dispatcher, Request};
use serde_json::json;

use crate::http::{full, App};
use crate::introspect::respond;
use crate::router::host_of;

/// The largest request body the console's endpoints read.
const MAX_BODY: usize = 64 * 1024;

/// The longest the console's endpoints wait for a request body.
const BODY_TIMEOUT: Duration = Duration::from_secs(10);

/// The page.
const INDEX_HTML: &str = include_str!("ui/index.html");
/// Its script.
const APP_JS: &str = include_str!("ui/app.js");
/// Its style.
const APP_CSS: &str = include_str!("ui/app.css");
/// Its icon (without which browsers ask for `/favicon.ico`, an S3 call).
const FAVICON: &str = include_str!("ui/favicon.svg");

/// Operations outside the `List*`/`Describe*` families that read and change nothing.
const OTHER_READS: &[&str] = &[
    "Scan",
    "Query",
    "FilterLogEvents",
    "GetLogEvents",
    "GetQueueAttributes",
    "GetRestApis",
    "GetApis",
];

/// Whether the console may call `operation`: reads that change nothing and return no
/// secret values.
pub fn reads(operation: &str) -> bool {
    operation.starts_with("List")
        || operation.starts_with("Describe")
        || OTHER_READS.contains(&operation)
}

/// Whether `path` is the console's.
pub fn serves(path: &str) -> bool {
    path == "/_roto/ui" || path.starts_with("/_roto/ui/")
}

/// Serves one `/_roto/ui` request (the guard has already let it in).
pub async fn handle(
    app: &App,
    parts: &Parts,
    body: hyper::body::Incoming,
) -> hyper::Response<Body> {
    match (&parts.method, parts.uri.path()) {
        (&Method::GET, "/_roto/ui" | "/_roto/ui/") => asset(INDEX_HTML, "text/html"),
        (&Method::GET, "/_roto/ui/app.js") => asset(APP_JS, "text/javascript"),
        (&Method::GET, "/_roto/ui/app.css") => asset(APP_CSS, "text/css"),
        (&Method::GET, "/_roto/ui/favicon.svg") => asset(FAVICON, "image/svg+xml"),
        (&Method::GET, "/_roto/ui/api/scopes") => no_framing(respond(StatusCode::OK, scopes(app))),
        (&Method::POST, "/_roto/ui/api/call" | "/_roto/ui/api/peek") => {
            let peek = parts.uri.path().ends_with("peek");
            let answer = match read_json(body).await {
                Ok(ask) => call(&app.dispatcher, &ask, host_of(parts), peek).await,
                Err(message) => respond(StatusCode::BAD_REQUEST, json!({ "error": message })),
            };
            no_framing(answer)
        }
        (method, path) => no_framing(respond(
            StatusCode::NOT_FOUND,
            json!({ "error": format!("no such endpoint: {method} {path}") }),
        )),
    }
}

/// One of the page's files, with a policy that lets it load only itself.
fn asset(text: &'static str, content_type: &'static str) -> hyper::Response<Body> {
    let mut resp = hyper::Response::new(full(Bytes::from_static(text.as_bytes())));
    let headers = resp.headers_mut();
    headers.insert(
        http::header::CONTENT_TYPE,
        HeaderValue::from_static(content_type),
    );
    headers.insert(
        http::header::CONTENT_SECURITY_POLICY,
        HeaderValue::from_static("default-src 'self'; frame-ancestors 'none'"),
    );
    headers.insert(
        http::header::CACHE_CONTROL,
        HeaderValue::from_static("no-store"),
    );
    no_framing(resp)
}

/// Forbids other pages to frame an answer.
fn no_framing(mut resp: hyper::Response<Body>) -> hyper::Response<Body> {
    resp.headers_mut().insert(
        http::header::X_FRAME_OPTIONS,
        HeaderValue::from_static("DENY"),
    );
    resp
}

/// The default scope, the scopes the trace has seen, and each service's listings.
fn scopes(app: &App) -> serde_json::Value {
    let env = &app.dispatcher.env;
    let mut seen = BTreeSet::from([(env.default_account.clone(), env.default_region.clone())]);
    for entry in env.trace.query(&TraceFilter::default()) {
        seen.insert((entry.account, entry.region));
    }
    let scopes: Vec<_> = seen
        .into_iter()
        .map(|(account, region)| json!({ "account": account, "region": region }))
        .collect();
    let services: Vec<_> = app
        .dispatcher
        .services()
        .iter()
        .map(|s| {
            let spec = s.spec();
            json!({ "name": spec.name, "listings": listings(spec.model()) })
        })
        .collect();
    json!({
        "account": env.default_account,
        "region": env.default_region,
        "scopes": scopes,
        "services": services,
    })
}

/// A model's `List*`/`Describe*` operations that need no input, by name.
fn listings(model: &roto_core::model::Model) -> Vec<&'static str> {
    let mut names: Vec<&'static str> = model
        .operation_names()
        .filter(|name| name.starts_with("List") || name.starts_with("Describe"))
        .filter(|name| {
            let input = model.operation(name).and_then(|op| op.input.as_ref());
            input.is_none_or(|r| model.resolve(r).required.is_empty())
        })
        .collect();
    names.sort_unstable();
    names
}

/// The request body as a JSON object.
async fn read_json(body: hyper::body::Incoming) -> Result<serde_json::Value, String> {
    let collected = tokio::time::timeout(BODY_TIMEOUT, Limited::new(body, MAX_BODY).collect())
        .await
        .map_err(|_| "the request body did not arrive in time".to_string())?
        .map_err(|e| format!("the request body could not be read: {e}"))?;
    match serde_json::from_slice(&collected.to_bytes()) {
        Ok(value @ serde_json::Value::Object(_)) => Ok(value),
        _ => Err("the body must be a JSON object".into()),
    }
}

/// Runs one read (or peek) the page asked for, in the account and region it names.
async fn call(
    dispatcher: &Dispatcher,
    ask: &serde_json::Value,
    host: String,
    peek: bool,
) -> hyper::Response<Body> {
    let text = |name: &str| ask.get(name).and_then(|v| v.as_str()).unwrap_or_default();
    let (service_name, operation) = (text("service"), text("operation"));
    let Some(service) = dispatcher.service(service_name) else {
        return respond(
            StatusCode::NOT_FOUND,
            json!({ "error": format!("no service named '{service_name}'") }),
        );
    };
    if !peek && !reads(operation) {
        return respond(
            StatusCode::FORBIDDEN,
            json!({ "error": format!("the console only reads; {operation} is not a read") }),
        );
    }
    let mut ctx = dispatcher.default_context();
    ctx.host = host;
    for (name, slot) in [("account", &mut ctx.account), ("region", &mut ctx.region)] {
        if !text(name).is_empty() {
            *slot = text(name).to_string();
        }
    }
    let input = ask
        .get("input")
        .map(Value::from_json)
        .unwrap_or_else(Value::map);
    let result = if peek {
        service.peek(&ctx, &input).unwrap_or_else(|| {
            Err(AwsError::new(
                "InvalidAction",
                format!("{service_name} has nothing to peek at"),
            ))
        })
    } else {
        read(dispatcher, service.as_ref(), &ctx, operation, input).await
    };
    match result {
        Ok(output) => respond(StatusCode::OK, value_to_json(&output)),
        Err(e) => respond(
            StatusCode::BAD_REQUEST,
            json!({ "error": { "code": e.code.as_ref(), "message": e.message } }),
        ),
    }
}

/// One read operation through the dispatcher, untraced.
async fn read(
    dispatcher: &Dispatcher,
    service: &dyn roto_core::Service,
    ctx: &Context,
    operation: &str,
    input: Value,
) -> roto_core::AwsResult<Value> {
    if service.spec().model().operation(operation).is_none() {
        return Err(AwsError::new(
            "InvalidAction",
            format!("The action {operation} is not valid for this service."),
        ));
    }
    let response = dispatcher
        .invoke(service, ctx, operation, Request::new(input))
        .await?;
    Ok(response.output)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn only_reads_pass() {
        for op in [
            "ListBuckets",
            "DescribeLogGroups",
            "Scan",
            "FilterLogEvents",
        ] {
            assert!(reads(op), "{op}");
        }
        for op in [
            "DeleteBucket",
            "ReceiveMessage",
            "GetSecretValue",
            "PutItem",
            "Invoke",
        ] {
            assert!(!reads(op), "{op}");
        }
    }

    #[test]
    fn assets_are_self_contained() {
        for text in [INDEX_HTML, APP_JS, APP_CSS] {
            assert!(!text.contains("http://") && !text.contains("https://"));
        }
    }
}
