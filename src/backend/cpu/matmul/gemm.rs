//! `f32` matrix products: a blocked SGEMM in safe Rust.
//!
//! The structure is the classic Goto/BLIS one. For each block of `NC` columns and each block
//! of `KC` steps of the inner dimension, B's block is packed into panels of `NR` columns (each
//! panel stores, step by step, `NR` consecutive values of a row), and every block of `MC` rows
//! of A is packed into panels of `MR` rows (step by step, `MR` values of a column). A register
//! tile of `MR x NR` results then runs the whole depth of the block from two contiguous
//! streams: per step it loads `NR` values of B, broadcasts `MR` values of A and does `MR * NR`
//! fused multiply-adds into accumulators that stay in vector registers. Packing reads the
//! operands through their strides, so transposed and strided views need no copy first, and it
//! pads edge panels with zeros, so the tile code has no edge cases inside its loop.
//!
//! Tiles run along rows of C: a panel of A (12 KiB) stays in L1 while the panels of B stream
//! from the packed block in L2, and the tile asks for B's steps `AHEAD` steps early and, before
//! it starts, for the lines of C the next tile reads (`backend/cpu/prefetch.rs`). Without the
//! requests, the tile ran inside a product at about three quarters of the speed it reaches on
//! data already in L1; with them a 1024 x 1024 product took 5 to 8% less time.
//!
//! Threads: up to `SPAN` depth blocks of B are packed at once, by all threads, and each thread
//! then computes one part of C (an even share of the rows) through all of them, so
//! a 1024 x 1024 product costs two fork-joins instead of two per depth block, and no thread
//! waits at a barrier for another's last row block. The packed span is kept for the next
//! product, so a product does not zero-fill and fault in a fresh buffer. A caller that
//! makes the output itself can pack the first span in the same parallel step
//! ([`route`], [`pack_ahead`], [`run`]): `matmul` zeroes a new output meanwhile.
//!
//! Sizes, for the processors this is built for (`target-cpu=native`):
//! - The tile is two vectors wide: `NR = 32` columns and `MR = 12` rows with AVX-512 (24 of
//!   the 32 `zmm` registers accumulate, two hold B, one the broadcast), `NR = 16` and `MR = 6`
//!   otherwise (12 of the 16 `ymm` registers of AVX2). LLVM vectorises the fixed-size arrays
//!   of [`kernel`] along the columns for these shapes; other shapes (8 rows, 14 rows) were seen
//!   vectorised along the rows instead and ran 40 times slower, so change them only with the
//!   generated code in view. LLVM's tuning for recent Intel server cores prefers 256-bit
//!   vectors; `.cargo/config.toml` lets the straight-line vectoriser use 512-bit ones.
//! - `KC = 256`: a panel of A (12 KiB) and the panel of B in use (32 KiB) fit the 48 KiB L1
//!   data cache together, while the stores of C (once per `KC` steps) stay rare. 192 steps
//!   were slower; 384 and 512 no faster.
//! - `MC = 48` rows: the packed A block (48 KiB) stays in L2 next to the packed B block. 96
//!   rows were slower.
//! - `NC = 1024` columns: the packed B block (1 MiB) fits a 2 MiB L2 with room to spare.
//! - On AMD's Zen 4 (32 KiB L1, 1 MiB L2) neither cache holds what these sizes were chosen
//!   for: B's panel streams into L1 on the requests of [`kernel`], and B's block fills L2.
//!   `NC = 512` measured the same there (1024 x 1024: medians 11.45 and 11.22 ms over five
//!   alternating runs each, within the runs' spread), so the sizes are kept.
//! - `SPAN = 4` depth blocks: the packed span of a column block is at most 4 MiB.
//! - Products with fewer tiles of rows than threads also split the rows into groups of
//!   panels of B, one part per thread either way.
//! - Products with at most 8 rows, or one column, are not packed at all ([`narrow`]): every
//!   value of the wide operand is used only a few times, so packing it would cost more than
//!   the product.
//!
//! Determinism: every result element is the chain `c = fma(a[i][p], b[p][j], c)` over
//! `p = 0, 1, .., k - 1` in that order, starting from `+0.0`. Depth blocks run in order, one
//! after another, and carry `c` through memory exactly; the tile only decides which elements
//! advance together, never the order within one element. So the bits depend on neither the
//! block sizes, the tile shape, the instruction set, the thread count nor the split between
//! threads (nor on computing `Cᵀ = Bᵀ Aᵀ` instead: `fma` multiplies exactly). `f32::mul_add`
//! is a fused multiply-add on every target (a library call where the processor has none).

use std::ops::Range;
use std::sync::{Mutex, PoisonError};

use ndarray::{ArrayView2, ArrayViewMut1, ArrayViewMut2, Axis, Slice};
use rayon::prelude::*;

use crate::backend::cpu::prefetch::{self, Intent};
use crate::backend::interrupt::Interrupt;

mod narrow;
mod transpose;

const WIDE: bool = cfg!(target_feature = "avx512f");
/// Rows of the register tile.
const MR: usize = if WIDE { 12 } else { 6 };
/// Columns of the register tile: two vector registers.
const NR: usize = if WIDE { 32 } else { 16 };
/// Depth of a block: steps of the inner dimension per pass over C.
const KC: usize = 256;
/// Rows of a block of A (a multiple of both tile heights).
const MC: usize = 48;
/// Columns of a block of B.
const NC: usize = 1024;
/// Steps of B the tile asks for ahead of the one it computes (16 to 32 did equally well).
const AHEAD: usize = 24;
/// Panels of B that one task packs (a kibibyte of each row of B).
const GROUP: usize = 8;
/// Depth blocks packed together and computed between two fork-joins.
const SPAN: usize = 4;

/// The accumulators of a tile of `R` rows.
type Tile<const R: usize> = [[f32; NR]; R];

/// `out = left @ right` for `left: m x k`, `right: k x n`, `out: m x n`, each with any strides.
/// `parallel` gives each of rayon's threads a part of C; the result is the same bits either
/// way (see the module documentation). An interrupt stops between depth blocks.
pub(super) fn product(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    out: ArrayViewMut2<'_, f32>,
    parallel: bool,
    interrupt: &Interrupt,
) {
    let route = route(left, right);
    run(route, Packed(None), left, right, out, parallel, interrupt);
}

/// Which kernel a product runs on, known from its operands before its output exists.
#[derive(Clone, Copy, Debug, PartialEq, Eq)]
pub(super) enum Route {
    /// No steps: C is all zeros.
    Empty,
    /// Unpacked ([`narrow`]), as `left @ right` or as `outᵀ = rightᵀ @ leftᵀ`.
    Narrow { transposed: bool },
    /// Packed ([`blocked`]), as `left @ right` or as `outᵀ = rightᵀ @ leftᵀ`.
    Packed { transposed: bool },
}

/// The route of `left @ right`.
pub(super) fn route(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> Route {
    let (rows, columns) = (left.nrows(), right.ncols());
    if rows == 0 || columns == 0 || left.ncols() == 0 {
        return Route::Empty;
    }
    if narrow::takes(left, right) {
        return Route::Narrow { transposed: false };
    }
    if narrow::takes(right.reversed_axes(), left.reversed_axes()) {
        return Route::Narrow { transposed: true };
    }
    // Tiles are wide: a narrow, tall product runs transposed.
    Route::Packed {
        transposed: columns < NR && rows > columns,
    }
}

/// B's first span, packed before the product runs (`None`: the product packs it).
pub(super) struct Packed(Option<Vec<f32>>);

/// Packs B's first span for a product on `route`, so that packing can run in the same
/// parallel step as other work (zeroing the output) instead of in one of its own.
pub(super) fn pack_ahead(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    route: Route,
    parallel: bool,
) -> Packed {
    let Route::Packed { transposed } = route else {
        return Packed(None);
    };
    let right = if transposed {
        left.reversed_axes()
    } else {
        right
    };
    let mut packed = kept_span();
    pack_right(first_span(right), &mut packed, parallel);
    Packed(Some(packed))
}

/// `out = left @ right` on `route` (from [`route`] for these operands), with B's first span
/// packed already when `packed` holds it.
pub(super) fn run(
    route: Route,
    packed: Packed,
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    mut out: ArrayViewMut2<'_, f32>,
    parallel: bool,
    interrupt: &Interrupt,
) {
    let (left_t, right_t) = (right.reversed_axes(), left.reversed_axes());
    let done = match route {
        Route::Empty => {
            out.fill(0.0);
            true
        }
        Route::Narrow { transposed: false } => {
            narrow::product(left, right, out.view_mut(), parallel, interrupt)
        }
        Route::Narrow { transposed: true } => narrow::product(
            left_t,
            right_t,
            out.view_mut().reversed_axes(),
            parallel,
            interrupt,
        ),
        Route::Packed { transposed: false } => {
            blocked(left, right, out.view_mut(), packed, parallel, interrupt);
            true
        }
        Route::Packed { transposed: true } => {
            let out = out.view_mut().reversed_axes();
            blocked(left_t, right_t, out, packed, parallel, interrupt);
            true
        }
    };
    // A route that does not fit its operands (never taken): the packed product fits all.
    if !done {
        blocked(left, right, out, Packed(None), parallel, interrupt);
    }
}

/// The first block of columns and first span of depth blocks of `right`: what [`blocked`]
/// packs first.
fn first_span(right: ArrayView2<'_, f32>) -> ArrayView2<'_, f32> {
    let (depth, columns) = right.dim();
    let columns = blocks(columns, NC).next().unwrap_or_default();
    let steps = blocks(depth, SPAN * KC).next().unwrap_or_default();
    right.slice_move(ndarray::s![steps, columns])
}

/// The packed product, for a non-empty `out` and inner size (see [`product`]); `packed` may
/// hold B's first span ([`pack_ahead`]).
fn blocked(
    left: ArrayView2<'_, f32>,
    right: ArrayView2<'_, f32>,
    mut out: ArrayViewMut2<'_, f32>,
    packed: Packed,
    parallel: bool,
    interrupt: &Interrupt,
) {
    let (depth, columns) = right.dim();
    let (mut packed_right, mut packed_first) = match packed.0 {
        Some(packed) => (packed, true),
        None => (kept_span(), false),
    };
    for column_block in blocks(columns, NC) {
        let right = right.slice_axis(Axis(1), Slice::from(column_block.clone()));
        let mut out = out.slice_axis_mut(Axis(1), Slice::from(column_block));
        for steps in blocks(depth, SPAN * KC) {
            if interrupt.requested() {
                return;
            }
            let range = Slice::from(steps.clone());
            // The first span of the first column block may have been packed ahead.
            if !std::mem::take(&mut packed_first) {
                pack_right(
                    right.slice_axis(Axis(0), range),
                    &mut packed_right,
                    parallel,
                );
            }
            let span = Span {
                left: left.slice_axis(Axis(1), range),
                packed_right: &packed_right,
                first: steps.start == 0,
                interrupt,
            };
            let parts = parts(out.view_mut(), parallel);
            if parallel {
                let parts = parts.into_par_iter();
                parts.for_each_init(Vec::new, |packed, part| span.run(part, packed));
            } else {
                let mut packed = Vec::new();
                for part in parts {
                    span.run(part, &mut packed);
                }
            }
        }
    }
    keep_span(packed_right);
}

/// The packed span of B, kept for the next product (at most `SPAN * KC * NC` values, 4 MiB):
/// a fresh buffer costs a zero fill and page faults, about a twentieth of a 1024 x 1024
/// product. Kept for the process rather than per thread, since the product and the packing
/// ahead of it may run on different threads of the pool. Products that run at the same time
/// find it taken and start an empty one; the largest buffer given back is kept.
static PACKED_RIGHT: Mutex<Vec<f32>> = Mutex::new(Vec::new());

/// The kept packed span (empty if another product holds it).
fn kept_span() -> Vec<f32> {
    let mut kept = PACKED_RIGHT.lock().unwrap_or_else(PoisonError::into_inner);
    std::mem::take(&mut *kept)
}

/// Keeps `packed` for the next product, unless a larger buffer is kept already.
fn keep_span(packed: Vec<f32>) {
    let mut kept = PACKED_RIGHT.lock().unwrap_or_else(PoisonError::into_inner);
    if packed.capacity() >= kept.capacity() {
        *kept = packed;
    }
}

/// A part of C that one task computes: its first row and first panel of B, and its view.
type Unit<'a> = (usize, usize, ArrayViewMut2<'a, f32>);

/// The parts of C for the tasks of a span: one per thread, with as even a share of the rows as
/// can be; when there are fewer tiles of rows than threads, the rows are also split into
/// groups of whole panels of B (A's rows are then packed once per group). A share need not be
/// whole tiles: a part's last tile of fewer rows runs on a kernel of its height
/// ([`Block::full_tiles`]). Split into whole tiles, the two parts of a 1024-row product had 516
/// and 508 rows, and the thread with 43 tiles finished 1.3% after the other; as 512 rows each
/// (42 tiles and one of 8 rows), the product took 0.1 to 0.4% less time (300 x 300: 2.5%,
/// 2048 x 2048: 0.8%). Four or six parts of whole tiles per thread, each taken by whichever
/// thread is free, measured the same as one part per thread on Zen 4 (1024 x 1024: medians
/// 10.86, 10.70 and 10.77 ms over eight alternating runs each).
fn parts(out: ArrayViewMut2<'_, f32>, parallel: bool) -> Vec<Unit<'_>> {
    let (rows, columns) = out.dim();
    let wanted = if parallel {
        rayon::current_num_threads()
    } else {
        1
    };
    let tiles = rows.div_ceil(MR);
    let panels = columns.div_ceil(NR);
    let row_parts = wanted.min(tiles);
    let groups = wanted.div_ceil(row_parts).min(panels);
    let mut units = Vec::new();
    let mut rest = out;
    for part in 0..row_parts {
        let (first, end) = (rows * part / row_parts, rows * (part + 1) / row_parts);
        let (mut part_rows, tail) = rest.split_at(Axis(0), end - first);
        rest = tail;
        for group in 0..groups {
            let (first_panel, end) = (panels * group / groups, panels * (group + 1) / groups);
            let width = (end * NR).min(columns) - first_panel * NR;
            let (unit, tail) = part_rows.split_at(Axis(1), width);
            part_rows = tail;
            units.push((first, first_panel, unit));
        }
    }
    units
}

/// `0..size` in consecutive ranges of `step` (the last may be shorter).
fn blocks(size: usize, step: usize) -> impl Iterator<Item = Range<usize>> {
    (0..size)
        .step_by(step)
        .map(move |start| start..(start + step).min(size))
}

/// Up to `SPAN` depth blocks: the unpacked rows of A they read and B packed block by block.
struct Span<'a> {
    left: ArrayView2<'a, f32>,
    packed_right: &'a [f32],
    /// The first span writes C; later ones continue from what C holds.
    first: bool,
    interrupt: &'a Interrupt,
}

impl Span<'_> {
    /// One part of C through every depth block of the span in order, block of `MC` rows by
    /// block, packing A's rows into `packed`. An interrupt stops between depth blocks.
    fn run(&self, (start, first_panel, mut out): Unit<'_>, packed: &mut Vec<f32>) {
        let depth = self.left.ncols();
        let columns = self.packed_right.len() / depth;
        let mut packed_right = self.packed_right;
        for (index, steps) in blocks(depth, KC).enumerate() {
            if self.interrupt.requested() {
                return;
            }
            let (right, rest) = packed_right.split_at(columns * steps.len());
            packed_right = rest;
            let block = Block {
                left: self.left.slice_axis(Axis(1), Slice::from(steps)),
                packed_right: right,
                first: self.first && index == 0,
            };
            let row_blocks = out.axis_chunks_iter_mut(Axis(0), MC);
            for (row_block, out) in row_blocks.enumerate() {
                block.run((start + row_block * MC, first_panel, out), packed);
            }
        }
    }
}

/// One depth block: the unpacked rows of A it reads and the packed block of B.
struct Block<'a> {
    left: ArrayView2<'a, f32>,
    packed_right: &'a [f32],
    /// The first depth block writes C; later ones continue from what C holds.
    first: bool,
}

impl Block<'_> {
    /// One unit of C, packing its rows of A into `packed`.
    fn run(&self, (start, first_panel, mut out): Unit<'_>, packed: &mut Vec<f32>) {
        let rows = start..start + out.nrows();
        pack_left(self.left.slice_axis(Axis(0), Slice::from(rows)), packed);
        let depth = self.left.ncols();
        let columns = out.ncols();
        let right = &self.packed_right[first_panel * NR * depth..];
        let right = &right[..columns.div_ceil(NR) * NR * depth];
        // Tiles of full width of a C with contiguous rows: cut from row slices, which costs
        // less than slicing views. The rest (the last panel's columns when it is narrower, or
        // every tile of a strided C) goes through views.
        let (full_rows, full_columns) = if out.strides()[1] == 1 {
            (out.nrows(), columns / NR * NR)
        } else {
            (0, 0)
        };
        if full_rows > 0 && full_columns > 0 {
            let rows = out.rows_mut().into_iter().take(full_rows);
            let mut rows: Vec<&mut [f32]> = rows.filter_map(ArrayViewMut1::into_slice).collect();
            self.full_tiles(&mut rows, &right[..full_columns * depth], packed);
        }
        for (panel, right) in right.chunks_exact(depth * NR).enumerate() {
            let mut out = out.slice_axis_mut(Axis(1), Slice::from(panel * NR..columns));
            for (tile, left) in packed.chunks_exact(depth * MR).enumerate() {
                if tile * MR < full_rows && panel * NR < full_columns {
                    continue;
                }
                let out = out.slice_axis_mut(Axis(0), Slice::from(tile * MR..));
                multiply_tile(left, right, out, self.first);
            }
        }
    }

    /// Every tile of `rows` (`MR` rows at a time, the last maybe fewer) and `NR` columns of
    /// each panel in `right`. A last tile of fewer rows runs on the kernel of its height (of 9
    /// rows for 7 to 9: see [`multiply_tile`]).
    fn full_tiles(&self, rows: &mut [&mut [f32]], right: &[f32], packed: &[f32]) {
        let depth = self.left.ncols();
        let lefts = packed.chunks_exact(depth * MR);
        for (rows, left) in rows.chunks_mut(MR).zip(lefts) {
            match rows.len() {
                1 => self.tile_row::<1>(rows, left, right),
                2 => self.tile_row::<2>(rows, left, right),
                3 => self.tile_row::<3>(rows, left, right),
                4 => self.tile_row::<4>(rows, left, right),
                5 => self.tile_row::<5>(rows, left, right),
                6 => self.tile_row::<6>(rows, left, right),
                7..=9 => self.tile_row::<9>(rows, left, right),
                10 => self.tile_row::<10>(rows, left, right),
                11 => self.tile_row::<11>(rows, left, right),
                _ => self.tile_row::<MR>(rows, left, right),
            }
        }
    }

    /// The tiles of `rows` (at most `R`) with each panel in `right`, along the rows: the panel
    /// of A stays in L1 while the panels of B stream from L2. Before a tile of a later depth
    /// block, the lines of C that the next tile along its rows reads and writes are asked for
    /// (3 to 5% of a 1024 x 1024 product; the burst stalls the tile a little on the line-fill
    /// buffers, and asking for them in shares during the tile was no faster). The first depth
    /// block only writes C, and its stores wait for their lines in the store buffer without
    /// stalling the tile: asking for them too made 1024 x 1024 and 2048 x 2048 products about
    /// 1% slower.
    fn tile_row<const R: usize>(&self, rows: &mut [&mut [f32]], left: &[f32], right: &[f32]) {
        let depth = self.left.ncols();
        for (panel, right) in right.chunks_exact(depth * NR).enumerate() {
            let columns = panel * NR..panel * NR + NR;
            let mut tile_rows = rows.iter_mut().map(|row| {
                let row = row.get_mut(columns.clone());
                row.and_then(|row| <&mut [f32; NR]>::try_from(row).ok())
            });
            let mut tile: [Option<&mut [f32; NR]>; R] =
                std::array::from_fn(|_| tile_rows.next().flatten());
            if !self.first {
                for row in tile.iter().flatten() {
                    let next = row.as_ptr().addr() + size_of::<[f32; NR]>();
                    prefetch::lines(next, size_of::<[f32; NR]>(), Intent::Write);
                }
            }
            full_tile(left, right, &mut tile, self.first);
        }
    }
}

/// Packs `right` (`depth x columns`) block of `KC` steps by block, each block into panels of
/// `NR` columns, zero-padded. Tasks pack `GROUP` panels of a block each.
fn pack_right(right: ArrayView2<'_, f32>, packed: &mut Vec<f32>, parallel: bool) {
    let (depth, columns) = right.dim();
    let panels = columns.div_ceil(NR);
    packed.resize(panels * NR * depth, 0.0);
    let mut targets = Vec::with_capacity(panels.div_ceil(GROUP) * depth.div_ceil(KC));
    let mut rest = packed.as_mut_slice();
    for steps in blocks(depth, KC) {
        let (block, tail) = std::mem::take(&mut rest).split_at_mut(panels * NR * steps.len());
        rest = tail;
        for (group, target) in block.chunks_mut(GROUP * NR * steps.len()).enumerate() {
            targets.push((steps.clone(), group * GROUP * NR, target));
        }
    }
    let group = |(steps, start, target): (Range<usize>, usize, &mut [f32])| {
        let end = (start + target.len() / steps.len()).min(columns);
        let right = right.slice_axis(Axis(0), Slice::from(steps));
        pack_right_group(right.slice_axis(Axis(1), Slice::from(start..end)), target);
    };
    if parallel {
        targets.into_par_iter().for_each(group);
    } else {
        targets.into_iter().for_each(group);
    }
}

/// Consecutive panels of `NR` columns of `right` into `target`. With contiguous rows, row by
/// row: each row of B is then read in one pass, which the processor fetches ahead far better
/// than one panel's width of many rows.
fn pack_right_group(right: ArrayView2<'_, f32>, target: &mut [f32]) {
    let (steps, columns) = right.dim();
    let rows: Option<Vec<&[f32]>> = right.rows().into_iter().map(|row| row.to_slice()).collect();
    let Some(rows) = rows else {
        for (panel, target) in target.chunks_exact_mut(NR * steps).enumerate() {
            let start = panel * NR;
            let range = Slice::from(start..(start + NR).min(columns));
            pack_right_panel(right.slice_axis(Axis(1), range), target);
        }
        return;
    };
    for (p, row) in rows.into_iter().enumerate() {
        for (values, panel) in row.chunks(NR).zip(target.chunks_exact_mut(NR * steps)) {
            let step = &mut panel[p * NR..(p + 1) * NR];
            if let (Ok(step), Ok(values)) = (
                <&mut [f32; NR]>::try_from(&mut *step),
                <&[f32; NR]>::try_from(values),
            ) {
                *step = *values;
                continue;
            }
            let (head, tail) = step.split_at_mut(values.len());
            head.copy_from_slice(values);
            tail.fill(0.0);
        }
    }
}

/// Step `p` of a panel holds row `p` of `right` (up to `NR` columns), then zeros. Only for
/// rows that are not contiguous: [`pack_right_group`] copies contiguous ones itself.
fn pack_right_panel(right: ArrayView2<'_, f32>, target: &mut [f32]) {
    let width = right.ncols();
    if width < NR {
        target.fill(0.0);
    }
    if right.strides()[0] == 1 && width > 1 {
        // Columns are contiguous (a transposed view): write each with stride `NR`.
        for (column, offset) in right.columns().into_iter().zip(0..) {
            scatter(target, offset, NR, column);
        }
        return;
    }
    for (row, step) in right.rows().into_iter().zip(target.chunks_exact_mut(NR)) {
        step.iter_mut().zip(row).for_each(|(x, &y)| *x = y);
    }
}

/// Packs `left` (`rows x depth`) into panels of `MR` rows, zero-padded.
fn pack_left(left: ArrayView2<'_, f32>, packed: &mut Vec<f32>) {
    let (rows, depth) = left.dim();
    packed.resize(rows.div_ceil(MR) * MR * depth, 0.0);
    let panels = left.axis_chunks_iter(Axis(0), MR);
    for (left, target) in panels.zip(packed.chunks_exact_mut(MR * depth)) {
        pack_left_panel(left, target);
    }
}

/// Step `p` of a panel holds column `p` of `left` (up to `MR` rows), then zeros.
fn pack_left_panel(left: ArrayView2<'_, f32>, target: &mut [f32]) {
    let height = left.nrows();
    if height < MR {
        target.fill(0.0);
    }
    if left.strides()[0] == 1 && height > 1 {
        // Columns are contiguous (a transposed view): copy each into one step.
        for (column, step) in left.columns().into_iter().zip(target.chunks_exact_mut(MR)) {
            match column.as_slice() {
                Some(column) => step[..height].copy_from_slice(column),
                None => step.iter_mut().zip(column).for_each(|(x, &y)| *x = y),
            }
        }
        return;
    }
    if let Some(rows) = full_rows(left) {
        // Read `MR` rows side by side so each step is written once, contiguously.
        let done = transpose::pack_steps(&rows, target);
        for (p, step) in target.chunks_exact_mut(MR).enumerate().skip(done) {
            step.iter_mut().zip(&rows).for_each(|(x, row)| *x = row[p]);
        }
        return;
    }
    for (row, offset) in left.rows().into_iter().zip(0..) {
        scatter(target, offset, MR, row);
    }
}

/// The `MR` rows of a full panel as slices, when each row is contiguous.
fn full_rows(left: ArrayView2<'_, f32>) -> Option<[&[f32]; MR]> {
    if left.nrows() != MR {
        return None;
    }
    let mut rows = (0..MR).map(|row| left.index_axis_move(Axis(0), row).to_slice());
    let rows: [Option<&[f32]>; MR] = std::array::from_fn(|_| rows.next().flatten());
    rows.iter()
        .all(Option::is_some)
        .then(|| rows.map(Option::unwrap_or_default))
}

/// Writes `values` to every `stride`-th element of `target`, starting at `offset`.
fn scatter<'a>(
    target: &mut [f32],
    offset: usize,
    stride: usize,
    values: impl IntoIterator<Item = &'a f32>,
) {
    let targets = target[offset..].iter_mut().step_by(stride);
    targets.zip(values).for_each(|(x, &y)| *x = y);
}

/// One tile of `out` (up to `MR x NR`) over a whole depth block, through a buffer with only
/// as many rows as the tile has, so a product with one row does no work for eleven. (Tiles of
/// full width of a C with contiguous rows never come here: [`Block::full_tiles`] takes them.)
///
/// Tiles of 7 and 8 rows (AVX-512 only) run the 9-row kernel (the packed panel's padding
/// rows are zeros, and the extra rows are never written back): LLVM vectorises the 7- and
/// 8-row kernels along the rows, and they ran 30 times slower than the others, so a
/// 500 x 500 product (41 tiles of rows and one of 8) took almost twice as long.
fn multiply_tile(left: &[f32], right: &[f32], mut out: ArrayViewMut2<'_, f32>, first: bool) {
    let rows = out.nrows().min(MR);
    let columns = out.ncols().min(NR);
    out.slice_axis_inplace(Axis(0), Slice::from(..rows));
    out.slice_axis_inplace(Axis(1), Slice::from(..columns));
    match rows {
        1 => edge_tile::<1>(left, right, out, first),
        2 => edge_tile::<2>(left, right, out, first),
        3 => edge_tile::<3>(left, right, out, first),
        4 => edge_tile::<4>(left, right, out, first),
        5 => edge_tile::<5>(left, right, out, first),
        6 => edge_tile::<6>(left, right, out, first),
        7..=9 => edge_tile::<9>(left, right, out, first),
        10 => edge_tile::<10>(left, right, out, first),
        11 => edge_tile::<11>(left, right, out, first),
        _ => edge_tile::<MR>(left, right, out, first),
    }
}

/// A tile of full width whose rows are slices of C (`None` past the last row of C: those
/// rows of the kernel compute from A's zero padding and are never written). Kept out of line
/// so its code is the same wherever it is used.
#[inline(never)]
fn full_tile<const R: usize>(
    left: &[f32],
    right: &[f32],
    out: &mut [Option<&mut [f32; NR]>; R],
    first: bool,
) {
    let mut tile = [[0.0; NR]; R];
    if !first {
        for (tile, row) in tile.iter_mut().zip(out.iter()) {
            if let Some(row) = row {
                *tile = **row;
            }
        }
    }
    let tile = kernel::<R>(left, right, tile);
    for (tile, row) in tile.iter().zip(out.iter_mut()) {
        if let Some(row) = row {
            **row = *tile;
        }
    }
}

/// A tile of `R <= MR` rows and up to `NR` columns of C, through a buffer.
fn edge_tile<const R: usize>(
    left: &[f32],
    right: &[f32],
    mut out: ArrayViewMut2<'_, f32>,
    first: bool,
) {
    let mut tile: Tile<R> = [[0.0; NR]; R];
    if !first {
        for (tile, row) in tile.iter_mut().zip(out.rows()) {
            tile.iter_mut().zip(row).for_each(|(x, &y)| *x = y);
        }
    }
    let tile = kernel::<R>(left, right, tile);
    for (tile, row) in tile.iter().zip(out.rows_mut()) {
        row.into_iter().zip(tile).for_each(|(y, &x)| *y = x);
    }
}

/// The register tile: `tile[i][j] = fma(left[i], right[j], tile[i][j])` for each step, where
/// a step of `left` holds `MR` rows (the first `R` used) and a step of `right` `NR` columns.
/// Fixed-size arrays with constant bounds let LLVM unroll both loops, keep `tile` in vector
/// registers and drop every bounds check. Always inlined, so the accumulators never make a
/// round trip through memory between the caller's loads of C and the loop. Each step asks for
/// the step of B `AHEAD` steps on: B's panels come from L2, and without the requests the
/// tile waited on them (a 1024 x 1024 product took 5 to 8% longer).
#[allow(clippy::inline_always)]
#[inline(always)]
fn kernel<const R: usize>(left: &[f32], right: &[f32], mut tile: Tile<R>) -> Tile<R> {
    let ahead = right.as_ptr().addr() + AHEAD * size_of::<[f32; NR]>();
    let steps = left.chunks_exact(MR).zip(right.chunks_exact(NR));
    for (step, (left, right)) in steps.enumerate() {
        let (Ok(left), Ok(right)) = (<&[f32; MR]>::try_from(left), <&[f32; NR]>::try_from(right))
        else {
            continue;
        };
        let next = ahead + step * size_of::<[f32; NR]>();
        prefetch::lines(next, size_of::<[f32; NR]>(), Intent::Read);
        for (row, &x) in tile.iter_mut().zip(left) {
            for (total, &y) in row.iter_mut().zip(right) {
                *total = x.mul_add(y, *total);
            }
        }
    }
    tile
}

#[cfg(test)]
#[path = "gemm_tests.rs"]
mod tests;
