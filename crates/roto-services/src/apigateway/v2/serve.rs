//! The data plane of HTTP APIs: one request to `{apiId}.execute-api...` (or
//! `/_aws/execute-api/{apiId}/...`), handed over by API Gateway's entry when no REST API has
//! the id.
//!
//! The stage is the path's first segment when the API has a stage of that name, else
//! `$default`; the stage serves its deployment's snapshot. CORS preflights are answered from
//! the API's CORS configuration (whatever the routes), and responses to allowed origins
//! carry its headers. The route is chosen as [`super::routing`] says; the authorizer (if the
//! route has one) runs first; then the integration: Lambda proxies with payload format 1.0
//! or 2.0, HTTP proxies to the integration's URL. Answers API Gateway gives itself are HTTP
//! APIs' (`404 Not Found`, `500 Internal Server Error`, `503 Service Unavailable` past the
//! integration's timeout). Each request is traced, with its integration call, and written
//! to the stage's access log when it has one. WebSocket APIs are stored, not served: their
//! ids answer 404.

use std::time::{Duration, Instant};

use roto_core::trace::TraceEntry;
use roto_core::{AwsResult, Context, Value};

use super::super::invoke::ApiRequest;
use super::super::invoke::ApiResponse;
use super::super::lambda_proxy::{self, PayloadFormat};
use super::super::metrics::{self, Api};
use super::event::Target;
use super::mapping::{map_request, map_response, Outgoing};
use super::routing::{self, Matched};
use super::stages::Deployed;
use super::store::{Key, Kind};
use super::ApiGatewayV2;
use crate::http_client::{self, HttpRequest};

/// What AWS answers when the integration does not answer within its timeout.
fn timed_out() -> ApiResponse {
    ApiResponse::message(503, "Service Unavailable")
}

/// What AWS answers when the integration fails.
pub(super) fn internal_error() -> ApiResponse {
    ApiResponse::message(500, "Internal Server Error")
}

fn not_found() -> ApiResponse {
    ApiResponse::message(404, "Not Found")
}

/// What one request did, for the trace and the access log.
#[derive(Default)]
pub(super) struct Outcome {
    pub stage: String,
    pub route_key: String,
    pub integration: Option<String>,
    pub integration_status: Option<u16>,
    pub integration_latency_ms: Option<f64>,
    pub error: Option<String>,
    pub access_log: Option<Value>,
}

/// The stage a request reached, and what it serves.
struct Served<'a> {
    deployed: &'a Deployed,
    stage: &'a str,
    stage_doc: &'a Value,
}

/// The stage a path names, and the path within it: its first segment when the API has a
/// stage of that name, else the `$default` stage with the whole path.
fn split_stage(path: &str, named: impl Fn(&str) -> bool) -> Option<(String, &str)> {
    let trimmed = path.trim_start_matches('/');
    let (first, rest) = trimmed.split_once('/').unwrap_or((trimmed, ""));
    let stage = percent_encoding::percent_decode_str(first).decode_utf8_lossy();
    if !first.is_empty() && stage != "$default" && named(&stage) {
        let rest = &path[path.len() - rest.len() - usize::from(!rest.is_empty())..];
        return Some((stage.into_owned(), if rest.is_empty() { "/" } else { rest }));
    }
    named("$default").then(|| ("$default".to_string(), path))
}

/// The values of a CORS configuration's list member.
fn cors_list(cors: &Value, member: &str) -> Vec<String> {
    cors.get(member)
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|v| v.as_str().map(str::to_string))
        .collect()
}

/// The CORS headers an answer to `origin` carries (none when the origin is not allowed);
/// a preflight's add what it asked for (`requested` method and headers).
fn cors_headers(
    cors: &Value,
    origin: &str,
    preflight: Option<(&str, &str)>,
) -> Vec<(String, String)> {
    let origins = cors_list(cors, "AllowOrigins");
    let allowed = if origins.iter().any(|o| o == "*") {
        "*".to_string()
    } else if origins.iter().any(|o| o.eq_ignore_ascii_case(origin)) {
        origin.to_string()
    } else {
        return Vec::new();
    };
    let mut headers = vec![("access-control-allow-origin".to_string(), allowed)];
    if cors.bool("AllowCredentials") == Some(true) {
        headers.push(("access-control-allow-credentials".into(), "true".into()));
    }
    let mut add = |name: &str, values: Vec<String>, echo: &str| {
        let value = if values.iter().any(|v| v == "*") && !echo.is_empty() {
            echo.to_string()
        } else {
            values.join(",")
        };
        if !value.is_empty() {
            headers.push((name.to_string(), value));
        }
    };
    match preflight {
        Some((method, requested_headers)) => {
            add(
                "access-control-allow-methods",
                cors_list(cors, "AllowMethods"),
                method,
            );
            add(
                "access-control-allow-headers",
                cors_list(cors, "AllowHeaders"),
                requested_headers,
            );
            if let Some(age) = cors.int("MaxAge").filter(|a| *a >= 0) {
                add("access-control-max-age", vec![age.to_string()], "");
            }
        }
        None => add(
            "access-control-expose-headers",
            cors_list(cors, "ExposeHeaders"),
            "",
        ),
    }
    headers
}

/// The integration's URL with the request's path parameters (`{proxy}`) in place.
fn http_target(uri: &str, parameters: &[(String, String)]) -> String {
    let mut url = uri.to_string();
    for (name, value) in parameters {
        url = url.replace(&format!("{{{name}}}"), value);
        url = url.replace(&format!("{{{name}+}}"), value);
    }
    url
}

/// Headers a proxy never forwards (hop-by-hop, and those the client computes again).
fn forwarded(name: &str) -> bool {
    !matches!(
        name,
        "host"
            | "connection"
            | "content-length"
            | "transfer-encoding"
            | "keep-alive"
            | "upgrade"
            | "te"
            | "trailer"
    )
}

impl ApiGatewayV2 {
    /// Serves one request to an HTTP API: `Ok(None)` when no HTTP API has the id.
    pub async fn serve(&self, req: &ApiRequest) -> AwsResult<Option<ApiResponse>> {
        let Some(found) = self.store.locate(Kind::Api.column(), &req.api_id)? else {
            return Ok(None);
        };
        if found.doc["ProtocolType"] == "WEBSOCKET" {
            return Ok(Some(not_found()));
        }
        let ctx = Context {
            account: found.account,
            region: found.region,
            access_key: None,
            request_id: req.request_id.clone(),
            host: req.host.clone(),
        };
        let started = Instant::now();
        let mut outcome = Outcome::default();
        let mut response = self.answer(&ctx, req, &mut outcome).await?;
        response
            .headers
            .push(("apigw-requestid".into(), req.request_id.clone()));
        let elapsed = started.elapsed().as_secs_f64() * 1000.0;
        self.trace(&ctx, req, &outcome, response.status, elapsed);
        if !outcome.stage.is_empty() {
            let served = metrics::Served {
                api: Api::Http(&req.api_id),
                stage: &outcome.stage,
                status: response.status,
                latency_ms: elapsed,
                integration_ms: outcome.integration_latency_ms,
                bytes: req.body.len() + response.body.len(),
            };
            metrics::served(&self.env, &ctx, &served);
        }
        if let Some(settings) = outcome.access_log.take() {
            self.write_access_log(&ctx, req, &outcome, &response, elapsed, &settings);
        }
        Ok(Some(response))
    }

    async fn answer(
        &self,
        ctx: &Context,
        req: &ApiRequest,
        outcome: &mut Outcome,
    ) -> AwsResult<ApiResponse> {
        let api = &req.api_id;
        let stage_doc = |name: &str| {
            self.load(ctx, Key::of(api, Kind::Stage, name))
                .ok()
                .flatten()
        };
        let Some((stage, path)) = split_stage(&req.path, |s| stage_doc(s).is_some()) else {
            return Ok(not_found());
        };
        let Some(stage_doc) = stage_doc(&stage) else {
            return Ok(not_found());
        };
        outcome.stage = stage.clone();
        outcome.access_log = stage_doc.get("AccessLogSettings").cloned();
        if !self
            .accounts
            .admit(&self.store, &ctx.account, &ctx.region)?
        {
            outcome.error = Some("throttled by the account's limits".into());
            return Ok(ApiResponse::message(429, "Too Many Requests"));
        }
        let Some(deployed) = self.snapshot_of(ctx, api, &stage_doc)? else {
            return Ok(not_found());
        };
        let origin = req.header("origin");
        if let (Some(cors), Some(origin)) = (&deployed.cors, &origin) {
            if let Some(method) = req
                .header("access-control-request-method")
                .filter(|_| req.method == "OPTIONS")
            {
                let requested = req
                    .header("access-control-request-headers")
                    .unwrap_or_default();
                let headers = cors_headers(cors, origin, Some((&method, &requested)));
                return Ok(ApiResponse {
                    status: 204,
                    headers,
                    body: Vec::new(),
                });
            }
        }
        let Some(matched) = routing::choose(&deployed.routes, &req.method, path) else {
            return Ok(not_found());
        };
        outcome.route_key = matched
            .route
            .str("RouteKey")
            .unwrap_or_default()
            .to_string();
        let served = Served {
            deployed: &deployed,
            stage: &stage,
            stage_doc: &stage_doc,
        };
        let mut response = self.route(ctx, req, &served, &matched, outcome).await;
        if let (Some(cors), Some(origin)) = (&deployed.cors, &origin) {
            response
                .headers
                .retain(|(k, _)| !k.to_ascii_lowercase().starts_with("access-control-"));
            response.headers.extend(cors_headers(cors, origin, None));
        }
        Ok(response)
    }

    /// Runs the route's authorizer and integration.
    async fn route(
        &self,
        ctx: &Context,
        req: &ApiRequest,
        served: &Served<'_>,
        matched: &Matched<'_>,
        outcome: &mut Outcome,
    ) -> ApiResponse {
        let deployed = served.deployed;
        let mut target = Target {
            req,
            account: &ctx.account,
            stage: served.stage,
            route_key: &outcome.route_key.clone(),
            parameters: &matched.parameters,
            stage_variables: served.stage_doc.get("StageVariables"),
            authorizer: None,
        };
        match self.authorize(ctx, deployed, matched.route, &target).await {
            Ok(context) => target.authorizer = context,
            Err(refusal) => {
                outcome.error = Some("authorizer refused the request".into());
                return refusal;
            }
        }
        let integration = matched
            .route
            .str("Target")
            .and_then(|t| t.strip_prefix("integrations/"))
            .and_then(|id| {
                deployed
                    .integrations
                    .iter()
                    .find(|i| i.str("IntegrationId") == Some(id))
            });
        let Some(integration) = integration else {
            return not_found();
        };
        let timeout = Duration::from_millis(
            integration
                .int("TimeoutInMillis")
                .unwrap_or(30_000)
                .clamp(50, 30_000) as u64,
        );
        let uri = integration.str("IntegrationUri").unwrap_or_default();
        outcome.integration = Some(format!(
            "{} {uri}",
            integration.str("IntegrationType").unwrap_or_default()
        ));
        let started = Instant::now();
        let mut response = match integration.str("IntegrationType") {
            Some("AWS_PROXY") if integration.str("IntegrationSubtype").is_some() => {
                self.service_integration(ctx, integration, &target).await
            }
            Some("AWS_PROXY") => {
                let v2 = integration.str("PayloadFormatVersion") == Some("2.0");
                match integration.get("RequestParameters") {
                    Some(mapping) => {
                        let mapped = mapped_request(mapping, &target);
                        let target = Target {
                            req: &mapped,
                            authorizer: target.authorizer.clone(),
                            ..target
                        };
                        self.lambda(ctx, uri, &target, v2, timeout).await
                    }
                    None => self.lambda(ctx, uri, &target, v2, timeout).await,
                }
            }
            Some("HTTP_PROXY") => {
                let method = integration.str("IntegrationMethod").filter(|m| *m != "ANY");
                let mut outgoing = Outgoing::of(req, forwarded);
                let mapping = integration.get("RequestParameters");
                map_request(mapping, &target, &mut outgoing);
                let url = http_target(uri, &matched.parameters);
                let url = match &outgoing.path {
                    Some(path) => with_path(&url, path),
                    None => url,
                };
                let query = match mapping {
                    Some(_) => form_urlencoded::Serializer::new(String::new())
                        .extend_pairs(&outgoing.query)
                        .finish(),
                    None => req.raw_query.clone(),
                };
                http_proxy(req, &url, &query, outgoing.headers, method, timeout).await
            }
            _ => internal_error(),
        };
        map_response(
            integration.get("ResponseParameters"),
            &target,
            &mut response,
        );
        outcome.integration_latency_ms = Some(started.elapsed().as_secs_f64() * 1000.0);
        outcome.integration_status = Some(response.status);
        response
    }

    /// A Lambda proxy integration: the event of the integration's payload format, the
    /// function's answer read as that format reads it.
    async fn lambda(
        &self,
        ctx: &Context,
        uri: &str,
        target: &Target<'_>,
        v2: bool,
        timeout: Duration,
    ) -> ApiResponse {
        let Some(function) = lambda_proxy::function_of_uri(uri) else {
            return internal_error();
        };
        let (event, format) = if v2 {
            (target.v2(), PayloadFormat::V2)
        } else {
            (target.v1(), PayloadFormat::V1)
        };
        match lambda_proxy::invoke(&self.env, ctx, function, &event, timeout).await {
            Ok(payload) => {
                let response = lambda_proxy::proxy_response(&payload, format);
                if response == lambda_proxy::bad_gateway() {
                    internal_error()
                } else {
                    response
                }
            }
            Err(refusal) if refusal.status == 504 => timed_out(),
            Err(_) => internal_error(),
        }
    }

    fn trace(&self, ctx: &Context, req: &ApiRequest, outcome: &Outcome, status: u16, elapsed: f64) {
        let mut entry =
            TraceEntry::request(&ctx.account, &ctx.region, "apigatewayv2", "ExecuteApi");
        entry.status = Some(status);
        entry.duration_ms = elapsed;
        entry.target = Some(format!(
            "{}/{}/{}",
            req.api_id, outcome.stage, outcome.route_key
        ));
        entry.source = outcome.integration.clone();
        entry.detail = Some(format!(
            "{} {} integration status {} in {:.3} ms{}",
            req.method,
            req.path,
            outcome
                .integration_status
                .map_or("-".to_string(), |s| s.to_string()),
            outcome.integration_latency_ms.unwrap_or_default(),
            outcome
                .error
                .as_deref()
                .map_or(String::new(), |e| format!("; {e}"))
        ));
        self.env.trace.record(entry);
    }
}

/// The request as a Lambda proxy integration's `RequestParameters` change it: its
/// headers, query string and (`overwrite:path`) path, which its event carries.
fn mapped_request(mapping: &Value, target: &Target<'_>) -> ApiRequest {
    let mut outgoing = Outgoing::of(target.req, |_| true);
    map_request(Some(mapping), target, &mut outgoing);
    let mut mapped = target.req.clone();
    mapped.headers = outgoing
        .headers
        .iter()
        .filter_map(|(k, v)| {
            Some((
                http::HeaderName::from_bytes(k.to_ascii_lowercase().as_bytes()).ok()?,
                http::HeaderValue::from_str(v).ok()?,
            ))
        })
        .collect();
    mapped.raw_query = form_urlencoded::Serializer::new(String::new())
        .extend_pairs(&outgoing.query)
        .finish();
    mapped.query = outgoing.query;
    if let Some(path) = outgoing.path {
        mapped.path = format!("/{}", path.trim_start_matches('/'));
    }
    mapped
}

/// `url` with its path replaced by `path` (a parameter mapping's `overwrite:path`).
fn with_path(url: &str, path: &str) -> String {
    let after_scheme = url.find("://").map_or(0, |i| i + 3);
    let origin_end = url[after_scheme..]
        .find('/')
        .map_or(url.len(), |i| after_scheme + i);
    format!("{}/{}", &url[..origin_end], path.trim_start_matches('/'))
}

/// An HTTP proxy integration: the request's body with `query` and `headers` (the request's
/// own, mapped), sent to the integration's URL (with `method`, or the request's own), the
/// answer passed back.
async fn http_proxy(
    req: &ApiRequest,
    url: &str,
    query: &str,
    headers: Vec<(String, String)>,
    method: Option<&str>,
    timeout: Duration,
) -> ApiResponse {
    let mut outgoing = HttpRequest::new(method.unwrap_or(&req.method), url);
    if !query.is_empty() {
        let separator = if url.contains('?') { '&' } else { '?' };
        outgoing.url = format!("{url}{separator}{query}");
    }
    outgoing.headers = headers;
    outgoing.body = req.body.to_vec();
    match tokio::time::timeout(timeout, http_client::send(&outgoing)).await {
        Err(_) => timed_out(),
        Ok(Err(_)) => internal_error(),
        Ok(Ok(answer)) => ApiResponse {
            status: answer.status.as_u16(),
            headers: answer
                .headers
                .into_iter()
                .filter(|(k, _)| forwarded(k))
                .collect(),
            body: answer.body.to_vec(),
        },
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn the_first_segment_names_a_stage_when_one_has_that_name() {
        let named = |s: &str| matches!(s, "dev" | "$default");
        assert_eq!(
            split_stage("/dev/items/7", named),
            Some(("dev".into(), "/items/7"))
        );
        assert_eq!(split_stage("/dev", named), Some(("dev".into(), "/")));
        assert_eq!(
            split_stage("/items/7", named),
            Some(("$default".into(), "/items/7"))
        );
        assert_eq!(split_stage("/", named), Some(("$default".into(), "/")));
        let only_dev = |s: &str| s == "dev";
        assert_eq!(split_stage("/items", only_dev), None);
    }

    #[test]
    fn cors_answers_follow_the_configuration() {
        let cors = Value::map()
            .with("AllowOrigins", vec![Value::from("https://app.example")])
            .with("AllowMethods", vec![Value::from("*")])
            .with("AllowHeaders", vec![Value::from("content-type")])
            .with("ExposeHeaders", vec![Value::from("x-id")])
            .with("AllowCredentials", true)
            .with("MaxAge", 60i64);
        let preflight = cors_headers(&cors, "https://app.example", Some(("PUT", "content-type")));
        assert!(preflight.contains(&("access-control-allow-methods".into(), "PUT".into())));
        assert!(preflight.contains(&("access-control-allow-headers".into(), "content-type".into())));
        assert!(preflight.contains(&("access-control-max-age".into(), "60".into())));
        assert!(preflight.contains(&("access-control-allow-credentials".into(), "true".into())));
        let simple = cors_headers(&cors, "https://app.example", None);
        assert!(simple.contains(&("access-control-expose-headers".into(), "x-id".into())));
        assert!(cors_headers(&cors, "https://evil.example", None).is_empty());
        assert_eq!(
            http_target("http://h/base/{proxy}", &[("proxy".into(), "a/b".into())]),
            "http://h/base/a/b"
        );
    }
}
