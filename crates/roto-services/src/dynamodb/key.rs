//! Primary keys: the schema, the checks DynamoDB makes on keys, and their stored bytes.
//!
//! Key columns hold an order-preserving encoding of the key attribute, so SQLite's
//! bytewise BLOB order is DynamoDB's key order: strings by their UTF-8 bytes, binaries by
//! their bytes, numbers by [`Number::key_bytes`](super::number::Number::key_bytes). A
//! table's key attributes each have one type, so no type tag is needed; hash-only tables
//! store an empty range key.

use roto_core::{AwsError, AwsResult};
use serde_json::Value as Json;

use super::attr::{Attr, Item};

/// One key attribute: its name and scalar type (`S`, `N` or `B`).
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeyAttr {
    /// The attribute name.
    pub name: String,
    /// `S`, `N` or `B`.
    pub kind: String,
}

/// A table's or index's key schema.
#[derive(Debug, Clone, PartialEq, Eq)]
pub struct KeySchema {
    /// The partition key.
    pub hash: KeyAttr,
    /// The sort key, if any.
    pub range: Option<KeyAttr>,
}

/// An item's encoded primary key: (hash bytes, range bytes).
pub type EncodedKey = (Vec<u8>, Vec<u8>);

fn mismatch() -> AwsError {
    AwsError::validation("The provided key element does not match the schema")
}

fn empty_key(name: &str, attr: &Attr) -> AwsError {
    let kind = if matches!(attr, Attr::B(_)) {
        "binary"
    } else {
        "string"
    };
    AwsError::validation(format!(
        "One or more parameter values are not valid. The AttributeValue for a key attribute cannot contain an empty {kind} value. Key: {name}"
    ))
}

/// The largest partition key value, in bytes.
const MAX_HASH_KEY: usize = 2048;
/// The largest sort key value, in bytes.
const MAX_RANGE_KEY: usize = 1024;

/// Refuses key values over DynamoDB's size limits (in its words, typo included).
fn check_key_sizes(schema: &KeySchema, item: &Item) -> AwsResult<()> {
    let size = |attr: &KeyAttr| item.get(&attr.name).map_or(0, Attr::size);
    if size(&schema.hash) > MAX_HASH_KEY {
        return Err(AwsError::validation(format!(
            "One or more parameter values were invalid: Size of hashkey has exceeded the maximum size limit of{MAX_HASH_KEY} bytes"
        )));
    }
    if schema.range.as_ref().map_or(0, size) > MAX_RANGE_KEY {
        return Err(AwsError::validation(format!(
            "One or more parameter values were invalid: Aggregated size of all range keys has exceeded the size limit of {MAX_RANGE_KEY} bytes"
        )));
    }
    Ok(())
}

fn is_empty_scalar(attr: &Attr) -> bool {
    matches!(attr, Attr::S(s) if s.is_empty()) || matches!(attr, Attr::B(b) if b.is_empty())
}

/// The key bytes of a scalar key value.
pub fn encode(attr: &Attr) -> Vec<u8> {
    match attr {
        Attr::S(s) => s.as_bytes().to_vec(),
        Attr::B(b) => b.clone(),
        Attr::N(n) => n.key_bytes(),
        _ => Vec::new(),
    }
}

impl KeySchema {
    /// Reads a `KeySchema` list against the `AttributeDefinitions` (both as stored JSON).
    pub fn from_json(key_schema: &Json, definitions: &Json) -> Option<KeySchema> {
        let kind_of = |name: &str| {
            definitions.as_array()?.iter().find_map(|d| {
                (d["AttributeName"].as_str() == Some(name))
                    .then(|| d["AttributeType"].as_str().map(str::to_string))
                    .flatten()
            })
        };
        let element = |key_type: &str| {
            key_schema.as_array()?.iter().find_map(|k| {
                let name = k["AttributeName"].as_str()?;
                (k["KeyType"].as_str() == Some(key_type)).then(|| KeyAttr {
                    name: name.to_string(),
                    kind: kind_of(name).unwrap_or_default(),
                })
            })
        };
        Some(KeySchema {
            hash: element("HASH")?,
            range: element("RANGE"),
        })
    }

    /// The key attributes, partition key first.
    pub fn attrs(&self) -> impl Iterator<Item = &KeyAttr> {
        std::iter::once(&self.hash).chain(self.range.as_ref())
    }

    /// Checks a `Key` parameter (exactly the key attributes, right types, non-empty) and
    /// encodes it.
    pub fn encode_key(&self, key: &Item) -> AwsResult<EncodedKey> {
        if key.len() != self.attrs().count() {
            return Err(mismatch());
        }
        for attr in self.attrs() {
            match key.get(&attr.name) {
                Some(v) if v.tag() == attr.kind => {}
                _ => return Err(mismatch()),
            }
        }
        for attr in self.attrs() {
            if let Some(v) = key.get(&attr.name).filter(|v| is_empty_scalar(v)) {
                return Err(empty_key(&attr.name, v));
            }
        }
        check_key_sizes(self, key)?;
        Ok(self.encoded(key))
    }

    /// Checks the key attributes of a whole item and encodes its key.
    pub fn encode_item_key(&self, item: &Item) -> AwsResult<EncodedKey> {
        for attr in self.attrs() {
            let Some(v) = item.get(&attr.name) else {
                return Err(AwsError::validation(format!(
                    "One or more parameter values were invalid: Missing the key {} in the item",
                    attr.name
                )));
            };
            if v.tag() != attr.kind {
                return Err(AwsError::validation(format!(
                    "One or more parameter values were invalid: Type mismatch for key {} expected: {} actual: {}",
                    attr.name,
                    attr.kind,
                    v.tag()
                )));
            }
            if is_empty_scalar(v) {
                return Err(empty_key(&attr.name, v));
            }
        }
        check_key_sizes(self, item)?;
        Ok(self.encoded(item))
    }

    /// Checks the index key attributes an item carries (absent ones just leave the item
    /// out of the index).
    pub fn check_index_keys(&self, index: &str, item: &Item) -> AwsResult<()> {
        for attr in self.attrs() {
            let Some(v) = item.get(&attr.name) else {
                continue;
            };
            if v.tag() != attr.kind {
                return Err(AwsError::validation(format!(
                    "One or more parameter values were invalid: Type mismatch for Index Key {} Expected: {} Actual: {} IndexName: {index}",
                    attr.name,
                    attr.kind,
                    v.tag()
                )));
            }
            if is_empty_scalar(v) {
                let kind = if matches!(v, Attr::B(_)) {
                    "binary"
                } else {
                    "string"
                };
                return Err(AwsError::validation(format!(
                    "One or more parameter values are not valid. A value specified for a secondary index key is not supported. The AttributeValue for a key attribute cannot contain an empty {kind} value. IndexName: {index}, IndexKey: {}",
                    attr.name
                )));
            }
        }
        Ok(())
    }

    /// The item's key in an index with this schema; `None` if it lacks a key attribute
    /// (and so is not in the index).
    pub fn index_key(&self, item: &Item) -> Option<EncodedKey> {
        self.attrs()
            .all(|a| item.get(&a.name).is_some_and(|v| v.tag() == a.kind))
            .then(|| self.encoded(item))
    }

    fn encoded(&self, item: &Item) -> EncodedKey {
        let bytes = |attr: &KeyAttr| item.get(&attr.name).map(encode).unwrap_or_default();
        (
            bytes(&self.hash),
            self.range.as_ref().map(bytes).unwrap_or_default(),
        )
    }
}

#[cfg(test)]
mod tests {
    use super::super::number::Number;
    use super::*;

    fn schema() -> KeySchema {
        KeySchema::from_json(
            &serde_json::json!([{"AttributeName": "pk", "KeyType": "HASH"}, {"AttributeName": "sk", "KeyType": "RANGE"}]),
            &serde_json::json!([{"AttributeName": "pk", "AttributeType": "S"}, {"AttributeName": "sk", "AttributeType": "N"}]),
        )
        .unwrap()
    }

    fn n(text: &str) -> Attr {
        Attr::N(Number::parse(text).unwrap())
    }

    #[test]
    fn keys_must_match_the_schema_exactly() {
        let s = schema();
        let good = Item::from([("pk".into(), Attr::S("a".into())), ("sk".into(), n("1"))]);
        assert!(s.encode_key(&good).is_ok());
        let mut extra = good.clone();
        extra.insert("x".into(), Attr::Null);
        let wrong_type = Item::from([("pk".into(), n("1")), ("sk".into(), n("1"))]);
        let missing = Item::from([("pk".into(), Attr::S("a".into()))]);
        for bad in [extra, wrong_type, missing] {
            assert_eq!(
                s.encode_key(&bad).unwrap_err().message,
                "The provided key element does not match the schema"
            );
        }
        let empty = Item::from([("pk".into(), Attr::S(String::new())), ("sk".into(), n("1"))]);
        assert!(s
            .encode_key(&empty)
            .unwrap_err()
            .message
            .ends_with("empty string value. Key: pk"));
    }

    #[test]
    fn item_keys_report_missing_and_mistyped_attributes() {
        let s = schema();
        let missing = Item::from([("pk".into(), Attr::S("a".into()))]);
        assert_eq!(
            s.encode_item_key(&missing).unwrap_err().message,
            "One or more parameter values were invalid: Missing the key sk in the item"
        );
        let mistyped = Item::from([
            ("pk".into(), Attr::S("a".into())),
            ("sk".into(), Attr::S("1".into())),
        ]);
        assert_eq!(
            s.encode_item_key(&mistyped).unwrap_err().message,
            "One or more parameter values were invalid: Type mismatch for key sk expected: N actual: S"
        );
    }

    #[test]
    fn encoded_keys_sort_like_dynamodb() {
        assert!(encode(&Attr::S("a".into())) < encode(&Attr::S("ab".into())));
        assert!(encode(&Attr::S("Z".into())) < encode(&Attr::S("a".into())));
        assert!(encode(&Attr::B(vec![0x01])) < encode(&Attr::B(vec![0x01, 0x00])));
        assert!(encode(&n("-10")) < encode(&n("9")));
        assert!(encode(&n("9")) < encode(&n("10")));
    }
}
