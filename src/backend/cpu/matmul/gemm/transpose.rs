//! Steps of several rows side by side, from blocks of 16 x 16 values transposed in vector
//! registers: with AVX-512, through `pulp`'s safe wrappers (the processor is checked at run
//! time). LLVM builds no such shuffles from plain code: it assembles a step of several rows
//! from inserts, or writes one with scatter instructions. Each function takes the whole
//! blocks of 16 steps it can and returns how many steps it took, none without AVX-512; the
//! caller takes the rest with a plain loop, which gives the same bits.

/// Advances `totals` through the whole blocks of 16 steps of `rows` (each at least as long as
/// `column`): `totals[i] = fma(rows[i][p], column[p], totals[i])` for each step `p` in order.
/// Each block of sixteen rows and steps is transposed so that one vector holds one step of
/// every row, and every row's chain advances step by step, in order. With `ahead` above 0,
/// each block first asks for every row's memory `ahead` steps further on.
pub(super) fn multiply_add_steps(
    rows: &[&[f32]; 16],
    column: &[f32],
    totals: &mut [f32; 16],
    ahead: usize,
) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        return simd.vectorize(
            #[inline(always)]
            || v4::multiply_add_steps(simd, rows, column, totals, ahead),
        );
    }
    let _ = (rows, column, totals, ahead);
    0
}

/// Packs the whole blocks of 16 steps of `rows` (at most 16 rows) into `target`: step `p`
/// holds `rows[i][p]` for each row `i`, `R` values one after another. Where packing A for
/// a product compiled to scatter instructions, which AMD's Zen 5 runs slowly, packing took 5%
/// of a 1024 x 1024 product; with the transposes the product took 2.4% less time there (1%
/// on Intel's Sapphire Rapids).
pub(super) fn pack_steps<const R: usize>(rows: &[&[f32]; R], target: &mut [f32]) -> usize {
    #[cfg(target_arch = "x86_64")]
    if let Some(simd) = pulp::x86::V4::try_new() {
        return simd.vectorize(
            #[inline(always)]
            || v4::pack_steps(simd, rows, target),
        );
    }
    let _ = (rows, target);
    0
}

#[cfg(target_arch = "x86_64")]
mod v4 {
    use pulp::x86::V4;
    use pulp::{Simd, f32x16};

    use crate::backend::cpu::prefetch::{self, Intent};

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn multiply_add_steps(
        simd: V4,
        rows: &[&[f32]; 16],
        column: &[f32],
        totals: &mut [f32; 16],
        ahead: usize,
    ) -> usize {
        let whole = column.len() / 16 * 16;
        let mut sums: f32x16 = pulp::cast(*totals);
        for start in (0..whole).step_by(16) {
            if ahead > 0 {
                // One line of each row: a block reads 64 bytes of each.
                for row in rows {
                    let address = row.as_ptr().addr().wrapping_add((start + ahead) * 4);
                    prefetch::lines(address, 1, Intent::Read);
                }
            }
            let mut block = load_rows(simd, rows, start);
            transpose(simd, &mut block);
            for (&step, &b) in block.iter().zip(&column[start..start + 16]) {
                sums = simd.mul_add_f32s(step, simd.splat_f32s(b), sums);
            }
        }
        *totals = pulp::cast(sums);
        whole
    }

    #[allow(clippy::inline_always)]
    #[inline(always)]
    pub(super) fn pack_steps<const R: usize>(
        simd: V4,
        rows: &[&[f32]; R],
        target: &mut [f32],
    ) -> usize {
        if R > 16 {
            return 0;
        }
        let depth = rows.iter().map(|row| row.len()).min().unwrap_or(0);
        let blocks = (depth / 16).min(target.len() / (16 * R));
        for (block, steps) in target.chunks_exact_mut(16 * R).take(blocks).enumerate() {
            let mut vectors = load_rows(simd, rows, block * 16);
            transpose(simd, &mut vectors);
            for (step, vector) in steps.chunks_exact_mut(R).zip(&vectors) {
                let values: [f32; 16] = pulp::cast(*vector);
                step.copy_from_slice(&values[..R]);
            }
        }
        blocks * 16
    }

    /// A block of 16 rows (zeros past `rows.len()`), each from 16 values of a row of `rows`
    /// from `start` on.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn load_rows(simd: V4, rows: &[&[f32]], start: usize) -> [f32x16; 16] {
        let mut block = [simd.splat_f32s(0.0); 16];
        for (vector, row) in block.iter_mut().zip(rows) {
            if let Some(Ok(values)) = row.get(start..start + 16).map(<&[f32; 16]>::try_from) {
                *vector = pulp::cast(*values);
            }
        }
        block
    }

    /// Transposes the 16 x 16 matrix whose rows are `block`: afterwards `block[j]` holds
    /// lane `j` of every row before. Four rounds of swaps of off-diagonal blocks (8 x 8,
    /// 4 x 4, 2 x 2 and 1 x 1), 64 two-source shuffles in all.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn transpose(simd: V4, block: &mut [f32x16; 16]) {
        swap_blocks::<8>(simd, block);
        swap_blocks::<4>(simd, block);
        swap_blocks::<2>(simd, block);
        swap_blocks::<1>(simd, block);
    }

    /// Swaps the two off-diagonal `D x D` blocks inside every `2D x 2D` diagonal block of
    /// the 16 x 16 matrix whose rows are `block`: rows `i` and `i + D` (for each `i` with bit
    /// `D` clear) exchange their lanes with bit `D` clear in the second and set in the first.
    #[allow(clippy::inline_always)]
    #[inline(always)]
    fn swap_blocks<const D: usize>(simd: V4, block: &mut [f32x16; 16]) {
        // Indices `0..16` pick lanes of the first row, `16..32` lanes of the second.
        let first: [u32; 16] = std::array::from_fn(|lane| {
            let pick = if lane & D == 0 { lane } else { lane - D + 16 };
            pick as u32
        });
        let second: [u32; 16] = std::array::from_fn(|lane| {
            let pick = if lane & D == 0 { lane + D } else { lane + 16 };
            pick as u32
        });
        let (first, second) = (pulp::cast(first), pulp::cast(second));
        // A plain loop with a test, which LLVM unrolls into sixteen shuffles; over a
        // filtered iterator it kept a loop, and a matrix times a vector took 1.5 times as
        // long.
        for row in 0..16 {
            if row & D == 0 {
                let (a, b) = (pulp::cast(block[row]), pulp::cast(block[row + D]));
                block[row] = pulp::cast(simd.avx512f._mm512_permutex2var_ps(a, first, b));
                block[row + D] = pulp::cast(simd.avx512f._mm512_permutex2var_ps(a, second, b));
            }
        }
    }
}
