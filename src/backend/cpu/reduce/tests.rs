//! Tests of reductions: dims, keepdim, dtypes, ties, NaN and empty extents.

use super::*;
use crate::backend::cpu::testing::{assert_same, bools, floats, int, ints};
use ReduceOp::*;

/// An operation, its input, dims and keepdim, and the expected result.
type Case<'a> = (ReduceOp, Tensor, Option<&'a [usize]>, bool, Tensor);

fn check(cases: Vec<Case>) {
    for (op, input, dims, keepdim, expected) in cases {
        let actual = reduce(op, &input, dims, keepdim)
            .unwrap_or_else(|error| panic!("{op:?} {dims:?} of {input:?}: {error}"));
        assert_same(&actual, &expected);
    }
}

#[test]
fn reductions_over_dims_with_and_without_keepdim() {
    let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
    check(vec![
        (Sum, t.clone(), None, false, int(21)),
        (Sum, t.clone(), None, true, ints(&[1, 1], &[21])),
        (Sum, t.clone(), Some(&[0]), false, ints(&[3], &[5, 7, 9])),
        (Sum, t.clone(), Some(&[1]), true, ints(&[2, 1], &[6, 15])),
        (Sum, t.clone(), Some(&[1, 0]), false, int(21)),
        (Sum, t.clone(), Some(&[]), false, t.clone()),
        (Prod, t.clone(), Some(&[0]), false, ints(&[3], &[4, 10, 18])),
        (Max, t.clone(), Some(&[1]), false, ints(&[2], &[3, 6])),
        (Min, t.clone(), Some(&[0]), true, ints(&[1, 3], &[1, 2, 3])),
        (Argmax, t.clone(), Some(&[0]), false, ints(&[3], &[1, 1, 1])),
        (Argmin, t.clone(), Some(&[1]), true, ints(&[2, 1], &[0, 0])),
        (Argmax, t.clone(), None, false, int(5)),
        (Argmax, t.clone(), None, true, ints(&[1, 1], &[5])),
        (
            All,
            t.clone(),
            Some(&[1]),
            false,
            bools(&[2], &[true, true]),
        ),
        (
            Any,
            ints(&[2, 2], &[0, 0, 0, 1]),
            Some(&[1]),
            false,
            bools(&[2], &[false, true]),
        ),
    ]);
    let cube = floats(&[2, 2, 2], &[1.0, 2.0, 3.0, 4.0, 5.0, 6.0, 7.0, 8.0]);
    check(vec![
        (
            Sum,
            cube.clone(),
            Some(&[0, 2]),
            false,
            floats(&[2], &[14.0, 22.0]),
        ),
        (
            Mean,
            cube.clone(),
            Some(&[0, 2]),
            true,
            floats(&[1, 2, 1], &[3.5, 5.5]),
        ),
        (
            Max,
            cube.clone(),
            Some(&[0, 1]),
            false,
            floats(&[2], &[7.0, 8.0]),
        ),
        (Mean, cube, None, false, floats(&[], &[4.5])),
    ]);
}

#[test]
fn reductions_on_transposed_views_follow_logical_order() {
    let t = ints(&[2, 3], &[1, 2, 3, 4, 5, 6]);
    let transposed = Tensor::I64(t.as_i64().unwrap().clone().reversed_axes());
    check(vec![
        (
            Sum,
            transposed.clone(),
            Some(&[1]),
            false,
            ints(&[3], &[5, 7, 9]),
        ),
        (Argmax, transposed, None, false, int(5)),
    ]);
}

#[test]
fn output_dtypes() {
    let flags = bools(&[3], &[true, true, false]);
    check(vec![
        (Sum, flags.clone(), None, false, int(2)),
        (Prod, flags.clone(), None, false, int(0)),
        (Max, flags.clone(), None, false, bools(&[], &[true])),
        (Min, flags.clone(), None, false, bools(&[], &[false])),
        (Argmin, flags.clone(), None, false, int(2)),
        (
            All,
            floats(&[2], &[1.0, f32::NAN]),
            None,
            false,
            bools(&[], &[true]),
        ),
        (
            Any,
            floats(&[2], &[0.0, -0.0]),
            None,
            false,
            bools(&[], &[false]),
        ),
        (Sum, ints(&[2], &[i64::MAX, 1]), None, false, int(i64::MIN)),
    ]);
    for input in [flags, ints(&[1], &[1])] {
        let error = reduce(Mean, &input, None, false).unwrap_err();
        assert!(
            matches!(error, KernelError::Type(ref message) if message.contains("needs an f32 tensor"))
        );
    }
}

#[test]
fn ties_pick_the_first_and_nan_wins() {
    let nan = f32::NAN;
    check(vec![
        (Argmax, ints(&[4], &[1, 3, 3, 0]), None, false, int(1)),
        (Argmin, ints(&[4], &[2, 0, 5, 0]), None, false, int(1)),
        (
            Argmax,
            floats(&[4], &[1.0, nan, 5.0, nan]),
            None,
            false,
            int(1),
        ),
        (Argmin, floats(&[3], &[1.0, 0.0, nan]), None, false, int(2)),
        (
            Max,
            floats(&[3], &[1.0, nan, 5.0]),
            None,
            false,
            floats(&[], &[nan]),
        ),
        (
            Min,
            floats(&[3], &[nan, 1.0, 0.0]),
            None,
            false,
            floats(&[], &[nan]),
        ),
        (
            Sum,
            floats(&[2], &[1.0, nan]),
            None,
            false,
            floats(&[], &[nan]),
        ),
    ]);
}

#[test]
fn empty_and_zero_dim_inputs() {
    let empty = floats(&[0, 3], &[]);
    check(vec![
        (Sum, empty.clone(), None, false, floats(&[], &[0.0])),
        (Prod, empty.clone(), None, false, floats(&[], &[1.0])),
        (Mean, empty.clone(), None, false, floats(&[], &[f32::NAN])),
        (All, empty.clone(), None, false, bools(&[], &[true])),
        (Any, empty.clone(), None, false, bools(&[], &[false])),
        (
            Sum,
            empty.clone(),
            Some(&[0]),
            false,
            floats(&[3], &[0.0, 0.0, 0.0]),
        ),
        (Max, empty.clone(), Some(&[1]), false, floats(&[0], &[])),
        (Argmax, empty.clone(), Some(&[1]), true, ints(&[0, 1], &[])),
        (Sum, ints(&[], &[7]), None, false, int(7)),
        (Max, ints(&[], &[7]), Some(&[0]), true, int(7)),
        (Argmax, floats(&[], &[2.0]), None, false, int(0)),
    ]);
    for op in [Max, Min, Argmax, Argmin] {
        let error = reduce(op, &empty, None, false).unwrap_err();
        assert!(matches!(error, KernelError::Empty(_)), "{error}");
        let error = reduce(op, &empty, Some(&[0]), false).unwrap_err();
        assert!(matches!(error, KernelError::Empty(_)), "{error}");
    }
}

#[test]
fn bad_dims_are_errors() {
    let t = ints(&[2, 3], &[0; 6]);
    let cases: Vec<(ReduceOp, &[usize])> = vec![
        (Sum, &[2]),
        (Sum, &[0, 0]),
        (Max, &[usize::MAX]),
        (Sum, &[1]),
    ];
    for (op, dims) in cases {
        let input = if dims == [1] { int(1) } else { t.clone() };
        assert!(
            reduce(op, &input, Some(dims), false).is_err(),
            "{op:?} {dims:?}"
        );
    }
    let error = reduce(Argmax, &t, Some(&[0, 1]), false).unwrap_err();
    assert!(matches!(error, KernelError::Type(_)));
}

#[test]
fn long_lanes_reduce_in_blocks() {
    let n = PARALLEL_THRESHOLD * 3 + 5;
    let mut values = vec![1.0f32; n];
    values[n - 2] = 9.0;
    let t = floats(&[n], &values);
    check(vec![
        (Sum, t.clone(), None, false, floats(&[], &[n as f32 + 8.0])),
        (Argmax, t.clone(), None, false, int(n as i64 - 2)),
        (Max, t.clone(), None, false, floats(&[], &[9.0])),
        (
            Mean,
            t.clone(),
            None,
            false,
            floats(&[], &[(n as f32 + 8.0) / n as f32]),
        ),
    ]);
    let rows = floats(&[n / 5, 5], &values[..n / 5 * 5]);
    let sums = reduce(Sum, &rows, Some(&[1]), false).unwrap();
    assert_eq!(sums.shape(), &[n / 5]);
    let flags = bools(&[n], &vec![true; n]);
    check(vec![(All, flags.clone(), None, false, bools(&[], &[true]))]);
    check(vec![(Sum, flags, None, false, int(n as i64))]);
}

#[test]
fn a_result_over_the_element_limit_is_refused_even_from_no_elements() {
    let rows = 1usize << 36;
    let empty_rows = floats(&[rows, 0], &[]);
    for op in [Sum, Mean, Prod] {
        assert_eq!(
            reduce(op, &empty_rows, Some(&[1]), false).unwrap_err(),
            KernelError::TooLarge {
                numel: rows as u128
            }
        );
    }
    let flags = bools(&[rows, 0], &[]);
    assert!(matches!(
        reduce(Any, &flags, Some(&[1]), true),
        Err(KernelError::TooLarge { .. })
    ));
    // Reducing the long dim instead leaves nothing.
    assert_eq!(
        reduce(Sum, &empty_rows, Some(&[0]), false).unwrap().shape(),
        &[0]
    );
}
