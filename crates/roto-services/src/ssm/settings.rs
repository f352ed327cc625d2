//! The account's Default Host Management Configuration, service settings (GetServiceSetting, UpdateServiceSetting,
//! ResetServiceSetting) and resource policies (PutResourcePolicy, GetResourcePolicies,
//! DeleteResourcePolicy), kept as records.
//!
//! A setting nobody updated answers its documented default with `Status` `Default` and
//! `LastModifiedUser` `System`, as AWS does; an update is `Customized` until reset. Settings
//! and policies are stored and returned, not applied.

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use sha2::{Digest, Sha256};

use super::records::{paged, Kind};
use super::{names, Ssm};

const SETTING: Kind<'static> = Kind::top("service-setting");
/// The account's Default Host Management Configuration, one record.
const HOST_MANAGEMENT: Kind<'static> = Kind::top("host-management");

/// The role Systems Manager creates for a service-managed Default Host Management
/// Configuration.
const HOST_MANAGEMENT_ROLE: &str = "service-role/AWSSystemsManagerDefaultEC2InstanceManagementRole";

/// The service settings SSM offers, with the value each has until updated.
const DEFAULTS: &[(&str, &str)] = &[
    ("/ssm/parameter-store/default-parameter-tier", "Standard"),
    ("/ssm/parameter-store/high-throughput-enabled", "false"),
    ("/ssm/managed-instance/activation-tier", "standard"),
    ("/ssm/documents/console/public-sharing-permission", "Enable"),
    ("/ssm/opsinsights/opscenter", "Disabled"),
    (
        "/ssm/automation/customer-script-log-group-name",
        "/aws/ssm/automation/executeScript",
    ),
];

/// The setting a `SettingId` (its path or its ARN) names, with its default value.
fn setting_of(input: &Value) -> AwsResult<(&'static str, &'static str)> {
    let id = input.str("SettingId").unwrap_or_default();
    let path = id
        .split_once(":servicesetting")
        .map_or(id, |(_, path)| path);
    DEFAULTS
        .iter()
        .find(|(known, _)| *known == path)
        .copied()
        .ok_or_else(|| {
            AwsError::new(
                "ServiceSettingNotFound",
                "The specified service setting wasn't found. Either the service name or the setting hasn't been provisioned by the Amazon Web Services service team.",
            )
        })
}

fn setting_arn(ctx: &Context, path: &str) -> String {
    format!(
        "arn:aws:ssm:{}:{}:servicesetting{path}",
        ctx.region, ctx.account
    )
}

/// `ResourcePolicyNotFoundException`.
fn no_policy() -> AwsError {
    AwsError::new(
        "ResourcePolicyNotFoundException",
        "No policy found for the specified policy ID.",
    )
}

/// `ResourcePolicyConflictException`: the hash named is not the policy's current one.
fn hash_conflict() -> AwsError {
    AwsError::new(
        "ResourcePolicyConflictException",
        "The hash provided in the call doesn't match the stored hash.",
    )
}

impl Ssm {
    fn service_setting(&self, ctx: &Context, path: &str, default: &str) -> AwsResult<Value> {
        Ok(self
            .record_as(ctx, SETTING, path, "ServiceSetting")?
            .unwrap_or_else(|| {
                Value::map()
                    .with("SettingId", path)
                    .with("SettingValue", default)
                    .with("LastModifiedUser", "System")
                    .with("ARN", setting_arn(ctx, path))
                    .with("Status", "Default")
            }))
    }

    pub(super) fn get_service_setting(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (path, default) = setting_of(input)?;
        Ok(Value::map().with("ServiceSetting", self.service_setting(ctx, path, default)?))
    }

    pub(super) fn update_service_setting(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (path, _) = setting_of(input)?;
        let setting = Value::map()
            .with("SettingId", path)
            .with(
                "SettingValue",
                input.str("SettingValue").unwrap_or_default(),
            )
            .with("LastModifiedDate", Value::Timestamp(now_millis()))
            .with("LastModifiedUser", super::records::caller(ctx))
            .with("ARN", setting_arn(ctx, path))
            .with("Status", "Customized");
        self.save(ctx, SETTING, path, &setting)?;
        Ok(Value::map())
    }

    pub(super) fn reset_service_setting(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (path, default) = setting_of(input)?;
        self.forget(ctx, SETTING, path)?;
        Ok(Value::map().with("ServiceSetting", self.service_setting(ctx, path, default)?))
    }

    /// The owner a policy's `ResourceArn` names: an OpsItem group as given, or the
    /// parameter's own ARN (so that every form of it finds the same policies and deleting the
    /// parameter deletes them); ResourceNotFoundException for a parameter that does not exist.
    fn policy_owner(&self, ctx: &Context, arn: &str) -> AwsResult<String> {
        if arn.contains(":opsitemgroup/") {
            return Ok(arn.to_string());
        }
        if !arn.contains(":parameter") {
            return Err(AwsError::new(
                "ResourcePolicyInvalidParameterException",
                format!("Invalid resource ARN: {arn}"),
            ));
        }
        let (candidates, _) = names::parse_reference(arn)?;
        for name in candidates {
            if !self.versions_of(ctx, &name)?.is_empty() {
                return Ok(names::arn(ctx, &name));
            }
        }
        Err(AwsError::new(
            "ResourceNotFoundException",
            format!("The resource {arn} was not found."),
        ))
    }

    pub(super) fn put_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let arn = input.str("ResourceArn").unwrap_or_default();
        let policy = input.str("Policy").unwrap_or_default();
        if !matches!(
            serde_json::from_str::<serde_json::Value>(policy),
            Ok(serde_json::Value::Object(_))
        ) {
            return Err(AwsError::new(
                "MalformedResourcePolicyDocumentException",
                "The policy document is not valid JSON.",
            ));
        }
        let owner = self.policy_owner(ctx, arn)?;
        let kind = Kind::under("resource-policy", &owner);
        let id = match input.str("PolicyId") {
            Some(id) => {
                let current = self.record(ctx, kind, id)?.ok_or_else(no_policy)?;
                if current.str("PolicyHash") != input.str("PolicyHash") {
                    return Err(hash_conflict());
                }
                id.to_string()
            }
            None => crate::ids::uuid(),
        };
        let hash = hex::encode(Sha256::digest(policy.as_bytes()));
        let entry = Value::map()
            .with("PolicyId", id.as_str())
            .with("PolicyHash", hash.as_str())
            .with("Policy", policy);
        self.save(ctx, kind, &id, &entry)?;
        Ok(Value::map().with("PolicyId", id).with("PolicyHash", hash))
    }

    pub(super) fn get_resource_policies(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let owner = self.policy_owner(ctx, input.str("ResourceArn").unwrap_or_default())?;
        let policies = self.records_as(
            ctx,
            Kind::under("resource-policy", &owner),
            "GetResourcePoliciesResponseEntry",
        )?;
        paged(input, policies, "Policies", 50)
    }

    pub(super) fn delete_resource_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let owner = self.policy_owner(ctx, input.str("ResourceArn").unwrap_or_default())?;
        let id = input.str("PolicyId").unwrap_or_default();
        let kind = Kind::under("resource-policy", &owner);
        let current = self.record(ctx, kind, id)?.ok_or_else(no_policy)?;
        if current.str("PolicyHash") != input.str("PolicyHash") {
            return Err(hash_conflict());
        }
        self.forget(ctx, kind, id)?;
        Ok(Value::map())
    }

    pub(super) fn register_default_host_management_configuration(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let role = match (input.str("PermissionModel"), input.str("RoleArn")) {
            (Some("SELF_MANAGED"), Some(role)) => role.to_string(),
            (Some("SELF_MANAGED"), None) => {
                return Err(AwsError::validation(
                    "RoleArn is required when PermissionModel is SELF_MANAGED.",
                ))
            }
            _ => format!("arn:aws:iam::{}:role/{HOST_MANAGEMENT_ROLE}", ctx.account),
        };
        let registered = self.record(ctx, HOST_MANAGEMENT, "default")?.is_some();
        if registered && !input.bool("Overwrite").unwrap_or(false) {
            return Err(AwsError::validation(
                "A Default Host Management Configuration is already registered; set Overwrite to replace it.",
            ));
        }
        let entry = Value::map().with("RoleArn", role.as_str());
        self.save(ctx, HOST_MANAGEMENT, "default", &entry)?;
        Ok(Value::map().with("RoleArn", role))
    }

    pub(super) fn deregister_default_host_management_configuration(
        &self,
        ctx: &Context,
    ) -> AwsResult<Value> {
        self.forget(ctx, HOST_MANAGEMENT, "default")?;
        Ok(Value::map())
    }
}
