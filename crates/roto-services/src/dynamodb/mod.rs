//! DynamoDB (being written).

use std::io;
use std::sync::Arc;

use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "dynamodb",
    model: "dynamodb",
    query_model: None,
    signing_names: &["dynamodb"],
    target_prefix: Some("DynamoDB_20120810"),
    query_version: None,
    crc32_responses: true,
    validate_input: true,
};

/// DynamoDB.
pub struct DynamoDb {
    _env: Arc<Env>,
}

impl DynamoDb {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<DynamoDb> {
        Ok(DynamoDb { _env: env })
    }
}

impl Service for DynamoDb {
    fn spec(&self) -> &'static ServiceSpec {
        &SPEC
    }

    fn call<'a>(
        &'a self,
        _ctx: &'a Context,
        operation: &'a str,
        _request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>> {
        Box::pin(async move { Err(AwsError::not_implemented(operation)) })
    }
}
