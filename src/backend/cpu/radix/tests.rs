//! Tests of the radix sort.

use super::*;

/// The radix sort against the standard library's, with keys that differ in every byte,
/// share their top byte (one bucket), or share one or two of the lower bytes (whose passes
/// are skipped, leaving a bucket sorted after an even or an odd number of passes).
#[test]
fn radix_sort_sorts_keys() {
    let n = PARALLEL_THRESHOLD * 2 + 5;
    let spread = |i: usize| (i as u32).wrapping_mul(2_654_435_761);
    let cases: Vec<Vec<u32>> = vec![
        (0..n).map(spread).collect(),
        (0..n).map(|i| spread(i) & 0xff).collect(),
        (0..n).map(|i| spread(i) | 0x00ff_ff00).collect(),
        (0..n).map(|i| spread(i) & 0xffff_00ff).collect(),
        (0..n).map(|i| spread(i) & 0x00ff_ffff).collect(),
        (0..n).map(|i| [0, u32::MAX, 1 << 31][i % 3]).collect(),
        vec![5; n],
        vec![7; 3],
        Vec::new(),
    ];
    for keys in cases {
        let mut expected = keys.clone();
        expected.sort_unstable();
        assert_eq!(radix_sort(keys).unwrap(), expected);
    }
}

/// A key of two bytes beside a tag the sort does not look at.
#[derive(Clone, Copy, Debug, Default, PartialEq, Eq)]
struct Tagged(u32);

impl Radix for Tagged {
    const BYTES: u32 = 2;

    fn key(self) -> u64 {
        u64::from(self.0 >> 16)
    }
}

/// Keys equal in the sorted bytes keep their order, within a bucket and across the parts
/// that place them.
#[test]
fn radix_sort_is_stable() {
    let n = PARALLEL_THRESHOLD * 5 + 3;
    let spread = |i: usize| (i as u32).wrapping_mul(2_654_435_761);
    for key_bits in [0xffff_0000, 0x00ff_0000, 0x0300_0000, 0x0101_0000] {
        let keys: Vec<Tagged> = (0..n)
            .map(|i| Tagged((spread(i) & key_bits) | (i as u32 & 0xffff)))
            .collect();
        let mut expected = keys.clone();
        expected.sort_by_key(|key| key.0 >> 16);
        assert_eq!(radix_sort(keys).unwrap(), expected, "{key_bits:#x}");
    }
}
