//! Settings kept whole and read back whole: a log group's data protection policy,
//! transformer, field index policy, bearer token authentication and syslog
//! configurations, the account's policies by type, and the account's storage tier.
//!
//! They are stored and returned exactly as put, not applied: Roto neither masks, transforms
//! nor indexes events. A log group without a setting answers as AWS does (the Get without
//! the document, an empty list of index policies); deleting the group deletes its settings.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::{invalid, name_of_arn, Logs};
use crate::documents::{document, Scope};

/// A log group's data protection policy.
const DATA_PROTECTION: &str = "data-protection-policy";
/// A log group's transformer.
const TRANSFORMER: &str = "transformer";
/// A log group's field index policy.
const INDEX_POLICY: &str = "index-policy";
/// The account's storage tier.
const STORAGE_TIER: &str = "storage-tier";
/// Whether a log group takes events authenticated by bearer tokens.
const BEARER_TOKEN: &str = "bearer-token";
/// A log group's syslog configurations, one per VPC endpoint.
const SYSLOG: &str = "syslog";

/// The log group a `logGroupIdentifier` (a name or an ARN) names.
fn group_name(identifier: &str) -> &str {
    name_of_arn(identifier).unwrap_or(identifier)
}

/// `ResourceNotFoundException` for a setting the log group does not have.
fn no_setting(what: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("The specified log group does not have a {what}."),
    )
    .with_status(400)
}

/// Checks that `text` is a JSON object, as every policy document must be.
fn json_document(text: &str, member: &str) -> AwsResult<()> {
    match serde_json::from_str::<serde_json::Value>(text) {
        Ok(serde_json::Value::Object(_)) => Ok(()),
        _ => Err(invalid(format!("{member} is not a valid JSON document."))),
    }
}

impl Logs {
    /// Where setting `kind` of group `group` lives.
    fn setting_scope<'a>(ctx: &'a Context, kind: &'a str, group: &'a str) -> Scope<'a> {
        Scope {
            account: &ctx.account,
            region: &ctx.region,
            kind,
            parent: group,
        }
    }

    /// The stored setting `kind` of the group the input's `logGroupIdentifier` names, after
    /// checking that the group exists; with the group's name.
    fn group_setting(
        &self,
        ctx: &Context,
        input: &Value,
        kind: &str,
    ) -> AwsResult<(String, Option<Value>)> {
        let group = group_name(input.str("logGroupIdentifier").unwrap_or_default()).to_string();
        self.existing_group(ctx, &group)?;
        let stored = self
            .docs
            .get(Self::setting_scope(ctx, kind, &group), "")?
            .map(|j| Value::from_json(&j));
        Ok((group, stored))
    }

    /// A Get of setting `kind`: what was put, or nothing but the identifier for a group
    /// without one.
    fn read_setting(&self, ctx: &Context, input: &Value, kind: &str) -> AwsResult<Value> {
        let (_, stored) = self.group_setting(ctx, input, kind)?;
        let mut out = stored.unwrap_or_else(Value::map);
        out.insert(
            "logGroupIdentifier",
            input.str("logGroupIdentifier").unwrap_or_default(),
        );
        Ok(out)
    }

    fn put_setting(&self, ctx: &Context, kind: &str, group: &str, value: &Value) -> AwsResult<()> {
        self.docs
            .put(Self::setting_scope(ctx, kind, group), "", &document(value))
    }

    /// Deletes setting `kind` of the named group; `what` names it in the error for none.
    fn delete_setting(
        &self,
        ctx: &Context,
        input: &Value,
        kind: &str,
        what: &str,
    ) -> AwsResult<Value> {
        let (group, stored) = self.group_setting(ctx, input, kind)?;
        if stored.is_none() {
            return Err(no_setting(what));
        }
        self.docs
            .delete(Self::setting_scope(ctx, kind, &group), "")?;
        Ok(Value::map())
    }

    /// Removes every setting of a deleted log group.
    pub(super) fn delete_group_settings(&self, ctx: &Context, group: &str) -> AwsResult<()> {
        self.docs.delete_children(&ctx.account, &ctx.region, group)
    }

    pub(super) fn put_data_protection_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let text = input.str("policyDocument").unwrap_or_default();
        json_document(text, "policyDocument")?;
        let (group, _) = self.group_setting(ctx, input, DATA_PROTECTION)?;
        let policy = Value::map()
            .with_opt("logGroupIdentifier", input.str("logGroupIdentifier"))
            .with("policyDocument", text)
            .with("lastUpdatedTime", self.now());
        self.put_setting(ctx, DATA_PROTECTION, &group, &policy)?;
        Ok(policy)
    }

    pub(super) fn get_data_protection_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.read_setting(ctx, input, DATA_PROTECTION)
    }

    pub(super) fn delete_data_protection_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        self.delete_setting(ctx, input, DATA_PROTECTION, "data protection policy")
    }

    pub(super) fn put_transformer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (group, stored) = self.group_setting(ctx, input, TRANSFORMER)?;
        super::transformer::Transformer::parse(
            input.get("transformerConfig").unwrap_or(&Value::Null),
        )?;
        let now = self.now();
        let created = stored
            .as_ref()
            .and_then(|t| t.int("creationTime"))
            .unwrap_or(now);
        let transformer = Value::map()
            .with("creationTime", created)
            .with("lastModifiedTime", now)
            .with(
                "transformerConfig",
                input
                    .get("transformerConfig")
                    .cloned()
                    .unwrap_or(Value::List(Vec::new())),
            );
        self.put_setting(ctx, TRANSFORMER, &group, &transformer)?;
        Ok(Value::map())
    }

    /// The messages of a batch as the group's transformer leaves them (a message it cannot
    /// handle unchanged), or `None` when the group has no transformer.
    pub(super) fn transform(
        &self,
        ctx: &Context,
        group: &str,
        stream: &str,
        events: &[(i64, &str)],
    ) -> AwsResult<Option<Vec<String>>> {
        if events.is_empty() {
            return Ok(None);
        }
        let Some(stored) = self
            .docs
            .get(Self::setting_scope(ctx, TRANSFORMER, group), "")?
        else {
            return Ok(None);
        };
        let config = Value::from_json(&stored["transformerConfig"]);
        let transformer = super::transformer::Transformer::parse(&config)?;
        let metadata = super::transformer::Metadata {
            group,
            stream,
            account: &ctx.account,
            region: &ctx.region,
        };
        Ok(Some(
            events
                .iter()
                .map(|(_, m)| {
                    transformer
                        .apply(m, Some(&metadata))
                        .map_or_else(|| m.to_string(), |j| j.to_string())
                })
                .collect(),
        ))
    }

    pub(super) fn get_transformer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.read_setting(ctx, input, TRANSFORMER)
    }

    pub(super) fn delete_transformer(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.delete_setting(ctx, input, TRANSFORMER, "transformer")
    }

    pub(super) fn put_index_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let text = input.str("policyDocument").unwrap_or_default();
        json_document(text, "policyDocument")?;
        let (group, _) = self.group_setting(ctx, input, INDEX_POLICY)?;
        let policy = Value::map()
            .with("logGroupIdentifier", super::group_arn(ctx, &group))
            .with("lastUpdateTime", self.now())
            .with("policyDocument", text)
            .with("source", "LOG_GROUP");
        self.put_setting(ctx, INDEX_POLICY, &group, &policy)?;
        Ok(Value::map().with("indexPolicy", policy))
    }

    pub(super) fn describe_index_policies(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut policies = Vec::new();
        for identifier in input
            .get("logGroupIdentifiers")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let one = Value::map().with("logGroupIdentifier", identifier.clone());
            if let (_, Some(policy)) = self.group_setting(ctx, &one, INDEX_POLICY)? {
                policies.push(policy);
            }
        }
        Ok(Value::map().with("indexPolicies", policies))
    }

    pub(super) fn delete_index_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.delete_setting(ctx, input, INDEX_POLICY, "field index policy")
    }

    /// DescribeFieldIndexes: the named groups exist and, with no events indexed, no field
    /// has an index yet.
    pub(super) fn describe_field_indexes(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        for identifier in input
            .get("logGroupIdentifiers")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            self.existing_group(ctx, group_name(identifier.as_str().unwrap_or_default()))?;
        }
        Ok(Value::map().with("fieldIndexes", Vec::<Value>::new()))
    }

    pub(super) fn put_storage_tier_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let policy = Value::map()
            .with_opt("storageTier", input.str("storageTier"))
            .with("lastUpdatedTime", self.now());
        self.put_setting(ctx, STORAGE_TIER, "", &policy)?;
        Ok(policy)
    }

    /// GetStorageTierPolicy: what was put, or the Standard tier of an account that put none.
    pub(super) fn get_storage_tier_policy(&self, ctx: &Context) -> AwsResult<Value> {
        Ok(self
            .docs
            .get(Self::setting_scope(ctx, STORAGE_TIER, ""), "")?
            .map_or_else(
                || Value::map().with("storageTier", "STANDARD"),
                |j| Value::from_json(&j),
            ))
    }

    pub(super) fn put_account_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let text = input.str("policyDocument").unwrap_or_default();
        json_document(text, "policyDocument")?;
        let kind = input.str("policyType").unwrap_or_default();
        let name = input.str("policyName").unwrap_or_default();
        let policy = Value::map()
            .with("policyName", name)
            .with("policyDocument", text)
            .with("lastUpdatedTime", self.now())
            .with("policyType", kind)
            .with("scope", input.str("scope").unwrap_or("ALL"))
            .with_opt("selectionCriteria", input.str("selectionCriteria"))
            .with("accountId", ctx.account.as_str());
        if input.bool("dryRun") != Some(true) {
            self.docs
                .put(Self::setting_scope(ctx, kind, ""), name, &document(&policy))?;
        }
        Ok(Value::map().with("accountPolicy", policy))
    }

    pub(super) fn describe_account_policies(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let kind = input.str("policyType").unwrap_or_default();
        let policies: Vec<Value> = self
            .docs
            .list(Self::setting_scope(ctx, kind, ""))?
            .iter()
            .map(Value::from_json)
            .filter(|p| {
                input
                    .str("policyName")
                    .is_none_or(|n| p.str("policyName") == Some(n))
            })
            .collect();
        Ok(Value::map().with("accountPolicies", policies))
    }

    pub(super) fn delete_account_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let kind = input.str("policyType").unwrap_or_default();
        let name = input.str("policyName").unwrap_or_default();
        let scope = Self::setting_scope(ctx, kind, "");
        if self.docs.get(scope, name)?.is_none() {
            return Err(AwsError::new(
                "ResourceNotFoundException",
                format!("Policy with name [{name}] does not exist"),
            )
            .with_status(400));
        }
        if input.bool("dryRun") != Some(true) {
            self.docs.delete(scope, name)?;
        }
        Ok(Value::map())
    }

    pub(super) fn put_bearer_token_authentication(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let (group, _) = self.group_setting(ctx, input, BEARER_TOKEN)?;
        let enabled = input
            .bool("bearerTokenAuthenticationEnabled")
            .unwrap_or(false);
        let setting = Value::map().with("enabled", enabled);
        self.put_setting(ctx, BEARER_TOKEN, &group, &setting)?;
        Ok(Value::map())
    }

    /// Whether the log group `group` takes bearer-token authenticated events.
    pub(super) fn bearer_token_enabled(&self, ctx: &Context, group: &str) -> AwsResult<bool> {
        Ok(self
            .docs
            .value(Self::setting_scope(ctx, BEARER_TOKEN, group), "")?
            .and_then(|s| s.bool("enabled"))
            .unwrap_or(false))
    }

    pub(super) fn put_syslog_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = group_name(input.str("logGroupIdentifier").unwrap_or_default()).to_string();
        self.existing_group(ctx, &group)?;
        let endpoint = input.str("vpcEndpointId").unwrap_or_default();
        let scope = Self::setting_scope(ctx, SYSLOG, &group);
        if self.docs.get(scope, endpoint)?.is_some() {
            return Ok(Value::map());
        }
        let configuration = Value::map()
            .with("logGroupArn", super::group_arn(ctx, &group))
            .with("sourceType", "VPCE")
            .with_opt("vpcEndpointId", input.str("vpcEndpointId"))
            .with("createdAt", self.now());
        self.docs.put_value(scope, endpoint, &configuration)?;
        Ok(Value::map())
    }

    pub(super) fn delete_syslog_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = group_name(input.str("logGroupIdentifier").unwrap_or_default()).to_string();
        self.existing_group(ctx, &group)?;
        let endpoint = input.str("vpcEndpointId").unwrap_or_default();
        if !self
            .docs
            .delete(Self::setting_scope(ctx, SYSLOG, &group), endpoint)?
        {
            return Err(no_setting("syslog configuration"));
        }
        Ok(Value::map())
    }

    pub(super) fn list_syslog_configurations(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let endpoint = input.str("vpcEndpointId");
        let configurations: Vec<Value> = self
            .docs
            .list_kind(&ctx.account, &ctx.region, SYSLOG)?
            .iter()
            .map(Value::from_json)
            .filter(|c| {
                let group = c
                    .str("logGroupArn")
                    .and_then(name_of_arn)
                    .unwrap_or_default();
                input
                    .str("logGroupIdentifier")
                    .is_none_or(|g| group_name(g) == group)
                    && (endpoint.is_none() || c.str("vpcEndpointId") == endpoint)
            })
            .collect();
        Ok(Value::map().with("syslogConfigurations", configurations))
    }
}
