//! A JSON reader that keeps what the policy simulator reports and serde_json drops: where
//! each value stands in the text (the simulator names a matched statement by the line and
//! column of its first and last characters) and the order of object members (IAM lists a
//! policy's context keys in the order they appear). Documents reach it only after
//! `document.rs` has accepted them, so it needs to be right, not helpful, about bad input.
//! Like serde_json, it refuses arrays and objects nested deeper than [`MAX_DEPTH`].

/// The deepest nesting of arrays and objects read, serde_json's own recursion limit.
const MAX_DEPTH: usize = 128;

/// A line and column, both counted from 1, as IAM's `Position` counts them.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub(super) struct Position {
    pub line: usize,
    pub column: usize,
}

/// A JSON value and the positions of its first and last characters.
#[derive(Debug, Clone, PartialEq)]
pub(super) struct Node {
    pub value: Json,
    pub start: Position,
    pub end: Position,
}

/// The JSON values, objects keeping their members in order.
#[derive(Debug, Clone, PartialEq)]
pub(super) enum Json {
    Null,
    Bool(bool),
    Number(String),
    String(String),
    Array(Vec<Node>),
    Object(Vec<(String, Node)>),
}

impl Node {
    /// The member `key` of an object (IAM's element names match case-sensitively).
    pub fn get(&self, key: &str) -> Option<&Node> {
        match &self.value {
            Json::Object(members) => members.iter().find(|(k, _)| k == key).map(|(_, v)| v),
            _ => None,
        }
    }

    /// A string, or the strings of an array; numbers and booleans read as their text, as
    /// IAM reads condition values.
    pub fn strings(&self) -> Vec<String> {
        match &self.value {
            Json::Array(items) => items.iter().flat_map(Node::strings).collect(),
            Json::String(s) | Json::Number(s) => vec![s.clone()],
            Json::Bool(b) => vec![b.to_string()],
            _ => Vec::new(),
        }
    }

    /// An object's members, in order (none for anything else).
    pub fn members(&self) -> &[(String, Node)] {
        match &self.value {
            Json::Object(members) => members,
            _ => &[],
        }
    }
}

/// Parses a whole document; `None` when it is not one JSON value.
pub(super) fn parse(text: &str) -> Option<Node> {
    let mut reader = Reader {
        chars: text.chars().collect(),
        at: 0,
        line: 1,
        column: 1,
        depth: 0,
    };
    let node = reader.value()?;
    reader.blank();
    (reader.at == reader.chars.len()).then_some(node)
}

struct Reader {
    chars: Vec<char>,
    at: usize,
    line: usize,
    column: usize,
    depth: usize,
}

impl Reader {
    fn peek(&self) -> Option<char> {
        self.chars.get(self.at).copied()
    }

    fn here(&self) -> Position {
        Position {
            line: self.line,
            column: self.column,
        }
    }

    /// Consumes one character, returning the position it stood at.
    fn bump(&mut self) -> Option<(char, Position)> {
        let c = self.peek()?;
        let at = self.here();
        self.at += 1;
        match c {
            '\n' => {
                self.line += 1;
                self.column = 1;
            }
            _ => self.column += 1,
        }
        Some((c, at))
    }

    fn blank(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.bump();
        }
    }

    fn expect(&mut self, wanted: char) -> Option<Position> {
        self.blank();
        match self.bump()? {
            (c, at) if c == wanted => Some(at),
            _ => None,
        }
    }

    fn value(&mut self) -> Option<Node> {
        self.blank();
        let start = self.here();
        let value = match self.peek()? {
            '{' | '[' => return self.container(),
            '"' => Json::String(self.string()?),
            't' => self.word("true", Json::Bool(true))?,
            'f' => self.word("false", Json::Bool(false))?,
            'n' => self.word("null", Json::Null)?,
            _ => Json::Number(self.number()?),
        };
        let end = self.before();
        Some(Node { value, start, end })
    }

    /// The position of the character just consumed.
    fn before(&self) -> Position {
        Position {
            line: self.line,
            column: self.column.saturating_sub(1).max(1),
        }
    }

    fn word(&mut self, word: &str, value: Json) -> Option<Json> {
        for wanted in word.chars() {
            if self.bump()?.0 != wanted {
                return None;
            }
        }
        Some(value)
    }

    fn number(&mut self) -> Option<String> {
        let mut text = String::new();
        while let Some(c) = self
            .peek()
            .filter(|c| c.is_ascii_digit() || "+-.eE".contains(*c))
        {
            text.push(c);
            self.bump();
        }
        text.parse::<f64>().ok().map(|_| text)
    }

    fn string(&mut self) -> Option<String> {
        self.expect('"')?;
        let mut out = String::new();
        loop {
            match self.bump()?.0 {
                '"' => return Some(out),
                '\\' => match self.bump()?.0 {
                    'n' => out.push('\n'),
                    't' => out.push('\t'),
                    'r' => out.push('\r'),
                    'b' => out.push('\u{8}'),
                    'f' => out.push('\u{c}'),
                    'u' => {
                        let hex: String = (0..4).filter_map(|_| self.bump().map(|b| b.0)).collect();
                        out.push(char::from_u32(u32::from_str_radix(&hex, 16).ok()?)?);
                    }
                    other => out.push(other),
                },
                c => out.push(c),
            }
        }
    }

    /// An array or object, one level deeper, refusing to pass [`MAX_DEPTH`].
    fn container(&mut self) -> Option<Node> {
        if self.depth >= MAX_DEPTH {
            return None;
        }
        self.depth += 1;
        let node = match self.peek()? {
            '{' => self.object(),
            _ => self.array(),
        };
        self.depth -= 1;
        node
    }

    fn array(&mut self) -> Option<Node> {
        let start = self.expect('[')?;
        let mut items = Vec::new();
        self.blank();
        if self.peek() == Some(']') {
            let end = self.expect(']')?;
            return Some(Node {
                value: Json::Array(items),
                start,
                end,
            });
        }
        loop {
            items.push(self.value()?);
            self.blank();
            match self.bump()? {
                (',', _) => continue,
                (']', end) => {
                    return Some(Node {
                        value: Json::Array(items),
                        start,
                        end,
                    })
                }
                _ => return None,
            }
        }
    }

    fn object(&mut self) -> Option<Node> {
        let start = self.expect('{')?;
        let mut members = Vec::new();
        self.blank();
        if self.peek() == Some('}') {
            let end = self.expect('}')?;
            return Some(Node {
                value: Json::Object(members),
                start,
                end,
            });
        }
        loop {
            self.blank();
            let key = self.string()?;
            self.expect(':')?;
            members.push((key, self.value()?));
            self.blank();
            match self.bump()? {
                (',', _) => continue,
                ('}', end) => {
                    return Some(Node {
                        value: Json::Object(members),
                        start,
                        end,
                    })
                }
                _ => return None,
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn statements_are_placed_by_their_first_and_last_characters() {
        let text = "{\"Version\": \"2012-10-17\", \"Statement\": [{\"Effect\": \"Allow\"}]}";
        let doc = parse(text).unwrap();
        let statements = doc.get("Statement").unwrap();
        let Json::Array(items) = &statements.value else {
            panic!("not an array")
        };
        assert_eq!(
            items[0].start,
            Position {
                line: 1,
                column: 41
            }
        );
        assert_eq!(
            items[0].end,
            Position {
                line: 1,
                column: 59
            }
        );
    }

    #[test]
    fn lines_and_columns_count_from_one() {
        let text = "{\n  \"Statement\": {\n    \"Effect\": \"Deny\"\n  }\n}";
        let statement = parse(text).unwrap().get("Statement").cloned().unwrap();
        assert_eq!(
            statement.start,
            Position {
                line: 2,
                column: 16
            }
        );
        assert_eq!(statement.end, Position { line: 4, column: 3 });
    }

    #[test]
    fn members_keep_their_order_and_escapes_decode() {
        let doc = parse(r#"{"b": 1, "a": ["x\"y", true, null, -2.5e1]}"#).unwrap();
        let keys: Vec<&str> = doc.members().iter().map(|(k, _)| k.as_str()).collect();
        assert_eq!(keys, ["b", "a"]);
        assert_eq!(doc.get("a").unwrap().strings(), ["x\"y", "true", "-2.5e1"]);
    }

    #[test]
    fn broken_documents_are_refused() {
        for text in ["{", "{\"a\" 1}", "[1,]", "{\"a\": 1} x", "tru"] {
            assert!(parse(text).is_none(), "{text}");
        }
    }

    #[test]
    fn nesting_stops_where_serde_json_stops() {
        let nested = |k: usize| format!("{}{}", "[".repeat(k), "]".repeat(k));
        assert!(parse(&nested(MAX_DEPTH)).is_some());
        assert!(parse(&nested(MAX_DEPTH + 1)).is_none());
        assert!(serde_json::from_str::<serde_json::Value>(&nested(MAX_DEPTH + 1)).is_err());
        assert!(parse(&"[".repeat(100_000)).is_none());
    }
}
