//! DescribeTableReplicaAutoScaling and UpdateTableReplicaAutoScaling for global tables.
//!
//! DynamoDB answers these only for a global table (version 2019.11.21); a regional table is
//! `ResourceNotFoundException` (`Global table with name: '<name>' does not exist.`). Roto has
//! no Application Auto Scaling, and its global tables are created on-demand (a provisioned
//! table cannot take a replica without write auto scaling), so every member, table and
//! index shows auto scaling disabled, and an update is refused as AWS refuses it for an
//! on-demand group, unless all it asks is to keep auto scaling disabled; for a group
//! switched to provisioned capacity since, setting auto scaling is `NotImplemented`.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::replicas;
use super::tables::{load_table, table_name, Table};
use super::DynamoDb;

fn disabled() -> Value {
    Value::map()
        .with("AutoScalingDisabled", true)
        .with("ScalingPolicies", Vec::<Value>::new())
}

/// The `TableAutoScalingDescription` of a global table: every member, its region included,
/// in the order of their names.
fn describe(ctx: &Context, table: &Table) -> Value {
    let mut regions = replicas::regions(&table.description);
    regions.push(&ctx.region);
    regions.sort_unstable();
    let indexes: Vec<Value> = table.description["GlobalSecondaryIndexes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| {
            Value::map()
                .with("IndexName", i["IndexName"].as_str().unwrap_or_default())
                .with("IndexStatus", "ACTIVE")
                .with("ProvisionedReadCapacityAutoScalingSettings", disabled())
                .with("ProvisionedWriteCapacityAutoScalingSettings", disabled())
        })
        .collect();
    let members: Vec<Value> = regions
        .into_iter()
        .map(|region| {
            Value::map()
                .with("RegionName", region)
                .with("GlobalSecondaryIndexes", indexes.clone())
                .with(
                    "ReplicaProvisionedReadCapacityAutoScalingSettings",
                    disabled(),
                )
                .with(
                    "ReplicaProvisionedWriteCapacityAutoScalingSettings",
                    disabled(),
                )
                .with("ReplicaStatus", "ACTIVE")
        })
        .collect();
    Value::map().with(
        "TableAutoScalingDescription",
        Value::map()
            .with("TableName", table.name.as_str())
            .with("TableStatus", "ACTIVE")
            .with("Replicas", members),
    )
}

/// Whether an `AutoScalingSettingsUpdate` asks for more than keeping auto scaling off.
fn sets_parameters(update: Option<&Value>) -> bool {
    update.is_some_and(|u| {
        u.bool("AutoScalingDisabled") != Some(true) || u.as_map().is_some_and(|m| m.len() > 1)
    })
}

impl DynamoDb {
    /// The global table a request names; `ResourceNotFoundException` for any other.
    fn global_table(&self, ctx: &Context, input: &Value) -> AwsResult<Table> {
        let name = table_name(input)?;
        self.env
            .store
            .read(|c| load_table(c, ctx, &name))?
            .filter(|t| replicas::is_global(&t.description))
            .ok_or_else(|| {
                AwsError::new(
                    "ResourceNotFoundException",
                    format!("Global table with name: '{name}' does not exist."),
                )
                .with_status(400)
            })
    }

    pub(super) fn describe_table_replica_auto_scaling(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let table = self.global_table(ctx, input)?;
        Ok(describe(ctx, &table))
    }

    pub(super) fn update_table_replica_auto_scaling(
        &self,
        ctx: &Context,
        input: &Value,
    ) -> AwsResult<Value> {
        let table = self.global_table(ctx, input)?;
        let name = &table.name;
        let failed =
            format!("Failed to update settings for global table with name: \u{2018}{name}\u{2019}");
        let write = input.get("ProvisionedWriteCapacityAutoScalingUpdate");
        let indexes = input
            .get("GlobalSecondaryIndexUpdates")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let members = input
            .get("ReplicaUpdates")
            .and_then(Value::as_list)
            .unwrap_or_default();
        if write.is_none() && indexes.is_empty() && members.is_empty() {
            return Err(AwsError::validation(format!(
                "{failed} because at least one update parameter must be specified."
            )));
        }
        let regions: Vec<&str> = members
            .iter()
            .map(|m| m.str("RegionName").unwrap_or_default())
            .collect();
        if let Some(twice) = regions
            .iter()
            .enumerate()
            .find_map(|(i, r)| regions[..i].contains(r).then_some(r))
        {
            return Err(AwsError::validation(format!(
                "{failed} because the regions: \u{2018}[{twice}]\u{2019} were specified more than once."
            )));
        }
        let mut known = replicas::regions(&table.description);
        known.push(&ctx.region);
        for member in members {
            let region = member.str("RegionName").unwrap_or_default();
            if member.as_map().is_some_and(|m| m.len() < 2) {
                return Err(AwsError::validation(format!(
                    "{failed} because at least one update parameter must be specified for region: \u{2018}{region}\u{2019}."
                )));
            }
            if !known.contains(&region) {
                return Err(AwsError::new(
                    "ResourceNotFoundException",
                    format!("Global table with name: '{name}' does not have a replica in region: {region}."),
                )
                .with_status(400));
            }
        }
        let replica_reads = members.iter().flat_map(|m| {
            let own = m.get("ReplicaProvisionedReadCapacityAutoScalingUpdate");
            let of_indexes = m
                .get("ReplicaGlobalSecondaryIndexUpdates")
                .and_then(Value::as_list)
                .unwrap_or_default()
                .iter()
                .map(|i| i.get("ProvisionedReadCapacityAutoScalingUpdate"));
            std::iter::once((
                "ReplicaProvisionedReadCapacityAutoScalingSettingsUpdate",
                own,
            ))
            .chain(of_indexes.map(|u| {
                (
                    "ReplicaGlobalSecondaryIndexProvisionedReadCapacityAutoScalingSettingsUpdate",
                    u,
                )
            }))
        });
        let index_writes = indexes.iter().map(|i| {
            (
                "GlobalTableGlobalSecondaryIndexProvisionedWriteCapacityAutoScalingSettingsUpdate",
                i.get("ProvisionedWriteCapacityAutoScalingUpdate"),
            )
        });
        let asked = std::iter::once((
            "GlobalTableProvisionedWriteCapacityAutoScalingSettingsUpdate",
            write,
        ))
        .chain(index_writes)
        .chain(replica_reads)
        .find(|(_, update)| sets_parameters(*update));
        if let Some((parameter, _)) = asked {
            if table.description["BillingModeSummary"]["BillingMode"].as_str()
                != Some("PAY_PER_REQUEST")
            {
                return Err(AwsError::new(
                    "NotImplemented",
                    "Auto scaling of a provisioned global table is not implemented by Roto (it has no Application Auto Scaling)",
                )
                .with_status(501));
            }
            let mut upper: Vec<String> = known
                .iter()
                .map(|r| format!("'{}'", r.to_uppercase()))
                .collect();
            upper.sort();
            return Err(AwsError::validation(format!(
                "Failed to update global table with name \u{2018}{name}\u{2018}. Replicas {} BillingMode is PayPerRequest. You must convert table's BillingMode to PROVISIONED to set parameters: '{parameter}'.",
                upper.join(", ")
            )));
        }
        Ok(describe(ctx, &table))
    }
}
