//! Code signing configurations (Create/Get/Update/Delete/List) and the one a function
//! uses (Put/Get/DeleteFunctionCodeSigningConfig), which Terraform reads for every
//! function. Roto stores them and answers as Lambda does; it does not verify signatures.
//!
//! Also the tags of the resources that are not functions (code signing configurations and
//! event source mappings), kept by ARN.

use std::collections::BTreeMap;

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{params, OptionalExtension};

use super::functions::last_modified_at;
use super::{conflict, target_of, Lambda};

/// The `lambda_settings` kind of a function's code signing configuration.
const FUNCTION_CONFIG: &str = "code-signing";

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS lambda_code_signing_configs (
    arn TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    config TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS lambda_resource_tags (
    arn TEXT PRIMARY KEY,
    tags TEXT NOT NULL
);
";

fn config_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("The Lambda code signing configuration {arn} can not be found."),
    )
    .with_status(404)
    .with_field("Type", "User")
}

fn config_missing_for_function(arn: &str) -> AwsError {
    AwsError::new(
        "CodeSigningConfigNotFoundException",
        format!("The code signing configuration cannot be found. Check that the provided configuration is not deleted: {arn}."),
    )
    .with_status(404)
    .with_field("Type", "User")
}

/// A new configuration id: `csc-` and 17 lower-case letters and digits.
fn new_id() -> String {
    const ALPHABET: &[u8] = b"abcdefghijklmnopqrstuvwxyz0123456789";
    let tail: String = (0..17)
        .map(|_| char::from(ALPHABET[fastrand::usize(..ALPHABET.len())]))
        .collect();
    format!("csc-{tail}")
}

/// The policies a configuration applies, with Lambda's default (`Warn`).
fn policies(given: Option<&Value>) -> Value {
    let action = given
        .and_then(|p| p.str("UntrustedArtifactOnDeployment"))
        .unwrap_or("Warn");
    Value::map().with("UntrustedArtifactOnDeployment", action)
}

/// What Put and GetFunctionCodeSigningConfig answer.
fn function_answer(name: String, arn: impl Into<Value>) -> Value {
    Value::map()
        .with("CodeSigningConfigArn", arn)
        .with("FunctionName", name)
}

impl Lambda {
    fn code_signing_config(&self, ctx: &Context, arn: &str) -> AwsResult<Option<Value>> {
        self.env.store.with(|c| {
            c.prepare_cached(
                "SELECT config FROM lambda_code_signing_configs WHERE arn = ?1 AND account = ?2 AND region = ?3",
            )?
            .query_row(params![arn, ctx.account, ctx.region], |r| r.get::<_, String>(0))
            .optional()
            .map(|t| t.map(|t| super::from_json_text(&t)))
            .map_err(AwsError::from)
        })
    }

    fn save_code_signing_config(&self, ctx: &Context, config: &Value) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_code_signing_configs (arn, account, region, config)
                 VALUES (?1, ?2, ?3, ?4)",
                params![
                    config.str("CodeSigningConfigArn").unwrap_or_default(),
                    ctx.account,
                    ctx.region,
                    config.to_json().to_string()
                ],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    fn existing_code_signing_config(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("CodeSigningConfigArn").unwrap_or_default();
        self.code_signing_config(ctx, arn)?
            .ok_or_else(|| config_not_found(arn))
    }

    pub(super) fn create_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = new_id();
        let arn = format!(
            "arn:aws:lambda:{}:{}:code-signing-config:{id}",
            ctx.region, ctx.account
        );
        let config = Value::map()
            .with("CodeSigningConfigId", id)
            .with("CodeSigningConfigArn", arn.as_str())
            .with("Description", input.str("Description").unwrap_or_default())
            .with(
                "AllowedPublishers",
                input
                    .get("AllowedPublishers")
                    .cloned()
                    .unwrap_or_else(Value::map),
            )
            .with(
                "CodeSigningPolicies",
                policies(input.get("CodeSigningPolicies")),
            )
            .with("LastModified", last_modified_at(now_millis()));
        self.save_code_signing_config(ctx, &config)?;
        let tags = super::functions::tags_of(input.get("Tags"));
        if !tags.is_empty() {
            self.save_resource_tags(&arn, &tags)?;
        }
        Ok(Value::map().with("CodeSigningConfig", config))
    }

    pub(super) fn get_code_signing_config(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let config = self.existing_code_signing_config(ctx, input)?;
        Ok(Value::map().with("CodeSigningConfig", config))
    }

    pub(super) fn update_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut config = self.existing_code_signing_config(ctx, input)?;
        if let Some(description) = input.str("Description") {
            config.insert("Description", description);
        }
        if let Some(publishers) = input.get("AllowedPublishers") {
            config.insert("AllowedPublishers", publishers.clone());
        }
        if let Some(given) = input.get("CodeSigningPolicies") {
            config.insert("CodeSigningPolicies", policies(Some(given)));
        }
        config.insert("LastModified", last_modified_at(now_millis()));
        self.save_code_signing_config(ctx, &config)?;
        Ok(Value::map().with("CodeSigningConfig", config))
    }

    pub(super) fn delete_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let config = self.existing_code_signing_config(ctx, input)?;
        let arn = config.str("CodeSigningConfigArn").unwrap_or_default();
        if !self.functions_signed_by(ctx, arn)?.is_empty() {
            return Err(conflict(format!(
                "The code signing configuration {arn} is in use by one or more functions. Remove it from the functions before deleting it."
            )));
        }
        self.env.store.with(|c| {
            c.execute_cached(
                "DELETE FROM lambda_code_signing_configs WHERE arn = ?1",
                [arn],
            )
            .map_err(AwsError::from)
        })?;
        self.forget_resource_tags(arn)?;
        Ok(Value::map())
    }

    pub(super) fn list_code_signing_configs(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let configs: Vec<Value> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT config FROM lambda_code_signing_configs WHERE account = ?1 AND region = ?2 ORDER BY arn",
            )?;
            let rows = stmt.query_map(params![ctx.account, ctx.region], |r| r.get::<_, String>(0))?;
            rows.map(|t| t.map(|t| super::from_json_text(&t)))
                .collect::<Result<_, _>>()
                .map_err(AwsError::from)
        })?;
        Self::page_of(configs, input, "CodeSigningConfigs")
    }

    /// The names of the functions that use configuration `arn`.
    fn functions_signed_by(&self, ctx: &Context, arn: &str) -> AwsResult<Vec<String>> {
        let quoted = serde_json::Value::from(arn).to_string();
        self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT function FROM lambda_settings WHERE account = ?1 AND region = ?2 AND kind = ?3 AND config = ?4 ORDER BY function",
            )?;
            let rows = stmt.query_map(
                params![ctx.account, ctx.region, FUNCTION_CONFIG, quoted],
                |r| r.get::<_, String>(0),
            )?;
            rows.collect::<Result<_, _>>().map_err(AwsError::from)
        })
    }

    pub(super) fn list_functions_by_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let config = self.existing_code_signing_config(ctx, input)?;
        let arn = config.str("CodeSigningConfigArn").unwrap_or_default();
        let arns = self
            .functions_signed_by(ctx, arn)?
            .iter()
            .map(|name| Value::from(super::function_arn(ctx, name)))
            .collect();
        Self::page_of(arns, input, "FunctionArns")
    }

    /// The name of the existing function an input names.
    fn existing_function(&self, ctx: &Context, input: &Value) -> AwsResult<String> {
        let (name, _) = target_of(input)?;
        self.latest(ctx, &name)?;
        Ok(name)
    }

    pub(super) fn put_function_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = self.existing_function(ctx, input)?;
        let arn = input.str("CodeSigningConfigArn").unwrap_or_default();
        if self.code_signing_config(ctx, arn)?.is_none() {
            return Err(config_missing_for_function(arn));
        }
        self.put_setting(ctx, &name, "", FUNCTION_CONFIG, Some(&arn.into()))?;
        Ok(function_answer(name, arn))
    }

    pub(super) fn get_function_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = self.existing_function(ctx, input)?;
        let arn = self
            .setting(ctx, &name, "", FUNCTION_CONFIG)?
            .and_then(|a| a.as_str().map(str::to_string))
            .unwrap_or_default();
        Ok(function_answer(name, arn))
    }

    pub(super) fn delete_function_code_signing_config(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = self.existing_function(ctx, input)?;
        self.put_setting(ctx, &name, "", FUNCTION_CONFIG, None)?;
        Ok(Value::map())
    }

    /// The tags of a resource that is not a function, after checking it exists: an event
    /// source mapping or a code signing configuration of the caller's account and region.
    pub(super) fn resource_tags(
        &self,
        ctx: &Context,
        arn: &str,
    ) -> AwsResult<BTreeMap<String, String>> {
        self.check_tagged_resource(ctx, arn)?;
        let text: Option<String> = self.env.store.with(|c| {
            c.prepare_cached("SELECT tags FROM lambda_resource_tags WHERE arn = ?1")?
                .query_row([arn], |r| r.get(0))
                .optional()
                .map_err(AwsError::from)
        })?;
        Ok(text
            .and_then(|t| serde_json::from_str(&t).ok())
            .unwrap_or_default())
    }

    fn check_tagged_resource(&self, ctx: &Context, arn: &str) -> AwsResult<()> {
        if arn.contains(":code-signing-config:") {
            return self
                .code_signing_config(ctx, arn)?
                .map(|_| ())
                .ok_or_else(|| config_not_found(arn));
        }
        let uuid = arn.rsplit(':').next().unwrap_or_default();
        self.mapping_in(ctx, uuid).map(|_| ())
    }

    /// Replaces the tags of a resource that is not a function.
    pub(super) fn save_resource_tags(
        &self,
        arn: &str,
        tags: &BTreeMap<String, String>,
    ) -> AwsResult<()> {
        let text = serde_json::to_string(tags).unwrap_or_default();
        self.env.store.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO lambda_resource_tags (arn, tags) VALUES (?1, ?2)",
                params![arn, text],
            )
            .map_err(AwsError::from)
        })?;
        Ok(())
    }

    /// Drops the tags of a deleted resource.
    pub(super) fn forget_resource_tags(&self, arn: &str) -> AwsResult<()> {
        self.env.store.with(|c| {
            c.execute_cached("DELETE FROM lambda_resource_tags WHERE arn = ?1", [arn])
                .map_err(AwsError::from)
        })?;
        Ok(())
    }
}
