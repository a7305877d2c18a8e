//! The fused kernel: a group of elementwise operations, with their reductions and mask
//! compactions, computed in one pass over their iteration shape (`Op::Fused`, made by
//! `passes::fuse`).
//!
//! A kernel is a list of instructions in SSA form over the node's tensor operands. Each
//! instruction holds one value per element of the iteration shape, or one per row (a
//! reduction over the last dim, and what is computed from such values), or one per *kept*
//! element: the elements where the kernel's mask is true, in order, as `x[mask]`,
//! `masked_select` and `nonzero` compact them. Constants hold one value for everything.
//! Outputs are instruction values, optionally reduced over everything, and, in a kernel that
//! keeps elements, the count of kept elements (which binds the size of the compacted
//! values). Operand dtypes are made explicit by `Cast` instructions, so each instruction
//! computes in its own dtype with the element functions of `graph::semantics`; a backend that
//! follows the instructions in order computes exactly what the unfused operations compute.

use super::op::{BinaryOp, IndexSpec, Op, ReduceOp, UnaryOp};
use super::semantics::Fault;
use super::shape::{Dim, Meta};
use crate::diag::Frame;
use crate::dtype::DType;
use crate::source::Span;

/// A group of elementwise operations computed together.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedKernel {
    /// The iteration shape: every per-element value has this shape.
    pub shape: Vec<Dim>,
    /// Whether some instruction reduces rows: the kernel then runs row by row, and
    /// [`Domain::Row`] values hold one element per row.
    pub rows: bool,
    /// The tensor operands of the node, in order: dtype and sizes (broadcast to `shape`, or,
    /// for a per-row operand, to `shape` with a last size of 1).
    pub inputs: Vec<Meta>,
    pub body: Vec<Instr>,
    pub outputs: Vec<FusedOutput>,
    /// The operations the kernel replaced, in program order.
    pub members: Vec<Member>,
}

/// One instruction: its operation, its dtype and how many values it holds.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub kind: InstrKind,
    pub dtype: DType,
    pub domain: Domain,
    /// The member (index into [`FusedKernel::members`]) this instruction computes for; an
    /// element error is reported at that member.
    pub member: usize,
}

/// How many values an instruction holds.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub enum Domain {
    /// One value for everything: a constant, or an operand with a single element.
    Uniform,
    /// One value per row of the iteration shape (a kernel that reduces rows).
    Row,
    /// One value per element of the iteration shape.
    Element,
    /// One value per kept element: where the kernel's mask is true, in row-major order.
    Kept,
}

impl Domain {
    /// The domain of a value computed from values of domains `self` and `other`; `None`
    /// when they cannot meet (kept values against per-element or per-row ones).
    pub fn join(self, other: Domain) -> Option<Domain> {
        match (self, other) {
            (Domain::Uniform, domain) | (domain, Domain::Uniform) => Some(domain),
            (a, b) if a == b => Some(a),
            (Domain::Row, Domain::Element) | (Domain::Element, Domain::Row) => {
                Some(Domain::Element)
            }
            _ => None,
        }
    }
}

/// Operands are indices of earlier instructions.
#[derive(Clone, Debug, PartialEq)]
pub enum InstrKind {
    /// The tensor operand at this position.
    Input(usize),
    /// A host number: an int (possibly a symbolic size), a float or a bool.
    Int(Dim),
    Float(f64),
    Bool(bool),
    Unary(UnaryOp, usize),
    /// Both operands have the instruction's compute dtype (the result dtype, except for
    /// comparisons, whose operands share the promoted dtype).
    Binary(BinaryOp, usize, usize),
    /// Converts to the instruction's dtype.
    Cast(usize),
    /// Condition, then-value, else-value (both of the instruction's dtype).
    Where(usize, usize, usize),
    /// Reduces a per-element value over the last dim: one value per row.
    Reduce(ReduceOp, usize),
    /// The per-element value (first) at the elements where the mask (second, a per-element
    /// `bool`) is true, in order: `x[mask]`, `masked_select`.
    Keep(usize, usize),
    /// The row-major position of each element where the mask is true, in order: `nonzero`
    /// of a 1-D mask.
    Position(usize),
}

/// A value the kernel writes.
#[derive(Clone, Debug, PartialEq)]
pub struct FusedOutput {
    pub kind: OutputKind,
    pub meta: Meta,
    /// The member whose value this is.
    pub member: usize,
}

#[derive(Clone, Copy, Debug, PartialEq)]
pub enum OutputKind {
    /// An instruction's values, with the output's sizes (a kept value's first size is the
    /// count of kept elements).
    Values(usize),
    /// An instruction's values reduced over all of them.
    Total(ReduceOp, usize),
    /// How many elements the mask (this instruction, a per-element `bool`) kept: a 0-d
    /// `i64` that binds the size of the kept values. Every kernel that keeps elements has one.
    Count(usize),
}

/// An operation a kernel replaced: what it was and where it was written, for `tsl graph
/// --fused` and for errors raised by its elements.
#[derive(Clone, Debug, PartialEq)]
pub struct Member {
    pub name: &'static str,
    pub span: Span,
    pub trace: Vec<Frame>,
}

impl FusedKernel {
    /// The dtype and sizes of each output, in order.
    pub fn output_metas(&self) -> Vec<Meta> {
        self.outputs
            .iter()
            .map(|output| output.meta.clone())
            .collect()
    }

    /// Every size the kernel needs before it runs, for the executor to make concrete. The
    /// sizes of kept values are left alone: the kernel counts them itself.
    pub fn try_for_each_dim<E>(
        &mut self,
        visit: &mut impl FnMut(&mut Dim) -> Result<(), E>,
    ) -> Result<(), E> {
        self.shape.iter_mut().try_for_each(&mut *visit)?;
        for meta in &mut self.inputs {
            meta.shape.iter_mut().try_for_each(&mut *visit)?;
        }
        for output in &mut self.outputs {
            let kept = match output.kind {
                OutputKind::Values(value) => self.body[value].domain == Domain::Kept,
                OutputKind::Total(..) | OutputKind::Count(_) => false,
            };
            if !kept {
                output.meta.shape.iter_mut().try_for_each(&mut *visit)?;
            }
        }
        for instr in &mut self.body {
            if let InstrKind::Int(dim) = &mut instr.kind {
                visit(dim)?;
            }
        }
        Ok(())
    }

    /// Whether an element of some instruction can fail (integer `//`, `%` or `**`, an
    /// extremum of an empty row or of no elements).
    pub fn is_fallible(&self) -> bool {
        self.body.iter().any(Instr::is_fallible)
            || self.outputs.iter().any(
                |output| matches!(output.kind, OutputKind::Total(op, _) if op.needs_elements()),
            )
    }

    /// The mask of the kernel's kept values (the instruction every `Keep` and `Position`
    /// reads, and whose count it writes), if it keeps any.
    pub fn mask(&self) -> Option<usize> {
        self.outputs.iter().find_map(|output| match output.kind {
            OutputKind::Count(mask) => Some(mask),
            OutputKind::Values(_) | OutputKind::Total(..) => None,
        })
    }

    /// The names of the members, for printing: `fused[gt, mul, sum]`.
    pub fn member_names(&self) -> Vec<&'static str> {
        self.members.iter().map(|member| member.name).collect()
    }

    /// The body as `tsl graph --fused` prints it, one line per instruction then one per
    /// output; `dim` renders a size.
    pub fn body_lines(&self, dim: &dyn Fn(Dim) -> String) -> Vec<String> {
        let mut lines: Vec<String> = self
            .body
            .iter()
            .enumerate()
            .map(|(index, instr)| {
                let domain = match instr.domain {
                    Domain::Row if self.rows => " per row",
                    Domain::Kept => " kept",
                    Domain::Uniform | Domain::Row | Domain::Element => "",
                };
                format!(
                    "i{index} = {} : {}{domain}",
                    instr.describe(dim),
                    instr.dtype
                )
            })
            .collect();
        for output in &self.outputs {
            lines.push(match output.kind {
                OutputKind::Values(value) => format!("out i{value}"),
                OutputKind::Total(op, value) => format!("out {}(i{value})", op.name()),
                OutputKind::Count(mask) => format!("out count(i{mask})"),
            });
        }
        lines
    }
}

impl Instr {
    fn describe(&self, dim: &dyn Fn(Dim) -> String) -> String {
        match &self.kind {
            InstrKind::Input(position) => format!("input {position}"),
            InstrKind::Int(value) => dim(*value),
            InstrKind::Float(value) => format!("{value:?}"),
            InstrKind::Bool(value) => value.to_string(),
            InstrKind::Unary(op, a) => format!("{}(i{a})", op.name()),
            InstrKind::Binary(op, a, b) => format!("{}(i{a}, i{b})", op.name()),
            InstrKind::Cast(a) => format!("cast(i{a})"),
            InstrKind::Where(c, a, b) => format!("where(i{c}, i{a}, i{b})"),
            InstrKind::Reduce(op, a) => format!("{}(i{a}, last dim)", op.name()),
            InstrKind::Keep(a, mask) => format!("keep(i{a}, where i{mask})"),
            InstrKind::Position(mask) => format!("position(where i{mask})"),
        }
    }

    pub fn is_fallible(&self) -> bool {
        match self.kind {
            InstrKind::Binary(op, ..) => self.dtype == DType::I64 && Fault::of(op).is_some(),
            InstrKind::Reduce(op, _) => op.needs_elements(),
            InstrKind::Input(_)
            | InstrKind::Int(_)
            | InstrKind::Float(_)
            | InstrKind::Bool(_)
            | InstrKind::Unary(..)
            | InstrKind::Cast(_)
            | InstrKind::Where(..)
            | InstrKind::Keep(..)
            | InstrKind::Position(_) => false,
        }
    }

    /// The instructions this one reads.
    pub fn operands(&self) -> impl Iterator<Item = usize> + use<> {
        let operands = match self.kind {
            InstrKind::Input(_) | InstrKind::Int(_) | InstrKind::Float(_) | InstrKind::Bool(_) => {
                [None; 3]
            }
            InstrKind::Unary(_, a)
            | InstrKind::Cast(a)
            | InstrKind::Reduce(_, a)
            | InstrKind::Position(a) => [Some(a), None, None],
            InstrKind::Binary(_, a, b) | InstrKind::Keep(a, b) => [Some(a), Some(b), None],
            InstrKind::Where(c, a, b) => [Some(c), Some(a), Some(b)],
        };
        operands.into_iter().flatten()
    }
}

/// What a fusible op computes: the ops a fused kernel can hold, with their attributes.
#[derive(Clone, Copy, Debug, PartialEq)]
pub enum Fusible<'o> {
    Binary(BinaryOp),
    Unary(UnaryOp),
    Cast(DType),
    Where,
    Clamp {
        min: bool,
        max: bool,
    },
    /// `dims: None` reduces everything.
    Reduce {
        op: ReduceOp,
        dims: Option<&'o [usize]>,
    },
    /// The elements of operand 0 where the mask (operand 1) is true: `x[mask]` with one mask
    /// item, `masked_select`.
    Keep,
    /// The positions where the mask (operand 0) is true: `nonzero`.
    Nonzero,
    /// Elements of operand 0 at the positions of operand 1 along dim 0: `index_select` and
    /// `gather` on dim 0, `x[indices]`.
    Take,
    /// Dropping dims of size 1.
    Squeeze,
}

/// How an op would be a member of a fused kernel, if it can be one at all (the pass
/// decides the rest).
pub fn fusible(op: &Op) -> Option<Fusible<'_>> {
    Some(match op {
        Op::Binary(binary) => Fusible::Binary(*binary),
        Op::Unary(unary) => Fusible::Unary(*unary),
        Op::Cast(dtype) => Fusible::Cast(*dtype),
        Op::Where => Fusible::Where,
        Op::Clamp { min, max } => Fusible::Clamp {
            min: *min,
            max: *max,
        },
        Op::Reduce { op, dims, .. } => match op {
            ReduceOp::Sum
            | ReduceOp::Mean
            | ReduceOp::Max
            | ReduceOp::Min
            | ReduceOp::Prod
            | ReduceOp::All
            | ReduceOp::Any => Fusible::Reduce {
                op: *op,
                dims: dims.as_deref(),
            },
            ReduceOp::Argmax | ReduceOp::Argmin => return None,
        },
        Op::Index { items } => match items.as_slice() {
            [IndexSpec::Mask { .. }] => Fusible::Keep,
            [IndexSpec::Indices { ndim: 1 }] => Fusible::Take,
            _ => return None,
        },
        Op::MaskedSelect => Fusible::Keep,
        Op::Nonzero => Fusible::Nonzero,
        Op::IndexSelect { dim: 0 } | Op::Gather { dim: 0 } => Fusible::Take,
        Op::Squeeze { .. } => Fusible::Squeeze,
        Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Full { .. }
        | Op::Arange { .. }
        | Op::Randn { .. }
        | Op::Cumsum { .. }
        | Op::Diff { .. }
        | Op::Sort { .. }
        | Op::TopK { .. }
        | Op::Reshape { .. }
        | Op::Permute { .. }
        | Op::Unsqueeze { .. }
        | Op::Expand { .. }
        | Op::Cat { .. }
        | Op::Stack { .. }
        | Op::Split { .. }
        | Op::Narrow { .. }
        | Op::RepeatInterleave { .. }
        | Op::RepeatIndices
        | Op::Unique
        | Op::MatMul
        | Op::Fused(_) => return None,
    })
}
