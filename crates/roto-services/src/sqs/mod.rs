//! SQS (being written).

use std::io;
use std::sync::Arc;

use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "sqs",
    model: "sqs",
    query_model: Some("sqs-query"),
    signing_names: &["sqs"],
    target_prefix: Some("AmazonSQS"),
    query_version: Some("2012-11-05"),
    crc32_responses: false,
    validate_input: false,
};

/// SQS.
pub struct Sqs {
    _env: Arc<Env>,
}

impl Sqs {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<Sqs> {
        Ok(Sqs { _env: env })
    }
}

impl Service for Sqs {
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
