//! Balanced trees of associative operators, for the expression languages' `AND`/`OR` (and
//! `&&`/`||`) chains.
//!
//! A parser that folds a chain of N operands left to right builds a tree N levels deep, and
//! evaluating or dropping it recurses that deep: a long enough chain exhausts the stack.
//! Joining the operands pairwise instead gives the same meaning (the operators are
//! associative and evaluation has no side effects) at a depth of log2(N).

/// Joins `items` pairwise, level by level, into one balanced tree; `None` when empty.
pub fn balanced<T>(items: Vec<T>, mut join: impl FnMut(T, T) -> T) -> Option<T> {
    let mut level = items;
    while level.len() > 1 {
        let mut next = Vec::with_capacity(level.len().div_ceil(2));
        let mut items = level.into_iter();
        while let Some(a) = items.next() {
            next.push(match items.next() {
                Some(b) => join(a, b),
                None => a,
            });
        }
        level = next;
    }
    level.pop()
}

#[cfg(test)]
mod tests {
    use super::balanced;

    #[derive(Debug, PartialEq)]
    enum Tree {
        Leaf(u32),
        Join(Box<Tree>, Box<Tree>),
    }

    fn depth(t: &Tree) -> usize {
        match t {
            Tree::Leaf(_) => 1,
            Tree::Join(a, b) => 1 + depth(a).max(depth(b)),
        }
    }

    fn leaves(t: &Tree, out: &mut Vec<u32>) {
        match t {
            Tree::Leaf(n) => out.push(*n),
            Tree::Join(a, b) => {
                leaves(a, out);
                leaves(b, out);
            }
        }
    }

    #[test]
    fn chains_keep_their_order_at_logarithmic_depth() {
        let items = (0..20_000).map(Tree::Leaf).collect();
        let tree = balanced(items, |a, b| Tree::Join(Box::new(a), Box::new(b))).unwrap();
        assert_eq!(depth(&tree), 16);
        let mut order = Vec::new();
        leaves(&tree, &mut order);
        assert_eq!(order, (0..20_000).collect::<Vec<_>>());
        assert_eq!(balanced(Vec::<u32>::new(), |a, _| a), None);
    }
}
