//! Request decoding: URI labels, query strings, headers and the payload into the input shape.

use std::collections::BTreeMap;

use base64::Engine;

use super::rfc2047;
use super::route::query_pairs;
use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Shape, ShapeKind, ShapeRef};
use crate::protocol::xml::{self, read_scalar};
use crate::protocol::{json, Protocol, Resolved, WireRequest};
use crate::timestamp;
use crate::value::Value;

/// S3's error for a body that is not the XML the operation expects.
pub(super) fn malformed_xml() -> AwsError {
    AwsError::new(
        "MalformedXML",
        "The XML you provided was not well-formed or did not validate against our published schema",
    )
    .with_status(400)
}

/// Decodes the request into a value shaped like the operation's input.
pub fn decode(
    p: Protocol,
    model: &Model,
    resolved: &Resolved<'_>,
    req: &WireRequest<'_>,
) -> AwsResult<Value> {
    let Some(input) = &resolved.operation.input else {
        return Ok(Value::map());
    };
    let shape = model.resolve(input);
    let query = query_pairs(req.query);
    let mut out = body_members(p, model, input, shape, req.body)?;
    // The request's few headers, walked once per header member without the map's
    // iterator (an S3 input has dozens of header members).
    let headers: Vec<(&str, &[u8])> = req
        .headers
        .iter()
        .map(|(n, v)| (n.as_str(), v.as_bytes()))
        .collect();
    let bound_query: Vec<&str> = shape
        .members
        .iter()
        .filter(|(_, m)| m.location == Some("querystring"))
        .filter_map(|(_, m)| m.location_name)
        .collect();
    for (name, member) in shape.members.iter() {
        let wire = member.location_name.unwrap_or(name);
        // Members are resolved only when the request carries them: an S3 input has dozens.
        let value = match member.location {
            Some("uri") => match resolved.labels.iter().find(|(l, _)| l == wire) {
                Some((_, text)) => Some(read_scalar(model.resolve(member), member, text)?),
                None => None,
            },
            Some("querystring") if !query.is_empty() => {
                let member_shape = model.resolve(member);
                query_member(model, member, member_shape, wire, &query, &bound_query)?
            }
            Some("header") => match raw_header(&headers, wire) {
                Some(text) => Some(header_value(model, member, model.resolve(member), &text)?),
                None => None,
            },
            Some("headers") => prefix_headers(req, wire),
            _ => None,
        };
        if let Some(v) = value {
            out.insert(name, v);
        }
    }
    Ok(out)
}

/// The headers named `prefix*` as a map keyed by the rest of their names, each value read
/// as S3 reads metadata ([`rfc2047::decode`]); repeated names join with commas, as S3 does.
fn prefix_headers(req: &WireRequest<'_>, prefix: &str) -> Option<Value> {
    let prefix = prefix.to_ascii_lowercase();
    let mut map: BTreeMap<String, Value> = BTreeMap::new();
    for (name, value) in req.headers.iter() {
        let Some(key) = name.as_str().strip_prefix(prefix.as_str()) else {
            continue;
        };
        let text = rfc2047::decode(value.as_bytes());
        match map.get_mut(key) {
            Some(Value::String(joined)) => {
                joined.push(',');
                joined.push_str(&text);
            }
            _ => {
                map.insert(key.to_string(), Value::String(text));
            }
        }
    }
    (!map.is_empty()).then_some(Value::Map(map))
}

/// Every value of header `name`, comma-joined. The request's few headers are compared
/// by name rather than parsing `name` into a header name for each of an input's members.
fn raw_header(headers: &[(&str, &[u8])], name: &str) -> Option<String> {
    let mut values = headers
        .iter()
        .filter(|(n, _)| n.eq_ignore_ascii_case(name))
        .map(|(_, v)| String::from_utf8_lossy(v));
    let mut joined = values.next()?.into_owned();
    for value in values {
        joined.push(',');
        joined.push_str(&value);
    }
    Some(joined)
}

/// A `querystring` member: a scalar, every value of a list, or (a map with no name of its
/// own) every parameter no other member binds.
fn query_member(
    model: &Model,
    member: &ShapeRef,
    shape: &Shape,
    wire: &str,
    query: &[(String, String)],
    bound: &[&str],
) -> AwsResult<Option<Value>> {
    match shape.kind {
        ShapeKind::Map => {
            let Some(val) = shape.value.as_deref() else {
                return Ok(None);
            };
            let val_shape = model.resolve(val);
            let mut map = BTreeMap::new();
            for (k, v) in query.iter().filter(|(k, _)| !bound.contains(&k.as_str())) {
                match (val_shape.kind, val_shape.member.as_deref()) {
                    (ShapeKind::List, Some(item)) => {
                        let entry = map
                            .entry(k.clone())
                            .or_insert_with(|| Value::List(Vec::new()));
                        if let Value::List(items) = entry {
                            items.push(read_scalar(model.resolve(item), item, v)?);
                        }
                    }
                    _ => {
                        map.insert(k.clone(), read_scalar(val_shape, val, v)?);
                    }
                }
            }
            Ok((!map.is_empty()).then_some(Value::Map(map)))
        }
        ShapeKind::List => {
            let Some(item) = shape.member.as_deref() else {
                return Ok(None);
            };
            let item_shape = model.resolve(item);
            let items = query
                .iter()
                .filter(|(k, _)| k == wire)
                .map(|(_, v)| read_scalar(item_shape, item, v))
                .collect::<AwsResult<Vec<_>>>()?;
            Ok((!items.is_empty()).then_some(Value::List(items)))
        }
        _ => match query.iter().find(|(k, _)| k == wire) {
            Some((_, v)) => read_scalar(shape, member, v)
                .map(Some)
                .map_err(|_| invalid_query_value(shape, wire, v)),
            None => Ok(None),
        },
    }
}

/// A query parameter whose value its member cannot hold: `InvalidArgument` naming the
/// parameter, in S3's words for integers (`?max-keys=abc`).
fn invalid_query_value(shape: &Shape, wire: &str, value: &str) -> AwsError {
    let message = match shape.kind {
        ShapeKind::Integer | ShapeKind::Long => {
            format!("Provided {wire} not an integer or within integer range")
        }
        _ => format!("Invalid value '{value}' for query parameter {wire}"),
    };
    AwsError::new("InvalidArgument", message)
        .with_status(400)
        .with_field("ArgumentName", wire)
        .with_field("ArgumentValue", value)
}

/// A `header` member: typed scalars, comma-separated lists, base64 JSON `jsonvalue`s.
fn header_value(model: &Model, member: &ShapeRef, shape: &Shape, text: &str) -> AwsResult<Value> {
    let invalid = || {
        AwsError::new("InvalidArgument", format!("Invalid header value '{text}'")).with_status(400)
    };
    if member.jsonvalue {
        let bytes = base64::engine::general_purpose::STANDARD
            .decode(text.trim())
            .map_err(|_| invalid())?;
        let json: serde_json::Value = serde_json::from_slice(&bytes).map_err(|_| invalid())?;
        return Ok(Value::from_json(&json));
    }
    match shape.kind {
        ShapeKind::List => {
            let Some(item) = shape.member.as_deref() else {
                return Err(invalid());
            };
            let item_shape = model.resolve(item);
            text.split(',')
                .map(str::trim)
                .filter(|s| !s.is_empty())
                .map(|s| read_scalar(item_shape, item, s))
                .collect::<AwsResult<Vec<_>>>()
                .map(Value::List)
        }
        ShapeKind::Timestamp => timestamp::parse(text)
            .map(Value::Timestamp)
            .ok_or_else(invalid),
        ShapeKind::String => Ok(Value::String(text.to_string())),
        _ => read_scalar(shape, member, text).map_err(|_| invalid()),
    }
}

/// The members carried in the body: the payload member, or (without one) the body members
/// of the input structure.
fn body_members(
    p: Protocol,
    model: &Model,
    input: &ShapeRef,
    shape: &Shape,
    body: &[u8],
) -> AwsResult<Value> {
    let mut out = Value::map();
    let blank = body.iter().all(u8::is_ascii_whitespace);
    if let Some(payload) = &shape.payload {
        let Some(member) = shape.members.get(payload) else {
            return Ok(out);
        };
        let member_shape = model.resolve(member);
        let value = match member_shape.kind {
            ShapeKind::Blob if body.is_empty() => None,
            ShapeKind::Blob => Some(Value::Blob(body.to_vec())),
            ShapeKind::String if body.is_empty() => None,
            ShapeKind::String => Some(Value::String(String::from_utf8_lossy(body).into_owned())),
            _ if blank => None,
            _ if p == Protocol::RestXml => {
                let el = xml::parse(body).map_err(|_| malformed_xml())?;
                let root = member.location_name.unwrap_or(member.shape);
                if el.name != root && el.name != member.shape {
                    return Err(malformed_xml());
                }
                Some(
                    xml::read_value(model, member, member_shape, &el)
                        .map_err(|_| malformed_xml())?,
                )
            }
            _ => {
                let json = parse_json(body)?;
                Some(json::decode_value(model, member, member_shape, &json, "")?)
            }
        };
        if let Some(v) = value {
            out.insert(*payload, v);
        }
        return Ok(out);
    }
    if blank {
        return Ok(out);
    }
    match p {
        Protocol::RestXml => {
            let el = xml::parse(body).map_err(|_| malformed_xml())?;
            xml::read_structure(model, shape, &el).map_err(|_| malformed_xml())
        }
        _ => json::decode_value(model, input, shape, &parse_json(body)?, ""),
    }
}

fn parse_json(body: &[u8]) -> AwsResult<serde_json::Value> {
    serde_json::from_slice(body).map_err(|e| {
        AwsError::new(
            "SerializationException",
            format!("Could not parse the request body as JSON: {e}"),
        )
        .with_status(400)
    })
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;
    use crate::protocol::rest::resolve;
    use http::{HeaderMap, HeaderValue, Method};

    fn decode_req(
        service: &str,
        method: Method,
        path: &str,
        query: &str,
        headers: &HeaderMap,
        body: &[u8],
    ) -> AwsResult<Value> {
        let m = model(service);
        let req = WireRequest {
            method: &method,
            path,
            query,
            headers,
            body,
        };
        let resolved = resolve(m, &req)?;
        decode(Protocol::of(m), m, &resolved, &req)
    }

    #[test]
    fn labels_headers_metadata_and_typed_headers_decode_into_the_input() {
        let mut h = HeaderMap::new();
        h.insert("content-type", HeaderValue::from_static("text/plain"));
        h.insert("content-length", HeaderValue::from_static("5"));
        h.insert("x-amz-meta-Color", HeaderValue::from_static("Blue"));
        h.insert("x-amz-meta-size", HeaderValue::from_static("L"));
        h.insert(
            "expires",
            HeaderValue::from_static("Wed, 02 Dec 2026 17:00:00 GMT"),
        );
        h.insert(
            "x-amz-bucket-object-lock-enabled",
            HeaderValue::from_static("true"),
        );
        let v = decode_req("s3", Method::PUT, "/b/dir/k%20x", "", &h, b"").unwrap();
        assert_eq!(v.str("Bucket"), Some("b"));
        assert_eq!(v.str("Key"), Some("dir/k x"));
        assert_eq!(v.str("ContentType"), Some("text/plain"));
        assert_eq!(v.int("ContentLength"), Some(5));
        assert_eq!(v.str("Expires"), Some("Wed, 02 Dec 2026 17:00:00 GMT"));
        let meta = v.get("Metadata").unwrap();
        assert_eq!(meta.str("color"), Some("Blue"));
        assert_eq!(meta.str("size"), Some("L"));
        let v = decode_req("s3", Method::PUT, "/b", "", &h, b"").unwrap();
        assert_eq!(v.bool("ObjectLockEnabledForBucket"), Some(true));
        h.insert(
            "if-modified-since",
            HeaderValue::from_static("Wed, 02 Dec 2026 17:00:00 GMT"),
        );
        let v = decode_req("s3", Method::GET, "/b/k", "", &h, b"").unwrap();
        assert_eq!(
            v.get("IfModifiedSince"),
            Some(&Value::Timestamp(1_796_230_800_000))
        );
    }

    #[test]
    fn bad_integer_headers_are_invalid_argument() {
        let mut h = HeaderMap::new();
        h.insert("content-length", HeaderValue::from_static("five"));
        let err = decode_req("s3", Method::PUT, "/b/k", "", &h, b"").unwrap_err();
        assert_eq!(err.code, "InvalidArgument");
    }

    #[test]
    fn query_members_decode_typed_and_unbound_ones_are_ignored() {
        let h = HeaderMap::new();
        let v = decode_req(
            "s3",
            Method::GET,
            "/b",
            "list-type=2&prefix=a%2Fb+c&max-keys=0&fetch-owner=true&encoding-type=url&other=x",
            &h,
            b"",
        )
        .unwrap();
        assert_eq!(v.str("Prefix"), Some("a/b c"));
        assert_eq!(v.int("MaxKeys"), Some(0));
        assert_eq!(v.bool("FetchOwner"), Some(true));
        assert_eq!(v.str("EncodingType"), Some("url"));
        let err =
            decode_req("s3", Method::GET, "/b", "list-type=2&max-keys=x", &h, b"").unwrap_err();
        assert_eq!(err.status, Some(400));
    }

    #[test]
    fn xml_payloads_decode_and_malformed_ones_are_malformed_xml() {
        let h = HeaderMap::new();
        let body = br#"<CreateBucketConfiguration xmlns="http://s3.amazonaws.com/doc/2006-03-01/"><LocationConstraint>eu-west-1</LocationConstraint></CreateBucketConfiguration>"#;
        let v = decode_req("s3", Method::PUT, "/b", "", &h, body).unwrap();
        assert_eq!(
            v.get("CreateBucketConfiguration")
                .and_then(|c| c.str("LocationConstraint")),
            Some("eu-west-1")
        );
        for bad in [&b"<CreateBucketConfiguration>"[..], b"not xml", b"<Other/>"] {
            let err = decode_req("s3", Method::PUT, "/b", "", &h, bad).unwrap_err();
            assert_eq!(err.code, "MalformedXML");
            assert_eq!(err.status, Some(400));
        }
        let v = decode_req("s3", Method::PUT, "/b", "", &h, b"").unwrap();
        assert!(v.get("CreateBucketConfiguration").is_none());
    }

    #[test]
    fn rest_json_bodies_blob_payloads_and_query_members_decode() {
        let h = HeaderMap::new();
        let body = br#"{"FunctionName":"f","Runtime":"python3.12","Role":"r","Code":{"ZipFile":"AAEC"},"Timeout":3}"#;
        let v = decode_req(
            "lambda",
            Method::POST,
            "/2015-03-31/functions",
            "",
            &h,
            body,
        )
        .unwrap();
        assert_eq!(v.str("FunctionName"), Some("f"));
        assert_eq!(v.int("Timeout"), Some(3));
        assert_eq!(
            v.get("Code").and_then(|c| c.get("ZipFile")),
            Some(&Value::Blob(vec![0, 1, 2]))
        );
        let mut h = HeaderMap::new();
        h.insert("x-amz-invocation-type", HeaderValue::from_static("Event"));
        let v = decode_req(
            "lambda",
            Method::POST,
            "/2015-03-31/functions/f/invocations",
            "Qualifier=%24LATEST",
            &h,
            br#"{"a":1}"#,
        )
        .unwrap();
        assert_eq!(v.str("FunctionName"), Some("f"));
        assert_eq!(v.str("Qualifier"), Some("$LATEST"));
        assert_eq!(v.str("InvocationType"), Some("Event"));
        assert_eq!(v.get("Payload"), Some(&Value::Blob(br#"{"a":1}"#.to_vec())));
        let err = decode_req(
            "lambda",
            Method::POST,
            "/2015-03-31/functions",
            "",
            &HeaderMap::new(),
            b"{",
        )
        .unwrap_err();
        assert_eq!(err.code, "SerializationException");
    }
}
