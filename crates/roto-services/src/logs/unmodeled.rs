//! The CloudWatch Logs features Roto does not model (vended-log deliveries, anomaly
//! detection, scheduled queries, lookup tables, imports, integrations, syslog), answered
//! as Logs answers an account that has none: empty lists, and `ResourceNotFoundException`
//! for any id, name or ARN of one.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

fn not_found(_: &Value) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        "The specified resource does not exist.",
    )
}

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("DescribeConfigurationTemplates"),
    Featureless::empty("DescribeDeliveries"),
    Featureless::empty("DescribeDeliveryDestinations"),
    Featureless::empty("DescribeDeliverySources"),
    Featureless::empty("DescribeImportTasks"),
    Featureless::empty("DescribeLookupTables"),
    Featureless::empty("ListAnomalies"),
    Featureless::empty("ListIntegrations"),
    Featureless::empty("ListLogAnomalyDetectors"),
    Featureless::empty("ListScheduledQueries"),
    Featureless::empty("ListSyslogConfigurations"),
    Featureless::empty("ListAggregateLogGroupSummaries"),
    Featureless::error("GetDelivery", not_found),
    Featureless::error("DeleteDelivery", not_found),
    Featureless::error("UpdateDeliveryConfiguration", not_found),
    Featureless::error("GetDeliveryDestination", not_found),
    Featureless::error("DeleteDeliveryDestination", not_found),
    Featureless::error("GetDeliveryDestinationPolicy", not_found),
    Featureless::error("DeleteDeliveryDestinationPolicy", not_found),
    Featureless::error("GetDeliverySource", not_found),
    Featureless::error("DeleteDeliverySource", not_found),
    Featureless::error("GetIntegration", not_found),
    Featureless::error("DeleteIntegration", not_found),
    Featureless::error("ListSourcesForS3TableIntegration", not_found),
    Featureless::error("GetLogAnomalyDetector", not_found),
    Featureless::error("UpdateLogAnomalyDetector", not_found),
    Featureless::error("DeleteLogAnomalyDetector", not_found),
    Featureless::error("UpdateAnomaly", not_found),
    Featureless::error("GetLookupTable", not_found),
    Featureless::error("UpdateLookupTable", not_found),
    Featureless::error("DeleteLookupTable", not_found),
    Featureless::error("GetScheduledQuery", not_found),
    Featureless::error("GetScheduledQueryHistory", not_found),
    Featureless::error("UpdateScheduledQuery", not_found),
    Featureless::error("DeleteScheduledQuery", not_found),
    Featureless::error("CancelImportTask", not_found),
    Featureless::error("DescribeImportTaskBatches", not_found),
];
