//! Instance profiles' roles: one role per profile, as in IAM.

use roto_core::{AwsResult, Value};

use super::store::{self, Kind, Relation};
use super::{limit_exceeded, required, Iam};

impl Iam {
    /// `AddRoleToInstanceProfile`: a profile holds at most one role.
    pub(super) fn add_role_to_instance_profile(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let profile = store::get(
                c,
                account,
                Kind::InstanceProfile,
                required(input, "InstanceProfileName"),
            )?;
            let role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            if !store::children(c, account, Relation::ProfileRole, &profile.name)?.is_empty() {
                return Err(limit_exceeded(
                    "Cannot exceed quota for InstanceSessionsPerInstanceProfile: 1",
                ));
            }
            store::link(c, account, Relation::ProfileRole, &profile.name, &role.name)?;
            Ok(Value::map())
        })
    }

    /// `RemoveRoleFromInstanceProfile`.
    pub(super) fn remove_role_from_instance_profile(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let profile = store::get(
                c,
                account,
                Kind::InstanceProfile,
                required(input, "InstanceProfileName"),
            )?;
            let role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            if !store::unlink(c, account, Relation::ProfileRole, &profile.name, &role.name)? {
                return Err(Kind::Role.not_found(&role.name));
            }
            Ok(Value::map())
        })
    }

    /// `ListInstanceProfilesForRole`.
    pub(super) fn list_instance_profiles_for_role(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            let mut profiles = Vec::new();
            for name in store::parents(c, account, Relation::ProfileRole, &role.name)? {
                profiles.extend(store::find(c, account, Kind::InstanceProfile, &name)?);
            }
            self.entity_page(c, account, "InstanceProfiles", profiles, input)
        })
    }
}
