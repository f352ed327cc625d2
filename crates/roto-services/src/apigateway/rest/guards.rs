//! What a REST API checks before it integrates: the API key a method requires (sent as
//! `x-api-key`, enabled, and in a usage plan of the stage; else 403 `Forbidden`), its
//! Lambda authorizer (TOKEN or REQUEST, results cached by identity for the authorizer's
//! TTL, the policy evaluated against the method ARN: 401 `Unauthorized`, 403 `User is not
//! authorized to access this resource with an explicit deny`), and its request validator
//! (required parameters, and the body against the request model's JSON schema: 400).

use std::time::Duration;

use roto_core::timestamp::now_millis;
use roto_core::Context;
use serde_json::{json, Value as Json};

use super::super::lambda_proxy;
use super::super::policy::verdict;
use super::super::ApiGateway;
use super::children::{KEY_BY_VALUE, PLANS_OF_KEY};
use super::event::Routed;
use super::scope;
use super::serve::Refusal;
use super::Snapshot;

/// How deep a JSON schema is followed when a body is validated.
const MAX_SCHEMA_DEPTH: usize = 32;

/// What an authorizer allowed.
pub struct Allowed {
    /// The context the integration sees as `requestContext.authorizer` (with the
    /// `principalId`).
    pub context: Json,
    /// The API key its `usageIdentifierKey` named (for APIs whose `apiKeySource` is
    /// `AUTHORIZER`).
    pub usage_key: Option<String>,
}

/// A request parameter's value by its `method.request.{place}.{name}` source.
pub(super) fn parameter(routed: &Routed<'_>, source: &str) -> Option<String> {
    let rest = source.strip_prefix("method.request.")?;
    let (place, name) = rest.split_once('.')?;
    match place {
        "header" => routed.req.header(name),
        "querystring" => routed
            .req
            .query
            .iter()
            .rev()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone()),
        "path" => routed.params.get(name).cloned(),
        _ => None,
    }
}

impl ApiGateway {
    /// Checks the method's API key, if it requires one (`value`, from the `x-api-key`
    /// header or the authorizer): the key's id and the usage plan that lets it call the
    /// stage. Keys are found by value, and plans by key, through their indexes.
    pub(super) fn check_api_key(
        &self,
        ctx: &Context,
        routed: &Routed<'_>,
        method: &Json,
        value: Option<&str>,
    ) -> Result<Option<(String, Json)>, Refusal> {
        if method["apiKeyRequired"] != true {
            return Ok(None);
        }
        let forbidden = || Refusal::new("INVALID_API_KEY", "Forbidden");
        let found = |place, id: &str| self.store.get(place, id).map_err(|_| forbidden());
        let indexed = found(scope(ctx, KEY_BY_VALUE, ""), value.ok_or_else(forbidden)?)?;
        let key_id = indexed
            .as_ref()
            .and_then(|i| i["id"].as_str())
            .ok_or_else(forbidden)?;
        let key = found(scope(ctx, "apikey", ""), key_id)?.ok_or_else(forbidden)?;
        if key["enabled"] != true {
            return Err(forbidden());
        }
        let plans = self
            .store
            .list(scope(ctx, PLANS_OF_KEY, key_id))
            .map_err(|_| forbidden())?;
        for entry in plans {
            let plan_id = entry["id"].as_str().unwrap_or_default();
            let Some(plan) = found(scope(ctx, "usageplan", ""), plan_id)? else {
                continue;
            };
            let staged =
                plan["apiStages"].as_array().into_iter().flatten().any(|s| {
                    s["apiId"] == routed.req.api_id.as_str() && s["stage"] == routed.stage
                });
            if staged {
                return Ok(Some((key_id.to_string(), plan)));
            }
        }
        Err(forbidden())
    }

    /// Runs the method's Lambda authorizer, if it has one; the context it allowed with.
    pub(super) async fn authorize(
        &self,
        ctx: &Context,
        routed: &Routed<'_>,
        method: &Json,
        snapshot: &Snapshot,
    ) -> Result<Option<Allowed>, Refusal> {
        if method["authorizationType"] != "CUSTOM" {
            return Ok(None);
        }
        let authorizer = snapshot
            .authorizers
            .iter()
            .find(|a| a["id"] == method["authorizerId"])
            .ok_or_else(|| {
                Refusal::new("AUTHORIZER_CONFIGURATION_ERROR", "Internal server error")
            })?;
        let unauthorized = || Refusal::new("UNAUTHORIZED", "Unauthorized");
        let sources: Vec<&str> = authorizer["identitySource"]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .map(str::trim)
            .filter(|s| !s.is_empty())
            .collect();
        let identity: Vec<Option<String>> = sources.iter().map(|s| parameter(routed, s)).collect();
        let token_kind = authorizer["type"] == "TOKEN";
        if (token_kind || !identity.is_empty()) && identity.iter().any(Option::is_none) {
            return Err(unauthorized());
        }
        let token = identity.first().cloned().flatten().unwrap_or_default();
        if let Some(expression) = authorizer["identityValidationExpression"]
            .as_str()
            .filter(|_| token_kind)
        {
            if !regex_lite::Regex::new(&format!("^(?:{expression})$"))
                .is_ok_and(|r| r.is_match(&token))
            {
                return Err(unauthorized());
            }
        }
        let method_arn = routed.method_arn(&ctx.region);
        let ttl = authorizer["authorizerResultTtlInSeconds"]
            .as_i64()
            .unwrap_or(300);
        let cache_key = format!(
            "{}|{}",
            authorizer["id"],
            identity
                .iter()
                .flatten()
                .cloned()
                .collect::<Vec<_>>()
                .join("|")
        );
        let cached = (ttl > 0 && !identity.is_empty())
            .then(|| self.cached_authorization(&cache_key))
            .flatten();
        let result = match cached {
            Some(result) => result,
            None => {
                let result = self
                    .run_authorizer(ctx, routed, authorizer, &token, &method_arn)
                    .await?;
                if ttl > 0 && !identity.is_empty() {
                    let mut cache = self
                        .authorizations
                        .lock()
                        .unwrap_or_else(|p| p.into_inner());
                    if cache.len() >= 1024 {
                        cache.clear();
                    }
                    cache.insert(cache_key, (now_millis() + ttl * 1000, result.clone()));
                }
                result
            }
        };
        match verdict(&result["policyDocument"], &method_arn) {
            Some(true) => {}
            Some(false) => {
                return Err(Refusal::new(
                    "ACCESS_DENIED",
                    "User is not authorized to access this resource with an explicit deny",
                ))
            }
            None => {
                return Err(Refusal::new(
                    "ACCESS_DENIED",
                    "User is not authorized to access this resource",
                ))
            }
        }
        let mut context = result["context"].as_object().cloned().unwrap_or_default();
        context.insert("principalId".into(), result["principalId"].clone());
        Ok(Some(Allowed {
            context: Json::Object(context),
            usage_key: result["usageIdentifierKey"].as_str().map(str::to_string),
        }))
    }

    fn cached_authorization(&self, key: &str) -> Option<Json> {
        let cache = self
            .authorizations
            .lock()
            .unwrap_or_else(|p| p.into_inner());
        cache
            .get(key)
            .filter(|(expires, _)| *expires > now_millis())
            .map(|(_, r)| r.clone())
    }

    /// Invokes a Lambda authorizer for the request; its answer (`principalId`,
    /// `policyDocument`, `context`, `usageIdentifierKey`).
    pub(super) async fn run_authorizer(
        &self,
        ctx: &Context,
        routed: &Routed<'_>,
        authorizer: &Json,
        token: &str,
        method_arn: &str,
    ) -> Result<Json, Refusal> {
        let failure = || Refusal::new("AUTHORIZER_FAILURE", "Internal server error");
        let uri = authorizer["authorizerUri"].as_str().unwrap_or_default();
        let function = lambda_proxy::function_of_uri(uri).ok_or_else(failure)?;
        let event = if authorizer["type"] == "TOKEN" {
            json!({"type": "TOKEN", "authorizationToken": token, "methodArn": method_arn})
        } else {
            let mut event = routed.event();
            event["type"] = "REQUEST".into();
            event["methodArn"] = method_arn.into();
            if let Some(o) = event.as_object_mut() {
                o.remove("body");
                o.remove("isBase64Encoded");
            }
            event
        };
        let (payload, error) =
            lambda_proxy::invoke_raw(&self.env, ctx, function, &event, Duration::from_secs(30))
                .await
                .map_err(|_| failure())?;
        let result: Json = serde_json::from_slice(&payload).map_err(|_| failure())?;
        if error.is_some() {
            return Err(if result["errorMessage"] == "Unauthorized" {
                Refusal::new("UNAUTHORIZED", "Unauthorized")
            } else {
                failure()
            });
        }
        if !result["policyDocument"].is_object() || result.get("principalId").is_none() {
            return Err(failure());
        }
        Ok(result)
    }

    /// Applies the method's request validator, if it has one.
    pub(super) fn validate(
        &self,
        routed: &Routed<'_>,
        method: &Json,
        snapshot: &Snapshot,
    ) -> Result<(), Refusal> {
        let Some(validator) = snapshot.validators.iter().find(|v| {
            method["requestValidatorId"]
                .as_str()
                .is_some_and(|id| v["id"] == id)
        }) else {
            return Ok(());
        };
        if validator["validateRequestParameters"] == true {
            let missing: Vec<String> = method["requestParameters"]
                .as_object()
                .into_iter()
                .flatten()
                .filter(|(source, required)| {
                    **required == true && parameter(routed, source).is_none()
                })
                .filter_map(|(source, _)| source.rsplit('.').next().map(str::to_string))
                .collect();
            if !missing.is_empty() {
                return Err(Refusal::new(
                    "BAD_REQUEST_PARAMETERS",
                    format!(
                        "Missing required request parameters: [{}]",
                        missing.join(", ")
                    ),
                ));
            }
        }
        if validator["validateRequestBody"] == true {
            let content_type = routed
                .req
                .header("content-type")
                .unwrap_or_else(|| "application/json".into());
            let mime = content_type
                .split(';')
                .next()
                .unwrap_or_default()
                .trim()
                .to_ascii_lowercase();
            let model = method["requestModels"][mime.as_str()]
                .as_str()
                .or_else(|| method["requestModels"]["application/json"].as_str());
            let schema = model
                .and_then(|name| snapshot.models.iter().find(|m| m["name"] == name))
                .and_then(|m| m["schema"].as_str())
                .and_then(|s| serde_json::from_str::<Json>(s).ok());
            if let Some(schema) = schema {
                let body: Option<Json> = serde_json::from_slice(&routed.req.body).ok();
                if !body.is_some_and(|b| conforms(&b, &schema, 0)) {
                    return Err(Refusal::new("BAD_REQUEST_BODY", "Invalid request body"));
                }
            }
        }
        Ok(())
    }
}

/// Whether `value` conforms to a JSON schema (draft 4's type, required, properties,
/// additionalProperties, items, enum, lengths, bounds), followed at most
/// [`MAX_SCHEMA_DEPTH`] deep.
fn conforms(value: &Json, schema: &Json, depth: usize) -> bool {
    if depth > MAX_SCHEMA_DEPTH || !schema.is_object() {
        return true;
    }
    let type_ok = |t: &str| match t {
        "object" => value.is_object(),
        "array" => value.is_array(),
        "string" => value.is_string(),
        "integer" => value.as_f64().is_some_and(|n| n.fract() == 0.0),
        "number" => value.is_number(),
        "boolean" => value.is_boolean(),
        "null" => value.is_null(),
        _ => true,
    };
    let typed = match &schema["type"] {
        Json::String(t) => type_ok(t),
        Json::Array(ts) => ts.iter().filter_map(Json::as_str).any(type_ok),
        _ => true,
    };
    if !typed
        || schema["enum"]
            .as_array()
            .is_some_and(|e| !e.contains(value))
    {
        return false;
    }
    if let Some(s) = value.as_str() {
        let len = s.chars().count() as u64;
        if schema["minLength"].as_u64().is_some_and(|m| len < m)
            || schema["maxLength"].as_u64().is_some_and(|m| len > m)
        {
            return false;
        }
    }
    if let Some(n) = value.as_f64() {
        if schema["minimum"].as_f64().is_some_and(|m| n < m)
            || schema["maximum"].as_f64().is_some_and(|m| n > m)
        {
            return false;
        }
    }
    if let Some(object) = value.as_object() {
        let required = schema["required"]
            .as_array()
            .into_iter()
            .flatten()
            .filter_map(Json::as_str);
        if required.clone().any(|r| !object.contains_key(r)) {
            return false;
        }
        let properties = schema["properties"].as_object();
        for (k, v) in object {
            match properties.and_then(|p| p.get(k)) {
                Some(s) if !conforms(v, s, depth + 1) => return false,
                None if schema["additionalProperties"] == false => return false,
                _ => {}
            }
        }
    }
    if let (Some(items), Some(schema_items)) = (value.as_array(), schema.get("items")) {
        return items.iter().all(|i| conforms(i, schema_items, depth + 1));
    }
    true
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn bodies_are_checked_against_their_schema() {
        let schema = json!({"type": "object", "required": ["name"], "properties": {
            "name": {"type": "string", "minLength": 1}, "age": {"type": "integer", "minimum": 0},
            "tags": {"type": "array", "items": {"type": "string"}}}});
        assert!(conforms(
            &json!({"name": "rex", "age": 3, "tags": ["a"]}),
            &schema,
            0
        ));
        for bad in [
            json!({}),
            json!({"name": ""}),
            json!({"name": "x", "age": -1}),
            json!({"name": "x", "tags": [1]}),
            json!([]),
        ] {
            assert!(!conforms(&bad, &schema, 0), "{bad}");
        }
    }
}
