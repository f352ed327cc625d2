//! The documents API Gateway keeps: one table of JSON documents, each named by its kind
//! (`restapi`, `resource`, `stage`, `apikey`, ...), its parent's id (the API's, for what
//! belongs to an API; empty for what belongs to the account) and its own id.
//!
//! The table is created on the first call that needs it, so a server that never serves an
//! API pays nothing for it. API ids are unique across accounts and regions (the data plane
//! finds an API by its id alone, as AWS's host names do).

use std::sync::Arc;

use roto_core::store::LazySchema;
use roto_core::{AwsError, AwsResult, Env};
use rusqlite::{params, OptionalExtension};
use serde_json::Value as Json;

const SCHEMA: &str = "
CREATE TABLE IF NOT EXISTS apigateway_items (
    account TEXT NOT NULL,
    region TEXT NOT NULL,
    kind TEXT NOT NULL,
    parent TEXT NOT NULL,
    id TEXT NOT NULL,
    doc TEXT NOT NULL,
    PRIMARY KEY (account, region, kind, parent, id)
);
CREATE INDEX IF NOT EXISTS apigateway_items_by_id ON apigateway_items (kind, id);
";

/// Where a document lives: its account and region, kind and parent.
#[derive(Debug, Clone, Copy)]
pub struct Scope<'a> {
    /// The account.
    pub account: &'a str,
    /// The region.
    pub region: &'a str,
    /// The kind of document.
    pub kind: &'a str,
    /// The parent's id (empty for account-level documents).
    pub parent: &'a str,
}

/// The document store over the shared environment's store.
pub struct Store {
    env: Arc<Env>,
    schema: LazySchema,
}

/// A document found by its kind and id alone: where it lives, and itself.
pub struct Located {
    /// The account it belongs to.
    pub account: String,
    /// The region it belongs to.
    pub region: String,
    /// The document.
    pub doc: Json,
}

fn parse(text: &str) -> Json {
    serde_json::from_str(text).unwrap_or(Json::Null)
}

impl Store {
    /// A store whose table is created on first use.
    pub fn new(env: Arc<Env>) -> Store {
        Store {
            env,
            schema: LazySchema::new(&[SCHEMA]),
        }
    }

    fn ready(&self) -> AwsResult<&roto_core::store::Store> {
        self.schema.store(&self.env.store)
    }

    /// The document `id` in `scope`, if any.
    pub fn get(&self, scope: Scope<'_>, id: &str) -> AwsResult<Option<Json>> {
        self.ready()?.read(|c| {
            c.prepare_cached(
                "SELECT doc FROM apigateway_items WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 AND id = ?5",
            )?
            .query_row(
                params![scope.account, scope.region, scope.kind, scope.parent, id],
                |r| r.get::<_, String>(0),
            )
            .optional()
            .map(|t| t.as_deref().map(parse))
            .map_err(AwsError::from)
        })
    }

    /// The document of `kind` with this id, in whatever account and region it lives.
    pub fn locate(&self, kind: &str, id: &str) -> AwsResult<Option<Located>> {
        self.ready()?.read(|c| {
            c.prepare_cached(
                "SELECT account, region, doc FROM apigateway_items WHERE kind = ?1 AND id = ?2 LIMIT 1",
            )?
            .query_row(params![kind, id], |r| {
                Ok(Located {
                    account: r.get(0)?,
                    region: r.get(1)?,
                    doc: parse(&r.get::<_, String>(2)?),
                })
            })
            .optional()
            .map_err(AwsError::from)
        })
    }

    /// Every document in `scope`, in the order they were created.
    pub fn list(&self, scope: Scope<'_>) -> AwsResult<Vec<Json>> {
        self.ready()?.read(|c| {
            let mut st = c.prepare_cached(
                "SELECT doc FROM apigateway_items WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 ORDER BY rowid",
            )?;
            let rows = st.query_map(
                params![scope.account, scope.region, scope.kind, scope.parent],
                |r| r.get::<_, String>(0),
            )?;
            rows.map(|r| r.map(|t| parse(&t)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// Writes document `id` in `scope` (an update keeps its place in the creation order).
    pub fn put(&self, scope: Scope<'_>, id: &str, doc: &Json) -> AwsResult<()> {
        self.ready()?.with(|c| {
            c.prepare_cached(
                "INSERT INTO apigateway_items (account, region, kind, parent, id, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
                 ON CONFLICT (account, region, kind, parent, id) DO UPDATE SET doc = excluded.doc",
            )?
            .execute(params![
                scope.account,
                scope.region,
                scope.kind,
                scope.parent,
                id,
                doc.to_string()
            ])
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }

    /// Removes document `id` in `scope`; whether there was one.
    pub fn delete(&self, scope: Scope<'_>, id: &str) -> AwsResult<bool> {
        self.ready()?.with(|c| {
            c.prepare_cached(
                "DELETE FROM apigateway_items WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 AND id = ?5",
            )?
            .execute(params![scope.account, scope.region, scope.kind, scope.parent, id])
            .map(|n| n > 0)
            .map_err(AwsError::from)
        })
    }

    /// Removes every document whose parent is `parent` (an API's, when it is deleted).
    pub fn delete_children(&self, account: &str, region: &str, parent: &str) -> AwsResult<()> {
        self.ready()?.with(|c| {
            c.prepare_cached(
                "DELETE FROM apigateway_items WHERE account = ?1 AND region = ?2 AND parent = ?3",
            )?
            .execute(params![account, region, parent])
            .map(|_| ())
            .map_err(AwsError::from)
        })
    }
}
