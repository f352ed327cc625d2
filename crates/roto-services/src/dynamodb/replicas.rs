//! Global tables version 2019.11.21: UpdateTable's `ReplicaUpdates`, the replica tables they
//! make in the account's other regions, and DeleteTable of a table with replicas.
//!
//! A global table is a group of same-named tables, one per region, each an ordinary table
//! of its region whose description carries `GlobalTableVersion` and `Replicas` (every other
//! member, with the overrides it was given). A Create copies the table (key schema,
//! indexes, billing, stream, Time to Live, items) into the new region and adds the new
//! member to every member's list, in one store transaction, so the replica is `ACTIVE` when
//! the call returns; the response shows what AWS's shows while it works (`UPDATING`, the
//! list as it was). Item changes then travel between members as [`replication`]
//! describes. Checks and messages are AWS's: one create or delete per call and alone in the
//! request, never the local region, no replica onto an existing table, overrides only for
//! members, and a member that sourced another within 24 hours (of the server clock) cannot
//! leave before it.
//!
//! [`replication`]: super::replication

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Value as Json};

use super::table_updates::CHANGES;
use super::tables::{
    insert_table, invalid_parameter, load_table, remove_table, save_description, sse_description,
    table_arn, table_not_found, Table,
};
use super::{counters, replication, streams, ttl, DynamoDb};

/// The version of global tables replicas belong to.
pub const VERSION: &str = "2019.11.21";

/// The tables this module writes.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_replica_sources (
    account TEXT NOT NULL,
    table_name TEXT NOT NULL,
    region TEXT NOT NULL,
    source_region TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, table_name, region)
) WITHOUT ROWID;
";

/// How long a member that sourced a new replica cannot leave the group.
const SOURCE_HOLD_MILLIS: i64 = 24 * 60 * 60 * 1000;

/// The regions global tables of this version are offered in.
const REGIONS: [&str; 32] = [
    "af-south-1",
    "ap-east-1",
    "ap-northeast-1",
    "ap-northeast-2",
    "ap-northeast-3",
    "ap-south-1",
    "ap-south-2",
    "ap-southeast-1",
    "ap-southeast-2",
    "ap-southeast-3",
    "ap-southeast-4",
    "ap-southeast-5",
    "ap-southeast-7",
    "ca-central-1",
    "ca-west-1",
    "eu-central-1",
    "eu-central-2",
    "eu-north-1",
    "eu-south-1",
    "eu-south-2",
    "eu-west-1",
    "eu-west-2",
    "eu-west-3",
    "il-central-1",
    "me-central-1",
    "me-south-1",
    "mx-central-1",
    "sa-east-1",
    "us-east-1",
    "us-east-2",
    "us-west-1",
    "us-west-2",
];

/// The regions of a table's replicas, as its description lists them.
pub fn regions(description: &Json) -> Vec<&str> {
    description["Replicas"]
        .as_array()
        .into_iter()
        .flatten()
        .filter_map(|r| r["RegionName"].as_str())
        .collect()
}

/// Whether any table has ever had a replica (so requests relay replicated changes).
pub fn any(conn: &Connection) -> AwsResult<bool> {
    Ok(conn
        .prepare_cached("SELECT 1 FROM ddb_replica_sources LIMIT 1")?
        .query_row([], |_| Ok(()))
        .optional()?
        .is_some())
}

/// Whether a table belongs to a global table.
pub fn is_global(description: &Json) -> bool {
    !regions(description).is_empty()
}

fn already_existed(name: &str) -> AwsError {
    AwsError::validation(format!(
        "Failed to create a the new replica of table with name: '{name}' because one or more replicas already existed as tables."
    ))
}

fn not_part(region: &str) -> AwsError {
    AwsError::validation(format!(
        "Update global table operation failed because one or more replicas were not part of the global table. Please retry the request without these replicas: [{region}]."
    ))
}

fn no_actions() -> AwsError {
    AwsError::validation(
        "There are no actions specified in the Replica Update Action of the request.",
    )
}

fn key_per_replica() -> AwsError {
    invalid_parameter("KMSMasterKeyId must be specified for each replica.")
}

/// One replica action of a request.
#[derive(Clone, Copy, PartialEq)]
enum Kind {
    Create,
    Update,
    Delete,
    /// The local member leaves the group and stays a regional table with its items.
    Disassociate,
}

struct Action<'a> {
    kind: Kind,
    region: &'a str,
    spec: &'a Value,
}

/// Reads `ReplicaUpdates` and checks it as AWS does before looking at the table.
fn actions<'a>(ctx: &Context, input: &'a Value) -> AwsResult<Vec<Action<'a>>> {
    if CHANGES
        .iter()
        .any(|m| *m != "ReplicaUpdates" && input.get(m).is_some())
    {
        return Err(invalid_parameter(
            "Replica modification must be the only operation in the request",
        ));
    }
    let mut actions: Vec<Action<'a>> = Vec::new();
    for entry in input
        .get("ReplicaUpdates")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let found: Vec<Action<'a>> = [
            ("Create", Kind::Create),
            ("Update", Kind::Update),
            ("Delete", Kind::Delete),
            ("Disassociate", Kind::Disassociate),
        ]
        .into_iter()
        .filter_map(|(member, kind)| {
            entry.get(member).map(|spec| Action {
                kind,
                region: spec.str("RegionName").unwrap_or_default(),
                spec,
            })
        })
        .collect();
        match found.len() {
            0 => return Err(no_actions()),
            1 => {}
            _ => return Err(mixed_actions()),
        }
        for action in found {
            let repeated = actions
                .iter()
                .any(|a| a.kind == action.kind && a.spec == action.spec);
            if !repeated {
                actions.push(action);
            }
        }
    }
    if actions.windows(2).any(|w| w[0].kind != w[1].kind) {
        return Err(mixed_actions());
    }
    if actions.len() > 1 && actions[0].kind != Kind::Update {
        return Err(AwsError::validation(
            "Update table operation with more than one create or delete replica actions not allowed",
        ));
    }
    for action in &actions {
        if action.kind == Kind::Disassociate {
            if action.region != ctx.region {
                return Err(AwsError::validation(format!(
                    "Only the replica in the region of the request ({}) can be disassociated",
                    ctx.region
                )));
            }
            continue;
        }
        if action.region == ctx.region {
            return Err(AwsError::validation(
                "Cannot add or delete the local region through ReplicaUpdates. Use CreateTable, DeleteTable, or UpdateTable as required.",
            ));
        }
        if !REGIONS.contains(&action.region) {
            return Err(AwsError::validation(format!(
                "Region {} is not supported. The latest version of global tables are only supported in the following regions: [{}].",
                action.region,
                REGIONS.join(", ")
            )));
        }
        let overrides = [
            "KMSMasterKeyId",
            "ProvisionedThroughputOverride",
            "OnDemandThroughputOverride",
            "GlobalSecondaryIndexes",
            "TableClassOverride",
        ];
        if action.kind == Kind::Update && !overrides.iter().any(|m| action.spec.get(m).is_some()) {
            return Err(no_actions());
        }
    }
    Ok(actions)
}

fn mixed_actions() -> AwsError {
    AwsError::validation(
        "Update table operation with more than one type of replica actions not allowed.",
    )
}

impl DynamoDb {
    /// UpdateTable with `ReplicaUpdates`: adds, changes or removes replicas.
    pub(super) fn update_replicas(
        &self,
        ctx: &Context,
        name: &str,
        input: &Value,
    ) -> AwsResult<Value> {
        let actions = actions(ctx, input)?;
        let now = now_millis();
        let (before, after, counts) = self.env.store.transaction(|tx| {
            let table = load_table(tx, ctx, name)?.ok_or_else(|| table_not_found(name))?;
            let before = table.description.clone();
            for action in &actions {
                let table = load_table(tx, ctx, name)?.ok_or_else(|| table_not_found(name))?;
                match action.kind {
                    Kind::Create => create(tx, ctx, &table, action.region, action.spec, now)?,
                    Kind::Update => update(tx, ctx, &table, action.region, action.spec)?,
                    Kind::Delete => delete(tx, ctx, &table, action.region, now)?,
                    Kind::Disassociate => disassociate(tx, ctx, &table, now)?,
                }
            }
            let after = load_table(tx, ctx, name)?.ok_or_else(|| table_not_found(name))?;
            let counts = counters::read(tx, ctx, name)?.unwrap_or_default();
            Ok::<_, AwsError>((before, after, counts))
        })?;
        if actions.iter().any(|a| a.kind == Kind::Create) {
            self.replicating
                .store(true, std::sync::atomic::Ordering::Relaxed);
        }
        // AWS answers while the change is in flight: the group as it was, the table
        // UPDATING, and (for a first replica) the version and the stream already set.
        let mut shown = Json::clone(&after.description);
        shown["Replicas"] = before["Replicas"].clone();
        if before["Replicas"].is_null() {
            if let Some(map) = shown.as_object_mut() {
                map.remove("Replicas");
            }
        }
        let response = Table {
            description: shown.into(),
            ..after
        };
        Ok(Value::map().with("TableDescription", response.describe("UPDATING", counts)))
    }
}

/// A member's table in its region.
fn member(tx: &Connection, ctx: &Context, region: &str, name: &str) -> AwsResult<Table> {
    let there = Context::internal(&ctx.account, region);
    load_table(tx, &there, name)?.ok_or_else(|| AwsError::internal("a replica's table is missing"))
}

/// The entry other members list for the member in `region` whose description is given.
fn entry(region: &str, account: &str, description: &Json) -> Json {
    let there = Context::internal(account, region);
    let name = description["TableName"].as_str().unwrap_or_default();
    let mut entry = json!({
        "RegionName": region,
        "ReplicaStatus": "ACTIVE",
        "ReplicaArn": table_arn(&there, name),
    });
    if let Some(key) = description["SSEDescription"]["KMSMasterKeyArn"].as_str() {
        entry["KMSMasterKeyId"] = key.into();
    }
    let indexes: Vec<Json> = description["GlobalSecondaryIndexes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| json!({"IndexName": i["IndexName"]}))
        .collect();
    if !indexes.is_empty() {
        entry["GlobalSecondaryIndexes"] = Json::Array(indexes);
    }
    entry
}

/// Applies an action's overrides to a member's entry and to that member's own description;
/// an override equal to the `base` table's setting clears it.
fn apply_overrides(entry: &mut Json, own: &mut Json, base: &Json, spec: &Value) {
    if let Some(class) = spec.str("TableClassOverride") {
        entry["ReplicaTableClassSummary"] = json!({"TableClass": class});
        own["TableClassSummary"] = json!({"TableClass": class, "LastUpdateDateTime": now_millis()});
    }
    if let Some(limit) = spec
        .get("OnDemandThroughputOverride")
        .and_then(|o| o.int("MaxReadRequestUnits"))
    {
        let inherited = base["OnDemandThroughput"]["MaxReadRequestUnits"]
            .as_i64()
            .unwrap_or(-1);
        if limit == inherited {
            remove(entry, "OnDemandThroughputOverride");
        } else {
            entry["OnDemandThroughputOverride"] = json!({"MaxReadRequestUnits": limit});
        }
        own["OnDemandThroughput"]["MaxReadRequestUnits"] = limit.into();
    }
    for index in spec
        .get("GlobalSecondaryIndexes")
        .and_then(Value::as_list)
        .unwrap_or_default()
    {
        let name = index.str("IndexName").unwrap_or_default();
        let Some(listed) = entry["GlobalSecondaryIndexes"]
            .as_array_mut()
            .and_then(|l| l.iter_mut().find(|i| i["IndexName"].as_str() == Some(name)))
        else {
            continue;
        };
        if let Some(limit) = index
            .get("OnDemandThroughputOverride")
            .and_then(|o| o.int("MaxReadRequestUnits"))
        {
            listed["OnDemandThroughputOverride"] = json!({"MaxReadRequestUnits": limit});
        }
    }
}

fn remove(value: &mut Json, member: &str) {
    if let Some(map) = value.as_object_mut() {
        map.remove(member);
    }
}

/// Adds a replica in `region`: checks, then the new member's table (with the items) and
/// its entry in every member's list.
fn create(
    tx: &Connection,
    ctx: &Context,
    table: &Table,
    region: &str,
    spec: &Value,
    now: i64,
) -> AwsResult<()> {
    let name = &table.name;
    let there = Context::internal(&ctx.account, region);
    if regions(&table.description).contains(&region) || load_table(tx, &there, name)?.is_some() {
        return Err(already_existed(name));
    }
    if table.description["BillingModeSummary"]["BillingMode"].as_str() != Some("PAY_PER_REQUEST") {
        return Err(AwsError::validation(
            "Table write capacity should either be Pay-Per-Request or AutoScaled.",
        ));
    }
    let encrypted = table.description["SSEDescription"]["KMSMasterKeyArn"].is_string();
    if !encrypted && spec.get("KMSMasterKeyId").is_some() {
        return Err(key_per_replica());
    }
    let mut source = Json::clone(&table.description);
    if streams::enabled(&source).is_none() {
        streams::open(tx, ctx, name, &mut source, "NEW_AND_OLD_IMAGES", now)?;
    }
    let view_type = streams::enabled(&source)
        .map(|(_, v)| v.to_string())
        .unwrap_or_default();

    let mut copy = replica_description(&source, &there, spec);
    streams::open(tx, &there, name, &mut copy, &view_type, now)?;
    let mut new_entry = entry(region, &ctx.account, &copy);
    apply_overrides(&mut new_entry, &mut copy, &source, spec);
    let mut listed = vec![entry(&ctx.region, &ctx.account, &source)];
    for other in regions(&source) {
        let mut member_table = Json::clone(&member(tx, ctx, other, name)?.description);
        listed.push(entry(other, &ctx.account, &member_table));
        push_entry(&mut member_table, new_entry.clone());
        save_description(
            tx,
            &Context::internal(&ctx.account, other),
            name,
            &member_table,
        )?;
    }
    copy["Replicas"] = Json::Array(listed);
    push_entry(&mut source, new_entry);
    save_description(tx, ctx, name, &source)?;
    insert_table(tx, &there, name, &copy, now, &json!([]))?;
    ttl::copy_setting(tx, ctx, &there, name)?;
    tx.prepare_cached(
        "INSERT OR REPLACE INTO ddb_replica_sources (account, table_name, region, source_region, created)
         VALUES (?1, ?2, ?3, ?4, ?5)",
    )?
    .execute(rusqlite::params![ctx.account, name, region, ctx.region, now])?;
    replication::copy_items(tx, ctx, &there, name, now)
}

/// Lists `entry` among a description's replicas and marks the table global.
fn push_entry(description: &mut Json, entry: Json) {
    if !description["Replicas"].is_array() {
        description["Replicas"] = Json::Array(Vec::new());
    }
    if let Some(list) = description["Replicas"].as_array_mut() {
        list.push(entry);
    }
    description["GlobalTableVersion"] = VERSION.into();
}

/// The description of the table a Create makes in `there`: the source's schema, indexes,
/// billing and encryption type, with the region's own ARNs and id; the stream is opened
/// afterwards, and regional settings (deletion protection, restores) are not copied.
fn replica_description(source: &Json, there: &Context, spec: &Value) -> Json {
    let mut copy = source.clone();
    let name = source["TableName"].as_str().unwrap_or_default();
    let arn = table_arn(there, name);
    copy["TableArn"] = arn.clone().into();
    copy["TableId"] = roto_core::dispatch::new_request_id().into();
    for kind in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        for index in copy[kind].as_array_mut().into_iter().flatten() {
            let index_name = index["IndexName"].as_str().unwrap_or_default().to_string();
            index["IndexArn"] = format!("{arn}/index/{index_name}").into();
        }
    }
    for member in [
        "StreamSpecification",
        "LatestStreamArn",
        "LatestStreamLabel",
        "RestoreSummary",
        "Replicas",
    ] {
        remove(&mut copy, member);
    }
    copy["DeletionProtectionEnabled"] = false.into();
    copy["GlobalTableVersion"] = VERSION.into();
    if source["SSEDescription"].is_object() {
        let key = spec
            .str("KMSMasterKeyId")
            .map(|key| resolve_key(there, key));
        let requested = Value::map().with_opt("KMSMasterKeyId", key);
        copy["SSEDescription"] = sse_description(there, &requested, None);
    }
    copy
}

/// A key id as the replica's region reads it: a bare id or alias becomes that region's ARN.
fn resolve_key(there: &Context, key: &str) -> String {
    if key.starts_with("arn:") {
        key.to_string()
    } else if key.starts_with("alias/") {
        format!("arn:aws:kms:{}:{}:{key}", there.region, there.account)
    } else {
        format!("arn:aws:kms:{}:{}:key/{key}", there.region, there.account)
    }
}

/// Changes a member's overrides, in every list that shows them and in its own table.
fn update(
    tx: &Connection,
    ctx: &Context,
    table: &Table,
    region: &str,
    spec: &Value,
) -> AwsResult<()> {
    let name = &table.name;
    let listed = |description: &Json| {
        description["Replicas"]
            .as_array()
            .and_then(|l| l.iter().find(|e| e["RegionName"].as_str() == Some(region)))
            .cloned()
    };
    let Some(mut changed) = listed(&table.description) else {
        return Err(not_part(region));
    };
    if spec.get("KMSMasterKeyId").is_some() {
        return Err(key_per_replica());
    }
    if spec.get("ProvisionedThroughputOverride").is_some() {
        return Err(AwsError::validation(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        ));
    }
    let mut own = Json::clone(&member(tx, ctx, region, name)?.description);
    apply_overrides(&mut changed, &mut own, &table.description, spec);
    let mut members = regions(&table.description);
    members.push(&ctx.region);
    for other in members.into_iter().filter(|r| *r != region) {
        let mut description = Json::clone(&member(tx, ctx, other, name)?.description);
        for entry in description["Replicas"].as_array_mut().into_iter().flatten() {
            if entry["RegionName"].as_str() == Some(region) {
                *entry = changed.clone();
            }
        }
        save_description(
            tx,
            &Context::internal(&ctx.account, other),
            name,
            &description,
        )?;
    }
    save_description(tx, &Context::internal(&ctx.account, region), name, &own)
}

/// Removes the replica in `region`: its table, and its entry from every list.
fn delete(tx: &Connection, ctx: &Context, table: &Table, region: &str, now: i64) -> AwsResult<()> {
    if !regions(&table.description).contains(&region) {
        return Err(not_part(region));
    }
    let gone = member(tx, ctx, region, &table.name)?;
    if gone.deletion_protected() {
        return Err(AwsError::validation(format!(
            "Cannot delete table {} in region {region} because it has deletion protection enabled. Disable deletion protection first.",
            table.name
        )));
    }
    let there = Context::internal(&ctx.account, region);
    check_not_source(tx, &there, &table.name, now)?;
    forget_member(tx, &there, &gone)?;
    remove_table(tx, &there, &gone)
}

/// Takes the local member out of its group; it keeps its items, indexes and stream.
fn disassociate(tx: &Connection, ctx: &Context, table: &Table, now: i64) -> AwsResult<()> {
    if !is_global(&table.description) {
        return Err(not_part(&ctx.region));
    }
    check_not_source(tx, ctx, &table.name, now)?;
    forget_member(tx, ctx, table)?;
    let mut description = Json::clone(&table.description);
    remove(&mut description, "Replicas");
    remove(&mut description, "GlobalTableVersion");
    save_description(tx, ctx, &table.name, &description)
}

/// Refuses the departure of a member that sourced a replica still in the group within the
/// last 24 hours, as AWS does.
fn check_not_source(tx: &Connection, ctx: &Context, name: &str, now: i64) -> AwsResult<()> {
    let sourced = tx
        .prepare_cached(
            "SELECT 1 FROM ddb_replica_sources WHERE account = ?1 AND table_name = ?2
             AND source_region = ?3 AND created > ?4 LIMIT 1",
        )?
        .query_row(
            rusqlite::params![ctx.account, name, ctx.region, now - SOURCE_HOLD_MILLIS],
            |_| Ok(()),
        )
        .optional()?;
    match sourced {
        Some(()) => Err(AwsError::validation(
            "Replica cannot be deleted because it has acted as a source region for new replica(s) being added to the table in the last 24 hours.",
        )),
        None => Ok(()),
    }
}

/// Takes the member in `ctx`'s region out of every other member's list; a member left
/// alone is a regional table again.
fn forget_member(tx: &Connection, ctx: &Context, table: &Table) -> AwsResult<()> {
    for other in regions(&table.description) {
        let at = Context::internal(&ctx.account, other);
        let Some(member_table) = load_table(tx, &at, &table.name)? else {
            continue;
        };
        let mut description = Json::clone(&member_table.description);
        if let Some(list) = description["Replicas"].as_array_mut() {
            list.retain(|e| e["RegionName"].as_str() != Some(&ctx.region));
        }
        if !is_global(&description) {
            remove(&mut description, "Replicas");
            remove(&mut description, "GlobalTableVersion");
        }
        save_description(tx, &at, &table.name, &description)?;
    }
    tx.prepare_cached(
        "DELETE FROM ddb_replica_sources WHERE account = ?1 AND table_name = ?2 AND region = ?3",
    )?
    .execute(rusqlite::params![ctx.account, table.name, ctx.region])?;
    Ok(())
}

/// Lists the global secondary indexes of every member in every member's entries, after an
/// index was created or deleted in all of them (an entry keeps its overrides of the indexes
/// that remain).
pub fn list_indexes(tx: &Connection, ctx: &Context, name: &str) -> AwsResult<()> {
    let table = load_table(tx, ctx, name)?.ok_or_else(|| table_not_found(name))?;
    let mut members = regions(&table.description);
    members.push(&ctx.region);
    let names: Vec<Json> = table.description["GlobalSecondaryIndexes"]
        .as_array()
        .into_iter()
        .flatten()
        .map(|i| i["IndexName"].clone())
        .collect();
    for region in members {
        let at = Context::internal(&ctx.account, region);
        let mut description = Json::clone(&member(tx, ctx, region, name)?.description);
        for entry in description["Replicas"].as_array_mut().into_iter().flatten() {
            let listed: Vec<Json> = names
                .iter()
                .map(|n| {
                    entry["GlobalSecondaryIndexes"]
                        .as_array()
                        .and_then(|l| l.iter().find(|i| &i["IndexName"] == n))
                        .cloned()
                        .unwrap_or_else(|| json!({"IndexName": n}))
                })
                .collect();
            if listed.is_empty() {
                remove(entry, "GlobalSecondaryIndexes");
            } else {
                entry["GlobalSecondaryIndexes"] = Json::Array(listed);
            }
        }
        save_description(tx, &at, name, &description)?;
    }
    Ok(())
}

/// Before DeleteTable removes a member of a global table: AWS's refusal for a recent
/// source, then the member leaves the group (the others stay replicas of each other).
pub fn leave(tx: &Connection, ctx: &Context, table: &Table) -> AwsResult<()> {
    if !is_global(&table.description) {
        return Ok(());
    }
    check_not_source(tx, ctx, &table.name, now_millis())?;
    forget_member(tx, ctx, table)
}
