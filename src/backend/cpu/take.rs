//! Taking rows of a contiguous array by position: the copy behind index_select, indexing
//! by index tensors and masks, and repeat_interleave.
//!
//! A contiguous array is seen as `[outer, size, inner]` around the dim taken from, so each
//! taken position is one run of `inner` consecutive elements (one element when the dim is
//! the last) and the copy moves whole slices, over fixed chunks of the output on rayon.
//! The copy checks every position as it goes; only when one is out of range are the
//! indices searched, in order, for the first bad one, so errors name the same index as an
//! element-by-element loop would, without a separate pass over valid indices.

use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{ArcArray, Axis, CowArray, IxDyn};
use rayon::prelude::*;

use super::elementwise::PARALLEL_THRESHOLD;
use super::error::{KernelError, Result, checked_numel};
use super::tensor::{Element, Tensor};
use crate::backend::memory::reserve_values;

/// Output elements per parallel unit of the copy.
const CHUNK: usize = 1 << 15;

/// A contiguous array seen as `[outer, size, inner]` around the dim taken from.
pub(crate) struct Rows<'a, T> {
    pub data: &'a [T],
    pub outer: usize,
    pub size: usize,
    pub inner: usize,
}

impl<'a, T> Rows<'a, T> {
    /// `data`, in standard layout with `shape`, seen around `dim` (which must exist).
    pub fn around(data: &'a [T], shape: &[usize], dim: usize) -> Result<Rows<'a, T>> {
        Ok(Rows {
            data,
            outer: checked_numel(&shape[..dim])?,
            size: shape[dim],
            inner: checked_numel(&shape[dim + 1..])?,
        })
    }
}

/// Where an index takes from, and the error for one that is out of range. `position`
/// must map every bad index to a position at or past the size (`usize::MAX` will do).
pub(crate) struct Positions<P, E> {
    pub position: P,
    pub error: E,
}

/// Positions the kernels listed themselves, each its own index and all in range.
pub(crate) type Listed = Positions<fn(usize) -> usize, fn(usize) -> KernelError>;

/// Positions that are their own indices, for lists the kernels built themselves.
pub(crate) fn listed_positions() -> Listed {
    Positions {
        position: |position| position,
        error: |position| KernelError::Shape(format!("position {position} is out of range")),
    }
}

/// The slices of `array` along `dim` at the positions of `indices`, in that order.
/// Arrays in standard layout take the fast path; other views are checked first and
/// taken by ndarray's `select`.
pub(crate) fn take_along<T, I, P, E>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    indices: &[I],
    positions: &Positions<P, E>,
) -> Result<Tensor>
where
    T: Element,
    I: Copy + Send + Sync,
    P: Fn(I) -> usize + Sync,
    E: Fn(I) -> KernelError,
{
    let size = array.shape()[dim];
    let mut shape = array.shape().to_vec();
    shape[dim] = indices.len();
    if let Err(error) = checked_numel(&shape) {
        check_all(indices, size, positions)?;
        return Err(error);
    }
    if indices.is_empty() {
        return Tensor::from_vec(&shape, Vec::<T>::new());
    }
    if shape.contains(&0) {
        // Nothing to copy where another dim is empty, but the indices are checked all the
        // same, as PyTorch checks them (and as the GPU does).
        check_all(indices, size, positions)?;
        return Tensor::from_vec(&shape, Vec::<T>::new());
    }
    let Some(data) = array.as_slice() else {
        check_all(indices, size, positions)?;
        let listed: Vec<usize> = indices
            .iter()
            .map(|&index| (positions.position)(index))
            .collect();
        return Ok(T::wrap(array.select(Axis(dim), &listed).into_shared()));
    };
    let rows = Rows::around(data, array.shape(), dim)?;
    match take_rows(&rows, indices, &positions.position) {
        Some(values) => Tensor::from_vec(&shape, values),
        None => check_all(indices, size, positions)
            .and(Err(KernelError::Shape("an index is out of range".into()))),
    }
}

/// The error for the first index, in order, whose position is not below `size`.
pub(crate) fn check_all<I, P, E>(
    indices: &[I],
    size: usize,
    positions: &Positions<P, E>,
) -> Result<()>
where
    I: Copy + Send + Sync,
    P: Fn(I) -> usize + Sync,
    E: Fn(I) -> KernelError,
{
    let position = &positions.position;
    match first_invalid(indices, |index| position(index) < size) {
        Some(index) => Err((positions.error)(index)),
        None => Ok(()),
    }
}

/// The elements of `array` in row-major order, copied only when it is not in standard
/// layout already (the copy is scratch beside the reserved results: it is asked for first).
pub(crate) fn standard<T: Clone>(array: &ArcArray<T, IxDyn>) -> Result<CowArray<'_, T, IxDyn>> {
    if !array.is_standard_layout() {
        reserve_values::<T>(array.len())?;
    }
    Ok(array.as_standard_layout())
}

/// The elements of a standard-layout array as a slice.
pub(crate) fn as_slice<'a, T>(array: &'a CowArray<'_, T, IxDyn>) -> Result<&'a [T]> {
    array
        .as_slice()
        .ok_or_else(|| KernelError::Shape("expected an array in standard layout".into()))
}

/// The first element of `items`, in order, that `valid` refuses. Large inputs are checked
/// a chunk at a time in parallel (rayon's per-item `position_first` costs more than the
/// checks), and only the first failing chunk is searched for the element.
pub(crate) fn first_invalid<I>(items: &[I], valid: impl Fn(I) -> bool + Sync) -> Option<I>
where
    I: Copy + Send + Sync,
{
    let all_valid = |chunk: &[I]| chunk.iter().fold(true, |all, &item| all & valid(item));
    let chunk = if items.len() >= PARALLEL_THRESHOLD {
        items
            .par_chunks(CHUNK)
            .find_first(|chunk| !all_valid(chunk))
    } else if all_valid(items) {
        None
    } else {
        Some(items)
    };
    chunk?.iter().copied().find(|&item| !valid(item))
}

/// `out[o, j, :] = rows[o, position(indices[j]), :]` for every `o` and `j`, in row-major
/// order, or `None` when a position is not below `rows.size`.
pub(crate) fn take_rows<T, I>(
    rows: &Rows<'_, T>,
    indices: &[I],
    position: &(impl Fn(I) -> usize + Sync),
) -> Option<Vec<T>>
where
    T: Copy + Default + Send + Sync,
    I: Copy + Send + Sync,
{
    if rows.outer == 1 && rows.inner == 1 {
        return take_elements(rows.data, indices, position);
    }
    let total = rows.outer * indices.len() * rows.inner;
    let mut out = vec![T::default(); total];
    if total == 0 {
        return Some(out);
    }
    let rows_per_chunk = (CHUNK / rows.inner).max(1);
    let copy = |(chunk_index, chunk): (usize, &mut [T])| {
        copy_chunk(rows, indices, position, chunk_index * rows_per_chunk, chunk)
    };
    let chunk_len = rows_per_chunk * rows.inner;
    let in_range = if total >= PARALLEL_THRESHOLD {
        out.par_chunks_mut(chunk_len)
            .enumerate()
            .map(copy)
            .reduce(|| true, |a, b| a & b)
    } else {
        out.chunks_mut(chunk_len)
            .enumerate()
            .map(copy)
            .fold(true, |a, b| a & b)
    };
    in_range.then_some(out)
}

/// `data[position(index)]` for each index, collected straight into the result (no
/// zero-filled buffer to write over).
fn take_elements<T, I>(
    data: &[T],
    indices: &[I],
    position: &(impl Fn(I) -> usize + Sync),
) -> Option<Vec<T>>
where
    T: Copy + Default + Send + Sync,
    I: Copy + Send + Sync,
{
    let out_of_range = AtomicBool::new(false);
    let element = |&index: &I| {
        data.get(position(index)).copied().unwrap_or_else(|| {
            out_of_range.store(true, Ordering::Relaxed);
            T::default()
        })
    };
    let mut out = Vec::new();
    if indices.len() >= PARALLEL_THRESHOLD {
        let elements = indices.par_iter().with_min_len(CHUNK).map(element);
        elements.collect_into_vec(&mut out);
    } else {
        out = indices.iter().map(element).collect();
    }
    (!out_of_range.into_inner()).then_some(out)
}

/// Fills `out`, which holds the output rows from `first_row` on; `false` when a position
/// is out of range.
fn copy_chunk<T: Copy, I: Copy>(
    rows: &Rows<'_, T>,
    indices: &[I],
    position: &impl Fn(I) -> usize,
    first_row: usize,
    out: &mut [T],
) -> bool {
    let count = indices.len();
    let (mut outer, mut taken) = (first_row / count, first_row % count);
    let mut in_range = true;
    for slot in out.chunks_mut(rows.inner) {
        let at = indices
            .get(taken)
            .map_or(usize::MAX, |&index| position(index));
        in_range &= at < rows.size;
        let start = (outer * rows.size)
            .saturating_add(at)
            .saturating_mul(rows.inner);
        if let Some(source) = rows.data.get(start..start.saturating_add(rows.inner)) {
            slot.copy_from_slice(source);
        }
        taken += 1;
        if taken == count {
            (outer, taken) = (outer + 1, 0);
        }
    }
    in_range
}

#[cfg(test)]
mod tests;
