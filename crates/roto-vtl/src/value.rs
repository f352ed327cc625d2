//! The values templates compute with, modelled on the Java objects Velocity handles: strings,
//! numbers, booleans, lists and maps (kept in a per-render heap, so that `$list.add()` changes
//! the list every name refers to, and nothing outlives the render), and the conversions to
//! and from JSON and to Java's `toString()` text. Strings are shared with `Arc`, so that a
//! parsed template, which holds literal values, can be shared between threads.

use std::sync::Arc;

use serde_json::Value;

use crate::VtlError;

/// How deep `toString()` and JSON conversions follow nested lists and maps (a list can
/// contain itself).
const MAX_NESTING: usize = 128;

/// A value in a template.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Val {
    Null,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(Arc<str>),
    /// A list in the heap.
    List(usize),
    /// A map in the heap.
    Map(usize),
    /// A `#define` block, rendered where it is used.
    Block(usize),
    /// API Gateway's `$input`.
    Input,
    /// API Gateway's `$util`.
    Util,
}

impl Val {
    pub(crate) fn str(s: &str) -> Val {
        Val::Str(Arc::from(s))
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            Val::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The number as a float, for arithmetic and comparisons.
    pub(crate) fn as_f64(&self) -> Option<f64> {
        match self {
            Val::Int(n) => Some(*n as f64),
            Val::Float(x) => Some(*x),
            _ => None,
        }
    }

    /// Velocity's truth: everything but null and false.
    pub(crate) fn truthy(&self) -> bool {
        !matches!(self, Val::Null | Val::Bool(false))
    }
}

/// A list or a map. Maps keep their insertion order, as Velocity's map literals
/// (`LinkedHashMap`) and JSON objects do.
#[derive(Debug, Clone, Default)]
pub(crate) enum Obj {
    #[default]
    Empty,
    List(Vec<Val>),
    Map(Vec<(String, Val)>),
}

/// Every list and map of one render.
#[derive(Debug, Default)]
pub(crate) struct Heap {
    objects: Vec<Obj>,
    /// How many JSON values were imported so far (imports count as work).
    pub(crate) imported: usize,
}

/// How many lists and maps one render creates at most.
const MAX_OBJECTS: usize = 1_000_000;

impl Heap {
    pub(crate) fn list(&mut self, items: Vec<Val>) -> Result<Val, VtlError> {
        self.alloc(Obj::List(items)).map(Val::List)
    }

    pub(crate) fn map(&mut self, entries: Vec<(String, Val)>) -> Result<Val, VtlError> {
        self.alloc(Obj::Map(entries)).map(Val::Map)
    }

    fn alloc(&mut self, obj: Obj) -> Result<usize, VtlError> {
        if self.objects.len() >= MAX_OBJECTS {
            return Err(VtlError::new(
                "the template creates too many lists and maps",
            ));
        }
        self.objects.push(obj);
        Ok(self.objects.len() - 1)
    }

    pub(crate) fn items(&self, id: usize) -> &[Val] {
        match self.objects.get(id) {
            Some(Obj::List(items)) => items,
            _ => &[],
        }
    }

    pub(crate) fn items_mut(&mut self, id: usize) -> Option<&mut Vec<Val>> {
        match self.objects.get_mut(id) {
            Some(Obj::List(items)) => Some(items),
            _ => None,
        }
    }

    pub(crate) fn entries(&self, id: usize) -> &[(String, Val)] {
        match self.objects.get(id) {
            Some(Obj::Map(entries)) => entries,
            _ => &[],
        }
    }

    pub(crate) fn entries_mut(&mut self, id: usize) -> Option<&mut Vec<(String, Val)>> {
        match self.objects.get_mut(id) {
            Some(Obj::Map(entries)) => Some(entries),
            _ => None,
        }
    }

    /// The member `key` of map `id`.
    pub(crate) fn get(&self, id: usize, key: &str) -> Option<&Val> {
        self.entries(id)
            .iter()
            .find(|(k, _)| k == key)
            .map(|(_, v)| v)
    }

    /// Sets the member `key` of map `id`, returning what it replaced.
    pub(crate) fn put(&mut self, id: usize, key: &str, value: Val) -> Option<Val> {
        let entries = self.entries_mut(id)?;
        match entries.iter_mut().find(|(k, _)| k == key) {
            Some((_, slot)) => Some(std::mem::replace(slot, value)),
            None => {
                entries.push((key.to_string(), value));
                None
            }
        }
    }

    /// A JSON value as template values: objects become maps, arrays lists.
    pub(crate) fn import(&mut self, json: &Value) -> Result<Val, VtlError> {
        self.import_at(json, 0)
    }

    fn import_at(&mut self, json: &Value, depth: usize) -> Result<Val, VtlError> {
        if depth > MAX_NESTING {
            return Err(VtlError::new("a JSON value is nested too deeply"));
        }
        self.imported += 1;
        Ok(match json {
            Value::Null => Val::Null,
            Value::Bool(b) => Val::Bool(*b),
            Value::Number(n) => match n.as_i64() {
                Some(i) => Val::Int(i),
                None => Val::Float(n.as_f64().unwrap_or(f64::NAN)),
            },
            Value::String(s) => Val::str(s),
            Value::Array(items) => {
                let items = items
                    .iter()
                    .map(|item| self.import_at(item, depth + 1))
                    .collect::<Result<_, _>>()?;
                self.list(items)?
            }
            Value::Object(members) => {
                let entries = members
                    .iter()
                    .map(|(k, v)| Ok((k.clone(), self.import_at(v, depth + 1)?)))
                    .collect::<Result<_, VtlError>>()?;
                self.map(entries)?
            }
        })
    }

    /// A template value as JSON (blocks and the `$input`/`$util` tools become null).
    pub(crate) fn to_json(&self, val: &Val) -> Value {
        self.to_json_at(val, 0)
    }

    fn to_json_at(&self, val: &Val, depth: usize) -> Value {
        if depth > MAX_NESTING {
            return Value::Null;
        }
        match val {
            Val::Bool(b) => Value::Bool(*b),
            Val::Int(n) => Value::from(*n),
            Val::Float(x) => serde_json::Number::from_f64(*x).map_or(Value::Null, Value::Number),
            Val::Str(s) => Value::String(s.to_string()),
            Val::List(id) => Value::Array(
                self.items(*id)
                    .iter()
                    .map(|item| self.to_json_at(item, depth + 1))
                    .collect(),
            ),
            Val::Map(id) => Value::Object(
                self.entries(*id)
                    .iter()
                    .map(|(k, v)| (k.clone(), self.to_json_at(v, depth + 1)))
                    .collect(),
            ),
            Val::Null | Val::Block(_) | Val::Input | Val::Util => Value::Null,
        }
    }

    /// Java's `toString()`: `[a, b]` for lists, `{k=v}` for maps, `1.0E10` for large doubles.
    /// Blocks are rendered by the caller, not here.
    pub(crate) fn display(&self, val: &Val, out: &mut String) {
        self.display_at(val, out, 0);
    }

    fn display_at(&self, val: &Val, out: &mut String, depth: usize) {
        if depth > MAX_NESTING {
            out.push_str("...");
            return;
        }
        match val {
            Val::Null => out.push_str("null"),
            Val::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
            Val::Int(n) => out.push_str(&n.to_string()),
            Val::Float(x) => out.push_str(&java_double(*x)),
            Val::Str(s) => out.push_str(s),
            Val::List(id) => {
                out.push('[');
                for (at, item) in self.items(*id).iter().enumerate() {
                    if at > 0 {
                        out.push_str(", ");
                    }
                    self.display_at(item, out, depth + 1);
                }
                out.push(']');
            }
            Val::Map(id) => {
                out.push('{');
                for (at, (key, value)) in self.entries(*id).iter().enumerate() {
                    if at > 0 {
                        out.push_str(", ");
                    }
                    out.push_str(key);
                    out.push('=');
                    self.display_at(value, out, depth + 1);
                }
                out.push('}');
            }
            Val::Block(_) => {}
            Val::Input | Val::Util => out.push_str("{}"),
        }
    }

    /// Structural equality (Java's `equals`), numbers by value.
    pub(crate) fn equal(&self, a: &Val, b: &Val) -> bool {
        self.equal_at(a, b, 0)
    }

    fn equal_at(&self, a: &Val, b: &Val, depth: usize) -> bool {
        if depth > MAX_NESTING {
            return false;
        }
        match (a, b) {
            (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_)) => a.as_f64() == b.as_f64(),
            (Val::List(x), Val::List(y)) => {
                let (x, y) = (self.items(*x), self.items(*y));
                x.len() == y.len() && x.iter().zip(y).all(|(p, q)| self.equal_at(p, q, depth + 1))
            }
            (Val::Map(x), Val::Map(y)) => {
                let (x, y) = (self.entries(*x), self.entries(*y));
                x.len() == y.len()
                    && x.iter().all(|(k, v)| {
                        y.iter()
                            .any(|(k2, v2)| k == k2 && self.equal_at(v, v2, depth + 1))
                    })
            }
            _ => a == b,
        }
    }
}

/// Java's `Double.toString`: plain between 10^-3 and 10^7, scientific (`1.0E10`) outside,
/// always with a fractional digit.
pub(crate) fn java_double(x: f64) -> String {
    if x.is_nan() {
        return "NaN".to_string();
    }
    if x.is_infinite() {
        return if x > 0.0 { "Infinity" } else { "-Infinity" }.to_string();
    }
    let abs = x.abs();
    if abs == 0.0 || (1e-3..1e7).contains(&abs) {
        let plain = x.to_string();
        return if plain.contains('.') {
            plain
        } else {
            plain + ".0"
        };
    }
    let scientific = format!("{x:e}");
    let (mantissa, exponent) = scientific.split_once('e').unwrap_or((&scientific, "0"));
    if mantissa.contains('.') {
        format!("{mantissa}E{exponent}")
    } else {
        format!("{mantissa}.0E{exponent}")
    }
}
