//! The fused kernel: a group of elementwise operations, with their reductions, computed in
//! one pass over their iteration shape (`Op::Fused`, made by `passes::fuse`).
//!
//! A kernel is a list of instructions in SSA form over the node's tensor operands. Every
//! instruction holds one value per element of the iteration shape, or, in a kernel that
//! reduces rows, possibly one value per row (a reduction over the last dim and what is
//! computed from such values). Outputs are instruction values, optionally reduced over
//! everything. Operand dtypes are made explicit by `Cast` instructions, so each instruction
//! computes in its own dtype with the element functions of `graph::semantics`; a backend that
//! follows the instructions in order computes exactly what the unfused operations compute.

use super::op::{BinaryOp, Op, ReduceOp, UnaryOp};
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
    /// [`Instr::row`] values hold one element per row.
    pub rows: bool,
    /// The tensor operands of the node, in order: dtype and sizes (broadcast to `shape`, or,
    /// for a per-row operand, to `shape` with a last size of 1).
    pub inputs: Vec<Meta>,
    pub body: Vec<Instr>,
    pub outputs: Vec<FusedOutput>,
    /// The operations the kernel replaced, in program order.
    pub members: Vec<Member>,
}

/// One instruction: its operation, its dtype and whether it holds one value per row.
#[derive(Clone, Debug, PartialEq)]
pub struct Instr {
    pub kind: InstrKind,
    pub dtype: DType,
    pub row: bool,
    /// The member (index into [`FusedKernel::members`]) this instruction computes for; an
    /// element error is reported at that member.
    pub member: usize,
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
}

/// A value the kernel writes: an instruction's value with the output's sizes, or that value
/// reduced over every element (`reduce`).
#[derive(Clone, Debug, PartialEq)]
pub struct FusedOutput {
    pub value: usize,
    pub reduce: Option<ReduceOp>,
    pub meta: Meta,
    /// The member whose value this is.
    pub member: usize,
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

    /// Every size the kernel mentions, for the executor to make concrete.
    pub fn try_for_each_dim<E>(
        &mut self,
        visit: &mut impl FnMut(&mut Dim) -> Result<(), E>,
    ) -> Result<(), E> {
        self.shape.iter_mut().try_for_each(&mut *visit)?;
        for meta in &mut self.inputs {
            meta.shape.iter_mut().try_for_each(&mut *visit)?;
        }
        for output in &mut self.outputs {
            output.meta.shape.iter_mut().try_for_each(&mut *visit)?;
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
            || self
                .outputs
                .iter()
                .any(|output| output.reduce.is_some_and(ReduceOp::needs_elements))
    }

    /// The names of the members, for printing: `fused[gt, mul, sum]`.
    pub fn member_names(&self) -> Vec<&'static str> {
        self.members.iter().map(|member| member.name).collect()
    }
}

impl FusedKernel {
    /// The body as `tsl graph --fused` prints it, one line per instruction then one per
    /// output; `dim` renders a size.
    pub fn body_lines(&self, dim: &dyn Fn(Dim) -> String) -> Vec<String> {
        let mut lines: Vec<String> = self
            .body
            .iter()
            .enumerate()
            .map(|(index, instr)| {
                let per_row = if instr.row && self.rows {
                    " per row"
                } else {
                    ""
                };
                format!(
                    "i{index} = {} : {}{per_row}",
                    instr.describe(dim),
                    instr.dtype
                )
            })
            .collect();
        for output in &self.outputs {
            lines.push(match output.reduce {
                Some(op) => format!("out {}(i{})", op.name(), output.value),
                None => format!("out i{}", output.value),
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
        }
    }

    pub fn is_fallible(&self) -> bool {
        match self.kind {
            InstrKind::Binary(BinaryOp::FloorDiv | BinaryOp::Rem | BinaryOp::Pow, ..) => {
                self.dtype == DType::I64
            }
            InstrKind::Reduce(op, _) => op.needs_elements(),
            _ => false,
        }
    }

    /// The instructions this one reads.
    pub fn operands(&self) -> Vec<usize> {
        match self.kind {
            InstrKind::Input(_) | InstrKind::Int(_) | InstrKind::Float(_) | InstrKind::Bool(_) => {
                Vec::new()
            }
            InstrKind::Unary(_, a) | InstrKind::Cast(a) | InstrKind::Reduce(_, a) => vec![a],
            InstrKind::Binary(_, a, b) => vec![a, b],
            InstrKind::Where(c, a, b) => vec![c, a, b],
        }
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
        Op::Full { .. }
        | Op::Arange { .. }
        | Op::Randn { .. }
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
        | Op::IndexSelect { .. }
        | Op::Gather { .. }
        | Op::Index { .. }
        | Op::Nonzero
        | Op::MaskedSelect
        | Op::RepeatInterleave { .. }
        | Op::RepeatIndices
        | Op::Unique
        | Op::MatMul
        | Op::Fused(_) => return None,
    })
}
