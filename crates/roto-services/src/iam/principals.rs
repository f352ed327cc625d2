//! Users, groups and roles (and the create/get/list/delete that instance profiles share
//! with them), group membership, tags, service-linked roles and the account summary.

use roto_core::{AwsError, AwsResult, Value};
use rusqlite::Connection;

use super::providers;
use super::store::{self, Entity, Family, Kind, Relation};
use super::{
    delete_conflict, document, invalid_input, limit_exceeded, listing, now, page, path_of,
    path_prefix, required, tag_values, unique_id, wire_document, Iam,
};

/// Which operation an entity is shown by: lists show less than `Get*`.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum View {
    List,
    Create,
    Get,
}

/// The path under which AWS keeps service-linked roles.
const SERVICE_ROLE_PATH: &str = "/aws-service-role/";

/// Role names AWS gives the service-linked roles of well-known services.
const SERVICE_LINKED_NAMES: &[(&str, &str)] = &[
    ("autoscaling.amazonaws.com", "AWSServiceRoleForAutoScaling"),
    ("ecs.amazonaws.com", "AWSServiceRoleForECS"),
    ("eks.amazonaws.com", "AWSServiceRoleForAmazonEKS"),
    (
        "eks-nodegroup.amazonaws.com",
        "AWSServiceRoleForAmazonEKSNodegroup",
    ),
    (
        "elasticloadbalancing.amazonaws.com",
        "AWSServiceRoleForElasticLoadBalancing",
    ),
    (
        "elasticbeanstalk.amazonaws.com",
        "AWSServiceRoleForElasticBeanstalk",
    ),
    ("elasticache.amazonaws.com", "AWSServiceRoleForElastiCache"),
    ("rds.amazonaws.com", "AWSServiceRoleForRDS"),
    (
        "es.amazonaws.com",
        "AWSServiceRoleForAmazonElasticsearchService",
    ),
    (
        "opensearchservice.amazonaws.com",
        "AWSServiceRoleForAmazonOpenSearchService",
    ),
    ("spot.amazonaws.com", "AWSServiceRoleForEC2Spot"),
    ("spotfleet.amazonaws.com", "AWSServiceRoleForEC2SpotFleet"),
    (
        "organizations.amazonaws.com",
        "AWSServiceRoleForOrganizations",
    ),
    ("ssm.amazonaws.com", "AWSServiceRoleForAmazonSSM"),
    ("config.amazonaws.com", "AWSServiceRoleForConfig"),
    ("cloudtrail.amazonaws.com", "AWSServiceRoleForCloudTrail"),
    (
        "guardduty.amazonaws.com",
        "AWSServiceRoleForAmazonGuardDuty",
    ),
    (
        "replicator.lambda.amazonaws.com",
        "AWSServiceRoleForLambdaReplicator",
    ),
    (
        "dynamodb.application-autoscaling.amazonaws.com",
        "AWSServiceRoleForApplicationAutoScaling_DynamoDBTable",
    ),
    (
        "ecs.application-autoscaling.amazonaws.com",
        "AWSServiceRoleForApplicationAutoScaling_ECSService",
    ),
];

/// The role name of a service's service-linked role: AWS's where known, else built from
/// the service's first label the same way (`foo.amazonaws.com` -> `AWSServiceRoleForFoo`).
fn service_linked_name(service: &str) -> String {
    if let Some((_, name)) = SERVICE_LINKED_NAMES.iter().find(|(s, _)| *s == service) {
        return name.to_string();
    }
    let label = service.split('.').next().unwrap_or_default();
    let mut chars = label.chars();
    let capitalised: String = match chars.next() {
        Some(c) => c.to_uppercase().chain(chars).collect(),
        None => String::new(),
    };
    format!("AWSServiceRoleFor{capitalised}")
}

/// The tags of an input (`Tags`), refusing duplicate keys as IAM does.
pub(super) fn input_tags(input: &Value) -> AwsResult<Vec<(String, String)>> {
    let mut tags: Vec<(String, String)> = Vec::new();
    for tag in input
        .get("Tags")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let key = tag.str("Key").unwrap_or_default().to_string();
        if tags.iter().any(|(k, _)| k.eq_ignore_ascii_case(&key)) {
            return Err(invalid_input(
                "Duplicate tag keys found. Please note that Tag keys are case insensitive.",
            ));
        }
        tags.push((key, tag.str("Value").unwrap_or_default().to_string()));
    }
    Ok(tags)
}

/// A new entity of `kind` named by the input's name member, after IAM's name checks.
pub(super) fn new_entity(kind: Kind, input: &Value) -> AwsResult<Entity> {
    let member = kind.name_member();
    let name = required(input, member);
    Ok(Entity {
        kind,
        name: name.to_string(),
        id: unique_id(kind.id_prefix()),
        path: path_of(input, "Path"),
        created: now(),
        tags: input_tags(input)?,
        attrs: serde_json::Map::new(),
    })
}

/// A role's permissions boundary, as `Get*` shows it.
fn boundary_value(e: &Entity) -> Option<Value> {
    e.attr("PermissionsBoundary").map(|arn| {
        Value::map()
            .with("PermissionsBoundaryType", "Policy")
            .with("PermissionsBoundaryArn", arn)
    })
}

impl Iam {
    /// An entity as the wire shows it in `view`.
    pub(super) fn entity_value(
        &self,
        c: &Connection,
        account: &str,
        e: &Entity,
        view: View,
    ) -> AwsResult<Value> {
        if e.kind == Kind::Policy {
            return self.policy_value(c, account, e, view);
        }
        let mut v = Value::map()
            .with("Path", e.path.as_str())
            .with(e.kind.name_member(), e.name.as_str())
            .with(e.kind.id_member(), e.id.as_str())
            .with("Arn", e.arn(account))
            .with("CreateDate", Value::Timestamp(e.created));
        if e.kind == Kind::Role {
            v.insert(
                "AssumeRolePolicyDocument",
                wire_document(e.attr("AssumeRolePolicyDocument").unwrap_or("{}")),
            );
            v.insert(
                "MaxSessionDuration",
                e.attr_int("MaxSessionDuration").unwrap_or(3600),
            );
            if let Some(d) = e.attr("Description") {
                v.insert("Description", d);
            }
            if view == View::Get {
                v.insert("RoleLastUsed", Value::map());
            }
        }
        if e.kind == Kind::InstanceProfile {
            let mut roles = Vec::new();
            for name in store::children(c, account, Relation::ProfileRole, &e.name)? {
                if let Some(role) = store::find(c, account, Kind::Role, &name)? {
                    roles.push(self.entity_value(c, account, &role, View::List)?);
                }
            }
            v.insert("Roles", roles);
        }
        if view != View::List {
            if let Some(b) = boundary_value(e) {
                v.insert("PermissionsBoundary", b);
            }
            if !e.tags.is_empty() {
                v.insert("Tags", tag_values(e));
            }
        }
        Ok(v)
    }

    /// `CreateUser`, `CreateGroup`, `CreateRole`, `CreateInstanceProfile`.
    pub(super) fn create_principal(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        let mut e = new_entity(kind, input)?;
        if let Some(boundary) = input.str("PermissionsBoundary") {
            self.env
                .store
                .with(|c| self.attachable_policy(c, account, boundary))?;
            e.attrs
                .insert("PermissionsBoundary".into(), boundary.into());
        }
        if kind == Kind::Role {
            let document = required(input, "AssumeRolePolicyDocument");
            document::check_trust(document)?;
            e.attrs
                .insert("AssumeRolePolicyDocument".into(), document.into());
            let max = input.int("MaxSessionDuration").unwrap_or(3600);
            e.attrs.insert("MaxSessionDuration".into(), max.into());
            if let Some(d) = input.str("Description") {
                e.attrs.insert("Description".into(), d.into());
            }
        }
        self.create_entity(account, &e)
    }

    /// Stores a new entity and returns it as its `Create*` operation does.
    pub(super) fn create_entity(&self, account: &str, e: &Entity) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            store::insert(c, account, e)?;
            Ok(Value::map().with(
                e.kind.member(),
                self.entity_value(c, account, e, View::Create)?,
            ))
        })
    }

    /// `GetRole`, `GetInstanceProfile`.
    pub(super) fn get_principal(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = store::get(c, account, kind, required(input, kind.name_member()))?;
            Ok(Value::map().with(kind.member(), self.entity_value(c, account, &e, View::Get)?))
        })
    }

    /// `ListUsers`, `ListGroups`, `ListRoles`, `ListInstanceProfiles`.
    pub(super) fn list_principals(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = path_prefix(input);
        self.env.store.with(|c| {
            let all = store::list(c, account, kind, &prefix)?;
            self.entity_page(c, account, kind.list_member(), all, input)
        })
    }

    /// A page of entities, sorted by name, as a list operation returns them.
    pub(super) fn entity_page(
        &self,
        c: &Connection,
        account: &str,
        member: &str,
        entities: Vec<Entity>,
        input: &Value,
    ) -> AwsResult<Value> {
        let (items, next) = page(entities, |e| e.name.to_lowercase(), input)?;
        let values = items
            .iter()
            .map(|e| self.entity_value(c, account, e, View::List))
            .collect::<AwsResult<Vec<_>>>()?;
        Ok(listing(member, values, next))
    }

    /// `UpdateUser`, `UpdateGroup`: a new name and/or path.
    pub(super) fn update_principal(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        let new_name_member = format!("New{}", kind.name_member());
        self.env.store.transaction(|c| {
            let mut e = store::get(c, account, kind, required(input, kind.name_member()))?;
            let old = e.name.clone();
            if input.get("NewPath").is_some() {
                e.path = path_of(input, "NewPath");
            }
            if let Some(new) = input.str(&new_name_member) {
                if !new.eq_ignore_ascii_case(&old) && store::find(c, account, kind, new)?.is_some()
                {
                    return Err(kind.exists(new));
                }
                e.name = new.to_string();
                store::rename_references(c, account, kind, &old, new)?;
            }
            store::update(c, account, &old, &e)?;
            Ok(Value::map())
        })
    }

    /// `DeleteUser`, `DeleteGroup`, `DeleteRole`, `DeleteInstanceProfile`: refused while
    /// anything still hangs off the entity, as IAM refuses it.
    pub(super) fn delete_principal(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let e = store::get(c, account, kind, required(input, kind.name_member()))?;
            if kind == Kind::Role && e.path.starts_with(SERVICE_ROLE_PATH) {
                return Err(AwsError::new(
                    "UnmodifiableEntityException",
                    format!(
                        "Cannot perform the operation on the protected role '{}' - this role is only modifiable by AWS",
                        e.name
                    ),
                ));
            }
            self.check_deletable(c, account, &e)?;
            store::delete(c, account, kind, &e.name)?;
            Ok(Value::map())
        })
    }

    fn check_deletable(&self, c: &Connection, account: &str, e: &Entity) -> AwsResult<()> {
        let conflict = |what: &str| {
            Err(delete_conflict(format!(
                "Cannot delete entity, must {what} first."
            )))
        };
        let name = e.name.as_str();
        if e.kind == Kind::InstanceProfile || e.kind == Kind::Role {
            let profiles = match e.kind {
                Kind::Role => store::parents(c, account, Relation::ProfileRole, name)?,
                _ => store::children(c, account, Relation::ProfileRole, name)?,
            };
            if !profiles.is_empty() {
                return conflict("remove roles from instance profile");
            }
        }
        if e.kind == Kind::Group && !store::children(c, account, Relation::Member, name)?.is_empty()
        {
            return conflict("remove users from group");
        }
        if matches!(e.kind, Kind::User | Kind::Group | Kind::Role) {
            if !store::inline_policies(c, account, e.kind, name)?.is_empty() {
                return conflict("delete policies");
            }
            if !store::children(c, account, Relation::Attached(e.kind), name)?.is_empty() {
                return conflict("detach all policies");
            }
        }
        if e.kind == Kind::User {
            if e.attrs.contains_key("LoginProfile") {
                return conflict("delete login profile");
            }
            if !store::children(c, account, Relation::UserMfa, name)?.is_empty() {
                return conflict("delete MFA device");
            }
            if !store::access_keys(c, account, name)?.is_empty() {
                return conflict("delete access keys");
            }
            for (family, what) in [
                (Family::SigningCertificate, "delete signing certificates"),
                (Family::SshKey, "delete SSH public keys"),
                (
                    Family::ServiceCredential,
                    "delete service specific credentials",
                ),
            ] {
                if !store::credentials(c, account, family, Some(name))?.is_empty() {
                    return conflict(what);
                }
            }
            if !store::parents(c, account, Relation::Member, name)?.is_empty() {
                return conflict("remove user from all groups");
            }
        }
        Ok(())
    }

    /// `GetGroup`: the group and a page of its members.
    pub(super) fn get_group(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let group = store::get(c, account, Kind::Group, required(input, "GroupName"))?;
            let mut users = Vec::new();
            for name in store::children(c, account, Relation::Member, &group.name)? {
                users.extend(store::find(c, account, Kind::User, &name)?);
            }
            let mut out = self.entity_page(c, account, "Users", users, input)?;
            out.insert("Group", self.entity_value(c, account, &group, View::List)?);
            Ok(out)
        })
    }

    /// `AddUserToGroup` (adding a member twice is no error).
    pub(super) fn add_user_to_group(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let group = store::get(c, account, Kind::Group, required(input, "GroupName"))?;
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            store::link(c, account, Relation::Member, &group.name, &user.name)?;
            Ok(Value::map())
        })
    }

    /// `RemoveUserFromGroup`.
    pub(super) fn remove_user_from_group(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let group = store::get(c, account, Kind::Group, required(input, "GroupName"))?;
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            if !store::unlink(c, account, Relation::Member, &group.name, &user.name)? {
                return Err(Kind::User.not_found(&user.name));
            }
            Ok(Value::map())
        })
    }

    /// `ListGroupsForUser`.
    pub(super) fn list_groups_for_user(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let user = store::get(c, account, Kind::User, required(input, "UserName"))?;
            let mut groups = Vec::new();
            for name in store::parents(c, account, Relation::Member, &user.name)? {
                groups.extend(store::find(c, account, Kind::Group, &name)?);
            }
            self.entity_page(c, account, "Groups", groups, input)
        })
    }

    /// `UpdateRole` (description and maximum session duration) and
    /// `UpdateRoleDescription` (which returns the role).
    pub(super) fn update_role(
        &self,
        account: &str,
        input: &Value,
        returns_role: bool,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            if let Some(d) = input.str("Description") {
                role.attrs.insert("Description".into(), d.into());
            }
            if let Some(max) = input.int("MaxSessionDuration") {
                role.attrs.insert("MaxSessionDuration".into(), max.into());
            }
            store::update(c, account, &role.name, &role)?;
            if !returns_role {
                return Ok(Value::map());
            }
            Ok(Value::map().with("Role", self.entity_value(c, account, &role, View::Get)?))
        })
    }

    /// `UpdateAssumeRolePolicy`.
    pub(super) fn update_assume_role_policy(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let document = required(input, "PolicyDocument");
        document::check_trust(document)?;
        self.env.store.transaction(|c| {
            let mut role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            role.attrs
                .insert("AssumeRolePolicyDocument".into(), document.into());
            store::update(c, account, &role.name, &role)?;
            Ok(Value::map())
        })
    }

    /// `CreateServiceLinkedRole`: a role under `/aws-service-role/<service>/` that the
    /// service may assume.
    pub(super) fn create_service_linked_role(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let service = required(input, "AWSServiceName");
        let mut name = service_linked_name(service);
        if let Some(suffix) = input.str("CustomSuffix") {
            name = format!("{name}_{suffix}");
        }
        let trust = serde_json::json!({
            "Version": "2012-10-17",
            "Statement": [{
                "Effect": "Allow",
                "Principal": {"Service": [service]},
                "Action": ["sts:AssumeRole"],
            }],
        });
        let mut role = Entity {
            kind: Kind::Role,
            name: name.clone(),
            id: unique_id(Kind::Role.id_prefix()),
            path: format!("{SERVICE_ROLE_PATH}{service}/"),
            created: now(),
            tags: Vec::new(),
            attrs: serde_json::Map::new(),
        };
        role.attrs
            .insert("AssumeRolePolicyDocument".into(), trust.to_string().into());
        role.attrs.insert("MaxSessionDuration".into(), 3600.into());
        if let Some(d) = input.str("Description") {
            role.attrs.insert("Description".into(), d.into());
        }
        self.env.store.transaction(|c| {
            if store::find(c, account, Kind::Role, &name)?.is_some() {
                return Err(invalid_input(format!(
                    "Service role name {name} has been taken in this account, please try a different suffix."
                )));
            }
            store::insert(c, account, &role)?;
            Ok(Value::map().with("Role", self.entity_value(c, account, &role, View::Create)?))
        })
    }

    /// `DeleteServiceLinkedRole`: deletes at once and names the deletion task.
    pub(super) fn delete_service_linked_role(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let role = store::get(c, account, Kind::Role, required(input, "RoleName"))?;
            if !role.path.starts_with(SERVICE_ROLE_PATH) {
                return Err(validation_not_service_linked(&role.name));
            }
            self.check_deletable(c, account, &role)?;
            store::delete(c, account, Kind::Role, &role.name)?;
            let task = format!(
                "task{}{}/{}",
                role.path,
                role.name,
                roto_core::dispatch::new_request_id()
            );
            Ok(Value::map().with("DeletionTaskId", task))
        })
    }

    /// `PutUserPermissionsBoundary`, `PutRolePermissionsBoundary` (`put`) and
    /// `DeleteUserPermissionsBoundary`, `DeleteRolePermissionsBoundary`.
    pub(super) fn set_boundary(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
        put: bool,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let mut e = store::get(c, account, kind, required(input, kind.name_member()))?;
            if put {
                let arn = required(input, "PermissionsBoundary");
                self.attachable_policy(c, account, arn)?;
                e.attrs.insert("PermissionsBoundary".into(), arn.into());
            } else {
                e.attrs.remove("PermissionsBoundary");
            }
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// The entity a tag operation names: by name, or a policy by ARN.
    fn tag_target(
        &self,
        c: &Connection,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Entity> {
        match kind {
            Kind::Policy => self.local_policy(c, account, required(input, "PolicyArn")),
            Kind::MfaDevice => self.device(c, account, required(input, "SerialNumber")),
            Kind::OidcProvider | Kind::SamlProvider => self.provider(
                c,
                account,
                kind,
                required(input, providers::arn_member(kind)),
            ),
            _ => store::get(c, account, kind, required(input, kind.name_member())),
        }
    }

    /// `TagUser`, `TagRole`, `TagPolicy`, `TagInstanceProfile`: adds or replaces tags.
    pub(super) fn tag(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let tags = input_tags(input)?;
        self.env.store.transaction(|c| {
            let mut e = self.tag_target(c, account, kind, input)?;
            for (key, value) in tags {
                match e
                    .tags
                    .iter_mut()
                    .find(|(k, _)| k.eq_ignore_ascii_case(&key))
                {
                    Some(existing) => *existing = (key, value),
                    None => e.tags.push((key, value)),
                }
            }
            if e.tags.len() > 50 {
                return Err(limit_exceeded(format!(
                    "Cannot exceed quota for TagsPer{}: 50",
                    kind.member()
                )));
            }
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// `UntagUser`, `UntagRole`, `UntagPolicy`, `UntagInstanceProfile`.
    pub(super) fn untag(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let keys: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        self.env.store.transaction(|c| {
            let mut e = self.tag_target(c, account, kind, input)?;
            e.tags
                .retain(|(k, _)| !keys.iter().any(|key| key.eq_ignore_ascii_case(k)));
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// `ListUserTags`, `ListRoleTags`, `ListPolicyTags`, `ListInstanceProfileTags`.
    pub(super) fn list_tags(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = self.tag_target(c, account, kind, input)?;
            let (tags, next) = page(e.tags, |(k, _)| k.to_lowercase(), input)?;
            let values = tags
                .into_iter()
                .map(|(k, v)| Value::map().with("Key", k).with("Value", v))
                .collect();
            Ok(listing("Tags", values, next))
        })
    }

    /// `GetAccountSummary`: the account's entity counts (MFA devices in use, identity
    /// providers included) and IAM's default quotas.
    pub(super) fn get_account_summary(&self, account: &str) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let mut summary = Value::map();
            for (key, kind) in [
                ("Users", Kind::User),
                ("Groups", Kind::Group),
                ("Roles", Kind::Role),
                ("Policies", Kind::Policy),
                ("InstanceProfiles", Kind::InstanceProfile),
                ("MFADevices", Kind::MfaDevice),
                ("ServerCertificates", Kind::ServerCertificate),
            ] {
                summary.insert(key, store::count(c, account, kind)?);
            }
            let providers = store::count(c, account, Kind::OidcProvider)?
                + store::count(c, account, Kind::SamlProvider)?;
            summary.insert("Providers", providers);
            let mut in_use = 0i64;
            for device in store::list(c, account, Kind::MfaDevice, "/")? {
                if !store::parents(c, account, Relation::UserMfa, &device.name)?.is_empty() {
                    in_use += 1;
                }
            }
            summary.insert("MFADevicesInUse", in_use);
            for (key, quota) in QUOTAS {
                summary.insert(*key, *quota);
            }
            summary.insert(
                "GlobalEndpointTokenVersion",
                super::account::token_version(c, account)?,
            );
            Ok(Value::map().with("SummaryMap", summary))
        })
    }
}

/// IAM's default quotas, as `GetAccountSummary` reports them.
const QUOTAS: &[(&str, i64)] = &[
    ("UsersQuota", 5000),
    ("GroupsQuota", 300),
    ("RolesQuota", 1000),
    ("PoliciesQuota", 1500),
    ("InstanceProfilesQuota", 1000),
    ("GroupsPerUserQuota", 10),
    ("AttachedPoliciesPerUserQuota", 10),
    ("AttachedPoliciesPerGroupQuota", 10),
    ("AttachedPoliciesPerRoleQuota", 10),
    ("AccessKeysPerUserQuota", 2),
    ("PolicyVersionsInUseQuota", 10000),
    ("PolicySizeQuota", 6144),
    ("VersionsPerPolicyQuota", 5),
    ("ServerCertificatesQuota", 20),
    ("SigningCertificatesPerUserQuota", 2),
    ("AccountMFAEnabled", 0),
    ("AccountAccessKeysPresent", 0),
    ("AccountSigningCertificatesPresent", 0),
    ("PolicyVersionsInUse", 0),
];

fn validation_not_service_linked(name: &str) -> AwsError {
    super::validation_error(format!(
        "Role {name} is not a service-linked role and cannot be deleted through DeleteServiceLinkedRole."
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn service_linked_role_names_follow_aws() {
        assert_eq!(
            service_linked_name("autoscaling.amazonaws.com"),
            "AWSServiceRoleForAutoScaling"
        );
        assert_eq!(
            service_linked_name("foo.amazonaws.com"),
            "AWSServiceRoleForFoo"
        );
    }

    #[test]
    fn duplicate_tag_keys_are_refused_regardless_of_case() {
        let tags = Value::List(vec![
            Value::map().with("Key", "Env").with("Value", "a"),
            Value::map().with("Key", "env").with("Value", "b"),
        ]);
        let err = input_tags(&Value::map().with("Tags", tags)).unwrap_err();
        assert_eq!(err.code, "InvalidInputException");
    }

    #[test]
    fn new_entities_get_the_root_path_and_a_kind_prefixed_id() {
        let e = new_entity(Kind::Role, &Value::map().with("RoleName", "r")).unwrap();
        assert_eq!(e.path, "/");
        assert!(e.id.starts_with("AROA") && e.id.len() == 21);
    }
}
