//! PartiQL for DynamoDB: ExecuteStatement, BatchExecuteStatement, ExecuteTransaction.
//!
//! [`parse`] reads a statement into the expression language's trees; nothing here reads
//! or writes items itself. A SELECT runs on the Query/Scan engine ([`Read`]): as a Query
//! when its WHERE pins the partition key with an equality (and a sort-key condition, if
//! any, bounds the range), else as a Scan, the whole WHERE filtering what is read. INSERT,
//! UPDATE and DELETE become the PutItem, UpdateItem and DeleteItem requests that do the
//! same ([`render`]), and a transaction the TransactWriteItems or TransactGetItems request,
//! so their validation, conditions, index rows and counters are those operations' own.
//! INSERT is a put on condition that the key is new (DuplicateItemException otherwise);
//! UPDATE requires the item to exist; DELETE of an absent item succeeds, and a WHERE beyond
//! the key is the write's condition.

mod lex;
pub(super) mod parse;
mod render;

use base64::Engine;
use roto_core::{AwsError, AwsResult, Context, Value};
use sha2::{Digest, Sha256};

use super::attr::{item_to_json, item_to_value, parse_stored_item, Attr, Item};
use super::expr::eval;
use super::expr::parse::{Comparator, Operand};
use super::expr::Condition;
use super::key::KeySchema;
use super::projection::{project, Path, Step};
use super::queries::Read;
use super::tables::{load_table, resource_not_found, Table};
use super::DynamoDb;
use parse::{parse, Select, Statement};
use render::Rendering;

fn duplicate_item() -> AwsError {
    AwsError::new(
        "DuplicateItemException",
        "Duplicate primary key exists in table",
    )
    .with_status(400)
}

/// A statement entry's `Statement` parsed against its `Parameters`.
fn parse_entry(entry: &Value) -> AwsResult<Statement> {
    let parameters = entry
        .get("Parameters")
        .and_then(Value::as_list)
        .unwrap_or_default()
        .iter()
        .map(Attr::from_value)
        .collect::<AwsResult<Vec<Attr>>>()?;
    parse(entry.str("Statement").unwrap_or_default(), &parameters)
}

/// The top-level `AND`ed parts of a condition.
fn conjuncts(condition: &Condition) -> Vec<&Condition> {
    match condition {
        Condition::And(a, b) => {
            let mut out = conjuncts(a);
            out.extend(conjuncts(b));
            out
        }
        other => vec![other],
    }
}

fn all_of(conditions: impl IntoIterator<Item = Condition>) -> Option<Condition> {
    super::expr::balanced(conditions.into_iter().collect(), Condition::And)
}

fn top_name(path: &Path) -> Option<&str> {
    match path.as_slice() {
        [Step::Name(name)] => Some(name),
        _ => None,
    }
}

/// `attr = value` (either way round) on a top-level attribute: its name and the value.
fn equality(condition: &Condition) -> Option<(&str, &Attr)> {
    match condition {
        Condition::Compare(Operand::Path(p), Comparator::Eq, Operand::Value(v))
        | Condition::Compare(Operand::Value(v), Comparator::Eq, Operand::Path(p)) => {
            Some((top_name(p)?, v))
        }
        _ => None,
    }
}

/// Splits a write's (or single-item read's) WHERE into the key its equalities pin, which
/// must cover every key attribute, and the rest of the condition.
fn split_key(
    schema: &KeySchema,
    condition: Option<&Condition>,
) -> AwsResult<(Item, Option<Condition>)> {
    let incomplete = || {
        AwsError::validation(
            "Where clause does not contain a mandatory equality on all key attributes",
        )
    };
    let condition = condition.ok_or_else(incomplete)?;
    let mut key = Item::new();
    let mut rest = Vec::new();
    for part in conjuncts(condition) {
        match equality(part).filter(|(name, _)| schema.attrs().any(|a| a.name == *name)) {
            Some((name, value)) => {
                if key.get(name).is_some_and(|known| known != value) {
                    return Err(AwsError::validation(format!(
                        "Multiple conditions on same key {name}. Only single item Update/Insert/Delete are supported"
                    )));
                }
                key.insert(name.to_string(), value.clone());
            }
            None => rest.push(part.clone()),
        }
    }
    for attr in schema.attrs() {
        let value = key.get(&attr.name).ok_or_else(incomplete)?;
        if !matches!(value, Attr::S(_) | Attr::N(_) | Attr::B(_)) {
            return Err(AwsError::validation(format!(
                "Key value must be of type S, N, or B. Key name: {}, Key type: {}",
                attr.name,
                value.tag()
            )));
        }
        if value.tag() != attr.kind {
            return Err(AwsError::validation(format!(
                "Key attribute's data type should match its data type in table's schema: Key {}",
                attr.name
            )));
        }
    }
    Ok((key, all_of(rest)))
}

/// The key condition of a Query that serves a SELECT's WHERE, if there is one: an
/// equality on the partition key and at most one sort-key condition among its top-level
/// `AND`s, each against a value of the key's type. Anything else on the partition key, or
/// two conditions on one key, leaves it a Scan.
fn key_condition_of(schema: &KeySchema, condition: &Condition) -> Option<Condition> {
    let mut hash = None;
    let mut range = None;
    let range_attr = schema.range.as_ref();
    let fits = |v: &Attr, kind: &str| v.tag() == kind;
    for part in conjuncts(condition) {
        if let Some((name, value)) = equality(part) {
            if name == schema.hash.name {
                if hash.is_some() || !fits(value, &schema.hash.kind) {
                    return None;
                }
                hash = Some(part.clone());
                continue;
            }
        }
        let (path, values): (&Path, Vec<&Attr>) = match part {
            Condition::Compare(Operand::Path(p), _, Operand::Value(v)) => (p, vec![v]),
            Condition::Between(Operand::Path(p), Operand::Value(l), Operand::Value(h)) => {
                (p, vec![l, h])
            }
            Condition::BeginsWith(Operand::Path(p), Operand::Value(v))
                if matches!(v, Attr::S(_) | Attr::B(_)) =>
            {
                (p, vec![v])
            }
            _ => continue,
        };
        let Some(name) = top_name(path) else {
            continue;
        };
        if name == schema.hash.name {
            return None;
        }
        let Some(range_attr) = range_attr.filter(|r| r.name == name) else {
            continue;
        };
        let indexable = !matches!(part, Condition::Compare(_, Comparator::Ne, _));
        if indexable && values.iter().all(|v| fits(v, &range_attr.kind)) {
            if range.is_some() {
                return None;
            }
            range = Some(part.clone());
        }
    }
    let hash = hash?;
    Some(match range {
        Some(range) => Condition::And(Box::new(hash), Box::new(range)),
        None => hash,
    })
}

/// A continuation token: the statement's digest and the key to resume after.
fn next_token(digest: &str, last: &Value) -> AwsResult<String> {
    let key = Attr::item(last)?;
    let text = format!("{digest}:{}", item_to_json(&key));
    Ok(base64::engine::general_purpose::STANDARD.encode(text))
}

fn resume_key(token: &str, digest: &str) -> AwsResult<Item> {
    let invalid = || AwsError::validation("Invalid NextToken");
    let bytes = base64::engine::general_purpose::STANDARD
        .decode(token)
        .map_err(|_| invalid())?;
    let text = String::from_utf8(bytes).map_err(|_| invalid())?;
    let (given, key) = text.split_once(':').ok_or_else(invalid)?;
    if given != digest {
        return Err(AwsError::validation("NextToken does not match request"));
    }
    parse_stored_item(key).map_err(|_| invalid())
}

/// What identifies a statement for its continuation tokens.
fn statement_digest(entry: &Value) -> String {
    let text = format!("{:?}{:?}", entry.get("Statement"), entry.get("Parameters"));
    Sha256::digest(text.as_bytes())
        .iter()
        .take(12)
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// A PartiQL write as the item request that does the same.
struct Write {
    /// The item operation: `Put`, `Update`, `Delete` or `ConditionCheck`.
    kind: &'static str,
    request: Value,
    table: String,
    key: Item,
    insert: bool,
}

/// A single-item SELECT (of a batch or transaction) as a key to get, and what to apply.
struct Get {
    table: String,
    key: Item,
    rest: Option<Condition>,
    projection: Option<Vec<Path>>,
}

impl Get {
    /// The item as the statement shows it: `None` if absent or not matching its WHERE.
    fn shown(&self, item: Option<&Value>) -> AwsResult<Option<Value>> {
        let Some(item) = item else {
            return Ok(None);
        };
        let item = Attr::item(item)?;
        if !self.rest.as_ref().is_none_or(|c| eval::matches(c, &item)) {
            return Ok(None);
        }
        Ok(Some(item_to_value(&match &self.projection {
            Some(paths) => project(&item, paths),
            None => item,
        })))
    }
}

/// DynamoDB's code for a failed statement of a batch.
fn statement_error(error: AwsError, table: Option<&str>) -> Value {
    let code = match error.code.as_ref() {
        "ConditionalCheckFailedException" => "ConditionalCheckFailed",
        "DuplicateItemException" => "DuplicateItem",
        "ValidationException" => "ValidationError",
        "ResourceNotFoundException" => "ResourceNotFound",
        other => other.trim_end_matches("Exception"),
    }
    .to_string();
    let mut shown = Value::map()
        .with("Code", code)
        .with("Message", error.message.clone());
    if let Some(item) = error.fields.get("Item") {
        shown.insert("Item", item.clone());
    }
    Value::map()
        .with("Error", shown)
        .with_opt("TableName", table.map(str::to_string))
}

impl DynamoDb {
    fn partiql_table(&self, ctx: &Context, name: &str) -> AwsResult<Table> {
        let valid = (3..=255).contains(&name.chars().count())
            && name
                .bytes()
                .all(|b| b.is_ascii_alphanumeric() || b"_.-".contains(&b));
        if !valid {
            return Err(AwsError::validation(
                "Table name should be within the length [3, 255] and only contain 'a-z', 'A-Z', '0-9', '-', '_', '.'.",
            ));
        }
        self.env
            .store
            .with(|conn| load_table(conn, ctx, name))?
            .ok_or_else(resource_not_found)
    }

    /// The request a write statement stands for.
    fn write(&self, ctx: &Context, statement: &Statement, entry: &Value) -> AwsResult<Write> {
        let name = match statement {
            Statement::Insert { table, .. }
            | Statement::Update { table, .. }
            | Statement::Delete { table, .. } => table,
            Statement::Exists(select) => {
                if select.index.is_some() {
                    return Err(AwsError::validation(
                        "Operations on indices are not supported in transactions",
                    ));
                }
                &select.table
            }
            Statement::Select(_) => return Err(AwsError::internal("a read is no write")),
        };
        let table = self.partiql_table(ctx, name)?;
        let hash: Path = vec![Step::Name(table.schema.hash.name.clone())];
        let mut rendering = Rendering::default();
        let mut request = Value::map().with("TableName", name.clone()).with_opt(
            "ReturnValuesOnConditionCheckFailure",
            entry
                .str("ReturnValuesOnConditionCheckFailure")
                .map(str::to_string),
        );
        let (kind, key, guard) = match statement {
            Statement::Insert { item, .. } => {
                request.insert("Item", item_to_value(item));
                let key = item
                    .iter()
                    .filter(|(n, _)| table.schema.attrs().any(|a| &a.name == *n))
                    .map(|(n, v)| (n.clone(), v.clone()))
                    .collect();
                ("Put", key, Some(Condition::NotExists(hash)))
            }
            Statement::Update {
                update,
                condition,
                returning,
                ..
            } => {
                let (key, rest) = split_key(&table.schema, condition.as_ref())?;
                request.insert("UpdateExpression", rendering.update(update));
                if let Some(returning) = returning {
                    request.insert("ReturnValues", returning.return_values());
                }
                let guard = all_of([Condition::Exists(hash)].into_iter().chain(rest));
                ("Update", key, guard)
            }
            Statement::Delete {
                condition,
                returning,
                ..
            } => {
                let (key, rest) = split_key(&table.schema, condition.as_ref())?;
                if let Some(returning) = returning {
                    request.insert("ReturnValues", returning.return_values());
                }
                // An absent item is deleted already, whatever else the WHERE says.
                let guard = rest.map(|rest| {
                    Condition::Or(Box::new(Condition::NotExists(hash)), Box::new(rest))
                });
                ("Delete", key, guard)
            }
            Statement::Exists(select) => {
                let (key, rest) =
                    split_key(&table.schema, select.condition.as_ref()).map_err(|_| {
                        AwsError::validation(
                            "EXISTS() must contain a single item read with additional condition",
                        )
                    })?;
                let guard = all_of([Condition::Exists(hash)].into_iter().chain(rest));
                ("ConditionCheck", key, guard)
            }
            Statement::Select(_) => return Err(AwsError::internal("a read is no write")),
        };
        if kind != "Put" {
            request.insert("Key", item_to_value(&key));
        }
        if let Some(guard) = guard {
            request.insert("ConditionExpression", rendering.condition(&guard));
        }
        Ok(Write {
            kind,
            request: rendering.finish(request),
            table: name.clone(),
            key,
            insert: matches!(statement, Statement::Insert { .. }),
        })
    }

    /// Runs one write through its item operation; the items it returns.
    fn run_write(&self, ctx: &Context, write: &Write) -> AwsResult<Value> {
        let out = match write.kind {
            "Put" => self.put_item(ctx, &write.request),
            "Update" => self.update_item(ctx, &write.request),
            _ => self.delete_item(ctx, &write.request),
        }
        .map_err(|e| {
            if write.insert && e.code == "ConditionalCheckFailedException" {
                duplicate_item()
            } else {
                e
            }
        })?;
        let mut result = Value::map().with(
            "Items",
            Value::List(out.get("Attributes").cloned().into_iter().collect()),
        );
        if let Some(capacity) = out.get("ConsumedCapacity") {
            result.insert("ConsumedCapacity", capacity.clone());
        }
        Ok(result)
    }

    /// A single-item SELECT, for a batch or a transaction.
    fn get(&self, ctx: &Context, select: &Select) -> AwsResult<Get> {
        let table = self.partiql_table(ctx, &select.table)?;
        let (key, rest) = split_key(&table.schema, select.condition.as_ref())?;
        Ok(Get {
            table: select.table.clone(),
            key,
            rest,
            projection: select.projection.clone(),
        })
    }

    fn select(&self, ctx: &Context, select: &Select, input: &Value) -> AwsResult<Value> {
        let table = self.partiql_table(ctx, &select.table)?;
        let schema = match &select.index {
            Some(index) => table
                .indexes()
                .into_iter()
                .find(|(name, _)| name == index)
                .map(|(_, schema)| schema)
                .ok_or_else(|| {
                    AwsError::validation(format!(
                        "The table does not have the specified index: {index}"
                    ))
                })?,
            None => KeySchema::clone(&table.schema),
        };
        let key_condition = select
            .condition
            .as_ref()
            .and_then(|c| key_condition_of(&schema, c));
        let mut forward = true;
        if !select.order.is_empty() {
            if select.condition.is_none() {
                return Err(AwsError::validation(
                    "Must have WHERE clause in the statement when using ORDER BY clause.",
                ));
            }
            if key_condition.is_none() {
                return Err(AwsError::validation(
                    "Must have at least one non-optional hash key condition in WHERE clause when using ORDER BY clause.",
                ));
            }
            for (name, ascending) in &select.order {
                if !schema.attrs().any(|a| &a.name == name) {
                    return Err(AwsError::validation(format!(
                        "Variable reference {name} in ORDER BY clause must be part of the primary key"
                    )));
                }
                if schema.range.as_ref().is_some_and(|r| &r.name == name) {
                    forward = *ascending;
                }
            }
        }
        let digest = statement_digest(input);
        let start = input
            .str("NextToken")
            .map(|token| resume_key(token, &digest))
            .transpose()?;
        let read = Read {
            table: select.table.clone(),
            index: select.index.clone(),
            key_condition,
            filter: select.condition.clone(),
            filter_member: None,
            paths: select.projection.clone(),
            count_only: false,
            whole_items: false,
            limit: input
                .int("Limit")
                .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
            consistent: input.bool("ConsistentRead") == Some(true),
            forward,
            start,
            segment: None,
        };
        let out = self.read(ctx, &read, input)?;
        let mut result = Value::map().with(
            "Items",
            out.get("Items").cloned().unwrap_or(Value::List(Vec::new())),
        );
        if let Some(last) = out.get("LastEvaluatedKey") {
            result.insert("NextToken", next_token(&digest, last)?);
            result.insert("LastEvaluatedKey", last.clone());
        }
        if let Some(capacity) = out.get("ConsumedCapacity") {
            result.insert("ConsumedCapacity", capacity.clone());
        }
        Ok(result)
    }

    pub(super) fn execute_statement(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        match parse_entry(input)? {
            Statement::Select(select) => self.select(ctx, &select, input),
            Statement::Exists(_) => Err(AwsError::validation(
                "EXISTS can only be used in ExecuteTransaction write requests.",
            )),
            statement => {
                let mut write = self.write(ctx, &statement, input)?;
                if let Some(capacity) = input.str("ReturnConsumedCapacity") {
                    write.request.insert("ReturnConsumedCapacity", capacity);
                }
                self.run_write(ctx, &write)
            }
        }
    }

    pub(super) fn batch_execute_statement(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let entries = input
            .get("Statements")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let parsed: Vec<AwsResult<Statement>> = entries.iter().map(parse_entry).collect();
        let mut kinds = parsed.iter().flatten().map(Statement::is_read);
        let reads = kinds.next().unwrap_or(false);
        if kinds.any(|read| read != reads) {
            return Err(AwsError::validation(
                "Read and write requests together in the same batch is not supported.",
            ));
        }
        enum Planned {
            Get(Get, bool),
            Write(Write),
        }
        let planned: Vec<AwsResult<Planned>> = entries
            .iter()
            .zip(parsed)
            .map(|(entry, statement)| match statement? {
                Statement::Select(select) => Ok(Planned::Get(
                    self.get(ctx, &select)?,
                    entry.bool("ConsistentRead") == Some(true),
                )),
                Statement::Exists(_) => Err(AwsError::validation(
                    "EXISTS can only be used in ExecuteTransaction write requests.",
                )),
                statement => Ok(Planned::Write(self.write(ctx, &statement, entry)?)),
            })
            .collect();
        let mut seen: Vec<(&str, &Item)> = Vec::new();
        for plan in planned.iter().flatten() {
            let target = match plan {
                Planned::Get(get, _) => (get.table.as_str(), &get.key),
                Planned::Write(write) => (write.table.as_str(), &write.key),
            };
            if seen.contains(&target) {
                return Err(AwsError::validation(
                    "Provided list of item keys contains duplicates",
                ));
            }
            seen.push(target);
        }
        let responses = planned
            .into_iter()
            .map(|plan| {
                let (table, outcome) = match plan {
                    Err(e) => return statement_error(e, None),
                    Ok(Planned::Get(get, consistent)) => {
                        let request = Value::map()
                            .with("TableName", get.table.clone())
                            .with("Key", item_to_value(&get.key))
                            .with("ConsistentRead", consistent);
                        let item = self
                            .get_item(ctx, &request)
                            .and_then(|out| get.shown(out.get("Item")));
                        (
                            get.table,
                            item.map(|item| Value::map().with_opt("Item", item)),
                        )
                    }
                    Ok(Planned::Write(write)) => {
                        let items = self.run_write(ctx, &write).map(|out| {
                            let item = out
                                .get("Items")
                                .and_then(Value::as_list)
                                .and_then(|l| l.first())
                                .cloned();
                            Value::map().with_opt("Item", item)
                        });
                        (write.table, items)
                    }
                };
                match outcome {
                    Ok(mut response) => {
                        response.insert("TableName", table);
                        response
                    }
                    Err(e) => statement_error(e, Some(&table)),
                }
            })
            .collect();
        Ok(Value::map().with("Responses", Value::List(responses)))
    }

    pub(super) fn execute_transaction(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let entries = input
            .get("TransactStatements")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let statements = entries
            .iter()
            .map(parse_entry)
            .collect::<AwsResult<Vec<Statement>>>()?;
        let reads = statements.first().is_some_and(Statement::is_read);
        if statements.iter().any(|s| s.is_read() != reads) {
            return Err(AwsError::validation(
                "ExecuteTransaction API does not support both read and write operations in the same request.",
            ));
        }
        if reads {
            return self.transact_reads(ctx, &statements);
        }
        let writes = statements
            .iter()
            .zip(entries)
            .map(|(statement, entry)| self.write(ctx, statement, entry))
            .collect::<AwsResult<Vec<Write>>>()?;
        let items = writes
            .iter()
            .map(|write| {
                let mut request = write.request.clone();
                // Transactions return no items, so RETURNING asks for nothing.
                request.remove("ReturnValues");
                Value::map().with(write.kind, request)
            })
            .collect();
        let request = Value::map()
            .with("TransactItems", Value::List(items))
            .with_opt(
                "ClientRequestToken",
                input.str("ClientRequestToken").map(str::to_string),
            );
        match self.transact_write_items(ctx, &request) {
            Ok(_) => Ok(Value::map().with("Responses", Value::List(Vec::new()))),
            Err(error) if error.code == "TransactionCanceledException" => {
                Err(with_duplicate_reasons(error, &writes))
            }
            Err(error) => Err(error),
        }
    }

    fn transact_reads(&self, ctx: &Context, statements: &[Statement]) -> AwsResult<Value> {
        let gets = statements
            .iter()
            .map(|statement| {
                let Statement::Select(select) = statement else {
                    return Err(AwsError::internal("a write is no read"));
                };
                if select.index.is_some() {
                    return Err(AwsError::validation(
                        "Reads on indices are not supported within transactions.",
                    ));
                }
                self.get(ctx, select).map_err(|e| {
                    if e.code == "ValidationException" {
                        AwsError::validation(
                            "Select statements within ExecuteTransaction must specify the primary key in the where clause.",
                        )
                    } else {
                        e
                    }
                })
            })
            .collect::<AwsResult<Vec<Get>>>()?;
        let items = gets
            .iter()
            .map(|get| {
                Value::map().with(
                    "Get",
                    Value::map()
                        .with("TableName", get.table.clone())
                        .with("Key", item_to_value(&get.key)),
                )
            })
            .collect();
        let out =
            self.transact_get_items(ctx, &Value::map().with("TransactItems", Value::List(items)))?;
        let responses = out
            .get("Responses")
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .zip(&gets)
            .map(|(response, get)| {
                Ok(Value::map().with_opt("Item", get.shown(response.get("Item"))?))
            })
            .collect::<AwsResult<Vec<Value>>>()?;
        Ok(Value::map().with("Responses", Value::List(responses)))
    }
}

/// A cancelled transaction's reasons with each INSERT's failed condition shown as the
/// duplicate key it means.
fn with_duplicate_reasons(mut error: AwsError, writes: &[Write]) -> AwsError {
    let Some(Value::List(reasons)) = error.fields.get("CancellationReasons").cloned() else {
        return error;
    };
    let reasons: Vec<Value> = reasons
        .into_iter()
        .zip(writes)
        .map(|(reason, write)| {
            if write.insert && reason.str("Code") == Some("ConditionalCheckFailed") {
                Value::map()
                    .with("Code", "DuplicateItem")
                    .with("Message", "Duplicate primary key exists in table")
            } else {
                reason
            }
        })
        .collect();
    let codes: Vec<&str> = reasons
        .iter()
        .map(|r| r.str("Code").unwrap_or("None"))
        .collect();
    error.message = format!(
        "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
        codes.join(", ")
    );
    error.with_field("CancellationReasons", Value::List(reasons))
}
