//! Computing a fused kernel's instructions over one task's segments.

use super::super::error::{KernelError, format_shape};
use super::super::fold::{All, Any, Best, Fold, ProdF32, ProdI64, SumF32, SumI64, fold_lane};
use super::super::tensor::Element;
use super::layout::{Operand, Values};
use crate::dtype::{DType, Scalar};
use crate::graph::fused::{FusedKernel, InstrKind};
use crate::graph::op::{BinaryOp, ReduceOp};
use crate::graph::semantics::{self as element, Fault};

/// A stretch of the iteration space computed at once: a chunk, or one row.
#[derive(Clone, Copy, Debug)]
pub(crate) struct Segment {
    pub start: usize,
    pub len: usize,
}

/// The segments one task computes and the parts of the outputs it writes.
pub(crate) struct Task<'b> {
    pub segments: Vec<Segment>,
    pub outputs: Vec<OutChunk<'b>>,
}

/// A task's part of an output: elements, rows, or nothing (a total, accumulated instead).
pub(crate) enum OutChunk<'b> {
    F32(&'b mut [f32]),
    I64(&'b mut [i64]),
    Bool(&'b mut [bool]),
    Total,
}

impl OutChunk<'_> {
    pub fn empty(dtype: DType) -> OutChunk<'static> {
        match dtype {
            DType::F32 => OutChunk::F32(&mut []),
            DType::I64 => OutChunk::I64(&mut []),
            DType::Bool => OutChunk::Bool(&mut []),
        }
    }
}

/// What a task leaves: the earliest failing instruction, and its accumulators of totals.
pub(crate) struct TaskResult {
    pub failure: Option<(usize, KernelError)>,
    pub totals: Vec<Option<Scalar>>,
}

/// One side of an elementwise function: one value for the whole segment, or one per element.
pub(crate) enum Side<'s, T> {
    Splat(T),
    Slice(&'s [T]),
}

/// An instruction's value over the current segment.
#[derive(Clone, Copy)]
enum State {
    Splat(Scalar),
    /// The slice of a full-shape operand.
    Operand(usize),
    /// In the slot's buffer.
    Buffer,
}

/// An instruction's working storage, reused from segment to segment.
struct Slot {
    state: State,
    dtype: DType,
    f32s: Vec<f32>,
    i64s: Vec<i64>,
    bools: Vec<bool>,
}

/// The per-task scratch: one slot per instruction.
pub(crate) struct Scratch {
    slots: Vec<Slot>,
}

impl Scratch {
    pub fn new(kernel: &FusedKernel) -> Scratch {
        let slots = kernel
            .body
            .iter()
            .map(|instr| Slot {
                state: State::Buffer,
                dtype: instr.dtype,
                f32s: Vec::new(),
                i64s: Vec::new(),
                bools: Vec::new(),
            })
            .collect();
        Scratch { slots }
    }
}

/// An element type of the instructions: how to find its values in slots and operands.
trait Lane: Element {
    fn buffer(slot: &mut Slot) -> &mut Vec<Self>;
    fn values(slot: &Slot) -> &[Self];
    fn data<'a>(values: &'a Values<'_>) -> Option<&'a [Self]>;
}

macro_rules! lane {
    ($t:ty, $field:ident, $variant:ident) => {
        impl Lane for $t {
            fn buffer(slot: &mut Slot) -> &mut Vec<$t> {
                &mut slot.$field
            }
            fn values(slot: &Slot) -> &[$t] {
                &slot.$field
            }
            fn data<'a>(values: &'a Values<'_>) -> Option<&'a [$t]> {
                match values {
                    Values::$variant(data) => Some(data),
                    _ => None,
                }
            }
        }
    };
}

lane!(f32, f32s, F32);
lane!(i64, i64s, I64);
lane!(bool, bools, Bool);

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
            .map(|output| {
                output
                    .reduce
                    .map(|op| Accumulator::new(op, self.kernel.body[output.value].dtype))
            })
            .collect();
        let mut element_offset = 0;
        for (row, segment) in task.segments.iter().enumerate() {
            self.segment(*segment, scratch, &mut result.failure);
            for ((output, chunk), total) in self
                .kernel
                .outputs
                .iter()
                .zip(&mut task.outputs)
                .zip(&mut totals)
            {
                let slot = &scratch.slots[output.value];
                let operands = self.operands;
                if let Some(total) = total {
                    total.push(slot, operands, *segment);
                } else if self.kernel.body[output.value].row {
                    write(chunk, slot, operands, *segment, row, 1);
                } else {
                    write(chunk, slot, operands, *segment, element_offset, segment.len);
                }
            }
            element_offset += segment.len;
        }
        result.totals = totals
            .into_iter()
            .map(|total| total.map(Accumulator::finish))
            .collect();
        result
    }

    /// Computes every instruction over one segment.
    fn segment(
        &self,
        segment: Segment,
        scratch: &mut Scratch,
        failure: &mut Option<(usize, KernelError)>,
    ) {
        for (index, instr) in self.kernel.body.iter().enumerate() {
            let (done, rest) = scratch.slots.split_at_mut(index);
            let slot = &mut rest[0];
            let computed = self.instr(&instr.kind, done, slot, segment);
            match computed {
                Ok(state) => slot.state = state,
                Err(error) => {
                    slot.state = State::Splat(zero(instr.dtype));
                    if failure.as_ref().is_none_or(|(first, _)| index < *first) {
                        *failure = Some((index, error));
                    }
                }
            }
        }
    }

    fn instr(
        &self,
        kind: &InstrKind,
        done: &[Slot],
        slot: &mut Slot,
        segment: Segment,
    ) -> Result<State, KernelError> {
        let operands = self.operands;
        let view = |index: usize| View {
            slot: &done[index],
            operands,
            segment,
        };
        Ok(match kind {
            InstrKind::Input(position) => self.input(*position, slot, segment),
            InstrKind::Int(dim) => State::Splat(Scalar::Int(dim.known().ok_or_else(|| {
                KernelError::Value("a size was not resolved before running".into())
            })?)),
            InstrKind::Float(value) => State::Splat(Scalar::Float(*value)),
            InstrKind::Bool(value) => State::Splat(Scalar::Bool(*value)),
            InstrKind::Unary(op, a) => unary(*op, &view(*a), slot),
            InstrKind::Binary(op, a, b) => return binary(*op, &view(*a), &view(*b), slot),
            InstrKind::Cast(a) => cast(&view(*a), slot),
            InstrKind::Where(c, a, b) => select(&view(*c), &view(*a), &view(*b), slot),
            InstrKind::Reduce(op, a) => return self.reduce(*op, &view(*a), slot),
        })
    }

    fn input(&self, position: usize, slot: &mut Slot, segment: Segment) -> State {
        let operand = &self.operands[position];
        if operand.is_full() {
            return State::Operand(position);
        }
        match operand.values() {
            Values::F32(data) => gathered(operand, segment, data, &mut slot.f32s),
            Values::I64(data) => gathered(operand, segment, data, &mut slot.i64s),
            Values::Bool(data) => gathered(operand, segment, data, &mut slot.bools),
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
            DType::F32 => reduce_f32(op, materialise::<f32>(input, &mut slot.f32s)),
            DType::I64 => reduce_i64(op, materialise::<i64>(input, &mut slot.i64s)),
            DType::Bool => reduce_bool(op, materialise::<bool>(input, &mut slot.bools)),
        };
        Ok(State::Splat(value))
    }
}

fn gathered<T: Lane>(
    operand: &Operand<'_>,
    segment: Segment,
    data: &[T],
    buffer: &mut Vec<T>,
) -> State {
    match operand.side(segment, data, buffer) {
        Side::Splat(value) => State::Splat(value.to_scalar()),
        Side::Slice(_) => State::Buffer,
    }
}

/// A slot's value seen from a later instruction.
struct View<'s> {
    slot: &'s Slot,
    operands: &'s [Operand<'s>],
    segment: Segment,
}

impl<'s> View<'s> {
    fn side<T: Lane>(&self) -> Side<'s, T> {
        match self.slot.state {
            State::Splat(value) => Side::Splat(T::from_scalar(value)),
            State::Operand(position) => {
                let data = T::data(self.operands[position].values()).unwrap_or_default();
                let end = (self.segment.start + self.segment.len).min(data.len());
                Side::Slice(&data[self.segment.start.min(end)..end])
            }
            State::Buffer => Side::Slice(T::values(self.slot)),
        }
    }
}

/// A whole view as a slice (a splat repeated over the segment).
fn materialise<'s, T: Lane>(view: &View<'s>, buffer: &'s mut Vec<T>) -> &'s [T] {
    match view.side::<T>() {
        Side::Slice(values) => values,
        Side::Splat(value) => {
            buffer.clear();
            buffer.extend(std::iter::repeat_n(value, view.segment.len));
            buffer
        }
    }
}

fn zero(dtype: DType) -> Scalar {
    match dtype {
        DType::F32 => Scalar::Float(0.0),
        DType::I64 => Scalar::Int(0),
        DType::Bool => Scalar::Bool(false),
    }
}

fn map1<A: Lane, O: Lane>(a: Side<'_, A>, out: &mut Slot, f: impl Fn(A) -> O) -> State {
    match a {
        Side::Splat(x) => State::Splat(f(x).to_scalar()),
        Side::Slice(xs) => {
            let buffer = O::buffer(out);
            buffer.clear();
            buffer.extend(xs.iter().map(|&x| f(x)));
            State::Buffer
        }
    }
}

fn map2<A: Lane, O: Lane>(
    a: Side<'_, A>,
    b: Side<'_, A>,
    out: &mut Slot,
    mut f: impl FnMut(A, A) -> O,
) -> State {
    let buffer = O::buffer(out);
    buffer.clear();
    match (a, b) {
        (Side::Splat(x), Side::Splat(y)) => return State::Splat(f(x, y).to_scalar()),
        (Side::Slice(xs), Side::Splat(y)) => buffer.extend(xs.iter().map(|&x| f(x, y))),
        (Side::Splat(x), Side::Slice(ys)) => buffer.extend(ys.iter().map(|&y| f(x, y))),
        (Side::Slice(xs), Side::Slice(ys)) => {
            buffer.extend(xs.iter().zip(ys).map(|(&x, &y)| f(x, y)));
        }
    }
    State::Buffer
}

fn unary(op: crate::graph::op::UnaryOp, a: &View<'_>, out: &mut Slot) -> State {
    match a.slot.dtype {
        DType::F32 => element::float_unary!(
            op,
            |f| map1(a.side::<f32>(), out, f),
            element::float_predicate!(
                op,
                |f| map1(a.side::<f32>(), out, f),
                map1(a.side::<f32>(), out, |x| x == 0.0)
            )
        ),
        DType::I64 => element::int_unary!(
            op,
            |f| map1(a.side::<i64>(), out, f),
            map1(a.side::<i64>(), out, |x| x == 0)
        ),
        DType::Bool => map1(a.side::<bool>(), out, |x| !x),
    }
}

fn binary(op: BinaryOp, a: &View<'_>, b: &View<'_>, out: &mut Slot) -> Result<State, KernelError> {
    match a.slot.dtype {
        DType::F32 => Ok(element::comparison!(
            op,
            f32,
            |f| map2(a.side::<f32>(), b.side::<f32>(), out, f),
            element::float_binary!(
                op,
                |f| map2(a.side::<f32>(), b.side::<f32>(), out, f),
                map2(a.side::<f32>(), b.side::<f32>(), out, |_, _| 0.0f32)
            )
        )),
        DType::I64 => element::comparison!(
            op,
            i64,
            |f| Ok(map2(a.side::<i64>(), b.side::<i64>(), out, f)),
            element::int_binary!(
                op,
                |f| Ok(map2(a.side::<i64>(), b.side::<i64>(), out, f)),
                |g| fallible(op, a, b, out, g),
                Ok(map2(a.side::<i64>(), b.side::<i64>(), out, |_, _| 0i64))
            )
        ),
        DType::Bool => Ok(element::comparison!(
            op,
            bool,
            |f| map2(a.side::<bool>(), b.side::<bool>(), out, f),
            element::bool_binary!(
                op,
                |f| map2(a.side::<bool>(), b.side::<bool>(), out, f),
                map2(a.side::<bool>(), b.side::<bool>(), out, |_, _| false)
            )
        )),
    }
}

fn fallible(
    op: BinaryOp,
    a: &View<'_>,
    b: &View<'_>,
    out: &mut Slot,
    g: impl Fn(i64, i64) -> Option<i64>,
) -> Result<State, KernelError> {
    let mut faulted = false;
    let state = map2(a.side::<i64>(), b.side::<i64>(), out, |x, y| {
        g(x, y).unwrap_or_else(|| {
            faulted = true;
            0
        })
    });
    if faulted {
        Err(KernelError::from(Fault::of(op)))
    } else {
        Ok(state)
    }
}

fn cast(a: &View<'_>, out: &mut Slot) -> State {
    match (a.slot.dtype, out.dtype) {
        (DType::F32, DType::I64) => map1(a.side::<f32>(), out, f32::to_i64),
        (DType::F32, DType::Bool) => map1(a.side::<f32>(), out, f32::to_bool),
        (DType::I64, DType::F32) => map1(a.side::<i64>(), out, i64::to_f32),
        (DType::I64, DType::Bool) => map1(a.side::<i64>(), out, i64::to_bool),
        (DType::Bool, DType::F32) => map1(a.side::<bool>(), out, bool::to_f32),
        (DType::Bool, DType::I64) => map1(a.side::<bool>(), out, bool::to_i64),
        (DType::F32, DType::F32) => map1(a.side::<f32>(), out, |x| x),
        (DType::I64, DType::I64) => map1(a.side::<i64>(), out, |x| x),
        (DType::Bool, DType::Bool) => map1(a.side::<bool>(), out, |x| x),
    }
}

fn select(condition: &View<'_>, a: &View<'_>, b: &View<'_>, out: &mut Slot) -> State {
    match out.dtype {
        DType::F32 => select_typed::<f32>(condition, a, b, out),
        DType::I64 => select_typed::<i64>(condition, a, b, out),
        DType::Bool => select_typed::<bool>(condition, a, b, out),
    }
}

fn select_typed<T: Lane>(
    condition: &View<'_>,
    a: &View<'_>,
    b: &View<'_>,
    out: &mut Slot,
) -> State {
    let pick = |c: bool, x: T, y: T| if c { x } else { y };
    let (c, x, y) = (condition.side::<bool>(), a.side::<T>(), b.side::<T>());
    if let (Side::Splat(c), Side::Splat(x), Side::Splat(y)) = (&c, &x, &y) {
        return State::Splat(pick(*c, *x, *y).to_scalar());
    }
    let len = condition.segment.len;
    let at = |side: &Side<'_, T>, index: usize| match side {
        Side::Splat(value) => *value,
        Side::Slice(values) => values[index],
    };
    let flag = |index: usize| match &c {
        Side::Splat(value) => *value,
        Side::Slice(values) => values[index],
    };
    let buffer = T::buffer(out);
    buffer.clear();
    buffer.extend((0..len).map(|index| pick(flag(index), at(&x, index), at(&y, index))));
    State::Buffer
}

fn reduce_f32(op: ReduceOp, values: &[f32]) -> Scalar {
    let value = match op {
        ReduceOp::Sum => fold_lane::<f32, SumF32>(values),
        ReduceOp::Mean => fold_lane::<f32, SumF32>(values) / values.len() as f32,
        ReduceOp::Prod => fold_lane::<f32, ProdF32>(values),
        ReduceOp::Max => fold_lane::<f32, Best<f32, true>>(values),
        ReduceOp::Min => fold_lane::<f32, Best<f32, false>>(values),
        ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any => 0.0,
    };
    Scalar::Float(f64::from(value))
}

fn reduce_i64(op: ReduceOp, values: &[i64]) -> Scalar {
    Scalar::Int(match op {
        ReduceOp::Sum => fold_lane::<i64, SumI64>(values),
        ReduceOp::Prod => fold_lane::<i64, ProdI64>(values),
        ReduceOp::Max => fold_lane::<i64, Best<i64, true>>(values),
        ReduceOp::Min => fold_lane::<i64, Best<i64, false>>(values),
        ReduceOp::Mean | ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any => 0,
    })
}

fn reduce_bool(op: ReduceOp, values: &[bool]) -> Scalar {
    Scalar::Bool(match op {
        ReduceOp::All => fold_lane::<bool, All>(values),
        ReduceOp::Any => fold_lane::<bool, Any>(values),
        ReduceOp::Max => fold_lane::<bool, Best<bool, true>>(values),
        ReduceOp::Min => fold_lane::<bool, Best<bool, false>>(values),
        ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Prod | ReduceOp::Argmax | ReduceOp::Argmin => {
            false
        }
    })
}

/// Writes a slot's value for a segment into an output chunk at `offset`, `len` elements.
fn write(
    chunk: &mut OutChunk<'_>,
    slot: &Slot,
    operands: &[Operand<'_>],
    segment: Segment,
    offset: usize,
    len: usize,
) {
    let view = View {
        slot,
        operands,
        segment,
    };
    match chunk {
        OutChunk::F32(out) => write_typed(&view, &mut out[offset..offset + len]),
        OutChunk::I64(out) => write_typed(&view, &mut out[offset..offset + len]),
        OutChunk::Bool(out) => write_typed(&view, &mut out[offset..offset + len]),
        OutChunk::Total => {}
    }
}

fn write_typed<T: Lane>(view: &View<'_>, out: &mut [T]) {
    match view.side::<T>() {
        Side::Splat(value) => out.fill(value),
        Side::Slice(values) => out.copy_from_slice(&values[..out.len()]),
    }
}

/// The fold of a total output over one task's elements.
enum Accumulator {
    SumF32(SumF32),
    MeanF32(SumF32),
    ProdF32(ProdF32),
    MaxF32(Best<f32, true>),
    MinF32(Best<f32, false>),
    SumI64(SumI64),
    ProdI64(ProdI64),
    MaxI64(Best<i64, true>),
    MinI64(Best<i64, false>),
    All(All),
    Any(Any),
    MaxBool(Best<bool, true>),
    MinBool(Best<bool, false>),
}

impl Accumulator {
    fn new(op: ReduceOp, dtype: DType) -> Accumulator {
        match (op, dtype) {
            (ReduceOp::Mean, _) => Accumulator::MeanF32(SumF32::default()),
            (ReduceOp::Prod, DType::F32) => Accumulator::ProdF32(ProdF32::default()),
            (ReduceOp::Max, DType::F32) => Accumulator::MaxF32(Best::default()),
            (ReduceOp::Min, DType::F32) => Accumulator::MinF32(Best::default()),
            (
                ReduceOp::Sum | ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any,
                DType::F32,
            ) => Accumulator::SumF32(SumF32::default()),
            (ReduceOp::Prod, DType::I64) => Accumulator::ProdI64(ProdI64::default()),
            (ReduceOp::Max, DType::I64) => Accumulator::MaxI64(Best::default()),
            (ReduceOp::Min, DType::I64) => Accumulator::MinI64(Best::default()),
            (_, DType::I64) => Accumulator::SumI64(SumI64::default()),
            (ReduceOp::Any, DType::Bool) => Accumulator::Any(Any::default()),
            (ReduceOp::Max, DType::Bool) => Accumulator::MaxBool(Best::default()),
            (ReduceOp::Min, DType::Bool) => Accumulator::MinBool(Best::default()),
            (_, DType::Bool) => Accumulator::All(All::default()),
        }
    }

    fn push(&mut self, slot: &Slot, operands: &[Operand<'_>], segment: Segment) {
        let view = View {
            slot,
            operands,
            segment,
        };
        let mut spare = Vec::new();
        match self {
            Accumulator::SumF32(fold) | Accumulator::MeanF32(fold) => {
                fold.push(materialise::<f32>(&view, &mut spare));
            }
            Accumulator::ProdF32(fold) => fold.push(materialise::<f32>(&view, &mut spare)),
            Accumulator::MaxF32(fold) => fold.push(materialise::<f32>(&view, &mut spare)),
            Accumulator::MinF32(fold) => fold.push(materialise::<f32>(&view, &mut spare)),
            Accumulator::SumI64(fold) => fold.push(materialise::<i64>(&view, &mut Vec::new())),
            Accumulator::ProdI64(fold) => fold.push(materialise::<i64>(&view, &mut Vec::new())),
            Accumulator::MaxI64(fold) => fold.push(materialise::<i64>(&view, &mut Vec::new())),
            Accumulator::MinI64(fold) => fold.push(materialise::<i64>(&view, &mut Vec::new())),
            Accumulator::All(fold) => fold.push(materialise::<bool>(&view, &mut Vec::new())),
            Accumulator::Any(fold) => fold.push(materialise::<bool>(&view, &mut Vec::new())),
            Accumulator::MaxBool(fold) => fold.push(materialise::<bool>(&view, &mut Vec::new())),
            Accumulator::MinBool(fold) => fold.push(materialise::<bool>(&view, &mut Vec::new())),
        }
    }

    /// The task's partial result (a mean's partial is its sum).
    fn finish(self) -> Scalar {
        match self {
            Accumulator::SumF32(fold) | Accumulator::MeanF32(fold) => fold.finish().to_scalar(),
            Accumulator::ProdF32(fold) => fold.finish().to_scalar(),
            Accumulator::MaxF32(fold) => fold.finish().to_scalar(),
            Accumulator::MinF32(fold) => fold.finish().to_scalar(),
            Accumulator::SumI64(fold) => fold.finish().to_scalar(),
            Accumulator::ProdI64(fold) => fold.finish().to_scalar(),
            Accumulator::MaxI64(fold) => fold.finish().to_scalar(),
            Accumulator::MinI64(fold) => fold.finish().to_scalar(),
            Accumulator::All(fold) => fold.finish().to_scalar(),
            Accumulator::Any(fold) => fold.finish().to_scalar(),
            Accumulator::MaxBool(fold) => fold.finish().to_scalar(),
            Accumulator::MinBool(fold) => fold.finish().to_scalar(),
        }
    }
}

/// The totals of a kernel from its tasks' partial results, folded in task order as the
/// reduce kernel folds its blocks. `Err` for an extremum over no elements.
pub(crate) fn combine_totals(
    kernel: &FusedKernel,
    results: &[TaskResult],
    numel: usize,
    shape: &[usize],
) -> Result<Vec<Option<Scalar>>, KernelError> {
    kernel
        .outputs
        .iter()
        .enumerate()
        .map(|(index, output)| {
            let Some(op) = output.reduce else {
                return Ok(None);
            };
            let dtype = kernel.body[output.value].dtype;
            let partials: Vec<Scalar> = results
                .iter()
                .filter_map(|result| result.totals.get(index).copied().flatten())
                .collect();
            if partials.is_empty() && op.needs_elements() {
                return Err(KernelError::InMember {
                    member: output.member,
                    error: Box::new(KernelError::Empty(format!(
                        "cannot take {} over an empty extent of a tensor of shape {}",
                        op.name(),
                        format_shape(shape)
                    ))),
                });
            }
            let total = match partials.as_slice() {
                [only] => *only,
                _ => combine(op, dtype, &partials),
            };
            Ok(Some(match (op, total) {
                (ReduceOp::Mean, Scalar::Float(sum)) => {
                    Scalar::Float(f64::from(sum as f32 / numel as f32))
                }
                _ => total,
            }))
        })
        .collect()
}

/// Folds partial results as the reduce kernel folds its block results.
fn combine(op: ReduceOp, dtype: DType, partials: &[Scalar]) -> Scalar {
    match dtype {
        DType::F32 => {
            let values: Vec<f32> = partials.iter().map(|x| f32::from_scalar(*x)).collect();
            let op = if op == ReduceOp::Mean {
                ReduceOp::Sum
            } else {
                op
            };
            reduce_f32(op, &values)
        }
        DType::I64 => {
            let values: Vec<i64> = partials.iter().map(|x| x.as_i64()).collect();
            reduce_i64(op, &values)
        }
        DType::Bool => {
            let values: Vec<bool> = partials.iter().map(|x| x.as_bool()).collect();
            reduce_bool(op, &values)
        }
    }
}
