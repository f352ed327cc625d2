//! Many items at once: BatchGetItem, BatchWriteItem, TransactGetItems, TransactWriteItems.
//!
//! Batches are checked whole before anything is read or written (their limits, duplicate
//! keys, every item), then run in one store transaction, so Roto never leaves
//! `UnprocessedItems`/`UnprocessedKeys` (they come back empty, in the shape SDK retry
//! loops expect). A transaction evaluates every condition against the items as they are
//! before writing any, and is cancelled whole with its reasons listed in request order.
//! `ClientRequestToken` makes a TransactWriteItems idempotent for ten minutes.

use std::collections::BTreeSet;

use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context, Value};
use rusqlite::{Connection, OptionalExtension};
use sha2::{Digest, Sha256};

use super::attr::{item_to_value, Attr, Item};
use super::expr::{eval, Placeholders, Update};
use super::items::{
    check_expression_maps, check_key_untouched, check_storable, not_found_unless, only_deletions,
    selected_paths, Guard, Tally,
};
use super::key::EncodedKey;
use super::projection::{project, Path};
use super::rows::{read_item, store};
use super::tables::{load_table, Table};
use super::DynamoDb;

/// The table this module adds.
pub const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS ddb_tokens (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    token TEXT NOT NULL,
    digest TEXT NOT NULL,
    created INTEGER NOT NULL,
    PRIMARY KEY (account, region, token)
) WITHOUT ROWID;
";

/// How long a `ClientRequestToken` is remembered.
const TOKEN_MILLIS: i64 = 10 * 60 * 1000;

fn duplicates() -> AwsError {
    AwsError::validation("Provided list of item keys contains duplicates")
}

fn table_of(conn: &Connection, ctx: &Context, name: &str) -> AwsResult<Table> {
    not_found_unless(load_table(conn, ctx, name)?)
}

/// One write of a transaction (or a batch), parsed.
struct Write {
    table: String,
    /// The key (Delete, Update, ConditionCheck) or the whole item (Put).
    item: Item,
    change: Change,
    guard: Guard,
}

enum Change {
    Put,
    Delete,
    Update(Option<Update>, Vec<Path>),
    Check,
}

impl Write {
    fn parse(kind: &str, input: &Value) -> AwsResult<Write> {
        let table = input.str("TableName").unwrap_or_default().to_string();
        let member = if kind == "Put" { "Item" } else { "Key" };
        let expressions: &[&str] = match kind {
            "Update" => &["ConditionExpression", "UpdateExpression"],
            _ => &["ConditionExpression"],
        };
        check_expression_maps(input, expressions)?;
        let item = Attr::item(input.get(member).unwrap_or(&Value::map()))?;
        let mut placeholders = Placeholders::new(input)?;
        let change = match kind {
            "Put" => Change::Put,
            "Delete" => Change::Delete,
            "Update" => {
                let update = placeholders.update(input)?;
                let paths = update
                    .as_ref()
                    .map(|u| u.paths().into_iter().cloned().collect())
                    .unwrap_or_default();
                Change::Update(update, paths)
            }
            _ => Change::Check,
        };
        let guard = Guard::new(input, &mut placeholders)?;
        placeholders.check_all_used()?;
        Ok(Write {
            table,
            item,
            change,
            guard,
        })
    }

    fn key(&self, table: &Table) -> AwsResult<EncodedKey> {
        match self.change {
            Change::Put => table.schema.encode_item_key(&self.item),
            _ => table.schema.encode_key(&self.item),
        }
    }

    /// The item after this write (`None`: deleted; unchanged for a check).
    fn result(&self, table: &Table, old: Option<&Item>) -> AwsResult<Option<Item>> {
        Ok(match &self.change {
            Change::Put => {
                check_storable(
                    table,
                    &self.item,
                    "Item size has exceeded the maximum allowed size",
                )?;
                Some(self.item.clone())
            }
            Change::Delete => None,
            Change::Check => old.cloned(),
            Change::Update(update, paths) => {
                check_key_untouched(table, paths)?;
                if old.is_none() && update.as_ref().is_some_and(only_deletions) {
                    return Ok(None);
                }
                let base = old.cloned().unwrap_or_else(|| self.item.clone());
                let new = match update {
                    Some(u) => eval::apply(u, &base)?,
                    None => base,
                };
                check_storable(
                    table,
                    &new,
                    "Item size to update has exceeded the maximum allowed size",
                )?;
                Some(new)
            }
        })
    }
}

/// A request's digest, to tell a retried transaction from a different one.
fn digest(input: &Value) -> String {
    let text = format!("{:?}", input.get("TransactItems"));
    Sha256::digest(text.as_bytes())
        .iter()
        .map(|b| format!("{b:02x}"))
        .collect()
}

/// Whether this token already ran this request (`true`: do not run it again).
fn seen_token(conn: &Connection, ctx: &Context, token: &str, digest: &str) -> AwsResult<bool> {
    let now = now_millis();
    conn.prepare_cached("DELETE FROM ddb_tokens WHERE created < ?1")?
        .execute([now - TOKEN_MILLIS])?;
    let stored: Option<String> = conn
        .prepare_cached(
            "SELECT digest FROM ddb_tokens WHERE account = ?1 AND region = ?2 AND token = ?3",
        )?
        .query_row(rusqlite::params![ctx.account, ctx.region, token], |r| {
            r.get(0)
        })
        .optional()?;
    match stored {
        Some(d) if d == digest => Ok(true),
        Some(_) => Err(AwsError::new(
            "IdempotentParameterMismatchException",
            "The request uses the same client token as a previous, but non-identical request. Do not reuse a client token with different requests, unless the requests are identical.",
        )
        .with_status(400)),
        None => {
            conn.prepare_cached(
                "INSERT INTO ddb_tokens (account, region, token, digest, created)
                 VALUES (?1, ?2, ?3, ?4, ?5)",
            )?
            .execute(rusqlite::params![ctx.account, ctx.region, token, digest, now])?;
            Ok(false)
        }
    }
}

impl DynamoDb {
    pub(super) fn batch_write_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let requests = input
            .get("RequestItems")
            .and_then(Value::as_map)
            .cloned()
            .unwrap_or_default();
        let total: usize = requests
            .values()
            .map(|l| l.as_list().map_or(0, <[Value]>::len))
            .sum();
        if total > 25 {
            return Err(AwsError::validation(
                "Too many items requested for the BatchWriteItem call",
            ));
        }
        let mut writes = Vec::new();
        for (table, list) in &requests {
            for request in list.as_list().unwrap_or_default() {
                let (kind, inner, member) = match (request.get("PutRequest"), request.get("DeleteRequest")) {
                    (Some(p), None) => ("Put", p, "Item"),
                    (None, Some(d)) => ("Delete", d, "Key"),
                    _ => {
                        return Err(AwsError::validation(
                            "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
                        ))
                    }
                };
                let item = Attr::item(inner.get(member).unwrap_or(&Value::map()))?;
                writes.push(Write {
                    table: table.clone(),
                    item,
                    change: if kind == "Put" {
                        Change::Put
                    } else {
                        Change::Delete
                    },
                    guard: Guard::none(),
                });
            }
        }
        let tally = self.env.store.transaction(|tx| {
            let mut seen = BTreeSet::new();
            let mut planned = Vec::new();
            for write in &writes {
                let table = table_of(tx, ctx, &write.table)?;
                let key = write.key(&table)?;
                if !seen.insert((write.table.clone(), key.clone())) {
                    return Err(duplicates());
                }
                planned.push((table, key));
            }
            let mut tally = Tally::default();
            for (write, (table, key)) in writes.iter().zip(&planned) {
                let old = read_item(tx, ctx, &table.name, key)?;
                let new = write.result(table, old.as_ref())?;
                store(tx, ctx, table, key, old.as_ref(), new.as_ref())?;
                tally.write(table, old.as_ref(), new.as_ref(), 1.0);
            }
            Ok::<_, AwsError>(tally)
        })?;
        Ok(Value::map()
            .with("UnprocessedItems", Value::map())
            .with_opt("ConsumedCapacity", self.tallied(ctx, input, tally, true)))
    }

    pub(super) fn batch_get_item(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let requests = input
            .get("RequestItems")
            .and_then(Value::as_map)
            .cloned()
            .unwrap_or_default();
        let total: usize = requests
            .values()
            .map(|r| {
                r.get("Keys")
                    .and_then(Value::as_list)
                    .map_or(0, <[Value]>::len)
            })
            .sum();
        if total > 100 {
            return Err(AwsError::validation(
                "Too many items requested for the BatchGetItem call",
            ));
        }
        let mut plans = Vec::new();
        for (table, request) in &requests {
            check_expression_maps(request, &["ProjectionExpression"])?;
            let mut placeholders = Placeholders::new(request)?;
            let paths = selected_paths(request, &mut placeholders)?;
            placeholders.check_all_used()?;
            let keys = request
                .get("Keys")
                .and_then(Value::as_list)
                .unwrap_or_default()
                .iter()
                .map(Attr::item)
                .collect::<AwsResult<Vec<Item>>>()?;
            let consistent = request.bool("ConsistentRead") == Some(true);
            plans.push((table.clone(), keys, paths, consistent));
        }
        let (responses, tally) = self.env.store.read(|conn| {
            let mut out = Value::map();
            let mut tally = Tally::default();
            for (name, keys, paths, consistent) in &plans {
                let table = table_of(conn, ctx, name)?;
                let mut seen = BTreeSet::new();
                let mut items = Vec::new();
                for key in keys {
                    let encoded = table.schema.encode_key(key)?;
                    if !seen.insert(encoded.clone()) {
                        return Err(duplicates());
                    }
                    let found = read_item(conn, ctx, name, &encoded)?;
                    tally.read(name, found.as_ref(), *consistent, 1.0);
                    if let Some(item) = found {
                        let shown = match paths {
                            Some(p) => project(&item, p),
                            None => item,
                        };
                        items.push(item_to_value(&shown));
                    }
                }
                out.insert(name.clone(), Value::List(items));
            }
            Ok::<_, AwsError>((out, tally))
        })?;
        Ok(Value::map()
            .with("Responses", responses)
            .with("UnprocessedKeys", Value::map())
            .with_opt("ConsumedCapacity", self.tallied(ctx, input, tally, false)))
    }

    pub(super) fn transact_write_items(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let items = input
            .get("TransactItems")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let mut writes = Vec::new();
        for entry in items {
            let found = ["ConditionCheck", "Put", "Delete", "Update"]
                .into_iter()
                .filter_map(|kind| entry.get(kind).map(|v| (kind, v)))
                .collect::<Vec<_>>();
            let [(kind, inner)] = found.as_slice() else {
                return Err(AwsError::validation(
                    "TransactItems can only contain one of Check, Put, Update or Delete",
                ));
            };
            writes.push(Write::parse(kind, inner)?);
        }
        let token = input.str("ClientRequestToken");
        let digest = digest(input);
        let tally = self.env.store.transaction(|tx| {
            let mut tally = Tally::default();
            if let Some(token) = token {
                if seen_token(tx, ctx, token, &digest)? {
                    return Ok(tally);
                }
            }
            let mut seen = BTreeSet::new();
            let mut planned = Vec::new();
            for write in &writes {
                let table = table_of(tx, ctx, &write.table)?;
                let key = write.key(&table)?;
                if !seen.insert((write.table.clone(), key.clone())) {
                    return Err(AwsError::validation(
                        "Transaction request cannot include multiple operations on one item",
                    ));
                }
                let old = read_item(tx, ctx, &table.name, &key)?;
                planned.push((table, key, old));
            }
            let mut reasons = Vec::new();
            let mut cancelled = false;
            let mut results = Vec::new();
            for (write, (table, _, old)) in writes.iter().zip(&planned) {
                let reason = match write.guard.check(old.as_ref()) {
                    Err(e) => Err(e),
                    Ok(()) => write.result(table, old.as_ref()),
                };
                match reason {
                    Ok(new) => {
                        reasons.push(Value::map().with("Code", "None"));
                        results.push(new);
                    }
                    Err(e) => {
                        cancelled = true;
                        let code = if e.code == "ConditionalCheckFailedException" {
                            "ConditionalCheckFailed"
                        } else {
                            "ValidationError"
                        };
                        let mut reason = Value::map().with("Code", code).with("Message", e.message);
                        if let Some(item) = e.fields.get("Item") {
                            reason.insert("Item", item.clone());
                        }
                        reasons.push(reason);
                        results.push(None);
                    }
                }
            }
            if cancelled {
                let codes: Vec<&str> = reasons
                    .iter()
                    .map(|r| r.str("Code").unwrap_or("None"))
                    .collect();
                return Err(AwsError::new(
                    "TransactionCanceledException",
                    format!(
                        "Transaction cancelled, please refer cancellation reasons for specific reasons [{}]",
                        codes.join(", ")
                    ),
                )
                .with_status(400)
                .with_field("CancellationReasons", Value::List(reasons)));
            }
            for ((write, (table, key, old)), new) in writes.iter().zip(&planned).zip(results) {
                if matches!(write.change, Change::Check) {
                    tally.write(table, old.as_ref(), old.as_ref(), 2.0);
                } else {
                    store(tx, ctx, table, key, old.as_ref(), new.as_ref())?;
                    tally.write(table, old.as_ref(), new.as_ref(), 2.0);
                }
            }
            Ok(tally)
        })?;
        Ok(Value::map().with_opt("ConsumedCapacity", self.tallied(ctx, input, tally, true)))
    }

    pub(super) fn transact_get_items(&self, ctx: &Context, input: &Value) -> AwsResult<Value> {
        let items = input
            .get("TransactItems")
            .and_then(Value::as_list)
            .unwrap_or_default();
        let mut gets = Vec::new();
        for entry in items {
            let get = entry.get("Get").cloned().unwrap_or_else(Value::map);
            check_expression_maps(&get, &["ProjectionExpression"])?;
            let mut placeholders = Placeholders::new(&get)?;
            let paths = placeholders.projection(&get, "ProjectionExpression")?;
            placeholders.check_all_used()?;
            let key = Attr::item(get.get("Key").unwrap_or(&Value::map()))?;
            gets.push((
                get.str("TableName").unwrap_or_default().to_string(),
                key,
                paths,
            ));
        }
        let (responses, tally) = self.env.store.read(|conn| {
            let mut seen = BTreeSet::new();
            let mut out = Vec::new();
            let mut tally = Tally::default();
            for (name, key, paths) in &gets {
                let table = table_of(conn, ctx, name)?;
                let encoded = table.schema.encode_key(key)?;
                if !seen.insert((name.clone(), encoded.clone())) {
                    return Err(AwsError::validation(
                        "Transaction request cannot include multiple operations on one item",
                    ));
                }
                let found = read_item(conn, ctx, name, &encoded)?;
                tally.read(name, found.as_ref(), true, 2.0);
                let response = match found {
                    Some(item) => {
                        let shown = match paths {
                            Some(p) => project(&item, p),
                            None => item,
                        };
                        Value::map().with("Item", item_to_value(&shown))
                    }
                    None => Value::map(),
                };
                out.push(response);
            }
            Ok::<_, AwsError>((out, tally))
        })?;
        Ok(Value::map()
            .with("Responses", Value::List(responses))
            .with_opt("ConsumedCapacity", self.tallied(ctx, input, tally, false)))
    }
}
