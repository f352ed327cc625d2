//! Response encoding: status, header members, the payload or body members, and errors.

use base64::Engine;
use http::{HeaderName, HeaderValue, StatusCode};

use super::{default_namespace, header_text, rfc2047};
use crate::error::AwsError;
use crate::model::{Model, Operation, Shape, ShapeKind, ShapeRef};
use crate::protocol::xml::{scalar_text, XmlWriter};
use crate::protocol::{error_status, json, Protocol, WireResponse};
use crate::value::Value;

/// Sets a header from arbitrary bytes, skipping values that cannot be header text.
fn set_header(resp: &mut WireResponse, name: &str, value: &str) {
    if let (Ok(n), Ok(v)) = (
        HeaderName::from_bytes(name.as_bytes()),
        HeaderValue::from_bytes(value.as_bytes()),
    ) {
        resp.headers.insert(n, v);
    }
}

/// The request-id headers each protocol's SDKs read.
fn request_id_headers(p: Protocol, resp: &mut WireResponse, request_id: &str) {
    if p == Protocol::RestXml {
        set_header(resp, "x-amz-request-id", request_id);
        set_header(resp, "x-amz-id-2", &host_id(request_id));
    } else {
        set_header(resp, "x-amzn-RequestId", request_id);
    }
}

/// The extended request id (`x-amz-id-2`, `<HostId>`), derived from the request id.
fn host_id(request_id: &str) -> String {
    base64::engine::general_purpose::STANDARD.encode(request_id.as_bytes())
}

/// Encodes an operation's output.
pub fn encode(
    p: Protocol,
    model: &Model,
    op: &Operation,
    output: &Value,
    request_id: &str,
) -> WireResponse {
    let status = op.http.response_code.unwrap_or(200);
    let mut resp = WireResponse::new(status, "", Vec::new());
    request_id_headers(p, &mut resp, request_id);
    let Some(out_ref) = &op.output else {
        return resp;
    };
    let shape = model.resolve(out_ref);
    for (name, member, value) in bound_members(shape, output) {
        let wire = member.location_name.unwrap_or(name);
        match member.location {
            Some("statusCode") => {
                if let Some(code) = value
                    .as_i64()
                    .and_then(|c| u16::try_from(c).ok())
                    .and_then(|c| StatusCode::from_u16(c).ok())
                {
                    resp.status = code;
                }
            }
            Some("header") => {
                if let Some(text) = header_text(model.resolve(member), member, value, model) {
                    set_header(&mut resp, wire, &text);
                }
            }
            Some("headers") => {
                let val_ref = model.resolve(member).value.as_deref();
                for (k, v) in value.as_map().into_iter().flatten() {
                    let text = match val_ref {
                        Some(r) => header_text(model.resolve(r), r, v, model),
                        None => v.as_str().map(str::to_string),
                    };
                    if let Some(text) = text {
                        set_header(&mut resp, &format!("{wire}{k}"), &rfc2047::encode(&text));
                    }
                }
            }
            _ => {}
        }
    }
    let (body, content_type) = body(
        p,
        model,
        out_ref.location_name,
        out_ref.shape,
        shape,
        output,
    );
    if !content_type.is_empty() && !resp.headers.contains_key(http::header::CONTENT_TYPE) {
        set_header(&mut resp, "content-type", content_type);
    }
    resp.body = body.into();
    resp
}

/// The output's members bound to the status or headers, in model order. Found from the
/// output's entries: an output sets a few of its shape's members (GetObject's has 46).
fn bound_members<'a>(
    shape: &'a Shape,
    output: &'a Value,
) -> Vec<(&'a str, &'a ShapeRef, &'a Value)> {
    let Some(values) = output.as_map() else {
        return Vec::new();
    };
    let mut bound: Vec<(usize, &str, &ShapeRef, &Value)> = values
        .iter()
        .filter_map(|(name, value)| {
            let at = shape.members.0.iter().position(|(n, _)| *n == name)?;
            let member = &shape.members.0[at].1;
            member
                .location
                .is_some()
                .then_some((at, name.as_str(), member, value))
        })
        .collect();
    bound.sort_unstable_by_key(|(at, ..)| *at);
    bound.into_iter().map(|(_, n, m, v)| (n, m, v)).collect()
}

fn content_type(p: Protocol) -> &'static str {
    match p {
        Protocol::RestXml => "application/xml",
        _ => "application/json",
    }
}

/// The body and its content type: the payload member, or the body members.
fn body(
    p: Protocol,
    model: &Model,
    ref_name: Option<&str>,
    shape_name: &'static str,
    shape: &Shape,
    output: &Value,
) -> (Vec<u8>, &'static str) {
    if let Some(payload) = &shape.payload {
        let Some(member) = shape.members.get(payload) else {
            return (Vec::new(), "");
        };
        let member_shape = model.resolve(member);
        if member.streaming || member_shape.streaming {
            return (Vec::new(), "");
        }
        return match (member_shape.kind, output.get(payload)) {
            (_, None) => (Vec::new(), ""),
            (ShapeKind::Blob, Some(Value::Blob(b))) => (b.clone(), "application/octet-stream"),
            (ShapeKind::Blob | ShapeKind::String, Some(Value::String(s))) => {
                (s.clone().into_bytes(), "text/plain")
            }
            (_, Some(value)) if p == Protocol::RestXml => {
                let root = member
                    .location_name
                    .or(member_shape.location_name)
                    .unwrap_or(member.shape);
                let ns = member
                    .xml_namespace
                    .as_ref()
                    .or(member_shape.xml_namespace.as_ref())
                    .map(|n| n.uri.to_string())
                    .unwrap_or_else(|| default_namespace(model));
                (
                    xml_document(model, root, &ns, member_shape, value),
                    content_type(p),
                )
            }
            (_, Some(value)) => {
                let json = json::encode_value(model, member, member_shape, value);
                (
                    serde_json::to_vec(&json).unwrap_or_default(),
                    content_type(p),
                )
            }
        };
    }
    let has_body_members = shape.members.iter().any(|(_, m)| m.location.is_none());
    if !has_body_members {
        return (Vec::new(), "");
    }
    if p == Protocol::RestXml {
        let root = shape.location_name.or(ref_name).unwrap_or(shape_name);
        let ns = shape
            .xml_namespace
            .as_ref()
            .map(|n| n.uri.to_string())
            .unwrap_or_else(|| default_namespace(model));
        return (
            xml_document(model, root, &ns, shape, output),
            content_type(p),
        );
    }
    let r = crate::model::ShapeRef {
        shape: shape_name,
        ..Default::default()
    };
    let json = json::encode_value(model, &r, shape, output);
    (
        serde_json::to_vec(&json).unwrap_or_default(),
        content_type(p),
    )
}

/// `<?xml ...?><root xmlns="ns">members</root>`.
fn xml_document(model: &Model, root: &str, ns: &str, shape: &Shape, value: &Value) -> Vec<u8> {
    let mut w = XmlWriter::with_declaration();
    w.start(root, &[("xmlns", ns)]);
    if shape.kind == ShapeKind::Structure {
        w.members(model, shape, value);
    } else if let Some(text) = scalar_text(shape, &crate::model::ShapeRef::default(), value) {
        w.text(&text);
    }
    w.end(root);
    w.finish().into_bytes()
}

/// Encodes an error the way each protocol's SDKs parse it.
pub fn encode_error(
    p: Protocol,
    model: &Model,
    error: &AwsError,
    request_id: &str,
    head: bool,
) -> WireResponse {
    let status = error_status(model, error);
    let body = if head {
        Vec::new()
    } else if p == Protocol::RestXml {
        xml_error(model, error, request_id)
    } else {
        json_error(model, error)
    };
    let mut resp = WireResponse::new(status, content_type(p), body);
    request_id_headers(p, &mut resp, request_id);
    if p == Protocol::RestJson {
        set_header(&mut resp, "x-amzn-ErrorType", &error.code);
    }
    resp
}

/// `<Error><Code/><Message/>{fields}<RequestId/><HostId/></Error>`, without a namespace.
fn xml_error(model: &Model, error: &AwsError, request_id: &str) -> Vec<u8> {
    let mut w = XmlWriter::with_declaration();
    w.start("Error", &[]);
    w.element("Code", &error.code);
    w.element("Message", &error.message);
    let shape = model.error_shape(&error.code);
    for (name, value) in error.fields.as_map().into_iter().flatten() {
        match shape.and_then(|s| s.members.get(name)) {
            Some(member) => {
                let member_shape = model.resolve(member);
                let el = member.location_name.unwrap_or(name);
                w.value(model, el, member, member_shape, value);
            }
            None => {
                let text = match value {
                    Value::String(s) => Some(s.clone()),
                    Value::Integer(i) => Some(i.to_string()),
                    Value::Bool(b) => Some(b.to_string()),
                    _ => None,
                };
                if let Some(text) = text {
                    w.element(name, &text);
                }
            }
        }
    }
    w.element("RequestId", request_id);
    w.element("HostId", &host_id(request_id));
    w.end("Error");
    w.finish().into_bytes()
}

/// `{"Type": "User"|"Server", "message": ..., fields}`: botocore takes the code from the
/// `x-amzn-ErrorType` header and the message from `message`.
fn json_error(model: &Model, error: &AwsError) -> Vec<u8> {
    let mut error = error.clone();
    let has_type = model
        .error_shape(&error.code)
        .is_some_and(|s| s.members.get("Type").is_some());
    if has_type && error.fields.get("Type").is_none() {
        let kind = if error.sender_fault {
            "User"
        } else {
            "Service"
        };
        error.fields.insert("Type", kind);
    }
    json::error_body(model, &error, None)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;

    fn text(resp: &WireResponse) -> String {
        String::from_utf8(resp.body.to_vec()).unwrap()
    }

    fn header<'a>(resp: &'a WireResponse, name: &str) -> Option<&'a str> {
        resp.headers.get(name).and_then(|v| v.to_str().ok())
    }

    #[test]
    fn list_objects_v2_is_a_namespaced_list_bucket_result() {
        let m = model("s3");
        let op = m.operation("ListObjectsV2").unwrap();
        let out = Value::map()
            .with("Name", "b")
            .with("KeyCount", 1i64)
            .with("IsTruncated", false)
            .with(
                "Contents",
                vec![Value::map()
                    .with("Key", "a&b")
                    .with("Size", 3i64)
                    .with("LastModified", Value::Timestamp(0))],
            )
            .with("CommonPrefixes", vec![Value::map().with("Prefix", "d/")]);
        let resp = encode(Protocol::RestXml, m, op, &out, "req-1");
        let xml = text(&resp);
        assert!(xml.starts_with("<?xml"), "{xml}");
        assert!(
            xml.contains(r#"<ListBucketResult xmlns="http://s3.amazonaws.com/doc/2006-03-01/">"#),
            "{xml}"
        );
        assert!(xml.contains("<Contents><Key>a&amp;b</Key><LastModified>1970-01-01T00:00:00.000Z</LastModified><Size>3</Size></Contents>"), "{xml}");
        assert!(
            xml.contains("<CommonPrefixes><Prefix>d/</Prefix></CommonPrefixes>"),
            "{xml}"
        );
        assert_eq!(header(&resp, "content-type"), Some("application/xml"));
        assert_eq!(header(&resp, "x-amz-request-id"), Some("req-1"));
        assert!(header(&resp, "x-amz-id-2").is_some());
    }

    #[test]
    fn header_members_status_codes_and_metadata_are_headers() {
        let m = model("s3");
        let op = m.operation("GetObject").unwrap();
        let out = Value::map()
            .with("ContentLength", 5i64)
            .with("ETag", "\"abc\"")
            .with("LastModified", Value::Timestamp(1_796_230_800_000))
            .with("Metadata", Value::map().with("color", "blue"))
            .with("AcceptRanges", "bytes");
        let resp = encode(Protocol::RestXml, m, op, &out, "r");
        assert_eq!(header(&resp, "content-length"), Some("5"));
        assert_eq!(header(&resp, "etag"), Some("\"abc\""));
        assert_eq!(
            header(&resp, "last-modified"),
            Some("Wed, 02 Dec 2026 17:00:00 GMT")
        );
        assert_eq!(header(&resp, "x-amz-meta-color"), Some("blue"));
        assert!(
            resp.body.is_empty(),
            "streaming payloads leave the body to the stream"
        );
        let del = m.operation("DeleteObject").unwrap();
        let resp = encode(Protocol::RestXml, m, del, &Value::map(), "r");
        assert_eq!(resp.status, 204);
        assert!(resp.body.is_empty());
    }

    #[test]
    fn rest_json_outputs_are_json_with_status_and_blob_payloads_raw() {
        let m = model("lambda");
        let get = m.operation("GetFunction").unwrap();
        let out = Value::map().with(
            "Configuration",
            Value::map().with("FunctionName", "f").with("Timeout", 3i64),
        );
        let resp = encode(Protocol::RestJson, m, get, &out, "r");
        let json: serde_json::Value = serde_json::from_slice(&resp.body).unwrap();
        assert_eq!(json["Configuration"]["FunctionName"], "f");
        assert_eq!(header(&resp, "x-amzn-RequestId"), Some("r"));
        assert_eq!(header(&resp, "content-type"), Some("application/json"));
        let create = m.operation("CreateFunction").unwrap();
        assert_eq!(
            encode(Protocol::RestJson, m, create, &Value::map(), "r").status,
            201
        );
        let invoke = m.operation("Invoke").unwrap();
        let out = Value::map()
            .with("StatusCode", 202i64)
            .with("Payload", Value::Blob(b"{\"ok\":1}".to_vec()))
            .with("FunctionError", "Unhandled");
        let resp = encode(Protocol::RestJson, m, invoke, &out, "r");
        assert_eq!(resp.status, 202);
        assert_eq!(&resp.body[..], b"{\"ok\":1}");
        assert_eq!(header(&resp, "x-amz-function-error"), Some("Unhandled"));
    }

    #[test]
    fn rest_xml_errors_carry_code_message_fields_and_ids() {
        let m = model("s3");
        let err = AwsError::new("NoSuchKey", "The specified key does not exist.")
            .with_field("Key", "a/b");
        let resp = encode_error(Protocol::RestXml, m, &err, "rid", false);
        assert_eq!(resp.status, 404);
        let xml = text(&resp);
        assert!(xml.contains("<Error><Code>NoSuchKey</Code><Message>The specified key does not exist.</Message><Key>a/b</Key><RequestId>rid</RequestId><HostId>"), "{xml}");
        assert!(!xml.contains("xmlns"));
        let head = encode_error(Protocol::RestXml, m, &err, "rid", true);
        assert_eq!(head.status, 404);
        assert!(head.body.is_empty());
    }

    #[test]
    fn rest_json_errors_use_the_error_type_header_and_message() {
        let m = model("lambda");
        let err = AwsError::new("ResourceNotFoundException", "Function not found: f");
        let resp = encode_error(Protocol::RestJson, m, &err, "rid", false);
        assert_eq!(resp.status, 404);
        assert_eq!(
            header(&resp, "x-amzn-ErrorType"),
            Some("ResourceNotFoundException")
        );
        let json: serde_json::Value = serde_json::from_slice(&resp.body).unwrap();
        assert_eq!(json["message"], "Function not found: f");
        assert_eq!(json["Type"], "User");
    }
}
