//! YAML documents as `serde_json` values, for the services that accept YAML where they
//! accept JSON: CloudFormation templates and API Gateway's OpenAPI imports.
//!
//! # Why this crate exists
//!
//! Both services reason over JSON trees; YAML is only another spelling of them. The
//! scanning is `saphyr-parser`'s (a YAML 1.2 event parser whose events keep their tags,
//! which CloudFormation's short forms `!Ref`, `!Sub`, `!GetAtt` need); this crate builds the
//! tree from the events iteratively, resolves plain scalars by YAML 1.2's core schema, and
//! hands every local tag (`!Name`) to the caller, who maps it (CloudFormation turns
//! `!Sub x` into `{"Fn::Sub": x}`) or refuses it. It knows nothing of Roto.
//!
//! ```
//! let doc = roto_yaml::parse("a: [1, true, ~, x]\n").expect("yaml");
//! assert_eq!(doc, serde_json::json!({"a": [1, true, null, "x"]}));
//! ```
//!
//! # Bounds
//!
//! Nesting is bounded by [`MAX_DEPTH`] and the nodes built, aliases expanded, by
//! [`MAX_NODES`] (so that a billion laughs of aliases is an error, not an allocation).
//! Only one document is read; a mapping key must be a scalar.

use std::collections::HashMap;
use std::fmt;

use saphyr_parser::{Event, Parser, ScalarStyle, Tag};
use serde_json::{Map, Number, Value};

/// How deep collections may nest.
pub const MAX_DEPTH: usize = 128;

/// How many nodes a document may build, aliases counted at their full size.
pub const MAX_NODES: usize = 1_000_000;

/// Why a document could not be read.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct Error {
    /// What went wrong, with the line and column where it is known.
    pub message: String,
}

impl fmt::Display for Error {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(&self.message)
    }
}

impl std::error::Error for Error {}

fn error(message: impl Into<String>) -> Error {
    Error {
        message: message.into(),
    }
}

/// Reads a YAML document whose local tags carry no meaning (they are dropped).
pub fn parse(text: &str) -> Result<Value, Error> {
    parse_with(text, |_, value| Ok(value))
}

/// Reads a YAML document, mapping each node carrying a local tag (`!Name`, given without
/// its `!`) through `tags`, which may refuse it with a message.
pub fn parse_with(
    text: &str,
    tags: impl Fn(&str, Value) -> Result<Value, String>,
) -> Result<Value, Error> {
    let mut builder = Builder {
        tags: &tags,
        stack: Vec::new(),
        anchors: HashMap::new(),
        nodes: 0,
        root: None,
        documents: 0,
    };
    for event in Parser::new_from_str(text) {
        let (event, span) = event.map_err(|e| error(e.to_string()))?;
        builder.event(event).map_err(|message| {
            error(format!(
                "{message} (line {}, column {})",
                span.start.line(),
                span.start.col() + 1
            ))
        })?;
    }
    Ok(builder.root.unwrap_or(Value::Null))
}

/// A collection being built: its tag and anchor, and what it holds so far.
struct Open {
    tag: Option<String>,
    anchor: usize,
    node: Node,
}

enum Node {
    Sequence(Vec<Value>),
    Mapping(Map<String, Value>, Option<String>),
}

struct Builder<'t> {
    tags: &'t dyn Fn(&str, Value) -> Result<Value, String>,
    stack: Vec<Open>,
    anchors: HashMap<usize, Value>,
    nodes: usize,
    root: Option<Value>,
    documents: usize,
}

impl Builder<'_> {
    fn event(&mut self, event: Event<'_>) -> Result<(), String> {
        match event {
            Event::DocumentStart(_) => {
                self.documents += 1;
                if self.documents > 1 {
                    return Err("Expected a single document in the stream".into());
                }
                Ok(())
            }
            Event::Scalar(text, style, anchor, tag) => {
                let tag = tag.as_deref();
                let value = scalar(&text, style, tag)?;
                self.complete(value, local(tag), anchor, 1)
            }
            Event::Alias(anchor) => {
                let value = self
                    .anchors
                    .get(&anchor)
                    .cloned()
                    .ok_or("An alias refers to an unknown anchor")?;
                let size = size(&value);
                self.complete(value, None, 0, size)
            }
            Event::SequenceStart(anchor, tag) => self.open(anchor, tag.as_deref(), false),
            Event::MappingStart(anchor, tag) => self.open(anchor, tag.as_deref(), true),
            Event::SequenceEnd | Event::MappingEnd => {
                let open = self.stack.pop().ok_or("An unbalanced collection")?;
                let value = match open.node {
                    Node::Sequence(items) => Value::Array(items),
                    Node::Mapping(map, None) => Value::Object(map),
                    Node::Mapping(_, Some(_)) => return Err("A mapping key without a value".into()),
                };
                self.complete(value, open.tag, open.anchor, 0)
            }
            _ => Ok(()),
        }
    }

    fn open(&mut self, anchor: usize, tag: Option<&Tag>, mapping: bool) -> Result<(), String> {
        if self.stack.len() >= MAX_DEPTH {
            return Err(format!("The document nests deeper than {MAX_DEPTH} levels"));
        }
        self.charge(1)?;
        let node = if mapping {
            Node::Mapping(Map::new(), None)
        } else {
            Node::Sequence(Vec::new())
        };
        self.stack.push(Open {
            tag: local(tag),
            anchor,
            node,
        });
        Ok(())
    }

    fn charge(&mut self, nodes: usize) -> Result<(), String> {
        self.nodes = self.nodes.saturating_add(nodes);
        if self.nodes > MAX_NODES {
            return Err(format!("The document has more than {MAX_NODES} nodes"));
        }
        Ok(())
    }

    /// A finished node: tagged, remembered under its anchor, placed in its parent.
    fn complete(
        &mut self,
        value: Value,
        tag: Option<String>,
        anchor: usize,
        nodes: usize,
    ) -> Result<(), String> {
        self.charge(nodes)?;
        let value = match tag {
            Some(tag) => (self.tags)(&tag, value)?,
            None => value,
        };
        if anchor != 0 {
            self.anchors.insert(anchor, value.clone());
        }
        let Some(parent) = self.stack.last_mut() else {
            self.root = Some(value);
            return Ok(());
        };
        match &mut parent.node {
            Node::Sequence(items) => items.push(value),
            Node::Mapping(_, key @ None) => {
                *key = Some(match value {
                    Value::String(s) => s,
                    Value::Number(n) => n.to_string(),
                    Value::Bool(b) => b.to_string(),
                    Value::Null => String::new(),
                    _ => return Err("A mapping key must be a scalar".into()),
                });
            }
            Node::Mapping(map, key) => {
                if let Some(key) = key.take() {
                    map.insert(key, value);
                }
            }
        }
        Ok(())
    }
}

/// The name of a local tag (`!Name`), without its `!`.
fn local(tag: Option<&Tag>) -> Option<String> {
    tag.filter(|t| t.handle == "!" && !t.suffix.is_empty())
        .map(|t| t.suffix.clone())
}

/// A scalar's value: quoted, block and `!!str` scalars are strings; plain ones follow
/// YAML 1.2's core schema.
fn scalar(text: &str, style: ScalarStyle, tag: Option<&Tag>) -> Result<Value, String> {
    if let Some(tag) = tag.filter(|t| t.is_yaml_core_schema()) {
        return match tag.suffix.as_str() {
            "str" | "binary" | "timestamp" => Ok(Value::String(text.to_string())),
            "null" => Ok(Value::Null),
            _ => Ok(plain(text)),
        };
    }
    match style {
        ScalarStyle::Plain => Ok(plain(text)),
        _ => Ok(Value::String(text.to_string())),
    }
}

fn plain(text: &str) -> Value {
    match text {
        "" | "~" | "null" | "Null" | "NULL" => return Value::Null,
        "true" | "True" | "TRUE" => return Value::Bool(true),
        "false" | "False" | "FALSE" => return Value::Bool(false),
        _ => {}
    }
    number(text).map_or_else(|| Value::String(text.to_string()), Value::Number)
}

/// A plain scalar as a number, by the core schema's patterns (finite values only: JSON has
/// no infinities).
fn number(text: &str) -> Option<Number> {
    let digits = text.strip_prefix(['-', '+']).unwrap_or(text);
    let first = digits.chars().next()?;
    if !first.is_ascii_digit() && first != '.' {
        return None;
    }
    if let Some(hex) = text.strip_prefix("0x") {
        return i64::from_str_radix(hex, 16).ok().map(Number::from);
    }
    if let Some(oct) = text.strip_prefix("0o") {
        return i64::from_str_radix(oct, 8).ok().map(Number::from);
    }
    if digits.bytes().all(|b| b.is_ascii_digit()) {
        return text.parse::<i64>().ok().map(Number::from);
    }
    let float_chars = digits
        .bytes()
        .all(|b| b.is_ascii_digit() || matches!(b, b'.' | b'e' | b'E' | b'-' | b'+'));
    if !float_chars {
        return None;
    }
    text.parse::<f64>().ok().and_then(Number::from_f64)
}

/// How many nodes a value holds, counted with an explicit stack.
fn size(value: &Value) -> usize {
    let mut count = 0usize;
    let mut pending = vec![value];
    while let Some(v) = pending.pop() {
        count += 1;
        match v {
            Value::Array(items) => pending.extend(items),
            Value::Object(map) => pending.extend(map.values()),
            _ => {}
        }
    }
    count
}

#[cfg(test)]
mod tests {
    use super::*;
    use serde_json::json;

    #[test]
    fn block_and_flow_collections_become_json() {
        let doc =
            parse("a:\n  - 1\n  - 2.5\n  - 'true'\nb: {c: d, e: null}\nf: |\n  x\n  y\n").unwrap();
        assert_eq!(
            doc,
            json!({"a": [1, 2.5, "true"], "b": {"c": "d", "e": null}, "f": "x\ny\n"})
        );
    }

    #[test]
    fn local_tags_go_to_the_caller() {
        let doc = parse_with("a: !Ref b\nc: !Join ['', [x, !Ref y]]\n", |tag, v| {
            Ok(json!({ tag: v }))
        })
        .unwrap();
        assert_eq!(
            doc,
            json!({"a": {"Ref": "b"}, "c": {"Join": ["", ["x", {"Ref": "y"}]]}})
        );
        assert_eq!(parse("a: !Ref b").unwrap(), json!({"a": "b"}));
        let refused = parse_with("a: !Nope b", |tag, _| Err(format!("no {tag}"))).unwrap_err();
        assert!(refused.message.starts_with("no Nope"), "{refused}");
    }

    #[test]
    fn anchors_expand_and_their_size_is_bounded() {
        assert_eq!(
            parse("a: &x [1, 2]\nb: *x\n").unwrap(),
            json!({"a": [1, 2], "b": [1, 2]})
        );
        let mut laughs = String::from("a: &a [x, x, x, x, x, x, x, x, x, x]\n");
        for i in 0..9 {
            laughs.push_str(&format!(
                "{n}: &{n} [*{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}, *{p}]\n",
                n = (b'b' + i) as char,
                p = (b'a' + i) as char
            ));
        }
        assert!(parse(&laughs).unwrap_err().message.contains("nodes"));
    }

    #[test]
    fn nesting_is_bounded() {
        let block: String = (0..200).map(|i| format!("{}a:\n", " ".repeat(i))).collect();
        let err = parse(&block).unwrap_err();
        assert!(err.message.contains("deeper"), "{err}");
        let flow = format!("{}{}", "[".repeat(10_000), "]".repeat(10_000));
        assert!(parse(&flow).is_err());
    }

    #[test]
    fn core_schema_scalars_and_errors() {
        assert_eq!(
            parse("[0x1f, -3, 1e3, .5, 1.2.3, ~, True, !!str 12, '']").unwrap(),
            json!([31, -3, 1000.0, 0.5, "1.2.3", null, true, "12", ""])
        );
        assert!(parse("a: [1, 2").is_err());
        assert!(parse("[a]: 1").is_err());
        assert!(parse("a: 1\n---\nb: 2\n").is_err());
    }
}
