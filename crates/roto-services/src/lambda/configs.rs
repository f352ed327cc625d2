//! Function settings that change nothing in how Roto runs a function but that deployment
//! tools put and read back: recursive loop detection, runtime management, provisioned
//! concurrency, scaling of Managed Instances functions, layer version permissions and
//! resource-based policies by ARN. Each is stored as it is put (in `lambda_settings`) and
//! returned exactly, with Lambda's default where none was put.
//!
//! The features Roto does not model at all (capacity providers, durable executions,
//! streamed invocations) are answered by [`FEATURELESS`] as Lambda answers an account
//! without them: empty lists, and the not-found error for a named one.

use roto_core::featureless::Featureless;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::functions::last_modified_at;
use super::layers::name_of;
use super::{function_arn, invalid_parameter, revision_id, target_of, Lambda};

const RECURSION: &str = "recursion";
const RUNTIME_MANAGEMENT: &str = "runtime-management";
const PROVISIONED: &str = "provisioned";
const SCALING: &str = "scaling";
const LAYER_POLICY: &str = "layer-policy";
const RESOURCE_POLICY: &str = "resource-policy";

/// Lambda features Roto does not model, answered as for an account without them.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListCapacityProviders"),
    Featureless::error("GetCapacityProvider", capacity_provider_not_found),
    Featureless::error("UpdateCapacityProvider", capacity_provider_not_found),
    Featureless::error("DeleteCapacityProvider", capacity_provider_not_found),
    Featureless::error("CreateCapacityProvider", |_| {
        invalid_parameter("Capacity providers are not supported in this region.")
    }),
    Featureless::error(
        "ListFunctionVersionsByCapacityProvider",
        capacity_provider_not_found,
    ),
    Featureless::error("GetDurableExecution", durable_execution_not_found),
    Featureless::error("GetDurableExecutionHistory", durable_execution_not_found),
    Featureless::error("GetDurableExecutionState", durable_execution_not_found),
    Featureless::error("DeleteDurableExecution", durable_execution_not_found),
    Featureless::error("StopDurableExecution", durable_execution_not_found),
    Featureless::error("PauseDurableExecution", durable_execution_not_found),
    Featureless::error("ResumeDurableExecution", durable_execution_not_found),
    Featureless::error("CheckpointDurableExecution", durable_execution_not_found),
    Featureless::error("SendDurableExecutionCallbackSuccess", callback_not_found),
    Featureless::error("SendDurableExecutionCallbackFailure", callback_not_found),
    Featureless::error("SendDurableExecutionCallbackHeartbeat", callback_not_found),
    Featureless::empty("ListDurableExecutionsByFunction"),
];

fn not_found(message: String) -> AwsError {
    AwsError::new("ResourceNotFoundException", message)
        .with_status(404)
        .with_field("Type", "User")
}

fn capacity_provider_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Capacity provider not found: {}",
        input.str("CapacityProviderName").unwrap_or_default()
    ))
}

fn durable_execution_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Durable execution not found: {}",
        input.str("DurableExecutionArn").unwrap_or_default()
    ))
}

fn callback_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Callback not found: {}",
        input.str("CallbackId").unwrap_or_default()
    ))
}

impl Lambda {
    /// The function a request names (checked to exist), its qualifier, and the ARN the
    /// settings' outputs carry.
    fn config_target(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String, String)> {
        let (name, qualifier) = target_of(input)?;
        self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        let arn = match &qualifier {
            Some(q) => format!("{}:{q}", function_arn(ctx, &name)),
            None => function_arn(ctx, &name),
        };
        Ok((name, qualifier.unwrap_or_default(), arn))
    }

    /// Whether `operation` is a function setting this module serves.
    pub(super) fn serves_config(operation: &str) -> bool {
        matches!(
            operation,
            "GetFunctionRecursionConfig"
                | "PutFunctionRecursionConfig"
                | "GetRuntimeManagementConfig"
                | "PutRuntimeManagementConfig"
                | "PutProvisionedConcurrencyConfig"
                | "GetProvisionedConcurrencyConfig"
                | "DeleteProvisionedConcurrencyConfig"
                | "ListProvisionedConcurrencyConfigs"
                | "GetFunctionScalingConfig"
                | "PutFunctionScalingConfig"
                | "AddLayerVersionPermission"
                | "GetLayerVersionPolicy"
                | "RemoveLayerVersionPermission"
                | "PutResourcePolicy"
                | "GetResourcePolicy"
                | "DeleteResourcePolicy"
        )
    }

    /// Runs one of the settings [`Lambda::serves_config`] names.
    pub(super) fn config(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        match operation {
            "GetFunctionRecursionConfig" | "PutFunctionRecursionConfig" => {
                self.recursion_config(ctx, operation, input)
            }
            "GetRuntimeManagementConfig" | "PutRuntimeManagementConfig" => {
                self.runtime_management_config(ctx, operation, input)
            }
            "GetFunctionScalingConfig" | "PutFunctionScalingConfig" => {
                self.scaling_config(ctx, operation, input)
            }
            "AddLayerVersionPermission"
            | "GetLayerVersionPolicy"
            | "RemoveLayerVersionPermission" => self.layer_policy(ctx, operation, input),
            "PutResourcePolicy" | "GetResourcePolicy" | "DeleteResourcePolicy" => {
                self.resource_policy(ctx, operation, input)
            }
            _ => self.provisioned_concurrency(ctx, operation, input),
        }
    }

    fn recursion_config(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let (name, _, _) = self.config_target(ctx, input)?;
        if operation == "PutFunctionRecursionConfig" {
            let value = input.str("RecursiveLoop").unwrap_or("Terminate");
            self.put_setting(ctx, &name, "", RECURSION, Some(&value.into()))?;
            return Ok(Value::map().with("RecursiveLoop", value));
        }
        let stored = self.setting(ctx, &name, "", RECURSION)?;
        let value = stored
            .as_ref()
            .and_then(|v| v.as_str())
            .unwrap_or("Terminate");
        Ok(Value::map().with("RecursiveLoop", value))
    }

    fn runtime_management_config(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, qualifier, arn) = self.config_target(ctx, input)?;
        let qualifier = if qualifier.is_empty() {
            "$LATEST"
        } else {
            &qualifier
        };
        if operation == "PutRuntimeManagementConfig" {
            let mode = input.str("UpdateRuntimeOn").unwrap_or("Auto");
            let version = input.str("RuntimeVersionArn");
            match (mode, version) {
                ("Manual", None) => {
                    return Err(invalid_parameter(
                        "RuntimeVersionArn must be provided when UpdateRuntimeOn is Manual.",
                    ))
                }
                ("Auto" | "FunctionUpdate", Some(_)) => {
                    return Err(invalid_parameter(format!(
                        "RuntimeVersionArn must not be provided when UpdateRuntimeOn is {mode}."
                    )))
                }
                _ => {}
            }
            let stored = serde_json::json!({"UpdateRuntimeOn": mode, "RuntimeVersionArn": version});
            self.put_setting(ctx, &name, qualifier, RUNTIME_MANAGEMENT, Some(&stored))?;
        }
        let stored = self.setting(ctx, &name, qualifier, RUNTIME_MANAGEMENT)?;
        let mode = stored.as_ref().and_then(|s| s["UpdateRuntimeOn"].as_str());
        let version = stored
            .as_ref()
            .and_then(|s| s["RuntimeVersionArn"].as_str());
        Ok(Value::map()
            .with("UpdateRuntimeOn", mode.unwrap_or("Auto"))
            .with("FunctionArn", arn)
            .with_opt("RuntimeVersionArn", version))
    }

    fn scaling_config(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let (name, qualifier, arn) = self.config_target(ctx, input)?;
        if operation == "PutFunctionScalingConfig" {
            let config = input
                .get("FunctionScalingConfig")
                .map_or(serde_json::json!({}), Value::to_json);
            self.put_setting(ctx, &name, &qualifier, SCALING, Some(&config))?;
            return Ok(Value::map().with("FunctionState", "Active"));
        }
        let config = self
            .setting(ctx, &name, &qualifier, SCALING)?
            .map(|c| Value::from_json(&c));
        Ok(Value::map()
            .with("FunctionArn", arn)
            .with_opt("AppliedFunctionScalingConfig", config.clone())
            .with_opt("RequestedFunctionScalingConfig", config))
    }

    fn provisioned_concurrency(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        if operation == "ListProvisionedConcurrencyConfigs" {
            return self.list_provisioned_concurrency(ctx, input);
        }
        let (name, qualifier, arn) = self.config_target(ctx, input)?;
        if qualifier.is_empty() || qualifier == "$LATEST" {
            return Err(invalid_parameter(
                "Provisioned Concurrency Configs cannot be applied to unpublished function versions.",
            ));
        }
        let missing = || {
            AwsError::new(
                "ProvisionedConcurrencyConfigNotFoundException",
                "No Provisioned Concurrency Config found for this function",
            )
            .with_status(404)
            .with_field("Type", "User")
        };
        match operation {
            "PutProvisionedConcurrencyConfig" => {
                let requested = input.int("ProvisionedConcurrentExecutions").unwrap_or(0);
                let stored = serde_json::json!({
                    "FunctionArn": arn,
                    "Requested": requested,
                    "LastModified": last_modified_at(now_millis()),
                });
                self.put_setting(ctx, &name, &qualifier, PROVISIONED, Some(&stored))?;
                Ok(provisioned(&stored, "IN_PROGRESS"))
            }
            "DeleteProvisionedConcurrencyConfig" => {
                self.setting(ctx, &name, &qualifier, PROVISIONED)?
                    .ok_or_else(missing)?;
                self.put_setting(ctx, &name, &qualifier, PROVISIONED, None)?;
                Ok(Value::map())
            }
            _ => self
                .setting(ctx, &name, &qualifier, PROVISIONED)?
                .map(|s| provisioned(&s, "READY"))
                .ok_or_else(missing),
        }
    }

    fn list_provisioned_concurrency(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, _, _) = self.config_target(ctx, input)?;
        let configs = self
            .settings_of_kind(ctx, &name, PROVISIONED)?
            .iter()
            .map(|s| provisioned(s, "READY").with_opt("FunctionArn", s["FunctionArn"].as_str()))
            .collect::<Vec<_>>();
        Ok(Value::map().with("ProvisionedConcurrencyConfigs", configs))
    }

    fn layer_policy(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        self.get_layer_version(ctx, input)?;
        let key = format!(
            "layer:{}",
            name_of(input.str("LayerName").unwrap_or_default())
        );
        let version = input.int("VersionNumber").unwrap_or_default().to_string();
        let mut policy = self.setting(ctx, &key, &version, LAYER_POLICY)?;
        let missing = || not_found("No policy is associated with the given resource.".into());
        match operation {
            "GetLayerVersionPolicy" => {
                let policy = policy.ok_or_else(missing)?;
                Ok(Value::map()
                    .with("Policy", policy["Policy"].to_string())
                    .with_opt("RevisionId", policy["RevisionId"].as_str()))
            }
            "AddLayerVersionPermission" => {
                let statement = layer_statement(ctx, input);
                let mut doc = policy.take().map_or_else(
                    || serde_json::json!({"Version": "2012-10-17", "Id": "default", "Statement": []}),
                    |p| p["Policy"].clone(),
                );
                let sid = input.str("StatementId").unwrap_or_default();
                let statements = doc["Statement"].as_array_mut();
                let Some(statements) = statements else {
                    return Err(AwsError::internal(
                        "a stored layer policy has no statements",
                    ));
                };
                if statements.iter().any(|s| s["Sid"] == sid) {
                    return Err(super::conflict(format!(
                        "The statement id ({sid}) provided already exists. Please provide a new statement id, or remove the existing statement."
                    )));
                }
                statements.push(statement.clone());
                let revision = revision_id();
                let stored = serde_json::json!({"Policy": doc, "RevisionId": revision});
                self.put_setting(ctx, &key, &version, LAYER_POLICY, Some(&stored))?;
                Ok(Value::map()
                    .with("Statement", statement.to_string())
                    .with("RevisionId", revision))
            }
            _ => {
                let sid = input.str("StatementId").unwrap_or_default();
                let mut stored = policy.ok_or_else(missing)?;
                let statements = stored["Policy"]["Statement"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let kept: Vec<_> = statements
                    .iter()
                    .filter(|s| s["Sid"] != sid)
                    .cloned()
                    .collect();
                if kept.len() == statements.len() {
                    return Err(not_found(format!(
                        "Statement {sid} is not found in resource policy."
                    )));
                }
                let empty = kept.is_empty();
                stored["Policy"]["Statement"] = serde_json::Value::Array(kept);
                stored["RevisionId"] = revision_id().into();
                self.put_setting(
                    ctx,
                    &key,
                    &version,
                    LAYER_POLICY,
                    (!empty).then_some(&stored),
                )?;
                Ok(Value::map())
            }
        }
    }

    fn resource_policy(&self, ctx: &Context, operation: &str, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let key = format!("arn:{arn}");
        let missing = || not_found(format!("The resource you requested does not exist. {arn}"));
        match operation {
            "PutResourcePolicy" => {
                let policy = input.str("Policy").unwrap_or_default();
                if serde_json::from_str::<serde_json::Value>(policy).is_err() {
                    return Err(invalid_parameter("The policy is not valid JSON."));
                }
                let revision = revision_id();
                let stored = serde_json::json!({"Policy": policy, "RevisionId": revision});
                self.put_setting(ctx, &key, "", RESOURCE_POLICY, Some(&stored))?;
                Ok(Value::map()
                    .with("Policy", policy)
                    .with("RevisionId", revision))
            }
            "GetResourcePolicy" => {
                let stored = self
                    .setting(ctx, &key, "", RESOURCE_POLICY)?
                    .ok_or_else(missing)?;
                Ok(Value::map()
                    .with_opt("Policy", stored["Policy"].as_str())
                    .with_opt("RevisionId", stored["RevisionId"].as_str()))
            }
            _ => {
                self.setting(ctx, &key, "", RESOURCE_POLICY)?
                    .ok_or_else(missing)?;
                self.put_setting(ctx, &key, "", RESOURCE_POLICY, None)?;
                Ok(Value::map())
            }
        }
    }
}

/// A provisioned concurrency configuration as Lambda describes it once allocated.
fn provisioned(stored: &serde_json::Value, status: &str) -> Value {
    let requested = stored["Requested"].as_i64().unwrap_or(0);
    let allocated = if status == "READY" { requested } else { 0 };
    Value::map()
        .with("RequestedProvisionedConcurrentExecutions", requested)
        .with("AvailableProvisionedConcurrentExecutions", allocated)
        .with("AllocatedProvisionedConcurrentExecutions", allocated)
        .with("Status", status)
        .with_opt("LastModified", stored["LastModified"].as_str())
}

/// The statement AddLayerVersionPermission adds.
fn layer_statement(ctx: &Context, input: &Value) -> serde_json::Value {
    let principal = input.str("Principal").unwrap_or_default();
    let principal = if principal == "*" {
        serde_json::json!("*")
    } else {
        serde_json::json!({"AWS": format!("arn:aws:iam::{principal}:root")})
    };
    let mut statement = serde_json::json!({
        "Sid": input.str("StatementId").unwrap_or_default(),
        "Effect": "Allow",
        "Principal": principal,
        "Action": input.str("Action").unwrap_or_default(),
        "Resource": format!(
            "arn:aws:lambda:{}:{}:layer:{}:{}",
            ctx.region,
            ctx.account,
            input.str("LayerName").unwrap_or_default(),
            input.int("VersionNumber").unwrap_or_default()
        ),
    });
    if let Some(org) = input.str("OrganizationId") {
        statement["Condition"] = serde_json::json!({"StringEquals": {"aws:PrincipalOrgID": org}});
    }
    statement
}
