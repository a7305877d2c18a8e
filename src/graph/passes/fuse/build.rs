//! Turns the members of a group into the instructions of a [`FusedKernel`], making every
//! dtype conversion the unfused kernels perform an explicit `Cast`. A kernel that keeps
//! elements also writes their count, which binds the symbols the compactions bound.

use std::collections::HashMap;

use crate::dtype::DType;
use crate::graph::fused::{
    Domain, FusedKernel, FusedOutput, Fusible, Instr, InstrKind, Member, OutputKind, fusible,
};
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
        keeping: None,
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
                kind: match total {
                    Some(op) => OutputKind::Total(op, value),
                    None => OutputKind::Values(value),
                },
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
    if let Some((member, mask)) = builder.keeping {
        outputs.push(FusedOutput {
            kind: OutputKind::Count(mask),
            meta: Meta::scalar(DType::I64),
            member,
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
    Some(prune(kernel, builder.operands))
}

/// The kernel without the instructions no output needs (the positions a take only used to
/// find what to keep), and without the operands only those read. An instruction that can
/// fail stays, so that its error is still raised.
fn prune(mut kernel: FusedKernel, operands: Vec<ValueRef>) -> (FusedKernel, Vec<ValueRef>) {
    let mut live: Vec<bool> = kernel.body.iter().map(Instr::is_fallible).collect();
    for output in &kernel.outputs {
        let (OutputKind::Values(value) | OutputKind::Total(_, value) | OutputKind::Count(value)) =
            output.kind;
        live[value] = true;
    }
    for index in (0..kernel.body.len()).rev() {
        if live[index] {
            for operand in kernel.body[index].operands() {
                live[operand] = true;
            }
        }
    }
    let mut inputs_used = vec![false; kernel.inputs.len()];
    for (instr, _) in kernel.body.iter().zip(&live).filter(|(_, live)| **live) {
        if let InstrKind::Input(position) = instr.kind {
            inputs_used[position] = true;
        }
    }
    let instr_numbers = numbering(&live);
    let input_numbers = numbering(&inputs_used);
    let body = std::mem::take(&mut kernel.body);
    kernel.body = body
        .into_iter()
        .zip(&live)
        .filter(|(_, live)| **live)
        .map(|(mut instr, _)| {
            instr.kind = renumbered(&instr.kind, &instr_numbers, &input_numbers);
            instr
        })
        .collect();
    for output in &mut kernel.outputs {
        output.kind = match output.kind {
            OutputKind::Values(value) => OutputKind::Values(instr_numbers[value]),
            OutputKind::Total(op, value) => OutputKind::Total(op, instr_numbers[value]),
            OutputKind::Count(mask) => OutputKind::Count(instr_numbers[mask]),
        };
    }
    kernel.inputs = used(kernel.inputs, &inputs_used);
    (kernel, used(operands, &inputs_used))
}

fn used<T>(items: Vec<T>, used: &[bool]) -> Vec<T> {
    items
        .into_iter()
        .zip(used)
        .filter(|(_, used)| **used)
        .map(|(item, _)| item)
        .collect()
}

/// For each kept item, its index among the kept ones.
fn numbering(kept: &[bool]) -> Vec<usize> {
    let mut next = 0;
    kept.iter()
        .map(|kept| {
            let number = next;
            next += usize::from(*kept);
            number
        })
        .collect()
}

fn renumbered(kind: &InstrKind, instrs: &[usize], inputs: &[usize]) -> InstrKind {
    let at = |index: usize| instrs[index];
    match kind {
        InstrKind::Input(position) => InstrKind::Input(inputs[*position]),
        InstrKind::Int(_) | InstrKind::Float(_) | InstrKind::Bool(_) => kind.clone(),
        InstrKind::Unary(op, a) => InstrKind::Unary(*op, at(*a)),
        InstrKind::Binary(op, a, b) => InstrKind::Binary(*op, at(*a), at(*b)),
        InstrKind::Cast(a) => InstrKind::Cast(at(*a)),
        InstrKind::Where(c, a, b) => InstrKind::Where(at(*c), at(*a), at(*b)),
        InstrKind::Reduce(op, a) => InstrKind::Reduce(*op, at(*a)),
        InstrKind::Keep(a, mask) => InstrKind::Keep(at(*a), at(*mask)),
        InstrKind::Position(mask) => InstrKind::Position(at(*mask)),
    }
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
    /// The first member that keeps elements and its mask, if any.
    keeping: Option<(usize, usize)>,
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
                let domain = self.join(condition, a)?.join(self.domain(b))?;
                self.push(InstrKind::Where(condition, a, b), dtype, domain)
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
                    Some(_) if self.domain(a) != Domain::Kept => {
                        let dtype = reduce_dtype(op, self.dtype(a)).ok()?;
                        (
                            self.push(InstrKind::Reduce(op, a), dtype, Domain::Row),
                            None,
                        )
                    }
                    _ => (a, Some(op)),
                });
            }
            Fusible::Keep => {
                let a = self.arg(args.first()?);
                let mask = self.arg(args.get(1)?);
                self.keep(a, mask)
            }
            Fusible::Nonzero => {
                // A group keeps by one mask: a second `nonzero` of it reuses the first's
                // flags instead of converting the mask again.
                let mask = match self.keeping {
                    Some((_, known)) => known,
                    None => {
                        let mask = self.arg(args.first()?);
                        self.cast(mask, DType::Bool)
                    }
                };
                self.keeping.get_or_insert((self.member, mask));
                self.push(InstrKind::Position(mask), DType::I64, Domain::Kept)
            }
            Fusible::Take => {
                let a = self.arg(args.first()?);
                let positions = self.arg(args.get(1)?);
                let InstrKind::Position(mask) = self.body[positions].kind else {
                    return None;
                };
                self.keep(a, mask)
            }
            Fusible::Squeeze => self.arg(args.first()?),
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
            Arg::Int(dim) => self.push(InstrKind::Int(*dim), DType::I64, Domain::Uniform),
            Arg::Float(value) => self.push(InstrKind::Float(*value), DType::F32, Domain::Uniform),
            Arg::Bool(value) => self.push(InstrKind::Bool(*value), DType::Bool, Domain::Uniform),
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
        let meta = &self.inputs[position];
        let dtype = meta.dtype;
        // A single element reads as one value everywhere, kept elements included.
        let domain = if meta.shape.iter().all(|size| *size == Dim::ONE) {
            Domain::Uniform
        } else {
            Domain::Element
        };
        let existing = self
            .body
            .iter()
            .position(|instr| instr.kind == InstrKind::Input(position));
        existing.unwrap_or_else(|| self.push(InstrKind::Input(position), dtype, domain))
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
        let domain = self.join(a, b)?;
        Some(self.push(InstrKind::Binary(op, a, b), result, domain))
    }

    /// A unary op as the unary kernel computes it: logical not of anything non-bool is not
    /// of its truth value; `isnan` and `isinf` test the `f32` value (never true for an int
    /// or bool); `neg`, `abs` and `relu` leave bools alone; float functions compute in `f32`.
    fn unary(&mut self, op: UnaryOp, a: usize) -> usize {
        let dtype = self.dtype(a);
        let domain = self.domain(a);
        match (op, dtype) {
            (UnaryOp::Not, _) => {
                let a = self.cast(a, DType::Bool);
                self.push(InstrKind::Unary(op, a), DType::Bool, domain)
            }
            (UnaryOp::IsNan | UnaryOp::IsInf, _) => {
                let a = self.cast(a, DType::F32);
                self.push(InstrKind::Unary(op, a), DType::Bool, domain)
            }
            (_, DType::Bool) if !op.is_float_function() => a,
            (_, DType::I64) if !op.is_float_function() => {
                self.push(InstrKind::Unary(op, a), DType::I64, domain)
            }
            _ => {
                let a = self.cast(a, DType::F32);
                self.push(InstrKind::Unary(op, a), DType::F32, domain)
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
        let domain = self.domain(a);
        self.push(InstrKind::Cast(a), dtype, domain)
    }

    /// The elements of per-element value `a` where `mask` holds.
    fn keep(&mut self, a: usize, mask: usize) -> usize {
        self.keeping.get_or_insert((self.member, mask));
        let dtype = self.dtype(a);
        self.push(InstrKind::Keep(a, mask), dtype, Domain::Kept)
    }

    fn dtype(&self, instr: usize) -> DType {
        self.body[instr].dtype
    }

    fn domain(&self, instr: usize) -> Domain {
        self.body[instr].domain
    }

    /// The domain of a value computed from `a` and `b`.
    fn join(&self, a: usize, b: usize) -> Option<Domain> {
        self.domain(a).join(self.domain(b))
    }

    fn push(&mut self, kind: InstrKind, dtype: DType, domain: Domain) -> usize {
        self.body.push(Instr {
            kind,
            dtype,
            domain,
            member: self.member,
        });
        self.body.len() - 1
    }
}
