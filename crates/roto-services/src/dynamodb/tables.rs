//! Tables: CreateTable, DescribeTable, ListTables, DeleteTable, and the table record.
//!
//! A table row keeps the static part of its `TableDescription` as JSON (what CreateTable
//! fixed: key schema, indexes, billing, streams), plus the live counters DescribeTable
//! reports (`ItemCount`, `TableSizeBytes`, see [`counters`](super::counters)), kept exact
//! by every write so describing a table never scans its items. Tables are created ACTIVE: real DynamoDB passes through
//! CREATING, but nothing a client waits for is lost by arriving there at once.

use std::sync::{Arc, Mutex};

use roto_core::dispatch::new_request_id;
use roto_core::store::Cached;
use roto_core::timestamp::now_millis;
use roto_core::{validate, AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};
use serde_json::{json, Map, Value as Json};

use super::counters::{self, Counts};
use super::key::KeySchema;
use super::streams;
use super::DynamoDb;
use super::{
    backups, contributor_insights, kinesis_destinations, replicas, replication, resource_policies,
    ttl,
};

/// The longest page ListTables returns.
const LIST_TABLES_MAX: i64 = 100;

/// A table's record.
pub struct Table {
    /// The table name.
    pub name: String,
    /// The static part of the description (shared with the cache of parsed descriptions).
    pub description: Arc<Json>,
    /// Creation time, epoch millis.
    pub created: i64,
    /// The primary key (shared with the cache of parsed descriptions).
    pub schema: Arc<KeySchema>,
    /// The Time to Live attribute, while Time to Live is enabled.
    pub ttl_attribute: Option<String>,
    /// The point-in-time recovery period in days, while recovery is enabled.
    pub recovery_days: Option<i64>,
}

impl Table {
    /// The secondary indexes' names and key schemas.
    pub fn indexes(&self) -> Vec<(String, KeySchema)> {
        let definitions = &self.description["AttributeDefinitions"];
        ["GlobalSecondaryIndexes", "LocalSecondaryIndexes"]
            .iter()
            .filter_map(|kind| self.description[*kind].as_array())
            .flatten()
            .filter_map(|index| {
                let name = index["IndexName"].as_str()?.to_string();
                Some((
                    name,
                    KeySchema::from_json(&index["KeySchema"], definitions)?,
                ))
            })
            .collect()
    }

    /// Whether the table is protected against deletion.
    pub fn deletion_protected(&self) -> bool {
        self.description["DeletionProtectionEnabled"].as_bool() == Some(true)
    }

    /// The `TableDescription` in the given status, with the table's live figures.
    pub fn describe(&self, status: &str, counts: Counts) -> Value {
        let mut out = Value::from_json(&self.description);
        out.insert("TableStatus", status);
        out.insert("CreationDateTime", Value::Timestamp(self.created));
        out.insert("ItemCount", counts.items);
        out.insert("TableSizeBytes", counts.bytes);
        if let Some(summary) = member(&mut out, "BillingModeSummary") {
            if summary.str("BillingMode") == Some("PAY_PER_REQUEST")
                && summary.get(PAY_PER_REQUEST_SINCE).is_none()
            {
                summary.insert(PAY_PER_REQUEST_SINCE, self.created);
            }
            as_timestamps(summary, &[PAY_PER_REQUEST_SINCE]);
        }
        if let Some(summary) = member(&mut out, "TableClassSummary") {
            as_timestamps(summary, &["LastUpdateDateTime"]);
        }
        if let Some(summary) = member(&mut out, "RestoreSummary") {
            as_timestamps(summary, &["RestoreDateTime"]);
        }
        let throughput_times = ["LastIncreaseDateTime", "LastDecreaseDateTime"];
        if let Some(throughput) = member(&mut out, "ProvisionedThroughput") {
            as_timestamps(throughput, &throughput_times);
        }
        if let Some(Value::List(indexes)) = member(&mut out, "GlobalSecondaryIndexes") {
            for throughput in indexes
                .iter_mut()
                .filter_map(|i| member(i, "ProvisionedThroughput"))
            {
                as_timestamps(throughput, &throughput_times);
            }
        }
        out
    }
}

/// When a table last became on-demand (epoch millis in the stored description).
pub const PAY_PER_REQUEST_SINCE: &str = "LastUpdateToPayPerRequestDateTime";

fn member<'v>(value: &'v mut Value, name: &str) -> Option<&'v mut Value> {
    match value {
        Value::Map(map) => map.get_mut(name),
        _ => None,
    }
}

/// Turns members the stored description keeps as epoch millis into timestamps.
fn as_timestamps(value: &mut Value, members: &[&str]) {
    for name in members {
        if let Some(slot) = member(value, name) {
            if let Value::Integer(millis) = *slot {
                *slot = Value::Timestamp(millis);
            }
        }
    }
}

/// The table ARN.
pub fn table_arn(ctx: &Context, name: &str) -> String {
    format!(
        "arn:aws:dynamodb:{}:{}:table/{name}",
        ctx.region, ctx.account
    )
}

/// `ResourceNotFoundException` as the table operations word it.
pub fn table_not_found(name: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Requested resource not found: Table: {name} not found"),
    )
    .with_status(400)
}

/// `ResourceNotFoundException` as the item operations word it.
pub fn resource_not_found() -> AwsError {
    AwsError::new("ResourceNotFoundException", "Requested resource not found").with_status(400)
}

pub(super) fn invalid_parameter(message: impl AsRef<str>) -> AwsError {
    AwsError::validation(format!(
        "One or more parameter values were invalid: {}",
        message.as_ref()
    ))
}

/// Checks a table or index name against DynamoDB's rules (3-255 of `[a-zA-Z0-9_.-]`).
fn name_violations(value: &str, member: &str) -> Vec<String> {
    let mut out = Vec::new();
    let shown = || format!("Value '{value}' at '{member}' failed to satisfy constraint");
    if !value
        .bytes()
        .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b))
    {
        out.push(format!(
            "{}: Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+",
            shown()
        ));
    }
    let len = value.chars().count();
    if len < 3 {
        out.push(format!(
            "{}: Member must have length greater than or equal to 3",
            shown()
        ));
    }
    if len > 255 {
        out.push(format!(
            "{}: Member must have length less than or equal to 255",
            shown()
        ));
    }
    out
}

/// Checks a name (of a table, index or backup) against DynamoDB's rules, reporting the
/// violations under `member`.
pub(super) fn check_name(value: &str, member: &str) -> AwsResult<()> {
    match validate::message(&name_violations(value, member)) {
        Some(message) => Err(AwsError::validation(message)),
        None => Ok(()),
    }
}

/// The table name a `TableName` member names (a name, or a table ARN), validated.
pub fn table_name(input: &Value) -> AwsResult<String> {
    let given = input.str("TableName").unwrap_or_default();
    let name = match given.strip_prefix("arn:") {
        Some(rest) => rest
            .split_once(":table/")
            .map(|(_, name)| name)
            .filter(|_| rest.split(':').nth(1) == Some("dynamodb"))
            .unwrap_or(given),
        None => given,
    };
    check_name(name, "tableName")?;
    Ok(name.to_string())
}

pub(super) fn key_names(key_schema: &Value) -> Vec<String> {
    key_schema
        .as_list()
        .unwrap_or_default()
        .iter()
        .map(|k| k.str("AttributeName").unwrap_or_default().to_string())
        .collect()
}

/// The checks every key schema (table or index) passes.
pub(super) fn check_key_schema(key_schema: &Value, definitions: &[String]) -> AwsResult<()> {
    let keys = key_names(key_schema);
    if keys.iter().any(|k| !definitions.contains(k)) {
        return Err(invalid_parameter(format!(
            "Some index key attributes are not defined in AttributeDefinitions. Keys: [{}], AttributeDefinitions: [{}]",
            keys.join(", "),
            definitions.join(", ")
        )));
    }
    if keys.len() == 2 && keys[0] == keys[1] {
        return Err(AwsError::validation(
            "Both the Hash Key and the Range Key element in the KeySchema have the same name",
        ));
    }
    let types: Vec<&str> = key_schema
        .as_list()
        .unwrap_or_default()
        .iter()
        .map(|k| k.str("KeyType").unwrap_or_default())
        .collect();
    if types.first() != Some(&"HASH") {
        return Err(AwsError::validation(
            "Invalid KeySchema: The first KeySchemaElement is not a HASH key type",
        ));
    }
    if types.get(1).is_some_and(|t| *t != "RANGE") {
        return Err(AwsError::validation(
            "Invalid KeySchema: The second KeySchemaElement is not a RANGE key type",
        ));
    }
    Ok(())
}

pub(super) fn check_projection(index: &Value) -> AwsResult<()> {
    let projection = index.get("Projection");
    let Some(projection_type) = projection.and_then(|p| p.str("ProjectionType")) else {
        return Err(invalid_parameter("Unknown ProjectionType: null"));
    };
    let attributes = projection.and_then(|p| p.get("NonKeyAttributes"));
    if projection_type != "INCLUDE" && attributes.is_some() {
        return Err(invalid_parameter(format!(
            "ProjectionType is {projection_type}, but NonKeyAttributes is specified"
        )));
    }
    if projection_type == "INCLUDE" && attributes.is_none() {
        return Err(invalid_parameter(
            "ProjectionType is INCLUDE, but NonKeyAttributes is not specified",
        ));
    }
    let names: Vec<&str> = attributes
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .filter_map(Value::as_str)
        .collect();
    if let Some(twice) = names
        .iter()
        .enumerate()
        .find_map(|(i, n)| names[..i].contains(n).then_some(n))
    {
        return Err(invalid_parameter(format!(
            "Duplicate attribute name in NonKeyAttributes: {twice}"
        )));
    }
    Ok(())
}

/// DynamoDB's limit on the non-key attributes all of a table's indexes project together
/// (an attribute projected by two indexes counts twice).
const MAX_PROJECTED_ATTRIBUTES: usize = 100;

/// The non-key attributes `index` (a request's index or a stored description) projects.
pub(super) fn projected_count(index: &Json) -> usize {
    index["Projection"]["NonKeyAttributes"]
        .as_array()
        .map_or(0, Vec::len)
}

pub(super) fn check_projected_total(total: usize) -> AwsResult<()> {
    if total > MAX_PROJECTED_ATTRIBUTES {
        return Err(invalid_parameter(format!(
            "Number of projected attributes in all indexes exceeds limit of {MAX_PROJECTED_ATTRIBUTES}, provided: {total}"
        )));
    }
    Ok(())
}

pub(super) fn throughput_description(throughput: Option<&Value>) -> Json {
    let units = |member: &str| throughput.and_then(|t| t.int(member)).unwrap_or_default();
    json!({
        "NumberOfDecreasesToday": 0,
        "ReadCapacityUnits": units("ReadCapacityUnits"),
        "WriteCapacityUnits": units("WriteCapacityUnits"),
    })
}

pub(super) fn check_throughput(throughput: Option<&Value>) -> AwsResult<()> {
    for member in ["ReadCapacityUnits", "WriteCapacityUnits"] {
        if let Some(units) = throughput.and_then(|t| t.int(member)) {
            if units > 1_000_000_000_000 {
                return Err(AwsError::validation(format!(
                    "Given value {units} for {member} is out of bounds"
                )));
            }
        }
    }
    Ok(())
}

/// The `SSEDescription` of a KMS-encrypted table: the key the specification names, else
/// the table's current key (`current`), else a new AWS managed key.
pub(super) fn sse_description(ctx: &Context, sse: &Value, current: Option<&str>) -> Json {
    let key = match (sse.str("KMSMasterKeyId"), current) {
        (Some(key), _) | (None, Some(key)) => key.to_string(),
        (None, None) => format!(
            "arn:aws:kms:{}:{}:key/{}",
            ctx.region,
            ctx.account,
            new_request_id()
        ),
    };
    json!({"Status": "ENABLED", "SSEType": "KMS", "KMSMasterKeyArn": key})
}

/// Validates a CreateTable request and builds the static description.
pub(super) fn build_description(ctx: &Context, name: &str, input: &Value) -> AwsResult<Json> {
    let (Some(key_schema), Some(definitions)) =
        (input.get("KeySchema"), input.get("AttributeDefinitions"))
    else {
        let missing: Vec<String> = [
            ("keySchema", "KeySchema"),
            ("attributeDefinitions", "AttributeDefinitions"),
        ]
        .iter()
        .filter(|(_, member)| input.get(member).is_none())
        .map(|(path, _)| {
            format!("Value null at '{path}' failed to satisfy constraint: Member must not be null")
        })
        .collect();
        return Err(AwsError::validation(
            validate::message(&missing).unwrap_or_default(),
        ));
    };
    let on_demand = input.str("BillingMode") == Some("PAY_PER_REQUEST");
    let throughput = input.get("ProvisionedThroughput");
    if on_demand && throughput.is_some() {
        return Err(invalid_parameter(
            "Neither ReadCapacityUnits nor WriteCapacityUnits can be specified when BillingMode is PAY_PER_REQUEST",
        ));
    }
    if !on_demand && throughput.is_none() {
        return Err(invalid_parameter(
            "ReadCapacityUnits and WriteCapacityUnits must both be specified when BillingMode is PROVISIONED",
        ));
    }
    check_throughput(throughput)?;

    let defined = key_names_of_definitions(definitions);
    let keys = key_names(key_schema);
    if keys.len() > defined.len() {
        return Err(AwsError::validation(
            "Invalid KeySchema: Some index key attribute have no definition",
        ));
    }
    check_key_schema(key_schema, &defined)?;
    let lsis = input.get("LocalSecondaryIndexes");
    let gsis = input.get("GlobalSecondaryIndexes");
    if lsis.is_none() && gsis.is_none() && keys.len() != defined.len() {
        return Err(invalid_parameter(
            "Number of attributes in KeySchema does not exactly match number of attributes defined in AttributeDefinitions",
        ));
    }

    let arn = table_arn(ctx, name);
    let mut used = keys.clone();
    let mut index_names: Vec<String> = Vec::new();
    let mut seen_name = |index_name: &str| -> AwsResult<()> {
        if index_names.iter().any(|n| n == index_name) {
            return Err(invalid_parameter(format!(
                "Duplicate index name: {index_name}"
            )));
        }
        index_names.push(index_name.to_string());
        Ok(())
    };
    let mut lsi_out = Vec::new();
    if let Some(lsis) = lsis {
        let list = lsis.as_list().unwrap_or_default();
        if list.is_empty() {
            return Err(invalid_parameter("List of LocalSecondaryIndexes is empty"));
        }
        if keys.len() != 2 {
            return Err(invalid_parameter(
                "Table KeySchema does not have a range key, which is required when specifying a LocalSecondaryIndex",
            ));
        }
        for index in list {
            let index_name = index.str("IndexName").unwrap_or_default();
            let index_keys = index
                .get("KeySchema")
                .cloned()
                .unwrap_or(Value::List(vec![]));
            check_key_schema(&index_keys, &defined)?;
            let names = key_names(&index_keys);
            if names.len() != 2 {
                return Err(invalid_parameter(format!(
                    "Index KeySchema does not have a range key for index: {index_name}"
                )));
            }
            if names[0] != keys[0] {
                return Err(invalid_parameter(format!(
                    "Index KeySchema does not have the same leading hash key as table KeySchema for index: {index_name}. index hash key: {}, table hash key: {}",
                    names[0], keys[0]
                )));
            }
            check_projection(index)?;
            seen_name(index_name)?;
            used.extend(names);
            lsi_out.push(json!({
                "IndexName": index_name,
                "KeySchema": index_keys.to_json(),
                "Projection": (index.get("Projection").unwrap_or(&Value::map())).to_json(),
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": format!("{arn}/index/{index_name}"),
            }));
        }
        if list.len() > 5 {
            return Err(invalid_parameter(
                "Number of LocalSecondaryIndexes exceeds per-table limit of 5",
            ));
        }
    }
    let mut gsi_out = Vec::new();
    if let Some(gsis) = gsis {
        let list = gsis.as_list().unwrap_or_default();
        if list.is_empty() {
            return Err(invalid_parameter("List of GlobalSecondaryIndexes is empty"));
        }
        for index in list {
            let index_name = index.str("IndexName").unwrap_or_default();
            let index_keys = index
                .get("KeySchema")
                .cloned()
                .unwrap_or(Value::List(vec![]));
            check_key_schema(&index_keys, &defined)?;
            check_projection(index)?;
            let index_throughput = index.get("ProvisionedThroughput");
            if on_demand && index_throughput.is_some() {
                return Err(invalid_parameter(format!(
                    "ProvisionedThroughput should not be specified for index: {index_name} when BillingMode is PAY_PER_REQUEST"
                )));
            }
            if !on_demand && index_throughput.is_none() {
                return Err(invalid_parameter(format!(
                    "ProvisionedThroughput is not specified for index: {index_name}"
                )));
            }
            check_throughput(index_throughput)?;
            seen_name(index_name)?;
            used.extend(key_names(&index_keys));
            let mut description = json!({
                "IndexName": index_name,
                "KeySchema": index_keys.to_json(),
                "Projection": (index.get("Projection").unwrap_or(&Value::map())).to_json(),
                "IndexStatus": "ACTIVE",
                "ProvisionedThroughput": throughput_description(index_throughput),
                "IndexSizeBytes": 0,
                "ItemCount": 0,
                "IndexArn": format!("{arn}/index/{index_name}"),
            });
            if let Some(on_demand_throughput) = index.get("OnDemandThroughput") {
                description["OnDemandThroughput"] = on_demand_throughput.to_json();
            }
            gsi_out.push(description);
        }
        if list.len() > 20 {
            return Err(invalid_parameter(
                "GlobalSecondaryIndex count exceeds the per-table limit of 20",
            ));
        }
    }
    check_projected_total(lsi_out.iter().chain(&gsi_out).map(projected_count).sum())?;
    if lsis.is_some() || gsis.is_some() {
        let mut unique: Vec<String> = Vec::new();
        for k in used {
            if !unique.contains(&k) {
                unique.push(k);
            }
        }
        if defined.iter().any(|d| !unique.contains(d)) {
            return Err(invalid_parameter(format!(
                "Some AttributeDefinitions are not used. AttributeDefinitions: [{}], keys used: [{}]",
                defined.join(", "),
                unique.join(", ")
            )));
        }
    }

    let mut description = Map::new();
    description.insert("AttributeDefinitions".into(), definitions.to_json());
    description.insert("TableName".into(), name.into());
    description.insert("KeySchema".into(), key_schema.to_json());
    description.insert(
        "ProvisionedThroughput".into(),
        throughput_description(throughput),
    );
    description.insert("TableArn".into(), arn.clone().into());
    description.insert("TableId".into(), new_request_id().into());
    description.insert(
        "BillingModeSummary".into(),
        json!({"BillingMode": if on_demand { "PAY_PER_REQUEST" } else { "PROVISIONED" }}),
    );
    if !lsi_out.is_empty() {
        description.insert("LocalSecondaryIndexes".into(), Json::Array(lsi_out));
    }
    if !gsi_out.is_empty() {
        description.insert("GlobalSecondaryIndexes".into(), Json::Array(gsi_out));
    }
    if let Some(stream) = input.get("StreamSpecification") {
        let view_type = stream.get("StreamViewType").is_some();
        match stream.bool("StreamEnabled") {
            Some(true) if !view_type => {
                return Err(invalid_parameter(
                    "Table is being created with a stream enabled, UpdateViewType is required",
                ))
            }
            Some(false) if view_type => {
                return Err(invalid_parameter(
                    "Table is being created with a stream disabled, UpdateViewType should not be specified",
                ))
            }
            _ => {}
        }
    }
    if let Some(sse) = input.get("SSESpecification") {
        if sse.bool("Enabled") == Some(true) {
            description.insert("SSEDescription".into(), sse_description(ctx, sse, None));
        }
    }
    if let Some(class) = input.str("TableClass") {
        description.insert("TableClassSummary".into(), json!({"TableClass": class}));
    }
    if let Some(on_demand_throughput) = input.get("OnDemandThroughput") {
        description.insert("OnDemandThroughput".into(), on_demand_throughput.to_json());
    }
    description.insert(
        "DeletionProtectionEnabled".into(),
        input
            .bool("DeletionProtectionEnabled")
            .unwrap_or(false)
            .into(),
    );
    Ok(Json::Object(description))
}

fn key_names_of_definitions(definitions: &Value) -> Vec<String> {
    definitions
        .as_list()
        .unwrap_or_default()
        .iter()
        .map(|d| d.str("AttributeName").unwrap_or_default().to_string())
        .collect()
}

/// Loads a table's record.
pub fn load_table(conn: &Connection, ctx: &Context, name: &str) -> AwsResult<Option<Table>> {
    let row = conn
        .prepare_cached(
            "SELECT t.description, t.created, l.attribute, b.recovery_days
             FROM ddb_tables t LEFT JOIN ddb_ttl l ON l.account = t.account
             AND l.region = t.region AND l.table_name = t.name AND l.enabled = 1
             LEFT JOIN ddb_backups b ON b.account = t.account AND b.region = t.region
             AND b.table_name = t.name
             WHERE t.account = ?1 AND t.region = ?2 AND t.name = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, name], |r| {
            let description = r.get_ref(0)?.as_str()?;
            Ok((
                parsed_description(ctx, name, description),
                r.get::<_, i64>(1)?,
                r.get::<_, Option<String>>(2)?,
                r.get::<_, Option<i64>>(3)?,
            ))
        })
        .optional()?;
    let Some((parsed, created, ttl_attribute, recovery_days)) = row else {
        return Ok(None);
    };
    let (description, schema) = parsed?;
    Ok(Some(Table {
        name: name.to_string(),
        description,
        created,
        schema,
        ttl_attribute,
        recovery_days,
    }))
}

/// A table's description as parsed, with the text it was parsed from.
struct Parsed {
    account: String,
    region: String,
    name: String,
    text: String,
    description: Arc<Json>,
    schema: Arc<KeySchema>,
}

/// How many parsed descriptions are kept.
const PARSED_DESCRIPTIONS: usize = 32;

/// The parsed form of a table's stored description. Every item operation loads its table,
/// and parsing the description was a sixth of a GetItem, so parsed descriptions are kept:
/// found by their table, used only while the stored text is the same (compared, which
/// is cheaper than hashing it), so an entry can never be stale. The cache is emptied when
/// it reaches [`PARSED_DESCRIPTIONS`] tables.
fn parsed_description(
    ctx: &Context,
    name: &str,
    text: &str,
) -> AwsResult<(Arc<Json>, Arc<KeySchema>)> {
    static PARSED: Mutex<Vec<Parsed>> = Mutex::new(Vec::new());
    let same_table =
        |p: &Parsed| p.name == name && p.account == ctx.account && p.region == ctx.region;
    {
        let parsed = PARSED.lock().unwrap_or_else(|p| p.into_inner());
        if let Some(hit) = parsed.iter().find(|p| same_table(p) && p.text == text) {
            return Ok((hit.description.clone(), hit.schema.clone()));
        }
    }
    let description: Json = serde_json::from_str(text)
        .map_err(|_| AwsError::internal("a stored DynamoDB table is unreadable"))?;
    let schema = KeySchema::from_json(
        &description["KeySchema"],
        &description["AttributeDefinitions"],
    )
    .ok_or_else(|| AwsError::internal("a stored DynamoDB table has no key schema"))?;
    let entry = Parsed {
        account: ctx.account.clone(),
        region: ctx.region.clone(),
        name: name.to_string(),
        text: text.to_string(),
        description: Arc::new(description),
        schema: Arc::new(schema),
    };
    let found = (entry.description.clone(), entry.schema.clone());
    let mut parsed = PARSED.lock().unwrap_or_else(|p| p.into_inner());
    parsed.retain(|p| !same_table(p));
    if parsed.len() >= PARSED_DESCRIPTIONS {
        parsed.clear();
    }
    parsed.push(entry);
    Ok(found)
}

/// Inserts a new table's record, without items (and so with no difference to its figures).
pub(super) fn insert_table(
    conn: &Connection,
    ctx: &Context,
    name: &str,
    description: &Json,
    created: i64,
    tags: &Json,
) -> AwsResult<()> {
    conn.execute_cached(
        "INSERT INTO ddb_tables (account, region, name, description, created, tags)
         VALUES (?1, ?2, ?3, ?4, ?5, ?6)",
        rusqlite::params![
            ctx.account,
            ctx.region,
            name,
            description.to_string(),
            created,
            tags.to_string()
        ],
    )?;
    counters::clear(conn, ctx, name)
}

impl DynamoDb {
    pub(super) fn create_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let given = input.str("TableName").unwrap_or_default();
        check_name(given, "tableName")?;
        let mut description = build_description(ctx, given, input)?;
        let policy = input.str("ResourcePolicy");
        if let Some(policy) = policy {
            resource_policies::check_policy(policy)?;
        }
        let tags = (input.get("Tags").unwrap_or(&Value::List(vec![]))).to_json();
        let created = now_millis();
        let view_type = input
            .get("StreamSpecification")
            .filter(|s| s.bool("StreamEnabled") == Some(true))
            .and_then(|s| s.str("StreamViewType"));
        self.env.store.transaction(|tx| {
            if load_table(tx, ctx, given)?.is_some() {
                return Err(AwsError::new(
                    "ResourceInUseException",
                    format!("Table already exists: {given}"),
                )
                .with_status(400));
            }
            if let Some(view_type) = view_type {
                streams::open(tx, ctx, given, &mut description, view_type, created)?;
            }
            insert_table(tx, ctx, given, &description, created, &tags)?;
            match policy {
                Some(policy) => resource_policies::attach_to_new_table(tx, ctx, given, policy),
                None => Ok(()),
            }
        })?;
        let table = Table {
            name: given.to_string(),
            schema: KeySchema::from_json(
                &description["KeySchema"],
                &description["AttributeDefinitions"],
            )
            .ok_or_else(|| AwsError::internal("built a table without a key schema"))?
            .into(),
            description: description.into(),
            created,
            ttl_attribute: None,
            recovery_days: None,
        };
        Ok(Value::map().with(
            "TableDescription",
            table.describe("ACTIVE", Counts::default()),
        ))
    }

    pub(super) fn describe_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        let (table, counts) = self.env.store.with(|c| {
            let table = load_table(c, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            Ok::<_, AwsError>((table, counters::read(c, ctx, &name)?.unwrap_or_default()))
        })?;
        Ok(Value::map().with("Table", table.describe("ACTIVE", counts)))
    }

    pub(super) fn list_tables(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let start = input.str("ExclusiveStartTableName").unwrap_or_default();
        let limit = input.int("Limit").unwrap_or(LIST_TABLES_MAX);
        let mut names: Vec<String> = self.env.store.with(|c| {
            let mut stmt = c.prepare_cached(
                "SELECT name FROM ddb_tables WHERE account = ?1 AND region = ?2 AND name > ?3
                 ORDER BY name LIMIT ?4",
            )?;
            let rows = stmt.query_map(
                rusqlite::params![ctx.account, ctx.region, start, limit + 1],
                |r| r.get(0),
            )?;
            rows.collect::<rusqlite::Result<Vec<String>>>()
                .map_err(AwsError::from)
        })?;
        let more = names.len() as i64 > limit;
        names.truncate(usize::try_from(limit).unwrap_or(0));
        let last = more.then(|| names.last().cloned()).flatten();
        Ok(Value::map()
            .with(
                "TableNames",
                Value::List(names.into_iter().map(Value::String).collect()),
            )
            .with_opt("LastEvaluatedTableName", last))
    }

    pub(super) fn delete_table(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        let (table, counts) = self.env.store.transaction(|tx| {
            let table = load_table(tx, ctx, &name)?.ok_or_else(|| table_not_found(&name))?;
            if table.deletion_protected() {
                return Err(AwsError::validation(
                    "Resource cannot be deleted as it is currently protected against deletion. Disable deletion protection first.",
                ));
            }
            let counts = counters::read(tx, ctx, &name)?.unwrap_or_default();
            replicas::leave(tx, ctx, &table)?;
            remove_table(tx, ctx, &table)?;
            Ok((table, counts))
        })?;
        Ok(Value::map().with("TableDescription", table.describe("DELETING", counts)))
    }
}

/// Removes a table with its items, index rows and every setting kept beside it.
pub(super) fn remove_table(tx: &Connection, ctx: &Context, table: &Table) -> AwsResult<()> {
    let name = &table.name;
    let params = rusqlite::params![ctx.account, ctx.region, name];
    tx.execute_cached(
        "DELETE FROM ddb_items WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        params,
    )?;
    tx.execute_cached(
        "DELETE FROM ddb_index_items WHERE account = ?1 AND region = ?2 AND table_name = ?3",
        params,
    )?;
    tx.execute_cached(
        "DELETE FROM ddb_tables WHERE account = ?1 AND region = ?2 AND name = ?3",
        params,
    )?;
    streams::close(tx, ctx, &table.description, now_millis())?;
    ttl::forget(tx, ctx, name)?;
    backups::forget(tx, ctx, name)?;
    resource_policies::forget(tx, ctx, name)?;
    contributor_insights::forget(tx, ctx, name)?;
    kinesis_destinations::forget(tx, ctx, name)?;
    replication::forget(tx, ctx, name)
}

/// Stores a table's changed description.
pub(super) fn save_description(
    tx: &Connection,
    ctx: &Context,
    name: &str,
    description: &Json,
) -> AwsResult<()> {
    tx.execute_cached(
        "UPDATE ddb_tables SET description = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
        rusqlite::params![ctx.account, ctx.region, name, description.to_string()],
    )?;
    Ok(())
}

impl DynamoDb {
    /// DescribeLimits: the default quotas of a new account.
    pub(super) fn describe_limits(&self) -> Value {
        Value::map()
            .with("AccountMaxReadCapacityUnits", 80_000i64)
            .with("AccountMaxWriteCapacityUnits", 80_000i64)
            .with("TableMaxReadCapacityUnits", 40_000i64)
            .with("TableMaxWriteCapacityUnits", 40_000i64)
    }

    /// DescribeEndpoints: the regional endpoint, as endpoint discovery expects it.
    pub(super) fn describe_endpoints(&self, ctx: &Context) -> Value {
        let endpoint = Value::map()
            .with("Address", format!("dynamodb.{}.amazonaws.com", ctx.region))
            .with("CachePeriodInMinutes", 1440i64);
        Value::map().with("Endpoints", Value::List(vec![endpoint]))
    }
}

/// The table a tagging `ResourceArn` names in the caller's account and region.
fn tagged_table(ctx: &Context, input: &Value) -> AwsResult<(String, String)> {
    let arn = input.str("ResourceArn").unwrap_or_default();
    let prefix = format!("arn:aws:dynamodb:{}:{}:table/", ctx.region, ctx.account);
    match arn.strip_prefix(&prefix).filter(|n| !n.contains('/')) {
        Some(name) => Ok((arn.to_string(), name.to_string())),
        None if arn.starts_with("arn:") => Err(tags_not_found(arn)),
        None => Err(AwsError::validation(format!(
            "Invalid TableArn: Invalid ResourceArn provided as input {arn}"
        ))),
    }
}

fn tags_not_found(arn: &str) -> AwsError {
    AwsError::new(
        "ResourceNotFoundException",
        format!("Requested resource not found: ResourcArn: {arn} not found"),
    )
    .with_status(400)
}

/// A table's tags, as stored `{Key, Value}` objects.
fn read_tags(conn: &Connection, ctx: &Context, arn: &str, name: &str) -> AwsResult<Vec<Json>> {
    let stored: Option<String> = conn
        .query_row_cached(
            "SELECT tags FROM ddb_tables WHERE account = ?1 AND region = ?2 AND name = ?3",
            rusqlite::params![ctx.account, ctx.region, name],
            |r| r.get(0),
        )
        .optional()?;
    let stored = stored.ok_or_else(|| tags_not_found(arn))?;
    Ok(serde_json::from_str(&stored).unwrap_or_default())
}

/// Reads, changes and writes a table's tags (inside the caller's transaction).
fn update_tags(
    tx: &Connection,
    ctx: &Context,
    arn: &str,
    name: &str,
    change: impl FnOnce(&mut Vec<Json>),
) -> AwsResult<()> {
    let mut tags = read_tags(tx, ctx, arn, name)?;
    change(&mut tags);
    tx.execute_cached(
        "UPDATE ddb_tables SET tags = ?4 WHERE account = ?1 AND region = ?2 AND name = ?3",
        rusqlite::params![ctx.account, ctx.region, name, Json::Array(tags).to_string()],
    )?;
    Ok(())
}

impl DynamoDb {
    pub(super) fn tag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, name) = tagged_table(ctx, input)?;
        let new_tags = match (input.get("Tags").unwrap_or(&Value::List(vec![]))).to_json() {
            Json::Array(tags) => tags,
            _ => Vec::new(),
        };
        self.env.store.transaction(|tx| {
            update_tags(tx, ctx, &arn, &name, |tags| {
                for tag in new_tags {
                    match tags.iter_mut().find(|t| t["Key"] == tag["Key"]) {
                        Some(existing) => *existing = tag,
                        None => tags.push(tag),
                    }
                }
            })
        })?;
        Ok(Value::map())
    }

    pub(super) fn untag_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, name) = tagged_table(ctx, input)?;
        let keys: Vec<&str> = input
            .get("TagKeys")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .collect();
        self.env.store.transaction(|tx| {
            update_tags(tx, ctx, &arn, &name, |tags| {
                tags.retain(|t| !keys.iter().any(|k| t["Key"].as_str() == Some(k)));
            })
        })?;
        Ok(Value::map())
    }

    pub(super) fn list_tags_of_resource(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let (arn, name) = tagged_table(ctx, input)?;
        let tags = self.env.store.with(|c| read_tags(c, ctx, &arn, &name))?;
        Ok(Value::map().with(
            "Tags",
            Value::List(tags.iter().map(Value::from_json).collect()),
        ))
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn table_names_accept_arns_and_report_violations_in_aws_words() {
        let named = |n: &str| table_name(&Value::map().with("TableName", n));
        assert_eq!(named("orders").unwrap(), "orders");
        assert_eq!(
            named("arn:aws:dynamodb:us-east-1:123456789012:table/orders").unwrap(),
            "orders"
        );
        assert_eq!(
            named("ab").unwrap_err().message,
            "1 validation error detected: Value 'ab' at 'tableName' failed to satisfy constraint: Member must have length greater than or equal to 3"
        );
        assert!(named("a b")
            .unwrap_err()
            .message
            .contains("Member must satisfy regular expression pattern: [a-zA-Z0-9_.-]+"));
        assert!(named("a!")
            .unwrap_err()
            .message
            .starts_with("2 validation errors detected: "));
    }
}
