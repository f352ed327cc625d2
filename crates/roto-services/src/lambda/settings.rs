//! Per-function settings kept beside the function: resource policies (AddPermission,
//! GetPolicy, RemovePermission) and asynchronous invocation configuration (retries and
//! OnSuccess/OnFailure destinations), each keyed by function and qualifier.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::{conflict, function_arn, invalid_parameter, target_of, Lambda};

const POLICY: &str = "policy";
const INVOKE_CONFIG: &str = "invoke-config";

fn not_found(message: String) -> AwsError {
    AwsError::new("ResourceNotFoundException", message)
        .with_status(404)
        .with_field("Type", "User")
}

/// The principal of a statement as IAM writes it.
fn principal(given: &str) -> serde_json::Value {
    if given == "*" {
        return serde_json::json!("*");
    }
    if given.ends_with(".amazonaws.com") || given.ends_with(".amazon.com") {
        return serde_json::json!({ "Service": given });
    }
    if given.len() == 12 && given.bytes().all(|b| b.is_ascii_digit()) {
        return serde_json::json!({ "AWS": format!("arn:aws:iam::{given}:root") });
    }
    serde_json::json!({ "AWS": given })
}

impl Lambda {
    pub(super) fn setting(
        &self,
        ctx: &Context,
        function: &str,
        qualifier: &str,
        kind: &str,
    ) -> AwsResult<Option<serde_json::Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM lambda_settings WHERE account = ?1 AND region = ?2 AND function = ?3 AND qualifier = ?4 AND kind = ?5",
            )?
            .query_row(params![ctx.account, ctx.region, function, qualifier, kind], |r| r.get::<_, String>(0))
            .optional()
            .map(|t| t.and_then(|t| serde_json::from_str(&t).ok()))
            .map_err(AwsError::from)
        })
    }

    pub(super) fn put_setting(
        &self,
        ctx: &Context,
        function: &str,
        qualifier: &str,
        kind: &str,
        value: Option<&serde_json::Value>,
    ) -> AwsResult<()> {
        self.env.store.with(|c| {
            match value {
                Some(v) => c.execute_cached(
                    "INSERT OR REPLACE INTO lambda_settings (account, region, function, qualifier, kind, config)
                     VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
                    params![ctx.account, ctx.region, function, qualifier, kind, v.to_string()],
                ),
                None => c.execute_cached(
                    "DELETE FROM lambda_settings WHERE account = ?1 AND region = ?2 AND function = ?3 AND qualifier = ?4 AND kind = ?5",
                    params![ctx.account, ctx.region, function, qualifier, kind],
                ),
            }
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// The function and qualifier a settings request names, after checking they exist.
    fn settings_target(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Option<String>)> {
        let (name, qualifier) = target_of(input)?;
        self.resolve(ctx, &name, qualifier.as_deref(), false)?;
        Ok((name, qualifier))
    }

    fn qualified_arn(ctx: &Context, name: &str, qualifier: Option<&str>) -> String {
        match qualifier {
            Some(q) => format!("{}:{q}", function_arn(ctx, name)),
            None => function_arn(ctx, name),
        }
    }

    /// Every setting of `kind` of function `function`, over all qualifiers in order.
    pub(super) fn settings_of_kind(
        &self,
        ctx: &Context,
        function: &str,
        kind: &str,
    ) -> AwsResult<Vec<serde_json::Value>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_settings WHERE account = ?1 AND region = ?2 AND function = ?3 AND kind = ?4 ORDER BY qualifier",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, function, kind], |r| {
                r.get::<_, String>(0)
            })?;
            rows.map(|r| r.map(|t| serde_json::from_str(&t).unwrap_or_default()))
                .collect::<Result<Vec<_>, _>>()
                .map_err(AwsError::from)
        })
    }

    /// Drops every setting of a deleted function.
    pub(super) fn forget_settings(&self, ctx: &Context, name: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_settings WHERE account = ?1 AND region = ?2 AND function = ?3",
                params![ctx.account, ctx.region, name],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    pub(super) fn add_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = self.settings_target(ctx, input)?;
        let q = qualifier.as_deref().unwrap_or("");
        let mut policy = self.setting(ctx, &name, q, POLICY)?.unwrap_or_else(
            || serde_json::json!({"Version": "2012-10-17", "Id": "default", "Statement": []}),
        );
        let sid = input.str("StatementId").unwrap_or_default();
        let statements = policy["Statement"].as_array().cloned().unwrap_or_default();
        if statements.iter().any(|s| s["Sid"] == sid) {
            return Err(conflict(
                "The statement id (sid) provided already exists. Please provide a new statement id, or remove the existing statement.",
            ));
        }
        let mut statement = serde_json::json!({
            "Sid": sid,
            "Effect": "Allow",
            "Principal": principal(input.str("Principal").unwrap_or_default()),
            "Action": input.str("Action").unwrap_or_default(),
            "Resource": Self::qualified_arn(ctx, &name, qualifier.as_deref()),
        });
        let mut condition = serde_json::Map::new();
        if let Some(arn) = input.str("SourceArn") {
            condition.insert("ArnLike".into(), serde_json::json!({"AWS:SourceArn": arn}));
        }
        if let Some(account) = input.str("SourceAccount") {
            condition.insert(
                "StringEquals".into(),
                serde_json::json!({"AWS:SourceAccount": account}),
            );
        }
        if !condition.is_empty() {
            statement["Condition"] = serde_json::Value::Object(condition);
        }
        let mut all = statements;
        all.push(statement.clone());
        policy["Statement"] = serde_json::Value::Array(all);
        policy["RevisionId"] = super::revision_id().into();
        self.put_setting(ctx, &name, q, POLICY, Some(&policy))?;
        Ok(Value::map().with("Statement", statement.to_string()))
    }

    pub(super) fn get_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = self.settings_target(ctx, input)?;
        let mut policy = self
            .setting(ctx, &name, qualifier.as_deref().unwrap_or(""), POLICY)?
            .ok_or_else(|| not_found("The resource you requested does not exist.".into()))?;
        let revision = policy
            .as_object_mut()
            .and_then(|p| p.remove("RevisionId"))
            .and_then(|r| r.as_str().map(str::to_string))
            .unwrap_or_default();
        Ok(Value::map()
            .with("Policy", policy.to_string())
            .with("RevisionId", revision))
    }

    pub(super) fn remove_permission(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, qualifier) = self.settings_target(ctx, input)?;
        let q = qualifier.as_deref().unwrap_or("");
        let sid = input.str("StatementId").unwrap_or_default();
        let missing = || not_found(format!("Statement {sid} is not found in resource policy."));
        let mut policy = self.setting(ctx, &name, q, POLICY)?.ok_or_else(missing)?;
        let statements = policy["Statement"].as_array().cloned().unwrap_or_default();
        let kept: Vec<serde_json::Value> = statements
            .iter()
            .filter(|s| s["Sid"] != sid)
            .cloned()
            .collect();
        if kept.len() == statements.len() {
            return Err(missing());
        }
        let empty = kept.is_empty();
        policy["Statement"] = serde_json::Value::Array(kept);
        self.put_setting(ctx, &name, q, POLICY, (!empty).then_some(&policy))?;
        Ok(Value::map())
    }

    /// The asynchronous invocation configuration that applies to an invocation of
    /// `name` through `qualifier`.
    pub(super) fn invoke_config(
        &self,
        ctx: &Context,
        name: &str,
        qualifier: Option<&str>,
    ) -> AwsResult<Option<Value>> {
        Ok(self
            .setting(ctx, name, qualifier.unwrap_or("$LATEST"), INVOKE_CONFIG)?
            .map(|j| Value::from_json(&j)))
    }

    fn check_destinations(config: &Value) -> AwsResult<()> {
        for which in ["OnSuccess", "OnFailure"] {
            let Some(arn) = config
                .get("DestinationConfig")
                .and_then(|d| d.get(which))
                .and_then(|d| d.str("Destination"))
            else {
                continue;
            };
            let service = arn.split(':').nth(2).unwrap_or_default();
            if !arn.starts_with("arn:") || !["sqs", "sns", "lambda", "events"].contains(&service) {
                return Err(invalid_parameter(format!(
                    "The destination ARN {arn} is invalid."
                )));
            }
        }
        Ok(())
    }

    fn write_invoke_config(&self, ctx: &Context, input: &Value, merge: bool) -> AwsResult<Value> {
        let (name, qualifier) = self.settings_target(ctx, input)?;
        let q = qualifier.clone().unwrap_or_else(|| "$LATEST".into());
        let mut config = match (merge, self.invoke_config(ctx, &name, Some(&q))?) {
            (true, Some(existing)) => existing,
            _ => Value::map().with(
                "DestinationConfig",
                Value::map()
                    .with("OnSuccess", Value::map())
                    .with("OnFailure", Value::map()),
            ),
        };
        for member in ["MaximumRetryAttempts", "MaximumEventAgeInSeconds"] {
            if let Some(v) = input.int(member) {
                config.insert(member, v);
            }
        }
        if let Some(d) = input.get("DestinationConfig") {
            let mut merged = config
                .get("DestinationConfig")
                .cloned()
                .unwrap_or_else(Value::map);
            for which in ["OnSuccess", "OnFailure"] {
                if let Some(v) = d.get(which) {
                    merged.insert(which, v.clone());
                }
            }
            config.insert("DestinationConfig", merged);
        }
        Self::check_destinations(&config)?;
        config.insert("FunctionArn", format!("{}:{q}", function_arn(ctx, &name)));
        config.insert("LastModified", Value::Float(now_millis() as f64 / 1000.0));
        self.put_setting(ctx, &name, &q, INVOKE_CONFIG, Some(&config.to_json()))?;
        Ok(config)
    }

    pub(super) fn put_function_event_invoke_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.write_invoke_config(ctx, input, false)
    }

    pub(super) fn update_function_event_invoke_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.write_invoke_config(ctx, input, true)
    }

    fn existing_invoke_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(String, String, Value)> {
        let (name, qualifier) = self.settings_target(ctx, input)?;
        let q = qualifier.unwrap_or_else(|| "$LATEST".into());
        let config = self.invoke_config(ctx, &name, Some(&q))?.ok_or_else(|| {
            not_found(format!(
                "The function {}:{q} doesn't have an EventInvokeConfig",
                function_arn(ctx, &name)
            ))
        })?;
        Ok((name, q, config))
    }

    pub(super) fn get_function_event_invoke_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        Ok(self.existing_invoke_config(ctx, input)?.2)
    }

    pub(super) fn delete_function_event_invoke_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, q, _) = self.existing_invoke_config(ctx, input)?;
        self.put_setting(ctx, &name, &q, INVOKE_CONFIG, None)?;
        Ok(Value::map())
    }

    pub(super) fn list_function_event_invoke_configs(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, _) = self.settings_target(ctx, input)?;
        let rows: Vec<Value> = self.env.store.with(|c| {
            let mut st = c.prepare_cached(
                "SELECT config FROM lambda_settings WHERE account = ?1 AND region = ?2 AND function = ?3 AND kind = ?4 ORDER BY qualifier",
            )?;
            let rows = st.query_map(params![ctx.account, ctx.region, name, INVOKE_CONFIG], |r| r.get::<_, String>(0))?;
            rows.map(|r| r.map(|t| super::from_json_text(&t)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })?;
        Self::page_of(rows, input, "FunctionEventInvokeConfigs")
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn principals_are_written_as_iam_writes_them() {
        assert_eq!(
            principal("s3.amazonaws.com"),
            serde_json::json!({"Service": "s3.amazonaws.com"})
        );
        assert_eq!(
            principal("123456789012"),
            serde_json::json!({"AWS": "arn:aws:iam::123456789012:root"})
        );
        assert_eq!(principal("*"), serde_json::json!("*"));
    }
}
