//! The evaluator: walks the processed tree over values, mirroring the reference
//! implementation's `evaluate` (sequences and their unwrapping, path steps that map and
//! flatten, tuple streams for `@`, `#` and `%`, tail calls through a trampoline). It is
//! bounded: a depth limit turns runaway recursion into U1001 long before a 2 MiB stack runs
//! out, and a step budget turns a runaway loop into D1012.

use std::cell::RefCell;
use std::collections::HashMap;
use std::rc::Rc;
use std::sync::Arc;

use indexmap::IndexMap;

use crate::ast::{BinOp, Group, Kind, Lambda, Node, SortTerm, Stage, Transform};
use crate::error::Error;
use crate::functions::Builtin;
use crate::regex::Pattern;
use crate::value::{boolean, deep_equal, format_number, numeric, Arr, Object, V};
use crate::NativeFn;

/// The deepest nesting of evaluation (expressions within expressions, non-tail calls).
pub(crate) const MAX_EVAL_DEPTH: usize = 2000;
/// The stack one evaluation may use below its entry point: with 2 MiB stacks (tokio's
/// workers, test threads) this leaves room for the caller, whatever the build's frame sizes.
const STACK_BUDGET: usize = 1024 * 1024;
/// The evaluation steps one `evaluate` may take.
pub(crate) const STEP_BUDGET: u64 = 2_000_000;
/// The largest range `..` allocates.
const MAX_RANGE: f64 = 1e7;

/// A scope: variables bound in it, and the scope it sits in.
pub(crate) struct FrameData {
    vars: RefCell<HashMap<String, Option<V>>>,
    parent: Option<Frame>,
}

pub(crate) type Frame = Rc<FrameData>;

/// A function value.
pub(crate) enum Fun {
    Lambda {
        def: Arc<Lambda>,
        input: Option<V>,
        env: Frame,
    },
    Builtin(&'static Builtin),
    Native(Arc<NativeFn>),
    Partial {
        target: V,
        args: Vec<Option<Option<V>>>,
    },
    Regex(Arc<Pattern>),
    Transform {
        def: Arc<Transform>,
        env: Frame,
    },
    Chain(V, V),
}

impl Fun {
    /// How many arguments a higher-order function passes to it.
    pub(crate) fn arity(&self) -> usize {
        match self {
            Fun::Lambda { def, .. } => def.params.len(),
            Fun::Builtin(b) => b.arity,
            Fun::Native(n) => n.arity,
            Fun::Partial { args, .. } => args.iter().filter(|a| a.is_none()).count(),
            Fun::Regex(_) | Fun::Transform { .. } | Fun::Chain(..) => 1,
        }
    }
}

/// One evaluation's state: depth, budget, the scopes it made, the clock.
pub(crate) struct Evaluator {
    depth: usize,
    stack_base: usize,
    steps: u64,
    frames: Vec<Frame>,
    pub(crate) now_millis: f64,
    pub(crate) step_functions: bool,
    next_id: u64,
    /// The scope of the call being made, which `$eval` evaluates in.
    pub(crate) call_env: Option<Frame>,
}

type Res = Result<Option<V>, Error>;

fn one_or_seq(mut items: Vec<V>) -> V {
    if items.len() == 1 {
        if let Some(v) = items.pop() {
            return v;
        }
    }
    V::seq(items)
}

fn tuple_at(tuple: &IndexMap<String, V>) -> Option<V> {
    tuple.get("@").cloned()
}

/// The address of a local: how far the stack has grown, measured between two calls.
#[inline(never)]
fn stack_position() -> usize {
    let marker = 0u8;
    std::hint::black_box(&marker) as *const u8 as usize
}

fn label(slot: usize) -> String {
    format!("!{slot}")
}

impl Evaluator {
    pub(crate) fn new(now_millis: f64, step_functions: bool) -> Evaluator {
        Evaluator {
            depth: 0,
            stack_base: stack_position(),
            steps: STEP_BUDGET,
            frames: Vec::new(),
            now_millis,
            step_functions,
            next_id: 0,
            call_env: None,
        }
    }

    /// A new scope inside `parent`.
    pub(crate) fn frame(&mut self, parent: Option<&Frame>) -> Frame {
        let frame = Rc::new(FrameData {
            vars: RefCell::new(HashMap::new()),
            parent: parent.cloned(),
        });
        self.frames.push(frame.clone());
        frame
    }

    /// Charges `n` steps to the budget.
    pub(crate) fn charge(&mut self, n: u64) -> Result<(), Error> {
        if self.steps < n {
            self.steps = 0;
            return Err(Error::with_message(
                "D1012",
                "Evaluation exceeded its step budget. Check for an infinite loop or a runaway recursion",
            ));
        }
        self.steps -= n;
        Ok(())
    }

    /// Charges for a value just built, by its size, so that loops that copy ever larger
    /// strings or arrays run out of budget rather than time.
    pub(crate) fn charge_size(&mut self, v: &V) -> Result<(), Error> {
        let size = match v {
            V::Str(s) => s.len(),
            V::Arr(a) => a.items.len(),
            V::Obj(o) => o.map.len(),
            _ => 0,
        };
        self.charge(size as u64 / 16)
    }

    pub(crate) fn bind(frame: &Frame, name: &str, value: Option<V>) {
        frame.vars.borrow_mut().insert(name.to_string(), value);
    }

    pub(crate) fn lookup(&self, frame: &Frame, name: &str) -> Option<V> {
        let mut current = Some(frame);
        while let Some(f) = current {
            if let Some(v) = f.vars.borrow().get(name) {
                return v.clone();
            }
            current = f.parent.as_ref();
        }
        crate::functions::lookup(name, self.step_functions)
            .map(|b| V::Fun(Rc::new(Fun::Builtin(b))))
    }

    /// Evaluates `node` against `input` in `env`.
    pub(crate) fn eval(&mut self, node: &Node, input: Option<&V>, env: &Frame) -> Res {
        self.depth += 1;
        if self.depth > MAX_EVAL_DEPTH || self.stack_base.abs_diff(stack_position()) > STACK_BUDGET
        {
            self.depth -= 1;
            return Err(Error::new("U1001").at(node.pos));
        }
        let result = self
            .charge(1)
            .and_then(|()| self.eval_node(node, input, env));
        self.depth -= 1;
        result
    }

    fn eval_node(&mut self, node: &Node, input: Option<&V>, env: &Frame) -> Res {
        let mut result = self.eval_kind(node, input, env)?;
        for stage in &node.predicate {
            if let Stage::Filter(pred) = stage {
                result = self.filter(pred, result, env)?;
            }
        }
        if !matches!(node.kind, Kind::Path(_)) {
            if let Some(group) = &node.group {
                result = Some(self.group(group, result.as_ref(), env)?);
            }
        }
        Ok(unwrap_sequence(result, node.keep_array))
    }

    fn eval_kind(&mut self, node: &Node, input: Option<&V>, env: &Frame) -> Res {
        match &node.kind {
            Kind::Path(steps) => self.path(node, steps, input, env),
            Kind::Binary(op, lhs, rhs) => self
                .binary(*op, lhs, rhs, input, env)
                .map_err(|e| e.at(node.pos).token(op.token())),
            Kind::Function(procedure, args) => self.call(node, procedure, args, input, env, None),
            Kind::Condition(cond, then, otherwise) => {
                self.condition(cond, then, otherwise.as_deref(), input, env)
            }
            Kind::Block(exprs) => self.block(exprs, input, env),
            Kind::Apply(lhs, rhs) => self.apply_op(node, lhs, rhs, input, env),
            Kind::Name(name) => Ok(lookup_field(input, name)),
            Kind::Variable(name) => Ok(self.variable(name, input, env)),
            Kind::Bind(name, rhs) => {
                let value = self.eval(rhs, input, env)?;
                Self::bind(env, name, value.clone());
                Ok(value)
            }
            _ => self.eval_other(node, input, env),
        }
    }

    fn eval_other(&mut self, node: &Node, input: Option<&V>, env: &Frame) -> Res {
        Ok(match &node.kind {
            Kind::Neg(inner) => return self.negate(node, inner, input, env),
            Kind::Array(items) => Some(self.array(node, items, input, env)?),
            Kind::Object(pairs) => Some(self.group_pairs(pairs, node.pos, input, env)?),
            Kind::Str(s) => Some(V::str(s)),
            Kind::Num(n) => Some(V::Num(*n)),
            Kind::Bool(b) => Some(V::Bool(*b)),
            Kind::Null => Some(V::Null),
            Kind::Wildcard => Some(wildcard(input)),
            Kind::Descendant => descendants(input),
            Kind::Parent(slot) => self.lookup(env, &label(*slot)),
            Kind::Regex(p) => Some(V::Fun(Rc::new(Fun::Regex(p.clone())))),
            Kind::Lambda(def) => Some(V::Fun(Rc::new(Fun::Lambda {
                def: def.clone(),
                input: input.cloned(),
                env: env.clone(),
            }))),
            Kind::Partial(procedure, args) => {
                Some(self.partial(node, procedure, args, input, env)?)
            }
            Kind::Transform(def) => Some(V::Fun(Rc::new(Fun::Transform {
                def: def.clone(),
                env: env.clone(),
            }))),
            _ => None,
        })
    }

    fn negate(&mut self, node: &Node, inner: &Node, input: Option<&V>, env: &Frame) -> Res {
        let Some(v) = self.eval(inner, input, env)? else {
            return Ok(None);
        };
        match numeric(&v)? {
            Some(n) => Ok(Some(V::Num(-n))),
            None => Err(Error::new("D1002")
                .at(node.pos)
                .value(crate::value::stringify(&v, false)?)),
        }
    }

    fn condition(
        &mut self,
        cond: &Node,
        then: &Node,
        otherwise: Option<&Node>,
        input: Option<&V>,
        env: &Frame,
    ) -> Res {
        let c = self.eval(cond, input, env)?;
        if c.as_ref().is_some_and(boolean) {
            self.eval(then, input, env)
        } else if let Some(otherwise) = otherwise {
            self.eval(otherwise, input, env)
        } else {
            Ok(None)
        }
    }

    fn block(&mut self, exprs: &[Node], input: Option<&V>, env: &Frame) -> Res {
        let frame = self.frame(Some(env));
        let mut result = None;
        for e in exprs {
            result = self.eval(e, input, &frame)?;
        }
        Ok(result)
    }

    fn variable(&self, name: &str, input: Option<&V>, env: &Frame) -> Option<V> {
        if !name.is_empty() {
            return self.lookup(env, name);
        }
        match input {
            Some(V::Arr(a)) if a.outer => a.items.first().cloned(),
            other => other.cloned(),
        }
    }

    // ----- paths -------------------------------------------------------------------------

    fn path(&mut self, node: &Node, steps: &[Node], input: Option<&V>, env: &Frame) -> Res {
        let first_is_variable = matches!(steps.first().map(|s| &s.kind), Some(Kind::Variable(_)));
        let (mut inputs, whole): (Vec<Option<V>>, Option<V>) = match input {
            Some(V::Arr(a)) if !first_is_variable => {
                (a.items.iter().cloned().map(Some).collect(), input.cloned())
            }
            other => (vec![other.cloned()], other.map(|v| V::seq(vec![v.clone()]))),
        };
        let mut result: Option<V> = None;
        let mut tuples: Option<Vec<IndexMap<String, V>>> = None;
        let mut is_tuple = false;
        let last = steps.len().saturating_sub(1);
        for (i, step) in steps.iter().enumerate() {
            if step.tuple {
                is_tuple = true;
            }
            if i == 0 && step.consarray {
                result = self.eval(step, whole.as_ref(), env)?;
            } else if is_tuple {
                tuples = Some(self.tuple_step(step, &inputs, tuples, env)?);
            } else {
                result = Some(self.step(step, &inputs, env, i == last)?);
            }
            if !is_tuple
                && result
                    .as_ref()
                    .is_none_or(|r| matches!(r, V::Arr(a) if a.items.is_empty()))
            {
                break;
            }
            if step.focus.is_none() {
                inputs = match &result {
                    Some(V::Arr(a)) => a.items.iter().cloned().map(Some).collect(),
                    Some(v) => vec![Some(v.clone())],
                    None => vec![],
                };
            }
        }
        if is_tuple {
            let tuples = tuples.unwrap_or_default();
            result = Some(if node.tuple {
                tuple_stream(tuples)
            } else {
                V::seq(tuples.iter().filter_map(tuple_at).collect())
            });
        }
        if node.keep_singleton_array {
            result = result.map(|r| match r {
                V::Arr(a) if a.cons && !a.seq => V::Arr(Rc::new(Arr {
                    items: vec![V::Arr(a)],
                    seq: true,
                    keep: true,
                    ..Arr::default()
                })),
                V::Arr(mut a) => {
                    Rc::make_mut(&mut a).keep = true;
                    V::Arr(a)
                }
                other => other,
            });
        }
        if let Some(group) = &node.group {
            result = Some(self.group(group, result.as_ref(), env)?);
        }
        Ok(result)
    }

    fn step(
        &mut self,
        step: &Node,
        inputs: &[Option<V>],
        env: &Frame,
        last: bool,
    ) -> Result<V, Error> {
        if let Kind::Sort(terms) = &step.kind {
            let items: Vec<V> = inputs.iter().flatten().cloned().collect();
            let sorted = self.sort_terms(terms, items, None, env)?;
            let mut result = Some(V::seq(sorted));
            for stage in &step.stages {
                if let Stage::Filter(pred) = stage {
                    result = self.filter(pred, result, env)?;
                }
            }
            return Ok(result.unwrap_or_else(|| V::seq(vec![])));
        }
        let mut results = Vec::new();
        for item in inputs {
            let mut res = self.eval(step, item.as_ref(), env)?;
            for stage in &step.stages {
                if let Stage::Filter(pred) = stage {
                    res = self.filter(pred, res, env)?;
                }
            }
            results.extend(res);
        }
        if last && results.len() == 1 && matches!(&results[0], V::Arr(a) if !a.seq) {
            return Ok(results.remove(0));
        }
        self.charge(results.len() as u64 / 16)?;
        let mut flat = Vec::with_capacity(results.len());
        for res in results {
            match res {
                V::Arr(a) if !a.cons => flat.extend(a.items.iter().cloned()),
                other => flat.push(other),
            }
        }
        Ok(V::seq(flat))
    }

    fn tuple_frame(&mut self, env: &Frame, tuple: &IndexMap<String, V>) -> Frame {
        let frame = self.frame(Some(env));
        for (k, v) in tuple {
            Self::bind(&frame, k, Some(v.clone()));
        }
        frame
    }

    fn tuple_step(
        &mut self,
        step: &Node,
        inputs: &[Option<V>],
        tuples: Option<Vec<IndexMap<String, V>>>,
        env: &Frame,
    ) -> Result<Vec<IndexMap<String, V>>, Error> {
        if let Kind::Sort(terms) = &step.kind {
            let mut result = match tuples {
                Some(tuples) => {
                    let items = tuples.into_iter().map(V::object).collect();
                    self.sort_terms(terms, items, Some(()), env)?
                        .into_iter()
                        .filter_map(|v| match v {
                            V::Obj(o) => Some(o.map.clone()),
                            _ => None,
                        })
                        .collect()
                }
                None => {
                    let items: Vec<V> = inputs.iter().flatten().cloned().collect();
                    let sorted = self.sort_terms(terms, items, None, env)?;
                    sorted
                        .into_iter()
                        .enumerate()
                        .map(|(i, v)| {
                            let mut t = IndexMap::new();
                            t.insert("@".to_string(), v);
                            if let Some(index) = &step.index {
                                t.insert(index.clone(), V::Num(i as f64));
                            }
                            t
                        })
                        .collect()
                }
            };
            result = self.stages(&step.stages, result, env)?;
            return Ok(result);
        }
        let bindings = tuples.unwrap_or_else(|| {
            inputs
                .iter()
                .map(|item| {
                    let mut t = IndexMap::new();
                    if let Some(v) = item {
                        t.insert("@".to_string(), v.clone());
                    }
                    t
                })
                .collect()
        });
        let mut result = Vec::new();
        for tuple in &bindings {
            let frame = self.tuple_frame(env, tuple);
            let context = tuple_at(tuple);
            let Some(res) = self.eval(step, context.as_ref(), &frame)? else {
                continue;
            };
            let res_tuples = matches!(&res, V::Arr(a) if a.tuples);
            for (bb, r) in res.items().into_iter().enumerate() {
                let mut t = tuple.clone();
                if res_tuples {
                    if let V::Obj(o) = &r {
                        for (k, v) in &o.map {
                            t.insert(k.clone(), v.clone());
                        }
                    }
                } else {
                    if let Some(focus) = &step.focus {
                        t.insert(focus.clone(), r);
                        if let Some(at) = tuple_at(tuple) {
                            t.insert("@".into(), at);
                        }
                    } else {
                        t.insert("@".into(), r);
                    }
                    if let Some(index) = &step.index {
                        t.insert(index.clone(), V::Num(bb as f64));
                    }
                    if let Some(slot) = step.ancestor {
                        if let Some(at) = tuple_at(tuple) {
                            t.insert(label(slot), at);
                        }
                    }
                }
                result.push(t);
            }
        }
        self.stages(&step.stages, result, env)
    }

    fn stages(
        &mut self,
        stages: &[Stage],
        mut tuples: Vec<IndexMap<String, V>>,
        env: &Frame,
    ) -> Result<Vec<IndexMap<String, V>>, Error> {
        for stage in stages {
            match stage {
                Stage::Filter(pred) => {
                    let filtered = self.filter(pred, Some(tuple_stream(tuples)), env)?;
                    tuples = match filtered {
                        Some(V::Arr(a)) => a.items.iter().filter_map(obj_map).collect(),
                        Some(other) => obj_map(&other).into_iter().collect(),
                        None => Vec::new(),
                    };
                }
                Stage::Index(name) => {
                    for (i, t) in tuples.iter_mut().enumerate() {
                        t.insert(name.clone(), V::Num(i as f64));
                    }
                }
            }
        }
        Ok(tuples)
    }

    pub(crate) fn filter(&mut self, pred: &Node, input: Option<V>, env: &Frame) -> Res {
        let tuples = matches!(&input, Some(V::Arr(a)) if a.tuples);
        let items: Vec<V> = match &input {
            Some(V::Arr(a)) => a.items.clone(),
            Some(v) => vec![v.clone()],
            None => vec![],
        };
        let mut results = Vec::new();
        if let Kind::Num(n) = pred.kind {
            let mut index = n.floor();
            if index < 0.0 {
                index += items.len() as f64;
            }
            if index >= 0.0 {
                if let Some(item) = items.get(index as usize) {
                    if let V::Arr(_) = item {
                        return Ok(Some(item.clone()));
                    }
                    results.push(item.clone());
                }
            }
            return Ok(Some(seq_with(results, tuples)));
        }
        let len = items.len() as f64;
        for (index, item) in items.iter().enumerate() {
            let (context, frame) = if tuples {
                let map = obj_map(item).unwrap_or_default();
                let frame = self.tuple_frame(env, &map);
                (tuple_at(&map), frame)
            } else {
                (Some(item.clone()), env.clone())
            };
            let res = self.eval(pred, context.as_ref(), &frame)?;
            let keep = match res {
                Some(v) => self.predicate_selects(&v, index as f64, len)?,
                None => false,
            };
            if keep {
                results.push(item.clone());
            }
        }
        Ok(Some(seq_with(results, tuples)))
    }

    fn predicate_selects(&self, v: &V, index: f64, len: f64) -> Result<bool, Error> {
        let numbers: Option<Vec<f64>> = match v {
            V::Num(_) => numeric(v)?.map(|n| vec![n]),
            V::Arr(a) => {
                let mut out = Vec::with_capacity(a.items.len());
                for item in &a.items {
                    match numeric(item)? {
                        Some(n) => out.push(n),
                        None => {
                            out.clear();
                            return Ok(boolean(v));
                        }
                    }
                }
                Some(out)
            }
            _ => None,
        };
        match numbers {
            Some(ns) => Ok(ns.iter().any(|n| {
                let mut i = n.floor();
                if i < 0.0 {
                    i += len;
                }
                i == index
            })),
            None => Ok(boolean(v)),
        }
    }

    // ----- sorting and grouping ------------------------------------------------------------

    /// Sorts `items` by the order-by terms; `tuples` when items are binding tuples.
    fn sort_terms(
        &mut self,
        terms: &[SortTerm],
        items: Vec<V>,
        tuples: Option<()>,
        env: &Frame,
    ) -> Result<Vec<V>, Error> {
        let mut keyed = Vec::with_capacity(items.len());
        for item in items {
            let mut keys = Vec::with_capacity(terms.len());
            let (context, frame) = match (&item, tuples) {
                (V::Obj(o), Some(())) => {
                    let frame = self.tuple_frame(env, &o.map);
                    (tuple_at(&o.map), frame)
                }
                _ => (Some(item.clone()), env.clone()),
            };
            for term in terms {
                keys.push(self.eval(&term.expr, context.as_ref(), &frame)?);
            }
            keyed.push((item, keys));
        }
        let sorted = merge_sort(keyed, &mut |a, b| order_swap(terms, &a.1, &b.1))?;
        Ok(sorted.into_iter().map(|(v, _)| v).collect())
    }

    fn group(&mut self, group: &Group, input: Option<&V>, env: &Frame) -> Result<V, Error> {
        self.group_pairs(&group.pairs, group.pos, input, env)
    }

    fn group_pairs(
        &mut self,
        pairs: &[(Node, Node)],
        pos: usize,
        input: Option<&V>,
        env: &Frame,
    ) -> Result<V, Error> {
        let reduce = matches!(input, Some(V::Arr(a)) if a.tuples);
        let mut items: Vec<Option<V>> = match input {
            Some(V::Arr(a)) => a.items.iter().cloned().map(Some).collect(),
            other => vec![other.cloned()],
        };
        if items.is_empty() {
            items.push(None);
        }
        let mut groups: IndexMap<String, (Option<V>, usize)> = IndexMap::new();
        for item in &items {
            let (context, frame) = match (item, reduce) {
                (Some(V::Obj(o)), true) => {
                    let frame = self.tuple_frame(env, &o.map);
                    (tuple_at(&o.map), frame)
                }
                _ => (item.clone(), env.clone()),
            };
            for (index, (key_expr, _)) in pairs.iter().enumerate() {
                let key = match self.eval(key_expr, context.as_ref(), &frame)? {
                    None => continue,
                    Some(V::Str(s)) => s.to_string(),
                    Some(other) => {
                        return Err(Error::new("T1003")
                            .at(pos)
                            .value(crate::value::stringify(&other, false)?));
                    }
                };
                match groups.get_mut(&key) {
                    Some((data, existing)) => {
                        if *existing != index {
                            return Err(Error::new("D1009")
                                .at(pos)
                                .value(serde_json::Value::from(key).to_string()));
                        }
                        *data = crate::functions::append(data.take(), item.clone());
                    }
                    None => {
                        groups.insert(key, (item.clone(), index));
                    }
                }
            }
        }
        let mut result = IndexMap::new();
        for (key, (data, index)) in groups {
            let (context, frame) = if reduce {
                let mut tuple = reduce_tuples(data.as_ref());
                let context = tuple.shift_remove("@");
                (context, self.tuple_frame(env, &tuple))
            } else {
                (data, env.clone())
            };
            if let Some(v) = self.eval(&pairs[index].1, context.as_ref(), &frame)? {
                result.insert(key, v);
            }
        }
        Ok(V::object(result))
    }

    // ----- operators -----------------------------------------------------------------------

    fn binary(&mut self, op: BinOp, lhs: &Node, rhs: &Node, input: Option<&V>, env: &Frame) -> Res {
        let l = self.eval(lhs, input, env)?;
        if matches!(op, BinOp::And | BinOp::Or) {
            let lb = l.as_ref().is_some_and(boolean);
            if op == BinOp::And && !lb {
                return Ok(Some(V::Bool(false)));
            }
            if op == BinOp::Or && lb {
                return Ok(Some(V::Bool(true)));
            }
            let r = self.eval(rhs, input, env)?;
            return Ok(Some(V::Bool(r.as_ref().is_some_and(boolean))));
        }
        let r = self.eval(rhs, input, env)?;
        match op {
            BinOp::Add | BinOp::Sub | BinOp::Mul | BinOp::Div | BinOp::Mod => arithmetic(op, l, r),
            BinOp::Eq | BinOp::Ne => {
                let (Some(l), Some(r)) = (l, r) else {
                    return Ok(Some(V::Bool(false)));
                };
                let eq = deep_equal(&l, &r, 0);
                Ok(Some(V::Bool(if op == BinOp::Eq { eq } else { !eq })))
            }
            BinOp::Lt | BinOp::Le | BinOp::Gt | BinOp::Ge => compare(op, l, r),
            BinOp::Concat => {
                let ls = match &l {
                    Some(v) => crate::functions::string_of(v)?,
                    None => String::new(),
                };
                let rs = match &r {
                    Some(v) => crate::functions::string_of(v)?,
                    None => String::new(),
                };
                let joined = V::string(ls + &rs);
                self.charge_size(&joined)?;
                Ok(Some(joined))
            }
            BinOp::Range => self.range(l, r),
            BinOp::In => {
                let (Some(l), Some(r)) = (l, r) else {
                    return Ok(Some(V::Bool(false)));
                };
                let found = r.items().iter().any(|item| strict_equal(item, &l));
                Ok(Some(V::Bool(found)))
            }
            BinOp::And | BinOp::Or => Ok(None),
        }
    }

    fn range(&mut self, l: Option<V>, r: Option<V>) -> Res {
        let int = |v: &Option<V>| match v {
            Some(V::Num(n)) if n.fract() == 0.0 && n.is_finite() => Ok(Some(*n)),
            Some(_) => Err(()),
            None => Ok(None),
        };
        let lo = int(&l).map_err(|()| Error::new("T2003"))?;
        let hi = int(&r).map_err(|()| Error::new("T2004"))?;
        let (Some(lo), Some(hi)) = (lo, hi) else {
            return Ok(None);
        };
        if lo > hi {
            return Ok(None);
        }
        let size = hi - lo + 1.0;
        if size > MAX_RANGE {
            return Err(Error::new("D2014").value(format_number(size)));
        }
        self.charge((size as u64) / 8)?;
        let items = (0..size as u64).map(|i| V::Num(lo + i as f64)).collect();
        Ok(Some(V::seq(items)))
    }

    fn array(
        &mut self,
        node: &Node,
        items: &[Node],
        input: Option<&V>,
        env: &Frame,
    ) -> Result<V, Error> {
        let mut out = Vec::new();
        for item in items {
            let Some(value) = self.eval(item, input, env)? else {
                continue;
            };
            if matches!(item.kind, Kind::Array(_)) {
                out.push(value);
            } else {
                match value {
                    V::Arr(a) => out.extend(a.items.iter().cloned()),
                    other => out.push(other),
                }
            }
        }
        let array = V::Arr(Rc::new(Arr {
            items: out,
            cons: node.consarray,
            ..Arr::default()
        }));
        self.charge_size(&array)?;
        Ok(array)
    }

    // ----- functions -----------------------------------------------------------------------

    fn call(
        &mut self,
        node: &Node,
        procedure: &Node,
        args: &[Node],
        input: Option<&V>,
        env: &Frame,
        applyto: Option<Option<V>>,
    ) -> Res {
        let proc = self.eval(procedure, input, env)?;
        let name = procedure_name(procedure);
        if proc.is_none() {
            if let Some(name) = self.forgot_dollar(procedure, env) {
                return Err(Error::new("T1005").at(node.pos).token(name));
            }
        }
        let mut evaluated = Vec::with_capacity(args.len() + 1);
        if let Some(context) = applyto {
            evaluated.push(context);
        }
        for arg in args {
            evaluated.push(self.eval(arg, input, env)?);
        }
        self.call_env = Some(env.clone());
        self.apply(proc.as_ref(), evaluated, input)
            .map_err(|e| e.at(node.pos).token(name))
    }

    /// Applies a function value to arguments, running tail calls through the trampoline.
    pub(crate) fn apply(
        &mut self,
        proc: Option<&V>,
        args: Vec<Option<V>>,
        input: Option<&V>,
    ) -> Res {
        let mut result = self.apply_inner(proc, args, input)?;
        while let Some((def, tin, env)) = thunk_of(&result) {
            let Kind::Function(procedure, arg_nodes) = &def.body.kind else {
                break;
            };
            let next = self.eval(procedure, tin.as_ref(), &env)?;
            let mut evaluated = Vec::with_capacity(arg_nodes.len());
            for arg in arg_nodes {
                evaluated.push(self.eval(arg, tin.as_ref(), &env)?);
            }
            let name = procedure_name(procedure);
            result = self
                .apply_inner(next.as_ref(), evaluated, input)
                .map_err(|e| e.at(procedure.pos).token(name))?;
        }
        Ok(result)
    }

    fn apply_inner(&mut self, proc: Option<&V>, args: Vec<Option<V>>, input: Option<&V>) -> Res {
        let Some(V::Fun(f)) = proc else {
            return Err(Error::new("T1006"));
        };
        let f = f.clone();
        self.charge(1)?;
        match &*f {
            Fun::Lambda {
                def,
                input: closure_input,
                env,
            } => {
                let args = match &def.signature {
                    Some(sig) => sig.validate(&args, input)?,
                    None => args,
                };
                let frame = self.frame(Some(env));
                for (i, param) in def.params.iter().enumerate() {
                    Self::bind(&frame, param, args.get(i).cloned().flatten());
                }
                self.depth += 1;
                let result = if self.depth > MAX_EVAL_DEPTH {
                    Err(Error::new("U1001"))
                } else {
                    self.eval(&def.body, closure_input.as_ref(), &frame)
                };
                self.depth -= 1;
                result
            }
            Fun::Builtin(b) => {
                let args = crate::functions::signature(b)?.validate(&args, input)?;
                let result = (b.f)(self, args, input)?;
                if let Some(v) = &result {
                    self.charge_size(v)?;
                }
                Ok(result)
            }
            Fun::Native(native) => native.call(&args, input),
            Fun::Partial {
                target,
                args: bound,
            } => {
                let mut supplied = args.into_iter();
                let full: Vec<Option<V>> = bound
                    .iter()
                    .map(|a| match a {
                        Some(v) => v.clone(),
                        None => supplied.next().flatten(),
                    })
                    .collect();
                self.apply(Some(target), full, input)
            }
            Fun::Regex(pattern) => Ok(crate::functions::regex_match_object(
                pattern,
                args.first().cloned().flatten(),
            )),
            Fun::Transform { def, env } => {
                self.transform(def, env, args.into_iter().next().flatten())
            }
            Fun::Chain(first, second) => {
                let mid = self.apply(Some(first), args, input)?;
                self.apply(Some(second), vec![mid], input)
            }
        }
    }

    /// Calls a function from a higher-order built-in with as many of (value, index, array)
    /// as it takes.
    pub(crate) fn apply_hof(&mut self, func: &V, value: V, index: usize, array: &V) -> Res {
        let arity = match func {
            V::Fun(f) => f.arity(),
            _ => 1,
        };
        let mut args = vec![Some(value)];
        if arity >= 2 {
            args.push(Some(V::Num(index as f64)));
        }
        if arity >= 3 {
            args.push(Some(array.clone()));
        }
        self.apply(Some(func), args, None)
    }

    /// The name of a function called without its `$` (`uppercase(x)`), for T1005/T1007.
    fn forgot_dollar(&self, procedure: &Node, env: &Frame) -> Option<String> {
        let Kind::Path(steps) = &procedure.kind else {
            return None;
        };
        let Some(Kind::Name(n)) = steps.first().map(|s| &s.kind) else {
            return None;
        };
        self.lookup(env, n).map(|_| n.clone())
    }

    fn partial(
        &mut self,
        node: &Node,
        procedure: &Node,
        args: &[Node],
        input: Option<&V>,
        env: &Frame,
    ) -> Result<V, Error> {
        let mut bound = Vec::with_capacity(args.len());
        for arg in args {
            if matches!(arg.kind, Kind::Placeholder) {
                bound.push(None);
            } else {
                bound.push(Some(self.eval(arg, input, env)?));
            }
        }
        let proc = self.eval(procedure, input, env)?;
        match proc {
            Some(target @ V::Fun(_)) => Ok(V::Fun(Rc::new(Fun::Partial {
                target,
                args: bound,
            }))),
            None => {
                if let Some(name) = self.forgot_dollar(procedure, env) {
                    return Err(Error::new("T1007").at(node.pos).token(name));
                }
                Err(Error::new("T1008")
                    .at(node.pos)
                    .token(procedure_name(procedure)))
            }
            Some(_) => Err(Error::new("T1008")
                .at(node.pos)
                .token(procedure_name(procedure))),
        }
    }

    fn apply_op(
        &mut self,
        node: &Node,
        lhs: &Node,
        rhs: &Node,
        input: Option<&V>,
        env: &Frame,
    ) -> Res {
        let l = self.eval(lhs, input, env)?;
        if let Kind::Function(procedure, args) = &rhs.kind {
            return self.call(rhs, procedure, args, input, env, Some(l));
        }
        let func = self.eval(rhs, input, env)?;
        let Some(func @ V::Fun(_)) = func else {
            let shown = match &func {
                Some(v) => crate::value::stringify(v, false)?,
                None => String::new(),
            };
            return Err(Error::new("T2006").at(node.pos).value(shown));
        };
        match l {
            Some(first @ V::Fun(_)) => Ok(Some(V::Fun(Rc::new(Fun::Chain(first, func))))),
            other => self.apply(Some(&func), vec![other], None),
        }
    }

    // ----- transform -----------------------------------------------------------------------

    fn transform(&mut self, def: &Transform, env: &Frame, obj: Option<V>) -> Res {
        let Some(obj) = obj else {
            return Ok(None);
        };
        if !matches!(obj, V::Obj(_) | V::Arr(_)) {
            return Err(Error::new("T0410").value("1").token("transform"));
        }
        let mut result = self.clone_tagged(&obj, 0)?;
        let matches = match self.eval(&def.pattern, Some(&result), env)? {
            None => return Ok(Some(result)),
            Some(m) => m.items(),
        };
        for m in matches {
            let id = match &m {
                V::Obj(o) => o.id,
                _ => 0,
            };
            let current = if id == 0 {
                Some(m.clone())
            } else {
                find_by_id(&result, id)
            };
            let Some(current) = current else { continue };
            let update = self.eval(&def.update, Some(&current), env)?;
            let mut edited = match &current {
                V::Obj(o) => Some((**o).clone()),
                _ => None,
            };
            if let Some(update) = update {
                let V::Obj(update) = update else {
                    return Err(Error::new("T2011")
                        .at(def.update.pos)
                        .value(crate::value::stringify(&update, false)?));
                };
                if let Some(edited) = &mut edited {
                    for (k, v) in &update.map {
                        edited.map.insert(k.clone(), v.clone());
                    }
                }
            }
            if let Some(delete) = &def.delete {
                if let Some(deletions) = self.eval(delete, Some(&current), env)? {
                    let names = deletions.items();
                    if !names.iter().all(|n| matches!(n, V::Str(_))) {
                        return Err(Error::new("T2012")
                            .at(delete.pos)
                            .value(crate::value::stringify(&deletions, false)?));
                    }
                    if let Some(edited) = &mut edited {
                        for n in names {
                            if let V::Str(s) = n {
                                edited.map.shift_remove(&*s);
                            }
                        }
                    }
                }
            }
            if let (Some(edited), true) = (edited, id != 0) {
                result = replace_by_id(&result, id, &V::Obj(Rc::new(edited)), 0);
            }
        }
        Ok(Some(result))
    }

    /// A deep copy whose objects carry fresh ids, so that a transform can find them again.
    fn clone_tagged(&mut self, v: &V, depth: usize) -> Result<V, Error> {
        if depth > crate::value::MAX_VALUE_DEPTH {
            return Err(Error::new("U1001"));
        }
        Ok(match v {
            V::Arr(a) => {
                let mut items = Vec::with_capacity(a.items.len());
                for item in &a.items {
                    items.push(self.clone_tagged(item, depth + 1)?);
                }
                V::array(items)
            }
            V::Obj(o) => {
                let mut map = IndexMap::with_capacity(o.map.len());
                for (k, item) in &o.map {
                    map.insert(k.clone(), self.clone_tagged(item, depth + 1)?);
                }
                self.next_id += 1;
                V::Obj(Rc::new(Object {
                    map,
                    id: self.next_id,
                }))
            }
            other => other.clone(),
        })
    }

    /// Breaks the reference cycles closures make with their scopes.
    pub(crate) fn release(&mut self) {
        for frame in self.frames.drain(..) {
            frame.vars.borrow_mut().clear();
        }
    }
}

/// The tail call a result stands for, when it is a trampoline thunk.
fn thunk_of(result: &Option<V>) -> Option<(Arc<Lambda>, Option<V>, Frame)> {
    let Some(V::Fun(f)) = result else { return None };
    match &**f {
        Fun::Lambda { def, input, env } if def.thunk => {
            Some((def.clone(), input.clone(), env.clone()))
        }
        _ => None,
    }
}

fn obj_map(v: &V) -> Option<IndexMap<String, V>> {
    match v {
        V::Obj(o) => Some(o.map.clone()),
        _ => None,
    }
}

fn tuple_stream(tuples: Vec<IndexMap<String, V>>) -> V {
    V::Arr(Rc::new(Arr {
        items: tuples.into_iter().map(V::object).collect(),
        seq: true,
        tuples: true,
        ..Arr::default()
    }))
}

fn seq_with(items: Vec<V>, tuples: bool) -> V {
    V::Arr(Rc::new(Arr {
        items,
        seq: true,
        tuples,
        ..Arr::default()
    }))
}

/// The end of `evaluate`: an empty sequence is undefined, a singleton is its item.
fn unwrap_sequence(result: Option<V>, keep_array: bool) -> Option<V> {
    let Some(V::Arr(mut a)) = result else {
        return result;
    };
    if !a.seq || a.tuples {
        return Some(V::Arr(a));
    }
    if keep_array {
        Rc::make_mut(&mut a).keep = true;
    }
    match a.items.len() {
        0 => None,
        1 if !a.keep => a.items.first().cloned(),
        _ => Some(V::Arr(a)),
    }
}

fn reduce_tuples(data: Option<&V>) -> IndexMap<String, V> {
    match data {
        Some(V::Arr(a)) if !a.items.is_empty() => {
            let mut result = obj_map(&a.items[0]).unwrap_or_default();
            for tuple in &a.items[1..] {
                if let V::Obj(o) = tuple {
                    for (k, v) in &o.map {
                        let merged =
                            crate::functions::append(result.get(k).cloned(), Some(v.clone()));
                        if let Some(m) = merged {
                            result.insert(k.clone(), m);
                        }
                    }
                }
            }
            result
        }
        Some(other) => obj_map(other).unwrap_or_default(),
        None => IndexMap::new(),
    }
}

fn procedure_name(procedure: &Node) -> String {
    match &procedure.kind {
        Kind::Path(steps) => match steps.first().map(|s| &s.kind) {
            Some(Kind::Name(n)) => n.clone(),
            _ => String::new(),
        },
        Kind::Variable(n) => n.clone(),
        _ => String::new(),
    }
}

/// A field of an object, mapped over arrays and flattened one level.
pub(crate) fn lookup_field(input: Option<&V>, key: &str) -> Option<V> {
    match input? {
        array @ V::Arr(_) => {
            let mut out = Vec::new();
            for item in crate::value::leaves(array) {
                match lookup_field(Some(&item), key) {
                    Some(V::Arr(inner)) => out.extend(inner.items.iter().cloned()),
                    Some(v) => out.push(v),
                    None => {}
                }
            }
            Some(V::seq(out))
        }
        V::Obj(o) => o.map.get(key).cloned(),
        _ => None,
    }
}

fn wildcard(input: Option<&V>) -> V {
    let mut input = input;
    if let Some(V::Arr(a)) = input {
        if a.outer && !a.items.is_empty() {
            input = a.items.first();
        }
    }
    let mut out = Vec::new();
    match input {
        Some(V::Obj(o)) => o
            .map
            .values()
            .for_each(|v| out.extend(crate::value::leaves(v))),
        Some(v @ V::Arr(_)) => out.extend(crate::value::leaves(v)),
        _ => {}
    }
    V::seq(out)
}

fn descendants(input: Option<&V>) -> Option<V> {
    let input = input?;
    let mut out = Vec::new();
    let mut stack = vec![input.clone()];
    while let Some(v) = stack.pop() {
        match &v {
            V::Arr(a) => stack.extend(a.items.iter().rev().cloned()),
            V::Obj(o) => {
                out.push(v.clone());
                stack.extend(o.map.values().rev().cloned());
            }
            _ => out.push(v.clone()),
        }
    }
    Some(one_or_seq(out))
}

fn find_by_id(v: &V, id: u64) -> Option<V> {
    let mut stack = vec![v.clone()];
    while let Some(v) = stack.pop() {
        match &v {
            V::Obj(o) if o.id == id => return Some(v.clone()),
            V::Obj(o) => stack.extend(o.map.values().cloned()),
            V::Arr(a) => stack.extend(a.items.iter().cloned()),
            _ => {}
        }
    }
    None
}

fn replace_by_id(v: &V, id: u64, with: &V, depth: usize) -> V {
    if depth > crate::value::MAX_VALUE_DEPTH {
        return v.clone();
    }
    match v {
        V::Obj(o) if o.id == id => with.clone(),
        V::Obj(o) => {
            let map = o
                .map
                .iter()
                .map(|(k, item)| (k.clone(), replace_by_id(item, id, with, depth + 1)))
                .collect();
            V::Obj(Rc::new(Object { map, id: o.id }))
        }
        V::Arr(a) => V::Arr(Rc::new(Arr {
            items: a
                .items
                .iter()
                .map(|item| replace_by_id(item, id, with, depth + 1))
                .collect(),
            ..(**a).clone()
        })),
        other => other.clone(),
    }
}

fn strict_equal(a: &V, b: &V) -> bool {
    match (a, b) {
        (V::Null, V::Null) => true,
        (V::Bool(x), V::Bool(y)) => x == y,
        (V::Num(x), V::Num(y)) => x == y,
        (V::Str(x), V::Str(y)) => x == y,
        (V::Arr(x), V::Arr(y)) => Rc::ptr_eq(x, y),
        (V::Obj(x), V::Obj(y)) => Rc::ptr_eq(x, y),
        (V::Fun(x), V::Fun(y)) => Rc::ptr_eq(x, y),
        _ => false,
    }
}

fn arithmetic(op: BinOp, l: Option<V>, r: Option<V>) -> Res {
    let ln = match &l {
        Some(v) => Some(numeric(v)?.ok_or_else(|| Error::new("T2001"))?),
        None => None,
    };
    let rn = match &r {
        Some(v) => Some(numeric(v)?.ok_or_else(|| Error::new("T2002"))?),
        None => None,
    };
    let (Some(a), Some(b)) = (ln, rn) else {
        return Ok(None);
    };
    Ok(Some(V::Num(match op {
        BinOp::Add => a + b,
        BinOp::Sub => a - b,
        BinOp::Mul => a * b,
        BinOp::Div => a / b,
        _ => a % b,
    })))
}

fn compare(op: BinOp, l: Option<V>, r: Option<V>) -> Res {
    let comparable = |v: &Option<V>| matches!(v, None | Some(V::Str(_)) | Some(V::Num(_)));
    if !comparable(&l) || !comparable(&r) {
        let bad = if comparable(&l) { &r } else { &l };
        let shown = match bad {
            Some(v) => crate::value::stringify(v, false)?,
            None => String::new(),
        };
        return Err(Error::new("T2010").value(shown));
    }
    let (Some(l), Some(r)) = (l, r) else {
        return Ok(None);
    };
    let ord = match (&l, &r) {
        (V::Num(a), V::Num(b)) => a.partial_cmp(b),
        (V::Str(a), V::Str(b)) => Some(js_cmp(a, b)),
        _ => {
            let shown = format!(
                "{} and {}",
                crate::value::stringify(&l, false)?,
                crate::value::stringify(&r, false)?
            );
            return Err(Error::new("T2009").value(shown));
        }
    };
    let Some(ord) = ord else {
        return Ok(Some(V::Bool(false)));
    };
    use std::cmp::Ordering::*;
    Ok(Some(V::Bool(match op {
        BinOp::Lt => ord == Less,
        BinOp::Le => ord != Greater,
        BinOp::Gt => ord == Greater,
        _ => ord != Less,
    })))
}

/// JavaScript's string order: by UTF-16 code units.
pub(crate) fn js_cmp(a: &str, b: &str) -> std::cmp::Ordering {
    a.encode_utf16().cmp(b.encode_utf16())
}

/// The order-by comparison: true when `a` must move after `b`.
fn order_swap(terms: &[SortTerm], a: &[Option<V>], b: &[Option<V>]) -> Result<bool, Error> {
    for (i, term) in terms.iter().enumerate() {
        let (x, y) = (&a[i], &b[i]);
        let comp = match (x, y) {
            (None, None) => 0,
            (None, _) => 1,
            (_, None) => -1,
            (Some(x), Some(y)) => {
                let ord = match (x, y) {
                    (V::Num(p), V::Num(q)) => p.partial_cmp(q).unwrap_or(std::cmp::Ordering::Equal),
                    (V::Str(p), V::Str(q)) => js_cmp(p, q),
                    (V::Num(_) | V::Str(_), V::Num(_) | V::Str(_)) => {
                        return Err(Error::new("T2007"))
                    }
                    _ => return Err(Error::new("T2008")),
                };
                let c = ord as i32;
                if term.descending {
                    -c
                } else {
                    c
                }
            }
        };
        if comp != 0 {
            return Ok(comp == 1);
        }
    }
    Ok(false)
}

/// The reference implementation's stable merge sort, with a comparator that says "swap".
pub(crate) fn merge_sort<T: Clone>(
    items: Vec<T>,
    swap: &mut dyn FnMut(&T, &T) -> Result<bool, Error>,
) -> Result<Vec<T>, Error> {
    if items.len() <= 1 {
        return Ok(items);
    }
    let mut right = items;
    let left = right.drain(..right.len() / 2).collect();
    let left = merge_sort(left, swap)?;
    let right = merge_sort(right, swap)?;
    let mut out = Vec::with_capacity(left.len() + right.len());
    let (mut i, mut j) = (0, 0);
    while i < left.len() && j < right.len() {
        if swap(&left[i], &right[j])? {
            out.push(right[j].clone());
            j += 1;
        } else {
            out.push(left[i].clone());
            i += 1;
        }
    }
    out.extend_from_slice(&left[i..]);
    out.extend_from_slice(&right[j..]);
    Ok(out)
}
