//! The DynamoDB features Roto does not model (global tables of version 2017.11.29, vector
//! indexes), answered as DynamoDB answers for tables without them: empty lists and the
//! not-found errors for a named global table or vector index. DynamoDB no longer creates global tables of version
//! 2017.11.29: CreateGlobalTable is a `ValidationException` pointing at version 2019.11.21,
//! so no account has one to describe, list or update.

use roto_core::featureless::Featureless;
use roto_core::{AwsError, Value};

/// Operations answered as for an account without the feature.
pub(super) const FEATURELESS: &[Featureless] = &[
    Featureless::error("CreateGlobalTable", |_| {
        AwsError::validation(
            "One or more parameter values were invalid: DynamoDB global tables version 2017.11.29 is not supported. We recommend using DynamoDB global tables version 2019.11.21, instead of version 2017.11.29 (Legacy).",
        )
    }),
    Featureless::empty("ListGlobalTables"),
    Featureless::error("DescribeGlobalTable", global_table_not_found),
    Featureless::error("DescribeGlobalTableSettings", global_table_not_found),
    Featureless::error("UpdateGlobalTable", global_table_not_found),
    Featureless::error("UpdateGlobalTableSettings", global_table_not_found),
    Featureless::error("SearchVectors", |_| super::tables::resource_not_found()),
];

fn global_table_not_found(input: &Value) -> AwsError {
    AwsError::new(
        "GlobalTableNotFoundException",
        format!(
            "Global table not found: Global table with name: {} does not exist.",
            input.str("GlobalTableName").unwrap_or_default()
        ),
    )
    .with_status(400)
}

impl super::DynamoDb {
    /// Answers an operation of a feature Roto does not model, once the table it names (if
    /// any) is known to exist.
    pub(super) fn unmodeled(
        &self,
        ctx: &roto_core::Context,
        operation: &str,
        input: &Value,
    ) -> roto_core::AwsResult<Value> {
        if let Some(name) = input.str("TableName") {
            let table = self
                .env
                .store
                .read(|c| super::tables::load_table(c, ctx, name))?;
            super::items::not_found_unless(table)?;
        }
        roto_core::featureless::answer(super::SPEC.model(), FEATURELESS, operation, input)
    }
}
