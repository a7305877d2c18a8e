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

/// Running sum along `dim`: `bool` and `i64` give `i64` (wrapping), `f32` gives `f32`.
/// A 0-d tensor accepts dim 0 and is returned as is (cast).
pub fn cumsum(input: &Tensor, dim: usize) -> Result<Tensor> {
    if input.ndim() > 0 {
        check_dim(dim, input.ndim())?;
    } else {
        check_dim(dim, 1)?;
    }
    match input {
        Tensor::F32(array) => running(array.clone(), dim, |x, y| x + y),
        _ => running(input.to_array::<i64>()?, dim, i64::wrapping_add),
    }
}

/// The running sums in a standard-layout copy (the input's own buffer when nobody else
/// holds it). Each element adds the running value before it along `dim`, in order, so
/// float results are those of a plain sequential scan whatever the thread count.
fn running<T: Element>(
    array: ArcArray<T, IxDyn>,
    dim: usize,
    add: fn(T, T) -> T,
) -> Result<Tensor> {
    let shape = array.shape().to_vec();
    let mut out = if array.is_standard_layout() {
        array.into_owned()
    } else {
        array.as_standard_layout().into_owned()
    };
    if let (Some(data), Some(&size)) = (out.as_slice_mut(), shape.get(dim)) {
        scan_blocks(data, size, checked_numel(&shape[dim + 1..])?, add);
    }
    Ok(Tensor::from(out))
}

/// Scans every block of `size * inner` elements along its middle dim, blocks in parallel
/// when the array is large.
fn scan_blocks<T: Element>(data: &mut [T], size: usize, inner: usize, add: fn(T, T) -> T) {
    let block = size * inner;
    if block == 0 {
        return;
    }
    let scan = |block: &mut [T]| scan_block(block, inner, add);
    if data.len() >= PARALLEL_THRESHOLD && data.len() > block {
        data.par_chunks_mut(block).for_each(scan);
    } else {
        data.chunks_mut(block).for_each(scan);
    }
}

/// One block `[size, inner]`: row 0 becomes zero plus row 0 (as in PyTorch, so `-0.0`
/// starts a sum at `0.0`, as `sum` does), and row `j` becomes row `j - 1` plus row `j`.
fn scan_block<T: Element>(block: &mut [T], inner: usize, add: fn(T, T) -> T) {
    if inner == 1 {
        let mut total = T::default();
        for value in block {
            total = add(total, *value);
            *value = total;
        }
        return;
    }
    for value in block.iter_mut().take(inner) {
        *value = add(T::default(), *value);
    }
    for start in (inner..block.len()).step_by(inner) {
        let (before, rest) = block.split_at_mut(start);
        let previous = &before[start - inner..];
        for (current, &earlier) in rest[..inner].iter_mut().zip(previous) {
            *current = add(earlier, *current);
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
    step: fn(T, T) -> T,
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
        ];
        for (input, dim, expected) in cases {
            assert_same(&cumsum(&input, dim).unwrap(), &expected);
        }
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
