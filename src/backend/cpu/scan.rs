//! Scans along one dim: running sums and first differences.
//!
//! A running sum works in a standard-layout buffer seen as `[outer, size, inner]` around
//! its dim: each of the `outer` blocks is scanned on its own (in parallel when there are
//! several), a row of `inner` elements at a time.

use ndarray::{ArcArray, Axis, IxDyn, Slice};
use rayon::prelude::*;

use super::elementwise::{PARALLEL_THRESHOLD, zip_map};
use super::error::{Result, check_dim, checked_numel};
use super::tensor::{Element, Tensor};

/// Running sum along `dim`: `bool` and `i64` give `i64` (wrapping), `f32` gives `f32`,
/// accumulated in `f64` as PyTorch's CPU kernel does, so the last running sum of a long lane
/// agrees with its `sum` (an `f32` running total stops growing once each element is below
/// half its last place). A 0-d tensor accepts dim 0 and is returned as is (cast).
pub fn cumsum(input: &Tensor, dim: usize) -> Result<Tensor> {
    if input.ndim() > 0 {
        check_dim(dim, input.ndim())?;
    } else {
        check_dim(dim, 1)?;
    }
    match input {
        Tensor::F32(array) => running(array.clone(), dim),
        _ => running(input.to_array::<i64>()?, dim),
    }
}

/// An element type a running sum accumulates in its `Total`, from zero.
trait Running: Element {
    type Total: Copy + Default + Send + Sync;
    fn add(total: Self::Total, x: Self) -> Self::Total;
    fn narrow(total: Self::Total) -> Self;
}

/// `f32` elements summed in `f64`; the sum starts from `0.0`, so `-0.0` alone gives `0.0`.
impl Running for f32 {
    type Total = f64;
    fn add(total: f64, x: f32) -> f64 {
        total + f64::from(x)
    }
    fn narrow(total: f64) -> f32 {
        total as f32
    }
}

impl Running for i64 {
    type Total = i64;
    fn add(total: i64, x: i64) -> i64 {
        total.wrapping_add(x)
    }
    fn narrow(total: i64) -> i64 {
        total
    }
}

/// The running sums in a standard-layout copy (the input's own buffer when nobody else
/// holds it). Each element adds the running value before it along `dim`, in order, so
/// results are those of a plain sequential scan whatever the thread count.
fn running<T: Running>(array: ArcArray<T, IxDyn>, dim: usize) -> Result<Tensor> {
    let shape = array.shape().to_vec();
    let mut out = if array.is_standard_layout() {
        array.into_owned()
    } else {
        array.as_standard_layout().into_owned()
    };
    if let (Some(data), Some(&size)) = (out.as_slice_mut(), shape.get(dim)) {
        scan_blocks(data, size, checked_numel(&shape[dim + 1..])?);
    }
    Ok(Tensor::from(out))
}

/// Scans every block of `size * inner` elements along its middle dim, blocks in parallel
/// when the array is large.
fn scan_blocks<T: Running>(data: &mut [T], size: usize, inner: usize) {
    let block = size * inner;
    if block == 0 {
        return;
    }
    let scan = |totals: &mut Vec<T::Total>, block: &mut [T]| scan_block(block, inner, totals);
    if data.len() >= PARALLEL_THRESHOLD && data.len() > block {
        data.par_chunks_mut(block).for_each_init(Vec::new, scan);
    } else {
        let mut totals = Vec::new();
        data.chunks_mut(block)
            .for_each(|block| scan(&mut totals, block));
    }
}

/// One block `[size, inner]`: each of its `inner` columns is summed down its rows from zero
/// (as in PyTorch, so `-0.0` starts a sum at `0.0`, as `sum` does), the running totals kept
/// in `totals`.
fn scan_block<T: Running>(block: &mut [T], inner: usize, totals: &mut Vec<T::Total>) {
    if inner == 1 {
        let mut total = T::Total::default();
        for value in block {
            total = T::add(total, *value);
            *value = T::narrow(total);
        }
        return;
    }
    totals.clear();
    totals.resize(inner, T::Total::default());
    for row in block.chunks_exact_mut(inner) {
        for (value, total) in row.iter_mut().zip(totals.iter_mut()) {
            *total = T::add(*total, *value);
            *value = T::narrow(*total);
        }
    }
}

/// `x[i + 1] - x[i]` along `dim` (one step), as `torch.diff`: the dim shrinks by one (a
/// size-0 dim stays 0); `bool` differences are exclusive or, as in PyTorch. 0-d tensors
/// have no dim to difference.
pub fn diff(input: &Tensor, dim: usize) -> Result<Tensor> {
    check_dim(dim, input.ndim())?;
    Ok(match input {
        Tensor::F32(array) => differences(array, dim, |x, y| y - x)?,
        Tensor::I64(array) => differences(array, dim, |x, y| y.wrapping_sub(x))?,
        Tensor::Bool(array) => differences(array, dim, |x, y| x ^ y)?,
    })
}

fn differences<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    step: impl Fn(T, T) -> T + Send + Sync,
) -> Result<Tensor> {
    let size = array.shape()[dim];
    if size == 0 {
        return Ok(T::wrap(array.clone()));
    }
    let view = array.view();
    let earlier = view.slice_axis(Axis(dim), Slice::from(..size - 1));
    let later = view.slice_axis(Axis(dim), Slice::from(1..));
    Ok(Tensor::from(zip_map(&earlier, &later, step)?))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, bools, floats, int, ints};

    #[test]
    fn running_sums_along_a_dim() {
        let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
        let cases: Vec<(Tensor, usize, Tensor)> = vec![
            (t.clone(), 1, ints(&[2, 3], &[1, 3, 6, 4, 9, 15])),
            (t, 0, ints(&[2, 3], &[1, 2, 3, 5, 7, 9])),
            (bools(&[3], &[true, false, true]), 0, ints(&[3], &[1, 1, 2])),
            (
                floats(&[3], &[0.5, f32::NAN, 1.0]),
                0,
                floats(&[3], &[0.5, f32::NAN, f32::NAN]),
            ),
            (
                ints(&[2], &[i64::MAX, 1]),
                0,
                ints(&[2], &[i64::MAX, i64::MIN]),
            ),
            (ints(&[0, 2], &[]), 0, ints(&[0, 2], &[])),
            (bools(&[], &[true]), 0, int(1)),
            (
                floats(&[2, 2], &[-0.0, 1.0, -0.0, -1.0]),
                0,
                floats(&[2, 2], &[0.0, 1.0, 0.0, 0.0]),
            ),
            (floats(&[2], &[-0.0, -0.0]), 0, floats(&[2], &[0.0, 0.0])),
            // Totals in `f64`, as PyTorch: `1e8 + 1` is kept although it prints as `1e8`
            // in `f32`, so the last sum is 1 (an `f32` total gives 0), along any dim.
            (
                floats(&[3], &[1e8, 1.0, -1e8]),
                0,
                floats(&[3], &[1e8, 1e8, 1.0]),
            ),
            (
                floats(&[3, 2], &[1e8, -1e8, 1.0, 2.0, -1e8, 1e8]),
                0,
                floats(&[3, 2], &[1e8, -1e8, 1e8, -1e8, 1.0, 2.0]),
            ),
        ];
        for (input, dim, expected) in cases {
            assert_same(&cumsum(&input, dim).unwrap(), &expected);
        }
        // A long running sum ends at the exact total to the last place, as `sum` does.
        let long = cumsum(&floats(&[1 << 22], &vec![0.1; 1 << 22]), 0).unwrap();
        let last = long.to_array::<f32>().unwrap()[[(1 << 22) - 1]];
        assert_eq!(last, (f64::from(0.1_f32) * f64::from(1 << 22)) as f32);
        assert!(cumsum(&ints(&[2], &[1, 2]), 1).is_err());
        assert!(cumsum(&int(1), 1).is_err());
    }

    #[test]
    fn first_differences_along_a_dim() {
        let t = ints(&[2, 3], &[1, 2, 4, 7, 11, 16]);
        let cases: Vec<(Tensor, usize, Tensor)> = vec![
            (t.clone(), 1, ints(&[2, 2], &[1, 2, 4, 5])),
            (t, 0, ints(&[1, 3], &[6, 9, 12])),
            (floats(&[1], &[2.0]), 0, floats(&[0], &[])),
            (floats(&[0], &[]), 0, floats(&[0], &[])),
            (
                bools(&[3], &[true, true, false]),
                0,
                bools(&[2], &[false, true]),
            ),
            (ints(&[2], &[i64::MIN, 1]), 0, ints(&[1], &[i64::MIN + 1])),
        ];
        for (input, dim, expected) in cases {
            assert_same(&diff(&input, dim).unwrap(), &expected);
        }
        assert!(diff(&int(1), 0).is_err());
        assert!(diff(&ints(&[2], &[1, 2]), 3).is_err());
    }
}
