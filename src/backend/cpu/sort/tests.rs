use super::*;
use crate::backend::cpu::testing::{assert_same, bools, floats, ints};
use crate::dtype::DType;

fn sorted(input: &Tensor, dim: usize, descending: bool) -> (Tensor, Tensor) {
    let mut outputs = sort(input, dim, descending).unwrap().into_iter();
    (outputs.next().unwrap(), outputs.next().unwrap())
}

#[test]
fn sorting_is_stable_with_nan_above_every_number() {
    let nan = f32::NAN;
    let x = floats(&[8], &[3.0, nan, 1.0, 2.0, nan, 1.0, -0.0, 0.0]);
    let (values, indices) = sorted(&x, 0, false);
    assert_same(
        &values,
        &floats(&[8], &[-0.0, 0.0, 1.0, 1.0, 2.0, 3.0, nan, nan]),
    );
    assert_same(&indices, &ints(&[8], &[6, 7, 2, 5, 3, 0, 1, 4]));
    let (values, indices) = sorted(&x, 0, true);
    assert_same(
        &values,
        &floats(&[8], &[nan, nan, 3.0, 2.0, 1.0, 1.0, -0.0, 0.0]),
    );
    assert_same(&indices, &ints(&[8], &[1, 4, 0, 3, 2, 5, 6, 7]));
}

#[test]
fn sorting_along_any_dim_of_every_dtype() {
    let x = ints(&[2, 2], &[3, 1, 2, 2]);
    let (values, indices) = sorted(&x, 0, false);
    assert_same(&values, &ints(&[2, 2], &[2, 1, 3, 2]));
    assert_same(&indices, &ints(&[2, 2], &[1, 0, 0, 1]));
    let (values, indices) = sorted(&x, 1, true);
    assert_same(&values, &ints(&[2, 2], &[3, 1, 2, 2]));
    assert_same(&indices, &ints(&[2, 2], &[0, 1, 0, 1]));
    let extremes = ints(&[3], &[i64::MAX, i64::MIN, -1]);
    assert_same(
        &sorted(&extremes, 0, false).0,
        &ints(&[3], &[i64::MIN, -1, i64::MAX]),
    );
    let flags = bools(&[3], &[true, false, true]);
    let (values, indices) = sorted(&flags, 0, false);
    assert_same(&values, &bools(&[3], &[false, true, true]));
    assert_same(&indices, &ints(&[3], &[1, 0, 2]));
    let (values, _) = sorted(&flags, 0, true);
    assert_same(&values, &bools(&[3], &[true, true, false]));
}

#[test]
fn top_k_selects_then_sorts() {
    let nan = f32::NAN;
    let x = floats(&[2, 4], &[1.0, 4.0, 4.0, nan, 0.5, -1.0, 2.0, 2.0]);
    let outputs = topk(&x, 2, 1, true).unwrap();
    assert_same(&outputs[0], &floats(&[2, 2], &[nan, 4.0, 2.0, 2.0]));
    assert_same(&outputs[1], &ints(&[2, 2], &[3, 1, 2, 3]));
    let outputs = topk(&x, 1, 0, false).unwrap();
    assert_same(&outputs[0], &floats(&[1, 4], &[0.5, -1.0, 2.0, 2.0]));
    assert_same(&outputs[1], &ints(&[1, 4], &[1, 1, 1, 1]));
    let none = topk(&x, 0, 1, true).unwrap();
    assert_same(&none[0], &floats(&[2, 0], &[]));
    assert!(matches!(topk(&x, 5, 1, true), Err(KernelError::Shape(_))));
    assert!(sort(&x, 2, false).is_err());
}

#[test]
fn empty_and_long_lines() {
    let empty = floats(&[0, 3], &[]);
    assert_same(&sorted(&empty, 0, false).0, &empty);
    assert_same(&sorted(&empty, 1, true).1, &ints(&[0, 3], &[]));
    // A line long enough for the parallel sort, and many lines sorted in parallel, agree
    // with a sequential stable sort.
    let count = 3 * PARALLEL_THRESHOLD;
    let data: Vec<f32> = (0..count).map(|i| ((i * 7919) % 1000) as f32).collect();
    let mut expected: Vec<(usize, f32)> = data.iter().copied().enumerate().collect();
    expected.sort_by(|a, b| a.1.total_cmp(&b.1));
    let long = Tensor::from_vec(&[count], data.clone()).unwrap();
    let (values, indices) = sorted(&long, 0, false);
    let want_values: Vec<f32> = expected.iter().map(|(_, v)| *v).collect();
    let want_indices: Vec<i64> = expected.iter().map(|(i, _)| *i as i64).collect();
    assert_same(&values, &Tensor::from_vec(&[count], want_values).unwrap());
    assert_same(
        &indices,
        &Tensor::from_vec(&[count], want_indices.clone()).unwrap(),
    );
    // Descending, as integers, as flags: the radix sort of each packed key keeps ties in
    // the order of their positions.
    let mut descending = expected.clone();
    descending.sort_by(|a, b| b.1.total_cmp(&a.1));
    let integers: Vec<i64> = data.iter().map(|&v| v as i64 - 500).collect();
    let flags: Vec<bool> = data.iter().map(|&v| v < 300.0).collect();
    let mut by_flag: Vec<(usize, bool)> = flags.iter().copied().enumerate().collect();
    by_flag.sort_by_key(|pair| pair.1);
    let positions = |order: &[(usize, f32)]| order.iter().map(|(i, _)| *i as i64).collect();
    let cases: [(Tensor, bool, Vec<i64>); 4] = [
        (long.clone(), true, positions(&descending)),
        (long.cast(DType::I64), false, want_indices.clone()),
        (
            Tensor::from_vec(&[count], integers).unwrap(),
            false,
            want_indices,
        ),
        (
            Tensor::from_vec(&[count], flags).unwrap(),
            false,
            by_flag.iter().map(|(i, _)| *i as i64).collect(),
        ),
    ];
    for (input, descending, order) in cases {
        let (_, indices) = sorted(&input, 0, descending);
        assert_same(&indices, &Tensor::from_vec(&[count], order).unwrap());
    }
    let rows = Tensor::from_vec(&[count / 16, 16], data).unwrap();
    let (values, _) = sorted(&rows, 1, true);
    let values = values.as_f32().unwrap();
    for row in values.outer_iter() {
        let row: Vec<f32> = row.iter().copied().collect();
        assert!(row.windows(2).all(|pair| pair[0] >= pair[1]), "{row:?}");
    }
}

#[test]
fn a_long_dim_with_no_lines_sorts_to_nothing_without_scratch() {
    // 2^36 rows and no columns: no line to sort, so no keys are reserved for one.
    let rows = 1usize << 36;
    let empty = floats(&[rows, 0], &[]);
    let (values, indices) = sorted(&empty, 0, false);
    assert_eq!(
        (values.shape(), indices.shape()),
        (&[rows, 0][..], &[rows, 0][..])
    );
    let kept = topk(&empty, 0, 0, true).unwrap();
    assert_eq!(kept[0].shape(), &[0, 0]);
}

/// A long line's values are read back from their keys where a key has one value, and from
/// the line where it does not: both zeros keep their signs and `NaN`s their payloads.
#[test]
fn a_long_line_keeps_the_bits_of_zeros_and_nans() {
    let specials = [
        0.0,
        -0.0,
        f32::from_bits(0x7fc0_0001),
        f32::from_bits(0xffc0_0002),
        f32::INFINITY,
        f32::NEG_INFINITY,
        -f32::MIN_POSITIVE / 8.0,
        f32::MIN_POSITIVE / 8.0,
        f32::MAX,
        f32::MIN,
    ];
    let count = 2 * PARALLEL_THRESHOLD + 11;
    let data: Vec<f32> = (0..count)
        .map(|i| match i % 3 {
            0 => specials[i / 3 % specials.len()],
            _ => ((i * 7919) % 4001) as f32 / 16.0 - 125.0,
        })
        .collect();
    let key = |value: &f32| crate::graph::semantics::sort_key_f32(*value);
    for descending in [false, true] {
        let mut expected: Vec<(usize, f32)> = data.iter().copied().enumerate().collect();
        if descending {
            expected.sort_by_key(|(_, value)| std::cmp::Reverse(key(value)));
        } else {
            expected.sort_by_key(|(_, value)| key(value));
        }
        let input = Tensor::from_vec(&[count], data.clone()).unwrap();
        let (values, indices) = sorted(&input, 0, descending);
        let bits: Vec<u32> = values
            .as_f32()
            .unwrap()
            .iter()
            .map(|v| v.to_bits())
            .collect();
        let want: Vec<u32> = expected.iter().map(|(_, v)| v.to_bits()).collect();
        assert!(bits == want, "values differ, descending: {descending}");
        let order: Vec<i64> = expected.iter().map(|(i, _)| *i as i64).collect();
        assert_same(&indices, &Tensor::from_vec(&[count], order).unwrap());
    }
}
