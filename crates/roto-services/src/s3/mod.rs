//! S3 (being written).

use std::io;
use std::sync::Arc;

use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec,
};

static SPEC: ServiceSpec = ServiceSpec {
    name: "s3",
    model: "s3",
    query_model: None,
    signing_names: &["s3"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: false,
};

/// S3.
pub struct S3 {
    _env: Arc<Env>,
}

impl S3 {
    /// Creates the service's tables.
    pub fn new(env: Arc<Env>) -> io::Result<S3> {
        Ok(S3 { _env: env })
    }
}

impl Service for S3 {
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
