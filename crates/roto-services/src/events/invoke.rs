//! API destination targets: the HTTP request a rule sends when its target's `Arn` is an API
//! destination (EventBridge has no other kind of HTTP target).
//!
//! The delivery is an event for `events` itself whose payload is `{"ApiDestination": {Body,
//! HttpParameters}}`. Each attempt reads the destination and its connection afresh, so a
//! connection deauthorized since the event matched fails the delivery, for good. The request
//! is the destination's `HttpMethod` to its `InvocationEndpoint`, each `*` of the endpoint
//! replaced by the target's next `PathParameterValues`; its headers are EventBridge's own
//! (`User-Agent: Amazon/EventBridge/ApiDestinations`, `Content-Type: application/json;
//! charset=utf-8`, ...), then the target's `HeaderParameters`, then the connection's
//! `InvocationHttpParameters` headers, then the authorization: `Authorization: Basic` for
//! BASIC, the named header for API_KEY, `Authorization: Bearer` for OAuth. Query parameters
//! come from the target and the connection, the connection's winning a name both give, as AWS
//! documents. The body is the target's input (the event, or what Input, InputPath or the
//! InputTransformer made of it), with the connection's `BodyParameters` added when it is a
//! JSON object; GET and HEAD requests carry none.
//!
//! An OAuth token comes from the connection's `AuthorizationEndpoint` (its `HttpMethod`; the
//! client id and secret as Basic authorization; the `OAuthHttpParameters` as headers, query
//! and form body) and is kept per connection until 60 s before its `expires_in` runs out on
//! the server clock, until the connection changes, or until an endpoint answers 401 or 407.
//!
//! Answers: 2xx delivers; 401, 407, 409, 429 and 5xx (and no answer within 5 s) fail the
//! attempt and the event bus retries; any other status fails the delivery at once, as AWS
//! does.

use std::collections::HashMap;

use base64::Engine;
use roto_core::events::{DeliveryError, Event};
use roto_core::value::EpochMillis;
use roto_core::Value;
use serde_json::Value as Json;

use super::{delivery_context, Events};
use crate::http_client::{self, HttpRequest};

/// The payload member of a delivery that calls an API destination.
pub(super) const API_DESTINATION_CALL: &str = "ApiDestination";

/// A cached token is fetched anew when it would expire within this long (AWS's margin).
const TOKEN_REFRESH_MARGIN_MS: EpochMillis = 60_000;

/// The headers EventBridge sends with every API destination request.
const DEFAULT_HEADERS: [(&str, &str); 4] = [
    ("User-Agent", "Amazon/EventBridge/ApiDestinations"),
    ("Content-Type", "application/json; charset=utf-8"),
    ("Range", "bytes=0-1048575"),
    ("Accept-Encoding", "gzip,deflate"),
];

/// An OAuth access token a connection obtained.
pub(super) struct Token {
    value: String,
    /// When it expires on the server clock, if the authorization server said.
    expires: Option<EpochMillis>,
    /// The connection's last change when the token was fetched.
    connection_version: i64,
}

/// The cached tokens, by connection ARN.
pub(super) type Tokens = std::sync::Mutex<HashMap<String, Token>>;

/// The `(Key, Value)` pairs of a connection's parameter list (`[{Key, Value,
/// IsValueSecret}]`).
fn listed(list: Option<&Value>) -> Vec<(String, String)> {
    list.and_then(Value::as_list)
        .unwrap_or(&[])
        .iter()
        .filter_map(|p| Some((p.str("Key")?.to_string(), p.str("Value")?.to_string())))
        .collect()
}

/// The pairs of a target's parameter map (`{name: value}`).
fn mapped(map: Option<&Value>) -> Vec<(String, String)> {
    map.and_then(Value::as_map)
        .into_iter()
        .flatten()
        .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
        .collect()
}

/// `base` with every pair whose name `over` gives replaced by `over`'s.
fn overlaid(base: Vec<(String, String)>, over: Vec<(String, String)>) -> Vec<(String, String)> {
    let mut out: Vec<_> = base
        .into_iter()
        .filter(|(k, _)| !over.iter().any(|(o, _)| o == k))
        .collect();
    out.extend(over);
    out
}

/// The endpoint with each `*` replaced by the next path parameter value (a `*` left without
/// one stays).
fn endpoint_with_path(endpoint: &str, values: &[Value]) -> String {
    let mut values = values.iter().filter_map(Value::as_str);
    let mut parts = endpoint.split('*');
    let mut out = parts.next().unwrap_or_default().to_string();
    for part in parts {
        out.push_str(values.next().unwrap_or("*"));
        out.push_str(part);
    }
    out
}

/// `body` with `parameters` added as members when it is a JSON object.
fn with_body_parameters(body: &str, parameters: Vec<(String, String)>) -> String {
    if parameters.is_empty() {
        return body.to_string();
    }
    match serde_json::from_str::<Json>(body) {
        Ok(Json::Object(mut members)) => {
            for (k, v) in parameters {
                members.insert(k, Json::String(v));
            }
            Json::Object(members).to_string()
        }
        _ => body.to_string(),
    }
}

/// The parameters block `member` of a connection's `AuthParameters`.
fn auth_block<'v>(connection: &'v Value, member: &str) -> Option<&'v Value> {
    connection.get("AuthParameters")?.get(member)
}

/// The request one attempt sends, all but its authorization.
fn invocation_request(destination: &Value, connection: &Value, call: &Value) -> HttpRequest {
    let method = destination.str("HttpMethod").unwrap_or("POST");
    let target = call.get("HttpParameters");
    let target_part = |member: &str| target.and_then(|t| t.get(member));
    let invocation = auth_block(connection, "InvocationHttpParameters");
    let connection_part = |member: &str| invocation.and_then(|i| i.get(member));
    let endpoint = endpoint_with_path(
        destination.str("InvocationEndpoint").unwrap_or_default(),
        target_part("PathParameterValues")
            .and_then(Value::as_list)
            .unwrap_or(&[]),
    );
    let mut request = HttpRequest::new(method, &endpoint);
    request.headers = DEFAULT_HEADERS
        .iter()
        .map(|(k, v)| (k.to_string(), v.to_string()))
        .collect();
    request
        .headers
        .extend(mapped(target_part("HeaderParameters")));
    request
        .headers
        .extend(listed(connection_part("HeaderParameters")));
    request.query = overlaid(
        mapped(target_part("QueryStringParameters")),
        listed(connection_part("QueryStringParameters")),
    );
    if !matches!(method, "GET" | "HEAD") {
        let body = with_body_parameters(
            call.str("Body").unwrap_or_default(),
            listed(connection_part("BodyParameters")),
        );
        request.body = body.into_bytes();
    }
    request
}

/// `Basic` credentials.
fn basic(user: &str, password: &str) -> String {
    let pair = format!("{user}:{password}");
    format!(
        "Basic {}",
        base64::engine::general_purpose::STANDARD.encode(pair)
    )
}

/// The request for a connection's OAuth token.
fn token_request(oauth: &Value) -> HttpRequest {
    let method = oauth.str("HttpMethod").unwrap_or("POST");
    let client = oauth.get("ClientParameters");
    let client_part = |member: &str| client.and_then(|c| c.str(member)).unwrap_or_default();
    let http = oauth.get("OAuthHttpParameters");
    let http_part = |member: &str| listed(http.and_then(|h| h.get(member)));
    let mut request = HttpRequest::new(
        method,
        oauth.str("AuthorizationEndpoint").unwrap_or_default(),
    );
    request.headers = vec![(
        "Authorization".to_string(),
        basic(client_part("ClientID"), client_part("ClientSecret")),
    )];
    request.headers.extend(http_part("HeaderParameters"));
    request.query = http_part("QueryStringParameters");
    let form = http_part("BodyParameters");
    if method == "GET" {
        request.query.extend(form);
    } else if !form.is_empty() {
        request.headers.insert(
            0,
            (
                "Content-Type".to_string(),
                "application/x-www-form-urlencoded".to_string(),
            ),
        );
        request.body = http_client::encode_pairs(&form).into_bytes();
    }
    request
}

/// Whether an answer with `status` is worth another attempt: AWS retries 401 and 407
/// (after refreshing an OAuth token), 409, 429 and server errors.
fn retryable(status: http::StatusCode) -> bool {
    matches!(status.as_u16(), 401 | 407 | 409 | 429) || status.is_server_error()
}

/// The failure an answer outside 2xx makes of an attempt.
fn answered(what: &str, request: &HttpRequest, status: http::StatusCode) -> DeliveryError {
    let message = format!(
        "{what}{} {} answered {status}",
        request.method,
        request.full_url()
    );
    DeliveryError {
        message,
        retryable: retryable(status),
    }
}

impl Events {
    /// Runs one attempt of an API destination delivery.
    pub(super) async fn call_api_destination(&self, event: &Event) -> Result<(), DeliveryError> {
        let ctx = delivery_context(event);
        let (destination, connection, version) =
            self.api_destination_target(&ctx, &event.target)
                .map_err(|e| DeliveryError::permanent(e.message))?;
        let connection_arn = connection.str("ConnectionArn").unwrap_or_default();
        let state = connection.str("ConnectionState").unwrap_or_default();
        if state != "AUTHORIZED" {
            return Err(DeliveryError::permanent(format!(
                "the connection {connection_arn} is {state}"
            )));
        }
        let call = event
            .payload
            .get(API_DESTINATION_CALL)
            .cloned()
            .unwrap_or_else(Value::map);
        let mut request = invocation_request(&destination, &connection, &call);
        if let Some(header) = self.authorization(&connection, version).await? {
            request.headers.push(header);
        }
        let response = http_client::send(&request).await?;
        if response.status.is_success() {
            return Ok(());
        }
        if matches!(response.status.as_u16(), 401 | 407) {
            self.tokens
                .lock()
                .unwrap_or_else(|p| p.into_inner())
                .remove(connection_arn);
        }
        Err(answered("", &request, response.status))
    }

    /// The authorization header the connection's `AuthorizationType` calls for.
    async fn authorization(
        &self,
        connection: &Value,
        version: i64,
    ) -> Result<Option<(String, String)>, DeliveryError> {
        let part = |block: &str, member: &str| {
            auth_block(connection, block)
                .and_then(|b| b.str(member))
                .unwrap_or_default()
                .to_string()
        };
        Ok(match connection.str("AuthorizationType") {
            Some("BASIC") => Some((
                "Authorization".into(),
                basic(
                    &part("BasicAuthParameters", "Username"),
                    &part("BasicAuthParameters", "Password"),
                ),
            )),
            Some("API_KEY") => Some((
                part("ApiKeyAuthParameters", "ApiKeyName"),
                part("ApiKeyAuthParameters", "ApiKeyValue"),
            )),
            Some("OAUTH_CLIENT_CREDENTIALS") => Some((
                "Authorization".into(),
                format!("Bearer {}", self.oauth_token(connection, version).await?),
            )),
            _ => None,
        })
    }

    /// The connection's OAuth access token: the cached one while it is fresh, else a new
    /// one from the authorization endpoint.
    async fn oauth_token(&self, connection: &Value, version: i64) -> Result<String, DeliveryError> {
        let arn = connection.str("ConnectionArn").unwrap_or_default();
        let now = self.now();
        let cached = self
            .tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .get(arn)
            .filter(|t| t.connection_version == version)
            .filter(|t| t.expires.is_none_or(|e| now + TOKEN_REFRESH_MARGIN_MS < e))
            .map(|t| t.value.clone());
        if let Some(token) = cached {
            return Ok(token);
        }
        let request =
            token_request(auth_block(connection, "OAuthParameters").unwrap_or(&Value::Null));
        let response = http_client::send(&request).await?;
        if !response.status.is_success() {
            return Err(answered(
                "the OAuth token request ",
                &request,
                response.status,
            ));
        }
        let answer: Json = serde_json::from_slice(&response.body).unwrap_or_default();
        let Some(value) = answer["access_token"].as_str() else {
            return Err(format!(
                "the answer of the OAuth token request {} {} has no access_token",
                request.method,
                request.full_url()
            )
            .into());
        };
        let token = Token {
            value: value.to_string(),
            expires: answer["expires_in"].as_i64().map(|s| now + s * 1000),
            connection_version: version,
        };
        self.tokens
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(arn.to_string(), token);
        Ok(value.to_string())
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn destination(endpoint: &str, method: &str) -> Value {
        Value::map()
            .with("InvocationEndpoint", endpoint)
            .with("HttpMethod", method)
    }

    fn parameter(key: &str, value: &str) -> Value {
        Value::map()
            .with("Key", key)
            .with("Value", value)
            .with("IsValueSecret", false)
    }

    fn connection() -> Value {
        Value::map().with(
            "AuthParameters",
            Value::map().with(
                "InvocationHttpParameters",
                Value::map()
                    .with("HeaderParameters", vec![parameter("X-Tenant", "t-1")])
                    .with(
                        "QueryStringParameters",
                        vec![parameter("region", "eu"), parameter("v", "2")],
                    )
                    .with("BodyParameters", vec![parameter("source-system", "crm")]),
            ),
        )
    }

    fn call(body: &str) -> Value {
        Value::map().with("Body", body).with(
            "HttpParameters",
            Value::map()
                .with(
                    "PathParameterValues",
                    vec![Value::from("o-1"), "lines".into()],
                )
                .with(
                    "HeaderParameters",
                    Value::map().with("X-Tenant", "ignored").with("X-Rule", "r"),
                )
                .with(
                    "QueryStringParameters",
                    Value::map().with("region", "us").with("q", "1"),
                ),
        )
    }

    fn header<'r>(request: &'r HttpRequest, name: &str) -> Vec<&'r str> {
        request
            .headers
            .iter()
            .filter(|(k, _)| k.eq_ignore_ascii_case(name))
            .map(|(_, v)| v.as_str())
            .collect()
    }

    #[test]
    fn requests_merge_target_and_connection_parameters_the_connection_winning() {
        let request = invocation_request(
            &destination("http://h:1/orders/*/items/*", "PUT"),
            &connection(),
            &call(r#"{"id":"e1"}"#),
        );
        assert_eq!(request.method, "PUT");
        assert_eq!(
            request.full_url(),
            "http://h:1/orders/o-1/items/lines?q=1&region=eu&v=2"
        );
        assert_eq!(header(&request, "x-tenant").last(), Some(&"t-1"));
        assert_eq!(header(&request, "x-rule"), ["r"]);
        assert_eq!(
            header(&request, "user-agent"),
            ["Amazon/EventBridge/ApiDestinations"]
        );
        let body: Json = serde_json::from_slice(&request.body).unwrap();
        assert_eq!(
            body,
            serde_json::json!({"id": "e1", "source-system": "crm"})
        );
    }

    #[test]
    fn bodies_that_are_not_objects_stay_as_they_are_and_get_has_none() {
        let post = invocation_request(
            &destination("http://h/", "POST"),
            &connection(),
            &call("\"text\""),
        );
        assert_eq!(post.body, b"\"text\"");
        let get = invocation_request(&destination("http://h/", "GET"), &connection(), &call("{}"));
        assert!(get.body.is_empty());
    }

    #[test]
    fn path_wildcards_without_values_stay() {
        assert_eq!(
            endpoint_with_path("http://h/*/x/*", &["a".into()]),
            "http://h/a/x/*"
        );
        assert_eq!(
            endpoint_with_path("http://h/x", &["a".into()]),
            "http://h/x"
        );
    }

    #[test]
    fn token_requests_send_the_client_as_basic_and_the_parameters_as_a_form() {
        let oauth = Value::map()
            .with("AuthorizationEndpoint", "http://auth:9/token")
            .with("HttpMethod", "POST")
            .with(
                "ClientParameters",
                Value::map()
                    .with("ClientID", "id")
                    .with("ClientSecret", "s"),
            )
            .with(
                "OAuthHttpParameters",
                Value::map()
                    .with(
                        "BodyParameters",
                        vec![
                            parameter("grant_type", "client_credentials"),
                            parameter("scope", "a b"),
                        ],
                    )
                    .with("QueryStringParameters", vec![parameter("tenant", "t")])
                    .with("HeaderParameters", vec![parameter("X-Auth", "x")]),
            );
        let request = token_request(&oauth);
        assert_eq!(request.full_url(), "http://auth:9/token?tenant=t");
        assert_eq!(header(&request, "authorization"), ["Basic aWQ6cw=="]);
        assert_eq!(header(&request, "x-auth"), ["x"]);
        assert_eq!(
            header(&request, "content-type"),
            ["application/x-www-form-urlencoded"]
        );
        assert_eq!(request.body, b"grant_type=client_credentials&scope=a%20b");
    }

    #[test]
    fn only_throttling_conflicts_auth_and_server_errors_are_retried() {
        for (status, retry) in [
            (500, true),
            (503, true),
            (429, true),
            (401, true),
            (409, true),
            (400, false),
            (404, false),
            (403, false),
        ] {
            assert_eq!(
                retryable(http::StatusCode::from_u16(status).unwrap()),
                retry,
                "{status}"
            );
        }
    }
}
