//! Shape operations: reshape, permute, transpose, squeeze, unsqueeze, flatten, expand.
//!
//! All of them share data with their input where ndarray allows it: permutations and
//! transposes always, reshapes of contiguous tensors, squeezes and unsqueezes. `expand`
//! copies, because ndarray's owned arrays cannot repeat elements with zero strides.

use ndarray::{ArcArray, Axis, IxDyn};

use super::broadcast::check_broadcast_to;
use super::error::{KernelError, Result, check_dim, checked_numel, format_shape};
use super::tensor::{Tensor, map_variant};
use crate::backend::memory::reserve_values;

/// The same elements in row-major order under a new shape with the same element count.
pub fn reshape(input: &Tensor, shape: &[usize]) -> Result<Tensor> {
    let numel = checked_numel(shape)?;
    if numel != input.numel() {
        return Err(KernelError::Shape(format!(
            "cannot reshape a tensor of shape {} ({} elements) to {} ({numel} elements)",
            format_shape(input.shape()),
            input.numel(),
            format_shape(shape)
        )));
    }
    Ok(map_variant!(input, array => reshaped(array, shape)?))
}

/// Reshapes without copying when `array` is in standard layout.
fn reshaped<T: Clone>(array: &ArcArray<T, IxDyn>, shape: &[usize]) -> Result<ArcArray<T, IxDyn>> {
    let standard = if array.is_standard_layout() {
        array.clone()
    } else {
        // Reserved as the result of a reshape operation, but not when a kernel reshapes.
        reserve_values::<T>(array.len())?;
        array.as_standard_layout().into_owned().into_shared()
    };
    standard
        .into_shape_with_order(IxDyn(shape))
        .map_err(|error| KernelError::Shape(error.to_string()))
}

/// Reorders dims: dim `i` of the result is dim `dims[i]` of the input.
pub fn permute(input: &Tensor, dims: &[usize]) -> Result<Tensor> {
    let ndim = input.ndim();
    let mut seen = vec![false; ndim];
    let valid = dims.len() == ndim
        && dims
            .iter()
            .all(|&dim| dim < ndim && !std::mem::replace(&mut seen[dim], true));
    if !valid {
        return Err(KernelError::Shape(format!(
            "permute needs a permutation of the {ndim} dims of a tensor of shape {}, got {dims:?}",
            format_shape(input.shape())
        )));
    }
    Ok(map_variant!(input, array => array.clone().permuted_axes(IxDyn(dims))))
}

/// Swaps two dims.
pub fn transpose(input: &Tensor, first: usize, second: usize) -> Result<Tensor> {
    check_dim(first, input.ndim())?;
    check_dim(second, input.ndim())?;
    Ok(map_variant!(input, array => {
        let mut swapped = array.clone();
        swapped.swap_axes(first, second);
        swapped
    }))
}

/// Removes `dim` when it has size 1 (else returns the input), or every size-1 dim when
/// `dim` is `None`. A 0-d tensor accepts dim 0.
pub fn squeeze(input: &Tensor, dim: Option<usize>) -> Result<Tensor> {
    let shape = input.shape();
    let dims: Vec<usize> = match dim {
        None => (0..shape.len()).filter(|&axis| shape[axis] == 1).collect(),
        Some(0) if shape.is_empty() => Vec::new(),
        Some(dim) => {
            check_dim(dim, shape.len())?;
            if shape[dim] == 1 {
                vec![dim]
            } else {
                Vec::new()
            }
        }
    };
    Ok(map_variant!(input, array => {
        dims.iter().rev().fold(array.clone(), |squeezed, &axis| squeezed.index_axis_move(Axis(axis), 0))
    }))
}

/// Inserts a size-1 dim at position `dim` (at most `ndim`).
pub fn unsqueeze(input: &Tensor, dim: usize) -> Result<Tensor> {
    check_dim(dim, input.ndim() + 1)?;
    Ok(map_variant!(input, array => array.clone().insert_axis(Axis(dim))))
}

/// Merges dims `start..=end` into one. A 0-d tensor (with dims 0, 0) becomes shape `[1]`.
pub fn flatten(input: &Tensor, start: usize, end: usize) -> Result<Tensor> {
    let shape = input.shape();
    if shape.is_empty() {
        check_dim(start.max(end), 1)?;
        return reshape(input, &[1]);
    }
    check_dim(end, shape.len())?;
    if start > end {
        return Err(KernelError::Shape(format!(
            "flatten needs start dim {start} to come before end dim {end}"
        )));
    }
    let merged: usize = shape[start..=end].iter().product();
    let new_shape: Vec<usize> = shape[..start]
        .iter()
        .copied()
        .chain([merged])
        .chain(shape[end + 1..].iter().copied())
        .collect();
    reshape(input, &new_shape)
}

/// The input broadcast to `shape` (NumPy rules: new dims on the left, size-1 dims
/// repeated), materialised.
pub fn expand(input: &Tensor, shape: &[usize]) -> Result<Tensor> {
    check_broadcast_to(input.shape(), shape)?;
    if input.shape() == shape {
        return Ok(input.clone());
    }
    checked_numel(shape)?;
    Ok(map_variant!(input, array => {
        let view = array.broadcast(IxDyn(shape)).ok_or_else(|| {
            KernelError::Shape(format!("cannot expand to {}", format_shape(shape)))
        })?;
        view.to_owned().into_shared()
    }))
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, floats, int, ints};

    fn grid() -> Tensor {
        ints(&[2, 3], &[1, 2, 3, 4, 5, 6])
    }

    #[test]
    fn reshape_keeps_row_major_order_and_shares_contiguous_data() {
        let t = grid();
        let flat = reshape(&t, &[3, 2]).unwrap();
        assert_same(&flat, &ints(&[3, 2], &[1, 2, 3, 4, 5, 6]));
        let shares = flat.as_i64().unwrap().as_ptr() == t.as_i64().unwrap().as_ptr();
        assert!(shares, "a contiguous reshape is a view");
        let transposed = transpose(&t, 0, 1).unwrap();
        assert_same(
            &reshape(&transposed, &[6]).unwrap(),
            &ints(&[6], &[1, 4, 2, 5, 3, 6]),
        );
        assert_same(&reshape(&int(5), &[1, 1]).unwrap(), &ints(&[1, 1], &[5]));
        assert_same(&reshape(&ints(&[1], &[5]), &[]).unwrap(), &int(5));
        assert_same(
            &reshape(&ints(&[0, 3], &[]), &[3, 0]).unwrap(),
            &ints(&[3, 0], &[]),
        );
        let error = reshape(&t, &[4]).unwrap_err();
        assert_eq!(
            error.to_string(),
            "cannot reshape a tensor of shape [2, 3] (6 elements) to [4] (4 elements)"
        );
        assert!(matches!(
            reshape(&t, &[usize::MAX, 2]),
            Err(KernelError::TooLarge { .. })
        ));
    }

    #[test]
    fn permute_and_transpose_reorder_dims() {
        let t = ints(&[1, 2, 3], &[1, 2, 3, 4, 5, 6]);
        let permuted = permute(&t, &[2, 0, 1]).unwrap();
        assert_same(&permuted, &ints(&[3, 1, 2], &[1, 4, 2, 5, 3, 6]));
        assert_same(
            &transpose(&grid(), 1, 0).unwrap(),
            &ints(&[3, 2], &[1, 4, 2, 5, 3, 6]),
        );
        assert_same(&transpose(&grid(), 1, 1).unwrap(), &grid());
        assert_same(&permute(&int(3), &[]).unwrap(), &int(3));
        for dims in [&[0, 0, 1][..], &[0, 1], &[0, 1, 3], &[0, 1, 2, 3]] {
            assert!(permute(&t, dims).is_err(), "{dims:?}");
        }
        assert!(transpose(&grid(), 0, 2).is_err());
        assert!(transpose(&int(1), 0, 0).is_err());
    }

    #[test]
    fn squeeze_and_unsqueeze() {
        let t = floats(&[1, 2, 1], &[1.0, 2.0]);
        assert_eq!(squeeze(&t, None).unwrap().shape(), &[2]);
        assert_eq!(squeeze(&t, Some(2)).unwrap().shape(), &[1, 2]);
        assert_eq!(squeeze(&t, Some(1)).unwrap().shape(), &[1, 2, 1]);
        assert_eq!(squeeze(&int(1), Some(0)).unwrap().shape(), &[] as &[usize]);
        assert_eq!(squeeze(&ints(&[1, 1], &[4]), None).unwrap(), int(4));
        assert!(squeeze(&t, Some(3)).is_err());
        assert_eq!(unsqueeze(&t, 3).unwrap().shape(), &[1, 2, 1, 1]);
        assert_eq!(unsqueeze(&t, 0).unwrap().shape(), &[1, 1, 2, 1]);
        assert_same(&unsqueeze(&int(7), 0).unwrap(), &ints(&[1], &[7]));
        assert!(unsqueeze(&t, 4).is_err());
        assert!(unsqueeze(&int(7), 1).is_err());
    }

    #[test]
    fn flatten_merges_a_range_of_dims() {
        let t = ints(&[2, 3, 4], &(0..24).collect::<Vec<_>>());
        let cases: Vec<(usize, usize, &[usize])> = vec![
            (0, 2, &[24]),
            (1, 2, &[2, 12]),
            (0, 1, &[6, 4]),
            (1, 1, &[2, 3, 4]),
        ];
        for (start, end, shape) in cases {
            assert_eq!(flatten(&t, start, end).unwrap().shape(), shape);
        }
        assert_same(&flatten(&int(3), 0, 0).unwrap(), &ints(&[1], &[3]));
        assert!(flatten(&t, 2, 1).is_err());
        assert!(flatten(&t, 0, 3).is_err());
        assert!(flatten(&int(3), 0, 1).is_err());
        assert_eq!(flatten(&ints(&[2, 0], &[]), 0, 1).unwrap().shape(), &[0]);
    }

    #[test]
    fn expand_broadcasts_to_a_target() {
        let column = ints(&[2, 1], &[1, 2]);
        assert_same(
            &expand(&column, &[2, 3]).unwrap(),
            &ints(&[2, 3], &[1, 1, 1, 2, 2, 2]),
        );
        assert_same(
            &expand(&column, &[2, 2, 1]).unwrap(),
            &ints(&[2, 2, 1], &[1, 2, 1, 2]),
        );
        assert_same(&expand(&int(4), &[2]).unwrap(), &ints(&[2], &[4, 4]));
        assert_same(
            &expand(&column, &[0, 2, 0]).unwrap(),
            &ints(&[0, 2, 0], &[]),
        );
        assert_same(&expand(&column, &[2, 1]).unwrap(), &column);
        assert!(matches!(
            expand(&column, &[3, 1]),
            Err(KernelError::Shape(_))
        ));
        assert!(matches!(expand(&column, &[1]), Err(KernelError::Shape(_))));
        let huge = expand(&int(1), &[1 << 20, 1 << 20]);
        assert!(matches!(huge, Err(KernelError::TooLarge { .. })));
    }
}
