//! `index_select`, `gather` and indexing: basic items as views, then at most one tensor
//! item (an `i64` index through the take kernel, a mask through compaction).

use super::super::Gpu;
use super::super::batch::Report;
use super::super::codegen::Param;
use super::super::codegen::gather::{TakeSpec, take};
use super::super::tensor::Tensor;
use super::super::views::{self, python_slice};
use crate::backend::error::{KernelError, check_dim, format_shape};
use crate::dtype::DType;
use crate::graph::op::IndexSpec;

/// A take: the source walked along the output, and the index tensor walked along it.
struct Take<'a> {
    source: &'a Tensor,
    indices: &'a Tensor,
    shape: Vec<usize>,
    source_strides: Vec<usize>,
    index_strides: Vec<usize>,
    /// The indexed dim of the source (its size bounds the indices) and the dim number
    /// messages name.
    axis: usize,
    dim: usize,
    wrap: bool,
}

impl Gpu {
    /// The slices of `input` along `dim` at `indices` (0-d or 1-D, in `0..size`).
    pub(crate) fn index_select(
        &self,
        input: &Tensor,
        dim: usize,
        indices: &Tensor,
    ) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let indices = self.materialize(indices)?;
        check_indices(&indices, "index_select")?;
        check_dim(dim, input.shape.len())?;
        let flat = if indices.shape.is_empty() {
            views::unsqueeze(&indices, 0)?
        } else {
            indices
        };
        if flat.shape.len() != 1 {
            return Err(KernelError::Shape(format!(
                "index_select needs 1-D indices, got shape {}",
                format_shape(&flat.shape)
            )));
        }
        let mut shape = input.shape.clone();
        shape[dim] = flat.shape[0];
        let mut source_strides = input.strides.clone();
        source_strides[dim] = 0;
        let mut index_strides = vec![0; shape.len()];
        index_strides[dim] = flat.strides[0];
        self.take(&Take {
            source: &input,
            indices: &flat,
            shape,
            source_strides,
            index_strides,
            axis: dim,
            dim,
            wrap: false,
        })
    }

    /// PyTorch's `gather`: the output has the indices' shape.
    pub(crate) fn gather(
        &self,
        input: &Tensor,
        dim: usize,
        indices: &Tensor,
    ) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let indices = self.materialize(indices)?;
        check_indices(&indices, "gather")?;
        if input.shape.is_empty() {
            check_dim(dim, 1)?;
            let scalar = views::unsqueeze(&input, 0)?;
            let expanded = views::expand(&scalar, &[1])?;
            let index = views::unsqueeze(&indices, 0)?;
            return self
                .take(&Take {
                    source: &expanded,
                    indices: &index,
                    shape: vec![1],
                    source_strides: vec![0],
                    index_strides: index.strides.clone(),
                    axis: 0,
                    dim: 0,
                    wrap: false,
                })
                .and_then(|taken| views::squeeze(&taken, &[0]));
        }
        check_dim(dim, input.shape.len())?;
        let mut source_strides = input.strides.clone();
        source_strides[dim] = 0;
        self.take(&Take {
            source: &input,
            indices: &indices,
            shape: indices.shape.clone(),
            source_strides,
            index_strides: indices.strides.clone(),
            axis: dim,
            dim,
            wrap: false,
        })
    }

    /// `input[items]` (sizes resolved) with its tensor items among `tensors`, in order.
    pub(crate) fn index(
        &self,
        input: &Tensor,
        items: &[IndexSpec],
        tensors: &[Tensor],
    ) -> Result<Tensor, KernelError> {
        let mut view = self.materialize(input)?;
        let (mut axis, mut dim) = (0, 0);
        let mut tensors = tensors.iter();
        let mut advanced = None;
        for item in items {
            let size = view.shape.get(axis).copied();
            match item {
                IndexSpec::Int(position) => {
                    let size = size.ok_or_else(missing)?;
                    let position = wrap_index(known(*position)?, size, dim)?;
                    view = views::narrow(&view, axis, position, 1)?;
                    view = views::squeeze(&view, &[axis])?;
                    dim += 1;
                }
                IndexSpec::Slice { start, stop, step } => {
                    let size = size.ok_or_else(missing)?;
                    let start = start.map(known).transpose()?;
                    let stop = stop.map(known).transpose()?;
                    let (first, length) = python_slice(start, stop, *step, size)?;
                    view = views::narrow(&view, axis, first, length)?;
                    view.strides[axis] *= *step as usize;
                    axis += 1;
                    dim += 1;
                }
                IndexSpec::NewAxis => {
                    view = views::unsqueeze(&view, axis)?;
                    axis += 1;
                }
                IndexSpec::Mask { dims } => {
                    let mask = tensors.next().ok_or_else(missing)?;
                    advanced = Some((Advanced::Mask(mask.clone()), axis, dim));
                    axis += dims;
                    dim += dims;
                }
                IndexSpec::Indices { .. } => {
                    let indices = tensors.next().ok_or_else(missing)?;
                    advanced = Some((Advanced::Indices(indices.clone()), axis, dim));
                    axis += 1;
                    dim += 1;
                }
            }
        }
        match advanced {
            None => Ok(view),
            Some((Advanced::Indices(indices), axis, dim)) => {
                self.take_indices(&view, &indices, axis, dim)
            }
            Some((Advanced::Mask(mask), axis, dim)) => self.take_mask(&view, &mask, axis, dim),
        }
    }

    fn take_indices(
        &self,
        view: &Tensor,
        indices: &Tensor,
        axis: usize,
        dim: usize,
    ) -> Result<Tensor, KernelError> {
        let indices = self.materialize(indices)?;
        check_indices(&indices, "a tensor index")?;
        let rank = indices.shape.len();
        let shape: Vec<usize> = view.shape[..axis]
            .iter()
            .chain(&indices.shape)
            .chain(&view.shape[axis + 1..])
            .copied()
            .collect();
        let source_strides: Vec<usize> = view.strides[..axis]
            .iter()
            .copied()
            .chain(std::iter::repeat_n(0, rank))
            .chain(view.strides[axis + 1..].iter().copied())
            .collect();
        let index_strides: Vec<usize> = std::iter::repeat_n(0, axis)
            .chain(indices.strides.iter().copied())
            .chain(std::iter::repeat_n(0, view.shape.len() - axis - 1))
            .collect();
        self.take(&Take {
            source: view,
            indices: &indices,
            shape,
            source_strides,
            index_strides,
            axis,
            dim,
            wrap: true,
        })
    }

    fn take(&self, take: &Take) -> Result<Tensor, KernelError> {
        let size = take.source.shape[take.axis];
        let output = self.alloc(take.source.dtype, &take.shape)?;
        let numel = output.numel();
        if numel == 0 {
            if take.indices.numel() > 0 {
                self.check_on_host(take.indices, size, take.dim, take.wrap)?;
            }
            return Ok(output);
        }
        // The index each output reads, seen as a tensor of the output's shape: what the
        // host reads back to name a bad index.
        let seen = take.indices.view(
            take.shape.clone(),
            take.index_strides.clone(),
            take.indices.offset,
        );
        let slot = self.slot(Report::Index {
            indices: seen,
            size,
            dim: take.dim,
        })?;
        let wgsl = take_kernel(take);
        let buffers = [take.source, take.indices, &output]
            .iter()
            .filter_map(|tensor| tensor.buffer().cloned())
            .collect();
        let stride = take.source.strides[take.axis];
        self.launch_each(&wgsl, buffers, numel, &mut |param| {
            Ok(match param {
                Param::Count => numel as u32,
                Param::Size(d) => take.shape[d as usize] as u32,
                Param::Stride(0, d) => take.source_strides[d as usize] as u32,
                Param::Stride(_, d) => take.index_strides[d as usize] as u32,
                Param::Offset(0) => take.source.offset as u32,
                Param::Offset(_) => take.indices.offset as u32,
                Param::Value(0) => stride as u32,
                Param::Value(_) => size as u32,
                Param::Slot(_) => slot,
                _ => 0,
            })
        })?;
        Ok(output)
    }

    /// Checks indices that select nothing (the output is empty), as the CPU still does.
    fn check_on_host(
        &self,
        indices: &Tensor,
        size: usize,
        dim: usize,
        wrap: bool,
    ) -> Result<(), KernelError> {
        let host = self.download(indices)?;
        for element in host.elements() {
            let index = element.as_i64();
            let position = if wrap && index < 0 {
                i128::from(index) + size as i128
            } else {
                i128::from(index)
            };
            if position < 0 || position >= size as i128 {
                return Err(KernelError::IndexOutOfRange { index, size, dim });
            }
        }
        Ok(())
    }
}

enum Advanced {
    Mask(Tensor),
    Indices(Tensor),
}

fn take_kernel(take: &Take) -> super::super::codegen::Wgsl {
    take_spec(take.source.dtype, take.shape.len(), take.wrap)
}

fn take_spec(dtype: DType, rank: usize, wrap: bool) -> super::super::codegen::Wgsl {
    take(&TakeSpec { dtype, rank, wrap })
}

fn check_indices(indices: &Tensor, name: &str) -> Result<(), KernelError> {
    if indices.dtype != DType::I64 {
        return Err(KernelError::Type(format!(
            "{name} needs i64 indices, got {}",
            indices.dtype
        )));
    }
    Ok(())
}

fn known(dim: crate::graph::shape::Dim) -> Result<i64, KernelError> {
    dim.known()
        .ok_or_else(|| KernelError::Value("a size was not resolved before running".into()))
}

fn missing() -> KernelError {
    KernelError::Value("an index item is missing its value".into())
}

/// A Python position in `0..size` (negative counts from the end), as the CPU checks it.
fn wrap_index(index: i64, size: usize, dim: usize) -> Result<usize, KernelError> {
    let wrapped = if index < 0 {
        i128::from(index) + size as i128
    } else {
        i128::from(index)
    };
    usize::try_from(wrapped)
        .ok()
        .filter(|&position| position < size)
        .ok_or(KernelError::IndexOutOfRange { index, size, dim })
}
