//! Managed policies (with their versions and default version), attachments to users,
//! groups and roles, and inline policies.
//!
//! AWS-managed policies (`arn:aws:iam::aws:policy/...`) are not stored: any such ARN can
//! be attached, and `GetPolicy` describes it from its ARN, so templates that attach
//! `AdministratorAccess` or `service-role/AWSLambdaBasicExecutionRole` work unchanged.

use roto_core::{AwsResult, Value};
use rusqlite::Connection;

use super::principals::{input_tags, View};
use super::store::{self, Entity, Kind, PolicyVersion, Relation};
use super::{
    delete_conflict, document, invalid_input, limit_exceeded, listing, no_such_entity, now, page,
    path_of, path_prefix, required, tag_values, unique_id, wire_document, Iam,
};

/// The kinds a managed policy attaches to.
const HOLDERS: [Kind; 3] = [Kind::Group, Kind::User, Kind::Role];

/// How many versions a managed policy may keep.
const MAX_VERSIONS: usize = 5;

/// How many managed policies one user, group or role may have attached.
const MAX_ATTACHED: usize = 10;

const AWS_POLICY_PREFIX: &str = "arn:aws:iam::aws:policy/";

/// `v3` -> 3.
fn version_number(id: &str) -> Option<i64> {
    id.strip_prefix('v')?.parse().ok().filter(|n| *n > 0)
}

fn version_missing(arn: &str, id: &str) -> roto_core::AwsError {
    no_such_entity(format!(
        "Policy {arn} version {id} does not exist or is not attachable."
    ))
}

/// The path and name of `arn:aws:iam::<owner>:policy<path><name>`, with its owner.
fn parse_policy_arn(arn: &str) -> AwsResult<(&str, &str, &str)> {
    let invalid = || invalid_input(format!("ARN {arn} is not valid."));
    let rest = arn.strip_prefix("arn:").ok_or_else(invalid)?;
    let mut parts = rest.splitn(5, ':');
    let (_partition, service, _region, owner, resource) = (
        parts.next().ok_or_else(invalid)?,
        parts.next().ok_or_else(invalid)?,
        parts.next().ok_or_else(invalid)?,
        parts.next().ok_or_else(invalid)?,
        parts.next().ok_or_else(invalid)?,
    );
    if service != "iam" {
        return Err(invalid());
    }
    let Some(path_and_name) = resource.strip_prefix("policy") else {
        return Err(no_such_entity(format!(
            "Policy {arn} does not exist or is not attachable."
        )));
    };
    let split = path_and_name.rfind('/').ok_or_else(invalid)?;
    let (path, name) = path_and_name.split_at(split + 1);
    if name.is_empty() {
        return Err(invalid());
    }
    Ok((owner, path, name))
}

/// An AWS-managed policy described from its ARN alone.
fn aws_managed(arn: &str) -> AwsResult<Entity> {
    let (_, path, name) = parse_policy_arn(arn)?;
    let digest = md5_upper(arn);
    let mut e = Entity {
        kind: Kind::Policy,
        name: name.to_string(),
        id: format!("ANPA{digest}"),
        path: path.to_string(),
        created: 1_423_000_000_000,
        tags: Vec::new(),
        attrs: serde_json::Map::new(),
    };
    e.attrs.insert("Owner".into(), "aws".into());
    e.attrs.insert("DefaultVersion".into(), 1.into());
    e.attrs.insert("UpdateDate".into(), e.created.into());
    Ok(e)
}

/// 17 stable base32 characters derived from `text` (AWS-managed policy ids).
fn md5_upper(text: &str) -> String {
    use md5::{Digest, Md5};
    const CHARS: &[u8] = b"ABCDEFGHIJKLMNOPQRSTUVWXYZ234567";
    Md5::digest(text.as_bytes())
        .iter()
        .take(17)
        .map(|b| CHARS[usize::from(*b) % CHARS.len()] as char)
        .collect()
}

impl Iam {
    /// The customer-managed policy `arn` names, or "was not found".
    pub(super) fn local_policy(
        &self,
        c: &Connection,
        account: &str,
        arn: &str,
    ) -> AwsResult<Entity> {
        let (owner, _, name) = parse_policy_arn(arn)?;
        let found = match owner == account {
            true => store::find(c, account, Kind::Policy, name)?,
            false => None,
        };
        found
            .filter(|e| e.arn(account) == arn)
            .ok_or_else(|| Kind::Policy.not_found(arn))
    }

    /// Any policy `arn` names: customer-managed, or AWS-managed.
    fn any_policy(&self, c: &Connection, account: &str, arn: &str) -> AwsResult<Entity> {
        if arn.starts_with(AWS_POLICY_PREFIX) {
            return aws_managed(arn);
        }
        self.local_policy(c, account, arn)
    }

    /// The policy an attach or a permissions boundary names, or "not attachable".
    pub(super) fn attachable_policy(
        &self,
        c: &Connection,
        account: &str,
        arn: &str,
    ) -> AwsResult<Entity> {
        self.any_policy(c, account, arn)
            .map_err(|e| match e.code.as_ref() {
                "NoSuchEntityException" => {
                    no_such_entity(format!("Policy {arn} does not exist or is not attachable."))
                }
                _ => e,
            })
    }

    fn attachment_count(&self, c: &Connection, account: &str, arn: &str) -> AwsResult<usize> {
        let mut n = 0;
        for kind in HOLDERS {
            n += store::parents(c, account, Relation::Attached(kind), arn)?.len();
        }
        Ok(n)
    }

    /// A managed policy as the wire shows it.
    pub(super) fn policy_value(
        &self,
        c: &Connection,
        account: &str,
        e: &Entity,
        view: View,
    ) -> AwsResult<Value> {
        let owner = e.attr("Owner").unwrap_or(account);
        let arn = e.arn(owner);
        let mut v = Value::map()
            .with("PolicyName", e.name.as_str())
            .with("PolicyId", e.id.as_str())
            .with("Arn", arn.as_str())
            .with("Path", e.path.as_str())
            .with(
                "DefaultVersionId",
                format!("v{}", e.attr_int("DefaultVersion").unwrap_or(1)),
            )
            .with("AttachmentCount", self.attachment_count(c, account, &arn)?)
            .with(
                "PermissionsBoundaryUsageCount",
                store::boundary_count(c, account, &arn)?,
            )
            .with("IsAttachable", true)
            .with("CreateDate", Value::Timestamp(e.created))
            .with(
                "UpdateDate",
                Value::Timestamp(e.attr_int("UpdateDate").unwrap_or(e.created)),
            );
        if view != View::List {
            if let Some(d) = e.attr("Description") {
                v.insert("Description", d);
            }
            if !e.tags.is_empty() {
                v.insert("Tags", tag_values(e));
            }
        }
        Ok(v)
    }

    /// `CreatePolicy`: the policy and its version `v1`.
    pub(super) fn create_policy(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let name = required(input, "PolicyName");
        let document = required(input, "PolicyDocument");
        document::check_identity(document, true)?;
        let created = now();
        let mut e = Entity {
            kind: Kind::Policy,
            name: name.to_string(),
            id: unique_id(Kind::Policy.id_prefix()),
            path: path_of(input, "Path"),
            created,
            tags: input_tags(input)?,
            attrs: serde_json::Map::new(),
        };
        e.attrs.insert("DefaultVersion".into(), 1.into());
        e.attrs.insert("NextVersion".into(), 2.into());
        e.attrs.insert("UpdateDate".into(), created.into());
        if let Some(d) = input.str("Description") {
            e.attrs.insert("Description".into(), d.into());
        }
        self.env.store.transaction(|c| {
            store::insert(c, account, &e)?;
            let v1 = PolicyVersion {
                version: 1,
                document: document.to_string(),
                created,
            };
            store::add_policy_version(c, account, &e.name, &v1)?;
            Ok(Value::map().with("Policy", self.policy_value(c, account, &e, View::Create)?))
        })
    }

    /// `GetPolicy`.
    pub(super) fn get_policy(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = self.any_policy(c, account, required(input, "PolicyArn"))?;
            Ok(Value::map().with("Policy", self.policy_value(c, account, &e, View::Get)?))
        })
    }

    /// `ListPolicies`: the account's own policies (`Scope` `AWS` lists none).
    pub(super) fn list_policies(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let prefix = path_prefix(input);
        let only_attached = input.bool("OnlyAttached").unwrap_or(false);
        self.env.store.with(|c| {
            let mut policies = Vec::new();
            if input.str("Scope") != Some("AWS") {
                for e in store::list(c, account, Kind::Policy, &prefix)? {
                    if !only_attached || self.attachment_count(c, account, &e.arn(account))? > 0 {
                        policies.push(e);
                    }
                }
            }
            self.entity_page(c, account, "Policies", policies, input)
        })
    }

    /// `DeletePolicy`: refused while attached or while it has other versions than its
    /// default.
    pub(super) fn delete_policy(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let e = self.local_policy(c, account, required(input, "PolicyArn"))?;
            if self.attachment_count(c, account, &e.arn(account))? > 0 {
                return Err(delete_conflict("Cannot delete a policy attached to entities."));
            }
            if store::policy_versions(c, account, &e.name)?.len() > 1 {
                return Err(delete_conflict(
                    "This policy has more than one version. Before you delete a policy, you must delete the policy's versions. The default version is deleted with the policy.",
                ));
            }
            store::delete_policy_versions(c, account, &e.name, None)?;
            store::delete(c, account, Kind::Policy, &e.name)?;
            Ok(Value::map())
        })
    }

    /// `CreatePolicyVersion`: at most five versions, numbered without reuse.
    pub(super) fn create_policy_version(&self, account: &str, input: &Value) -> AwsResult<Value> {
        let document = required(input, "PolicyDocument");
        document::check_identity(document, true)?;
        let set_default = input.bool("SetAsDefault").unwrap_or(false);
        self.env.store.transaction(|c| {
            let mut e = self.local_policy(c, account, required(input, "PolicyArn"))?;
            if store::policy_versions(c, account, &e.name)?.len() >= MAX_VERSIONS {
                return Err(limit_exceeded(
                    "A managed policy can have up to 5 versions. Before you create a new version, you must delete an existing version.",
                ));
            }
            let number = e.attr_int("NextVersion").unwrap_or(2);
            let version = PolicyVersion {
                version: number,
                document: document.to_string(),
                created: now(),
            };
            store::add_policy_version(c, account, &e.name, &version)?;
            e.attrs.insert("NextVersion".into(), (number + 1).into());
            if set_default {
                e.attrs.insert("DefaultVersion".into(), number.into());
                e.attrs.insert("UpdateDate".into(), version.created.into());
            }
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map().with("PolicyVersion", version_value(&version, set_default, false)))
        })
    }

    /// The policy `PolicyArn` names and its version `VersionId`.
    fn find_version(
        &self,
        c: &Connection,
        account: &str,
        input: &Value,
    ) -> AwsResult<(Entity, PolicyVersion)> {
        let arn = required(input, "PolicyArn");
        let id = required(input, "VersionId");
        let e = self.local_policy(c, account, arn)?;
        let number = version_number(id);
        let version = store::policy_versions(c, account, &e.name)?
            .into_iter()
            .find(|v| Some(v.version) == number)
            .ok_or_else(|| version_missing(arn, id))?;
        Ok((e, version))
    }

    /// `GetPolicyVersion`.
    pub(super) fn get_policy_version(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let (e, v) = self.find_version(c, account, input)?;
            let default = e.attr_int("DefaultVersion") == Some(v.version);
            Ok(Value::map().with("PolicyVersion", version_value(&v, default, true)))
        })
    }

    /// `ListPolicyVersions`, newest first.
    pub(super) fn list_policy_versions(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let e = self.local_policy(c, account, required(input, "PolicyArn"))?;
            let default = e.attr_int("DefaultVersion");
            let versions = store::policy_versions(c, account, &e.name)?;
            let (versions, next) =
                page(versions, |v| format!("{:020}", i64::MAX - v.version), input)?;
            let values = versions
                .iter()
                .map(|v| version_value(v, default == Some(v.version), false))
                .collect();
            Ok(listing("Versions", values, next))
        })
    }

    /// `DeletePolicyVersion`: never the default one.
    pub(super) fn delete_policy_version(&self, account: &str, input: &Value) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let (e, v) = self.find_version(c, account, input)?;
            if e.attr_int("DefaultVersion") == Some(v.version) {
                return Err(delete_conflict(
                    "Cannot delete the default version of a policy.",
                ));
            }
            store::delete_policy_versions(c, account, &e.name, Some(v.version))?;
            Ok(Value::map())
        })
    }

    /// `SetDefaultPolicyVersion`.
    pub(super) fn set_default_policy_version(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        self.env.store.transaction(|c| {
            let (mut e, v) = self.find_version(c, account, input)?;
            e.attrs.insert("DefaultVersion".into(), v.version.into());
            e.attrs.insert("UpdateDate".into(), now().into());
            store::update(c, account, &e.name.clone(), &e)?;
            Ok(Value::map())
        })
    }

    /// `AttachUserPolicy`, `AttachGroupPolicy`, `AttachRolePolicy`.
    pub(super) fn attach(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "PolicyArn");
        self.env.store.transaction(|c| {
            let holder = store::get(c, account, kind, required(input, kind.name_member()))?;
            let policy = self.attachable_policy(c, account, arn)?;
            let rel = Relation::Attached(kind);
            let attached = store::children(c, account, rel, &holder.name)?;
            let arn = policy.arn(policy.attr("Owner").unwrap_or(account));
            if !attached.contains(&arn) && attached.len() >= MAX_ATTACHED {
                return Err(limit_exceeded(format!(
                    "Cannot exceed quota for PoliciesPer{}: {MAX_ATTACHED}",
                    kind.member()
                )));
            }
            store::link(c, account, rel, &holder.name, &arn)?;
            Ok(Value::map())
        })
    }

    /// `DetachUserPolicy`, `DetachGroupPolicy`, `DetachRolePolicy`.
    pub(super) fn detach(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let arn = required(input, "PolicyArn");
        self.env.store.transaction(|c| {
            let holder = store::get(c, account, kind, required(input, kind.name_member()))?;
            parse_policy_arn(arn)?;
            if !store::unlink(c, account, Relation::Attached(kind), &holder.name, arn)? {
                return Err(Kind::Policy.not_found(arn));
            }
            Ok(Value::map())
        })
    }

    /// `ListAttachedUserPolicies`, `ListAttachedGroupPolicies`, `ListAttachedRolePolicies`.
    pub(super) fn list_attached(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = path_prefix(input);
        self.env.store.with(|c| {
            let holder = store::get(c, account, kind, required(input, kind.name_member()))?;
            let mut policies = Vec::new();
            for arn in store::children(c, account, Relation::Attached(kind), &holder.name)? {
                if let Ok((_, path, name)) = parse_policy_arn(&arn) {
                    if path.starts_with(&prefix) {
                        policies.push((name.to_string(), arn.clone()));
                    }
                }
            }
            let (policies, next) = page(
                policies,
                |(n, a)| format!("{}\n{a}", n.to_lowercase()),
                input,
            )?;
            let values = policies
                .into_iter()
                .map(|(name, arn)| Value::map().with("PolicyName", name).with("PolicyArn", arn))
                .collect();
            Ok(listing("AttachedPolicies", values, next))
        })
    }

    /// `ListEntitiesForPolicy`: the groups, users and roles a policy is attached to.
    pub(super) fn list_entities_for_policy(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let prefix = path_prefix(input);
        let filter = input.str("EntityFilter");
        self.env.store.with(|c| {
            let policy = self.any_policy(c, account, required(input, "PolicyArn"))?;
            let arn = policy.arn(policy.attr("Owner").unwrap_or(account));
            let mut entities = Vec::new();
            for kind in HOLDERS {
                if filter.is_some_and(|f| f != kind.member()) {
                    continue;
                }
                for name in store::parents(c, account, Relation::Attached(kind), &arn)? {
                    if let Some(e) = store::find(c, account, kind, &name)? {
                        if e.path.starts_with(&prefix) {
                            entities.push(e);
                        }
                    }
                }
            }
            let rank = |k: Kind| HOLDERS.iter().position(|h| *h == k).unwrap_or(0);
            let (entities, next) = page(
                entities,
                |e| format!("{}{}", rank(e.kind), e.name.to_lowercase()),
                input,
            )?;
            let mut out = listing("PolicyGroups", Vec::new(), next);
            for kind in HOLDERS {
                let values: Vec<Value> = entities
                    .iter()
                    .filter(|e| e.kind == kind)
                    .map(|e| {
                        Value::map()
                            .with(kind.name_member(), e.name.as_str())
                            .with(kind.id_member(), e.id.as_str())
                    })
                    .collect();
                out.insert(format!("Policy{}", kind.list_member()), values);
            }
            Ok(out)
        })
    }

    /// `PutUserPolicy`, `PutGroupPolicy`, `PutRolePolicy`.
    pub(super) fn put_inline(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let name = required(input, "PolicyName");
        let document = required(input, "PolicyDocument");
        document::check_identity(document, false)?;
        self.env.store.transaction(|c| {
            let owner = store::get(c, account, kind, required(input, kind.name_member()))?;
            let others: usize = store::inline_policies(c, account, kind, &owner.name)?
                .iter()
                .filter(|(other, _)| !other.eq_ignore_ascii_case(name))
                .map(|(_, d)| document::size(d))
                .sum();
            let (quota, limit) = document::inline_quota(kind);
            document::check_size(others + document::size(document), quota, limit)?;
            store::put_inline(c, account, kind, &owner.name, name, document)?;
            Ok(Value::map())
        })
    }

    fn inline_missing(kind: Kind, name: &str) -> roto_core::AwsError {
        no_such_entity(format!(
            "The {} policy with name {name} cannot be found.",
            kind.as_str()
        ))
    }

    /// `GetUserPolicy`, `GetGroupPolicy`, `GetRolePolicy`.
    pub(super) fn get_inline(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        let name = required(input, "PolicyName");
        self.env.store.with(|c| {
            let owner = store::get(c, account, kind, required(input, kind.name_member()))?;
            let (name, document) = store::get_inline(c, account, kind, &owner.name, name)?
                .ok_or_else(|| Self::inline_missing(kind, name))?;
            Ok(Value::map()
                .with(kind.name_member(), owner.name)
                .with("PolicyName", name)
                .with("PolicyDocument", wire_document(&document)))
        })
    }

    /// `DeleteUserPolicy`, `DeleteGroupPolicy`, `DeleteRolePolicy`.
    pub(super) fn delete_inline(
        &self,
        account: &str,
        kind: Kind,
        input: &Value,
    ) -> AwsResult<Value> {
        let name = required(input, "PolicyName");
        self.env.store.transaction(|c| {
            let owner = store::get(c, account, kind, required(input, kind.name_member()))?;
            if !store::delete_inline(c, account, kind, &owner.name, name)? {
                return Err(Self::inline_missing(kind, name));
            }
            Ok(Value::map())
        })
    }

    /// `ListUserPolicies`, `ListGroupPolicies`, `ListRolePolicies`: the inline policy names.
    pub(super) fn list_inline(&self, account: &str, kind: Kind, input: &Value) -> AwsResult<Value> {
        self.env.store.with(|c| {
            let owner = store::get(c, account, kind, required(input, kind.name_member()))?;
            let names: Vec<String> = store::inline_policies(c, account, kind, &owner.name)?
                .into_iter()
                .map(|(name, _)| name)
                .collect();
            let (names, next) = page(names, |n| n.to_lowercase(), input)?;
            Ok(listing(
                "PolicyNames",
                names.into_iter().map(Value::from).collect(),
                next,
            ))
        })
    }
}

/// A policy version as the wire shows it (`Document` only where `GetPolicyVersion` has it).
fn version_value(v: &PolicyVersion, default: bool, with_document: bool) -> Value {
    let mut out = Value::map()
        .with("VersionId", format!("v{}", v.version))
        .with("IsDefaultVersion", default)
        .with("CreateDate", Value::Timestamp(v.created));
    if with_document {
        out.insert("Document", wire_document(&v.document));
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn policy_arns_split_into_owner_path_and_name() {
        assert_eq!(
            parse_policy_arn("arn:aws:iam::123456789012:policy/team/app").unwrap(),
            ("123456789012", "/team/", "app")
        );
        assert_eq!(
            parse_policy_arn("arn:aws:iam::aws:policy/AdministratorAccess").unwrap(),
            ("aws", "/", "AdministratorAccess")
        );
        assert_eq!(
            parse_policy_arn("nope").unwrap_err().code,
            "InvalidInputException"
        );
    }

    #[test]
    fn aws_managed_policies_have_stable_ids() {
        let arn = "arn:aws:iam::aws:policy/service-role/AWSLambdaBasicExecutionRole";
        let a = aws_managed(arn).unwrap();
        assert_eq!(a.id, aws_managed(arn).unwrap().id);
        assert_eq!(a.path, "/service-role/");
        assert_eq!(a.arn("aws"), arn);
    }

    #[test]
    fn version_ids_parse_only_positive_numbers() {
        assert_eq!(version_number("v12"), Some(12));
        assert_eq!(version_number("v0"), None);
        assert_eq!(version_number("12"), None);
    }
}
