//! Reductions over all dims or a set of dims: sum, mean, max, min, prod, argmax, argmin,
//! all, any.
//!
//! Each reduction moves the reduced dims last (copying only when that is not already the
//! memory layout), so that every output element reduces one contiguous lane. Lanes run in
//! parallel when there are many; a single long lane is split into fixed blocks whose partial
//! results combine in a fixed order, so results never depend on the thread count.

use ndarray::{ArcArray, ArrayD, CowArray, Ix2, IxDyn};
use rayon::prelude::*;

use super::elementwise::PARALLEL_THRESHOLD;
use super::error::{KernelError, Result, checked_numel, dim_error, format_shape};
use super::fold::{
    All, Any, Best, ProdF32, ProdI64, RowFold, SHORT_ROW, SumF32, SumI64, fold_lane, fold_rows,
};
use super::tensor::{Element, Tensor, with_array};
use crate::backend::memory::reserve_values;
pub use crate::graph::op::ReduceOp;
use crate::graph::shape::reduce_dtype;

/// Reduces `input` over `dims` (all dims when `None`), keeping them as size 1 when
/// `keepdim`. Dims must be in range and distinct; a 0-d tensor accepts dim 0.
pub fn reduce(
    op: ReduceOp,
    input: &Tensor,
    dims: Option<&[usize]>,
    keepdim: bool,
) -> Result<Tensor> {
    reduce_dtype(op, input.dtype()).map_err(|rule| KernelError::Type(rule.message))?;
    let plan = Plan::new(op, input.shape(), dims, keepdim)?;
    match op {
        ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Mean => arithmetic(op, input, &plan),
        ReduceOp::Max | ReduceOp::Min => with_array!(input, array => extremum(op, array, &plan)),
        ReduceOp::Argmax | ReduceOp::Argmin => with_array!(input, array => {
            lanes_map(array, &plan, |lane| arg_best(lane, op == ReduceOp::Argmax).unwrap_or(0) as i64)
        }),
        ReduceOp::All => rows_map::<bool, All>(&input.to_array::<bool>()?, &plan, |x| x),
        ReduceOp::Any => rows_map::<bool, Any>(&input.to_array::<bool>()?, &plan, |x| x),
    }
}

/// Which axes a reduction keeps and folds, and the shape of its result.
struct Plan {
    /// Kept axes, then reduced axes, each in increasing order.
    order: Vec<usize>,
    kept: usize,
    reduced: usize,
    out_shape: Vec<usize>,
}

impl Plan {
    fn new(op: ReduceOp, shape: &[usize], dims: Option<&[usize]>, keepdim: bool) -> Result<Plan> {
        let reduced_axes = reduced_axes(op, shape.len(), dims)?;
        let (kept_axes, folded_axes): (Vec<usize>, Vec<usize>) =
            (0..shape.len()).partition(|&axis| !reduced_axes[axis]);
        let product = |axes: &[usize]| axes.iter().map(|&axis| shape[axis]).product::<usize>();
        let out_shape = shape
            .iter()
            .zip(&reduced_axes)
            .filter_map(|(&size, &reduced)| match (reduced, keepdim) {
                (false, _) => Some(size),
                (true, true) => Some(1),
                (true, false) => None,
            })
            .collect::<Vec<usize>>();
        // A tensor with no elements may still have a large result (`zeros(10**11, 0).sum(1)`).
        checked_numel(&out_shape)?;
        let plan = Plan {
            kept: product(&kept_axes),
            reduced: product(&folded_axes),
            out_shape,
            order: kept_axes.into_iter().chain(folded_axes).collect(),
        };
        if plan.reduced == 0 && op.needs_elements() {
            return Err(KernelError::Empty(format!(
                "cannot take {} over an empty extent of a tensor of shape {}",
                op.name(),
                format_shape(shape)
            )));
        }
        Ok(plan)
    }
}

/// Which axes `dims` reduces (all when `None`), checking range and repetition. An empty
/// list reduces nothing, as NumPy's `axis=()`; a 0-d tensor accepts dim 0.
fn reduced_axes(op: ReduceOp, ndim: usize, dims: Option<&[usize]>) -> Result<Vec<bool>> {
    let Some(dims) = dims else {
        return Ok(vec![true; ndim]);
    };
    if matches!(op, ReduceOp::Argmax | ReduceOp::Argmin) && dims.len() > 1 {
        return Err(KernelError::Type(format!(
            "{} takes at most one dim",
            op.name()
        )));
    }
    let mut reduced = vec![false; ndim];
    for &dim in dims.iter().filter(|&&dim| !(ndim == 0 && dim == 0)) {
        let seen = reduced.get_mut(dim).ok_or_else(|| dim_error(dim, ndim))?;
        if std::mem::replace(seen, true) {
            return Err(KernelError::Shape(format!(
                "dim {dim} appears twice in {}",
                op.name()
            )));
        }
    }
    Ok(reduced)
}

fn arithmetic(op: ReduceOp, input: &Tensor, plan: &Plan) -> Result<Tensor> {
    match (op, input) {
        (ReduceOp::Sum, Tensor::F32(array)) => rows_map::<f32, SumF32>(array, plan, |x| x),
        (ReduceOp::Prod, Tensor::F32(array)) => rows_map::<f32, ProdF32>(array, plan, |x| x),
        (ReduceOp::Mean, Tensor::F32(array)) => {
            let count = plan.reduced as f32;
            rows_map::<f32, SumF32>(array, plan, |total| total / count)
        }
        (ReduceOp::Sum, _) => rows_map::<i64, SumI64>(&input.to_array::<i64>()?, plan, |x| x),
        (ReduceOp::Prod, _) => rows_map::<i64, ProdI64>(&input.to_array::<i64>()?, plan, |x| x),
        _ => Err(KernelError::Type(format!(
            "{} is not defined here",
            op.name()
        ))),
    }
}

fn extremum<T: Element>(op: ReduceOp, array: &ArcArray<T, IxDyn>, plan: &Plan) -> Result<Tensor> {
    if op == ReduceOp::Max {
        rows_map::<T, Best<T, true>>(array, plan, |x| x)
    } else {
        rows_map::<T, Best<T, false>>(array, plan, |x| x)
    }
}

/// [`lanes_map`] of the fold `F`, then `then` on each result. Lanes shorter than
/// [`SHORT_ROW`], laid out as rows, fold a block of rows at a time ([`fold_rows`]) instead
/// of one call per lane.
fn rows_map<T: Element, F: RowFold<T>>(
    array: &ArcArray<T, IxDyn>,
    plan: &Plan,
    then: impl Fn(T) -> T + Send + Sync,
) -> Result<Tensor> {
    let each_lane = |lane: &[T]| then(fold_lane::<T, F>(lane));
    if plan.reduced == 0 || plan.reduced >= SHORT_ROW {
        return lanes_map(array, plan, each_lane);
    }
    let lanes = lanes(array, plan)?;
    let Some(values) = lanes.as_slice() else {
        return lanes_map(array, plan, each_lane);
    };
    reserve_values::<T>(plan.kept)?;
    let mut out = vec![T::default(); plan.kept];
    let block = |(out, values): (&mut [T], &[T])| {
        fold_rows::<T, F>(values, plan.reduced, out);
        for value in out.iter_mut() {
            *value = then(*value);
        }
    };
    // Blocks of about PARALLEL_THRESHOLD elements, in parallel when there are several.
    let rows = (PARALLEL_THRESHOLD / plan.reduced).max(1);
    let width = rows * plan.reduced;
    if plan.kept > rows {
        (out.par_chunks_mut(rows).zip(values.par_chunks(width))).for_each(block);
    } else {
        out.chunks_mut(rows)
            .zip(values.chunks(width))
            .for_each(block);
    }
    ArrayD::from_shape_vec(IxDyn(&plan.out_shape), out)
        .map(Tensor::from)
        .map_err(|error| KernelError::Shape(error.to_string()))
}

/// `reduce` applied to each lane of `array` under `plan`.
fn lanes_map<T: Element, O: Element>(
    array: &ArcArray<T, IxDyn>,
    plan: &Plan,
    reduce: impl Fn(&[T]) -> O + Send + Sync,
) -> Result<Tensor> {
    let values: Vec<O> = if plan.reduced == 0 {
        // Every lane is empty, so every result is the same: one fill instead of a call per
        // lane (about 20 ns a lane: `zeros(2 * 10**8, 0).sum(1)` took seconds).
        reserve_values::<O>(plan.kept)?;
        vec![reduce(&[]); plan.kept]
    } else {
        let lanes = lanes(array, plan)?;
        let apply = |row: usize| {
            let lane = lanes.row(row);
            lane.as_slice()
                .map_or_else(|| reduce(&lane.to_vec()), &reduce)
        };
        if plan.kept > 1 && plan.kept * plan.reduced >= PARALLEL_THRESHOLD {
            (0..plan.kept).into_par_iter().map(apply).collect()
        } else {
            (0..plan.kept).map(apply).collect()
        }
    };
    ArrayD::from_shape_vec(IxDyn(&plan.out_shape), values)
        .map(Tensor::from)
        .map_err(|error| KernelError::Shape(error.to_string()))
}

/// The array as a `[kept, reduced]` matrix in standard layout.
fn lanes<'a, T: Element>(
    array: &'a ArcArray<T, IxDyn>,
    plan: &Plan,
) -> Result<CowArray<'a, T, Ix2>> {
    let permuted = array.view().permuted_axes(IxDyn(&plan.order));
    let standard: CowArray<'a, T, IxDyn> = if permuted.is_standard_layout() {
        permuted.into()
    } else {
        // A copy beside the reserved (smaller) result: asked for first.
        reserve_values::<T>(array.len())?;
        permuted.as_standard_layout().into_owned().into()
    };
    standard
        .into_shape_with_order((plan.kept, plan.reduced))
        .map_err(|error| KernelError::Shape(error.to_string()))
}

/// The index of the first largest (or smallest) element, where the first `NaN` wins.
fn arg_best<T: Element>(values: &[T], largest: bool) -> Option<usize> {
    let leaf = |part: &[T]| arg_best_leaf(part.iter().copied().enumerate(), largest);
    if values.len() <= PARALLEL_THRESHOLD {
        return leaf(values);
    }
    let candidates: Vec<usize> = values
        .par_chunks(PARALLEL_THRESHOLD)
        .enumerate()
        .filter_map(|(block, part)| leaf(part).map(|index| block * PARALLEL_THRESHOLD + index))
        .collect();
    arg_best_leaf(
        candidates.into_iter().map(|index| (index, values[index])),
        largest,
    )
}

fn arg_best_leaf<T: Element>(
    mut items: impl Iterator<Item = (usize, T)>,
    largest: bool,
) -> Option<usize> {
    let (mut best_index, mut best) = items.next()?;
    for (index, value) in items {
        if best.is_nan() {
            break;
        }
        let better = if largest { value > best } else { value < best };
        if value.is_nan() || better {
            (best_index, best) = (index, value);
        }
    }
    Some(best_index)
}

#[cfg(test)]
mod tests;
