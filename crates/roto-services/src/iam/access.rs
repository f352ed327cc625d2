//! Access Advisor: `GenerateServiceLastAccessedDetails` and its reports, and
//! `ListPoliciesGrantingServiceAccess`.
//!
//! Roto does not track which credentials called which service, so a report lists the
//! services the entity's policies grant, each never accessed (no `LastAuthenticated`,
//! `TotalAuthenticatedEntities` 0). A job completes as it is created and is kept in the
//! account's settings under its id; a report with entities lists, for a group, its users
//! and, for a managed policy, the users, groups and roles it is attached to.

use roto_core::{AwsError, AwsResult, Value};
use rusqlite::Connection;
use serde_json::{json, Value as Json};

use super::evaluate::{merge_keys, Policy};
use super::simulate::Source;
use super::store::{self, Entity, Kind, Relation};
use super::{invalid_input, listing, no_such_entity, now, page, required, Iam};

/// Service namespaces and the names Access Advisor shows for them; policies that grant
/// every service (`*`) are reported with these.
const SERVICES: &[(&str, &str)] = &[
    ("dynamodb", "Amazon DynamoDB"),
    ("ec2", "Amazon EC2"),
    ("events", "Amazon EventBridge"),
    ("iam", "AWS Identity and Access Management"),
    ("kms", "AWS Key Management Service"),
    ("lambda", "AWS Lambda"),
    ("logs", "Amazon CloudWatch Logs"),
    ("s3", "Amazon S3"),
    ("secretsmanager", "AWS Secrets Manager"),
    ("sns", "Amazon SNS"),
    ("sqs", "Amazon SQS"),
    ("ssm", "AWS Systems Manager"),
    ("sts", "AWS Security Token Service"),
];

fn service_name(namespace: &str) -> String {
    SERVICES
        .iter()
        .find(|(ns, _)| *ns == namespace)
        .map_or_else(|| namespace.to_string(), |(_, name)| name.to_string())
}

/// The namespaces `policies` grant: the known ones and those named outright, sorted.
fn granted(policies: &[&Policy]) -> Vec<String> {
    let mut candidates: Vec<String> = SERVICES.iter().map(|(ns, _)| ns.to_string()).collect();
    for policy in policies {
        merge_keys(&mut candidates, policy.named_namespaces());
    }
    let mut out: Vec<String> = candidates
        .into_iter()
        .filter(|ns| policies.iter().any(|p| p.grants_namespace(ns)))
        .collect();
    out.sort();
    out
}

fn entity_info(account: &str, e: &Entity) -> Json {
    json!({
        "Arn": e.arn(account),
        "Name": e.name,
        "Type": e.kind.as_str().to_uppercase(),
        "Id": e.id,
        "Path": e.path,
    })
}

fn job_missing(id: &str) -> AwsError {
    no_such_entity(format!("No such job {id} exists."))
}

impl Iam {
    /// The policies and reported entities of what an Access Advisor ARN names: a user,
    /// group or role, or a managed policy.
    fn advised(
        &self,
        c: &Connection,
        account: &str,
        arn: &str,
    ) -> AwsResult<(Vec<Policy>, Vec<Json>)> {
        if arn.contains(":policy/") {
            let policy = self.attachable_policy(c, account, arn)?;
            let arn = policy.arn(policy.attr("Owner").unwrap_or(account));
            let document = self.managed_document(c, account, &arn)?;
            let policies = document
                .and_then(|d| Policy::parse(&d, arn.as_str(), "user-managed"))
                .into_iter()
                .collect();
            let mut entities = Vec::new();
            for kind in [Kind::User, Kind::Group, Kind::Role] {
                for name in store::parents(c, account, Relation::Attached(kind), &arn)? {
                    if let Some(e) = store::find(c, account, kind, &name)? {
                        entities.push(entity_info(account, &e));
                    }
                }
            }
            return Ok((policies, entities));
        }
        let principal = self.principal(c, account, arn)?;
        let policies = self
            .principal_sources(c, account, &principal)?
            .into_iter()
            .map(|s| s.policy)
            .collect();
        let mut entities = Vec::new();
        if principal.kind == Kind::Group {
            for name in store::children(c, account, Relation::Member, &principal.name)? {
                if let Some(user) = store::find(c, account, Kind::User, &name)? {
                    entities.push(entity_info(account, &user));
                }
            }
        }
        Ok((policies, entities))
    }

    /// `GenerateServiceLastAccessedDetails`: a job, complete at once.
    pub(super) fn generate_service_last_accessed(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = required(input, "Arn");
        let granularity = input.str("Granularity").unwrap_or("SERVICE_LEVEL");
        let id = roto_core::dispatch::new_request_id();
        self.env.store.transaction(|c| {
            let (policies, entities) = self.advised(c, account, arn)?;
            let services = granted(&policies.iter().collect::<Vec<_>>());
            let job = json!({
                "Granularity": granularity,
                "Created": now(),
                "Services": services,
                "Entities": entities,
            });
            store::put_setting(c, account, &format!("access-job:{id}"), &job.to_string())
        })?;
        Ok(Value::map().with("JobId", id))
    }

    fn job(&self, account: &str, id: &str) -> AwsResult<Json> {
        self.env
            .store
            .with(|c| store::setting(c, account, &format!("access-job:{id}")))?
            .and_then(|text| serde_json::from_str(&text).ok())
            .ok_or_else(|| job_missing(id))
    }

    /// `GetServiceLastAccessedDetails`.
    pub(super) fn get_service_last_accessed(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let job = self.job(account, required(input, "JobId"))?;
        let action_level = job["Granularity"] == "ACTION_LEVEL";
        let services: Vec<String> = job["Services"]
            .as_array()
            .map(|a| {
                a.iter()
                    .filter_map(Json::as_str)
                    .map(str::to_string)
                    .collect()
            })
            .unwrap_or_default();
        let (services, next) = page(services, Clone::clone, input)?;
        let values = services
            .iter()
            .map(|ns| {
                Value::map()
                    .with("ServiceName", service_name(ns))
                    .with("ServiceNamespace", ns.as_str())
                    .with("TotalAuthenticatedEntities", 0i64)
                    .with_opt(
                        "TrackedActionsLastAccessed",
                        action_level.then(Vec::<Value>::new),
                    )
            })
            .collect();
        let created = Value::Timestamp(job["Created"].as_i64().unwrap_or_default());
        Ok(listing("ServicesLastAccessed", values, next)
            .with("JobStatus", "COMPLETED")
            .with(
                "JobType",
                job["Granularity"].as_str().unwrap_or("SERVICE_LEVEL"),
            )
            .with("JobCreationDate", created.clone())
            .with("JobCompletionDate", created))
    }

    /// `GetServiceLastAccessedDetailsWithEntities`.
    pub(super) fn get_service_last_accessed_with_entities(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let job = self.job(account, required(input, "JobId"))?;
        let entities: Vec<Json> = job["Entities"].as_array().cloned().unwrap_or_default();
        let (entities, next) = page(
            entities,
            |e| format!("{}{}", e["Type"], e["Name"]).to_lowercase(),
            input,
        )?;
        let values = entities
            .iter()
            .map(|e| Value::map().with("EntityInfo", Value::from_json(e)))
            .collect();
        let created = Value::Timestamp(job["Created"].as_i64().unwrap_or_default());
        Ok(listing("EntityDetailsList", values, next)
            .with("JobStatus", "COMPLETED")
            .with("JobCreationDate", created.clone())
            .with("JobCompletionDate", created))
    }

    /// `ListPoliciesGrantingServiceAccess`: per namespace, the policies of a user, group or
    /// role that grant some action of it.
    pub(super) fn list_policies_granting_service_access(
        &self,
        account: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let arn = required(input, "Arn");
        let namespaces: Vec<&str> = input
            .get("ServiceNamespaces")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        if arn.contains(":policy/") {
            return Err(invalid_input(format!(
                "ARN {arn} is not a user, group or role."
            )));
        }
        let sources: Vec<Source> = self.env.store.with(|c| {
            let principal = self.principal(c, account, arn)?;
            self.principal_sources(c, account, &principal)
        })?;
        let entries = namespaces
            .iter()
            .map(|ns| {
                let policies: Vec<Value> = sources
                    .iter()
                    .filter(|s| s.policy.grants_namespace(ns))
                    .map(|s| match (&s.arn, &s.owner) {
                        (Some(arn), _) => Value::map()
                            .with("PolicyName", arn.rsplit('/').next().unwrap_or_default())
                            .with("PolicyType", "MANAGED")
                            .with("PolicyArn", arn.as_str()),
                        (None, owner) => {
                            let (kind, name) = owner.clone().unwrap_or((Kind::User, String::new()));
                            Value::map()
                                .with("PolicyName", s.policy.id.as_str())
                                .with("PolicyType", "INLINE")
                                .with("EntityType", kind.as_str().to_uppercase())
                                .with("EntityName", name)
                        }
                    })
                    .collect();
                Value::map()
                    .with("ServiceNamespace", *ns)
                    .with("Policies", policies)
            })
            .collect();
        Ok(listing("PoliciesGrantingServiceAccess", entries, None))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn granted_services_are_known_or_named_and_sorted() {
        let p = Policy::parse(
            r#"{"Statement":[{"Effect":"Allow","Action":["sqs:*","codecommit:GitPull"],"Resource":"*"}]}"#,
            "p",
            "user",
        )
        .unwrap();
        assert_eq!(granted(&[&p]), ["codecommit", "sqs"]);
        let all = Policy::parse(
            r#"{"Statement":{"Effect":"Allow","Action":"*","Resource":"*"}}"#,
            "a",
            "user",
        )
        .unwrap();
        assert_eq!(granted(&[&all]).len(), SERVICES.len());
        assert_eq!(service_name("sqs"), "Amazon SQS");
        assert_eq!(service_name("codecommit"), "codecommit");
    }
}
