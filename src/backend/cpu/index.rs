//! Indexing with Python and PyTorch semantics: `x[i]`, `x[a:b:c]`, `x[None]`, `x[...]`,
//! `x[mask]` and `x[indices]`.
//!
//! Integers, slices, new axes and ellipses are applied first and give a view of the input
//! without copying. At most one tensor item (mask or indices) may appear; it is applied
//! last, at the position it held, as PyTorch does (integers are selections, not tensor
//! indices, so `x[0, :, idx]` keeps the order of the remaining dims).

use ndarray::{ArcArray, Axis, IxDyn, Slice};

use super::compact::{Compress, kept_rows, set_positions};
use super::error::{KernelError, Result, checked_numel, format_shape, guard_count};
use super::gather::index_values;
use super::shape::reshape;
use super::take::{Positions, as_slice, check_all, listed_positions, standard, take_along};
use super::tensor::{Element, Tensor, with_array};

/// One item of an index expression.
#[derive(Clone, Debug, PartialEq)]
pub enum IndexItem {
    /// Selects one position and removes the dim; negative values count from the end.
    Int(i64),
    /// `start:stop:step` with Python's clamping; `step` must be positive.
    Slice {
        start: Option<i64>,
        stop: Option<i64>,
        step: i64,
    },
    /// Inserts a dim of size 1.
    NewAxis,
    /// Stands for as many full slices as the other items leave dims.
    Ellipsis,
    /// A `bool` tensor covering the next `k = mask.ndim()` dims, whose shape it must match;
    /// those dims become one dim holding the selected elements in row-major order.
    Mask(Tensor),
    /// An `i64` tensor selecting positions along the next dim (negative values count from
    /// the end); its shape replaces that dim.
    Indices(Tensor),
}

impl IndexItem {
    /// `:`, the full slice.
    pub fn full() -> IndexItem {
        IndexItem::Slice {
            start: None,
            stop: None,
            step: 1,
        }
    }

    /// How many input dims the item consumes.
    fn consumed(&self) -> usize {
        match self {
            IndexItem::Int(_) | IndexItem::Slice { .. } | IndexItem::Indices(_) => 1,
            IndexItem::Mask(mask) => mask.ndim(),
            IndexItem::NewAxis | IndexItem::Ellipsis => 0,
        }
    }

    fn is_tensor(&self) -> bool {
        matches!(self, IndexItem::Mask(_) | IndexItem::Indices(_))
    }
}

/// `input[items]`; see [`IndexItem`] and the module documentation.
pub fn index(input: &Tensor, items: &[IndexItem]) -> Result<Tensor> {
    let ellipsis_dims = check_items(input.shape(), items)?;
    with_array!(input, array => indexed(array, items, ellipsis_dims))
}

/// Validates the item list and returns how many dims the ellipsis (if any) stands for.
fn check_items(shape: &[usize], items: &[IndexItem]) -> Result<usize> {
    let count = |wanted: fn(&IndexItem) -> bool| items.iter().filter(|item| wanted(item)).count();
    if count(|item| matches!(item, IndexItem::Ellipsis)) > 1 {
        return Err(KernelError::Shape(
            "an index may hold only one ellipsis `...`".into(),
        ));
    }
    if count(IndexItem::is_tensor) > 1 {
        return Err(KernelError::Type(
            "an index may hold only one tensor (mask or indices)".into(),
        ));
    }
    let consumed: usize = items.iter().map(IndexItem::consumed).sum();
    shape.len().checked_sub(consumed).ok_or_else(|| {
        KernelError::Shape(format!(
            "too many indices for a tensor of shape {}: {consumed} dims indexed",
            format_shape(shape)
        ))
    })
}

/// Where the single tensor item applies: its item, the axis in the view, and the dim of
/// the input it indexes (for messages).
struct Advanced<'a> {
    item: &'a IndexItem,
    axis: usize,
    dim: usize,
}

fn indexed<T: Element>(
    array: &ArcArray<T, IxDyn>,
    items: &[IndexItem],
    ellipsis_dims: usize,
) -> Result<Tensor> {
    let mut view = array.clone();
    let (mut axis, mut dim) = (0, 0);
    let mut advanced = None;
    for item in items {
        match item {
            IndexItem::Int(index) => {
                let position = wrap_index(*index, size_at(view.shape(), axis)?, dim)?;
                view = view.index_axis_move(Axis(axis), position);
            }
            IndexItem::Slice { start, stop, step } => {
                let slice = python_slice(*start, *stop, *step, size_at(view.shape(), axis)?)?;
                view.slice_axis_inplace(Axis(axis), slice);
                axis += 1;
            }
            IndexItem::NewAxis => {
                view = view.insert_axis(Axis(axis));
                axis += 1;
            }
            IndexItem::Ellipsis => {
                axis += ellipsis_dims;
                dim += ellipsis_dims;
            }
            IndexItem::Mask(_) | IndexItem::Indices(_) => {
                advanced = Some(Advanced { item, axis, dim });
                axis += item.consumed();
            }
        }
        dim += item.consumed();
    }
    let basic = T::wrap(view);
    match advanced {
        None => Ok(basic),
        Some(advanced) => apply_advanced(&basic, &advanced),
    }
}

/// A position in `0..size` from a Python index, which may count from the end.
pub(crate) fn wrap_index(index: i64, size: usize, dim: usize) -> Result<usize> {
    let wrapped = if index < 0 {
        i128::from(index) + size as i128
    } else {
        i128::from(index)
    };
    usize::try_from(wrapped)
        .ok()
        .filter(|&position| position < size)
        .ok_or(KernelError::IndexOutOfRange { index, size, dim })
}

/// The ndarray slice for Python's `start:stop:step` on a dim of `size`, clamped.
fn python_slice(start: Option<i64>, stop: Option<i64>, step: i64, size: usize) -> Result<Slice> {
    let (start, stop) = crate::backend::error::python_slice_bounds(start, stop, step, size)?;
    let step = isize::try_from(step).unwrap_or(isize::MAX);
    Ok(Slice::new(start as isize, Some(stop as isize), step))
}

fn apply_advanced(view: &Tensor, advanced: &Advanced<'_>) -> Result<Tensor> {
    match advanced.item {
        IndexItem::Mask(mask) => apply_mask(view, mask, advanced),
        IndexItem::Indices(indices) => apply_indices(view, indices, advanced),
        _ => Ok(view.clone()),
    }
}

/// Merges the masked dims into one and takes the positions where the mask is `true`.
fn apply_mask(view: &Tensor, mask: &Tensor, advanced: &Advanced<'_>) -> Result<Tensor> {
    let Tensor::Bool(flags) = mask else {
        return Err(KernelError::Type(format!(
            "a mask index must be bool, got {}",
            mask.dtype()
        )));
    };
    let (axis, covered) = (advanced.axis, flags.ndim());
    let shape = view.shape();
    let masked = shape.get(axis..axis + covered).unwrap_or_default();
    if masked != flags.shape() {
        return Err(KernelError::Shape(format!(
            "a mask of shape {} does not match shape {} at dim {}",
            format_shape(flags.shape()),
            format_shape(masked),
            advanced.dim
        )));
    }
    let merged: Vec<usize> = shape[..axis]
        .iter()
        .copied()
        .chain([masked.iter().product()])
        .chain(shape[axis + covered..].iter().copied())
        .collect();
    let flat = reshape(view, &merged)?;
    let flags = standard(flags)?;
    let flags = as_slice(&flags)?;
    with_array!(&flat, array => masked_rows(array, axis, flags))
}

/// The rows of `array` along `axis` whose flag is set. With nothing before the axis the
/// kept rows are copied straight into the result; otherwise their positions are listed
/// once and taken from every outer block.
fn masked_rows<T: Element + Compress>(
    array: &ArcArray<T, IxDyn>,
    axis: usize,
    flags: &[bool],
) -> Result<Tensor> {
    let shape = array.shape();
    let outer = checked_numel(&shape[..axis])?;
    match array.as_slice() {
        Some(data) if outer == 1 => {
            let kept = kept_rows(data, checked_numel(&shape[axis + 1..])?, flags)?;
            let mut out_shape = shape.to_vec();
            out_shape[axis] = kept.count;
            Tensor::from_vec(&out_shape, kept.values)
        }
        _ => {
            let positions = set_positions::<usize>(flags)?;
            take_along(array, axis, &positions.values, &listed_positions())
        }
    }
}

/// Takes positions along the indexed dim and gives them the shape of the indices.
fn apply_indices(view: &Tensor, indices: &Tensor, advanced: &Advanced<'_>) -> Result<Tensor> {
    let values = index_values(indices, "a tensor index")?;
    let axis = advanced.axis;
    let size = size_at(view.shape(), axis)?;
    let flat = standard(values)?;
    let flat = as_slice(&flat)?;
    let positions = wrapped(size, advanced.dim);
    let shape = view.shape();
    let out_shape: Vec<usize> = shape[..axis]
        .iter()
        .chain(values.shape())
        .chain(&shape[axis + 1..])
        .copied()
        .collect();
    let rest = checked_numel(&shape[..axis])?.saturating_mul(checked_numel(&shape[axis + 1..])?);
    if let Err(error) = guard_count((rest as u128).saturating_mul(flat.len() as u128)) {
        check_all(flat, size, &positions)?;
        return Err(error);
    }
    let taken = with_array!(view, array => take_along(array, axis, flat, &positions))?;
    reshape(&taken, &out_shape)
}

/// Python indices into a dim of `size`: negative ones count from the end. One below
/// `-size` wraps past any size, so it is reported like any other index out of range.
fn wrapped(
    size: usize,
    dim: usize,
) -> Positions<impl Fn(i64) -> usize + Sync, impl Fn(i64) -> KernelError> {
    Positions {
        position: move |index: i64| (index as usize).wrapping_add(if index < 0 { size } else { 0 }),
        error: move |index| KernelError::IndexOutOfRange { index, size, dim },
    }
}

/// The size of `axis`, which the item checks guarantee exists.
fn size_at(shape: &[usize], axis: usize) -> Result<usize> {
    shape
        .get(axis)
        .copied()
        .ok_or_else(|| KernelError::Shape(format!("index past the last dim at axis {axis}")))
}

#[cfg(test)]
mod tests;
