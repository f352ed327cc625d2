//! UpdateTable: billing and throughput, global secondary indexes, streams, encryption,
//! deletion protection and table class (replicas are [`replicas`]'s).
//!
//! DynamoDB checks an UpdateTable in layers (which members may share one request, then the
//! request against the table as it stands) and refuses the whole request at the first
//! failure, so nothing is ever half applied. Roto checks in that order, then applies the
//! change at once in one store transaction: a new global secondary index is backfilled
//! from the table's items before the call returns, a deleted one loses its rows. The
//! response carries what AWS's carries while the change is in flight (`UPDATING`, the new
//! index `CREATING` with `Backfilling: false`, a deleted one `DELETING`, an index being
//! re-provisioned `UPDATING`, the old throughput and table class), and every later
//! DescribeTable finds the table and its indexes `ACTIVE`, so waiters and polling loops
//! finish at their first look.

use std::collections::BTreeSet;
use std::sync::Arc;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use serde_json::{json, Value as Json};

use super::counters;
use super::key::KeySchema;
use super::tables::{
    check_key_schema, check_projected_total, check_projection, check_throughput, invalid_parameter,
    key_names, load_table, projected_count, save_description, sse_description, table_arn,
    table_name, table_not_found, throughput_description, Table, PAY_PER_REQUEST_SINCE,
};
use super::DynamoDb;
use super::{replicas, rows, streams};

/// The most global secondary indexes a table may have.
const MAX_GLOBAL_INDEXES: usize = 20;

/// The members that change a table; a request needs at least one.
pub(super) const CHANGES: [&str; 15] = [
    "ProvisionedThroughput",
    "BillingMode",
    "StreamSpecification",
    "GlobalSecondaryIndexUpdates",
    "SSESpecification",
    "ReplicaUpdates",
    "TableClass",
    "DeletionProtectionEnabled",
    "MultiRegionConsistency",
    "GlobalTableWitnessUpdates",
    "OnDemandThroughput",
    "WarmThroughput",
    "GlobalTableSettingsReplicationMode",
    "DisassociationProtectionEnabled",
    "VectorIndexUpdates",
];

/// The members whose semantics Roto does not implement (multi-Region strong consistency,
/// warm throughput, vector indexes).
const UNIMPLEMENTED: [&str; 6] = [
    "MultiRegionConsistency",
    "GlobalTableWitnessUpdates",
    "WarmThroughput",
    "GlobalTableSettingsReplicationMode",
    "DisassociationProtectionEnabled",
    "VectorIndexUpdates",
];

/// The members that put the table into `UPDATING` while AWS applies them.
const SLOW_CHANGES: [&str; 4] = [
    "ProvisionedThroughput",
    "BillingMode",
    "StreamSpecification",
    "TableClass",
];

const PAY_PER_REQUEST: &str = "PAY_PER_REQUEST";

/// One entry of `GlobalSecondaryIndexUpdates`.
#[derive(Clone, Copy, PartialEq)]
enum Action {
    Create,
    Update,
    Delete,
}

struct IndexUpdate<'a> {
    action: Action,
    name: &'a str,
    spec: &'a Value,
}

/// Reads `GlobalSecondaryIndexUpdates` and checks its shape.
fn index_updates(input: &Value) -> AwsResult<Vec<IndexUpdate<'_>>> {
    let Some(list) = input
        .get("GlobalSecondaryIndexUpdates")
        .and_then(Value::as_list)
    else {
        return Ok(Vec::new());
    };
    if list.is_empty() {
        return Err(invalid_parameter(
            "List of GlobalSecondaryIndexUpdates is empty",
        ));
    }
    let mut updates: Vec<IndexUpdate<'_>> = Vec::new();
    for entry in list {
        let actions: Vec<IndexUpdate<'_>> = [
            ("Create", Action::Create),
            ("Update", Action::Update),
            ("Delete", Action::Delete),
        ]
        .into_iter()
        .filter_map(|(member, action)| {
            entry.get(member).map(|spec| IndexUpdate {
                action,
                name: spec.str("IndexName").unwrap_or_default(),
                spec,
            })
        })
        .collect();
        let mut actions = actions.into_iter();
        let (Some(update), None) = (actions.next(), actions.next()) else {
            return Err(invalid_parameter(
                if entry.as_map().is_some_and(|m| m.is_empty()) {
                    "One of GlobalSecondaryIndexUpdate.Update, GlobalSecondaryIndexUpdate.Create, GlobalSecondaryIndexUpdate.Delete must not be null"
                } else {
                    "Only one global secondary index action is allowed per GlobalSecondaryIndexUpdate object"
                },
            ));
        };
        if updates.iter().any(|u| u.name == update.name) {
            return Err(invalid_parameter(format!(
                "Only one global secondary index update per index is allowed simultaneously. Index: {}",
                update.name
            )));
        }
        updates.push(update);
    }
    if updates
        .iter()
        .filter(|u| u.action != Action::Update)
        .count()
        > 1
    {
        return Err(online_index_limit());
    }
    Ok(updates)
}

fn online_index_limit() -> AwsError {
    AwsError::new(
        "LimitExceededException",
        "Subscriber limit exceeded: Only 1 online index can be created or deleted simultaneously per table",
    )
    .with_status(400)
}

/// The rules on which members may share one request, checked before the table is read.
fn check_combination(input: &Value, updates: &[IndexUpdate<'_>]) -> AwsResult<()> {
    let present = |member: &str| input.get(member).is_some();
    let with_others = |member: &str, allowed: &[&str]| {
        present(member)
            && CHANGES
                .iter()
                .any(|m| *m != member && !allowed.contains(m) && present(m))
    };
    for (member, what) in [
        ("SSESpecification", "Server-Side Encryption modification"),
        ("TableClass", "TableClass modification"),
        (
            "DeletionProtectionEnabled",
            "DeletionProtection modification",
        ),
    ] {
        if with_others(member, &[]) {
            return Err(invalid_parameter(format!(
                "{what} must be the only operation in the request"
            )));
        }
    }
    if with_others("OnDemandThroughput", &["BillingMode"]) {
        return Err(invalid_parameter(
            "OnDemandThroughput can only be combined with BillingMode in an UpdateTable request",
        ));
    }
    let structural = updates.iter().any(|u| u.action != Action::Update);
    let stream = present("StreamSpecification");
    if stream
        && (present("ProvisionedThroughput") || input.str("BillingMode") == Some("PROVISIONED"))
    {
        return Err(invalid_parameter(
            "You cannot modify stream status while updating table IOPS",
        ));
    }
    if structural && present("ProvisionedThroughput") {
        return Err(invalid_parameter(
            "You cannot create or delete index while updating table IOPS",
        ));
    }
    if structural && stream {
        return Err(invalid_parameter(
            "You cannot create or delete index while changing stream status",
        ));
    }
    if let Some(spec) = input.get("StreamSpecification") {
        let view_type = spec.get("StreamViewType").is_some();
        match spec.bool("StreamEnabled") {
            Some(true) if !view_type => {
                return Err(invalid_parameter(
                    "If stream is being enabled then UpdateViewType is required",
                ))
            }
            Some(false) if view_type => {
                return Err(invalid_parameter(
                    "If stream is being disabled, then UpdateViewType must not be specified",
                ))
            }
            _ => {}
        }
    }
    Ok(())
}

/// The units a `ProvisionedThroughput` member asks for.
fn units(throughput: &Value) -> (i64, i64) {
    (
        throughput.int("ReadCapacityUnits").unwrap_or_default(),
        throughput.int("WriteCapacityUnits").unwrap_or_default(),
    )
}

fn current_units(throughput: &Json) -> (i64, i64) {
    (
        throughput["ReadCapacityUnits"].as_i64().unwrap_or_default(),
        throughput["WriteCapacityUnits"]
            .as_i64()
            .unwrap_or_default(),
    )
}

/// `ValidationException` for a throughput "change" to the values already provisioned.
fn unchanged_throughput(of: &str, (read, write): (i64, i64)) -> AwsError {
    AwsError::validation(format!(
        "The provisioned throughput for {of} will not change. The requested value equals the current value. Current ReadCapacityUnits provisioned for {of}: {read}. Requested ReadCapacityUnits: {read}. Current WriteCapacityUnits provisioned for {of}: {write}. Requested WriteCapacityUnits: {write}. Refer to the Amazon DynamoDB Developer Guide for current limits and how to request higher limits."
    ))
}

/// Sets new provisioned units, recording when they last rose or fell as DynamoDB does
/// (`NumberOfDecreasesToday` counts decreases in the current UTC day).
fn provision(throughput: &mut Json, (read, write): (i64, i64), now: i64) {
    const DAY: i64 = 86_400_000;
    let (old_read, old_write) = current_units(throughput);
    if read > old_read || write > old_write {
        throughput["LastIncreaseDateTime"] = now.into();
    }
    if read < old_read || write < old_write {
        let same_day = throughput["LastDecreaseDateTime"]
            .as_i64()
            .is_some_and(|last| last.div_euclid(DAY) == now.div_euclid(DAY));
        let before = if same_day {
            throughput["NumberOfDecreasesToday"]
                .as_i64()
                .unwrap_or_default()
        } else {
            0
        };
        throughput["NumberOfDecreasesToday"] = (before + 1).into();
        throughput["LastDecreaseDateTime"] = now.into();
    }
    throughput["ReadCapacityUnits"] = read.into();
    throughput["WriteCapacityUnits"] = write.into();
}

fn global_indexes(description: &mut Json) -> &mut Vec<Json> {
    if !description["GlobalSecondaryIndexes"].is_array() {
        description["GlobalSecondaryIndexes"] = Json::Array(Vec::new());
    }
    match &mut description["GlobalSecondaryIndexes"] {
        Json::Array(list) => list,
        _ => unreachable!("set to an array above"),
    }
}

fn index_names(description: &Json, kind: &str) -> Vec<String> {
    description[kind]
        .as_array()
        .map(|list| {
            list.iter()
                .filter_map(|i| i["IndexName"].as_str().map(str::to_string))
                .collect()
        })
        .unwrap_or_default()
}

/// Drops attribute definitions no key of the table or its indexes uses any more, as
/// DynamoDB does after an index is deleted.
fn prune_definitions(description: &mut Json) {
    let mut used = BTreeSet::new();
    let mut collect = |schema: &Json| {
        for key in schema.as_array().into_iter().flatten() {
            if let Some(name) = key["AttributeName"].as_str() {
                used.insert(name.to_string());
            }
        }
    };
    collect(&description["KeySchema"]);
    for kind in ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"] {
        for index in description[kind].as_array().into_iter().flatten() {
            collect(&index["KeySchema"]);
        }
    }
    if let Json::Array(definitions) = &mut description["AttributeDefinitions"] {
        definitions.retain(|d| {
            d["AttributeName"]
                .as_str()
                .is_some_and(|n| used.contains(n))
        });
    }
}

/// What the request changes, checked against the table, ready to apply.
struct Plan {
    to_on_demand: bool,
    on_demand: bool,
    /// A global index to create: its stored description and key schema.
    created: Option<(Json, KeySchema)>,
    /// Attribute definitions the new index adds.
    new_definitions: Vec<Json>,
}

impl DynamoDb {
    pub(super) fn update_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        if input.get("ReplicaUpdates").is_some() {
            return self.update_replicas(ctx, &name, input);
        }
        if let Some(member) = UNIMPLEMENTED.iter().find(|m| input.get(m).is_some()) {
            return Err(AwsError::new(
                "NotImplemented",
                format!("The {member} parameter of UpdateTable is not implemented by Roto yet"),
            )
            .with_status(501));
        }
        if !CHANGES.iter().any(|m| input.get(m).is_some()) {
            return Err(AwsError::validation(
                "At least one of ProvisionedThroughput, BillingMode, UpdateStreamEnabled, GlobalSecondaryIndexUpdates, SSESpecification, ReplicaUpdates, MultiAccountReplicaReady, ReplicaTransitRoleArn, MultiRegionConsistency, DeletionProtectionEnabled, OnDemandThroughput, WarmThroughput or TableClass is required",
            ));
        }
        let updates = index_updates(input)?;
        check_combination(input, &updates)?;
        let now = now_millis();
        let (table, shown, counts) = self.env.store.transaction(|tx| {
            let mut table = load_table(tx, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            let plan = plan(ctx, &table, input, &updates)?;
            let shown = apply(tx, ctx, &mut table, input, &updates, &plan, now)?;
            save_description(tx, ctx, &name, &table.description)?;
            update_members(tx, ctx, &table, input, now)?;
            let counts = counters::read(tx, ctx, &name)?.unwrap_or_default();
            Ok::<_, AwsError>((table, shown, counts))
        })?;
        let slow = SLOW_CHANGES.iter().any(|m| input.get(m).is_some())
            || updates.iter().any(|u| u.action != Action::Update);
        let response = Table {
            description: shown.into(),
            ..table
        };
        Ok(Value::map().with(
            "TableDescription",
            response.describe(if slow { "UPDATING" } else { "ACTIVE" }, counts),
        ))
    }
}

/// The members of an UpdateTable that DynamoDB applies to every member of a global table
/// (the last, the attribute definitions a new index needs, changes nothing alone).
const GROUP_WIDE: [&str; 6] = [
    "GlobalSecondaryIndexUpdates",
    "TableClass",
    "BillingMode",
    "ProvisionedThroughput",
    "OnDemandThroughput",
    "AttributeDefinitions",
];

/// Applies a global table's group-wide changes (indexes, table class, billing and
/// throughput) to its other members, as DynamoDB does whichever member is asked.
fn update_members(
    tx: &rusqlite::Connection,
    ctx: &Context,
    table: &Table,
    input: &Value,
    now: i64,
) -> AwsResult<()> {
    if !replicas::is_global(&table.description)
        || !GROUP_WIDE[..5].iter().any(|m| input.get(m).is_some())
    {
        return Ok(());
    }
    let mut shared = Value::map();
    for member in GROUP_WIDE {
        if let Some(value) = input.get(member) {
            shared.insert(member, value.clone());
        }
    }
    let updates = index_updates(&shared)?;
    for region in replicas::regions(&table.description) {
        let there = Context::internal(&ctx.account, region);
        let mut member = load_table(tx, &there, &table.name)?
            .ok_or_else(|| AwsError::internal("a replica's table is missing"))?;
        let plan = plan(&there, &member, &shared, &updates)?;
        apply(tx, &there, &mut member, &shared, &updates, &plan, now)?;
        save_description(tx, &there, &table.name, &member.description)?;
    }
    replicas::list_indexes(tx, ctx, &table.name)
}

/// Checks the request against the table as it stands.
fn plan(
    ctx: &Context,
    table: &Table,
    input: &Value,
    updates: &[IndexUpdate<'_>],
) -> AwsResult<Plan> {
    let description = &table.description;
    let was_on_demand =
        description["BillingModeSummary"]["BillingMode"].as_str() == Some(PAY_PER_REQUEST);
    let on_demand = input
        .str("BillingMode")
        .map_or(was_on_demand, |m| m == PAY_PER_REQUEST);
    let throughput = input.get("ProvisionedThroughput");
    if on_demand && throughput.is_some() {
        return Err(invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        ));
    }
    if !on_demand && was_on_demand && throughput.is_none() {
        return Err(invalid_parameter(
            "ProvisionedThroughput must be specified when BillingMode is PROVISIONED",
        ));
    }
    check_throughput(throughput)?;
    if let Some(throughput) = throughput.filter(|_| !was_on_demand) {
        let asked = units(throughput);
        if asked == current_units(&description["ProvisionedThroughput"]) {
            return Err(unchanged_throughput("the table", asked));
        }
    }
    if let Some(on_demand_throughput) = input.get("OnDemandThroughput").filter(|_| !on_demand) {
        let member = if on_demand_throughput.get("MaxReadRequestUnits").is_some() {
            "MaxReadRequestUnits"
        } else {
            "MaxWriteRequestUnits"
        };
        return Err(invalid_parameter(format!(
            "{member} for OnDemandThroughput cannot be specified when the table BillingMode is PROVISIONED"
        )));
    }

    let globals = index_names(description, "GlobalSecondaryIndexes");
    let locals = index_names(description, "LocalSecondaryIndexes");
    let mut created = None;
    let mut new_definitions = Vec::new();
    for update in updates {
        let name = update.name;
        let spec = update.spec;
        let index_throughput = spec.get("ProvisionedThroughput");
        match update.action {
            Action::Create => {
                if globals.iter().chain(&locals).any(|n| n == name) {
                    return Err(AwsError::validation(
                        "Attempting to create an index which already exists",
                    ));
                }
                let Some(requested) = input.get("AttributeDefinitions") else {
                    return Err(invalid_parameter(format!(
                        "AttributeDefinitions is not specified for index: {name}"
                    )));
                };
                let existing = description["AttributeDefinitions"]
                    .as_array()
                    .cloned()
                    .unwrap_or_default();
                let mut definitions = existing.clone();
                for definition in requested.as_list().unwrap_or_default() {
                    let attribute = definition.str("AttributeName").unwrap_or_default();
                    if !definitions
                        .iter()
                        .any(|d| d["AttributeName"].as_str() == Some(attribute))
                    {
                        definitions.push(definition.to_json());
                    }
                }
                let key_schema = spec
                    .get("KeySchema")
                    .cloned()
                    .unwrap_or(Value::List(vec![]));
                let defined: Vec<String> = definitions
                    .iter()
                    .filter_map(|d| d["AttributeName"].as_str().map(str::to_string))
                    .collect();
                check_key_schema(&key_schema, &defined)?;
                check_projection(spec)?;
                if on_demand && index_throughput.is_some() {
                    return Err(invalid_parameter(format!(
                        "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified for index: {name} when BillingMode is PAY_PER_REQUEST"
                    )));
                }
                if !on_demand && index_throughput.is_none() {
                    return Err(invalid_parameter(format!(
                        "ProvisionedThroughput must be specified for index: {name}"
                    )));
                }
                check_throughput(index_throughput)?;
                if globals.len() >= MAX_GLOBAL_INDEXES {
                    return Err(AwsError::new(
                        "LimitExceededException",
                        format!(
                            "One or more parameter values were invalid: GlobalSecondaryIndex count exceeds the per-table limit of {MAX_GLOBAL_INDEXES}"
                        ),
                    )
                    .with_status(400));
                }
                let keys = key_names(&key_schema);
                new_definitions = definitions
                    .into_iter()
                    .filter(|d| {
                        !existing.contains(d)
                            && d["AttributeName"]
                                .as_str()
                                .is_some_and(|n| keys.iter().any(|k| k == n))
                    })
                    .collect();
                let mut index = json!({
                    "IndexName": name,
                    "KeySchema": key_schema.to_json(),
                    "Projection": (spec.get("Projection").unwrap_or(&Value::map())).to_json(),
                    "IndexStatus": "ACTIVE",
                    "ProvisionedThroughput": throughput_description(index_throughput),
                    "IndexSizeBytes": 0,
                    "ItemCount": 0,
                    "IndexArn": format!("{}/index/{name}", table_arn(ctx, &table.name)),
                });
                if let Some(limits) = spec.get("OnDemandThroughput") {
                    index["OnDemandThroughput"] = limits.to_json();
                }
                let projected: usize = ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"]
                    .iter()
                    .filter_map(|kind| description[*kind].as_array())
                    .flatten()
                    .map(projected_count)
                    .sum();
                check_projected_total(projected + projected_count(&index))?;
                let mut all_definitions = description["AttributeDefinitions"].clone();
                if let Json::Array(list) = &mut all_definitions {
                    list.extend(new_definitions.iter().cloned());
                }
                let schema = KeySchema::from_json(&index["KeySchema"], &all_definitions)
                    .ok_or_else(|| AwsError::internal("built an index without a key schema"))?;
                created = Some((index, schema));
            }
            Action::Update | Action::Delete => {
                let verb = if update.action == Action::Update {
                    "update"
                } else {
                    "delete"
                };
                if locals.iter().any(|n| n == name) {
                    return Err(AwsError::validation(format!(
                        "Cannot {verb} an index that is not a GlobalSecondaryIndex: {name}"
                    )));
                }
                if !globals.iter().any(|n| n == name) {
                    return Err(AwsError::new(
                        "ResourceNotFoundException",
                        format!(
                            "Requested resource not found: Index {name} for table {}",
                            table.name
                        ),
                    )
                    .with_status(400));
                }
            }
        }
        if update.action == Action::Update {
            if on_demand && index_throughput.is_some() {
                return Err(invalid_parameter(format!(
                    "The only Updates for index: {name} when TableThroughputMode is PAY_PER_REQUEST can be to OnDemandThroughput, WarmThroughput"
                )));
            }
            if !on_demand && index_throughput.is_none() {
                return Err(invalid_parameter(format!(
                    "ProvisionedThroughput must be specified for index: {name}"
                )));
            }
            check_throughput(index_throughput)?;
            if let Some(asked) = index_throughput.filter(|_| !was_on_demand).map(units) {
                let current = description["GlobalSecondaryIndexes"]
                    .as_array()
                    .into_iter()
                    .flatten()
                    .find(|i| i["IndexName"].as_str() == Some(name))
                    .map(|i| current_units(&i["ProvisionedThroughput"]));
                if current == Some(asked) {
                    return Err(unchanged_throughput(&format!("the index {name}"), asked));
                }
            }
        }
    }
    if was_on_demand && !on_demand {
        let deleted = |n: &str| {
            updates
                .iter()
                .any(|u| u.action == Action::Delete && u.name == n)
        };
        let provisioned = |n: &str| {
            updates.iter().any(|u| {
                u.action == Action::Update
                    && u.name == n
                    && u.spec.get("ProvisionedThroughput").is_some()
            })
        };
        if let Some(missing) = globals.iter().find(|n| !deleted(n) && !provisioned(n)) {
            return Err(invalid_parameter(format!(
                "ProvisionedThroughput must be specified for index: {missing}"
            )));
        }
    }

    if let Some(spec) = input.get("StreamSpecification") {
        if spec.bool("StreamEnabled") == Some(false) && replicas::is_global(description) {
            return Err(invalid_parameter(
                "Disabling Stream is not allowed for a Global Table replica.",
            ));
        }
        let enabled = description["StreamSpecification"]["StreamEnabled"].as_bool() == Some(true);
        match spec.bool("StreamEnabled") {
            Some(true) if enabled => {
                return Err(AwsError::validation(format!(
                    "Table already has an enabled stream: TableName: {}",
                    table.name
                )))
            }
            Some(false) if !enabled => {
                return Err(AwsError::validation(format!(
                    "Table has no stream to disable: TableName: {}",
                    table.name
                )))
            }
            _ => {}
        }
    }
    if let Some(sse) = input.get("SSESpecification") {
        check_encryption(description, sse)?;
    }
    Ok(Plan {
        to_on_demand: on_demand && !was_on_demand,
        on_demand,
        created,
        new_definitions,
    })
}

/// The checks on an `SSESpecification` against the table's current encryption.
fn check_encryption(description: &Json, sse: &Value) -> AwsResult<()> {
    let enabled = sse.bool("Enabled") == Some(true);
    let current = description["SSEDescription"]["KMSMasterKeyArn"].as_str();
    if !enabled {
        for member in ["SSEType", "KMSMasterKeyId"] {
            if sse.get(member).is_some() {
                return Err(invalid_parameter(format!(
                    "{member} can not be specified if Enabled is false"
                )));
            }
        }
        if current.is_none() {
            return Err(invalid_parameter("Table is already encrypted by default"));
        }
        return Ok(());
    }
    if sse.str("SSEType") == Some("AES256") {
        return Err(invalid_parameter("SSEType AES256 is not supported"));
    }
    if sse.get("KMSMasterKeyId").is_some() && sse.str("SSEType") != Some("KMS") {
        return Err(invalid_parameter(
            "SSEType KMS is required if KMSMasterKeyId is specified",
        ));
    }
    if current.is_some() && sse.str("KMSMasterKeyId") == current {
        return Err(invalid_parameter(
            "Table is already encrypted with given KMSMasterKeyId. Use KMSMasterKeyId parameter if you want to change Master Key",
        ));
    }
    Ok(())
}

/// Applies a checked request to the table (its description and its rows); returns the
/// description the response shows.
fn apply(
    tx: &rusqlite::Connection,
    ctx: &Context,
    table: &mut Table,
    input: &Value,
    updates: &[IndexUpdate<'_>],
    plan: &Plan,
    now: i64,
) -> AwsResult<Json> {
    let before = Json::clone(&table.description);
    let description = Arc::make_mut(&mut table.description);

    if let Some(mode) = input.str("BillingMode") {
        description["BillingModeSummary"]["BillingMode"] = mode.into();
    }
    if plan.to_on_demand {
        description["BillingModeSummary"][PAY_PER_REQUEST_SINCE] = now.into();
        provision(&mut description["ProvisionedThroughput"], (0, 0), now);
        for index in global_indexes(description).iter_mut() {
            provision(&mut index["ProvisionedThroughput"], (0, 0), now);
        }
    }
    if !plan.on_demand {
        if let Some(map) = description.as_object_mut() {
            map.remove("OnDemandThroughput");
        }
        for index in global_indexes(description).iter_mut() {
            if let Some(map) = index.as_object_mut() {
                map.remove("OnDemandThroughput");
            }
        }
    }
    if let Some(throughput) = input.get("ProvisionedThroughput") {
        provision(
            &mut description["ProvisionedThroughput"],
            units(throughput),
            now,
        );
    }
    if let Some(limits) = input.get("OnDemandThroughput") {
        description["OnDemandThroughput"] = limits.to_json();
    }

    let mut shown_updates: Vec<(String, &str)> = Vec::new();
    for update in updates {
        match update.action {
            Action::Create => {
                let (index, schema) = plan
                    .created
                    .clone()
                    .ok_or_else(|| AwsError::internal("a planned index is missing"))?;
                if let Json::Array(definitions) = &mut description["AttributeDefinitions"] {
                    definitions.extend(plan.new_definitions.iter().cloned());
                }
                global_indexes(description).push(index);
                rows::fill_index(tx, ctx, &table.name, update.name, &schema)?;
                shown_updates.push((update.name.to_string(), "CREATING"));
            }
            Action::Update => {
                if let Some(index) = global_indexes(description)
                    .iter_mut()
                    .find(|i| i["IndexName"].as_str() == Some(update.name))
                {
                    if let Some(throughput) = update.spec.get("ProvisionedThroughput") {
                        provision(&mut index["ProvisionedThroughput"], units(throughput), now);
                    }
                    if let Some(limits) = update.spec.get("OnDemandThroughput") {
                        index["OnDemandThroughput"] = limits.to_json();
                    }
                }
                shown_updates.push((update.name.to_string(), "UPDATING"));
            }
            Action::Delete => {
                global_indexes(description)
                    .retain(|i| i["IndexName"].as_str() != Some(update.name));
                rows::drop_index(tx, ctx, &table.name, update.name)?;
                shown_updates.push((update.name.to_string(), "DELETING"));
            }
        }
    }
    if global_indexes(description).is_empty() {
        if let Some(map) = description.as_object_mut() {
            map.remove("GlobalSecondaryIndexes");
        }
    }
    prune_definitions(description);

    if let Some(spec) = input.get("StreamSpecification") {
        match spec.str("StreamViewType") {
            Some(view_type) => streams::open(tx, ctx, &table.name, description, view_type, now)?,
            None => {
                streams::close(tx, ctx, description, now)?;
                if let Some(map) = description.as_object_mut() {
                    map.remove("StreamSpecification");
                }
            }
        }
    }
    if let Some(sse) = input.get("SSESpecification") {
        if sse.bool("Enabled") == Some(true) {
            let current = description["SSEDescription"]["KMSMasterKeyArn"]
                .as_str()
                .map(str::to_string);
            description["SSEDescription"] = sse_description(ctx, sse, current.as_deref());
        } else if let Some(map) = description.as_object_mut() {
            map.remove("SSEDescription");
        }
    }
    if let Some(class) = input.str("TableClass") {
        let current = description["TableClassSummary"]["TableClass"]
            .as_str()
            .unwrap_or("STANDARD");
        if class != current {
            description["TableClassSummary"] =
                json!({"TableClass": class, "LastUpdateDateTime": now});
        }
    }
    if let Some(protected) = input.bool("DeletionProtectionEnabled") {
        description["DeletionProtectionEnabled"] = protected.into();
    }

    Ok(response_description(
        &before,
        description,
        input,
        &shown_updates,
    ))
}

/// The description the UpdateTable response shows: the new one, with what AWS reports
/// while the change is in flight.
fn response_description(
    before: &Json,
    after: &Json,
    input: &Value,
    updates: &[(String, &str)],
) -> Json {
    let mut shown = after.clone();
    if input.get("ProvisionedThroughput").is_some() {
        shown["ProvisionedThroughput"] = before["ProvisionedThroughput"].clone();
    }
    if input.get("TableClass").is_some() {
        match before.get("TableClassSummary") {
            Some(summary) => shown["TableClassSummary"] = summary.clone(),
            None => {
                if let Some(map) = shown.as_object_mut() {
                    map.remove("TableClassSummary");
                }
            }
        }
    }
    let old_index = |name: &str| {
        before["GlobalSecondaryIndexes"]
            .as_array()
            .into_iter()
            .flatten()
            .find(|i| i["IndexName"].as_str() == Some(name))
            .cloned()
    };
    for (name, status) in updates {
        let list = global_indexes(&mut shown);
        match *status {
            "DELETING" => {
                if let Some(mut index) = old_index(name) {
                    index["IndexStatus"] = "DELETING".into();
                    list.push(index);
                }
            }
            _ => {
                if let Some(index) = list
                    .iter_mut()
                    .find(|i| i["IndexName"].as_str() == Some(name.as_str()))
                {
                    index["IndexStatus"] = (*status).into();
                    if *status == "CREATING" {
                        index["Backfilling"] = false.into();
                    }
                    if *status == "UPDATING" {
                        if let Some(old) = old_index(name) {
                            index["ProvisionedThroughput"] = old["ProvisionedThroughput"].clone();
                        }
                    }
                }
            }
        }
    }
    shown
}
