//! The metric math grammar: numbers, strings in single or double quotes, query ids
//! (starting with a lower-case letter), keywords (`REPEAT`, `LINEAR`), function calls,
//! `+ - * / ^`, the comparisons `== != < <= > >=`, `AND`/`&&`, `OR`/`||`, `NOT`/`!` and
//! parentheses. Precedence from loosest: OR, AND, comparisons, `+ -`, `* /`, unary minus
//! and NOT, `^` (right-associative). Expressions are at most [`MAX_LEN`] characters and
//! nest at most [`MAX_DEPTH`] deep (parentheses, calls, unary operators and each operator
//! of a chain such as `m1 + m2 + m3` count), so neither parsing nor evaluation recurses
//! without a bound.

/// The longest expression AWS takes (the MetricExpression shape's limit).
pub(crate) const MAX_LEN: usize = 2048;
/// The deepest nesting the parser follows.
const MAX_DEPTH: usize = 64;

/// A binary operator.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum Op {
    Add,
    Sub,
    Mul,
    Div,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    And,
    Or,
}

/// A parsed expression.
#[derive(Debug, Clone, PartialEq)]
pub(crate) enum Expr {
    Number(f64),
    Text(String),
    /// Another query's id.
    Id(String),
    /// A bare upper-case word given as an argument (`REPEAT`, `LINEAR`).
    Keyword(String),
    Neg(Box<Expr>),
    Not(Box<Expr>),
    Binary(Op, Box<Expr>, Box<Expr>),
    /// A function (its name upper-cased) and its arguments.
    Call(String, Vec<Expr>),
}

impl Expr {
    /// The query ids the expression reads, in order.
    pub fn ids(&self) -> Vec<&str> {
        let mut out = Vec::new();
        let mut stack = vec![self];
        while let Some(e) = stack.pop() {
            match e {
                Expr::Id(id) => out.push(id.as_str()),
                Expr::Neg(a) | Expr::Not(a) => stack.push(a),
                Expr::Binary(_, a, b) => {
                    stack.push(b);
                    stack.push(a);
                }
                Expr::Call(_, args) => stack.extend(args.iter().rev()),
                Expr::Number(_) | Expr::Text(_) | Expr::Keyword(_) => {}
            }
        }
        out
    }
}

/// Parses an expression; the error says what is wrong and where.
pub(crate) fn parse(text: &str) -> Result<Expr, String> {
    if text.chars().count() > MAX_LEN {
        return Err(format!(
            "the expression is longer than {MAX_LEN} characters"
        ));
    }
    if text.trim().is_empty() {
        return Err("the expression is empty".to_string());
    }
    let mut p = Parser { text, pos: 0 };
    let expr = p.or(0)?;
    p.skip_space();
    if p.pos < text.len() {
        return Err(p.unexpected());
    }
    Ok(expr)
}

struct Parser<'a> {
    text: &'a str,
    pos: usize,
}

/// The operators of each binary level, loosest first, with their spellings.
const LEVELS: &[&[(&str, Op)]] = &[
    &[("||", Op::Or), ("OR", Op::Or)],
    &[("&&", Op::And), ("AND", Op::And)],
    &[
        ("==", Op::Eq),
        ("!=", Op::Ne),
        ("<=", Op::Le),
        (">=", Op::Ge),
        ("<", Op::Lt),
        (">", Op::Gt),
    ],
    &[("+", Op::Add), ("-", Op::Sub)],
    &[("*", Op::Mul), ("/", Op::Div)],
];

impl<'a> Parser<'a> {
    fn rest(&self) -> &'a str {
        &self.text[self.pos..]
    }

    fn skip_space(&mut self) {
        let rest = self.rest();
        self.pos += rest.len() - rest.trim_start().len();
    }

    fn unexpected(&self) -> String {
        match self.rest().chars().next() {
            Some(c) => format!("unexpected '{c}' at character {}", self.pos + 1),
            None => "unexpected end of expression".to_string(),
        }
    }

    /// Consumes `symbol` if it comes next (a word only when not followed by a word char).
    fn eat(&mut self, symbol: &str) -> bool {
        self.skip_space();
        let rest = self.rest();
        let word = symbol.chars().all(|c| c.is_ascii_alphabetic());
        let matched = if word {
            rest.get(..symbol.len())
                .is_some_and(|head| head.eq_ignore_ascii_case(symbol))
                && !rest[symbol.len()..].starts_with(|c: char| c.is_alphanumeric() || c == '_')
        } else {
            rest.starts_with(symbol)
        };
        if matched {
            self.pos += symbol.len();
        }
        matched
    }

    fn deeper(depth: usize) -> Result<usize, String> {
        if depth >= MAX_DEPTH {
            return Err(format!("the expression nests deeper than {MAX_DEPTH}"));
        }
        Ok(depth + 1)
    }

    /// The binary level `level` of [`LEVELS`] (past the last: unary).
    fn binary(&mut self, level: usize, depth: usize) -> Result<Expr, String> {
        let Some(ops) = LEVELS.get(level) else {
            return self.unary(depth);
        };
        let mut depth = depth;
        let mut left = self.binary(level + 1, depth)?;
        'outer: loop {
            for (symbol, op) in *ops {
                if self.eat(symbol) {
                    // each operator of a chain nests the chain one deeper
                    depth = Self::deeper(depth)?;
                    let right = self.binary(level + 1, depth)?;
                    left = Expr::Binary(*op, Box::new(left), Box::new(right));
                    continue 'outer;
                }
            }
            return Ok(left);
        }
    }

    fn or(&mut self, depth: usize) -> Result<Expr, String> {
        self.binary(0, Self::deeper(depth)?)
    }

    fn unary(&mut self, depth: usize) -> Result<Expr, String> {
        if self.eat("-") {
            return Ok(Expr::Neg(Box::new(self.unary(Self::deeper(depth)?)?)));
        }
        if self.eat("+") {
            return self.unary(Self::deeper(depth)?);
        }
        if self.rest().trim_start().starts_with("!=") {
            return Err(self.unexpected());
        }
        if self.eat("!") || self.eat("NOT") {
            return Ok(Expr::Not(Box::new(self.unary(Self::deeper(depth)?)?)));
        }
        let base = self.primary(depth)?;
        if self.eat("^") {
            let exponent = self.unary(Self::deeper(depth)?)?;
            return Ok(Expr::Binary(Op::Pow, Box::new(base), Box::new(exponent)));
        }
        Ok(base)
    }

    fn primary(&mut self, depth: usize) -> Result<Expr, String> {
        self.skip_space();
        let Some(c) = self.rest().chars().next() else {
            return Err(self.unexpected());
        };
        if self.eat("(") {
            let inner = self.or(depth)?;
            if !self.eat(")") {
                return Err(self.unexpected());
            }
            return Ok(inner);
        }
        if c == '\'' || c == '"' {
            return self.quoted(c);
        }
        if c.is_ascii_digit() || c == '.' {
            return self.number();
        }
        if c.is_alphabetic() {
            let word = self.word();
            if self.eat("(") {
                return self.call(word.to_ascii_uppercase(), depth);
            }
            return Ok(if c.is_lowercase() {
                Expr::Id(word)
            } else {
                Expr::Keyword(word)
            });
        }
        Err(self.unexpected())
    }

    fn word(&mut self) -> String {
        let rest = self.rest();
        let len = rest
            .find(|c: char| !(c.is_alphanumeric() || c == '_'))
            .unwrap_or(rest.len());
        self.pos += len;
        rest[..len].to_string()
    }

    fn number(&mut self) -> Result<Expr, String> {
        let rest = self.rest();
        let mut len = rest
            .find(|c: char| !(c.is_ascii_digit() || c == '.'))
            .unwrap_or(rest.len());
        let exponent = rest[len..].strip_prefix(['e', 'E']).map(|e| {
            let sign = usize::from(e.starts_with(['+', '-']));
            let digits = e[sign..]
                .find(|c: char| !c.is_ascii_digit())
                .unwrap_or(e.len() - sign);
            (digits > 0).then_some(1 + sign + digits)
        });
        if let Some(Some(extra)) = exponent {
            len += extra;
        }
        let value = rest[..len]
            .parse::<f64>()
            .map_err(|_| format!("invalid number '{}'", &rest[..len]))?;
        self.pos += len;
        Ok(Expr::Number(value))
    }

    fn quoted(&mut self, quote: char) -> Result<Expr, String> {
        let start = self.pos;
        let body = &self.rest()[1..];
        let Some(end) = body.find(quote) else {
            return Err(format!("unterminated string at character {}", start + 1));
        };
        self.pos += end + 2;
        Ok(Expr::Text(body[..end].to_string()))
    }

    fn call(&mut self, name: String, depth: usize) -> Result<Expr, String> {
        let mut args = Vec::new();
        if self.eat(")") {
            return Ok(Expr::Call(name, args));
        }
        loop {
            args.push(self.or(depth)?);
            if self.eat(")") {
                return Ok(Expr::Call(name, args));
            }
            if !self.eat(",") {
                return Err(self.unexpected());
            }
        }
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    fn id(s: &str) -> Box<Expr> {
        Box::new(Expr::Id(s.to_string()))
    }

    #[test]
    fn precedence_and_associativity() {
        let e = parse("m1 + m2 * 2 ^ 2").unwrap();
        let Expr::Binary(Op::Add, a, b) = e else {
            panic!("{e:?}")
        };
        assert_eq!(a, id("m1"));
        assert!(matches!(*b, Expr::Binary(Op::Mul, _, _)));
        let e = parse("m1 > 2 AND NOT m2 < 1 || m3 == 0").unwrap();
        assert!(matches!(e, Expr::Binary(Op::Or, _, _)));
        assert_eq!(
            parse("-m1 - 1").unwrap(),
            Expr::Binary(
                Op::Sub,
                Box::new(Expr::Neg(id("m1"))),
                Box::new(Expr::Number(1.0))
            )
        );
    }

    #[test]
    fn calls_keywords_strings_and_ids() {
        let e = parse("FILL(METRICS('err'), REPEAT) + sum(m1)").unwrap();
        let Expr::Binary(Op::Add, fill, sum) = e else {
            panic!("{e:?}")
        };
        assert!(
            matches!(*fill, Expr::Call(ref f, ref args) if f == "FILL" && args[1] == Expr::Keyword("REPEAT".into()))
        );
        assert_eq!(*sum, Expr::Call("SUM".into(), vec![Expr::Id("m1".into())]));
        let e = parse("SEARCH('{App,Host} MetricName=\"Latency\"', 'Average', 60)").unwrap();
        let Expr::Call(name, args) = e else { panic!() };
        assert_eq!(name, "SEARCH");
        assert_eq!(
            args[0],
            Expr::Text("{App,Host} MetricName=\"Latency\"".into())
        );
        assert_eq!(parse("IF(m1 > 1, m1, 0)").unwrap().ids(), vec!["m1", "m1"]);
        assert_eq!(parse("1.5e3").unwrap(), Expr::Number(1500.0));
    }

    #[test]
    fn bad_expressions_say_where() {
        assert!(parse("m1 +").unwrap_err().contains("end of expression"));
        assert!(parse("m1 $ 2").unwrap_err().contains("'$' at character 4"));
        assert!(parse("(m1").is_err());
        assert!(parse("FILL(m1,").is_err());
        assert!(parse("'open").unwrap_err().contains("unterminated"));
        assert!(parse("").is_err());
        let deep = format!("{}m1{}", "(".repeat(100), ")".repeat(100));
        assert!(parse(&deep).unwrap_err().contains("deeper"));
        assert!(parse(&"-".repeat(100)).unwrap_err().contains("deeper"));
        assert!(parse(&"1+".repeat(1100)).unwrap_err().contains("longer"));
        assert!(parse(&format!("{}m1", "m1-".repeat(70)))
            .unwrap_err()
            .contains("deeper"));
        assert!(parse(&format!("{}m1", "m1+".repeat(50))).is_ok());
    }
}
