//! Which route of an HTTP API a request takes, as API Gateway chooses: of the routes whose
//! method and path match, the most specific, compared segment by segment from the left (a
//! literal segment over a `{param}`, a `{param}` over a greedy `{proxy+}`), then a named
//! method over `ANY`; `$default` when nothing else matches.
//!
//! Paths are compared segment by segment as sent (percent-encoded); path parameters are
//! given to integrations decoded. A route's greedy variable takes one or more segments.

use std::cmp::Ordering;

use roto_core::Value;

/// How specific one segment of a route's path is (greater is more specific).
#[derive(Clone, Copy, Debug, PartialEq, Eq, PartialOrd, Ord)]
enum Segment {
    Greedy,
    Param,
    Literal,
}

/// A route that matched, with what it bound.
#[derive(Debug)]
pub(super) struct Matched<'r> {
    pub route: &'r Value,
    pub parameters: Vec<(String, String)>,
    rank: (Vec<Segment>, bool),
}

/// The segments of a path, without the empty ones a leading or trailing slash makes.
fn segments(path: &str) -> Vec<&str> {
    path.split('/').filter(|s| !s.is_empty()).collect()
}

fn decode(segment: &str) -> String {
    percent_encoding::percent_decode_str(segment)
        .decode_utf8_lossy()
        .into_owned()
}

/// What a route's path binds (name, value), and how specific each of its segments is.
type Binding = (Vec<(String, String)>, Vec<Segment>);

/// Whether `pattern` (a route's path) matches `path`, and what it binds and how.
fn match_path(pattern: &str, path: &[&str]) -> Option<Binding> {
    let pattern = segments(pattern);
    let mut parameters = Vec::new();
    let mut rank = Vec::new();
    for (i, part) in pattern.iter().enumerate() {
        let variable = part.strip_prefix('{').and_then(|p| p.strip_suffix('}'));
        match variable {
            Some(name) if name.ends_with('+') => {
                let rest = path.get(i..).filter(|r| !r.is_empty())?;
                let value = rest.iter().map(|s| decode(s)).collect::<Vec<_>>().join("/");
                parameters.push((name.trim_end_matches('+').to_string(), value));
                rank.push(Segment::Greedy);
                return Some((parameters, rank));
            }
            Some(name) => {
                parameters.push((name.to_string(), decode(path.get(i)?)));
                rank.push(Segment::Param);
            }
            None if path.get(i) == Some(part) => rank.push(Segment::Literal),
            None => return None,
        }
    }
    (pattern.len() == path.len()).then_some((parameters, rank))
}

/// Whether one match is more specific than another.
fn more_specific(a: &Matched<'_>, b: &Matched<'_>) -> Ordering {
    a.rank.cmp(&b.rank)
}

/// The route `method` and `path` take among `routes` (route documents with `RouteKey`).
pub(super) fn choose<'r>(routes: &'r [Value], method: &str, path: &str) -> Option<Matched<'r>> {
    let path = segments(path);
    let best = routes
        .iter()
        .filter_map(|route| {
            let (route_method, pattern) = route.str("RouteKey")?.split_once(' ')?;
            let exact = route_method == method;
            if !exact && route_method != "ANY" {
                return None;
            }
            let (parameters, rank) = match_path(pattern, &path)?;
            Some(Matched {
                route,
                parameters,
                rank: (rank, exact),
            })
        })
        .max_by(more_specific);
    best.or_else(|| {
        let route = routes
            .iter()
            .find(|r| r.str("RouteKey") == Some("$default"))?;
        Some(Matched {
            route,
            parameters: Vec::new(),
            rank: (Vec::new(), false),
        })
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    fn routes(keys: &[&str]) -> Vec<Value> {
        keys.iter()
            .map(|k| Value::map().with("RouteKey", *k))
            .collect()
    }

    fn key_for(routes: &[Value], method: &str, path: &str) -> Option<String> {
        choose(routes, method, path).and_then(|m| m.route.str("RouteKey").map(str::to_string))
    }

    #[test]
    fn the_most_specific_route_wins() {
        let all = routes(&[
            "ANY /{proxy+}",
            "GET /items/{id}",
            "GET /items/special",
            "ANY /items/{id}",
            "$default",
            "GET /",
        ]);
        assert_eq!(
            key_for(&all, "GET", "/items/special").as_deref(),
            Some("GET /items/special")
        );
        assert_eq!(
            key_for(&all, "GET", "/items/7").as_deref(),
            Some("GET /items/{id}")
        );
        assert_eq!(
            key_for(&all, "DELETE", "/items/7").as_deref(),
            Some("ANY /items/{id}")
        );
        assert_eq!(
            key_for(&all, "GET", "/items/7/parts").as_deref(),
            Some("ANY /{proxy+}")
        );
        assert_eq!(key_for(&all, "GET", "/").as_deref(), Some("GET /"));
        assert_eq!(key_for(&all, "POST", "/").as_deref(), Some("$default"));
        assert!(key_for(&routes(&["GET /a"]), "GET", "/b").is_none());
    }

    #[test]
    fn parameters_are_bound_decoded_and_greedy_ones_take_the_rest() {
        let all = routes(&["GET /items/{id}", "ANY /files/{path+}"]);
        let m = choose(&all, "GET", "/items/a%20b").unwrap();
        assert_eq!(m.parameters, [("id".to_string(), "a b".to_string())]);
        let m = choose(&all, "PUT", "/files/x/y/z.txt").unwrap();
        assert_eq!(
            m.parameters,
            [("path".to_string(), "x/y/z.txt".to_string())]
        );
        assert!(choose(&all, "PUT", "/files").is_none());
        assert!(choose(&all, "GET", "/items/7/").is_some());
    }
}
