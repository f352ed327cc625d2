//! S3 Select's SQL dialect: a lexer and a recursive-descent parser into [`Query`].
//!
//! No crate speaks this dialect (a subset of PartiQL with S3's `S3Object` source, `_N`
//! positional columns and its own error codes), so it is written here. The grammar is
//! `SELECT list FROM S3Object[path] [[AS] alias] [WHERE expr] [LIMIT n]`, with the
//! expressions AWS documents: comparisons, AND/OR/NOT, LIKE, BETWEEN, IN, IS [NOT]
//! NULL/MISSING, arithmetic, `||`, CAST, CASE, backquoted Ion timestamps, the date
//! functions (whose first argument is a date part) and function calls. Nesting is bounded
//! ([`MAX_DEPTH`]), so no input can overflow the stack; errors carry S3's codes.

use roto_core::AwsError;

use super::time::{DatePart, Timestamp};

/// The longest expression S3 accepts (256 KB).
pub const MAX_EXPRESSION: usize = 256 * 1024;
/// How deeply expressions may nest.
const MAX_DEPTH: usize = 64;

/// A parsed SELECT statement.
#[derive(Debug, Clone, PartialEq)]
pub struct Query {
    /// `None` for `SELECT *`.
    pub items: Option<Vec<Item>>,
    /// The path after `S3Object`: `[*]`, `.name`, `[n]` steps.
    pub from: Vec<Step>,
    /// The alias the record goes by (`s` in `FROM S3Object s`).
    pub alias: Option<String>,
    pub filter: Option<Expr>,
    pub limit: Option<u64>,
}

/// One item of the SELECT list.
#[derive(Debug, Clone, PartialEq)]
pub struct Item {
    pub expr: Expr,
    pub alias: Option<String>,
}

/// One step of a path.
#[derive(Debug, Clone, PartialEq)]
pub enum Step {
    /// `.name` (`exact` when it was double-quoted).
    Field { name: String, exact: bool },
    /// `[n]`.
    Index(i64),
    /// `[*]`.
    Wildcard,
}

/// An expression.
#[derive(Debug, Clone, PartialEq)]
pub enum Expr {
    Literal(Literal),
    /// A name and the steps after it (`s.a.b`, `_1`, `"Name"`).
    Path {
        head: String,
        exact: bool,
        steps: Vec<Step>,
    },
    Unary(UnaryOp, Box<Expr>),
    Binary(BinaryOp, Box<Expr>, Box<Expr>),
    Like {
        value: Box<Expr>,
        pattern: Box<Expr>,
        escape: Option<Box<Expr>>,
        negated: bool,
    },
    Between {
        value: Box<Expr>,
        low: Box<Expr>,
        high: Box<Expr>,
        negated: bool,
    },
    In {
        value: Box<Expr>,
        list: Vec<Expr>,
        negated: bool,
    },
    /// `IS [NOT] NULL` (`missing` for `IS [NOT] MISSING`).
    Is {
        value: Box<Expr>,
        missing: bool,
        negated: bool,
    },
    Cast(Box<Expr>, CastType),
    /// A function call by its upper-cased name.
    Call(String, Vec<Expr>),
    /// `TRIM([LEADING|TRAILING|BOTH] [chars] FROM value)`.
    Trim {
        value: Box<Expr>,
        chars: Option<Box<Expr>>,
        side: TrimSide,
    },
    /// An aggregate; `None` is `COUNT(*)`.
    Aggregate(Aggregate, Option<Box<Expr>>),
    /// `CASE [operand] WHEN ... THEN ... [ELSE ...] END`: simple with an operand, else
    /// searched.
    Case {
        operand: Option<Box<Expr>>,
        whens: Vec<(Expr, Expr)>,
        otherwise: Option<Box<Expr>>,
    },
    /// `DATE_ADD(part, quantity, timestamp)`.
    DateAdd(DatePart, Box<Expr>, Box<Expr>),
    /// `DATE_DIFF(part, from, to)`.
    DateDiff(DatePart, Box<Expr>, Box<Expr>),
    /// `EXTRACT(part FROM timestamp)`.
    Extract(DatePart, Box<Expr>),
}

/// A literal value.
#[derive(Debug, Clone, PartialEq)]
pub enum Literal {
    Null,
    Missing,
    Bool(bool),
    Int(i64),
    Float(f64),
    Str(String),
    /// A backquoted Ion timestamp (`` `2010-01-01T` ``).
    Timestamp(Timestamp),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum UnaryOp {
    Not,
    Neg,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum BinaryOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Concat,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

/// The types CAST converts to.
#[derive(Debug, Clone, Copy, PartialEq)]
pub enum CastType {
    Int,
    Float,
    Decimal,
    String,
    Bool,
    Timestamp,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum TrimSide {
    Leading,
    Trailing,
    Both,
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub enum Aggregate {
    Count,
    Sum,
    Avg,
    Min,
    Max,
}

impl Expr {
    /// Whether the expression holds an aggregate call.
    pub fn has_aggregate(&self) -> bool {
        match self {
            Expr::Aggregate(..) => true,
            Expr::Literal(_) | Expr::Path { .. } => false,
            Expr::Unary(_, e) | Expr::Cast(e, _) | Expr::Extract(_, e) => e.has_aggregate(),
            Expr::Binary(_, a, b) | Expr::DateAdd(_, a, b) | Expr::DateDiff(_, a, b) => {
                a.has_aggregate() || b.has_aggregate()
            }
            Expr::Case {
                operand,
                whens,
                otherwise,
            } => {
                [operand, otherwise]
                    .into_iter()
                    .any(|e| e.as_ref().is_some_and(|e| e.has_aggregate()))
                    || whens
                        .iter()
                        .any(|(w, t)| w.has_aggregate() || t.has_aggregate())
            }
            Expr::Like {
                value,
                pattern,
                escape,
                ..
            } => {
                value.has_aggregate()
                    || pattern.has_aggregate()
                    || escape.as_ref().is_some_and(|e| e.has_aggregate())
            }
            Expr::Between {
                value, low, high, ..
            } => value.has_aggregate() || low.has_aggregate() || high.has_aggregate(),
            Expr::In { value, list, .. } => {
                value.has_aggregate() || list.iter().any(Expr::has_aggregate)
            }
            Expr::Is { value, .. } => value.has_aggregate(),
            Expr::Call(_, args) => args.iter().any(Expr::has_aggregate),
            Expr::Trim { value, chars, .. } => {
                value.has_aggregate() || chars.as_ref().is_some_and(|c| c.has_aggregate())
            }
        }
    }
}

/// A token and where it starts (a 1-based column, as S3's messages count).
#[derive(Debug, Clone, PartialEq)]
enum Token {
    /// An identifier, or a keyword when not quoted.
    Ident(String, bool),
    Str(String),
    Int(i64),
    Float(f64),
    Timestamp(Timestamp),
    Sym(&'static str),
    End,
}

/// An S3 Select error with its code and message (HTTP 400).
pub fn error(code: &'static str, message: impl Into<String>) -> AwsError {
    AwsError::new(code, message).with_status(400)
}

const SYMBOLS: &[&str] = &[
    "<>", "!=", "<=", ">=", "||", "(", ")", ",", ".", "*", "+", "-", "/", "%", "=", "<", ">", "[",
    "]",
];

fn lex(text: &str) -> Result<Vec<(Token, usize)>, AwsError> {
    let chars: Vec<char> = text.chars().collect();
    let mut tokens = Vec::new();
    let mut i = 0;
    while i < chars.len() {
        let c = chars[i];
        let at = i + 1;
        if c.is_whitespace() {
            i += 1;
        } else if c == '\'' || c == '"' {
            let (value, next) = quoted(&chars, i, c)?;
            tokens.push((
                if c == '\'' {
                    Token::Str(value)
                } else {
                    Token::Ident(value, true)
                },
                at,
            ));
            i = next;
        } else if c == '`' {
            let Some(len) = chars[i + 1..].iter().position(|&c| c == '`') else {
                return Err(invalid_ion(at));
            };
            let text: String = chars[i + 1..i + 1 + len].iter().collect();
            let ts = Timestamp::parse(text.trim()).ok_or_else(|| invalid_ion(at))?;
            tokens.push((Token::Timestamp(ts), at));
            i += len + 2;
        } else if c.is_ascii_digit() {
            let start = i;
            while i < chars.len() && (chars[i].is_ascii_digit() || chars[i] == '.') {
                i += 1;
            }
            if i < chars.len() && (chars[i] == 'e' || chars[i] == 'E') {
                i += 1;
                if i < chars.len() && (chars[i] == '+' || chars[i] == '-') {
                    i += 1;
                }
                while i < chars.len() && chars[i].is_ascii_digit() {
                    i += 1;
                }
            }
            let s: String = chars[start..i].iter().collect();
            let token = match s.parse::<i64>() {
                Ok(n) => Token::Int(n),
                Err(_) => Token::Float(s.parse().map_err(|_| {
                    error(
                        "LexerInvalidLiteral",
                        "The SQL expression contains an invalid literal.",
                    )
                })?),
            };
            tokens.push((token, at));
        } else if c.is_alphabetic() || c == '_' {
            let start = i;
            while i < chars.len() && (chars[i].is_alphanumeric() || chars[i] == '_') {
                i += 1;
            }
            tokens.push((Token::Ident(chars[start..i].iter().collect(), false), at));
        } else {
            let rest: String = chars[i..chars.len().min(i + 2)].iter().collect();
            let Some(sym) = SYMBOLS.iter().find(|s| rest.starts_with(**s)) else {
                return Err(error(
                    "LexerInvalidChar",
                    format!(
                        "The SQL expression contains an invalid character at line 1, column {at}."
                    ),
                ));
            };
            tokens.push((Token::Sym(sym), at));
            i += sym.chars().count();
        }
    }
    tokens.push((Token::End, chars.len() + 1));
    Ok(tokens)
}

/// The error for a backquoted literal that is not an Ion timestamp.
fn invalid_ion(at: usize) -> AwsError {
    error(
        "LexerInvalidIONLiteral",
        format!("The SQL expression contains an invalid ION literal at line 1, column {at}."),
    )
}

/// A quoted string or identifier starting at `start`, with the doubled quote as escape.
fn quoted(chars: &[char], start: usize, quote: char) -> Result<(String, usize), AwsError> {
    let mut value = String::new();
    let mut i = start + 1;
    loop {
        match chars.get(i) {
            None => {
                return Err(error(
                    "LexerInvalidLiteral",
                    "The SQL expression contains an unterminated literal.",
                ))
            }
            Some(&c) if c == quote => {
                if chars.get(i + 1) == Some(&quote) {
                    value.push(quote);
                    i += 2;
                } else {
                    return Ok((value, i + 1));
                }
            }
            Some(&c) => {
                value.push(c);
                i += 1;
            }
        }
    }
}

/// Parses one SELECT statement.
pub fn parse(text: &str) -> Result<Query, AwsError> {
    if text.len() > MAX_EXPRESSION {
        return Err(error(
            "ExpressionTooLong",
            "The SQL expression is too long: The maximum byte-length for the SQL expression is 256 KB.",
        ));
    }
    let mut parser = Parser {
        tokens: lex(text)?,
        at: 0,
        depth: 0,
    };
    let query = parser.query()?;
    parser.eat_sym(";");
    match parser.peek() {
        Token::End => Ok(query),
        _ => Err(parser.unexpected()),
    }
}

struct Parser {
    tokens: Vec<(Token, usize)>,
    at: usize,
    depth: usize,
}

impl Parser {
    fn peek(&self) -> &Token {
        &self.tokens[self.at.min(self.tokens.len() - 1)].0
    }

    fn column(&self) -> usize {
        self.tokens[self.at.min(self.tokens.len() - 1)].1
    }

    /// The next token, moving past it (past the end too, so that a step back always
    /// returns to the token just read).
    fn next(&mut self) -> Token {
        let token = self.peek().clone();
        self.at += 1;
        token
    }

    fn unexpected(&self) -> AwsError {
        let token = match self.peek() {
            Token::End => return self.expected_expression(),
            Token::Ident(s, _) | Token::Str(s) => s.clone(),
            Token::Int(n) => n.to_string(),
            Token::Float(f) => f.to_string(),
            Token::Timestamp(t) => format!("`{}`", t.text()),
            Token::Sym(s) => s.to_string(),
        };
        error(
            "ParseUnexpectedToken",
            format!(
                "Unexpected token found {token} at line 1, column {}.",
                self.column()
            ),
        )
    }

    fn expected_expression(&self) -> AwsError {
        error(
            "ParseExpectedExpression",
            format!("Expected expression at line 1, column {}.", self.column()),
        )
    }

    /// Whether the next token is the keyword `word`.
    fn is_keyword(&self, word: &str) -> bool {
        matches!(self.peek(), Token::Ident(s, false) if s.eq_ignore_ascii_case(word))
    }

    fn eat_keyword(&mut self, word: &str) -> bool {
        let found = self.is_keyword(word);
        if found {
            self.next();
        }
        found
    }

    fn expect_keyword(&mut self, word: &str) -> Result<(), AwsError> {
        if self.eat_keyword(word) {
            return Ok(());
        }
        Err(error(
            "ParseExpectedKeyword",
            format!(
                "Did not find the expected keyword {word} at line 1, column {}.",
                self.column()
            ),
        ))
    }

    fn eat_sym(&mut self, sym: &str) -> bool {
        let found = matches!(self.peek(), Token::Sym(s) if *s == sym);
        if found {
            self.next();
        }
        found
    }

    fn expect_sym(&mut self, sym: &str) -> Result<(), AwsError> {
        if self.eat_sym(sym) {
            Ok(())
        } else {
            Err(self.unexpected())
        }
    }

    fn query(&mut self) -> Result<Query, AwsError> {
        self.expect_keyword("SELECT")?;
        let items = self.select_list()?;
        if !self.is_keyword("FROM") {
            return Err(error(
                "ParseSelectMissingFrom",
                "The SQL expression contains a missing FROM after SELECT list.",
            ));
        }
        self.next();
        let from = self.source()?;
        let alias = self.alias()?;
        let filter = if self.eat_keyword("WHERE") {
            Some(self.expr()?)
        } else {
            None
        };
        let limit = if self.eat_keyword("LIMIT") {
            match self.next() {
                Token::Int(n) if n >= 0 => Some(n as u64),
                Token::Sym("-") => {
                    return Err(error(
                        "EvaluatorNegativeLimit",
                        "LIMIT must not be negative.",
                    ))
                }
                _ => {
                    self.at -= 1;
                    return Err(error(
                        "ParseExpectedNumber",
                        format!(
                            "Did not find the expected number at line 1, column {}.",
                            self.column()
                        ),
                    ));
                }
            }
        } else {
            None
        };
        Ok(Query {
            items,
            from,
            alias,
            filter,
            limit,
        })
    }

    fn select_list(&mut self) -> Result<Option<Vec<Item>>, AwsError> {
        if self.eat_sym("*") {
            if matches!(self.peek(), Token::Sym(",")) {
                return Err(error(
                    "ParseAsteriskIsNotAloneInSelectList",
                    "Other expressions are not allowed in the SELECT list when '*' is used without dot notation in the SQL expression.",
                ));
            }
            return Ok(None);
        }
        if self.is_keyword("FROM") {
            return Err(error(
                "ParseEmptySelect",
                "The SQL expression contains an empty SELECT.",
            ));
        }
        let mut items = Vec::new();
        loop {
            let expr = self.expr()?;
            let alone = items.is_empty() && !matches!(self.peek(), Token::Sym(","));
            if matches!(&expr, Expr::Path { steps, .. } if steps == &[Step::Wildcard]) && alone {
                // `s.*` alone is `*`.
                return Ok(None);
            }
            let alias = if self.eat_keyword("AS") {
                Some(self.identifier()?)
            } else {
                match self.peek() {
                    Token::Ident(_, quoted) if *quoted || !self.is_keyword("FROM") => {
                        Some(self.identifier()?)
                    }
                    _ => None,
                }
            };
            items.push(Item { expr, alias });
            if !self.eat_sym(",") {
                return Ok(Some(items));
            }
        }
    }

    fn identifier(&mut self) -> Result<String, AwsError> {
        match self.next() {
            Token::Ident(name, _) => Ok(name),
            _ => {
                self.at -= 1;
                Err(error(
                    "ParseExpectedIdentForAlias",
                    format!(
                        "Did not find the expected identifier for the alias at line 1, column {}.",
                        self.column()
                    ),
                ))
            }
        }
    }

    /// `S3Object` and its path.
    fn source(&mut self) -> Result<Vec<Step>, AwsError> {
        match self.next() {
            Token::Ident(name, false) if name.eq_ignore_ascii_case("S3Object") => self.steps(),
            _ => {
                self.at -= 1;
                Err(error(
                    "InvalidDataSource",
                    "Invalid data source type. Only CSV, JSON, and Parquet are supported.",
                ))
            }
        }
    }

    fn alias(&mut self) -> Result<Option<String>, AwsError> {
        if self.eat_keyword("AS") {
            return self.identifier().map(Some);
        }
        match self.peek() {
            Token::Ident(_, quoted)
                if *quoted || !["WHERE", "LIMIT"].iter().any(|k| self.is_keyword(k)) =>
            {
                self.identifier().map(Some)
            }
            _ => Ok(None),
        }
    }

    /// The `.name`, `[n]` and `[*]` steps after a path's head.
    fn steps(&mut self) -> Result<Vec<Step>, AwsError> {
        let mut steps = Vec::new();
        loop {
            if self.eat_sym(".") {
                match self.next() {
                    Token::Ident(name, exact) => steps.push(Step::Field { name, exact }),
                    Token::Sym("*") => steps.push(Step::Wildcard),
                    _ => {
                        self.at -= 1;
                        return Err(error(
                            "ParseInvalidPathComponent",
                            format!(
                                "Invalid path component at line 1, column {}.",
                                self.column()
                            ),
                        ));
                    }
                }
            } else if self.eat_sym("[") {
                match self.next() {
                    Token::Sym("*") => steps.push(Step::Wildcard),
                    Token::Int(n) => steps.push(Step::Index(n)),
                    Token::Str(name) => steps.push(Step::Field { name, exact: true }),
                    _ => {
                        self.at -= 1;
                        return Err(error(
                            "ParseInvalidPathComponent",
                            format!(
                                "Invalid path component at line 1, column {}.",
                                self.column()
                            ),
                        ));
                    }
                }
                self.expect_sym("]")?;
            } else {
                return Ok(steps);
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, AwsError> {
        self.nested(Parser::or)
    }

    /// One left-associative level of binary operators (symbols or keywords) over
    /// `operand`, the next level up in precedence. Each operator of a chain deepens the tree
    /// the evaluator walks, so it counts against [`MAX_DEPTH`] like a nesting level.
    fn level(
        &mut self,
        ops: &[(&str, BinaryOp)],
        operand: fn(&mut Parser) -> Result<Expr, AwsError>,
    ) -> Result<Expr, AwsError> {
        let outer = self.depth;
        let result = self.chain(ops, operand);
        self.depth = outer;
        result
    }

    fn chain(
        &mut self,
        ops: &[(&str, BinaryOp)],
        operand: fn(&mut Parser) -> Result<Expr, AwsError>,
    ) -> Result<Expr, AwsError> {
        let mut left = operand(self)?;
        loop {
            let found = ops.iter().find(|(word, _)| match self.peek() {
                Token::Sym(s) => s == word,
                Token::Ident(w, false) => w.eq_ignore_ascii_case(word),
                _ => false,
            });
            let Some(&(_, op)) = found else {
                return Ok(left);
            };
            self.depth += 1;
            if self.depth > MAX_DEPTH {
                return Err(too_deep());
            }
            self.next();
            left = Expr::Binary(op, Box::new(left), Box::new(operand(self)?));
        }
    }

    fn or(&mut self) -> Result<Expr, AwsError> {
        self.level(&[("OR", BinaryOp::Or)], Parser::and)
    }

    fn and(&mut self) -> Result<Expr, AwsError> {
        self.level(&[("AND", BinaryOp::And)], Parser::not)
    }

    fn not(&mut self) -> Result<Expr, AwsError> {
        if self.eat_keyword("NOT") {
            let inner = self.nested(Parser::not)?;
            return Ok(Expr::Unary(UnaryOp::Not, Box::new(inner)));
        }
        self.comparison()
    }

    /// Runs `f` one level deeper: every parenthesised or nested expression and every prefix
    /// operator passes here, so all of them are bounded.
    fn nested(&mut self, f: fn(&mut Parser) -> Result<Expr, AwsError>) -> Result<Expr, AwsError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(too_deep());
        }
        let result = f(self);
        self.depth -= 1;
        result
    }

    fn comparison(&mut self) -> Result<Expr, AwsError> {
        let left = self.concat()?;
        let op = match self.peek() {
            Token::Sym("=") => Some(BinaryOp::Eq),
            Token::Sym("<>") | Token::Sym("!=") => Some(BinaryOp::Ne),
            Token::Sym("<") => Some(BinaryOp::Lt),
            Token::Sym("<=") => Some(BinaryOp::Le),
            Token::Sym(">") => Some(BinaryOp::Gt),
            Token::Sym(">=") => Some(BinaryOp::Ge),
            _ => None,
        };
        if let Some(op) = op {
            self.next();
            return Ok(Expr::Binary(op, Box::new(left), Box::new(self.concat()?)));
        }
        if self.eat_keyword("IS") {
            let negated = self.eat_keyword("NOT");
            let missing = if self.eat_keyword("NULL") {
                false
            } else if self.eat_keyword("MISSING") {
                true
            } else {
                return Err(self.unexpected());
            };
            return Ok(Expr::Is {
                value: Box::new(left),
                missing,
                negated,
            });
        }
        let negated = self.eat_keyword("NOT");
        let value = Box::new(left);
        if self.eat_keyword("LIKE") {
            let pattern = Box::new(self.concat()?);
            let escape = if self.eat_keyword("ESCAPE") {
                Some(Box::new(self.concat()?))
            } else {
                None
            };
            return Ok(Expr::Like {
                value,
                pattern,
                escape,
                negated,
            });
        }
        if self.eat_keyword("BETWEEN") {
            let low = Box::new(self.concat()?);
            self.expect_keyword("AND")?;
            let high = Box::new(self.concat()?);
            return Ok(Expr::Between {
                value,
                low,
                high,
                negated,
            });
        }
        if self.eat_keyword("IN") {
            self.expect_sym("(")?;
            let list = self.arguments()?;
            return Ok(Expr::In {
                value,
                list,
                negated,
            });
        }
        if negated {
            return Err(self.unexpected());
        }
        Ok(*value)
    }

    fn concat(&mut self) -> Result<Expr, AwsError> {
        self.level(&[("||", BinaryOp::Concat)], Parser::additive)
    }

    fn additive(&mut self) -> Result<Expr, AwsError> {
        self.level(
            &[("+", BinaryOp::Add), ("-", BinaryOp::Sub)],
            Parser::multiplicative,
        )
    }

    fn multiplicative(&mut self) -> Result<Expr, AwsError> {
        let ops = [
            ("*", BinaryOp::Mul),
            ("/", BinaryOp::Div),
            ("%", BinaryOp::Mod),
        ];
        self.level(&ops, Parser::unary)
    }

    fn unary(&mut self) -> Result<Expr, AwsError> {
        if self.eat_sym("-") {
            let inner = self.nested(Parser::unary)?;
            return Ok(match inner {
                Expr::Literal(Literal::Int(n)) => Expr::Literal(Literal::Int(-n)),
                Expr::Literal(Literal::Float(f)) => Expr::Literal(Literal::Float(-f)),
                other => Expr::Unary(UnaryOp::Neg, Box::new(other)),
            });
        }
        if self.eat_sym("+") {
            return self.nested(Parser::unary);
        }
        self.primary()
    }

    fn primary(&mut self) -> Result<Expr, AwsError> {
        match self.next() {
            Token::Int(n) => Ok(Expr::Literal(Literal::Int(n))),
            Token::Float(f) => Ok(Expr::Literal(Literal::Float(f))),
            Token::Str(s) => Ok(Expr::Literal(Literal::Str(s))),
            Token::Timestamp(t) => Ok(Expr::Literal(Literal::Timestamp(t))),
            Token::Sym("(") => {
                let inner = self.expr()?;
                self.expect_sym(")")?;
                Ok(inner)
            }
            Token::Ident(name, true) => Ok(Expr::Path {
                head: name,
                exact: true,
                steps: self.steps()?,
            }),
            Token::Ident(name, false) => self.word(name),
            _ => {
                self.at -= 1;
                Err(self.unexpected_or_expression())
            }
        }
    }

    fn unexpected_or_expression(&self) -> AwsError {
        match self.peek() {
            Token::Sym(")") | Token::Sym(",") | Token::End => self.expected_expression(),
            _ => self.unexpected(),
        }
    }

    /// A keyword literal, a function call, or a path starting with `name`.
    fn word(&mut self, name: String) -> Result<Expr, AwsError> {
        let upper = name.to_ascii_uppercase();
        match upper.as_str() {
            "NULL" => return Ok(Expr::Literal(Literal::Null)),
            "MISSING" => return Ok(Expr::Literal(Literal::Missing)),
            "TRUE" => return Ok(Expr::Literal(Literal::Bool(true))),
            "FALSE" => return Ok(Expr::Literal(Literal::Bool(false))),
            "CASE" => return self.case(),
            "SELECT" | "FROM" | "WHERE" | "LIMIT" | "AND" | "OR" | "AS" | "IS" | "IN" | "LIKE"
            | "BETWEEN" | "ESCAPE" | "WHEN" | "THEN" | "ELSE" | "END" => {
                self.at -= 1;
                return Err(error(
                    "ParseUnExpectedKeyword",
                    format!(
                        "The SQL expression contains an unexpected keyword {upper} at line 1, column {}.",
                        self.column()
                    ),
                ));
            }
            _ => {}
        }
        if !self.eat_sym("(") {
            return Ok(Expr::Path {
                head: name,
                exact: false,
                steps: self.steps()?,
            });
        }
        match upper.as_str() {
            "CAST" => self.cast(),
            "TRIM" => self.trim(),
            "SUBSTRING" => self.substring(),
            "DATE_ADD" | "DATE_DIFF" => self.date_function(&upper),
            "EXTRACT" => self.extract(),
            "COUNT" | "SUM" | "AVG" | "MIN" | "MAX" => self.aggregate(&upper),
            _ => Ok(Expr::Call(upper, self.arguments()?)),
        }
    }

    /// Comma-separated expressions up to the closing parenthesis.
    fn arguments(&mut self) -> Result<Vec<Expr>, AwsError> {
        let mut args = Vec::new();
        if self.eat_sym(")") {
            return Ok(args);
        }
        loop {
            args.push(self.expr()?);
            if self.eat_sym(")") {
                return Ok(args);
            }
            if !self.eat_sym(",") {
                return Err(error(
                    "ParseExpectedRightParenBuiltinFunctionCall",
                    format!(
                        "Did not find the expected right parenthesis character at line 1, column {}.",
                        self.column()
                    ),
                ));
            }
        }
    }

    /// `CASE`, after its keyword.
    fn case(&mut self) -> Result<Expr, AwsError> {
        let operand = if ["WHEN", "ELSE", "END"].iter().any(|k| self.is_keyword(k)) {
            None
        } else {
            Some(Box::new(self.expr()?))
        };
        let mut whens = Vec::new();
        while self.eat_keyword("WHEN") {
            let when = self.expr()?;
            self.expect_keyword("THEN")?;
            whens.push((when, self.expr()?));
        }
        if whens.is_empty() {
            return Err(error(
                "ParseExpectedWhenClause",
                format!(
                    "Did not find the expected WHEN clause at line 1, column {}.",
                    self.column()
                ),
            ));
        }
        let otherwise = if self.eat_keyword("ELSE") {
            Some(Box::new(self.expr()?))
        } else {
            None
        };
        self.expect_keyword("END")?;
        Ok(Expr::Case {
            operand,
            whens,
            otherwise,
        })
    }

    /// A date part: `year`, `month`, `day`, `hour`, `minute`, `second`, and where `zone`
    /// the offset's `timezone_hour` and `timezone_minute`.
    fn date_part(&mut self, zone: bool) -> Result<DatePart, AwsError> {
        if let Token::Ident(name, false) = self.peek() {
            if let Some(part) = DatePart::named(name, zone) {
                self.next();
                return Ok(part);
            }
        }
        Err(error(
            "ParseExpectedDatePart",
            format!(
                "Did not find the expected date part at line 1, column {}.",
                self.column()
            ),
        ))
    }

    /// `DATE_ADD(part, quantity, timestamp)` or `DATE_DIFF(part, from, to)`.
    fn date_function(&mut self, name: &str) -> Result<Expr, AwsError> {
        let part = self.date_part(false)?;
        if !self.eat_sym(",") {
            return Err(error(
                "ParseExpectedArgumentDelimiter",
                format!(
                    "Did not find the expected argument delimiter at line 1, column {}.",
                    self.column()
                ),
            ));
        }
        let [a, b] = <[Expr; 2]>::try_from(self.arguments()?).map_err(|_| {
            error(
                "EvaluatorInvalidArguments",
                format!(
                    "Incorrect number of arguments in the function call {name} in the SQL expression."
                ),
            )
        })?;
        let (a, b) = (Box::new(a), Box::new(b));
        Ok(match name {
            "DATE_ADD" => Expr::DateAdd(part, a, b),
            _ => Expr::DateDiff(part, a, b),
        })
    }

    /// `EXTRACT(part FROM timestamp)`.
    fn extract(&mut self) -> Result<Expr, AwsError> {
        let part = self.date_part(true)?;
        self.expect_keyword("FROM")?;
        let value = self.expr()?;
        self.expect_sym(")")?;
        Ok(Expr::Extract(part, Box::new(value)))
    }

    fn cast(&mut self) -> Result<Expr, AwsError> {
        let value = self.expr()?;
        self.expect_keyword("AS")?;
        let kind = match self.next() {
            Token::Ident(t, false) => match t.to_ascii_uppercase().as_str() {
                "INT" | "INTEGER" | "BIGINT" | "SMALLINT" => CastType::Int,
                "FLOAT" | "REAL" | "DOUBLE" => CastType::Float,
                "DECIMAL" | "NUMERIC" => CastType::Decimal,
                "STRING" | "VARCHAR" | "CHAR" => CastType::String,
                "BOOL" | "BOOLEAN" => CastType::Bool,
                "TIMESTAMP" => CastType::Timestamp,
                _ => return Err(self.expected_type()),
            },
            _ => return Err(self.expected_type()),
        };
        self.expect_sym(")")?;
        Ok(Expr::Cast(Box::new(value), kind))
    }

    fn expected_type(&mut self) -> AwsError {
        self.at -= 1;
        error(
            "ParseExpectedTypeName",
            format!(
                "Did not find the expected type name at line 1, column {}.",
                self.column()
            ),
        )
    }

    fn trim(&mut self) -> Result<Expr, AwsError> {
        let side = if self.eat_keyword("LEADING") {
            Some(TrimSide::Leading)
        } else if self.eat_keyword("TRAILING") {
            Some(TrimSide::Trailing)
        } else if self.eat_keyword("BOTH") {
            Some(TrimSide::Both)
        } else {
            None
        };
        let (chars, value) = if side.is_some() && self.eat_keyword("FROM") {
            (None, self.expr()?)
        } else {
            let first = self.expr()?;
            if self.eat_keyword("FROM") {
                (Some(Box::new(first)), self.expr()?)
            } else {
                (None, first)
            }
        };
        self.expect_sym(")")?;
        Ok(Expr::Trim {
            value: Box::new(value),
            chars,
            side: side.unwrap_or(TrimSide::Both),
        })
    }

    /// `SUBSTRING(s FROM start [FOR length])` or `SUBSTRING(s, start [, length])`.
    fn substring(&mut self) -> Result<Expr, AwsError> {
        let value = self.expr()?;
        let mut args = vec![value];
        if self.eat_keyword("FROM") {
            args.push(self.expr()?);
            if self.eat_keyword("FOR") {
                args.push(self.expr()?);
            }
            self.expect_sym(")")?;
        } else if self.eat_sym(",") {
            args.extend(self.arguments()?);
        } else {
            self.expect_sym(")")?;
        }
        Ok(Expr::Call("SUBSTRING".into(), args))
    }

    fn aggregate(&mut self, name: &str) -> Result<Expr, AwsError> {
        let kind = match name {
            "COUNT" => Aggregate::Count,
            "SUM" => Aggregate::Sum,
            "AVG" => Aggregate::Avg,
            "MIN" => Aggregate::Min,
            _ => Aggregate::Max,
        };
        if self.eat_sym("*") {
            self.expect_sym(")")?;
            if kind != Aggregate::Count {
                return Err(error(
                    "ParseUnsupportedCallWithStar",
                    "Only COUNT with (*) as a parameter is supported in the SQL expression.",
                ));
            }
            return Ok(Expr::Aggregate(kind, None));
        }
        let args = self.arguments()?;
        let [arg] = <[Expr; 1]>::try_from(args).map_err(|_| {
            error(
                "ParseNonUnaryAgregateFunctionCall",
                "Only one argument is supported for aggregate functions in the SQL expression.",
            )
        })?;
        if arg.has_aggregate() {
            return Err(error(
                "ParseUnsupportedSyntax",
                "Aggregate functions cannot be nested.",
            ));
        }
        Ok(Expr::Aggregate(kind, Some(Box::new(arg))))
    }
}

/// The error for an expression past [`MAX_DEPTH`].
fn too_deep() -> AwsError {
    error(
        "ParseUnsupportedSyntax",
        "The SQL expression nests too deeply.",
    )
}

#[cfg(test)]
mod tests {
    use super::*;

    fn path(head: &str) -> Expr {
        Expr::Path {
            head: head.into(),
            exact: false,
            steps: vec![],
        }
    }

    #[test]
    fn parses_star_from_s3object_with_alias_where_and_limit() {
        assert_eq!(parse("SELECT s.* FROM S3Object s").unwrap().items, None);
        let q = parse("SELECT * FROM S3Object s WHERE s._1 = 'a' LIMIT 5").unwrap();
        assert_eq!(q.items, None);
        assert_eq!(q.alias.as_deref(), Some("s"));
        assert_eq!(q.limit, Some(5));
        assert!(matches!(q.filter, Some(Expr::Binary(BinaryOp::Eq, _, _))));
    }

    #[test]
    fn parses_select_items_with_aliases_and_json_paths() {
        let q = parse("select s.name AS n, _2 b, s.a[0].c from S3Object[*].rows[*] s").unwrap();
        let items = q.items.unwrap();
        assert_eq!(items.len(), 3);
        assert_eq!(items[0].alias.as_deref(), Some("n"));
        assert_eq!(items[1].alias.as_deref(), Some("b"));
        assert_eq!(items[1].expr, path("_2"));
        assert_eq!(q.from.len(), 3);
        assert_eq!(
            q.from[1],
            Step::Field {
                name: "rows".into(),
                exact: false
            }
        );
    }

    #[test]
    fn precedence_binds_and_tighter_than_or_and_products_tighter_than_sums() {
        let q = parse("SELECT * FROM S3Object WHERE a = 1 OR b = 2 AND c = 1 + 2 * 3").unwrap();
        let Some(Expr::Binary(BinaryOp::Or, _, right)) = q.filter else {
            panic!()
        };
        let Expr::Binary(BinaryOp::And, _, c) = *right else {
            panic!()
        };
        let Expr::Binary(BinaryOp::Eq, _, sum) = *c else {
            panic!()
        };
        assert!(
            matches!(*sum, Expr::Binary(BinaryOp::Add, _, ref p) if matches!(**p, Expr::Binary(BinaryOp::Mul, _, _)))
        );
    }

    #[test]
    fn parses_like_between_in_is_cast_trim_and_substring() {
        for sql in [
            "SELECT * FROM S3Object WHERE a NOT LIKE 'x%' ESCAPE '!'",
            "SELECT * FROM S3Object WHERE a BETWEEN 1 AND 2 AND b IN ('x', 'y')",
            "SELECT * FROM S3Object WHERE a IS NOT NULL AND b IS MISSING",
            "SELECT CAST(a AS INT), TRIM(LEADING 'x' FROM b), SUBSTRING(c FROM 2 FOR 3) FROM S3Object",
            "SELECT SUBSTRING(c, 2), LOWER(a) || UPPER(b), CHAR_LENGTH(a) FROM S3Object",
            "SELECT COUNT(*), SUM(CAST(_2 AS FLOAT)), MAX(_3) FROM S3Object",
        ] {
            parse(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        }
    }

    #[test]
    fn bad_sql_answers_s3s_error_codes() {
        for (sql, code) in [
            (
                "SELECT * FROM S3Object WHERE a = ",
                "ParseExpectedExpression",
            ),
            (
                "SELECT * FROM S3Object WHERE a = 1 1",
                "ParseUnexpectedToken",
            ),
            ("SELECT * FROM S3Object WHERE a # 1", "LexerInvalidChar"),
            ("SELECT a", "ParseSelectMissingFrom"),
            ("SELECT FROM S3Object", "ParseEmptySelect"),
            (
                "SELECT *, a FROM S3Object",
                "ParseAsteriskIsNotAloneInSelectList",
            ),
            (
                "SELECT CAST(a AS BLOB) FROM S3Object",
                "ParseExpectedTypeName",
            ),
            ("SELECT * FROM S3Object LIMIT x", "ParseExpectedNumber"),
            ("SELECT * FROM S3Object WHERE a = 'x", "LexerInvalidLiteral"),
            (
                "SELECT SUM(*) FROM S3Object",
                "ParseUnsupportedCallWithStar",
            ),
            ("SELECT * FROM Table1", "InvalidDataSource"),
            ("SELECT * FROM S3Object LIMIT -1", "EvaluatorNegativeLimit"),
            ("UPDATE x", "ParseExpectedKeyword"),
            (
                "SELECT DATE_ADD(week, 1, `2010T`) FROM S3Object",
                "ParseExpectedDatePart",
            ),
            (
                "SELECT DATE_DIFF(timezone_hour, `2010T`, `2011T`) FROM S3Object",
                "ParseExpectedDatePart",
            ),
            (
                "SELECT DATE_DIFF(year `2010T`, `2011T`) FROM S3Object",
                "ParseExpectedArgumentDelimiter",
            ),
            (
                "SELECT DATE_ADD(year, 1) FROM S3Object",
                "EvaluatorInvalidArguments",
            ),
            (
                "SELECT EXTRACT(YEAR `2010T`) FROM S3Object",
                "ParseExpectedKeyword",
            ),
            ("SELECT `2010-13T` FROM S3Object", "LexerInvalidIONLiteral"),
            ("SELECT `2010T FROM S3Object", "LexerInvalidIONLiteral"),
            (
                "SELECT CASE ELSE 1 END FROM S3Object",
                "ParseExpectedWhenClause",
            ),
            (
                "SELECT CASE WHEN a THEN 1 FROM S3Object",
                "ParseExpectedKeyword",
            ),
            (
                "SELECT CASE WHEN a THEN END FROM S3Object",
                "ParseUnExpectedKeyword",
            ),
        ] {
            let err = parse(sql).unwrap_err();
            assert_eq!(err.code, code, "{sql}: {}", err.message);
        }
    }

    #[test]
    fn deep_nesting_is_refused_not_overflowed() {
        let sql = format!(
            "SELECT * FROM S3Object WHERE {}1{}",
            "(".repeat(10_000),
            ")".repeat(10_000)
        );
        assert_eq!(parse(&sql).unwrap_err().code, "ParseUnsupportedSyntax");
        let sql = format!("SELECT * FROM S3Object WHERE {}a", "NOT ".repeat(10_000));
        assert_eq!(parse(&sql).unwrap_err().code, "ParseUnsupportedSyntax");
        let sql = format!("SELECT * FROM S3Object WHERE a = {}1", "-".repeat(10_000));
        assert_eq!(parse(&sql).unwrap_err().code, "ParseUnsupportedSyntax");
        let sql = format!(
            "SELECT * FROM S3Object WHERE a > 1{}",
            " AND 0".repeat(10_000)
        );
        assert_eq!(parse(&sql).unwrap_err().code, "ParseUnsupportedSyntax");
        let sql = format!("SELECT * FROM S3Object WHERE a{}", " + 1".repeat(10_000));
        assert_eq!(parse(&sql).unwrap_err().code, "ParseUnsupportedSyntax");
        let sql = format!(
            "SELECT * FROM S3Object WHERE a > 1{}",
            " AND b = 2".repeat(40)
        );
        assert!(parse(&sql).is_ok());
    }

    #[test]
    fn parses_case_timestamps_and_date_functions() {
        for sql in [
            "SELECT CASE WHEN a > 1 THEN 'x' WHEN a < 0 THEN 'y' ELSE 'z' END FROM S3Object",
            "SELECT CASE a WHEN 1 THEN 'one' END AS n FROM S3Object",
            "SELECT * FROM S3Object WHERE TO_TIMESTAMP(d) < `2010-01-01T12:00:00.5+01:00`",
            "SELECT DATE_ADD(DAY, -1, `2017-01-10T`), DATE_DIFF(month, `2010T`, UTCNOW()) FROM S3Object",
            "SELECT EXTRACT(timezone_minute FROM `2017-01-02T03:04:05+07:08`) FROM S3Object",
            "SELECT CAST(d AS TIMESTAMP), TO_STRING(UTCNOW(), 'y-MM-dd') FROM S3Object",
        ] {
            parse(sql).unwrap_or_else(|e| panic!("{sql}: {e:?}"));
        }
    }

    #[test]
    fn quoted_names_keep_their_case_and_may_be_keywords() {
        let q = parse(r#"SELECT "Select" AS "From" FROM S3Object"#).unwrap();
        let item = &q.items.unwrap()[0];
        assert_eq!(
            item.expr,
            Expr::Path {
                head: "Select".into(),
                exact: true,
                steps: vec![]
            }
        );
        assert_eq!(item.alias.as_deref(), Some("From"));
    }
}
