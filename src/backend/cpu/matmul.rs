//! Matrix products with PyTorch's `matmul` rules.
//!
//! A 1-D left operand is a row vector and a 1-D right operand a column vector, and the
//! added dim is removed from the result; dims before the last two are batch dims and
//! broadcast. `f32` products run on the blocked kernel of [`gemm`], whose results are the
//! same bits for any thread count; `i64` products wrap on overflow. Large products are split
//! by batch, or within one product by parts of its rows, across threads, and their outputs are
//! zeroed by all threads.

mod gemm;

use ndarray::{Array3, ArrayView2, ArrayViewD, ArrayViewMut2, Axis, Ix2, Slice, Zip};
use rayon::prelude::*;

use crate::backend::interrupt::Interrupt;

use super::broadcast::broadcast_shapes;
use super::elementwise::broadcast_view;
use super::error::{KernelError, Result, checked_numel, format_shape};
use super::shape::reshape;
use super::tensor::{Element, Tensor};
use crate::dtype::DType;

/// Multiply-adds below which a product runs on one thread.
const PARALLEL_WORK: usize = 1 << 20;

/// `left @ right` (see the module documentation). Operands are promoted to a common dtype;
/// `bool` products are type errors.
pub fn matmul(left: &Tensor, right: &Tensor) -> Result<Tensor> {
    let dtype = left.dtype().promote(right.dtype());
    if dtype == DType::Bool {
        return Err(KernelError::Type(
            "matmul is not defined for bool tensors; convert them with .long() or .float()".into(),
        ));
    }
    let plan = Plan::new(left.shape(), right.shape())?;
    // Operands that are matrices already keep their strides (the kernels read any strides);
    // reshaping a transposed one would copy it.
    let as_planned = |tensor: &Tensor, shape: &[usize]| {
        if tensor.shape() == shape {
            Ok(tensor.clone())
        } else {
            reshape(tensor, shape)
        }
    };
    let left = as_planned(left, &plan.left)?;
    let right = as_planned(right, &plan.right)?;
    // Taken here: rayon's workers do not see the calling thread's flag.
    let interrupt = Interrupt::current();
    let compute = || match dtype {
        DType::F32 => multiply::<f32>(&left, &right, &plan, &interrupt, float_products),
        _ => multiply::<i64>(&left, &right, &plan, &interrupt, integer_products),
    };
    // A parallel product has several parallel steps (zeroing the output, packing B,
    // computing C). Started from a thread outside rayon's pool, each step would wake a worker
    // and then the caller, which takes tens of microseconds on a virtual machine; run on a
    // worker, the steps hand work to the other workers directly (a 1024 x 1024 product ran
    // about 1% faster, a 500 x 500 one 7%).
    let product = if plan.work() >= PARALLEL_WORK {
        rayon::scope(|_| compute())?
    } else {
        compute()?
    };
    reshape(&product, &plan.result)
}

/// Shapes of one product: operands as matrices, batch dims, and the result.
struct Plan {
    /// The operands with 1-D ones made 2-D.
    left: Vec<usize>,
    right: Vec<usize>,
    batch: Vec<usize>,
    /// Rows, inner size and columns of each product.
    rows: usize,
    inner: usize,
    columns: usize,
    /// The result's shape, without the dims added for 1-D operands.
    result: Vec<usize>,
}

impl Plan {
    fn new(left: &[usize], right: &[usize]) -> Result<Plan> {
        let describe = || format!("{} @ {}", format_shape(left), format_shape(right));
        if left.is_empty() || right.is_empty() {
            return Err(KernelError::Shape(format!(
                "matmul needs tensors with at least one dim, got {}",
                describe()
            )));
        }
        let left_matrix = if left.len() == 1 {
            vec![1, left[0]]
        } else {
            left.to_vec()
        };
        let right_matrix = if right.len() == 1 {
            vec![right[0], 1]
        } else {
            right.to_vec()
        };
        let (left_batch, [rows, inner]) = split_matrix(&left_matrix);
        let (right_batch, [right_inner, columns]) = split_matrix(&right_matrix);
        if inner != right_inner {
            return Err(KernelError::Shape(format!(
                "matmul inner sizes differ ({inner} and {right_inner}): {}",
                describe()
            )));
        }
        let batch = broadcast_shapes(left_batch, right_batch).map_err(|_| {
            KernelError::Shape(format!(
                "matmul batch dims cannot be broadcast: {}",
                describe()
            ))
        })?;
        let mut result = batch.clone();
        result.extend([rows, columns]);
        checked_numel(&result)?;
        if right.len() == 1 {
            result.pop();
        }
        if left.len() == 1 {
            result.remove(result.len() - 1 - usize::from(right.len() != 1));
        }
        Ok(Plan {
            left: left_matrix,
            right: right_matrix,
            batch,
            rows,
            inner,
            columns,
            result,
        })
    }

    fn batch_count(&self) -> usize {
        self.batch.iter().product()
    }

    /// Multiply-adds of the whole product.
    fn work(&self) -> usize {
        self.batch_count()
            .saturating_mul(self.rows * self.inner)
            .saturating_mul(self.columns)
    }
}

/// Batch dims and the two matrix dims of a shape with at least two dims.
fn split_matrix(shape: &[usize]) -> (&[usize], [usize; 2]) {
    let (batch, matrix) = shape.split_at(shape.len() - 2);
    (batch, [matrix[0], matrix[1]])
}

/// One product of the batch: left and right operands and the output matrix.
type Product<'a, T> = (ArrayView2<'a, T>, ArrayView2<'a, T>, ArrayViewMut2<'a, T>);

/// The operands of the batch's products, as matrices in batch order.
struct Operands<'a, T> {
    lefts: Vec<ArrayView2<'a, T>>,
    rights: Vec<ArrayView2<'a, T>>,
}

impl<'a, T> Operands<'a, T> {
    /// Each product with its matrix of `out` (`batch x rows x columns`).
    fn with_outputs<'o>(self, out: &'o mut Array3<T>) -> Vec<Product<'o, T>>
    where
        'a: 'o,
    {
        self.lefts
            .into_iter()
            .zip(self.rights)
            .zip(out.outer_iter_mut())
            .map(|((left, right), out)| (left, right, out))
            .collect()
    }
}

/// How one dtype's products compute their output; an interrupt stops them early.
type Products<T> = fn(Operands<'_, T>, &Plan, &Interrupt) -> Result<Array3<T>>;

/// All products of the batch, computed by `run` (which makes the output).
fn multiply<T: Element>(
    left: &Tensor,
    right: &Tensor,
    plan: &Plan,
    interrupt: &Interrupt,
    run: Products<T>,
) -> Result<Tensor> {
    let (left, right) = (left.to_array::<T>()?, right.to_array::<T>()?);
    let shape = |matrix: [usize; 2]| plan.batch.iter().copied().chain(matrix).collect::<Vec<_>>();
    let (left, right) = (left.view(), right.view());
    let left = broadcast_view(&left, &shape([plan.rows, plan.inner]))?;
    let right = broadcast_view(&right, &shape([plan.inner, plan.columns]))?;
    if plan.batch_count() * plan.rows * plan.columns == 0 || plan.inner == 0 {
        return Ok(Tensor::from(zeros::<T>(plan)?.into_dyn()));
    }
    let operands = Operands {
        lefts: matrices(left, plan.batch.len())?,
        rights: matrices(right, plan.batch.len())?,
    };
    let out = run(operands, plan, interrupt)?;
    Ok(Tensor::from(out.into_dyn()))
}

/// Values from which a product's output is zeroed by every thread, each writing (and faulting
/// in) a share, instead of by the calling thread alone.
const PARALLEL_ZEROS: usize = 1 << 16;

/// The zeroed output of `plan`.
fn zeros<T: Element>(plan: &Plan) -> Result<Array3<T>> {
    let shape = (plan.batch_count(), plan.rows, plan.columns);
    let size = shape.0 * shape.1 * shape.2;
    if size < PARALLEL_ZEROS || plan.work() < PARALLEL_WORK {
        return Ok(Array3::default(shape));
    }
    let mut data = Vec::with_capacity(size);
    data.par_extend(rayon::iter::repeat_n(T::default(), size));
    Array3::from_shape_vec(shape, data).map_err(|error| KernelError::Shape(error.to_string()))
}

/// `f32` products: one thread for small work, the batch across threads when it has several
/// products per thread, otherwise one product at a time with its parts across threads.
/// Ctrl-C stops between blocks; the device reports the interruption.
fn float_products(
    operands: Operands<'_, f32>,
    plan: &Plan,
    interrupt: &Interrupt,
) -> Result<Array3<f32>> {
    let parallel = plan.work() >= PARALLEL_WORK;
    if let ([left], [right]) = (&operands.lefts[..], &operands.rights[..]) {
        return single_float_product(*left, *right, plan, parallel, interrupt);
    }
    let mut out = zeros(plan)?;
    let products = operands.with_outputs(&mut out);
    if parallel && products.len() >= 4 * rayon::current_num_threads() {
        products.into_par_iter().for_each(|(left, right, out)| {
            gemm::product(left, right, out, false, interrupt);
        });
    } else {
        for (left, right, out) in products {
            gemm::product(left, right, out, parallel, interrupt);
        }
    }
    Ok(out)
}

/// One `f32` product. When it is packed and parallel, its output is zeroed while B's first
/// span is packed, in one parallel step instead of two: each step costs a hand-over between
/// threads, tens of microseconds on a virtual machine (a 256 x 256 product ran 10 to 20%
/// faster; from 500 x 500 up the two ways measured alike).
fn single_float_product(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    plan: &Plan,
    parallel: bool,
    interrupt: &Interrupt,
) -> Result<Array3<f32>> {
    let route = gemm::route(left, right);
    // Packing stays on this thread, which runs the product next, and the other threads
    // take the zeroing (the other way round, a 500 x 500 product was 5% slower).
    let (packed, out) = if parallel {
        rayon::join(
            || gemm::pack_ahead(left, right, route, parallel),
            || zeros(plan),
        )
    } else {
        (gemm::pack_ahead(left, right, route, parallel), zeros(plan))
    };
    let mut out = out?;
    let matrix = out.index_axis_mut(Axis(0), 0);
    gemm::run(route, packed, left, right, matrix, parallel, interrupt);
    Ok(out)
}

/// `i64` products, split into blocks of rows that run in parallel when there is enough work.
fn integer_products(
    operands: Operands<'_, i64>,
    plan: &Plan,
    interrupt: &Interrupt,
) -> Result<Array3<i64>> {
    let mut out = zeros(plan)?;
    let products = operands.with_outputs(&mut out);
    let block = row_block(plan);
    let mut units = Vec::new();
    for (left, right, out) in products {
        for (rows, out_rows) in row_blocks(left, block)
            .into_iter()
            .zip(out.into_axis_chunks_iter_mut(Axis(0), block))
        {
            units.push((rows, right, out_rows));
        }
    }
    // Ctrl-C skips the units not yet started; the device reports the interruption.
    let unit = |(left, right, out)| {
        if !interrupt.requested() {
            integer_product(left, right, out);
        }
    };
    if plan.work() >= PARALLEL_WORK {
        units.into_par_iter().for_each(unit);
    } else {
        units.into_iter().for_each(unit);
    }
    Ok(out)
}

/// Rows per unit of work: whole matrices when the batch alone feeds every thread.
fn row_block(plan: &Plan) -> usize {
    let wanted_units = 2 * rayon::current_num_threads();
    let splits = wanted_units
        .div_ceil(plan.batch_count().max(1))
        .clamp(1, plan.rows.max(1));
    plan.rows.div_ceil(splits).max(1)
}

/// Consecutive blocks of `block` rows (the last may be shorter).
fn row_blocks<T>(matrix: ArrayView2<'_, T>, block: usize) -> Vec<ArrayView2<'_, T>> {
    let rows = matrix.nrows();
    (0..rows)
        .step_by(block)
        .map(|start| {
            let mut rows_view = matrix;
            rows_view.slice_axis_inplace(Axis(0), Slice::from(start..(start + block).min(rows)));
            rows_view
        })
        .collect()
}

/// The matrices of a batched view, in row-major batch order.
fn matrices<T>(view: ArrayViewD<'_, T>, batch_dims: usize) -> Result<Vec<ArrayView2<'_, T>>> {
    let mut views = vec![view];
    for _ in 0..batch_dims {
        views = views
            .into_iter()
            .flat_map(|view| {
                (0..view.len_of(Axis(0))).map(move |i| view.clone().index_axis_move(Axis(0), i))
            })
            .collect();
    }
    views
        .into_iter()
        .map(|view| {
            view.into_dimensionality::<Ix2>()
                .map_err(|error| KernelError::Shape(error.to_string()))
        })
        .collect()
}

/// Row-times-matrix accumulation with wrapping arithmetic; `out` starts at zero.
fn integer_product(
    left: ArrayView2<'_, i64>,
    right: ArrayView2<'_, i64>,
    mut out: ArrayViewMut2<'_, i64>,
) {
    for (left_row, mut out_row) in left.rows().into_iter().zip(out.rows_mut()) {
        for (&x, right_row) in left_row.iter().zip(right.rows()) {
            Zip::from(&mut out_row)
                .and(&right_row)
                .for_each(|total, &y| *total = total.wrapping_add(x.wrapping_mul(y)));
        }
    }
}

#[cfg(test)]
mod tests;
