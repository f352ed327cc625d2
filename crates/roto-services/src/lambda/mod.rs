//! Lambda: functions that really run.
//!
//! Lambda speaks rest-json; the REST codec binds URIs, headers and payloads, so handlers
//! see shaped values only. Function code is stored as a blob (the zip as uploaded, inline
//! or read from S3 through the dispatcher); invocations go to an [`executor::Executor`]
//! chosen with `--lambda-executor` (`process` runs the runtime as a local process speaking
//! the Lambda Runtime API, `docker` in a container of the public Lambda base image; `none`
//! stores functions and refuses to run them).
//!
//! - [`functions`]: Create/Get/Update/Delete/List, versions, tags, reserved concurrency.
//! - [`aliases`]: aliases with weighted routing.
//! - [`code_signing`]: code signing configurations, and tags of resources other than functions.
//! - [`invoke`]: Invoke (RequestResponse, Event, DryRun), logs to CloudWatch Logs.
//! - [`streaming`]: InvokeWithResponseStream, the response as an event stream.
//! - [`layers`]: layer versions, unpacked into `opt` for the process executor.
//! - [`settings`]: resource policies and asynchronous invocation configuration.
//! - [`configs`]: the settings tools put and read back (recursion, runtime management,
//!   provisioned concurrency, layer permissions), and the features Roto does not model.
//! - [`mappings`]: event source mappings from SQS queues and DynamoDB streams.
//! - [`metrics`]: Invocations, Errors, Duration, Throttles, ConcurrentExecutions.
//! - [`runtimes`]: the deprecated runtimes Lambda refuses.
//! - [`urls`]: function URLs, answered on Roto's port.
//! - [`zip`]: the archive reader.

mod access;
mod aliases;
mod code_signing;
mod configs;
mod executor;
mod functions;
mod invoke;
mod layers;
mod mappings;
mod metrics;
mod runtimes;
mod settings;
mod streaming;
mod urls;
pub(crate) mod zip;

pub use executor::images::parse_entry as image_entry;

use std::io;
use std::sync::Arc;
use std::time::Duration;

use roto_core::access::{Access, Principal};
use roto_core::events::{DeliveryError, Event};
use roto_core::featureless::{self, Featureless};
use roto_core::{
    AwsError, AwsResult, BoxFuture, Context, Env, Request, Response, Service, ServiceSpec, Value,
};

use executor::Executor;

static SPEC: ServiceSpec = ServiceSpec {
    name: "lambda",
    model: "lambda",
    query_model: None,
    signing_names: &["lambda"],
    target_prefix: None,
    query_version: None,
    crc32_responses: false,
    validate_input: true,
};

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lambda_functions (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    config TEXT NOT NULL,
    code_blob TEXT NOT NULL,
    tags TEXT NOT NULL DEFAULT '{}',
    reserved INTEGER,
    PRIMARY KEY (account, region, name, version)
);
CREATE TABLE IF NOT EXISTS lambda_mappings (
    uuid TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    function TEXT NOT NULL,
    source TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lambda_stream_positions (
    uuid TEXT NOT NULL,
    shard TEXT NOT NULL,
    sequence TEXT,
    iterator TEXT,
    PRIMARY KEY (uuid, shard)
);
CREATE TABLE IF NOT EXISTS lambda_stream_windows (
    uuid TEXT NOT NULL,
    shard TEXT NOT NULL,
    start INTEGER NOT NULL,
    state TEXT NOT NULL,
    PRIMARY KEY (uuid, shard)
);
CREATE TABLE IF NOT EXISTS lambda_layers (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    version INTEGER NOT NULL,
    config TEXT NOT NULL,
    code_blob TEXT NOT NULL,
    PRIMARY KEY (account, region, name, version)
);
CREATE TABLE IF NOT EXISTS lambda_settings (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    function TEXT NOT NULL,
    qualifier TEXT NOT NULL,
    kind TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, function, qualifier, kind)
);
CREATE TABLE IF NOT EXISTS lambda_urls (
    url_id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    function TEXT NOT NULL,
    qualifier TEXT NOT NULL,
    config TEXT NOT NULL,
    UNIQUE (account, region, function, qualifier)
);
CREATE TABLE IF NOT EXISTS lambda_aliases (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    function TEXT NOT NULL,
    name TEXT NOT NULL,
    config TEXT NOT NULL,
    PRIMARY KEY (account, region, function, name)
);
";

/// The first delay before retrying a failed asynchronous invocation (doubling after);
/// `ROTO_LAMBDA_RETRY_DELAY_MS` overrides it so tests need not wait a minute.
const DEFAULT_RETRY_DELAY: Duration = Duration::from_secs(60);

/// Lambda (cheap to clone: the pollers of event source mappings hold a clone).
#[derive(Clone)]
pub struct Lambda {
    env: Arc<Env>,
    executor: Arc<dyn Executor>,
    runner: invoke::Runner,
    pollers: mappings::Pollers,
}

impl Lambda {
    /// Creates the service's tables and its executor (`lambda-executor` option).
    pub fn new(env: Arc<Env>) -> io::Result<Lambda> {
        env.store.migrate(SCHEMA)?;
        env.store.migrate(code_signing::SCHEMA)?;
        env.store
            .register_blob_column("lambda_functions", "code_blob");
        env.store.register_blob_column("lambda_layers", "code_blob");
        let executor = executor::build(
            &env,
            env.option("lambda-executor")
                .as_deref()
                .unwrap_or("process"),
        )?;
        let retry_delay = std::env::var("ROTO_LAMBDA_RETRY_DELAY_MS")
            .ok()
            .and_then(|v| v.parse().ok())
            .map_or(DEFAULT_RETRY_DELAY, Duration::from_millis);
        let runner = invoke::Runner::new(env.clone(), executor.clone(), retry_delay);
        let lambda = Lambda {
            env,
            executor,
            runner,
            pollers: mappings::Pollers::default(),
        };
        lambda.start_pollers();
        Ok(lambda)
    }
}

impl Service for Lambda {
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
            let input = &request.input;
            let output = match operation {
                "CreateFunction" => self.create_function(ctx, input).await?,
                "GetFunction" => self.get_function(ctx, input)?,
                "GetFunctionConfiguration" => self.get_function_configuration(ctx, input)?,
                "UpdateFunctionCode" => self.update_function_code(ctx, input).await?,
                "UpdateFunctionConfiguration" => self.update_function_configuration(ctx, input)?,
                "DeleteFunction" => self.delete_function(ctx, input)?,
                "ListFunctions" => self.list_functions(ctx, input)?,
                "PublishVersion" => self.publish_version(ctx, input)?,
                "ListVersionsByFunction" => self.list_versions_by_function(ctx, input)?,
                "CreateAlias" => self.create_alias(ctx, input)?,
                "GetAlias" => self.get_alias(ctx, input)?,
                "UpdateAlias" => self.update_alias(ctx, input)?,
                "DeleteAlias" => self.delete_alias(ctx, input)?,
                "ListAliases" => self.list_aliases(ctx, input)?,
                "TagResource" => self.tag_resource(ctx, input)?,
                "UntagResource" => self.untag_resource(ctx, input)?,
                "ListTags" => self.list_tags(ctx, input)?,
                "PutFunctionConcurrency" => self.put_function_concurrency(ctx, input)?,
                "GetFunctionConcurrency" => self.get_function_concurrency(ctx, input)?,
                "DeleteFunctionConcurrency" => self.delete_function_concurrency(ctx, input)?,
                "GetAccountSettings" => self.get_account_settings(ctx)?,
                "Invoke" => self.invoke(ctx, input).await?,
                "CreateEventSourceMapping" => self.create_event_source_mapping(ctx, input).await?,
                "GetEventSourceMapping" => self.get_event_source_mapping(input)?,
                "UpdateEventSourceMapping" => self.update_event_source_mapping(ctx, input)?,
                "DeleteEventSourceMapping" => self.delete_event_source_mapping(input)?,
                "ListEventSourceMappings" => self.list_event_source_mappings(ctx, input)?,
                "PublishLayerVersion" => self.publish_layer_version(ctx, input).await?,
                "GetLayerVersion" => self.get_layer_version(ctx, input)?,
                "GetLayerVersionByArn" => self.get_layer_version_by_arn(input)?,
                "ListLayerVersions" => self.list_layer_versions(ctx, input)?,
                "ListLayers" => self.list_layers(ctx, input)?,
                "DeleteLayerVersion" => self.delete_layer_version(ctx, input)?,
                "AddPermission" => self.add_permission(ctx, input)?,
                "GetPolicy" => self.get_policy(ctx, input)?,
                "RemovePermission" => self.remove_permission(ctx, input)?,
                "PutFunctionEventInvokeConfig" => {
                    self.put_function_event_invoke_config(ctx, input)?
                }
                "UpdateFunctionEventInvokeConfig" => {
                    self.update_function_event_invoke_config(ctx, input)?
                }
                "GetFunctionEventInvokeConfig" => {
                    self.get_function_event_invoke_config(ctx, input)?
                }
                "DeleteFunctionEventInvokeConfig" => {
                    self.delete_function_event_invoke_config(ctx, input)?
                }
                "ListFunctionEventInvokeConfigs" => {
                    self.list_function_event_invoke_configs(ctx, input)?
                }
                "CreateFunctionUrlConfig" => self.create_function_url_config(ctx, input)?,
                "GetFunctionUrlConfig" => self.get_function_url_config(ctx, input)?,
                "UpdateFunctionUrlConfig" => self.update_function_url_config(ctx, input)?,
                "DeleteFunctionUrlConfig" => self.delete_function_url_config(ctx, input)?,
                "ListFunctionUrlConfigs" => self.list_function_url_configs(ctx, input)?,
                "CreateCodeSigningConfig" => self.create_code_signing_config(ctx, input)?,
                "GetCodeSigningConfig" => self.get_code_signing_config(ctx, input)?,
                "UpdateCodeSigningConfig" => self.update_code_signing_config(ctx, input)?,
                "DeleteCodeSigningConfig" => self.delete_code_signing_config(ctx, input)?,
                "ListCodeSigningConfigs" => self.list_code_signing_configs(ctx, input)?,
                "ListFunctionsByCodeSigningConfig" => {
                    self.list_functions_by_code_signing_config(ctx, input)?
                }
                "PutFunctionCodeSigningConfig" => {
                    self.put_function_code_signing_config(ctx, input)?
                }
                "GetFunctionCodeSigningConfig" => {
                    self.get_function_code_signing_config(ctx, input)?
                }
                "DeleteFunctionCodeSigningConfig" => {
                    self.delete_function_code_signing_config(ctx, input)?
                }
                "InvokeFunctionUrl" => return self.invoke_function_url(ctx, &request).await,
                "InvokeWithResponseStream" => {
                    return self.invoke_with_response_stream(ctx, input).await
                }
                "InvokeAsync" => self.invoke_async(ctx, request).await?,
                op if Lambda::serves_config(op) => self.config(ctx, op, input)?,
                other => {
                    return featureless::answer(SPEC.model(), configs::FEATURELESS, other, input)
                        .map(Response::new)
                }
            };
            Ok(Response::new(output))
        })
    }

    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        Box::pin(async move { Ok(self.accept_delivery(event)?) })
    }

    fn featureless(&self) -> &'static [Featureless] {
        configs::FEATURELESS
    }

    fn stop(&self) -> BoxFuture<'_, ()> {
        self.executor.stop()
    }

    fn access(&self, ctx: &Context, _: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        self.access_of(ctx, op, input)
    }
}

/// `ResourceNotFoundException` for a function ARN (qualified where a version was named).
fn function_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Function not found: {arn}"),
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// `InvalidParameterValueException`.
fn invalid_parameter(message: impl Into<String>) -> AwsError {
    AwsError::new("InvalidParameterValueException", message)
        .with_status(400)
        .with_field("Type", "User")
}

/// `ResourceConflictException`.
fn conflict(message: impl Into<String>) -> AwsError {
    AwsError::new("ResourceConflictException", message)
        .with_status(409)
        .with_field("Type", "User")
}

/// `PreconditionFailedException` for a stale `RevisionId`.
fn revision_mismatch(what: &str) -> AwsError {
    AwsError::new(
        "PreconditionFailedException",
        format!("The Revision Id provided does not match the latest Revision Id. Call the {what} API to retrieve the latest Revision Id"),
    )
    .with_status(412)
    .with_field("Type", "User")
}

/// The unqualified ARN of function `name`.
fn function_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:lambda:{}:{}:function:{name}",
        ctx.region, ctx.account
    )
}

/// A function name as callers give it (a name, `name:qualifier`, a partial ARN
/// `account:function:name` or a full ARN), split into the name and the qualifier.
fn split_function_name(given: &str) -> (String, Option<String>) {
    let parts: Vec<&str> = given.split(':').collect();
    let (name, qualifier) = match parts.as_slice() {
        [name] => (*name, None),
        [name, q] => (*name, Some(*q)),
        [_, "function", name] => (*name, None),
        [_, "function", name, q] => (*name, Some(*q)),
        ["arn", _, "lambda", _, _, "function", name] => (*name, None),
        ["arn", _, "lambda", _, _, "function", name, q] => (*name, Some(*q)),
        _ => (given, None),
    };
    (name.to_string(), qualifier.map(str::to_string))
}

/// The function name and qualifier of a request: `FunctionName` (which may carry one) and
/// `Qualifier`, which must agree when both are given.
fn target_of(input: &Value) -> AwsResult<(String, Option<String>)> {
    let (name, in_name) = split_function_name(input.str("FunctionName").unwrap_or_default());
    match (in_name, input.str("Qualifier")) {
        (Some(a), Some(b)) if a != b => Err(invalid_parameter(
            "The derived qualifier from the function name does not match the specified qualifier.",
        )),
        (Some(a), _) => Ok((name, Some(a))),
        (None, b) => Ok((name, b.map(str::to_string))),
    }
}

/// A stored JSON document as a shaped value.
fn from_json_text(text: &str) -> Value {
    serde_json::from_str(text).map_or_else(|_| Value::map(), |j| Value::from_json(&j))
}

/// The bytes of a stored blob (a function's zip).
fn read_blob(env: &Env, id: &str) -> AwsResult<Vec<u8>> {
    let reader = env
        .store
        .with(|c| env.store.open_blob(c, id).map_err(AwsError::from))?;
    Ok(reader.into_bytes()?)
}

/// A new revision id.
fn revision_id() -> String {
    roto_core::dispatch::new_request_id()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn function_names_split_in_every_form_callers_use() {
        let split = |s| split_function_name(s);
        assert_eq!(split("f"), ("f".into(), None));
        assert_eq!(split("f:prod"), ("f".into(), Some("prod".into())));
        assert_eq!(split("123456789012:function:f"), ("f".into(), None));
        assert_eq!(
            split("arn:aws:lambda:us-east-1:123456789012:function:f:7"),
            ("f".into(), Some("7".into()))
        );
        let both = Value::map()
            .with("FunctionName", "f:1")
            .with("Qualifier", "2");
        assert!(target_of(&both).is_err());
    }
}
