//! `sort` and `topk` along a dim: the dim moved last and made contiguous, keys sorted per
//! line by a bitonic network, then the values taken at the sorted positions.

use super::super::Gpu;
use super::super::codegen::Param;
use super::super::codegen::sort;
use super::super::tensor::Tensor;
use super::super::views;
use crate::backend::error::{KernelError, check_dim};
use crate::dtype::DType;

impl Gpu {
    /// The first `keep` elements of each line along `dim` in sorted order, and their
    /// positions (`keep` is the dim's size for `sort`).
    pub(crate) fn sort(
        &self,
        input: &Tensor,
        dim: usize,
        keep: Option<usize>,
        descending: bool,
    ) -> Result<Vec<Tensor>, KernelError> {
        let input = self.materialize(input)?;
        let ndim = input.shape.len();
        check_dim(dim, ndim)?;
        let length = input.shape[dim];
        let keep = keep.unwrap_or(length);
        if keep > length {
            return Err(KernelError::Shape(format!(
                "topk() needs k <= {length}, the size of dimension {dim}, got k = {keep}"
            )));
        }
        let order: Vec<usize> = (0..ndim).filter(|&d| d != dim).chain([dim]).collect();
        let mut restore = vec![0; ndim];
        for (position, &axis) in order.iter().enumerate() {
            restore[axis] = position;
        }
        let moved = self.contiguous(&views::permute(&input, &order)?)?;
        let lines = moved.numel().checked_div(length).unwrap_or(0);
        let mut kept_shape = moved.shape.clone();
        kept_shape[ndim - 1] = keep;
        let indices = self.alloc(DType::I64, &kept_shape)?;
        if lines > 0 && keep > 0 {
            let padded = length.next_power_of_two();
            let total = lines * padded;
            let keys = self.alloc(DType::I64, &[total])?;
            let positions = self.alloc(DType::Bool, &[total])?;
            let pair = || {
                vec![
                    keys.buffer().cloned().expect("a fresh buffer"),
                    positions.buffer().cloned().expect("a fresh buffer"),
                ]
            };
            let mut buffers = vec![moved.buffer().cloned().ok_or_else(lost)?];
            buffers.extend(pair());
            let offset = moved.offset as u32;
            self.launch_each(
                &sort::keys(moved.dtype, descending),
                buffers,
                total,
                &mut |param| {
                    Ok(match param {
                        Param::Count => total as u32,
                        Param::Value(0) => length as u32,
                        Param::Value(1) => padded as u32,
                        Param::Offset(_) => offset,
                        _ => 0,
                    })
                },
            )?;
            let pass = sort::bitonic_pass();
            let mut block = 2;
            while block <= padded {
                let mut distance = block / 2;
                while distance > 0 {
                    self.launch_each(&pass, pair(), total, &mut |param| {
                        Ok(match param {
                            Param::Count => total as u32,
                            Param::Value(0) => block as u32,
                            Param::Value(1) => distance as u32,
                            Param::Value(2) => padded as u32,
                            _ => 0,
                        })
                    })?;
                    distance /= 2;
                }
                block *= 2;
            }
            let count = lines * keep;
            let buffers = vec![
                positions.buffer().cloned().ok_or_else(lost)?,
                indices.buffer().cloned().ok_or_else(lost)?,
            ];
            self.launch_each(&sort::indices(), buffers, count, &mut |param| {
                Ok(match param {
                    Param::Count => count as u32,
                    Param::Value(0) => padded as u32,
                    Param::Value(1) => keep as u32,
                    _ => 0,
                })
            })?;
        }
        let values = self.gather(&moved, ndim - 1, &indices)?;
        Ok(vec![
            views::permute(&values, &restore)?,
            views::permute(&indices, &restore)?,
        ])
    }
}

fn lost() -> KernelError {
    KernelError::Internal("a GPU tensor lost its buffer".into())
}
