//! The post-parse pass (the reference implementation's `processAST`): folds `.` chains into
//! paths of steps, predicates into stages, `@`/`#` into tuple bindings, resolves each `%`
//! to the step whose input it names, and wraps tail calls in lambdas for the trampoline.

use std::sync::Arc;

use crate::ast::{Group, Kind, Node, Slot, SortTerm, Stage};
use crate::error::Error;

struct SlotData {
    label: usize,
    level: i32,
}

/// Processes a parsed tree into the tree the evaluator walks.
pub(crate) fn process(expr: Node) -> Result<Node, Error> {
    let mut pass = Pass { slots: Vec::new() };
    let mut result = pass.node(expr)?;
    if matches!(result.kind, Kind::Parent(_)) || !result.seeking_parent.is_empty() {
        return Err(Error::new("S0217").at(result.pos).token(result.type_name()));
    }
    pass.relabel(&mut result);
    Ok(result)
}

struct Pass {
    slots: Vec<SlotData>,
}

fn path_of(node: Node) -> Node {
    if matches!(node.kind, Kind::Path(_)) {
        return node;
    }
    let pos = node.pos;
    Node::new(Kind::Path(vec![node]), pos)
}

/// Runs `f` on a path's last step, or on the node itself when it is not a path.
fn with_last_step<R>(node: &mut Node, f: impl FnOnce(&mut Node) -> R) -> R {
    if let Kind::Path(steps) = &mut node.kind {
        if let Some(last) = steps.last_mut() {
            return f(last);
        }
    }
    f(node)
}

/// A name outside a path: a path of one step.
fn name_path(name: String, pos: usize, keep_array: bool) -> Node {
    let mut step = Node::new(Kind::Name(name), pos);
    step.keep_array = keep_array;
    let mut result = Node::new(Kind::Path(vec![step]), pos);
    result.keep_singleton_array = keep_array;
    result
}

fn push_ancestry(result: &mut Node, value: &Node) {
    result
        .seeking_parent
        .extend(value.seeking_parent.iter().copied());
    if let Kind::Parent(slot) = value.kind {
        result.seeking_parent.push(slot);
    }
}

impl Pass {
    fn node(&mut self, expr: Node) -> Result<Node, Error> {
        let keep_array = expr.keep_array;
        let mut result = self.kind(expr)?;
        if keep_array {
            result.keep_array = true;
        }
        Ok(result)
    }

    /// Dispatches on the node's kind; each arm lives in its own function so that the
    /// recursion's frames stay small.
    fn kind(&mut self, expr: Node) -> Result<Node, Error> {
        let pos = expr.pos;
        let keep_array = expr.keep_array;
        match expr.kind {
            Kind::Dot(lhs, rhs) => self.dot(*lhs, *rhs),
            Kind::Filter(lhs, rhs) => self.filter(*lhs, *rhs, pos),
            Kind::GroupBy(lhs, pairs) => self.group_by(*lhs, pairs, pos),
            Kind::OrderBy(lhs, terms) => self.order_by(*lhs, terms, pos),
            Kind::Focus(lhs, name) => self.focus(*lhs, name, keep_array),
            Kind::IndexBind(lhs, name) => self.index_bind(*lhs, name),
            Kind::Bind(name, rhs) => self.bind(name, *rhs, pos),
            Kind::Apply(lhs, rhs) => self.apply(*lhs, *rhs, pos),
            Kind::Binary(op, lhs, rhs) => self.binary(op, *lhs, *rhs, pos),
            Kind::Array(items) => self.array(items, pos),
            Kind::Object(pairs) => self.object(pairs, pos),
            Kind::Neg(inner) => self.neg(*inner, pos),
            Kind::Function(procedure, args) => self.call(*procedure, args, false, pos),
            Kind::Partial(procedure, args) => self.call(*procedure, args, true, pos),
            Kind::Lambda(lambda) => self.lambda(lambda, pos),
            Kind::Condition(cond, then, otherwise) => {
                self.condition(*cond, *then, otherwise.map(|e| *e), pos)
            }
            Kind::Transform(transform) => self.transform(transform, pos),
            Kind::Block(exprs) => self.block(exprs, pos),
            Kind::Name(name) => Ok(name_path(name, pos, keep_array)),
            Kind::Keyword(word) => Ok(name_path(word.to_string(), pos, keep_array)),
            Kind::ParentToken => {
                let slot = self.slots.len();
                self.slots.push(SlotData {
                    label: slot,
                    level: 1,
                });
                Ok(Node::new(Kind::Parent(slot), pos))
            }
            kind @ (Kind::Str(_)
            | Kind::Num(_)
            | Kind::Bool(_)
            | Kind::Null
            | Kind::Wildcard
            | Kind::Descendant
            | Kind::Variable(_)
            | Kind::Regex(_)
            | Kind::Placeholder) => Ok(Node::new(kind, pos)),
            Kind::Path(_) | Kind::Parent(_) | Kind::Sort(_) => Err(Error::new("S0206").at(pos)),
        }
    }

    fn group_by(&mut self, lhs: Node, pairs: Vec<(Node, Node)>, pos: usize) -> Result<Node, Error> {
        let mut result = self.node(lhs)?;
        if result.group.is_some() {
            return Err(Error::new("S0210").at(pos));
        }
        let pairs = self.pairs(pairs, None)?;
        result.group = Some(Box::new(Group { pairs, pos }));
        Ok(result)
    }

    fn bind(&mut self, name: String, rhs: Node, pos: usize) -> Result<Node, Error> {
        let rhs = self.node(rhs)?;
        let mut result = Node::new(Kind::Null, pos);
        push_ancestry(&mut result, &rhs);
        result.kind = Kind::Bind(name, Box::new(rhs));
        Ok(result)
    }

    fn apply(&mut self, lhs: Node, rhs: Node, pos: usize) -> Result<Node, Error> {
        let lhs = self.node(lhs)?;
        let rhs = self.node(rhs)?;
        let keep = lhs.keep_array || rhs.keep_array;
        let mut result = Node::new(Kind::Apply(Box::new(lhs), Box::new(rhs)), pos);
        result.keep_array = keep;
        Ok(result)
    }

    fn binary(
        &mut self,
        op: crate::ast::BinOp,
        lhs: Node,
        rhs: Node,
        pos: usize,
    ) -> Result<Node, Error> {
        let lhs = self.node(lhs)?;
        let rhs = self.node(rhs)?;
        let mut result = Node::new(Kind::Null, pos);
        push_ancestry(&mut result, &lhs);
        push_ancestry(&mut result, &rhs);
        result.kind = Kind::Binary(op, Box::new(lhs), Box::new(rhs));
        Ok(result)
    }

    fn array(&mut self, items: Vec<Node>, pos: usize) -> Result<Node, Error> {
        let mut result = Node::new(Kind::Null, pos);
        let mut out = Vec::with_capacity(items.len());
        for item in items {
            let item = self.node(item)?;
            push_ancestry(&mut result, &item);
            out.push(item);
        }
        result.kind = Kind::Array(out);
        Ok(result)
    }

    fn object(&mut self, pairs: Vec<(Node, Node)>, pos: usize) -> Result<Node, Error> {
        let mut result = Node::new(Kind::Null, pos);
        result.kind = Kind::Object(self.pairs(pairs, Some(&mut result))?);
        Ok(result)
    }

    fn neg(&mut self, inner: Node, pos: usize) -> Result<Node, Error> {
        let inner = self.node(inner)?;
        if let Kind::Num(n) = inner.kind {
            return Ok(Node::new(Kind::Num(-n), inner.pos));
        }
        let mut result = Node::new(Kind::Null, pos);
        push_ancestry(&mut result, &inner);
        result.kind = Kind::Neg(Box::new(inner));
        Ok(result)
    }

    fn call(
        &mut self,
        procedure: Node,
        args: Vec<Node>,
        partial: bool,
        pos: usize,
    ) -> Result<Node, Error> {
        let mut result = Node::new(Kind::Null, pos);
        let mut out = Vec::with_capacity(args.len());
        for arg in args {
            let arg = self.node(arg)?;
            push_ancestry(&mut result, &arg);
            out.push(arg);
        }
        let procedure = Box::new(self.node(procedure)?);
        result.kind = if partial {
            Kind::Partial(procedure, out)
        } else {
            Kind::Function(procedure, out)
        };
        Ok(result)
    }

    fn lambda(&mut self, mut lambda: Arc<crate::ast::Lambda>, pos: usize) -> Result<Node, Error> {
        let def = Arc::make_mut(&mut lambda);
        let body = std::mem::replace(&mut def.body, Node::new(Kind::Null, pos));
        def.body = tail_call_optimize(self.node(body)?);
        Ok(Node::new(Kind::Lambda(lambda), pos))
    }

    fn condition(
        &mut self,
        cond: Node,
        then: Node,
        otherwise: Option<Node>,
        pos: usize,
    ) -> Result<Node, Error> {
        let mut result = Node::new(Kind::Null, pos);
        let cond = self.node(cond)?;
        push_ancestry(&mut result, &cond);
        let then = self.node(then)?;
        push_ancestry(&mut result, &then);
        let otherwise = match otherwise {
            Some(e) => {
                let e = self.node(e)?;
                push_ancestry(&mut result, &e);
                Some(Box::new(e))
            }
            None => None,
        };
        result.kind = Kind::Condition(Box::new(cond), Box::new(then), otherwise);
        Ok(result)
    }

    fn transform(
        &mut self,
        mut transform: Arc<crate::ast::Transform>,
        pos: usize,
    ) -> Result<Node, Error> {
        let def = Arc::make_mut(&mut transform);
        def.pattern = self.node(std::mem::replace(
            &mut def.pattern,
            Node::new(Kind::Null, pos),
        ))?;
        def.update = self.node(std::mem::replace(
            &mut def.update,
            Node::new(Kind::Null, pos),
        ))?;
        if let Some(delete) = def.delete.take() {
            def.delete = Some(self.node(delete)?);
        }
        Ok(Node::new(Kind::Transform(transform), pos))
    }

    fn block(&mut self, exprs: Vec<Node>, pos: usize) -> Result<Node, Error> {
        let mut result = Node::new(Kind::Null, pos);
        let mut out = Vec::with_capacity(exprs.len());
        for e in exprs {
            let part = self.node(e)?;
            push_ancestry(&mut result, &part);
            let cons = part.consarray
                || matches!(&part.kind, Kind::Path(steps) if steps.first().is_some_and(|s| s.consarray));
            if cons {
                result.consarray = true;
            }
            out.push(part);
        }
        result.kind = Kind::Block(out);
        Ok(result)
    }

    fn pairs(
        &mut self,
        pairs: Vec<(Node, Node)>,
        mut ancestry: Option<&mut Node>,
    ) -> Result<Vec<(Node, Node)>, Error> {
        let mut out = Vec::with_capacity(pairs.len());
        for (k, v) in pairs {
            let k = self.node(k)?;
            let v = self.node(v)?;
            if let Some(result) = ancestry.as_deref_mut() {
                push_ancestry(result, &k);
                push_ancestry(result, &v);
            }
            out.push((k, v));
        }
        Ok(out)
    }

    fn dot(&mut self, lhs: Node, rhs: Node) -> Result<Node, Error> {
        let lstep = self.node(lhs)?;
        let parent_slot = match lstep.kind {
            Kind::Parent(slot) => Some(slot),
            _ => None,
        };
        let mut result = path_of(lstep);
        if let Some(slot) = parent_slot {
            result.seeking_parent = vec![slot];
        }
        let mut rest = self.node(rhs)?;
        let Kind::Path(steps) = &mut result.kind else {
            return Err(Error::new("S0206").at(result.pos));
        };
        match rest.kind {
            Kind::Path(rest_steps) => steps.extend(rest_steps),
            _ => {
                rest.stages = std::mem::take(&mut rest.predicate);
                steps.push(rest);
            }
        }
        for step in steps.iter_mut() {
            match &step.kind {
                Kind::Num(_) | Kind::Bool(_) | Kind::Null => {
                    let value = match &step.kind {
                        Kind::Num(n) => crate::value::format_number(*n),
                        Kind::Bool(b) => b.to_string(),
                        _ => "null".into(),
                    };
                    return Err(Error::new("S0213").at(step.pos).value(value));
                }
                Kind::Str(s) => step.kind = Kind::Name(s.clone()),
                _ => {}
            }
        }
        if steps.iter().any(|s| s.keep_array) {
            result.keep_singleton_array = true;
        }
        if let Some(first) = steps.first_mut() {
            if matches!(first.kind, Kind::Array(_)) {
                first.consarray = true;
            }
        }
        if let Some(last) = steps.last_mut() {
            if matches!(last.kind, Kind::Array(_)) {
                last.consarray = true;
            }
        }
        self.resolve_ancestry(&mut result)?;
        Ok(result)
    }

    fn filter(&mut self, lhs: Node, rhs: Node, pos: usize) -> Result<Node, Error> {
        let mut result = self.node(lhs)?;
        let is_path = matches!(result.kind, Kind::Path(_));
        let predicate = self.node(rhs)?;
        let seeking = predicate.seeking_parent.clone();
        with_last_step(&mut result, |step| {
            if step.group.is_some() {
                return Err(Error::new("S0209").at(pos));
            }
            if !seeking.is_empty() {
                for slot in seeking {
                    if self.slots[slot].level == 1 {
                        self.seek_parent(step, slot)?;
                    } else {
                        self.slots[slot].level -= 1;
                    }
                }
                push_ancestry(step, &predicate);
            }
            if is_path {
                step.stages.push(Stage::Filter(predicate));
            } else {
                step.predicate.push(Stage::Filter(predicate));
            }
            Ok(())
        })?;
        Ok(result)
    }

    fn order_by(&mut self, lhs: Node, terms: Vec<SortTerm>, pos: usize) -> Result<Node, Error> {
        let result = self.node(lhs)?;
        let mut result = path_of(result);
        let mut sort = Node::new(Kind::Null, pos);
        let mut out = Vec::with_capacity(terms.len());
        for term in terms {
            let expr = self.node(term.expr)?;
            push_ancestry(&mut sort, &expr);
            out.push(SortTerm {
                descending: term.descending,
                expr,
            });
        }
        sort.kind = Kind::Sort(out);
        if let Kind::Path(steps) = &mut result.kind {
            steps.push(sort);
        }
        self.resolve_ancestry(&mut result)?;
        Ok(result)
    }

    fn focus(&mut self, lhs: Node, name: String, keep_array: bool) -> Result<Node, Error> {
        let mut result = self.node(lhs)?;
        with_last_step(&mut result, |step| {
            if !step.stages.is_empty() || !step.predicate.is_empty() {
                return Err(Error::new("S0215").at(step.pos));
            }
            if matches!(step.kind, Kind::Sort(_)) {
                return Err(Error::new("S0216").at(step.pos));
            }
            if keep_array {
                step.keep_array = true;
            }
            step.focus = Some(name);
            step.tuple = true;
            Ok(())
        })?;
        Ok(result)
    }

    fn index_bind(&mut self, lhs: Node, name: String) -> Result<Node, Error> {
        let result = self.node(lhs)?;
        let mut result = if matches!(result.kind, Kind::Path(_)) {
            result
        } else {
            let mut step = result;
            step.stages = std::mem::take(&mut step.predicate);
            path_of(step)
        };
        with_last_step(&mut result, |step| {
            if step.stages.is_empty() {
                step.index = Some(name);
            } else {
                step.stages.push(Stage::Index(name));
            }
            step.tuple = true;
        });
        Ok(result)
    }

    fn seek_parent(&mut self, node: &mut Node, slot: Slot) -> Result<(), Error> {
        match &node.kind {
            Kind::Name(_) | Kind::Wildcard => {
                self.slots[slot].level -= 1;
                if self.slots[slot].level == 0 {
                    if let Some(existing) = node.ancestor {
                        self.slots[slot].label = self.slots[existing].label;
                    }
                    node.ancestor = Some(slot);
                    node.tuple = true;
                }
                return Ok(());
            }
            Kind::Parent(_) => {
                self.slots[slot].level += 1;
                return Ok(());
            }
            Kind::Block(exprs) if exprs.is_empty() => return Ok(()),
            Kind::Block(_) | Kind::Path(_) => node.tuple = true,
            _ => {
                return Err(Error::new("S0217").at(node.pos).token(node.type_name()));
            }
        }
        match &mut node.kind {
            Kind::Block(exprs) => {
                if let Some(last) = exprs.last_mut() {
                    self.seek_parent(last, slot)?;
                }
            }
            Kind::Path(steps) => {
                let mut index = steps.len();
                while index > 0 {
                    index -= 1;
                    self.seek_parent(&mut steps[index], slot)?;
                    if self.slots[slot].level <= 0 {
                        break;
                    }
                }
            }
            _ => {}
        }
        Ok(())
    }

    fn resolve_ancestry(&mut self, path: &mut Node) -> Result<(), Error> {
        let Kind::Path(steps) = &mut path.kind else {
            return Ok(());
        };
        let Some(last) = steps.last() else {
            return Ok(());
        };
        let mut slots = last.seeking_parent.clone();
        if let Kind::Parent(slot) = last.kind {
            slots.push(slot);
        }
        for slot in slots {
            let mut index = steps.len() as isize - 2;
            while self.slots[slot].level > 0 {
                if index < 0 {
                    path.seeking_parent.push(slot);
                    break;
                }
                let mut i = index as usize;
                index -= 1;
                while index >= 0
                    && steps[i].focus.is_some()
                    && steps[index as usize].focus.is_some()
                {
                    i = index as usize;
                    index -= 1;
                }
                self.seek_parent(&mut steps[i], slot)?;
            }
        }
        Ok(())
    }

    /// Gives every slot its final label: slots resolved to one step share that step's label.
    fn relabel(&self, node: &mut Node) {
        if let Kind::Parent(slot) = &mut node.kind {
            *slot = self.slots[*slot].label;
        }
        if let Some(slot) = &mut node.ancestor {
            *slot = self.slots[*slot].label;
        }
        for_each_child(node, &mut |child| self.relabel(child));
    }
}

/// Calls `f` on each direct child of `node`, lambda bodies and transforms included.
pub(crate) fn for_each_child(node: &mut Node, f: &mut dyn FnMut(&mut Node)) {
    for stage in node.predicate.iter_mut().chain(node.stages.iter_mut()) {
        if let Stage::Filter(e) = stage {
            f(e);
        }
    }
    if let Some(group) = &mut node.group {
        for (k, v) in &mut group.pairs {
            f(k);
            f(v);
        }
    }
    match &mut node.kind {
        Kind::Binary(_, a, b) | Kind::Dot(a, b) | Kind::Filter(a, b) | Kind::Apply(a, b) => {
            f(a);
            f(b);
        }
        Kind::Neg(a) | Kind::Bind(_, a) | Kind::Focus(a, _) | Kind::IndexBind(a, _) => f(a),
        Kind::Array(items) | Kind::Block(items) | Kind::Path(items) => items.iter_mut().for_each(f),
        Kind::Object(pairs) | Kind::GroupBy(_, pairs) => {
            for (k, v) in pairs {
                f(k);
                f(v);
            }
        }
        Kind::Condition(c, t, e) => {
            f(c);
            f(t);
            if let Some(e) = e {
                f(e);
            }
        }
        Kind::Function(p, args) | Kind::Partial(p, args) => {
            f(p);
            args.iter_mut().for_each(f);
        }
        Kind::Lambda(lambda) => f(&mut Arc::make_mut(lambda).body),
        Kind::Transform(t) => {
            let t = Arc::make_mut(t);
            f(&mut t.pattern);
            f(&mut t.update);
            if let Some(d) = &mut t.delete {
                f(d);
            }
        }
        Kind::Sort(terms) | Kind::OrderBy(_, terms) => {
            terms.iter_mut().for_each(|t| f(&mut t.expr))
        }
        _ => {}
    }
}

fn tail_call_optimize(mut expr: Node) -> Node {
    if matches!(expr.kind, Kind::Function(..)) && expr.predicate.is_empty() {
        let pos = expr.pos;
        let lambda = crate::ast::Lambda {
            params: Vec::new(),
            signature: None,
            body: expr,
            thunk: true,
        };
        return Node::new(Kind::Lambda(Arc::new(lambda)), pos);
    }
    match &mut expr.kind {
        Kind::Condition(_, then, otherwise) => {
            optimize_in_place(then);
            if let Some(otherwise) = otherwise {
                optimize_in_place(otherwise);
            }
        }
        Kind::Block(exprs) => {
            if let Some(last) = exprs.last_mut() {
                optimize_in_place(last);
            }
        }
        _ => {}
    }
    expr
}

fn optimize_in_place(node: &mut Node) {
    let pos = node.pos;
    let taken = std::mem::replace(node, Node::new(Kind::Null, pos));
    *node = tail_call_optimize(taken);
}
