//! `GetAccountAuthorizationDetails`: every user, group, role and customer-managed policy
//! of the account with what is attached to each, the snapshot audit tools read.

use roto_core::{AwsResult, Value};
use rusqlite::Connection;

use super::principals::View;
use super::store::{self, Entity, Kind, Relation};
use super::{listing, page, tag_values, wire_document, Iam};

/// The kinds in the order the answer lists them, with their filter names.
const SECTIONS: [(Kind, &str); 4] = [
    (Kind::User, "User"),
    (Kind::Group, "Group"),
    (Kind::Role, "Role"),
    (Kind::Policy, "LocalManagedPolicy"),
];

impl Iam {
    fn inline_details(&self, c: &Connection, account: &str, e: &Entity) -> AwsResult<Vec<Value>> {
        Ok(store::inline_policies(c, account, e.kind, &e.name)?
            .into_iter()
            .map(|(name, document)| {
                Value::map()
                    .with("PolicyName", name)
                    .with("PolicyDocument", wire_document(&document))
            })
            .collect())
    }

    fn attached_details(&self, c: &Connection, account: &str, e: &Entity) -> AwsResult<Vec<Value>> {
        Ok(
            store::children(c, account, Relation::Attached(e.kind), &e.name)?
                .into_iter()
                .map(|arn| {
                    let name = arn.rsplit('/').next().unwrap_or_default().to_string();
                    Value::map().with("PolicyName", name).with("PolicyArn", arn)
                })
                .collect(),
        )
    }

    fn detail(&self, c: &Connection, account: &str, e: &Entity) -> AwsResult<Value> {
        let mut v = self.entity_value(c, account, e, View::Get)?;
        let prefix = match e.kind {
            Kind::User => "User",
            Kind::Group => "Group",
            Kind::Role => "Role",
            _ => {
                let versions = store::policy_versions(c, account, &e.name)?;
                let default = e.attr_int("DefaultVersion");
                let list: Vec<Value> = versions
                    .iter()
                    .map(|pv| {
                        Value::map()
                            .with("Document", wire_document(&pv.document))
                            .with("VersionId", format!("v{}", pv.version))
                            .with("IsDefaultVersion", default == Some(pv.version))
                            .with("CreateDate", Value::Timestamp(pv.created))
                    })
                    .collect();
                v.remove("Tags");
                v.insert("PolicyVersionList", list);
                return Ok(v);
            }
        };
        v.insert(
            format!("{prefix}PolicyList"),
            self.inline_details(c, account, e)?,
        );
        v.insert(
            "AttachedManagedPolicies",
            self.attached_details(c, account, e)?,
        );
        match e.kind {
            Kind::User => {
                let groups = store::parents(c, account, Relation::Member, &e.name)?;
                v.insert(
                    "GroupList",
                    groups.into_iter().map(Value::from).collect::<Vec<_>>(),
                );
                v.insert("Tags", tag_values(e));
            }
            Kind::Role => {
                let mut profiles = Vec::new();
                for name in store::parents(c, account, Relation::ProfileRole, &e.name)? {
                    if let Some(p) = store::find(c, account, Kind::InstanceProfile, &name)? {
                        profiles.push(self.entity_value(c, account, &p, View::List)?);
                    }
                }
                v.insert("InstanceProfileList", profiles);
                v.insert("Tags", tag_values(e));
            }
            _ => {}
        }
        Ok(v)
    }

    /// `GetAccountAuthorizationDetails` (`Filter` picks the sections; pages run across
    /// them in order).
    pub(super) fn get_account_authorization_details(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let filter: Vec<&str> = input
            .get("Filter")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        self.env.store.with(|c| {
            let mut entities = Vec::new();
            for (rank, (kind, name)) in SECTIONS.iter().enumerate() {
                if filter.is_empty() || filter.contains(name) {
                    for e in store::list(c, account, *kind, "/")? {
                        entities.push((rank, e));
                    }
                }
            }
            let (entities, next) = page(
                entities,
                |(rank, e)| format!("{rank}{}", e.name.to_lowercase()),
                input,
            )?;
            let mut out = listing("Policies", Vec::new(), next);
            for (rank, member) in [
                "UserDetailList",
                "GroupDetailList",
                "RoleDetailList",
                "Policies",
            ]
            .iter()
            .enumerate()
            {
                let values = entities
                    .iter()
                    .filter(|(r, _)| *r == rank)
                    .map(|(_, e)| self.detail(c, account, e))
                    .collect::<AwsResult<Vec<_>>>()?;
                out.insert(*member, values);
            }
            Ok(out)
        })
    }
}
