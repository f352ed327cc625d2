//! The AWS service models that drive the codecs.
//!
//! botocore's `service-2.json` files, trimmed by `scripts/trim-models.py`, are embedded in
//! the binary and parsed lazily: a model is parsed the first time its service is called, so
//! start-up never pays for it and does not grow with the number of services. The structures
//! below keep exactly the traits the codecs read.

use std::collections::HashMap;
use std::sync::OnceLock;

use serde::de::{MapAccess, Visitor};
use serde::{Deserialize, Deserializer};

/// One service's model.
#[derive(Debug, Deserialize)]
pub struct Model {
    /// Protocol and naming metadata.
    pub metadata: Metadata,
    /// Operations by name.
    pub operations: HashMap<String, Operation>,
    /// Shapes by name.
    pub shapes: HashMap<String, Shape>,
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
}

/// One operation.
#[derive(Debug, Deserialize)]
pub struct Operation {
    /// The operation's name.
    pub name: String,
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
    pub method: String,
    /// The URI template (`/{Bucket}/{Key+}?tagging`).
    pub request_uri: String,
    /// The success status where it is not 200.
    pub response_code: Option<u16>,
}

/// A reference to a shape, with the traits a member adds to it.
#[derive(Debug, Default, Deserialize)]
#[serde(rename_all = "camelCase")]
pub struct ShapeRef {
    /// The referenced shape's name.
    pub shape: String,
    /// `header`, `headers`, `uri`, `querystring` or `statusCode`.
    pub location: Option<String>,
    /// The wire name (header name, XML element, query key).
    pub location_name: Option<String>,
    /// The query protocol's result wrapper element on output refs.
    pub result_wrapper: Option<String>,
    /// A flattened list or map in XML.
    #[serde(default)]
    pub flattened: bool,
    /// The member is an XML attribute.
    #[serde(default)]
    pub xml_attribute: bool,
    /// An XML namespace declared on this member's element.
    pub xml_namespace: Option<XmlNamespace>,
    /// `iso8601`, `rfc822` or `unixTimestamp`.
    pub timestamp_format: Option<String>,
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
    pub json_name: Option<String>,
    /// The query protocol's name where it differs.
    pub query_name: Option<String>,
}

/// An XML namespace trait.
#[derive(Debug, Deserialize)]
pub struct XmlNamespace {
    /// The namespace URI.
    pub uri: String,
    /// The prefix, when not the default namespace.
    pub prefix: Option<String>,
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
    pub code: Option<String>,
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
    pub required: Vec<String>,
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
    pub payload: Option<String>,
    /// The error trait of an exception.
    pub error: Option<ErrorTrait>,
    /// Whether this is an exception shape.
    #[serde(default)]
    pub exception: bool,
    /// The default timestamp format of a timestamp shape.
    pub timestamp_format: Option<String>,
    /// Allowed values of an enum string.
    #[serde(default, rename = "enum")]
    pub enum_values: Vec<String>,
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
    pub location_name: Option<String>,
    /// The namespace of a top-level XML payload structure.
    pub xml_namespace: Option<XmlNamespace>,
    /// A union: exactly one member set.
    #[serde(default)]
    pub union: bool,
}

/// Structure members, kept in model order (the order AWS serialises them in).
#[derive(Debug, Default)]
pub struct Members(pub Vec<(String, ShapeRef)>);

impl Members {
    /// The member named `name`.
    pub fn get(&self, name: &str) -> Option<&ShapeRef> {
        self.0.iter().find(|(n, _)| n == name).map(|(_, r)| r)
    }

    /// Members in model order.
    pub fn iter(&self) -> impl Iterator<Item = (&str, &ShapeRef)> {
        self.0.iter().map(|(n, r)| (n.as_str(), r))
    }
}

impl<'de> Deserialize<'de> for Members {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Members, D::Error> {
        struct MembersVisitor;
        impl<'de> Visitor<'de> for MembersVisitor {
            type Value = Members;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a map of members")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Members, A::Error> {
                let mut members = Vec::new();
                while let Some((name, member)) = map.next_entry::<String, ShapeRef>()? {
                    members.push((name, member));
                }
                Ok(Members(members))
            }
        }
        deserializer.deserialize_map(MembersVisitor)
    }
}

impl Model {
    /// The shape named `name`; every reference in an embedded model resolves.
    pub fn shape(&self, name: &str) -> &Shape {
        match self.shapes.get(name) {
            Some(s) => s,
            None => panic!("model references unknown shape {name}"),
        }
    }

    /// The shape a reference points at.
    pub fn resolve(&self, r: &ShapeRef) -> &Shape {
        self.shape(&r.shape)
    }

    /// The operation named `name`.
    pub fn operation(&self, name: &str) -> Option<&Operation> {
        self.operations.get(name)
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
    "dynamodb",
    "dynamodbstreams",
    "events",
    "iam",
    "kms",
    "lambda",
    "logs",
    "s3",
    "secretsmanager",
    "sns",
    "sqs",
    "sqs-query",
    "ssm",
    "sts",
);

static PARSED: [OnceLock<Model>; EMBEDDED.len()] = [const { OnceLock::new() }; EMBEDDED.len()];

/// The embedded model named `name` (`s3`, `dynamodb`, ...), parsed on first use.
///
/// Panics if no such model is embedded: the set is fixed at build time and the unit tests
/// parse every one of them.
pub fn model(name: &str) -> &'static Model {
    let index = EMBEDDED
        .iter()
        .position(|(n, _)| *n == name)
        .unwrap_or_else(|| panic!("no embedded model named {name}"));
    PARSED[index].get_or_init(|| {
        serde_json::from_str(EMBEDDED[index].1)
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
            assert!(!m.operations.is_empty(), "{name} has operations");
            for op in m.operations.values() {
                for r in op.input.iter().chain(op.output.iter()).chain(&op.errors) {
                    m.resolve(r);
                }
            }
            for shape in m.shapes.values() {
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
    fn members_keep_model_order() {
        let m = model("sts");
        let shape = m.shape("GetCallerIdentityResponse");
        let names: Vec<_> = shape.members.iter().map(|(n, _)| n).collect();
        assert_eq!(names, ["UserId", "Account", "Arn"]);
    }
}
