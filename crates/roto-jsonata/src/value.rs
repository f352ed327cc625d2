//! The values an evaluation works on: JSON values plus functions, with the flags JSONata
//! keeps on arrays (a result sequence, keep-singleton, a constructed array, a tuple stream),
//! JavaScript's number formatting, and conversion from and to `serde_json::Value`.

use std::rc::Rc;

use indexmap::IndexMap;
use serde_json::Value;

use crate::error::Error;
use crate::eval::Fun;

/// The deepest value the recursive walks (equality, stringify, output) descend into.
pub(crate) const MAX_VALUE_DEPTH: usize = 600;

/// An object's members in insertion order; `id` marks the copies a transform edits.
#[derive(Clone, Default)]
pub(crate) struct Object {
    pub map: IndexMap<String, V>,
    pub id: u64,
}

/// An array and JSONata's flags on it.
#[derive(Clone, Default)]
pub(crate) struct Arr {
    pub items: Vec<V>,
    /// A sequence of results rather than an array value.
    pub seq: bool,
    /// A singleton sequence that stays an array (`[]`).
    pub keep: bool,
    /// Made by an array constructor: never flattened.
    pub cons: bool,
    /// A stream of binding tuples (objects keyed by variable and label).
    pub tuples: bool,
    /// The input document's own array, wrapped as a one-item sequence.
    pub outer: bool,
}

/// A value.
#[derive(Clone)]
pub(crate) enum V {
    Null,
    Bool(bool),
    Num(f64),
    Str(Rc<str>),
    Arr(Rc<Arr>),
    Obj(Rc<Object>),
    Fun(Rc<Fun>),
}

impl Drop for Arr {
    fn drop(&mut self) {
        drop_iteratively(std::mem::take(&mut self.items));
    }
}

impl Drop for Object {
    fn drop(&mut self) {
        drop_iteratively(std::mem::take(&mut self.map).into_values().collect());
    }
}

/// Frees deep values without recursing: uniquely owned children are moved to a work list.
fn drop_iteratively(mut stack: Vec<V>) {
    while let Some(v) = stack.pop() {
        match v {
            V::Arr(rc) => {
                if let Ok(mut arr) = Rc::try_unwrap(rc) {
                    stack.append(&mut arr.items);
                }
            }
            V::Obj(rc) => {
                if let Ok(mut obj) = Rc::try_unwrap(rc) {
                    stack.extend(std::mem::take(&mut obj.map).into_values());
                }
            }
            _ => {}
        }
    }
}

impl V {
    pub(crate) fn str(s: &str) -> V {
        V::Str(Rc::from(s))
    }

    pub(crate) fn string(s: String) -> V {
        V::Str(Rc::from(s))
    }

    /// A plain array value.
    pub(crate) fn array(items: Vec<V>) -> V {
        V::Arr(Rc::new(Arr {
            items,
            ..Arr::default()
        }))
    }

    /// A result sequence.
    pub(crate) fn seq(items: Vec<V>) -> V {
        V::Arr(Rc::new(Arr {
            items,
            seq: true,
            ..Arr::default()
        }))
    }

    pub(crate) fn object(map: IndexMap<String, V>) -> V {
        V::Obj(Rc::new(Object { map, id: 0 }))
    }

    pub(crate) fn as_arr(&self) -> Option<&Arr> {
        match self {
            V::Arr(a) => Some(a),
            _ => None,
        }
    }

    pub(crate) fn is_fun(&self) -> bool {
        matches!(self, V::Fun(_))
    }

    pub(crate) fn as_num(&self) -> Option<f64> {
        match self {
            V::Num(n) => Some(*n),
            _ => None,
        }
    }

    pub(crate) fn as_str(&self) -> Option<&str> {
        match self {
            V::Str(s) => Some(s),
            _ => None,
        }
    }

    /// The items of an array, or the value itself as a one-item list.
    pub(crate) fn items(&self) -> Vec<V> {
        match self {
            V::Arr(a) => a.items.clone(),
            other => vec![other.clone()],
        }
    }

    /// The signature letter of the value's type.
    pub(crate) fn symbol(&self) -> char {
        match self {
            V::Null => 'l',
            V::Bool(_) => 'b',
            V::Num(_) => 'n',
            V::Str(_) => 's',
            V::Arr(_) => 'a',
            V::Obj(_) => 'o',
            V::Fun(_) => 'f',
        }
    }

    /// `$type`'s name for the value.
    pub(crate) fn type_name(&self) -> &'static str {
        match self {
            V::Null => "null",
            V::Bool(_) => "boolean",
            V::Num(_) => "number",
            V::Str(_) => "string",
            V::Arr(_) => "array",
            V::Obj(_) => "object",
            V::Fun(_) => "function",
        }
    }
}

/// A number checked as JSONata checks operands: finite, or D1001.
pub(crate) fn numeric(v: &V) -> Result<Option<f64>, Error> {
    match v {
        V::Num(n) if n.is_nan() => Ok(None),
        V::Num(n) if !n.is_finite() => Err(Error::new("D1001").value(format_number(*n))),
        V::Num(n) => Ok(Some(*n)),
        _ => Ok(None),
    }
}

/// Converts a JSON value into an evaluation value.
pub(crate) fn from_json(value: &Value) -> V {
    match value {
        Value::Null => V::Null,
        Value::Bool(b) => V::Bool(*b),
        Value::Number(n) => V::Num(n.as_f64().unwrap_or(f64::NAN)),
        Value::String(s) => V::str(s),
        Value::Array(items) => V::array(items.iter().map(from_json).collect()),
        Value::Object(map) => {
            V::object(map.iter().map(|(k, v)| (k.clone(), from_json(v))).collect())
        }
    }
}

/// Converts a result into JSON as `JSON.stringify` would: functions vanish from objects and
/// become `null` in arrays; non-finite numbers are D1001.
pub(crate) fn to_json(v: &V, depth: usize) -> Result<Option<Value>, Error> {
    if depth > MAX_VALUE_DEPTH {
        return Err(Error::new("U1001"));
    }
    Ok(Some(match v {
        V::Null => Value::Null,
        V::Bool(b) => Value::Bool(*b),
        V::Num(n) => json_number(*n)?,
        V::Str(s) => Value::String(s.to_string()),
        V::Arr(a) => {
            let mut out = Vec::with_capacity(a.items.len());
            for item in &a.items {
                out.push(to_json(item, depth + 1)?.unwrap_or(Value::Null));
            }
            Value::Array(out)
        }
        V::Obj(o) => {
            let mut out = serde_json::Map::new();
            for (k, item) in &o.map {
                if let Some(item) = to_json(item, depth + 1)? {
                    out.insert(k.clone(), item);
                }
            }
            Value::Object(out)
        }
        V::Fun(_) => return Ok(None),
    }))
}

fn json_number(n: f64) -> Result<Value, Error> {
    if !n.is_finite() {
        return Err(Error::new("D1001").value(format_number(n)));
    }
    if n.fract() == 0.0 && n.abs() < 9_007_199_254_740_992.0 {
        return Ok(Value::from(n as i64));
    }
    Ok(serde_json::Number::from_f64(n).map_or(Value::Null, Value::Number))
}

/// A number as JavaScript's `Number.prototype.toString` writes it.
pub(crate) fn format_number(n: f64) -> String {
    if n.is_nan() {
        return "NaN".into();
    }
    if n.is_infinite() {
        return if n > 0.0 { "Infinity" } else { "-Infinity" }.into();
    }
    if n == 0.0 {
        return "0".into();
    }
    let sci = format!("{:e}", n.abs());
    let (mantissa, exp) = sci.split_once('e').unwrap_or((&sci, "0"));
    let digits: String = mantissa.chars().filter(|c| *c != '.').collect();
    let exp: i32 = exp.parse().unwrap_or(0);
    let k = digits.len() as i32;
    let point = exp + 1;
    let sign = if n < 0.0 { "-" } else { "" };
    let body = if k <= point && point <= 21 {
        format!("{digits}{}", "0".repeat((point - k) as usize))
    } else if 0 < point && point <= 21 {
        format!(
            "{}.{}",
            &digits[..point as usize],
            &digits[point as usize..]
        )
    } else if -6 < point && point <= 0 {
        format!("0.{}{digits}", "0".repeat((-point) as usize))
    } else {
        let e = point - 1;
        let e = if e >= 0 {
            format!("+{e}")
        } else {
            e.to_string()
        };
        if k == 1 {
            format!("{digits}e{e}")
        } else {
            format!("{}.{}e{e}", &digits[..1], &digits[1..])
        }
    };
    format!("{sign}{body}")
}

/// `Number(n.toPrecision(15))`, which `$string` applies before writing a number.
pub(crate) fn precision15(n: f64) -> f64 {
    format!("{n:.14e}").parse().unwrap_or(n)
}

/// `JSON.stringify` with JSONata's replacer: fractions at 15 significant digits, functions as
/// empty strings; `indent` is `Some(2)` for `$string(x, true)`.
pub(crate) fn stringify(v: &V, pretty: bool) -> Result<String, Error> {
    let mut out = String::new();
    write_json(&mut out, v, pretty, 0)?;
    Ok(out)
}

fn write_json(out: &mut String, v: &V, pretty: bool, depth: usize) -> Result<(), Error> {
    if depth > MAX_VALUE_DEPTH {
        return Err(Error::new("U1001"));
    }
    match v {
        V::Null => out.push_str("null"),
        V::Bool(b) => out.push_str(if *b { "true" } else { "false" }),
        V::Num(n) if n.is_finite() && n.fract() == 0.0 => out.push_str(&format_number(*n)),
        V::Num(n) if n.is_finite() => out.push_str(&format_number(precision15(*n))),
        V::Num(_) => out.push_str("null"),
        V::Str(s) => write_string(out, s),
        V::Fun(_) => out.push_str("\"\""),
        V::Arr(a) => {
            let items: Vec<&V> = a.items.iter().collect();
            if items.is_empty() {
                out.push_str("[]");
                return Ok(());
            }
            out.push('[');
            for (i, item) in items.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, pretty, depth + 1);
                write_json(out, item, pretty, depth + 1)?;
            }
            newline(out, pretty, depth);
            out.push(']');
        }
        V::Obj(o) => {
            if o.map.is_empty() {
                out.push_str("{}");
                return Ok(());
            }
            out.push('{');
            for (i, (k, item)) in o.map.iter().enumerate() {
                if i > 0 {
                    out.push(',');
                }
                newline(out, pretty, depth + 1);
                write_string(out, k);
                out.push(':');
                if pretty {
                    out.push(' ');
                }
                write_json(out, item, pretty, depth + 1)?;
            }
            newline(out, pretty, depth);
            out.push('}');
        }
    }
    Ok(())
}

fn newline(out: &mut String, pretty: bool, depth: usize) {
    if pretty {
        out.push('\n');
        out.push_str(&"  ".repeat(depth));
    }
}

fn write_string(out: &mut String, s: &str) {
    out.push_str(&Value::from(s).to_string());
}

/// JSONata's deep equality (`=`): numbers by value, arrays by items, objects by members.
pub(crate) fn deep_equal(a: &V, b: &V, depth: usize) -> bool {
    if depth > MAX_VALUE_DEPTH {
        return false;
    }
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Num(x), V::Num(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::Arr(x), V::Arr(y)) => {
            x.items.len() == y.items.len()
                && x.items
                    .iter()
                    .zip(&y.items)
                    .all(|(p, q)| deep_equal(p, q, depth + 1))
        }
        (V::Obj(x), V::Obj(y)) => {
            x.map.len() == y.map.len()
                && x.map
                    .iter()
                    .all(|(k, p)| y.map.get(k).is_some_and(|q| deep_equal(p, q, depth + 1)))
        }
        (V::Fun(x), V::Fun(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

/// JSONata's `$boolean`; an array is true when any value inside it is.
pub(crate) fn boolean(v: &V) -> bool {
    match v {
        V::Null => false,
        V::Bool(b) => *b,
        V::Num(n) => *n != 0.0,
        V::Str(s) => !s.is_empty(),
        V::Fun(_) => false,
        V::Obj(o) => !o.map.is_empty(),
        V::Arr(_) => leaves(v).iter().any(boolean),
    }
}

/// The values inside nested arrays, in order, without recursing (arrays can be built deeper
/// than any stack).
pub(crate) fn leaves(v: &V) -> Vec<V> {
    let mut out = Vec::new();
    let mut stack = vec![v.clone()];
    while let Some(item) = stack.pop() {
        match item {
            V::Arr(a) => stack.extend(a.items.iter().rev().cloned()),
            other => out.push(other),
        }
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn numbers_print_as_javascript_prints_them() {
        assert_eq!(format_number(1.0), "1");
        assert_eq!(format_number(-0.5), "-0.5");
        assert_eq!(format_number(1e21), "1e+21");
        assert_eq!(format_number(1e20), "100000000000000000000");
        assert_eq!(format_number(1.5e-7), "1.5e-7");
        assert_eq!(format_number(0.000001), "0.000001");
        assert_eq!(format_number(123.456), "123.456");
        assert_eq!(format_number(precision15(0.1 + 0.2)), "0.3");
    }
}
