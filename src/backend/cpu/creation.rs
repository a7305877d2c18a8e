//! Tensor creation: constants, ranges, random normals and tensors from host lists.

use ndarray::{ArrayD, IxDyn};
use rand_chacha::ChaCha8Rng;
use rand_distr::{Distribution, StandardNormal};

use super::error::{KernelError, Result, checked_numel, guard_count};
use super::tensor::{Element, Tensor};
use crate::dtype::{DType, Scalar};

/// A tensor of zeros (`false` for `bool`).
pub fn zeros(dtype: DType, shape: &[usize]) -> Result<Tensor> {
    full(shape, Scalar::Int(0), Some(dtype))
}

/// A tensor of ones (`true` for `bool`).
pub fn ones(dtype: DType, shape: &[usize]) -> Result<Tensor> {
    full(shape, Scalar::Int(1), Some(dtype))
}

/// A tensor filled with `value`, in `dtype` or else the scalar's own dtype.
pub fn full(shape: &[usize], value: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    checked_numel(shape)?;
    Ok(match dtype.unwrap_or(value.dtype()) {
        DType::F32 => filled::<f32>(shape, value),
        DType::I64 => filled::<i64>(shape, value),
        DType::Bool => filled::<bool>(shape, value),
    })
}

fn filled<T: Element>(shape: &[usize], value: Scalar) -> Tensor {
    Tensor::from(ArrayD::from_elem(IxDyn(shape), T::from_scalar(value)))
}

/// `start, start + step, …` up to but excluding `end`, as `torch.arange`: `i64` when every
/// bound is an integer, else `f32`, unless `dtype` says otherwise. A zero step, non-finite
/// bounds, or a step that points away from `end` are value errors (PyTorch refuses them
/// too); `bool` is a type error. Float ranges compute `start + i * step` in `f64`.
pub fn arange(start: Scalar, end: Scalar, step: Scalar, dtype: Option<DType>) -> Result<Tensor> {
    let integral = [start, end, step]
        .iter()
        .all(|bound| !matches!(bound, Scalar::Float(_)));
    let dtype = dtype.unwrap_or(if integral { DType::I64 } else { DType::F32 });
    if dtype == DType::Bool {
        return Err(KernelError::Type(
            "arange does not support dtype bool".into(),
        ));
    }
    if step.as_f64() == 0.0 {
        return Err(KernelError::Value("arange step must not be zero".into()));
    }
    if integral {
        let range = integer_range(start.as_i64(), end.as_i64(), step.as_i64())?;
        return Ok(range.cast(dtype));
    }
    float_range(start.as_f64(), end.as_f64(), step.as_f64(), dtype)
}

/// An exact `i64` range.
fn integer_range(start: i64, end: i64, step: i64) -> Result<Tensor> {
    let span = i128::from(end) - i128::from(start);
    let step_wide = i128::from(step);
    let count = (span + step_wide - step_wide.signum()) / step_wide;
    if count < 0 {
        return Err(wrong_direction(
            Scalar::Int(start),
            Scalar::Int(end),
            Scalar::Int(step),
        ));
    }
    let count = guard_count(count as u128)?;
    let values = (0..count as i64).map(|i| start.wrapping_add(i.wrapping_mul(step)));
    Tensor::from_vec(&[count], values.collect())
}

/// A range with a float bound, computed in `f64` and then cast to `dtype`.
fn float_range(start: f64, end: f64, step: f64, dtype: DType) -> Result<Tensor> {
    if !(start.is_finite() && end.is_finite() && step.is_finite()) {
        return Err(KernelError::Value(format!(
            "arange bounds must be finite, got {}, {}, {}",
            Scalar::Float(start),
            Scalar::Float(end),
            Scalar::Float(step)
        )));
    }
    let count = ((end - start) / step).ceil();
    if count < 0.0 {
        return Err(wrong_direction(
            Scalar::Float(start),
            Scalar::Float(end),
            Scalar::Float(step),
        ));
    }
    if count > u128::MAX as f64 {
        return Err(KernelError::TooLarge { numel: u128::MAX });
    }
    let count = guard_count(count as u128)?;
    let values = (0..count).map(|i| start + i as f64 * step);
    match dtype {
        DType::I64 => Tensor::from_vec(&[count], values.map(|x| x as i64).collect()),
        _ => Tensor::from_vec(&[count], values.map(|x| x as f32).collect()),
    }
}

fn wrong_direction(start: Scalar, end: Scalar, step: Scalar) -> KernelError {
    KernelError::Value(crate::graph::shape::arange_direction_message(
        start, end, step,
    ))
}

/// An `f32` tensor of standard normal samples drawn in row-major order from `rng`.
pub fn randn(shape: &[usize], rng: &mut ChaCha8Rng) -> Result<Tensor> {
    let numel = checked_numel(shape)?;
    let values: Vec<f32> = (0..numel).map(|_| StandardNormal.sample(rng)).collect();
    Tensor::from_vec(shape, values)
}

/// A tensor of `shape` from host scalars in row-major order, as `tensor(list)` builds it.
/// Without `dtype`, any float makes it `f32`, else any int makes it `i64`, else `bool`;
/// an empty list is `f32`, as in PyTorch.
pub fn from_elements(shape: &[usize], elements: &[Scalar], dtype: Option<DType>) -> Result<Tensor> {
    let inferred = elements
        .iter()
        .map(|element| element.dtype())
        .max()
        .unwrap_or(DType::F32);
    match dtype.unwrap_or(inferred) {
        DType::F32 => converted::<f32>(shape, elements),
        DType::I64 => converted::<i64>(shape, elements),
        DType::Bool => converted::<bool>(shape, elements),
    }
}

fn converted<T: Element>(shape: &[usize], elements: &[Scalar]) -> Result<Tensor> {
    let values = elements
        .iter()
        .map(|&element| T::from_scalar(element))
        .collect();
    Tensor::from_vec(shape, values)
}

#[cfg(test)]
mod tests {
    use super::*;
    use crate::backend::cpu::testing::{assert_same, bools, floats, ints};
    use Scalar::{Bool, Float, Int};
    use rand::SeedableRng;

    #[test]
    fn constants_fill_any_shape() {
        assert_same(
            &zeros(DType::F32, &[2]).unwrap(),
            &floats(&[2], &[0.0, 0.0]),
        );
        assert_same(
            &ones(DType::Bool, &[1, 2]).unwrap(),
            &bools(&[1, 2], &[true, true]),
        );
        assert_same(&zeros(DType::I64, &[]).unwrap(), &ints(&[], &[0]));
        assert_same(&ones(DType::I64, &[0, 4]).unwrap(), &ints(&[0, 4], &[]));
        assert_same(
            &full(&[2], Float(2.5), None).unwrap(),
            &floats(&[2], &[2.5, 2.5]),
        );
        assert_same(&full(&[1], Int(7), None).unwrap(), &ints(&[1], &[7]));
        assert_same(
            &full(&[1], Float(2.7), Some(DType::I64)).unwrap(),
            &ints(&[1], &[2]),
        );
        assert_same(
            &full(&[1], Int(3), Some(DType::Bool)).unwrap(),
            &bools(&[1], &[true]),
        );
    }

    #[test]
    fn huge_creations_are_refused() {
        let huge = [1_000_000, 1_000_000, 1_000_000];
        assert!(matches!(
            zeros(DType::F32, &huge),
            Err(KernelError::TooLarge { .. })
        ));
        assert!(matches!(
            full(&[usize::MAX, 2], Int(0), None),
            Err(KernelError::TooLarge { .. })
        ));
        let mut rng = ChaCha8Rng::seed_from_u64(0);
        assert!(randn(&huge, &mut rng).is_err());
        let huge_range = arange(Int(0), Int(i64::MAX), Int(1), None);
        assert!(matches!(huge_range, Err(KernelError::TooLarge { .. })));
        let huge_float = arange(Float(0.0), Float(1e300), Float(1e-300), None);
        assert!(matches!(huge_float, Err(KernelError::TooLarge { .. })));
    }

    #[test]
    fn ranges_follow_pytorch() {
        let cases: Vec<(Scalar, Scalar, Scalar, Option<DType>, Tensor)> = vec![
            (Int(0), Int(4), Int(1), None, ints(&[4], &[0, 1, 2, 3])),
            (Int(0), Int(0), Int(1), None, ints(&[0], &[])),
            (Int(1), Int(10), Int(4), None, ints(&[3], &[1, 5, 9])),
            (Int(5), Int(0), Int(-2), None, ints(&[3], &[5, 3, 1])),
            (Int(-3), Int(-1), Int(1), None, ints(&[2], &[-3, -2])),
            (
                Int(0),
                Int(3),
                Int(1),
                Some(DType::F32),
                floats(&[3], &[0.0, 1.0, 2.0]),
            ),
            (
                Float(0.0),
                Float(1.0),
                Float(0.25),
                None,
                floats(&[4], &[0.0, 0.25, 0.5, 0.75]),
            ),
            (
                Int(0),
                Float(1.1),
                Float(0.5),
                None,
                floats(&[3], &[0.0, 0.5, 1.0]),
            ),
            (
                Float(0.0),
                Float(2.5),
                Int(1),
                Some(DType::I64),
                ints(&[3], &[0, 1, 2]),
            ),
            (
                Int(i64::MIN),
                Int(i64::MIN + 2),
                Int(1),
                None,
                ints(&[2], &[i64::MIN, i64::MIN + 1]),
            ),
            (Bool(false), Bool(true), Int(1), None, ints(&[1], &[0])),
        ];
        for (start, end, step, dtype, expected) in cases {
            let actual = arange(start, end, step, dtype).unwrap();
            assert_same(&actual, &expected);
        }
    }

    #[test]
    fn bad_ranges_are_errors() {
        let value_errors = [
            (Int(0), Int(5), Int(0)),
            (Float(0.0), Float(1.0), Float(0.0)),
            (Int(5), Int(0), Int(1)),
            (Float(0.0), Float(1.0), Float(-0.5)),
            (Float(0.0), Float(f64::INFINITY), Float(1.0)),
            (Float(f64::NAN), Float(1.0), Float(1.0)),
        ];
        for (start, end, step) in value_errors {
            let error = arange(start, end, step, None).unwrap_err();
            assert!(matches!(error, KernelError::Value(_)), "{error}");
        }
        let error = arange(Int(0), Int(2), Int(1), Some(DType::Bool)).unwrap_err();
        assert!(matches!(error, KernelError::Type(_)));
    }

    #[test]
    fn randn_is_seeded_and_standard_normal() {
        let draw = |seed| randn(&[1000], &mut ChaCha8Rng::seed_from_u64(seed)).unwrap();
        assert_eq!(draw(7), draw(7));
        assert_ne!(draw(7), draw(8));
        let sample = draw(1);
        let values: Vec<f64> = sample.elements().map(Scalar::as_f64).collect();
        let mean = values.iter().sum::<f64>() / 1000.0;
        let variance = values.iter().map(|x| (x - mean).powi(2)).sum::<f64>() / 1000.0;
        assert!(
            mean.abs() < 0.15 && (variance - 1.0).abs() < 0.2,
            "{mean} {variance}"
        );
        assert_eq!(sample.dtype(), DType::F32);
        assert_eq!(
            randn(&[], &mut ChaCha8Rng::seed_from_u64(0))
                .unwrap()
                .shape(),
            &[] as &[usize]
        );
    }

    #[test]
    fn element_lists_infer_their_dtype() {
        let cases: Vec<(&[Scalar], Option<DType>, Tensor)> = vec![
            (&[Int(1), Float(2.5)], None, floats(&[2], &[1.0, 2.5])),
            (&[Int(1), Bool(true)], None, ints(&[2], &[1, 1])),
            (&[Bool(false)], None, bools(&[1], &[false])),
            (&[], None, floats(&[0], &[])),
            (
                &[Float(1.9), Float(-1.9)],
                Some(DType::I64),
                ints(&[2], &[1, -1]),
            ),
            (
                &[Int(0), Int(2)],
                Some(DType::Bool),
                bools(&[2], &[false, true]),
            ),
        ];
        for (elements, dtype, expected) in cases {
            let shape = [elements.len()];
            assert_same(&from_elements(&shape, elements, dtype).unwrap(), &expected);
        }
        let grid = from_elements(&[2, 2], &[Int(1), Int(2), Int(3), Int(4)], None).unwrap();
        assert_same(&grid, &ints(&[2, 2], &[1, 2, 3, 4]));
        assert!(from_elements(&[3], &[Int(1)], None).is_err());
        assert_same(
            &from_elements(&[], &[Float(2.0)], None).unwrap(),
            &floats(&[], &[2.0]),
        );
    }
}
