//! Data-dependent sizes: `nonzero`, `masked_select`, mask indexing and `repeat_interleave`
//! compute on the GPU and read back one number, the size of their result.

use super::super::Gpu;
use super::super::batch::Report;
use super::super::codegen::Param;
use super::super::codegen::compact::{self, BLOCK};
use super::super::tensor::Tensor;
use super::super::views;
use crate::backend::error::{
    KernelError, check_dim, format_shape, guard_count, negative_count, resized,
};
use crate::dtype::DType;
use crate::graph::fused::{Domain, FusedKernel, FusedOutput, Instr, InstrKind, Member, OutputKind};
use crate::graph::op::BinaryOp;
use crate::graph::shape::{Dim, Meta};

impl Gpu {
    /// The row-major positions of the `true` elements of a bool tensor, as a 1-D `i64`
    /// tensor; their count is read back.
    fn set_positions(&self, flags: &Tensor) -> Result<Tensor, KernelError> {
        let flags = self.contiguous(flags)?;
        let numel = flags.numel();
        if numel == 0 {
            return self.alloc(DType::I64, &[0]);
        }
        let blocks = numel.div_ceil(BLOCK as usize);
        let counts = self.alloc(DType::I64, &[blocks])?;
        let offset = flags.offset as u32;
        let flag_buffer = flags.buffer().cloned().ok_or_else(lost)?;
        let mut words = |param: Param| {
            Ok(match param {
                Param::Count => numel as u32,
                Param::Offset(_) => offset,
                _ => 0,
            })
        };
        let count_buffer = counts.buffer().cloned().ok_or_else(lost)?;
        self.launch(
            &compact::count(),
            vec![flag_buffer.clone(), count_buffer],
            blocks as u64,
            &mut words,
        )?;
        let totals = self.cumsum(&counts, 0)?;
        let positions = self.alloc(DType::I64, &[numel])?;
        let buffers = vec![
            flag_buffer,
            totals.buffer().cloned().ok_or_else(lost)?,
            positions.buffer().cloned().ok_or_else(lost)?,
        ];
        self.launch(&compact::scatter(), buffers, blocks as u64, &mut words)?;
        let total = self.element_at(&totals, blocks - 1)?.as_i64();
        let total = usize::try_from(total)
            .ok()
            .filter(|total| *total <= numel)
            .ok_or_else(|| KernelError::Internal("a compaction counted past its input".into()))?;
        Ok(positions.view(vec![total], vec![1], 0))
    }

    /// The multi-indices of the non-zero elements, one row each, in row-major order.
    pub(crate) fn nonzero(&self, input: &Tensor) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let flags = self.cast(&input, DType::Bool)?;
        let positions = self.set_positions(&flags)?;
        let count = positions.shape[0];
        let ndim = input.shape.len();
        let output = self.alloc(DType::I64, &[count, ndim])?;
        let mut stride = 1;
        for dim in (0..ndim).rev() {
            let size = input.shape[dim];
            let column = views::squeeze(&views::narrow(&output, 1, dim, 1)?, &[1])?;
            let kernel = unravel(count, stride as i64, size as i64);
            self.elementwise_into(&kernel, std::slice::from_ref(&positions), &[column], false)?;
            stride *= size;
        }
        Ok(output)
    }

    /// The elements of `input` where `mask` (broadcast together) is true, in row-major order.
    pub(crate) fn masked_select(
        &self,
        input: &Tensor,
        mask: &Tensor,
    ) -> Result<Tensor, KernelError> {
        if mask.dtype != DType::Bool {
            return Err(KernelError::Type(format!(
                "masked_select needs a bool mask, got {}",
                mask.dtype
            )));
        }
        let (input, mask) = (self.materialize(input)?, self.materialize(mask)?);
        let shape = crate::backend::cpu::broadcast_shapes(&input.shape, &mask.shape)?;
        let flags = views::expand(&mask, &shape)?;
        let positions = self.set_positions(&flags)?;
        let values = self.contiguous(&views::expand(&input, &shape)?)?;
        let flat = self.reshape(&values, &[values.numel()])?;
        self.index_select(&flat, 0, &positions)
    }

    /// `view[..., mask, ...]` with the mask covering the dims from `axis` on.
    pub(crate) fn take_mask(
        &self,
        view: &Tensor,
        mask: &Tensor,
        axis: usize,
        dim: usize,
    ) -> Result<Tensor, KernelError> {
        if mask.dtype != DType::Bool {
            return Err(KernelError::Type(format!(
                "a mask index must be bool, got {}",
                mask.dtype
            )));
        }
        let mask = self.materialize(mask)?;
        let covered = mask.shape.len();
        let masked = view.shape.get(axis..axis + covered).unwrap_or_default();
        if masked != mask.shape.as_slice() {
            return Err(KernelError::Shape(format!(
                "a mask of shape {} does not match shape {} at dim {dim}",
                format_shape(&mask.shape),
                format_shape(masked)
            )));
        }
        let merged: Vec<usize> = view.shape[..axis]
            .iter()
            .copied()
            .chain([masked.iter().product()])
            .chain(view.shape[axis + covered..].iter().copied())
            .collect();
        let flat = self.reshape(view, &merged)?;
        let positions = self.set_positions(&mask)?;
        self.index_select(&flat, axis, &positions)
    }

    /// Each slice of `input` along `dim` (everything, flattened, when `None`) repeated as
    /// often as `counts` says.
    pub(crate) fn repeat_interleave(
        &self,
        input: &Tensor,
        counts: &Tensor,
        dim: Option<usize>,
    ) -> Result<Tensor, KernelError> {
        let input = self.materialize(input)?;
        let (source, dim) = match dim {
            None => (self.reshape(&input, &[input.numel()])?, 0),
            Some(dim) => {
                check_dim(dim, input.shape.len())?;
                (input, dim)
            }
        };
        let size = source.shape[dim];
        if source.numel() == 0 {
            // Slices without elements: only the count of repeated slices is needed, which
            // may pass the element limit (no position is listed, as none would be copied).
            let total = self.repeated_total(counts, size, dim)?;
            return self.alloc(source.dtype, &resized(&source.shape, dim, total)?);
        }
        let positions = self.repeated_positions(counts, size, dim)?;
        self.index_select(&source, dim, &positions)
    }

    /// How many slices repeating `size` slices as `counts` says makes, without listing
    /// their positions: a single count is read back and multiplied, never spread into one
    /// per slice.
    fn repeated_total(
        &self,
        counts: &Tensor,
        size: usize,
        dim: usize,
    ) -> Result<u128, KernelError> {
        check_counts(counts)?;
        if counts.numel() != 1 {
            return Ok(self.running_totals(counts, size, dim)?.1);
        }
        let count = self.element_at(counts, 0)?.as_i64();
        if count < 0 {
            return Err(negative_count(count));
        }
        Ok(count as u128 * size as u128)
    }

    /// `0, 0, 1, …`: each index repeated as often as `counts` says.
    pub(crate) fn repeat_indices(&self, counts: &Tensor) -> Result<Tensor, KernelError> {
        let size = counts.numel();
        self.repeated_positions(counts, size, 0)
    }

    /// The position each output of a `repeat_interleave` over `size` slices repeats.
    fn repeated_positions(
        &self,
        counts: &Tensor,
        size: usize,
        dim: usize,
    ) -> Result<Tensor, KernelError> {
        check_counts(counts)?;
        let (totals, total) = self.running_totals(counts, size, dim)?;
        let total = guard_count(total)?;
        let positions = self.alloc(DType::I64, &[total])?;
        if total > 0 {
            let buffers = vec![
                totals.buffer().cloned().ok_or_else(lost)?,
                positions.buffer().cloned().ok_or_else(lost)?,
            ];
            self.launch_each(&compact::repeat_positions(), buffers, total, &mut |param| {
                Ok(match param {
                    Param::Count => total as u32,
                    Param::Value(_) => size as u32,
                    _ => 0,
                })
            })?;
        }
        Ok(positions)
    }

    /// The running totals of the counts of `size` slices (one count for all, or one each),
    /// checked non-negative on the device, and their sum (for no slices, no totals and 0).
    fn running_totals(
        &self,
        counts: &Tensor,
        size: usize,
        dim: usize,
    ) -> Result<(Tensor, u128), KernelError> {
        let counts = self.materialize(counts)?;
        let flat = self.reshape(&counts, &[counts.numel()])?;
        let per_slice = match flat.shape[0] {
            1 => views::expand(&flat, &[size])?,
            length if length == size => flat,
            length => {
                return Err(KernelError::Shape(format!(
                    "repeat_interleave has {length} counts for dim {dim} of size {size}"
                )));
            }
        };
        if size == 0 {
            return Ok((per_slice, 0));
        }
        let slot = self.slot(Report::NegativeCount {
            counts: per_slice.clone(),
        })?;
        let buffer = per_slice.buffer().cloned().ok_or_else(lost)?;
        let (offset, stride) = (per_slice.offset as u32, per_slice.strides[0] as u32);
        self.launch_each(
            &compact::negative_counts(),
            vec![buffer],
            size,
            &mut |param| {
                Ok(match param {
                    Param::Count => size as u32,
                    Param::Offset(_) => offset,
                    Param::Stride(..) => stride,
                    Param::Slot(_) => slot,
                    _ => 0,
                })
            },
        )?;
        self.fail_now()?;
        let totals = self.cumsum(&per_slice, 0)?;
        let total = self.element_at(&totals, size - 1)?.as_i64();
        let total = u128::try_from(total).map_err(|_| KernelError::TooLarge {
            numel: total as u128,
        })?;
        Ok((totals, total))
    }
}

/// Counts a `repeat_interleave` can take: `i64`, 0-d or 1-D.
fn check_counts(counts: &Tensor) -> Result<(), KernelError> {
    if counts.dtype != DType::I64 {
        return Err(KernelError::Type(format!(
            "repeat_interleave needs i64 indices, got {}",
            counts.dtype
        )));
    }
    if counts.shape.len() > 1 {
        return Err(KernelError::Shape(format!(
            "repeat_interleave needs 0-d or 1-D counts, got shape {}",
            format_shape(&counts.shape)
        )));
    }
    Ok(())
}

fn lost() -> KernelError {
    KernelError::Internal("a GPU tensor lost its buffer".into())
}

/// The kernel computing `(p // stride) % size` of `i64` positions: one coordinate each.
fn unravel(count: usize, stride: i64, size: i64) -> FusedKernel {
    let shape = vec![Dim::from(count)];
    let meta = Meta::new(DType::I64, shape.clone());
    let instr = |kind| Instr {
        kind,
        dtype: DType::I64,
        domain: Domain::Element,
        member: 0,
    };
    FusedKernel {
        shape,
        rows: false,
        inputs: vec![meta.clone()],
        body: vec![
            instr(InstrKind::Input(0)),
            instr(InstrKind::Int(Dim::Known(stride))),
            instr(InstrKind::Binary(BinaryOp::FloorDiv, 0, 1)),
            instr(InstrKind::Int(Dim::Known(size.max(1)))),
            instr(InstrKind::Binary(BinaryOp::Rem, 2, 3)),
        ],
        outputs: vec![FusedOutput {
            kind: OutputKind::Values(4),
            meta,
            member: 0,
        }],
        members: vec![Member {
            name: "nonzero",
            span: crate::source::Span::default(),
            trace: Vec::new(),
        }],
    }
}
