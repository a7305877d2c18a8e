//! Binary elementwise operations with broadcasting and PyTorch's dtype promotion.
//!
//! Operands are first cast to a common dtype: the promoted one (`bool < i64 < f32`), except
//! that `/` always computes in `f32` and arithmetic on two `bool` tensors computes in `i64`
//! (PyTorch keeps some of those in `bool`; one rule is simpler to state and to compile).
//! Host scalars arrive as 0-d tensors, which with one dtype per category is exactly
//! PyTorch's rule that a scalar only promotes to a higher category.

use std::sync::atomic::{AtomicBool, Ordering};

use ndarray::{ArcArray, ArrayViewD, IxDyn};

use super::elementwise::{zip_map, zip_map_reusing};
use super::error::{KernelError, Result};
use super::tensor::{Element, Tensor};
use crate::dtype::DType;
pub use crate::graph::op::BinaryOp;
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

/// Casts both operands to `T` and runs the comparison, extremum or `arithmetic` kernel.
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
    match op {
        _ if op.is_comparison() => compare(op, &operands.left.view(), &operands.right.view()),
        BinaryOp::Maximum => values(operands, maximum),
        BinaryOp::Minimum => values(operands, minimum),
        _ => arithmetic(op, operands),
    }
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
    let out = match op {
        BinaryOp::Eq => zip_map(left, right, |x, y| x == y),
        BinaryOp::Ne => zip_map(left, right, |x, y| x != y),
        BinaryOp::Lt => zip_map(left, right, |x, y| x < y),
        BinaryOp::Le => zip_map(left, right, |x, y| x <= y),
        BinaryOp::Gt => zip_map(left, right, |x, y| x > y),
        BinaryOp::Ge => zip_map(left, right, |x, y| x >= y),
        _ => return Err(unsupported(op, T::DTYPE)),
    };
    Ok(Tensor::from(out?))
}

fn maximum<T: Element>(x: T, y: T) -> T {
    if x.is_nan() || (!y.is_nan() && x >= y) {
        x
    } else {
        y
    }
}

fn minimum<T: Element>(x: T, y: T) -> T {
    if x.is_nan() || (!y.is_nan() && x <= y) {
        x
    } else {
        y
    }
}

fn float_arithmetic(op: BinaryOp, operands: Operands<f32>) -> Result<Tensor> {
    match op {
        BinaryOp::Add => values(operands, |x, y| x + y),
        BinaryOp::Sub => values(operands, |x, y| x - y),
        BinaryOp::Mul => values(operands, |x, y| x * y),
        BinaryOp::Div => values(operands, |x, y| x / y),
        BinaryOp::FloorDiv => values(operands, floor_div_float),
        BinaryOp::Rem => values(operands, remainder_float),
        BinaryOp::Pow => values(operands, f32::powf),
        _ => Err(unsupported(op, DType::F32)),
    }
}

/// PyTorch's `div_floor_floating`: floors `a / b` while staying exact where `fmod` is.
pub(crate) fn floor_div_float(a: f32, b: f32) -> f32 {
    if b == 0.0 {
        return a / b;
    }
    let modulo = a % b;
    let mut quotient = (a - modulo) / b;
    if modulo != 0.0 && (b < 0.0) != (modulo < 0.0) {
        quotient -= 1.0;
    }
    if quotient == 0.0 {
        return 0.0f32.copysign(a / b);
    }
    let floor = quotient.floor();
    if quotient - floor > 0.5 {
        floor + 1.0
    } else {
        floor
    }
}

/// `torch.remainder` for floats: `fmod` moved to the sign of the divisor.
pub(crate) fn remainder_float(a: f32, b: f32) -> f32 {
    let modulo = a % b;
    if modulo != 0.0 && (b < 0.0) != (modulo < 0.0) {
        modulo + b
    } else {
        modulo
    }
}

fn integer_arithmetic(op: BinaryOp, operands: Operands<i64>) -> Result<Tensor> {
    let fault = AtomicBool::new(false);
    let flag = |bad: bool| {
        if bad {
            fault.store(true, Ordering::Relaxed);
        }
        bad
    };
    let out = match op {
        BinaryOp::Add => values(operands, i64::wrapping_add),
        BinaryOp::Sub => values(operands, i64::wrapping_sub),
        BinaryOp::Mul => values(operands, i64::wrapping_mul),
        BinaryOp::FloorDiv => values(
            operands,
            |x, y| {
                if flag(y == 0) { 0 } else { floor_div_int(x, y) }
            },
        ),
        BinaryOp::Rem => values(
            operands,
            |x, y| {
                if flag(y == 0) { 0 } else { remainder_int(x, y) }
            },
        ),
        BinaryOp::Pow => values(
            operands,
            |x, y| {
                if flag(y < 0) { 0 } else { wrapping_pow(x, y) }
            },
        ),
        BinaryOp::And => values(operands, |x, y| x & y),
        BinaryOp::Or => values(operands, |x, y| x | y),
        _ => Err(unsupported(op, DType::I64)),
    }?;
    match (fault.into_inner(), op) {
        (false, _) => Ok(out),
        (true, BinaryOp::Pow) => Err(KernelError::Type(
            "integers to negative integer powers are not allowed; use .float() first".into(),
        )),
        (true, _) => Err(KernelError::DivisionByZero),
    }
}

/// Python's `//` on integers; `i64::MIN // -1` wraps like PyTorch. `b` must not be 0.
pub(crate) fn floor_div_int(a: i64, b: i64) -> i64 {
    let quotient = a.wrapping_div(b);
    if a.wrapping_rem(b) != 0 && (a < 0) != (b < 0) {
        quotient.wrapping_sub(1)
    } else {
        quotient
    }
}

/// Python's `%` on integers: the sign of the divisor. `b` must not be 0.
pub(crate) fn remainder_int(a: i64, b: i64) -> i64 {
    let remainder = a.wrapping_rem(b);
    if remainder != 0 && (remainder < 0) != (b < 0) {
        remainder.wrapping_add(b)
    } else {
        remainder
    }
}

/// `base ** exponent` by squaring, wrapping on overflow. `exponent` must be non-negative.
pub(crate) fn wrapping_pow(mut base: i64, mut exponent: i64) -> i64 {
    let mut result = 1i64;
    while exponent > 0 {
        if exponent & 1 == 1 {
            result = result.wrapping_mul(base);
        }
        base = base.wrapping_mul(base);
        exponent >>= 1;
    }
    result
}

fn logical(op: BinaryOp, operands: Operands<bool>) -> Result<Tensor> {
    match op {
        BinaryOp::And => values(operands, |x, y| x & y),
        BinaryOp::Or => values(operands, |x, y| x | y),
        _ => Err(unsupported(op, DType::Bool)),
    }
}

fn unsupported(op: BinaryOp, dtype: DType) -> KernelError {
    KernelError::Type(format!(
        "`{}` is not supported on {dtype} tensors",
        op.symbol()
    ))
}

#[cfg(test)]
mod tests;
