//! Tests of stream compaction against a plain sequential filter.

use super::*;

/// Flags from a small linear congruential generator: about `percent` percent set.
fn random_flags(length: usize, percent: u64, seed: u64) -> Vec<bool> {
    let mut state = seed.wrapping_mul(6_364_136_223_846_793_005).wrapping_add(1);
    (0..length)
        .map(|_| {
            state = state
                .wrapping_mul(6_364_136_223_846_793_005)
                .wrapping_add(1_442_695_040_888_963_407);
            (state >> 33) % 100 < percent
        })
        .collect()
}

/// Lengths around the chunk size and the parallel threshold, where parts meet.
fn lengths() -> Vec<usize> {
    let edges = [CHUNK, PARALLEL_THRESHOLD, 3 * CHUNK];
    let mut lengths = vec![0, 1, 2, 7, 1000];
    for edge in edges {
        lengths.extend([edge - 1, edge, edge + 1]);
    }
    lengths
}

/// Masks of every kind for one length.
fn masks(length: usize) -> Vec<Vec<bool>> {
    vec![
        vec![true; length],
        vec![false; length],
        random_flags(length, 50, length as u64),
        random_flags(length, 1, 7),
        (0..length)
            .map(|position| position % CHUNK == CHUNK - 1)
            .collect(),
    ]
}

fn reference<T: Copy>(values: &[T], width: usize, flags: &[bool]) -> Vec<T> {
    flags
        .iter()
        .enumerate()
        .filter(|(_, flag)| **flag)
        .flat_map(|(position, _)| values[position * width..(position + 1) * width].to_vec())
        .collect()
}

#[test]
fn kept_values_match_a_sequential_filter() {
    for length in lengths() {
        let values: Vec<i64> = (0..length as i64).map(|value| value * 3 - 5).collect();
        for flags in masks(length) {
            let kept = kept_values(&values, &flags).unwrap();
            let expected = reference(&values, 1, &flags);
            assert_eq!(kept.count, expected.len());
            assert_eq!(kept.values, expected, "length {length}");
        }
    }
}

#[test]
fn kept_rows_match_a_sequential_filter() {
    for length in [0, 1, 5, CHUNK - 1, CHUNK + 1, PARALLEL_THRESHOLD + 3] {
        for width in [0, 1, 3] {
            let values: Vec<f32> = (0..length * width).map(|value| value as f32).collect();
            for flags in masks(length) {
                let kept = kept_rows(&values, width, &flags).unwrap();
                assert_eq!(kept.count, flags.iter().filter(|flag| **flag).count());
                assert_eq!(kept.values, reference(&values, width, &flags));
            }
        }
    }
}

#[test]
fn positions_are_increasing_and_exact() {
    for length in lengths() {
        for flags in masks(length) {
            let expected: Vec<usize> = (0..length).filter(|&position| flags[position]).collect();
            let kept = set_positions::<usize>(&flags).unwrap();
            assert_eq!(kept.values, expected);
            let as_i64 = set_positions::<i64>(&flags).unwrap();
            let expected: Vec<i64> = expected.iter().map(|&position| position as i64).collect();
            assert_eq!(as_i64.values, expected);
        }
    }
}

#[test]
fn coordinates_follow_row_major_order() {
    let shapes: Vec<Vec<usize>> = vec![
        vec![],
        vec![0, 3],
        vec![3, 0],
        vec![2, 3, 4],
        vec![7, CHUNK / 4 + 3],
        vec![3, 5, PARALLEL_THRESHOLD / 8 + 1],
    ];
    for shape in shapes {
        let length: usize = shape.iter().product();
        for flags in masks(length) {
            let kept = set_coordinates(&flags, &shape).unwrap();
            let expected: Vec<i64> = (0..length)
                .filter(|&position| flags[position])
                .flat_map(|position| unravel(position, &shape))
                .collect();
            assert_eq!(kept.count, flags.iter().filter(|flag| **flag).count());
            assert_eq!(kept.values, expected, "shape {shape:?}");
        }
    }
}

#[test]
fn counting_handles_long_runs_of_set_flags() {
    assert_eq!(count_set(&[true; 1000]), 1000);
    assert_eq!(count_set(&[]), 0);
    let flags = random_flags(10_000, 30, 3);
    assert_eq!(
        count_set(&flags),
        flags.iter().filter(|flag| **flag).count()
    );
}
