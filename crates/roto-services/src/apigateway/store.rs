//! The documents API Gateway keeps: one table of JSON documents (see
//! [`crate::documents`]), each named by its kind (`restapi`, `resource`, `stage`, `apikey`,
//! ...), its parent's id (the API's, for what belongs to an API; empty for what belongs to
//! the account) and its own id. API ids are unique across accounts and regions (the data
//! plane finds an API by its id alone, as AWS's host names do).

use std::sync::Arc;

use roto_core::Env;

use crate::documents::documents_schema;
pub use crate::documents::{Documents as Store, Scope};

/// The document table, and the data plane's indexes (API keys by value, usage plans by
/// key; see `rest::children`) filled in for documents a store written before the indexes
/// existed holds. Idempotent: every key and plan membership written since is indexed as
/// it is written. One schema, since each is applied on its own to a scratch database first.
static SCHEMA: &[&str] = &[concat!(
    documents_schema!("apigateway_items"),
    "INSERT OR IGNORE INTO apigateway_items (account, region, kind, parent, id, doc)
        SELECT account, region, 'apikey-value', '', json_extract(doc, '$.value'),
            json_object('id', id)
        FROM apigateway_items
        WHERE kind = 'apikey' AND json_extract(doc, '$.value') IS NOT NULL;
    INSERT OR IGNORE INTO apigateway_items (account, region, kind, parent, id, doc)
        SELECT account, region, 'apikey-plan', id, parent, json_object('id', parent)
        FROM apigateway_items WHERE kind = 'usageplankey';"
)];

/// API Gateway's document table, created on the first call that needs it.
pub fn open(env: Arc<Env>) -> Store {
    Store::new(env, "apigateway_items", SCHEMA)
}
