//! Tests of indexing: integers, slices, new axes, ellipses, masks and index tensors.

use super::*;
use crate::backend::cpu::testing::{assert_same, boolean, bools, floats, int, ints};
use IndexItem::{Ellipsis, Indices, Int, Mask, NewAxis};

fn slice(start: Option<i64>, stop: Option<i64>, step: i64) -> IndexItem {
    IndexItem::Slice { start, stop, step }
}

fn grid() -> Tensor {
    ints(&[3, 4], &(0..12).collect::<Vec<_>>())
}

fn check(input: &Tensor, cases: Vec<(Vec<IndexItem>, Tensor)>) {
    for (items, expected) in cases {
        let actual = index(input, &items).unwrap_or_else(|error| panic!("{items:?}: {error}"));
        assert_same(&actual, &expected);
    }
}

#[test]
fn integers_wrap_and_remove_dims() {
    check(
        &grid(),
        vec![
            (vec![Int(1)], ints(&[4], &[4, 5, 6, 7])),
            (vec![Int(-1)], ints(&[4], &[8, 9, 10, 11])),
            (vec![Int(1), Int(-4)], int(4)),
            (vec![], grid()),
        ],
    );
    let errors = [
        (
            Int(3),
            KernelError::IndexOutOfRange {
                index: 3,
                size: 3,
                dim: 0,
            },
        ),
        (
            Int(-4),
            KernelError::IndexOutOfRange {
                index: -4,
                size: 3,
                dim: 0,
            },
        ),
        (
            Int(i64::MIN),
            KernelError::IndexOutOfRange {
                index: i64::MIN,
                size: 3,
                dim: 0,
            },
        ),
    ];
    for (item, expected) in errors {
        assert_eq!(index(&grid(), &[item]).unwrap_err(), expected);
    }
    let second = index(&grid(), &[Int(0), Int(4)]).unwrap_err();
    assert_eq!(
        second,
        KernelError::IndexOutOfRange {
            index: 4,
            size: 4,
            dim: 1
        }
    );
    assert!(matches!(
        index(&int(1), &[Int(0)]),
        Err(KernelError::Shape(_))
    ));
    assert!(matches!(
        index(&grid(), &[Int(0), Int(0), Int(0)]),
        Err(KernelError::Shape(_))
    ));
}

#[test]
fn slices_clamp_like_python() {
    let t = ints(&[5], &[0, 1, 2, 3, 4]);
    check(
        &t,
        vec![
            (vec![slice(Some(1), Some(3), 1)], ints(&[2], &[1, 2])),
            (vec![slice(None, None, 2)], ints(&[3], &[0, 2, 4])),
            (vec![slice(Some(-2), None, 1)], ints(&[2], &[3, 4])),
            (vec![slice(Some(-100), Some(100), 1)], t.clone()),
            (vec![slice(Some(3), Some(1), 1)], ints(&[0], &[])),
            (vec![slice(Some(7), Some(9), 1)], ints(&[0], &[])),
            (vec![slice(None, Some(-7), 1)], ints(&[0], &[])),
            (vec![slice(Some(1), None, i64::MAX)], ints(&[1], &[1])),
            (
                vec![slice(Some(i64::MIN), Some(i64::MAX), 3)],
                ints(&[2], &[0, 3]),
            ),
        ],
    );
    check(
        &grid(),
        vec![
            (
                vec![IndexItem::full(), slice(Some(1), Some(3), 1)],
                ints(&[3, 2], &[1, 2, 5, 6, 9, 10]),
            ),
            (vec![slice(Some(1), None, 1), Int(-1)], ints(&[2], &[7, 11])),
        ],
    );
    for step in [0, -1] {
        let error = index(&t, &[slice(None, None, step)]).unwrap_err();
        assert!(matches!(error, KernelError::Value(_)));
    }
}

#[test]
fn basic_indexing_shares_data() {
    let t = grid();
    let row = index(&t, &[Int(2), slice(Some(1), None, 2)]).unwrap();
    assert_same(&row, &ints(&[2], &[9, 11]));
    let base = t.as_i64().unwrap().as_ptr();
    let first = row.as_i64().unwrap().as_ptr();
    assert_eq!(first, base.wrapping_add(9), "a slice is a view");
}

#[test]
fn new_axes_and_ellipsis() {
    let cube = ints(&[2, 2, 2], &(0..8).collect::<Vec<_>>());
    check(
        &cube,
        vec![
            (
                vec![NewAxis],
                ints(&[1, 2, 2, 2], &(0..8).collect::<Vec<_>>()),
            ),
            (vec![Ellipsis, Int(1)], ints(&[2, 2], &[1, 3, 5, 7])),
            (vec![Int(0), Ellipsis, Int(1)], ints(&[2], &[1, 3])),
            (
                vec![Ellipsis, NewAxis],
                ints(&[2, 2, 2, 1], &(0..8).collect::<Vec<_>>()),
            ),
            (vec![Int(1), NewAxis, Int(0)], ints(&[1, 2], &[4, 5])),
            (vec![Int(0), Int(0), Int(0), Ellipsis], int(0)),
        ],
    );
    check(
        &int(5),
        vec![
            (vec![Ellipsis], int(5)),
            (vec![NewAxis, NewAxis], ints(&[1, 1], &[5])),
        ],
    );
    let twice = index(&cube, &[Ellipsis, Ellipsis]).unwrap_err();
    assert!(matches!(twice, KernelError::Shape(_)));
}

#[test]
fn masks_select_row_major() {
    let t = grid();
    let rows = bools(&[3], &[true, false, true]);
    let cells = bools(
        &[3, 4],
        &[
            false, true, false, false, //
            false, false, false, false, //
            true, false, false, true,
        ],
    );
    check(
        &t,
        vec![
            (
                vec![Mask(rows.clone())],
                ints(&[2, 4], &[0, 1, 2, 3, 8, 9, 10, 11]),
            ),
            (vec![Mask(cells.clone())], ints(&[3], &[1, 8, 11])),
            (
                vec![
                    IndexItem::full(),
                    Mask(bools(&[4], &[false, true, true, false])),
                ],
                ints(&[3, 2], &[1, 2, 5, 6, 9, 10]),
            ),
            (
                vec![Int(-1), Mask(bools(&[4], &[true, false, false, true]))],
                ints(&[2], &[8, 11]),
            ),
            (vec![Mask(bools(&[3], &[false; 3]))], ints(&[0, 4], &[])),
            (
                vec![Mask(boolean(true))],
                ints(&[1, 3, 4], &(0..12).collect::<Vec<_>>()),
            ),
            (vec![Mask(boolean(false))], ints(&[0, 3, 4], &[])),
        ],
    );
    let transposed = Tensor::I64(t.as_i64().unwrap().clone().reversed_axes());
    let picked = index(&transposed, &[Mask(bools(&[4, 3], &[true; 12]))]).unwrap();
    assert_same(
        &picked,
        &ints(&[12], &[0, 4, 8, 1, 5, 9, 2, 6, 10, 3, 7, 11]),
    );
    let wrong = index(&t, &[Mask(bools(&[2], &[true, true]))]).unwrap_err();
    assert_eq!(
        wrong.to_string(),
        "a mask of shape [2] does not match shape [3] at dim 0"
    );
    assert!(matches!(
        index(&t, &[Mask(ints(&[3], &[1, 0, 1]))]),
        Err(KernelError::Type(_))
    ));
    let too_many = index(&t, &[Int(0), Mask(cells)]).unwrap_err();
    assert!(matches!(too_many, KernelError::Shape(_)));
}

#[test]
fn index_tensors_wrap_and_take_their_shape() {
    let t = grid();
    check(
        &t,
        vec![
            (
                vec![Indices(ints(&[2], &[2, -3]))],
                ints(&[2, 4], &[8, 9, 10, 11, 0, 1, 2, 3]),
            ),
            (
                vec![IndexItem::full(), Indices(ints(&[2, 2], &[0, 1, -1, 0]))],
                ints(&[3, 2, 2], &[0, 1, 3, 0, 4, 5, 7, 4, 8, 9, 11, 8]),
            ),
            (vec![Int(1), Indices(int(-1))], int(7)),
            (vec![Indices(ints(&[0], &[]))], ints(&[0, 4], &[])),
        ],
    );
    // PyTorch applies the integer first, so the remaining dims keep their order.
    let cube = ints(&[2, 3, 2], &(0..12).collect::<Vec<_>>());
    let picked = index(
        &cube,
        &[Int(0), IndexItem::full(), Indices(ints(&[2], &[1, 0]))],
    )
    .unwrap();
    assert_same(&picked, &ints(&[3, 2], &[1, 0, 3, 2, 5, 4]));
    let error = index(&t, &[Indices(ints(&[1], &[3]))]).unwrap_err();
    assert_eq!(
        error,
        KernelError::IndexOutOfRange {
            index: 3,
            size: 3,
            dim: 0
        }
    );
    let error = index(&t, &[IndexItem::full(), Indices(ints(&[1], &[-5]))]).unwrap_err();
    assert_eq!(
        error,
        KernelError::IndexOutOfRange {
            index: -5,
            size: 4,
            dim: 1
        }
    );
    assert!(matches!(
        index(&t, &[Indices(floats(&[1], &[0.0]))]),
        Err(KernelError::Type(_))
    ));
    let two = [Indices(ints(&[1], &[0])), Mask(bools(&[4], &[true; 4]))];
    assert!(matches!(index(&t, &two), Err(KernelError::Type(_))));
}

#[test]
fn empty_tensors_index_cleanly() {
    let empty = floats(&[0, 2], &[]);
    check(
        &empty,
        vec![
            (vec![slice(Some(1), None, 1)], floats(&[0, 2], &[])),
            (vec![IndexItem::full(), Int(1)], floats(&[0], &[])),
            (vec![Mask(bools(&[0], &[]))], floats(&[0, 2], &[])),
            (
                vec![IndexItem::full(), Indices(ints(&[1], &[1]))],
                floats(&[0, 1], &[]),
            ),
        ],
    );
    assert!(index(&empty, &[Int(0)]).is_err());
}
