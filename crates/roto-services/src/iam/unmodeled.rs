//! The IAM features Roto does not model (delegation requests), answered as IAM answers
//! an account that has none: empty lists.

use roto_core::featureless::Featureless;

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[Featureless::empty("ListDelegationRequests")];
