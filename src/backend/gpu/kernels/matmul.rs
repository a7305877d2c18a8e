//! `left @ right` with PyTorch's rules: 1-D operands become a row or a column (removed
//! from the result), batch dims broadcast.

use super::super::Gpu;
use super::super::codegen::Param;
use super::super::codegen::matmul::matmul;
use super::super::tensor::Tensor;
use super::super::views;
use crate::backend::cpu::broadcast_shapes;
use crate::backend::error::KernelError;
use crate::dtype::DType;

impl Gpu {
    pub(crate) fn matmul(
        &self,
        left: &Tensor,
        right: &Tensor,
        result: &[usize],
    ) -> Result<Tensor, KernelError> {
        let dtype = left.dtype.promote(right.dtype);
        if dtype == DType::Bool {
            return Err(KernelError::Type(
                "matmul is not defined for bool tensors; convert them with .long() or .float()"
                    .into(),
            ));
        }
        let left = self.cast(&self.materialize(left)?, dtype)?;
        let right = self.cast(&self.materialize(right)?, dtype)?;
        let left = if left.shape.len() == 1 {
            views::unsqueeze(&left, 0)?
        } else {
            left
        };
        let right = if right.shape.len() == 1 {
            views::unsqueeze(&right, 1)?
        } else {
            right
        };
        let (l, r) = (left.shape.len(), right.shape.len());
        let (n, k, m) = (left.shape[l - 2], left.shape[l - 1], right.shape[r - 1]);
        let batch_shape = broadcast_shapes(&left.shape[..l - 2], &right.shape[..r - 2])?;
        let batch: usize = batch_shape.iter().product();
        let left = batched(self, &left, &batch_shape, [n, k])?;
        let right = batched(self, &right, &batch_shape, [k, m])?;
        let output = self.alloc(dtype, &[batch, n, m])?;
        let across = m.div_ceil(64);
        let (work, groups) = match dtype {
            DType::F32 => {
                let tiles = batch * n.div_ceil(64) * across;
                (tiles, tiles as u64)
            }
            _ => {
                let elements = batch * n * m;
                (elements, (elements as u64).div_ceil(256))
            }
        };
        if work > 0 {
            let product = format!("a matmul with an inner size of {k}");
            self.check_loop_iterations(&product, loop_iterations(dtype, k))?;
            let wgsl = matmul(dtype);
            let buffers = [&left, &right, &output]
                .iter()
                .filter_map(|tensor| tensor.buffer().cloned())
                .collect();
            self.launch(&wgsl, buffers, groups, &mut |param| {
                Ok(match param {
                    Param::Count => work as u32,
                    Param::Value(0) => n as u32,
                    Param::Value(1) => k as u32,
                    Param::Value(2) => m as u32,
                    Param::Value(3) => across as u32,
                    Param::Stride(0, d) => left.strides[d as usize] as u32,
                    Param::Stride(_, d) => right.strides[d as usize] as u32,
                    Param::Offset(0) => left.offset as u32,
                    Param::Offset(_) => right.offset as u32,
                    _ => 0,
                })
            })?;
        }
        self.reshape(&output, result)
    }
}

/// An operand as `[batch, rows, columns]` with one batch stride: a view when its
/// broadcast batch dims allow one, else a contiguous copy.
fn batched(
    gpu: &Gpu,
    operand: &Tensor,
    batch: &[usize],
    matrix: [usize; 2],
) -> Result<Tensor, KernelError> {
    let full: Vec<usize> = batch.iter().copied().chain(matrix).collect();
    let expanded = views::expand(operand, &full)?;
    let ndim = full.len();
    let batch_stride = expanded.merged_stride(0..ndim - 2, 0);
    let source = match batch_stride {
        Some(_) => expanded,
        None => gpu.contiguous(&expanded)?,
    };
    let stride = source
        .merged_stride(0..ndim - 2, 0)
        .unwrap_or(matrix[0] * matrix[1]);
    let count: usize = batch.iter().product();
    Ok(source.view(
        vec![count, matrix[0], matrix[1]],
        vec![stride, source.strides[ndim - 2], source.strides[ndim - 1]],
        source.offset,
    ))
}

/// The loop iterations one invocation of the product runs for an inner size `k`: for `f32`,
/// one per 16-step slice of `k` and 17 for the steps inside it; for `i64`, one per step.
fn loop_iterations(dtype: DType, k: usize) -> u64 {
    match dtype {
        DType::F32 => k.div_ceil(16) as u64 * 18,
        _ => k as u64,
    }
}
