//! The reader of path text: steps in a loop, filter expressions by recursive descent whose
//! depth is counted and bounded by [`MAX_DEPTH`].

use serde_json::Value;

use crate::{
    Comparison, Filter, Function, Operand, ParseError, Path, Pattern, Selector, Slice, Step,
    MAX_DEPTH, MAX_PATH_LEN, MAX_REGEX_LEN, MAX_STEPS,
};

/// Reads a whole path.
pub(crate) fn parse(text: &str) -> Result<Path, ParseError> {
    if text.len() > MAX_PATH_LEN {
        return Err(ParseError {
            position: MAX_PATH_LEN,
            reason: format!("a path is at most {MAX_PATH_LEN} bytes"),
        });
    }
    let trimmed = text.trim();
    let mut reader = Reader {
        text: trimmed,
        pos: 0,
        depth: 0,
    };
    if !reader.eat("$") {
        return reader.fail("a path starts with '$'");
    }
    let context = reader.eat("$");
    let mut path = reader.path(false)?;
    if reader.pos < trimmed.len() {
        return reader.fail("unexpected character");
    }
    path.context = context;
    path.text = trimmed.to_string();
    Ok(path)
}

struct Reader<'t> {
    text: &'t str,
    pos: usize,
    depth: usize,
}

impl<'t> Reader<'t> {
    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn peek(&self) -> Option<char> {
        self.rest().chars().next()
    }

    fn bump(&mut self) -> Option<char> {
        let c = self.peek()?;
        self.pos += c.len_utf8();
        Some(c)
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.rest().starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn expect(&mut self, token: &str) -> Result<(), ParseError> {
        if self.eat(token) {
            Ok(())
        } else {
            self.fail(&format!("expected '{token}'"))
        }
    }

    fn skip_ws(&mut self) {
        while self.peek().is_some_and(char::is_whitespace) {
            self.pos += 1;
        }
    }

    fn fail<T>(&self, reason: &str) -> Result<T, ParseError> {
        Err(ParseError {
            position: self.pos,
            reason: reason.to_string(),
        })
    }

    fn enter(&mut self) -> Result<(), ParseError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.fail(&format!("nested deeper than {MAX_DEPTH}"));
        }
        Ok(())
    }

    /// The steps after `$` or `@`, and a trailing function; inside a filter, names also end
    /// at operators. Names with spaces take the bracket form, as in Jayway.
    fn path(&mut self, in_filter: bool) -> Result<Path, ParseError> {
        let mut steps = Vec::new();
        let mut function = None;
        loop {
            if self.eat("..") {
                let selector = if self.peek() == Some('[') {
                    self.bracket()?
                } else if self.eat("*") {
                    Selector::Wildcard
                } else {
                    Selector::Name(self.dot_name(in_filter)?)
                };
                steps.push(Step::Descend(selector));
            } else if self.eat(".") {
                if self.eat("*") {
                    steps.push(Step::Child(Selector::Wildcard));
                    continue;
                }
                let name = self.dot_name(in_filter)?;
                if self.peek() == Some('(') {
                    function = Some(self.function(&name)?);
                    break;
                }
                steps.push(Step::Child(Selector::Name(name)));
            } else if self.peek() == Some('[') {
                steps.push(Step::Child(self.bracket()?));
            } else {
                break;
            }
            if steps.len() > MAX_STEPS {
                return self.fail(&format!("a path has at most {MAX_STEPS} steps"));
            }
        }
        Ok(Path {
            text: String::new(),
            context: false,
            steps,
            function,
        })
    }

    fn dot_name(&mut self, in_filter: bool) -> Result<String, ParseError> {
        let start = self.pos;
        while let Some(c) = self.peek() {
            let ends = matches!(c, '.' | '[' | '(')
                || c.is_whitespace()
                || (in_filter && matches!(c, ')' | ']' | '=' | '!' | '<' | '>' | '&' | '|' | ','));
            if ends {
                break;
            }
            self.pos += c.len_utf8();
        }
        if self.pos == start {
            return self.fail("expected a member name");
        }
        Ok(self.text[start..self.pos].to_string())
    }

    fn function(&mut self, name: &str) -> Result<Function, ParseError> {
        let function = match name {
            "length" => Function::Length,
            "min" => Function::Min,
            "max" => Function::Max,
            "avg" => Function::Avg,
            "sum" => Function::Sum,
            "keys" => Function::Keys,
            "first" => Function::First,
            "last" => Function::Last,
            _ => return self.fail(&format!("unknown function '{name}'")),
        };
        self.expect("(")?;
        self.skip_ws();
        self.expect(")")?;
        Ok(function)
    }

    /// `[...]`: a wildcard, a filter, names, indexes or a slice.
    fn bracket(&mut self) -> Result<Selector, ParseError> {
        self.expect("[")?;
        self.skip_ws();
        let selector = match self.peek() {
            Some('*') => {
                self.pos += 1;
                Selector::Wildcard
            }
            Some('?') => {
                self.pos += 1;
                self.enter()?;
                let filter = self.or()?;
                self.depth -= 1;
                Selector::Filter(Box::new(filter))
            }
            Some('\'' | '"') => self.names()?,
            Some(c) if c == '-' || c == ':' || c.is_ascii_digit() => self.numbers()?,
            _ => return self.fail("expected a name, an index, '*' or a filter"),
        };
        self.skip_ws();
        self.expect("]")?;
        Ok(selector)
    }

    fn names(&mut self) -> Result<Selector, ParseError> {
        let mut names = vec![self.string()?];
        self.skip_ws();
        while self.eat(",") {
            self.skip_ws();
            names.push(self.string()?);
            self.skip_ws();
        }
        Ok(match <[String; 1]>::try_from(names) {
            Ok([name]) => Selector::Name(name),
            Err(names) => Selector::Names(names),
        })
    }

    fn numbers(&mut self) -> Result<Selector, ParseError> {
        let first = self.int()?;
        self.skip_ws();
        if self.peek() == Some(':') {
            return self.slice(first);
        }
        let Some(first) = first else {
            return self.fail("expected an index");
        };
        let mut indexes = vec![first];
        while self.eat(",") {
            self.skip_ws();
            match self.int()? {
                Some(index) => indexes.push(index),
                None => return self.fail("expected an index"),
            }
            self.skip_ws();
        }
        Ok(match <[i64; 1]>::try_from(indexes) {
            Ok([index]) => Selector::Index(index),
            Err(indexes) => Selector::Indexes(indexes),
        })
    }

    fn slice(&mut self, start: Option<i64>) -> Result<Selector, ParseError> {
        self.expect(":")?;
        self.skip_ws();
        let end = self.int()?;
        self.skip_ws();
        let step = if self.eat(":") {
            self.skip_ws();
            self.int()?
        } else {
            None
        };
        if step == Some(0) {
            return self.fail("a slice's step is not 0");
        }
        Ok(Selector::Slice(Slice { start, end, step }))
    }

    /// An optional signed integer.
    fn int(&mut self) -> Result<Option<i64>, ParseError> {
        let start = self.pos;
        self.eat("-");
        while self.peek().is_some_and(|c| c.is_ascii_digit()) {
            self.pos += 1;
        }
        let digits = &self.text[start..self.pos];
        if digits.is_empty() {
            return Ok(None);
        }
        match digits.parse() {
            Ok(n) => Ok(Some(n)),
            Err(_) => {
                self.pos = start;
                self.fail("expected an integer")
            }
        }
    }

    /// A quoted string, `'...'` or `"..."`, with JSON's escapes and `\'`.
    fn string(&mut self) -> Result<String, ParseError> {
        let quote = match self.bump() {
            Some(q @ ('\'' | '"')) => q,
            _ => return self.fail("expected a quoted name"),
        };
        let mut out = String::new();
        loop {
            match self.bump() {
                None => return self.fail("unterminated string"),
                Some(c) if c == quote => return Ok(out),
                Some('\\') => out.push(self.escape()?),
                Some(c) => out.push(c),
            }
        }
    }

    fn escape(&mut self) -> Result<char, ParseError> {
        Ok(match self.bump() {
            Some('b') => '\u{8}',
            Some('f') => '\u{c}',
            Some('n') => '\n',
            Some('r') => '\r',
            Some('t') => '\t',
            Some('u') => return self.unicode(),
            Some(c @ ('\\' | '/' | '\'' | '"')) => c,
            _ => return self.fail("bad escape"),
        })
    }

    fn unicode(&mut self) -> Result<char, ParseError> {
        let high = self.hex4()?;
        if (0xD800..0xDC00).contains(&high) && self.eat("\\u") {
            let low = self.hex4()?;
            let code = 0x10000 + ((high - 0xD800) << 10) + (low.wrapping_sub(0xDC00) & 0x3FF);
            return char::from_u32(code).map_or_else(|| self.fail("bad \\u escape"), Ok);
        }
        char::from_u32(high).map_or_else(|| self.fail("bad \\u escape"), Ok)
    }

    fn hex4(&mut self) -> Result<u32, ParseError> {
        let digits = self.rest().get(..4).unwrap_or_default();
        match u32::from_str_radix(digits, 16) {
            Ok(n) if digits.len() == 4 && digits.bytes().all(|b| b.is_ascii_hexdigit()) => {
                self.pos += 4;
                Ok(n)
            }
            _ => self.fail("bad \\u escape"),
        }
    }

    fn or(&mut self) -> Result<Filter, ParseError> {
        self.chain("||", Self::and, Filter::Or)
    }

    fn and(&mut self) -> Result<Filter, ParseError> {
        self.chain("&&", Self::unary, Filter::And)
    }

    /// `term (op term)*`, joined when there is more than one term.
    fn chain(
        &mut self,
        op: &str,
        term: fn(&mut Self) -> Result<Filter, ParseError>,
        join: fn(Vec<Filter>) -> Filter,
    ) -> Result<Filter, ParseError> {
        let mut terms = vec![term(self)?];
        while self.eat(op) {
            terms.push(term(self)?);
        }
        Ok(if terms.len() == 1 {
            terms.remove(0)
        } else {
            join(terms)
        })
    }

    fn unary(&mut self) -> Result<Filter, ParseError> {
        self.skip_ws();
        let filter = if self.peek() == Some('!') && !self.rest().starts_with("!=") {
            self.pos += 1;
            self.enter()?;
            let inner = self.unary()?;
            self.depth -= 1;
            Filter::Not(Box::new(inner))
        } else if self.eat("(") {
            self.enter()?;
            let inner = self.or()?;
            self.depth -= 1;
            self.skip_ws();
            self.expect(")")?;
            inner
        } else {
            self.comparison()?
        };
        self.skip_ws();
        Ok(filter)
    }

    fn comparison(&mut self) -> Result<Filter, ParseError> {
        let left = self.operand()?;
        self.skip_ws();
        if self.eat("=~") {
            self.skip_ws();
            return Ok(Filter::Matches(left, self.pattern()?));
        }
        let Some(op) = self.comparison_op() else {
            return Ok(Filter::Exists(left));
        };
        self.skip_ws();
        let right = self.operand()?;
        Ok(Filter::Compare(left, op, right))
    }

    fn comparison_op(&mut self) -> Option<Comparison> {
        let ops = [
            ("==", Comparison::Eq),
            ("!=", Comparison::Ne),
            ("<=", Comparison::Le),
            (">=", Comparison::Ge),
            ("<", Comparison::Lt),
            (">", Comparison::Gt),
            ("in", Comparison::In),
            ("nin", Comparison::Nin),
            ("subsetof", Comparison::SubsetOf),
            ("anyof", Comparison::AnyOf),
            ("noneof", Comparison::NoneOf),
            ("size", Comparison::Size),
            ("empty", Comparison::Empty),
        ];
        ops.into_iter()
            .find(|(token, _)| self.operator(token))
            .map(|(_, op)| op)
    }

    /// Reads `token`; a word operator must not run on into a name.
    fn operator(&mut self, token: &str) -> bool {
        let rest = self.rest();
        if !rest.starts_with(token) {
            return false;
        }
        let word = token.starts_with(|c: char| c.is_ascii_alphabetic());
        if word && rest[token.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_') {
            return false;
        }
        self.pos += token.len();
        true
    }

    /// `/regex/flags`, compiled to match whole strings.
    fn pattern(&mut self) -> Result<Pattern, ParseError> {
        let start = self.pos;
        self.expect("/")?;
        let mut source = String::new();
        loop {
            match self.bump() {
                None => return self.fail("unterminated regular expression"),
                Some('/') => break,
                Some('\\') if self.eat("/") => source.push('/'),
                Some('\\') => {
                    source.push('\\');
                    if let Some(c) = self.bump() {
                        source.push(c);
                    }
                }
                Some(c) => source.push(c),
            }
        }
        let flags: String = self
            .rest()
            .chars()
            .take_while(|c| c.is_ascii_alphabetic())
            .collect();
        self.pos += flags.len();
        if source.len() > MAX_REGEX_LEN {
            self.pos = start;
            return self.fail(&format!(
                "a regular expression is at most {MAX_REGEX_LEN} bytes"
            ));
        }
        let flags: String = flags
            .chars()
            .filter(|c| matches!(c, 'i' | 'm' | 's'))
            .collect();
        let whole = if flags.is_empty() {
            format!("^(?:{source})$")
        } else {
            format!("^(?{flags}:{source})$")
        };
        match regex_lite::Regex::new(&whole) {
            Ok(regex) => Ok(Pattern(regex)),
            Err(e) => {
                self.pos = start;
                self.fail(&format!("bad regular expression: {e}"))
            }
        }
    }

    fn operand(&mut self) -> Result<Operand, ParseError> {
        if self.eat("@") {
            return Ok(Operand::Current(self.path(true)?));
        }
        if self.eat("$") {
            return Ok(Operand::Root(self.path(true)?));
        }
        match self.peek() {
            Some('[') => self.array(),
            Some('\'' | '"') => Ok(Operand::Literal(Value::String(self.string()?))),
            Some(c) if c == '-' || c.is_ascii_digit() => self.number(),
            _ => self.word(),
        }
    }

    /// `['a', 1, true]`: the right side of `in`, `subsetof`...
    fn array(&mut self) -> Result<Operand, ParseError> {
        self.expect("[")?;
        let mut items = Vec::new();
        loop {
            self.skip_ws();
            if self.eat("]") {
                return Ok(Operand::Literal(Value::Array(items)));
            }
            if !items.is_empty() {
                self.expect(",")?;
                self.skip_ws();
            }
            if self.peek() == Some('[') {
                return self.fail("an array holds strings, numbers, true, false or null");
            }
            match self.operand()? {
                Operand::Literal(
                    item @ (Value::String(_) | Value::Number(_) | Value::Bool(_) | Value::Null),
                ) => items.push(item),
                _ => return self.fail("an array holds strings, numbers, true, false or null"),
            }
        }
    }

    fn number(&mut self) -> Result<Operand, ParseError> {
        let start = self.pos;
        while self
            .peek()
            .is_some_and(|c| c.is_ascii_digit() || matches!(c, '-' | '+' | '.' | 'e' | 'E'))
        {
            self.pos += 1;
        }
        match serde_json::from_str::<Value>(&self.text[start..self.pos]) {
            Ok(n @ Value::Number(_)) => Ok(Operand::Literal(n)),
            _ => {
                self.pos = start;
                self.fail("bad number")
            }
        }
    }

    fn word(&mut self) -> Result<Operand, ParseError> {
        for (token, value) in [
            ("true", Value::Bool(true)),
            ("false", Value::Bool(false)),
            ("null", Value::Null),
        ] {
            if self.eat(token) {
                return Ok(Operand::Literal(value));
            }
        }
        self.fail("expected '@', '$', a string, a number, true, false or null")
    }
}
