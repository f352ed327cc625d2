//! IAM's tables and the typed reads and writes over them.
//!
//! Every named IAM resource (user, group, role, instance profile, managed policy) is a row
//! of `iam_entities`, keyed by account, kind and name; names are unique per account and
//! kind regardless of case, as in IAM. What differs per kind (a role's trust policy, a
//! policy's versions counter) sits in the `attrs` JSON column. Relations between entities
//! (group members, attached policies, instance profile roles) are rows of `iam_links`.
//! A user's SSH public keys, signing certificates and service-specific credentials are
//! rows of `iam_credentials`, one family each, with their details in `attrs`.

use roto_core::store::Cached;
use roto_core::{AwsError, AwsResult};
use rusqlite::{params, Connection, OptionalExtension};
use serde_json::Value as Json;

use super::{already_exists, no_such_entity};

pub(super) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS iam_entities (
    account TEXT NOT NULL,
    kind TEXT NOT NULL,
    name TEXT NOT NULL COLLATE NOCASE,
    id TEXT NOT NULL,
    path TEXT NOT NULL,
    created INTEGER NOT NULL,
    tags TEXT NOT NULL,
    attrs TEXT NOT NULL,
    PRIMARY KEY (account, kind, name)
);
CREATE TABLE IF NOT EXISTS iam_links (
    account TEXT NOT NULL,
    relation TEXT NOT NULL,
    parent TEXT NOT NULL COLLATE NOCASE,
    child TEXT NOT NULL COLLATE NOCASE,
    PRIMARY KEY (account, relation, parent, child)
);
CREATE INDEX IF NOT EXISTS iam_links_child ON iam_links (account, relation, child);
CREATE TABLE IF NOT EXISTS iam_inline_policies (
    account TEXT NOT NULL,
    kind TEXT NOT NULL,
    owner TEXT NOT NULL COLLATE NOCASE,
    name TEXT NOT NULL COLLATE NOCASE,
    document TEXT NOT NULL,
    PRIMARY KEY (account, kind, owner, name)
);
CREATE TABLE IF NOT EXISTS iam_policy_versions (
    account TEXT NOT NULL,
    policy TEXT NOT NULL COLLATE NOCASE,
    version INTEGER NOT NULL,
    document TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, policy, version)
);
CREATE TABLE IF NOT EXISTS iam_access_keys (
    access_key TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    user TEXT NOT NULL COLLATE NOCASE,
    status TEXT NOT NULL,
    created INTEGER NOT NULL,
    secret TEXT
);
CREATE INDEX IF NOT EXISTS iam_access_keys_user ON iam_access_keys (account, user);
CREATE TABLE IF NOT EXISTS iam_credentials (
    account TEXT NOT NULL,
    family TEXT NOT NULL,
    id TEXT NOT NULL,
    user TEXT NOT NULL COLLATE NOCASE,
    status TEXT NOT NULL,
    created INTEGER NOT NULL,
    attrs TEXT NOT NULL,
    PRIMARY KEY (account, family, id)
);
CREATE INDEX IF NOT EXISTS iam_credentials_user ON iam_credentials (account, family, user);
CREATE TABLE IF NOT EXISTS iam_account_settings (
    account TEXT NOT NULL,
    key TEXT NOT NULL,
    value TEXT NOT NULL,
    PRIMARY KEY (account, key)
);
";

/// The kinds of named IAM resources.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Kind {
    User,
    Group,
    Role,
    InstanceProfile,
    Policy,
    OidcProvider,
    SamlProvider,
    ServerCertificate,
    MfaDevice,
}

impl Kind {
    /// The kind's name in the store and in ARNs (`arn:aws:iam::1:instance-profile/x`).
    pub fn as_str(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::Group => "group",
            Kind::Role => "role",
            Kind::InstanceProfile => "instance-profile",
            Kind::Policy => "policy",
            Kind::OidcProvider => "oidc-provider",
            Kind::SamlProvider => "saml-provider",
            Kind::ServerCertificate => "server-certificate",
            Kind::MfaDevice => "mfa",
        }
    }

    /// The prefix of the kind's unique ids.
    pub fn id_prefix(self) -> &'static str {
        match self {
            Kind::User => "AIDA",
            Kind::Group => "AGPA",
            Kind::Role => "AROA",
            Kind::InstanceProfile => "AIPA",
            Kind::Policy => "ANPA",
            Kind::OidcProvider | Kind::SamlProvider => "",
            Kind::ServerCertificate => "ASCA",
            Kind::MfaDevice => "",
        }
    }

    /// The input member naming an entity of this kind.
    pub fn name_member(self) -> &'static str {
        match self {
            Kind::User => "UserName",
            Kind::Group => "GroupName",
            Kind::Role => "RoleName",
            Kind::InstanceProfile => "InstanceProfileName",
            Kind::Policy => "PolicyName",
            Kind::OidcProvider => "Url",
            Kind::SamlProvider => "Name",
            Kind::ServerCertificate => "ServerCertificateName",
            Kind::MfaDevice => "VirtualMFADeviceName",
        }
    }

    /// The output member holding one entity of this kind (`User`, `InstanceProfile`).
    pub fn member(self) -> &'static str {
        match self {
            Kind::User => "User",
            Kind::Group => "Group",
            Kind::Role => "Role",
            Kind::InstanceProfile => "InstanceProfile",
            Kind::Policy => "Policy",
            Kind::OidcProvider => "OpenIDConnectProvider",
            Kind::SamlProvider => "SAMLProvider",
            Kind::ServerCertificate => "ServerCertificate",
            Kind::MfaDevice => "VirtualMFADevice",
        }
    }

    /// The output member holding a list of this kind (`Users`, `Policies`).
    pub fn list_member(self) -> &'static str {
        match self {
            Kind::User => "Users",
            Kind::Group => "Groups",
            Kind::Role => "Roles",
            Kind::InstanceProfile => "InstanceProfiles",
            Kind::Policy => "Policies",
            Kind::OidcProvider => "OpenIDConnectProviderList",
            Kind::SamlProvider => "SAMLProviderList",
            Kind::ServerCertificate => "ServerCertificateMetadataList",
            Kind::MfaDevice => "VirtualMFADevices",
        }
    }

    /// The output member holding an entity's unique id (`UserId`).
    pub fn id_member(self) -> &'static str {
        match self {
            Kind::User => "UserId",
            Kind::Group => "GroupId",
            Kind::Role => "RoleId",
            Kind::InstanceProfile => "InstanceProfileId",
            Kind::Policy => "PolicyId",
            Kind::OidcProvider | Kind::SamlProvider => "",
            Kind::ServerCertificate => "ServerCertificateId",
            Kind::MfaDevice => "SerialNumber",
        }
    }

    /// IAM's message for a name that is not there.
    pub fn not_found(self, name: &str) -> AwsError {
        no_such_entity(match self {
            Kind::InstanceProfile => format!("Instance Profile {name} cannot be found."),
            Kind::Policy => format!("Policy {name} was not found."),
            Kind::OidcProvider => format!("OpenIDConnect Provider not found for arn {name}"),
            Kind::SamlProvider => format!("SAMLProvider {name} does not exist."),
            Kind::ServerCertificate => {
                format!("The Server Certificate with name {name} cannot be found.")
            }
            Kind::MfaDevice => format!("VirtualMFADevice with serial number {name} doesn't exist."),
            other => format!("The {} with name {name} cannot be found.", other.as_str()),
        })
    }

    /// IAM's message for a name that is taken.
    pub fn exists(self, name: &str) -> AwsError {
        already_exists(match self {
            Kind::User => format!("User with name {name} already exists."),
            Kind::Group => format!("Group with name {name} already exists."),
            Kind::Role => format!("Role with name {name} already exists."),
            Kind::InstanceProfile => format!("Instance Profile {name} already exists."),
            Kind::Policy => {
                format!("A policy called {name} already exists. Duplicate names are not allowed.")
            }
            Kind::OidcProvider => format!("Provider with url https://{name} already exists."),
            Kind::SamlProvider => format!("SAMLProvider {name} already exists."),
            Kind::ServerCertificate => {
                format!("The Server Certificate with name {name} already exists.")
            }
            Kind::MfaDevice => "MFADevice entity at the same path and name already exists.".into(),
        })
    }
}

/// One named IAM resource.
#[derive(Debug, Clone)]
pub(super) struct Entity {
    pub kind: Kind,
    pub name: String,
    pub id: String,
    pub path: String,
    pub created: i64,
    pub tags: Vec<(String, String)>,
    pub attrs: serde_json::Map<String, Json>,
}

impl Entity {
    /// `arn:aws:iam::<account>:<kind><path><name>`.
    pub fn arn(&self, account: &str) -> String {
        format!(
            "arn:aws:iam::{account}:{}{}{}",
            self.kind.as_str(),
            self.path,
            self.name
        )
    }

    /// A string attribute.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Json::as_str)
    }

    /// An integer attribute.
    pub fn attr_int(&self, key: &str) -> Option<i64> {
        self.attrs.get(key).and_then(Json::as_i64)
    }
}

/// The relations between entities, each from a parent kind to a child kind.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Relation {
    /// Group -> user.
    Member,
    /// User, group or role (by kind) -> managed policy ARN.
    Attached(Kind),
    /// Instance profile -> role.
    ProfileRole,
    /// User -> the MFA device (by name) enabled for it.
    UserMfa,
}

impl Relation {
    fn as_str(self) -> &'static str {
        match self {
            Relation::Member => "member",
            Relation::Attached(Kind::User) => "user-policy",
            Relation::Attached(Kind::Group) => "group-policy",
            Relation::Attached(_) => "role-policy",
            Relation::ProfileRole => "profile-role",
            Relation::UserMfa => "user-mfa",
        }
    }
}

const COLUMNS: &str = "kind, name, id, path, created, tags, attrs";

fn kind_of(text: &str) -> Kind {
    match text {
        "user" => Kind::User,
        "group" => Kind::Group,
        "role" => Kind::Role,
        "instance-profile" => Kind::InstanceProfile,
        "oidc-provider" => Kind::OidcProvider,
        "saml-provider" => Kind::SamlProvider,
        "server-certificate" => Kind::ServerCertificate,
        "mfa" => Kind::MfaDevice,
        _ => Kind::Policy,
    }
}

fn row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Entity> {
    let kind: String = r.get(0)?;
    let tags: String = r.get(5)?;
    let attrs: String = r.get(6)?;
    let tags: Vec<(String, String)> = serde_json::from_str(&tags).unwrap_or_default();
    let attrs = match serde_json::from_str(&attrs) {
        Ok(Json::Object(m)) => m,
        _ => serde_json::Map::new(),
    };
    Ok(Entity {
        kind: kind_of(&kind),
        name: r.get(1)?,
        id: r.get(2)?,
        path: r.get(3)?,
        created: r.get(4)?,
        tags,
        attrs,
    })
}

fn encode_tags(tags: &[(String, String)]) -> String {
    serde_json::to_string(tags).unwrap_or_else(|_| "[]".into())
}

/// Stores a new entity, or IAM's "already exists" when the name is taken.
pub(super) fn insert(c: &Connection, account: &str, e: &Entity) -> AwsResult<()> {
    let inserted = c.execute_cached(
        "INSERT OR IGNORE INTO iam_entities (account, kind, name, id, path, created, tags, attrs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8)",
        params![
            account,
            e.kind.as_str(),
            e.name,
            e.id,
            e.path,
            e.created,
            encode_tags(&e.tags),
            Json::Object(e.attrs.clone()).to_string()
        ],
    )?;
    if inserted == 0 {
        return Err(e.kind.exists(&e.name));
    }
    Ok(())
}

/// The entity of `kind` named `name` (in any case), if there is one.
pub(super) fn find(
    c: &Connection,
    account: &str,
    kind: Kind,
    name: &str,
) -> AwsResult<Option<Entity>> {
    c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM iam_entities WHERE account = ?1 AND kind = ?2 AND name = ?3"
    ))?
    .query_row(params![account, kind.as_str(), name], row)
    .optional()
    .map_err(AwsError::from)
}

/// The entity of `kind` named `name`, or IAM's "cannot be found".
pub(super) fn get(c: &Connection, account: &str, kind: Kind, name: &str) -> AwsResult<Entity> {
    find(c, account, kind, name)?.ok_or_else(|| kind.not_found(name))
}

/// Every entity of `kind` whose path starts with `prefix`.
pub(super) fn list(
    c: &Connection,
    account: &str,
    kind: Kind,
    prefix: &str,
) -> AwsResult<Vec<Entity>> {
    let mut stmt = c.prepare_cached(&format!(
        "SELECT {COLUMNS} FROM iam_entities WHERE account = ?1 AND kind = ?2
         AND substr(path, 1, length(?3)) = ?3"
    ))?;
    let rows = stmt.query_map(params![account, kind.as_str(), prefix], row)?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(AwsError::from)
}

/// How many entities of `kind` the account has.
pub(super) fn count(c: &Connection, account: &str, kind: Kind) -> AwsResult<i64> {
    c.query_row_cached(
        "SELECT count(*) FROM iam_entities WHERE account = ?1 AND kind = ?2",
        params![account, kind.as_str()],
        |r| r.get(0),
    )
    .map_err(AwsError::from)
}

/// How many users and roles have `arn` as their permissions boundary.
pub(super) fn boundary_count(c: &Connection, account: &str, arn: &str) -> AwsResult<i64> {
    c.prepare_cached(
        "SELECT count(*) FROM iam_entities WHERE account = ?1 AND kind IN ('user', 'role')
         AND json_extract(attrs, '$.PermissionsBoundary') = ?2",
    )?
    .query_row(params![account, arn], |r| r.get(0))
    .map_err(AwsError::from)
}

/// Writes back an entity's path, tags and attributes (its name is `old_name`, renamed
/// to `e.name`).
pub(super) fn update(c: &Connection, account: &str, old_name: &str, e: &Entity) -> AwsResult<()> {
    c.execute_cached(
        "UPDATE iam_entities SET name = ?4, path = ?5, tags = ?6, attrs = ?7
         WHERE account = ?1 AND kind = ?2 AND name = ?3",
        params![
            account,
            e.kind.as_str(),
            old_name,
            e.name,
            e.path,
            encode_tags(&e.tags),
            Json::Object(e.attrs.clone()).to_string()
        ],
    )?;
    Ok(())
}

/// Removes an entity row.
pub(super) fn delete(c: &Connection, account: &str, kind: Kind, name: &str) -> AwsResult<()> {
    c.execute_cached(
        "DELETE FROM iam_entities WHERE account = ?1 AND kind = ?2 AND name = ?3",
        params![account, kind.as_str(), name],
    )?;
    Ok(())
}

/// Adds a relation; `false` when it was already there.
pub(super) fn link(
    c: &Connection,
    account: &str,
    rel: Relation,
    parent: &str,
    child: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "INSERT OR IGNORE INTO iam_links (account, relation, parent, child) VALUES (?1, ?2, ?3, ?4)",
        params![account, rel.as_str(), parent, child],
    )?;
    Ok(n > 0)
}

/// Removes a relation; `false` when it was not there.
pub(super) fn unlink(
    c: &Connection,
    account: &str,
    rel: Relation,
    parent: &str,
    child: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "DELETE FROM iam_links WHERE account = ?1 AND relation = ?2 AND parent = ?3 AND child = ?4",
        params![account, rel.as_str(), parent, child],
    )?;
    Ok(n > 0)
}

/// The children of `parent` under `rel`.
pub(super) fn children(
    c: &Connection,
    account: &str,
    rel: Relation,
    parent: &str,
) -> AwsResult<Vec<String>> {
    linked(
        c,
        "SELECT child FROM iam_links WHERE account = ?1 AND relation = ?2 AND parent = ?3",
        account,
        rel,
        parent,
    )
}

/// The parents of `child` under `rel`.
pub(super) fn parents(
    c: &Connection,
    account: &str,
    rel: Relation,
    child: &str,
) -> AwsResult<Vec<String>> {
    linked(
        c,
        "SELECT parent FROM iam_links WHERE account = ?1 AND relation = ?2 AND child = ?3",
        account,
        rel,
        child,
    )
}

/// The other ends of the links `sql` selects from one end.
fn linked(
    c: &Connection,
    sql: &str,
    account: &str,
    rel: Relation,
    end: &str,
) -> AwsResult<Vec<String>> {
    let mut stmt = c.prepare_cached(sql)?;
    let rows = stmt.query_map(params![account, rel.as_str(), end], |r| r.get(0))?;
    rows.collect::<rusqlite::Result<Vec<String>>>()
        .map_err(AwsError::from)
}

/// Renames `old` to `new` in every relation where an entity of `kind` takes part, and in
/// the inline policies and access keys it owns.
pub(super) fn rename_references(
    c: &Connection,
    account: &str,
    kind: Kind,
    old: &str,
    new: &str,
) -> AwsResult<()> {
    let (as_parent, as_child): (&[Relation], &[Relation]) = match kind {
        Kind::User => (
            &[Relation::Attached(Kind::User), Relation::UserMfa],
            &[Relation::Member],
        ),
        Kind::Group => (&[Relation::Attached(Kind::Group), Relation::Member], &[]),
        _ => (&[], &[]),
    };
    for rel in as_parent {
        c.execute_cached(
            "UPDATE iam_links SET parent = ?4 WHERE account = ?1 AND relation = ?2 AND parent = ?3",
            params![account, rel.as_str(), old, new],
        )?;
    }
    for rel in as_child {
        c.execute_cached(
            "UPDATE iam_links SET child = ?4 WHERE account = ?1 AND relation = ?2 AND child = ?3",
            params![account, rel.as_str(), old, new],
        )?;
    }
    c.execute_cached(
        "UPDATE iam_inline_policies SET owner = ?4 WHERE account = ?1 AND kind = ?2 AND owner = ?3",
        params![account, kind.as_str(), old, new],
    )?;
    if kind == Kind::User {
        c.execute_cached(
            "UPDATE iam_access_keys SET user = ?3 WHERE account = ?1 AND user = ?2",
            params![account, old, new],
        )?;
        c.execute_cached(
            "UPDATE iam_credentials SET user = ?3 WHERE account = ?1 AND user = ?2",
            params![account, old, new],
        )?;
    }
    Ok(())
}

/// The names of the inline policies of an entity, with their documents.
pub(super) fn inline_policies(
    c: &Connection,
    account: &str,
    kind: Kind,
    owner: &str,
) -> AwsResult<Vec<(String, String)>> {
    let mut stmt = c.prepare_cached(
        "SELECT name, document FROM iam_inline_policies WHERE account = ?1 AND kind = ?2 AND owner = ?3",
    )?;
    let rows = stmt.query_map(params![account, kind.as_str(), owner], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(AwsError::from)
}

/// The access key ids of a user, with their status and creation time.
pub(super) fn access_keys(
    c: &Connection,
    account: &str,
    user: &str,
) -> AwsResult<Vec<(String, String, i64)>> {
    let mut stmt = c.prepare_cached(
        "SELECT access_key, status, created FROM iam_access_keys WHERE account = ?1 AND user = ?2",
    )?;
    let rows = stmt.query_map(params![account, user], |r| {
        Ok((r.get(0)?, r.get(1)?, r.get(2)?))
    })?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(AwsError::from)
}

/// The user an access key belongs to and its status.
pub(super) fn access_key_owner(
    c: &Connection,
    account: &str,
    key: &str,
) -> AwsResult<Option<(String, String)>> {
    c.prepare_cached(
        "SELECT user, status FROM iam_access_keys WHERE account = ?1 AND access_key = ?2",
    )?
    .query_row(params![account, key], |r| Ok((r.get(0)?, r.get(1)?)))
    .optional()
    .map_err(AwsError::from)
}

/// Creates or replaces an inline policy.
pub(super) fn put_inline(
    c: &Connection,
    account: &str,
    kind: Kind,
    owner: &str,
    name: &str,
    document: &str,
) -> AwsResult<()> {
    c.execute_cached(
        "INSERT OR REPLACE INTO iam_inline_policies (account, kind, owner, name, document)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![account, kind.as_str(), owner, name, document],
    )?;
    Ok(())
}

/// An inline policy's stored name and document.
pub(super) fn get_inline(
    c: &Connection,
    account: &str,
    kind: Kind,
    owner: &str,
    name: &str,
) -> AwsResult<Option<(String, String)>> {
    c.prepare_cached(
        "SELECT name, document FROM iam_inline_policies
         WHERE account = ?1 AND kind = ?2 AND owner = ?3 AND name = ?4",
    )?
    .query_row(params![account, kind.as_str(), owner, name], |r| {
        Ok((r.get(0)?, r.get(1)?))
    })
    .optional()
    .map_err(AwsError::from)
}

/// Deletes an inline policy; `false` when there was none.
pub(super) fn delete_inline(
    c: &Connection,
    account: &str,
    kind: Kind,
    owner: &str,
    name: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "DELETE FROM iam_inline_policies WHERE account = ?1 AND kind = ?2 AND owner = ?3 AND name = ?4",
        params![account, kind.as_str(), owner, name],
    )?;
    Ok(n > 0)
}

/// One stored version of a managed policy.
pub(super) struct PolicyVersion {
    pub version: i64,
    pub document: String,
    pub created: i64,
}

/// Every version of a managed policy.
pub(super) fn policy_versions(
    c: &Connection,
    account: &str,
    policy: &str,
) -> AwsResult<Vec<PolicyVersion>> {
    let mut stmt = c.prepare_cached(
        "SELECT version, document, created FROM iam_policy_versions
         WHERE account = ?1 AND policy = ?2 ORDER BY version",
    )?;
    let rows = stmt.query_map(params![account, policy], |r| {
        Ok(PolicyVersion {
            version: r.get(0)?,
            document: r.get(1)?,
            created: r.get(2)?,
        })
    })?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(AwsError::from)
}

/// Stores a version of a managed policy.
pub(super) fn add_policy_version(
    c: &Connection,
    account: &str,
    policy: &str,
    v: &PolicyVersion,
) -> AwsResult<()> {
    c.execute_cached(
        "INSERT INTO iam_policy_versions (account, policy, version, document, created)
         VALUES (?1, ?2, ?3, ?4, ?5)",
        params![account, policy, v.version, v.document, v.created],
    )?;
    Ok(())
}

/// Deletes one version of a managed policy, or all of them (`version` `None`).
pub(super) fn delete_policy_versions(
    c: &Connection,
    account: &str,
    policy: &str,
    version: Option<i64>,
) -> AwsResult<()> {
    c.execute_cached(
        "DELETE FROM iam_policy_versions WHERE account = ?1 AND policy = ?2
         AND (?3 IS NULL OR version = ?3)",
        params![account, policy, version],
    )?;
    Ok(())
}

/// Stores a new access key, and its secret, for a user.
pub(super) fn add_access_key(
    c: &Connection,
    account: &str,
    user: &str,
    (key, secret): (&str, &str),
    created: i64,
) -> AwsResult<()> {
    c.execute_cached(
        "INSERT INTO iam_access_keys (access_key, account, user, status, created, secret)
         VALUES (?1, ?2, ?3, 'Active', ?4, ?5)",
        params![key, account, user, created, secret],
    )?;
    Ok(())
}

/// The secret of an active access key (keys stored before secrets were kept have none).
pub(super) fn active_secret(c: &Connection, key: &str) -> AwsResult<Option<String>> {
    c.prepare_cached(
        "SELECT secret FROM iam_access_keys WHERE access_key = ?1 AND status = 'Active'",
    )?
    .query_row([key], |r| r.get::<_, Option<String>>(0))
    .optional()
    .map(Option::flatten)
    .map_err(AwsError::from)
}

/// Sets a user's access key's status; `false` when the user has no such key.
pub(super) fn set_access_key_status(
    c: &Connection,
    account: &str,
    user: &str,
    key: &str,
    status: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "UPDATE iam_access_keys SET status = ?4 WHERE account = ?1 AND user = ?2 AND access_key = ?3",
        params![account, user, key, status],
    )?;
    Ok(n > 0)
}

/// Deletes a user's access key; `false` when the user has no such key.
pub(super) fn delete_access_key(
    c: &Connection,
    account: &str,
    user: &str,
    key: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "DELETE FROM iam_access_keys WHERE account = ?1 AND user = ?2 AND access_key = ?3",
        params![account, user, key],
    )?;
    Ok(n > 0)
}

/// An account-wide setting (`alias`, `password-policy`).
pub(super) fn setting(c: &Connection, account: &str, key: &str) -> AwsResult<Option<String>> {
    c.prepare_cached("SELECT value FROM iam_account_settings WHERE account = ?1 AND key = ?2")?
        .query_row(params![account, key], |r| r.get(0))
        .optional()
        .map_err(AwsError::from)
}

/// Sets an account-wide setting.
pub(super) fn put_setting(c: &Connection, account: &str, key: &str, value: &str) -> AwsResult<()> {
    c.execute_cached(
        "INSERT OR REPLACE INTO iam_account_settings (account, key, value) VALUES (?1, ?2, ?3)",
        params![account, key, value],
    )?;
    Ok(())
}

/// Removes an account-wide setting.
pub(super) fn delete_setting(c: &Connection, account: &str, key: &str) -> AwsResult<()> {
    c.execute_cached(
        "DELETE FROM iam_account_settings WHERE account = ?1 AND key = ?2",
        params![account, key],
    )?;
    Ok(())
}

/// The families of credentials a user holds besides access keys.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) enum Family {
    SshKey,
    SigningCertificate,
    ServiceCredential,
}

impl Family {
    fn as_str(self) -> &'static str {
        match self {
            Family::SshKey => "ssh-key",
            Family::SigningCertificate => "signing-certificate",
            Family::ServiceCredential => "service-credential",
        }
    }
}

/// One SSH public key, signing certificate or service-specific credential of a user.
#[derive(Debug, Clone)]
pub(super) struct Credential {
    pub id: String,
    pub user: String,
    pub status: String,
    pub created: i64,
    pub attrs: serde_json::Map<String, Json>,
}

impl Credential {
    /// A string attribute.
    pub fn attr(&self, key: &str) -> Option<&str> {
        self.attrs.get(key).and_then(Json::as_str)
    }
}

fn credential_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Credential> {
    let attrs: String = r.get(4)?;
    Ok(Credential {
        id: r.get(0)?,
        user: r.get(1)?,
        status: r.get(2)?,
        created: r.get(3)?,
        attrs: match serde_json::from_str(&attrs) {
            Ok(Json::Object(m)) => m,
            _ => serde_json::Map::new(),
        },
    })
}

/// Stores a new credential, or writes back an existing one's status and attributes.
pub(super) fn put_credential(
    c: &Connection,
    account: &str,
    family: Family,
    cred: &Credential,
) -> AwsResult<()> {
    c.execute_cached(
        "INSERT OR REPLACE INTO iam_credentials (account, family, id, user, status, created, attrs)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7)",
        params![
            account,
            family.as_str(),
            cred.id,
            cred.user,
            cred.status,
            cred.created,
            Json::Object(cred.attrs.clone()).to_string()
        ],
    )?;
    Ok(())
}

/// The credentials of `family` in the account, of one user or (`None`) of every user,
/// oldest first.
pub(super) fn credentials(
    c: &Connection,
    account: &str,
    family: Family,
    user: Option<&str>,
) -> AwsResult<Vec<Credential>> {
    let mut stmt = c.prepare_cached(
        "SELECT id, user, status, created, attrs FROM iam_credentials
         WHERE account = ?1 AND family = ?2 AND (?3 IS NULL OR user = ?3) ORDER BY created, id",
    )?;
    let rows = stmt.query_map(params![account, family.as_str(), user], credential_row)?;
    rows.collect::<rusqlite::Result<Vec<_>>>()
        .map_err(AwsError::from)
}

/// A user's credential of `family` with id `id`, if there is one.
pub(super) fn credential(
    c: &Connection,
    account: &str,
    family: Family,
    user: &str,
    id: &str,
) -> AwsResult<Option<Credential>> {
    c.prepare_cached(
        "SELECT id, user, status, created, attrs FROM iam_credentials
         WHERE account = ?1 AND family = ?2 AND user = ?3 AND id = ?4",
    )?
    .query_row(params![account, family.as_str(), user, id], credential_row)
    .optional()
    .map_err(AwsError::from)
}

/// Deletes a user's credential; `false` when the user has no such credential.
pub(super) fn delete_credential(
    c: &Connection,
    account: &str,
    family: Family,
    user: &str,
    id: &str,
) -> AwsResult<bool> {
    let n = c.execute_cached(
        "DELETE FROM iam_credentials WHERE account = ?1 AND family = ?2 AND user = ?3 AND id = ?4",
        params![account, family.as_str(), user, id],
    )?;
    Ok(n > 0)
}
