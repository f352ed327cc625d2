//! Patch baselines, their patch groups and each operating system's default baseline,
//! stored and answered as Patch Manager does. No managed node reports patches here, so a
//! baseline's effective patches are always none.
//!
//! Each operating system has an AWS-managed default baseline until the account registers
//! its own; Roto names it by a stable ARN per operating system (AWS's own ids differ by
//! region and are not modelled).

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use sha2::{Digest, Sha256};

use super::records::{paged, strings, Kind};
use super::windows::merge;
use super::Ssm;
use crate::ids;

const BASELINE: Kind<'static> = Kind::top("baseline");
/// A patch group's baseline, one record per patch group and operating system.
const PATCH_GROUP: Kind<'static> = Kind::top("patch-group");
/// The account's own default baseline, one record per operating system.
const DEFAULT: Kind<'static> = Kind::top("default-baseline");

/// The members a baseline keeps from CreatePatchBaseline and UpdatePatchBaseline.
const MEMBERS: &[&str] = &[
    "Name",
    "GlobalFilters",
    "ApprovalRules",
    "ApprovedPatches",
    "ApprovedPatchesComplianceLevel",
    "ApprovedPatchesEnableNonSecurity",
    "RejectedPatches",
    "RejectedPatchesAction",
    "Description",
    "Sources",
    "AvailableSecurityUpdatesComplianceStatus",
];
/// The members UpdatePatchBaseline with `Replace` leaves unset when not given.
const OPTIONAL: &[&str] = &[
    "GlobalFilters",
    "ApprovalRules",
    "ApprovedPatches",
    "RejectedPatches",
    "Description",
    "Sources",
    "AvailableSecurityUpdatesComplianceStatus",
];

fn baseline_missing(id: &str) -> AwsError {
    AwsError::new(
        "DoesNotExistException",
        format!("Patch Baseline {id} does not exist."),
    )
}

/// The AWS-managed default baseline of `os` in the caller's region.
fn managed_default(ctx: &Context, os: &str) -> String {
    let digest = Sha256::digest(os.as_bytes());
    let hex: String = digest.iter().map(|b| format!("{b:02x}")).collect();
    format!(
        "arn:aws:ssm:{}:733109147000:patchbaseline/pb-0{}",
        ctx.region,
        &hex[..16]
    )
}

/// The operating system an input names, `WINDOWS` when it names none.
fn os_of(input: &Value) -> &str {
    input.str("OperatingSystem").unwrap_or("WINDOWS")
}

impl Ssm {
    fn baseline(&self, ctx: &Context, id: &str) -> AwsResult<Value> {
        self.record(ctx, BASELINE, id)?
            .ok_or_else(|| baseline_missing(id))
    }

    /// The account's default baseline for `os`: its own registration, else AWS's.
    fn default_baseline(&self, ctx: &Context, os: &str) -> AwsResult<String> {
        Ok(self
            .record(ctx, DEFAULT, os)?
            .and_then(|d| d.str("BaselineId").map(str::to_string))
            .unwrap_or_else(|| managed_default(ctx, os)))
    }

    /// The patch groups registered to the baseline `id`.
    fn patch_groups_of(&self, ctx: &Context, id: &str) -> AwsResult<Vec<Value>> {
        Ok(self
            .records_as(ctx, PATCH_GROUP, "GetPatchBaselineForPatchGroupResult")?
            .into_iter()
            .filter(|g| g.str("BaselineId") == Some(id))
            .filter_map(|g| g.get("PatchGroup").cloned())
            .collect())
    }

    /// The baseline `id` as GetPatchBaseline and UpdatePatchBaseline answer it.
    fn baseline_output(&self, ctx: &Context, id: &str, shape: &str) -> AwsResult<Value> {
        let mut baseline = self.baseline(ctx, id)?;
        baseline.insert("PatchGroups", self.patch_groups_of(ctx, id)?);
        crate::documents::shaped(
            super::SPEC.model(),
            shape,
            &crate::documents::document(&baseline),
        )
    }

    pub(super) fn create_patch_baseline(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = format!("pb-{}", ids::hex(17));
        let now = Value::Timestamp(now_millis());
        let mut baseline = Value::map()
            .with("BaselineId", id.as_str())
            .with("OperatingSystem", os_of(input))
            .with("ApprovedPatches", Vec::<Value>::new())
            .with("RejectedPatches", Vec::<Value>::new())
            .with("ApprovedPatchesComplianceLevel", "UNSPECIFIED")
            .with("ApprovedPatchesEnableNonSecurity", false)
            .with("RejectedPatchesAction", "ALLOW_AS_DEPENDENCY")
            .with("CreatedDate", now.clone())
            .with("ModifiedDate", now);
        merge(&mut baseline, input, MEMBERS, &[], false);
        self.save(ctx, BASELINE, &id, &baseline)?;
        self.store_tags(ctx, "PatchBaseline", &id, input)?;
        Ok(Value::map().with("BaselineId", id))
    }

    pub(super) fn get_patch_baseline(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        self.baseline_output(ctx, id, "GetPatchBaselineResult")
    }

    pub(super) fn update_patch_baseline(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        let mut baseline = self.baseline(ctx, id)?;
        let replace = input.bool("Replace").unwrap_or(false);
        merge(&mut baseline, input, MEMBERS, OPTIONAL, replace);
        baseline.insert("ModifiedDate", Value::Timestamp(now_millis()));
        self.save(ctx, BASELINE, id, &baseline)?;
        self.baseline_output(ctx, id, "UpdatePatchBaselineResult")
    }

    pub(super) fn delete_patch_baseline(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        if let Some(baseline) = self.record(ctx, BASELINE, id)? {
            let os = baseline.str("OperatingSystem").unwrap_or("WINDOWS");
            let in_use =
                self.default_baseline(ctx, os)? == id || !self.patch_groups_of(ctx, id)?.is_empty();
            if in_use {
                return Err(AwsError::new(
                    "ResourceInUseException",
                    format!("Patch Baseline {id} is in use: deregister it from its patch groups and as the default first."),
                ));
            }
            self.forget(ctx, BASELINE, id)?;
            self.drop_tags(ctx, "PatchBaseline", id)?;
        }
        Ok(Value::map().with("BaselineId", id))
    }

    pub(super) fn describe_patch_baselines(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut identities = Vec::new();
        for baseline in self.records_as(ctx, BASELINE, "GetPatchBaselineResult")? {
            let id = baseline.str("BaselineId").unwrap_or_default();
            let os = baseline.str("OperatingSystem").unwrap_or("WINDOWS");
            identities.push(
                Value::map()
                    .with("BaselineId", id)
                    .with_opt("BaselineName", baseline.str("Name"))
                    .with("OperatingSystem", os)
                    .with_opt("BaselineDescription", baseline.str("Description"))
                    .with("DefaultBaseline", self.default_baseline(ctx, os)? == id),
            );
        }
        let filters = input
            .get("Filters")
            .and_then(Value::as_list)
            .unwrap_or_default();
        identities.retain(|b| filters.iter().all(|f| keeps(b, f)));
        paged(input, identities, "BaselineIdentities", 100)
    }

    pub(super) fn register_default_patch_baseline(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        let baseline = self.baseline(ctx, id)?;
        let os = baseline.str("OperatingSystem").unwrap_or("WINDOWS");
        self.save(ctx, DEFAULT, os, &Value::map().with("BaselineId", id))?;
        Ok(Value::map().with("BaselineId", id))
    }

    pub(super) fn get_default_patch_baseline(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let os = os_of(input);
        Ok(Value::map()
            .with("BaselineId", self.default_baseline(ctx, os)?)
            .with("OperatingSystem", os))
    }

    pub(super) fn register_patch_baseline_for_patch_group(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        let group = input.str("PatchGroup").unwrap_or_default();
        let baseline = self.baseline(ctx, id)?;
        let os = baseline.str("OperatingSystem").unwrap_or("WINDOWS");
        let key = format!("{os}/{group}");
        if self.record(ctx, PATCH_GROUP, &key)?.is_some() {
            return Err(AwsError::new(
                "AlreadyExistsException",
                format!("Patch Group baseline already has a baseline registered for OperatingSystem {os}."),
            ));
        }
        let mapping = Value::map()
            .with("BaselineId", id)
            .with("PatchGroup", group)
            .with("OperatingSystem", os);
        self.save(ctx, PATCH_GROUP, &key, &mapping)?;
        Ok(Value::map()
            .with("BaselineId", id)
            .with("PatchGroup", group))
    }

    pub(super) fn deregister_patch_baseline_for_patch_group(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        let group = input.str("PatchGroup").unwrap_or_default();
        let registered = self
            .records_as(ctx, PATCH_GROUP, "GetPatchBaselineForPatchGroupResult")?
            .into_iter()
            .find(|m| m.str("BaselineId") == Some(id) && m.str("PatchGroup") == Some(group));
        let Some(mapping) = registered else {
            return Err(AwsError::new(
                "InvalidResourceId",
                format!("Patch Baseline {id} is not registered for Patch Group {group}."),
            ));
        };
        let os = mapping.str("OperatingSystem").unwrap_or("WINDOWS");
        self.forget(ctx, PATCH_GROUP, &format!("{os}/{group}"))?;
        Ok(Value::map()
            .with("BaselineId", id)
            .with("PatchGroup", group))
    }

    pub(super) fn get_patch_baseline_for_patch_group(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let group = input.str("PatchGroup").unwrap_or_default();
        let os = os_of(input);
        let id = match self.record(ctx, PATCH_GROUP, &format!("{os}/{group}"))? {
            Some(m) => m.str("BaselineId").unwrap_or_default().to_string(),
            None => self.default_baseline(ctx, os)?,
        };
        Ok(Value::map()
            .with("BaselineId", id)
            .with("PatchGroup", group)
            .with("OperatingSystem", os))
    }

    pub(super) fn describe_patch_groups(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut mappings = Vec::new();
        for m in self.records_as(ctx, PATCH_GROUP, "GetPatchBaselineForPatchGroupResult")? {
            let id = m.str("BaselineId").unwrap_or_default();
            let Some(baseline) = self.record(ctx, BASELINE, id)? else {
                continue;
            };
            let os = m.str("OperatingSystem").unwrap_or("WINDOWS");
            let identity = Value::map()
                .with("BaselineId", id)
                .with_opt("BaselineName", baseline.str("Name"))
                .with("OperatingSystem", os)
                .with_opt("BaselineDescription", baseline.str("Description"))
                .with("DefaultBaseline", self.default_baseline(ctx, os)? == id);
            mappings.push(
                Value::map()
                    .with_opt("PatchGroup", m.str("PatchGroup"))
                    .with("BaselineIdentity", identity),
            );
        }
        paged(input, mappings, "Mappings", 100)
    }

    pub(super) fn describe_effective_patches_for_patch_baseline(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let id = input.str("BaselineId").unwrap_or_default();
        self.baseline(ctx, id)?;
        Ok(Value::map().with("EffectivePatches", Vec::<Value>::new()))
    }
}

/// Whether a baseline identity passes one DescribePatchBaselines filter (`NAME_PREFIX`,
/// `OWNER`, `OPERATING_SYSTEM`); an account's own baselines are owned by `Self`.
fn keeps(identity: &Value, filter: &Value) -> bool {
    let values = strings(filter, "Values");
    let name = identity.str("BaselineName").unwrap_or_default();
    match filter.str("Key").unwrap_or_default() {
        "NAME_PREFIX" => values.iter().any(|p| name.starts_with(p)),
        "OWNER" => values.contains(&"Self"),
        "OPERATING_SYSTEM" => values.contains(&identity.str("OperatingSystem").unwrap_or("")),
        _ => true,
    }
}
