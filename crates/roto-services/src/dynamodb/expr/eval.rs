//! Running parsed expressions over items: conditions to booleans, updates to new items.
//!
//! Comparisons follow DynamoDB: `<`, `<=`, `>`, `>=` and `BETWEEN` compare numbers,
//! strings and binaries of one type (anything else is false); `=` and `<>` compare any
//! two values, sets as sets; a missing attribute equals nothing. Numbers compare and add
//! exactly through [`Number`](super::super::number::Number). An update reads every
//! operand from the item as it was before the update, as DynamoDB does.
//!
//! `AND`/`OR` chains, runs of `NOT` and arithmetic chains are walked in loops, so the
//! evaluator recurses only as deep as the expression's parentheses and function calls,
//! which the parser bounds.

use std::borrow::Cow;
use std::cmp::Ordering;

use roto_core::{AwsError, AwsResult};

use super::super::attr::{Attr, Item};
use super::super::number::NumberError;
use super::super::projection::{Path, Step};
use super::parse::{Comparator, Condition, Operand, Update};

/// The value at `path` in `item`.
pub fn resolve<'a>(item: &'a Item, path: &[Step]) -> Option<&'a Attr> {
    let (first, rest) = path.split_first()?;
    let Step::Name(name) = first else {
        return None;
    };
    let mut value = item.get(name)?;
    for step in rest {
        value = match (step, value) {
            (Step::Name(n), Attr::M(m)) => m.get(n)?,
            (Step::Index(i), Attr::L(l)) => l.get(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

/// The order of two scalars of one type (`N`, `S` or `B`); `None` otherwise.
pub fn compare(a: &Attr, b: &Attr) -> Option<Ordering> {
    match (a, b) {
        (Attr::N(x), Attr::N(y)) => Some(x.cmp(y)),
        (Attr::S(x), Attr::S(y)) => Some(x.as_bytes().cmp(y.as_bytes())),
        (Attr::B(x), Attr::B(y)) => Some(x.cmp(y)),
        _ => None,
    }
}

fn same_members<T: Ord + Clone>(a: &[T], b: &[T]) -> bool {
    let sorted = |s: &[T]| {
        let mut v = s.to_vec();
        v.sort();
        v
    };
    a.len() == b.len() && sorted(a) == sorted(b)
}

/// DynamoDB equality: structural, with sets compared regardless of order.
pub fn equal(a: &Attr, b: &Attr) -> bool {
    match (a, b) {
        (Attr::Ss(x), Attr::Ss(y)) => same_members(x, y),
        (Attr::Ns(x), Attr::Ns(y)) => same_members(x, y),
        (Attr::Bs(x), Attr::Bs(y)) => same_members(x, y),
        (Attr::L(x), Attr::L(y)) => x.len() == y.len() && x.iter().zip(y).all(|(p, q)| equal(p, q)),
        (Attr::M(x), Attr::M(y)) => {
            x.len() == y.len() && x.iter().all(|(k, v)| y.get(k).is_some_and(|w| equal(v, w)))
        }
        _ => a == b,
    }
}

/// The number of elements (or characters, or bytes) `size()` reports.
fn size_of(attr: &Attr) -> Option<usize> {
    Some(match attr {
        Attr::S(s) => s.chars().count(),
        Attr::B(b) => b.len(),
        Attr::Ss(v) => v.len(),
        Attr::Ns(v) => v.len(),
        Attr::Bs(v) => v.len(),
        Attr::L(v) => v.len(),
        Attr::M(m) => m.len(),
        Attr::N(_) | Attr::Null | Attr::Bool(_) => return None,
    })
}

fn number_attr(n: usize) -> Attr {
    Attr::N(super::super::number::Number::from_usize(n))
}

/// A condition operand's value.
fn operand<'a>(op: &'a Operand, item: &'a Item) -> Option<Cow<'a, Attr>> {
    match op {
        Operand::Path(p) => resolve(item, p).map(Cow::Borrowed),
        Operand::Value(v) => Some(Cow::Borrowed(v)),
        Operand::Size(p) => resolve(item, p)
            .and_then(size_of)
            .map(|n| Cow::Owned(number_attr(n))),
        // Update-only operands never reach a condition (the parser refuses them).
        _ => None,
    }
}

fn contains(haystack: &Attr, needle: &Attr) -> bool {
    match (haystack, needle) {
        (Attr::S(s), Attr::S(n)) => s.contains(n.as_str()),
        (Attr::B(b), Attr::B(n)) => n.is_empty() || b.windows(n.len()).any(|w| w == n.as_slice()),
        (Attr::Ss(s), Attr::S(n)) => s.contains(n),
        (Attr::Ns(s), Attr::N(n)) => s.contains(n),
        (Attr::Bs(s), Attr::B(n)) => s.contains(n),
        (Attr::L(l), n) => l.iter().any(|v| equal(v, n)),
        _ => false,
    }
}

/// Whether `item` (absent: an empty item) satisfies `condition`.
pub fn matches(condition: &Condition, item: &Item) -> bool {
    match condition {
        Condition::Or(..) | Condition::And(..) => chain(condition, item),
        Condition::Not(_) => {
            let (mut inner, mut negated) = (condition, false);
            while let Condition::Not(a) = inner {
                (inner, negated) = (a, !negated);
            }
            matches(inner, item) != negated
        }
        leaf => predicate(leaf, item),
    }
}

/// An `AND` or `OR` chain, its operands gathered down the left spine the parser builds.
fn chain(condition: &Condition, item: &Item) -> bool {
    let and = matches!(condition, Condition::And(..));
    let mut rights: Vec<&Condition> = Vec::new();
    let mut left = condition;
    loop {
        match left {
            Condition::And(a, b) if and => {
                rights.push(b);
                left = a;
            }
            Condition::Or(a, b) if !and => {
                rights.push(b);
                left = a;
            }
            _ => break,
        }
    }
    let mut operands = std::iter::once(left).chain(rights.into_iter().rev());
    if and {
        operands.all(|c| matches(c, item))
    } else {
        operands.any(|c| matches(c, item))
    }
}

/// Whether `item` satisfies a comparison or function condition.
fn predicate(condition: &Condition, item: &Item) -> bool {
    match condition {
        Condition::Or(..) | Condition::And(..) | Condition::Not(_) => matches(condition, item),
        Condition::Compare(a, op, b) => {
            let (a, b) = (operand(a, item), operand(b, item));
            match op {
                Comparator::Eq => matches!((a, b), (Some(a), Some(b)) if equal(&a, &b)),
                Comparator::Ne => !matches!((a, b), (Some(a), Some(b)) if equal(&a, &b)),
                _ => {
                    let Some(order) = a.zip(b).and_then(|(a, b)| compare(&a, &b)) else {
                        return false;
                    };
                    match op {
                        Comparator::Lt => order == Ordering::Less,
                        Comparator::Le => order != Ordering::Greater,
                        Comparator::Gt => order == Ordering::Greater,
                        _ => order != Ordering::Less,
                    }
                }
            }
        }
        Condition::Between(x, low, high) => {
            let (Some(x), Some(low), Some(high)) =
                (operand(x, item), operand(low, item), operand(high, item))
            else {
                return false;
            };
            compare(&x, &low).is_some_and(|o| o != Ordering::Less)
                && compare(&x, &high).is_some_and(|o| o != Ordering::Greater)
        }
        Condition::In(x, list) => operand(x, item).is_some_and(|x| {
            list.iter()
                .any(|candidate| operand(candidate, item).is_some_and(|c| equal(&x, &c)))
        }),
        Condition::Exists(p) => resolve(item, p).is_some(),
        Condition::NotExists(p) => resolve(item, p).is_none(),
        Condition::Type(p, kind) => resolve(item, p).is_some_and(|v| v.tag() == kind),
        Condition::BeginsWith(a, b) => match (operand(a, item), operand(b, item)) {
            (Some(a), Some(b)) => match (a.as_ref(), b.as_ref()) {
                (Attr::S(s), Attr::S(p)) => s.starts_with(p.as_str()),
                (Attr::B(s), Attr::B(p)) => s.starts_with(p),
                _ => false,
            },
            _ => false,
        },
        Condition::Contains(a, b) => match (operand(a, item), operand(b, item)) {
            (Some(a), Some(b)) => contains(&a, &b),
            _ => false,
        },
    }
}

// -------------------------------------------------------------------- updates

fn missing_operand() -> AwsError {
    AwsError::validation(
        "The provided expression refers to an attribute that does not exist in the item",
    )
}

fn wrong_type() -> AwsError {
    AwsError::validation("An operand in the update expression has an incorrect data type")
}

fn invalid_path() -> AwsError {
    AwsError::validation(
        "The document path provided in the update expression is invalid for update",
    )
}

fn number_error(e: NumberError) -> AwsError {
    AwsError::validation(e.message(""))
}

/// The value a `SET` right-hand side computes from the old item.
fn update_value(op: &Operand, item: &Item) -> AwsResult<Attr> {
    match op {
        Operand::Path(p) => resolve(item, p).cloned().ok_or_else(missing_operand),
        Operand::Value(v) => Ok(v.clone()),
        Operand::IfNotExists(p, fallback) => match resolve(item, p) {
            Some(v) => Ok(v.clone()),
            None => update_value(fallback, item),
        },
        Operand::ListAppend(a, b) => match (update_value(a, item)?, update_value(b, item)?) {
            (Attr::L(mut a), Attr::L(b)) => {
                a.extend(b);
                Ok(Attr::L(a))
            }
            _ => Err(wrong_type()),
        },
        Operand::Arithmetic(..) => arithmetic(op, item),
        Operand::Size(_) => Err(wrong_type()),
    }
}

/// An arithmetic chain, its terms gathered down the left spine the parser builds.
fn arithmetic(op: &Operand, item: &Item) -> AwsResult<Attr> {
    let mut terms = Vec::new();
    let mut left = op;
    while let Operand::Arithmetic(a, plus, b) = left {
        terms.push((*plus, &**b));
        left = a;
    }
    let mut total = update_value(left, item)?;
    for (plus, term) in terms.into_iter().rev() {
        total = match (total, update_value(term, item)?) {
            (Attr::N(a), Attr::N(b)) => {
                let result = if plus { a.add(&b) } else { a.sub(&b) };
                Attr::N(result.map_err(number_error)?)
            }
            _ => return Err(wrong_type()),
        };
    }
    Ok(total)
}

/// The container holding the last step of `path`, if it exists.
fn parent_mut<'a>(item: &'a mut Item, path: &[Step]) -> Option<&'a mut Attr> {
    let (Step::Name(first), rest) = path.split_first()? else {
        return None;
    };
    let mut value = item.get_mut(first)?;
    for step in rest.iter().take(rest.len().saturating_sub(1)) {
        value = match (step, value) {
            (Step::Name(n), Attr::M(m)) => m.get_mut(n)?,
            (Step::Index(i), Attr::L(l)) => l.get_mut(*i)?,
            _ => return None,
        };
    }
    Some(value)
}

fn set_path(item: &mut Item, path: &Path, value: Attr) -> AwsResult<()> {
    if let [Step::Name(name)] = path.as_slice() {
        item.insert(name.clone(), value);
        return Ok(());
    }
    let last = path.last().ok_or_else(invalid_path)?;
    match (parent_mut(item, path).ok_or_else(invalid_path)?, last) {
        (Attr::M(m), Step::Name(n)) => {
            m.insert(n.clone(), value);
        }
        (Attr::L(l), Step::Index(i)) => match l.get_mut(*i) {
            Some(slot) => *slot = value,
            None => l.push(value),
        },
        _ => return Err(invalid_path()),
    }
    Ok(())
}

fn remove_path(item: &mut Item, path: &Path) {
    if let [Step::Name(name)] = path.as_slice() {
        item.remove(name);
        return;
    }
    match (parent_mut(item, path), path.last()) {
        (Some(Attr::M(m)), Some(Step::Name(n))) => {
            m.remove(n);
        }
        (Some(Attr::L(l)), Some(Step::Index(i))) if *i < l.len() => {
            l.remove(*i);
        }
        _ => {}
    }
}

fn union<T: PartialEq + Clone>(set: &mut Vec<T>, more: &[T]) {
    for m in more {
        if !set.contains(m) {
            set.push(m.clone());
        }
    }
}

fn difference<T: PartialEq>(set: &mut Vec<T>, less: &[T]) {
    set.retain(|m| !less.contains(m));
}

fn added(old: Option<&Attr>, value: &Attr) -> AwsResult<Attr> {
    let Some(old) = old else {
        return Ok(value.clone());
    };
    let mut out = old.clone();
    match (&mut out, value) {
        (Attr::N(a), Attr::N(b)) => *a = a.add(b).map_err(number_error)?,
        (Attr::Ss(a), Attr::Ss(b)) => union(a, b),
        (Attr::Ns(a), Attr::Ns(b)) => union(a, b),
        (Attr::Bs(a), Attr::Bs(b)) => union(a, b),
        _ => return Err(wrong_type()),
    }
    Ok(out)
}

/// The set left after `DELETE`; `None` when it is empty (the attribute goes).
fn deleted(old: &Attr, value: &Attr) -> AwsResult<Option<Attr>> {
    let mut out = old.clone();
    let empty = match (&mut out, value) {
        (Attr::Ss(a), Attr::Ss(b)) => {
            difference(a, b);
            a.is_empty()
        }
        (Attr::Ns(a), Attr::Ns(b)) => {
            difference(a, b);
            a.is_empty()
        }
        (Attr::Bs(a), Attr::Bs(b)) => {
            difference(a, b);
            a.is_empty()
        }
        _ => return Err(wrong_type()),
    };
    Ok((!empty).then_some(out))
}

/// The item after `update`, every operand read from `old`.
pub fn apply(update: &Update, old: &Item) -> AwsResult<Item> {
    let mut new = old.clone();
    let values = update
        .set
        .iter()
        .map(|(_, op)| update_value(op, old))
        .collect::<AwsResult<Vec<Attr>>>()?;
    for ((path, _), value) in update.set.iter().zip(values) {
        set_path(&mut new, path, value)?;
    }
    for (path, value) in &update.add {
        let sum = added(resolve(old, path), value)?;
        set_path(&mut new, path, sum)?;
    }
    for (path, value) in &update.delete {
        let Some(current) = resolve(old, path) else {
            continue;
        };
        match deleted(current, value)? {
            Some(rest) => set_path(&mut new, path, rest)?,
            None => remove_path(&mut new, path),
        }
    }
    // Removing list elements from the highest index down keeps the others in place.
    let mut removals: Vec<&Path> = update.remove.iter().collect();
    removals.sort_by(|a, b| b.cmp(a));
    for path in removals {
        remove_path(&mut new, path);
    }
    Ok(new)
}
