//! API Gateway's template tools: `$input` (`body`, `json()`, `path()`, `params()`) and
//! `$util` (`escapeJavaScript`, `parseJson`, `urlEncode`, `urlDecode`, `base64Encode`,
//! `base64Decode`), as the "mapping template and access logging variable reference"
//! describes them. `$util` follows the Java functions behind it (commons-lang's
//! `escapeJavaScript`, `URLEncoder`, `URLDecoder`).

use base64::Engine;
use serde_json::Value;

use crate::render::Renderer;
use crate::value::Val;
use crate::{Params, VtlError};

impl Renderer<'_> {
    pub(crate) fn input_method(
        &mut self,
        name: &str,
        args: &[Val],
    ) -> Result<Option<Val>, VtlError> {
        let imported = self.heap.imported;
        let found = self.input_call(name, args)?;
        self.charge((self.heap.imported - imported) / 8)?;
        Ok(found)
    }

    fn input_call(&mut self, name: &str, args: &[Val]) -> Result<Option<Val>, VtlError> {
        Ok(Some(match (name, args) {
            ("json", [path]) => {
                let path = self.jsonpath(path)?;
                let found = path.evaluate(self.body_json()?);
                let text = serde_json::to_string(&found.unwrap_or(Value::from("")))
                    .map_err(|e| VtlError::new(e.to_string()))?;
                self.string(text)?
            }
            ("path", [path]) => {
                let path = self.jsonpath(path)?;
                match path.evaluate(self.body_json()?) {
                    Some(found) => self.heap.import(&found)?,
                    None => Val::Null,
                }
            }
            ("params", []) => self.all_params()?,
            ("params", [name]) => {
                let name = self.text_of(name)?;
                let input = self.input;
                let found = lookup(&input.path_params, &name, false)
                    .or_else(|| lookup(&input.query_params, &name, false))
                    .or_else(|| lookup(&input.headers, &name, true));
                Val::str(found.unwrap_or_default())
            }
            _ => return Ok(None),
        }))
    }

    /// `$input.params()`: `path`, `querystring` and `header`, each a map.
    fn all_params(&mut self) -> Result<Val, VtlError> {
        let input = self.input;
        let mut groups = Vec::new();
        for (name, params) in [
            ("path", &input.path_params),
            ("querystring", &input.query_params),
            ("header", &input.headers),
        ] {
            let entries = params
                .iter()
                .map(|(k, v)| (k.clone(), Val::str(v)))
                .collect();
            groups.push((name.to_string(), self.heap.map(entries)?));
        }
        self.heap.map(groups)
    }

    fn jsonpath(&mut self, path: &Val) -> Result<roto_jsonpath::Path, VtlError> {
        let text = self.text_of(path)?;
        roto_jsonpath::Path::parse(&text)
            .map_err(|e| VtlError::new(format!("invalid JSONPath '{text}': {e}")))
    }

    /// The body as JSON, read once; an empty body reads as `{}`.
    fn body_json(&mut self) -> Result<&Value, VtlError> {
        if self.body_json.is_none() {
            let body = self.input.body.trim();
            let json = if body.is_empty() {
                Value::Object(serde_json::Map::new())
            } else {
                serde_json::from_str(body)
                    .map_err(|e| VtlError::new(format!("the body is not valid JSON: {e}")))?
            };
            self.body_json = Some(json);
        }
        Ok(self.body_json.get_or_insert(Value::Null))
    }

    pub(crate) fn util_method(
        &mut self,
        name: &str,
        args: &[Val],
    ) -> Result<Option<Val>, VtlError> {
        let [arg] = args else { return Ok(None) };
        if *arg == Val::Null {
            return Ok(Some(Val::Null));
        }
        let text = self.text_of(arg)?;
        Ok(Some(match name {
            "escapeJavaScript" => self.string(escape_javascript(&text))?,
            "parseJson" => {
                let json: Value = serde_json::from_str(&text)
                    .map_err(|e| VtlError::new(format!("parseJson: invalid JSON: {e}")))?;
                let imported = self.heap.imported;
                let val = self.heap.import(&json)?;
                self.charge((self.heap.imported - imported) / 8)?;
                val
            }
            "urlEncode" => self.string(url_encode(&text))?,
            "urlDecode" => self.string(url_decode(&text)?)?,
            "base64Encode" => {
                self.string(base64::engine::general_purpose::STANDARD.encode(text.as_bytes()))?
            }
            "base64Decode" => {
                let bytes = base64::engine::general_purpose::STANDARD
                    .decode(text.trim())
                    .map_err(|e| VtlError::new(format!("base64Decode: {e}")))?;
                self.string(String::from_utf8_lossy(&bytes).into_owned())?
            }
            _ => return Ok(None),
        }))
    }
}

fn lookup<'p>(params: &'p Params, name: &str, ignore_case: bool) -> Option<&'p str> {
    params
        .iter()
        .find(|(k, _)| {
            if ignore_case {
                k.eq_ignore_ascii_case(name)
            } else {
                k == name
            }
        })
        .map(|(_, v)| v.as_str())
}

/// commons-lang 2's `StringEscapeUtils.escapeJavaScript`: quotes (single too), backslash
/// and `/` get a backslash, control characters their escapes, and every character beyond
/// ASCII a `\uXXXX` per UTF-16 unit.
pub(crate) fn escape_javascript(text: &str) -> String {
    let mut out = String::with_capacity(text.len() + 8);
    for unit in text.encode_utf16() {
        match unit {
            0x08 => out.push_str("\\b"),
            0x09 => out.push_str("\\t"),
            0x0A => out.push_str("\\n"),
            0x0C => out.push_str("\\f"),
            0x0D => out.push_str("\\r"),
            0x22 => out.push_str("\\\""),
            0x27 => out.push_str("\\'"),
            0x2F => out.push_str("\\/"),
            0x5C => out.push_str("\\\\"),
            0x20..=0x7E => out.push(char::from(unit as u8)),
            _ => out.push_str(&format!("\\u{unit:04X}")),
        }
    }
    out
}

/// Java's `URLEncoder.encode(text, "UTF-8")`: letters, digits and `.-*_` stay, a space is
/// `+`, every other byte `%XX`.
pub(crate) fn url_encode(text: &str) -> String {
    let mut out = String::with_capacity(text.len());
    for byte in text.bytes() {
        match byte {
            b'a'..=b'z' | b'A'..=b'Z' | b'0'..=b'9' | b'.' | b'-' | b'*' | b'_' => {
                out.push(char::from(byte))
            }
            b' ' => out.push('+'),
            _ => out.push_str(&format!("%{byte:02X}")),
        }
    }
    out
}

/// Java's `URLDecoder.decode(text, "UTF-8")`: `+` is a space, `%XX` a byte; a bad escape is
/// an error.
pub(crate) fn url_decode(text: &str) -> Result<String, VtlError> {
    let bytes = text.as_bytes();
    let mut out = Vec::with_capacity(bytes.len());
    let mut at = 0;
    while at < bytes.len() {
        match bytes[at] {
            b'+' => out.push(b' '),
            b'%' => {
                let hex = text.get(at + 1..at + 3).unwrap_or_default();
                let byte = u8::from_str_radix(hex, 16)
                    .ok()
                    .filter(|_| hex.len() == 2 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
                    .ok_or_else(|| VtlError::new("urlDecode: an incomplete % escape"))?;
                out.push(byte);
                at += 2;
            }
            other => out.push(other),
        }
        at += 1;
    }
    Ok(String::from_utf8_lossy(&out).into_owned())
}
