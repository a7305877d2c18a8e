//! Moving data between host and GPU, and reading the status buffer back.
//!
//! Uploads are queue writes into a fresh pooled buffer (no queued command can be using
//! it). Every read flushes the queue, copies what it needs into one staging buffer, maps it
//! once and waits: downloads, single elements and the status words.

use std::sync::Arc;

use super::batch::{Command, Found, Report, State};
use super::pool::Buffer;
use super::tensor::{Data, Tensor};
use super::{Gpu, stored_size};
use crate::backend::error::{KernelError, format_shape, negative_count};
use crate::backend::host;
use crate::dtype::{DType, Scalar};

impl Gpu {
    /// A host tensor on the GPU.
    pub fn upload(&self, tensor: &host::Tensor) -> Result<Tensor, KernelError> {
        let gpu = self.alloc(tensor.dtype(), tensor.shape())?;
        let bytes = host_bytes(tensor);
        self.count(|stats| {
            stats.uploads += 1;
            stats.upload_bytes += bytes.len() as u64;
        });
        if let Some(buffer) = gpu.buffer()
            && !bytes.is_empty()
        {
            self.0.queue.write_buffer(buffer.raw(), 0, &bytes);
        }
        Ok(gpu)
    }

    /// A GPU tensor on the host (waiting for the work computing it).
    pub fn download(&self, tensor: &Tensor) -> Result<host::Tensor, KernelError> {
        if let Some(value) = tensor.host_scalar() {
            return Ok(host::Tensor::scalar(value));
        }
        let numel = tensor.numel();
        if numel == 0 {
            return from_bytes(tensor.dtype, &tensor.shape, &[]);
        }
        let tensor = if tensor.is_contiguous() {
            tensor.clone()
        } else {
            self.contiguous(tensor)?
        };
        let Some(buffer) = tensor.buffer() else {
            return Err(KernelError::Internal("a GPU tensor has no buffer".into()));
        };
        let size = stored_size(tensor.dtype);
        let bytes = self.read(vec![(
            buffer.clone(),
            tensor.offset as u64 * size,
            numel as u64 * size,
        )])?;
        from_bytes(tensor.dtype, &tensor.shape, &bytes[0])
    }

    /// The element of a one-element tensor.
    pub fn element(&self, tensor: &Tensor) -> Result<Scalar, KernelError> {
        if tensor.numel() != 1 {
            return Err(KernelError::Shape(format!(
                "expected a one-element tensor, got {}{}",
                tensor.dtype,
                format_shape(&tensor.shape)
            )));
        }
        self.element_at(tensor, 0)
    }

    /// Element `position` (in row-major order) of a tensor.
    pub(crate) fn element_at(
        &self,
        tensor: &Tensor,
        position: usize,
    ) -> Result<Scalar, KernelError> {
        if let Data::Scalar(value) = &tensor.data {
            return Ok(*value);
        }
        let buffer = tensor
            .buffer()
            .cloned()
            .ok_or_else(|| KernelError::Internal("a GPU tensor has no buffer".into()))?;
        let mut rest = position;
        let mut offset = tensor.offset;
        for (size, stride) in tensor.shape.iter().zip(&tensor.strides).rev() {
            offset += (rest % size.max(&1)) * stride;
            rest /= size.max(&1);
        }
        let size = stored_size(tensor.dtype);
        let bytes = self.read(vec![(buffer, offset as u64 * size, size)])?;
        let element = from_bytes(tensor.dtype, &[], &bytes[0])?;
        element
            .to_scalar()
            .ok_or_else(|| KernelError::Internal("an element read back empty".into()))
    }

    /// Runs everything queued and returns the bytes of each `(buffer, offset, length)`. The
    /// status words of queued checks come back in the same wait: their earliest failure is
    /// kept for the next sync.
    pub(crate) fn read(
        &self,
        segments: Vec<(Arc<Buffer>, u64, u64)>,
    ) -> Result<Vec<Vec<u8>>, KernelError> {
        let total: u64 = segments
            .iter()
            .map(|(_, _, length)| length.next_multiple_of(4))
            .sum();
        let mut state = self.state()?;
        let slots = std::mem::take(&mut state.slots);
        let status_length = if slots.is_empty() {
            0
        } else {
            ((1 + slots.len()) * 4) as u64
        };
        let staging = self.0.device.create_buffer(&wgpu::BufferDescriptor {
            label: Some("readback"),
            size: (total + status_length).max(4),
            usage: wgpu::BufferUsages::MAP_READ | wgpu::BufferUsages::COPY_DST,
            mapped_at_creation: false,
        });
        let mut ranges = Vec::with_capacity(segments.len());
        let mut at = 0;
        for (buffer, offset, length) in segments {
            let length4 = length.next_multiple_of(4);
            state.commands.push(Command::Copy {
                from: buffer.raw().clone(),
                keep: Some(buffer),
                from_offset: offset,
                to: staging.clone(),
                to_offset: at,
                size: length4,
            });
            ranges.push((at as usize, length as usize));
            at += length4;
        }
        if status_length > 0 {
            let status = state.status.clone();
            state.commands.push(Command::Copy {
                from: status,
                keep: None,
                from_offset: 0,
                to: staging.clone(),
                to_offset: at,
                size: status_length,
            });
        }
        self.submit(&mut state)?;
        drop(state);
        let bytes = self.map(&staging)?;
        if status_length > 0 {
            let words = words_of(&bytes[at as usize..]);
            let found = earliest(slots, &words);
            let mut state = self.state()?;
            reset_status(self, &state, words.len() - 1);
            if state.found.is_none() {
                state.found = found;
            }
        }
        Ok(ranges
            .into_iter()
            .map(|(start, length)| bytes[start..start + length].to_vec())
            .collect())
    }

    /// Waits for the queue and returns the contents of a staging buffer.
    fn map(&self, staging: &wgpu::Buffer) -> Result<Vec<u8>, KernelError> {
        self.count(|stats| stats.readbacks += 1);
        let (sender, receiver) = std::sync::mpsc::channel();
        staging.map_async(wgpu::MapMode::Read, .., move |result| {
            let _ = sender.send(result);
        });
        self.0
            .device
            .poll(wgpu::PollType::wait_indefinitely())
            .map_err(|error| {
                KernelError::Internal(format!("waiting for the GPU failed: {error}"))
            })?;
        self.0.take_error()?;
        match receiver.recv() {
            Ok(Ok(())) => {}
            _ => {
                return Err(KernelError::Internal(
                    "a GPU buffer could not be read".into(),
                ));
            }
        }
        let bytes = staging
            .get_mapped_range(..)
            .map_err(|error| KernelError::Internal(format!("reading a GPU buffer: {error}")))?
            .to_vec();
        staging.unmap();
        Ok(bytes)
    }
}

/// Waits for queued work and returns the earliest failure in it (or one kept from an
/// earlier read), resetting the status buffer.
pub(super) fn harvest(gpu: &Gpu) -> Result<Option<Found>, KernelError> {
    check_status(gpu)?;
    Ok(gpu.state()?.found.take())
}

/// Checks queued work (when every status slot is taken), keeping its earliest failure for
/// the next sync.
pub(super) fn recycle_slots(gpu: &Gpu) -> Result<(), KernelError> {
    check_status(gpu)
}

/// Runs queued work; if it used status slots, reads them back (a read of nothing still
/// brings the status words, and keeps their earliest failure) and resets them.
fn check_status(gpu: &Gpu) -> Result<(), KernelError> {
    let pending = {
        let mut state = gpu.state()?;
        if state.slots.is_empty() {
            gpu.submit(&mut state)?;
        }
        !state.slots.is_empty()
    };
    if pending {
        gpu.read(Vec::new())?;
    }
    Ok(())
}

/// The status words as numbers.
fn words_of(bytes: &[u8]) -> Vec<u32> {
    bytes
        .chunks_exact(4)
        .map(|word| u32::from_le_bytes([word[0], word[1], word[2], word[3]]))
        .collect()
}

/// The failure of the smallest failing slot, at its first failing position.
fn earliest(slots: Vec<super::batch::Slot>, words: &[u32]) -> Option<Found> {
    let slot = *words.first()? as usize;
    let position = words.get(1 + slot).copied().unwrap_or(0);
    let failed = slots.into_iter().nth(slot)?;
    Some(Found {
        site: failed.site,
        report: failed.report,
        position,
    })
}

fn reset_status(gpu: &Gpu, state: &State, used: usize) {
    gpu.0
        .queue
        .write_buffer(&state.status, 0, &vec![0xff; (1 + used) * 4]);
}

/// The error a failed slot stands for (`None` for a device assert), as the CPU would
/// have raised it, reading the failing element where the message shows it.
pub(super) fn resolve_report(
    gpu: &Gpu,
    report: &Report,
    position: u32,
) -> Result<Option<KernelError>, KernelError> {
    Ok(match report {
        Report::Assert => None,
        Report::Fixed(error) => Some(error.clone()),
        Report::InMember { member, report } => {
            resolve_report(gpu, report, position)?.map(|error| KernelError::InMember {
                member: *member,
                error: Box::new(error),
            })
        }
        Report::Index { indices, size, dim } => {
            let index = gpu.element_at(indices, position as usize)?.as_i64();
            Some(KernelError::IndexOutOfRange {
                index,
                size: *size,
                dim: *dim,
            })
        }
        Report::NegativeCount { counts } => {
            let count = gpu.element_at(counts, position as usize)?.as_i64();
            Some(negative_count(count))
        }
    })
}

/// The elements of a host tensor as the GPU stores them (row-major).
fn host_bytes(tensor: &host::Tensor) -> Vec<u8> {
    if let Some(array) = tensor.as_f32() {
        let standard = array.as_standard_layout();
        return standard.iter().flat_map(|x| x.to_le_bytes()).collect();
    }
    if let Some(array) = tensor.as_i64() {
        let standard = array.as_standard_layout();
        return standard.iter().flat_map(|x| x.to_le_bytes()).collect();
    }
    match tensor.as_bool() {
        Some(array) => array
            .iter()
            .flat_map(|x| u32::from(*x).to_le_bytes())
            .collect(),
        None => Vec::new(),
    }
}

/// A host tensor of `shape` from stored elements.
fn from_bytes(dtype: DType, shape: &[usize], bytes: &[u8]) -> Result<host::Tensor, KernelError> {
    match dtype {
        DType::F32 => {
            let values = bytes
                .chunks_exact(4)
                .map(|b| f32::from_le_bytes([b[0], b[1], b[2], b[3]]))
                .collect();
            host::Tensor::from_vec(shape, values)
        }
        DType::I64 => {
            let values = bytes
                .chunks_exact(8)
                .map(|b| i64::from_le_bytes([b[0], b[1], b[2], b[3], b[4], b[5], b[6], b[7]]))
                .collect();
            host::Tensor::from_vec(shape, values)
        }
        DType::Bool => {
            let values = bytes
                .chunks_exact(4)
                .map(|b| u32::from_le_bytes([b[0], b[1], b[2], b[3]]) != 0)
                .collect();
            host::Tensor::from_vec(shape, values)
        }
    }
}
