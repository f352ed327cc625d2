//! IAM's side of `--enforce-iam`: the IAM user behind an access key IAM issued, and the
//! decision on a call, made by the policy simulator's evaluator (`evaluate.rs`) over the
//! caller's identity policies (its own and its groups', or its role's), its permissions
//! boundary, a session policy and the resource's policy (for `sts:AssumeRole`, the role's
//! trust policy, which IAM keeps).
//!
//! A principal's parsed policies are cached until IAM's next write, and resource policies
//! by their text, so a request pays for an evaluation, not for reading and parsing.

use std::borrow::Cow;
use std::collections::HashMap;
use std::sync::{Arc, LazyLock, Mutex};

use roto_core::access::{Access, Principal, PrincipalKind, Verdict};
use roto_core::identity::account_of_access_key;
use roto_core::AwsResult;
use rusqlite::Connection;

use super::evaluate::{evaluate, Decision, Policy, PolicySet, Request};
use super::store::{self, Kind};
use super::Iam;

/// An identity's policies as the evaluator takes them, and its tags
/// (`aws:PrincipalTag/<key>`).
#[derive(Default)]
pub(super) struct Compiled {
    identity: Vec<Policy>,
    boundary: Option<Vec<Policy>>,
    tags: Vec<(String, String)>,
}

/// The most resource and session policies kept parsed.
const DOCUMENT_CACHE: usize = 1024;

/// Parsed policies: identities' until IAM's next write, resource and session policies by
/// their text.
#[derive(Default)]
pub(super) struct Cache {
    identities: Mutex<HashMap<(String, String), Arc<Compiled>>>,
    documents: Mutex<HashMap<&'static str, HashMap<String, Option<Policy>>>>,
}

impl Cache {
    /// Forgets every parsed identity (a write may have changed any of them).
    pub fn clear(&self) {
        self.identities
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .clear();
    }

    /// A resource or session policy document, parsed once (`kind` is `SourcePolicyType`).
    fn document(&self, text: &str, id: &str, kind: &'static str) -> Option<Policy> {
        let mut kinds = self.documents.lock().unwrap_or_else(|p| p.into_inner());
        let map = kinds.entry(kind).or_default();
        if let Some(policy) = map.get(text) {
            return policy.clone();
        }
        if map.len() >= DOCUMENT_CACHE {
            map.clear();
        }
        let policy = Policy::parse(text, id, kind);
        map.insert(text.to_string(), policy.clone());
        policy
    }
}

/// The policy that stands for a root's own permissions: everything in its account.
fn root_policy() -> &'static [Policy] {
    static ROOT: LazyLock<Vec<Policy>> = LazyLock::new(|| {
        Policy::parse(
            r#"{"Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#,
            "root",
            "root",
        )
        .into_iter()
        .collect()
    });
    &ROOT
}

impl Iam {
    /// The IAM user behind an `AKIA` key IAM issued (active), if any.
    pub(super) fn identify_key(&self, key: &str) -> AwsResult<Option<Principal>> {
        if !key.starts_with("AKIA") {
            return Ok(None);
        }
        let Some(account) = account_of_access_key(key) else {
            return Ok(None);
        };
        self.env.store.with(|c| {
            let Some((user, status)) = store::access_key_owner(c, &account, key)? else {
                return Ok(None);
            };
            if status != "Active" {
                return Ok(None);
            }
            let Some(entity) = store::find(c, &account, Kind::User, &user)? else {
                return Ok(None);
            };
            Ok(Some(Principal {
                kind: PrincipalKind::User,
                arn: entity.arn(&account),
                user_id: entity.id.clone(),
                name: Some(entity.name.clone()),
                session_policy: None,
                session_policy_arns: Vec::new(),
                session_tags: Vec::new(),
                account,
            }))
        })
    }

    /// A user's or a role's policies and boundary, parsed.
    fn compile(
        &self,
        c: &Connection,
        account: &str,
        kind: Kind,
        name: &str,
    ) -> AwsResult<Compiled> {
        let Some(entity) = store::find(c, account, kind, name)? else {
            return Ok(Compiled::default());
        };
        let identity = self
            .principal_sources(c, account, &entity)?
            .into_iter()
            .map(|s| s.policy)
            .collect();
        let boundary = match entity.attr("PermissionsBoundary") {
            Some(arn) => Some(
                self.managed_document(c, account, arn)?
                    .and_then(|d| Policy::parse(&d, arn, "permissions-boundary"))
                    .into_iter()
                    .collect(),
            ),
            None => None,
        };
        Ok(Compiled {
            identity,
            boundary,
            tags: entity.tags.clone(),
        })
    }

    /// The principal's identity policies, from the cache or the store.
    fn compiled(&self, principal: &Principal) -> AwsResult<Arc<Compiled>> {
        let kind = match principal.kind {
            PrincipalKind::User | PrincipalKind::Federated => Kind::User,
            PrincipalKind::AssumedRole => Kind::Role,
            _ => return Ok(Arc::new(Compiled::default())),
        };
        let name = principal.name.clone().unwrap_or_default();
        let key = (
            principal.account.clone(),
            format!("{}/{name}", kind.as_str()),
        );
        let cache = &self.cache.identities;
        if let Some(hit) = cache.lock().unwrap_or_else(|p| p.into_inner()).get(&key) {
            return Ok(hit.clone());
        }
        let compiled = Arc::new(
            self.env
                .store
                .with(|c| self.compile(c, &principal.account, kind, &name))?,
        );
        cache
            .lock()
            .unwrap_or_else(|p| p.into_inner())
            .insert(key, compiled.clone());
        Ok(compiled)
    }

    /// The trust policy of the role an ARN names, if IAM has the role.
    fn trust_policy(&self, role_arn: &str) -> AwsResult<Option<String>> {
        let mut parts = role_arn.splitn(6, ':');
        let account = parts.nth(4).unwrap_or_default();
        let Some(name) = parts.next().and_then(|r| r.strip_prefix("role/")) else {
            return Ok(None);
        };
        let name = name.rsplit('/').next().unwrap_or_default();
        let role = self
            .env
            .store
            .with(|c| store::find(c, account, Kind::Role, name))?;
        Ok(role.and_then(|r| r.attr("AssumeRolePolicyDocument").map(str::to_string)))
    }

    /// A session's policies: the one passed inline and the managed ones passed by ARN, any
    /// of which may allow (none for a federated user without any: it has no permission).
    fn session_policies(&self, principal: &Principal) -> AwsResult<Option<Vec<Policy>>> {
        let inline = principal.session_policy.as_deref();
        if inline.is_none() && principal.session_policy_arns.is_empty() {
            return Ok((principal.kind == PrincipalKind::Federated).then(Vec::new));
        }
        let mut policies: Vec<Policy> = inline
            .and_then(|text| self.cache.document(text, "SessionPolicy", "session"))
            .into_iter()
            .collect();
        for arn in &principal.session_policy_arns {
            let text = self
                .env
                .store
                .with(|c| self.managed_document(c, &principal.account, arn))?;
            policies.extend(text.and_then(|text| self.cache.document(&text, arn, "session")));
        }
        Ok(Some(policies))
    }

    /// Decides a call: explicit denies first, then the allows each party must give.
    pub(super) fn decide(
        &self,
        principal: &Principal,
        access: &Access,
        context: &[(String, Vec<String>)],
    ) -> AwsResult<Verdict> {
        if root_of_owner(principal, access) {
            return Ok(Verdict {
                denial: None,
                matched: vec!["root (root)".into()],
            });
        }
        let compiled = self.compiled(principal)?;
        let identity = match (principal.kind, &principal.name) {
            (PrincipalKind::Root, _) | (PrincipalKind::Federated, None) => root_policy().to_vec(),
            _ => compiled.identity.clone(),
        };
        let session = self.session_policies(principal)?;
        let context = with_principal_tags(context, &compiled.tags, &principal.session_tags);
        let context = context.as_ref();
        let mut set = PolicySet {
            identity,
            boundary: compiled.boundary.clone(),
            session,
            account_delegates: true,
            ..Default::default()
        };
        if let Some(rp) = &access.policy {
            let trust = match rp.required && rp.document.is_none() {
                true => self.trust_policy(&access.resource)?,
                false => None,
            };
            set.resource = rp
                .document
                .as_deref()
                .or(trust.as_deref())
                .and_then(|text| {
                    self.cache
                        .document(text, "ResourcePolicy", "Resource Policy")
                });
            set.grant = rp.grant;
            set.resource_required = rp.required;
            set.cross_account =
                principal.kind != PrincipalKind::Anonymous && rp.owner != principal.account;
        }
        let caller = (principal.kind != PrincipalKind::Anonymous).then_some(principal.arn.as_str());
        let request = Request {
            action: &access.action,
            resource: &access.resource,
            caller,
            context,
        };
        let evaluation = evaluate(&set, &request);
        let matched = evaluation
            .matched
            .iter()
            .map(|m| format!("{} ({})", m.policy_id, m.policy_kind))
            .collect();
        let denial = match evaluation.decision {
            Decision::Allowed => None,
            Decision::ExplicitDeny => Some(
                match evaluation
                    .matched
                    .iter()
                    .any(|m| m.policy_kind == "Resource Policy")
                {
                    true => roto_core::access::Denial::ResourceDeny,
                    false => roto_core::access::Denial::IdentityDeny,
                },
            ),
            Decision::ImplicitDeny => Some(evaluation.lacking),
        };
        Ok(Verdict { denial, matched })
    }
}

/// Whether the caller is the root of the account that owns the resource, which has no
/// policy of its own: AWS allows such a call without reading any policy (a root has every
/// permission in its account, and only a resource policy's deny, or a role's trust policy,
/// could refuse it).
fn root_of_owner(principal: &Principal, access: &Access) -> bool {
    principal.kind == PrincipalKind::Root
        && access
            .policy
            .as_ref()
            .is_none_or(|rp| !rp.required && rp.document.is_none() && rp.owner == principal.account)
}

/// The request's keys with `aws:PrincipalTag/<key>` for each of the caller's tags: its
/// user's or role's, a session's own tags taking the place of its role's of the same key.
fn with_principal_tags<'a>(
    context: &'a [(String, Vec<String>)],
    own: &[(String, String)],
    session: &[(String, String)],
) -> Cow<'a, [(String, Vec<String>)]> {
    if own.is_empty() && session.is_empty() {
        return Cow::Borrowed(context);
    }
    let mut keys = context.to_vec();
    let own = own
        .iter()
        .filter(|(k, _)| !session.iter().any(|(s, _)| s.eq_ignore_ascii_case(k)));
    for (key, value) in own.chain(session) {
        keys.push((format!("aws:PrincipalTag/{key}"), vec![value.clone()]));
    }
    Cow::Owned(keys)
}

impl Iam {
    /// The tags of the user or role an IAM ARN names, as `aws:ResourceTag/<key>` and
    /// `iam:ResourceTag/<key>` see them.
    pub(super) fn tag_access(&self, access: &mut Access) -> AwsResult<()> {
        let mut parts = access.resource.splitn(6, ':');
        let account = parts.nth(4).unwrap_or_default().to_string();
        let kind = match parts.next().and_then(|r| r.split_once('/')) {
            Some(("user", rest)) => Some((Kind::User, rest)),
            Some(("role", rest)) => Some((Kind::Role, rest)),
            _ => None,
        };
        let Some((kind, rest)) = kind else {
            return Ok(());
        };
        let name = rest.rsplit('/').next().unwrap_or_default();
        let entity = self
            .env
            .store
            .with(|c| store::find(c, &account, kind, name))?;
        let tags = entity.map(|e| e.tags).unwrap_or_default();
        access.context = tags
            .iter()
            .map(|(k, v)| (format!("iam:ResourceTag/{k}"), vec![v.clone()]))
            .collect();
        access.resource_tags = tags;
        Ok(())
    }
}

/// The resource an IAM call acts on: the user, group, role or policy it names.
pub(super) fn resource(account: &str, input: &roto_core::Value) -> Option<String> {
    if let Some(arn) = input.str("PolicyArn") {
        return Some(arn.to_string());
    }
    [
        ("UserName", "user"),
        ("RoleName", "role"),
        ("GroupName", "group"),
    ]
    .iter()
    .find_map(|(member, kind)| {
        let name = input.str(member)?;
        Some(format!("arn:aws:iam::{account}:{kind}/{name}"))
    })
}
