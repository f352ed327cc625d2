//! Function URLs: their configuration (Create/Get/Update/Delete/ListFunctionUrlConfigs) and
//! the URLs themselves, answered on Roto's port.
//!
//! A URL is `http://<url-id>.lambda-url.<region>.<domain>:<port>/`; the router hands any
//! request for such a host to Lambda as `InvokeFunctionUrl`, with its method, path, query,
//! headers and body. The request becomes the payload format 2.0 event and the function's
//! answer the HTTP response, as Lambda builds them: a `{"statusCode": ...}` document gives
//! status, headers, cookies and body; any other JSON is a 200 `application/json` body. A
//! function error is a 502. `AWS_IAM` URLs want a signed request (signatures are not
//! verified, as nowhere in Roto); resource policies are stored, not enforced. CORS
//! preflights are answered from the URL's `Cors` configuration, and its headers are added to
//! responses to allowed origins.

use base64::Engine;
use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use roto_core::store::Cached;
use roto_core::timestamp::{self, now_millis, TimestampFormat};
use roto_core::{AwsError, AwsResult, Context, Request, Response, Value};
use rusqlite::{params, OptionalExtension};

use super::executor::Invocation;
use super::{conflict, from_json_text, function_arn, target_of, Lambda};
use crate::media::is_text;

/// The characters of a URL id (32 of them, as AWS's).
const URL_ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

fn url_not_found() -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The resource you requested does not exist.",
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// The ValidationException of a qualifier a URL cannot have (a version number, `$LATEST`).
fn check_qualifier(qualifier: &str) -> AwsResult<()> {
    let valid = !qualifier.bytes().all(|b| b.is_ascii_digit())
        && qualifier
            .bytes()
            .all(|b| b.is_ascii_alphanumeric() || b == b'-' || b == b'_');
    if valid {
        return Ok(());
    }
    Err(AwsError::validation(format!(
        "1 validation error detected: Value '{qualifier}' at 'qualifier' failed to satisfy constraint: Member must satisfy regular expression pattern: ((?!^\\d+$)^[0-9a-zA-Z-_]+$)"
    )))
}

/// The URL of id `url_id` as the caller reaches Roto (the port of its `Host`).
fn url_of(ctx: &Context, domain: &str, url_id: &str) -> String {
    let port = ctx
        .host
        .rsplit_once(':')
        .filter(|(_, p)| !p.is_empty() && p.bytes().all(|b| b.is_ascii_digit()))
        .map_or_else(String::new, |(_, p)| format!(":{p}"));
    format!("http://{url_id}.lambda-url.{}.{domain}{port}/", ctx.region)
}

/// The time form function URL configurations carry.
fn now_iso() -> String {
    timestamp::format(now_millis(), TimestampFormat::Iso8601)
}

/// A response of a fixed status, headers and body.
fn http_response(status: u16, headers: Vec<(String, String)>, body: Vec<u8>) -> Response {
    let mut response = Response::new(Value::map())
        .with_status(status)
        .with_body(Some(
            Full::new(Bytes::from(body))
                .map_err(|never| match never {})
                .boxed(),
        ));
    response.headers = headers;
    response
}

/// `{"Message": ...}` with a status, as function URLs answer what they refuse.
fn refusal(status: u16, message: &str) -> Response {
    let body = serde_json::json!({ "Message": message }).to_string();
    http_response(
        status,
        vec![("content-type".into(), "application/json".into())],
        body.into_bytes(),
    )
}

/// What the event says of one request.
pub(super) struct HttpRequest<'a> {
    pub method: &'a str,
    pub path: &'a str,
    pub query: &'a str,
    pub headers: &'a HeaderMap,
    pub body: &'a [u8],
}

/// The payload format 2.0 event of a request to URL `url_id` of a function in `account`.
fn url_event(
    req: &HttpRequest<'_>,
    url_id: &str,
    account: &str,
    request_id: &str,
    now: i64,
) -> serde_json::Value {
    use serde_json::{json, Map, Value as Json};
    let mut headers = Map::new();
    let mut cookies = Vec::new();
    for (name, value) in req.headers {
        let value = String::from_utf8_lossy(value.as_bytes()).into_owned();
        if name == http::header::COOKIE {
            cookies.extend(value.split(';').map(|c| Json::from(c.trim())));
            continue;
        }
        match headers.get_mut(name.as_str()) {
            Some(Json::String(existing)) => {
                existing.push(',');
                existing.push_str(&value);
            }
            _ => {
                headers.insert(name.as_str().to_string(), Json::String(value));
            }
        }
    }
    let mut parameters: Map<String, Json> = Map::new();
    for (k, v) in form_pairs(req.query) {
        match parameters.get_mut(&k) {
            Some(Json::String(existing)) => {
                existing.push(',');
                existing.push_str(&v);
            }
            _ => {
                parameters.insert(k, Json::String(v));
            }
        }
    }
    let rfc = timestamp::format(now, TimestampFormat::Rfc822);
    let time: Vec<&str> = rfc.split(' ').collect();
    let time = match time.as_slice() {
        [_, day, month, year, clock, _] => format!("{day}/{month}/{year}:{clock} +0000"),
        _ => rfc.clone(),
    };
    let header = |name: &str| headers.get(name).and_then(Json::as_str).unwrap_or_default();
    let mut event = json!({
        "version": "2.0",
        "routeKey": "$default",
        "rawPath": req.path,
        "rawQueryString": req.query,
        "headers": headers.clone(),
        "requestContext": {
            "accountId": "anonymous",
            "apiId": url_id,
            "domainName": header("host").split(':').next().unwrap_or_default(),
            "domainPrefix": url_id,
            "http": {
                "method": req.method,
                "path": req.path,
                "protocol": "HTTP/1.1",
                "sourceIp": "127.0.0.1",
                "userAgent": header("user-agent"),
            },
            "requestId": request_id,
            "routeKey": "$default",
            "stage": "$default",
            "time": time,
            "timeEpoch": now,
        },
        "isBase64Encoded": false,
    });
    if req.headers.contains_key(http::header::AUTHORIZATION) {
        event["requestContext"]["accountId"] = account.into();
    }
    if !cookies.is_empty() {
        event["cookies"] = Json::Array(cookies);
    }
    if !parameters.is_empty() {
        event["queryStringParameters"] = Json::Object(parameters);
    }
    if !req.body.is_empty() {
        if is_text(header("content-type")) {
            event["body"] = String::from_utf8_lossy(req.body).into_owned().into();
        } else {
            event["body"] = base64::engine::general_purpose::STANDARD
                .encode(req.body)
                .into();
            event["isBase64Encoded"] = true.into();
        }
    }
    event
}

/// `a=1&b=2` decoded into pairs.
fn form_pairs(query: &str) -> Vec<(String, String)> {
    query
        .split('&')
        .filter(|p| !p.is_empty())
        .map(|pair| {
            let (k, v) = pair.split_once('=').unwrap_or((pair, ""));
            let decode = |s: &str| {
                percent_encoding::percent_decode_str(&s.replace('+', " "))
                    .decode_utf8_lossy()
                    .into_owned()
            };
            (decode(k), decode(v))
        })
        .collect()
}

/// The HTTP response a function's result becomes.
fn url_response(payload: &[u8]) -> (u16, Vec<(String, String)>, Vec<u8>) {
    let json = || vec![("content-type".to_string(), "application/json".to_string())];
    let doc: serde_json::Value = match serde_json::from_slice(payload) {
        Ok(doc) => doc,
        Err(_) => return (200, json(), payload.to_vec()),
    };
    let Some(status) = doc.get("statusCode") else {
        return (200, json(), payload.to_vec());
    };
    let status = status
        .as_u64()
        .or_else(|| status.as_str().and_then(|s| s.parse().ok()))
        .and_then(|s| u16::try_from(s).ok())
        .filter(|s| (100..600).contains(s))
        .unwrap_or(502);
    let mut headers: Vec<(String, String)> = doc
        .get("headers")
        .and_then(serde_json::Value::as_object)
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let value = v.as_str().map_or_else(|| v.to_string(), str::to_string);
            (k.to_ascii_lowercase(), value)
        })
        .collect();
    if !headers.iter().any(|(k, _)| k == "content-type") {
        headers.extend(json());
    }
    for cookie in doc
        .get("cookies")
        .and_then(serde_json::Value::as_array)
        .into_iter()
        .flatten()
        .filter_map(serde_json::Value::as_str)
    {
        headers.push(("set-cookie".into(), cookie.to_string()));
    }
    let body = match doc.get("body") {
        Some(serde_json::Value::String(s)) if doc["isBase64Encoded"] == true => {
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .unwrap_or_default()
        }
        Some(serde_json::Value::String(s)) => s.clone().into_bytes(),
        Some(serde_json::Value::Null) | None => Vec::new(),
        Some(other) => other.to_string().into_bytes(),
    };
    (status, headers, body)
}

/// The CORS headers a response to `origin` carries under a URL's `Cors` configuration
/// (none when the origin is not allowed); `preflight` adds what a preflight answers.
fn cors_headers(cors: &Value, origin: &str, preflight: bool) -> Vec<(String, String)> {
    let list = |member: &str| -> Vec<String> {
        cors.get(member)
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    let origins = list("AllowOrigins");
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
    let mut add = |name: &str, values: Vec<String>| {
        if !values.is_empty() {
            headers.push((name.to_string(), values.join(",")));
        }
    };
    if preflight {
        add("access-control-allow-methods", list("AllowMethods"));
        add("access-control-allow-headers", list("AllowHeaders"));
        if let Some(age) = cors.int("MaxAge") {
            add("access-control-max-age", vec![age.to_string()]);
        }
    } else {
        add("access-control-expose-headers", list("ExposeHeaders"));
    }
    headers
}

/// A stored URL: where its function lives, and its configuration.
struct StoredUrl {
    account: String,
    region: String,
    function: String,
    qualifier: String,
    config: Value,
}

impl Lambda {
    /// The function and qualifier a URL request names, after checking they exist.
    fn url_target(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String)> {
        let (name, qualifier) = target_of(input)?;
        if let Some(q) = &qualifier {
            check_qualifier(q)?;
        }
        self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        Ok((name, qualifier.unwrap_or_default()))
    }

    fn url_config(
        &self,
        ctx: &Context,
        function: &str,
        qualifier: &str,
    ) -> AwsResult<Option<(String, Value)>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT url_id, config FROM lambda_urls WHERE account = ?1 AND region = ?2 AND function = ?3 AND qualifier = ?4",
            )?
            .query_row(params![ctx.account, ctx.region, function, qualifier], |r| {
                Ok((r.get::<_, String>(0)?, r.get::<_, String>(1)?))
            })
            .optional()
            .map(|row| row.map(|(id, config)| (id, from_json_text(&config))))
            .map_err(AwsError::from)
        })
    }

    fn save_url(
        &self,
        ctx: &Context,
        url_id: &str,
        function: &str,
        qualifier: &str,
        config: &Value,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_urls (url_id, account, region, function, qualifier, config)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                params![url_id, ctx.account, ctx.region, function, qualifier, config.to_json().to_string()],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Drops the URLs of a deleted function (every qualifier) or of a deleted alias.
    pub(super) fn forget_urls(
        &self,
        ctx: &Context,
        function: &str,
        qualifier: Option<&str>,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_urls WHERE account = ?1 AND region = ?2 AND function = ?3 AND (?4 IS NULL OR qualifier = ?4)",
                params![ctx.account, ctx.region, function, qualifier],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) fn create_function_url_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, qualifier) = self.url_target(ctx, input)?;
        let arn = match qualifier.as_str() {
            "" => function_arn(ctx, &name),
            q => format!("{}:{q}", function_arn(ctx, &name)),
        };
        if self.url_config(ctx, &name, &qualifier)?.is_some() {
            return Err(conflict(format!(
                "Failed to create function url config for [functionArn = {arn}]. Error message:  FunctionUrlConfig exists for this Lambda function"
            )));
        }
        let url_id: String = (0..32)
            .map(|_| char::from(URL_ID_ALPHABET[fastrand::usize(..URL_ID_ALPHABET.len())]))
            .collect();
        let now = now_iso();
        let config = Value::map()
            .with("FunctionUrl", url_of(ctx, &self.env.domain, &url_id))
            .with("FunctionArn", arn)
            .with("AuthType", input.str("AuthType").unwrap_or("NONE"))
            .with_opt("Cors", input.get("Cors").cloned())
            .with("InvokeMode", input.str("InvokeMode").unwrap_or("BUFFERED"))
            .with("CreationTime", now.as_str())
            .with("LastModifiedTime", now.as_str());
        self.save_url(ctx, &url_id, &name, &qualifier, &config)?;
        let mut answered = config;
        answered.remove("LastModifiedTime");
        Ok(answered)
    }

    pub(super) fn get_function_url_config(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = self.url_target(ctx, input)?;
        self.url_config(ctx, &name, &qualifier)?
            .map(|(_, config)| config)
            .ok_or_else(url_not_found)
    }

    pub(super) fn update_function_url_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, qualifier) = self.url_target(ctx, input)?;
        let (url_id, mut config) = self
            .url_config(ctx, &name, &qualifier)?
            .ok_or_else(url_not_found)?;
        for member in ["AuthType", "InvokeMode"] {
            if let Some(v) = input.str(member) {
                config.insert(member, v);
            }
        }
        if let Some(cors) = input.get("Cors") {
            config.insert("Cors", cors.clone());
        }
        config.insert("LastModifiedTime", now_iso());
        self.save_url(ctx, &url_id, &name, &qualifier, &config)?;
        Ok(config)
    }

    pub(super) fn delete_function_url_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, qualifier) = self.url_target(ctx, input)?;
        self.url_config(ctx, &name, &qualifier)?
            .ok_or_else(url_not_found)?;
        self.forget_urls(ctx, &name, Some(&qualifier))?;
        Ok(Value::map())
    }

    pub(super) fn list_function_url_configs(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = target_of(input)?;
        self.latest(ctx, &name)?;
        let rows: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_urls WHERE account = ?1 AND region = ?2 AND function = ?3 ORDER BY qualifier",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, name], |r| {
                r.get::<_, String>(0)
            })?;
            rows.map(|r| r.map(|c| from_json_text(&c)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Self::page_of(rows, input, "FunctionUrlConfigs")
    }

    fn stored_url(&self, url_id: &str) -> AwsResult<Option<StoredUrl>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT account, region, function, qualifier, config FROM lambda_urls WHERE url_id = ?1",
            )?
            .query_row([url_id], |r| {
                Ok(StoredUrl {
                    account: r.get(0)?,
                    region: r.get(1)?,
                    function: r.get(2)?,
                    qualifier: r.get(3)?,
                    config: from_json_text(&r.get::<_, String>(4)?),
                })
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Answers one request to a function URL (`InvokeFunctionUrl`, from the router).
    pub(super) async fn invoke_function_url(
        &self,
        ctx: &Context,
        request: &Request,
    ) -> AwsResult<Response> {
        let url_id = ctx
            .host
            .split('.')
            .next()
            .unwrap_or_default()
            .to_ascii_lowercase();
        let Some(url) = self.stored_url(&url_id)? else {
            return Ok(refusal(403, "Forbidden"));
        };
        let headers = &request.headers;
        let input = &request.input;
        let method = input.str("Method").unwrap_or("GET");
        let query = input.str("Query").unwrap_or_default();
        let signed = headers.contains_key(http::header::AUTHORIZATION)
            || query.contains("X-Amz-Credential=");
        if url.config.str("AuthType") == Some("AWS_IAM") && !signed {
            return Ok(refusal(403, "Forbidden"));
        }
        let origin = headers
            .get(http::header::ORIGIN)
            .and_then(|v| v.to_str().ok());
        let cors = url.config.get("Cors");
        if let (Some(cors), Some(origin), "OPTIONS") = (cors, origin, method) {
            if headers.contains_key(http::header::ACCESS_CONTROL_REQUEST_METHOD) {
                return Ok(http_response(
                    200,
                    cors_headers(cors, origin, true),
                    Vec::new(),
                ));
            }
        }
        let mut fctx = ctx.clone();
        fctx.account = url.account.clone();
        fctx.region = url.region.clone();
        let qualifier = (!url.qualifier.is_empty()).then_some(url.qualifier.as_str());
        let mut function = self.resolve(&fctx, &url.function, qualifier, true)?;
        function.reserved = self.latest(&fctx, &url.function)?.reserved;
        let body = input
            .get("Body")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let http_request = HttpRequest {
            method,
            path: input.str("Path").unwrap_or("/"),
            query,
            headers,
            body,
        };
        let event = url_event(
            &http_request,
            &url_id,
            &url.account,
            &ctx.request_id,
            now_millis(),
        );
        let invocation = Invocation {
            request_id: ctx.request_id.clone(),
            payload: event.to_string().into_bytes(),
            invoked_arn: url
                .config
                .str("FunctionArn")
                .unwrap_or_default()
                .to_string(),
            client_context: None,
        };
        let (status, mut response_headers, body) =
            match self.runner.run(&fctx, &function, invocation).await {
                Ok(outcome) if outcome.function_error.is_none() => url_response(&outcome.payload),
                Ok(_) => (
                    502,
                    vec![("content-type".into(), "application/json".into())],
                    br#"{"Message":"Internal Server Error"}"#.to_vec(),
                ),
                Err(e) if e.code == "TooManyRequestsException" => {
                    return Ok(refusal(429, "Rate Exceeded."))
                }
                Err(e) => return Ok(refusal(502, &e.message)),
            };
        if let (Some(cors), Some(origin)) = (cors, origin) {
            response_headers.extend(cors_headers(cors, origin, false));
        }
        response_headers.push(("x-amzn-requestid".into(), ctx.request_id.clone()));
        Ok(http_response(status, response_headers, body))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn requests_become_payload_format_2_events() {
        let mut headers = HeaderMap::new();
        headers.insert(
            "host",
            "abc.lambda-url.us-east-1.localhost:4566".parse().unwrap(),
        );
        headers.insert("content-type", "application/json".parse().unwrap());
        headers.insert("cookie", "a=1; b=2".parse().unwrap());
        headers.append("x-multi", "one".parse().unwrap());
        headers.append("x-multi", "two".parse().unwrap());
        let req = HttpRequest {
            method: "POST",
            path: "/items/7",
            query: "q=a+b&q=c&flag",
            headers: &headers,
            body: br#"{"k":1}"#,
        };
        let event = url_event(&req, "abc", "000000000000", "rid", 1_583_348_638_390);
        assert_eq!(event["version"], "2.0");
        assert_eq!(event["rawPath"], "/items/7");
        assert_eq!(event["rawQueryString"], "q=a+b&q=c&flag");
        assert_eq!(
            event["queryStringParameters"],
            serde_json::json!({"q": "a b,c", "flag": ""})
        );
        assert_eq!(event["cookies"], serde_json::json!(["a=1", "b=2"]));
        assert_eq!(event["headers"]["x-multi"], "one,two");
        assert!(event["headers"].get("cookie").is_none());
        assert_eq!(event["body"], r#"{"k":1}"#);
        assert_eq!(event["isBase64Encoded"], false);
        let context = &event["requestContext"];
        assert_eq!(context["http"]["method"], "POST");
        assert_eq!(context["domainName"], "abc.lambda-url.us-east-1.localhost");
        assert_eq!(context["domainPrefix"], "abc");
        assert_eq!(context["time"], "04/Mar/2020:19:03:58 +0000");
        assert_eq!(context["timeEpoch"], 1_583_348_638_390i64);
        let binary = HttpRequest {
            method: "PUT",
            path: "/",
            query: "",
            headers: &HeaderMap::new(),
            body: &[0, 159, 146, 150],
        };
        let event = url_event(&binary, "abc", "0", "r", 0);
        assert_eq!(event["body"], "AJ+Slg==");
        assert_eq!(event["isBase64Encoded"], true);
        assert!(event.get("queryStringParameters").is_none() && event.get("cookies").is_none());
    }

    #[test]
    fn results_become_http_responses() {
        let (status, headers, body) = url_response(br#"{"message":"hi"}"#);
        assert_eq!(status, 200);
        assert_eq!(
            headers,
            [("content-type".to_string(), "application/json".to_string())]
        );
        assert_eq!(body, br#"{"message":"hi"}"#);
        let shaped = br#"{"statusCode":201,"headers":{"Content-Type":"text/plain","X-N":3},"cookies":["s=1"],"body":"made"}"#;
        let (status, headers, body) = url_response(shaped);
        assert_eq!(status, 201);
        assert!(headers.contains(&("content-type".into(), "text/plain".into())));
        assert!(headers.contains(&("x-n".into(), "3".into())));
        assert!(headers.contains(&("set-cookie".into(), "s=1".into())));
        assert_eq!(body, b"made");
        let (_, _, body) =
            url_response(br#"{"statusCode":200,"body":"aGk=","isBase64Encoded":true}"#);
        assert_eq!(body, b"hi");
    }

    #[test]
    fn cors_headers_follow_the_configuration() {
        let cors = Value::map()
            .with("AllowOrigins", vec![Value::from("https://app.example")])
            .with(
                "AllowMethods",
                vec![Value::from("GET"), Value::from("POST")],
            )
            .with("ExposeHeaders", vec![Value::from("x-id")])
            .with("MaxAge", 60i64);
        let preflight = cors_headers(&cors, "https://app.example", true);
        assert!(preflight.contains(&(
            "access-control-allow-origin".into(),
            "https://app.example".into()
        )));
        assert!(preflight.contains(&("access-control-allow-methods".into(), "GET,POST".into())));
        assert!(preflight.contains(&("access-control-max-age".into(), "60".into())));
        let simple = cors_headers(&cors, "https://app.example", false);
        assert!(simple.contains(&("access-control-expose-headers".into(), "x-id".into())));
        assert!(cors_headers(&cors, "https://evil.example", false).is_empty());
        assert!(check_qualifier("live").is_ok());
        assert!(check_qualifier("7").is_err() && check_qualifier("$LATEST").is_err());
    }
}
