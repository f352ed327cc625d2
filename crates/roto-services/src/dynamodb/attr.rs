//! Attribute values: validated on the way in, exact on the way out, compact in the store.
//!
//! The codec hands over each `AttributeValue` as a shaped map with one member (`S`, `N`,
//! `B`, `SS`, `NS`, `BS`, `M`, `L`, `NULL`, `BOOL`). [`Attr::item`] checks it the way
//! DynamoDB's front end does (exactly one type, numbers valid, sets non-empty and free of
//! duplicates, `NULL` true, nesting within 32 levels), numbers normalised. Items are stored
//! as JSON in the wire's own form, so what is read back is what was written.

use std::collections::BTreeMap;

use base64::Engine;
use roto_core::{AwsError, AwsResult, Value};
use serde::de::{self, Deserialize, Deserializer, MapAccess, Visitor};
use serde::ser::{Serialize, SerializeMap, Serializer};
use serde_json::{Map, Value as Json};

use super::number::Number;

/// The deepest nesting of maps and lists DynamoDB accepts.
const MAX_DEPTH: usize = 32;

/// An item: attribute names to values.
pub type Item = BTreeMap<String, Attr>;

/// One attribute value.
#[derive(Debug, Clone, PartialEq)]
pub enum Attr {
    /// String.
    S(String),
    /// Number, normalised.
    N(Number),
    /// Binary.
    B(Vec<u8>),
    /// String set (in the order given).
    Ss(Vec<String>),
    /// Number set.
    Ns(Vec<Number>),
    /// Binary set.
    Bs(Vec<Vec<u8>>),
    /// Map.
    M(Item),
    /// List.
    L(Vec<Attr>),
    /// Null.
    Null,
    /// Boolean.
    Bool(bool),
}

fn invalid(message: impl Into<String>) -> AwsError {
    AwsError::validation(message)
}

fn b64(bytes: &[u8]) -> String {
    base64::engine::general_purpose::STANDARD.encode(bytes)
}

fn number(text: &str) -> AwsResult<Number> {
    Number::parse(text).map_err(|e| invalid(e.message(text)))
}

fn set_members<'v>(value: &'v Value, kind: &str) -> AwsResult<&'v [Value]> {
    let members = value.as_list().unwrap_or_default();
    if members.is_empty() {
        return Err(invalid(format!(
            "One or more parameter values were invalid: An {kind} set  may not be empty"
        )));
    }
    Ok(members)
}

/// The members DynamoDB shows for a set with a repeat: those seen so far in sorted order,
/// then the repeat, then the rest as sent; `None` if there is no repeat.
fn duplicate_listing<T: Ord + Clone>(items: &[T]) -> Option<Vec<T>> {
    let mut seen = std::collections::BTreeSet::new();
    let repeat = items.iter().position(|item| !seen.insert(item.clone()))?;
    let mut out: Vec<T> = seen.into_iter().collect();
    out.extend_from_slice(&items[repeat..]);
    Some(out)
}

fn duplicates(listing: &[String], separator: &str, suffix: &str) -> AwsError {
    invalid(format!(
        "One or more parameter values were invalid: Input collection [{}]{suffix} contains duplicates.",
        listing.join(separator)
    ))
}

fn quoted(text: &str) -> String {
    Json::String(text.to_string()).to_string()
}

impl Attr {
    /// Validates and converts a shaped `AttributeValue` nested `depth` levels deep.
    fn from_value_at(value: &Value, depth: usize) -> AwsResult<Attr> {
        // The attribute itself is level 1.
        if depth >= MAX_DEPTH {
            return Err(invalid(
                "Nesting Levels have exceeded supported limits: Attributes in the item have nested levels beyond supported limit",
            ));
        }
        let members = value.as_map().map(|m| m.len()).unwrap_or_default();
        if members == 0 {
            return Err(invalid(
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ));
        }
        if members > 1 {
            return Err(invalid(
                "Supplied AttributeValue has more than one datatypes set, must contain exactly one of the supported datatypes",
            ));
        }
        let Some((tag, inner)) = value.as_map().and_then(|m| m.iter().next()) else {
            return Err(invalid(
                "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
            ));
        };
        Ok(match tag.as_str() {
            "S" => Attr::S(inner.as_str().unwrap_or_default().to_string()),
            "N" => Attr::N(number(inner.as_str().unwrap_or_default())?),
            "B" => Attr::B(inner.as_blob().unwrap_or_default().to_vec()),
            "SS" => {
                let items: Vec<String> = set_members(inner, "string")?
                    .iter()
                    .map(|v| v.as_str().unwrap_or_default().to_string())
                    .collect();
                if let Some(listing) = duplicate_listing(&items) {
                    let shown: Vec<String> = listing.iter().map(|s| quoted(s)).collect();
                    return Err(duplicates(&shown, ", ", ""));
                }
                Attr::Ss(items)
            }
            "NS" => {
                let items = set_members(inner, "number")?
                    .iter()
                    .map(|v| number(v.as_str().unwrap_or_default()))
                    .collect::<AwsResult<Vec<Number>>>()?;
                let keys: Vec<Vec<u8>> = items.iter().map(Number::key_bytes).collect();
                if duplicate_listing(&keys).is_some() {
                    return Err(invalid(
                        "One or more parameter values were invalid: Input collection contains duplicates.",
                    ));
                }
                Attr::Ns(items)
            }
            "BS" => {
                let members = inner.as_list().unwrap_or_default();
                if members.is_empty() {
                    return Err(invalid(
                        "One or more parameter values were invalid: Binary sets should not be empty",
                    ));
                }
                let items: Vec<Vec<u8>> = members
                    .iter()
                    .map(|v| v.as_blob().unwrap_or_default().to_vec())
                    .collect();
                if let Some(listing) = duplicate_listing(&items) {
                    let shown: Vec<String> = listing.iter().map(|b| quoted(&b64(b))).collect();
                    return Err(duplicates(&shown, ",", "of type BS"));
                }
                Attr::Bs(items)
            }
            "M" => Attr::M(Attr::item_at(inner, depth + 1)?),
            "L" => Attr::L(
                inner
                    .as_list()
                    .unwrap_or_default()
                    .iter()
                    .map(|v| Attr::from_value_at(v, depth + 1))
                    .collect::<AwsResult<_>>()?,
            ),
            "NULL" => {
                if !matches!(inner, Value::Bool(true)) {
                    return Err(invalid(
                        "One or more parameter values were invalid: Null attribute value types must have the value of true",
                    ));
                }
                Attr::Null
            }
            "BOOL" => Attr::Bool(matches!(inner, Value::Bool(true))),
            _ => {
                return Err(invalid(
                    "Supplied AttributeValue is empty, must contain exactly one of the supported datatypes",
                ))
            }
        })
    }

    /// Validates and converts one shaped `AttributeValue`.
    pub fn from_value(value: &Value) -> AwsResult<Attr> {
        Attr::from_value_at(value, 0)
    }

    /// Validates and converts a shaped attribute map (an item or a key).
    pub fn item(value: &Value) -> AwsResult<Item> {
        Attr::item_at(value, 0)
    }

    fn item_at(value: &Value, depth: usize) -> AwsResult<Item> {
        value
            .as_map()
            .map(|m| {
                m.iter()
                    .map(|(k, v)| Ok((k.clone(), Attr::from_value_at(v, depth)?)))
                    .collect()
            })
            .unwrap_or_else(|| Ok(Item::new()))
    }

    /// The type tag (`S`, `N`, `SS`, ...).
    pub fn tag(&self) -> &'static str {
        match self {
            Attr::S(_) => "S",
            Attr::N(_) => "N",
            Attr::B(_) => "B",
            Attr::Ss(_) => "SS",
            Attr::Ns(_) => "NS",
            Attr::Bs(_) => "BS",
            Attr::M(_) => "M",
            Attr::L(_) => "L",
            Attr::Null => "NULL",
            Attr::Bool(_) => "BOOL",
        }
    }

    /// The shaped `AttributeValue` the codec encodes.
    pub fn to_value(&self) -> Value {
        let inner = match self {
            Attr::S(s) => Value::String(s.clone()),
            Attr::N(n) => Value::String(n.to_string()),
            Attr::B(b) => Value::Blob(b.clone()),
            Attr::Ss(items) => Value::List(items.iter().map(Value::from).collect()),
            Attr::Ns(items) => Value::List(items.iter().map(|n| n.to_string().into()).collect()),
            Attr::Bs(items) => Value::List(items.iter().map(|b| Value::Blob(b.clone())).collect()),
            Attr::M(m) => item_to_value(m),
            Attr::L(items) => Value::List(items.iter().map(Attr::to_value).collect()),
            Attr::Null => Value::Bool(true),
            Attr::Bool(b) => Value::Bool(*b),
        };
        Value::map().with(self.tag(), inner)
    }

    /// The stored JSON form (the wire's form: binaries in base64, numbers as text).
    pub fn to_json(&self) -> Json {
        let inner = match self {
            Attr::S(s) => Json::String(s.clone()),
            Attr::N(n) => Json::String(n.to_string()),
            Attr::B(b) => Json::String(b64(b)),
            Attr::Ss(items) => Json::Array(items.iter().cloned().map(Json::String).collect()),
            Attr::Ns(items) => Json::Array(items.iter().map(|n| n.to_string().into()).collect()),
            Attr::Bs(items) => Json::Array(items.iter().map(|b| b64(b).into()).collect()),
            Attr::M(m) => Json::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect()),
            Attr::L(items) => Json::Array(items.iter().map(Attr::to_json).collect()),
            Attr::Null => Json::Bool(true),
            Attr::Bool(b) => Json::Bool(*b),
        };
        let mut obj = Map::new();
        obj.insert(self.tag().to_string(), inner);
        Json::Object(obj)
    }

    /// Reads the stored JSON form back; `None` if the store holds something else.
    pub fn from_json(json: &Json) -> Option<Attr> {
        let (tag, inner) = json.as_object()?.iter().next()?;
        let text = |j: &Json| j.as_str().map(str::to_string);
        let bytes = |j: &Json| {
            base64::engine::general_purpose::STANDARD
                .decode(j.as_str()?)
                .ok()
        };
        let num = |j: &Json| Number::parse(j.as_str()?).ok();
        let array = || inner.as_array().map(Vec::as_slice).unwrap_or_default();
        Some(match tag.as_str() {
            "S" => Attr::S(text(inner)?),
            "N" => Attr::N(num(inner)?),
            "B" => Attr::B(bytes(inner)?),
            "SS" => Attr::Ss(array().iter().map(text).collect::<Option<_>>()?),
            "NS" => Attr::Ns(array().iter().map(num).collect::<Option<_>>()?),
            "BS" => Attr::Bs(array().iter().map(bytes).collect::<Option<_>>()?),
            "M" => Attr::M(item_from_json(inner)?),
            "L" => Attr::L(array().iter().map(Attr::from_json).collect::<Option<_>>()?),
            "NULL" => Attr::Null,
            "BOOL" => Attr::Bool(inner.as_bool()?),
            _ => return None,
        })
    }

    /// The size DynamoDB bills for this value (without its name).
    pub fn size(&self) -> usize {
        match self {
            Attr::S(s) => s.len(),
            Attr::N(n) => n.size(),
            Attr::B(b) => b.len(),
            Attr::Ss(items) => items.iter().map(String::len).sum(),
            Attr::Ns(items) => items.iter().map(Number::size).sum(),
            Attr::Bs(items) => items.iter().map(Vec::len).sum(),
            Attr::M(m) => 3 + m.iter().map(|(k, v)| k.len() + v.size() + 1).sum::<usize>(),
            Attr::L(items) => 3 + items.iter().map(|v| v.size() + 1).sum::<usize>(),
            Attr::Null | Attr::Bool(_) => 1,
        }
    }
}

/// The shaped attribute map the codec encodes.
pub fn item_to_value(item: &Item) -> Value {
    Value::Map(
        item.iter()
            .map(|(k, v)| (k.clone(), v.to_value()))
            .collect(),
    )
}

/// The stored JSON form of an item (the text `item_json(item).to_string()` gives, written
/// without building that value first).
pub fn item_to_json(item: &Item) -> String {
    serde_json::to_string(&Stored(item)).unwrap_or_else(|_| item_json(item).to_string())
}

/// An item as a stored JSON object.
pub fn item_json(item: &Item) -> Json {
    Json::Object(item.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
}

/// Reads an item from a stored JSON object.
pub fn item_from_json(json: &Json) -> Option<Item> {
    json.as_object()?
        .iter()
        .map(|(k, v)| Some((k.clone(), Attr::from_json(v)?)))
        .collect()
}

/// Reads a stored item: straight from the text into the item when it is in the form
/// [`item_to_json`] writes (every read of an item); anything else through a JSON value and
/// [`item_from_json`], whose lenient reading decides.
pub fn parse_stored_item(text: &str) -> AwsResult<Item> {
    if let Ok(StoredItem(item)) = serde_json::from_str(text) {
        return Ok(item);
    }
    serde_json::from_str::<Json>(text)
        .ok()
        .as_ref()
        .and_then(item_from_json)
        .ok_or_else(|| AwsError::internal("a stored DynamoDB item is unreadable"))
}

/// An item or a value in its stored form, for the serializer.
struct Stored<'a, T: ?Sized>(&'a T);

impl Serialize for Stored<'_, Item> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        serializer.collect_map(self.0.iter().map(|(name, value)| (name, Stored(value))))
    }
}

impl Serialize for Stored<'_, Attr> {
    fn serialize<S: Serializer>(&self, serializer: S) -> Result<S::Ok, S::Error> {
        let mut map = serializer.serialize_map(Some(1))?;
        let tag = self.0.tag();
        match self.0 {
            Attr::S(s) => map.serialize_entry(tag, s)?,
            Attr::N(n) => map.serialize_entry(tag, &n.to_string())?,
            Attr::B(b) => map.serialize_entry(tag, &b64(b))?,
            Attr::Ss(items) => map.serialize_entry(tag, items)?,
            Attr::Ns(items) => {
                let texts: Vec<String> = items.iter().map(Number::to_string).collect();
                map.serialize_entry(tag, &texts)?
            }
            Attr::Bs(items) => {
                let texts: Vec<String> = items.iter().map(|b| b64(b)).collect();
                map.serialize_entry(tag, &texts)?
            }
            Attr::M(m) => map.serialize_entry(tag, &Stored(m))?,
            Attr::L(items) => {
                map.serialize_entry(tag, &items.iter().map(Stored).collect::<Vec<_>>())?
            }
            Attr::Null => map.serialize_entry(tag, &true)?,
            Attr::Bool(b) => map.serialize_entry(tag, b)?,
        }
        map.end()
    }
}

/// An item read from its stored form, each value exactly one well-typed member.
struct StoredItem(Item);

/// One value read from its stored form.
struct StoredAttr(Attr);

/// A number or a binary in its stored (text) form.
struct Text<T>(T);

impl<'de> Deserialize<'de> for StoredItem {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Items;
        impl<'de> Visitor<'de> for Items {
            type Value = StoredItem;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a stored item")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StoredItem, A::Error> {
                let mut item = Item::new();
                while let Some(name) = map.next_key::<String>()? {
                    let StoredAttr(value) = map.next_value()?;
                    item.insert(name, value);
                }
                Ok(StoredItem(item))
            }
        }
        deserializer.deserialize_map(Items)
    }
}

impl<'de> Deserialize<'de> for StoredAttr {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Attrs;
        impl<'de> Visitor<'de> for Attrs {
            type Value = StoredAttr;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a stored attribute value")
            }
            fn visit_map<A: MapAccess<'de>>(self, mut map: A) -> Result<StoredAttr, A::Error> {
                let Some(Tag(tag)) = map.next_key()? else {
                    return Err(de::Error::custom("no type"));
                };
                let value = match tag {
                    "S" => Attr::S(map.next_value()?),
                    "N" => Attr::N(map.next_value::<Text<Number>>()?.0),
                    "B" => Attr::B(map.next_value::<Text<Vec<u8>>>()?.0),
                    "SS" => Attr::Ss(map.next_value()?),
                    "NS" => Attr::Ns(unwrapped(map.next_value::<Vec<Text<Number>>>()?, |n| n.0)),
                    "BS" => Attr::Bs(unwrapped(map.next_value::<Vec<Text<Vec<u8>>>>()?, |b| b.0)),
                    "M" => Attr::M(map.next_value::<StoredItem>()?.0),
                    "L" => Attr::L(unwrapped(map.next_value::<Vec<StoredAttr>>()?, |a| a.0)),
                    "NULL" => {
                        map.next_value::<de::IgnoredAny>()?;
                        Attr::Null
                    }
                    "BOOL" => Attr::Bool(map.next_value()?),
                    _ => return Err(de::Error::custom("unknown type")),
                };
                match map.next_key::<de::IgnoredAny>()? {
                    Some(_) => Err(de::Error::custom("more than one type")),
                    None => Ok(StoredAttr(value)),
                }
            }
        }
        deserializer.deserialize_map(Attrs)
    }
}

fn unwrapped<T, U>(items: Vec<T>, f: impl FnMut(T) -> U) -> Vec<U> {
    items.into_iter().map(f).collect()
}

/// A value's type tag, as a known static name.
struct Tag(&'static str);

impl<'de> Deserialize<'de> for Tag {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Tags;
        impl Visitor<'_> for Tags {
            type Value = Tag;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a type tag")
            }
            fn visit_str<E: de::Error>(self, tag: &str) -> Result<Tag, E> {
                const TAGS: [&str; 10] =
                    ["S", "N", "B", "SS", "NS", "BS", "M", "L", "NULL", "BOOL"];
                TAGS.iter()
                    .find(|t| **t == tag)
                    .map(|t| Tag(t))
                    .ok_or_else(|| E::custom("unknown type"))
            }
        }
        deserializer.deserialize_str(Tags)
    }
}

/// A value kept as text in the stored form: a number, or a binary in base64.
trait FromText: Sized {
    fn from_text(text: &str) -> Option<Self>;
}

impl FromText for Number {
    fn from_text(text: &str) -> Option<Number> {
        Number::parse(text).ok()
    }
}

impl FromText for Vec<u8> {
    fn from_text(text: &str) -> Option<Vec<u8>> {
        base64::engine::general_purpose::STANDARD.decode(text).ok()
    }
}

impl<'de, T: FromText> Deserialize<'de> for Text<T> {
    fn deserialize<D: Deserializer<'de>>(deserializer: D) -> Result<Self, D::Error> {
        struct Texts<T>(std::marker::PhantomData<T>);
        impl<T: FromText> Visitor<'_> for Texts<T> {
            type Value = Text<T>;
            fn expecting(&self, f: &mut std::fmt::Formatter) -> std::fmt::Result {
                f.write_str("a value as text")
            }
            fn visit_str<E: de::Error>(self, text: &str) -> Result<Text<T>, E> {
                T::from_text(text)
                    .map(Text)
                    .ok_or_else(|| E::custom("unreadable text"))
            }
        }
        deserializer.deserialize_str(Texts(std::marker::PhantomData))
    }
}

/// The size DynamoDB bills for an item: names plus values.
pub fn item_size(item: &Item) -> usize {
    item.iter().map(|(k, v)| k.len() + v.size()).sum()
}

#[cfg(test)]
mod tests {
    use super::*;

    fn av(tag: &str, inner: impl Into<Value>) -> Value {
        Value::map().with(tag, inner)
    }

    fn err(value: Value) -> String {
        Attr::from_value_at(&value, 0).unwrap_err().message
    }

    #[test]
    fn every_type_round_trips_through_the_store_form() {
        let nested = Attr::M(Item::from([
            ("s".to_string(), Attr::S(String::new())),
            ("n".to_string(), Attr::N(Number::parse("-1.5").unwrap())),
            ("b".to_string(), Attr::B(vec![0, 255])),
            ("ss".to_string(), Attr::Ss(vec!["x".into(), "y".into()])),
            (
                "ns".to_string(),
                Attr::Ns(vec![Number::parse("1").unwrap()]),
            ),
            ("bs".to_string(), Attr::Bs(vec![vec![1], vec![2]])),
            (
                "l".to_string(),
                Attr::L(vec![Attr::Null, Attr::Bool(false)]),
            ),
        ]));
        assert_eq!(Attr::from_json(&nested.to_json()), Some(nested.clone()));
        assert_eq!(
            Attr::from_value_at(&nested.to_value(), 0),
            Ok(nested.clone())
        );
        let item = Item::from([("a\"b".to_string(), nested), ("k".to_string(), Attr::Null)]);
        let text = item_to_json(&item);
        assert_eq!(text, item_json(&item).to_string());
        assert!(serde_json::from_str::<StoredItem>(&text).is_ok());
        assert_eq!(parse_stored_item(&text), Ok(item));
    }

    #[test]
    fn stored_items_in_another_form_are_read_as_before() {
        let lenient = r#"{"a": {"SS": "x"}, "b": {"NULL": false}, "c": {"BOOL": true}}"#;
        assert!(serde_json::from_str::<StoredItem>(lenient).is_err());
        let item = parse_stored_item(lenient).unwrap();
        assert_eq!(item["a"], Attr::Ss(vec![]));
        assert_eq!(item["b"], Attr::Null);
        for unreadable in [
            r#"{"a": {}}"#,
            r#"{"a": {"N": "x"}}"#,
            r#"{"a": {"Q": 1}}"#,
            "[]",
        ] {
            assert!(parse_stored_item(unreadable).is_err(), "{unreadable}");
        }
    }

    #[test]
    fn invalid_values_get_dynamodb_messages() {
        assert!(err(Value::map()).starts_with("Supplied AttributeValue is empty"));
        assert!(err(Value::map().with("S", "a").with("N", "1")).contains("more than one datatypes"));
        assert_eq!(
            err(av("N", "x")),
            "The parameter cannot be converted to a numeric value: x"
        );
        assert_eq!(
            err(av("SS", Value::List(vec![]))),
            "One or more parameter values were invalid: An string set  may not be empty"
        );
        assert_eq!(
            err(av("SS", Value::List(vec!["b".into(), "a".into(), "b".into()]))),
            "One or more parameter values were invalid: Input collection [\"a\", \"b\", \"b\"] contains duplicates."
        );
        let blobs = vec![
            Value::Blob(vec![0xff]),
            Value::Blob(vec![0]),
            Value::Blob(vec![0]),
        ];
        assert_eq!(
            err(av("BS", Value::List(blobs))),
            "One or more parameter values were invalid: Input collection [\"AA==\",\"/w==\",\"AA==\"]of type BS contains duplicates."
        );
        assert_eq!(
            err(av("NS", Value::List(vec!["1".into(), "1.0".into()]))),
            "One or more parameter values were invalid: Input collection contains duplicates."
        );
        assert!(err(av("NULL", false))
            .contains("Null attribute value types must have the value of true"));
        let mut deep = av("S", "x");
        for _ in 0..40 {
            deep = av("L", Value::List(vec![deep]));
        }
        assert!(err(deep).starts_with("Nesting Levels have exceeded supported limits"));
    }

    #[test]
    fn sizes_follow_dynamodb_accounting() {
        assert_eq!(Attr::S("abc".into()).size(), 3);
        assert_eq!(Attr::N(Number::parse("12345").unwrap()).size(), 4);
        assert_eq!(Attr::N(Number::parse("3.14159").unwrap()).size(), 5);
        assert_eq!(Attr::Bool(true).size(), 1);
        assert_eq!(Attr::L(vec![Attr::Null, Attr::Null]).size(), 3 + 2 * 2);
        let item = Item::from([("pk".to_string(), Attr::S("abc".into()))]);
        assert_eq!(item_size(&item), 5);
    }
}
