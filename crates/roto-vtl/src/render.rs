//! The interpreter: walks the parsed nodes with the variables of one render, counting steps,
//! nesting and output against the crate's bounds.

use std::collections::HashMap;

use serde_json::Value;

use crate::parse::{Access, BinOp, Expr, Node, Parsed, Reference};
use crate::value::{Heap, Val};
use crate::{
    Context, Input, VtlError, MAX_DEPTH, MAX_FOREACH, MAX_MACRO_DEPTH, MAX_OUTPUT, MAX_STEPS,
};

/// How rendering goes on after a node.
#[derive(Debug, Clone, Copy, PartialEq)]
enum Flow {
    Next,
    Break,
    Stop,
}

/// How deep blocks, expressions and macros nest while rendering (above the parser's bound,
/// since macros and `#define` blocks nest at run time).
const MAX_RUNTIME_DEPTH: usize = MAX_DEPTH * 3;

/// The largest range literal (`[1..n]`).
const MAX_RANGE: i64 = 100_000;

/// One render's state.
pub(crate) struct Renderer<'t> {
    parsed: &'t Parsed,
    pub(crate) input: &'t Input,
    pub(crate) heap: Heap,
    vars: HashMap<String, Val>,
    /// `$input.body`, shared by every use.
    body: std::sync::Arc<str>,
    /// `$input.body` read as JSON, once.
    pub(crate) body_json: Option<Value>,
    /// Regular expressions compiled so far.
    pub(crate) regexes: HashMap<String, regex_lite::Regex>,
    steps: usize,
    depth: usize,
    macro_depth: usize,
}

pub(crate) fn render(parsed: &Parsed, ctx: &mut Context) -> Result<String, VtlError> {
    let input = std::mem::take(&mut ctx.input);
    let result = render_with(parsed, &input, ctx);
    ctx.input = input;
    result
}

/// Renders over `input` and the variables of `ctx`, writing the variables back.
fn render_with(parsed: &Parsed, input: &Input, ctx: &mut Context) -> Result<String, VtlError> {
    let mut renderer = Renderer {
        parsed,
        input,
        heap: Heap::default(),
        vars: HashMap::new(),
        body: input.body.as_str().into(),
        body_json: None,
        regexes: HashMap::new(),
        steps: 0,
        depth: 0,
        macro_depth: 0,
    };
    renderer.vars.insert("input".to_string(), Val::Input);
    renderer.vars.insert("util".to_string(), Val::Util);
    for (name, value) in &ctx.vars {
        let val = renderer.heap.import(value)?;
        renderer.vars.insert(name.clone(), val);
    }
    renderer.overrides()?;
    let mut out = String::new();
    renderer.block(&parsed.nodes, &mut out)?;
    let names: Vec<String> = ctx.vars.iter().map(|(n, _)| n.clone()).collect();
    for name in names.iter().chain(std::iter::once(&"context".to_string())) {
        if let Some(val) = renderer.vars.get(name) {
            ctx.set(name, renderer.heap.to_json(val));
        }
    }
    Ok(out)
}

impl<'t> Renderer<'t> {
    /// Makes sure `$context.requestOverride.{header,querystring,path}` and
    /// `$context.responseOverride.header` are maps a template can set members of.
    fn overrides(&mut self) -> Result<(), VtlError> {
        let context = match self.vars.get("context") {
            Some(Val::Map(id)) => *id,
            _ => {
                let fresh = self.heap.map(Vec::new())?;
                self.vars.insert("context".to_string(), fresh.clone());
                let Val::Map(id) = fresh else { return Ok(()) };
                id
            }
        };
        for (name, members) in [
            ("requestOverride", &["header", "querystring", "path"][..]),
            ("responseOverride", &["header"][..]),
        ] {
            let group = self.child_map(context, name)?;
            for member in members {
                self.child_map(group, member)?;
            }
        }
        Ok(())
    }

    /// The map member `name` of map `parent`, created when missing.
    fn child_map(&mut self, parent: usize, name: &str) -> Result<usize, VtlError> {
        if let Some(Val::Map(id)) = self.heap.get(parent, name) {
            return Ok(*id);
        }
        let fresh = self.heap.map(Vec::new())?;
        self.heap.put(parent, name, fresh.clone());
        match fresh {
            Val::Map(id) => Ok(id),
            _ => Err(VtlError::new("a map was expected")),
        }
    }

    /// Counts `n` units of work.
    pub(crate) fn charge(&mut self, n: usize) -> Result<(), VtlError> {
        self.steps = self.steps.saturating_add(n);
        if self.steps > MAX_STEPS {
            return Err(VtlError::new(format!(
                "the template takes more than {MAX_STEPS} steps"
            )));
        }
        Ok(())
    }

    fn enter(&mut self) -> Result<(), VtlError> {
        self.depth += 1;
        if self.depth > MAX_RUNTIME_DEPTH {
            return Err(VtlError::new("the template nests too deeply"));
        }
        Ok(())
    }

    /// A string the template built, counted against the output bound.
    pub(crate) fn string(&mut self, s: String) -> Result<Val, VtlError> {
        if s.len() > MAX_OUTPUT {
            return Err(VtlError::new(format!(
                "a string is longer than {MAX_OUTPUT} bytes"
            )));
        }
        self.charge(s.len() / 64)?;
        Ok(Val::Str(s.into()))
    }

    fn write(&mut self, out: &mut String, text: &str) -> Result<(), VtlError> {
        if out.len() + text.len() > MAX_OUTPUT {
            return Err(VtlError::new(format!(
                "the output is longer than {MAX_OUTPUT} bytes"
            )));
        }
        out.push_str(text);
        Ok(())
    }

    fn block(&mut self, nodes: &'t [Node], out: &mut String) -> Result<Flow, VtlError> {
        self.enter()?;
        let mut flow = Flow::Next;
        for node in nodes {
            self.charge(1)?;
            flow = self.node(node, out)?;
            if flow != Flow::Next {
                break;
            }
        }
        self.depth -= 1;
        Ok(flow)
    }

    fn node(&mut self, node: &'t Node, out: &mut String) -> Result<Flow, VtlError> {
        match node {
            Node::Text(text) => self.write(out, text)?,
            Node::Ref(reference) => {
                let val = self.reference(reference)?;
                if val == Val::Null {
                    if !reference.quiet {
                        self.write(out, &reference.raw)?;
                    }
                } else {
                    self.write_val(&val, out)?;
                }
            }
            Node::Escaped { slashes, reference } => self.escaped(*slashes, reference, out)?,
            Node::Set(place, expr) => {
                let val = self.eval(expr)?;
                if val != Val::Null {
                    self.assign(place, val)?;
                }
            }
            Node::If {
                branches,
                otherwise,
            } => {
                for (cond, body) in branches {
                    if self.eval(cond)?.truthy() {
                        return self.block(body, out);
                    }
                }
                if let Some(body) = otherwise {
                    return self.block(body, out);
                }
            }
            Node::Foreach {
                var,
                iterable,
                body,
            } => return self.foreach(var, iterable, body, out),
            Node::Break => return Ok(Flow::Break),
            Node::Stop => return Ok(Flow::Stop),
            Node::Define { name, id } => self.set_var(name, Val::Block(*id)),
            Node::Call { name, args, raw } => return self.call_macro(name, args, raw, out),
        }
        Ok(Flow::Next)
    }

    /// `\$x`: half the backslashes, then the reference as written (odd count) or its value;
    /// a null reference keeps every backslash.
    fn escaped(
        &mut self,
        slashes: usize,
        reference: &'t Reference,
        out: &mut String,
    ) -> Result<(), VtlError> {
        let val = self.reference(reference)?;
        if val == Val::Null {
            self.write(out, &"\\".repeat(slashes))?;
            return self.write(out, &reference.raw);
        }
        self.write(out, &"\\".repeat(slashes / 2))?;
        if slashes % 2 == 1 {
            self.write(out, &reference.raw)
        } else {
            self.write_val(&val, out)
        }
    }

    /// Writes a value as Java's `toString()` would, rendering `#define` blocks.
    fn write_val(&mut self, val: &Val, out: &mut String) -> Result<(), VtlError> {
        if let Val::Block(id) = val {
            let parsed = self.parsed;
            let Some(body) = parsed.defines.get(*id) else {
                return Ok(());
            };
            return self.block(body, out).map(|_| ());
        }
        let mut text = String::new();
        self.heap.display(val, &mut text);
        self.write(out, &text)
    }

    /// A value as text (`toString()`), rendering blocks; the copy counts as work.
    pub(crate) fn text_of(&mut self, val: &Val) -> Result<String, VtlError> {
        let mut text = String::new();
        self.write_val(val, &mut text)?;
        self.charge(text.len() / 64)?;
        Ok(text)
    }

    fn foreach(
        &mut self,
        var: &str,
        iterable: &'t Expr,
        body: &'t [Node],
        out: &mut String,
    ) -> Result<Flow, VtlError> {
        let items: Vec<Val> = match self.eval(iterable)? {
            Val::List(id) => self.heap.items(id).to_vec(),
            Val::Map(id) => self
                .heap
                .entries(id)
                .iter()
                .map(|(_, v)| v.clone())
                .collect(),
            _ => Vec::new(),
        };
        let saved: Vec<(&str, Option<Val>)> = [var, "foreach", "velocityCount", "velocityHasNext"]
            .into_iter()
            .map(|name| (name, self.vars.get(name).cloned()))
            .collect();
        let info = self.heap.map(Vec::new())?;
        let Val::Map(info_id) = info else {
            return Ok(Flow::Next);
        };
        let len = items.len().min(MAX_FOREACH);
        let mut flow = Flow::Next;
        for (index, item) in items.into_iter().take(MAX_FOREACH).enumerate() {
            let has_next = index + 1 < len;
            for (key, value) in [
                ("index", Val::Int(index as i64)),
                ("count", Val::Int(index as i64 + 1)),
                ("hasNext", Val::Bool(has_next)),
                ("first", Val::Bool(index == 0)),
                ("last", Val::Bool(!has_next)),
            ] {
                self.heap.put(info_id, key, value);
            }
            self.set_var(var, item);
            self.set_var("foreach", info.clone());
            self.set_var("velocityCount", Val::Int(index as i64 + 1));
            self.set_var("velocityHasNext", Val::Bool(has_next));
            flow = self.block(body, out)?;
            if flow != Flow::Next {
                break;
            }
        }
        for (name, old) in saved {
            self.restore(name, old);
        }
        Ok(if flow == Flow::Stop {
            Flow::Stop
        } else {
            Flow::Next
        })
    }

    fn set_var(&mut self, name: &str, val: Val) {
        match self.vars.get_mut(name) {
            Some(slot) => *slot = val,
            None => {
                self.vars.insert(name.to_string(), val);
            }
        }
    }

    fn restore(&mut self, name: &str, old: Option<Val>) {
        match old {
            Some(val) => self.vars.insert(name.to_string(), val),
            None => self.vars.remove(name),
        };
    }

    fn call_macro(
        &mut self,
        name: &str,
        args: &'t [Expr],
        raw: &str,
        out: &mut String,
    ) -> Result<Flow, VtlError> {
        let parsed = self.parsed;
        let Some(definition) = parsed.macros.get(name) else {
            self.write(out, raw)?;
            return Ok(Flow::Next);
        };
        if self.macro_depth >= MAX_MACRO_DEPTH {
            return Err(VtlError::new(format!(
                "macros call each other more than {MAX_MACRO_DEPTH} deep"
            )));
        }
        let mut values = Vec::new();
        for arg in args {
            values.push(self.eval(arg)?);
        }
        let mut saved = Vec::new();
        for (param, value) in definition.params.iter().zip(values) {
            saved.push((param.as_str(), self.vars.insert(param.clone(), value)));
        }
        self.macro_depth += 1;
        let flow = self.block(&definition.body, out);
        self.macro_depth -= 1;
        for (param, old) in saved {
            self.restore(param, old);
        }
        flow
    }

    /// `#set($a.b.c = value)`: a variable, or a member of the map (or item of the list)
    /// the rest of the reference names.
    fn assign(&mut self, place: &'t Reference, val: Val) -> Result<(), VtlError> {
        let Some((last, prefix)) = place.chain.split_last() else {
            self.set_var(&place.root, val);
            return Ok(());
        };
        let target = self.walk(place, prefix)?;
        match (target, last) {
            (Val::Map(id), Access::Prop(name)) => {
                self.heap.put(id, name, val);
            }
            (Val::Map(id), Access::Index(key)) => {
                let key = self.eval(key)?;
                let key = self.text_of(&key)?;
                self.heap.put(id, &key, val);
            }
            (Val::List(id), Access::Index(index)) => {
                if let Val::Int(index) = self.eval(index)? {
                    let slot = usize::try_from(index)
                        .ok()
                        .and_then(|at| self.heap.items_mut(id)?.get_mut(at));
                    if let Some(slot) = slot {
                        *slot = val;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    pub(crate) fn reference(&mut self, reference: &'t Reference) -> Result<Val, VtlError> {
        self.walk(reference, &reference.chain)
    }

    /// The value of `reference`'s root followed by `chain`; null as soon as a step is null.
    fn walk(&mut self, reference: &'t Reference, chain: &'t [Access]) -> Result<Val, VtlError> {
        let mut val = self.vars.get(&reference.root).cloned().unwrap_or(Val::Null);
        for access in chain {
            if val == Val::Null {
                break;
            }
            self.charge(1)?;
            val = match access {
                Access::Prop(name) => self.property(&val, name),
                Access::Method(name, args) => {
                    let mut values = Vec::with_capacity(args.len());
                    for arg in args {
                        values.push(self.eval(arg)?);
                    }
                    self.method(&val, name, &values)?
                }
                Access::Index(index) => {
                    let index = self.eval(index)?;
                    self.index(&val, &index)?
                }
            };
        }
        Ok(val)
    }

    fn property(&self, val: &Val, name: &str) -> Val {
        match val {
            Val::Map(id) => self.heap.get(*id, name).cloned().unwrap_or(Val::Null),
            Val::Input if name == "body" => Val::Str(self.body.clone()),
            _ => Val::Null,
        }
    }

    fn index(&mut self, val: &Val, index: &Val) -> Result<Val, VtlError> {
        Ok(match (val, index) {
            (Val::List(id), Val::Int(at)) => usize::try_from(*at)
                .ok()
                .and_then(|at| self.heap.items(*id).get(at).cloned())
                .unwrap_or(Val::Null),
            (Val::Map(id), key) => {
                let key = self.text_of(key)?;
                self.heap.get(*id, &key).cloned().unwrap_or(Val::Null)
            }
            _ => Val::Null,
        })
    }

    pub(crate) fn eval(&mut self, expr: &'t Expr) -> Result<Val, VtlError> {
        self.charge(1)?;
        self.enter()?;
        let val = self.eval_inner(expr);
        self.depth -= 1;
        val
    }

    fn eval_inner(&mut self, expr: &'t Expr) -> Result<Val, VtlError> {
        Ok(match expr {
            Expr::Lit(val) => val.clone(),
            Expr::Interp(nodes) => {
                let mut text = String::new();
                self.block(nodes, &mut text)?;
                self.string(text)?
            }
            Expr::Ref(reference) => self.reference(reference)?,
            Expr::List(items) => {
                let mut vals = Vec::with_capacity(items.len());
                for item in items {
                    vals.push(self.eval(item)?);
                }
                self.heap.list(vals)?
            }
            Expr::Range(first, last) => self.range(first, last)?,
            Expr::Map(entries) => {
                let mut vals = Vec::with_capacity(entries.len());
                for (key, value) in entries {
                    let key = self.eval(key)?;
                    let key = self.text_of(&key)?;
                    let value = self.eval(value)?;
                    vals.retain(|(k, _): &(String, Val)| *k != key);
                    vals.push((key, value));
                }
                self.heap.map(vals)?
            }
            Expr::Not(inner) => Val::Bool(!self.eval(inner)?.truthy()),
            Expr::Neg(inner) => match self.eval(inner)? {
                Val::Int(n) => n.checked_neg().map_or(Val::Float(-(n as f64)), Val::Int),
                Val::Float(x) => Val::Float(-x),
                _ => Val::Null,
            },
            Expr::Binary(op, left, right) => self.binary(*op, left, right)?,
        })
    }

    fn range(&mut self, first: &'t Expr, last: &'t Expr) -> Result<Val, VtlError> {
        let (Val::Int(first), Val::Int(last)) = (self.eval(first)?, self.eval(last)?) else {
            return Ok(Val::Null);
        };
        if first.abs_diff(last) >= MAX_RANGE as u64 {
            return Err(VtlError::new(format!(
                "a range has at most {MAX_RANGE} items"
            )));
        }
        let items: Vec<Val> = if first <= last {
            (first..=last).map(Val::Int).collect()
        } else {
            (last..=first).rev().map(Val::Int).collect()
        };
        self.charge(items.len())?;
        self.heap.list(items)
    }

    fn binary(
        &mut self,
        op: BinOp,
        left_expr: &'t Expr,
        right_expr: &'t Expr,
    ) -> Result<Val, VtlError> {
        let left = self.eval(left_expr)?;
        match op {
            BinOp::Or if left.truthy() => return Ok(Val::Bool(true)),
            BinOp::And if !left.truthy() => return Ok(Val::Bool(false)),
            _ => {}
        }
        let right = self.eval(right_expr)?;
        Ok(match op {
            BinOp::Or | BinOp::And => Val::Bool(right.truthy()),
            BinOp::Eq => Val::Bool(self.loose_equal(&left, &right)?),
            BinOp::Ne => Val::Bool(!self.loose_equal(&left, &right)?),
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => Val::Bool(order(op, &left, &right)),
            BinOp::Add if matches!(left, Val::Str(_)) || matches!(right, Val::Str(_)) => {
                let joined = self.operand_text(&left, left_expr)?
                    + &self.operand_text(&right, right_expr)?;
                self.string(joined)?
            }
            _ => arithmetic(op, &left, &right),
        })
    }

    /// A side of a string concatenation: a null reference joins as written, as Velocity
    /// prints it.
    fn operand_text(&mut self, val: &Val, expr: &Expr) -> Result<String, VtlError> {
        match (val, expr) {
            (Val::Null, Expr::Ref(reference)) => Ok(reference.raw.clone()),
            _ => self.text_of(val),
        }
    }

    /// Velocity's `==`: numbers by value, values of one kind by `equals`, others by their
    /// text.
    fn loose_equal(&mut self, left: &Val, right: &Val) -> Result<bool, VtlError> {
        Ok(match (left, right) {
            (Val::Null, Val::Null) => true,
            (Val::Null, _) | (_, Val::Null) => false,
            (Val::Int(_) | Val::Float(_), Val::Int(_) | Val::Float(_)) => {
                left.as_f64() == right.as_f64()
            }
            _ if std::mem::discriminant(left) == std::mem::discriminant(right) => {
                self.heap.equal(left, right)
            }
            _ => self.text_of(left)? == self.text_of(right)?,
        })
    }
}

/// `<`, `<=`, `>`, `>=` on numbers; false otherwise, as in Velocity 1.7.
fn order(op: BinOp, left: &Val, right: &Val) -> bool {
    let ordering = left
        .as_f64()
        .zip(right.as_f64())
        .and_then(|(a, b)| a.partial_cmp(&b));
    ordering.is_some_and(|ordering| match op {
        BinOp::Lt => ordering.is_lt(),
        BinOp::Le => ordering.is_le(),
        BinOp::Gt => ordering.is_gt(),
        _ => ordering.is_ge(),
    })
}

/// Integer arithmetic on integers (division truncates, division by zero is null, overflow
/// widens to a double), floating-point arithmetic otherwise; null for non-numbers.
fn arithmetic(op: BinOp, left: &Val, right: &Val) -> Val {
    if let (Val::Int(a), Val::Int(b)) = (left, right) {
        let (a, b) = (*a, *b);
        let exact = match op {
            BinOp::Add => a.checked_add(b),
            BinOp::Sub => a.checked_sub(b),
            BinOp::Mul => a.checked_mul(b),
            BinOp::Div if b == 0 => return Val::Null,
            BinOp::Div => a.checked_div(b),
            BinOp::Mod if b == 0 => return Val::Null,
            _ => a.checked_rem(b),
        };
        if let Some(n) = exact {
            return Val::Int(n);
        }
    }
    let (Some(a), Some(b)) = (left.as_f64(), right.as_f64()) else {
        return Val::Null;
    };
    match op {
        BinOp::Add => Val::Float(a + b),
        BinOp::Sub => Val::Float(a - b),
        BinOp::Mul => Val::Float(a * b),
        _ if b == 0.0 => Val::Null,
        BinOp::Div => Val::Float(a / b),
        _ => Val::Float(a % b),
    }
}
