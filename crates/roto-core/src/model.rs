//! The AWS service models that drive the codecs.
//!
//! botocore's `service-2.json` files, trimmed by `scripts/trim-models.py`, are embedded in
//! the binary and read lazily, in two steps, so that neither start-up nor memory grows with
//! the size of the models: the first call to a service indexes its model (the name of each
//! operation and shape, with its slice of the embedded JSON, borrowed, not copied), and each
//! operation and shape is parsed the first time a codec asks for it. A request touches a few
//! dozen of a model's hundreds of shapes. The structures below keep exactly the traits the
//! codecs read, and their strings borrow the embedded text rather than copying it (the
//! models' names and traits contain no JSON escapes; the unit tests parse every shape).

use std::sync::OnceLock;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};
use serde_json::value::RawValue;

/// One service's model.
#[derive(Debug)]
pub struct Model {
    /// Protocol and naming metadata.
    pub metadata: Metadata,
    operations: Table<Operation>,
    shapes: Table<Shape>,
    /// The rest protocols' URI templates, parsed on the first request routed by them.
    pub(crate) rest_routes: OnceLock<crate::protocol::rest::Routes>,
}

/// The model's `metadata` block.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Metadata {
    /// `query`, `json`, `rest-xml` or `rest-json`.
    pub protocol: String,
    /// The API version (`2011-06-15`), also the query protocol's `Version`.
    pub api_version: String,
    /// `1.0` or `1.1` for the json protocol.
    pub json_version: Option<String>,
    /// The `X-Amz-Target` prefix of the json protocol.
    pub target_prefix: Option<String>,
    /// The XML namespace of query and rest-xml responses.
    pub xml_namespace: Option<String>,
    /// The endpoint prefix (`sts`, `s3`, ...).
    pub endpoint_prefix: String,
    /// The SigV4 signing name where it differs from the endpoint prefix.
    pub signing_name: Option<String>,
    /// Every protocol the service speaks, preferred first (`smithy-rpc-v2-cbor`, `json`,
    /// `query`), where the model lists them.
    #[serde(default)]
    pub protocols: Vec<String>,
}

/// One operation.
#[derive(Debug, Deserialize)]
pub struct Operation {
    /// The operation's name.
    pub name: &'static str,
    /// Its HTTP binding.
    pub http: HttpBinding,
    /// The input shape.
    pub input: Option<ShapeRef>,
    /// The output shape.
    pub output: Option<ShapeRef>,
    /// The error shapes it may return.
    #[serde(default)]
    pub errors: Vec<ShapeRef>,
    /// Superseded by another operation on the same HTTP binding (REST matching prefers the
    /// newer one).
    #[serde(default)]
    pub deprecated: bool,
}

/// An operation's HTTP method, URI template and success status.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct HttpBinding {
    /// `GET`, `PUT`, ...
    pub method: &'static str,
    /// The URI template (`/{Bucket}/{Key+}?tagging`).
    pub request_uri: &'static str,
    /// The success status where it is not 200.
    pub response_code: Option<u16>,
}

/// A reference to a shape, with the traits a member adds to it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeRef {
    /// The referenced shape's name.
    pub shape: &'static str,
    /// `header`, `headers`, `uri`, `querystring` or `statusCode`.
    pub location: Option<&'static str>,
    /// The wire name (header name, XML element, query key).
    pub location_name: Option<&'static str>,
    /// The query protocol's result wrapper element on output refs.
    pub result_wrapper: Option<&'static str>,
    /// A flattened list or map in XML.
    #[serde(default)]
    pub flattened: bool,
    /// The member is an XML attribute.
    #[serde(default)]
    pub xml_attribute: bool,
    /// An XML namespace declared on this member's element.
    pub xml_namespace: Option<Box<XmlNamespace>>,
    /// `iso8601`, `rfc822` or `unixTimestamp`.
    pub timestamp_format: Option<&'static str>,
    /// The member is the streaming payload.
    #[serde(default)]
    pub streaming: bool,
    /// A JSON document carried in a header, base64-encoded.
    #[serde(default)]
    pub jsonvalue: bool,
    /// The member fills a host label.
    #[serde(default)]
    pub host_label: bool,
    /// The rest-json wire name where it differs from the member name.
    pub json_name: Option<&'static str>,
    /// The query protocol's name where it differs.
    pub query_name: Option<&'static str>,
    /// Where the referenced shape sits in its model's table, found on the first resolve.
    #[serde(skip)]
    pub(crate) at: OnceLock<usize>,
}

/// An XML namespace trait.
#[derive(Debug, Deserialize)]
pub struct XmlNamespace {
    /// The namespace URI.
    pub uri: &'static str,
    /// The prefix, when not the default namespace.
    pub prefix: Option<&'static str>,
}

/// A shape's type.
#[derive(Debug, Clone, Copy, PartialEq, Eq, Deserialize)]
#[serde(rename_all = "lowercase")]
pub enum ShapeKind {
    /// A structure with members.
    Structure,
    /// A list.
    List,
    /// A map.
    Map,
    /// A string (enums included).
    String,
    /// A 32-bit integer.
    Integer,
    /// A 64-bit integer.
    Long,
    /// A boolean.
    Boolean,
    /// A 32-bit float.
    Float,
    /// A 64-bit float.
    Double,
    /// Bytes.
    Blob,
    /// A point in time.
    Timestamp,
}

/// The `error` trait of an exception shape.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ErrorTrait {
    /// The code on the wire where it differs from the shape name.
    pub code: Option<&'static str>,
    /// The HTTP status.
    pub http_status_code: Option<u16>,
    /// Whether the caller is at fault.
    #[serde(default)]
    pub sender_fault: bool,
}

/// A shape.
#[derive(Debug, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct Shape {
    /// Its type.
    #[serde(rename = "type")]
    pub kind: ShapeKind,
    /// Structure members in model order.
    #[serde(default)]
    pub members: Members,
    /// Required member names.
    #[serde(default)]
    pub required: Vec<&'static str>,
    /// The member of a list.
    pub member: Option<Box<ShapeRef>>,
    /// The key of a map.
    pub key: Option<Box<ShapeRef>>,
    /// The value of a map.
    pub value: Option<Box<ShapeRef>>,
    /// A flattened list or map in XML.
    #[serde(default)]
    pub flattened: bool,
    /// The member that is the HTTP payload of a REST structure.
    pub payload: Option<&'static str>,
    /// The error trait of an exception.
    pub error: Option<ErrorTrait>,
    /// Whether this is an exception shape.
    #[serde(default)]
    pub exception: bool,
    /// The default timestamp format of a timestamp shape.
    pub timestamp_format: Option<&'static str>,
    /// Allowed values of an enum string.
    #[serde(default, rename = "enum")]
    pub enum_values: Vec<&'static str>,
    /// Minimum length, size or value.
    pub min: Option<f64>,
    /// Maximum length, size or value.
    pub max: Option<f64>,
    /// A streaming blob.
    #[serde(default)]
    pub streaming: bool,
    /// A JSON document shape.
    #[serde(default)]
    pub document: bool,
    /// The element name of a top-level XML payload structure.
    pub location_name: Option<&'static str>,
    /// The namespace of a top-level XML payload structure.
    pub xml_namespace: Option<Box<XmlNamespace>>,
    /// A union: exactly one member set.
    #[serde(default)]
    pub union: bool,
    /// The regular expression (Java's syntax) a string must match in full; owned, since
    /// its backslashes arrive escaped in the JSON.
    pub pattern: Option<String>,
    /// What input validation needs of this shape, worked out on its first check.
    #[serde(skip)]
    pub(crate) checks: OnceLock<crate::validate::Checks>,
}

/// Structure members, kept in model order (the order AWS serialises them in).
#[derive(Debug, Default)]
pub struct Members(pub Vec<(&'static str, ShapeRef)>);

impl Members {
    /// The member named `name`.
    pub fn get(&self, name: &str) -> Option<&ShapeRef> {
        self.0.iter().find(|(n, _)| *n == name).map(|(_, r)| r)
    }

    /// Members in model order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ShapeRef)> {
        self.0.iter().map(|(n, r)| (*n, r))
    }
}

impl<'de: 'static> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct MembersVisitor;
        impl<'de: 'static> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of members")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some((name, member)) = map.next_entry::<&'de str, ShapeRef>()? {
                    members.push((name, member));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

/// Named entries of a model, sorted by name, each parsed from its JSON on first use.
#[derive(Debug)]
struct Table<T> {
    entries: Vec<Entry<T>>,
}

#[derive(Debug)]
struct Entry<T> {
    name: &'static str,
    json: &'static RawValue,
    parsed: OnceLock<Box<T>>,
}

impl<T: Deserialize<'static>> Table<T> {
    fn new(mut index: Vec<(&'static str, &'static RawValue)>) -> Table<T> {
        index.sort_unstable_by_key(|(name, _)| *name);
        let entries = index
            .into_iter()
            .map(|(name, json)| Entry {
                name,
                json,
                parsed: OnceLock::new(),
            })
            .collect();
        Table { entries }
    }

    fn get(&self, name: &str) -> Option<&T> {
        let at = self.position(name)?;
        Some(self.parsed(&self.entries[at]))
    }

    fn position(&self, name: &str) -> Option<usize> {
        self.entries.binary_search_by(|e| e.name.cmp(name)).ok()
    }

    /// The entry at `at` if it is the one named `name` (a remembered position, checked).
    fn at(&self, at: usize, name: &str) -> Option<&T> {
        let entry = self.entries.get(at).filter(|e| e.name == name)?;
        Some(self.parsed(entry))
    }

    fn parsed<'a>(&self, entry: &'a Entry<T>) -> &'a T {
        entry.parsed.get_or_init(|| {
            serde_json::from_str(entry.json.get()).unwrap_or_else(|e| {
                panic!("embedded model entry {} does not parse: {e}", entry.name)
            })
        })
    }

    fn names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.entries.iter().map(|e| e.name)
    }

    fn all(&self) -> impl Iterator<Item = (&'static str, &T)> {
        self.entries.iter().map(|e| (e.name, self.parsed(e)))
    }
}

/// A JSON object's members as borrowed slices of the embedded text, in model order.
struct Index(Vec<(&'static str, &'static RawValue)>);

impl<'de: 'static> Deserialize<'de> for Index {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Index, D::Error> {
        struct IndexVisitor;
        impl<'de: 'static> Visitor<'de> for IndexVisitor {
            type Value = Index;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of named entries")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Index, A::Error> {
                let mut entries = Vec::new();
                while let Some(entry) = map.next_entry::<&'de str, &'de RawValue>()? {
                    entries.push(entry);
                }
                Ok(Index(entries))
            }
        }
        deserializer.deserialize_map(IndexVisitor)
    }
}

/// The top level of a model, indexed but not parsed.
#[derive(Deserialize)]
#[serde(bound(deserialize = "'de: 'static"))]
struct IndexedModel {
    metadata: Metadata,
    operations: Index,
    shapes: Index,
}

impl Model {
    /// Indexes a model's JSON; operations and shapes are parsed when first asked for.
    fn index(json: &'static str) -> serde_json::Result<Model> {
        let indexed: IndexedModel = serde_json::from_str(json)?;
        Ok(Model {
            metadata: indexed.metadata,
            operations: Table::new(indexed.operations.0),
            shapes: Table::new(indexed.shapes.0),
            rest_routes: OnceLock::new(),
        })
    }

    /// The shape named `name`; every reference in an embedded model resolves.
    pub fn shape(&self, name: &str) -> &Shape {
        match self.shapes.get(name) {
            Some(s) => s,
            None => panic!("model references unknown shape {name}"),
        }
    }

    /// A plain reference to the shape named `name` (no member traits), for shaping a value
    /// by a shape found by name; every name asked for by the code is in its model.
    pub fn shape_ref(&self, name: &str) -> ShapeRef {
        match self.shapes.position(name) {
            Some(at) => ShapeRef {
                shape: self.shapes.entries[at].name,
                at: OnceLock::from(at),
                ..Default::default()
            },
            None => panic!("model references unknown shape {name}"),
        }
    }

    /// The shape a reference points at. The reference remembers where its shape sits, so
    /// the codecs' many resolves per request do not search the table each time.
    pub fn resolve(&self, r: &ShapeRef) -> &Shape {
        if let Some(shape) = r.at.get().and_then(|&at| self.shapes.at(at, r.shape)) {
            return shape;
        }
        match self.shapes.position(r.shape) {
            Some(at) => {
                let _ = r.at.set(at);
                self.shapes.parsed(&self.shapes.entries[at])
            }
            None => panic!("model references unknown shape {}", r.shape),
        }
    }

    /// The operation named `name`.
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.get(name)
    }

    /// The names of every operation, in name order, without parsing them.
    pub fn operation_names(&self) -> impl Iterator<Item = &'static str> + '_ {
        self.operations.names()
    }

    /// Every operation, in name order (parses those not parsed yet).
    pub fn operations(&self) -> impl Iterator<Item = &Operation> {
        self.operations.all().map(|(_, op)| op)
    }

    /// Every shape with its name, in name order (parses those not parsed yet).
    pub fn shapes(&self) -> impl Iterator<Item = (&'static str, &Shape)> {
        self.shapes.all()
    }

    /// The exception shape for an error code, if the model defines one.
    pub fn error_shape(&self, code: &str) -> Option<&Shape> {
        self.shapes.get(code).filter(|s| s.exception)
    }
}

macro_rules! embedded_models {
    ($($name:literal),* $(,)?) => {
        const EMBEDDED: &[(&str, &str)] = &[
            $(($name, include_str!(concat!("../models/", $name, ".json")))),*
        ];
    };
}

embedded_models!(
    "apigateway",
    "apigatewayv2",
    "cloudformation",
    "cloudwatch",
    "dynamodb",
    "dynamodbstreams",
    "ecr",
    "events",
    "firehose",
    "iam",
    "kms",
    "kinesis",
    "lambda",
    "logs",
    "s3",
    "scheduler",
    "secretsmanager",
    "sns",
    "sqs",
    "sqs-query",
    "ssm",
    "stepfunctions",
    "sts",
);

static INDEXED: [OnceLock<Model>; EMBEDDED.len()] = [const { OnceLock::new() }; EMBEDDED.len()];

/// The embedded model named `name` (`s3`, `dynamodb`, ...), indexed on first use.
///
/// Panics if no such model is embedded: the set is fixed at build time and the unit tests
/// parse every one of them.
pub fn model(name: &str) -> &'static Model {
    let index = EMBEDDED
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no embedded model named {name}"));
    INDEXED[index].get_or_init(|| {
        Model::index(EMBEDDED[index].1)
            .unwrap_or_else(|e| panic!("embedded model {name} does not parse: {e}"))
    })
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn every_embedded_model_parses_and_resolves_every_reference() {
        for (name, _) in EMBEDDED {
            let m = model(name);
            assert!(m.operations().next().is_some(), "{name} has operations");
            for op in m.operations() {
                for r in op.input.iter().chain(op.output.iter()).chain(&op.errors) {
                    m.resolve(r);
                }
            }
            for (_, shape) in m.shapes() {
                for (_, r) in shape.members.iter() {
                    m.resolve(r);
                }
                for r in [&shape.member, &shape.key, &shape.value]
                    .into_iter()
                    .flatten()
                {
                    m.resolve(r);
                }
            }
        }
    }

    #[test]
    fn indexing_parses_nothing_and_a_lookup_parses_only_its_entry() {
        let (_, json) = EMBEDDED.iter().find(|(n, _)| *n == "sts").expect("sts");
        let m = Model::index(json).expect("indexes");
        let parsed = |t: &Table<Shape>| {
            t.entries
                .iter()
                .filter(|e| e.parsed.get().is_some())
                .count()
        };
        assert_eq!(parsed(&m.shapes), 0);
        assert_eq!(m.metadata.protocol, "query");
        let shape = m.shape("GetCallerIdentityResponse");
        assert_eq!(shape.kind, ShapeKind::Structure);
        assert_eq!(parsed(&m.shapes), 1);
        assert!(std::ptr::eq(shape, m.shape("GetCallerIdentityResponse")));
        assert!(m.operation("NoSuchOperation").is_none());
        assert!(m.error_shape("GetCallerIdentityResponse").is_none());
        assert!(m
            .error_shape("ExpiredTokenException")
            .is_some_and(|s| s.exception));
    }

    #[test]
    fn operation_names_are_sorted_and_match_the_operations() {
        let m = model("sqs");
        let names: Vec<_> = m.operation_names().collect();
        assert!(names.windows(2).all(|w| w[0] < w[1]));
        assert!(names.contains(&"SendMessage"));
        let parsed: Vec<_> = m.operations().map(|op| op.name).collect();
        assert_eq!(names, parsed);
    }

    #[test]
    #[should_panic(expected = "model references unknown shape NoSuchShape")]
    fn an_unknown_shape_is_a_bug_in_the_model() {
        model("sts").shape("NoSuchShape");
    }

    #[test]
    fn members_keep_model_order() {
        let m = model("sts");
        let shape = m.shape("GetCallerIdentityResponse");
        let names: Vec<_> = shape.members.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["UserId", "Account", "Arn"]);
    }
}
