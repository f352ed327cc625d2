//! The provider of `AWS::DynamoDB::GlobalTable`: a table in the stack's region, and a replica
//! (UpdateTable's `ReplicaUpdates`) in every other region its `Replicas` name, each
//! replica's regional settings (tags, deletion protection, point-in-time recovery, table
//! class, key) applied in its own region. `Ref` is the table name; `Arn`, `StreamArn` and
//! `TableId` are the stack region's table's.

use roto_core::Context;
use serde_json::{json, Value as Json};

use super::data::table_ttl;
use super::{gone_ok, pick, resolved, with, Call, Outcome, Provider};

pub(crate) const DYNAMODB_GLOBAL_TABLE: Provider = Provider {
    kind: "AWS::DynamoDB::GlobalTable",
    replaces: &["TableName", "KeySchema", "LocalSecondaryIndexes"],
    create: |c| Box::pin(create(c)),
    update: Some(|c| Box::pin(update(c))),
    delete: |c| Box::pin(delete(c)),
};

/// The `Replicas` entries of a set of properties.
fn replicas(props: &Json) -> Vec<&Json> {
    props["Replicas"].as_array().into_iter().flatten().collect()
}

fn region_of(replica: &Json) -> &str {
    replica["Region"].as_str().unwrap_or_default()
}

/// The same call, made in another region.
fn in_region(c: &Call, region: &str) -> Call {
    Call {
        ctx: Context {
            region: region.to_string(),
            ..c.ctx.clone()
        },
        ..c.clone()
    }
}

/// The `Replicas` entry of the stack's region; AWS refuses a template without one.
fn local_replica(c: &Call) -> Result<&Json, String> {
    replicas(&c.props)
        .into_iter()
        .find(|r| region_of(r) == c.ctx.region)
        .ok_or_else(|| {
            "Invalid request provided: The Replicas section must contain an entry for the current region"
                .to_string()
        })
}

/// Provisioned units: reads from the local replica's settings, writes from the table's
/// (a fixed value or auto scaling's minimum).
fn throughput(read: &Json, write: &Json) -> Json {
    let units = |settings: &Json, fixed: &str, scaling: &str| {
        settings[fixed]
            .as_i64()
            .or_else(|| settings[scaling]["MinCapacity"].as_i64())
            .unwrap_or(1)
    };
    json!({
        "ReadCapacityUnits": units(read, "ReadCapacityUnits", "ReadCapacityAutoScalingSettings"),
        "WriteCapacityUnits": units(write, "WriteCapacityUnits", "WriteCapacityAutoScalingSettings"),
    })
}

/// CreateTable's input for the stack region's table.
fn create_input(c: &Call, name: &str, local: &Json) -> Json {
    let mut input = pick(
        &c.props,
        &[
            "AttributeDefinitions",
            "KeySchema",
            "BillingMode",
            "LocalSecondaryIndexes",
        ],
    );
    input = with(input, "TableName", json!(name));
    let provisioned = c.str("BillingMode") == Some("PROVISIONED");
    if provisioned {
        input = with(
            input,
            "ProvisionedThroughput",
            throughput(
                &local["ReadProvisionedThroughputSettings"],
                &c.props["WriteProvisionedThroughputSettings"],
            ),
        );
    }
    if let Some(indexes) = c.prop("GlobalSecondaryIndexes").and_then(Json::as_array) {
        let indexes: Vec<Json> = indexes
            .iter()
            .map(|index| {
                let mut out = pick(index, &["IndexName", "KeySchema", "Projection"]);
                if provisioned {
                    let read = replica_index(local, &index["IndexName"]);
                    out = with(
                        out,
                        "ProvisionedThroughput",
                        throughput(
                            &read["ReadProvisionedThroughputSettings"],
                            &index["WriteProvisionedThroughputSettings"],
                        ),
                    );
                }
                out
            })
            .collect();
        input = with(input, "GlobalSecondaryIndexes", Json::Array(indexes));
    }
    if let Some(view) = c.prop("StreamSpecification").map(|s| &s["StreamViewType"]) {
        input = with(
            input,
            "StreamSpecification",
            json!({"StreamEnabled": true, "StreamViewType": view}),
        );
    }
    if let Some(sse) = c.prop("SSESpecification") {
        let mut spec = json!({"Enabled": sse["SSEEnabled"]});
        spec = with(spec, "SSEType", sse["SSEType"].clone());
        spec = with(
            spec,
            "KMSMasterKeyId",
            local["SSESpecification"]["KMSMasterKeyId"].clone(),
        );
        input = with(input, "SSESpecification", spec);
    }
    let limits = json!({
        "MaxReadRequestUnits": local["ReadOnDemandThroughputSettings"]["MaxReadRequestUnits"],
        "MaxWriteRequestUnits": c.props["WriteOnDemandThroughputSettings"]["MaxWriteRequestUnits"],
    });
    let limits = pick(&limits, &["MaxReadRequestUnits", "MaxWriteRequestUnits"]);
    if limits.as_object().is_some_and(|m| !m.is_empty()) {
        input = with(input, "OnDemandThroughput", limits);
    }
    input = with(input, "TableClass", local["TableClass"].clone());
    with(input, "Tags", local["Tags"].clone())
}

/// A replica's settings for one of the table's indexes.
fn replica_index<'a>(replica: &'a Json, name: &Json) -> &'a Json {
    replica["GlobalSecondaryIndexes"]
        .as_array()
        .and_then(|l| l.iter().find(|i| &i["IndexName"] == name))
        .unwrap_or(&Json::Null)
}

/// UpdateTable's `Create` of a replica from its `Replicas` entry.
fn replica_create(replica: &Json) -> Json {
    let mut create = json!({"RegionName": region_of(replica)});
    create = with(
        create,
        "KMSMasterKeyId",
        replica["SSESpecification"]["KMSMasterKeyId"].clone(),
    );
    create = with(create, "TableClassOverride", replica["TableClass"].clone());
    if let Some(limit) = replica["ReadOnDemandThroughputSettings"]["MaxReadRequestUnits"].as_i64() {
        create = with(
            create,
            "OnDemandThroughputOverride",
            json!({"MaxReadRequestUnits": limit}),
        );
    }
    create
}

/// Applies a replica's regional settings in its region: deletion protection, tags,
/// point-in-time recovery.
async fn regional_settings(c: &Call, name: &str, replica: &Json) -> Result<(), String> {
    let there = in_region(c, region_of(replica));
    if let Some(protected) = replica["DeletionProtectionEnabled"].as_bool() {
        let current = there
            .api("dynamodb", "DescribeTable", json!({"TableName": name}))
            .await?;
        if current["Table"]["DeletionProtectionEnabled"].as_bool() != Some(protected) {
            there
                .api(
                    "dynamodb",
                    "UpdateTable",
                    json!({"TableName": name, "DeletionProtectionEnabled": protected}),
                )
                .await?;
        }
    }
    if let Some(recovery) =
        replica["PointInTimeRecoverySpecification"]["PointInTimeRecoveryEnabled"].as_bool()
    {
        there
            .api(
                "dynamodb",
                "UpdateContinuousBackups",
                json!({"TableName": name,
                       "PointInTimeRecoverySpecification": {"PointInTimeRecoveryEnabled": recovery}}),
            )
            .await?;
    }
    if region_of(replica) != c.ctx.region {
        if let Some(tags) = replica["Tags"].as_array().filter(|t| !t.is_empty()) {
            let arn = format!(
                "arn:aws:dynamodb:{}:{}:table/{name}",
                there.ctx.region, there.ctx.account
            );
            there
                .api(
                    "dynamodb",
                    "TagResource",
                    json!({"ResourceArn": arn, "Tags": tags}),
                )
                .await?;
        }
    }
    Ok(())
}

async fn add_replica(c: &Call, name: &str, replica: &Json) -> Result<(), String> {
    c.api(
        "dynamodb",
        "UpdateTable",
        json!({"TableName": name, "ReplicaUpdates": [{"Create": replica_create(replica)}]}),
    )
    .await?;
    Ok(())
}

async fn remove_replica(c: &Call, name: &str, region: &str) -> Result<(), String> {
    gone_ok(
        c.api(
            "dynamodb",
            "UpdateTable",
            json!({"TableName": name, "ReplicaUpdates": [{"Delete": {"RegionName": region}}]}),
        )
        .await,
    )
}

async fn create(c: &Call) -> Outcome {
    let local = local_replica(c)?;
    let name = c.name("TableName", 255);
    c.api("dynamodb", "CreateTable", create_input(c, &name, local))
        .await?;
    table_ttl(c, &name).await?;
    regional_settings(c, &name, local).await?;
    for replica in replicas(&c.props) {
        if region_of(replica) != c.ctx.region {
            add_replica(c, &name, replica).await?;
            regional_settings(c, &name, replica).await?;
        }
    }
    resolve(c, &name).await
}

/// An update in place: replicas added and removed, billing mode, Time to Live and each
/// replica's regional settings.
async fn update(c: &Call) -> Outcome {
    local_replica(c)?;
    let name = c.physical().to_string();
    let before: Vec<&str> = replicas(&c.old_props).into_iter().map(region_of).collect();
    let after: Vec<&str> = replicas(&c.props).into_iter().map(region_of).collect();
    for region in before.iter().rev().filter(|r| !after.contains(r)) {
        remove_replica(c, &name, region).await?;
    }
    if c.props.get("BillingMode") != c.old_props.get("BillingMode") {
        c.api(
            "dynamodb",
            "UpdateTable",
            with(pick(&c.props, &["BillingMode"]), "TableName", json!(name)),
        )
        .await?;
    }
    table_ttl(c, &name).await?;
    for replica in replicas(&c.props) {
        if !before.contains(&region_of(replica)) {
            add_replica(c, &name, replica).await?;
        }
        regional_settings(c, &name, replica).await?;
    }
    resolve(c, &name).await
}

/// Removes the replicas (the last added first), then the table.
async fn delete(c: &Call) -> Result<(), String> {
    let name = c.physical().to_string();
    let others: Vec<&str> = replicas(&c.props)
        .into_iter()
        .map(region_of)
        .filter(|r| *r != c.ctx.region)
        .collect();
    for region in others.into_iter().rev() {
        remove_replica(c, &name, region).await?;
    }
    gone_ok(
        c.api("dynamodb", "DeleteTable", json!({"TableName": name}))
            .await,
    )
}

async fn resolve(c: &Call, name: &str) -> Outcome {
    let out = c
        .api("dynamodb", "DescribeTable", json!({"TableName": name}))
        .await?;
    let table = &out["Table"];
    let mut attrs = json!({"Arn": table["TableArn"], "TableId": table["TableId"]});
    attrs = with(attrs, "StreamArn", table["LatestStreamArn"].clone());
    Ok(resolved(name, attrs))
}
