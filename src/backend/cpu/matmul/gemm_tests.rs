//! Tests of the blocked kernel against a triple loop: awkward shapes, every block edge,
//! strided and transposed operands, and the same bits for any thread count.

use ndarray::{Array2, ArrayView2, Axis, Slice};
use proptest::prelude::*;

use super::narrow::{FEW_ROWS, STREAMED_FROM};
use super::{KC, MC, MR, NC, NR, Route, SPAN, pack_ahead, parts, product, route, run};
use crate::backend::interrupt::Interrupt;

/// The chain the kernel promises: `fma(a[i][p], b[p][j], ..)` for `p` in order from `+0.0`.
fn reference(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> Array2<f32> {
    Array2::from_shape_fn((left.nrows(), right.ncols()), |(i, j)| {
        (0..left.ncols()).fold(0.0f32, |total, p| {
            left[[i, p]].mul_add(right[[p, j]], total)
        })
    })
}

/// Small integers and halves in a pseudo-random order, so products and sums stay exact in
/// `f64` while the order of the `f32` chain still matters for large inner sizes.
fn matrix(rows: usize, columns: usize, seed: usize) -> Array2<f32> {
    Array2::from_shape_fn((rows, columns), |(i, j)| {
        let x = (i * 7919 + j * 104_729 + seed * 31) % 97;
        (x as f32 - 48.0) * if x.is_multiple_of(3) { 0.5 } else { 1.0 } + 0.1 * (x % 5) as f32
    })
}

fn multiplied(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) -> Array2<f32> {
    let mut out = Array2::from_elem((left.nrows(), right.ncols()), f32::NAN);
    product(left, right, out.view_mut(), false, &Interrupt::default());
    out
}

/// The kernel's bits equal the reference chain's, and the reference is the product: within
/// the textbook bound `k * eps * sum |a| |b|` of the exact (`f64`) result.
fn assert_product(left: ArrayView2<'_, f32>, right: ArrayView2<'_, f32>) {
    let actual = multiplied(left, right);
    let expected = reference(left, right);
    let shape = (left.dim(), right.dim());
    assert!(
        actual
            .iter()
            .zip(&expected)
            .all(|(x, y)| x.to_bits() == y.to_bits()),
        "{shape:?}: kernel and reference chain differ"
    );
    let exact = left.mapv(f64::from).dot(&right.mapv(f64::from));
    let magnitude = left
        .mapv(|x| f64::from(x.abs()))
        .dot(&right.mapv(|x| f64::from(x.abs())));
    let epsilon = left.ncols() as f64 * f64::from(f32::EPSILON);
    for ((x, y), size) in actual.iter().zip(&exact).zip(&magnitude) {
        assert!(
            (f64::from(*x) - y).abs() <= epsilon * size,
            "{shape:?}: {x} vs {y}"
        );
    }
}

#[test]
fn awkward_shapes_match_the_reference() {
    let shapes = [
        (1, 1, 1),
        (1, 7, 1),
        (1, 9, 40),
        (40, 9, 1),
        (17, 31, 13),
        (MR - 1, 3, NR - 1),
        (MR + 1, 5, NR + 1),
        (2 * MR, KC, 2 * NR),
        (MC + 1, KC + 1, NR + 3),
        (MC - 1, 2 * KC + 3, 2 * NR - 1),
        (3, 5, NC + 7),
        (MR + 2, 3, 2 * NC + 1),
        // Long sums: the chain's order matters (and spans more than one packed span of B).
        (2, 40 * KC + 1, 3),
        (MR + 3, SPAN * KC + 5, NR + 1),
        (2 * MC + 5, 3, 70),
    ];
    for (rows, inner, columns) in shapes {
        let (left, right) = (matrix(rows, inner, 1), matrix(inner, columns, 2));
        assert_product(left.view(), right.view());
    }
}

#[test]
fn edge_tiles_of_every_height_match_the_reference() {
    // Each height of the last tile of rows, written in the first depth block and continued in
    // the next, next to full tiles and with a narrow last panel.
    for height in 1..MR {
        let (rows, inner, columns) = (2 * MR + height, KC + 3, NR + 5);
        let (left, right) = (matrix(rows, inner, height), matrix(inner, columns, 2));
        assert_product(left.view(), right.view());
        let (left, right) = (matrix(height, inner, height), matrix(inner, 2 * NR, 3));
        assert_product(left.view(), right.view());
    }
}

#[test]
fn an_empty_inner_size_gives_zeros() {
    let (left, right) = (matrix(5, 0, 1), matrix(0, 40, 2));
    assert_eq!(
        multiplied(left.view(), right.view()),
        Array2::<f32>::zeros((5, 40))
    );
    let (left, right) = (matrix(0, 4, 1), matrix(4, 3, 2));
    assert_eq!(multiplied(left.view(), right.view()).dim(), (0, 3));
}

#[test]
fn transposed_and_strided_operands_need_no_copy() {
    let (rows, inner, columns) = (MR * 3 + 2, KC + 9, NR * 2 + 5);
    let left_t = matrix(inner, rows, 3);
    let right_t = matrix(columns, inner, 4);
    assert_product(left_t.t(), right_t.t());
    let wide = matrix(rows * 2, inner * 3, 5);
    let every_other = Slice::new(0, None, 2);
    let left = wide
        .slice_axis(Axis(0), every_other)
        .slice_axis_move(Axis(1), Slice::new(1, None, 3));
    let right = matrix(inner * 2, columns, 6);
    let right = right.slice_axis(Axis(0), every_other);
    assert_product(left, right);
    assert_product(left, right_t.t());
    assert_product(left_t.t(), right);
}

#[test]
fn narrow_products_and_transposed_outputs_keep_the_chain() {
    // A column vector result runs transposed; a transposed output takes the strided tiles.
    let (left, right) = (matrix(MC * 2 + 3, KC + 1, 7), matrix(KC + 1, 1, 8));
    assert_product(left.view(), right.view());
    let (left, right) = (matrix(70, 40, 9), matrix(40, NR + 9, 10));
    let mut out = Array2::from_elem((NR + 9, 70), f32::NAN);
    product(
        left.view(),
        right.view(),
        out.view_mut().reversed_axes(),
        false,
        &Interrupt::default(),
    );
    assert_eq!(out.t(), reference(left.view(), right.view()));
}

#[test]
fn products_with_few_rows_or_one_column_keep_the_chain_unpacked() {
    // Few rows read B row by row (inner sizes that are not whole groups of steps, more
    // columns than one buffer); one column runs rows of A side by side (a partial last
    // group, steps in whole blocks of 16 and not); each also through the transpose, with the
    // other operand's layout.
    let shapes = [
        (1, 1, 1),
        (1, 10, 2100),
        (FEW_ROWS, 7, 33),
        (5, 4, 3),
        (37, 11, 1),
        (16, 5, 1),
        (16, 16, 1),
        (35, 53, 1),
    ];
    for (rows, inner, columns) in shapes {
        let (left, right) = (matrix(rows, inner, 21), matrix(inner, columns, 22));
        assert_product(left.view(), right.view());
        let (left_t, right_t) = (matrix(inner, rows, 23), matrix(columns, inner, 24));
        assert_product(left_t.t(), right_t.t());
        assert_product(left.view(), right_t.t());
        assert_product(left_t.t(), right.view());
    }
}

#[test]
fn a_matrix_streamed_from_memory_times_a_column_keeps_the_chain() {
    // Past `STREAMED_FROM` bytes each block asks for the rows' memory ahead, past the rows'
    // ends near the last steps; a hint only, so the bits are the chain's.
    let (rows, inner) = (STREAMED_FROM / (4 * 1000) + 17, 1000);
    let (left, right) = (matrix(rows, inner, 31), matrix(inner, 1, 32));
    assert!(left.len() * 4 >= STREAMED_FROM);
    let actual = multiplied(left.view(), right.view());
    let column = right.column(0);
    for (row, value) in left.rows().into_iter().zip(actual.column(0)) {
        let chain = row
            .iter()
            .zip(column)
            .fold(0.0f32, |total, (a, b)| a.mul_add(*b, total));
        assert_eq!(value.to_bits(), chain.to_bits());
    }
}

/// Whether two results hold the same bits, element by element.
fn same_bits(result: &Array2<f32>, expected: &Array2<f32>) -> bool {
    result.shape() == expected.shape()
        && result
            .iter()
            .zip(expected)
            .all(|(x, y)| x.to_bits() == y.to_bits())
}

fn threaded_pool(threads: usize) -> rayon::ThreadPool {
    let pool = rayon::ThreadPoolBuilder::new().num_threads(threads).build();
    pool.expect("a thread pool")
}

fn threaded(threads: usize, run: impl FnOnce() -> Array2<f32> + Send) -> Array2<f32> {
    threaded_pool(threads).install(run)
}

#[test]
fn results_are_the_same_bits_for_any_thread_count() {
    // Tall: blocks of rows; short and wide: rows and groups of columns (one row more than
    // the unpacked path takes); a few rows and one column, unpacked, by blocks.
    for (rows, inner, columns) in [
        (MC * 3 + 7, KC * 2 + 5, NR * 3 + 1),
        (FEW_ROWS + 1, KC + 3, NR * 9 + 2),
        (3, 37, 2100),
        (50, 39, 1),
    ] {
        let (left, right) = (matrix(rows, inner, 11), matrix(inner, columns, 12));
        let expected = reference(left.view(), right.view());
        for threads in [1, 2, 3, 8] {
            let result = threaded(threads, || {
                let mut out = Array2::zeros((rows, columns));
                product(
                    left.view(),
                    right.view(),
                    out.view_mut(),
                    true,
                    &Interrupt::default(),
                );
                out
            });
            let same = same_bits(&result, &expected);
            assert!(same, "{rows}x{inner}x{columns} on {threads} threads");
        }
    }
}

#[test]
fn products_with_b_packed_ahead_match_the_reference_on_every_route() {
    let column_major = |rows: usize, columns: usize, seed| {
        let transposed = matrix(columns, rows, seed);
        transposed.reversed_axes()
    };
    const { assert!(NR - 4 > FEW_ROWS) };
    let cases = [
        (matrix(5, 0, 1), matrix(0, 7, 2), Route::Empty),
        (
            matrix(3, 37, 3),
            matrix(37, 70, 4),
            Route::Narrow { transposed: false },
        ),
        (
            column_major(70, 37, 5),
            column_major(37, 3, 6),
            Route::Narrow { transposed: true },
        ),
        // Fewer columns than a tile is wide, but too many for the unpacked route.
        (
            matrix(100, 50, 7),
            matrix(50, NR - 4, 8),
            Route::Packed { transposed: true },
        ),
        // Two spans of depth blocks and two blocks of columns: only the first span of the
        // first column block is packed ahead.
        (
            matrix(MR.max(FEW_ROWS) + 1, SPAN * KC + 76, 9),
            matrix(SPAN * KC + 76, NC + 6, 10),
            Route::Packed { transposed: false },
        ),
    ];
    for (left, right, expected_route) in cases {
        let (left, right) = (left.view(), right.view());
        assert_eq!(route(left, right), expected_route);
        let expected = reference(left, right);
        for (threads, parallel) in [(1, false), (2, true), (3, true)] {
            let result = threaded(threads, || {
                let mut out = Array2::from_elem((left.nrows(), right.ncols()), f32::NAN);
                let packed = pack_ahead(left, right, expected_route, parallel);
                let interrupt = Interrupt::default();
                run(
                    expected_route,
                    packed,
                    left,
                    right,
                    out.view_mut(),
                    parallel,
                    &interrupt,
                );
                out
            });
            let same = same_bits(&result, &expected);
            assert!(same, "{expected_route:?} on {threads} threads");
        }
    }
}

#[test]
fn parts_cover_c_once_in_even_shares_of_rows() {
    for (rows, columns, threads) in [
        (1024, 1024, 2),
        (100, 70, 3),
        (MR + 1, NR * 9 + 2, 4),
        (5, 3, 8),
    ] {
        let mut out = Array2::<f32>::zeros((rows, columns));
        let units = threaded_pool(threads).install(|| {
            let units = parts(out.view_mut(), true);
            units
                .into_iter()
                .map(|(row, panel, view)| (row, panel, view.dim()))
                .collect::<Vec<_>>()
        });
        let mut covered = Array2::<u32>::zeros((rows, columns));
        for &(row, panel, (height, width)) in &units {
            covered
                .slice_mut(ndarray::s![
                    row..row + height,
                    panel * NR..panel * NR + width
                ])
                .mapv_inplace(|count| count + 1);
        }
        assert!(
            covered.iter().all(|&count| count == 1),
            "{rows}x{columns}: {units:?}"
        );
        assert!(units.len() <= threads, "{rows}x{columns}: {units:?}");
        let heights = units.iter().map(|&(_, _, (height, _))| height);
        let (least, most) = (heights.clone().min(), heights.max());
        assert!(
            most.zip(least)
                .is_some_and(|(most, least)| most - least <= 1),
            "{rows}x{columns}: {units:?}"
        );
    }
}

#[test]
fn a_product_after_a_larger_one_on_the_same_thread_is_exact() {
    // The packed span of B is kept from one product to the next on a thread: stale values
    // must never reach the narrower product's edge panels.
    let (left, right) = (matrix(40, KC + 7, 13), matrix(KC + 7, 3 * NR, 14));
    assert_product(left.view(), right.view());
    let (left, right) = (matrix(17, 9, 15), matrix(9, NR + 5, 16));
    assert_product(left.view(), right.view());
    let (left, right) = (matrix(3, 2 * KC, 17), matrix(2 * KC, 2, 18));
    assert_product(left.view(), right.view());
}

fn shape_and_layout() -> impl Strategy<Value = (usize, usize, usize, bool, bool)> {
    (
        0..40usize,
        0..40usize,
        0..80usize,
        any::<bool>(),
        any::<bool>(),
    )
}

proptest! {
    #[test]
    fn random_shapes_match_the_reference(
        (rows, inner, columns, left_transposed, right_transposed) in shape_and_layout(),
        seed in 0..1000usize,
    ) {
        let left_t = matrix(inner, rows, seed);
        let left = matrix(rows, inner, seed);
        let right_t = matrix(columns, inner, seed + 1);
        let right = matrix(inner, columns, seed + 1);
        let left = if left_transposed { left_t.t() } else { left.view() };
        let right = if right_transposed { right_t.t() } else { right.view() };
        let actual = multiplied(left, right);
        let expected = reference(left, right);
        prop_assert!(actual.iter().zip(&expected).all(|(x, y)| x.to_bits() == y.to_bits()));
    }
}
