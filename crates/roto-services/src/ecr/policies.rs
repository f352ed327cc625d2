//! Policies: a repository's policy (Set/Get/DeleteRepositoryPolicy), its lifecycle policy
//! (Put/Get/DeleteLifecyclePolicy) and lifecycle policy previews, and the registry's policy
//! (Put/Get/DeleteRegistryPolicy) beside DescribeRegistry.
//!
//! Documents are stored verbatim once they pass ECR's checks. Lifecycle policies are
//! checked against ECR's schema (rules, their selection and action) in the words of the
//! JSON schema validator ECR reports through; they never expire anything here, since no
//! repository holds images, so a preview completes at once with nothing to expire.

use roto_core::store::Cached;
use roto_core::{AwsResult, Context, Value};
use rusqlite::OptionalExtension;
use serde_json::{Map, Value as Json};

use super::{error, invalid_parameter, is_policy, Inner};

/// `InvalidParameterException` for a lifecycle policy, with the validator's `detail`.
fn invalid_lifecycle(detail: &str) -> roto_core::AwsError {
    invalid_parameter(
        "LifecyclePolicyText",
        &format!("Lifecycle policy validation failure: {detail}"),
    )
}

/// The JSON schema validator's name for a value's type.
fn type_name(value: &Json) -> &'static str {
    match value {
        Json::Null => "null",
        Json::Bool(_) => "boolean",
        Json::Number(n) if n.is_i64() || n.is_u64() => "integer",
        Json::Number(_) => "number",
        Json::String(_) => "string",
        Json::Array(_) => "array",
        Json::Object(_) => "object",
    }
}

/// Checks an object's properties against the required and allowed ones.
fn check_properties(
    object: &Map<String, Json>,
    required: &[&str],
    allowed: &[&str],
) -> AwsResult<()> {
    let missing: Vec<&str> = required
        .iter()
        .copied()
        .filter(|p| !object.contains_key(*p))
        .collect();
    if !missing.is_empty() {
        return Err(invalid_lifecycle(&format!(
            "object has missing required properties ({})",
            Json::from(missing)
        )));
    }
    if let Some(extra) = object.keys().find(|k| !allowed.contains(&k.as_str())) {
        return Err(invalid_lifecycle(&format!(
            "object instance has properties which are not allowed by the schema: ([\"{extra}\"])"
        )));
    }
    Ok(())
}

/// Checks a string property against its enum.
fn check_enum(object: &Map<String, Json>, property: &str, values: &[&str]) -> AwsResult<()> {
    match object.get(property) {
        None => Ok(()),
        Some(Json::String(s)) if values.contains(&s.as_str()) => Ok(()),
        Some(other) => Err(invalid_lifecycle(&format!(
            "instance value ({}) not found in enum (possible values: {})",
            other
                .as_str()
                .map(str::to_string)
                .unwrap_or_else(|| other.to_string()),
            Json::from(values.to_vec())
        ))),
    }
}

/// An object member of a rule, or the validator's type error.
fn object(value: &Json) -> AwsResult<&Map<String, Json>> {
    value.as_object().ok_or_else(|| {
        invalid_lifecycle(&format!(
            "instance type ({}) does not match any allowed primitive type (allowed: [\"object\"])",
            type_name(value)
        ))
    })
}

/// Checks one lifecycle rule.
fn check_rule(rule: &Json) -> AwsResult<()> {
    let rule = object(rule)?;
    check_properties(
        rule,
        &["action", "rulePriority", "selection"],
        &["action", "description", "rulePriority", "selection"],
    )?;
    let action = object(&rule["action"])?;
    check_properties(action, &["type"], &["targetStorageClass", "type"])?;
    check_enum(action, "type", &["expire", "transition"])?;
    let selection = object(&rule["selection"])?;
    check_properties(
        selection,
        &["countNumber", "countType", "tagStatus"],
        &[
            "countNumber",
            "countType",
            "countUnit",
            "storageClass",
            "tagPatternList",
            "tagPrefixList",
            "tagStatus",
        ],
    )?;
    check_enum(selection, "tagStatus", &["any", "tagged", "untagged"])?;
    check_enum(
        selection,
        "countType",
        &[
            "imageCountMoreThan",
            "sinceImagePulled",
            "sinceImagePushed",
            "sinceImageTransitioned",
        ],
    )?;
    check_enum(selection, "countUnit", &["days"])?;
    match selection["countNumber"].as_i64() {
        Some(n) if n >= 1 => Ok(()),
        Some(n) => Err(invalid_lifecycle(&format!(
            "numeric instance is lower than the required minimum (minimum: 1, found: {n})"
        ))),
        None => Err(invalid_lifecycle(&format!(
            "instance type ({}) does not match any allowed primitive type (allowed: [\"integer\"])",
            type_name(&selection["countNumber"])
        ))),
    }
}

/// Checks a lifecycle policy document as ECR does.
fn check_lifecycle(text: &str) -> AwsResult<()> {
    let Ok(Json::Object(doc)) = serde_json::from_str::<Json>(text) else {
        return Err(invalid_lifecycle(
            "Could not map policyString into LifecyclePolicy.",
        ));
    };
    check_properties(&doc, &["rules"], &["rules"])?;
    let Json::Array(rules) = &doc["rules"] else {
        return Err(invalid_lifecycle(&format!(
            "instance type ({}) does not match any allowed primitive type (allowed: [\"array\"])",
            type_name(&doc["rules"])
        )));
    };
    rules.iter().try_for_each(check_rule)
}

/// The message naming a repository a policy is missing from.
fn missing(what: &str, name: &str, registry: &str) -> String {
    format!("{what} does not exist for the repository with name '{name}' in the registry with id '{registry}'")
}

impl Inner {
    pub(super) fn set_repository_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let text = input.str("policyText").unwrap_or_default();
        if !is_policy(text) {
            return Err(invalid_parameter(
                "PolicyText",
                "Invalid repository policy provided",
            ));
        }
        self.set_column(ctx, &repo.name, "policy", &text)?;
        Ok(policy_answer(ctx, &repo.name, "policyText", text))
    }

    /// The repository's policy, or `RepositoryPolicyNotFoundException`.
    fn repository_policy(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String)> {
        let repo = self.repository(ctx, input)?;
        let policy = repo.policy.ok_or_else(|| {
            error(
                "RepositoryPolicyNotFoundException",
                missing("Repository policy", &repo.name, &ctx.account),
            )
        })?;
        Ok((repo.name, policy))
    }

    pub(super) fn get_repository_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, policy) = self.repository_policy(ctx, input)?;
        Ok(policy_answer(ctx, &name, "policyText", &policy))
    }

    pub(super) fn delete_repository_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, policy) = self.repository_policy(ctx, input)?;
        self.set_column(ctx, &name, "policy", &None::<String>)?;
        Ok(policy_answer(ctx, &name, "policyText", &policy))
    }

    pub(super) fn put_lifecycle_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let text = input.str("lifecyclePolicyText").unwrap_or_default();
        check_lifecycle(text)?;
        self.set_column(ctx, &repo.name, "lifecycle", &text)?;
        Ok(policy_answer(ctx, &repo.name, "lifecyclePolicyText", text))
    }

    /// The repository's lifecycle policy, or `LifecyclePolicyNotFoundException`.
    fn lifecycle_policy(&self, ctx: &Context, input: &Value) -> AwsResult<(String, String)> {
        let repo = self.repository(ctx, input)?;
        let policy = repo.lifecycle.ok_or_else(|| {
            error(
                "LifecyclePolicyNotFoundException",
                missing("Lifecycle policy", &repo.name, &ctx.account),
            )
        })?;
        Ok((repo.name, policy))
    }

    pub(super) fn get_lifecycle_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, policy) = self.lifecycle_policy(ctx, input)?;
        Ok(policy_answer(ctx, &name, "lifecyclePolicyText", &policy))
    }

    pub(super) fn delete_lifecycle_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, policy) = self.lifecycle_policy(ctx, input)?;
        self.set_column(ctx, &name, "lifecycle", &None::<String>)?;
        Ok(policy_answer(ctx, &name, "lifecyclePolicyText", &policy))
    }

    /// StartLifecyclePolicyPreview: of the policy the call gives, or else the repository's.
    pub(super) fn start_preview(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let text = match input.str("lifecyclePolicyText") {
            Some(text) => {
                self.repository(ctx, input)?;
                check_lifecycle(text)?;
                text.to_string()
            }
            None => self.lifecycle_policy(ctx, input)?.1,
        };
        let name = input.str("repositoryName").unwrap_or_default();
        self.set_column(ctx, name, "preview", &text)?;
        Ok(policy_answer(ctx, name, "lifecyclePolicyText", &text).with("status", "IN_PROGRESS"))
    }

    /// GetLifecyclePolicyPreview: the last preview, complete, with nothing to expire.
    pub(super) fn get_preview(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let repo = self.repository(ctx, input)?;
        let text = repo.preview.ok_or_else(|| {
            error(
                "LifecyclePolicyPreviewNotFoundException",
                missing("Lifecycle policy preview request", &repo.name, &ctx.account),
            )
        })?;
        Ok(policy_answer(ctx, &repo.name, "lifecyclePolicyText", &text)
            .with("status", "COMPLETE")
            .with("previewResults", Value::List(Vec::new()))
            .with(
                "summary",
                Value::map().with("expiringImageTotalCount", 0i64),
            ))
    }

    pub(super) fn put_registry_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let text = input.str("policyText").unwrap_or_default();
        if !is_policy(text) {
            return Err(invalid_parameter(
                "PolicyText",
                "Invalid registry policy provided",
            ));
        }
        self.store()?.with(|c| {
            c.execute_cached(
                "INSERT OR REPLACE INTO ecr_registries (account, region, policy) VALUES (?1, ?2, ?3)",
                [&ctx.account, &ctx.region, text],
            )
        })?;
        Ok(registry_policy_answer(ctx, text))
    }

    /// The registry's policy, or `RegistryPolicyNotFoundException`.
    fn registry_policy(&self, ctx: &Context) -> AwsResult<String> {
        let policy = self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT policy FROM ecr_registries WHERE account = ?1 AND region = ?2",
            )?
            .query_row([&ctx.account, &ctx.region], |r| r.get::<_, String>(0))
            .optional()
        })?;
        policy.ok_or_else(|| {
            error(
                "RegistryPolicyNotFoundException",
                format!(
                    "Registry policy does not exist in the registry with id '{}'",
                    ctx.account
                ),
            )
        })
    }

    pub(super) fn get_registry_policy(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(registry_policy_answer(ctx, &self.registry_policy(ctx)?))
    }

    pub(super) fn delete_registry_policy(&self, ctx: &Context) -> AwsResult<Value> {
        let policy = self.registry_policy(ctx)?;
        self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM ecr_registries WHERE account = ?1 AND region = ?2",
                [&ctx.account, &ctx.region],
            )
        })?;
        Ok(registry_policy_answer(ctx, &policy))
    }

    /// DescribeRegistry: the registry, which replicates nowhere.
    pub(super) fn describe_registry(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("replicationConfiguration", self.replication(ctx)?))
    }
}

/// The answer of the repository policy operations: the registry, the name, the document.
fn policy_answer(ctx: &Context, name: &str, member: &str, text: &str) -> Value {
    Value::map()
        .with("registryId", ctx.account.as_str())
        .with("repositoryName", name)
        .with(member, text)
}

/// The answer of the registry policy operations.
fn registry_policy_answer(ctx: &Context, text: &str) -> Value {
    Value::map()
        .with("registryId", ctx.account.as_str())
        .with("policyText", text)
}

#[cfg(test)]
mod tests {
    use super::*;

    const RULE: &str = r#"{"rulePriority":1,"selection":{"tagStatus":"untagged","countType":"sinceImagePushed","countUnit":"days","countNumber":14},"action":{"type":"expire"}}"#;

    fn message(text: &str) -> String {
        check_lifecycle(text).unwrap_err().message
    }

    #[test]
    fn lifecycle_policies_are_checked_against_ecrs_schema() {
        assert!(check_lifecycle(&format!(r#"{{"rules":[{RULE}]}}"#)).is_ok());
        assert!(message("[]").ends_with("Could not map policyString into LifecyclePolicy.'"));
        assert!(message("{}").ends_with(r#"object has missing required properties (["rules"])'"#));
        assert!(message(r#"{"rules":[{"rulePriority":1}]}"#)
            .ends_with(r#"object has missing required properties (["action","selection"])'"#));
        let bad_status = RULE.replace("untagged", "old");
        assert!(message(&format!(r#"{{"rules":[{bad_status}]}}"#))
            .contains("instance value (old) not found in enum"));
        let zero = RULE.replace("14", "0");
        assert!(message(&format!(r#"{{"rules":[{zero}]}}"#)).contains("(minimum: 1, found: 0)"));
    }
}
