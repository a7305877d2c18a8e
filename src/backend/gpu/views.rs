//! Shape operations as views: new metadata over the same buffer. Only a reshape of a tensor
//! whose elements are not in row-major order copies (into a contiguous tensor first).

use super::Gpu;
use super::tensor::{Tensor, standard_strides};
use crate::backend::error::{KernelError, check_dim, format_shape, python_slice_bounds};

impl Gpu {
    /// `tensor` with its elements in row-major order in a buffer of its own (a copy unless
    /// it already is).
    pub(crate) fn contiguous(&self, tensor: &Tensor) -> Result<Tensor, KernelError> {
        if tensor.host_scalar().is_some() {
            return self.materialize(tensor);
        }
        if tensor.is_contiguous() {
            return Ok(tensor.clone());
        }
        let output = self.alloc(tensor.dtype, &tensor.shape)?;
        self.copy_into(tensor, &output)?;
        Ok(output)
    }

    pub(crate) fn reshape(&self, tensor: &Tensor, shape: &[usize]) -> Result<Tensor, KernelError> {
        let numel: usize = shape.iter().product();
        if numel != tensor.numel() {
            return Err(KernelError::Shape(format!(
                "cannot reshape a tensor of shape {} into {}",
                format_shape(&tensor.shape),
                format_shape(shape)
            )));
        }
        let source = self.contiguous(tensor)?;
        Ok(source.view(shape.to_vec(), standard_strides(shape), source.offset))
    }
}

pub(crate) fn permute(tensor: &Tensor, dims: &[usize]) -> Result<Tensor, KernelError> {
    let ndim = tensor.shape.len();
    let mut seen = vec![false; ndim];
    for &dim in dims {
        check_dim(dim, ndim)?;
        if std::mem::replace(&mut seen[dim], true) {
            return Err(KernelError::Shape(format!(
                "dim {dim} is repeated in permute"
            )));
        }
    }
    if dims.len() != ndim {
        return Err(KernelError::Shape(format!(
            "permute needs {ndim} dims, got {}",
            dims.len()
        )));
    }
    let shape = dims.iter().map(|&d| tensor.shape[d]).collect();
    let strides = dims.iter().map(|&d| tensor.strides[d]).collect();
    Ok(tensor.view(shape, strides, tensor.offset))
}

/// Removes the listed dims, each of size 1.
pub(crate) fn squeeze(tensor: &Tensor, dims: &[usize]) -> Result<Tensor, KernelError> {
    for &dim in dims {
        check_dim(dim, tensor.shape.len())?;
        if tensor.shape[dim] != 1 {
            return Err(KernelError::Shape(format!(
                "cannot squeeze dim {dim} of size {}",
                tensor.shape[dim]
            )));
        }
    }
    let keep = |d: &usize| !dims.contains(d);
    let shape = (0..tensor.shape.len())
        .filter(keep)
        .map(|d| tensor.shape[d])
        .collect();
    let strides = (0..tensor.shape.len())
        .filter(keep)
        .map(|d| tensor.strides[d])
        .collect();
    Ok(tensor.view(shape, strides, tensor.offset))
}

pub(crate) fn unsqueeze(tensor: &Tensor, dim: usize) -> Result<Tensor, KernelError> {
    check_dim(dim, tensor.shape.len() + 1)?;
    let mut shape = tensor.shape.clone();
    let mut strides = tensor.strides.clone();
    shape.insert(dim, 1);
    strides.insert(dim, 0);
    Ok(tensor.view(shape, strides, tensor.offset))
}

/// Broadcasts to `shape` (new leading dims allowed): stride 0 wherever a size grows.
pub(crate) fn expand(tensor: &Tensor, shape: &[usize]) -> Result<Tensor, KernelError> {
    let ndim = tensor.shape.len();
    let refused = || {
        KernelError::Shape(format!(
            "cannot expand a tensor of shape {} to {}",
            format_shape(&tensor.shape),
            format_shape(shape)
        ))
    };
    let lead = shape.len().checked_sub(ndim).ok_or_else(refused)?;
    let mut strides = vec![0; shape.len()];
    for d in 0..ndim {
        let (size, target) = (tensor.shape[d], shape[lead + d]);
        strides[lead + d] = match size {
            _ if size == target => tensor.strides[d],
            1 => 0,
            _ => return Err(refused()),
        };
    }
    Ok(tensor.view(shape.to_vec(), strides, tensor.offset))
}

pub(crate) fn narrow(
    tensor: &Tensor,
    dim: usize,
    start: usize,
    length: usize,
) -> Result<Tensor, KernelError> {
    check_dim(dim, tensor.shape.len())?;
    let size = tensor.shape[dim];
    if start.checked_add(length).is_none_or(|end| end > size) {
        return Err(KernelError::Shape(format!(
            "narrow({dim}, {start}, {length}) is out of range for dim {dim} of size {size}"
        )));
    }
    let mut shape = tensor.shape.clone();
    shape[dim] = length;
    let offset = if length == 0 {
        tensor.offset
    } else {
        tensor.offset + start * tensor.strides[dim]
    };
    Ok(tensor.view(shape, tensor.strides.clone(), offset))
}

/// Consecutive pieces of `sizes` along `dim`.
pub(crate) fn split(
    tensor: &Tensor,
    sizes: &[usize],
    dim: usize,
) -> Result<Vec<Tensor>, KernelError> {
    check_dim(dim, tensor.shape.len())?;
    let total: usize = sizes.iter().sum();
    if total != tensor.shape[dim] {
        return Err(KernelError::Shape(format!(
            "split sizes add up to {total}, but dim {dim} has size {}",
            tensor.shape[dim]
        )));
    }
    let mut start = 0;
    sizes
        .iter()
        .map(|&size| {
            let piece = narrow(tensor, dim, start, size);
            start += size;
            piece
        })
        .collect()
}

/// Python's slice `start:stop:step` of `size` positions: its first position and length.
pub(crate) fn python_slice(
    start: Option<i64>,
    stop: Option<i64>,
    step: i64,
    size: usize,
) -> Result<(usize, usize), KernelError> {
    let (first, end) = python_slice_bounds(start, stop, step, size)?;
    let length = ((end - first) as u128).div_ceil(step as u128) as usize;
    Ok((first, length))
}
