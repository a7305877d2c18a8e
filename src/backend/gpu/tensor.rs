//! GPU tensors: a view (shape, strides, offset) of a pooled buffer, or a host scalar that
//! kernels receive in their parameters and that is never uploaded.
//!
//! Storage follows the CPU layout, so uploads and downloads are plain copies: `f32` and
//! `i64` elements as they are, `bool` as one 32-bit word per element (WGSL has no storage
//! bools). Views share buffers as the CPU's tensors share arrays (values are immutable):
//! permutes, broadcasts, slices and narrows change only the metadata.

use std::fmt;
use std::sync::Arc;

use super::Gpu;
use super::pool::Buffer;
use crate::dtype::{DType, Scalar};

/// A tensor on the GPU.
#[derive(Clone)]
pub struct Tensor {
    pub(crate) data: Data,
    pub(crate) dtype: DType,
    pub(crate) shape: Vec<usize>,
    /// In elements; 0 along broadcast dims.
    pub(crate) strides: Vec<usize>,
    /// In elements.
    pub(crate) offset: usize,
}

#[derive(Clone)]
pub(crate) enum Data {
    /// A 0-d host value.
    Scalar(Scalar),
    /// Elements in a buffer of the GPU `gpu`. Tensors share `storage` (views); queued
    /// commands hold the buffer itself, so the count of `storage` holders says whether a
    /// tensor is the only one seeing the buffer (and a kernel may overwrite it).
    Buffer { storage: Arc<Storage>, gpu: Gpu },
}

/// A buffer as tensors hold it.
pub(crate) struct Storage {
    buffer: Arc<Buffer>,
}

impl Tensor {
    /// The one stride with which the dims `axes` walk their elements in row-major order, if
    /// there is one; `single` when they hold one element (any stride then walks them).
    pub(crate) fn merged_stride(
        &self,
        axes: std::ops::Range<usize>,
        single: usize,
    ) -> Option<usize> {
        let mut stride = None;
        let mut expected = None;
        for axis in axes.rev() {
            let (size, step) = (self.shape[axis], self.strides[axis]);
            if size == 1 {
                continue;
            }
            match expected {
                None => stride = Some(step),
                Some(expected) if expected != step => return None,
                Some(_) => {}
            }
            expected = Some(step * size);
        }
        Some(stride.unwrap_or(single))
    }

    pub(crate) fn scalar(value: Scalar) -> Tensor {
        Tensor {
            data: Data::Scalar(value),
            dtype: value.dtype(),
            shape: Vec::new(),
            strides: Vec::new(),
            offset: 0,
        }
    }

    /// A fresh contiguous tensor over `buffer`.
    pub(crate) fn contiguous(
        buffer: Arc<Buffer>,
        gpu: Gpu,
        dtype: DType,
        shape: &[usize],
    ) -> Tensor {
        Tensor {
            data: Data::Buffer {
                storage: Arc::new(Storage { buffer }),
                gpu,
            },
            dtype,
            shape: shape.to_vec(),
            strides: standard_strides(shape),
            offset: 0,
        }
    }

    /// A 0-d host value (kernels take it in their parameters).
    pub fn host_value(value: Scalar) -> Tensor {
        Tensor::scalar(value)
    }

    /// The tensor on the host, waiting for the work computing it.
    pub fn to_host(&self) -> Result<crate::backend::host::Tensor, crate::backend::KernelError> {
        match &self.data {
            Data::Scalar(value) => Ok(crate::backend::host::Tensor::scalar(*value)),
            Data::Buffer { gpu, .. } => gpu.download(self),
        }
    }

    /// The element of a one-element tensor.
    pub fn element(&self) -> Result<Scalar, crate::backend::KernelError> {
        match &self.data {
            Data::Scalar(value) => Ok(*value),
            Data::Buffer { gpu, .. } => gpu.element(self),
        }
    }

    /// Whether the tensor is on `gpu` (host values are everywhere).
    pub fn is_on(&self, gpu: &Gpu) -> bool {
        match &self.data {
            Data::Scalar(_) => true,
            Data::Buffer { gpu: own, .. } => own.same(gpu),
        }
    }

    pub fn shape(&self) -> &[usize] {
        &self.shape
    }

    pub fn dtype(&self) -> DType {
        self.dtype
    }

    pub fn numel(&self) -> usize {
        self.shape.iter().product()
    }

    /// Whether elements lie in row-major order without gaps from the offset on.
    pub(crate) fn is_contiguous(&self) -> bool {
        let mut expected = 1;
        for (size, stride) in self.shape.iter().zip(&self.strides).rev() {
            if *size != 1 && *stride != expected {
                return false;
            }
            expected *= size;
        }
        true
    }

    /// The host value of a scalar tensor.
    pub(crate) fn host_scalar(&self) -> Option<Scalar> {
        match self.data {
            Data::Scalar(value) => Some(value),
            Data::Buffer { .. } => None,
        }
    }

    pub(crate) fn buffer(&self) -> Option<&Arc<Buffer>> {
        match &self.data {
            Data::Buffer { storage, .. } => Some(&storage.buffer),
            Data::Scalar(_) => None,
        }
    }

    /// Whether no other tensor sees this one's buffer.
    pub(crate) fn is_sole_view(&self) -> bool {
        match &self.data {
            Data::Buffer { storage, .. } => Arc::strong_count(storage) == 1,
            Data::Scalar(_) => false,
        }
    }

    /// The same data seen with other metadata.
    pub(crate) fn view(&self, shape: Vec<usize>, strides: Vec<usize>, offset: usize) -> Tensor {
        Tensor {
            data: self.data.clone(),
            dtype: self.dtype,
            shape,
            strides,
            offset,
        }
    }

    /// The same buffer holding elements of another dtype, contiguous over `shape` from the
    /// same offset (what an in-place kernel made of this tensor's buffer).
    pub(crate) fn reused(&self, dtype: DType, shape: &[usize]) -> Tensor {
        Tensor {
            data: self.data.clone(),
            dtype,
            shape: shape.to_vec(),
            strides: standard_strides(shape),
            offset: self.offset,
        }
    }
}

impl fmt::Debug for Tensor {
    fn fmt(&self, f: &mut fmt::Formatter<'_>) -> fmt::Result {
        write!(f, "gpu::Tensor({}{:?})", self.dtype, self.shape)
    }
}

/// Row-major strides of `shape`, in elements.
pub(crate) fn standard_strides(shape: &[usize]) -> Vec<usize> {
    let mut strides = vec![0; shape.len()];
    let mut stride = 1;
    for (slot, size) in strides.iter_mut().zip(shape).rev() {
        *slot = stride;
        stride *= size;
    }
    strides
}
