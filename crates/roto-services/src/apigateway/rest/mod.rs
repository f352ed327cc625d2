//! REST APIs' control plane (v1): the operations of model `apigateway`, over documents in
//! [`super::store`] shaped like the model's outputs (so a handler answers a document as
//! it is stored; members the output shape lacks, such as a deployment's snapshot, are
//! never encoded).
//!
//! - [`apis`]: RestApis (the root resource is created with the API), tags.
//! - [`resources`]: Resources and, nested in each, its Methods, MethodResponses,
//!   Integrations and IntegrationResponses, as `GetResources?embed=methods` answers them.
//! - [`children`]: what else belongs to an API (Models, RequestValidators, Authorizers,
//!   GatewayResponses with AWS's defaults, documentation) and to the account (ApiKeys,
//!   UsagePlans and their keys, DomainNames and BasePathMappings, client certificates,
//!   VPC links), through one create/get/list/update/delete over a table of kinds.
//! - [`deployments`]: Deployments (a snapshot of the API the data plane serves) and Stages.
//! - [`openapi`]: ImportRestApi, PutRestApi and GetExport (OpenAPI 3 and Swagger 2).
//! - [`imports`]: ImportApiKeys (CSV) and ImportDocumentationParts.
//! - [`sdks`]: SDK types, and GetSdk (an empty archive: Roto generates no SDKs).
//! - [`access_associations`]: domain name access associations, stored.
//! - [`test_invoke`]: TestInvokeMethod and TestInvokeAuthorizer.
//!
//! The data plane: [`serve`] (stage, routing by [`route`], integrations, gateway
//! responses), [`guards`] (API keys, Lambda authorizers, request validators),
//! [`templates`] (VTL mapping templates), [`services`] (AWS service integrations),
//! [`usage`] (usage plans' throttles and quotas, GetUsage and UpdateUsage), [`event`]
//! (the Lambda proxy event, payload format 1.0) and [`access_log`] (stages' access logs).

mod access_associations;
mod access_log;
mod apis;
mod children;
mod deployments;
mod event;
mod guards;
mod imports;
mod openapi;
mod resources;
mod route;
mod sdks;
mod serve;
mod services;
mod templates;
mod test_invoke;
mod usage;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::Value as Json;

use super::store::Scope;
use super::ApiGateway;

pub(super) use deployments::Snapshot;
pub(super) use openapi::fuzz_definition;
pub(super) use usage::Meter;

/// A document as the output encodes it.
fn output(doc: &Json) -> Value {
    Value::from_json(doc)
}

/// Now, in the epoch seconds API Gateway's timestamps carry.
fn now_secs() -> i64 {
    now_millis() / 1000
}

/// The scope of documents of `kind` under `parent` in the caller's account and region.
fn scope<'a>(ctx: &'a Context, kind: &'a str, parent: &'a str) -> Scope<'a> {
    Scope {
        account: &ctx.account,
        region: &ctx.region,
        kind,
        parent,
    }
}

/// A required string member, or AWS's BadRequestException naming it.
fn required<'v>(input: &'v Value, member: &str) -> AwsResult<&'v str> {
    input
        .str(member)
        .filter(|s| !s.is_empty())
        .ok_or_else(|| super::bad_request(format!("{member} must not be empty")))
}

/// The input as a document without the members that only address it (URI and query
/// members), with `renames` applied (`integrationHttpMethod` is stored as `httpMethod`).
fn document(input: &Value, addressing: &[&str], renames: &[(&str, &str)]) -> Json {
    let mut doc = input.to_json();
    if let Json::Object(o) = &mut doc {
        for member in addressing {
            o.remove(*member);
        }
        for (from, to) in renames {
            if let Some(v) = o.remove(*from) {
                o.insert((*to).to_string(), v);
            }
        }
    }
    doc
}

/// One page of `items` by `position` and `limit` (25 by default, at most 500), as every
/// REST API list answers: `{"items": [...], "position": next}`.
fn page(items: Vec<Json>, input: &Value) -> AwsResult<Value> {
    let (page, next) = page_of(items.iter().map(output).collect(), input)?;
    Ok(Value::map()
        .with("items", Value::List(page))
        .with_opt("position", next))
}

/// The page of `items` that `position` and `limit` choose, and the next position.
fn page_of(items: Vec<Value>, input: &Value) -> AwsResult<(Vec<Value>, Option<String>)> {
    let limit = input.int("limit").unwrap_or(25);
    if !(1..=500).contains(&limit) {
        return Err(super::bad_request(
            "Invalid limit parameter: must be between 1 and 500",
        ));
    }
    crate::paging::page(
        items,
        usize::try_from(limit).unwrap_or(25),
        input.str("position"),
        || super::bad_request("Invalid position parameter"),
    )
}

impl ApiGateway {
    /// Runs a REST API control-plane operation; `None` when the operation is not one.
    pub(super) async fn rest_call(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> Option<AwsResult<Value>> {
        if let Some(result) = self.api_call(ctx, operation, input) {
            return Some(result);
        }
        if let Some(result) = self.resource_call(ctx, operation, input) {
            return Some(result);
        }
        if let Some(result) = self.deployment_call(ctx, operation, input) {
            return Some(result);
        }
        if let Some(result) = self.openapi_call(ctx, operation, input) {
            return Some(result);
        }
        if let Some(result) = self.sdk_call(ctx, operation, input) {
            return Some(result);
        }
        if let Some(result) = self.access_association_call(ctx, operation, input) {
            return Some(result);
        }
        Some(match operation {
            "ImportApiKeys" => self.import_api_keys(ctx, input),
            "ImportDocumentationParts" => self.import_documentation_parts(ctx, input),
            "TestInvokeMethod" => self.test_invoke_method(ctx, input).await,
            "TestInvokeAuthorizer" => self.test_invoke_authorizer(ctx, input).await,
            _ => return self.child_call(ctx, operation, input),
        })
    }

    /// The REST API `id` in the caller's account and region, or AWS's NotFoundException.
    fn rest_api(&self, ctx: &Context, id: &str) -> AwsResult<Json> {
        self.store
            .get(scope(ctx, "restapi", ""), id)?
            .ok_or_else(|| {
                super::not_found(format!(
                    "Invalid API identifier specified {}:{id}",
                    ctx.account
                ))
            })
    }
}

/// `NotFoundException` with AWS's words for a missing thing (`Invalid Stage identifier
/// specified`).
fn missing(what: &str) -> AwsError {
    super::not_found(format!("Invalid {what} identifier specified"))
}
