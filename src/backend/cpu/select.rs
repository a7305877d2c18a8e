//! Operations whose result size depends on the data: nonzero, masked_select,
//! repeat_interleave and unique.

use std::cmp::Ordering;

use ndarray::{ArcArray, IxDyn};
use rayon::slice::ParallelSliceMut;

use super::broadcast::broadcast_shapes;
use super::compact::{Compress, kept_values, set_coordinates};
use super::creation::zeros;
use super::elementwise::{PARALLEL_THRESHOLD, broadcast_view};
use super::error::{
    KernelError, Result, check_dim, checked_numel, format_shape, guard_count, negative_count,
    resized, scratch_vec,
};
use super::gather::index_values;
use super::shape::reshape;
use super::take::{as_slice, listed_positions, standard, take_along};
use super::tensor::{Element, Tensor, with_array};
use crate::backend::memory::reserve;

/// The coordinates of the non-zero elements, as an `i64` tensor of shape `[count, ndim]`
/// in row-major order (a 0-d input gives `[1, 0]` or `[0, 0]`).
pub fn nonzero(input: &Tensor) -> Result<Tensor> {
    let flags = input.to_array::<bool>()?;
    let standard_flags = standard(&flags)?;
    let kept = set_coordinates(as_slice(&standard_flags)?, flags.shape())?;
    Tensor::from_vec(&[kept.count, flags.ndim()], kept.values)
}

/// The elements where `mask` (a `bool` tensor broadcast with the input) is `true`, as a
/// 1-D tensor in row-major order.
pub fn masked_select(input: &Tensor, mask: &Tensor) -> Result<Tensor> {
    let Tensor::Bool(mask) = mask else {
        return Err(KernelError::Type(format!(
            "masked_select needs a bool mask, got {}",
            mask.dtype()
        )));
    };
    let shape = broadcast_shapes(input.shape(), mask.shape())?;
    checked_numel(&shape)?;
    with_array!(input, array => selected(array, mask, &shape))
}

fn selected<T: Element + Compress>(
    array: &ArcArray<T, IxDyn>,
    mask: &ArcArray<bool, IxDyn>,
    shape: &[usize],
) -> Result<Tensor> {
    if array.shape() == shape && mask.shape() == shape {
        let (values, flags) = (standard(array)?, standard(mask)?);
        let kept = kept_values(as_slice(&values)?, as_slice(&flags)?)?;
        return Tensor::from_vec(&[kept.count], kept.values);
    }
    let (values, flags) = (array.view(), mask.view());
    let values = broadcast_view(&values, shape)?;
    let flags = broadcast_view(&flags, shape)?;
    let kept: Vec<T> = values
        .iter()
        .zip(flags.iter())
        .filter_map(|(&value, &keep)| keep.then_some(value))
        .collect();
    Tensor::from_vec(&[kept.len()], kept)
}

/// Repeats each slice along `dim` as often as `counts` says, as
/// `torch.repeat_interleave(input, counts, dim)`. `counts` is `i64`, non-negative, and has
/// one entry per slice or a single entry for all; without `dim` the input is flattened.
pub fn repeat_interleave(input: &Tensor, counts: &Tensor, dim: Option<usize>) -> Result<Tensor> {
    let counts = index_values(counts, "repeat_interleave")?;
    if counts.ndim() > 1 {
        return Err(KernelError::Shape(format!(
            "repeat_interleave needs 0-d or 1-D counts, got shape {}",
            format_shape(counts.shape())
        )));
    }
    let (source, dim) = match dim {
        None => (reshape(input, &[input.numel()])?, 0),
        Some(dim) => {
            check_dim(dim, input.ndim())?;
            (input.clone(), dim)
        }
    };
    let size = source.shape()[dim];
    let counts = SliceCounts::new(counts, size, dim)?;
    let total = counts.total(size);
    if source.numel() == 0 {
        // Slices without elements: only the count of repeated slices is needed, which may
        // pass the element limit (no position is listed, as none would be copied).
        let shape = resized(source.shape(), dim, total)?;
        return zeros(source.dtype(), &shape);
    }
    let rest = source.numel() / size;
    let numel = guard_count(total.saturating_mul(rest as u128))?;
    // The result's size is known only now: its memory is asked for before it is made.
    reserve((numel as u64).saturating_mul(source.dtype().size_of() as u64))?;
    let positions = counts.positions(size, total)?;
    with_array!(&source, array => take_along(array, dim, &positions, &listed_positions()))
}

/// `0, 0, 1, …`: each index `i` repeated `counts[i]` times, as the one-argument
/// `repeat_interleave(counts)`.
pub fn repeat_interleave_indices(counts: &Tensor) -> Result<Tensor> {
    let size = counts.numel();
    let indices = Tensor::from_vec(&[size], (0..size as i64).collect())?;
    repeat_interleave(&indices, counts, Some(0))
}

/// How often each of the slices along a dim is repeated: one count for all of them (never
/// spread into one per slice: an input without elements may have more slices than memory
/// could list), or one each. Counts are checked non-negative when made.
enum SliceCounts<'a> {
    All(i64),
    Each(&'a ArcArray<i64, IxDyn>),
}

impl<'a> SliceCounts<'a> {
    fn new(counts: &'a ArcArray<i64, IxDyn>, size: usize, dim: usize) -> Result<SliceCounts<'a>> {
        let counts = match counts.len() {
            1 => SliceCounts::All(counts.iter().next().copied().unwrap_or(0)),
            length if length == size => SliceCounts::Each(counts),
            length => {
                return Err(KernelError::Shape(format!(
                    "repeat_interleave has {length} counts for dim {dim} of size {size}"
                )));
            }
        };
        let negative = match &counts {
            SliceCounts::All(count) => (*count < 0).then_some(*count),
            SliceCounts::Each(counts) => counts.iter().copied().find(|&count| count < 0),
        };
        match negative {
            Some(negative) => Err(negative_count(negative)),
            None => Ok(counts),
        }
    }

    /// How many slices the repeats make (at most `i64::MAX` times `size`: no overflow).
    fn total(&self, size: usize) -> u128 {
        match self {
            SliceCounts::All(count) => *count as u128 * size as u128,
            SliceCounts::Each(counts) => counts.iter().map(|&count| count as u128).sum(),
        }
    }

    /// Each position `0..size` repeated as often as its count says, `total` in all (which
    /// the caller has checked against the element limit).
    fn positions(&self, size: usize, total: u128) -> Result<Vec<usize>> {
        // Scratch beside the result, which is reserved: as large as an `i64` result.
        let mut positions = scratch_vec(guard_count(total)?)?;
        let mut repeat = |position, count: i64| {
            positions.extend(std::iter::repeat_n(position, count as usize));
        };
        match self {
            SliceCounts::All(count) => (0..size).for_each(|position| repeat(position, *count)),
            SliceCounts::Each(counts) => {
                for (position, &count) in counts.iter().enumerate() {
                    repeat(position, count);
                }
            }
        }
        Ok(positions)
    }
}

/// The distinct elements of the flattened input in ascending order, as a 1-D tensor.
/// `NaN`s sort last and are all kept, since no `NaN` equals another (PyTorch does the
/// same); `-0.0` and `0.0` are one value.
pub fn unique(input: &Tensor) -> Result<Tensor> {
    with_array!(input, array => {
        let mut values = scratch_vec(array.len())?;
        values.extend(standard(array)?.iter().copied());
        let values = sorted_distinct(values);
        Tensor::from_vec(&[values.len()], values)
    })
}

fn sorted_distinct<T: Element>(mut values: Vec<T>) -> Vec<T> {
    if values.len() >= PARALLEL_THRESHOLD {
        values.par_sort_unstable_by(nan_last);
    } else {
        values.sort_unstable_by(nan_last);
    }
    values.dedup_by(|a, b| a == b);
    values
}

/// A total order with every `NaN` after every number.
fn nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (a_nan, b_nan) => a_nan.cmp(&b_nan),
    }
}

#[cfg(test)]
mod tests;
