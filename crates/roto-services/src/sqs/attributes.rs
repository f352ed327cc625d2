//! Message attributes: their validation, storage form and MD5 digests.
//!
//! SDKs verify `MD5OfMessageAttributes` (and `MD5OfMessageSystemAttributes`) themselves, so
//! the digest follows AWS's documented binary encoding exactly: attributes sorted by name,
//! each as its length-prefixed name, length-prefixed data type, a transport byte (1 for
//! string values, 2 for binary) and the length-prefixed value, lengths as 4-byte big-endian
//! integers.

use std::collections::BTreeMap;

use base64::Engine;
use md5::{Digest, Md5};
use roto_core::{AwsError, AwsResult, Value};

use super::invalid_parameter;

/// The most user attributes one message may carry.
const MAX_ATTRIBUTES: usize = 10;

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum AttributeValue {
    /// `StringValue` (for `String` and `Number` types).
    String(String),
    /// `BinaryValue`.
    Binary(Vec<u8>),
}

/// One message attribute.
#[derive(Debug, Clone, PartialEq)]
pub struct MessageAttribute {
    /// `String`, `Number`, `Binary`, optionally with a custom suffix (`Number.int`).
    pub data_type: String,
    /// The value.
    pub value: AttributeValue,
}

/// Attributes by name, in the sorted order the digest needs.
pub type Attributes = BTreeMap<String, MessageAttribute>;

/// Which kind of attributes are being read, for the wording of errors.
#[derive(Clone, Copy, PartialEq)]
pub enum Kind {
    /// `MessageAttributes`.
    User,
    /// `MessageSystemAttributes`.
    System,
}

impl Kind {
    fn label(self) -> &'static str {
        match self {
            Kind::User => "user",
            Kind::System => "system",
        }
    }
}

/// Reads and validates a `MessageAttributes` or `MessageSystemAttributes` member.
pub fn parse(input: Option<&Value>, kind: Kind) -> AwsResult<Attributes> {
    let Some(map) = input.and_then(Value::as_map) else {
        return Ok(Attributes::new());
    };
    if kind == Kind::User && map.len() > MAX_ATTRIBUTES {
        return Err(invalid_parameter(format!(
            "Number of message attributes [{}] exceeds the allowed maximum [{MAX_ATTRIBUTES}].",
            map.len()
        )));
    }
    let mut out = Attributes::new();
    for (name, value) in map {
        match kind {
            Kind::User => check_name(name)?,
            Kind::System if name != "AWSTraceHeader" => {
                return Err(invalid_parameter(format!(
                    "Message system attribute name '{name}' is invalid."
                )))
            }
            Kind::System => {}
        }
        out.insert(name.clone(), parse_one(name, value, kind)?);
    }
    Ok(out)
}

fn check_name(name: &str) -> AwsResult<()> {
    let lower = name.to_ascii_lowercase();
    let valid = !name.is_empty()
        && name.chars().count() <= 256
        && name.chars().all(|c| {
            c.is_ascii_alphanumeric() || "_-.".contains(c) || ('\u{c0}'..='\u{17f}').contains(&c)
        })
        && !lower.starts_with("aws.")
        && !lower.starts_with("amazon.")
        && !name.starts_with('.')
        && !name.ends_with('.')
        && !name.contains("..");
    if valid {
        Ok(())
    } else {
        Err(invalid_parameter(format!(
            "Message (user) attribute name '{name}' is invalid. The attribute name can contain only alphanumeric characters, hyphens (-), underscores (_), and periods (.). It must not start with 'AWS.' or 'Amazon.' nor with or end with a period, nor contain consecutive periods, and must be at most 256 characters long."
        )))
    }
}

fn parse_one(name: &str, value: &Value, kind: Kind) -> AwsResult<MessageAttribute> {
    let label = kind.label();
    let data_type = value.str("DataType").unwrap_or_default();
    if data_type.is_empty() {
        return Err(invalid_parameter(format!(
            "The message attribute '{name}' must contain non-empty message attribute type."
        )));
    }
    let base = ["String", "Number", "Binary"]
        .into_iter()
        .find(|t| data_type.starts_with(t))
        .ok_or_else(|| {
            invalid_parameter(format!(
                "The type of message ({label}) attribute '{name}' is invalid. You must use only the following supported type prefixes: Binary, Number, String."
            ))
        })?;
    if data_type.len() > 256 {
        return Err(invalid_parameter(format!(
            "Message ({label}) attribute '{name}' type must be less than 256 characters."
        )));
    }
    let missing_value = || {
        invalid_parameter(format!(
            "The message attribute '{name}' must contain non-empty message attribute value for message attribute type '{base}'."
        ))
    };
    let value = if base == "Binary" {
        match value.get("BinaryValue").and_then(Value::as_blob) {
            Some(b) if !b.is_empty() => AttributeValue::Binary(b.to_vec()),
            _ => return Err(missing_value()),
        }
    } else {
        match value.str("StringValue") {
            Some(s) if !s.is_empty() => {
                if base == "Number" && !is_number(s) {
                    return Err(invalid_parameter(format!(
                        "Can't cast the value of message ({label}) attribute '{name}' to a number."
                    )));
                }
                check_characters(s, &format!("message attribute '{name}'"))?;
                AttributeValue::String(s.to_string())
            }
            _ => return Err(missing_value()),
        }
    };
    Ok(MessageAttribute {
        data_type: data_type.to_string(),
        value,
    })
}

/// Whether `s` is a number SQS accepts: an optional sign, digits with at most one point,
/// an optional exponent.
fn is_number(s: &str) -> bool {
    let body = s.strip_prefix(['-', '+']).unwrap_or(s);
    let (mantissa, exponent) = match body.find(['e', 'E']) {
        Some(i) => (&body[..i], Some(&body[i + 1..])),
        None => (body, None),
    };
    let digits = mantissa.chars().filter(char::is_ascii_digit).count();
    let points = mantissa.chars().filter(|&c| c == '.').count();
    let mantissa_ok =
        digits > 0 && points <= 1 && mantissa.chars().all(|c| c.is_ascii_digit() || c == '.');
    let exponent_ok = exponent.is_none_or(|e| {
        let e = e.strip_prefix(['-', '+']).unwrap_or(e);
        !e.is_empty() && e.chars().all(|c| c.is_ascii_digit())
    });
    mantissa_ok && exponent_ok
}

/// Rejects characters outside the XML 1.0 set SQS allows, with AWS's wording.
pub fn check_characters(text: &str, what: &str) -> AwsResult<()> {
    let bad = text.chars().find(|&c| {
        !matches!(c, '\u{9}' | '\u{a}' | '\u{d}' | '\u{20}'..='\u{d7ff}' | '\u{e000}'..='\u{fffd}' | '\u{10000}'..='\u{10ffff}')
    });
    match bad {
        None => Ok(()),
        Some(c) => Err(AwsError::new(
            "InvalidMessageContents",
            format!(
                "Invalid binary character '#x{:X}' was found in the {what}, the set of allowed characters is #x9 | #xA | #xD | #x20 to #xD7FF | #xE000 to #xFFFD | #x10000 to #x10FFFF",
                u32::from(c)
            ),
        )
        .with_status(400)),
    }
}

/// The bytes the attributes count towards the message size limit.
pub fn size(attributes: &Attributes) -> usize {
    attributes
        .iter()
        .map(|(name, a)| {
            name.len()
                + a.data_type.len()
                + match &a.value {
                    AttributeValue::String(s) => s.len(),
                    AttributeValue::Binary(b) => b.len(),
                }
        })
        .sum()
}

/// The hex MD5 of some bytes.
pub fn md5_hex(bytes: &[u8]) -> String {
    hex::encode(Md5::digest(bytes))
}

/// `MD5OfMessageAttributes`, or `None` when there are no attributes.
pub fn md5_of(attributes: &Attributes) -> Option<String> {
    if attributes.is_empty() {
        return None;
    }
    fn put(buf: &mut Vec<u8>, bytes: &[u8]) {
        buf.extend_from_slice(&u32::try_from(bytes.len()).unwrap_or(u32::MAX).to_be_bytes());
        buf.extend_from_slice(bytes);
    }
    let mut buf = Vec::new();
    for (name, a) in attributes {
        put(&mut buf, name.as_bytes());
        put(&mut buf, a.data_type.as_bytes());
        let (transport, value): (u8, &[u8]) = match &a.value {
            AttributeValue::String(s) => (1, s.as_bytes()),
            AttributeValue::Binary(b) => (2, b),
        };
        buf.push(transport);
        put(&mut buf, value);
    }
    Some(md5_hex(&buf))
}

/// The storage form: a JSON object of `{DataType, StringValue | BinaryValue (base64)}`.
pub fn to_json(attributes: &Attributes) -> String {
    let object: serde_json::Map<String, serde_json::Value> = attributes
        .iter()
        .map(|(name, a)| {
            let mut entry = serde_json::Map::new();
            entry.insert("DataType".into(), a.data_type.clone().into());
            match &a.value {
                AttributeValue::String(s) => {
                    entry.insert("StringValue".into(), s.clone().into());
                }
                AttributeValue::Binary(b) => {
                    let encoded = base64::engine::general_purpose::STANDARD.encode(b);
                    entry.insert("BinaryValue".into(), encoded.into());
                }
            }
            (name.clone(), serde_json::Value::Object(entry))
        })
        .collect();
    serde_json::Value::Object(object).to_string()
}

/// Reads the storage form back.
pub fn from_json(json: &str) -> Attributes {
    let Ok(serde_json::Value::Object(object)) = serde_json::from_str(json) else {
        return Attributes::new();
    };
    object
        .into_iter()
        .filter_map(|(name, entry)| {
            let data_type = entry.get("DataType")?.as_str()?.to_string();
            let value = match entry.get("BinaryValue").and_then(|v| v.as_str()) {
                Some(b64) => AttributeValue::Binary(
                    base64::engine::general_purpose::STANDARD.decode(b64).ok()?,
                ),
                None => AttributeValue::String(entry.get("StringValue")?.as_str()?.to_string()),
            };
            Some((name, MessageAttribute { data_type, value }))
        })
        .collect()
}

/// The shaped `MessageAttributes` output member.
pub fn to_value(attributes: &Attributes) -> Value {
    let mut out = Value::map();
    for (name, a) in attributes {
        let mut entry = Value::map().with("DataType", a.data_type.as_str());
        match &a.value {
            AttributeValue::String(s) => entry.insert("StringValue", s.as_str()),
            AttributeValue::Binary(b) => entry.insert("BinaryValue", Value::Blob(b.clone())),
        }
        out.insert(name.clone(), entry);
    }
    out
}
