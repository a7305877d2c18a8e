//! Selecting elements by index tensors: index_select and gather.
//!
//! Indices are checked in one pass before anything is copied, so an error names the first
//! bad index in row-major order. Inputs in standard layout are then copied row by row (see
//! `take.rs`); other views go element by element.

use ndarray::{ArcArray, CowArray, IxDyn};
use rayon::prelude::*;

use super::elementwise::PARALLEL_THRESHOLD;
use super::error::{KernelError, Result, check_dim, format_shape};
use super::take::{Positions, as_slice, check_all, standard, take_along};
use super::tensor::{Element, Tensor, with_array};

/// The `i64` elements of an index tensor, or a type error naming the operation.
pub(crate) fn index_values<'a>(
    indices: &'a Tensor,
    name: &str,
) -> Result<&'a ArcArray<i64, IxDyn>> {
    indices.as_i64().ok_or_else(|| {
        KernelError::Type(format!("{name} needs i64 indices, got {}", indices.dtype()))
    })
}

/// Checks `0 <= index < size`; PyTorch's `index_select` and `gather` do not wrap.
fn checked_index(index: i64, size: usize, dim: usize) -> Result<usize> {
    usize::try_from(index)
        .ok()
        .filter(|&position| position < size)
        .ok_or(KernelError::IndexOutOfRange { index, size, dim })
}

/// The slices of `input` along `dim` at `indices` (1-D or 0-d `i64`, each in
/// `0..size`), in that order: the result has `indices.numel()` entries along `dim`.
pub fn index_select(input: &Tensor, dim: usize, indices: &Tensor) -> Result<Tensor> {
    let values = index_values(indices, "index_select")?;
    if values.ndim() > 1 {
        return Err(KernelError::Shape(format!(
            "index_select needs 1-D indices, got shape {}",
            format_shape(values.shape())
        )));
    }
    check_dim(dim, input.ndim())?;
    let size = input.shape()[dim];
    let values = standard(values)?;
    let values = as_slice(&values)?;
    with_array!(input, array => take_along(array, dim, values, &unwrapped(size, dim)))
}

/// Indices in `0..size` taken as they are; a negative one becomes a position past any
/// size, so it is reported like any other index out of range.
fn unwrapped(
    size: usize,
    dim: usize,
) -> Positions<impl Fn(i64) -> usize + Sync, impl Fn(i64) -> KernelError> {
    Positions {
        position: |index: i64| index as usize,
        error: move |index| KernelError::IndexOutOfRange { index, size, dim },
    }
}

/// PyTorch's `gather`: `out[i][j] = input[indices[i][j]][j]` for `dim = 0`, and so on.
/// `indices` is `i64` with the input's rank and no larger than the input in any other
/// dim; the result has its shape.
pub fn gather(input: &Tensor, dim: usize, indices: &Tensor) -> Result<Tensor> {
    let values = index_values(indices, "gather")?;
    let (shape, index_shape) = (input.shape(), values.shape());
    let fits = index_shape.len() == shape.len()
        && (0..shape.len()).all(|axis| axis == dim || index_shape[axis] <= shape[axis]);
    if !fits {
        return Err(KernelError::Shape(format!(
            "gather along dim {dim} needs indices no larger than the input outside that dim, got {} for {}",
            format_shape(index_shape),
            format_shape(shape)
        )));
    }
    if shape.is_empty() {
        check_dim(dim, 1)?;
        return gather_scalar(input, values);
    }
    check_dim(dim, shape.len())?;
    with_array!(input, array => gathered(array, dim, &standard(values)?))
}

fn gather_scalar(input: &Tensor, indices: &ArcArray<i64, IxDyn>) -> Result<Tensor> {
    for &index in indices {
        checked_index(index, 1, 0)?;
    }
    Ok(input.clone())
}

/// Gathers with checked indices: whole rows of indices at a time when the input is in
/// standard layout, one element at a time otherwise.
fn gathered<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    indices: &CowArray<'_, i64, IxDyn>,
) -> Result<Tensor> {
    let (index_shape, positions) = (indices.shape(), unwrapped(array.shape()[dim], dim));
    if array.ndim() == 1 {
        return take_along(array, dim, as_slice(indices)?, &positions);
    }
    check_all(as_slice(indices)?, array.shape()[dim], &positions)?;
    let values = match array.as_slice() {
        Some(data) if !indices.is_empty() => {
            let source = Source {
                data,
                strides: standard_strides(array.shape()),
                dim,
            };
            gather_rows(&source, as_slice(indices)?, index_shape)
        }
        _ => gather_each(array, dim, indices),
    };
    Tensor::from_vec(index_shape, values)
}

/// A standard-layout input of gather, with the strides of its dims.
struct Source<'a, T> {
    data: &'a [T],
    strides: Vec<usize>,
    dim: usize,
}

/// Row-major strides of a standard-layout array of `shape`.
fn standard_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![1; shape.len()];
    for axis in (1..shape.len()).rev() {
        strides[axis - 1] = strides[axis] * shape[axis];
    }
    strides
}

/// The gather over rows of indices along the last dim, in parallel when large.
fn gather_rows<T: Element>(source: &Source<'_, T>, indices: &[i64], shape: &[usize]) -> Vec<T> {
    let last = shape.len() - 1;
    let width = shape[last].max(1);
    let mut out = vec![T::default(); indices.len()];
    let fill = |(row, (out, indices)): (usize, (&mut [T], &[i64]))| {
        let base = row_base(source, row, &shape[..last]);
        let step = source.strides[last];
        for (column, (slot, &index)) in out.iter_mut().zip(indices).enumerate() {
            let offset = if source.dim == last {
                base + index as usize
            } else {
                base + index as usize * source.strides[source.dim] + column * step
            };
            *slot = source.data.get(offset).copied().unwrap_or_default();
        }
    };
    if indices.len() >= PARALLEL_THRESHOLD {
        let rows = out.par_chunks_mut(width).zip(indices.par_chunks(width));
        rows.enumerate().for_each(fill);
    } else {
        out.chunks_mut(width)
            .zip(indices.chunks(width))
            .enumerate()
            .for_each(fill);
    }
    out
}

/// The input offset of row `row` of the indices (whose leading dims are `leading`),
/// leaving out the gathered dim, which each index supplies.
fn row_base<T>(source: &Source<'_, T>, mut row: usize, leading: &[usize]) -> usize {
    let mut base = 0;
    for (axis, &size) in leading.iter().enumerate().rev() {
        let size = size.max(1);
        if axis != source.dim {
            base += (row % size) * source.strides[axis];
        }
        row /= size;
    }
    base
}

/// The gather one element at a time, for inputs that are not in standard layout.
fn gather_each<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    indices: &CowArray<'_, i64, IxDyn>,
) -> Vec<T> {
    indices
        .indexed_iter()
        .map(|(mut position, &index)| {
            position[dim] = index as usize;
            array.get(position).copied().unwrap_or_default()
        })
        .collect()
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, bools, float, floats, int, ints};

    #[test]
    fn index_select_takes_slices_in_order() {
        let t = ints(&[3, 2], &[1, 2, 3, 4, 5, 6]);
        let cases: Vec<(usize, Tensor, Tensor)> = vec![
            (
                0,
                ints(&[3], &[2, 0, 2]),
                ints(&[3, 2], &[5, 6, 1, 2, 5, 6]),
            ),
            (1, ints(&[1], &[1]), ints(&[3, 1], &[2, 4, 6])),
            (0, ints(&[0], &[]), ints(&[0, 2], &[])),
            (1, int(0), ints(&[3, 1], &[1, 3, 5])),
        ];
        for (dim, indices, expected) in cases {
            assert_same(&index_select(&t, dim, &indices).unwrap(), &expected);
        }
        let flags = bools(&[2], &[true, false]);
        assert_same(
            &index_select(&flags, 0, &ints(&[1], &[1])).unwrap(),
            &bools(&[1], &[false]),
        );
    }

    #[test]
    fn index_select_errors() {
        let t = ints(&[3, 2], &[1, 2, 3, 4, 5, 6]);
        let out_of_range = index_select(&t, 0, &ints(&[2], &[0, 3])).unwrap_err();
        assert_eq!(
            out_of_range,
            KernelError::IndexOutOfRange {
                index: 3,
                size: 3,
                dim: 0
            }
        );
        // With no rows there is nothing to copy, and the indices are checked all the same.
        let no_rows = ints(&[0, 3], &[]);
        assert_eq!(
            index_select(&no_rows, 1, &ints(&[2], &[1, 3])).unwrap_err(),
            KernelError::IndexOutOfRange {
                index: 3,
                size: 3,
                dim: 1
            }
        );
        assert_eq!(
            index_select(&no_rows, 1, &ints(&[2], &[2, 0]))
                .unwrap()
                .shape(),
            &[0, 2]
        );
        let negative = index_select(&t, 1, &ints(&[1], &[-1])).unwrap_err();
        assert_eq!(
            negative,
            KernelError::IndexOutOfRange {
                index: -1,
                size: 2,
                dim: 1
            }
        );
        assert!(matches!(
            index_select(&t, 0, &floats(&[1], &[0.0])),
            Err(KernelError::Type(_))
        ));
        assert!(matches!(
            index_select(&t, 0, &ints(&[1, 1], &[0])),
            Err(KernelError::Shape(_))
        ));
        assert!(index_select(&t, 2, &ints(&[1], &[0])).is_err());
        assert!(index_select(&int(1), 0, &ints(&[1], &[0])).is_err());
        assert!(index_select(&ints(&[0], &[]), 0, &ints(&[1], &[0])).is_err());
    }

    #[test]
    fn gather_follows_pytorch() {
        let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
        let cases: Vec<(usize, Tensor, Tensor)> = vec![
            (
                1,
                ints(&[2, 2], &[2, 0, 1, 1]),
                ints(&[2, 2], &[3, 1, 5, 5]),
            ),
            (0, ints(&[1, 3], &[1, 0, 1]), ints(&[1, 3], &[4, 2, 6])),
            (1, ints(&[2, 0], &[]), ints(&[2, 0], &[])),
            (0, ints(&[3, 1], &[0, 1, 0]), ints(&[3, 1], &[1, 4, 1])),
        ];
        for (dim, indices, expected) in cases {
            assert_same(&gather(&t, dim, &indices).unwrap(), &expected);
        }
        assert_same(&gather(&float(2.5), 0, &int(0)).unwrap(), &float(2.5));
    }

    #[test]
    fn gather_errors() {
        let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
        let error = gather(&t, 1, &ints(&[1, 1], &[3])).unwrap_err();
        assert_eq!(
            error,
            KernelError::IndexOutOfRange {
                index: 3,
                size: 3,
                dim: 1
            }
        );
        assert!(gather(&t, 1, &ints(&[1, 1], &[-1])).is_err());
        assert!(matches!(
            gather(&t, 1, &ints(&[3, 1], &[0; 3])),
            Err(KernelError::Shape(_))
        ));
        assert!(matches!(
            gather(&t, 1, &ints(&[2], &[0; 2])),
            Err(KernelError::Shape(_))
        ));
        assert!(matches!(
            gather(&t, 0, &bools(&[1, 1], &[true])),
            Err(KernelError::Type(_))
        ));
        assert!(gather(&t, 2, &ints(&[1, 1], &[0])).is_err());
        assert!(gather(&float(1.0), 0, &int(1)).is_err());
    }
}
