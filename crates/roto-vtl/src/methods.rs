//! The Java methods templates call on strings, lists, maps and numbers (`$s.substring(1)`,
//! `$list.add($x)`, `$map.keySet()`), with Java's results: indexes count UTF-16 units, a
//! method Java declares `void` gives an empty string, an index out of range is an error,
//! and a method that does not exist gives null (so the reference prints as written).

use std::sync::Arc;

use regex_lite::Regex;

use crate::render::Renderer;
use crate::value::Val;
use crate::VtlError;

impl Renderer<'_> {
    /// `recv.name(args)`.
    pub(crate) fn method(&mut self, recv: &Val, name: &str, args: &[Val]) -> Result<Val, VtlError> {
        let found = match recv {
            Val::Str(s) => self.string_method(s, name, args)?,
            Val::List(id) => self.list_method(*id, name, args)?,
            Val::Map(id) => self.map_method(*id, name, args)?,
            Val::Input => self.input_method(name, args)?,
            Val::Util => self.util_method(name, args)?,
            _ => None,
        };
        match found {
            Some(val) => Ok(val),
            None => self.object_method(recv, name, args),
        }
    }

    /// Methods every object (or every number) has.
    fn object_method(&mut self, recv: &Val, name: &str, args: &[Val]) -> Result<Val, VtlError> {
        Ok(match (name, args) {
            ("toString", []) => {
                let text = self.text_of(recv)?;
                self.string(text)?
            }
            ("equals", [other]) => Val::Bool(self.heap.equal(recv, other)),
            ("hashCode", []) => Val::Int(0),
            ("intValue" | "longValue", []) => match recv {
                Val::Int(n) => Val::Int(*n),
                Val::Float(x) => Val::Int(*x as i64),
                _ => Val::Null,
            },
            ("doubleValue" | "floatValue", []) => recv.as_f64().map_or(Val::Null, Val::Float),
            ("booleanValue", []) => match recv {
                Val::Bool(b) => Val::Bool(*b),
                _ => Val::Null,
            },
            ("compareTo", [other]) => {
                let ordering = match (recv, other) {
                    (Val::Str(a), Val::Str(b)) => Some(a.cmp(b)),
                    _ => recv
                        .as_f64()
                        .zip(other.as_f64())
                        .and_then(|(a, b)| a.partial_cmp(&b)),
                };
                ordering.map_or(Val::Null, |o| Val::Int(o as i64))
            }
            _ => Val::Null,
        })
    }

    fn string_method(
        &mut self,
        s: &Arc<str>,
        name: &str,
        args: &[Val],
    ) -> Result<Option<Val>, VtlError> {
        let arg = |at: usize| args.get(at).and_then(Val::as_str);
        let units = || s.encode_utf16().count();
        Ok(Some(match (name, args.len()) {
            ("length", 0) => Val::Int(units() as i64),
            ("isEmpty", 0) => Val::Bool(s.is_empty()),
            ("trim", 0) => self.string(s.trim_matches(|c: char| c <= ' ').to_string())?,
            ("toLowerCase", 0) => self.string(s.to_lowercase())?,
            ("toUpperCase", 0) => self.string(s.to_uppercase())?,
            ("toString", 0) => Val::Str(s.clone()),
            ("substring", 1 | 2) => {
                let begin = int_arg(args, 0)?;
                let end = match args.get(1) {
                    Some(_) => int_arg(args, 1)?,
                    None => units() as i64,
                };
                self.string(substring(s, begin, end)?.to_string())?
            }
            ("charAt", 1) => {
                let at = int_arg(args, 0)?;
                self.string(substring(s, at, at + 1)?.to_string())?
            }
            ("indexOf", 1 | 2) | ("lastIndexOf", 1) => {
                let Some(needle) = arg(0) else {
                    return Ok(None);
                };
                let from = if args.len() == 2 {
                    int_arg(args, 1)?.max(0)
                } else {
                    0
                };
                let start = byte_at(s, from as usize).unwrap_or(s.len());
                let found = if name == "indexOf" {
                    s[start..].find(needle).map(|at| at + start)
                } else {
                    s.rfind(needle)
                };
                Val::Int(found.map_or(-1, |at| s[..at].encode_utf16().count() as i64))
            }
            ("contains" | "startsWith" | "endsWith" | "equals" | "equalsIgnoreCase", 1) => {
                let Some(other) = arg(0) else {
                    return Ok(Some(Val::Bool(false)));
                };
                Val::Bool(match name {
                    "contains" => s.contains(other),
                    "startsWith" => s.starts_with(other),
                    "endsWith" => s.ends_with(other),
                    "equals" => **s == *other,
                    _ => s.to_lowercase() == other.to_lowercase(),
                })
            }
            ("concat", 1) => match arg(0) {
                Some(other) => self.string(format!("{s}{other}"))?,
                None => return Ok(None),
            },
            ("replace", 2) => match (arg(0), arg(1)) {
                (Some(from), Some(to)) => self.string(s.replace(from, to))?,
                _ => return Ok(None),
            },
            ("replaceAll" | "replaceFirst" | "matches" | "split", _) => {
                return self.regex_method(s, name, args)
            }
            _ => return Ok(None),
        }))
    }

    /// The string methods that take a Java regular expression.
    fn regex_method(&mut self, s: &str, name: &str, args: &[Val]) -> Result<Option<Val>, VtlError> {
        let Some(pattern) = args.first().and_then(Val::as_str) else {
            return Ok(None);
        };
        Ok(Some(match (name, args.get(1)) {
            ("matches", None) => {
                let re = self.regex(&format!("^(?:{pattern})$"))?;
                Val::Bool(re.is_match(s))
            }
            ("replaceAll" | "replaceFirst", Some(Val::Str(to))) => {
                let re = self.regex(pattern)?;
                let to = java_replacement(to);
                let replaced = if name == "replaceAll" {
                    re.replace_all(s, to.as_str())
                } else {
                    re.replace(s, to.as_str())
                };
                self.string(replaced.into_owned())?
            }
            ("split", limit) => {
                let limit = match limit {
                    Some(Val::Int(n)) => *n,
                    Some(_) => return Ok(None),
                    None => 0,
                };
                let re = self.regex(pattern)?;
                let pieces = split(&re, s, limit);
                self.charge(pieces.len() + s.len() / 64)?;
                self.heap.list(pieces.into_iter().map(Val::str).collect())?
            }
            _ => return Ok(None),
        }))
    }

    fn list_method(
        &mut self,
        id: usize,
        name: &str,
        args: &[Val],
    ) -> Result<Option<Val>, VtlError> {
        let len = self.heap.items(id).len();
        Ok(Some(match (name, args) {
            ("size", []) => Val::Int(len as i64),
            ("isEmpty", []) => Val::Bool(len == 0),
            ("get", [_]) => {
                let at = list_index(args, len, false)?;
                self.heap.items(id)[at].clone()
            }
            ("add", [item]) => {
                self.grow(id, vec![item.clone()], len)?;
                Val::Bool(true)
            }
            ("add", [_, item]) => {
                let at = list_index(args, len, true)?;
                self.charge(1)?;
                if let Some(items) = self.heap.items_mut(id) {
                    items.insert(at, item.clone());
                }
                Val::str("")
            }
            ("addAll", [Val::List(other)]) => {
                let more = self.heap.items(*other).to_vec();
                self.grow(id, more, len)?;
                Val::Bool(true)
            }
            ("set", [_, item]) => {
                let at = list_index(args, len, false)?;
                let slot = self.heap.items_mut(id).and_then(|items| items.get_mut(at));
                slot.map_or(Val::Null, |slot| std::mem::replace(slot, item.clone()))
            }
            ("remove", [Val::Int(_)]) => {
                let at = list_index(args, len, false)?;
                self.heap
                    .items_mut(id)
                    .map_or(Val::Null, |items| items.remove(at))
            }
            ("remove", [item]) => {
                let found = self.position(id, item);
                if let (Some(at), Some(items)) = (found, self.heap.items_mut(id)) {
                    items.remove(at);
                }
                Val::Bool(found.is_some())
            }
            ("contains", [item]) => Val::Bool(self.position(id, item).is_some()),
            ("indexOf", [item]) => Val::Int(self.position(id, item).map_or(-1, |at| at as i64)),
            ("clear", []) => {
                if let Some(items) = self.heap.items_mut(id) {
                    items.clear();
                }
                Val::str("")
            }
            ("subList", [Val::Int(from), Val::Int(to)]) => {
                let (from, to) = (usize::try_from(*from), usize::try_from(*to));
                let (Ok(from), Ok(to)) = (from, to) else {
                    return Err(out_of_bounds());
                };
                let items = self.heap.items(id);
                let Some(part) = items.get(from..to) else {
                    return Err(out_of_bounds());
                };
                let part = part.to_vec();
                self.heap.list(part)?
            }
            _ => return Ok(None),
        }))
    }

    /// Appends to list `id` (of `len` items), counting the items as work.
    fn grow(&mut self, id: usize, more: Vec<Val>, len: usize) -> Result<(), VtlError> {
        self.charge(more.len() + len / 1024)?;
        if let Some(items) = self.heap.items_mut(id) {
            items.extend(more);
        }
        Ok(())
    }

    fn position(&self, id: usize, item: &Val) -> Option<usize> {
        self.heap
            .items(id)
            .iter()
            .position(|candidate| self.heap.equal(candidate, item))
    }

    fn map_method(&mut self, id: usize, name: &str, args: &[Val]) -> Result<Option<Val>, VtlError> {
        let entries = self.heap.entries(id);
        Ok(Some(match (name, args) {
            ("size", []) => Val::Int(entries.len() as i64),
            ("isEmpty", []) => Val::Bool(entries.is_empty()),
            ("keySet", []) => {
                let keys = entries.iter().map(|(k, _)| Val::str(k)).collect();
                self.heap.list(keys)?
            }
            ("values", []) => {
                let values = entries.iter().map(|(_, v)| v.clone()).collect();
                self.heap.list(values)?
            }
            ("entrySet", []) => self.entry_set(id)?,
            ("containsValue", [value]) => Val::Bool(
                entries
                    .iter()
                    .any(|(_, candidate)| self.heap.equal(candidate, value)),
            ),
            ("get" | "containsKey" | "remove", [key]) => {
                let key = self.text_of(key)?;
                match name {
                    "get" => self.heap.get(id, &key).cloned().unwrap_or(Val::Null),
                    "containsKey" => Val::Bool(self.heap.get(id, &key).is_some()),
                    _ => self.remove(id, &key),
                }
            }
            ("put", [key, value]) => {
                let key = self.text_of(key)?;
                self.charge(1)?;
                self.heap.put(id, &key, value.clone()).unwrap_or(Val::Null)
            }
            ("putAll", [Val::Map(other)]) => {
                let more = self.heap.entries(*other).to_vec();
                self.charge(more.len())?;
                for (key, value) in more {
                    self.heap.put(id, &key, value);
                }
                Val::str("")
            }
            ("clear", []) => {
                if let Some(entries) = self.heap.entries_mut(id) {
                    entries.clear();
                }
                Val::str("")
            }
            (getter, []) if getter.len() > 3 && getter.starts_with("get") => {
                let mut key = getter[3..].to_string();
                if let Some(first) = key.get_mut(..1) {
                    first.make_ascii_lowercase();
                }
                self.heap.get(id, &key).cloned().unwrap_or(Val::Null)
            }
            _ => return Ok(None),
        }))
    }

    fn remove(&mut self, id: usize, key: &str) -> Val {
        let Some(entries) = self.heap.entries_mut(id) else {
            return Val::Null;
        };
        match entries.iter().position(|(k, _)| k == key) {
            Some(at) => entries.remove(at).1,
            None => Val::Null,
        }
    }

    /// `entrySet()`: maps with `key` and `value` (so `$e.key` and `$e.getValue()` work).
    fn entry_set(&mut self, id: usize) -> Result<Val, VtlError> {
        let entries = self.heap.entries(id).to_vec();
        self.charge(entries.len())?;
        let mut list = Vec::with_capacity(entries.len());
        for (key, value) in entries {
            list.push(self.heap.map(vec![
                ("key".to_string(), Val::str(&key)),
                ("value".to_string(), value),
            ])?);
        }
        self.heap.list(list)
    }

    /// A compiled regular expression, cached for the render.
    fn regex(&mut self, pattern: &str) -> Result<Regex, VtlError> {
        if let Some(re) = self.regexes.get(pattern) {
            return Ok(re.clone());
        }
        if pattern.len() > MAX_REGEX_LEN {
            return Err(VtlError::new(format!(
                "a regular expression is at most {MAX_REGEX_LEN} bytes"
            )));
        }
        let re = Regex::new(pattern)
            .map_err(|e| VtlError::new(format!("bad regular expression '{pattern}': {e}")))?;
        self.regexes.insert(pattern.to_string(), re.clone());
        Ok(re)
    }
}

/// The longest regular expression a template may use (the regex engine's stack use grows
/// with its size).
const MAX_REGEX_LEN: usize = 1024;

fn out_of_bounds() -> VtlError {
    VtlError::new("index out of bounds")
}

fn int_arg(args: &[Val], at: usize) -> Result<i64, VtlError> {
    match args.get(at) {
        Some(Val::Int(n)) => Ok(*n),
        _ => Err(VtlError::new("an integer argument was expected")),
    }
}

/// The list position the first argument names: below `len`, or up to it when `inclusive`.
fn list_index(args: &[Val], len: usize, inclusive: bool) -> Result<usize, VtlError> {
    let at = int_arg(args, 0)?;
    usize::try_from(at)
        .ok()
        .filter(|at| *at < len || (inclusive && *at == len))
        .ok_or_else(out_of_bounds)
}

/// The byte offset of UTF-16 unit `unit` of `s`, if it falls on a character boundary.
fn byte_at(s: &str, unit: usize) -> Option<usize> {
    let mut units = 0;
    for (at, c) in s.char_indices() {
        if units == unit {
            return Some(at);
        }
        units += c.len_utf16();
    }
    (units == unit).then_some(s.len())
}

/// Java's `substring(begin, end)` in UTF-16 units; out of range is an error, as in Java.
fn substring(s: &str, begin: i64, end: i64) -> Result<&str, VtlError> {
    let range = usize::try_from(begin)
        .ok()
        .zip(usize::try_from(end).ok())
        .filter(|(b, e)| b <= e)
        .and_then(|(b, e)| Some((byte_at(s, b)?, byte_at(s, e)?)));
    match range {
        Some((b, e)) => Ok(&s[b..e]),
        None => Err(VtlError::new(format!(
            "String index out of range: begin {begin}, end {end}"
        ))),
    }
}

/// Java's `String.split(regex, limit)`: without a limit, trailing empty strings go.
fn split<'s>(re: &Regex, s: &'s str, limit: i64) -> Vec<&'s str> {
    if !re.is_match(s) {
        return vec![s];
    }
    let mut pieces: Vec<&str> = match usize::try_from(limit) {
        Ok(n) if n > 0 => re.splitn(s, n).collect(),
        _ => re.split(s).collect(),
    };
    if limit == 0 {
        while pieces.last().is_some_and(|p| p.is_empty()) {
            pieces.pop();
        }
    }
    pieces
}

/// A Java replacement string (`$1`, `\$`) in the regex crate's syntax (`${1}`, `$$`).
fn java_replacement(java: &str) -> String {
    let mut out = String::new();
    let mut chars = java.chars().peekable();
    while let Some(c) = chars.next() {
        match c {
            '\\' => match chars.next() {
                Some('$') => out.push_str("$$"),
                Some(other) => out.push(other),
                None => {}
            },
            '$' => {
                let mut group = String::new();
                while let Some(d) = chars.peek().copied().filter(char::is_ascii_digit) {
                    group.push(d);
                    chars.next();
                }
                if group.is_empty() {
                    out.push_str("$$");
                } else {
                    out.push_str(&format!("${{{group}}}"));
                }
            }
            other => out.push(other),
        }
    }
    out
}
