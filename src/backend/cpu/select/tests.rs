//! Tests of nonzero, masked_select, repeat_interleave and unique.

use super::*;
use crate::backend::cpu::testing::{assert_same, boolean, bools, float, floats, int, ints};

#[test]
fn nonzero_lists_coordinates_row_major() {
    let cases: Vec<(Tensor, Tensor)> = vec![
        (
            ints(&[2, 3], &[0, 5, 0, 7, 0, 1]),
            ints(&[3, 2], &[0, 1, 1, 0, 1, 2]),
        ),
        (floats(&[3], &[0.0, f32::NAN, -0.0]), ints(&[1, 1], &[1])),
        (bools(&[2], &[false, false]), ints(&[0, 1], &[])),
        (ints(&[0, 2], &[]), ints(&[0, 2], &[])),
        (boolean(true), ints(&[1, 0], &[])),
        (int(0), ints(&[0, 0], &[])),
    ];
    for (input, expected) in cases {
        assert_same(&nonzero(&input).unwrap(), &expected);
    }
    let transposed = Tensor::I64(
        ints(&[2, 2], &[0, 1, 2, 0])
            .as_i64()
            .unwrap()
            .clone()
            .reversed_axes(),
    );
    assert_same(
        &nonzero(&transposed).unwrap(),
        &ints(&[2, 2], &[0, 1, 1, 0]),
    );
}

#[test]
fn masked_select_broadcasts() {
    let t = ints(&[2, 2], &[1, 2, 3, 4]);
    let cases: Vec<(Tensor, Tensor, Tensor)> = vec![
        (
            t.clone(),
            bools(&[2, 2], &[true, false, false, true]),
            ints(&[2], &[1, 4]),
        ),
        (t.clone(), bools(&[2], &[false, true]), ints(&[2], &[2, 4])),
        (t.clone(), boolean(true), ints(&[4], &[1, 2, 3, 4])),
        (
            int(7),
            bools(&[3], &[true, false, true]),
            ints(&[2], &[7, 7]),
        ),
        (floats(&[0], &[]), boolean(true), floats(&[0], &[])),
    ];
    for (input, mask, expected) in cases {
        assert_same(&masked_select(&input, &mask).unwrap(), &expected);
    }
    assert!(matches!(
        masked_select(&t, &ints(&[1], &[1])),
        Err(KernelError::Type(_))
    ));
    assert!(matches!(
        masked_select(&t, &bools(&[3], &[true; 3])),
        Err(KernelError::Shape(_))
    ));
}

#[test]
fn repeat_interleave_follows_pytorch() {
    let t = ints(&[2, 2], &[1, 2, 3, 4]);
    let cases: Vec<(Tensor, Tensor, Option<usize>, Tensor)> = vec![
        (
            t.clone(),
            int(2),
            None,
            ints(&[8], &[1, 1, 2, 2, 3, 3, 4, 4]),
        ),
        (
            t.clone(),
            ints(&[2], &[1, 2]),
            Some(0),
            ints(&[3, 2], &[1, 2, 3, 4, 3, 4]),
        ),
        (
            t.clone(),
            ints(&[2], &[0, 3]),
            Some(1),
            ints(&[2, 3], &[2, 2, 2, 4, 4, 4]),
        ),
        (t.clone(), ints(&[1], &[0]), Some(0), ints(&[0, 2], &[])),
        (float(1.5), int(3), None, floats(&[3], &[1.5, 1.5, 1.5])),
        (ints(&[0], &[]), ints(&[0], &[]), Some(0), ints(&[0], &[])),
        (
            bools(&[2], &[true, false]),
            ints(&[2], &[1, 2]),
            None,
            bools(&[3], &[true, false, false]),
        ),
    ];
    for (input, counts, dim, expected) in cases {
        assert_same(&repeat_interleave(&input, &counts, dim).unwrap(), &expected);
    }
}

/// Every layout the parallel repeat cuts into parts (one slice per element or several
/// elements per slice, one outer block or many, runs of slices longer than a part, counts
/// past the copies written at once, zero counts to the end), against the slices listed one
/// by one and taken with ndarray's `select`.
#[test]
fn repeat_interleave_matches_the_slices_listed_one_by_one() {
    let cases: Vec<(Vec<usize>, usize)> = vec![
        (vec![PARALLEL_THRESHOLD + 4500], 0),
        (vec![3, 30_000], 1),
        (vec![5000, 3, 4], 1),
        (vec![9000, 2], 0),
        (vec![7, 5], 0),
    ];
    for (shape, dim) in cases {
        let numel: usize = shape.iter().product();
        let values: Vec<i64> = (0..numel as i64).collect();
        let array = ndarray::ArrayD::from_shape_vec(IxDyn(&shape), values).unwrap();
        let size = shape[dim];
        let counts: Vec<i64> = (0..size)
            .map(|slice| {
                if slice + 40 > size {
                    0
                } else {
                    (slice as i64 * 7919 + 13) % 11
                }
            })
            .collect();
        let listed: Vec<usize> = (0..size)
            .flat_map(|slice| std::iter::repeat_n(slice, counts[slice] as usize))
            .collect();
        let expected = Tensor::from(array.select(ndarray::Axis(dim), &listed));
        let input = Tensor::from(array.clone());
        let counts = ints(&[size], &counts);
        assert_same(
            &repeat_interleave(&input, &counts, Some(dim)).unwrap(),
            &expected,
        );
        // The same in another layout, and with one count for every slice.
        let reversed = Tensor::from(array.clone().reversed_axes());
        let expected =
            (array.clone().reversed_axes()).select(ndarray::Axis(shape.len() - 1 - dim), &listed);
        let actual = repeat_interleave(&reversed, &counts, Some(shape.len() - 1 - dim)).unwrap();
        assert_same(&actual, &Tensor::from(expected));
        let thrice: Vec<usize> = (0..size).flat_map(|slice| [slice; 3]).collect();
        let expected = Tensor::from(array.select(ndarray::Axis(dim), &thrice));
        assert_same(
            &repeat_interleave(&input, &int(3), Some(dim)).unwrap(),
            &expected,
        );
    }
}

#[test]
fn repeat_interleave_errors() {
    let t = ints(&[2, 2], &[1, 2, 3, 4]);
    let negative = repeat_interleave(&t, &ints(&[2], &[1, -1]), Some(0)).unwrap_err();
    assert!(matches!(negative, KernelError::Value(_)));
    // Counts checked in parallel runs: the first negative in order is the one reported.
    let n = PARALLEL_THRESHOLD * 2;
    let mut counts = vec![1; n];
    (counts[n / 2 - 1], counts[n / 2]) = (-7, -3);
    let first = repeat_interleave(&ints(&[n], &vec![0; n]), &ints(&[n], &counts), Some(0));
    assert_eq!(
        first.unwrap_err().to_string(),
        "repeat_interleave counts must not be negative, got -7"
    );
    let mismatch = repeat_interleave(&t, &ints(&[3], &[1, 1, 1]), Some(0)).unwrap_err();
    assert_eq!(
        mismatch.to_string(),
        "repeat_interleave has 3 counts for dim 0 of size 2"
    );
    assert!(matches!(
        repeat_interleave(&t, &floats(&[1], &[2.0]), None),
        Err(KernelError::Type(_))
    ));
    assert!(matches!(
        repeat_interleave(&t, &ints(&[1, 1], &[2]), None),
        Err(KernelError::Shape(_))
    ));
    assert!(repeat_interleave(&t, &int(1), Some(2)).is_err());
    let huge = repeat_interleave(&t, &int(i64::MAX), None).unwrap_err();
    assert!(matches!(huge, KernelError::TooLarge { .. }));
    let wide = repeat_interleave(
        &ints(&[2, 1 << 20], &vec![0; 2 << 20]),
        &int(1 << 11),
        Some(0),
    );
    assert!(matches!(wide, Err(KernelError::TooLarge { .. })));
}

#[test]
fn repeat_interleave_indices_counts_out_positions() {
    let cases: Vec<(Tensor, Tensor)> = vec![
        (ints(&[2], &[2, 1]), ints(&[3], &[0, 0, 1])),
        (ints(&[3], &[0, 2, 0]), ints(&[2], &[1, 1])),
        (ints(&[0], &[]), ints(&[0], &[])),
        (int(3), ints(&[3], &[0, 0, 0])),
    ];
    for (counts, expected) in cases {
        assert_same(&repeat_interleave_indices(&counts).unwrap(), &expected);
    }
    assert!(repeat_interleave_indices(&ints(&[1], &[-2])).is_err());
}

#[test]
fn unique_sorts_and_keeps_each_nan() {
    let nan = f32::NAN;
    let cases: Vec<(Tensor, Tensor)> = vec![
        (
            ints(&[2, 3], &[3, 1, 3, 2, 1, -5]),
            ints(&[4], &[-5, 1, 2, 3]),
        ),
        (
            floats(&[5], &[nan, 1.0, -0.0, 0.0, nan]),
            floats(&[4], &[-0.0, 1.0, nan, nan]),
        ),
        (
            bools(&[3], &[true, false, true]),
            bools(&[2], &[false, true]),
        ),
        (ints(&[0], &[]), ints(&[0], &[])),
        (float(2.0), floats(&[1], &[2.0])),
    ];
    for (input, expected) in cases {
        assert_same(&unique(&input).unwrap(), &expected);
    }
    let n = PARALLEL_THRESHOLD + 10;
    let many: Vec<i64> = (0..n as i64).map(|i| (i * 7919) % 1000).collect();
    let distinct = unique(&ints(&[n], &many)).unwrap();
    assert_same(&distinct, &ints(&[1000], &(0..1000).collect::<Vec<_>>()));
}

/// Floats sorted as integer keys: every kind of float (negative `NaN`s, infinities,
/// subnormals, both zeros) in many copies, against a sort that compares floats.
#[test]
fn unique_floats_match_a_comparison_sort() {
    let specials = [
        f32::NAN,
        -f32::NAN,
        f32::INFINITY,
        f32::NEG_INFINITY,
        f32::MIN_POSITIVE / 4.0,
        -f32::MIN_POSITIVE / 4.0,
        f32::MAX,
        f32::MIN,
        0.0,
        -0.0,
        1.0,
        -1.0,
    ];
    let n = PARALLEL_THRESHOLD + 77;
    let values: Vec<f32> = (0..n)
        .map(|i| match i % 5 {
            0 => specials[i / 5 % specials.len()],
            _ => ((i * 7919) % 2003) as f32 / 7.0 - 100.0,
        })
        .collect();
    let mut numbers: Vec<f32> = values.iter().copied().filter(|x| !x.is_nan()).collect();
    numbers.sort_by(f32::total_cmp);
    numbers.dedup_by(|a, b| a == b);
    let nans = values.iter().filter(|x| x.is_nan()).count();
    numbers.extend(std::iter::repeat_n(f32::NAN, nans));
    let actual = unique(&floats(&[n], &values)).unwrap();
    assert_same(&actual, &floats(&[numbers.len()], &numbers));
    let small = unique(&floats(&[4], &[0.0, 2.0, -0.0, 0.0])).unwrap();
    assert_same(&small, &floats(&[2], &[-0.0, 2.0]));
}

/// Integers in a small span, marked in a bitmap, give what sorting them gives: negative
/// values, the ends of `i64`, values on the edges of the bitmap's words, and spans just
/// under and over the limit (over it, and at the full width of `i64`, they are sorted: by
/// comparisons when few, by the radix sort when many).
#[test]
fn unique_ints_in_a_span_match_the_sort() {
    let n = PARALLEL_THRESHOLD + 33;
    let count = n as i64;
    let limit = count * SPAN_PER_ELEMENT as i64;
    let cases: Vec<(Vec<i64>, bool)> = vec![
        ((0..count).map(|i| (i * 7919) % 5003 - 2500).collect(), true),
        (
            (0..count).map(|i| i64::MIN + (i * 31) % 1000).collect(),
            true,
        ),
        (
            (0..count).map(|i| i64::MAX - (i * 31) % 1000).collect(),
            true,
        ),
        ((0..count).map(|i| (i * 7919) % limit).collect(), true),
        (
            (0..count).map(|i| (i * 7919) % (limit + 1)).collect(),
            false,
        ),
        (vec![i64::MIN, i64::MAX, 0, i64::MIN], false),
        (
            (0..count)
                .map(|i| match i % 7 {
                    0 => [i64::MIN, i64::MAX, -1, 0][(i / 7 % 4) as usize],
                    _ => ((i * 7919) % 1001 - 500) * (1 << 40) + i % 3,
                })
                .collect(),
            false,
        ),
        (vec![7; 10], true),
        ((0..70).map(|i| i * 64 - 1).collect(), true),
        (vec![], true),
    ];
    for (values, marked) in cases {
        let mut expected = values.clone();
        expected.sort_unstable();
        expected.dedup();
        let in_span = distinct_in_span(&values).unwrap();
        assert_eq!(
            in_span.is_some(),
            marked,
            "{:?}",
            &values[..values.len().min(4)]
        );
        let actual = unique(&ints(&[values.len()], &values)).unwrap();
        assert_same(&actual, &ints(&[expected.len()], &expected));
    }
}
