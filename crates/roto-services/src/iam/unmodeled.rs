//! The IAM features Roto does not model (delegation requests, outbound web identity
//! federation), answered as IAM answers an account that does not use them: empty lists, and
//! `FeatureDisabled` for outbound federation, which an account has off until it enables it.

use roto_core::featureless::Featureless;
use roto_core::AwsError;

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
];

fn federation_disabled(message: &str) -> AwsError {
    AwsError::new("FeatureDisabledException", message).with_status(404)
}
