//! CloudFormation's tables and their rows: stacks (with their template, parameters and
//! outputs), the resources each holds, the events each operation records, change sets and
//! exports.

use roto_core::store::{Cached, Store};
use roto_core::timestamp::now_millis;
use roto_core::{AwsError, AwsResult, Context};
use rusqlite::{params, OptionalExtension};

use super::intrinsics::Resolved;
use super::parameters::ParameterValue;
use super::watchdog::Rollback;

pub(crate) const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS cloudformation_stacks (
    stack_id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    created INTEGER NOT NULL,
    updated INTEGER,
    deleted INTEGER,
    body TEXT NOT NULL,
    meta TEXT NOT NULL
);
CREATE INDEX IF NOT EXISTS cloudformation_stacks_name
    ON cloudformation_stacks (account, region, name);
CREATE TABLE IF NOT EXISTS cloudformation_resources (
    stack_id TEXT NOT NULL,
    logical_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    physical_id TEXT,
    status TEXT NOT NULL,
    reason TEXT,
    updated INTEGER NOT NULL,
    seq INTEGER NOT NULL,
    props TEXT NOT NULL DEFAULT 'null',
    resolved TEXT NOT NULL DEFAULT '{}',
    PRIMARY KEY (stack_id, logical_id)
);
CREATE TABLE IF NOT EXISTS cloudformation_events (
    seq INTEGER PRIMARY KEY AUTOINCREMENT,
    stack_id TEXT NOT NULL,
    event_id TEXT NOT NULL,
    logical_id TEXT NOT NULL,
    physical_id TEXT,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    reason TEXT,
    at INTEGER NOT NULL,
    props TEXT
);
CREATE INDEX IF NOT EXISTS cloudformation_events_stack ON cloudformation_events (stack_id, seq);
CREATE TABLE IF NOT EXISTS cloudformation_event_tokens (
    event_id TEXT PRIMARY KEY,
    token TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cloudformation_changesets (
    id TEXT PRIMARY KEY,
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    stack_id TEXT NOT NULL,
    kind TEXT NOT NULL,
    status TEXT NOT NULL,
    execution TEXT NOT NULL,
    reason TEXT,
    created INTEGER NOT NULL,
    body TEXT NOT NULL,
    meta TEXT NOT NULL,
    changes TEXT NOT NULL
);
CREATE TABLE IF NOT EXISTS cloudformation_exports (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    name TEXT NOT NULL,
    value TEXT NOT NULL,
    stack_id TEXT NOT NULL,
    PRIMARY KEY (account, region, name)
);
";

/// An output as the stack keeps it.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct OutputRow {
    pub key: String,
    pub value: String,
    pub description: Option<String>,
    pub export: Option<String>,
}

/// What a stack (or a change set for one) keeps beside its status.
#[derive(Debug, Clone, Default, serde::Serialize, serde::Deserialize)]
pub(crate) struct Meta {
    pub parameters: Vec<ParameterValue>,
    pub tags: Vec<(String, String)>,
    pub capabilities: Vec<String>,
    pub description: Option<String>,
    pub disable_rollback: bool,
    pub termination_protection: bool,
    pub notification_arns: Vec<String>,
    pub role_arn: Option<String>,
    pub outputs: Vec<OutputRow>,
    pub timeout: Option<i64>,
    pub change_set_id: Option<String>,
    pub policy: Option<String>,
    /// The other name the stack answers to (SetAlias).
    pub alias: Option<String>,
    /// The template after its transforms, which the engine evaluates.
    pub processed: serde_json::Value,
    /// The rollback triggers and monitoring time its operations are watched with.
    pub rollback: Option<Rollback>,
    /// The operations run on the stack (CreateStack, UpdateStack, ExecuteChangeSet,
    /// DeleteStack), each with its `ClientRequestToken` (empty without one), oldest first.
    #[serde(default)]
    pub requests: Vec<(String, String)>,
}

/// A stack as stored.
#[derive(Debug, Clone)]
pub(crate) struct Stack {
    pub id: String,
    pub account: String,
    pub region: String,
    pub name: String,
    pub status: String,
    pub reason: Option<String>,
    pub created: i64,
    pub updated: Option<i64>,
    pub deleted: Option<i64>,
    pub body: String,
    pub meta: Meta,
}

const STACK_COLUMNS: &str =
    "stack_id, account, region, name, status, reason, created, updated, deleted, body, meta";

fn stack_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<Stack> {
    let meta: String = r.get(10)?;
    Ok(Stack {
        id: r.get(0)?,
        account: r.get(1)?,
        region: r.get(2)?,
        name: r.get(3)?,
        status: r.get(4)?,
        reason: r.get(5)?,
        created: r.get(6)?,
        updated: r.get(7)?,
        deleted: r.get(8)?,
        body: r.get(9)?,
        meta: serde_json::from_str(&meta).unwrap_or_default(),
    })
}

fn to_text<T: serde::Serialize>(value: &T) -> String {
    serde_json::to_string(value).unwrap_or_default()
}

/// The live stack named `name` or aliased so (or any stack, deleted ones included, by its
/// id).
pub(crate) fn find_stack(store: &Store, ctx: &Context, name: &str) -> AwsResult<Option<Stack>> {
    store.read(|c| {
        let by_id = name.starts_with("arn:");
        let sql = if by_id {
            format!("SELECT {STACK_COLUMNS} FROM cloudformation_stacks WHERE stack_id = ?3 AND account = ?1 AND region = ?2")
        } else {
            format!("SELECT {STACK_COLUMNS} FROM cloudformation_stacks WHERE account = ?1 AND region = ?2 AND (name = ?3 OR json_extract(meta, '$.alias') = ?3) AND deleted IS NULL ORDER BY name = ?3 DESC")
        };
        c.prepare_cached(&sql)?
            .query_row(params![ctx.account, ctx.region, name], stack_from_row)
            .optional()
            .map_err(AwsError::from)
    })
}

/// Every stack of the account and region, deleted ones included when asked, oldest first.
pub(crate) fn all_stacks(store: &Store, ctx: &Context, deleted: bool) -> AwsResult<Vec<Stack>> {
    store.read(|c| {
        let filter = if deleted { "" } else { "AND deleted IS NULL" };
        let sql = format!(
            "SELECT {STACK_COLUMNS} FROM cloudformation_stacks WHERE account = ?1 AND region = ?2 {filter} ORDER BY created DESC, rowid DESC"
        );
        let mut stmt = c.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![ctx.account, ctx.region], stack_from_row)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
    })
}

/// Writes a stack whole.
pub(crate) fn put_stack(store: &Store, s: &Stack) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            &format!("INSERT OR REPLACE INTO cloudformation_stacks ({STACK_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11)"),
            params![s.id, s.account, s.region, s.name, s.status, s.reason, s.created, s.updated, s.deleted, s.body, to_text(&s.meta)],
        )?;
        Ok(())
    })
}

/// Sets a stack's status and reason.
pub(crate) fn set_status(
    store: &Store,
    id: &str,
    status: &str,
    reason: Option<&str>,
) -> AwsResult<()> {
    store.with(|c| {
        let deleted = (status == "DELETE_COMPLETE").then(now_millis);
        c.execute_cached(
            "UPDATE cloudformation_stacks SET status = ?2, reason = ?3, deleted = COALESCE(?4, deleted) WHERE stack_id = ?1",
            params![id, status, reason, deleted],
        )?;
        Ok(())
    })
}

/// A resource of a stack as stored.
#[derive(Debug, Clone)]
pub(crate) struct ResourceRow {
    pub logical_id: String,
    pub kind: String,
    pub physical_id: Option<String>,
    pub status: String,
    pub reason: Option<String>,
    pub updated: i64,
    pub seq: i64,
    pub props: serde_json::Value,
    pub resolved: Resolved,
}

/// The resources of a stack, in creation order.
/// The resource `logical` of `stack`, or the ValidationError CloudFormation answers when the
/// stack has none by that name.
pub(crate) fn resource(store: &Store, stack: &Stack, logical: &str) -> AwsResult<ResourceRow> {
    resources(store, &stack.id)?
        .into_iter()
        .find(|r| r.logical_id == logical)
        .ok_or_else(|| {
            super::validation(format!(
                "Resource {logical} does not exist for stack {}",
                stack.name
            ))
        })
}

pub(crate) fn resources(store: &Store, stack_id: &str) -> AwsResult<Vec<ResourceRow>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT logical_id, kind, physical_id, status, reason, updated, seq, props, resolved
             FROM cloudformation_resources WHERE stack_id = ?1 ORDER BY seq, logical_id",
        )?;
        let rows = stmt.query_map([stack_id], |r| {
            let props: String = r.get(7)?;
            let resolved: String = r.get(8)?;
            Ok(ResourceRow {
                logical_id: r.get(0)?,
                kind: r.get(1)?,
                physical_id: r.get(2)?,
                status: r.get(3)?,
                reason: r.get(4)?,
                updated: r.get(5)?,
                seq: r.get(6)?,
                props: serde_json::from_str(&props).unwrap_or_default(),
                resolved: serde_json::from_str(&resolved).unwrap_or_default(),
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
    })
}

/// Writes a resource row whole.
pub(crate) fn put_resource(store: &Store, stack_id: &str, r: &ResourceRow) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            "INSERT OR REPLACE INTO cloudformation_resources
             (stack_id, logical_id, kind, physical_id, status, reason, updated, seq, props, resolved)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10)",
            params![stack_id, r.logical_id, r.kind, r.physical_id, r.status, r.reason, r.updated, r.seq, to_text(&r.props), to_text(&r.resolved)],
        )?;
        Ok(())
    })
}

/// Removes a resource row.
pub(crate) fn remove_resource(store: &Store, stack_id: &str, logical_id: &str) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            "DELETE FROM cloudformation_resources WHERE stack_id = ?1 AND logical_id = ?2",
            params![stack_id, logical_id],
        )?;
        Ok(())
    })
}

/// An event as stored.
#[derive(Debug, Clone)]
pub(crate) struct EventRow {
    pub event_id: String,
    pub logical_id: String,
    pub physical_id: Option<String>,
    pub kind: String,
    pub status: String,
    pub reason: Option<String>,
    pub at: i64,
    pub props: Option<String>,
    /// The `ClientRequestToken` of the operation that recorded it.
    pub token: Option<String>,
}

/// Records an event, at least a millisecond after the stack's previous one: AWS's events
/// never share a time, and clients that sort them by time (the CDK's) keep their order.
pub(crate) fn add_event(store: &Store, stack_id: &str, e: &EventRow) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            "INSERT INTO cloudformation_events (stack_id, event_id, logical_id, physical_id, kind, status, reason, at, props)
             VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, MAX(?8, COALESCE((SELECT at + 1 FROM cloudformation_events
                 WHERE stack_id = ?1 ORDER BY seq DESC LIMIT 1), ?8)), ?9)",
            params![stack_id, e.event_id, e.logical_id, e.physical_id, e.kind, e.status, e.reason, e.at, e.props],
        )?;
        if let Some(token) = &e.token {
            c.execute_cached(
                "INSERT OR REPLACE INTO cloudformation_event_tokens (event_id, token) VALUES (?1, ?2)",
                params![e.event_id, token],
            )?;
        }
        Ok(())
    })
}

/// A stack's events, newest first.
pub(crate) fn events(store: &Store, stack_id: &str) -> AwsResult<Vec<EventRow>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT e.event_id, logical_id, physical_id, kind, status, reason, at, props, t.token
             FROM cloudformation_events e LEFT JOIN cloudformation_event_tokens t USING (event_id)
             WHERE stack_id = ?1 ORDER BY seq DESC",
        )?;
        let rows = stmt.query_map([stack_id], |r| {
            Ok(EventRow {
                event_id: r.get(0)?,
                logical_id: r.get(1)?,
                physical_id: r.get(2)?,
                kind: r.get(3)?,
                status: r.get(4)?,
                reason: r.get(5)?,
                at: r.get(6)?,
                props: r.get(7)?,
                token: r.get(8)?,
            })
        })?;
        rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
    })
}

/// The exports of the account and region: (name, value, exporting stack id).
pub(crate) fn exports(
    store: &Store,
    account: &str,
    region: &str,
) -> AwsResult<Vec<(String, String, String)>> {
    store.read(|c| {
        let mut stmt = c.prepare_cached(
            "SELECT name, value, stack_id FROM cloudformation_exports
             WHERE account = ?1 AND region = ?2 ORDER BY name",
        )?;
        let rows = stmt.query_map([account, region], |r| Ok((r.get(0)?, r.get(1)?, r.get(2)?)))?;
        rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
    })
}

/// Replaces a stack's exports with `outputs`' exported ones; an export another stack holds
/// is refused with AWS's message.
pub(crate) fn set_exports(
    store: &Store,
    stack: &Stack,
    outputs: &[OutputRow],
) -> Result<(), String> {
    let result: AwsResult<Result<(), String>> = store.transaction(|tx| {
        for o in outputs {
            let Some(name) = &o.export else { continue };
            let holder: Option<String> = tx
                .query_row_cached(
                    "SELECT stack_id FROM cloudformation_exports WHERE account = ?1 AND region = ?2 AND name = ?3",
                    params![stack.account, stack.region, name],
                    |r| r.get(0),
                )
                .optional()?;
            if let Some(holder) = holder.filter(|h| *h != stack.id) {
                let holder_name = holder.split('/').nth(1).unwrap_or_default().to_string();
                return Ok(Err(format!("Export with name {name} is already exported by stack {holder_name}")));
            }
        }
        tx.execute_cached("DELETE FROM cloudformation_exports WHERE stack_id = ?1", [&stack.id])?;
        for o in outputs {
            if let Some(name) = &o.export {
                tx.execute_cached(
                    "INSERT INTO cloudformation_exports (account, region, name, value, stack_id) VALUES (?1, ?2, ?3, ?4, ?5)",
                    params![stack.account, stack.region, name, o.value, stack.id],
                )?;
            }
        }
        Ok(Ok(()))
    });
    result.map_err(|e| e.message).and_then(|r| r)
}

/// A change set as stored.
#[derive(Debug, Clone)]
pub(crate) struct ChangeSetRow {
    pub id: String,
    pub name: String,
    pub stack_id: String,
    pub kind: String,
    pub status: String,
    pub execution: String,
    pub reason: Option<String>,
    pub created: i64,
    pub body: String,
    pub meta: Meta,
    pub changes: serde_json::Value,
}

const CHANGESET_COLUMNS: &str =
    "id, name, stack_id, kind, status, execution, reason, created, body, meta, changes";

fn changeset_from_row(r: &rusqlite::Row<'_>) -> rusqlite::Result<ChangeSetRow> {
    let meta: String = r.get(9)?;
    let changes: String = r.get(10)?;
    Ok(ChangeSetRow {
        id: r.get(0)?,
        name: r.get(1)?,
        stack_id: r.get(2)?,
        kind: r.get(3)?,
        status: r.get(4)?,
        execution: r.get(5)?,
        reason: r.get(6)?,
        created: r.get(7)?,
        body: r.get(8)?,
        meta: serde_json::from_str(&meta).unwrap_or_default(),
        changes: serde_json::from_str(&changes).unwrap_or_default(),
    })
}

/// Writes a change set whole.
pub(crate) fn put_change_set(store: &Store, ctx: &Context, cs: &ChangeSetRow) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            &format!("INSERT OR REPLACE INTO cloudformation_changesets (account, region, {CHANGESET_COLUMNS}) VALUES (?1, ?2, ?3, ?4, ?5, ?6, ?7, ?8, ?9, ?10, ?11, ?12, ?13)"),
            params![ctx.account, ctx.region, cs.id, cs.name, cs.stack_id, cs.kind, cs.status, cs.execution, cs.reason, cs.created, cs.body, to_text(&cs.meta), to_text(&cs.changes)],
        )?;
        Ok(())
    })
}

/// The change sets of a stack (all, when `stack_id` is `None`), of this account and region.
pub(crate) fn change_sets(
    store: &Store,
    ctx: &Context,
    stack_id: Option<&str>,
) -> AwsResult<Vec<ChangeSetRow>> {
    store.read(|c| {
        let sql = format!(
            "SELECT {CHANGESET_COLUMNS} FROM cloudformation_changesets
             WHERE account = ?1 AND region = ?2 AND (?3 IS NULL OR stack_id = ?3) ORDER BY created, rowid"
        );
        let mut stmt = c.prepare_cached(&sql)?;
        let rows = stmt.query_map(params![ctx.account, ctx.region, stack_id], changeset_from_row)?;
        rows.collect::<Result<Vec<_>, _>>().map_err(AwsError::from)
    })
}

/// Removes a change set.
pub(crate) fn remove_change_set(store: &Store, id: &str) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached("DELETE FROM cloudformation_changesets WHERE id = ?1", [id])?;
        Ok(())
    })
}

/// Removes every change set of a stack.
pub(crate) fn remove_change_sets(store: &Store, stack_id: &str) -> AwsResult<()> {
    store.with(|c| {
        c.execute_cached(
            "DELETE FROM cloudformation_changesets WHERE stack_id = ?1",
            [stack_id],
        )?;
        Ok(())
    })
}
