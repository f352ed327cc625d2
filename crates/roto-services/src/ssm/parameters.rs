//! Parameters and their versions: PutParameter, GetParameter(s), history, labels,
//! deletion and tags.

use base64::Engine;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};

use super::names::{self, Selector};
use super::{Ssm, DEFAULT_KEY};
use crate::envelope;
use crate::paging::page;

/// The most versions a parameter keeps.
const MAX_VERSIONS: i64 = 100;
/// The most labels one version may carry.
const MAX_LABELS: usize = 10;
const DATA_TYPES: &[&str] = &["text", "aws:ec2:image", "aws:ssm:integration"];

/// One version of a parameter as stored.
#[derive(Debug, Clone)]
pub(super) struct Version {
    pub(super) name: String,
    pub(super) version: i64,
    pub(super) kind: String,
    value: Vec<u8>,
    pub(super) key_id: Option<String>,
    pub(super) description: Option<String>,
    pub(super) allowed_pattern: Option<String>,
    pub(super) tier: String,
    pub(super) data_type: String,
    pub(super) policies: Option<String>,
    pub(super) modified: i64,
    pub(super) labels: Vec<String>,
}

const VERSION_COLUMNS: &str = "name, version, type, value, key_id, description, allowed_pattern,
    tier, data_type, policies, modified, labels";

pub(super) fn version_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Version> {
    let labels: String = r.get(11)?;
    Ok(Version {
        name: r.get(0)?,
        version: r.get(1)?,
        kind: r.get(2)?,
        value: r.get(3)?,
        key_id: r.get(4)?,
        description: r.get(5)?,
        allowed_pattern: r.get(6)?,
        tier: r.get(7)?,
        data_type: r.get(8)?,
        policies: r.get(9)?,
        modified: r.get(10)?,
        labels: serde_json::from_str(&labels).unwrap_or_default(),
    })
}

/// A version number and its labels.
type VersionLabels = (i64, Vec<String>);

fn parameter_not_found() -> AwsError {
    AwsError::new("ParameterNotFound", "")
}

fn version_not_found(what: &str, name: &str) -> AwsError {
    AwsError::new(
        "ParameterVersionNotFound",
        format!("Systems Manager could not find version {what} of {name}. Verify the version and try again."),
    )
}

fn strings(list: &[String]) -> Value {
    Value::List(list.iter().map(Value::from).collect())
}

fn encryption_context(ctx: &Context, name: &str) -> Value {
    Value::map().with("PARAMETER_ARN", names::arn(ctx, name))
}

/// `ParameterHistory` and `ParameterMetadata` share these members.
pub(super) fn metadata(ctx: &Context, v: &Version) -> Value {
    let mut out = Value::map()
        .with("Name", v.name.as_str())
        .with("ARN", names::arn(ctx, &v.name))
        .with("Type", v.kind.as_str())
        .with("LastModifiedDate", Value::Timestamp(v.modified))
        .with("LastModifiedUser", super::records::caller(ctx))
        .with("Version", v.version)
        .with("Tier", v.tier.as_str())
        .with("DataType", v.data_type.as_str())
        .with("Policies", Value::List(Vec::new()))
        .with_opt("Description", v.description.as_deref())
        .with_opt("AllowedPattern", v.allowed_pattern.as_deref());
    if v.kind == "SecureString" {
        out.insert("KeyId", v.key_id.as_deref().unwrap_or(DEFAULT_KEY));
    }
    out
}

impl Ssm {
    pub(super) fn versions_of(&self, ctx: &Context, name: &str) -> AwsResult<Vec<Version>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {VERSION_COLUMNS} FROM ssm_versions
                 WHERE account = ?1 AND region = ?2 AND name = ?3 ORDER BY version"
            ))?;
            let rows = st.query_map([&ctx.account, &ctx.region, name], version_from_row)?;
            rows.collect::<rusqlite::Result<_>>()
                .map_err(AwsError::from)
        })
    }

    /// Every parameter's latest version, by name.
    pub(super) fn latest_versions(&self, ctx: &Context) -> AwsResult<Vec<Version>> {
        self.env.store.with(|c| {
            let mut st = c.prepare_cached(&format!(
                "SELECT {} FROM ssm_versions v JOIN ssm_parameters p
                   ON p.account = v.account AND p.region = v.region AND p.name = v.name AND p.version = v.version
                 WHERE v.account = ?1 AND v.region = ?2 ORDER BY v.name",
                VERSION_COLUMNS
                    .split(',')
                    .map(|c| format!("v.{}", c.trim()))
                    .collect::<Vec<_>>()
                    .join(", ")
            ))?;
            let rows = st.query_map([&ctx.account, &ctx.region], version_from_row)?;
            rows.collect::<rusqlite::Result<_>>().map_err(AwsError::from)
        })
    }

    /// The version a reference (`name`, `name:3`, `name:label`, or an ARN) picks.
    fn resolve(&self, ctx: &Context, reference: &str) -> AwsResult<(Version, Option<Selector>)> {
        let (candidates, selector) = names::parse_reference(reference)?;
        for name in candidates {
            let versions = self.versions_of(ctx, &name)?;
            if versions.is_empty() {
                continue;
            }
            let found = match &selector {
                None => versions.last(),
                Some(Selector::Version(v)) => versions.iter().find(|x| x.version == *v),
                Some(Selector::Label(l)) => versions.iter().find(|x| x.labels.contains(l)),
            };
            let what = selector.as_ref().map(|s| s.echo()[1..].to_string());
            return match found {
                Some(v) => Ok((v.clone(), selector)),
                None => Err(version_not_found(&what.unwrap_or_default(), &name)),
            };
        }
        Err(parameter_not_found())
    }

    /// The value as returned: plain for String and StringList; for SecureString the
    /// plaintext when decrypting, else the ciphertext in base64.
    async fn rendered_value(&self, ctx: &Context, v: &Version, decrypt: bool) -> AwsResult<String> {
        if v.kind != "SecureString" {
            return Ok(String::from_utf8_lossy(&v.value).into_owned());
        }
        if !decrypt {
            return Ok(base64::engine::general_purpose::STANDARD.encode(&v.value));
        }
        let plain = envelope::open(&self.env, ctx, &v.value, encryption_context(ctx, &v.name))
            .await
            .map_err(|e| AwsError::new("InvalidKeyId", e.message))?;
        Ok(String::from_utf8_lossy(&plain).into_owned())
    }

    /// The `Parameter` structure for a version.
    pub(super) async fn parameter(
        &self,
        ctx: &Context,
        v: &Version,
        selector: Option<&Selector>,
        decrypt: bool,
    ) -> AwsResult<Value> {
        Ok(Value::map()
            .with("Name", v.name.as_str())
            .with("Type", v.kind.as_str())
            .with("Value", self.rendered_value(ctx, v, decrypt).await?)
            .with("Version", v.version)
            .with("LastModifiedDate", Value::Timestamp(v.modified))
            .with("ARN", names::arn(ctx, &v.name))
            .with("DataType", v.data_type.as_str())
            .with_opt("Selector", selector.map(Selector::echo)))
    }

    pub(super) async fn put_parameter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = input.str("Name").unwrap_or_default();
        let value = input.str("Value").unwrap_or_default();
        names::check_name(name)?;
        let overwrite = input.bool("Overwrite").unwrap_or(false);
        if overwrite && input.get("Tags").is_some() {
            return Err(AwsError::validation(
                "Invalid request: tags and overwrite can't be used together. To create a parameter with tags, please remove overwrite flag. To update tags for an existing parameter, please use AddTagsToResource or RemoveTagsFromResource.",
            ));
        }
        let existing = self.versions_of(ctx, name)?.pop();
        if existing.is_some() && !overwrite {
            return Err(AwsError::new(
                "ParameterAlreadyExists",
                "The parameter already exists. To overwrite this value, set the overwrite option in the request to true.",
            ));
        }
        let kind = input
            .str("Type")
            .or(existing.as_ref().map(|e| e.kind.as_str()))
            .ok_or_else(|| {
                AwsError::validation("A parameter type is required when you create a parameter.")
            })?
            .to_string();
        if input.str("KeyId").is_some() && kind != "SecureString" {
            return Err(AwsError::validation(
                "KeyId is required for SecureString type parameter only.",
            ));
        }
        let tier = self.tier(input, existing.as_ref(), value)?;
        let allowed_pattern = input
            .str("AllowedPattern")
            .map(str::to_string)
            .or_else(|| existing.as_ref().and_then(|e| e.allowed_pattern.clone()));
        if let Some(pattern) = &allowed_pattern {
            let re = regex_lite::Regex::new(pattern).map_err(|_| {
                AwsError::new(
                    "InvalidAllowedPatternException",
                    "The allowed pattern is not a valid regular expression.",
                )
            })?;
            if !re.is_match(value) {
                return Err(AwsError::new(
                    "ParameterPatternMismatchException",
                    format!(
                        "Parameter value, cannot be validated against allowedPattern: {pattern}"
                    ),
                ));
            }
        }
        let data_type = input
            .str("DataType")
            .or(existing.as_ref().map(|e| e.data_type.as_str()))
            .unwrap_or("text")
            .to_string();
        if !DATA_TYPES.contains(&data_type.as_str()) {
            return Err(AwsError::validation(format!(
                "The following data type is not supported: {data_type} (Data type names are all lowercase.)"
            )));
        }
        let key_id =
            (kind == "SecureString").then(|| input.str("KeyId").unwrap_or(DEFAULT_KEY).to_string());
        let stored = match &key_id {
            Some(key) => envelope::seal(
                &self.env,
                ctx,
                key,
                encryption_context(ctx, name),
                value.as_bytes(),
            )
            .await
            .map_err(|e| AwsError::new("InvalidKeyId", e.message))?,
            None => value.as_bytes().to_vec(),
        };
        let version = Version {
            name: name.to_string(),
            version: existing.as_ref().map_or(1, |e| e.version + 1),
            kind,
            value: stored,
            key_id,
            description: input
                .str("Description")
                .map(str::to_string)
                .or_else(|| existing.as_ref().and_then(|e| e.description.clone())),
            allowed_pattern,
            tier,
            data_type,
            policies: input.str("Policies").map(str::to_string),
            modified: now_millis(),
            labels: Vec::new(),
        };
        self.store_version(ctx, &version, existing.is_none(), input)?;
        Ok(Value::map()
            .with("Version", version.version)
            .with("Tier", version.tier))
    }

    /// The tier a write lands in, with AWS's refusals (downgrades, oversized standard values).
    fn tier(&self, input: &Value, existing: Option<&Version>, value: &str) -> AwsResult<String> {
        let len = value.chars().count();
        let requested = input.str("Tier");
        let was_advanced = existing.is_some_and(|e| e.tier == "Advanced");
        let tier = match requested {
            Some("Intelligent-Tiering") | None => {
                let needs_advanced = len > 4096 || input.str("Policies").is_some();
                if was_advanced || (requested.is_some() && needs_advanced) {
                    "Advanced"
                } else {
                    "Standard"
                }
            }
            Some(t) => t,
        };
        if was_advanced && tier == "Standard" {
            return Err(AwsError::validation(
                "This parameter uses the advanced-parameter tier. You can't downgrade a parameter from the advanced-parameter tier to the standard-parameter tier. If necessary, you can delete the advanced parameter and recreate it as a standard parameter.",
            ));
        }
        if tier == "Standard" && len > 4096 {
            return Err(AwsError::validation(
                "Standard tier parameters support a maximum parameter value of 4096 characters. To create a larger parameter value, upgrade the parameter to use the advanced-parameter tier. For more information, see https://docs.aws.amazon.com/systems-manager/latest/userguide/parameter-store-advanced-parameters.html",
            ));
        }
        Ok(tier.to_string())
    }

    fn store_version(&self, ctx: &Context, v: &Version, new: bool, input: &Value) -> AwsResult<()> {
        let tags = super::queries::tag_pairs(input);
        self.env.store.transaction(|tx| {
            if v.version > MAX_VERSIONS {
                let oldest = v.version - MAX_VERSIONS;
                let labels: Option<String> = rusqlite::OptionalExtension::optional(tx.query_row_cached(
                    "SELECT labels FROM ssm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
                    rusqlite::params![ctx.account, ctx.region, v.name, oldest],
                    |r| r.get(0),
                ))?;
                if labels.is_some_and(|l| l != "[]") {
                    return Err(AwsError::new(
                        "ParameterMaxVersionLimitExceeded",
                        format!(
                            "You attempted to create a new version of {} by calling the PutParameter API with the overwrite flag. Version {oldest}, the oldest version, can't be deleted because it has a label associated with it. Move the label to another version of the parameter, and try again.",
                            v.name
                        ),
                    ));
                }
                tx.execute_cached(
                    "DELETE FROM ssm_versions WHERE account = ?1 AND region = ?2 AND name = ?3 AND version <= ?4",
                    rusqlite::params![ctx.account, ctx.region, v.name, oldest],
                )?;
            }
            tx.execute_cached(
                "INSERT INTO ssm_versions (account, region, name, version, type, value, key_id,
                    description, allowed_pattern, tier, data_type, policies, modified, labels)
                 VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13, '[]')",
                rusqlite::params![
                    ctx.account,
                    ctx.region,
                    v.name,
                    v.version,
                    v.kind,
                    v.value,
                    v.key_id,
                    v.description,
                    v.allowed_pattern,
                    v.tier,
                    v.data_type,
                    v.policies,
                    v.modified
                ],
            )?;
            if new {
                tx.execute_cached(
                    "INSERT INTO ssm_parameters (account, region, name, version, tags) VALUES (?1, ?2, ?3, ?4, ?5)",
                    rusqlite::params![ctx.account, ctx.region, v.name, v.version, super::queries::tags_json(&tags)],
                )?;
            } else {
                tx.execute_cached(
                    "UPDATE ssm_parameters SET version = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
                    rusqlite::params![ctx.account, ctx.region, v.name, v.version],
                )?;
            }
            Ok(())
        })
    }

    pub(super) async fn get_parameter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (v, selector) = self.resolve(ctx, input.str("Name").unwrap_or_default())?;
        let decrypt = input.bool("WithDecryption").unwrap_or(false);
        Ok(Value::map().with(
            "Parameter",
            self.parameter(ctx, &v, selector.as_ref(), decrypt).await?,
        ))
    }

    pub(super) async fn get_parameters(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let decrypt = input.bool("WithDecryption").unwrap_or(false);
        let mut found = Vec::new();
        let mut invalid: Vec<Value> = Vec::new();
        let mut seen: Vec<&str> = Vec::new();
        for name in input
            .get("Names")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
        {
            if seen.contains(&name) {
                continue;
            }
            seen.push(name);
            match self.resolve(ctx, name) {
                Ok((v, selector)) => {
                    found.push(self.parameter(ctx, &v, selector.as_ref(), decrypt).await?)
                }
                Err(e) if e.code == "ParameterNotFound" || e.code == "ParameterVersionNotFound" => {
                    invalid.push(name.into())
                }
                Err(e) => return Err(e),
            }
        }
        Ok(Value::map()
            .with("Parameters", Value::List(found))
            .with("InvalidParameters", Value::List(invalid)))
    }

    pub(super) async fn get_parameter_history(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (v, _) = self.resolve(ctx, input.str("Name").unwrap_or_default())?;
        let decrypt = input.bool("WithDecryption").unwrap_or(false);
        let mut entries = Vec::new();
        for version in self.versions_of(ctx, &v.name)? {
            entries.push(
                metadata(ctx, &version)
                    .with("Value", self.rendered_value(ctx, &version, decrypt).await?)
                    .with("Labels", strings(&version.labels)),
            );
        }
        let limit = usize::try_from(input.int("MaxResults").unwrap_or(50)).unwrap_or(50);
        let (entries, next) = page(
            entries,
            limit,
            input.str("NextToken"),
            super::queries::bad_token,
        )?;
        Ok(Value::map()
            .with("Parameters", Value::List(entries))
            .with_opt("NextToken", next))
    }

    /// The parameter's versions' labels, and the version a request names (latest if none).
    fn label_target(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<(String, Vec<VersionLabels>, i64)> {
        let name = input.str("Name").unwrap_or_default();
        let versions = self.versions_of(ctx, name)?;
        let latest = versions.last().ok_or_else(parameter_not_found)?.version;
        let target = input.int("ParameterVersion").unwrap_or(latest);
        if !versions.iter().any(|v| v.version == target) {
            return Err(version_not_found(&target.to_string(), name));
        }
        Ok((
            name.to_string(),
            versions
                .into_iter()
                .map(|v| (v.version, v.labels))
                .collect(),
            target,
        ))
    }

    fn write_labels(&self, ctx: &Context, name: &str, labels: &[VersionLabels]) -> AwsResult<()> {
        self.env.store.transaction(|tx| {
            let mut st = tx.prepare_cached(
                "UPDATE ssm_versions SET labels = ?5 WHERE account = ?1 AND region = ?2 AND name = ?3 AND version = ?4",
            )?;
            for (version, l) in labels {
                let json = serde_json::to_string(l).unwrap_or_else(|_| "[]".into());
                st.execute(rusqlite::params![ctx.account, ctx.region, name, version, json])?;
            }
            Ok(())
        })
    }

    fn requested_labels(input: &Value) -> Vec<String> {
        input
            .get("Labels")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    }

    pub(super) fn label_parameter_version(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (name, mut all, target) = self.label_target(ctx, input)?;
        let (valid, invalid): (Vec<String>, Vec<String>) = Self::requested_labels(input)
            .into_iter()
            .partition(|l| names::valid_label(l));
        for label in &valid {
            for (version, labels) in all.iter_mut() {
                if *version == target {
                    if !labels.contains(label) {
                        labels.push(label.clone());
                    }
                } else {
                    labels.retain(|l| l != label);
                }
            }
        }
        if all
            .iter()
            .any(|(v, labels)| *v == target && labels.len() > MAX_LABELS)
        {
            return Err(AwsError::new(
                "ParameterVersionLabelLimitExceeded",
                "A parameter version can have maximum 10 labels.Move one or more labels to another version and try again.",
            ));
        }
        self.write_labels(ctx, &name, &all)?;
        Ok(Value::map()
            .with("InvalidLabels", strings(&invalid))
            .with("ParameterVersion", target))
    }

    pub(super) fn unlabel_parameter_version(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (name, mut all, target) = self.label_target(ctx, input)?;
        let mut removed = Vec::new();
        let mut invalid = Vec::new();
        if let Some((_, labels)) = all.iter_mut().find(|(v, _)| *v == target) {
            for label in Self::requested_labels(input) {
                if labels.contains(&label) {
                    labels.retain(|l| *l != label);
                    removed.push(label);
                } else {
                    invalid.push(label);
                }
            }
        }
        self.write_labels(ctx, &name, &all)?;
        Ok(Value::map()
            .with("RemovedLabels", strings(&removed))
            .with("InvalidLabels", strings(&invalid)))
    }

    /// Deletes the parameter `name`, every version of it and the resource policies attached
    /// to it; whether there was one.
    fn remove(&self, ctx: &Context, name: &str) -> AwsResult<bool> {
        let removed = self.env.store.transaction(|tx| -> AwsResult<bool> {
            let n = tx.execute_cached(
                "DELETE FROM ssm_parameters WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
            )?;
            tx.execute_cached(
                "DELETE FROM ssm_versions WHERE account = ?1 AND region = ?2 AND name = ?3",
                [&ctx.account, &ctx.region, name],
            )?;
            Ok(n > 0)
        })?;
        if removed {
            self.forget_children(ctx, &names::arn(ctx, name))?;
        }
        Ok(removed)
    }

    pub(super) fn delete_parameter(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        if !self.remove(ctx, input.str("Name").unwrap_or_default())? {
            return Err(parameter_not_found());
        }
        Ok(Value::map())
    }

    pub(super) fn delete_parameters(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut deleted = Vec::new();
        let mut invalid = Vec::new();
        for name in input
            .get("Names")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
        {
            if self.remove(ctx, name)? {
                deleted.push(Value::from(name));
            } else {
                invalid.push(Value::from(name));
            }
        }
        Ok(Value::map()
            .with("DeletedParameters", Value::List(deleted))
            .with("InvalidParameters", Value::List(invalid)))
    }
}
