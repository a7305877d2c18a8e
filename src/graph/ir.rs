//! The graph IR: a traced function as a list of nodes in program order over symbolic sizes.
//!
//! Nodes are stored flat and named by [`NodeId`] (printed `%3`); a node's outputs are
//! [`ValueRef`]s (`%3`, or `%3.1` for the second output of a multi-output node). Sizes are
//! [`Dim`]s whose symbols live in the graph's [`ShapeEnv`]. Symbols are bound when the graph
//! runs: backed symbols from the inputs ([`Graph::backed`]), unbacked ones by the node that
//! produces them ([`Node::binds`]). Side effects (asserts, device asserts, prints, branches
//! containing them) are nodes too, so passes see and keep them. The invariants are listed and
//! checked in `graph::verify`.

use std::fmt;

use super::op::{BinaryOp, IndexSpec, Op};
use super::semantics::Fault;
use super::shape::{Dim, Meta};
use crate::diag::{Code, Frame};
use crate::dtype::DType;
use crate::source::Span;
use crate::sym::{ExprId, ShapeEnv, SymbolId};

/// A node of a graph, in program order.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct NodeId(pub u32);

impl NodeId {
    pub fn index(self) -> usize {
        self.0 as usize
    }
}

impl fmt::Display for NodeId {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "%{}", self.0)
    }
}

/// One output of a node.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash, PartialOrd, Ord)]
pub struct ValueRef {
    pub node: NodeId,
    pub output: u32,
}

impl ValueRef {
    pub fn first(node: NodeId) -> ValueRef {
        ValueRef { node, output: 0 }
    }
}

/// An operand of a node: a tensor value, or a host number (possibly a symbolic int).
/// Floats compare by their bits, so `0.0` and `-0.0` stay different operands (common
/// subexpressions must not merge `x * 0.0` with `x * -0.0`) and a graph equals its parse.
#[derive(Clone, Debug)]
pub enum Arg {
    Tensor(ValueRef),
    Int(Dim),
    Float(f64),
    Bool(bool),
}

impl PartialEq for Arg {
    fn eq(&self, other: &Arg) -> bool {
        match (self, other) {
            (Arg::Tensor(a), Arg::Tensor(b)) => a == b,
            (Arg::Int(a), Arg::Int(b)) => a == b,
            (Arg::Float(a), Arg::Float(b)) => a.to_bits() == b.to_bits(),
            (Arg::Bool(a), Arg::Bool(b)) => a == b,
            _ => false,
        }
    }
}

impl Eq for Arg {}

impl std::hash::Hash for Arg {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        std::mem::discriminant(self).hash(state);
        match self {
            Arg::Tensor(value) => value.hash(state),
            Arg::Int(dim) => dim.hash(state),
            Arg::Float(value) => value.to_bits().hash(state),
            Arg::Bool(value) => value.hash(state),
        }
    }
}

/// A piece of a message or printed line, formatted when the graph runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Part {
    Text(String),
    Int(Dim),
    Bool(ExprId),
    /// The element of a one-element tensor, printed as a host value (`item()` of an `f32`).
    Scalar(ValueRef),
    Tensor(ValueRef),
}

/// A message or printed line: parts concatenated.
#[derive(Clone, Debug, Default, PartialEq)]
pub struct Template(pub Vec<Part>);

impl Template {
    pub fn text(text: impl Into<String>) -> Template {
        Template(vec![Part::Text(text.into())])
    }
}

/// Where a value of the traced function's inputs comes from: the argument at `path[0]`,
/// then list items `path[1..]`.
pub type ArgumentPath = Vec<usize>;

/// How a backed symbol gets its value when the graph runs.
#[derive(Clone, Debug, PartialEq, Eq)]
pub enum InputSource {
    /// A size of a tensor argument.
    TensorDim { path: ArgumentPath, dim: usize },
    /// An int argument.
    Int { path: ArgumentPath },
}

/// How an unbacked symbol gets its value from the node that binds it.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum BindSource {
    /// A size of one of the node's outputs.
    Dim { output: usize, dim: usize },
    /// The element of an `item` node.
    Element,
    /// The element of a one-element `i64` output: the count of kept elements a fused
    /// kernel writes.
    Value { output: usize },
}

#[derive(Clone, Debug, PartialEq)]
pub enum NodeKind {
    /// A tensor argument of the function.
    Input {
        path: ArgumentPath,
        name: String,
    },
    /// A tensor fixed at trace time (a global, or computed from constants), stored beside
    /// the graph at `index`.
    Constant {
        index: usize,
    },
    Op(Op),
    /// The element of a one-element tensor: binds a symbol for `i64` and `bool`, gives a
    /// one-element `f32` for `f32`.
    Item,
    /// A runtime assert on sizes and scalars: `check`, `check_size`, or an assumption a shape
    /// rule made on its general path. A failure reports `code` with the message: a check's
    /// `check-failed`, or the error eager code raises where the rule's assumption fails (a
    /// `shape-error` whose message shows the run's values).
    Assert {
        cond: ExprId,
        message: Template,
        code: Code,
    },
    /// A `check` on tensor data: argument 0 is a one-element `bool` tensor. A failure
    /// reports `code` with the message: `device-check-failed`; `check-failed` for a
    /// condition that was a host value in the user's code (`check x.sum().item() > 0.0`), as
    /// eagerly; or the error building the check's message raised while tracing (eager code
    /// builds it only when the check fails, and fails with that error).
    DeviceAssert {
        message: Template,
        code: Code,
        /// For `check all(...)`: how to name the first element that failed (see [`Located`]).
        located: Option<Located>,
    },
    /// `print` inside compiled code.
    Print {
        line: Template,
    },
    /// `cond(pred, then_fn, else_fn, args)` on a data-dependent predicate: argument 0 is the
    /// predicate, the others are the branches' arguments.
    Cond {
        then_branch: Box<Graph>,
        else_branch: Box<Graph>,
    },
}

/// How a failed `check all(P)` names its first failing element (`a[1] = -2.0`): `P` is
/// `op(args[1], args[2])` for a comparison `op`, or `args[1]` itself; `names` are how the
/// user wrote those arguments. Only a failing check computes `P` again, from these.
#[derive(Clone, Debug, PartialEq)]
pub struct Located {
    pub op: Option<BinaryOp>,
    pub names: Vec<String>,
}

impl NodeKind {
    /// Whether running the node can be observed apart from its outputs (it can fail with a
    /// check, print, or draw random numbers). Such nodes are never removed or merged.
    pub fn has_effects(&self) -> bool {
        match self {
            NodeKind::Assert { .. }
            | NodeKind::DeviceAssert { .. }
            | NodeKind::Print { .. }
            | NodeKind::Op(Op::Randn { .. }) => true,
            NodeKind::Cond {
                then_branch,
                else_branch,
            } => then_branch.has_effects() || else_branch.has_effects(),
            NodeKind::Input { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Op(_)
            | NodeKind::Item => false,
        }
    }

    pub fn is_assert(&self) -> bool {
        matches!(
            self,
            NodeKind::Assert { .. } | NodeKind::DeviceAssert { .. }
        )
    }
}

impl Node {
    /// Whether running the node can fail because of the values (not the sizes) it computes
    /// on: an index out of range, an integer division by zero or negative power, a negative
    /// repeat count, an extremum over an extent that may be empty, or a `cond` whose branch
    /// holds such a node. Such a node is never removed, even when nothing uses its result,
    /// so a compiled run fails where an eager one does.
    pub fn can_fail_on_data(&self) -> bool {
        let op = match &self.kind {
            NodeKind::Op(op) => op,
            NodeKind::Cond {
                then_branch,
                else_branch,
            } => {
                return [then_branch, else_branch]
                    .iter()
                    .any(|branch| branch.nodes.iter().any(Node::can_fail_on_data));
            }
            NodeKind::Input { .. }
            | NodeKind::Constant { .. }
            | NodeKind::Item
            | NodeKind::Assert { .. }
            | NodeKind::DeviceAssert { .. }
            | NodeKind::Print { .. } => return false,
        };
        let integer = self
            .outputs
            .first()
            .is_some_and(|meta| meta.dtype == DType::I64);
        match op {
            Op::Binary(op) => integer && Fault::of(*op).is_some(),
            Op::Reduce { op, .. } => op.needs_elements(),
            Op::Index { items } => items
                .iter()
                .any(|item| matches!(item, IndexSpec::Indices { .. })),
            Op::Fused(kernel) => kernel.is_fallible(),
            Op::IndexSelect { .. }
            | Op::Gather { .. }
            | Op::RepeatInterleave { .. }
            | Op::RepeatIndices => true,
            Op::Full { .. }
            | Op::Arange { .. }
            | Op::Randn { .. }
            | Op::Unary(_)
            | Op::Cast(_)
            | Op::Where
            | Op::Clamp { .. }
            | Op::Cumsum { .. }
            | Op::Diff { .. }
            | Op::Sort { .. }
            | Op::TopK { .. }
            | Op::Reshape { .. }
            | Op::Permute { .. }
            | Op::Squeeze { .. }
            | Op::Unsqueeze { .. }
            | Op::Expand { .. }
            | Op::Cat { .. }
            | Op::Stack { .. }
            | Op::Split { .. }
            | Op::Narrow { .. }
            | Op::Nonzero
            | Op::MaskedSelect
            | Op::Unique
            | Op::MatMul => false,
        }
    }
}

#[derive(Clone, Debug, PartialEq)]
pub struct Node {
    pub kind: NodeKind,
    pub args: Vec<Arg>,
    pub outputs: Vec<Meta>,
    /// Unbacked symbols this node defines when it runs, and where each is read from.
    pub binds: Vec<(SymbolId, BindSource)>,
    pub span: Span,
    /// The calls (innermost first) that led to this node, for errors raised when it runs.
    pub trace: Vec<Frame>,
}

/// What a traced function returns, rebuilt from graph values when it runs.
#[derive(Clone, Debug, PartialEq)]
pub enum Output {
    None,
    Bool(bool),
    SymBool(ExprId),
    Int(Dim),
    Float(f64),
    /// A host float computed when the graph runs (a one-element `f32`).
    Scalar(ValueRef),
    Str(String),
    Template(Template),
    Tensor(ValueRef),
    List(Vec<Output>),
}

impl Output {
    /// Calls `visit` on every value the output refers to.
    pub fn visit_values(&self, visit: &mut impl FnMut(ValueRef)) {
        match self {
            Output::Scalar(value) | Output::Tensor(value) => visit(*value),
            Output::Template(template) => {
                for part in &template.0 {
                    if let Part::Scalar(value) | Part::Tensor(value) = part {
                        visit(*value);
                    }
                }
            }
            Output::List(items) => items.iter().for_each(|item| item.visit_values(visit)),
            Output::None
            | Output::Bool(_)
            | Output::SymBool(_)
            | Output::Int(_)
            | Output::Float(_)
            | Output::Str(_) => {}
        }
    }
}

/// A traced function.
#[derive(Clone, Debug)]
pub struct Graph {
    pub name: String,
    pub nodes: Vec<Node>,
    pub output: Output,
    /// Where the traced function returns: an error computing a returned size or condition
    /// when the graph runs points here (not printed; a parsed graph has the default).
    pub output_span: Span,
    /// The symbols, facts and guards of the trace.
    pub env: ShapeEnv,
    /// How each backed symbol is read from the arguments.
    pub backed: Vec<(SymbolId, InputSource)>,
    /// How many constants (`NodeKind::Constant`) the graph refers to.
    pub constants: usize,
}

impl PartialEq for Graph {
    fn eq(&self, other: &Graph) -> bool {
        self.name == other.name
            && self.nodes == other.nodes
            && self.output == other.output
            && self.backed == other.backed
    }
}

impl Graph {
    pub fn new(name: impl Into<String>, env: ShapeEnv) -> Graph {
        Graph {
            name: name.into(),
            nodes: Vec::new(),
            output: Output::None,
            output_span: Span::default(),
            env,
            backed: Vec::new(),
            constants: 0,
        }
    }

    pub fn node(&self, id: NodeId) -> &Node {
        &self.nodes[id.index()]
    }

    /// The type of a value.
    pub fn meta(&self, value: ValueRef) -> &Meta {
        &self.node(value.node).outputs[value.output as usize]
    }

    /// Appends a node and returns its id.
    pub fn push(&mut self, node: Node) -> NodeId {
        let id = NodeId(u32::try_from(self.nodes.len()).expect("fewer than 2^32 nodes"));
        self.nodes.push(node);
        id
    }

    pub fn ids(&self) -> impl Iterator<Item = NodeId> + use<> {
        (0..self.nodes.len() as u32).map(NodeId)
    }

    /// Whether any node (or branch) has effects beyond its outputs.
    pub fn has_effects(&self) -> bool {
        self.nodes.iter().any(|node| node.kind.has_effects())
    }

    /// How many asserts (runtime and device) the graph and its branches hold.
    pub fn assert_count(&self) -> usize {
        self.nodes
            .iter()
            .map(|node| match &node.kind {
                NodeKind::Cond {
                    then_branch,
                    else_branch,
                } => then_branch.assert_count() + else_branch.assert_count(),
                kind => usize::from(kind.is_assert()),
            })
            .sum()
    }
}

/// The tensor values an argument list refers to.
pub fn tensor_args(args: &[Arg]) -> impl Iterator<Item = ValueRef> + '_ {
    args.iter().filter_map(|arg| match arg {
        Arg::Tensor(value) => Some(*value),
        _ => None,
    })
}
