//! Tests of binary elementwise operations: broadcasting, promotion, Python signs, wrapping, NaN.

use super::*;
use crate::backend::cpu::testing::{assert_same, boolean, bools, float, floats, int, ints};
use BinaryOp::*;

fn check(cases: Vec<(BinaryOp, Tensor, Tensor, Tensor)>) {
    for (op, left, right, expected) in cases {
        let actual = binary(op, &left, &right)
            .unwrap_or_else(|error| panic!("{left:?} {op:?} {right:?}: {error}"));
        assert_same(&actual, &expected);
    }
}

#[test]
fn arithmetic_broadcasts() {
    let column = ints(&[2, 1], &[10, 20]);
    let row = ints(&[3], &[1, 2, 3]);
    check(vec![
        (
            Add,
            column.clone(),
            row.clone(),
            ints(&[2, 3], &[11, 12, 13, 21, 22, 23]),
        ),
        (
            Sub,
            row.clone(),
            column,
            ints(&[2, 3], &[-9, -8, -7, -19, -18, -17]),
        ),
        (Mul, row.clone(), int(2), ints(&[3], &[2, 4, 6])),
        (Mul, int(2), row.clone(), ints(&[3], &[2, 4, 6])),
        (Add, int(1), int(2), int(3)),
        (Add, ints(&[1], &[5]), int(1), ints(&[1], &[6])),
        (Add, ints(&[0], &[]), int(1), ints(&[0], &[])),
        (
            Add,
            ints(&[0, 1], &[]),
            ints(&[3], &[1, 2, 3]),
            ints(&[0, 3], &[]),
        ),
        (Add, ints(&[1, 1], &[1]), row, ints(&[1, 3], &[2, 3, 4])),
    ]);
}

#[test]
fn incompatible_shapes_are_shape_errors() {
    let cases = [
        (ints(&[3], &[1, 2, 3]), ints(&[2], &[1, 2])),
        (ints(&[2, 3], &[0; 6]), ints(&[3, 2], &[0; 6])),
        (ints(&[0], &[]), ints(&[2], &[1, 2])),
    ];
    for (left, right) in cases {
        let error = binary(Add, &left, &right).unwrap_err();
        assert!(matches!(error, KernelError::Shape(_)), "{error}");
    }
}

#[test]
fn promotion_follows_categories() {
    check(vec![
        (
            Add,
            ints(&[2], &[1, 2]),
            float(0.5),
            floats(&[2], &[1.5, 2.5]),
        ),
        (Mul, floats(&[1], &[1.5]), int(2), floats(&[1], &[3.0])),
        (
            Add,
            bools(&[2], &[true, false]),
            int(1),
            ints(&[2], &[2, 1]),
        ),
        (
            Add,
            bools(&[2], &[true, true]),
            bools(&[2], &[true, false]),
            ints(&[2], &[2, 1]),
        ),
        (Sub, bools(&[1], &[false]), boolean(true), ints(&[1], &[-1])),
        (Mul, bools(&[1], &[true]), float(2.5), floats(&[1], &[2.5])),
        (Div, ints(&[2], &[1, 3]), int(2), floats(&[2], &[0.5, 1.5])),
        (
            Div,
            bools(&[1], &[true]),
            boolean(true),
            floats(&[1], &[1.0]),
        ),
        (
            Lt,
            ints(&[2], &[1, 3]),
            float(2.5),
            bools(&[2], &[true, false]),
        ),
        (
            Eq,
            bools(&[2], &[true, false]),
            int(1),
            bools(&[2], &[true, false]),
        ),
        (Maximum, ints(&[1], &[1]), float(0.5), floats(&[1], &[1.0])),
        (And, bools(&[1], &[true]), int(6), ints(&[1], &[0])),
        (Pow, bools(&[1], &[true]), boolean(false), ints(&[1], &[1])),
    ]);
    for op in [Add, Div, Pow, Lt, And, Maximum] {
        for left in DType::ALL {
            for right in DType::ALL {
                let (a, b) = (ints(&[1], &[1]).cast(left), ints(&[1], &[1]).cast(right));
                let Ok(expected) = crate::graph::shape::binary_dtype(op, left, right) else {
                    continue;
                };
                assert_eq!(binary(op, &a, &b).unwrap().dtype(), expected, "{op:?}");
            }
        }
    }
}

#[test]
fn integer_arithmetic_wraps() {
    let max = ints(&[1], &[i64::MAX]);
    let min = ints(&[1], &[i64::MIN]);
    check(vec![
        (Add, max.clone(), int(1), min.clone()),
        (Sub, min.clone(), int(1), max.clone()),
        (Mul, max.clone(), int(2), ints(&[1], &[-2])),
        (FloorDiv, min.clone(), int(-1), min.clone()),
        (Rem, min, int(-1), ints(&[1], &[0])),
        (Pow, int(2), int(64), int(0)),
        (Pow, int(3), int(40), int(3i64.wrapping_pow(40))),
        (
            Pow,
            ints(&[3], &[2, -3, 0]),
            int(3),
            ints(&[3], &[8, -27, 0]),
        ),
        (Pow, int(5), int(0), int(1)),
    ]);
}

#[test]
fn floor_division_and_remainder_follow_python_signs() {
    let a = ints(&[4], &[7, -7, 7, -7]);
    let b = ints(&[4], &[2, 2, -2, -2]);
    let af = floats(&[4], &[7.0, -7.0, 7.0, -7.0]);
    let bf = floats(&[4], &[2.0, 2.0, -2.0, -2.0]);
    check(vec![
        (FloorDiv, a.clone(), b.clone(), ints(&[4], &[3, -4, -4, 3])),
        (Rem, a, b, ints(&[4], &[1, 1, -1, -1])),
        (
            FloorDiv,
            af.clone(),
            bf.clone(),
            floats(&[4], &[3.0, -4.0, -4.0, 3.0]),
        ),
        (Rem, af, bf, floats(&[4], &[1.0, 1.0, -1.0, -1.0])),
        (Rem, float(5.5), float(-2.0), float(-0.5)),
        (FloorDiv, float(-0.5), float(2.0), float(-1.0)),
        (FloorDiv, float(0.0), float(-2.0), float(-0.0)),
        (Rem, ints(&[2], &[6, -6]), int(3), ints(&[2], &[0, 0])),
    ]);
}

#[test]
fn division_by_zero() {
    for op in [FloorDiv, Rem] {
        let error = binary(op, &ints(&[2], &[1, 2]), &ints(&[2], &[1, 0])).unwrap_err();
        assert_eq!(error, KernelError::DivisionByZero);
        let error = binary(op, &bools(&[1], &[true]), &boolean(false)).unwrap_err();
        assert_eq!(error, KernelError::DivisionByZero);
        // No element is computed, so nothing divides by zero.
        assert!(binary(op, &ints(&[0], &[]), &int(0)).is_ok());
    }
    check(vec![
        (
            Div,
            ints(&[3], &[1, -1, 0]),
            int(0),
            floats(&[3], &[f32::INFINITY, f32::NEG_INFINITY, f32::NAN]),
        ),
        (
            FloorDiv,
            floats(&[2], &[1.0, 0.0]),
            float(0.0),
            floats(&[2], &[f32::INFINITY, f32::NAN]),
        ),
        (Rem, float(1.0), float(0.0), float(f64::NAN)),
    ]);
}

#[test]
fn negative_integer_powers_are_type_errors() {
    let error = binary(Pow, &ints(&[2], &[2, 3]), &int(-1)).unwrap_err();
    assert!(matches!(error, KernelError::Type(ref message) if message.contains(".float()")));
    check(vec![(
        Pow,
        ints(&[1], &[2]),
        float(-1.0),
        floats(&[1], &[0.5]),
    )]);
}

#[test]
fn nan_propagates_through_extrema_and_compares_false() {
    let nan = f32::NAN;
    let a = floats(&[3], &[nan, 1.0, 2.0]);
    let b = floats(&[3], &[0.0, nan, 1.0]);
    check(vec![
        (
            Maximum,
            a.clone(),
            b.clone(),
            floats(&[3], &[nan, nan, 2.0]),
        ),
        (
            Minimum,
            a.clone(),
            b.clone(),
            floats(&[3], &[nan, nan, 1.0]),
        ),
        (Eq, a.clone(), a.clone(), bools(&[3], &[false, true, true])),
        (Ne, a.clone(), a.clone(), bools(&[3], &[true, false, false])),
        (
            Lt,
            a.clone(),
            b.clone(),
            bools(&[3], &[false, false, false]),
        ),
        (Ge, a, b, bools(&[3], &[false, false, true])),
        (Maximum, ints(&[2], &[1, 5]), int(3), ints(&[2], &[3, 5])),
        (
            Minimum,
            bools(&[2], &[true, false]),
            boolean(true),
            bools(&[2], &[true, false]),
        ),
    ]);
}

#[test]
fn comparisons_give_bool() {
    let a = ints(&[3], &[1, 2, 3]);
    check(vec![
        (Eq, a.clone(), int(2), bools(&[3], &[false, true, false])),
        (Ne, a.clone(), int(2), bools(&[3], &[true, false, true])),
        (Lt, a.clone(), int(2), bools(&[3], &[true, false, false])),
        (Le, a.clone(), int(2), bools(&[3], &[true, true, false])),
        (Gt, a.clone(), int(2), bools(&[3], &[false, false, true])),
        (Ge, a, int(2), bools(&[3], &[false, true, true])),
        (Lt, boolean(false), boolean(true), boolean(true)),
    ]);
}

#[test]
fn and_or_are_logical_or_bitwise() {
    let t = bools(&[2], &[true, false]);
    check(vec![
        (And, t.clone(), boolean(true), t.clone()),
        (Or, t.clone(), boolean(true), bools(&[2], &[true, true])),
        (And, ints(&[2], &[6, 5]), int(3), ints(&[2], &[2, 1])),
        (Or, ints(&[2], &[4, 1]), int(2), ints(&[2], &[6, 3])),
    ]);
    for (left, right) in [(floats(&[1], &[1.0]), t.clone()), (t, float(1.0))] {
        let error = binary(Or, &left, &right).unwrap_err();
        assert!(matches!(error, KernelError::Type(_)), "{error}");
    }
}

#[test]
fn large_inputs_give_the_same_results_in_parallel() {
    let n = 200_000;
    let values: Vec<i64> = (0..n).map(|i| i - n / 2).collect();
    let t = ints(&[n as usize], &values);
    let Tensor::I64(out) = binary(FloorDiv, &t, &int(7)).unwrap() else {
        panic!("dtype")
    };
    assert!(out.iter().zip(&values).all(|(&q, &x)| q == x.div_euclid(7)));
    let mut divisors = values.clone();
    divisors[n as usize - 1] = 0;
    let divisors = ints(&[n as usize], &divisors);
    assert_eq!(binary(Rem, &t, &divisors), Err(KernelError::DivisionByZero));
}

#[test]
fn owned_operands_are_reused_only_when_unshared_and_fitting() {
    let left = floats(&[3], &[1.0, 2.0, 3.0]);
    let address = left.as_f32().unwrap().as_ptr();
    let kept = left.clone();
    let fresh = binary_owned(Mul, left, float(2.0)).unwrap();
    assert_ne!(fresh.as_f32().unwrap().as_ptr(), address);
    assert_same(&kept, &floats(&[3], &[1.0, 2.0, 3.0]));
    let reused = binary_owned(Sub, float(10.0), kept).unwrap();
    assert_eq!(reused.as_f32().unwrap().as_ptr(), address);
    assert_same(&reused, &floats(&[3], &[9.0, 8.0, 7.0]));
    let grown = binary_owned(
        Add,
        floats(&[2, 1], &[1.0, 2.0]),
        floats(&[2], &[10.0, 20.0]),
    )
    .unwrap();
    assert_same(&grown, &floats(&[2, 2], &[11.0, 21.0, 12.0, 22.0]));
    let compared = binary_owned(Lt, ints(&[2], &[1, 5]), int(3)).unwrap();
    assert_same(&compared, &bools(&[2], &[true, false]));
    let promoted = binary_owned(Add, ints(&[2], &[1, 2]), float(0.5)).unwrap();
    assert_same(&promoted, &floats(&[2], &[1.5, 2.5]));
    assert_eq!(
        binary_owned(Rem, ints(&[1], &[1]), int(0)),
        Err(KernelError::DivisionByZero)
    );
}
