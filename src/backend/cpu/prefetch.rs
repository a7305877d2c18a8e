//! Cache hints: fetching memory that is about to be written.
//!
//! A kernel that computes a chunk in passes over first-level-cache scratch and then writes
//! it out stalls on that write: every line of a fresh destination is a miss, and the misses
//! come in a burst instead of spread over the computation as a single fused loop spreads
//! them. Asking for the next chunk's destination while the current one is computed hides
//! them (the elementwise chain ran about a fifth faster).
//!
//! This is the only place in the crate with `unsafe` code: `core::arch` offers the prefetch
//! instruction only as a function that needs an `unsafe` block outside code compiled for
//! its target feature, and `std::hint`'s safe prefetch is not stable. The wrapper is safe for
//! any address because a prefetch is a hint: it never faults and never changes memory.

/// Bytes in a cache line of the processors TSL runs on.
const LINE: usize = 64;

/// Asks for the cache lines of `len` bytes from `address` to be brought into the
/// first-level cache for writing. Any address is allowed, mapped or not: nothing is read or
/// written, and where the hint cannot be given it does nothing.
pub(crate) fn for_writing(address: usize, len: usize) {
    for offset in (0..len).step_by(LINE) {
        line_for_writing(address.wrapping_add(offset));
    }
}

#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code)]
fn line_for_writing(address: usize) {
    use std::arch::x86_64::{_MM_HINT_ET0, _mm_prefetch};
    let pointer = std::ptr::without_provenance::<i8>(address);
    // SAFETY: `_mm_prefetch` is unsafe to call only because it is declared with
    // `#[target_feature(enable = "sse")]`, and SSE is part of every x86_64 processor. The
    // instruction it emits (`prefetchw`, or `prefetcht0` where that is missing) is a hint
    // that never faults and never changes memory, so every address is sound.
    unsafe { _mm_prefetch::<_MM_HINT_ET0>(pointer) }
}

#[cfg(not(target_arch = "x86_64"))]
fn line_for_writing(_address: usize) {}

#[cfg(test)]
mod tests {
    use super::for_writing;

    #[test]
    fn any_address_is_a_harmless_hint() {
        let mut values = vec![1.5f32; 4096];
        for_writing(values.as_ptr().addr(), values.len() * 4);
        // Unmapped and absurd addresses do not fault.
        for_writing(0, 4096);
        for_writing(usize::MAX - 100, 4096);
        values[7] = 2.0;
        assert_eq!(values.iter().filter(|value| **value == 1.5).count(), 4095);
    }
}
