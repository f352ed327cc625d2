//! HTTP APIs' access logs: each request to a stage with `AccessLogSettings` becomes one
//! line in the destination log group, written with the settings' `Format` and the
//! `$context` variables an HTTP API has (through [`super::super::access_log`]).

use roto_core::{Context, Value};

use super::super::access_log;
use super::super::invoke::{ApiRequest, ApiResponse};
use super::event::clf_time;
use super::serve::Outcome;
use super::ApiGatewayV2;

/// The value of one `$context` variable (empty for those with none).
fn variable(
    name: &str,
    req: &ApiRequest,
    outcome: &Outcome,
    response: &ApiResponse,
    latency: f64,
) -> String {
    match name {
        "requestId" | "extendedRequestId" => req.request_id.clone(),
        "apiId" => req.api_id.clone(),
        "stage" => outcome.stage.clone(),
        "routeKey" => outcome.route_key.clone(),
        "httpMethod" => req.method.clone(),
        "path" => req.path.clone(),
        "protocol" => "HTTP/1.1".into(),
        "status" => response.status.to_string(),
        "responseLength" => response.body.len().to_string(),
        "responseLatency" => format!("{}", latency.round() as i64),
        "requestTime" => clf_time(req.time),
        "requestTimeEpoch" => (req.time / 1000).to_string(),
        "identity.sourceIp" => req.source_ip.clone(),
        "identity.userAgent" => req.header("user-agent").unwrap_or_default(),
        "domainName" => req.domain_name().to_string(),
        "domainPrefix" => req
            .domain_name()
            .split('.')
            .next()
            .unwrap_or_default()
            .to_string(),
        "integrationStatus" | "integration.status" => outcome
            .integration_status
            .map(|s| s.to_string())
            .unwrap_or_default(),
        "integrationLatency" | "integration.latency" => outcome
            .integration_latency_ms
            .map(|l| format!("{}", l.round() as i64))
            .unwrap_or_default(),
        "error.message" | "integrationErrorMessage" | "authorizer.error" => {
            outcome.error.clone().unwrap_or_default()
        }
        _ => String::new(),
    }
}

impl ApiGatewayV2 {
    /// Writes one request's access log line, in the background.
    pub(super) fn write_access_log(
        &self,
        ctx: &Context,
        req: &ApiRequest,
        outcome: &Outcome,
        response: &ApiResponse,
        latency: f64,
        settings: &Value,
    ) {
        let (Some(destination), Some(format)) =
            (settings.str("DestinationArn"), settings.str("Format"))
        else {
            return;
        };
        let line = access_log::render(format, |name| {
            access_log::or_dash(variable(name, req, outcome, response, latency))
        });
        let stream = format!("{}_{}", req.api_id, outcome.stage);
        access_log::write(&self.env, ctx, destination, stream, line);
    }
}
