//! The data plane's entry: one request to a deployed API, REST or HTTP, on Roto's port.
//!
//! The router sends here (as the raw operation `ExecuteApi`) every request whose Host is
//! `{apiId}.execute-api.{domain}` (the `--domain`, any port),
//! `{apiId}.execute-api.{region}.amazonaws.com` or
//! `{apiId}.execute-api.localhost.localstack.cloud`, and every request whose path starts
//! `/_aws/execute-api/{apiId}/` (for clients that cannot set a host name), whatever its
//! signature says. The entry reads the request once into an [`ApiRequest`] and asks:
//!
//! 1. REST APIs (v1): the API with that id, if there is one, answers (its stage, its
//!    resources, its integrations);
//! 2. HTTP APIs (v2): `ApiGatewayV2::serve(&ApiRequest) -> AwsResult<Option<ApiResponse>>`,
//!    which answers `Ok(None)` when no HTTP API has that id;
//! 3. neither: 404 `{"message":"Not Found"}`.
//!
//! The API's own account and region are those it was created in, found from its id; the
//! caller's signature plays no part. [`ApiResponse`] is what either kind answers; the
//! Lambda proxy integration both share is in [`super::lambda_proxy`].

use bytes::Bytes;
use http::HeaderMap;
use http_body_util::{BodyExt, Full};
use roto_core::timestamp::now_millis;
use roto_core::value::EpochMillis;
use roto_core::{AwsResult, Context, Request, Response, Value};

use super::ApiGateway;

/// The path prefix of the data plane for clients that cannot set a host name.
pub const PATH_PREFIX: &str = "/_aws/execute-api/";

/// One request to an API, as every data plane reads it.
#[derive(Debug, Clone)]
pub struct ApiRequest {
    /// The API id (from the host name's first label, or the path form's segment).
    pub api_id: String,
    /// The HTTP method, upper-case as sent (`GET`).
    pub method: String,
    /// The path after the API id, as sent (percent-encoded), from its `/`: `/prod/items/7`
    /// for `http://{id}.execute-api.localhost:4566/prod/items/7` and for
    /// `/_aws/execute-api/{id}/prod/items/7`.
    pub path: String,
    /// The query string as sent, without its `?`.
    pub raw_query: String,
    /// The query parameters, percent-decoded, in order: a name may come more than once.
    pub query: Vec<(String, String)>,
    /// The request headers (a multi-map; names are lower-case).
    pub headers: HeaderMap,
    /// The body.
    pub body: Bytes,
    /// The caller's IP address.
    pub source_ip: String,
    /// The `Host` the request was addressed to, as sent (with its port, if any).
    pub host: String,
    /// The request id (also the response's `x-amzn-RequestId`).
    pub request_id: String,
    /// When the request arrived, epoch milliseconds.
    pub time: EpochMillis,
    /// The caller as the front end read its signature (its key's account, its key).
    pub caller: Context,
}

impl ApiRequest {
    /// Reads the raw operation's input (`Method`, `Path`, `Query`, `Body`, `SourceIp`) and
    /// headers; `None` when the request names no API id.
    fn read(ctx: &Context, request: &Request) -> Option<ApiRequest> {
        let input = &request.input;
        let full_path = input.str("Path").unwrap_or("/");
        let (api_id, path) = match full_path.strip_prefix(PATH_PREFIX) {
            Some(rest) => match rest.split_once('/') {
                Some((id, tail)) => (id.to_string(), format!("/{tail}")),
                None => (rest.to_string(), "/".to_string()),
            },
            None => (
                ctx.host.split(['.', ':']).next()?.to_ascii_lowercase(),
                full_path.to_string(),
            ),
        };
        if api_id.is_empty() {
            return None;
        }
        let raw_query = input.str("Query").unwrap_or_default().to_string();
        Some(ApiRequest {
            api_id,
            method: input.str("Method").unwrap_or("GET").to_string(),
            path,
            query: decode_query(&raw_query),
            raw_query,
            headers: request.headers.clone(),
            body: Bytes::copy_from_slice(
                input
                    .get("Body")
                    .and_then(Value::as_blob)
                    .unwrap_or_default(),
            ),
            source_ip: input.str("SourceIp").unwrap_or("127.0.0.1").to_string(),
            host: ctx.host.clone(),
            request_id: ctx.request_id.clone(),
            time: now_millis(),
            caller: ctx.clone(),
        })
    }

    /// The values of header `name`, in order (none when absent; non-UTF-8 bytes replaced).
    pub fn header_values(&self, name: &str) -> Vec<String> {
        self.headers
            .get_all(name)
            .iter()
            .map(|v| String::from_utf8_lossy(v.as_bytes()).into_owned())
            .collect()
    }

    /// Whether the request carries a signature (an `Authorization` header, or a presigned
    /// query string).
    pub fn signed(&self) -> bool {
        self.headers.contains_key(http::header::AUTHORIZATION)
            || self.raw_query.contains("X-Amz-Credential=")
    }

    /// The first value of header `name`.
    pub fn header(&self, name: &str) -> Option<String> {
        self.header_values(name).into_iter().next()
    }

    /// The Host without its port (`abc123.execute-api.localhost`), as events name it.
    pub fn domain_name(&self) -> &str {
        self.host
            .rsplit_once(':')
            .map_or(self.host.as_str(), |(h, port)| {
                if port.bytes().all(|b| b.is_ascii_digit()) {
                    h
                } else {
                    self.host.as_str()
                }
            })
    }
}

/// `a=1&b=2` decoded into pairs (`+` is a space), in order.
pub fn decode_query(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .map(|(k, v)| (k.into_owned(), v.into_owned()))
        .collect()
}

/// What an API answers: status, headers (in order; a name may repeat) and body.
#[derive(Debug, Clone, PartialEq)]
pub struct ApiResponse {
    /// The HTTP status.
    pub status: u16,
    /// The headers, in order.
    pub headers: Vec<(String, String)>,
    /// The body.
    pub body: Vec<u8>,
}

impl ApiResponse {
    /// `{"message": ...}` with a status, as API Gateway answers what it refuses or fails
    /// (`403 Missing Authentication Token`, `502 Internal server error`).
    pub fn message(status: u16, message: &str) -> ApiResponse {
        ApiResponse {
            status,
            headers: vec![("content-type".into(), "application/json".into())],
            body: serde_json::json!({ "message": message })
                .to_string()
                .into_bytes(),
        }
    }

    /// Adds a header.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> ApiResponse {
        self.headers.push((name.into(), value.into()));
        self
    }

    /// The response the front end sends, with the request id AWS adds to every answer.
    fn into_response(mut self, request_id: &str) -> Response {
        if !self
            .headers
            .iter()
            .any(|(k, _)| k.eq_ignore_ascii_case("x-amzn-requestid"))
        {
            self.headers
                .push(("x-amzn-RequestId".into(), request_id.to_string()));
        }
        let body = Full::new(Bytes::from(self.body))
            .map_err(|never| match never {})
            .boxed();
        let mut response = Response::new(Value::map())
            .with_status(self.status)
            .with_body(Some(body));
        response.headers = self.headers;
        response
    }
}

/// What an id no API has answers.
fn not_found() -> ApiResponse {
    ApiResponse::message(404, "Not Found")
}

impl ApiGateway {
    /// Serves one data-plane request (`ExecuteApi`, from the router).
    pub(super) async fn execute_api(
        &self,
        ctx: &Context,
        request: &Request,
    ) -> AwsResult<Response> {
        let Some(req) = ApiRequest::read(ctx, request) else {
            return Ok(not_found().into_response(&ctx.request_id));
        };
        let answer = match self.serve_rest_api(&req).await? {
            Some(answer) => answer,
            None => self.http_apis.serve(&req).await?.unwrap_or_else(not_found),
        };
        Ok(answer.into_response(&req.request_id))
    }

    /// REST APIs' data plane: `None` when no REST API has the request's id.
    async fn serve_rest_api(&self, req: &ApiRequest) -> AwsResult<Option<ApiResponse>> {
        let Some(api) = self.store.locate("restapi", &req.api_id)? else {
            return Ok(None);
        };
        self.serve_rest(req, &api.account, &api.region)
            .await
            .map(Some)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn context(host: &str) -> Context {
        Context {
            account: "000000000000".into(),
            region: "us-east-1".into(),
            access_key: None,
            request_id: "rid".into(),
            host: host.into(),
        }
    }

    fn raw(path: &str, query: &str) -> Request {
        Request::new(
            Value::map()
                .with("Method", "POST")
                .with("Path", path)
                .with("Query", query)
                .with("Body", Value::Blob(b"x".to_vec()))
                .with("SourceIp", "10.0.0.7"),
        )
    }

    #[test]
    fn host_and_path_forms_name_the_api_and_the_rest_of_the_path() {
        let host = context("AbC123.execute-api.localhost:4566");
        let req = ApiRequest::read(&host, &raw("/prod/items/7", "a=1&a=2&b=x+y")).unwrap();
        assert_eq!(req.api_id, "abc123");
        assert_eq!(req.path, "/prod/items/7");
        assert_eq!(req.method, "POST");
        assert_eq!(req.raw_query, "a=1&a=2&b=x+y");
        assert_eq!(
            req.query,
            [("a", "1"), ("a", "2"), ("b", "x y")].map(|(k, v)| (k.to_string(), v.to_string()))
        );
        assert_eq!(req.source_ip, "10.0.0.7");
        assert_eq!(req.domain_name(), "AbC123.execute-api.localhost");
        let path_form = context("127.0.0.1:4566");
        let req = ApiRequest::read(&path_form, &raw("/_aws/execute-api/xyz/dev/a/b", "")).unwrap();
        assert_eq!(
            (req.api_id.as_str(), req.path.as_str()),
            ("xyz", "/dev/a/b")
        );
        let req = ApiRequest::read(&path_form, &raw("/_aws/execute-api/xyz", "")).unwrap();
        assert_eq!((req.api_id.as_str(), req.path.as_str()), ("xyz", "/"));
        assert!(ApiRequest::read(&path_form, &raw("/_aws/execute-api//x", "")).is_none());
    }

    #[test]
    fn refusals_are_json_messages_with_the_request_id() {
        let response =
            ApiResponse::message(403, "Missing Authentication Token").into_response("r1");
        assert_eq!(response.status, Some(403));
        assert!(response
            .headers
            .contains(&("x-amzn-RequestId".into(), "r1".into())));
    }
}
