//! Tests of taking rows against plain loops, and of finding the first bad index.

use super::*;

fn reference<T: Copy>(rows: &Rows<'_, T>, positions: &[usize]) -> Vec<T> {
    let mut out = Vec::new();
    for outer in 0..rows.outer {
        for &position in positions {
            let start = (outer * rows.size + position) * rows.inner;
            out.extend_from_slice(&rows.data[start..start + rows.inner]);
        }
    }
    out
}

/// Positions that jump around, repeat and cover the ends.
fn scattered(count: usize, size: usize) -> Vec<usize> {
    (0..count)
        .map(|step| (step * 7919 + step / 3) % size)
        .collect()
}

#[test]
fn take_rows_matches_a_plain_loop() {
    let layouts = [
        (1, 10, 1),
        (1, PARALLEL_THRESHOLD + 5, 1),
        (3, 11, 1),
        (1, 9, 4),
        (4, 9, CHUNK / 2 + 1),
        (2, 5, CHUNK + 3),
        (PARALLEL_THRESHOLD / 4 + 1, 3, 2),
    ];
    for (outer, size, inner) in layouts {
        let data: Vec<i64> = (0..(outer * size * inner) as i64).collect();
        let rows = Rows {
            data: &data,
            outer,
            size,
            inner,
        };
        for count in [0, 1, size, 3 * size + 1] {
            let positions = scattered(count, size);
            let taken = take_rows(&rows, &positions, &|position| position).unwrap();
            assert_eq!(
                taken,
                reference(&rows, &positions),
                "{outer} {size} {inner}"
            );
        }
    }
}

#[test]
fn take_rows_refuses_positions_out_of_range() {
    for (outer, size, inner) in [(1, 10, 1), (2, 10, 3)] {
        let data = vec![0u8; outer * size * inner];
        let rows = Rows {
            data: &data,
            outer,
            size,
            inner,
        };
        let mut positions = scattered(PARALLEL_THRESHOLD + 9, size);
        *positions.last_mut().unwrap() = size;
        assert_eq!(take_rows(&rows, &positions, &|position| position), None);
    }
}

#[test]
fn first_invalid_finds_the_earliest_in_order() {
    for length in [1, 100, CHUNK + 1, PARALLEL_THRESHOLD * 3] {
        let mut items: Vec<i64> = (0..length as i64).collect();
        assert_eq!(first_invalid(&items, |item| item >= 0), None);
        items[length - 1] = -2;
        if length > 2 {
            items[length / 2 + 1] = -1;
        }
        let expected = items.iter().copied().find(|&item| item < 0);
        assert_eq!(first_invalid(&items, |item| item >= 0), expected);
    }
    assert_eq!(first_invalid::<i64>(&[], |_| false), None);
}

#[test]
fn views_not_in_standard_layout_take_the_same_rows() {
    let array =
        ndarray::Array2::from_shape_fn((40, 30), |(row, column)| (row * 30 + column) as f32)
            .into_dyn()
            .into_shared();
    let transposed = array.clone().reversed_axes();
    let standard_copy = transposed.as_standard_layout().into_owned().into_shared();
    let positions = scattered(55, 30);
    for dim in 0..2 {
        let size = transposed.shape()[dim];
        let positions: Vec<usize> = positions.iter().map(|&position| position % size).collect();
        let general = take_along(&transposed, dim, &positions, &listed_positions()).unwrap();
        let fast = take_along(&standard_copy, dim, &positions, &listed_positions()).unwrap();
        assert_eq!(general, fast);
    }
}
