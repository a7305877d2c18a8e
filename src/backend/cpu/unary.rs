//! Unary elementwise operations, `where` and `clamp`.

use ndarray::ArrayViewD;

use super::binary::{BinaryOp, binary};
use super::elementwise::{map, zip3_map};
use super::error::{KernelError, Result};
use super::tensor::{Element, Tensor, with_array};
use crate::dtype::{DType, Scalar};

/// A unary elementwise operation.
#[derive(Clone, Copy, Debug, PartialEq, Eq, Hash)]
pub enum UnaryOp {
    /// Keeps the dtype; wraps for `i64::MIN`; a type error on `bool`.
    Neg,
    /// Keeps the dtype; wraps for `i64::MIN`; the identity on `bool`.
    Abs,
    Exp,
    Log,
    Sqrt,
    /// Keeps the dtype; `NaN` stays `NaN`; the identity on `bool`.
    Relu,
    Sigmoid,
    Tanh,
    /// Logical not: `true` where the element is zero (`false`), for any dtype.
    Not,
}

impl UnaryOp {
    pub fn name(self) -> &'static str {
        match self {
            UnaryOp::Neg => "neg",
            UnaryOp::Abs => "abs",
            UnaryOp::Exp => "exp",
            UnaryOp::Log => "log",
            UnaryOp::Sqrt => "sqrt",
            UnaryOp::Relu => "relu",
            UnaryOp::Sigmoid => "sigmoid",
            UnaryOp::Tanh => "tanh",
            UnaryOp::Not => "not",
        }
    }

    /// The float functions compute in `f32` whatever the input dtype.
    fn is_float_function(self) -> bool {
        use UnaryOp::{Exp, Log, Sigmoid, Sqrt, Tanh};
        matches!(self, Exp | Log | Sqrt | Sigmoid | Tanh)
    }

    /// The dtype of the result for an input of `dtype`.
    pub fn result_dtype(self, dtype: DType) -> Result<DType> {
        match self {
            UnaryOp::Not => Ok(DType::Bool),
            UnaryOp::Neg if dtype == DType::Bool => Err(KernelError::Type(
                "negation is not supported on bool tensors; use `not` instead".into(),
            )),
            _ if self.is_float_function() => Ok(DType::F32),
            _ => Ok(dtype),
        }
    }
}

/// `op` applied to every element; see [`UnaryOp`] for the dtype rules.
pub fn unary(op: UnaryOp, input: &Tensor) -> Result<Tensor> {
    op.result_dtype(input.dtype())?;
    if op == UnaryOp::Not {
        return Ok(with_array!(input, array => Tensor::from(map(&array.view(), |x| !x.to_bool()))));
    }
    if op.is_float_function() {
        let array = input.to_array::<f32>()?;
        return Ok(Tensor::from(map(&array.view(), float_function(op))));
    }
    Ok(match input {
        Tensor::F32(array) => Tensor::from(map(&array.view(), float_keeping(op))),
        Tensor::I64(array) => Tensor::from(map(&array.view(), integer_keeping(op))),
        Tensor::Bool(_) => input.clone(),
    })
}

fn float_function(op: UnaryOp) -> fn(f32) -> f32 {
    match op {
        UnaryOp::Exp => f32::exp,
        UnaryOp::Log => f32::ln,
        UnaryOp::Sqrt => f32::sqrt,
        UnaryOp::Sigmoid => |x| 1.0 / (1.0 + (-x).exp()),
        _ => f32::tanh,
    }
}

fn float_keeping(op: UnaryOp) -> fn(f32) -> f32 {
    match op {
        UnaryOp::Neg => |x| -x,
        UnaryOp::Abs => f32::abs,
        _ => |x| if x <= 0.0 { 0.0 } else { x },
    }
}

fn integer_keeping(op: UnaryOp) -> fn(i64) -> i64 {
    match op {
        UnaryOp::Neg => i64::wrapping_neg,
        UnaryOp::Abs => i64::wrapping_abs,
        _ => |x| x.max(0),
    }
}

/// `condition ? left : right` elementwise, the three broadcast together; `left` and
/// `right` are promoted to a common dtype. `condition` must be `bool`.
pub fn where_(condition: &Tensor, left: &Tensor, right: &Tensor) -> Result<Tensor> {
    let Tensor::Bool(condition) = condition else {
        return Err(KernelError::Type(format!(
            "where needs a bool condition, got {}",
            condition.dtype()
        )));
    };
    let condition = condition.view();
    match left.dtype().promote(right.dtype()) {
        DType::F32 => select::<f32>(&condition, left, right),
        DType::I64 => select::<i64>(&condition, left, right),
        DType::Bool => select::<bool>(&condition, left, right),
    }
}

fn select<T: Element>(
    condition: &ArrayViewD<'_, bool>,
    left: &Tensor,
    right: &Tensor,
) -> Result<Tensor> {
    let left = left.to_array::<T>()?;
    let right = right.to_array::<T>()?;
    let out = zip3_map(condition, &left.view(), &right.view(), |c, x, y| {
        if c { x } else { y }
    })?;
    Ok(Tensor::from(out))
}

/// `input` limited to `[min, max]`, promoting like PyTorch (an `i64` tensor clamped by a
/// float becomes `f32`). `NaN` in the input or a bound gives `NaN`; when `min > max` every
/// element becomes `max`. At least one bound is required.
pub fn clamp(input: &Tensor, min: Option<Scalar>, max: Option<Scalar>) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        return Err(KernelError::Type("clamp needs a min or a max".into()));
    }
    let mut out = input.clone();
    if let Some(min) = min {
        out = binary(BinaryOp::Maximum, &out, &Tensor::scalar(min))?;
    }
    if let Some(max) = max {
        out = binary(BinaryOp::Minimum, &out, &Tensor::scalar(max))?;
    }
    Ok(out)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, boolean, bools, float, floats, int, ints};
    use UnaryOp::*;

    #[test]
    fn unary_operations_by_dtype() {
        let nan = f32::NAN;
        let cases: Vec<(UnaryOp, Tensor, Tensor)> = vec![
            (Neg, floats(&[2], &[1.5, -0.0]), floats(&[2], &[-1.5, 0.0])),
            (Neg, ints(&[2], &[3, i64::MIN]), ints(&[2], &[-3, i64::MIN])),
            (Abs, ints(&[2], &[-3, i64::MIN]), ints(&[2], &[3, i64::MIN])),
            (Abs, floats(&[2], &[-1.0, nan]), floats(&[2], &[1.0, nan])),
            (Abs, bools(&[1], &[true]), bools(&[1], &[true])),
            (
                Relu,
                floats(&[4], &[-1.0, 0.0, 2.0, nan]),
                floats(&[4], &[0.0, 0.0, 2.0, nan]),
            ),
            (Relu, ints(&[2], &[-5, 5]), ints(&[2], &[0, 5])),
            (Relu, bools(&[1], &[false]), bools(&[1], &[false])),
            (
                Exp,
                ints(&[2], &[0, 1]),
                floats(&[2], &[1.0, std::f32::consts::E]),
            ),
            (
                Log,
                floats(&[3], &[1.0, 0.0, -1.0]),
                floats(&[3], &[0.0, f32::NEG_INFINITY, nan]),
            ),
            (Sqrt, ints(&[2], &[4, -1]), floats(&[2], &[2.0, nan])),
            (
                Sigmoid,
                floats(&[3], &[0.0, -200.0, 200.0]),
                floats(&[3], &[0.5, 0.0, 1.0]),
            ),
            (
                Tanh,
                bools(&[2], &[false, true]),
                floats(&[2], &[0.0, 1.0f32.tanh()]),
            ),
            (
                Not,
                floats(&[3], &[0.0, 2.0, nan]),
                bools(&[3], &[true, false, false]),
            ),
            (Not, ints(&[2], &[0, -1]), bools(&[2], &[true, false])),
            (
                Not,
                bools(&[2], &[true, false]),
                bools(&[2], &[false, true]),
            ),
            (Exp, floats(&[0, 2], &[]), floats(&[0, 2], &[])),
            (Neg, int(4), int(-4)),
        ];
        for (op, input, expected) in cases {
            assert_same(&unary(op, &input).unwrap(), &expected);
        }
        let error = unary(Neg, &bools(&[1], &[true])).unwrap_err();
        assert!(matches!(error, KernelError::Type(_)));
    }

    #[test]
    fn where_broadcasts_three_ways_and_promotes() {
        let condition = bools(&[2, 1], &[true, false]);
        let out = where_(&condition, &ints(&[3], &[1, 2, 3]), &float(0.5)).unwrap();
        assert_same(&out, &floats(&[2, 3], &[1.0, 2.0, 3.0, 0.5, 0.5, 0.5]));
        let out = where_(&boolean(true), &int(1), &int(2)).unwrap();
        assert_same(&out, &int(1));
        let error = where_(&ints(&[1], &[1]), &int(1), &int(2)).unwrap_err();
        assert!(matches!(error, KernelError::Type(_)));
        let error = where_(
            &bools(&[2], &[true, false]),
            &ints(&[3], &[1, 2, 3]),
            &int(0),
        );
        assert!(matches!(error, Err(KernelError::Shape(_))));
    }

    #[test]
    fn clamp_promotes_and_propagates_nan() {
        use Scalar::{Float, Int};
        let nan = f32::NAN;
        let cases: Vec<(Tensor, Option<Scalar>, Option<Scalar>, Tensor)> = vec![
            (
                ints(&[3], &[-5, 0, 5]),
                Some(Int(-1)),
                Some(Int(1)),
                ints(&[3], &[-1, 0, 1]),
            ),
            (
                ints(&[2], &[-5, 5]),
                Some(Float(0.5)),
                None,
                floats(&[2], &[0.5, 5.0]),
            ),
            (
                floats(&[2], &[nan, 3.0]),
                None,
                Some(Int(2)),
                floats(&[2], &[nan, 2.0]),
            ),
            (
                floats(&[1], &[1.0]),
                Some(Float(f64::NAN)),
                None,
                floats(&[1], &[nan]),
            ),
            (
                ints(&[2], &[0, 9]),
                Some(Int(5)),
                Some(Int(3)),
                ints(&[2], &[3, 3]),
            ),
            (
                bools(&[2], &[true, false]),
                Some(Int(0)),
                Some(Int(0)),
                ints(&[2], &[0, 0]),
            ),
        ];
        for (input, min, max, expected) in cases {
            assert_same(&clamp(&input, min, max).unwrap(), &expected);
        }
        assert!(matches!(
            clamp(&int(1), None, None),
            Err(KernelError::Type(_))
        ));
    }
}
