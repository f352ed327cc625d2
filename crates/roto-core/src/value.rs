//! The shaped value every codec produces and consumes.
//!
//! A request decoded by any protocol codec becomes a [`Value`] laid out like the operation's
//! input shape in the AWS model (member names as the model spells them), and a handler's
//! output is a [`Value`] laid out like the output shape. The codecs alone know the wire form;
//! handlers, Lua setup scripts and the in-process dispatcher all speak this one type.

use std::collections::BTreeMap;

/// Milliseconds since the Unix epoch, the precision AWS timestamps carry.
pub type EpochMillis = i64;

/// A value shaped by an AWS model shape: structures and maps are both [`Value::Map`].
#[derive(Debug, Clone, PartialEq)]
pub enum Value {
    /// `boolean` shapes.
    Bool(bool),
    /// `integer` and `long` shapes.
    Integer(i64),
    /// `float` and `double` shapes.
    Float(f64),
    /// `string` shapes (enums included).
    String(String),
    /// `blob` shapes, already decoded from base64 where the wire uses it.
    Blob(Vec<u8>),
    /// `timestamp` shapes.
    Timestamp(EpochMillis),
    /// `list` shapes.
    List(Vec<Value>),
    /// `structure` and `map` shapes, keyed by member name or map key.
    Map(BTreeMap<String, Value>),
    /// An explicit JSON `null` inside a document or a DynamoDB `NULL`-free position.
    Null,
}

impl Value {
    /// An empty structure or map.
    pub fn map() -> Value {
        Value::Map(BTreeMap::new())
    }

    /// Builder form of [`Value::insert`].
    pub fn with(mut self, key: impl Into<String>, value: impl Into<Value>) -> Value {
        self.insert(key, value);
        self
    }

    /// Builder form that skips `None`.
    pub fn with_opt(self, key: impl Into<String>, value: Option<impl Into<Value>>) -> Value {
        match value {
            Some(v) => self.with(key, v),
            None => self,
        }
    }

    /// Sets a member of a map; does nothing on other variants.
    pub fn insert(&mut self, key: impl Into<String>, value: impl Into<Value>) {
        if let Value::Map(m) = self {
            m.insert(key.into(), value.into());
        }
    }

    /// Removes and returns a member of a map.
    pub fn remove(&mut self, key: &str) -> Option<Value> {
        match self {
            Value::Map(m) => m.remove(key),
            _ => None,
        }
    }

    /// A member of a map.
    pub fn get(&self, key: &str) -> Option<&Value> {
        match self {
            Value::Map(m) => m.get(key),
            _ => None,
        }
    }

    /// The string member `key`, if present and a string.
    pub fn str(&self, key: &str) -> Option<&str> {
        self.get(key).and_then(Value::as_str)
    }

    /// The strings of the list member `key` (none if it is absent or no list), skipping
    /// entries that are not strings.
    pub fn strings(&self, key: &str) -> Vec<String> {
        self.get(key)
            .and_then(Value::as_list)
            .unwrap_or_default()
            .iter()
            .filter_map(Value::as_str)
            .map(str::to_string)
            .collect()
    }

    /// The integer member `key`, if present and an integer.
    pub fn int(&self, key: &str) -> Option<i64> {
        self.get(key).and_then(Value::as_i64)
    }

    /// The boolean member `key`, if present and a boolean.
    pub fn bool(&self, key: &str) -> Option<bool> {
        match self.get(key) {
            Some(Value::Bool(b)) => Some(*b),
            _ => None,
        }
    }

    /// The string, if this is one.
    pub fn as_str(&self) -> Option<&str> {
        match self {
            Value::String(s) => Some(s),
            _ => None,
        }
    }

    /// The integer, if this is one.
    pub fn as_i64(&self) -> Option<i64> {
        match self {
            Value::Integer(i) => Some(*i),
            _ => None,
        }
    }

    /// The entries, if this is a map or structure.
    pub fn as_map(&self) -> Option<&BTreeMap<String, Value>> {
        match self {
            Value::Map(m) => Some(m),
            _ => None,
        }
    }

    /// The items, if this is a list.
    pub fn as_list(&self) -> Option<&[Value]> {
        match self {
            Value::List(l) => Some(l),
            _ => None,
        }
    }

    /// The bytes, if this is a blob.
    pub fn as_blob(&self) -> Option<&[u8]> {
        match self {
            Value::Blob(b) => Some(b),
            _ => None,
        }
    }

    /// Converts a JSON document (as a store column or a `document` shape holds it).
    pub fn from_json(json: &serde_json::Value) -> Value {
        match json {
            serde_json::Value::Null => Value::Null,
            serde_json::Value::Bool(b) => Value::Bool(*b),
            serde_json::Value::Number(n) => match n.as_i64() {
                Some(i) => Value::Integer(i),
                None => Value::Float(n.as_f64().unwrap_or_default()),
            },
            serde_json::Value::String(s) => Value::String(s.clone()),
            serde_json::Value::Array(a) => Value::List(a.iter().map(Value::from_json).collect()),
            serde_json::Value::Object(o) => Value::Map(
                o.iter()
                    .map(|(k, v)| (k.clone(), Value::from_json(v)))
                    .collect(),
            ),
        }
    }

    /// The value as a JSON document (what [`Value::from_json`] reads back): blobs as
    /// base64, timestamps as epoch milliseconds, numbers JSON cannot hold as null.
    pub fn to_json(&self) -> serde_json::Value {
        use serde_json::Value as Json;
        match self {
            Value::Null => Json::Null,
            Value::Bool(b) => Json::Bool(*b),
            Value::Integer(i) => Json::from(*i),
            Value::Float(f) => serde_json::Number::from_f64(*f).map_or(Json::Null, Json::Number),
            Value::Timestamp(t) => Json::from(*t),
            Value::String(s) => Json::String(s.clone()),
            Value::Blob(b) => {
                use base64::Engine;
                Json::String(base64::engine::general_purpose::STANDARD.encode(b))
            }
            Value::List(l) => Json::Array(l.iter().map(Value::to_json).collect()),
            Value::Map(m) => {
                Json::Object(m.iter().map(|(k, v)| (k.clone(), v.to_json())).collect())
            }
        }
    }
}

impl From<&str> for Value {
    fn from(s: &str) -> Value {
        Value::String(s.to_owned())
    }
}

impl From<String> for Value {
    fn from(s: String) -> Value {
        Value::String(s)
    }
}

impl From<&String> for Value {
    fn from(s: &String) -> Value {
        Value::String(s.clone())
    }
}

impl From<bool> for Value {
    fn from(b: bool) -> Value {
        Value::Bool(b)
    }
}

impl From<i64> for Value {
    fn from(i: i64) -> Value {
        Value::Integer(i)
    }
}

impl From<i32> for Value {
    fn from(i: i32) -> Value {
        Value::Integer(i64::from(i))
    }
}

impl From<u32> for Value {
    fn from(i: u32) -> Value {
        Value::Integer(i64::from(i))
    }
}

impl From<usize> for Value {
    fn from(i: usize) -> Value {
        Value::Integer(i64::try_from(i).unwrap_or(i64::MAX))
    }
}

impl From<f64> for Value {
    fn from(f: f64) -> Value {
        Value::Float(f)
    }
}

impl From<Vec<Value>> for Value {
    fn from(l: Vec<Value>) -> Value {
        Value::List(l)
    }
}

impl From<BTreeMap<String, Value>> for Value {
    fn from(m: BTreeMap<String, Value>) -> Value {
        Value::Map(m)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn builder_sets_and_reads_members() {
        let v = Value::map()
            .with("Name", "q")
            .with("Count", 3i64)
            .with_opt("Missing", None::<&str>);
        assert_eq!(v.str("Name"), Some("q"));
        assert_eq!(v.int("Count"), Some(3));
        assert!(v.get("Missing").is_none());
    }

    #[test]
    fn json_documents_convert_with_integer_and_float_numbers() {
        let json = serde_json::json!({"a": [1, 2.5, null, "x"], "b": {"c": true}});
        let v = Value::from_json(&json);
        let a = v.get("a").and_then(Value::as_list).unwrap();
        assert_eq!(a[0], Value::Integer(1));
        assert_eq!(a[1], Value::Float(2.5));
        assert_eq!(a[2], Value::Null);
        assert_eq!(v.get("b").and_then(|b| b.bool("c")), Some(true));
        assert_eq!(v.to_json(), json);
    }

    #[test]
    fn blobs_and_timestamps_become_base64_and_epoch_millis() {
        let v = Value::map()
            .with("b", Value::Blob(vec![2, 3, 4]))
            .with("t", Value::Timestamp(1_500));
        assert_eq!(v.to_json(), serde_json::json!({"b": "AgME", "t": 1500}));
    }
}
