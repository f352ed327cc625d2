//! The documents API Gateway keeps: one table of JSON documents (see
//! [`crate::documents`]), each named by its kind (`restapi`, `resource`, `stage`, `apikey`,
//! ...), its parent's id (the API's, for what belongs to an API; empty for what belongs to
//! the account) and its own id. API ids are unique across accounts and regions (the data
//! plane finds an API by its id alone, as AWS's host names do).

use std::sync::Arc;

use roto_core::Env;

use crate::documents::documents_schema;
pub use crate::documents::{Documents as Store, Scope};

static SCHEMA: &[&str] = &[documents_schema!("apigateway_items")];

/// API Gateway's document table, created on the first call that needs it.
pub fn open(env: Arc<Env>) -> Store {
    Store::new(env, "apigateway_items", SCHEMA)
}
