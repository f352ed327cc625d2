//! The Systems Manager features Roto does not model (documents, associations, commands,
//! automation, maintenance windows, patching, inventory, OpsCenter, managed nodes),
//! answered as SSM answers an account that has none of them: empty lists.

use roto_core::featureless::Featureless;

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::empty("DescribeActivations"),
    Featureless::empty("DescribeAutomationExecutions"),
    Featureless::empty("DescribeAvailablePatches"),
    Featureless::empty("DescribeInstanceInformation"),
    Featureless::empty("DescribeInstanceProperties"),
    Featureless::empty("DescribeInventoryDeletions"),
    Featureless::empty("DescribeMaintenanceWindowSchedule"),
    Featureless::empty("DescribeMaintenanceWindows"),
    Featureless::empty("DescribeOpsItems"),
    Featureless::empty("DescribePatchBaselines"),
    Featureless::empty("DescribePatchGroups"),
    Featureless::empty("GetInventory"),
    Featureless::empty("GetInventorySchema"),
    Featureless::empty("GetOpsSummary"),
    Featureless::empty("ListAssociations"),
    Featureless::empty("ListCloudConnectors"),
    Featureless::empty("ListCommandInvocations"),
    Featureless::empty("ListCommands"),
    Featureless::empty("ListComplianceItems"),
    Featureless::empty("ListComplianceSummaries"),
    Featureless::empty("ListDocuments"),
    Featureless::empty("ListNodes"),
    Featureless::empty("ListOpsItemEvents"),
    Featureless::empty("ListOpsItemRelatedItems"),
    Featureless::empty("ListOpsMetadata"),
    Featureless::empty("ListResourceComplianceSummaries"),
    Featureless::empty("ListResourceDataSync"),
];
