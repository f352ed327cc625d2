//! The template reader: text, comments, references and directives into a tree of nodes,
//! with Velocity 1.7's whitespace rules (`#set` eats the indentation before it; a
//! directive's closing `)`, `#else` and `#end` eat the rest of their line when nothing else
//! is on it). Blocks and expressions nest through a counted depth, bounded by [`MAX_DEPTH`].

use std::collections::HashMap;

use crate::value::Val;
use crate::{VtlError, MAX_DEPTH, MAX_TEMPLATE_LEN};

/// A piece of a template.
#[derive(Debug)]
pub(crate) enum Node {
    Text(String),
    Ref(Reference),
    /// `\$x`: backslashes before a reference.
    Escaped {
        slashes: usize,
        reference: Reference,
    },
    Set(Reference, Expr),
    If {
        branches: Vec<(Expr, Vec<Node>)>,
        otherwise: Option<Vec<Node>>,
    },
    Foreach {
        var: String,
        iterable: Expr,
        body: Vec<Node>,
    },
    Break,
    Stop,
    /// `#define($name)`: the block is `Parsed::defines[id]`.
    Define {
        name: String,
        id: usize,
    },
    /// `#name(args)`: a macro, or text when no macro has the name.
    Call {
        name: String,
        args: Vec<Expr>,
        raw: String,
    },
}

/// `$name.member.call(args)[index]`, as written.
#[derive(Debug)]
pub(crate) struct Reference {
    pub quiet: bool,
    pub raw: String,
    pub root: String,
    pub chain: Vec<Access>,
}

#[derive(Debug)]
pub(crate) enum Access {
    Prop(String),
    Method(String, Vec<Expr>),
    Index(Expr),
}

#[derive(Debug)]
pub(crate) enum Expr {
    Lit(Val),
    /// A double-quoted string with references or directives in it.
    Interp(Vec<Node>),
    Ref(Reference),
    List(Vec<Expr>),
    Range(Box<Expr>, Box<Expr>),
    Map(Vec<(Expr, Expr)>),
    Not(Box<Expr>),
    Neg(Box<Expr>),
    Binary(BinOp, Box<Expr>, Box<Expr>),
}

#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BinOp {
    Or,
    And,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Add,
    Sub,
    Mul,
    Div,
    Mod,
}

#[derive(Debug)]
pub(crate) struct Macro {
    pub params: Vec<String>,
    pub body: Vec<Node>,
}

/// A parsed template.
#[derive(Debug, Default)]
pub(crate) struct Parsed {
    pub nodes: Vec<Node>,
    pub macros: HashMap<String, Macro>,
    pub defines: Vec<Vec<Node>>,
}

/// How a block ended.
enum Close {
    Eof,
    End,
    Else,
    ElseIf(Expr),
}

pub(crate) fn parse(text: &str) -> Result<Parsed, VtlError> {
    if text.len() > MAX_TEMPLATE_LEN {
        return Err(VtlError::new(format!(
            "a template is at most {MAX_TEMPLATE_LEN} bytes"
        )));
    }
    let mut parser = Parser {
        text,
        pos: 0,
        depth: 0,
        macros: HashMap::new(),
        defines: Vec::new(),
        run_start: 0,
    };
    let (nodes, _) = parser.block(false)?;
    Ok(Parsed {
        nodes,
        macros: parser.macros,
        defines: parser.defines,
    })
}

struct Parser<'t> {
    text: &'t str,
    pos: usize,
    depth: usize,
    macros: HashMap<String, Macro>,
    defines: Vec<Vec<Node>>,
    /// Where, in the text a block is collecting, the current run of plain text started
    /// (Velocity's `TEXT` token): `#set` eats the spaces before it only when they are the
    /// whole run.
    run_start: usize,
}

fn ident_start(c: u8) -> bool {
    c.is_ascii_alphabetic() || c == b'_'
}

fn ident_char(c: u8) -> bool {
    c.is_ascii_alphanumeric() || c == b'_' || c == b'-'
}

/// `\uXXXX` escapes in a string literal read as the characters they stand for.
fn unicode_escapes(value: &str) -> String {
    let mut out = String::with_capacity(value.len());
    let mut rest = value;
    while let Some(at) = rest.find("\\u") {
        out.push_str(&rest[..at]);
        let hex = rest.get(at + 2..at + 6).unwrap_or_default();
        let decoded = u32::from_str_radix(hex, 16)
            .ok()
            .filter(|_| hex.len() == 4 && hex.bytes().all(|b| b.is_ascii_hexdigit()))
            .and_then(char::from_u32);
        match decoded {
            Some(c) => {
                out.push(c);
                rest = &rest[at + 6..];
            }
            None => {
                out.push_str("\\u");
                rest = &rest[at + 2..];
            }
        }
    }
    out.push_str(rest);
    out
}

fn flush(text: &mut String, nodes: &mut Vec<Node>) {
    if !text.is_empty() {
        nodes.push(Node::Text(std::mem::take(text)));
    }
}

impl<'t> Parser<'t> {
    fn byte(&self, at: usize) -> Option<u8> {
        self.text.as_bytes().get(at).copied()
    }

    fn rest(&self) -> &'t str {
        &self.text[self.pos..]
    }

    fn eat(&mut self, token: &str) -> bool {
        let found = self.rest().starts_with(token);
        if found {
            self.pos += token.len();
        }
        found
    }

    fn fail<T>(&self, reason: &str) -> Result<T, VtlError> {
        let before = &self.text[..self.pos.min(self.text.len())];
        let line = before.matches('\n').count() + 1;
        let column = before.len() - before.rfind('\n').map_or(0, |at| at + 1) + 1;
        Err(VtlError::new(format!(
            "{reason} at line {line}, column {column}"
        )))
    }

    fn expect(&mut self, token: &str) -> Result<(), VtlError> {
        if self.eat(token) {
            Ok(())
        } else {
            self.fail(&format!("expected '{token}'"))
        }
    }

    fn enter(&mut self) -> Result<(), VtlError> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return self.fail(&format!("nested deeper than {MAX_DEPTH}"));
        }
        Ok(())
    }

    fn skip_ws(&mut self) {
        while self.byte(self.pos).is_some_and(|c| c.is_ascii_whitespace()) {
            self.pos += 1;
        }
    }

    /// After a directive: the rest of the line when it holds only spaces.
    fn eat_line_end(&mut self) {
        let start = self.pos;
        while matches!(self.byte(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        if !(self.eat("\r\n") || self.eat("\n") || self.eat("\r")) {
            self.pos = start;
        }
    }

    fn ident(&mut self) -> Option<&'t str> {
        let start = self.pos;
        if !self.byte(start).is_some_and(ident_start) {
            return None;
        }
        self.pos += 1;
        while self.byte(self.pos).is_some_and(ident_char) {
            self.pos += 1;
        }
        Some(&self.text[start..self.pos])
    }

    /// Nodes up to the end of the text, or (inside a block) up to `#end`, `#else` or
    /// `#elseif`.
    fn block(&mut self, inside: bool) -> Result<(Vec<Node>, Close), VtlError> {
        let mut nodes = Vec::new();
        let mut text = String::new();
        loop {
            let rest = self.rest();
            let Some(off) = rest.find(['$', '#', '\\']) else {
                text.push_str(rest);
                self.pos = self.text.len();
                flush(&mut text, &mut nodes);
                if inside {
                    return self.fail("missing #end");
                }
                return Ok((nodes, Close::Eof));
            };
            text.push_str(&rest[..off]);
            self.pos += off;
            self.run_start = self.run_start.min(text.len());
            match self.byte(self.pos) {
                Some(b'\\') => self.backslashes(&mut text, &mut nodes)?,
                Some(b'$') => match self.reference()? {
                    Some(reference) => {
                        flush(&mut text, &mut nodes);
                        nodes.push(Node::Ref(reference));
                    }
                    None => {
                        text.push('$');
                        self.pos += 1;
                    }
                },
                _ => {
                    if let Some(end) = self.hash(&mut text, &mut nodes)? {
                        flush(&mut text, &mut nodes);
                        if !inside {
                            return self.fail("#end, #else or #elseif without an open block");
                        }
                        return Ok((nodes, end));
                    }
                }
            }
            self.run_start = text.len();
        }
    }

    /// A run of backslashes: before a reference they escape it, before a directive they
    /// make it text; elsewhere they are text.
    fn backslashes(&mut self, text: &mut String, nodes: &mut Vec<Node>) -> Result<(), VtlError> {
        let start = self.pos;
        while self.byte(self.pos) == Some(b'\\') {
            self.pos += 1;
        }
        let slashes = self.pos - start;
        match self.byte(self.pos) {
            Some(b'$') => {
                if let Some(reference) = self.reference()? {
                    flush(text, nodes);
                    nodes.push(Node::Escaped { slashes, reference });
                    return Ok(());
                }
                text.push_str(&self.text[start..self.pos]);
            }
            Some(b'#') if self.byte(self.pos + 1).is_some_and(ident_start) => {
                text.push_str(&"\\".repeat(slashes / 2));
                if slashes % 2 == 1 {
                    self.pos += 1;
                    let word = self.ident().unwrap_or_default();
                    text.push('#');
                    text.push_str(word);
                }
            }
            _ => text.push_str(&self.text[start..self.pos]),
        }
        Ok(())
    }

    /// `$`, `$!`, `${`, `$!{` and a name with its members; `None` (and nothing read) when
    /// the `$` starts no reference.
    fn reference(&mut self) -> Result<Option<Reference>, VtlError> {
        let start = self.pos;
        if !self.eat("$") {
            return Ok(None);
        }
        let quiet = self.eat("!");
        let braced = self.eat("{");
        let Some(root) = self.ident() else {
            self.pos = start;
            return Ok(None);
        };
        let chain = self.chain()?;
        if braced && !self.eat("}") {
            self.pos = start;
            return Ok(None);
        }
        Ok(Some(Reference {
            quiet,
            raw: self.text[start..self.pos].to_string(),
            root: root.to_string(),
            chain,
        }))
    }

    fn chain(&mut self) -> Result<Vec<Access>, VtlError> {
        let mut chain = Vec::new();
        loop {
            if self.byte(self.pos) == Some(b'.')
                && self
                    .byte(self.pos + 1)
                    .is_some_and(|c| c.is_ascii_alphabetic())
            {
                self.pos += 1;
                let name = self.ident().unwrap_or_default().to_string();
                if self.byte(self.pos) == Some(b'(') {
                    let args = self.args()?;
                    chain.push(Access::Method(name, args));
                } else {
                    chain.push(Access::Prop(name));
                }
            } else if self.byte(self.pos) == Some(b'[') {
                let start = self.pos;
                self.pos += 1;
                match self.index() {
                    Ok(index) => chain.push(Access::Index(index)),
                    Err(_) => {
                        self.pos = start;
                        break;
                    }
                }
            } else {
                break;
            }
        }
        Ok(chain)
    }

    fn index(&mut self) -> Result<Expr, VtlError> {
        self.skip_ws();
        let index = self.expr()?;
        self.skip_ws();
        self.expect("]")?;
        Ok(index)
    }

    /// `(a, b)` or `(a b)`: arguments of a method or macro call.
    fn args(&mut self) -> Result<Vec<Expr>, VtlError> {
        self.expect("(")?;
        let mut args = Vec::new();
        loop {
            self.skip_ws();
            if self.eat(")") {
                return Ok(args);
            }
            if !args.is_empty() && self.eat(",") {
                self.skip_ws();
            }
            args.push(self.expr()?);
        }
    }

    /// After `#`: a comment, unparsed text, a directive or a macro call. Returns how a block
    /// ends when it meets `#end`, `#else` or `#elseif`.
    fn hash(
        &mut self,
        text: &mut String,
        nodes: &mut Vec<Node>,
    ) -> Result<Option<Close>, VtlError> {
        let start = self.pos;
        if self.eat("##") {
            let rest = self.rest();
            self.pos += rest.find('\n').map_or(rest.len(), |at| at + 1);
            return Ok(None);
        }
        if self.eat("#*") {
            return self.skip_past("*#").map(|_| None);
        }
        if self.eat("#[[") {
            let inner_start = self.pos;
            self.skip_past("]]#")?;
            text.push_str(&self.text[inner_start..self.pos - 3]);
            return Ok(None);
        }
        self.pos += 1;
        let braced = self.eat("{");
        let name = self.ident().filter(|_| !braced || self.eat("}"));
        let Some(name) = name else {
            self.pos = start + 1;
            text.push('#');
            return Ok(None);
        };
        self.directive(name, start, text, nodes)
    }

    fn skip_past(&mut self, token: &str) -> Result<(), VtlError> {
        match self.rest().find(token) {
            Some(at) => {
                self.pos += at + token.len();
                Ok(())
            }
            None => self.fail(&format!("missing '{token}'")),
        }
    }

    fn directive(
        &mut self,
        name: &'t str,
        start: usize,
        text: &mut String,
        nodes: &mut Vec<Node>,
    ) -> Result<Option<Close>, VtlError> {
        let node = match name {
            "end" | "else" => {
                self.eat_line_end();
                return Ok(Some(if name == "end" {
                    Close::End
                } else {
                    Close::Else
                }));
            }
            "elseif" => {
                let cond = self.paren_expr()?;
                return Ok(Some(Close::ElseIf(cond)));
            }
            "set" => {
                let run = text.get(self.run_start..).unwrap_or_default();
                if run.bytes().all(|b| b == b' ' || b == b'\t') {
                    text.truncate(self.run_start);
                }
                self.set()?
            }
            "if" => {
                let cond = self.paren_expr()?;
                self.if_chain(cond)?
            }
            "foreach" => self.foreach()?,
            "break" | "stop" => {
                if name == "break" {
                    Node::Break
                } else {
                    Node::Stop
                }
            }
            "define" => self.define()?,
            "macro" => {
                self.macro_definition()?;
                return Ok(None);
            }
            _ => match self.call(name, start) {
                Some(node) => node,
                None => {
                    text.push_str(&self.text[start..self.pos]);
                    return Ok(None);
                }
            },
        };
        flush(text, nodes);
        nodes.push(node);
        Ok(None)
    }

    /// `(expr)` after a directive name, and the line end after it.
    fn paren_expr(&mut self) -> Result<Expr, VtlError> {
        self.skip_ws();
        self.expect("(")?;
        self.skip_ws();
        let expr = self.expr()?;
        self.close()?;
        Ok(expr)
    }

    /// The `)` closing a directive's arguments, and the line end after it.
    fn close(&mut self) -> Result<(), VtlError> {
        self.skip_ws();
        self.expect(")")?;
        self.eat_line_end();
        Ok(())
    }

    fn set(&mut self) -> Result<Node, VtlError> {
        self.skip_ws();
        self.expect("(")?;
        self.skip_ws();
        let Some(place) = self.reference()? else {
            return self.fail("#set needs a reference to set");
        };
        self.skip_ws();
        self.expect("=")?;
        self.skip_ws();
        let value = self.expr()?;
        self.close()?;
        Ok(Node::Set(place, value))
    }

    fn if_chain(&mut self, first: Expr) -> Result<Node, VtlError> {
        self.enter()?;
        let mut branches = Vec::new();
        let mut cond = first;
        let otherwise = loop {
            let (body, end) = self.block(true)?;
            branches.push((cond, body));
            match end {
                Close::ElseIf(next) => cond = next,
                Close::Else => break Some(self.body()?),
                _ => break None,
            }
        };
        self.depth -= 1;
        Ok(Node::If {
            branches,
            otherwise,
        })
    }

    /// A block that must end with `#end`.
    fn body(&mut self) -> Result<Vec<Node>, VtlError> {
        self.enter()?;
        let (body, end) = self.block(true)?;
        self.depth -= 1;
        match end {
            Close::End => Ok(body),
            _ => self.fail("expected #end"),
        }
    }

    /// `$name` as a directive's argument.
    fn variable(&mut self) -> Result<String, VtlError> {
        self.skip_ws();
        self.eat("$");
        self.eat("!");
        let braced = self.eat("{");
        let Some(name) = self.ident() else {
            return self.fail("expected a variable");
        };
        if braced {
            self.expect("}")?;
        }
        Ok(name.to_string())
    }

    fn foreach(&mut self) -> Result<Node, VtlError> {
        self.skip_ws();
        self.expect("(")?;
        let var = self.variable()?;
        self.skip_ws();
        self.expect("in")?;
        self.skip_ws();
        let iterable = self.expr()?;
        self.close()?;
        let body = self.body()?;
        Ok(Node::Foreach {
            var,
            iterable,
            body,
        })
    }

    fn define(&mut self) -> Result<Node, VtlError> {
        self.skip_ws();
        self.expect("(")?;
        let name = self.variable()?;
        self.close()?;
        let body = self.body()?;
        self.defines.push(body);
        Ok(Node::Define {
            name,
            id: self.defines.len() - 1,
        })
    }

    fn macro_definition(&mut self) -> Result<(), VtlError> {
        self.skip_ws();
        self.expect("(")?;
        self.skip_ws();
        let Some(name) = self.ident() else {
            return self.fail("expected a macro name");
        };
        let mut params = Vec::new();
        loop {
            while self
                .byte(self.pos)
                .is_some_and(|c| c.is_ascii_whitespace() || c == b',')
            {
                self.pos += 1;
            }
            if self.byte(self.pos) == Some(b')') {
                break;
            }
            params.push(self.variable()?);
        }
        self.close()?;
        let body = self.body()?;
        self.macros.insert(name.to_string(), Macro { params, body });
        Ok(())
    }

    /// `#name(args)`; `None` (nothing read past the name) when no arguments follow or they
    /// do not parse, and the text stays text.
    fn call(&mut self, name: &str, start: usize) -> Option<Node> {
        let after_name = self.pos;
        while matches!(self.byte(self.pos), Some(b' ' | b'\t')) {
            self.pos += 1;
        }
        if self.byte(self.pos) != Some(b'(') {
            self.pos = after_name;
            return None;
        }
        match self.args() {
            Ok(args) => {
                let raw = self.text[start..self.pos].to_string();
                self.eat_line_end();
                Some(Node::Call {
                    name: name.to_string(),
                    args,
                    raw,
                })
            }
            Err(_) => {
                self.pos = after_name;
                None
            }
        }
    }

    fn expr(&mut self) -> Result<Expr, VtlError> {
        self.enter()?;
        let expr = self.binary(0);
        self.depth -= 1;
        expr
    }

    /// Binary operators by precedence level, lowest first; each operator of a chain counts
    /// as a level of nesting, since the tree nests them.
    fn binary(&mut self, level: usize) -> Result<Expr, VtlError> {
        const LEVELS: &[&[(&str, BinOp)]] = &[
            &[("||", BinOp::Or), ("or", BinOp::Or)],
            &[("&&", BinOp::And), ("and", BinOp::And)],
            &[
                ("==", BinOp::Eq),
                ("!=", BinOp::Ne),
                ("eq", BinOp::Eq),
                ("ne", BinOp::Ne),
            ],
            &[
                ("<=", BinOp::Le),
                (">=", BinOp::Ge),
                ("<", BinOp::Lt),
                (">", BinOp::Gt),
                ("le", BinOp::Le),
                ("ge", BinOp::Ge),
                ("lt", BinOp::Lt),
                ("gt", BinOp::Gt),
            ],
            &[("+", BinOp::Add), ("-", BinOp::Sub)],
            &[("*", BinOp::Mul), ("/", BinOp::Div), ("%", BinOp::Mod)],
        ];
        let Some(ops) = LEVELS.get(level) else {
            return self.unary();
        };
        let depth = self.depth;
        let mut left = self.binary(level + 1)?;
        loop {
            self.skip_ws();
            let Some(op) = ops.iter().find(|(token, _)| self.operator(token)) else {
                self.depth = depth;
                return Ok(left);
            };
            self.enter()?;
            self.skip_ws();
            let right = self.binary(level + 1)?;
            left = Expr::Binary(op.1, Box::new(left), Box::new(right));
        }
    }

    /// Reads `token` as an operator: word operators must stand alone.
    fn operator(&mut self, token: &str) -> bool {
        if !self.rest().starts_with(token) {
            return false;
        }
        let word = token.as_bytes()[0].is_ascii_alphabetic();
        if word && self.byte(self.pos + token.len()).is_some_and(ident_char) {
            return false;
        }
        self.pos += token.len();
        true
    }

    /// Prefix `!`, `not` and `-`, read in a loop (each counts as a level of nesting, since
    /// the tree nests them), then a primary.
    fn unary(&mut self) -> Result<Expr, VtlError> {
        let depth = self.depth;
        let mut prefixes = Vec::new();
        loop {
            if !prefixes.is_empty() {
                self.enter()?;
            }
            self.skip_ws();
            if self.byte(self.pos) == Some(b'!') && self.byte(self.pos + 1) != Some(b'=') {
                self.pos += 1;
                prefixes.push(true);
            } else if self.operator("not") {
                prefixes.push(true);
            } else if self.byte(self.pos) == Some(b'-')
                && !self.byte(self.pos + 1).is_some_and(|c| c.is_ascii_digit())
            {
                self.pos += 1;
                prefixes.push(false);
            } else {
                break;
            }
        }
        let mut expr = self.primary()?;
        self.depth = depth;
        for not in prefixes.into_iter().rev() {
            expr = if not {
                Expr::Not(Box::new(expr))
            } else {
                Expr::Neg(Box::new(expr))
            };
        }
        Ok(expr)
    }

    fn primary(&mut self) -> Result<Expr, VtlError> {
        match self.byte(self.pos) {
            Some(b'(') => {
                self.pos += 1;
                self.skip_ws();
                let inner = self.expr()?;
                self.skip_ws();
                self.expect(")")?;
                Ok(inner)
            }
            Some(b'$') => match self.reference()? {
                Some(reference) => Ok(Expr::Ref(reference)),
                None => self.fail("expected a reference"),
            },
            Some(q @ (b'"' | b'\'')) => self.string(q),
            Some(b'[') => self.list(),
            Some(b'{') => self.map(),
            Some(c) if c.is_ascii_digit() || c == b'-' => self.number(),
            _ => self.word(),
        }
    }

    fn word(&mut self) -> Result<Expr, VtlError> {
        for (token, value) in [
            ("true", Val::Bool(true)),
            ("false", Val::Bool(false)),
            ("null", Val::Null),
        ] {
            if self.operator(token) {
                return Ok(Expr::Lit(value));
            }
        }
        self.fail("expected an expression")
    }

    fn number(&mut self) -> Result<Expr, VtlError> {
        let start = self.pos;
        self.eat("-");
        let digits = |p: &mut Self| {
            while p.byte(p.pos).is_some_and(|c| c.is_ascii_digit()) {
                p.pos += 1;
            }
        };
        digits(self);
        let float = self.byte(self.pos) == Some(b'.')
            && self.byte(self.pos + 1).is_some_and(|c| c.is_ascii_digit());
        if float {
            self.pos += 1;
            digits(self);
        }
        let literal = &self.text[start..self.pos];
        let value = if float {
            literal.parse().ok().map(Val::Float)
        } else {
            literal.parse().ok().map(Val::Int)
        };
        match value {
            Some(value) => Ok(Expr::Lit(value)),
            None => {
                self.pos = start;
                self.fail("bad number")
            }
        }
    }

    /// A string, as Velocity 1.7 reads it: single quotes are literal, double quotes
    /// interpolate references and directives; a doubled quote stands for the quote, and a
    /// backslash is an ordinary character (only `\uXXXX` is read as an escape).
    fn string(&mut self, quote: u8) -> Result<Expr, VtlError> {
        self.pos += 1;
        let mut value = String::new();
        loop {
            let rest = self.rest();
            let Some(off) = rest.find(quote as char) else {
                return self.fail("unterminated string");
            };
            value.push_str(&rest[..off]);
            self.pos += off + 1;
            if self.byte(self.pos) != Some(quote) {
                break;
            }
            value.push(quote as char);
            self.pos += 1;
        }
        let value = unicode_escapes(&value);
        if quote == b'\'' || !value.contains(['$', '#']) {
            return Ok(Expr::Lit(Val::str(&value)));
        }
        self.interpolated(&value)
    }

    fn interpolated(&mut self, value: &str) -> Result<Expr, VtlError> {
        self.enter()?;
        let mut inner = Parser {
            text: value,
            pos: 0,
            depth: self.depth,
            macros: std::mem::take(&mut self.macros),
            defines: std::mem::take(&mut self.defines),
            run_start: 0,
        };
        let parsed = inner.block(false);
        self.macros = inner.macros;
        self.defines = inner.defines;
        self.depth -= 1;
        match parsed {
            Ok((nodes, _)) => Ok(Expr::Interp(nodes)),
            Err(error) => self.fail(&format!("in a string: {}", error.message)),
        }
    }

    fn list(&mut self) -> Result<Expr, VtlError> {
        self.pos += 1;
        self.skip_ws();
        if self.eat("]") {
            return Ok(Expr::List(Vec::new()));
        }
        let first = self.expr()?;
        self.skip_ws();
        if self.eat("..") {
            self.skip_ws();
            let last = self.expr()?;
            self.skip_ws();
            self.expect("]")?;
            return Ok(Expr::Range(Box::new(first), Box::new(last)));
        }
        let mut items = vec![first];
        while self.eat(",") {
            self.skip_ws();
            items.push(self.expr()?);
            self.skip_ws();
        }
        self.expect("]")?;
        Ok(Expr::List(items))
    }

    fn map(&mut self) -> Result<Expr, VtlError> {
        self.pos += 1;
        let mut entries = Vec::new();
        loop {
            self.skip_ws();
            if self.eat("}") {
                return Ok(Expr::Map(entries));
            }
            if !entries.is_empty() {
                self.expect(",")?;
                self.skip_ws();
            }
            let key = self.expr()?;
            self.skip_ws();
            self.expect(":")?;
            self.skip_ws();
            entries.push((key, self.expr()?));
        }
    }
}
