//! REST APIs' access logs: each request to a stage with `accessLogSettings` becomes one
//! line in the destination log group, written with the settings' `format` (through
//! [`super::super::access_log`]). Its `$context` variables are the request context's
//! members (`requestId`, `resourcePath`, `identity.sourceIp`, `authorizer.principalId`, ...,
//! as far as the request got before it was answered), and what only the answer knows:
//! `status`, `responseLength`, `responseLatency`, `integrationStatus`/`integration.status`,
//! `integrationLatency`/`integration.latency`, and `error.message`,
//! `error.messageString` and `error.responseType` for refusals.

use std::time::Instant;

use roto_core::Context;
use serde_json::Value as Json;

use super::super::access_log;
use super::super::invoke::{ApiRequest, ApiResponse};
use super::super::ApiGateway;
use super::event::base_context;

/// What the data plane saw of one request, for its access log line.
pub struct Observed {
    /// Whether the stage logs (nothing below is gathered otherwise).
    pub wanted: bool,
    /// The request context as far as the request got (the routed one, with its resource,
    /// authorizer and identity), if it was routed.
    pub context: Option<Json>,
    /// The refusal's gateway response type and message, if refused.
    pub error: Option<(&'static str, String)>,
    /// The integration's status and latency in milliseconds, if it was called.
    pub integration: Option<(Option<u16>, f64)>,
    /// When the request began.
    started: Instant,
}

impl Observed {
    /// Nothing seen yet, for a stage whose `accessLogSettings` are `settings`.
    pub fn new(settings: Option<&Json>) -> Observed {
        Observed {
            wanted: settings.is_some_and(|s| s["destinationArn"].is_string()),
            context: None,
            error: None,
            integration: None,
            started: Instant::now(),
        }
    }

    /// Notes the request context, if the stage logs.
    pub fn note_context(&mut self, context: impl FnOnce() -> Json) {
        if self.wanted {
            self.context = Some(context());
        }
    }
}

/// A member of `context` by its dotted name, as text (empty when it has none).
fn member(context: &Json, name: &str) -> String {
    let found = name
        .split('.')
        .try_fold(context, |node, part| node.get(part));
    match found {
        None | Some(Json::Null) => String::new(),
        Some(Json::String(s)) => s.clone(),
        Some(other) => other.to_string(),
    }
}

/// The value of one `$context` variable.
fn variable(
    name: &str,
    context: &Json,
    observed: &Observed,
    response: &ApiResponse,
    latency_ms: f64,
) -> String {
    let error = observed.error.as_ref();
    let integration = observed.integration.as_ref();
    match name {
        "status" => response.status.to_string(),
        "responseLength" => response.body.len().to_string(),
        "responseLatency" => format!("{}", latency_ms.round() as i64),
        "integrationStatus" | "integration.status" => integration
            .and_then(|(status, _)| *status)
            .map(|s| s.to_string())
            .unwrap_or_default(),
        "integrationLatency" | "integration.latency" => integration
            .map(|(_, ms)| format!("{}", ms.round() as i64))
            .unwrap_or_default(),
        "error.message" => error.map(|(_, m)| m.clone()).unwrap_or_default(),
        "error.messageString" => error
            .map(|(_, m)| Json::from(m.as_str()).to_string())
            .unwrap_or_default(),
        "error.responseType" => error.map(|(t, _)| (*t).to_string()).unwrap_or_default(),
        other => member(context, other),
    }
}

impl ApiGateway {
    /// Writes one request's access log line, in the background.
    pub(super) fn write_access_log(
        &self,
        ctx: &Context,
        req: &ApiRequest,
        stage: &Json,
        path: &str,
        observed: Observed,
        response: &ApiResponse,
    ) {
        let settings = &stage["accessLogSettings"];
        let (Some(destination), Some(format)) = (
            settings["destinationArn"].as_str(),
            settings["format"].as_str(),
        ) else {
            return;
        };
        let name = stage["stageName"].as_str().unwrap_or_default();
        let latency_ms = observed.started.elapsed().as_secs_f64() * 1000.0;
        let context = match &observed.context {
            Some(context) => context.clone(),
            None => base_context(req, &ctx.account, name, path),
        };
        let line = access_log::render(format, |variable_name| {
            access_log::or_dash(variable(
                variable_name,
                &context,
                &observed,
                response,
                latency_ms,
            ))
        });
        let stream = format!("{}_{name}", req.api_id);
        access_log::write(&self.env, ctx, destination, stream, line);
    }
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn variables_read_the_context_and_the_answer() {
        let context = json!({"requestId": "r1", "identity": {"sourceIp": "10.0.0.1"},
            "authorizer": {"principalId": "u", "n": 3}, "resourcePath": null});
        let observed = Observed {
            wanted: true,
            context: None,
            error: Some(("THROTTLED", "Too \"Many\"".into())),
            integration: Some((Some(202), 4.4)),
            started: Instant::now(),
        };
        let response = ApiResponse::message(429, "x");
        let value = |name: &str| variable(name, &context, &observed, &response, 12.6);
        assert_eq!(value("requestId"), "r1");
        assert_eq!(value("identity.sourceIp"), "10.0.0.1");
        assert_eq!(value("authorizer.n"), "3");
        assert_eq!(value("resourcePath"), "");
        assert_eq!(value("status"), "429");
        assert_eq!(value("responseLatency"), "13");
        assert_eq!(value("integration.status"), "202");
        assert_eq!(value("integrationLatency"), "4");
        assert_eq!(value("error.messageString"), r#""Too \"Many\"""#);
        assert_eq!(value("error.responseType"), "THROTTLED");
    }
}
