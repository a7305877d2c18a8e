//! A tensor operand of a fused kernel: its elements in row-major order, and where each element
//! of the iteration space reads from (broadcast dims read the same element again).

use std::borrow::Cow;

use super::super::error::{KernelError, Result, scratch_vec};
use super::super::tensor::{Element, Tensor};
use super::slot::{Segment, Side};

pub(crate) struct Operand<'a> {
    values: Values<'a>,
    /// Per dim of the iteration space: how far one step moves in `values` (0 to broadcast);
    /// empty for an operand of the iteration shape, which is never gathered.
    strides: Vec<usize>,
    /// The iteration shape.
    shape: &'a [usize],
    /// The operand has the iteration shape: a segment is a slice of `values`.
    full: bool,
}

pub(crate) enum Values<'a> {
    F32(Cow<'a, [f32]>),
    I64(Cow<'a, [i64]>),
    Bool(Cow<'a, [bool]>),
}

impl<'a> Operand<'a> {
    pub fn new(tensor: &'a Tensor, shape: &'a [usize]) -> Result<Operand<'a>> {
        let own = tensor.shape();
        let Some(skipped) = shape.len().checked_sub(own.len()) else {
            // The fusion pass only groups operands that broadcast to the iteration shape.
            return Err(KernelError::Internal(format!(
                "a fused operand of {} dims is larger than its kernel's {} dims",
                own.len(),
                shape.len()
            )));
        };
        let full = own == shape;
        let mut strides = if full {
            Vec::new()
        } else {
            vec![0; shape.len()]
        };
        let mut step = 1;
        for (dim, &size) in own.iter().enumerate().rev() {
            if size != 1
                && let Some(stride) = strides.get_mut(skipped + dim)
            {
                *stride = step;
            }
            step *= size;
        }
        Ok(Operand {
            values: values(tensor)?,
            strides,
            shape,
            full,
        })
    }

    pub fn values(&self) -> &Values<'a> {
        &self.values
    }

    pub fn is_full(&self) -> bool {
        self.full
    }

    /// The operand's elements for a segment: a slice when it has the iteration shape, one
    /// element when it has only one, else gathered into `buffer`.
    pub fn side<'s, T: Element>(
        &'s self,
        segment: Segment,
        data: &'s [T],
        buffer: &'s mut Vec<T>,
    ) -> Side<'s, T> {
        if self.full {
            return Side::Slice(&data[segment.start..segment.start + segment.len]);
        }
        if data.len() == 1 {
            return Side::Splat(data[0]);
        }
        self.gather(segment, data, buffer);
        Side::Slice(buffer)
    }

    /// Copies a segment's elements in runs along the last dim.
    fn gather<T: Element>(&self, segment: Segment, data: &[T], out: &mut Vec<T>) {
        out.clear();
        let Some(&inner) = self.shape.last() else {
            out.extend_from_slice(&data[..segment.len.min(data.len())]);
            return;
        };
        let inner_stride = self.strides[self.shape.len() - 1];
        let mut position = segment.start;
        let end = segment.start + segment.len;
        while position < end {
            let column = position % inner;
            let run = (inner - column).min(end - position);
            let offset = self.offset(position);
            if inner_stride == 0 {
                out.extend(std::iter::repeat_n(data[offset], run));
            } else {
                out.extend_from_slice(&data[offset..offset + run]);
            }
            position += run;
        }
    }

    /// Where the element at a flat position of the iteration space lives in `values`.
    fn offset(&self, mut position: usize) -> usize {
        let mut offset = 0;
        for (size, stride) in self.shape.iter().zip(&self.strides).rev() {
            offset += (position % size) * stride;
            position /= size;
        }
        offset
    }
}

/// The elements in row-major order, borrowed when the tensor is laid out that way; a copy
/// (of a transposed operand, say) is scratch beside the kernel's reserved results, so its
/// memory is asked for first.
fn values(tensor: &Tensor) -> Result<Values<'_>> {
    fn row_major<T: Element>(array: &ndarray::ArcArray<T, ndarray::IxDyn>) -> Result<Cow<'_, [T]>> {
        if let Some(slice) = array.as_slice() {
            return Ok(Cow::Borrowed(slice));
        }
        let mut copy = scratch_vec(array.len())?;
        copy.extend(array.iter().copied());
        Ok(Cow::Owned(copy))
    }
    Ok(match tensor {
        Tensor::F32(array) => Values::F32(row_major(array)?),
        Tensor::I64(array) => Values::I64(row_major(array)?),
        Tensor::Bool(array) => Values::Bool(row_major(array)?),
    })
}
