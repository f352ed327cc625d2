//! CBOR (RFC 8949) bodies for shaped values, for the two CBOR protocols: what the Java SDK
//! and the Kinesis Client Library send to Kinesis (`application/x-amz-cbor-1.1`, the json
//! protocol's routing with CBOR bodies), and smithy's rpc-v2-cbor (`POST
//! /service/<target prefix>/operation/<name>` with `smithy-protocol: rpc-v2-cbor`, what
//! current SDKs send to services whose model lists it first, such as CloudWatch).
//!
//! [`parse`] reads a body into [`Cbor`] items (definite and indefinite lengths, half,
//! single and double floats, tags), with a bounded nesting depth and no allocation larger
//! than the input justifies; [`decode_value`] then shapes an item by the model as the json
//! codec shapes JSON, and [`encode_value`] writes a shaped value. Blobs are byte strings;
//! timestamps are tag 1 over epoch seconds (rpc-v2-cbor) or epoch milliseconds (what the
//! AWS SDKs' `x-amz-cbor-1.1` writes), as the [`Dialect`] says. Written by hand rather
//! than over a CBOR crate: the shaped mapping needs the raw items (byte versus text
//! strings, tags) that a serde data model hides, and the reader is a few hundred lines.

use std::collections::BTreeMap;

use super::WireResponse;
use crate::model::{Model, Operation, Shape, ShapeKind, ShapeRef};
use crate::protocol::{error_status, query_error_code};
use crate::{timestamp, AwsError, AwsResult, Value};

/// The media type of the AWS SDKs' CBOR bodies for json-protocol services.
pub const CONTENT_TYPE: &str = "application/x-amz-cbor-1.1";
/// The media type of rpc-v2-cbor bodies.
pub const RPC_V2_CONTENT_TYPE: &str = "application/cbor";
/// The header, and its value, that names the rpc-v2-cbor protocol on requests and responses.
pub const RPC_V2_HEADER: (&str, &str) = ("smithy-protocol", "rpc-v2-cbor");
/// The deepest nesting of arrays, maps and tags a body may have.
pub const MAX_DEPTH: usize = 64;
/// The CBOR tag of an epoch-based date/time.
const EPOCH_TAG: u64 = 1;

/// Which CBOR protocol: it decides how timestamps are written under tag 1, the media type
/// and the protocol header.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Dialect {
    /// The AWS SDKs' `x-amz-cbor-1.1`: epoch milliseconds as an integer.
    Millis,
    /// Smithy's rpc-v2-cbor: epoch seconds, fractional when needed.
    Seconds,
}

impl Dialect {
    /// A response with this dialect's media type (and protocol header).
    fn response(self, status: u16, body: Vec<u8>, request_id: &str) -> WireResponse {
        let mut resp = match self {
            Dialect::Millis => WireResponse::new(status, CONTENT_TYPE, body),
            Dialect::Seconds => {
                let mut resp = WireResponse::new(status, RPC_V2_CONTENT_TYPE, body);
                resp.header(RPC_V2_HEADER.0, RPC_V2_HEADER.1);
                resp
            }
        };
        resp.header("x-amzn-RequestId", request_id);
        resp
    }
}

/// The operation an rpc-v2-cbor request names in its path
/// (`[prefix]/service/<target prefix>/operation/<name>`).
pub fn rpc_v2_operation<'m>(model: &'m Model, path: &str) -> AwsResult<&'m Operation> {
    let unknown = || AwsError::new("UnknownOperationException", "").with_status(404);
    let (before, name) = path.rsplit_once("/operation/").ok_or_else(unknown)?;
    let (_, service) = before.rsplit_once("/service/").ok_or_else(unknown)?;
    if model.metadata.target_prefix.as_deref() != Some(service) {
        return Err(unknown());
    }
    model.operation(name).ok_or_else(unknown)
}

/// One CBOR data item.
#[derive(Debug, Clone, PartialEq)]
pub enum Cbor {
    /// An unsigned or negative integer.
    Int(i128),
    /// A byte string.
    Bytes(Vec<u8>),
    /// A text string.
    Text(String),
    /// An array.
    Array(Vec<Cbor>),
    /// A map, in the order written.
    Map(Vec<(Cbor, Cbor)>),
    /// A tagged item.
    Tag(u64, Box<Cbor>),
    /// `true` or `false`.
    Bool(bool),
    /// `null` or `undefined`.
    Null,
    /// A half, single or double float.
    Float(f64),
}

/// Why a body is not CBOR.
fn malformed(what: &str) -> AwsError {
    AwsError::new("SerializationException", format!("Malformed CBOR: {what}")).with_status(400)
}

/// A reader over a body.
struct Reader<'a> {
    bytes: &'a [u8],
    pos: usize,
}

/// What an initial byte announces: the major type and its argument (`None` for an
/// indefinite length).
struct Head {
    major: u8,
    arg: Option<u64>,
    info: u8,
}

impl<'a> Reader<'a> {
    fn take(&mut self, n: usize) -> AwsResult<&'a [u8]> {
        let end = self
            .pos
            .checked_add(n)
            .filter(|e| *e <= self.bytes.len())
            .ok_or_else(|| malformed("unexpected end of input"))?;
        let out = &self.bytes[self.pos..end];
        self.pos = end;
        Ok(out)
    }

    fn peek(&self) -> Option<u8> {
        self.bytes.get(self.pos).copied()
    }

    fn head(&mut self) -> AwsResult<Head> {
        let first = self.take(1)?[0];
        let (major, info) = (first >> 5, first & 0x1f);
        let arg = match info {
            0..=23 => Some(u64::from(info)),
            24..=27 => {
                let n = 1usize << (info - 24);
                let mut v = 0u64;
                for b in self.take(n)? {
                    v = (v << 8) | u64::from(*b);
                }
                Some(v)
            }
            31 if matches!(major, 2..=5 | 7) => None,
            _ => return Err(malformed("reserved additional information")),
        };
        Ok(Head { major, arg, info })
    }

    /// A definite length, no larger than what remains of the input.
    fn length(&self, arg: u64) -> AwsResult<usize> {
        usize::try_from(arg)
            .ok()
            .filter(|n| *n <= self.bytes.len() - self.pos)
            .ok_or_else(|| malformed("length past the end of input"))
    }

    /// Whether the next byte is the break of an indefinite item (consumed if so).
    fn at_break(&mut self) -> AwsResult<bool> {
        match self.peek() {
            Some(0xff) => {
                self.pos += 1;
                Ok(true)
            }
            Some(_) => Ok(false),
            None => Err(malformed("unexpected end of input")),
        }
    }

    /// A byte or text string's bytes, joining an indefinite string's chunks.
    fn string(&mut self, major: u8, arg: Option<u64>) -> AwsResult<Vec<u8>> {
        if let Some(n) = arg {
            let n = self.length(n)?;
            return Ok(self.take(n)?.to_vec());
        }
        let mut out = Vec::new();
        while !self.at_break()? {
            let chunk = self.head()?;
            match (chunk.major == major, chunk.arg) {
                (true, Some(n)) => {
                    let n = self.length(n)?;
                    out.extend_from_slice(self.take(n)?);
                }
                _ => return Err(malformed("bad chunk in an indefinite string")),
            }
        }
        Ok(out)
    }

    fn item(&mut self, depth: usize) -> AwsResult<Cbor> {
        let head = self.head()?;
        let nested = || {
            (depth < MAX_DEPTH)
                .then_some(depth + 1)
                .ok_or_else(|| malformed("nested too deeply"))
        };
        Ok(match (head.major, head.arg) {
            (0, Some(v)) => Cbor::Int(i128::from(v)),
            (1, Some(v)) => Cbor::Int(-1 - i128::from(v)),
            (2, arg) => Cbor::Bytes(self.string(2, arg)?),
            (3, arg) => Cbor::Text(
                String::from_utf8(self.string(3, arg)?)
                    .map_err(|_| malformed("text string is not UTF-8"))?,
            ),
            (4, arg) => Cbor::Array(self.items(arg, nested()?)?),
            (5, arg) => self.map(arg, nested()?)?,
            (6, Some(tag)) => Cbor::Tag(tag, Box::new(self.item(nested()?)?)),
            (7, _) => simple(head.info, head.arg)?,
            _ => return Err(malformed("bad initial byte")),
        })
    }

    fn items(&mut self, arg: Option<u64>, depth: usize) -> AwsResult<Vec<Cbor>> {
        let mut out = Vec::new();
        match arg {
            Some(n) => {
                for _ in 0..self.length(n)? {
                    out.push(self.item(depth)?);
                }
            }
            None => {
                while !self.at_break()? {
                    out.push(self.item(depth)?);
                }
            }
        }
        Ok(out)
    }

    fn map(&mut self, arg: Option<u64>, depth: usize) -> AwsResult<Cbor> {
        let mut out = Vec::new();
        let mut pair = |r: &mut Reader<'a>| -> AwsResult<()> {
            let key = r.item(depth)?;
            out.push((key, r.item(depth)?));
            Ok(())
        };
        match arg {
            Some(n) => {
                for _ in 0..self.length(n)? {
                    pair(self)?;
                }
            }
            None => {
                while !self.at_break()? {
                    pair(self)?;
                }
            }
        }
        Ok(Cbor::Map(out))
    }
}

/// A major type 7 item: simple values and floats.
fn simple(info: u8, arg: Option<u64>) -> AwsResult<Cbor> {
    let bits = arg.ok_or_else(|| malformed("unexpected break"))?;
    Ok(match info {
        20 => Cbor::Bool(false),
        21 => Cbor::Bool(true),
        22 | 23 => Cbor::Null,
        25 => Cbor::Float(half(bits as u16)),
        26 => Cbor::Float(f64::from(f32::from_bits(bits as u32))),
        27 => Cbor::Float(f64::from_bits(bits)),
        _ => return Err(malformed("unsupported simple value")),
    })
}

/// An IEEE 754 half-precision float.
fn half(bits: u16) -> f64 {
    let sign = if bits & 0x8000 != 0 { -1.0 } else { 1.0 };
    let exp = i32::from((bits >> 10) & 0x1f);
    let mant = f64::from(bits & 0x3ff);
    sign * match exp {
        0 => mant * 2f64.powi(-24),
        31 if mant == 0.0 => f64::INFINITY,
        31 => f64::NAN,
        _ => (1.0 + mant / 1024.0) * 2f64.powi(exp - 15),
    }
}

/// Reads one whole body as a CBOR item.
pub fn parse(bytes: &[u8]) -> AwsResult<Cbor> {
    let mut reader = Reader { bytes, pos: 0 };
    let item = reader.item(0)?;
    if reader.pos != bytes.len() {
        return Err(malformed("trailing bytes after the item"));
    }
    Ok(item)
}

/// Decodes a CBOR body into the operation's input shape.
pub fn decode(model: &Model, op: &Operation, body: &[u8], dialect: Dialect) -> AwsResult<Value> {
    let Some(input) = &op.input else {
        return Ok(Value::map());
    };
    if body.is_empty() {
        return Ok(Value::map());
    }
    decode_value(model, model.resolve(input), &parse(body)?, "", dialect)
}

/// The member of a structure a CBOR map names.
fn text_key(key: &Cbor) -> Option<&str> {
    match key {
        Cbor::Text(t) => Some(t),
        _ => None,
    }
}

/// Shapes a CBOR item by `shape`.
pub fn decode_value(
    model: &Model,
    shape: &Shape,
    item: &Cbor,
    path: &str,
    dialect: Dialect,
) -> AwsResult<Value> {
    let mismatch = |expected: &str| {
        AwsError::new(
            "SerializationException",
            format!("Unexpected value type in payload at '${path}': expected {expected}"),
        )
        .with_status(400)
    };
    if shape.document {
        return Ok(plain(item));
    }
    Ok(match (shape.kind, item) {
        (ShapeKind::Structure, Cbor::Map(pairs)) => {
            let mut out = BTreeMap::new();
            for (key, value) in pairs {
                let Some(key) = text_key(key) else { continue };
                let found = shape.members.iter().find(|(name, member)| {
                    member.location.is_none() && wire_name(name, member) == key
                });
                if let (Some((name, member)), false) = (found, *value == Cbor::Null) {
                    let sub = format!("{path}.{key}");
                    let shaped = decode_value(model, model.resolve(member), value, &sub, dialect)?;
                    out.insert(name.to_string(), shaped);
                }
            }
            Value::Map(out)
        }
        (ShapeKind::List, Cbor::Array(items)) => {
            let member = shape.member.as_deref().ok_or_else(|| mismatch("a list"))?;
            let member_shape = model.resolve(member);
            let mut out = Vec::with_capacity(items.len());
            for (i, item) in items.iter().filter(|i| **i != Cbor::Null).enumerate() {
                let sub = format!("{path}[{i}]");
                out.push(decode_value(model, member_shape, item, &sub, dialect)?);
            }
            Value::List(out)
        }
        (ShapeKind::Map, Cbor::Map(pairs)) => {
            let val = shape.value.as_deref().ok_or_else(|| mismatch("a map"))?;
            let val_shape = model.resolve(val);
            let mut out = BTreeMap::new();
            for (key, value) in pairs.iter().filter(|(_, v)| *v != Cbor::Null) {
                let key = text_key(key).ok_or_else(|| mismatch("text map keys"))?;
                let sub = format!("{path}.{key}");
                out.insert(
                    key.to_string(),
                    decode_value(model, val_shape, value, &sub, dialect)?,
                );
            }
            Value::Map(out)
        }
        (ShapeKind::String, Cbor::Text(s)) => Value::String(s.clone()),
        (ShapeKind::Boolean, Cbor::Bool(b)) => Value::Bool(*b),
        (ShapeKind::Integer | ShapeKind::Long, Cbor::Int(i)) => {
            Value::Integer(i64::try_from(*i).map_err(|_| mismatch("an integer"))?)
        }
        (ShapeKind::Float | ShapeKind::Double, Cbor::Float(f)) => Value::Float(*f),
        (ShapeKind::Float | ShapeKind::Double, Cbor::Int(i)) => Value::Float(*i as f64),
        (ShapeKind::Blob, Cbor::Bytes(b)) => Value::Blob(b.clone()),
        (ShapeKind::Timestamp, Cbor::Tag(EPOCH_TAG, inner)) => {
            Value::Timestamp(epoch(inner, dialect).ok_or_else(|| mismatch("a timestamp"))?)
        }
        (ShapeKind::Timestamp, number @ (Cbor::Int(_) | Cbor::Float(_))) => {
            Value::Timestamp(epoch(number, dialect).ok_or_else(|| mismatch("a timestamp"))?)
        }
        (kind, _) => {
            return Err(mismatch(match kind {
                ShapeKind::Structure | ShapeKind::Map => "a map",
                ShapeKind::List => "an array",
                ShapeKind::String => "a text string",
                ShapeKind::Blob => "a byte string",
                ShapeKind::Boolean => "a boolean",
                ShapeKind::Timestamp => "a timestamp",
                _ => "a number",
            }))
        }
    })
}

/// Epoch milliseconds of a tag-1 number in `dialect`.
fn epoch(item: &Cbor, dialect: Dialect) -> Option<i64> {
    let number = match item {
        Cbor::Int(i) => *i as f64,
        Cbor::Float(f) => *f,
        _ => return None,
    };
    match dialect {
        Dialect::Millis => Some(number).filter(|n| n.is_finite()).map(|n| n as i64),
        Dialect::Seconds => timestamp::secs_to_millis(number),
    }
}

/// An item as a plain value (documents): byte strings as blobs, tags as what they tag.
fn plain(item: &Cbor) -> Value {
    match item {
        Cbor::Int(i) => i64::try_from(*i).map_or(Value::Float(*i as f64), Value::Integer),
        Cbor::Bytes(b) => Value::Blob(b.clone()),
        Cbor::Text(t) => Value::String(t.clone()),
        Cbor::Array(items) => Value::List(items.iter().map(plain).collect()),
        Cbor::Map(pairs) => Value::Map(
            pairs
                .iter()
                .filter_map(|(k, v)| text_key(k).map(|k| (k.to_string(), plain(v))))
                .collect(),
        ),
        Cbor::Tag(_, inner) => plain(inner),
        Cbor::Bool(b) => Value::Bool(*b),
        Cbor::Null => Value::Null,
        Cbor::Float(f) => Value::Float(*f),
    }
}

/// A member's name on the wire.
fn wire_name<'a>(name: &'a str, member: &'a ShapeRef) -> &'a str {
    member.json_name.or(member.location_name).unwrap_or(name)
}

/// Writes an initial byte with its argument, in the shortest form.
fn head(out: &mut Vec<u8>, major: u8, arg: u64) {
    let major = major << 5;
    match arg {
        0..=23 => out.push(major | arg as u8),
        24..=0xff => out.extend_from_slice(&[major | 24, arg as u8]),
        0x100..=0xffff => {
            out.push(major | 25);
            out.extend_from_slice(&(arg as u16).to_be_bytes());
        }
        0x1_0000..=0xffff_ffff => {
            out.push(major | 26);
            out.extend_from_slice(&(arg as u32).to_be_bytes());
        }
        _ => {
            out.push(major | 27);
            out.extend_from_slice(&arg.to_be_bytes());
        }
    }
}

fn int(out: &mut Vec<u8>, i: i64) {
    match u64::try_from(i) {
        Ok(u) => head(out, 0, u),
        Err(_) => head(out, 1, (-1 - i) as u64),
    }
}

fn text(out: &mut Vec<u8>, s: &str) {
    head(out, 3, s.len() as u64);
    out.extend_from_slice(s.as_bytes());
}

fn float(out: &mut Vec<u8>, f: f64) {
    out.push(0xfb);
    out.extend_from_slice(&f.to_bits().to_be_bytes());
}

fn timestamp_item(out: &mut Vec<u8>, millis: i64, dialect: Dialect) {
    head(out, 6, EPOCH_TAG);
    match dialect {
        Dialect::Millis => int(out, millis),
        Dialect::Seconds if millis % 1000 == 0 => int(out, millis / 1000),
        Dialect::Seconds => float(out, timestamp::epoch_seconds(millis)),
    }
}

/// Writes a value by its shape.
pub fn encode_value(
    model: &Model,
    shape: &Shape,
    value: &Value,
    dialect: Dialect,
    out: &mut Vec<u8>,
) {
    match (shape.kind, value) {
        (ShapeKind::Structure, Value::Map(m)) if !shape.document => {
            let present: Vec<(&str, &ShapeRef, &Value)> = shape
                .members
                .iter()
                .filter(|(_, member)| member.location.is_none())
                .filter_map(|(name, member)| m.get(name).map(|v| (name, member, v)))
                .collect();
            head(out, 5, present.len() as u64);
            for (name, member, v) in present {
                text(out, wire_name(name, member));
                encode_value(model, model.resolve(member), v, dialect, out);
            }
        }
        (ShapeKind::List, Value::List(items)) => {
            head(out, 4, items.len() as u64);
            for item in items {
                match shape.member.as_deref() {
                    Some(member) => encode_value(model, model.resolve(member), item, dialect, out),
                    None => encode_plain(item, dialect, out),
                }
            }
        }
        (ShapeKind::Map, Value::Map(m)) if !shape.document => {
            head(out, 5, m.len() as u64);
            for (k, v) in m {
                text(out, k);
                match shape.value.as_deref() {
                    Some(val) => encode_value(model, model.resolve(val), v, dialect, out),
                    None => encode_plain(v, dialect, out),
                }
            }
        }
        (ShapeKind::Blob, Value::String(s)) => {
            head(out, 2, s.len() as u64);
            out.extend_from_slice(s.as_bytes());
        }
        (ShapeKind::Float | ShapeKind::Double, Value::Integer(i)) => float(out, *i as f64),
        _ => encode_plain(value, dialect, out),
    }
}

/// Writes a value by its own kind (documents, and values no shape constrains).
pub fn encode_plain(value: &Value, dialect: Dialect, out: &mut Vec<u8>) {
    match value {
        Value::Bool(b) => out.push(if *b { 0xf5 } else { 0xf4 }),
        Value::Integer(i) => int(out, *i),
        Value::Float(f) => float(out, *f),
        Value::String(s) => text(out, s),
        Value::Blob(b) => {
            head(out, 2, b.len() as u64);
            out.extend_from_slice(b);
        }
        Value::Timestamp(t) => timestamp_item(out, *t, dialect),
        Value::List(items) => {
            head(out, 4, items.len() as u64);
            for item in items {
                encode_plain(item, dialect, out);
            }
        }
        Value::Map(m) => {
            head(out, 5, m.len() as u64);
            for (k, v) in m {
                text(out, k);
                encode_plain(v, dialect, out);
            }
        }
        Value::Null => out.push(0xf6),
    }
}

/// Encodes an operation's output as a CBOR body.
pub fn encode(
    model: &Model,
    op: &Operation,
    output: &Value,
    request_id: &str,
    dialect: Dialect,
) -> WireResponse {
    let mut body = Vec::new();
    match &op.output {
        Some(r) => encode_value(model, model.resolve(r), output, dialect, &mut body),
        None => head(&mut body, 5, 0),
    }
    dialect.response(200, body, request_id)
}

/// Encodes an error as a CBOR map of `__type` and `message` (and its extra members).
pub fn encode_error(
    model: &Model,
    error: &AwsError,
    request_id: &str,
    dialect: Dialect,
) -> WireResponse {
    let mut fields = BTreeMap::new();
    fields.insert("__type".to_string(), Value::String(error.code.to_string()));
    fields.insert("message".to_string(), Value::String(error.message.clone()));
    if let Value::Map(extra) = &error.fields {
        fields.extend(extra.iter().map(|(k, v)| (k.clone(), v.clone())));
    }
    let mut body = Vec::new();
    encode_plain(&Value::Map(fields), dialect, &mut body);
    let mut resp = dialect.response(error_status(model, error), body, request_id);
    let query_code = query_error_code(model, error);
    if query_code != error.code {
        resp.header("x-amzn-query-error", &format!("{query_code};Sender"));
    }
    resp
}

/// Whether a request's `Content-Type` asks for CBOR.
pub fn is_cbor(content_type: Option<&str>) -> bool {
    content_type.is_some_and(|ct| ct.starts_with(CONTENT_TYPE))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::model::model;

    #[test]
    fn reads_definite_and_indefinite_items() {
        // {"a": [1, -2, h'0102', "x"], _ "b": (_ "he" "llo"), "c": 1.5 (half)}
        let body = [
            0xbf, 0x61, b'a', 0x84, 0x01, 0x21, 0x42, 1, 2, 0x61, b'x', 0x61, b'b', 0x7f, 0x62,
            b'h', b'e', 0x63, b'l', b'l', b'o', 0xff, 0x61, b'c', 0xf9, 0x3e, 0x00, 0xff,
        ];
        let Cbor::Map(pairs) = parse(&body).unwrap() else {
            panic!("not a map")
        };
        assert_eq!(
            pairs[0].1,
            Cbor::Array(vec![
                Cbor::Int(1),
                Cbor::Int(-2),
                Cbor::Bytes(vec![1, 2]),
                Cbor::Text("x".into())
            ])
        );
        assert_eq!(pairs[1].1, Cbor::Text("hello".into()));
        assert_eq!(pairs[2].1, Cbor::Float(1.5));
    }

    #[test]
    fn refuses_deep_truncated_and_oversized_input() {
        let deep = vec![0x81; MAX_DEPTH + 2];
        assert!(parse(&deep).is_err());
        assert!(parse(&[0x9a, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(parse(&[0x5b, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff, 0xff]).is_err());
        assert!(parse(&[0x01, 0x02]).is_err());
        assert!(parse(&[0xff]).is_err());
        assert!(parse(&[0x7f, 0x41, 0x00, 0xff]).is_err());
    }

    #[test]
    fn shaped_values_round_trip_through_a_model() {
        let kinesis = model("kinesis");
        let shape = kinesis.shape("Record");
        let mut value = Value::map()
            .with("SequenceNumber", "49")
            .with("Data", Value::Blob(vec![0, 255]))
            .with("PartitionKey", "k")
            .with(
                "ApproximateArrivalTimestamp",
                Value::Timestamp(1_700_000_000_123),
            );
        for dialect in [Dialect::Millis, Dialect::Seconds] {
            let mut body = Vec::new();
            encode_value(kinesis, shape, &value, dialect, &mut body);
            let back = decode_value(kinesis, shape, &parse(&body).unwrap(), "", dialect).unwrap();
            assert_eq!(back, value);
        }
        value.insert("Data", Value::Integer(1));
        let mut body = Vec::new();
        encode_plain(&value, Dialect::Millis, &mut body);
        assert!(decode_value(kinesis, shape, &parse(&body).unwrap(), "", Dialect::Millis).is_err());
    }

    #[test]
    fn rpc_v2_paths_name_the_service_and_operation() {
        let cw = model("cloudwatch");
        let path = "/service/GraniteServiceVersion20100801/operation/GetMetricData";
        assert_eq!(rpc_v2_operation(cw, path).unwrap().name, "GetMetricData");
        let prefixed = format!("/base{path}");
        assert_eq!(
            rpc_v2_operation(cw, &prefixed).unwrap().name,
            "GetMetricData"
        );
        for bad in [
            "/service/Other/operation/GetMetricData",
            "/service/GraniteServiceVersion20100801/operation/Nope",
            "/",
        ] {
            let e = rpc_v2_operation(cw, bad).unwrap_err();
            assert_eq!(
                (e.code.as_ref(), e.status),
                ("UnknownOperationException", Some(404))
            );
        }
    }
}
