//! `roto.json`: JSON text to and from Lua values, for fixtures and for the JSON strings
//! AWS APIs take (IAM policies, SQS redrive policies, message bodies).
//!
//! A table whose keys are exactly 1..n (n > 0) is an array; any other table, the empty one
//! included, is an object. JSON `null` decodes to `roto.json.null`, which encodes back to
//! `null` and counts as an absent member in AWS inputs.

use mlua::{Lua, Value as LuaValue};
use serde_json::{Map, Number, Value as Json};

/// How deep a value may nest before encoding refuses it (a cycle, in practice).
const MAX_DEPTH: usize = 128;

/// Converts a Lua value to JSON.
pub(crate) fn to_json(value: &LuaValue) -> Result<Json, String> {
    encode(value, 0)
}

fn encode(value: &LuaValue, depth: usize) -> Result<Json, String> {
    if depth > MAX_DEPTH {
        return Err(format!(
            "nested more than {MAX_DEPTH} levels deep (a table that contains itself?)"
        ));
    }
    Ok(match value {
        LuaValue::Nil => Json::Null,
        LuaValue::LightUserData(u) if u.0.is_null() => Json::Null,
        LuaValue::Boolean(b) => Json::Bool(*b),
        LuaValue::Integer(i) => Json::Number((*i).into()),
        LuaValue::Number(f) => {
            Json::Number(Number::from_f64(*f).ok_or_else(|| format!("{f} has no JSON form"))?)
        }
        LuaValue::String(s) => Json::String(
            s.to_str()
                .map_err(|_| "strings must be UTF-8 to become JSON".to_string())?
                .to_string(),
        ),
        LuaValue::Table(t) => {
            let len = t.raw_len();
            let count = t.pairs::<LuaValue, LuaValue>().count();
            if len > 0 && count == len {
                let mut items = Vec::with_capacity(len);
                for item in t.sequence_values::<LuaValue>() {
                    items.push(encode(&item.map_err(|e| e.to_string())?, depth + 1)?);
                }
                Json::Array(items)
            } else {
                let mut obj = Map::new();
                for pair in t.pairs::<LuaValue, LuaValue>() {
                    let (k, v) = pair.map_err(|e| e.to_string())?;
                    let key = match &k {
                        LuaValue::String(s) => s
                            .to_str()
                            .map_err(|_| "object keys must be UTF-8".to_string())?
                            .to_string(),
                        LuaValue::Integer(i) => i.to_string(),
                        other => {
                            return Err(format!(
                                "object keys are strings, got a {}",
                                other.type_name()
                            ))
                        }
                    };
                    obj.insert(key, encode(&v, depth + 1)?);
                }
                Json::Object(obj)
            }
        }
        other => return Err(format!("a {} has no JSON form", other.type_name())),
    })
}

/// Converts JSON to a Lua value.
pub(crate) fn from_json(lua: &Lua, json: &Json) -> mlua::Result<LuaValue> {
    Ok(match json {
        Json::Null => LuaValue::NULL,
        Json::Bool(b) => LuaValue::Boolean(*b),
        Json::Number(n) => match n.as_i64() {
            Some(i) => LuaValue::Integer(i),
            None => LuaValue::Number(n.as_f64().unwrap_or(f64::NAN)),
        },
        Json::String(s) => LuaValue::String(lua.create_string(s)?),
        Json::Array(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for item in items {
                t.raw_push(from_json(lua, item)?)?;
            }
            LuaValue::Table(t)
        }
        Json::Object(obj) => {
            let t = lua.create_table_with_capacity(0, obj.len())?;
            for (k, v) in obj {
                t.raw_set(k.as_str(), from_json(lua, v)?)?;
            }
            LuaValue::Table(t)
        }
    })
}
