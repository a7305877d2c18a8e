//! Joining and cutting along a dim: cat, stack, split, narrow.

use ndarray::{ArcArray, ArrayViewD, Axis, IxDyn, Slice, concatenate};

use super::error::{KernelError, Result, check_dim, checked_numel, format_shape};
use super::shape::unsqueeze;
use super::tensor::{Element, Tensor, map_variant};
use crate::dtype::DType;

/// Concatenates tensors along `dim`, promoting them to a common dtype. Shapes must agree
/// except along `dim`. As in PyTorch, 1-D empty tensors (shape `[0]`) are skipped, so an
/// empty accumulator can start a concatenation of tensors of any rank.
pub fn cat(tensors: &[Tensor], dim: usize) -> Result<Tensor> {
    let dtype = common_dtype(tensors, "cat")?;
    let parts: Vec<&Tensor> = tensors.iter().filter(|t| t.shape() != [0]).collect();
    let Some(first) = parts.first() else {
        return Ok(tensors[0].cast(dtype));
    };
    let shape = first.shape();
    if shape.is_empty() {
        return Err(KernelError::Shape(
            "cat cannot join 0-d tensors; use stack".into(),
        ));
    }
    check_dim(dim, shape.len())?;
    let mut total = 0usize;
    for part in &parts {
        let compatible = part.ndim() == shape.len()
            && (0..shape.len()).all(|axis| axis == dim || part.shape()[axis] == shape[axis]);
        if !compatible {
            return Err(KernelError::Shape(format!(
                "cat along dim {dim} needs matching shapes, got {} and {}",
                format_shape(shape),
                format_shape(part.shape())
            )));
        }
        total = total.saturating_add(part.shape()[dim]);
    }
    let mut out_shape = shape.to_vec();
    out_shape[dim] = total;
    checked_numel(&out_shape)?;
    match dtype {
        DType::F32 => joined::<f32>(&parts, dim),
        DType::I64 => joined::<i64>(&parts, dim),
        DType::Bool => joined::<bool>(&parts, dim),
    }
}

fn joined<T: Element>(parts: &[&Tensor], dim: usize) -> Result<Tensor> {
    let arrays = parts
        .iter()
        .map(|part| part.to_array::<T>())
        .collect::<Result<Vec<_>>>()?;
    let views: Vec<ArrayViewD<'_, T>> = arrays.iter().map(|array| array.view()).collect();
    concatenate(Axis(dim), &views)
        .map(Tensor::from)
        .map_err(|error| KernelError::Shape(error.to_string()))
}

fn common_dtype(tensors: &[Tensor], name: &str) -> Result<DType> {
    tensors
        .iter()
        .map(Tensor::dtype)
        .reduce(DType::promote)
        .ok_or_else(|| KernelError::Shape(format!("{name} needs at least one tensor")))
}

/// Joins tensors of one shape along a new dim inserted at `dim` (at most `ndim`).
pub fn stack(tensors: &[Tensor], dim: usize) -> Result<Tensor> {
    common_dtype(tensors, "stack")?;
    let shape = tensors[0].shape();
    if let Some(other) = tensors.iter().find(|t| t.shape() != shape) {
        return Err(KernelError::Shape(format!(
            "stack needs tensors of one shape, got {} and {}",
            format_shape(shape),
            format_shape(other.shape())
        )));
    }
    let expanded = tensors
        .iter()
        .map(|t| unsqueeze(t, dim))
        .collect::<Result<Vec<_>>>()?;
    cat(&expanded, dim)
}

/// Cuts `input` along `dim` into consecutive pieces of the given sizes, which must add up
/// to the size of `dim`. The pieces share the input's data.
pub fn split(input: &Tensor, sizes: &[usize], dim: usize) -> Result<Vec<Tensor>> {
    check_dim(dim, input.ndim())?;
    let size = input.shape()[dim];
    let total = sizes
        .iter()
        .try_fold(0usize, |sum, &piece| sum.checked_add(piece));
    if total != Some(size) {
        return Err(KernelError::Shape(format!(
            "split sizes {sizes:?} do not add up to {size}, the size of dim {dim}"
        )));
    }
    let mut start = 0;
    let mut pieces = Vec::with_capacity(sizes.len());
    for &length in sizes {
        pieces.push(narrow(input, dim, start, length)?);
        start += length;
    }
    Ok(pieces)
}

/// Elements `start..start + length` along `dim`, sharing the input's data.
pub fn narrow(input: &Tensor, dim: usize, start: usize, length: usize) -> Result<Tensor> {
    check_dim(dim, input.ndim())?;
    let size = input.shape()[dim];
    let end = start.checked_add(length).filter(|&end| end <= size);
    let Some(end) = end else {
        return Err(KernelError::Shape(format!(
            "narrow from {start} with length {length} goes past the end of dim {dim} of size {size}"
        )));
    };
    Ok(map_variant!(input, array => sliced(array, dim, start, end)))
}

fn sliced<T>(
    array: &ArcArray<T, IxDyn>,
    dim: usize,
    start: usize,
    end: usize,
) -> ArcArray<T, IxDyn> {
    let mut view = array.clone();
    view.slice_axis_inplace(Axis(dim), Slice::from(start..end));
    view
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, bools, floats, int, ints};

    #[test]
    fn cat_joins_and_promotes() {
        let a = ints(&[1, 2], &[1, 2]);
        let b = floats(&[2, 2], &[3.0, 4.0, 5.0, 6.0]);
        let joined = cat(&[a.clone(), b.clone()], 0).unwrap();
        assert_same(&joined, &floats(&[3, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0]));
        let side = cat(&[a.clone(), ints(&[1, 1], &[9])], 1).unwrap();
        assert_same(&side, &ints(&[1, 3], &[1, 2, 9]));
        let flags = cat(&[bools(&[1], &[true]), bools(&[0], &[])], 0).unwrap();
        assert_same(&flags, &bools(&[1], &[true]));
        let legacy = cat(&[floats(&[0], &[]), a.clone()], 0).unwrap();
        assert_same(&legacy, &floats(&[1, 2], &[1.0, 2.0]));
        let only_empty = cat(&[ints(&[0], &[]), ints(&[0], &[])], 0).unwrap();
        assert_same(&only_empty, &ints(&[0], &[]));
        let with_empty_rows = cat(&[ints(&[0, 2], &[]), a.clone()], 0).unwrap();
        assert_same(&with_empty_rows, &a);
    }

    #[test]
    fn cat_refuses_mismatches() {
        let a = ints(&[1, 2], &[1, 2]);
        let cases: Vec<(Vec<Tensor>, usize)> = vec![
            (vec![], 0),
            (vec![a.clone(), ints(&[1, 3], &[0; 3])], 0),
            (vec![a.clone(), ints(&[2], &[0; 2])], 0),
            (vec![a.clone()], 2),
            (vec![int(1), int(2)], 0),
        ];
        for (tensors, dim) in cases {
            let error = cat(&tensors, dim).unwrap_err();
            assert!(matches!(error, KernelError::Shape(_)), "{error}");
        }
    }

    #[test]
    fn stack_adds_a_dim() {
        let a = ints(&[2], &[1, 2]);
        let b = ints(&[2], &[3, 4]);
        assert_same(
            &stack(&[a.clone(), b.clone()], 0).unwrap(),
            &ints(&[2, 2], &[1, 2, 3, 4]),
        );
        assert_same(
            &stack(&[a.clone(), b.clone()], 1).unwrap(),
            &ints(&[2, 2], &[1, 3, 2, 4]),
        );
        assert_same(&stack(&[int(1), int(2)], 0).unwrap(), &ints(&[2], &[1, 2]));
        let empties = [ints(&[0], &[]), ints(&[0], &[])];
        assert_same(&stack(&empties, 0).unwrap(), &ints(&[2, 0], &[]));
        assert_same(&stack(&empties, 1).unwrap(), &ints(&[0, 2], &[]));
        assert!(stack(&[a.clone(), ints(&[3], &[0; 3])], 0).is_err());
        assert!(stack(&[a], 2).is_err());
        assert!(stack(&[], 0).is_err());
    }

    #[test]
    fn split_and_narrow_cut_views() {
        let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
        let pieces = split(&t, &[1, 0, 2], 1).unwrap();
        assert_same(&pieces[0], &ints(&[2, 1], &[1, 4]));
        assert_same(&pieces[1], &ints(&[2, 0], &[]));
        assert_same(&pieces[2], &ints(&[2, 2], &[2, 3, 5, 6]));
        assert!(split(&t, &[1, 1], 1).is_err());
        assert!(split(&t, &[usize::MAX, 2], 0).is_err());
        assert!(split(&int(1), &[1], 0).is_err());
        assert_same(&narrow(&t, 0, 1, 1).unwrap(), &ints(&[1, 3], &[4, 5, 6]));
        assert_same(&narrow(&t, 1, 3, 0).unwrap(), &ints(&[2, 0], &[]));
        assert!(narrow(&t, 1, 2, 2).is_err());
        assert!(narrow(&t, 1, usize::MAX, 2).is_err());
        assert!(narrow(&t, 2, 0, 0).is_err());
    }
}
