//! Regular expression literals (`/ab+c/i`): JavaScript's syntax translated for regex-lite
//! (flags `i` and `m`, escaped slashes), and the match objects JSONata's regex functions
//! return (`match`, `index`, `groups`).

use regex_lite::Regex;

use crate::error::Error;

/// A compiled regex literal.
#[derive(Debug, Clone)]
pub(crate) struct Pattern {
    pub regex: Regex,
}

/// One match: the text, its character offset and its capture groups.
pub(crate) struct Found {
    pub text: String,
    pub start: usize,
    pub end: usize,
    pub byte_start: usize,
    pub byte_end: usize,
    /// Capture groups; `None` for a group that took no part in the match.
    pub groups: Vec<Option<String>>,
}

impl Pattern {
    pub(crate) fn new(source: &str, flags: &str) -> Result<Pattern, Error> {
        let mut translated = String::new();
        if !flags.is_empty() {
            translated.push_str(&format!("(?{flags})"));
        }
        let mut chars = source.chars().peekable();
        while let Some(c) = chars.next() {
            if c == '\\' {
                match chars.next() {
                    Some('/') => translated.push('/'),
                    Some(other) => {
                        translated.push('\\');
                        translated.push(other);
                    }
                    None => translated.push_str("\\\\"),
                }
            } else {
                translated.push(c);
            }
        }
        let regex = Regex::new(&translated)
            .map_err(|_| Error::new("S0303").value(serde_json::Value::from(source).to_string()))?;
        Ok(Pattern { regex })
    }

    /// The first match at or after byte offset `from`, as JavaScript's `exec` with
    /// `lastIndex` set finds it.
    pub(crate) fn exec(&self, text: &str, from: usize) -> Option<Found> {
        let caps = self.regex.captures_at(text, from)?;
        let m = caps.get(0)?;
        let groups = (1..caps.len())
            .map(|i| caps.get(i).map(|g| g.as_str().to_string()))
            .collect();
        Some(Found {
            text: m.as_str().to_string(),
            start: text[..m.start()].chars().count(),
            end: text[..m.end()].chars().count(),
            byte_start: m.start(),
            byte_end: m.end(),
            groups,
        })
    }

    /// Every match in `text` in order, as JSONata's matcher walks them: a zero-length match
    /// after the first is D1004.
    pub(crate) fn matches(&self, text: &str, limit: Option<usize>) -> Result<Vec<Found>, Error> {
        let mut out: Vec<Found> = Vec::new();
        let mut next = self.exec(text, 0);
        while let Some(found) = next {
            if limit.is_some_and(|l| out.len() >= l) {
                break;
            }
            let from = found.byte_end;
            out.push(found);
            if from >= text.len() {
                break;
            }
            next = self.exec(text, from);
            if next.as_ref().is_some_and(|f| f.text.is_empty()) {
                return Err(Error::new("D1004"));
            }
        }
        Ok(out)
    }
}
