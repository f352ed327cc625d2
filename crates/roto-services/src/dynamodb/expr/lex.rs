//! The tokens every DynamoDB expression is made of.
//!
//! Words (attribute names, keywords, function names), `#name` and `:value` placeholders,
//! list indexes, and punctuation. Keywords are recognised by the parser, not here, because
//! DynamoDB decides by position whether a word is a keyword or a (reserved) name.

/// What a token is.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub enum Kind {
    /// A bare word: a name, a keyword or a function name.
    Word,
    /// `#name`.
    Name,
    /// `:value`.
    Value,
    /// A run of digits (list indexes).
    Digits,
    /// Punctuation or an operator (`(`, `<=`, ...), or a character nothing else accepts.
    Punct,
}

/// One token and where it starts in the source.
#[derive(Debug, Clone, Copy, PartialEq, Eq)]
pub struct Token<'s> {
    /// What it is.
    pub kind: Kind,
    /// Its text.
    pub text: &'s str,
    /// Its byte offset.
    pub offset: usize,
}

impl Token<'_> {
    /// Whether this is the punctuation `p`.
    pub fn is(&self, p: &str) -> bool {
        self.kind == Kind::Punct && self.text == p
    }

    /// Whether this is the keyword `k` (case-insensitive).
    pub fn is_keyword(&self, k: &str) -> bool {
        self.kind == Kind::Word && self.text.eq_ignore_ascii_case(k)
    }
}

fn is_word_byte(b: u8) -> bool {
    b.is_ascii_alphanumeric() || b == b'_'
}

/// Splits an expression into tokens.
pub fn tokenize(source: &str) -> Vec<Token<'_>> {
    let bytes = source.as_bytes();
    let mut out = Vec::new();
    let mut i = 0;
    while i < bytes.len() {
        let b = bytes[i];
        if b.is_ascii_whitespace() {
            i += 1;
            continue;
        }
        let start = i;
        let run = |from: usize, accept: fn(u8) -> bool| {
            let mut j = from;
            while j < bytes.len() && accept(bytes[j]) {
                j += 1;
            }
            j
        };
        let kind = match b {
            b'#' => {
                i = run(i + 1, is_word_byte);
                Kind::Name
            }
            b':' => {
                i = run(i + 1, is_word_byte);
                Kind::Value
            }
            b'0'..=b'9' => {
                i = run(i, |b| b.is_ascii_digit());
                Kind::Digits
            }
            _ if is_word_byte(b) => {
                i = run(i, is_word_byte);
                Kind::Word
            }
            b'<' if matches!(bytes.get(i + 1), Some(b'=' | b'>')) => {
                i += 2;
                Kind::Punct
            }
            b'>' if bytes.get(i + 1) == Some(&b'=') => {
                i += 2;
                Kind::Punct
            }
            _ => {
                i += source[i..].chars().next().map_or(1, char::len_utf8);
                Kind::Punct
            }
        };
        out.push(Token {
            kind,
            text: &source[start..i],
            offset: start,
        });
    }
    out
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_split_operators_placeholders_and_paths() {
        let tokens = tokenize("#a.b[10] <= :v AND size(x)<>:w");
        let texts: Vec<&str> = tokens.iter().map(|t| t.text).collect();
        assert_eq!(
            texts,
            [
                "#a", ".", "b", "[", "10", "]", "<=", ":v", "AND", "size", "(", "x", ")", "<>",
                ":w"
            ]
        );
        assert_eq!(tokens[0].kind, Kind::Name);
        assert_eq!(tokens[4].kind, Kind::Digits);
        assert_eq!(tokens[7].kind, Kind::Value);
        assert!(tokens[8].is_keyword("and"));
        assert_eq!(tokens[6].offset, 9);
    }
}
