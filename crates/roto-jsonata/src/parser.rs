//! The parser: Pratt's top-down operator precedence, as the reference implementation writes
//! it, with the same binding powers, the same special forms (lambdas, signatures, `?:`, `??`,
//! transforms, order-by) and the same error codes. Nesting is bounded: each operand and each
//! operator applied counts towards `MAX_DEPTH`, so neither this parser nor the walks over its
//! tree can exhaust the stack.

use std::sync::Arc;

use crate::ast::{BinOp, Kind, Lambda, Node, SortTerm, Transform};
use crate::error::Error;
use crate::lexer::{Lexer, Tok};
use crate::regex::Pattern;
use crate::signature::Signature;

/// The deepest tree the parser builds.
pub(crate) const MAX_DEPTH: usize = 50;

/// Parses an expression into its unprocessed tree.
pub(crate) fn parse(text: &str) -> Result<Node, Error> {
    let mut parser = Parser {
        lexer: Lexer::new(text),
        tok: Tok::End,
        pos: 0,
        depth: 0,
    };
    parser.advance(false)?;
    let expr = parser.expression(0)?;
    if parser.tok != Tok::End {
        return Err(Error::new("S0201")
            .at(parser.pos)
            .token(token_text(&parser.tok)));
    }
    Ok(expr)
}

struct Parser {
    lexer: Lexer,
    tok: Tok,
    pos: usize,
    depth: usize,
}

fn token_text(tok: &Tok) -> String {
    match tok {
        Tok::Name(s) | Tok::Variable(s) | Tok::Str(s) => s.clone(),
        Tok::Op(op) => op.to_string(),
        Tok::Num(n) => crate::value::format_number(*n),
        Tok::Bool(b) => b.to_string(),
        Tok::Null => "null".into(),
        Tok::Regex(p, _) => p.clone(),
        Tok::End => "(end)".into(),
    }
}

/// Left binding power of the token in operator position.
fn lbp(tok: &Tok) -> u32 {
    let Tok::Op(op) = tok else { return 0 };
    match *op {
        "." => 75,
        "[" | "(" | "@" | "#" => 80,
        "{" => 70,
        "?" => 20,
        "+" | "-" | "&" => 50,
        "*" | "/" | "%" => 60,
        "=" | "<" | ">" | "^" | "!=" | "<=" | ">=" | "~>" | "?:" | "??" | "in" => 40,
        ":=" => 10,
        "and" => 30,
        "or" => 25,
        _ => 0,
    }
}

impl Parser {
    /// Moves to the next token; `infix` when the token read follows an operand.
    fn advance(&mut self, infix: bool) -> Result<(), Error> {
        let (tok, pos) = self.lexer.next(infix)?;
        if let Tok::Op(op @ ("!" | "~")) = tok {
            return Err(Error::new("S0204").at(pos).token(op));
        }
        self.tok = tok;
        self.pos = pos;
        Ok(())
    }

    /// Checks the current token is `op`, then moves past it.
    fn expect(&mut self, op: &str, infix: bool) -> Result<(), Error> {
        if self.tok != Tok::Op(static_op(op)) {
            let code = if self.tok == Tok::End {
                "S0203"
            } else {
                "S0202"
            };
            return Err(Error::new(code)
                .at(self.pos)
                .token(token_text(&self.tok))
                .value(serde_json::Value::from(op).to_string()));
        }
        self.advance(infix)
    }

    fn is_op(&self, op: &str) -> bool {
        matches!(&self.tok, Tok::Op(o) if *o == op)
    }

    fn deeper(&mut self) -> Result<(), Error> {
        self.depth += 1;
        if self.depth > MAX_DEPTH {
            return Err(Error::new("U1001").at(self.pos));
        }
        Ok(())
    }

    fn expression(&mut self, rbp: u32) -> Result<Node, Error> {
        let saved = self.depth;
        self.deeper()?;
        let tok = std::mem::replace(&mut self.tok, Tok::End);
        let pos = self.pos;
        self.advance(true)?;
        let mut left = self.nud(tok, pos)?;
        while rbp < lbp(&self.tok) {
            self.deeper()?;
            let tok = std::mem::replace(&mut self.tok, Tok::End);
            let pos = self.pos;
            self.advance(false)?;
            left = self.led(tok, pos, left)?;
        }
        self.depth = saved;
        Ok(left)
    }

    fn nud(&mut self, tok: Tok, pos: usize) -> Result<Node, Error> {
        let kind = match tok {
            Tok::Name(name) => Kind::Name(name),
            Tok::Variable(name) => Kind::Variable(name),
            Tok::Str(s) => Kind::Str(s),
            Tok::Num(n) => Kind::Num(n),
            Tok::Bool(b) => Kind::Bool(b),
            Tok::Null => Kind::Null,
            Tok::Regex(pattern, flags) => Kind::Regex(Arc::new(
                Pattern::new(&pattern, &flags).map_err(|e| e.at(pos))?,
            )),
            Tok::End => return Err(Error::new("S0207").at(pos).token("(end)")),
            Tok::Op(op) => return self.prefix(op, pos),
        };
        Ok(Node::new(kind, pos))
    }

    fn prefix(&mut self, op: &'static str, pos: usize) -> Result<Node, Error> {
        let kind = match op {
            "-" => Kind::Neg(Box::new(self.expression(70)?)),
            "*" => Kind::Wildcard,
            "**" => Kind::Descendant,
            "%" => Kind::ParentToken,
            "and" | "or" | "in" => Kind::Keyword(op),
            "(" => self.block()?,
            "[" => self.array()?,
            "{" => Kind::Object(self.object_pairs()?),
            "|" => self.transform()?,
            _ => return Err(Error::new("S0211").at(pos).token(op)),
        };
        Ok(Node::new(kind, pos))
    }

    fn block(&mut self) -> Result<Kind, Error> {
        let mut exprs = Vec::new();
        while !self.is_op(")") {
            exprs.push(self.expression(0)?);
            if !self.is_op(";") {
                break;
            }
            self.advance(false)?;
        }
        self.expect(")", true)?;
        Ok(Kind::Block(exprs))
    }

    fn array(&mut self) -> Result<Kind, Error> {
        let mut items = Vec::new();
        if !self.is_op("]") {
            loop {
                let mut item = self.expression(0)?;
                if self.is_op("..") {
                    let pos = self.pos;
                    self.advance(false)?;
                    let rhs = self.expression(0)?;
                    item = Node::new(
                        Kind::Binary(BinOp::Range, Box::new(item), Box::new(rhs)),
                        pos,
                    );
                }
                items.push(item);
                if !self.is_op(",") {
                    break;
                }
                self.advance(false)?;
            }
        }
        self.expect("]", true)?;
        Ok(Kind::Array(items))
    }

    fn object_pairs(&mut self) -> Result<Vec<(Node, Node)>, Error> {
        let mut pairs = Vec::new();
        if !self.is_op("}") {
            loop {
                let key = self.expression(0)?;
                self.expect(":", false)?;
                let value = self.expression(0)?;
                pairs.push((key, value));
                if !self.is_op(",") {
                    break;
                }
                self.advance(false)?;
            }
        }
        self.expect("}", true)?;
        Ok(pairs)
    }

    fn transform(&mut self) -> Result<Kind, Error> {
        let pattern = self.expression(0)?;
        self.expect("|", false)?;
        let update = self.expression(0)?;
        let mut delete = None;
        if self.is_op(",") {
            self.advance(false)?;
            delete = Some(self.expression(0)?);
        }
        self.expect("|", false)?;
        Ok(Kind::Transform(Arc::new(Transform {
            pattern,
            update,
            delete,
        })))
    }

    fn led(&mut self, tok: Tok, pos: usize, left: Node) -> Result<Node, Error> {
        let Tok::Op(op) = tok else {
            return Err(Error::new("S0201").at(pos).token(token_text(&tok)));
        };
        let lhs = Box::new(left);
        let kind = match op {
            "(" => return self.call(lhs, pos),
            "[" => return self.filter(lhs, pos),
            "{" => Kind::GroupBy(lhs, self.object_pairs()?),
            "^" => Kind::OrderBy(lhs, self.order_terms()?),
            "." => Kind::Dot(lhs, Box::new(self.expression(75)?)),
            ":=" => {
                let Kind::Variable(name) = lhs.kind else {
                    return Err(Error::new("S0212").at(lhs.pos).token(token_text_of(&lhs)));
                };
                Kind::Bind(name, Box::new(self.expression(9)?))
            }
            "@" | "#" => {
                let rhs = self.expression(80)?;
                let Kind::Variable(name) = rhs.kind else {
                    return Err(Error::new("S0214").at(rhs.pos).token(op));
                };
                if op == "@" {
                    Kind::Focus(lhs, name)
                } else {
                    Kind::IndexBind(lhs, name)
                }
            }
            "?" => {
                let then = Box::new(self.expression(0)?);
                let mut otherwise = None;
                if self.is_op(":") {
                    self.advance(false)?;
                    otherwise = Some(Box::new(self.expression(0)?));
                }
                Kind::Condition(lhs, then, otherwise)
            }
            "?:" => {
                let otherwise = self.expression(0)?;
                Kind::Condition(lhs.clone(), lhs, Some(Box::new(otherwise)))
            }
            "??" => {
                let exists = Node::new(Kind::Variable("exists".into()), pos);
                let test = Node::new(Kind::Function(Box::new(exists), vec![(*lhs).clone()]), pos);
                let otherwise = self.expression(0)?;
                Kind::Condition(Box::new(test), lhs, Some(Box::new(otherwise)))
            }
            "~>" => Kind::Apply(lhs, Box::new(self.expression(40)?)),
            _ => match BinOp::from_token(op) {
                Some(bin) => Kind::Binary(bin, lhs, Box::new(self.expression(lbp(&tok))?)),
                None => return Err(Error::new("S0201").at(pos).token(op)),
            },
        };
        Ok(Node::new(kind, pos))
    }

    fn call(&mut self, procedure: Box<Node>, pos: usize) -> Result<Node, Error> {
        let mut args = Vec::new();
        let mut partial = false;
        if !self.is_op(")") {
            loop {
                if self.is_op("?") {
                    partial = true;
                    args.push(Node::new(Kind::Placeholder, self.pos));
                    self.advance(true)?;
                } else {
                    args.push(self.expression(0)?);
                }
                if !self.is_op(",") {
                    break;
                }
                self.advance(false)?;
            }
        }
        self.expect(")", true)?;
        if matches!(&procedure.kind, Kind::Name(n) if n == "function" || n == "\u{3bb}") {
            return self.lambda(args, pos);
        }
        let kind = if partial {
            Kind::Partial(procedure, args)
        } else {
            Kind::Function(procedure, args)
        };
        Ok(Node::new(kind, pos))
    }

    fn lambda(&mut self, args: Vec<Node>, pos: usize) -> Result<Node, Error> {
        let mut params = Vec::new();
        for (i, arg) in args.into_iter().enumerate() {
            let Kind::Variable(name) = arg.kind else {
                return Err(Error::new("S0208")
                    .at(arg.pos)
                    .token(token_text_of(&arg))
                    .value((i + 1).to_string()));
            };
            params.push(name);
        }
        let mut signature = None;
        if self.is_op("<") {
            let sig_pos = self.pos;
            let mut depth = 1;
            let mut text = String::from("<");
            while depth > 0 && !self.is_op("{") && self.tok != Tok::End {
                self.advance(false)?;
                match &self.tok {
                    Tok::Op(">") => depth -= 1,
                    Tok::Op("<") => depth += 1,
                    _ => {}
                }
                text.push_str(&token_text(&self.tok));
            }
            self.expect(">", false)?;
            signature = Some(Signature::parse(&text).map_err(|e| e.at(sig_pos))?);
        }
        self.expect("{", false)?;
        let body = self.expression(0)?;
        self.expect("}", true)?;
        let lambda = Lambda {
            params,
            signature,
            body,
            thunk: false,
        };
        Ok(Node::new(Kind::Lambda(Arc::new(lambda)), pos))
    }

    fn filter(&mut self, mut left: Box<Node>, pos: usize) -> Result<Node, Error> {
        if self.is_op("]") {
            mark_keep_array(&mut left);
            self.advance(true)?;
            return Ok(*left);
        }
        let rhs = self.expression(0)?;
        self.expect("]", true)?;
        Ok(Node::new(Kind::Filter(left, Box::new(rhs)), pos))
    }

    fn order_terms(&mut self) -> Result<Vec<SortTerm>, Error> {
        self.expect("(", false)?;
        let mut terms = Vec::new();
        loop {
            let mut descending = false;
            if self.is_op("<") {
                self.advance(false)?;
            } else if self.is_op(">") {
                descending = true;
                self.advance(false)?;
            }
            let expr = self.expression(0)?;
            terms.push(SortTerm { descending, expr });
            if !self.is_op(",") {
                break;
            }
            self.advance(false)?;
        }
        self.expect(")", false)?;
        Ok(terms)
    }
}

/// `[]`: flags the innermost step under any predicates to keep singleton arrays.
fn mark_keep_array(node: &mut Node) {
    let mut step = node;
    while let Kind::Filter(lhs, _) = &mut step.kind {
        step = lhs;
    }
    step.keep_array = true;
}

fn token_text_of(node: &Node) -> String {
    match &node.kind {
        Kind::Name(s) | Kind::Variable(s) | Kind::Str(s) => s.clone(),
        Kind::Num(n) => crate::value::format_number(*n),
        Kind::Bool(b) => b.to_string(),
        Kind::Null => "null".into(),
        _ => node.type_name().to_string(),
    }
}

fn static_op(op: &str) -> &'static str {
    const OPS: &[&str] = &[")", "]", "}", ":", "|", "(", "{", ">", ";", ","];
    OPS.iter().copied().find(|o| *o == op).unwrap_or("")
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::process::process;

    fn code(text: &str) -> String {
        match parse(text).and_then(process) {
            Ok(_) => "ok".into(),
            Err(e) => e.code().to_string(),
        }
    }

    fn steps(text: &str) -> usize {
        match parse(text).and_then(process).map(|n| n.kind) {
            Ok(Kind::Path(steps)) => steps.len(),
            _ => 0,
        }
    }

    #[test]
    fn dots_fold_into_one_path_of_steps() {
        assert_eq!(steps("a.b.c"), 3);
        assert_eq!(steps("a.(b.c).d"), 3);
        assert_eq!(steps("a.\"b\".c"), 3);
        assert_eq!(steps("$x.a"), 2);
    }

    #[test]
    fn predicates_on_a_step_become_its_stages() {
        let Ok(Kind::Path(steps)) = parse("a.b[0][c > 1]").and_then(process).map(|n| n.kind) else {
            panic!("a path");
        };
        assert_eq!(steps[1].stages.len(), 2);
        assert!(steps[1].predicate.is_empty());
    }

    #[test]
    fn parent_marks_the_step_it_refers_to() {
        let Ok(Kind::Path(steps)) = parse("a.b.%.c").and_then(process).map(|n| n.kind) else {
            panic!("a path");
        };
        assert!(steps[1].tuple && steps[1].ancestor.is_some());
        assert_eq!(code("%"), "S0217");
        assert_eq!(code("$sum(%)"), "S0217");
    }

    #[test]
    fn syntax_errors_carry_the_reference_codes() {
        for (text, expected) in [
            ("1 2", "S0201"),
            ("(1 + 2", "S0203"),
            ("[1, 2 3]", "S0202"),
            ("1 ! 2", "S0204"),
            ("1 +", "S0207"),
            ("function($x, 1){ $x }", "S0208"),
            ("a{\"x\": 1}{\"y\": 2}", "S0210"),
            ("]", "S0211"),
            ("a := 1", "S0212"),
            ("a.5", "S0213"),
            ("a@5", "S0214"),
            ("a[0]@$x", "S0215"),
            ("a^(b)@$x", "S0216"),
            ("//", "S0301"),
            ("/abc", "S0302"),
            ("\"abc", "S0101"),
            ("\"\\q\"", "S0103"),
            ("`abc", "S0105"),
            ("/* x", "S0106"),
            ("function($x)<a<(sn)>:a>{ $x }", "ok"),
            ("function($x)<n<n>:n>{ $x }", "S0401"),
        ] {
            assert_eq!(code(text), expected, "{text}");
        }
    }

    #[test]
    fn nesting_beyond_the_limit_is_u1001() {
        let deep = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH + 1),
            ")".repeat(MAX_DEPTH + 1)
        );
        assert_eq!(code(&deep), "U1001");
        let chain = format!("a{}", ".b".repeat(MAX_DEPTH + 1));
        assert_eq!(code(&chain), "U1001");
        let fine = format!(
            "{}1{}",
            "(".repeat(MAX_DEPTH / 2),
            ")".repeat(MAX_DEPTH / 2)
        );
        assert_eq!(code(&fine), "ok");
    }

    #[test]
    fn keywords_are_names_where_an_operand_is_due() {
        assert_eq!(steps("and.or.in"), 3);
    }

    #[test]
    fn coalescing_operators_build_conditions() {
        let Ok(node) = parse("a ?? b").and_then(process) else {
            panic!("parses");
        };
        assert!(matches!(node.kind, Kind::Condition(..)));
    }
}
