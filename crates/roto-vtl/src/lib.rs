//! Apache Velocity templates as API Gateway's mapping templates use them.
//!
//! # Why this crate exists
//!
//! API Gateway transforms requests and responses of non-proxy integrations (REST APIs, and
//! WebSocket APIs) with *mapping templates*: Velocity Template Language (VTL, Velocity 1.7)
//! with API Gateway's `$input`, `$util`, `$context` and `$stageVariables`. Templates come
//! from API definitions and run on every request, so the engine is bounded and never
//! panics; it knows nothing of Roto.
//!
//! # How to use it
//!
//! ```
//! use roto_vtl::{Context, Input, Template};
//! use serde_json::json;
//!
//! let template = Template::parse(
//!     "#set($context.requestOverride.header.X-Id = $input.params('id'))\n\
//!      {\"name\": $input.json('$.name'), \"stage\": \"$context.stage\"}",
//! )
//! .expect("a template");
//! let mut ctx = Context::new(Input {
//!     body: r#"{"name": "rex"}"#.to_string(),
//!     query_params: vec![("id".to_string(), "7".to_string())],
//!     ..Input::default()
//! });
//! ctx.set("context", json!({"stage": "prod"}));
//! let out = template.render(&mut ctx).expect("rendered");
//! assert_eq!(out, r#"{"name": "rex", "stage": "prod"}"#);
//! assert_eq!(ctx.request_override_headers(), vec![("X-Id".to_string(), "7".to_string())]);
//! ```
//!
//! # What it reads
//!
//! Text; `##` and `#* *#` comments; `#[[ ]]#` unparsed text; references `$x`, `${x}`,
//! `$!x`, `$!{x}` with properties, indexes and Java-style method calls on strings, lists,
//! maps and numbers; `#set`, `#if`/`#elseif`/`#else`/`#end`, `#foreach` (with `$foreach`
//! and `$velocityCount`), `#break`, `#stop`, `#define`, `#macro`; arithmetic, comparisons,
//! `&&`/`and`, `||`/`or`, `!`/`not`; interpolating double-quoted strings; ranges, lists and
//! maps. A reference that is null prints as written (`$missing`), or as nothing when quiet.
//!
//! # API Gateway's tools
//!
//! `$input.body` is the body as sent. `$input.json(path)` is the JSON text of what the
//! JSONPath (read by `roto-jsonpath`) selects, `""` when a definite path selects nothing;
//! `$input.path(path)` is the value itself (a map, a list, a string...), null when missing.
//! An empty body reads as `{}`; a body that is not JSON makes those two calls fail.
//! `$input.params(name)` looks in the path, then the query string, then the headers (by
//! any case), and gives `""` when the name is in none. `$util`'s functions follow the Java
//! ones API Gateway calls (commons-lang's `escapeJavaScript`, which also escapes `'`;
//! `URLEncoder`/`URLDecoder`, where a space is `+`).
//!
//! # Bounds
//!
//! A template is at most [`MAX_TEMPLATE_LEN`] bytes and nests at most [`MAX_DEPTH`] deep;
//! a `#foreach` stops after [`MAX_FOREACH`] iterations (API Gateway's limit, applied as
//! Velocity's `directive.foreach.maxloops`: the loop ends, the render goes on); a render
//! takes at most [`MAX_STEPS`] steps, produces at most [`MAX_OUTPUT`] bytes, and macros
//! call each other at most [`MAX_MACRO_DEPTH`] deep. Past a bound, rendering fails with a
//! [`VtlError`].

mod apigw;
mod methods;
mod parse;
mod render;
#[cfg(test)]
mod tests;
mod value;

use std::fmt;

use serde_json::Value;

/// The longest template [`Template::parse`] reads, in bytes.
pub const MAX_TEMPLATE_LEN: usize = 1024 * 1024;
/// How deep blocks, expressions and interpolated strings nest.
pub const MAX_DEPTH: usize = 64;
/// How many times one `#foreach` runs its body at most.
pub const MAX_FOREACH: usize = 1000;
/// How many nodes, expressions and collection elements one render handles at most.
pub const MAX_STEPS: usize = 1_000_000;
/// The largest output, or string built, of one render.
pub const MAX_OUTPUT: usize = 10 * 1024 * 1024;
/// How deep macros call macros.
pub const MAX_MACRO_DEPTH: usize = 20;

/// A parsed template, rendered any number of times.
#[derive(Debug)]
pub struct Template {
    parsed: parse::Parsed,
}

/// Why a template did not parse or render.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct VtlError {
    /// What went wrong, and where for parse errors.
    pub message: String,
}

impl VtlError {
    pub(crate) fn new(message: impl Into<String>) -> VtlError {
        VtlError {
            message: message.into(),
        }
    }
}

impl fmt::Display for VtlError {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for VtlError {}

/// Names and values in the order the request had them.
pub type Params = Vec<(String, String)>;

/// The request (or integration response) a template reads through `$input`.
#[derive(Debug, Clone, Default)]
pub struct Input {
    /// `$input.body`, and the JSON `$input.json()` and `$input.path()` read.
    pub body: String,
    /// Path parameters: `$input.params().path`.
    pub path_params: Params,
    /// Query string parameters: `$input.params().querystring`.
    pub query_params: Params,
    /// Headers: `$input.params().header` (looked up by `$input.params('name')` ignoring
    /// case).
    pub headers: Params,
}

/// What a template sees, and, after [`Template::render`], what it changed.
#[derive(Debug, Clone, Default)]
pub struct Context {
    input: Input,
    vars: Vec<(String, Value)>,
}

impl Context {
    /// A context over `input`, with no variables yet.
    pub fn new(input: Input) -> Context {
        Context {
            input,
            vars: Vec::new(),
        }
    }

    /// The request the template reads.
    pub fn input(&self) -> &Input {
        &self.input
    }

    /// Sets a variable (`context`, `stageVariables`...) the template sees as `$name`.
    pub fn set(&mut self, name: &str, value: Value) {
        match self.vars.iter_mut().find(|(n, _)| n == name) {
            Some((_, slot)) => *slot = value,
            None => self.vars.push((name.to_string(), value)),
        }
    }

    /// A variable set with [`Context::set`], as the last render left it.
    pub fn get(&self, name: &str) -> Option<&Value> {
        self.vars.iter().find(|(n, _)| n == name).map(|(_, v)| v)
    }

    /// `$context.requestOverride.header.*` as the template set them.
    pub fn request_override_headers(&self) -> Params {
        self.overrides(&["requestOverride", "header"])
    }

    /// `$context.requestOverride.querystring.*`.
    pub fn request_override_querystrings(&self) -> Params {
        self.overrides(&["requestOverride", "querystring"])
    }

    /// `$context.requestOverride.path.*`.
    pub fn request_override_paths(&self) -> Params {
        self.overrides(&["requestOverride", "path"])
    }

    /// `$context.responseOverride.header.*`.
    pub fn response_override_headers(&self) -> Params {
        self.overrides(&["responseOverride", "header"])
    }

    /// `$context.responseOverride.status`, when the template set it to a status code.
    pub fn response_override_status(&self) -> Option<u16> {
        let status = self
            .get("context")?
            .get("responseOverride")?
            .get("status")?;
        match status {
            Value::Number(n) => n.as_u64().and_then(|n| u16::try_from(n).ok()),
            Value::String(s) => s.trim().parse().ok(),
            _ => None,
        }
    }

    fn overrides(&self, path: &[&str]) -> Params {
        let mut node = self.get("context");
        for name in path {
            node = node.and_then(|n| n.get(name));
        }
        let Some(Value::Object(members)) = node else {
            return Vec::new();
        };
        members
            .iter()
            .filter_map(|(name, value)| {
                let text = match value {
                    Value::Null => return None,
                    Value::String(s) => s.clone(),
                    other => other.to_string(),
                };
                Some((name.clone(), text))
            })
            .collect()
    }
}

impl Template {
    /// Reads a template.
    pub fn parse(text: &str) -> Result<Template, VtlError> {
        parse::parse(text).map(|parsed| Template { parsed })
    }

    /// Renders the template over `ctx`; the variables the caller set come back changed as
    /// the template left them (`$context.requestOverride...`).
    pub fn render(&self, ctx: &mut Context) -> Result<String, VtlError> {
        render::render(&self.parsed, ctx)
    }
}
