//! Stages' access logs: each request to a stage with `AccessLogSettings` becomes one line
//! in the destination log group (a `arn:aws:logs:...:log-group:NAME` ARN), written with
//! the settings' `Format` and its `$context` variables, through CloudWatch Logs'
//! operations after the answer is sent (the log stream `{apiId}_{stage}` is created when
//! missing).

use roto_core::timestamp::now_millis;
use roto_core::{Context, Value};

use super::super::invoke::{ApiRequest, ApiResponse};
use super::event::clf_time;
use super::serve::Outcome;
use super::ApiGatewayV2;

/// The value of one `$context` variable (`-` for those with none, as AWS writes them).
fn variable(
    name: &str,
    req: &ApiRequest,
    outcome: &Outcome,
    response: &ApiResponse,
    latency: f64,
) -> String {
    let text = match name {
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
    };
    if text.is_empty() {
        "-".into()
    } else {
        text
    }
}

/// `format` with its `$context.name` variables written out.
fn render(format: &str, value: impl Fn(&str) -> String) -> String {
    let mut out = String::with_capacity(format.len());
    let mut rest = format;
    while let Some(at) = rest.find("$context.") {
        out.push_str(&rest[..at]);
        let after = &rest[at + "$context.".len()..];
        let end = after
            .find(|c: char| !(c.is_ascii_alphanumeric() || c == '.' || c == '_'))
            .unwrap_or(after.len());
        let name = after[..end].trim_end_matches('.');
        out.push_str(&value(name));
        rest = &after[name.len()..];
    }
    out.push_str(rest);
    out
}

/// The log group an access log destination ARN names.
fn log_group(arn: &str) -> Option<&str> {
    let group = arn.split_once(":log-group:")?.1;
    Some(group.strip_suffix(":*").unwrap_or(group))
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
        let (Some(group), Some(format)) = (
            settings.str("DestinationArn").and_then(log_group),
            settings.str("Format"),
        ) else {
            return;
        };
        let Some(dispatcher) = self.env.dispatcher() else {
            return;
        };
        let line = render(format, |name| {
            variable(name, req, outcome, response, latency)
        });
        let stream = format!("{}_{}", req.api_id, outcome.stage);
        let group = group.to_string();
        let ctx = ctx.clone();
        tokio::spawn(async move {
            let target = Value::map()
                .with("logGroupName", group.as_str())
                .with("logStreamName", stream.as_str());
            let _ = dispatcher
                .call(&ctx, "logs", "CreateLogStream", target.clone())
                .await;
            let event = Value::map()
                .with("timestamp", now_millis())
                .with("message", line);
            let put = target.with("logEvents", vec![event]);
            let _ = dispatcher.call(&ctx, "logs", "PutLogEvents", put).await;
        });
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn formats_write_out_context_variables() {
        let value = |name: &str| match name {
            "requestId" => "r1".to_string(),
            "status" => "200".to_string(),
            _ => "-".to_string(),
        };
        assert_eq!(
            render(
                r#"{"id":"$context.requestId","status":"$context.status"}"#,
                value
            ),
            r#"{"id":"r1","status":"200"}"#
        );
        assert_eq!(render("$context.requestId $context.nope.", value), "r1 -.");
        assert_eq!(
            log_group("arn:aws:logs:us-east-1:000000000000:log-group:api-logs:*"),
            Some("api-logs")
        );
    }
}
