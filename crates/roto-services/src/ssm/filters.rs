//! The `Filters` of SSM's Describe operations (`Key` and `Values`): an item is kept when,
//! for every filter, the value the operation reads for the key is one of the values.

use roto_core::{AwsResult, Value};

/// The items every filter in `filters` keeps; `read` gives an item's value for a key.
pub(super) fn keep(
    items: Vec<Value>,
    filters: Option<&Value>,
    read: impl Fn(&Value, &str) -> Option<String>,
) -> AwsResult<Vec<Value>> {
    let filters = filters.and_then(Value::as_list).unwrap_or_default();
    Ok(items
        .into_iter()
        .filter(|item| {
            filters.iter().all(|f| {
                let key = f.str("Key").unwrap_or_default();
                let values = f.get("Values").and_then(Value::as_list).unwrap_or_default();
                let actual = read(item, key);
                values.is_empty()
                    || values
                        .iter()
                        .any(|v| v.as_str().is_some() && v.as_str() == actual.as_deref())
            })
        })
        .collect())
}
