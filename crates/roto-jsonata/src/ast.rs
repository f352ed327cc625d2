//! The syntax tree: what the parser builds, and (after `process`) what the evaluator walks.
//! The shape follows the reference implementation's processed tree: location paths are lists
//! of steps, predicates on a step are its stages, and steps carry the tuple annotations that
//! focus (`@`), index (`#`) and parent (`%`) bindings need.

use std::sync::Arc;

use crate::signature::Signature;

/// A node of the tree with the annotations the processed tree puts on it.
#[derive(Debug, Clone)]
pub(crate) struct Node {
    pub kind: Kind,
    /// Offset just past the token that made the node.
    pub pos: usize,
    /// `[]` after the step: keep singleton arrays.
    pub keep_array: bool,
    /// Filters on a node outside a path.
    pub predicate: Vec<Stage>,
    /// Filters and index bindings on a path step.
    pub stages: Vec<Stage>,
    /// `{...}` grouping on the node.
    pub group: Option<Box<Group>>,
    /// `@$name` on a step.
    pub focus: Option<String>,
    /// `#$name` on a step.
    pub index: Option<String>,
    /// The step's results are bindings (a tuple stream) rather than plain values.
    pub tuple: bool,
    /// The label under which this step's input is kept for a `%` that refers to it.
    pub ancestor: Option<Slot>,
    /// `%` references below this node still looking for their step.
    pub seeking_parent: Vec<Slot>,
    /// An array constructor first or last in a path: it does not flatten.
    pub consarray: bool,
    /// A path with a `[]` step.
    pub keep_singleton_array: bool,
}

/// A parent reference's slot: its index in the parse's slot table.
pub(crate) type Slot = usize;

/// A stage of a path step.
#[derive(Debug, Clone)]
pub(crate) enum Stage {
    Filter(Node),
    Index(String),
}

/// A group-by or object constructor: key and value expressions.
#[derive(Debug, Clone)]
pub(crate) struct Group {
    pub pairs: Vec<(Node, Node)>,
    pub pos: usize,
}

/// One term of an order-by clause.
#[derive(Debug, Clone)]
pub(crate) struct SortTerm {
    pub descending: bool,
    pub expr: Node,
}

/// A lambda's definition, shared by every function value made from it.
#[derive(Debug, Clone)]
pub(crate) struct Lambda {
    pub params: Vec<String>,
    pub signature: Option<Signature>,
    pub body: Node,
    /// A tail call wrapped for the trampoline.
    pub thunk: bool,
}

/// A transform `| pattern | update, delete |`.
#[derive(Debug, Clone)]
pub(crate) struct Transform {
    pub pattern: Node,
    pub update: Node,
    pub delete: Option<Node>,
}

/// The operators evaluated on both operands' values.
#[derive(Debug, Clone, Copy, PartialEq)]
pub(crate) enum BinOp {
    Add,
    Sub,
    Mul,
    Div,
    Mod,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    Concat,
    Range,
    In,
    And,
    Or,
}

impl BinOp {
    pub(crate) fn from_token(op: &str) -> Option<BinOp> {
        Some(match op {
            "+" => BinOp::Add,
            "-" => BinOp::Sub,
            "*" => BinOp::Mul,
            "/" => BinOp::Div,
            "%" => BinOp::Mod,
            "=" => BinOp::Eq,
            "!=" => BinOp::Ne,
            "<" => BinOp::Lt,
            "<=" => BinOp::Le,
            ">" => BinOp::Gt,
            ">=" => BinOp::Ge,
            "&" => BinOp::Concat,
            ".." => BinOp::Range,
            "in" => BinOp::In,
            "and" => BinOp::And,
            "or" => BinOp::Or,
            _ => return None,
        })
    }

    pub(crate) fn token(self) -> &'static str {
        match self {
            BinOp::Add => "+",
            BinOp::Sub => "-",
            BinOp::Mul => "*",
            BinOp::Div => "/",
            BinOp::Mod => "%",
            BinOp::Eq => "=",
            BinOp::Ne => "!=",
            BinOp::Lt => "<",
            BinOp::Le => "<=",
            BinOp::Gt => ">",
            BinOp::Ge => ">=",
            BinOp::Concat => "&",
            BinOp::Range => "..",
            BinOp::In => "in",
            BinOp::And => "and",
            BinOp::Or => "or",
        }
    }
}

/// What a node is.
#[derive(Debug, Clone)]
pub(crate) enum Kind {
    // Parsed and kept.
    Name(String),
    Str(String),
    Num(f64),
    Bool(bool),
    Null,
    Regex(Arc<crate::regex::Pattern>),
    Variable(String),
    Wildcard,
    Descendant,
    Binary(BinOp, Box<Node>, Box<Node>),
    Neg(Box<Node>),
    Array(Vec<Node>),
    Object(Vec<(Node, Node)>),
    Condition(Box<Node>, Box<Node>, Option<Box<Node>>),
    Block(Vec<Node>),
    Function(Box<Node>, Vec<Node>),
    Partial(Box<Node>, Vec<Node>),
    Placeholder,
    Lambda(Arc<Lambda>),
    Transform(Arc<Transform>),
    // Parsed, then folded into paths and steps by `process`.
    Dot(Box<Node>, Box<Node>),
    Filter(Box<Node>, Box<Node>),
    GroupBy(Box<Node>, Vec<(Node, Node)>),
    OrderBy(Box<Node>, Vec<SortTerm>),
    Focus(Box<Node>, String),
    IndexBind(Box<Node>, String),
    /// `and`, `or`, `in` where an operand is due: a name.
    Keyword(&'static str),
    /// `%` before processing gives it a slot.
    ParentToken,
    // Made by `process`.
    Path(Vec<Node>),
    Parent(Slot),
    Sort(Vec<SortTerm>),
    Bind(String, Box<Node>),
    Apply(Box<Node>, Box<Node>),
}

impl Node {
    pub(crate) fn new(kind: Kind, pos: usize) -> Node {
        Node {
            kind,
            pos,
            keep_array: false,
            predicate: Vec::new(),
            stages: Vec::new(),
            group: None,
            focus: None,
            index: None,
            tuple: false,
            ancestor: None,
            seeking_parent: Vec::new(),
            consarray: false,
            keep_singleton_array: false,
        }
    }

    /// The reference implementation's name for the node's type, as errors report it.
    pub(crate) fn type_name(&self) -> &'static str {
        match &self.kind {
            Kind::Name(_) => "name",
            Kind::Str(_) => "string",
            Kind::Num(_) => "number",
            Kind::Bool(_) | Kind::Null => "value",
            Kind::Regex(_) => "regex",
            Kind::Variable(_) => "variable",
            Kind::Wildcard => "wildcard",
            Kind::Descendant => "descendant",
            Kind::Neg(_) | Kind::Array(_) | Kind::Object(_) => "unary",
            Kind::Condition(..) => "condition",
            Kind::Block(_) => "block",
            Kind::Function(..) => "function",
            Kind::Partial(..) => "partial",
            Kind::Placeholder | Kind::Keyword(_) => "operator",
            Kind::Lambda(_) => "lambda",
            Kind::Transform(_) => "transform",
            Kind::Path(_) => "path",
            Kind::Parent(_) | Kind::ParentToken => "parent",
            Kind::Sort(_) => "sort",
            Kind::Bind(..) => "bind",
            Kind::Apply(..) => "apply",
            Kind::Binary(..)
            | Kind::Dot(..)
            | Kind::Filter(..)
            | Kind::GroupBy(..)
            | Kind::OrderBy(..)
            | Kind::Focus(..)
            | Kind::IndexBind(..) => "binary",
        }
    }
}
