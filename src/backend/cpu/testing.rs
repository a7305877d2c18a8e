//! Test helpers: tensors from literals and NaN-aware comparison.

use super::Tensor;
use crate::dtype::Scalar;

pub fn floats(shape: &[usize], values: &[f32]) -> Tensor {
    Tensor::from_vec(shape, values.to_vec()).expect("test tensor shape")
}

pub fn ints(shape: &[usize], values: &[i64]) -> Tensor {
    Tensor::from_vec(shape, values.to_vec()).expect("test tensor shape")
}

pub fn bools(shape: &[usize], values: &[bool]) -> Tensor {
    Tensor::from_vec(shape, values.to_vec()).expect("test tensor shape")
}

pub fn float(value: f64) -> Tensor {
    Tensor::scalar(Scalar::Float(value))
}

pub fn int(value: i64) -> Tensor {
    Tensor::scalar(Scalar::Int(value))
}

pub fn boolean(value: bool) -> Tensor {
    Tensor::scalar(Scalar::Bool(value))
}

/// Same dtype, shape and elements, where `NaN` equals `NaN` and zeros differ by sign.
pub fn same(actual: &Tensor, expected: &Tensor) -> bool {
    let equal = |a: Scalar, b: Scalar| match (a, b) {
        (Scalar::Float(x), Scalar::Float(y)) => {
            (x == y && x.is_sign_negative() == y.is_sign_negative()) || (x.is_nan() && y.is_nan())
        }
        _ => a == b,
    };
    actual.dtype() == expected.dtype()
        && actual.shape() == expected.shape()
        && actual
            .elements()
            .zip(expected.elements())
            .all(|(a, b)| equal(a, b))
}

#[track_caller]
pub fn assert_same(actual: &Tensor, expected: &Tensor) {
    assert!(
        same(actual, expected),
        "expected {expected:?}\n     got {actual:?}"
    );
}
