//! Computing a fused kernel's instructions over one task's segments.

use super::super::error::{KernelError, format_shape};
use super::lanes::{self, binary, cast, keep, positions, select, unary, write};
use super::layout::{Operand, Values};
use super::slot::{Lane, Segment, Side, Slot, State, View, materialise, zero};
use super::totals::Accumulator;
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{Domain, FusedKernel, InstrKind, OutputKind};
use crate::graph::op::ReduceOp;

/// The segments one task computes and the parts of the outputs it writes.
pub(crate) struct Task<'b> {
    pub segments: Vec<Segment>,
    pub outputs: Vec<OutChunk<'b>>,
}

/// A task's part of an output: elements, rows, kept elements, or nothing (a total,
/// accumulated instead, or the count).
pub(crate) enum OutChunk<'b> {
    F32(&'b mut [f32]),
    I64(&'b mut [i64]),
    Bool(&'b mut [bool]),
    Total,
}

/// What a task leaves: the earliest failing instruction, and its accumulators of totals.
pub(crate) struct TaskResult {
    pub failure: Option<(usize, KernelError)>,
    pub totals: Vec<Option<Scalar>>,
}

/// The per-task scratch: one slot per instruction, which of them hold a value that is the
/// same in every segment (computed once), and how many elements of the current segment the
/// mask kept.
pub(crate) struct Scratch {
    slots: Vec<Slot>,
    settled: Vec<bool>,
    kept: usize,
}

impl Scratch {
    pub fn new(kernel: &FusedKernel) -> Scratch {
        let slots = kernel
            .body
            .iter()
            .map(|instr| Slot::new(instr.dtype))
            .collect();
        let settled = vec![false; kernel.body.len()];
        Scratch {
            slots,
            settled,
            kept: 0,
        }
    }
}

/// What every task shares.
pub(crate) struct Context<'k> {
    pub kernel: &'k FusedKernel,
    pub operands: &'k [Operand<'k>],
    pub shape: &'k [usize],
}

impl Context<'_> {
    pub fn run(&self, mut task: Task<'_>, scratch: &mut Scratch) -> TaskResult {
        let mut result = TaskResult {
            failure: None,
            totals: Vec::new(),
        };
        let mut totals: Vec<Option<Accumulator>> = self
            .kernel
            .outputs
            .iter()
            .map(|output| match output.kind {
                OutputKind::Total(op, value) => {
                    Some(Accumulator::new(op, self.kernel.body[value].dtype))
                }
                OutputKind::Values(_) | OutputKind::Count(_) => None,
            })
            .collect();
        let (mut element_offset, mut kept_offset) = (0, 0);
        for (row, segment) in task.segments.iter().enumerate() {
            self.segment(*segment, scratch, &mut result.failure, None);
            let kept = Segment {
                start: 0,
                len: scratch.kept,
            };
            for ((output, chunk), total) in self
                .kernel
                .outputs
                .iter()
                .zip(&mut task.outputs)
                .zip(&mut totals)
            {
                let (OutputKind::Values(value) | OutputKind::Total(_, value)) = output.kind else {
                    continue;
                };
                let slot = &scratch.slots[value];
                let operands = self.operands;
                match self.kernel.body[value].domain {
                    Domain::Kept => match total {
                        Some(total) => total.push(slot, operands, kept),
                        None => write(chunk, slot, operands, kept, kept_offset, kept.len),
                    },
                    _ if total.is_some() => {
                        if let Some(total) = total {
                            total.push(slot, operands, *segment);
                        }
                    }
                    Domain::Row => write(chunk, slot, operands, *segment, row, 1),
                    Domain::Uniform | Domain::Element => {
                        write(chunk, slot, operands, *segment, element_offset, segment.len);
                    }
                }
            }
            element_offset += segment.len;
            kept_offset += scratch.kept;
        }
        result.totals = totals
            .into_iter()
            .map(|total| total.map(Accumulator::finish))
            .collect();
        result
    }

    /// The mask's flags over `segment`, computing only the instructions it depends on.
    pub fn flags<'s>(
        &'s self,
        segment: Segment,
        scratch: &'s mut Scratch,
        needed: &[bool],
        mask: usize,
    ) -> Side<'s, bool> {
        self.segment(segment, scratch, &mut None, Some(needed));
        let view = View {
            slot: &scratch.slots[mask],
            operands: self.operands,
            segment,
        };
        view.side::<bool>()
    }

    /// Computes every instruction over one segment; an element error is left in `failure`
    /// unless an earlier instruction's is already there.
    pub fn evaluate(
        &self,
        segment: Segment,
        scratch: &mut Scratch,
        failure: &mut Option<(usize, KernelError)>,
    ) {
        self.segment(segment, scratch, failure, None);
    }

    /// Instruction `value`'s values over `segment` (for a kept value, over the kept elements)
    /// after [`Context::evaluate`].
    pub fn view<'s>(&'s self, scratch: &'s Scratch, value: usize, segment: Segment) -> View<'s> {
        View {
            slot: &scratch.slots[value],
            operands: self.operands,
            segment,
        }
    }

    /// Computes every instruction (or those `only` marks) over one segment.
    fn segment(
        &self,
        segment: Segment,
        scratch: &mut Scratch,
        failure: &mut Option<(usize, KernelError)>,
        only: Option<&[bool]>,
    ) {
        scratch.kept = 0;
        for (index, instr) in self.kernel.body.iter().enumerate() {
            if scratch.settled[index] || only.is_some_and(|needed| !needed[index]) {
                continue;
            }
            let (done, rest) = scratch.slots.split_at_mut(index);
            let slot = &mut rest[0];
            // Kept instructions read kept values; those that keep read per-element ones.
            let keeps = matches!(instr.kind, InstrKind::Keep(..) | InstrKind::Position(_));
            let extent = if instr.domain == Domain::Kept && !keeps {
                Segment {
                    start: 0,
                    len: scratch.kept,
                }
            } else {
                segment
            };
            match self.instr(&instr.kind, done, slot, extent) {
                Ok((state, kept)) => {
                    slot.state = state;
                    if keeps {
                        scratch.kept = kept;
                    }
                    scratch.settled[index] = Self::invariant(&instr.kind, state);
                }
                Err(error) => {
                    slot.state = State::Splat(zero(instr.dtype));
                    if failure.as_ref().is_none_or(|(first, _)| index < *first) {
                        *failure = Some((index, error));
                    }
                }
            }
        }
    }

    /// An instruction's value over `segment`, and for one that keeps elements, how many
    /// it kept. Inlined into its one caller, so the result stays in registers (out of line,
    /// moving it through memory stalled every instruction of every segment).
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn instr(
        &self,
        kind: &InstrKind,
        done: &[Slot],
        slot: &mut Slot,
        segment: Segment,
    ) -> Result<(State, usize), KernelError> {
        let operands = self.operands;
        let view = |index: usize| View {
            slot: &done[index],
            operands,
            segment,
        };
        let state = match kind {
            InstrKind::Input(position) => self.input(*position, slot, segment),
            InstrKind::Int(dim) => State::Splat(Scalar::Int(dim.known().ok_or_else(|| {
                KernelError::Value("a size was not resolved before running".into())
            })?)),
            InstrKind::Float(value) => State::Splat(Scalar::Float(*value)),
            InstrKind::Bool(value) => State::Splat(Scalar::Bool(*value)),
            InstrKind::Unary(op, a) => unary(*op, &view(*a), slot),
            InstrKind::Binary(op, a, b) => binary(*op, &view(*a), &view(*b), slot)?,
            InstrKind::Cast(a) => cast(&view(*a), slot),
            InstrKind::Where(c, a, b) => select(&view(*c), &view(*a), &view(*b), slot),
            InstrKind::Reduce(op, a) => self.reduce(*op, &view(*a), slot)?,
            InstrKind::Keep(a, mask) => return Ok(keep(&view(*a), &view(*mask), slot)),
            InstrKind::Position(mask) => return Ok(positions(&view(*mask), slot)),
        };
        Ok((state, 0))
    }

    /// Whether an instruction's value is the same in every segment: a constant, or an
    /// operand read as its one element or as the slice of a full-shape operand (a segment's
    /// slice is found when it is read), not gathered into the slot's buffer.
    fn invariant(kind: &InstrKind, state: State) -> bool {
        match kind {
            InstrKind::Int(_) | InstrKind::Float(_) | InstrKind::Bool(_) => true,
            InstrKind::Input(_) => !matches!(state, State::Buffer),
            InstrKind::Unary(..)
            | InstrKind::Binary(..)
            | InstrKind::Cast(_)
            | InstrKind::Where(..)
            | InstrKind::Reduce(..)
            | InstrKind::Keep(..)
            | InstrKind::Position(_) => false,
        }
    }

    fn input(&self, position: usize, slot: &mut Slot, segment: Segment) -> State {
        let operand = &self.operands[position];
        match operand.values() {
            Values::F32(data) => gathered(operand, segment, data, &mut slot.f32s, position),
            Values::I64(data) => gathered(operand, segment, data, &mut slot.i64s, position),
            Values::Bool(data) => gathered(operand, segment, data, &mut slot.bools, position),
        }
    }

    /// A reduction of the row the segment covers.
    fn reduce(
        &self,
        op: ReduceOp,
        input: &View<'_>,
        slot: &mut Slot,
    ) -> Result<State, KernelError> {
        let len = input.segment.len;
        if len == 0 && op.needs_elements() {
            return Err(KernelError::Empty(format!(
                "cannot take {} over an empty extent of a tensor of shape {}",
                op.name(),
                format_shape(self.shape)
            )));
        }
        let value = match input.slot.dtype {
            DType::F32 => lanes::reduce_f32(op, materialise::<f32>(input, &mut slot.f32s)),
            DType::I64 => lanes::reduce_i64(op, materialise::<i64>(input, &mut slot.i64s)),
            DType::Bool => lanes::reduce_bool(op, materialise::<bool>(input, &mut slot.bools)),
        };
        Ok(State::Splat(value))
    }
}

/// An operand's elements for a segment: one value when it has a single element (it then
/// reads the same everywhere, kept elements included), the operand's own slice when it has
/// the iteration shape, else gathered into the slot's buffer.
fn gathered<T: Lane>(
    operand: &Operand<'_>,
    segment: Segment,
    data: &[T],
    buffer: &mut Vec<T>,
    position: usize,
) -> State {
    if let [value] = data {
        return State::Splat(value.to_scalar());
    }
    if operand.is_full() {
        return State::Operand(position);
    }
    match operand.side(segment, data, buffer) {
        Side::Splat(value) => State::Splat(value.to_scalar()),
        Side::Slice(_) => State::Buffer,
    }
}
