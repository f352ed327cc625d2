//! The AWS JSON protocols (`awsJson1_0`, `awsJson1_1`), and the shaped JSON that rest-json
//! bodies share with them.
//!
//! The operation is named by `X-Amz-Target: {targetPrefix}.{Operation}`; the body is the
//! input structure as JSON, blobs in base64 and timestamps in epoch seconds. Errors are
//! `{"__type": ..., "message": ...}`, and a service that once spoke the query protocol
//! (SQS, `awsQueryCompatible`) also gets `x-amzn-query-error: {code};{Sender|Receiver}`.

use std::borrow::Cow;
use std::collections::BTreeMap;

use base64::Engine;
use serde::de::{self, DeserializeSeed, Deserializer, MapAccess, SeqAccess, Visitor};
use serde::Deserialize;
use serde_json::{Map, Number, Value as Json};

use crate::error::{AwsError, AwsResult};
use crate::model::{Model, Operation, Shape, ShapeKind, ShapeRef};
use crate::protocol::xml::timestamp_format;
use crate::protocol::{error_status, query_error_code, Resolved, WireRequest, WireResponse};
use crate::timestamp::{self, TimestampFormat};
use crate::value::Value;

/// Resolves the operation from `X-Amz-Target`.
pub fn resolve<'m>(model: &'m Model, req: &WireRequest<'_>) -> AwsResult<Resolved<'m>> {
    let target = req.header("x-amz-target").unwrap_or_default();
    let name = match (target.split_once('.'), &model.metadata.target_prefix) {
        (Some((prefix, name)), Some(expected)) if prefix == expected => name,
        _ => "",
    };
    model
        .operation(name)
        .map(|operation| Resolved {
            operation,
            labels: Vec::new(),
        })
        .ok_or_else(|| AwsError::new("UnknownOperationException", "").with_status(400))
}

fn serialization(message: impl Into<String>) -> AwsError {
    AwsError::new("SerializationException", message).with_status(400)
}

/// Decodes a JSON body into the operation's input shape.
///
/// A well-formed body is read straight into the shaped value ([`Shaped`]), without a
/// generic JSON value between; any body that path refuses is decoded again through one
/// ([`decode_value`]), which finds the error to report (or, for an object that names a
/// member twice, reads it as that path always has).
pub fn decode(model: &Model, op: &Operation, body: &[u8]) -> AwsResult<Value> {
    let Some(input) = &op.input else {
        return Ok(Value::map());
    };
    if body.iter().all(u8::is_ascii_whitespace) {
        return Ok(Value::map());
    }
    let mut direct = serde_json::Deserializer::from_slice(body);
    let shaped = Shaped::new(model, input).deserialize(&mut direct);
    if let Ok(value) = shaped.and_then(|value| direct.end().map(|()| value)) {
        return Ok(value);
    }
    let json: Json = serde_json::from_slice(body).map_err(|e| {
        serialization(format!(
            "Start of structure or map found where not expected: {e}"
        ))
    })?;
    decode_value(model, input, model.resolve(input), &json, "")
}

/// Decodes a JSON value by its shape (rest-json payloads use this too).
pub fn decode_value(
    model: &Model,
    r: &ShapeRef,
    shape: &Shape,
    json: &Json,
    path: &str,
) -> AwsResult<Value> {
    let mismatch = |expected: &str| {
        serialization(format!(
            "Unexpected value type in payload at '${path}': expected {expected}"
        ))
    };
    if shape.document {
        return Ok(Value::from_json(json));
    }
    Ok(match (shape.kind, json) {
        (ShapeKind::Structure, Json::Object(obj)) => {
            let mut out = BTreeMap::new();
            for (name, member) in shape.members.iter() {
                let wire = member.json_name.or(member.location_name).unwrap_or(name);
                if member.location.is_some() {
                    continue;
                }
                match obj.get(wire) {
                    None | Some(Json::Null) => {}
                    Some(v) => {
                        let sub = format!("{path}.{wire}");
                        out.insert(
                            name.to_string(),
                            decode_value(model, member, model.resolve(member), v, &sub)?,
                        );
                    }
                }
            }
            Value::Map(out)
        }
        (ShapeKind::List, Json::Array(items)) => {
            let member = shape.member.as_deref().expect("list shape has a member");
            let member_shape = model.resolve(member);
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().enumerate() {
                if !item.is_null() {
                    out.push(decode_value(
                        model,
                        member,
                        member_shape,
                        item,
                        &format!("{path}[{i}]"),
                    )?);
                }
            }
            Value::List(out)
        }
        (ShapeKind::Map, Json::Object(obj)) => {
            let val = shape.value.as_deref().expect("map shape has a value");
            let val_shape = model.resolve(val);
            let mut out = BTreeMap::new();
            for (k, v) in obj {
                if !v.is_null() {
                    out.insert(
                        k.clone(),
                        decode_value(model, val, val_shape, v, &format!("{path}.{k}"))?,
                    );
                }
            }
            Value::Map(out)
        }
        (ShapeKind::String, Json::String(s)) => Value::String(s.clone()),
        (ShapeKind::Boolean, Json::Bool(b)) => Value::Bool(*b),
        (ShapeKind::Integer | ShapeKind::Long, Json::Number(n)) => match n.as_i64() {
            Some(i) => Value::Integer(i),
            None => return Err(mismatch("an integer")),
        },
        (ShapeKind::Float | ShapeKind::Double, Json::Number(n)) => {
            Value::Float(n.as_f64().ok_or_else(|| mismatch("a number"))?)
        }
        (ShapeKind::Float | ShapeKind::Double, Json::String(s))
            if matches!(s.as_str(), "NaN" | "Infinity" | "-Infinity") =>
        {
            Value::Float(s.parse().map_err(|_| mismatch("a number"))?)
        }
        (ShapeKind::Blob, Json::String(s)) => Value::Blob(
            base64::engine::general_purpose::STANDARD
                .decode(s)
                .map_err(|_| mismatch("base64-encoded bytes"))?,
        ),
        (ShapeKind::Timestamp, Json::Number(n)) => Value::Timestamp(
            n.as_f64()
                .and_then(timestamp::secs_to_millis)
                .ok_or_else(|| mismatch("a timestamp"))?,
        ),
        (ShapeKind::Timestamp, Json::String(s)) => {
            Value::Timestamp(timestamp::parse(s).ok_or_else(|| mismatch("a timestamp"))?)
        }
        (kind, _) => {
            let _ = r;
            return Err(mismatch(match kind {
                ShapeKind::Structure | ShapeKind::Map => "an object",
                ShapeKind::List => "an array",
                ShapeKind::String | ShapeKind::Blob => "a string",
                ShapeKind::Boolean => "a boolean",
                _ => "a number",
            }));
        }
    })
}

/// A shape to read a JSON value into, straight from the parser: a structure's members by
/// their wire names (others skipped, nulls left out), lists and maps member by member,
/// scalars by the shape's kind as [`decode_value`] reads them. Any mismatch is an error
/// without a message, which [`decode`] takes as its cue to decode again the slow way.
#[derive(Clone, Copy)]
struct Shaped<'m> {
    model: &'m Model,
    shape: &'m Shape,
}

impl<'m> Shaped<'m> {
    fn new(model: &'m Model, r: &'m ShapeRef) -> Shaped<'m> {
        Shaped {
            model,
            shape: model.resolve(r),
        }
    }

    /// The same shape, absent where the wire says `null`.
    fn or_null(self) -> OrNull<'m> {
        OrNull(self)
    }
}

fn refused<E: de::Error>() -> E {
    E::custom("")
}

impl<'de> DeserializeSeed<'de> for Shaped<'_> {
    type Value = Value;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Value, D::Error> {
        if self.shape.document {
            return Json::deserialize(deserializer).map(|json| Value::from_json(&json));
        }
        match self.shape.kind {
            ShapeKind::Structure | ShapeKind::Map => deserializer.deserialize_map(self),
            ShapeKind::List => deserializer.deserialize_seq(self),
            _ => deserializer.deserialize_any(self),
        }
    }
}

impl<'de> Visitor<'de> for Shaped<'_> {
    type Value = Value;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value of the shape")
    }

    fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<Value, A::Error> {
        let mut out = BTreeMap::new();
        while let Some(Key(key)) = map.next_key()? {
            let (name, seed) = match self.shape.kind {
                ShapeKind::Structure => match member_at(self.shape, &key) {
                    Some((name, member)) => (name.to_string(), Shaped::new(self.model, member)),
                    None => {
                        map.next_value::<de::IgnoredAny>()?;
                        continue;
                    }
                },
                ShapeKind::Map => {
                    let value = self
                        .shape
                        .value
                        .as_deref()
                        .ok_or_else(refused::<A::Error>)?;
                    (key.into_owned(), Shaped::new(self.model, value))
                }
                _ => return Err(refused()),
            };
            match map.next_value_seed(seed.or_null())? {
                Some(value) => out.insert(name, value),
                None => out.remove(&name),
            };
        }
        Ok(Value::Map(out))
    }

    fn visit_seq<A: SeqAccess<'de>>(self, mut seq: A) -> Result<Value, A::Error> {
        let member = match (self.shape.kind, self.shape.member.as_deref()) {
            (ShapeKind::List, Some(member)) => Shaped::new(self.model, member),
            _ => return Err(refused()),
        };
        let mut out = Vec::with_capacity(seq.size_hint().unwrap_or(0));
        while let Some(item) = seq.next_element_seed(member.or_null())? {
            out.extend(item);
        }
        Ok(Value::List(out))
    }

    fn visit_str<E: de::Error>(self, s: &str) -> Result<Value, E> {
        Ok(match self.shape.kind {
            ShapeKind::String => Value::String(s.to_string()),
            ShapeKind::Float | ShapeKind::Double
                if matches!(s, "NaN" | "Infinity" | "-Infinity") =>
            {
                Value::Float(s.parse().map_err(|_| refused::<E>())?)
            }
            ShapeKind::Blob => Value::Blob(
                base64::engine::general_purpose::STANDARD
                    .decode(s)
                    .map_err(|_| refused::<E>())?,
            ),
            ShapeKind::Timestamp => Value::Timestamp(timestamp::parse(s).ok_or_else(refused)?),
            _ => return Err(refused()),
        })
    }

    fn visit_bool<E: de::Error>(self, b: bool) -> Result<Value, E> {
        match self.shape.kind {
            ShapeKind::Boolean => Ok(Value::Bool(b)),
            _ => Err(refused()),
        }
    }

    fn visit_i64<E: de::Error>(self, i: i64) -> Result<Value, E> {
        match self.shape.kind {
            ShapeKind::Integer | ShapeKind::Long => Ok(Value::Integer(i)),
            _ => self.visit_f64(i as f64),
        }
    }

    fn visit_u64<E: de::Error>(self, u: u64) -> Result<Value, E> {
        match (self.shape.kind, i64::try_from(u)) {
            (ShapeKind::Integer | ShapeKind::Long, Ok(i)) => Ok(Value::Integer(i)),
            (ShapeKind::Integer | ShapeKind::Long, Err(_)) => Err(refused()),
            _ => self.visit_f64(u as f64),
        }
    }

    fn visit_f64<E: de::Error>(self, f: f64) -> Result<Value, E> {
        match self.shape.kind {
            ShapeKind::Float | ShapeKind::Double => Ok(Value::Float(f)),
            ShapeKind::Timestamp => Ok(Value::Timestamp(
                timestamp::secs_to_millis(f).ok_or_else(refused)?,
            )),
            _ => Err(refused()),
        }
    }
}

/// The member of `shape` whose wire name is `key` (a header- or URI-bound member never is):
/// its name and reference.
fn member_at<'s>(shape: &'s Shape, key: &str) -> Option<(&'s str, &'s ShapeRef)> {
    shape.members.iter().find(|(name, member)| {
        let wire = member.json_name.or(member.location_name).unwrap_or(name);
        wire == key && member.location.is_none()
    })
}

/// An object's key, borrowed from the body unless it had escapes.
struct Key<'de>(Cow<'de, str>);

impl<'de> Deserialize<'de> for Key<'de> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Key<'de>, D::Error> {
        struct Keys;
        impl<'de> Visitor<'de> for Keys {
            type Value = Key<'de>;
            fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
                f.write_str("a key")
            }
            fn visit_borrowed_str<E: de::Error>(self, key: &'de str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Borrowed(key)))
            }
            fn visit_str<E: de::Error>(self, key: &str) -> Result<Key<'de>, E> {
                Ok(Key(Cow::Owned(key.to_string())))
            }
        }
        deserializer.deserialize_str(Keys)
    }
}

/// A [`Shaped`] value, or `None` for a JSON `null`.
struct OrNull<'m>(Shaped<'m>);

impl<'de> DeserializeSeed<'de> for OrNull<'_> {
    type Value = Option<Value>;

    fn deserialize<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<Value>, D::Error> {
        deserializer.deserialize_option(self)
    }
}

impl<'de> Visitor<'de> for OrNull<'_> {
    type Value = Option<Value>;

    fn expecting(&self, f: &mut std::fmt::Formatter<'_>) -> std::fmt::Result {
        f.write_str("a value of the shape, or null")
    }

    fn visit_none<E: de::Error>(self) -> Result<Option<Value>, E> {
        Ok(None)
    }

    fn visit_some<D: Deserializer<'de>>(self, deserializer: D) -> Result<Option<Value>, D::Error> {
        self.0.deserialize(deserializer).map(Some)
    }
}

/// Encodes a value by its shape as JSON (rest-json payloads use this too).
pub fn encode_value(model: &Model, r: &ShapeRef, shape: &Shape, value: &Value) -> Json {
    if shape.document {
        return value_to_json(value);
    }
    match (shape.kind, value) {
        (ShapeKind::Structure, Value::Map(m)) => {
            let mut obj = Map::new();
            for (name, member) in shape.members.iter() {
                if member.location.is_some() {
                    continue;
                }
                if let Some(v) = m.get(name) {
                    let wire = member.json_name.or(member.location_name).unwrap_or(name);
                    obj.insert(
                        wire.to_string(),
                        encode_value(model, member, model.resolve(member), v),
                    );
                }
            }
            Json::Object(obj)
        }
        (ShapeKind::List, Value::List(items)) => {
            let member = shape.member.as_deref().expect("list shape has a member");
            let member_shape = model.resolve(member);
            Json::Array(
                items
                    .iter()
                    .map(|i| encode_value(model, member, member_shape, i))
                    .collect(),
            )
        }
        (ShapeKind::Map, Value::Map(m)) => {
            let val = shape.value.as_deref().expect("map shape has a value");
            let val_shape = model.resolve(val);
            Json::Object(
                m.iter()
                    .map(|(k, v)| (k.clone(), encode_value(model, val, val_shape, v)))
                    .collect(),
            )
        }
        (_, Value::Timestamp(t)) => match timestamp_format(shape, r, TimestampFormat::Epoch) {
            TimestampFormat::Epoch => float(timestamp::epoch_seconds(*t)),
            other => Json::String(timestamp::format(*t, other)),
        },
        (_, v) => value_to_json(v),
    }
}

fn float(f: f64) -> Json {
    if f.is_finite() {
        Number::from_f64(f).map_or(Json::Null, Json::Number)
    } else if f.is_nan() {
        Json::String("NaN".into())
    } else if f > 0.0 {
        Json::String("Infinity".into())
    } else {
        Json::String("-Infinity".into())
    }
}

/// A shaped value as plain JSON (blobs base64, timestamps epoch seconds), as services keep
/// documents in their tables.
pub fn value_to_json(value: &Value) -> Json {
    match value {
        Value::Bool(b) => Json::Bool(*b),
        Value::Integer(i) => Json::Number((*i).into()),
        Value::Float(f) => float(*f),
        Value::String(s) => Json::String(s.clone()),
        Value::Blob(b) => Json::String(base64::engine::general_purpose::STANDARD.encode(b)),
        Value::Timestamp(t) => float(timestamp::epoch_seconds(*t)),
        Value::List(l) => Json::Array(l.iter().map(value_to_json).collect()),
        Value::Map(m) => Json::Object(
            m.iter()
                .map(|(k, v)| (k.clone(), value_to_json(v)))
                .collect(),
        ),
        Value::Null => Json::Null,
    }
}

fn content_type(model: &Model) -> &'static str {
    match model.metadata.json_version.as_deref() {
        Some("1.1") => "application/x-amz-json-1.1",
        _ => "application/x-amz-json-1.0",
    }
}

/// Encodes an operation's output as the JSON body.
pub fn encode(model: &Model, op: &Operation, output: &Value, request_id: &str) -> WireResponse {
    let json = match &op.output {
        Some(r) => encode_value(model, r, model.resolve(r), output),
        None => Json::Object(Map::new()),
    };
    let mut resp = WireResponse::new(
        200,
        content_type(model),
        serde_json::to_vec(&json).unwrap_or_default(),
    );
    resp.header("x-amzn-RequestId", request_id);
    resp
}

/// The error body members shared by the json and rest-json protocols.
pub fn error_body(model: &Model, error: &AwsError, type_name: Option<String>) -> Vec<u8> {
    let mut obj = Map::new();
    if let Some(t) = type_name {
        obj.insert("__type".into(), Json::String(t));
    }
    obj.insert("message".into(), Json::String(error.message.clone()));
    if let Value::Map(fields) = &error.fields {
        let shape = model.error_shape(&error.code);
        for (k, v) in fields {
            let encoded = match shape.and_then(|s| s.members.get(k)) {
                Some(member) => encode_value(model, member, model.resolve(member), v),
                None => value_to_json(v),
            };
            obj.insert(k.clone(), encoded);
        }
    }
    serde_json::to_vec(&Json::Object(obj)).unwrap_or_default()
}

/// Encodes an error as `{"__type", "message"}` (with `x-amzn-query-error` where the service
/// is query-compatible).
pub fn encode_error(model: &Model, error: &AwsError, request_id: &str) -> WireResponse {
    let namespace = format!("com.amazonaws.{}", model.metadata.endpoint_prefix);
    let type_name = format!("{namespace}#{}", error.code);
    let body = error_body(model, error, Some(type_name));
    let mut resp = WireResponse::new(error_status(model, error), content_type(model), body);
    resp.header("x-amzn-RequestId", request_id);
    let query_code = query_error_code(model, error);
    if error.query_code.is_some() || query_code != error.code {
        let fault = if error.sender_fault {
            "Sender"
        } else {
            "Receiver"
        };
        resp.header("x-amzn-query-error", &format!("{query_code};{fault}"));
    }
    resp
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;
    use http::{HeaderMap, HeaderValue, Method};

    fn target(headers: &mut HeaderMap, t: &'static str) {
        headers.insert("x-amz-target", HeaderValue::from_static(t));
    }

    fn req<'a>(headers: &'a HeaderMap, body: &'a [u8]) -> WireRequest<'a> {
        WireRequest {
            method: &Method::POST,
            path: "/",
            query: "",
            headers,
            body,
        }
    }

    #[test]
    fn resolves_target_and_rejects_unknown_operations() {
        let m = model("dynamodb");
        let mut h = HeaderMap::new();
        target(&mut h, "DynamoDB_20120810.PutItem");
        assert_eq!(
            resolve(m, &req(&h, b"{}")).unwrap().operation.name,
            "PutItem"
        );
        target(&mut h, "DynamoDB_20120810.Nope");
        assert_eq!(
            resolve(m, &req(&h, b"{}")).unwrap_err().code,
            "UnknownOperationException"
        );
        target(&mut h, "Other.PutItem");
        assert_eq!(
            resolve(m, &req(&h, b"{}")).unwrap_err().code,
            "UnknownOperationException"
        );
    }

    #[test]
    fn attribute_values_round_trip_exactly() {
        let m = model("dynamodb");
        let op = m.operation("PutItem").unwrap();
        let body = br#"{"TableName":"t","Item":{"pk":{"S":"a"},"n":{"N":"123456789012345678901234567890.5"},"b":{"B":"AAEC"},"l":{"L":[{"BOOL":true},{"NULL":true}]},"m":{"M":{"ss":{"SS":["x","y"]}}}}}"#;
        let v = decode(m, op, body).unwrap();
        let item = v.get("Item").unwrap();
        assert_eq!(
            item.get("b").unwrap().get("B"),
            Some(&Value::Blob(vec![0, 1, 2]))
        );
        let out_op = m.operation("GetItem").unwrap();
        let resp = encode(m, out_op, &Value::map().with("Item", item.clone()), "r");
        let json: Json = serde_json::from_slice(&resp.body).unwrap();
        let original: Json = serde_json::from_slice(body).unwrap();
        assert_eq!(json["Item"], original["Item"]);
    }

    #[test]
    fn the_direct_reading_matches_the_reading_through_a_json_value() {
        let cases: [(&str, &str, &[u8]); 6] = [
            ("dynamodb", "PutItem", br#"{"TableName":"t","Item":{"a\u0062":{"S":"x"},"n":{"N":"1"},"z":{"NULL":true},"m":{"M":{"l":{"L":[{"B":"AAE="},null]}}}},"Unknown":[1,{"a":null}],"Expected":null,"ReturnValues":"ALL_OLD"}"#),
            ("dynamodb", "PutItem", br#"{"TableName":"a","TableName":null,"Item":{"k":{"S":"1"},"k":{"N":"2"}}}"#),
            ("dynamodb", "Scan", br#" {"TableName":"t","Limit":5,"Segment":0,"TotalSegments":1e0} "#),
            ("dynamodb", "RestoreTableToPointInTime", br#"{"TargetTableName":"t","RestoreDateTime":1500000000.25}"#),
            ("dynamodb", "RestoreTableToPointInTime", br#"{"TargetTableName":"t","RestoreDateTime":"2020-01-01T00:00:00Z"}"#),
            ("kms", "Encrypt", br#"{"KeyId":"k","Plaintext":"aGk=","EncryptionContext":{"a":"b","c":null}}"#),
        ];
        for (service, operation, body) in cases {
            let m = model(service);
            let input = m.operation(operation).unwrap().input.as_ref().unwrap();
            let json: Json = serde_json::from_slice(body).unwrap();
            let through_json = decode_value(m, input, m.resolve(input), &json, "");
            let mut direct = serde_json::Deserializer::from_slice(body);
            let direct = Shaped::new(m, input)
                .deserialize(&mut direct)
                .map_err(|_| ());
            match through_json {
                Ok(value) => assert_eq!(direct, Ok(value.clone()), "{operation}"),
                Err(_) => assert!(direct.is_err(), "{operation}"),
            }
            let decoded = decode(m, m.operation(operation).unwrap(), body);
            assert_eq!(
                decoded.map_err(|e| e.message),
                decode_value(m, input, m.resolve(input), &json, "").map_err(|e| e.message)
            );
        }
    }

    #[test]
    fn malformed_and_mistyped_bodies_are_serialization_errors() {
        let m = model("dynamodb");
        let op = m.operation("DescribeTable").unwrap();
        assert_eq!(
            decode(m, op, b"{").unwrap_err().code,
            "SerializationException"
        );
        let err = decode(m, op, br#"{"TableName": 5}"#).unwrap_err();
        assert_eq!(err.code, "SerializationException");
        assert!(err.message.contains("$.TableName"), "{}", err.message);
    }

    #[test]
    fn bodies_nested_past_serde_jsons_limit_are_serialization_errors() {
        // serde_json refuses nesting past 128 levels, which bounds every walk over the value
        // the codec decodes (recursive shapes such as DynamoDB's AttributeValue included).
        let m = model("dynamodb");
        let op = m.operation("PutItem").unwrap();
        let nested = |k: usize| {
            format!(
                r#"{{"TableName":"t","Item":{{"a":{}{{"S":"x"}}{}}}}}"#,
                r#"{"L":["#.repeat(k),
                "]}".repeat(k)
            )
        };
        assert!(decode(m, op, nested(60).as_bytes()).is_ok());
        let err = decode(m, op, nested(50_000).as_bytes()).unwrap_err();
        assert_eq!(err.code, "SerializationException");
    }

    #[test]
    fn query_compatible_errors_carry_the_query_header() {
        let m = model("sqs");
        let err = AwsError::new("QueueDoesNotExist", "gone")
            .with_query_code("AWS.SimpleQueueService.NonExistentQueue");
        let resp = encode_error(m, &err, "r");
        assert_eq!(
            resp.headers.get("x-amzn-query-error").unwrap(),
            "AWS.SimpleQueueService.NonExistentQueue;Sender"
        );
        let json: Json = serde_json::from_slice(&resp.body).unwrap();
        assert_eq!(json["__type"], "com.amazonaws.sqs#QueueDoesNotExist");
    }

    #[test]
    fn timestamps_are_epoch_seconds() {
        let m = model("dynamodb");
        let op = m.operation("DescribeTable").unwrap();
        let out = Value::map().with(
            "Table",
            Value::map().with("CreationDateTime", Value::Timestamp(1_500)),
        );
        let resp = encode(m, op, &out, "r");
        let json: Json = serde_json::from_slice(&resp.body).unwrap();
        assert_eq!(json["Table"]["CreationDateTime"], 1.5);
    }
}
