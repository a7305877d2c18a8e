//! The parallel, contiguous fast paths of the data-dependent kernels checked against
//! plain element-by-element references (the kernels' earlier behaviour), on inputs large
//! enough to run in parallel and on views that are not in standard layout.

use ndarray::{ArcArray, Array2, ArrayD, Axis, Dimension, IxDyn};

use super::testing::assert_same;
use super::{
    IndexItem, KernelError, Tensor, cumsum, gather, index, index_select, masked_select, nonzero,
    repeat_interleave,
};

/// A `rows x columns` f32 matrix with about a third of its elements zero.
fn matrix(rows: usize, columns: usize) -> ArcArray<f32, IxDyn> {
    Array2::from_shape_fn((rows, columns), |(row, column)| {
        let value = ((row * 7919 + column * 104_729) % 97) as f32 - 48.0;
        if value.abs() < 16.0 { 0.0 } else { value / 8.0 }
    })
    .into_dyn()
    .into_shared()
}

/// The matrix and its transpose (a view that is not in standard layout).
fn inputs() -> Vec<ArcArray<f32, IxDyn>> {
    let wide = matrix(300, 700);
    vec![
        wide.clone(),
        wide.reversed_axes(),
        matrix(1, 5),
        matrix(0, 4),
    ]
}

fn flags_of(array: &ArcArray<f32, IxDyn>) -> ArcArray<bool, IxDyn> {
    array.map(|&value| value != 0.0).into_shared()
}

#[test]
fn nonzero_matches_an_indexed_walk() {
    for array in inputs() {
        let mut expected = Vec::new();
        for (position, &value) in array.indexed_iter() {
            if value != 0.0 {
                expected.extend(position.slice().iter().map(|&coordinate| coordinate as i64));
            }
        }
        let count = expected.len() / 2;
        let expected = Tensor::from_vec(&[count, 2], expected).unwrap();
        assert_same(&nonzero(&Tensor::F32(array)).unwrap(), &expected);
    }
}

#[test]
fn masks_match_a_filtered_walk() {
    for array in inputs() {
        let flags = flags_of(&array);
        let kept: Vec<f32> = array
            .iter()
            .zip(flags.iter())
            .filter_map(|(&value, &flag)| flag.then_some(value))
            .collect();
        let expected = Tensor::from_vec(&[kept.len()], kept).unwrap();
        let (input, mask) = (Tensor::F32(array), Tensor::Bool(flags));
        assert_same(&masked_select(&input, &mask).unwrap(), &expected);
        assert_same(&index(&input, &[IndexItem::Mask(mask)]).unwrap(), &expected);
    }
}

#[test]
fn a_mask_after_other_dims_takes_from_every_row() {
    for array in inputs() {
        let columns = array.shape()[1];
        let flags: Vec<bool> = (0..columns).map(|column| column % 3 != 1).collect();
        let kept: Vec<usize> = (0..columns).filter(|&column| flags[column]).collect();
        let expected = array.select(Axis(1), &kept);
        let mask = Tensor::from_vec(&[columns], flags).unwrap();
        let items = [IndexItem::full(), IndexItem::Mask(mask)];
        let actual = index(&Tensor::F32(array), &items).unwrap();
        assert_same(&actual, &Tensor::from(expected));
        let rows_mask = Tensor::from_vec(&[2, 3], vec![true, false, true, true, false, true]);
        let cube = Tensor::F32(ArrayD::from_elem(IxDyn(&[2, 3, 4]), 1.5).into_shared());
        let taken = index(&cube, &[IndexItem::Mask(rows_mask.unwrap())]).unwrap();
        assert_eq!(taken.shape(), &[4, 4]);
    }
}

/// Indices that jump around and repeat, all in `0..size`.
fn scattered(count: usize, size: usize) -> Vec<i64> {
    (0..count)
        .map(|step| ((step * 7919) % size) as i64)
        .collect()
}

#[test]
fn index_select_and_tensor_indices_match_ndarray_select() {
    for array in inputs() {
        for dim in 0..2 {
            let size = array.shape()[dim];
            let indices = scattered(if size == 0 { 0 } else { 2 * size + 3 }, size.max(1));
            let positions: Vec<usize> = indices.iter().map(|&index| index as usize).collect();
            let expected = Tensor::from(array.select(Axis(dim), &positions));
            let tensor = Tensor::from_vec(&[indices.len()], indices.clone()).unwrap();
            let input = Tensor::F32(array.clone());
            assert_same(&index_select(&input, dim, &tensor).unwrap(), &expected);
            let negative: Vec<i64> = indices.iter().map(|&index| index - size as i64).collect();
            let negative = Tensor::from_vec(&[negative.len()], negative).unwrap();
            let mut items = vec![IndexItem::full(); dim];
            items.push(IndexItem::Indices(negative));
            assert_same(&index(&input, &items).unwrap(), &expected);
        }
    }
}

#[test]
fn the_first_bad_index_in_order_is_reported() {
    let input = Tensor::F32(matrix(300, 700));
    let mut indices = scattered(200_000, 300);
    indices[150_000] = 300;
    indices[120_001] = -301;
    indices[199_999] = 1000;
    let tensor = Tensor::from_vec(&[indices.len()], indices).unwrap();
    let error = |index, size, dim| KernelError::IndexOutOfRange { index, size, dim };
    assert_eq!(
        index_select(&input, 0, &tensor).unwrap_err(),
        error(-301, 300, 0)
    );
    assert_eq!(
        index(&input, &[IndexItem::Indices(tensor.clone())]).unwrap_err(),
        error(-301, 300, 0)
    );
    let column = Tensor::from_vec(
        &[200_000, 1],
        tensor.as_i64().unwrap().iter().copied().collect(),
    );
    assert_eq!(
        gather(&input, 0, &column.unwrap()).unwrap_err(),
        error(-301, 300, 0)
    );
}

#[test]
fn gather_matches_an_element_loop() {
    for array in inputs() {
        for dim in 0..2 {
            let size = array.shape()[dim];
            let mut index_shape = array.shape().to_vec();
            index_shape[dim] = if size == 0 { 0 } else { 2 * size + 1 };
            let count: usize = index_shape.iter().product();
            let indices =
                ArrayD::from_shape_vec(IxDyn(&index_shape), scattered(count, size.max(1)));
            let indices = indices.unwrap();
            let values = indices.indexed_iter().map(|(mut position, &index)| {
                position[dim] = index as usize;
                array[position]
            });
            let expected = Tensor::from_vec(&index_shape, values.collect()).unwrap();
            let actual = gather(&Tensor::F32(array.clone()), dim, &Tensor::from(indices));
            assert_same(&actual.unwrap(), &expected);
        }
    }
    let line = Tensor::F32(
        matrix(1, 100_000)
            .into_shape_with_order(IxDyn(&[100_000]))
            .unwrap(),
    );
    let indices = Tensor::from_vec(&[90_000], scattered(90_000, 100_000)).unwrap();
    assert_same(
        &gather(&line, 0, &indices).unwrap(),
        &index_select(&line, 0, &indices).unwrap(),
    );
}

#[test]
fn cumsum_matches_accumulate_axis() {
    for array in inputs() {
        for dim in 0..2 {
            let mut expected = array.to_owned();
            expected.accumulate_axis_inplace(Axis(dim), |&previous, current| *current += previous);
            let actual = cumsum(&Tensor::F32(array.clone()), dim).unwrap();
            assert_same(&actual, &Tensor::from(expected));
            let flags = flags_of(&array);
            let mut counts = flags.map(|&flag| i64::from(flag));
            counts.accumulate_axis_inplace(Axis(dim), |&previous, current| *current += previous);
            assert_same(
                &cumsum(&Tensor::Bool(flags), dim).unwrap(),
                &Tensor::from(counts),
            );
        }
    }
}

#[test]
fn repeat_interleave_matches_ndarray_select() {
    let array = matrix(300, 700);
    let counts: Vec<i64> = (0..300).map(|row| row % 4).collect();
    let positions: Vec<usize> = (0..300)
        .flat_map(|row| std::iter::repeat_n(row, row % 4))
        .collect();
    let expected = Tensor::from(array.select(Axis(0), &positions));
    let counts = Tensor::from_vec(&[300], counts).unwrap();
    let actual = repeat_interleave(&Tensor::F32(array), &counts, Some(0)).unwrap();
    assert_same(&actual, &expected);
}
