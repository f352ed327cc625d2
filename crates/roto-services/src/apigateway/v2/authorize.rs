//! Route authorization on the data plane: JWT authorizers and Lambda (REQUEST) authorizers,
//! as HTTP APIs run them.
//!
//! - JWT: the token from the identity source (`Bearer ` optional) must be an RS256, RS384
//!   or RS512 JWT signed by a key of the issuer's JWKS (found through
//!   `{issuer}/.well-known/openid-configuration`, fetched with Roto's HTTP client and kept
//!   for an hour, fetched again for an unknown `kid`), with that `iss`, an `aud` (or
//!   `client_id`) among the audiences, and `exp`/`nbf` valid on the server clock; else 401
//!   `{"message":"Unauthorized"}`. A route's `AuthorizationScopes` want one of them in the
//!   token's `scope` (or `scp`); else 403 `{"message":"Forbidden"}`.
//! - IAM: a signed request, and under `--enforce-iam` IAM's decision on
//!   `execute-api:Invoke` for the route's ARN (see [`super::super::iam`]); else 403
//!   `{"message":"Forbidden"}`.
//! - Lambda: a missing identity source is 401; the function gets the payload format 1.0 or
//!   2.0 authorizer event and answers `{"isAuthorized": ...}` (simple responses) or an IAM
//!   policy, evaluated against the route's ARN; a refusal is 403, a failing function 500.
//!   Answers are cached by the identity sources' values for `AuthorizerResultTtlInSeconds`.

use std::collections::HashMap;
use std::sync::Mutex;
use std::time::Duration;

use base64::Engine;
use roto_core::timestamp::now_millis;
use roto_core::{Context, Value};
use serde_json::{json, Map, Value as Json};

use super::super::iam;
use super::super::invoke::{ApiRequest, ApiResponse};
use super::super::lambda_proxy;
use super::super::policy::verdict;
use super::event::Target;
use super::serve::internal_error;
use super::stages::Deployed;
use super::ApiGatewayV2;
use crate::http_client::{self, HttpRequest};

/// How long a Lambda authorizer may take (AWS's 10 seconds).
const AUTHORIZER_TIMEOUT: Duration = Duration::from_secs(10);

/// How long a fetched JWKS is used before it is fetched again.
const JWKS_TTL_MS: i64 = 3_600_000;

/// A Lambda authorizer's answer (what it says of the caller, or the refusal's status),
/// and until when it holds.
type CachedAnswer = (i64, Result<Json, u16>);

/// The data plane's caches: JWKS by issuer, Lambda authorizer answers by identity.
#[derive(Default)]
pub(super) struct Caches {
    jwks: Mutex<HashMap<String, (i64, Vec<Json>)>>,
    answers: Mutex<HashMap<String, CachedAnswer>>,
}

impl Caches {
    /// Forgets the cached authorizer answers of an API.
    pub(super) fn reset_api(&self, api: &str) {
        if let Ok(mut answers) = self.answers.lock() {
            answers.retain(|k, _| !k.starts_with(&format!("{api}/")));
        }
    }
}

fn unauthorized(description: &str) -> ApiResponse {
    ApiResponse::message(401, "Unauthorized").with_header(
        "www-authenticate",
        format!("Bearer scope=\"\" error=\"invalid_token\" error_description=\"{description}\""),
    )
}

fn forbidden() -> ApiResponse {
    ApiResponse::message(403, "Forbidden")
}

/// The value of one identity source (`$request.header.X`, `$request.querystring.q`,
/// `$context.x`, `$stageVariables.x`).
fn identity_value(source: &str, target: &Target<'_>) -> Option<String> {
    let source = source.trim();
    if let Some(name) = source.strip_prefix("$request.header.") {
        let values = target.req.header_values(&name.to_ascii_lowercase());
        return (!values.is_empty()).then(|| values.join(","));
    }
    if let Some(name) = source.strip_prefix("$request.querystring.") {
        let values: Vec<&str> = target
            .req
            .query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.as_str())
            .collect();
        return (!values.is_empty()).then(|| values.join(","));
    }
    if let Some(name) = source.strip_prefix("$stageVariables.") {
        return target
            .stage_variables
            .and_then(|v| v.str(name))
            .map(str::to_string);
    }
    match source {
        "$context.routeKey" => Some(target.route_key.to_string()),
        "$context.stage" => Some(target.stage.to_string()),
        "$context.httpMethod" => Some(target.req.method.clone()),
        _ => None,
    }
}

fn b64url(part: &str) -> Option<Vec<u8>> {
    base64::engine::general_purpose::URL_SAFE_NO_PAD
        .decode(part.trim_end_matches('='))
        .ok()
}

/// Reads `text` as a JWT and checks its claims, as the fuzzer drives it.
pub(super) fn fuzz_token(text: &str) {
    if let Some(token) = parse_token(text) {
        let _ = check_claims(&token.claims, "https://issuer", &["app".to_string()], 0);
        scopes_of(&token.claims);
        claims_as_strings(&token.claims);
    }
}

/// A JWT's header, claims, signed part and signature.
struct Token {
    header: Json,
    claims: Json,
    signed: String,
    signature: Vec<u8>,
}

fn parse_token(token: &str) -> Option<Token> {
    let mut parts = token.split('.');
    let (h, c, s) = (parts.next()?, parts.next()?, parts.next()?);
    if parts.next().is_some() {
        return None;
    }
    Some(Token {
        header: serde_json::from_slice(&b64url(h)?).ok()?,
        claims: serde_json::from_slice(&b64url(c)?).ok()?,
        signed: format!("{h}.{c}"),
        signature: b64url(s)?,
    })
}

/// Whether `signature` over `signed` verifies with the JWK `key` under `alg`.
fn verify_rsa(key: &Json, alg: &str, signed: &[u8], signature: &[u8]) -> bool {
    use rsa::{BigUint, Pkcs1v15Sign, RsaPublicKey};
    use sha2::{Digest, Sha256, Sha384, Sha512};
    let part = |name: &str| key[name].as_str().and_then(b64url);
    let (Some(n), Some(e)) = (part("n"), part("e")) else {
        return false;
    };
    let Ok(public) = RsaPublicKey::new(BigUint::from_bytes_be(&n), BigUint::from_bytes_be(&e))
    else {
        return false;
    };
    let result = match alg {
        "RS256" => public.verify(
            Pkcs1v15Sign::new::<Sha256>(),
            &Sha256::digest(signed),
            signature,
        ),
        "RS384" => public.verify(
            Pkcs1v15Sign::new::<Sha384>(),
            &Sha384::digest(signed),
            signature,
        ),
        "RS512" => public.verify(
            Pkcs1v15Sign::new::<Sha512>(),
            &Sha512::digest(signed),
            signature,
        ),
        _ => return false,
    };
    result.is_ok()
}

/// Checks a token's claims against the authorizer's issuer and audiences at `now` (epoch
/// seconds); `Err` says what failed.
fn check_claims(claims: &Json, issuer: &str, audiences: &[String], now: i64) -> Result<(), String> {
    if claims["iss"].as_str() != Some(issuer) {
        return Err("the token's issuer is not the authorizer's".into());
    }
    let mut given: Vec<&str> = match &claims["aud"] {
        Json::String(a) => vec![a.as_str()],
        Json::Array(a) => a.iter().filter_map(Json::as_str).collect(),
        _ => Vec::new(),
    };
    given.extend(claims["client_id"].as_str());
    if !audiences.is_empty() && !given.iter().any(|a| audiences.iter().any(|w| w == a)) {
        return Err("the token's audience is not among the authorizer's".into());
    }
    if claims["exp"].as_i64().is_some_and(|exp| exp <= now) {
        return Err("the token has expired".into());
    }
    if claims["nbf"].as_i64().is_some_and(|nbf| nbf > now) {
        return Err("the token is not valid yet".into());
    }
    Ok(())
}

/// The scopes a token grants (`scope`, space-separated, or `scp`).
fn scopes_of(claims: &Json) -> Vec<String> {
    match (&claims["scope"], &claims["scp"]) {
        (Json::String(s), _) => s.split_whitespace().map(str::to_string).collect(),
        (_, Json::Array(a)) => a
            .iter()
            .filter_map(|s| s.as_str().map(str::to_string))
            .collect(),
        (_, Json::String(s)) => s.split_whitespace().map(str::to_string).collect(),
        _ => Vec::new(),
    }
}

/// Claims as the events carry them: every value a string.
fn claims_as_strings(claims: &Json) -> Json {
    let map: Map<String, Json> = claims
        .as_object()
        .into_iter()
        .flatten()
        .map(|(k, v)| {
            let text = match v {
                Json::String(s) => s.clone(),
                Json::Array(a) => format!(
                    "[{}]",
                    a.iter()
                        .map(|x| x.as_str().map_or_else(|| x.to_string(), str::to_string))
                        .collect::<Vec<_>>()
                        .join(" ")
                ),
                other => other.to_string(),
            };
            (k.clone(), Json::String(text))
        })
        .collect();
    Json::Object(map)
}

impl ApiGatewayV2 {
    /// Runs the route's authorizer: `Ok` with what it says of the caller (for the event's
    /// `requestContext.authorizer`), `Err` with the refusal to answer.
    pub(super) async fn authorize(
        &self,
        ctx: &Context,
        deployed: &Deployed,
        route: &Value,
        target: &Target<'_>,
    ) -> Result<Option<Json>, ApiResponse> {
        let kind = route.str("AuthorizationType").unwrap_or("NONE");
        if kind == "AWS_IAM" {
            return self.authorize_iam(ctx, target);
        }
        if !matches!(kind, "JWT" | "CUSTOM") {
            return Ok(None);
        }
        let authorizer = route
            .str("AuthorizerId")
            .and_then(|id| {
                deployed
                    .authorizers
                    .iter()
                    .find(|a| a.str("AuthorizerId") == Some(id))
            })
            .ok_or_else(internal_error)?;
        let sources: Vec<&str> = authorizer
            .get("IdentitySource")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let identity: Vec<Option<String>> =
            sources.iter().map(|s| identity_value(s, target)).collect();
        if identity.iter().any(Option::is_none) {
            return Err(unauthorized("the identity source is missing"));
        }
        let identity: Vec<String> = identity.into_iter().flatten().collect();
        if kind == "JWT" {
            let scopes = route.get("AuthorizationScopes");
            return self
                .jwt(
                    authorizer,
                    identity.first().map_or("", String::as_str),
                    scopes,
                )
                .await
                .map(Some);
        }
        self.lambda_authorizer(ctx, authorizer, target, &identity)
            .await
            .map(Some)
    }

    /// An `AWS_IAM` route: any refusal is 403 `Forbidden`; the signer is the event's
    /// `requestContext.authorizer.iam`.
    fn authorize_iam(
        &self,
        ctx: &Context,
        target: &Target<'_>,
    ) -> Result<Option<Json>, ApiResponse> {
        let arn = route_arn(ctx, target.req, target.stage);
        let caller = iam::authorize(&self.env, target.req, &arn, &ctx.account, None)
            .map_err(|_| forbidden())?;
        Ok(caller.map(|caller| {
            json!({"iam": {
                "accessKey": target.req.caller.access_key,
                "accountId": caller.account,
                "callerId": caller.user_id,
                "cognitoIdentity": null,
                "principalOrgId": null,
                "userArn": caller.arn,
                "userId": caller.user_id,
            }})
        }))
    }

    async fn jwt(
        &self,
        authorizer: &Value,
        token: &str,
        wanted: Option<&Value>,
    ) -> Result<Json, ApiResponse> {
        let token = token.strip_prefix("Bearer ").unwrap_or(token).trim();
        let parsed = parse_token(token).ok_or_else(|| unauthorized("the token is not a JWT"))?;
        let config = authorizer.get("JwtConfiguration");
        let issuer = config.and_then(|c| c.str("Issuer")).unwrap_or_default();
        let audiences: Vec<String> = config
            .and_then(|c| c.get("Audience"))
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|a| a.as_str().map(str::to_string))
            .collect();
        let alg = parsed.header["alg"].as_str().unwrap_or_default();
        let kid = parsed.header["kid"].as_str();
        let verified = self
            .jwks_key(issuer, kid)
            .await
            .is_some_and(|key| verify_rsa(&key, alg, parsed.signed.as_bytes(), &parsed.signature));
        if !verified {
            return Err(unauthorized(
                "the token's signature does not verify with the issuer's keys",
            ));
        }
        check_claims(&parsed.claims, issuer, &audiences, now_millis() / 1000)
            .map_err(|e| unauthorized(&e))?;
        let scopes = scopes_of(&parsed.claims);
        let wanted: Vec<&str> = wanted
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if !wanted.is_empty() && !wanted.iter().any(|w| scopes.iter().any(|s| s == w)) {
            return Err(forbidden());
        }
        let scopes = if scopes.is_empty() {
            Json::Null
        } else {
            json!(scopes)
        };
        Ok(json!({"jwt": {"claims": claims_as_strings(&parsed.claims), "scopes": scopes}}))
    }

    /// The issuer's key with id `kid` (the only key when the token names none).
    async fn jwks_key(&self, issuer: &str, kid: Option<&str>) -> Option<Json> {
        let pick = |keys: &[Json]| {
            keys.iter()
                .find(|k| kid.is_none_or(|kid| k["kid"].as_str() == Some(kid)))
                .cloned()
        };
        let now = now_millis();
        let cached = self.caches.jwks.lock().ok()?.get(issuer).cloned();
        if let Some((_, keys)) = cached.filter(|(at, _)| now - at < JWKS_TTL_MS) {
            if let Some(key) = pick(&keys) {
                return Some(key);
            }
        }
        let keys = fetch_jwks(issuer).await?;
        let key = pick(&keys);
        self.caches
            .jwks
            .lock()
            .ok()?
            .insert(issuer.to_string(), (now, keys));
        key
    }

    async fn lambda_authorizer(
        &self,
        ctx: &Context,
        authorizer: &Value,
        target: &Target<'_>,
        identity: &[String],
    ) -> Result<Json, ApiResponse> {
        let ttl = authorizer.int("AuthorizerResultTtlInSeconds").unwrap_or(0);
        let id = authorizer.str("AuthorizerId").unwrap_or_default();
        let cache_key = format!("{}/{id}/{}", target.req.api_id, identity.join("\u{0}"));
        let now = now_millis();
        if ttl > 0 && !identity.is_empty() {
            let answers = self.caches.answers.lock().map_err(|_| internal_error())?;
            if let Some((expires, answer)) = answers.get(&cache_key) {
                if *expires > now {
                    return answer.clone().map_err(|_| forbidden());
                }
            }
        }
        let answer = self
            .run_lambda_authorizer(ctx, authorizer, target, identity)
            .await?;
        if ttl > 0 && !identity.is_empty() {
            let mut answers = self.caches.answers.lock().map_err(|_| internal_error())?;
            answers.insert(
                cache_key,
                (now + ttl * 1000, answer.clone().map_err(|r| r.status)),
            );
        }
        answer
    }

    /// Invokes the authorizer's function; `Ok(Ok)` allowed, `Ok(Err)` refused.
    async fn run_lambda_authorizer(
        &self,
        ctx: &Context,
        authorizer: &Value,
        target: &Target<'_>,
        identity: &[String],
    ) -> Result<Result<Json, ApiResponse>, ApiResponse> {
        let function = authorizer
            .str("AuthorizerUri")
            .and_then(lambda_proxy::function_of_uri)
            .ok_or_else(internal_error)?;
        let route_arn = route_arn(ctx, target.req, target.stage);
        let v2 = authorizer.str("AuthorizerPayloadFormatVersion") == Some("2.0");
        let event = if v2 {
            let mut event = target.v2();
            if let Some(o) = event.as_object_mut() {
                o.remove("body");
                o.remove("isBase64Encoded");
            }
            event["type"] = "REQUEST".into();
            event["routeArn"] = route_arn.clone().into();
            event["identitySource"] = json!(identity);
            event
        } else {
            let mut event = target.v1();
            event["type"] = "REQUEST".into();
            event["methodArn"] = route_arn.clone().into();
            event["identitySource"] = identity.join(",").into();
            event
        };
        let payload = lambda_proxy::invoke(&self.env, ctx, function, &event, AUTHORIZER_TIMEOUT)
            .await
            .map_err(|_| internal_error())?;
        let answer: Json = serde_json::from_slice(&payload).map_err(|_| internal_error())?;
        let simple = v2 && authorizer.bool("EnableSimpleResponses") == Some(true);
        let allowed = if simple {
            answer["isAuthorized"]
                .as_bool()
                .ok_or_else(internal_error)?
        } else {
            verdict(&answer["policyDocument"], &route_arn) == Some(true)
        };
        if !allowed {
            return Ok(Err(forbidden()));
        }
        let mut context = answer["context"].clone();
        if context.is_null() {
            context = json!({});
        }
        if let (Some(principal), Some(o)) =
            (answer["principalId"].as_str(), context.as_object_mut())
        {
            o.insert("principalId".into(), principal.into());
        }
        Ok(Ok(json!({ "lambda": context })))
    }
}

/// The ARN a Lambda authorizer is asked about:
/// `arn:aws:execute-api:{region}:{account}:{apiId}/{stage}/{method}{path}`.
fn route_arn(ctx: &Context, req: &ApiRequest, stage: &str) -> String {
    let path = match stage {
        "$default" => req.path.clone(),
        _ => req
            .path
            .strip_prefix(&format!("/{stage}"))
            .unwrap_or(&req.path)
            .to_string(),
    };
    format!(
        "arn:aws:execute-api:{}:{}:{}/{stage}/{}{path}",
        ctx.region, ctx.account, req.api_id, req.method
    )
}

/// The keys of an issuer's JWKS: `{issuer}/.well-known/openid-configuration`'s `jwks_uri`.
async fn fetch_jwks(issuer: &str) -> Option<Vec<Json>> {
    let discovery = format!(
        "{}/.well-known/openid-configuration",
        issuer.trim_end_matches('/')
    );
    let get = |url: String| async move {
        let answer = http_client::send(&HttpRequest::new("GET", &url))
            .await
            .ok()?;
        if !answer.status.is_success() {
            return None;
        }
        serde_json::from_slice::<Json>(&answer.body).ok()
    };
    let configuration = get(discovery).await?;
    let jwks = get(configuration["jwks_uri"].as_str()?.to_string()).await?;
    jwks["keys"].as_array().cloned()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn claims_are_checked_against_issuer_audience_and_clock() {
        let claims =
            json!({"iss": "https://i", "aud": ["app"], "exp": 200, "nbf": 100, "scope": "a b"});
        let audiences = vec!["app".to_string()];
        assert!(check_claims(&claims, "https://i", &audiences, 150).is_ok());
        assert!(check_claims(&claims, "https://other", &audiences, 150).is_err());
        assert!(check_claims(&claims, "https://i", &["x".to_string()], 150).is_err());
        assert!(check_claims(&claims, "https://i", &audiences, 250).is_err());
        assert!(check_claims(&claims, "https://i", &audiences, 50).is_err());
        let by_client = json!({"iss": "https://i", "client_id": "app"});
        assert!(check_claims(&by_client, "https://i", &audiences, 0).is_ok());
        assert_eq!(scopes_of(&claims), ["a", "b"]);
        assert_eq!(claims_as_strings(&claims)["exp"], "200");
        assert_eq!(claims_as_strings(&claims)["aud"], "[app]");
    }

    #[test]
    fn tokens_split_into_header_claims_and_signature() {
        let token = "eyJhbGciOiJSUzI1NiJ9.eyJzdWIiOiJ4In0.c2ln";
        let parsed = parse_token(token).unwrap();
        assert_eq!(parsed.header["alg"], "RS256");
        assert_eq!(parsed.claims["sub"], "x");
        assert_eq!(parsed.signature, b"sig");
        assert!(parse_token("a.b").is_none() && parse_token("x.y.z.w").is_none());
    }
}
