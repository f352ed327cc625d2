//! Task states: what their `Resource` names, called through the dispatcher.
//!
//! - a Lambda function ARN: the function's result is the task's result;
//! - `arn:aws:states:::<service>:<action>` (Lambda's `invoke`, SQS, SNS, DynamoDB,
//!   EventBridge, Step Functions' `startExecution`) and
//!   `arn:aws:states:::aws-sdk:<service>:<action>` (any operation of any Roto service):
//!   one mechanism, the action's operation called with the parameters fitted to its input
//!   shape ([`crate::sdk`]); errors become `<Service>.<Code>`;
//! - the `.waitForTaskToken` suffix: the call is made, then the task waits for
//!   SendTaskSuccess or SendTaskFailure with its token (heartbeats keep it alive);
//! - `.sync` and `.sync:2` on `states:startExecution`: the task waits for the child
//!   execution to close;
//! - an activity ARN: the input waits for a worker's GetActivityTask, the result for its
//!   SendTaskSuccess.

use std::sync::Arc;

use roto_core::model::{Model, Shape};
use roto_core::timestamp::{now_millis, sleep};
use roto_core::{AwsError, Request, Response, Value};
use serde_json::{json, Value as Json};
use tokio::sync::mpsc;

use super::io::Scope;
use super::{lock, with_deadline, Failure, Lane, Run, Signal};
use crate::sdk;

/// The cause of the failure a Task call in flight when the server stopped gets after the
/// restart: whether the call took effect is unknown.
const INTERRUPTED: &str =
    "The task's call was in flight when the server stopped; whether it took effect is unknown";

/// How a task waits for its result.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
enum Pattern {
    RequestResponse,
    Sync,
    Sync2,
    Callback,
}

/// What a `Resource` names.
#[derive(Debug, Clone, PartialEq, Eq)]
enum Resource {
    Function(String),
    Activity(String),
    Integration {
        sdk: bool,
        service: String,
        action: String,
        pattern: Pattern,
    },
}

fn parse_resource(resource: &str) -> Option<Resource> {
    if let Some(rest) = resource.strip_prefix("arn:aws:states:::") {
        let (rest, pattern) = match rest.rsplit_once('.') {
            Some((r, "waitForTaskToken")) => (r, Pattern::Callback),
            Some((r, "sync")) => (r, Pattern::Sync),
            Some((r, "sync:2")) => (r, Pattern::Sync2),
            _ => (rest, Pattern::RequestResponse),
        };
        let (sdk, rest) = match rest.strip_prefix("aws-sdk:") {
            Some(r) => (true, r),
            None => (false, rest),
        };
        let (service, action) = rest.split_once(':')?;
        return Some(Resource::Integration {
            sdk,
            service: service.to_string(),
            action: action.to_string(),
            pattern,
        });
    }
    let parts: Vec<&str> = resource.split(':').collect();
    match parts.as_slice() {
        ["arn", _, "lambda", _, _, "function", ..] => {
            Some(Resource::Function(resource.to_string()))
        }
        ["arn", _, "states", _, _, "activity", _] => Some(Resource::Activity(resource.to_string())),
        _ => None,
    }
}

/// Whether a Task state's resource waits for a task token (so its context has one).
pub(super) fn uses_token(state: &Json) -> bool {
    let resource = state
        .get("Resource")
        .and_then(Json::as_str)
        .unwrap_or_default();
    resource.ends_with(".waitForTaskToken")
        || matches!(parse_resource(resource), Some(Resource::Activity(_)))
}

/// Whether a Task's resource waits for something besides its call (an activity worker,
/// a task token, a child execution), which TestState runs only with a mock.
pub(crate) fn waits(resource: &str) -> bool {
    match parse_resource(resource) {
        Some(Resource::Activity(_)) => true,
        Some(Resource::Integration { pattern, .. }) => pattern != Pattern::RequestResponse,
        _ => false,
    }
}

/// The model and output shape of the operation a request-response integration calls:
/// what TestState checks a mocked result against. None for anything else.
pub(crate) fn output_shape(resource: &str) -> Option<(&'static Model, &'static Shape)> {
    let Some(Resource::Integration {
        sdk,
        service,
        action,
        pattern: Pattern::RequestResponse,
    }) = parse_resource(resource)
    else {
        return None;
    };
    let (roto, _) = match sdk {
        true => sdk::service(&service),
        false => optimised_service(&service),
    }?;
    let model = roto_core::model::model(roto);
    let output = model.operation(&sdk::operation(&action))?.output.as_ref()?;
    Some((model, model.resolve(output)))
}

/// A new task token.
pub(super) fn new_token() -> String {
    let mut token = String::from("AQ");
    for _ in 0..8 {
        token.push_str(&format!("{:016x}", fastrand::u64(..)));
    }
    token
}

/// Whether a string is shaped like a token this service issues.
pub(crate) fn is_token(token: &str) -> bool {
    token.len() == 130
        && token.starts_with("AQ")
        && token[2..].chars().all(|c| c.is_ascii_hexdigit())
}

/// The optimised integrations: the service's name in Roto and its error prefix.
fn optimised_service(name: &str) -> Option<(&'static str, &'static str)> {
    Some(match name {
        "lambda" => ("lambda", "Lambda"),
        "sqs" => ("sqs", "SQS"),
        "sns" => ("sns", "SNS"),
        "dynamodb" => ("dynamodb", "DynamoDB"),
        "events" => ("events", "EventBridge"),
        "states" => ("stepfunctions", "StepFunctions"),
        _ => return None,
    })
}

/// An operation's error as a task failure: `<Prefix>.<Code>` with `Exception` appended
/// where the code lacks it, as Step Functions names them.
fn service_failure(prefix: &str, e: &AwsError) -> Failure {
    let code = e.code.as_ref();
    let suffix = if code.ends_with("Exception") {
        ""
    } else {
        "Exception"
    };
    Failure::new(format!("{prefix}.{code}{suffix}"), e.message.clone())
}

/// The details every Task event names the resource with: `lambda` and `invoke` for
/// `arn:aws:states:::lambda:invoke`, `aws-sdk:s3` and `getObject` for an SDK integration.
fn task_details(resource: &str, extra: Json) -> Json {
    let rest = resource
        .strip_prefix("arn:aws:states:::")
        .unwrap_or(resource);
    let (kind, name) = match rest
        .strip_prefix("aws-sdk:")
        .and_then(|r| r.split_once(':'))
    {
        Some((service, action)) => (format!("aws-sdk:{service}"), action.to_string()),
        None => match rest.split_once(':') {
            Some((service, action)) => (service.to_string(), action.to_string()),
            None => (String::new(), rest.to_string()),
        },
    };
    let mut details = json!({"resourceType": kind, "resource": name});
    if let (Some(d), Some(e)) = (details.as_object_mut(), extra.as_object()) {
        d.extend(e.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    details
}

impl Run {
    /// Runs a Task state's resource with its (already templated) parameters.
    pub(super) async fn task(
        self: &Arc<Run>,
        scope: &Scope<'_>,
        state: &Json,
        params: Json,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        if let Some(outcome) = self.mocked() {
            return outcome;
        }
        let resource = state
            .get("Resource")
            .and_then(Json::as_str)
            .unwrap_or_default();
        if let Some(outcome) = self.interrupted_call(resource, lane) {
            return outcome;
        }
        let parsed = parse_resource(resource)
            .ok_or_else(|| scope.runtime(format!("The resource '{resource}' is not supported")))?;
        let timeout = seconds_field(scope, state, "TimeoutSeconds", &params)?;
        let heartbeat = seconds_field(scope, state, "HeartbeatSeconds", &params)?;
        let deadline = timeout.map(|s| now_millis().saturating_add(s.saturating_mul(1000)));
        let token = scope
            .extra
            .get("Task")
            .and_then(|t| t.get("Token"))
            .and_then(Json::as_str)
            .map(str::to_string);
        let work = async {
            let token = token.clone();
            match &parsed {
                Resource::Function(arn) => self.function(arn, params, lane).await,
                Resource::Activity(arn) => self.activity(arn, params, token, heartbeat, lane).await,
                Resource::Integration { .. } => {
                    self.integration(resource, &parsed, params, token, heartbeat, lane)
                        .await
                }
            }
        };
        match with_deadline(deadline, work).await {
            Some(result) => result,
            None => {
                if let Some(t) = &token {
                    lock(&self.engine.tokens).remove(t);
                    crate::stepfunctions::activities::dequeue(&self.engine, t);
                }
                let failure = Failure::new("States.Timeout", "");
                let details = json!({"error": failure.error, "cause": ""});
                let (kind, key, details) = match parsed {
                    Resource::Function(_) => (
                        "LambdaFunctionTimedOut",
                        "lambdaFunctionTimedOutEventDetails",
                        details,
                    ),
                    Resource::Activity(_) => {
                        ("ActivityTimedOut", "activityTimedOutEventDetails", details)
                    }
                    Resource::Integration { .. } => (
                        "TaskTimedOut",
                        "taskTimedOutEventDetails",
                        task_details(resource, details),
                    ),
                };
                self.history.add(&mut lane.prev, kind, Some(key), details);
                Err(failure)
            }
        }
    }

    /// After a restart, the outcome of the call the path's Task had made before it: its
    /// result, when the call had completed (it is not made again), or, when it was in
    /// flight, `States.TaskFailed` ([`INTERRUPTED`]), which the state's Retry and Catch
    /// handle as any failure of the call. None when there was no such call.
    fn interrupted_call(&self, resource: &str, lane: &mut Lane) -> Option<Result<Json, Failure>> {
        let (dispatched, called) = self
            .history
            .read_mark(&lane.path, |m| (m.dispatched, m.called.clone()))?;
        if let Some(output) = called {
            self.history.update_mark(&lane.path, |m| m.called = None);
            return Some(Ok(output));
        }
        if !dispatched {
            return None;
        }
        let failure = Result::Err(Failure::new("States.TaskFailed", INTERRUPTED));
        match parse_resource(resource) {
            Some(Resource::Function(_)) => self.function_closed(&failure, lane),
            _ => self.task_closed(resource, &failure, lane),
        }
        self.history.update_mark(&lane.path, |m| {
            m.dispatched = false;
            m.prev = lane.prev;
        });
        Some(failure)
    }

    /// Notes (and writes, with the events before it) that the path's Task call is about to
    /// be made.
    fn dispatch(&self, lane: &Lane) {
        self.history.update_mark(&lane.path, |m| {
            m.dispatched = true;
            m.prev = lane.prev;
        });
        self.flush();
    }

    /// Holds a Task call that returned while the server stops (Lambda's runtimes and
    /// SQS's long polls end then) as in flight: it is not recorded, so that the restart
    /// treats it as a call whose outcome is unknown.
    async fn held_if_stopping(&self) {
        if self.engine.stopping() {
            std::future::pending::<()>().await;
        }
    }

    /// Notes (and writes, with its closing event) how the path's Task call ended: a
    /// restart from here on does not make it again.
    fn record_call(&self, result: &Result<Json, Failure>, lane: &Lane) {
        self.history.update_mark(&lane.path, |m| {
            m.dispatched = false;
            m.called = result.as_ref().ok().cloned();
            m.prev = lane.prev;
        });
        self.flush();
    }

    /// A Lambda function named by its ARN: its payload is the result.
    async fn function(&self, arn: &str, input: Json, lane: &mut Lane) -> Result<Json, Failure> {
        self.history.add(&mut lane.prev, "LambdaFunctionScheduled", Some("lambdaFunctionScheduledEventDetails"),
            json!({"resource": arn, "input": input.to_string(), "inputDetails": {"truncated": false}}));
        self.history
            .add(&mut lane.prev, "LambdaFunctionStarted", None, json!({}));
        self.dispatch(lane);
        let result = self
            .invoke_lambda(arn, None, &input)
            .await
            .map(|out| out.get("Payload").cloned().unwrap_or(Json::Null));
        self.held_if_stopping().await;
        self.function_closed(&result, lane);
        self.record_call(&result, lane);
        result
    }

    /// The event that closes a Lambda function task.
    fn function_closed(&self, result: &Result<Json, Failure>, lane: &mut Lane) {
        match result {
            Ok(payload) => self.history.add(
                &mut lane.prev,
                "LambdaFunctionSucceeded",
                Some("lambdaFunctionSucceededEventDetails"),
                json!({"output": payload.to_string(), "outputDetails": {"truncated": false}}),
            ),
            Err(f) => self.history.add(
                &mut lane.prev,
                "LambdaFunctionFailed",
                Some("lambdaFunctionFailedEventDetails"),
                json!({"error": f.error, "cause": f.cause}),
            ),
        };
    }

    /// Lambda's Invoke through the dispatcher, answered as `lambda:invoke` answers.
    async fn invoke_lambda(
        &self,
        function: &str,
        qualifier: Option<&str>,
        payload: &Json,
    ) -> Result<Json, Failure> {
        let input = Value::map()
            .with("FunctionName", function)
            .with("Payload", Value::Blob(payload.to_string().into_bytes()))
            .with_opt("Qualifier", qualifier);
        let output = self
            .call("lambda", "Invoke", input)
            .await
            .map_err(|e| service_failure("Lambda", &e))?;
        let bytes = output
            .get("Payload")
            .and_then(Value::as_blob)
            .unwrap_or_default();
        let text = String::from_utf8_lossy(bytes).into_owned();
        let payload: Json = serde_json::from_str(&text).unwrap_or(Json::String(text.clone()));
        if output.get("FunctionError").is_some() {
            let error = payload
                .get("errorType")
                .and_then(Json::as_str)
                .unwrap_or("Lambda.Unknown");
            return Err(Failure::new(error, text));
        }
        Ok(json!({
            "ExecutedVersion": output.str("ExecutedVersion").unwrap_or("$LATEST"),
            "Payload": payload,
            "SdkHttpMetadata": {"HttpStatusCode": 200},
            "SdkResponseMetadata": {"RequestId": roto_core::dispatch::new_request_id()},
            "StatusCode": output.int("StatusCode").unwrap_or(200),
        }))
    }

    /// A call to another service's operation, as this execution's account and region.
    pub(super) async fn call(
        &self,
        service: &str,
        operation: &str,
        input: Value,
    ) -> Result<Value, AwsError> {
        self.call_request(service, operation, Request::new(input))
            .await
            .map(|r| r.output)
    }

    /// [`Run::call`] with the whole response, for a streamed payload (S3's GetObject).
    pub(super) async fn call_request(
        &self,
        service: &str,
        operation: &str,
        request: Request,
    ) -> Result<Response, AwsError> {
        let dispatcher = self
            .engine
            .env
            .dispatcher()
            .ok_or_else(|| AwsError::internal("the server is stopping"))?;
        let mut ctx = self.ctx.clone();
        ctx.request_id = roto_core::dispatch::new_request_id();
        dispatcher
            .call_request(&ctx, service, operation, request)
            .await
    }

    /// A service integration, request-response, `.sync` or `.waitForTaskToken`.
    async fn integration(
        self: &Arc<Run>,
        resource: &str,
        parsed: &Resource,
        params: Json,
        token: Option<String>,
        heartbeat: Option<i64>,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let Resource::Integration {
            sdk,
            service,
            action,
            pattern,
        } = parsed
        else {
            return Err(Failure::new("States.Runtime", "not an integration"));
        };
        let submitted = self.submitted(lane);
        let child = self
            .history
            .read_mark(&lane.path, |m| m.child.clone())
            .flatten();
        if !submitted && child.is_none() {
            let region = self.ctx.region.clone();
            self.history.add(
                &mut lane.prev,
                "TaskScheduled",
                Some("taskScheduledEventDetails"),
                task_details(
                    resource,
                    json!({"region": region, "parameters": params.to_string()}),
                ),
            );
            self.history.add(
                &mut lane.prev,
                "TaskStarted",
                Some("taskStartedEventDetails"),
                task_details(resource, json!({})),
            );
        }
        let receiver = token.as_ref().map(|t| self.register(t));
        match submitted || child.is_some() {
            true => self.flush(),
            false => self.dispatch(lane),
        }
        let result = match (submitted, receiver, child) {
            (true, Some(receiver), _) => self.wait_for_token(receiver, heartbeat).await,
            (_, _, Some(child)) => {
                self.wait_for_child(&child, *pattern == Pattern::Sync2)
                    .await
            }
            (_, receiver, None) => {
                let called = self
                    .call_integration(*sdk, service, action, *pattern, params, lane)
                    .await;
                self.held_if_stopping().await;
                match (called, receiver) {
                    (Ok(output), Some(receiver)) => {
                        self.history.add(&mut lane.prev, "TaskSubmitted", Some("taskSubmittedEventDetails"),
                            task_details(resource, json!({"output": output.to_string(), "outputDetails": {"truncated": false}})));
                        self.submit(lane);
                        self.wait_for_token(receiver, heartbeat).await
                    }
                    (other, _) => other,
                }
            }
        };
        if let Some(t) = &token {
            lock(&self.engine.tokens).remove(t);
        }
        self.task_closed(resource, &result, lane);
        self.record_call(&result, lane);
        result
    }

    fn task_closed(&self, resource: &str, result: &Result<Json, Failure>, lane: &mut Lane) {
        match result {
            Ok(output) => self.history.add(
                &mut lane.prev,
                "TaskSucceeded",
                Some("taskSucceededEventDetails"),
                task_details(
                    resource,
                    json!({"output": output.to_string(), "outputDetails": {"truncated": false}}),
                ),
            ),
            Err(f) if f.error == "States.HeartbeatTimeout" || f.error == "States.Timeout" => {
                self.history.add(
                    &mut lane.prev,
                    "TaskTimedOut",
                    Some("taskTimedOutEventDetails"),
                    task_details(resource, json!({"error": f.error, "cause": f.cause})),
                )
            }
            Err(f) => self.history.add(
                &mut lane.prev,
                "TaskFailed",
                Some("taskFailedEventDetails"),
                task_details(resource, json!({"error": f.error, "cause": f.cause})),
            ),
        };
    }

    async fn call_integration(
        &self,
        sdk: bool,
        service: &str,
        action: &str,
        pattern: Pattern,
        params: Json,
        lane: &Lane,
    ) -> Result<Json, Failure> {
        let unsupported = || {
            Failure::new(
                "States.Runtime",
                format!(
                    "The resource arn:aws:states:::{}{service}:{action} is not supported",
                    if sdk { "aws-sdk:" } else { "" }
                ),
            )
        };
        let (roto, prefix) = match sdk {
            true => sdk::service(service),
            false => optimised_service(service),
        }
        .ok_or_else(unsupported)?;
        if !sdk && roto == "lambda" && action == "invoke" {
            let function = params
                .get("FunctionName")
                .and_then(Json::as_str)
                .unwrap_or_default();
            let qualifier = params.get("Qualifier").and_then(Json::as_str);
            let payload = params.get("Payload").cloned().unwrap_or(json!({}));
            return self.invoke_lambda(function, qualifier, &payload).await;
        }
        let operation = sdk::operation(action);
        let model = roto_core::model::model(roto);
        let op = model.operation(&operation).ok_or_else(unsupported)?;
        let input = match &op.input {
            Some(r) => sdk::to_value(model, model.resolve(r), &params, 0)
                .map_err(|e| Failure::new("States.Runtime", e))?,
            None => Value::map(),
        };
        let output = self
            .call(roto, &operation, input)
            .await
            .map_err(|e| service_failure(prefix, &e))?;
        match (roto, pattern) {
            ("stepfunctions", Pattern::Sync | Pattern::Sync2) => {
                let arn = output.str("executionArn").unwrap_or_default().to_string();
                self.history.update_mark(&lane.path, |m| {
                    m.dispatched = false;
                    m.child = Some(arn.clone());
                });
                self.flush();
                self.wait_for_child(&arn, pattern == Pattern::Sync2).await
            }
            _ => Ok(sdk::to_json(
                model,
                op.output.as_ref().map(|r| model.resolve(r)),
                &output,
                0,
            )),
        }
    }

    /// Waits for a child execution to close (`.sync`), polling it on the server clock.
    async fn wait_for_child(&self, arn: &str, parsed_output: bool) -> Result<Json, Failure> {
        loop {
            let described = self
                .call(
                    "stepfunctions",
                    "DescribeExecution",
                    Value::map().with("executionArn", arn),
                )
                .await
                .map_err(|e| service_failure("StepFunctions", &e))?;
            let model = roto_core::model::model("stepfunctions");
            let mut json = sdk::to_json(model, None, &described, 0);
            match described.str("status") {
                Some("RUNNING") | None => sleep(std::time::Duration::from_millis(20)).await,
                Some("SUCCEEDED") => {
                    if parsed_output {
                        let output = described
                            .str("output")
                            .and_then(|o| serde_json::from_str(o).ok())
                            .unwrap_or(Json::Null);
                        json["Output"] = output;
                    }
                    return Ok(json);
                }
                Some(_) => return Err(Failure::new("States.TaskFailed", json.to_string())),
            }
        }
    }

    /// Whether the task of the state this path is in was handed over before a restart, so
    /// that only the wait for its token remains.
    fn submitted(&self, lane: &Lane) -> bool {
        self.history
            .read_mark(&lane.path, |m| m.submitted)
            .unwrap_or(false)
    }

    /// Notes (and writes) that the path's task was handed over: its callback message sent,
    /// its activity task queued.
    fn submit(&self, lane: &Lane) {
        self.history.update_mark(&lane.path, |m| {
            m.submitted = true;
            m.dispatched = false;
            m.prev = lane.prev;
        });
        self.flush();
    }

    /// Registers a task token; its signals arrive on the receiver.
    fn register(&self, token: &str) -> mpsc::UnboundedReceiver<Signal> {
        let (sender, receiver) = mpsc::unbounded_channel();
        lock(&self.engine.tokens).insert(token.to_string(), sender);
        receiver
    }

    /// Waits for SendTaskSuccess or SendTaskFailure; each heartbeat restarts the
    /// `HeartbeatSeconds` window.
    async fn wait_for_token(
        &self,
        mut receiver: mpsc::UnboundedReceiver<Signal>,
        heartbeat: Option<i64>,
    ) -> Result<Json, Failure> {
        loop {
            let deadline = heartbeat.map(|s| now_millis().saturating_add(s.saturating_mul(1000)));
            match with_deadline(deadline, receiver.recv()).await {
                None => return Err(Failure::new("States.HeartbeatTimeout", "")),
                Some(None) => {
                    return Err(Failure::new("States.Runtime", "The task token was dropped"))
                }
                Some(Some(Signal::Success(output))) => return Ok(output),
                Some(Some(Signal::Failure(f))) => return Err(f),
                Some(Some(Signal::Heartbeat)) => {}
            }
        }
    }

    /// An activity task: queued for GetActivityTask, answered by the worker.
    async fn activity(
        self: &Arc<Run>,
        arn: &str,
        input: Json,
        token: Option<String>,
        heartbeat: Option<i64>,
        lane: &mut Lane,
    ) -> Result<Json, Failure> {
        let token = token.unwrap_or_else(new_token);
        let receiver = self.register(&token);
        if !self.submitted(lane) {
            let scheduled = self.history.add(&mut lane.prev, "ActivityScheduled", Some("activityScheduledEventDetails"),
                json!({"resource": arn, "input": input.to_string(), "inputDetails": {"truncated": false}}));
            crate::stepfunctions::activities::enqueue(
                &self.engine,
                arn,
                &token,
                &self.arn,
                scheduled,
                &input,
            )
            .map_err(|e| Failure::new("States.Runtime", e.message))?;
            self.submit(lane);
        }
        let result = self.wait_for_token(receiver, heartbeat).await;
        lock(&self.engine.tokens).remove(&token);
        crate::stepfunctions::activities::dequeue(&self.engine, &token);
        let (kind, key, details) = match &result {
            Ok(output) => (
                "ActivitySucceeded",
                "activitySucceededEventDetails",
                json!({"output": output.to_string(), "outputDetails": {"truncated": false}}),
            ),
            Err(f) if f.error.ends_with("Timeout") => (
                "ActivityTimedOut",
                "activityTimedOutEventDetails",
                json!({"error": f.error, "cause": f.cause}),
            ),
            Err(f) => (
                "ActivityFailed",
                "activityFailedEventDetails",
                json!({"error": f.error, "cause": f.cause}),
            ),
        };
        self.history.add(&mut lane.prev, kind, Some(key), details);
        result
    }
}

/// `TimeoutSeconds`/`HeartbeatSeconds` or their `Path` forms.
fn seconds_field(
    scope: &Scope<'_>,
    state: &Json,
    field: &str,
    input: &Json,
) -> Result<Option<i64>, Failure> {
    if let Some(v) = state.get(field) {
        return Ok(v.as_i64());
    }
    match state
        .get(format!("{field}Path").as_str())
        .and_then(Json::as_str)
    {
        Some(p) => Ok(scope.select(p, input)?.as_i64()),
        None => Ok(None),
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resources_parse_into_their_patterns() {
        assert_eq!(
            parse_resource("arn:aws:states:::lambda:invoke.waitForTaskToken"),
            Some(Resource::Integration {
                sdk: false,
                service: "lambda".into(),
                action: "invoke".into(),
                pattern: Pattern::Callback
            })
        );
        assert_eq!(
            parse_resource("arn:aws:states:::states:startExecution.sync:2"),
            Some(Resource::Integration {
                sdk: false,
                service: "states".into(),
                action: "startExecution".into(),
                pattern: Pattern::Sync2
            })
        );
        assert_eq!(
            parse_resource("arn:aws:states:::aws-sdk:dynamodb:getItem"),
            Some(Resource::Integration {
                sdk: true,
                service: "dynamodb".into(),
                action: "getItem".into(),
                pattern: Pattern::RequestResponse
            })
        );
        assert!(matches!(
            parse_resource("arn:aws:lambda:us-east-1:000000000000:function:f"),
            Some(Resource::Function(_))
        ));
        assert!(parse_resource("nonsense").is_none());
        assert!(is_token(&new_token()));
    }

    #[test]
    fn service_errors_are_named_as_step_functions_names_them() {
        let e = AwsError::new("NoSuchKey", "gone");
        assert_eq!(service_failure("S3", &e).error, "S3.NoSuchKeyException");
        let e = AwsError::new("ResourceNotFoundException", "gone");
        assert_eq!(
            service_failure("Lambda", &e).error,
            "Lambda.ResourceNotFoundException"
        );
    }
}
