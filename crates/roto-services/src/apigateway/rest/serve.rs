//! REST APIs' data plane: a request to `/{stage}/{path}` of a deployed API, served from
//! the stage's deployment snapshot.
//!
//! No stage, or a stage that does not exist, is 403 `{"message":"Forbidden"}`; a path or
//! method no resource has is 403 `{"message":"Missing Authentication Token"}`; both, like
//! every refusal, go through the API's gateway responses (a `DEFAULT_4XX` or a specific
//! type the API put changes status, headers and body). A routed request then runs its
//! integration: `AWS_PROXY` (Lambda proxy, payload 1.0), `MOCK`, `HTTP_PROXY`, `HTTP`, or
//! `AWS` (a Lambda custom integration or a service action), the last three with their
//! integration responses chosen by selection pattern.

use std::sync::Arc;
use std::time::{Duration, Instant};

use serde_json::{json, Value as Json};

use super::super::iam::{self, IamRefusal};
use super::super::invoke::{ApiRequest, ApiResponse};
use super::super::lambda_proxy::{self, PayloadFormat};
use super::super::metrics::{self, Api};
use super::super::store::Scope;
use super::super::ApiGateway;
use super::access_log::Observed;
use super::children::{default_gateway_response, GATEWAY_RESPONSES};
use super::event::Routed;
use super::route::route;
use super::templates;
use super::usage::throttled;
use super::Snapshot;
use crate::http_client::{self, HttpRequest};
use roto_core::{AwsResult, Context};

/// A refusal or failure of the data plane: its gateway response type, message and
/// `x-amzn-ErrorType`.
pub struct Refusal {
    kind: &'static str,
    message: String,
    error_type: Option<&'static str>,
    /// Whether AWS's own body names the message `Message` (IAM's denials).
    capitalized: bool,
}

impl Refusal {
    /// A refusal of gateway response type `kind` (`MISSING_AUTHENTICATION_TOKEN`).
    pub fn new(kind: &'static str, message: impl Into<String>) -> Refusal {
        Refusal {
            kind,
            message: message.into(),
            error_type: error_type(kind),
            capitalized: false,
        }
    }

    /// Whether the caller was refused as unauthorized (401).
    pub fn is_unauthorized(&self) -> bool {
        self.kind == "UNAUTHORIZED"
    }

    /// The refusal with another `x-amzn-ErrorType`.
    fn typed(self, error_type: &'static str) -> Refusal {
        Refusal {
            error_type: Some(error_type),
            ..self
        }
    }

    /// The refusal of an `AWS_IAM` method or its signer.
    fn iam(refusal: IamRefusal) -> Refusal {
        match refusal {
            IamRefusal::Unsigned => Refusal::new(
                "MISSING_AUTHENTICATION_TOKEN",
                "Missing Authentication Token",
            ),
            IamRefusal::Credentials(e) if e.code == "ExpiredToken" => {
                Refusal::new("EXPIRED_TOKEN", e.message)
            }
            IamRefusal::Credentials(e) => {
                Refusal::new("INVALID_SIGNATURE", e.message).typed("UnrecognizedClientException")
            }
            IamRefusal::Denied(message) => Refusal {
                capitalized: true,
                ..Refusal::new("ACCESS_DENIED", message)
            },
        }
    }
}

/// The `x-amzn-ErrorType` AWS answers a refusal of gateway response type `kind` with, if
/// any.
fn error_type(kind: &str) -> Option<&'static str> {
    Some(match kind {
        "MISSING_AUTHENTICATION_TOKEN" => "MissingAuthenticationTokenException",
        "INVALID_API_KEY" => "ForbiddenException",
        "ACCESS_DENIED" => "AccessDeniedException",
        "UNAUTHORIZED" => "UnauthorizedException",
        "THROTTLED" => "TooManyRequestsException",
        "QUOTA_EXCEEDED" => "LimitExceededException",
        "BAD_REQUEST_PARAMETERS" | "BAD_REQUEST_BODY" => "BadRequestException",
        "INVALID_SIGNATURE" => "InvalidSignatureException",
        "EXPIRED_TOKEN" => "ExpiredTokenException",
        "AUTHORIZER_CONFIGURATION_ERROR" => "AuthorizerConfigurationException",
        "API_CONFIGURATION_ERROR" | "INTEGRATION_FAILURE" | "INTEGRATION_TIMEOUT" => {
            "InternalServerErrorException"
        }
        _ => return None,
    })
}

/// The percent-decoded segments of a path.
pub fn segments(path: &str) -> Vec<String> {
    path.split('/')
        .filter(|s| !s.is_empty())
        .map(|s| {
            percent_encoding::percent_decode_str(s)
                .decode_utf8_lossy()
                .into_owned()
        })
        .collect()
}

/// Whether `content_type` is one of `types` (`image/*` and `*/*` included).
pub fn is_binary(types: &Json, content_type: &str) -> bool {
    let mime = content_type
        .split(';')
        .next()
        .unwrap_or_default()
        .trim()
        .to_ascii_lowercase();
    types
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(Json::as_str)
        .any(|t| {
            let t = t.to_ascii_lowercase();
            t == mime
                || t == "*/*"
                || t.strip_suffix("/*")
                    .is_some_and(|major| mime.split('/').next() == Some(major))
        })
}

/// What the API answers for a refusal, through its gateway responses.
pub fn gateway_response(snapshot: Option<&Snapshot>, refusal: &Refusal) -> ApiResponse {
    let status_default = GATEWAY_RESPONSES
        .iter()
        .find(|(k, _)| *k == refusal.kind)
        .and_then(|(_, s)| *s)
        .unwrap_or("500");
    let custom = |kind: &str| {
        snapshot.and_then(|s| {
            s.gateway_responses
                .iter()
                .find(|g| g["responseType"] == kind)
        })
    };
    let family = if status_default.starts_with('5') {
        "DEFAULT_5XX"
    } else {
        "DEFAULT_4XX"
    };
    let doc = custom(refusal.kind)
        .or_else(|| custom(family))
        .cloned()
        .unwrap_or_else(|| default_gateway_response(refusal.kind, Some(status_default)));
    let status = doc["statusCode"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or_else(|| status_default.parse().unwrap_or(500));
    let message = serde_json::to_string(&refusal.message).unwrap_or_default();
    let template = doc["responseTemplates"]["application/json"]
        .as_str()
        .filter(|_| !(refusal.capitalized && doc["defaultResponse"] == true));
    let body = template
        .map(|t| {
            t.replace("$context.error.messageString", &message)
                .replace("$context.error.message", &refusal.message)
        })
        .unwrap_or_else(|| {
            let name = if refusal.capitalized {
                "Message"
            } else {
                "message"
            };
            format!("{{\"{name}\":{message}}}")
        });
    let mut response = ApiResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: body.into_bytes(),
    };
    for (name, value) in doc["responseParameters"].as_object().into_iter().flatten() {
        if let (Some(header), Some(v)) =
            (name.strip_prefix("gatewayresponse.header."), value.as_str())
        {
            response
                .headers
                .push((header.to_string(), v.trim_matches('\'').to_string()));
        }
    }
    if let Some(error_type) = refusal.error_type {
        response
            .headers
            .push(("x-amzn-ErrorType".into(), error_type.into()));
    }
    response
}

impl ApiGateway {
    /// Serves a request to REST API `api` (found in `account`/`region`).
    pub(in super::super) async fn serve_rest(
        &self,
        req: &ApiRequest,
        account: &str,
        region: &str,
    ) -> AwsResult<ApiResponse> {
        let (stage_name, rest) = match req.path.trim_start_matches('/').split_once('/') {
            Some((stage, rest)) => (stage.to_string(), format!("/{rest}")),
            None => (
                req.path.trim_start_matches('/').to_string(),
                "/".to_string(),
            ),
        };
        let forbidden =
            Refusal::new("MISSING_AUTHENTICATION_TOKEN", "Forbidden").typed("ForbiddenException");
        let stage_scope = Scope {
            account,
            region,
            kind: "stage",
            parent: &req.api_id,
        };
        let stage = match self.store.get(stage_scope, &stage_name)? {
            Some(stage) if !stage_name.is_empty() => stage,
            _ => return Ok(gateway_response(None, &forbidden)),
        };
        let deployment = stage["deploymentId"].as_str().unwrap_or_default();
        let Some(snapshot) = self.deployed(account, region, &req.api_id, deployment)? else {
            return Ok(gateway_response(None, &forbidden));
        };
        let ctx = Context {
            account: account.to_string(),
            region: region.to_string(),
            access_key: None,
            request_id: req.request_id.clone(),
            host: req.host.clone(),
        };
        let started = Instant::now();
        let mut observed = Observed::new(stage.get("accessLogSettings"));
        let answer = self
            .serve_stage(&ctx, req, &stage, &snapshot, &rest, &mut observed)
            .await;
        let response = answer.unwrap_or_else(|refusal| {
            if observed.wanted {
                observed.error = Some((refusal.kind, refusal.message.clone()));
            }
            gateway_response(Some(&snapshot), &refusal)
        });
        let served = metrics::Served {
            api: Api::Rest(snapshot.api["name"].as_str().unwrap_or_default()),
            stage: &stage_name,
            status: response.status,
            latency_ms: started.elapsed().as_secs_f64() * 1000.0,
            integration_ms: observed.integration.map(|(_, ms)| ms),
            bytes: req.body.len() + response.body.len(),
        };
        metrics::served(&self.env, &ctx, &served);
        if observed.wanted {
            self.write_access_log(&ctx, req, &stage, &rest, observed, &response);
        }
        Ok(response)
    }

    async fn serve_stage(
        &self,
        ctx: &Context,
        req: &ApiRequest,
        stage: &Json,
        snapshot: &Arc<Snapshot>,
        rest: &str,
        observed: &mut Observed,
    ) -> Result<ApiResponse, Refusal> {
        if !self
            .accounts
            .admit(&self.store, &ctx.account, &ctx.region)
            .unwrap_or(true)
        {
            return Err(throttled());
        }
        let missing = || {
            Refusal::new(
                "MISSING_AUTHENTICATION_TOKEN",
                "Missing Authentication Token",
            )
        };
        let matched =
            route(&snapshot.resources, &segments(rest), &req.method).ok_or_else(missing)?;
        let binary = is_binary(
            &snapshot.api["binaryMediaTypes"],
            &req.header("content-type").unwrap_or_default(),
        );
        let no_variables = json!({});
        let routed = Routed {
            req,
            account: &ctx.account,
            stage: stage["stageName"].as_str().unwrap_or_default(),
            stage_variables: stage.get("variables").unwrap_or(&no_variables),
            path: rest,
            resource_id: matched.resource["id"].as_str().unwrap_or_default(),
            resource_path: matched.resource["path"].as_str().unwrap_or("/"),
            params: &matched.params,
            binary,
            authorizer: None,
            api_key: None,
            caller: None,
        };
        observed.note_context(|| routed.request_context());
        self.throttle_stage(&routed, stage, matched.method)?;
        let caller = match matched.method["authorizationType"] == "AWS_IAM" {
            true => iam::authorize(
                &self.env,
                req,
                &routed.method_arn(&ctx.region),
                &ctx.account,
                snapshot.api["policy"].as_str(),
            )
            .map_err(Refusal::iam)?,
            false => {
                iam::check_resource_policy(
                    &self.env,
                    req,
                    &routed.method_arn(&ctx.region),
                    &ctx.account,
                    snapshot.api["policy"].as_str(),
                    matched.method["authorizationType"] == "NONE",
                )
                .map_err(Refusal::iam)?;
                None
            }
        };
        let authorized = self
            .authorize(ctx, &routed, matched.method, snapshot)
            .await?;
        let key_value = match snapshot.api["apiKeySource"].as_str() {
            Some("AUTHORIZER") => authorized.as_ref().and_then(|a| a.usage_key.clone()),
            _ => req.header("x-api-key"),
        };
        let metered = self.check_api_key(ctx, &routed, matched.method, key_value.as_deref())?;
        if let Some((key_id, plan)) = &metered {
            self.meter_key(ctx, &routed, plan, key_id, matched.method)?;
        }
        let routed = Routed {
            authorizer: authorized.as_ref().map(|a| &a.context),
            api_key: metered
                .as_ref()
                .zip(key_value.as_deref())
                .map(|((key_id, _), value)| (key_id.as_str(), value)),
            caller: caller.as_ref(),
            ..routed
        };
        observed.note_context(|| routed.request_context());
        self.validate(&routed, matched.method, snapshot)?;
        let integration = &matched.method["methodIntegration"];
        let started = Instant::now();
        let answer = self.integrate(ctx, &routed, integration, observed).await;
        if let Some((_, latency)) = &mut observed.integration {
            *latency = started.elapsed().as_secs_f64() * 1000.0;
        }
        answer
    }

    /// Calls the method's integration; notes the integration's status in `observed`.
    pub(super) async fn integrate(
        &self,
        ctx: &Context,
        routed: &Routed<'_>,
        integration: &Json,
        observed: &mut Observed,
    ) -> Result<ApiResponse, Refusal> {
        let timeout =
            Duration::from_millis(integration["timeoutInMillis"].as_u64().unwrap_or(29_000));
        let uri = integration["uri"].as_str().unwrap_or_default();
        let kind = integration["type"].as_str().unwrap_or_default();
        match kind {
            "AWS_PROXY" => {
                let function =
                    lambda_proxy::function_of_uri(uri).ok_or_else(configuration_error)?;
                let function = substitute(function, routed);
                let event = routed.event();
                return Ok(
                    match lambda_proxy::invoke(&self.env, ctx, &function, &event, timeout).await {
                        Ok(payload) => {
                            observed.integration = Some((Some(200), 0.0));
                            lambda_proxy::proxy_response(&payload, PayloadFormat::V1)
                        }
                        Err(failure) => failure,
                    },
                );
            }
            "HTTP_PROXY" => {
                let response = http_proxy(routed, integration, timeout).await?;
                observed.integration = Some((Some(response.status), 0.0));
                return Ok(response);
            }
            _ => {}
        }
        let (body, overrides) = templates::request_body(routed, integration)?;
        let answer = match kind {
            "MOCK" => {
                let status = serde_json::from_slice::<Json>(&body)
                    .ok()
                    .and_then(|t| t["statusCode"].as_u64())
                    .unwrap_or(200);
                Answer {
                    selector: status.to_string(),
                    status: u16::try_from(status).unwrap_or(200),
                    headers: Vec::new(),
                    body: Vec::new(),
                }
            }
            "HTTP" => {
                let (status, headers, body) =
                    http_call(routed, integration, body, overrides.as_ref(), timeout).await?;
                Answer {
                    selector: status.to_string(),
                    status,
                    headers,
                    body,
                }
            }
            _ => match lambda_proxy::function_of_uri(uri) {
                Some(function) => {
                    self.lambda_custom(ctx, &substitute(function, routed), &body, timeout)
                        .await?
                }
                None => {
                    let method = integration["httpMethod"].as_str().unwrap_or("POST");
                    self.service_action(ctx, uri, method, &body).await?
                }
            },
        };
        observed.integration = Some((Some(answer.status), 0.0));
        respond(routed, integration, answer)
    }

    /// A Lambda custom integration: the integration request's body is the payload; a
    /// function error's `errorMessage` selects the integration response.
    async fn lambda_custom(
        &self,
        ctx: &Context,
        function: &str,
        body: &[u8],
        timeout: Duration,
    ) -> Result<Answer, Refusal> {
        let payload: Json = if body.is_empty() {
            json!({})
        } else {
            serde_json::from_slice(body)
                .unwrap_or_else(|_| Json::String(String::from_utf8_lossy(body).into_owned()))
        };
        match lambda_proxy::invoke_raw(&self.env, ctx, function, &payload, timeout).await {
            Ok((payload, error)) => {
                let selector = match error {
                    Some(_) => serde_json::from_slice::<Json>(&payload).unwrap_or_default()
                        ["errorMessage"]
                        .as_str()
                        .unwrap_or_default()
                        .to_string(),
                    None => String::new(),
                };
                Ok(Answer {
                    selector,
                    status: 200,
                    headers: Vec::new(),
                    body: payload,
                })
            }
            Err(failure) if failure.status == 504 => Err(Refusal::new(
                "INTEGRATION_TIMEOUT",
                "Endpoint request timed out",
            )),
            Err(_) => Err(Refusal::new("INTEGRATION_FAILURE", "Internal server error")),
        }
    }
}

/// What an integration answered, before the integration response maps it.
pub struct Answer {
    /// What selection patterns match (a status code, or a Lambda error's message).
    pub selector: String,
    /// The integration's status.
    pub status: u16,
    /// The integration's headers.
    pub headers: Vec<(String, String)>,
    /// The integration's body.
    pub body: Vec<u8>,
}

/// 500 for an integration the API defines wrongly.
pub fn configuration_error() -> Refusal {
    Refusal::new("API_CONFIGURATION_ERROR", "Internal server error")
}

/// `${stageVariables.name}` in an integration's URI, replaced by the stage's variable.
fn substitute(text: &str, routed: &Routed<'_>) -> String {
    let mut out = text.to_string();
    for (name, value) in routed.stage_variables.as_object().into_iter().flatten() {
        out = out.replace(
            &format!("${{stageVariables.{name}}}"),
            value.as_str().unwrap_or_default(),
        );
    }
    out
}

/// The integration response `selector` selects: the one whose pattern matches it whole,
/// else the default (the one without a pattern).
fn select<'i>(integration: &'i Json, selector: &str) -> Option<&'i Json> {
    let responses = integration["integrationResponses"].as_object()?;
    let pattern_matches = |pattern: &str| {
        regex_lite::Regex::new(&format!("^(?s:{pattern})$")).is_ok_and(|r| r.is_match(selector))
    };
    responses
        .values()
        .find(|r| {
            r["selectionPattern"]
                .as_str()
                .is_some_and(|p| !p.is_empty() && pattern_matches(p))
        })
        .or_else(|| {
            responses
                .values()
                .find(|r| r["selectionPattern"].as_str().is_none_or(str::is_empty))
        })
}

/// The method response an integration's answer becomes, through the selected integration
/// response (its status, header mappings and template); no integration response for it is
/// AWS's 500 `Internal server error`.
fn respond(
    routed: &Routed<'_>,
    integration: &Json,
    answer: Answer,
) -> Result<ApiResponse, Refusal> {
    let chosen = select(integration, &answer.selector).ok_or_else(configuration_error)?;
    let status = chosen["statusCode"]
        .as_str()
        .and_then(|s| s.parse().ok())
        .unwrap_or(answer.status);
    let mut out = ApiResponse {
        status,
        headers: vec![("content-type".into(), "application/json".into())],
        body: answer.body,
    };
    for (name, source) in chosen["responseParameters"]
        .as_object()
        .into_iter()
        .flatten()
    {
        let Some(header) = name.strip_prefix("method.response.header.") else {
            continue;
        };
        let source = source.as_str().unwrap_or_default();
        let value =
            if let Some(literal) = source.strip_prefix('\'').and_then(|s| s.strip_suffix('\'')) {
                Some(literal.to_string())
            } else {
                source
                    .strip_prefix("integration.response.header.")
                    .and_then(|h| {
                        answer
                            .headers
                            .iter()
                            .find(|(k, _)| k.eq_ignore_ascii_case(h))
                    })
                    .map(|(_, v)| v.clone())
            };
        if let Some(value) = value {
            set_header(&mut out.headers, header, value);
        }
    }
    if let Some(rendered) = templates::response_body(routed, chosen, &out.body)? {
        out.body = rendered.text.into_bytes();
        if let Some(status) = rendered.context.response_override_status() {
            out.status = status;
        }
        for (name, value) in rendered.context.response_override_headers() {
            set_header(&mut out.headers, &name, value);
        }
    }
    Ok(out)
}

fn set_header(headers: &mut Vec<(String, String)>, name: &str, value: String) {
    headers.retain(|(k, _)| !k.eq_ignore_ascii_case(name));
    headers.push((name.to_string(), value));
}

/// The URL an HTTP integration calls: its URI with path parameters put in
/// (`http://h/{proxy}`), and the request's query string.
fn http_url(routed: &Routed<'_>, uri: &str) -> String {
    let mut url = substitute(uri, routed);
    for (name, value) in routed.params {
        let encoded: String = value
            .split('/')
            .map(|s| {
                percent_encoding::utf8_percent_encode(s, percent_encoding::NON_ALPHANUMERIC)
                    .to_string()
            })
            .collect::<Vec<_>>()
            .join("/");
        url = url
            .replace(&format!("{{{name}+}}"), &encoded)
            .replace(&format!("{{{name}}}"), &encoded);
    }
    url
}

/// Calls an HTTP integration's endpoint with the request; its status, headers and body.
/// `body` is what the endpoint receives; `overrides`, a request template's context, adds
/// its `requestOverride` headers and query parameters.
async fn http_call(
    routed: &Routed<'_>,
    integration: &Json,
    body: Vec<u8>,
    overrides: Option<&roto_vtl::Context>,
    timeout: Duration,
) -> Result<(u16, Vec<(String, String)>, Vec<u8>), Refusal> {
    let method = match integration["httpMethod"].as_str() {
        Some("ANY") | None => routed.req.method.as_str(),
        Some(m) => m,
    };
    let mut request = HttpRequest::new(
        method,
        &http_url(routed, integration["uri"].as_str().unwrap_or_default()),
    );
    request.query = routed.req.query.clone();
    request.headers = routed
        .header_pairs()
        .filter(|(k, _)| !matches!(k.as_str(), "host" | "content-length" | "connection"))
        .collect();
    request.body = body;
    if let Some(context) = overrides {
        request.headers.extend(context.request_override_headers());
        request
            .query
            .extend(context.request_override_querystrings());
    }
    match http_client::send_within(&request, timeout).await {
        Ok(response) => Ok((
            response.status.as_u16(),
            response.headers,
            response.body.to_vec(),
        )),
        Err(e) if e.contains("no answer within") => Err(Refusal::new(
            "INTEGRATION_TIMEOUT",
            "Endpoint request timed out",
        )),
        Err(_) => Err(Refusal::new("INTEGRATION_FAILURE", "Internal server error")),
    }
}

/// An HTTP_PROXY integration: the endpoint's answer, as it is.
async fn http_proxy(
    routed: &Routed<'_>,
    integration: &Json,
    timeout: Duration,
) -> Result<ApiResponse, Refusal> {
    let body = routed.req.body.to_vec();
    let (status, headers, body) = http_call(routed, integration, body, None, timeout).await?;
    let headers = headers
        .into_iter()
        .filter(|(k, _)| {
            !matches!(
                k.as_str(),
                "content-length" | "connection" | "transfer-encoding" | "date"
            )
        })
        .collect();
    Ok(ApiResponse {
        status,
        headers,
        body,
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn binary_media_types_match_exactly_or_by_wildcard() {
        let types = json!(["image/png", "application/*"]);
        assert!(is_binary(&types, "image/png"));
        assert!(is_binary(&types, "application/octet-stream; charset=x"));
        assert!(!is_binary(&types, "text/plain"));
        assert!(is_binary(&json!(["*/*"]), "text/plain"));
    }

    #[test]
    fn selection_patterns_match_whole_and_the_default_catches_the_rest() {
        let integration = json!({"integrationResponses": {
            "200": {"statusCode": "200"},
            "400": {"statusCode": "400", "selectionPattern": "Bad.*"},
            "500": {"statusCode": "500", "selectionPattern": "5\\d{2}"},
        }});
        assert_eq!(select(&integration, "").unwrap()["statusCode"], "200");
        assert_eq!(
            select(&integration, "Bad input").unwrap()["statusCode"],
            "400"
        );
        assert_eq!(select(&integration, "503").unwrap()["statusCode"], "500");
        assert_eq!(
            select(&integration, "Very Bad").unwrap()["statusCode"],
            "200"
        );
    }

    #[test]
    fn refusals_follow_the_gateway_responses() {
        let plain = gateway_response(
            None,
            &Refusal::new(
                "MISSING_AUTHENTICATION_TOKEN",
                "Missing Authentication Token",
            ),
        );
        assert_eq!(plain.status, 403);
        assert_eq!(plain.body, br#"{"message":"Missing Authentication Token"}"#);
        let snapshot = Snapshot {
            gateway_responses: vec![json!({"responseType": "DEFAULT_4XX", "statusCode": "418",
                "responseParameters": {"gatewayresponse.header.Access-Control-Allow-Origin": "'*'"},
                "responseTemplates": {"application/json": "{\"error\":$context.error.messageString}"}})],
            ..Snapshot::default()
        };
        let custom = gateway_response(
            Some(&snapshot),
            &Refusal::new(
                "MISSING_AUTHENTICATION_TOKEN",
                "Missing Authentication Token",
            ),
        );
        assert_eq!(custom.status, 418);
        assert_eq!(custom.body, br#"{"error":"Missing Authentication Token"}"#);
        assert!(custom
            .headers
            .contains(&("Access-Control-Allow-Origin".into(), "*".into())));
    }
}
