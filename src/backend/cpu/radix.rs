//! A parallel radix sort on bytes, for the long lines of `sort` and the keys of `unique`.
//!
//! One pass that vectorises (an OR of every key's difference from the first) finds the bytes
//! in which the keys differ; bytes every key shares are neither counted nor placed. The most
//! significant differing byte is counted by parts in parallel and places the keys into
//! buckets: each part, by its own thread, into its own places in each bucket, so the placing
//! is stable. Then each bucket is sorted on the differing bytes below by stable counting
//! passes, least significant first, buckets in parallel; a bucket of evenly spread keys is a
//! few hundred kilobytes and stays in the cache. A sort by comparisons of 10^7 keys took three
//! to four times as long, and so did a counting pass per byte over all the keys.

use rayon::prelude::*;

use super::compact::split_parts;
use super::elementwise::PARALLEL_THRESHOLD;
use super::error::{Result, scratch_vec, zeroed_vec};

/// Buckets of one digit: a byte.
const BUCKETS: usize = 1 << 8;

/// A key sorted by its bytes.
pub(super) trait Radix: Copy + Default + Send + Sync {
    /// How many bytes of [`Radix::key`] order it, from the least significant.
    const BYTES: u32;

    /// The bits that order the key.
    fn key(self) -> u64;
}

impl Radix for u32 {
    const BYTES: u32 = 4;

    fn key(self) -> u64 {
        u64::from(self)
    }
}

impl Radix for u64 {
    const BYTES: u32 = 8;

    fn key(self) -> u64 {
        self
    }
}

/// The byte of `key` at `shift`.
fn byte<K: Radix>(key: K, shift: u32) -> usize {
    ((key.key() >> shift) & 0xff) as usize
}

/// The shifts of the bytes in which some of `keys` differ, most significant first: one pass
/// that vectorises, so that no byte every key shares is counted or placed.
fn varying_bytes<K: Radix>(keys: &[K]) -> Vec<u32> {
    let Some(first) = keys.first().map(|key| key.key()) else {
        return Vec::new();
    };
    let differ = |keys: &[K]| keys.iter().fold(0, |bits, key| bits | (key.key() ^ first));
    let bits = if keys.len() >= 2 * PARALLEL_THRESHOLD {
        (keys.par_chunks(PARALLEL_THRESHOLD))
            .map(differ)
            .reduce(|| 0, |a, b| a | b)
    } else {
        differ(keys)
    };
    (0..K::BYTES)
        .rev()
        .map(|index| index * 8)
        .filter(|shift| (bits >> shift) & 0xff != 0)
        .collect()
}

/// How many keys have each value of the byte at `shift`.
fn histogram<K: Radix>(keys: &[K], shift: u32) -> [usize; BUCKETS] {
    let mut counts = [0; BUCKETS];
    for &key in keys {
        counts[byte(key, shift)] += 1;
    }
    counts
}

/// The keys of `values`, ascending: made in parallel and radix sorted when there are many,
/// sorted by comparisons when few.
pub(super) fn sorted_keys<T, K>(values: &[T], key: impl Fn(&T) -> K + Send + Sync) -> Result<Vec<K>>
where
    T: Sync,
    K: Radix + Ord,
{
    let mut keys = scratch_vec(values.len())?;
    if values.len() < PARALLEL_THRESHOLD {
        keys.extend(values.iter().map(key));
        keys.sort_unstable();
        return Ok(keys);
    }
    keys.par_extend(values.par_iter().map(key));
    radix_sort(keys)
}

/// `keys` in ascending order of [`Radix::key`]; equal keys keep their order.
pub(super) fn radix_sort<K: Radix>(mut keys: Vec<K>) -> Result<Vec<K>> {
    // The most significant byte in which keys differ places them in buckets.
    let bytes = varying_bytes(&keys);
    let Some(&shift) = bytes.first() else {
        return Ok(keys);
    };
    let part = keys.len().div_ceil(4 * rayon::current_num_threads());
    let parts: Vec<&[K]> = keys.chunks(part.max(PARALLEL_THRESHOLD)).collect();
    let counts: Vec<[usize; BUCKETS]> = (parts.par_iter())
        .map(|part| histogram(part, shift))
        .collect();
    let mut sorted = zeroed_vec::<K>(keys.len())?;
    // Each part's places in each bucket: the buckets in order, and in each the parts' places
    // in order.
    let lengths: Vec<usize> = (0..BUCKETS)
        .flat_map(|bucket| counts.iter().map(move |counts| counts[bucket]))
        .collect();
    let mut places: Vec<Vec<&mut [K]>> = parts.iter().map(|_| Vec::new()).collect();
    for (index, place) in split_parts(&mut sorted, &lengths, 1)
        .into_iter()
        .enumerate()
    {
        places[index % parts.len()].push(place);
    }
    (parts.par_iter().zip(places)).for_each(|(part, mut places)| {
        let mut next = [0usize; BUCKETS];
        for &key in *part {
            let bucket = byte(key, shift);
            places[bucket][next[bucket]] = key;
            next[bucket] += 1;
        }
    });
    // Each bucket sorted on the bytes in which its keys differ (all below `shift`), the keys'
    // own memory as its scratch.
    let sizes: Vec<usize> = (0..BUCKETS)
        .map(|bucket| counts.iter().map(|counts| counts[bucket]).sum())
        .collect();
    let scratch = split_parts(&mut keys, &sizes, 1);
    (split_parts(&mut sorted, &sizes, 1)
        .into_par_iter()
        .zip(scratch))
    .for_each(|(values, scratch)| sort_by_counting(values, scratch));
    Ok(sorted)
}

/// Sorts `keys` by one stable counting pass per byte in which they differ, least significant
/// first; `scratch` has their length.
fn sort_by_counting<K: Radix>(keys: &mut [K], scratch: &mut [K]) {
    let mut in_keys = true;
    for shift in varying_bytes(keys).into_iter().rev() {
        let (from, to): (&[K], &mut [K]) = if in_keys {
            (keys, scratch)
        } else {
            (scratch, keys)
        };
        let mut next = histogram(from, shift);
        let mut start = 0;
        for next in &mut next {
            (*next, start) = (start, start + *next);
        }
        for &key in from {
            let place = &mut next[byte(key, shift)];
            to[*place] = key;
            *place += 1;
        }
        in_keys = !in_keys;
    }
    if !in_keys {
        keys.copy_from_slice(scratch);
    }
}

#[cfg(test)]
mod tests;
