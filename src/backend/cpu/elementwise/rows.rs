//! Broadcasting by rows: a pair of operands whose broadcast splits into rows, where each
//! operand gives either every element, one value per row, or the same row for every row
//! (`x - x.max(1, keepdim = true)`, `x / x.sum(1, keepdim = true)`, `x - x.mean(0)`). Each
//! row then runs over plain slices, which the compiler vectorises; ndarray's zip of a
//! broadcast view walked every element through its strides, one at a time (a subtraction of
//! per-row values over 2,500,000 rows of 4 took 17 ms above the cost of its output).

use ndarray::{ArcArray, ArrayD, ArrayViewD, IxDyn};
use rayon::prelude::*;

use super::PARALLEL_THRESHOLD;
use crate::backend::cpu::error::{KernelError, Result};
use crate::backend::memory::scratch_vec;

/// How an operand reads along a shape split into rows.
#[derive(Clone, Copy, PartialEq, Eq)]
enum Way {
    /// Every element: row `r` is `values[r * inner..(r + 1) * inner]`.
    Full,
    /// One value per row, the same along the row.
    PerRow,
    /// One row, the same for every row.
    PerColumn,
}

/// How an operand of shape `own` reads when broadcast to `shape` split after its first
/// `split` dims, if one of the three ways.
fn way(own: &[usize], shape: &[usize], split: usize) -> Option<Way> {
    let padding = shape.len().checked_sub(own.len())?;
    let dim = |axis: usize| axis.checked_sub(padding).map_or(1, |axis| own[axis]);
    let same = |axes: std::ops::Range<usize>| axes.clone().all(|axis| dim(axis) == shape[axis]);
    let ones = |axes: std::ops::Range<usize>| axes.clone().all(|axis| dim(axis) == 1);
    let (outer, inner) = (0..split, split..shape.len());
    match (same(outer.clone()), same(inner.clone())) {
        (true, true) => Some(Way::Full),
        (true, false) if ones(inner) => Some(Way::PerRow),
        (false, true) if ones(outer) => Some(Way::PerColumn),
        _ => None,
    }
}

/// One operand's part of one row.
enum Row<'a, T> {
    Slice(&'a [T]),
    Value(T),
}

/// Row `index` of `values` (in standard layout), read `way` in rows of `inner` elements.
fn row<T: Copy>(way: Way, values: &[T], index: usize, inner: usize) -> Row<'_, T> {
    match way {
        Way::Full => Row::Slice(&values[index * inner..(index + 1) * inner]),
        Way::PerRow => Row::Value(values[index]),
        Way::PerColumn => Row::Slice(values),
    }
}

/// A broadcast shape split into `rows` rows of `inner` elements, and how each operand reads.
pub(super) struct Split {
    left: Way,
    right: Way,
    rows: usize,
    inner: usize,
}

/// The first split of `shape` under which operands of shapes `left` and `right` each read
/// one of the three ways, with at least one element; `None` when there is none or when
/// neither operand is broadcast.
pub(super) fn split(left: &[usize], right: &[usize], shape: &[usize]) -> Option<Split> {
    let found = (0..=shape.len()).find_map(|split| {
        let ways = (way(left, shape, split)?, way(right, shape, split)?);
        (ways != (Way::Full, Way::Full)).then(|| Split {
            left: ways.0,
            right: ways.1,
            rows: shape[..split].iter().product(),
            inner: shape[split..].iter().product(),
        })
    })?;
    (found.rows > 0 && found.inner > 0).then_some(found)
}

/// Rows of a block that one task computes: about [`PARALLEL_THRESHOLD`] elements.
fn block_rows(inner: usize) -> usize {
    (PARALLEL_THRESHOLD / inner.max(1)).max(1)
}

/// `f` over operands `a` and `b` (their elements in standard layout) broadcast to `shape`
/// by rows, under their [`split`].
pub(super) fn zip_map<A, B, O, F>(
    a: &[A],
    b: &[B],
    split: &Split,
    shape: &[usize],
    f: &F,
) -> Result<ArrayD<O>>
where
    A: Copy + Sync,
    B: Copy + Sync,
    O: Copy + Default + Send,
    F: Fn(A, B) -> O + Sync,
{
    let &Split {
        left,
        right,
        rows,
        inner,
    } = split;
    let block = block_rows(inner);
    let fill = |(index, chunk): (usize, &mut [O])| {
        for (offset, out) in chunk.chunks_exact_mut(inner).enumerate() {
            let index = index * block + offset;
            match (row(left, a, index, inner), row(right, b, index, inner)) {
                (Row::Slice(xs), Row::Slice(ys)) => {
                    for ((out, &x), &y) in out.iter_mut().zip(xs).zip(ys) {
                        *out = f(x, y);
                    }
                }
                (Row::Slice(xs), Row::Value(y)) => {
                    for (out, &x) in out.iter_mut().zip(xs) {
                        *out = f(x, y);
                    }
                }
                (Row::Value(x), Row::Slice(ys)) => {
                    for (out, &y) in out.iter_mut().zip(ys) {
                        *out = f(x, y);
                    }
                }
                (Row::Value(x), Row::Value(y)) => out.fill(f(x, y)),
            }
        }
    };
    // Safe Rust hands out no unwritten memory: the output is zeroed first, in parallel.
    let numel = rows * inner;
    let mut out = scratch_vec::<O>(numel)?;
    if numel >= PARALLEL_THRESHOLD {
        out.par_extend(rayon::iter::repeat_n(O::default(), numel));
        out.par_chunks_mut(block * inner).enumerate().for_each(fill);
    } else {
        out.resize(numel, O::default());
        out.chunks_mut(block * inner).enumerate().for_each(fill);
    }
    ArrayD::from_shape_vec(IxDyn(shape), out).map_err(|error| KernelError::Shape(error.to_string()))
}

/// `target[i] = f(target[i], other[i])` with `other` broadcast by rows to the target's
/// shape; `false` (nothing written) when the pair does not broadcast by rows.
pub(super) fn update<T, F>(
    target: &mut ArcArray<T, IxDyn>,
    other: &ArrayViewD<'_, T>,
    f: &F,
) -> bool
where
    T: Copy + Send + Sync,
    F: Fn(T, T) -> T + Send + Sync,
{
    let (Some(values), true) = (other.as_slice(), target.is_standard_layout()) else {
        return false;
    };
    let Some(Split { right, inner, .. }) = split(target.shape(), other.shape(), target.shape())
    else {
        return false;
    };
    let Some(out) = target.as_slice_mut() else {
        return false;
    };
    let block = block_rows(inner);
    let apply = |(index, chunk): (usize, &mut [T])| {
        for (offset, out) in chunk.chunks_exact_mut(inner).enumerate() {
            match row(right, values, index * block + offset, inner) {
                Row::Slice(ys) => {
                    for (out, &y) in out.iter_mut().zip(ys) {
                        *out = f(*out, y);
                    }
                }
                Row::Value(y) => {
                    for out in out.iter_mut() {
                        *out = f(*out, y);
                    }
                }
            }
        }
    };
    if out.len() >= PARALLEL_THRESHOLD {
        out.par_chunks_mut(block * inner)
            .enumerate()
            .for_each(apply);
    } else {
        out.chunks_mut(block * inner).enumerate().for_each(apply);
    }
    true
}

#[cfg(test)]
mod tests {
    use ndarray::Zip;

    use super::*;

    fn array(shape: &[usize], start: i64) -> ArrayD<i64> {
        let numel = shape.iter().product::<usize>();
        ArrayD::from_shape_vec(IxDyn(shape), (start..start + numel as i64).collect()).unwrap()
    }

    /// What ndarray's zip of the two views broadcast to `shape` gives.
    fn zipped(left: &ArrayD<i64>, right: &ArrayD<i64>, shape: &[usize]) -> ArrayD<i64> {
        let (left, right) = (
            left.broadcast(shape).unwrap(),
            right.broadcast(shape).unwrap(),
        );
        Zip::from(left)
            .and(right)
            .map_collect(|&x, &y| x * 1000 - y)
    }

    #[test]
    fn rows_give_what_a_broadcast_zip_gives() {
        let f = |x: i64, y: i64| x * 1000 - y;
        let big = PARALLEL_THRESHOLD / 3 + 5;
        let pairs: &[(&[usize], &[usize], &[usize])] = &[
            (&[4, 3], &[4, 1], &[4, 3]),
            (&[4, 1], &[4, 3], &[4, 3]),
            (&[4, 3], &[3], &[4, 3]),
            (&[3], &[4, 3], &[4, 3]),
            (&[4, 1], &[1, 3], &[4, 3]),
            (&[1, 3], &[4, 1], &[4, 3]),
            (&[2, 3, 4], &[2, 3, 1], &[2, 3, 4]),
            (&[2, 3, 4], &[3, 4], &[2, 3, 4]),
            (&[2, 3, 4], &[2, 1, 1], &[2, 3, 4]),
            (&[5], &[1], &[5]),
            (&[big, 3], &[big, 1], &[big, 3]),
            (&[3, big], &[big], &[3, big]),
        ];
        for &(a, b, shape) in pairs {
            let (left, right) = (array(a, 1), array(b, -7));
            let split = split(a, b, shape).expect("broadcasts by rows");
            let (xs, ys) = (left.as_slice().unwrap(), right.as_slice().unwrap());
            let result = zip_map(xs, ys, &split, shape, &f).unwrap();
            assert_eq!(result, zipped(&left, &right, shape), "{a:?} with {b:?}");
            if a == shape {
                let mut target = left.clone().into_shared();
                assert!(update(&mut target, &right.view(), &f), "{a:?} with {b:?}");
                assert_eq!(target, zipped(&left, &right, shape).into_shared());
            }
        }
    }

    #[test]
    fn other_pairs_are_left_to_the_zip() {
        let f = |x: i64, y: i64| x * 1000 - y;
        let (left, right) = (array(&[3, 4], 0), array(&[3, 1], 0));
        // The same shape: nothing is broadcast.
        assert!(split(&[3, 4], &[3, 4], &[3, 4]).is_none());
        // Neither per row nor per column: [3, 1, 4] against [1, 2, 1].
        assert!(split(&[3, 1, 4], &[1, 2, 1], &[3, 2, 4]).is_none());
        // No elements.
        assert!(split(&[0, 4], &[0, 1], &[0, 4]).is_none());
        // A transposed view is not in standard layout, and a column of a wider array is not
        // contiguous: both go through the zip, with the same results.
        let transposed = array(&[4, 3], 0);
        let transposed = transposed.t();
        let wide = array(&[3, 2], 0);
        let column = wide.slice(ndarray::s![.., 0..1]).into_dyn();
        assert!(transposed.as_slice().is_none() && column.as_slice().is_none());
        let result = super::super::zip_map(&transposed, &right.view(), f).unwrap();
        assert_eq!(result, zipped(&transposed.to_owned(), &right, &[3, 4]));
        let result = super::super::zip_map(&left.view(), &column, f).unwrap();
        assert_eq!(result, zipped(&left, &column.to_owned(), &[3, 4]));
        let mut target = left.clone().into_shared();
        assert!(!update(&mut target, &column, &f));
        assert_eq!(target, left.into_shared());
    }
}
