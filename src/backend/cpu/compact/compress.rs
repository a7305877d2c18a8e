//! Compaction of whole blocks of 64 flags by vector instructions: with AVX-512, through
//! `pulp`'s safe wrappers (the processor is checked at run time). One instruction turns 64
//! flags into a bit mask, and one moves the kept values of 16 `f32` (or 8 `i64`) to the front
//! of a vector, which is stored whole at the next free place (its lanes past the kept ones are
//! overwritten by the next store, as the scalar loop overwrites its slot). LLVM makes neither
//! from the scalar loop of [`super::keep_each`], whose chain of dependent additions on the
//! output position limited it to about one element per cycle.
//!
//! Each function takes the whole blocks it can and returns how many flags it consumed and how
//! many values it kept; the caller takes the rest with the scalar loop, which gives the same
//! result.

/// Element types whose kept values vector instructions can compact.
pub(crate) trait Compress: Copy + Default {
    /// Compacts the whole blocks of 64 of `values` (as long as `flags`) whose flag is set into
    /// `out` (room for every kept value); returns the flags consumed and the values kept.
    fn compress(values: &[Self], flags: &[bool], out: &mut [Self]) -> (usize, usize) {
        let _ = (values, flags, out);
        (0, 0)
    }

    /// The positions `first + i` of the set flags `flags[i]` of the whole blocks of 64, into
    /// `out` (room for every kept position); returns the flags consumed and the positions kept.
    fn positions(first: usize, flags: &[bool], out: &mut [Self]) -> (usize, usize) {
        let _ = (first, flags, out);
        (0, 0)
    }
}

impl Compress for bool {}

impl Compress for usize {}

impl Compress for f32 {
    fn compress(values: &[f32], flags: &[bool], out: &mut [f32]) -> (usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            return simd.vectorize(
                #[inline(always)]
                || v4::compress_f32(simd, values, flags, out),
            );
        }
        let _ = (values, flags, out);
        (0, 0)
    }
}

impl Compress for i64 {
    fn compress(values: &[i64], flags: &[bool], out: &mut [i64]) -> (usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            return simd.vectorize(
                #[inline(always)]
                || v4::compress_i64(simd, values, flags, out),
            );
        }
        let _ = (values, flags, out);
        (0, 0)
    }

    fn positions(first: usize, flags: &[bool], out: &mut [i64]) -> (usize, usize) {
        #[cfg(target_arch = "x86_64")]
        if let Some(simd) = pulp::x86::V4::try_new() {
            return simd.vectorize(
                #[inline(always)]
                || v4::positions(simd, first, flags, out),
            );
        }
        let _ = (first, flags, out);
        (0, 0)
    }
}

#[cfg(target_arch = "x86_64")]
mod v4 {
    use pulp::x86::V4;

    /// Flags per block: one 512-bit vector of bytes.
    const BLOCK: usize = 64;

    /// The set flags of `flags` (at least 64) as the bits of a mask, flag `i` in bit `i`.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn mask(simd: V4, flags: &[bool]) -> u64 {
        let bytes: &[u8] = bytemuck::cast_slice(flags);
        let Some(Ok(bytes)) = bytes.get(..BLOCK).map(<[u8; BLOCK]>::try_from) else {
            return 0;
        };
        let vector = pulp::cast(bytes);
        simd.avx512bw._mm512_test_epi8_mask(vector, vector)
    }

    /// Stores `kept` values of the compacted `lanes` at `out[next..]`: all lanes where they
    /// fit (one store), else only the kept ones.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn store<T: Copy, const N: usize>(lanes: &[T; N], kept: usize, out: &mut [T], next: usize) {
        if let Some(whole) = out.get_mut(next..next + N) {
            whole.copy_from_slice(lanes);
        } else if let Some(part) = out.get_mut(next..next + kept) {
            part.copy_from_slice(&lanes[..kept]);
        }
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn compress_f32(
        simd: V4,
        values: &[f32],
        flags: &[bool],
        out: &mut [f32],
    ) -> (usize, usize) {
        let blocks = values.len().min(flags.len()) / BLOCK;
        let mut next = 0;
        for (values, flags) in values.chunks_exact(BLOCK).zip(flags.chunks_exact(BLOCK)) {
            let mask = mask(simd, flags);
            for (quarter, values) in values.chunks_exact(16).enumerate() {
                let Ok(values) = <[f32; 16]>::try_from(values) else {
                    continue;
                };
                let bits = (mask >> (16 * quarter)) as u16;
                let packed = simd
                    .avx512f
                    ._mm512_maskz_compress_ps(bits, pulp::cast(values));
                let kept = bits.count_ones() as usize;
                store::<f32, 16>(&pulp::cast(packed), kept, out, next);
                next += kept;
            }
        }
        (blocks * BLOCK, next)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn compress_i64(
        simd: V4,
        values: &[i64],
        flags: &[bool],
        out: &mut [i64],
    ) -> (usize, usize) {
        let blocks = values.len().min(flags.len()) / BLOCK;
        let mut next = 0;
        for (values, flags) in values.chunks_exact(BLOCK).zip(flags.chunks_exact(BLOCK)) {
            let mask = mask(simd, flags);
            for (eighth, values) in values.chunks_exact(8).enumerate() {
                let Ok(values) = <[i64; 8]>::try_from(values) else {
                    continue;
                };
                let bits = (mask >> (8 * eighth)) as u8;
                let packed = simd
                    .avx512f
                    ._mm512_maskz_compress_epi64(bits, pulp::cast(values));
                let kept = bits.count_ones() as usize;
                store::<i64, 8>(&pulp::cast(packed), kept, out, next);
                next += kept;
            }
        }
        (blocks * BLOCK, next)
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn positions(
        simd: V4,
        first: usize,
        flags: &[bool],
        out: &mut [i64],
    ) -> (usize, usize) {
        let blocks = flags.len() / BLOCK;
        let steps: [i64; 8] = std::array::from_fn(|lane| lane as i64);
        let steps = pulp::cast(steps);
        let mut next = 0;
        for (block, flags) in flags.chunks_exact(BLOCK).enumerate() {
            let mask = mask(simd, flags);
            for eighth in 0..BLOCK / 8 {
                let bits = (mask >> (8 * eighth)) as u8;
                let start = (first + block * BLOCK + eighth * 8) as i64;
                let lanes = simd
                    .avx512f
                    ._mm512_add_epi64(simd.avx512f._mm512_set1_epi64(start), steps);
                let packed = simd.avx512f._mm512_maskz_compress_epi64(bits, lanes);
                let kept = bits.count_ones() as usize;
                store::<i64, 8>(&pulp::cast(packed), kept, out, next);
                next += kept;
            }
        }
        (blocks * BLOCK, next)
    }
}
