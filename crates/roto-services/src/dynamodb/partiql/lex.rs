//! The tokens of a PartiQL statement.
//!
//! Words (keywords and bare identifiers, told apart by the parser), `"quoted"` identifiers,
//! `'string'` literals (a doubled `''` stands for one quote), numbers, `?` parameters and
//! punctuation, with `<<`/`>>` (bag brackets) and the two-character comparators as one token.

/// What a token is.
#[derive(Debug, Clone, PartialEq, Eq)]
pub enum Token {
    /// A bare word: a keyword, a function name or an identifier.
    Word(String),
    /// A `"double-quoted"` identifier.
    Quoted(String),
    /// A `'single-quoted'` string literal.
    Str(String),
    /// A number literal, as written.
    Number(String),
    /// Punctuation or an operator.
    Punct(&'static str),
}

impl Token {
    /// Whether this is the keyword `k` (case-insensitive).
    pub fn is_keyword(&self, k: &str) -> bool {
        matches!(self, Token::Word(w) if w.eq_ignore_ascii_case(k))
    }
}

const PUNCTUATION: [&str; 22] = [
    "<<", ">>", "<=", ">=", "<>", "!=", "(", ")", "[", "]", "{", "}", ",", ".", ":", "*", "=", "<",
    ">", "+", "-", "?",
];

/// Splits a statement into tokens; `Err` names what could not be read.
pub fn tokenize(source: &str) -> Result<Vec<Token>, &'static str> {
    let chars: Vec<char> = source.chars().collect();
    let mut out = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        if c.is_whitespace() {
            i += 1;
            continue;
        }
        if c == '\'' || c == '"' {
            let mut text = String::new();
            i += 1;
            loop {
                match chars.get(i) {
                    None => {
                        return Err(if c == '\'' {
                            "Unterminated string literal"
                        } else {
                            "Unterminated quoted identifier"
                        })
                    }
                    Some(&q) if q == c && chars.get(i + 1) == Some(&c) => {
                        text.push(c);
                        i += 2;
                    }
                    Some(&q) if q == c => {
                        i += 1;
                        break;
                    }
                    Some(&other) => {
                        text.push(other);
                        i += 1;
                    }
                }
            }
            out.push(if c == '\'' {
                Token::Str(text)
            } else {
                Token::Quoted(text)
            });
            continue;
        }
        if c.is_ascii_digit() || (c == '.' && chars.get(i + 1).is_some_and(char::is_ascii_digit)) {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|d| d.is_ascii_digit() || *d == '.')
            {
                i += 1;
            }
            if chars.get(i).is_some_and(|e| *e == 'e' || *e == 'E') {
                let sign = usize::from(chars.get(i + 1).is_some_and(|s| *s == '+' || *s == '-'));
                if chars.get(i + 1 + sign).is_some_and(char::is_ascii_digit) {
                    i += 1 + sign;
                    while chars.get(i).is_some_and(char::is_ascii_digit) {
                        i += 1;
                    }
                }
            }
            out.push(Token::Number(chars[start..i].iter().collect()));
            continue;
        }
        if c.is_alphabetic() || c == '_' || c == '$' {
            let start = i;
            while chars
                .get(i)
                .is_some_and(|w| w.is_alphanumeric() || *w == '_' || *w == '$')
            {
                i += 1;
            }
            out.push(Token::Word(chars[start..i].iter().collect()));
            continue;
        }
        let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
        match PUNCTUATION.iter().find(|p| rest.starts_with(**p)) {
            Some(p) => {
                out.push(Token::Punct(p));
                i += p.len();
            }
            None => return Err("Invalid character"),
        }
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;

    #[test]
    fn tokens_cover_literals_identifiers_and_operators() {
        let tokens =
            tokenize(r#"SELECT "a""b".c FROM t WHERE x<>'it''s' AND n>=-1.5e3 AND s IN <<?>>"#)
                .unwrap();
        assert_eq!(tokens[1], Token::Quoted("a\"b".into()));
        assert_eq!(tokens[2], Token::Punct("."));
        assert!(tokens[0].is_keyword("select"));
        assert!(tokens.contains(&Token::Str("it's".into())));
        assert!(tokens.contains(&Token::Punct("<>")));
        assert!(tokens.contains(&Token::Number("1.5e3".into())));
        assert!(tokens.contains(&Token::Punct("<<")));
        assert_eq!(tokenize("a = 'open"), Err("Unterminated string literal"));
        assert_eq!(tokenize("a = #"), Err("Invalid character"));
    }
}
