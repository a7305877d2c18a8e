//! Every kernel on awkward inputs (0-d, empty, size-1, NaN, transposed, wrong dims, wild
//! indices): each call must return, never panic. Results are checked elsewhere.

use super::testing::{boolean, bools, float, floats, int, ints};
use super::*;
use crate::dtype::{DType, Scalar};

fn awkward_tensors() -> Vec<Tensor> {
    let transposed = ints(&[2, 3], &[1, -2, 3, 0, 5, 6])
        .as_i64()
        .unwrap()
        .clone()
        .reversed_axes();
    vec![
        float(f64::NAN),
        int(-3),
        boolean(true),
        floats(&[0], &[]),
        ints(&[2, 0, 3], &[]),
        bools(&[1], &[false]),
        floats(&[3], &[f32::NAN, -0.0, f32::INFINITY]),
        ints(&[1, 1], &[i64::MIN]),
        Tensor::I64(transposed),
        bools(&[2, 3], &[true, false, true, true, false, false]),
    ]
}

const DIMS: [usize; 5] = [0, 1, 2, 5, usize::MAX];
const INDICES: [i64; 7] = [i64::MIN, -10, -1, 0, 1, 10, i64::MAX];

fn index_tensors() -> Vec<Tensor> {
    vec![
        ints(&[2], &[0, -1]),
        ints(&[1], &[i64::MAX]),
        int(0),
        ints(&[0], &[]),
        floats(&[1], &[0.0]),
    ]
}

#[test]
fn elementwise_kernels_never_panic() {
    let tensors = awkward_tensors();
    for left in &tensors {
        for right in &tensors {
            for op in BinaryOp::ALL {
                let _ = binary(op, left, right);
            }
            let _ = where_(left, left, right);
            let _ = where_(&boolean(false), left, right);
            let _ = matmul(left, right);
            let _ = masked_select(left, right);
            let _ = cat(&[left.clone(), right.clone()], 0);
            let _ = stack(&[left.clone(), right.clone()], 1);
        }
        for op in UnaryOp::ALL {
            let _ = unary(op, left);
        }
        for bound in [
            Scalar::Float(f64::NAN),
            Scalar::Int(i64::MIN),
            Scalar::Bool(true),
        ] {
            let _ = clamp(left, Some(bound), None);
            let _ = clamp(left, Some(Scalar::Int(1)), Some(bound));
        }
        let _ = format_tensor(left);
        let _ = (
            nonzero(left),
            unique(left),
            left.to_scalar(),
            left.elements().count(),
        );
        for dtype in DType::ALL {
            let _ = left.cast(dtype);
        }
    }
}

#[test]
fn dim_taking_kernels_never_panic() {
    for tensor in awkward_tensors() {
        for op in ReduceOp::ALL {
            let _ = reduce(op, &tensor, None, true);
            for dim in DIMS {
                let _ = reduce(op, &tensor, Some(&[dim]), false);
                let _ = reduce(op, &tensor, Some(&[0, dim]), true);
            }
        }
        for dim in DIMS {
            let _ = (
                cumsum(&tensor, dim),
                diff(&tensor, dim),
                squeeze(&tensor, Some(dim)),
            );
            for descending in [false, true] {
                let _ = sort(&tensor, dim, descending);
                let _ = (
                    topk(&tensor, dim, 0, descending),
                    topk(&tensor, 1, dim, descending),
                );
            }
            let _ = (
                unsqueeze(&tensor, dim),
                flatten(&tensor, 0, dim),
                flatten(&tensor, dim, 0),
            );
            let _ = (
                transpose(&tensor, dim, 0),
                narrow(&tensor, dim, 1, 1),
                narrow(&tensor, 0, dim, 0),
            );
            let _ = split(&tensor, &[1, dim], dim);
            let _ = cat(std::slice::from_ref(&tensor), dim);
            for indices in index_tensors() {
                let _ = (
                    index_select(&tensor, dim, &indices),
                    gather(&tensor, dim, &indices),
                );
                let _ = repeat_interleave(&tensor, &indices, Some(dim));
            }
        }
        for indices in index_tensors() {
            let _ = (
                repeat_interleave(&tensor, &indices, None),
                repeat_interleave_indices(&indices),
            );
        }
        let _ = squeeze(&tensor, None);
    }
}

#[test]
fn shape_taking_kernels_never_panic() {
    let shapes: [&[usize]; 8] = [
        &[],
        &[0],
        &[1],
        &[6],
        &[3, 2],
        &[2, 1, 3],
        &[usize::MAX, usize::MAX],
        &[0, usize::MAX],
    ];
    for tensor in awkward_tensors() {
        for shape in shapes {
            let _ = (
                reshape(&tensor, shape),
                expand(&tensor, shape),
                permute(&tensor, shape),
            );
        }
        let _ = permute(&tensor, &[1, 0]);
    }
    for shape in shapes {
        for dtype in DType::ALL {
            let _ = (zeros(dtype, shape), ones(dtype, shape));
        }
        let _ = from_elements(shape, &[Scalar::Int(1)], None);
        let _ = full(shape, Scalar::Float(f64::NAN), Some(DType::I64));
        let _ = randn(
            shape,
            &mut <rand_chacha::ChaCha8Rng as rand::SeedableRng>::seed_from_u64(0),
        );
        let _ = Tensor::from_vec::<bool>(shape, Vec::new());
    }
}

#[test]
fn indexing_never_panics() {
    let masks = [
        boolean(true),
        bools(&[2], &[true, false]),
        bools(&[3, 2], &[true; 6]),
        ints(&[1], &[1]),
    ];
    for tensor in awkward_tensors() {
        let mut item_lists: Vec<Vec<IndexItem>> = Vec::new();
        for index in INDICES {
            item_lists.push(vec![IndexItem::Int(index)]);
            item_lists.push(vec![
                IndexItem::NewAxis,
                IndexItem::Ellipsis,
                IndexItem::Int(index),
            ]);
            for step in [i64::MIN, 0, 1, 2, i64::MAX] {
                let slice = IndexItem::Slice {
                    start: Some(index),
                    stop: Some(-index.saturating_abs()),
                    step,
                };
                item_lists.push(vec![IndexItem::Ellipsis, slice]);
            }
        }
        for mask in &masks {
            item_lists.push(vec![IndexItem::Mask(mask.clone())]);
            item_lists.push(vec![IndexItem::NewAxis, IndexItem::Mask(mask.clone())]);
        }
        for indices in index_tensors() {
            item_lists.push(vec![
                IndexItem::Ellipsis,
                IndexItem::Indices(indices.clone()),
            ]);
            item_lists.push(vec![
                IndexItem::Indices(indices),
                IndexItem::Ellipsis,
                IndexItem::Ellipsis,
            ]);
        }
        for items in item_lists {
            let _ = index(&tensor, &items);
        }
    }
}
