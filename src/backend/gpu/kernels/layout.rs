//! How kernels walk their tensors: every tensor broadcast to one iteration shape, and the
//! dims that all tensors walk contiguously merged, so most kernels see rank 0 or 1.

use super::super::codegen::elementwise::Layout;
use super::super::tensor::Tensor;
use crate::backend::error::{KernelError, format_shape};

/// The iteration of an elementwise kernel over its tensors.
#[derive(Debug)]
pub(crate) struct Walk {
    /// The merged iteration shape.
    pub shape: Vec<usize>,
    /// Per tensor (host scalars included, with no strides): its layout, strides along the
    /// merged dims, and offset.
    pub tensors: Vec<(Layout, Vec<usize>, usize)>,
}

impl Walk {
    /// The walk of `tensors` (each broadcastable to `shape`) over `shape`.
    pub fn new(shape: &[usize], tensors: &[&Tensor]) -> Result<Walk, KernelError> {
        let mut strides = Vec::with_capacity(tensors.len());
        for tensor in tensors {
            strides.push(match tensor.host_scalar() {
                Some(_) => None,
                None => Some(broadcast_strides(tensor, shape)?),
            });
        }
        // Merge dims: size-1 dims vanish; a dim joins the one before it when every tensor
        // steps over the pair as one run.
        let mut merged: Vec<(usize, Vec<usize>)> = Vec::new();
        for (dim, &size) in shape.iter().enumerate() {
            if size == 1 {
                continue;
            }
            let column: Vec<usize> = strides.iter().flatten().map(|s| s[dim]).collect();
            if let Some((previous, previous_strides)) = merged.last_mut()
                && previous_strides
                    .iter()
                    .zip(&column)
                    .all(|(outer, inner)| *outer == inner * size)
            {
                *previous *= size;
                previous_strides.clone_from(&column);
                continue;
            }
            merged.push((size, column));
        }
        let rank = merged.len();
        let mut column = 0;
        let tensors = tensors
            .iter()
            .zip(&strides)
            .map(|(tensor, strides)| {
                if strides.is_none() {
                    return (Layout::Scalar, Vec::new(), 0);
                }
                let walked: Vec<usize> = merged.iter().map(|(_, s)| s[column]).collect();
                column += 1;
                let contiguous = rank == 0 || (rank == 1 && walked[0] == 1);
                let layout = if contiguous {
                    Layout::Contiguous
                } else {
                    Layout::Strided
                };
                (layout, walked, tensor.offset)
            })
            .collect();
        Ok(Walk {
            shape: merged.iter().map(|(size, _)| *size).collect(),
            tensors,
        })
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    pub fn layouts(&self) -> Vec<Layout> {
        self.tensors.iter().map(|(layout, ..)| *layout).collect()
    }
}

/// The strides of `tensor` seen as broadcast to `shape` (0 along broadcast dims).
pub(crate) fn broadcast_strides(
    tensor: &Tensor,
    shape: &[usize],
) -> Result<Vec<usize>, KernelError> {
    let refused = || {
        KernelError::Shape(format!(
            "a tensor of shape {} does not broadcast to {}",
            format_shape(&tensor.shape),
            format_shape(shape)
        ))
    };
    let lead = shape
        .len()
        .checked_sub(tensor.shape.len())
        .ok_or_else(refused)?;
    let mut strides = vec![0; shape.len()];
    for (d, (&size, &stride)) in tensor.shape.iter().zip(&tensor.strides).enumerate() {
        strides[lead + d] = match size {
            _ if size == shape[lead + d] => stride,
            1 => 0,
            _ => return Err(refused()),
        };
    }
    Ok(strides)
}
