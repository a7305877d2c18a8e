//! Turns the members of a group into the instructions of a [`FusedKernel`], making every
//! dtype conversion the unfused kernels perform an explicit `Cast`.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::graph::fused::{FusedKernel, FusedOutput, Fusible, Instr, InstrKind, Member, fusible};
use crate::graph::ir::{Arg, Graph, Node, NodeKind, ValueRef};
use crate::graph::op::{BinaryOp, ReduceOp, UnaryOp};
use crate::graph::shape::{Dim, Meta, binary_dtype, reduce_dtype};

/// Builds the kernel of a group. `members` are node indices in program order; `escaping`
/// says which of them are read outside the group (in that order they become outputs).
/// Returns the kernel and its operands, or `None` when a member cannot be expressed.
pub(super) fn build(
    graph: &Graph,
    members: &[usize],
    escaping: &[bool],
    shape: &[Dim],
    rows: bool,
) -> Option<(FusedKernel, Vec<ValueRef>)> {
    let mut builder = Builder {
        graph,
        body: Vec::new(),
        inputs: Vec::new(),
        operands: Vec::new(),
        values: HashMap::new(),
        member: 0,
    };
    let mut outputs = Vec::new();
    let mut member_list = Vec::new();
    for (position, &index) in members.iter().enumerate() {
        let node = &graph.nodes[index];
        let NodeKind::Op(op) = &node.kind else {
            return None;
        };
        builder.member = position;
        let (value, total) = builder.member_value(fusible(op)?, node)?;
        builder.values.insert(index, value);
        if escaping[position] {
            outputs.push(FusedOutput {
                value,
                reduce: total,
                meta: node.outputs[0].clone(),
                member: position,
            });
        }
        member_list.push(Member {
            name: op.name(),
            span: node.span,
            trace: node.trace.clone(),
        });
    }
    let kernel = FusedKernel {
        shape: shape.to_vec(),
        rows,
        inputs: builder.inputs,
        body: builder.body,
        outputs,
        members: member_list,
    };
    Some((kernel, builder.operands))
}

struct Builder<'g> {
    graph: &'g Graph,
    body: Vec<Instr>,
    inputs: Vec<Meta>,
    /// The node operand behind each input.
    operands: Vec<ValueRef>,
    /// The instruction holding each member node's value.
    values: HashMap<usize, usize>,
    /// The member being translated.
    member: usize,
}

impl Builder<'_> {
    /// The instruction holding a member's value, and for a reduction over everything the
    /// reduction (which only its output applies).
    fn member_value(&mut self, op: Fusible<'_>, node: &Node) -> Option<(usize, Option<ReduceOp>)> {
        let args = &node.args;
        let value = match op {
            Fusible::Binary(binary) => {
                let (a, b) = (self.arg(args.first()?), self.arg(args.get(1)?));
                self.binary(binary, a, b)?
            }
            Fusible::Unary(unary) => {
                let a = self.arg(args.first()?);
                self.unary(unary, a)
            }
            Fusible::Cast(dtype) => {
                let a = self.arg(args.first()?);
                self.cast(a, dtype)
            }
            Fusible::Where => {
                let condition = self.arg(args.first()?);
                let (a, b) = (self.arg(args.get(1)?), self.arg(args.get(2)?));
                let dtype = self.dtype(a).promote(self.dtype(b));
                let (a, b) = (self.cast(a, dtype), self.cast(b, dtype));
                let row = self.row(condition) && self.row(a) && self.row(b);
                self.push(InstrKind::Where(condition, a, b), dtype, row)
            }
            Fusible::Clamp { min, max } => {
                let mut value = self.arg(args.first()?);
                let mut bounds = args[1..].iter();
                for (present, extremum) in [(min, BinaryOp::Maximum), (max, BinaryOp::Minimum)] {
                    if present {
                        let bound = self.arg(bounds.next()?);
                        value = self.binary(extremum, value, bound)?;
                    }
                }
                value
            }
            Fusible::Reduce { op, dims } => {
                let a = self.arg(args.first()?);
                let a = self.reduction_operand(op, a)?;
                return Some(match dims {
                    None => (a, Some(op)),
                    Some(_) => {
                        let dtype = reduce_dtype(op, self.dtype(a)).ok()?;
                        (self.push(InstrKind::Reduce(op, a), dtype, true), None)
                    }
                });
            }
        };
        Some((value, None))
    }

    /// The instruction for an operand: a member's value, a tensor operand, or a constant.
    fn arg(&mut self, arg: &Arg) -> usize {
        match arg {
            Arg::Tensor(value) => {
                if value.output == 0
                    && let Some(&instr) = self.values.get(&value.node.index())
                {
                    return instr;
                }
                self.input(*value)
            }
            Arg::Int(dim) => self.push(InstrKind::Int(*dim), DType::I64, true),
            Arg::Float(value) => self.push(InstrKind::Float(*value), DType::F32, true),
            Arg::Bool(value) => self.push(InstrKind::Bool(*value), DType::Bool, true),
        }
    }

    fn input(&mut self, value: ValueRef) -> usize {
        let position = match self.operands.iter().position(|known| *known == value) {
            Some(position) => position,
            None => {
                self.operands.push(value);
                self.inputs.push(self.graph.meta(value).clone());
                self.operands.len() - 1
            }
        };
        let dtype = self.inputs[position].dtype;
        let existing = self
            .body
            .iter()
            .position(|instr| instr.kind == InstrKind::Input(position));
        existing.unwrap_or_else(|| self.push(InstrKind::Input(position), dtype, false))
    }

    /// `a op b` as the binary kernel computes it: both operands cast to the compute dtype.
    fn binary(&mut self, op: BinaryOp, a: usize, b: usize) -> Option<usize> {
        let (da, db) = (self.dtype(a), self.dtype(b));
        let result = binary_dtype(op, da, db).ok()?;
        let compute = if op.is_comparison() {
            da.promote(db)
        } else {
            result
        };
        let (a, b) = (self.cast(a, compute), self.cast(b, compute));
        let row = self.row(a) && self.row(b);
        Some(self.push(InstrKind::Binary(op, a, b), result, row))
    }

    /// A unary op as the unary kernel computes it: logical not of anything non-bool is not
    /// of its truth value; `isnan` and `isinf` test the `f32` value (never true for an int
    /// or bool); `neg`, `abs` and `relu` leave bools alone; float functions compute in `f32`.
    fn unary(&mut self, op: UnaryOp, a: usize) -> usize {
        let dtype = self.dtype(a);
        let row = self.row(a);
        match (op, dtype) {
            (UnaryOp::Not, _) => {
                let a = self.cast(a, DType::Bool);
                self.push(InstrKind::Unary(op, a), DType::Bool, row)
            }
            (UnaryOp::IsNan | UnaryOp::IsInf, _) => {
                let a = self.cast(a, DType::F32);
                self.push(InstrKind::Unary(op, a), DType::Bool, row)
            }
            (_, DType::Bool) if !op.is_float_function() => a,
            (_, DType::I64) if !op.is_float_function() => {
                self.push(InstrKind::Unary(op, a), DType::I64, row)
            }
            _ => {
                let a = self.cast(a, DType::F32);
                self.push(InstrKind::Unary(op, a), DType::F32, row)
            }
        }
    }

    /// The operand a reduction folds, in the dtype the reduce kernel folds it in.
    fn reduction_operand(&mut self, op: ReduceOp, a: usize) -> Option<usize> {
        let dtype = self.dtype(a);
        Some(match op {
            ReduceOp::Sum | ReduceOp::Prod if dtype != DType::F32 => self.cast(a, DType::I64),
            ReduceOp::Mean if dtype != DType::F32 => return None,
            ReduceOp::All | ReduceOp::Any => self.cast(a, DType::Bool),
            ReduceOp::Argmax | ReduceOp::Argmin => return None,
            _ => a,
        })
    }

    fn cast(&mut self, a: usize, dtype: DType) -> usize {
        if self.dtype(a) == dtype {
            return a;
        }
        let row = self.row(a);
        self.push(InstrKind::Cast(a), dtype, row)
    }

    fn dtype(&self, instr: usize) -> DType {
        self.body[instr].dtype
    }

    fn row(&self, instr: usize) -> bool {
        self.body[instr].row
    }

    fn push(&mut self, kind: InstrKind, dtype: DType, row: bool) -> usize {
        self.body.push(Instr {
            kind,
            dtype,
            row,
            member: self.member,
        });
        self.body.len() - 1
    }
}
