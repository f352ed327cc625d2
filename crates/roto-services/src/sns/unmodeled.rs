//! The SNS features Roto does not model (SMS sandbox phone numbers and origination
//! numbers), answered as SNS answers an account without them: empty lists, and the
//! not-found error for a named phone number.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListOriginationNumbers"),
    Featureless::empty("ListSMSSandboxPhoneNumbers"),
    Featureless::error("DeleteSMSSandboxPhoneNumber", phone_not_found),
    Featureless::error("VerifySMSSandboxPhoneNumber", phone_not_found),
];

fn phone_not_found(_: &Value) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "Can not find the phone number in the sandbox",
    )
    .with_status(404)
}
