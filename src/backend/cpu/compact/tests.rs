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

/// The vector path (whole blocks of 64 flags) and the scalar loop after it keep the same
/// values as the scalar loop alone, into an output with room for exactly the kept values
/// (so the last stores of a block cannot be whole vectors), from any first position.
#[test]
fn vector_compaction_matches_the_scalar_loop() {
    for length in [0, 1, 63, 64, 65, 127, 128, 200, 1000, 1024] {
        for flags in masks(length) {
            let count = flags.iter().filter(|flag| **flag).count();
            let floats: Vec<f32> = (0..length).map(|value| value as f32 - 0.5).collect();
            let mut out = vec![f32::NAN; count];
            assert_eq!(keep_slice(&floats, &flags, &mut out), count);
            assert_eq!(out, reference(&floats, 1, &flags), "f32, length {length}");
            let ints: Vec<i64> = (0..length as i64).map(|value| 7 - value).collect();
            let mut out = vec![i64::MIN; count];
            assert_eq!(keep_slice(&ints, &flags, &mut out), count);
            assert_eq!(out, reference(&ints, 1, &flags), "i64, length {length}");
            for first in [0, 5, 1 << 40] {
                let mut out = vec![-1i64; count];
                assert_eq!(keep_positions(first, &flags, &mut out), count);
                let expected: Vec<i64> = (0..length)
                    .filter(|&position| flags[position])
                    .map(|position| (first + position) as i64)
                    .collect();
                assert_eq!(out, expected, "positions from {first}, length {length}");
            }
        }
    }
    // Where the processor has the instructions, the blocks are taken by them.
    #[cfg(target_arch = "x86_64")]
    if std::arch::is_x86_feature_detected!("avx512f")
        && std::arch::is_x86_feature_detected!("avx512bw")
        && std::arch::is_x86_feature_detected!("avx512cd")
        && std::arch::is_x86_feature_detected!("avx512dq")
        && std::arch::is_x86_feature_detected!("avx512vl")
    {
        let mut out = [0.0; 64];
        assert_eq!(f32::compress(&[1.0; 64], &[true; 64], &mut out), (64, 64));
        assert_eq!(i64::positions(3, &[true; 64], &mut [0; 64]), (64, 64));
    }
    // Values shorter than the flags: only the flags with a value count.
    let flags = vec![true; 130];
    let values: Vec<f32> = (0..70).map(|value| value as f32).collect();
    let mut out = vec![0.0; 130];
    assert_eq!(keep_slice(&values, &flags, &mut out), 70);
    assert_eq!(&out[..70], &values[..]);
}
