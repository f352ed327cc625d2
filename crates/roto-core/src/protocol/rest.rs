//! The REST protocols (rest-xml, rest-json): HTTP bindings from the model.
//!
//! Both protocols bind an operation's input and output members to the parts of an HTTP
//! message the same way (`location`: `uri`, `querystring`, `header`, `headers`,
//! `statusCode`; the `payload` member); they differ only in how the body is written, XML
//! laid out by [`super::xml`] or JSON by [`super::json`]. [`route`] picks the operation from
//! the method and URI template, [`decode`] and [`encode`] move members between the message
//! and a shaped [`Value`], and the error encoders write each protocol's error form.

mod decode;
mod encode;
mod rfc2047;
mod route;

pub(crate) use route::Routes;

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation, Shape, ShapeKind, ShapeRef};
use crate::protocol::{Protocol, Resolved, WireRequest, WireResponse};
use crate::timestamp::{self, TimestampFormat};
use crate::value::Value;

use base64::Engine;

/// Finds the operation whose method and URI template match the request most specifically.
pub fn resolve<'m>(model: &'m Model, req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
    route::resolve(model, req)
}

/// Decodes labels, headers, query string and payload into the input shape.
pub fn decode(
    p: Protocol,
    model: &Model,
    resolved: &Resolved<'_>,
    req: &WireRequest<'_>,
) -> AwsResult<Value> {
    decode::decode(p, model, resolved, req)
}

/// Encodes output headers, status and payload.
pub fn encode(
    p: Protocol,
    model: &Model,
    op: &Operation,
    output: &Value,
    request_id: &str,
) -> WireResponse {
    encode::encode(p, model, op, output, request_id)
}

/// Encodes an error; `head` answers a HEAD request, whose error has no body.
pub fn encode_error(
    p: Protocol,
    model: &Model,
    error: &AwsError,
    request_id: &str,
    head: bool,
) -> WireResponse {
    encode::encode_error(p, model, error, request_id, head)
}

/// The text of a header-bound value: timestamps in RFC 822 unless the member says
/// otherwise, lists comma-joined, `jsonvalue` documents as base64 JSON.
fn header_text(shape: &Shape, r: &ShapeRef, value: &Value, model: &Model) -> Option<String> {
    if r.jsonvalue {
        let json = value_json(value);
        return Some(base64::engine::general_purpose::STANDARD.encode(json.to_string()));
    }
    match (shape.kind, value) {
        (ShapeKind::List, Value::List(items)) => {
            let member = shape.member.as_deref()?;
            let member_shape = model.resolve(member);
            let parts: Vec<String> = items
                .iter()
                .filter_map(|v| header_text(member_shape, member, v, model))
                .collect();
            Some(parts.join(","))
        }
        (_, Value::Timestamp(t)) => Some(timestamp::format(
            *t,
            crate::protocol::xml::timestamp_format(shape, r, TimestampFormat::Rfc822),
        )),
        _ => crate::protocol::xml::scalar_text(shape, r, value),
    }
}

/// A value as plain JSON (for `jsonvalue` headers).
fn value_json(value: &Value) -> serde_json::Value {
    use serde_json::Value as Json;
    match value {
        Value::Bool(b) => Json::Bool(*b),
        Value::Integer(i) => Json::from(*i),
        Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
        Value::String(s) => Json::String(s.clone()),
        Value::Blob(b) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Timestamp(t) => Json::from(timestamp::epoch_seconds(*t)),
        Value::List(l) => Json::Array(l.iter().map(value_json).collect()),
        Value::Map(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), value_json(v))).collect()),
        Value::Null => Json::Null,
    }
}

/// The XML namespace of a rest-xml model's documents: the metadata's, else the
/// `http://{endpointPrefix}.amazonaws.com/doc/{apiVersion}/` form S3 uses.
fn default_namespace(model: &Model) -> String {
    model.metadata.xml_namespace.clone().unwrap_or_else(|| {
        format!(
            "http://{}.amazonaws.com/doc/{}/",
            model.metadata.endpoint_prefix, model.metadata.api_version
        )
    })
}
