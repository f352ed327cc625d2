//! Lua values to and from the shaped [`Value`] the dispatcher speaks.
//!
//! Inputs are converted by the operation's input shape, the way the SDKs serialise them, so
//! a script writes what it would pass to boto3: a Lua string is the bytes of a `blob`, a
//! number or an ISO 8601 string is a `timestamp`, and a number where the shape is a string
//! (DynamoDB's `N`) becomes its exact decimal text (Lua integers are 64-bit, so
//! `9007199254740993` survives). Unknown members and wrong types are refused with the path
//! of the offending member. Outputs carry their own types: blobs come back as Lua strings of
//! bytes and timestamps as numbers of epoch seconds.

use std::collections::BTreeMap;

use mlua::{Lua, Table, Value as LuaValue};
use roto_core::model::{Model, Shape, ShapeKind, ShapeRef};
use roto_core::timestamp;
use roto_core::value::Value;

use crate::json;
use crate::suggest::closest;

/// Converts a Lua value into the shape `r` points at; `path` names it in error messages.
pub(crate) fn input(
    model: &Model,
    r: &ShapeRef,
    lua: &LuaValue,
    path: &str,
) -> Result<Value, String> {
    let shape = model.resolve(r);
    if shape.document {
        return json::to_json(lua)
            .map(|j| Value::from_json(&j))
            .map_err(|e| format!("{path}: {e}"));
    }
    let mismatch = |expected: &str| format!("{path}: expected {expected}, got {}", describe(lua));
    Ok(match (shape.kind, lua) {
        (ShapeKind::Structure, LuaValue::Table(t)) => structure(model, shape, t, path)?,
        (ShapeKind::List, LuaValue::Table(t)) => list(model, shape, t, path)?,
        (ShapeKind::Map, LuaValue::Table(t)) => map(model, shape, t, path)?,
        (ShapeKind::String, LuaValue::String(s)) => Value::String(
            s.to_str()
                .map_err(|_| {
                    format!("{path}: expected a UTF-8 string, got bytes that are not UTF-8")
                })?
                .to_string(),
        ),
        (ShapeKind::String, LuaValue::Integer(i)) => Value::String(i.to_string()),
        (ShapeKind::String, LuaValue::Number(f)) if f.is_finite() => {
            Value::String(format!("{f:?}"))
        }
        (ShapeKind::Boolean, LuaValue::Boolean(b)) => Value::Bool(*b),
        (ShapeKind::Integer | ShapeKind::Long, LuaValue::Integer(i)) => Value::Integer(*i),
        (ShapeKind::Integer | ShapeKind::Long, LuaValue::Number(f))
            if f.fract() == 0.0 && f.abs() < 9.2e18 =>
        {
            // The guard keeps the value inside i64, so the cast is exact.
            Value::Integer(*f as i64)
        }
        (ShapeKind::Float | ShapeKind::Double, LuaValue::Integer(i)) => Value::Float(*i as f64),
        (ShapeKind::Float | ShapeKind::Double, LuaValue::Number(f)) => Value::Float(*f),
        (ShapeKind::Blob, LuaValue::String(s)) => Value::Blob(s.as_bytes().to_vec()),
        (ShapeKind::Timestamp, LuaValue::Integer(i)) => Value::Timestamp(
            i.checked_mul(1000)
                .ok_or_else(|| mismatch("a timestamp in epoch seconds"))?,
        ),
        (ShapeKind::Timestamp, LuaValue::Number(f)) => Value::Timestamp(
            timestamp::secs_to_millis(*f)
                .ok_or_else(|| mismatch("a timestamp in epoch seconds"))?,
        ),
        (ShapeKind::Timestamp, LuaValue::String(s)) => Value::Timestamp(
            s.to_str()
                .ok()
                .and_then(|s| timestamp::parse(&s))
                .ok_or_else(|| {
                    format!(
                        "{path}: expected a timestamp (epoch seconds or ISO 8601 like \
                         2024-01-31T12:00:00Z), got {}",
                        describe(lua)
                    )
                })?,
        ),
        (kind, _) => return Err(mismatch(expected(kind))),
    })
}

fn expected(kind: ShapeKind) -> &'static str {
    match kind {
        ShapeKind::Structure => "a table of members",
        ShapeKind::List => "a list (a table with keys 1..n)",
        ShapeKind::Map => "a table with string keys",
        ShapeKind::String => "a string",
        ShapeKind::Boolean => "a boolean",
        ShapeKind::Integer | ShapeKind::Long => "an integer",
        ShapeKind::Float | ShapeKind::Double => "a number",
        ShapeKind::Blob => "a string of bytes",
        ShapeKind::Timestamp => "a timestamp (epoch seconds or an ISO 8601 string)",
    }
}

/// A Lua value's type and, for scalars, the value itself, for error messages.
pub(crate) fn describe(lua: &LuaValue) -> String {
    match lua {
        LuaValue::String(s) => match s.to_str() {
            Ok(text) if text.chars().count() <= 40 => format!("the string {:?}", &*text),
            _ => "a string".into(),
        },
        LuaValue::Integer(i) => format!("the number {i}"),
        LuaValue::Number(f) => format!("the number {f}"),
        LuaValue::Boolean(b) => format!("the boolean {b}"),
        LuaValue::Nil => "nil".into(),
        other => format!("a {}", other.type_name()),
    }
}

/// `roto.json.null` (a light userdata NULL) stands for an absent member.
fn is_null(lua: &LuaValue) -> bool {
    match lua {
        LuaValue::Nil => true,
        LuaValue::LightUserData(u) => u.0.is_null(),
        _ => false,
    }
}

fn key_name(key: &LuaValue, path: &str, what: &str) -> Result<String, String> {
    match key {
        LuaValue::String(s) => s
            .to_str()
            .map(|s| s.to_string())
            .map_err(|_| format!("{path}: {what} are UTF-8 strings")),
        other => Err(format!(
            "{path}: {what} are strings, got a key that is {}",
            describe(other)
        )),
    }
}

fn structure(model: &Model, shape: &Shape, table: &Table, path: &str) -> Result<Value, String> {
    let mut out = BTreeMap::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|e| format!("{path}: {e}"))?;
        let name = key_name(&key, path, "member names")?;
        let Some(member) = shape.members.get(&name) else {
            return Err(unknown_member(shape, &name, path));
        };
        if !is_null(&value) {
            let sub = format!("{path}.{name}");
            out.insert(name, input(model, member, &value, &sub)?);
        }
    }
    Ok(Value::Map(out))
}

fn unknown_member(shape: &Shape, name: &str, path: &str) -> String {
    let names: Vec<&str> = shape.members.iter().map(|(n, _)| n).collect();
    match closest(name, &names) {
        Some(guess) => format!("{path}: no member named '{name}'; did you mean '{guess}'?"),
        None if names.is_empty() => format!("{path}: takes no members, got '{name}'"),
        None => format!(
            "{path}: no member named '{name}' (members: {})",
            names.join(", ")
        ),
    }
}

fn list(model: &Model, shape: &Shape, table: &Table, path: &str) -> Result<Value, String> {
    let Some(member) = shape.member.as_deref() else {
        return Err(format!("{path}: the model's list has no member shape"));
    };
    let len = table.raw_len();
    let count = table.pairs::<LuaValue, LuaValue>().count();
    if count != len {
        return Err(format!(
            "{path}: expected a list (a table with keys 1..n), got a table with other keys"
        ));
    }
    let mut out = Vec::with_capacity(len);
    for (i, item) in table.sequence_values::<LuaValue>().enumerate() {
        let item = item.map_err(|e| format!("{path}: {e}"))?;
        if !is_null(&item) {
            out.push(input(model, member, &item, &format!("{path}[{}]", i + 1))?);
        }
    }
    Ok(Value::List(out))
}

fn map(model: &Model, shape: &Shape, table: &Table, path: &str) -> Result<Value, String> {
    let Some(value_ref) = shape.value.as_deref() else {
        return Err(format!("{path}: the model's map has no value shape"));
    };
    let mut out = BTreeMap::new();
    for pair in table.pairs::<LuaValue, LuaValue>() {
        let (key, value) = pair.map_err(|e| format!("{path}: {e}"))?;
        let name = key_name(&key, path, "map keys")?;
        if !is_null(&value) {
            let sub = format!("{path}.{name}");
            out.insert(name, input(model, value_ref, &value, &sub)?);
        }
    }
    Ok(Value::Map(out))
}

/// Converts an output value into Lua: maps and structures become tables, lists sequences,
/// blobs strings of bytes, timestamps numbers of epoch seconds (integers when whole).
pub(crate) fn output(lua: &Lua, value: &Value) -> mlua::Result<LuaValue> {
    Ok(match value {
        Value::Bool(b) => LuaValue::Boolean(*b),
        Value::Integer(i) => LuaValue::Integer(*i),
        Value::Float(f) => LuaValue::Number(*f),
        Value::String(s) => LuaValue::String(lua.create_string(s)?),
        Value::Blob(b) => LuaValue::String(lua.create_string(b)?),
        Value::Timestamp(ms) if ms % 1000 == 0 => LuaValue::Integer(ms / 1000),
        Value::Timestamp(ms) => LuaValue::Number(timestamp::epoch_seconds(*ms)),
        Value::List(items) => {
            let t = lua.create_table_with_capacity(items.len(), 0)?;
            for item in items {
                t.raw_push(output(lua, item)?)?;
            }
            LuaValue::Table(t)
        }
        Value::Map(m) => {
            let t = lua.create_table_with_capacity(0, m.len())?;
            for (k, v) in m {
                t.raw_set(k.as_str(), output(lua, v)?)?;
            }
            LuaValue::Table(t)
        }
        Value::Null => LuaValue::NULL,
    })
}
