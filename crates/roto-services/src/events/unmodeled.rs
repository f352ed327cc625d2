//! The EventBridge features Roto does not model (partner event sources), answered as
//! EventBridge answers an account without them: empty lists, the not-found error for a
//! named event source, and for the operations only SaaS partners may call, the refusal
//! every other account gets.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("ListEventSources"),
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
    Featureless::error("CreatePartnerEventSource", partners_only),
    Featureless::error("ListPartnerEventSources", partners_only),
    Featureless::error("PutPartnerEvents", partners_only),
];

/// The answer to a partner's operation from an account that is not an SaaS partner.
fn partners_only(_: &Value) -> AwsError {
    AwsError::new(
        "OperationDisabledException",
        "This operation is available only to SaaS partners of EventBridge.",
    )
    .with_status(400)
}

fn not_found(message: String) -> AwsError {
    AwsError::new("ResourceNotFoundException", message).with_status(400)
}

fn event_source_not_found(input: &Value) -> AwsError {
    not_found(format!(
        "Event source {} does not exist.",
        input.str("Name").unwrap_or_default()
    ))
}
