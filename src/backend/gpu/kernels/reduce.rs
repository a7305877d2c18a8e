//! Reductions over dims: the kept dims become lanes, the reduced dims their elements. Long
//! lanes of few rows are cut into chunks reduced in parallel, then their partial results.
//! Short lanes share a workgroup: each takes the fewest invocations (a power of two) that
//! hold one element each, so many rows of a few elements do not leave nearly every
//! invocation idle.

use super::super::Gpu;
use super::super::codegen::reduce::{ReduceSpec, reduce};
use super::super::codegen::{Param, workgroup_size};
use super::super::tensor::Tensor;
use super::super::views;
use crate::backend::error::KernelError;
use crate::dtype::DType;
use crate::graph::op::ReduceOp;

/// Lanes longer than this, in reductions with few lanes, are cut into chunks.
const CHUNK: usize = 4096;

impl Gpu {
    /// `op` over `dims` (all when `None`) of `input`, into a tensor of `output_dtype` and
    /// `output_shape` (the shape rule's).
    pub(crate) fn reduce(
        &self,
        op: ReduceOp,
        input: &Tensor,
        dims: Option<&[usize]>,
        output_dtype: DType,
        output_shape: &[usize],
    ) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let ndim = input.shape.len();
        let reduced = |axis: usize| dims.is_none_or(|dims| dims.contains(&axis));
        let (kept, folded): (Vec<usize>, Vec<usize>) = (0..ndim).partition(|&axis| !reduced(axis));
        let order: Vec<usize> = kept.iter().chain(&folded).copied().collect();
        let permuted = views::permute(&input, &order)?;
        let rows: usize = kept.iter().map(|&axis| input.shape[axis]).product();
        let length: usize = folded.iter().map(|&axis| input.shape[axis]).product();
        let (source, lane_stride, stride) = match (
            permuted.merged_stride(0..kept.len(), 1),
            permuted.merged_stride(kept.len()..ndim, 1),
        ) {
            (Some(lane_stride), Some(stride)) => (permuted, lane_stride, stride),
            _ => (self.contiguous(&permuted)?, length, 1),
        };
        let output = self.alloc(output_dtype, output_shape)?;
        if rows == 0 {
            return Ok(output);
        }
        let arg = matches!(op, ReduceOp::Argmax | ReduceOp::Argmin);
        let chunks = if length > 2 * CHUNK && rows < 1024 {
            length.div_ceil(CHUNK)
        } else {
            1
        };
        let pass = Pass {
            rows,
            length,
            chunks,
            chunk: if chunks == 1 { length.max(1) } else { CHUNK },
            lane_stride,
            stride,
            divisor: length as f32,
        };
        if chunks == 1 {
            let spec = ReduceSpec {
                op,
                input: source.dtype,
                indexed: false,
                last: true,
            };
            self.reduce_into(spec, &pass, &source, None, std::slice::from_ref(&output))?;
            return Ok(output);
        }
        let partial = ReduceSpec {
            op,
            input: source.dtype,
            indexed: false,
            last: false,
        };
        let partial_dtype = match op {
            ReduceOp::Sum | ReduceOp::Prod | ReduceOp::Mean if source.dtype != DType::F32 => {
                DType::I64
            }
            ReduceOp::All | ReduceOp::Any => DType::Bool,
            _ => source.dtype,
        };
        let values = self.alloc(partial_dtype, &[rows * chunks])?;
        let indices = self.alloc(DType::I64, &[rows * chunks])?;
        let targets = if arg {
            vec![values.clone(), indices.clone()]
        } else {
            vec![values.clone()]
        };
        self.reduce_into(partial, &pass, &source, None, &targets)?;
        let second = Pass {
            rows,
            length: chunks,
            chunks: 1,
            chunk: chunks,
            lane_stride: chunks,
            stride: 1,
            divisor: length as f32,
        };
        let last = ReduceSpec {
            op,
            input: partial_dtype,
            indexed: arg,
            last: true,
        };
        let indices = arg.then_some(&indices);
        self.reduce_into(
            last,
            &second,
            &values,
            indices,
            std::slice::from_ref(&output),
        )?;
        Ok(output)
    }

    fn reduce_into(
        &self,
        spec: ReduceSpec,
        pass: &Pass,
        source: &Tensor,
        indices: Option<&Tensor>,
        outputs: &[Tensor],
    ) -> Result<(), KernelError> {
        let wgsl = reduce(&spec);
        let mut buffers = vec![];
        for tensor in std::iter::once(source).chain(indices).chain(outputs) {
            buffers.push(
                tensor
                    .buffer()
                    .cloned()
                    .ok_or_else(|| KernelError::Internal("a reduction lost a buffer".into()))?,
            );
        }
        let lanes = pass.rows * pass.chunks;
        let size = workgroup_size() as usize;
        let width = pass.chunk.next_power_of_two().min(size);
        let (source_offset, index_offset) = (source.offset, indices.map_or(0, |t| t.offset));
        let mut value = |param: Param| -> Result<u32, KernelError> {
            Ok(match param {
                Param::Count => lanes as u32,
                Param::Value(0) => pass.length as u32,
                Param::Value(1) => pass.chunks as u32,
                Param::Value(2) => pass.chunk as u32,
                Param::Value(3) => pass.lane_stride as u32,
                Param::Value(4) => pass.stride as u32,
                Param::Value(5) => pass.divisor.to_bits(),
                Param::Value(6) => width as u32,
                Param::Offset(0) => source_offset as u32,
                Param::Offset(1) => index_offset as u32,
                _ => 0,
            })
        };
        self.launch(
            &wgsl,
            buffers,
            lanes.div_ceil(size / width) as u64,
            &mut value,
        )
    }
}

/// The sizes of one reduction pass.
struct Pass {
    rows: usize,
    length: usize,
    chunks: usize,
    chunk: usize,
    lane_stride: usize,
    stride: usize,
    divisor: f32,
}
