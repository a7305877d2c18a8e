//! Binary elementwise operations with broadcasting and PyTorch's dtype promotion.
//!
//! Operands are first cast to a common dtype: the promoted one (`bool < i64 < f32`), except
//! that `/` always computes in `f32` and arithmetic on two `bool` tensors computes in `i64`
//! (PyTorch keeps some of those in `bool`; one rule is simpler to state and to compile).
//! Host scalars arrive as 0-d tensors, which with one dtype per category is exactly
//! PyTorch's rule that a scalar only promotes to a higher category.

use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{ArcArray, ArrayD, ArrayViewD, IxDyn};
use rayon::prelude::*;

use super::elementwise::{PARALLEL_THRESHOLD, zip_map, zip_map_reusing};
use super::error::{KernelError, Result, zeroed_vec};
use super::tensor::{Element, Tensor};
use crate::dtype::DType;
pub use crate::graph::op::BinaryOp;
use crate::graph::semantics as element;
use crate::graph::shape::binary_dtype;

/// The dtype an operation computes in: its result dtype (the shared rule in `graph::shape`),
/// except that comparisons compute in the promoted dtype of their operands.
pub fn compute_dtype(op: BinaryOp, left: DType, right: DType) -> Result<DType> {
    let result = binary_dtype(op, left, right).map_err(|rule| KernelError::Type(rule.message))?;
    Ok(if op.is_comparison() {
        left.promote(right)
    } else {
        result
    })
}

/// `left op right` with broadcasting and promotion (see [`BinaryOp`]).
///
/// Integer arithmetic wraps on overflow; integer `//` and `%` by zero are
/// [`KernelError::DivisionByZero`]; float division by zero gives `inf` or `NaN`; an `i64`
/// raised to a negative `i64` power is a type error, as in PyTorch.
pub fn binary(op: BinaryOp, left: &Tensor, right: &Tensor) -> Result<Tensor> {
    binary_owned(op, left.clone(), right.clone())
}

/// [`binary`] on operands the caller gives up: when an operand's buffer is not shared and
/// already has the result's dtype and shape, the result is written into it. Results are
/// identical to [`binary`]'s; this only saves allocating (the interpreter passes
/// temporaries this way).
pub fn binary_owned(op: BinaryOp, left: Tensor, right: Tensor) -> Result<Tensor> {
    match compute_dtype(op, left.dtype(), right.dtype())? {
        DType::F32 => typed::<f32>(op, left, right, float_arithmetic),
        DType::I64 => typed::<i64>(op, left, right, integer_arithmetic),
        DType::Bool => typed::<bool>(op, left, right, logical),
    }
}

/// Both operands of a kernel, cast to its element type.
struct Operands<T> {
    left: ArcArray<T, IxDyn>,
    right: ArcArray<T, IxDyn>,
}

type Kernel<T> = fn(BinaryOp, Operands<T>) -> Result<Tensor>;

/// Casts both operands to `T` and runs the comparison or `arithmetic` kernel.
fn typed<T: Element>(
    op: BinaryOp,
    left: Tensor,
    right: Tensor,
    arithmetic: Kernel<T>,
) -> Result<Tensor> {
    let operands = Operands {
        left: left.into_array::<T>()?,
        right: right.into_array::<T>()?,
    };
    if op.is_comparison() {
        return compare(op, &operands.left.view(), &operands.right.view());
    }
    arithmetic(op, operands)
}

fn values<T: Element>(
    operands: Operands<T>,
    f: impl Fn(T, T) -> T + Send + Sync,
) -> Result<Tensor> {
    Ok(T::wrap(zip_map_reusing(operands.left, operands.right, f)?))
}

fn compare<T: Element>(
    op: BinaryOp,
    left: &ArrayViewD<'_, T>,
    right: &ArrayViewD<'_, T>,
) -> Result<Tensor> {
    let out = element::comparison!(
        op,
        T,
        |f| zip_map(left, right, f),
        return Err(unsupported(op, T::DTYPE))
    );
    Ok(Tensor::from(out?))
}

fn float_arithmetic(op: BinaryOp, operands: Operands<f32>) -> Result<Tensor> {
    element::float_binary!(
        op,
        |f| values(operands, f),
        Err(unsupported(op, DType::F32))
    )
}

fn integer_arithmetic(op: BinaryOp, operands: Operands<i64>) -> Result<Tensor> {
    if let Some(result) = by_one_divisor(op, &operands) {
        return result;
    }
    element::int_binary!(
        op,
        |f| values(operands, f),
        |g| fallible(op, operands, g),
        Err(unsupported(op, DType::I64))
    )
}

/// An integer op that can fault on some element: the first fault of any element fails the
/// whole operation.
fn fallible(
    op: BinaryOp,
    operands: Operands<i64>,
    g: impl Fn(i64, i64) -> Option<i64> + Send + Sync,
) -> Result<Tensor> {
    let fault = AtomicBool::new(false);
    let out = values(operands, |x, y| {
        g(x, y).unwrap_or_else(|| {
            fault.store(true, Ordering::Relaxed);
            0
        })
    })?;
    if fault.into_inner() {
        Err(KernelError::fault_of(op))
    } else {
        Ok(out)
    }
}

/// `//` and `%` of a tensor laid out in order by one non-zero value, runs of values at a
/// time ([`element::divide_by_one`]); `None` for the other cases, which take the per-element
/// path (a zero divisor among them, which it reports).
fn by_one_divisor(op: BinaryOp, operands: &Operands<i64>) -> Option<Result<Tensor>> {
    if !matches!(op, BinaryOp::Rem | BinaryOp::FloorDiv) {
        return None;
    }
    let divisor = *operands
        .right
        .first()
        .filter(|_| operands.right.ndim() == 0)?;
    let values = operands.left.as_slice()?;
    if divisor == 0 {
        return None;
    }
    let mut out = match zeroed_vec(values.len()) {
        Ok(out) => out,
        Err(error) => return Some(Err(error)),
    };
    let divide =
        |(values, out): (&[i64], &mut [i64])| element::divide_by_one(op, values, divisor, out);
    if values.len() >= PARALLEL_THRESHOLD {
        values
            .par_chunks(PARALLEL_THRESHOLD)
            .zip(out.par_chunks_mut(PARALLEL_THRESHOLD))
            .for_each(|pair| {
                divide(pair);
            });
    } else {
        divide((values, &mut out));
    }
    Some(
        ArrayD::from_shape_vec(operands.left.raw_dim(), out)
            .map(Tensor::from)
            .map_err(|error| KernelError::Shape(error.to_string())),
    )
}

fn logical(op: BinaryOp, operands: Operands<bool>) -> Result<Tensor> {
    element::bool_binary!(
        op,
        |f| values(operands, f),
        Err(unsupported(op, DType::Bool))
    )
}

fn unsupported(op: BinaryOp, dtype: DType) -> KernelError {
    KernelError::Type(format!(
        "`{}` is not supported on {dtype} tensors",
        op.symbol()
    ))
}

#[cfg(test)]
mod tests;
