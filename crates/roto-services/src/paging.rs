//! Offset pagination for list operations whose results are computed in full (KMS's
//! `Marker`, Secrets Manager's and SSM's `NextToken`): the token is the position of the next
//! item, so it is opaque to callers and stable while the list does not change.

use roto_core::{AwsError, AwsResult, Value};

/// One page of `items`, starting at `token`, with the token of the next page if any.
/// A token that is not one this function issued is `bad_token`.
pub fn page(
    items: Vec<Value>,
    limit: usize,
    token: Option<&str>,
    bad_token: impl FnOnce() -> AwsError,
) -> AwsResult<(Vec<Value>, Option<String>)> {
    let start = match token {
        None => 0,
        Some(t) => match t.strip_prefix("p").and_then(|n| n.parse::<usize>().ok()) {
            Some(n) if n <= items.len() => n,
            _ => return Err(bad_token()),
        },
    };
    let end = start.saturating_add(limit.max(1)).min(items.len());
    let next = (end < items.len()).then(|| format!("p{end}"));
    Ok((
        items.into_iter().skip(start).take(end - start).collect(),
        next,
    ))
}

#[cfg(test)]
mod tests {
    use super::*;

    fn items(n: i64) -> Vec<Value> {
        (0..n).map(Value::Integer).collect()
    }

    #[test]
    fn pages_walk_the_list_and_reject_foreign_tokens() {
        let bad = || AwsError::validation("bad");
        let (first, next) = page(items(5), 2, None, bad).unwrap();
        assert_eq!(first, items(2));
        let (second, next) = page(items(5), 2, next.as_deref(), bad).unwrap();
        assert_eq!(second, vec![Value::Integer(2), Value::Integer(3)]);
        let (last, next) = page(items(5), 2, next.as_deref(), bad).unwrap();
        assert_eq!(last, vec![Value::Integer(4)]);
        assert!(next.is_none());
        assert!(page(items(5), 2, Some("zzz"), bad).is_err());
        assert!(page(items(5), 2, Some("p9"), bad).is_err());
    }
}
