//! API Gateway HTTP APIs (the `apigatewayv2` model): the control plane, and the data plane
//! that serves deployed APIs on Roto's port.
//!
//! Every resource is a JSON document in API Gateway's one store, beside REST APIs' (API ids
//! share one space), shaped as the model's output shape (members the model does not know,
//! such as a deployment's snapshot, never reach the wire). A deployment freezes the API's
//! routes, integrations, authorizers and CORS configuration; the data plane serves a stage
//! from its deployment's snapshot, as AWS does, and `AutoDeploy` stages take a new
//! deployment after every change.
//!
//! - [`store`]: where resources sit in API Gateway's store, ids and AWS's not-found errors.
//! - [`apis`]: APIs, quick create, CORS configuration.
//! - [`children`]: routes, integrations, their responses, authorizers and models.
//! - [`stages`]: stages, deployments and snapshots.
//! - [`domains`]: custom domain names, API mappings and tags.
//! - [`stored`]: VPC links, routing rules and developer portals, stored and returned.
//! - [`openapi`]: ImportApi, ReimportApi and ExportApi (OpenAPI 3).
//! - [`fuzz`]: the fuzzer's way in to the OpenAPI reader, route matching and JWT reading.
//! - [`serve`]: the data plane (stages, CORS, integrations, trace), with [`routing`] (which
//!   route a request takes), [`event`] (Lambda's payload formats 1.0 and 2.0),
//!   [`authorize`] (JWT, Lambda and IAM authorization), [`mapping`] (integrations'
//!   request and response parameter mapping), [`services`] (AWS service integrations,
//!   `AWS_PROXY` with an `IntegrationSubtype`) and [`access_log`] (stages' access logs in
//!   CloudWatch Logs).

mod access_log;
mod apis;
mod authorize;
mod children;
mod domains;
mod event;
pub mod fuzz;
mod mapping;
mod openapi;
mod routing;
mod serve;
mod services;
mod stages;
mod store;
mod stored;

use std::io;
use std::sync::Arc;

use roto_core::timestamp::{self, now_millis, TimestampFormat};

use super::throttle::AccountThrottle;
use super::Store;
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "apigatewayv2",
    model: "apigatewayv2",
    query_model: None,
    signing_names: &["apigateway"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

/// The HTTP API half of API Gateway.
pub struct ApiGatewayV2 {
    env: Arc<Env>,
    store: Store,
    caches: authorize::Caches,
    /// The account-level throttle, shared with REST APIs.
    accounts: Arc<AccountThrottle>,
}

impl ApiGatewayV2 {
    /// The service; API Gateway's table is created on the first call, not here.
    pub fn new(env: Arc<Env>, accounts: Arc<AccountThrottle>) -> io::Result<ApiGatewayV2> {
        Ok(ApiGatewayV2 {
            store: super::store::open(env.clone()),
            env,
            caches: authorize::Caches::default(),
            accounts,
        })
    }

    fn control(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        match operation {
            "CreateApi" => self.create_api(ctx, input),
            "GetApi" => self.get_api(ctx, input),
            "GetApis" => self.get_apis(ctx, input),
            "UpdateApi" => self.update_api(ctx, input),
            "DeleteApi" => self.delete_api(ctx, input),
            "DeleteCorsConfiguration" => self.delete_cors_configuration(ctx, input),
            "ImportApi" => self.import_api(ctx, input),
            "ReimportApi" => self.reimport_api(ctx, input),
            "ExportApi" => self.export_api(ctx, input),
            _ => self.children(ctx, operation, input),
        }
    }

    fn children(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        if let Some(output) = self.child_operation(ctx, operation, input)? {
            return Ok(output);
        }
        if let Some(output) = self.stage_operation(ctx, operation, input)? {
            return Ok(output);
        }
        if let Some(output) = self.domain_operation(ctx, operation, input)? {
            return Ok(output);
        }
        if let Some(output) = self.stored_operation(ctx, operation, input)? {
            return Ok(output);
        }
        Err(AwsError::not_implemented(operation))
    }
}

impl Service for ApiGatewayV2 {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move {
            let output = self.control(ctx, operation, &request.input)?;
            Ok(Response::new(output))
        })
    }
}

/// `BadRequestException` with AWS's message.
fn bad_request(message: impl Into<String>) -> AwsError {
    AwsError::new("BadRequestException", message).with_status(400)
}

/// `ConflictException` with AWS's message.
fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new("ConflictException", message).with_status(409)
}

/// The time form the model's `__timestampIso8601` members carry (whole seconds, as AWS).
fn now_iso() -> String {
    let whole_seconds = now_millis() / 1000 * 1000;
    timestamp::format(whole_seconds, TimestampFormat::Iso8601).replace(".000Z", "Z")
}

/// The members of `input` the caller gave, except those bound to the URI (ids of the path).
fn body_members(input: &Value, uri_members: &[&str]) -> Vec<(String, Value)> {
    input
        .as_map()
        .into_iter()
        .flatten()
        .filter(|(k, v)| !uri_members.contains(&k.as_str()) && !matches!(v, Value::Null))
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The members an operation's input binds to its URI or query string (path ids, paging),
/// which are never stored.
fn bound_members(operation: &str) -> Vec<&'static str> {
    let model = SPEC.model();
    let Some(input) = model.operation(operation).and_then(|op| op.input.as_ref()) else {
        return Vec::new();
    };
    model
        .resolve(input)
        .members
        .iter()
        .filter(|(_, m)| m.location.is_some())
        .map(|(name, _)| name)
        .collect()
}

/// `doc` with every member of `input` the caller gave (an update), path ids excepted.
fn merged(mut doc: Value, input: &Value, uri_members: &[&str]) -> Value {
    for (k, v) in body_members(input, uri_members) {
        doc.insert(k, v);
    }
    doc
}

/// One page of a list operation (`MaxResults` is a string on the wire), as `Items` and
/// `NextToken`.
fn page(items: Vec<Value>, input: &Value) -> AwsResult<Value> {
    let limit = match input.str("MaxResults") {
        Some(m) => m
            .parse::<usize>()
            .ok()
            .filter(|n| *n > 0)
            .ok_or_else(|| bad_request(format!("Invalid MaxResults value: {m}")))?,
        None => 500,
    };
    let (items, next) = crate::paging::page(items, limit, input.str("NextToken"), || {
        bad_request("Invalid NextToken")
    })?;
    Ok(Value::map()
        .with("Items", items)
        .with_opt("NextToken", next))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn updates_merge_given_members_only() {
        let doc = Value::map().with("Name", "a").with("Description", "d");
        let input = Value::map()
            .with("ApiId", "x")
            .with("Name", "b")
            .with("Version", Value::Null);
        let out = merged(doc, &input, &["ApiId"]);
        assert_eq!(out.str("Name"), Some("b"));
        assert_eq!(out.str("Description"), Some("d"));
        assert!(out.get("ApiId").is_none() && out.get("Version").is_none());
        assert!(now_iso().ends_with('Z') && !now_iso().contains('.'));
    }

    #[test]
    fn pages_carry_a_next_token_while_items_remain() {
        let items: Vec<Value> = (0..3).map(Value::Integer).collect();
        let first = page(items.clone(), &Value::map().with("MaxResults", "2")).unwrap();
        assert_eq!(
            first.get("Items").and_then(Value::as_list).map(<[_]>::len),
            Some(2)
        );
        let token = first.str("NextToken").unwrap().to_string();
        let rest = page(items.clone(), &Value::map().with("NextToken", token)).unwrap();
        assert_eq!(
            rest.get("Items").and_then(Value::as_list).map(<[_]>::len),
            Some(1)
        );
        assert!(page(items, &Value::map().with("MaxResults", "x")).is_err());
    }
}
