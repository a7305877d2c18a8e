//! Running sums and differences along a dim.

use super::super::Gpu;
use super::super::codegen::Param;
use super::super::codegen::scan::{SEGMENT, add_segments, cumsum};
use super::super::tensor::Tensor;
use super::super::views;
use crate::backend::error::{KernelError, check_dim};
use crate::dtype::DType;
use crate::graph::op::{BinaryOp, Op};
use crate::graph::passes;
use crate::graph::shape::{Dim, Meta};

impl Gpu {
    /// The running sum along `dim` (`bool` and `i64` give `i64`).
    pub(crate) fn cumsum(&self, input: &Tensor, dim: usize) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let ndim = input.shape.len();
        if ndim == 0 {
            check_dim(dim, 1)?;
            return self.cast(&input, scan_dtype(input.dtype));
        }
        check_dim(dim, ndim)?;
        // The scanned dim last; the others are the rows.
        let order: Vec<usize> = (0..ndim).filter(|&d| d != dim).chain([dim]).collect();
        let permuted = views::permute(&input, &order)?;
        let length = input.shape[dim];
        let rows = input.numel().checked_div(length).unwrap_or(0);
        let source = match row_strides(&permuted) {
            Some(_) => permuted,
            None => self.contiguous(&permuted)?,
        };
        let (row_stride, stride) = row_strides(&source).unwrap_or((length, 1));
        let dtype = scan_dtype(input.dtype);
        let scanned = self.alloc(dtype, &source.shape)?;
        if rows > 0 && length > 0 {
            // A long row in segments, scanned side by side; their totals' running sums are
            // then added back.
            let (segment, segments) = if length > SEGMENT {
                (SEGMENT, length.div_ceil(SEGMENT))
            } else {
                (length, 1)
            };
            let totals = self.alloc(dtype, &[rows, segments])?;
            let buffers = [&source, &scanned, &totals]
                .iter()
                .filter_map(|tensor| tensor.buffer().cloned())
                .collect();
            let offset = source.offset;
            let groups = rows * segments;
            self.launch(
                &cumsum(source.dtype),
                buffers,
                groups as u64,
                &mut |param| {
                    Ok(match param {
                        Param::Count => groups as u32,
                        Param::Value(0) => length as u32,
                        Param::Value(1) => row_stride as u32,
                        Param::Value(2) => stride as u32,
                        Param::Value(3) => segment as u32,
                        Param::Value(4) => segments as u32,
                        Param::Offset(0) => offset as u32,
                        _ => 0,
                    })
                },
            )?;
            if segments > 1 {
                let before = self.cumsum(&totals, 1)?;
                let buffers = [&scanned, &before]
                    .iter()
                    .filter_map(|tensor| tensor.buffer().cloned())
                    .collect();
                let count = rows * length;
                self.launch_each(&add_segments(dtype), buffers, count, &mut |param| {
                    Ok(match param {
                        Param::Count => count as u32,
                        Param::Value(0) => length as u32,
                        Param::Value(1) => segment as u32,
                        Param::Value(2) => segments as u32,
                        _ => 0,
                    })
                })?;
            }
        }
        // Back to the input's order of dims.
        let mut inverse = vec![0; ndim];
        for (position, &axis) in order.iter().enumerate() {
            inverse[axis] = position;
        }
        views::permute(&scanned, &inverse)
    }

    /// `x[i + 1] - x[i]` along `dim`; for `bool`, exclusive or.
    pub(crate) fn diff(&self, input: &Tensor, dim: usize) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        check_dim(dim, input.shape.len())?;
        let size = input.shape[dim];
        if size == 0 {
            return Ok(input);
        }
        let later = views::narrow(&input, dim, 1, size - 1)?;
        let earlier = views::narrow(&input, dim, 0, size - 1)?;
        let op = match input.dtype {
            DType::Bool => Op::Binary(BinaryOp::Ne),
            _ => Op::Binary(BinaryOp::Sub),
        };
        let meta = Meta::new(
            input.dtype,
            later.shape.iter().map(|&size| Dim::from(size)).collect(),
        );
        let kernel = passes::single(&op, &[meta.clone(), meta.clone()], &meta)
            .ok_or_else(|| KernelError::Internal("no kernel for diff".into()))?;
        Ok(self
            .elementwise(&kernel, &[later, earlier], false)?
            .remove(0))
    }
}

fn scan_dtype(dtype: DType) -> DType {
    match dtype {
        DType::F32 => DType::F32,
        DType::I64 | DType::Bool => DType::I64,
    }
}

/// The row stride and element stride of a tensor whose last dim is scanned and whose other
/// dims walk rows with one stride, if it is such a tensor.
fn row_strides(tensor: &Tensor) -> Option<(usize, usize)> {
    let (last, outer) = tensor.shape.split_last()?;
    let stride = if *last == 1 {
        1
    } else {
        tensor.strides[outer.len()]
    };
    let row_stride = tensor.merged_stride(0..outer.len(), 0)?;
    Some((row_stride, stride))
}
