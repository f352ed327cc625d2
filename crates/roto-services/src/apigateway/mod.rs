//! API Gateway: REST APIs (v1, model `apigateway`) and HTTP APIs (v2, model
//! `apigatewayv2`), one backend with one id space, as AWS serves them.
//!
//! Both control planes speak rest-json through the generic codec; this module registers
//! the v1 service, and `v2/` the v2 service, over the same store. A deployed API answers
//! on Roto's own port: the router hands every request for `{apiId}.execute-api.{domain}`,
//! `{apiId}.execute-api.{region}.amazonaws.com`, `{apiId}.execute-api.localhost.localstack.cloud`
//! or the path `/_aws/execute-api/{apiId}/...` to this service as `ExecuteApi`, and
//! [`invoke`] serves it: REST APIs first, then HTTP APIs (`v2::ApiGatewayV2::serve`), else 404.
//!
//! - [`invoke`]: the data plane's entry and its interface ([`invoke::ApiRequest`],
//!   [`invoke::ApiResponse`]), shared by both API kinds.
//! - [`lambda_proxy`]: Lambda proxy integrations (invoking the function through the
//!   dispatcher, reading its proxy response, AWS's 502 and 504), shared by both.
//! - [`policy`]: an authorizer's policy document judged against the invoked ARN, shared
//!   by both.
//! - [`iam`]: `AWS_IAM` authorization (a signature, and under `--enforce-iam` IAM's
//!   decision on `execute-api:Invoke`), shared by both.
//! - [`store`]: the documents both keep (one table, created on the first call).
//! - [`throttle`]: token buckets, and the account-level throttle both apply.
//! - [`access_log`]: stages' access logs in CloudWatch Logs, written for both.
//! - [`metrics`]: the metrics both publish in `AWS/ApiGateway`.
//! - [`fuzz`]: the fuzzer's way in to REST APIs' OpenAPI reader.
//! - [`v2`]: HTTP APIs, a service of their own over the same store; the entry asks its
//!   `serve` for ids no REST API has.

mod access_log;
pub mod fuzz;
mod iam;
pub mod invoke;
pub mod lambda_proxy;
mod metrics;
mod patch;
mod policy;
mod rest;
mod store;
mod throttle;
pub mod v2;

use std::collections::HashMap;
use std::sync::{Arc, Mutex};

use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec,
};

pub use store::Store;

/// An OpenAPI or Swagger document as JSON, written in JSON or in YAML (both imports take
/// either).
fn document(text: &str) -> Result<serde_json::Value, String> {
    if text.trim_start().starts_with('{') {
        return serde_json::from_str(text).map_err(|e| e.to_string());
    }
    roto_yaml::parse(text).map_err(|e| e.message)
}

static SPEC: ServiceSpec = ServiceSpec {
    name: "apigateway",
    model: "apigateway",
    query_model: None,
    signing_names: &["apigateway"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: false,
};

/// The characters of an API id (10 of them, as AWS's).
const ID_ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";

/// A new id in AWS's form (REST and HTTP API ids, resource ids, deployment ids, ...).
pub fn new_id() -> String {
    (0..10)
        .map(|_| char::from(ID_ALPHABET[fastrand::usize(..ID_ALPHABET.len())]))
        .collect()
}

/// `BadRequestException` (400) with AWS's message.
pub fn bad_request(message: impl Into<String>) -> AwsError {
    AwsError::new("BadRequestException", message).with_status(400)
}

/// `NotFoundException` (404) with AWS's message.
pub fn not_found(message: impl Into<String>) -> AwsError {
    AwsError::new("NotFoundException", message).with_status(404)
}

/// `ConflictException` (409) with AWS's message.
pub fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new("ConflictException", message).with_status(409)
}

/// API Gateway's REST APIs (v1).
pub struct ApiGateway {
    env: Arc<Env>,
    store: Store,
    /// The deployments' snapshots the data plane has parsed, by deployment id.
    snapshots: Mutex<HashMap<String, Arc<rest::Snapshot>>>,
    http_apis: Arc<v2::ApiGatewayV2>,
    /// Lambda authorizers' results by authorizer and identity: when each expires
    /// (epoch milliseconds), and the result.
    authorizations: Mutex<HashMap<String, (i64, serde_json::Value)>>,
    /// Usage plans' and stages' throttles, and the lock quotas count under.
    meter: rest::Meter,
    /// The account-level throttle, which HTTP APIs share.
    accounts: Arc<throttle::AccountThrottle>,
}

impl ApiGateway {
    /// The service; its table is created on the first call, not here.
    pub fn new(env: Arc<Env>) -> std::io::Result<ApiGateway> {
        let accounts = Arc::new(throttle::AccountThrottle::default());
        Ok(ApiGateway {
            store: store::open(env.clone()),
            snapshots: Mutex::new(HashMap::new()),
            http_apis: Arc::new(v2::ApiGatewayV2::new(env.clone(), accounts.clone())?),
            authorizations: Mutex::new(HashMap::new()),
            meter: rest::Meter::default(),
            accounts,
            env,
        })
    }
}

impl ApiGateway {
    /// The HTTP API service whose data plane this entry serves (registered as a service
    /// of its own, so that its control plane and data plane share their caches).
    pub fn http_apis(&self) -> Arc<v2::ApiGatewayV2> {
        self.http_apis.clone()
    }
}

impl Service for ApiGateway {
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
            if operation == "ExecuteApi" {
                return self.execute_api(ctx, &request).await;
            }
            match self.rest_call(ctx, operation, &request.input).await {
                Some(result) => result.map(Response::new),
                None => Err(AwsError::not_implemented(operation)),
            }
        })
    }
}
