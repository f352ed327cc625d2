//! The CloudWatch Logs features Roto does not model (configuration templates, anomalies,
//! CloudTrail Lake imports, S3 Tables integrations, vended log fields and large log
//! objects, aggregate summaries), answered as Logs answers an account that has none: empty
//! lists, and `ResourceNotFoundException` for any id, name or ARN of one.

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
    Featureless::empty("DescribeImportTasks"),
    Featureless::empty("ListAnomalies"),
    Featureless::empty("ListAggregateLogGroupSummaries"),
    Featureless::error("ListSourcesForS3TableIntegration", not_found),
    Featureless::error("UpdateAnomaly", not_found),
    Featureless::error("CancelImportTask", not_found),
    Featureless::error("CreateImportTask", not_found),
    Featureless::error("AssociateSourceToS3TableIntegration", not_found),
    Featureless::error("DisassociateSourceFromS3TableIntegration", not_found),
    Featureless::error("GetLogFields", not_found),
    Featureless::error("GetLogObject", not_found),
    Featureless::error("DescribeImportTaskBatches", not_found),
];
