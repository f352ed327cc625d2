//! Single-item operations: PutItem, GetItem, UpdateItem, DeleteItem, their conditions
//! and return values, and the capacity they consume.
//!
//! Every item lives in `ddb_items` under its encoded primary key, so each operation is one
//! primary-key lookup whatever the table's size. A write reads the old item, checks the
//! request's condition against it and stores the new one (with its index rows and the
//! table's counters, see [`rows`](super::rows)) in one transaction, so a condition never
//! races another write.

use roto_core::{AwsError, AwsResult, Context, Value};

use super::attr::{item_size, item_to_value, Attr, Item};
use super::expr::{eval, Condition, Placeholders, Update};
use super::legacy::{self, check_not_mixed};
use super::metrics;
use super::projection::{project, Path, Step};
use super::rows::{read_item, store};
use super::tables::{load_table, resource_not_found, table_name, Table};
use super::DynamoDb;

/// The largest item DynamoDB stores (400 KB).
const MAX_ITEM_SIZE: usize = 400 * 1024;

/// Checks `ExpressionAttributeNames`/`Values`: never empty, and only beside an expression.
pub(super) fn check_expression_maps(input: &Value, expressions: &[&str]) -> AwsResult<()> {
    const MAPS: [(&str, char); 2] = [
        ("ExpressionAttributeNames", '#'),
        ("ExpressionAttributeValues", ':'),
    ];
    for (member, sigil) in MAPS {
        let Some(map) = input.get(member).and_then(Value::as_map) else {
            continue;
        };
        if map.is_empty() {
            return Err(AwsError::validation(format!("{member} must not be empty")));
        }
        let well_formed = |key: &str| {
            key.strip_prefix(sigil).is_some_and(|rest| {
                !rest.is_empty() && rest.bytes().all(|b| b.is_ascii_alphanumeric() || b == b'_')
            })
        };
        if let Some(key) = map.keys().find(|k| !well_formed(k)) {
            return Err(AwsError::validation(format!(
                "{member} contains invalid key: Syntax error; key: \"{key}\""
            )));
        }
    }
    if expressions.iter().any(|e| input.get(e).is_some()) {
        return Ok(());
    }
    if input.get(MAPS[0].0).is_some() {
        return Err(AwsError::validation(
            "ExpressionAttributeNames can only be specified when using expressions",
        ));
    }
    if input.get(MAPS[1].0).is_some() {
        return Err(AwsError::validation(
            "ExpressionAttributeValues can only be specified when using expressions",
        ));
    }
    Ok(())
}

/// Puts a request-validation error inside the `1 validation error detected: ` envelope,
/// as the write operations (PutItem, DeleteItem) report them; GetItem reports them bare.
fn enveloped<T>(result: AwsResult<T>) -> AwsResult<T> {
    result.map_err(|mut e| {
        if e.code == "ValidationException" {
            e.message = format!("1 validation error detected: {}", e.message);
        }
        e
    })
}

/// `ReturnValues` for PutItem and DeleteItem: whether to return the old item.
fn returns_old(input: &Value) -> AwsResult<bool> {
    match input.str("ReturnValues") {
        None | Some("NONE") => Ok(false),
        Some("ALL_OLD") => Ok(true),
        Some(_) => Err(AwsError::validation(
            "ReturnValues can only be ALL_OLD or NONE",
        )),
    }
}

/// Read units: 4 KB per unit, halved for eventually consistent reads.
pub(super) fn read_units(size: usize, consistent: bool) -> f64 {
    let units = size.div_ceil(4096).max(1) as f64;
    if consistent {
        units
    } else {
        units / 2.0
    }
}

/// Write units: 1 KB per unit.
fn write_units(size: usize) -> f64 {
    size.div_ceil(1024).max(1) as f64
}

/// The `ConsumedCapacity` member for `ReturnConsumedCapacity`, if asked for.
pub(super) fn consumed(
    input: &Value,
    table: &str,
    units: f64,
    indexes: &[(String, f64)],
) -> Option<Value> {
    let total = units + indexes.iter().map(|(_, u)| u).sum::<f64>();
    let base = Value::map()
        .with("TableName", table)
        .with("CapacityUnits", total);
    match input.str("ReturnConsumedCapacity") {
        Some("TOTAL") => Some(base),
        Some("INDEXES") => {
            let mut out = base.with("Table", Value::map().with("CapacityUnits", units));
            if !indexes.is_empty() {
                let map = indexes
                    .iter()
                    .map(|(name, u)| (name.clone(), Value::map().with("CapacityUnits", *u)))
                    .collect();
                out.insert("GlobalSecondaryIndexes", Value::Map(map));
            }
            Some(out)
        }
        _ => None,
    }
}

/// The capacity a batch or a transaction consumed, per table (in the order first used).
#[derive(Default)]
pub(super) struct Tally {
    tables: Vec<TableUnits>,
}

/// The units consumed on one table and on each of its global secondary indexes.
struct TableUnits {
    table: String,
    units: f64,
    indexes: Vec<(String, f64)>,
}

impl Tally {
    fn table(&mut self, name: &str) -> &mut TableUnits {
        let at = match self.tables.iter().position(|t| t.table == name) {
            Some(at) => at,
            None => {
                self.tables.push(TableUnits {
                    table: name.to_string(),
                    units: 0.0,
                    indexes: Vec::new(),
                });
                self.tables.len() - 1
            }
        };
        &mut self.tables[at]
    }

    /// A read of `item` (absent or not), `times` over (2 in a transaction).
    pub fn read(&mut self, table: &str, item: Option<&Item>, consistent: bool, times: f64) {
        self.table(table).units += times * read_units(item.map_or(0, item_size), consistent);
    }

    /// A write that replaced `old` with `new` (on the table and its indexes), `times`
    /// over (2 in a transaction).
    pub fn write(&mut self, table: &Table, old: Option<&Item>, new: Option<&Item>, times: f64) {
        let size = |item: Option<&Item>| item.map_or(0, item_size);
        let indexes = index_units(table, old, new);
        let entry = self.table(&table.name);
        entry.units += times * write_units(size(old).max(size(new)));
        for (index, units) in indexes {
            match entry.indexes.iter_mut().find(|(i, _)| *i == index) {
                Some((_, total)) => *total += times * units,
                None => entry.indexes.push((index, times * units)),
            }
        }
    }
}

impl DynamoDb {
    /// Publishes what a batch or transaction consumed, and gives its `ConsumedCapacity`
    /// list (one per table) if asked for.
    pub(super) fn tallied(
        &self,
        ctx: &Context,
        input: &Value,
        tally: Tally,
        write: bool,
    ) -> Option<Value> {
        let listed: Vec<Value> = tally
            .tables
            .iter()
            .filter_map(|t| self.capacity(ctx, input, &t.table, (t.units, &t.indexes), write))
            .collect();
        input
            .str("ReturnConsumedCapacity")
            .is_some_and(|r| r != "NONE")
            .then_some(Value::List(listed))
    }

    /// Publishes the capacity an operation consumed (on the table and its indexes), and
    /// gives its `ConsumedCapacity` member if asked for.
    pub(super) fn capacity(
        &self,
        ctx: &Context,
        input: &Value,
        table: &str,
        (units, indexes): (f64, &[(String, f64)]),
        write: bool,
    ) -> Option<Value> {
        let total = units + indexes.iter().map(|(_, u)| u).sum::<f64>();
        metrics::consumed(&self.env, ctx, table, total, write);
        consumed(input, table, units, indexes)
    }
}

/// The write units each secondary index holding the old or new item consumes.
fn index_units(table: &Table, old: Option<&Item>, new: Option<&Item>) -> Vec<(String, f64)> {
    let global: Vec<&str> = table.description["GlobalSecondaryIndexes"]
        .as_array()
        .map(|a| a.iter().filter_map(|i| i["IndexName"].as_str()).collect())
        .unwrap_or_default();
    table
        .indexes()
        .into_iter()
        .filter(|(name, _)| global.contains(&name.as_str()))
        .filter_map(|(name, schema)| {
            let in_index = |item: &&Item| schema.attrs().all(|a| item.contains_key(&a.name));
            let size = [old.filter(in_index), new.filter(in_index)]
                .into_iter()
                .flatten()
                .map(item_size)
                .max()?;
            Some((name, write_units(size)))
        })
        .collect()
}

pub(super) fn not_found_unless(table: Option<Table>) -> AwsResult<Table> {
    table.ok_or_else(resource_not_found)
}

/// The paths a GetItem selects: `ProjectionExpression` or legacy `AttributesToGet`.
pub(super) fn selected_paths(
    input: &Value,
    placeholders: &mut Placeholders<'_>,
) -> AwsResult<Option<Vec<Path>>> {
    check_not_mixed(input, &["ProjectionExpression"], &["AttributesToGet"])?;
    let attributes = input.get("AttributesToGet").and_then(Value::as_list);
    if input.get("ProjectionExpression").is_some() {
        return placeholders.projection(input, "ProjectionExpression");
    }
    let Some(attributes) = attributes else {
        return Ok(None);
    };
    let mut paths: Vec<Path> = Vec::new();
    for name in attributes.iter().filter_map(Value::as_str) {
        let path = vec![Step::Name(name.to_string())];
        if paths.contains(&path) {
            return Err(AwsError::validation(format!(
                "One or more parameter values were invalid: Duplicate value in attribute name: {name}"
            )));
        }
        paths.push(path);
    }
    Ok(Some(paths))
}

/// A write's `ConditionExpression` and what to return when it fails.
pub(super) struct Guard {
    condition: Option<Condition>,
    return_old_on_failure: bool,
}

impl Guard {
    /// Reads the request's condition, `ConditionExpression` (its placeholders counted as
    /// used) or legacy `Expected`.
    pub(super) fn new(input: &Value, placeholders: &mut Placeholders<'_>) -> AwsResult<Guard> {
        let condition = match placeholders.condition(input, "ConditionExpression")? {
            Some(condition) => Some(condition),
            None => legacy::expected(input)?,
        };
        Ok(Guard {
            condition,
            return_old_on_failure: input.str("ReturnValuesOnConditionCheckFailure")
                == Some("ALL_OLD"),
        })
    }

    /// No condition.
    pub(super) fn none() -> Guard {
        Guard {
            condition: None,
            return_old_on_failure: false,
        }
    }

    /// Whether the current item (absent: `None`) satisfies the condition.
    pub(super) fn holds(&self, old: Option<&Item>) -> bool {
        let empty = Item::new();
        self.condition
            .as_ref()
            .is_none_or(|c| eval::matches(c, old.unwrap_or(&empty)))
    }

    /// Refuses the write with `ConditionalCheckFailedException` unless the condition holds.
    pub(super) fn check(&self, old: Option<&Item>) -> AwsResult<()> {
        if self.holds(old) {
            return Ok(());
        }
        let error = AwsError::new(
            "ConditionalCheckFailedException",
            "The conditional request failed",
        )
        .with_status(400);
        Err(match old.filter(|_| self.return_old_on_failure) {
            Some(item) => error.with_field("Item", item_to_value(item)),
            None => error,
        })
    }
}

/// Refuses an update that writes a key attribute.
pub(super) fn check_key_untouched<'p>(
    table: &Table,
    paths: impl IntoIterator<Item = &'p Path>,
) -> AwsResult<()> {
    for path in paths {
        if let Some(Step::Name(first)) = path.first() {
            if table.schema.attrs().any(|a| &a.name == first) {
                return Err(AwsError::validation(format!(
                    "One or more parameter values were invalid: Cannot update attribute {first}. This attribute is part of the key"
                )));
            }
        }
    }
    Ok(())
}

/// Refuses an item that breaks an index key's type or is over the size limit.
pub(super) fn check_storable(table: &Table, item: &Item, too_big: &str) -> AwsResult<()> {
    for (index, schema) in table.indexes() {
        schema.check_index_keys(&index, item)?;
    }
    if item_size(item) > MAX_ITEM_SIZE {
        return Err(AwsError::validation(too_big));
    }
    Ok(())
}

/// What UpdateItem returns, by `ReturnValues`.
fn update_return(
    mode: &str,
    paths: &[Path],
    old: Option<&Item>,
    new: Option<&Item>,
) -> Option<Item> {
    let shown = match mode {
        "ALL_OLD" => old?.clone(),
        "ALL_NEW" => new?.clone(),
        "UPDATED_OLD" => project(old?, paths),
        "UPDATED_NEW" => project(new?, paths),
        _ => return None,
    };
    (!shown.is_empty()).then_some(shown)
}

/// Whether an update only takes attributes away (`REMOVE` and `DELETE` actions): on a
/// missing item it creates nothing, as in DynamoDB.
pub(super) fn only_deletions(update: &Update) -> bool {
    update.set.is_empty()
        && update.add.is_empty()
        && (!update.remove.is_empty() || !update.delete.is_empty())
}

impl DynamoDb {
    pub(super) fn put_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        check_not_mixed(input, &["ConditionExpression"], &["Expected"])?;
        let (want_old, item) = enveloped(
            check_expression_maps(input, &["ConditionExpression"]).and_then(|()| {
                Ok((
                    returns_old(input)?,
                    Attr::item(input.get("Item").unwrap_or(&Value::map()))?,
                ))
            }),
        )?;
        let mut placeholders = Placeholders::new(input)?;
        let guard = Guard::new(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        let (table, old) = self.env.store.transaction(|tx| {
            let table = not_found_unless(load_table(tx, ctx, &name)?)?;
            let key = table.schema.encode_item_key(&item)?;
            check_storable(
                &table,
                &item,
                "Item size has exceeded the maximum allowed size",
            )?;
            let old = read_item(tx, ctx, &name, &key)?;
            guard.check(old.as_ref())?;
            store(tx, ctx, &table, &key, old.as_ref(), Some(&item))?;
            Ok::<_, AwsError>((table, old))
        })?;
        let units = write_units(item_size(&item).max(old.as_ref().map_or(0, item_size)));
        let indexes = index_units(&table, old.as_ref(), Some(&item));
        let mut out = Value::map();
        if let Some(old) = old.filter(|_| want_old) {
            out.insert("Attributes", item_to_value(&old));
        }
        if let Some(capacity) = self.capacity(ctx, input, &table.name, (units, &indexes), true) {
            out.insert("ConsumedCapacity", capacity);
        }
        Ok(out)
    }

    pub(super) fn get_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        check_expression_maps(input, &["ProjectionExpression"])?;
        let key = Attr::item(input.get("Key").unwrap_or(&Value::map()))?;
        let mut placeholders = Placeholders::new(input)?;
        let paths = selected_paths(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        let (table, item) = self.env.store.read(|c| {
            let table = not_found_unless(load_table(c, ctx, &name)?)?;
            let encoded = table.schema.encode_key(&key)?;
            let item = read_item(c, ctx, &name, &encoded)?;
            Ok::<_, AwsError>((table, item))
        })?;
        let consistent = input.bool("ConsistentRead") == Some(true);
        let units = read_units(item.as_ref().map_or(0, item_size), consistent);
        let mut out = Value::map();
        if let Some(item) = item {
            let shown = match &paths {
                Some(paths) => project(&item, paths),
                None => item,
            };
            out.insert("Item", item_to_value(&shown));
        }
        if let Some(capacity) = self.capacity(ctx, input, &table.name, (units, &[]), false) {
            out.insert("ConsumedCapacity", capacity);
        }
        Ok(out)
    }

    pub(super) fn update_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        check_not_mixed(
            input,
            &["UpdateExpression", "ConditionExpression"],
            &["AttributeUpdates", "Expected"],
        )?;
        let key = enveloped(
            check_expression_maps(input, &["ConditionExpression", "UpdateExpression"])
                .and_then(|()| Attr::item(input.get("Key").unwrap_or(&Value::map()))),
        )?;
        let mut placeholders = Placeholders::new(input)?;
        let update = match placeholders.update(input)? {
            Some(update) => Some(update),
            None => legacy::attribute_updates(input)?,
        };
        let guard = Guard::new(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        let paths: Vec<Path> = update
            .as_ref()
            .map(|u| u.paths().into_iter().cloned().collect())
            .unwrap_or_default();
        let (table, old, new) = self.env.store.transaction(|tx| {
            let table = not_found_unless(load_table(tx, ctx, &name)?)?;
            let encoded = table.schema.encode_key(&key)?;
            check_key_untouched(&table, &paths)?;
            let old = read_item(tx, ctx, &name, &encoded)?;
            guard.check(old.as_ref())?;
            if old.is_none() && update.as_ref().is_some_and(only_deletions) {
                return Ok((table, None, None));
            }
            let base = old.clone().unwrap_or_else(|| key.clone());
            let new = match &update {
                Some(update) => eval::apply(update, &base)?,
                None => base,
            };
            check_storable(
                &table,
                &new,
                "Item size to update has exceeded the maximum allowed size",
            )?;
            store(tx, ctx, &table, &encoded, old.as_ref(), Some(&new))?;
            Ok::<_, AwsError>((table, old, Some(new)))
        })?;
        let size = |item: Option<&Item>| item.map_or(0, item_size);
        let units = write_units(size(new.as_ref()).max(size(old.as_ref())));
        let indexes = index_units(&table, old.as_ref(), new.as_ref());
        let mode = input.str("ReturnValues").unwrap_or("NONE");
        let mut out = Value::map();
        if let Some(shown) = update_return(mode, &paths, old.as_ref(), new.as_ref()) {
            out.insert("Attributes", item_to_value(&shown));
        }
        if let Some(capacity) = self.capacity(ctx, input, &table.name, (units, &indexes), true) {
            out.insert("ConsumedCapacity", capacity);
        }
        Ok(out)
    }

    pub(super) fn delete_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let name = table_name(input)?;
        check_not_mixed(input, &["ConditionExpression"], &["Expected"])?;
        let (want_old, key) = enveloped(
            check_expression_maps(input, &["ConditionExpression"]).and_then(|()| {
                Ok((
                    returns_old(input)?,
                    Attr::item(input.get("Key").unwrap_or(&Value::map()))?,
                ))
            }),
        )?;
        let mut placeholders = Placeholders::new(input)?;
        let guard = Guard::new(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        let (table, old) = self.env.store.transaction(|tx| {
            let table = not_found_unless(load_table(tx, ctx, &name)?)?;
            let encoded = table.schema.encode_key(&key)?;
            let old = read_item(tx, ctx, &name, &encoded)?;
            guard.check(old.as_ref())?;
            store(tx, ctx, &table, &encoded, old.as_ref(), None)?;
            Ok::<_, AwsError>((table, old))
        })?;
        let units = write_units(old.as_ref().map_or(0, item_size));
        let indexes = index_units(&table, old.as_ref(), None);
        let mut out = Value::map();
        if let Some(old) = old.filter(|_| want_old) {
            out.insert("Attributes", item_to_value(&old));
        }
        if let Some(capacity) = self.capacity(ctx, input, &table.name, (units, &indexes), true) {
            out.insert("ConsumedCapacity", capacity);
        }
        Ok(out)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn capacity_units_follow_dynamodb_rounding() {
        assert_eq!(write_units(0), 1.0);
        assert_eq!(write_units(1024), 1.0);
        assert_eq!(write_units(1025), 2.0);
        assert_eq!(read_units(4096, false), 0.5);
        assert_eq!(read_units(4097, false), 1.0);
        assert_eq!(read_units(4097, true), 2.0);
    }

    #[test]
    fn put_and_delete_accept_only_none_and_all_old() {
        assert!(!returns_old(&Value::map()).unwrap());
        assert!(returns_old(&Value::map().with("ReturnValues", "ALL_OLD")).unwrap());
        assert_eq!(
            returns_old(&Value::map().with("ReturnValues", "ALL_NEW"))
                .unwrap_err()
                .message,
            "ReturnValues can only be ALL_OLD or NONE"
        );
    }
}
