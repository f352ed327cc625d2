//! Services' JSON documents in one table per service: each document is named by its kind
//! (API Gateway's `restapi` or `stage`, SSM's `document` or `window`), its parent's id (the
//! owner it belongs to; empty for what belongs to the account) and its own id.
//!
//! Resources that a service keeps whole and reads back whole (configuration-style
//! resources with create, get, update, delete and list) need no table of their own: the
//! service names a table with [`Documents::new`], created on its first call, so a server
//! that never uses the service pays nothing for it.

use std::sync::Arc;

use roto_core::store::LazySchema;
use roto_core::{AwsError, AwsResult, Env};
use rusqlite::{params, OptionalExtension};
use serde_json::Value as Json;

/// The layout of a service's document table named `$table` (a string literal), for
/// [`Documents::new`].
macro_rules! documents_schema {
    ($table:literal) => {
        concat!(
            "CREATE TABLE IF NOT EXISTS ",
            $table,
            " (account TEXT NOT NULL, region TEXT NOT NULL, kind TEXT NOT NULL, parent TEXT NOT NULL, id TEXT NOT NULL, doc TEXT NOT NULL, PRIMARY KEY (account, region, kind, parent, id));",
            "CREATE INDEX IF NOT EXISTS ",
            $table,
            "_by_id ON ",
            $table,
            " (kind, id);"
        )
    };
}
pub(crate) use documents_schema;

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

impl<'a> Scope<'a> {
    /// The documents of `kind` under `parent` in the caller's account and region.
    pub fn of(ctx: &'a roto_core::Context, kind: &'a str, parent: &'a str) -> Scope<'a> {
        Scope {
            account: &ctx.account,
            region: &ctx.region,
            kind,
            parent,
        }
    }
}

/// A service's document table over the shared environment's store.
pub struct Documents {
    env: Arc<Env>,
    table: &'static str,
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

impl Documents {
    /// The documents of the table `table` (a service's prefix and `_items`), whose
    /// `schema` ([`documents_schema`] of the same name) is created on first use.
    pub fn new(env: Arc<Env>, table: &'static str, schema: &'static [&'static str]) -> Documents {
        Documents {
            env,
            table,
            schema: LazySchema::new(schema),
        }
    }

    fn ready(&self) -> AwsResult<&roto_core::store::Store> {
        self.schema.store(&self.env.store)
    }

    fn sql(&self, text: &str) -> String {
        text.replace("{table}", self.table)
    }

    /// The document `id` in `scope`, if any.
    pub fn get(&self, scope: Scope<'_>, id: &str) -> AwsResult<Option<Json>> {
        let sql = self.sql(
            "SELECT doc FROM {table} WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 AND id = ?5",
        );
        self.ready()?.read(|c| {
            c.prepare_cached(&sql)?
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
        let sql = self
            .sql("SELECT account, region, doc FROM {table} WHERE kind = ?1 AND id = ?2 LIMIT 1");
        self.ready()?.read(|c| {
            c.prepare_cached(&sql)?
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
        let sql = self.sql(
            "SELECT doc FROM {table} WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 ORDER BY rowid",
        );
        self.ready()?.read(|c| {
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map(
                params![scope.account, scope.region, scope.kind, scope.parent],
                |r| r.get::<_, String>(0),
            )?;
            rows.map(|r| r.map(|t| parse(&t)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// Every document of `kind` in the account and region, whatever its parent, in the
    /// order they were created.
    pub fn list_kind(&self, account: &str, region: &str, kind: &str) -> AwsResult<Vec<Json>> {
        let sql = self.sql(
            "SELECT doc FROM {table} WHERE account = ?1 AND region = ?2 AND kind = ?3 ORDER BY rowid",
        );
        self.ready()?.read(|c| {
            let mut st = c.prepare_cached(&sql)?;
            let rows = st.query_map(params![account, region, kind], |r| r.get::<_, String>(0))?;
            rows.map(|r| r.map(|t| parse(&t)))
                .collect::<rusqlite::Result<Vec<_>>>()
                .map_err(AwsError::from)
        })
    }

    /// Writes document `id` in `scope` (an update keeps its place in the creation order).
    pub fn put(&self, scope: Scope<'_>, id: &str, doc: &Json) -> AwsResult<()> {
        let sql = self.sql(
            "INSERT INTO {table} (account, region, kind, parent, id, doc) VALUES (?1, ?2, ?3, ?4, ?5, ?6)
             ON CONFLICT (account, region, kind, parent, id) DO UPDATE SET doc = excluded.doc",
        );
        self.ready()?.with(|c| {
            c.prepare_cached(&sql)?
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
        let sql = self.sql(
            "DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND kind = ?3 AND parent = ?4 AND id = ?5",
        );
        self.ready()?.with(|c| {
            c.prepare_cached(&sql)?
                .execute(params![
                    scope.account,
                    scope.region,
                    scope.kind,
                    scope.parent,
                    id
                ])
                .map(|n| n > 0)
                .map_err(AwsError::from)
        })
    }

    /// Removes every document whose parent is `parent` (what belongs to a deleted owner).
    pub fn delete_children(&self, account: &str, region: &str, parent: &str) -> AwsResult<()> {
        let sql =
            self.sql("DELETE FROM {table} WHERE account = ?1 AND region = ?2 AND parent = ?3");
        self.ready()?.with(|c| {
            c.prepare_cached(&sql)?
                .execute(params![account, region, parent])
                .map(|_| ())
                .map_err(AwsError::from)
        })
    }
}

/// Documents as shaped values: written whole, read back whole or as one of the model's
/// shapes (a Get's output, a List's summary).
impl Documents {
    /// The document `id` in `scope`, every member kept, if any.
    pub fn value(&self, scope: Scope<'_>, id: &str) -> AwsResult<Option<roto_core::Value>> {
        Ok(self
            .get(scope, id)?
            .map(|doc| roto_core::Value::from_json(&doc)))
    }

    /// The document `id` in `scope` read as the model's `shape`, if any.
    pub fn value_as(
        &self,
        model: &roto_core::model::Model,
        scope: Scope<'_>,
        id: &str,
        shape: &str,
    ) -> AwsResult<Option<roto_core::Value>> {
        match self.get(scope, id)? {
            Some(doc) => shaped(model, shape, &doc).map(Some),
            None => Ok(None),
        }
    }

    /// Every document in `scope`, in creation order, read as the model's `shape`.
    pub fn values_as(
        &self,
        model: &roto_core::model::Model,
        scope: Scope<'_>,
        shape: &str,
    ) -> AwsResult<Vec<roto_core::Value>> {
        self.list(scope)?
            .iter()
            .map(|doc| shaped(model, shape, doc))
            .collect()
    }

    /// Writes the shaped value `value` as document `id` in `scope`.
    pub fn put_value(&self, scope: Scope<'_>, id: &str, value: &roto_core::Value) -> AwsResult<()> {
        self.put(scope, id, &document(value))
    }
}

/// A shaped value as a document: every member kept, timestamps as epoch seconds and blobs
/// as base64, as the json protocol writes them, so [`shaped`] reads it back by any shape.
pub fn document(value: &roto_core::Value) -> Json {
    roto_core::protocol::json::value_to_json(value)
}

/// A document read as the model's shape `shape`: the shape's members only, typed by it
/// (a stored resource read back as a Get's output or a List's summary).
pub fn shaped(
    model: &roto_core::model::Model,
    shape: &str,
    doc: &Json,
) -> AwsResult<roto_core::Value> {
    let r = model.shape_ref(shape);
    roto_core::protocol::json::decode_value(model, &r, model.shape(shape), doc, "")
}
