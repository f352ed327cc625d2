//! Keyset paging for the lists that grow without bound (state machines, activities,
//! executions): a page reads only its own rows, `LIMIT n + 1` after the last row of the
//! previous page by (sort key, rowid), so the thousandth page costs what the first does.
//! The token carries that position; one this service did not issue is `InvalidToken`.

use roto_core::{AwsResult, Value};

use super::{bad_token, page_size};

/// Where a page starts and how many rows it holds.
pub(super) struct Keyset {
    /// The (sort key, rowid) the page starts after (before, for a descending list).
    pub after: (i64, i64),
    /// The page size.
    pub limit: usize,
}

impl Keyset {
    /// The page a request asks for; `descending` lists start from the largest key.
    pub fn of(input: &Value, descending: bool) -> AwsResult<Keyset> {
        let after = match input.str("nextToken") {
            None if descending => (i64::MAX, i64::MAX),
            None => (i64::MIN, i64::MIN),
            Some(token) => parse(token).ok_or_else(bad_token)?,
        };
        Ok(Keyset {
            after,
            limit: page_size(input),
        })
    }

    /// The SQL LIMIT: one row more than the page, to know whether another page follows.
    pub fn fetch(&self) -> i64 {
        i64::try_from(self.limit).unwrap_or(i64::MAX - 1) + 1
    }

    /// The page of rows read with [`Keyset::fetch`] (each with its sort key and rowid),
    /// and the token of the next page if there is one.
    pub fn page(&self, mut rows: Vec<(i64, i64, Value)>) -> (Vec<Value>, Option<String>) {
        let more = rows.len() > self.limit;
        rows.truncate(self.limit);
        let next = rows
            .last()
            .filter(|_| more)
            .map(|(key, rowid, _)| format!("ks{key}.{rowid}"));
        (rows.into_iter().map(|(_, _, v)| v).collect(), next)
    }
}

fn parse(token: &str) -> Option<(i64, i64)> {
    let (key, rowid) = token.strip_prefix("ks")?.split_once('.')?;
    Some((key.parse().ok()?, rowid.parse().ok()?))
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn pages_carry_their_position_and_refuse_foreign_tokens() {
        let input = Value::map().with("maxResults", 2i64);
        let keyset = Keyset::of(&input, false).unwrap();
        assert_eq!(keyset.fetch(), 3);
        let rows = (1..=3).map(|i| (i * 10, i, Value::Integer(i))).collect();
        let (items, next) = keyset.page(rows);
        assert_eq!(items, vec![Value::Integer(1), Value::Integer(2)]);
        let next = next.unwrap();
        let again = Keyset::of(&Value::map().with("nextToken", next.as_str()), false).unwrap();
        assert_eq!(again.after, (20, 2));
        assert!(Keyset::of(&Value::map().with("nextToken", "nope"), false).is_err());
        let (_, last) = keyset.page(vec![(1, 1, Value::Null)]);
        assert!(last.is_none());
    }
}
