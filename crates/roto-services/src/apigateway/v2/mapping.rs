//! Parameter mapping of HTTP APIs: an integration's `RequestParameters` change what an
//! `HTTP_PROXY` integration is sent, and its `ResponseParameters` (by status code) change
//! what any integration's answer becomes, as AWS documents them.
//!
//! Keys are `{append|overwrite|remove}:{header|querystring}.{name}` and `overwrite:path`
//! (requests), `{append|overwrite|remove}:header.{name}` and `overwrite:statuscode`
//! (responses). Values are text in which `$request.header.{name}`,
//! `$request.querystring.{name}`, `$request.path.{name}`, `$request.path`, `$request.body`,
//! `$request.body.{JSONPath}`,
//! `$stageVariables.{name}`, `$context.{name}` and (in responses) `$response.header.{name}`
//! are written out (`${...}` also); what names nothing becomes empty.

use std::sync::OnceLock;

use roto_core::Value;

use super::super::invoke::{ApiRequest, ApiResponse};
use super::event::Target;

/// What an `HTTP_PROXY` integration is sent: its path, query and headers.
pub(super) struct Outgoing {
    pub path: Option<String>,
    pub query: Vec<(String, String)>,
    pub headers: Vec<(String, String)>,
}

impl Outgoing {
    /// The request as sent, with the headers `keep` keeps.
    pub(super) fn of(req: &ApiRequest, keep: impl Fn(&str) -> bool) -> Outgoing {
        Outgoing {
            path: None,
            query: req.query.clone(),
            headers: req
                .headers
                .iter()
                .filter(|(k, _)| keep(k.as_str()))
                .filter_map(|(k, v)| Some((k.as_str().to_string(), v.to_str().ok()?.to_string())))
                .collect(),
        }
    }
}

/// `value` with its variables written out by `lookup` (the variable's source and name).
fn render(value: &str, lookup: &dyn Fn(&str, &str) -> Option<String>) -> String {
    static PATTERN: OnceLock<regex_lite::Regex> = OnceLock::new();
    let pattern = PATTERN.get_or_init(|| {
        regex_lite::Regex::new(
            r"\$\{?(request\.header|request\.querystring|request\.path|request\.body|response\.header|stageVariables|context)(?:\.([A-Za-z0-9_.\-\[\]]+))?\}?",
        )
        .expect("a valid pattern")
    });
    pattern
        .replace_all(value, |c: &regex_lite::Captures<'_>| {
            let name = c.get(2).map_or("", |m| m.as_str());
            lookup(&c[1], name).unwrap_or_default()
        })
        .into_owned()
}

/// A request variable's value.
fn request_value(target: &Target<'_>, source: &str, name: &str) -> Option<String> {
    let req: &ApiRequest = target.req;
    match (source, name) {
        ("request.header", name) => req.header(&name.to_ascii_lowercase()),
        ("request.querystring", name) => req
            .query
            .iter()
            .filter(|(k, _)| k == name)
            .map(|(_, v)| v.clone())
            .reduce(|a, b| format!("{a},{b}")),
        ("request.path", "") => Some(req.path.clone()),
        ("request.path", name) => target
            .parameters
            .iter()
            .find(|(k, _)| k == name)
            .map(|(_, v)| v.clone()),
        ("request.body", "") => Some(String::from_utf8_lossy(&req.body).into_owned()),
        ("request.body", path) => {
            let body: serde_json::Value = serde_json::from_slice(&req.body).ok()?;
            let found = roto_jsonpath::Path::parse(&format!("$.{path}")).ok()?;
            found
                .get(&body)
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        }
        ("stageVariables", name) => target
            .stage_variables
            .and_then(|v| v.str(name))
            .map(str::to_string),
        ("context", name) => {
            let context = target.v2()["requestContext"].clone();
            let path = match name {
                "httpMethod" => "http.method",
                "identity.sourceIp" => "http.sourceIp",
                "identity.userAgent" => "http.userAgent",
                other => other,
            };
            path.split('.')
                .try_fold(&context, |node, part| node.get(part))
                .map(|v| v.as_str().map_or_else(|| v.to_string(), str::to_string))
        }
        _ => None,
    }
}

/// A parameter's value with its request variables written out (as AWS service
/// integrations' `RequestParameters` are).
pub(super) fn render_parameter(value: &str, target: &Target<'_>) -> String {
    render(value, &|source, name| request_value(target, source, name))
}

/// Applies `action` (`append`, `overwrite`, `remove`) of `name` with `value` to `pairs`.
fn apply(pairs: &mut Vec<(String, String)>, action: &str, name: &str, value: String) {
    let same = |k: &String| k.eq_ignore_ascii_case(name);
    match action {
        "remove" => pairs.retain(|(k, _)| !same(k)),
        "overwrite" => {
            pairs.retain(|(k, _)| !same(k));
            pairs.push((name.to_string(), value));
        }
        _ => match pairs.iter_mut().find(|(k, _)| same(k)) {
            Some((_, existing)) => *existing = format!("{existing},{value}"),
            None => pairs.push((name.to_string(), value)),
        },
    }
}

/// Applies an integration's `RequestParameters` to what it is sent.
pub(super) fn map_request(parameters: Option<&Value>, target: &Target<'_>, out: &mut Outgoing) {
    for (key, value) in parameters.and_then(Value::as_map).into_iter().flatten() {
        let Some((action, place)) = key.split_once(':') else {
            continue;
        };
        let rendered = render(value.as_str().unwrap_or_default(), &|source, name| {
            request_value(target, source, name)
        });
        if place == "path" {
            out.path = Some(rendered);
        } else if let Some(name) = place.strip_prefix("header.") {
            apply(&mut out.headers, action, name, rendered);
        } else if let Some(name) = place.strip_prefix("querystring.") {
            apply(&mut out.query, action, name, rendered);
        }
    }
}

/// Applies an integration's `ResponseParameters` for the answer's status to the answer.
pub(super) fn map_response(
    parameters: Option<&Value>,
    target: &Target<'_>,
    response: &mut ApiResponse,
) {
    let status = response.status.to_string();
    let Some(mappings) = parameters
        .and_then(|p| p.get(&status))
        .and_then(Value::as_map)
    else {
        return;
    };
    let answered = response.headers.clone();
    for (key, value) in mappings {
        let Some((action, place)) = key.split_once(':') else {
            continue;
        };
        let rendered = render(
            value.as_str().unwrap_or_default(),
            &|source, name| match source {
                "response.header" => answered
                    .iter()
                    .find(|(k, _)| k.eq_ignore_ascii_case(name))
                    .map(|(_, v)| v.clone()),
                _ => request_value(target, source, name),
            },
        );
        if place == "statuscode" {
            if let Ok(code) = rendered.trim().parse() {
                response.status = code;
            }
        } else if let Some(name) = place.strip_prefix("header.") {
            apply(&mut response.headers, action, name, rendered);
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn values_write_out_their_variables_and_actions_edit_pairs() {
        let lookup = |source: &str, name: &str| match (source, name) {
            ("request.header", "x-a") => Some("A".to_string()),
            ("request.path", "") => Some("/p".to_string()),
            _ => None,
        };
        assert_eq!(
            render(
                "v-$request.header.x-a ${request.path} $context.nope!",
                &lookup
            ),
            "v-A /p !"
        );
        let mut pairs = vec![("X-A".to_string(), "1".to_string())];
        apply(&mut pairs, "append", "x-a", "2".into());
        apply(&mut pairs, "append", "x-b", "3".into());
        assert_eq!(
            pairs,
            [("X-A".into(), "1,2".into()), ("x-b".into(), "3".into())]
        );
        apply(&mut pairs, "overwrite", "x-a", "4".into());
        apply(&mut pairs, "remove", "x-b", String::new());
        assert_eq!(pairs, [("x-a".to_string(), "4".to_string())]);
    }
}
