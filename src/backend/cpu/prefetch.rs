//! Cache hints: fetching memory that is about to be read or written.
//!
//! A kernel that computes a chunk in passes over first-level-cache scratch and then writes
//! it out stalls on memory: every line of a fresh destination is a miss, and the misses
//! come in a burst instead of spread over the computation as a single fused loop spreads
//! them. Asking for the next chunks' inputs and destination while the current one is
//! computed hides them, provided the requests are spread too: a burst of 64 requests fills
//! the processor's line-fill buffers and stalls it as the misses did ([`Spread`]).
//!
//! This is one of the crate's two places with `unsafe` code (the other is
//! `backend/cpu/fresh.rs`): `core::arch` offers the prefetch instruction only as a function
//! that needs an `unsafe` block outside code compiled for its target feature, and
//! `std::hint`'s safe prefetch is not stable. The wrapper is safe for any address because a
//! prefetch is a hint: it never faults and never changes memory.

/// Bytes in a cache line of the processors TSL runs on.
const LINE: usize = 64;

/// What the memory is about to be used for.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(crate) enum Intent {
    /// Read within a few hundred instructions: brought to the first-level cache.
    Read,
    /// Read once the chunk being computed is done: brought to the second-level cache only,
    /// so that it does not take first-level room from that chunk's buffers. A fused chain
    /// over segments of 1,024 `f32` touches seven buffers of 4 KiB, near all of a 32 KiB
    /// first level; with its next inputs fetched there too, the chain over 10^7 elements
    /// took 5.3 to 5.5 ms on a Zen 4, against 4.3 to 5.1 ms with them fetched here.
    ReadNext,
    /// Written within a few hundred instructions: brought to the first-level cache, ready
    /// to be written.
    Write,
}

/// Memory to ask for while a chunk is computed, handed out a few lines per step, so that
/// the requests overlap the computation instead of queueing behind each other. Reused from
/// chunk to chunk: it allocates only while it grows.
#[derive(Debug, Default)]
pub(crate) struct Spread {
    /// Ranges still to ask for: first line address, lines, intent.
    ranges: Vec<(usize, usize, Intent)>,
    /// The range and line within it that the next step starts at.
    next: (usize, usize),
    /// Lines per step.
    per_step: usize,
}

impl Spread {
    /// Nothing to ask for, and no memory held.
    pub const fn new() -> Spread {
        Spread {
            ranges: Vec::new(),
            next: (0, 0),
            per_step: 0,
        }
    }

    /// Forgets what was not asked for yet.
    pub fn clear(&mut self) {
        self.ranges.clear();
        self.next = (0, 0);
        self.per_step = 0;
    }

    /// Adds `len` bytes from `address`.
    pub fn push(&mut self, address: usize, len: usize, intent: Intent) {
        let first = address - address % LINE;
        let lines = (address.wrapping_add(len).saturating_sub(first)).div_ceil(LINE);
        if len > 0 && lines > 0 {
            self.ranges.push((first, lines, intent));
        }
    }

    /// Spreads what was pushed over `steps` steps.
    pub fn plan(&mut self, steps: usize) {
        let lines: usize = self.ranges.iter().map(|(_, lines, _)| lines).sum();
        self.per_step = lines.div_ceil(steps.max(1));
    }

    /// Asks for the next step's share.
    pub fn step(&mut self) {
        self.ask(self.per_step);
    }

    /// Asks for everything not asked for yet.
    pub fn finish(&mut self) {
        self.ask(usize::MAX);
    }

    fn ask(&mut self, mut count: usize) {
        while count > 0 {
            let (range, offset) = self.next;
            let Some(&(first, length, intent)) = self.ranges.get(range) else {
                return;
            };
            let take = (length - offset).min(count);
            lines(first.wrapping_add(offset * LINE), take * LINE, intent);
            count -= take;
            self.next = if offset + take == length {
                (range + 1, 0)
            } else {
                (range, offset + take)
            };
        }
    }
}

/// Asks for the cache lines holding `address` and every `LINE`-th byte after it, up to `len`
/// bytes, at once. Always inlined: the matmul tile calls it inside its innermost loop.
#[allow(clippy::inline_always)]
#[inline(always)]
pub(crate) fn lines(address: usize, len: usize, intent: Intent) {
    for offset in (0..len).step_by(LINE) {
        line(address.wrapping_add(offset), intent);
    }
}

/// Asks for the cache line holding `address`.
#[cfg(target_arch = "x86_64")]
#[allow(unsafe_code, clippy::inline_always)]
#[inline(always)]
fn line(address: usize, intent: Intent) {
    use std::arch::x86_64::{_MM_HINT_ET0, _MM_HINT_T0, _MM_HINT_T1, _mm_prefetch};
    let pointer = std::ptr::without_provenance::<i8>(address);
    // SAFETY: `_mm_prefetch` is unsafe to call only because it is declared with
    // `#[target_feature(enable = "sse")]`, and SSE is part of every x86_64 processor. The
    // instruction it emits (`prefetcht0`, `prefetcht1`, `prefetchw`, or `prefetcht0` where
    // that is missing) is a hint that never faults and never changes memory, so every
    // address is sound.
    unsafe {
        match intent {
            Intent::Read => _mm_prefetch::<_MM_HINT_T0>(pointer),
            Intent::ReadNext => _mm_prefetch::<_MM_HINT_T1>(pointer),
            Intent::Write => _mm_prefetch::<_MM_HINT_ET0>(pointer),
        }
    }
}

#[cfg(not(target_arch = "x86_64"))]
fn line(_address: usize, _intent: Intent) {}

#[cfg(test)]
mod tests {
    use super::{Intent, LINE, Spread};

    #[test]
    fn any_address_is_a_harmless_hint() {
        let mut values = vec![1.5f32; 4096];
        let mut spread = Spread::default();
        spread.push(values.as_ptr().addr(), values.len() * 4, Intent::Write);
        // Unmapped and absurd addresses do not fault.
        spread.push(0, 4096, Intent::Read);
        spread.push(64, 4096, Intent::ReadNext);
        spread.push(usize::MAX - 4096, 4096, Intent::Write);
        spread.plan(3);
        spread.step();
        spread.finish();
        values[7] = 2.0;
        assert_eq!(values.iter().filter(|value| **value == 1.5).count(), 4095);
    }

    #[test]
    fn a_spread_hands_out_every_line_once_in_even_steps() {
        let mut spread = Spread::default();
        // 130 bytes from the middle of a line touch three lines; 64 aligned bytes, one.
        spread.push(LINE * 10 + 30, 130, Intent::Read);
        spread.push(LINE * 100, LINE, Intent::Write);
        spread.push(LINE * 200, 0, Intent::Write);
        assert_eq!(
            spread.ranges,
            [(LINE * 10, 3, Intent::Read), (LINE * 100, 1, Intent::Write)]
        );
        spread.plan(3);
        assert_eq!(spread.per_step, 2);
        spread.step();
        assert_eq!(spread.next, (0, 2));
        spread.step();
        assert_eq!(spread.next, (2, 0));
        spread.step();
        spread.finish();
        assert_eq!(spread.next, (2, 0));
        spread.clear();
        assert!(spread.ranges.is_empty());
        assert_eq!(spread.next, (0, 0));
    }
}
