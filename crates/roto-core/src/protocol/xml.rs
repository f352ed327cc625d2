//! Shaped XML, shared by the query and rest-xml codecs.
//!
//! Both protocols lay out structures, lists and maps in XML by the same model traits
//! (`locationName`, `flattened`, `xmlAttribute`, `xmlNamespace`); this module writes a
//! [`Value`] by its shape and reads an XML element back into one, following the rules the
//! SDKs' XML parsers apply.

use std::collections::BTreeMap;

use base64::Engine;
use quick_xml::events::Event;
use quick_xml::Reader;

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Shape, ShapeKind, ShapeRef};
use crate::timestamp::{self, TimestampFormat};
use crate::value::Value;

/// Appends escaped XML to a buffer.
#[derive(Default)]
pub struct XmlWriter {
    out: String,
}

impl XmlWriter {
    /// A writer whose document starts with the XML declaration.
    pub fn with_declaration() -> XmlWriter {
        XmlWriter {
            out: String::from("<?xml version=\"1.0\" encoding=\"UTF-8\"?>"),
        }
    }

    /// Opens an element with attributes.
    pub fn start(&mut self, name: &str, attrs: &[(&str, &str)]) {
        self.out.push('<');
        self.out.push_str(name);
        for (k, v) in attrs {
            self.out.push(' ');
            self.out.push_str(k);
            self.out.push_str("=\"");
            self.out.push_str(&quick_xml::escape::escape(*v));
            self.out.push('"');
        }
        self.out.push('>');
    }

    /// Closes an element.
    pub fn end(&mut self, name: &str) {
        self.out.push_str("</");
        self.out.push_str(name);
        self.out.push('>');
    }

    /// Writes escaped text.
    pub fn text(&mut self, text: &str) {
        self.out.push_str(&quick_xml::escape::escape(text));
    }

    /// Writes `<name>text</name>`.
    pub fn element(&mut self, name: &str, text: &str) {
        self.start(name, &[]);
        self.text(text);
        self.end(name);
    }

    /// The document.
    pub fn finish(self) -> String {
        self.out
    }

    /// Writes the members of a structure value (not its own element).
    pub fn members(&mut self, model: &Model, shape: &Shape, value: &Value) {
        for (name, member) in shape.members.iter() {
            if member.location.is_some() || member.xml_attribute {
                continue;
            }
            if let Some(v) = value.get(name) {
                let member_shape = model.resolve(member);
                self.value(
                    model,
                    element_name(member, member_shape, name),
                    member,
                    member_shape,
                    v,
                );
            }
        }
    }

    /// Writes one value as element `name` (or, for flattened lists and maps, as repeated
    /// elements of that name).
    pub fn value(&mut self, model: &Model, name: &str, r: &ShapeRef, shape: &Shape, value: &Value) {
        let flattened = r.flattened || shape.flattened;
        match (shape.kind, value) {
            (ShapeKind::List, Value::List(items)) => {
                let member = shape.member.as_deref().expect("list shape has a member");
                let member_shape = model.resolve(member);
                if flattened {
                    for item in items {
                        self.value(model, name, member, member_shape, item);
                    }
                } else {
                    let item_name = member.location_name.unwrap_or("member");
                    self.start(name, &namespace_attrs(r));
                    for item in items {
                        self.value(model, item_name, member, member_shape, item);
                    }
                    self.end(name);
                }
            }
            (ShapeKind::Map, Value::Map(entries)) => {
                let key = shape.key.as_deref().expect("map shape has a key");
                let val = shape.value.as_deref().expect("map shape has a value");
                let key_name = key.location_name.unwrap_or("key");
                let val_name = val.location_name.unwrap_or("value");
                let (key_shape, val_shape) = (model.resolve(key), model.resolve(val));
                if !flattened {
                    self.start(name, &namespace_attrs(r));
                }
                for (k, v) in entries {
                    self.start(if flattened { name } else { "entry" }, &[]);
                    self.value(model, key_name, key, key_shape, &Value::String(k.clone()));
                    self.value(model, val_name, val, val_shape, v);
                    self.end(if flattened { name } else { "entry" });
                }
                if !flattened {
                    self.end(name);
                }
            }
            (ShapeKind::Structure, Value::Map(_)) => {
                let mut attrs = namespace_attrs(r);
                // A structure whose own shape declares the `xsi` prefix (S3's `Grantee`).
                if let Some(ns) = shape.xml_namespace.as_ref().filter(|_| attrs.is_empty()) {
                    if ns.prefix == Some("xsi") {
                        attrs.push(("xmlns:xsi", ns.uri));
                    }
                }
                let attr_values: Vec<(String, String)> = shape
                    .members
                    .iter()
                    .filter(|(_, m)| m.xml_attribute)
                    .filter_map(|(n, m)| {
                        let text = scalar_text(model.resolve(m), m, value.get(n)?)?;
                        Some((m.location_name.unwrap_or(n).to_string(), text))
                    })
                    .collect();
                attrs.extend(attr_values.iter().map(|(k, v)| (k.as_str(), v.as_str())));
                self.start(name, &attrs);
                self.members(model, shape, value);
                self.end(name);
            }
            _ => {
                if let Some(text) = scalar_text(shape, r, value) {
                    self.start(name, &namespace_attrs(r));
                    self.text(&text);
                    self.end(name);
                }
            }
        }
    }
}

fn namespace_attrs(r: &ShapeRef) -> Vec<(&str, &str)> {
    match &r.xml_namespace {
        Some(ns) => match ns.prefix {
            Some("xsi") => vec![("xmlns:xsi", ns.uri)],
            Some(_) => vec![],
            None => vec![("xmlns", ns.uri)],
        },
        None => vec![],
    }
}

/// The element name of structure member `name`, as botocore's parser looks for it.
pub fn element_name<'a>(member: &ShapeRef, member_shape: &Shape, name: &'a str) -> &'a str {
    if member_shape.kind == ShapeKind::List && (member.flattened || member_shape.flattened) {
        if let Some(n) = member_shape.member.as_ref().and_then(|m| m.location_name) {
            return n;
        }
    }
    member.location_name.unwrap_or(name)
}

/// The text of a scalar value in XML and query form.
pub fn scalar_text(shape: &Shape, r: &ShapeRef, value: &Value) -> Option<String> {
    Some(match value {
        Value::Bool(b) => b.to_string(),
        Value::Integer(i) => i.to_string(),
        Value::Float(f) => format_float(*f),
        Value::String(s) => s.clone(),
        Value::Blob(b) => base64::engine::general_purpose::STANDARD.encode(b),
        Value::Timestamp(t) => {
            timestamp::format(*t, timestamp_format(shape, r, TimestampFormat::Iso8601))
        }
        _ => return None,
    })
}

/// A float as AWS writes it: integral values without a fraction.
pub fn format_float(f: f64) -> String {
    if f.fract() == 0.0 && f.abs() < 1e15 {
        format!("{}", f as i64)
    } else {
        f.to_string()
    }
}

/// The timestamp format of a member: its own trait, its shape's, else the protocol default.
pub fn timestamp_format(shape: &Shape, r: &ShapeRef, default: TimestampFormat) -> TimestampFormat {
    r.timestamp_format
        .or(shape.timestamp_format)
        .and_then(TimestampFormat::from_trait)
        .unwrap_or(default)
}

/// A parsed XML element: local name, attributes, child elements and text.
#[derive(Debug, Default, Clone, PartialEq)]
pub struct Element {
    /// The local name (namespace prefix removed).
    pub name: String,
    /// Attributes by local name.
    pub attrs: Vec<(String, String)>,
    /// Child elements in document order.
    pub children: Vec<Element>,
    /// The element's text content, unescaped.
    pub text: String,
}

impl Element {
    /// The first child named `name`.
    pub fn child(&self, name: &str) -> Option<&Element> {
        self.children.iter().find(|c| c.name == name)
    }

    /// Every child named `name`.
    pub fn children_named<'a>(&'a self, name: &'a str) -> impl Iterator<Item = &'a Element> + 'a {
        self.children.iter().filter(move |c| c.name == name)
    }
}

fn local_name(raw: &[u8]) -> String {
    let name = String::from_utf8_lossy(raw);
    match name.rsplit_once(':') {
        Some((_, local)) => local.to_string(),
        None => name.into_owned(),
    }
}

/// The deepest element nesting a request document may have. The deepest document any AWS
/// model describes (S3's lifecycle and replication rules) nests fewer than ten levels; the
/// bound keeps a hostile body from building a tree whose drop or walk exhausts the stack.
pub const MAX_DEPTH: usize = 64;

/// Parses a document into its root element; `Err` carries a reason for the log. Elements
/// nested deeper than [`MAX_DEPTH`] make the document malformed.
pub fn parse(bytes: &[u8]) -> Result<Element, String> {
    let mut reader = Reader::from_reader(bytes);
    let mut stack: Vec<Element> = Vec::new();
    let mut buf = Vec::new();
    loop {
        let event = reader
            .read_event_into(&mut buf)
            .map_err(|e| e.to_string())?;
        match event {
            Event::Start(_) if stack.len() >= MAX_DEPTH => {
                return Err(format!("elements nested deeper than {MAX_DEPTH}"))
            }
            Event::Start(start) => stack.push(open(&start)?),
            Event::Empty(start) => {
                let el = open(&start)?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::End(_) => {
                let el = stack.pop().ok_or("unbalanced end tag")?;
                match stack.last_mut() {
                    Some(parent) => parent.children.push(el),
                    None => return Ok(el),
                }
            }
            Event::Text(t) => {
                if let Some(el) = stack.last_mut() {
                    el.text.push_str(&t.unescape().map_err(|e| e.to_string())?);
                }
            }
            Event::CData(c) => {
                if let Some(el) = stack.last_mut() {
                    el.text.push_str(&String::from_utf8_lossy(&c.into_inner()));
                }
            }
            Event::Eof => return Err("unexpected end of document".into()),
            _ => {}
        }
        buf.clear();
    }
}

fn open(start: &quick_xml::events::BytesStart<'_>) -> Result<Element, String> {
    let mut attrs = Vec::new();
    for attr in start.attributes() {
        let attr = attr.map_err(|e| e.to_string())?;
        let value = attr.unescape_value().map_err(|e| e.to_string())?;
        attrs.push((local_name(attr.key.as_ref()), value.into_owned()));
    }
    Ok(Element {
        name: local_name(start.name().as_ref()),
        attrs,
        ..Element::default()
    })
}

/// Reads the members of structure `shape` from element `el`.
pub fn read_structure(model: &Model, shape: &Shape, el: &Element) -> AwsResult<Value> {
    let mut out = BTreeMap::new();
    for (name, member) in shape.members.iter() {
        if member.location.is_some() {
            continue;
        }
        let member_shape = model.resolve(member);
        if member.xml_attribute {
            let attr = member.location_name.unwrap_or(name);
            let attr = attr.rsplit(':').next().unwrap_or(attr);
            if let Some((_, v)) = el.attrs.iter().find(|(k, _)| k == attr) {
                out.insert(name.to_string(), read_scalar(member_shape, member, v)?);
            }
            continue;
        }
        let xml_name = element_name(member, member_shape, name);
        let flattened = member.flattened || member_shape.flattened;
        let value = match member_shape.kind {
            ShapeKind::List | ShapeKind::Map if flattened => {
                let nodes: Vec<&Element> = el.children_named(xml_name).collect();
                if nodes.is_empty() {
                    continue;
                }
                read_collection(model, member_shape, &nodes)?
            }
            _ => match el.child(xml_name) {
                Some(child) => read_value(model, member, member_shape, child)?,
                None => continue,
            },
        };
        out.insert(name.to_string(), value);
    }
    Ok(Value::Map(out))
}

/// Reads one element as a value of `shape`.
pub fn read_value(model: &Model, r: &ShapeRef, shape: &Shape, el: &Element) -> AwsResult<Value> {
    match shape.kind {
        ShapeKind::Structure => read_structure(model, shape, el),
        ShapeKind::List => {
            let member = shape.member.as_deref().expect("list shape has a member");
            let item_name = member.location_name.unwrap_or("member");
            let nodes: Vec<&Element> = el.children_named(item_name).collect();
            read_collection(model, shape, &nodes)
        }
        ShapeKind::Map => {
            let nodes: Vec<&Element> = el.children_named("entry").collect();
            read_collection(model, shape, &nodes)
        }
        _ => read_scalar(shape, r, &el.text),
    }
}

/// Reads list items or map entries from their elements.
fn read_collection(model: &Model, shape: &Shape, nodes: &[&Element]) -> AwsResult<Value> {
    if shape.kind == ShapeKind::List {
        let member = shape.member.as_deref().expect("list shape has a member");
        let member_shape = model.resolve(member);
        let items = nodes
            .iter()
            .map(|n| read_value(model, member, member_shape, n))
            .collect::<AwsResult<Vec<_>>>()?;
        return Ok(Value::List(items));
    }
    let key = shape.key.as_deref().expect("map shape has a key");
    let val = shape.value.as_deref().expect("map shape has a value");
    let key_name = key.location_name.unwrap_or("key");
    let val_name = val.location_name.unwrap_or("value");
    let val_shape = model.resolve(val);
    let mut map = BTreeMap::new();
    for node in nodes {
        let (Some(k), Some(v)) = (node.child(key_name), node.child(val_name)) else {
            continue;
        };
        map.insert(k.text.clone(), read_value(model, val, val_shape, v)?);
    }
    Ok(Value::Map(map))
}

/// Reads a scalar from its text form (XML text, query parameter, header, URI label).
pub fn read_scalar(shape: &Shape, r: &ShapeRef, text: &str) -> AwsResult<Value> {
    let invalid = || {
        AwsError::new(
            "MalformedInput",
            format!(
                "Value '{text}' is not valid for its {:?} member",
                shape.kind
            ),
        )
        .with_status(400)
    };
    Ok(match shape.kind {
        ShapeKind::Boolean => match text.trim() {
            "true" => Value::Bool(true),
            "false" => Value::Bool(false),
            _ => return Err(invalid()),
        },
        ShapeKind::Integer | ShapeKind::Long => {
            Value::Integer(text.trim().parse().map_err(|_| invalid())?)
        }
        ShapeKind::Float | ShapeKind::Double => {
            Value::Float(text.trim().parse().map_err(|_| invalid())?)
        }
        ShapeKind::Blob => Value::Blob(
            base64::engine::general_purpose::STANDARD
                .decode(text.trim())
                .map_err(|_| invalid())?,
        ),
        ShapeKind::Timestamp => Value::Timestamp(timestamp::parse(text).ok_or_else(invalid)?),
        _ => {
            let _ = r;
            Value::String(text.to_string())
        }
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;

    #[test]
    fn parse_reads_nested_elements_text_and_attributes() {
        let el = parse(
            br#"<?xml version="1.0"?><a xmlns="urn:x"><b k="1">x &amp; y</b><c/><b>2</b></a>"#,
        )
        .unwrap();
        assert_eq!(el.name, "a");
        assert_eq!(el.children.len(), 3);
        assert_eq!(el.child("b").unwrap().text, "x & y");
        assert_eq!(el.child("b").unwrap().attrs, vec![("k".into(), "1".into())]);
        assert_eq!(el.children_named("b").count(), 2);
    }

    #[test]
    fn parse_rejects_malformed_documents() {
        assert!(parse(b"<a><b></a>").is_err());
        assert!(parse(b"<a>").is_err());
        assert!(parse(b"").is_err());
    }

    #[test]
    fn parse_refuses_documents_nested_deeper_than_the_bound() {
        let deep = |n: usize| format!("{}{}", "<a>".repeat(n), "</a>".repeat(n));
        assert!(parse(deep(MAX_DEPTH).as_bytes()).is_ok());
        assert!(parse(deep(MAX_DEPTH + 1).as_bytes()).is_err());
        assert!(parse(deep(43_000).as_bytes()).is_err());
    }

    #[test]
    fn flattened_lists_and_maps_round_trip_with_their_location_names() {
        let m = model("sqs-query");
        let shape = m.shape("Message");
        let value = Value::map().with("MessageId", "id-1").with(
            "Attributes",
            Value::map()
                .with("SenderId", "123")
                .with("SentTimestamp", "5"),
        );
        let mut w = XmlWriter::default();
        w.start("Message", &[]);
        w.members(m, shape, &value);
        w.end("Message");
        let xml = w.finish();
        assert!(
            xml.contains("<Attribute><Name>SenderId</Name><Value>123</Value></Attribute>"),
            "{xml}"
        );
        let back = read_structure(m, shape, &parse(xml.as_bytes()).unwrap()).unwrap();
        assert_eq!(back, value);
    }

    #[test]
    fn wrapped_lists_use_member_elements() {
        let m = model("s3");
        let shape = m.shape("ListBucketsOutput");
        let value = Value::map().with(
            "Buckets",
            vec![Value::map()
                .with("Name", "b1")
                .with("CreationDate", Value::Timestamp(0))],
        );
        let mut w = XmlWriter::default();
        w.start("ListAllMyBucketsResult", &[]);
        w.members(m, shape, &value);
        w.end("ListAllMyBucketsResult");
        let xml = w.finish();
        assert!(
            xml.contains("<Buckets><Bucket><Name>b1</Name><CreationDate>1970-01-01T00:00:00.000Z</CreationDate></Bucket></Buckets>"),
            "{xml}"
        );
    }

    #[test]
    fn scalars_reject_text_of_the_wrong_type() {
        let m = model("sqs-query");
        let int = m.shape("Integer");
        assert!(read_scalar(int, &ShapeRef::default(), "ten").is_err());
        assert_eq!(
            read_scalar(int, &ShapeRef::default(), "10").unwrap(),
            Value::Integer(10)
        );
    }
}
