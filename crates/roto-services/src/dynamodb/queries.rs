//! Query and Scan, on a table or on one of its secondary indexes.
//!
//! Both read rows in key order straight from the store: a Query seeks one partition of
//! `ddb_items` (or of `ddb_index_items` for an index) between the bounds its sort-key
//! condition sets, forwards or backwards, so its cost follows the rows it returns, not the
//! table's size; a Scan walks the whole key range. Reading stops at `Limit` evaluated
//! items or at 1 MB, leaving a `LastEvaluatedKey` to resume after, and the
//! `FilterExpression` runs on what was read, as in DynamoDB.

use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::types::Value as Sql;
use serde_json::Value as Json;

use super::attr::{item_to_value, parse_stored_item, Attr, Item};
use super::expr::parse::{Comparator, Condition, Operand};
use super::expr::{eval, Placeholders};
use super::items::{check_expression_maps, not_found_unless, read_units, selected_paths};
use super::key::{encode, KeySchema};
use super::legacy::{self, check_not_mixed};
use super::projection::{project, Path, Step};
use super::tables::{load_table, table_name, Table};
use super::DynamoDb;

/// The most data one page reads.
const PAGE_BYTES: usize = 1024 * 1024;

/// The index a request names: its key schema and what it projects.
struct Index {
    name: String,
    schema: KeySchema,
    global: bool,
    /// `None`: every attribute; otherwise the non-key attributes kept.
    projected: Option<Vec<String>>,
}

fn find_index(table: &Table, name: &str) -> AwsResult<Index> {
    let definitions = &table.description["AttributeDefinitions"];
    for (kind, global) in [
        ("GlobalSecondaryIndexes", true),
        ("LocalSecondaryIndexes", false),
    ] {
        let Some(list) = table.description[kind].as_array() else {
            continue;
        };
        if let Some(index) = list.iter().find(|i| i["IndexName"].as_str() == Some(name)) {
            let schema = KeySchema::from_json(&index["KeySchema"], definitions)
                .ok_or_else(|| AwsError::internal("a stored index has no key schema"))?;
            let projection = &index["Projection"];
            let projected = match projection["ProjectionType"].as_str() {
                Some("ALL") => None,
                Some("INCLUDE") => Some(
                    projection["NonKeyAttributes"]
                        .as_array()
                        .map(|a| {
                            a.iter()
                                .filter_map(Json::as_str)
                                .map(str::to_string)
                                .collect()
                        })
                        .unwrap_or_default(),
                ),
                _ => Some(Vec::new()),
            };
            return Ok(Index {
                name: name.to_string(),
                schema,
                global,
                projected,
            });
        }
    }
    Err(AwsError::validation(format!(
        "The table does not have the specified index: {name}"
    )))
}

/// The sort-key bounds of a Query: each `(bytes, inclusive)`.
#[derive(Default)]
pub(super) struct Range {
    low: Option<(Vec<u8>, bool)>,
    high: Option<(Vec<u8>, bool)>,
}

/// The smallest byte string above every string starting with `prefix`, if any.
fn prefix_end(prefix: &[u8]) -> Option<Vec<u8>> {
    let mut end = prefix.to_vec();
    while let Some(last) = end.pop() {
        if last < u8::MAX {
            end.push(last + 1);
            return Some(end);
        }
    }
    None
}

fn unsupported() -> AwsError {
    AwsError::validation("Query key condition not supported")
}

fn type_mismatch() -> AwsError {
    AwsError::validation(
        "One or more parameter values were invalid: Condition parameter type does not match schema type",
    )
}

fn path_and_value<'a>(a: &'a Operand, b: &'a Operand) -> Option<(&'a Path, &'a Attr)> {
    match (a, b) {
        (Operand::Path(p), Operand::Value(v)) => Some((p, v)),
        _ => None,
    }
}

/// The comparator that says the same with its operands swapped (`:v < k` is `k > :v`).
fn mirrored(op: Comparator) -> Comparator {
    match op {
        Comparator::Lt => Comparator::Gt,
        Comparator::Le => Comparator::Ge,
        Comparator::Gt => Comparator::Lt,
        Comparator::Ge => Comparator::Le,
        same => same,
    }
}

/// A key condition's term: the key attribute, its literal operands, whether begins_with.
type KeyTerm<'a> = (&'a Path, Vec<(&'a Attr, Option<Comparator>)>, bool);

/// One comparison of a key condition.
fn key_term(condition: &Condition) -> AwsResult<KeyTerm<'_>> {
    match condition {
        Condition::Compare(a, op, b) if *op != Comparator::Ne => {
            match (path_and_value(a, b), path_and_value(b, a)) {
                (Some((p, v)), _) => Ok((p, vec![(v, Some(*op))], false)),
                (None, Some((p, v))) => Ok((p, vec![(v, Some(mirrored(*op)))], false)),
                (None, None) => Err(unsupported()),
            }
        }
        Condition::Between(Operand::Path(p), Operand::Value(l), Operand::Value(h)) => Ok((
            p,
            vec![(l, Some(Comparator::Ge)), (h, Some(Comparator::Le))],
            false,
        )),
        Condition::BeginsWith(a, b) => {
            let (p, v) = path_and_value(a, b).ok_or_else(unsupported)?;
            Ok((p, vec![(v, None)], true))
        }
        _ => Err(unsupported()),
    }
}

/// Splits a key condition into the partition key's value and the sort key's range.
pub(super) fn key_condition(
    schema: &KeySchema,
    condition: &Condition,
) -> AwsResult<(Vec<u8>, Range)> {
    let mut terms = Vec::new();
    match condition {
        Condition::And(a, b) => {
            terms.push(key_term(a)?);
            terms.push(key_term(b)?);
        }
        other => terms.push(key_term(other)?),
    }
    let name_of = |p: &Path| match p.as_slice() {
        [Step::Name(n)] => Some(n.clone()),
        _ => None,
    };
    let mut hash = None;
    let mut range = Range::default();
    let mut range_seen = false;
    for (path, values, begins) in terms {
        let name = name_of(path).ok_or_else(unsupported)?;
        let kind = if name == schema.hash.name {
            &schema.hash.kind
        } else if schema.range.as_ref().is_some_and(|r| r.name == name) {
            schema
                .range
                .as_ref()
                .map(|r| &r.kind)
                .unwrap_or(&schema.hash.kind)
        } else {
            return Err(AwsError::validation(format!(
                "Query condition missed key schema element: {}",
                if hash.is_none() {
                    &schema.hash.name
                } else {
                    &name
                }
            )));
        };
        if values.iter().any(|(v, _)| v.tag() != kind) {
            return Err(type_mismatch());
        }
        if name == schema.hash.name {
            if hash.is_some() || values.len() != 1 || values[0].1 != Some(Comparator::Eq) {
                return Err(unsupported());
            }
            hash = Some(encode(values[0].0));
            continue;
        }
        if range_seen {
            return Err(unsupported());
        }
        range_seen = true;
        for (value, op) in values {
            let bytes = encode(value);
            match op {
                None if begins => {
                    range.high = prefix_end(&bytes).map(|e| (e, false));
                    range.low = Some((bytes, true));
                }
                Some(Comparator::Eq) => {
                    range.low = Some((bytes.clone(), true));
                    range.high = Some((bytes, true));
                }
                Some(Comparator::Lt) => range.high = Some((bytes, false)),
                Some(Comparator::Le) => range.high = Some((bytes, true)),
                Some(Comparator::Gt) => range.low = Some((bytes, false)),
                Some(Comparator::Ge) => range.low = Some((bytes, true)),
                _ => return Err(unsupported()),
            }
        }
    }
    let hash = hash.ok_or_else(|| {
        AwsError::validation(format!(
            "Query condition missed key schema element: {}",
            schema.hash.name
        ))
    })?;
    Ok((hash, range))
}

/// A Query or Scan, read from its request (or built from a PartiQL SELECT): what to read
/// and what to return.
pub(super) struct Read {
    /// The table name.
    pub table: String,
    /// The index to read, if not the table.
    pub index: Option<String>,
    /// `Some`: a Query by this key condition; `None`: a Scan.
    pub key_condition: Option<Condition>,
    /// What items must satisfy to be returned.
    pub filter: Option<Condition>,
    /// The member a Query's filter is named by in the error when it uses a key attribute;
    /// `None` lets the filter use them (PartiQL's WHERE does).
    pub filter_member: Option<&'static str>,
    /// The paths to return (`None`: whole items).
    pub paths: Option<Vec<Path>>,
    /// Count only, return no items (`Select: COUNT`).
    pub count_only: bool,
    /// Whole items even from an index (`Select: ALL_ATTRIBUTES`): a local index fetches
    /// what it does not project from the table; a global one must project everything.
    pub whole_items: bool,
    /// The most items to evaluate.
    pub limit: Option<usize>,
    /// Strongly consistent.
    pub consistent: bool,
    /// Ascending sort-key order (a Query's `ScanIndexForward`).
    pub forward: bool,
    /// The key to resume after (`ExclusiveStartKey`).
    pub start: Option<Item>,
    /// A parallel Scan's segment and total segments.
    pub segment: Option<(u64, u64)>,
}

/// A read plan: which rows, in which order, from where.
struct Plan<'a> {
    table: &'a Table,
    index: Option<&'a Index>,
    hash: Option<Vec<u8>>,
    range: Range,
    forward: bool,
    /// The order-column values to resume after.
    after: Option<Vec<Vec<u8>>>,
}

/// One row read: its order-column values and the item.
struct Row {
    order: Vec<Vec<u8>>,
    item: Item,
    size: usize,
}

fn blob(bytes: &[u8]) -> Sql {
    Sql::Blob(bytes.to_vec())
}

impl Plan<'_> {
    /// The columns rows are ordered by (the resume key), in order.
    fn order_columns(&self) -> Vec<&'static str> {
        let mut cols = Vec::new();
        match self.index {
            Some(_) => {
                if self.hash.is_none() {
                    cols.push("x.hash_key");
                }
                cols.extend(["x.range_key", "x.table_hash", "x.table_range"]);
            }
            None => {
                if self.hash.is_none() {
                    cols.push("i.hash_key");
                }
                cols.push("i.range_key");
            }
        }
        cols
    }

    /// Visits rows in order until `visit` returns false.
    fn each(
        &self,
        conn: &rusqlite::Connection,
        ctx: &Context,
        mut visit: impl FnMut(Row) -> AwsResult<bool>,
    ) -> AwsResult<()> {
        let mut params: Vec<Sql> = vec![
            Sql::Text(ctx.account.clone()),
            Sql::Text(ctx.region.clone()),
            Sql::Text(self.table.name.clone()),
        ];
        let (mut sql, prefix) = match self.index {
            Some(index) => {
                params.push(Sql::Text(index.name.clone()));
                (
                    String::from(
                        "SELECT i.item, i.size, x.hash_key, x.range_key, x.table_hash, x.table_range
                         FROM ddb_index_items x JOIN ddb_items i ON i.account = x.account
                         AND i.region = x.region AND i.table_name = x.table_name
                         AND i.hash_key = x.table_hash AND i.range_key = x.table_range
                         WHERE x.account = ?1 AND x.region = ?2 AND x.table_name = ?3
                         AND x.index_name = ?4",
                    ),
                    "x",
                )
            }
            None => (
                String::from(
                    "SELECT i.item, i.size, i.hash_key, i.range_key FROM ddb_items i
                     WHERE i.account = ?1 AND i.region = ?2 AND i.table_name = ?3",
                ),
                "i",
            ),
        };
        let mut bind = |sql: &mut String, clause: String, value: Sql| {
            params.push(value);
            sql.push_str(&format!(" AND {clause} ?{}", params.len()));
        };
        if let Some(hash) = &self.hash {
            bind(&mut sql, format!("{prefix}.hash_key ="), blob(hash));
        }
        if let Some((low, inclusive)) = &self.range.low {
            let op = if *inclusive { ">=" } else { ">" };
            bind(&mut sql, format!("{prefix}.range_key {op}"), blob(low));
        }
        if let Some((high, inclusive)) = &self.range.high {
            let op = if *inclusive { "<=" } else { "<" };
            bind(&mut sql, format!("{prefix}.range_key {op}"), blob(high));
        }
        let columns = self.order_columns();
        if let Some(after) = &self.after {
            let first = params.len() + 1;
            let holders: Vec<String> = (0..after.len())
                .map(|i| format!("?{}", first + i))
                .collect();
            params.extend(after.iter().map(|b| blob(b)));
            let op = if self.forward { ">" } else { "<" };
            sql.push_str(&format!(
                " AND ({}) {op} ({})",
                columns.join(", "),
                holders.join(", ")
            ));
        }
        let direction = if self.forward { "ASC" } else { "DESC" };
        let order: Vec<String> = columns.iter().map(|c| format!("{c} {direction}")).collect();
        sql.push_str(&format!(" ORDER BY {}", order.join(", ")));
        let mut stmt = conn.prepare_cached(&sql)?;
        let mut rows = stmt.query(rusqlite::params_from_iter(params))?;
        let skip_hash = usize::from(self.hash.is_some());
        while let Some(row) = rows.next()? {
            let text: String = row.get(0)?;
            let size: i64 = row.get(1)?;
            let width = if self.index.is_some() { 4 } else { 2 };
            let order = (2 + skip_hash..2 + width)
                .map(|i| row.get::<_, Vec<u8>>(i))
                .collect::<rusqlite::Result<Vec<_>>>()?;
            let row = Row {
                order,
                item: parse_stored_item(&text)?,
                size: usize::try_from(size).unwrap_or_default(),
            };
            if !visit(row)? {
                break;
            }
        }
        Ok(())
    }
}

/// The attributes an index holds of an item.
fn index_view(table: &Table, index: &Index, item: &Item) -> Item {
    let Some(kept) = &index.projected else {
        return item.clone();
    };
    item.iter()
        .filter(|(name, _)| {
            table
                .schema
                .attrs()
                .chain(index.schema.attrs())
                .any(|a| &a.name == *name)
                || kept.contains(name)
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The key attributes of `item` a `LastEvaluatedKey` carries.
fn last_key(table: &Table, index: Option<&Index>, item: &Item) -> Item {
    item.iter()
        .filter(|(name, _)| {
            table.schema.attrs().any(|a| &a.name == *name)
                || index.is_some_and(|i| i.schema.attrs().any(|a| &a.name == *name))
        })
        .map(|(k, v)| (k.clone(), v.clone()))
        .collect()
}

/// The order-column values of an `ExclusiveStartKey`.
fn start_after(
    table: &Table,
    index: Option<&Index>,
    query: bool,
    start: &Item,
) -> AwsResult<Vec<Vec<u8>>> {
    let invalid = |e: AwsError| {
        AwsError::validation(format!(
            "The provided starting key is invalid: {}",
            e.message
        ))
    };
    let (hash, range) = match index {
        Some(index) => {
            let (h, r) = index.schema.index_key(start).ok_or_else(|| {
                invalid(AwsError::validation(
                    "The provided key element does not match the schema",
                ))
            })?;
            let table_key = table.schema.encode_item_key(start).map_err(invalid)?;
            let mut out = if query { vec![] } else { vec![h] };
            out.extend([r, table_key.0, table_key.1]);
            return Ok(out);
        }
        None => table.schema.encode_key(start).map_err(invalid)?,
    };
    Ok(if query {
        vec![range]
    } else {
        vec![hash, range]
    })
}

/// Which segment of a parallel Scan a partition key falls in.
fn segment_of(hash: &[u8], total: u64) -> u64 {
    let mut h: u64 = 0xcbf2_9ce4_8422_2325;
    for b in hash {
        h ^= u64::from(*b);
        h = h.wrapping_mul(0x0100_0000_01b3);
    }
    h % total
}

impl DynamoDb {
    pub(super) fn query(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.read_many(ctx, input, true)
    }

    pub(super) fn scan(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        self.read_many(ctx, input, false)
    }

    fn read_many(&self, ctx: &Context, input: &Value, query: bool) -> AwsResult<Value> {
        let name = table_name(input)?;
        let (expressions, legacy, filter_member): (&[&str], &[&str], _) = if query {
            (
                &[
                    "ProjectionExpression",
                    "FilterExpression",
                    "KeyConditionExpression",
                ],
                &[
                    "AttributesToGet",
                    "QueryFilter",
                    "ConditionalOperator",
                    "KeyConditions",
                ],
                "QueryFilter",
            )
        } else {
            (
                &["ProjectionExpression", "FilterExpression"],
                &["AttributesToGet", "ScanFilter", "ConditionalOperator"],
                "ScanFilter",
            )
        };
        check_not_mixed(input, expressions, legacy)?;
        check_expression_maps(
            input,
            &[
                "KeyConditionExpression",
                "FilterExpression",
                "ProjectionExpression",
            ],
        )?;
        let segment = match (input.int("Segment"), input.int("TotalSegments")) {
            (Some(_), None) => {
                return Err(AwsError::validation(
                    "The TotalSegments parameter is required but was not present in the request when Segment parameter is present",
                ))
            }
            (None, Some(_)) => {
                return Err(AwsError::validation(
                    "The Segment parameter is required but was not present in the request when parameter TotalSegments is present",
                ))
            }
            (Some(s), Some(t)) if s >= t => {
                return Err(AwsError::validation(format!(
                    "The Segment parameter is zero-based and must be less than parameter TotalSegments: Segment: {s} is not less than TotalSegments: {t}"
                )))
            }
            (Some(s), Some(t)) => Some((s.unsigned_abs(), t.unsigned_abs().max(1))),
            (None, None) => None,
        };
        let mut placeholders = Placeholders::new(input)?;
        let key_condition = if query {
            let parsed = match placeholders.condition(input, "KeyConditionExpression")? {
                Some(condition) => Some(condition),
                None => legacy::key_conditions(input)?,
            };
            Some(parsed.ok_or_else(|| {
                AwsError::validation(
                    "Either the KeyConditions or KeyConditionExpression parameter must be specified in the request.",
                )
            })?)
        } else {
            None
        };
        let (filter, filter_member) = match placeholders.condition(input, "FilterExpression")? {
            Some(filter) => (Some(filter), "Filter Expression"),
            None => (legacy::filter(input, filter_member)?, filter_member),
        };
        let paths = selected_paths(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        let select = input.str("Select");
        check_select(input, select, paths.is_some(), query)?;
        let read = Read {
            table: name,
            index: input.str("IndexName").map(str::to_string),
            key_condition,
            filter,
            filter_member: query.then_some(filter_member),
            paths,
            count_only: select == Some("COUNT"),
            whole_items: select == Some("ALL_ATTRIBUTES"),
            limit: input
                .int("Limit")
                .map(|l| usize::try_from(l).unwrap_or(usize::MAX)),
            consistent: input.bool("ConsistentRead") == Some(true),
            forward: input.bool("ScanIndexForward") != Some(false),
            start: input.get("ExclusiveStartKey").map(Attr::item).transpose()?,
            segment,
        };
        self.read(ctx, &read, input)
    }

    /// Runs a Query (`read.key_condition` set) or a Scan; `input` says what consumed
    /// capacity to report.
    pub(super) fn read(&self, ctx: &Context, read: &Read, input: &Value) -> AwsResult<Value> {
        let query = read.key_condition.is_some();
        let (filter, paths, limit, segment) = (&read.filter, &read.paths, read.limit, read.segment);
        let consistent = read.consistent;
        self.env.store.read(|conn| {
            let table = not_found_unless(load_table(conn, ctx, &read.table)?)?;
            let index = read
                .index
                .as_deref()
                .map(|i| find_index(&table, i))
                .transpose()?;
            if consistent && index.as_ref().is_some_and(|i| i.global) {
                return Err(AwsError::validation(
                    "Consistent reads are not supported on global secondary indexes",
                ));
            }
            if let Some(i) = index.as_ref().filter(|i| i.global && read.whole_items) {
                if i.projected.is_some() {
                    return Err(AwsError::validation(format!(
                        "One or more parameter values were invalid: Select type ALL_ATTRIBUTES is not supported for global secondary index {} because its projection type is not ALL",
                        i.name
                    )));
                }
            }
            let key_schema = index.as_ref().map_or(&*table.schema, |i| &i.schema);
            let (hash, range) = match &read.key_condition {
                Some(c) => {
                    let (h, r) = key_condition(key_schema, c)?;
                    (Some(h), r)
                }
                None => (None, Range::default()),
            };
            if let (Some(filter), Some(member)) = (filter, read.filter_member) {
                check_filter_keys(filter, key_schema, member)?;
            }
            let after = read
                .start
                .as_ref()
                .map(|s| start_after(&table, index.as_ref(), query, s))
                .transpose()?;
            let plan = Plan {
                table: &table,
                index: index.as_ref(),
                hash,
                range,
                forward: read.forward || !query,
                after,
            };
            let mut items = Vec::new();
            let (mut scanned, mut count, mut bytes) = (0usize, 0usize, 0usize);
            let mut last: Option<Item> = None;
            let mut exhausted = true;
            plan.each(conn, ctx, |row| {
                if let (Some((s, t)), Some(hash)) = (segment, row.order.first()) {
                    let table_hash = if index.is_some() {
                        &row.order[row.order.len() - 2]
                    } else {
                        hash
                    };
                    if segment_of(table_hash, t) != s {
                        return Ok(true);
                    }
                }
                if limit.is_some_and(|l| scanned >= l) || bytes >= PAGE_BYTES {
                    exhausted = false;
                    return Ok(false);
                }
                scanned += 1;
                bytes += row.size;
                // What the read sees of the item: a global index only what it projects; a
                // local one the whole item, fetched from the table for what it does not.
                let view = match &index {
                    Some(i) if i.global => index_view(&table, i, &row.item),
                    _ => row.item,
                };
                last = Some(last_key(&table, index.as_ref(), &view));
                if filter.as_ref().is_none_or(|f| eval::matches(f, &view)) {
                    count += 1;
                    if !read.count_only {
                        let shown = match (paths, &index) {
                            (Some(p), _) => project(&view, p),
                            (None, Some(i)) if !i.global && !read.whole_items => {
                                index_view(&table, i, &view)
                            }
                            (None, _) => view,
                        };
                        items.push(item_to_value(&shown));
                    }
                }
                Ok(true)
            })?;
            // Stopping exactly at the limit still hands back where it stopped, as DynamoDB does.
            let stopped = !exhausted || limit.is_some_and(|l| scanned >= l && l > 0);
            let mut out = Value::map()
                .with("Count", count)
                .with("ScannedCount", scanned);
            if !read.count_only {
                out.insert("Items", Value::List(items));
            }
            if let Some(last) = last.filter(|_| stopped) {
                out.insert("LastEvaluatedKey", item_to_value(&last));
            }
            let units = read_units(bytes, consistent);
            if let Some(capacity) = self.capacity(ctx, input, &table.name, (units, &[]), false) {
                out.insert("ConsumedCapacity", capacity);
            }
            Ok(out)
        })
    }
}

/// Refuses a `Select` that contradicts the request's projection or target, with
/// DynamoDB's messages (a Query's carry the validation prefix, a Scan's do not).
fn check_select(
    input: &Value,
    select: Option<&str>,
    projected: bool,
    query: bool,
) -> AwsResult<()> {
    let prefix = if query {
        "1 validation error detected: "
    } else {
        ""
    };
    let refuse = |message: String| Err(AwsError::validation(format!("{prefix}{message}")));
    if select == Some("SPECIFIC_ATTRIBUTES") && !projected {
        return refuse(
            "Must specify the AttributesToGet or ProjectionExpression when choosing to get SPECIFIC_ATTRIBUTES"
                .to_string(),
        );
    }
    let chosen = match select {
        Some("COUNT") => Some("only the Count"),
        Some(all @ ("ALL_ATTRIBUTES" | "ALL_PROJECTED_ATTRIBUTES")) => Some(all),
        _ => None,
    };
    if let Some(chosen) = chosen.filter(|_| projected) {
        let member = if input.get("AttributesToGet").is_some() {
            "AttributesToGet"
        } else {
            "ProjectionExpression"
        };
        return refuse(format!(
            "Cannot specify the {member} when choosing to get {chosen}"
        ));
    }
    if select == Some("ALL_PROJECTED_ATTRIBUTES") && input.get("IndexName").is_none() {
        return refuse(
            "ALL_PROJECTED_ATTRIBUTES can be used only when Querying using an IndexName"
                .to_string(),
        );
    }
    Ok(())
}

/// Refuses a Query filter (named `member` in messages) on the key attributes it queries by.
fn check_filter_keys(filter: &Condition, schema: &KeySchema, member: &str) -> AwsResult<()> {
    let mut found = None;
    visit_paths(filter, &mut |path| {
        if let Some(Step::Name(n)) = path.first() {
            if found.is_none() && schema.attrs().any(|a| &a.name == n) {
                found = Some(n.clone());
            }
        }
    });
    match found {
        Some(name) => Err(AwsError::validation(format!(
            "{member} can only contain non-primary key attributes: Primary key attribute: {name}"
        ))),
        None => Ok(()),
    }
}

fn visit_operand(op: &Operand, f: &mut impl FnMut(&Path)) {
    match op {
        Operand::Path(p) | Operand::Size(p) => f(p),
        _ => {}
    }
}

fn visit_paths(condition: &Condition, f: &mut impl FnMut(&Path)) {
    match condition {
        Condition::Or(a, b) | Condition::And(a, b) => {
            visit_paths(a, f);
            visit_paths(b, f);
        }
        Condition::Not(a) => visit_paths(a, f),
        Condition::Compare(a, _, b) | Condition::BeginsWith(a, b) | Condition::Contains(a, b) => {
            visit_operand(a, f);
            visit_operand(b, f);
        }
        Condition::Between(a, b, c) => {
            for op in [a, b, c] {
                visit_operand(op, f);
            }
        }
        Condition::In(a, list) => {
            visit_operand(a, f);
            for op in list {
                visit_operand(op, f);
            }
        }
        Condition::Exists(p) | Condition::NotExists(p) | Condition::Type(p, _) => f(p),
    }
}
