//! The IAM features Roto does not model (delegation requests, outbound web identity
//! federation, Organizations), answered as IAM answers an account that does not use them:
//! empty lists, `FeatureDisabled` for outbound federation, which an account has off until
//! it enables it, `OrganizationNotFoundException` for an account in no organization, and
//! `NoSuchEntity` for any job, request or template id.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListDelegationRequests"),
    Featureless::error("GetOutboundWebIdentityFederationInfo", |_| {
        federation_disabled("Outbound identity federation is disabled for your AWS account.")
    }),
    Featureless::error("DisableOutboundWebIdentityFederation", |_| {
        federation_disabled(
            "Outbound identity federation is already disabled for your AWS account.",
        )
    }),
    Featureless::error("ListOrganizationsFeatures", |_| {
        AwsError::new(
            "OrganizationNotFoundException",
            "The request failed because no organization is associated with your account.",
        )
        .with_status(400)
    }),
    Featureless::error("GetOrganizationsAccessReport", |input| {
        no_such_entity(input, "JobId", "Organizations access report job")
    }),
    Featureless::error("GetDelegationRequest", |input| {
        no_such_entity(input, "DelegationRequestId", "Delegation request")
    }),
    Featureless::error("GetRoleTemplateVersion", |input| {
        no_such_entity(input, "TemplateArn", "Role template")
    }),
];

/// `NoSuchEntity` for the `what` whose id is the input's `member`.
fn no_such_entity(input: &Value, member: &str, what: &str) -> AwsError {
    let id = input.str(member).unwrap_or_default();
    AwsError::new(
        "NoSuchEntityException",
        format!("{what} {id} does not exist."),
    )
    .with_status(404)
}

fn federation_disabled(message: &str) -> AwsError {
    AwsError::new("FeatureDisabledException", message).with_status(404)
}
