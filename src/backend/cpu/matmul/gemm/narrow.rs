//! Products too narrow for packing to pay: a few rows of C, or one column.
//!
//! Packing copies a whole operand so that each of its values can be used many times; with a
//! row vector times a matrix every value of B is used once, and the copy cost four times the
//! product (a 1 x 4096 by 4096 x 4096 product took 6.4 ms, 1.4 ms this way). Both paths
//! keep the blocked kernel's chain, `c = fma(a[i][p], b[p][j], c)` over `p` in order from
//! `+0.0`, so their results are the same bits the blocked kernel gives.
//!
//! - **Few rows** (at most [`FEW_ROWS`], B's rows contiguous): C's rows stay in a buffer of
//!   [`BLOCK`] columns while B is read once, row by row; each pass over the buffer advances
//!   every element by four steps (one load and store of C per four multiply-adds). Threads
//!   take blocks of columns.
//! - **One column** (A's rows contiguous: a matrix times a vector): sixteen rows of A advance
//!   side by side, one chain each, so each row is read once. A vector of one step of sixteen
//!   rows needs a transpose: with AVX-512, blocks of 16 steps are transposed in registers by
//!   shuffles ([`transpose::multiply_add_steps`], through `pulp`'s safe wrappers); LLVM
//!   builds no shuffles from plain code, and assembled the vectors from inserts instead. A
//!   4096 x 4096 matrix times a vector took 2.0 ms that way and 1.3 ms with the shuffles
//!   (13 ms packed) on Sapphire Rapids; NumPy, which sums each row in another order, takes
//!   about 1.2 to 1.3 ms there. A matrix larger than the last-level cache streams from
//!   memory in sixteen rows per thread, and each block asks for every row's memory a few
//!   lines ahead ([`STREAMED_FROM`]): Zen 5's own prefetchers did not keep that far ahead.

use ndarray::{ArrayView2, ArrayViewMut2, Axis, Slice};
use rayon::prelude::*;

use super::transpose;
use crate::backend::interrupt::Interrupt;

/// Rows of C at most that a product runs without packing.
pub(super) const FEW_ROWS: usize = 8;
/// Columns of C per buffer, and at most per task, in a product with few rows.
const BLOCK: usize = 1024;
/// Steps of B each pass over the buffer takes.
const STEPS: usize = 4;
/// Rows of A that advance side by side in a product with one column.
const SIDE_BY_SIDE: usize = 16;
/// Bytes of A from which a product with one column asks for each row's memory ahead
/// ([`AHEAD`]): A then comes from main memory, in sixteen streams per thread, more than the
/// processor's own prefetchers follow well (a 4096 x 4096 matrix times a vector took 13 to
/// 17% less time with the requests, 8192 x 8192 20% less). A matrix that fits the last-level
/// cache (32 MiB on the processors measured) is read from there, and the requests only cost
/// (2048 x 2048 and 2560 x 2560: 2 to 3% more time; 3072 x 3072, 36 MiB: 5% less).
pub(super) const STREAMED_FROM: usize = 32 << 20;
/// Steps ahead of the block it computes at which a product with one column asks for each
/// row's memory: eight lines (256 steps did as well, 512 not as well).
const AHEAD: usize = 128;

/// Whether `left @ right` is narrow enough to run here.
pub(super) fn takes(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> bool {
    few_rows_fit(left, right) || one_column_fits(left, right)
}

fn few_rows_fit(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> bool {
    left.nrows() <= FEW_ROWS && contiguous_rows(right)
}

fn one_column_fits(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> bool {
    right.ncols() == 1 && contiguous_rows(left)
}

/// Runs `out = left @ right` here when it is narrow enough ([`takes`]), else returns false.
pub(super) fn product(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    out: ArrayViewMut2<'_, f32>,
    parallel: bool,
    interrupt: &Interrupt,
) -> bool {
    if few_rows_fit(left, right) {
        few_rows(left, right, out, parallel, interrupt);
        return true;
    }
    if one_column_fits(left, right) {
        one_column(left, right, out, parallel, interrupt);
        return true;
    }
    false
}

fn contiguous_rows(matrix: ArrayView2<'_, f32>) -> bool {
    matrix.ncols() <= 1 || matrix.strides()[1] == 1
}

/// Threads share the work by blocks of `size` along `axis` of `out`. An interrupt skips
/// the blocks not yet started.
fn by_blocks(
    mut out: ArrayViewMut2<'_, f32>,
    axis: Axis,
    size: usize,
    parallel: bool,
    interrupt: &Interrupt,
    run: impl Fn((usize, ArrayViewMut2<'_, f32>)) + Sync + Send,
) {
    let run = |block| {
        if !interrupt.requested() {
            run(block);
        }
    };
    let blocks = out.axis_chunks_iter_mut(axis, size).enumerate();
    if parallel {
        blocks.collect::<Vec<_>>().into_par_iter().for_each(run);
    } else {
        blocks.for_each(run);
    }
}

/// `out = left @ right` for at most `FEW_ROWS` rows and contiguous rows of `right`.
fn few_rows(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    out: ArrayViewMut2<'_, f32>,
    parallel: bool,
    interrupt: &Interrupt,
) {
    let columns = out.ncols();
    let width = if parallel {
        let share = columns.div_ceil(rayon::current_num_threads());
        share.next_multiple_of(16).clamp(16, BLOCK)
    } else {
        BLOCK
    };
    by_blocks(
        out,
        Axis(1),
        width,
        parallel,
        interrupt,
        |(index, mut out)| {
            let start = index * width;
            let right = right.slice_axis(Axis(1), Slice::from(start..start + out.ncols()));
            let mut totals = vec![[0.0f32; BLOCK]; out.nrows()];
            let steps: Vec<&[f32]> = right
                .rows()
                .into_iter()
                .filter_map(|row| row.to_slice())
                .collect();
            for (first, steps) in (0..).step_by(STEPS).zip(steps.chunks(STEPS)) {
                for (row, totals) in totals.iter_mut().enumerate() {
                    let a = |step: usize| left[[row, first + step]];
                    match <&[&[f32]; STEPS]>::try_from(steps) {
                        Ok([b0, b1, b2, b3]) => {
                            let (a0, a1, a2, a3) = (a(0), a(1), a(2), a(3));
                            let columns = b0.iter().zip(*b1).zip(*b2).zip(*b3);
                            for (total, (((&x0, &x1), &x2), &x3)) in totals.iter_mut().zip(columns)
                            {
                                let total_1 = a0.mul_add(x0, *total);
                                let total_2 = a1.mul_add(x1, total_1);
                                let total_3 = a2.mul_add(x2, total_2);
                                *total = a3.mul_add(x3, total_3);
                            }
                        }
                        Err(_) => {
                            for (step, b) in steps.iter().enumerate() {
                                let x = a(step);
                                for (total, &y) in totals.iter_mut().zip(*b) {
                                    *total = x.mul_add(y, *total);
                                }
                            }
                        }
                    }
                }
            }
            for (totals, mut row) in totals.iter().zip(out.rows_mut()) {
                row.iter_mut().zip(totals).for_each(|(y, &x)| *y = x);
            }
        },
    );
}

/// `out = left @ right` for one column and contiguous rows of `left`.
fn one_column(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    out: ArrayViewMut2<'_, f32>,
    parallel: bool,
    interrupt: &Interrupt,
) {
    let column = right.column(0).to_vec();
    let streamed = left.len().saturating_mul(size_of::<f32>()) >= STREAMED_FROM;
    let ahead = if streamed { AHEAD } else { 0 };
    by_blocks(
        out,
        Axis(0),
        SIDE_BY_SIDE,
        parallel,
        interrupt,
        |(index, mut out)| {
            let start = index * SIDE_BY_SIDE;
            let rows = start..start + out.nrows();
            let left = left.slice_axis(Axis(0), Slice::from(rows));
            let mut rows = left.rows().into_iter().filter_map(|row| row.to_slice());
            let rows: [&[f32]; SIDE_BY_SIDE] = std::array::from_fn(|_| rows.next().unwrap_or(&[]));
            let totals = side_by_side(&rows, &column, ahead);
            out.iter_mut().zip(totals).for_each(|(y, x)| *y = x);
        },
    );
}

/// The chains of up to `SIDE_BY_SIDE` rows with `column` (a missing row gives zeros), asking
/// for each row's memory `ahead` steps early (none for 0).
fn side_by_side(
    rows: &[&[f32]; SIDE_BY_SIDE],
    column: &[f32],
    ahead: usize,
) -> [f32; SIDE_BY_SIDE] {
    let mut totals = [0.0f32; SIDE_BY_SIDE];
    let steps = column.len();
    if rows.iter().all(|row| row.len() >= steps) {
        // Rows cut to the column's length: no step checks a row's end (with the checks, a
        // 4096 x 4096 matrix times a vector took 2.7 to 3.9 ms, depending on how the
        // compiler arranged them, against 2.1 ms).
        let rows: [&[f32]; SIDE_BY_SIDE] = std::array::from_fn(|index| &rows[index][..steps]);
        let done = transpose::multiply_add_steps(&rows, column, &mut totals, ahead);
        for (step, &b) in column.iter().enumerate().skip(done) {
            for (total, row) in totals.iter_mut().zip(&rows) {
                *total = row[step].mul_add(b, *total);
            }
        }
        return totals;
    }
    for (step, &b) in column.iter().enumerate() {
        for (total, row) in totals.iter_mut().zip(rows) {
            *total = row.get(step).copied().unwrap_or(0.0).mul_add(b, *total);
        }
    }
    totals
}
