//! The IAM features Roto does not model (delegation requests, role templates,
//! Organizations), answered as IAM answers an account that does not use them: empty lists,
//! `OrganizationNotFoundException` for an account in no organization, and `NoSuchEntity`
//! for any job, request or template id. Delegation requests are for partners AWS has
//! onboarded, whose policy templates it registered; Roto registers none, so
//! CreateDelegationRequest refuses every template as `InvalidInputException`.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListDelegationRequests"),
    Featureless::error("ListOrganizationsFeatures", no_organization),
    Featureless::error(
        "EnableOrganizationsRootCredentialsManagement",
        no_organization,
    ),
    Featureless::error(
        "DisableOrganizationsRootCredentialsManagement",
        no_organization,
    ),
    Featureless::error("EnableOrganizationsRootSessions", no_organization),
    Featureless::error("DisableOrganizationsRootSessions", no_organization),
    Featureless::error("GenerateOrganizationsAccessReport", no_organization),
    Featureless::error("GetOrganizationsAccessReport", |input| {
        no_such_entity(input, "JobId", "Organizations access report job")
    }),
    Featureless::error("CreateDelegationRequest", no_policy_template),
    Featureless::error("GetDelegationRequest", no_delegation_request),
    Featureless::error("AcceptDelegationRequest", no_delegation_request),
    Featureless::error("AssociateDelegationRequest", no_delegation_request),
    Featureless::error("RejectDelegationRequest", no_delegation_request),
    Featureless::error("UpdateDelegationRequest", no_delegation_request),
    Featureless::error("SendDelegationToken", no_delegation_request),
    Featureless::error("GetHumanReadableSummary", |input| {
        no_such_entity(input, "EntityArn", "Entity")
    }),
    Featureless::error("GetRoleTemplateVersion", no_role_template),
    Featureless::error("AcquireRole", no_role_template),
];

/// The account is in no organization.
fn no_organization(_: &Value) -> AwsError {
    AwsError::new(
        "OrganizationNotFoundException",
        "The request failed because no organization is associated with your account.",
    )
    .with_status(400)
}

/// No policy template is registered for the caller, who is no onboarded partner.
fn no_policy_template(input: &Value) -> AwsError {
    let template = input
        .get("Permissions")
        .and_then(|p| p.str("PolicyTemplateArn"))
        .unwrap_or_default();
    super::invalid_input(format!("Policy template {template} is not registered for this account: delegation requests are available only to onboarded partners."))
}

fn no_delegation_request(input: &Value) -> AwsError {
    no_such_entity(input, "DelegationRequestId", "Delegation request")
}

fn no_role_template(input: &Value) -> AwsError {
    no_such_entity(input, "TemplateArn", "Role template")
}

/// `NoSuchEntity` for the `what` whose id is the input's `member`.
fn no_such_entity(input: &Value, member: &str, what: &str) -> AwsError {
    let id = input.str(member).unwrap_or_default();
    AwsError::new(
        "NoSuchEntityException",
        format!("{what} {id} does not exist."),
    )
    .with_status(404)
}
