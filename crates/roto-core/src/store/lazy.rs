//! Tables a service creates on its first call rather than at start-up, so that a server
//! never asked for the service pays nothing for it (the services added after the first
//! eleven are built this way).

use std::sync::OnceLock;

use super::Store;
use crate::{AwsError, AwsResult};

/// A service's schemas, applied to the store the first time it is needed.
pub struct LazySchema {
    schemas: &'static [&'static str],
    ready: OnceLock<()>,
}

impl LazySchema {
    /// The schemas, not yet applied.
    pub const fn new(schemas: &'static [&'static str]) -> LazySchema {
        LazySchema {
            schemas,
            ready: OnceLock::new(),
        }
    }

    /// `store`, with the schemas applied. The first call applies them (concurrent first
    /// calls may both do so: every statement is `IF NOT EXISTS`); a failure is an internal
    /// error and the next call tries again.
    pub fn store<'a>(&self, store: &'a Store) -> AwsResult<&'a Store> {
        if self.ready.get().is_none() {
            for schema in self.schemas {
                store
                    .migrate(schema)
                    .map_err(|e| AwsError::internal(e.to_string()))?;
            }
            let _ = self.ready.set(());
        }
        Ok(store)
    }
}
