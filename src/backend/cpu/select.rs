//! Operations whose result size depends on the data: nonzero, masked_select,
//! repeat_interleave and unique.

use std::cmp::Ordering;

use ndarray::{ArcArray, IxDyn};
use rayon::iter::{
    IndexedParallelIterator, IntoParallelIterator, IntoParallelRefMutIterator, ParallelIterator,
};
use rayon::slice::{ParallelSlice, ParallelSliceMut};

use super::broadcast::broadcast_shapes;
use super::compact::{Compress, kept_values, set_coordinates, split_parts};
use super::creation::zeros;
use super::elementwise::{PARALLEL_THRESHOLD, broadcast_view};
use super::error::{
    KernelError, Result, check_dim, checked_numel, format_shape, guard_count, negative_count,
    resized, scratch_vec, zeroed_vec,
};
use super::gather::index_values;
use super::radix::sorted_keys;
use super::shape::reshape;
use super::take::{as_slice, standard};
use super::tensor::{Element, Tensor, with_array};
use crate::graph::semantics as element;

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
    let counts = standard(counts)?;
    let counts = SliceCounts::new(as_slice(&counts)?, size, dim)?;
    let total = counts.total(size);
    if source.numel() == 0 {
        // Slices without elements: only the count of repeated slices is needed, which may
        // pass the element limit (nothing is written).
        let shape = resized(source.shape(), dim, total)?;
        return zeros(source.dtype(), &shape);
    }
    let slices = Slices {
        outer: source.shape()[..dim].iter().product(),
        size,
        inner: source.shape()[dim + 1..].iter().product(),
    };
    let numel = guard_count(total.saturating_mul((slices.outer * slices.inner) as u128))?;
    let shape = resized(source.shape(), dim, total)?;
    with_array!(&source, array => {
        let values = standard(array)?;
        let repeated = slices.repeat(as_slice(&values)?, &counts, numel)?;
        Tensor::from_vec(&shape, repeated)
    })
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
/// could list), or one each, with their sums over each run of [`SLICES_PER_PART`] slices.
/// Counts are checked non-negative when made.
enum SliceCounts<'a> {
    All(usize),
    Each { counts: &'a [i64], sums: Vec<u128> },
}

/// Slices per part of a repeat's result: each part is placed after the counts of the parts
/// before it.
const SLICES_PER_PART: usize = 4096;

impl<'a> SliceCounts<'a> {
    /// The counts, checked and summed by runs in parallel (the first negative count, in
    /// order, is the error).
    fn new(counts: &'a [i64], size: usize, dim: usize) -> Result<SliceCounts<'a>> {
        if let [count] = *counts {
            return u64::try_from(count)
                .map(|count| SliceCounts::All(count as usize))
                .map_err(|_| negative_count(count));
        }
        if counts.len() != size {
            return Err(KernelError::Shape(format!(
                "repeat_interleave has {} counts for dim {dim} of size {size}",
                counts.len()
            )));
        }
        let sum = |run: &[i64]| -> std::result::Result<u128, i64> {
            run.iter()
                .try_fold(0u128, |sum, &count| match u64::try_from(count) {
                    Ok(count) => Ok(sum + u128::from(count)),
                    Err(_) => Err(count),
                })
        };
        let sums: std::result::Result<Vec<u128>, i64> = if size >= PARALLEL_THRESHOLD {
            counts.par_chunks(SLICES_PER_PART).map(sum).collect()
        } else {
            counts.chunks(SLICES_PER_PART).map(sum).collect()
        };
        match sums {
            Ok(sums) => Ok(SliceCounts::Each { counts, sums }),
            // Runs checked in parallel may meet different negatives first.
            Err(negative) => Err(negative_count(
                counts
                    .iter()
                    .copied()
                    .find(|&count| count < 0)
                    .unwrap_or(negative),
            )),
        }
    }

    /// How many slices the repeats make (at most `i64::MAX` times `size`: no overflow).
    fn total(&self, size: usize) -> u128 {
        match self {
            SliceCounts::All(count) => *count as u128 * size as u128,
            SliceCounts::Each { sums, .. } => sums.iter().sum(),
        }
    }

    /// How many slices each run of [`SLICES_PER_PART`] slices makes, for a result whose
    /// total the caller has checked against the element limit.
    fn runs(&self, size: usize) -> Vec<usize> {
        match self {
            SliceCounts::All(count) => (0..size)
                .step_by(SLICES_PER_PART)
                .map(|start| count * (size - start).min(SLICES_PER_PART))
                .collect(),
            SliceCounts::Each { sums, .. } => sums.iter().map(|&sum| sum as usize).collect(),
        }
    }
}

/// A standard-layout tensor seen around the dim whose slices are repeated: `outer` blocks
/// (the product of the sizes before the dim), each of `size` slices of `inner` elements.
struct Slices {
    outer: usize,
    size: usize,
    inner: usize,
}

impl Slices {
    /// Each slice of `values` repeated as often as `counts` says, `numel` elements in all
    /// (which the caller has checked against the element limit). The result is written in
    /// parallel, by parts: each run of [`SLICES_PER_PART`] slices of each outer block fills
    /// its own part, cut from the result with `split_at_mut`. Positions listed first and
    /// then gathered took twice NumPy's time for 10^7 elements.
    fn repeat<T: Element>(
        &self,
        values: &[T],
        counts: &SliceCounts<'_>,
        numel: usize,
    ) -> Result<Vec<T>> {
        let mut out = zeroed_vec(numel)?;
        if numel == 0 {
            return Ok(out);
        }
        let runs = counts.runs(self.size);
        let source = self.size * self.inner;
        let mut parts = Vec::with_capacity(self.outer * runs.len());
        for (block, out) in out.chunks_mut(numel / self.outer).enumerate() {
            let block = &values[block * source..(block + 1) * source];
            for (run, part) in split_parts(out, &runs, self.inner).into_iter().enumerate() {
                let first = run * SLICES_PER_PART;
                let last = (first + SLICES_PER_PART).min(self.size);
                parts.push((first, &block[first * self.inner..last * self.inner], part));
            }
        }
        let fill = |(first, values, part): (usize, &[T], &mut [T])| match (counts, self.inner) {
            (SliceCounts::Each { counts, .. }, 1) => {
                repeat_each(values, &counts[first..first + values.len()], part);
            }
            _ => self.fill(first, values, counts, part),
        };
        if numel >= PARALLEL_THRESHOLD {
            parts.into_par_iter().for_each(fill);
        } else {
            parts.into_iter().for_each(fill);
        }
        Ok(out)
    }

    /// The slices of `values` (those of one outer block from slice `first` on), each
    /// repeated, into `out`.
    fn fill<T: Element>(
        &self,
        first: usize,
        values: &[T],
        counts: &SliceCounts<'_>,
        mut out: &mut [T],
    ) {
        for (slice, source) in values.chunks_exact(self.inner).enumerate() {
            let count = match counts {
                SliceCounts::All(count) => *count,
                SliceCounts::Each { counts, .. } => counts[first + slice] as usize,
            };
            let (written, rest) = std::mem::take(&mut out).split_at_mut(count * self.inner);
            out = rest;
            if let [value] = source {
                // A copy of one element through `copy_from_slice` called `memmove` for each
                // (`x.repeat_interleave(2)` took twice NumPy's time).
                written.fill(*value);
            } else {
                for copy in written.chunks_exact_mut(self.inner) {
                    copy.copy_from_slice(source);
                }
            }
        }
    }
}

/// Copies of values written at once, whatever their count: a value's copies are written
/// this many at a time while they fit, the copies past its count overwritten by the next
/// values' (a loop of `count` stores per value mispredicted its exit on counts that vary).
const COPIES: usize = 4;

/// Each of `values` repeated `counts` times (counts as many, non-negative and summing to
/// the length of `out`), into `out`.
fn repeat_each<T: Copy>(values: &[T], counts: &[i64], out: &mut [T]) {
    let mut at = 0;
    for (&value, &count) in values.iter().zip(counts) {
        let count = count as usize;
        match out.get_mut(at..at + COPIES.max(count)) {
            Some(copies) if count <= COPIES => {
                if let Some(copies) = copies.first_chunk_mut::<COPIES>() {
                    *copies = [value; COPIES];
                }
            }
            Some(copies) => copies.fill(value),
            None => out[at..at + count].fill(value),
        }
        at += count;
    }
}

/// The distinct elements of the flattened input in ascending order, as a 1-D tensor.
/// `NaN`s sort last and are all kept, since no `NaN` equals another (PyTorch does the
/// same); `-0.0` and `0.0` are one value (`-0.0` where both occur).
pub fn unique(input: &Tensor) -> Result<Tensor> {
    if let Tensor::F32(array) = input {
        let values = distinct_floats(as_slice(&standard(array)?)?)?;
        return Tensor::from_vec(&[values.len()], values);
    }
    if let Tensor::I64(array) = input {
        let array = standard(array)?;
        let values = as_slice(&array)?;
        let values = match distinct_in_span(values)? {
            Some(values) => values,
            None => distinct_integers(values)?,
        };
        return Tensor::from_vec(&[values.len()], values);
    }
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

/// Integers whose values span at most this many per element (or [`SMALL_SPAN`], when
/// that is more) are made distinct by marking their presence instead of sorting.
const SPAN_PER_ELEMENT: u64 = 1;

/// The span any number of integers may have for [`distinct_in_span`].
const SMALL_SPAN: u64 = 1 << 16;

/// The distinct integers of `values`, ascending, when they lie in a span of at most
/// [`SPAN_PER_ELEMENT`] values per element (or [`SMALL_SPAN`]), else `None`. Each part of
/// the values marks its values' bits in a bitmap of the span, the bitmaps are joined, and
/// the set bits read in order: two passes over the values, where a sort of 10^7 of them
/// (labels, counts, rounded measurements) made about twenty.
fn distinct_in_span(values: &[i64]) -> Result<Option<Vec<i64>>> {
    let bounds = |part: &[i64]| {
        let low = part.iter().copied().min()?;
        Some((low, part.iter().copied().max()?))
    };
    let widest = |a: Option<(i64, i64)>, b: Option<(i64, i64)>| match (a, b) {
        (Some(a), Some(b)) => Some((a.0.min(b.0), a.1.max(b.1))),
        (a, b) => a.or(b),
    };
    let Some((low, high)) = (if values.len() >= PARALLEL_THRESHOLD {
        (values.par_chunks(PARALLEL_THRESHOLD).map(bounds)).reduce(|| None, widest)
    } else {
        bounds(values)
    }) else {
        return Ok(Some(Vec::new()));
    };
    let limit = (values.len() as u64)
        .saturating_mul(SPAN_PER_ELEMENT)
        .max(SMALL_SPAN);
    // At most `u64::MAX`: `high - low` fits in 64 bits unsigned.
    let span = high.abs_diff(low);
    if span >= limit {
        return Ok(None);
    }
    let words =
        usize::try_from(span / 64 + 1).map_err(|_| KernelError::OutOfMemory { bytes: span / 8 })?;
    let mark = |part: &[i64]| -> Result<Vec<u64>> {
        let mut bits = zeroed_vec::<u64>(words)?;
        for &value in part {
            let at = value.abs_diff(low);
            bits[(at / 64) as usize] |= 1 << (at % 64);
        }
        Ok(bits)
    };
    let parts = if values.len() >= PARALLEL_THRESHOLD {
        let part = values.len().div_ceil(rayon::current_num_threads());
        (values.par_chunks(part.max(PARALLEL_THRESHOLD)).map(mark)).collect::<Result<Vec<_>>>()?
    } else {
        vec![mark(values)?]
    };
    let mut parts = parts.into_iter();
    let mut present = parts.next().unwrap_or_default();
    for part in parts {
        for (word, other) in present.iter_mut().zip(part) {
            *word |= other;
        }
    }
    let count = present.iter().map(|word| word.count_ones() as usize).sum();
    let mut distinct = scratch_vec(count)?;
    for (index, &word) in present.iter().enumerate() {
        let mut rest = word;
        while rest != 0 {
            let offset = (index as u64) * 64 + u64::from(rest.trailing_zeros());
            // `low + offset` is at most `high`.
            distinct.push(low.wrapping_add_unsigned(offset));
            rest &= rest - 1;
        }
    }
    Ok(Some(distinct))
}

/// A total order with every `NaN` after every number.
fn nan_last<T: Element>(a: &T, b: &T) -> Ordering {
    match (a.is_nan(), b.is_nan()) {
        (false, false) => a.partial_cmp(b).unwrap_or(Ordering::Equal),
        (a_nan, b_nan) => a_nan.cmp(&b_nan),
    }
}

/// The distinct floats of `values`, ascending, each `NaN` kept (as `f32::NAN`, last). They
/// are sorted as integers whose order is the floats' ([`float_key`]): sorted with a
/// comparison of floats that puts `NaN`s last, 10^7 of them took three times as long.
fn distinct_floats(values: &[f32]) -> Result<Vec<f32>> {
    let mut keys = sorted_keys(values, |&value| float_key(value))?;
    // Equal floats are merged as keys: equal keys but `NaN`'s (no `NaN` equals another), and
    // `0.0` into the `-0.0` just below it.
    keys.dedup_by(|key, kept| {
        (*key == *kept && *key != u32::MAX) || (*kept == float_key(-0.0) && *key == float_key(0.0))
    });
    (keys.par_iter_mut().with_min_len(PARALLEL_THRESHOLD))
        .for_each(|key| *key = float_of_key(*key).to_bits());
    Ok(keys.into_iter().map(f32::from_bits).collect())
}

/// The distinct integers of `values`, ascending: sorted as unsigned keys in their order by
/// a radix sort when there are many (10^7 nearly all distinct took 180 ms by comparisons,
/// 85 to 95 ms so).
fn distinct_integers(values: &[i64]) -> Result<Vec<i64>> {
    let mut keys = sorted_keys(values, |&value| element::sort_key_i64(value))?;
    keys.dedup();
    Ok(keys.into_iter().map(element::i64_of_sort_key).collect())
}

/// An integer in the order of floats ([`element::f32_order_bits`]), every `NaN` at the top.
fn float_key(value: f32) -> u32 {
    let key = element::f32_order_bits(value);
    if value.is_nan() { u32::MAX } else { key }
}

/// The float of a key of [`float_key`] (a `NaN` for `NaN`s).
fn float_of_key(key: u32) -> f32 {
    let value = element::f32_of_order_bits(key);
    if key == u32::MAX { f32::NAN } else { value }
}

#[cfg(test)]
mod tests;
