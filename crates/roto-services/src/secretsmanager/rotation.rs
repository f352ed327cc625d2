//! Rotation: RotateSecret records the function and schedule and, when rotating now, adds
//! the new version (labelled `AWSPENDING`, no value yet) and publishes a rotation event on
//! the bus. The bus hands it back to this service, which invokes the rotation function
//! through the dispatcher for each of AWS's four steps (`createSecret`, `setSecret`,
//! `testSecret`, `finishSecret`), as AWS does after RotateSecret returns. The function
//! itself moves the labels with PutSecretValue and UpdateSecretVersionStage; once it
//! finishes, the `AWSPENDING` label is taken off, `LastRotatedDate` set, and the secret's
//! replicas brought in line.

use roto_core::dispatch::new_request_id;
use roto_core::events::Event;
use roto_core::protocol::json::value_to_json;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsResult, Context, Value};

use super::stages::PENDING;
use super::versions::new_version_id;
use super::{invalid_request, SecretsManager};

/// The event kind the bus brings back to run a rotation.
pub(super) const ROTATION_EVENT: &str = "secretsmanager:RotateSecret";

/// The steps a rotation function is invoked with, in order.
const STEPS: &[&str] = &["createSecret", "setSecret", "testSecret", "finishSecret"];

impl SecretsManager {
    pub(super) fn rotate_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        let lambda = input
            .str("RotationLambdaARN")
            .filter(|l| !l.is_empty())
            .map(str::to_string)
            .or_else(|| secret.rotation_lambda.clone())
            .ok_or_else(|| {
                invalid_request("No Lambda rotation function ARN is associated with this secret.")
            })?;
        let rules = match input.get("RotationRules") {
            Some(r) => Some(value_to_json(r).to_string()),
            None => secret.rotation_rules.clone(),
        };
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sm_secrets SET rotation_enabled = 1, rotation_lambda = ?4, rotation_rules = ?5
                 WHERE account = ?1 AND region = ?2 AND name = ?3",
                rusqlite::params![ctx.account, ctx.region, secret.name, lambda, rules],
            )
        })?;
        let out = Value::map()
            .with("ARN", secret.arn.as_str())
            .with("Name", secret.name.as_str());
        if !input.bool("RotateImmediately").unwrap_or(true) {
            return Ok(out);
        }
        let token = input
            .str("ClientRequestToken")
            .map(str::to_string)
            .unwrap_or_else(new_version_id);
        self.add_placeholder(ctx, &secret, &token)?;
        self.env.bus.publish(Event {
            kind: ROTATION_EVENT.into(),
            source_service: "secretsmanager".into(),
            source: secret.arn.clone(),
            target_service: "secretsmanager".into(),
            target: lambda.clone(),
            account: ctx.account.clone(),
            region: ctx.region.clone(),
            payload: Value::map()
                .with("SecretId", secret.arn.as_str())
                .with("ClientRequestToken", token.as_str())
                .with("RotationLambdaARN", lambda),
            max_attempts: 1,
        });
        Ok(out.with("VersionId", token))
    }

    pub(super) fn cancel_rotate_secret(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let secret = self.live_secret(ctx, input)?;
        self.env.store.with(|c| {
            c.execute_cached(
                "UPDATE sm_secrets SET rotation_enabled = 0 WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, &secret.name],
            )
        })?;
        let pending = self.stage_map(ctx, &secret.name)?.as_map().and_then(|m| {
            m.iter()
                .find(|(_, labels)| {
                    labels
                        .as_list()
                        .is_some_and(|l| l.iter().any(|x| x.as_str() == Some(PENDING)))
                })
                .map(|(id, _)| id.clone())
        });
        Ok(Value::map()
            .with("ARN", secret.arn)
            .with("Name", secret.name)
            .with_opt("VersionId", pending))
    }

    /// Runs a rotation the bus delivered: the four steps, then the bookkeeping.
    pub(super) async fn run_rotation(&self, event: &Event) -> Result<(), String> {
        let dispatcher = self
            .env
            .dispatcher()
            .ok_or_else(|| "the dispatcher is not running".to_string())?;
        let ctx = Context {
            account: event.account.clone(),
            region: event.region.clone(),
            access_key: None,
            request_id: new_request_id(),
            host: String::new(),
        };
        let payload = &event.payload;
        let secret_id = payload.str("SecretId").unwrap_or_default();
        let token = payload.str("ClientRequestToken").unwrap_or_default();
        let function = payload.str("RotationLambdaARN").unwrap_or_default();
        for step in STEPS {
            let body = serde_json::json!({
                "Step": step,
                "SecretId": secret_id,
                "ClientRequestToken": token,
            });
            let input = Value::map()
                .with("FunctionName", function)
                .with("Payload", Value::Blob(body.to_string().into_bytes()));
            let out = dispatcher
                .call(&ctx, "lambda", "Invoke", input)
                .await
                .map_err(|e| format!("{step}: {e}"))?;
            if let Some(error) = out.str("FunctionError") {
                let detail = out
                    .get("Payload")
                    .and_then(Value::as_blob)
                    .map(|p| String::from_utf8_lossy(p).into_owned())
                    .unwrap_or_default();
                return Err(format!("{step}: {error}: {detail}"));
            }
        }
        let secret = self
            .find(&ctx, secret_id)
            .map_err(|e| e.to_string())?
            .ok_or_else(|| "the secret no longer exists".to_string())?;
        self.drop_label(&ctx, &secret.name, token, PENDING)
            .map_err(|e| e.to_string())?;
        self.env
            .store
            .with(|c| {
                c.execute_cached(
                    "UPDATE sm_secrets SET last_rotated = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![ctx.account, ctx.region, secret.name, now_millis()],
                )
            })
            .map_err(|e| e.to_string())?;
        self.mirror(&ctx, &secret.name)
            .await
            .map_err(|e| e.to_string())
    }
}
