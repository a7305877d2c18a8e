//! Unary elementwise operations, `where` and `clamp`.

use ndarray::{ArcArray, ArrayViewD, IxDyn};

use super::binary::{BinaryOp, binary_owned};
use super::elementwise::{map, map_reusing, zip3_map};
use super::error::{KernelError, Result};
use super::tensor::{Element, Tensor, with_array};
use crate::dtype::{DType, Scalar};
pub use crate::graph::op::UnaryOp;
use crate::graph::semantics as element;
use crate::graph::shape::unary_dtype;

/// `op` applied to every element, with the dtype rule of `graph::shape::unary_dtype`: float
/// functions compute in `f32`; `neg`, `abs` and `relu` keep the dtype; `not`, `isnan` and
/// `isinf` give `bool` (the last two are false for every `i64` and `bool`).
pub fn unary(op: UnaryOp, input: &Tensor) -> Result<Tensor> {
    unary_owned(op, input.clone())
}

/// [`unary`] on an input the caller gives up: its buffer is reused for the result when not
/// shared and of the result's dtype. Results are identical to [`unary`]'s.
pub fn unary_owned(op: UnaryOp, input: Tensor) -> Result<Tensor> {
    unary_dtype(op, input.dtype()).map_err(|rule| KernelError::Type(rule.message))?;
    Ok(match (op, input) {
        (UnaryOp::Not, Tensor::Bool(array)) => Tensor::Bool(map_reusing(array, |x| !x)),
        (UnaryOp::Not, other) => {
            with_array!(&other, array => Tensor::from(map(&array.view(), |x| !x.to_bool())))
        }
        (UnaryOp::IsNan | UnaryOp::IsInf, Tensor::F32(array)) => {
            element::float_predicate!(
                op,
                |f| Tensor::from(map(&array.view(), f)),
                return Err(KernelError::Internal(format!(
                    "`{}` is not a float predicate",
                    op.name()
                )))
            )
        }
        (UnaryOp::IsNan | UnaryOp::IsInf, other) => {
            with_array!(&other, array => Tensor::from(map(&array.view(), |_| false)))
        }
        (_, Tensor::Bool(array)) if !op.is_float_function() => Tensor::Bool(array),
        (_, Tensor::I64(array)) if !op.is_float_function() => {
            Tensor::I64(integer_keeping(op, array))
        }
        (_, other) => Tensor::F32(float_unary(op, other.into_array::<f32>()?)),
    })
}

/// The float functions, and `neg`, `abs` and `relu` on floats.
fn float_unary(op: UnaryOp, array: ArcArray<f32, IxDyn>) -> ArcArray<f32, IxDyn> {
    // `unary_owned` answers the predicates itself; the last arm only completes the table.
    element::float_unary!(
        op,
        |f| map_reusing(array, f),
        map_reusing(array, |x| f32::from(u8::from(x == 0.0)))
    )
}

/// `neg`, `abs` and `relu` on integers, wrapping.
fn integer_keeping(op: UnaryOp, array: ArcArray<i64, IxDyn>) -> ArcArray<i64, IxDyn> {
    // `unary_owned` sends only `neg`, `abs` and `relu` here.
    element::int_unary!(op, |f| map_reusing(array, f), array)
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
    clamp_by(
        input,
        min.map(Tensor::scalar).as_ref(),
        max.map(Tensor::scalar).as_ref(),
    )
}

/// `input` limited to `[min, max]` by tensor bounds, which broadcast with `input` as
/// PyTorch's do (a bound that does not broadcast with it is a shape error).
pub fn clamp_by(input: &Tensor, min: Option<&Tensor>, max: Option<&Tensor>) -> Result<Tensor> {
    if min.is_none() && max.is_none() {
        return Err(KernelError::Type("clamp needs a min or a max".into()));
    }
    let mut out = input.clone();
    if let Some(min) = min {
        out = binary_owned(BinaryOp::Maximum, out, min.clone())?;
    }
    if let Some(max) = max {
        out = binary_owned(BinaryOp::Minimum, out, max.clone())?;
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
                IsNan,
                floats(&[4], &[nan, 1.0, f32::INFINITY, -0.0]),
                bools(&[4], &[true, false, false, false]),
            ),
            (
                IsInf,
                floats(&[4], &[nan, 1.0, f32::INFINITY, f32::NEG_INFINITY]),
                bools(&[4], &[false, false, true, true]),
            ),
            (
                IsNan,
                ints(&[2], &[0, i64::MAX]),
                bools(&[2], &[false, false]),
            ),
            (IsInf, bools(&[1], &[true]), bools(&[1], &[false])),
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
    fn owned_inputs_are_reused_only_when_unshared() {
        let input = floats(&[3], &[-1.0, 0.5, 2.0]);
        let address = input.as_f32().unwrap().as_ptr();
        let kept = input.clone();
        let copied = unary_owned(Relu, input).unwrap();
        assert_ne!(copied.as_f32().unwrap().as_ptr(), address);
        assert_same(&kept, &floats(&[3], &[-1.0, 0.5, 2.0]));
        let reused = unary_owned(Relu, kept).unwrap();
        assert_eq!(reused.as_f32().unwrap().as_ptr(), address);
        assert_same(&reused, &floats(&[3], &[0.0, 0.5, 2.0]));
        let flags = unary_owned(Not, bools(&[2], &[true, false])).unwrap();
        assert_same(&flags, &bools(&[2], &[false, true]));
        assert_same(
            &unary_owned(Sqrt, ints(&[1], &[9])).unwrap(),
            &floats(&[1], &[3.0]),
        );
        assert!(unary_owned(Neg, boolean(true)).is_err());
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
