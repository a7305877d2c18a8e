//! The per-segment work of each instruction: elementwise functions over slices or splats,
//! compaction of kept elements, the fold of a row, and copying a value into an output.

use super::super::compact::{Compress, keep_each, keep_positions, keep_slice};
use super::super::error::KernelError;
use super::super::fold::{All, Any, Best, ProdF32, ProdI64, SumF32, SumI64, fold_lane, fold_rows};
use super::super::fresh::Piece;
use super::super::tensor::Element;
use super::eval::OutChunk;
use super::layout::Operand;
use super::slot::{Lane, Segment, Side, Slot, State, View};
use crate::dtype::{DType, Scalar};
use crate::graph::op::{BinaryOp, ReduceOp};
use crate::graph::semantics as element;

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

pub(crate) fn unary(op: crate::graph::op::UnaryOp, a: &View<'_>, out: &mut Slot) -> State {
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

pub(crate) fn binary(
    op: BinaryOp,
    a: &View<'_>,
    b: &View<'_>,
    out: &mut Slot,
) -> Result<State, KernelError> {
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
    // By one non-zero divisor, runs of values at a time.
    if let (Side::Slice(values), Side::Splat(divisor)) = (a.side::<i64>(), b.side::<i64>())
        && divisor != 0
        && matches!(op, BinaryOp::Rem | BinaryOp::FloorDiv)
    {
        let buffer = i64::buffer(out);
        buffer.clear();
        buffer.resize(values.len(), 0);
        element::divide_by_one(op, values, divisor, buffer);
        return Ok(State::Buffer);
    }
    let mut faulted = false;
    let state = map2(a.side::<i64>(), b.side::<i64>(), out, |x, y| {
        g(x, y).unwrap_or_else(|| {
            faulted = true;
            0
        })
    });
    if faulted {
        Err(KernelError::fault_of(op))
    } else {
        Ok(state)
    }
}

pub(crate) fn cast(a: &View<'_>, out: &mut Slot) -> State {
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

pub(crate) fn select(condition: &View<'_>, a: &View<'_>, b: &View<'_>, out: &mut Slot) -> State {
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
    // Both values are read and one is kept by position: written as `if c { x } else { y }`,
    // the optimiser moved each read into its branch, chose between the two addresses and
    // vectorised the loop as gathers from them (a `where` over 10^7 elements of rows of 4 took
    // three times as long as the rest of its kernel).
    let pick = |c: bool, x: T, y: T| [y, x][usize::from(c)];
    let (x, y) = (a.side::<T>(), b.side::<T>());
    let flags = match condition.side::<bool>() {
        // One flag for the whole segment chooses one side whole.
        Side::Splat(c) => match pick_side(c, x, y) {
            Side::Splat(value) => return State::Splat(value.to_scalar()),
            Side::Slice(values) => {
                let buffer = T::buffer(out);
                buffer.clear();
                buffer.extend_from_slice(values);
                return State::Buffer;
            }
        },
        Side::Slice(flags) => flags,
    };
    // Each pairing of slices and splats gets its own loop, so each is a plain blend the
    // compiler vectorises, with no per-element choice between slice and splat.
    let buffer = T::buffer(out);
    buffer.clear();
    match (x, y) {
        (Side::Slice(xs), Side::Slice(ys)) => buffer.extend(
            flags
                .iter()
                .zip(xs.iter().zip(ys))
                .map(|(&c, (&x, &y))| pick(c, x, y)),
        ),
        (Side::Slice(xs), Side::Splat(y)) => {
            buffer.extend(flags.iter().zip(xs).map(|(&c, &x)| pick(c, x, y)));
        }
        (Side::Splat(x), Side::Slice(ys)) => {
            buffer.extend(flags.iter().zip(ys).map(|(&c, &y)| pick(c, x, y)));
        }
        (Side::Splat(x), Side::Splat(y)) => {
            buffer.extend(flags.iter().map(|&c| pick(c, x, y)));
        }
    }
    State::Buffer
}

fn pick_side<'s, T>(c: bool, x: Side<'s, T>, y: Side<'s, T>) -> Side<'s, T> {
    if c { x } else { y }
}

pub(crate) fn reduce_f32(op: ReduceOp, values: &[f32]) -> Scalar {
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

/// [`reduce_f32`] of each consecutive row of `length` elements of `values`, one per element
/// of `out`, for the reductions whose result is an `f32` (`None` for the others).
pub(crate) fn reduce_rows_f32(
    op: ReduceOp,
    values: &[f32],
    length: usize,
    out: &mut [f32],
) -> Option<()> {
    match op {
        ReduceOp::Sum => fold_rows::<f32, SumF32>(values, length, out),
        ReduceOp::Mean => {
            fold_rows::<f32, SumF32>(values, length, out);
            let count = length as f32;
            for total in out.iter_mut() {
                *total /= count;
            }
        }
        ReduceOp::Prod => fold_rows::<f32, ProdF32>(values, length, out),
        ReduceOp::Max => fold_rows::<f32, Best<f32, true>>(values, length, out),
        ReduceOp::Min => fold_rows::<f32, Best<f32, false>>(values, length, out),
        ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any => return None,
    }
    Some(())
}

/// [`reduce_i64`] of each consecutive row of `length` elements, as [`reduce_rows_f32`] (`None`
/// for the reductions whose result is not an `i64`).
pub(crate) fn reduce_rows_i64(
    op: ReduceOp,
    values: &[i64],
    length: usize,
    out: &mut [i64],
) -> Option<()> {
    match op {
        ReduceOp::Sum => fold_rows::<i64, SumI64>(values, length, out),
        ReduceOp::Prod => fold_rows::<i64, ProdI64>(values, length, out),
        ReduceOp::Max => fold_rows::<i64, Best<i64, true>>(values, length, out),
        ReduceOp::Min => fold_rows::<i64, Best<i64, false>>(values, length, out),
        ReduceOp::Mean | ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any => {
            return None;
        }
    }
    Some(())
}

pub(crate) fn reduce_i64(op: ReduceOp, values: &[i64]) -> Scalar {
    Scalar::Int(match op {
        ReduceOp::Sum => fold_lane::<i64, SumI64>(values),
        ReduceOp::Prod => fold_lane::<i64, ProdI64>(values),
        ReduceOp::Max => fold_lane::<i64, Best<i64, true>>(values),
        ReduceOp::Min => fold_lane::<i64, Best<i64, false>>(values),
        ReduceOp::Mean | ReduceOp::Argmax | ReduceOp::Argmin | ReduceOp::All | ReduceOp::Any => 0,
    })
}

pub(crate) fn reduce_bool(op: ReduceOp, values: &[bool]) -> Scalar {
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

/// [`reduce_bool`] of each consecutive row of `length` elements, as [`reduce_rows_f32`]
/// (`None` for the reductions whose result is not a `bool`).
pub(crate) fn reduce_rows_bool(
    op: ReduceOp,
    values: &[bool],
    length: usize,
    out: &mut [bool],
) -> Option<()> {
    match op {
        ReduceOp::All => fold_rows::<bool, All>(values, length, out),
        ReduceOp::Any => fold_rows::<bool, Any>(values, length, out),
        ReduceOp::Max => fold_rows::<bool, Best<bool, true>>(values, length, out),
        ReduceOp::Min => fold_rows::<bool, Best<bool, false>>(values, length, out),
        ReduceOp::Sum | ReduceOp::Mean | ReduceOp::Prod | ReduceOp::Argmax | ReduceOp::Argmin => {
            return None;
        }
    }
    Some(())
}

/// Appends a slot's values for a segment to an output chunk, which a task writes in order
/// (fewer where the chunk ends first, defaults where the value does: after an element error
/// the counts of a kernel that keeps elements may disagree, and the kernel's result is an
/// error anyway).
pub(crate) fn write(
    chunk: &mut OutChunk<'_>,
    slot: &Slot,
    operands: &[Operand<'_>],
    segment: Segment,
) {
    let view = View {
        slot,
        operands,
        segment,
    };
    match chunk {
        OutChunk::F32(out) => write_typed(&view, out),
        OutChunk::I64(out) => write_typed(&view, out),
        OutChunk::Bool(out) => write_typed(&view, out),
        OutChunk::Total => {}
    }
}

/// Appends the segment's values to `out`.
fn write_typed<T: Lane>(view: &View<'_>, out: &mut Piece<'_, T>) {
    let len = view.segment.len;
    match view.side::<T>() {
        Side::Splat(value) => out.repeat(value, len),
        Side::Slice(values) => {
            let values = &values[..len.min(values.len())];
            out.extend(values);
            out.repeat(T::default(), len - values.len());
        }
    }
}

/// The elements of `a` where `mask` holds, in order, into `out`; how many were kept.
/// Compacts without a branch on the mask: every element is written to the next free
/// place, which only advances past a kept one (random masks would mispredict half the
/// branches otherwise).
pub(crate) fn keep(a: &View<'_>, mask: &View<'_>, out: &mut Slot) -> (State, usize) {
    let len = mask.segment.len;
    let flags = match mask.side::<bool>() {
        Side::Splat(false) => return (State::Buffer, 0),
        Side::Splat(true) => return (copy(a, out), len),
        Side::Slice(flags) => flags,
    };
    let kept = match a.slot.dtype {
        DType::F32 => compact(a.side::<f32>(), flags, f32::buffer(out)),
        DType::I64 => compact(a.side::<i64>(), flags, i64::buffer(out)),
        DType::Bool => compact(a.side::<bool>(), flags, bool::buffer(out)),
    };
    (State::Buffer, kept)
}

/// The positions (from `segment.start`) where `mask` holds, in order; how many there are.
pub(crate) fn positions(mask: &View<'_>, out: &mut Slot) -> (State, usize) {
    let Segment { start, len } = mask.segment;
    let buffer = i64::buffer(out);
    let all = start as i64..(start + len) as i64;
    match mask.side::<bool>() {
        Side::Splat(false) => (State::Buffer, 0),
        Side::Splat(true) => {
            buffer.clear();
            buffer.extend(all);
            (State::Buffer, len)
        }
        Side::Slice(flags) => (
            State::Buffer,
            keep_positions(start, flags, room(buffer, flags.len())),
        ),
    }
}

/// A value kept whole (the mask holds everywhere in the segment).
fn copy(a: &View<'_>, out: &mut Slot) -> State {
    match a.slot.dtype {
        DType::F32 => map1(a.side::<f32>(), out, |x| x),
        DType::I64 => map1(a.side::<i64>(), out, |x| x),
        DType::Bool => map1(a.side::<bool>(), out, |x| x),
    }
}

fn compact<T: Lane + Compress>(values: Side<'_, T>, flags: &[bool], out: &mut Vec<T>) -> usize {
    let out = room(out, flags.len());
    match values {
        Side::Splat(value) => keep_each(std::iter::repeat(value), flags, out),
        Side::Slice(values) => keep_slice(values, flags, out),
    }
}

/// `out` grown to at least `len` values, as a slice to write them into.
fn room<T: Copy + Default>(out: &mut Vec<T>, len: usize) -> &mut [T] {
    if out.len() < len {
        out.resize(len, T::default());
    }
    out.as_mut_slice()
}
