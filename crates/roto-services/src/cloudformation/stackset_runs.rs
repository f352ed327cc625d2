//! StackSet operations as they run: recorded `RUNNING`, then carried out instance by
//! instance on a background task through CloudFormation's own stack operations on the
//! dispatcher, in the instance's account and region, each stack awaited until it settles.
//! The outcome of each instance is its `StackInstanceStatus` and a result of the
//! operation; the operation `SUCCEEDED` unless more instances failed than its
//! `FailureToleranceCount` allows. `StopStackSetOperation` stops it before its next
//! instance.

use std::sync::Arc;
use std::time::Duration;

use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::stacksets::{load_set, now_seconds, under, INSTANCE, OPERATION};
use super::Inner;
use crate::documents::document;
use crate::ids;

/// How long an instance's stack may take to settle before the instance fails.
const SETTLE_LIMIT: Duration = Duration::from_secs(600);
/// How often a settling stack is looked at.
const POLL: Duration = Duration::from_millis(50);

/// One account and region of a stack set.
#[derive(Debug, Clone)]
pub(crate) struct Target {
    pub account: String,
    pub region: String,
}

/// What an operation does to each instance.
#[derive(Debug, Clone, Copy)]
pub(crate) enum Action {
    Create,
    Update,
    Delete {
        retain: bool,
    },
    DetectDrift,
    /// Existing stacks adopted as instances.
    Import,
}

impl Action {
    fn name(self) -> &'static str {
        match self {
            Action::Create | Action::Import => "CREATE",
            Action::Update => "UPDATE",
            Action::Delete { .. } => "DELETE",
            Action::DetectDrift => "DETECT_DRIFT",
        }
    }
}

/// The operation `id` of the set `name`, as stored.
pub(crate) fn operation(inner: &Inner, ctx: &Context, name: &str, id: &str) -> AwsResult<Json> {
    inner
        .documents
        .get(under(ctx, OPERATION, name), id)?
        .ok_or_else(|| {
            AwsError::new(
                "OperationNotFoundException",
                format!("Operation {id} of StackSet {name} not found"),
            )
        })
}

/// Refuses a new operation while another of the set runs, as AWS does.
pub(crate) fn check_idle(inner: &Inner, ctx: &Context, name: &str) -> AwsResult<()> {
    let busy = inner
        .documents
        .list(under(ctx, OPERATION, name))?
        .iter()
        .any(|op| op["Status"] == "RUNNING" || op["Status"] == "STOPPING");
    if busy {
        return Err(AwsError::new(
            "OperationInProgressException",
            format!("Another Operation on StackSet {name} is in progress"),
        ));
    }
    Ok(())
}

/// Marks a running operation to stop before its next instance.
pub(crate) fn request_stop(inner: &Inner, ctx: &Context, name: &str, id: &str) -> AwsResult<()> {
    let mut op = operation(inner, ctx, name, id)?;
    op["Status"] = "STOPPING".into();
    inner.documents.put(under(ctx, OPERATION, name), id, &op)
}

/// Records the operation and starts it; its id.
pub(crate) fn start(
    inner: &Arc<Inner>,
    ctx: &Context,
    name: &str,
    action: Action,
    targets: Vec<Target>,
    input: &Value,
) -> AwsResult<String> {
    let id = record(inner, ctx, name, action, input)?;
    let run = Run {
        inner: inner.clone(),
        ctx: ctx.clone(),
        set: name.to_string(),
        id: id.clone(),
        action,
        overrides: document(input)["ParameterOverrides"].clone(),
    };
    tokio::spawn(run.all(targets, Vec::new()));
    Ok(id)
}

/// Starts an import of the stacks `stack_ids`, one per target.
pub(crate) fn start_import(
    inner: &Arc<Inner>,
    ctx: &Context,
    name: &str,
    targets: Vec<Target>,
    stack_ids: Vec<String>,
    input: &Value,
) -> AwsResult<String> {
    let id = record(inner, ctx, name, Action::Import, input)?;
    let run = Run {
        inner: inner.clone(),
        ctx: ctx.clone(),
        set: name.to_string(),
        id: id.clone(),
        action: Action::Import,
        overrides: Json::Null,
    };
    tokio::spawn(run.all(targets, stack_ids));
    Ok(id)
}

/// Writes the operation's document, `RUNNING`, refusing an id already used.
fn record(
    inner: &Inner,
    ctx: &Context,
    name: &str,
    action: Action,
    input: &Value,
) -> AwsResult<String> {
    let set = load_set(inner, ctx, name)?;
    let id = input
        .str("OperationId")
        .map(str::to_string)
        .unwrap_or_else(ids::uuid);
    if inner
        .documents
        .get(under(ctx, OPERATION, name), &id)?
        .is_some()
    {
        return Err(AwsError::new(
            "OperationIdAlreadyExistsException",
            format!("Operation {id} already exists"),
        ));
    }
    let given = document(input);
    let mut op = json!({
        "OperationId": id,
        "StackSetId": set["StackSetId"],
        "Action": action.name(),
        "Status": "RUNNING",
        "AdministrationRoleARN": set["AdministrationRoleARN"],
        "ExecutionRoleName": set["ExecutionRoleName"],
        "CreationTimestamp": now_seconds(),
        "OperationPreferences": given.get("OperationPreferences").cloned().unwrap_or(json!({})),
        "Results": [],
    });
    if let Action::Delete { retain } = action {
        op["RetainStacks"] = retain.into();
    }
    if let Some(targets) = given.get("DeploymentTargets") {
        op["DeploymentTargets"] = targets.clone();
    }
    inner.documents.put(under(ctx, OPERATION, name), &id, &op)?;
    Ok(id)
}

/// One operation as it runs.
struct Run {
    inner: Arc<Inner>,
    ctx: Context,
    set: String,
    id: String,
    action: Action,
    overrides: Json,
}

impl Run {
    async fn all(self, targets: Vec<Target>, stack_ids: Vec<String>) {
        let mut failures = 0;
        for (n, target) in targets.iter().enumerate() {
            if self.stopping() {
                return self.finish("STOPPED", failures).await;
            }
            let outcome = self.one(target, stack_ids.get(n).map(String::as_str)).await;
            if outcome.is_err() {
                failures += 1;
            }
            if let Err(e) = self.result(target, outcome) {
                tracing::warn!("stack set operation {}: {}", self.id, e.message);
            }
        }
        let tolerance = self.tolerance();
        let status = if failures > tolerance {
            "FAILED"
        } else {
            "SUCCEEDED"
        };
        self.finish(status, failures).await;
    }

    fn stopping(&self) -> bool {
        operation(&self.inner, &self.ctx, &self.set, &self.id)
            .is_ok_and(|op| op["Status"] == "STOPPING")
    }

    fn tolerance(&self) -> usize {
        operation(&self.inner, &self.ctx, &self.set, &self.id)
            .ok()
            .and_then(|op| op["OperationPreferences"]["FailureToleranceCount"].as_u64())
            .unwrap_or(0) as usize
    }

    async fn finish(&self, status: &str, failures: usize) {
        let Ok(mut op) = operation(&self.inner, &self.ctx, &self.set, &self.id) else {
            return;
        };
        op["Status"] = status.into();
        op["EndTimestamp"] = now_seconds();
        op["StatusDetails"] = json!({"FailedStackInstancesCount": failures});
        if let Action::DetectDrift = self.action {
            self.record_drift(&mut op);
        }
        let scope = under(&self.ctx, OPERATION, &self.set);
        if let Err(e) = self.inner.documents.put(scope, &self.id, &op) {
            tracing::warn!("stack set operation {}: {}", self.id, e.message);
        }
    }

    /// A drift detection's details on the operation and the set: no instance's resources
    /// are checked (see [`super::drift`]), so every count is zero and the set is not
    /// checked.
    fn record_drift(&self, op: &mut Json) {
        let details = json!({
            "DriftStatus": "NOT_CHECKED",
            "DriftDetectionStatus": "COMPLETED",
            "LastDriftCheckTimestamp": now_seconds(),
            "TotalStackInstancesCount": 0,
            "DriftedStackInstancesCount": 0,
            "InSyncStackInstancesCount": 0,
            "InProgressStackInstancesCount": 0,
            "FailedStackInstancesCount": 0,
        });
        op["StackSetDriftDetectionDetails"] = details.clone();
        if let Ok(mut set) = load_set(&self.inner, &self.ctx, &self.set) {
            set["StackSetDriftDetectionDetails"] = details;
            let scope = super::stacksets::sets(&self.ctx);
            if let Err(e) = self.inner.documents.put(scope, &self.set, &set) {
                tracing::warn!("stack set {}: {}", self.set, e.message);
            }
        }
    }

    /// Carries out the action on one instance; the instance's stack id, or why it failed.
    async fn one(&self, target: &Target, import: Option<&str>) -> Result<Option<String>, String> {
        let at = Context {
            account: target.account.clone(),
            region: target.region.clone(),
            access_key: None,
            ..self.ctx.clone()
        };
        let existing = self.instance(target);
        let stack_id = existing
            .as_ref()
            .and_then(|i| i["StackId"].as_str())
            .map(str::to_string);
        match (self.action, stack_id) {
            (Action::Import, _) => Ok(import.map(str::to_string)),
            (Action::DetectDrift, id) => Ok(id),
            (Action::Delete { retain: true }, _) => Ok(None),
            (Action::Delete { .. }, Some(id)) => self.delete(&at, &id).await.map(|_| None),
            (Action::Delete { .. }, None) => Ok(None),
            (Action::Create | Action::Update, Some(id)) => self.update(&at, &id, target).await,
            (Action::Create | Action::Update, None) => self.create(&at, target).await,
        }
    }

    fn instance(&self, target: &Target) -> Option<Json> {
        super::stacksets::instance(
            &self.inner,
            &self.ctx,
            &self.set,
            &target.account,
            &target.region,
        )
        .ok()
    }

    /// The stack's input: the set's template, capabilities and tags, and its parameters
    /// with this instance's overrides (kept from earlier operations unless given anew).
    fn stack_input(&self, target: &Target) -> AwsResult<Value> {
        let set = load_set(&self.inner, &self.ctx, &self.set)?;
        let overrides = match &self.overrides {
            Json::Array(given) => given.clone(),
            _ => self
                .instance(target)
                .and_then(|i| i["ParameterOverrides"].as_array().cloned())
                .unwrap_or_default(),
        };
        let mut parameters = set["Parameters"].as_array().cloned().unwrap_or_default();
        for o in &overrides {
            parameters.retain(|p| p["ParameterKey"] != o["ParameterKey"]);
            parameters.push(o.clone());
        }
        let shaped = json!({
            "TemplateBody": set["TemplateBody"],
            "Parameters": parameters,
            "Capabilities": set["Capabilities"],
            "Tags": set["Tags"],
        });
        crate::documents::shaped(super::SPEC.model(), "CreateStackInput", &shaped)
    }

    async fn create(&self, at: &Context, target: &Target) -> Result<Option<String>, String> {
        let mut input = self.stack_input(target).map_err(|e| e.message)?;
        input.insert(
            "StackName",
            format!("StackSet-{}-{}", self.set, ids::uuid()),
        );
        let out = self.call(at, "CreateStack", input).await?;
        let id = out.str("StackId").unwrap_or_default().to_string();
        self.settle(at, &id, "CREATE_COMPLETE").await?;
        Ok(Some(id))
    }

    async fn update(
        &self,
        at: &Context,
        id: &str,
        target: &Target,
    ) -> Result<Option<String>, String> {
        let mut input = self.stack_input(target).map_err(|e| e.message)?;
        input.insert("StackName", id);
        match self.call(at, "UpdateStack", input).await {
            Err(reason) if reason.contains("No updates are to be performed") => {}
            Err(reason) => return Err(reason),
            Ok(_) => self.settle(at, id, "UPDATE_COMPLETE").await?,
        }
        Ok(Some(id.to_string()))
    }

    async fn delete(&self, at: &Context, id: &str) -> Result<(), String> {
        self.call(at, "DeleteStack", Value::map().with("StackName", id))
            .await?;
        self.settle(at, id, "DELETE_COMPLETE").await
    }

    async fn call(&self, at: &Context, operation: &str, input: Value) -> Result<Value, String> {
        let dispatcher = self.inner.dispatcher().map_err(|e| e.message)?;
        dispatcher
            .call(at, "cloudformation", operation, input)
            .await
            .map_err(|e| e.message)
    }

    /// Waits until the stack `id` leaves its in-progress states; an error unless it ends
    /// in `wanted`.
    async fn settle(&self, at: &Context, id: &str, wanted: &str) -> Result<(), String> {
        let deadline = tokio::time::Instant::now() + SETTLE_LIMIT;
        loop {
            let out = self
                .call(at, "DescribeStacks", Value::map().with("StackName", id))
                .await?;
            let stack = out
                .get("Stacks")
                .and_then(Value::as_list)
                .and_then(|l| l.first().cloned())
                .unwrap_or_else(Value::map);
            let status = stack.str("StackStatus").unwrap_or_default();
            if !status.ends_with("IN_PROGRESS") {
                return match status == wanted {
                    true => Ok(()),
                    false => Err(format!(
                        "ResourceLogicalId:{}, ResourceStatus:{status}, ResourceStatusReason:{}",
                        stack.str("StackName").unwrap_or_default(),
                        stack.str("StackStatusReason").unwrap_or_default()
                    )),
                };
            }
            if tokio::time::Instant::now() > deadline {
                return Err(format!("Stack {id} did not settle in time"));
            }
            tokio::time::sleep(POLL).await;
        }
    }

    /// Records one instance's outcome: its document, and a result of the operation.
    fn result(&self, target: &Target, outcome: Result<Option<String>, String>) -> AwsResult<()> {
        let key = format!("{}:{}", target.account, target.region);
        let scope = under(&self.ctx, INSTANCE, &self.set);
        let set = load_set(&self.inner, &self.ctx, &self.set)?;
        let mut instance = self.instance(target).unwrap_or_else(|| {
            json!({
                "StackSetId": set["StackSetId"],
                "Account": target.account,
                "Region": target.region,
                "DriftStatus": "NOT_CHECKED",
                "ParameterOverrides": [],
            })
        });
        instance["LastOperationId"] = self.id.clone().into();
        if let Json::Array(_) = self.overrides {
            instance["ParameterOverrides"] = self.overrides.clone();
        }
        let (status, reason) = match &outcome {
            Ok(stack_id) => {
                if let Some(id) = stack_id {
                    instance["StackId"] = id.clone().into();
                }
                instance["Status"] = "CURRENT".into();
                instance["StackInstanceStatus"] = json!({"DetailedStatus": "SUCCEEDED"});
                if let Some(o) = instance.as_object_mut() {
                    o.remove("StatusReason");
                }
                ("SUCCEEDED", None)
            }
            Err(reason) => {
                instance["Status"] = "OUTDATED".into();
                instance["StackInstanceStatus"] = json!({"DetailedStatus": "FAILED"});
                instance["StatusReason"] = reason.clone().into();
                ("FAILED", Some(reason.clone()))
            }
        };
        let removed = matches!(self.action, Action::Delete { .. }) && outcome.is_ok();
        if removed {
            self.inner.documents.delete(scope, &key)?;
        } else {
            self.inner.documents.put(scope, &key, &instance)?;
        }
        let mut op = operation(&self.inner, &self.ctx, &self.set, &self.id)?;
        let mut result = json!({
            "Account": target.account,
            "Region": target.region,
            "Status": status,
            "AccountGateResult": {"Status": "SKIPPED", "StatusReason": "Function not found: arn:aws:lambda:::function:AWSCloudFormationStackSetAccountGate"},
        });
        if let Some(reason) = reason {
            result["StatusReason"] = reason.into();
        }
        if let Some(results) = op["Results"].as_array_mut() {
            results.push(result);
        }
        self.inner
            .documents
            .put(under(&self.ctx, OPERATION, &self.set), &self.id, &op)
    }
}
