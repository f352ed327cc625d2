//! The registry's own settings: account settings, the scanning configuration (and each
//! repository's view of it), replication and signing configurations, pull through cache
//! rules, repository creation templates, pull-time update exclusions and replication
//! backfills.
//!
//! Each is a row of `ecr_registry_items` keyed by its kind and its name within the kind
//! (a rule's repository prefix, a template's prefix, an exclusion's principal; the empty
//! name for a registry-wide configuration), its body the JSON ECR returns less the
//! timestamps, which are columns. Nothing here acts on images: none is replicated, signed
//! or pulled through, and a replication backfill completes at once having replicated none.

use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::OptionalExtension;

use super::{
    check_repository_name, error, invalid_parameter, max_results, registry_of, repository_arn,
    Inner,
};
use crate::{ids, paging};

/// The account settings ECR knows, each with its values (the first the default).
const ACCOUNT_SETTINGS: &[(&str, &[&str])] = &[
    ("BASIC_SCAN_TYPE_VERSION", &["AWS_NATIVE", "CLAIR"]),
    ("REGISTRY_POLICY_SCOPE", &["V2", "V1"]),
    ("BLOB_MOUNTING", &["DISABLED", "ENABLED"]),
];

/// The upstream registries a pull through cache rule may name, by their URL.
fn upstream_registry(url: &str) -> Option<&'static str> {
    let host = url.trim_start_matches("https://").split('/').next()?;
    Some(match host {
        "public.ecr.aws" => "ecr-public",
        "registry-1.docker.io" => "docker-hub",
        "quay.io" => "quay",
        "ghcr.io" => "github-container-registry",
        "registry.k8s.io" => "k8s",
        "registry.gitlab.com" => "gitlab-container-registry",
        "mcr.microsoft.com" => "azure-container-registry",
        h if h.ends_with(".azurecr.io") => "azure-container-registry",
        h if h.contains(".dkr.ecr.") && h.ends_with(".amazonaws.com") => "ecr",
        _ => return None,
    })
}

/// One stored item: its body and timestamps.
struct Item {
    body: Value,
    created: i64,
    updated: i64,
}

impl Item {
    /// The body with its timestamps under the given members.
    fn answer(&self, created: &str, updated: Option<&str>) -> Value {
        let mut out = self.body.clone();
        out.insert(created, Value::Timestamp(self.created));
        if let Some(updated) = updated {
            out.insert(updated, Value::Timestamp(self.updated));
        }
        out
    }
}

impl Inner {
    fn item(&self, ctx: &Context, kind: &str, name: &str) -> AwsResult<Option<Item>> {
        Ok(self.store()?.read(|c| {
            c.prepare_cached(
                "SELECT body, created, updated FROM ecr_registry_items
                 WHERE account = ?1 AND region = ?2 AND kind = ?3 AND name = ?4",
            )?
            .query_row([&ctx.account, &ctx.region, kind, name], item_from_row)
            .optional()
        })?)
    }

    fn items(&self, ctx: &Context, kind: &str) -> AwsResult<Vec<(String, Item)>> {
        Ok(self.store()?.read(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT body, created, updated, name FROM ecr_registry_items
                 WHERE account = ?1 AND region = ?2 AND kind = ?3 ORDER BY name",
            )?;
            let rows = stmt.query_map([&ctx.account, &ctx.region, kind], |r| {
                Ok((r.get::<_, String>(3)?, item_from_row(r)?))
            })?;
            rows.collect::<rusqlite::Result<Vec<_>>>()
        })?)
    }

    /// Stores `body` under `kind`/`name`; `replace` false keeps an existing item and
    /// answers whether one was inserted. The creation time survives a replacement.
    fn put_item(
        &self,
        ctx: &Context,
        kind: &str,
        name: &str,
        body: &Value,
        replace: bool,
    ) -> AwsResult<bool> {
        let now = now_millis();
        let text = body.to_json().to_string();
        let sql = if replace {
            "INSERT INTO ecr_registry_items (account, region, kind, name, body, created, updated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)
             ON CONFLICT (account, region, kind, name) DO UPDATE SET body = ?5, updated = ?6"
        } else {
            "INSERT OR IGNORE INTO ecr_registry_items (account, region, kind, name, body, created, updated)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?6)"
        };
        let changed = self.store()?.with(|c| {
            c.execute_cached(
                sql,
                rusqlite::params![ctx.account, ctx.region, kind, name, text, now],
            )
        })?;
        Ok(changed > 0)
    }

    /// Removes an item, answering it as it was.
    fn delete_item(&self, ctx: &Context, kind: &str, name: &str) -> AwsResult<Option<Item>> {
        let Some(item) = self.item(ctx, kind, name)? else {
            return Ok(None);
        };
        self.store()?.with(|c| {
            c.execute_cached(
                "DELETE FROM ecr_registry_items
                 WHERE account = ?1 AND region = ?2 AND kind = ?3 AND name = ?4",
                [&ctx.account, &ctx.region, kind, name],
            )
        })?;
        Ok(Some(item))
    }

    pub(super) fn get_account_setting(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let values = setting_values(name)?;
        let value = match self.item(ctx, "setting", name)? {
            Some(item) => item.body.str("value").unwrap_or(values[0]).to_string(),
            None => values[0].to_string(),
        };
        Ok(Value::map().with("name", name).with("value", value))
    }

    pub(super) fn put_account_setting(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("name").unwrap_or_default();
        let value = input.str("value").unwrap_or_default();
        let values = setting_values(name)?;
        if !values.contains(&value) {
            return Err(invalid_parameter(
                "value",
                &format!(
                    "Member must satisfy enum value set: [{}]",
                    values.join(", ")
                ),
            ));
        }
        let answer = Value::map().with("name", name).with("value", value);
        self.put_item(ctx, "setting", name, &answer, true)?;
        Ok(answer)
    }

    /// The registry's scanning configuration: basic scanning on push where nothing was put.
    fn scanning(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(match self.item(ctx, "scanning", "")? {
            Some(item) => item.body,
            None => Value::map()
                .with("scanType", "BASIC")
                .with("rules", Value::List(Vec::new())),
        })
    }

    pub(super) fn get_registry_scanning(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("scanningConfiguration", self.scanning(ctx)?))
    }

    pub(super) fn put_registry_scanning(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let scan_type = input.str("scanType").unwrap_or("BASIC");
        check_enum("scanType", scan_type, &["BASIC", "ENHANCED"])?;
        let rules = input
            .get("rules")
            .and_then(Value::as_list)
            .unwrap_or_default();
        for rule in rules {
            let frequency = rule.str("scanFrequency").unwrap_or_default();
            check_enum(
                "scanFrequency",
                frequency,
                &["SCAN_ON_PUSH", "CONTINUOUS_SCAN", "MANUAL"],
            )?;
            if scan_type == "BASIC" && frequency == "CONTINUOUS_SCAN" {
                return Err(error(
                    "ValidationException",
                    "CONTINUOUS_SCAN frequency is not supported for scan type BASIC",
                ));
            }
        }
        let configuration = Value::map()
            .with("scanType", scan_type)
            .with("rules", Value::List(rules.to_vec()));
        self.put_item(ctx, "scanning", "", &configuration, true)?;
        Ok(Value::map().with("registryScanningConfiguration", configuration))
    }

    pub(super) fn batch_get_repository_scanning(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let registry = registry_of(ctx, input);
        let mut found = Vec::new();
        let mut failures = Vec::new();
        for name in input
            .get("repositoryNames")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let name = name.as_str().unwrap_or_default();
            check_repository_name(name)?;
            match self.find(ctx, registry, name)? {
                Some(repository) => {
                    let frequency = if repository.scan_on_push {
                        "SCAN_ON_PUSH"
                    } else {
                        "MANUAL"
                    };
                    found.push(
                        Value::map()
                            .with("repositoryArn", repository_arn(ctx, name))
                            .with("repositoryName", name)
                            .with("scanOnPush", repository.scan_on_push)
                            .with("scanFrequency", frequency)
                            .with("appliedScanFilters", Value::List(Vec::new())),
                    );
                }
                None => failures.push(
                    Value::map()
                        .with("repositoryName", name)
                        .with("failureCode", "REPOSITORY_NOT_FOUND")
                        .with("failureReason", "REPOSITORY_NOT_FOUND"),
                ),
            }
        }
        Ok(Value::map()
            .with("scanningConfigurations", Value::List(found))
            .with("failures", Value::List(failures)))
    }

    /// The registry's replication configuration: no rules where nothing was put.
    pub(super) fn replication(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(match self.item(ctx, "replication", "")? {
            Some(item) => item.body,
            None => Value::map().with("rules", Value::List(Vec::new())),
        })
    }

    pub(super) fn put_replication(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let configuration = configuration_of(input, "replicationConfiguration")?;
        let rules = configuration.get("rules").and_then(Value::as_list);
        for destination in rules
            .unwrap_or_default()
            .iter()
            .filter_map(|r| r.get("destinations"))
        {
            for d in destination.as_list().unwrap_or_default() {
                if d.str("region") == Some(ctx.region.as_str())
                    && d.str("registryId") == Some(ctx.account.as_str())
                {
                    return Err(error(
                        "InvalidParameterException",
                        "Invalid parameter at 'replicationConfiguration' failed to satisfy constraint: 'Replication destination cannot be the source registry and region'",
                    ));
                }
            }
        }
        self.put_item(ctx, "replication", "", &configuration, true)?;
        Ok(Value::map().with("replicationConfiguration", configuration))
    }

    fn signing_not_found(ctx: &Context) -> AwsError {
        error(
            "SigningConfigurationNotFoundException",
            format!(
                "Signing configuration does not exist in the registry with id '{}'",
                ctx.account
            ),
        )
    }

    pub(super) fn put_signing(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let configuration = configuration_of(input, "signingConfiguration")?;
        self.put_item(ctx, "signing", "", &configuration, true)?;
        Ok(Value::map().with("signingConfiguration", configuration))
    }

    pub(super) fn get_signing(&self, ctx: &Context) -> AwsResult<Value> {
        let item = self
            .item(ctx, "signing", "")?
            .ok_or_else(|| Self::signing_not_found(ctx))?;
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("signingConfiguration", item.body))
    }

    pub(super) fn delete_signing(&self, ctx: &Context) -> AwsResult<Value> {
        let item = self
            .delete_item(ctx, "signing", "")?
            .ok_or_else(|| Self::signing_not_found(ctx))?;
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("signingConfiguration", item.body))
    }
}

/// A registry configuration from `member` of the input, with at most 10 rules (ECR's limit
/// for replication and signing alike).
fn configuration_of(input: &Value, member: &str) -> AwsResult<Value> {
    let configuration = input.get(member).cloned().unwrap_or_else(Value::map);
    let rules = configuration.get("rules").and_then(Value::as_list);
    if rules.is_some_and(|r| r.len() > 10) {
        return Err(invalid_parameter(
            &format!("{member}.rules"),
            "Member must have length less than or equal to 10",
        ));
    }
    Ok(configuration)
}

fn item_from_row(r: &rusqlite::Row) -> rusqlite::Result<Item> {
    let text: String = r.get(0)?;
    let body = serde_json::from_str(&text).map_or_else(|_| Value::map(), |j| Value::from_json(&j));
    Ok(Item {
        body,
        created: r.get(1)?,
        updated: r.get(2)?,
    })
}

/// The values an account setting takes, or ECR's error for a name it does not know.
fn setting_values(name: &str) -> AwsResult<&'static [&'static str]> {
    ACCOUNT_SETTINGS
        .iter()
        .find(|(n, _)| *n == name)
        .map(|(_, values)| *values)
        .ok_or_else(|| {
            let names: Vec<&str> = ACCOUNT_SETTINGS.iter().map(|(n, _)| *n).collect();
            invalid_parameter(
                "name",
                &format!("Member must satisfy enum value set: [{}]", names.join(", ")),
            )
        })
}

fn check_enum(member: &str, value: &str, allowed: &[&str]) -> AwsResult<()> {
    if allowed.contains(&value) {
        return Ok(());
    }
    Err(error(
        "ValidationException",
        format!(
            "1 validation error detected: Value '{value}' at '{member}' failed to satisfy constraint: Member must satisfy enum value set: [{}]",
            allowed.join(", ")
        ),
    ))
}

/// Pull through cache rules, repository creation templates and pull-time exclusions.
impl Inner {
    fn rule_not_found(ctx: &Context, prefix: &str) -> AwsError {
        error(
            "PullThroughCacheRuleNotFoundException",
            format!(
                "The pull through cache rule with prefix '{prefix}' does not exist in the registry with id '{}'",
                ctx.account
            ),
        )
    }

    fn rule(&self, ctx: &Context, input: &Value) -> AwsResult<(String, Item)> {
        let prefix = input.str("ecrRepositoryPrefix").unwrap_or_default();
        let item = self
            .item(ctx, "cache-rule", prefix)?
            .ok_or_else(|| Self::rule_not_found(ctx, prefix))?;
        Ok((prefix.to_string(), item))
    }

    pub(super) fn create_cache_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("ecrRepositoryPrefix").unwrap_or_default();
        check_prefix("ecrRepositoryPrefix", prefix, 2, 30)?;
        let url = input.str("upstreamRegistryUrl").unwrap_or_default();
        let Some(upstream) = upstream_registry(url) else {
            return Err(error(
                "UnsupportedUpstreamRegistryException",
                format!("The specified upstream registry {url} is not supported"),
            ));
        };
        if upstream != "ecr-public" && upstream != "k8s" && input.get("credentialArn").is_none() {
            return Err(invalid_parameter(
                "credentialArn",
                &format!("A credential ARN is required for the upstream registry {upstream}"),
            ));
        }
        let mut body = Value::map()
            .with("ecrRepositoryPrefix", prefix)
            .with("upstreamRegistryUrl", url)
            .with("registryId", registry_of(ctx, input))
            .with("upstreamRegistry", upstream)
            .with(
                "upstreamRepositoryPrefix",
                input.str("upstreamRepositoryPrefix").unwrap_or("ROOT"),
            );
        for member in ["credentialArn", "customRoleArn"] {
            if let Some(value) = input.str(member) {
                body.insert(member, value);
            }
        }
        if !self.put_item(ctx, "cache-rule", prefix, &body, false)? {
            return Err(error(
                "PullThroughCacheRuleAlreadyExistsException",
                format!(
                    "A pull through cache rule with prefix '{prefix}' already exists in the registry with id '{}'",
                    ctx.account
                ),
            ));
        }
        let (_, item) = self.rule(ctx, input)?;
        Ok(item.answer("createdAt", None))
    }

    pub(super) fn describe_cache_rules(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let limit = max_results(input)?;
        let wanted = input
            .get("ecrRepositoryPrefixes")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let mut rules = Vec::new();
        if wanted.is_empty() {
            for (_, item) in self.items(ctx, "cache-rule")? {
                rules.push(item.answer("createdAt", Some("updatedAt")));
            }
        } else {
            for prefix in wanted {
                let input = Value::map().with("ecrRepositoryPrefix", prefix.clone());
                let (_, item) = self.rule(ctx, &input)?;
                rules.push(item.answer("createdAt", Some("updatedAt")));
            }
        }
        let (page, next) = paging::page(rules, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("pullThroughCacheRules", Value::List(page))
            .with_opt("nextToken", next))
    }

    pub(super) fn update_cache_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (prefix, item) = self.rule(ctx, input)?;
        let mut body = item.body;
        for member in ["credentialArn", "customRoleArn"] {
            if let Some(value) = input.str(member) {
                body.insert(member, value);
            }
        }
        self.put_item(ctx, "cache-rule", &prefix, &body, true)?;
        let (_, item) = self.rule(ctx, input)?;
        let mut out = Value::map()
            .with("ecrRepositoryPrefix", prefix.as_str())
            .with("registryId", ctx.account.as_str())
            .with("updatedAt", Value::Timestamp(item.updated));
        for member in ["credentialArn", "customRoleArn", "upstreamRepositoryPrefix"] {
            if let Some(value) = item.body.get(member) {
                out.insert(member, value.clone());
            }
        }
        Ok(out)
    }

    pub(super) fn validate_cache_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (_, item) = self.rule(ctx, input)?;
        let mut out = Value::map().with("isValid", true);
        for member in [
            "ecrRepositoryPrefix",
            "registryId",
            "upstreamRegistryUrl",
            "credentialArn",
            "customRoleArn",
            "upstreamRepositoryPrefix",
        ] {
            if let Some(value) = item.body.get(member) {
                out.insert(member, value.clone());
            }
        }
        Ok(out)
    }

    pub(super) fn delete_cache_rule(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("ecrRepositoryPrefix").unwrap_or_default();
        let item = self
            .delete_item(ctx, "cache-rule", prefix)?
            .ok_or_else(|| Self::rule_not_found(ctx, prefix))?;
        let mut out = item.answer("createdAt", None);
        out.remove("upstreamRegistry");
        Ok(out)
    }

    fn template_not_found(ctx: &Context, prefix: &str) -> AwsError {
        error(
            "TemplateNotFoundException",
            format!(
                "The repository creation template with prefix '{prefix}' does not exist in the registry with id '{}'",
                ctx.account
            ),
        )
    }

    fn template_answer(ctx: &Context, item: &Item) -> Value {
        Value::map().with("registryId", ctx.account.as_str()).with(
            "repositoryCreationTemplate",
            item.answer("createdAt", Some("updatedAt")),
        )
    }

    /// A template's body from a Create or Update input, over `base` (an Update's template).
    fn template_body(input: &Value, base: Value) -> AwsResult<Value> {
        let mut body = base;
        for member in [
            "prefix",
            "description",
            "encryptionConfiguration",
            "resourceTags",
            "imageTagMutability",
            "imageTagMutabilityExclusionFilters",
            "repositoryPolicy",
            "lifecyclePolicy",
            "appliedFor",
            "customRoleArn",
        ] {
            if let Some(value) = input.get(member) {
                body.insert(member, value.clone());
            }
        }
        for applied in body
            .get("appliedFor")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            check_enum(
                "appliedFor",
                applied.as_str().unwrap_or_default(),
                &["REPLICATION", "PULL_THROUGH_CACHE", "CREATE_ON_PUSH"],
            )?;
        }
        if body.get("imageTagMutability").is_none() {
            body.insert("imageTagMutability", "MUTABLE");
        }
        if body.get("encryptionConfiguration").is_none() {
            body.insert(
                "encryptionConfiguration",
                Value::map().with("encryptionType", "AES256"),
            );
        }
        Ok(body)
    }

    pub(super) fn create_template(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("prefix").unwrap_or_default();
        if prefix != "ROOT" {
            check_prefix("prefix", prefix, 1, 256)?;
        }
        let body = Self::template_body(input, Value::map())?;
        if !self.put_item(ctx, "template", prefix, &body, false)? {
            return Err(error(
                "TemplateAlreadyExistsException",
                format!(
                    "The repository creation template with prefix '{prefix}' already exists in the registry with id '{}'",
                    ctx.account
                ),
            ));
        }
        let item = self
            .item(ctx, "template", prefix)?
            .ok_or_else(|| Self::template_not_found(ctx, prefix))?;
        Ok(Self::template_answer(ctx, &item))
    }

    pub(super) fn describe_templates(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let limit = max_results(input)?;
        let wanted: Vec<&str> = input
            .get("prefixes")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        let templates = self
            .items(ctx, "template")?
            .into_iter()
            .filter(|(prefix, _)| wanted.is_empty() || wanted.contains(&prefix.as_str()))
            .map(|(_, item)| item.answer("createdAt", Some("updatedAt")))
            .collect();
        let (page, next) = paging::page(templates, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("repositoryCreationTemplates", Value::List(page))
            .with_opt("nextToken", next))
    }

    pub(super) fn update_template(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("prefix").unwrap_or_default();
        let item = self
            .item(ctx, "template", prefix)?
            .ok_or_else(|| Self::template_not_found(ctx, prefix))?;
        let body = Self::template_body(input, item.body)?;
        self.put_item(ctx, "template", prefix, &body, true)?;
        let item = self
            .item(ctx, "template", prefix)?
            .ok_or_else(|| Self::template_not_found(ctx, prefix))?;
        Ok(Self::template_answer(ctx, &item))
    }

    pub(super) fn delete_template(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let prefix = input.str("prefix").unwrap_or_default();
        let item = self
            .delete_item(ctx, "template", prefix)?
            .ok_or_else(|| Self::template_not_found(ctx, prefix))?;
        Ok(Self::template_answer(ctx, &item))
    }

    pub(super) fn register_exclusion(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let principal = input.str("principalArn").unwrap_or_default();
        if !principal.starts_with("arn:") {
            return Err(invalid_parameter(
                "principalArn",
                "Member must be an IAM principal ARN",
            ));
        }
        let body = Value::map().with("principalArn", principal);
        if !self.put_item(ctx, "exclusion", principal, &body, false)? {
            return Err(error(
                "ExclusionAlreadyExistsException",
                format!("The principal '{principal}' is already excluded from pull-time updates"),
            ));
        }
        let item = self
            .item(ctx, "exclusion", principal)?
            .ok_or_else(|| AwsError::internal("an exclusion just stored is gone"))?;
        Ok(item.answer("createdAt", None))
    }

    pub(super) fn deregister_exclusion(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let principal = input.str("principalArn").unwrap_or_default();
        self.delete_item(ctx, "exclusion", principal)?
            .ok_or_else(|| {
                error(
                    "ExclusionNotFoundException",
                    format!("The principal '{principal}' is not excluded from pull-time updates"),
                )
            })?;
        Ok(Value::map().with("principalArn", principal))
    }

    pub(super) fn list_exclusions(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let limit = max_results(input)?;
        let principals = self
            .items(ctx, "exclusion")?
            .into_iter()
            .map(|(principal, _)| Value::from(principal))
            .collect();
        let (page, next) = paging::page(principals, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("pullTimeUpdateExclusions", Value::List(page))
            .with_opt("nextToken", next))
    }
}

/// Checks a repository prefix as ECR does: `min` to `max` characters of the repository
/// name alphabet.
fn check_prefix(member: &str, prefix: &str, min: usize, max: usize) -> AwsResult<()> {
    let len = prefix.chars().count();
    let alphabet = prefix
        .chars()
        .all(|c| c.is_ascii_lowercase() || c.is_ascii_digit() || "._-/".contains(c));
    if len < min || len > max || !alphabet || prefix.starts_with('/') || prefix.ends_with('/') {
        return Err(invalid_parameter(
            member,
            &format!(
                "must have length between {min} and {max} and contain only lowercase letters, digits, '.', '_', '-' and '/'"
            ),
        ));
    }
    Ok(())
}

/// A backfill's answer from its stored body: the start and end as timestamps.
fn backfill(ctx: &Context, body: &Value) -> Value {
    let at = |member| body.int(member).map(Value::Timestamp);
    Value::map()
        .with("registryId", ctx.account.as_str())
        .with_opt("replicationBackfillId", body.str("replicationBackfillId"))
        .with_opt("destination", body.get("destination").cloned())
        .with_opt("status", body.str("status"))
        .with_opt("progress", body.get("progress").cloned())
        .with_opt("startedAt", at("startedAt"))
        .with_opt("endedAt", at("endedAt"))
}

impl Inner {
    /// StartReplicationBackfill: for a destination the replication configuration names, a
    /// backfill that completes at once; Roto replicates no image, so it counts none.
    pub(super) fn start_backfill(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let destination = input.get("destination").cloned().unwrap_or_else(Value::map);
        let configured = self
            .replication(ctx)?
            .get("rules")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(|r| r.get("destinations").and_then(Value::as_list))
            .flatten()
            .any(|d| {
                d.str("region") == destination.str("region")
                    && d.str("registryId") == destination.str("registryId")
            });
        if !configured {
            return Err(error(
                "ValidationException",
                format!(
                    "The destination with region '{}' and registry id '{}' is not configured in the replication configuration of the registry with id '{}'",
                    destination.str("region").unwrap_or_default(),
                    destination.str("registryId").unwrap_or_default(),
                    ctx.account
                ),
            ));
        }
        let id = ids::uuid();
        let now = now_millis();
        let progress = Value::map()
            .with("totalReplicationCount", Value::Integer(0))
            .with("completedReplicationCount", Value::Integer(0))
            .with("failedReplicationCount", Value::Integer(0))
            .with("failureCodes", Value::List(Vec::new()));
        let body = Value::map()
            .with("replicationBackfillId", id.as_str())
            .with("destination", destination)
            .with("status", "COMPLETE")
            .with("progress", progress)
            .with("startedAt", Value::Integer(now))
            .with("endedAt", Value::Integer(now));
        self.put_item(ctx, "backfill", &id, &body, false)?;
        let mut answer = backfill(ctx, &body);
        for member in ["progress", "endedAt"] {
            answer.remove(member);
        }
        Ok(answer)
    }

    /// ListReplicationBackfills: the backfills started, a page at a time (50 by default).
    pub(super) fn list_backfills(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let all = self
            .items(ctx, "backfill")?
            .iter()
            .map(|(_, item)| backfill(ctx, &item.body))
            .collect();
        let limit = input
            .int("maxResults")
            .map_or(50, |n| n.clamp(1, 50) as usize);
        let (page, next) = paging::page(all, limit, input.str("nextToken"), || {
            invalid_parameter("nextToken", "Invalid NextToken")
        })?;
        Ok(Value::map()
            .with("registryId", ctx.account.as_str())
            .with("backfills", Value::List(page))
            .with_opt("nextToken", next))
    }

    /// DescribeReplicationBackfillResults and StopReplicationBackfill: the backfill named,
    /// or `ReplicationBackfillNotFoundException`; a completed one cannot be stopped.
    pub(super) fn one_backfill(
        &self,
        ctx: &Context,
        operation: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("replicationBackfillId").unwrap_or_default();
        let Some(item) = self.item(ctx, "backfill", id)? else {
            return Err(error(
                "ReplicationBackfillNotFoundException",
                format!(
                    "The replication backfill with id '{id}' does not exist in the registry with id '{}'",
                    ctx.account
                ),
            ));
        };
        if operation == "StopReplicationBackfill" {
            return Err(error(
                "ReplicationBackfillInvalidStatusException",
                format!(
                    "The replication backfill with id '{id}' is COMPLETE and cannot be stopped"
                ),
            ));
        }
        Ok(backfill(ctx, &item.body).with("results", Value::List(Vec::new())))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn upstream_registries_are_named_by_their_hosts() {
        assert_eq!(upstream_registry("public.ecr.aws"), Some("ecr-public"));
        assert_eq!(
            upstream_registry("https://registry-1.docker.io/"),
            Some("docker-hub")
        );
        assert_eq!(
            upstream_registry("123456789012.dkr.ecr.eu-west-1.amazonaws.com"),
            Some("ecr")
        );
        assert_eq!(
            upstream_registry("myreg.azurecr.io"),
            Some("azure-container-registry")
        );
        assert_eq!(upstream_registry("example.com"), None);
    }

    #[test]
    fn prefixes_use_the_repository_alphabet() {
        assert!(check_prefix("p", "team/app", 2, 30).is_ok());
        assert!(check_prefix("p", "a", 2, 30).is_err());
        assert!(check_prefix("p", "Upper", 2, 30).is_err());
        assert!(check_prefix("p", "/lead", 2, 30).is_err());
        assert!(check_prefix("p", &"a".repeat(31), 2, 30).is_err());
    }
}
