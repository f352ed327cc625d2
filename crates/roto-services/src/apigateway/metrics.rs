//! The metrics API Gateway publishes in `AWS/ApiGateway` for each request a deployed
//! stage serves, as AWS publishes them: Count, the client and server errors (1 or 0 per
//! request, so that Average is the error rate), Latency and IntegrationLatency in
//! milliseconds, and for HTTP APIs DataProcessed. A REST API's are per API name
//! (`ApiName`, and with `Stage`), named `4XXError` and `5XXError`; an HTTP API's per API
//! id (`ApiId`, and with `Stage`), named `4xx` and `5xx`.

use roto_core::metrics::Datum;
use roto_core::{Context, Env};

const NAMESPACE: &str = "AWS/ApiGateway";

/// Which kind of API served the request, and its name (REST) or id (HTTP).
pub(super) enum Api<'a> {
    Rest(&'a str),
    Http(&'a str),
}

/// One request a stage served.
pub(super) struct Served<'a> {
    pub api: Api<'a>,
    pub stage: &'a str,
    pub status: u16,
    pub latency_ms: f64,
    /// The integration's latency, if one was called.
    pub integration_ms: Option<f64>,
    /// The request's and the response's bytes (HTTP APIs' DataProcessed).
    pub bytes: usize,
}

/// Publishes a served request's metrics, for the API and for its stage.
pub(super) fn served(env: &Env, ctx: &Context, s: &Served<'_>) {
    let (dimension, value, errors) = match s.api {
        Api::Rest(name) => ("ApiName", name, ["4XXError", "5XXError"]),
        Api::Http(id) => ("ApiId", id, ["4xx", "5xx"]),
    };
    let class = |hundred: u16| f64::from(u8::from(s.status / 100 == hundred));
    let mut data = vec![
        ("Count", 1.0, "Count"),
        (errors[0], class(4), "Count"),
        (errors[1], class(5), "Count"),
        ("Latency", s.latency_ms, "Milliseconds"),
    ];
    if let Some(ms) = s.integration_ms {
        data.push(("IntegrationLatency", ms, "Milliseconds"));
    }
    if matches!(s.api, Api::Http(_)) {
        data.push(("DataProcessed", s.bytes as f64, "Bytes"));
    }
    let on_api = [(dimension, value)];
    let on_stage = [(dimension, value), ("Stage", s.stage)];
    for dims in [&on_api[..], &on_stage[..]] {
        for (name, value, unit) in &data {
            let datum = Datum::new(NAMESPACE, name, dims, *value, unit);
            env.metrics.put(&ctx.account, &ctx.region, &datum);
        }
    }
}
