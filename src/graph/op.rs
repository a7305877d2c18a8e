//! Tensor operations: one description per builtin, shared by eager execution, tracing and the
//! compiled executors.
//!
//! An [`Op`] carries its static attributes (dims, dtypes, sizes as [`Dim`]); its operands are
//! tensors or scalars passed alongside. The shape rules in `graph::shape` canonicalise an op
//! (resolve `-1`, wrap negative starts, expand `...`) before any backend sees it.

use std::fmt;
use std::sync::Arc;

use super::fused::FusedKernel;
use super::shape::Dim;
use crate::dtype::DType;

/// Elementwise binary operations, with PyTorch's promotion (see `graph::shape::elementwise`).
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum BinaryOp {
    Add,
    Sub,
    Mul,
    /// True division: always `f32`.
    Div,
    FloorDiv,
    /// Python's `%`: the result takes the sign of the divisor.
    Rem,
    Pow,
    Eq,
    Ne,
    Lt,
    Le,
    Gt,
    Ge,
    /// `&`: logical for bool, bitwise for i64.
    And,
    /// `|`: logical for bool, bitwise for i64.
    Or,
    Maximum,
    Minimum,
}

impl BinaryOp {
    /// Every binary op, for tools and tests that go through them all.
    pub const ALL: [BinaryOp; 17] = [
        Self::Add,
        Self::Sub,
        Self::Mul,
        Self::Div,
        Self::FloorDiv,
        Self::Rem,
        Self::Pow,
        Self::Eq,
        Self::Ne,
        Self::Lt,
        Self::Le,
        Self::Gt,
        Self::Ge,
        Self::And,
        Self::Or,
        Self::Maximum,
        Self::Minimum,
    ];

    pub fn name(self) -> &'static str {
        match self {
            BinaryOp::Add => "add",
            BinaryOp::Sub => "sub",
            BinaryOp::Mul => "mul",
            BinaryOp::Div => "div",
            BinaryOp::FloorDiv => "floor_div",
            BinaryOp::Rem => "rem",
            BinaryOp::Pow => "pow",
            BinaryOp::Eq => "eq",
            BinaryOp::Ne => "ne",
            BinaryOp::Lt => "lt",
            BinaryOp::Le => "le",
            BinaryOp::Gt => "gt",
            BinaryOp::Ge => "ge",
            BinaryOp::And => "and",
            BinaryOp::Or => "or",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
        }
    }

    /// How the operation is written in TSL, for messages.
    pub fn symbol(self) -> &'static str {
        match self {
            BinaryOp::Add => "+",
            BinaryOp::Sub => "-",
            BinaryOp::Mul => "*",
            BinaryOp::Div => "/",
            BinaryOp::FloorDiv => "//",
            BinaryOp::Rem => "%",
            BinaryOp::Pow => "**",
            BinaryOp::Eq => "==",
            BinaryOp::Ne => "!=",
            BinaryOp::Lt => "<",
            BinaryOp::Le => "<=",
            BinaryOp::Gt => ">",
            BinaryOp::Ge => ">=",
            BinaryOp::And => "&",
            BinaryOp::Or => "|",
            BinaryOp::Maximum => "maximum",
            BinaryOp::Minimum => "minimum",
        }
    }

    pub fn is_comparison(self) -> bool {
        match self {
            BinaryOp::Eq
            | BinaryOp::Ne
            | BinaryOp::Lt
            | BinaryOp::Le
            | BinaryOp::Gt
            | BinaryOp::Ge => true,
            BinaryOp::Add
            | BinaryOp::Sub
            | BinaryOp::Mul
            | BinaryOp::Div
            | BinaryOp::FloorDiv
            | BinaryOp::Rem
            | BinaryOp::Pow
            | BinaryOp::And
            | BinaryOp::Or
            | BinaryOp::Maximum
            | BinaryOp::Minimum => false,
        }
    }
}

/// Elementwise unary operations.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    Neg,
    Abs,
    Exp,
    Log,
    Sqrt,
    Relu,
    Sigmoid,
    Tanh,
    /// Logical not: `bool` for any input dtype.
    Not,
    /// Whether an element is NaN: `bool`; always false for `i64` and `bool`.
    IsNan,
    /// Whether an element is infinite: `bool`; always false for `i64` and `bool`.
    IsInf,
}

impl UnaryOp {
    /// Every unary op, for tools and tests that go through them all.
    pub const ALL: [UnaryOp; 11] = [
        Self::Neg,
        Self::Abs,
        Self::Exp,
        Self::Log,
        Self::Sqrt,
        Self::Relu,
        Self::Sigmoid,
        Self::Tanh,
        Self::Not,
        Self::IsNan,
        Self::IsInf,
    ];

    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Relu => "relu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Not => "not",
            UnaryOp::IsNan => "isnan",
            UnaryOp::IsInf => "isinf",
        }
    }

    /// Whether the result is a `bool` for every input dtype (`not`, `isnan`, `isinf`).
    pub fn is_predicate(self) -> bool {
        match self {
            UnaryOp::Not | UnaryOp::IsNan | UnaryOp::IsInf => true,
            UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Exp
            | UnaryOp::Log
            | UnaryOp::Sqrt
            | UnaryOp::Relu
            | UnaryOp::Sigmoid
            | UnaryOp::Tanh => false,
        }
    }

    /// Whether the operation computes in floating point (ints and bools become `f32`).
    pub fn is_float_function(self) -> bool {
        match self {
            UnaryOp::Exp | UnaryOp::Log | UnaryOp::Sqrt | UnaryOp::Sigmoid | UnaryOp::Tanh => true,
            UnaryOp::Neg
            | UnaryOp::Abs
            | UnaryOp::Relu
            | UnaryOp::Not
            | UnaryOp::IsNan
            | UnaryOp::IsInf => false,
        }
    }
}

/// Reductions over some or all dimensions.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum ReduceOp {
    Sum,
    Mean,
    Max,
    Min,
    Prod,
    Argmax,
    Argmin,
    All,
    Any,
}

impl ReduceOp {
    /// Every reduce op, for tools and tests that go through them all.
    pub const ALL: [ReduceOp; 9] = [
        Self::Sum,
        Self::Mean,
        Self::Max,
        Self::Min,
        Self::Prod,
        Self::Argmax,
        Self::Argmin,
        Self::All,
        Self::Any,
    ];

    pub fn name(self) -> &'static str {
        match self {
            ReduceOp::Sum => "sum",
            ReduceOp::Mean => "mean",
            ReduceOp::Max => "max",
            ReduceOp::Min => "min",
            ReduceOp::Prod => "prod",
            ReduceOp::Argmax => "argmax",
            ReduceOp::Argmin => "argmin",
            ReduceOp::All => "all",
            ReduceOp::Any => "any",
        }
    }

    /// Whether the reduction is undefined on an empty extent (there is no identity).
    pub fn needs_elements(self) -> bool {
        match self {
            ReduceOp::Max | ReduceOp::Min | ReduceOp::Argmax | ReduceOp::Argmin => true,
            ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Prod | ReduceOp::All | ReduceOp::Any => {
                false
            }
        }
    }
}

/// A host number that is an attribute of an op: an int (possibly a symbolic size) or a float.
/// Floats compare by their bits, as [`crate::graph::ir::Arg`] does.
#[derive(Clone, Copy, Debug)]
pub enum Number {
    Int(Dim),
    Float(f64),
}

impl PartialEq for Number {
    fn eq(&self, other: &Number) -> bool {
        match (self, other) {
            (Number::Int(a), Number::Int(b)) => a == b,
            (Number::Float(a), Number::Float(b)) => a.to_bits() == b.to_bits(),
            _ => false,
        }
    }
}

impl Eq for Number {}

/// Hashes as it compares: floats by their bits.
impl std::hash::Hash for Number {
    fn hash<H: std::hash::Hasher>(&self, state: &mut H) {
        match self {
            Number::Int(dim) => dim.hash(state),
            Number::Float(value) => value.to_bits().hash(state),
        }
    }
}

/// One item of a canonical index expression `x[…]`. Tensor indices (masks and index tensors)
/// are operands of the op, in order.
#[derive(Clone, Debug, PartialEq, Eq, Hash)]
pub enum IndexSpec {
    /// A single position; negative values wrap at run time.
    Int(Dim),
    /// A Python slice; `None` bounds are open. `step` is positive.
    Slice {
        start: Option<Dim>,
        stop: Option<Dim>,
        step: i64,
    },
    /// `none`: inserts a dimension of size 1.
    NewAxis,
    /// A bool tensor operand covering `dims` dimensions; they become one of data-dependent size.
    Mask { dims: usize },
    /// An i64 tensor operand of `ndim` dimensions selecting along one dimension.
    Indices { ndim: usize },
}

/// A tensor operation with its static attributes.
#[derive(Clone, Debug, PartialEq)]
pub enum Op {
    /// Operand: the fill value (scalar).
    Full {
        shape: Vec<Dim>,
        dtype: DType,
    },
    /// `arange(start, end, step)`: `i64` when all three are ints, else `f32`.
    Arange {
        start: Number,
        end: Number,
        step: Number,
    },
    /// Standard normal `f32` samples from the session's generator.
    Randn {
        shape: Vec<Dim>,
    },
    /// Operands: two tensors or scalars.
    Binary(BinaryOp),
    Unary(UnaryOp),
    Cast(DType),
    /// Operands: condition, then-value, else-value.
    Where,
    /// Operands: the tensor, then the bounds that are present (scalars).
    Clamp {
        min: bool,
        max: bool,
    },
    /// `dims: None` reduces everything.
    Reduce {
        op: ReduceOp,
        dims: Option<Vec<usize>>,
        keepdim: bool,
    },
    Cumsum {
        dim: usize,
    },
    Diff {
        dim: usize,
    },
    /// Sorts along `dim`; outputs the values and their `i64` positions. Stable: equal
    /// elements keep their order; NaN sorts above every number.
    Sort {
        dim: usize,
        descending: bool,
    },
    /// The `k` largest (or smallest) elements along `dim`, in sorted order, and their `i64`
    /// positions; ties and NaN as in [`Op::Sort`].
    TopK {
        k: Dim,
        dim: usize,
        largest: bool,
    },
    /// `shape` has no `-1` once canonical.
    Reshape {
        shape: Vec<Dim>,
    },
    Permute {
        dims: Vec<usize>,
    },
    /// Removes the listed dimensions, all of size 1.
    Squeeze {
        dims: Vec<usize>,
    },
    Unsqueeze {
        dim: usize,
    },
    /// `shape` has no `-1` once canonical; leading new dimensions allowed.
    Expand {
        shape: Vec<Dim>,
    },
    /// Operands: the tensors to join.
    Cat {
        dim: usize,
    },
    Stack {
        dim: usize,
    },
    /// One output per size.
    Split {
        sizes: Vec<Dim>,
        dim: usize,
    },
    /// `start` is non-negative once canonical.
    Narrow {
        dim: usize,
        start: Dim,
        length: Dim,
    },
    /// Operands: the tensor and a 1-D i64 index.
    IndexSelect {
        dim: usize,
    },
    /// Operands: the tensor and an i64 index of the same rank.
    Gather {
        dim: usize,
    },
    /// Operands: the tensor, then one per `Mask`/`Indices` item.
    Index {
        items: Vec<IndexSpec>,
    },
    Nonzero,
    /// Operands: the tensor and a bool mask broadcastable to it.
    MaskedSelect,
    /// Operands: the tensor and the counts; `dim: None` flattens first.
    RepeatInterleave {
        dim: Option<usize>,
    },
    /// `repeat_interleave(counts)`: operand is the counts only.
    RepeatIndices,
    Unique,
    MatMul,
    /// A group of elementwise operations and reductions computed in one pass (made by
    /// `passes::fuse` when a compiled graph is prepared to run). Operands: its inputs.
    Fused(Arc<FusedKernel>),
}

impl Op {
    pub fn name(&self) -> &'static str {
        match self {
            Op::Full { .. } => "full",
            Op::Arange { .. } => "arange",
            Op::Randn { .. } => "randn",
            Op::Binary(op) => op.name(),
            Op::Unary(op) => op.name(),
            Op::Cast(_) => "cast",
            Op::Where => "where",
            Op::Clamp { .. } => "clamp",
            Op::Reduce { op, .. } => op.name(),
            Op::Cumsum { .. } => "cumsum",
            Op::Diff { .. } => "diff",
            Op::Sort { .. } => "sort",
            Op::TopK { .. } => "topk",
            Op::Reshape { .. } => "reshape",
            Op::Permute { .. } => "permute",
            Op::Squeeze { .. } => "squeeze",
            Op::Unsqueeze { .. } => "unsqueeze",
            Op::Expand { .. } => "expand",
            Op::Cat { .. } => "cat",
            Op::Stack { .. } => "stack",
            Op::Split { .. } => "split",
            Op::Narrow { .. } => "narrow",
            Op::IndexSelect { .. } => "index_select",
            Op::Gather { .. } => "gather",
            Op::Index { .. } => "index",
            Op::Nonzero => "nonzero",
            Op::MaskedSelect => "masked_select",
            Op::RepeatInterleave { .. } | Op::RepeatIndices => "repeat_interleave",
            Op::Unique => "unique",
            Op::MatMul => "matmul",
            Op::Fused(_) => "fused",
        }
    }

    /// Every size in the op's attributes.
    pub fn dims(&self) -> Vec<Dim> {
        let mut dims = Vec::new();
        self.clone()
            .try_for_each_dim(&mut |dim: &mut Dim| -> Result<(), ()> {
                dims.push(*dim);
                Ok(())
            })
            .unwrap_or(());
        dims
    }

    /// Calls `visit` on every size in the op's attributes, in order, letting it replace the
    /// size (the executor resolves symbolic sizes this way); stops at the first error.
    pub fn try_for_each_dim<E>(
        &mut self,
        visit: &mut impl FnMut(&mut Dim) -> Result<(), E>,
    ) -> Result<(), E> {
        match self {
            Op::Full { shape, .. }
            | Op::Randn { shape }
            | Op::Reshape { shape }
            | Op::Expand { shape }
            | Op::Split { sizes: shape, .. } => shape.iter_mut().try_for_each(visit),
            Op::Arange { start, end, step } => {
                [start, end, step]
                    .into_iter()
                    .try_for_each(|value| match value {
                        Number::Int(dim) => visit(dim),
                        Number::Float(_) => Ok(()),
                    })
            }
            Op::Narrow { start, length, .. } => {
                visit(start)?;
                visit(length)
            }
            Op::TopK { k, .. } => visit(k),
            Op::Index { items } => items.iter_mut().try_for_each(|item| match item {
                IndexSpec::Int(position) => visit(position),
                IndexSpec::Slice { start, stop, .. } => start
                    .iter_mut()
                    .chain(stop.iter_mut())
                    .try_for_each(&mut *visit),
                IndexSpec::NewAxis | IndexSpec::Mask { .. } | IndexSpec::Indices { .. } => Ok(()),
            }),
            Op::Binary(_)
            | Op::Unary(_)
            | Op::Cast(_)
            | Op::Where
            | Op::Clamp { .. }
            | Op::Reduce { .. }
            | Op::Cumsum { .. }
            | Op::Diff { .. }
            | Op::Sort { .. }
            | Op::Permute { .. }
            | Op::Squeeze { .. }
            | Op::Unsqueeze { .. }
            | Op::Cat { .. }
            | Op::Stack { .. }
            | Op::IndexSelect { .. }
            | Op::Gather { .. }
            | Op::Nonzero
            | Op::MaskedSelect
            | Op::RepeatInterleave { .. }
            | Op::RepeatIndices
            | Op::Unique
            | Op::MatMul => Ok(()),
            Op::Fused(kernel) => Arc::make_mut(kernel).try_for_each_dim(visit),
        }
    }
}

impl fmt::Display for Op {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        f.write_str(self.name())
    }
}
