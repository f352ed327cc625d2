//! The SNS feature Roto does not model (origination numbers), answered as SNS answers an
//! account without them: an empty list.

use roto_core::featureless::Featureless;

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[Featureless::empty("ListOriginationNumbers")];
