//! Invoke: synchronous (`RequestResponse`), asynchronous (`Event`) and `DryRun`.
//!
//! Every run writes `START`, the handler's lines, `END` and `REPORT` to the log group
//! `/aws/lambda/<function>` in the instance's stream, through the dispatcher calling
//! CloudWatch Logs (never its tables), on a background writer so the caller does not wait
//! for it. Asynchronous invocations return 202 at once and run on a background task,
//! retried twice when the function fails, each run recorded in the trace as a delivery.

use std::collections::BTreeMap;
use std::sync::{Arc, Mutex, OnceLock};
use std::time::Duration;

use base64::Engine;
use roto_core::trace::{TraceEntry, TraceKind};
use roto_core::{AwsError, AwsResult, Context, Env, Request, Value};
use tokio::sync::mpsc;

use super::executor::{Executor, ImageFunction, Invocation, Outcome, Spec};
use super::functions::Function;
use super::metrics;
use super::{function_arn, target_of, Lambda};

/// The largest synchronous payload.
const MAX_SYNC_PAYLOAD: usize = 6 * 1024 * 1024;
/// The largest asynchronous payload.
const MAX_ASYNC_PAYLOAD: usize = 1024 * 1024;
/// The largest response a synchronous invocation returns (Lambda's figure: 100 bytes over
/// the request limit).
const MAX_SYNC_RESPONSE: usize = MAX_SYNC_PAYLOAD + 100;
/// How much of the log `LogType=Tail` returns.
const TAIL_BYTES: usize = 4096;
/// How many times a failed asynchronous invocation is retried.
const ASYNC_RETRIES: u32 = 2;
/// How long an asynchronous event may wait in the queue, by default (six hours).
const MAX_EVENT_AGE_SECONDS: u32 = 21_600;
/// The first and the longest wait before retrying a throttled asynchronous invocation.
const THROTTLE_FIRST_DELAY: Duration = Duration::from_secs(1);
const THROTTLE_MAX_DELAY: Duration = Duration::from_secs(300);
/// The error code of a throttled invocation.
const THROTTLED: &str = "TooManyRequestsException";

/// A batch of log lines for one stream.
struct LogBatch {
    account: String,
    region: String,
    group: String,
    stream: String,
    lines: Vec<(i64, String)>,
}

/// What runs an invocation, cheap to clone into background tasks.
#[derive(Clone)]
pub(super) struct Runner {
    env: Arc<Env>,
    executor: Arc<dyn Executor>,
    inflight: Arc<Mutex<std::collections::HashMap<String, i64>>>,
    logs: Arc<OnceLock<mpsc::UnboundedSender<LogBatch>>>,
    retry_delay: Duration,
}

/// Counts an invocation against its function's concurrency until dropped.
struct Slot {
    inflight: Arc<Mutex<std::collections::HashMap<String, i64>>>,
    key: String,
}

impl Drop for Slot {
    fn drop(&mut self) {
        let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(n) = inflight.get_mut(&self.key) {
            *n -= 1;
        }
    }
}

/// The error of an invocation beyond the function's reserved concurrency.
fn throttled() -> AwsError {
    AwsError::new(THROTTLED, "Rate Exceeded.")
        .with_status(429)
        .with_field("Type", "User")
        .with_field(
            "Reason",
            "ReservedFunctionConcurrentInvocationLimitExceeded",
        )
}

/// Lambda's `REPORT` line.
fn report_line(request_id: &str, outcome: &Outcome, memory: i64) -> String {
    let mut line = format!(
        "REPORT RequestId: {request_id}\tDuration: {:.2} ms\tBilled Duration: {} ms\tMemory Size: {memory} MB\tMax Memory Used: {} MB",
        outcome.duration_ms,
        outcome.duration_ms.ceil().max(1.0) as i64,
        outcome.max_memory_mb.unwrap_or(0).min(memory)
    );
    if let Some(init) = outcome.init_ms {
        line.push_str(&format!("\tInit Duration: {init:.2} ms"));
    }
    if let Some(status) = &outcome.status {
        line.push_str(&format!("\tStatus: {status}"));
    }
    line
}

/// The last `TAIL_BYTES` of a log, cut at a character boundary.
fn tail(text: &str) -> &str {
    let mut start = text.len().saturating_sub(TAIL_BYTES);
    while !text.is_char_boundary(start) {
        start += 1;
    }
    &text[start..]
}

impl Runner {
    /// A runner over an executor; failed asynchronous invocations wait `retry_delay`
    /// before their first retry and twice that before the second.
    pub(super) fn new(env: Arc<Env>, executor: Arc<dyn Executor>, retry_delay: Duration) -> Runner {
        Runner {
            env,
            executor,
            inflight: Arc::new(Mutex::new(std::collections::HashMap::new())),
            logs: Arc::new(OnceLock::new()),
            retry_delay,
        }
    }

    /// The background writer of log batches (started on first use).
    fn log_sender(&self) -> &mpsc::UnboundedSender<LogBatch> {
        self.logs.get_or_init(|| {
            let (tx, mut rx) = mpsc::unbounded_channel::<LogBatch>();
            let env = Arc::downgrade(&self.env);
            tokio::spawn(async move {
                let mut known = std::collections::HashSet::new();
                while let Some(batch) = rx.recv().await {
                    let Some(env) = env.upgrade() else { return };
                    write_logs(&env, &mut known, batch).await;
                }
            });
            tx
        })
    }

    /// Runs one invocation (throttled by reserved concurrency) and logs it.
    pub(super) async fn run(
        &self,
        ctx: &Context,
        function: &Function,
        invocation: Invocation,
    ) -> AwsResult<Outcome> {
        let key = format!("{}/{}/{}", ctx.account, ctx.region, function.name);
        let invoked_arn = invocation.invoked_arn.clone();
        let invoked = metrics::Invoked {
            function,
            arn: &invoked_arn,
        };
        let (_slot, concurrency) = {
            let mut inflight = self.inflight.lock().unwrap_or_else(|p| p.into_inner());
            let n = inflight.entry(key.clone()).or_insert(0);
            if function.reserved.is_some_and(|r| *n >= r) {
                drop(inflight);
                metrics::throttled(&self.env, ctx, &invoked);
                return Err(throttled());
            }
            *n += 1;
            let running = (*n, inflight.values().sum());
            let slot = Slot {
                inflight: self.inflight.clone(),
                key,
            };
            (slot, running)
        };
        let spec = spec_of(&self.env, ctx, function);
        let request_id = invocation.request_id.clone();
        let started = roto_core::timestamp::now_millis();
        let outcome = self.executor.invoke(spec.clone(), invocation).await;
        metrics::invoked(&self.env, ctx, &invoked, &outcome, concurrency);
        let outcome = outcome?;
        let mut lines = Vec::with_capacity(outcome.lines.len() + 3);
        lines.push((
            started,
            format!("START RequestId: {request_id} Version: {}", spec.version),
        ));
        lines.extend(outcome.lines.iter().cloned());
        let now = roto_core::timestamp::now_millis();
        lines.push((now, format!("END RequestId: {request_id}")));
        lines.push((now, report_line(&request_id, &outcome, spec.memory)));
        let _ = self.log_sender().send(LogBatch {
            account: ctx.account.clone(),
            region: ctx.region.clone(),
            group: spec.log_group.clone(),
            stream: outcome.log_stream.clone(),
            lines: lines.clone(),
        });
        Ok(Outcome { lines, ..outcome })
    }

    /// Runs an asynchronous invocation as Lambda's event queue does: a function error is
    /// retried `MaximumRetryAttempts` times (else twice) after `retry_delay` and twice that;
    /// a throttled attempt is retried with its own back-off (1 s doubling to 5 minutes)
    /// without counting as an attempt; an event older than `MaximumEventAgeInSeconds` (else
    /// six hours) is discarded. Every attempt is traced; the final record goes to the
    /// OnSuccess or OnFailure destination where one is configured.
    async fn run_async(
        self,
        ctx: Context,
        function: Function,
        invocation: Invocation,
        config: Option<Value>,
    ) {
        let arn = invocation.invoked_arn.clone();
        let setting = |member: &str| {
            config
                .as_ref()
                .and_then(|c| c.int(member))
                .and_then(|r| u32::try_from(r).ok())
        };
        let retries = setting("MaximumRetryAttempts").unwrap_or(ASYNC_RETRIES);
        let max_age_ms =
            i64::from(setting("MaximumEventAgeInSeconds").unwrap_or(MAX_EVENT_AGE_SECONDS)) * 1000;
        let queued = roto_core::timestamp::now_millis();
        let mut attempts = 0;
        let mut throttle_delay = THROTTLE_FIRST_DELAY;
        loop {
            let started = std::time::Instant::now();
            let result = self.run(&ctx, &function, invocation.clone()).await;
            let throttled = matches!(&result, Err(e) if e.code == THROTTLED);
            if !throttled {
                attempts += 1;
            }
            let failed = match &result {
                Ok(o) => o.function_error.clone(),
                Err(e) => Some(e.code.to_string()),
            };
            let delay = if throttled {
                let d = throttle_delay;
                throttle_delay = (throttle_delay * 2).min(THROTTLE_MAX_DELAY);
                d
            } else {
                self.retry_delay * attempts
            };
            let expired = roto_core::timestamp::now_millis() - queued
                + i64::try_from(delay.as_millis()).unwrap_or(i64::MAX)
                > max_age_ms;
            let condition = match (&failed, throttled) {
                (None, _) => Some("Success"),
                (Some(_), _) if expired => Some("EventAgeExceeded"),
                (Some(_), false) if attempts > retries => Some("RetriesExhausted"),
                _ => None,
            };
            let mut entry = TraceEntry::request(&ctx.account, &ctx.region, "lambda", "Invoke");
            entry.kind = TraceKind::Delivery;
            entry.source = Some("lambda:async".into());
            entry.target = Some(arn.clone());
            entry.attempt = Some(attempts.max(1));
            entry.duration_ms = started.elapsed().as_secs_f64() * 1000.0;
            entry.outcome = Some(
                match condition {
                    Some("Success") => "delivered",
                    Some(_) => "failed",
                    None => "retrying",
                }
                .into(),
            );
            entry.detail = condition.filter(|c| *c != "Success").map(str::to_string);
            entry.error_code = failed;
            self.env.trace.record(entry);
            let Some(condition) = condition else {
                roto_core::timestamp::sleep(delay).await;
                continue;
            };
            let which = if condition == "Success" {
                "OnSuccess"
            } else {
                "OnFailure"
            };
            let destination = config
                .as_ref()
                .and_then(|c| c.get("DestinationConfig"))
                .and_then(|d| d.get(which))
                .and_then(|d| d.str("Destination"));
            if let Some(destination) = destination {
                let record =
                    destination_record(&invocation, &function, &result, condition, attempts);
                self.send_to_destination(&ctx, destination, &record).await;
            }
            return;
        }
    }

    /// Delivers a destination record through the dispatcher, tracing the outcome.
    pub(super) async fn send_to_destination(
        &self,
        ctx: &Context,
        destination: &str,
        record: &serde_json::Value,
    ) {
        let Some(dispatcher) = self.env.dispatcher() else {
            return;
        };
        let body = record.to_string();
        let parts: Vec<&str> = destination.splitn(7, ':').collect();
        let result = match parts.as_slice() {
            ["arn", _, "sqs", _, owner, queue] => {
                let url = dispatcher
                    .call(
                        ctx,
                        "sqs",
                        "GetQueueUrl",
                        Value::map()
                            .with("QueueName", *queue)
                            .with("QueueOwnerAWSAccountId", *owner),
                    )
                    .await;
                match url {
                    Ok(out) => {
                        let url = out.str("QueueUrl").unwrap_or_default().to_string();
                        let send = Value::map().with("QueueUrl", url).with("MessageBody", body);
                        dispatcher
                            .call(ctx, "sqs", "SendMessage", send)
                            .await
                            .map(|_| ())
                    }
                    Err(e) => Err(e),
                }
            }
            ["arn", _, "sns", ..] => {
                let publish = Value::map()
                    .with("TopicArn", destination)
                    .with("Message", body);
                dispatcher
                    .call(ctx, "sns", "Publish", publish)
                    .await
                    .map(|_| ())
            }
            ["arn", _, "lambda", ..] => {
                let invoke = Value::map()
                    .with("FunctionName", destination)
                    .with("InvocationType", "Event")
                    .with("Payload", Value::Blob(body.into_bytes()));
                dispatcher
                    .call(ctx, "lambda", "Invoke", invoke)
                    .await
                    .map(|_| ())
            }
            _ => Err(AwsError::new(
                "UnsupportedDestination",
                format!("Roto cannot deliver to {destination}"),
            )),
        };
        let mut entry = TraceEntry::request(&ctx.account, &ctx.region, "lambda", "Destination");
        entry.kind = TraceKind::Delivery;
        entry.source = record["requestContext"]["functionArn"]
            .as_str()
            .map(str::to_string);
        entry.target = Some(destination.to_string());
        entry.attempt = Some(1);
        match result {
            Ok(()) => entry.outcome = Some("delivered".into()),
            Err(e) => {
                entry.outcome = Some("failed".into());
                entry.error_code = Some(e.code.to_string());
                entry.detail = Some(e.message);
            }
        }
        self.env.trace.record(entry);
    }
}

/// The record Lambda sends to a destination after an asynchronous invocation.
fn destination_record(
    invocation: &Invocation,
    function: &Function,
    result: &AwsResult<Outcome>,
    condition: &str,
    attempts: u32,
) -> serde_json::Value {
    let parse = |bytes: &[u8]| {
        serde_json::from_slice::<serde_json::Value>(bytes).unwrap_or_else(|_| {
            serde_json::Value::String(String::from_utf8_lossy(bytes).into_owned())
        })
    };
    let (mut response_context, payload) = match result {
        Ok(o) if o.function_error.is_none() => (
            serde_json::json!({"statusCode": 200, "executedVersion": function.version_name()}),
            Some(parse(&o.payload)),
        ),
        Ok(o) => (
            serde_json::json!({"statusCode": 200, "executedVersion": function.version_name(),
                               "functionError": o.function_error}),
            Some(parse(&o.payload)),
        ),
        Err(e) => (
            serde_json::json!({"statusCode": e.status.unwrap_or(500), "executedVersion": function.version_name(),
                               "functionError": e.code.to_string()}),
            None,
        ),
    };
    if response_context["functionError"].is_null() {
        if let Some(map) = response_context.as_object_mut() {
            map.remove("functionError");
        }
    }
    let mut record = serde_json::json!({
        "version": "1.0",
        "timestamp": roto_core::timestamp::format(
            roto_core::timestamp::now_millis(),
            roto_core::timestamp::TimestampFormat::Iso8601,
        ),
        "requestContext": {
            "requestId": invocation.request_id,
            "functionArn": invocation.invoked_arn,
            "condition": condition,
            "approximateInvokeCount": attempts,
        },
        "requestPayload": parse(&invocation.payload),
        "responseContext": response_context,
    });
    if let Some(p) = payload {
        record["responsePayload"] = p;
    }
    record
}

/// Writes one batch through the dispatcher, creating the group and stream when needed.
async fn write_logs(env: &Env, known: &mut std::collections::HashSet<String>, batch: LogBatch) {
    let Some(dispatcher) = env.dispatcher() else {
        return;
    };
    let mut ctx = dispatcher.default_context();
    ctx.account = batch.account;
    ctx.region = batch.region;
    let id = format!(
        "{}/{}/{}/{}",
        ctx.account, ctx.region, batch.group, batch.stream
    );
    // PutLogEvents refuses a batch holding an empty message (a blank line a handler
    // printed, the newline ending a traceback): those lines are left out.
    let events: Vec<Value> = batch
        .lines
        .into_iter()
        .filter(|(_, message)| !message.is_empty())
        .map(|(ts, message)| Value::map().with("timestamp", ts).with("message", message))
        .collect();
    let put = Value::map()
        .with("logGroupName", batch.group.as_str())
        .with("logStreamName", batch.stream.as_str())
        .with("logEvents", events);
    for _ in 0..2 {
        if !known.contains(&id) {
            let group = Value::map().with("logGroupName", batch.group.as_str());
            let _ = dispatcher
                .call(&ctx, "logs", "CreateLogGroup", group.clone())
                .await;
            let stream = group.with("logStreamName", batch.stream.as_str());
            let _ = dispatcher
                .call(&ctx, "logs", "CreateLogStream", stream)
                .await;
            known.insert(id.clone());
        }
        match dispatcher
            .call(&ctx, "logs", "PutLogEvents", put.clone())
            .await
        {
            Err(e) if e.code == "ResourceNotFoundException" => {
                known.remove(&id);
            }
            _ => return,
        }
    }
}

/// What the executor needs to know about a function version.
fn spec_of(env: &Env, ctx: &Context, f: &Function) -> Spec {
    let c = &f.config;
    let layers = c
        .get("Layers")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(|l| l.str("Arn"))
        .filter_map(|arn| super::layers::layer_blob(env, arn))
        .collect();
    let environment: BTreeMap<String, String> = c
        .get("Environment")
        .and_then(|e| e.get("Variables"))
        .and_then(Value::as_map)
        .map(|m| {
            m.iter()
                .filter_map(|(k, v)| Some((k.clone(), v.as_str()?.to_string())))
                .collect()
        })
        .unwrap_or_default();
    let log_group = c
        .get("LoggingConfig")
        .and_then(|l| l.str("LogGroup"))
        .map_or_else(|| format!("/aws/lambda/{}", f.name), str::to_string);
    Spec {
        key: format!(
            "{}/{}/{}/{}/{}",
            ctx.account,
            ctx.region,
            f.name,
            f.version_name(),
            c.str("RevisionId").unwrap_or_default()
        ),
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        name: f.name.clone(),
        version: f.version_name(),
        runtime: c.str("Runtime").unwrap_or_default().to_string(),
        architecture: c
            .get("Architectures")
            .and_then(Value::as_list)
            .and_then(|l| l.first())
            .and_then(Value::as_str)
            .unwrap_or("x86_64")
            .to_string(),
        handler: c.str("Handler").unwrap_or_default().to_string(),
        timeout: u64::try_from(c.int("Timeout").unwrap_or(3)).unwrap_or(3),
        memory: c.int("MemorySize").unwrap_or(128),
        environment,
        code_blob: f.code_blob.clone(),
        layers,
        log_group,
        image: image_of(c),
    }
}

/// A container-image function's image and `ImageConfig`, from its configuration.
fn image_of(config: &Value) -> Option<ImageFunction> {
    if config.str("PackageType") != Some("Image") {
        return None;
    }
    let image_config = config
        .get("ImageConfigResponse")
        .and_then(|r| r.get("ImageConfig"));
    let strings = |member: &str| -> Vec<String> {
        image_config
            .and_then(|c| c.get(member))
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|v| v.as_str().map(str::to_string))
            .collect()
    };
    Some(ImageFunction {
        uri: config
            .str(super::functions::IMAGE_URI)
            .unwrap_or_default()
            .to_string(),
        entrypoint: strings("EntryPoint"),
        command: strings("Command"),
        working_directory: image_config
            .and_then(|c| c.str("WorkingDirectory"))
            .map(str::to_string),
    })
}

impl Lambda {
    /// Takes an event-bus delivery (an S3 notification, an SNS message) as an
    /// asynchronous invocation of the target function, as AWS's services invoke Lambda.
    pub(super) fn accept_delivery(&self, event: &roto_core::events::Event) -> Result<(), String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or("the dispatcher is not running")?;
        let mut ctx = dispatcher.default_context();
        ctx.account = event.account.clone();
        ctx.region = event.region.clone();
        let (name, qualifier) = super::split_function_name(&event.target);
        let mut function = self
            .resolve(&ctx, &name, qualifier.as_deref(), true)
            .map_err(|e| e.message)?;
        function.reserved = self.latest(&ctx, &name).map_err(|e| e.message)?.reserved;
        let config = self
            .invoke_config(&ctx, &name, qualifier.as_deref())
            .map_err(|e| e.message)?;
        let invocation = Invocation {
            request_id: ctx.request_id.clone(),
            payload: event.payload.to_json().to_string().into_bytes(),
            invoked_arn: event.target.clone(),
            client_context: None,
        };
        tokio::spawn(
            self.runner
                .clone()
                .run_async(ctx, function, invocation, config),
        );
        Ok(())
    }

    /// The pool-key prefix of every instance of a function.
    pub(super) fn instance_prefix(&self, ctx: &Context, name: &str) -> String {
        format!("{}/{}/{}/", ctx.account, ctx.region, name)
    }

    /// The deprecated InvokeAsync: an `Event` invocation of `$LATEST` with `InvokeArgs`
    /// as its payload, answered with status 202.
    pub(super) async fn invoke_async(&self, ctx: &Context, request: Request) -> AwsResult<Value> {
        let name = request
            .input
            .str("FunctionName")
            .unwrap_or_default()
            .to_string();
        let args = request
            .input
            .get("InvokeArgs")
            .and_then(Value::as_blob)
            .map(<[u8]>::to_vec);
        let payload = match args {
            Some(args) => args,
            None => {
                roto_core::Response::new(Value::map())
                    .with_body(request.body)
                    .into_payload()
                    .await?
            }
        };
        let event = Value::map()
            .with("FunctionName", name)
            .with("InvocationType", "Event")
            .with("Payload", Value::Blob(payload));
        self.invoke(ctx, &event).await?;
        Ok(Value::map().with("Status", 202))
    }

    pub(super) async fn invoke(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = target_of(input)?;
        let mut function = self.resolve(ctx, &name, qualifier.as_deref(), true)?;
        function.reserved = self.latest(ctx, &name)?.reserved;
        let invocation_type = input.str("InvocationType").unwrap_or("RequestResponse");
        let payload = input
            .get("Payload")
            .and_then(Value::as_blob)
            .unwrap_or_default()
            .to_vec();
        let limit = if invocation_type == "Event" {
            MAX_ASYNC_PAYLOAD
        } else {
            MAX_SYNC_PAYLOAD
        };
        if payload.len() > limit {
            let message = if invocation_type == "Event" {
                format!(
                    "{} byte payload is too large for the Event invocation type (limit {limit} bytes)",
                    payload.len()
                )
            } else {
                format!(
                    "Request must be smaller than {limit} bytes for the InvokeFunction operation"
                )
            };
            return Err(AwsError::new("RequestTooLargeException", message)
                .with_status(413)
                .with_field("Type", "User"));
        }
        if !payload.is_empty() {
            if let Err(e) = serde_json::from_slice::<serde_json::Value>(&payload) {
                return Err(AwsError::new(
                    "InvalidRequestContentException",
                    format!("Could not parse request body into json: Could not parse payload into json: {e}"),
                )
                .with_status(400)
                .with_field("Type", "User"));
            }
        }
        let invoked_arn = match &qualifier {
            Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
            None => function_arn(ctx, &name),
        };
        let invocation = Invocation {
            request_id: ctx.request_id.clone(),
            payload: if payload.is_empty() {
                b"{}".to_vec()
            } else {
                payload
            },
            invoked_arn,
            // Lambda passes a client context to synchronous invocations only.
            client_context: input
                .str("ClientContext")
                .filter(|_| invocation_type == "RequestResponse")
                .and_then(decoded_client_context),
        };
        let runner = self.runner.clone();
        match invocation_type {
            "DryRun" => return Ok(Value::map().with("StatusCode", 204i64)),
            "Event" => {
                let config = self.invoke_config(ctx, &name, qualifier.as_deref())?;
                tokio::spawn(runner.run_async(ctx.clone(), function, invocation, config));
                return Ok(Value::map().with("StatusCode", 202i64));
            }
            _ => {}
        }
        let version = function.version_name();
        let mut outcome = runner.run(ctx, &function, invocation).await?;
        if outcome.payload.len() > MAX_SYNC_RESPONSE {
            outcome.payload = serde_json::json!({
                "errorMessage": format!("Response payload size exceeded maximum allowed payload size ({MAX_SYNC_RESPONSE} bytes)."),
                "errorType": "Function.ResponseSizeTooLarge",
            })
            .to_string()
            .into_bytes();
            outcome.function_error = Some("Unhandled".into());
        }
        let mut out = Value::map()
            .with("StatusCode", 200i64)
            .with("ExecutedVersion", version)
            .with("Payload", Value::Blob(outcome.payload.clone()))
            .with_opt("FunctionError", outcome.function_error.clone());
        if input.str("LogType") == Some("Tail") {
            let text: Vec<&str> = outcome.lines.iter().map(|(_, l)| l.as_str()).collect();
            let text = text.join("\n") + "\n";
            out.insert(
                "LogResult",
                base64::engine::general_purpose::STANDARD.encode(tail(&text)),
            );
        }
        Ok(out)
    }
}

/// The JSON a `ClientContext` carries base64-encoded, as Lambda hands it to the runtime;
/// `None` when it is not base64-encoded JSON.
fn decoded_client_context(encoded: &str) -> Option<String> {
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(encoded.trim())
        .ok()?;
    serde_json::from_slice::<serde_json::Value>(&bytes).ok()?;
    String::from_utf8(bytes).ok()
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tails_keep_the_last_four_kilobytes_on_a_character_boundary() {
        let text = format!("{}{}", "é".repeat(3000), "end");
        let t = tail(&text);
        assert!(t.len() <= TAIL_BYTES && t.ends_with("end"));
        assert_eq!(tail("short"), "short");
    }
}
