//! Selecting elements by index tensors: index_select and gather.

use ndarray::{ArcArray, ArrayD, Axis, IxDyn};

use super::error::{KernelError, Result, check_dim, checked_numel, format_shape};
use super::tensor::{Element, Tensor, map_variant, with_array};

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
    let positions = values
        .iter()
        .map(|&index| checked_index(index, size, dim))
        .collect::<Result<Vec<_>>>()?;
    let mut out_shape = input.shape().to_vec();
    out_shape[dim] = positions.len();
    checked_numel(&out_shape)?;
    Ok(with_array!(input, array => take_tensor(array, dim, &positions)))
}

/// [`take`] wrapped into a tensor, so that code generic over the element type can use it.
pub(crate) fn take_tensor<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    positions: &[usize],
) -> Tensor {
    T::wrap(take(array, dim, positions))
}

/// The slices of `array` along `dim` at `positions` (all in range).
pub(crate) fn take<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    positions: &[usize],
) -> ArcArray<T, IxDyn> {
    if positions.is_empty() {
        let mut shape = array.shape().to_vec();
        shape[dim] = 0;
        return ArcArray::from_shape_vec(IxDyn(&shape), Vec::new())
            .unwrap_or_else(|_| array.clone());
    }
    array.select(Axis(dim), positions).into_shared()
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
    Ok(map_variant!(input, array => gathered(array, dim, values)?))
}

fn gather_scalar(input: &Tensor, indices: &ArcArray<i64, IxDyn>) -> Result<Tensor> {
    for &index in indices {
        checked_index(index, 1, 0)?;
    }
    Ok(input.clone())
}

fn gathered<T: Element>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    indices: &ArcArray<i64, IxDyn>,
) -> Result<ArcArray<T, IxDyn>> {
    let size = array.shape()[dim];
    let mut out = Vec::with_capacity(indices.len());
    for (mut position, &index) in indices.indexed_iter() {
        position[dim] = checked_index(index, size, dim)?;
        let element =
            array
                .get(position)
                .ok_or(KernelError::IndexOutOfRange { index, size, dim })?;
        out.push(*element);
    }
    ArrayD::from_shape_vec(IxDyn(indices.shape()), out)
        .map(ArrayD::into_shared)
        .map_err(|error| KernelError::Shape(error.to_string()))
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
