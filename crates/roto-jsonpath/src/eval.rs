//! Evaluation of parsed paths over a document: steps over node lists, descendants walked
//! with an explicit stack, filters, Jayway's trailing functions, and a work budget.

use std::borrow::Cow;
use std::cmp::Ordering;

use serde_json::{Map, Value};

use crate::{
    steps_definite, Comparison, Filter, Function, Operand, Path, Selector, Slice, Step, MAX_WORK,
};

/// One evaluation over one document.
pub(crate) struct Walker<'a> {
    root: &'a Value,
    work: usize,
}

impl<'a> Walker<'a> {
    pub(crate) fn new(root: &'a Value) -> Walker<'a> {
        Walker { root, work: 0 }
    }

    /// Counts one unit of work; false once the budget is spent.
    fn charge(&mut self) -> bool {
        self.work += 1;
        self.work <= MAX_WORK
    }

    fn push(&mut self, out: &mut Vec<&'a Value>, node: &'a Value) {
        if self.charge() {
            out.push(node);
        }
    }

    /// The nodes `steps` reach from `start`.
    pub(crate) fn steps(&mut self, start: &'a Value, steps: &[Step]) -> Vec<&'a Value> {
        let mut current = vec![start];
        for step in steps {
            let mut next = Vec::new();
            for node in current {
                match step {
                    Step::Child(selector) => self.child(node, selector, &mut next),
                    Step::Descend(selector) => self.descend(node, selector, &mut next),
                }
            }
            current = next;
        }
        current
    }

    fn child(&mut self, node: &'a Value, selector: &Selector, out: &mut Vec<&'a Value>) {
        match (selector, node) {
            (Selector::Name(name), Value::Object(members)) => {
                if let Some(found) = members.get(name) {
                    self.push(out, found);
                }
            }
            (Selector::Names(names), Value::Object(members)) => {
                for found in names.iter().filter_map(|name| members.get(name)) {
                    self.push(out, found);
                }
            }
            (Selector::Index(index), Value::Array(items)) => self.index(items, *index, out),
            (Selector::Indexes(indexes), Value::Array(items)) => {
                for index in indexes {
                    self.index(items, *index, out);
                }
            }
            (Selector::Wildcard, Value::Object(members)) => {
                for found in members.values() {
                    self.push(out, found);
                }
            }
            (Selector::Wildcard, Value::Array(items)) => {
                for found in items {
                    self.push(out, found);
                }
            }
            (Selector::Slice(slice), Value::Array(items)) => {
                for at in slice_indexes(slice, items.len()) {
                    self.push(out, &items[at]);
                }
            }
            (Selector::Filter(filter), Value::Array(items)) => {
                for item in items {
                    if self.charge() && self.test(filter, item) {
                        out.push(item);
                    }
                }
            }
            (Selector::Filter(filter), Value::Object(_)) if self.test(filter, node) => {
                self.push(out, node);
            }
            _ => {}
        }
    }

    fn index(&mut self, items: &'a [Value], index: i64, out: &mut Vec<&'a Value>) {
        if let Some(found) = resolve_index(index, items.len()).and_then(|at| items.get(at)) {
            self.push(out, found);
        }
    }

    /// `..selector`: the selector applied at `node` and at every node under it, in
    /// pre-order as Jayway walks; a filter keeps the objects that pass it.
    fn descend(&mut self, node: &'a Value, selector: &Selector, out: &mut Vec<&'a Value>) {
        let mut stack = vec![node];
        while let Some(current) = stack.pop() {
            if !self.charge() {
                return;
            }
            match selector {
                Selector::Filter(filter) => {
                    if current.is_object() && self.test(filter, current) {
                        out.push(current);
                    }
                }
                _ => self.child(current, selector, out),
            }
            match current {
                Value::Object(members) => stack.extend(members.values().rev()),
                Value::Array(items) => stack.extend(items.iter().rev()),
                _ => {}
            }
        }
    }

    /// What Step Functions makes of `path` from `start` (see [`Path::evaluate`]).
    pub(crate) fn resolve(&mut self, path: &Path, start: &'a Value) -> Option<Cow<'a, Value>> {
        if let Some(function) = path.function {
            return self.apply(&path.steps, function, start).map(Cow::Owned);
        }
        if let Some((Step::Child(Selector::Names(names)), prefix)) = path.steps.split_last() {
            return self.merge(prefix, names, start).map(Cow::Owned);
        }
        let matches = self.steps(start, &path.steps);
        if path.is_definite() {
            matches.into_iter().next().map(Cow::Borrowed)
        } else {
            Some(Cow::Owned(Value::Array(self.copies(matches))))
        }
    }

    /// Copies of `nodes`, each node copied counting as work: copying stops where the budget
    /// does (the matches of `$..*` together hold the document many times over).
    fn copies(&mut self, nodes: Vec<&'a Value>) -> Vec<Value> {
        nodes
            .into_iter()
            .map_while(|node| self.copy(node))
            .collect()
    }

    fn copy(&mut self, node: &Value) -> Option<Value> {
        let mut stack = vec![node];
        while let Some(current) = stack.pop() {
            if !self.charge() {
                return None;
            }
            match current {
                Value::Object(members) => stack.extend(members.values()),
                Value::Array(items) => stack.extend(items),
                _ => {}
            }
        }
        Some(node.clone())
    }

    /// Jayway's leaf member union: each object reached by `prefix` cut down to `names`.
    fn merge(&mut self, prefix: &[Step], names: &[String], start: &'a Value) -> Option<Value> {
        let mut picked = Vec::new();
        for node in self.steps(start, prefix) {
            let Some(members) = node.as_object() else {
                continue;
            };
            let mut kept = Map::new();
            for name in names {
                if let Some(member) = members.get(name) {
                    kept.insert(name.clone(), self.copy(member)?);
                }
            }
            picked.push(Value::Object(kept));
        }
        if steps_definite(prefix) {
            picked.into_iter().next()
        } else {
            Some(Value::Array(picked))
        }
    }

    /// A trailing function. Jayway applies it to each match, except after a leading `..`,
    /// where it reads all the matches together (`$..price.sum()`, `$..book.length()`).
    fn apply(&mut self, steps: &[Step], function: Function, start: &'a Value) -> Option<Value> {
        let matches = self.steps(start, steps);
        if matches!(steps.first(), Some(Step::Descend(_))) {
            if function == Function::Length {
                let children = matches.iter().map(|node| children(node)).sum::<usize>();
                return Some(Value::from(children));
            }
            let all = Value::Array(self.copies(matches));
            return call(function, &all);
        }
        if steps_definite(steps) {
            matches.first().and_then(|node| call(function, node))
        } else {
            Some(Value::Array(
                matches
                    .into_iter()
                    .filter_map(|node| call(function, node))
                    .collect(),
            ))
        }
    }

    fn test(&mut self, filter: &Filter, current: &'a Value) -> bool {
        match filter {
            Filter::Or(terms) => terms.iter().any(|term| self.test(term, current)),
            Filter::And(terms) => terms.iter().all(|term| self.test(term, current)),
            Filter::Not(inner) => !self.test(inner, current),
            Filter::Exists(operand) => self.exists(operand, current),
            Filter::Compare(left, op, right) => {
                let left = self.operand(left, current);
                let right = self.operand(right, current);
                compare(left.as_deref(), *op, right.as_deref())
            }
            Filter::Matches(operand, pattern) => {
                let value = self.operand(operand, current);
                value
                    .as_deref()
                    .and_then(Value::as_str)
                    .is_some_and(|s| pattern.0.is_match(s))
            }
        }
    }

    /// `[?(@.isbn)]`: whether the path reaches anything (a literal: whether it is true).
    fn exists(&mut self, operand: &Operand, current: &'a Value) -> bool {
        let (path, start) = match operand {
            Operand::Current(path) => (path, current),
            Operand::Root(path) => (path, self.root),
            Operand::Literal(value) => return *value == Value::Bool(true),
        };
        if path.function.is_some() {
            return self.resolve(path, start).is_some();
        }
        !self.steps(start, &path.steps).is_empty()
    }

    fn operand<'x>(&mut self, operand: &'x Operand, current: &'a Value) -> Option<Cow<'x, Value>>
    where
        'a: 'x,
    {
        match operand {
            Operand::Current(path) => self.resolve(path, current),
            Operand::Root(path) => self.resolve(path, self.root),
            Operand::Literal(value) => Some(Cow::Borrowed(value)),
        }
    }
}

/// The position of `index` (negative: from the end) in an array of `len`.
pub(crate) fn resolve_index(index: i64, len: usize) -> Option<usize> {
    let at = if index < 0 {
        i64::try_from(len).ok()?.checked_add(index)?
    } else {
        index
    };
    usize::try_from(at).ok().filter(|at| *at < len)
}

/// The positions a slice picks from an array of `len`, as RFC 9535 reads slices (which for a
/// step of 1 is Jayway's reading).
fn slice_indexes(slice: &Slice, len: usize) -> Vec<usize> {
    let len = i64::try_from(len).unwrap_or(i64::MAX);
    let normal = |i: i64| if i >= 0 { i } else { len.saturating_add(i) };
    let step = slice.step.unwrap_or(1);
    let mut picked = Vec::new();
    if step > 0 {
        let lower = slice.start.map_or(0, normal).clamp(0, len);
        let upper = slice.end.map_or(len, normal).clamp(0, len);
        let mut i = lower;
        while i < upper {
            picked.push(i);
            i = i.saturating_add(step);
        }
    } else {
        let upper = slice.start.map_or(len - 1, normal).clamp(-1, len - 1);
        let lower = slice.end.map_or(-1, normal).clamp(-1, len - 1);
        let mut i = upper;
        while lower < i {
            picked.push(i);
            i = i.saturating_add(step);
        }
    }
    picked
        .into_iter()
        .filter_map(|i| usize::try_from(i).ok())
        .collect()
}

/// How many members or items a node has.
fn children(node: &Value) -> usize {
    match node {
        Value::Object(members) => members.len(),
        Value::Array(items) => items.len(),
        _ => 0,
    }
}

/// A function applied to one value, `None` where Jayway has no result.
fn call(function: Function, value: &Value) -> Option<Value> {
    match function {
        Function::Length => match value {
            Value::String(s) => Some(Value::from(s.chars().count())),
            Value::Object(_) | Value::Array(_) => Some(Value::from(children(value))),
            _ => None,
        },
        Function::Keys => value
            .as_object()
            .map(|members| members.keys().cloned().map(Value::String).collect()),
        Function::First => value.as_array()?.first().cloned(),
        Function::Last => value.as_array()?.last().cloned(),
        Function::Min | Function::Max | Function::Avg | Function::Sum => {
            aggregate(function, value.as_array()?)
        }
    }
}

/// Jayway's numeric aggregations over the numbers of an array (none when it has none).
fn aggregate(function: Function, items: &[Value]) -> Option<Value> {
    let numbers: Vec<f64> = items.iter().filter_map(Value::as_f64).collect();
    if numbers.is_empty() {
        return None;
    }
    let sum: f64 = numbers.iter().sum();
    let result = match function {
        Function::Min => numbers.iter().copied().fold(f64::INFINITY, f64::min),
        Function::Max => numbers.iter().copied().fold(f64::NEG_INFINITY, f64::max),
        Function::Avg => sum / numbers.len() as f64,
        _ => sum,
    };
    serde_json::Number::from_f64(result).map(Value::Number)
}

/// A filter comparison: numbers by value, strings in order, anything else only for
/// (in)equality; a missing side equals nothing.
fn compare(left: Option<&Value>, op: Comparison, right: Option<&Value>) -> bool {
    match op {
        Comparison::Eq => equal(left, right),
        Comparison::Ne => !equal(left, right),
        Comparison::In => member(left, right),
        Comparison::Nin => !member(left, right),
        Comparison::SubsetOf | Comparison::AnyOf | Comparison::NoneOf => {
            let (Some(Value::Array(items)), Some(Value::Array(_))) = (left, right) else {
                return false;
            };
            let mut found = items.iter().map(|item| member(Some(item), right));
            match op {
                Comparison::SubsetOf => found.all(|f| f),
                Comparison::AnyOf => found.any(|f| f),
                _ => !found.any(|f| f),
            }
        }
        Comparison::Size => {
            let size = match left {
                Some(Value::Array(items)) => items.len(),
                Some(Value::String(s)) => s.chars().count(),
                _ => return false,
            };
            right.and_then(Value::as_f64) == Some(size as f64)
        }
        Comparison::Empty => {
            let empty = match left {
                Some(Value::Array(items)) => items.is_empty(),
                Some(Value::String(s)) => s.is_empty(),
                _ => return false,
            };
            right.and_then(Value::as_bool) == Some(empty)
        }
        _ => {
            let ordering = match (left, right) {
                (Some(Value::Number(a)), Some(Value::Number(b))) => {
                    a.as_f64().partial_cmp(&b.as_f64())
                }
                (Some(Value::String(a)), Some(Value::String(b))) => Some(a.cmp(b)),
                _ => None,
            };
            ordering.is_some_and(|ordering| match op {
                Comparison::Lt => ordering == Ordering::Less,
                Comparison::Le => ordering != Ordering::Greater,
                Comparison::Gt => ordering == Ordering::Greater,
                _ => ordering != Ordering::Less,
            })
        }
    }
}

/// Whether `left` is an item of the array `right`.
fn member(left: Option<&Value>, right: Option<&Value>) -> bool {
    match right {
        Some(Value::Array(items)) => items.iter().any(|item| equal(left, Some(item))),
        _ => false,
    }
}

fn equal(left: Option<&Value>, right: Option<&Value>) -> bool {
    match (left, right) {
        (Some(Value::Number(a)), Some(Value::Number(b))) => a.as_f64() == b.as_f64(),
        (Some(a), Some(b)) => a == b,
        _ => false,
    }
}
