//! Operation matching: method + URI template (`/{Bucket}/{Key+}?uploads`).
//!
//! Every template that matches the request's path and literal query keys is a candidate;
//! the most specific wins: more required literal query keys, then more required query and
//! header members present (S3's `UploadPart` over `PutObject`), then more literal path
//! segments, then the non-deprecated operation. Candidates missing a required query or
//! header member lose to any that are not. Templates are parsed once per model.

use std::cmp::Reverse;

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation};
use crate::protocol::{Protocol, Resolved, WireRequest};

/// One path segment of a URI template.
#[derive(Debug, PartialEq)]
enum Segment {
    Literal(String),
    Label(String),
    Greedy(String),
}

/// A parsed request URI template.
#[derive(Debug)]
struct Template {
    operation: String,
    method: String,
    segments: Vec<Segment>,
    /// Literal query keys with their required value, if any (`list-type=2`, `uploads`).
    query: Vec<(String, Option<String>)>,
    /// Wire names of required `querystring` members.
    required_query: Vec<String>,
    /// Lower-cased names of required `header` members.
    required_headers: Vec<String>,
    deprecated: bool,
}

impl Template {
    fn parse(op: &Operation, model: &Model) -> Template {
        let (path, query) = op
            .http
            .request_uri
            .split_once('?')
            .unwrap_or((op.http.request_uri, ""));
        let segments = path
            .trim_start_matches('/')
            .split('/')
            .filter(|s| !s.is_empty())
            .map(
                |s| match s.strip_prefix('{').and_then(|s| s.strip_suffix('}')) {
                    Some(label) => match label.strip_suffix('+') {
                        Some(greedy) => Segment::Greedy(greedy.to_string()),
                        None => Segment::Label(label.to_string()),
                    },
                    None => Segment::Literal(s.to_string()),
                },
            )
            .collect();
        let query = query
            .split('&')
            .filter(|q| !q.is_empty())
            .map(|q| match q.split_once('=') {
                Some((k, v)) => (k.to_string(), Some(v.to_string())),
                None => (q.to_string(), None),
            })
            .filter(|(k, _)| k != "x-id")
            .collect();
        let (mut required_query, mut required_headers) = (Vec::new(), Vec::new());
        if let Some(input) = &op.input {
            let shape = model.resolve(input);
            for (name, member) in shape.members.iter() {
                if !shape.required.contains(&name) {
                    continue;
                }
                let wire = member.location_name.unwrap_or(name);
                match member.location {
                    Some("querystring") => required_query.push(wire.to_string()),
                    Some("header") => required_headers.push(wire.to_ascii_lowercase()),
                    _ => {}
                }
            }
        }
        Template {
            operation: op.name.to_string(),
            method: op.http.method.to_string(),
            segments,
            query,
            required_query,
            required_headers,
            deprecated: op.deprecated,
        }
    }

    /// Whether `path` (percent-encoded) has this template's shape.
    fn matches_path(&self, path: &str) -> bool {
        let mut rest = path.strip_prefix('/').unwrap_or(path);
        for segment in &self.segments {
            if let Segment::Greedy(_) = segment {
                return !rest.is_empty();
            }
            let (head, tail) = rest.split_once('/').unwrap_or((rest, ""));
            match segment {
                Segment::Literal(literal) if head == literal => {}
                Segment::Label(_) if !head.is_empty() => {}
                _ => return false,
            }
            rest = tail;
        }
        rest.is_empty()
    }

    /// The labels `path` binds, percent-decoded; `path` must match (`matches_path`).
    fn labels(&self, path: &str) -> Labels {
        let mut rest = path.strip_prefix('/').unwrap_or(path);
        let mut labels = Vec::new();
        for segment in &self.segments {
            let (head, tail) = rest.split_once('/').unwrap_or((rest, ""));
            match segment {
                Segment::Greedy(name) => {
                    labels.push((name.clone(), percent_decode(rest)));
                    break;
                }
                Segment::Label(name) => labels.push((name.clone(), percent_decode(head))),
                Segment::Literal(_) => {}
            }
            rest = tail;
        }
        labels
    }

    fn matches_query(&self, query: &[(String, String)]) -> bool {
        self.query.iter().all(|(key, value)| {
            query
                .iter()
                .any(|(k, v)| k == key && value.as_ref().is_none_or(|value| value == v))
        })
    }

    /// How many required query and header members are present, and how many are missing.
    fn required_members(
        &self,
        req: &WireRequest<'_>,
        query: &[(String, String)],
    ) -> (usize, usize) {
        let present = self
            .required_query
            .iter()
            .filter(|q| query.iter().any(|(k, _)| k == *q))
            .count()
            + self
                .required_headers
                .iter()
                .filter(|h| req.headers.contains_key(h.as_str()))
                .count();
        (
            present,
            self.required_query.len() + self.required_headers.len() - present,
        )
    }

    fn literal_segments(&self) -> usize {
        self.segments
            .iter()
            .filter(|s| matches!(s, Segment::Literal(_)))
            .count()
    }

    /// `OBJECT`, `BUCKET` or `SERVICE`: what S3 calls the resource a path names.
    fn resource_type(&self) -> &'static str {
        if self
            .segments
            .iter()
            .any(|s| matches!(s, Segment::Greedy(_)))
        {
            "OBJECT"
        } else if self.segments.iter().any(|s| matches!(s, Segment::Label(_))) {
            "BUCKET"
        } else {
            "SERVICE"
        }
    }
}

/// Percent-decodes a path part (`+` stays a plus in paths).
pub(super) fn percent_decode(s: &str) -> String {
    percent_encoding::percent_decode_str(s)
        .decode_utf8_lossy()
        .into_owned()
}

/// The query string's pairs, decoded (`+` is a space in query strings).
pub(super) fn query_pairs(query: &str) -> Vec<(String, String)> {
    form_urlencoded::parse(query.as_bytes())
        .into_owned()
        .collect()
}

/// How specific a match is; higher wins.
type Score<'a> = (usize, usize, usize, usize, bool, Reverse<&'a str>);

type Labels = Vec<(String, String)>;

/// A model's URI templates, parsed once per model (kept in the model), in model order
/// and indexed by method, so that a request weighs only its method's templates.
#[derive(Debug)]
pub(crate) struct Routes {
    templates: Vec<Template>,
    by_method: Vec<(String, Vec<usize>)>,
}

fn routes(model: &Model) -> &Routes {
    model.rest_routes.get_or_init(|| {
        let templates: Vec<Template> = model
            .operations()
            .map(|op| Template::parse(op, model))
            .collect();
        let mut by_method: Vec<(String, Vec<usize>)> = Vec::new();
        for (i, t) in templates.iter().enumerate() {
            match by_method.iter_mut().find(|(m, _)| *m == t.method) {
                Some((_, indices)) => indices.push(i),
                None => by_method.push((t.method.clone(), vec![i])),
            }
        }
        Routes {
            templates,
            by_method,
        }
    })
}

/// Refuses a path or query whose percent-escapes decode to bytes that are not UTF-8:
/// decoded lossily, `%FF` and `%FE` would both name U+FFFD and one object would replace
/// the other.
fn check_utf8(model: &Model, req: &WireRequest<'_>) -> AwsResult<()> {
    let utf8 = |s: &str| {
        percent_encoding::percent_decode_str(s)
            .decode_utf8()
            .is_ok()
    };
    if utf8(req.path) && req.query.split(['&', '=']).all(utf8) {
        return Ok(());
    }
    Err(match Protocol::of(model) {
        Protocol::RestXml => {
            AwsError::new("InvalidURI", "Couldn't parse the specified URI.").with_status(400)
        }
        _ => AwsError::new(
            "ValidationException",
            "The request URI is not valid UTF-8 once percent-decoded.",
        )
        .with_status(400),
    })
}

/// Resolves the operation, or the protocol's error for a request no operation serves.
pub fn resolve<'m>(model: &'m Model, req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
    check_utf8(model, req)?;
    let routes = routes(model);
    let query = query_pairs(req.query);
    let mut best: Option<(Score<'_>, &Template)> = None;
    let candidates = routes
        .by_method
        .iter()
        .filter(|(method, _)| method.eq_ignore_ascii_case(req.method.as_str()))
        .flat_map(|(_, indices)| indices.iter().map(|&i| &routes.templates[i]));
    for t in candidates {
        if !t.matches_query(&query) || !t.matches_path(req.path) {
            continue;
        }
        let (present, missing) = t.required_members(req, &query);
        let score = (
            usize::from(missing == 0),
            t.query.len(),
            present,
            t.literal_segments(),
            !t.deprecated,
            Reverse(t.operation.as_str()),
        );
        if best.as_ref().is_none_or(|(s, _)| score > *s) {
            best = Some((score, t));
        }
    }
    if let Some((_, t)) = best {
        if let Some(operation) = model.operation(&t.operation) {
            let labels = t.labels(req.path);
            return Ok(Resolved { operation, labels });
        }
    }
    let path_matched = routes
        .templates
        .iter()
        .find(|t| t.matches_query(&query) && t.matches_path(req.path));
    Err(match (Protocol::of(model), path_matched) {
        (Protocol::RestXml, Some(t)) => AwsError::new(
            "MethodNotAllowed",
            "The specified method is not allowed against this resource.",
        )
        .with_status(405)
        .with_field("Method", req.method.as_str())
        .with_field("ResourceType", t.resource_type()),
        (Protocol::RestXml, None) => {
            AwsError::new("NotFound", "The requested resource was not found.").with_status(404)
        }
        _ => AwsError::new(
            "UnknownOperationException",
            format!("No operation serves {} {}", req.method, req.path),
        )
        .with_status(404),
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;
    use http::{HeaderMap, HeaderValue, Method};

    fn op(
        service: &str,
        method: Method,
        path: &str,
        query: &str,
        headers: &HeaderMap,
    ) -> AwsResult<(String, Vec<(String, String)>)> {
        let req = WireRequest {
            method: &method,
            path,
            query,
            headers,
            body: b"",
        };
        resolve(model(service), &req).map(|r| (r.operation.name.to_string(), r.labels))
    }

    fn name(service: &str, method: Method, path: &str, query: &str) -> String {
        match op(service, method, path, query, &HeaderMap::new()) {
            Ok((name, _)) => name,
            Err(e) => e.code.to_string(),
        }
    }

    #[test]
    fn bucket_paths_with_and_without_trailing_slash_name_the_bucket() {
        let (found, labels) = op("s3", Method::PUT, "/b", "", &HeaderMap::new()).unwrap();
        assert_eq!(found, "CreateBucket");
        assert_eq!(labels, vec![("Bucket".into(), "b".into())]);
        assert_eq!(name("s3", Method::PUT, "/b/", ""), "CreateBucket");
        assert_eq!(name("s3", Method::GET, "/", ""), "ListBuckets");
        assert_eq!(name("s3", Method::HEAD, "/b", ""), "HeadBucket");
        assert_eq!(name("s3", Method::DELETE, "/b", ""), "DeleteBucket");
    }

    #[test]
    fn greedy_keys_keep_slashes_plus_and_decode_percent_escapes() {
        let (found, labels) = op(
            "s3",
            Method::PUT,
            "/b/a/b%2Fc%20d+e/%E2%82%AC/",
            "",
            &HeaderMap::new(),
        )
        .unwrap();
        assert_eq!(found, "PutObject");
        assert_eq!(labels[1], ("Key".into(), "a/b/c d+e/€/".into()));
        let (_, labels) = op("s3", Method::GET, "/b//", "", &HeaderMap::new()).unwrap();
        assert_eq!(labels[1].1, "/");
    }

    #[test]
    fn literal_query_keys_make_an_operation_more_specific() {
        assert_eq!(
            name("s3", Method::GET, "/b", "list-type=2&prefix=a"),
            "ListObjectsV2"
        );
        assert_eq!(name("s3", Method::GET, "/b", "list-type=1"), "ListObjects");
        assert_eq!(name("s3", Method::GET, "/b", "prefix=a"), "ListObjects");
        assert_eq!(
            name("s3", Method::GET, "/b", "location"),
            "GetBucketLocation"
        );
        assert_eq!(name("s3", Method::PUT, "/b", "tagging"), "PutBucketTagging");
        assert_eq!(
            name("s3", Method::POST, "/b/k", "uploads"),
            "CreateMultipartUpload"
        );
        assert_eq!(
            name("s3", Method::GET, "/b/k", "tagging"),
            "GetObjectTagging"
        );
        assert_eq!(
            name("s3", Method::GET, "/b", "lifecycle"),
            "GetBucketLifecycleConfiguration"
        );
        assert_eq!(
            name("s3", Method::GET, "/b/k", "x-id=GetObject"),
            "GetObject"
        );
    }

    #[test]
    fn required_query_and_header_members_pick_between_equal_templates() {
        assert_eq!(name("s3", Method::PUT, "/b/k", ""), "PutObject");
        assert_eq!(
            name("s3", Method::PUT, "/b/k", "partNumber=1&uploadId=u"),
            "UploadPart"
        );
        assert_eq!(name("s3", Method::GET, "/b/k", "uploadId=u"), "ListParts");
        let mut h = HeaderMap::new();
        h.insert("x-amz-copy-source", HeaderValue::from_static("/a/b"));
        assert_eq!(
            op("s3", Method::PUT, "/b/k", "", &h).unwrap().0,
            "CopyObject"
        );
        assert_eq!(
            op("s3", Method::PUT, "/b/k", "partNumber=1&uploadId=u", &h)
                .unwrap()
                .0,
            "UploadPartCopy"
        );
    }

    #[test]
    fn wrong_method_on_a_known_resource_is_method_not_allowed() {
        let err = op("s3", Method::PATCH, "/b/k", "", &HeaderMap::new()).unwrap_err();
        assert_eq!(err.code, "MethodNotAllowed");
        assert_eq!(err.status, Some(405));
        assert_eq!(err.fields.str("Method"), Some("PATCH"));
        assert_eq!(err.fields.str("ResourceType"), Some("OBJECT"));
    }

    #[test]
    fn rest_json_templates_bind_labels_and_reject_unknown_paths() {
        let (found, labels) = op(
            "lambda",
            Method::GET,
            "/2015-03-31/functions/my-fn",
            "Qualifier=1",
            &HeaderMap::new(),
        )
        .unwrap();
        assert_eq!(found, "GetFunction");
        assert_eq!(labels, vec![("FunctionName".into(), "my-fn".into())]);
        assert_eq!(
            name_of("/2015-03-31/functions/f/invocations", Method::POST),
            "Invoke"
        );
        assert_eq!(
            name_of("/2015-03-31/functions", Method::POST),
            "CreateFunction"
        );
        assert_eq!(
            name_of("/2015-03-31/functions/", Method::GET),
            "ListFunctions"
        );
        assert_eq!(name_of("/nope", Method::GET), "UnknownOperationException");
        assert_eq!(
            name(
                "lambda",
                Method::GET,
                "/2019-09-30/functions/f/provisioned-concurrency",
                "List=ALL"
            ),
            "ListProvisionedConcurrencyConfigs"
        );
        assert_eq!(
            name(
                "lambda",
                Method::GET,
                "/2019-09-30/functions/f/provisioned-concurrency",
                "Qualifier=1"
            ),
            "GetProvisionedConcurrencyConfig"
        );
    }

    #[test]
    fn names_that_are_not_utf8_once_decoded_are_refused() {
        for (path, query) in [("/b/%FF", ""), ("/%FE", ""), ("/b", "prefix=%C3")] {
            let err = op("s3", Method::PUT, path, query, &HeaderMap::new()).unwrap_err();
            assert_eq!((err.code.as_ref(), err.status), ("InvalidURI", Some(400)));
        }
        let err = op(
            "lambda",
            Method::GET,
            "/2015-03-31/functions/%FF",
            "",
            &HeaderMap::new(),
        )
        .unwrap_err();
        assert_eq!(err.code, "ValidationException");
        assert_eq!(name("s3", Method::PUT, "/b/%E2%82%AC", ""), "PutObject");
    }

    fn name_of(path: &str, method: Method) -> String {
        name("lambda", method, path, "")
    }
}
