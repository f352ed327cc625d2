//! TestInvokeMethod and TestInvokeAuthorizer: a method, or a Lambda authorizer, run
//! against the API as it is now (no deployment needed), as the console's Test button runs
//! them, in the stage `test-invoke-stage`. A tested method skips authorization, API keys
//! and throttles, as AWS's does, but runs its request validator, integration and
//! integration responses; each answer carries a log of what ran and the latency.

use std::collections::BTreeMap;
use std::time::Instant;

use bytes::Bytes;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::super::invoke::{decode_query, ApiRequest, ApiResponse};
use super::super::policy::verdict;
use super::super::ApiGateway;
use super::access_log::Observed;
use super::event::Routed;
use super::guards::parameter;
use super::route::route;
use super::serve::{gateway_response, is_binary, segments};
use super::{missing, scope, Snapshot};

/// The stage tests run in, as AWS names it.
const TEST_STAGE: &str = "test-invoke-stage";

/// The request a test describes: `pathWithQueryString`, `body`, `headers` and
/// `multiValueHeaders` of the input, for `method`.
fn test_request(ctx: &Context, api: &str, method: &str, input: &Value) -> ApiRequest {
    let target = input.str("pathWithQueryString").unwrap_or("/");
    let (path, query) = target.split_once('?').unwrap_or((target, ""));
    let mut headers = http::HeaderMap::new();
    let mut add = |name: &str, value: &str| {
        if let (Ok(n), Ok(v)) = (
            http::HeaderName::from_bytes(name.to_ascii_lowercase().as_bytes()),
            http::HeaderValue::from_str(value),
        ) {
            headers.append(n, v);
        }
    };
    for (name, value) in input
        .get("headers")
        .and_then(Value::as_map)
        .into_iter()
        .flatten()
    {
        add(name, value.as_str().unwrap_or_default());
    }
    let multi = input.get("multiValueHeaders").and_then(Value::as_map);
    for (name, values) in multi.into_iter().flatten() {
        for value in values.as_list().unwrap_or_default() {
            add(name, value.as_str().unwrap_or_default());
        }
    }
    ApiRequest {
        api_id: api.to_string(),
        method: method.to_string(),
        path: format!("/{}", path.trim_start_matches('/')),
        raw_query: query.to_string(),
        query: decode_query(query),
        headers,
        body: Bytes::from(input.str("body").unwrap_or_default().to_string()),
        source_ip: "test-invoke-source-ip".into(),
        host: format!("{api}.execute-api.{}.amazonaws.com", ctx.region),
        request_id: ctx.request_id.clone(),
        time: now_millis(),
        caller: ctx.clone(),
    }
}

/// The stage variables a test gives, as the data plane reads them.
fn variables(input: &Value) -> Json {
    input
        .get("stageVariables")
        .map(Value::to_json)
        .unwrap_or_else(|| json!({}))
}

/// A test request as the data plane would have routed it to `resource` (none: the root)
/// in the test stage, before any authorization.
fn test_routed<'a>(
    req: &'a ApiRequest,
    account: &'a str,
    stage_variables: &'a Json,
    params: &'a BTreeMap<String, String>,
    resource: Option<&'a Json>,
) -> Routed<'a> {
    Routed {
        req,
        account,
        stage: TEST_STAGE,
        stage_variables,
        path: &req.path,
        resource_id: resource.and_then(|r| r["id"].as_str()).unwrap_or_default(),
        resource_path: resource.and_then(|r| r["path"].as_str()).unwrap_or("/"),
        params,
        binary: false,
        authorizer: None,
        api_key: None,
        caller: None,
    }
}

/// A response's headers as the single- and multi-value maps the output carries.
fn header_maps(response: &ApiResponse) -> (Value, Value) {
    let mut single = Value::map();
    let mut multi: BTreeMap<String, Vec<Value>> = BTreeMap::new();
    for (name, value) in &response.headers {
        single.insert(name.clone(), value.as_str());
        multi
            .entry(name.clone())
            .or_default()
            .push(value.as_str().into());
    }
    let multi = multi
        .into_iter()
        .fold(Value::map(), |m, (k, v)| m.with(k, Value::List(v)));
    (single, multi)
}

impl ApiGateway {
    /// TestInvokeMethod.
    pub(super) async fn test_invoke_method(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let started = Instant::now();
        let api = input.str("restApiId").unwrap_or_default();
        let snapshot = Snapshot::from_json(&self.snapshot_of(ctx, api)?);
        let resource_id = input.str("resourceId").unwrap_or_default();
        let resource = snapshot
            .resources
            .iter()
            .find(|r| r["id"] == resource_id)
            .ok_or_else(|| missing("Resource"))?;
        let http_method = input.str("httpMethod").unwrap_or_default();
        let method = &resource["resourceMethods"][http_method];
        if !method.is_object() {
            return Err(missing("Method"));
        }
        let req = test_request(ctx, api, http_method, input);
        let matched = route(&snapshot.resources, &segments(&req.path), http_method)
            .filter(|m| m.resource["id"] == resource_id);
        let params = matched.map(|m| m.params).unwrap_or_default();
        let stage_variables = variables(input);
        let routed = Routed {
            binary: is_binary(
                &snapshot.api["binaryMediaTypes"],
                &req.header("content-type").unwrap_or_default(),
            ),
            ..test_routed(
                &req,
                &ctx.account,
                &stage_variables,
                &params,
                Some(resource),
            )
        };
        let mut observed = Observed::new(None);
        let answer = match self.validate(&routed, method, &snapshot) {
            Ok(()) => {
                self.integrate(ctx, &routed, &method["methodIntegration"], &mut observed)
                    .await
            }
            Err(refusal) => Err(refusal),
        };
        let response = answer.unwrap_or_else(|refusal| gateway_response(Some(&snapshot), &refusal));
        let (headers, multi) = header_maps(&response);
        let log = format!(
            "Execution log for request {}\nStarting execution for request: {}\nHTTP Method: {http_method}, Resource Path: {}\nMethod completed with status: {}\n",
            req.request_id,
            req.request_id,
            req.path,
            response.status
        );
        Ok(Value::map()
            .with("status", i64::from(response.status))
            .with("body", String::from_utf8_lossy(&response.body).into_owned())
            .with("headers", headers)
            .with("multiValueHeaders", multi)
            .with("log", log)
            .with("latency", started.elapsed().as_millis() as i64))
    }

    /// TestInvokeAuthorizer: the Lambda authorizer run for the test request; its client
    /// status (200 allowed, 401 unauthorized, 403 denied, 500 failed), principal and
    /// policy.
    pub(super) async fn test_invoke_authorizer(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let started = Instant::now();
        let api = input.str("restApiId").unwrap_or_default();
        self.rest_api(ctx, api)?;
        let id = input.str("authorizerId").unwrap_or_default();
        let authorizer = self
            .store
            .get(scope(ctx, "authorizer", api), id)?
            .ok_or_else(|| missing("Authorizer"))?;
        let req = test_request(ctx, api, "GET", input);
        let stage_variables = variables(input);
        let params = BTreeMap::new();
        let routed = test_routed(&req, &ctx.account, &stage_variables, &params, None);
        let method_arn = format!(
            "arn:aws:execute-api:{}:{}:{api}/ESTestInvoke-stage/GET/",
            ctx.region, ctx.account
        );
        let token = authorizer["identitySource"]
            .as_str()
            .unwrap_or_default()
            .split(',')
            .next()
            .and_then(|source| parameter(&routed, source.trim()));
        let result = match token {
            None if authorizer["type"] == "TOKEN" => None,
            token => Some(
                self.run_authorizer(
                    ctx,
                    &routed,
                    &authorizer,
                    &token.unwrap_or_default(),
                    &method_arn,
                )
                .await,
            ),
        };
        let mut output = Value::map();
        let status: i64 = match &result {
            None => 401,
            Some(Err(refusal)) if refusal.is_unauthorized() => 401,
            Some(Err(_)) => 500,
            Some(Ok(answer)) => {
                output.insert(
                    "principalId",
                    answer["principalId"].as_str().unwrap_or_default(),
                );
                output.insert("policy", answer["policyDocument"].to_string());
                match verdict(&answer["policyDocument"], &method_arn) {
                    Some(true) => 200,
                    _ => 403,
                }
            }
        };
        let log = format!(
            "Execution log for request {}\nStarting authorizer: {id} for request: {}\nAuthorizer result: {status}\n",
            req.request_id, req.request_id
        );
        Ok(output
            .with("clientStatus", status)
            .with("log", log)
            .with("latency", started.elapsed().as_millis() as i64))
    }
}
