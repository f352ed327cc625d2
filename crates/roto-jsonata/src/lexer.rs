//! The tokenizer: JSONata's tokens, read one at a time as the parser asks, with the
//! reference implementation's rules (a `/` starts a regex only where an operand is due) and
//! its positions (the character offset just past each token).

use crate::error::Error;

/// One token.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Tok {
    Name(String),
    Variable(String),
    Op(&'static str),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Regex(String, String),
    End,
}

/// The single-character operators; also the characters that end a name.
const SINGLE: &[&str] = &[
    ".", "[", "]", "{", "}", "(", ")", ",", "@", "#", ";", ":", "?", "+", "-", "*", "/", "%", "|",
    "=", "<", ">", "^", "&", "!", "~",
];

const DOUBLE: &[&str] = &["..", ":=", "!=", ">=", "<=", "**", "~>", "?:", "??"];

fn is_space(c: char) -> bool {
    matches!(c, ' ' | '\t' | '\n' | '\r' | '\u{b}')
}

fn single(c: char) -> Option<&'static str> {
    SINGLE.iter().copied().find(|s| s.starts_with(c))
}

/// Reads tokens from an expression's text.
pub(crate) struct Lexer {
    chars: Vec<char>,
    pos: usize,
}

impl Lexer {
    pub(crate) fn new(text: &str) -> Lexer {
        Lexer {
            chars: text.chars().collect(),
            pos: 0,
        }
    }

    pub(crate) fn len(&self) -> usize {
        self.chars.len()
    }

    fn at(&self, i: usize) -> Option<char> {
        self.chars.get(i).copied()
    }

    /// The next token and the offset just past it; `infix` says an operator is due, so a
    /// `/` divides rather than opening a regex.
    pub(crate) fn next(&mut self, infix: bool) -> Result<(Tok, usize), Error> {
        self.skip_space_and_comments()?;
        let Some(c) = self.at(self.pos) else {
            return Ok((Tok::End, self.pos));
        };
        if !infix && c == '/' {
            self.pos += 1;
            let tok = self.regex()?;
            return Ok((tok, self.pos));
        }
        if let Some(next) = self.at(self.pos + 1) {
            let pair: String = [c, next].iter().collect();
            if let Some(op) = DOUBLE.iter().copied().find(|d| *d == pair) {
                self.pos += 2;
                return Ok((Tok::Op(op), self.pos));
            }
        }
        if let Some(op) = single(c) {
            self.pos += 1;
            return Ok((Tok::Op(op), self.pos));
        }
        if c == '"' || c == '\'' {
            let tok = self.string(c)?;
            return Ok((tok, self.pos));
        }
        if let Some(tok) = self.number()? {
            return Ok((tok, self.pos));
        }
        if c == '`' {
            let start = self.pos + 1;
            let end = (start..self.len()).find(|&i| self.chars[i] == '`');
            let Some(end) = end else {
                self.pos = self.len();
                return Err(Error::new("S0105").at(self.pos));
            };
            self.pos = end + 1;
            let name = self.chars[start..end].iter().collect();
            return Ok((Tok::Name(name), self.pos));
        }
        Ok((self.name(), self.pos))
    }

    fn skip_space_and_comments(&mut self) -> Result<(), Error> {
        loop {
            while self.at(self.pos).is_some_and(is_space) {
                self.pos += 1;
            }
            if self.at(self.pos) != Some('/') || self.at(self.pos + 1) != Some('*') {
                return Ok(());
            }
            let start = self.pos;
            self.pos += 2;
            loop {
                if self.pos >= self.len() {
                    return Err(Error::new("S0106").at(start));
                }
                if self.at(self.pos) == Some('*') && self.at(self.pos + 1) == Some('/') {
                    self.pos += 2;
                    break;
                }
                self.pos += 1;
            }
        }
    }

    fn regex(&mut self) -> Result<Tok, Error> {
        let start = self.pos;
        let mut depth = 0i32;
        while self.pos < self.len() {
            let c = self.chars[self.pos];
            if c == '/' && depth == 0 && self.unescaped(self.pos) {
                let pattern: String = self.chars[start..self.pos].iter().collect();
                if pattern.is_empty() {
                    return Err(Error::new("S0301").at(self.pos));
                }
                self.pos += 1;
                let flags_start = self.pos;
                while matches!(self.at(self.pos), Some('i' | 'm')) {
                    self.pos += 1;
                }
                let flags = self.chars[flags_start..self.pos].iter().collect();
                return Ok(Tok::Regex(pattern, flags));
            }
            let escaped = self.pos > 0 && self.chars[self.pos - 1] == '\\';
            if matches!(c, '(' | '[' | '{') && !escaped {
                depth += 1;
            }
            if matches!(c, ')' | ']' | '}') && !escaped {
                depth -= 1;
            }
            self.pos += 1;
        }
        Err(Error::new("S0302").at(self.pos))
    }

    fn unescaped(&self, at: usize) -> bool {
        let backslashes = self.chars[..at]
            .iter()
            .rev()
            .take_while(|c| **c == '\\')
            .count();
        backslashes % 2 == 0
    }

    fn string(&mut self, quote: char) -> Result<Tok, Error> {
        self.pos += 1;
        let mut text = String::new();
        while let Some(c) = self.at(self.pos) {
            if c == '\\' {
                self.pos += 1;
                let escaped = self.at(self.pos).unwrap_or('\0');
                match escaped {
                    '"' | '\\' | '/' => text.push(escaped),
                    'b' => text.push('\u{8}'),
                    'f' => text.push('\u{c}'),
                    'n' => text.push('\n'),
                    'r' => text.push('\r'),
                    't' => text.push('\t'),
                    'u' => self.unicode_escape(&mut text)?,
                    other => return Err(Error::new("S0103").at(self.pos).token(other.to_string())),
                }
            } else if c == quote {
                self.pos += 1;
                return Ok(Tok::Str(text));
            } else {
                text.push(c);
            }
            self.pos += 1;
        }
        Err(Error::new("S0101").at(self.pos))
    }

    /// `\uXXXX`, pairing a high surrogate with a following `\uXXXX` low one.
    fn unicode_escape(&mut self, text: &mut String) -> Result<(), Error> {
        let unit = self.hex4(self.pos + 1)?;
        self.pos += 4;
        if (0xD800..0xDC00).contains(&unit)
            && self.at(self.pos + 1) == Some('\\')
            && self.at(self.pos + 2) == Some('u')
        {
            if let Ok(low) = self.hex4(self.pos + 3) {
                if (0xDC00..0xE000).contains(&low) {
                    let code = 0x10000 + ((unit - 0xD800) << 10) + (low - 0xDC00);
                    text.extend(char::from_u32(code));
                    self.pos += 6;
                    return Ok(());
                }
            }
        }
        text.push(char::from_u32(unit).unwrap_or('\u{FFFD}'));
        Ok(())
    }

    fn hex4(&self, at: usize) -> Result<u32, Error> {
        let digits: String = self.chars.iter().skip(at).take(4).collect();
        if digits.len() == 4 && digits.chars().all(|c| c.is_ascii_hexdigit()) {
            return u32::from_str_radix(&digits, 16).map_err(|_| Error::new("S0104").at(at));
        }
        Err(Error::new("S0104").at(at - 1))
    }

    /// `-?(0|[1-9][0-9]*)(\.[0-9]+)?([Ee][-+]?[0-9]+)?`, as JSON writes numbers.
    fn number(&mut self) -> Result<Option<Tok>, Error> {
        let mut i = self.pos;
        let digits = |from: usize, chars: &[char]| {
            chars[from..]
                .iter()
                .take_while(|c| c.is_ascii_digit())
                .count()
        };
        if self.at(i) == Some('-') {
            i += 1;
        }
        match self.at(i) {
            Some('0') => i += 1,
            Some('1'..='9') => i += digits(i, &self.chars),
            _ => return Ok(None),
        }
        if self.at(i) == Some('.') && self.at(i + 1).is_some_and(|c| c.is_ascii_digit()) {
            i += 1 + digits(i + 1, &self.chars);
        }
        if matches!(self.at(i), Some('e' | 'E')) {
            let mut j = i + 1;
            if matches!(self.at(j), Some('+' | '-')) {
                j += 1;
            }
            let n = digits(j, &self.chars);
            if n > 0 {
                i = j + n;
            }
        }
        let text: String = self.chars[self.pos..i].iter().collect();
        match text.parse::<f64>() {
            Ok(n) if n.is_finite() => {
                self.pos = i;
                Ok(Some(Tok::Num(n)))
            }
            _ => Err(Error::new("S0102").at(self.pos).token(text)),
        }
    }

    fn name(&mut self) -> Tok {
        let start = self.pos;
        let mut i = start;
        while let Some(c) = self.at(i) {
            if is_space(c) || single(c).is_some() {
                break;
            }
            i += 1;
        }
        self.pos = i;
        if self.chars[start] == '$' {
            return Tok::Variable(self.chars[start + 1..i].iter().collect());
        }
        let name: String = self.chars[start..i].iter().collect();
        match name.as_str() {
            "or" => Tok::Op("or"),
            "in" => Tok::Op("in"),
            "and" => Tok::Op("and"),
            "true" => Tok::Bool(true),
            "false" => Tok::Bool(false),
            "null" => Tok::Null,
            _ => Tok::Name(name),
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn tokens(text: &str) -> Vec<Tok> {
        let mut lexer = Lexer::new(text);
        let mut out = Vec::new();
        let mut infix = false;
        loop {
            let (tok, _) = lexer.next(infix).expect("token");
            if tok == Tok::End {
                return out;
            }
            infix = !matches!(tok, Tok::Op(_));
            out.push(tok);
        }
    }

    #[test]
    fn names_numbers_and_operators() {
        assert_eq!(
            tokens("a.b[0] != -1.5e2"),
            vec![
                Tok::Name("a".into()),
                Tok::Op("."),
                Tok::Name("b".into()),
                Tok::Op("["),
                Tok::Num(0.0),
                Tok::Op("]"),
                Tok::Op("!="),
                Tok::Op("-"),
                Tok::Num(150.0),
            ]
        );
    }

    #[test]
    fn slash_is_a_regex_only_where_an_operand_is_due() {
        assert_eq!(
            tokens("a / /b+/i"),
            vec![
                Tok::Name("a".into()),
                Tok::Op("/"),
                Tok::Regex("b+".into(), "i".into())
            ]
        );
    }

    #[test]
    fn strings_decode_escapes_and_surrogate_pairs() {
        assert_eq!(
            tokens(r#""a\n\ud83d\ude00" 'b'"#),
            vec![Tok::Str("a\n\u{1F600}".into()), Tok::Str("b".into())]
        );
    }

    #[test]
    fn comments_and_backquoted_names() {
        assert_eq!(
            tokens("/* c */ `a b` $x"),
            vec![Tok::Name("a b".into()), Tok::Variable("x".into())]
        );
    }

    #[test]
    fn unterminated_string_is_s0101() {
        let mut lexer = Lexer::new("\"abc");
        assert_eq!(
            lexer.next(false).map_err(|e| e.code().to_string()),
            Err("S0101".into())
        );
    }
}
