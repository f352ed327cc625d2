//! The CloudWatch Logs features Roto does not model (vended-log deliveries, anomaly
//! detection, scheduled queries, lookup tables, imports, integrations, syslog), answered
//! as Logs answers an account that has none: empty lists.

use roto_core::featureless::Featureless;

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
];
