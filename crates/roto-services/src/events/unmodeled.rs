//! The EventBridge features Roto does not model (global endpoints, partner event
//! sources), answered as EventBridge answers an account without them: empty lists, and
//! the not-found error for a named endpoint or event source.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListEndpoints"),
    Featureless::empty("ListEventSources"),
    Featureless::error("DescribeEndpoint", endpoint_not_found),
    Featureless::error("UpdateEndpoint", endpoint_not_found),
    Featureless::error("DeleteEndpoint", endpoint_not_found),
    Featureless::error("DescribeEventSource", event_source_not_found),
    Featureless::error("ActivateEventSource", event_source_not_found),
    Featureless::error("DeactivateEventSource", event_source_not_found),
    Featureless::error("DescribePartnerEventSource", event_source_not_found),
    Featureless::error("DeletePartnerEventSource", event_source_not_found),
    Featureless::error("ListPartnerEventSourceAccounts", |input| {
        not_found(format!(
            "Event source {} does not exist.",
            input.str("EventSourceName").unwrap_or_default()
        ))
    }),
];

fn not_found(message: String) -> AwsError {
    AwsError::new("ResourceNotFoundException", message).with_status(400)
}

fn endpoint_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Endpoint {} does not exist.",
        input.str("Name").unwrap_or_default()
    ))
}

fn event_source_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Event source {} does not exist.",
        input.str("Name").unwrap_or_default()
    ))
}
