//! Which resource and method of a deployed REST API a request reaches, as AWS routes:
//! level by level, a literal path part before a `{param}` before a greedy `{proxy+}`,
//! backtracking when a branch has no resource with the request's method (or `ANY`).

use std::collections::BTreeMap;

use serde_json::Value as Json;

/// Where a request lands.
#[derive(Debug)]
pub struct Matched<'s> {
    /// The resource.
    pub resource: &'s Json,
    /// The method's document (the request's method, else `ANY`).
    pub method: &'s Json,
    /// The path parameters, decoded (`{proxy+}` holds the rest of the path, `/`-joined).
    pub params: BTreeMap<String, String>,
}

/// The resource tree of a snapshot: children by parent id.
struct Tree<'s> {
    resources: &'s [Json],
}

impl<'s> Tree<'s> {
    fn children(&self, parent: &str) -> Vec<&'s Json> {
        let mut children: Vec<&Json> = self
            .resources
            .iter()
            .filter(|r| r["parentId"].as_str() == Some(parent))
            .collect();
        children.sort_by_key(|r| {
            let part = r["pathPart"].as_str().unwrap_or_default();
            match (part.starts_with('{'), part.ends_with("+}")) {
                (false, _) => 0,
                (true, false) => 1,
                (true, true) => 2,
            }
        });
        children
    }

    fn walk(
        &self,
        node: &'s Json,
        rest: &[String],
        method: &str,
        params: &mut BTreeMap<String, String>,
    ) -> Option<(&'s Json, &'s Json)> {
        let Some((segment, tail)) = rest.split_first() else {
            return method_of(node, method).map(|m| (node, m));
        };
        for child in self.children(node["id"].as_str().unwrap_or_default()) {
            let part = child["pathPart"].as_str().unwrap_or_default();
            let name = part.trim_start_matches('{').trim_end_matches('}');
            if part.ends_with("+}") {
                if let Some(m) = method_of(child, method) {
                    params.insert(name.trim_end_matches('+').to_string(), rest.join("/"));
                    return Some((child, m));
                }
                continue;
            }
            let matches = if part.starts_with('{') {
                !segment.is_empty()
            } else {
                part == segment
            };
            if !matches {
                continue;
            }
            let added = part.starts_with('{').then(|| name.to_string());
            if let Some(key) = &added {
                params.insert(key.clone(), segment.clone());
            }
            if let Some(found) = self.walk(child, tail, method, params) {
                return Some(found);
            }
            if let Some(key) = added {
                params.remove(&key);
            }
        }
        None
    }
}

fn method_of<'s>(resource: &'s Json, method: &str) -> Option<&'s Json> {
    let methods = resource.get("resourceMethods")?;
    methods.get(method).or_else(|| methods.get("ANY"))
}

/// The resource and method for `segments` (the path after the stage, split on `/` and
/// percent-decoded) and `method`; `None` is AWS's Missing Authentication Token.
pub fn route<'s>(resources: &'s [Json], segments: &[String], method: &str) -> Option<Matched<'s>> {
    let root = resources.iter().find(|r| r.get("parentId").is_none())?;
    let mut params = BTreeMap::new();
    let (resource, method) = Tree { resources }.walk(root, segments, method, &mut params)?;
    Some(Matched {
        resource,
        method,
        params,
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    fn tree() -> Vec<Json> {
        vec![
            json!({"id": "r", "path": "/", "resourceMethods": {"GET": {"n": "root"}}}),
            json!({"id": "i", "parentId": "r", "pathPart": "items", "resourceMethods": {"GET": {"n": "list"}}}),
            json!({"id": "id", "parentId": "i", "pathPart": "{id}", "resourceMethods": {"ANY": {"n": "one"}}}),
            json!({"id": "new", "parentId": "i", "pathPart": "new", "resourceMethods": {"POST": {"n": "new"}}}),
            json!({"id": "p", "parentId": "r", "pathPart": "{proxy+}", "resourceMethods": {"ANY": {"n": "proxy"}}}),
        ]
    }

    fn hit(path: &str, method: &str) -> Option<(String, BTreeMap<String, String>)> {
        let t = tree();
        let segments: Vec<String> = path
            .split('/')
            .filter(|s| !s.is_empty())
            .map(str::to_string)
            .collect();
        route(&t, &segments, method)
            .map(|m| (m.method["n"].as_str().unwrap().to_string(), m.params))
    }

    #[test]
    fn literals_beat_parameters_beat_greedy_paths() {
        assert_eq!(hit("/", "GET").unwrap().0, "root");
        assert_eq!(hit("/items", "GET").unwrap().0, "list");
        assert_eq!(hit("/items/new", "POST").unwrap().0, "new");
        let (name, params) = hit("/items/new", "GET").unwrap();
        assert_eq!((name.as_str(), params["id"].as_str()), ("one", "new"));
        let (name, params) = hit("/items/7", "DELETE").unwrap();
        assert_eq!((name.as_str(), params["id"].as_str()), ("one", "7"));
        let (name, params) = hit("/other/a/b", "PUT").unwrap();
        assert_eq!(
            (name.as_str(), params["proxy"].as_str()),
            ("proxy", "other/a/b")
        );
        let (name, params) = hit("/items/7/deeper", "GET").unwrap();
        assert_eq!(
            (name.as_str(), params["proxy"].as_str()),
            ("proxy", "items/7/deeper")
        );
        assert!(hit("/", "POST").is_none());
    }
}
