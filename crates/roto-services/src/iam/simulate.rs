//! The policy simulator (`SimulateCustomPolicy`, `SimulatePrincipalPolicy`) and the
//! context-key listings (`GetContextKeysFor*Policy`) over the evaluator in `evaluate.rs`.
//!
//! A principal's policies are its inline and attached managed policies, and for a user
//! those of its groups; its stored permissions boundary applies unless the call gives one.
//! Given policies are named `PolicyInputList.N` (`PermissionsBoundaryPolicyInputList.N`)
//! and typed `IAM Policy`, as IAM answers, the resource policy `ResourcePolicy` typed
//! `Resource Policy`; a principal's own are named by policy name (managed ones, and its
//! stored boundary, by ARN) and typed `user`, `group`, `role`, `user-managed`,
//! `aws-managed` or `permissions-boundary`. AWS-managed policies' documents are unknown to Roto except
//! `AdministratorAccess`, so others attached to a principal grant nothing here.

use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::Connection;

use super::document;
use super::evaluate::{evaluate, merge_keys, Evaluation, Matched, Policy, PolicySet, Request};
use super::spanned::Position;
use super::store::{self, Entity, Kind, Relation};
use super::{invalid_input, listing, page, required, Iam};

/// The AWS-managed policies whose documents Roto knows.
const KNOWN_AWS_POLICIES: &[(&str, &str)] = &[(
    "arn:aws:iam::aws:policy/AdministratorAccess",
    r#"{"Version":"2012-10-17","Statement":[{"Effect":"Allow","Action":"*","Resource":"*"}]}"#,
)];

/// One of a principal's policies, with what names it: a managed policy's ARN, or an
/// inline policy's owner (kind and name).
pub(super) struct Source {
    pub policy: Policy,
    pub arn: Option<String>,
    pub owner: Option<(Kind, String)>,
}

/// Parses given documents (identity policies unless `resource`) as `<list>.N`.
fn given(texts: &[String], list: &str) -> AwsResult<Vec<Policy>> {
    texts
        .iter()
        .enumerate()
        .map(|(i, text)| parse_given(text, &format!("{list}.{}", i + 1), false))
        .collect()
}

fn parse_given(text: &str, id: &str, resource: bool) -> AwsResult<Policy> {
    if !resource {
        document::check_identity(text, false).map_err(|e| invalid_input(e.message))?;
    }
    let kind = match resource {
        true => "Resource Policy",
        false => "IAM Policy",
    };
    Policy::parse(text, id, kind)
        .ok_or_else(|| invalid_input(format!("The policy document {id} is malformed.")))
}

fn position(p: Position) -> Value {
    Value::map()
        .with("Line", p.line as i64)
        .with("Column", p.column as i64)
}

fn matched_value(m: &Matched) -> Value {
    Value::map()
        .with("SourcePolicyId", m.policy_id.as_str())
        .with("SourcePolicyType", m.policy_kind.as_str())
        .with("StartPosition", position(m.start))
        .with("EndPosition", position(m.end))
}

/// The members an evaluation shares between a result and its resource-specific results.
fn evaluation_members(mut v: Value, e: &Evaluation) -> Value {
    v.insert(
        "MatchedStatements",
        e.matched.iter().map(matched_value).collect::<Vec<_>>(),
    );
    v.insert(
        "MissingContextValues",
        e.missing.iter().map(Value::from).collect::<Vec<_>>(),
    );
    v.insert("EvalDecisionDetails", Value::map());
    if let Some(allowed) = e.allowed_by_boundary {
        v.insert(
            "PermissionsBoundaryDecisionDetail",
            Value::map().with("AllowedByPermissionsBoundary", allowed),
        );
    }
    v
}

/// The account a `ResourceOwner` (an account id or an ARN) or a caller ARN names.
fn account_of(text: &str) -> &str {
    match text.strip_prefix("arn:") {
        Some(rest) => rest.split(':').nth(3).unwrap_or_default(),
        None => text,
    }
}

/// Runs the simulation: every action against every resource, paged.
fn simulate(
    set: &mut PolicySet,
    input: &Value,
    caller: Option<&str>,
    account: &str,
) -> AwsResult<Value> {
    let actions = input.strings("ActionNames");
    let given_resources = input.strings("ResourceArns");
    let resources = match given_resources.is_empty() {
        true => vec!["*".to_string()],
        false => given_resources.clone(),
    };
    if let Some(owner) = input.str("ResourceOwner") {
        let caller_account = caller.map(account_of).unwrap_or(account);
        set.cross_account = set.resource.is_some() && account_of(owner) != caller_account;
    }
    let mut context: Vec<(String, Vec<String>)> = Vec::new();
    for entry in input
        .get("ContextEntries")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let name = entry.str("ContextKeyName").unwrap_or_default().to_string();
        context.push((name, entry.strings("ContextKeyValues")));
    }
    let mut results = Vec::new();
    for action in &actions {
        for resource in &resources {
            let request = Request {
                action,
                resource,
                caller,
                context: &context,
            };
            let e = evaluate(set, &request);
            let mut v = Value::map()
                .with("EvalActionName", action.as_str())
                .with("EvalResourceName", resource.as_str())
                .with("EvalDecision", e.decision.as_str());
            v = evaluation_members(v, &e);
            if let Some(allowed) = e.allowed_by_organizations {
                v.insert(
                    "OrganizationsDecisionDetail",
                    Value::map().with("AllowedByOrganizations", allowed),
                );
            }
            if !given_resources.is_empty() {
                let specific = Value::map()
                    .with("EvalResourceName", resource.as_str())
                    .with("EvalResourceDecision", e.decision.as_str());
                v.insert(
                    "ResourceSpecificResults",
                    vec![evaluation_members(specific, &e)],
                );
            }
            results.push(v);
        }
    }
    let numbered: Vec<(usize, Value)> = results.into_iter().enumerate().collect();
    let (items, next) = page(numbered, |(i, _)| format!("{i:010}"), input)?;
    Ok(listing(
        "EvaluationResults",
        items.into_iter().map(|(_, v)| v).collect(),
        next,
    ))
}

impl Iam {
    /// The user, group or role an ARN names.
    pub(super) fn principal(&self, c: &Connection, account: &str, arn: &str) -> AwsResult<Entity> {
        let invalid = || invalid_input(format!("ARN {arn} is not valid."));
        let resource = arn
            .strip_prefix(&format!("arn:aws:iam::{account}:"))
            .ok_or_else(invalid)?;
        let (kind, rest) = resource.split_once('/').ok_or_else(invalid)?;
        let kind = match kind {
            "user" => Kind::User,
            "group" => Kind::Group,
            "role" => Kind::Role,
            _ => return Err(invalid()),
        };
        let name = rest.rsplit('/').next().unwrap_or_default();
        store::find(c, account, kind, name)?
            .filter(|e| e.arn(account) == arn)
            .ok_or_else(|| kind.not_found(name))
    }

    /// The default version's document of a managed policy, if Roto knows it.
    pub(super) fn managed_document(
        &self,
        c: &Connection,
        account: &str,
        arn: &str,
    ) -> AwsResult<Option<String>> {
        if let Some((_, doc)) = KNOWN_AWS_POLICIES.iter().find(|(a, _)| *a == arn) {
            return Ok(Some(doc.to_string()));
        }
        let Ok(policy) = self.local_policy(c, account, arn) else {
            return Ok(None);
        };
        let default = policy.attr_int("DefaultVersion");
        Ok(store::policy_versions(c, account, &policy.name)?
            .into_iter()
            .find(|v| Some(v.version) == default)
            .map(|v| v.document))
    }

    /// A principal's policies: its own inline and attached ones, then its groups'.
    pub(super) fn principal_sources(
        &self,
        c: &Connection,
        account: &str,
        e: &Entity,
    ) -> AwsResult<Vec<Source>> {
        let mut holders = vec![(e.kind, e.name.clone())];
        if e.kind == Kind::User {
            for group in store::parents(c, account, Relation::Member, &e.name)? {
                holders.push((Kind::Group, group));
            }
        }
        let mut sources = Vec::new();
        for (kind, name) in holders {
            for (policy_name, text) in store::inline_policies(c, account, kind, &name)? {
                if let Some(policy) = Policy::parse(&text, policy_name, kind.as_str()) {
                    sources.push(Source {
                        policy,
                        arn: None,
                        owner: Some((kind, name.clone())),
                    });
                }
            }
            for arn in store::children(c, account, Relation::Attached(kind), &name)? {
                let kind = match arn.starts_with("arn:aws:iam::aws:") {
                    true => "aws-managed",
                    false => "user-managed",
                };
                let document = self.managed_document(c, account, &arn)?;
                if let Some(policy) = document.and_then(|d| Policy::parse(&d, arn.as_str(), kind)) {
                    sources.push(Source {
                        policy,
                        arn: Some(arn),
                        owner: None,
                    });
                }
            }
        }
        Ok(sources)
    }

    /// `SimulateCustomPolicy`.
    pub(super) fn simulate_custom_policy(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let mut set = PolicySet {
            identity: given(&input.strings("PolicyInputList"), "PolicyInputList")?,
            ..Default::default()
        };
        let boundary = input.strings("PermissionsBoundaryPolicyInputList");
        if !boundary.is_empty() {
            set.boundary = Some(given(&boundary, "PermissionsBoundaryPolicyInputList")?);
        }
        for level in input
            .get("OrderedOrganizationPolicyInputList")
            .and_then(Value::as_list)
            .unwrap_or_default()
        {
            let scps = level.strings("ServiceControlPolicyInputList");
            set.organizations
                .push(given(&scps, "ServiceControlPolicyInputList")?);
        }
        if let Some(text) = input.str("ResourcePolicy") {
            set.resource = Some(parse_given(text, "ResourcePolicy", true)?);
        }
        simulate(&mut set, input, input.str("CallerArn"), &ctx.account)
    }

    /// `SimulatePrincipalPolicy`: the principal's policies (less `PolicyExclusionList`),
    /// plus any given ones.
    pub(super) fn simulate_principal_policy(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let account = &ctx.account;
        let arn = required(input, "PolicySourceArn");
        let exclusions = input
            .get("PolicyExclusionList")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let excluded = |source: &Source| {
            exclusions.iter().any(|x| {
                let inline = x.get("InlinePolicyIdentifier");
                match (&source.arn, &source.owner, inline) {
                    (Some(arn), _, _) => x.str("PolicyArn") == Some(arn.as_str()),
                    (None, Some((kind, owner)), Some(inline)) => {
                        inline.str("PolicyName") == Some(source.policy.id.as_str())
                            && inline
                                .str("AttachmentType")
                                .is_some_and(|t| t.eq_ignore_ascii_case(kind.as_str()))
                            && inline
                                .str("AttachmentName")
                                .is_some_and(|n| n.eq_ignore_ascii_case(owner))
                    }
                    _ => false,
                }
            })
        };
        let (mut set, caller) = self.env.store.with(|c| {
            let principal = self.principal(c, account, arn)?;
            let mut identity: Vec<Policy> = self
                .principal_sources(c, account, &principal)?
                .into_iter()
                .filter(|s| !excluded(s))
                .map(|s| s.policy)
                .collect();
            identity.extend(given(&input.strings("PolicyInputList"), "PolicyInputList")?);
            let given_boundary = input.strings("PermissionsBoundaryPolicyInputList");
            let boundary = if !given_boundary.is_empty() {
                Some(given(
                    &given_boundary,
                    "PermissionsBoundaryPolicyInputList",
                )?)
            } else if let Some(boundary) = principal.attr("PermissionsBoundary") {
                let document = self.managed_document(c, account, boundary)?;
                Some(
                    document
                        .and_then(|d| Policy::parse(&d, boundary, "permissions-boundary"))
                        .into_iter()
                        .collect(),
                )
            } else {
                None
            };
            let caller = (principal.kind != Kind::Group).then(|| principal.arn(account));
            Ok::<_, AwsError>((
                PolicySet {
                    identity,
                    boundary,
                    ..Default::default()
                },
                caller,
            ))
        })?;
        if let Some(text) = input.str("ResourcePolicy") {
            set.resource = Some(parse_given(text, "ResourcePolicy", true)?);
        }
        let caller = input.str("CallerArn").map(str::to_string).or(caller);
        simulate(&mut set, input, caller.as_deref(), account)
    }

    /// `GetContextKeysForCustomPolicy`: the keys the given policies refer to, each once,
    /// in order of appearance.
    pub(super) fn get_context_keys_for_custom_policy(&self, input: &Value) -> AwsResult<Value> {
        let policies = given(&input.strings("PolicyInputList"), "PolicyInputList")?;
        Ok(context_keys_value(&policies))
    }

    /// `GetContextKeysForPrincipalPolicy`: the keys of the principal's policies and of any
    /// given ones.
    pub(super) fn get_context_keys_for_principal_policy(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = required(input, "PolicySourceArn");
        let mut policies: Vec<Policy> = self.env.store.with(|c| {
            let principal = self.principal(c, account, arn)?;
            Ok::<_, AwsError>(
                self.principal_sources(c, account, &principal)?
                    .into_iter()
                    .map(|s| s.policy)
                    .collect(),
            )
        })?;
        policies.extend(given(&input.strings("PolicyInputList"), "PolicyInputList")?);
        Ok(context_keys_value(&policies))
    }
}

fn context_keys_value(policies: &[Policy]) -> Value {
    let mut keys = Vec::new();
    for policy in policies {
        merge_keys(&mut keys, policy.context_keys());
    }
    Value::map().with(
        "ContextKeyNames",
        keys.into_iter().map(Value::from).collect::<Vec<_>>(),
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn resource_owners_name_their_account() {
        assert_eq!(account_of("123456789012"), "123456789012");
        assert_eq!(account_of("arn:aws:iam::123456789012:root"), "123456789012");
    }

    #[test]
    fn given_policies_are_numbered_and_checked() {
        let doc = r#"{"Version":"2012-10-17","Statement":{"Effect":"Allow","Action":"s3:*","Resource":"*"}}"#;
        let policies = given(&[doc.to_string(), doc.to_string()], "PolicyInputList").unwrap();
        assert_eq!(policies[1].id, "PolicyInputList.2");
        let err = given(&["{".to_string()], "PolicyInputList").unwrap_err();
        assert_eq!(
            (err.code.as_ref(), err.message.as_str()),
            ("InvalidInputException", "Syntax errors in policy.")
        );
    }
}
