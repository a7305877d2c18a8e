//! Tests of matmul: shapes, promotion, errors and the parallel split.

use super::*;
use crate::backend::cpu::testing::{assert_same, bools, floats, int, ints};

fn counting(shape: &[usize]) -> Tensor {
    let numel = shape.iter().product::<usize>() as i64;
    ints(shape, &(1..=numel).collect::<Vec<_>>())
}

#[test]
fn products_follow_pytorch_shapes() {
    let cases: Vec<(Tensor, Tensor, Tensor)> = vec![
        (ints(&[3], &[1, 2, 3]), ints(&[3], &[4, 5, 6]), int(32)),
        (
            counting(&[2, 3]),
            ints(&[3], &[1, 0, -1]),
            ints(&[2], &[-2, -2]),
        ),
        (
            ints(&[2], &[1, -1]),
            counting(&[2, 3]),
            ints(&[3], &[-3, -3, -3]),
        ),
        (
            counting(&[2, 2]),
            counting(&[2, 2]),
            ints(&[2, 2], &[7, 10, 15, 22]),
        ),
        (
            counting(&[2, 1, 2]),
            counting(&[2, 1]),
            ints(&[2, 1, 1], &[5, 11]),
        ),
        (
            counting(&[2, 1, 2]),
            ints(&[2], &[1, 1]),
            ints(&[2, 1], &[3, 7]),
        ),
        (
            ints(&[2], &[1, 1]),
            counting(&[2, 2, 1]),
            ints(&[2, 1], &[3, 7]),
        ),
        (
            counting(&[3, 1, 1, 2]),
            counting(&[2, 2, 1]),
            ints(&[3, 2, 1, 1], &[5, 11, 11, 25, 17, 39]),
        ),
        (ints(&[0], &[]), ints(&[0], &[]), int(0)),
        (
            ints(&[2, 0], &[]),
            ints(&[0, 3], &[]),
            ints(&[2, 3], &[0; 6]),
        ),
        (ints(&[0, 2], &[]), counting(&[2, 3]), ints(&[0, 3], &[])),
        (
            ints(&[0, 1, 2], &[]),
            counting(&[2, 3]),
            ints(&[0, 1, 3], &[]),
        ),
    ];
    for (left, right, expected) in cases {
        let actual =
            matmul(&left, &right).unwrap_or_else(|error| panic!("{left:?} @ {right:?}: {error}"));
        assert_same(&actual, &expected);
        let float_product = matmul(&left.cast(DType::F32), &right.cast(DType::F32)).unwrap();
        assert_same(&float_product, &expected.cast(DType::F32));
    }
}

#[test]
fn operands_promote_and_bool_is_refused() {
    let product = matmul(&counting(&[1, 2]), &floats(&[2, 1], &[0.5, 0.25])).unwrap();
    assert_same(&product, &floats(&[1, 1], &[1.0]));
    let mixed = matmul(&bools(&[1, 2], &[true, true]), &counting(&[2, 1])).unwrap();
    assert_same(&mixed, &ints(&[1, 1], &[3]));
    let error = matmul(&bools(&[1], &[true]), &bools(&[1], &[true])).unwrap_err();
    assert!(matches!(error, KernelError::Type(_)));
    let wrapped = matmul(&ints(&[2], &[i64::MAX, 1]), &ints(&[2], &[2, 2])).unwrap();
    assert_same(&wrapped, &int(0));
}

#[test]
fn mismatches_name_both_shapes() {
    let error = matmul(&counting(&[2, 3]), &counting(&[4, 5])).unwrap_err();
    assert_eq!(
        error.to_string(),
        "matmul inner sizes differ (3 and 4): [2, 3] @ [4, 5]"
    );
    let batch = matmul(&counting(&[2, 1, 3]), &counting(&[3, 3, 1])).unwrap_err();
    assert_eq!(
        batch.to_string(),
        "matmul batch dims cannot be broadcast: [2, 1, 3] @ [3, 3, 1]"
    );
    let scalar = matmul(&int(2), &counting(&[2])).unwrap_err();
    assert!(matches!(scalar, KernelError::Shape(_)));
    let huge = matmul(&floats(&[1 << 16, 0], &[]), &floats(&[0, 1 << 16], &[])).unwrap_err();
    assert!(matches!(huge, KernelError::TooLarge { .. }));
}

#[test]
fn large_products_split_across_threads() {
    let (rows, inner, columns) = (96, 130, 100);
    let left: Vec<f32> = (0..rows * inner).map(|i| (i % 7) as f32 - 3.0).collect();
    let right: Vec<f32> = (0..inner * columns).map(|i| (i % 5) as f32 - 2.0).collect();
    let product = matmul(
        &floats(&[rows, inner], &left),
        &floats(&[inner, columns], &right),
    )
    .unwrap();
    let out = product.as_f32().unwrap();
    for (row, column) in [(0, 0), (rows - 1, columns - 1), (37, 61)] {
        let expected: f32 = (0..inner)
            .map(|p| left[row * inner + p] * right[p * columns + column])
            .sum();
        assert_eq!(out[[row, column]], expected, "({row}, {column})");
    }
    let left_integers: Vec<i64> = left.iter().map(|&x| x as i64).collect();
    let right_integers: Vec<i64> = right.iter().map(|&x| x as i64).collect();
    let integer = matmul(
        &ints(&[rows, inner], &left_integers),
        &ints(&[inner, columns], &right_integers),
    )
    .unwrap();
    assert_same(&integer.cast(DType::F32), &product);
    let transposed = Tensor::F32(product.as_f32().unwrap().clone().reversed_axes());
    let back = matmul(&transposed, &floats(&[rows], &vec![1.0; rows])).unwrap();
    assert_eq!(back.shape(), &[columns]);
}

/// The chain the `f32` kernel promises: `fma` over the inner index in order from `+0.0`.
fn reference(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> ndarray::Array2<f32> {
    ndarray::Array2::from_shape_fn((left.nrows(), right.ncols()), |(i, j)| {
        (0..left.ncols()).fold(0.0f32, |total, p| {
            left[[i, p]].mul_add(right[[p, j]], total)
        })
    })
}

fn wavy(shape: &[usize], seed: usize) -> Tensor {
    let numel = shape.iter().product::<usize>();
    let values: Vec<f32> = (0..numel)
        .map(|i| ((i * 7919 + seed) % 101) as f32 / 8.0 - 6.0)
        .collect();
    floats(shape, &values)
}

#[test]
fn batched_broadcast_products_are_the_same_bits_on_any_thread_count() {
    // 12 products of 40x50 @ 50x60: the batch runs across threads when it has four products
    // per thread, otherwise each product's row blocks do.
    let (left, right) = (wavy(&[3, 1, 40, 50], 1), wavy(&[4, 50, 60], 2));
    let results: Vec<Tensor> = [1, 2, 8]
        .into_iter()
        .map(|threads| {
            let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
            pool.expect("a thread pool")
                .install(|| matmul(&left, &right).unwrap())
        })
        .collect();
    let (lefts, rights) = (left.as_f32().unwrap(), right.as_f32().unwrap());
    let product = results[0].as_f32().unwrap();
    assert_eq!(product.shape(), &[3, 4, 40, 60]);
    for (i, j) in [(0, 0), (1, 2), (2, 3)] {
        let a = lefts.index_axis(Axis(0), i).index_axis_move(Axis(0), 0);
        let b = rights.index_axis(Axis(0), j);
        let expected = reference(
            a.into_dimensionality().unwrap(),
            b.into_dimensionality().unwrap(),
        );
        let actual = product.index_axis(Axis(0), i).index_axis_move(Axis(0), j);
        assert_eq!(actual, expected.into_dyn(), "batch ({i}, {j})");
    }
    for result in &results[1..] {
        assert_same(result, &results[0]);
    }
}

#[test]
fn the_callers_interrupt_stops_a_product_run_on_the_thread_pool() {
    use std::sync::Arc;
    use std::sync::atomic::AtomicBool;
    // Large enough to run on rayon's workers, which do not see the caller's flag.
    let size = 128;
    assert!(size * size * size >= PARALLEL_WORK);
    let floats_in = floats(&[size, size], &vec![1.0; size * size]);
    let ints_in = ints(&[size, size], &vec![1; size * size]);
    let computed = matmul(&floats_in, &floats_in).unwrap();
    assert!(
        computed
            .elements()
            .all(|value| value.as_f64() == size as f64)
    );

    crate::backend::interrupt::watch(&Arc::new(AtomicBool::new(true)));
    let stopped = [
        matmul(&floats_in, &floats_in).unwrap(),
        matmul(&ints_in, &ints_in).unwrap(),
    ];
    crate::backend::interrupt::watch(&Arc::new(AtomicBool::new(false)));
    for product in stopped {
        assert!(product.elements().all(|value| value.as_f64() == 0.0));
    }
}
