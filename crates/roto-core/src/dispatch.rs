//! Services and the in-process dispatcher.
//!
//! Every service implements [`Service`]: one entry point taking the operation name and a
//! shaped input. The HTTP front end reaches it after decoding; Lua setup scripts and
//! synchronous cross-service needs (Lambda reading code from S3, SSM encrypting with KMS)
//! reach it through [`Dispatcher::call`], so there is exactly one code path per operation
//! and no service ever reads another's state.

use std::future::Future;
use std::pin::Pin;
use std::sync::{Arc, OnceLock, Weak};
use std::time::Instant;

use bytes::Bytes;
use http_body_util::combinators::BoxBody;

use crate::access::{self, Access, Principal, Verdict};
use crate::error::{AwsError, AwsResult};
use crate::events::{DeliveryError, Event, EventBus};
use crate::featureless::Featureless;
use crate::identity::Secret;
use crate::model::{model, Model};
use crate::protocol::Protocol;
use crate::store::Store;
use crate::trace::{Trace, TraceEntry};
use crate::validate;
use crate::value::Value;

/// A boxed future, the return type of the object-safe service entry points.
pub type BoxFuture<'a, T> = Pin<Box<dyn Future<Output = T> + Send + 'a>>;

/// A streamed HTTP body (S3 object payloads in and out).
pub type Body = BoxBody<Bytes, std::io::Error>;

/// Who is calling, and where.
#[derive(Debug, Clone)]
pub struct Context {
    /// The 12-digit account the call acts in.
    pub account: String,
    /// The region the call acts in.
    pub region: String,
    /// The access key id the caller signed with, if any.
    pub access_key: Option<String>,
    /// The request id returned to the caller.
    pub request_id: String,
    /// The host the request was addressed to (for URLs a service returns).
    pub host: String,
}

impl Context {
    /// A context for Roto's own calls (deliveries, pollers) in an account and region,
    /// with a fresh request id.
    pub fn internal(account: &str, region: &str) -> Context {
        Context {
            account: account.to_string(),
            region: region.to_string(),
            access_key: None,
            request_id: new_request_id(),
            host: String::new(),
        }
    }
}

/// An operation's input: the shaped value, plus the streamed payload where the operation
/// has one.
pub struct Request {
    /// The input, shaped like the operation's input shape.
    pub input: Value,
    /// The streamed payload (S3 `PutObject`'s `Body`), already de-chunked.
    pub body: Option<Body>,
    /// Request headers for the few operations whose semantics read raw headers.
    pub headers: http::HeaderMap,
}

impl Request {
    /// A request with only a shaped input.
    pub fn new(input: Value) -> Request {
        Request {
            input,
            body: None,
            headers: http::HeaderMap::new(),
        }
    }
}

/// An operation's output: the shaped value, plus a streamed payload where it has one.
pub struct Response {
    /// The output, shaped like the operation's output shape.
    pub output: Value,
    /// The streamed payload (S3 `GetObject`'s `Body`).
    pub body: Option<Body>,
    /// A status other than the operation's (S3's 206 for a Range GET).
    pub status: Option<u16>,
    /// Headers no output member carries (S3's CORS `Access-Control-*`).
    pub headers: Vec<(String, String)>,
}

impl Response {
    /// A response with only a shaped output.
    pub fn new(output: Value) -> Response {
        Response {
            output,
            body: None,
            status: None,
            headers: Vec::new(),
        }
    }

    /// Sets the streamed payload.
    pub fn with_body(mut self, body: Option<Body>) -> Response {
        self.body = body;
        self
    }

    /// The whole payload: the streamed body read to its end, else the output's `Body`
    /// blob (what an in-process S3 `GetObject` answers), else nothing.
    pub async fn into_payload(self) -> Result<Vec<u8>, AwsError> {
        use http_body_util::BodyExt;
        match self.body {
            Some(body) => body
                .collect()
                .await
                .map(|c| c.to_bytes().to_vec())
                .map_err(AwsError::from),
            None => Ok(self
                .output
                .get("Body")
                .and_then(Value::as_blob)
                .unwrap_or_default()
                .to_vec()),
        }
    }

    /// Overrides the HTTP status.
    pub fn with_status(mut self, status: u16) -> Response {
        self.status = Some(status);
        self
    }

    /// Adds a header no output member carries.
    pub fn with_header(mut self, name: impl Into<String>, value: impl Into<String>) -> Response {
        self.headers.push((name.into(), value.into()));
        self
    }
}

impl From<Value> for Response {
    fn from(output: Value) -> Response {
        Response::new(output)
    }
}

/// The fixed facts about a service.
#[derive(Debug)]
pub struct ServiceSpec {
    /// The name in the router, the trace and Lua (`s3`, `dynamodb`, `sqs`, `sts`).
    pub name: &'static str,
    /// The embedded model's name.
    pub model: &'static str,
    /// The model for the query protocol where the service also speaks it with other
    /// traits than its main model has (SQS).
    pub query_model: Option<&'static str>,
    /// SigV4 signing names that route to this service.
    pub signing_names: &'static [&'static str],
    /// The json protocol's `X-Amz-Target` prefix (the model's `targetPrefix`).
    pub target_prefix: Option<&'static str>,
    /// The query protocol's `Version` (the model's `apiVersion`).
    pub query_version: Option<&'static str>,
    /// Whether responses carry `x-amz-crc32` over their bytes (DynamoDB).
    pub crc32_responses: bool,
    /// Whether inputs are checked against the model's constraints before the handler runs.
    pub validate_input: bool,
}

impl ServiceSpec {
    /// The service's model, parsed on first use.
    pub fn model(&self) -> &'static Model {
        model(self.model)
    }
}

/// A service: a model-driven set of operations over its own state.
pub trait Service: Send + Sync + 'static {
    /// The service's fixed facts.
    fn spec(&self) -> &'static ServiceSpec;

    /// Runs an operation.
    fn call<'a>(
        &'a self,
        ctx: &'a Context,
        operation: &'a str,
        request: Request,
    ) -> BoxFuture<'a, AwsResult<Response>>;

    /// Accepts an asynchronous delivery from the event bus (an SQS queue receiving an S3
    /// notification). `Err` carries why it failed and whether a retry could help; the bus
    /// retries (while attempts remain) and traces it.
    fn deliver<'a>(&'a self, event: &'a Event) -> BoxFuture<'a, Result<(), DeliveryError>> {
        let _ = event;
        Box::pin(async { Err(format!("{} accepts no deliveries", self.spec().name).into()) })
    }

    /// Hears that an event this service published was delivered (SNS counts its
    /// NumberOfNotificationsDelivered). Nothing by default.
    fn delivered(&self, event: &Event) {
        let _ = event;
    }

    /// Hears that an event this service published has failed for good (its last attempt
    /// failed with `error`), so it can do what AWS does then: SNS sends the message to the
    /// subscription's dead-letter queue. Nothing by default.
    fn delivery_failed(&self, event: &Event, error: &str) {
        let _ = (event, error);
    }

    /// The operations of the service's model it answers as AWS answers a resource without
    /// the feature (the empty configuration, the default, the documented not-found error),
    /// since Roto does not model the feature. Every other model operation is served in
    /// full. None by default.
    fn featureless(&self) -> &'static [Featureless] {
        &[]
    }

    /// What the web console shows of the resource `input` names that no read operation
    /// shows without changing it: an SQS queue's messages, which `ReceiveMessage` hides
    /// and counts. `None` where the service has nothing to show this way.
    fn peek(&self, ctx: &Context, input: &Value) -> Option<AwsResult<Value>> {
        let _ = (ctx, input);
        None
    }

    /// Stops what the service runs beside the server (Lambda's runtime processes) before
    /// the server exits. Nothing by default.
    fn stop(&self) -> BoxFuture<'_, ()> {
        Box::pin(async {})
    }

    /// What a call asks, for `--enforce-iam`: its IAM action, its resource's ARN and the
    /// resource's own policy, read from this service's tables. By default the generic
    /// action and resource with no policy.
    fn access(&self, ctx: &Context, who: &Principal, op: &str, input: &Value) -> AwsResult<Access> {
        let _ = (ctx, who);
        Ok(access::generic(self.spec(), op, input))
    }

    /// The principal behind an access key this service issued (IAM users' keys, STS
    /// sessions'); `None` for keys it did not issue.
    fn identify(&self, ctx: &Context, access_key: &str) -> AwsResult<Option<Principal>> {
        let _ = (ctx, access_key);
        Ok(None)
    }

    /// The secret of a key this service issued (IAM users' keys, STS sessions', with the
    /// session token their requests must carry), which `--verify-signatures` checks
    /// signatures with; `None` for keys it did not issue.
    fn secret_key(&self, access_key: &str) -> AwsResult<Option<Secret>> {
        let _ = access_key;
        Ok(None)
    }

    /// Decides whether `principal` may make the call `access` describes, with the
    /// request's condition keys; only IAM decides (`None` elsewhere).
    fn authorize(
        &self,
        principal: &Principal,
        access: &Access,
        context: &[(String, Vec<String>)],
    ) -> Option<AwsResult<Verdict>> {
        let _ = (principal, access, context);
        None
    }
}

/// What every service shares: the store, the bus, the trace, the defaults, and a way back
/// to the dispatcher for synchronous calls to other services.
pub struct Env {
    /// The store.
    pub store: Store,
    /// The event bus.
    pub bus: EventBus,
    /// The trace.
    pub trace: Trace,
    /// The metrics services publish, waiting for CloudWatch.
    pub metrics: crate::metrics::Metrics,
    /// The account used when the caller names none.
    pub default_account: String,
    /// The region used when the caller names none.
    pub default_region: String,
    /// The base domain for virtual-host-style URLs (`localhost`).
    pub domain: String,
    dispatcher: OnceLock<Weak<Dispatcher>>,
    endpoint: OnceLock<String>,
    options: std::sync::Mutex<std::collections::BTreeMap<String, String>>,
    stopping: tokio::sync::watch::Sender<bool>,
}

impl Env {
    /// A shared environment.
    pub fn new(
        store: Store,
        trace_limit: usize,
        default_account: String,
        default_region: String,
        domain: String,
    ) -> Env {
        Env {
            store,
            bus: EventBus::new(),
            trace: Trace::new(trace_limit),
            metrics: crate::metrics::Metrics::default(),
            default_account,
            default_region,
            domain,
            dispatcher: OnceLock::new(),
            endpoint: OnceLock::new(),
            options: std::sync::Mutex::new(std::collections::BTreeMap::new()),
            stopping: tokio::sync::watch::Sender::new(false),
        }
    }

    /// Tells everything that waits on a client's behalf (long polls, trace waits) that the
    /// server is stopping, so each answers now with what it has.
    pub fn begin_stop(&self) {
        self.stopping.send_replace(true);
    }

    /// Resolves once [`Env::begin_stop`] has been called (at once if it already was).
    pub fn stopping(&self) -> impl Future<Output = ()> + Send + 'static {
        let mut stopping = self.stopping.subscribe();
        async move {
            let _ = stopping.wait_for(|stop| *stop).await;
        }
    }

    /// Records the URL of Roto's main port (`http://127.0.0.1:4566`) once it is known;
    /// later calls keep the first value.
    pub fn set_endpoint(&self, url: String) {
        let _ = self.endpoint.set(url);
    }

    /// The URL of Roto's main port, for processes Roto starts that call back into it.
    pub fn endpoint(&self) -> Option<&str> {
        self.endpoint.get().map(String::as_str)
    }

    /// Sets a named option a service reads when it is built (`lambda-executor`).
    pub fn set_option(&self, name: &str, value: &str) {
        let mut options = self.options.lock().unwrap_or_else(|p| p.into_inner());
        options.insert(name.to_string(), value.to_string());
    }

    /// A named option, if set.
    pub fn option(&self, name: &str) -> Option<String> {
        let options = self.options.lock().unwrap_or_else(|p| p.into_inner());
        options.get(name).cloned()
    }

    /// The dispatcher, for synchronous calls to another service's operations.
    pub fn dispatcher(&self) -> Option<Arc<Dispatcher>> {
        self.dispatcher.get().and_then(Weak::upgrade)
    }
}

/// The secret every account's root signs with.
const ROOT_SECRET: &str = "test";

/// The env option that says signatures are verified (`--verify-signatures`), for the
/// services that check signatures of their own (S3's POST form uploads).
pub const VERIFY_SIGNATURES_OPTION: &str = "verify-signatures";

/// The in-process dispatcher: every service by name, one entry point for calls.
pub struct Dispatcher {
    /// The shared environment.
    pub env: Arc<Env>,
    services: Vec<Arc<dyn Service>>,
}

impl Dispatcher {
    /// Builds the dispatcher over the services and starts the event bus's worker.
    pub fn start(env: Arc<Env>, services: Vec<Arc<dyn Service>>) -> Arc<Dispatcher> {
        let dispatcher = Arc::new(Dispatcher {
            env: env.clone(),
            services,
        });
        let _ = env.dispatcher.set(Arc::downgrade(&dispatcher));
        env.bus.start(Arc::downgrade(&dispatcher));
        dispatcher
    }

    /// The service named `name`.
    pub fn service(&self, name: &str) -> Option<&Arc<dyn Service>> {
        self.services.iter().find(|s| s.spec().name == name)
    }

    /// The secret of an access key, as `--verify-signatures` checks signatures with it:
    /// `test` for every account's root (the key `test`, a 12-digit key id), the secret IAM
    /// or STS issued with an `AKIA` or `ASIA` key; `None` for a key nobody issued. A
    /// session's key needs the session's token (`session_token`, as the request carries
    /// it): without one the key is unknown, with another it is `InvalidToken`, as AWS
    /// refuses them.
    pub fn secret_key(
        &self,
        access_key: &str,
        session_token: Option<&str>,
    ) -> AwsResult<Option<String>> {
        let root = access_key.len() == 12 && access_key.bytes().all(|b| b.is_ascii_digit());
        if access_key == "test" || root {
            return Ok(Some(ROOT_SECRET.to_string()));
        }
        let issuer = match access_key.get(..4) {
            Some("AKIA") => "iam",
            Some("ASIA") => "sts",
            _ => return Ok(None),
        };
        let Some(secret) = self
            .service(issuer)
            .map(|s| s.secret_key(access_key))
            .transpose()?
            .flatten()
        else {
            return Ok(None);
        };
        match (secret.session_token.as_deref(), session_token) {
            (Some(_), None) => Err(access::unknown_key()),
            (Some(expected), Some(given)) if expected != given => Err(access::invalid_token()),
            _ => Ok(Some(secret.key)),
        }
    }

    /// Every service, in registration order.
    pub fn services(&self) -> &[Arc<dyn Service>] {
        &self.services
    }

    /// Validates the input (where the service asks for it) and runs the operation: the one
    /// path HTTP requests, Lua scripts and cross-service calls all take. An operation that
    /// published events answers once the event bus has room for more, and, in durable mode,
    /// once its writes are on disk.
    pub async fn invoke(
        &self,
        service: &dyn Service,
        ctx: &Context,
        operation: &str,
        request: Request,
    ) -> AwsResult<Response> {
        let spec = service.spec();
        if spec.validate_input {
            let model = spec.model();
            if let Some(input) = model.operation(operation).and_then(|op| op.input.as_ref()) {
                let violations = validate::violations(model, model.resolve(input), &request.input);
                if let Some(message) = validate::message(&violations) {
                    let code = match Protocol::of(model) {
                        Protocol::Query => "ValidationError",
                        _ => "ValidationException",
                    };
                    return Err(AwsError::new(code, message).with_status(400));
                }
            }
        }
        let call = self
            .env
            .bus
            .producing(service.call(ctx, operation, request));
        let (output, durable) = self.env.store.acknowledging(call).await;
        match durable {
            Ok(()) => output,
            Err(e) => {
                tracing::error!(
                    service = spec.name,
                    operation,
                    "a write did not reach the disk: {e}"
                );
                Err(AwsError::internal("A write did not reach the disk."))
            }
        }
    }

    /// Calls an operation by service and operation name with a shaped input, recording it
    /// in the trace. Unknown services or operations are AWS-style errors.
    pub async fn call(
        &self,
        ctx: &Context,
        service: &str,
        operation: &str,
        input: Value,
    ) -> AwsResult<Value> {
        self.call_request(ctx, service, operation, Request::new(input))
            .await
            .map(|r| r.output)
    }

    /// [`Dispatcher::call`] with a whole request and response, for callers that send or
    /// read a streamed payload (Lua's `aws.s3.GetObject` returns its `Body`).
    pub async fn call_request(
        &self,
        ctx: &Context,
        service: &str,
        operation: &str,
        request: Request,
    ) -> AwsResult<Response> {
        let svc = self.service(service).ok_or_else(|| {
            AwsError::new("UnknownService", format!("No service named {service}"))
        })?;
        if svc.spec().model().operation(operation).is_none() {
            return Err(AwsError::new(
                "InvalidAction",
                format!("The action {operation} is not valid for service {service}."),
            ));
        }
        let started = Instant::now();
        let result = self.invoke(svc.as_ref(), ctx, operation, request).await;
        let mut entry = TraceEntry::request(&ctx.account, &ctx.region, service, operation);
        entry.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
        entry.source = Some("dispatcher".into());
        match &result {
            Ok(_) => entry.status = Some(200),
            Err(e) => entry.error_code = Some(e.code.to_string()),
        }
        self.env.trace.record(entry);
        result
    }

    /// A context in the default account and region (Lua setup, internal callers).
    pub fn default_context(&self) -> Context {
        Context::internal(&self.env.default_account, &self.env.default_region)
    }
}

/// A request id in the form AWS uses (a version-4 UUID's layout, 8-4-4-4-12 hex digits),
/// written digit by digit: every request takes one, and `format!` cost ten times as much.
pub fn new_request_id() -> String {
    const HEX: &[u8; 16] = b"0123456789abcdef";
    let version = (fastrand::u64(..) & !0xf000) | 0x4000;
    let variant = (fastrand::u64(..) & !(0xc000 << 48)) | (0x8000 << 48);
    let bits = (u128::from(version) << 64) | u128::from(variant);
    let mut id = String::with_capacity(36);
    for digit in 0..32 {
        if matches!(digit, 8 | 12 | 16 | 20) {
            id.push('-');
        }
        let nibble = (bits >> (124 - 4 * digit)) & 0xf;
        id.push(char::from(HEX[nibble as usize]));
    }
    id
}

#[cfg(test)]
mod tests {
    #[test]
    fn request_ids_have_a_version_4_uuid_layout() {
        for _ in 0..200 {
            let id = super::new_request_id();
            let groups: Vec<&str> = id.split('-').collect();
            let lengths: Vec<usize> = groups.iter().map(|g| g.len()).collect();
            assert_eq!(lengths, [8, 4, 4, 4, 12], "{id}");
            assert!(id
                .bytes()
                .all(|b| b == b'-' || b.is_ascii_digit() || (b'a'..=b'f').contains(&b)));
            assert!(groups[2].starts_with('4'), "{id}");
            assert!(groups[3].starts_with(['8', '9', 'a', 'b']), "{id}");
        }
    }
}
