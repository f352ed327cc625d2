//! Lambda proxy integrations, shared by REST and HTTP APIs: the function is invoked through
//! the dispatcher (Lambda's `Invoke`, so the call is traced like any other) with the event
//! the caller built, and its answer read as API Gateway reads it.
//!
//! What API Gateway answers when the integration fails: a function error or a malformed
//! proxy response is 502 `{"message": "Internal server error"}`, an integration that does not
//! answer within its timeout 504 `{"message": "Endpoint request timed out"}`, and a function
//! that cannot be invoked (missing, throttled) 500 `{"message": "Internal server error"}`.

use std::time::Duration;

use base64::Engine;
use roto_core::{Context, Env, Request, Value};
use serde_json::Value as Json;

use super::invoke::ApiResponse;

/// The longest an integration may take by default (29 seconds, as AWS's).
pub const DEFAULT_TIMEOUT: Duration = Duration::from_millis(29_000);

/// How the function's answer is read.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum PayloadFormat {
    /// REST APIs and HTTP APIs' `1.0`: a `{"statusCode", "headers", "multiValueHeaders",
    /// "body", "isBase64Encoded"}` document, anything else is malformed.
    V1,
    /// HTTP APIs' `2.0`: the same with `cookies`; an answer without `statusCode` is a 200
    /// `application/json` body of the answer itself.
    V2,
}

/// The function a Lambda integration's URI names:
/// `arn:aws:apigateway:{region}:lambda:path/2015-03-31/functions/{functionArn}/invocations`,
/// or a function ARN itself (HTTP APIs accept both).
pub fn function_of_uri(uri: &str) -> Option<&str> {
    if uri.starts_with("arn:aws:lambda:") {
        return Some(uri);
    }
    let (_, rest) = uri.split_once(":lambda:path/")?;
    let rest = rest.split_once("/functions/")?.1;
    Some(rest.strip_suffix("/invocations").unwrap_or(rest))
}

/// The context of a call in the function's own account and region (from its ARN).
fn function_context(function: &str, request_id: &str, fallback: &Context) -> Context {
    let parts: Vec<&str> = function.split(':').collect();
    let mut ctx = fallback.clone();
    if let ["arn", _, "lambda", region, account, ..] = parts.as_slice() {
        ctx.region = region.to_string();
        ctx.account = account.to_string();
    }
    ctx.request_id = request_id.to_string();
    ctx
}

/// 502 `Internal server error`, as API Gateway answers a failed Lambda integration.
pub fn bad_gateway() -> ApiResponse {
    ApiResponse::message(502, "Internal server error")
        .with_header("x-amzn-ErrorType", "InternalServerErrorException")
}

/// Invokes `function` (an ARN, or a name in `ctx`'s account and region) synchronously with
/// `event`, within `timeout`. `Ok` is the function's answer; `Err` is what the API answers
/// instead (502, 504 or 500, with AWS's bodies).
pub async fn invoke(
    env: &Env,
    ctx: &Context,
    function: &str,
    event: &Json,
    timeout: Duration,
) -> Result<Vec<u8>, ApiResponse> {
    match invoke_raw(env, ctx, function, event, timeout).await? {
        (_, Some(_)) => Err(bad_gateway()),
        (payload, None) => Ok(payload),
    }
}

/// [`invoke`] for custom integrations, which read a function error's payload: the answer
/// and the function error (`Unhandled`), if any.
pub async fn invoke_raw(
    env: &Env,
    ctx: &Context,
    function: &str,
    event: &Json,
    timeout: Duration,
) -> Result<(Vec<u8>, Option<String>), ApiResponse> {
    let internal = || {
        ApiResponse::message(500, "Internal server error")
            .with_header("x-amzn-ErrorType", "InternalServerErrorException")
    };
    let Some(dispatcher) = env.dispatcher() else {
        return Err(internal());
    };
    let fctx = function_context(function, &ctx.request_id, ctx);
    let input = Value::map()
        .with("FunctionName", function)
        .with("Payload", Value::Blob(event.to_string().into_bytes()));
    let call = dispatcher.call_request(&fctx, "lambda", "Invoke", Request::new(input));
    match tokio::time::timeout(timeout, call).await {
        Err(_) => Err(ApiResponse::message(504, "Endpoint request timed out")
            .with_header("x-amzn-ErrorType", "InternalServerErrorException")),
        Ok(Err(_)) => Err(internal()),
        Ok(Ok(response)) => Ok((
            response
                .output
                .get("Payload")
                .and_then(Value::as_blob)
                .unwrap_or_default()
                .to_vec(),
            response.output.str("FunctionError").map(str::to_string),
        )),
    }
}

/// A header value as the function gave it: a string, or a number or boolean written out.
fn header_text(value: &Json) -> Option<String> {
    match value {
        Json::String(s) => Some(s.clone()),
        Json::Number(_) | Json::Bool(_) => Some(value.to_string()),
        _ => None,
    }
}

/// The response a function's proxy answer becomes; a malformed answer is 502.
pub fn proxy_response(payload: &[u8], format: PayloadFormat) -> ApiResponse {
    read_proxy_response(payload, format).unwrap_or_else(bad_gateway)
}

fn read_proxy_response(payload: &[u8], format: PayloadFormat) -> Option<ApiResponse> {
    let doc: Json = serde_json::from_slice(payload).ok()?;
    let as_body = || ApiResponse {
        status: 200,
        headers: vec![("content-type".into(), "application/json".into())],
        body: payload.to_vec(),
    };
    let object = match (&doc, format) {
        (Json::Object(o), PayloadFormat::V2) if !o.contains_key("statusCode") => {
            return Some(as_body())
        }
        (Json::Object(o), _) => o,
        (_, PayloadFormat::V2) => return Some(as_body()),
        (_, PayloadFormat::V1) => return None,
    };
    let allowed: &[&str] = match format {
        PayloadFormat::V1 => &[
            "statusCode",
            "headers",
            "multiValueHeaders",
            "body",
            "isBase64Encoded",
        ],
        PayloadFormat::V2 => &[
            "statusCode",
            "headers",
            "multiValueHeaders",
            "body",
            "isBase64Encoded",
            "cookies",
        ],
    };
    if object.keys().any(|k| !allowed.contains(&k.as_str())) {
        return None;
    }
    let status = match object.get("statusCode") {
        None | Some(Json::Null) => 200,
        Some(Json::Number(n)) => n.as_u64()?,
        Some(Json::String(s)) => s.trim().parse().ok()?,
        Some(_) => return None,
    };
    let status = u16::try_from(status)
        .ok()
        .filter(|s| (100..600).contains(s))?;
    let mut headers = Vec::new();
    for (name, value) in object
        .get("headers")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        headers.push((name.clone(), header_text(value)?));
    }
    for (name, values) in object
        .get("multiValueHeaders")
        .and_then(Json::as_object)
        .into_iter()
        .flatten()
    {
        headers.retain(|(n, _)| !n.eq_ignore_ascii_case(name));
        for value in values.as_array()? {
            headers.push((name.clone(), header_text(value)?));
        }
    }
    for cookie in object
        .get("cookies")
        .and_then(Json::as_array)
        .into_iter()
        .flatten()
    {
        headers.push(("set-cookie".into(), header_text(cookie)?));
    }
    let base64 = object.get("isBase64Encoded").and_then(Json::as_bool) == Some(true);
    let body = match object.get("body") {
        None | Some(Json::Null) => Vec::new(),
        Some(Json::String(s)) if base64 => {
            base64::engine::general_purpose::STANDARD.decode(s).ok()?
        }
        Some(Json::String(s)) => s.clone().into_bytes(),
        Some(_) => return None,
    };
    if !headers
        .iter()
        .any(|(n, _)| n.eq_ignore_ascii_case("content-type"))
    {
        headers.push(("content-type".into(), "application/json".into()));
    }
    Some(ApiResponse {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn integration_uris_name_their_function() {
        let uri = "arn:aws:apigateway:us-east-1:lambda:path/2015-03-31/functions/arn:aws:lambda:us-east-1:000000000000:function:f/invocations";
        assert_eq!(
            function_of_uri(uri),
            Some("arn:aws:lambda:us-east-1:000000000000:function:f")
        );
        let arn = "arn:aws:lambda:eu-west-1:111122223333:function:g:live";
        assert_eq!(function_of_uri(arn), Some(arn));
        assert_eq!(function_of_uri("http://example.com"), None);
        let ctx = function_context(
            arn,
            "r",
            &Context {
                account: "000000000000".into(),
                region: "us-east-1".into(),
                access_key: None,
                request_id: String::new(),
                host: String::new(),
            },
        );
        assert_eq!(
            (ctx.account.as_str(), ctx.region.as_str()),
            ("111122223333", "eu-west-1")
        );
    }

    #[test]
    fn proxy_answers_give_status_headers_and_body() {
        let answer = br#"{"statusCode":201,"headers":{"X-A":"1","X-N":2},"multiValueHeaders":{"Set-Cookie":["a=1","b=2"]},"body":"made"}"#;
        let r = proxy_response(answer, PayloadFormat::V1);
        assert_eq!(r.status, 201);
        assert_eq!(r.body, b"made");
        assert!(r.headers.contains(&("X-N".into(), "2".into())));
        assert_eq!(
            r.headers.iter().filter(|(n, _)| n == "Set-Cookie").count(),
            2
        );
        let binary = proxy_response(
            br#"{"statusCode":200,"body":"aGk=","isBase64Encoded":true}"#,
            PayloadFormat::V1,
        );
        assert_eq!(binary.body, b"hi");
        assert_eq!(
            proxy_response(br#"{"body":"x"}"#, PayloadFormat::V1).status,
            200
        );
    }

    #[test]
    fn malformed_v1_answers_are_502_and_v2_reads_plain_json_as_the_body() {
        for malformed in [
            &b"\"hello\""[..],
            b"not json",
            br#"{"statusCode":200,"extra":1}"#,
            br#"{"statusCode":200,"body":{"a":1}}"#,
            br#"{"statusCode":"abc"}"#,
            br#"{"statusCode":700}"#,
        ] {
            assert_eq!(proxy_response(malformed, PayloadFormat::V1), bad_gateway());
        }
        let plain = proxy_response(br#"{"hello":"world"}"#, PayloadFormat::V2);
        assert_eq!(
            (plain.status, plain.body.as_slice()),
            (200, &br#"{"hello":"world"}"#[..])
        );
        let cookies = proxy_response(
            br#"{"statusCode":200,"cookies":["s=1"]}"#,
            PayloadFormat::V2,
        );
        assert!(cookies
            .headers
            .contains(&("set-cookie".into(), "s=1".into())));
    }
}
