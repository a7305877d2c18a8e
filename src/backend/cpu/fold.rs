//! Folding a lane of elements into one: the accumulators of every reduction, shared by the
//! reduce kernels and fused kernels so that both give bit-identical results.
//!
//! An accumulator takes its lane in pieces of any length, in order, and gives the same result
//! as folding the whole lane at once. A lane longer than [`BLOCK`] is folded block by block
//! (in parallel), and the block results are folded again in order, so results never depend on
//! the number of threads.

use rayon::prelude::*;

use crate::backend::interrupt::Interrupt;

use super::elementwise::PARALLEL_THRESHOLD;
use super::tensor::{Element, scan_extremum};
use crate::dtype::Scalar;

/// The length of the blocks a long lane is folded in.
pub(crate) const BLOCK: usize = PARALLEL_THRESHOLD;

/// An accumulator over elements of type `T`.
pub(crate) trait Fold<T: Copy>: Default {
    fn push(&mut self, values: &[T]);
    fn finish(self) -> T;

    /// Folds `values` at once.
    fn of(values: &[T]) -> T {
        let mut fold = Self::default();
        fold.push(values);
        fold.finish()
    }
}

/// Folds a lane: blocks of [`BLOCK`] elements first when it is longer, then their results.
pub(crate) fn fold_lane<T: Copy + Send + Sync, F: Fold<T>>(values: &[T]) -> T {
    if values.len() <= BLOCK {
        return F::of(values);
    }
    // Ctrl-C skips the blocks not yet folded; the device reports the interruption.
    let interrupt = Interrupt::current();
    let parts: Vec<T> = values
        .par_chunks(BLOCK)
        .map(|block| {
            if interrupt.requested() {
                F::of(&[])
            } else {
                F::of(block)
            }
        })
        .collect();
    F::of(&parts)
}

/// Rows shorter than this fold with code made for their length ([`fold_rows`], whose list
/// of lengths runs from 1 to one below it).
pub(crate) const SHORT_ROW: usize = 32;

/// A fold that can take a whole row of `L` elements at once, for `L` below [`SHORT_ROW`],
/// giving the bits of [`Fold::of`] on that row.
pub(crate) trait RowFold<T: Copy>: Fold<T> {
    /// The longest rows whose folds the compiler may vectorise across rows (one vector
    /// lane per row). Past it each row is folded on its own: across rows, a vector takes
    /// one element of each row by a gather once the rows are longer than eight (a row sum
    /// over rows of 9 to 15 ran four times slower than over rows of 8 or 20), and
    /// comparisons of whole rows in lanes lost to comparisons within a row from rows of 4.
    const ACROSS_ROWS: usize;

    fn row<const L: usize>(row: &[T; L]) -> T;
}

/// Each consecutive row of `length` elements of `values` folded by `F`, into the matching
/// element of `out` (the bits of [`fold_lane`] on each row; `out` has one element per row).
/// Rows shorter than [`SHORT_ROW`] run code made for their length, which the compiler
/// unrolls: a row then costs its additions or comparisons, where a call per row, with the
/// set-up for lanes of any length, cost several times as much (a row softmax over rows of
/// 4 spent half its time in those calls).
pub(crate) fn fold_rows<T: Copy + Send + Sync, F: RowFold<T>>(
    values: &[T],
    length: usize,
    out: &mut [T],
) {
    macro_rules! by_length {
        ($($l:literal)*) => {
            match length {
                $($l => rows_of::<T, F, $l>(values, out),)*
                0 => out.fill(F::of(&[])),
                _ => {
                    for (total, row) in out.iter_mut().zip(values.chunks_exact(length)) {
                        *total = fold_lane::<T, F>(row);
                    }
                }
            }
        };
    }
    const { assert!(SHORT_ROW == 32) };
    by_length!(
        1 2 3 4 5 6 7 8 9 10 11 12 13 14 15 16 17 18 19 20 21 22 23 24 25 26 27 28 29 30 31
    );
}

/// [`fold_rows`] over rows of `L` elements.
fn rows_of<T: Copy, F: RowFold<T>, const L: usize>(values: &[T], out: &mut [T]) {
    for (total, row) in out.iter_mut().zip(values.chunks_exact(L)) {
        if let Some(row) = row.first_chunk::<L>() {
            *total = if L <= F::ACROSS_ROWS {
                F::row::<L>(row)
            } else {
                // The row passes through an identity the optimiser cannot see into, so it
                // cannot combine rows into vector lanes (the loop stays one row at a time,
                // its additions or comparisons vectorised within the row).
                F::row::<L>(std::hint::black_box(row))
            };
        }
    }
}

/// A float sum with eight accumulators, which vectorises and loses less precision than one.
/// Every [`CASCADE`] rows of eight, the accumulators' totals join a pairwise sum (a binary
/// counter of partial totals, as NumPy's pairwise summation) and the accumulators start
/// again from zero: the rounding error grows with the logarithm of the length instead of the
/// length, and the result does not depend on how the lane is cut into pieces.
///
/// A lane is taken in groups of [`GROUP`] elements: the rows of eight of a group are dealt
/// round-robin to its [`SIDE_BY_SIDE`] cascades ([`add_group`]), so that the group is read
/// in order while its cascades are added side by side. What is left after the last whole
/// group (fewer than [`GROUP`] elements) fills cascades in turn, its rows in order, and the
/// last `len % 8` elements are added after the accumulators are combined.
pub(crate) struct SumF32 {
    /// Partial totals: `levels[i]` sums `CASCADE << i` rows while bit `i` of `cascades` is set.
    levels: [[f32; 8]; LEVELS],
    /// How many cascades have been added into `levels`, a multiple of [`SIDE_BY_SIDE`].
    cascades: u64,
    /// The elements pushed since the last whole group.
    pending: Box<[f32; GROUP]>,
    waiting: usize,
}

impl Default for SumF32 {
    fn default() -> SumF32 {
        SumF32 {
            levels: [[0.0; 8]; LEVELS],
            cascades: 0,
            pending: Box::new([0.0; GROUP]),
            waiting: 0,
        }
    }
}

/// How many rows of eight elements [`SumF32`]'s accumulators take before their totals join
/// the pairwise sum.
const CASCADE: usize = 16;

/// Levels of the pairwise sum: enough for `CASCADE * 8 << LEVELS` elements, far more than a
/// tensor may have.
const LEVELS: usize = 32;

impl SumF32 {
    /// Joins the total of a group ([`add_group`]) to the pairwise sum.
    fn join_group(&mut self, total: [f32; 8]) {
        join_at(&mut self.levels, self.cascades, SIDE_LEVEL, total);
        self.cascades += SIDE_BY_SIDE as u64;
    }
}

impl Fold<f32> for SumF32 {
    /// A lane of fewer than `CASCADE * 8 << SHORT_LEVELS` elements, folded in locals: the
    /// same additions in the same order as pushing it, without the bookkeeping of pieces and
    /// the 1 KiB of partial totals, which cost more than the additions on rows of up to a
    /// few hundred elements (a row sum over rows of 128 spent two fifths of its time there).
    fn of(values: &[f32]) -> f32 {
        if values.len() >= (CASCADE * 8) << SHORT_LEVELS {
            let mut fold = SumF32::default();
            fold.push(values);
            return fold.finish();
        }
        let mut levels = [[0.0f32; 8]; SHORT_LEVELS];
        let mut done = 0;
        let mut rest = values;
        if let Some((group, later)) = values.split_first_chunk::<GROUP>() {
            join_at(&mut levels, done, SIDE_LEVEL, add_group(group));
            done += SIDE_BY_SIDE as u64;
            rest = later;
        }
        add_leftover(&mut levels, done, rest)
    }

    fn push(&mut self, mut values: &[f32]) {
        if self.waiting > 0 {
            let take = (GROUP - self.waiting).min(values.len());
            self.pending[self.waiting..self.waiting + take].copy_from_slice(&values[..take]);
            self.waiting += take;
            values = &values[take..];
            if self.waiting < GROUP {
                return;
            }
            self.join_group(add_group(&self.pending));
            self.waiting = 0;
        }
        while let Some((group, later)) = values.split_first_chunk::<GROUP>() {
            self.join_group(add_group(group));
            values = later;
        }
        self.pending[..values.len()].copy_from_slice(values);
        self.waiting = values.len();
    }

    fn finish(mut self) -> f32 {
        add_leftover(
            &mut self.levels,
            self.cascades,
            &self.pending[..self.waiting],
        )
    }
}

/// The total of a pairwise sum with partial totals `levels` after `done` cascades, and then
/// `leftover` (fewer than [`GROUP`] elements): its cascades in turn, each its rows in order,
/// then the partial cascade, then the elements that do not fill a row of eight.
fn add_leftover(levels: &mut [[f32; 8]], mut done: u64, leftover: &[f32]) -> f32 {
    let (rows, rest) = leftover.split_at(leftover.len() - leftover.len() % 8);
    let cascades = rows.chunks_exact(CASCADE * 8);
    let last = cascades.remainder();
    for cascade in cascades {
        join_cascade(levels, done, add_rows([0.0; 8], cascade));
        done += 1;
    }
    combine(with_levels(add_rows([0.0; 8], last), levels, done), rest)
}

impl RowFold<f32> for SumF32 {
    const ACROSS_ROWS: usize = 8;

    /// A row shorter than a cascade: its rows of eight into the accumulators, then the
    /// rest, as [`SumF32::of`] adds them when no cascade completes.
    #[inline]
    fn row<const L: usize>(row: &[f32; L]) -> f32 {
        const { assert!(L < CASCADE * 8) };
        let (rows, rest) = row.split_at(L - L % 8);
        combine(add_rows([0.0; 8], rows), rest)
    }
}

/// Levels of partial totals [`SumF32::of`] keeps in locals: enough for lanes of fewer than
/// 2,048 elements.
const SHORT_LEVELS: usize = 4;

/// Joins the totals of a finished cascade to the pairwise sum whose partial totals are
/// `levels`, after `done` cascades: it adds the partial totals of the levels it carries
/// through, as a binary counter carries, and settles at the first level left empty (or the
/// last level).
fn join_cascade(levels: &mut [[f32; 8]], done: u64, carry: [f32; 8]) {
    join_at(levels, done, 0, carry);
}

/// Joins `carry`, the pairwise total of `1 << first` cascades, to the pairwise sum whose
/// partial totals are `levels`, after `done` cascades (a multiple of `1 << first`): as
/// [`join_cascade`] joins the last of those cascades, starting at level `first`.
fn join_at(levels: &mut [[f32; 8]], done: u64, first: usize, mut carry: [f32; 8]) {
    let mut level = first;
    while level + 1 < levels.len() && done & (1 << level) != 0 {
        for (total, &partial) in carry.iter_mut().zip(&levels[level]) {
            *total += partial;
        }
        level += 1;
    }
    if let Some(slot) = levels.get_mut(level) {
        *slot = carry;
    }
}

/// `lanes` plus the partial totals of the pairwise sum after `done` cascades, the smallest
/// first.
fn with_levels(mut lanes: [f32; 8], levels: &[[f32; 8]], done: u64) -> [f32; 8] {
    for (level, partial) in levels.iter().enumerate() {
        if done & (1 << level) != 0 {
            for (total, &x) in lanes.iter_mut().zip(partial) {
                *total += x;
            }
        }
    }
    lanes
}

/// How many cascades a group of [`SumF32`] deals its rows to, `1 << SIDE_LEVEL`.
const SIDE_BY_SIDE: usize = 1 << SIDE_LEVEL;
const SIDE_LEVEL: usize = 3;
/// The elements of a group: [`SIDE_BY_SIDE`] cascades.
const GROUP: usize = SIDE_BY_SIDE * CASCADE * 8;

/// The pairwise total of the [`SIDE_BY_SIDE`] cascades of a group, row `r` of eight
/// elements going to cascade `r % SIDE_BY_SIDE`: the bits [`join_cascade`] gives joining the
/// cascades one by one, from a count that is a multiple of their number. Dealt this way the
/// group is read in order, one stream, while the cascades' additions, independent, do not
/// wait on one another. (Cascades of consecutive rows, added side by side, read eight
/// streams 512 bytes apart, and a sum of 10,000,000 ran at half the speed; added one at a
/// time, each addition waited for the one before it.)
fn add_group(group: &[f32; GROUP]) -> [f32; 8] {
    // One flat row of the cascades' accumulators, cascade `c`'s lanes at `8 * c..8 * c + 8`,
    // so that a dealt row of 64 elements is added lane by lane in full-width vectors: as
    // eight rows of eight, LLVM added it with eight 256-bit loads where four 512-bit loads
    // do, and on Zen 5 a stream of the narrower loads read memory at two thirds of the speed.
    let mut flat = [0.0f32; SIDE_BY_SIDE * 8];
    for dealt in group.chunks_exact(SIDE_BY_SIDE * 8) {
        for (lane, &x) in flat.iter_mut().zip(dealt) {
            *lane += x;
        }
    }
    let mut totals: [[f32; 8]; SIDE_BY_SIDE] =
        std::array::from_fn(|cascade| std::array::from_fn(|lane| flat[8 * cascade + lane]));
    // Pairs of neighbours, the later on the left, as a carry joins a partial total.
    let mut width = SIDE_BY_SIDE;
    while width > 1 {
        width /= 2;
        for pair in 0..width {
            let (earlier, later) = (totals[2 * pair], totals[2 * pair + 1]);
            totals[pair] = std::array::from_fn(|lane| later[lane] + earlier[lane]);
        }
    }
    totals[0]
}

/// `lanes` plus each row of eight of `rows` in turn.
fn add_rows(mut lanes: [f32; 8], rows: &[f32]) -> [f32; 8] {
    for row in rows.chunks_exact(8) {
        for (lane, &x) in lanes.iter_mut().zip(row) {
            *lane += x;
        }
    }
    lanes
}

/// The eight accumulators of [`SumF32`] added pairwise, then the elements that did not fill
/// a row of eight, in order.
fn combine(lanes: [f32; 8], rest: &[f32]) -> f32 {
    let paired = [
        lanes[0] + lanes[4],
        lanes[1] + lanes[5],
        lanes[2] + lanes[6],
        lanes[3] + lanes[7],
    ];
    rest.iter().fold(
        (paired[0] + paired[2]) + (paired[1] + paired[3]),
        |total, &x| total + x,
    )
}

/// A float product, in order.
pub(crate) struct ProdF32(f32);

impl Default for ProdF32 {
    fn default() -> ProdF32 {
        ProdF32(1.0)
    }
}

impl Fold<f32> for ProdF32 {
    fn push(&mut self, values: &[f32]) {
        self.0 = values.iter().fold(self.0, |product, &x| product * x);
    }
    fn finish(self) -> f32 {
        self.0
    }
}

impl RowFold<f32> for ProdF32 {
    /// As the sum's: its rows load as the sum's do (the product was not measured apart).
    const ACROSS_ROWS: usize = 8;

    #[inline]
    fn row<const L: usize>(row: &[f32; L]) -> f32 {
        row.iter().fold(1.0, |product, &x| product * x)
    }
}

/// A wrapping integer sum.
#[derive(Default)]
pub(crate) struct SumI64(i64);

impl Fold<i64> for SumI64 {
    fn push(&mut self, values: &[i64]) {
        self.0 = values
            .iter()
            .fold(self.0, |total, &x| total.wrapping_add(x));
    }
    fn finish(self) -> i64 {
        self.0
    }
}

impl RowFold<i64> for SumI64 {
    /// Wrapping additions combine rows into vector lanes as the float sum's do.
    const ACROSS_ROWS: usize = 8;

    #[inline]
    fn row<const L: usize>(row: &[i64; L]) -> i64 {
        row.iter().fold(0, |total, &x| total.wrapping_add(x))
    }
}

/// A wrapping integer product.
pub(crate) struct ProdI64(i64);

impl Default for ProdI64 {
    fn default() -> ProdI64 {
        ProdI64(1)
    }
}

impl Fold<i64> for ProdI64 {
    fn push(&mut self, values: &[i64]) {
        self.0 = values
            .iter()
            .fold(self.0, |product, &x| product.wrapping_mul(x));
    }
    fn finish(self) -> i64 {
        self.0
    }
}

impl RowFold<i64> for ProdI64 {
    /// As the integer sum's.
    const ACROSS_ROWS: usize = 8;

    #[inline]
    fn row<const L: usize>(row: &[i64; L]) -> i64 {
        row.iter().fold(1, |product, &x| product.wrapping_mul(x))
    }
}

/// The largest (`LARGEST`) or smallest element, where the first `NaN` wins. An empty lane
/// gives zero; callers refuse empty extents first.
pub(crate) struct Best<T, const LARGEST: bool>(Option<T>);

impl<T, const LARGEST: bool> Default for Best<T, LARGEST> {
    fn default() -> Self {
        Best(None)
    }
}

impl<T: Element, const LARGEST: bool> Fold<T> for Best<T, LARGEST> {
    fn push(&mut self, values: &[T]) {
        let Some(candidate) = T::extremum(values, LARGEST) else {
            return;
        };
        self.0 = match self.0 {
            Some(best) if best.is_nan() => Some(best),
            Some(best) => {
                let better = if LARGEST {
                    candidate > best
                } else {
                    candidate < best
                };
                Some(if candidate.is_nan() || better {
                    candidate
                } else {
                    best
                })
            }
            None => Some(candidate),
        };
    }
    fn finish(self) -> T {
        self.0.unwrap_or_else(|| T::from_scalar(Scalar::Int(0)))
    }
}

impl<T: Element, const LARGEST: bool> RowFold<T> for Best<T, LARGEST> {
    const ACROSS_ROWS: usize = 2;

    /// The scan [`Element::extremum`] answers as: over a row of a length known to the
    /// compiler it unrolls into straight comparisons, which beat the call to `extremum`
    /// and its lanes on rows of 16 (2.4 against 6.3 ms over 10^7 elements).
    #[inline]
    fn row<const L: usize>(row: &[T; L]) -> T {
        scan_extremum(row, LARGEST).unwrap_or_else(|| T::from_scalar(Scalar::Int(0)))
    }
}

/// Whether every element is true.
pub(crate) struct All(bool);

impl Default for All {
    fn default() -> All {
        All(true)
    }
}

impl Fold<bool> for All {
    fn push(&mut self, values: &[bool]) {
        self.0 = self.0 && values.iter().all(|&x| x);
    }
    fn finish(self) -> bool {
        self.0
    }
}

impl RowFold<bool> for All {
    const ACROSS_ROWS: usize = 8;

    /// Every flag of the row and-ed without stopping at the first false one, so the row
    /// is straight code (the same answer as [`Fold::of`], which may stop early).
    #[inline]
    fn row<const L: usize>(row: &[bool; L]) -> bool {
        row.iter().fold(true, |all, &x| all & x)
    }
}

/// Whether some element is true.
#[derive(Default)]
pub(crate) struct Any(bool);

impl Fold<bool> for Any {
    fn push(&mut self, values: &[bool]) {
        self.0 = self.0 || values.iter().any(|&x| x);
    }
    fn finish(self) -> bool {
        self.0
    }
}

impl RowFold<bool> for Any {
    const ACROSS_ROWS: usize = 8;

    /// As [`All`]'s row, or-ed.
    #[inline]
    fn row<const L: usize>(row: &[bool; L]) -> bool {
        row.iter().fold(false, |any, &x| any | x)
    }
}

#[cfg(test)]
mod tests {
    use super::*;

    /// Pushing a lane in pieces gives the result of pushing it whole.
    fn pieces_agree<T: Copy + PartialEq + std::fmt::Debug, F: Fold<T>>(values: &[T]) {
        let whole = F::of(values);
        for piece in [1, 3, 7, 8, 9, 127, 129, 1000, 4096] {
            let mut fold = F::default();
            values.chunks(piece).for_each(|chunk| fold.push(chunk));
            assert_eq!(fold.finish(), whole, "pieces of {piece}");
        }
    }

    #[test]
    fn folding_in_pieces_is_folding_at_once() {
        // Long enough for 39 cascades of the sum: six levels of its pairwise totals.
        let floats: Vec<f32> = (0..5001).map(|i| (i as f32 * 0.37).sin() * 1e3).collect();
        pieces_agree::<f32, SumF32>(&floats);
        pieces_agree::<f32, ProdF32>(&floats[..40]);
        pieces_agree::<f32, Best<f32, true>>(&floats);
        pieces_agree::<f32, Best<f32, false>>(&floats);
        let ints: Vec<i64> = (0..1001).map(|i| i * 7919 - 3_000_000).collect();
        pieces_agree::<i64, SumI64>(&ints);
        pieces_agree::<i64, ProdI64>(&ints);
        let flags: Vec<bool> = (0..100).map(|i| i % 7 != 0).collect();
        pieces_agree::<bool, All>(&flags);
        pieces_agree::<bool, Any>(&flags);
    }

    /// Short lanes, folded in locals, give the bits that pushing them gives, at lengths
    /// through and past every number of cascades they handle (negative zeros, huge values
    /// and a NaN included).
    #[test]
    fn short_float_sums_are_the_pushed_sums() {
        let longest = ((CASCADE * 8) << SHORT_LEVELS) + 40;
        let values: Vec<f32> = (0..longest)
            .map(|i| match i % 11 {
                0 => -0.0,
                5 => 1e30,
                _ => (i as f32 * 0.61).cos() * 1e-3,
            })
            .collect();
        let lengths = (0..300).chain((300..longest).step_by(29)).chain([
            (CASCADE * 8) << SHORT_LEVELS,
            ((CASCADE * 8) << SHORT_LEVELS) - 1,
            ((CASCADE * 8) << SHORT_LEVELS) - 8,
            (CASCADE * 8) * 15,
            (CASCADE * 8) * 7 + 5,
        ]);
        for len in lengths {
            let last = &values[longest - len..];
            for lane in [&values[..len], &vec![-0.0; len], last] {
                let mut pushed = SumF32::default();
                pushed.push(lane);
                assert_eq!(
                    SumF32::of(lane).to_bits(),
                    pushed.finish().to_bits(),
                    "{len}"
                );
            }
        }
        let mut nan = values[..20].to_vec();
        nan[3] = f32::NAN;
        assert!(SumF32::of(&nan).is_nan());
    }

    /// A float sum that deals each group's rows to its cascades and joins each cascade as
    /// it completes, one at a time, then folds what is left as a sum does.
    fn one_cascade_at_a_time(values: &[f32]) -> f32 {
        let groups = values.len() / GROUP;
        let mut levels = [[0.0f32; 8]; LEVELS];
        let mut done = 0;
        for group in values.chunks_exact(GROUP) {
            for cascade in 0..SIDE_BY_SIDE {
                let rows: Vec<f32> = (0..CASCADE)
                    .flat_map(|row| {
                        let start = (row * SIDE_BY_SIDE + cascade) * 8;
                        group[start..start + 8].iter().copied()
                    })
                    .collect();
                join_cascade(&mut levels, done, add_rows([0.0; 8], &rows));
                done += 1;
            }
        }
        add_leftover(&mut levels, done, &values[groups * GROUP..])
    }

    #[test]
    fn groups_give_the_bits_of_their_cascades_one_at_a_time() {
        // Magnitudes from 1e-3 to 1e3, so that another order of additions rounds otherwise.
        let values: Vec<f32> = (0..GROUP * 5 + 300)
            .map(|i| (i as f32 * 0.61).cos() * 10f32.powi(i as i32 % 7 - 3))
            .collect();
        let lengths = (0..40)
            .map(|cascades| cascades * CASCADE * 8)
            .flat_map(|len| [len, len + 5]);
        for len in lengths.chain([GROUP * 5 + 300]) {
            let lane = &values[..len];
            let expected = one_cascade_at_a_time(lane).to_bits();
            assert_eq!(SumF32::of(lane).to_bits(), expected, "{len}");
            for piece in [1, 8, 100, CASCADE * 8, GROUP - 8, GROUP, GROUP + 8] {
                let mut fold = SumF32::default();
                lane.chunks(piece).for_each(|chunk| fold.push(chunk));
                assert_eq!(
                    fold.finish().to_bits(),
                    expected,
                    "{len} in pieces of {piece}"
                );
            }
        }
    }

    /// A float sum's rounding error grows with the logarithm of the length: four million
    /// equal values, whose running sums round at every step, sum to within a few units in
    /// the last place (eight accumulators over the whole lane were 4e-3 off for `0.1`).
    #[test]
    fn a_long_float_sum_is_accurate() {
        for value in [0.1_f32, 2.4395e-4, 1.0 / 3.0] {
            let values = vec![value; 1 << 22];
            let exact = f64::from(value) * values.len() as f64;
            for total in [SumF32::of(&values), fold_lane::<f32, SumF32>(&values)] {
                let error = (f64::from(total) - exact).abs() / exact;
                assert!(error < 5e-7, "{value}: {total} against {exact} ({error:e})");
            }
        }
    }

    /// Each row of `values` folded by [`fold_rows`] against [`fold_lane`] on the row, bit
    /// for bit, at every row length through the short ones and past them.
    fn rows_agree<T: Element + Send + Sync, F: RowFold<T>>(values: &[T], bits: impl Fn(T) -> u64) {
        for length in 0..SHORT_ROW + 5 {
            let rows = values.len() / length.max(1);
            let values = &values[..rows * length];
            let mut out = vec![T::default(); rows];
            fold_rows::<T, F>(values, length, &mut out);
            for (row, &total) in out.iter().enumerate() {
                let lane = &values[row * length..(row + 1) * length];
                assert_eq!(
                    bits(total),
                    bits(fold_lane::<T, F>(lane)),
                    "row {row} of {length}"
                );
            }
        }
    }

    #[test]
    fn folding_short_rows_is_folding_each_row() {
        // Zeros of both signs (a row of `-0.0` sums to `0.0`), values whose order of addition
        // shows in the sum, infinities of both signs and a few NaNs.
        let floats: Vec<f32> = (0..2000)
            .map(|i| match i % 97 {
                0..=3 => -0.0,
                10 => 0.0,
                20 => f32::INFINITY,
                30 => f32::NEG_INFINITY,
                40 if i > 1000 => f32::NAN,
                50 => 1e30,
                _ => (i as f32 * 0.37).sin() * 1e3,
            })
            .collect();
        // Every NaN alike: which operand's payload an addition keeps is not observable.
        let bits = |x: f32| u64::from(if x.is_nan() { f32::NAN } else { x }.to_bits());
        rows_agree::<f32, SumF32>(&floats, bits);
        rows_agree::<f32, ProdF32>(&floats, bits);
        rows_agree::<f32, Best<f32, true>>(&floats, bits);
        rows_agree::<f32, Best<f32, false>>(&floats, bits);
        rows_agree::<f32, SumF32>(&vec![-0.0; 300], bits);
        rows_agree::<f32, Best<f32, true>>(&vec![-0.0; 300], bits);
        let ints: Vec<i64> = (0..2000).map(|i| (i * 7919) % 2001 - 1000).collect();
        rows_agree::<i64, Best<i64, true>>(&ints, |x| x as u64);
        rows_agree::<i64, Best<i64, false>>(&ints, |x| x as u64);
        // Large enough that sums and products wrap.
        let wide: Vec<i64> = ints
            .iter()
            .map(|&x| x.wrapping_mul(0x0123_4567_89ab))
            .collect();
        for values in [&ints, &wide] {
            rows_agree::<i64, SumI64>(values, |x| x as u64);
            rows_agree::<i64, ProdI64>(values, |x| x as u64);
        }
        let flags: Vec<bool> = (0..2000).map(|i| i % 13 == 0).collect();
        let mostly: Vec<bool> = flags.iter().map(|&x| !x).collect();
        for flags in [&flags, &mostly] {
            rows_agree::<bool, Best<bool, true>>(flags, u64::from);
            rows_agree::<bool, Best<bool, false>>(flags, u64::from);
            rows_agree::<bool, All>(flags, u64::from);
            rows_agree::<bool, Any>(flags, u64::from);
        }
    }

    #[test]
    fn the_fast_f32_extremum_is_the_scan() {
        let mut cases: Vec<Vec<f32>> = vec![
            vec![],
            vec![-0.0, 0.0],
            vec![0.0, -0.0, -1.0],
            vec![-3.0; 17],
            vec![f32::NEG_INFINITY; 9],
        ];
        let wave: Vec<f32> = (0..1003)
            .map(|i| (i as f32 * 0.731).sin() * 100.0)
            .collect();
        cases.push(wave.clone());
        let mut with_nan = wave.clone();
        with_nan[500] = f32::NAN;
        cases.push(with_nan);
        let mut nan_in_tail = wave.clone();
        nan_in_tail[1001] = f32::NAN;
        cases.push(nan_in_tail);
        let mut zeros = vec![-5.0; 40];
        zeros[13] = -0.0;
        zeros[21] = 0.0;
        cases.push(zeros.clone());
        // Zeros of both signs in the elements after the last whole chunk of lanes.
        zeros[13] = -5.0;
        zeros[21] = -5.0;
        zeros[35] = 0.0;
        zeros[37] = -0.0;
        cases.push(zeros);
        // The extreme in every lane and in the elements after the last whole chunk, as a
        // finite value and as an infinity.
        for position in 0..70 {
            for extreme in [5.0, f32::INFINITY] {
                let mut values: Vec<f32> = (0..70).map(|i| (i % 7) as f32 - 3.0).collect();
                values[position] = extreme;
                cases.push(values.clone());
                values[position] = -extreme;
                cases.push(values);
            }
        }
        // Every length the lanes take, short of them and past them, with the extreme (or a
        // NaN, or a zero extreme) at every position.
        for len in 1..80 {
            for position in 0..len {
                for extreme in [7.5, f32::NAN, 0.0, -0.0] {
                    let mut values: Vec<f32> = (0..len).map(|i| (i % 5) as f32 - 9.0).collect();
                    values[position] = extreme;
                    cases.push(values.iter().map(|x| -x).collect());
                    cases.push(values);
                }
            }
        }
        for values in &cases {
            for largest in [true, false] {
                let fast = f32::extremum(values, largest);
                let scan = sequential_scan(values, largest);
                assert_eq!(fast.map(f32::to_bits), scan.map(f32::to_bits), "{values:?}");
            }
        }
    }

    fn sequential_scan(values: &[f32], largest: bool) -> Option<f32> {
        let mut best: Option<f32> = None;
        for &value in values {
            best = match best {
                None => Some(value),
                Some(current) if current.is_nan() => Some(current),
                Some(current) => {
                    let better = if largest {
                        value > current
                    } else {
                        value < current
                    };
                    Some(if value.is_nan() || better {
                        value
                    } else {
                        current
                    })
                }
            };
        }
        best
    }

    #[test]
    fn the_first_nan_wins_an_extremum() {
        let values = [1.0, f32::NAN, 5.0];
        assert!(Best::<f32, true>::of(&values).is_nan());
        assert!(Best::<f32, false>::of(&values).is_nan());
        assert_eq!(Best::<f32, true>::of(&[1.0, 5.0, 2.0]), 5.0);
    }

    #[test]
    fn long_lanes_fold_by_blocks() {
        let values: Vec<f32> = (0..3 * BLOCK + 5).map(|i| (i % 13) as f32 * 0.1).collect();
        let blocks: Vec<f32> = values.chunks(BLOCK).map(SumF32::of).collect();
        assert_eq!(fold_lane::<f32, SumF32>(&values), SumF32::of(&blocks));
    }
}
