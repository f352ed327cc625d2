//! `/_roto/*`: what tests ask of Roto itself.
//!
//! - `GET /_roto/health`: version, store mode and services.
//! - `GET /_roto/traces`: the trace, filtered by `service`, `operation`, `kind`,
//!   `error_code`, `after` (a sequence number) and `limit`; `wait=SECONDS` blocks until
//!   at least one entry matches (at most 60 s), or the server stops.
//! - `POST /_roto/reset`: empties every service's state and the trace.
//! - `GET /_roto/clock`: the clock services read; `POST /_roto/clock?advance=SECONDS`
//!   moves it forward (never back), waking whatever waits on it (TTL expiry, scheduled
//!   rules, retention, retry back-off).

use std::time::Duration;

use http::request::Parts;
use http::{Method, StatusCode};
use roto_core::dispatch::Body;
use roto_core::timestamp::{self, TimestampFormat};
use roto_core::trace::{TraceFilter, TraceKind};
use serde_json::json;

use crate::http::{full, App};

/// The longest `wait` a trace query may ask for.
const MAX_WAIT: Duration = Duration::from_secs(60);

/// A JSON answer.
pub fn respond(status: StatusCode, value: serde_json::Value) -> hyper::Response<Body> {
    let mut resp = hyper::Response::new(full(serde_json::to_vec(&value).unwrap_or_default()));
    *resp.status_mut() = status;
    resp.headers_mut().insert(
        http::header::CONTENT_TYPE,
        http::HeaderValue::from_static("application/json"),
    );
    resp
}

fn bad_request(message: String) -> hyper::Response<Body> {
    respond(StatusCode::BAD_REQUEST, json!({ "error": message }))
}

/// What a `/_roto/` request the browser guard refuses answers.
pub fn forbidden(message: String) -> hyper::Response<Body> {
    respond(StatusCode::FORBIDDEN, json!({ "error": message }))
}

/// Serves one `/_roto/` request.
pub async fn handle(app: &App, req: &Parts) -> hyper::Response<Body> {
    let env = &app.dispatcher.env;
    match (&req.method, req.uri.path()) {
        (&Method::GET, "/_roto/health") => {
            let services: Vec<&str> = app
                .dispatcher
                .services()
                .iter()
                .map(|s| s.spec().name)
                .collect();
            respond(
                StatusCode::OK,
                json!({
                    "status": "running",
                    "version": env!("CARGO_PKG_VERSION"),
                    "store": env.store.mode().name(),
                    "services": services,
                }),
            )
        }
        (&Method::GET, "/_roto/traces") => {
            let (filter, wait) = match parse_filter(req.uri.query().unwrap_or_default()) {
                Ok(f) => f,
                Err(message) => return bad_request(message),
            };
            let entries = match wait {
                Some(wait) => tokio::select! {
                    entries = env.trace.wait(&filter, wait) => entries,
                    () = env.stopping() => env.trace.query(&filter),
                },
                None => env.trace.query(&filter),
            };
            respond(StatusCode::OK, json!({ "traces": entries }))
        }
        (&Method::POST, "/_roto/reset") => {
            // The trace goes first, so that the store's reset returns its memory too.
            env.trace.clear();
            env.metrics.clear();
            match env.store.reset() {
                Ok(()) => respond(StatusCode::OK, json!({ "reset": true })),
                Err(e) => respond(
                    StatusCode::INTERNAL_SERVER_ERROR,
                    json!({ "error": e.to_string() }),
                ),
            }
        }
        (&Method::GET, "/_roto/clock") => respond(StatusCode::OK, clock()),
        (&Method::POST, "/_roto/clock") => {
            match parse_advance(req.uri.query().unwrap_or_default()) {
                Ok(millis) => {
                    timestamp::advance_clock(millis);
                    respond(StatusCode::OK, clock())
                }
                Err(message) => bad_request(message),
            }
        }
        (_, path) => respond(
            StatusCode::NOT_FOUND,
            json!({ "error": format!("no such endpoint: {} {path}", req.method) }),
        ),
    }
}

/// What `/_roto/clock` answers: now, and how far the clock is ahead of the system's.
fn clock() -> serde_json::Value {
    let now = timestamp::now_millis();
    json!({
        "now": timestamp::format(now, TimestampFormat::Iso8601),
        "now_millis": now,
        "advanced_millis": timestamp::clock_offset(),
    })
}

/// The `advance=SECONDS` of a clock request, in milliseconds (fractions allowed).
fn parse_advance(query: &str) -> Result<u64, String> {
    let seconds = form_urlencoded::parse(query.as_bytes())
        .find(|(k, _)| k == "advance")
        .map(|(_, v)| v.into_owned())
        .ok_or_else(|| "advance=SECONDS is required".to_string())?;
    match seconds.parse::<f64>() {
        Ok(s) if (0.0..=1e12).contains(&s) => Ok((s * 1000.0).round() as u64),
        _ => Err(format!(
            "advance must be a non-negative number of seconds, got '{seconds}'"
        )),
    }
}

fn parse_filter(query: &str) -> Result<(TraceFilter, Option<Duration>), String> {
    let mut filter = TraceFilter::default();
    let mut wait = None;
    for (k, v) in form_urlencoded::parse(query.as_bytes()) {
        let v = v.into_owned();
        match k.as_ref() {
            "service" => filter.service = Some(v),
            "operation" => filter.operation = Some(v),
            "error_code" => filter.error_code = Some(v),
            "target" => filter.target = Some(v),
            "outcome" => filter.outcome = Some(v),
            "kind" => {
                filter.kind = Some(match v.as_str() {
                    "request" => TraceKind::Request,
                    "delivery" => TraceKind::Delivery,
                    _ => return Err(format!("kind must be request or delivery, got '{v}'")),
                })
            }
            "after" => {
                filter.after = Some(
                    v.parse()
                        .map_err(|_| format!("after must be a sequence number, got '{v}'"))?,
                )
            }
            "limit" => {
                filter.limit = Some(
                    v.parse()
                        .map_err(|_| format!("limit must be a count, got '{v}'"))?,
                )
            }
            "wait" => {
                let secs: f64 = v
                    .parse()
                    .map_err(|_| format!("wait must be seconds, got '{v}'"))?;
                if !(0.0..=MAX_WAIT.as_secs_f64()).contains(&secs) {
                    return Err(format!(
                        "wait must be between 0 and {} seconds",
                        MAX_WAIT.as_secs()
                    ));
                }
                wait = Some(Duration::from_secs_f64(secs));
            }
            other => return Err(format!("unknown trace filter '{other}'")),
        }
    }
    Ok((filter, wait))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn filters_parse_and_bad_values_are_rejected() {
        let (f, wait) =
            parse_filter("service=sqs&operation=SendMessage&kind=delivery&after=3&wait=1.5")
                .unwrap();
        assert_eq!(f.service.as_deref(), Some("sqs"));
        assert_eq!(f.kind, Some(TraceKind::Delivery));
        assert_eq!(f.after, Some(3));
        assert_eq!(wait, Some(Duration::from_millis(1500)));
        assert!(parse_filter("kind=other").is_err());
        assert!(parse_filter("wait=-1").is_err());
        assert!(parse_filter("wait=600").is_err());
        assert!(parse_filter("colour=red").is_err());
    }
}
